//! The embedded demo servers: a ticket tracker and a docs search, both with a tool called
//! `search` (the collision every host must resolve). Launched by the embedded config as
//! `switchboard demo-server tickets|docs`, so the main job runs on a fresh machine.

mod args;
pub mod conformance;
pub mod docs;
pub mod tickets;

use std::sync::Arc;

use crate::error::GatewayError;
use crate::static_server::Backend;

/// The names of the demo servers, in display order.
pub const NAMES: [&str; 2] = ["tickets", "docs"];

/// The backend of a demo server by name.
pub fn backend(name: &str) -> Result<Arc<dyn Backend>, GatewayError> {
    match name {
        "tickets" => Ok(Arc::new(tickets::Tickets::new())),
        "docs" => Ok(Arc::new(docs::Docs::new())),
        other => Err(GatewayError::UnknownDemo(other.to_string())),
    }
}
