//! What a server's tool lists say of each tool's `execution` (MCP 2025-11-25): whether it runs
//! only as a task (`taskSupport: "required"`). rmcp's tool type has no such field, so its
//! listing drops it; the tool-list answers are read for it on their way to rmcp instead (a
//! stdio server's lines by `raw`, a Streamable HTTP server's events by `http_screen`), and the
//! supervisor puts it back into the catalog.

use std::collections::HashMap;
use std::sync::Mutex;

use serde_json::{Map, Value};

use crate::slot::lock;

/// Each listed tool's `execution`, by tool name, as one server's latest lists said it.
#[derive(Debug, Default)]
pub(crate) struct Executions {
    by_tool: Mutex<HashMap<String, Value>>,
}

impl Executions {
    /// Keep the `execution` of each tool a `tools/list` answer in `message` (one JSON-RPC
    /// message) lists; a tool listed without one loses what it had. Only a message naming an
    /// `inputSchema` (every tool list does) is parsed.
    pub(crate) fn note_tools(&self, message: &[u8]) {
        if memchr::memmem::find(message, b"\"inputSchema\"").is_none() {
            return;
        }
        let Ok(message) = serde_json::from_slice::<Value>(message) else {
            return;
        };
        let Some(tools) = message
            .get("result")
            .and_then(|r| r.get("tools"))
            .and_then(Value::as_array)
        else {
            return;
        };
        let mut by_tool = lock(&self.by_tool);
        for tool in tools {
            let Some(name) = tool.get("name").and_then(Value::as_str) else {
                continue;
            };
            match tool.get("execution") {
                Some(execution @ Value::Object(fields)) if !says_nothing(fields) => {
                    by_tool.insert(name.to_string(), execution.clone());
                }
                _ => {
                    by_tool.remove(name);
                }
            }
        }
    }

    /// The `execution` the server listed `tool` with, if it says more than the default.
    pub(crate) fn get(&self, tool: &str) -> Option<Value> {
        lock(&self.by_tool).get(tool).cloned()
    }
}

/// An `execution` that says only what its absence says (`taskSupport: "forbidden"`, which the
/// TypeScript SDK writes on every tool): not kept, so a tool's definition, and the hash pins
/// compare, is the same as when it was listed without it.
fn says_nothing(execution: &Map<String, Value>) -> bool {
    execution
        .iter()
        .all(|(k, v)| k == "taskSupport" && v == "forbidden")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_tools_execution_is_kept_until_a_list_drops_it() {
        let executions = Executions::default();
        let list = |tools: Value| {
            let message = json!({"jsonrpc": "2.0", "id": 2, "result": {"tools": tools}});
            executions.note_tools(message.to_string().as_bytes());
        };
        let schema = json!({"type": "object"});
        list(json!([
            {"name": "research", "inputSchema": schema, "execution": {"taskSupport": "required"}},
            {"name": "maybe", "inputSchema": schema, "execution": {"taskSupport": "optional"}},
            {"name": "echo", "inputSchema": schema, "execution": {"taskSupport": "forbidden"}},
            {"name": "plain", "inputSchema": schema},
        ]));
        assert_eq!(
            executions.get("research"),
            Some(json!({"taskSupport": "required"}))
        );
        assert_eq!(
            executions.get("maybe"),
            Some(json!({"taskSupport": "optional"}))
        );
        // The default said out loud is not kept.
        assert_eq!(executions.get("echo"), None);
        assert_eq!(executions.get("plain"), None);
        // A message that is no tool list changes nothing; a new list without it drops it.
        executions.note_tools(
            br#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"\"inputSchema\""}]}}"#,
        );
        assert!(executions.get("research").is_some());
        list(json!([{"name": "research", "inputSchema": schema}]));
        assert_eq!(executions.get("research"), None);
    }
}
