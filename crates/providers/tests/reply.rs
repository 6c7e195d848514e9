//! Decoding whole (non-streamed) responses and error bodies of each dialect, from realistic
//! bodies written after the shapes in reference/providers.md and the APIs' documentation.

use serde_json::{Value, json};
use switchboard_core::Dialect;
use switchboard_providers::{
    Part, ProviderError, Reply, Stop, Usage, decode_error, decode_reply, is_context_overflow,
};

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
            // Kept whole, to go back with the tool results.
            Part::Reasoning {
                dialect: Dialect::Anthropic,
                text: "The user wants tickets.".into(),
                data: json!({"type": "thinking", "thinking": "The user wants tickets.", "signature": "abc"}),
            },
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
            reasoning_tokens: None,
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
            reasoning_tokens: Some(0),
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
            // The model reasoned: its items are kept, as they came, to go back with the calls.
            Part::Reasoning {
                dialect: Dialect::OpenAiResponses,
                text: String::new(),
                data: json!({ "output": body["output"] }),
            },
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
    assert_eq!(r.usage.reasoning_tokens, Some(10));

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
            // A thought summary: kept to show, never sent back.
            Part::Reasoning {
                dialect: Dialect::Gemini,
                text: "Thinking about tickets".into(),
                data: Value::Null,
            },
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
            reasoning_tokens: Some(20),
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

    fn pick(values: &'static [&'static str]) -> impl Strategy<Value = serde_json::Value> {
        prop::sample::select(values).prop_map(|v| serde_json::from_str(v).unwrap())
    }

    /// Indexes, strings, counts and reasons as a hostile or broken server might send them.
    fn index() -> impl Strategy<Value = serde_json::Value> {
        pick(&[
            "0",
            "1",
            "2",
            "18446744073709551615",
            "-1",
            "\"0\"",
            "null",
            "1.5",
        ])
    }
    fn text() -> impl Strategy<Value = serde_json::Value> {
        pick(&[
            "\"\"",
            "\"a\"",
            "\"💥\"",
            "\"{\"",
            "\"{\\\"a\\\": 1}\"",
            "\"]\"",
            "null",
            "5",
            "{}",
        ])
    }
    fn count() -> impl Strategy<Value = serde_json::Value> {
        pick(&["0", "7", "18446744073709551615", "-1", "1e308", "\"5\""])
    }
    fn reason() -> impl Strategy<Value = serde_json::Value> {
        pick(&[
            "\"end_turn\"",
            "\"tool_use\"",
            "\"stop\"",
            "\"tool_calls\"",
            "\"length\"",
            "\"max_tokens\"",
            "\"STOP\"",
            "\"SAFETY\"",
            "\"completed\"",
            "\"incomplete\"",
            "\"\"",
            "null",
            "3",
        ])
    }

    /// One stream event (`event:` name, data) of `dialect`'s shapes with hostile values.
    fn event(dialect: Dialect) -> BoxedStrategy<(Option<String>, String)> {
        use serde_json::json;
        let name = |n: &str| Some(n.to_string());
        match dialect {
            Dialect::Anthropic => prop_oneof![
                count().prop_map(move |n| (name("message_start"), json!({"type": "message_start", "message": {"usage": {"input_tokens": n}}}))),
                (index(), pick(&["\"text\"", "\"tool_use\"", "\"thinking\"", "\"redacted_thinking\"", "\"server_tool_use\"", "5"]), text(), text(), text())
                    .prop_map(move |(i, t, id, n, x)| (name("content_block_start"), json!({"type": "content_block_start", "index": i,
                        "content_block": {"type": t, "id": id, "name": n, "text": x, "thinking": x, "data": x, "input": {}}}))),
                (index(), pick(&["\"text_delta\"", "\"input_json_delta\"", "\"thinking_delta\"", "\"signature_delta\"", "null"]), text())
                    .prop_map(move |(i, t, x)| (name("content_block_delta"), json!({"type": "content_block_delta", "index": i,
                        "delta": {"type": t, "text": x, "partial_json": x, "thinking": x, "signature": x}}))),
                index().prop_map(move |i| (name("content_block_stop"), json!({"type": "content_block_stop", "index": i}))),
                (reason(), count()).prop_map(move |(r, n)| (name("message_delta"), json!({"type": "message_delta",
                    "delta": {"stop_reason": r}, "usage": {"output_tokens": n, "input_tokens": n, "cache_read_input_tokens": n}}))),
                Just((name("message_stop"), json!({"type": "message_stop"}))),
                Just((name("ping"), json!({"type": "ping"}))),
            ]
            .prop_map(|(e, v)| (e, v.to_string()))
            .boxed(),
            Dialect::OpenAiChat => prop_oneof![
                (text(), reason()).prop_map(|(x, r)| json!({"choices": [{"index": 0, "delta": {"content": x}, "finish_reason": r}]})),
                (index(), text(), text(), text()).prop_map(|(i, id, n, a)| json!({"choices": [{"index": 0,
                    "delta": {"tool_calls": [{"index": i, "id": id, "type": "function", "function": {"name": n, "arguments": a}}]}}]})),
                text().prop_map(|a| json!({"choices": [{"delta": {"tool_calls": [{"function": {"arguments": a}}]}}]})),
                count().prop_map(|n| json!({"choices": [], "usage": {"prompt_tokens": n, "completion_tokens": n,
                    "prompt_tokens_details": {"cached_tokens": n}}})),
                text().prop_map(|x| json!({"choices": [{"delta": {"refusal": x}}]})),
                (pick(&["\"reasoning_content\"", "\"reasoning\""]), text())
                    .prop_map(|(f, x)| json!({"choices": [{"delta": {f.as_str().unwrap_or("reasoning"): x}}]})),
                (index(), text(), text()).prop_map(|(i, t, x)| json!({"choices": [{"delta": {"reasoning_details": [
                    {"type": t, "text": x, "signature": x, "index": i}, x]}}]})),
                (index(), text(), text()).prop_map(|(i, id, x)| json!({"choices": [{"delta": {"tool_calls": [
                    {"index": i, "id": id, "extra_content": x, "function": {"name": id, "arguments": x}}]}}]})),
            ]
            .prop_map(|v| (None, v.to_string()))
            .boxed(),
            Dialect::OpenAiResponses => prop_oneof![
                (index(), pick(&["\"function_call\"", "\"message\"", "\"reasoning\"", "null"]), text(), text(), text())
                    .prop_map(|(i, t, id, n, a)| json!({"type": "response.output_item.added", "output_index": i,
                        "item": {"type": t, "call_id": id, "id": id, "name": n, "arguments": a}})),
                (index(), text()).prop_map(|(i, x)| json!({"type": "response.output_text.delta", "output_index": i, "delta": x})),
                (index(), text()).prop_map(|(i, x)| json!({"type": "response.function_call_arguments.delta", "output_index": i, "delta": x})),
                (index(), text()).prop_map(|(i, x)| json!({"type": "response.function_call_arguments.done", "output_index": i, "arguments": x})),
                (index(), text()).prop_map(|(i, x)| json!({"type": "response.refusal.delta", "output_index": i, "delta": x})),
                (pick(&["\"response.completed\"", "\"response.incomplete\"", "\"response.failed\""]), reason(), count())
                    .prop_map(|(t, r, n)| json!({"type": t, "response": {"status": r,
                        "incomplete_details": {"reason": r}, "usage": {"input_tokens": n, "output_tokens": n}}})),
            ]
            .prop_map(|v| {
                let name = v["type"].as_str().map(str::to_string);
                (name, v.to_string())
            })
            .boxed(),
            Dialect::Gemini => prop_oneof![
                (text(), reason()).prop_map(|(x, r)| json!({"candidates": [{"content": {"role": "model", "parts": [{"text": x}]}, "finishReason": r}]})),
                (text(), text(), pick(&["{}", "{\"a\": 1}", "null", "[1]", "\"x\""]))
                    .prop_map(|(n, id, a)| json!({"candidates": [{"content": {"parts": [{"functionCall": {"name": n, "id": id, "args": a}}]}}]})),
                count().prop_map(|n| json!({"candidates": [], "usageMetadata": {"promptTokenCount": n,
                    "candidatesTokenCount": n, "thoughtsTokenCount": n}})),
                text().prop_map(|x| json!({"candidates": [{"content": {"parts": [{"text": x, "thought": true}]}}]})),
            ]
            .prop_map(|v| (None, v.to_string()))
            .boxed(),
        }
    }

    fn stream() -> impl Strategy<Value = (Dialect, Vec<(Option<String>, String)>)> {
        prop::sample::select(Dialect::ALL.to_vec()).prop_flat_map(|d| {
            (
                Just(d),
                prop::collection::vec(
                    prop_oneof![
                        8 => event(d),
                        1 => Just((None, "[DONE]".to_string())),
                        1 => ".{0,8}".prop_map(|s| (None, s)),
                    ],
                    0..12,
                ),
            )
        })
    }

    proptest! {
        #[test]
        fn a_stream_shows_what_it_assembles(stream in stream()) {
            use switchboard_providers::{Part, StreamEvent};
            let (dialect, events) = stream;
            let mut d = StreamDecoder::new(dialect);
            let mut shown = String::new();
            let mut thought = String::new();
            let mut started = 0;
            for (name, data) in &events {
                // An event that fails is reported; the stream goes on, as the client does.
                if let Ok(evs) = d.feed(name.as_deref(), data) {
                    for e in evs {
                        match e {
                            StreamEvent::TextDelta(t) => shown.push_str(&t),
                            StreamEvent::ReasoningDelta(t) => thought.push_str(&t),
                            StreamEvent::ToolUseStarted { .. } => started += 1,
                        }
                    }
                }
            }
            if let Ok(reply) = d.finish() {
                let text: String = reply.parts.iter().filter_map(|p| match p {
                    Part::Text(t) => Some(t.as_str()),
                    _ => None,
                }).collect();
                let tools = reply.parts.iter().filter(|p| matches!(p, Part::ToolUse { .. })).count();
                // Deltas of one block that arrive apart are joined in the reply: compare the
                // characters, not their order.
                let sorted = |s: &str| {
                    let mut c: Vec<char> = s.chars().collect();
                    c.sort_unstable();
                    c
                };
                prop_assert_eq!(sorted(&text), sorted(&shown), "{}: {:?}", dialect, events);
                let reasoning: String = reply.parts.iter().filter_map(|p| match p {
                    Part::Reasoning { text, .. } => Some(text.as_str()),
                    _ => None,
                }).collect();
                prop_assert_eq!(sorted(&reasoning), sorted(&thought), "{}: {:?}", dialect, events);
                prop_assert_eq!(tools, started, "{}: {:?}", dialect, events);
            }
        }

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
        max_tokens: Some(100),
        compatible_server: false,
        temperature: None,
        reasoning_effort: None,
        cache_key: None,
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

/// Each API's way of saying the request does not fit the model's context is recognized, and
/// other errors are not taken for it.
#[test]
fn context_overflow_errors_are_recognized() {
    let overflow = [
        // OpenAI (and Azure, OpenRouter and most compatible servers): by its code.
        json!({"error": {"message": "This model's maximum context length is 128000 tokens. However, your messages resulted in 130512 tokens.", "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}}),
        // llama.cpp's server, as it answered a 140-tool request with a 1,024-token context.
        json!({"error": {"code": 400, "message": "request (66328 tokens) exceeds the available context size (1024 tokens), try increasing it", "type": "exceed_context_size_error", "n_prompt_tokens": 66328, "n_ctx": 1024}}),
        // Anthropic: no code of its own, its documented message.
        json!({"type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long: 210386 tokens > 200000 maximum"}}),
        // Gemini.
        json!({"error": {"code": 400, "message": "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).", "status": "INVALID_ARGUMENT"}}),
        // vLLM.
        json!({"object": "error", "error": {"message": "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens.", "type": "BadRequestError", "code": 400}}),
    ];
    for body in overflow {
        let bytes = body.to_string();
        assert!(is_context_overflow(400, bytes.as_bytes()), "{body}");
        assert!(!is_context_overflow(500, bytes.as_bytes()), "{body}");
    }
    for (status, body) in [
        (
            400,
            json!({"error": {"message": "Invalid schema for function 'f'", "type": "invalid_request_error", "code": "invalid_function_parameters"}}),
        ),
        (400, json!({"error": "bad request"})),
        (
            429,
            json!({"error": {"message": "Rate limit reached", "code": "rate_limit_exceeded"}}),
        ),
    ] {
        assert!(
            !is_context_overflow(status, body.to_string().as_bytes()),
            "{body}"
        );
    }
    assert!(!is_context_overflow(400, b"prompt is too long"));
}
