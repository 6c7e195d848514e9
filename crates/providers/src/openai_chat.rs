//! OpenAI Chat Completions: schema rules (§2.2, §2.5 "OpenAI Chat non-strict" and strict) and
//! the request body.

use serde::Serialize;
use serde_json::{Value, json};

use crate::error::ProviderError;
use crate::refs::{self, RefMode};
use crate::render::{RequestParts, ToolSpec};
use crate::schema::{self, Log, join, walk_pre};
use crate::strict;

/// Common pass for both OpenAI APIs, then strict conversion when asked. Returns
/// (root wrapped, strict applied, why strict fell back).
pub(crate) fn sanitize(
    schema: &mut Value,
    want_strict: bool,
    log: &mut Log,
) -> Result<(bool, bool, Option<String>), ProviderError> {
    // OpenAI resolves `$ref` but drops sibling keywords next to it; inline those.
    refs::inline(schema, RefMode::WithSiblings, log);
    schema::repair(schema, false, log);
    let wrapped = schema::root_object(schema, log);
    // "In context=('properties', 'x'), array schema missing items".
    schema::array_items(schema, &json!({}), log);
    // "In context=(), object schema missing properties".
    walk_pre(schema, "", &mut |node, path| {
        if node.get("type") == Some(&json!("object")) && !node.contains_key("properties") {
            node.insert("properties".into(), json!({}));
            log.record(
                &join(path, "properties"),
                "object-properties",
                None,
                Some(json!({})),
            );
        }
    });
    if !want_strict {
        return Ok((wrapped, false, None));
    }
    let mut converted = schema.clone();
    let mut strict_log = Log::default();
    match strict::convert(&mut converted, &mut strict_log) {
        Ok(()) => {
            *schema = converted;
            log.changes.extend(strict_log.changes);
            Ok((wrapped, true, None))
        }
        Err(reason) => Ok((wrapped, false, Some(reason))),
    }
}

#[derive(Serialize)]
struct Body<'a> {
    model: &'a str,
    messages: Vec<WireMessage<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<WireTool<'a>>,
}

#[derive(Serialize)]
struct WireMessage<'a> {
    role: &'static str,
    content: &'a str,
}

#[derive(Serialize)]
struct WireTool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: Function<'a>,
}

#[derive(Serialize)]
struct Function<'a> {
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<&'a str>,
    parameters: &'a Value,
    strict: bool,
}

/// The `POST /v1/chat/completions` body: the system prompt is the first message; `strict` is
/// always sent explicitly.
pub(crate) fn render(parts: &RequestParts) -> Value {
    let mut messages = Vec::new();
    if let Some(system) = parts.system.as_deref().filter(|s| !s.is_empty()) {
        messages.push(WireMessage {
            role: "system",
            content: system,
        });
    }
    messages.extend(parts.messages.iter().map(|m| WireMessage {
        role: m.role.as_str(),
        content: &m.text,
    }));
    let body = Body {
        model: &parts.model,
        messages,
        tools: parts.tools.iter().map(tool).collect(),
    };
    crate::render::to_value(&body)
}

fn tool(t: &ToolSpec) -> WireTool<'_> {
    WireTool {
        kind: "function",
        function: Function {
            name: &t.name,
            description: t.description.as_deref().filter(|d| !d.is_empty()),
            parameters: &t.schema,
            strict: t.strict,
        },
    }
}
