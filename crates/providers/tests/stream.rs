//! Stream decoding from realistic SSE event sequences of each dialect (text deltas, tool uses
//! with their JSON arguments split across events, usage), as the host's SSE reader hands them
//! over: the `event:` name, if any, and the joined `data:` text.

use serde_json::json;
use switchboard_core::Dialect;
use switchboard_providers::{Part, ProviderError, Reply, Stop, StreamDecoder, StreamEvent, Usage};

fn run(dialect: Dialect, events: &[(Option<&str>, &str)]) -> (Vec<StreamEvent>, Reply) {
    let mut d = StreamDecoder::new(dialect);
    let mut shown = Vec::new();
    for (name, data) in events {
        match d.feed(*name, data) {
            Ok(e) => shown.extend(e),
            Err(e) => panic!("{dialect}: {e} at {data}"),
        }
    }
    match d.finish() {
        Ok(r) => (shown, r),
        Err(e) => panic!("{dialect}: {e}"),
    }
}

fn text_of(events: &[StreamEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::TextDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}

/// The reasoning words shown while the reply streamed.
fn thought_of(events: &[StreamEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ReasoningDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}

fn started(events: &[StreamEvent]) -> Vec<(&str, &str)> {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ToolUseStarted { id, name } => Some((id.as_str(), name.as_str())),
            _ => None,
        })
        .collect()
}

fn tool(id: &str, name: &str, input: serde_json::Value) -> Part {
    Part::ToolUse {
        id: id.into(),
        name: name.into(),
        input,
    }
}

#[test]
fn anthropic_text_then_tool_use_with_split_json() {
    let events = [
        (
            Some("message_start"),
            r#"{"type":"message_start","message":{"id":"msg_1nZdL29xx5MUA1yADyHTEsnR8uuvGzszyY","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":472,"cache_creation_input_tokens":0,"cache_read_input_tokens":1024,"output_tokens":2}}}"#,
        ),
        (
            Some("content_block_start"),
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
        ),
        (Some("ping"), r#"{"type": "ping"}"#),
        (
            Some("content_block_delta"),
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Okay, let me "}}"#,
        ),
        (
            Some("content_block_delta"),
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"check."}}"#,
        ),
        (
            Some("content_block_stop"),
            r#"{"type":"content_block_stop","index":0}"#,
        ),
        (
            Some("content_block_start"),
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_01T1x1fJ34qAmk2tNTrN7Up6","name":"tickets__search","input":{}}}"#,
        ),
        (
            Some("content_block_delta"),
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}}"#,
        ),
        (
            Some("content_block_delta"),
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"query\": \"lo"}}"#,
        ),
        (
            Some("content_block_delta"),
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"gin\", \"limit\": 5}"}}"#,
        ),
        (
            Some("content_block_stop"),
            r#"{"type":"content_block_stop","index":1}"#,
        ),
        (
            Some("content_block_start"),
            r#"{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_02","name":"docs__list","input":{}}}"#,
        ),
        (
            Some("content_block_stop"),
            r#"{"type":"content_block_stop","index":2}"#,
        ),
        (
            Some("message_delta"),
            r#"{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":89}}"#,
        ),
        (Some("message_stop"), r#"{"type":"message_stop"}"#),
    ];
    let (shown, reply) = run(Dialect::Anthropic, &events);
    assert_eq!(text_of(&shown), "Okay, let me check.");
    assert_eq!(
        started(&shown),
        vec![
            ("toolu_01T1x1fJ34qAmk2tNTrN7Up6", "tickets__search"),
            ("toolu_02", "docs__list")
        ]
    );
    assert_eq!(
        reply.parts,
        vec![
            Part::text("Okay, let me check."),
            tool(
                "toolu_01T1x1fJ34qAmk2tNTrN7Up6",
                "tickets__search",
                json!({"query": "login", "limit": 5})
            ),
            tool("toolu_02", "docs__list", json!({})),
        ]
    );
    assert_eq!(reply.stop, Stop::ToolUse);
    assert_eq!(
        reply.usage,
        Usage {
            input_tokens: 472 + 1024,
            output_tokens: 89,
            cache_read_tokens: Some(1024),
            cache_write_tokens: Some(0),
            reasoning_tokens: None,
        }
    );
}

#[test]
fn anthropic_error_event_and_cut_stream() {
    let mut d = StreamDecoder::new(Dialect::Anthropic);
    let err = d
        .feed(
            Some("error"),
            r#"{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}"#,
        )
        .unwrap_err();
    assert!(matches!(err, ProviderError::Api { .. }));
    assert!(
        err.to_string().contains("overloaded_error: Overloaded"),
        "{err}"
    );

    // A stream that stops before message_delta was cut: an error, not a silent empty reply.
    let mut d = StreamDecoder::new(Dialect::Anthropic);
    d.feed(
        None,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"Hel"}}"#,
    )
    .unwrap();
    let err = d.finish().unwrap_err();
    assert!(err.to_string().contains("stream ended"), "{err}");

    // Malformed data is a decode error naming the dialect.
    let mut d = StreamDecoder::new(Dialect::Anthropic);
    let err = d
        .feed(Some("content_block_delta"), "{\"type\": ")
        .unwrap_err();
    assert!(
        matches!(
            err,
            ProviderError::Decode {
                dialect: Dialect::Anthropic,
                ..
            }
        ),
        "{err}"
    );
    // A JSON delta for a block that never started.
    let err = d
        .feed(None, r#"{"type":"content_block_delta","index":4,"delta":{"type":"input_json_delta","partial_json":"{"}}"#)
        .unwrap_err();
    assert!(err.to_string().contains("not a tool use"), "{err}");
}

#[test]
fn anthropic_max_tokens_mid_tool_use_keeps_the_raw_arguments() {
    let events = [
        (
            None,
            r#"{"type":"message_start","message":{"usage":{"input_tokens":10,"output_tokens":1}}}"#,
        ),
        (
            None,
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_9","name":"files__write","input":{}}}"#,
        ),
        (
            None,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"path\": \"a.txt\", \"text\": \"Lorem"}}"#,
        ),
        (
            None,
            r#"{"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":1024}}"#,
        ),
    ];
    let (_, reply) = run(Dialect::Anthropic, &events);
    assert_eq!(reply.stop, Stop::MaxTokens);
    assert_eq!(
        reply.parts[0].invalid_input(),
        Some("{\"path\": \"a.txt\", \"text\": \"Lorem")
    );
}

#[test]
fn openai_chat_parallel_calls_split_across_chunks() {
    let chunk = |choices: &str, usage: &str| {
        format!(
            r#"{{"id":"chatcmpl-7","object":"chat.completion.chunk","created":1741570283,"model":"gpt-4o","system_fingerprint":"fp_1","choices":{choices},"usage":{usage}}}"#
        )
    };
    let data = [
        chunk(
            r#"[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}]"#,
            "null",
        ),
        chunk(
            r#"[{"index":0,"delta":{"content":"Let me"},"finish_reason":null}]"#,
            "null",
        ),
        chunk(
            r#"[{"index":0,"delta":{"content":" look."},"finish_reason":null}]"#,
            "null",
        ),
        chunk(
            r#"[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_A1","type":"function","function":{"name":"tickets__search","arguments":""}}]},"finish_reason":null}]"#,
            "null",
        ),
        chunk(
            r#"[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"qu"}}]},"finish_reason":null}]"#,
            "null",
        ),
        chunk(
            r#"[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"ery\":\"login\"}"}}]},"finish_reason":null}]"#,
            "null",
        ),
        chunk(
            r#"[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_B2","type":"function","function":{"name":"docs__search","arguments":""}}]},"finish_reason":null}]"#,
            "null",
        ),
        chunk(
            r#"[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{\"q\":"}}]},"finish_reason":null}]"#,
            "null",
        ),
        chunk(
            r#"[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"\"login\"}"}}]},"finish_reason":null}]"#,
            "null",
        ),
        chunk(
            r#"[{"index":0,"delta":{},"logprobs":null,"finish_reason":"tool_calls"}]"#,
            "null",
        ),
        chunk(
            "[]",
            r#"{"prompt_tokens":1182,"completion_tokens":47,"total_tokens":1229,"prompt_tokens_details":{"cached_tokens":1024}}"#,
        ),
        "[DONE]".to_string(),
    ];
    let events: Vec<(Option<&str>, &str)> = data.iter().map(|d| (None, d.as_str())).collect();
    let (shown, reply) = run(Dialect::OpenAiChat, &events);
    assert_eq!(text_of(&shown), "Let me look.");
    assert_eq!(
        started(&shown),
        vec![("call_A1", "tickets__search"), ("call_B2", "docs__search")]
    );
    assert_eq!(
        reply.parts,
        vec![
            Part::text("Let me look."),
            tool("call_A1", "tickets__search", json!({"query": "login"})),
            tool("call_B2", "docs__search", json!({"q": "login"})),
        ]
    );
    assert_eq!(reply.stop, Stop::ToolUse);
    assert_eq!(
        reply.usage,
        Usage {
            input_tokens: 1182,
            output_tokens: 47,
            cache_read_tokens: Some(1024),
            cache_write_tokens: None,
            reasoning_tokens: None,
        }
    );
}

#[test]
fn openai_chat_local_server_sends_whole_calls_without_ids() {
    let events = [
        (
            None,
            r#"{"object":"chat.completion.chunk","model":"llama3.1","choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"function":{"name":"tickets__search","arguments":"{\"query\":\"login\"}"}}]},"finish_reason":null}]}"#,
        ),
        (
            None,
            r#"{"object":"chat.completion.chunk","model":"llama3.1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
        ),
        (None, "[DONE]"),
    ];
    let (_, reply) = run(Dialect::OpenAiChat, &events);
    assert_eq!(
        reply.parts,
        vec![tool("call_0", "tickets__search", json!({"query": "login"}))]
    );
    assert_eq!(reply.stop, Stop::ToolUse);
    assert_eq!(reply.usage, Usage::default());
}

#[test]
fn openai_responses_events() {
    let events = [
        (
            Some("response.created"),
            r#"{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":"response","status":"in_progress","output":[],"usage":null}}"#,
        ),
        (
            Some("response.in_progress"),
            r#"{"type":"response.in_progress","sequence_number":1,"response":{"id":"resp_1","status":"in_progress"}}"#,
        ),
        (
            Some("response.output_item.added"),
            r#"{"type":"response.output_item.added","sequence_number":2,"output_index":0,"item":{"type":"reasoning","id":"rs_1","summary":[]}}"#,
        ),
        (
            Some("response.output_item.done"),
            r#"{"type":"response.output_item.done","sequence_number":3,"output_index":0,"item":{"type":"reasoning","id":"rs_1","summary":[]}}"#,
        ),
        (
            Some("response.output_item.added"),
            r#"{"type":"response.output_item.added","sequence_number":4,"output_index":1,"item":{"type":"message","id":"msg_1","status":"in_progress","role":"assistant","content":[]}}"#,
        ),
        (
            Some("response.content_part.added"),
            r#"{"type":"response.content_part.added","sequence_number":5,"item_id":"msg_1","output_index":1,"content_index":0,"part":{"type":"output_text","text":"","annotations":[]}}"#,
        ),
        (
            Some("response.output_text.delta"),
            r#"{"type":"response.output_text.delta","sequence_number":6,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"Checking"}"#,
        ),
        (
            Some("response.output_text.delta"),
            r#"{"type":"response.output_text.delta","sequence_number":7,"item_id":"msg_1","output_index":1,"content_index":0,"delta":" now."}"#,
        ),
        (
            Some("response.output_text.done"),
            r#"{"type":"response.output_text.done","sequence_number":8,"item_id":"msg_1","output_index":1,"content_index":0,"text":"Checking now."}"#,
        ),
        (
            Some("response.output_item.done"),
            r#"{"type":"response.output_item.done","sequence_number":9,"output_index":1,"item":{"type":"message","id":"msg_1","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Checking now.","annotations":[]}]}}"#,
        ),
        (
            Some("response.output_item.added"),
            r#"{"type":"response.output_item.added","sequence_number":9,"output_index":2,"item":{"type":"function_call","id":"fc_1","call_id":"call_X","name":"tickets__search","arguments":"","status":"in_progress"}}"#,
        ),
        (
            Some("response.function_call_arguments.delta"),
            r#"{"type":"response.function_call_arguments.delta","sequence_number":10,"item_id":"fc_1","output_index":2,"delta":"{\"query\":"}"#,
        ),
        (
            Some("response.function_call_arguments.delta"),
            r#"{"type":"response.function_call_arguments.delta","sequence_number":11,"item_id":"fc_1","output_index":2,"delta":"\"login\"}"}"#,
        ),
        (
            Some("response.function_call_arguments.done"),
            r#"{"type":"response.function_call_arguments.done","sequence_number":12,"item_id":"fc_1","output_index":2,"arguments":"{\"query\":\"login\"}"}"#,
        ),
        (
            Some("response.output_item.done"),
            r#"{"type":"response.output_item.done","sequence_number":13,"output_index":2,"item":{"type":"function_call","id":"fc_1","call_id":"call_X","name":"tickets__search","arguments":"{\"query\":\"login\"}","status":"completed"}}"#,
        ),
        (
            Some("response.completed"),
            r#"{"type":"response.completed","sequence_number":14,"response":{"id":"resp_1","object":"response","status":"completed","error":null,"incomplete_details":null,"output":[],"usage":{"input_tokens":50,"input_tokens_details":{"cached_tokens":0},"output_tokens":12,"output_tokens_details":{"reasoning_tokens":4},"total_tokens":62}}}"#,
        ),
    ];
    let (shown, reply) = run(Dialect::OpenAiResponses, &events);
    assert_eq!(text_of(&shown), "Checking now.");
    assert_eq!(started(&shown), vec![("call_X", "tickets__search")]);
    // The reasoning keeps the response's items as each `output_item.done` gave them (the
    // completed response listed none).
    let item = |i: usize| -> serde_json::Value {
        let (_, data) = events
            .iter()
            .filter(|(n, _)| *n == Some("response.output_item.done"))
            .nth(i)
            .unwrap();
        serde_json::from_str::<serde_json::Value>(data).unwrap()["item"].clone()
    };
    assert_eq!(
        reply.parts,
        vec![
            Part::Reasoning {
                dialect: Dialect::OpenAiResponses,
                text: String::new(),
                data: json!({"output": [item(0), item(1), item(2)]}),
            },
            Part::text("Checking now."),
            tool("call_X", "tickets__search", json!({"query": "login"})),
        ]
    );
    assert_eq!(reply.usage.reasoning_tokens, Some(4));
    assert_eq!(reply.stop, Stop::ToolUse);
    assert_eq!(reply.usage.input_tokens, 50);
    assert_eq!(reply.usage.output_tokens, 12);
    assert_eq!(reply.usage.cache_read_tokens, Some(0));

    let mut d = StreamDecoder::new(Dialect::OpenAiResponses);
    let err = d
        .feed(Some("response.failed"), r#"{"type":"response.failed","response":{"status":"failed","error":{"code":"server_error","message":"The server had an error."}}}"#)
        .unwrap_err();
    assert!(
        err.to_string().contains("The server had an error."),
        "{err}"
    );
    let mut d = StreamDecoder::new(Dialect::OpenAiResponses);
    let err = d
        .feed(Some("error"), r#"{"type":"error","code":"rate_limit_exceeded","message":"Rate limit reached","param":null}"#)
        .unwrap_err();
    assert!(err.to_string().contains("Rate limit reached"), "{err}");
}

#[test]
fn gemini_chunks() {
    let events = [
        (
            None,
            r#"{"candidates":[{"content":{"parts":[{"text":"Let me"}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":90,"totalTokenCount":90},"modelVersion":"gemini-2.5-flash","responseId":"r1"}"#,
        ),
        (
            None,
            r#"{"candidates":[{"content":{"parts":[{"text":" search."}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":90,"totalTokenCount":92},"modelVersion":"gemini-2.5-flash","responseId":"r1"}"#,
        ),
        (
            None,
            r#"{"candidates":[{"content":{"parts":[{"functionCall":{"name":"tickets__search","args":{"query":"login"}}},{"functionCall":{"name":"docs__search","args":{"q":"login"}}}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":90,"candidatesTokenCount":25,"totalTokenCount":115,"thoughtsTokenCount":5},"modelVersion":"gemini-2.5-flash","responseId":"r1"}"#,
        ),
    ];
    let (shown, reply) = run(Dialect::Gemini, &events);
    assert_eq!(text_of(&shown), "Let me search.");
    assert_eq!(
        started(&shown),
        vec![
            ("gemini-call-0", "tickets__search"),
            ("gemini-call-1", "docs__search")
        ]
    );
    assert_eq!(
        reply.parts,
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
    assert_eq!(reply.stop, Stop::ToolUse);
    assert_eq!(
        reply.usage,
        Usage {
            input_tokens: 90,
            output_tokens: 30,
            cache_read_tokens: None,
            cache_write_tokens: None,
            reasoning_tokens: Some(5),
        }
    );
    let mut d = StreamDecoder::new(Dialect::Gemini);
    let err = d
        .feed(None, r#"{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED"}}"#)
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("RESOURCE_EXHAUSTED: Resource has been exhausted"),
        "{err}"
    );
}

#[test]
fn stream_and_whole_response_agree() {
    // The same Anthropic turn, streamed and whole, decodes to the same reply.
    let whole = json!({"type": "message", "role": "assistant",
        "content": [{"type": "text", "text": "Hi."}, {"type": "tool_use", "id": "toolu_1", "name": "a__b", "input": {"x": 1}}],
        "stop_reason": "tool_use", "usage": {"input_tokens": 5, "output_tokens": 7}});
    let whole =
        switchboard_providers::decode_reply(Dialect::Anthropic, whole.to_string().as_bytes())
            .unwrap();
    let (_, streamed) = run(
        Dialect::Anthropic,
        &[
            (
                None,
                r#"{"type":"message_start","message":{"usage":{"input_tokens":5,"output_tokens":1}}}"#,
            ),
            (
                None,
                r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
            ),
            (
                None,
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi."}}"#,
            ),
            (
                None,
                r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"a__b","input":{}}}"#,
            ),
            (
                None,
                r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"x\": 1}"}}"#,
            ),
            (
                None,
                r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":7}}"#,
            ),
        ],
    );
    assert_eq!(streamed, whole);
}

#[test]
fn openai_chat_calls_without_index_and_done_without_reason() {
    // A server that leaves out `index` and `finish_reason`, but ends with [DONE].
    let events = [
        (None, r#"{"choices":[{"delta":{"content":"On it."}}]}"#),
        (
            None,
            r#"{"choices":[{"delta":{"tool_calls":[{"id":"c1","type":"function","function":{"name":"a__x","arguments":"{\"n\":1}"}}]}}]}"#,
        ),
        (
            None,
            r#"{"choices":[{"delta":{"tool_calls":[{"id":"c2","type":"function","function":{"name":"a__y","arguments":"{}"}}]}}]}"#,
        ),
        (None, "[DONE]"),
    ];
    let (_, reply) = run(Dialect::OpenAiChat, &events);
    assert_eq!(
        reply.parts,
        vec![
            Part::text("On it."),
            tool("c1", "a__x", json!({"n": 1})),
            tool("c2", "a__y", json!({})),
        ]
    );
    assert_eq!(reply.stop, Stop::ToolUse);
    // Without [DONE] the same events are a cut stream.
    let mut d = StreamDecoder::new(Dialect::OpenAiChat);
    for (name, data) in &events[..3] {
        d.feed(*name, data).unwrap();
    }
    assert!(d.finish().is_err());
}

#[test]
fn gemini_signature_in_stream_and_array_chunks() {
    // A chunk given as a JSON array (Gemini's form without alt=sse) decodes element by element.
    let events = [
        (
            None,
            r#"[{"candidates":[{"content":{"role":"model","parts":[{"text":"Checking."}]}}]}]"#,
        ),
        (
            None,
            r#"{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"a__b","args":{"n":1}},"thoughtSignature":"c2ln"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":4}}"#,
        ),
    ];
    let (shown, reply) = run(Dialect::Gemini, &events);
    assert_eq!(text_of(&shown), "Checking.");
    assert_eq!(
        reply.parts,
        vec![
            Part::text("Checking."),
            tool(
                "gemini-call-0#thought-signature:c2ln",
                "a__b",
                json!({"n": 1})
            ),
        ]
    );
}

/// Anthropic: a thinking block grows by `thinking_delta`s and gets its signature by a
/// `signature_delta`; a redacted one comes whole. Both are kept as they would have come in a
/// whole response (the API checks them when they go back); their words are not shown as text.
#[test]
fn anthropic_thinking_is_assembled_whole_with_its_signature() {
    let events = [
        (
            Some("message_start"),
            r#"{"type":"message_start","message":{"id":"msg_t","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5","stop_reason":null,"usage":{"input_tokens":50,"output_tokens":1}}}"#,
        ),
        (
            Some("content_block_start"),
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}"#,
        ),
        (
            Some("content_block_delta"),
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Search the "}}"#,
        ),
        (
            Some("content_block_delta"),
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"tickets."}}"#,
        ),
        (
            Some("content_block_delta"),
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCkYIBxgCKkA="}}"#,
        ),
        (
            Some("content_block_stop"),
            r#"{"type":"content_block_stop","index":0}"#,
        ),
        (
            Some("content_block_start"),
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"redacted_thinking","data":"EmwKAhgB"}}"#,
        ),
        (
            Some("content_block_stop"),
            r#"{"type":"content_block_stop","index":1}"#,
        ),
        (
            Some("content_block_start"),
            r#"{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_1","name":"tickets__search","input":{}}}"#,
        ),
        (
            Some("content_block_delta"),
            r#"{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"query\":\"login\"}"}}"#,
        ),
        (
            Some("content_block_stop"),
            r#"{"type":"content_block_stop","index":2}"#,
        ),
        (
            Some("message_delta"),
            r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":40}}"#,
        ),
        (Some("message_stop"), r#"{"type":"message_stop"}"#),
    ];
    let (shown, reply) = run(Dialect::Anthropic, &events);
    assert_eq!(text_of(&shown), "", "thinking is not answer text");
    assert_eq!(
        reply.parts,
        vec![
            Part::Reasoning {
                dialect: Dialect::Anthropic,
                text: "Search the tickets.".into(),
                data: json!({"type": "thinking", "thinking": "Search the tickets.", "signature": "EqQBCkYIBxgCKkA="}),
            },
            Part::Reasoning {
                dialect: Dialect::Anthropic,
                text: String::new(),
                data: json!({"type": "redacted_thinking", "data": "EmwKAhgB"}),
            },
            tool("toolu_1", "tickets__search", json!({"query": "login"})),
        ]
    );
    // A thinking delta for a block that is not one is a broken stream.
    let mut d = StreamDecoder::new(Dialect::Anthropic);
    d.feed(
        Some("content_block_start"),
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
    )
    .unwrap();
    let err = d
        .feed(
            Some("content_block_delta"),
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"x"}}"#,
        )
        .unwrap_err();
    assert!(err.to_string().contains("not a thinking block"), "{err}");
}

/// OpenAI-compatible reasoning servers: `reasoning_content` (DeepSeek, Kimi) or `reasoning`
/// (vLLM, Ollama) deltas join into one reasoning part under the field they came in; an empty
/// one is none.
#[test]
fn openai_chat_reasoning_deltas_join_under_their_own_field() {
    for field in ["reasoning_content", "reasoning"] {
        let chunk = |delta: serde_json::Value, finish: serde_json::Value| {
            json!({"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m",
                   "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
            .to_string()
        };
        let events = [
            chunk(
                json!({"role": "assistant", "content": "", field: ""}),
                json!(null),
            ),
            chunk(json!({field: "Look up "}), json!(null)),
            chunk(json!({field: "the ticket."}), json!(null)),
            chunk(
                json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                    "function": {"name": "tickets__search", "arguments": "{}"}}]}),
                json!(null),
            ),
            chunk(json!({}), json!("tool_calls")),
        ];
        let events: Vec<(Option<&str>, &str)> = events.iter().map(|e| (None, e.as_str())).collect();
        let (shown, reply) = run(Dialect::OpenAiChat, &events);
        assert_eq!(text_of(&shown), "");
        assert_eq!(
            reply.parts,
            vec![
                Part::Reasoning {
                    dialect: Dialect::OpenAiChat,
                    text: "Look up the ticket.".into(),
                    data: json!({ field: "Look up the ticket." }),
                },
                tool("call_1", "tickets__search", json!({})),
            ],
            "{field}"
        );
    }
    let empty = [
        r#"{"choices":[{"index":0,"delta":{"content":"Hi","reasoning_content":""},"finish_reason":null}]}"#,
        r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
    ];
    let events: Vec<(Option<&str>, &str)> = empty.iter().map(|e| (None, *e)).collect();
    assert_eq!(
        run(Dialect::OpenAiChat, &events).1.parts,
        vec![Part::text("Hi")]
    );
}

/// OpenAI Responses: reasoning summary deltas are shown as reasoning, and the completed
/// response's items become the reasoning part that goes back with the call.
#[test]
fn responses_reasoning_summaries_stream_and_the_items_are_kept() {
    let rs = json!({"type": "reasoning", "id": "rs_2", "summary": [{"type": "summary_text", "text": "Check the ticket."}]});
    let fc = json!({"type": "function_call", "id": "fc_2", "call_id": "call_2", "name": "tickets__get",
        "arguments": "{}", "status": "completed"});
    let events = [
        json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "reasoning", "id": "rs_2", "summary": []}}),
        json!({"type": "response.reasoning_summary_text.delta", "item_id": "rs_2", "output_index": 0, "summary_index": 0, "delta": "Check "}),
        json!({"type": "response.reasoning_summary_text.delta", "item_id": "rs_2", "output_index": 0, "summary_index": 0, "delta": "the ticket."}),
        json!({"type": "response.output_item.added", "output_index": 1, "item": {"type": "function_call", "id": "fc_2", "call_id": "call_2", "name": "tickets__get", "arguments": ""}}),
        json!({"type": "response.function_call_arguments.done", "output_index": 1, "arguments": "{}"}),
        json!({"type": "response.completed", "response": {"status": "completed", "output": [rs, fc],
            "usage": {"input_tokens": 5, "output_tokens": 40, "output_tokens_details": {"reasoning_tokens": 30}}}}),
    ]
    .map(|e| e.to_string());
    let events: Vec<(Option<&str>, &str)> = events.iter().map(|e| (None, e.as_str())).collect();
    let (shown, reply) = run(Dialect::OpenAiResponses, &events);
    let thought = thought_of(&shown);
    assert_eq!(thought, "Check the ticket.");
    assert_eq!(text_of(&shown), "");
    assert_eq!(
        reply.parts,
        vec![
            Part::Reasoning {
                dialect: Dialect::OpenAiResponses,
                text: "Check the ticket.".into(),
                data: json!({"output": [rs, fc]}),
            },
            tool("call_2", "tickets__get", json!({})),
        ]
    );
    assert_eq!(reply.usage.reasoning_tokens, Some(30));
}

/// Gemini with `includeThoughts`: thought summaries stream as reasoning, join into one part,
/// and are not answer text.
#[test]
fn gemini_thought_summaries_stream_as_reasoning() {
    let events = [
        r#"{"candidates":[{"content":{"role":"model","parts":[{"text":"Look for ","thought":true}]},"index":0}]}"#,
        r#"{"candidates":[{"content":{"role":"model","parts":[{"text":"the ticket.","thought":true}]},"index":0}]}"#,
        r#"{"candidates":[{"content":{"role":"model","parts":[{"text":"Found it."}]},"finishReason":"STOP","index":0}]}"#,
    ];
    let events: Vec<(Option<&str>, &str)> = events.iter().map(|e| (None, *e)).collect();
    let (shown, reply) = run(Dialect::Gemini, &events);
    assert_eq!(text_of(&shown), "Found it.");
    let thought = thought_of(&shown);
    assert_eq!(thought, "Look for the ticket.");
    assert_eq!(
        reply.parts,
        vec![
            Part::Reasoning {
                dialect: Dialect::Gemini,
                text: "Look for the ticket.".into(),
                data: serde_json::Value::Null,
            },
            Part::text("Found it."),
        ]
    );
}

/// OpenRouter streams `reasoning_details` in pieces: the pieces of one item (same index and
/// type) join, and its signature lands on it; a call's `extra_content` (Google's endpoint)
/// is kept by the call's id.
#[test]
fn openai_chat_streamed_details_and_call_extras_are_assembled() {
    let chunk = |delta: serde_json::Value, finish: serde_json::Value| {
        json!({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}).to_string()
    };
    let events = [
        chunk(
            json!({"reasoning": "Look ", "reasoning_details": [{"type": "reasoning.text", "text": "Look ", "index": 0}]}),
            json!(null),
        ),
        chunk(
            json!({"reasoning": "it up.", "reasoning_details": [{"type": "reasoning.text", "text": "it up.", "index": 0}]}),
            json!(null),
        ),
        chunk(
            json!({"reasoning_details": [{"type": "reasoning.text", "signature": "sig-9", "index": 0}]}),
            json!(null),
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                "extra_content": {"google": {"thought_signature": "c2ln"}},
                "function": {"name": "tickets__search", "arguments": "{}"}}]}),
            json!(null),
        ),
        chunk(json!({}), json!("tool_calls")),
    ];
    let events: Vec<(Option<&str>, &str)> = events.iter().map(|e| (None, e.as_str())).collect();
    let (_, reply) = run(Dialect::OpenAiChat, &events);
    assert_eq!(
        reply.parts,
        vec![
            Part::Reasoning {
                dialect: Dialect::OpenAiChat,
                text: "Look it up.".into(),
                data: json!({
                    "reasoning": "Look it up.",
                    "reasoning_details": [{"type": "reasoning.text", "text": "Look it up.", "signature": "sig-9", "index": 0}],
                    "tool_call_extra": {"call_1": {"google": {"thought_signature": "c2ln"}}}
                }),
            },
            tool("call_1", "tickets__search", json!({})),
        ]
    );
}
