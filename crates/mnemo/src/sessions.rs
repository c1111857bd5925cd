//! Sessions: the transcript turns ingested under one session id, listed, shown, and
//! compacted into what context shows of them (a summary of older turns, recent turns
//! verbatim).

use std::collections::BTreeMap;

use mnemo_core::context::TokenCounter;
use mnemo_core::ports::ListFilter;
use mnemo_core::session::{SessionInfo, SessionView, compact};
use mnemo_core::{Kind, Memory, Status, UserRef};

use crate::{Mnemo, Result};

impl Mnemo {
    /// Every held (unexpired) transcript turn of the user, by session, oldest first.
    fn turns_by_session(&self, who: &UserRef) -> Result<BTreeMap<String, Vec<Memory>>> {
        let filter = ListFilter {
            kind: Some(Kind::Episodic),
            status: Some(Status::Active),
            ..Default::default()
        };
        let mut sessions: BTreeMap<String, Vec<Memory>> = BTreeMap::new();
        for memory in self.store.list(who, &filter, self.now())? {
            if let Some(session) = memory.session_id.clone() {
                sessions.entry(session).or_default().push(memory);
            }
        }
        for turns in sessions.values_mut() {
            turns.sort_by(|a, b| {
                (a.valid_from, a.created_at, &a.id).cmp(&(b.valid_from, b.created_at, &b.id))
            });
        }
        Ok(sessions)
    }

    /// The user's sessions that still hold turns, most recently active first.
    pub fn sessions(&self, who: &UserRef) -> Result<Vec<SessionInfo>> {
        let mut sessions: Vec<SessionInfo> = self
            .turns_by_session(who)?
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
        Ok(self.turns_by_session(who)?.remove(session).unwrap_or_default())
    }

    /// What context shows of a session: a summary of its older turns once they pass the
    /// compaction threshold, and its recent turns.
    pub fn session_view(
        &self,
        who: &UserRef,
        session: &str,
        counter: &dyn TokenCounter,
    ) -> Result<SessionView> {
        Ok(compact(&self.session_turns(who, session)?, &self.compaction, counter))
    }
}
