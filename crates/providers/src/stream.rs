//! Streamed replies: the HTTP client in the host splits the SSE stream into events; a
//! [`StreamDecoder`] turns each event's data into text deltas and tool-use starts for display,
//! and assembles the same [`Reply`] a non-streamed request would have given.

use serde_json::Value;
use switchboard_core::Dialect;

use crate::conversation::{Part, parse_arguments};
use crate::error::ProviderError;
use crate::reply::{Reply, Stop, Usage, settle_stop};
use crate::{anthropic, gemini, openai_chat, openai_responses};

/// What a stream event shows as it arrives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StreamEvent {
    /// More answer text.
    TextDelta(String),
    /// More of the model's reasoning in words (Anthropic's thinking, an OpenAI-compatible
    /// server's `reasoning_content`), before its answer.
    ReasoningDelta(String),
    /// The model started a tool use (its arguments follow).
    ToolUseStarted {
        /// The call id.
        id: String,
        /// The tool name.
        name: String,
    },
}

/// Decodes one streamed response, event by event.
#[derive(Debug)]
pub struct StreamDecoder {
    dialect: Dialect,
    pub(crate) acc: Assembly,
}

impl StreamDecoder {
    /// A decoder for one response of `dialect`.
    pub fn new(dialect: Dialect) -> Self {
        Self {
            dialect,
            acc: Assembly::default(),
        }
    }

    /// One SSE event: its `event:` name (if any) and its joined `data:` text. Events that
    /// carry nothing to show give an empty list; OpenAI's `[DONE]` and keep-alive pings are
    /// accepted. An `error` event gives [`ProviderError::Api`] with the provider's message.
    pub fn feed(
        &mut self,
        event: Option<&str>,
        data: &str,
    ) -> Result<Vec<StreamEvent>, ProviderError> {
        let data = data.trim();
        if data.is_empty() || data == "[DONE]" {
            if data == "[DONE]" {
                self.acc.done = true;
            }
            return Ok(Vec::new());
        }
        let value: Value = serde_json::from_str(data).map_err(|e| {
            ProviderError::decode(self.dialect, format!("stream event is not JSON: {e}"))
        })?;
        let mut out = Vec::new();
        match self.dialect {
            Dialect::Anthropic => anthropic::feed(&mut self.acc, event, &value, &mut out)?,
            Dialect::OpenAiChat => openai_chat::feed(&mut self.acc, &value, &mut out)?,
            Dialect::OpenAiResponses => {
                openai_responses::feed(&mut self.acc, event, &value, &mut out)?
            }
            Dialect::Gemini => gemini::feed(&mut self.acc, &value, &mut out)?,
        }
        Ok(out)
    }

    /// After the stream ends: the assembled reply, tool-use inputs parsed from their joined
    /// argument deltas (text that is not a JSON object stays a raw string, as in
    /// [`Part::ToolUse`]). A stream that ended without a stop reason or an end marker was
    /// cut: that is an error.
    pub fn finish(self) -> Result<Reply, ProviderError> {
        let dialect = self.dialect;
        let acc = self.acc;
        // A stream that said it was done (`[DONE]`, `message_stop`) without a reason ended
        // normally; one that just stopped was cut.
        let stop = match acc.stop {
            Some(stop) => stop,
            None if acc.done => Stop::EndTurn,
            None => {
                return Err(ProviderError::decode(
                    dialect,
                    "the stream ended before the model finished (no stop reason)",
                ));
            }
        };
        let parts = acc
            .blocks
            .into_iter()
            .filter_map(|(_, b)| -> Option<Part> {
                match b {
                    Block::Text(t) if t.is_empty() => None,
                    Block::Text(t) => Some(Part::Text(t)),
                    Block::Tool { id, name, args } => Some(Part::ToolUse {
                        id,
                        name,
                        input: parse_arguments(&args),
                    }),
                    // (OpenAI Chat and Gemini start a reasoning block only with words: an
                    // empty `reasoning_content` is none, and Kimi refuses one sent back.)
                    Block::Reasoning { text, data } => Some(Part::Reasoning {
                        dialect,
                        text,
                        data,
                    }),
                }
            })
            .collect::<Vec<Part>>();
        let stop = settle_stop(stop, &parts);
        Ok(Reply {
            parts,
            stop,
            usage: acc.usage,
        })
    }
}

/// The reply as it is being assembled.
#[derive(Debug, Default)]
pub(crate) struct Assembly {
    /// Blocks keyed by the dialect's index (content block index, tool call index, output
    /// index), in order of first appearance.
    pub(crate) blocks: Vec<(String, Block)>,
    pub(crate) stop: Option<Stop>,
    pub(crate) usage: Usage,
    pub(crate) saw_tool: bool,
    pub(crate) refused: bool,
    pub(crate) done: bool,
    /// Whole output items as a stream gave them one by one (OpenAI Responses).
    pub(crate) items: Vec<Value>,
}

/// One part being assembled.
#[derive(Debug)]
pub(crate) enum Block {
    Text(String),
    Tool {
        id: String,
        name: String,
        args: String,
    },
    /// The model's reasoning: its words so far, and the block or fields that go back.
    Reasoning {
        text: String,
        data: Value,
    },
}

impl Assembly {
    /// The block under `key`, if any.
    pub(crate) fn block(&mut self, key: &str) -> Option<&mut Block> {
        self.blocks
            .iter_mut()
            .find(|(k, _)| k == key)
            .map(|(_, b)| b)
    }

    /// Append text to the text block under `key` (created when missing).
    pub(crate) fn text(&mut self, key: &str, delta: &str, out: &mut Vec<StreamEvent>) {
        if delta.is_empty() {
            return;
        }
        match self.block(key) {
            Some(Block::Text(t)) => t.push_str(delta),
            _ => self
                .blocks
                .push((key.to_string(), Block::Text(delta.into()))),
        }
        out.push(StreamEvent::TextDelta(delta.to_string()));
    }

    /// Start a tool block under `key`.
    pub(crate) fn tool(
        &mut self,
        key: &str,
        id: &str,
        name: &str,
        args: &str,
        out: &mut Vec<StreamEvent>,
    ) {
        self.saw_tool = true;
        self.blocks.push((
            key.to_string(),
            Block::Tool {
                id: id.into(),
                name: name.into(),
                args: args.into(),
            },
        ));
        out.push(StreamEvent::ToolUseStarted {
            id: id.into(),
            name: name.into(),
        });
    }

    /// Start a reasoning block under `key` with its words so far and the data that goes back.
    pub(crate) fn reasoning(&mut self, key: &str, text: String, data: Value) {
        self.blocks
            .push((key.to_string(), Block::Reasoning { text, data }));
    }

    /// Append `piece` to the string field `field` of the reasoning block under `key` (and to
    /// its words when `words`); false when there is no reasoning block there.
    pub(crate) fn reasoning_field(
        &mut self,
        key: &str,
        field: &str,
        piece: &str,
        words: bool,
    ) -> bool {
        let Some(Block::Reasoning { text, data }) = self.block(key) else {
            return false;
        };
        if words {
            text.push_str(piece);
        }
        if let Some(fields) = data.as_object_mut() {
            match fields.get_mut(field) {
                Some(Value::String(s)) => s.push_str(piece),
                _ => {
                    fields.insert(field.to_string(), Value::String(piece.to_string()));
                }
            }
        }
        true
    }

    /// Append argument text to the tool block under `key`; false when there is none.
    pub(crate) fn args(&mut self, key: &str, delta: &str) -> bool {
        match self.block(key) {
            Some(Block::Tool { args, .. }) => {
                args.push_str(delta);
                true
            }
            _ => false,
        }
    }
}
