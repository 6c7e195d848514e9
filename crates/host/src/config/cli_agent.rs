//! An Amazon Q Developer CLI or Kiro CLI agent file (`.amazonq/cli-agents/NAME.json`,
//! `~/.aws/amazonq/cli-agents/`, `.kiro/agents/NAME.json`, `~/.kiro/agents/`), read with its
//! `mcpServers` as those CLIs read it (Amazon Q CLI's `docs/agent-format.md`): `tools` names
//! what the agent can use (`*`, `@SERVER` for all of a server's tools, `@SERVER/TOOL`), so the
//! tools of a server it does not name are kept from models; `allowedTools` runs without asking
//! the MCP tools its patterns match (`@SERVER`, `@SERVER/TOOL`, with `*` and `?` in either
//! part); `toolAliases` (`"@SERVER/TOOL": "name"`) gives a tool the name models see, as a
//! tool's `name` setting does; `useLegacyMcpJson` (Amazon Q) or `includeMcpJson` (Kiro) adds the
//! servers of the CLI's workspace and global `mcp.json` under the agent's own.

use serde_json::Value;
use switchboard_core::host_rules::{literal, wildcard};
use switchboard_core::{HostRules, ToolFilter, Verdict};

use super::entry::{self, Context};
use super::{Config, DisabledServer, ServerConfig};

/// Whether a JSON config is such an agent file: it says which tools its agent has or may run
/// unasked, or whether it takes the CLI's `mcp.json` servers.
pub fn is_agent(root: &Value) -> bool {
    root.get("tools").is_some_and(Value::is_array)
        || root.get("allowedTools").is_some_and(Value::is_array)
        || ["useLegacyMcpJson", "includeMcpJson"]
            .iter()
            .any(|k| root.get(*k).is_some_and(Value::is_boolean))
}

/// Apply the agent file `root` to the servers read from its `mcpServers`.
pub fn apply(
    ctx: &Context<'_>,
    root: &Value,
    servers: &mut Vec<ServerConfig>,
    disabled: &mut Vec<DisabledServer>,
    warnings: &mut Vec<String>,
) {
    let legacy = ["useLegacyMcpJson", "includeMcpJson"]
        .iter()
        .any(|k| root.get(*k) == Some(&Value::Bool(true)));
    if legacy && ctx.policy {
        add_mcp_json(ctx, servers, disabled, warnings);
    }
    let file = ctx.path.display().to_string();
    let tools = root
        .get("tools")
        .and_then(Value::as_array)
        .map(|_| entry::strings(root.get("tools")));
    let allowed = entry::strings(root.get("allowedTools"));
    let aliases: Vec<(&str, &str)> = root
        .get("toolAliases")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(tool, alias)| Some((tool.as_str(), alias.as_str()?)))
        .collect();
    for server in servers.iter_mut() {
        let name = server.name().to_string();
        let prefix = format!("@{name}/");
        for (tool, alias) in &aliases {
            let Some(tool) = tool.strip_prefix(prefix.as_str()) else {
                continue;
            };
            if switchboard_core::names::is_valid_everywhere(alias) {
                server
                    .tool_overrides
                    .entry(tool.to_string())
                    .or_default()
                    .name = Some(alias.to_string());
            } else {
                warnings.push(format!(
                    "{file}: toolAliases \"@{name}/{tool}\": {alias:?} is not a tool name every provider takes; the tool keeps its own"
                ));
            }
        }
        if let Some(tools) = &tools {
            let all = tools.iter().any(|t| *t == "*" || *t == format!("@{name}"));
            if !all {
                let prefix = format!("@{name}/");
                let named: Vec<String> = tools
                    .iter()
                    .filter_map(|t| t.strip_prefix(prefix.as_str()))
                    .map(literal)
                    .collect();
                let deny_name = server.filter.list_names().1.to_string();
                let rules = server.filter.rules().clone();
                let filter = if named.is_empty() {
                    Ok(ToolFilter::deny_all())
                } else {
                    ToolFilter::new(&named, &server.deny)
                };
                match filter {
                    Ok(f) => {
                        server.filter = f
                            .with_rules(rules)
                            .lists_named("the agent's tools", deny_name);
                    }
                    Err(e) => warnings.push(format!("{file}: tools for {name:?}: {e}")),
                }
            }
        }
        // Patterns for this server: `@SERVER` or `@SERVER/TOOL`, wildcards in either part.
        let mut rules = HostRules::exact(&name, "@", "/");
        for pattern in allowed.iter().filter_map(|p| p.strip_prefix('@')) {
            let (server_part, tool_part) = pattern.split_once('/').unwrap_or((pattern, "*"));
            let names_this = if server_part.contains(['*', '?']) {
                globset::Glob::new(&wildcard(server_part))
                    .map(|g| g.compile_matcher().is_match(&name))
                    .unwrap_or(false)
            } else {
                server_part == name
            };
            if !names_this || server_part == "builtin" {
                continue;
            }
            let glob = format!("@{}/{}", literal(&name), wildcard(tool_part));
            let rule = format!("the agent's allowedTools \"@{pattern}\"");
            if let Err(e) = rules.push(&glob, Verdict::Allow, rule, file.clone()) {
                warnings.push(format!("{file}: allowedTools \"@{pattern}\": {e}"));
            }
        }
        if !rules.is_empty() {
            if server.filter.rules().is_empty() {
                server.filter = std::mem::take(&mut server.filter).with_rules(rules);
            } else {
                warnings.push(format!(
                    "{file}: server {name:?} already has another host's permission rules; the agent's allowedTools are not applied to it"
                ));
            }
        }
    }
}

/// The servers of the CLI's workspace and global `mcp.json` (Kiro's when the agent file is in a
/// `.kiro` folder, Amazon Q's otherwise), under the agent's own: a name the agent or the
/// workspace already has is not taken again.
fn add_mcp_json(
    ctx: &Context<'_>,
    servers: &mut Vec<ServerConfig>,
    disabled: &mut Vec<DisabledServer>,
    warnings: &mut Vec<String>,
) {
    let Some(home) = ctx.home() else {
        return;
    };
    let kiro = ctx.path.components().any(|c| c.as_os_str() == ".kiro");
    let (label, project, user) = if kiro {
        (
            "Kiro",
            ".kiro/settings/mcp.json",
            home.join(".kiro/settings/mcp.json"),
        )
    } else {
        (
            "Amazon Q",
            ".amazonq/mcp.json",
            home.join(".aws/amazonq/mcp.json"),
        )
    };
    let mut files = Vec::new();
    if let Some(cwd) = &ctx.cwd {
        files.push(("workspace", cwd.join(project)));
    }
    files.push(("global", user));
    for (which, path) in files {
        ctx.input(&path);
        if !path.is_file() {
            continue;
        }
        let read = match Config::load_part(&path, ctx.env) {
            Ok(c) => c,
            Err(e) => {
                warnings.push(format!("{e} (the agent's other servers are read)"));
                continue;
            }
        };
        warnings.extend(read.warnings);
        let origin = format!("{label} {which} mcp.json ({})", path.display());
        let taken = |servers: &[ServerConfig], disabled: &[DisabledServer], name: &str| {
            servers.iter().any(|s| s.name() == name) || disabled.iter().any(|d| d.name == name)
        };
        for mut s in read.servers {
            if !taken(servers, disabled, s.name()) {
                s.origin = Some(origin.clone());
                servers.push(s);
            }
        }
        for mut d in read.disabled {
            if !taken(servers, disabled, &d.name) {
                d.origin = Some(origin.clone());
                disabled.push(d);
            }
        }
    }
}
