//! The JSON configs other hosts already use, read as-is: `mcpServers` (Claude Desktop, Cursor,
//! Claude Code's `.mcp.json`, Gemini CLI, Windsurf; Continue's list form goes to
//! `continue_dev`), `servers` (VS Code's `mcp.json`, comments and trailing commas included),
//! `context_servers` (Zed's settings), `amp.mcpServers` (Amp's settings) and `mcp` (OpenCode's
//! and Crush's, each entry translated by `opencode` or `crush`). The hosts' per-server tool
//! settings (`disabledTools`, `autoApprove`, `alwaysAllow`, Gemini CLI's `trust`) become
//! switchboard's; other keys those hosts define that switchboard does not use are ignored, not
//! errors.

use serde_json::Value;

use super::entry::{self, Context, RawServer};
use super::position::{find_json_key, line_col};
use super::wording::Wording;
use super::{Config, DisabledServer, ServerConfig};
use crate::error::HostError;

pub fn parse(ctx: &Context<'_>, text: &str) -> Result<Config, HostError> {
    // VS Code's, Zed's and OpenCode's files may hold comments and trailing commas; offsets are
    // kept.
    let text = &*super::jsonc::to_json(text);
    let root: Value = serde_json::from_str(text).map_err(|e| HostError::ConfigSyntax {
        path: ctx.path.to_path_buf(),
        line: e.line().max(1),
        column: e.column().max(1),
        message: e.to_string(),
    })?;
    // An MCP bundle's manifest: the one server it describes.
    if super::mcpb::is_manifest(&root) {
        return super::mcpb::parse(ctx, &root);
    }
    // mcphost's JSON form (`.mcphost.json`, or entries only mcphost writes).
    if super::mcphost::is_mcphost_json(ctx.path, &root)
        && root.get("mcpServers").is_some_and(Value::is_object)
    {
        return super::mcphost::parse(ctx, text, &root);
    }
    // Continue's older config.json lists its servers instead of naming them as keys.
    if let Some(list) = root.get("mcpServers").and_then(Value::as_array) {
        return super::continue_dev::parse(ctx, text, list);
    }
    // One server alone, as Continue takes a Claude-style entry in a file of
    // `.continue/mcpServers/`: named after the file.
    let alone: Option<serde_json::Map<String, Value>> = root
        .get("command")
        .or_else(|| root.get("url"))
        .filter(|v| v.is_string())
        .and(ctx.path.file_stem())
        .map(|stem| {
            let mut one = serde_json::Map::new();
            one.insert(stem.to_string_lossy().into_owned(), root.clone());
            one
        });
    // Gemini CLI's settings read on their own: gathered as Gemini CLI gathers them (a settings
    // file need not name servers itself).
    if ctx.policy && super::gemini::is_settings_file(ctx.path) {
        return super::gemini::gather(ctx, text, &root);
    }
    let state = super::claude_code::StateFile::read(ctx, text, &root);
    // Where the servers are written, each map with its key's offset: Claude Code's scopes (the
    // project's own after the user's, so it replaces a user's server of the same name), or the
    // one map the file's format keeps them in.
    let (scopes, dialect) = match &state {
        Some(state) => (state.scopes.clone(), Dialect::Claude),
        None => {
            let (section, map, dialect) = named_servers(ctx, text, &root, alone.as_ref())?;
            (vec![(section, map)], dialect)
        }
    };
    let gemini_file = state.is_none() && super::gemini::is_settings_file(ctx.path);
    let antigravity_file = super::antigravity::is_config_file(ctx.path);
    let mcp_proxy_file = super::mcp_proxy::is_config(&root);
    let mut servers = Vec::new();
    let mut disabled = Vec::new();
    let mut warnings = Vec::new();
    // serde_json's Map is sorted by key; list servers in file order instead.
    let mut by_name: std::collections::BTreeMap<&String, (usize, &Value)> = Default::default();
    for (section, map) in scopes {
        for (name, v) in map {
            let at = find_json_key(text, section, name).unwrap_or(usize::MAX);
            by_name.insert(name, (at, v));
        }
    }
    let mut entries: Vec<(usize, &String, &Value)> = by_name
        .into_iter()
        .map(|(name, (at, v))| (at, name, v))
        .collect();
    entries.sort_by_key(|(pos, name, _)| (*pos, (*name).clone()));
    let opencode_file = match dialect {
        Dialect::OpenCode => true,
        Dialect::Guess => entries
            .iter()
            .any(|(_, _, v)| super::opencode::is_opencode_entry(v)),
        Dialect::Claude | Dialect::Crush => false,
    };
    for (pos, name, value) in entries {
        let entry_at = if pos == usize::MAX { 0 } else { pos };
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
            let opencode = match dialect {
                Dialect::OpenCode => true,
                Dialect::Guess => super::opencode::is_opencode_entry(value),
                Dialect::Claude | Dialect::Crush => false,
            };
            // Gemini CLI's entry with its bare `$VAR`s read as Gemini CLI reads them.
            let gemini;
            // Antigravity's entry as it runs it (a `serverUrl` over a `command`).
            let antigravity;
            // mcp-proxy's entry, and the names of its tool filter.
            let mut proxy_wording = None;
            let translated = match dialect {
                Dialect::Claude if mcp_proxy_file => {
                    let (entry, wording, note) =
                        super::mcp_proxy::entry(value).map_err(|m| fail(None, m))?;
                    if let Some(note) = note {
                        let offset =
                            find_json_key(text, entry_at, "toolFilter").unwrap_or(entry_at);
                        let (line, column) = line_col(text, offset);
                        warnings.push(format!(
                            "{}:{line}:{column}: server {name:?}: {note}",
                            ctx.path.display()
                        ));
                    }
                    proxy_wording = Some(wording);
                    std::borrow::Cow::Owned(entry)
                }
                Dialect::Claude => {
                    let value = if gemini_file {
                        gemini = super::gemini::bare_vars(value, ctx.env);
                        &gemini
                    } else {
                        value
                    };
                    let value = if antigravity_file {
                        let (entry, set_aside) =
                            super::antigravity::entry(std::borrow::Cow::Borrowed(value));
                        if set_aside {
                            let offset =
                                find_json_key(text, entry_at, "command").unwrap_or(entry_at);
                            let (line, column) = line_col(text, offset);
                            warnings.push(format!(
                                "{}:{line}:{column}: server {name:?}: has both `serverUrl` and `command`; Antigravity connects to the URL, and so does switchboard",
                                ctx.path.display()
                            ));
                        }
                        antigravity = entry;
                        &*antigravity
                    } else {
                        value
                    };
                    let (entry, note) = host_timeout(
                        ctx,
                        tool_lists(copilot_entry(zed_command(value)), gemini_file),
                    )
                    .map_err(|message| fail(Some("timeout"), message))?;
                    if let Some(note) = note {
                        let offset = find_json_key(text, entry_at, "timeout").unwrap_or(entry_at);
                        let (line, column) = line_col(text, offset);
                        warnings.push(format!(
                            "{}:{line}:{column}: server {name:?}: {note}",
                            ctx.path.display()
                        ));
                    }
                    entry
                }
                _ if opencode => std::borrow::Cow::Owned(
                    super::opencode::to_entry(ctx, value)
                        .map_err(|(key, message)| fail(key.as_deref(), message))?,
                ),
                _ => std::borrow::Cow::Owned(
                    super::crush::to_entry(value)
                        .map_err(|(key, message)| fail(key.as_deref(), message))?,
                ),
            };
            let raw: RawServer = entry::raw_server(translated.into_owned())
                .map_err(|(key, message)| fail(key.as_deref(), message))?;
            // OpenCode's secret is read from the file as written: a `{env:...}` there is already
            // substituted in `raw`.
            let (secret_key, written) = if opencode {
                let written = value
                    .pointer("/oauth/clientSecret")
                    .and_then(Value::as_str)
                    .is_some_and(|s| !s.contains("{env:") && !s.contains("{file:"));
                ("clientSecret", written)
            } else {
                ("client_secret", true)
            };
            if written && let Some(w) = entry::literal_oauth_secret(name, &raw, secret_key) {
                let offset = find_json_key(text, entry_at, secret_key).unwrap_or(entry_at);
                let (line, column) = line_col(text, offset);
                warnings.push(format!("{}:{line}:{column}: {w}", ctx.path.display()));
            }
            if let Some(w) = entry::joined_argument(name, &raw) {
                let offset = find_json_key(text, entry_at, "args").unwrap_or(entry_at);
                let (line, column) = line_col(text, offset);
                warnings.push(format!("{}:{line}:{column}: {w}", ctx.path.display()));
            }
            // Messages name the settings as this file wrote them.
            let wording = match dialect {
                Dialect::Claude if mcp_proxy_file => proxy_wording.unwrap_or_default(),
                Dialect::Claude => Wording::of_mcp_servers_entry(value, gemini_file),
                _ if opencode => Wording::default(),
                _ => Wording::of_crush_entry(value),
            };
            let validated = entry::validate(ctx, name, raw)
                .map(|s| wording.applied(s))
                .map_err(|e| fail(e.field, e.message));
            let offset = find_json_key(text, entry_at, "bundle").unwrap_or(entry_at);
            let (line, column) = line_col(text, offset);
            for note in ctx.take_notes() {
                warnings.push(format!(
                    "{}:{line}:{column}: server {name:?}: {note}",
                    ctx.path.display()
                ));
            }
            validated
        })();
        entry::record(
            name,
            result,
            match dialect {
                Dialect::Claude if mcp_proxy_file => "disabled in the config (options.disabled)",
                Dialect::Claude | Dialect::Crush => "disabled in the config (\"disabled\": true)",
                _ => "disabled in the config",
            },
            &mut servers,
            &mut disabled,
        );
        if let Some(state) = &state {
            if let Some(last) = servers.last_mut().filter(|s| s.name() == name.as_str()) {
                last.origin = Some(state.scope_of(name));
            } else if let Some(last) = disabled.last_mut().filter(|d| d.name == *name) {
                last.origin = Some(state.scope_of(name));
            }
        }
    }
    // Only a file with either setting is read again, in its own order.
    if opencode_file && (root.get("tools").is_some() || root.get("permission").is_some()) {
        super::opencode_permission::apply(ctx.path, text, &mut servers, &mut warnings);
    }
    if matches!(dialect, Dialect::Crush) {
        super::crush::apply_allowed(ctx.path, &root, &mut servers);
    }
    if state.is_none() && root.get("context_servers").is_some() {
        super::zed_permissions::apply(ctx.path, &root, &mut servers, &mut warnings);
    }
    if state.is_none() && super::cli_agent::is_agent(&root) {
        super::cli_agent::apply(ctx, &root, &mut servers, &mut disabled, &mut warnings);
    }
    // A Gemini CLI settings file here is a part of `gemini::gather`, which applies the lists
    // once to the whole.
    if !gemini_file {
        gemini_lists(&root, &mut servers, &mut disabled);
        if state.is_none() && ctx.policy {
            super::layers::gather(ctx, &mut servers, &mut disabled, &mut warnings);
            super::claude_extensions::add(ctx, &mut servers, &mut disabled, &mut warnings);
            super::amp::apply(ctx, &root, &mut servers, &mut disabled, &mut warnings);
            if super::layers::files_of(ctx, "Cursor").is_some() {
                super::cursor::apply(ctx, &mut servers, &mut warnings);
            }
        }
    }
    // Claude Code's own files: its settings are read once, for the project's approvals, the
    // plugins and the managed policy.
    if let Some(scope) = super::claude_settings::Scope::of(ctx, state.as_ref()) {
        let settings = super::claude_settings::Settings::read(ctx, &scope, &mut warnings);
        if let Some(state) = &state {
            state.add_project_file(ctx, &settings, &mut servers, &mut disabled, &mut warnings);
            let plugins = super::claude_plugins::add(
                ctx,
                &settings,
                &scope,
                &mut servers,
                &mut disabled,
                &mut warnings,
            );
            state.apply_toggles(&plugins, &mut servers, &mut disabled);
        }
        super::claude_settings::apply_timeouts(ctx, &settings, &mut servers, &mut warnings);
        super::claude_permissions::apply(&scope, &settings, &mut servers, &mut warnings);
        if ctx.policy {
            super::claude_policy::apply(
                ctx,
                &scope,
                &settings,
                &mut servers,
                &mut disabled,
                &mut warnings,
            );
        }
    }
    if state.is_some() && servers.is_empty() && disabled.is_empty() {
        return Err(HostError::ConfigShape {
            path: ctx.path.to_path_buf(),
            message: format!(
                "Claude Code's state file names no servers for the user or for a project holding {}, and no enabled plugin has any; add one with `claude mcp add`, or pass the project's .mcp.json",
                ctx.cwd
                    .as_deref()
                    .map_or("this folder".into(), |d| d.display().to_string())
            ),
        });
    }
    Ok(ctx.servers_only(servers, disabled, warnings))
}

/// The servers of a file that names none.
static NO_SERVERS: std::sync::LazyLock<serde_json::Map<String, Value>> =
    std::sync::LazyLock::new(serde_json::Map::new);

/// The map a file's format keeps its servers in, where its key is written, and the dialect of its
/// entries.
fn named_servers<'a>(
    ctx: &Context<'_>,
    text: &str,
    root: &'a Value,
    alone: Option<&'a serde_json::Map<String, Value>>,
) -> Result<(usize, &'a serde_json::Map<String, Value>, Dialect), HostError> {
    let (key, mut map) = [
        "mcpServers",
        "servers",
        "context_servers",
        "mcp",
        "amp.mcpServers",
    ]
        .into_iter()
        .find_map(|k| root.get(k).and_then(Value::as_object).map(|m| (k, m)))
        .or(alone.map(|one| ("", one)))
        .or_else(|| {
            // Claude Desktop's config may hold only its preferences when every server is an
            // extension (`claude_extensions`), and a host's `settings.json` (Qwen Code's, Amp's,
            // Zed's) only its other settings.
            // An Amazon Q or Kiro agent may take all its servers from the CLI's `mcp.json`.
            (super::claude_extensions::is_config_file(ctx.path)
                || ctx.path.file_name().is_some_and(|n| n == "settings.json")
                || super::cli_agent::is_agent(root))
            .then(|| ("mcpServers", &*NO_SERVERS))
        })
        .ok_or_else(|| HostError::ConfigShape {
            path: ctx.path.to_path_buf(),
            message: "expected an object with \"mcpServers\" (Claude Desktop, Cursor, Claude Code, Gemini CLI, Windsurf, Continue), \"servers\" (VS Code), \"context_servers\" (Zed), \"mcp\" (OpenCode, Crush) or \"amp.mcpServers\" (Amp), or one server's own \"command\" or \"url\"".into(),
        })?;
    let mut section = find_json_key(text, 0, key).unwrap_or(0);
    if key != "mcp" {
        return Ok((section, map, Dialect::Claude));
    }
    // OpenCode 2 keeps its servers one level down, under `mcp.servers`; a server that happens to
    // be named "servers" has the settings of one.
    if let Some(inner) = map.get("servers").and_then(Value::as_object)
        && !["type", "command", "url"]
            .iter()
            .any(|k| inner.contains_key(*k))
    {
        section = find_json_key(text, section, "servers").unwrap_or(section);
        map = inner;
    }
    let schema = root.get("$schema").and_then(Value::as_str).unwrap_or("");
    let file = ctx
        .path
        .file_name()
        .map(|f| f.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    let dialect = if schema.contains("opencode") || file.contains("opencode") {
        Dialect::OpenCode
    } else if schema.contains("charm.land") || file.contains("crush") {
        Dialect::Crush
    } else {
        Dialect::Guess
    };
    Ok((section, map, dialect))
}

/// Whose entries a file's servers are written as.
#[derive(Clone, Copy)]
enum Dialect {
    /// `mcpServers`, `servers`, `context_servers`: Claude Desktop's form and its relatives.
    Claude,
    /// `mcp` in a file that says it is OpenCode's.
    OpenCode,
    /// `mcp` in a file that says it is Crush's.
    Crush,
    /// `mcp` in a file that does not say: each entry by its shape.
    Guess,
}

/// Gemini CLI's server lists beside `mcpServers`: `mcp.allowed` (when it names any, only those
/// run) and `mcp.excluded` (those do not), and their older spellings `allowMCPServers` and
/// `excludeMCPServers`. A server they keep out is listed as disabled, saying which list.
pub fn gemini_lists(
    root: &Value,
    servers: &mut Vec<ServerConfig>,
    disabled: &mut Vec<DisabledServer>,
) {
    if !root.get("mcpServers").is_some_and(Value::is_object) {
        return;
    }
    let list = |value: Option<&Value>| -> Option<Vec<String>> {
        let names: Vec<String> = value?
            .as_array()?
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect();
        (!names.is_empty()).then_some(names)
    };
    let settings = root.get("mcp").filter(|m| m.is_object());
    let allowed = list(settings.and_then(|m| m.get("allowed")))
        .map(|l| (l, "mcp.allowed"))
        .or_else(|| list(root.get("allowMCPServers")).map(|l| (l, "allowMCPServers")));
    let excluded = list(settings.and_then(|m| m.get("excluded")))
        .map(|l| (l, "mcp.excluded"))
        .or_else(|| list(root.get("excludeMCPServers")).map(|l| (l, "excludeMCPServers")));
    if allowed.is_none() && excluded.is_none() {
        return;
    }
    servers.retain(|s| {
        let name = s.name();
        let reason = if let Some((_, key)) = excluded
            .as_ref()
            .filter(|(l, _)| l.iter().any(|n| n == name))
        {
            format!("excluded in Gemini CLI's settings ({key})")
        } else if let Some((_, key)) = allowed
            .as_ref()
            .filter(|(l, _)| !l.iter().any(|n| n == name))
        {
            format!("not among the servers Gemini CLI's settings allow ({key})")
        } else {
            return true;
        };
        disabled.push(DisabledServer {
            name: name.to_string(),
            reason,
            origin: None,
        });
        false
    });
}

/// The hosts' own per-server `timeout`, for each call, as `call_timeout`: seconds in Cline's and
/// Roo Code's files, milliseconds in the others' (Claude Code, Gemini CLI, Copilot), where Claude
/// Code ignores a value under 1000. More than a day is read as a day. The entry is returned with
/// a note when the value is ignored.
fn host_timeout<'a>(
    ctx: &Context<'_>,
    value: std::borrow::Cow<'a, Value>,
) -> Result<(std::borrow::Cow<'a, Value>, Option<String>), String> {
    let Some(timeout) = value
        .get("timeout")
        .filter(|_| value.get("call_timeout").is_none())
    else {
        return Ok((value, None));
    };
    let file = ctx.path.file_name().and_then(|f| f.to_str()).unwrap_or("");
    let seconds = matches!(file, "cline_mcp_settings.json" | "mcp_settings.json");
    let unit = if seconds { "seconds" } else { "milliseconds" };
    let Some(n) = timeout.as_f64().filter(|n| n.is_finite() && *n > 0.0) else {
        return Err(format!("`timeout` must be a positive number of {unit}"));
    };
    let secs = if seconds {
        n
    } else if n < 1000.0 {
        return Ok((
            value,
            Some(format!(
                "timeout {n} is in milliseconds here, and under 1000 it is ignored (as Claude Code ignores it); the default call timeout applies"
            )),
        ));
    } else {
        n / 1000.0
    };
    let mut entry = value.into_owned();
    if let Some(obj) = entry.as_object_mut() {
        obj.insert("call_timeout".into(), serde_json::json!(secs.min(86_400.0)));
    }
    Ok((std::borrow::Cow::Owned(entry), None))
}

/// GitHub Copilot's entry form (Copilot CLI's `~/.copilot/mcp-config.json`, and Copilot's
/// coding agent): `"type": "local"` is a stdio command, and `"tools"` lists the tools to turn
/// on, `"*"` for all, which is switchboard's `tools.allow` (an empty list turns none on). Any
/// other value is returned as it is.
fn copilot_entry(value: std::borrow::Cow<'_, Value>) -> std::borrow::Cow<'_, Value> {
    let local = value.get("type").and_then(Value::as_str) == Some("local")
        && value.get("command").is_some_and(Value::is_string);
    let names: Option<Vec<Value>> = value
        .get("tools")
        .and_then(Value::as_array)
        .filter(|l| l.iter().all(Value::is_string))
        .cloned();
    if !local && names.is_none() {
        return value;
    }
    let mut entry = value.into_owned();
    if let Some(map) = entry.as_object_mut() {
        if local {
            map.insert("type".into(), Value::String("stdio".into()));
        }
        if let Some(names) = names {
            if names.iter().any(|n| n == "*") {
                map.remove("tools");
            } else if names.is_empty() {
                map.insert("tools".into(), serde_json::json!({"deny": ["*"]}));
            } else {
                map.insert("tools".into(), serde_json::json!({ "allow": names }));
            }
        }
    }
    std::borrow::Cow::Owned(entry)
}

/// The per-server tool settings of the hosts that write `mcpServers` entries, as switchboard's:
/// `disabledTools` (Windsurf, Kiro, Amazon Q, Roo Code, Cline: tools the host does not offer)
/// joins `tools.deny`; `autoApprove` (Cline, Kiro, Amazon Q) and `alwaysAllow` (Roo Code) name
/// tools that run without asking (`approve = "never"` for each, or for the server with `"*"`);
/// Gemini CLI's `"trust": true` (in its own settings only) runs every tool of the server without
/// asking. Names that are not strings are passed over; any other value is returned as it is.
fn tool_lists(value: std::borrow::Cow<'_, Value>, gemini: bool) -> std::borrow::Cow<'_, Value> {
    let names = |key: &str| entry::strings(value.get(key));
    let disabled = names("disabledTools");
    let approved: Vec<String> = names("autoApprove")
        .into_iter()
        .chain(names("alwaysAllow"))
        .collect();
    let trusted = gemini && value.get("trust") == Some(&Value::Bool(true));
    if disabled.is_empty() && approved.is_empty() && !trusted {
        return value;
    }
    let mut entry = value.into_owned();
    let Some(map) = entry.as_object_mut() else {
        return std::borrow::Cow::Owned(entry);
    };
    if !disabled.is_empty() {
        let tools = map.entry("tools").or_insert_with(|| serde_json::json!({}));
        if let Some(tools) = tools.as_object_mut() {
            let deny = tools
                .entry("deny")
                .or_insert_with(|| Value::Array(Vec::new()));
            if let Some(deny) = deny.as_array_mut() {
                deny.extend(disabled.into_iter().map(Value::String));
            }
        }
    }
    if trusted || approved.iter().any(|n| n == "*") {
        map.insert("approve".into(), Value::String("never".into()));
    }
    let per_tool: Vec<String> = approved.into_iter().filter(|n| n != "*").collect();
    if !per_tool.is_empty() {
        let tool = map.entry("tool").or_insert_with(|| serde_json::json!({}));
        if let Some(tool) = tool.as_object_mut() {
            for name in per_tool {
                tool.insert(name, serde_json::json!({"approve": "never"}));
            }
        }
    }
    std::borrow::Cow::Owned(entry)
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
