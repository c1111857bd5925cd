//! mnemo's HTTP API: `router(state)` serves JSON REST under `/v1` and `/healthz`, and the
//! memory panel's pages under `/panel` (`mnemo-panel`).
//!
//! Every request carries `Authorization: Bearer <key>`. A tenant key acts for any user of its
//! tenant (naming one with `user_id`); a user key only for its own user (403 otherwise). The
//! handlers call the same library operations as the CLI, on the server's call threads
//! (`calls.rs`, at most [`Limits::calls_at_once`] at a time), and every error is JSON
//! `{"code","message"}` from `mnemo_api`'s one table.

mod calls;
mod limits;
mod mem0;
mod metrics;
mod routes;
mod spaces;

pub use limits::{FAILED_AUTH_LIMIT, RateLimit};

use std::sync::Arc;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use mnemo::Mnemo;

/// Largest request body accepted, in bytes.
pub const MAX_BODY_BYTES: usize = 1024 * 1024;

/// What every handler shares.
#[derive(Clone)]
pub struct AppState {
    /// The notebook.
    pub mnemo: Arc<Mnemo>,
    limiter: Arc<limits::Limiter>,
    /// Failed authentications per client address.
    failed_auth: Arc<limits::Limiter>,
    metrics: Arc<metrics::Metrics>,
    /// Set when a write failed for want of storage, cleared by the next write that succeeds:
    /// `/healthz` says the server is degraded meanwhile.
    storage_full: Arc<std::sync::atomic::AtomicBool>,
    /// The memory panel, with its signed-in sessions.
    panel: mnemo_panel::Panel,
    /// The threads library calls run on ([`Limits::calls_at_once`] of them at most).
    calls: Arc<calls::Calls>,
}

impl AppState {
    /// State for a notebook with a per-key rate limit (a key created with its own rate gets
    /// that instead), and failed authentications limited per client address
    /// ([`limits::FAILED_AUTH_LIMIT`]).
    pub fn new(mnemo: Mnemo, limit: RateLimit) -> Self {
        let calls = Limits::default().calls_at_once_for(&mnemo);
        Self {
            panel: mnemo_panel::Panel::new(&mnemo),
            calls: Arc::new(calls::Calls::new(calls)),
            mnemo: Arc::new(mnemo),
            limiter: Arc::new(limits::Limiter::new(limit)),
            failed_auth: Arc::new(limits::Limiter::new(limits::FAILED_AUTH_LIMIT)),
            metrics: Arc::new(metrics::Metrics::default()),
            storage_full: Arc::new(std::sync::atomic::AtomicBool::new(false)),
        }
    }

    /// The same with another number of library calls run at once ([`Limits::calls_at_once`],
    /// at least 1); [`serve`] sets it from its limits.
    pub fn with_calls_at_once(mut self, calls: usize) -> Self {
        self.calls = Arc::new(calls::Calls::new(calls));
        self
    }

    /// The same with another allowance of failed authentications per client address.
    pub fn with_failed_auth_limit(mut self, limit: RateLimit) -> Self {
        self.failed_auth = Arc::new(limits::Limiter::new(limit));
        self
    }
}

/// The HTTP API.
pub fn router(state: AppState) -> Router {
    let mcp = Router::new()
        // MCP tools' audit entries name their channel.
        .nest_service("/mcp", mnemo_mcp::http_service(Arc::new(state.mnemo.acting_as("mcp"))))
        .layer(axum::middleware::from_fn_with_state(state.clone(), routes::mcp_auth));
    let panel = mnemo_panel::router(state.panel.clone());
    routes::routes()
        .merge(mem0::routes())
        .merge(mcp)
        .with_state(state.clone())
        .merge(panel)
        .fallback(routes::no_such_route)
        .method_not_allowed_fallback(routes::method_not_allowed)
        .layer(axum::middleware::from_fn_with_state(state, routes::track))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(tower_http::catch_panic::CatchPanicLayer::new())
}

/// Limits that keep the server answering under idle, slow or too many connections.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Connections served at once; one more is answered 503 with `Retry-After` and closed.
    pub max_connections: usize,
    /// How long a client may take to send a request's headers (on a new connection, and for
    /// each request on a kept-alive one) before the connection is closed.
    pub header_timeout: std::time::Duration,
    /// Library calls (searches, writes, reads of the store, authentications) run at once,
    /// each on one of as many threads the server keeps for them; a request past them waits
    /// its turn without a thread of its own. `None`: eight per core when calls use only this
    /// machine ([`Mnemo::calls_in_process`]), 512 (as many as Tokio's blocking pool has) when
    /// they may wait on an embedding service or a chat model. A few more at once than there
    /// are cores keep every core busy and a write batch full; hundreds at once only switch
    /// between each other.
    pub calls_at_once: Option<usize>,
}

/// Calls at once when they may wait on a service: as many as Tokio's blocking pool has
/// threads by default.
const BLOCKING_POOL_THREADS: usize = 512;

impl Limits {
    /// [`Limits::calls_at_once`] for this notebook.
    pub fn calls_at_once_for(&self, mnemo: &Mnemo) -> usize {
        let cores = std::thread::available_parallelism().map_or(2, std::num::NonZeroUsize::get);
        match self.calls_at_once {
            Some(calls) => calls.max(1),
            None if mnemo.calls_in_process() => 8 * cores,
            None => BLOCKING_POOL_THREADS,
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_connections: 4096,
            header_timeout: std::time::Duration::from_secs(10),
            calls_at_once: None,
        }
    }
}

/// Serves the API on `listener` until SIGINT or SIGTERM, then drains in-flight requests.
///
/// The signal handlers are installed when this is called, before the returned future first
/// runs, so a signal sent as soon as the caller reports readiness still stops it gracefully.
/// Must be called inside a Tokio runtime.
pub fn serve(
    listener: tokio::net::TcpListener,
    state: AppState,
    limits: Limits,
) -> impl std::future::Future<Output = std::io::Result<()>> {
    let shutdown = shutdown_signal();
    async move {
        let calls = limits.calls_at_once_for(&state.mnemo);
        let app = router(state.with_calls_at_once(calls));
        let graceful = hyper_util::server::graceful::GracefulShutdown::new();
        let slots = Arc::new(tokio::sync::Semaphore::new(limits.max_connections));
        tokio::pin!(shutdown);
        loop {
            let (stream, peer) = tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok(accepted) => accepted,
                    // Out of file descriptors or a connection reset before it was accepted:
                    // wait a moment rather than spin.
                    Err(_) => {
                        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                        continue;
                    }
                },
                () = &mut shutdown => break,
            };
            let Ok(slot) = Arc::clone(&slots).try_acquire_owned() else {
                tokio::spawn(refuse_busy(stream));
                continue;
            };
            // Handlers see the client's address (failed authentications are counted by it).
            let with_peer = tower::ServiceExt::map_request(
                app.clone(),
                move |mut request: axum::http::Request<hyper::body::Incoming>| {
                    request.extensions_mut().insert(axum::extract::ConnectInfo(peer));
                    request
                },
            );
            let service = hyper_util::service::TowerToHyperService::new(with_peer);
            let connection = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(limits.header_timeout)
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service);
            let connection = graceful.watch(connection);
            tokio::spawn(async move {
                let _ = connection.await;
                drop(slot);
            });
        }
        drop(listener);
        graceful.shutdown().await;
        Ok(())
    }
}

/// Answers a connection over the limit with 503 and `Retry-After`, then closes it.
async fn refuse_busy(mut stream: tokio::net::TcpStream) {
    use tokio::io::AsyncWriteExt;
    let body = r#"{"code":"unavailable","message":"too many connections; retry shortly"}"#;
    let response = format!(
        "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    // Write, end our side, then drain what the client sent: closing a socket with unread
    // bytes resets it, and the client would lose the answer.
    let answer = async {
        stream.write_all(response.as_bytes()).await?;
        stream.shutdown().await?;
        let mut sink = [0u8; 1024];
        while tokio::io::AsyncReadExt::read(&mut stream, &mut sink).await? > 0 {}
        Ok::<(), std::io::Error>(())
    };
    let _ = tokio::time::timeout(std::time::Duration::from_secs(1), answer).await;
}

/// Installs the SIGINT and SIGTERM handlers now; the future ends at the first of them.
fn shutdown_signal() -> impl std::future::Future<Output = ()> {
    #[cfg(unix)]
    let handlers = {
        use tokio::signal::unix::{SignalKind, signal};
        (signal(SignalKind::interrupt()).ok(), signal(SignalKind::terminate()).ok())
    };
    async move {
        #[cfg(unix)]
        {
            let (mut interrupt, mut terminate) = handlers;
            let interrupt = async {
                match interrupt.as_mut() {
                    Some(signal) => {
                        signal.recv().await;
                    }
                    None => std::future::pending::<()>().await,
                }
            };
            let terminate = async {
                match terminate.as_mut() {
                    Some(signal) => {
                        signal.recv().await;
                    }
                    None => std::future::pending::<()>().await,
                }
            };
            tokio::select! {
                () = interrupt => {},
                () = terminate => {},
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}
