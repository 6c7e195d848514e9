//! Anthropic Messages: schema rules (§2.1, §2.5 "Anthropic non-strict") and the request body (§3.1).

use serde::Serialize;
use serde_json::Value;

use crate::error::ProviderError;
use crate::render::{Message, RequestParts, ToolSpec};
use crate::schema::{self, Log};

/// Common pass, then the root rules, then a local check against the draft 2020-12 metaschema:
/// Anthropic rejects the whole request ("JSON schema is invalid. It must match JSON Schema
/// draft 2020-12") when one tool's schema fails it, so such a tool is excluded instead.
/// `$ref`/`$defs` are accepted as they are. Returns whether the root was wrapped.
pub(crate) fn sanitize(schema: &mut Value, log: &mut Log) -> Result<bool, ProviderError> {
    // Draft-04 tuple `items: [..]` is invalid in 2020-12; `prefixItems` keeps its meaning.
    schema::repair(schema, true, log);
    let wrapped = schema::root_object(schema, log);
    if let Err(e) = jsonschema::draft202012::meta::validate(schema) {
        return Err(ProviderError::Unacceptable {
            rule: "anthropic-metaschema",
            pointer: e.schema_path().to_string(),
            message: format!("not a valid draft 2020-12 schema: {e}"),
        });
    }
    Ok(wrapped)
}

#[derive(Serialize)]
struct Body<'a> {
    model: &'a str,
    max_tokens: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    system: Option<&'a str>,
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
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<&'a str>,
    input_schema: &'a Value,
}

/// The `POST /v1/messages` body: `system` is a top-level string, `max_tokens` is required.
pub(crate) fn render(parts: &RequestParts) -> Value {
    let body = Body {
        model: &parts.model,
        max_tokens: parts.max_tokens,
        system: parts.system.as_deref().filter(|s| !s.is_empty()),
        messages: parts.messages.iter().map(message).collect(),
        tools: parts.tools.iter().map(tool).collect(),
    };
    crate::render::to_value(&body)
}

fn message(m: &Message) -> WireMessage<'_> {
    WireMessage {
        role: m.role.as_str(),
        content: &m.text,
    }
}

fn tool(t: &ToolSpec) -> WireTool<'_> {
    WireTool {
        name: &t.name,
        description: t.description.as_deref().filter(|d| !d.is_empty()),
        input_schema: &t.schema,
    }
}
