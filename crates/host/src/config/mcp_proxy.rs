//! The config of mcp-proxy (TBXark's MCP gateway): an `mcpProxy` section beside `mcpServers`,
//! whose entries are Claude-style with mcp-proxy's own keys read as mcp-proxy reads them:
//! `transportType` (`stdio`, `sse`, `streamable-http`; a `url` without it is the legacy SSE
//! transport), `options.disabled`, and `options.toolFilter` (`mode` `allow` or `block` over a
//! `list` of exact tool names). Its `$VAR` and `${VAR}` are the environment's, empty when unset
//! (Go's `os.ExpandEnv`, which mcp-proxy applies to the file by default).

use serde_json::{Map, Value};

use super::entry;
use super::wording::Wording;

/// Whether a JSON config is mcp-proxy's: it has an `mcpProxy` section, which mcp-proxy requires.
pub fn is_config(root: &Value) -> bool {
    root.get("mcpProxy").is_some_and(Value::is_object)
}

/// An mcp-proxy entry as the entry the other hosts write, with the names of its tool filter,
/// and a note when its filter's mode is one mcp-proxy skips; or why it cannot be read.
pub fn entry(value: &Value) -> Result<(Value, Wording, Option<String>), String> {
    let Some(from) = value.as_object() else {
        return Err("must be an object".into());
    };
    let mut out: Map<String, Value> = Map::new();
    for key in ["command", "args", "env", "url", "headers"] {
        if let Some(v) = from.get(key).filter(|v| !v.is_null()) {
            out.insert(key.into(), v.clone());
        }
    }
    let command = from
        .get("command")
        .and_then(Value::as_str)
        .is_some_and(|c| !c.is_empty());
    let transport = from.get("transportType").and_then(Value::as_str);
    // As mcp-proxy decides: a command (or `stdio`) runs it; else a URL is Streamable HTTP
    // when it says so and SSE otherwise.
    if command || transport == Some("stdio") {
        if !command {
            return Err("`command` is required for the stdio transport".into());
        }
        out.remove("url");
        out.remove("headers");
    } else if from.get("url").and_then(Value::as_str).is_some() {
        let kind = if transport == Some("streamable-http") {
            "http"
        } else {
            "sse"
        };
        out.insert("type".into(), Value::String(kind.into()));
    } else {
        return Err("needs a `command` or a `url` (mcp-proxy: invalid server type)".into());
    }
    let options = from.get("options").and_then(Value::as_object);
    if options.and_then(|o| o.get("disabled")) == Some(&Value::Bool(true)) {
        out.insert("disabled".into(), Value::Bool(true));
    }
    let mut wording = Wording::default();
    let mut note = None;
    let filter = options.and_then(|o| o.get("toolFilter"));
    let list = entry::strings(filter.and_then(|f| f.get("list")));
    if !list.is_empty() {
        let mode = filter
            .and_then(|f| f.get("mode"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_lowercase();
        // Exact names: each glob character stands for itself.
        let names: Vec<Value> = list
            .iter()
            .map(|n| Value::String(switchboard_core::host_rules::literal(n)))
            .collect();
        match mode.as_str() {
            "allow" => {
                out.insert("tools".into(), serde_json::json!({ "allow": names }));
                wording.allow = Some("options.toolFilter (allow)".into());
            }
            "block" => {
                out.insert("tools".into(), serde_json::json!({ "deny": names }));
                wording.deny = Some("options.toolFilter (block)".into());
            }
            other => {
                note = Some(format!(
                    "options.toolFilter has mode {other:?}, which mcp-proxy skips (it knows \"allow\" and \"block\"); every tool is offered"
                ));
            }
        }
    }
    let mut out = Value::Object(out);
    entry::rewrite_strings(&mut out, &mut |s| Ok(go_references(s)))?;
    Ok((out, wording, note))
}

/// Go's `$VAR` and `${VAR}` as switchboard's `${VAR:-}` (empty when unset, as `os.ExpandEnv`
/// leaves it); anything else with a `$` stays as written.
pub fn go_references(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    let mut rest = s;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let (name, tail) = match after.strip_prefix('{') {
            Some(inner) => match inner.find('}') {
                Some(end) if is_name(&inner[..end]) => (&inner[..end], &inner[end + 1..]),
                _ => ("", after),
            },
            None => {
                let end = after
                    .char_indices()
                    .find(|&(_, c)| !(c == '_' || c.is_ascii_alphanumeric()))
                    .map_or(after.len(), |(i, _)| i);
                if is_name(&after[..end]) {
                    (&after[..end], &after[end..])
                } else {
                    ("", after)
                }
            }
        };
        if name.is_empty() {
            // A `$` that names nothing: literal (a `${` escaped for switchboard's expansion).
            if after.starts_with('{') {
                out.push_str("$$");
            } else {
                out.push('$');
            }
        } else {
            out.push_str("${");
            out.push_str(name);
            out.push_str(":-}");
        }
        rest = tail;
    }
    out.push_str(rest);
    out
}

fn is_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn go_variables_are_empty_when_unset() {
        for (written, native) in [
            ("$TOKEN", "${TOKEN:-}"),
            ("Bearer ${TOKEN}", "Bearer ${TOKEN:-}"),
            ("a$B_1/c", "a${B_1:-}/c"),
            ("cost: 5$", "cost: 5$"),
            ("${1x}", "$${1x}"),
            ("${open", "$${open"),
        ] {
            assert_eq!(go_references(written), native, "{written}");
        }
    }

    #[test]
    fn entries_read_as_mcp_proxy_reads_them() {
        let read = |v: Value| entry(&v).map(|(e, w, n)| (e, w.allow, w.deny, n));
        assert_eq!(
            read(json!({"command": "npx", "args": ["srv"], "options": {
                "toolFilter": {"mode": "block", "list": ["create_or_update_file", "a*"]}}})),
            Ok((
                json!({"command": "npx", "args": ["srv"],
                    "tools": {"deny": ["create_or_update_file", "a[*]"]}}),
                None,
                Some("options.toolFilter (block)".to_string()),
                None
            ))
        );
        assert_eq!(
            read(json!({"url": "https://x/sse?key=$KEY"})),
            Ok((
                json!({"url": "https://x/sse?key=${KEY:-}", "type": "sse"}),
                None,
                None,
                None
            ))
        );
        assert_eq!(
            read(
                json!({"url": "https://x/mcp", "transportType": "streamable-http",
                "options": {"disabled": true, "toolFilter": {"mode": "Allow", "list": ["get"]}}})
            ),
            Ok((
                json!({"url": "https://x/mcp", "type": "http", "disabled": true,
                    "tools": {"allow": ["get"]}}),
                Some("options.toolFilter (allow)".to_string()),
                None,
                None
            ))
        );
        let (_, _, _, note) = read(
            json!({"command": "x", "options": {"toolFilter": {"mode": "deny", "list": ["a"]}}}),
        )
        .unwrap();
        assert!(note.unwrap().contains("skips"));
        assert!(read(json!({"transportType": "stdio"})).is_err());
        assert!(read(json!({"env": {}})).is_err());
    }
}
