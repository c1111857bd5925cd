//! Route handlers: authentication, turning bodies into library calls, and JSON errors.

use std::sync::Arc;

use axum::extract::rejection::JsonRejection;
use axum::extract::{FromRequest, FromRequestParts, Request, State};
use axum::http::request::Parts;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use axum::{Json, Router};
use mnemo::core::ErrorKind;
use mnemo::core::error::InvalidInput;
use mnemo::core::ledger::Restatement;
use mnemo::core::lifecycle::CandidateFields;
use mnemo::core::policy::UserSettings;
use mnemo::core::ports::{ListFilter, SearchFilter};
use mnemo::core::run::{Run, RunChange, StepStatus};
use mnemo::core::session::CompactionConfig;
use mnemo::core::{ConsentReceipt, MemoryId, Source, SourceType, Timestamp, UserRef};
use mnemo::{Mnemo, Principal};
use mnemo_api::requests::{
    ContextBody, DeletionsQuery, EditBody, ImportQuery, IngestBody, KeyCreateBody, ListQuery,
    RememberBody, RunEvidenceBody, RunStartBody, RunStatusBody, RunStepBody, RunToolResultBody,
    SearchBody, SettingsBody, UserQuery,
};
use mnemo_api::{self as api, ErrorBody, error_mapping};
use serde::Serialize;

use crate::AppState;

/// An error as a client sees it.
pub(crate) struct ApiError {
    status: StatusCode,
    body: ErrorBody,
    retry_after: Option<std::time::Duration>,
}

impl ApiError {
    fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        let mapping = error_mapping(kind);
        let retry_after = match kind {
            ErrorKind::RateLimited { retry_after } => Some(retry_after),
            ErrorKind::Unavailable { retry_after } => retry_after,
            _ => None,
        };
        Self {
            status: StatusCode::from_u16(mapping.http_status)
                .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            body: ErrorBody { code: mapping.code, message: message.into() },
            retry_after,
        }
    }
}

impl From<mnemo::Error> for ApiError {
    fn from(error: mnemo::Error) -> Self {
        match error.kind() {
            // Internal failures are not described to clients.
            ErrorKind::Internal => Self::new(ErrorKind::Internal, "internal error"),
            kind => Self::new(kind, error.to_string()),
        }
    }
}

impl From<InvalidInput> for ApiError {
    fn from(error: InvalidInput) -> Self {
        Self::new(ErrorKind::InvalidInput, format!("invalid {error}"))
    }
}

impl From<JsonRejection> for ApiError {
    fn from(rejection: JsonRejection) -> Self {
        let status = rejection.status();
        let mut error = Self::new(ErrorKind::InvalidInput, rejection.body_text());
        if status == StatusCode::PAYLOAD_TOO_LARGE {
            error.status = status;
            error.body.code = "payload_too_large";
        }
        error
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (self.status, Json(self.body)).into_response();
        if let Some(wait) = self.retry_after {
            let seconds = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
            if let Ok(value) = header::HeaderValue::from_str(&seconds.max(1).to_string()) {
                response.headers_mut().insert(header::RETRY_AFTER, value);
            }
        }
        response
    }
}

/// Query-string parameters; a value of the wrong type is refused with the JSON error body
/// every other error has (axum's own extractor answers in plain text).
pub(crate) struct Query<T>(pub(crate) T);

impl<T: serde::de::DeserializeOwned, S: Send + Sync> FromRequestParts<S> for Query<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let pairs: Vec<(String, String)> =
            serde_urlencoded::from_str(parts.uri.query().unwrap_or_default()).map_err(|e| {
                ApiError::new(ErrorKind::InvalidInput, format!("invalid query: {e}"))
            })?;
        mnemo_api::wire::check_query(&pairs)?;
        axum::extract::Query::<T>::from_request_parts(parts, state)
            .await
            .map(|query| Query(query.0))
            .map_err(|rejection| ApiError::new(ErrorKind::InvalidInput, rejection.body_text()))
    }
}

/// A JSON request body: a JSON object (an array or a bare value is refused, though serde
/// would read an array as a struct), its identifiers checked and its integral numbers read
/// as integers (`10.0` is 10, as the OpenAPI document's integer types allow) before it is
/// read into `T`. Errors carry the JSON error body; a body over the limit is 413.
pub(crate) struct Body<T>(pub(crate) T);

impl<T: serde::de::DeserializeOwned, S: Send + Sync> FromRequest<S> for Body<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        let Json(mut value) = Json::<serde_json::Value>::from_request(request, state).await?;
        read_body(&mut value).map(Body)
    }
}

/// Checks a parsed body and reads it into `T`, naming the field that did not fit.
pub(crate) fn read_body<T: serde::de::DeserializeOwned>(
    value: &mut serde_json::Value,
) -> Result<T, ApiError> {
    mnemo_api::wire::prepare_body(value)?;
    serde_path_to_error::deserialize(value.take()).map_err(|e| {
        ApiError::new(
            ErrorKind::InvalidInput,
            format!("Failed to deserialize the JSON body into the target type: {e}"),
        )
    })
}

/// Path parameters, refused like [`Query`] when a value does not parse.
pub(crate) struct Path<T>(pub(crate) T);

impl<T: serde::de::DeserializeOwned + Send, S: Send + Sync> FromRequestParts<S> for Path<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        axum::extract::Path::<T>::from_request_parts(parts, state)
            .await
            .map(|path| Path(path.0))
            .map_err(|rejection| ApiError::new(ErrorKind::InvalidInput, rejection.body_text()))
    }
}

/// A path no route serves: 404 with the JSON error body every other error has.
pub(crate) async fn no_such_route(uri: axum::http::Uri) -> ApiError {
    ApiError::new(ErrorKind::NotFound, format!("no such route: {}", uri.path()))
}

/// A route served, but not with this method: 405 with the JSON error body.
pub(crate) async fn method_not_allowed(
    method: axum::http::Method,
    uri: axum::http::Uri,
) -> Response {
    let body = ErrorBody {
        code: "method_not_allowed",
        message: format!("{} does not accept {method}", uri.path()),
    };
    (StatusCode::METHOD_NOT_ALLOWED, Json(body)).into_response()
}

/// Authenticates MCP-over-HTTP requests and puts the caller's user in the request
/// extensions, where the MCP tools read it: a user key's own user, or the user a tenant key
/// names in the `x-mnemo-user` header.
pub(crate) async fn mcp_auth(
    State(state): State<AppState>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let (mut parts, body) = request.into_parts();
    let caller = match Caller::from_request_parts(&mut parts, &state).await {
        Ok(caller) => caller,
        Err(error) => return error.into_response(),
    };
    let named = parts.headers.get("x-mnemo-user").and_then(|v| v.to_str().ok()).map(str::to_owned);
    let who = match caller.user(named.as_deref()) {
        Ok(who) => who,
        Err(error) => return error.into_response(),
    };
    parts.extensions.insert(who);
    next.run(axum::extract::Request::from_parts(parts, body)).await
}

/// Where the authenticated key's id is left for the request log (the caller is known only
/// once a handler's extractor has run).
#[derive(Clone, Default)]
pub(crate) struct KeySlot(Arc<std::sync::Mutex<Option<String>>>);

impl KeySlot {
    fn set(&self, key_id: &str) {
        *self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(key_id.to_owned());
    }

    fn take(&self) -> Option<String> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take()
    }
}

/// Records each request's route, status and latency in the metrics, and logs it as one
/// structured event (target `mnemo::request`): method, route template, status, latency,
/// key id and client address; never a body, query or memory content.
pub(crate) async fn track(
    State(state): State<AppState>,
    mut request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let route = request
        .extensions()
        .get::<axum::extract::MatchedPath>()
        .map_or_else(|| "unmatched".to_owned(), |p| p.as_str().to_owned());
    let method = request.method().to_string();
    let peer = request
        .extensions()
        .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
        .map(|info| info.0.ip().to_string());
    let key = KeySlot::default();
    request.extensions_mut().insert(key.clone());
    let start = std::time::Instant::now();
    let response = next.run(request).await;
    let elapsed = start.elapsed();
    let status = response.status().as_u16();
    state.metrics.record(&method, &route, status, elapsed);
    // A write the store had no room for makes the server degraded until a write succeeds.
    if status == 507 {
        state.storage_full.store(true, std::sync::atomic::Ordering::Relaxed);
    } else if method != "GET"
        && !route.ends_with("/search")
        && !route.ends_with("/context")
        && (200..300).contains(&status)
    {
        state.storage_full.store(false, std::sync::atomic::Ordering::Relaxed);
    }
    tracing::info!(
        target: "mnemo::request",
        method = %method,
        route = %route,
        status,
        latency_ms = elapsed.as_secs_f64() * 1000.0,
        key = key.take().as_deref().unwrap_or("-"),
        peer = peer.as_deref().unwrap_or("-"),
        "request"
    );
    response
}

/// `{"status": "ok"}`, or `degraded` with the reason while writes fail for want of storage
/// (reads are still served).
async fn health(State(state): State<AppState>) -> Json<serde_json::Value> {
    if state.storage_full.load(std::sync::atomic::Ordering::Relaxed) {
        return Json(serde_json::json!({
            "status": "degraded",
            "reason": "storage full: writes fail until space is freed; reads are served",
        }));
    }
    Json(serde_json::json!({"status": "ok"}))
}

async fn metrics(State(state): State<AppState>) -> Result<Response, ApiError> {
    let mnemo = Arc::clone(&state.mnemo);
    let counts = on_call_thread(&state, move || mnemo.store().count_by_status())
        .await?
        .map_err(mnemo::Error::from)?;
    let counts: Vec<(String, u64)> = counts.into_iter().map(|(s, n)| (s.to_string(), n)).collect();
    let body = state.metrics.render(&counts, state.mnemo.refine_status().as_ref());
    Ok(([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], body).into_response())
}

pub(crate) type ApiResult<T> = Result<Json<T>, ApiError>;

/// The header mem0's REST server reads an API key from.
const X_API_KEY: &str = "x-api-key";

/// The authenticated caller.
pub(crate) struct Caller(pub(crate) Principal);

impl FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        // Failed authentications are counted per client address: once its bucket is empty,
        // the address is refused until it refills, whatever key it sends.
        let peer = parts
            .extensions
            .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
            .map_or_else(|| "unknown".to_owned(), |info| info.0.ip().to_string());
        let too_many = |wait| {
            ApiError::new(
                ErrorKind::RateLimited { retry_after: wait },
                "too many failed authentications from this address",
            )
        };
        state.failed_auth.check(&peer).map_err(too_many)?;
        let unauthorized = || {
            if let Err(wait) = state.failed_auth.take(&peer) {
                return too_many(wait);
            }
            ApiError::new(ErrorKind::Unauthorized, "missing or invalid API key")
        };
        let header = |name: &str| parts.headers.get(name).and_then(|v| v.to_str().ok());
        // `Authorization: Bearer` for mnemo clients, `Token` as mem0's client sends it, or
        // `X-API-Key` as mem0's REST server takes it.
        let secret = match (header(header::AUTHORIZATION.as_str()), header(X_API_KEY)) {
            (Some(value), _) => {
                value.strip_prefix("Bearer ").or_else(|| value.strip_prefix("Token "))
            }
            (None, Some(value)) => Some(value.trim()),
            (None, None) => None,
        }
        .ok_or_else(unauthorized)?
        .to_owned();
        let mnemo = Arc::clone(&state.mnemo);
        let principal = on_call_thread(state, move || mnemo.authenticate(&secret)).await??;
        let principal = principal.ok_or_else(unauthorized)?;
        if let Some(slot) = parts.extensions.get::<KeySlot>() {
            slot.set(&principal.key_id);
        }
        state.limiter.take_with_rate(&principal.key_id, principal.rate).map_err(|wait| {
            ApiError::new(
                ErrorKind::RateLimited { retry_after: wait },
                "too many requests for this key",
            )
        })?;
        Ok(Caller(principal))
    }
}

impl Caller {
    /// The user whose every memory a request may delete: a user key's own user (a person may
    /// always delete what is kept about them), or any user for an admin key of the tenant.
    pub(crate) fn user_to_erase(&self, named: Option<&str>) -> Result<UserRef, ApiError> {
        let who = self.user(named)?;
        if self.0.user_id.is_none() && !self.0.admin {
            return Err(ApiError::new(
                ErrorKind::Forbidden,
                "deleting every memory of a user needs an admin key of the tenant, or the user's own key",
            ));
        }
        Ok(who)
    }

    /// Fails unless the key is an admin key of its tenant; `what` names the operation.
    pub(crate) fn admin(&self, what: &str) -> Result<(), ApiError> {
        if self.0.admin {
            Ok(())
        } else {
            Err(ApiError::new(
                ErrorKind::Forbidden,
                format!("{what} needs an admin key of the tenant"),
            ))
        }
    }

    /// The user a request acts for: a user key's own user (naming another is forbidden), or
    /// the user a tenant key names.
    pub(crate) fn user(&self, named: Option<&str>) -> Result<UserRef, ApiError> {
        let p = &self.0;
        let user = match (&p.user_id, named) {
            (Some(own), Some(asked)) if asked.trim() != own => {
                return Err(ApiError::new(
                    ErrorKind::Forbidden,
                    "this key acts only for its own user",
                ));
            }
            (Some(own), _) => own.clone(),
            (None, Some(asked)) => asked.to_owned(),
            (None, None) => {
                return Err(InvalidInput::new("user_id", "is required with a tenant key").into());
            }
        };
        Ok(UserRef::new(&p.tenant, &user)?)
    }
}

/// Runs a library call for `caller` on one of the server's call threads
/// ([`crate::Limits::calls_at_once`]); its audit entries name the channel and the
/// key's id (`http:<key id>`), never the key.
pub(crate) async fn blocking<T: Send + 'static>(
    state: &AppState,
    caller: &Caller,
    call: impl FnOnce(&Mnemo) -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    let mnemo = state.mnemo.acting_as(format!("http:{}", caller.0.key_id));
    on_call_thread(state, move || call(&mnemo)).await?
}

/// Runs `work` on one of the server's call threads once one is free
/// ([`crate::Limits::calls_at_once`]); `work` runs to its end even when the request is
/// dropped meanwhile.
pub(crate) async fn on_call_thread<T: Send + 'static>(
    state: &AppState,
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, ApiError> {
    state.calls.run(work).await.ok_or_else(|| ApiError::new(ErrorKind::Internal, "internal error"))
}

pub(crate) fn json<T: Serialize>(value: T) -> ApiResult<T> {
    Ok(Json(value))
}

pub(crate) fn routes() -> Router<AppState> {
    Router::new()
        .route("/healthz", get(health))
        .route("/metrics", get(metrics))
        .route("/openapi.json", get(|| async { Json(mnemo_api::openapi::document()) }))
        .route("/v1/memories", post(remember).get(list))
        .route("/v1/memories/{id}", get(get_memory).patch(edit).delete(forget))
        .route("/v1/memories/{id}/history", get(history))
        .route("/v1/memories/{id}/confirm", post(confirm))
        .route("/v1/memories/{id}/reject", post(reject))
        .route("/v1/memories/{id}/used", post(mark_used))
        .route("/v1/memory-tool", post(memory_tool))
        .route("/v1/search", post(search))
        .route("/v1/context", post(context))
        .route("/v1/ingest", post(ingest))
        .route("/v1/users/{user_id}/export", get(export))
        .route("/v1/users/{user_id}/import", post(import))
        .route("/v1/expire", post(expire))
        .route("/v1/users/{user_id}/memories", axum::routing::delete(forget_all))
        .route("/v1/users/{user_id}/settings", put(set_settings).get(settings))
        .route("/v1/users/{user_id}/pending", get(pending))
        .route("/v1/users/{user_id}/audit", get(audit))
        .route("/v1/users/{user_id}/deletions", get(deletions))
        .route("/v1/users/{user_id}/overdue", get(overdue))
        .route("/v1/spaces", post(crate::spaces::create).get(crate::spaces::list))
        .route("/v1/spaces/{id}", get(crate::spaces::show).delete(crate::spaces::delete))
        .route(
            "/v1/spaces/{id}/members",
            get(crate::spaces::members).post(crate::spaces::add_member),
        )
        .route(
            "/v1/spaces/{id}/members/{user_id}",
            axum::routing::delete(crate::spaces::remove_member),
        )
        .route("/v1/keys", post(create_key).get(list_keys))
        .route("/v1/keys/{id}", axum::routing::delete(revoke_key))
        .route("/v1/runs", post(start_run).get(list_runs))
        .route("/v1/runs/{id}", get(show_run).delete(end_run))
        .route("/v1/runs/{id}/steps", post(add_run_step))
        .route("/v1/runs/{id}/steps/{number}", put(set_run_step))
        .route("/v1/runs/{id}/evidence", post(add_run_evidence))
        .route("/v1/runs/{id}/tool-results", post(add_run_tool_result))
}

async fn start_run(
    State(state): State<AppState>,
    caller: Caller,
    body: Result<Body<RunStartBody>, ApiError>,
) -> ApiResult<Run> {
    let Body(body) = body?;
    let who = caller.user(body.user_id.as_deref())?;
    json(blocking(&state, &caller, move |mnemo| Ok(mnemo.start_run(&who, &body.goal)?)).await?)
}

async fn list_runs(
    State(state): State<AppState>,
    caller: Caller,
    Query(q): Query<UserQuery>,
) -> ApiResult<api::RunList> {
    let who = caller.user(q.user_id.as_deref())?;
    let runs = blocking(&state, &caller, move |mnemo| Ok(mnemo.runs(&who)?)).await?;
    json(api::RunList { runs })
}

async fn show_run(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Query(q): Query<UserQuery>,
) -> ApiResult<Run> {
    let who = caller.user(q.user_id.as_deref())?;
    json(blocking(&state, &caller, move |mnemo| Ok(mnemo.run(&who, &id)?)).await?)
}

async fn end_run(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Query(q): Query<UserQuery>,
) -> ApiResult<api::RunEnded> {
    let who = caller.user(q.user_id.as_deref())?;
    let run = blocking(&state, &caller, move |mnemo| Ok(mnemo.end_run(&who, &id)?)).await?;
    json(api::RunEnded::from(&run))
}

/// Applies one change to the caller's run.
async fn change_run(
    state: &AppState,
    caller: &Caller,
    who: UserRef,
    id: String,
    change: RunChange,
) -> ApiResult<Run> {
    json(blocking(state, caller, move |mnemo| Ok(mnemo.change_run(&who, &id, &change)?)).await?)
}

async fn add_run_step(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    body: Result<Body<RunStepBody>, ApiError>,
) -> ApiResult<Run> {
    let Body(body) = body?;
    let who = caller.user(body.user_id.as_deref())?;
    change_run(&state, &caller, who, id, RunChange::AddStep(body.text)).await
}

async fn set_run_step(
    State(state): State<AppState>,
    caller: Caller,
    Path((id, number)): Path<(String, u32)>,
    body: Result<Body<RunStatusBody>, ApiError>,
) -> ApiResult<Run> {
    let Body(body) = body?;
    let who = caller.user(body.user_id.as_deref())?;
    let status: StepStatus = body.status.parse()?;
    change_run(&state, &caller, who, id, RunChange::SetStatus { number, status }).await
}

async fn add_run_evidence(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    body: Result<Body<RunEvidenceBody>, ApiError>,
) -> ApiResult<Run> {
    let Body(body) = body?;
    let who = caller.user(body.user_id.as_deref())?;
    let change = RunChange::AddEvidence { source_id: body.source_id, excerpt: body.excerpt };
    change_run(&state, &caller, who, id, change).await
}

async fn add_run_tool_result(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    body: Result<Body<RunToolResultBody>, ApiError>,
) -> ApiResult<Run> {
    let Body(body) = body?;
    let who = caller.user(body.user_id.as_deref())?;
    let change =
        RunChange::AddToolResult { tool: body.tool, reference: body.reference, note: body.note };
    change_run(&state, &caller, who, id, change).await
}

async fn remember(
    State(state): State<AppState>,
    caller: Caller,
    body: Result<Body<RememberBody>, ApiError>,
) -> ApiResult<api::RememberResponse> {
    let Body(body) = body?;
    let who = caller.user(body.user_id.as_deref())?;
    let response = blocking(&state, &caller, move |mnemo| {
        let now = mnemo.now();
        let expires_at = match (&body.ttl, &body.expires_at) {
            (Some(ttl), _) => Some(now.plus(mnemo::core::duration::Ttl::parse(ttl, "ttl")?)),
            (None, Some(at)) => Some(Timestamp::parse(at, "expires_at")?),
            (None, None) => None,
        };
        let source = match &body.source {
            Some(s) => Source {
                source_type: s.source_type.parse::<SourceType>()?,
                source_ref: s.source_ref.clone(),
                captured_at: now,
                extractor: None,
            },
            None => Source {
                source_type: SourceType::UserStated,
                source_ref: None,
                captured_at: now,
                extractor: None,
            },
        };
        let fields = CandidateFields {
            kind: body.kind.as_deref().map(str::parse).transpose()?,
            scope: body.scope.as_deref().map(str::parse).transpose()?,
            agent_id: body.agent_id,
            session_id: body.session_id,
            subject: body.subject,
            attribute: body.attribute,
            content: body.content,
            importance: body.importance,
            confidence: body.confidence,
            sensitive: body.sensitive,
            source: Some(source),
            expires_at,
            review_after: body
                .review_after
                .as_deref()
                .map(|at| Timestamp::parse(at, "review_after"))
                .transpose()?,
            consent: body.consent.then(|| ConsentReceipt {
                granted_at: now,
                method: "explicit_api".to_owned(),
                recorded_by: "http".to_owned(),
            }),
            metadata: body.metadata,
            restatement: if body.restate { Restatement::Explicit } else { Restatement::Not },
            ..Default::default()
        };
        let space = match (&body.space, &fields.scope) {
            (Some(space), _) => Some(space.clone()),
            (None, Some(mnemo::core::Scope::Space(space))) => Some(space.clone()),
            (None, _) => None,
        };
        let remembered = match space {
            Some(space) => mnemo.remember_in(&who, &space, fields, body.mandatory)?,
            None if body.mandatory => {
                return Err(
                    InvalidInput::new("mandatory", "applies only to a space's memory").into()
                );
            }
            None => mnemo.remember(&who, fields)?,
        };
        Ok(api::RememberResponse::from(remembered))
    })
    .await?;
    json(response)
}

async fn list(
    State(state): State<AppState>,
    caller: Caller,
    Query(q): Query<ListQuery>,
) -> ApiResult<api::MemoryList> {
    let who = caller.user(q.user_id.as_deref())?;
    // Both filters hold: a space's records have that space's scope, so another scope
    // matches none of them.
    let space: Option<mnemo::core::Scope> =
        q.space.as_deref().map(|s| format!("space:{s}").parse()).transpose()?;
    let asked: Option<mnemo::core::Scope> = q.scope.as_deref().map(str::parse).transpose()?;
    if let (Some(space), Some(asked)) = (&space, &asked)
        && space != asked
    {
        return json(api::MemoryList { memories: Vec::new() });
    }
    let scope = space.or(asked);
    let memories = blocking(&state, &caller, move |mnemo| {
        let filter = ListFilter {
            kind: q.kind.as_deref().map(str::parse).transpose()?,
            status: q.status.as_deref().map(str::parse).transpose()?,
            scope,
            include_expired: q.include_expired,
            ..Default::default()
        };
        Ok(match q.as_of {
            None => mnemo.list(&who, &filter)?,
            Some(at) => mnemo.list_as_of(&who, &filter, at)?,
        })
    })
    .await?;
    json(api::MemoryList { memories })
}

async fn get_memory(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Query(q): Query<UserQuery>,
) -> ApiResult<mnemo::core::Memory> {
    let who = caller.user(q.user_id.as_deref())?;
    json(blocking(&state, &caller, move |mnemo| Ok(mnemo.get(&who, &MemoryId(id))?)).await?)
}

async fn history(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Query(q): Query<UserQuery>,
) -> ApiResult<api::HistoryResponse> {
    let who = caller.user(q.user_id.as_deref())?;
    json(blocking(&state, &caller, move |mnemo| Ok(mnemo.history(&who, &MemoryId(id))?)).await?)
}

async fn edit(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Query(q): Query<UserQuery>,
    body: Result<Body<EditBody>, ApiError>,
) -> ApiResult<mnemo::core::Memory> {
    let Body(body) = body?;
    // The user may be named in the body or, as on the other routes of a memory, the query.
    let who = caller.user(body.user_id.as_deref().or(q.user_id.as_deref()))?;
    json(
        blocking(&state, &caller, move |mnemo| {
            Ok(mnemo.edit(&who, &MemoryId(id), &body.content)?)
        })
        .await?,
    )
}

async fn forget(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Query(q): Query<UserQuery>,
) -> ApiResult<api::ForgetResponse> {
    let who = caller.user(q.user_id.as_deref())?;
    let receipt =
        blocking(&state, &caller, move |mnemo| Ok(mnemo.forget(&who, &MemoryId(id))?)).await?;
    json(api::ForgetResponse::from(receipt))
}

async fn confirm(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Query(q): Query<UserQuery>,
) -> ApiResult<api::ConfirmResponse> {
    let who = caller.user(q.user_id.as_deref())?;
    let id = MemoryId(id);
    let confirmed = id.clone();
    let superseded = blocking(&state, &caller, move |mnemo| Ok(mnemo.confirm(&who, &id)?)).await?;
    json(api::ConfirmResponse { confirmed, superseded })
}

async fn mark_used(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Query(q): Query<UserQuery>,
) -> ApiResult<api::UsedResponse> {
    let who = caller.user(q.user_id.as_deref())?;
    let used = vec![MemoryId(id)];
    let ids = used.clone();
    let last_used_at =
        blocking(&state, &caller, move |mnemo| Ok(mnemo.mark_used(&who, &ids)?)).await?;
    json(api::UsedResponse { used, last_used_at })
}

async fn memory_tool(
    State(state): State<AppState>,
    caller: Caller,
    Query(q): Query<UserQuery>,
    body: Result<Body<mnemo::core::memory_tool::Command>, ApiError>,
) -> ApiResult<api::MemoryToolResponse> {
    let Body(command) = body?;
    let who = caller.user(q.user_id.as_deref())?;
    let answer =
        blocking(&state, &caller, move |mnemo| Ok(mnemo.memory_tool(&who, &command)?)).await?;
    json(answer.into())
}

async fn reject(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Query(q): Query<UserQuery>,
) -> ApiResult<api::RejectResponse> {
    let who = caller.user(q.user_id.as_deref())?;
    let id = MemoryId(id);
    let rejected = id.clone();
    blocking(&state, &caller, move |mnemo| Ok(mnemo.reject(&who, &id)?)).await?;
    json(api::RejectResponse { rejected })
}

async fn search(
    State(state): State<AppState>,
    caller: Caller,
    body: Result<Body<SearchBody>, ApiError>,
) -> ApiResult<api::SearchResponse> {
    let Body(body) = body?;
    let who = caller.user(body.user_id.as_deref())?;
    json(
        blocking(&state, &caller, move |mnemo| {
            let request = mnemo::SearchRequest {
                query: body.query,
                k: body.k.unwrap_or(api::DEFAULT_K),
                filter: SearchFilter {
                    kind: body.kind.as_deref().map(str::parse).transpose()?,
                    scope: body.scope.as_deref().map(str::parse).transpose()?,
                    exclude_sensitive: false,
                },
                min_relevance: body.min_relevance,
                as_of: body.as_of,
                spaces: body.spaces,
            };
            let hits = mnemo.search(&who, &request)?;
            let w = mnemo.retrieval().weights;
            Ok(api::SearchResponse::new(
                hits,
                body.explain.then_some((w.relevance, w.recency, w.importance)),
            ))
        })
        .await?,
    )
}

async fn context(
    State(state): State<AppState>,
    caller: Caller,
    body: Result<Body<ContextBody>, ApiError>,
) -> ApiResult<api::ContextResponse> {
    let Body(body) = body?;
    let who = caller.user(body.user_id.as_deref())?;
    json(
        blocking(&state, &caller, move |mnemo| {
            let name = body.tokenizer.as_deref().unwrap_or("o200k").parse()?;
            let tokenizer = mnemo::Tokenizer::new(name)?;
            let defaults = CompactionConfig::default();
            let request = mnemo::ContextRequest {
                query: body.query,
                budget: body.budget.unwrap_or(api::DEFAULT_CONTEXT_BUDGET),
                session: body.session_id,
                as_of: body.as_of,
                compaction: Some(CompactionConfig {
                    threshold_tokens: body.compact_after.unwrap_or(defaults.threshold_tokens),
                    recent_tokens: body.recent_tokens.unwrap_or(defaults.recent_tokens),
                    ..defaults
                }),
                spaces: body.spaces,
            };
            let block = mnemo.context(&who, &request, &tokenizer)?;
            Ok(api::ContextResponse::new(
                block,
                mnemo::core::context::TokenCounter::name(&tokenizer),
            ))
        })
        .await?,
    )
}

async fn ingest(
    State(state): State<AppState>,
    caller: Caller,
    body: Result<Body<IngestBody>, ApiError>,
) -> ApiResult<api::IngestResponse> {
    let Body(body) = body?;
    let who = caller.user(body.user_id.as_deref())?;
    json(
        blocking(&state, &caller, move |mnemo| {
            let options = mnemo::IngestOptions {
                session: body.session_id,
                incognito: body.incognito,
                agent_id: None,
                metadata: Default::default(),
                retention: mnemo::core::duration::Ttl::parse(
                    body.retention.as_deref().unwrap_or(mnemo::DEFAULT_RETENTION),
                    "retention",
                )?,
            };
            let report = mnemo.ingest(&who, &body.messages, &options)?;
            Ok(api::IngestResponse::from(report))
        })
        .await?,
    )
}

async fn export(
    State(state): State<AppState>,
    caller: Caller,
    Path(user_id): Path<String>,
) -> ApiResult<mnemo::core::export::ExportDocument> {
    let who = caller.user(Some(&user_id))?;
    json(blocking(&state, &caller, move |mnemo| Ok(mnemo.export(&who)?)).await?)
}

async fn import(
    State(state): State<AppState>,
    caller: Caller,
    Path(user_id): Path<String>,
    Query(q): Query<ImportQuery>,
    body: Result<Body<mnemo::core::export::ExportDocument>, ApiError>,
) -> ApiResult<api::ImportResponse> {
    caller.admin("import")?;
    let who = caller.user(Some(&user_id))?;
    let Body(document) = body?;
    if document.user_id != who.user_id() {
        // A well-formed document for another user: it conflicts with the path's user.
        return Err(ApiError::new(
            ErrorKind::Conflict,
            format!(
                "the export is user `{}`'s, not `{}`'s: import it into its own user",
                document.user_id,
                who.user_id()
            ),
        ));
    }
    let report = blocking(&state, &caller, move |mnemo| {
        Ok(mnemo.import(&who, document, q.allow_forgotten)?)
    })
    .await?;
    json(api::ImportResponse::from(report))
}

async fn expire(
    State(state): State<AppState>,
    caller: Caller,
    Query(q): Query<UserQuery>,
) -> ApiResult<api::ExpireResponse> {
    // A user key expires its own user's memories; a tenant key the whole tenant's (or one
    // user's, when named).
    let tenant = caller.0.tenant.clone();
    let user = match (&caller.0.user_id, q.user_id) {
        (Some(own), Some(asked)) if *own != asked => {
            return Err(ApiError::new(ErrorKind::Forbidden, "this key acts only for its own user"));
        }
        (Some(own), _) => Some(own.clone()),
        (None, Some(asked)) => Some(asked),
        (None, None) => {
            caller.admin("expiring the whole tenant")?;
            None
        }
    };
    let expired =
        blocking(&state, &caller, move |mnemo| Ok(mnemo.expire(&tenant, user.as_deref())?)).await?;
    json(api::ExpireResponse { expired })
}

async fn forget_all(
    State(state): State<AppState>,
    caller: Caller,
    Path(user_id): Path<String>,
) -> ApiResult<api::ForgetAllResponse> {
    let who = caller.user_to_erase(Some(&user_id))?;
    let receipt = blocking(&state, &caller, move |mnemo| Ok(mnemo.forget_all(&who)?)).await?;
    json(api::ForgetAllResponse::from(receipt))
}

/// Receipts of the user's deletions, newest first.
async fn deletions(
    State(state): State<AppState>,
    caller: Caller,
    Path(user_id): Path<String>,
    Query(q): Query<DeletionsQuery>,
) -> ApiResult<api::DeletionsResponse> {
    let who = caller.user(Some(&user_id))?;
    let limit = q.limit.unwrap_or(100);
    let deletions =
        blocking(&state, &caller, move |mnemo| Ok(mnemo.deletions(&who, limit)?)).await?;
    json(api::DeletionsResponse { deletions })
}

/// `POST /v1/keys`: an admin key of a tenant creates another key of that tenant.
async fn create_key(
    State(state): State<AppState>,
    caller: Caller,
    body: Result<Body<KeyCreateBody>, ApiError>,
) -> ApiResult<api::KeyCreated> {
    let Body(body) = body?;
    caller.admin("creating keys")?;
    let tenant = caller.0.tenant.clone();
    let (key, record) = blocking(&state, &caller, move |mnemo| {
        Ok(mnemo.create_key(&tenant, body.user_id.as_deref(), body.admin, body.rate)?)
    })
    .await?;
    json(api::KeyCreated { record, key })
}

/// `GET /v1/keys`: the tenant's keys, for an admin key.
async fn list_keys(State(state): State<AppState>, caller: Caller) -> ApiResult<api::KeyList> {
    caller.admin("listing keys")?;
    let tenant = caller.0.tenant.clone();
    let keys = blocking(&state, &caller, move |mnemo| Ok(mnemo.list_keys(&tenant)?)).await?;
    json(api::KeyList { keys })
}

/// `DELETE /v1/keys/{id}`: revokes a key of the tenant, for an admin key.
async fn revoke_key(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<api::KeyRevoked> {
    caller.admin("revoking keys")?;
    let tenant = caller.0.tenant.clone();
    let revoked = id.clone();
    blocking(&state, &caller, move |mnemo| Ok(mnemo.revoke_key(&tenant, &id)?)).await?;
    json(api::KeyRevoked { revoked })
}

async fn settings(
    State(state): State<AppState>,
    caller: Caller,
    Path(user_id): Path<String>,
) -> ApiResult<api::SettingsResponse> {
    let who = caller.user(Some(&user_id))?;
    let user = who.user_id().to_owned();
    let settings = blocking(&state, &caller, move |mnemo| Ok(mnemo.settings(&who)?)).await?;
    json(api::SettingsResponse { user_id: user, memory_enabled: settings.memory_enabled })
}

async fn set_settings(
    State(state): State<AppState>,
    caller: Caller,
    Path(user_id): Path<String>,
    body: Result<Body<SettingsBody>, ApiError>,
) -> ApiResult<api::SettingsResponse> {
    let Body(body) = body?;
    let who = caller.user(Some(&user_id))?;
    let user = who.user_id().to_owned();
    blocking(&state, &caller, move |mnemo| {
        Ok(mnemo.set_settings(&who, UserSettings { memory_enabled: body.memory_enabled })?)
    })
    .await?;
    json(api::SettingsResponse { user_id: user, memory_enabled: body.memory_enabled })
}

async fn pending(
    State(state): State<AppState>,
    caller: Caller,
    Path(user_id): Path<String>,
) -> ApiResult<api::MemoryList> {
    let who = caller.user(Some(&user_id))?;
    let memories = blocking(&state, &caller, move |mnemo| Ok(mnemo.pending(&who)?)).await?;
    json(api::MemoryList { memories })
}

/// Active memories past their review date that the user may re-confirm (their own and those
/// of the spaces they maintain), most overdue first.
async fn overdue(
    State(state): State<AppState>,
    caller: Caller,
    Path(user_id): Path<String>,
) -> ApiResult<api::MemoryList> {
    let who = caller.user(Some(&user_id))?;
    let memories = blocking(&state, &caller, move |mnemo| Ok(mnemo.overdue_reviews(&who)?)).await?;
    json(api::MemoryList { memories })
}

async fn audit(
    State(state): State<AppState>,
    caller: Caller,
    Path(user_id): Path<String>,
) -> ApiResult<api::AuditResponse> {
    let who = caller.user(Some(&user_id))?;
    let entries = blocking(&state, &caller, move |mnemo| Ok(mnemo.audit(&who, 200)?)).await?;
    json(api::AuditResponse { entries })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn calls_at_once_are_eight_per_core_unless_set() {
        let dir = tempfile::tempdir().expect("temporary directory");
        let clock = Arc::new(mnemo::SystemClock);
        let mnemo =
            Mnemo::open_sqlite(&dir.path().join("calls.db"), None, clock, "http").expect("store");
        assert!(mnemo.calls_in_process());
        let cores = std::thread::available_parallelism().map_or(2, std::num::NonZeroUsize::get);
        assert_eq!(crate::Limits::default().calls_at_once_for(&mnemo), 8 * cores);
        let set = |calls| crate::Limits { calls_at_once: Some(calls), ..Default::default() };
        assert_eq!(set(3).calls_at_once_for(&mnemo), 3);
        assert_eq!(set(0).calls_at_once_for(&mnemo), 1);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn no_more_library_calls_run_at_once_than_there_are_slots() {
        let dir = tempfile::tempdir().expect("temporary directory");
        let mnemo = Mnemo::open_sqlite(
            &dir.path().join("calls.db"),
            None,
            Arc::new(mnemo::SystemClock),
            "http",
        )
        .expect("store");
        let limit = crate::RateLimit { burst: 1000.0, per_second: 1000.0 };
        let state = AppState::new(mnemo, limit).with_calls_at_once(2);
        let (running, most) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let calls: Vec<_> = (0..8)
            .map(|_| {
                let (state, running, most) =
                    (state.clone(), Arc::clone(&running), Arc::clone(&most));
                tokio::spawn(async move {
                    on_call_thread(&state, move || {
                        let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                        most.fetch_max(now, Ordering::SeqCst);
                        std::thread::sleep(std::time::Duration::from_millis(20));
                        running.fetch_sub(1, Ordering::SeqCst);
                    })
                    .await
                })
            })
            .collect();
        for call in calls {
            assert!(call.await.expect("task").is_ok());
        }
        assert_eq!(most.load(Ordering::SeqCst), 2, "two slots, eight calls");
    }
}
