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
        .nest_service("/mcp", mnemo_mcp::http_service(Arc::clone(&state.mnemo)))
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
pub async fn serve(listener: tokio::net::TcpListener, state: AppState) -> std::io::Result<()> {
    axum::serve(listener, router(state)).with_graceful_shutdown(shutdown()).await
}

async fn shutdown() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        if let Ok(mut signal) =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        {
            signal.recv().await;
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
    }
}
