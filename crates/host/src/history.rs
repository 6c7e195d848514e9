//! A conversation kept in a file (`run` and `chat` with `--conversation FILE`): its messages in
//! no provider's shape, the provider and model that wrote them, and the tools search mode had
//! found, so that a later run takes it up where it stopped, with the same provider or another.

use std::collections::HashMap;
use std::io::Write as _;
use std::path::Path;

use serde::{Deserialize, Serialize};
use switchboard_core::Dialect;
use switchboard_providers::{Message, Part, Role};

use crate::error::HostError;

/// The version of the file's format this build writes and reads.
pub const FORMAT: u32 = 1;

/// A saved conversation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct History {
    /// The file's format ([`FORMAT`]).
    pub switchboard_conversation: u32,
    /// The provider's API that wrote the assistant messages.
    pub provider: Dialect,
    /// The model that wrote them.
    pub model: String,
    /// The tools `--tools search` had found, as (server, tool).
    #[serde(default)]
    pub found_tools: Vec<(String, String)>,
    /// The resources tool results linked, URI → the server whose result it was (so the model
    /// keeps its `read_resource` tool, and the links their servers).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub linked_resources: std::collections::BTreeMap<String, String>,
    /// The messages, oldest first.
    pub messages: Vec<Message>,
}

impl History {
    /// The conversation saved at `path`; `None` when there is no file there yet, or an empty
    /// one (a conversation to start).
    pub fn read(path: &Path) -> Result<Option<History>, HostError> {
        let bad = |message: String| HostError::Conversation {
            path: path.to_path_buf(),
            message,
        };
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(bad(format!("cannot read it: {e}"))),
        };
        Self::parse(&text).map_err(bad)
    }

    /// A saved conversation's text read; `None` for blank text; what is wrong otherwise.
    pub fn parse(text: &str) -> Result<Option<History>, String> {
        if text.trim().is_empty() {
            return Ok(None);
        }
        let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
            format!(
                "not a saved conversation (line {}, column {}: {e})",
                e.line(),
                e.column()
            )
        })?;
        match value
            .get("switchboard_conversation")
            .and_then(serde_json::Value::as_u64)
        {
            Some(v) if v == u64::from(FORMAT) => {}
            Some(v) => {
                return Err(format!(
                    "saved in format {v}; this switchboard reads format {FORMAT}"
                ));
            }
            None => {
                return Err(
                    "not a saved conversation: it has no `switchboard_conversation` version".into(),
                );
            }
        }
        let history: History =
            serde_json::from_value(value).map_err(|e| format!("not a saved conversation: {e}"))?;
        history.check()?;
        Ok(Some(history))
    }

    /// Write the conversation to `path`, replacing what was there only once the whole of it is
    /// written (a new file beside it, then renamed). On Unix the file is readable by its owner
    /// only: tool results may hold anything.
    pub fn write(&self, path: &Path) -> Result<(), HostError> {
        let failed = |e: std::io::Error| HostError::Conversation {
            path: path.to_path_buf(),
            message: format!("cannot save it: {e}"),
        };
        let text =
            serde_json::to_string_pretty(self).map_err(|e| failed(std::io::Error::other(e)))?;
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let mut file = tempfile::Builder::new()
            .prefix(".conversation")
            .tempfile_in(dir)
            .map_err(failed)?;
        file.write_all(text.as_bytes()).map_err(failed)?;
        file.write_all(b"\n").map_err(failed)?;
        file.as_file().sync_all().map_err(failed)?;
        file.persist(path).map_err(|e| failed(e.error))?;
        Ok(())
    }

    /// The messages to send to `provider`'s `model`. For the provider and model that wrote
    /// them, as they are. For another, every tool use and its result get a new id that every
    /// API takes (`call_1`, `call_2`, ...): ids are each API's own (Anthropic takes only
    /// letters, digits, `_` and `-`; OpenAI at most 40 characters), and Gemini's thought
    /// signatures, carried in its ids, are only for the model that made them. The model's
    /// reasoning ([`Part::Reasoning`]) is left out for the same reason: its signature or
    /// encryption is the other model's.
    pub fn messages_for(&self, provider: Dialect, model: &str) -> Vec<Message> {
        if provider == self.provider && model == self.model {
            return self.messages.clone();
        }
        // Each tool use gets a new id of its own (Gemini's repeat from one reply to the next),
        // and the results in the message after it the same.
        let mut count = 0usize;
        let mut turn: HashMap<String, String> = HashMap::new();
        let mut out = Vec::with_capacity(self.messages.len());
        for m in &self.messages {
            if m.role == Role::Assistant {
                turn.clear();
            }
            let parts = m
                .parts
                .iter()
                .filter(|p| !matches!(p, Part::Reasoning { .. }))
                .map(|p| match p {
                    Part::ToolUse { id, name, input } => {
                        count += 1;
                        let new = format!("call_{count}");
                        turn.insert(id.clone(), new.clone());
                        Part::ToolUse {
                            id: new,
                            name: name.clone(),
                            input: input.clone(),
                        }
                    }
                    Part::ToolResult {
                        id,
                        name,
                        content,
                        is_error,
                    } => Part::ToolResult {
                        id: turn.get(id).cloned().unwrap_or_else(|| id.clone()),
                        name: name.clone(),
                        content: content.clone(),
                        is_error: *is_error,
                    },
                    other => other.clone(),
                })
                .collect::<Vec<Part>>();
            out.push(Message {
                role: m.role,
                // A message that was only reasoning still answers (no API takes it empty).
                parts: if parts.is_empty() && !m.parts.is_empty() {
                    vec![Part::text("(no answer)")]
                } else {
                    parts
                },
            });
        }
        out
    }

    /// What a file edited by hand may have broken that no provider would take: a tool result
    /// answering no tool use of the assistant message before it, a tool use of an earlier
    /// message left unanswered, tool parts in the other role's messages.
    fn check(&self) -> Result<(), String> {
        let mut waiting: Vec<&str> = Vec::new();
        for (i, m) in self.messages.iter().enumerate() {
            let n = i + 1;
            match m.role {
                Role::Assistant => {
                    if let Some(id) = waiting.first() {
                        return Err(format!(
                            "message {n}: the tool use {id:?} before it has no result"
                        ));
                    }
                    for p in &m.parts {
                        match p {
                            Part::ToolUse { id, .. } => waiting.push(id),
                            Part::ToolResult { .. } => {
                                return Err(format!(
                                    "message {n}: a tool result in the model's message"
                                ));
                            }
                            _ => {}
                        }
                    }
                }
                Role::User => {
                    for p in &m.parts {
                        match p {
                            Part::ToolResult { id, .. } => {
                                let Some(at) = waiting.iter().position(|w| w == id) else {
                                    return Err(format!(
                                        "message {n}: the tool result {id:?} answers no tool use of the message before it"
                                    ));
                                };
                                waiting.remove(at);
                            }
                            Part::ToolUse { .. } => {
                                return Err(format!("message {n}: a tool use in a user message"));
                            }
                            _ => {}
                        }
                    }
                    if let Some(id) = waiting.first() {
                        return Err(format!(
                            "message {n}: the tool use {id:?} before it has no result"
                        ));
                    }
                }
            }
        }
        // A last message with tool uses unanswered is repaired by the agent (as after an
        // interruption), not refused.
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use switchboard_providers::ResultPart;

    fn history() -> History {
        History {
            switchboard_conversation: FORMAT,
            provider: Dialect::Gemini,
            model: "gemini-3-pro-preview".into(),
            found_tools: vec![("tickets".into(), "search".into())],
            linked_resources: Default::default(),
            messages: vec![
                Message::user("find T-1"),
                Message::assistant(vec![
                    Part::text("Looking."),
                    Part::ToolUse {
                        id: "gemini-call-0#thought-signature:c2lnbmF0dXJl+/=".into(),
                        name: "tickets__search".into(),
                        input: json!({"q": "T-1"}),
                    },
                ]),
                Message::tool_results(vec![Part::ToolResult {
                    id: "gemini-call-0#thought-signature:c2lnbmF0dXJl+/=".into(),
                    name: "tickets__search".into(),
                    content: vec![ResultPart::Text("T-1: open".into())],
                    is_error: false,
                }]),
                Message::assistant(vec![Part::text("T-1 is open.")]),
            ],
        }
    }

    #[test]
    fn a_conversation_is_saved_and_read_back_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("talk.json");
        assert_eq!(History::read(&path).unwrap(), None, "no file yet");
        std::fs::write(&path, "\n").unwrap();
        assert_eq!(History::read(&path).unwrap(), None, "an empty file");
        let h = history();
        h.write(&path).unwrap();
        assert_eq!(History::read(&path).unwrap(), Some(h));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o077, 0, "owner only: {mode:o}");
        }
        // Nothing else is left in the folder.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    /// The ids of the tool uses and results, in order.
    fn ids(messages: &[Message]) -> Vec<&str> {
        messages
            .iter()
            .flat_map(|m| &m.parts)
            .filter_map(|p| match p {
                Part::ToolUse { id, .. } | Part::ToolResult { id, .. } => Some(id.as_str()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn another_provider_gets_ids_it_takes() {
        let h = history();
        assert_eq!(
            h.messages_for(Dialect::Gemini, "gemini-3-pro-preview"),
            h.messages
        );
        let m = h.messages_for(Dialect::Anthropic, "claude-sonnet-4-5");
        assert_eq!(ids(&m), ["call_1", "call_1"]);
        assert_eq!(m[3], h.messages[3]);
        // Gemini's ids repeat from one reply to the next; the new ones do not.
        let mut h = history();
        let again: Vec<Message> = h.messages[1..3].to_vec();
        h.messages.splice(3..3, again);
        let m = h.messages_for(Dialect::OpenAiChat, "gpt-5");
        assert_eq!(ids(&m), ["call_1", "call_1", "call_2", "call_2"]);
        // The same provider with another model: signatures are the model's own.
        assert_ne!(
            h.messages_for(Dialect::Gemini, "gemini-2.5-flash"),
            h.messages
        );
    }

    /// Reasoning goes back to the model that made it, and to no other: its signature is that
    /// model's.
    #[test]
    fn reasoning_stays_with_the_model_that_made_it() {
        let mut h = history();
        h.provider = Dialect::Anthropic;
        h.model = "claude-sonnet-4-5".into();
        let thinking = Part::Reasoning {
            dialect: Dialect::Anthropic,
            text: "Search first.".into(),
            data: json!({"type": "thinking", "thinking": "Search first.", "signature": "c2ln"}),
        };
        h.messages[1].parts.insert(0, thinking.clone());
        h.messages[3].parts = vec![thinking.clone()];
        assert_eq!(
            h.messages_for(Dialect::Anthropic, "claude-sonnet-4-5")[1].parts[0],
            thinking
        );
        for (provider, model) in [
            (Dialect::Anthropic, "claude-opus-4-5"),
            (Dialect::OpenAiChat, "deepseek-reasoner"),
        ] {
            let m = h.messages_for(provider, model);
            let kept = m
                .iter()
                .flat_map(|m| &m.parts)
                .filter(|p| matches!(p, Part::Reasoning { .. }))
                .count();
            assert_eq!(kept, 0, "{provider} {model}");
            assert_eq!(m[1].parts[0], Part::text("Looking."));
            // A message that was only reasoning is not left empty.
            assert_eq!(m[3].parts, [Part::text("(no answer)")]);
        }
    }

    #[test]
    fn a_broken_file_is_refused_saying_why() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("talk.json");
        let refused = |text: &str| {
            std::fs::write(&path, text).unwrap();
            History::read(&path).unwrap_err().to_string()
        };
        assert!(refused("{").contains("line 1"), "{}", refused("{"));
        assert!(refused("{\"messages\": []}").contains("no `switchboard_conversation`"));
        assert!(refused("{\"switchboard_conversation\": 9}").contains("format 9"));
        let mut h = history();
        h.messages.remove(1);
        let text = serde_json::to_string(&h).unwrap();
        let why = refused(&text);
        assert!(
            why.contains("message 2") && why.contains("answers no tool use"),
            "{why}"
        );
        let mut h = history();
        h.messages.remove(2);
        let why = refused(&serde_json::to_string(&h).unwrap());
        assert!(
            why.contains("message 3") && why.contains("has no result"),
            "{why}"
        );
        // Ending on unanswered tool uses is taken (the agent answers them as interrupted).
        let mut h = history();
        h.messages.truncate(2);
        std::fs::write(&path, serde_json::to_string(&h).unwrap()).unwrap();
        assert!(History::read(&path).unwrap().is_some());
    }
}
