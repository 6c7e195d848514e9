//! switchboard-host: the library facade over sessions, catalog, translation and dispatch.

pub mod agent;
pub mod client;
pub mod config;
pub mod dispatch;
pub mod error;
pub mod finder;
pub mod history;
pub mod host;
pub mod pins;
pub mod policy;
pub mod resource_tool;
pub mod sampling;
pub mod shape;
pub mod tool_search;
pub mod transcript;
pub mod translate;

pub use agent::{AgentEvent, AgentOptions, Answer, Compacted, End, ToolMode};
pub use config::{Config, ConfigSource, Profile, ServerConfig};
pub use error::HostError;
pub use host::{Host, HostBuilder};
