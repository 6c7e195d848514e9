//! Shared helpers for the session tests: specs for the real peer servers, JSON argument maps,
//! polling with a deadline, and process checks.
#![allow(dead_code)] // each test binary uses a different subset

use std::future::Future;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Map, Value};
use switchboard_core::ServerSpec;
use switchboard_mcp::{ServerState, Sessions};
use switchboard_test_support::peers::{node, peer};

/// server-everything over stdio.
pub fn everything(name: &str) -> ServerSpec {
    let js = peer("everything");
    ServerSpec::stdio(name, node(), vec![js.display().to_string(), "stdio".into()])
}

/// A JSON object literal as an argument map.
pub fn args(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        other => panic!("arguments must be an object, got {other}"),
    }
}

/// Poll `check` every 50 ms until it returns `Some`, or panic after `limit` with `what`.
pub async fn eventually<T, F, Fut>(limit: Duration, what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let start = Instant::now();
    loop {
        if let Some(v) = check().await {
            return v;
        }
        assert!(
            start.elapsed() < limit,
            "timed out after {limit:?} waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Assert `server` is ready, printing every status when it is not.
pub fn assert_ready(sessions: &Sessions, server: &str) {
    let statuses = sessions.statuses();
    let status = statuses
        .iter()
        .find(|s| s.name == server)
        .unwrap_or_else(|| panic!("no status for {server}"));
    assert_eq!(
        status.state,
        ServerState::Ready,
        "{server} is not ready: {statuses:#?}"
    );
}

/// True while a process with this pid exists and is not a zombie.
pub fn alive(pid: u32) -> bool {
    let stat = Path::new("/proc").join(pid.to_string()).join("stat");
    match std::fs::read_to_string(stat) {
        // Field 3 is the state; the command name in field 2 may contain spaces, so look after
        // its closing parenthesis.
        Ok(text) => text
            .rsplit_once(')')
            .map(|(_, rest)| !rest.trim_start().starts_with('Z'))
            .unwrap_or(true),
        Err(_) => false,
    }
}

/// SIGKILL a process, as a crash would.
pub fn kill(pid: u32) {
    let status = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .expect("run kill");
    assert!(status.success(), "kill -9 {pid} failed");
}

/// server-everything in Streamable HTTP mode on `port`; killed when dropped, pass or fail.
pub struct HttpEverything(std::process::Child);

impl HttpEverything {
    /// Start it and wait until it accepts connections.
    pub async fn start(port: u16) -> Self {
        Self::start_mode(port, "streamableHttp").await
    }

    /// Start it in `mode` (`streamableHttp`, or `sse`: the legacy HTTP+SSE transport at
    /// `/sse`) and wait until it accepts connections.
    pub async fn start_mode(port: u16, mode: &str) -> Self {
        let child = std::process::Command::new(node())
            .arg(peer("everything"))
            .arg(mode)
            .env("PORT", port.to_string())
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("spawn server-everything streamableHttp");
        let server = HttpEverything(child);
        eventually(
            Duration::from_secs(15),
            "server-everything to listen",
            || async {
                tokio::net::TcpStream::connect(("127.0.0.1", port))
                    .await
                    .ok()
                    .map(|_| ())
            },
        )
        .await;
        server
    }
}

impl Drop for HttpEverything {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A TCP port that was free a moment ago.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("bind an ephemeral port")
}
