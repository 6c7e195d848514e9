//! goose's `config.yaml`, read as-is: its `extensions:` that are MCP servers (`stdio`,
//! `streamable_http`) become server entries; goose's own in-process extensions are skipped with
//! a note, and the rest of the file (provider, model) is goose's business. The tool permissions
//! goose keeps beside it (`permission.yaml`) hold as goose applies them in its approve modes.

use serde_json::{Map, Value, json};
use switchboard_core::host_rules::literal;
use switchboard_core::{HostRules, Verdict};

use super::entry::{self, Context};
use super::position::{find_yaml_key, line_col};
use super::{Approve, Config, ServerConfig};
use crate::error::HostError;

/// The servers of goose's `extensions:` mapping (`text` is the file as written, for positions).
pub fn parse(
    ctx: &Context<'_>,
    text: &str,
    extensions: &Map<String, Value>,
    mode: Option<&str>,
) -> Result<Config, HostError> {
    let mut entries: Vec<(usize, &String, &Value)> = extensions
        .iter()
        .map(|(name, v)| {
            (
                find_yaml_key(text, "extensions:", name).unwrap_or(usize::MAX),
                name,
                v,
            )
        })
        .collect();
    entries.sort_by_key(|(at, name, _)| (*at, (*name).clone()));
    let mut servers = Vec::new();
    let mut disabled = Vec::new();
    let mut warnings = Vec::new();
    for (at, name, value) in entries {
        let at = if at == usize::MAX { 0 } else { at };
        let (line, column) = line_col(text, at);
        let fail = |message: String| ctx.entry_error(text, at, name, message);
        let kind = value.get("type").and_then(Value::as_str).unwrap_or("stdio");
        if matches!(kind, "builtin" | "platform" | "frontend" | "inline_python") {
            warnings.push(format!(
                "{}:{line}:{column}: extension {name:?} is goose's own ({kind}), not an MCP server switchboard can start; skipped",
                ctx.path.display()
            ));
            continue;
        }
        let result = to_entry(value)
            .map_err(fail)
            .and_then(|v| entry::raw_server(v).map_err(|(_, message)| fail(message)))
            .and_then(|raw| entry::validate(ctx, name, raw).map_err(|e| fail(e.message)))
            .map(|s| {
                s.map(|mut s| {
                    if value.get("available_tools").is_some() {
                        let deny = s.filter.list_names().1.to_string();
                        s.filter =
                            std::mem::take(&mut s.filter).lists_named("available_tools", deny);
                    }
                    s
                })
            });
        entry::record(
            name,
            result,
            "disabled in the config (enabled: false)",
            &mut servers,
            &mut disabled,
        );
    }
    permissions(ctx, mode, &mut servers, &mut warnings);
    Ok(ctx.servers_only(servers, disabled, warnings))
}

/// goose's tool permissions, from `permission.yaml` beside its config: in the approve modes
/// (`GOOSE_MODE` `approve` or `smart_approve`, from the environment or the config), a tool in
/// the `user` lists is `never_allow`ed (kept from models), `always_allow`ed (runs unasked) or
/// `ask_before` (asks), in that order, by goose's name for it (`EXTENSION__TOOL`); every other
/// tool asks unless it is annotated read-only, as goose asks (`approve = "writes"`; goose's
/// smart mode would first ask a model whether the call only reads). In `auto` mode, goose's
/// default, goose runs every tool and reads none of the lists; a `never_allow` still keeps its
/// tool from models here, the safer reading of a list the user wrote.
fn permissions(
    ctx: &Context<'_>,
    mode: Option<&str>,
    servers: &mut [ServerConfig],
    warnings: &mut Vec<String>,
) {
    let from_env = (ctx.env)("GOOSE_MODE").filter(|m| !m.is_empty());
    let mode = from_env.as_deref().or(mode).unwrap_or("auto");
    let approving = matches!(mode, "approve" | "smart_approve");
    let path = ctx
        .path
        .parent()
        .unwrap_or(std::path::Path::new("."))
        .join("permission.yaml");
    ctx.input(&path);
    let lists: Value = match std::fs::read_to_string(&path) {
        Ok(text) => match serde_yaml_ng::from_str::<serde_yaml_ng::Value>(&text)
            .map_err(|e| e.to_string())
            .and_then(|v| serde_json::to_value(v).map_err(|e| e.to_string()))
        {
            Ok(v) => v,
            Err(e) => {
                warnings.push(format!(
                    "{}: goose's tool permissions not read: {e}",
                    path.display()
                ));
                Value::Null
            }
        },
        Err(_) => Value::Null,
    };
    let names = |list: &str| entry::strings(lists.pointer(&format!("/user/{list}")));
    let mut order = vec![("never_allow", Verdict::Deny)];
    if approving {
        order.extend([
            ("always_allow", Verdict::Allow),
            ("ask_before", Verdict::Ask),
        ]);
    }
    let file = path.display().to_string();
    for server in servers.iter_mut() {
        if approving {
            server.approve = Approve::Writes;
            server.approve_written = Some(format!("goose's {mode} mode"));
            server.approve_unset = false;
        }
        let key = extension_key(server.name());
        let mut rules = HostRules::exact(&key, "", "__");
        for (list, verdict) in &order {
            for name in names(list) {
                let Some(tool) = name.strip_prefix(&format!("{key}__")) else {
                    continue;
                };
                let pattern = format!("{}__{}", literal(&key), literal(tool));
                let _ = rules.push(
                    &pattern,
                    *verdict,
                    format!("goose's {list} {name:?}"),
                    file.clone(),
                );
            }
        }
        if !rules.is_empty() {
            server.filter = std::mem::take(&mut server.filter).with_rules(rules);
        }
    }
}

/// The prefix goose gives an extension's tools: its name without spaces, each character
/// outside `A-Z a-z 0-9 _ -` made `_`, in lower case.
fn extension_key(name: &str) -> String {
    name.chars()
        .filter(|c| !c.is_whitespace())
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect::<String>()
        .to_lowercase()
}

/// A goose extension as the JSON entry the other hosts write.
fn to_entry(ext: &Value) -> Result<Value, String> {
    let Some(ext) = ext.as_object() else {
        return Err("must be a mapping of settings".into());
    };
    let mut out = Map::new();
    match ext.get("type").and_then(Value::as_str).unwrap_or("stdio") {
        "stdio" => {
            out.insert("type".into(), json!("stdio"));
            copy(ext, &mut out, "cmd", "command");
            copy(ext, &mut out, "args", "args");
            let mut env = ext
                .get("envs")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            // goose keeps these secrets in its keyring; here they come from the environment.
            for key in names(ext, "env_keys")? {
                env.entry(key.clone())
                    .or_insert_with(|| Value::String(format!("${{{key}}}")));
            }
            if !env.is_empty() {
                out.insert("env".into(), Value::Object(env));
            }
        }
        "streamable_http" | "http" => {
            out.insert("type".into(), json!("http"));
            copy(ext, &mut out, "uri", "url");
            copy(ext, &mut out, "headers", "headers");
        }
        other => {
            // `sse` and anything newer: let the entry say what is wrong with it.
            out.insert("type".into(), Value::String(other.to_string()));
            copy(ext, &mut out, "uri", "url");
        }
    }
    if let Some(t) = ext.get("timeout").filter(|t| !t.is_null()) {
        out.insert("call_timeout".into(), t.clone());
    }
    let tools = names(ext, "available_tools")?;
    if !tools.is_empty() {
        out.insert("tools".into(), json!({ "allow": tools }));
    }
    if ext.get("enabled") == Some(&Value::Bool(false)) {
        out.insert("disabled".into(), Value::Bool(true));
    }
    Ok(Value::Object(out))
}

fn copy(from: &Map<String, Value>, to: &mut Map<String, Value>, key: &str, as_key: &str) {
    if let Some(v) = from.get(key).filter(|v| !v.is_null()) {
        to.insert(as_key.to_string(), v.clone());
    }
}

/// A list of strings under `key` (absent or null: none).
fn names(ext: &Map<String, Value>, key: &str) -> Result<Vec<String>, String> {
    match ext.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| {
                v.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| format!("{key} must be a list of names"))
            })
            .collect(),
        Some(_) => Err(format!("{key} must be a list of names")),
    }
}
