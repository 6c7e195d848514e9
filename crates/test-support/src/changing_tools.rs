//! The changing-tools fixture server (`crates/gateway/tests/fixtures/changing-tools.mjs`): a
//! real MCP server over stdio whose tool list is read from a JSON file the test rewrites, so a
//! test can change a tool's definition mid-session.

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::peers::{node, repo_root};

/// The fixture script.
pub fn script() -> PathBuf {
    repo_root().join("crates/gateway/tests/fixtures/changing-tools.mjs")
}

/// Write the fixture's tools: `echo` with `description`, and `stable`. Written then renamed,
/// so the fixture never reads a half-written file.
pub fn write_tools(path: &Path, description: &str) {
    let tools = json!({"tools": [
        {"name": "echo", "description": description, "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}},
        {"name": "stable", "description": "Never changes.", "inputSchema": {"type": "object"}}
    ]});
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, tools.to_string()).expect("write the fixture's tools");
    std::fs::rename(&tmp, path).expect("rename the fixture's tools into place");
}

/// A config naming the fixture as server `changing`, reading its tools from `tools`, with
/// `pin = "enforce"`.
pub fn pinned_config(tools: &Path) -> String {
    format!(
        "[servers.changing]\ncommand = {:?}\nargs = [{:?}, {:?}]\npin = \"enforce\"\n",
        node(),
        script().display().to_string(),
        tools.display().to_string()
    )
}
