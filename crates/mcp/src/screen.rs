//! Every line a stdio server writes is screened here before anything reads it (the raw call
//! path, then rmcp's session): a message the decoders cannot take would otherwise be dropped,
//! and the request behind it would wait until its timeout with no reason given.
//!
//! - A line nested deeper than serde_json reads (128 levels) is replaced by a JSON-RPC error for
//!   the same id, so the request (a `tools/list` with one very deep schema, say) fails at once
//!   and says why.
//! - A response that is there but malformed (an `error` that is not a JSON-RPC error object, a
//!   code that is not an integer, no message, both a result and an error, neither, no
//!   `"jsonrpc":"2.0"`) is replaced by a well-formed error for its id that names the problem;
//!   one that is only written oddly (an id with JSON escapes, `"error": null` beside its result,
//!   no `jsonrpc` member) is rewritten as the well-formed response it means, its result kept.
//!
//! - A batch (an array of messages, which MCP 2025-03-26 allowed) is split into its messages,
//!   each screened as a line of its own.
//! - A request from the server that rmcp cannot decode is answered with an error under its own
//!   id (rmcp answers under none, and the server waits).
//! - On a stdio server's reader ([`screen_ids`]), a response's id is checked against the
//!   requests outstanding (see `ids`): one written differently from its request's is read
//!   under the request's, one nobody sent is noted for the timeout it will cause.
//!
//! Cheap on the hot path: one byte scan per line, noting the top-level members on the way;
//! only a response line that looks wrong there (or any error response, which is rare) is
//! parsed again.

use rmcp::RoleClient;
use rmcp::service::RxJsonRpcMessage;
use serde::{Deserialize, Deserializer};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::ids::Ids;

/// serde_json's recursion limit: a 129th nested array or object fails to decode.
const MAX_DEPTH: usize = 128;

/// The JSON-RPC error code for a message that cannot be parsed.
const PARSE_ERROR: i32 = -32700;

/// The JSON-RPC error code for a request that is not a valid one.
const INVALID_REQUEST: i32 = -32600;

/// The JSON-RPC error code given to a malformed response that has no usable code of its own.
const MALFORMED: i32 = -32603;

/// How much of a malformed value an error message quotes.
const QUOTE_CHARS: usize = 200;

/// What to do with one line of a server's output.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Screened {
    /// Readable as it is.
    Fine,
    /// Unreadable as it is: this line instead, what it is, and why, for the log.
    Replace(Vec<u8>, Fix, &'static str),
    /// Too deep and no id to answer: drop it.
    Drop,
    /// A request from the server that rmcp's session cannot decode (so it would answer it
    /// with an error under no id, and the server would wait on it): drop it, and answer the
    /// server with this error for its id instead.
    Refuse(Vec<u8>),
    /// A JSON-RPC batch (an array of messages; MCP 2025-03-26 allowed them, and neither the
    /// raw path nor rmcp reads one): its messages, one line each.
    Split(Vec<Vec<u8>>),
}

/// What a reader does with a line, after [`screen`].
pub(crate) enum Next<'a> {
    /// Read this (the line itself, or its replacement).
    Read(&'a [u8]),
    /// Nothing: the line is dropped.
    Skip,
    /// Write this back to the server: the line was a request nobody can read.
    Answer(Vec<u8>),
    /// The line was a batch: read these lines (its messages, each screened and ending in a
    /// newline) in its place.
    Split(Vec<Vec<u8>>),
}

/// What replaces a line.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Fix {
    /// An error response for the line's id, naming the problem.
    Error,
    /// The response the line means, written well-formed (nothing lost).
    Rewrite,
}

/// What a reader should do with `line`: read it or its replacement (kept in `replaced`), skip
/// it (a too-deep message with no id), or answer the server (an unreadable request). Logs
/// what it changed.
pub(crate) fn screen<'a>(line: &'a [u8], replaced: &'a mut Vec<u8>) -> Next<'a> {
    screen_ids(line, replaced, None)
}

/// [`screen`], each response's id also checked against the requests outstanding in `ids`
/// (see `ids`): one written differently from its request's is read under the request's, one
/// no request was sent under is noted. The one entry point of both stdio readers.
pub(crate) fn screen_ids<'a>(
    line: &'a [u8],
    replaced: &'a mut Vec<u8>,
    ids: Option<&Ids>,
) -> Next<'a> {
    let (screened, seen) = inspect(line);
    match screened {
        Screened::Fine => {
            if let Some(ids) = ids
                && seen.shaped
                && let Some(id) = seen.response_id
                && let Some(read) = ids.answered(line, id)
            {
                *replaced = read;
                return Next::Read(&replaced[..]);
            }
            Next::Read(line)
        }
        Screened::Replace(reply, fix, why) => {
            // A rewritten response loses nothing and may come with every answer: no warning.
            match fix {
                Fix::Error => {
                    tracing::warn!("a stdio server sent {why}; answered its request with an error")
                }
                Fix::Rewrite => {
                    tracing::debug!("a stdio server sent {why}; read it as the response it means")
                }
            }
            *replaced = with_ids(reply, ids);
            Next::Read(&replaced[..])
        }
        Screened::Drop => {
            tracing::warn!("a stdio server sent a message nested too deeply to read; dropped it");
            Next::Skip
        }
        Screened::Split(parts) => {
            tracing::debug!("a stdio server sent a batch of {} messages", parts.len());
            let parts = parts
                .into_iter()
                .filter_map(|part| match check(&part) {
                    Screened::Fine => Some(part),
                    Screened::Replace(reply, ..) => Some(reply),
                    // A refused request in a batch is left to rmcp; a batch in a batch is
                    // no JSON-RPC.
                    Screened::Refuse(_) | Screened::Split(_) => Some(part),
                    Screened::Drop => None,
                })
                .map(|part| with_ids(part, ids))
                .collect();
            Next::Split(parts)
        }
        Screened::Refuse(answer) => {
            tracing::warn!(
                "a stdio server sent a request that cannot be read; answered it with an error"
            );
            Next::Answer(answer)
        }
    }
}

/// A screened `line` read under the id its request was sent with, when `ids` says so (see
/// [`Ids::answered`]); as it is otherwise.
fn with_ids(line: Vec<u8>, ids: Option<&Ids>) -> Vec<u8> {
    let Some(ids) = ids else {
        return line;
    };
    let Scan { members, .. } = scan(&line);
    match members.id {
        Some(id) if !members.method => ids.answered(&line, id).unwrap_or(line),
        _ => line,
    }
}

/// The top-level members of a line that decide whether it is a well-formed response.
#[derive(Default)]
struct Members {
    /// The raw span of a number or string `"id"`.
    id: Option<(usize, usize)>,
    method: bool,
    /// `"jsonrpc":"2.0"` is there.
    version: bool,
    result: bool,
    error: bool,
}

impl Members {
    /// A response (an id and no method) that a decoder may not take as it is.
    fn suspect(&self, line: &[u8]) -> bool {
        let Some((s, e)) = self.id else {
            return false;
        };
        !self.method
            && (!self.version
                || self.error
                || !self.result
                || memchr::memchr(b'\\', &line[s..e]).is_some())
    }
}

/// Check `line` (one JSON text). A byte scan: strings are skipped, brackets counted, and the
/// top-level members that make a response noted.
pub(crate) fn check(line: &[u8]) -> Screened {
    inspect(line).0
}

/// What [`inspect`] saw of a line besides [`check`]'s verdict.
pub(crate) struct Seen {
    /// The raw span of the id of a response (a message with an id and no method).
    pub(crate) response_id: Option<(usize, usize)>,
    /// The line is shaped like JSON: an object or array whose brackets and strings close
    /// (anything else certainly does not decode; this does not prove that it does).
    pub(crate) shaped: bool,
    /// An error response under no id (`null`, or none at all: a server that could not read
    /// the request it answers).
    pub(crate) unaddressed_error: bool,
}

/// The members a byte scan of a line found, and how its brackets and strings ended.
struct Scan {
    members: Members,
    /// The deepest nesting.
    deepest: usize,
    /// The nesting at the end (0 for a balanced line).
    depth: usize,
    /// The line ended inside a string.
    in_string: bool,
}

/// The raw span of the id of request `line` (a message with a method and a number or string
/// id), found by the same byte scan.
pub(crate) fn request_id(line: &[u8]) -> Option<(usize, usize)> {
    let scan = scan(line);
    scan.members.id.filter(|_| scan.members.method)
}

/// [`check`], and what the scan saw on the way (no second pass).
pub(crate) fn inspect(line: &[u8]) -> (Screened, Seen) {
    let Scan {
        members,
        deepest,
        depth,
        in_string,
    } = scan(line);
    let trimmed = line.trim_ascii();
    let seen = Seen {
        response_id: members.id.filter(|_| !members.method),
        unaddressed_error: members.error && !members.method && members.id.is_none(),
        shaped: depth == 0
            && !in_string
            && matches!(
                (trimmed.first(), trimmed.last()),
                (Some(b'{'), Some(b'}')) | (Some(b'['), Some(b']'))
            ),
    };
    let screened = if deepest > MAX_DEPTH {
        too_deep(line, members.id, deepest)
    } else if trimmed.starts_with(b"[") {
        split(line)
    } else if members.suspect(line) && trimmed.starts_with(b"{") {
        repair(line, members.version)
    } else if members.method
        && let Some((s, e)) = members.id
    {
        refuse_unreadable(line, &line[s..e])
    } else {
        Screened::Fine
    };
    (screened, seen)
}

/// One pass over `line`: strings are skipped, brackets counted, and the top-level members that
/// make a response noted.
fn scan(line: &[u8]) -> Scan {
    let mut depth = 0usize;
    let mut deepest = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    let mut string_start = 0usize;
    let mut last_key: Option<(usize, usize)> = None;
    let mut members = Members::default();
    let mut i = 0;
    while i < line.len() {
        let b = line[i];
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
                if depth == 1 {
                    last_key = Some((string_start, i + 1));
                }
            }
            i += 1;
            continue;
        }
        match b {
            b'"' => {
                in_string = true;
                string_start = i;
            }
            b'{' | b'[' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            b':' if depth == 1 => {
                if let Some((s, e)) = last_key.take() {
                    match &line[s..e] {
                        b"\"id\"" if members.id.is_none() => {
                            members.id = scalar_after(line, i + 1);
                        }
                        b"\"method\"" => members.method = true,
                        b"\"result\"" => members.result = true,
                        b"\"error\"" => members.error = true,
                        b"\"jsonrpc\"" => {
                            members.version =
                                line[i + 1..].trim_ascii_start().starts_with(b"\"2.0\"");
                        }
                        _ => {}
                    }
                }
            }
            b',' if depth == 1 => last_key = None,
            _ => {}
        }
        i += 1;
    }
    Scan {
        members,
        deepest,
        depth,
        in_string,
    }
}

/// A request from the server (rare: sampling, elicitation, roots, ping) that rmcp's session
/// cannot decode (params of the wrong shape, say) is answered here, under its own id; rmcp
/// would answer it under no id, which leaves the server waiting and the call it is part of
/// waiting out its timeout.
fn refuse_unreadable(line: &[u8], id: &[u8]) -> Screened {
    let Err(e) = serde_json::from_slice::<RxJsonRpcMessage<RoleClient>>(line) else {
        return Screened::Fine;
    };
    if !matches!(e.classify(), serde_json::error::Category::Data) {
        // Not JSON (or cut short): rmcp ignores it, and so does this.
        return Screened::Fine;
    }
    let message = format!("switchboard cannot read this request: {e}");
    Screened::Refuse(error_line(
        &String::from_utf8_lossy(id),
        INVALID_REQUEST,
        &message,
    ))
}

/// A batch's messages, one line each; a line that is no array of objects is left alone.
fn split(line: &[u8]) -> Screened {
    let Ok(parts) = serde_json::from_slice::<Vec<&RawValue>>(line) else {
        return Screened::Fine;
    };
    if parts.is_empty() || !parts.iter().all(|p| p.get().starts_with('{')) {
        return Screened::Fine;
    }
    Screened::Split(
        parts
            .iter()
            .map(|p| {
                let mut part = Vec::with_capacity(p.get().len() + 1);
                part.extend_from_slice(p.get().as_bytes());
                part.push(b'\n');
                part
            })
            .collect(),
    )
}

/// The error that replaces a too-deep message, or [`Screened::Drop`] when it has no id.
fn too_deep(line: &[u8], id: Option<(usize, usize)>, deepest: usize) -> Screened {
    let Some((s, e)) = id else {
        return Screened::Drop;
    };
    let message = format!(
        "the server's message nests {deepest} levels deep; JSON deeper than {MAX_DEPTH} levels cannot be read"
    );
    let id = String::from_utf8_lossy(&line[s..e]);
    Screened::Replace(
        error_line(&id, PARSE_ERROR, &message),
        Fix::Error,
        "a message nested too deeply to read",
    )
}

/// A response as written: its members' raw text (`result` is `Some` when present, even as
/// `null`).
#[derive(Deserialize)]
struct Response<'a> {
    #[serde(borrow)]
    id: &'a RawValue,
    #[serde(default, borrow, deserialize_with = "present")]
    result: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    error: Option<&'a RawValue>,
}

/// For `#[serde(default, deserialize_with = "present")]`: `Some` for a member that is there,
/// `null` included (serde reads a `null` `Option` as `None`, which would make a `"result":
/// null` look like no result at all).
pub(crate) fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

/// A response line the scan found suspect, made readable: rewritten when it means a result or
/// a well-formed error, replaced by an error naming the problem when it is malformed, left as
/// it is when it is fine after all (an ordinary error response) or is not JSON at all.
fn repair(line: &[u8], version: bool) -> Screened {
    let Ok(text) = std::str::from_utf8(line) else {
        return Screened::Fine;
    };
    let Ok(response) = serde_json::from_str::<Response>(text) else {
        return Screened::Fine;
    };
    let id = canonical_id(response.id);
    let error = response.error.filter(|e| e.get() != "null");
    let Some(error) = error else {
        return match response.result {
            Some(result) => Screened::Replace(
                member_line(&id, "result", result.get()),
                Fix::Rewrite,
                "a response written oddly (no \"jsonrpc\":\"2.0\", an escaped id or a null error)",
            ),
            None => Screened::Replace(
                error_line(
                    &id,
                    MALFORMED,
                    "the server's response has neither a result nor an error",
                ),
                Fix::Error,
                "a response with neither a result nor an error",
            ),
        };
    };
    let (code, message, problem) = read_error(error);
    let problem = match (problem, response.result.is_some()) {
        (None, false) => {
            return if !version || id != response.id.get() {
                Screened::Replace(
                    member_line(&id, "error", error.get()),
                    Fix::Rewrite,
                    "an error response written oddly (no \"jsonrpc\":\"2.0\" or an escaped id)",
                )
            } else {
                Screened::Fine
            };
        }
        (None, true) => "the server's response has both a result and an error".to_string(),
        (Some(problem), _) => problem,
    };
    let message = if message.is_empty() {
        problem
    } else {
        format!("{message} ({problem})")
    };
    Screened::Replace(
        error_line(&id, code, &message),
        Fix::Error,
        "a malformed error response",
    )
}

/// A response's `error`, read as leniently as it can be: its code (or [`MALFORMED`]), its
/// message (or nothing), and what is wrong with it, if anything.
fn read_error(error: &RawValue) -> (i32, String, Option<String>) {
    let quoted = quote(error.get());
    let Ok(Value::Object(fields)) = serde_json::from_str::<Value>(error.get()) else {
        return (
            MALFORMED,
            String::new(),
            Some(format!(
                "the server's response has an \"error\" that is not an error object: {quoted}"
            )),
        );
    };
    let code = fields
        .get("code")
        .and_then(Value::as_i64)
        .and_then(|c| i32::try_from(c).ok());
    let message = fields.get("message").and_then(Value::as_str);
    let problem = match (code, message) {
        (Some(_), Some(_)) => None,
        (None, _) => Some(format!("the server's error has no integer code: {quoted}")),
        (Some(_), None) => Some(format!("the server's error has no message: {quoted}")),
    };
    (
        code.unwrap_or(MALFORMED),
        message.unwrap_or_default().to_string(),
        problem,
    )
}

/// The id as plain JSON text: a string with escapes is written again without them (so the raw
/// path, which matches ids as text, knows its own).
fn canonical_id(id: &RawValue) -> String {
    let text = id.get();
    if text.contains('\\')
        && let Ok(plain) = serde_json::from_str::<String>(text)
        && let Ok(again) = serde_json::to_string(&plain)
    {
        return again;
    }
    text.to_string()
}

/// At most [`QUOTE_CHARS`] characters of `text`.
fn quote(text: &str) -> String {
    switchboard_core::clip(text, QUOTE_CHARS).into_owned()
}

/// A response line for `id` (JSON text) whose `member` (`result` or `error`) is `value` (JSON
/// text, kept as it is).
fn member_line(id: &str, member: &str, value: &str) -> Vec<u8> {
    let mut line = Vec::with_capacity(40 + id.len() + value.len());
    line.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    line.extend_from_slice(id.as_bytes());
    line.extend_from_slice(b",\"");
    line.extend_from_slice(member.as_bytes());
    line.extend_from_slice(b"\":");
    line.extend_from_slice(value.as_bytes());
    line.extend_from_slice(b"}\n");
    line
}

/// An error response line for `id` (JSON text).
fn error_line(id: &str, code: i32, message: &str) -> Vec<u8> {
    let message = serde_json::to_string(message).unwrap_or_else(|_| "\"\"".to_string());
    let mut line =
        format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":{code},"message":{message}}}}}"#)
            .into_bytes();
    line.push(b'\n');
    line
}

/// The raw text of a number or string value starting at `from` (after whitespace), or `None`
/// when the value is anything else (an id is only ever a number or a string).
fn scalar_after(line: &[u8], from: usize) -> Option<(usize, usize)> {
    let start = from + line[from..].iter().position(|b| !b.is_ascii_whitespace())?;
    match line[start] {
        b'"' => {
            let mut escaped = false;
            for (k, &b) in line[start + 1..].iter().enumerate() {
                if escaped {
                    escaped = false;
                } else if b == b'\\' {
                    escaped = true;
                } else if b == b'"' {
                    return Some((start, start + 1 + k + 1));
                }
            }
            None
        }
        b'-' | b'0'..=b'9' => {
            let len = line[start..]
                .iter()
                .position(|b| {
                    !(b.is_ascii_digit() || matches!(b, b'-' | b'+' | b'.' | b'e' | b'E'))
                })
                .unwrap_or(line.len() - start);
            Some((start, start + len))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn nested(levels: usize) -> String {
        let mut s = String::from("1");
        for _ in 0..levels {
            s = format!(r#"{{"n":{s}}}"#);
        }
        s
    }

    #[test]
    fn ordinary_lines_pass() {
        assert_eq!(
            check(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
            Screened::Fine
        );
        let line = format!(r#"{{"jsonrpc":"2.0","id":2,"result":{}}}"#, nested(120));
        assert!(serde_json::from_str::<Value>(&line).is_ok());
        assert_eq!(check(line.as_bytes()), Screened::Fine);
        // Brackets inside strings do not count.
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":3,"result":"{}"}}"#,
            "[".repeat(500)
        );
        assert_eq!(check(line.as_bytes()), Screened::Fine);
    }

    #[test]
    fn a_too_deep_response_becomes_an_error_for_its_id() {
        // Regression: a tools/list whose one schema nested 200 levels was dropped by the
        // decoder, and the server "did not start within 30 s" with no reason.
        for id in ["7", r#""sb~12""#, r#""a \"q\" id""#] {
            let line = format!(
                r#"{{"jsonrpc":"2.0","result":{{"tools":[{}]}},"id":{id}}}"#,
                nested(200)
            );
            assert!(serde_json::from_str::<Value>(&line).is_err());
            let Screened::Replace(reply, ..) = check(line.as_bytes()) else {
                panic!("not replaced: {id}");
            };
            let reply: Value = serde_json::from_slice(&reply).unwrap();
            assert_eq!(reply["id"], serde_json::from_str::<Value>(id).unwrap());
            assert_eq!(reply["error"]["code"], PARSE_ERROR);
            let message = reply["error"]["message"].as_str().unwrap();
            assert!(message.contains("nests 203 levels deep"), "{message}");
        }
    }

    #[test]
    fn a_too_deep_message_without_an_id_is_dropped() {
        let line = format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/message","params":{}}}"#,
            nested(300)
        );
        assert_eq!(check(line.as_bytes()), Screened::Drop);
        // An "id" below the top level is not the message's id.
        let line = format!(r#"{{"params":{{"id":5,"x":{}}}}}"#, nested(300));
        assert_eq!(check(line.as_bytes()), Screened::Drop);
    }

    /// The replacement of `line`, as JSON.
    fn replaced(line: &str) -> Value {
        match check(line.as_bytes()) {
            Screened::Replace(reply, ..) => {
                assert_eq!(reply.last(), Some(&b'\n'));
                serde_json::from_slice(&reply).unwrap()
            }
            other => panic!("not replaced ({other:?}): {line}"),
        }
    }

    #[test]
    fn well_formed_messages_pass_untouched() {
        for line in [
            r#"{"jsonrpc":"2.0","id":"sb~1","result":{"content":[]}}"#,
            r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"no such method"}}"#,
            r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32000,"message":"m","data":{"x":1}}}"#,
            r#"{ "jsonrpc" : "2.0" , "id" : 5 , "result" : null }"#,
            // Requests and notifications are not responses.
            r#"{"jsonrpc":"2.0","id":"ask-1","method":"sampling/createMessage","params":{}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"sb~\u0031"}}"#,
            // Not a JSON object, or not JSON: nobody can answer from it.
            r#"log: {"id":1}"#,
            r#"{"id":1,"result":"#,
            "\u{ff}\u{fe}{",
            // An escaped quote in an id that needs it is kept.
            r#"{"jsonrpc":"2.0","id":7,"result":{"text":"\"id\":\"x\\\""}}"#,
        ] {
            assert_eq!(check(line.as_bytes()), Screened::Fine, "{line}");
        }
    }

    #[test]
    fn a_malformed_error_becomes_an_error_naming_the_problem_for_its_id() {
        // Regression: each of these left its request waiting out its timeout.
        let cases = [
            (
                r#""error":"boom""#,
                MALFORMED,
                "not an error object: \"boom\"",
            ),
            (
                r#""error":null"#,
                MALFORMED,
                "neither a result nor an error",
            ),
            (r#""error":7"#, MALFORMED, "not an error object: 7"),
            (
                r#""error":{"code":"x","message":"code is a string"}"#,
                MALFORMED,
                "code is a string (the server's error has no integer code",
            ),
            (
                r#""error":{"code":-32000}"#,
                -32000,
                r#"the server's error has no message: {"code":-32000}"#,
            ),
            (
                r#""error":{"code":1e99,"message":"huge"}"#,
                MALFORMED,
                "huge (the server's error has no integer code",
            ),
            (
                r#""result":{"content":[]},"error":{"code":3,"message":"both"}"#,
                3,
                "both (the server's response has both a result and an error)",
            ),
        ];
        for (members, code, says) in cases {
            for id in ["12", r#""sb~3""#] {
                let line = format!(r#"{{"jsonrpc":"2.0","id":{id},{members}}}"#);
                let reply = replaced(&line);
                assert_eq!(reply["id"], serde_json::from_str::<Value>(id).unwrap());
                assert_eq!(reply["error"]["code"], code, "{line}");
                let message = reply["error"]["message"].as_str().unwrap();
                assert!(message.contains(says), "{line}: {message}");
            }
        }
        let reply = replaced(r#"{"jsonrpc":"2.0","id":"sb~4"}"#);
        assert_eq!(reply["id"], "sb~4");
        assert_eq!(reply["error"]["code"], MALFORMED);
        // A long malformed error is quoted, not copied whole.
        let long = format!(
            r#"{{"jsonrpc":"2.0","id":1,"error":"{}"}}"#,
            "e".repeat(5000)
        );
        let message = replaced(&long)["error"]["message"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(message.len() < 400 && message.ends_with('…'), "{message}");
    }

    #[test]
    fn an_oddly_written_response_is_rewritten_as_the_one_it_means() {
        // Regression: an id written with escapes was not matched by the raw call path, and a
        // response without "jsonrpc" or with a null error beside its result was dropped by rmcp.
        let cases = [
            (
                r#"{"jsonrpc":"2.0","id":"sb~\u0031","result":{"a":[1.50]}}"#,
                json!("sb~1"),
            ),
            (
                r#"{"jsonrpc":"2.0","id":"\u0073b\u007e12","result":{"a":[1.50]}}"#,
                json!("sb~12"),
            ),
            (r#"{"id":3,"result":{"a":[1.50]}}"#, json!(3)),
            (
                r#"{"jsonrpc":"1.0","id":3,"result":{"a":[1.50]}}"#,
                json!(3),
            ),
            (
                r#"{"jsonrpc":"2.0","id":3,"result":{"a":[1.50]},"error":null}"#,
                json!(3),
            ),
        ];
        for (line, id) in cases {
            let Screened::Replace(reply, Fix::Rewrite, _) = check(line.as_bytes()) else {
                panic!("not rewritten: {line}");
            };
            let text = String::from_utf8(reply).unwrap();
            // The result's text is kept as sent, numbers and all.
            assert!(text.contains(r#""result":{"a":[1.50]}"#), "{text}");
            let reply: Value = serde_json::from_str(&text).unwrap();
            assert_eq!(reply["jsonrpc"], "2.0");
            assert_eq!(reply["id"], id, "{line}");
        }
        let reply = replaced(r#"{"id":"sb~\u0032","error":{"code":5,"message":"m","data":[1]}}"#);
        assert_eq!(reply["id"], "sb~2");
        assert_eq!(reply["jsonrpc"], "2.0");
        assert_eq!(
            reply["error"],
            json!({"code": 5, "message": "m", "data": [1]})
        );
    }

    #[test]
    fn a_request_rmcp_cannot_read_is_answered_under_its_own_id() {
        // Regression: rmcp answered such a request under no id, so the server waited on it
        // and the tool call it was part of waited out its timeout.
        for line in [
            r#"{"jsonrpc":"2.0","id":"ask-2","method":"roots/list","params":5}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"elicitation/create","params":"x"}"#,
            r#"{"id":9,"method":"roots/list"}"#,
        ] {
            let Screened::Refuse(answer) = check(line.as_bytes()) else {
                panic!("not refused: {line}");
            };
            let answer: Value = serde_json::from_slice(&answer).unwrap();
            let sent: Value = serde_json::from_str(line).unwrap();
            assert_eq!(answer["id"], sent["id"]);
            assert_eq!(answer["error"]["code"], INVALID_REQUEST);
            let message = answer["error"]["message"].as_str().unwrap();
            assert!(message.contains("cannot read this request"), "{message}");
        }
        for line in [
            r#"{"jsonrpc":"2.0","id":"ask-3","method":"roots/list","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":5,"method":"vendor/anything","params":{"x":1}}"#,
        ] {
            assert_eq!(check(line.as_bytes()), Screened::Fine, "{line}");
        }
    }

    #[test]
    fn a_batch_is_split_into_its_messages() {
        // Regression: a response sent as a one-element batch waited out its timeout.
        let line = r#"[{"jsonrpc":"2.0","id":"sb~5","result":{"content":[]}}, {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}},{"id":6,"error":"boom"}]"#;
        let Screened::Split(parts) = check(line.as_bytes()) else {
            panic!("not split");
        };
        assert_eq!(parts.len(), 3);
        assert!(parts.iter().all(|p| p.ends_with(b"\n")));
        assert_eq!(
            parts[0],
            b"{\"jsonrpc\":\"2.0\",\"id\":\"sb~5\",\"result\":{\"content\":[]}}\n"
        );
        let mut replaced = Vec::new();
        let Next::Split(parts) = screen(line.as_bytes(), &mut replaced) else {
            panic!("not split");
        };
        // Each message is screened as a line of its own.
        let last: Value = serde_json::from_slice(&parts[2]).unwrap();
        assert_eq!(last["id"], 6);
        assert!(last["error"]["message"].as_str().unwrap().contains("boom"));
        for line in ["[]", "[1,2]", r#"["a",{"id":1}]"#, "[{"] {
            assert_eq!(check(line.as_bytes()), Screened::Fine, "{line}");
        }
    }

    #[test]
    fn a_response_under_its_requests_number_written_as_a_string_is_read_under_the_id_sent() {
        let ids = Ids::new("s");
        for id in ["1", "2", "3", "4"] {
            ids.sent(format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#).as_bytes());
        }
        let read = |line: &str| -> Vec<Value> {
            let mut replaced = Vec::new();
            match screen_ids(line.as_bytes(), &mut replaced, Some(&ids)) {
                Next::Read(line) => vec![serde_json::from_slice(line).unwrap()],
                Next::Split(parts) => parts
                    .iter()
                    .map(|p| serde_json::from_slice(p).unwrap())
                    .collect(),
                _ => panic!("not read: {line}"),
            }
        };
        // As written, its result kept as sent.
        let [one] = &read(r#"{"jsonrpc":"2.0","id":"1","result":{"a":[1.50]}}"#)[..] else {
            panic!()
        };
        assert_eq!(one["id"], json!(1));
        // Escaped and without "jsonrpc": rewritten as the response it means, then matched.
        let [two] = &read(r#"{"id":"\u0032","result":{}}"#)[..] else {
            panic!()
        };
        assert_eq!(two["id"], json!(2));
        // A malformed one becomes an error for the request.
        let [three] = &read(r#"{"jsonrpc":"2.0","id":"3","error":"boom"}"#)[..] else {
            panic!()
        };
        assert_eq!(three["id"], json!(3));
        assert!(three["error"]["message"].as_str().unwrap().contains("boom"));
        // Each message of a batch.
        let parts = read(
            r#"[{"jsonrpc":"2.0","id":"4","result":{}},{"jsonrpc":"2.0","id":"9","result":{}}]"#,
        );
        assert_eq!(parts[0]["id"], json!(4));
        assert_eq!(parts[1]["id"], json!("9"), "no request 9: left as it is");
        // Without ids (an HTTP transport's reader), nothing is rewritten.
        let mut replaced = Vec::new();
        let line = br#"{"jsonrpc":"2.0","id":"1","result":{}}"#;
        assert!(matches!(screen(line, &mut replaced), Next::Read(l) if l == line));
    }
}
