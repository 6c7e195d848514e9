//! `StderrTail`: drains a stdio server's stderr continuously (a full pipe would block the
//! server) and keeps its last lines for failure reasons and `ServerStatus::stderr_tail`.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::sync::watch;

/// How many lines are kept.
pub(crate) const TAIL_LINES: usize = 20;
/// Longest line kept, in bytes; a server dumping a minified bundle must not fill memory.
const MAX_LINE: usize = 2000;

/// The last lines of one server's stderr, shared across respawns.
#[derive(Clone)]
pub(crate) struct StderrTail {
    lines: Arc<Mutex<VecDeque<String>>>,
    server: Arc<str>,
}

impl StderrTail {
    pub(crate) fn new(server: &str) -> Self {
        Self {
            lines: Arc::new(Mutex::new(VecDeque::with_capacity(TAIL_LINES))),
            server: server.into(),
        }
    }

    /// A copy of the kept lines, oldest first.
    pub(crate) fn lines(&self) -> Vec<String> {
        self.lines
            .lock()
            .map(|l| l.iter().cloned().collect())
            .unwrap_or_default()
    }

    fn push(&self, line: String) {
        if let Ok(mut lines) = self.lines.lock() {
            if lines.len() == TAIL_LINES {
                lines.pop_front();
            }
            lines.push_back(line);
        }
    }

    /// Read `stream` to its end in a background task. The returned receiver turns `true` at
    /// end of stream, which is how a caller waits for a crashing server's last words.
    pub(crate) fn drain<R>(&self, stream: R) -> watch::Receiver<bool>
    where
        R: AsyncRead + Unpin + Send + 'static,
    {
        let (done_tx, done_rx) = watch::channel(false);
        let tail = self.clone();
        tokio::spawn(async move {
            let mut reader = BufReader::new(stream);
            let mut buf = Vec::new();
            loop {
                buf.clear();
                match reader.read_until(b'\n', &mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        let line = clean_line(&buf);
                        // Server output is not ours to trust or show verbatim in logs at info
                        // level; debug is enough to diagnose.
                        tracing::debug!(server = %tail.server, stderr = %line);
                        tail.push(line);
                    }
                }
            }
            let _ = done_tx.send(true);
        });
        done_rx
    }
}

/// Wait (bounded) for the drain behind `done` to reach end of stream.
pub(crate) async fn wait_closed(done: &mut watch::Receiver<bool>, limit: Duration) {
    let _ = tokio::time::timeout(limit, done.wait_for(|closed| *closed)).await;
}

fn clean_line(raw: &[u8]) -> String {
    let text = String::from_utf8_lossy(raw);
    let text = text.trim_end_matches(['\n', '\r']);
    let mut line: String = text
        .chars()
        .filter(|c| !c.is_control() || *c == '\t')
        .collect();
    if line.len() > MAX_LINE {
        let mut cut = MAX_LINE;
        while !line.is_char_boundary(cut) {
            cut -= 1;
        }
        line.truncate(cut);
        line.push('…');
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn keeps_the_last_lines_only() {
        let tail = StderrTail::new("s");
        let text: String = (0..30).map(|i| format!("line {i}\n")).collect();
        let mut done = tail.drain(std::io::Cursor::new(text.into_bytes()));
        wait_closed(&mut done, Duration::from_secs(5)).await;
        let lines = tail.lines();
        assert_eq!(lines.len(), TAIL_LINES);
        assert_eq!(lines.first().map(String::as_str), Some("line 10"));
        assert_eq!(lines.last().map(String::as_str), Some("line 29"));
    }

    #[test]
    fn lines_are_cleaned_and_capped() {
        assert_eq!(clean_line(b"a\x1b[31mb\r\n"), "a[31mb");
        let long = vec![b'x'; 5000];
        assert_eq!(clean_line(&long).chars().count(), MAX_LINE + 1);
    }
}
