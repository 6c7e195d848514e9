//! The validator's conversation rules: a valid hand-written conversation per dialect passes,
//! and each rule is caught by one broken example (written as raw JSON, independent of the
//! encoder in switchboard-providers).

use serde_json::{Value, json};
use switchboard_core::Dialect;
use switchboard_test_support::validator::validate_request;

type Edit = fn(&mut Value);

fn rules(dialect: Dialect, body: &Value) -> Vec<&'static str> {
    validate_request(dialect, body)
        .into_iter()
        .map(|v| v.rule)
        .collect()
}

fn check(dialect: Dialect, base: &Value, cases: &[(&str, Edit)]) {
    let clean = validate_request(dialect, base);
    assert!(clean.is_empty(), "{dialect} base: {clean:#?}");
    for (rule, edit) in cases {
        let mut body = base.clone();
        edit(&mut body);
        let found = rules(dialect, &body);
        assert!(
            found.contains(rule),
            "{dialect}: expected {rule}, got {found:?} for {body:#}"
        );
    }
}

fn at<'a>(v: &'a mut Value, pointer: &str) -> &'a mut Value {
    match v.pointer_mut(pointer) {
        Some(x) => x,
        None => panic!("no {pointer}"),
    }
}

fn list<'a>(v: &'a mut Value, pointer: &str) -> &'a mut Vec<Value> {
    match at(v, pointer).as_array_mut() {
        Some(x) => x,
        None => panic!("{pointer} is not a list"),
    }
}

#[test]
fn anthropic_rules() {
    let base = json!({"model": "m", "max_tokens": 100, "messages": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [
            {"type": "text", "text": "ok"},
            {"type": "tool_use", "id": "toolu_1", "name": "a", "input": {}},
            {"type": "tool_use", "id": "toolu_2", "name": "b", "input": {"x": 1}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "r1"},
            {"type": "tool_result", "tool_use_id": "toolu_2", "is_error": true, "content": [
                {"type": "text", "text": "r2"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}]},
            {"type": "text", "text": "and?"}]},
        {"role": "assistant", "content": "done"},
        {"role": "user", "content": "thanks"}]});
    let cases: &[(&str, Edit)] = &[
        ("role", |b| *at(b, "/messages/0/role") = json!("system")),
        ("first-role", |b| {
            list(b, "/messages").insert(0, json!({"role": "assistant", "content": "hello"}))
        }),
        ("roles-alternate", |b| {
            list(b, "/messages").push(json!({"role": "user", "content": "again"}))
        }),
        ("content-empty", |b| {
            *at(b, "/messages/3/content") = json!([])
        }),
        ("content-type", |b| *at(b, "/messages/0/content") = json!(5)),
        (
            "content-type",
            |b| {
                *at(b, "/messages/1/content/0") =
                    json!({"type": "tool_result", "tool_use_id": "toolu_1", "content": "x"})
            },
        ),
        ("text-empty", |b| {
            *at(b, "/messages/1/content/0/text") = json!("")
        }),
        ("image-source", |b| {
            *at(b, "/messages/2/content/1/content/1/source/media_type") = json!("image/bmp")
        }),
        ("tool-use-shape", |b| {
            at(b, "/messages/1/content/1")
                .as_object_mut()
                .map(|o| o.remove("name"));
        }),
        ("tool-use-id", |b| {
            *at(b, "/messages/1/content/1/id") = json!("toolu 1!");
            *at(b, "/messages/2/content/0/tool_use_id") = json!("toolu 1!");
        }),
        ("tool-use-id-duplicate", |b| {
            *at(b, "/messages/1/content/2/id") = json!("toolu_1")
        }),
        ("tool-use-unanswered", |b| {
            list(b, "/messages/2/content").remove(0);
        }),
        ("tool-use-unanswered", |b| {
            list(b, "/messages").truncate(2);
        }),
        ("tool-result-orphan", |b| {
            *at(b, "/messages/2/content/0/tool_use_id") = json!("toolu_9")
        }),
        (
            "tool-result-orphan",
            |b| {
                *at(b, "/messages/4/content") =
                    json!([{"type": "tool_result", "tool_use_id": "toolu_1", "content": "late"}])
            },
        ),
        ("tool-result-duplicate", |b| {
            let dup = at(b, "/messages/2/content/0").clone();
            list(b, "/messages/2/content").insert(1, dup);
        }),
        ("tool-result-order", |b| {
            let text = list(b, "/messages/2/content").pop();
            list(b, "/messages/2/content").insert(0, text.unwrap_or_default());
        }),
        ("tool-result-content", |b| {
            *at(b, "/messages/2/content/1/is_error") = json!("yes")
        }),
        ("tool-result-content", |b| {
            *at(b, "/messages/2/content/1/content/0") =
                json!({"type": "tool_use", "id": "x", "name": "a", "input": {}})
        }),
        ("arguments-type", |b| {
            *at(b, "/messages/1/content/1/input") = json!("{\"x\": 1}")
        }),
    ];
    check(Dialect::Anthropic, &base, cases);
}

#[test]
fn openai_chat_rules() {
    let base = json!({"model": "m", "messages": [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": null, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "a", "arguments": "{}"}},
            {"id": "call_2", "type": "function", "function": {"name": "b", "arguments": "{\"x\":1}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "r1"},
        {"role": "tool", "tool_call_id": "call_2", "content": [{"type": "text", "text": "Error: r2"}]},
        {"role": "user", "content": [
            {"type": "text", "text": "see"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]},
        {"role": "assistant", "content": "done"}]});
    let cases: &[(&str, Edit)] = &[
        ("role", |b| *at(b, "/messages/1/role") = json!("bot")),
        ("content-empty", |b| {
            list(b, "/messages").push(json!({"role": "assistant", "content": null}))
        }),
        ("content-type", |b| *at(b, "/messages/1/content") = json!(5)),
        ("content-type", |b| {
            *at(b, "/messages/5/content/0") = json!({"type": "input_text", "text": "x"})
        }),
        ("image-source", |b| {
            *at(b, "/messages/5/content/1/image_url/url") = json!("file:///etc/a.png")
        }),
        ("tool-use-shape", |b| {
            at(b, "/messages/2/tool_calls/0")
                .as_object_mut()
                .map(|o| o.remove("type"));
        }),
        ("tool-use-id-duplicate", |b| {
            *at(b, "/messages/2/tool_calls/1/id") = json!("call_1")
        }),
        ("arguments-type", |b| {
            *at(b, "/messages/2/tool_calls/1/function/arguments") = json!({"x": 1})
        }),
        ("tool-use-unanswered", |b| {
            list(b, "/messages").remove(4);
        }),
        // Another message between the call and its answers.
        ("tool-use-unanswered", |b| {
            list(b, "/messages").insert(3, json!({"role": "user", "content": "wait"}))
        }),
        ("tool-result-orphan", |b| {
            *at(b, "/messages/3/tool_call_id") = json!("call_9")
        }),
        ("tool-result-orphan", |b| {
            list(b, "/messages")
                .push(json!({"role": "tool", "tool_call_id": "call_1", "content": "late"}))
        }),
        ("tool-result-duplicate", |b| {
            let dup = at(b, "/messages/3").clone();
            list(b, "/messages").insert(4, dup);
        }),
        ("tool-result-content", |b| {
            *at(b, "/messages/4/content") = json!([
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}])
        }),
        ("tool-result-content", |b| {
            *at(b, "/messages/3/content") = json!(null)
        }),
    ];
    check(Dialect::OpenAiChat, &base, cases);
}

#[test]
fn openai_responses_rules() {
    let base = json!({"model": "m", "input": [
        {"type": "message", "role": "user", "content": "hi"},
        {"type": "function_call", "call_id": "call_1", "name": "a", "arguments": "{}"},
        {"type": "function_call", "call_id": "call_2", "name": "b", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call_1", "output": "r1"},
        {"type": "function_call_output", "call_id": "call_2", "output": [
            {"type": "input_text", "text": "r2"},
            {"type": "input_image", "image_url": "data:image/png;base64,AAAA", "detail": "auto"}]},
        {"type": "message", "role": "assistant", "content": "done"},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "x"}]},
        {"type": "reasoning", "id": "rs_1", "summary": []}]});
    let cases: &[(&str, Edit)] = &[
        ("reasoning-shape", |b| {
            at(b, "/input/7")
                .as_object_mut()
                .map(|o| o.remove("summary"));
        }),
        ("role", |b| *at(b, "/input/0/role") = json!("tool")),
        ("content-type", |b| {
            *at(b, "/input/6/content/0") = json!({"type": "output_text", "text": "x"})
        }),
        ("content-type", |b| *at(b, "/input/0/content") = json!(5)),
        ("image-source", |b| {
            at(b, "/input/4/output/1")
                .as_object_mut()
                .map(|o| o.remove("image_url"));
        }),
        ("tool-use-shape", |b| {
            at(b, "/input/1")
                .as_object_mut()
                .map(|o| o.remove("call_id"));
        }),
        ("tool-use-id-duplicate", |b| {
            *at(b, "/input/2/call_id") = json!("call_1")
        }),
        ("arguments-type", |b| {
            *at(b, "/input/1/arguments") = json!({})
        }),
        ("tool-use-unanswered", |b| {
            list(b, "/input").remove(4);
        }),
        // The answer comes after the next user message.
        ("tool-use-unanswered", |b| {
            let out = list(b, "/input").remove(4);
            list(b, "/input").push(out);
        }),
        ("tool-result-orphan", |b| {
            *at(b, "/input/3/call_id") = json!("call_9")
        }),
        // An output before its call.
        ("tool-result-orphan", |b| {
            let out = list(b, "/input").remove(3);
            list(b, "/input").insert(0, out);
        }),
        ("tool-result-duplicate", |b| {
            let dup = at(b, "/input/3").clone();
            list(b, "/input").insert(4, dup);
        }),
        ("tool-result-content", |b| {
            *at(b, "/input/3/output") = json!(5)
        }),
        ("tool-result-content", |b| {
            *at(b, "/input/4/output/0") = json!({"type": "output_text", "text": "x"})
        }),
    ];
    check(Dialect::OpenAiResponses, &base, cases);
}

#[test]
fn gemini_rules() {
    let base = json!({"contents": [
        {"role": "user", "parts": [{"text": "hi"}]},
        {"role": "model", "parts": [
            {"text": "ok"},
            {"functionCall": {"name": "a", "args": {}}},
            {"functionCall": {"name": "b", "args": {"x": 1}}}]},
        {"role": "user", "parts": [
            {"functionResponse": {"name": "a", "response": {"output": "r1"}}},
            {"functionResponse": {"name": "b", "response": {"error": "r2"}}}]},
        {"role": "model", "parts": [{"text": "done"}]},
        {"role": "user", "parts": [{"text": "x"}, {"inlineData": {"mimeType": "image/png", "data": "AAAA"}}]}]});
    let cases: &[(&str, Edit)] = &[
        ("role", |b| *at(b, "/contents/3/role") = json!("assistant")),
        ("first-role", |b| {
            list(b, "/contents").insert(0, json!({"role": "model", "parts": [{"text": "hello"}]}))
        }),
        ("roles-alternate", |b| {
            list(b, "/contents").push(json!({"role": "user", "parts": [{"text": "again"}]}))
        }),
        ("content-empty", |b| *at(b, "/contents/3/parts") = json!([])),
        (
            "gemini-part-shape",
            |b| {
                *at(b, "/contents/0/parts/0") =
                    json!({"text": "x", "functionCall": {"name": "a", "args": {}}})
            },
        ),
        ("gemini-part-shape", |b| {
            *at(b, "/contents/0/parts/0") = json!({})
        }),
        ("content-type", |b| {
            list(b, "/contents/4/parts").push(json!({"functionCall": {"name": "a", "args": {}}}))
        }),
        ("content-type", |b| {
            list(b, "/contents/3/parts")
                .push(json!({"functionResponse": {"name": "a", "response": {}}}))
        }),
        ("image-source", |b| {
            *at(b, "/contents/4/parts/1/inlineData/data") = json!("")
        }),
        ("tool-use-shape", |b| {
            at(b, "/contents/1/parts/1/functionCall")
                .as_object_mut()
                .map(|o| o.remove("name"));
        }),
        ("arguments-type", |b| {
            *at(b, "/contents/1/parts/1/functionCall/args") = json!("x")
        }),
        ("tool-result-content", |b| {
            *at(b, "/contents/2/parts/0/functionResponse/response") = json!("r1")
        }),
        ("tool-use-unanswered", |b| {
            list(b, "/contents/2/parts").pop();
        }),
        ("tool-use-unanswered", |b| {
            list(b, "/contents").truncate(2);
        }),
        ("gemini-response-count", |b| {
            list(b, "/contents/2/parts")
                .push(json!({"functionResponse": {"name": "b", "response": {}}}))
        }),
        ("gemini-response-names", |b| {
            list(b, "/contents/2/parts").reverse()
        }),
        ("tool-result-orphan", |b| {
            list(b, "/contents/4/parts")
                .push(json!({"functionResponse": {"name": "a", "response": {}}}))
        }),
        ("tool-result-orphan", |b| {
            *at(b, "/contents/1/parts/1/functionCall") =
                json!({"id": "fc-1", "name": "a", "args": {}});
            *at(b, "/contents/2/parts/0/functionResponse") =
                json!({"id": "fc-2", "name": "a", "response": {}});
        }),
    ];
    check(Dialect::Gemini, &base, cases);
}

#[test]
fn every_rule_id_is_exercised() {
    // The ids the module documents; each appears in at least one case above.
    let src = include_str!("validator_conversation.rs");
    for rule in [
        "role",
        "first-role",
        "roles-alternate",
        "content-empty",
        "content-type",
        "text-empty",
        "image-source",
        "tool-use-shape",
        "tool-use-id",
        "tool-use-id-duplicate",
        "tool-use-unanswered",
        "tool-result-orphan",
        "tool-result-duplicate",
        "tool-result-order",
        "tool-result-content",
        "arguments-type",
        "gemini-response-count",
        "gemini-response-names",
        "gemini-part-shape",
        "reasoning-shape",
    ] {
        assert!(
            src.matches(&format!("(\"{rule}\", |b|")).count() >= 1,
            "no case for {rule}"
        );
    }
}

#[test]
fn responses_model_text_between_calls_and_outputs_is_fine() {
    // A response's output items [function_call, message] replayed in order, then the outputs.
    let body = json!({"model": "m", "input": [
        {"type": "message", "role": "user", "content": "hi"},
        {"type": "function_call", "call_id": "call_1", "name": "a", "arguments": "{}"},
        {"type": "message", "role": "assistant", "content": "Calling a."},
        {"type": "function_call_output", "call_id": "call_1", "output": "r1"}]});
    let v = validate_request(Dialect::OpenAiResponses, &body);
    assert!(v.is_empty(), "{v:#?}");
}
