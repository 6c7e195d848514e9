//! OpenAI Responses: the same schema rules as Chat Completions (§2.2), but `strict` defaults to
//! true on this API, so it is always sent explicitly; tools are flat and the system prompt is
//! `instructions`.

use serde::Serialize;
use serde_json::Value;

use crate::error::ProviderError;
use crate::openai_chat;
use crate::render::{RequestParts, ToolSpec};
use crate::schema::Log;

/// Same as Chat Completions: "If you omit strict, … Responses requests will normalize your
/// schema into strict mode", so non-converted schemas go out with `strict: false`.
pub(crate) fn sanitize(
    schema: &mut Value,
    want_strict: bool,
    log: &mut Log,
) -> Result<(bool, bool, Option<String>), ProviderError> {
    openai_chat::sanitize(schema, want_strict, log)
}

#[derive(Serialize)]
struct Body<'a> {
    model: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    instructions: Option<&'a str>,
    input: Vec<InputMessage<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<WireTool<'a>>,
}

#[derive(Serialize)]
struct InputMessage<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    role: &'static str,
    content: &'a str,
}

#[derive(Serialize)]
struct WireTool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<&'a str>,
    parameters: &'a Value,
    strict: bool,
}

/// The `POST /v1/responses` body.
pub(crate) fn render(parts: &RequestParts) -> Value {
    let body = Body {
        model: &parts.model,
        instructions: parts.system.as_deref().filter(|s| !s.is_empty()),
        input: parts
            .messages
            .iter()
            .map(|m| InputMessage {
                kind: "message",
                role: m.role.as_str(),
                content: &m.text,
            })
            .collect(),
        tools: parts.tools.iter().map(tool).collect(),
    };
    crate::render::to_value(&body)
}

fn tool(t: &ToolSpec) -> WireTool<'_> {
    WireTool {
        kind: "function",
        name: &t.name,
        description: t.description.as_deref().filter(|d| !d.is_empty()),
        parameters: &t.schema,
        strict: t.strict,
    }
}
