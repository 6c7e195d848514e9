//! switchboard-providers: one module per provider dialect; sanitize schemas, render requests, decode replies. Pure, no HTTP.
//!
//! Entry points: [`sanitize()`] rewrites one input schema for a dialect, [`prepare_tool`] does
//! that plus the tool-level rules, [`render_request`] builds the exact request body, and
//! [`check_limits`] reports hard limits a request would break.

mod anthropic;
pub mod arguments;
pub mod count;
pub mod error;
mod gemini;
mod openai_chat;
mod openai_responses;
mod refs;
pub mod render;
pub mod sanitize;
pub mod schema;
mod strict;

pub use error::ProviderError;
pub use gemini::openapi_property_name_ok;
pub use render::{
    LimitViolation, Message, PreparedTool, RequestParts, Role, ToolSpec, check_limits,
    prepare_tool, render_request, to_bytes,
};
pub use sanitize::{SanitizeOptions, sanitize};
pub use schema::{Change, Sanitized};
