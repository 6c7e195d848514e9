//! `serve --http` forgets a call passing through when its client hangs up before the answer:
//! the count of calls in flight that `/healthz` reports goes back to 0. (Each such call used to
//! stay filed for cancellation, with its upstream's link, for as long as serve ran.)

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use switchboard_test_support::listening::listening;
use switchboard_test_support::peers::node;

/// `serve --http 127.0.0.1:0` in front of the loop fixture server; killed on drop.
struct Serve {
    child: Child,
    authority: String,
    _dir: tempfile::TempDir,
}

impl Serve {
    fn start() -> Serve {
        let dir = tempfile::tempdir().unwrap();
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/loop-server.mjs");
        let config = format!(
            "[servers.loop]\ncommand = {:?}\nargs = [{:?}]\npin = \"off\"\n",
            node(),
            fixture.display().to_string()
        );
        let path = dir.path().join("switchboard.toml");
        std::fs::write(&path, config).unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_switchboard"))
            .args(["--config", &path.display().to_string()])
            .args(["serve", "--http", "127.0.0.1:0", "--no-watch"])
            .current_dir(dir.path())
            .env("HOME", dir.path())
            .env("XDG_CONFIG_HOME", dir.path().join("no-user-config"))
            .env("XDG_DATA_HOME", dir.path().join("data"))
            .env_remove("SWITCHBOARD_MODEL_DIR")
            .env_remove("SWITCHBOARD_PASSTHROUGH")
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let authority = listening(&mut child).authority();
        Serve {
            child,
            authority,
            _dir: dir,
        }
    }

    /// One request on a connection of its own, sent and left open (the answer unread).
    fn send(&self, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> TcpStream {
        let mut head = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n",
            self.authority
        );
        for (k, v) in headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        if !body.is_empty() {
            head.push_str(&format!(
                "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
                body.len()
            ));
        }
        let mut stream = TcpStream::connect(&self.authority).unwrap();
        stream
            .write_all(format!("{head}\r\n{body}").as_bytes())
            .unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(60)))
            .unwrap();
        stream
    }

    /// One request, its answer read to the end: (head, body).
    fn exchange(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> (String, String) {
        let mut stream = self.send(method, path, headers, body);
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw).unwrap();
        let text = String::from_utf8_lossy(&raw).to_string();
        let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
        (head.to_string(), body.to_string())
    }

    /// The calls passing through now, as `/healthz` counts them.
    fn in_flight(&self) -> u64 {
        let (head, body) = self.exchange("GET", "/healthz", &[], "");
        assert!(head.starts_with("HTTP/1.1 200"), "{head}\n{body}");
        let health: Value = serde_json::from_str(body.trim()).unwrap();
        health["calls_passing_through"]
            .as_u64()
            .unwrap_or_else(|| panic!("no calls_passing_through in {health}"))
    }

    /// Wait until `/healthz` counts `n` calls passing through; the count it had otherwise.
    fn await_in_flight(&self, n: u64) -> Result<(), u64> {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let now = self.in_flight();
            if now == n {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(now);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// A session of a client that takes no upcalls (its plain calls pass through).
    fn session(&self) -> String {
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "hangs-up", "version": "0"}}});
        let (head, body) = self.exchange("POST", "/mcp", &[], &init.to_string());
        assert!(
            head.starts_with("HTTP/1.1 200"),
            "initialize: {head}\n{body}"
        );
        let session = head
            .lines()
            .find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.trim()
                    .eq_ignore_ascii_case("mcp-session-id")
                    .then(|| v.trim().to_string())
            })
            .expect("initialize answered without a session id");
        let done = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let (head, _) = self.post(&session, &done);
        assert!(head.starts_with("HTTP/1.1 202"), "initialized: {head}");
        session
    }

    fn post(&self, session: &str, body: &Value) -> (String, String) {
        self.exchange("POST", "/mcp", &headers(session), &body.to_string())
    }
}

fn headers(session: &str) -> [(&str, &str); 2] {
    [
        ("Mcp-Session-Id", session),
        ("MCP-Protocol-Version", "2025-11-25"),
    ]
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Calls to a tool that answers in a minute, each given up by its client a moment after it
/// starts (as a client does whose own timeout is shorter, or that is stopped): the call is
/// counted while it runs and no longer once the client has hung up, whether it was to be
/// answered as one JSON body or as an event stream (a call with a progress token).
#[test]
fn a_call_whose_client_hangs_up_is_forgotten() {
    let serve = Serve::start();
    let session = serve.session();
    // The first request waits for the upstream to start; the slow tool is listed once it has.
    let (_, tools) = serve.post(
        &session,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    );
    assert!(tools.contains("loop__slow"), "no loop__slow in {tools}");
    assert_eq!(serve.in_flight(), 0);
    for (i, progress) in [(10, false), (11, true), (12, false), (13, true)] {
        let mut params = json!({"name": "loop__slow", "arguments": {"ms": 60_000}});
        if progress {
            params["_meta"] = json!({"progressToken": format!("p{i}")});
        }
        let call = json!({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": params});
        let stream = serve.send("POST", "/mcp", &headers(&session), &call.to_string());
        assert_eq!(
            serve.await_in_flight(1),
            Ok(()),
            "call {i} (progress: {progress}) is not counted as passing through"
        );
        drop(stream);
        assert_eq!(
            serve.await_in_flight(0),
            Ok(()),
            "call {i} (progress: {progress}) is still filed after its client hung up"
        );
    }
    // The upstream still answers (the calls were cancelled there, not the session).
    let (_, echoed) = serve.post(
        &session,
        &json!({"jsonrpc": "2.0", "id": 20, "method": "tools/call",
                "params": {"name": "loop__echo", "arguments": {"text": "still here"}}}),
    );
    assert!(echoed.contains("still here"), "{echoed}");
    assert_eq!(serve.in_flight(), 0);
}
