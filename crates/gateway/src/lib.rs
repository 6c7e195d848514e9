//! switchboard-gateway: the aggregating MCP server and the embedded demo servers (the only rmcp
//! server user).

pub mod demo;
pub mod error;
pub mod static_server;

pub use error::GatewayError;
pub use static_server::{Backend, serve_stdio};
