//! Crush's `crush.json`, read as-is: its servers under `mcp` (`stdio`, `http`, `sse`), with
//! Crush's shell-style `$VAR` references and `timeout` in seconds, and the MCP tools its
//! `permissions.allowed_tools` lets run without asking (`mcp_SERVER_TOOL`). The rest of the
//! file (providers, LSPs, built-in tools) is Crush's business.

use serde_json::{Map, Value};
use switchboard_core::{HostRules, Verdict};

use super::{ServerConfig, entry};

/// The MCP tools `permissions.allowed_tools` names (`mcp_SERVER_TOOL`, exactly) run without
/// asking, as in Crush.
pub fn apply_allowed(path: &std::path::Path, root: &Value, servers: &mut [ServerConfig]) {
    let names = entry::strings(root.pointer("/permissions/allowed_tools"));
    if !names.iter().any(|n| n.starts_with("mcp_")) {
        return;
    }
    let file = path.display().to_string();
    for server in servers.iter_mut() {
        let mut rules = HostRules::exact(server.name(), "mcp_", "_");
        for name in names.iter().filter(|n| n.starts_with("mcp_")) {
            // Exact names: every glob character stands for itself, so the pattern compiles.
            let _ = rules.push(
                &switchboard_core::host_rules::literal(name),
                Verdict::Allow,
                format!("Crush's permissions.allowed_tools {name:?}"),
                file.clone(),
            );
        }
        server.filter = std::mem::take(&mut server.filter).with_rules(rules);
    }
}

/// A Crush server entry as the JSON entry the other hosts write, or the key that is wrong (when
/// it is one) and what is wrong.
pub fn to_entry(value: &Value) -> Result<Value, (Option<String>, String)> {
    let Some(from) = value.as_object() else {
        return Err((None, "must be an object".into()));
    };
    let mut out = Map::new();
    for key in [
        "type", "command", "args", "env", "cwd", "url", "headers", "disabled",
    ] {
        if let Some(v) = from.get(key).filter(|v| !v.is_null()) {
            out.insert(key.to_string(), v.clone());
        }
    }
    // One timeout, in seconds, for starting the server and for each call.
    if let Some(t) = from.get("timeout").filter(|v| !v.is_null()) {
        out.insert("startup_timeout".into(), t.clone());
        out.insert("call_timeout".into(), t.clone());
    }
    if let Some(t) = from.get("disabled_tools").filter(|v| !v.is_null()) {
        out.insert("excludeTools".into(), t.clone());
    }
    let mut out = Value::Object(out);
    entry::rewrite_strings(&mut out, &mut |s| shell_references(s)).map_err(|m| (None, m))?;
    Ok(out)
}

/// `$VAR` as switchboard's `${VAR}`; `${VAR}` and `${VAR:-default}` mean the same in both. A
/// command substitution `$(...)` is refused: switchboard does not run commands found in a
/// config to build its values.
pub fn shell_references(s: &str) -> Result<String, String> {
    let mut out = String::with_capacity(s.len() + 8);
    let mut chars = s.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c != '$' {
            out.push(c);
            continue;
        }
        match chars.peek().map(|&(_, next)| next) {
            Some('(') => {
                return Err("a value runs a command to make itself (`$(...)`), which switchboard does not do; put the value in an environment variable and write $NAME".into());
            }
            Some(n) if n == '_' || n.is_ascii_alphabetic() => {
                let start = i + 1;
                let mut end = start;
                while let Some(&(j, c)) = chars.peek() {
                    if c == '_' || c.is_ascii_alphanumeric() {
                        end = j + c.len_utf8();
                        chars.next();
                    } else {
                        break;
                    }
                }
                out.push_str("${");
                out.push_str(&s[start..end]);
                out.push('}');
            }
            // `${...}`, a lone `$`, `$$`: as written.
            _ => out.push('$'),
        }
    }
    Ok(out)
}
