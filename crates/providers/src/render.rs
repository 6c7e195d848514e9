//! Request rendering: the neutral parts of a request (model, system prompt, messages, tools)
//! and the exact body each dialect's API receives, plus the hard limits checked before sending.
//!
//! Bodies are built from private serde structs in each dialect file and returned as
//! `serde_json::Value`; with serde_json's default `Map` (a `BTreeMap`) keys serialize sorted,
//! so the same parts always give the same bytes.

use serde::Serialize;
use serde_json::{Value, json};
use switchboard_core::Dialect;

pub use crate::conversation::{Message, Part, ResultPart, Role};
use crate::count::ToolChoice;
use crate::error::ProviderError;
use crate::sanitize::{SanitizeOptions, sanitize};
use crate::schema::Change;
use crate::{anthropic, gemini, openai_chat, openai_responses};

/// One tool ready to render: public name, description and sanitized schema.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ToolSpec {
    /// The public name (from the name map).
    pub name: String,
    /// What the model reads about the tool.
    pub description: Option<String>,
    /// The sanitized input schema.
    pub schema: Value,
    /// OpenAI: send `strict: true` (the schema was converted).
    pub strict: bool,
}

/// The temperatures every provider takes (Anthropic's is 0 to 1, but it clamps nothing: a
/// higher one is its error to report).
pub const TEMPERATURE: std::ops::RangeInclusive<f64> = 0.0..=2.0;

/// Everything a request body is made of.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RequestParts {
    /// Model id (Gemini takes it in the URL, so its body leaves it out).
    pub model: String,
    /// The system prompt, if any.
    pub system: Option<String>,
    /// The conversation so far.
    pub messages: Vec<Message>,
    /// Tools, in the order they are sent.
    pub tools: Vec<ToolSpec>,
    /// The most tokens the reply may have: Anthropic's required `max_tokens` (the
    /// [`DEFAULT_MAX_TOKENS`] when `None`), OpenAI Chat's `max_completion_tokens` (`max_tokens`
    /// for a [`compatible_server`](Self::compatible_server)), the Responses API's
    /// `max_output_tokens`, Gemini's `generationConfig.maxOutputTokens`. `None` sends no limit
    /// to those three, so the model's own maximum holds.
    pub max_tokens: Option<u32>,
    /// Sampling temperature, in each API's `temperature` (Gemini's
    /// `generationConfig.temperature`); `None` leaves the model's default.
    pub temperature: Option<f64>,
    /// How long a reasoning model thinks before it answers: a word (`minimal`, `low`,
    /// `medium`, `high`, ...) or, for the APIs that take a budget, a number of tokens. OpenAI
    /// Chat's `reasoning_effort`, the Responses API's `reasoning.effort`, Anthropic's
    /// `thinking` (and `output_config.effort`), Gemini's `thinkingConfig`, by model
    /// generation: see [`crate::reasoning_effort_fields`], which also says when a model
    /// cannot take it (the body then goes without). `None` leaves the model's default.
    pub reasoning_effort: Option<String>,
    /// OpenAI's `prompt_cache_key` (both APIs): requests with the same key go to the same
    /// prompt cache, so a conversation's requests find the prefix the one before wrote. Sent
    /// as given; the other dialects take none. `None` sends none (a server that speaks
    /// OpenAI's format may refuse a field it does not know).
    pub cache_key: Option<String>,
    /// The endpoint is not the provider's own API but a server speaking its wire format
    /// (llama.cpp, Ollama, vLLM, LM Studio, a proxy): OpenAI Chat's limit then goes in
    /// `max_tokens`, the field such servers read, not OpenAI's `max_completion_tokens`.
    pub compatible_server: bool,
    /// Gemini: schemas go in `parameters` (OpenAPI subset) instead of `parametersJsonSchema`.
    pub gemini_openapi: bool,
    /// Ask for a streamed response: Anthropic and OpenAI get `"stream": true` (OpenAI Chat
    /// also `stream_options.include_usage`); Gemini streams by URL (see [`crate::endpoint()`])
    /// and its body is unchanged.
    pub stream: bool,
}

/// A hard provider limit the request would break.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LimitViolation {
    /// Which limit (stable id).
    pub limit: &'static str,
    /// The dialect whose limit it is.
    pub dialect: Dialect,
    /// What the request has.
    pub count: usize,
    /// What the provider accepts.
    pub max: usize,
    /// What to do about it.
    pub remedy: String,
}

/// Anthropic's `max_tokens` when [`RequestParts::max_tokens`] is `None` (the API requires one).
pub const DEFAULT_MAX_TOKENS: u32 = 4096;

/// OpenAI rejects requests with more than 128 tools.
pub const OPENAI_MAX_TOOLS: usize = 128;
/// Observed OpenAI limit on `description` ("string too long ... maximum length 1024").
pub const OPENAI_MAX_DESCRIPTION: usize = 1024;

/// Check the hard limits for a tools array before it is sent.
pub fn check_limits(dialect: Dialect, tools: &[ToolSpec]) -> Vec<LimitViolation> {
    let mut out = Vec::new();
    if matches!(dialect, Dialect::OpenAiChat | Dialect::OpenAiResponses)
        && tools.len() > OPENAI_MAX_TOOLS
    {
        out.push(LimitViolation {
            limit: "max-tools",
            dialect,
            count: tools.len(),
            max: OPENAI_MAX_TOOLS,
            remedy: "narrow the tool set with allow/deny filters or a profile, or expose a search facade instead of every tool".into(),
        });
    }
    out
}

/// The exact JSON body `dialect`'s API receives for these parts.
pub fn render_request(dialect: Dialect, parts: &RequestParts) -> Value {
    match dialect {
        Dialect::Anthropic => anthropic::render(parts),
        Dialect::OpenAiChat => openai_chat::render(parts),
        Dialect::OpenAiResponses => openai_responses::render(parts),
        Dialect::Gemini => gemini::render(parts),
    }
}

/// Put `choice` into a rendered body that has tools, in `dialect`'s field: Anthropic's
/// `tool_choice` object (`auto`, `any`, `none`, `tool` with its `name`), OpenAI Chat's and the
/// Responses API's `tool_choice` (`none`, `required`, a function by name), Gemini's
/// `toolConfig.functionCallingConfig` (`NONE`, `ANY`, `ANY` with `allowedFunctionNames`).
/// [`ToolChoice::Auto`], every API's default, adds nothing, and neither does a body without
/// tools: OpenAI refuses a `tool_choice` without them.
pub fn apply_tool_choice(dialect: Dialect, body: &mut Value, choice: &ToolChoice) {
    let has_tools = body
        .get("tools")
        .and_then(Value::as_array)
        .is_some_and(|t| !t.is_empty());
    let Some(fields) = body.as_object_mut() else {
        return;
    };
    if !has_tools {
        return;
    }
    let (key, value) = match (dialect, choice) {
        (_, ToolChoice::Auto) => return,
        (Dialect::Anthropic, ToolChoice::None) => ("tool_choice", json!({"type": "none"})),
        (Dialect::Anthropic, ToolChoice::Any) => ("tool_choice", json!({"type": "any"})),
        (Dialect::Anthropic, ToolChoice::Tool(name)) => {
            ("tool_choice", json!({"type": "tool", "name": name}))
        }
        (Dialect::OpenAiChat | Dialect::OpenAiResponses, ToolChoice::None) => {
            ("tool_choice", json!("none"))
        }
        (Dialect::OpenAiChat | Dialect::OpenAiResponses, ToolChoice::Any) => {
            ("tool_choice", json!("required"))
        }
        (Dialect::OpenAiChat, ToolChoice::Tool(name)) => (
            "tool_choice",
            json!({"type": "function", "function": {"name": name}}),
        ),
        (Dialect::OpenAiResponses, ToolChoice::Tool(name)) => {
            ("tool_choice", json!({"type": "function", "name": name}))
        }
        (Dialect::Gemini, ToolChoice::None) => (
            "toolConfig",
            json!({"functionCallingConfig": {"mode": "NONE"}}),
        ),
        (Dialect::Gemini, ToolChoice::Any) => (
            "toolConfig",
            json!({"functionCallingConfig": {"mode": "ANY"}}),
        ),
        (Dialect::Gemini, ToolChoice::Tool(name)) => (
            "toolConfig",
            json!({"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": [name]}}),
        ),
    };
    fields.insert(key.to_string(), value);
}

/// Whether a rendered body of `dialect` sends the model's reasoning back as items the provider
/// looks up by id (the Responses API's `reasoning` items; see `openai_responses::render`), so
/// that a refusal of them can be told from another one.
pub fn sends_reasoning_items(dialect: Dialect, body: &Value) -> bool {
    dialect == Dialect::OpenAiResponses
        && body
            .get("input")
            .and_then(Value::as_array)
            .is_some_and(|items| items.iter().any(|i| i["type"] == "reasoning"))
}

/// A rendered body as bytes (sorted keys, no spaces): what goes over the wire.
pub fn to_bytes(body: &Value) -> Vec<u8> {
    // Serializing a Value cannot fail.
    serde_json::to_vec(body).unwrap_or_default()
}

pub(crate) fn to_value<T: Serialize>(body: &T) -> Value {
    // Our wire structs hold only strings, numbers and Values: serialization cannot fail.
    serde_json::to_value(body).unwrap_or(Value::Null)
}

/// One tool sanitized and ready to render, with what was changed.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PreparedTool {
    /// What to put into [`RequestParts::tools`].
    pub spec: ToolSpec,
    /// Every change to the schema and description.
    pub changes: Vec<Change>,
    /// Why strict mode was asked for but not applied.
    pub strict_fallback: Option<String>,
    /// The root was wrapped as `{value: ...}`; unwrap arguments before calling.
    pub wrapped_root: bool,
}

/// Sanitize one tool for `dialect` under its public name. `Err` means the tool must be
/// excluded (and reported).
pub fn prepare_tool(
    dialect: Dialect,
    public_name: &str,
    description: Option<&str>,
    input_schema: &Value,
    opts: &SanitizeOptions,
) -> Result<PreparedTool, ProviderError> {
    let s = sanitize(dialect, input_schema, opts)?;
    let mut changes = s.changes;
    let mut description = description.map(str::to_string);
    if matches!(dialect, Dialect::OpenAiChat | Dialect::OpenAiResponses)
        && let Some(d) = &mut description
        && d.chars().count() > OPENAI_MAX_DESCRIPTION
    {
        let before = d.chars().count();
        *d = d.chars().take(OPENAI_MAX_DESCRIPTION).collect();
        changes.push(Change {
            path: String::new(),
            rule: "description-truncated",
            before: Some(before.into()),
            after: Some(OPENAI_MAX_DESCRIPTION.into()),
        });
    }
    Ok(PreparedTool {
        spec: ToolSpec {
            name: public_name.to_string(),
            description,
            schema: s.schema,
            strict: s.strict,
        },
        changes,
        strict_fallback: s.strict_fallback,
        wrapped_root: s.wrapped_root,
    })
}
