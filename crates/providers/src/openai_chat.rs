//! OpenAI Chat Completions: schema rules (§2.2, §2.5 "OpenAI Chat non-strict" and strict), the
//! request body with assistant `tool_calls` and `role: "tool"` results, and the response and
//! stream decoding (also for Ollama, llama.cpp, vLLM and LM Studio).

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Value, json};
use switchboard_core::Dialect;

use crate::conversation::{Part, arguments_text, parse_arguments, result_text};
use crate::error::ProviderError;
use crate::refs::{self, RefMode};
use crate::render::{RequestParts, ToolSpec};
use crate::reply::{Reply, Stop, Usage, count_at, error_message, settle_stop, str_at};
use crate::schema::{self, Log, join, types, walk_pre};
use crate::stream::{Assembly, StreamEvent};
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
        // `type: ["object"]` is the same type, and gets the same answer.
        if types(node) == ["object"] && !node.contains_key("properties") {
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
    refs::drop_unused_defs(&mut converted, &mut strict_log);
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
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream_options: Option<StreamOptions>,
    /// OpenAI's limit field: `max_tokens` is deprecated there and refused by its reasoning
    /// models ("Use 'max_completion_tokens' instead").
    #[serde(skip_serializing_if = "Option::is_none")]
    max_completion_tokens: Option<u32>,
    /// The field OpenAI-compatible servers read (llama.cpp, Ollama, vLLM, LM Studio).
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning_effort: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt_cache_key: Option<&'a str>,
}

#[derive(Serialize)]
struct StreamOptions {
    include_usage: bool,
}

#[derive(Serialize)]
struct WireMessage<'a> {
    role: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    content: Option<Content<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<ToolCall<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_call_id: Option<&'a str>,
    /// The model's reasoning sent back under the fields it came in (see [`REASONING_FIELDS`]).
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    reasoning: Option<BTreeMap<&'static str, &'a Value>>,
}

/// The message fields OpenAI-compatible servers put a reasoning model's thinking in: DeepSeek,
/// Kimi, Qwen and llama.cpp call it `reasoning_content`; vLLM, Groq, Ollama and OpenRouter
/// `reasoning`. The words are the first of these a message has.
const REASONING_FIELDS: [&str; 2] = ["reasoning_content", "reasoning"];

/// OpenRouter's structured reasoning (`reasoning.text`, `reasoning.summary`,
/// `reasoning.encrypted` items, with signatures): what carries Claude's thinking and Gemini's
/// thought signatures through its OpenAI-format API, to be sent back with the tool calls.
const DETAILS: &str = "reasoning_details";

/// Where a reasoning part keeps each tool call's `extra_content` by call id: Google's
/// OpenAI-compatible endpoint puts a Gemini 3 thought signature there
/// (`extra_content.google.thought_signature`), which must come back on the call.
const CALL_EXTRA: &str = "tool_call_extra";

/// A text-only message stays a string; a message with images is a list of parts.
#[derive(Serialize)]
#[serde(untagged)]
enum Content<'a> {
    Text(String),
    Parts(Vec<ContentPart<'a>>),
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum ContentPart<'a> {
    Text { text: &'a str },
    ImageUrl { image_url: ImageUrl },
}

#[derive(Serialize)]
struct ImageUrl {
    url: String,
}

#[derive(Serialize)]
struct ToolCall<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: Call<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    extra_content: Option<&'a Value>,
}

#[derive(Serialize)]
struct Call<'a> {
    name: &'a str,
    arguments: String,
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
/// always sent explicitly. An assistant message carries its tool uses as `tool_calls`
/// (arguments as a JSON string); a user message's tool results become one `role: "tool"`
/// message each, in order, before any other user content. Tool messages are text only:
/// images become a note, and an error result's text is prefixed `Error: ` (the format has no
/// error flag).
pub(crate) fn render(parts: &RequestParts) -> Value {
    let mut messages = Vec::new();
    if let Some(system) = parts.system.as_deref().filter(|s| !s.is_empty()) {
        messages.push(text_message("system", system.to_string()));
    }
    // The reasoning of the turn under way (since the last message the user wrote) goes back:
    // DeepSeek's thinking mode refuses a tool loop without it, and asks that earlier turns'
    // be left out.
    let turn_start = crate::conversation::turn_start(&parts.messages);
    for (i, m) in parts.messages.iter().enumerate() {
        match m.role {
            crate::Role::Assistant => messages.push(assistant(&m.parts, i > turn_start)),
            crate::Role::User => user(&m.parts, &mut messages),
        }
    }
    let body = Body {
        model: &parts.model,
        messages,
        tools: parts.tools.iter().map(tool).collect(),
        stream: parts.stream,
        stream_options: parts.stream.then_some(StreamOptions {
            include_usage: true,
        }),
        max_completion_tokens: parts.max_tokens.filter(|_| !parts.compatible_server),
        max_tokens: parts.max_tokens.filter(|_| parts.compatible_server),
        temperature: parts.temperature,
        reasoning_effort: parts.reasoning_effort.as_deref(),
        prompt_cache_key: parts.cache_key.as_deref(),
    };
    crate::render::to_value(&body)
}

fn text_message(role: &'static str, text: String) -> WireMessage<'static> {
    WireMessage {
        role,
        content: Some(Content::Text(text)),
        tool_calls: Vec::new(),
        tool_call_id: None,
        reasoning: None,
    }
}

/// What this dialect gave with an assistant message as its reasoning, if anything.
fn reasoning_data(parts: &[Part]) -> Option<&Value> {
    parts.iter().find_map(|p| match p {
        Part::Reasoning {
            dialect: D, data, ..
        } => Some(data),
        _ => None,
    })
}

/// The reasoning message fields to send back, under the names they came in; empty ones are
/// left out (Kimi refuses an empty `reasoning_content`).
fn reasoning_fields(data: &Value) -> Option<BTreeMap<&'static str, &Value>> {
    let fields: BTreeMap<&'static str, &Value> = REASONING_FIELDS
        .iter()
        .chain(&[DETAILS])
        .filter_map(|field| {
            let v = data.get(*field)?;
            let empty = match v {
                Value::String(s) => s.is_empty(),
                Value::Array(a) => a.is_empty(),
                _ => true,
            };
            (!empty).then_some((*field, v))
        })
        .collect();
    (!fields.is_empty()).then_some(fields)
}

/// The reasoning of an assistant message: its fields (see [`REASONING_FIELDS`], [`DETAILS`])
/// and its tool calls' `extra_content` (see [`CALL_EXTRA`]), kept to go back; the words are
/// the first reasoning field's.
fn reasoning_part(message: &Value) -> Option<Part> {
    let mut data = serde_json::Map::new();
    for field in REASONING_FIELDS {
        if let Some(text) = str_at(message, &format!("/{field}")).filter(|t| !t.is_empty()) {
            data.insert(field.into(), json!(text));
        }
    }
    if let Some(details) = message
        .get(DETAILS)
        .filter(|d| d.as_array().is_some_and(|a| !a.is_empty()))
    {
        data.insert(DETAILS.into(), details.clone());
    }
    let extra: serde_json::Map<String, Value> = message
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| {
            Some((
                str_at(c, "/id")?.to_string(),
                c.get("extra_content")?.clone(),
            ))
        })
        .collect();
    if !extra.is_empty() {
        data.insert(CALL_EXTRA.into(), Value::Object(extra));
    }
    if data.is_empty() {
        return None;
    }
    let text = REASONING_FIELDS
        .iter()
        .find_map(|f| data.get(*f).and_then(Value::as_str))
        .unwrap_or("")
        .to_string();
    Some(Part::Reasoning {
        dialect: D,
        text,
        data: Value::Object(data),
    })
}

/// The fields of the reasoning block a stream is assembling, started when it is first needed.
fn streamed_reasoning(acc: &mut Assembly) -> Option<&mut serde_json::Map<String, Value>> {
    if !matches!(
        acc.block("reasoning"),
        Some(crate::stream::Block::Reasoning { .. })
    ) {
        acc.reasoning("reasoning", String::new(), json!({}));
    }
    match acc.block("reasoning") {
        Some(crate::stream::Block::Reasoning { data, .. }) => data.as_object_mut(),
        _ => None,
    }
}

/// Merge one streamed `reasoning_details` item into `details`: the pieces of one item (same
/// `index` and `type`) join their text, and later fields (a signature) are set.
fn merge_detail(details: &mut Vec<Value>, item: &Value) {
    let same = |d: &&mut Value| {
        item.get("index").is_some()
            && d.get("index") == item.get("index")
            && d.get("type") == item.get("type")
    };
    match (details.iter_mut().find(same), item.as_object()) {
        (Some(Value::Object(have)), Some(fields)) => {
            for (k, v) in fields {
                match (have.get_mut(k), v) {
                    (Some(Value::String(a)), Value::String(b))
                        if matches!(k.as_str(), "text" | "summary" | "data") =>
                    {
                        a.push_str(b)
                    }
                    _ => {
                        have.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        _ => details.push(item.clone()),
    }
}

fn assistant(parts: &[Part], with_reasoning: bool) -> WireMessage<'_> {
    let reasoning = reasoning_data(parts).filter(|_| with_reasoning);
    let text: String = parts
        .iter()
        .filter_map(|p| match p {
            Part::Text(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    let tool_calls: Vec<ToolCall> = parts
        .iter()
        .filter_map(|p| match p {
            Part::ToolUse { id, name, input } => Some(ToolCall {
                id,
                kind: "function",
                function: Call {
                    name,
                    arguments: arguments_text(input),
                },
                extra_content: reasoning.and_then(|r| r.get(CALL_EXTRA)?.get(id.as_str())),
            }),
            _ => None,
        })
        .collect();
    WireMessage {
        role: "assistant",
        // "Required unless tool_calls is specified."
        content: (!text.is_empty() || tool_calls.is_empty()).then_some(Content::Text(text)),
        tool_calls,
        tool_call_id: None,
        reasoning: reasoning.and_then(reasoning_fields),
    }
}

fn user<'a>(parts: &'a [Part], out: &mut Vec<WireMessage<'a>>) {
    let mut rest = Vec::new();
    for p in parts {
        match p {
            Part::ToolResult {
                id,
                content,
                is_error,
                ..
            } => {
                let mut text = result_text(content);
                if *is_error && !text.starts_with("Error") {
                    text.insert_str(0, "Error: ");
                }
                out.push(WireMessage {
                    role: "tool",
                    content: Some(Content::Text(text)),
                    tool_calls: Vec::new(),
                    tool_call_id: Some(id),
                    reasoning: None,
                });
            }
            Part::Text(text) => rest.push(ContentPart::Text { text }),
            Part::Image { media_type, data } => rest.push(ContentPart::ImageUrl {
                image_url: ImageUrl {
                    url: format!("data:{media_type};base64,{data}"),
                },
            }),
            // A tool use or reasoning in a user message has no place in this format.
            Part::ToolUse { .. } | Part::Reasoning { .. } => {}
        }
    }
    let content = match rest.as_slice() {
        [] => return,
        [ContentPart::Text { text }] => Content::Text(text.to_string()),
        _ if rest.iter().all(|p| matches!(p, ContentPart::Text { .. })) => Content::Text(
            rest.iter()
                .filter_map(|p| match p {
                    ContentPart::Text { text } => Some(*text),
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        _ => Content::Parts(rest),
    };
    out.push(WireMessage {
        role: "user",
        content: Some(content),
        tool_calls: Vec::new(),
        tool_call_id: None,
        reasoning: None,
    });
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

const D: Dialect = Dialect::OpenAiChat;

/// A `chat.completion`: the first choice's `message` (`content`, `refusal`, `tool_calls`,
/// and a reasoning model's `reasoning_content` or `reasoning`), its `finish_reason`, and
/// `usage`. Tool calls without an id (some local servers) get
/// `call_N`.
pub(crate) fn decode(v: &Value) -> Result<Reply, ProviderError> {
    if v.get("error").is_some_and(|e| !e.is_null()) {
        return Err(ProviderError::Api {
            dialect: D,
            message: error_message(v).unwrap_or_else(|| v.to_string()),
        });
    }
    let choice = v
        .pointer("/choices/0")
        .ok_or_else(|| ProviderError::decode(D, "no `choices[0]` in the completion"))?;
    let message = choice
        .get("message")
        .ok_or_else(|| ProviderError::decode(D, "choices[0] has no `message`"))?;
    let mut parts: Vec<Part> = reasoning_part(message).into_iter().collect();
    match message.get("content") {
        Some(Value::String(text)) if !text.is_empty() => parts.push(Part::Text(text.clone())),
        // Some compatible servers answer with a list of parts.
        Some(Value::Array(list)) => {
            let text: String = list.iter().filter_map(|p| str_at(p, "/text")).collect();
            if !text.is_empty() {
                parts.push(Part::Text(text));
            }
        }
        _ => {}
    }
    let refusal = str_at(message, "/refusal").filter(|t| !t.is_empty());
    if let Some(text) = refusal {
        parts.push(Part::Text(text.into()));
    }
    if let Some(calls) = message.get("tool_calls").filter(|c| !c.is_null()) {
        let calls = calls
            .as_array()
            .ok_or_else(|| ProviderError::decode(D, "`tool_calls` is not an array"))?;
        for (i, call) in calls.iter().enumerate() {
            let name = str_at(call, "/function/name").ok_or_else(|| {
                ProviderError::decode(D, format!("tool_calls[{i}] has no `function.name`"))
            })?;
            let id = str_at(call, "/id")
                .filter(|id| !id.is_empty())
                .map_or_else(|| format!("call_{i}"), str::to_string);
            let input = match call.pointer("/function/arguments") {
                Some(Value::String(raw)) => parse_arguments(raw),
                // Some servers send the arguments as an object.
                Some(o @ Value::Object(_)) => o.clone(),
                None | Some(Value::Null) => json!({}),
                Some(other) => Value::String(other.to_string()),
            };
            parts.push(Part::ToolUse {
                id,
                name: name.into(),
                input,
            });
        }
    }
    let stop = if refusal.is_some() {
        Stop::Refusal
    } else {
        finish_reason(str_at(choice, "/finish_reason"))
    };
    Ok(Reply {
        stop: settle_stop(stop, &parts),
        parts,
        usage: usage(v.get("usage")),
    })
}

fn finish_reason(reason: Option<&str>) -> Stop {
    match reason {
        Some("stop") | None => Stop::EndTurn,
        Some("tool_calls" | "function_call") => Stop::ToolUse,
        Some("length") => Stop::MaxTokens,
        Some("content_filter") => Stop::Refusal,
        Some(other) => Stop::Other(other.into()),
    }
}

fn usage(u: Option<&Value>) -> Usage {
    let Some(u) = u.filter(|u| u.is_object()) else {
        return Usage::default();
    };
    Usage {
        input_tokens: count_at(u, "/prompt_tokens").unwrap_or(0),
        output_tokens: count_at(u, "/completion_tokens").unwrap_or(0),
        cache_read_tokens: count_at(u, "/prompt_tokens_details/cached_tokens"),
        cache_write_tokens: None,
        reasoning_tokens: count_at(u, "/completion_tokens_details/reasoning_tokens"),
    }
}

/// One `chat.completion.chunk`: text in `choices[0].delta.content`, tool calls by
/// `delta.tool_calls[].index` (the first chunk of a call has its id and name, later ones
/// argument pieces), `finish_reason`, and with `include_usage` a last chunk with `usage`
/// and no choices.
pub(crate) fn feed(
    acc: &mut Assembly,
    v: &Value,
    out: &mut Vec<StreamEvent>,
) -> Result<(), ProviderError> {
    if v.get("error").is_some_and(|e| !e.is_null()) {
        return Err(ProviderError::Api {
            dialect: D,
            message: error_message(v).unwrap_or_else(|| v.to_string()),
        });
    }
    if let Some(u) = v.get("usage").filter(|u| u.is_object()) {
        acc.usage = usage(Some(u));
    }
    let Some(choice) = v.pointer("/choices/0") else {
        return Ok(());
    };
    // One field per delta: servers moving from one name to the other may send both.
    let reasoning = REASONING_FIELDS.iter().find_map(|field| {
        let piece = str_at(choice, &format!("/delta/{field}")).filter(|p| !p.is_empty())?;
        Some((*field, piece))
    });
    if let Some((field, piece)) = reasoning {
        streamed_reasoning(acc);
        acc.reasoning_field("reasoning", field, piece, true);
        out.push(StreamEvent::ReasoningDelta(piece.to_string()));
    }
    if let Some(items) = choice
        .pointer(&format!("/delta/{DETAILS}"))
        .and_then(Value::as_array)
        .filter(|a| !a.is_empty())
        && let Some(data) = streamed_reasoning(acc)
    {
        let details = data
            .entry(DETAILS)
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(details) = details {
            for item in items {
                merge_detail(details, item);
            }
        }
    }
    if let Some(text) = str_at(choice, "/delta/content") {
        acc.text("text", text, out);
    }
    if let Some(text) = str_at(choice, "/delta/refusal") {
        acc.text("text", text, out);
        acc.refused = true;
    }
    if let Some(calls) = choice
        .pointer("/delta/tool_calls")
        .and_then(Value::as_array)
    {
        for (n, call) in calls.iter().enumerate() {
            let index = count_at(call, "/index").unwrap_or(n as u64);
            let mut key = format!("call{index}");
            let args = str_at(call, "/function/arguments").unwrap_or("");
            let new_id = str_at(call, "/id").filter(|id| !id.is_empty());
            let id = match acc.block(&key) {
                Some(crate::stream::Block::Tool { id, .. })
                    // Servers that leave out `index` start each new call with its own id.
                    if !(new_id.is_some_and(|n| n != id)
                        && str_at(call, "/function/name").is_some()) =>
                {
                    let id = id.clone();
                    acc.args(&key, args);
                    id
                }
                existing => {
                    if existing.is_some() {
                        key = format!("call{index}.{}", acc.blocks.len());
                    }
                    let name = str_at(call, "/function/name").ok_or_else(|| {
                        ProviderError::decode(D, format!("tool call {index} starts without a name"))
                    })?;
                    let id = new_id.map_or_else(|| format!("call_{index}"), str::to_string);
                    acc.tool(&key, &id, name, args, out);
                    id
                }
            };
            if let Some(extra) = call.get("extra_content").filter(|e| !e.is_null())
                && let Some(data) = streamed_reasoning(acc)
                && let Value::Object(by_call) = data
                    .entry(CALL_EXTRA)
                    .or_insert_with(|| Value::Object(serde_json::Map::new()))
            {
                by_call.insert(id, extra.clone());
            }
        }
    }
    if let Some(reason) = str_at(choice, "/finish_reason") {
        acc.stop = Some(if acc.refused {
            Stop::Refusal
        } else {
            finish_reason(Some(reason))
        });
    }
    Ok(())
}
