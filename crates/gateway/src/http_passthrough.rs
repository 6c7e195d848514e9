//! The HTTP gateway's pass-through: a POSTed plain tool call answered as JSON past rmcp's session.
//!
//! Every request to the MCP endpoint comes here first (after the bearer check). A POST of a
//! `tools/call` that needs nothing from the gateway but routing is written to its stdio server
//! by [`switchboard_mcp::RawCaller`] with its arguments as they came, and the upstream's result
//! goes back as the body of a plain `application/json` answer, which every Streamable HTTP
//! client must accept; a call with a progress token gets an event stream instead, its progress
//! under the client's token and then the result. It qualifies when all of these hold:
//! - the request is one rmcp would take as it is: `Content-Type` and `Accept` right, a Host
//!   this gateway answers to, no `Origin` (browsers always send one; those go to rmcp's
//!   checks), a known protocol revision before 2026-07-28 or none;
//! - it names a live session whose client said in `initialize` that it takes neither sampling
//!   nor elicitation (noted here when rmcp answers that `initialize`);
//! - the call has no task and no per-request protocol version;
//! - the tool is open and allowed without asking, declares no output schema (a result is
//!   checked against one on the session path), on a ready stdio server.
//!
//! Everything else goes to rmcp's Streamable HTTP service unchanged. A client's
//! `notifications/cancelled` for a call passing through aborts it (the upstream is told), and
//! so does the client going away.

use std::collections::HashMap;
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http_body::Frame;
use rmcp::model::ProtocolVersion;
use rmcp::transport::common::http_header::{HEADER_MCP_PROTOCOL_VERSION, HEADER_SESSION_ID};
use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::value::RawValue;
use switchboard_mcp::{Delivering, Delivery, Outcome, RawTicket};
use tokio::sync::{mpsc, oneshot};

use crate::gateway::Gateway;
use crate::http::MCP_PATH;
use crate::passthrough::{
    ClientInfo, Routed, cut, logged, plain_call, progress_note, refusal, route, send,
};

/// The largest body read here (rmcp's own default limit); larger ones go to rmcp untouched.
const BODY_LIMIT: usize = 4 * 1024 * 1024;
/// How often an event stream that has nothing to say sends a comment, so that proxies keep it.
const KEEP_ALIVE: Duration = Duration::from_secs(15);
/// Sessions are pruned of the ones rmcp has closed when the table reaches this size (and then
/// twice the size it was left at).
const FIRST_PRUNE: usize = 64;

/// What the pass-through keeps between requests.
pub(crate) struct Shortcut {
    gateway: Arc<Gateway>,
    sessions: Arc<LocalSessionManager>,
    /// Host names the endpoint answers to (rmcp's allowed hosts), without ports.
    hosts: Vec<String>,
    plain: Mutex<Plain>,
    /// Calls passing through, by session and JSON-RPC id (as JSON text), for cancellation.
    flights: Mutex<HashMap<(Arc<str>, String), RawTicket>>,
}

/// Sessions whose client takes no upcalls, each with the client's `name version` (for the
/// call log).
#[derive(Default)]
struct Plain {
    ids: HashMap<Arc<str>, Option<Arc<str>>>,
    prune_at: usize,
}

impl Shortcut {
    pub(crate) fn new(
        gateway: Arc<Gateway>,
        sessions: Arc<LocalSessionManager>,
        hosts: Vec<String>,
    ) -> Self {
        Self {
            gateway,
            sessions,
            hosts,
            plain: Mutex::new(Plain {
                ids: HashMap::new(),
                prune_at: FIRST_PRUNE,
            }),
            flights: Mutex::default(),
        }
    }

    fn is_plain(&self, session: &str) -> bool {
        lock(&self.plain).ids.contains_key(session)
    }

    /// The client of a session whose calls may pass through, as its `initialize` named it.
    fn client_of(&self, session: &str) -> Option<Arc<str>> {
        lock(&self.plain).ids.get(session).cloned().flatten()
    }

    async fn note_plain(&self, session: Arc<str>, client: Option<Arc<str>>) {
        let stale: Vec<Arc<str>> = {
            let mut plain = lock(&self.plain);
            plain.ids.insert(session, client);
            if plain.ids.len() < plain.prune_at {
                return;
            }
            plain.ids.keys().cloned().collect()
        };
        let mut gone = Vec::new();
        for id in stale {
            if !self.sessions.has_session(&id).await.unwrap_or(false) {
                gone.push(id);
            }
        }
        let mut plain = lock(&self.plain);
        for id in gone {
            plain.ids.remove(&id);
        }
        plain.prune_at = (plain.ids.len() * 2).max(FIRST_PRUNE);
    }

    fn forget(&self, session: &str) {
        lock(&self.plain).ids.remove(session);
    }

    /// The call filed under `key` is over (answered, failed or cancelled): forget it, unless
    /// the key names a newer call by now.
    fn landed(&self, key: &(Arc<str>, String), ticket: &RawTicket) {
        let mut flights = lock(&self.flights);
        if flights.get(key).is_some_and(|t| t.same(ticket)) {
            flights.remove(key);
        }
    }

    /// How many calls are passing through now (filed for cancellation and not yet over).
    pub(crate) fn in_flight(&self) -> usize {
        lock(&self.flights).len()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The middleware: answer what passes through, hand the rest to rmcp.
pub(crate) async fn layer(
    State(shortcut): State<Arc<Shortcut>>,
    request: Request,
    next: Next,
) -> Response {
    if request.method() == Method::DELETE {
        let session = session_of(request.headers());
        let mut response = next.run(request).await;
        if let Some(session) = session
            && response.status().is_success()
        {
            shortcut.forget(&session);
        }
        // rmcp says 202 for a session it has ended; clients expect 200 or 204 (the Python SDK
        // logs "Session termination failed: 202" otherwise).
        if response.status() == StatusCode::ACCEPTED {
            *response.status_mut() = StatusCode::NO_CONTENT;
            *response.body_mut() = Body::empty();
        }
        return response;
    }
    if request.method() != Method::POST
        || request.uri().path() != MCP_PATH
        || declared_length(request.headers()).is_some_and(|n| n > BODY_LIMIT)
    {
        return next.run(request).await;
    }
    let passes =
        shortcut.gateway.passes_through() && well_formed(request.headers(), &shortcut.hosts);
    let (parts, body) = request.into_parts();
    let bytes = match axum::body::to_bytes(body, BODY_LIMIT).await {
        Ok(bytes) => bytes,
        // A chunked body over the limit (a declared one went to rmcp above), or a broken one.
        Err(e) => {
            return (
                StatusCode::BAD_REQUEST,
                format!(
                    "cannot read the request body (at most {BODY_LIMIT} bytes are taken): {e}\n"
                ),
            )
                .into_response();
        }
    };
    if !passes {
        let response = next
            .run(Request::from_parts(parts, Body::from(bytes.clone())))
            .await;
        return unreadable(response, &bytes).await;
    }
    let response = post(&shortcut, parts, bytes.clone(), next).await;
    unreadable(response, &bytes).await
}

/// A POST rmcp would take as it is (see [`well_formed`]): answered here when it passes
/// through, else by rmcp.
async fn post(
    shortcut: &Arc<Shortcut>,
    parts: axum::http::request::Parts,
    bytes: Bytes,
    next: Next,
) -> Response {
    let session = session_of(&parts.headers);
    match (parse(&bytes), session) {
        (Some(Kind::Initialize { plain, client }), None) => {
            let response = next
                .run(Request::from_parts(parts, Body::from(bytes)))
                .await;
            if plain
                && response.status().is_success()
                && let Some(id) = session_of(response.headers())
            {
                shortcut.note_plain(id, client).await;
            }
            response
        }
        (Some(Kind::Call { id, params }), Some(session))
            if version_allows(&parts.headers)
                && shortcut.is_plain(&session)
                && shortcut
                    .sessions
                    .has_session(&session)
                    .await
                    .unwrap_or(false) =>
        {
            match answer(shortcut, session, id, &params).await {
                Some(response) => response,
                None => {
                    next.run(Request::from_parts(parts, Body::from(bytes)))
                        .await
                }
            }
        }
        (Some(Kind::Cancelled { request_id }), Some(session)) => {
            let flight = lock(&shortcut.flights).remove(&(session, request_id));
            match flight {
                Some(flight) => {
                    flight.cancel().await;
                    StatusCode::ACCEPTED.into_response()
                }
                None => {
                    next.run(Request::from_parts(parts, Body::from(bytes)))
                        .await
                }
            }
        }
        _ => {
            next.run(Request::from_parts(parts, Body::from(bytes)))
                .await
        }
    }
}

/// rmcp's answer to a POST whose body is not a JSON-RPC message it reads (a 415 with a line of
/// text) made what the MCP Streamable HTTP transport asks for: a 400 whose body is the JSON-RPC
/// error, -32700 Parse error or -32600 Invalid Request (with the request's id when it has one).
/// rmcp never saw the message, so the session goes on. Any other response passes unchanged.
async fn unreadable(response: Response, body: &Bytes) -> Response {
    const REFUSED: &str = "fail to deserialize request body ";
    if response.status() != StatusCode::UNSUPPORTED_MEDIA_TYPE {
        return response;
    }
    let (parts, text) = response.into_parts();
    let text = match axum::body::to_bytes(text, 64 * 1024).await {
        Ok(text) => text,
        Err(_) => return Response::from_parts(parts, Body::empty()),
    };
    let Some(refused) = std::str::from_utf8(&text)
        .ok()
        .and_then(|t| t.strip_prefix(REFUSED))
    else {
        return Response::from_parts(parts, Body::from(text));
    };
    let error = crate::rpc_screen::answer(body, refused);
    tracing::info!("a client POSTed what is not a JSON-RPC message: {error}");
    (
        StatusCode::BAD_REQUEST,
        [(header::CONTENT_TYPE, "application/json")],
        error,
    )
        .into_response()
}

/// The body length a request declares.
fn declared_length(headers: &HeaderMap) -> Option<usize> {
    headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse().ok())
}

/// The session a request or response names.
fn session_of(headers: &HeaderMap) -> Option<Arc<str>> {
    headers
        .get(HEADER_SESSION_ID)
        .and_then(|v| v.to_str().ok())
        .map(Arc::from)
}

/// What a POSTed body is, as far as the pass-through cares.
enum Kind {
    Initialize {
        plain: bool,
        client: Option<Arc<str>>,
    },
    Call {
        id: String,
        params: Box<RawValue>,
    },
    Cancelled {
        request_id: String,
    },
}

fn parse(body: &Bytes) -> Option<Kind> {
    #[derive(Deserialize)]
    struct Message<'a> {
        #[serde(borrow)]
        id: Option<&'a RawValue>,
        method: Option<&'a str>,
        #[serde(borrow)]
        params: Option<&'a RawValue>,
    }
    #[derive(Deserialize)]
    struct Initialize {
        #[serde(default)]
        capabilities: Capabilities,
        #[serde(rename = "clientInfo")]
        client_info: Option<ClientInfo>,
    }
    #[derive(Deserialize, Default)]
    struct Capabilities {
        sampling: Option<IgnoredAny>,
        elicitation: Option<IgnoredAny>,
    }
    #[derive(Deserialize)]
    struct Cancelled<'a> {
        #[serde(rename = "requestId", borrow)]
        request_id: &'a RawValue,
    }
    // A batch (an array) or anything that is not one JSON-RPC object goes to rmcp.
    let message = serde_json::from_slice::<Message>(body).ok()?;
    let params = message.params?;
    match (message.method?, message.id) {
        ("initialize", Some(_)) => {
            let init = serde_json::from_str::<Initialize>(params.get()).ok()?;
            Some(Kind::Initialize {
                plain: init.capabilities.sampling.is_none()
                    && init.capabilities.elicitation.is_none(),
                client: init.client_info.map(|c| Arc::from(c.named())),
            })
        }
        ("tools/call", Some(id)) => Some(Kind::Call {
            id: id.get().trim().to_string(),
            params: params.to_owned(),
        }),
        ("notifications/cancelled", None) => {
            let c = serde_json::from_str::<Cancelled>(params.get()).ok()?;
            Some(Kind::Cancelled {
                request_id: c.request_id.get().trim().to_string(),
            })
        }
        _ => None,
    }
}

/// Pass the call through, or `None` when it cannot (then it goes to the session).
async fn answer(
    shortcut: &Arc<Shortcut>,
    session: Arc<str>,
    id: String,
    params: &RawValue,
) -> Option<Response> {
    // A call naming its own revision (2026-07-28) is the stateless session path's.
    let call = plain_call(params).filter(|c| !c.names_revision)?;
    let client = shortcut.client_of(&session);
    let routed = route(&shortcut.gateway, &call.name)?;
    let mut log = logged(&shortcut.gateway, client.as_deref(), &call, &routed);
    let Routed {
        caller,
        tool,
        limit,
        ..
    } = routed;
    tracing::debug!(tool = %call.name, "call passes through (http)");
    let ticket = caller.ticket();
    let key = (session, id.clone());
    // Filed before the call is sent: its answer may come back before `start` returns.
    lock(&shortcut.flights).insert(key.clone(), ticket.clone());
    // The client going away drops this future or the event stream: the guard cancels the call,
    // which tells the upstream, and forgets it (a cancelled call's reply is dropped unfinished).
    let guard = CancelOnDrop {
        shortcut: shortcut.clone(),
        key: key.clone(),
        ticket: ticket.clone(),
    };
    let asks = call.progress_token.is_some();
    // Called once, on one of the two paths below.
    let mut reply = |sink: Sink| {
        Box::new(Reply {
            id: id.clone(),
            public: call.name.to_string(),
            token: call.progress_token.clone(),
            limit,
            sink,
            shortcut: shortcut.clone(),
            key: key.clone(),
            ticket: ticket.clone(),
            log: log.take(),
        })
    };
    if !asks {
        let (done, answered) = oneshot::channel();
        send(caller.start(
            &ticket,
            tool,
            &call.arguments,
            false,
            reply(Sink::Json(done)),
        ))
        .await;
        let body = match answered.await {
            Ok(body) => body,
            // Cancelled by the client: it will not read this, but the POST needs an answer.
            Err(_) => cancelled(&id)?,
        };
        drop(guard);
        return Some(([(header::CONTENT_TYPE, "application/json")], body).into_response());
    }
    // With a progress token the answer is an event stream: the progress as it comes, then the
    // result, as rmcp would send them.
    let (events, stream) = mpsc::unbounded_channel::<Bytes>();
    send(caller.start(
        &ticket,
        tool,
        &call.arguments,
        true,
        reply(Sink::Events(events)),
    ))
    .await;
    let body = Events {
        stream,
        // Not `interval`, whose first tick waits for the timer wheel's next millisecond.
        ping: tokio::time::interval_at(tokio::time::Instant::now() + KEEP_ALIVE, KEEP_ALIVE),
        _call: guard,
    };
    Some(
        (
            [
                (header::CONTENT_TYPE, "text/event-stream"),
                (header::CACHE_CONTROL, "no-cache"),
            ],
            Body::new(body),
        )
            .into_response(),
    )
}

/// Where a call's answer goes: one JSON body, or the frames of an event stream.
enum Sink {
    Json(oneshot::Sender<String>),
    Events(mpsc::UnboundedSender<Bytes>),
}

/// Where a call passing through over HTTP answers, run by the upstream's reader.
struct Reply {
    /// The client's request id, as JSON text.
    id: String,
    public: String,
    token: Option<Box<RawValue>>,
    /// The config's `max_result_tokens` for the tool, when set.
    limit: Option<u32>,
    sink: Sink,
    shortcut: Arc<Shortcut>,
    key: (Arc<str>, String),
    ticket: RawTicket,
    /// The call log's entry, when there is a log.
    log: Option<crate::call_log::Entry>,
}

impl Delivery for Reply {
    fn progress(&mut self, params: &RawValue) -> Option<Delivering> {
        if let (Sink::Events(events), Some(token)) = (&self.sink, &self.token)
            && let Some(note) = progress_note(token, params)
        {
            let _ = events.send(event(&note));
        }
        None
    }

    fn finish(mut self: Box<Self>, outcome: Outcome) -> Delivering {
        self.shortcut.landed(&self.key, &self.ticket);
        let shortened = match &outcome {
            Ok(result) => cut(result.get(), self.limit, &self.public),
            Err(_) => None,
        };
        // The result as the client gets it (cut to the config's limit, when it is over).
        let given = match &outcome {
            Ok(result) => Ok(shortened.as_deref().unwrap_or(result.get())),
            Err(e) => Err(e.to_string()),
        };
        let result = match &given {
            Ok(result) => answered(&self.id, result),
            Err(e) => answered(&self.id, &refusal(&format!("{}: {e}", self.public))),
        };
        // Logged just before the answer is on its way (the result as the client gets it, or
        // why the call failed), as over stdio: a later call of the client's is logged later.
        if let Some(log) = self.log.take() {
            log.end_raw(given.as_deref().map_err(String::as_str));
        }
        match self.sink {
            Sink::Json(done) => {
                let _ = done.send(result);
            }
            Sink::Events(events) => {
                let _ = events.send(event(&result));
            }
        }
        Box::pin(std::future::ready(()))
    }
}

/// A JSON-RPC response carrying `result` (JSON text) for the request `id` (JSON text).
fn answered(id: &str, result: &str) -> String {
    format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{result}}}")
}

/// The error answer to a call the client cancelled, as the session path words it.
fn cancelled(id: &str) -> Option<String> {
    Some(
        serde_json::json!({
            "jsonrpc": "2.0",
            "id": serde_json::from_str::<serde_json::Value>(id).ok()?,
            "error": {"code": -32603, "message": "cancelled by the client"},
        })
        .to_string(),
    )
}

/// One server-sent event carrying `message`.
fn event(message: &str) -> Bytes {
    Bytes::from(format!("data: {message}\n\n"))
}

/// The body of an event-stream answer: events as the upstream's reader sends them, and a
/// comment when there has been nothing to say for a while. Dropped (the client went away), it
/// cancels the call, which tells the upstream.
struct Events {
    stream: mpsc::UnboundedReceiver<Bytes>,
    ping: tokio::time::Interval,
    _call: CancelOnDrop,
}

impl HttpBody for Events {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match self.stream.poll_recv(cx) {
            Poll::Ready(next) => Poll::Ready(next.map(|bytes| Ok(Frame::data(bytes)))),
            Poll::Pending => match self.ping.poll_tick(cx) {
                Poll::Ready(_) => Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(b":\n\n"))))),
                Poll::Pending => Poll::Pending,
            },
        }
    }
}

/// Cancels a call still in flight when dropped (nothing for one that is over) and takes it
/// out of the calls filed for cancellation: its reply is dropped unfinished, so nothing else
/// would (the entry, and the upstream link it holds, would stay for as long as serve runs).
struct CancelOnDrop {
    shortcut: Arc<Shortcut>,
    key: (Arc<str>, String),
    ticket: RawTicket,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.ticket.cancel_soon();
        self.shortcut.landed(&self.key, &self.ticket);
    }
}

/// Whether the request's headers are ones rmcp takes without a word, from a non-browser client
/// at a Host this gateway answers to.
fn well_formed(headers: &HeaderMap, hosts: &[String]) -> bool {
    if headers.contains_key(header::ORIGIN) {
        return false;
    }
    let host_ok = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|h| hosts.iter().any(|allowed| allowed == host_name(h)));
    let json_body = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| essence(v).eq_ignore_ascii_case("application/json"));
    let (mut json, mut sse) = (false, false);
    for range in headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
    {
        if refused(range) {
            continue;
        }
        json |= essence(range).eq_ignore_ascii_case("application/json");
        sse |= essence(range).eq_ignore_ascii_case("text/event-stream");
    }
    host_ok && json_body && json && sse
}

/// A media type without its parameters.
fn essence(media: &str) -> &str {
    media.split(';').next().unwrap_or("").trim()
}

/// A media range with weight zero (`;q=0`, `;q=0.000`).
fn refused(range: &str) -> bool {
    range.split(';').skip(1).any(|p| {
        p.trim()
            .strip_prefix("q=")
            .or_else(|| p.trim().strip_prefix("Q="))
            .is_some_and(|q| q.trim().parse::<f32>().is_ok_and(|q| q == 0.0))
    })
}

/// The host of a Host header, without its port (`[::1]:8080` gives `[::1]`).
fn host_name(host: &str) -> &str {
    let host = host.trim();
    if host.starts_with('[') {
        return host.find(']').map_or(host, |end| &host[..=end]);
    }
    host.rsplit_once(':').map_or(host, |(name, _)| name)
}

/// A known protocol revision before 2026-07-28 (which has no sessions), or none (2025-03-26).
fn version_allows(headers: &HeaderMap) -> bool {
    match headers.get(HEADER_MCP_PROTOCOL_VERSION) {
        None => true,
        Some(v) => v.to_str().is_ok_and(|v| {
            v < ProtocolVersion::STANDARD_HEADERS.as_str()
                && ProtocolVersion::KNOWN_VERSIONS
                    .iter()
                    .any(|k| k.as_str() == v)
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(
                header::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                v.parse().unwrap(),
            );
        }
        h
    }

    const BASE: [(&str, &str); 3] = [
        ("host", "127.0.0.1:8931"),
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
    ];

    #[test]
    fn only_plain_requests_at_a_known_host_qualify() {
        let hosts = vec!["127.0.0.1".to_string(), "[::1]".to_string()];
        assert!(well_formed(&headers(&BASE), &hosts));
        let mut browser = BASE.to_vec();
        browser.push(("origin", "http://127.0.0.1:8931"));
        assert!(!well_formed(&headers(&browser), &hosts));
        let mut rebound = BASE.to_vec();
        rebound[0] = ("host", "evil.example:8931");
        assert!(!well_formed(&headers(&rebound), &hosts));
        let mut v6 = BASE.to_vec();
        v6[0] = ("host", "[::1]:9");
        assert!(well_formed(&headers(&v6), &hosts));
        let mut no_sse = BASE.to_vec();
        no_sse[2] = ("accept", "application/json");
        assert!(!well_formed(&headers(&no_sse), &hosts));
        let mut zero = BASE.to_vec();
        zero[2] = ("accept", "application/json;q=0, text/event-stream");
        assert!(!well_formed(&headers(&zero), &hosts));
        let mut text = BASE.to_vec();
        text[1] = ("content-type", "text/plain");
        assert!(!well_formed(&headers(&text), &hosts));
    }

    #[test]
    fn stateless_and_unknown_revisions_go_to_rmcp() {
        assert!(version_allows(&HeaderMap::new()));
        assert!(version_allows(&headers(&[(
            "mcp-protocol-version",
            "2025-06-18"
        )])));
        assert!(!version_allows(&headers(&[(
            "mcp-protocol-version",
            "2026-07-28"
        )])));
        assert!(!version_allows(&headers(&[(
            "mcp-protocol-version",
            "1999-01-01"
        )])));
    }

    #[test]
    fn bodies_are_told_apart() {
        let body = |s: &str| Bytes::from(s.to_string());
        assert!(matches!(
            parse(&body(
                r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{"sampling":{}}}}"#
            )),
            Some(Kind::Initialize {
                plain: false,
                client: None
            })
        ));
        match parse(&body(
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{},"clientInfo":{"name":"cc","version":"2.1"}}}"#,
        )) {
            Some(Kind::Initialize {
                plain: true,
                client,
            }) => assert_eq!(client.as_deref(), Some("cc 2.1")),
            _ => panic!("a plain initialize"),
        }
        match parse(&body(
            r#"{"jsonrpc":"2.0","id":"a b","method":"tools/call","params":{"name":"x"}}"#,
        )) {
            Some(Kind::Call { id, .. }) => assert_eq!(id, "\"a b\""),
            _ => panic!("a call"),
        }
        match parse(&body(
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}"#,
        )) {
            Some(Kind::Cancelled { request_id }) => assert_eq!(request_id, "7"),
            _ => panic!("a cancellation"),
        }
        assert!(
            parse(&body(
                r#"[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}]"#
            ))
            .is_none()
        );
        assert!(parse(&body("not json")).is_none());
    }
}
