//! Client messages that are not JSON-RPC, answered as JSON-RPC 2.0 says: a line (or POST body)
//! that is not JSON gets -32700 Parse error under a null id, and JSON that is not a message
//! rmcp's session reads gets -32600 Invalid Request under the request's id when one can be read.
//! rmcp drops the first silently and answers the second with no id at all (over stdio), or
//! with a 415 and a line of text (over HTTP).

use serde_json::{Map, Value};

/// JSON-RPC 2.0: invalid JSON was received.
const PARSE_ERROR: i64 = -32700;
/// JSON-RPC 2.0: the JSON sent is not a valid request object.
const INVALID_REQUEST: i64 = -32600;

/// What to do with one message from a client.
#[derive(Debug, PartialEq)]
pub(crate) enum Screened {
    /// A message the session reads (or ignores on its own, as rmcp does a notification it does
    /// not know): send it on.
    Fine,
    /// Nothing to read (a blank line): drop it.
    Blank,
    /// Not a message: answer the client with this JSON-RPC error (no newline), and keep the
    /// session.
    Answer(String),
}

/// Screen one message (a line without its newline) as rmcp's session over stdio would read it.
pub(crate) fn screen(message: &[u8]) -> Screened {
    let message = message.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(message);
    if message.iter().all(u8::is_ascii_whitespace) {
        return Screened::Blank;
    }
    let Err(refused) = serde_json::from_slice::<rmcp::model::ClientJsonRpcMessage>(message) else {
        return Screened::Fine;
    };
    // rmcp's stdio decoder drops a message of a method MCP does not define without a word.
    if let Ok(Value::Object(o)) = serde_json::from_slice::<Value>(message)
        && let Some(method) = o.get("method").and_then(Value::as_str)
        && ignored(method, !o.contains_key("id"))
    {
        return Screened::Fine;
    }
    Screened::Answer(answer(message, &refused.to_string()))
}

/// The JSON-RPC error for a message rmcp's session does not read (`refused` is its decoder's
/// complaint, said when nothing more precise is found).
pub(crate) fn answer(message: &[u8], refused: &str) -> String {
    let message = message.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(message);
    let value = match serde_json::from_slice::<Value>(message) {
        Ok(value) => value,
        Err(e) => return error(None, PARSE_ERROR, &format!("Parse error: {e}")),
    };
    let object = value.as_object();
    // The id of a request; a malformed response's id names one of the gateway's own requests,
    // so its error goes under null.
    let response = |o: &&Map<String, Value>| {
        !o.contains_key("method") && (o.contains_key("result") || o.contains_key("error"))
    };
    let id = object
        .filter(|o| !response(o))
        .and_then(|o| o.get("id"))
        .filter(|id| id.is_string() || id.is_i64() || id.is_u64());
    let why = match object {
        Some(o) => invalid(o).unwrap_or_else(|| refused.to_string()),
        None if value.is_array() => {
            "a batch (a JSON array) is not taken: send one message at a time".to_string()
        }
        None => "a JSON-RPC message is a JSON object".to_string(),
    };
    error(id, INVALID_REQUEST, &format!("Invalid Request: {why}"))
}

/// What is wrong with a message object's JSON-RPC envelope, when something is.
fn invalid(o: &Map<String, Value>) -> Option<String> {
    if o.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Some("`jsonrpc` must be \"2.0\"".to_string());
    }
    if let Some(id) = o.get("id")
        && !(id.is_string() || id.is_i64() || id.is_u64() || id.is_null())
    {
        return Some("`id` must be a string or an integer".to_string());
    }
    match o.get("method") {
        Some(Value::String(_)) => match o.get("params") {
            None | Some(Value::Object(_)) => None,
            Some(_) => Some("`params` must be an object".to_string()),
        },
        Some(_) => Some("`method` must be a string".to_string()),
        None => match (o.get("result"), o.get("error")) {
            (None, None) => Some(
                "neither a request or notification (`method`) nor a response (`result` or \
                 `error`)"
                    .to_string(),
            ),
            (Some(_), Some(_)) => Some("a response has `result` or `error`, not both".to_string()),
            (None, Some(e)) if !well_formed_error(e) => Some(
                "`error` must be an object with an integer `code` and a string `message`"
                    .to_string(),
            ),
            _ if !o.contains_key("id") => Some("a response needs the `id` it answers".to_string()),
            _ => None,
        },
    }
}

fn well_formed_error(e: &Value) -> bool {
    e.get("code").is_some_and(|c| c.is_i64()) && e.get("message").is_some_and(Value::is_string)
}

/// A message rmcp's session drops without a word (its decoder's compatibility rule): a
/// notification whose method MCP does not define, or a `notifications/` method MCP does not
/// define.
fn ignored(method: &str, notification: bool) -> bool {
    const NOTIFICATIONS: &[&str] = &[
        "notifications/cancelled",
        "notifications/initialized",
        "notifications/message",
        "notifications/progress",
        "notifications/prompts/list_changed",
        "notifications/resources/list_changed",
        "notifications/resources/updated",
        "notifications/roots/list_changed",
        "notifications/subscriptions/acknowledged",
        "notifications/tools/list_changed",
    ];
    const REQUESTS: &[&str] = &[
        "initialize",
        "ping",
        "server/discover",
        "prompts/get",
        "prompts/list",
        "resources/list",
        "resources/read",
        "resources/subscribe",
        "resources/unsubscribe",
        "resources/templates/list",
        "subscriptions/listen",
        "tools/call",
        "tools/list",
        "completion/complete",
        "elicitation/create",
        "logging/setLevel",
        "roots/list",
        "sampling/createMessage",
    ];
    let standard = NOTIFICATIONS.contains(&method);
    (notification && !standard && !REQUESTS.contains(&method))
        || (method.starts_with("notifications/") && !standard)
}

/// A JSON-RPC error response.
fn error(id: Option<&Value>, code: i64, message: &str) -> String {
    let id = id.map_or_else(|| "null".to_string(), Value::to_string);
    let message = Value::from(message);
    format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":{code},"message":{message}}}}}"#)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answered(line: &str) -> Value {
        match screen(line.as_bytes()) {
            Screened::Answer(a) => serde_json::from_str(&a).unwrap(),
            other => panic!("{line}: {other:?}"),
        }
    }

    #[test]
    fn messages_rmcp_reads_pass() {
        for line in [
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"x"}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":3,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":3,"error":{"code":-1,"message":"no"}}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"no/such"}"#,
            // Ignored by rmcp's session on purpose (not MCP's).
            r#"{"jsonrpc":"2.0","method":"$/lsp"}"#,
            r#"{"method":"notifications/whatever"}"#,
        ] {
            assert_eq!(screen(line.as_bytes()), Screened::Fine, "{line}");
        }
        assert_eq!(screen(b"  \r"), Screened::Blank);
    }

    #[test]
    fn not_json_is_a_parse_error_under_null() {
        for line in ["this is not json", "{\"jsonrpc\":", "{} x", "\u{1}"] {
            let a = answered(line);
            assert_eq!(a["error"]["code"], -32700, "{line}");
            assert!(a["id"].is_null(), "{line}");
            assert!(
                a["error"]["message"]
                    .as_str()
                    .unwrap()
                    .starts_with("Parse error")
            );
        }
        assert!(matches!(screen(b"\xff\xfe"), Screened::Answer(a) if a.contains("-32700")));
    }

    #[test]
    fn invalid_messages_get_invalid_request_with_their_id() {
        for (line, id) in [
            (r#"{"id":7,"method":"ping"}"#, json_id("7")),
            (
                r#"{"jsonrpc":"1.0","id":"x","method":"ping"}"#,
                json_id("\"x\""),
            ),
            (
                r#"{"jsonrpc":"2.0","id":12,"method":"tools/list","params":[1]}"#,
                json_id("12"),
            ),
            (r#"{"jsonrpc":"2.0","id":10,"method":5}"#, json_id("10")),
            (
                r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#,
                Value::Null,
            ),
            (r#"{"jsonrpc":"2.0","id":11}"#, json_id("11")),
            (r#"{"jsonrpc":"2.0","id":11,"error":"boom"}"#, Value::Null),
            (r#"{"foo":1}"#, Value::Null),
            ("42", Value::Null),
            (r#"[{"jsonrpc":"2.0","id":9,"method":"ping"}]"#, Value::Null),
        ] {
            let a = answered(line);
            assert_eq!(a["error"]["code"], -32600, "{line}");
            assert_eq!(a["id"], id, "{line}");
            assert!(
                a["error"]["message"]
                    .as_str()
                    .unwrap()
                    .starts_with("Invalid Request: "),
                "{a}"
            );
        }
    }

    fn json_id(text: &str) -> Value {
        serde_json::from_str(text).unwrap()
    }
}
