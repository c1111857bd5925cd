//! mem0-compatible routes, so an existing mem0 REST client can point at mnemo: the same
//! paths and JSON shapes (`messages`, `user_id`, `agent_id`, `run_id`, `metadata`, `infer`;
//! results with `id`, `memory`, `hash`, `created_at`, `updated_at`, `score`), served by the
//! same library operations with mnemo's keys, scoping, policy gate and complete deletion.
//!
//! Events: `ADD`, `UPDATE` and `NONE` as mem0 reports them; a write the gate held or refused
//! is `NONE` with mnemo's `outcome` and `reason` beside it.

use axum::Json;
use axum::extract::State;
use axum::routing::{get, post};
use mnemo::core::lifecycle::{CandidateFields, Outcome};
use mnemo::core::ports::{ListFilter, SearchFilter};
use mnemo::core::transcript::{Message, Role};
use mnemo::core::{Kind, Memory, MemoryId, SourceType, Status, Timestamp};
use mnemo_api::mem0::{
    Mem0AddBody, Mem0Deleted, Mem0Event, Mem0HistoryEntry, Mem0ListQuery, Mem0Memory, Mem0Notice,
    Mem0ResetBody, Mem0Results, Mem0Scope, Mem0ScoreDetails, Mem0SearchBody, Mem0UpdateBody,
};
use sha2::{Digest, Sha256};

use crate::AppState;
use crate::routes::{ApiError, Body, Caller, Path, Query, blocking, read_body};

/// mem0's `expiration_date`: an RFC 3339 time, or a calendar date (the memory holds through
/// that day, UTC).
fn expiration(text: Option<&str>) -> Result<Option<Timestamp>, mnemo::core::error::InvalidInput> {
    let Some(text) = text else { return Ok(None) };
    if text.len() == 10 {
        let end_of_day = format!("{text}T23:59:59.999Z");
        return Timestamp::parse(&end_of_day, "expiration_date").map(Some);
    }
    Timestamp::parse(text, "expiration_date").map(Some)
}

/// A memory in mem0's shape.
fn item(m: &Memory) -> Mem0Memory {
    let hash: String =
        Sha256::digest(m.content.as_bytes()).iter().take(16).map(|b| format!("{b:02x}")).collect();
    Mem0Memory::new(m, hash, run_of(m))
}

/// The mem0 run a memory belongs to: its session, or the run recorded when it was drawn
/// from a conversation.
fn run_of(m: &Memory) -> Option<&str> {
    m.session_id.as_deref().or_else(|| mnemo::core::record::metadata_str(&m.metadata, RUN_ID))
}

/// Metadata key recording the mem0 `run_id` on memories drawn from a conversation.
const RUN_ID: &str = "run_id";

/// Whether a memory is within a mem0 scope's agent and run.
fn in_scope(m: &Memory, agent: Option<&String>, run: Option<&String>) -> bool {
    agent.is_none_or(|a| m.agent_id.as_ref() == Some(a)) && run.is_none_or(|r| run_of(m) == Some(r))
}

fn event(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Added => "ADD",
        Outcome::Updated => "UPDATE",
        Outcome::Skipped | Outcome::Pending | Outcome::Refused => "NONE",
    }
}

pub(crate) fn routes() -> axum::Router<AppState> {
    axum::Router::new()
        .route("/memories", post(add).get(get_all).delete(delete_all))
        .route("/memories/{id}", get(get_one).put(update).delete(delete_one))
        .route("/memories/{id}/history", get(history))
        .route("/search", post(search))
        .route("/reset", post(reset))
}

async fn add(
    State(state): State<AppState>,
    caller: Caller,
    body: Result<Body<Mem0AddBody>, ApiError>,
) -> Result<Json<Mem0Results<Mem0Event>>, ApiError> {
    let Body(body) = body?;
    let who = caller.user(body.scope.user_id.as_deref())?;
    let results = blocking(&state, &caller, move |mnemo| {
        // Values keep their JSON types, as mem0 returns them.
        let metadata: mnemo::core::Metadata =
            body.metadata.unwrap_or_default().into_iter().collect();
        // Checked whether or not any message is kept.
        mnemo::core::lifecycle::validate_metadata(&metadata)?;
        let expires_at = expiration(body.expiration_date.as_deref())?;
        let mut results = Vec::new();
        if body.infer {
            let messages: Vec<Message> = body
                .messages
                .into_iter()
                .map(|m| Message {
                    role: match m.role.as_str() {
                        "assistant" => Role::Assistant,
                        "system" => Role::System,
                        "tool" | "function" => Role::Tool,
                        _ => Role::User,
                    },
                    content: m.content,
                    id: None,
                    ts: None,
                    source: None,
                })
                .collect();
            let mut run_metadata = metadata.clone();
            if let Some(run) = &body.scope.run_id {
                run_metadata.insert(RUN_ID.to_owned(), run.clone().into());
            }
            let options = mnemo::IngestOptions {
                session: body.scope.run_id.clone().unwrap_or_else(|| "mem0".to_owned()),
                incognito: false,
                agent_id: body.scope.agent_id.clone(),
                metadata: run_metadata,
                retention: mnemo::core::duration::Ttl::parse(
                    mnemo::DEFAULT_RETENTION,
                    "retention",
                )?,
            };
            let report = mnemo.ingest(&who, &messages, &options)?;
            for p in report.proposed {
                results.push(Mem0Event {
                    id: p.result.id,
                    memory: p.content,
                    event: event(p.result.outcome),
                    outcome: p.result.outcome.as_str(),
                    reason: p.result.reason.as_str(),
                });
            }
        } else {
            for m in body.messages {
                let fields = CandidateFields {
                    content: m.content.clone(),
                    agent_id: body.scope.agent_id.clone(),
                    session_id: body.scope.run_id.clone(),
                    metadata: metadata.clone(),
                    expires_at,
                    ..Default::default()
                };
                let r = mnemo.remember(&who, fields)?;
                results.push(Mem0Event {
                    id: r.id,
                    memory: m.content,
                    event: event(r.outcome),
                    outcome: r.outcome.as_str(),
                    reason: r.reason.as_str(),
                });
            }
        }
        Ok(results)
    })
    .await?;
    Ok(Json(Mem0Results { results }))
}

async fn get_all(
    State(state): State<AppState>,
    caller: Caller,
    Query(query): Query<Mem0ListQuery>,
) -> Result<Json<Mem0Results<Mem0Memory>>, ApiError> {
    let scope = query.scope();
    let who = caller.user(scope.user_id.as_deref())?;
    let show_expired = query.show_expired;
    let memories = blocking(&state, &caller, move |mnemo| {
        let filter = ListFilter {
            status: Some(Status::Active),
            include_expired: show_expired,
            ..Default::default()
        };
        Ok(mnemo.list(&who, &filter)?)
    })
    .await?;
    // Newest first (as listed), as many as asked for.
    let results = memories
        .iter()
        .filter(|m| m.kind != Kind::Episodic)
        .filter(|m| in_scope(m, scope.agent_id.as_ref(), scope.run_id.as_ref()))
        .take(query.top_k.unwrap_or(usize::MAX))
        .map(item)
        .collect();
    Ok(Json(Mem0Results { results }))
}

async fn get_one(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Query(scope): Query<Mem0Scope>,
) -> Result<Json<Mem0Memory>, ApiError> {
    let who = caller.user(scope.user_id.as_deref())?;
    let memory =
        blocking(&state, &caller, move |mnemo| Ok(mnemo.get(&who, &MemoryId(id))?)).await?;
    Ok(Json(item(&memory)))
}

async fn search(
    State(state): State<AppState>,
    caller: Caller,
    body: Result<Body<Mem0SearchBody>, ApiError>,
) -> Result<Json<Mem0Results<Mem0Memory>>, ApiError> {
    let Body(body) = body?;
    let filters = body.filters.unwrap_or_default();
    let who = caller.user(body.scope.user_id.as_deref().or(filters.user_id.as_deref()))?;
    let agent = body.scope.agent_id.or(filters.agent_id);
    let run = body.scope.run_id.or(filters.run_id);
    let limit = body.top_k.or(body.limit).unwrap_or(mnemo_api::DEFAULT_K);
    let (threshold, explain) = (body.threshold, body.explain);
    if let Some(t) = threshold
        && !(0.0..=1.0).contains(&t)
    {
        return Err(ApiError::from(mnemo::core::error::InvalidInput::new(
            "threshold",
            format!("{t} is outside 0..1"),
        )));
    }
    let hits = blocking(&state, &caller, move |mnemo| {
        // mem0 returns extracted memories, not transcript turns, of the agent and run asked
        // for: ask for more, keep those.
        let request = mnemo::SearchRequest {
            query: body.query,
            k: mnemo::MAX_K.min(limit.saturating_mul(3).max(30)),
            filter: SearchFilter::default(),
            min_relevance: None,
            as_of: None,
            // mem0's memories are the user's own.
            spaces: Some(vec![mnemo::PRIVATE.to_owned()]),
        };
        Ok(mnemo.search(&who, &request)?)
    })
    .await?;
    let results = hits
        .iter()
        .filter(|h| h.memory.kind != Kind::Episodic)
        .filter(|h| in_scope(&h.memory, agent.as_ref(), run.as_ref()))
        .filter(|h| threshold.is_none_or(|t| h.parts.score >= t))
        .take(limit)
        .map(|h| Mem0Memory {
            score: Some(h.parts.score),
            score_details: explain.then_some(Mem0ScoreDetails {
                relevance: h.parts.relevance,
                recency: h.parts.recency,
                importance: h.parts.importance,
                bm25: h.bm25,
                cosine: h.cosine,
            }),
            ..item(&h.memory)
        })
        .collect();
    Ok(Json(Mem0Results { results }))
}

async fn update(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Query(scope): Query<Mem0Scope>,
    body: Result<Body<Mem0UpdateBody>, ApiError>,
) -> Result<Json<Mem0Notice>, ApiError> {
    let Body(body) = body?;
    let who = caller.user(scope.user_id.as_deref().or(body.user_id.as_deref()))?;
    let text = body.new_text().map(str::to_owned);
    let metadata: Option<mnemo::core::Metadata> = body.metadata.map(|m| m.into_iter().collect());
    let expires_at = match &body.expiration_date {
        Some(date) => Some(expiration(date.as_deref())?),
        None => None,
    };
    if text.is_none() && metadata.is_none() && expires_at.is_none() {
        return Err(ApiError::from(mnemo::core::error::InvalidInput::new(
            "text",
            "is required unless metadata or expiration_date is given",
        )));
    }
    blocking(&state, &caller, move |mnemo| {
        let source = mnemo::core::SourceType::UserStated;
        let id = MemoryId(id);
        Ok(mnemo.revise_with_expiry(&who, &id, text.as_deref(), metadata, expires_at, source)?)
    })
    .await?;
    Ok(Json(Mem0Notice { message: "Memory updated successfully!".into() }))
}

async fn history(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Query(scope): Query<Mem0Scope>,
) -> Result<Json<Vec<Mem0HistoryEntry>>, ApiError> {
    let who = caller.user(scope.user_id.as_deref())?;
    let history =
        blocking(&state, &caller, move |mnemo| Ok(mnemo.history(&who, &MemoryId(id))?)).await?;
    // mem0 lists each value a memory has held, oldest first: the records it superseded, its
    // own earlier versions, then its current text.
    let memory = &history.memory;
    let mut values: Vec<(String, &str, Timestamp, Timestamp)> = Vec::new();
    for old in history.superseded.iter().rev() {
        values.push((old.id.to_string(), &old.content, old.created_at, old.updated_at));
    }
    for v in &history.versions {
        values.push((
            format!("{}-v{}", memory.id, v.version),
            &v.content,
            v.updated_at,
            v.replaced_at,
        ));
    }
    values.push((
        format!("{}-v{}", memory.id, memory.version),
        &memory.content,
        memory.created_at,
        memory.updated_at,
    ));
    // mem0's `role` is the author of what was said: the user for their own statements, the
    // assistant for what an agent inferred; `actor_id` names the agent, if one is recorded.
    let role = match memory.source.source_type {
        SourceType::UserStated | SourceType::UserAction => Some("user"),
        SourceType::Inferred => Some("assistant"),
        _ => None,
    };
    let mut previous: Option<&str> = None;
    let mut entries = Vec::with_capacity(values.len());
    for (entry_id, text, created_at, updated_at) in values {
        let event = if previous.is_none() { "ADD" } else { "UPDATE" };
        // A deleted memory leaves no history here (deletion is complete): nothing is deleted.
        entries.push(Mem0HistoryEntry {
            id: entry_id,
            memory_id: memory.id.clone(),
            old_memory: previous.map(str::to_owned),
            new_memory: text.to_owned(),
            event,
            created_at,
            updated_at,
            is_deleted: false,
            actor_id: memory.agent_id.clone(),
            role,
        });
        previous = Some(text);
    }
    Ok(Json(entries))
}

async fn delete_one(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Query(scope): Query<Mem0Scope>,
) -> Result<Json<Mem0Notice>, ApiError> {
    let who = caller.user(scope.user_id.as_deref())?;
    blocking(&state, &caller, move |mnemo| Ok(mnemo.forget(&who, &MemoryId(id))?)).await?;
    Ok(Json(Mem0Notice { message: "Memory deleted successfully".into() }))
}

async fn delete_all(
    State(state): State<AppState>,
    caller: Caller,
    Query(scope): Query<Mem0Scope>,
) -> Result<Json<Mem0Deleted>, ApiError> {
    let (agent, run) = (scope.agent_id, scope.run_id);
    // Deleting everything of a user is the user's own key's, or an admin's, to do.
    let who = if agent.is_none() && run.is_none() {
        caller.user_to_erase(scope.user_id.as_deref())?
    } else {
        caller.user(scope.user_id.as_deref())?
    };
    let forgotten = blocking(&state, &caller, move |mnemo| {
        if agent.is_none() && run.is_none() {
            return Ok(mnemo.forget_all(&who)?.removed.records);
        }
        // Only the memories of that agent or run, all in one transaction: the user's others
        // stay.
        let all = mnemo.list(&who, &ListFilter { include_expired: true, ..Default::default() })?;
        let ids: Vec<MemoryId> = all
            .into_iter()
            .filter(|m| in_scope(m, agent.as_ref(), run.as_ref()))
            .map(|m| m.id)
            .collect();
        Ok(mnemo.forget_each(&who, &ids)?.map_or(0, |receipt| receipt.removed.records))
    })
    .await?;
    Ok(Json(Mem0Deleted {
        message: "All relevant memories deleted".into(),
        user_id: None,
        deleted: forgotten,
    }))
}

async fn reset(
    State(state): State<AppState>,
    caller: Caller,
    Query(scope): Query<Mem0Scope>,
    body: axum::body::Bytes,
) -> Result<Json<Mem0Deleted>, ApiError> {
    // mnemo scopes even a reset: it forgets everything of one user (the key's, or the one a
    // tenant key names, in the query or the body), never another user's or tenant's data.
    let body: Mem0ResetBody = if body.iter().all(u8::is_ascii_whitespace) {
        Mem0ResetBody::default()
    } else {
        let mut value: serde_json::Value = serde_json::from_slice(&body).map_err(|e| {
            ApiError::from(mnemo::core::error::InvalidInput::new("body", format!("not JSON: {e}")))
        })?;
        read_body(&mut value)?
    };
    let named = scope.user_id.or(body.user_id);
    let who = caller.user_to_erase(named.as_deref())?;
    let user = who.user_id().to_owned();
    let forgotten =
        blocking(&state, &caller, move |mnemo| Ok(mnemo.forget_all(&who)?.removed.records)).await?;
    Ok(Json(Mem0Deleted {
        message: format!("Reset all memories of user {user}"),
        user_id: Some(user),
        deleted: forgotten,
    }))
}
