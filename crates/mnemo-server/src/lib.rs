//! mnemo's HTTP API: `router(state)` serves JSON REST under `/v1` and `/healthz`.
//!
//! Every request carries `Authorization: Bearer <key>`. A tenant key acts for any user of its
//! tenant (naming one with `user_id`); a user key only for its own user (403 otherwise). The
//! handlers call the same library operations as the CLI, on the blocking pool, and every
//! error is JSON `{"code","message"}` from `mnemo_api`'s one table.

mod limits;
mod mem0;
mod metrics;
mod routes;

pub use limits::RateLimit;

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
    metrics: Arc<metrics::Metrics>,
}

impl AppState {
    /// State for a notebook with a per-key rate limit.
    pub fn new(mnemo: Mnemo, limit: RateLimit) -> Self {
        Self {
            mnemo: Arc::new(mnemo),
            limiter: Arc::new(limits::Limiter::new(limit)),
            metrics: Arc::new(metrics::Metrics::default()),
        }
    }
}

/// The HTTP API.
pub fn router(state: AppState) -> Router {
    let mcp = Router::new()
        // MCP tools' audit entries name their channel.
        .nest_service("/mcp", mnemo_mcp::http_service(Arc::new(state.mnemo.acting_as("mcp"))))
        .layer(axum::middleware::from_fn_with_state(state.clone(), routes::mcp_auth));
    routes::routes()
        .merge(mem0::routes())
        .merge(mcp)
        .layer(axum::middleware::from_fn_with_state(state.clone(), routes::track))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(tower_http::catch_panic::CatchPanicLayer::new())
        .with_state(state)
}

/// Serves the API on `listener` until SIGINT or SIGTERM, then drains in-flight requests.
///
/// The signal handlers are installed when this is called, before the returned future first
/// runs, so a signal sent as soon as the caller reports readiness still stops it gracefully.
/// Must be called inside a Tokio runtime.
pub fn serve(
    listener: tokio::net::TcpListener,
    state: AppState,
) -> impl std::future::Future<Output = std::io::Result<()>> {
    let shutdown = shutdown_signal();
    async move { axum::serve(listener, router(state)).with_graceful_shutdown(shutdown).await }
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
