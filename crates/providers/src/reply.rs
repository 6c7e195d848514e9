//! A model's reply in no provider's shape, decoded from each dialect's response body, and the
//! provider's own message from an error body.

use serde::{Deserialize, Serialize};
use switchboard_core::Dialect;

use crate::conversation::Part;
use crate::error::ProviderError;
use crate::{anthropic, gemini, openai_chat, openai_responses};

/// One decoded model turn.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Reply {
    /// Text and tool uses, in the order the model produced them.
    pub parts: Vec<Part>,
    /// Why the model stopped.
    pub stop: Stop,
    /// Token usage of this request.
    pub usage: Usage,
}

impl Reply {
    /// The reply's text parts joined (its answer, without reasoning or tool uses).
    pub fn text(&self) -> String {
        crate::conversation::text_of(&self.parts)
    }
}

/// Why the model stopped.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stop {
    /// It finished its answer.
    EndTurn,
    /// It wants tool results.
    ToolUse,
    /// It hit `max_tokens`.
    MaxTokens,
    /// It refused (Anthropic `refusal`, OpenAI `content_filter`, Gemini `SAFETY`, ...).
    Refusal,
    /// Anything else, as the provider named it.
    Other(String),
}

/// Tokens used by one request.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Input tokens, including cached ones (Anthropic's uncached `input_tokens` plus its cache
    /// reads and writes; OpenAI's `prompt_tokens`/`input_tokens`; Gemini's
    /// `promptTokenCount`).
    pub input_tokens: u64,
    /// Output tokens (Gemini: candidates plus thoughts).
    pub output_tokens: u64,
    /// Input tokens read from the prompt cache, when reported.
    pub cache_read_tokens: Option<u64>,
    /// Input tokens written to the prompt cache (Anthropic only), when reported.
    pub cache_write_tokens: Option<u64>,
    /// Output tokens the model spent reasoning (part of `output_tokens`), when reported
    /// (OpenAI's `reasoning_tokens`, Gemini's `thoughtsTokenCount`; Anthropic does not say).
    #[serde(default)]
    pub reasoning_tokens: Option<u64>,
}

/// Decode a successful (2xx, non-streamed) response body.
pub fn decode_reply(dialect: Dialect, body: &[u8]) -> Result<Reply, ProviderError> {
    let value: serde_json::Value = serde_json::from_slice(body)
        .map_err(|e| ProviderError::decode(dialect, format!("not JSON: {e}")))?;
    match dialect {
        Dialect::Anthropic => anthropic::decode(&value),
        Dialect::OpenAiChat => openai_chat::decode(&value),
        Dialect::OpenAiResponses => openai_responses::decode(&value),
        Dialect::Gemini => gemini::decode(&value),
    }
}

/// How much of a non-JSON error body is shown.
const RAW_ERROR_CHARS: usize = 500;

/// The provider's own error message from an error response body (falls back to the raw text,
/// cut to 500 characters, or to the status when the body is empty).
pub fn decode_error(dialect: Dialect, status: u16, body: &[u8]) -> String {
    let _ = dialect;
    let text = String::from_utf8_lossy(body);
    if let Ok(v) = serde_json::from_slice::<serde_json::Value>(body)
        && let Some(msg) = error_message(&v)
    {
        return msg;
    }
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return format!("HTTP {status} with an empty body");
    }
    let mut cut: String = trimmed.chars().take(RAW_ERROR_CHARS).collect();
    if cut.len() < trimmed.len() {
        cut.push_str(" …");
    }
    cut
}

/// Whether an error response says the request does not fit the model's context window. By the
/// error's code where the API gives one (OpenAI's and most compatible servers'
/// `context_length_exceeded`, llama.cpp's `exceed_context_size_error`), else by the words the
/// API is documented to use, since it gives no code (Anthropic's "prompt is too long", Gemini's
/// "exceeds the maximum number of tokens allowed", vLLM's "maximum context length").
pub fn is_context_overflow(status: u16, body: &[u8]) -> bool {
    use serde_json::Value;
    if !(status == 400 || status == 413) {
        return false;
    }
    let Ok(v) = serde_json::from_slice::<Value>(body) else {
        return false;
    };
    let v = match &v {
        Value::Array(items) => items.first().unwrap_or(&Value::Null),
        other => other,
    };
    let Some(e) = v.get("error") else {
        return false;
    };
    let field = |k: &str| e.get(k).and_then(Value::as_str).unwrap_or("");
    if field("code") == "context_length_exceeded" || field("type") == "exceed_context_size_error" {
        return true;
    }
    let message = field("message").to_ascii_lowercase();
    [
        "prompt is too long",
        "exceeds the maximum number of tokens",
        "maximum context length",
    ]
    .iter()
    .any(|words| message.contains(words))
}

/// `{"error": {"message": ..., "type"/"status"/"code": ...}}` (all four APIs, and most
/// OpenAI-compatible servers), `[{"error": ...}]` (Gemini streaming), `{"error": "text"}`
/// (some local servers), `{"message": ...}`, `{"detail": ...}`.
pub(crate) fn error_message(v: &serde_json::Value) -> Option<String> {
    use serde_json::Value;
    let v = match v {
        Value::Array(items) => items.first()?,
        other => other,
    };
    match v.get("error") {
        Some(Value::String(s)) => return Some(s.clone()),
        Some(Value::Object(e)) => {
            let message = e.get("message").and_then(Value::as_str)?;
            let kind = ["type", "status", "code"]
                .iter()
                .find_map(|k| match e.get(*k) {
                    Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
                    Some(Value::Number(n)) => Some(n.to_string()),
                    _ => None,
                });
            return Some(match kind {
                Some(k) if !message.contains(&k) => format!("{k}: {message}"),
                _ => message.to_string(),
            });
        }
        _ => {}
    }
    for key in ["message", "detail"] {
        if let Some(Value::String(s)) = v.get(key) {
            return Some(s.clone());
        }
    }
    None
}

/// A count at a JSON pointer, when it is a non-negative integer.
pub(crate) fn count_at(v: &serde_json::Value, pointer: &str) -> Option<u64> {
    v.pointer(pointer).and_then(serde_json::Value::as_u64)
}

/// A string at a JSON pointer.
pub(crate) fn str_at<'a>(v: &'a serde_json::Value, pointer: &str) -> Option<&'a str> {
    v.pointer(pointer).and_then(serde_json::Value::as_str)
}

/// With tool uses among the parts, an ordinary stop means the model wants results (OpenAI
/// Responses and Gemini say "completed"/"STOP"; some OpenAI-compatible servers say "stop").
pub(crate) fn settle_stop(stop: Stop, parts: &[Part]) -> Stop {
    let has_tool = parts.iter().any(|p| matches!(p, Part::ToolUse { .. }));
    if has_tool && stop == Stop::EndTurn {
        Stop::ToolUse
    } else {
        stop
    }
}
