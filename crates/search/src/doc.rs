//! A searchable document: one tool with the text that describes it, taken from a catalog entry.

use serde_json::Value;
use switchboard_core::catalog::{Entry, ServerCatalog, Tool};
use switchboard_core::hash::ContentHash;

/// One parameter of a tool: its path in the schema (`options.limit`) and its description.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    /// The property name, dotted for nested objects.
    pub name: String,
    /// Its description, empty when the schema has none.
    pub description: String,
}

/// A tool as the index sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct Doc {
    /// The owning server's configured name.
    pub server: String,
    /// What the server says about itself (may be empty).
    pub server_description: String,
    /// The tool's name on its server.
    pub tool: String,
    /// The tool's title and description (may be empty).
    pub description: String,
    /// Every property of the input schema, depth first.
    pub params: Vec<Param>,
    /// The tool definition's content hash.
    pub hash: ContentHash,
    /// Characters of the definition as a model would see it in a tools array (compact JSON of
    /// name, description and inputSchema), for rent estimates.
    pub definition_chars: usize,
}

/// Schemas nest at most this deep before we stop walking (guards against pathological schemas).
const MAX_DEPTH: usize = 4;

impl Doc {
    /// A document from a tool entry of a server.
    pub fn from_entry(server: &ServerCatalog, entry: &Entry<Tool>) -> Self {
        let tool = &entry.def;
        let description = match (&tool.title, &tool.description) {
            (Some(t), Some(d)) if !d.contains(t.as_str()) => format!("{t}. {d}"),
            (_, Some(d)) => d.clone(),
            (Some(t), None) => t.clone(),
            (None, None) => String::new(),
        };
        let mut params = Vec::new();
        walk_schema(&tool.input_schema, "", 0, &mut params);
        let definition = serde_json::json!({
            "name": tool.name,
            "description": tool.description,
            "inputSchema": tool.input_schema,
        });
        Self {
            server: server.server.clone(),
            server_description: server.info.description.clone().unwrap_or_default(),
            tool: tool.name.clone(),
            description,
            params,
            hash: entry.hash,
            definition_chars: definition.to_string().chars().count(),
        }
    }

    /// Every tool of every server, servers and tools in the given order.
    pub fn from_servers(servers: &[ServerCatalog]) -> Vec<Doc> {
        servers
            .iter()
            .flat_map(|s| s.tools.iter().map(move |t| Doc::from_entry(s, t)))
            .collect()
    }

    /// A document from plain strings, for tests and callers without a catalog.
    pub fn new(server: &str, tool: &str, description: &str, params: &[(&str, &str)]) -> Self {
        let params: Vec<Param> = params
            .iter()
            .map(|(n, d)| Param {
                name: n.to_string(),
                description: d.to_string(),
            })
            .collect();
        let properties: serde_json::Map<String, Value> = params
            .iter()
            .map(|p| {
                let schema = serde_json::json!({"type": "string", "description": p.description});
                (p.name.clone(), schema)
            })
            .collect();
        let definition = serde_json::json!({
            "name": tool,
            "description": description,
            "inputSchema": {"type": "object", "properties": properties},
        });
        let hash = ContentHash::of_json(&serde_json::json!({"server": server, "tool": definition}));
        Self {
            server: server.to_string(),
            server_description: String::new(),
            tool: tool.to_string(),
            description: description.to_string(),
            params,
            hash,
            definition_chars: definition.to_string().chars().count(),
        }
    }

    /// The byte range of the tool's name words in [`Self::dense_text`] (after the server's name
    /// when the server describes itself).
    pub fn dense_text_name_span(&self) -> std::ops::Range<usize> {
        let words = |s: &str| crate::words::split_words(s).join(" ");
        let start = if self.server_description.is_empty() {
            0
        } else {
            words(&self.server).len() + 2
        };
        start..start + words(&self.tool).len()
    }

    /// The text a sentence embedding model reads: server name (when the server has a
    /// description), tool name words, description, parameter names, then the start of the
    /// server's description. Parameter descriptions are
    /// left out: they are long, mostly about formats, and crowd the model's token window; the
    /// lexical ranker still sees them. The server part gives atomic tools (`add_slide`) their
    /// context (a PowerPoint server).
    pub fn dense_text(&self) -> String {
        let words = |s: &str| crate::words::split_words(s).join(" ");
        // Server context only where the server describes itself; a bare catalog name
        // ("metatool") is noise to the model.
        let mut text = if self.server_description.is_empty() {
            words(&self.tool)
        } else {
            format!("{}: {}", words(&self.server), words(&self.tool))
        };
        if !self.description.is_empty() {
            text.push_str(": ");
            text.push_str(&self.description);
        }
        if !self.params.is_empty() {
            text.push_str(" (");
            let names: Vec<String> = self.params.iter().map(|p| words(&p.name)).collect();
            text.push_str(&names.join(", "));
            text.push(')');
        }
        if !self.server_description.is_empty() {
            text.push_str(". ");
            text.extend(self.server_description.chars().take(SERVER_CHARS));
        }
        text
    }
}

impl Doc {
    /// The tool's name as words (`get_weatherForecast` -> "get weather forecast"), embedded as
    /// a second, short vector: the name is the most deliberate summary of what a tool does, and
    /// in the full text it is one phrase among a long description and parameters. The raw name
    /// when it has no letters or digits to split.
    pub fn name_text(&self) -> String {
        let words = crate::words::split_words(&self.tool);
        if words.is_empty() {
            self.tool.clone()
        } else {
            words.join(" ")
        }
    }
}

/// How much of a server's description goes into each of its tools' embedded text.
const SERVER_CHARS: usize = 200;

fn walk_schema(schema: &Value, prefix: &str, depth: usize, out: &mut Vec<Param>) {
    if depth >= MAX_DEPTH {
        return;
    }
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        // Arrays of objects: describe the item properties under the array's name.
        if let Some(items) = schema.get("items") {
            walk_schema(items, prefix, depth + 1, out);
        }
        return;
    };
    for (name, prop) in props {
        let path = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}.{name}")
        };
        let description = prop
            .get("description")
            .or_else(|| prop.get("title"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        out.push(Param {
            name: path.clone(),
            description,
        });
        walk_schema(prop, &path, depth + 1, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn walks_nested_properties_and_array_items() {
        let mut sc = ServerCatalog::new("gh");
        sc.info.description = Some("GitHub".into());
        let tool = Tool::new(
            "create_issue",
            "Create an issue",
            json!({"type": "object", "properties": {
                "title": {"type": "string", "description": "Issue title"},
                "labels": {"type": "array", "items": {"type": "object", "properties": {
                    "name": {"type": "string", "title": "Label name"}}}}
            }}),
        );
        sc.tools.push(Entry::new(tool));
        let doc = Doc::from_entry(&sc, &sc.tools[0]);
        let mut names: Vec<_> = doc.params.iter().map(|p| p.name.as_str()).collect();
        names.sort_unstable();
        assert_eq!(names, ["labels", "labels.name", "title"]);
        let label = doc.params.iter().find(|p| p.name == "labels.name").unwrap();
        assert_eq!(label.description, "Label name");
        assert_eq!(doc.server_description, "GitHub");
        let text = doc.dense_text();
        assert!(
            text.starts_with("gh: create issue: Create an issue ("),
            "{text}"
        );
        assert!(text.ends_with(". GitHub"), "{text}");
        assert_eq!(doc.name_text(), "create issue");
        assert_eq!(
            Doc::new("s", "getWeatherForecast", "", &[]).name_text(),
            "get weather forecast"
        );
        assert_eq!(Doc::new("s", "?", "", &[]).name_text(), "?");
    }
}
