//! The catalog: every tool, resource, resource template and prompt the connected servers offer,
//! each with its owning server, its definition as received, and a stable content hash.
//!
//! Definitions mirror the MCP wire format (camelCase) and keep unknown fields in `extra`, so a
//! definition serializes back to what the server sent and its hash covers everything it said.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::hash::ContentHash;

/// An MCP tool definition as a server sent it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tool {
    /// The tool's name on its server.
    pub name: String,
    /// Human-facing title, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the model reads about the tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON Schema of the arguments, exactly as received (used for argument validation).
    #[serde(default = "empty_object_schema")]
    pub input_schema: Value,
    /// JSON Schema of `structuredContent`, if declared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// Behaviour hints (readOnlyHint, destructiveHint, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
    /// Every other field the server sent (icons, _meta, execution, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

fn empty_object_schema() -> Value {
    serde_json::json!({"type": "object"})
}

impl Tool {
    /// A tool with a name, a description and an input schema.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
    ) -> Self {
        Self {
            name: name.into(),
            title: None,
            description: Some(description.into()),
            input_schema,
            output_schema: None,
            annotations: None,
            extra: Map::new(),
        }
    }

    /// The annotations as the server sent them, as a JSON object (empty when it sent none),
    /// for rules that test them.
    pub fn annotation_map(&self) -> Map<String, Value> {
        match self
            .annotations
            .as_ref()
            .and_then(|a| serde_json::to_value(a).ok())
        {
            Some(Value::Object(m)) => m,
            _ => Map::new(),
        }
    }

    /// True when the server says the tool only reads.
    pub fn is_read_only(&self) -> bool {
        self.annotations
            .as_ref()
            .and_then(|a| a.read_only_hint)
            .unwrap_or(false)
    }

    /// True when the server says, in so many words, that the tool neither destroys data
    /// (`destructiveHint: false`) nor reaches beyond a closed world (`openWorldHint: false`).
    pub fn is_declared_closed_and_safe(&self) -> bool {
        self.annotations
            .as_ref()
            .is_some_and(|a| a.destructive_hint == Some(false) && a.open_world_hint == Some(false))
    }

    /// True when the server says the tool runs only as a task (MCP 2025-11-25's
    /// `execution.taskSupport: "required"`): a plain `tools/call` is refused, the call must ask
    /// for a task and fetch its result.
    pub fn requires_task(&self) -> bool {
        self.extra
            .get("execution")
            .and_then(|e| e.get("taskSupport"))
            .and_then(Value::as_str)
            == Some("required")
    }

    /// True when the server says the tool may destroy data. MCP's default for a tool that is
    /// not read-only is destructive, but we only report what was declared.
    pub fn is_declared_destructive(&self) -> bool {
        self.annotations
            .as_ref()
            .and_then(|a| a.destructive_hint)
            .unwrap_or(false)
    }
}

/// MCP tool annotations (all optional hints).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    /// Display title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tool does not modify its environment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// The tool may perform destructive updates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Calling it twice with the same arguments has no further effect.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// The tool interacts with an open world of external entities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
    /// Any other annotation.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// An MCP resource.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Resource {
    /// The resource URI on its server.
    pub uri: String,
    /// Its name.
    pub name: String,
    /// Human-facing title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Everything else the server sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// An MCP resource template.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceTemplate {
    /// RFC 6570 URI template.
    pub uri_template: String,
    /// Its name.
    pub name: String,
    /// Human-facing title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Everything else the server sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// An MCP prompt.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Prompt {
    /// The prompt's name.
    pub name: String,
    /// Human-facing title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Arguments it takes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub arguments: Vec<PromptArgument>,
    /// Everything else the server sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One argument of a prompt.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptArgument {
    /// Argument name.
    pub name: String,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether it must be given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
    /// Everything else.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A definition with the hash of its canonical JSON.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Entry<T> {
    /// The definition as received.
    pub def: T,
    /// Hash of the definition's canonical JSON.
    pub hash: ContentHash,
}

impl<T: Serialize> Entry<T> {
    /// Wrap a definition and hash it.
    pub fn new(def: T) -> Self {
        // Serializing our own plain structs to a Value cannot fail (no non-string map keys).
        let value = serde_json::to_value(&def).unwrap_or(Value::Null);
        let hash = ContentHash::of_json(&value);
        Self { def, hash }
    }
}

/// What a server said about itself at connect time.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerInfo {
    /// `serverInfo.name`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `serverInfo.version`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// `serverInfo.title` or a description from a catalog file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The negotiated protocol version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
    /// The server's `instructions`, meant for the model's system prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
}

/// Everything one server offers.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerCatalog {
    /// The configured server name (the key in the config, not `serverInfo.name`).
    pub server: String,
    /// What the server said about itself.
    pub info: ServerInfo,
    /// Its tools, in the order the server listed them.
    pub tools: Vec<Entry<Tool>>,
    /// Its resources.
    pub resources: Vec<Entry<Resource>>,
    /// Its resource templates.
    pub resource_templates: Vec<Entry<ResourceTemplate>>,
    /// Its prompts.
    pub prompts: Vec<Entry<Prompt>>,
}

impl ServerCatalog {
    /// An empty catalog for `server`.
    pub fn new(server: impl Into<String>) -> Self {
        Self {
            server: server.into(),
            ..Self::default()
        }
    }

    /// Find a tool by its name on this server.
    pub fn tool(&self, name: &str) -> Option<&Entry<Tool>> {
        self.tools.iter().find(|t| t.def.name == name)
    }
}

/// The union of every server's catalog, with a generation number that increases on every change.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Catalog {
    /// Increases by one each time the content changes; readers compare it to know.
    pub generation: u64,
    /// Per-server catalogs, keyed and ordered by configured server name.
    pub servers: BTreeMap<String, ServerCatalog>,
}

impl Catalog {
    /// An empty catalog at generation 0.
    pub fn new() -> Self {
        Self::default()
    }

    /// Build a catalog from server catalogs (later duplicates of a server name replace earlier).
    pub fn from_servers(servers: impl IntoIterator<Item = ServerCatalog>) -> Self {
        let mut c = Self::new();
        for s in servers {
            c.servers.insert(s.server.clone(), s);
        }
        c
    }

    /// Replace (or add) one server's catalog. Bumps the generation only when something changed.
    /// Returns whether it changed.
    pub fn upsert(&mut self, server: ServerCatalog) -> bool {
        if self.servers.get(&server.server) == Some(&server) {
            return false;
        }
        self.servers.insert(server.server.clone(), server);
        self.generation += 1;
        true
    }

    /// Remove a server. Bumps the generation when it was present.
    pub fn remove(&mut self, server: &str) -> bool {
        let removed = self.servers.remove(server).is_some();
        if removed {
            self.generation += 1;
        }
        removed
    }

    /// Every tool with its server, servers in name order, tools in server order.
    pub fn tools(&self) -> impl Iterator<Item = (&str, &Entry<Tool>)> {
        self.servers
            .values()
            .flat_map(|s| s.tools.iter().map(move |t| (s.server.as_str(), t)))
    }

    /// One tool by server and name.
    pub fn tool(&self, server: &str, name: &str) -> Option<&Entry<Tool>> {
        self.servers.get(server).and_then(|s| s.tool(name))
    }

    /// Total number of tools.
    pub fn tool_count(&self) -> usize {
        self.servers.values().map(|s| s.tools.len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_tool_round_trips_with_unknown_fields() {
        let wire = json!({
            "name": "search",
            "description": "Find tickets",
            "inputSchema": {"type": "object", "properties": {"query": {"type": "string"}}},
            "annotations": {"readOnlyHint": true, "x-vendor": 1},
            "icons": [{"src": "data:,"}]
        });
        let tool: Tool = serde_json::from_value(wire.clone()).unwrap();
        assert!(tool.is_read_only());
        assert_eq!(serde_json::to_value(&tool).unwrap(), wire);
    }

    #[test]
    fn upsert_bumps_generation_only_on_change() {
        let mut c = Catalog::new();
        let mut s = ServerCatalog::new("a");
        s.tools
            .push(Entry::new(Tool::new("t", "d", json!({"type": "object"}))));
        assert!(c.upsert(s.clone()));
        assert_eq!(c.generation, 1);
        assert!(!c.upsert(s.clone()));
        assert_eq!(c.generation, 1);
        s.tools[0] = Entry::new(Tool::new("t", "changed", json!({"type": "object"})));
        assert!(c.upsert(s));
        assert_eq!(c.generation, 2);
        assert!(c.remove("a"));
        assert_eq!(c.generation, 3);
    }
}
