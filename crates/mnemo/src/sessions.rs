//! Sessions: the transcript turns ingested under one session id, listed, shown, and
//! compacted into what context shows of them (a summary of older turns, recent turns
//! verbatim).

use std::collections::BTreeMap;

use mnemo_core::context::TokenCounter;
use mnemo_core::duration::Ttl;
use mnemo_core::lifecycle::{CandidateFields, Outcome};
use mnemo_core::ports::ChatModel;
use mnemo_core::ports::ListFilter;
use mnemo_core::session::{
    CompactionConfig, SUMMARY_PROMPT_VERSION, SessionInfo, SessionSummary, SessionView, compact,
    summarise_session, summary_schema, summary_system_prompt, summary_user_prompt,
    validate_summary,
};
use mnemo_core::{Kind, Memory, MemoryId, Source, SourceType, Status, Timestamp, UserRef};

use crate::{Mnemo, Result, is_incognito};

/// The transcript turns among `records`, by session, oldest first.
pub(crate) fn group_turns(records: Vec<Memory>) -> BTreeMap<String, Vec<Memory>> {
    let mut sessions: BTreeMap<String, Vec<Memory>> = BTreeMap::new();
    for memory in records {
        if let Some(session) = memory.session_id.clone().filter(|_| memory.transcript) {
            sessions.entry(session).or_default().push(memory);
        }
    }
    for turns in sessions.values_mut() {
        turns.sort_by(|a, b| {
            (a.valid_from, a.created_at, &a.id).cmp(&(b.valid_from, b.created_at, &b.id))
        });
    }
    sessions
}

impl Mnemo {
    /// The user's active, unexpired episodic records (transcript turns and session
    /// summaries), of one session or of all.
    fn held(&self, who: &UserRef, session: Option<&str>) -> Result<Vec<Memory>> {
        let filter = ListFilter {
            kind: Some(Kind::Episodic),
            status: Some(Status::Active),
            session: session.map(str::to_owned),
            ..Default::default()
        };
        Ok(self.store.list(who, &filter, self.now())?)
    }

    /// Every held transcript turn of the user, of one session or of all, by session,
    /// oldest first.
    fn turns_by_session(
        &self,
        who: &UserRef,
        session: Option<&str>,
    ) -> Result<BTreeMap<String, Vec<Memory>>> {
        Ok(group_turns(self.held(who, session)?))
    }

    /// The user's sessions that still hold turns, most recently active first.
    pub fn sessions(&self, who: &UserRef) -> Result<Vec<SessionInfo>> {
        let mut sessions: Vec<SessionInfo> = self
            .turns_by_session(who, None)?
            .into_iter()
            .filter_map(|(id, turns)| {
                Some(SessionInfo {
                    id,
                    turns: turns.len(),
                    first_at: turns.first()?.valid_from,
                    last_at: turns.last()?.valid_from,
                    expires_at: turns.iter().filter_map(|t| t.expires_at).max(),
                })
            })
            .collect();
        sessions.sort_by(|a, b| b.last_at.cmp(&a.last_at).then_with(|| a.id.cmp(&b.id)));
        Ok(sessions)
    }

    /// A session's held turns, oldest first (empty for an unknown session).
    pub fn session_turns(&self, who: &UserRef, session: &str) -> Result<Vec<Memory>> {
        Ok(self.turns_by_session(who, Some(session))?.remove(session).unwrap_or_default())
    }

    /// What context shows of a session: a summary of its older turns once they pass the
    /// compaction threshold, and its recent turns.
    pub fn session_view(
        &self,
        who: &UserRef,
        session: &str,
        compaction: Option<&CompactionConfig>,
        counter: &dyn TokenCounter,
    ) -> Result<SessionView> {
        let compaction = compaction.unwrap_or(&self.compaction);
        Ok(compact(&self.session_turns(who, session)?, compaction, counter))
    }
}

/// Metadata key naming the session a consolidated summary stands for.
pub const SUMMARY_OF: &str = "summary_of";

/// The extractor name consolidation records in what it writes.
pub const CONSOLIDATOR: &str = "consolidate/v1";

/// What a consolidation wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsolidationReport {
    /// Sessions consolidated.
    pub sessions: Vec<String>,
    /// Session summaries written.
    pub summaries: Vec<MemoryId>,
    /// Decisions written as semantic facts.
    pub facts: Vec<MemoryId>,
    /// Turns of ended incognito sessions, deleted.
    pub turns_deleted: usize,
    /// Sessions the chat model could not summarise (with why); they got the extractive
    /// summary instead.
    pub model_failures: Vec<(String, String)>,
}

impl Mnemo {
    /// Turns the sessions whose last turn is older than `quiet_for` into a session summary
    /// (an episodic record that outlives the transcript) and their decisions into semantic
    /// facts, each linked to the turns it came from: forgetting one of those turns forgets
    /// what was derived from it. With a chat model the summary is the model's, checked
    /// against the session (the extractive one when it fails). A session already summarised
    /// and an incognito session are left alone.
    pub fn consolidate(&self, who: &UserRef, quiet_for: Ttl) -> Result<ConsolidationReport> {
        self.consolidate_sessions(who, None, |last| last.plus(quiet_for) <= self.now())
    }

    /// Ends a session: it is consolidated now, however recent its last turn (see
    /// [`Mnemo::consolidate`]); its transcript stays until its retention ends. An incognito
    /// session's turns are deleted instead. An unknown session is an error; ending one
    /// already summarised writes nothing.
    pub fn end_session(&self, who: &UserRef, session: &str) -> Result<ConsolidationReport> {
        let turns = self.session_turns(who, session)?;
        if turns.is_empty() {
            return Err(crate::Error::SessionNotFound(session.to_owned()));
        }
        if turns.iter().any(is_incognito) {
            // An incognito session leaves nothing once it ends.
            let mut report = ConsolidationReport {
                sessions: vec![session.to_owned()],
                summaries: vec![],
                facts: vec![],
                turns_deleted: 0,
                model_failures: vec![],
            };
            for turn in &turns {
                report.turns_deleted += self
                    .store
                    .forget(who, &turn.id, &self.deletion())?
                    .map_or(0, |receipt| receipt.removed_ids.len());
            }
            return Ok(report);
        }
        self.consolidate_sessions(who, Some(session), |_| true)
    }

    /// A session summary from the chat model, validated against the session.
    pub(crate) fn model_summary(
        &self,
        chat: &dyn ChatModel,
        turns: &[Memory],
    ) -> std::result::Result<SessionSummary, String> {
        let prompt = summary_user_prompt(turns);
        let answer = crate::ingest::ask_model(
            chat,
            summary_system_prompt(),
            &prompt,
            "session_summary",
            &summary_schema(),
        )?;
        validate_summary(&answer, turns, self.compaction.max_items)
            .map_err(|e| format!("model answer rejected: {e}"))
    }

    /// Consolidates the sessions (all, or one) that are not summarised yet and that `due`
    /// accepts, given the time of their last turn.
    fn consolidate_sessions(
        &self,
        who: &UserRef,
        only: Option<&str>,
        due: impl Fn(Timestamp) -> bool,
    ) -> Result<ConsolidationReport> {
        let now = self.now();
        // Summaries are episodic records of their session: one listing finds both.
        let held = self.held(who, only)?;
        let summarised: Vec<String> = held
            .iter()
            .filter_map(|m| mnemo_core::record::metadata_str(&m.metadata, SUMMARY_OF))
            .map(str::to_owned)
            .collect();
        let mut report = ConsolidationReport {
            sessions: vec![],
            summaries: vec![],
            facts: vec![],
            turns_deleted: 0,
            model_failures: vec![],
        };
        for (session, turns) in group_turns(held) {
            let Some(last) = turns.last() else { continue };
            // An incognito session never becomes long-term memory.
            if turns.iter().any(is_incognito) {
                continue;
            }
            if summarised.contains(&session) || !due(last.valid_from) {
                continue;
            }
            let (summary, extractor) = match &self.chat {
                None => {
                    (summarise_session(&turns, self.compaction.max_items), CONSOLIDATOR.to_owned())
                }
                Some(chat) => match self.model_summary(chat.as_ref(), &turns) {
                    Ok(summary) => (summary, format!("{SUMMARY_PROMPT_VERSION}:{}", chat.id())),
                    Err(error) => {
                        report.model_failures.push((session.clone(), error));
                        (
                            summarise_session(&turns, self.compaction.max_items),
                            CONSOLIDATOR.to_owned(),
                        )
                    }
                },
            };
            let source = |reference: String| Source {
                source_type: SourceType::System,
                source_ref: Some(reference),
                captured_at: now,
                extractor: Some(extractor.clone()),
            };
            let mut batch = vec![CandidateFields {
                kind: Some(Kind::Episodic),
                session_id: Some(session.clone()),
                content: summary.lines().join("\n"),
                source: Some(source(format!("session:{session}"))),
                valid_from: Some(last.valid_from),
                metadata: BTreeMap::from([(SUMMARY_OF.to_owned(), session.clone().into())]),
                derived_from: summary.source_ids.clone(),
                ..Default::default()
            }];
            batch.extend(summary.decisions.iter().map(|decision| CandidateFields {
                kind: Some(Kind::Semantic),
                content: format!("Decided in session {session}: {}", decision.text),
                source: Some(source(decision.source.clone())),
                derived_from: vec![decision.source_id.clone()],
                ..Default::default()
            }));
            let results = self.remember_batch(who, batch)?;
            report.sessions.push(session);
            for (index, result) in results.into_iter().enumerate() {
                if let (Outcome::Added, Some(id)) = (result.outcome, result.id) {
                    if index == 0 { report.summaries.push(id) } else { report.facts.push(id) }
                }
            }
        }
        Ok(report)
    }
}
