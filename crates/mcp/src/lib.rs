//! switchboard-mcp: live sessions to MCP servers over stdio and Streamable HTTP (the only rmcp client user).
//!
//! [`Sessions::start`] connects every configured server concurrently; each server gets a
//! supervisor task that lists its tools, resources and prompts into the shared
//! [`switchboard_core::Catalog`], re-lists on `list_changed`, respawns a server whose session
//! ends, and kills the process group on [`Sessions::shutdown`]. Failures are values: a server
//! that cannot start is `Failed` with a reason, a call that goes wrong is a [`SessionError`]
//! variant, and a tool that reports failure is an `Ok(CallResult { is_error: true, .. })`.
//!
//! Behaviour worth knowing at the call site:
//! - `initialize` is pinned to protocol 2025-11-25; the client declares roots (answered with
//!   the folders [`configure_roots`] or [`Sessions::set_roots`] set, none by default), sampling (refused) and elicitation (declined), unless the call is made with
//!   [`Sessions::call_tool_relayed`]: then its progress and the server's sampling and
//!   elicitation requests go to the caller (see [`Upcall`]). Log messages, resource updates and
//!   each new session (whose server forgot what the old one was asked) are published as
//!   [`ServerEvent`]s.
//! - A first connect failure is final (it is nearly always configuration). A session that ends
//!   later is re-established after 250 ms, 500 ms, 1 s, 2 s, 4 s; after five failed attempts in a
//!   row the server is `Failed` and leaves the catalog. While it restarts its last listing
//!   stays in the catalog and calls get `NotReady`.
//! - A call in flight when its server dies ends with `Closed`; a call that times out, or whose
//!   future is dropped, is cancelled on the wire (`notifications/cancelled`).
//! - A tool whose listing says `execution.taskSupport: "required"` (MCP 2025-11-25) is called as
//!   a task by every call path here: the call asks for the task and waits for its result
//!   (`tasks/result`); see [`Sessions::runs_as_task`]. A raw call ([`RawCaller`]) does not.
//! - The catalog's generation rises only when some server's listing really changed.
//! - [`probe`] asks one HTTP server, without credentials, whether it needs a login at all; it
//!   never starts an authorization and closes the session it opened.

#[macro_use]
mod http_forward;

mod answering;
pub mod auth;
mod connect;
mod convert;
mod error;
mod execution;
mod handler;
mod headers_helper;
mod http_screen;
mod ids;
mod in_order;
mod legacy_sse;
mod listing;
mod mrtr;
mod options;
mod probe;
mod raw;
mod relay;
mod request;
mod roots;
mod screen;
mod sessions;
mod slot;
mod status;
mod stderr;
mod supervisor;
mod task;
mod token_store;

pub use answering::call_answering;
pub use error::{SessionError, missing_program};
pub use options::{
    AuthMode, ClientOptions, Elicitation, Grant, Lifecycle, OAuthOptions, ServerOAuth,
    TokenStorage, configure, configure_server_oauth,
};
pub use probe::{Access, Metadata, probe};
#[cfg(unix)]
pub use raw::WaitingFd;
pub use raw::{
    BlockingLines, Delivering, Delivery, Lines, Outcome, ProgressSink, RawCaller, RawTicket, drive,
};
pub use relay::{ServerEvent, Upcall, UpcallError, UpcallKind};
pub use roots::{Root, configure_roots, roots};
pub use sessions::{Reconfigured, Sessions};

/// The log target of rmcp's OAuth module. It logs the authorization code and token responses at
/// debug level, so a host should keep this target at `info` or quieter unless asked otherwise.
pub const OAUTH_LOG_TARGET: &str = "rmcp::transport::auth";
/// The log target of rmcp's Streamable HTTP client (its debug logs carry nothing secret).
pub const HTTP_LOG_TARGET: &str = "rmcp::transport::streamable_http_client";
/// The tracing target of rmcp's session loop, which logs every error answer a session sends
/// (ours to a server, or a gateway's to a client) at WARN with the error's Debug form.
pub const SESSION_LOG_TARGET: &str = "rmcp::service";
/// The log target of rmcp's transport worker, which logs the error that ended a transport (an
/// HTTP server refusing the connection, answering 404 or a web page) at ERROR with the
/// underlying client error's Debug form: the same failure a `SessionError` reports in words.
pub const WORKER_LOG_TARGET: &str = "rmcp::transport::worker";
/// The log target of rmcp's reqwest backend for Streamable HTTP, which logs a response of the
/// wrong content type (a web page) at ERROR in Debug form before returning it as the error a
/// `SessionError` reports, and warns about replies it accepts anyway.
pub const HTTP_BACKEND_LOG_TARGET: &str =
    "rmcp::transport::common::reqwest::streamable_http_client";
/// The log target of rmcp's event-stream reconnect loop, which logs each failed attempt to
/// re-open a Streamable HTTP server's event stream (a server going away or restarting) at WARN,
/// and the last at ERROR, while the session carries on.
pub const SSE_RETRY_LOG_TARGET: &str = "rmcp::transport::common::client_side_sse";
pub use status::{ServerState, ServerStatus};
