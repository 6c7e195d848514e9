//! Sampling: a server's request, while one of its tools runs, for the host's model to write a
//! message (MCP `sampling/createMessage`). [`SamplingRequest::parse`] reads the request into
//! the provider-neutral conversation the model clients send; [`result`] turns the model's reply
//! into the answer the server gets. The request goes to the session's own model, only when
//! the [`crate::dispatch::Approver`] allows it.

use futures::future::BoxFuture;
use serde_json::{Value, json};
use switchboard_providers::{Message, Part, Reply, Role, Stop};

/// Sends a server's sampling request to a model. The agent's is its own provider and model.
pub trait Sampler: Send + Sync {
    /// The model's reply, or why there is none (for the server).
    fn sample<'a>(&'a self, request: &'a SamplingRequest) -> BoxFuture<'a, Result<Reply, String>>;
    /// The model's id, for the server's answer.
    fn model(&self) -> &str;
}

/// What a server asked the model, read from `sampling/createMessage`'s `params`.
#[derive(Clone, Debug, PartialEq)]
pub struct SamplingRequest {
    /// Configured server name.
    pub server: String,
    /// The tool whose call it came during.
    pub tool: String,
    /// The server's system prompt.
    pub system: Option<String>,
    /// The conversation to answer.
    pub messages: Vec<Message>,
    /// `maxTokens`: the most the answer may have.
    pub max_tokens: u32,
    /// `temperature`, when the server gives one (a number from 0 to 2).
    pub temperature: Option<f64>,
}

impl SamplingRequest {
    /// Read a request's `params`; an error says why it cannot be sent (for the server).
    pub fn parse(server: &str, tool: &str, params: &Value) -> Result<SamplingRequest, String> {
        if params.get("tools").is_some_and(|t| !t.is_null()) {
            return Err("switchboard offers no tools to a server's sampling request".into());
        }
        let max_tokens = params
            .get("maxTokens")
            .and_then(Value::as_u64)
            .filter(|n| *n > 0)
            .ok_or("`maxTokens` must be a positive whole number")?;
        let max_tokens = u32::try_from(max_tokens).unwrap_or(u32::MAX);
        let Some(items) = params.get("messages").and_then(Value::as_array) else {
            return Err("`messages` must be a list".into());
        };
        let mut messages: Vec<Message> = Vec::new();
        for (i, m) in items.iter().enumerate() {
            let role = match m.get("role").and_then(Value::as_str) {
                Some("user") => Role::User,
                Some("assistant") => Role::Assistant,
                other => {
                    return Err(format!(
                        "message {i}: role {other:?} is not user or assistant"
                    ));
                }
            };
            let content = m.get("content").unwrap_or(&Value::Null);
            let blocks: Vec<&Value> = match content {
                Value::Array(blocks) => blocks.iter().collect(),
                block => vec![block],
            };
            let mut parts = Vec::new();
            for block in blocks {
                parts.push(part(block).map_err(|why| format!("message {i}: {why}"))?);
            }
            // Consecutive messages of one role become one, as every provider wants turns to
            // alternate.
            match messages.last_mut() {
                Some(last) if last.role == role => last.parts.extend(parts),
                _ => messages.push(Message { role, parts }),
            }
        }
        if messages.first().is_none_or(|m| m.role != Role::User) {
            return Err("the conversation must start with a user message".into());
        }
        Ok(SamplingRequest {
            server: server.to_string(),
            tool: tool.to_string(),
            system: params
                .get("systemPrompt")
                .and_then(Value::as_str)
                .filter(|s| !s.trim().is_empty())
                .map(str::to_string),
            messages,
            max_tokens,
            temperature: params
                .get("temperature")
                .and_then(Value::as_f64)
                .filter(|t| switchboard_providers::TEMPERATURE.contains(t)),
        })
    }

    /// The conversation's last message's text, for a person to read.
    pub fn last_text(&self) -> String {
        self.messages.last().map(Message::text).unwrap_or_default()
    }
}

fn part(block: &Value) -> Result<Part, String> {
    match block.get("type").and_then(Value::as_str) {
        Some("text") => Ok(Part::text(
            block.get("text").and_then(Value::as_str).unwrap_or(""),
        )),
        Some("image") => {
            let field = |k: &str| block.get(k).and_then(Value::as_str);
            match (field("mimeType"), field("data")) {
                (Some(media_type), Some(data)) => Ok(Part::Image {
                    media_type: media_type.to_string(),
                    data: data.to_string(),
                }),
                _ => Err("an image without `mimeType` and `data`".into()),
            }
        }
        Some("audio") => Ok(Part::text(
            "[audio the server sent; not passed to the model]",
        )),
        Some(other) => Err(format!(
            "content of type {other:?} cannot be sent to the model"
        )),
        None => Err("content without a `type`".into()),
    }
}

/// The server's answer: the reply's text as one text block, the model that wrote it, and why
/// it stopped (`endTurn`, `maxTokens`, `stopSequence` as MCP spells them).
pub fn result(reply: &Reply, model: &str) -> Value {
    let text = reply.text();
    let stop = match reply.stop {
        Stop::MaxTokens => "maxTokens",
        _ => "endTurn",
    };
    json!({
        "role": "assistant",
        "content": {"type": "text", "text": text},
        "model": model,
        "stopReason": stop,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_becomes_the_conversation_the_model_gets() {
        let params = json!({
            "messages": [
                {"role": "user", "content": {"type": "text", "text": "Summarize:"}},
                {"role": "user", "content": [{"type": "text", "text": "a long text"},
                    {"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="}]},
                {"role": "assistant", "content": {"type": "text", "text": "Sure."}},
                {"role": "user", "content": {"type": "audio", "mimeType": "audio/wav", "data": "UklGRg=="}}
            ],
            "systemPrompt": "Be brief.", "maxTokens": 100, "temperature": 0.2,
            "modelPreferences": {"hints": [{"name": "claude-3-sonnet"}]}
        });
        let r = SamplingRequest::parse("s", "t", &params).unwrap();
        assert_eq!(r.system.as_deref(), Some("Be brief."));
        assert_eq!(r.max_tokens, 100);
        assert_eq!(
            r.temperature,
            Some(0.2),
            "the server's temperature goes to the model"
        );
        assert_eq!(r.messages.len(), 3, "two user messages in a row become one");
        assert_eq!(r.messages[0].parts.len(), 3);
        assert!(matches!(r.messages[0].parts[2], Part::Image { .. }));
        assert_eq!(r.messages[1].role, Role::Assistant);
        assert!(r.last_text().contains("audio"));
    }

    #[test]
    fn what_cannot_be_sent_is_said() {
        let user = json!([{"role": "user", "content": {"type": "text", "text": "hi"}}]);
        for (params, why) in [
            (json!({"messages": user, "maxTokens": 0}), "maxTokens"),
            (json!({"messages": user}), "maxTokens"),
            (
                json!({"messages": "hi", "maxTokens": 5}),
                "`messages` must be a list",
            ),
            (
                json!({"messages": user, "maxTokens": 5, "tools": [{"name": "x"}]}),
                "no tools",
            ),
            (
                json!({"messages": [{"role": "assistant", "content": {"type": "text", "text": "x"}}], "maxTokens": 5}),
                "start with a user",
            ),
            (
                json!({"messages": [{"role": "system", "content": {"type": "text", "text": "x"}}], "maxTokens": 5}),
                "role Some(\"system\")",
            ),
            (
                json!({"messages": [{"role": "user", "content": {"type": "tool_use"}}], "maxTokens": 5}),
                "\"tool_use\" cannot be sent",
            ),
        ] {
            let err = SamplingRequest::parse("s", "t", &params).unwrap_err();
            assert!(err.contains(why), "{err}");
        }
    }

    #[test]
    fn the_reply_becomes_the_servers_answer() {
        let reply = Reply {
            parts: vec![Part::text("Hello "), Part::text("there.")],
            stop: Stop::MaxTokens,
            usage: Default::default(),
        };
        assert_eq!(
            result(&reply, "m1"),
            json!({"role": "assistant", "content": {"type": "text", "text": "Hello there."},
                   "model": "m1", "stopReason": "maxTokens"})
        );
    }
}
