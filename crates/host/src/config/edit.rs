//! Changing a config file by one server: an entry added, removed, turned off or on, and the
//! rest of the file left byte for byte as it was (comments, order, spacing). JSON text is
//! changed through `json_members`; a pasted snippet's servers come from `snippet`.
//!
//! switchboard writes its own `switchboard.toml` and the `mcpServers` JSON that Claude Code's
//! `.mcp.json`, Claude Desktop, Cursor and most hosts read (VS Code's `servers` too). A file
//! another host rewrites on its own (Claude Code's `~/.claude.json`) or spells differently
//! (Codex's `config.toml`, Gemini CLI's `settings.json`, YAML files) is refused, naming that
//! host's own command, so an edit never leaves a file its host reads otherwise than meant.

use std::path::Path;

use serde_json::Value;

use super::json_members::{Json, Member, insert_member, members, remove_member, root_object};
use super::jsonc;
pub use super::snippet::servers_from_snippet;
use crate::error::HostError;

/// How a new server is reached.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reach {
    /// A program started with stdio.
    Command {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Environment variables for it, in the order given.
        env: Vec<(String, String)>,
        /// The folder it starts in, as the user wrote it.
        cwd: Option<String>,
    },
    /// A server at a URL: Streamable HTTP (with the legacy HTTP+SSE transport as fallback).
    Url {
        /// The endpoint.
        url: String,
        /// Headers sent with every request, in the order given.
        headers: Vec<(String, String)>,
        /// Written as the legacy HTTP+SSE transport (`type = "sse"`).
        legacy_sse: bool,
    },
}

/// A server entry to write into a config file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewServer {
    /// Its name in the file.
    pub name: String,
    /// How it is reached.
    pub reach: Reach,
    /// Other settings of the entry as another host's file wrote them (`alwaysAllow`,
    /// `timeout`, ...): written as they are into a JSON file, whose hosts read them; a
    /// `switchboard.toml` says those it has a setting for its own way ([`left_out`] names the
    /// rest).
    pub other: Vec<(String, serde_json::Value)>,
    /// switchboard's own settings for it.
    pub own: Own,
}

/// switchboard's own settings for a new entry (`add`'s flags). A `switchboard.toml` holds them
/// all; another host's file has no place for them, except Claude Code's `oauth` client id and
/// callback port in a `.mcp.json`, so [`add_server`] refuses the rest there.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Own {
    /// `tools.allow`: only these tools (patterns) reach models.
    pub allow: Vec<String>,
    /// `tools.deny`: these never do.
    pub deny: Vec<String>,
    /// `approve`: when calls wait for the user (a mode's word: `never`, `writes`, ...).
    pub approve: Option<String>,
    /// `call_timeout`, as written (`"90s"`, `"2m"`; a bare number is seconds).
    pub call_timeout: Option<String>,
    /// `alias`: the prefix of its tools' public names.
    pub alias: Option<String>,
    /// `oauth.client_id`: a client registered with the server's authorization server.
    pub client_id: Option<String>,
    /// `oauth.client_secret`, as written (`${VAR}` keeps it out of the file).
    pub client_secret: Option<String>,
    /// `oauth.redirect_port`: the loopback port of the client's registered redirect URI.
    pub redirect_port: Option<u16>,
    /// `oauth.grant = "client_credentials"`: the client buys its token with its own
    /// credentials, no person logs in.
    pub client_credentials: bool,
    /// `roots`: the folders offered to this server as roots, in place of the ones every server
    /// is offered (absolute paths, as written).
    pub roots: Vec<String>,
}

impl Own {
    /// The settings given, by their names in `switchboard.toml`.
    pub fn given(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        for (name, given) in [
            ("tools.allow", !self.allow.is_empty()),
            ("tools.deny", !self.deny.is_empty()),
            ("approve", self.approve.is_some()),
            ("call_timeout", self.call_timeout.is_some()),
            ("alias", self.alias.is_some()),
            ("oauth.client_id", self.client_id.is_some()),
            ("oauth.client_secret", self.client_secret.is_some()),
            ("oauth.redirect_port", self.redirect_port.is_some()),
            ("oauth.grant", self.client_credentials),
            ("roots", !self.roots.is_empty()),
        ] {
            if given {
                out.push(name);
            }
        }
        out
    }
}

/// The formats switchboard edits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    /// `switchboard.toml`.
    Native,
    /// A JSON object of servers under this top-level key.
    Json(&'static str),
}

/// `text` (`None`: the file does not exist yet) with `server` added. A server of that name
/// already in the file is an error: nothing is replaced.
pub fn add_server(
    path: &Path,
    text: Option<&str>,
    server: &NewServer,
) -> Result<String, HostError> {
    check_name(path, &server.name)?;
    let text = text.map(|t| t.strip_prefix('\u{feff}').unwrap_or(t));
    match format_of(path, text)? {
        Format::Native => native_add(path, text.unwrap_or(""), server),
        Format::Json(key) => json_add(path, text, key, server),
    }
}

/// The keys of `server.other` that `add_server` leaves out of this file: none for a JSON file,
/// which takes them as written; for `switchboard.toml`, those with no setting of its own
/// (`timeout`, say, whose unit each host reads its own way).
pub fn left_out(path: &Path, text: Option<&str>, server: &NewServer) -> Vec<String> {
    if matches!(format_of(path, text), Ok(Format::Json(_))) {
        return Vec::new();
    }
    server
        .other
        .iter()
        .filter(|(key, value)| native_setting(key, value).is_none())
        .map(|(key, _)| key.clone())
        .collect()
}

/// Another host's entry setting as `switchboard.toml` says it, where it has a way to.
#[derive(Debug, PartialEq)]
enum NativeSetting {
    /// `disabled: true`.
    Disabled,
    /// `envFile`: `env_file`.
    EnvFile(String),
    /// `disabledTools`: `tools.deny`.
    Deny(Vec<String>),
    /// `alwaysAllow` / `autoApprove`: these tools (`*`: all of them) run unasked.
    RunUnasked(Vec<String>),
}

fn native_setting(key: &str, value: &Value) -> Option<NativeSetting> {
    let texts = || -> Option<Vec<String>> {
        value
            .as_array()?
            .iter()
            .map(|v| v.as_str().map(str::to_string))
            .collect()
    };
    match key {
        "disabled" if value == &Value::Bool(true) => Some(NativeSetting::Disabled),
        "envFile" | "env_file" => value.as_str().map(|f| NativeSetting::EnvFile(f.into())),
        "disabledTools" => texts().map(NativeSetting::Deny),
        "alwaysAllow" | "autoApprove" => texts().map(NativeSetting::RunUnasked),
        _ => None,
    }
}

/// `text` with server `name` taken out (in `switchboard.toml`, its `[servers.NAME.tool.*]`
/// settings and OAuth client with it). A name the file does not hold is an error.
pub fn remove_server(path: &Path, text: &str, name: &str) -> Result<String, HostError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    match format_of(path, Some(text))? {
        Format::Native => {
            let mut doc = native_doc(path, text)?;
            let servers = doc
                .get_mut("servers")
                .and_then(toml_edit::Item::as_table_like_mut);
            let removed = servers.and_then(|s| s.remove(name)).is_some();
            if removed {
                Ok(doc.to_string())
            } else {
                Err(not_there(path, name))
            }
        }
        Format::Json(key) => {
            let plain = jsonc::to_json(text);
            let (servers, _, found) = json_server(path, &plain, key, name)?;
            Ok(remove_member(text, &plain, servers, found))
        }
    }
}

/// `text` with server `name` turned off (`disabled = true`, `"disabled": true`) or back on (the
/// key taken out), the rest of its entry as it was. A name the file does not hold is an error.
pub fn set_disabled(
    path: &Path,
    text: &str,
    name: &str,
    disabled: bool,
) -> Result<String, HostError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    match format_of(path, Some(text))? {
        Format::Native => {
            let mut doc = native_doc(path, text)?;
            let entry = doc
                .get_mut("servers")
                .and_then(toml_edit::Item::as_table_like_mut)
                .and_then(|s| s.get_mut(name))
                .and_then(toml_edit::Item::as_table_like_mut)
                .ok_or_else(|| not_there(path, name))?;
            let already = entry.get("disabled").and_then(toml_edit::Item::as_bool);
            if disabled && already == Some(true) {
                // As it is (a comment after the value stays).
                return Ok(text.to_string());
            }
            if disabled {
                entry.insert("disabled", toml_edit::value(true));
            } else {
                entry.remove("disabled");
            }
            Ok(doc.to_string())
        }
        Format::Json(key) => {
            let plain = jsonc::to_json(text);
            let (_, all, found) = json_server(path, &plain, key, name)?;
            let entry = &all[found];
            if plain.as_bytes().get(entry.value) != Some(&b'{') {
                return Err(edit_error(
                    path,
                    format!("server {name:?} is not an object of settings; edit it by hand"),
                ));
            }
            let own = members(&plain, entry.value);
            let said: Vec<&Member> = own.iter().filter(|m| m.key == "disabled").collect();
            if disabled
                && let [only] = said.as_slice()
                && &plain[only.value..only.value_end] == "true"
            {
                return Ok(text.to_string());
            }
            // Every `disabled` of the entry goes (a repeated key counts by its last).
            let mut out = text.to_string();
            loop {
                let plain = jsonc::to_json(&out).into_owned();
                let own = members(&plain, entry.value);
                match own.iter().rposition(|m| m.key == "disabled") {
                    Some(i) => out = remove_member(&out, &plain, entry.value, i),
                    None => break,
                }
            }
            if disabled {
                let plain = jsonc::to_json(&out).into_owned();
                out = insert_member(&out, &plain, entry.value, "disabled", &Json::Bool(true));
            }
            Ok(out)
        }
    }
}

/// Replace `path`'s content with `text` once all of it is written (a new file beside it,
/// renamed over it), keeping the old file's permissions (a config may hold secrets). A symbolic
/// link is followed, so a config a dotfile manager links stays linked. The folder is created
/// when missing.
pub fn save(path: &Path, text: &str) -> Result<(), HostError> {
    use std::io::Write as _;
    let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let failed = |e: std::io::Error| edit_error(&path, format!("cannot write it: {e}"));
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir).map_err(failed)?;
    let mut file = tempfile::Builder::new()
        .prefix(".switchboard-edit")
        .tempfile_in(&dir)
        .map_err(failed)?;
    file.write_all(text.as_bytes()).map_err(failed)?;
    if let Ok(meta) = std::fs::metadata(&path) {
        file.as_file()
            .set_permissions(meta.permissions())
            .map_err(failed)?;
    }
    file.as_file().sync_all().map_err(failed)?;
    file.persist(&path).map_err(|e| failed(e.error))?;
    Ok(())
}

/// A name every format and every command line can carry.
fn check_name(path: &Path, name: &str) -> Result<(), HostError> {
    let why = if name.trim().is_empty() {
        Some("a server needs a name")
    } else if name != name.trim() {
        Some("a server's name cannot begin or end with spaces")
    } else if name.chars().any(char::is_control) {
        Some("a server's name cannot hold control characters")
    } else if name.contains('/') {
        Some("a server's name cannot hold `/` (`SERVER/TOOL` names a tool on the command line)")
    } else {
        None
    };
    match why {
        Some(why) => Err(edit_error(path, format!("{why}: {name:?}"))),
        None => Ok(()),
    }
}

fn edit_error(path: &Path, message: String) -> HostError {
    HostError::ConfigEdit {
        path: path.to_path_buf(),
        message,
    }
}

fn not_there(path: &Path, name: &str) -> HostError {
    edit_error(path, format!("no server named {name:?} in this file"))
}

/// Which format `path` holds, refusing the ones switchboard does not write.
fn format_of(path: &Path, text: Option<&str>) -> Result<Format, HostError> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let refuse = |what: &str| {
        Err(edit_error(
            path,
            format!(
                "{what}; switchboard writes its own switchboard.toml and mcpServers JSON files (give one with --config)"
            ),
        ))
    };
    if path.is_dir() || matches!(ext.as_deref(), Some("mcpb" | "dxt")) {
        return refuse("an MCP bundle is changed by changing its manifest, not here");
    }
    if matches!(ext.as_deref(), Some("yaml" | "yml")) {
        return refuse(
            "this is a YAML config (goose, Continue, mcphost, LibreChat): edit it with its host or by hand",
        );
    }
    // Files other hosts keep under these names take those hosts' own keys, whether they hold
    // servers yet or not.
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    match name.as_str() {
        ".claude.json" => {
            return refuse(
                "this is Claude Code's state file, which Claude Code rewrites as it runs: use `claude mcp add` / `claude mcp remove`",
            );
        }
        "settings.json" | "settings.jsonc" => {
            return refuse(
                "a settings.json is another host's settings (Gemini CLI, Qwen Code, Zed, Amp, VS Code or Claude Code), whose servers take that host's own keys: use the host's own command (`gemini mcp add`, ...) or edit it by hand",
            );
        }
        "opencode.json" | "opencode.jsonc" | "crush.json" | ".crush.json" => {
            return refuse(
                "this is OpenCode's or Crush's config, whose `mcp` entries take their own keys: edit it with its host or by hand",
            );
        }
        "config.toml" if text.is_none() => {
            return refuse(
                "config.toml is Codex's name for its config: use `codex mcp add`, or name a new switchboard file switchboard.toml",
            );
        }
        _ => {}
    }
    let Some(text) = text else {
        return match ext.as_deref() {
            // VS Code's own files (`.vscode/mcp.json`, the user's `Code/User/mcp.json`).
            Some("json" | "jsonc") if vscode_file(path) => Ok(Format::Json("servers")),
            Some("json" | "jsonc") => Ok(Format::Json("mcpServers")),
            Some("toml") => Ok(Format::Native),
            _ => refuse(
                "a new config file's name must end in .toml (switchboard's own) or .json (mcpServers)",
            ),
        };
    };
    let is_json = match ext.as_deref() {
        Some("json" | "jsonc") => true,
        Some("toml") => false,
        _ => text.trim_start().starts_with('{'),
    };
    if !is_json {
        let table: toml::Table =
            toml::from_str(text).map_err(|e| toml_syntax(path, text, e.span(), e.message()))?;
        if super::codex::is_codex(&table) {
            return refuse("this is Codex's config.toml: use `codex mcp add` / `codex mcp remove`");
        }
        return Ok(Format::Native);
    }
    if text.trim().is_empty() {
        return Ok(Format::Json("mcpServers"));
    }
    let plain = jsonc::to_json(text);
    let root: Value = serde_json::from_str(&plain).map_err(|e| HostError::ConfigSyntax {
        path: path.to_path_buf(),
        line: e.line().max(1),
        column: e.column().max(1),
        message: e.to_string(),
    })?;
    let Some(object) = root.as_object() else {
        return refuse("this JSON file is not an object of settings");
    };
    if object.contains_key("projects") {
        return refuse(
            "this is Claude Code's state file, which Claude Code rewrites as it runs: use `claude mcp add` / `claude mcp remove`",
        );
    }
    if super::mcp_proxy::is_config(&root) {
        return refuse(
            "this is mcp-proxy's config, whose entries take mcp-proxy's own keys: edit it by hand",
        );
    }
    if super::mcphost::is_mcphost_json(path, &root) {
        return refuse(
            "this is mcphost's config, whose entries take mcphost's own keys: edit it by hand",
        );
    }
    if object.get("mcpServers").is_some_and(Value::is_array) {
        return refuse("this is Continue's older config.json: edit it by hand");
    }
    let alone = ["command", "url"]
        .iter()
        .any(|k| object.get(*k).is_some_and(Value::is_string));
    if alone && !object.contains_key("mcpServers") && !object.contains_key("servers") {
        return refuse(
            "this file is one server's own entry (as a file of Continue's .continue/mcpServers/ is): edit it by hand",
        );
    }
    for key in ["mcpServers", "servers"] {
        match object.get(key) {
            Some(Value::Object(_)) => {
                return Ok(Format::Json(if key == "servers" {
                    "servers"
                } else {
                    "mcpServers"
                }));
            }
            Some(_) => return refuse(&format!("`{key}` here is not an object of servers")),
            None => {}
        }
    }
    for (key, host) in [
        ("context_servers", "Zed"),
        ("mcp", "OpenCode or Crush"),
        ("amp.mcpServers", "Amp"),
    ] {
        if object.contains_key(key) {
            return refuse(&format!(
                "this file keeps its servers under `{key}` ({host}'s own entries): edit it with its host or by hand"
            ));
        }
    }
    Ok(Format::Json("mcpServers"))
}

/// Whether `path` is where VS Code keeps its `mcp.json` (whose servers are under `servers`).
fn vscode_file(path: &Path) -> bool {
    let folder = path.parent().and_then(Path::file_name);
    path.file_name().is_some_and(|n| n == "mcp.json")
        && folder.is_some_and(|f| f == ".vscode" || f == "User")
}

/// A TOML file that does not parse, pointing at where.
fn toml_syntax(
    path: &Path,
    text: &str,
    span: Option<std::ops::Range<usize>>,
    message: &str,
) -> HostError {
    let (line, column) = span.map_or((1, 1), |s| super::position::line_col(text, s.start));
    HostError::ConfigSyntax {
        path: path.to_path_buf(),
        line,
        column,
        message: message.trim().to_string(),
    }
}

/// `own` written into a new `[servers.NAME]` table.
fn native_own(entry: &mut toml_edit::Table, own: &Own) {
    if let Some(alias) = &own.alias {
        entry.insert("alias", toml_edit::value(alias));
    }
    if let Some(mode) = &own.approve {
        entry.insert("approve", toml_edit::value(mode));
    }
    if let Some(timeout) = &own.call_timeout {
        // A bare number is seconds, and a number in the file.
        let value = match timeout.trim().parse::<i64>() {
            Ok(n) => toml_edit::value(n),
            Err(_) => toml_edit::value(timeout),
        };
        entry.insert("call_timeout", value);
    }
    if !own.allow.is_empty() {
        let mut lists = toml_edit::InlineTable::new();
        lists.insert(
            "allow",
            own.allow.iter().collect::<toml_edit::Array>().into(),
        );
        entry.insert("tools", toml_edit::value(lists));
    }
    deny_too(entry, &own.deny);
    if !own.roots.is_empty() {
        entry.insert(
            "roots",
            toml_edit::value(own.roots.iter().collect::<toml_edit::Array>()),
        );
    }
    if own.client_id.is_some()
        || own.client_secret.is_some()
        || own.redirect_port.is_some()
        || own.client_credentials
    {
        let mut oauth = toml_edit::Table::new();
        if own.client_credentials {
            oauth.insert("grant", toml_edit::value("client_credentials"));
        }
        if let Some(id) = &own.client_id {
            oauth.insert("client_id", toml_edit::value(id));
        }
        if let Some(secret) = &own.client_secret {
            oauth.insert("client_secret", toml_edit::value(secret));
        }
        if let Some(port) = own.redirect_port {
            oauth.insert("redirect_port", toml_edit::value(i64::from(port)));
        }
        entry.insert("oauth", toml_edit::Item::Table(oauth));
    }
}

/// `tools` in `entry` with `tools` added to its deny list (made if need be).
fn deny_too(entry: &mut toml_edit::Table, tools: &[String]) {
    if tools.is_empty() {
        return;
    }
    let lists = entry
        .entry("tools")
        .or_insert_with(|| toml_edit::value(toml_edit::InlineTable::new()));
    if let Some(lists) = lists.as_inline_table_mut() {
        let deny = lists
            .entry("deny")
            .or_insert_with(|| toml_edit::Array::new().into());
        if let Some(deny) = deny.as_array_mut() {
            for tool in tools {
                deny.push(tool.as_str());
            }
        }
    }
}

fn native_doc(path: &Path, text: &str) -> Result<toml_edit::DocumentMut, HostError> {
    text.parse::<toml_edit::DocumentMut>()
        .map_err(|e| toml_syntax(path, text, e.span(), e.message()))
}

fn native_add(path: &Path, text: &str, server: &NewServer) -> Result<String, HostError> {
    let mut doc = native_doc(path, text)?;
    let servers = doc.entry("servers").or_insert_with(|| {
        // `[servers.NAME]` headers without a bare `[servers]` above them.
        let mut table = toml_edit::Table::new();
        table.set_implicit(true);
        toml_edit::Item::Table(table)
    });
    let inline = servers.is_inline_table();
    let Some(servers) = servers.as_table_like_mut() else {
        return Err(edit_error(
            path,
            "`servers` here is not a table of servers".into(),
        ));
    };
    if servers.contains_key(&server.name) {
        return Err(already_there(path, &server.name));
    }
    let mut entry = toml_edit::Table::new();
    let pairs = |pairs: &[(String, String)]| {
        let mut table = toml_edit::InlineTable::new();
        for (k, v) in pairs {
            table.insert(k, v.into());
        }
        toml_edit::value(table)
    };
    match &server.reach {
        Reach::Command {
            command,
            args,
            env,
            cwd,
        } => {
            entry.insert("command", toml_edit::value(command));
            if !args.is_empty() {
                entry.insert(
                    "args",
                    toml_edit::value(args.iter().collect::<toml_edit::Array>()),
                );
            }
            if !env.is_empty() {
                entry.insert("env", pairs(env));
            }
            if let Some(cwd) = cwd {
                entry.insert("cwd", toml_edit::value(cwd));
            }
        }
        Reach::Url {
            url,
            headers,
            legacy_sse,
        } => {
            if *legacy_sse {
                entry.insert("type", toml_edit::value("sse"));
            }
            entry.insert("url", toml_edit::value(url));
            if !headers.is_empty() {
                entry.insert("headers", pairs(headers));
            }
        }
    }
    native_own(&mut entry, &server.own);
    for (key, value) in &server.other {
        match native_setting(key, value) {
            Some(NativeSetting::Disabled) => {
                entry.insert("disabled", toml_edit::value(true));
            }
            Some(NativeSetting::EnvFile(file)) => {
                entry.insert("env_file", toml_edit::value(file));
            }
            Some(NativeSetting::Deny(tools)) => deny_too(&mut entry, &tools),
            Some(NativeSetting::RunUnasked(tools)) if tools.iter().any(|t| t == "*") => {
                entry.insert("approve", toml_edit::value("never"));
            }
            Some(NativeSetting::RunUnasked(tools)) => {
                // Into the tool table an earlier list (`alwaysAllow` beside `autoApprove`) made.
                let each = entry.entry("tool").or_insert_with(|| {
                    let mut each = toml_edit::Table::new();
                    each.set_implicit(true);
                    toml_edit::Item::Table(each)
                });
                if let Some(each) = each.as_table_mut() {
                    for tool in tools {
                        let mut setting = toml_edit::Table::new();
                        setting.insert("approve", toml_edit::value("never"));
                        each.insert(&tool, toml_edit::Item::Table(setting));
                    }
                }
            }
            None => {}
        }
    }
    if inline {
        servers.insert(&server.name, toml_edit::value(entry.into_inline_table()));
        return Ok(doc.to_string());
    }
    // A new table is written after the last of `servers`; when that is the end of the file,
    // the comments closing the file (all of a file of comments alone) stay above it.
    let ours = servers
        .iter()
        .filter_map(|(_, item)| item.as_table().and_then(last_position))
        .max();
    let others = doc
        .iter()
        .filter(|(key, _)| *key != "servers")
        .filter_map(|(_, item)| item.as_table().and_then(last_position))
        .max();
    let last = others.is_none() || ours.is_some_and(|o| Some(o) >= others);
    let trailing = doc.trailing().as_str().unwrap_or("").to_string();
    if last && !trailing.trim().is_empty() {
        doc.set_trailing("");
        let mut prefix = trailing;
        if !prefix.ends_with('\n') {
            prefix.push('\n');
        }
        prefix.push('\n');
        entry.decor_mut().set_prefix(prefix);
    }
    if let Some(servers) = doc
        .get_mut("servers")
        .and_then(toml_edit::Item::as_table_like_mut)
    {
        servers.insert(&server.name, toml_edit::Item::Table(entry));
    }
    Ok(doc.to_string())
}

/// The largest document position of `table` and the tables in it.
fn last_position(table: &toml_edit::Table) -> Option<isize> {
    let inner = table
        .iter()
        .filter_map(|(_, item)| item.as_table().and_then(last_position))
        .max();
    table.position().max(inner)
}

fn already_there(path: &Path, name: &str) -> HostError {
    edit_error(
        path,
        format!(
            "a server named {name:?} is already in this file; remove it first (`switchboard remove {name}`) or choose another name"
        ),
    )
}

/// How the host of a JSON file spells an entry, known by the file's name (or VS Code's
/// `servers` key).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Spelling {
    /// Claude Code's `.mcp.json`, which Cursor, Kiro, Amazon Q, LM Studio and most read too:
    /// `"type": "http"` (or `"sse"`) and `url`.
    ClaudeCode,
    /// VS Code's `servers`: every entry says its `type`, `"stdio"` too.
    VsCode,
    /// Windsurf's and Antigravity's `mcp_config.json`: `serverUrl`.
    Windsurf,
    /// Cline's `cline_mcp_settings.json`: `"type": "streamableHttp"`.
    Cline,
    /// Roo Code's `mcp_settings.json`: `"type": "streamable-http"`.
    Roo,
    /// GitHub Copilot CLI's `mcp-config.json`: `"type": "local"` for a command, and `tools`
    /// naming the tools it turns on (`["*"]`: all).
    Copilot,
    /// Claude Desktop's `claude_desktop_config.json`: commands only.
    ClaudeDesktop,
}

fn spelling(path: &Path, key: &str) -> Spelling {
    if key == "servers" {
        return Spelling::VsCode;
    }
    match path.file_name().and_then(|n| n.to_str()).unwrap_or("") {
        "mcp_config.json" => Spelling::Windsurf,
        "cline_mcp_settings.json" => Spelling::Cline,
        "mcp_settings.json" => Spelling::Roo,
        "mcp-config.json" => Spelling::Copilot,
        "claude_desktop_config.json" => Spelling::ClaudeDesktop,
        _ => Spelling::ClaudeCode,
    }
}

/// The JSON entry for `server`, as the file's host writes one.
fn json_entry(path: &Path, server: &NewServer, key: &str) -> Result<Json, HostError> {
    let spelling = spelling(path, key);
    let text = |s: &str| Json::Text(s.to_string());
    let pairs = |pairs: &[(String, String)]| {
        Json::Object(
            pairs
                .iter()
                .map(|(k, v)| (k.clone(), Json::Text(v.clone())))
                .collect(),
        )
    };
    let mut entry = Vec::new();
    match &server.reach {
        Reach::Command {
            command,
            args,
            env,
            cwd,
        } => {
            match spelling {
                Spelling::VsCode => entry.push(("type".into(), text("stdio"))),
                Spelling::Copilot => entry.push(("type".into(), text("local"))),
                _ => {}
            }
            entry.push(("command".into(), text(command)));
            entry.push(("args".into(), Json::Texts(args.clone())));
            if !env.is_empty() {
                entry.push(("env".into(), pairs(env)));
            }
            if let Some(cwd) = cwd {
                entry.push(("cwd".into(), text(cwd)));
            }
        }
        Reach::Url {
            url,
            headers,
            legacy_sse,
        } => {
            let kind = match (spelling, legacy_sse) {
                (Spelling::ClaudeDesktop, _) => {
                    return Err(edit_error(
                        path,
                        "Claude Desktop does not read servers at a URL from this file (it takes them as connectors, in its settings); a command works here".into(),
                    ));
                }
                (Spelling::Windsurf, _) => None,
                (_, true) => Some("sse"),
                (Spelling::Cline, false) => Some("streamableHttp"),
                (Spelling::Roo, false) => Some("streamable-http"),
                _ => Some("http"),
            };
            match kind {
                Some(kind) => {
                    entry.push(("type".into(), text(kind)));
                    entry.push(("url".into(), text(url)));
                }
                None => entry.push(("serverUrl".into(), text(url))),
            }
            if !headers.is_empty() {
                entry.push(("headers".into(), pairs(headers)));
            }
        }
    }
    for (key, value) in &server.other {
        if !entry.iter().any(|(k, _)| k == key) {
            entry.push((key.clone(), Json::Raw(value.clone())));
        }
    }
    json_own(path, &server.own, &mut entry)?;
    if spelling == Spelling::Copilot && !entry.iter().any(|(k, _)| k == "tools") {
        entry.push(("tools".into(), Json::Texts(vec!["*".into()])));
    }
    Ok(Json::Object(entry))
}

/// `own` in a JSON entry: Claude Code's `oauth` (`clientId`, `callbackPort`) in a `.mcp.json`;
/// any other of switchboard's own settings is refused, since the file's host would not read it.
fn json_own(path: &Path, own: &Own, entry: &mut Vec<(String, Json)>) -> Result<(), HostError> {
    let claude_code = path.file_name().is_some_and(|n| n == super::MCP_JSON_FILE);
    let kept: &[&str] = if claude_code {
        &["oauth.client_id", "oauth.redirect_port"]
    } else {
        &[]
    };
    let refused: Vec<&str> = own
        .given()
        .into_iter()
        .filter(|s| !kept.contains(s))
        .collect();
    if !refused.is_empty() {
        return Err(edit_error(
            path,
            format!(
                "{} {} switchboard's, which this file's host has no place for{}; write the server into a switchboard.toml instead (--scope project or --scope user)",
                refused.join(", "),
                if refused.len() == 1 {
                    "is a setting of"
                } else {
                    "are settings of"
                },
                if claude_code && refused.contains(&"oauth.client_secret") {
                    " (Claude Code keeps a client secret in its keychain, not in .mcp.json)"
                } else {
                    ""
                }
            ),
        ));
    }
    let mut oauth = Vec::new();
    if let Some(id) = &own.client_id {
        oauth.push(("clientId".to_string(), Json::Text(id.clone())));
    }
    if let Some(port) = own.redirect_port {
        oauth.push(("callbackPort".to_string(), Json::Raw(port.into())));
    }
    if !oauth.is_empty() {
        entry.retain(|(k, _)| k != "oauth");
        entry.push(("oauth".into(), Json::Object(oauth)));
    }
    Ok(())
}

fn json_add(
    path: &Path,
    text: Option<&str>,
    key: &str,
    server: &NewServer,
) -> Result<String, HostError> {
    let entry = json_entry(path, server, key)?;
    let text = match text {
        Some(t) if !t.trim().is_empty() => t,
        _ => {
            let servers = Json::Object(vec![(server.name.clone(), entry)]);
            let root = Json::Object(vec![(key.to_string(), servers)]);
            return Ok(format!("{}\n", root.render("", "  ")));
        }
    };
    let plain = jsonc::to_json(text);
    match servers_object(path, &plain, key)? {
        Some(servers) => {
            if members(&plain, servers)
                .iter()
                .any(|m| m.key == server.name)
            {
                return Err(already_there(path, &server.name));
            }
            Ok(insert_member(text, &plain, servers, &server.name, &entry))
        }
        None => {
            let servers = Json::Object(vec![(server.name.clone(), entry)]);
            Ok(insert_member(
                text,
                &plain,
                root_object(&plain),
                key,
                &servers,
            ))
        }
    }
}

/// Server `name` of a JSON file: the offset of its servers object's `{`, that object's
/// members, and which of them is the server (the last of that name, as JSON readers take a
/// repeated key).
fn json_server(
    path: &Path,
    plain: &str,
    key: &str,
    name: &str,
) -> Result<(usize, Vec<Member>, usize), HostError> {
    let servers = servers_object(path, plain, key)?.ok_or_else(|| not_there(path, name))?;
    let all = members(plain, servers);
    let found = all
        .iter()
        .rposition(|m| m.key == name)
        .ok_or_else(|| not_there(path, name))?;
    Ok((servers, all, found))
}

/// The offset of the `{` of the top-level `key`'s object; `None` when there is no such key.
/// `plain` parsed as JSON already (`format_of`).
fn servers_object(path: &Path, plain: &str, key: &str) -> Result<Option<usize>, HostError> {
    let Some(found) = members(plain, root_object(plain))
        .into_iter()
        .rfind(|m| m.key == key)
    else {
        return Ok(None);
    };
    if plain.as_bytes().get(found.value) != Some(&b'{') {
        return Err(edit_error(
            path,
            format!("`{key}` here is not an object of servers"),
        ));
    }
    Ok(Some(found.value))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    fn stdio(name: &str) -> NewServer {
        NewServer {
            name: name.into(),
            reach: Reach::Command {
                command: "npx".into(),
                args: vec!["-y".into(), "@modelcontextprotocol/server-memory".into()],
                env: vec![("MEMORY_FILE".into(), "${HOME}/m.json".into())],
                cwd: None,
            },
            other: Vec::new(),
            own: Own::default(),
        }
    }

    fn http(name: &str) -> NewServer {
        NewServer {
            name: name.into(),
            reach: Reach::Url {
                url: "https://example.com/mcp".into(),
                headers: vec![("Authorization".into(), "Bearer ${TOKEN}".into())],
                legacy_sse: false,
            },
            other: Vec::new(),
            own: Own::default(),
        }
    }

    fn names(path: &str, text: &str) -> Vec<String> {
        let config = Config::parse(Path::new(path), text, &|_| Some("x".into())).unwrap();
        assert!(config.disabled.is_empty(), "{:?}", config.disabled);
        config
            .servers
            .iter()
            .map(|s| s.name().to_string())
            .collect()
    }

    #[test]
    fn a_native_file_keeps_its_comments_and_gets_the_entry_after_its_servers() {
        let path = "switchboard.toml";
        let text = "# my servers\n[settings]\napprove = \"writes\" # ask for writes\n\n[servers.a]\ncommand = \"a\"  # the first\n\n[servers.a.tool.x]\napprove = \"never\"\n\n[profiles.p]\nservers = [\"a\"]\n";
        let out = add_server(Path::new(path), Some(text), &stdio("mem")).unwrap();
        assert_eq!(
            out,
            "# my servers\n[settings]\napprove = \"writes\" # ask for writes\n\n[servers.a]\ncommand = \"a\"  # the first\n\n[servers.a.tool.x]\napprove = \"never\"\n\n[servers.mem]\ncommand = \"npx\"\nargs = [\"-y\", \"@modelcontextprotocol/server-memory\"]\nenv = { MEMORY_FILE = \"${HOME}/m.json\" }\n\n[profiles.p]\nservers = [\"a\"]\n"
        );
        assert_eq!(names(path, &out), ["a", "mem"]);
        let back = remove_server(Path::new(path), &out, "mem").unwrap();
        assert_eq!(back, text);
        let gone = remove_server(Path::new(path), text, "a").unwrap();
        assert_eq!(
            gone,
            "# my servers\n[settings]\napprove = \"writes\" # ask for writes\n\n[profiles.p]\nservers = [\"a\"]\n"
        );
    }

    #[test]
    fn comments_closing_a_native_file_stay_above_an_entry_written_last() {
        let path = Path::new("s.toml");
        let out = add_server(path, Some("# shared settings\n"), &stdio("m")).unwrap();
        assert!(
            out.starts_with("# shared settings\n\n[servers.m]\n"),
            "{out}"
        );
        let text = "[servers.a]\ncommand = \"a\"\n\n# [servers.b]\n# command = \"b\"\n";
        let out = add_server(path, Some(text), &stdio("m")).unwrap();
        assert!(out.starts_with(text), "{out}");
        assert!(out.ends_with("[servers.m]\ncommand = \"npx\"\nargs = [\"-y\", \"@modelcontextprotocol/server-memory\"]\nenv = { MEMORY_FILE = \"${HOME}/m.json\" }\n"), "{out}");
        // With a table after the servers, the closing comments stay at the end.
        let text = "[servers.a]\ncommand = \"a\"\n\n[profiles.p]\nservers = [\"a\"]\n# the end\n";
        let out = add_server(path, Some(text), &stdio("m")).unwrap();
        assert!(
            out.ends_with("[profiles.p]\nservers = [\"a\"]\n# the end\n"),
            "{out}"
        );
        assert_eq!(names("s.toml", &out), ["a", "m"]);
    }

    #[test]
    fn a_new_native_file_and_a_url_entry() {
        let out = add_server(Path::new("new.toml"), None, &http("remote")).unwrap();
        assert_eq!(
            out,
            "[servers.remote]\nurl = \"https://example.com/mcp\"\nheaders = { Authorization = \"Bearer ${TOKEN}\" }\n"
        );
        assert_eq!(names("new.toml", &out), ["remote"]);
        let mut sse = http("old");
        if let Reach::Url { legacy_sse, .. } = &mut sse.reach {
            *legacy_sse = true;
        }
        let out = add_server(Path::new("new.toml"), Some(&out), &sse).unwrap();
        assert!(
            out.contains("[servers.old]\ntype = \"sse\"\nurl ="),
            "{out}"
        );
    }

    #[test]
    fn an_mcp_json_file_keeps_its_comments_order_and_indentation() {
        let path = ".mcp.json";
        let text = "{\n    // team servers\n    \"mcpServers\": {\n        \"b\": { \"command\": \"b\" }, // the b server\n        \"a\": {\"command\": \"a\"}\n    },\n    \"other\": 1\n}\n";
        let out = add_server(Path::new(path), Some(text), &http("web")).unwrap();
        assert_eq!(
            out,
            "{\n    // team servers\n    \"mcpServers\": {\n        \"b\": { \"command\": \"b\" }, // the b server\n        \"a\": {\"command\": \"a\"},\n        \"web\": {\n            \"type\": \"http\",\n            \"url\": \"https://example.com/mcp\",\n            \"headers\": {\n                \"Authorization\": \"Bearer ${TOKEN}\"\n            }\n        }\n    },\n    \"other\": 1\n}\n"
        );
        assert_eq!(names(path, &out), ["b", "a", "web"]);
        assert_eq!(remove_server(Path::new(path), &out, "web").unwrap(), text);
        let without_b = remove_server(Path::new(path), text, "b").unwrap();
        assert_eq!(
            without_b,
            "{\n    // team servers\n    \"mcpServers\": {\n        \"a\": {\"command\": \"a\"}\n    },\n    \"other\": 1\n}\n"
        );
        let empty = remove_server(Path::new(path), &without_b, "a").unwrap();
        assert_eq!(
            empty,
            "{\n    // team servers\n    \"mcpServers\": {},\n    \"other\": 1\n}\n"
        );
        let again = add_server(Path::new(path), Some(&empty), &stdio("m")).unwrap();
        assert_eq!(names(path, &again), ["m"]);
    }

    #[test]
    fn json_files_without_servers_or_on_one_line_get_them() {
        let out = add_server(
            Path::new("claude_desktop_config.json"),
            Some("{\"preferences\": {\"x\": true}}"),
            &stdio("m"),
        )
        .unwrap();
        assert_eq!(names("c.json", &out), ["m"]);
        assert!(
            out.starts_with("{\"preferences\": {\"x\": true}, \"mcpServers\": {"),
            "{out}"
        );
        let one_line = "{\"mcpServers\": {\"a\": {\"command\": \"a\"}}}";
        let out = add_server(Path::new("c.json"), Some(one_line), &stdio("m")).unwrap();
        assert_eq!(names("c.json", &out), ["a", "m"]);
        assert_eq!(
            remove_server(Path::new("c.json"), &out, "m").unwrap(),
            one_line
        );
        let new = add_server(Path::new("new.json"), None, &stdio("m")).unwrap();
        assert_eq!(names("new.json", &new), ["m"]);
        let vscode = "{\n  \"servers\": {\n    \"a\": {\"command\": \"a\"},\n  },\n}\n";
        let out = add_server(Path::new("mcp.json"), Some(vscode), &stdio("m")).unwrap();
        assert_eq!(names("mcp.json", &out), ["a", "m"]);
        assert!(!out.contains("mcpServers"), "{out}");
        assert!(
            out.contains("\"m\": {\n      \"type\": \"stdio\",\n      \"command\": \"npx\""),
            "{out}"
        );
    }

    #[test]
    fn trailing_commas_and_comments_go_with_the_entry_they_follow() {
        let path = Path::new("mcp.jsonc");
        let text = "{\n  \"mcpServers\": {  \"b\": {\"url\": \"https://x\"}, // b, c\n  },\n}\n";
        let out = remove_server(path, text, "b").unwrap();
        assert_eq!(out, "{\n  \"mcpServers\": { // b, c\n  },\n}\n");
        assert!(Config::parse(path, &out, &|_| None).is_ok(), "{out}");
        let text = "{\"mcpServers\": {\"a\": {\"command\": \"a\"} /* , */ , \"b\": {\"command\": \"b\"},}}";
        let out = remove_server(path, text, "b").unwrap();
        assert_eq!(names("mcp.jsonc", &out), ["a"]);
        let out = remove_server(path, text, "a").unwrap();
        assert_eq!(names("mcp.jsonc", &out), ["b"]);
        let comma_first = "{\"mcpServers\": {\n  \"a\": {}\n  , \"b\": {\"command\": \"b\"}\n}}";
        let out = remove_server(path, comma_first, "a").unwrap();
        assert_eq!(names("mcp.jsonc", &out), ["b"]);
    }

    #[test]
    fn each_hosts_file_gets_the_entry_as_its_host_spells_it() {
        let url =
            |path: &str| add_server(Path::new(path), Some("{\"mcpServers\": {}}"), &http("r"));
        let windsurf = url("/h/.codeium/windsurf/mcp_config.json").unwrap();
        assert!(
            windsurf.contains("\"serverUrl\": \"https://example.com/mcp\""),
            "{windsurf}"
        );
        let cline = url("/h/x/cline_mcp_settings.json").unwrap();
        assert!(cline.contains("\"type\": \"streamableHttp\""), "{cline}");
        let roo = url("/h/x/mcp_settings.json").unwrap();
        assert!(roo.contains("\"type\": \"streamable-http\""), "{roo}");
        let copilot = url("/h/.copilot/mcp-config.json").unwrap();
        assert!(copilot.contains("\"tools\": [\"*\"]"), "{copilot}");
        let e = url("/h/Claude/claude_desktop_config.json").unwrap_err();
        assert!(e.to_string().contains("connectors"), "{e}");
        for (path, out) in [
            ("/h/.codeium/windsurf/mcp_config.json", windsurf),
            ("/h/x/cline_mcp_settings.json", cline),
            ("/h/x/mcp_settings.json", roo),
            ("/h/.copilot/mcp-config.json", copilot),
        ] {
            assert_eq!(names(path, &out), ["r"], "{path}");
        }
        let copilot =
            add_server(Path::new("/h/.copilot/mcp-config.json"), None, &stdio("m")).unwrap();
        assert!(copilot.contains("\"type\": \"local\""), "{copilot}");
        assert_eq!(names("/h/.copilot/mcp-config.json", &copilot), ["m"]);
        let desktop = add_server(
            Path::new("/h/Claude/claude_desktop_config.json"),
            None,
            &stdio("m"),
        )
        .unwrap();
        assert_eq!(
            names("/h/Claude/claude_desktop_config.json", &desktop),
            ["m"]
        );
        let vscode = add_server(Path::new("/p/.vscode/mcp.json"), None, &stdio("m")).unwrap();
        assert!(
            vscode.starts_with("{\n  \"servers\": {\n    \"m\": {\n      \"type\": \"stdio\""),
            "{vscode}"
        );
        assert_eq!(names("/p/.vscode/mcp.json", &vscode), ["m"]);
    }

    #[test]
    fn another_hosts_settings_go_into_json_files_as_written() {
        let mut server = stdio("m");
        server.other = vec![
            ("alwaysAllow".into(), serde_json::json!(["read_graph"])),
            ("timeout".into(), serde_json::json!(60)),
        ];
        if let Reach::Command { args, .. } = &mut server.reach {
            args.push("{ x }".into());
        }
        let one_line = "{\"mcpServers\": {\"a\": {\"command\": \"a\"}}}";
        let out = add_server(Path::new("c.json"), Some(one_line), &server).unwrap();
        assert!(
            out.contains(r#""args": ["-y", "@modelcontextprotocol/server-memory", "{ x }"]"#),
            "{out}"
        );
        assert!(
            out.contains(r#""alwaysAllow": ["read_graph"], "timeout": 60}"#),
            "{out}"
        );
        let pretty = add_server(Path::new("c.json"), None, &server).unwrap();
        assert!(
            pretty.contains(
                "\"alwaysAllow\": [\n        \"read_graph\"\n      ],\n      \"timeout\": 60\n"
            ),
            "{pretty}"
        );
        assert_eq!(names("c.json", &pretty), ["m"]);
        let toml = add_server(Path::new("s.toml"), None, &server).unwrap();
        assert!(!toml.contains("alwaysAllow"), "{toml}");
        assert!(
            toml.ends_with("\n[servers.m.tool.read_graph]\napprove = \"never\"\n"),
            "{toml}"
        );
        assert_eq!(left_out(Path::new("s.toml"), None, &server), ["timeout"]);
        assert!(left_out(Path::new("c.json"), None, &server).is_empty());
        // The settings switchboard.toml has its own way to say, read back as they were meant.
        server.other = vec![
            (
                "disabledTools".into(),
                serde_json::json!(["delete_entities"]),
            ),
            ("autoApprove".into(), serde_json::json!(["*"])),
        ];
        let toml = add_server(Path::new("s.toml"), None, &server).unwrap();
        assert!(
            toml.contains("tools = { deny = [\"delete_entities\"] }\napprove = \"never\"\n"),
            "{toml}"
        );
        let config = Config::parse(Path::new("s.toml"), &toml, &|_| Some("x".into())).unwrap();
        assert!(config.disabled.is_empty(), "{:?}\n{toml}", config.disabled);
        let m = &config.servers[0];
        assert_eq!(m.deny, ["delete_entities"]);
        assert_eq!(m.approve, crate::config::Approve::Never);
        server.other = vec![
            ("alwaysAllow".into(), serde_json::json!(["a"])),
            ("autoApprove".into(), serde_json::json!(["b"])),
        ];
        let toml = add_server(Path::new("s.toml"), None, &server).unwrap();
        let config = Config::parse(Path::new("s.toml"), &toml, &|_| Some("x".into())).unwrap();
        let overrides: Vec<&String> = config.servers[0].tool_overrides.keys().collect();
        assert_eq!(overrides, ["a", "b"], "{toml}");
        server.other = vec![("envFile".into(), serde_json::json!(".env"))];
        let toml = add_server(Path::new("s.toml"), None, &server).unwrap();
        assert!(toml.ends_with("env_file = \".env\"\n"), "{toml}");
        server.other = vec![("disabled".into(), serde_json::json!(true))];
        let toml = add_server(Path::new("s.toml"), None, &server).unwrap();
        let config = Config::parse(Path::new("s.toml"), &toml, &|_| Some("x".into())).unwrap();
        assert_eq!(config.disabled.len(), 1, "{toml}");
    }

    /// `add`'s own settings: all of them read back from a `switchboard.toml` as meant (a deny
    /// list from another host's `disabledTools` joining `--deny`'s); a `.mcp.json` takes
    /// Claude Code's `oauth` client id and port, and refuses the rest, naming them.
    #[test]
    fn switchboards_own_settings_go_into_its_file_and_only_oauth_into_mcp_json() {
        let mut server = http("gh");
        let dir = tempfile::tempdir().unwrap();
        let folder = std::fs::canonicalize(dir.path()).unwrap();
        server.own = Own {
            roots: vec![folder.to_string_lossy().into_owned()],
            allow: vec!["get_*".into(), "search".into()],
            deny: vec!["get_secret".into()],
            approve: Some("writes".into()),
            call_timeout: Some("90".into()),
            alias: Some("g".into()),
            client_id: Some("Iv1.abc".into()),
            client_secret: Some("${GH_SECRET}".into()),
            redirect_port: Some(8765),
            client_credentials: false,
        };
        server.other = vec![("disabledTools".into(), serde_json::json!(["delete_repo"]))];
        let toml = add_server(Path::new("s.toml"), None, &server).unwrap();
        assert!(
            toml.contains(
                "call_timeout = 90
"
            ) && toml.contains("\n[servers.gh.oauth]\n"),
            "{toml}"
        );
        let config = Config::parse(Path::new("s.toml"), &toml, &|_| Some("x".into())).unwrap();
        assert!(config.disabled.is_empty(), "{:?}\n{toml}", config.disabled);
        let gh = &config.servers[0];
        assert_eq!(gh.alias.as_deref(), Some("g"));
        assert_eq!(gh.allow, ["get_*", "search"]);
        assert_eq!(gh.deny, ["get_secret", "delete_repo"]);
        assert!(gh.filter.permits("get_issue") && !gh.filter.permits("get_secret"));
        assert_eq!(gh.approve, crate::config::Approve::Writes);
        assert_eq!(gh.spec.call_timeout, std::time::Duration::from_secs(90));
        let oauth = gh.oauth.as_ref().unwrap();
        assert_eq!(oauth.client_id.as_deref(), Some("Iv1.abc"));
        assert_eq!(oauth.client_secret.as_ref().map(|s| s.expose()), Some("x"));
        assert_eq!(oauth.redirect_port, Some(8765));
        assert_eq!(
            gh.spec.roots,
            Some(vec![switchboard_core::Root::folder(&folder).unwrap()])
        );

        // A `.mcp.json` refuses what Claude Code would not read, naming each.
        let e = add_server(Path::new(".mcp.json"), None, &server).unwrap_err();
        let said = e.to_string();
        for name in [
            "tools.allow",
            "tools.deny",
            "approve",
            "call_timeout",
            "alias",
            "oauth.client_secret",
            "roots",
            "keychain",
        ] {
            assert!(said.contains(name), "{name}: {said}");
        }
        assert!(!said.contains("client_id"), "{said}");
        // Its OAuth client, as Claude Code writes it, is read back by switchboard too.
        server.own = Own {
            client_id: Some("Iv1.abc".into()),
            redirect_port: Some(8765),
            ..Own::default()
        };
        server.other.clear();
        let json = add_server(Path::new(".mcp.json"), None, &server).unwrap();
        assert!(
            json.contains(
                "\"oauth\": {\n        \"clientId\": \"Iv1.abc\",\n        \"callbackPort\": 8765\n"
            ),
            "{json}"
        );
        let config = Config::parse(Path::new(".mcp.json"), &json, &|_| Some("x".into())).unwrap();
        let oauth = config.servers[0].oauth.as_ref().unwrap();
        assert_eq!(
            (oauth.client_id.as_deref(), oauth.redirect_port),
            (Some("Iv1.abc"), Some(8765))
        );
        // A client that buys its own token, read back as such.
        server.own = Own {
            client_id: Some("svc".into()),
            client_secret: Some("${S}".into()),
            client_credentials: true,
            ..Own::default()
        };
        let toml = add_server(Path::new("s.toml"), None, &server).unwrap();
        assert!(
            toml.contains("[servers.gh.oauth]\ngrant = \"client_credentials\"\n"),
            "{toml}"
        );
        let config = Config::parse(Path::new("s.toml"), &toml, &|_| Some("x".into())).unwrap();
        let oauth = config.servers[0].oauth.as_ref().unwrap();
        assert_eq!(oauth.grant, switchboard_mcp::Grant::ClientCredentials);
        let e = add_server(Path::new(".mcp.json"), None, &server).unwrap_err();
        assert!(e.to_string().contains("oauth.grant"), "{e}");
        server.own = Own {
            client_id: Some("Iv1.abc".into()),
            redirect_port: Some(8765),
            ..Own::default()
        };
        // Other hosts' files take none of them.
        let e = add_server(Path::new("mcp.json"), None, &server).unwrap_err();
        assert!(
            e.to_string()
                .contains("oauth.client_id, oauth.redirect_port are settings of"),
            "{e}"
        );
    }

    #[test]
    fn turning_a_server_off_and_on() {
        let toml = "[servers.a]\ncommand = \"a\" # keep\n";
        let off = set_disabled(Path::new("s.toml"), toml, "a", true).unwrap();
        assert_eq!(
            off,
            "[servers.a]\ncommand = \"a\" # keep\ndisabled = true\n"
        );
        assert_eq!(
            set_disabled(Path::new("s.toml"), &off, "a", false).unwrap(),
            toml
        );
        let json =
            "{\n  \"mcpServers\": {\n    \"a\": {\n      \"command\": \"a\"\n    }\n  }\n}\n";
        let off = set_disabled(Path::new("m.json"), json, "a", true).unwrap();
        assert_eq!(
            off,
            "{\n  \"mcpServers\": {\n    \"a\": {\n      \"command\": \"a\",\n      \"disabled\": true\n    }\n  }\n}\n"
        );
        let config = Config::parse(Path::new("m.json"), &off, &|_| None).unwrap();
        assert_eq!(config.disabled.len(), 1);
        assert_eq!(
            set_disabled(Path::new("m.json"), &off, "a", false).unwrap(),
            json
        );
        // Turning off what is off changes nothing, its comment included.
        let noted = "[servers.a]\ncommand = \"a\"\ndisabled = true # broken\n";
        assert_eq!(
            set_disabled(Path::new("s.toml"), noted, "a", true).unwrap(),
            noted
        );
        let first = "{\"mcpServers\": {\"a\": {\"disabled\": true, \"command\": \"a\"}}}";
        assert_eq!(
            set_disabled(Path::new("m.json"), first, "a", true).unwrap(),
            first
        );
    }

    #[test]
    fn what_is_not_written_says_why() {
        let said =
            |path: &str, text: Option<&str>| match add_server(Path::new(path), text, &stdio("m")) {
                Err(e) => e.to_string(),
                Ok(out) => panic!("written: {out}"),
            };
        assert!(
            said("s.toml", Some("[servers.m]\ncommand = \"x\"\n")).contains("already in this file")
        );
        assert!(
            said("config.toml", Some("[mcp_servers.x]\ncommand = \"x\"\n"))
                .contains("codex mcp add")
        );
        assert!(
            said("c.json", Some("{\"mcpServers\": {}, \"projects\": {}}"))
                .contains("claude mcp add")
        );
        assert!(
            said("/p/.gemini/settings.json", Some("{\"mcpServers\": {}}"))
                .contains("gemini mcp add")
        );
        assert!(said("goose.yaml", Some("extensions: {}\n")).contains("YAML"));
        assert!(said("/h/.codex/config.toml", None).contains("codex mcp add"));
        assert!(said("/h/.config/zed/settings.json", None).contains("settings.json"));
        assert!(said("/h/.config/zed/settings.json", Some("{}")).contains("settings.json"));
        assert!(said("/h/.claude.json", None).contains("claude mcp add"));
        assert!(said("/p/opencode.json", Some("{}")).contains("OpenCode"));
        assert!(said("zed.json", Some("{\"context_servers\": {}}")).contains("Zed"));
        assert!(said("c.json", Some("{\"mcpServers\": [")).contains("syntax error"));
        assert!(said("one.json", Some("{\"command\": \"x\"}")).contains("one server's own entry"));
        assert!(said("servers", None).contains(".toml"));
        let bad = NewServer {
            name: "a/b".into(),
            ..stdio("x")
        };
        let e = add_server(Path::new("s.toml"), None, &bad).unwrap_err();
        assert!(e.to_string().contains('/'), "{e}");
        let e =
            remove_server(Path::new("s.toml"), "[servers.a]\ncommand = \"a\"\n", "b").unwrap_err();
        assert!(e.to_string().contains("no server named \"b\""), "{e}");
    }
}
