//! Continue's configs, read as-is: the `mcpServers:` list of a `config.yaml` or of a block file
//! in `.continue/mcpServers/`, and the same list in an older `config.json`. Each server is a list
//! item with its own `name`; `${{ secrets.NAME }}` and `${{ inputs.NAME }}` are read from the
//! environment variable NAME. The rest of the file (models, rules) is Continue's business.

use serde_json::{Map, Value, json};

use super::Config;
use super::entry::{self, Context};
use crate::error::HostError;

/// The servers of Continue's `mcpServers` list. `text` is the file as written, for positions.
pub fn parse(ctx: &Context<'_>, text: &str, list: &[Value]) -> Result<Config, HostError> {
    let section = text.find("mcpServers").unwrap_or(0);
    let mut servers = Vec::new();
    let mut disabled = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    let mut search_from = section;
    for (i, item) in list.iter().enumerate() {
        let name = item
            .get("name")
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map_or_else(|| format!("mcpServers[{i}]"), str::to_string);
        let at = name_offset(text, search_from, &name).unwrap_or(search_from);
        search_from = at.max(search_from);
        let fail = |message: String| ctx.entry_error(text, at, &name, message);
        let result = if !seen.insert(name.clone()) {
            Err(fail(format!(
                "a second server named {name:?}; the first one is used"
            )))
        } else if item.get("name").and_then(Value::as_str).is_none() {
            Err(fail(
                "has no `name`; Continue needs one for each server".into(),
            ))
        } else {
            to_entry(item)
                .map_err(&fail)
                .and_then(|v| entry::raw_server(v).map_err(|(_, m)| fail(m)))
                .and_then(|raw| entry::validate(ctx, &name, raw).map_err(|e| fail(e.message)))
        };
        entry::record(
            &name,
            result,
            "disabled in the config",
            &mut servers,
            &mut disabled,
        );
    }
    Ok(ctx.servers_only(servers, disabled, Vec::new()))
}

/// A Continue server as the JSON entry the other hosts write.
fn to_entry(item: &Value) -> Result<Value, String> {
    let Some(from) = item.as_object() else {
        return Err("must be a mapping of settings".into());
    };
    let mut out = Map::new();
    for key in ["type", "command", "args", "env", "cwd", "url"] {
        if let Some(v) = from.get(key).filter(|v| !v.is_null()) {
            out.insert(key.to_string(), v.clone());
        }
    }
    if let Some(h) = from
        .get("requestOptions")
        .and_then(|o| o.get("headers"))
        .filter(|v| !v.is_null())
    {
        out.insert("headers".into(), h.clone());
    }
    // Continue's `connectionTimeout` is in milliseconds.
    if let Some(ms) = from.get("connectionTimeout").filter(|v| !v.is_null()) {
        let ms = ms
            .as_f64()
            .ok_or("`connectionTimeout` must be a number of milliseconds")?;
        out.insert("startup_timeout".into(), json!(format!("{ms}ms")));
    }
    let mut out = Value::Object(out);
    entry::rewrite_strings(&mut out, &mut |s| Ok(template_references(s)))?;
    Ok(out)
}

/// `${{ secrets.NAME }}` and `${{ inputs.NAME }}` as switchboard's `${NAME}`; any other `${`
/// is literal in Continue's files and stays as written.
pub fn template_references(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find("${{") {
        out.push_str(&entry::literal_dollar_braces(&rest[..at]));
        let body = &rest[at + 3..];
        let reference = body.find("}}").and_then(|end| {
            let inner = body[..end].trim();
            let name = inner
                .strip_prefix("secrets.")
                .or_else(|| inner.strip_prefix("inputs."))?;
            Some((name.trim().to_string(), end))
        });
        match reference {
            Some((name, end)) => {
                out.push_str("${");
                out.push_str(&name);
                out.push('}');
                rest = &body[end + 2..];
            }
            None => {
                out.push_str("$${{");
                rest = body;
            }
        }
    }
    out.push_str(&entry::literal_dollar_braces(rest));
    out
}

/// Where the list item named `name` is written: the `name` key holding it, at or after `from`.
fn name_offset(text: &str, from: usize, name: &str) -> Option<usize> {
    let mut offset = from.min(text.len());
    while let Some(found) = text.get(offset..)?.find(name) {
        let at = offset + found;
        let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
        let line = &text[line_start..at];
        let key = line.trim_start().trim_start_matches('-').trim_start();
        if key.starts_with("name") || key.starts_with("\"name\"") {
            return Some(at - key.len());
        }
        if let Some(quoted) = line.rfind("\"name\"") {
            return Some(line_start + quoted);
        }
        offset = at + name.len().max(1);
    }
    None
}
