//! Google Antigravity's `mcp_config.json`: the user's (`~/.gemini/antigravity/mcp_config.json`)
//! and a project's, in one of its customization folders (`.agents/`, `.agent/`, `_agents/`,
//! `_agent/`). Its entries are `mcpServers` entries with `serverUrl` for a remote server, which
//! the shared reader takes; the one quirk is that an entry naming both `serverUrl` and a
//! `command` runs the URL, where switchboard would otherwise refuse the entry as ambiguous.

use std::borrow::Cow;
use std::path::Path;

use serde_json::Value;

/// The folders of a project Antigravity reads customizations (and its `mcp_config.json`) from.
pub const PROJECT_FOLDERS: [&str; 4] = [".agents", ".agent", "_agents", "_agent"];

/// Whether `path` is one of Antigravity's `mcp_config.json` files.
pub fn is_config_file(path: &Path) -> bool {
    if path.file_name().and_then(|n| n.to_str()) != Some("mcp_config.json") {
        return false;
    }
    let Some(folder) = path.parent() else {
        return false;
    };
    let name = folder.file_name().and_then(|n| n.to_str()).unwrap_or("");
    PROJECT_FOLDERS.contains(&name)
        || (name == "antigravity"
            && folder
                .parent()
                .and_then(|p| p.file_name())
                .is_some_and(|n| n == ".gemini"))
}

/// The entry as Antigravity runs it: with a `serverUrl`, the URL, whatever `command` says too.
/// `true` when a command was set aside for it.
pub fn entry(value: Cow<'_, Value>) -> (Cow<'_, Value>, bool) {
    let both =
        value.get("serverUrl").is_some_and(Value::is_string) && value.get("command").is_some();
    if !both {
        return (value, false);
    }
    let mut entry = value.into_owned();
    if let Some(map) = entry.as_object_mut() {
        for key in ["command", "args", "env", "cwd", "type"] {
            map.remove(key);
        }
    }
    (Cow::Owned(entry), true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn antigravity_files_are_known_by_their_place() {
        for p in [
            "/p/.agents/mcp_config.json",
            "/p/_agent/mcp_config.json",
            "/home/u/.gemini/antigravity/mcp_config.json",
        ] {
            assert!(is_config_file(Path::new(p)), "{p}");
        }
        for p in [
            "/home/u/.codeium/windsurf/mcp_config.json",
            "/p/.agents/mcp.json",
            "/x/antigravity/mcp_config.json",
        ] {
            assert!(!is_config_file(Path::new(p)), "{p}");
        }
    }

    #[test]
    fn a_server_url_wins_over_a_command() {
        let (e, set_aside) = entry(Cow::Owned(json!({
            "serverUrl": "https://x/mcp", "command": "x", "args": ["a"], "headers": {"A": "b"}
        })));
        assert!(set_aside);
        assert_eq!(
            *e,
            json!({"serverUrl": "https://x/mcp", "headers": {"A": "b"}})
        );
        let local = json!({"command": "x"});
        let (e, set_aside) = entry(Cow::Borrowed(&local));
        assert!(!set_aside && matches!(e, Cow::Borrowed(_)));
    }
}
