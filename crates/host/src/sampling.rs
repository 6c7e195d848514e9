//! Sampling: a server's request, while one of its tools runs, for the host's model to write a
//! message (MCP `sampling/createMessage`). [`SamplingRequest::parse`] reads the request into
//! the provider-neutral conversation the model clients send, with the tools the server offers
//! the model for it (2025-11-25's sampling with tools: the server runs them, the model only asks
//! for them); [`SamplingRequest::prepare`] names those tools for the provider and sanitizes their
//! schemas; [`result`] turns the model's reply into the answer the server gets. The request goes
//! to the session's own model, only when the [`crate::dispatch::Approver`] allows it.

use std::collections::{BTreeMap, BTreeSet};

use futures::future::BoxFuture;
use serde_json::{Value, json};
use switchboard_core::names::NameMap;
use switchboard_core::{CallResult, Dialect};
use switchboard_providers::{
    Message, Part, Reply, RequestParts, ResultPart, Role, SanitizeOptions, Stop, ToolChoice,
    ToolSpec, Usage, apply_tool_choice, prepare_tool, render_request,
};

use crate::agent::add_usage;
use crate::client::ProviderClient;
use crate::config::SamplingPolicy;
use crate::shape::{self, ShapeOptions};

/// Sends a server's sampling request to a model. The agent's is its own provider and model.
pub trait Sampler: Send + Sync {
    /// The model's reply, or why there is none (for the server). Tool uses in it carry the
    /// server's own tool names.
    fn sample<'a>(&'a self, request: &'a SamplingRequest) -> BoxFuture<'a, Result<Reply, String>>;
    /// The model's id, for the server's answer.
    fn model(&self) -> &str;
}

/// A tool the server offers the model for one sampling request. The server runs it; the model
/// only asks for it.
#[derive(Clone, Debug, PartialEq)]
pub struct SamplingTool {
    /// The server's name for it.
    pub name: String,
    /// What the model reads about it.
    pub description: Option<String>,
    /// Its `inputSchema`, as the server sent it.
    pub input_schema: Value,
}

/// What a server asked the model, read from `sampling/createMessage`'s `params`.
#[derive(Clone, Debug, PartialEq)]
pub struct SamplingRequest {
    /// Configured server name.
    pub server: String,
    /// The tool whose call it came during.
    pub tool: String,
    /// The server's system prompt.
    pub system: Option<String>,
    /// The conversation to answer. Tool uses and results in it carry the server's tool names.
    pub messages: Vec<Message>,
    /// `maxTokens`: the most the answer may have.
    pub max_tokens: u32,
    /// `temperature`, when the server gives one (a number from 0 to 2).
    pub temperature: Option<f64>,
    /// `tools`: what the model may ask the server to run (none when the server offers none).
    pub tools: Vec<SamplingTool>,
    /// `toolChoice.mode`: `auto` (the default), `required` ([`ToolChoice::Any`]) or `none`.
    pub tool_choice: ToolChoice,
    /// The model the config names for this server's requests (its entry's `sampling.model`);
    /// `None`: the session's. Not from the server: its `modelPreferences` are only hints.
    pub model: Option<String>,
}

/// A sampling request made ready for one provider: its tools under names that provider takes,
/// with schemas it accepts, and the conversation using those names.
#[derive(Clone, Debug, PartialEq)]
pub struct PreparedSampling {
    /// The conversation, tool names public.
    pub messages: Vec<Message>,
    /// The tools to send.
    pub tools: Vec<ToolSpec>,
    /// The tool choice to send (`auto` when no tool could be sent).
    pub tool_choice: ToolChoice,
    /// Tools left out, each with why (a schema the provider cannot take).
    pub excluded: Vec<(String, String)>,
    /// Public name → the server's name.
    names: BTreeMap<String, String>,
}

impl PreparedSampling {
    /// The model's reply with the server's names in its tool uses. A name the request did not
    /// give (the model made one up) stays as the model wrote it, for the server to refuse.
    pub fn restore(&self, mut reply: Reply) -> Reply {
        for part in &mut reply.parts {
            if let Part::ToolUse { name, .. } = part
                && let Some(own) = self.names.get(name.as_str())
            {
                *name = own.clone();
            }
        }
        reply
    }
}

impl SamplingRequest {
    /// Read a request's `params`; an error says why it cannot be sent (for the server).
    pub fn parse(server: &str, tool: &str, params: &Value) -> Result<SamplingRequest, String> {
        let max_tokens = params
            .get("maxTokens")
            .and_then(Value::as_u64)
            .filter(|n| *n > 0)
            .ok_or("`maxTokens` must be a positive whole number")?;
        let max_tokens = u32::try_from(max_tokens).unwrap_or(u32::MAX);
        let tools = tools(params)?;
        let tool_choice = match params.get("toolChoice") {
            None | Some(Value::Null) => ToolChoice::Auto,
            Some(c) => match c.get("mode") {
                None | Some(Value::Null) => ToolChoice::Auto,
                Some(m) => match m.as_str() {
                    Some("auto") => ToolChoice::Auto,
                    Some("required") => ToolChoice::Any,
                    Some("none") => ToolChoice::None,
                    _ => {
                        return Err(format!(
                            "`toolChoice.mode` {m} is not auto, required or none"
                        ));
                    }
                },
            },
        };
        if tool_choice == ToolChoice::Any && tools.is_empty() {
            return Err("`toolChoice` requires a tool use, but `tools` offers none".into());
        }
        let Some(items) = params.get("messages").and_then(Value::as_array) else {
            return Err("`messages` must be a list".into());
        };
        let mut messages: Vec<Message> = Vec::new();
        // The server's name of each tool use so far, by id, for the results that answer them.
        let mut uses: BTreeMap<String, String> = BTreeMap::new();
        for (i, m) in items.iter().enumerate() {
            let role = match m.get("role").and_then(Value::as_str) {
                Some("user") => Role::User,
                Some("assistant") => Role::Assistant,
                other => {
                    return Err(format!(
                        "message {i}: role {other:?} is not user or assistant"
                    ));
                }
            };
            let content = m.get("content").unwrap_or(&Value::Null);
            let blocks: Vec<&Value> = match content {
                Value::Array(blocks) => blocks.iter().collect(),
                block => vec![block],
            };
            let mut parts = Vec::new();
            for block in blocks {
                let p =
                    part(block, role, &uses, tool).map_err(|why| format!("message {i}: {why}"))?;
                if let Part::ToolUse { id, name, .. } = &p
                    && uses.insert(id.clone(), name.clone()).is_some()
                {
                    return Err(format!("message {i}: a second tool use with id {id:?}"));
                }
                parts.push(p);
            }
            // Consecutive messages of one role become one, as every provider wants turns to
            // alternate.
            match messages.last_mut() {
                Some(last) if last.role == role => last.parts.extend(parts),
                _ => messages.push(Message { role, parts }),
            }
        }
        if messages.first().is_none_or(|m| m.role != Role::User) {
            return Err("the conversation must start with a user message".into());
        }
        answered(&messages)?;
        Ok(SamplingRequest {
            server: server.to_string(),
            tool: tool.to_string(),
            system: params
                .get("systemPrompt")
                .and_then(Value::as_str)
                .filter(|s| !s.trim().is_empty())
                .map(str::to_string),
            messages,
            max_tokens,
            temperature: params
                .get("temperature")
                .and_then(Value::as_f64)
                .filter(|t| switchboard_providers::TEMPERATURE.contains(t)),
            tools,
            tool_choice,
            model: None,
        })
    }

    /// The conversation's last message's text, for a person to read (a tool result as
    /// `[NAME returned: TEXT]`).
    pub fn last_text(&self) -> String {
        let Some(last) = self.messages.last() else {
            return String::new();
        };
        last.parts
            .iter()
            .filter_map(|p| match p {
                Part::Text(t) => Some(t.clone()),
                Part::ToolResult { name, content, .. } => {
                    let text: Vec<&str> = content
                        .iter()
                        .filter_map(|c| match c {
                            ResultPart::Text(t) => Some(t.as_str()),
                            ResultPart::Image { .. } => None,
                        })
                        .collect();
                    Some(format!("[{name} returned: {}]", text.join(" ")))
                }
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The request made ready for `dialect`: each tool named as that provider takes names
    /// (the server's own name where it is already valid; otherwise sanitized or hashed as the
    /// session's tools are) with its schema sanitized for it; a tool whose schema cannot be
    /// made acceptable is left out, and said. `gemini_openapi`: Gemini gets schemas in its
    /// OpenAPI subset.
    pub fn prepare(&self, dialect: Dialect, gemini_openapi: bool) -> PreparedSampling {
        // Names in the conversation that are no longer offered still need provider-safe names.
        let mut own: BTreeSet<&str> = self.tools.iter().map(|t| t.name.as_str()).collect();
        for m in &self.messages {
            for p in &m.parts {
                if let Part::ToolUse { name, .. } | Part::ToolResult { name, .. } = p {
                    own.insert(name.as_str());
                }
            }
        }
        let aliases = BTreeMap::from([(self.server.clone(), String::new())]);
        let map = NameMap::build(
            dialect,
            own.iter().map(|n| (self.server.as_str(), *n)),
            &aliases,
        );
        let public = |name: &str| map.public(&self.server, name).unwrap_or(name).to_string();
        let opts = SanitizeOptions {
            strict: false,
            gemini_openapi,
        };
        let mut tools = Vec::new();
        let mut excluded = Vec::new();
        let mut sent = BTreeSet::new();
        for t in &self.tools {
            if !sent.insert(t.name.as_str()) {
                excluded.push((
                    t.name.clone(),
                    "offered twice; the first is sent".to_string(),
                ));
                continue;
            }
            match prepare_tool(
                dialect,
                &public(&t.name),
                t.description.as_deref(),
                &t.input_schema,
                &opts,
            ) {
                // A schema whose root is not an object would be sent wrapped as `{value}`,
                // and the arguments could then not go back as the object MCP requires.
                Ok(prepared) if prepared.wrapped_root => excluded.push((
                    t.name.clone(),
                    "its inputSchema does not describe an object, and tool arguments are objects"
                        .to_string(),
                )),
                Ok(prepared) => tools.push(prepared.spec),
                Err(e) => excluded.push((t.name.clone(), e.to_string())),
            }
        }
        let messages = self
            .messages
            .iter()
            .map(|m| Message {
                role: m.role,
                parts: m
                    .parts
                    .iter()
                    .map(|p| match p {
                        Part::ToolUse { id, name, input } => Part::ToolUse {
                            id: id.clone(),
                            name: public(name),
                            input: input.clone(),
                        },
                        Part::ToolResult {
                            id,
                            name,
                            content,
                            is_error,
                        } => Part::ToolResult {
                            id: id.clone(),
                            name: public(name),
                            content: content.clone(),
                            is_error: *is_error,
                        },
                        other => other.clone(),
                    })
                    .collect(),
            })
            .collect();
        let names = map
            .names()
            .map(|(_, tool, public)| (public.to_string(), tool.to_string()))
            .collect();
        PreparedSampling {
            messages,
            tool_choice: if tools.is_empty() {
                ToolChoice::Auto
            } else {
                self.tool_choice.clone()
            },
            tools,
            excluded,
            names,
        }
    }
}

/// A provider's model answering servers' sampling requests (the session's during one batch of
/// tool calls, or a gateway's own), counting the tokens each model used and keeping each
/// request and what came of it.
pub struct ModelSampler<'a> {
    client: &'a ProviderClient,
    compatible_server: bool,
    /// Gemini: tool schemas in its OpenAPI subset.
    gemini_openapi: bool,
    /// Tokens used, by the model that used them.
    usage: std::sync::Mutex<BTreeMap<String, Usage>>,
    /// Each request and what came of it, for a transcript.
    exchanges: std::sync::Mutex<Vec<Value>>,
}

impl<'a> ModelSampler<'a> {
    /// Answer with `client`'s model (or the one a request's [`SamplingRequest::model`] names,
    /// of the same provider). `gemini_openapi`: Gemini gets schemas in its OpenAPI subset.
    pub fn new(client: &'a ProviderClient, gemini_openapi: bool) -> Self {
        ModelSampler {
            client,
            compatible_server: crate::agent::compatible_server(client.dialect, &client.base_url),
            gemini_openapi,
            usage: std::sync::Mutex::new(BTreeMap::new()),
            exchanges: std::sync::Mutex::new(Vec::new()),
        }
    }

    /// The tokens used, by model, and each exchange (`{server, tool, request, response}`).
    pub fn into_parts(self) -> (BTreeMap<String, Usage>, Vec<Value>) {
        let usage = self
            .usage
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let exchanges = self
            .exchanges
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        (usage, exchanges)
    }
}

impl Sampler for ModelSampler<'_> {
    fn sample<'a>(&'a self, request: &'a SamplingRequest) -> BoxFuture<'a, Result<Reply, String>> {
        Box::pin(async move {
            // The config's model for this server: the session's provider and key, another
            // model (Gemini names it in the URL, so it takes a client of its own).
            let other;
            let client = match &request.model {
                Some(m) if *m != self.client.model => {
                    other = self
                        .client
                        .switched(self.client.dialect, None, m)
                        .map_err(|e| e.to_string())?;
                    &other
                }
                _ => self.client,
            };
            let prepared = request.prepare(client.dialect, self.gemini_openapi);
            for (tool, why) in &prepared.excluded {
                tracing::warn!(
                    server = %request.server,
                    "sampling: the server's tool {tool} is not offered to the model: {why}"
                );
            }
            let parts = RequestParts {
                model: client.model.clone(),
                system: request.system.clone(),
                messages: prepared.messages.clone(),
                tools: prepared.tools.clone(),
                max_tokens: Some(request.max_tokens),
                compatible_server: self.compatible_server,
                temperature: request.temperature,
                reasoning_effort: None,
                cache_key: None,
                gemini_openapi: self.gemini_openapi,
                stream: false,
            };
            let mut body = render_request(client.dialect, &parts);
            apply_tool_choice(client.dialect, &mut body, &prepared.tool_choice);
            let sent = client.send(&body).await.map_err(|e| e.to_string());
            let outcome = match &sent {
                Ok(r) => json!({"body": r.body, "reply": r.reply}),
                Err(e) => json!({"error": e}),
            };
            if let Ok(mut log) = self.exchanges.lock() {
                log.push(json!({"server": request.server, "tool": request.tool,
                    "request": body, "response": outcome}));
            }
            let response = sent?;
            if let Ok(mut total) = self.usage.lock() {
                add_usage(
                    total.entry(client.model.clone()).or_default(),
                    &response.reply.usage,
                );
            }
            Ok(prepared.restore(response.reply))
        })
    }

    fn model(&self) -> &str {
        &self.client.model
    }
}

/// A server's sampling request as its config entry lets it go (`sampling` in the entry): refused
/// when the entry says `sampling = false`, else read, answered by the entry's model when it names
/// one and limited to its `max_tokens`. An error is the JSON-RPC code and message for the server.
pub fn request_for(
    policy: &SamplingPolicy,
    server: &str,
    tool: &str,
    params: &Value,
) -> Result<SamplingRequest, (i32, String)> {
    if !policy.allowed {
        return Err((
            -1,
            format!(
                "the config does not let server {server} ask the model (sampling = false in its entry)"
            ),
        ));
    }
    let mut request = SamplingRequest::parse(server, tool, params)
        .map_err(|why| (-32602, format!("sampling request not sent: {why}")))?;
    request.model.clone_from(&policy.model);
    if let Some(most) = policy.max_tokens {
        request.max_tokens = request.max_tokens.min(most);
    }
    Ok(request)
}

/// `tools`, each with a name and an object schema.
fn tools(params: &Value) -> Result<Vec<SamplingTool>, String> {
    let list = match params.get("tools") {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(list)) => list,
        Some(_) => return Err("`tools` must be a list".into()),
    };
    list.iter()
        .enumerate()
        .map(|(i, t)| {
            let name = t
                .get("name")
                .and_then(Value::as_str)
                .filter(|n| !n.is_empty())
                .ok_or(format!("tool {i} has no name"))?;
            let input_schema = t
                .get("inputSchema")
                .filter(|s| s.is_object())
                .cloned()
                .ok_or(format!("tool {name:?} has no `inputSchema` object"))?;
            Ok(SamplingTool {
                name: name.to_string(),
                description: t
                    .get("description")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                input_schema,
            })
        })
        .collect()
}

/// Every tool use answered by a result in the message right after it, and no result that
/// answers nothing (each provider refuses either).
fn answered(messages: &[Message]) -> Result<(), String> {
    let ids = |m: Option<&Message>, results: bool| -> BTreeSet<String> {
        m.into_iter()
            .flat_map(|m| &m.parts)
            .filter_map(|p| match p {
                Part::ToolUse { id, .. } if !results => Some(id.clone()),
                Part::ToolResult { id, .. } if results => Some(id.clone()),
                _ => None,
            })
            .collect()
    };
    for (i, m) in messages.iter().enumerate() {
        match m.role {
            Role::Assistant => {
                let asked = ids(Some(m), false);
                let given = ids(messages.get(i + 1), true);
                if let Some(id) = asked.difference(&given).next() {
                    return Err(format!(
                        "tool use {id:?} has no tool_result in the user message after it"
                    ));
                }
            }
            Role::User => {
                let asked = ids(i.checked_sub(1).and_then(|j| messages.get(j)), false);
                if let Some(id) = ids(Some(m), true).difference(&asked).next() {
                    return Err(format!(
                        "the tool_result for {id:?} answers no tool use in the message before it"
                    ));
                }
            }
        }
    }
    Ok(())
}

fn part(
    block: &Value,
    role: Role,
    uses: &BTreeMap<String, String>,
    tool: &str,
) -> Result<Part, String> {
    let text = |k: &str| block.get(k).and_then(Value::as_str);
    match block.get("type").and_then(Value::as_str) {
        Some("text") => Ok(Part::text(text("text").unwrap_or(""))),
        Some("image") => match (text("mimeType"), text("data")) {
            (Some(media_type), Some(data)) => Ok(Part::Image {
                media_type: media_type.to_string(),
                data: data.to_string(),
            }),
            _ => Err("an image without `mimeType` and `data`".into()),
        },
        Some("audio") => Ok(Part::text(
            "[audio the server sent; not passed to the model]",
        )),
        Some("tool_use") if role == Role::Assistant => {
            let (Some(id), Some(name)) = (text("id"), text("name")) else {
                return Err("a tool_use without `id` and `name`".into());
            };
            let input = block.get("input").cloned().unwrap_or_else(|| json!({}));
            if !input.is_object() {
                return Err(format!("tool_use {id:?}: `input` must be an object"));
            }
            Ok(Part::ToolUse {
                id: id.to_string(),
                name: name.to_string(),
                input,
            })
        }
        Some("tool_result") if role == Role::User => {
            let Some(id) = text("toolUseId") else {
                return Err("a tool_result without `toolUseId`".into());
            };
            let Some(name) = uses.get(id) else {
                return Err(format!("the tool_result for {id:?} answers no tool use"));
            };
            let result: CallResult = serde_json::from_value(block.clone())
                .map_err(|e| format!("tool_result {id:?}: {e}"))?;
            // Nothing is cut: the server chose what to send back.
            let shaped = shape::shape(&result, &ShapeOptions::new(true, u32::MAX, tool));
            let content = shaped
                .parts
                .into_iter()
                .map(|p| match p {
                    shape::ResultPart::Text { text } => ResultPart::Text(text),
                    shape::ResultPart::Image { mime_type, data } => ResultPart::Image {
                        media_type: mime_type,
                        data,
                    },
                })
                .collect();
            Ok(Part::ToolResult {
                id: id.to_string(),
                name: name.clone(),
                content,
                is_error: shaped.is_error,
            })
        }
        Some(kind @ ("tool_use" | "tool_result")) => Err(format!(
            "{kind} content cannot be in a {} message",
            match role {
                Role::User => "user",
                Role::Assistant => "assistant",
            }
        )),
        Some(other) => Err(format!(
            "content of type {other:?} cannot be sent to the model"
        )),
        None => Err("content without a `type`".into()),
    }
}

/// The server's answer, the model that wrote it, and why it stopped (`endTurn`, `maxTokens`,
/// `toolUse` as MCP spells them). To a request without tools: the reply's text as one text
/// block, as servers before sampling with tools expect. To one with tools: a list of its text
/// and tool uses (the server's names; arguments the model did not write as an object become
/// `{}`, which the tool's own checks will refuse).
pub fn result(reply: &Reply, model: &str, with_tools: bool) -> Value {
    let text = reply.text();
    let uses: Vec<Value> = reply
        .parts
        .iter()
        .filter_map(|p| match p {
            Part::ToolUse { id, name, input } => Some(json!({
                "type": "tool_use",
                "id": id,
                "name": name,
                "input": if input.is_object() { input.clone() } else { json!({}) },
            })),
            _ => None,
        })
        .collect();
    let stop = match reply.stop {
        _ if with_tools && !uses.is_empty() => "toolUse",
        Stop::MaxTokens => "maxTokens",
        _ => "endTurn",
    };
    let content = if with_tools {
        let mut blocks = Vec::new();
        if !text.is_empty() || uses.is_empty() {
            blocks.push(json!({"type": "text", "text": text}));
        }
        blocks.extend(uses);
        Value::Array(blocks)
    } else {
        json!({"type": "text", "text": text})
    };
    json!({
        "role": "assistant",
        "content": content,
        "model": model,
        "stopReason": stop,
    })
}

/// An answer's text and tool uses, for a person to read before it goes to the server.
pub fn answer_text(answer: &Value) -> String {
    let blocks: Vec<&Value> = match &answer["content"] {
        Value::Array(list) => list.iter().collect(),
        one => vec![one],
    };
    blocks
        .iter()
        .filter_map(|b| match b["type"].as_str() {
            Some("text") => b["text"].as_str().map(str::to_string),
            Some("tool_use") => Some(format!(
                "[asks to run {} with {}]",
                b["name"].as_str().unwrap_or("?"),
                b["input"]
            )),
            _ => None,
        })
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_becomes_the_conversation_the_model_gets() {
        let params = json!({
            "messages": [
                {"role": "user", "content": {"type": "text", "text": "Summarize:"}},
                {"role": "user", "content": [{"type": "text", "text": "a long text"},
                    {"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="}]},
                {"role": "assistant", "content": {"type": "text", "text": "Sure."}},
                {"role": "user", "content": {"type": "audio", "mimeType": "audio/wav", "data": "UklGRg=="}}
            ],
            "systemPrompt": "Be brief.", "maxTokens": 100, "temperature": 0.2,
            "modelPreferences": {"hints": [{"name": "claude-3-sonnet"}]}
        });
        let r = SamplingRequest::parse("s", "t", &params).unwrap();
        assert_eq!(r.system.as_deref(), Some("Be brief."));
        assert_eq!(r.max_tokens, 100);
        assert_eq!(
            r.temperature,
            Some(0.2),
            "the server's temperature goes to the model"
        );
        assert_eq!(r.messages.len(), 3, "two user messages in a row become one");
        assert_eq!(r.messages[0].parts.len(), 3);
        assert!(matches!(r.messages[0].parts[2], Part::Image { .. }));
        assert_eq!(r.messages[1].role, Role::Assistant);
        assert!(r.last_text().contains("audio"));
    }

    #[test]
    fn what_cannot_be_sent_is_said() {
        let user = json!([{"role": "user", "content": {"type": "text", "text": "hi"}}]);
        for (params, why) in [
            (json!({"messages": user, "maxTokens": 0}), "maxTokens"),
            (json!({"messages": user}), "maxTokens"),
            (
                json!({"messages": "hi", "maxTokens": 5}),
                "`messages` must be a list",
            ),
            (
                json!({"messages": user, "maxTokens": 5, "tools": [{"name": "x"}]}),
                "tool \"x\" has no `inputSchema` object",
            ),
            (
                json!({"messages": user, "maxTokens": 5, "tools": {"name": "x"}}),
                "`tools` must be a list",
            ),
            (
                json!({"messages": user, "maxTokens": 5, "toolChoice": {"mode": "required"}}),
                "`tools` offers none",
            ),
            (
                json!({"messages": user, "maxTokens": 5, "tools": [], "toolChoice": {"mode": "always"}}),
                "is not auto, required or none",
            ),
            (
                json!({"messages": [{"role": "assistant", "content": {"type": "text", "text": "x"}}], "maxTokens": 5}),
                "start with a user",
            ),
            (
                json!({"messages": [{"role": "system", "content": {"type": "text", "text": "x"}}], "maxTokens": 5}),
                "role Some(\"system\")",
            ),
            (
                json!({"messages": [{"role": "user", "content": {"type": "tool_use"}}], "maxTokens": 5}),
                "tool_use content cannot be in a user message",
            ),
            (
                json!({"messages": [
                    {"role": "user", "content": {"type": "text", "text": "x"}},
                    {"role": "assistant", "content": {"type": "tool_use", "id": "a", "name": "t", "input": {}}},
                    {"role": "user", "content": {"type": "text", "text": "and?"}}
                ], "maxTokens": 5}),
                "tool use \"a\" has no tool_result in the user message after it",
            ),
            (
                json!({"messages": [
                    {"role": "user", "content": {"type": "text", "text": "x"}},
                    {"role": "assistant", "content": {"type": "tool_use", "id": "a", "name": "t", "input": {}}},
                    {"role": "user", "content": [
                        {"type": "tool_result", "toolUseId": "a", "content": []},
                        {"type": "tool_result", "toolUseId": "b", "content": []}]}
                ], "maxTokens": 5}),
                "the tool_result for \"b\" answers no tool use",
            ),
            (
                json!({"messages": [
                    {"role": "user", "content": {"type": "text", "text": "x"}},
                    {"role": "assistant", "content": {"type": "tool_use", "id": "a", "name": "t", "input": [1]}},
                ], "maxTokens": 5}),
                "`input` must be an object",
            ),
        ] {
            let err = SamplingRequest::parse("s", "t", &params).unwrap_err();
            assert!(err.contains(why), "{err}");
        }
    }

    #[test]
    fn the_reply_becomes_the_servers_answer() {
        let reply = Reply {
            parts: vec![Part::text("Hello "), Part::text("there.")],
            stop: Stop::MaxTokens,
            usage: Default::default(),
        };
        assert_eq!(
            result(&reply, "m1", false),
            json!({"role": "assistant", "content": {"type": "text", "text": "Hello there."},
                   "model": "m1", "stopReason": "maxTokens"})
        );
        // To a request with tools: a list of blocks, even with text alone.
        assert_eq!(
            result(&reply, "m1", true)["content"],
            json!([{"type": "text", "text": "Hello there."}])
        );
    }

    /// A request with tools (2025-11-25): the tools and the tool choice are read, tool uses
    /// and results in the conversation become the model's, named as the provider takes names
    /// and mapped back in the reply, which goes to the server as a list with `toolUse`.
    #[test]
    fn a_request_with_tools_is_named_for_the_provider_and_answered_with_tool_uses() {
        let schema = json!({"type": "object", "properties": {"city": {"type": "string"}}});
        let params = json!({
            "messages": [
                {"role": "user", "content": {"type": "text", "text": "Weather in Paris and Oslo?"}},
                {"role": "assistant", "content": [
                    {"type": "text", "text": "Looking."},
                    {"type": "tool_use", "id": "c1", "name": "weather.now", "input": {"city": "Paris"}},
                    {"type": "tool_use", "id": "c2", "name": "weather.now", "input": {"city": "Oslo"}}]},
                {"role": "user", "content": [
                    {"type": "tool_result", "toolUseId": "c1", "content": [{"type": "text", "text": "21 C"}]},
                    {"type": "tool_result", "toolUseId": "c2", "content": [], "structuredContent": {"temp": 3},
                     "isError": false}]}
            ],
            "maxTokens": 200,
            "tools": [
                {"name": "weather.now", "description": "Weather now.", "inputSchema": schema},
                {"name": "forecast", "inputSchema": schema}
            ],
            "toolChoice": {"mode": "required"}
        });
        let r = SamplingRequest::parse("wx", "plan_trip", &params).unwrap();
        assert_eq!(r.tools.len(), 2);
        assert_eq!(r.tool_choice, ToolChoice::Any);
        assert_eq!(r.messages.len(), 3);
        assert!(
            r.last_text().contains("[weather.now returned: 21 C]"),
            "{}",
            r.last_text()
        );
        assert!(
            r.last_text().contains("\"temp\":3"),
            "structured content stands in for text"
        );

        // `.` is not a name character for Anthropic: the name is made safe there, kept for Gemini.
        let anthropic = r.prepare(Dialect::Anthropic, false);
        let public = anthropic.tools[0].name.clone();
        assert_ne!(public, "weather.now");
        assert!(switchboard_core::names::is_valid(
            Dialect::Anthropic,
            &public
        ));
        assert_eq!(
            anthropic.tools[1].name, "forecast",
            "a valid name stays as it is"
        );
        assert_eq!(anthropic.tool_choice, ToolChoice::Any);
        let named: Vec<&str> = anthropic
            .messages
            .iter()
            .flat_map(|m| &m.parts)
            .filter_map(|p| match p {
                Part::ToolUse { name, .. } | Part::ToolResult { name, .. } => Some(name.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(
            named,
            [public.as_str(); 4],
            "uses and results under the sent name"
        );
        assert_eq!(
            r.prepare(Dialect::Gemini, false).tools[0].name,
            "weather.now"
        );

        let reply = anthropic.restore(Reply {
            parts: vec![
                Part::text("One more."),
                Part::ToolUse {
                    id: "c3".into(),
                    name: public.clone(),
                    input: json!({"city": "Rome"}),
                },
                Part::ToolUse {
                    id: "c4".into(),
                    name: "made_up".into(),
                    input: Value::String("{not json".into()),
                },
            ],
            stop: Stop::ToolUse,
            usage: Default::default(),
        });
        let answer = result(&reply, "m1", true);
        assert_eq!(
            answer,
            json!({"role": "assistant", "model": "m1", "stopReason": "toolUse", "content": [
                {"type": "text", "text": "One more."},
                {"type": "tool_use", "id": "c3", "name": "weather.now", "input": {"city": "Rome"}},
                {"type": "tool_use", "id": "c4", "name": "made_up", "input": {}}
            ]})
        );
        assert_eq!(
            answer_text(&answer),
            "One more.\n[asks to run weather.now with {\"city\":\"Rome\"}]\n[asks to run made_up with {}]"
        );
    }

    /// A tool whose schema no provider can take is left out and said; with none left, no
    /// tool choice is sent (the APIs refuse one without tools).
    #[test]
    fn a_tool_that_cannot_be_sent_is_left_out() {
        let params = json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
            "maxTokens": 5,
            "tools": [{"name": "odd", "inputSchema": {"type": "string"}}],
            "toolChoice": {"mode": "none"}
        });
        let r = SamplingRequest::parse("s", "t", &params).unwrap();
        for dialect in Dialect::ALL {
            let p = r.prepare(dialect, false);
            assert!(p.tools.is_empty(), "{dialect}");
            assert_eq!(p.excluded.len(), 1, "{dialect}");
            assert!(
                p.excluded[0].1.contains("does not describe an object"),
                "{dialect}"
            );
            assert_eq!(p.tool_choice, ToolChoice::Auto, "{dialect}");
        }
    }
}
