//! mcphost's config (`.mcphost.yml`, `.yaml` or `.json` in the working folder or the home),
//! read as mcphost reads it (its `internal/config`, through viper): `mcpServers` entries of
//! `type` `local` (a `command` list and an `environment` map), `remote` (Streamable HTTP, with
//! `headers` written `"Name: value"`) and `builtin` (servers inside mcphost, which switchboard
//! cannot start: listed as disabled, saying so), and the older form (`command` with `args`, a
//! `url` alone for the legacy SSE transport, an explicit `transport`). viper reads keys in
//! lower case, so server names are lower-cased as mcphost has them, and `environment` names
//! are upper-cased as mcphost restores them. `${env://NAME}` and `${env://NAME:-default}` are
//! mcphost's variables; any other `${` is literal. `allowedTools` / `excludedTools` filter a
//! server's tools (both at once is an error, as in mcphost). `system-prompt` is the user's
//! system prompt (text, or a file's path, as mcphost reads it). The rest of the file (model,
//! generation settings, hooks) is mcphost's own.

use serde_json::{Map, Value, json};

use super::entry::{self, Context};
use super::position::find_yaml_key;
use super::wording::Wording;
use super::{Config, DisabledServer, ServerConfig};
use crate::error::HostError;

/// Whether a JSON config with `mcpServers` is mcphost's: named so (`.mcphost.json`), or an
/// entry written in mcphost's own form (`type: local` with a `command` list, `environment`,
/// `type` `remote` or `builtin`), which no other host writes. A `command` list alone is no
/// sign: it is a mistake in any host's file, and is reported as one there.
pub fn is_mcphost_json(path: &std::path::Path, root: &Value) -> bool {
    let named = path
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with(".mcphost."));
    let entries = root.get("mcpServers").and_then(Value::as_object);
    named
        || entries.is_some_and(|m| {
            m.values().any(|e| {
                let kind = e.get("type").and_then(Value::as_str);
                (kind == Some("local") && e.get("command").is_some_and(Value::is_array))
                    || e.get("environment").is_some_and(Value::is_object)
                    || matches!(kind, Some("remote" | "builtin"))
            })
        })
}

/// An mcphost config (`root` is the whole file): the servers of its `mcpServers` mapping, and
/// its `system-prompt`.
pub fn parse(ctx: &Context<'_>, text: &str, root: &Value) -> Result<Config, HostError> {
    let none = Map::new();
    let entries = root
        .get("mcpServers")
        .and_then(Value::as_object)
        .unwrap_or(&none);
    // Read first: its file joins the config's inputs, which the servers' reading hands over.
    let prompt = system_prompt(ctx, root);
    let mut config = parse_with(ctx, text, entries, true, &to_entry)?;
    let (model, problems) = model_settings(ctx, root);
    config.settings.model = model;
    for (key, why) in problems {
        let (line, column) = text
            .find(key)
            .map_or((1, 1), |o| super::position::line_col(text, o));
        config.warnings.push(format!(
            "{}:{line}:{column}: `{key}` ignored: {why}",
            ctx.path.display()
        ));
    }
    match prompt {
        Ok(prompt) => config.settings.system_prompt = prompt,
        Err(why) => {
            let (line, column) = text
                .find("system-prompt")
                .map_or((1, 1), |o| super::position::line_col(text, o));
            config.warnings.push(format!(
                "{}:{line}:{column}: `system-prompt` ignored: {why}",
                ctx.path.display()
            ));
        }
    }
    Ok(config)
}

/// mcphost's model settings as `run` and `chat` defaults: `model` (`provider/model`, or the
/// older `provider:model`; its `${env://...}` expanded), `provider-url`, `max-tokens`,
/// `temperature`, `max-steps`. mcphost's providers map to the APIs they speak: `anthropic`,
/// `openai` (Chat Completions), `google`/`gemini`, `ollama` (its OpenAI-compatible `/v1`),
/// `openrouter` (its OpenAI-compatible API with `OPENROUTER_API_KEY`); the others, and a key
/// written in the file, are named with why they are not read.
fn model_settings(
    ctx: &Context<'_>,
    root: &Value,
) -> (super::ModelSettings, Vec<(&'static str, String)>) {
    let mut problems: Vec<(&'static str, String)> = Vec::new();
    let text = |key: &str| {
        root.get(key)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
    };
    let number = |key: &str| root.get(key).and_then(Value::as_f64);
    let written =
        text("model").and_then(
            |m| match super::expand::expand(&env_references(m), ctx.env) {
                Ok(m) => Some(m),
                Err(e) => {
                    problems.push(("model", e.to_string()));
                    None
                }
            },
        );
    let mut provider = None;
    let mut model = None;
    let mut base_url = text("provider-url").map(str::to_string);
    let mut api_key_env = None;
    if let Some(written) = written {
        let split = written
            .split_once('/')
            .or_else(|| written.split_once(':'))
            .map(|(p, m)| (p.trim().to_ascii_lowercase(), m.trim().to_string()));
        match split {
            Some((p, m)) if !m.is_empty() => {
                provider = match p.as_str() {
                    "anthropic" => Some("anthropic"),
                    "openai" | "ollama" | "openrouter" => Some("openai-chat"),
                    "google" | "gemini" => Some("gemini"),
                    other => {
                        problems.push((
                            "model",
                            format!(
                                "mcphost's provider {other:?} is not one switchboard speaks (anthropic, openai, google, ollama, openrouter); give --provider and --model"
                            ),
                        ));
                        None
                    }
                };
                if provider.is_some() {
                    model = Some(m);
                }
                match p.as_str() {
                    "ollama" => {
                        let url = base_url
                            .take()
                            .unwrap_or_else(|| "http://localhost:11434".into());
                        let url = url.trim_end_matches('/');
                        base_url = Some(if url.ends_with("/v1") {
                            url.to_string()
                        } else {
                            format!("{url}/v1")
                        });
                    }
                    "openrouter" => {
                        base_url.get_or_insert_with(|| "https://openrouter.ai/api/v1".into());
                        api_key_env = Some("OPENROUTER_API_KEY".to_string());
                    }
                    _ => {}
                }
            }
            _ => problems.push((
                "model",
                format!("{written:?} is not mcphost's `provider/model`"),
            )),
        }
    }
    if text("provider-api-key").is_some() {
        problems.push((
            "provider-api-key",
            "switchboard reads API keys from the environment only (ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY, or --api-key-env)".into(),
        ));
    }
    let whole = |key: &str| {
        number(key)
            .filter(|n| *n > 0.0 && n.fract() == 0.0 && *n <= f64::from(u32::MAX))
            .map(|n| n as u32)
    };
    let written = super::ModelSettings {
        provider: None,
        model,
        base_url,
        api_key_env,
        max_tokens: whole("max-tokens"),
        temperature: number("temperature"),
        // mcphost's 0 means no limit; switchboard keeps its own default then.
        max_turns: whole("max-steps"),
        max_cost: None,
        reasoning_effort: None,
    };
    let (settings, more) = written.checked(provider);
    // Each as mcphost names it: "`temperature` 3 ignored: ..." is about `temperature`.
    for m in more {
        let key = if m.starts_with("`temperature`") {
            "temperature"
        } else if m.starts_with("`max_turns`") {
            "max-steps"
        } else {
            "model"
        };
        let why = m.split_once("ignored: ").map_or(m.as_str(), |(_, w)| w);
        problems.push((key, why.to_string()));
    }
    (settings, problems)
}

/// mcphost's `system-prompt`, as its `LoadSystemPrompt` reads it: the text of the file it names
/// when one is there (relative to the working folder, trimmed), else the text itself.
fn system_prompt(ctx: &Context<'_>, root: &Value) -> Result<Option<String>, String> {
    let Some(written) = root.get("system-prompt") else {
        return Ok(None);
    };
    let Some(written) = written.as_str() else {
        return match written {
            Value::Null => Ok(None),
            _ => Err("expected text, or the path of a file".into()),
        };
    };
    if written.is_empty() {
        return Ok(None);
    }
    let path = std::path::Path::new(written);
    let path = match &ctx.cwd {
        Some(cwd) if path.is_relative() => cwd.join(path),
        _ => path.to_path_buf(),
    };
    if path.is_file() {
        ctx.input(&path);
        return std::fs::read_to_string(&path)
            .map(|t| Some(t.trim().to_string()).filter(|t| !t.is_empty()))
            .map_err(|e| format!("cannot read {}: {e}", path.display()));
    }
    Ok(Some(written.to_string()))
}

/// The servers of LibreChat's `librechat.yaml`, whose `mcpServers` mapping is `entries`: names
/// as written, each entry as [`super::librechat::entry`] reads it.
pub fn parse_librechat(
    ctx: &Context<'_>,
    text: &str,
    entries: &Map<String, Value>,
) -> Result<Config, HostError> {
    let convert = |v: &Value| super::librechat::entry(v, ctx.env).map(|e| (e, Wording::default()));
    parse_with(ctx, text, entries, false, &convert)
}

/// One host's entry as the native entry it means, with the names of its tool lists; or why it
/// cannot run.
type Convert<'a> = dyn Fn(&Value) -> Result<(Value, Wording), String> + 'a;

/// Each entry of an `mcpServers` mapping in file order, its name lower-cased (as viper reads
/// mcphost's) when `lower` says so, made a native entry by `convert`.
fn parse_with(
    ctx: &Context<'_>,
    text: &str,
    entries: &Map<String, Value>,
    lower: bool,
    convert: &Convert<'_>,
) -> Result<Config, HostError> {
    let mut ordered: Vec<(usize, &String, &Value)> = entries
        .iter()
        .map(|(name, v)| (key_offset(text, name).unwrap_or(usize::MAX), name, v))
        .collect();
    ordered.sort_by_key(|(at, name, _)| (*at, (*name).clone()));
    let mut servers: Vec<ServerConfig> = Vec::new();
    let mut disabled: Vec<DisabledServer> = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for (at, written, value) in ordered {
        let at = if at == usize::MAX { 0 } else { at };
        // viper reads every key in lower case: the server's name as mcphost has it.
        let name = if lower {
            written.to_lowercase()
        } else {
            written.clone()
        };
        let fail = |message: String| ctx.entry_error(text, at, &name, message);
        let result = if !seen.insert(name.clone()) {
            Err(fail(format!(
                "mcphost reads server names in lower case, so {written:?} is a second server named {name:?}; the first one is used"
            )))
        } else {
            convert(value).map_err(&fail).and_then(|(v, wording)| {
                let raw = entry::raw_server(v).map_err(|(_, m)| fail(m))?;
                entry::validate(ctx, &name, raw)
                    .map(|s| wording.applied(s))
                    .map_err(|e| fail(e.message))
            })
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

/// An mcphost server entry as the native entry it means, with the names of its tool lists; or
/// why switchboard cannot run it.
fn to_entry(value: &Value) -> Result<(Value, Wording), String> {
    let Some(from) = value.as_object() else {
        return Err("must be a mapping of settings".into());
    };
    let text = |key: &str| {
        from.get(key)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    };
    // As mcphost's GetTransportType: an explicit `transport`, else `type`, else guessed.
    let command = strings(from.get("command"));
    let transport = match (text("transport"), text("type")) {
        (Some(t), _) => t.to_string(),
        (None, Some("local")) => "stdio".into(),
        (None, Some("remote")) => "streamable".into(),
        (None, Some("builtin")) => "inprocess".into(),
        (None, Some(other)) => other.to_string(),
        (None, None) if command.is_empty() && text("url").is_some() => "sse".into(),
        (None, None) => "stdio".into(),
    };
    let mut out = Map::new();
    match transport.as_str() {
        "stdio" => {
            let Some((program, rest)) = command.split_first() else {
                return Err("`command` is required for a local server (mcphost's `type: local`): the program and its arguments as a list".into());
            };
            let args = if rest.is_empty() {
                strings(from.get("args"))
            } else {
                rest.to_vec()
            };
            out.insert("command".into(), json!(program));
            out.insert("args".into(), json!(args));
            // mcphost upper-cases the names viper lower-cased. An older entry's `env` is
            // passed too (mcphost itself passes only `environment`).
            let mut env = Map::new();
            for key in ["env", "environment"] {
                if let Some(vars) = from.get(key).and_then(Value::as_object) {
                    for (k, v) in vars {
                        let v = match v {
                            Value::String(s) => s.clone(),
                            Value::Null => String::new(),
                            other => other.to_string(),
                        };
                        let k = if key == "environment" {
                            k.to_uppercase()
                        } else {
                            k.clone()
                        };
                        env.insert(k, Value::String(v));
                    }
                }
            }
            if !env.is_empty() {
                out.insert("env".into(), Value::Object(env));
            }
        }
        "sse" | "streamable" => {
            let Some(url) = text("url") else {
                return Err(format!(
                    "`url` is required for the {transport} transport (mcphost's `type: remote`)"
                ));
            };
            out.insert(
                "type".into(),
                json!(if transport == "sse" { "sse" } else { "http" }),
            );
            out.insert("url".into(), json!(url));
            // `"Name: value"`, as mcphost splits them; others are passed over, as there.
            let headers: Map<String, Value> = strings(from.get("headers"))
                .iter()
                .filter_map(|h| h.split_once(':'))
                .map(|(k, v)| (k.trim().to_string(), Value::String(v.trim().to_string())))
                .collect();
            if !headers.is_empty() {
                out.insert("headers".into(), Value::Object(headers));
            }
        }
        "inprocess" => {
            let which = text("name").unwrap_or("?");
            return Err(format!(
                "mcphost's builtin server {which:?} runs inside mcphost; switchboard cannot start it (configure an MCP server that does the same)"
            ));
        }
        other => {
            return Err(format!(
                "unsupported transport type {other:?}; mcphost knows stdio, sse, streamable and inprocess (type local, remote, builtin)"
            ));
        }
    }
    let allowed = strings(from.get("allowedTools"));
    let excluded = strings(from.get("excludedTools"));
    if !allowed.is_empty() && !excluded.is_empty() {
        return Err(
            "allowedTools and excludedTools are mutually exclusive (mcphost refuses the config)"
                .into(),
        );
    }
    let mut wording = Wording::default();
    if !allowed.is_empty() {
        out.insert("tools".into(), json!({ "allow": allowed }));
        wording.allow = Some("allowedTools".into());
    }
    if !excluded.is_empty() {
        out.insert("tools".into(), json!({ "deny": excluded }));
        wording.deny = Some("excludedTools".into());
    }
    let mut out = Value::Object(out);
    entry::rewrite_strings(&mut out, &mut |s| Ok(env_references(s)))?;
    Ok((out, wording))
}

/// A list of strings, or one string as a list of one (viper's weak typing); anything else is
/// left out.
fn strings(value: Option<&Value>) -> Vec<String> {
    match value {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|v| match v {
                Value::String(s) => Some(s.clone()),
                Value::Number(n) => Some(n.to_string()),
                Value::Bool(b) => Some(b.to_string()),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// mcphost's `${env://NAME}` and `${env://NAME:-default}` as switchboard's `${NAME}` and
/// `${NAME:-default}`; any other `${` is literal in mcphost's files and stays as written.
pub fn env_references(s: &str) -> String {
    const OPEN: &str = "${env://";
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find(OPEN) {
        out.push_str(&entry::literal_dollar_braces(&rest[..at]));
        let body = &rest[at + OPEN.len()..];
        let name_len = body
            .char_indices()
            .find(|&(i, c)| !(c == '_' || c.is_ascii_alphabetic() || (i > 0 && c.is_ascii_digit())))
            .map_or(body.len(), |(i, _)| i);
        let after = &body[name_len..];
        let default = after
            .strip_prefix(":-")
            .and_then(|d| d.find('}').map(|end| (Some(&d[..end]), &d[end + 1..])));
        let plain = after.strip_prefix('}').map(|r| (None, r));
        match default.or(plain).filter(|_| name_len > 0) {
            Some((default, tail)) => {
                out.push_str("${");
                out.push_str(&body[..name_len]);
                if let Some(d) = default {
                    out.push_str(":-");
                    out.push_str(&entry::literal_dollar_braces(d));
                }
                out.push('}');
                rest = tail;
            }
            None => {
                out.push_str("$${");
                rest = &rest[at + 2..];
            }
        }
    }
    out.push_str(&entry::literal_dollar_braces(rest));
    out
}

/// Where server `name` is written: its key under `mcpServers`, in YAML or JSON (on one line:
/// the quoted key anywhere after the section).
fn key_offset(text: &str, name: &str) -> Option<usize> {
    find_yaml_key(text, "mcpServers", name).or_else(|| {
        let start = text.find("mcpServers")?;
        text[start..]
            .find(&format!("\"{name}\""))
            .map(|i| start + i)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_mcphosts_variables_are_expanded() {
        for (written, native) in [
            ("${env://TOKEN}", "${TOKEN}"),
            ("Bearer ${env://TOKEN:-none}", "Bearer ${TOKEN:-none}"),
            ("${HOME}/x", "$${HOME}/x"),
            ("${env://}", "$${env://}"),
            ("${env://1X}", "$${env://1X}"),
            ("${env://A", "$${env://A"),
            ("a ${env://A_1} b ${env://B:-} c", "a ${A_1} b ${B:-} c"),
        ] {
            assert_eq!(env_references(written), native, "{written}");
        }
    }

    #[test]
    fn each_form_of_entry_is_the_native_entry_it_means() {
        let entry = |v: Value| to_entry(&v).map(|(e, _)| e);
        assert_eq!(
            entry(json!({"type": "local", "command": ["npx", "-y", "srv"],
                "environment": {"api_key": "k"}})),
            Ok(json!({"command": "npx", "args": ["-y", "srv"], "env": {"API_KEY": "k"}}))
        );
        assert_eq!(
            entry(json!({"command": "npx", "args": ["srv"], "env": {"Key": "v"}})),
            Ok(json!({"command": "npx", "args": ["srv"], "env": {"Key": "v"}}))
        );
        assert_eq!(
            entry(json!({"type": "remote", "url": "https://x/mcp",
                "headers": ["Authorization: Bearer t", "junk"]})),
            Ok(json!({"type": "http", "url": "https://x/mcp",
                "headers": {"Authorization": "Bearer t"}}))
        );
        assert_eq!(
            entry(json!({"url": "https://x/sse"})),
            Ok(json!({"type": "sse", "url": "https://x/sse"}))
        );
        assert_eq!(
            entry(json!({"type": "local", "command": ["s"], "excludedTools": ["rm"]})),
            Ok(json!({"command": "s", "args": [], "tools": {"deny": ["rm"]}}))
        );
        for (bad, says) in [
            (
                json!({"type": "builtin", "name": "fs"}),
                "builtin server \"fs\"",
            ),
            (json!({"type": "local"}), "`command` is required"),
            (json!({"type": "remote"}), "`url` is required"),
            (
                json!({"type": "carrier-pigeon"}),
                "unsupported transport type",
            ),
            (
                json!({"command": ["s"], "allowedTools": ["a"], "excludedTools": ["b"]}),
                "mutually exclusive",
            ),
        ] {
            let err = entry(bad.clone()).unwrap_err();
            assert!(err.contains(says), "{bad}: {err}");
        }
    }
}
