//! The search facade: the two tools a host exposes instead of a whole catalog
//! (`search_tools` to find definitions, `call_tool` to call one by name). Shared by the gateway's
//! `--expose facade`, the loop's search mode and the rent what-if line.

use serde_json::json;

use crate::catalog::Tool;

/// Name of the search tool.
pub const SEARCH_TOOL: &str = "search_tools";
/// Name of the call tool.
pub const CALL_TOOL: &str = "call_tool";

/// How a model calls the tools a search found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Found {
    /// Through `call_tool` (the gateway's facade: the tools array never changes).
    ViaCallTool,
    /// Directly by name: they join the tools array at the next request (the loop's search mode).
    Loaded,
}

/// The search tool, telling the model how to call what it finds.
pub fn search_tool(found: Found) -> Tool {
    let then = match found {
        Found::ViaCallTool => "Call a match with call_tool.",
        Found::Loaded => "The tools found join your tool list: call them directly by name.",
    };
    Tool::new(
        SEARCH_TOOL,
        format!(
            "Search the available tools by what you want to do. Returns the best matches with their names, descriptions and input schemas, and how many tools exist in all. Search once per step of a task, with a few words for one action (\"fetch a web page\", \"write a file\"): a short query finds the right tool better than the whole task. {then}"
        ),
        json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "One action you want to do, in a few plain words.", "maxLength": 500},
                "limit": {"type": "integer", "description": "How many matches to return (default 5).", "minimum": 1, "maximum": 20}
            },
            "required": ["query"],
            "additionalProperties": false
        }),
    )
}

/// The gateway facade's tool definitions: `search_tools` and `call_tool`.
pub fn tools() -> Vec<Tool> {
    vec![
        search_tool(Found::ViaCallTool),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_search_tool_names_only_the_way_of_calling_that_exists() {
        let text = |f| search_tool(f).description.unwrap_or_default();
        // The loop's search mode has no call_tool: its search tool must not send models there.
        assert!(!text(Found::Loaded).contains("call_tool"));
        assert!(text(Found::Loaded).contains("directly by name"));
        assert!(text(Found::ViaCallTool).contains("call_tool"));
        // The gateway's facade is exactly its search tool and call_tool.
        let names: Vec<String> = tools().into_iter().map(|t| t.name).collect();
        assert_eq!(names, [SEARCH_TOOL, CALL_TOOL]);
        assert_eq!(tools()[0], search_tool(Found::ViaCallTool));
    }
}
