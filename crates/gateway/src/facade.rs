//! The facade's `search_tools` answer (`serve --expose facade`): the arguments read by the
//! host's one reader, the ranking from the snapshot's index (hybrid once its embeddings are
//! ready), and each match with its public name, description and input schema.

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Map, Value, json};
use switchboard_host::finder::SearchArgs;

use crate::gateway::Gateway;

/// Answer one `search_tools` call.
pub(crate) async fn search(gateway: &Gateway, args: Map<String, Value>) -> CallToolResult {
    let args = match SearchArgs::parse(&Value::Object(args)) {
        Ok(a) => a,
        Err(why) => return CallToolResult::error(vec![ContentBlock::text(why)]),
    };
    gateway.model_before_search().await;
    let snapshot = gateway.snapshot();
    let hits = match &snapshot.search {
        Some(slot) => args.run(&*slot.current().await),
        None => Vec::new(),
    };
    let tools: Vec<Value> = hits
        .iter()
        .filter_map(|h| snapshot.by_pair.get(&(h.server.clone(), h.tool.clone())))
        .filter_map(|&i| snapshot.view.tools.get(i))
        .map(|t| {
            json!({
                "name": t.public,
                "description": t.def.description,
                "inputSchema": t.def.input_schema,
            })
        })
        .collect();
    let mut body = json!({
        "tools": tools,
        "total_tools": snapshot.view.tool_count(),
    });
    if let Some(note) = SearchArgs::note_for(tools.len()) {
        body["note"] = note.into();
    }
    let mut result = CallToolResult::success(vec![ContentBlock::text(body.to_string())]);
    result.structured_content = Some(body);
    result
}
