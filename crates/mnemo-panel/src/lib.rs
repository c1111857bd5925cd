//! The memory panel (SPEC §5, §7): "What this assistant remembers", server-rendered HTML
//! that lets a person see, search, correct, confirm, forget, switch off, export and import
//! what mnemo keeps about them. It is a front end of the library like the CLI and the HTTP
//! API: every page calls the same operations, under the same gate, isolation and deletion
//! rules, for the one user its session is bound to.
//!
//! Sign-in is a one-time link (`mnemo panel --user U` prints one) or a user key; either
//! starts a session whose cookie is `HttpOnly` and `SameSite=Strict`, and every form carries
//! the session's CSRF token. Pages work without JavaScript, load nothing from elsewhere (a
//! `Content-Security-Policy` forbids it), and every asset is compiled in.

mod sessions;
mod views;

use std::collections::HashMap;
use std::sync::Arc;

use askama::Template;
use axum::Router;
use axum::extract::{Form, Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use mnemo::core::policy::{ReasonCode, UserSettings};
use mnemo::core::ports::{ListFilter, SearchFilter};
use mnemo::core::space::Role;
use mnemo::core::{ErrorKind, Kind, Memory, MemoryId, Scope, Status, UserRef};
use mnemo::{Mnemo, SearchRequest};
use serde::Deserialize;

use sessions::{Session, Sessions};
use views::{Entry, Receipt};

/// What the panel's handlers share: the notebook (its audit entries name the channel
/// `panel`) and the signed-in sessions, which last as long as this value.
#[derive(Clone)]
pub struct Panel {
    mnemo: Arc<Mnemo>,
    sessions: Arc<Sessions>,
}

impl Panel {
    /// The panel over `mnemo`, with no one signed in.
    pub fn new(mnemo: &Mnemo) -> Self {
        Self { mnemo: Arc::new(mnemo.acting_as("panel")), sessions: Arc::new(Sessions::default()) }
    }
}

impl std::fmt::Debug for Panel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Panel").finish_non_exhaustive()
    }
}

/// The panel's routes under `/panel`.
pub fn router(state: Panel) -> Router {
    Router::new()
        .route("/panel", get(notebook))
        .route("/panel/panel.css", get(stylesheet))
        .route("/panel/signin", get(sign_in_link).post(sign_in_with_key))
        .route("/panel/signout", post(sign_out))
        .route("/panel/memories/{id}", get(memory))
        .route("/panel/memories/{id}/edit", post(edit))
        .route("/panel/memories/{id}/confirm", post(confirm))
        .route("/panel/memories/{id}/reject", post(reject))
        .route("/panel/memories/{id}/forget", post(forget))
        .route("/panel/conversations/{session}/forget", post(forget_conversation))
        .route("/panel/forget-all", post(forget_all))
        .route("/panel/control", get(control))
        .route("/panel/control/memory", post(switch_memory))
        .route("/panel/export", get(export))
        .route("/panel/import", post(import))
        .route("/panel/activity", get(activity))
        .layer(axum::middleware::map_response(secure_headers))
        .with_state(state)
}

/// Every page: nothing loads from elsewhere, no framing, no caching, no sniffing.
async fn secure_headers(mut response: Response) -> Response {
    let headers = response.headers_mut();
    for (name, value) in [
        (
            "content-security-policy",
            "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; \
             frame-ancestors 'none'; base-uri 'none'",
        ),
        ("x-content-type-options", "nosniff"),
        ("x-frame-options", "DENY"),
        ("referrer-policy", "no-referrer"),
        ("cache-control", "no-store"),
    ] {
        headers.insert(name, HeaderValue::from_static(value));
    }
    response
}

async fn stylesheet() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "text/css; charset=utf-8")], include_str!("../assets/panel.css"))
}

/// A page answered instead of the one asked for (sign in first, not found, not allowed).
struct Refused(Box<Response>);

impl From<Response> for Refused {
    fn from(response: Response) -> Self {
        Self(Box::new(response))
    }
}

impl IntoResponse for Refused {
    fn into_response(self) -> Response {
        *self.0
    }
}

/// A page, or why there is none.
type Page = Result<Response, Refused>;

fn html(template: &impl Template) -> Response {
    match template.render() {
        Ok(body) => ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], body).into_response(),
        Err(_) => {
            (StatusCode::INTERNAL_SERVER_ERROR, "the page could not be rendered").into_response()
        }
    }
}

#[derive(Template)]
#[template(path = "message.html")]
struct MessagePage<'a> {
    user: Option<String>,
    csrf: Option<String>,
    heading: &'a str,
    message: String,
    class: &'a str,
    back: &'a str,
    back_label: &'a str,
}

/// A page that says what went wrong, with the status it has.
fn problem(
    session: Option<&Session>,
    status: StatusCode,
    heading: &str,
    message: String,
) -> Response {
    let page = MessagePage {
        user: session.map(|s| s.who.user_id().to_owned()),
        csrf: session.map(|s| s.csrf.clone()),
        heading,
        message,
        class: "error",
        back: if session.is_some() { "/panel" } else { "/panel/signin" },
        back_label: if session.is_some() { "Back to the notebook" } else { "Sign in" },
    };
    (status, html(&page)).into_response()
}

/// A library error as a page: a memory of someone else reads exactly as a made-up one.
fn failed(session: &Session, error: &mnemo::Error) -> Response {
    let (status, heading) = match error.kind() {
        ErrorKind::NotFound => (StatusCode::NOT_FOUND, "Not found"),
        ErrorKind::InvalidInput => (StatusCode::BAD_REQUEST, "Not accepted"),
        ErrorKind::Conflict => (StatusCode::CONFLICT, "Not changed"),
        ErrorKind::Forbidden => (StatusCode::FORBIDDEN, "Not allowed"),
        ErrorKind::Internal => {
            return problem(
                Some(session),
                StatusCode::INTERNAL_SERVER_ERROR,
                "Something went wrong",
                "Nothing was changed. Try again later.".to_owned(),
            );
        }
        _ => (StatusCode::SERVICE_UNAVAILABLE, "Not now"),
    };
    problem(Some(session), status, heading, error.to_string())
}

/// The session a request belongs to, or a redirect to sign in.
fn signed_in(panel: &Panel, headers: &HeaderMap) -> Result<Session, Refused> {
    sessions::cookie_of(headers)
        .and_then(|id| panel.sessions.find(&id))
        .ok_or_else(|| Redirect::to("/panel/signin").into_response().into())
}

/// The session of a form's request, when the form carries its CSRF token; otherwise
/// nothing is done.
fn signed_form(panel: &Panel, headers: &HeaderMap, csrf: &str) -> Result<Session, Refused> {
    let session = signed_in(panel, headers)?;
    if sessions::same_token(&session.csrf, csrf) {
        Ok(session)
    } else {
        Err(problem(
            Some(&session),
            StatusCode::FORBIDDEN,
            "Form expired",
            "This form did not come from this session, so nothing was changed. Reload the page \
             and try again."
                .to_owned(),
        )
        .into())
    }
}

/// Runs a library call off the async executor.
async fn call<T: Send + 'static>(
    panel: &Panel,
    session: &Session,
    work: impl FnOnce(&Mnemo, &UserRef) -> mnemo::Result<T> + Send + 'static,
) -> Result<T, Refused> {
    let mnemo = Arc::clone(&panel.mnemo);
    let who = session.who.clone();
    match tokio::task::spawn_blocking(move || work(&mnemo, &who)).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(error)) => Err(failed(session, &error).into()),
        Err(_) => Err(failed(
            session,
            &mnemo::Error::Port(mnemo::core::ports::PortError::new(
                ErrorKind::Internal,
                "panicked",
            )),
        )
        .into()),
    }
}

fn see_other(to: &str) -> Response {
    Redirect::to(to).into_response()
}

#[derive(Deserialize)]
struct LinkQuery {
    #[serde(default)]
    token: Option<String>,
}

#[derive(Template)]
#[template(path = "signin.html")]
struct SignInPage {
    user: Option<String>,
    csrf: Option<String>,
    problem: Option<String>,
}

/// Whether the browser reached the panel over TLS (a proxy in front says so).
fn over_tls(headers: &HeaderMap) -> bool {
    headers.get("x-forwarded-proto").and_then(|v| v.to_str().ok()) == Some("https")
}

/// Starts a session for `who` and goes to the notebook.
fn start(panel: &Panel, headers: &HeaderMap, who: UserRef) -> Response {
    let id = panel.sessions.start(who);
    let mut response = see_other("/panel");
    if let Ok(cookie) = HeaderValue::from_str(&sessions::set_cookie(&id, over_tls(headers))) {
        response.headers_mut().insert(header::SET_COOKIE, cookie);
    }
    response
}

/// `GET /panel/signin?token=…`: a one-time link signs in once; without one, the key form.
async fn sign_in_link(
    State(panel): State<Panel>,
    headers: HeaderMap,
    Query(query): Query<LinkQuery>,
) -> Response {
    let Some(token) = query.token else {
        return html(&SignInPage { user: None, csrf: None, problem: None });
    };
    let mnemo = Arc::clone(&panel.mnemo);
    let redeemed = tokio::task::spawn_blocking(move || mnemo.redeem_sign_in(&token)).await;
    match redeemed {
        Ok(Ok(Some(who))) => start(&panel, &headers, who),
        _ => sign_in_refused(
            StatusCode::FORBIDDEN,
            "This sign-in link does not work: it was used already, has expired, or was never \
             made. Ask for a new one.",
        ),
    }
}

/// The sign-in page saying why signing in failed.
fn sign_in_refused(status: StatusCode, problem: &str) -> Response {
    let page = SignInPage { user: None, csrf: None, problem: Some(problem.to_owned()) };
    (status, html(&page)).into_response()
}

#[derive(Deserialize)]
struct KeyForm {
    key: String,
}

/// `POST /panel/signin`: a user key signs its user in (a tenant key acts for no one user).
async fn sign_in_with_key(
    State(panel): State<Panel>,
    headers: HeaderMap,
    Form(form): Form<KeyForm>,
) -> Response {
    let mnemo = Arc::clone(&panel.mnemo);
    let key = form.key.trim().to_owned();
    let principal = tokio::task::spawn_blocking(move || mnemo.authenticate(&key)).await;
    if let Ok(Ok(Some(principal))) = principal
        && let Some(who) =
            principal.user_id.and_then(|user| UserRef::new(&principal.tenant, &user).ok())
    {
        return start(&panel, &headers, who);
    }
    sign_in_refused(
        StatusCode::UNAUTHORIZED,
        "That is not a user key. Use the key made for you, or a sign-in link.",
    )
}

#[derive(Deserialize)]
struct CsrfForm {
    csrf: String,
}

async fn sign_out(
    State(panel): State<Panel>,
    headers: HeaderMap,
    Form(form): Form<CsrfForm>,
) -> Page {
    signed_form(&panel, &headers, &form.csrf)?;
    if let Some(id) = sessions::cookie_of(&headers) {
        panel.sessions.end(&id);
    }
    let mut response = see_other("/panel/signin");
    if let Ok(cookie) = HeaderValue::from_str(&sessions::clear_cookie()) {
        response.headers_mut().insert(header::SET_COOKIE, cookie);
    }
    Ok(response)
}

#[derive(Deserialize, Default)]
struct NotebookQuery {
    #[serde(default)]
    q: String,
    #[serde(default)]
    kind: String,
    #[serde(default)]
    status: String,
    #[serde(default)]
    scope: String,
}

#[derive(Template)]
#[template(path = "notebook.html")]
struct NotebookPage {
    user: Option<String>,
    csrf: Option<String>,
    token: String,
    memory_on: bool,
    query: String,
    kind: String,
    status: String,
    scope: String,
    kinds: Vec<&'static str>,
    statuses: Vec<&'static str>,
    scopes: Vec<String>,
    results: Option<Vec<Entry>>,
    pending: Vec<Entry>,
    groups: Vec<views::Group>,
}

/// The spaces the user is a member of: their role and how many members each has.
fn spaces_of(mnemo: &Mnemo, who: &UserRef) -> mnemo::Result<HashMap<String, (Role, usize)>> {
    let mut spaces = HashMap::new();
    for (space, role) in mnemo.memberships(who)? {
        let members = mnemo.members(who.tenant(), &space.id)?.len();
        spaces.insert(space.id, (role, members));
    }
    Ok(spaces)
}

/// What a filter field asks for (`None` for any).
fn chosen<T: std::str::FromStr<Err = mnemo::core::error::InvalidInput>>(
    text: &str,
) -> mnemo::Result<Option<T>> {
    Ok(if text.is_empty() { None } else { Some(text.parse()?) })
}

/// `GET /panel`: the notebook by group, what waits for confirmation, and a search.
async fn notebook(
    State(panel): State<Panel>,
    headers: HeaderMap,
    Query(query): Query<NotebookQuery>,
) -> Page {
    let session = signed_in(&panel, &headers)?;
    let q = query.q.trim().to_owned();
    let (kind, status, scope) = (query.kind.clone(), query.status.clone(), query.scope.clone());
    let filtered = !(kind.is_empty() && status.is_empty() && scope.is_empty());
    let (memory_on, spaces, listed, pending, results) =
        call(&panel, &session, move |mnemo, who| {
            let spaces = spaces_of(mnemo, who)?;
            let filter = ListFilter {
                kind: chosen::<Kind>(&kind)?,
                status: chosen::<Status>(&status)?.or(Some(Status::Active)),
                scope: chosen::<Scope>(&scope)?,
                ..Default::default()
            };
            let listed = mnemo.list(who, &filter)?;
            let pending = if filtered { Vec::new() } else { mnemo.pending_with_reasons(who)? };
            let results = if q.is_empty() {
                None
            } else {
                let request = SearchRequest {
                    query: q,
                    k: 20,
                    filter: SearchFilter {
                        kind: filter.kind,
                        scope: filter.scope,
                        ..Default::default()
                    },
                    min_relevance: None,
                    as_of: None,
                    spaces: None,
                };
                Some(mnemo.search(who, &request)?.into_iter().map(|h| h.memory).collect::<Vec<_>>())
            };
            Ok((mnemo.settings(who)?.memory_enabled, spaces, listed, pending, results))
        })
        .await?;
    let entries: Vec<Entry> = listed.iter().map(|m| Entry::of(m, None, &spaces)).collect();
    let mut scopes = vec!["user".to_owned()];
    scopes.extend(spaces.keys().map(|id| format!("space:{id}")));
    scopes.sort();
    let page = NotebookPage {
        user: Some(session.who.user_id().to_owned()),
        csrf: Some(session.csrf.clone()),
        token: session.csrf.clone(),
        memory_on,
        query: query.q,
        kind: query.kind,
        status: query.status,
        scope: query.scope,
        kinds: Kind::ALL.iter().map(|k| k.as_str()).collect(),
        statuses: Status::ALL.iter().map(|s| s.as_str()).collect(),
        scopes,
        results: results.map(|found| found.iter().map(|m| Entry::of(m, None, &spaces)).collect()),
        pending: pending.iter().map(|(m, why)| Entry::of(m, *why, &spaces)).collect(),
        groups: views::groups(entries, &listed),
    };
    Ok(html(&page))
}

#[derive(Template)]
#[template(path = "memory.html")]
struct MemoryPage {
    user: Option<String>,
    csrf: Option<String>,
    token: String,
    entry: Entry,
    version: u32,
    /// (version, replaced on, text), newest first.
    versions: Vec<(u32, String, String)>,
    /// (replaced on, text).
    superseded: Vec<(String, String)>,
    session: Option<String>,
}

/// `GET /panel/memories/{id}`: one memory, its history, and what can be done with it.
async fn memory(State(panel): State<Panel>, headers: HeaderMap, Path(id): Path<String>) -> Page {
    let session = signed_in(&panel, &headers)?;
    let (history, held, spaces) = call(&panel, &session, move |mnemo, who| {
        let id = MemoryId(id);
        let history = mnemo.history(who, &id)?;
        let held: Option<ReasonCode> = if history.memory.status == Status::Pending {
            mnemo
                .pending_with_reasons(who)?
                .into_iter()
                .find(|(m, _)| m.id == id)
                .and_then(|(_, r)| r)
        } else {
            None
        };
        Ok((history, held, spaces_of(mnemo, who)?))
    })
    .await?;
    let memory: &Memory = &history.memory;
    let page = MemoryPage {
        user: Some(session.who.user_id().to_owned()),
        csrf: Some(session.csrf.clone()),
        token: session.csrf.clone(),
        entry: Entry::of(memory, held, &spaces),
        version: memory.version,
        versions: history
            .versions
            .iter()
            .rev()
            .map(|v| (v.version, views::day(v.replaced_at), v.content.clone()))
            .collect(),
        superseded: history
            .superseded
            .iter()
            .map(|m| (views::day(m.updated_at), m.content.clone()))
            .collect(),
        session: memory.session_id.clone().filter(|_| !matches!(memory.scope, Scope::Space(_))),
    };
    Ok(html(&page))
}

#[derive(Deserialize)]
struct EditForm {
    csrf: String,
    content: String,
}

async fn edit(
    State(panel): State<Panel>,
    headers: HeaderMap,
    Path(id): Path<String>,
    Form(form): Form<EditForm>,
) -> Page {
    let session = signed_form(&panel, &headers, &form.csrf)?;
    let target = format!("/panel/memories/{id}");
    call(&panel, &session, move |mnemo, who| {
        mnemo.edit_as(who, &MemoryId(id), &form.content, mnemo::core::SourceType::UserAction)
    })
    .await?;
    Ok(see_other(&target))
}

async fn confirm(
    State(panel): State<Panel>,
    headers: HeaderMap,
    Path(id): Path<String>,
    Form(form): Form<CsrfForm>,
) -> Page {
    review(&panel, &headers, &form, move |mnemo, who| mnemo.confirm(who, &MemoryId(id)).map(drop))
        .await
}

async fn reject(
    State(panel): State<Panel>,
    headers: HeaderMap,
    Path(id): Path<String>,
    Form(form): Form<CsrfForm>,
) -> Page {
    review(&panel, &headers, &form, move |mnemo, who| mnemo.reject(who, &MemoryId(id))).await
}

/// Settles a pending memory with `decision`, then back to the notebook.
async fn review(
    panel: &Panel,
    headers: &HeaderMap,
    form: &CsrfForm,
    decision: impl FnOnce(&Mnemo, &UserRef) -> mnemo::Result<()> + Send + 'static,
) -> Page {
    let session = signed_form(panel, headers, &form.csrf)?;
    call(panel, &session, decision).await?;
    Ok(see_other("/panel"))
}

#[derive(Template)]
#[template(path = "receipt.html")]
struct ReceiptPage {
    user: Option<String>,
    csrf: Option<String>,
    receipt: Receipt,
}

fn receipt_page(session: &Session, receipt: &mnemo::core::ledger::DeletionReceipt) -> Response {
    html(&ReceiptPage {
        user: Some(session.who.user_id().to_owned()),
        csrf: Some(session.csrf.clone()),
        receipt: Receipt::of(receipt),
    })
}

async fn forget(
    State(panel): State<Panel>,
    headers: HeaderMap,
    Path(id): Path<String>,
    Form(form): Form<CsrfForm>,
) -> Page {
    let session = signed_form(&panel, &headers, &form.csrf)?;
    let receipt =
        call(&panel, &session, move |mnemo, who| mnemo.forget(who, &MemoryId(id))).await?;
    Ok(receipt_page(&session, &receipt))
}

/// Forgets every record of one conversation (its turns, and with them what was drawn from
/// them), in one deletion.
async fn forget_conversation(
    State(panel): State<Panel>,
    headers: HeaderMap,
    Path(conversation): Path<String>,
    Form(form): Form<CsrfForm>,
) -> Page {
    let session = signed_form(&panel, &headers, &form.csrf)?;
    let receipt = call(&panel, &session, move |mnemo, who| {
        let filter = ListFilter {
            session: Some(conversation.clone()),
            include_expired: true,
            ..Default::default()
        };
        let ids: Vec<MemoryId> = mnemo.list(who, &filter)?.into_iter().map(|m| m.id).collect();
        mnemo.forget_each(who, &ids)?.ok_or(mnemo::Error::SessionNotFound(conversation))
    })
    .await?;
    Ok(receipt_page(&session, &receipt))
}

#[derive(Deserialize)]
struct ForgetAllForm {
    csrf: String,
    #[serde(default)]
    confirm: String,
}

async fn forget_all(
    State(panel): State<Panel>,
    headers: HeaderMap,
    Form(form): Form<ForgetAllForm>,
) -> Page {
    let session = signed_form(&panel, &headers, &form.csrf)?;
    if form.confirm != "yes" {
        return Err(problem(
            Some(&session),
            StatusCode::BAD_REQUEST,
            "Not confirmed",
            "Tick the box to say you want everything forgotten; nothing was deleted.".to_owned(),
        )
        .into());
    }
    let receipt = call(&panel, &session, |mnemo, who| mnemo.forget_all(who)).await?;
    Ok(receipt_page(&session, &receipt))
}

#[derive(Template)]
#[template(path = "control.html")]
struct ControlPage {
    user: Option<String>,
    csrf: Option<String>,
    token: String,
    memory_on: bool,
}

async fn control(State(panel): State<Panel>, headers: HeaderMap) -> Page {
    let session = signed_in(&panel, &headers)?;
    let settings = call(&panel, &session, |mnemo, who| mnemo.settings(who)).await?;
    Ok(html(&ControlPage {
        user: Some(session.who.user_id().to_owned()),
        csrf: Some(session.csrf.clone()),
        token: session.csrf.clone(),
        memory_on: settings.memory_enabled,
    }))
}

#[derive(Deserialize)]
struct SwitchForm {
    csrf: String,
    memory: String,
}

async fn switch_memory(
    State(panel): State<Panel>,
    headers: HeaderMap,
    Form(form): Form<SwitchForm>,
) -> Page {
    let session = signed_form(&panel, &headers, &form.csrf)?;
    let memory_enabled = match form.memory.as_str() {
        "on" => true,
        "off" => false,
        other => {
            return Err(problem(
                Some(&session),
                StatusCode::BAD_REQUEST,
                "Not accepted",
                format!("memory can be switched on or off, not `{other}`"),
            )
            .into());
        }
    };
    call(&panel, &session, move |mnemo, who| {
        mnemo.set_settings(who, UserSettings { memory_enabled })
    })
    .await?;
    Ok(see_other("/panel/control"))
}

/// `GET /panel/export`: everything kept about the user, as the JSON document `mnemo export`
/// writes, for download.
async fn export(State(panel): State<Panel>, headers: HeaderMap) -> Page {
    let session = signed_in(&panel, &headers)?;
    let document = call(&panel, &session, |mnemo, who| mnemo.export(who)).await?;
    let body = serde_json::to_string_pretty(&document).map_err(|_| {
        problem(
            Some(&session),
            StatusCode::INTERNAL_SERVER_ERROR,
            "Not exported",
            "the export could not be written".into(),
        )
    })?;
    let name = format!(
        "attachment; filename=\"mnemo-{}.json\"",
        session.who.user_id().replace(|c: char| !c.is_ascii_alphanumeric(), "_")
    );
    let mut response = ([(header::CONTENT_TYPE, "application/json")], body).into_response();
    if let Ok(value) = HeaderValue::from_str(&name) {
        response.headers_mut().insert(header::CONTENT_DISPOSITION, value);
    }
    Ok(response)
}

#[derive(Deserialize)]
struct ImportForm {
    csrf: String,
    document: String,
}

async fn import(
    State(panel): State<Panel>,
    headers: HeaderMap,
    Form(form): Form<ImportForm>,
) -> Page {
    let session = signed_form(&panel, &headers, &form.csrf)?;
    let report = call(&panel, &session, move |mnemo, who| {
        let document = serde_json::from_str(&form.document).map_err(|e| {
            mnemo::core::error::InvalidInput::new("document", format!("is not an export: {e}"))
        })?;
        mnemo.import(who, document, false)
    })
    .await?;
    let page = MessagePage {
        user: Some(session.who.user_id().to_owned()),
        csrf: Some(session.csrf.clone()),
        heading: "Imported",
        message: format!(
            "{} memories restored; {} left out because you had asked to forget them; {} refused; {} waiting for your confirmation.",
            report.imported,
            report.forgotten.len(),
            report.refused.len(),
            report.held.len()
        ),
        class: "notice",
        back: "/panel",
        back_label: "Back to the notebook",
    };
    Ok(html(&page))
}

#[derive(Template)]
#[template(path = "activity.html")]
struct ActivityPage {
    user: Option<String>,
    csrf: Option<String>,
    timeline: String,
    lines: Vec<String>,
}

/// `GET /panel/activity`: the audit trail in plain words, and the weekly timeline.
async fn activity(State(panel): State<Panel>, headers: HeaderMap) -> Page {
    let session = signed_in(&panel, &headers)?;
    let (memories, audit, now) = call(&panel, &session, |mnemo, who| {
        let every = ListFilter { include_expired: true, ..Default::default() };
        Ok((mnemo.list(who, &every)?, mnemo.audit(who, 500)?, mnemo.now()))
    })
    .await?;
    let texts: HashMap<String, String> =
        memories.iter().map(|m| (m.id.0.clone(), m.content.clone())).collect();
    Ok(html(&ActivityPage {
        user: Some(session.who.user_id().to_owned()),
        csrf: Some(session.csrf.clone()),
        timeline: views::timeline(&memories, &audit, now, 12),
        lines: audit.iter().map(|e| views::activity_line(e, &texts)).collect(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tls_is_read_from_the_proxy_in_front() {
        let mut headers = HeaderMap::new();
        assert!(!over_tls(&headers));
        headers.insert("x-forwarded-proto", HeaderValue::from_static("https"));
        assert!(over_tls(&headers));
        headers.insert("x-forwarded-proto", HeaderValue::from_static("http"));
        assert!(!over_tls(&headers));
    }
}
