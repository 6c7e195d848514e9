//! Where a `switchboard serve --http` child listens, read from its stderr.

use std::io::{BufRead, BufReader};
use std::process::Child;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// What serve printed before it listened is in the panic message; what it prints afterwards is
/// collected in `log`.
pub struct Listening {
    /// The MCP endpoint, `http://HOST:PORT/mcp`.
    pub url: String,
    /// serve's stderr after the URL line, kept by a thread that drains the pipe (so serve never
    /// blocks on a full one).
    pub log: Arc<Mutex<String>>,
}

impl Listening {
    /// `HOST:PORT` of [`Listening::url`].
    pub fn authority(&self) -> String {
        self.url
            .trim_start_matches("http://")
            .trim_end_matches("/mcp")
            .to_string()
    }
}

/// Read `child`'s piped stderr until serve says where it listens (within 60 s). A child that
/// exits or stays silent first is killed, and the test panics with what it printed.
pub fn listening(child: &mut Child) -> Listening {
    let mut stderr = BufReader::new(child.stderr.take().expect("serve's stderr is piped"));
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut seen = String::new();
    let url = loop {
        let mut line = String::new();
        if stderr.read_line(&mut line).unwrap_or(0) == 0 || Instant::now() > deadline {
            let _ = child.kill();
            panic!("serve --http did not print its URL; stderr:\n{seen}");
        }
        if let Some(url) = line.trim().strip_prefix("switchboard serve: listening on ") {
            break url.to_string();
        }
        seen.push_str(&line);
    };
    let (log, _) = collect(stderr);
    Listening { url, log }
}

/// Keep everything `reader` (a child's stderr) gives from now on in a string, read by a thread
/// of its own until the pipe closes, so the child never blocks on a full pipe. The thread's
/// handle tells when all of it is in.
pub fn collect<R: BufRead + Send + 'static>(mut reader: R) -> (Arc<Mutex<String>>, JoinHandle<()>) {
    let log = Arc::new(Mutex::new(String::new()));
    let sink = log.clone();
    let drained = std::thread::spawn(move || {
        let mut line = String::new();
        while reader.read_line(&mut line).is_ok_and(|n| n > 0) {
            sink.lock()
                .unwrap_or_else(|e| e.into_inner())
                .push_str(&line);
            line.clear();
        }
    });
    (log, drained)
}
