//! Serving the gateway: over stdio, or over Streamable HTTP at `/mcp` with bearer-token auth,
//! Host and Origin checks against DNS rebinding, and TCP_NODELAY on every accepted connection.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::serve::ListenerExt;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use switchboard_core::Secret;
use tokio_util::sync::CancellationToken;

use crate::error::GatewayError;
use crate::gateway::Gateway;
use crate::handler::GatewayHandler;
use crate::http_passthrough::{self, Shortcut};

/// The path the MCP endpoint is served at.
pub const MCP_PATH: &str = "/mcp";
/// The health endpoint: GET answers 200 with the upstream servers' states while serve runs.
pub const HEALTH_PATH: &str = "/healthz";

/// Serve one client over this process's stdin/stdout until it disconnects.
pub async fn serve_stdio(gateway: Arc<Gateway>) -> Result<(), GatewayError> {
    crate::stdio::serve_gateway(gateway).await
}

/// How to serve over HTTP.
#[derive(Clone, Debug)]
pub struct HttpOptions {
    /// Where to listen (`127.0.0.1:0` picks a free port).
    pub addr: SocketAddr,
    /// Bearer token every request must carry; required for a non-loopback address.
    pub token: Option<Secret>,
}

/// A bound HTTP gateway, not yet serving.
pub struct HttpServer {
    listener: tokio::net::TcpListener,
    router: Router,
    local: SocketAddr,
    stop: CancellationToken,
}

impl HttpServer {
    /// Bind the listener and build the service. Refuses a non-loopback address without a token.
    pub async fn bind(gateway: Arc<Gateway>, options: HttpOptions) -> Result<Self, GatewayError> {
        let loopback = options.addr.ip().is_loopback();
        if !loopback && options.token.is_none() {
            return Err(GatewayError::Insecure(options.addr));
        }
        let listener = tokio::net::TcpListener::bind(options.addr)
            .await
            .map_err(|e| GatewayError::Bind(options.addr, e.to_string()))?;
        let local = listener
            .local_addr()
            .map_err(|e| GatewayError::Bind(options.addr, e.to_string()))?;
        let stop = CancellationToken::new();
        let mut hosts = vec![
            "localhost".to_string(),
            "127.0.0.1".to_string(),
            "::1".to_string(),
            "[::1]".to_string(),
        ];
        if !loopback {
            hosts.push(host_of(local.ip()));
        }
        // Browsers send Origin; only pages served from this machine may talk to the gateway.
        let origins = [
            "http://localhost:*",
            "http://127.0.0.1:*",
            "http://[::1]:*",
            "https://localhost:*",
            "https://127.0.0.1:*",
        ];
        let config = StreamableHttpServerConfig::default()
            .with_allowed_hosts(hosts.clone())
            .with_allowed_origins(origins)
            .enforce_origin_validation()
            .with_cancellation_token(stop.child_token());
        let sessions = Arc::new(LocalSessionManager::default());
        let shortcut = Arc::new(Shortcut::new(
            gateway.clone(),
            sessions.clone(),
            hosts.clone(),
        ));
        let health = Arc::new(Health {
            gateway: gateway.clone(),
            hosts,
            token: options.token.clone(),
            shortcut: shortcut.clone(),
        });
        let service = StreamableHttpService::new(
            move || Ok(GatewayHandler::new(gateway.clone())),
            sessions,
            config,
        );
        let auth = Arc::new(options.token);
        // Layers run outside in: the bearer check, then the pass-through, then rmcp.
        let router = Router::new()
            .nest_service(MCP_PATH, service)
            .layer(middleware::from_fn_with_state(
                shortcut,
                http_passthrough::layer,
            ))
            .layer(middleware::from_fn_with_state(auth, bearer))
            // Outside the bearer check: a probe needs no token (it is told names only with one).
            .route(
                HEALTH_PATH,
                axum::routing::get(health_check).with_state(health),
            );
        Ok(Self {
            listener,
            router,
            local,
            stop,
        })
    }

    /// The address actually bound (the chosen port for `:0`).
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// The MCP endpoint URL.
    pub fn url(&self) -> String {
        format!("http://{}{MCP_PATH}", self.local)
    }

    /// Serve until `shutdown` resolves.
    pub async fn run(
        self,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> Result<(), GatewayError> {
        let stop = self.stop.clone();
        // Without TCP_NODELAY a reused connection stalls ~40 ms per response (Nagle + delayed ACK).
        let listener = self.listener.tap_io(|tcp| {
            if let Err(e) = tcp.set_nodelay(true) {
                tracing::debug!(error = %e, "cannot set TCP_NODELAY");
            }
        });
        axum::serve(listener, self.router)
            .with_graceful_shutdown(async move {
                shutdown.await;
                stop.cancel();
            })
            .await
            .map_err(|e| GatewayError::Serve(e.to_string()))
    }
}

fn host_of(ip: IpAddr) -> String {
    match ip {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => format!("[{v6}]"),
    }
}

/// Constant-time comparison, so the token cannot be guessed byte by byte from timings.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn authorized(headers: &HeaderMap, token: &Secret) -> bool {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            v.strip_prefix("Bearer ")
                .or_else(|| v.strip_prefix("bearer "))
        })
        .is_some_and(|given| same(given.trim().as_bytes(), token.expose().as_bytes()))
}

/// Refuse requests without the bearer token (when one is configured) with 401.
async fn bearer(
    State(token): State<Arc<Option<Secret>>>,
    request: Request,
    next: Next,
) -> Response {
    if let Some(token) = token.as_ref()
        && !authorized(request.headers(), token)
    {
        return (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Bearer")],
            "missing or wrong bearer token (Authorization: Bearer <token>)\n",
        )
            .into_response();
    }
    next.run(request).await
}

/// What the health endpoint reads.
struct Health {
    gateway: Arc<Gateway>,
    hosts: Vec<String>,
    token: Option<Secret>,
    /// The pass-through, whose calls in flight are counted.
    shortcut: Arc<Shortcut>,
}

/// `GET /healthz`: 200 while serve runs, with how many upstream servers are ready; with the
/// bearer token (or when none is configured), each server's name and state too, and how many
/// calls are passing through. The Host header must name this machine, as for `/mcp`, so a page
/// that rebinds a name to 127.0.0.1 reads nothing.
async fn health_check(State(health): State<Arc<Health>>, headers: HeaderMap) -> Response {
    let host = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let name = host
        .rsplit_once(':')
        .filter(|(_, port)| port.bytes().all(|b| b.is_ascii_digit()))
        .map_or(host, |(name, _)| name);
    if !health.hosts.iter().any(|h| h == name) {
        return (StatusCode::FORBIDDEN, "forbidden host\n").into_response();
    }
    let statuses = health.gateway.statuses();
    let disabled = health.gateway.disabled();
    let ready = statuses.iter().filter(|s| s.state.is_ready()).count();
    let mut body = serde_json::json!({
        "status": if ready == statuses.len() && disabled.is_empty() { "ok" } else { "degraded" },
        "ready": ready,
        "servers": statuses.len(),
        "disabled": disabled.len(),
    });
    let trusted = health
        .token
        .as_ref()
        .is_none_or(|token| authorized(&headers, token));
    if trusted {
        body["upstreams"] = statuses
            .iter()
            .map(|s| {
                let mut entry = serde_json::to_value(&s.state).unwrap_or_default();
                entry["name"] = serde_json::json!(s.name);
                entry["tools"] = serde_json::json!(s.tools);
                entry
            })
            .chain(disabled.iter().map(|(name, reason)| {
                serde_json::json!({"name": name, "state": "disabled", "reason": reason})
            }))
            .collect();
        // Calls the pass-through is answering now (0 when none is in flight).
        body["calls_passing_through"] = serde_json::json!(health.shortcut.in_flight());
    }
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_tokens_must_match_exactly() {
        let token = Secret::new("s3cret");
        let mut h = HeaderMap::new();
        assert!(!authorized(&h, &token));
        h.insert(header::AUTHORIZATION, "Bearer s3cret".parse().unwrap());
        assert!(authorized(&h, &token));
        h.insert(header::AUTHORIZATION, "Bearer s3cre".parse().unwrap());
        assert!(!authorized(&h, &token));
        h.insert(header::AUTHORIZATION, "Basic s3cret".parse().unwrap());
        assert!(!authorized(&h, &token));
    }
}
