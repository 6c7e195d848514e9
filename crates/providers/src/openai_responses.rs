//! OpenAI Responses: the same schema rules as Chat Completions (§2.2), but `strict` defaults to
//! true on this API, so it is always sent explicitly; tools are flat and the system prompt is
//! `instructions`. Tool uses are `function_call` input items and results
//! `function_call_output` items, paired by `call_id`. A reply that reasoned keeps its output
//! items as they came, and within the turn under way they go back in its place, ids and all.

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
    /// An output item of a reply that reasoned, sent back exactly as it came: the API pairs
    /// each reasoning item with the item after it by their ids.
    #[serde(untagged)]
    Verbatim(&'a Value),
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
///
/// A reply of the turn under way (since the last message the user wrote) that reasoned goes
/// back as the output items it came as ([`replayed`]): its reasoning items, each followed by
/// the item that followed it, with their ids, so the model keeps its reasoning through a tool
/// loop. Earlier turns' reasoning goes no more (the API drops it from the model's context).
pub(crate) fn render(parts: &RequestParts) -> Value {
    let mut input = Vec::new();
    let turn_start = crate::conversation::turn_start(&parts.messages);
    for (i, m) in parts.messages.iter().enumerate() {
        let role = m.role.as_str();
        if i > turn_start
            && let Some(items) = replayed(&m.parts)
        {
            input.extend(items.iter().map(Item::Verbatim));
            continue;
        }
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
                // Outside a replayed reply, reasoning is not sent back: the calls go without
                // their item `id`s, and a reasoning item without the item that followed it is
                // refused.
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

/// The output items of a reply that reasoned, when its tool uses are still the calls among
/// them (same ids, names and arguments) and its text is theirs; otherwise the reply goes back
/// as parts.
fn replayed(parts: &[Part]) -> Option<&[Value]> {
    let output = parts.iter().find_map(|p| match p {
        Part::Reasoning {
            dialect: D, data, ..
        } => data.get("output").and_then(Value::as_array),
        _ => None,
    })?;
    let calls = output
        .iter()
        .filter(|item| str_at(item, "/type") == Some("function_call"));
    let uses = parts.iter().filter_map(|p| match p {
        Part::ToolUse { id, name, input } => Some((id, name, input)),
        _ => None,
    });
    let same = calls.clone().count() == uses.clone().count()
        && calls.zip(uses).all(|(call, (id, name, input))| {
            str_at(call, "/call_id") == Some(id.as_str())
                && str_at(call, "/name") == Some(name.as_str())
                && parse_arguments(str_at(call, "/arguments").unwrap_or("")) == *input
        });
    let said: String = output
        .iter()
        .filter(|item| str_at(item, "/type") == Some("message"))
        .flat_map(|item| {
            item.get("content")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
        })
        .filter_map(|c| match str_at(c, "/type") {
            Some("output_text") => str_at(c, "/text"),
            Some("refusal") => str_at(c, "/refusal"),
            _ => None,
        })
        .collect();
    (same && said == crate::conversation::text_of(parts)).then_some(output.as_slice())
}

/// The reasoning of a response whose `output` holds reasoning items: its reasoning, message and
/// function call items kept as they came, to go back within the turn (see [`render`]); the
/// words are the items' summaries, or their reasoning text when a server shows it.
fn reasoning_part(output: &[Value]) -> Option<Part> {
    if !output
        .iter()
        .any(|item| str_at(item, "/type") == Some("reasoning"))
    {
        return None;
    }
    let kept: Vec<Value> = output
        .iter()
        .filter(|item| {
            matches!(
                str_at(item, "/type"),
                Some("reasoning" | "message" | "function_call")
            )
        })
        .cloned()
        .collect();
    let mut words: Vec<&str> = Vec::new();
    for item in kept
        .iter()
        .filter(|item| str_at(item, "/type") == Some("reasoning"))
    {
        let pieces = |key: &str, kind: &str| -> Vec<&str> {
            item.get(key)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter(|piece| str_at(piece, "/type") == Some(kind))
                .filter_map(|piece| str_at(piece, "/text"))
                .filter(|text| !text.is_empty())
                .collect()
        };
        let summary = pieces("summary", "summary_text");
        if summary.is_empty() {
            words.extend(pieces("content", "reasoning_text"));
        } else {
            words.extend(summary);
        }
    }
    Some(Part::Reasoning {
        dialect: D,
        text: words.join("\n\n"),
        data: json!({ "output": kept }),
    })
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
/// `function_call` with `call_id`, `name`, `arguments`; reasoning kept with the items as in
/// [`reasoning_part`]; others skipped), `status` with `incomplete_details.reason`, and `usage`.
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
    let mut parts: Vec<Part> = reasoning_part(items).into_iter().collect();
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
        reasoning_tokens: count_at(u, "/output_tokens_details/reasoning_tokens"),
    }
}

/// One stream event (named by the data's `type`): `response.output_item.added` starts a
/// function call, `response.output_text.delta` and `response.function_call_arguments.delta`
/// add to the item at `output_index`, `response.function_call_arguments.done` gives the
/// whole arguments, reasoning summary and text deltas are shown, `response.output_item.done`
/// gives each whole item, and `response.completed`/`incomplete`/`failed` end it with the
/// status and usage (and, when it reasoned, the reasoning with the response's items).
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
        "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
            if let Some(delta) = str_at(v, "/delta").filter(|d| !d.is_empty()) {
                out.push(StreamEvent::ReasoningDelta(delta.to_string()));
            }
        }
        "response.output_item.done" => {
            if let Some(item) = v.get("item").filter(|item| item.is_object()) {
                acc.items.push(item.clone());
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
            // The whole response's items when it gives them, else those streamed one by one.
            let items = std::mem::take(&mut acc.items);
            let output = match response.get("output").and_then(Value::as_array) {
                Some(output) if !output.is_empty() => output.as_slice(),
                _ => items.as_slice(),
            };
            if let Some(Part::Reasoning { text, data, .. }) = reasoning_part(output) {
                acc.blocks
                    .insert(0, ("reasoning".into(), Block::Reasoning { text, data }));
            }
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
