//! mem0-compatible routes, so an existing mem0 REST client can point at mnemo: the same
//! paths and JSON shapes (`messages`, `user_id`, `agent_id`, `run_id`, `metadata`, `infer`;
//! results with `id`, `memory`, `hash`, `created_at`, `updated_at`, `score`), served by the
//! same library operations with mnemo's keys, scoping, policy gate and complete deletion.
//!
//! Events: `ADD`, `UPDATE` and `NONE` as mem0 reports them; a write the gate held or refused
//! is `NONE` with mnemo's `outcome` and `reason` beside it.

use axum::Json;
use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, Query, State};
use axum::routing::{get, post};
use mnemo::core::lifecycle::{CandidateFields, Outcome};
use mnemo::core::ports::{ListFilter, SearchFilter};
use mnemo::core::transcript::{Message, Role};
use mnemo::core::{Kind, Memory, MemoryId, Status, Timestamp};
use serde::Deserialize;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::AppState;
use crate::routes::{ApiError, Caller, blocking};

#[derive(Debug, Deserialize)]
struct Mem0Message {
    role: String,
    content: String,
}

#[derive(Debug, Deserialize)]
struct AddBody {
    messages: Vec<Mem0Message>,
    #[serde(default)]
    user_id: Option<String>,
    #[serde(default)]
    agent_id: Option<String>,
    #[serde(default)]
    run_id: Option<String>,
    #[serde(default)]
    metadata: Option<serde_json::Map<String, Value>>,
    #[serde(default = "yes")]
    infer: bool,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Default, Deserialize)]
struct Scope {
    #[serde(default)]
    user_id: Option<String>,
    #[serde(default)]
    agent_id: Option<String>,
    #[serde(default)]
    run_id: Option<String>,
}

#[derive(Debug, Deserialize)]
struct SearchBody {
    query: String,
    #[serde(default)]
    user_id: Option<String>,
    #[serde(default)]
    limit: Option<usize>,
    #[serde(default)]
    agent_id: Option<String>,
    #[serde(default)]
    run_id: Option<String>,
}

/// A memory in mem0's shape.
fn item(m: &Memory) -> Value {
    let hash: String =
        Sha256::digest(m.content.as_bytes()).iter().take(16).map(|b| format!("{b:02x}")).collect();
    json!({
        "id": m.id,
        "memory": m.content,
        "hash": hash,
        "metadata": m.metadata,
        "user_id": m.user_id,
        "agent_id": m.agent_id,
        "run_id": m.session_id,
        "created_at": m.created_at,
        "updated_at": m.updated_at,
    })
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
    body: Result<Json<AddBody>, JsonRejection>,
) -> Result<Json<Value>, ApiError> {
    let Json(body) = body?;
    let who = caller.user(body.user_id.as_deref())?;
    let results = blocking(&state, move |mnemo| {
        let metadata: std::collections::BTreeMap<String, String> = body
            .metadata
            .unwrap_or_default()
            .into_iter()
            .map(|(k, v)| (k, v.as_str().map_or_else(|| v.to_string(), str::to_owned)))
            .collect();
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
            let options = mnemo::IngestOptions {
                session: body.run_id.clone().unwrap_or_else(|| "mem0".to_owned()),
                incognito: false,
                retention: mnemo::core::duration::Ttl::parse(
                    mnemo::DEFAULT_RETENTION,
                    "retention",
                )?,
            };
            let report = mnemo.ingest(&who, &messages, &options)?;
            for p in report.proposed {
                results.push(json!({
                    "id": p.result.id, "memory": p.content, "event": event(p.result.outcome),
                    "outcome": p.result.outcome.as_str(), "reason": p.result.reason.as_str(),
                }));
            }
        } else {
            for m in body.messages {
                let fields = CandidateFields {
                    content: m.content.clone(),
                    agent_id: body.agent_id.clone(),
                    session_id: body.run_id.clone(),
                    metadata: metadata.clone(),
                    ..Default::default()
                };
                let r = mnemo.remember(&who, fields)?;
                results.push(json!({
                    "id": r.id, "memory": m.content, "event": event(r.outcome),
                    "outcome": r.outcome.as_str(), "reason": r.reason.as_str(),
                }));
            }
        }
        Ok(results)
    })
    .await?;
    Ok(Json(json!({ "results": results })))
}

async fn get_all(
    State(state): State<AppState>,
    caller: Caller,
    Query(scope): Query<Scope>,
) -> Result<Json<Value>, ApiError> {
    let who = caller.user(scope.user_id.as_deref())?;
    let memories = blocking(&state, move |mnemo| {
        let filter = ListFilter { status: Some(Status::Active), ..Default::default() };
        Ok(mnemo.list(&who, &filter)?)
    })
    .await?;
    let results: Vec<Value> = memories
        .iter()
        .filter(|m| m.kind != Kind::Episodic)
        .filter(|m| scope.agent_id.as_ref().is_none_or(|a| m.agent_id.as_ref() == Some(a)))
        .filter(|m| scope.run_id.as_ref().is_none_or(|r| m.session_id.as_ref() == Some(r)))
        .map(item)
        .collect();
    Ok(Json(json!({ "results": results })))
}

async fn get_one(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Query(scope): Query<Scope>,
) -> Result<Json<Value>, ApiError> {
    let who = caller.user(scope.user_id.as_deref())?;
    let memory = blocking(&state, move |mnemo| Ok(mnemo.get(&who, &MemoryId(id))?)).await?;
    Ok(Json(item(&memory)))
}

async fn search(
    State(state): State<AppState>,
    caller: Caller,
    body: Result<Json<SearchBody>, JsonRejection>,
) -> Result<Json<Value>, ApiError> {
    let Json(body) = body?;
    let who = caller.user(body.user_id.as_deref())?;
    let (agent, run, limit) = (body.agent_id.clone(), body.run_id.clone(), body.limit);
    let hits = blocking(&state, move |mnemo| {
        // mem0 returns extracted memories, not transcript turns: ask for more, keep those.
        let request = mnemo::SearchRequest {
            query: body.query,
            k: (body.limit.unwrap_or(10) * 3).clamp(1, mnemo::MAX_K),
            filter: SearchFilter::default(),
            min_relevance: None,
            as_of: None,
        };
        Ok(mnemo.search(&who, &request)?)
    })
    .await?;
    let limit = limit.unwrap_or(10);
    let results: Vec<Value> = hits
        .iter()
        .filter(|h| h.memory.kind != Kind::Episodic)
        .take(limit)
        .filter(|h| agent.as_ref().is_none_or(|a| h.memory.agent_id.as_ref() == Some(a)))
        .filter(|h| run.as_ref().is_none_or(|r| h.memory.session_id.as_ref() == Some(r)))
        .map(|h| {
            let mut value = item(&h.memory);
            value["score"] = json!(h.parts.score);
            value
        })
        .collect();
    Ok(Json(json!({ "results": results })))
}

async fn update(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Query(scope): Query<Scope>,
    body: Result<Json<Value>, JsonRejection>,
) -> Result<Json<Value>, ApiError> {
    let Json(body) = body?;
    let who = caller.user(scope.user_id.as_deref().or_else(|| body["user_id"].as_str()))?;
    let text = ["text", "data", "memory"]
        .iter()
        .find_map(|k| body[*k].as_str())
        .map(str::to_owned)
        .ok_or_else(|| {
            ApiError::from(mnemo::core::error::InvalidInput::new("text", "is required"))
        })?;
    blocking(&state, move |mnemo| Ok(mnemo.edit(&who, &MemoryId(id), &text)?)).await?;
    Ok(Json(json!({ "message": "Memory updated successfully!" })))
}

async fn history(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Query(scope): Query<Scope>,
) -> Result<Json<Value>, ApiError> {
    let who = caller.user(scope.user_id.as_deref())?;
    let history = blocking(&state, move |mnemo| Ok(mnemo.history(&who, &MemoryId(id))?)).await?;
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
    let mut previous: Option<&str> = None;
    let mut entries = Vec::with_capacity(values.len());
    for (entry_id, text, created_at, updated_at) in values {
        let event = if previous.is_none() { "ADD" } else { "UPDATE" };
        entries.push(json!({"id": entry_id, "memory_id": memory.id, "old_memory": previous, "new_memory": text, "event": event, "created_at": created_at, "updated_at": updated_at}));
        previous = Some(text);
    }
    Ok(Json(Value::Array(entries)))
}

async fn delete_one(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Query(scope): Query<Scope>,
) -> Result<Json<Value>, ApiError> {
    let who = caller.user(scope.user_id.as_deref())?;
    blocking(&state, move |mnemo| Ok(mnemo.forget(&who, &MemoryId(id))?)).await?;
    Ok(Json(json!({ "message": "Memory deleted successfully" })))
}

async fn delete_all(
    State(state): State<AppState>,
    caller: Caller,
    Query(scope): Query<Scope>,
) -> Result<Json<Value>, ApiError> {
    forget_user(&state, &caller, &scope).await?;
    Ok(Json(json!({ "message": "All relevant memories deleted" })))
}

async fn reset(
    State(state): State<AppState>,
    caller: Caller,
    Query(scope): Query<Scope>,
) -> Result<Json<Value>, ApiError> {
    // mnemo scopes even a reset: it forgets everything of one user (the key's, or the one a
    // tenant key names), never another tenant's data.
    forget_user(&state, &caller, &scope).await?;
    Ok(Json(json!({ "message": "Reset all memories" })))
}

/// Forgets every memory of the user the caller acts for.
async fn forget_user(state: &AppState, caller: &Caller, scope: &Scope) -> Result<(), ApiError> {
    let who = caller.user(scope.user_id.as_deref())?;
    blocking(state, move |mnemo| Ok(mnemo.forget_all(&who)?)).await?;
    Ok(())
}
