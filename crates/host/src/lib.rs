//! switchboard-host: the library facade over sessions, catalog, translation and dispatch.

pub mod config;
pub mod error;
pub mod pins;
pub mod policy;
pub mod translate;

pub use config::{Config, ConfigSource, Profile, ServerConfig};
pub use error::HostError;
