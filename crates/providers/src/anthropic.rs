//! Anthropic Messages: schema rules (§2.1, §2.5 "Anthropic non-strict"), the request body
//! (§3.1) with `tool_use`/`tool_result` blocks, and the response and stream decoding.

use serde::Serialize;
use serde_json::{Map, Value};
use switchboard_core::Dialect;

use crate::conversation::{Message, Part, ResultPart};
use crate::error::ProviderError;
use crate::render::{RequestParts, ToolSpec};
use crate::reply::{Reply, Stop, Usage, count_at, error_message, settle_stop, str_at};
use crate::schema::{self, Log};
use crate::stream::{Assembly, StreamEvent};

/// Common pass, then the root rules, then a local check against the draft 2020-12 metaschema:
/// Anthropic rejects the whole request ("JSON schema is invalid. It must match JSON Schema
/// draft 2020-12") when one tool's schema fails it, so such a tool is excluded instead.
/// `$ref`/`$defs` are accepted as they are. Returns whether the root was wrapped.
pub(crate) fn sanitize(schema: &mut Value, log: &mut Log) -> Result<bool, ProviderError> {
    // Draft-04 tuple `items: [..]` is invalid in 2020-12; `prefixItems` keeps its meaning.
    schema::repair(schema, true, log);
    let wrapped = schema::root_object(schema, log);
    schema::metaschema(schema, "anthropic-metaschema")?;
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
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    output_config: Option<Value>,
}

#[derive(Serialize)]
struct WireMessage<'a> {
    role: &'static str,
    content: Content<'a>,
}

/// A lone text stays a string (the shorter form); anything else is a list of blocks.
#[derive(Serialize)]
#[serde(untagged)]
enum Content<'a> {
    Text(&'a str),
    Blocks(Vec<Block<'a>>),
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Block<'a> {
    Text {
        text: &'a str,
    },
    Image {
        source: Source<'a>,
    },
    ToolUse {
        id: &'a str,
        name: &'a str,
        input: &'a Value,
    },
    ToolResult {
        tool_use_id: &'a str,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        content: Vec<Block<'a>>,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
    },
    /// A `thinking` or `redacted_thinking` block sent back exactly as it came: the API checks
    /// its signature and refuses a block that was changed.
    #[serde(untagged)]
    Verbatim(&'a Value),
}

#[derive(Serialize)]
struct Source<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    media_type: &'a str,
    data: &'a str,
}

#[derive(Serialize)]
struct WireTool<'a> {
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<&'a str>,
    input_schema: &'a Value,
}

/// The `POST /v1/messages` body: `system` is a top-level string, `max_tokens` is required.
/// A reasoning effort sets `thinking` (see [`crate::reasoning_effort_fields`]); the API then
/// refuses a temperature, which is left out.
pub(crate) fn render(parts: &RequestParts) -> Value {
    let plan = parts
        .reasoning_effort
        .as_deref()
        .and_then(|e| crate::effort::plan(D, &parts.model, e, parts.max_tokens).ok())
        .unwrap_or(crate::effort::Plan::Off);
    let (thinking, output_config, max_tokens) = plan.anthropic(
        parts
            .max_tokens
            .unwrap_or(crate::render::DEFAULT_MAX_TOKENS),
    );
    let body = Body {
        model: &parts.model,
        max_tokens,
        system: parts.system.as_deref().filter(|s| !s.is_empty()),
        messages: parts.messages.iter().map(message).collect(),
        tools: parts.tools.iter().map(tool).collect(),
        stream: parts.stream,
        temperature: parts.temperature.filter(|_| !plan.thinks()),
        thinking,
        output_config,
    };
    crate::render::to_value(&body)
}

static EMPTY_INPUT: std::sync::LazyLock<Value> =
    std::sync::LazyLock::new(|| Value::Object(Map::new()));

/// Tool results come first in a user message (the API requires it); empty text blocks are
/// left out (rejected: "text content blocks must be non-empty"); a tool use whose input was
/// not an object (cut by `max_tokens`) is replayed with `{}`, the only shape the API takes.
fn message(m: &Message) -> WireMessage<'_> {
    if let [Part::Text(text)] = m.parts.as_slice() {
        return WireMessage {
            role: m.role.as_str(),
            content: Content::Text(text),
        };
    }
    let (results, rest): (Vec<&Part>, Vec<&Part>) = m
        .parts
        .iter()
        .partition(|p| matches!(p, Part::ToolResult { .. }));
    let blocks = results
        .into_iter()
        .chain(rest)
        .filter_map(|p| match p {
            Part::Text(text) if text.is_empty() => None,
            Part::Text(text) => Some(Block::Text { text }),
            Part::Image { media_type, data } => Some(image(media_type, data)),
            Part::Reasoning {
                dialect: D, data, ..
            } if thinking_block(data) => Some(Block::Verbatim(data)),
            // Another provider's reasoning, or a block this API would not take.
            Part::Reasoning { .. } => None,
            Part::ToolUse { id, name, input } => Some(Block::ToolUse {
                id,
                name,
                input: if input.is_object() {
                    input
                } else {
                    &EMPTY_INPUT
                },
            }),
            Part::ToolResult {
                id,
                content,
                is_error,
                ..
            } => Some(Block::ToolResult {
                tool_use_id: id,
                content: content
                    .iter()
                    .filter_map(|c| match c {
                        ResultPart::Text(text) if text.is_empty() => None,
                        ResultPart::Text(text) => Some(Block::Text { text }),
                        ResultPart::Image { media_type, data } => Some(image(media_type, data)),
                    })
                    .collect(),
                is_error: *is_error,
            }),
        })
        .collect();
    WireMessage {
        role: m.role.as_str(),
        content: Content::Blocks(blocks),
    }
}

/// A block the API gave as the model's reasoning: `thinking` or `redacted_thinking`.
fn thinking_block(block: &Value) -> bool {
    matches!(
        str_at(block, "/type"),
        Some("thinking" | "redacted_thinking")
    )
}

/// The words of a reasoning block (a redacted one has none).
fn thinking_text(block: &Value) -> String {
    str_at(block, "/thinking").unwrap_or("").to_string()
}

fn image<'a>(media_type: &'a str, data: &'a str) -> Block<'a> {
    Block::Image {
        source: Source {
            kind: "base64",
            media_type,
            data,
        },
    }
}

fn tool(t: &ToolSpec) -> WireTool<'_> {
    WireTool {
        name: &t.name,
        description: t.description.as_deref().filter(|d| !d.is_empty()),
        input_schema: &t.schema,
    }
}

const D: Dialect = Dialect::Anthropic;

/// A `message` response: `content` blocks (text, tool_use, and thinking kept whole to go
/// back; others skipped), `stop_reason`, `usage`.
pub(crate) fn decode(v: &Value) -> Result<Reply, ProviderError> {
    if str_at(v, "/type") == Some("error") {
        return Err(api_error(v));
    }
    let blocks = v
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| ProviderError::decode(D, "no `content` array in the message"))?;
    let mut parts = Vec::new();
    for (i, b) in blocks.iter().enumerate() {
        match str_at(b, "/type") {
            Some("text") => {
                let text = str_at(b, "/text").ok_or_else(|| {
                    ProviderError::decode(D, format!("content[{i}]: text block without `text`"))
                })?;
                if !text.is_empty() {
                    parts.push(Part::Text(text.to_string()));
                }
            }
            Some("tool_use") => {
                let (Some(id), Some(name)) = (str_at(b, "/id"), str_at(b, "/name")) else {
                    return Err(ProviderError::decode(
                        D,
                        format!("content[{i}]: tool_use block without `id` or `name`"),
                    ));
                };
                let input = match b.get("input") {
                    Some(o @ Value::Object(_)) => o.clone(),
                    None | Some(Value::Null) => Value::Object(Map::new()),
                    Some(other) => Value::String(other.to_string()),
                };
                parts.push(Part::ToolUse {
                    id: id.into(),
                    name: name.into(),
                    input,
                });
            }
            Some("thinking" | "redacted_thinking") => parts.push(Part::Reasoning {
                dialect: D,
                text: thinking_text(b),
                data: b.clone(),
            }),
            _ => {}
        }
    }
    let stop = stop_reason(str_at(v, "/stop_reason"));
    Ok(Reply {
        stop: settle_stop(stop, &parts),
        parts,
        usage: usage(v.get("usage"), &Usage::default()),
    })
}

fn stop_reason(reason: Option<&str>) -> Stop {
    match reason {
        Some("end_turn" | "stop_sequence") | None => Stop::EndTurn,
        Some("tool_use") => Stop::ToolUse,
        Some("max_tokens") => Stop::MaxTokens,
        Some("refusal") => Stop::Refusal,
        Some(other) => Stop::Other(other.into()),
    }
}

/// Usage fields present in `u` override `base` (a stream's `message_delta` repeats or
/// updates what `message_start` said). `input_tokens` is the uncached remainder, so cache
/// reads and writes are added to it.
fn usage(u: Option<&Value>, base: &Usage) -> Usage {
    let Some(u) = u else {
        return base.clone();
    };
    let read = count_at(u, "/cache_read_input_tokens").or(base.cache_read_tokens);
    let write = count_at(u, "/cache_creation_input_tokens").or(base.cache_write_tokens);
    let uncached = count_at(u, "/input_tokens");
    let input = match uncached {
        // Counts come from the provider: saturate rather than overflow on absurd values.
        Some(n) => n
            .saturating_add(read.unwrap_or(0))
            .saturating_add(write.unwrap_or(0)),
        None => base.input_tokens,
    };
    Usage {
        input_tokens: input,
        output_tokens: count_at(u, "/output_tokens").unwrap_or(base.output_tokens),
        cache_read_tokens: read,
        cache_write_tokens: write,
        reasoning_tokens: None,
    }
}

fn api_error(v: &Value) -> ProviderError {
    ProviderError::Api {
        dialect: D,
        message: error_message(v).unwrap_or_else(|| v.to_string()),
    }
}

/// One stream event; the data's `type` names it (the SSE `event:` name is the same).
pub(crate) fn feed(
    acc: &mut Assembly,
    event: Option<&str>,
    v: &Value,
    out: &mut Vec<StreamEvent>,
) -> Result<(), ProviderError> {
    let kind = str_at(v, "/type").or(event).unwrap_or("");
    let index = || {
        count_at(v, "/index")
            .map(|i| i.to_string())
            .ok_or_else(|| ProviderError::decode(D, format!("{kind} event without `index`")))
    };
    match kind {
        "message_start" => acc.usage = usage(v.pointer("/message/usage"), &acc.usage),
        "content_block_start" => {
            let key = index()?;
            let block = v.get("content_block").unwrap_or(&Value::Null);
            match str_at(block, "/type") {
                Some("text") => acc.text(&key, str_at(block, "/text").unwrap_or(""), out),
                Some("tool_use") => {
                    let (Some(id), Some(name)) = (str_at(block, "/id"), str_at(block, "/name"))
                    else {
                        return Err(ProviderError::decode(
                            D,
                            "content_block_start: tool_use without `id` or `name`",
                        ));
                    };
                    // The start carries `input: {}`; the real input follows as JSON deltas.
                    acc.tool(&key, id, name, "", out);
                }
                // A thinking block starts empty and grows by deltas; a redacted one comes
                // whole.
                Some("thinking" | "redacted_thinking") => {
                    let text = thinking_text(block);
                    if !text.is_empty() {
                        out.push(StreamEvent::ReasoningDelta(text.clone()));
                    }
                    acc.reasoning(&key, text, block.clone())
                }
                _ => {}
            }
        }
        "content_block_delta" => {
            let key = index()?;
            match str_at(v, "/delta/type") {
                Some("text_delta") => acc.text(&key, str_at(v, "/delta/text").unwrap_or(""), out),
                Some(kind @ ("thinking_delta" | "signature_delta")) => {
                    let (field, piece) = match kind {
                        "thinking_delta" => ("thinking", str_at(v, "/delta/thinking")),
                        _ => ("signature", str_at(v, "/delta/signature")),
                    };
                    let piece = piece.unwrap_or("");
                    if !acc.reasoning_field(&key, field, piece, field == "thinking") {
                        return Err(ProviderError::decode(
                            D,
                            format!("{kind} for block {key}, which is not a thinking block"),
                        ));
                    }
                    if field == "thinking" && !piece.is_empty() {
                        out.push(StreamEvent::ReasoningDelta(piece.to_string()));
                    }
                }
                Some("input_json_delta") => {
                    let part = str_at(v, "/delta/partial_json").unwrap_or("");
                    if !acc.args(&key, part) {
                        return Err(ProviderError::decode(
                            D,
                            format!("input_json_delta for block {key}, which is not a tool use"),
                        ));
                    }
                }
                _ => {}
            }
        }
        "message_delta" => {
            acc.stop = Some(stop_reason(str_at(v, "/delta/stop_reason")));
            acc.usage = usage(v.get("usage"), &acc.usage);
        }
        "message_stop" => acc.done = true,
        "error" => return Err(api_error(v)),
        // ping, content_block_stop, and event types added later.
        _ => {}
    }
    Ok(())
}
