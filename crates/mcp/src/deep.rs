//! Lines from a stdio server that nest deeper than serde_json reads (128 levels): without this,
//! rmcp cannot decode such a response, drops it, and the request behind it (a `tools/list` with
//! one very deep schema, say) waits until its timeout with no reason given. A too-deep message
//! is replaced by a JSON-RPC error for the same id, so the request fails at once and says why.

/// serde_json's recursion limit: a 129th nested array or object fails to decode.
const MAX_DEPTH: usize = 128;

/// The JSON-RPC error code for a message that cannot be parsed.
const PARSE_ERROR: i32 = -32700;

/// What to do with one line of a server's output.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Depth {
    /// Readable as it is.
    Fine,
    /// Too deep: this error response for the line's id instead.
    Replace(Vec<u8>),
    /// Too deep and no id to answer: drop it.
    Drop,
}

/// The line a reader should pass on: `line` itself, the error reply that replaces a too-deep
/// message (kept in `replaced`), or `None` for a too-deep message with no id. Logs what it
/// changed. The one entry point of both stdio readers.
pub(crate) fn screen<'a>(line: &'a [u8], replaced: &'a mut Vec<u8>) -> Option<&'a [u8]> {
    match check(line) {
        Depth::Fine => Some(line),
        Depth::Replace(reply) => {
            tracing::warn!(
                "a stdio server sent a message nested too deeply to read; answered it with an error"
            );
            *replaced = reply;
            Some(&replaced[..])
        }
        Depth::Drop => {
            tracing::warn!("a stdio server sent a message nested too deeply to read; dropped it");
            None
        }
    }
}

/// Check `line` (one JSON text) against the decoder's depth limit. A byte scan: strings are
/// skipped, brackets counted, and the top-level `"id"` member's raw value kept.
pub(crate) fn check(line: &[u8]) -> Depth {
    // Cheap exit: a line with fewer brackets than the limit cannot be too deep.
    if line.len() <= MAX_DEPTH {
        return Depth::Fine;
    }
    let mut depth = 0usize;
    let mut deepest = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    let mut string_start = 0usize;
    let mut last_key: Option<(usize, usize)> = None;
    let mut id: Option<(usize, usize)> = None;
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
            b':' if depth == 1 && id.is_none() => {
                if let Some((s, e)) = last_key.take()
                    && &line[s..e] == b"\"id\""
                {
                    id = scalar_after(line, i + 1);
                }
            }
            b',' if depth == 1 => last_key = None,
            _ => {}
        }
        i += 1;
    }
    if deepest <= MAX_DEPTH {
        return Depth::Fine;
    }
    let Some((s, e)) = id else {
        return Depth::Drop;
    };
    let reply = format!(
        r#"{{"jsonrpc":"2.0","id":{},"error":{{"code":{PARSE_ERROR},"message":"the server's message nests {deepest} levels deep; JSON deeper than {MAX_DEPTH} levels cannot be read"}}}}"#,
        String::from_utf8_lossy(&line[s..e])
    );
    let mut bytes = reply.into_bytes();
    bytes.push(b'\n');
    Depth::Replace(bytes)
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
    use serde_json::Value;

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
            Depth::Fine
        );
        let line = format!(r#"{{"jsonrpc":"2.0","id":2,"result":{}}}"#, nested(120));
        assert!(serde_json::from_str::<Value>(&line).is_ok());
        assert_eq!(check(line.as_bytes()), Depth::Fine);
        // Brackets inside strings do not count.
        let line = format!(r#"{{"id":3,"result":"{}"}}"#, "[".repeat(500));
        assert_eq!(check(line.as_bytes()), Depth::Fine);
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
            let Depth::Replace(reply) = check(line.as_bytes()) else {
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
        assert_eq!(check(line.as_bytes()), Depth::Drop);
        // An "id" below the top level is not the message's id.
        let line = format!(r#"{{"params":{{"id":5,"x":{}}}}}"#, nested(300));
        assert_eq!(check(line.as_bytes()), Depth::Drop);
    }
}
