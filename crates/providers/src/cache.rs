//! Prompt-cache breakpoints: where a rendered request tells the provider to cache its prefix.
//! Only Anthropic needs telling (OpenAI and Gemini cache long prefixes on their own,
//! `reference/providers.md` §4): without a `cache_control` block nothing is cached, and the
//! tools array, the system prompt and the whole conversation are paid for in full on every
//! request of the loop. With them, each request reads what the one before wrote, at a tenth of
//! the input price (a write costs 1.25×, so two requests already pay for it).
//!
//! Anthropic caches in the order tools → system → messages, looks back at most 20 blocks from
//! a breakpoint for an earlier cached prefix, and takes at most 4 breakpoints. Three are set:
//! - the end of the stable prefix: the system prompt's block, or the last tool when there is
//!   no system prompt (the tools and the servers' instructions change rarely);
//! - the last block of the last message (the conversation so far, for the next request);
//! - the last block of the user message before it, so that a turn with many blocks (parallel
//!   tool calls and their results) still finds the previous request's prefix within 20 blocks.

use serde_json::{Map, Value, json};
use switchboard_core::Dialect;

/// Put prompt-cache breakpoints into `body`, a request rendered for `dialect`. A no-op for the
/// dialects that cache on their own, and for a body that is not a Messages request.
pub fn mark_cache_breakpoints(dialect: Dialect, body: &mut Value) {
    if dialect != Dialect::Anthropic {
        return;
    }
    let Some(fields) = body.as_object_mut() else {
        return;
    };
    // The stable prefix: system (as a block, which can carry the mark), else the last tool.
    match fields.get_mut("system") {
        Some(Value::String(text)) if !text.is_empty() => {
            let block = marked_text(std::mem::take(text));
            fields.insert("system".into(), block);
        }
        Some(Value::Array(blocks)) if !blocks.is_empty() => {
            if let Some(last) = blocks.last_mut().and_then(Value::as_object_mut) {
                last.insert("cache_control".into(), ephemeral());
            }
        }
        _ => {
            if let Some(last) = fields
                .get_mut("tools")
                .and_then(Value::as_array_mut)
                .and_then(|t| t.last_mut())
                .and_then(Value::as_object_mut)
            {
                last.insert("cache_control".into(), ephemeral());
            }
        }
    }
    let Some(messages) = fields.get_mut("messages").and_then(Value::as_array_mut) else {
        return;
    };
    let last = messages.len().checked_sub(1);
    // The user message before the last one (the last is a user message in every request the
    // loop sends; the one before it ended the previous request).
    let previous_user = last.and_then(|l| {
        (0..l)
            .rev()
            .find(|&i| messages[i].get("role").and_then(Value::as_str) == Some("user"))
    });
    for i in [previous_user, last].into_iter().flatten() {
        if let Some(m) = messages.get_mut(i).and_then(Value::as_object_mut) {
            mark_last_block(m);
        }
    }
}

/// A text written as a lone string, as a list of one marked text block.
fn marked_text(text: String) -> Value {
    json!([{"type": "text", "text": text, "cache_control": ephemeral()}])
}

/// `{"type": "ephemeral"}`: the default five-minute cache.
fn ephemeral() -> Value {
    json!({"type": "ephemeral"})
}

/// Mark the last block of a message; a message written as a lone string becomes one text
/// block, which can carry the mark.
fn mark_last_block(message: &mut Map<String, Value>) {
    match message.get_mut("content") {
        Some(Value::String(text)) if !text.is_empty() => {
            let block = marked_text(std::mem::take(text));
            message.insert("content".into(), block);
        }
        Some(Value::Array(blocks)) => {
            // Every block the loop sends takes a mark (text, image, tool_use, tool_result).
            if let Some(last) = blocks.last_mut().and_then(Value::as_object_mut) {
                last.insert("cache_control".into(), ephemeral());
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marks(body: &Value) -> Vec<String> {
        let mut found = Vec::new();
        walk(body, "", &mut found);
        found
    }

    fn walk(v: &Value, at: &str, found: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    if k == "cache_control" {
                        found.push(at.to_string());
                    } else {
                        walk(x, &format!("{at}/{k}"), found);
                    }
                }
            }
            Value::Array(a) => {
                for (i, x) in a.iter().enumerate() {
                    walk(x, &format!("{at}/{i}"), found);
                }
            }
            _ => {}
        }
    }

    #[test]
    fn the_prefix_and_the_last_two_user_turns_are_marked() {
        let mut body = json!({
            "model": "m", "max_tokens": 10, "system": "Be brief.",
            "tools": [{"name": "a"}, {"name": "b"}],
            "messages": [
                {"role": "user", "content": "find T-1"},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "1", "name": "a", "input": {}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "1"}]},
            ]
        });
        mark_cache_breakpoints(Dialect::Anthropic, &mut body);
        assert_eq!(
            marks(&body),
            [
                "/messages/0/content/0",
                "/messages/2/content/0",
                "/system/0"
            ]
        );
        assert_eq!(body["system"][0]["text"], "Be brief.");
        assert_eq!(body["messages"][0]["content"][0]["text"], "find T-1");
        assert_eq!(body["messages"][0]["content"][0]["type"], "text");
    }

    #[test]
    fn without_a_system_prompt_the_last_tool_is_marked() {
        let mut body = json!({
            "tools": [{"name": "a"}, {"name": "b"}],
            "messages": [{"role": "user", "content": "hi"}]
        });
        mark_cache_breakpoints(Dialect::Anthropic, &mut body);
        assert_eq!(marks(&body), ["/messages/0/content/0", "/tools/1"]);
        // Nothing to mark: nothing changes.
        let mut bare = json!({"messages": []});
        mark_cache_breakpoints(Dialect::Anthropic, &mut bare);
        assert_eq!(bare, json!({"messages": []}));
    }

    #[test]
    fn other_dialects_cache_on_their_own() {
        for d in [
            Dialect::OpenAiChat,
            Dialect::OpenAiResponses,
            Dialect::Gemini,
        ] {
            let mut body = json!({"messages": [{"role": "user", "content": "hi"}], "tools": [{}]});
            let before = body.clone();
            mark_cache_breakpoints(d, &mut body);
            assert_eq!(body, before);
        }
    }
}
