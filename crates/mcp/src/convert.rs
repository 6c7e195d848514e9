//! Conversion from rmcp model types to switchboard-core types, by a serde_json round trip:
//! both sides mirror the MCP wire format, so serializing one and deserializing the other keeps
//! every field (unknown ones land in core's `extra`) without a hand-written field map.

use rmcp::model as wire;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use switchboard_core::{CallResult, ContentBlock, Entry, ServerInfo};

/// Convert each definition; one that does not fit the core type is skipped with a warning
/// naming it, so one odd tool never hides the rest of the server.
pub(crate) fn entries<W, C>(items: Vec<W>, kind: &str, warnings: &mut Vec<String>) -> Vec<Entry<C>>
where
    W: Serialize,
    C: Serialize + DeserializeOwned,
{
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        let value = match serde_json::to_value(&item) {
            Ok(v) => v,
            Err(e) => {
                warnings.push(format!("skipped a {kind}: cannot re-encode it: {e}"));
                continue;
            }
        };
        match serde_json::from_value::<C>(value.clone()) {
            Ok(def) => out.push(Entry::new(def)),
            Err(e) => warnings.push(format!("skipped {kind} {}: {e}", label(&value))),
        }
    }
    out
}

/// What the server said about itself in `initialize`.
pub(crate) fn server_info(peer: &wire::ServerPeerInfo) -> ServerInfo {
    let implementation = peer.server_info.as_ref();
    ServerInfo {
        name: implementation.map(|i| i.name.clone()),
        version: implementation.map(|i| i.version.clone()),
        description: implementation.and_then(|i| i.title.clone().or_else(|| i.description.clone())),
        protocol_version: Some(peer.protocol_version.to_string()),
        instructions: peer.instructions.clone(),
    }
}

/// A `tools/call` result (as wire JSON) as core carries it, or `None` when the JSON is not a
/// call result at all. Content blocks core does not model are kept as a text block describing
/// them rather than dropped silently or failing the call.
pub(crate) fn call_result(value: &Value) -> Option<CallResult> {
    let object = value.as_object()?;
    let known = ["content", "structuredContent", "isError"];
    // `{}` (or only `_meta`) is a valid, contentless result.
    let only_meta = object.keys().all(|k| k == "_meta" || k == "resultType");
    if !only_meta && !known.iter().any(|k| object.contains_key(*k)) {
        return None;
    }
    // A `content` that is not an array, or an `isError` that is not a boolean, is a broken
    // result, not an empty success: reading `{"content": "oops"}` as `[]` would turn a
    // server's malformed answer into a silent "ok". `null` is no content, as rmcp's typed
    // result reads it.
    let content = match object.get("content") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(blocks)) => blocks.iter().map(content_block).collect(),
        Some(_) => return None,
    };
    let is_error = match object.get("isError") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return None,
    };
    Some(CallResult {
        content,
        structured_content: value.get("structuredContent").cloned(),
        is_error,
    })
}

/// A typed `tools/call` result as core carries it: what [`call_result`] makes of its wire
/// JSON, without going through JSON for text blocks (the common case on a call's hot path).
pub(crate) fn typed_call_result(result: wire::CallToolResult) -> CallResult {
    let content = result
        .content
        .into_iter()
        .map(|block| match block {
            wire::ContentBlock::Text(t) => ContentBlock::Text { text: t.text },
            other => match serde_json::to_value(&other) {
                Ok(value) => content_block(&value),
                Err(e) => ContentBlock::Text {
                    text: format!("[a content block that does not re-encode: {e}]"),
                },
            },
        })
        .collect();
    CallResult {
        content,
        structured_content: result.structured_content,
        is_error: result.is_error.unwrap_or(false),
    }
}

/// The error detail for a `tools/call` answer that is not a tool result, quoting the start of
/// what the server sent so the user can see what was wrong with it.
pub(crate) fn not_a_result(tool: &str, answer: &str) -> String {
    const SHOWN: usize = 200;
    format!(
        "tool \"{tool}\" answered with something that is not a tool result: {}",
        switchboard_core::clip(answer.trim(), SHOWN)
    )
}

fn content_block(block: &Value) -> ContentBlock {
    serde_json::from_value(block.clone()).unwrap_or_else(|_| {
        let kind = block
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("unknown");
        ContentBlock::Text {
            text: format!("[unsupported content block of type \"{kind}\": {block}]"),
        }
    })
}

/// A name for a definition in a warning: its `name`, `uri` or `uriTemplate`.
fn label(value: &Value) -> String {
    ["name", "uri", "uriTemplate"]
        .iter()
        .find_map(|k| value.get(*k).and_then(Value::as_str))
        .map(|s| format!("\"{s}\""))
        .unwrap_or_else(|| "(unnamed)".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use switchboard_core::Tool;

    #[test]
    fn tools_keep_unknown_fields() {
        let tool: wire::Tool = serde_json::from_value(json!({
            "name": "echo",
            "description": "Echoes",
            "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}}},
            "annotations": {"readOnlyHint": true},
            "_meta": {"x": 1}
        }))
        .unwrap();
        let mut warnings = Vec::new();
        let got: Vec<Entry<Tool>> = entries(vec![tool], "tool", &mut warnings);
        assert!(warnings.is_empty());
        assert_eq!(got[0].def.name, "echo");
        assert!(got[0].def.is_read_only());
        assert_eq!(got[0].def.extra.get("_meta"), Some(&json!({"x": 1})));
    }

    #[test]
    fn a_definition_that_does_not_fit_is_skipped_and_named() {
        let mut warnings = Vec::new();
        let got: Vec<Entry<Tool>> = entries(
            vec![json!({"name": 5}), json!({"name": "ok"})],
            "tool",
            &mut warnings,
        );
        assert_eq!(got.len(), 1);
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].starts_with("skipped tool"), "{warnings:?}");
    }

    #[test]
    fn typed_results_convert_as_their_wire_json_does() {
        for wire_json in [
            json!({"content": [{"type": "text", "text": "hi", "annotations": {"priority": 1.0}}]}),
            json!({
                "content": [
                    {"type": "text", "text": "a"},
                    {"type": "image", "data": "AAAA", "mimeType": "image/png"},
                    {"type": "resource_link", "uri": "file:///x", "name": "x"},
                    {"type": "resource", "resource": {"uri": "test://r", "text": "body"}}
                ],
                "structuredContent": {"n": 1},
                "isError": true,
                "_meta": {"k": "v"}
            }),
            json!({"content": [], "isError": false}),
        ] {
            let typed: wire::CallToolResult = serde_json::from_value(wire_json).unwrap();
            let via_json = call_result(&serde_json::to_value(&typed).unwrap()).unwrap();
            assert_eq!(typed_call_result(typed), via_json);
        }
    }

    #[test]
    fn call_results_keep_text_flags_and_unknown_blocks() {
        let got = call_result(&json!({
            "content": [{"type": "text", "text": "Echo: hi"}],
            "structuredContent": {"n": 42},
            "isError": true
        }))
        .unwrap();
        assert_eq!(got.joined_text(), "Echo: hi");
        assert!(got.is_error);
        assert_eq!(got.structured_content, Some(json!({"n": 42})));
        assert_eq!(call_result(&json!({})), Some(CallResult::default()));
        assert_eq!(call_result(&json!({"messages": []})), None);
    }

    #[test]
    fn not_a_result_quotes_a_bounded_start_of_the_answer() {
        let d = not_a_result("t", r#"{"content":"not a list"}"#);
        assert!(d.ends_with(r#"{"content":"not a list"}"#), "{d}");
        let long = "é".repeat(500);
        let d = not_a_result("t", &long);
        assert!(d.ends_with('…'), "{d}");
        assert!(d.len() < 600, "{d}");
    }

    #[test]
    fn malformed_content_or_error_flag_is_not_a_result() {
        // Regression: `{"content": "not a list"}` used to read as an empty successful result.
        assert_eq!(call_result(&json!({"content": "not a list"})), None);
        assert_eq!(call_result(&json!({"content": {"type": "text"}})), None);
        assert_eq!(call_result(&json!({"content": [], "isError": "yes"})), None);
        assert_eq!(
            call_result(&json!({"content": [], "isError": null})),
            Some(CallResult::default())
        );
        assert!(matches!(
            content_block(&json!({"type": "hologram", "x": 1})),
            ContentBlock::Text { text } if text.contains("hologram")
        ));
    }
}
