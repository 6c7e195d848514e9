//! The one error enum of switchboard-gateway.

/// Errors of the gateway and the embedded servers.
#[derive(Debug, thiserror::Error)]
pub enum GatewayError {
    /// The MCP server side failed to start or stopped with an error.
    #[error("MCP server failed: {0}")]
    Serve(String),
    /// A demo server name that does not exist.
    #[error("unknown demo server {0:?}; expected one of: tickets, docs")]
    UnknownDemo(String),
}
