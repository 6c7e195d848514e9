//! Conversation rules of each dialect, checked on a whole request body: roles and their order,
//! the content types each role and dialect accepts, and the pairing of every tool use with
//! exactly one result in the place the API requires. Written from the APIs' documented errors,
//! independently of the encoder in switchboard-providers.
//!
//! Rule ids (stable, for tests): `role`, `first-role`, `roles-alternate`, `content-empty`,
//! `content-type`, `text-empty`, `image-source`, `tool-use-shape`, `tool-use-id`,
//! `tool-use-id-duplicate`, `tool-use-unanswered`, `tool-result-orphan`,
//! `tool-result-duplicate`, `tool-result-order`, `tool-result-content`, `arguments-type`,
//! `gemini-response-count`, `gemini-response-names`, `gemini-part-shape`,
//! `gemini-response-parts`, `reasoning-shape`.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::Out;

const IMAGE_TYPES: [&str; 4] = ["image/jpeg", "image/png", "image/gif", "image/webp"];

fn s<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

pub(super) fn items(v: &Value) -> &[Value] {
    v.as_array().map(Vec::as_slice).unwrap_or_default()
}

/// Roles alternate, starting with `first` (Anthropic merges consecutive turns today, Gemini
/// once rejected them; a transcript from our loop never has two in a row, so two in a row is
/// a lost turn).
fn alternation(roles: &[(String, &str)], first: &str, out: &mut Out) {
    if let Some((path, role)) = roles.first()
        && *role != first
    {
        out.push(
            path,
            "first-role",
            format!("the first message must be `{first}`, not `{role}`"),
        );
    }
    for pair in roles.windows(2) {
        if pair[0].1 == pair[1].1 {
            out.push(
                &pair[1].0,
                "roles-alternate",
                format!("two `{}` messages in a row", pair[1].1),
            );
        }
    }
}

// ---------------------------------------------------------------- Anthropic

/// `messages`: user/assistant; string or block content; `tool_use` only from the assistant,
/// answered by `tool_result` blocks (same `tool_use_id`) at the start of the very next user
/// message, once each; no result without a use in the previous message.
pub(super) fn anthropic(body: &Value, out: &mut Out) {
    let messages = items(body.get("messages").unwrap_or(&Value::Null));
    let mut roles = Vec::new();
    let mut all_ids = BTreeSet::new();
    // Tool-use ids of the previous assistant message, waiting for results.
    let mut pending: Vec<String> = Vec::new();
    let mut pending_at = String::new();
    for (i, m) in messages.iter().enumerate() {
        let p = format!("/messages/{i}");
        let role = s(m, "role").unwrap_or("");
        if !matches!(role, "user" | "assistant") {
            out.push(
                &p,
                "role",
                format!("role {role:?} is not user or assistant"),
            );
        }
        roles.push((p.clone(), role));
        let blocks: Vec<&Value> = match m.get("content") {
            Some(Value::String(t)) => {
                if t.is_empty() && i + 1 < messages.len() {
                    out.push(&format!("{p}/content"), "content-empty", "empty content");
                }
                Vec::new()
            }
            Some(Value::Array(a)) => {
                if a.is_empty() {
                    out.push(
                        &format!("{p}/content"),
                        "content-empty",
                        "no content blocks",
                    );
                }
                a.iter().collect()
            }
            _ => {
                out.push(
                    &format!("{p}/content"),
                    "content-type",
                    "content must be a string or a list of blocks",
                );
                Vec::new()
            }
        };
        let mut answered: Vec<String> = Vec::new();
        let mut seen_other = false;
        for (j, b) in blocks.iter().enumerate() {
            let bp = format!("{p}/content/{j}");
            let kind = s(b, "type").unwrap_or("");
            let allowed: &[&str] = if role == "assistant" {
                &["text", "tool_use", "thinking", "redacted_thinking"]
            } else {
                &["text", "image", "tool_result", "document"]
            };
            if !allowed.contains(&kind) {
                out.push(
                    &bp,
                    "content-type",
                    format!("a {role} message cannot hold a {kind:?} block"),
                );
                continue;
            }
            match kind {
                "text" => anthropic_text(b, &bp, out),
                "image" => anthropic_image(b, &bp, out),
                "tool_use" => {
                    let id = s(b, "id");
                    if id.is_none() || s(b, "name").is_none() {
                        out.push(
                            &bp,
                            "tool-use-shape",
                            "tool_use needs string `id` and `name`",
                        );
                    }
                    if !b.get("input").is_some_and(Value::is_object) {
                        out.push(&bp, "arguments-type", "tool_use `input` must be an object");
                    }
                    if let Some(id) = id {
                        if id.is_empty()
                            || !id
                                .chars()
                                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
                        {
                            out.push(
                                &bp,
                                "tool-use-id",
                                format!("tool_use id {id:?} must match ^[a-zA-Z0-9_-]+$"),
                            );
                        }
                        if !all_ids.insert(id.to_string()) {
                            out.push(
                                &bp,
                                "tool-use-id-duplicate",
                                format!("tool_use id {id:?} is used twice"),
                            );
                        }
                    }
                }
                "tool_result" => {
                    if seen_other {
                        out.push(
                            &bp,
                            "tool-result-order",
                            "tool_result blocks must come before any other content",
                        );
                    }
                    let id = s(b, "tool_use_id").unwrap_or("");
                    if !pending.iter().any(|p| p == id) {
                        out.push(
                            &bp,
                            "tool-result-orphan",
                            format!(
                                "tool_result for {id:?}, which the previous message did not use"
                            ),
                        );
                    } else if answered.iter().any(|a| a == id) {
                        out.push(
                            &bp,
                            "tool-result-duplicate",
                            format!("{id:?} is answered twice"),
                        );
                    }
                    answered.push(id.to_string());
                    if b.get("is_error").is_some_and(|e| !e.is_boolean()) {
                        out.push(&bp, "tool-result-content", "is_error must be a boolean");
                    }
                    match b.get("content") {
                        None | Some(Value::String(_)) => {}
                        Some(Value::Array(cs)) => {
                            for (k, c) in cs.iter().enumerate() {
                                let cp = format!("{bp}/content/{k}");
                                match s(c, "type") {
                                    Some("text") => anthropic_text(c, &cp, out),
                                    Some("image") => anthropic_image(c, &cp, out),
                                    Some("document" | "search_result") => {}
                                    other => out.push(
                                        &cp,
                                        "tool-result-content",
                                        format!("a tool_result cannot hold {other:?}"),
                                    ),
                                }
                            }
                        }
                        Some(_) => out.push(
                            &bp,
                            "tool-result-content",
                            "tool_result content must be a string or a list of blocks",
                        ),
                    }
                }
                _ => {}
            }
            if kind != "tool_result" {
                seen_other = true;
            }
        }
        // The previous assistant's uses must all be answered here.
        let unanswered: Vec<&String> = pending.iter().filter(|id| !answered.contains(id)).collect();
        if !unanswered.is_empty() {
            out.push(
                &pending_at,
                "tool-use-unanswered",
                format!("tool_use {unanswered:?} has no tool_result in the next message"),
            );
        }
        pending = if role == "assistant" {
            blocks
                .iter()
                .filter(|b| s(b, "type") == Some("tool_use"))
                .filter_map(|b| s(b, "id").map(str::to_string))
                .collect()
        } else {
            Vec::new()
        };
        pending_at = p;
    }
    if !pending.is_empty() {
        out.push(
            &pending_at,
            "tool-use-unanswered",
            format!("the request ends with tool_use {pending:?} unanswered"),
        );
    }
    alternation(&roles, "user", out);
}

fn anthropic_text(b: &Value, p: &str, out: &mut Out) {
    match s(b, "text") {
        Some("") => out.push(p, "text-empty", "text content blocks must be non-empty"),
        Some(_) => {}
        None => out.push(p, "content-type", "text block without `text`"),
    }
}

fn anthropic_image(b: &Value, p: &str, out: &mut Out) {
    let src = b.get("source").unwrap_or(&Value::Null);
    let ok = match s(src, "type") {
        Some("base64") => {
            s(src, "media_type").is_some_and(|m| IMAGE_TYPES.contains(&m))
                && s(src, "data").is_some_and(|d| !d.is_empty())
        }
        Some("url") => s(src, "url").is_some(),
        _ => false,
    };
    if !ok {
        out.push(
            p,
            "image-source",
            "image needs source {type: base64, media_type: jpeg/png/gif/webp, data} or {type: url, url}",
        );
    }
}

// ---------------------------------------------------------------- OpenAI Chat

/// `messages`: an assistant message with `tool_calls` is followed immediately by one
/// `role: "tool"` message per call id (no other message in between, none twice, none for an
/// id that was not called); tool messages are text only; arguments are JSON strings.
pub(super) fn openai_chat(body: &Value, out: &mut Out) {
    let messages = items(body.get("messages").unwrap_or(&Value::Null));
    let mut pending: Vec<String> = Vec::new();
    let mut pending_at = String::new();
    let mut answered: Vec<String> = Vec::new();
    let mut all_ids = BTreeSet::new();
    for (i, m) in messages.iter().enumerate() {
        let p = format!("/messages/{i}");
        let role = s(m, "role").unwrap_or("");
        if role != "tool" && !pending.is_empty() {
            flush_unanswered(&mut pending, &answered, &pending_at, "tool message", out);
        }
        match role {
            "system" | "developer" => chat_text_content(m, &p, out),
            "user" => match m.get("content") {
                Some(Value::String(_)) => {}
                Some(Value::Array(parts)) => {
                    if parts.is_empty() {
                        out.push(&format!("{p}/content"), "content-empty", "no content parts");
                    }
                    for (j, part) in parts.iter().enumerate() {
                        let pp = format!("{p}/content/{j}");
                        match s(part, "type") {
                            Some("text") => {
                                if s(part, "text").is_none() {
                                    out.push(&pp, "content-type", "text part without `text`");
                                }
                            }
                            Some("image_url") => {
                                let url = part.pointer("/image_url/url").and_then(Value::as_str);
                                if !url.is_some_and(|u| {
                                    u.starts_with("data:image/") || u.starts_with("http")
                                }) {
                                    out.push(
                                        &pp,
                                        "image-source",
                                        "image_url.url must be a data: or http(s) URL",
                                    );
                                }
                            }
                            Some("input_audio" | "file") => {}
                            other => out.push(
                                &pp,
                                "content-type",
                                format!("a user message cannot hold {other:?}"),
                            ),
                        }
                    }
                }
                _ => out.push(
                    &format!("{p}/content"),
                    "content-type",
                    "user content must be a string or a list of parts",
                ),
            },
            "assistant" => {
                let calls = m.get("tool_calls").filter(|c| !c.is_null());
                let has_calls = calls
                    .and_then(Value::as_array)
                    .is_some_and(|c| !c.is_empty());
                match m.get("content") {
                    None | Some(Value::Null) if !has_calls => out.push(
                        &p,
                        "content-empty",
                        "an assistant message needs content or tool_calls",
                    ),
                    None | Some(Value::Null | Value::String(_) | Value::Array(_)) => {}
                    Some(_) => out.push(
                        &format!("{p}/content"),
                        "content-type",
                        "assistant content must be a string, a list or null",
                    ),
                }
                if let Some(calls) = calls {
                    let Some(calls) = calls.as_array() else {
                        out.push(
                            &format!("{p}/tool_calls"),
                            "tool-use-shape",
                            "tool_calls must be a list",
                        );
                        continue;
                    };
                    for (j, c) in calls.iter().enumerate() {
                        let cp = format!("{p}/tool_calls/{j}");
                        let id = s(c, "id");
                        if id.is_none_or(str::is_empty)
                            || s(c, "type") != Some("function")
                            || c.pointer("/function/name")
                                .and_then(Value::as_str)
                                .is_none()
                        {
                            out.push(
                                &cp,
                                "tool-use-shape",
                                "a tool call needs `id`, `type: function` and `function.name`",
                            );
                        }
                        if !c
                            .pointer("/function/arguments")
                            .is_some_and(Value::is_string)
                        {
                            out.push(
                                &cp,
                                "arguments-type",
                                "function.arguments must be a JSON string",
                            );
                        }
                        if let Some(id) = id {
                            if !all_ids.insert(id.to_string()) {
                                out.push(
                                    &cp,
                                    "tool-use-id-duplicate",
                                    format!("tool call id {id:?} is used twice"),
                                );
                            }
                            pending.push(id.to_string());
                        }
                    }
                    pending_at = p.clone();
                    answered.clear();
                }
            }
            "tool" => {
                let id = s(m, "tool_call_id").unwrap_or("");
                if !pending.iter().any(|x| x == id) {
                    out.push(
                        &p,
                        "tool-result-orphan",
                        format!("tool message for {id:?} does not follow an assistant message calling it"),
                    );
                } else if answered.iter().any(|a| a == id) {
                    out.push(
                        &p,
                        "tool-result-duplicate",
                        format!("{id:?} is answered twice"),
                    );
                }
                answered.push(id.to_string());
                match m.get("content") {
                    Some(Value::String(_)) => {}
                    Some(Value::Array(parts)) => {
                        for (j, part) in parts.iter().enumerate() {
                            if s(part, "type") != Some("text") {
                                out.push(
                                    &format!("{p}/content/{j}"),
                                    "tool-result-content",
                                    "tool messages take text only (images are for user messages)",
                                );
                            }
                        }
                    }
                    _ => out.push(
                        &p,
                        "tool-result-content",
                        "a tool message needs string content",
                    ),
                }
            }
            other => out.push(
                &p,
                "role",
                format!("role {other:?} is not system, developer, user, assistant or tool"),
            ),
        }
    }
    flush_unanswered(&mut pending, &answered, &pending_at, "tool message", out);
}

fn flush_unanswered(
    pending: &mut Vec<String>,
    answered: &[String],
    at: &str,
    what: &str,
    out: &mut Out,
) {
    let missing: Vec<&String> = pending.iter().filter(|id| !answered.contains(id)).collect();
    if !missing.is_empty() {
        out.push(
            at,
            "tool-use-unanswered",
            format!("tool calls {missing:?} have no {what} right after them"),
        );
    }
    pending.clear();
}

fn chat_text_content(m: &Value, p: &str, out: &mut Out) {
    match m.get("content") {
        Some(Value::String(_)) => {}
        Some(Value::Array(parts)) if parts.iter().all(|x| s(x, "type") == Some("text")) => {}
        _ => out.push(p, "content-type", "system content must be text"),
    }
}

// ---------------------------------------------------------------- OpenAI Responses

/// `input` items: every `function_call` is answered by exactly one `function_call_output`
/// with its `call_id`, after it and before the next user (or system) message; no output
/// without a call; outputs are strings or `input_text`/`input_image`/`input_file` lists.
pub(super) fn openai_responses(body: &Value, out: &mut Out) {
    let input = match body.get("input") {
        Some(Value::String(_)) => return,
        Some(v) => items(v),
        None => return,
    };
    // call_id -> (path, answered)
    let mut calls: BTreeMap<String, (String, bool)> = BTreeMap::new();
    let mut open: Vec<String> = Vec::new();
    for (i, item) in input.iter().enumerate() {
        let p = format!("/input/{i}");
        let kind = s(item, "type").unwrap_or("message");
        match kind {
            "message" => {
                let role = s(item, "role").unwrap_or("");
                if !matches!(role, "user" | "assistant" | "system" | "developer") {
                    out.push(
                        &p,
                        "role",
                        format!("role {role:?} is not user, assistant, system or developer"),
                    );
                }
                // The model's own text may sit between its calls and their outputs (a
                // response's output items are replayed in order); anything else may not.
                if role != "assistant" && !open.is_empty() {
                    flush_open(&mut open, &calls, out);
                }
                match item.get("content") {
                    Some(Value::String(_)) => {}
                    Some(Value::Array(parts)) => {
                        let allowed: &[&str] = if role == "assistant" {
                            &["output_text", "refusal", "input_text"]
                        } else {
                            &["input_text", "input_image", "input_file"]
                        };
                        for (j, part) in parts.iter().enumerate() {
                            let pp = format!("{p}/content/{j}");
                            let t = s(part, "type").unwrap_or("");
                            if !allowed.contains(&t) {
                                out.push(
                                    &pp,
                                    "content-type",
                                    format!("a {role} message cannot hold {t:?}"),
                                );
                            } else if t == "input_image" {
                                responses_image(part, &pp, out);
                            }
                        }
                    }
                    _ => out.push(
                        &p,
                        "content-type",
                        "message content must be a string or a list",
                    ),
                }
            }
            "function_call" => {
                let id = s(item, "call_id");
                if id.is_none_or(str::is_empty) || s(item, "name").is_none() {
                    out.push(
                        &p,
                        "tool-use-shape",
                        "function_call needs `call_id` and `name`",
                    );
                }
                if !item.get("arguments").is_some_and(Value::is_string) {
                    out.push(
                        &p,
                        "arguments-type",
                        "function_call.arguments must be a JSON string",
                    );
                }
                if let Some(id) = id {
                    if calls.insert(id.to_string(), (p.clone(), false)).is_some() {
                        out.push(
                            &p,
                            "tool-use-id-duplicate",
                            format!("call_id {id:?} is used twice"),
                        );
                    }
                    open.push(id.to_string());
                }
            }
            "function_call_output" => {
                let id = s(item, "call_id").unwrap_or("");
                match calls.get_mut(id) {
                    None => out.push(
                        &p,
                        "tool-result-orphan",
                        format!("no function_call with call_id {id:?} before this output"),
                    ),
                    Some((_, true)) => out.push(
                        &p,
                        "tool-result-duplicate",
                        format!("{id:?} is answered twice"),
                    ),
                    Some((_, done)) => *done = true,
                }
                open.retain(|o| o != id);
                match item.get("output") {
                    Some(Value::String(_)) => {}
                    Some(Value::Array(parts)) => {
                        for (j, part) in parts.iter().enumerate() {
                            let pp = format!("{p}/output/{j}");
                            match s(part, "type") {
                                Some("input_text" | "input_file") => {}
                                Some("input_image") => responses_image(part, &pp, out),
                                other => out.push(
                                    &pp,
                                    "tool-result-content",
                                    format!("an output cannot hold {other:?}"),
                                ),
                            }
                        }
                    }
                    _ => out.push(
                        &p,
                        "tool-result-content",
                        "output must be a string or a list of input parts",
                    ),
                }
            }
            // A reasoning item sent back needs its `summary`, even an empty one.
            "reasoning" if !item.get("summary").is_some_and(Value::is_array) => {
                out.push(
                    &p,
                    "reasoning-shape",
                    "reasoning item needs a `summary` list",
                );
            }
            _ => {}
        }
    }
    flush_open(&mut open, &calls, out);
}

fn flush_open(open: &mut Vec<String>, calls: &BTreeMap<String, (String, bool)>, out: &mut Out) {
    for id in open.drain(..) {
        let at = calls.get(&id).map(|(p, _)| p.as_str()).unwrap_or("/input");
        out.push(
            at,
            "tool-use-unanswered",
            format!("function_call {id:?} has no function_call_output before the next turn"),
        );
    }
}

fn responses_image(part: &Value, p: &str, out: &mut Out) {
    let ok = s(part, "image_url")
        .is_some_and(|u| u.starts_with("data:image/") || u.starts_with("http"))
        || s(part, "file_id").is_some();
    if !ok {
        out.push(
            p,
            "image-source",
            "input_image needs image_url (data: or http) or file_id",
        );
    }
}

// ---------------------------------------------------------------- Gemini

/// `functionResponse.parts` (Gemini 3's multimodal function responses): a non-empty list of
/// `{inlineData: {mimeType, data, displayName?}}` with an image type the API documents for
/// function responses; `fileData` is not supported by the Gemini API there; display names
/// are unique within the response.
fn gemini_response_parts(media: &Value, p: &str, out: &mut Out) {
    const RULE: &str = "gemini-response-parts";
    let Some(list) = media.as_array().filter(|l| !l.is_empty()) else {
        out.push(p, RULE, "functionResponse.parts must be a non-empty list");
        return;
    };
    let mut names = BTreeSet::new();
    for (k, item) in list.iter().enumerate() {
        let ip = format!("{p}/{k}");
        let keys: Vec<&str> = item
            .as_object()
            .map(|o| o.keys().map(String::as_str).collect())
            .unwrap_or_default();
        if keys != ["inlineData"] {
            let why = if keys.contains(&"fileData") {
                "fileData is not supported by the Gemini API in function responses; send inlineData"
                    .to_string()
            } else {
                format!("a function response part holds exactly inlineData; found {keys:?}")
            };
            out.push(&ip, RULE, why);
            continue;
        }
        let d = &item["inlineData"];
        if !s(d, "mimeType").is_some_and(|m| ["image/png", "image/jpeg", "image/webp"].contains(&m))
        {
            out.push(
                &ip,
                RULE,
                format!(
                    "inlineData.mimeType {:?} is not an image type Gemini takes in function responses (png, jpeg, webp)",
                    d.get("mimeType")
                ),
            );
        }
        if s(d, "data").is_none_or(str::is_empty) {
            out.push(&ip, RULE, "inlineData needs base64 data");
        }
        match d.get("displayName") {
            None => {}
            Some(Value::String(n)) if names.insert(n.clone()) => {}
            Some(other) => out.push(
                &ip,
                RULE,
                format!("displayName {other} must be a string, unique within the response"),
            ),
        }
    }
}

const GEMINI_DATA: [&str; 7] = [
    "text",
    "inlineData",
    "fileData",
    "functionCall",
    "functionResponse",
    "executableCode",
    "codeExecutionResult",
];

/// `contents`: roles `user`/`model`, alternating from `user`; each part holds exactly one
/// kind of data; `functionCall` only from the model, `functionResponse` only from the user;
/// a model turn with calls is followed by a user turn with as many responses, names in the
/// same order (and ids matching when given); `response` and `args` are objects.
pub(super) fn gemini(body: &Value, out: &mut Out) {
    let contents = items(body.get("contents").unwrap_or(&Value::Null));
    let mut roles = Vec::new();
    // (name, id) of the previous model turn's calls.
    let mut pending: Vec<(String, Option<String>)> = Vec::new();
    let mut pending_at = String::new();
    for (i, c) in contents.iter().enumerate() {
        let p = format!("/contents/{i}");
        let role = s(c, "role").unwrap_or("");
        if !matches!(role, "user" | "model") {
            out.push(&p, "role", format!("role {role:?} is not user or model"));
        }
        roles.push((p.clone(), role));
        let parts = items(c.get("parts").unwrap_or(&Value::Null));
        if parts.is_empty() {
            out.push(
                &format!("{p}/parts"),
                "content-empty",
                "a content needs at least one part",
            );
        }
        let mut calls = Vec::new();
        let mut responses = Vec::new();
        for (j, part) in parts.iter().enumerate() {
            let pp = format!("{p}/parts/{j}");
            let kinds: Vec<&str> = GEMINI_DATA
                .iter()
                .copied()
                .filter(|k| part.get(*k).is_some())
                .collect();
            if kinds.len() != 1 {
                out.push(&pp, "gemini-part-shape", format!("a part holds exactly one of text, inlineData, functionCall, functionResponse, ...; found {kinds:?}"));
                continue;
            }
            match kinds[0] {
                "text" if !part.get("text").is_some_and(Value::is_string) => {
                    out.push(&pp, "content-type", "text must be a string");
                }
                "inlineData" => {
                    let d = &part["inlineData"];
                    if s(d, "mimeType").is_none() || s(d, "data").is_none_or(str::is_empty) {
                        out.push(&pp, "image-source", "inlineData needs mimeType and data");
                    }
                }
                "functionCall" => {
                    let f = &part["functionCall"];
                    if role != "model" {
                        out.push(
                            &pp,
                            "content-type",
                            "functionCall parts come only from the model",
                        );
                    }
                    let Some(name) = s(f, "name") else {
                        out.push(&pp, "tool-use-shape", "functionCall needs a name");
                        continue;
                    };
                    if f.get("args").is_some_and(|a| !a.is_object()) {
                        out.push(&pp, "arguments-type", "functionCall.args must be an object");
                    }
                    calls.push((name.to_string(), s(f, "id").map(str::to_string)));
                }
                "functionResponse" => {
                    let f = &part["functionResponse"];
                    if role != "user" {
                        out.push(
                            &pp,
                            "content-type",
                            "functionResponse parts belong in user turns",
                        );
                    }
                    if !f.get("response").is_some_and(Value::is_object) {
                        out.push(
                            &pp,
                            "tool-result-content",
                            "functionResponse.response must be an object",
                        );
                    }
                    if let Some(media) = f.get("parts") {
                        gemini_response_parts(media, &format!("{pp}/functionResponse/parts"), out);
                    }
                    let Some(name) = s(f, "name") else {
                        out.push(&pp, "tool-use-shape", "functionResponse needs a name");
                        continue;
                    };
                    responses.push((pp.clone(), name.to_string(), s(f, "id").map(str::to_string)));
                }
                _ => {}
            }
        }
        if pending.is_empty() && !responses.is_empty() {
            out.push(
                &responses[0].0,
                "tool-result-orphan",
                "functionResponse without functionCall parts in the previous model turn",
            );
        } else if !pending.is_empty() {
            if responses.len() != pending.len() {
                out.push(
                    &pending_at,
                    if responses.len() < pending.len() {
                        "tool-use-unanswered"
                    } else {
                        "gemini-response-count"
                    },
                    format!(
                        "{} functionCall parts answered by {} functionResponse parts in the next turn",
                        pending.len(),
                        responses.len()
                    ),
                );
            }
            for ((rp, name, id), (want, want_id)) in responses.iter().zip(&pending) {
                if name != want {
                    out.push(rp, "gemini-response-names", format!("functionResponse {name:?} answers functionCall {want:?}: names must match in order"));
                }
                if let (Some(id), Some(want_id)) = (id, want_id)
                    && id != want_id
                {
                    out.push(
                        rp,
                        "tool-result-orphan",
                        format!("functionResponse id {id:?} does not match call id {want_id:?}"),
                    );
                }
            }
        }
        pending = calls;
        pending_at = p;
    }
    if !pending.is_empty() {
        out.push(
            &pending_at,
            "tool-use-unanswered",
            "the request ends with functionCall parts unanswered",
        );
    }
    alternation(&roles, "user", out);
}
