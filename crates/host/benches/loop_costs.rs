//! What the agent loop adds per tool call and per request, measured on this machine: result
//! shaping (including the cut and spill of big results), argument validation, SSE framing and
//! request rendering. Prints a table; run with `cargo bench -p switchboard-host --bench loop_costs`.

use std::time::{Duration, Instant};

use serde_json::json;
use switchboard_core::{CallResult, Dialect};
use switchboard_host::client::sse::SseParser;
use switchboard_host::dispatch::Validators;
use switchboard_host::shape::{ShapeOptions, shape};
use switchboard_providers::{Message, Part, RequestParts, ToolSpec, render_request, to_bytes};

/// Median of `runs` timings of `f`.
fn median(runs: usize, mut f: impl FnMut()) -> Duration {
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    times.sort();
    times[runs / 2]
}

fn row(what: &str, size: &str, d: Duration, per: &str) {
    println!(
        "{what:<44} {size:>12} {:>12.3} ms {per:>16}",
        d.as_secs_f64() * 1000.0
    );
}

fn main() {
    println!(
        "{:<44} {:>12} {:>15} {:>16}",
        "operation", "input", "median", "throughput"
    );
    let dir = std::env::temp_dir().join("switchboard-bench-spill");
    for mb in [0.05, 1.0, 5.0, 20.0] {
        let line = "0123456789 abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ ......\n";
        let text = line.repeat(((mb * 1024.0 * 1024.0) as usize) / line.len());
        let result = CallResult::text(text.clone(), false);
        let opts = ShapeOptions {
            images: true,
            limit_tokens: 25_000,
            spill_dir: dir.clone(),
            label: "bench".into(),
        };
        let d = median(7, || {
            std::hint::black_box(shape(&result, &opts));
        });
        let mbps = text.len() as f64 / 1e6 / d.as_secs_f64();
        let note = if text.len() > 100_000 {
            " (cut + spill)"
        } else {
            ""
        };
        row(
            &format!("shape a text result{note}"),
            &format!("{mb} MB"),
            d,
            &format!("{mbps:.0} MB/s"),
        );
    }
    let _ = std::fs::remove_dir_all(&dir);

    let schema = json!({
        "type": "object",
        "properties": {
            "query": {"type": "string", "maxLength": 200},
            "status": {"type": "string", "enum": ["open", "pending", "closed"]},
            "limit": {"type": "integer", "minimum": 1, "maximum": 50}
        },
        "required": ["query"],
        "additionalProperties": false
    });
    let v = Validators::default();
    let args = json!({"query": "login sso", "status": "open", "limit": 5});
    let _ = v.check(&schema, args.clone());
    let n = 10_000;
    let d = median(5, || {
        for _ in 0..n {
            std::hint::black_box(v.check(&schema, args.clone()).is_ok());
        }
    });
    row(
        "validate arguments (compiled, cached)",
        "1 call",
        d / n,
        &format!("{:.0} k/s", n as f64 / d.as_secs_f64() / 1000.0),
    );
    let bad = json!({"query": 5, "status": "gone"});
    let d = median(5, || {
        for _ in 0..n {
            std::hint::black_box(v.check(&schema, bad.clone()).is_err());
        }
    });
    row(
        "validate invalid arguments (2 errors)",
        "1 call",
        d / n,
        &format!("{:.0} k/s", n as f64 / d.as_secs_f64() / 1000.0),
    );

    let mut stream = Vec::new();
    for i in 0..20_000 {
        stream.extend_from_slice(format!("event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{{\"type\":\"text_delta\",\"text\":\"word {i} \"}}}}\n\n").as_bytes());
    }
    let d = median(7, || {
        let mut p = SseParser::default();
        let mut count = 0;
        for chunk in stream.chunks(1400) {
            count += p.push(chunk).len();
        }
        std::hint::black_box(count);
    });
    row(
        "SSE framing, 1400-byte chunks",
        &format!("{} KB", stream.len() / 1024),
        d,
        &format!("{:.0} MB/s", stream.len() as f64 / 1e6 / d.as_secs_f64()),
    );

    let tools: Vec<ToolSpec> = (0..50)
        .map(|i| ToolSpec {
            name: format!("server__tool_{i}"),
            description: Some(
                "Search support tickets by words in their title, body or customer name.".into(),
            ),
            schema: schema.clone(),
            strict: false,
        })
        .collect();
    for turns in [1, 20] {
        let mut messages = vec![Message::user("Find the login ticket.")];
        for t in 0..turns {
            messages.push(Message::assistant(vec![Part::ToolUse {
                id: format!("toolu_{t}"),
                name: "server__tool_1".into(),
                input: json!({"query": "login"}),
            }]));
            messages.push(Message::tool_results(vec![Part::ToolResult {
                id: format!("toolu_{t}"),
                name: "server__tool_1".into(),
                content: vec![switchboard_providers::ResultPart::Text(
                    "T-1001 login fails ".repeat(50),
                )],
                is_error: false,
            }]));
        }
        for d in [Dialect::Anthropic, Dialect::OpenAiChat] {
            let parts = RequestParts {
                model: "m".into(),
                system: Some("## tickets\n\nTicket ids look like T-123.".into()),
                messages: messages.clone(),
                tools: tools.clone(),
                max_tokens: Some(4096),
                compatible_server: false,
                temperature: None,
                reasoning_effort: None,
                cache_key: None,
                gemini_openapi: false,
                stream: false,
            };
            let mut bytes = 0;
            let t = median(21, || {
                let b = to_bytes(&render_request(d, &parts));
                bytes = b.len();
                std::hint::black_box(b);
            });
            row(
                &format!("render request body, 50 tools, {turns} tool turns"),
                &format!("{} KB", bytes / 1024),
                t,
                d.as_str(),
            );
            if d == Dialect::Anthropic {
                // What the loop adds for Anthropic's prompt cache: three marks on the body.
                let body = render_request(d, &parts);
                let t = median(21, || {
                    let mut b = body.clone();
                    switchboard_providers::mark_cache_breakpoints(d, &mut b);
                    std::hint::black_box(b);
                });
                let clone = median(21, || {
                    std::hint::black_box(body.clone());
                });
                row(
                    &format!("cache marks + body clone, {turns} tool turns"),
                    &format!("clone {:.3} ms", clone.as_secs_f64() * 1000.0),
                    t,
                    d.as_str(),
                );
            }
        }
    }
}
