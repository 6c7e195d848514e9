//! HTTP/1.1 written and read by hand against `switchboard serve --http`, for tests that need
//! exact bytes on the wire (bodies rmcp's client would refuse to send, headers it would add).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use serde_json::Value;

/// What one HTTP POST to serve's endpoint got back.
pub struct Posted {
    pub status: u16,
    pub content_type: String,
    pub session: Option<String>,
    /// The JSON-RPC messages of the body: the one JSON value, or the data of each SSE event.
    pub messages: Vec<Value>,
}

/// Send one raw HTTP request on a fresh connection and read the answer to its end.
pub fn exchange(authority: &str, request: &str) -> String {
    let mut stream = TcpStream::connect(authority).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).unwrap();
    String::from_utf8_lossy(&raw).to_string()
}

/// One POST of `body` as it is to `/mcp` on a fresh connection (`Connection: close`), read to
/// its end; `extra` is more header lines, each ending in `\r\n`.
pub fn post(authority: &str, session: Option<&str>, body: &str, extra: &str) -> Posted {
    let mut req = format!(
        "POST /mcp HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n{extra}",
        body.len()
    );
    if let Some(s) = session {
        req.push_str(&format!(
            "Mcp-Session-Id: {s}\r\nMCP-Protocol-Version: 2025-11-25\r\n"
        ));
    }
    req.push_str("\r\n");
    req.push_str(body);
    let text = exchange(authority, &req);
    let (head, mut payload) = text
        .split_once("\r\n\r\n")
        .map(|(h, b)| (h.to_string(), b.to_string()))
        .unwrap_or_else(|| panic!("no end of headers in {text:?}"));
    let status = head[9..12].parse().unwrap();
    let header = |name: &str| {
        head.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim()
                .eq_ignore_ascii_case(name)
                .then(|| v.trim().to_string())
        })
    };
    if header("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        let mut plain = String::new();
        let mut rest = payload.as_str();
        while let Some((size, after)) = rest.split_once("\r\n") {
            let size = usize::from_str_radix(size.trim(), 16).unwrap();
            if size == 0 {
                break;
            }
            plain.push_str(&after[..size]);
            rest = &after[size + 2..];
        }
        payload = plain;
    }
    let content_type = header("content-type").unwrap_or_default();
    let messages = if content_type.starts_with("text/event-stream") {
        payload
            .split("\n\n")
            .filter_map(|event| {
                let data: Vec<&str> = event
                    .lines()
                    .filter_map(|l| l.strip_prefix("data:"))
                    .map(str::trim)
                    .collect();
                serde_json::from_str(&data.join("\n")).ok()
            })
            .collect()
    } else {
        serde_json::from_str(&payload).into_iter().collect()
    };
    Posted {
        status,
        content_type,
        session: header("mcp-session-id"),
        messages,
    }
}
