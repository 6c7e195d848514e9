//! Fuzz target: a server's requests to the host while its tool runs, as `chat` and `run` read
//! them: an elicitation form (its fields, and each line of the rest of the input as an answer
//! to the next field) and a sampling request (with tools: named, sanitized and rendered for
//! every dialect, each sent name valid there and mapped back to the server's).
#![no_main]

use libfuzzer_sys::fuzz_target;
use switchboard_core::elicitation::{Form, Request};
use switchboard_core::{Dialect, names};
use switchboard_host::sampling::{SamplingRequest, answer_text, result};
use switchboard_providers::{
    Part, Reply, RequestParts, Stop, apply_tool_choice, render_request,
};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (params, answers) = text.split_once('\n').unwrap_or((&text, ""));
    let Ok(params) = serde_json::from_str::<serde_json::Value>(params) else {
        return;
    };
    if let Ok(request) = SamplingRequest::parse("s", "t", &params) {
        let _ = request.last_text();
        for dialect in Dialect::ALL {
            let prepared = request.prepare(dialect, dialect == Dialect::Gemini);
            for spec in &prepared.tools {
                assert!(
                    names::is_valid(dialect, &spec.name),
                    "{dialect}: {:?} sent",
                    spec.name
                );
                // A tool use of a sent tool goes back under the server's own name.
                let reply = prepared.restore(Reply {
                    parts: vec![Part::ToolUse {
                        id: "u".into(),
                        name: spec.name.clone(),
                        input: serde_json::json!({}),
                    }],
                    stop: Stop::ToolUse,
                    usage: Default::default(),
                });
                let answer = result(&reply, "m", true);
                let own = answer["content"][0]["name"].as_str().unwrap_or("");
                assert!(
                    request.tools.iter().any(|t| t.name == own),
                    "{dialect}: {:?} came back as {own:?}",
                    spec.name
                );
                let _ = answer_text(&answer);
            }
            let parts = RequestParts {
                model: "m".into(),
                system: request.system.clone(),
                messages: prepared.messages.clone(),
                tools: prepared.tools.clone(),
                max_tokens: Some(request.max_tokens),
                compatible_server: false,
                temperature: request.temperature,
                reasoning_effort: None,
                cache_key: None,
                gemini_openapi: dialect == Dialect::Gemini,
                stream: false,
            };
            let mut body = render_request(dialect, &parts);
            apply_tool_choice(dialect, &mut body, &prepared.tool_choice);
        }
    }
    if let Ok(Request::Form(form)) = Request::parse(&params) {
        let mut answered = serde_json::Map::new();
        for (field, line) in form.fields.iter().zip(answers.lines().cycle().take(64)) {
            let _ = field.hint();
            if let Ok(Some(v)) = field.read(line) {
                let _ = field.show(&v);
                assert!(field.check(&v).is_ok(), "an answer read is one the field takes");
                answered.insert(field.name.clone(), v);
            }
        }
        let _ = Form::accept(answered);
    }
});
