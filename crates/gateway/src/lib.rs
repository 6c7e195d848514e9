//! switchboard-gateway: the aggregating MCP server (`switchboard serve`) and the embedded demo
//! servers (the only rmcp server user).
//!
//! [`Gateway::start`] connects to every configured server; [`serve_stdio`] and [`HttpServer`]
//! put one MCP server in front of them all. Every decision (names, allow/deny, approval, pins)
//! comes from switchboard-host and switchboard-core; this crate only serves.

pub mod call_log;
pub mod client;
pub mod demo;
pub mod error;
mod facade;
pub mod gateway;
pub mod handler;
pub mod http;
mod http_passthrough;
mod passthrough;
mod rpc_screen;
pub mod static_server;
mod stdio;
pub mod view;

pub use call_log::CallLog;
pub use error::GatewayError;
pub use gateway::{Expose, Gateway, Options, STARTUP_WAIT};
pub use http::{
    HEALTH_PATH, HttpOptions, HttpServer, MCP_PATH, serve_stdio as serve_gateway_stdio,
};
pub use static_server::{Backend, serve_stdio};
