//! The conversation in no provider's shape: messages made of parts (text, images, tool uses and
//! their results), which every dialect file encodes into its own wire format.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use switchboard_core::Dialect;

/// Who wrote a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The person (or program) asking, and the host answering tool uses.
    User,
    /// The model.
    Assistant,
}

impl Role {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }
}

/// One piece of a message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Part {
    /// Plain text.
    Text(String),
    /// An image, base64-encoded (`data`) with its media type (`image/png`, ...).
    Image {
        /// `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
        media_type: String,
        /// Base64 bytes, no `data:` prefix.
        data: String,
    },
    /// The model asks for a tool call (assistant messages only).
    ///
    /// `input` is the parsed arguments. When the model's arguments text was not a JSON object
    /// (OpenAI sends arguments as a string), `input` is `Value::String(raw text)`: see
    /// [`Part::invalid_input`]. Encoding sends such a raw string back verbatim to OpenAI and
    /// as `{}` to Anthropic and Gemini, which take only objects.
    ///
    /// Gemini gives no call ids; decoding synthesizes `gemini-call-N` (N = position among the
    /// reply's calls), and encoding leaves synthesized ids out of the body (the API pairs
    /// results by name and order). When a Gemini call carries a `thoughtSignature`, the id
    /// ends with `#thought-signature:` and the signature, which encoding sends back on the
    /// call. Treat ids as opaque: copy them into the matching [`Part::ToolResult`].
    ToolUse {
        /// The call id the result must carry.
        id: String,
        /// The public tool name the model used.
        name: String,
        /// The arguments (an object when the model behaved).
        input: Value,
    },
    /// The model's reasoning as its provider returned it (assistant messages only), kept so
    /// that it goes back with the tool uses it led to. Anthropic refuses a tool loop whose
    /// assistant turn lost its `thinking` block while thinking is on, and DeepSeek and Kimi
    /// refuse one that lost its `reasoning_content`. Encoding sends it back only to the
    /// dialect that made it; the others leave it out (as they would a signature they cannot
    /// check), and [`Part::Reasoning`]s are dropped when a conversation moves to another
    /// provider or model.
    Reasoning {
        /// The dialect whose reply it came in.
        dialect: Dialect,
        /// The reasoning in words, when the provider showed it (empty when it was hidden,
        /// redacted or encrypted). For display only: what goes back is `data`.
        text: String,
        /// What goes back, exactly as it came: Anthropic's whole `thinking` or
        /// `redacted_thinking` block (its signature included); for OpenAI Chat, an object
        /// with the message fields it came in (`reasoning_content` or `reasoning`,
        /// OpenRouter's `reasoning_details`) and each call's `extra_content` by call id under
        /// `tool_call_extra`. `null` for Gemini's thought summaries, which are shown and never
        /// sent back.
        data: Value,
    },
    /// The host's answer to one tool use (user messages only).
    ToolResult {
        /// The id of the tool use it answers.
        id: String,
        /// The tool name of that use (Gemini pairs by name).
        name: String,
        /// What the tool returned, in order.
        content: Vec<ResultPart>,
        /// The call failed; `content` says why.
        is_error: bool,
    },
}

impl Part {
    /// A text part.
    pub fn text(text: impl Into<String>) -> Self {
        Part::Text(text.into())
    }

    /// For a tool use whose arguments were not a JSON object (not JSON at all, or JSON of
    /// another type): the raw arguments text.
    /// The loop answers such a call with an `is_error` result instead of calling the tool.
    pub fn invalid_input(&self) -> Option<&str> {
        match self {
            Part::ToolUse {
                input: Value::String(raw),
                ..
            } => Some(raw),
            _ => None,
        }
    }
}

/// One piece of a tool result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResultPart {
    /// Text.
    Text(String),
    /// An image, base64-encoded. Dialects that do not take images in tool results (see
    /// [`accepts_result_images`]) get a short text note in its place; the loop should describe
    /// images in text for them before encoding.
    Image {
        /// `image/png`, ...
        media_type: String,
        /// Base64 bytes.
        data: String,
    },
}

/// One message of the conversation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Its author.
    pub role: Role,
    /// Its parts, in order.
    pub parts: Vec<Part>,
}

impl Message {
    /// A user message with one text part.
    pub fn user(text: impl Into<String>) -> Self {
        Self {
            role: Role::User,
            parts: vec![Part::Text(text.into())],
        }
    }

    /// An assistant message (typically a [`crate::Reply`]'s parts, replayed as they came).
    pub fn assistant(parts: Vec<Part>) -> Self {
        Self {
            role: Role::Assistant,
            parts,
        }
    }

    /// The user message answering the previous assistant message's tool uses: one
    /// [`Part::ToolResult`] per tool use, in the order the model gave them (other parts such as
    /// text may follow the results).
    pub fn tool_results(parts: Vec<Part>) -> Self {
        Self {
            role: Role::User,
            parts,
        }
    }

    /// The concatenated text parts.
    pub fn text(&self) -> String {
        text_of(&self.parts)
    }
}

/// Where the turn under way starts: the index of the last message the user wrote (one with
/// more than tool results in it), 0 when there is none. Reasoning goes back to the APIs that
/// want it only after it.
pub(crate) fn turn_start(messages: &[Message]) -> usize {
    messages
        .iter()
        .rposition(|m| {
            m.role == Role::User
                && m.parts
                    .iter()
                    .any(|p| !matches!(p, Part::ToolResult { .. }))
        })
        .unwrap_or(0)
}

/// The text parts of `parts`, joined (no reasoning, tool uses or results).
pub(crate) fn text_of(parts: &[Part]) -> String {
    parts
        .iter()
        .filter_map(|p| match p {
            Part::Text(t) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}

/// Whether `dialect` takes images inside tool results whatever the model (Anthropic: image
/// blocks in `tool_result`; OpenAI Responses: `input_image` items in
/// `function_call_output.output`). OpenAI Chat tool messages are text only. Gemini depends on
/// the model: use [`accepts_result_images_for`] when the model is known.
pub fn accepts_result_images(dialect: Dialect) -> bool {
    matches!(dialect, Dialect::Anthropic | Dialect::OpenAiResponses)
}

/// Whether `dialect` takes images inside tool results with `model`. Gemini takes them from
/// the Gemini 3 family on, as "multimodal function responses": `functionResponse.parts` of
/// `inlineData` blobs (PNG, JPEG or WebP; `fileData` is not supported by the Gemini API).
/// Google documents the feature for Gemini 3 models only, and an older model would get a
/// request field it does not know, so anything that is not recognisably `gemini-N` with
/// N >= 3 (2.5, `gemini-exp-…`, a local model name behind `--base-url`) keeps the safe text
/// note instead.
pub fn accepts_result_images_for(dialect: Dialect, model: &str) -> bool {
    match dialect {
        Dialect::Gemini => gemini_result_images(model),
        other => accepts_result_images(other),
    }
}

/// The model is a Gemini 3 or later (`gemini-3-pro-preview`, `models/gemini-3.1-flash`,
/// `google/gemini-3-flash` behind a proxy).
pub(crate) fn gemini_result_images(model: &str) -> bool {
    let Some(at) = model.find("gemini-") else {
        return false;
    };
    let major: String = model[at + "gemini-".len()..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    major.parse::<u32>().is_ok_and(|n| n >= 3)
}

/// The image types Gemini takes in `functionResponse.parts` (others become a text note).
pub(crate) const GEMINI_RESULT_IMAGE_TYPES: [&str; 3] = ["image/png", "image/jpeg", "image/webp"];

/// The prefix of ids synthesized for Gemini function calls, which have none.
pub(crate) const GEMINI_SYNTH_ID: &str = "gemini-call-";
/// Between a Gemini call's id and the `thoughtSignature` it came with (Gemini 3 requires the
/// signature back on the replayed call; the id is the one place a part carries it).
pub(crate) const GEMINI_SIGNATURE: &str = "#thought-signature:";

/// The text a dialect without image support in tool results gets for an image.
pub(crate) fn image_note(media_type: &str, data: &str) -> String {
    format!(
        "[image {media_type}, {} bytes, not shown: this provider takes no images in tool results]",
        data.len() / 4 * 3
    )
}

/// A result's content as one text (images become notes), for text-only dialects.
pub(crate) fn result_text(content: &[ResultPart]) -> String {
    let mut out = String::new();
    for c in content {
        if !out.is_empty() {
            out.push('\n');
        }
        match c {
            ResultPart::Text(t) => out.push_str(t),
            ResultPart::Image { media_type, data } => out.push_str(&image_note(media_type, data)),
        }
    }
    out
}

/// The arguments as the JSON text OpenAI expects (a raw invalid string goes back verbatim).
pub(crate) fn arguments_text(input: &Value) -> String {
    match input {
        Value::String(raw) => raw.clone(),
        other => serde_json::to_string(other).unwrap_or_else(|_| "{}".into()),
    }
}

/// The arguments text from a model, parsed: empty means `{}`, invalid JSON stays a raw string.
pub(crate) fn parse_arguments(raw: &str) -> Value {
    if raw.trim().is_empty() {
        return Value::Object(Default::default());
    }
    match serde_json::from_str::<Value>(raw) {
        Ok(v @ Value::Object(_)) => v,
        // Valid JSON but not an object (or not JSON): keep the text so the loop can answer.
        _ => Value::String(raw.to_string()),
    }
}
