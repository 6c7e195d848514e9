//! Cursor's `~/.cursor/permissions.json`, read with Cursor's `mcp.json` files: its
//! `mcpAllowlist` names the MCP tools that run without asking, as `SERVER:TOOL` patterns (`*`
//! any characters, `?` one).

use switchboard_core::host_rules::wildcard;
use switchboard_core::{HostRules, Verdict};

use super::ServerConfig;
use super::entry::Context;

/// Let the tools the allowlist names run without asking; an entry that is not `SERVER:TOOL` is
/// a warning.
pub fn apply(ctx: &Context<'_>, servers: &mut [ServerConfig], warnings: &mut Vec<String>) {
    let Some(home) = ctx.home() else {
        return;
    };
    let path = home.join(".cursor/permissions.json");
    ctx.input(&path);
    if !path.is_file() {
        return;
    }
    let root = match super::claude_settings::read_json(&path) {
        Ok(v) => v,
        Err(e) => {
            warnings.push(format!(
                "{}: Cursor's permissions not read: {e}",
                path.display()
            ));
            return;
        }
    };
    let entries = super::entry::strings(root.get("mcpAllowlist"));
    let file = path.display().to_string();
    let mut patterns = Vec::new();
    for entry in entries {
        if entry.contains(':') {
            patterns.push(entry);
        } else {
            warnings.push(format!(
                "{file}: Cursor's mcpAllowlist {entry:?}: not applied: not SERVER:TOOL"
            ));
        }
    }
    if patterns.is_empty() {
        return;
    }
    for server in servers.iter_mut() {
        let mut rules = HostRules::exact(server.name(), "", ":");
        for pattern in &patterns {
            let _ = rules.push(
                &wildcard(pattern),
                Verdict::Allow,
                format!("Cursor's mcpAllowlist {pattern:?}"),
                file.clone(),
            );
        }
        server.filter = std::mem::take(&mut server.filter).with_rules(rules);
    }
}
