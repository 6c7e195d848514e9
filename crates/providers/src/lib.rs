//! switchboard-providers: one module per provider dialect; sanitize schemas, render requests, decode replies. Pure, no HTTP.
//!
//! Entry points: [`sanitize()`] rewrites one input schema for a dialect, [`prepare_tool`] does
//! that plus the tool-level rules, [`render_request`] builds the exact request body, and
//! [`check_limits`] reports hard limits a request would break. A conversation is [`Message`]s
//! of [`Part`]s; [`decode_reply`] and [`StreamDecoder`] turn responses into a [`Reply`];
//! [`endpoint()`] says where a request goes. Nothing here does I/O.

mod anthropic;
pub mod arguments;
pub mod cache;
pub mod conversation;
pub mod count;
mod effort;
pub mod endpoint;
pub mod error;
mod gemini;
mod openai_chat;
mod openai_responses;
mod refs;
pub mod render;
pub mod reply;
pub mod sanitize;
pub mod schema;
pub mod stream;
mod strict;

pub use cache::mark_cache_breakpoints;
pub use conversation::{
    Message, Part, ResultPart, Role, accepts_result_images, accepts_result_images_for,
};
pub use count::ToolChoice;
pub use effort::{max_tokens_in_body, reasoning_effort_fields};
pub use endpoint::{
    Endpoint, api_key_env, body_headers, default_base_url, endpoint, provider_for_model,
    same_provider,
};
pub use error::ProviderError;
pub use gemini::openapi_property_name_ok;
pub use render::{
    DEFAULT_MAX_TOKENS, LimitViolation, PreparedTool, RequestParts, TEMPERATURE, ToolSpec,
    apply_tool_choice, check_limits, prepare_tool, render_request, sends_reasoning_items, to_bytes,
};
pub use reply::{Reply, Stop, Usage, decode_error, decode_reply, is_context_overflow};
pub use sanitize::{SanitizeOptions, sanitize};
pub use schema::{Change, Sanitized};
pub use stream::{StreamDecoder, StreamEvent};
