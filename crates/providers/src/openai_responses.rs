//! OpenAI Responses: the same schema rules as Chat Completions (§2.2), but `strict` defaults to
//! true on this API, so it is always sent explicitly; tools are flat and the system prompt is
//! `instructions`. Tool uses are `function_call` input items and results
//! `function_call_output` items, paired by `call_id`.

use serde::Serialize;
use serde_json::{Value, json};
use switchboard_core::Dialect;

use std::borrow::Cow;

use crate::conversation::{Part, ResultPart, arguments_text, parse_arguments};
use crate::error::ProviderError;
use crate::openai_chat;
use crate::render::{RequestParts, ToolSpec};
use crate::reply::{Reply, Stop, Usage, count_at, error_message, settle_stop, str_at};
use crate::schema::Log;
use crate::stream::{Assembly, Block, StreamEvent};

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
    input: Vec<Item<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<WireTool<'a>>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_output_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning: Option<Reasoning<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt_cache_key: Option<&'a str>,
}

#[derive(Serialize)]
struct Reasoning<'a> {
    effort: &'a str,
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Item<'a> {
    Message {
        role: &'static str,
        content: Content<'a>,
    },
    FunctionCall {
        call_id: &'a str,
        name: &'a str,
        arguments: String,
    },
    FunctionCallOutput {
        call_id: &'a str,
        output: Content<'a>,
    },
}

/// Text alone stays a string; with images it is a list of input parts.
#[derive(Serialize)]
#[serde(untagged)]
enum Content<'a> {
    Text(String),
    Parts(Vec<InputPart<'a>>),
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum InputPart<'a> {
    InputText {
        text: Cow<'a, str>,
    },
    InputImage {
        image_url: String,
        detail: &'static str,
    },
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

/// The `POST /v1/responses` body. Each message becomes input items in order: runs of text
/// and images a `message`, each tool use a `function_call` (no `id`, so no reasoning item is
/// required with it), each tool result a `function_call_output` (a string, or `input_text`
/// and `input_image` parts when it has images; an error's text is prefixed `Error: `).
pub(crate) fn render(parts: &RequestParts) -> Value {
    let mut input = Vec::new();
    for m in &parts.messages {
        let role = m.role.as_str();
        let mut run: Vec<InputPart> = Vec::new();
        let mut results = Vec::new();
        for p in &m.parts {
            match p {
                Part::Text(text) => run.push(InputPart::InputText {
                    text: Cow::Borrowed(text),
                }),
                Part::Image { media_type, data } => run.push(InputPart::InputImage {
                    image_url: data_url(media_type, data),
                    detail: "auto",
                }),
                Part::ToolUse {
                    id,
                    name,
                    input: args,
                } => {
                    flush(role, &mut run, &mut input);
                    input.push(Item::FunctionCall {
                        call_id: id,
                        name,
                        arguments: arguments_text(args),
                    });
                }
                Part::ToolResult {
                    id,
                    content,
                    is_error,
                    ..
                } => results.push(Item::FunctionCallOutput {
                    call_id: id,
                    output: output(content, *is_error),
                }),
                // Reasoning items are not sent back: the calls go without their item `id`s,
                // and a reasoning item without the item that followed it is refused.
                Part::Reasoning { .. } => {}
            }
        }
        // Results answer the previous turn's calls, so they go before this turn's text.
        input.extend(results);
        flush(role, &mut run, &mut input);
    }
    let body = Body {
        model: &parts.model,
        instructions: parts.system.as_deref().filter(|s| !s.is_empty()),
        input,
        tools: parts.tools.iter().map(tool).collect(),
        stream: parts.stream,
        max_output_tokens: parts.max_tokens,
        temperature: parts.temperature,
        reasoning: parts
            .reasoning_effort
            .as_deref()
            .map(|effort| Reasoning { effort }),
        prompt_cache_key: parts.cache_key.as_deref(),
    };
    crate::render::to_value(&body)
}

fn data_url(media_type: &str, data: &str) -> String {
    format!("data:{media_type};base64,{data}")
}

fn flush<'a>(role: &'static str, run: &mut Vec<InputPart<'a>>, out: &mut Vec<Item<'a>>) {
    if run.is_empty() {
        return;
    }
    let parts = std::mem::take(run);
    out.push(Item::Message {
        role,
        content: content(parts),
    });
}

fn content(parts: Vec<InputPart<'_>>) -> Content<'_> {
    if parts
        .iter()
        .all(|p| matches!(p, InputPart::InputText { .. }))
    {
        Content::Text(
            parts
                .iter()
                .filter_map(|p| match p {
                    InputPart::InputText { text } => Some(text.as_ref()),
                    InputPart::InputImage { .. } => None,
                })
                .collect::<Vec<_>>()
                .join("\n"),
        )
    } else {
        Content::Parts(parts)
    }
}

fn output(content: &[ResultPart], is_error: bool) -> Content<'_> {
    let mut parts: Vec<InputPart> = content
        .iter()
        .map(|c| match c {
            ResultPart::Text(text) => InputPart::InputText {
                text: Cow::Borrowed(text),
            },
            ResultPart::Image { media_type, data } => InputPart::InputImage {
                image_url: data_url(media_type, data),
                detail: "auto",
            },
        })
        .collect();
    if is_error {
        match parts.first_mut() {
            Some(InputPart::InputText { text }) if text.starts_with("Error") => {}
            Some(InputPart::InputText { text }) => *text = Cow::Owned(format!("Error: {text}")),
            _ => parts.insert(
                0,
                InputPart::InputText {
                    text: Cow::Borrowed("Error"),
                },
            ),
        }
    }
    self::content(parts)
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

const D: Dialect = Dialect::OpenAiResponses;

/// A `response` object: `output` items (`message` with `output_text`/`refusal` parts,
/// `function_call` with `call_id`, `name`, `arguments`; reasoning and others skipped),
/// `status` with `incomplete_details.reason`, and `usage`.
pub(crate) fn decode(v: &Value) -> Result<Reply, ProviderError> {
    if let Some(e) = v.get("error").filter(|e| !e.is_null()) {
        return Err(ProviderError::Api {
            dialect: D,
            message: error_message(&json!({ "error": e })).unwrap_or_else(|| e.to_string()),
        });
    }
    let items = v
        .get("output")
        .and_then(Value::as_array)
        .ok_or_else(|| ProviderError::decode(D, "no `output` array in the response"))?;
    let mut parts = Vec::new();
    let mut refused = false;
    for (i, item) in items.iter().enumerate() {
        match str_at(item, "/type") {
            Some("message") => {
                for c in item
                    .get("content")
                    .and_then(Value::as_array)
                    .map(Vec::as_slice)
                    .unwrap_or_default()
                {
                    match str_at(c, "/type") {
                        Some("output_text") => {
                            if let Some(t) = str_at(c, "/text").filter(|t| !t.is_empty()) {
                                parts.push(Part::Text(t.into()));
                            }
                        }
                        Some("refusal") => {
                            refused = true;
                            if let Some(t) = str_at(c, "/refusal") {
                                parts.push(Part::Text(t.into()));
                            }
                        }
                        _ => {}
                    }
                }
            }
            Some("function_call") => parts.push(function_call(item, i)?),
            _ => {}
        }
    }
    let stop = if refused { Stop::Refusal } else { status(v) };
    Ok(Reply {
        stop: settle_stop(stop, &parts),
        parts,
        usage: usage(v.get("usage")),
    })
}

fn function_call(item: &Value, i: usize) -> Result<Part, ProviderError> {
    let (Some(call_id), Some(name)) = (str_at(item, "/call_id"), str_at(item, "/name")) else {
        return Err(ProviderError::decode(
            D,
            format!("output[{i}]: function_call without `call_id` or `name`"),
        ));
    };
    Ok(Part::ToolUse {
        id: call_id.into(),
        name: name.into(),
        input: parse_arguments(str_at(item, "/arguments").unwrap_or("")),
    })
}

fn status(v: &Value) -> Stop {
    match str_at(v, "/status") {
        Some("completed") | None => Stop::EndTurn,
        Some("incomplete") => match str_at(v, "/incomplete_details/reason") {
            Some("max_output_tokens") => Stop::MaxTokens,
            Some("content_filter") => Stop::Refusal,
            Some(other) => Stop::Other(other.into()),
            None => Stop::Other("incomplete".into()),
        },
        Some(other) => Stop::Other(other.into()),
    }
}

fn usage(u: Option<&Value>) -> Usage {
    let Some(u) = u.filter(|u| u.is_object()) else {
        return Usage::default();
    };
    Usage {
        input_tokens: count_at(u, "/input_tokens").unwrap_or(0),
        output_tokens: count_at(u, "/output_tokens").unwrap_or(0),
        cache_read_tokens: count_at(u, "/input_tokens_details/cached_tokens"),
        cache_write_tokens: None,
    }
}

/// One stream event (named by the data's `type`): `response.output_item.added` starts a
/// function call, `response.output_text.delta` and `response.function_call_arguments.delta`
/// add to the item at `output_index`, `response.function_call_arguments.done` gives the
/// whole arguments, and `response.completed`/`incomplete`/`failed` end it with the status
/// and usage.
pub(crate) fn feed(
    acc: &mut Assembly,
    event: Option<&str>,
    v: &Value,
    out: &mut Vec<StreamEvent>,
) -> Result<(), ProviderError> {
    let kind = str_at(v, "/type").or(event).unwrap_or("");
    let key = || count_at(v, "/output_index").map(|i| format!("out{i}"));
    match kind {
        "response.output_item.added" => {
            let item = v.get("item").unwrap_or(&Value::Null);
            if str_at(item, "/type") == Some("function_call") {
                let key = key().ok_or_else(|| {
                    ProviderError::decode(D, "output_item.added without `output_index`")
                })?;
                let (Some(id), Some(name)) = (str_at(item, "/call_id"), str_at(item, "/name"))
                else {
                    return Err(ProviderError::decode(
                        D,
                        "function_call item without `call_id` or `name`",
                    ));
                };
                acc.tool(
                    &key,
                    id,
                    name,
                    str_at(item, "/arguments").unwrap_or(""),
                    out,
                );
            }
        }
        "response.output_text.delta" | "response.refusal.delta" => {
            if kind == "response.refusal.delta" {
                acc.refused = true;
            }
            let key = key().unwrap_or_else(|| "text".into());
            acc.text(&key, str_at(v, "/delta").unwrap_or(""), out);
        }
        "response.function_call_arguments.delta" => {
            if let Some(key) = key() {
                acc.args(&key, str_at(v, "/delta").unwrap_or(""));
            }
        }
        "response.function_call_arguments.done" => {
            if let (Some(key), Some(all)) = (key(), str_at(v, "/arguments"))
                && let Some(Block::Tool { args, .. }) = acc.block(&key)
            {
                *args = all.to_string();
            }
        }
        "response.completed" | "response.incomplete" | "response.failed" => {
            let response = v.get("response").unwrap_or(&Value::Null);
            if let Some(e) = response.get("error").filter(|e| !e.is_null()) {
                return Err(ProviderError::Api {
                    dialect: D,
                    message: error_message(&json!({ "error": e })).unwrap_or_else(|| e.to_string()),
                });
            }
            acc.usage = usage(response.get("usage"));
            acc.stop = Some(if acc.refused {
                Stop::Refusal
            } else {
                status(response)
            });
            acc.done = true;
        }
        "error" => {
            return Err(ProviderError::Api {
                dialect: D,
                message: error_message(&json!({ "error": v }))
                    .or_else(|| error_message(v))
                    .unwrap_or_else(|| v.to_string()),
            });
        }
        _ => {}
    }
    Ok(())
}
