//! switchboard-mcp: live sessions to MCP servers over stdio and Streamable HTTP (the only rmcp client user).
//!
//! [`Sessions::start`] connects every configured server concurrently; each server gets a
//! supervisor task that lists its tools, resources and prompts into the shared
//! [`switchboard_core::Catalog`], re-lists on `list_changed`, respawns a server whose session
//! ends, and kills the process group on [`Sessions::shutdown`]. Failures are values: a server
//! that cannot start is `Failed` with a reason, a call that goes wrong is a [`SessionError`]
//! variant, and a tool that reports failure is an `Ok(CallResult { is_error: true, .. })`.

mod connect;
mod convert;
mod error;
mod handler;
mod listing;
mod request;
mod sessions;
mod slot;
mod status;
mod stderr;
mod supervisor;

pub use error::SessionError;
pub use sessions::Sessions;
pub use status::{ServerState, ServerStatus};
