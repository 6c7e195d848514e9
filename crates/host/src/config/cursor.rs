//! Cursor's `permissions.json`, read with Cursor's `mcp.json` files: the user's
//! (`~/.cursor/permissions.json`) and the project's (`.cursor/permissions.json` beside the
//! project's `mcp.json`), whose lists Cursor joins. Their `mcpAllowlist` names the MCP tools that
//! run without asking, as `SERVER:TOOL` patterns (`*` any characters, `?` one).

use std::path::PathBuf;

use switchboard_core::host_rules::wildcard;
use switchboard_core::{HostRules, Verdict};

use super::ServerConfig;
use super::entry::Context;

/// Let the tools the allowlists name run without asking; an entry that is not `SERVER:TOOL` is
/// a warning.
pub fn apply(ctx: &Context<'_>, servers: &mut [ServerConfig], warnings: &mut Vec<String>) {
    let Some(home) = ctx.home() else {
        return;
    };
    let project = super::layers::files_of(ctx, "Cursor")
        .and_then(|(_, project)| project)
        .and_then(|mcp| Some(mcp.parent()?.join("permissions.json")));
    let user = home.join(".cursor/permissions.json");
    let files: Vec<PathBuf> = std::iter::once(user).chain(project).collect();
    // (pattern, file)
    let mut patterns: Vec<(String, String)> = Vec::new();
    for (i, path) in files.iter().enumerate() {
        // The project's file may be the user's (Cursor opened on the home folder).
        if i > 0 && super::layers::same_file(path, &files[0]) {
            continue;
        }
        ctx.input(path);
        if !path.is_file() {
            continue;
        }
        let root = match super::claude_settings::read_json(path) {
            Ok(v) => v,
            Err(e) => {
                warnings.push(format!(
                    "{}: Cursor's permissions not read: {e}",
                    path.display()
                ));
                continue;
            }
        };
        let file = path.display().to_string();
        for entry in super::entry::strings(root.get("mcpAllowlist")) {
            if entry.contains(':') {
                patterns.push((entry, file.clone()));
            } else {
                warnings.push(format!(
                    "{file}: Cursor's mcpAllowlist {entry:?}: not applied: not SERVER:TOOL"
                ));
            }
        }
    }
    if patterns.is_empty() {
        return;
    }
    for server in servers.iter_mut() {
        let mut rules = HostRules::exact(server.name(), "", ":");
        for (pattern, file) in &patterns {
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
