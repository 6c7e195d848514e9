//! Fuzz target: a config file's text, read as native TOML, `mcpServers` JSON (with comments),
//! goose or Continue YAML, OpenCode or Crush JSON, Claude Code's state file, Gemini CLI's
//! settings (bare `$VAR`), a layered host's file (Amp's with its permissions), Claude Desktop's
//! config, Antigravity's `mcp_config.json`, an MCP bundle's manifest, mcphost's YAML or JSON,
//! LibreChat's YAML, a Kiro CLI agent file (and mcp-proxy's JSON, by its content),
//! with each format's variable expansion, and the tool permissions read with them (and the
//! names messages give the settings that decide).
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use switchboard_host::Config;

const NAMES: [&str; 18] = [
    "switchboard.toml",
    "mcp.json",
    "config.yaml",
    "config",
    ".codex/config.toml",
    "opencode.jsonc",
    "crush.json",
    ".claude.json",
    ".gemini/settings.json",
    ".cursor/mcp.json",
    "Claude/claude_desktop_config.json",
    "bundle/manifest.json",
    ".amp/settings.json",
    ".agents/mcp_config.json",
    ".mcphost.yml",
    ".mcphost.json",
    "librechat.yaml",
    ".kiro/agents/dev.json",
];

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let path = Path::new("/project").join(NAMES[usize::from(first) % NAMES.len()]);
    let env = |name: &str| (name.len() % 2 == 0).then(|| format!("value-of-{name}"));
    if let Ok(config) = Config::parse(&path, text, &env) {
        let _ = config.server_names().count();
        // Another host's permission rules, asked about a few tool names, with no arguments and
        // with the text itself as a call's arguments when it is a JSON object (so conditions
        // such as Amp's `matches` meet arguments shaped like themselves).
        let args: Option<serde_json::Map<String, serde_json::Value>> =
            serde_json::from_str(text).ok();
        for server in &config.servers {
            for tool in ["read", "delete_repo", "get.page", ""] {
                let _ = server.filter.permits(tool);
                let _ = server.filter.list_hiding(tool);
                let _ = server.approve_setting(tool);
                let _ = server.approve_for(tool, None);
                let _ = server.approve_for(tool, args.as_ref());
                let _ = server.filter.rules().call(tool, args.as_ref());
                // The same object as the tool's annotations, for rules that test them.
                let _ = server
                    .filter
                    .rules()
                    .decide(tool, args.as_ref(), args.as_ref());
            }
        }
        let _ = config.clone().with_profile("x");
        let _ = config.with_default_approve(switchboard_host::config::Approve::Always, "--approve always");
    }
});
