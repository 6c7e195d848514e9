//! switchboard-core: the domain types and pure stages of the host pipeline (no async, no I/O).
//!
//! Everything here is a plain function of its inputs, so every stage can be tested without a
//! server, a network or a runtime. The async shells live in `switchboard-mcp` and
//! `switchboard-host`.

pub mod catalog;
pub mod catalog_file;
pub mod clip;
pub mod dialect;
pub mod elicitation;
pub mod error;
pub mod facade;
pub mod hash;
pub mod host_rules;
pub mod names;
pub mod policy;
pub mod redact;
pub mod rent;
pub mod result;
pub mod root;
pub mod server;
pub mod time;

pub use catalog::{
    Catalog, Entry, Prompt, PromptArgument, Resource, ResourceTemplate, ServerCatalog, ServerInfo,
    Tool, ToolAnnotations,
};
pub use clip::clip;
pub use dialect::Dialect;
pub use error::CoreError;
pub use hash::ContentHash;
pub use host_rules::{Condition, HostRule, HostRules, Verdict};
pub use policy::ToolFilter;
pub use redact::{redact_url, redact_urls_in};
pub use result::{CallResult, ContentBlock};
pub use root::Root;
pub use server::{Secret, ServerSpec, TransportSpec};
