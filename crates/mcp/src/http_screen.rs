//! What a Streamable HTTP server answers is screened as a stdio server's lines are (`screen`),
//! between the HTTP client and rmcp's transport, which otherwise drops an event it cannot
//! decode (the request waits out its timeout) and fails the POST of a body it cannot decode
//! (which ends the whole session, in-flight calls and all).
//!
//! - Every SSE `message` event (of a POST's stream and of the standalone GET stream) is
//!   screened as a line: a malformed response becomes an error for its id, one written oddly
//!   is rewritten as the one it means, a batch is split into one event per message.
//! - On a request's own stream, which carries its answer: an answer that is not JSON (cut
//!   short, say) fails the request at once; the stream breaking on what the server sent (not
//!   UTF-8, an event over the size limit) or ending before the answer (and before any event
//!   id it could be resumed from) answers the request with an error
//!   that says so, and what came instead, if anything (an event that is not JSON-RPC is
//!   otherwise skipped, as a stdio server's log line is); a response to some other id is
//!   dropped (rmcp stops reading the stream at the first response, so it would cost the
//!   request its own answer), and an error under no id is the request's.
//! - A JSON body is the answer to its POST's request: an error under no id is given the
//!   request's, a response to another id becomes an error saying so.
//! - A JSON body rmcp cannot decode, an answer that is neither JSON nor an event stream, and a
//!   body over rmcp's limit become an error for the request instead of a failed POST. rmcp
//!   keeps the first 256 bytes of a body it cannot decode; a body that short is screened
//!   whole (so it is rewritten, split or diagnosed as a stdio line would be), a longer one is
//!   reported with the decoder's complaint.
//!
//! A connection that fails, an HTTP error status and an expired session are left to rmcp, as
//! are the answers to `initialize` and `server/discover` that fail (`connect` words those).
//! Cheap on the hot path: one byte scan per event, nothing for a JSON body rmcp decoded.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use futures::StreamExt;
use futures::stream::BoxStream;
use http::{HeaderName, HeaderValue};
use rmcp::model::{
    ClientJsonRpcMessage, ClientRequest, ErrorData, RequestId, ServerJsonRpcMessage,
};
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use serde_json::Value;
use sse_stream::{Error as SseError, Sse};

use crate::execution::Executions;
use crate::screen::{self, Screened};

/// What rmcp's client transport reads a server's events from.
type Events = BoxStream<'static, Result<Sse, SseError>>;

/// How rmcp begins the error of a JSON body it could not decode; its body preview follows.
const UNDECODED: &str = "could not parse JSON response as ServerJsonRpcMessage: ";

/// How much of a body rmcp keeps in that error: a shorter preview is the whole body.
const PREVIEW_BYTES: usize = 256;

/// How rmcp's client words an event over its size limit (its error type is private).
const TOO_LARGE_EVENT: &str = "SSE event exceeded the maximum size";

/// How much of an unreadable answer an error quotes.
const QUOTE_CHARS: usize = 200;

/// An HTTP client whose answers are screened before rmcp's transport reads them.
#[derive(Clone)]
pub(crate) struct ScreenedHttp<C> {
    inner: C,
    /// Where a tool list's `execution` fields are noted (rmcp's listing drops them).
    executions: Arc<Executions>,
}

impl<C> ScreenedHttp<C> {
    pub(crate) fn new(inner: C, executions: Arc<Executions>) -> Self {
        Self { inner, executions }
    }
}

impl<C: StreamableHttpClient + Sync> StreamableHttpClient for ScreenedHttp<C> {
    type Error = C::Error;

    forward_to_limits!(C::Error);

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<C::Error>> {
        let attached = session_id.is_some();
        let lists_tools = matches!(
            &message,
            ClientJsonRpcMessage::Request(r) if matches!(r.request, ClientRequest::ListToolsRequest(_))
        );
        let request = match &message {
            ClientJsonRpcMessage::Request(request) => Some((
                request.id.clone(),
                matches!(
                    request.request,
                    ClientRequest::InitializeRequest(_) | ClientRequest::DiscoverRequest(_)
                ),
            )),
            _ => None,
        };
        let response = self
            .inner
            .post_message_with_response_limits(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                limits,
            )
            .await;
        if attached && forgot_the_session(&response) {
            // rmcp starts a new session and sends the message again, as for a 404.
            tracing::info!("the HTTP server no longer knows our session; starting a new one");
            return Err(StreamableHttpError::SessionExpired);
        }
        let Some((id, handshake)) = request else {
            return response;
        };
        match response {
            Ok(StreamableHttpPostResponse::Sse(events, session)) => {
                let mut events = screen_events(events, Some(id));
                if lists_tools {
                    // A tool list's `execution` fields, read before rmcp's types drop them
                    // (an answer as a JSON body reaches this layer already typed: its tools'
                    // `execution` is lost).
                    let executions = self.executions.clone();
                    events = events
                        .inspect(move |event| {
                            if let Ok(Sse {
                                data: Some(data), ..
                            }) = event
                            {
                                executions.note_tools(data.as_bytes());
                            }
                        })
                        .boxed();
                }
                Ok(StreamableHttpPostResponse::Sse(events, session))
            }
            Ok(StreamableHttpPostResponse::Json(message, session)) if !handshake => Ok(
                StreamableHttpPostResponse::Json(own_answer(message, id), session),
            ),
            Err(e) if !handshake => answer_failed_post(e, id),
            other => other,
        }
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<C::Error>> {
        self.inner
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<Events, StreamableHttpError<C::Error>> {
        // A resumed stream (`last_event_id`) may carry a request's answer, but rmcp reads it
        // as the request's stream went on: screen its events, bind none.
        self.inner
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await
            .map(|events| screen_events(events, None))
    }
}

/// Whether a POST that carried a session id was refused because the server does not know that
/// session: an error under no id that says so. The spec has a server answer 404 (rmcp starts a
/// new session then), but servers built on the MCP SDKs' example code answer 400 "Bad Request:
/// No valid session ID provided" (server-everything among them), so after such a server
/// restarts every request failed until the gateway did.
fn forgot_the_session<E>(
    response: &Result<StreamableHttpPostResponse, StreamableHttpError<E>>,
) -> bool
where
    E: std::error::Error + Send + Sync + 'static,
{
    match response {
        Ok(StreamableHttpPostResponse::Json(ServerJsonRpcMessage::Error(error), _)) => {
            error.id.is_none() && error.error.message.to_ascii_lowercase().contains("session")
        }
        _ => false,
    }
}

/// A JSON body is the answer to the request it was posted with, whatever id it gives: an
/// error under none (a server that could not read the request) is given the request's, and
/// a response to another id becomes an error (rmcp would drop it, and the request wait out its
/// timeout).
fn own_answer(message: ServerJsonRpcMessage, id: RequestId) -> ServerJsonRpcMessage {
    let other = match &message {
        ServerJsonRpcMessage::Response(response) if !same_request(&id, &response.id) => {
            &response.id
        }
        ServerJsonRpcMessage::Error(error) => match &error.id {
            None => {
                let ServerJsonRpcMessage::Error(mut error) = message else {
                    return message;
                };
                error.id = Some(id);
                return ServerJsonRpcMessage::Error(error);
            }
            Some(other) if !same_request(&id, other) => other,
            Some(_) => return message,
        },
        _ => return message,
    };
    let message = format!(
        "the server answered with a response to request {} instead",
        id_text(other)
    );
    tracing::warn!("an HTTP server's answer could not be read: {message}");
    error_for(id, message)
}

/// Whether response id `got` answers request `id`: the same, or the same number written as a
/// string (which rmcp matches too).
fn same_request(id: &RequestId, got: &RequestId) -> bool {
    match (id, got) {
        (RequestId::Number(n), RequestId::String(s)) => s.parse::<i64>() == Ok(*n),
        _ => id == got,
    }
}

/// A request's POST failed on what the server answered (not on the connection): answer the
/// request with an error saying what was wrong instead, so the session goes on. Failures of
/// the connection, HTTP statuses and an expired session are left to rmcp.
fn answer_failed_post<E: std::error::Error + Send + Sync + 'static>(
    error: StreamableHttpError<E>,
    id: RequestId,
) -> Result<StreamableHttpPostResponse, StreamableHttpError<E>> {
    let message = match &error {
        StreamableHttpError::UnexpectedServerResponse(text) if text.starts_with(UNDECODED) => {
            return Ok(undecoded_body(&text[UNDECODED.len()..], id));
        }
        StreamableHttpError::UnexpectedContentType(Some(content_type)) => {
            format!("the server answered with {content_type}, not JSON or an event stream")
        }
        StreamableHttpError::UnexpectedContentType(None) => {
            "the server answered without a Content-Type, not with JSON or an event stream"
                .to_string()
        }
        StreamableHttpError::ResponseBodyTooLarge { max_size } => format!(
            "the server's answer is longer than {} MB, more than switchboard reads",
            max_size / (1024 * 1024)
        ),
        _ => return Err(error),
    };
    tracing::warn!("an HTTP server's answer could not be read: {message}");
    Ok(StreamableHttpPostResponse::Json(
        error_for(id, message),
        None,
    ))
}

/// What to make of a JSON body rmcp could not decode, given what rmcp said: `why: body`
/// (the body cut to [`PREVIEW_BYTES`]).
fn undecoded_body(said: &str, id: RequestId) -> StreamableHttpPostResponse {
    // The body is JSON text, so it starts with a bracket; the decoder's complaint comes first.
    let (why, body) = match [": {", ": ["].iter().filter_map(|s| said.find(s)).min() {
        Some(at) => (&said[..at], &said[at + 2..]),
        None => (said, ""),
    };
    if !body.is_empty() && body.len() < PREVIEW_BYTES {
        // The whole body: screen it as a line (a stream of its messages, so a batch splits).
        let event = Sse::default().event("message").data(body);
        let events = screen_events(futures::stream::iter([Ok(event)]).boxed(), Some(id));
        return StreamableHttpPostResponse::Sse(events, None);
    }
    let message = if body.is_empty() {
        format!("the server's answer is not a JSON-RPC message ({why})")
    } else {
        format!(
            "the server's answer is not a JSON-RPC message ({why}): {}...",
            quote(body)
        )
    };
    tracing::warn!("an HTTP server's answer could not be read: {message}");
    StreamableHttpPostResponse::Json(error_for(id, message), None)
}

/// `events`, screened; when they are a request's own stream, `answer` is its id.
fn screen_events(events: Events, answer: Option<RequestId>) -> Events {
    let state = Screening {
        events,
        answer: answer.map(|id| Answer {
            id,
            answered: false,
            resumable: false,
            instead: None,
        }),
        ready: VecDeque::new(),
        done: false,
    };
    futures::stream::unfold(state, |mut state| async move {
        loop {
            if let Some(next) = state.ready.pop_front() {
                return Some((next, state));
            }
            if state.done {
                return None;
            }
            match state.events.next().await {
                Some(Ok(event)) => state.take(event),
                Some(Err(e)) => state.broke(e),
                None => state.ended(),
            }
        }
    })
    .boxed()
}

/// One stream being screened.
struct Screening {
    events: Events,
    answer: Option<Answer>,
    /// What to hand on next.
    ready: VecDeque<Result<Sse, SseError>>,
    done: bool,
}

/// The request whose answer a POST's stream carries.
struct Answer {
    id: RequestId,
    answered: bool,
    /// The server gave an event id, so rmcp may resume the stream if it ends.
    resumable: bool,
    /// What came instead of the answer, last (an event that was not JSON-RPC, a response to
    /// another request), to say should no answer come.
    instead: Option<String>,
}

impl Answer {
    /// The error that answers the request when its stream `happened` first.
    fn unanswered(&mut self, happened: &str) -> Sse {
        self.answered = true;
        let mut message = format!("the server's event stream {happened} before it answered");
        if let Some(instead) = &self.instead {
            message.push_str(&format!(" (it sent {instead})"));
        }
        tracing::warn!("an HTTP server's answer could not be read: {message}");
        error_event(self.id.clone(), message)
    }
}

impl Screening {
    /// The request still waiting for its answer on this stream.
    fn waiting(&mut self) -> Option<&mut Answer> {
        self.answer.as_mut().filter(|a| !a.answered)
    }

    fn take(&mut self, event: Sse) {
        if event.id.is_some()
            && let Some(answer) = self.answer.as_mut()
        {
            answer.resumable = true;
        }
        if matches!(event.event.as_deref(), None | Some("") | Some("message")) {
            self.message(event, true);
        } else {
            self.ready.push_back(Ok(event));
        }
    }

    /// A `message` event; `whole` when it is as the server sent it (not a part of a batch or
    /// a replacement, which are screened already).
    fn message(&mut self, event: Sse, whole: bool) {
        let Some(data) = event.data.as_deref() else {
            self.ready.push_back(Ok(event));
            return;
        };
        let (screened, seen) = screen::inspect(data.as_bytes());
        match screened {
            Screened::Fine | Screened::Refuse(_) => {}
            _ if !whole => {}
            Screened::Replace(line, fix, why) => {
                match fix {
                    screen::Fix::Error => tracing::warn!(
                        "an HTTP server sent {why}; answered its request with an error"
                    ),
                    screen::Fix::Rewrite => tracing::debug!(
                        "an HTTP server sent {why}; read it as the response it means"
                    ),
                }
                return self.message(with_data(&event, &line), false);
            }
            Screened::Drop => {
                tracing::warn!(
                    "an HTTP server sent a message nested too deeply to read; dropped it"
                );
                return;
            }
            Screened::Split(parts) => {
                tracing::debug!("an HTTP server sent a batch of {} messages", parts.len());
                for part in parts {
                    let part = match screen::check(&part) {
                        Screened::Replace(line, ..) => line,
                        Screened::Drop => continue,
                        _ => part,
                    };
                    self.message(with_data(&event, &part), false);
                }
                return;
            }
        }
        // What this event is to the request waiting on the stream, if any.
        let answer = match self.answer.as_mut() {
            Some(answer) if !answer.answered => answer,
            _ => {
                self.ready.push_back(Ok(event));
                return;
            }
        };
        match seen.response_id {
            Some((s, e)) if !same_id(&answer.id, &data[s..e]) => {
                tracing::warn!(
                    "an HTTP server sent a response to request {} on the stream of request {}; dropped it",
                    &data[s..e],
                    id_text(&answer.id)
                );
                answer.instead = Some(format!("a response to request {}", quote(&data[s..e])));
                // Its event id and retry interval still count: rmcp resumes the stream from them.
                if event.id.is_some() || event.retry.is_some() {
                    self.ready.push_back(Ok(Sse {
                        event: None,
                        data: None,
                        id: event.id.clone(),
                        retry: event.retry,
                    }));
                }
            }
            Some(_) if !seen.shaped => {
                // Its answer, cut short or otherwise not JSON.
                answer.answered = true;
                let message = format!("the server's answer is not JSON: {}", quote(data));
                tracing::warn!("an HTTP server's answer could not be read: {message}");
                let error = error_event(answer.id.clone(), message);
                self.ready.push_back(Ok(error));
            }
            Some(_) => {
                answer.answered = true;
                self.ready.push_back(Ok(event));
            }
            None if seen.unaddressed_error => {
                // An error under no id on the request's own stream is about the request.
                let Some(error) = addressed(data, &answer.id) else {
                    self.ready.push_back(Ok(event));
                    return;
                };
                answer.answered = true;
                self.ready
                    .push_back(Ok(with_data(&event, error.as_bytes())));
            }
            None if !seen.shaped => {
                // Not JSON, and no answer: rmcp skips it, as the stdio path does a log line;
                // kept to say why, should no answer come.
                tracing::debug!("an HTTP server sent an event that is not JSON-RPC");
                if !data.trim().is_empty() {
                    answer.instead = Some(format!(
                        "an event that is not a JSON-RPC message: {}",
                        quote(data)
                    ));
                }
                // rmcp skips it too, but takes its event id and retry interval (a priming
                // event, with empty data, carries the id the stream is resumed from).
                self.ready.push_back(Ok(event));
            }
            None => self.ready.push_back(Ok(event)),
        }
    }

    /// The stream failed on what the server sent (not UTF-8, not SSE, an event over rmcp's
    /// size limit): a request still waiting, which rmcp could not resume, is answered with
    /// why (rmcp would end the session over it). A failed connection is left to rmcp.
    fn broke(&mut self, error: SseError) {
        let connection = matches!(&error, SseError::Body(e)
            if !e.to_string().starts_with(TOO_LARGE_EVENT));
        match self.waiting().filter(|a| !a.resumable && !connection) {
            Some(answer) => {
                let error = answer.unanswered(&format!("broke ({error})"));
                self.ready.push_back(Ok(error));
            }
            // rmcp reads no further after an error (it resumes on a new stream, or stops).
            None => self.ready.push_back(Err(error)),
        }
        self.done = true;
    }

    /// The stream ended: a request still waiting, which rmcp will not resume, is answered with
    /// why.
    fn ended(&mut self) {
        self.done = true;
        if let Some(answer) = self.waiting().filter(|a| !a.resumable) {
            let error = answer.unanswered("ended");
            self.ready.push_back(Ok(error));
        }
    }
}

/// The error response `data`, given request id `id` (`None` when it does not decode).
fn addressed(data: &str, id: &RequestId) -> Option<String> {
    let mut error = serde_json::from_str::<serde_json::Map<String, Value>>(data).ok()?;
    error.insert("id".to_string(), id.clone().into_json_value());
    serde_json::to_string(&error).ok()
}

/// `event` with `line` (a screened message, its newline dropped) in place of its data.
fn with_data(event: &Sse, line: &[u8]) -> Sse {
    Sse {
        event: event.event.clone(),
        data: Some(String::from_utf8_lossy(line.trim_ascii_end()).into_owned()),
        id: event.id.clone(),
        retry: event.retry,
    }
}

/// Whether the raw JSON `text` is request id `id`: written as it is, or as the same number
/// written otherwise (`2.0`, `"2"`), which rmcp matches too.
fn same_id(id: &RequestId, text: &str) -> bool {
    if id_text(id) == text {
        return true;
    }
    let Ok(value) = serde_json::from_str::<Value>(text) else {
        return false;
    };
    match (id, value) {
        (RequestId::String(id), Value::String(s)) => **id == *s,
        (RequestId::Number(n), Value::Number(m)) => m.as_f64() == Some(*n as f64),
        (RequestId::Number(n), Value::String(s)) => s.parse::<i64>() == Ok(*n),
        _ => false,
    }
}

fn id_text(id: &RequestId) -> String {
    serde_json::to_string(id).unwrap_or_default()
}

/// An error response for `id` saying `message`.
fn error_for(id: RequestId, message: String) -> ServerJsonRpcMessage {
    ServerJsonRpcMessage::error(ErrorData::internal_error(message, None), Some(id))
}

/// [`error_for`] as a `message` event.
fn error_event(id: RequestId, message: String) -> Sse {
    let data = serde_json::to_string(&error_for(id, message)).unwrap_or_default();
    Sse::default().event("message").data(data)
}

/// At most [`QUOTE_CHARS`] characters of `text`.
fn quote(text: &str) -> String {
    switchboard_core::clip(text, QUOTE_CHARS).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// What rmcp's transport would read from `events` screened for request 7 (it skips an
    /// event whose data is not JSON).
    async fn read(events: Vec<Result<Sse, SseError>>) -> Vec<Value> {
        let events = futures::stream::iter(events).boxed();
        screen_events(events, Some(RequestId::Number(7)))
            .filter_map(|e| async move { serde_json::from_str(&e.unwrap().data?).ok() })
            .collect()
            .await
    }

    #[tokio::test]
    async fn event_ids_and_retry_intervals_reach_rmcp_whatever_the_data() {
        // Regression: a priming event (an id, a retry interval, empty data) was held back, so
        // rmcp resumed the stream without Last-Event-ID and without waiting the interval
        // (conformance scenario sse-retry).
        let priming = Ok(Sse::default().id("e-2").retry(500).data(""));
        let other = Ok(Sse::default()
            .event("message")
            .id("e-3")
            .data(r#"{"jsonrpc":"2.0","id":1007,"result":{}}"#));
        let events = futures::stream::iter(vec![priming, other]).boxed();
        let got: Vec<Sse> = screen_events(events, Some(RequestId::Number(7)))
            .map(Result::unwrap)
            .collect()
            .await;
        let cursors: Vec<_> = got.iter().map(|e| (e.id.clone(), e.retry)).collect();
        assert_eq!(
            &cursors[..2],
            [
                (Some("e-2".to_string()), Some(500)),
                (Some("e-3".to_string()), None)
            ]
        );
        assert!(
            got[1].data.is_none(),
            "the response to another request is dropped"
        );
    }

    fn message(data: &str) -> Result<Sse, SseError> {
        Ok(Sse::default().event("message").data(data))
    }

    fn error_message(v: &Value) -> &str {
        v["error"]["message"].as_str().unwrap_or_default()
    }

    #[tokio::test]
    async fn a_malformed_answer_on_a_stream_becomes_an_error_for_its_request() {
        // Regression: rmcp dropped each of these and the request waited out its timeout.
        let got = read(vec![message(r#"{"jsonrpc":"2.0","id":7,"error":"boom"}"#)]).await;
        assert_eq!(got.len(), 1);
        assert_eq!(got[0]["id"], 7);
        assert!(error_message(&got[0]).contains("not an error object: \"boom\""));
        // Written oddly: read as the result it means.
        let got = read(vec![message(r#"[{"id":7,"result":{"content":[]}}]"#)]).await;
        assert_eq!(
            got,
            [json!({"jsonrpc": "2.0", "id": 7, "result": {"content": []}})]
        );
        // Cut short.
        let got = read(vec![message(
            r#"{"jsonrpc":"2.0","id":7,"result":{"content":["#,
        )])
        .await;
        assert!(error_message(&got[0]).contains("answer is not JSON: {\"jsonrpc\""));
        // Not JSON at all: skipped (a log line, say), and named should no answer come.
        let got = read(vec![message("<html>"), message(r#"{"id":7,"result":{}}"#)]).await;
        assert_eq!(got, [json!({"jsonrpc": "2.0", "id": 7, "result": {}})]);
        let got = read(vec![message("<html>")]).await;
        let said = error_message(&got[0]);
        assert!(
            said.contains(
                "ended before it answered (it sent an event that is not a JSON-RPC message: <html>)"
            ),
            "{said}"
        );
    }

    #[tokio::test]
    async fn a_stream_that_ends_or_breaks_unanswered_answers_with_why() {
        let progress = r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}"#;
        let got = read(vec![message(progress)]).await;
        assert_eq!(got.len(), 2);
        assert!(error_message(&got[1]).contains("event stream ended before it answered"));
        let broken = Err(SseError::InvalidLine);
        let got = read(vec![broken]).await;
        assert!(
            error_message(&got[0]).contains("event stream broke (invalid line) before it answered")
        );
        // A failed connection is rmcp's to handle (it ends the session).
        let reset = Err(SseError::Body(Box::new(std::io::Error::other("reset"))));
        let events = futures::stream::iter(vec![reset]).boxed();
        let got: Vec<_> = screen_events(events, Some(RequestId::Number(7)))
            .collect()
            .await;
        assert!(matches!(got[..], [Err(SseError::Body(_))]));
        // Answered: nothing is added.
        let got = read(vec![message(r#"{"jsonrpc":"2.0","id":"7","result":{}}"#)]).await;
        assert_eq!(got.len(), 1);
    }

    #[tokio::test]
    async fn an_error_under_no_id_is_the_requests() {
        // Regression: rmcp could not tell whose it was; on a JSON body the request waited out
        // its timeout, on a stream the session was torn down.
        for data in [
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"unreadable"}}"#,
            r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"unreadable"}}"#,
        ] {
            let got = read(vec![message(data)]).await;
            assert_eq!(got.len(), 1, "{data}");
            assert_eq!(got[0]["id"], 7, "{data}");
            assert_eq!(got[0]["error"]["message"], "unreadable", "{data}");
            let body: ServerJsonRpcMessage = serde_json::from_str(data).unwrap();
            let got = serde_json::to_value(own_answer(body, RequestId::Number(7))).unwrap();
            assert_eq!(got["id"], 7, "{data}");
            assert_eq!(got["error"]["code"], -32600, "{data}");
        }
        let body = serde_json::from_value(json!({"jsonrpc": "2.0", "id": "x", "result": {}}));
        let got = serde_json::to_value(own_answer(body.unwrap(), RequestId::Number(7))).unwrap();
        assert!(error_message(&got).contains("a response to request \"x\" instead"));
        let body = serde_json::from_value(json!({"jsonrpc": "2.0", "id": "7", "result": {}}));
        let got = serde_json::to_value(own_answer(body.unwrap(), RequestId::Number(7))).unwrap();
        assert_eq!(got["result"], json!({}));
    }

    #[tokio::test]
    async fn a_response_to_another_request_on_a_requests_stream_is_dropped() {
        // Regression: rmcp closes a request's stream at its first response, so the request's
        // own answer after it was never read and the session was torn down.
        let got = read(vec![
            message(r#"{"jsonrpc":"2.0","id":1007,"result":{}}"#),
            message(r#"{"jsonrpc":"2.0","id":7.0,"result":{"content":[]}}"#),
        ])
        .await;
        assert_eq!(got.len(), 1);
        assert_eq!(got[0]["result"], json!({"content": []}));
        let got = read(vec![message(r#"{"jsonrpc":"2.0","id":"x","result":{}}"#)]).await;
        let said = error_message(&got[0]);
        assert!(
            said.ends_with("ended before it answered (it sent a response to request \"x\")"),
            "{said}"
        );
    }

    #[tokio::test]
    async fn an_undecodable_json_body_is_screened_when_it_is_whole() {
        let said =
            r#"unrecognized JSON-RPC message: {"jsonrpc":"2.0","id":7,"error":{"code":"x"}}"#;
        let StreamableHttpPostResponse::Sse(events, _) = undecoded_body(said, RequestId::Number(7))
        else {
            panic!("not screened");
        };
        let got: Vec<Sse> = events.map(Result::unwrap).collect().await;
        let got: Value = serde_json::from_str(got[0].data.as_deref().unwrap()).unwrap();
        assert!(error_message(&got).contains("no integer code"), "{got}");
        // Cut short: the decoder's complaint, and the start of the body.
        let long = format!(
            "EOF while parsing: {{\"id\":7,\"result\":\"{}",
            "x".repeat(300)
        );
        let StreamableHttpPostResponse::Json(got, _) = undecoded_body(&long, RequestId::Number(7))
        else {
            panic!("not answered");
        };
        let got = serde_json::to_value(got).unwrap();
        assert_eq!(got["id"], 7);
        assert!(error_message(&got).starts_with(
            "the server's answer is not a JSON-RPC message (EOF while parsing): {\"id\":7"
        ));
    }
}
