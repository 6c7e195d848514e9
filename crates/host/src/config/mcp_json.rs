//! The JSON configs other hosts already use, read as-is: `mcpServers` (Claude Desktop, Cursor,
//! Claude Code's `.mcp.json`, Gemini CLI, Windsurf), `servers` (VS Code's `mcp.json`, comments
//! and trailing commas included) and `context_servers` (Zed's settings). Keys those hosts define that
//! switchboard does not use (`autoApprove`, `alwaysAllow`, ...) are ignored, not errors.

use serde_json::Value;

use super::Config;
use super::entry::{self, Context, RawServer};
use super::position::{find_json_key, line_col};
use crate::error::HostError;

pub fn parse(ctx: &Context<'_>, text: &str) -> Result<Config, HostError> {
    // VS Code's and Zed's files may hold comments and trailing commas; offsets are kept.
    let text = &*super::jsonc::to_json(text);
    let root: Value = serde_json::from_str(text).map_err(|e| HostError::ConfigSyntax {
        path: ctx.path.to_path_buf(),
        line: e.line().max(1),
        column: e.column().max(1),
        message: e.to_string(),
    })?;
    let (key, map) = ["mcpServers", "servers", "context_servers"]
        .into_iter()
        .find_map(|k| root.get(k).and_then(Value::as_object).map(|m| (k, m)))
        .ok_or_else(|| HostError::ConfigShape {
            path: ctx.path.to_path_buf(),
            message: "expected an object with \"mcpServers\" (Claude Desktop, Cursor, Claude Code, Gemini CLI, Windsurf), \"servers\" (VS Code) or \"context_servers\" (Zed)".into(),
        })?;
    let section = find_json_key(text, 0, key).unwrap_or(0);
    let mut servers = Vec::new();
    let mut disabled = Vec::new();
    let mut warnings = Vec::new();
    // serde_json's Map is sorted by key; list servers in file order instead.
    let mut entries: Vec<(usize, &String, &Value)> = map
        .iter()
        .map(|(name, v)| {
            (
                find_json_key(text, section, name).unwrap_or(usize::MAX),
                name,
                v,
            )
        })
        .collect();
    entries.sort_by_key(|(pos, name, _)| (*pos, (*name).clone()));
    for (pos, name, value) in entries {
        let entry_at = if pos == usize::MAX { section } else { pos };
        let fail = |field: Option<&str>, message: String| {
            let offset = field
                .and_then(|f| find_json_key(text, entry_at, f))
                .unwrap_or(entry_at);
            ctx.entry_error(text, offset, name, message)
        };
        let result = (|| {
            if !value.is_object() {
                return Err(fail(None, "must be an object".into()));
            }
            let value: &Value = &zed_command(value);
            let raw: RawServer = entry::raw_server(value.clone())
                .map_err(|(key, message)| fail(key.as_deref(), message))?;
            if let Some(w) = entry::literal_client_secret(name, &raw, "client_secret") {
                let offset = find_json_key(text, entry_at, "client_secret").unwrap_or(entry_at);
                let (line, column) = line_col(text, offset);
                warnings.push(format!("{}:{line}:{column}: {w}", ctx.path.display()));
            }
            entry::validate(ctx, name, raw).map_err(|e| fail(e.field, e.message))
        })();
        entry::record(
            name,
            result,
            "disabled in the config (\"disabled\": true)",
            &mut servers,
            &mut disabled,
        );
    }
    Ok(ctx.servers_only(servers, disabled, warnings))
}

/// Zed's older entry form, `"command": {"path": ..., "args": [...], "env": {...}}`, as the flat
/// form every other host writes; any other value is returned as it is.
fn zed_command(value: &Value) -> std::borrow::Cow<'_, Value> {
    let Some(Value::Object(command)) = value.get("command") else {
        return std::borrow::Cow::Borrowed(value);
    };
    let mut flat = value.as_object().cloned().unwrap_or_default();
    flat.remove("command");
    for (from, to) in [("path", "command"), ("args", "args"), ("env", "env")] {
        if let Some(v) = command.get(from) {
            flat.insert(to.to_string(), v.clone());
        }
    }
    std::borrow::Cow::Owned(Value::Object(flat))
}
