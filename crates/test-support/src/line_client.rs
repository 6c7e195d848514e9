//! A client that speaks JSON-RPC lines to a `switchboard serve` child over its stdin and stdout,
//! by hand, so a test controls exactly what the client declares and sends.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// How long any one wait for serve lasts before the test fails.
const WAIT: Duration = Duration::from_secs(60);

/// serve over stdio, its stdout read as JSON lines and its stderr kept as it comes. Killed on
/// drop; [`LineClient::finish`] ends it the way a client does, by closing stdin.
pub struct LineClient {
    /// The serve process.
    pub child: Child,
    /// `None` once [`LineClient::finish`] closed it.
    stdin: Option<ChildStdin>,
    /// serve's stdout lines, each one JSON value (a line that is not JSON fails the test).
    pub lines: Receiver<Value>,
    /// Notifications (and requests from serve) read while waiting for responses.
    pub notes: Vec<Value>,
    /// serve's stderr, as it comes (a thread drains the pipe, so serve never blocks on it).
    pub log: Arc<Mutex<String>>,
    drained: Option<JoinHandle<()>>,
}

impl LineClient {
    /// Run `serve` (a command with its flags and environment set) with piped stdio; nothing is
    /// sent yet (a stateless 2026-07-28 client sends no `initialize`).
    pub fn spawn(mut serve: Command) -> LineClient {
        serve
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = serve.spawn().expect("serve starts");
        let stdin = child.stdin.take().expect("stdin is piped");
        let stdout = child.stdout.take().expect("stdout is piped");
        let stderr = child.stderr.take().expect("stderr is piped");
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                let value = serde_json::from_str(&line).unwrap_or_else(|e| {
                    panic!("serve wrote a line that is not JSON ({e}): {line}")
                });
                if tx.send(value).is_err() {
                    return;
                }
            }
        });
        let (log, drained) = crate::listening::collect(BufReader::new(stderr));
        LineClient {
            child,
            stdin: Some(stdin),
            lines,
            notes: Vec::new(),
            log,
            drained: Some(drained),
        }
    }

    /// [`LineClient::spawn`], then `initialize` as a client of protocol `version` that takes
    /// no upcalls (no capabilities), and `notifications/initialized`.
    pub fn start(serve: Command, version: &str) -> LineClient {
        let mut client = Self::spawn(serve);
        let init = client.request(
            0,
            "initialize",
            json!({"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "lines", "version": "0"}}),
        );
        assert!(init.get("result").is_some(), "initialize failed: {init}");
        client.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        client
    }

    /// Write one line as it is (it need not be JSON).
    pub fn send_raw(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin is open until finish");
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    /// Write one message.
    pub fn send(&mut self, message: Value) {
        self.send_raw(&message.to_string());
    }

    /// The next line from serve, whatever it is; `what` says in the failure what was awaited.
    pub fn next(&mut self, what: &str) -> Value {
        self.lines
            .recv_timeout(WAIT)
            .unwrap_or_else(|_| panic!("nothing from serve within 60 s ({what})"))
    }

    /// The response to `id`, keeping the notifications (and requests from serve) read on the
    /// way in [`LineClient::notes`]; another response coming first fails the test.
    pub fn response(&mut self, id: impl Into<Value>) -> Value {
        let id = id.into();
        loop {
            let message = self.next(&format!("waiting for the answer to {id}"));
            if message.get("method").is_some() {
                self.notes.push(message);
                continue;
            }
            assert_eq!(message["id"], id, "another answer came first: {message}");
            return message;
        }
    }

    /// Send a request and return its response.
    pub fn request(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.response(id)
    }

    /// Call a tool and return its result (an error response fails the test).
    pub fn call(&mut self, id: i64, name: &str, arguments: Value) -> Value {
        let r = self.request(
            id,
            "tools/call",
            json!({"name": name, "arguments": arguments}),
        );
        r.get("result")
            .cloned()
            .unwrap_or_else(|| panic!("tools/call {name} got no result: {r}"))
    }

    /// The first notification (read already or within 60 s) that `wanted` picks, taken out of
    /// the notes.
    pub fn await_note(&mut self, what: &str, wanted: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(i) = self.notes.iter().position(&wanted) {
                return self.notes.remove(i);
            }
            assert!(
                Instant::now() < deadline,
                "{what}: not seen within 60 s; notes: {:?}\nstderr:\n{}",
                self.notes,
                self.log.lock().unwrap_or_else(|e| e.into_inner())
            );
            if let Ok(m) = self.lines.recv_timeout(Duration::from_millis(200)) {
                self.notes.push(m);
            }
        }
    }

    /// Wait for a `notifications/tools/list_changed` after the ones already seen (pinging, so
    /// notifications are read), then forget it.
    pub fn await_list_changed(&mut self, id: &mut i64) {
        let deadline = Instant::now() + WAIT;
        let is_change = |n: &Value| n["method"] == json!("notifications/tools/list_changed");
        while !self.notes.iter().any(is_change) {
            assert!(
                Instant::now() < deadline,
                "no list_changed: {:?}",
                self.notes
            );
            *id += 1;
            self.request(*id, "ping", json!({}));
            std::thread::sleep(Duration::from_millis(100));
        }
        self.notes.retain(|n| !is_change(n));
    }

    /// Close stdin, wait for serve to exit, and return all it wrote on stderr.
    pub fn finish(mut self) -> String {
        drop(self.stdin.take());
        self.child.wait().unwrap();
        if let Some(drained) = self.drained.take() {
            let _ = drained.join();
        }
        self.log.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl Drop for LineClient {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
