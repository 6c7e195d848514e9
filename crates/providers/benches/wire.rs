//! What the wire layer costs per request, per dialect, printed as a table: encoding a long
//! conversation, decoding a reply, decoding a long stream, and encoding a 5 MB tool result.
//!
//! ```sh
//! taskset -c 0 cargo bench -p switchboard-providers --bench wire [-- --turns 50 --runs 30]
//! ```
//!
//! The conversation has `--turns` rounds of: user text, an assistant turn with text and two
//! parallel tool uses, and their results. The stream is 2,000 text deltas and one tool use
//! whose arguments arrive in 500 fragments. Times are medians over `--runs` runs.

use std::time::Instant;

use serde_json::{Value, json};
use switchboard_core::Dialect;
use switchboard_providers::{
    Message, Part, RequestParts, ResultPart, StreamDecoder, ToolSpec, decode_reply, render_request,
    to_bytes,
};

fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn median_us(runs: usize, mut f: impl FnMut()) -> f64 {
    let mut times: Vec<f64> = (0..runs.max(1))
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

fn id(dialect: Dialect, turn: usize, k: usize) -> String {
    match dialect {
        Dialect::Gemini => format!("gemini-call-{k}"),
        _ => format!("call_{turn}_{k}"),
    }
}

fn conversation(dialect: Dialect, turns: usize, result: &str) -> RequestParts {
    let mut messages = Vec::new();
    for t in 0..turns {
        messages.push(Message::user(format!(
            "Question {t}: find tickets about login."
        )));
        messages.push(Message::assistant(vec![
            Part::text("Searching both servers."),
            Part::ToolUse {
                id: id(dialect, t, 0),
                name: "tickets__search".into(),
                input: json!({"query": "login", "limit": 10}),
            },
            Part::ToolUse {
                id: id(dialect, t, 1),
                name: "docs__search".into(),
                input: json!({"q": "login"}),
            },
        ]));
        messages.push(Message::tool_results(
            ["tickets__search", "docs__search"]
                .iter()
                .enumerate()
                .map(|(k, name)| Part::ToolResult {
                    id: id(dialect, t, k),
                    name: (*name).into(),
                    content: vec![ResultPart::Text(result.into())],
                    is_error: false,
                })
                .collect(),
        ));
        messages.push(Message::assistant(vec![Part::text(
            "Here is what I found.",
        )]));
    }
    messages.push(Message::user("Thanks."));
    RequestParts {
        model: "m".into(),
        system: Some("You help with tickets.".into()),
        messages,
        tools: vec![ToolSpec {
            name: "tickets__search".into(),
            description: Some("Search tickets.".into()),
            schema: json!({"type": "object", "properties": {"query": {"type": "string"}}}),
            strict: false,
        }],
        max_tokens: Some(1024),
        compatible_server: false,
        temperature: None,
        reasoning_effort: None,
        cache_key: None,
        gemini_openapi: false,
        stream: false,
    }
}

fn reply_body(dialect: Dialect) -> Value {
    match dialect {
        Dialect::Anthropic => json!({"type": "message", "role": "assistant", "content": [
            {"type": "text", "text": "Searching."},
            {"type": "tool_use", "id": "toolu_1", "name": "tickets__search", "input": {"query": "login"}}],
            "stop_reason": "tool_use", "usage": {"input_tokens": 1000, "output_tokens": 50}}),
        Dialect::OpenAiChat => {
            json!({"object": "chat.completion", "choices": [{"index": 0, "message": {
            "role": "assistant", "content": "Searching.", "tool_calls": [{"id": "call_1", "type": "function",
            "function": {"name": "tickets__search", "arguments": "{\"query\":\"login\"}"}}]},
            "finish_reason": "tool_calls"}], "usage": {"prompt_tokens": 1000, "completion_tokens": 50}})
        }
        Dialect::OpenAiResponses => json!({"object": "response", "status": "completed", "output": [
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Searching."}]},
            {"type": "function_call", "call_id": "call_1", "name": "tickets__search", "arguments": "{\"query\":\"login\"}"}],
            "usage": {"input_tokens": 1000, "output_tokens": 50}}),
        Dialect::Gemini => json!({"candidates": [{"content": {"role": "model", "parts": [
            {"text": "Searching."}, {"functionCall": {"name": "tickets__search", "args": {"query": "login"}}}]},
            "finishReason": "STOP"}], "usageMetadata": {"promptTokenCount": 1000, "candidatesTokenCount": 50}}),
    }
}

/// (event name, data) for 2,000 text deltas and one tool use in 500 argument fragments.
fn stream_events(dialect: Dialect) -> Vec<(Option<&'static str>, String)> {
    let text = (0..2000).map(|i| format!("word{i} "));
    let mut args: Vec<String> = (0..499).map(|i| format!("\"k{i}\":{i},")).collect();
    args.insert(0, "{".into());
    args.push("\"end\":true}".into());
    let mut out = Vec::new();
    match dialect {
        Dialect::Anthropic => {
            out.push((None, r#"{"type":"message_start","message":{"usage":{"input_tokens":10,"output_tokens":1}}}"#.to_string()));
            out.push((None, r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#.into()));
            for t in text {
                out.push((None, json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": t}}).to_string()));
            }
            out.push((None, r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"a__b","input":{}}}"#.into()));
            for a in args {
                out.push((None, json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": a}}).to_string()));
            }
            out.push((None, r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":3000}}"#.into()));
        }
        Dialect::OpenAiChat => {
            for t in text {
                out.push((
                    None,
                    json!({"choices": [{"index": 0, "delta": {"content": t}}]}).to_string(),
                ));
            }
            out.push((None, json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": {"name": "a__b", "arguments": ""}}]}}]}).to_string()));
            for a in args {
                out.push((None, json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": a}}]}}]}).to_string()));
            }
            out.push((
                None,
                r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#.into(),
            ));
            out.push((None, "[DONE]".into()));
        }
        Dialect::OpenAiResponses => {
            for t in text {
                out.push((
                    None,
                    json!({"type": "response.output_text.delta", "output_index": 0, "delta": t})
                        .to_string(),
                ));
            }
            out.push((None, json!({"type": "response.output_item.added", "output_index": 1, "item": {"type": "function_call", "call_id": "call_1", "name": "a__b", "arguments": ""}}).to_string()));
            for a in args {
                out.push((None, json!({"type": "response.function_call_arguments.delta", "output_index": 1, "delta": a}).to_string()));
            }
            out.push((None, r#"{"type":"response.completed","response":{"status":"completed","usage":{"input_tokens":10,"output_tokens":3000}}}"#.into()));
        }
        Dialect::Gemini => {
            // Gemini sends whole calls; the text comes in chunks.
            for t in text {
                out.push((
                    None,
                    json!({"candidates": [{"content": {"role": "model", "parts": [{"text": t}]}}]})
                        .to_string(),
                ));
            }
            let full: String = args.concat();
            out.push((None, json!({"candidates": [{"content": {"role": "model", "parts": [{"functionCall": {"name": "a__b", "args": serde_json::from_str::<Value>(&full).unwrap_or_default()}}]}, "finishReason": "STOP"}]}).to_string()));
        }
    }
    out
}

fn main() {
    let turns = arg("--turns", 50);
    let runs = arg("--runs", 30);
    let small = "T-17 Login fails on Safari (open)\n".repeat(20);
    let big = "x".repeat(5 * 1024 * 1024);
    println!(
        "| dialect | encode {turns} turns (µs) | body KB | decode reply (µs) | stream 2,500 events (µs) | events/s | encode 5 MB result (ms) |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for dialect in Dialect::ALL {
        let parts = conversation(dialect, turns, &small);
        let mut bytes = 0;
        let encode = median_us(runs, || {
            bytes = to_bytes(&render_request(dialect, &parts)).len()
        });
        let body = reply_body(dialect).to_string();
        let decode = median_us(runs * 10, || {
            let _ = decode_reply(dialect, body.as_bytes());
        });
        let events = stream_events(dialect);
        let stream = median_us(runs, || {
            let mut d = StreamDecoder::new(dialect);
            for (name, data) in &events {
                let _ = d.feed(*name, data);
            }
            let _ = d.finish();
        });
        let one = conversation(dialect, 1, &big);
        let big_ms = median_us(runs.min(10), || {
            let _ = to_bytes(&render_request(dialect, &one));
        }) / 1000.0;
        println!(
            "| {dialect} | {encode:.0} | {} | {decode:.1} | {stream:.0} | {:.0} | {big_ms:.1} |",
            bytes / 1024,
            events.len() as f64 / (stream / 1e6),
        );
    }
}
