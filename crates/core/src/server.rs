//! Server specifications: how to reach one configured MCP server. Produced by the config loader,
//! consumed by the session layer. Secrets (env values, header values) never print.

use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

use crate::root::Root;

/// Default time a server gets to start and answer `initialize`.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(30);
/// Default time one `tools/call` may take.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(60);

/// A value that must never be printed: `Debug`, `Display` and `Serialize` show `***`.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wrap a secret value.
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }
    /// The value itself, for the one place that must send it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("***")
    }
}

impl std::fmt::Display for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("***")
    }
}

impl Serialize for Secret {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str("***")
    }
}

/// How to reach a server.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "transport", rename_all = "lowercase")]
pub enum TransportSpec {
    /// A child process speaking MCP on stdin/stdout.
    Stdio {
        /// Program to run (looked up on PATH when it has no slash).
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Extra environment variables (values are secrets).
        env: Vec<(String, Secret)>,
        /// Working directory.
        cwd: Option<PathBuf>,
    },
    /// A Streamable HTTP endpoint.
    Http {
        /// The endpoint URL (already validated as http or https).
        url: String,
        /// Extra request headers (values are secrets).
        headers: Vec<(String, Secret)>,
        /// A shell command whose JSON output gives more headers, run at each connect
        /// (`headersHelper`).
        #[serde(skip_serializing_if = "Option::is_none")]
        headers_helper: Option<String>,
    },
}

impl TransportSpec {
    /// `"stdio"` or `"http"`, for tables.
    pub fn kind(&self) -> &'static str {
        match self {
            TransportSpec::Stdio { .. } => "stdio",
            TransportSpec::Http { .. } => "http",
        }
    }
}

/// One configured server, ready to connect.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ServerSpec {
    /// The configured name (the config key).
    pub name: String,
    /// How to reach it.
    #[serde(flatten)]
    pub transport: TransportSpec,
    /// How long it gets to start and initialize.
    pub startup_timeout: Duration,
    /// How long one call may take.
    pub call_timeout: Duration,
    /// The folders this server is offered as roots: `None` for the ones the host offers every
    /// server, `Some` for its own (an empty list offers it none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub roots: Option<Vec<Root>>,
}

impl ServerSpec {
    /// A stdio server with default timeouts.
    pub fn stdio(name: impl Into<String>, command: impl Into<String>, args: Vec<String>) -> Self {
        Self {
            name: name.into(),
            transport: TransportSpec::Stdio {
                command: command.into(),
                args,
                env: Vec::new(),
                cwd: None,
            },
            startup_timeout: DEFAULT_STARTUP_TIMEOUT,
            call_timeout: DEFAULT_CALL_TIMEOUT,
            roots: None,
        }
    }

    /// An HTTP server with default timeouts.
    pub fn http(name: impl Into<String>, url: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            transport: TransportSpec::Http {
                url: url.into(),
                headers: Vec::new(),
                headers_helper: None,
            },
            startup_timeout: DEFAULT_STARTUP_TIMEOUT,
            call_timeout: DEFAULT_CALL_TIMEOUT,
            roots: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_never_print() {
        let mut spec = ServerSpec::http("gh", "https://example.com/mcp");
        if let TransportSpec::Http { headers, .. } = &mut spec.transport {
            headers.push(("Authorization".into(), Secret::new("Bearer hunter2")));
        }
        let debug = format!("{spec:?}");
        let json = serde_json::to_string(&spec).unwrap();
        assert!(!debug.contains("hunter2") && !json.contains("hunter2"));
        assert!(debug.contains("***") && json.contains("***"));
    }
}
