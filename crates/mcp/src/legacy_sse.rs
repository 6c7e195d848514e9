//! The legacy HTTP+SSE transport (MCP 2024-11-05), for servers not yet on Streamable HTTP: a
//! GET opens an event stream whose first `endpoint` event names the URL to POST messages to;
//! answers and the server's own messages arrive as `message` events on the stream. Used for an
//! entry with `type = "sse"`, and when a URL refuses Streamable HTTP's POST `initialize` with
//! 400, 404 or 405 (the backwards-compatibility check of the 2025-03-26 revision).
//!
//! Events are read with a size cap; a POST that fails fails its request at once (an error
//! response for its id), and the session ends when the stream does, like a stdio server that
//! exits, so the supervisor restarts it.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt as _;
use futures::channel::mpsc as fmpsc;
use http::HeaderMap;
use rmcp::RoleClient;
use rmcp::model::{ErrorCode, ErrorData, JsonRpcError, JsonRpcMessage, JsonRpcVersion2_0};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use switchboard_core::Secret;

use crate::execution::Executions;
use crate::headers_helper::Refresh;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// The largest event read; a bigger one ends the session (as a stdio line over the limit does).
const MAX_EVENT_BYTES: usize = 16 << 20;

/// How long the server has to name its POST endpoint after the stream opens (legacy servers
/// send it at once; a Streamable HTTP server that opens a stream on GET never does).
const ENDPOINT_WAIT: Duration = Duration::from_secs(5);

/// Why a legacy SSE connection could not be opened, in words for the user.
#[derive(Debug)]
pub(crate) struct OpenError(pub String);

/// The two halves rmcp's session reads and writes, and the guard that stops the stream reader
/// and the poster when the session drops them.
pub(crate) struct Opened {
    pub sink: fmpsc::UnboundedSender<TxJsonRpcMessage<RoleClient>>,
    pub stream: Incoming,
}

/// Messages from the event stream; dropping it stops the reader.
pub(crate) struct Incoming {
    rx: mpsc::UnboundedReceiver<RxJsonRpcMessage<RoleClient>>,
    _stop: tokio_util::sync::DropGuard,
}

impl futures::Stream for Incoming {
    type Item = RxJsonRpcMessage<RoleClient>;

    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        self.rx.poll_recv(cx)
    }
}

/// The configured headers as a header map.
pub(crate) fn header_map(headers: &[(String, Secret)]) -> Result<HeaderMap, OpenError> {
    let mut map = HeaderMap::new();
    for (name, value) in headers {
        let (name, value) = crate::connect::header(name, value).map_err(OpenError)?;
        map.insert(name, value);
    }
    Ok(map)
}

/// Open the event stream at `url`, wait for its `endpoint` event, and start the reader and the
/// poster (whose log lines name `server`). With a `headersHelper` (`refresh`), each POST sends
/// its latest headers, and one the server refuses (401 or 403) runs it again and is sent once
/// more, as over Streamable HTTP.
pub(crate) async fn open(
    http: &reqwest::Client,
    url: &str,
    headers: HeaderMap,
    server: &str,
    refresh: Option<Arc<Refresh>>,
    executions: Arc<Executions>,
) -> Result<Opened, OpenError> {
    let base = reqwest::Url::parse(url).map_err(|e| OpenError(format!("bad URL: {e}")))?;
    let response = http
        .get(base.clone())
        .headers(headers.clone())
        .header(http::header::ACCEPT, "text/event-stream")
        .send()
        .await
        .map_err(|e| OpenError(crate::connect::reqwest_detail(&e)))?;
    let status = response.status();
    if !status.is_success() {
        return Err(OpenError(format!(
            "the legacy SSE endpoint answered GET with HTTP {status}"
        )));
    }
    let content_type = response
        .headers()
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    if !content_type.starts_with("text/event-stream") {
        return Err(OpenError(format!(
            "GET answered with {} instead of an event stream",
            if content_type.is_empty() {
                "no Content-Type"
            } else {
                &content_type
            }
        )));
    }
    let mut events = Events::new(response.bytes_stream().boxed());
    let endpoint = tokio::time::timeout(ENDPOINT_WAIT, async {
        loop {
            match events.next().await {
                Some(Ok(event)) if event.name == "endpoint" => return Ok(event.data),
                Some(Ok(_)) => continue,
                Some(Err(e)) => return Err(OpenError(e)),
                None => {
                    return Err(OpenError(
                        "the event stream ended before naming its endpoint".into(),
                    ));
                }
            }
        }
    })
    .await
    .map_err(|_| {
        OpenError(format!(
            "the event stream named no endpoint within {} s",
            ENDPOINT_WAIT.as_secs()
        ))
    })??;
    let endpoint = base
        .join(endpoint.trim())
        .map_err(|e| OpenError(format!("the endpoint event is not a URL ({e})")))?;
    // A server may only direct our messages to itself: the same scheme, host and port.
    if endpoint.origin() != base.origin() {
        return Err(OpenError(format!(
            "the endpoint event names another origin ({}); refused",
            endpoint.origin().ascii_serialization()
        )));
    }

    let stop = CancellationToken::new();
    let (in_tx, in_rx) = mpsc::unbounded_channel();
    let (out_tx, out_rx) = fmpsc::unbounded();
    let server: Arc<str> = Arc::from(server);
    tokio::spawn(read(
        events,
        in_tx.clone(),
        out_tx.clone(),
        stop.clone(),
        server.clone(),
        executions,
    ));
    tokio::spawn(post(
        http.clone(),
        endpoint,
        Headers {
            fixed: headers,
            refresh,
        },
        out_rx,
        in_tx,
        stop.clone(),
        server,
    ));
    Ok(Opened {
        sink: out_tx,
        stream: Incoming {
            rx: in_rx,
            _stop: stop.drop_guard(),
        },
    })
}

/// Hand each `message` event to the session, screened as a stdio server's line is (`screen`),
/// until the stream ends, breaks or is not wanted. `back` takes the answers to server requests
/// nobody can read; `executions` notes what tool lists say of `execution`, which rmcp's types
/// drop.
async fn read(
    mut events: Events,
    tx: mpsc::UnboundedSender<RxJsonRpcMessage<RoleClient>>,
    back: fmpsc::UnboundedSender<TxJsonRpcMessage<RoleClient>>,
    stop: CancellationToken,
    server: Arc<str>,
    executions: Arc<Executions>,
) {
    let deliver = |line: &[u8]| match serde_json::from_slice::<RxJsonRpcMessage<RoleClient>>(line) {
        Ok(message) => {
            executions.note_tools(line);
            tx.send(message).is_ok()
        }
        Err(e) => {
            tracing::warn!(%server, "legacy SSE: a message event is not MCP ({e}); ignored");
            true
        }
    };
    let mut replaced = Vec::new();
    loop {
        let event = tokio::select! {
            e = events.next() => e,
            _ = stop.cancelled() => return,
        };
        match event {
            Some(Ok(event)) if event.name == "message" => {
                let open = match crate::screen::screen(event.data.as_bytes(), &mut replaced) {
                    crate::screen::Next::Read(line) => deliver(line),
                    crate::screen::Next::Skip => true,
                    crate::screen::Next::Split(lines) => lines.iter().all(|l| deliver(l)),
                    crate::screen::Next::Answer(answer) => {
                        if let Ok(answer) = serde_json::from_slice(&answer) {
                            let _ = back.unbounded_send(answer);
                        }
                        true
                    }
                };
                if !open {
                    return;
                }
            }
            Some(Ok(_)) => {}
            Some(Err(e)) => {
                tracing::warn!(%server, "legacy SSE: the event stream broke: {e}");
                break;
            }
            None => {
                tracing::info!(%server, "legacy SSE: the server closed its event stream");
                break;
            }
        }
    }
    // The session ends with the stream; the poster stops too.
    stop.cancel();
}

/// The headers each POST sends: the entry's, or a `headersHelper`'s latest.
struct Headers {
    fixed: HeaderMap,
    refresh: Option<Arc<Refresh>>,
}

/// POST each message the session sends, in order. A request whose POST fails is answered with
/// an error at once, so its caller does not wait out its timeout.
async fn post(
    http: reqwest::Client,
    endpoint: reqwest::Url,
    headers: Headers,
    mut rx: fmpsc::UnboundedReceiver<TxJsonRpcMessage<RoleClient>>,
    answers: mpsc::UnboundedSender<RxJsonRpcMessage<RoleClient>>,
    stop: CancellationToken,
    server: Arc<str>,
) {
    loop {
        let message = tokio::select! {
            m = rx.next() => m,
            _ = stop.cancelled() => return,
        };
        let Some(message) = message else { return };
        let send = |headers: HeaderMap| {
            http.post(endpoint.clone())
                .headers(headers)
                .json(&message)
                .send()
        };
        let sent = match &headers.refresh {
            None => send(headers.fixed.clone()).await,
            Some(refresh) => {
                let (generation, now) = refresh.header_map();
                let first = send(now).await;
                let refused = matches!(&first, Ok(r) if matches!(r.status().as_u16(), 401 | 403));
                if refused && refresh.renew(generation).await {
                    send(refresh.header_map().1).await
                } else {
                    first
                }
            }
        };
        let failure = match sent {
            Ok(r) if r.status().is_success() => None,
            Ok(r) => Some(format!(
                "the server answered the POST with HTTP {}",
                r.status()
            )),
            Err(e) => Some(crate::connect::reqwest_detail(&e)),
        };
        let Some(why) = failure else { continue };
        tracing::warn!(%server, "legacy SSE: {why}");
        if let JsonRpcMessage::Request(request) = &message {
            let error = JsonRpcMessage::Error(JsonRpcError {
                jsonrpc: JsonRpcVersion2_0,
                id: Some(request.id.clone()),
                error: ErrorData::new(ErrorCode::INTERNAL_ERROR, why, None),
            });
            if answers.send(error).is_err() {
                return;
            }
        }
    }
}

/// One server-sent event.
#[derive(Debug, PartialEq, Eq)]
struct Event {
    /// `event:`, or `message` when there is none.
    name: String,
    /// The `data:` lines joined by newlines.
    data: String,
}

/// Server-sent events from a byte stream, each at most [`MAX_EVENT_BYTES`].
struct Events {
    body: futures::stream::BoxStream<'static, reqwest::Result<bytes::Bytes>>,
    parser: Parser,
}

impl Events {
    fn new(body: futures::stream::BoxStream<'static, reqwest::Result<bytes::Bytes>>) -> Self {
        Self {
            body,
            parser: Parser::default(),
        }
    }

    async fn next(&mut self) -> Option<Result<Event, String>> {
        loop {
            match self.parser.event() {
                Ok(Some(event)) => return Some(Ok(event)),
                Ok(None) => {}
                Err(e) => return Some(Err(e)),
            }
            match self.body.next().await? {
                Ok(chunk) => self.parser.feed(&chunk),
                Err(e) => return Some(Err(crate::connect::reqwest_detail(&e))),
            }
        }
    }
}

/// The SSE line protocol: `field: value` lines, an empty line ends an event.
#[derive(Default)]
struct Parser {
    buf: Vec<u8>,
    /// Where the next line starts in `buf`.
    start: usize,
    name: Option<String>,
    data: Option<String>,
    /// Bytes of the event being read.
    size: usize,
    /// The last line ended with a CR at the end of the data: an LF next belongs to it.
    after_cr: bool,
}

impl Parser {
    fn feed(&mut self, bytes: &[u8]) {
        if self.start > 0 {
            self.buf.drain(..self.start);
            self.start = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// The next complete event in what was fed, if any.
    fn event(&mut self) -> Result<Option<Event>, String> {
        loop {
            let rest = &self.buf[self.start..];
            let Some(end) = rest.iter().position(|&b| b == b'\n' || b == b'\r') else {
                if rest.len() + self.size > MAX_EVENT_BYTES {
                    return Err(format!(
                        "an event is over the {} MB limit",
                        MAX_EVENT_BYTES >> 20
                    ));
                }
                return Ok(None);
            };
            // The LF of a CRLF whose CR ended the last chunk.
            if end == 0 && rest[0] == b'\n' && std::mem::take(&mut self.after_cr) {
                self.start += 1;
                continue;
            }
            self.after_cr = false;
            let skip = match (rest[end], rest.get(end + 1)) {
                (b'\r', Some(b'\n')) => 2,
                (b'\r', None) => {
                    // It may be the first half of a CRLF that has not arrived yet.
                    self.after_cr = true;
                    1
                }
                _ => 1,
            };
            let line = String::from_utf8_lossy(&rest[..end]).into_owned();
            self.start += end + skip;
            self.size += end + skip;
            if self.size > MAX_EVENT_BYTES {
                return Err(format!(
                    "an event is over the {} MB limit",
                    MAX_EVENT_BYTES >> 20
                ));
            }
            if line.is_empty() {
                self.size = 0;
                let name = self.name.take();
                if let Some(data) = self.data.take() {
                    return Ok(Some(Event {
                        name: name.unwrap_or_else(|| "message".to_string()),
                        data,
                    }));
                }
                continue;
            }
            if line.starts_with(':') {
                continue;
            }
            let (field, value) = match line.split_once(':') {
                Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
                None => (line.as_str(), ""),
            };
            match field {
                "event" => self.name = Some(value.to_string()),
                "data" => match &mut self.data {
                    Some(data) => {
                        data.push('\n');
                        data.push_str(value);
                    }
                    None => self.data = Some(value.to_string()),
                },
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(chunks: &[&[u8]]) -> Vec<Result<Event, String>> {
        let mut p = Parser::default();
        let mut out = Vec::new();
        for chunk in chunks {
            p.feed(chunk);
            loop {
                match p.event() {
                    Ok(Some(e)) => out.push(Ok(e)),
                    Ok(None) => break,
                    Err(e) => {
                        out.push(Err(e));
                        return out;
                    }
                }
            }
        }
        out
    }

    fn ev(name: &str, data: &str) -> Result<Event, String> {
        Ok(Event {
            name: name.into(),
            data: data.into(),
        })
    }

    #[test]
    fn events_split_anywhere_and_every_line_ending_parse_alike() {
        let text = b"event: endpoint\r\ndata: /message?sessionId=1\r\n\r\n: a comment\n\ndata: {\"a\":\ndata: 1}\n\nevent:x\rdata:y\r\r";
        let whole = events(&[text]);
        assert_eq!(
            whole,
            vec![
                ev("endpoint", "/message?sessionId=1"),
                ev("message", "{\"a\":\n1}"),
                ev("x", "y"),
            ]
        );
        for split in 1..text.len() {
            assert_eq!(
                events(&[&text[..split], &text[split..]]),
                whole,
                "split at {split}"
            );
        }
    }

    #[test]
    fn an_endless_event_is_refused_at_the_limit() {
        let mut p = Parser::default();
        p.feed(b"data: ");
        let chunk = vec![b'x'; 1 << 20];
        let mut refused = false;
        for _ in 0..20 {
            p.feed(&chunk);
            if p.event().is_err() {
                refused = true;
                break;
            }
        }
        assert!(refused);
        assert!(p.buf.len() <= MAX_EVENT_BYTES + (2 << 20));
    }
}
