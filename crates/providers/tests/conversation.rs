//! A full multi-turn conversation (text, two parallel tool uses, results with an error and an
//! image, a last user turn) encoded in every dialect: snapshots, byte determinism, the
//! validator's conversation rules, and the stream switch.

use serde_json::{Value, json};
use switchboard_core::Dialect;
use switchboard_providers::{
    DEFAULT_MAX_TOKENS, Message, Part, RequestParts, ResultPart, ToolChoice, ToolSpec,
    accepts_result_images, accepts_result_images_for, apply_tool_choice, render_request, to_bytes,
};
use switchboard_test_support::validator;

/// A 1x1 PNG.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

fn tools() -> Vec<ToolSpec> {
    let spec = |name: &str, description: &str, schema: Value| ToolSpec {
        name: name.into(),
        description: Some(description.into()),
        schema,
        strict: false,
    };
    vec![
        spec(
            "tickets__search",
            "Search tickets.",
            json!({"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}),
        ),
        spec(
            "docs__search",
            "Search the documentation.",
            json!({"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}),
        ),
        spec(
            "tickets__get_ticket",
            "Get one ticket with its screenshot.",
            json!({"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}),
        ),
    ]
}

/// Call ids as each provider makes them (Gemini gives none: the decoder synthesizes them).
fn ids(dialect: Dialect) -> [&'static str; 3] {
    match dialect {
        Dialect::Anthropic => ["toolu_01A", "toolu_01B", "toolu_02A"],
        Dialect::OpenAiChat => ["call_a1", "call_b2", "call_c3"],
        Dialect::OpenAiResponses => ["call_r1", "call_r2", "call_r3"],
        Dialect::Gemini => ["gemini-call-0", "gemini-call-1", "gemini-call-0"],
    }
}

fn conversation(dialect: Dialect) -> Vec<Message> {
    let [a, b, c] = ids(dialect);
    let result =
        |id: &str, name: &str, content: Vec<ResultPart>, is_error: bool| Part::ToolResult {
            id: id.into(),
            name: name.into(),
            content,
            is_error,
        };
    vec![
        Message::user("Find the ticket about login failures and check the docs."),
        Message::assistant(vec![
            Part::text("Searching tickets and docs."),
            Part::ToolUse {
                id: a.into(),
                name: "tickets__search".into(),
                input: json!({"query": "login failure"}),
            },
            Part::ToolUse {
                id: b.into(),
                name: "docs__search".into(),
                input: json!({"q": "login"}),
            },
        ]),
        Message::tool_results(vec![
            result(
                a,
                "tickets__search",
                vec![ResultPart::Text("T-17 Login fails on Safari (open)".into())],
                false,
            ),
            result(
                b,
                "docs__search",
                vec![ResultPart::Text(
                    "Error: the docs server did not answer within 30 s; try again or search tickets only."
                        .into(),
                )],
                true,
            ),
        ]),
        Message::assistant(vec![Part::ToolUse {
            id: c.into(),
            name: "tickets__get_ticket".into(),
            input: json!({"id": "T-17"}),
        }]),
        Message::tool_results(vec![result(
            c,
            "tickets__get_ticket",
            vec![
                ResultPart::Text("T-17: Safari users get a blank page after login.".into()),
                ResultPart::Image {
                    media_type: "image/png".into(),
                    data: PNG.into(),
                },
            ],
            false,
        )]),
        Message::assistant(vec![Part::text(
            "T-17 is open: Safari users see a blank page after logging in.",
        )]),
        Message::user("Close it."),
    ]
}

fn parts(dialect: Dialect, stream: bool) -> RequestParts {
    RequestParts {
        model: "demo-model".into(),
        system: Some("You help with tickets.".into()),
        messages: conversation(dialect),
        tools: tools(),
        max_tokens: Some(1024),
        compatible_server: false,
        temperature: None,
        reasoning_effort: None,
        cache_key: None,
        gemini_openapi: false,
        stream,
    }
}

#[test]
fn full_conversation_in_every_dialect() {
    for dialect in Dialect::ALL {
        let p = parts(dialect, false);
        let body = render_request(dialect, &p);
        assert_eq!(to_bytes(&body), to_bytes(&render_request(dialect, &p)));
        let violations = validator::validate_request(dialect, &body);
        assert!(violations.is_empty(), "{dialect}: {violations:#?}");
        insta::assert_json_snapshot!(format!("conversation_{dialect}"), body);
    }
}

/// The output limit goes in each API's own field; OpenAI Chat's moves to `max_tokens` for a
/// compatible server (llama.cpp, Ollama), and `None` sends none but Anthropic's required one.
#[test]
fn the_output_limit_goes_in_each_apis_own_field() {
    let limit = |dialect: Dialect, max_tokens: Option<u32>, compatible_server: bool| {
        let body = render_request(
            dialect,
            &RequestParts {
                max_tokens,
                compatible_server,
                ..parts(dialect, false)
            },
        );
        let fields = [
            "/max_tokens",
            "/max_completion_tokens",
            "/max_output_tokens",
            "/generationConfig/maxOutputTokens",
        ];
        let found: Vec<(&str, u64)> = fields
            .iter()
            .filter_map(|f| body.pointer(f).and_then(|v| v.as_u64()).map(|n| (*f, n)))
            .collect();
        let violations = validator::validate_request(dialect, &body);
        assert!(violations.is_empty(), "{dialect}: {violations:#?}");
        found
    };
    let cases = [
        (Dialect::Anthropic, false, vec![("/max_tokens", 300)]),
        (Dialect::Anthropic, true, vec![("/max_tokens", 300)]),
        (
            Dialect::OpenAiChat,
            false,
            vec![("/max_completion_tokens", 300)],
        ),
        (Dialect::OpenAiChat, true, vec![("/max_tokens", 300)]),
        (
            Dialect::OpenAiResponses,
            false,
            vec![("/max_output_tokens", 300)],
        ),
        (
            Dialect::OpenAiResponses,
            true,
            vec![("/max_output_tokens", 300)],
        ),
        (
            Dialect::Gemini,
            false,
            vec![("/generationConfig/maxOutputTokens", 300)],
        ),
    ];
    for (dialect, compatible, want) in cases {
        assert_eq!(limit(dialect, Some(300), compatible), want, "{dialect}");
    }
    for dialect in Dialect::ALL {
        let want = if dialect == Dialect::Anthropic {
            vec![("/max_tokens", u64::from(DEFAULT_MAX_TOKENS))]
        } else {
            Vec::new()
        };
        assert_eq!(limit(dialect, None, false), want, "{dialect}");
        assert_eq!(limit(dialect, None, true), want, "{dialect}");
    }
}

#[test]
fn images_in_results_only_where_accepted() {
    for dialect in Dialect::ALL {
        let text = render_request(dialect, &parts(dialect, false)).to_string();
        // The image appears once per dialect that accepts it in results, never elsewhere.
        assert_eq!(
            text.contains(PNG),
            accepts_result_images(dialect),
            "{dialect}: {text}"
        );
        if !accepts_result_images(dialect) {
            assert!(text.contains("[image image/png"), "{dialect}: no note");
        }
    }
}

#[test]
fn error_results_say_so_in_every_dialect() {
    for dialect in Dialect::ALL {
        let body = render_request(dialect, &parts(dialect, false));
        let text = body.to_string();
        match dialect {
            Dialect::Anthropic => assert!(text.contains(r#""is_error":true"#)),
            Dialect::Gemini => assert!(text.contains(r#""response":{"error":"Error: the docs"#)),
            _ => assert!(text.contains("Error: the docs server")),
        }
    }
}

#[test]
fn gemini_pairs_by_name_and_leaves_synthesized_ids_out() {
    let body = render_request(Dialect::Gemini, &parts(Dialect::Gemini, false));
    let text = body.to_string();
    assert!(!text.contains("gemini-call-"), "{text}");
    assert_eq!(
        body.pointer("/contents/2/parts/1/functionResponse/name"),
        Some(&json!("docs__search"))
    );
    // A real id (newer API) is echoed in both the call and the response.
    let mut p = parts(Dialect::Gemini, false);
    if let Part::ToolUse { id, .. } = &mut p.messages[3].parts[0] {
        *id = "fc-123".into();
    }
    if let Part::ToolResult { id, .. } = &mut p.messages[4].parts[0] {
        *id = "fc-123".into();
    }
    let body = render_request(Dialect::Gemini, &p);
    assert_eq!(
        body.pointer("/contents/3/parts/0/functionCall/id"),
        Some(&json!("fc-123"))
    );
    assert_eq!(
        body.pointer("/contents/4/parts/0/functionResponse/id"),
        Some(&json!("fc-123"))
    );
}

#[test]
fn stream_flag_per_dialect() {
    for dialect in Dialect::ALL {
        let plain = render_request(dialect, &parts(dialect, false));
        let streamed = render_request(dialect, &parts(dialect, true));
        assert_eq!(plain.get("stream"), None, "{dialect}");
        match dialect {
            Dialect::Gemini => assert_eq!(plain, streamed),
            Dialect::OpenAiChat => {
                assert_eq!(streamed["stream"], json!(true));
                assert_eq!(streamed["stream_options"], json!({"include_usage": true}));
            }
            _ => {
                assert_eq!(streamed["stream"], json!(true));
                assert_eq!(streamed.get("stream_options"), None);
            }
        }
        assert!(validator::validate_request(dialect, &streamed).is_empty());
    }
}

#[test]
fn invalid_arguments_are_replayed_in_a_shape_each_api_accepts() {
    for dialect in Dialect::ALL {
        let mut p = parts(dialect, false);
        if let Part::ToolUse { input, .. } = &mut p.messages[3].parts[0] {
            *input = Value::String("{\"id\": \"T-1".into());
        }
        assert_eq!(
            p.messages[3].parts[0].invalid_input(),
            Some("{\"id\": \"T-1")
        );
        let body = render_request(dialect, &p);
        let violations = validator::validate_request(dialect, &body);
        assert!(violations.is_empty(), "{dialect}: {violations:#?}");
        let text = body.to_string();
        match dialect {
            // OpenAI takes arguments as a string: the model's own text goes back.
            Dialect::OpenAiChat | Dialect::OpenAiResponses => {
                assert!(text.contains(r#""arguments":"{\"id\": \"T-1""#), "{text}")
            }
            // The others need an object.
            _ => assert!(!text.contains("T-1\""), "{text}"),
        }
    }
}

#[test]
fn user_images_and_text_after_results() {
    for dialect in Dialect::ALL {
        let mut p = parts(dialect, false);
        p.messages
            .push(Message::assistant(vec![Part::text("Done.")]));
        p.messages.push(Message {
            role: switchboard_providers::Role::User,
            parts: vec![
                Part::text("What is on this screenshot?"),
                Part::Image {
                    media_type: "image/png".into(),
                    data: PNG.into(),
                },
            ],
        });
        let body = render_request(dialect, &p);
        let violations = validator::validate_request(dialect, &body);
        assert!(violations.is_empty(), "{dialect}: {violations:#?}");
        assert!(body.to_string().contains(PNG));
    }
}

#[test]
fn gemini_takes_result_images_from_gemini_3_on() {
    for (model, yes) in [
        ("gemini-3-pro-preview", true),
        ("gemini-3.1-flash", true),
        ("models/gemini-3-flash-preview", true),
        ("google/gemini-3-pro", true),
        ("gemini-4-ultra", true),
        ("gemini-2.5-flash", false),
        ("gemini-2.0-flash", false),
        ("gemini-exp-1206", false),
        ("llama3.2", false),
        ("", false),
    ] {
        assert_eq!(
            accepts_result_images_for(Dialect::Gemini, model),
            yes,
            "{model}"
        );
    }
    for dialect in [
        Dialect::Anthropic,
        Dialect::OpenAiChat,
        Dialect::OpenAiResponses,
    ] {
        assert_eq!(
            accepts_result_images_for(dialect, "gemini-3-pro"),
            accepts_result_images(dialect)
        );
    }
}

/// The Gemini conversation with `model`, its `tickets__get_ticket` result given `images`.
fn gemini_with(model: &str, images: Vec<ResultPart>) -> Value {
    let mut p = parts(Dialect::Gemini, false);
    p.model = model.into();
    if let Part::ToolResult { content, .. } = &mut p.messages[4].parts[0] {
        content.truncate(1);
        content.extend(images);
    }
    render_request(Dialect::Gemini, &p)
}

fn image(media_type: &str) -> ResultPart {
    ResultPart::Image {
        media_type: media_type.into(),
        data: PNG.into(),
    }
}

#[test]
fn gemini_3_result_images_go_in_function_response_parts() {
    let body = gemini_with(
        "gemini-3-pro-preview",
        vec![image("image/png"), image("image/gif"), image("image/jpeg")],
    );
    let violations = validator::validate_request(Dialect::Gemini, &body);
    assert!(violations.is_empty(), "{violations:#?}");
    let response = body
        .pointer("/contents/4/parts/0/functionResponse")
        .unwrap();
    assert_eq!(
        response["parts"],
        json!([
            {"inlineData": {"mimeType": "image/png", "data": PNG, "displayName": "image-1"}},
            {"inlineData": {"mimeType": "image/jpeg", "data": PNG, "displayName": "image-2"}}
        ])
    );
    // The text stays in `output`; a GIF (not taken in function responses) becomes a note.
    let output = response["response"]["output"].as_str().unwrap();
    assert!(output.starts_with("T-17: Safari users"), "{output}");
    assert!(output.contains("[image image/gif"), "{output}");
    assert!(
        !output.contains(PNG) && !output.contains("image/png"),
        "{output}"
    );
    // An older model gets notes only, and no `parts`.
    let body = gemini_with("gemini-2.5-flash", vec![image("image/png")]);
    let response = body
        .pointer("/contents/4/parts/0/functionResponse")
        .unwrap();
    assert!(response.get("parts").is_none(), "{response}");
    assert!(!body.to_string().contains(PNG));
    assert!(
        response["response"]["output"]
            .as_str()
            .unwrap()
            .contains("[image image/png")
    );
}

#[test]
fn the_validator_checks_gemini_function_response_parts() {
    let good = gemini_with("gemini-3-pro-preview", vec![image("image/png")]);
    let at = "/contents/4/parts/0/functionResponse/parts";
    for (bad, needle) in [
        (json!([]), "non-empty"),
        (
            json!([{"fileData": {"mimeType": "image/png", "fileUri": "gs://x"}}]),
            "fileData is not supported",
        ),
        (
            json!([{"inlineData": {"mimeType": "image/gif", "data": PNG}}]),
            "not an image type",
        ),
        (
            json!([{"inlineData": {"mimeType": "image/png", "data": ""}}]),
            "base64 data",
        ),
        (
            json!([
                {"inlineData": {"mimeType": "image/png", "data": PNG, "displayName": "a"}},
                {"inlineData": {"mimeType": "image/png", "data": PNG, "displayName": "a"}}
            ]),
            "unique",
        ),
    ] {
        let mut body = good.clone();
        *body.pointer_mut(at).unwrap() = bad.clone();
        let violations = validator::validate_request(Dialect::Gemini, &body);
        assert!(
            violations
                .iter()
                .any(|v| v.rule == "gemini-response-parts" && v.message.contains(needle)),
            "{bad}: {violations:#?}"
        );
    }
}

#[test]
fn the_temperature_goes_in_each_apis_own_field() {
    for dialect in Dialect::ALL {
        let body = |temperature: Option<f64>, max_tokens: Option<u32>| {
            let body = render_request(
                dialect,
                &RequestParts {
                    temperature,
                    max_tokens,
                    ..parts(dialect, false)
                },
            );
            let violations = validator::validate_request(dialect, &body);
            assert!(violations.is_empty(), "{dialect}: {violations:#?}");
            body
        };
        let field = match dialect {
            Dialect::Gemini => "/generationConfig/temperature",
            _ => "/temperature",
        };
        assert_eq!(
            body(Some(0.0), Some(100)).pointer(field),
            Some(&serde_json::json!(0.0)),
            "{dialect}"
        );
        assert_eq!(body(None, Some(100)).pointer(field), None, "{dialect}");
        // Gemini: a temperature alone still makes a generationConfig, without a limit.
        if dialect == Dialect::Gemini {
            assert_eq!(
                body(Some(0.7), None)["generationConfig"],
                serde_json::json!({"temperature": 0.7})
            );
            assert!(body(None, None).get("generationConfig").is_none());
        }
    }
}

/// A reasoning effort goes in each API's own fields, by model generation: OpenAI Chat's
/// `reasoning_effort`, the Responses API's `reasoning.effort`, Claude's adaptive thinking and
/// effort (a thinking budget before 4.6, with room made for it in `max_tokens`, and no
/// temperature either way), Gemini 3's thinking level (a budget for 2.5). A level the model
/// cannot take is left out, and the body is as without one.
#[test]
fn a_reasoning_effort_goes_in_each_apis_own_fields() {
    let body = |dialect: Dialect, model: &str, effort: Option<&str>| {
        let body = render_request(
            dialect,
            &RequestParts {
                model: model.into(),
                reasoning_effort: effort.map(String::from),
                temperature: Some(0.5),
                max_tokens: None,
                ..parts(dialect, false)
            },
        );
        let violations = validator::validate_request(dialect, &body);
        assert!(violations.is_empty(), "{dialect} {model}: {violations:#?}");
        body
    };
    let b = body(Dialect::OpenAiChat, "gpt-5", Some("low"));
    assert_eq!(b["reasoning_effort"], "low");
    assert_eq!(b["temperature"], 0.5);
    let b = body(Dialect::OpenAiResponses, "o3", Some("low"));
    assert_eq!(b["reasoning"], json!({"effort": "low"}));

    let b = body(Dialect::Anthropic, "claude-opus-4-7", Some("high"));
    assert_eq!(b["thinking"], json!({"type": "adaptive"}));
    assert_eq!(b["output_config"], json!({"effort": "high"}));
    assert_eq!(b["max_tokens"], DEFAULT_MAX_TOKENS);
    assert!(b.get("temperature").is_none(), "{b}");
    let b = body(
        Dialect::Anthropic,
        "claude-sonnet-4-5-20250929",
        Some("medium"),
    );
    assert_eq!(
        b["thinking"],
        json!({"type": "enabled", "budget_tokens": 8192})
    );
    assert_eq!(b["max_tokens"], 8192 + DEFAULT_MAX_TOKENS);
    assert!(b.get("output_config").is_none() && b.get("temperature").is_none());
    // A word an older Claude has no budget for: as without an effort.
    assert_eq!(
        body(Dialect::Anthropic, "claude-sonnet-4-5", Some("extreme")),
        body(Dialect::Anthropic, "claude-sonnet-4-5", None)
    );

    let b = body(Dialect::Gemini, "gemini-3-pro-preview", Some("low"));
    assert_eq!(
        b["generationConfig"],
        json!({"temperature": 0.5, "thinkingConfig": {"thinkingLevel": "low", "includeThoughts": true}})
    );
    let b = body(Dialect::Gemini, "gemini-2.5-flash", Some("high"));
    assert_eq!(
        b["generationConfig"]["thinkingConfig"],
        json!({"thinkingBudget": 24576, "includeThoughts": true})
    );

    for dialect in Dialect::ALL {
        let plain = body(dialect, "demo-model", None).to_string();
        for field in ["reasoning", "thinking", "output_config"] {
            assert!(!plain.contains(field), "{dialect}: {field} in {plain}");
        }
    }
}

/// The model's reasoning goes back to the API that gave it, as it came (Anthropic checks the
/// signature of each thinking block, DeepSeek and Kimi want the turn's `reasoning_content`),
/// and to no other API.
#[test]
fn reasoning_goes_back_to_the_api_that_gave_it_and_to_no_other() {
    let thinking = json!({"type": "thinking", "thinking": "The ticket tool first.", "signature": "EqQBCkYIBxgCKkA="});
    let redacted = json!({"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT"});
    let reply = json!({
        "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [thinking, redacted,
            {"type": "tool_use", "id": "toolu_01A", "name": "tickets__search", "input": {"query": "login"}}],
        "stop_reason": "tool_use", "usage": {"input_tokens": 10, "output_tokens": 5}
    });
    let reply =
        switchboard_providers::decode_reply(Dialect::Anthropic, reply.to_string().as_bytes())
            .unwrap();
    assert_eq!(
        reply.parts[0],
        Part::Reasoning {
            dialect: Dialect::Anthropic,
            text: "The ticket tool first.".into(),
            data: thinking.clone(),
        }
    );
    let loop_of = |assistant: Vec<Part>, id: &str| {
        vec![
            Message::user("Find the login ticket."),
            Message::assistant(assistant),
            Message::tool_results(vec![Part::ToolResult {
                id: id.into(),
                name: "tickets__search".into(),
                content: vec![ResultPart::Text("T-17".into())],
                is_error: false,
            }]),
        ]
    };
    let render = |dialect: Dialect, messages: Vec<Message>| {
        let body = render_request(
            dialect,
            &RequestParts {
                messages,
                ..parts(dialect, false)
            },
        );
        let violations = validator::validate_request(dialect, &body);
        assert!(violations.is_empty(), "{dialect}: {violations:#?}");
        body
    };
    let body = render(
        Dialect::Anthropic,
        loop_of(reply.parts.clone(), "toolu_01A"),
    );
    let content = &body["messages"][1]["content"];
    assert_eq!(content[0], thinking);
    assert_eq!(content[1], redacted);
    assert_eq!(content[2]["type"], "tool_use");
    // Another API takes none of it.
    for dialect in [
        Dialect::OpenAiChat,
        Dialect::OpenAiResponses,
        Dialect::Gemini,
    ] {
        let text = render(dialect, loop_of(reply.parts.clone(), "toolu_01A")).to_string();
        assert!(
            !text.contains("EqQBCkYIBxgCKkA=") && !text.contains("The ticket tool first."),
            "{dialect}: {text}"
        );
    }

    // OpenAI Chat servers: the field it came in goes back with the turn's tool calls, and is
    // left out of the turns before the user's last message.
    for field in ["reasoning_content", "reasoning"] {
        let completion = json!({
            "id": "c1", "object": "chat.completion", "created": 0, "model": "deepseek-reasoner",
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": null, field: "Search tickets for login.",
                "tool_calls": [{"id": "call_a1", "type": "function",
                    "function": {"name": "tickets__search", "arguments": "{\"query\":\"login\"}"}}]}}]
        });
        let reply = switchboard_providers::decode_reply(
            Dialect::OpenAiChat,
            completion.to_string().as_bytes(),
        )
        .unwrap();
        let mut messages = loop_of(reply.parts.clone(), "call_a1");
        let body = render(Dialect::OpenAiChat, messages.clone());
        // [system, user, assistant, tool]
        assert_eq!(
            body["messages"][2][field], "Search tickets for login.",
            "{body}"
        );
        messages.push(Message::assistant(vec![Part::text("T-17.")]));
        messages.push(Message::user("Thanks. And the docs?"));
        let body = render(Dialect::OpenAiChat, messages);
        assert!(body["messages"][2].get(field).is_none(), "{body}");
        let text = render(Dialect::Anthropic, loop_of(reply.parts, "call_a1")).to_string();
        assert!(!text.contains("Search tickets for login."), "{text}");
    }
}

/// OpenAI Responses: a reply that reasoned goes back, within the turn under way, as the output
/// items it came as (reasoning item, then the item that followed it, ids and all); after the
/// user's next message, or when its calls are not the ones in the items any more, it goes back
/// as plain items without reasoning.
#[test]
fn responses_reasoning_items_go_back_in_place_within_the_turn() {
    let d = Dialect::OpenAiResponses;
    let output = json!([
        {"type": "reasoning", "id": "rs_7", "summary": [{"type": "summary_text", "text": "Search first."}],
         "encrypted_content": "gAAAAB-opaque"},
        {"type": "message", "id": "msg_7", "status": "completed", "role": "assistant",
         "content": [{"type": "output_text", "text": "Looking.", "annotations": []}]},
        {"type": "function_call", "id": "fc_7", "call_id": "call_7", "name": "tickets__search",
         "arguments": "{\"query\":\"login\"}", "status": "completed"},
        {"type": "web_search_call", "id": "ws_7", "status": "completed"}
    ]);
    let response = json!({"object": "response", "status": "completed", "output": output,
        "usage": {"input_tokens": 9, "output_tokens": 80, "output_tokens_details": {"reasoning_tokens": 64}}});
    let reply = switchboard_providers::decode_reply(d, response.to_string().as_bytes()).unwrap();
    let kept = json!([output[0], output[1], output[2]]);
    assert_eq!(
        reply.parts[0],
        Part::Reasoning {
            dialect: d,
            text: "Search first.".into(),
            data: json!({ "output": kept }),
        }
    );
    assert_eq!(reply.usage.reasoning_tokens, Some(64));
    let result = Part::ToolResult {
        id: "call_7".into(),
        name: "tickets__search".into(),
        content: vec![ResultPart::Text("T-17".into())],
        is_error: false,
    };
    let mut messages = vec![
        Message::user("Find the login ticket."),
        Message::assistant(reply.parts.clone()),
        Message::tool_results(vec![result.clone()]),
    ];
    let render = |messages: Vec<Message>| {
        let body = render_request(
            d,
            &RequestParts {
                messages,
                ..parts(d, false)
            },
        );
        let violations = validator::validate_request(d, &body);
        assert!(violations.is_empty(), "{violations:#?}");
        body["input"].as_array().unwrap().clone()
    };
    let input = render(messages.clone());
    assert_eq!(input.len(), 5, "{input:#?}");
    let body = |dialect: Dialect, messages: Vec<Message>| {
        render_request(
            dialect,
            &RequestParts {
                messages,
                ..parts(dialect, false)
            },
        )
    };
    assert!(switchboard_providers::sends_reasoning_items(
        d,
        &body(d, messages.clone())
    ));
    assert!(!switchboard_providers::sends_reasoning_items(
        Dialect::OpenAiChat,
        &body(Dialect::OpenAiChat, messages.clone())
    ));
    assert_eq!(input[1..4], kept.as_array().unwrap()[..], "{input:#?}");
    assert_eq!(input[4]["type"], "function_call_output");

    // The user's next message: the earlier turn goes back as plain items.
    messages.push(Message::assistant(vec![Part::text("T-17.")]));
    messages.push(Message::user("Thanks."));
    assert!(!switchboard_providers::sends_reasoning_items(
        d,
        &body(d, messages.clone())
    ));
    let input = render(messages);
    let text = serde_json::to_string(&input).unwrap();
    assert!(!text.contains("rs_7") && !text.contains("fc_7"), "{text}");
    assert_eq!(input[2]["type"], "function_call");

    // A call that is not the one in the items (changed arguments): plain items too.
    let mut changed = reply.parts.clone();
    if let Some(Part::ToolUse { input, .. }) = changed.last_mut() {
        *input = json!({"query": "logout"});
    }
    let input = render(vec![
        Message::user("Find the login ticket."),
        Message::assistant(changed),
        Message::tool_results(vec![result]),
    ]);
    let text = serde_json::to_string(&input).unwrap();
    assert!(!text.contains("rs_7") && text.contains("logout"), "{text}");
}

/// A cache key goes in both OpenAI APIs' `prompt_cache_key`, and in no other body.
#[test]
fn a_cache_key_goes_in_openais_prompt_cache_key() {
    for dialect in Dialect::ALL {
        let body = render_request(
            dialect,
            &RequestParts {
                cache_key: Some("switchboard-0123".into()),
                ..parts(dialect, false)
            },
        );
        let violations = validator::validate_request(dialect, &body);
        assert!(violations.is_empty(), "{dialect}: {violations:#?}");
        let openai = matches!(dialect, Dialect::OpenAiChat | Dialect::OpenAiResponses);
        assert_eq!(
            body.get("prompt_cache_key"),
            openai.then(|| json!("switchboard-0123")).as_ref(),
            "{dialect}"
        );
        assert!(
            openai || !body.to_string().contains("switchboard-0123"),
            "{dialect}"
        );
        let plain = render_request(dialect, &parts(dialect, false));
        assert!(plain.get("prompt_cache_key").is_none(), "{dialect}");
    }
}

/// What carries signed reasoning through OpenAI's format goes back with the turn's tool calls:
/// OpenRouter's `reasoning_details` (Claude's thinking, Gemini's signatures) on the message,
/// and the `extra_content` of each call (Google's OpenAI-compatible endpoint puts a Gemini 3
/// thought signature there).
#[test]
fn openrouter_details_and_call_extras_go_back_with_the_turn() {
    let details = json!([
        {"type": "reasoning.text", "text": "Search first.", "signature": "sig-1", "format": "anthropic-claude-v1", "index": 0},
        {"type": "reasoning.encrypted", "data": "ZW5j", "format": "google-gemini-v1", "index": 1}
    ]);
    let extra = json!({"google": {"thought_signature": "c2lnbmF0dXJl"}});
    let completion = json!({
        "id": "c1", "object": "chat.completion", "created": 0, "model": "google/gemini-3-pro-preview",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": null, "reasoning": "Search first.",
            "reasoning_details": details,
            "tool_calls": [{"id": "call_a1", "type": "function", "extra_content": extra,
                "function": {"name": "tickets__search", "arguments": "{}"}}]}}]
    });
    let reply =
        switchboard_providers::decode_reply(Dialect::OpenAiChat, completion.to_string().as_bytes())
            .unwrap();
    let mut messages = vec![
        Message::user("Find the login ticket."),
        Message::assistant(reply.parts),
        Message::tool_results(vec![Part::ToolResult {
            id: "call_a1".into(),
            name: "tickets__search".into(),
            content: vec![ResultPart::Text("T-17".into())],
            is_error: false,
        }]),
    ];
    let render = |messages: Vec<Message>| {
        let body = render_request(
            Dialect::OpenAiChat,
            &RequestParts {
                messages,
                ..parts(Dialect::OpenAiChat, false)
            },
        );
        let violations = validator::validate_request(Dialect::OpenAiChat, &body);
        assert!(violations.is_empty(), "{violations:#?}");
        body
    };
    let body = render(messages.clone());
    let assistant = &body["messages"][2];
    assert_eq!(assistant["reasoning"], "Search first.", "{body}");
    assert_eq!(assistant["reasoning_details"], details, "{body}");
    assert_eq!(assistant["tool_calls"][0]["extra_content"], extra, "{body}");
    // Another turn of the user's: none of it goes back for the turn before.
    messages.push(Message::assistant(vec![Part::text("T-17.")]));
    messages.push(Message::user("Thanks."));
    let body = render(messages);
    let assistant = &body["messages"][2];
    assert!(
        assistant.get("reasoning_details").is_none()
            && assistant["tool_calls"][0].get("extra_content").is_none(),
        "{body}"
    );
}

/// A tool choice goes in each API's own field and shape, one the validator takes; `auto` and a
/// request without tools add nothing (OpenAI refuses a `tool_choice` without tools, which the
/// validator checks too).
#[test]
fn a_tool_choice_goes_in_each_apis_own_field() {
    let choices = [
        ToolChoice::None,
        ToolChoice::Any,
        ToolChoice::Tool("docs__search".into()),
    ];
    let expected = |dialect: Dialect| -> [Value; 3] {
        match dialect {
            Dialect::Anthropic => [
                json!({"type": "none"}),
                json!({"type": "any"}),
                json!({"type": "tool", "name": "docs__search"}),
            ],
            Dialect::OpenAiChat => [
                json!("none"),
                json!("required"),
                json!({"type": "function", "function": {"name": "docs__search"}}),
            ],
            Dialect::OpenAiResponses => [
                json!("none"),
                json!("required"),
                json!({"type": "function", "name": "docs__search"}),
            ],
            Dialect::Gemini => [
                json!({"functionCallingConfig": {"mode": "NONE"}}),
                json!({"functionCallingConfig": {"mode": "ANY"}}),
                json!({"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["docs__search"]}}),
            ],
        }
    };
    for dialect in Dialect::ALL {
        let key = if dialect == Dialect::Gemini {
            "toolConfig"
        } else {
            "tool_choice"
        };
        let plain = render_request(dialect, &parts(dialect, false));
        let mut auto = plain.clone();
        apply_tool_choice(dialect, &mut auto, &ToolChoice::Auto);
        assert_eq!(auto, plain, "{dialect}: auto is every API's default");
        for (choice, want) in choices.iter().zip(expected(dialect)) {
            let mut body = plain.clone();
            apply_tool_choice(dialect, &mut body, choice);
            assert_eq!(body[key], want, "{dialect} {choice:?}");
            let violations = validator::validate_request(dialect, &body);
            assert!(violations.is_empty(), "{dialect}: {violations:#?}");
            // A tool the request does not declare is the validator's to catch.
            let mut unknown = plain.clone();
            apply_tool_choice(dialect, &mut unknown, &ToolChoice::Tool("nope".into()));
            let violations = validator::validate_request(dialect, &unknown);
            assert!(
                violations.iter().any(|v| v.rule == "tool-choice"),
                "{dialect}: {violations:#?}"
            );
        }
        let mut without = render_request(
            dialect,
            &RequestParts {
                tools: Vec::new(),
                ..parts(dialect, false)
            },
        );
        let before = without.clone();
        apply_tool_choice(dialect, &mut without, &ToolChoice::Any);
        assert_eq!(without, before, "{dialect}: no tools, no tool choice");
        without[key] = json!("required");
        let violations = validator::validate_request(dialect, &without);
        assert!(
            violations.iter().any(|v| v.rule == "tool-choice"),
            "{dialect}: {violations:#?}"
        );
    }
}
