//! server-everything (the npm reference server) serving one of its HTTP transports on a
//! loopback port, for tests that need a real HTTP upstream; killed when dropped.

use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::peers::{node, peer};

/// How long server-everything may take to listen (a fresh machine's first `node` start is slow).
const LISTEN_WAIT: Duration = Duration::from_secs(30);

/// A running server-everything over HTTP.
pub struct HttpEverything {
    child: Child,
    port: u16,
}

impl HttpEverything {
    /// Streamable HTTP (`/mcp`) on `port`.
    pub fn start(port: u16) -> HttpEverything {
        Self::start_mode(port, "streamableHttp")
    }

    /// `mode` (`streamableHttp`, or `sse` for the legacy HTTP+SSE transport at `/sse`) on a
    /// free port; [`Self::port`] says which.
    pub fn on_free_port(mode: &str) -> HttpEverything {
        Self::start_mode(free_port(), mode)
    }

    /// `mode` on `port`, returning once it accepts connections.
    pub fn start_mode(port: u16, mode: &str) -> HttpEverything {
        let child = Command::new(node())
            .arg(peer("everything"))
            .arg(mode)
            .env("PORT", port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("spawn server-everything {mode} ({e}); run scripts/peers"));
        let everything = HttpEverything { child, port };
        let deadline = Instant::now() + LISTEN_WAIT;
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "server-everything {mode} did not listen on port {port}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        everything
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }
}

impl Drop for HttpEverything {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A loopback port nothing listens on now (bound, noted, closed).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or_else(|e| panic!("no free loopback port: {e}"))
}
