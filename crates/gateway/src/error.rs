//! The one error enum of switchboard-gateway.

use std::net::SocketAddr;

/// Errors of the gateway and the embedded servers.
#[derive(Debug, thiserror::Error)]
pub enum GatewayError {
    /// The MCP server side failed to start or stopped with an error.
    #[error("MCP server failed: {0}")]
    Serve(String),
    /// A demo server name that does not exist.
    #[error("unknown demo server {0:?}; expected one of: tickets, docs")]
    UnknownDemo(String),
    /// The HTTP address could not be bound.
    #[error("cannot listen on {0}: {1}")]
    Bind(SocketAddr, String),
    /// A non-loopback address without a bearer token.
    #[error(
        "refusing to serve on {0} without authentication: it is reachable from other machines. Pass --token-env VAR (a variable holding a secret token), or bind 127.0.0.1"
    )]
    Insecure(SocketAddr),
    /// The call log could not be opened.
    #[error("cannot open the call log {}: {message}", path.display())]
    CallLog {
        /// The file.
        path: std::path::PathBuf,
        /// Why.
        message: String,
    },
}
