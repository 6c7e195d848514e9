//! Snapshots of a demo-like catalog's request in all four dialects (two servers that both
//! expose `search`), plus byte determinism and the validator on each body.

use std::collections::BTreeMap;

use serde_json::{Value, json};
use switchboard_core::Dialect;
use switchboard_core::names::NameMap;
use switchboard_providers::{
    Message, RequestParts, SanitizeOptions, prepare_tool, render_request, to_bytes,
};
use switchboard_test_support::validator;

/// (server, tool, description, input schema)
fn demo() -> Vec<(&'static str, &'static str, &'static str, Value)> {
    vec![
        (
            "docs",
            "search",
            "Search the documentation.",
            json!({"type": "object", "properties": {"q": {"type": "string", "description": "Words to look for"}}, "required": ["q"]}),
        ),
        (
            "docs",
            "get_page",
            "Read one documentation page.",
            json!({"type": "object", "properties": {"slug": {"type": "string"}}, "required": ["slug"]}),
        ),
        (
            "tickets",
            "search",
            "Search tickets.",
            json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "properties": {
                "query": {"type": "string"},
                "status": {"type": ["string", "null"], "enum": ["open", "pending", "closed", null]}},
                "required": ["query"]}),
        ),
        (
            "tickets",
            "get_ticket",
            "Get one ticket.",
            json!({"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}),
        ),
        (
            // annotations (destructiveHint) stay host-side: providers have no field for them.
            "tickets",
            "close_ticket",
            "Close a ticket.",
            json!({"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}),
        ),
    ]
}

fn request(dialect: Dialect, opts: &SanitizeOptions) -> Value {
    let tools = demo();
    let map = NameMap::build(
        dialect,
        tools.iter().map(|(s, t, _, _)| (*s, *t)),
        &BTreeMap::new(),
    );
    let specs = tools
        .iter()
        .map(|(s, t, d, schema)| {
            let public = map.public(s, t).unwrap();
            prepare_tool(dialect, public, Some(d), schema, opts)
                .unwrap()
                .spec
        })
        .collect();
    let parts = RequestParts {
        model: "demo-model".into(),
        system: Some("## docs\n\nDocs server: use search before get_page.".into()),
        messages: vec![Message::user("Find the ticket about login failures.")],
        tools: specs,
        max_tokens: Some(1024),
        compatible_server: false,
        temperature: None,
        reasoning_effort: None,
        cache_key: None,
        gemini_openapi: opts.gemini_openapi,
        stream: false,
    };
    let body = render_request(dialect, &parts);
    assert_eq!(to_bytes(&body), to_bytes(&render_request(dialect, &parts)));
    let violations = validator::validate_request(dialect, &body);
    assert!(violations.is_empty(), "{dialect}: {violations:?}");
    body
}

#[test]
fn demo_requests() {
    let plain = SanitizeOptions::default();
    for dialect in Dialect::ALL {
        let body = request(dialect, &plain);
        let text = body.to_string();
        assert!(text.contains("tickets__search") && text.contains("docs__search"));
        insta::assert_json_snapshot!(format!("demo_{dialect}"), body);
    }
    let strict = SanitizeOptions {
        strict: true,
        ..plain
    };
    insta::assert_json_snapshot!(
        "demo_openai-responses_strict",
        request(Dialect::OpenAiResponses, &strict)
    );
    let openapi = SanitizeOptions {
        gemini_openapi: true,
        ..plain
    };
    insta::assert_json_snapshot!("demo_gemini_parameters", request(Dialect::Gemini, &openapi));
}
