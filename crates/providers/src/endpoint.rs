//! Where each dialect's requests go: URL, headers and the API key's place, so the HTTP client
//! in the host needs no wire knowledge.

use switchboard_core::Dialect;

/// One request's target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoint {
    /// The full URL to POST to.
    pub url: String,
    /// Headers to send (the API key among them, when given). Lower-case names.
    pub headers: Vec<(String, String)>,
}

/// The `anthropic-version` header value sent with every Anthropic request.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// The base URL used when the user gives none. OpenAI's includes `/v1` (as users' local
/// servers' do: `http://localhost:11434/v1`); Anthropic's does not (`/v1/messages` is added,
/// and a base that already ends in `/v1` is not doubled); Gemini's includes `/v1beta`.
pub fn default_base_url(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Anthropic => "https://api.anthropic.com",
        Dialect::OpenAiChat | Dialect::OpenAiResponses => "https://api.openai.com/v1",
        Dialect::Gemini => "https://generativelanguage.googleapis.com/v1beta",
    }
}

/// The API a model name plainly belongs to, for when no provider is named: `claude-…` is
/// Anthropic's; `gpt-…`, `chatgpt-…` and the o-series (`o3`, `o4-mini`, …) are OpenAI's, whose
/// Responses API they take (it keeps a reasoning model's reasoning through a tool loop);
/// `gemini-…` (or `models/gemini-…`) is Gemini's. `None` for anything else (a local model, a
/// router's `vendor/model` name).
pub fn provider_for_model(model: &str) -> Option<Dialect> {
    let m = model.trim().to_ascii_lowercase();
    let m = m.strip_prefix("models/").unwrap_or(&m);
    let o_series = m.strip_prefix('o').is_some_and(|rest| {
        let digits = rest.chars().take_while(char::is_ascii_digit).count();
        digits > 0 && matches!(rest[digits..].chars().next(), None | Some('-'))
    });
    if m.starts_with("claude-") {
        Some(Dialect::Anthropic)
    } else if m.starts_with("gpt-") || m.starts_with("chatgpt-") || o_series {
        Some(Dialect::OpenAiResponses)
    } else if m.starts_with("gemini-") {
        Some(Dialect::Gemini)
    } else {
        None
    }
}

/// Whether two APIs are the same provider's (OpenAI's Chat Completions and Responses are).
pub fn same_provider(a: Dialect, b: Dialect) -> bool {
    default_base_url(a) == default_base_url(b)
}

/// The environment variables holding the API key, in order of preference.
pub fn api_key_env(dialect: Dialect) -> &'static [&'static str] {
    match dialect {
        Dialect::Anthropic => &["ANTHROPIC_API_KEY"],
        Dialect::OpenAiChat | Dialect::OpenAiResponses => &["OPENAI_API_KEY"],
        Dialect::Gemini => &["GEMINI_API_KEY", "GOOGLE_API_KEY"],
    }
}

/// The URL and headers for one request. `base_url` is [`default_base_url`] or the user's
/// `--base-url` (a trailing `/` is ignored); `api_key` goes into the dialect's header
/// (`x-api-key`, `Authorization: Bearer`, `x-goog-api-key`) and no key header is sent without
/// one (local servers need none). `stream` picks Gemini's streaming method (`alt=sse`) and an
/// `accept: text/event-stream` header; the other dialects stream through the body's `stream`.
pub fn endpoint(
    dialect: Dialect,
    base_url: &str,
    model: &str,
    stream: bool,
    api_key: Option<&str>,
) -> Endpoint {
    let base = base_url.trim_end_matches('/');
    let mut headers = vec![("content-type".to_string(), "application/json".to_string())];
    if stream {
        headers.push(("accept".into(), "text/event-stream".into()));
    }
    let url = match dialect {
        Dialect::Anthropic => {
            if let Some(key) = api_key {
                headers.push(("x-api-key".into(), key.into()));
            }
            headers.push(("anthropic-version".into(), ANTHROPIC_VERSION.into()));
            if base.ends_with("/v1") {
                format!("{base}/messages")
            } else {
                format!("{base}/v1/messages")
            }
        }
        Dialect::OpenAiChat | Dialect::OpenAiResponses => {
            if let Some(key) = api_key {
                headers.push(("authorization".into(), format!("Bearer {key}")));
            }
            let path = if dialect == Dialect::OpenAiChat {
                "chat/completions"
            } else {
                "responses"
            };
            format!("{base}/{path}")
        }
        Dialect::Gemini => {
            if let Some(key) = api_key {
                headers.push(("x-goog-api-key".into(), key.into()));
            }
            let model = model.strip_prefix("models/").unwrap_or(model);
            if stream {
                format!("{base}/models/{model}:streamGenerateContent?alt=sse")
            } else {
                format!("{base}/models/{model}:generateContent")
            }
        }
    };
    Endpoint { url, headers }
}

/// The beta Claude 4 models before 4.6 need to think between tool calls with a thinking
/// budget; without it they think only before the first call of a turn. (From 4.6 on, adaptive
/// thinking does so without it.)
pub const INTERLEAVED_THINKING_BETA: &str = "interleaved-thinking-2025-05-14";

/// Headers a rendered request body needs beside [`endpoint`]'s: `anthropic-beta:
/// interleaved-thinking-2025-05-14` when a Claude 4 model before 4.6 thinks on a budget with
/// tools. No other body needs one.
pub fn body_headers(dialect: Dialect, body: &serde_json::Value) -> Vec<(String, String)> {
    let budget = body.pointer("/thinking/type").and_then(|t| t.as_str()) == Some("enabled");
    let tools = body
        .get("tools")
        .and_then(|t| t.as_array())
        .is_some_and(|t| !t.is_empty());
    let claude_4 = body
        .get("model")
        .and_then(|m| m.as_str())
        .and_then(|m| crate::effort::version(m, "claude-"))
        .is_some_and(|(major, _)| major == 4);
    if dialect == Dialect::Anthropic && budget && tools && claude_4 {
        vec![("anthropic-beta".into(), INTERLEAVED_THINKING_BETA.into())]
    } else {
        Vec::new()
    }
}

/// Header names whose values are secrets (for redaction in transcripts and logs).
pub const SECRET_HEADERS: &[&str] = &["x-api-key", "authorization", "x-goog-api-key"];
