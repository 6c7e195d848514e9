//! One server entry, from either config format, validated into a `ServerConfig`. Errors name the
//! field they concern so the readers can point at the right line.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use switchboard_core::server::{DEFAULT_CALL_TIMEOUT, DEFAULT_STARTUP_TIMEOUT};
use switchboard_core::{Secret, ServerSpec, ToolFilter, TransportSpec, redact_url};
use switchboard_mcp::{Grant, ServerOAuth};

use super::expand::expand;
use super::{
    Config, ConfigSource, DisabledServer, SamplingPolicy, ServerConfig, ServerInstructions,
    Settings,
};
use crate::error::HostError;

/// What the readers share: the file, the folder relative paths start from, the environment and
/// the working directory.
pub struct Context<'a> {
    pub path: &'a Path,
    pub base: &'a Path,
    pub env: &'a dyn Fn(&str) -> Option<String>,
    /// The working directory, for configs that keep servers per project (Claude Code's
    /// `~/.claude.json`).
    pub cwd: Option<std::path::PathBuf>,
    /// Whether Claude Code's managed policy applies to what this file names: true for a file
    /// read on its own, false for one read as part of another (a project's `.mcp.json` within
    /// `~/.claude.json`, the managed files themselves).
    pub policy: bool,
    /// The other files this read looked at (see [`Config::inputs`]).
    pub inputs: std::cell::RefCell<Vec<std::path::PathBuf>>,
    /// What an entry's reading found wrong without failing it (a `bundle`'s manifest checks),
    /// for the reader to add to its warnings at the entry's position.
    pub notes: std::cell::RefCell<Vec<String>>,
}

impl Context<'_> {
    /// Note that the config depends on `path` (read, or looked for and absent).
    pub fn input(&self, path: &Path) {
        let mut inputs = self.inputs.borrow_mut();
        if !inputs.iter().any(|p| p == path) {
            inputs.push(path.to_path_buf());
        }
    }

    /// The user's home folder: `HOME` (or `USERPROFILE`) as the config's environment has it,
    /// else the platform's.
    pub fn home(&self) -> Option<std::path::PathBuf> {
        (self.env)("HOME")
            .or_else(|| (self.env)("USERPROFILE"))
            .filter(|h| !h.is_empty())
            .map(std::path::PathBuf::from)
            .or_else(|| directories::BaseDirs::new().map(|d| d.home_dir().to_path_buf()))
    }

    /// The notes the last entry's reading left (see [`Context::notes`]).
    pub fn take_notes(&self) -> Vec<String> {
        std::mem::take(&mut *self.notes.borrow_mut())
    }

    /// The files noted with [`Context::input`], for the config being built.
    pub fn take_inputs(&self) -> Vec<std::path::PathBuf> {
        std::mem::take(&mut *self.inputs.borrow_mut())
    }

    /// The error of server entry `server`, at byte `offset` of the config's `text`.
    pub fn entry_error(
        &self,
        text: &str,
        offset: usize,
        server: &str,
        message: String,
    ) -> HostError {
        let (line, column) = super::position::line_col(text, offset);
        HostError::ServerEntry {
            path: self.path.to_path_buf(),
            line,
            column,
            server: server.to_string(),
            message,
        }
    }

    /// A config read from this file with no profiles and default settings (the other hosts'
    /// formats have neither).
    pub fn servers_only(
        &self,
        servers: Vec<ServerConfig>,
        disabled: Vec<DisabledServer>,
        warnings: Vec<String>,
    ) -> Config {
        Config {
            source: ConfigSource::File {
                path: self.path.to_path_buf(),
            },
            servers,
            disabled,
            profiles: Default::default(),
            settings: Settings::default(),
            warnings,
            inputs: self.take_inputs(),
        }
    }
}

/// The value of `${name}` in a config string: VS Code's predefined variables that mean the same
/// outside VS Code (`workspaceFolder`: the folder holding `.vscode/`, else the config file's
/// folder; `workspaceFolderBasename`, `userHome`, `pathSeparator`, `/`), else the environment.
fn variable(ctx: &Context<'_>, name: &str) -> Option<String> {
    let workspace = || {
        let base = if ctx.base.as_os_str().is_empty() {
            Path::new(".")
        } else {
            ctx.base
        };
        // Absolute first: a relative `.vscode` (from `--config .vscode/mcp.json`) has an empty
        // parent.
        let base = std::path::absolute(base).unwrap_or_else(|_| base.to_path_buf());
        match base.file_name() {
            Some(dir) if dir == ".vscode" => base.parent().map_or(base.clone(), Path::to_path_buf),
            _ => base,
        }
    };
    match name {
        "workspaceFolder" => Some(workspace().display().to_string()),
        "workspaceFolderBasename" => workspace()
            .file_name()
            .map(|n| n.to_string_lossy().into_owned()),
        "userHome" => (ctx.env)("HOME").or_else(|| (ctx.env)("USERPROFILE")),
        "pathSeparator" | "/" => Some(std::path::MAIN_SEPARATOR.to_string()),
        _ => (ctx.env)(name),
    }
}

/// When a call needs the user's approval (`approve = ...`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Approve {
    /// Only tools annotated `destructiveHint: true` ask (the default).
    #[default]
    Destructive,
    /// Never ask.
    Never,
    /// Ask for every tool not annotated `readOnlyHint: true`.
    Writes,
    /// Ask for every tool its server does not mark safe, reading absent hints as MCP's defaults
    /// do (a tool may destroy and reaches an open world): asks when `destructiveHint` is `true`,
    /// and otherwise unless `readOnlyHint` is `true` or both `destructiveHint` and
    /// `openWorldHint` are `false` (Codex's `auto` mode).
    Unsafe,
    /// Ask for every call.
    Always,
}

impl Approve {
    /// Every mode, most asking first.
    pub const ALL: [Approve; 5] = [
        Approve::Always,
        Approve::Unsafe,
        Approve::Writes,
        Approve::Destructive,
        Approve::Never,
    ];

    /// The mode `approve` writes as `word`.
    pub fn from_word(word: &str) -> Option<Approve> {
        Approve::ALL.into_iter().find(|a| a.word() == word)
    }

    /// The mode as `approve` writes it: `destructive`, `never`, `writes`, `unsafe`, `always`.
    pub fn word(self) -> &'static str {
        match self {
            Approve::Destructive => "destructive",
            Approve::Never => "never",
            Approve::Writes => "writes",
            Approve::Unsafe => "unsafe",
            Approve::Always => "always",
        }
    }
}

/// What happens when a pinned tool's definition changes (`pin = ...`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PinMode {
    /// Withhold the changed tool until the change is approved (the default).
    #[default]
    Enforce,
    /// Report the change, keep the tool.
    Warn,
    /// Do not pin.
    Off,
}

/// Settings for one tool of a server: `[servers.NAME.tool.TOOL]` in switchboard.toml.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolOverride {
    /// Overrides the server's `approve` for this tool.
    #[serde(default)]
    pub approve: Option<Approve>,
    /// How another host's file wrote `approve` for this tool (Cline's `autoApprove`), for
    /// messages; `None` for switchboard's own setting.
    #[serde(skip)]
    pub approve_written: Option<String>,
    /// Overrides the server's `max_result_tokens` for this tool.
    #[serde(default)]
    pub max_result_tokens: Option<u32>,
    /// What the model reads about the tool, in place of the server's description.
    #[serde(default)]
    pub description: Option<String>,
    /// The tool's title, in place of the server's.
    #[serde(default)]
    pub title: Option<String>,
    /// Descriptions of the tool's parameters, in place of the server's, by parameter (a nested
    /// one by its path, `filter.status`).
    #[serde(default)]
    pub parameters: BTreeMap<String, String>,
    /// The name models see for the tool, in place of `server__tool`, when no other tool has
    /// it (letters, digits, `_` and `-`, up to 64, starting with a letter or `_`).
    #[serde(default)]
    pub name: Option<String>,
}

impl ToolOverride {
    /// Whether it changes what a model reads about the tool.
    pub fn changes_definition(&self) -> bool {
        self.description.is_some() || self.title.is_some() || !self.parameters.is_empty()
    }
}

/// A timeout as written: seconds as a number, or a string with a unit (`"500ms"`, `"30s"`, `"2m"`).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum RawDuration {
    Seconds(f64),
    Text(String),
}

impl RawDuration {
    fn to_duration(&self) -> Result<Duration, String> {
        let secs = match self {
            RawDuration::Seconds(s) => *s,
            RawDuration::Text(t) => {
                let t = t.trim();
                let (num, scale) = if let Some(n) = t.strip_suffix("ms") {
                    (n, 0.001)
                } else if let Some(n) = t.strip_suffix('s') {
                    (n, 1.0)
                } else if let Some(n) = t.strip_suffix('m') {
                    (n, 60.0)
                } else {
                    (t, 1.0)
                };
                num.trim().parse::<f64>().map_err(|_| {
                    format!(
                        "{t:?} is not a duration; write seconds (30) or \"500ms\", \"30s\", \"2m\""
                    )
                })? * scale
            }
        };
        // At least a millisecond: a smaller positive number would round to no time at all.
        if !(secs.is_finite() && (0.001..=86_400.0).contains(&secs)) {
            return Err(format!(
                "{secs} s is out of range (at least 1 ms, at most one day)"
            ));
        }
        Ok(Duration::from_secs_f64(secs))
    }
}

/// `tools = { allow = [...], deny = [...] }`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTools {
    #[serde(default)]
    pub allow: Vec<String>,
    #[serde(default)]
    pub deny: Vec<String>,
}

/// Read an entry from a parsed TOML or JSON value: the entry, or the key whose value is wrong
/// (when it is one) and what is wrong, with the key's path in the message (`` `command`: invalid
/// type: integer `3`, expected a string ``), so the error can point at the key's own line.
pub(super) fn raw_server<'de, D>(value: D) -> Result<RawServer, (Option<String>, String)>
where
    D: serde::Deserializer<'de>,
{
    serde_path_to_error::deserialize(value).map_err(|e| {
        let key = e.path().iter().next().and_then(|segment| match segment {
            serde_path_to_error::Segment::Map { key } => Some(key.clone()),
            _ => None,
        });
        // toml adds "in `key`" on a line of its own; the path says it better.
        let message = e.inner().to_string();
        let message = message.lines().next().unwrap_or_default().trim();
        match e.path().to_string().as_str() {
            "." => (key, message.to_string()),
            path => (key, format!("`{path}`: {message}")),
        }
    })
}

/// A server entry with every field either format may carry.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub struct RawServer {
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
    #[serde(default)]
    pub command: Option<String>,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    #[serde(default)]
    pub cwd: Option<String>,
    /// An MCP bundle to run in place of a `command`: a `.mcpb` (or `.dxt`) file, the bundle's
    /// folder or its `manifest.json`, from the config's folder.
    #[serde(default)]
    pub bundle: Option<String>,
    /// Values for the bundle's `user_config` settings (`${VAR}` expanded in strings).
    #[serde(default)]
    pub user_config: BTreeMap<String, serde_json::Value>,
    /// A `.env` file whose variables join the command's environment (`envFile` in VS Code's and
    /// Cursor's JSON); `env` wins for a variable both set.
    #[serde(default, alias = "envFile")]
    pub env_file: Option<String>,
    /// `httpUrl` is Gemini CLI's name for a Streamable HTTP endpoint, `serverUrl` Windsurf's.
    #[serde(default, alias = "httpUrl", alias = "serverUrl")]
    pub url: Option<String>,
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// A shell command printing more headers as JSON, run at each connect (`headersHelper` in
    /// Claude Code's JSON). The shell expands its variables, so `${VAR}` is left to it.
    #[serde(default, alias = "headersHelper")]
    pub headers_helper: Option<String>,
    #[serde(default)]
    pub startup_timeout: Option<RawDuration>,
    #[serde(default)]
    pub call_timeout: Option<RawDuration>,
    #[serde(default)]
    pub alias: Option<String>,
    #[serde(default)]
    pub tools: Option<RawTools>,
    #[serde(default)]
    pub approve: Option<Approve>,
    #[serde(default)]
    pub pin: Option<PinMode>,
    #[serde(default)]
    pub max_result_tokens: Option<u32>,
    #[serde(default)]
    pub tool: BTreeMap<String, ToolOverride>,
    #[serde(default)]
    pub disabled: bool,
    #[serde(default)]
    pub oauth: Option<RawOAuth>,
    /// Gemini CLI's tool lists (JSON configs only): added to `tools.allow` and `tools.deny`.
    #[serde(default, rename = "includeTools")]
    pub include_tools: Vec<String>,
    #[serde(default, rename = "excludeTools")]
    pub exclude_tools: Vec<String>,
    /// `instructions = false` leaves the server's instructions out of the system prompt, a
    /// string replaces them.
    #[serde(default)]
    pub instructions: Option<RawInstructions>,
    /// The folders offered to this server as roots, in place of `[settings] roots` (an empty
    /// list offers none).
    #[serde(default)]
    pub roots: Option<Vec<String>>,
    /// Whether the server may ask the model (sampling), and with which model and limit.
    #[serde(default)]
    pub sampling: Option<RawSampling>,
}

/// `sampling`: on or off, or how its requests are answered.
#[derive(Debug, Deserialize)]
#[serde(
    untagged,
    expecting = "true, false, or a table with `model` (the model that answers) and `max_tokens` (the most an answer may have)"
)]
pub enum RawSampling {
    On(bool),
    Settings(RawSamplingSettings),
}

/// `sampling = { model = "...", max_tokens = N }`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSamplingSettings {
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub max_tokens: Option<u32>,
}

/// `instructions`: on or off, or the text to use.
#[derive(Debug, Deserialize)]
#[serde(
    untagged,
    expecting = "true (the server's own), false (none) or the text to use in their place"
)]
pub enum RawInstructions {
    On(bool),
    Text(String),
}

/// `[servers.NAME.oauth]`, or `"oauth"` in `.mcp.json` as Claude Code writes it
/// (`clientId`, `callbackPort`, `scopes` as one space-separated string). Claude Code's
/// `authServerMetadataUrl` is not read: switchboard discovers the metadata from the server.
#[derive(Debug, Default, Deserialize)]
pub struct RawOAuth {
    #[serde(default, alias = "clientId")]
    pub client_id: Option<String>,
    #[serde(default)]
    pub client_secret: Option<String>,
    #[serde(default)]
    pub scopes: Option<RawScopes>,
    #[serde(default, alias = "callbackPort", alias = "callback_port")]
    pub redirect_port: Option<i64>,
    /// `authorization_code` (a person logs in; the default) or `client_credentials`.
    #[serde(default)]
    pub grant: Option<String>,
    /// A client-credentials client's private key (PEM), to sign its assertion with.
    #[serde(default)]
    pub private_key: Option<String>,
    /// The file holding it (relative to the config's folder).
    #[serde(default)]
    pub private_key_file: Option<String>,
    /// The assertion's algorithm: RS256 (the default for an RSA key), RS384, RS512, ES256
    /// (the default for an EC key), ES384.
    #[serde(default)]
    pub signing_algorithm: Option<String>,
}

/// Scopes as a list, or as one space-separated string (Claude Code's form).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum RawScopes {
    One(String),
    Many(Vec<String>),
}

/// Keys a native server entry may have (anything else is a typo we report).
pub const NATIVE_KEYS: &[&str] = &[
    "type",
    "command",
    "args",
    "env",
    "env_file",
    "cwd",
    "bundle",
    "user_config",
    "url",
    "headers",
    "headers_helper",
    "startup_timeout",
    "call_timeout",
    "alias",
    "tools",
    "approve",
    "pin",
    "max_result_tokens",
    "tool",
    "disabled",
    "oauth",
    "instructions",
    "roots",
    "sampling",
];

/// The warning for an OAuth `client_secret` or `private_key` written into the config file itself
/// (no `${VAR}` in it), where it is one `git add` away from being published; `None` when there
/// is none. The caller puts `path:line:column: ` in front. The secret itself is never in the
/// warning.
pub fn literal_oauth_secret(name: &str, raw: &RawServer, key: &str) -> Option<String> {
    let oauth = raw.oauth.as_ref()?;
    let literal = |v: Option<&str>| v.is_some_and(|s| !s.trim().is_empty() && !s.contains("${"));
    if literal(oauth.private_key.as_deref()) {
        return Some(format!(
            "server {name:?}: the OAuth private key is written in the config file; put it in a file of its own (private_key_file = \"...\", readable by you only) or in an environment variable (private_key = \"${{VAR}}\")"
        ));
    }
    if !literal(oauth.client_secret.as_deref()) {
        return None;
    }
    Some(format!(
        "server {name:?}: the OAuth {key} is written in the config file; put it in an environment variable and write {key} = \"${{VAR}}\" (or \"${{env:VAR}}\") instead"
    ))
}

/// A warning when one of a command's arguments looks like several written as one string
/// (`"-y @scope/server"`): no shell splits `args`, so the program gets it as one word and, for
/// `npx`, starts something else. `None` when every argument looks meant. The caller puts
/// `path:line:column: ` in front.
pub fn joined_argument(name: &str, raw: &RawServer) -> Option<String> {
    raw.command.as_ref()?;
    let (i, arg) = raw.args.iter().enumerate().find(|(_, a)| {
        let a = a.trim();
        // `--flag=some value` and `--title "x y"`-style values are meant as one word.
        a.starts_with('-')
            && a.contains(char::is_whitespace)
            && !a.contains(['=', '"', '\''])
            && a.len() > 1
    })?;
    let words: Vec<String> = arg.split_whitespace().map(|w| format!("{w:?}")).collect();
    Some(format!(
        "server {name:?}: args[{i}] {arg:?} is one argument with a space in it, and the program \
         gets it as one word (no shell splits `args`); if these are separate arguments, write \
         each as its own string: [{}]",
        words.join(", ")
    ))
}

/// A validation failure: the field it concerns (for positioning) and the message.
pub struct EntryError {
    pub field: Option<&'static str>,
    pub message: String,
}

fn err(field: &'static str, message: impl Into<String>) -> EntryError {
    EntryError {
        field: Some(field),
        message: message.into(),
    }
}

/// Turn a raw entry into a runnable server. `Ok(None)` means the entry says `disabled = true`.
pub fn validate(
    ctx: &Context<'_>,
    name: &str,
    raw: RawServer,
) -> Result<Option<ServerConfig>, EntryError> {
    if raw.disabled {
        return Ok(None);
    }
    if name.trim().is_empty() {
        return Err(EntryError {
            field: None,
            message: "server name is empty".into(),
        });
    }
    let lookup = |name: &str| variable(ctx, name);
    let ex = |field: &'static str, v: &str| {
        expand(v, &lookup).map_err(|e| err(field, format!("{field}: {e}")))
    };
    let (raw, manifest_tools) = match raw.bundle.clone() {
        Some(bundle) => from_bundle(ctx, raw, &bundle, &ex)?,
        None if !raw.user_config.is_empty() => {
            return Err(err(
                "user_config",
                "`user_config` gives an MCP bundle's settings, but the entry has no `bundle`",
            ));
        }
        None => (raw, None),
    };
    let kind = raw.kind.as_deref().map(str::to_ascii_lowercase);
    let mut written_command = None;
    let transport = match (kind.as_deref(), &raw.command, &raw.url) {
        // "sse" is the legacy HTTP+SSE transport: an HTTP entry too, since a URL that refuses
        // Streamable HTTP's POST is tried with it (see the mcp crate's `legacy_sse`).
        (Some(k), _, _)
            if !matches!(
                k,
                "stdio" | "http" | "streamable-http" | "streamablehttp" | "sse"
            ) =>
        {
            // Claude Code also runs MCP over a WebSocket, which is not one of MCP's transports.
            let hint = if matches!(k, "ws" | "websocket") {
                " (a WebSocket server: switchboard speaks MCP's own transports only; use the server's Streamable HTTP URL if it has one)"
            } else {
                ""
            };
            return Err(err(
                "type",
                format!(
                    "unknown type {k:?}; expected \"stdio\", \"http\", \"streamable-http\" or \"sse\"{hint}"
                ),
            ));
        }
        (_, Some(_), Some(_)) => {
            return Err(err(
                "url",
                "has both `command` and `url`; a server is either a command (stdio) or a URL (HTTP)",
            ));
        }
        (_, None, None) => {
            return Err(EntryError {
                field: None,
                message: "has neither `command` (stdio) nor `url` (Streamable HTTP)".into(),
            });
        }
        (Some("stdio"), None, Some(_)) => {
            return Err(err(
                "type",
                "type \"stdio\" needs `command`, but the entry has `url`",
            ));
        }
        (Some(k), Some(_), None) if k != "stdio" => {
            return Err(err(
                "type",
                format!("type {k:?} needs `url`, but the entry has `command`"),
            ));
        }
        (_, Some(command), None) => {
            let command = ex("command", command)?;
            if command.trim().is_empty() {
                return Err(err("command", "`command` is empty"));
            }
            if raw.headers_helper.is_some() {
                return Err(err(
                    "headers_helper",
                    "`headers_helper` gives an HTTP server's headers, but this server runs a command",
                ));
            }
            let args = raw
                .args
                .iter()
                .map(|a| ex("args", a))
                .collect::<Result<Vec<_>, _>>()?;
            let mut env = Vec::new();
            for (k, v) in &raw.env {
                env.push((k.clone(), Secret::new(ex("env", v)?)));
            }
            if let Some(file) = &raw.env_file {
                let file = ctx.base.join(ex("env_file", file)?);
                ctx.input(&file);
                let text = std::fs::read_to_string(&file).map_err(|e| {
                    err(
                        "env_file",
                        format!("env_file: cannot read {}: {e}", file.display()),
                    )
                })?;
                let vars = super::dotenv::parse(&text)
                    .map_err(|m| err("env_file", format!("env_file {}: {m}", file.display())))?;
                for (k, v) in vars {
                    if !raw.env.contains_key(&k) {
                        // A later line of the same key wins, as dotenv files read.
                        env.retain(|(have, _)| *have != k);
                        env.push((k, Secret::new(v)));
                    }
                }
            }
            // A relative command path (one with a slash) and cwd start from the config's folder.
            let command = if command.contains('/') && Path::new(&command).is_relative() {
                let joined = ctx.base.join(&command).to_string_lossy().into_owned();
                written_command = Some(command);
                joined
            } else {
                command
            };
            let cwd = match &raw.cwd {
                Some(c) => Some(ctx.base.join(ex("cwd", c)?)),
                None => None,
            };
            TransportSpec::Stdio {
                command,
                args,
                env,
                cwd,
            }
        }
        (_, None, Some(url)) => {
            let url = ex("url", url)?;
            let parsed = url::Url::parse(&url)
                .map_err(|e| err("url", format!("malformed URL {:?}: {e}", redact_url(&url))))?;
            if !matches!(parsed.scheme(), "http" | "https") {
                return Err(err(
                    "url",
                    format!("URL scheme {:?} is not http or https", parsed.scheme()),
                ));
            }
            if parsed.host_str().is_none_or(str::is_empty) {
                return Err(err(
                    "url",
                    format!("URL {:?} has no host", redact_url(&url)),
                ));
            }
            let mut headers = Vec::new();
            for (k, v) in &raw.headers {
                if http_header_name_invalid(k) {
                    return Err(err(
                        "headers",
                        format!("header name {k:?} is not a valid HTTP header name"),
                    ));
                }
                headers.push((k.clone(), Secret::new(ex("headers", v)?)));
            }
            let headers_helper = match raw.headers_helper.as_deref().map(str::trim) {
                Some("") => {
                    return Err(err("headers_helper", "`headers_helper` is empty"));
                }
                other => other.map(str::to_string),
            };
            TransportSpec::Http {
                url,
                headers,
                headers_helper,
            }
        }
    };
    let approve_unset = raw.approve.is_none();
    let (startup_timeout_written, call_timeout_written) =
        (raw.startup_timeout.is_some(), raw.call_timeout.is_some());
    let startup_timeout = match &raw.startup_timeout {
        Some(d) => d
            .to_duration()
            .map_err(|m| err("startup_timeout", format!("startup_timeout: {m}")))?,
        None => DEFAULT_STARTUP_TIMEOUT,
    };
    let call_timeout = match &raw.call_timeout {
        Some(d) => d
            .to_duration()
            .map_err(|m| err("call_timeout", format!("call_timeout: {m}")))?,
        None => DEFAULT_CALL_TIMEOUT,
    };
    let mut tools = raw.tools.unwrap_or_default();
    // Gemini CLI's lists are named as written, alone or beside switchboard's own.
    let list_name = |own: &[String], gemini: &[String], mine: &str, theirs: &str| match (
        own.is_empty(),
        gemini.is_empty(),
    ) {
        (_, true) => mine.to_string(),
        (true, false) => theirs.to_string(),
        (false, false) => format!("{mine} and {theirs}"),
    };
    let names = (
        list_name(
            &tools.allow,
            &raw.include_tools,
            "tools.allow",
            "includeTools",
        ),
        list_name(
            &tools.deny,
            &raw.exclude_tools,
            "tools.deny",
            "excludeTools",
        ),
    );
    let gemini_lists = !raw.include_tools.is_empty() || !raw.exclude_tools.is_empty();
    tools.allow.extend(raw.include_tools);
    tools.deny.extend(raw.exclude_tools);
    let mut filter = ToolFilter::new(&tools.allow, &tools.deny)
        .map_err(|e| err("tools", format!("tools: {e}")))?;
    if gemini_lists {
        filter = filter.lists_named(names.0, names.1);
    }
    if let Some(a) = &raw.alias
        && !a
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Err(err(
            "alias",
            format!(
                "alias {a:?} may only use letters, digits, `_` and `-` (it becomes part of tool names)"
            ),
        ));
    }
    if let Some((tool, name)) = raw.tool.iter().find_map(|(tool, o)| {
        o.name
            .as_deref()
            .filter(|n| !switchboard_core::names::is_valid_everywhere(n))
            .map(|n| (tool, n))
    }) {
        return Err(err(
            "tool",
            format!(
                "[tool.{tool}] name {name:?} is not a tool name every provider takes: letters, digits, `_` and `-`, up to 64, starting with a letter or `_`"
            ),
        ));
    }
    let zero_limit = raw.max_result_tokens == Some(0)
        || raw.tool.values().any(|o| o.max_result_tokens == Some(0));
    if zero_limit {
        return Err(err(
            "max_result_tokens",
            "max_result_tokens must be at least 1 (it is the result size, in tokens, above which a result is cut)",
        ));
    }
    let sampling = match raw.sampling {
        None | Some(RawSampling::On(true)) => SamplingPolicy::default(),
        Some(RawSampling::On(false)) => SamplingPolicy {
            allowed: false,
            ..SamplingPolicy::default()
        },
        Some(RawSampling::Settings(s)) => {
            if s.max_tokens == Some(0) {
                return Err(err(
                    "sampling",
                    "sampling.max_tokens must be at least 1 (it is the most tokens an answer to the server may have)",
                ));
            }
            let model = match s.model {
                Some(m) => Some(ex("sampling", &m)?).filter(|m| !m.trim().is_empty()),
                None => None,
            };
            SamplingPolicy {
                allowed: true,
                model,
                max_tokens: s.max_tokens,
            }
        }
    };
    let oauth = match raw.oauth {
        None => None,
        Some(o) => Some(oauth(&transport, o, &ex, ctx.base)?),
    };
    let roots = raw.roots.map(|written| {
        let (folders, problems) = super::folder::written(ctx, written);
        ctx.notes
            .borrow_mut()
            .extend(problems.into_iter().map(|p| format!("roots: {p}")));
        folders
            .iter()
            .filter_map(|f| switchboard_core::Root::folder(f))
            .collect()
    });
    Ok(Some(ServerConfig {
        oauth,
        spec: ServerSpec {
            name: name.to_string(),
            transport,
            startup_timeout,
            call_timeout,
            roots,
        },
        alias: raw.alias,
        allow: tools.allow,
        deny: tools.deny,
        filter,
        approve: raw.approve.unwrap_or_default(),
        pin: raw.pin.unwrap_or_default(),
        tool_overrides: raw.tool,
        max_result_tokens: raw.max_result_tokens,
        legacy_sse: kind.as_deref() == Some("sse"),
        origin: None,
        written_command,
        startup_timeout_written,
        call_timeout_written,
        manifest_tools,
        asks_refused: None,
        approve_unset,
        instructions: match raw.instructions {
            None | Some(RawInstructions::On(true)) => ServerInstructions::Server,
            Some(RawInstructions::On(false)) => ServerInstructions::Off,
            Some(RawInstructions::Text(t)) if t.trim().is_empty() => ServerInstructions::Off,
            Some(RawInstructions::Text(t)) => ServerInstructions::Text(t),
        },
        sampling,
        // Not written: said to be the default, wherever the setting is named.
        approve_written: approve_unset.then(|| {
            format!(
                "switchboard's default approve = {:?}",
                Approve::default().word()
            )
        }),
    }))
}

/// An entry with `bundle`: the command, arguments, folder and environment the bundle's manifest
/// gives, with the entry's `user_config` values; the entry's own `env` is added over the
/// bundle's. Also the tools the manifest lists, to compare with the server's.
fn from_bundle(
    ctx: &Context<'_>,
    mut raw: RawServer,
    bundle: &str,
    ex: &dyn Fn(&'static str, &str) -> Result<String, EntryError>,
) -> Result<(RawServer, Option<Vec<String>>), EntryError> {
    if raw.command.is_some() || raw.url.is_some() {
        return Err(err(
            "bundle",
            "has `bundle` and also `command` or `url`; a bundle's manifest says how to run it",
        ));
    }
    if !raw.args.is_empty() || raw.cwd.is_some() {
        return Err(err(
            "bundle",
            "has `bundle` and also `args` or `cwd`; a bundle's manifest says how to run it (set its `user_config` instead)",
        ));
    }
    let path = ctx.base.join(ex("bundle", bundle)?);
    ctx.input(&path);
    let manifest_path = super::mcpb::manifest_of(&path)
        .map_err(|m| err("bundle", format!("bundle {}: {m}", path.display())))?;
    let manifest: serde_json::Value = std::fs::read_to_string(&manifest_path)
        .map_err(|e| e.to_string())
        .and_then(|t| serde_json::from_str(&t).map_err(|e| e.to_string()))
        .map_err(|e| err("bundle", format!("bundle {}: {e}", manifest_path.display())))?;
    if !super::mcpb::is_manifest(&manifest) {
        return Err(err(
            "bundle",
            format!(
                "{} is not an MCP bundle's manifest (it needs `manifest_version` and `server`)",
                manifest_path.display()
            ),
        ));
    }
    let mut saved = serde_json::Map::new();
    for (key, value) in &raw.user_config {
        saved.insert(key.clone(), expand_strings(value, ex)?);
    }
    let dir = manifest_path.parent().unwrap_or(Path::new("."));
    let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    let home = ctx.home();
    let at = super::mcpb::Surroundings {
        dir: &dir,
        saved: &saved,
        env: ctx.env,
        platform: super::mcpb::platform(),
        home: home.as_deref(),
        host: super::mcpb::Host::Config,
    };
    let entry = super::mcpb::entry(&manifest, &at)
        .map_err(|m| err("bundle", format!("bundle {}: {m}", path.display())))?;
    ctx.notes.borrow_mut().extend(
        super::mcpb::check(&manifest, &dir)
            .into_iter()
            .map(|w| format!("bundle {}: {w}", path.display())),
    );
    let text = |v: &serde_json::Value| v.as_str().unwrap_or_default().to_string();
    raw.command = Some(text(&entry["command"]));
    raw.args = entry["args"]
        .as_array()
        .map(|a| a.iter().map(text).collect())
        .unwrap_or_default();
    raw.cwd = Some(text(&entry["cwd"]));
    let mut env: BTreeMap<String, String> = entry["env"]
        .as_object()
        .map(|m| m.iter().map(|(k, v)| (k.clone(), text(v))).collect())
        .unwrap_or_default();
    env.append(&mut raw.env);
    raw.env = env;
    Ok((raw, super::mcpb::declared_tools(&manifest)))
}

/// `value` with `${VAR}` expanded in each string, within lists too.
fn expand_strings(
    value: &serde_json::Value,
    ex: &dyn Fn(&'static str, &str) -> Result<String, EntryError>,
) -> Result<serde_json::Value, EntryError> {
    Ok(match value {
        serde_json::Value::String(s) => serde_json::Value::String(ex("user_config", s)?),
        serde_json::Value::Array(items) => serde_json::Value::Array(
            items
                .iter()
                .map(|i| expand_strings(i, ex))
                .collect::<Result<_, _>>()?,
        ),
        other => other.clone(),
    })
}

/// Check an entry's OAuth settings; every value goes through `${VAR}` expansion, and a
/// private key file is read from `base` when relative.
fn oauth(
    transport: &TransportSpec,
    raw: RawOAuth,
    ex: &dyn Fn(&'static str, &str) -> Result<String, EntryError>,
    base: &std::path::Path,
) -> Result<ServerOAuth, EntryError> {
    let bad = |m: String| err("oauth", format!("oauth: {m}"));
    if matches!(transport, TransportSpec::Stdio { .. }) {
        return Err(bad(
            "OAuth applies to HTTP servers (`url`); a stdio server gets its credentials from `env`"
                .into(),
        ));
    }
    let client_id = match raw.client_id {
        Some(id) => {
            let id = ex("oauth", &id)?.trim().to_string();
            if id.is_empty() {
                return Err(bad("client_id is empty".into()));
            }
            Some(id)
        }
        None => None,
    };
    let client_secret = match raw.client_secret {
        Some(s) => {
            if client_id.is_none() {
                return Err(bad(
                    "client_secret needs client_id (the secret belongs to a pre-registered client)"
                        .into(),
                ));
            }
            let s = ex("oauth", &s)?;
            if s.trim().is_empty() {
                return Err(bad("client_secret is empty".into()));
            }
            Some(Secret::new(s.trim()))
        }
        None => None,
    };
    let scopes = match raw.scopes {
        None => Vec::new(),
        Some(RawScopes::One(s)) => ex("oauth", &s)?
            .split_whitespace()
            .map(str::to_string)
            .collect(),
        Some(RawScopes::Many(list)) => {
            let mut out = Vec::new();
            for s in list {
                let s = ex("oauth", &s)?;
                if s.trim().is_empty() || s.trim().contains(char::is_whitespace) {
                    return Err(bad(format!(
                        "scope {s:?} is empty or has spaces; write one scope per list item"
                    )));
                }
                out.push(s.trim().to_string());
            }
            out
        }
    };
    let redirect_port = match raw.redirect_port {
        None => None,
        Some(p) => Some(u16::try_from(p).ok().filter(|p| *p > 0).ok_or_else(|| {
            bad(format!(
                "redirect_port {p} is not a port (1 to 65535); it is the loopback port of the redirect URI registered for the client"
            ))
        })?),
    };
    let grant = match raw.grant.as_deref().map(str::trim) {
        None | Some("authorization_code") => Grant::AuthorizationCode,
        Some("client_credentials") => Grant::ClientCredentials,
        Some(other) => {
            return Err(bad(format!(
                "grant {other:?} is not one switchboard uses: authorization_code (a person logs in, the default) or client_credentials (the client's own credentials, no person)"
            )));
        }
    };
    let private_key = match (raw.private_key, raw.private_key_file) {
        (Some(_), Some(_)) => {
            return Err(bad("give private_key or private_key_file, not both".into()));
        }
        (Some(pem), None) => Some(ex("oauth", &pem)?),
        (None, Some(file)) => {
            let path = base.join(ex("oauth", &file)?);
            let pem = std::fs::read_to_string(&path)
                .map_err(|e| bad(format!("private_key_file {}: {e}", path.display())))?;
            Some(pem)
        }
        (None, None) => None,
    };
    if let Some(pem) = &private_key
        && !pem.contains("PRIVATE KEY-----")
    {
        return Err(bad(
            "private_key is not a PEM private key (-----BEGIN ... PRIVATE KEY-----)".into(),
        ));
    }
    let signing_algorithm = match raw.signing_algorithm {
        None => None,
        Some(a) => {
            let a = ex("oauth", &a)?.trim().to_ascii_uppercase();
            if !["RS256", "RS384", "RS512", "ES256", "ES384"].contains(&a.as_str()) {
                return Err(bad(format!(
                    "signing_algorithm {a:?} is not one of RS256, RS384, RS512, ES256, ES384"
                )));
            }
            Some(a)
        }
    };
    match grant {
        Grant::ClientCredentials => {
            if client_id.is_none() {
                return Err(bad(
                    "grant = \"client_credentials\" needs client_id (and client_secret or a private key)".into(),
                ));
            }
            if client_secret.is_none() && private_key.is_none() {
                return Err(bad(
                    "grant = \"client_credentials\" needs client_secret, or private_key / private_key_file to sign an assertion with".into(),
                ));
            }
        }
        Grant::AuthorizationCode => {
            if private_key.is_some() || signing_algorithm.is_some() {
                return Err(bad(
                    "a private key signs a client-credentials assertion: set grant = \"client_credentials\"".into(),
                ));
            }
        }
    }
    Ok(ServerOAuth {
        client_id,
        client_secret,
        scopes,
        redirect_port,
        grant,
        private_key: private_key.map(Secret::new),
        signing_algorithm,
    })
}

fn http_header_name_invalid(name: &str) -> bool {
    name.is_empty()
        || !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// Put a validated entry where it belongs: a usable server, or a disabled one with its reason.
pub fn record(
    name: &str,
    result: Result<Option<ServerConfig>, crate::error::HostError>,
    disabled_note: &str,
    servers: &mut Vec<ServerConfig>,
    disabled: &mut Vec<super::DisabledServer>,
) {
    match result {
        Ok(Some(s)) => servers.push(s),
        Ok(None) => disabled.push(super::DisabledServer {
            name: name.to_string(),
            reason: disabled_note.to_string(),
            origin: None,
        }),
        Err(e) => disabled.push(super::DisabledServer {
            name: name.to_string(),
            reason: e.to_string(),
            origin: None,
        }),
    }
}

/// The closest known key to an unknown one, for "did you mean" hints.
pub fn suggest(unknown: &str, known: &[&'static str]) -> Option<&'static str> {
    closest(unknown, known.iter().copied())
}

/// The one of `known` within two edits of `unknown`, the nearest first.
pub fn closest<'a>(unknown: &str, known: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    known
        .map(|k| (edit_distance(unknown, k), k))
        .filter(|(d, _)| *d <= 2)
        .min()
        .map(|(_, k)| k)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The strings of a JSON list (its other items passed over); none when it is not a list.
pub fn strings(value: Option<&serde_json::Value>) -> Vec<String> {
    value
        .and_then(serde_json::Value::as_array)
        .map(|l| {
            l.iter()
                .filter_map(serde_json::Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// Rewrite every string value inside `value` (not the keys) with `f`, for the readers of formats
/// whose variable syntax differs from switchboard's `${VAR}`: they turn their own references
/// into `${VAR}` and escape a `${` that is literal in their format as `$${`.
pub fn rewrite_strings(
    value: &mut serde_json::Value,
    f: &mut dyn FnMut(&str) -> Result<String, String>,
) -> Result<(), String> {
    use serde_json::Value;
    match value {
        Value::String(s) => {
            *s = f(s)?;
            Ok(())
        }
        Value::Array(items) => items.iter_mut().try_for_each(|v| rewrite_strings(v, f)),
        Value::Object(map) => map.values_mut().try_for_each(|v| rewrite_strings(v, f)),
        _ => Ok(()),
    }
}

/// `s` with every `${` escaped as `$${`, so switchboard's expansion leaves it as written.
pub fn literal_dollar_braces(s: &str) -> String {
    s.replace("${", "$${")
}
