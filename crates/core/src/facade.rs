//! The search facade: the two tools a host exposes instead of a whole catalog
//! (`search_tools` to find definitions, `call_tool` to call one by name). Shared by the gateway's
//! `--expose facade`, the loop's search mode and the rent what-if line.

use serde_json::json;

use crate::catalog::Tool;

/// Name of the search tool.
pub const SEARCH_TOOL: &str = "search_tools";
/// Name of the call tool.
pub const CALL_TOOL: &str = "call_tool";

/// The facade's tool definitions.
pub fn tools() -> Vec<Tool> {
    vec![
        Tool::new(
            SEARCH_TOOL,
            "Search the available tools by what you want to do. Returns the best matches with their names, descriptions and input schemas, and how many tools exist in all. Call a match with call_tool.",
            json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "What you want to do, in plain words.", "maxLength": 500},
                    "limit": {"type": "integer", "description": "How many matches to return (default 5).", "minimum": 1, "maximum": 20}
                },
                "required": ["query"],
                "additionalProperties": false
            }),
        ),
        Tool::new(
            CALL_TOOL,
            "Call a tool found with search_tools, by its exact name, with arguments that match its input schema.",
            json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "The tool's name as search_tools returned it.", "maxLength": 128},
                    "arguments": {"type": "object", "description": "The tool's arguments."}
                },
                "required": ["name", "arguments"],
                "additionalProperties": false
            }),
        ),
    ]
}
