//! Zed's tool permissions for the MCP tools of its `context_servers`, read from its
//! `settings.json`: `agent.tool_permissions.tools["mcp:SERVER:TOOL"]` with `default` (or the
//! older `default_mode`) `"allow"`, `"confirm"` or `"deny"`, and `agent.tool_permissions.default`
//! (before it, `agent.always_allow_tool_actions: true`) for every tool without its own.
//!
//! A tool's `always_deny`, `always_confirm` and `always_allow` regular expressions are matched,
//! as Zed matches them for an MCP tool, against an empty input: one that matches it (`".*"`,
//! `"^$"`) denies, asks or allows every call, in that order of precedence; one that does not
//! never applies (a warning says so); one that does not compile makes Zed refuse every call.

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
            let pattern = format!("mcp:{}:{}", literal(server.name()), literal(tool));
            let own = settings
                .get("default")
                .or_else(|| settings.get("default_mode"));
            // The tool's default is read (and a bad value named) even where a pattern decides.
            let default = mode(own, &format!("{what}.default"), warnings)
                .map(|v| (v, format!("Zed's {what}")));
            let decided = by_patterns(settings, &what, &file, warnings).or(default);
            if let Some((verdict, rule)) = decided {
                let _ = rules.push(&pattern, verdict, rule, file.clone());
            }
        }
        if let Some((verdict, rule)) = fallback {
            let _ = rules.push("*", verdict, rule.into(), file.clone());
        }
        if !rules.is_empty() {
            server.filter = std::mem::take(&mut server.filter).with_rules(rules);
        }
    }
}

/// What a tool's patterns decide for every call of an MCP tool, which Zed matches against an
/// empty input: a pattern that does not compile refuses (as in Zed), then `always_deny`,
/// `always_confirm` and `always_allow`, the first list with a pattern matching `""`. Patterns
/// that cannot match it are named in a warning: they never apply to an MCP tool.
fn by_patterns(
    settings: &Value,
    what: &str,
    file: &str,
    warnings: &mut Vec<String>,
) -> Option<(Verdict, String)> {
    let mut decided = None;
    for (list, verdict) in [
        ("always_deny", Verdict::Deny),
        ("always_confirm", Verdict::Ask),
        ("always_allow", Verdict::Allow),
    ] {
        let Some(patterns) = settings.get(list).and_then(Value::as_array) else {
            continue;
        };
        for entry in patterns {
            let text = entry
                .get("pattern")
                .or(Some(entry))
                .and_then(Value::as_str)
                .unwrap_or_default();
            match regex::Regex::new(text) {
                Err(e) => {
                    // The regex crate's message spans lines; its last says what is wrong.
                    let e = e.to_string();
                    let e = e.lines().last().unwrap_or_default().trim_start_matches("error: ");
                    warnings.push(format!(
                        "{file}: Zed's {what}.{list} {text:?} is not a regular expression ({e}), so Zed refuses every call of the tool; so does switchboard"
                    ));
                    return Some((Verdict::Deny, format!("Zed's {what}.{list} {text:?}, which does not compile")));
                }
                Ok(re) if re.is_match("") => {
                    if decided.is_none() {
                        decided = Some((verdict, format!("Zed's {what}.{list} {text:?}")));
                    }
                }
                Ok(_) => warnings.push(format!(
                    "{file}: Zed's {what}.{list} {text:?} never applies: Zed matches an MCP tool's patterns against an empty input"
                )),
            }
        }
    }
    decided
}
