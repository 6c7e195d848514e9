//! OpenCode's `opencode.json(c)`, read as-is: the servers under `mcp` (OpenCode 1) or
//! `mcp.servers` (OpenCode 2), `local` ones with their command as one array and `remote` ones by
//! URL, with OpenCode's `{env:VAR}` and `{file:PATH}` substitutions. The rest of the file
//! (models, agents, permissions) is OpenCode's business.

use std::path::Path;

use serde_json::{Map, Value, json};

use super::entry::{self, Context};

/// Whether an entry under `mcp` is written the way OpenCode writes one: its `type` is `local` or
/// `remote`, or its command is an array.
pub fn is_opencode_entry(value: &Value) -> bool {
    matches!(
        value.get("type").and_then(Value::as_str),
        Some("local" | "remote")
    ) || value.get("command").is_some_and(Value::is_array)
}

/// An OpenCode server entry as the JSON entry the other hosts write, or the key that is wrong
/// (when it is one) and what is wrong.
pub fn to_entry(ctx: &Context<'_>, value: &Value) -> Result<Value, (Option<String>, String)> {
    let Some(from) = value.as_object() else {
        return Err((None, "must be an object".into()));
    };
    let mut out = Map::new();
    match from.get("type").and_then(Value::as_str) {
        Some("local") | None => {
            out.insert("type".into(), json!("stdio"));
            match from.get("command") {
                Some(Value::Array(parts)) => {
                    let Some((first, rest)) = parts.split_first() else {
                        return Err((
                            Some("command".into()),
                            "`command` is an empty list; OpenCode's command is the program and its arguments, as one list".into(),
                        ));
                    };
                    out.insert("command".into(), first.clone());
                    out.insert("args".into(), Value::Array(rest.to_vec()));
                }
                // A string (or anything else) is left for the entry's own checks to name.
                Some(other) => {
                    out.insert("command".into(), other.clone());
                }
                None => {}
            }
            copy(from, &mut out, "environment", "env");
            copy(from, &mut out, "env", "env");
            copy(from, &mut out, "cwd", "cwd");
        }
        // A remote server is tried with Streamable HTTP, then legacy SSE, as OpenCode does.
        Some("remote") => {
            copy(from, &mut out, "url", "url");
            copy(from, &mut out, "headers", "headers");
        }
        Some(other) => {
            return Err((
                Some("type".into()),
                format!(
                    "unknown type {other:?}; OpenCode's server types are \"local\" and \"remote\""
                ),
            ));
        }
    }
    // OpenCode's `timeout` is in milliseconds and bounds fetching the server's tools.
    if let Some(ms) = from.get("timeout").filter(|v| !v.is_null()) {
        let Some(ms) = ms.as_f64() else {
            return Err((
                Some("timeout".into()),
                "`timeout` must be a number of milliseconds".into(),
            ));
        };
        out.insert("startup_timeout".into(), json!(format!("{ms}ms")));
    }
    match from.get("oauth") {
        // `false` turns off OpenCode's automatic OAuth; switchboard only logs in when asked to.
        None | Some(Value::Null | Value::Bool(_)) => {}
        Some(Value::Object(o)) => {
            let mut oauth = Map::new();
            copy(o, &mut oauth, "clientId", "client_id");
            copy(o, &mut oauth, "clientSecret", "client_secret");
            copy(o, &mut oauth, "scope", "scopes");
            out.insert("oauth".into(), Value::Object(oauth));
        }
        Some(_) => {
            return Err((
                Some("oauth".into()),
                "`oauth` must be an object (clientId, clientSecret, scope) or false".into(),
            ));
        }
    }
    let off = from.get("enabled") == Some(&Value::Bool(false))
        || from.get("disabled") == Some(&Value::Bool(true));
    if off {
        out.insert("disabled".into(), Value::Bool(true));
    }
    let mut out = Value::Object(out);
    entry::rewrite_strings(&mut out, &mut |s| substitute(ctx, s)).map_err(|m| (None, m))?;
    Ok(out)
}

fn copy(from: &Map<String, Value>, to: &mut Map<String, Value>, key: &str, as_key: &str) {
    if let Some(v) = from.get(key).filter(|v| !v.is_null()) {
        to.insert(as_key.to_string(), v.clone());
    }
}

/// One string with OpenCode's substitutions made: `{env:VAR}` becomes the variable's value (an
/// unset one is an error that names it), `{file:PATH}` the file's trimmed contents (a relative
/// path starts from the config's folder, `~/` from the home folder). The result is escaped for
/// switchboard's own expansion, so a `${` that OpenCode leaves alone stays as written.
pub fn substitute(ctx: &Context<'_>, s: &str) -> Result<String, String> {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    loop {
        let next = ["{env:", "{file:"]
            .into_iter()
            .filter_map(|open| rest.find(open).map(|at| (at, open)))
            .min();
        let Some((at, open)) = next else {
            out.push_str(rest);
            break;
        };
        out.push_str(&rest[..at]);
        let body = &rest[at + open.len()..];
        let end = body
            .find('}')
            .ok_or_else(|| format!("{open} without a closing `}}`"))?;
        let name = body[..end].trim();
        if open == "{env:" {
            let value = (ctx.env)(name)
                .filter(|v| !v.is_empty())
                .ok_or_else(|| format!("{{env:{name}}}: environment variable {name} is not set"))?;
            out.push_str(&value);
        } else {
            out.push_str(&read_file(ctx, name)?);
        }
        rest = &body[end + 1..];
    }
    Ok(entry::literal_dollar_braces(&out))
}

/// The trimmed contents of the file a `{file:PATH}` names. The contents never appear in an
/// error; the path does.
fn read_file(ctx: &Context<'_>, path: &str) -> Result<String, String> {
    let full = match path.strip_prefix("~/") {
        Some(rest) => {
            let home = (ctx.env)("HOME")
                .or_else(|| (ctx.env)("USERPROFILE"))
                .ok_or_else(|| {
                    format!("{{file:{path}}}: the home folder is not known (HOME is not set)")
                })?;
            Path::new(&home).join(rest)
        }
        None => ctx.base.join(path),
    };
    ctx.input(&full);
    std::fs::read_to_string(&full)
        .map(|text| text.trim().to_string())
        .map_err(|e| format!("{{file:{path}}}: cannot read {}: {e}", full.display()))
}
