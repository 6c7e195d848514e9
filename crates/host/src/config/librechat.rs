//! LibreChat's `librechat.yaml`, whose `mcpServers` mapping holds Claude-style entries with
//! LibreChat's own keys: `type` (`stdio`, `sse`, `streamable-http` or `http`; `websocket`,
//! which switchboard does not speak, leaves the server disabled, saying so), `headers` as a
//! mapping, `timeout` and `initTimeout` in milliseconds. `${VAR}` is the environment's, as in
//! LibreChat. A `{{NAME}}` placeholder, which LibreChat fills per user (`{{LIBRECHAT_USER_ID}}`,
//! a `customUserVars` value), is read from the environment variable NAME, since switchboard has
//! no LibreChat user: a server whose placeholder is not set says which variable to set.
//! `serverInstructions` decides, as in LibreChat, whether the server's instructions reach the
//! model: `true` (or `"true"`) its own, other text in their place, and none when it is `false`
//! or not written. The rest of the file (endpoints, interface, icons) is LibreChat's own.

use serde_json::{Map, Value, json};

use super::entry;

/// Whether a YAML file's `mcpServers` mapping is LibreChat's rather than mcphost's: nothing in
/// it is written only as mcphost writes it (a `command` list, `environment`, a `type` of
/// `local`, `remote` or `builtin`, `allowedTools`, `excludedTools`), and the file is not named
/// as mcphost names its own (`.mcphost.yml`, `.mcp.yml`).
pub fn is_config(path: &std::path::Path, servers: &Map<String, Value>) -> bool {
    let mcphost_name = path
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with(".mcphost.") || n.starts_with(".mcp."));
    let mcphost_entry = servers.values().any(|e| {
        e.get("command").is_some_and(Value::is_array)
            || ["environment", "allowedTools", "excludedTools"]
                .iter()
                .any(|k| e.get(*k).is_some())
            || matches!(
                e.get("type").and_then(Value::as_str),
                Some("local" | "remote" | "builtin")
            )
    });
    !mcphost_name && !mcphost_entry
}

/// A LibreChat entry as the entry the other hosts write, or why it cannot run here (`env`
/// looks up the variables its per-user placeholders stand for).
pub fn entry(value: &Value, env: &dyn Fn(&str) -> Option<String>) -> Result<Value, String> {
    let Some(from) = value.as_object() else {
        return Err("must be a mapping of settings".into());
    };
    let mut out = Map::new();
    for key in ["command", "args", "env", "cwd", "url", "headers"] {
        if let Some(v) = from.get(key).filter(|v| !v.is_null()) {
            out.insert(key.into(), v.clone());
        }
    }
    match from.get("type").and_then(Value::as_str) {
        None | Some("stdio") => {}
        Some("sse") => {
            out.insert("type".into(), json!("sse"));
        }
        Some("streamable-http" | "http") => {
            out.insert("type".into(), json!("http"));
        }
        Some("websocket") => {
            return Err("its transport is WebSocket, which switchboard does not speak (MCP's transports are stdio and Streamable HTTP)".into());
        }
        Some(other) => {
            return Err(format!(
                "type {other:?} is none of LibreChat's (stdio, sse, streamable-http, http, websocket)"
            ));
        }
    }
    // Milliseconds in LibreChat's file.
    for (key, to) in [
        ("timeout", "call_timeout"),
        ("initTimeout", "startup_timeout"),
    ] {
        if let Some(v) = from.get(key).filter(|v| !v.is_null()) {
            let ms = v
                .as_f64()
                .filter(|ms| ms.is_finite() && *ms > 0.0)
                .ok_or(format!("`{key}` must be a positive number of milliseconds"))?;
            out.insert(to.into(), json!(format!("{ms}ms")));
        }
    }
    let mut out = Value::Object(out);
    let mut unset = None;
    entry::rewrite_strings(&mut out, &mut |s| {
        let (native, names) = placeholders(s);
        if let Some(name) = names.into_iter().find(|n| env(n).is_none()) {
            unset.get_or_insert(name);
        }
        Ok(native)
    })?;
    if let Some(name) = unset {
        return Err(format!(
            "{{{{{name}}}}} is a value LibreChat fills in for each of its users; switchboard has none, so it reads the environment variable {name}, which is not set"
        ));
    }
    // Written after the placeholders are read: the text is the model's, not a setting to fill.
    let instructions = match from.get("serverInstructions") {
        None | Some(Value::Null) => json!(false),
        Some(Value::Bool(on)) => json!(on),
        Some(Value::String(s)) if s == "true" || s == "false" => json!(s == "true"),
        Some(Value::String(text)) => json!(text),
        Some(_) => {
            return Err("`serverInstructions` must be true, false or the text to use".into());
        }
    };
    if let Value::Object(map) = &mut out {
        map.insert("instructions".into(), instructions);
    }
    Ok(out)
}

/// LibreChat's per-user `{{NAME}}` as switchboard's `${NAME}` (the environment variable NAME),
/// and the names; `${VAR}` means the same in both, and anything else stays as written.
pub fn placeholders(s: &str) -> (String, Vec<String>) {
    let mut names = Vec::new();
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find("{{") {
        out.push_str(&rest[..at]);
        let body = &rest[at + 2..];
        let name = body.find("}}").map(|end| (body[..end].trim(), end));
        match name.filter(|(n, _)| {
            !n.is_empty() && n.chars().all(|c| c == '_' || c.is_ascii_alphanumeric())
        }) {
            Some((n, end)) => {
                out.push_str("${");
                out.push_str(n);
                out.push('}');
                names.push(n.to_string());
                rest = &body[end + 2..];
            }
            None => {
                out.push_str("{{");
                rest = body;
            }
        }
    }
    out.push_str(rest);
    (out, names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_become_environment_variables() {
        for (written, native) in [
            ("{{LIBRECHAT_USER_ID}}", "${LIBRECHAT_USER_ID}"),
            ("Bearer {{ MY_KEY }}", "Bearer ${MY_KEY}"),
            ("${SOME_API_KEY}", "${SOME_API_KEY}"),
            ("{{not a name}} {{", "{{not a name}} {{"),
        ] {
            assert_eq!(placeholders(written).0, native, "{written}");
        }
    }

    #[test]
    fn entries_read_as_librechat_reads_them() {
        let env = |name: &str| (name == "MY_KEY").then(|| "k".to_string());
        let entry = |v: &Value| entry(v, &env);
        assert_eq!(
            entry(&json!({"type": "streamable-http", "url": "https://x/api/",
                "headers": {"X-Auth-Token": "{{MY_KEY}}"}, "timeout": 60000,
                "serverInstructions": true, "iconPath": "/i.svg"})),
            Ok(json!({"type": "http", "url": "https://x/api/",
                "headers": {"X-Auth-Token": "${MY_KEY}"}, "call_timeout": "60000ms",
                "instructions": true}))
        );
        assert_eq!(
            entry(&json!({"command": "npx", "args": ["-y", "srv"], "initTimeout": 15000})),
            Ok(
                json!({"command": "npx", "args": ["-y", "srv"], "startup_timeout": "15000ms",
                "instructions": false})
            )
        );
        // Its own text stays as written, placeholders and all; "true" is true.
        for (written, read) in [
            (
                json!("Say {{who}} wrote it."),
                json!("Say {{who}} wrote it."),
            ),
            (json!("true"), json!(true)),
            (json!(false), json!(false)),
        ] {
            let e = entry(&json!({"command": "x", "serverInstructions": written})).unwrap();
            assert_eq!(e["instructions"], read);
        }
        assert!(
            entry(&json!({"command": "x", "serverInstructions": 3}))
                .unwrap_err()
                .contains("serverInstructions")
        );
        assert!(
            entry(&json!({"type": "websocket", "url": "ws://x"}))
                .unwrap_err()
                .contains("WebSocket")
        );
        assert!(
            entry(&json!({"command": "x", "timeout": "soon"}))
                .unwrap_err()
                .contains("milliseconds")
        );
        let unset = entry(&json!({"url": "https://x",
            "headers": {"X-User": "{{LIBRECHAT_USER_ID}}"}}))
        .unwrap_err();
        assert!(
            unset.contains("environment variable LIBRECHAT_USER_ID"),
            "{unset}"
        );
    }
}
