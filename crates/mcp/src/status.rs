//! `ServerStatus` / `ServerState`: what `Sessions::statuses` reports for each configured server
//! (for `switchboard inspect`, the gateway's health output and logs).

use serde::Serialize;

/// Where one server's session is in its life.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum ServerState {
    /// Spawning or connecting, initializing, listing.
    Connecting,
    /// Initialized and listed; calls go through.
    Ready,
    /// Gave up. The reason names the command, URL or error and carries the last stderr lines.
    Failed {
        /// Why, in one line.
        reason: String,
    },
    /// The session ended and is being re-established (attempt counts from 1).
    Restarting {
        /// Which reconnect attempt is under way.
        attempt: u32,
    },
}

impl ServerState {
    /// True when calls can be sent.
    pub fn is_ready(&self) -> bool {
        matches!(self, ServerState::Ready)
    }

    /// A short phrase for error messages ("connecting", "restarting (attempt 2)", the failure).
    pub fn describe(&self) -> String {
        match self {
            ServerState::Connecting => "still connecting".to_string(),
            ServerState::Ready => "ready".to_string(),
            ServerState::Failed { reason } => reason.clone(),
            ServerState::Restarting { attempt } => {
                format!("restarting after the session ended (attempt {attempt})")
            }
        }
    }
}

/// One configured server as the session layer sees it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ServerStatus {
    /// The configured name.
    pub name: String,
    /// `"stdio"`, `"http"`, or `"sse"` for a URL that speaks the legacy HTTP+SSE transport.
    pub transport: &'static str,
    /// Its state (flattened: `"state": "failed", "reason": ...`).
    #[serde(flatten)]
    pub state: ServerState,
    /// The negotiated protocol version.
    pub protocol_version: Option<String>,
    /// `serverInfo.name`.
    pub server_name: Option<String>,
    /// `serverInfo.version`.
    pub server_version: Option<String>,
    /// Number of tools listed.
    pub tools: usize,
    /// Number of resources listed.
    pub resources: usize,
    /// Number of resource templates listed.
    pub resource_templates: usize,
    /// Number of prompts listed.
    pub prompts: usize,
    /// How long the last successful connect (spawn + initialize + listing) took.
    pub connect_ms: Option<u64>,
    /// The last lines a stdio server wrote to stderr (empty for HTTP).
    pub stderr_tail: Vec<String>,
    /// Definitions the server sent that could not be used (skipped), one line each.
    pub warnings: Vec<String>,
}
