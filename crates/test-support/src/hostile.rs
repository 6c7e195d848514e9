//! The misbehaving MCP server fixture (`crates/cli/tests/fixtures/hostile-server.mjs`) run as a
//! Streamable HTTP server: its URL answers with JSON bodies, the URL plus `/sse` with event
//! streams. Killed on drop.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use crate::peers::{node, repo_root};

/// A running `hostile-server.mjs --http`.
pub struct HostileHttp {
    child: Child,
    /// Its endpoint (`http://127.0.0.1:PORT/mcp`), answering with `application/json` bodies.
    pub url: String,
}

impl HostileHttp {
    /// Start the fixture in `mode` (its misbehaviour outside tool calls; `""` for none).
    pub fn start(mode: &str) -> HostileHttp {
        let fixture = repo_root().join("crates/cli/tests/fixtures/hostile-server.mjs");
        let mut child = Command::new(node())
            .arg(fixture)
            .arg("--http")
            .arg(mode)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .expect("node runs the hostile fixture");
        let mut line = String::new();
        let stdout = child.stdout.take().expect("piped stdout");
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("the fixture prints its URL");
        let url = line.trim().to_string();
        assert!(url.starts_with("http://"), "the fixture printed {url:?}");
        HostileHttp { child, url }
    }

    /// Its endpoint that answers with event streams.
    pub fn sse_url(&self) -> String {
        format!("{}/sse", self.url)
    }
}

impl Drop for HostileHttp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
