//! The providers' own counts: the endpoint that counts a request's input tokens without running
//! it (Anthropic's `POST /v1/messages/count_tokens`, the Responses API's
//! `POST /responses/input_tokens`, Gemini's `models/{m}:countTokens`; OpenAI Chat Completions
//! has none), the body each takes, made from the request body `render_request` built, and the
//! number read from its answer. The rent of a tools array is the count with the tools less the
//! count without them (`reference/providers.md` §3).

use serde_json::{Map, Value};
use switchboard_core::Dialect;

use crate::endpoint::{Endpoint, endpoint};
use crate::error::ProviderError;

/// Where `dialect`'s counting requests go, with the same headers as its requests; `None` for
/// OpenAI Chat Completions, which has no counting endpoint.
pub fn count_endpoint(
    dialect: Dialect,
    base_url: &str,
    model: &str,
    api_key: Option<&str>,
) -> Option<Endpoint> {
    let mut ep = endpoint(dialect, base_url, model, false, api_key);
    ep.url = match dialect {
        Dialect::Anthropic => format!("{}/count_tokens", ep.url),
        Dialect::OpenAiResponses => format!("{}/input_tokens", ep.url),
        Dialect::Gemini => ep.url.replace(":generateContent", ":countTokens"),
        Dialect::OpenAiChat => return None,
    };
    Some(ep)
}

/// The counting body for a request body `request` rendered for `dialect` (not streamed):
/// Anthropic's without the fields counting refuses (`max_tokens`, `stream`); the Responses API's
/// with only the fields `input_tokens` takes; Gemini's as a `generateContentRequest` naming
/// the model (`models/M`). `None` for OpenAI Chat.
pub fn count_body(dialect: Dialect, model: &str, request: &Value) -> Option<Value> {
    let fields = request.as_object()?;
    let keep = |names: &[&str]| -> Map<String, Value> {
        fields
            .iter()
            .filter(|(k, _)| names.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    };
    match dialect {
        Dialect::Anthropic => Some(Value::Object(keep(&[
            "model",
            "messages",
            "system",
            "tools",
            "tool_choice",
            "thinking",
        ]))),
        Dialect::OpenAiResponses => Some(Value::Object(keep(&[
            "model",
            "input",
            "instructions",
            "tools",
            "tool_choice",
            "reasoning",
            "text",
            "parallel_tool_calls",
            "truncation",
        ]))),
        Dialect::Gemini => {
            let mut inner = keep(&["contents", "tools", "toolConfig", "systemInstruction"]);
            let model = model.strip_prefix("models/").unwrap_or(model);
            inner.insert("model".into(), Value::String(format!("models/{model}")));
            let mut outer = Map::new();
            outer.insert("generateContentRequest".into(), Value::Object(inner));
            Some(Value::Object(outer))
        }
        Dialect::OpenAiChat => None,
    }
}

/// The input tokens a counting endpoint's answer gives: `input_tokens` (Anthropic, Responses),
/// `totalTokens` (Gemini).
pub fn decode_count(dialect: Dialect, body: &[u8]) -> Result<u64, ProviderError> {
    let bad = |message: String| ProviderError::Decode { dialect, message };
    let value: Value =
        serde_json::from_slice(body).map_err(|e| bad(format!("the count is not JSON: {e}")))?;
    let key = match dialect {
        Dialect::Gemini => "totalTokens",
        _ => "input_tokens",
    };
    match value.get(key) {
        Some(n) => n
            .as_u64()
            .ok_or_else(|| bad(format!("`{key}` is not a count of tokens: {n}"))),
        // Gemini leaves out a count of zero.
        None if dialect == Dialect::Gemini && value.is_object() => Ok(0),
        None => Err(bad(format!("the answer has no `{key}`"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_api_counts_at_its_own_address() {
        let url = |d: Dialect, base: &str| count_endpoint(d, base, "m-1", Some("k")).map(|e| e.url);
        assert_eq!(
            url(Dialect::Anthropic, "https://api.anthropic.com").as_deref(),
            Some("https://api.anthropic.com/v1/messages/count_tokens")
        );
        assert_eq!(
            url(Dialect::OpenAiResponses, "https://api.openai.com/v1").as_deref(),
            Some("https://api.openai.com/v1/responses/input_tokens")
        );
        assert_eq!(
            url(
                Dialect::Gemini,
                "https://generativelanguage.googleapis.com/v1beta"
            )
            .as_deref(),
            Some("https://generativelanguage.googleapis.com/v1beta/models/m-1:countTokens")
        );
        assert_eq!(url(Dialect::OpenAiChat, "https://api.openai.com/v1"), None);
        let headers = count_endpoint(Dialect::Anthropic, "http://x", "m", Some("k"))
            .unwrap()
            .headers;
        assert!(headers.contains(&("x-api-key".into(), "k".into())));
    }

    #[test]
    fn the_counting_body_keeps_what_counting_takes() {
        let anthropic = json!({"model": "m", "max_tokens": 10, "stream": true, "system": "s",
            "messages": [], "tools": []});
        assert_eq!(
            count_body(Dialect::Anthropic, "m", &anthropic).unwrap(),
            json!({"model": "m", "system": "s", "messages": [], "tools": []})
        );
        let responses = json!({"model": "m", "input": [], "max_output_tokens": 5, "store": false,
            "instructions": "i", "tools": []});
        assert_eq!(
            count_body(Dialect::OpenAiResponses, "m", &responses).unwrap(),
            json!({"model": "m", "input": [], "instructions": "i", "tools": []})
        );
        let gemini = json!({"contents": [], "tools": [], "systemInstruction": {},
            "generationConfig": {"maxOutputTokens": 5}});
        assert_eq!(
            count_body(Dialect::Gemini, "models/g", &gemini).unwrap(),
            json!({"generateContentRequest": {"model": "models/g", "contents": [], "tools": [],
                "systemInstruction": {}}})
        );
        assert_eq!(count_body(Dialect::OpenAiChat, "m", &json!({})), None);
    }

    #[test]
    fn the_count_is_read_from_each_answer() {
        assert_eq!(
            decode_count(Dialect::Anthropic, br#"{"input_tokens": 403}"#).unwrap(),
            403
        );
        assert_eq!(
            decode_count(
                Dialect::OpenAiResponses,
                br#"{"object": "response.input_tokens", "input_tokens": 12}"#
            )
            .unwrap(),
            12
        );
        assert_eq!(
            decode_count(
                Dialect::Gemini,
                br#"{"totalTokens": 31, "promptTokensDetails": []}"#
            )
            .unwrap(),
            31
        );
        assert_eq!(decode_count(Dialect::Gemini, b"{}").unwrap(), 0);
        assert!(decode_count(Dialect::Anthropic, b"{}").is_err());
        assert!(decode_count(Dialect::Anthropic, br#"{"input_tokens": -1}"#).is_err());
        assert!(decode_count(Dialect::Anthropic, b"<html>").is_err());
    }
}
