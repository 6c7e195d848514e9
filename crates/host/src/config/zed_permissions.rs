//! Zed's tool permissions for the MCP tools of its `context_servers`, read from its
//! `settings.json`: `agent.tool_permissions.tools["mcp:SERVER:TOOL"]` with `default` (or the
//! older `default_mode`) `"allow"`, `"confirm"` or `"deny"`, and `agent.tool_permissions.default`
//! (before it, `agent.always_allow_tool_actions: true`) for every tool without its own. A tool's `always_deny` / `always_confirm` patterns are matched
//! against a call's input, which switchboard does not read: while any are set, every call of the
//! tool asks.

use serde_json::Value;
use switchboard_core::host_rules::literal;
use switchboard_core::{HostRules, Verdict};

use super::ServerConfig;

/// Give each server the rules of Zed's settings that name it; a value Zed would not take is a
/// warning.
pub fn apply(
    path: &std::path::Path,
    root: &Value,
    servers: &mut [ServerConfig],
    warnings: &mut Vec<String>,
) {
    let older = root.pointer("/agent/always_allow_tool_actions") == Some(&Value::Bool(true));
    let none = Value::Null;
    let permissions = match root.pointer("/agent/tool_permissions") {
        Some(p) => p,
        None if older => &none,
        None => return,
    };
    let file = path.display().to_string();
    let mode = |v: Option<&Value>, what: &str, warnings: &mut Vec<String>| -> Option<Verdict> {
        match v?.as_str() {
            Some("allow") => Some(Verdict::Allow),
            Some("confirm") => Some(Verdict::Ask),
            Some("deny") => Some(Verdict::Deny),
            _ => {
                warnings.push(format!(
                    "{file}: Zed's {what}: not applied: not \"allow\", \"confirm\" or \"deny\""
                ));
                None
            }
        }
    };
    // Before `tool_permissions.default`, Zed had `always_allow_tool_actions`.
    let fallback = mode(
        permissions.get("default"),
        "agent.tool_permissions.default",
        warnings,
    )
    .map(|v| (v, "Zed's agent.tool_permissions.default"))
    .or(older.then_some((Verdict::Allow, "Zed's agent.always_allow_tool_actions")));
    let tools = permissions
        .get("tools")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    for server in servers.iter_mut() {
        let mut rules = HostRules::exact(server.name(), "mcp:", ":");
        let prefix = format!("mcp:{}:", server.name());
        for (key, settings) in &tools {
            let Some(tool) = key.strip_prefix(&prefix) else {
                continue;
            };
            let what = format!("agent.tool_permissions.tools[{key:?}]");
            let guarded = ["always_deny", "always_confirm"].iter().any(|k| {
                settings
                    .get(*k)
                    .and_then(Value::as_array)
                    .is_some_and(|l| !l.is_empty())
            });
            let own = settings
                .get("default")
                .or_else(|| settings.get("default_mode"));
            let pattern = format!("mcp:{}:{}", literal(server.name()), literal(tool));
            if guarded {
                let _ = rules.push(
                    &pattern,
                    Verdict::Deny,
                    true,
                    format!("Zed's {what} always_deny / always_confirm"),
                    file.clone(),
                );
            }
            if let Some(verdict) = mode(own, &format!("{what}.default"), warnings) {
                let _ = rules.push(
                    &pattern,
                    verdict,
                    false,
                    format!("Zed's {what}"),
                    file.clone(),
                );
            }
        }
        if let Some((verdict, rule)) = fallback {
            let _ = rules.push("*", verdict, false, rule.into(), file.clone());
        }
        if !rules.is_empty() {
            server.filter = std::mem::take(&mut server.filter).with_rules(rules);
        }
    }
}
