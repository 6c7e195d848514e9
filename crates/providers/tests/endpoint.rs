//! Where requests go: URLs, headers and key variables per dialect, with user base URLs.

use switchboard_core::Dialect;
use switchboard_providers::{Endpoint, api_key_env, default_base_url, endpoint};

fn header<'a>(e: &'a Endpoint, name: &str) -> Option<&'a str> {
    e.headers
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

#[test]
fn default_endpoints() {
    let a = endpoint(
        Dialect::Anthropic,
        default_base_url(Dialect::Anthropic),
        "claude-sonnet-4-5",
        false,
        Some("sk-ant-x"),
    );
    assert_eq!(a.url, "https://api.anthropic.com/v1/messages");
    assert_eq!(header(&a, "x-api-key"), Some("sk-ant-x"));
    assert_eq!(header(&a, "anthropic-version"), Some("2023-06-01"));
    assert_eq!(header(&a, "content-type"), Some("application/json"));
    assert_eq!(header(&a, "accept"), None);

    let c = endpoint(
        Dialect::OpenAiChat,
        default_base_url(Dialect::OpenAiChat),
        "gpt-4.1",
        true,
        Some("sk-x"),
    );
    assert_eq!(c.url, "https://api.openai.com/v1/chat/completions");
    assert_eq!(header(&c, "authorization"), Some("Bearer sk-x"));
    assert_eq!(header(&c, "accept"), Some("text/event-stream"));

    let r = endpoint(
        Dialect::OpenAiResponses,
        default_base_url(Dialect::OpenAiResponses),
        "gpt-5",
        false,
        Some("sk-x"),
    );
    assert_eq!(r.url, "https://api.openai.com/v1/responses");

    let g = endpoint(
        Dialect::Gemini,
        default_base_url(Dialect::Gemini),
        "gemini-2.5-flash",
        false,
        Some("AIza"),
    );
    assert_eq!(
        g.url,
        "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent"
    );
    assert_eq!(header(&g, "x-goog-api-key"), Some("AIza"));
    let gs = endpoint(
        Dialect::Gemini,
        default_base_url(Dialect::Gemini),
        "models/gemini-2.5-flash",
        true,
        None,
    );
    assert_eq!(
        gs.url,
        "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    );
}

#[test]
fn user_base_urls_and_no_key() {
    // A local OpenAI-compatible server: base ends in /v1, no key, no auth header.
    let e = endpoint(
        Dialect::OpenAiChat,
        "http://localhost:11434/v1/",
        "qwen3:8b",
        false,
        None,
    );
    assert_eq!(e.url, "http://localhost:11434/v1/chat/completions");
    assert!(e.headers.iter().all(|(n, _)| n != "authorization"));
    // An Anthropic-compatible proxy given with or without /v1.
    for base in [
        "http://127.0.0.1:8080",
        "http://127.0.0.1:8080/",
        "http://127.0.0.1:8080/v1",
    ] {
        let e = endpoint(Dialect::Anthropic, base, "m", true, None);
        assert_eq!(e.url, "http://127.0.0.1:8080/v1/messages", "{base}");
        assert!(e.headers.iter().all(|(n, _)| n != "x-api-key"));
    }
}

#[test]
fn key_variables() {
    assert_eq!(api_key_env(Dialect::Anthropic), ["ANTHROPIC_API_KEY"]);
    assert_eq!(api_key_env(Dialect::OpenAiChat), ["OPENAI_API_KEY"]);
    assert_eq!(api_key_env(Dialect::OpenAiResponses), ["OPENAI_API_KEY"]);
    assert_eq!(
        api_key_env(Dialect::Gemini),
        ["GEMINI_API_KEY", "GOOGLE_API_KEY"]
    );
    // Every secret header is listed for redaction.
    for d in Dialect::ALL {
        let e = endpoint(d, default_base_url(d), "m", false, Some("secret"));
        for (name, value) in &e.headers {
            if value.contains("secret") {
                assert!(
                    switchboard_providers::endpoint::SECRET_HEADERS.contains(&name.as_str()),
                    "{d}: {name}"
                );
            }
        }
    }
}

/// The interleaved-thinking beta goes with a Claude 4 model before 4.6 thinking on a budget
/// with tools, and with nothing else.
#[test]
fn the_interleaved_thinking_beta_goes_only_where_it_is_needed() {
    use serde_json::json;
    use switchboard_providers::body_headers;
    let body = |model: &str, thinking: serde_json::Value, tools: serde_json::Value| json!({"model": model, "thinking": thinking, "tools": tools, "messages": []});
    let budget = json!({"type": "enabled", "budget_tokens": 2048});
    let tool = json!([{"name": "t", "input_schema": {"type": "object"}}]);
    let beta = vec![(
        "anthropic-beta".to_string(),
        "interleaved-thinking-2025-05-14".to_string(),
    )];
    assert_eq!(
        body_headers(
            Dialect::Anthropic,
            &body("claude-sonnet-4-5-20250929", budget.clone(), tool.clone())
        ),
        beta
    );
    for (dialect, b) in [
        (
            Dialect::Anthropic,
            body("claude-sonnet-4-5", budget.clone(), json!([])),
        ),
        (
            Dialect::Anthropic,
            body("claude-3-7-sonnet-latest", budget.clone(), tool.clone()),
        ),
        (
            Dialect::Anthropic,
            body("claude-opus-4-7", json!({"type": "adaptive"}), tool.clone()),
        ),
        (
            Dialect::Anthropic,
            body("claude-sonnet-4-5", json!(null), tool.clone()),
        ),
        (
            Dialect::OpenAiChat,
            body("claude-sonnet-4-5", budget.clone(), tool.clone()),
        ),
    ] {
        assert!(body_headers(dialect, &b).is_empty(), "{dialect} {b}");
    }
}

/// The API a model name plainly belongs to, and none for names of no one provider.
#[test]
fn a_model_name_says_whose_it_is() {
    use switchboard_providers::{provider_for_model, same_provider};
    for (model, whose) in [
        ("claude-sonnet-4-5", Some(Dialect::Anthropic)),
        ("gpt-5", Some(Dialect::OpenAiResponses)),
        ("GPT-4.1-mini", Some(Dialect::OpenAiResponses)),
        ("chatgpt-4o-latest", Some(Dialect::OpenAiResponses)),
        ("o3", Some(Dialect::OpenAiResponses)),
        ("o4-mini", Some(Dialect::OpenAiResponses)),
        ("gemini-2.5-pro", Some(Dialect::Gemini)),
        ("models/gemini-3-pro-preview", Some(Dialect::Gemini)),
        ("omni-large", None),
        ("o", None),
        ("openai/gpt-5", None),
        ("llama3:8b", None),
        ("", None),
    ] {
        assert_eq!(provider_for_model(model), whose, "{model}");
    }
    assert!(same_provider(Dialect::OpenAiChat, Dialect::OpenAiResponses));
    assert!(!same_provider(Dialect::Anthropic, Dialect::Gemini));
}
