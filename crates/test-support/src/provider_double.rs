//! `ProviderDouble`: a fake model provider for tests (a fake, not a model). A real HTTP/1.1
//! server on 127.0.0.1 that speaks the Anthropic Messages, OpenAI Chat Completions, OpenAI
//! Responses and Gemini `generateContent` wire formats, non-streamed and streamed (SSE), replays
//! scripted model turns, records every request body, and checks each one: with
//! [`crate::validator::validate_request`] and with the conversation rules the providers enforce
//! (every tool use answered in the very next message, by id (Gemini: by name), in order, and
//! nothing else answered). A request that breaks a rule gets HTTP 400 with
//! the violations as the provider's error message, as the real API would refuse it, and the
//! violation is kept for [`ProviderDouble::assert_valid`].
//!
//! Scripted tool uses name tools through [`Pick`], resolved against the `tools` array of the
//! request being answered, so tests need not know hashed public names.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use switchboard_core::Dialect;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

use crate::validator::validate_request;

/// How a scripted call names its tool.
#[derive(Clone, Debug)]
pub enum Pick {
    /// This exact name (also for names that are not in the tools array).
    Exact(String),
    /// The first tool in the request whose name ends with this.
    EndsWith(String),
    /// The first tool in the request whose name contains this (for names the host hashed).
    Contains(String),
}

/// One scripted tool use.
#[derive(Clone, Debug)]
pub struct Call {
    /// Which tool.
    pub tool: Pick,
    /// The arguments.
    pub args: Value,
    /// Send these characters as the arguments instead (OpenAI only: its arguments are text).
    pub raw_args: Option<String>,
}

impl Call {
    /// The tool whose public name ends with `suffix`, with `args`.
    pub fn ends_with(suffix: &str, args: Value) -> Self {
        Call {
            tool: Pick::EndsWith(suffix.into()),
            args,
            raw_args: None,
        }
    }

    /// The tool whose public name contains `part`, with `args`.
    pub fn containing(part: &str, args: Value) -> Self {
        Call {
            tool: Pick::Contains(part.into()),
            args,
            raw_args: None,
        }
    }

    /// A tool by exact name.
    pub fn exact(name: &str, args: Value) -> Self {
        Call {
            tool: Pick::Exact(name.into()),
            args,
            raw_args: None,
        }
    }
}

/// One scripted model turn.
#[derive(Clone, Debug)]
pub enum Turn {
    /// Answer with text and stop.
    Text(String),
    /// Ask for these tool uses (in one reply), with optional text before them.
    Tools {
        /// Text before the tool uses.
        text: Option<String>,
        /// The calls, in order.
        calls: Vec<Call>,
    },
    /// Play `turn` with the model's reasoning before it: Anthropic gets a signed `thinking`
    /// block, OpenAI Chat a `reasoning_content`, OpenAI Responses a `reasoning` item with the
    /// words as its summary (Gemini leaves it out). As the real APIs do, the double then
    /// refuses a later request whose assistant message with these tool uses lost its
    /// reasoning or changed it (Anthropic: the thinking block must open the message,
    /// signature and words unchanged; OpenAI Chat, as DeepSeek: the reasoning must come back
    /// within the turn; Responses: the item must come back within the turn, by its id, right
    /// before the item that followed it).
    Reasoned {
        /// The reasoning's words.
        reasoning: String,
        /// What the model answers after it.
        turn: Box<Turn>,
    },
    /// Answer with an HTTP error and this body (retry tests); `retry_after` sets the header.
    HttpError {
        /// Status code.
        status: u16,
        /// Response body.
        body: Value,
        /// `retry-after` seconds.
        retry_after: Option<u32>,
    },
}

impl Turn {
    /// Tool uses with no text.
    pub fn tools(calls: Vec<Call>) -> Self {
        Turn::Tools { text: None, calls }
    }

    /// This turn with the model's reasoning before it (see [`Turn::Reasoned`]).
    pub fn reasoned(self, reasoning: &str) -> Self {
        Turn::Reasoned {
            reasoning: reasoning.into(),
            turn: Box::new(self),
        }
    }
}

/// One recorded request.
#[derive(Clone, Debug)]
pub struct Recorded {
    /// Path of the request line.
    pub path: String,
    /// Headers, lower-case names.
    pub headers: Vec<(String, String)>,
    /// The raw body bytes.
    pub bytes: Vec<u8>,
    /// The body parsed (Null when it was not JSON).
    pub body: Value,
}

#[derive(Default)]
struct State {
    turns: std::collections::VecDeque<Turn>,
    requests: Vec<Recorded>,
    violations: Vec<String>,
    served: usize,
    /// Reasoning the double gave, by the id of each tool use it came with: its words and
    /// its Anthropic signature or Responses reasoning item id.
    reasoned: std::collections::HashMap<String, (String, String)>,
    /// Responses: each reasoning item the double gave, by id, and the id of the item that
    /// followed it in that response.
    following: std::collections::HashMap<String, String>,
    /// Responses: refuse every reasoning item sent back, as the API does when responses are
    /// not stored (see [`ProviderDouble::forget_items`]).
    forget_items: bool,
}

/// The fake provider. Dropping it stops the server.
pub struct ProviderDouble {
    dialect: Dialect,
    addr: std::net::SocketAddr,
    state: Arc<Mutex<State>>,
    task: JoinHandle<()>,
}

impl Drop for ProviderDouble {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl ProviderDouble {
    /// Start a double for `dialect` (Anthropic or OpenAI Chat) that plays `turns` in order.
    /// A request after the script ran out gets HTTP 500 and a violation.
    pub async fn start(dialect: Dialect, turns: Vec<Turn>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local addr");
        let state = Arc::new(Mutex::new(State {
            turns: turns.into(),
            ..State::default()
        }));
        let st = state.clone();
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let st = st.clone();
                tokio::spawn(async move {
                    if let Err(e) = serve(dialect, stream, st).await {
                        eprintln!("provider double: connection error: {e}");
                    }
                });
            }
        });
        ProviderDouble {
            dialect,
            addr,
            state,
            task,
        }
    }

    /// The base URL to give the client (`--base-url`): with `/v1` for OpenAI, `/v1beta` for
    /// Gemini, none for Anthropic (whose client appends `/v1/messages`).
    pub fn base_url(&self) -> String {
        match self.dialect {
            Dialect::OpenAiChat | Dialect::OpenAiResponses => format!("http://{}/v1", self.addr),
            Dialect::Gemini => format!("http://{}/v1beta", self.addr),
            Dialect::Anthropic => format!("http://{}", self.addr),
        }
    }

    /// Every request received so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.lock().requests.clone()
    }

    /// Every rule broken so far, one line each.
    pub fn violations(&self) -> Vec<String> {
        self.lock().violations.clone()
    }

    /// From now on refuse, as the Responses API does for an organisation whose responses are
    /// not stored (zero data retention), every reasoning item sent back by id, and ask for
    /// none within the turn.
    pub fn forget_items(&self) {
        self.lock().forget_items = true;
    }

    /// Scripted turns not yet played.
    pub fn remaining(&self) -> usize {
        self.lock().turns.len()
    }

    /// Fail the test when any request broke a rule.
    pub fn assert_valid(&self) {
        let v = self.violations();
        assert!(
            v.is_empty(),
            "requests broke provider rules:\n{}",
            v.join("\n")
        );
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Read one HTTP/1.1 request, answer it, close.
async fn serve(
    dialect: Dialect,
    mut stream: TcpStream,
    state: Arc<Mutex<State>>,
) -> std::io::Result<()> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 16384];
    let header_end = loop {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Ok(());
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
    };
    let head = String::from_utf8_lossy(&buf[..header_end]).to_string();
    let mut lines = head.split("\r\n");
    let request_line = lines.next().unwrap_or_default();
    let path = request_line
        .split_whitespace()
        .nth(1)
        .unwrap_or("/")
        .to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = buf[header_end..].to_vec();
    while body.len() < length {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    let parsed: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    if let Some(kind) = counting(dialect, &path) {
        let response = count_response(dialect, kind, &parsed, &state, &path, &headers, &body);
        stream.write_all(&response).await?;
        stream.shutdown().await?;
        return Ok(());
    }
    let (turn, problems) = {
        let mut st = state.lock().unwrap_or_else(|p| p.into_inner());
        let mut problems = check(dialect, &path, &parsed);
        problems.extend(reasoning_problems(dialect, &parsed, &st));
        if parsed.is_null() {
            problems.push("request body is not JSON".into());
        }
        let n = st.requests.len();
        st.requests.push(Recorded {
            path: path.clone(),
            headers,
            bytes: body,
            body: parsed.clone(),
        });
        for p in &problems {
            st.violations.push(format!("request {n}: {p}"));
        }
        let turn = if problems.is_empty() {
            let t = st.turns.pop_front();
            if t.is_none() {
                st.violations
                    .push(format!("request {n}: the script has no turn left for it"));
            }
            t
        } else {
            None
        };
        st.served += 1;
        (turn, problems)
    };
    let streamed = match dialect {
        Dialect::Gemini => path.contains(":streamGenerateContent"),
        _ => parsed.get("stream").and_then(Value::as_bool) == Some(true),
    };
    let response = match (turn, problems.is_empty()) {
        (_, false) => json_response(
            400,
            &error_body(dialect, "invalid_request_error", &problems.join("; ")),
            None,
        ),
        (None, true) => json_response(
            500,
            &error_body(dialect, "api_error", "the provider double's script ran out"),
            None,
        ),
        (
            Some(Turn::HttpError {
                status,
                body,
                retry_after,
            }),
            true,
        ) => json_response(status, &body, retry_after),
        (Some(turn), true) => {
            let mut st = state.lock().unwrap_or_else(|p| p.into_inner());
            let n = st.served;
            let reply = Reply::from_turn(&turn, &parsed, dialect, n);
            if let Some(r) = &reply.reasoning {
                let mark = match dialect {
                    Dialect::OpenAiResponses => reply.reasoning_id(),
                    _ => reply.signature(),
                };
                for (id, ..) in &reply.calls {
                    st.reasoned.insert(id.clone(), (r.clone(), mark.clone()));
                }
                if dialect == Dialect::OpenAiResponses
                    && let Some(next) = reply.responses_output().get(1)
                {
                    let next = next["id"].as_str().unwrap_or_default().to_string();
                    st.following.insert(reply.reasoning_id(), next);
                }
            }
            drop(st);
            if streamed {
                sse_response(&match dialect {
                    Dialect::Anthropic => reply.anthropic_events(&parsed),
                    Dialect::OpenAiChat => reply.openai_events(&parsed),
                    Dialect::OpenAiResponses => reply.responses_events(),
                    Dialect::Gemini => reply.gemini_events(),
                })
            } else {
                let body = match dialect {
                    Dialect::Anthropic => reply.anthropic(&parsed),
                    Dialect::OpenAiChat => reply.openai(&parsed),
                    Dialect::OpenAiResponses => reply.responses(),
                    Dialect::Gemini => reply.gemini(),
                };
                json_response(200, &body, None)
            }
        }
    };
    stream.write_all(&response).await?;
    stream.shutdown().await?;
    Ok(())
}

/// The counting endpoint `path` is, for `dialect`, if it is one.
fn counting(dialect: Dialect, path: &str) -> Option<&'static str> {
    match dialect {
        Dialect::Anthropic if path.ends_with("/v1/messages/count_tokens") => Some("count_tokens"),
        Dialect::OpenAiResponses if path.ends_with("/responses/input_tokens") => {
            Some("input_tokens")
        }
        Dialect::Gemini if path.contains(":countTokens") => Some("countTokens"),
        _ => None,
    }
}

/// A counting request answered: its body's length / 4 as the input tokens (the same rule as
/// the double's usage), after checking the fields each API's counting endpoint takes. Recorded
/// with the other requests; it plays no scripted turn.
fn count_response(
    dialect: Dialect,
    kind: &str,
    parsed: &Value,
    state: &Arc<Mutex<State>>,
    path: &str,
    headers: &[(String, String)],
    bytes: &[u8],
) -> Vec<u8> {
    let mut problems = Vec::new();
    let refused: &[&str] = match dialect {
        Dialect::Anthropic => &["max_tokens", "stream", "temperature", "metadata"],
        _ => &["max_output_tokens", "stream", "store", "temperature"],
    };
    match dialect {
        Dialect::Gemini => {
            let inner = &parsed["generateContentRequest"];
            if !inner["model"]
                .as_str()
                .is_some_and(|m| m.starts_with("models/"))
            {
                problems
                    .push("countTokens: generateContentRequest.model must be models/NAME".into());
            }
            if !inner["contents"].is_array() {
                problems.push("countTokens: generateContentRequest.contents is required".into());
            }
        }
        _ => {
            for key in refused {
                if parsed.get(key).is_some() {
                    problems.push(format!("{kind}: `{key}` is not taken here"));
                }
            }
            if !parsed["model"].is_string() {
                problems.push(format!("{kind}: `model` is required"));
            }
        }
    }
    let tokens = parsed.to_string().len() as u64 / 4;
    let mut st = state.lock().unwrap_or_else(|p| p.into_inner());
    let n = st.requests.len();
    st.requests.push(Recorded {
        path: path.to_string(),
        headers: headers.to_vec(),
        bytes: bytes.to_vec(),
        body: parsed.clone(),
    });
    for p in &problems {
        st.violations.push(format!("request {n}: {p}"));
    }
    if !problems.is_empty() {
        return json_response(
            400,
            &error_body(dialect, "invalid_request_error", &problems.join("; ")),
            None,
        );
    }
    let body = match dialect {
        Dialect::Gemini => json!({"totalTokens": tokens}),
        Dialect::OpenAiResponses => {
            json!({"object": "response.input_tokens", "input_tokens": tokens})
        }
        _ => json!({"input_tokens": tokens}),
    };
    json_response(200, &body, None)
}

fn error_body(dialect: Dialect, kind: &str, message: &str) -> Value {
    match dialect {
        Dialect::Anthropic => {
            json!({"type": "error", "error": {"type": kind, "message": message}})
        }
        Dialect::Gemini => {
            json!({"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}})
        }
        _ => json!({"error": {"message": message, "type": kind, "param": null, "code": null}}),
    }
}

fn json_response(status: u16, body: &Value, retry_after: Option<u32>) -> Vec<u8> {
    let bytes = serde_json::to_vec(body).unwrap_or_default();
    let mut head = format!(
        "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n",
        bytes.len()
    );
    if let Some(s) = retry_after {
        head.push_str(&format!("retry-after: {s}\r\n"));
    }
    head.push_str("\r\n");
    let mut out = head.into_bytes();
    out.extend_from_slice(&bytes);
    out
}

fn sse_response(events: &[(Option<&str>, Value)]) -> Vec<u8> {
    let mut out = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n".to_vec();
    for (name, data) in events {
        if let Some(n) = name {
            out.extend_from_slice(format!("event: {n}\n").as_bytes());
        }
        let text = match data {
            Value::String(s) if s == "[DONE]" => s.clone(),
            other => serde_json::to_string(other).unwrap_or_default(),
        };
        out.extend_from_slice(format!("data: {text}\n\n").as_bytes());
    }
    out
}

/// The request's rules: the documented ones (validator) and the conversation pairing.
fn check(dialect: Dialect, path: &str, body: &Value) -> Vec<String> {
    let mut out: Vec<String> = validate_request(dialect, body)
        .iter()
        .map(ToString::to_string)
        .collect();
    let path_ok = match dialect {
        Dialect::Anthropic => path == "/v1/messages",
        Dialect::OpenAiChat => path == "/v1/chat/completions",
        Dialect::OpenAiResponses => path == "/v1/responses",
        Dialect::Gemini => {
            path.starts_with("/v1beta/models/")
                && (path.ends_with(":generateContent")
                    || path.ends_with(":streamGenerateContent?alt=sse"))
        }
    };
    if !path_ok {
        out.push(format!(
            "POST to {path}, not the {} endpoint",
            dialect.as_str()
        ));
    }
    let list = |key: &str| {
        body.get(key)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    match dialect {
        Dialect::Anthropic => anthropic_pairing(&list("messages"), &mut out),
        Dialect::OpenAiChat => openai_pairing(&list("messages"), &mut out),
        Dialect::OpenAiResponses => responses_pairing(&list("input"), &mut out),
        Dialect::Gemini => gemini_pairing(&list("contents"), &mut out),
    }
    out
}

/// OpenAI Responses: every `function_call` item is answered by one `function_call_output` with
/// its `call_id`, after it and before the next message, in the order of the calls.
fn responses_pairing(items: &[Value], out: &mut Vec<String>) {
    let mut expected: std::collections::VecDeque<String> = Default::default();
    for (i, item) in items.iter().enumerate() {
        match item.get("type").and_then(Value::as_str) {
            Some("function_call") => {
                if item["arguments"].as_str().is_none() {
                    out.push(format!(
                        "input[{i}]: function_call arguments must be a string"
                    ));
                }
                expected.push_back(item["call_id"].as_str().unwrap_or("").to_string());
            }
            Some("function_call_output") => {
                let id = item["call_id"].as_str().unwrap_or("");
                match expected.pop_front() {
                    Some(want) if want == id => {}
                    Some(want) => out.push(format!(
                        "input[{i}]: function_call_output for {id:?}, expected {want:?}"
                    )),
                    None => out.push(format!(
                        "input[{i}]: output {id:?} answers no function_call"
                    )),
                }
                if !item["output"].is_string() && !item["output"].is_array() {
                    out.push(format!("input[{i}]: output must be a string or an array"));
                }
            }
            _ => {
                // A message: only an assistant message (or the model's reasoning) may sit
                // among unanswered calls (a response's items are replayed in order).
                if !expected.is_empty()
                    && item["role"] != "assistant"
                    && item["type"] != "reasoning"
                {
                    out.push(format!(
                        "input[{i}]: message while calls {expected:?} are unanswered"
                    ));
                    expected.clear();
                }
            }
        }
    }
    if !expected.is_empty() {
        out.push(format!("unanswered function calls {expected:?}"));
    }
}

/// Gemini: a `model` turn with `functionCall` parts is followed by a `user` turn with one
/// `functionResponse` per call, same names, same order.
fn gemini_pairing(contents: &[Value], out: &mut Vec<String>) {
    let parts_of = |c: &Value| c["parts"].as_array().cloned().unwrap_or_default();
    let mut expected: Vec<String> = Vec::new();
    for (i, c) in contents.iter().enumerate() {
        let parts = parts_of(c);
        if parts.is_empty() {
            out.push(format!("contents[{i}]: no parts"));
        }
        let names = |key: &str| -> Vec<String> {
            parts
                .iter()
                .filter_map(|p| p.get(key))
                .map(|f| f["name"].as_str().unwrap_or("").to_string())
                .collect()
        };
        let responses = names("functionResponse");
        if responses != expected {
            out.push(format!(
                "contents[{i}]: function responses {responses:?} do not answer the calls {expected:?} in order"
            ));
        }
        if !expected.is_empty() && c["role"] != "user" {
            out.push(format!(
                "contents[{i}]: function responses must be in a user turn"
            ));
        }
        expected = if c["role"] == "model" {
            names("functionCall")
        } else {
            Vec::new()
        };
    }
    if !expected.is_empty() {
        out.push(format!("unanswered function calls {expected:?}"));
    }
}

/// What Anthropic and DeepSeek refuse about reasoning the double gave (see [`Turn::Reasoned`]):
/// an assistant message with those tool uses must bring it back unchanged (Anthropic: as the
/// message's first block; OpenAI Chat: as `reasoning_content`, within the turn under way), and
/// a thinking block must carry a signature the double made for those words.
fn reasoning_problems(dialect: Dialect, body: &Value, st: &State) -> Vec<String> {
    let reasoned = &st.reasoned;
    let mut out = Vec::new();
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    match dialect {
        Dialect::Anthropic => {
            for (i, m) in messages.iter().enumerate() {
                let Some(blocks) = m["content"].as_array() else {
                    continue;
                };
                for (j, b) in blocks.iter().enumerate() {
                    if b["type"] == "thinking" {
                        let known = reasoned.values().any(|(words, sig)| {
                            b["thinking"] == json!(words) && b["signature"] == json!(sig)
                        });
                        if !known {
                            out.push(format!(
                                "messages.{i}.content.{j}: Invalid `signature` in `thinking` block"
                            ));
                        }
                    }
                }
                let thought = blocks
                    .iter()
                    .filter(|b| b["type"] == "tool_use")
                    .find_map(|b| b["id"].as_str().and_then(|id| reasoned.get(id)));
                if let Some((words, sig)) = thought {
                    let first = &blocks[0];
                    if first["type"] != "thinking"
                        || first["thinking"] != json!(words)
                        || first["signature"] != json!(sig)
                    {
                        out.push(format!(
                            "messages.{i}.content.0.type: Expected `thinking` or `redacted_thinking`, but found `{}`. When `thinking` is enabled, an assistant message with tool use must start with its thinking block",
                            first["type"].as_str().unwrap_or("?")
                        ));
                    }
                }
            }
        }
        Dialect::OpenAiChat => {
            let turn_start = messages
                .iter()
                .rposition(|m| m["role"] == "user")
                .unwrap_or(0);
            for (i, m) in messages.iter().enumerate().skip(turn_start) {
                let thought = m["tool_calls"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .find_map(|c| c["id"].as_str().and_then(|id| reasoned.get(id)));
                if let Some((words, _)) = thought
                    && m["reasoning_content"] != json!(words)
                {
                    out.push(format!(
                        "Missing `reasoning_content` field in the assistant message at message index {i}"
                    ));
                }
            }
        }
        Dialect::OpenAiResponses => responses_reasoning(body, st, &mut out),
        _ => {}
    }
    out
}

/// Responses: a reasoning item sent back must be one the double gave, by id, followed at once
/// by the item that followed it (the API's "provided without its required following item");
/// within the turn under way, a call the double reasoned about must come with its reasoning
/// item (as DeepSeek's Responses gateways require; OpenAI's own API takes it missing and
/// reasons worse). With [`ProviderDouble::forget_items`], every reasoning item is refused and
/// none is asked for.
fn responses_reasoning(body: &Value, st: &State, out: &mut Vec<String>) {
    let items = body["input"].as_array().cloned().unwrap_or_default();
    for (i, item) in items.iter().enumerate() {
        if item["type"] != "reasoning" {
            continue;
        }
        let id = item["id"].as_str().unwrap_or_default();
        if st.forget_items {
            out.push(format!(
                "Item with id '{id}' not found. Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input."
            ));
            continue;
        }
        match st.following.get(id) {
            None => out.push(format!("Item with id '{id}' not found.")),
            Some(next) if items.get(i + 1).map(|n| &n["id"]) != Some(&json!(next)) => out.push(
                format!("Item '{id}' of type 'reasoning' was provided without its required following item."),
            ),
            Some(_) => {}
        }
    }
    if st.forget_items {
        return;
    }
    let turn_start = items
        .iter()
        .rposition(|m| m["role"] == "user" && m["type"].as_str().unwrap_or("message") == "message")
        .unwrap_or(0);
    for item in &items[turn_start..] {
        let Some((_, rs)) = item["call_id"]
            .as_str()
            .filter(|_| item["type"] == "function_call")
            .and_then(|id| st.reasoned.get(id))
        else {
            continue;
        };
        let sent = items[turn_start..]
            .iter()
            .any(|r| r["type"] == "reasoning" && r["id"] == json!(rs));
        if !sent {
            out.push(format!(
                "The `reasoning_text` in the thinking mode must be passed back to the API (item {rs} for call {})",
                item["call_id"].as_str().unwrap_or_default()
            ));
        }
    }
}

/// Anthropic: a user message right after an assistant message with `tool_use` blocks starts
/// with exactly one `tool_result` per use, same ids, same order; no `tool_result` elsewhere;
/// roles alternate and the first is `user`.
fn anthropic_pairing(messages: &[Value], out: &mut Vec<String>) {
    let blocks = |m: &Value| -> Vec<Value> {
        match m.get("content") {
            Some(Value::Array(a)) => a.clone(),
            Some(Value::String(s)) => vec![json!({"type": "text", "text": s})],
            _ => Vec::new(),
        }
    };
    let mut expected: Vec<String> = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        let role = m.get("role").and_then(Value::as_str).unwrap_or("");
        let want_role = if i % 2 == 0 { "user" } else { "assistant" };
        if role != want_role {
            out.push(format!(
                "messages[{i}]: role {role:?}, expected {want_role:?} (roles must alternate)"
            ));
        }
        let b = blocks(m);
        if b.is_empty() {
            out.push(format!("messages[{i}]: empty content"));
        }
        let results: Vec<String> = b
            .iter()
            .filter(|x| x["type"] == "tool_result")
            .filter_map(|x| x["tool_use_id"].as_str().map(String::from))
            .collect();
        let leading: Vec<String> = b
            .iter()
            .take_while(|x| x["type"] == "tool_result")
            .filter_map(|x| x["tool_use_id"].as_str().map(String::from))
            .collect();
        if role == "user" {
            if leading != expected || results.len() != leading.len() {
                out.push(format!(
                    "messages[{i}]: tool_result ids {results:?} (leading {leading:?}) do not answer the previous tool_use ids {expected:?} in order"
                ));
            }
            for x in b.iter().filter(|x| x["type"] == "tool_result") {
                if !matches!(
                    x.get("content"),
                    None | Some(Value::String(_)) | Some(Value::Array(_))
                ) {
                    out.push(format!(
                        "messages[{i}]: tool_result content must be a string or an array"
                    ));
                }
            }
            expected.clear();
        } else {
            expected = b
                .iter()
                .filter(|x| x["type"] == "tool_use")
                .filter_map(|x| x["id"].as_str().map(String::from))
                .collect();
            for x in b.iter().filter(|x| x["type"] == "tool_use") {
                if !x["input"].is_object() {
                    out.push(format!("messages[{i}]: tool_use input must be an object"));
                }
            }
        }
    }
    if !expected.is_empty() {
        out.push(format!(
            "the last message has unanswered tool uses {expected:?}"
        ));
    }
}

/// OpenAI Chat: after an assistant message with `tool_calls`, one `tool` message per call,
/// same ids, same order, before any other message; no stray `tool` messages.
fn openai_pairing(messages: &[Value], out: &mut Vec<String>) {
    let mut expected: std::collections::VecDeque<String> = Default::default();
    for (i, m) in messages.iter().enumerate() {
        let role = m.get("role").and_then(Value::as_str).unwrap_or("");
        if role == "tool" {
            let id = m["tool_call_id"].as_str().unwrap_or("");
            match expected.pop_front() {
                Some(want) if want == id => {}
                Some(want) => out.push(format!(
                    "messages[{i}]: tool message for {id:?}, expected {want:?} (results must follow calls in order)"
                )),
                None => out.push(format!("messages[{i}]: tool message {id:?} answers no tool call")),
            }
            if !m["content"].is_string() && !m["content"].is_array() {
                out.push(format!(
                    "messages[{i}]: tool message content must be a string"
                ));
            }
            continue;
        }
        if !expected.is_empty() {
            out.push(format!(
                "messages[{i}]: {role} message while tool calls {expected:?} are unanswered"
            ));
            expected.clear();
        }
        if role == "assistant"
            && let Some(calls) = m.get("tool_calls").and_then(Value::as_array)
        {
            for c in calls {
                if c["function"]["arguments"].as_str().is_none() {
                    out.push(format!(
                        "messages[{i}]: tool call arguments must be a string"
                    ));
                }
                expected.push_back(c["id"].as_str().unwrap_or("").to_string());
            }
        }
    }
    if !expected.is_empty() {
        out.push(format!(
            "the last message has unanswered tool calls {expected:?}"
        ));
    }
}

/// A scripted turn with names resolved against one request.
struct Reply {
    reasoning: Option<String>,
    text: Option<String>,
    calls: Vec<(String, String, Value, String)>, // id, name, args, args text
    model: String,
    n: usize,
    input_tokens: u64,
}

impl Reply {
    fn from_turn(turn: &Turn, request: &Value, dialect: Dialect, n: usize) -> Reply {
        // Anthropic and Responses: tools[].name; Chat: tools[].function.name; Gemini:
        // tools[].functionDeclarations[].name.
        let names: Vec<String> = request["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|t| {
                let mut v: Vec<&Value> = t
                    .get("functionDeclarations")
                    .and_then(Value::as_array)
                    .map(|d| d.iter().filter_map(|f| f.get("name")).collect())
                    .unwrap_or_default();
                v.extend(t.get("name").or_else(|| t.pointer("/function/name")));
                v
            })
            .filter_map(|n| n.as_str().map(String::from))
            .collect();
        let input_tokens = (serde_json::to_string(request).unwrap_or_default().len() / 4) as u64;
        let model = request["model"].as_str().unwrap_or("double").to_string();
        let (reasoning, turn) = match turn {
            Turn::Reasoned { reasoning, turn } => (Some(reasoning.clone()), turn.as_ref()),
            other => (None, other),
        };
        let (text, calls) = match turn {
            Turn::Text(t) => (Some(t.clone()), Vec::new()),
            Turn::Tools { text, calls } => (text.clone(), calls.clone()),
            Turn::HttpError { .. } | Turn::Reasoned { .. } => (None, Vec::new()),
        };
        let calls = calls
            .iter()
            .enumerate()
            .map(|(k, c)| {
                let name = match &c.tool {
                    Pick::Exact(s) => s.clone(),
                    Pick::EndsWith(suffix) => names
                        .iter()
                        .find(|n| n.ends_with(suffix.as_str()))
                        .cloned()
                        .unwrap_or_else(|| format!("no-tool-ends-with-{suffix}")),
                    Pick::Contains(part) => names
                        .iter()
                        .find(|n| n.contains(part.as_str()))
                        .cloned()
                        .unwrap_or_else(|| format!("no-tool-containing-{part}")),
                };
                let id = match dialect {
                    Dialect::Anthropic => format!("toolu_{n:02}_{k}"),
                    _ => format!("call_{n:02}_{k}"),
                };
                let text = c
                    .raw_args
                    .clone()
                    .unwrap_or_else(|| serde_json::to_string(&c.args).unwrap_or_default());
                (id, name, c.args.clone(), text)
            })
            .collect();
        Reply {
            reasoning,
            text,
            calls,
            model,
            n,
            input_tokens,
        }
    }

    /// The signature of this reply's thinking block (the double's own, checked on return).
    fn signature(&self) -> String {
        format!("double-signature-{}", self.n)
    }

    /// The id of this reply's Responses reasoning item.
    fn reasoning_id(&self) -> String {
        format!("rs_{}", self.n)
    }

    fn output_tokens(&self) -> u64 {
        let t = self.text.as_deref().map_or(0, str::len)
            + self
                .calls
                .iter()
                .map(|c| c.3.len() + c.1.len())
                .sum::<usize>();
        (t / 4 + 1) as u64 + self.reasoning_tokens()
    }

    /// The tokens of this reply's reasoning (part of its output tokens).
    fn reasoning_tokens(&self) -> u64 {
        self.reasoning
            .as_deref()
            .map_or(0, |r| (r.len() / 4 + 1) as u64)
    }

    fn anthropic(&self, _req: &Value) -> Value {
        let mut content = Vec::new();
        if let Some(r) = &self.reasoning {
            content.push(json!({"type": "thinking", "thinking": r, "signature": self.signature()}));
        }
        if let Some(t) = &self.text {
            content.push(json!({"type": "text", "text": t}));
        }
        for (id, name, args, _) in &self.calls {
            content.push(json!({"type": "tool_use", "id": id, "name": name, "input": args}));
        }
        json!({
            "id": format!("msg_double_{}", self.n), "type": "message", "role": "assistant",
            "model": self.model, "content": content,
            "stop_reason": if self.calls.is_empty() { "end_turn" } else { "tool_use" },
            "stop_sequence": null,
            "usage": {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens(),
                      "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
        })
    }

    fn anthropic_events(&self, _req: &Value) -> Vec<(Option<&'static str>, Value)> {
        let mut ev = vec![(
            Some("message_start"),
            json!({"type": "message_start", "message": {
                "id": format!("msg_double_{}", self.n), "type": "message", "role": "assistant",
                "model": self.model, "content": [], "stop_reason": null, "stop_sequence": null,
                "usage": {"input_tokens": self.input_tokens, "output_tokens": 1}}}),
        )];
        ev.push((Some("ping"), json!({"type": "ping"})));
        let mut index = 0;
        if let Some(r) = &self.reasoning {
            ev.push((
                Some("content_block_start"),
                json!({"type": "content_block_start", "index": index, "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
            ));
            for piece in split(r, 3) {
                ev.push((
                    Some("content_block_delta"),
                    json!({"type": "content_block_delta", "index": index, "delta": {"type": "thinking_delta", "thinking": piece}}),
                ));
            }
            ev.push((
                Some("content_block_delta"),
                json!({"type": "content_block_delta", "index": index, "delta": {"type": "signature_delta", "signature": self.signature()}}),
            ));
            ev.push((
                Some("content_block_stop"),
                json!({"type": "content_block_stop", "index": index}),
            ));
            index += 1;
        }
        if let Some(t) = &self.text {
            ev.push((
                Some("content_block_start"),
                json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}),
            ));
            for piece in split(t, 3) {
                ev.push((
                    Some("content_block_delta"),
                    json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": piece}}),
                ));
            }
            ev.push((
                Some("content_block_stop"),
                json!({"type": "content_block_stop", "index": index}),
            ));
            index += 1;
        }
        for (id, name, _, text) in &self.calls {
            ev.push((
                Some("content_block_start"),
                json!({"type": "content_block_start", "index": index, "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}),
            ));
            for piece in split(text, 2) {
                ev.push((
                    Some("content_block_delta"),
                    json!({"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": piece}}),
                ));
            }
            ev.push((
                Some("content_block_stop"),
                json!({"type": "content_block_stop", "index": index}),
            ));
            index += 1;
        }
        ev.push((
            Some("message_delta"),
            json!({"type": "message_delta", "delta": {"stop_reason": if self.calls.is_empty() { "end_turn" } else { "tool_use" }, "stop_sequence": null}, "usage": {"output_tokens": self.output_tokens()}}),
        ));
        ev.push((Some("message_stop"), json!({"type": "message_stop"})));
        ev
    }

    fn openai(&self, _req: &Value) -> Value {
        let calls: Vec<Value> = self
            .calls
            .iter()
            .map(|(id, name, _, text)| json!({"id": id, "type": "function", "function": {"name": name, "arguments": text}}))
            .collect();
        let mut message = json!({"role": "assistant", "content": self.text, "refusal": null});
        if let Some(r) = &self.reasoning {
            message["reasoning_content"] = json!(r);
        }
        if !calls.is_empty() {
            message["tool_calls"] = Value::Array(calls);
        }
        json!({
            "id": format!("chatcmpl-double-{}", self.n), "object": "chat.completion", "created": 0,
            "model": self.model,
            "choices": [{"index": 0, "message": message, "logprobs": null,
                         "finish_reason": if self.calls.is_empty() { "stop" } else { "tool_calls" }}],
            "usage": {"prompt_tokens": self.input_tokens, "completion_tokens": self.output_tokens(),
                      "total_tokens": self.input_tokens + self.output_tokens(),
                      "completion_tokens_details": {"reasoning_tokens": self.reasoning_tokens()}}
        })
    }

    fn openai_events(&self, req: &Value) -> Vec<(Option<&'static str>, Value)> {
        let id = format!("chatcmpl-double-{}", self.n);
        let chunk = |delta: Value, finish: Value| {
            json!({"id": id, "object": "chat.completion.chunk", "created": 0, "model": self.model,
                   "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}]})
        };
        let mut ev = vec![(
            None,
            chunk(json!({"role": "assistant", "content": ""}), Value::Null),
        )];
        if let Some(r) = &self.reasoning {
            for piece in split(r, 3) {
                ev.push((
                    None,
                    chunk(json!({"reasoning_content": piece}), Value::Null),
                ));
            }
        }
        if let Some(t) = &self.text {
            for piece in split(t, 3) {
                ev.push((None, chunk(json!({"content": piece}), Value::Null)));
            }
        }
        for (k, (cid, name, _, text)) in self.calls.iter().enumerate() {
            ev.push((
                None,
                chunk(
                    json!({"tool_calls": [{"index": k, "id": cid, "type": "function", "function": {"name": name, "arguments": ""}}]}),
                    Value::Null,
                ),
            ));
            for piece in split(text, 2) {
                ev.push((
                    None,
                    chunk(
                        json!({"tool_calls": [{"index": k, "function": {"arguments": piece}}]}),
                        Value::Null,
                    ),
                ));
            }
        }
        ev.push((
            None,
            chunk(
                json!({}),
                json!(if self.calls.is_empty() {
                    "stop"
                } else {
                    "tool_calls"
                }),
            ),
        ));
        if req.pointer("/stream_options/include_usage") == Some(&Value::Bool(true)) {
            ev.push((
                None,
                json!({"id": id, "object": "chat.completion.chunk", "created": 0, "model": self.model, "choices": [],
                       "usage": {"prompt_tokens": self.input_tokens, "completion_tokens": self.output_tokens(),
                                 "total_tokens": self.input_tokens + self.output_tokens(),
                                 "completion_tokens_details": {"reasoning_tokens": self.reasoning_tokens()}}}),
            ));
        }
        ev.push((None, Value::String("[DONE]".into())));
        ev
    }
}

impl Reply {
    fn responses_output(&self) -> Vec<Value> {
        let mut output = Vec::new();
        if let Some(r) = &self.reasoning {
            output.push(json!({"type": "reasoning", "id": self.reasoning_id(),
                "summary": [{"type": "summary_text", "text": r}]}));
        }
        if let Some(t) = &self.text {
            output.push(json!({"type": "message", "id": format!("msg_{}", self.n), "status": "completed",
                "role": "assistant", "content": [{"type": "output_text", "text": t, "annotations": []}]}));
        }
        for (k, (id, name, _, text)) in self.calls.iter().enumerate() {
            output.push(
                json!({"type": "function_call", "id": format!("fc_{}_{k}", self.n),
                "call_id": id, "name": name, "arguments": text, "status": "completed"}),
            );
        }
        output
    }

    fn responses(&self) -> Value {
        json!({
            "id": format!("resp_double_{}", self.n), "object": "response", "created_at": 0,
            "status": "completed", "model": self.model, "output": self.responses_output(),
            "usage": {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens(),
                      "total_tokens": self.input_tokens + self.output_tokens(),
                      "input_tokens_details": {"cached_tokens": 0},
                      "output_tokens_details": {"reasoning_tokens": self.reasoning_tokens()}}
        })
    }

    fn responses_events(&self) -> Vec<(Option<&'static str>, Value)> {
        let id = format!("resp_double_{}", self.n);
        let mut ev = vec![(
            Some("response.created"),
            json!({"type": "response.created", "response": {"id": id, "object": "response",
                "status": "in_progress", "model": self.model, "output": []}}),
        )];
        for (i, item) in self.responses_output().into_iter().enumerate() {
            let item_id = item["id"].clone();
            let mut empty = item.clone();
            if item["type"] == "reasoning" {
                empty["summary"] = json!([]);
                ev.push((
                    Some("response.output_item.added"),
                    json!({"type": "response.output_item.added", "output_index": i, "item": empty}),
                ));
                let words = item["summary"][0]["text"]
                    .as_str()
                    .unwrap_or("")
                    .to_string();
                ev.push((
                    Some("response.reasoning_summary_part.added"),
                    json!({"type": "response.reasoning_summary_part.added", "item_id": item_id,
                    "output_index": i, "summary_index": 0, "part": {"type": "summary_text", "text": ""}}),
                ));
                for piece in split(&words, 3) {
                    ev.push((
                        Some("response.reasoning_summary_text.delta"),
                        json!({"type": "response.reasoning_summary_text.delta", "item_id": item_id,
                        "output_index": i, "summary_index": 0, "delta": piece}),
                    ));
                }
                ev.push((
                    Some("response.reasoning_summary_text.done"),
                    json!({"type": "response.reasoning_summary_text.done", "item_id": item_id,
                    "output_index": i, "summary_index": 0, "text": words}),
                ));
            } else if item["type"] == "message" {
                empty["content"] = json!([]);
                empty["status"] = json!("in_progress");
                ev.push((
                    Some("response.output_item.added"),
                    json!({"type": "response.output_item.added", "output_index": i, "item": empty}),
                ));
                let text = item["content"][0]["text"]
                    .as_str()
                    .unwrap_or("")
                    .to_string();
                for piece in split(&text, 3) {
                    ev.push((
                        Some("response.output_text.delta"),
                        json!({"type": "response.output_text.delta",
                        "item_id": item_id, "output_index": i, "content_index": 0, "delta": piece}),
                    ));
                }
                ev.push((
                    Some("response.output_text.done"),
                    json!({"type": "response.output_text.done",
                    "item_id": item_id, "output_index": i, "content_index": 0, "text": text}),
                ));
            } else {
                empty["arguments"] = json!("");
                empty["status"] = json!("in_progress");
                ev.push((
                    Some("response.output_item.added"),
                    json!({"type": "response.output_item.added", "output_index": i, "item": empty}),
                ));
                let args = item["arguments"].as_str().unwrap_or("").to_string();
                for piece in split(&args, 2) {
                    ev.push((
                        Some("response.function_call_arguments.delta"),
                        json!({"type": "response.function_call_arguments.delta",
                        "item_id": item_id, "output_index": i, "delta": piece}),
                    ));
                }
                ev.push((
                    Some("response.function_call_arguments.done"),
                    json!({"type": "response.function_call_arguments.done",
                    "item_id": item_id, "output_index": i, "arguments": args}),
                ));
            }
            ev.push((
                Some("response.output_item.done"),
                json!({"type": "response.output_item.done", "output_index": i, "item": item}),
            ));
        }
        ev.push((
            Some("response.completed"),
            json!({"type": "response.completed", "response": self.responses()}),
        ));
        ev
    }

    fn gemini_usage(&self) -> Value {
        json!({"promptTokenCount": self.input_tokens, "candidatesTokenCount": self.output_tokens(),
               "totalTokenCount": self.input_tokens + self.output_tokens()})
    }

    fn gemini(&self) -> Value {
        let mut parts = Vec::new();
        if let Some(t) = &self.text {
            parts.push(json!({"text": t}));
        }
        for (_, name, args, _) in &self.calls {
            parts.push(json!({"functionCall": {"name": name, "args": args}}));
        }
        json!({
            "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": self.gemini_usage(), "modelVersion": self.model
        })
    }

    fn gemini_events(&self) -> Vec<(Option<&'static str>, Value)> {
        let mut ev = Vec::new();
        if let Some(t) = &self.text {
            for piece in split(t, 3) {
                ev.push((None, json!({"candidates": [{"content": {"role": "model", "parts": [{"text": piece}]}, "index": 0}],
                    "modelVersion": self.model})));
            }
        }
        for (_, name, args, _) in &self.calls {
            ev.push((None, json!({"candidates": [{"content": {"role": "model", "parts": [{"functionCall": {"name": name, "args": args}}]}, "index": 0}],
                "modelVersion": self.model})));
        }
        ev.push((None, json!({"candidates": [{"content": {"role": "model", "parts": [{"text": ""}]}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": self.gemini_usage(), "modelVersion": self.model})));
        ev
    }
}

/// `s` in `n` roughly equal pieces on char boundaries (at least one piece).
fn split(s: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = s.chars().collect();
    if chars.is_empty() {
        return vec![String::new()];
    }
    let size = chars.len().div_ceil(n.max(1));
    chars.chunks(size).map(|c| c.iter().collect()).collect()
}
