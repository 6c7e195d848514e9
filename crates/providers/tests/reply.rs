//! Decoding whole (non-streamed) responses and error bodies of each dialect, from realistic
//! bodies written after the shapes in reference/providers.md and the APIs' documentation.

use serde_json::{Value, json};
use switchboard_core::Dialect;
use switchboard_providers::{Part, ProviderError, Reply, Stop, Usage, decode_error, decode_reply};

fn decode(dialect: Dialect, body: &Value) -> Reply {
    match decode_reply(dialect, body.to_string().as_bytes()) {
        Ok(r) => r,
        Err(e) => panic!("{dialect}: {e}"),
    }
}

fn tool(id: &str, name: &str, input: Value) -> Part {
    Part::ToolUse {
        id: id.into(),
        name: name.into(),
        input,
    }
}

#[test]
fn anthropic_text_and_tool_use() {
    let body = json!({
        "id": "msg_01XFDUDYJgAACzvnptvVoYEL", "type": "message", "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [
            {"type": "thinking", "thinking": "The user wants tickets.", "signature": "abc"},
            {"type": "text", "text": "I'll look that up."},
            {"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": "tickets__search", "input": {"query": "login"}},
            {"type": "tool_use", "id": "toolu_01B", "name": "docs__list", "input": {}}
        ],
        "stop_reason": "tool_use", "stop_sequence": null,
        "usage": {"input_tokens": 2095, "cache_creation_input_tokens": 100, "cache_read_input_tokens": 1800, "output_tokens": 503}
    });
    let r = decode(Dialect::Anthropic, &body);
    assert_eq!(
        r.parts,
        vec![
            Part::text("I'll look that up."),
            tool(
                "toolu_01A09q90qw90lq917835lq9",
                "tickets__search",
                json!({"query": "login"})
            ),
            tool("toolu_01B", "docs__list", json!({})),
        ]
    );
    assert_eq!(r.stop, Stop::ToolUse);
    assert_eq!(
        r.usage,
        Usage {
            input_tokens: 2095 + 100 + 1800,
            output_tokens: 503,
            cache_read_tokens: Some(1800),
            cache_write_tokens: Some(100),
        }
    );
}

#[test]
fn anthropic_stops() {
    for (reason, stop) in [
        ("end_turn", Stop::EndTurn),
        ("stop_sequence", Stop::EndTurn),
        ("max_tokens", Stop::MaxTokens),
        ("refusal", Stop::Refusal),
        ("pause_turn", Stop::Other("pause_turn".into())),
    ] {
        let body = json!({"type": "message", "role": "assistant", "content": [{"type": "text", "text": "x"}],
            "stop_reason": reason, "usage": {"input_tokens": 1, "output_tokens": 1}});
        assert_eq!(decode(Dialect::Anthropic, &body).stop, stop, "{reason}");
    }
}

#[test]
fn openai_chat_parallel_calls_and_invalid_arguments() {
    let body = json!({
        "id": "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG", "object": "chat.completion", "created": 1741570283,
        "model": "gpt-4o-2024-08-06",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": null, "refusal": null, "annotations": [],
            "tool_calls": [
                {"id": "call_12345xyz", "type": "function", "function": {"name": "tickets__search", "arguments": "{\"query\":\"login\"}"}},
                {"id": "call_67890abc", "type": "function", "function": {"name": "docs__search", "arguments": "{\"q\": \"log"}}
            ]}, "logprobs": null, "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 1182, "completion_tokens": 47, "total_tokens": 1229,
            "prompt_tokens_details": {"cached_tokens": 1024, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 0}},
        "service_tier": "default", "system_fingerprint": "fp_50cad350e4"
    });
    let r = decode(Dialect::OpenAiChat, &body);
    assert_eq!(
        r.parts[0],
        tool(
            "call_12345xyz",
            "tickets__search",
            json!({"query": "login"})
        )
    );
    // Not JSON: kept raw, so the loop can answer "invalid arguments".
    assert_eq!(r.parts[1].invalid_input(), Some("{\"q\": \"log"));
    assert_eq!(r.stop, Stop::ToolUse);
    assert_eq!(
        r.usage,
        Usage {
            input_tokens: 1182,
            output_tokens: 47,
            cache_read_tokens: Some(1024),
            cache_write_tokens: None,
        }
    );
}

#[test]
fn openai_chat_local_server_quirks() {
    // Ollama-style: no call id, finish_reason "stop" with tool calls, arguments as an object.
    let body = json!({
        "id": "chatcmpl-42", "object": "chat.completion", "model": "qwen3:8b",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "",
            "tool_calls": [{"type": "function", "function": {"name": "tickets__search", "arguments": {"query": "login"}}}]},
            "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 300, "completion_tokens": 20, "total_tokens": 320}
    });
    let r = decode(Dialect::OpenAiChat, &body);
    assert_eq!(
        r.parts,
        vec![tool("call_0", "tickets__search", json!({"query": "login"}))]
    );
    assert_eq!(r.stop, Stop::ToolUse);
    assert_eq!(r.usage.cache_read_tokens, None);
}

#[test]
fn openai_chat_text_refusal_and_length() {
    let text = json!({"object": "chat.completion", "choices": [{"index": 0,
        "message": {"role": "assistant", "content": "T-17 is open."}, "finish_reason": "length"}]});
    let r = decode(Dialect::OpenAiChat, &text);
    assert_eq!(r.parts, vec![Part::text("T-17 is open.")]);
    assert_eq!(r.stop, Stop::MaxTokens);
    assert_eq!(r.usage, Usage::default());
    let refusal = json!({"object": "chat.completion", "choices": [{"index": 0,
        "message": {"role": "assistant", "content": null, "refusal": "I can't help with that."}, "finish_reason": "stop"}]});
    let r = decode(Dialect::OpenAiChat, &refusal);
    assert_eq!(r.stop, Stop::Refusal);
    assert_eq!(r.parts, vec![Part::text("I can't help with that.")]);
}

#[test]
fn openai_responses_function_calls_and_statuses() {
    let body = json!({
        "id": "resp_67ccd2bed1ec8190", "object": "response", "created_at": 1741476542,
        "status": "completed", "error": null, "incomplete_details": null, "model": "gpt-5",
        "output": [
            {"type": "reasoning", "id": "rs_1", "summary": []},
            {"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
             "content": [{"type": "output_text", "text": "Searching.", "annotations": []}]},
            {"type": "function_call", "id": "fc_1", "call_id": "call_abc", "name": "tickets__search",
             "arguments": "{\"query\":\"login\"}", "status": "completed"},
            {"type": "function_call", "id": "fc_2", "call_id": "call_def", "name": "docs__search",
             "arguments": "{\"q\":\"login\"}", "status": "completed"}
        ],
        "usage": {"input_tokens": 291, "input_tokens_details": {"cached_tokens": 128},
                  "output_tokens": 23, "output_tokens_details": {"reasoning_tokens": 10}, "total_tokens": 314}
    });
    let r = decode(Dialect::OpenAiResponses, &body);
    assert_eq!(
        r.parts,
        vec![
            Part::text("Searching."),
            tool("call_abc", "tickets__search", json!({"query": "login"})),
            tool("call_def", "docs__search", json!({"q": "login"})),
        ]
    );
    // "completed" with function calls means the model waits for results.
    assert_eq!(r.stop, Stop::ToolUse);
    assert_eq!(r.usage.input_tokens, 291);
    assert_eq!(r.usage.output_tokens, 23);
    assert_eq!(r.usage.cache_read_tokens, Some(128));

    let cut = json!({"object": "response", "status": "incomplete",
        "incomplete_details": {"reason": "max_output_tokens"},
        "output": [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "T-17 is"}]}],
        "usage": {"input_tokens": 10, "output_tokens": 16}});
    assert_eq!(decode(Dialect::OpenAiResponses, &cut).stop, Stop::MaxTokens);
    let plain = json!({"object": "response", "status": "completed",
        "output": [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Done."}]}]});
    assert_eq!(decode(Dialect::OpenAiResponses, &plain).stop, Stop::EndTurn);

    let failed = json!({"object": "response", "status": "failed",
        "error": {"code": "server_error", "message": "The model failed to generate a response."}, "output": []});
    let err = decode_reply(Dialect::OpenAiResponses, failed.to_string().as_bytes()).unwrap_err();
    assert!(matches!(err, ProviderError::Api { .. }), "{err}");
    assert!(err.to_string().contains("failed to generate"), "{err}");
}

#[test]
fn gemini_calls_get_deterministic_ids() {
    let body = json!({
        "candidates": [{"content": {"role": "model", "parts": [
            {"text": "Thinking about tickets", "thought": true},
            {"text": "Let me search."},
            {"functionCall": {"name": "tickets__search", "args": {"query": "login"}}},
            {"functionCall": {"name": "docs__search", "args": {"q": "login"}}}
        ]}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 120, "candidatesTokenCount": 30, "thoughtsTokenCount": 20,
                          "cachedContentTokenCount": 64, "totalTokenCount": 170},
        "modelVersion": "gemini-2.5-flash", "responseId": "abc123"
    });
    let r = decode(Dialect::Gemini, &body);
    assert_eq!(
        r.parts,
        vec![
            Part::text("Let me search."),
            tool(
                "gemini-call-0",
                "tickets__search",
                json!({"query": "login"})
            ),
            tool("gemini-call-1", "docs__search", json!({"q": "login"})),
        ]
    );
    assert_eq!(r.stop, Stop::ToolUse);
    assert_eq!(
        r.usage,
        Usage {
            input_tokens: 120,
            output_tokens: 50,
            cache_read_tokens: Some(64),
            cache_write_tokens: None,
        }
    );
    // Same body, same ids.
    assert_eq!(decode(Dialect::Gemini, &body), r);
    // A real id (newer API) is kept.
    let with_id = json!({"candidates": [{"content": {"role": "model", "parts": [
        {"functionCall": {"id": "fc-9", "name": "tickets__search", "args": {}}}]}, "finishReason": "STOP"}]});
    assert_eq!(
        decode(Dialect::Gemini, &with_id).parts,
        vec![tool("fc-9", "tickets__search", json!({}))]
    );
}

#[test]
fn gemini_stops_and_blocked_prompt() {
    for (reason, stop) in [
        ("MAX_TOKENS", Stop::MaxTokens),
        ("SAFETY", Stop::Refusal),
        (
            "MALFORMED_FUNCTION_CALL",
            Stop::Other("MALFORMED_FUNCTION_CALL".into()),
        ),
    ] {
        let body = json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "x"}]}, "finishReason": reason}]});
        assert_eq!(decode(Dialect::Gemini, &body).stop, stop, "{reason}");
    }
    let blocked = json!({"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"},
        "usageMetadata": {"promptTokenCount": 8, "totalTokenCount": 8}});
    let r = decode(Dialect::Gemini, &blocked);
    assert_eq!(r.stop, Stop::Refusal);
    assert_eq!(r.usage.input_tokens, 8);
    assert!(matches!(&r.parts[..], [Part::Text(t)] if t.contains("PROHIBITED_CONTENT")));
}

#[test]
fn malformed_bodies_are_clear_errors() {
    let cases: [(&[u8], &str); 4] = [
        (b"<html>502 Bad Gateway</html>", "not JSON"),
        (b"{}", ""),
        (b"[1, 2]", ""),
        (
            b"{\"content\": \"text\", \"choices\": 3, \"output\": {}, \"candidates\": 7}",
            "",
        ),
    ];
    for dialect in Dialect::ALL {
        for (body, want) in cases {
            match decode_reply(dialect, body) {
                Err(e @ ProviderError::Decode { .. }) => {
                    assert!(e.to_string().contains(want), "{dialect}: {e}");
                    assert!(e.to_string().contains(dialect.as_str()), "{dialect}: {e}");
                }
                other => panic!("{dialect} {:?}: {other:?}", String::from_utf8_lossy(body)),
            }
        }
    }
    // A tool use without a name cannot be answered: an error, not a guess.
    let nameless =
        json!({"type": "message", "content": [{"type": "tool_use", "id": "toolu_1", "input": {}}]});
    assert!(decode_reply(Dialect::Anthropic, nameless.to_string().as_bytes()).is_err());
}

#[test]
fn error_bodies_give_the_providers_message() {
    let anthropic = json!({"type": "error", "error": {"type": "invalid_request_error",
        "message": "messages.1.content.0.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'"},
        "request_id": "req_011CSHoEeqs5C35K2UUqR7Fy"});
    assert_eq!(
        decode_error(Dialect::Anthropic, 400, anthropic.to_string().as_bytes()),
        "invalid_request_error: messages.1.content.0.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'"
    );
    let openai = json!({"error": {"message": "Invalid 'tools[0].function.name': string does not match pattern.",
        "type": "invalid_request_error", "param": "tools[0].function.name", "code": "invalid_value"}});
    assert_eq!(
        decode_error(Dialect::OpenAiChat, 400, openai.to_string().as_bytes()),
        "invalid_request_error: Invalid 'tools[0].function.name': string does not match pattern."
    );
    let gemini = json!({"error": {"code": 400, "message": "API key not valid. Please pass a valid API key.",
        "status": "INVALID_ARGUMENT", "details": []}});
    assert_eq!(
        decode_error(Dialect::Gemini, 400, gemini.to_string().as_bytes()),
        "INVALID_ARGUMENT: API key not valid. Please pass a valid API key."
    );
    let ollama = json!({"error": "model \"llama3\" not found, try pulling it first"});
    assert_eq!(
        decode_error(Dialect::OpenAiChat, 404, ollama.to_string().as_bytes()),
        "model \"llama3\" not found, try pulling it first"
    );
    let html = format!("<html><body>{}</body></html>", "Bad Gateway ".repeat(100));
    let msg = decode_error(Dialect::Anthropic, 502, html.as_bytes());
    assert!(msg.starts_with("<html><body>Bad Gateway"), "{msg}");
    assert!(msg.chars().count() <= 502, "{msg}");
    assert_eq!(
        decode_error(Dialect::OpenAiResponses, 503, b"  "),
        "HTTP 503 with an empty body"
    );
}

mod never_panics {
    use proptest::prelude::*;
    use switchboard_core::Dialect;
    use switchboard_providers::{StreamDecoder, decode_error, decode_reply};

    fn json_like() -> impl Strategy<Value = String> {
        let leaf = prop_oneof![
            Just("null".to_string()),
            Just("1".to_string()),
            Just("\"x\"".to_string()),
            Just("[]".to_string()),
            Just("{}".to_string()),
        ];
        leaf.prop_recursive(4, 32, 6, |inner| {
            let keys = prop_oneof![
                Just("content"),
                Just("type"),
                Just("choices"),
                Just("message"),
                Just("tool_calls"),
                Just("function"),
                Just("arguments"),
                Just("output"),
                Just("candidates"),
                Just("parts"),
                Just("functionCall"),
                Just("usage"),
                Just("index"),
                Just("delta"),
                Just("error"),
                Just("text"),
                Just("name"),
                Just("id"),
                Just("input"),
                Just("content_block"),
                Just("partial_json"),
            ];
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4)
                    .prop_map(|v| format!("[{}]", v.join(","))),
                prop::collection::vec((keys, inner), 0..5).prop_map(|kv| {
                    let body: Vec<String> =
                        kv.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
                    format!("{{{}}}", body.join(","))
                }),
            ]
        })
    }

    proptest! {
        #[test]
        fn decoders_return_errors_not_panics(body in json_like(), raw in ".{0,40}") {
            for dialect in Dialect::ALL {
                let _ = decode_reply(dialect, body.as_bytes());
                let _ = decode_reply(dialect, raw.as_bytes());
                let _ = decode_error(dialect, 500, body.as_bytes());
                let mut d = StreamDecoder::new(dialect);
                let _ = d.feed(None, &body);
                let _ = d.feed(Some("content_block_delta"), &body);
                let _ = d.feed(None, &raw);
                let _ = d.finish();
            }
        }
    }
}

#[test]
fn gemini_thought_signatures_survive_the_round_trip() {
    use switchboard_providers::{Message, RequestParts, ResultPart, render_request};
    let body = json!({"candidates": [{"content": {"role": "model", "parts": [
        {"functionCall": {"name": "tickets__search", "args": {"query": "login"}}, "thoughtSignature": "CiQB0e2Kb3c="},
        {"functionCall": {"name": "docs__search", "args": {"q": "login"}}}
    ]}, "finishReason": "STOP"}]});
    let reply = decode(Dialect::Gemini, &body);
    let ids: Vec<String> = reply
        .parts
        .iter()
        .filter_map(|p| match p {
            Part::ToolUse { id, .. } => Some(id.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        ids,
        [
            "gemini-call-0#thought-signature:CiQB0e2Kb3c=",
            "gemini-call-1"
        ]
    );
    let results = reply
        .parts
        .iter()
        .filter_map(|p| match p {
            Part::ToolUse { id, name, .. } => Some(Part::ToolResult {
                id: id.clone(),
                name: name.clone(),
                content: vec![ResultPart::Text("ok".into())],
                is_error: false,
            }),
            _ => None,
        })
        .collect();
    let parts = RequestParts {
        model: "gemini-3-pro-preview".into(),
        system: None,
        messages: vec![
            Message::user("find login tickets"),
            Message::assistant(reply.parts.clone()),
            Message::tool_results(results),
        ],
        tools: Vec::new(),
        max_tokens: 100,
        gemini_openapi: false,
        stream: false,
    };
    let sent = render_request(Dialect::Gemini, &parts);
    assert_eq!(
        sent.pointer("/contents/1/parts/0"),
        Some(
            &json!({"functionCall": {"name": "tickets__search", "args": {"query": "login"}}, "thoughtSignature": "CiQB0e2Kb3c="})
        )
    );
    assert_eq!(
        sent.pointer("/contents/1/parts/1"),
        Some(&json!({"functionCall": {"name": "docs__search", "args": {"q": "login"}}}))
    );
    assert_eq!(
        sent.pointer("/contents/2/parts/0"),
        Some(
            &json!({"functionResponse": {"name": "tickets__search", "response": {"output": "ok"}}})
        )
    );
    let violations = switchboard_test_support::validator::validate_request(Dialect::Gemini, &sent);
    assert!(violations.is_empty(), "{violations:#?}");
}

#[test]
fn openai_chat_content_as_a_list_of_parts() {
    let body = json!({"object": "chat.completion", "choices": [{"index": 0, "message": {"role": "assistant",
        "content": [{"type": "text", "text": "Two "}, {"type": "text", "text": "parts."}]}, "finish_reason": "stop"}]});
    assert_eq!(
        decode(Dialect::OpenAiChat, &body).parts,
        vec![Part::text("Two parts.")]
    );
}
