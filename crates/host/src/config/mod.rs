//! Configuration: which servers to run and how. Reads switchboard's own `switchboard.toml` and,
//! as-is, the `mcpServers` JSON of Claude Desktop, Cursor and Claude Code (`.mcp.json`) and VS
//! Code's `servers` JSON. A bad server entry disables that server with a reason naming the file,
//! line and column; the other servers still start.

mod amp;
mod antigravity;
mod claude_code;
mod claude_extensions;
mod claude_permissions;
mod claude_plugins;
mod claude_policy;
mod claude_settings;
mod cli_agent;
mod codex;
mod codex_layers;
mod continue_dev;
mod crush;
mod cursor;
mod dotenv;
pub mod edit;
mod entry;
pub mod expand;
pub mod folder;
mod gemini;
mod gemini_args;
mod gemini_policy;
mod goose;
pub mod hosts;
mod json_members;
mod jsonc;
mod layers;
mod librechat;
mod mcp_json;
mod mcp_proxy;
mod mcpb;
mod mcpb_archive;
mod mcphost;
mod native;
mod opencode;
mod opencode_permission;
mod position;
mod snippet;
mod wording;
mod zed_permissions;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Serialize;
use switchboard_core::{ServerSpec, ToolFilter, Verdict};

use crate::error::HostError;

pub use entry::{Approve, PinMode, ToolOverride, closest};

/// The result size, in tokens, above which a tool result is cut (`max_result_tokens`).
pub const DEFAULT_RESULT_TOKENS: u32 = 25_000;

/// The name an inline config's messages give it (see [`Config::parse_inline`]).
pub const INLINE: &str = "--config";

/// Where the config came from.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum ConfigSource {
    /// A file on disk.
    File {
        /// Its path.
        path: PathBuf,
    },
    /// No config was found: the two embedded demo servers.
    Demo,
    /// JSON given on the command line in place of a file (`--config '{"mcpServers": ...}'`,
    /// as Claude Code's `--mcp-config` takes it).
    Inline,
}

/// One usable server.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// How to reach it (name, transport, timeouts).
    pub spec: ServerSpec,
    /// Replaces the server part of public tool names (`alias = ""` means no prefix).
    pub alias: Option<String>,
    /// `tools.allow` globs as written.
    pub allow: Vec<String>,
    /// `tools.deny` globs as written.
    pub deny: Vec<String>,
    /// The compiled allow/deny filter.
    pub filter: ToolFilter,
    /// When calls need the user's approval.
    pub approve: Approve,
    /// What to do when a pinned tool definition changes.
    pub pin: PinMode,
    /// Per-tool settings: `[servers.NAME.tool.TOOL]`.
    pub tool_overrides: BTreeMap<String, ToolOverride>,
    /// `max_result_tokens` for the whole server.
    pub max_result_tokens: Option<u32>,
    /// The server's own OAuth client (`[servers.NAME.oauth]`, `"oauth"` in `.mcp.json`).
    pub oauth: Option<switchboard_mcp::ServerOAuth>,
    /// The entry says `type = "sse"`: a server of the legacy HTTP+SSE transport, which has no
    /// OAuth (its URL is still tried with Streamable HTTP first, as every HTTP entry's is).
    pub legacy_sse: bool,
    /// Where the entry comes from when the config gathers several (Claude Code's scopes,
    /// plugins and managed servers, a folder of server files); `None` for the config file's
    /// own entries.
    pub origin: Option<String>,
    /// A stdio command as the entry wrote it (after `${VAR}` expansion), where switchboard made
    /// it a path from the config's folder (`./bin/server`); Claude Code's policy matches
    /// `serverCommand` against what was written.
    pub written_command: Option<String>,
    /// Whether the entry set its own startup timeout (`startup_timeout`), so a host-wide
    /// default (Claude Code's `MCP_TIMEOUT`) leaves it be.
    pub startup_timeout_written: bool,
    /// Whether the entry set its own call timeout (`call_timeout`, or a host's own `timeout`).
    pub call_timeout_written: bool,
    /// The tools an MCP bundle's manifest says its server has (a bundle run on its own, or an
    /// entry's `bundle`), when the manifest lists them and does not say they are generated.
    pub manifest_tools: Option<Vec<String>>,
    /// The host whose config this is asks about no call and refuses the calls it would ask
    /// about (Codex's `approval_policy = "never"`): why, for the model. Such calls are refused
    /// rather than asked about.
    pub asks_refused: Option<String>,
    /// How another host's file wrote the server's `approve` (Codex's
    /// `default_tools_approval_mode = "prompt"`, Cline's `autoApprove` of `"*"`), for messages;
    /// `None` for switchboard's own setting.
    pub approve_written: Option<String>,
    /// The entry sets no `approve` (nor another host's key standing for it), so a default given
    /// for the whole run (`--approve`) applies to it.
    pub approve_unset: bool,
    /// What the model's system prompt (and the gateway's `instructions`) says for this server.
    pub instructions: ServerInstructions,
    /// What the server's sampling requests may do (`sampling` in its entry).
    pub sampling: SamplingPolicy,
}

/// What one server's sampling requests may do: `sampling = false` refuses them whatever the run
/// allows; `sampling = { model = "...", max_tokens = N }` answers them with another model of the
/// session's provider and lowers a larger `maxTokens` to N.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SamplingPolicy {
    /// The server may ask the model (the default).
    pub allowed: bool,
    /// The model that answers (`None`: the session's).
    pub model: Option<String>,
    /// The most tokens an answer may have, whatever the server asks.
    pub max_tokens: Option<u32>,
}

impl Default for SamplingPolicy {
    fn default() -> Self {
        SamplingPolicy {
            allowed: true,
            model: None,
            max_tokens: None,
        }
    }
}

/// What the system prompt says for one server (`instructions` in its entry; LibreChat's
/// `serverInstructions`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum ServerInstructions {
    /// The `instructions` the server sent when it connected (`instructions = true`, the
    /// default).
    #[default]
    Server,
    /// None (`instructions = false`): a server whose instructions are long, or not trusted.
    Off,
    /// This text in place of the server's (`instructions = "..."`).
    Text(String),
}

impl ServerInstructions {
    /// The text to show for a server that sent `own`, if any.
    pub fn text<'a>(&'a self, own: Option<&'a str>) -> Option<&'a str> {
        match self {
            ServerInstructions::Server => own,
            ServerInstructions::Off => None,
            ServerInstructions::Text(t) => Some(t.as_str()),
        }
        .map(str::trim)
        .filter(|t| !t.is_empty())
    }
}

impl ServerConfig {
    /// The configured name.
    pub fn name(&self) -> &str {
        &self.spec.name
    }

    /// When a call to `tool` with `arguments` (`None`: not known yet) needs approval: the tool's
    /// own setting, else the first of another host's permission rules that matches the call
    /// (Claude Code's or Amp's, when the config is theirs), else the server's.
    pub fn approve_for(
        &self,
        tool: &str,
        arguments: Option<&switchboard_core::host_rules::Arguments>,
    ) -> Approve {
        let host = self.filter.rules().call(tool, arguments).map(|(v, _)| v);
        self.approve_given(tool, host)
    }

    /// [`ServerConfig::approve_for`], the verdict of the host rule that decides the call
    /// (`None`: no rule does) already known.
    pub fn approve_given(&self, tool: &str, host: Option<Verdict>) -> Approve {
        if let Some(approve) = self.tool_overrides.get(tool).and_then(|o| o.approve) {
            return approve;
        }
        match host {
            Some(Verdict::Allow) => Approve::Never,
            Some(Verdict::Ask | Verdict::Deny) => Approve::Always,
            Some(Verdict::Enable) | None => self.approve,
        }
    }

    /// The setting that gives `tool` its approval mode, in the words its file wrote it:
    /// `approve = "writes"`, `approve = "never" for this tool`, or another host's key
    /// (`autoApprove`, Codex's `default_tools_approval_mode = "prompt"`). Other hosts' rules
    /// are not settings of this kind.
    pub fn approve_setting(&self, tool: &str) -> String {
        match self
            .tool_overrides
            .get(tool)
            .filter(|o| o.approve.is_some())
        {
            Some(o) => o.approve_written.clone().unwrap_or_else(|| {
                format!(
                    "approve = {:?} for this tool",
                    o.approve.unwrap_or_default().word()
                )
            }),
            None => self
                .approve_written
                .clone()
                .unwrap_or_else(|| format!("approve = {:?}", self.approve.word())),
        }
    }

    /// The largest result of `tool`, in tokens, passed on uncut: the tool's own setting, else
    /// the server's, else [`DEFAULT_RESULT_TOKENS`].
    pub fn result_limit(&self, tool: &str) -> u32 {
        self.tool_overrides
            .get(tool)
            .and_then(|o| o.max_result_tokens)
            .or(self.max_result_tokens)
            .unwrap_or(DEFAULT_RESULT_TOKENS)
    }

    /// `def` as the config presents it to a model: with the description, title and parameter
    /// descriptions its `[servers.NAME.tool.TOOL]` gives in place of the server's. `None` when
    /// the config changes nothing of it.
    pub fn presented(&self, def: &switchboard_core::Tool) -> Option<switchboard_core::Tool> {
        let o = self
            .tool_overrides
            .get(&def.name)
            .filter(|o| o.changes_definition())?;
        let mut out = def.clone();
        if let Some(text) = &o.description {
            out.description = Some(text.clone());
        }
        if let Some(title) = &o.title {
            out.title = Some(title.clone());
        }
        for (path, text) in &o.parameters {
            if let Some(serde_json::Value::Object(param)) =
                parameter_mut(&mut out.input_schema, path)
            {
                param.insert(
                    "description".into(),
                    serde_json::Value::String(text.clone()),
                );
            }
        }
        (out != *def).then_some(out)
    }

    /// The result limit of `tool` when the config sets one (the tool's, else the server's), with
    /// no default: `serve` cuts only where the user asked, since the host in front of it
    /// applies its own limits.
    pub fn set_result_limit(&self, tool: &str) -> Option<u32> {
        self.tool_overrides
            .get(tool)
            .and_then(|o| o.max_result_tokens)
            .or(self.max_result_tokens)
    }
}

/// The schema of parameter `path` within a tool's input schema: a top-level property, else a
/// nested one by its dotted path (through `properties`, and `items` of an array).
fn parameter_mut<'a>(
    schema: &'a mut serde_json::Value,
    path: &str,
) -> Option<&'a mut serde_json::Value> {
    if schema
        .pointer(&format!("/properties/{}", pointer_token(path)))
        .is_some()
    {
        return schema.get_mut("properties")?.get_mut(path);
    }
    let mut at = schema;
    for segment in path.split('.') {
        if at.get("properties").is_none() && at.pointer("/items/properties").is_some() {
            at = at.get_mut("items")?;
        }
        at = at.get_mut("properties")?.get_mut(segment)?;
    }
    Some(at)
}

/// `name` escaped as one JSON Pointer token.
fn pointer_token(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

/// The top-level parameter names of a tool's input schema.
fn parameter_names(schema: &serde_json::Value) -> impl Iterator<Item = &str> {
    schema
        .get("properties")
        .and_then(serde_json::Value::as_object)
        .into_iter()
        .flat_map(|p| p.keys().map(String::as_str))
}

/// `catalog` as the config presents it to a model: each tool the config gives a
/// `description`, `title` or `parameters` (`[servers.NAME.tool.TOOL]`) carries those instead
/// of the server's. Applied after pinning, which watches what the server says.
pub fn with_descriptions(
    mut catalog: switchboard_core::Catalog,
    servers: &[ServerConfig],
) -> switchboard_core::Catalog {
    for (name, server) in catalog.servers.iter_mut() {
        let Some(config) = servers.iter().find(|s| s.name() == name) else {
            continue;
        };
        if !config
            .tool_overrides
            .values()
            .any(ToolOverride::changes_definition)
        {
            continue;
        }
        for entry in server.tools.iter_mut() {
            if let Some(def) = config.presented(&entry.def) {
                *entry = switchboard_core::Entry::new(def);
            }
        }
    }
    catalog
}

/// The public names the config chose for tools (`name` in `[servers.NAME.tool.TOOL]`), by
/// (server, tool), for [`switchboard_core::names::NameMap::with_chosen`].
pub fn chosen_names(servers: &[ServerConfig]) -> BTreeMap<(String, String), String> {
    servers
        .iter()
        .flat_map(|s| {
            s.tool_overrides.iter().filter_map(move |(tool, o)| {
                o.name
                    .clone()
                    .map(|n| ((s.name().to_string(), tool.clone()), n))
            })
        })
        .collect()
}

/// The per-tool settings (`[servers.NAME.tool.TOOL]`) that name a tool their server, ready in
/// `catalog`, does not list: a misspelt name would leave a tool without the approval or the
/// description the user meant. One (server, tool, message) each, the message naming the
/// nearest name the server lists.
pub fn unknown_tool_settings(
    catalog: &switchboard_core::Catalog,
    servers: &[ServerConfig],
) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for config in servers {
        let Some(listed) = catalog.servers.get(config.name()) else {
            continue;
        };
        for (tool, settings) in &config.tool_overrides {
            if let Some(entry) = listed.tool(tool) {
                let schema = &entry.def.input_schema;
                for path in settings.parameters.keys() {
                    if parameter_mut(&mut schema.clone(), path).is_some() {
                        continue;
                    }
                    let hint = entry::closest(path, parameter_names(schema))
                        .map(|p| format!("; did you mean {p:?}?"))
                        .unwrap_or_default();
                    let message = format!(
                        "server {:?}: [servers.{}.tool.{tool}] parameters.{path} names a parameter the tool does not take, so it describes nothing{hint}",
                        config.name(),
                        config.name()
                    );
                    out.push((config.name().to_string(), format!("{tool}.{path}"), message));
                }
                continue;
            }
            let hint = entry::closest(tool, listed.tools.iter().map(|t| t.def.name.as_str()))
                .map(|t| format!("; did you mean {t:?}?"))
                .unwrap_or_default();
            let message = format!(
                "server {:?}: [servers.{}.tool.{tool}] names a tool the server does not list, so its settings apply to nothing{hint}",
                config.name(),
                config.name()
            );
            out.push((config.name().to_string(), tool.clone(), message));
        }
    }
    // Another host's rules that name one tool no server lists: a typo there leaves the tool
    // the rule meant to stop unstopped. A name any server lists is left alone (OpenCode's
    // `SERVER_TOOL` may read as two servers' names).
    let named: BTreeSet<String> = servers
        .iter()
        .filter_map(|c| Some((c, catalog.servers.get(c.name())?)))
        .flat_map(|(c, listed)| {
            listed
                .tools
                .iter()
                .map(move |t| c.filter.rules().host_name(&t.def.name))
        })
        .collect();
    let mut said = BTreeSet::new();
    for config in servers {
        let Some(listed) = catalog.servers.get(config.name()) else {
            continue;
        };
        let rules = config.filter.rules();
        for (rule, tool) in rules.exact_tools() {
            if named.contains(&rules.host_name(tool)) || !said.insert(rule.source()) {
                continue;
            }
            let hint = entry::closest(tool, listed.tools.iter().map(|t| t.def.name.as_str()))
                .map(|t| format!("; did you mean {t:?}?"))
                .unwrap_or_default();
            let message = format!(
                "server {:?}: {} names a tool the server does not list, so it holds for nothing{hint}",
                config.name(),
                rule.source()
            );
            out.push((config.name().to_string(), tool.to_string(), message));
        }
    }
    out
}

/// For each bundle whose manifest lists its tools: where that list and the tools
/// the server, ready in `catalog`, lists differ. Claude Desktop shows the manifest's list before
/// a bundle is installed, so a stale one misleads its users.
pub fn manifest_mismatches(
    catalog: &switchboard_core::Catalog,
    servers: &[ServerConfig],
) -> Vec<String> {
    let mut out = Vec::new();
    for config in servers {
        let (Some(declared), Some(listed)) =
            (&config.manifest_tools, catalog.servers.get(config.name()))
        else {
            continue;
        };
        let names = |list: Vec<&str>| {
            list.iter()
                .map(|n| format!("{n:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let missing: Vec<&str> = declared
            .iter()
            .map(String::as_str)
            .filter(|d| listed.tool(d).is_none())
            .collect();
        let unlisted: Vec<&str> = listed
            .tools
            .iter()
            .map(|t| t.def.name.as_str())
            .filter(|t| !declared.iter().any(|d| d == t))
            .collect();
        if !missing.is_empty() {
            out.push(format!(
                "server {:?}: the bundle's manifest lists {}, which the server does not have; take them out of the manifest's `tools`",
                config.name(),
                names(missing)
            ));
        }
        if !unlisted.is_empty() {
            out.push(format!(
                "server {:?}: the server has {}, which the bundle's manifest does not list; add them to its `tools`, or set `tools_generated: true` if the server makes its tools at run time",
                config.name(),
                names(unlisted)
            ));
        }
    }
    out
}

/// A server the config names but that cannot run, and why.
#[derive(Clone, Debug, Serialize)]
pub struct DisabledServer {
    /// The server name.
    pub name: String,
    /// The full reason, with file:line:col where it applies.
    pub reason: String,
    /// Where the entry comes from when the config gathers several (as [`ServerConfig::origin`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
}

/// A named selection of servers and tools for one job (`--profile NAME`).
#[derive(Clone, Debug, Default, Serialize)]
pub struct Profile {
    /// Servers it keeps (all when absent).
    pub servers: Option<Vec<String>>,
    /// `server/tool` globs it keeps (all tools of the kept servers when empty).
    pub tools: Vec<String>,
}

/// Settings that shape what the model reads.
#[derive(Clone, Debug, Serialize)]
pub struct Settings {
    /// The user's own system prompt, sent ahead of the servers' instructions (`system_prompt`;
    /// mcphost's `system-prompt`).
    pub system_prompt: Option<String>,
    /// Put each server's `instructions` into the system prompt (default true).
    pub instructions: bool,
    /// Mark the requests' prefix for the provider's prompt cache where it needs marking
    /// (Anthropic; default true).
    pub prompt_cache: bool,
    /// Compact the conversation when a request no longer fits the model's context, and go on
    /// (`auto_compact`, default true; see `Agent::compact`).
    pub auto_compact: bool,
    /// When the model gets the `read_resource` tool (`read_resources`: `linked`, the default,
    /// `always` or `never`; see [`crate::resource_tool`]).
    pub read_resources: crate::resource_tool::ReadResources,
    /// Put today's date into the system prompt (default false: it would change the prompt-cache
    /// prefix every day).
    pub date: bool,
    /// Where the gateway keeps tool pins (`pin_store`); the user data directory when absent.
    pub pin_store: Option<PathBuf>,
    /// The sentence-embedding model directory for tool search (`search_model`); else
    /// `$SWITCHBOARD_MODEL_DIR`, else the user data directory's default model.
    pub search_model: Option<PathBuf>,
    /// A price table of your own (`prices`, in the format of `data/prices.toml`) for costs and
    /// the cost limit; the embedded one when absent.
    pub prices: Option<PathBuf>,
    /// Which model `run` and `chat` talk to, and how, when their flags do not say.
    pub model: ModelSettings,
    /// The folders offered to servers as roots (`roots`), absolute and existing; none by default.
    pub roots: Vec<PathBuf>,
}

impl ModelSettings {
    /// These settings as a file wrote them, with `provider` by its API's name (`anthropic`,
    /// `openai-chat`, `openai-responses`, `gemini`; `self.provider` is not read); what cannot
    /// be used is left out, each with why (a temperature outside 0 to 2, no model requests
    /// allowed, an unknown provider), and empty strings are none.
    pub fn checked(self, provider: Option<&str>) -> (ModelSettings, Vec<String>) {
        let ModelSettings {
            model,
            base_url,
            api_key_env,
            max_tokens,
            temperature,
            max_turns,
            max_cost,
            reasoning_effort,
            ..
        } = self;
        let mut problems = Vec::new();
        let provider = provider.and_then(|p| match p.parse() {
            Ok(d) => Some(d),
            Err(e) => {
                problems.push(format!("`provider` ignored: {e}"));
                None
            }
        });
        let temperature = temperature.filter(|t| {
            let ok = switchboard_providers::TEMPERATURE.contains(t);
            if !ok {
                problems.push(format!("`temperature` {t} ignored: it is from 0 to 2"));
            }
            ok
        });
        let max_turns = max_turns.filter(|&n| {
            if n == 0 {
                problems.push("`max_turns` 0 ignored: at least one model request is needed".into());
            }
            n > 0
        });
        let nonempty = |s: Option<String>| s.filter(|s| !s.trim().is_empty());
        let settings = ModelSettings {
            provider,
            model: nonempty(model),
            base_url: nonempty(base_url),
            api_key_env: nonempty(api_key_env),
            max_tokens: max_tokens.filter(|&n| n > 0),
            temperature,
            max_turns,
            max_cost,
            reasoning_effort: nonempty(reasoning_effort),
        };
        (settings, problems)
    }

    /// The provider to hand [`ModelSettings::for_provider`], given the flags' `provider`,
    /// `model` and `base_url`: the flag's provider; else, with no URL given, the provider a
    /// model name plainly belongs to ([`switchboard_providers::provider_for_model`]: `--model
    /// gpt-5` is OpenAI's, `gemini-2.5-pro` Gemini's), the flag's model first, then these
    /// settings' own when they name no provider or URL. A flag's model of the settings'
    /// provider (OpenAI's Chat API and Responses API are one provider) keeps the settings'
    /// provider, URL and key.
    pub fn provider_for(
        &self,
        provider: Option<switchboard_core::Dialect>,
        model: Option<&str>,
        base_url: Option<&str>,
    ) -> Option<switchboard_core::Dialect> {
        if provider.is_some() || base_url.is_some() {
            return provider;
        }
        let own = self.provider.is_some() || self.base_url.is_some();
        let inferred = match model {
            Some(m) => switchboard_providers::provider_for_model(m)?,
            None if own => return None,
            None => switchboard_providers::provider_for_model(self.model.as_deref()?)?,
        };
        match self.provider {
            Some(p) if switchboard_providers::same_provider(p, inferred) => None,
            _ => Some(inferred),
        }
    }

    /// These settings for requests to `provider` (`None`: the settings' own, else
    /// Anthropic's): the model, base URL and key variable are the settings' provider's, so
    /// another one leaves them out; the limits stay.
    pub fn for_provider(&self, provider: Option<switchboard_core::Dialect>) -> ModelSettings {
        let same = provider.is_none() || provider == self.provider;
        let own = |v: &Option<String>| v.clone().filter(|_| same);
        ModelSettings {
            provider: Some(
                provider
                    .or(self.provider)
                    .unwrap_or(switchboard_core::Dialect::Anthropic),
            ),
            model: own(&self.model),
            base_url: own(&self.base_url),
            api_key_env: own(&self.api_key_env),
            ..self.clone()
        }
    }
}

/// A config's defaults for the model `run` and `chat` use (switchboard.toml's `[settings]`
/// `provider`, `model`, ...; mcphost's `model`, `provider-url`, ...). A command-line flag wins.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ModelSettings {
    /// The provider's API.
    pub provider: Option<switchboard_core::Dialect>,
    /// The model id.
    pub model: Option<String>,
    /// Where requests go instead of the provider's API.
    pub base_url: Option<String>,
    /// The environment variable holding the API key.
    pub api_key_env: Option<String>,
    /// The most tokens each reply may have.
    pub max_tokens: Option<u32>,
    /// Sampling temperature.
    pub temperature: Option<f64>,
    /// Model requests allowed per message.
    pub max_turns: Option<u32>,
    /// Stop a conversation once it has cost this much (see
    /// [`crate::agent::AgentOptions::max_cost`]).
    pub max_cost: Option<switchboard_core::rent::Usd>,
    /// How long a reasoning model thinks (`low`, `medium`, `high`, ...; OpenAI's APIs).
    pub reasoning_effort: Option<String>,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            system_prompt: None,
            instructions: true,
            prompt_cache: true,
            auto_compact: true,
            read_resources: crate::resource_tool::ReadResources::Linked,
            date: false,
            pin_store: None,
            search_model: None,
            prices: None,
            model: ModelSettings::default(),
            roots: Vec::new(),
        }
    }
}

/// A loaded configuration.
#[derive(Clone, Debug)]
pub struct Config {
    /// Where it came from.
    pub source: ConfigSource,
    /// Servers that can run, in file order.
    pub servers: Vec<ServerConfig>,
    /// Servers that cannot, each with its reason.
    pub disabled: Vec<DisabledServer>,
    /// Named profiles.
    pub profiles: BTreeMap<String, Profile>,
    /// Prompt settings.
    pub settings: Settings,
    /// Things in the file that were ignored, each with file:line:col.
    pub warnings: Vec<String>,
    /// The other files read to make this config, and the ones looked for but absent, whose
    /// creation would change it: an `envFile`, OpenCode's `{file:}`, and for Claude Code's files
    /// the project's `.mcp.json`, the settings files and the managed files; for Gemini CLI's,
    /// the other scope's settings, `trustedFolders.json` and the extensions' files. `serve`
    /// watches them with the config.
    pub inputs: Vec<PathBuf>,
}

/// The file name of switchboard's own config.
pub const NATIVE_FILE: &str = "switchboard.toml";

/// The folder `CODEX_HOME` names, when it names one.
fn codex_home() -> Option<PathBuf> {
    env_folder("CODEX_HOME")
}

/// The folder environment variable `var` names, when it names one.
fn env_folder(var: &str) -> Option<PathBuf> {
    std::env::var_os(var)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}
/// LibreChat's `CONFIG_PATH` when it names a YAML file (not a URL, which LibreChat also takes).
fn librechat_config() -> Option<PathBuf> {
    std::env::var_os("CONFIG_PATH")
        .map(PathBuf::from)
        .filter(|p| {
            let text = p.to_string_lossy();
            !text.contains("://")
                && p.extension().is_some_and(|e| {
                    e.eq_ignore_ascii_case("yaml") || e.eq_ignore_ascii_case("yml")
                })
        })
}

/// The file name of Claude Code's project config.
pub const MCP_JSON_FILE: &str = ".mcp.json";

impl Config {
    /// Find the config to use: `explicit` if given, else `./switchboard.toml`, else
    /// `./.mcp.json`, else `switchboard.toml` in the user config dir. `None` means: use the demo.
    ///
    /// An `explicit` that is not a file but a host's name (`cursor`, `claude-desktop`, `codex`,
    /// ...: [`hosts::names`]) means that host's config file.
    pub fn locate(explicit: Option<&Path>, cwd: &Path) -> Option<PathBuf> {
        if let Some(p) = explicit {
            if !p.exists()
                && let Some(name) = p.to_str()
                && let Some(dirs) = directories::BaseDirs::new()
            {
                let (codex_home, gemini_home) = (codex_home(), env_folder("GEMINI_CLI_HOME"));
                let librechat = librechat_config();
                let folders = hosts::Folders {
                    home: dirs.home_dir(),
                    config: dirs.config_dir(),
                    cwd,
                    codex_home: codex_home.as_deref(),
                    gemini_home: gemini_home.as_deref(),
                    librechat_config: librechat.as_deref(),
                };
                if let Some(file) = hosts::resolve(name, &folders) {
                    return Some(file);
                }
            }
            return Some(p.to_path_buf());
        }
        [cwd.join(NATIVE_FILE), cwd.join(MCP_JSON_FILE)]
            .into_iter()
            .chain(Self::user_file())
            .find(|p| p.is_file())
    }

    /// The user's own `switchboard.toml` (in the user config directory), whether or not it
    /// exists; `None` when the system names no home.
    pub fn user_file() -> Option<PathBuf> {
        directories::ProjectDirs::from("", "", "switchboard")
            .map(|d| d.config_dir().join(NATIVE_FILE))
    }

    /// The config files of other hosts on this machine (project files in `cwd` first) that
    /// `--config` reads as they are and that name at least one server.
    pub fn other_hosts(cwd: &Path) -> Vec<hosts::Found> {
        let Some(dirs) = directories::BaseDirs::new() else {
            return Vec::new();
        };
        let (codex_home, gemini_home) = (codex_home(), env_folder("GEMINI_CLI_HOME"));
        let librechat = librechat_config();
        hosts::found(&hosts::Folders {
            home: dirs.home_dir(),
            config: dirs.config_dir(),
            cwd,
            codex_home: codex_home.as_deref(),
            gemini_home: gemini_home.as_deref(),
            librechat_config: librechat.as_deref(),
        })
        .into_iter()
        .filter_map(|mut found| {
            let config = Config::load(&found.path).ok()?;
            found.servers = config.servers.len() + config.disabled.len();
            (found.servers > 0).then_some(found)
        })
        .collect()
    }

    /// Read and parse a config file. Fails only when the whole file is unusable (unreadable,
    /// syntax error, wrong shape); a bad server entry lands in `disabled` instead.
    ///
    /// A folder is read as Continue's `.continue/mcpServers/`: each `.yaml`, `.yml`, `.json` and
    /// `.jsonc` file in it, in name order. A file that cannot be read is a warning and the
    /// others still count; a second server of a name already taken is disabled.
    ///
    /// An MCP bundle is read as the one server it holds: a `.mcpb` (or `.dxt`) file, unpacked
    /// into the user cache first, a folder holding its `manifest.json`, or the manifest itself.
    /// A config given as text rather than a file (`--config '{"mcpServers": ...}'`): read as
    /// the JSON files other hosts write (or as `switchboard.toml` when it is not JSON), with
    /// relative paths from the working folder; messages name it `--config`.
    pub fn parse_inline(
        text: &str,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Config, HostError> {
        let mut config = Self::parse(Path::new(INLINE), text, env)?;
        config.source = ConfigSource::Inline;
        Ok(config)
    }

    pub fn load(path: &Path) -> Result<Config, HostError> {
        if path.is_dir() {
            let manifest = path.join("manifest.json");
            // Read once: what tells a bundle's folder is also what is parsed.
            if let Ok(text) = std::fs::read_to_string(&manifest)
                && serde_json::from_str::<serde_json::Value>(&text)
                    .is_ok_and(|m| mcpb::is_manifest(&m))
            {
                return Self::parse(&manifest, &text, &|name| std::env::var(name).ok());
            }
            return Self::load_folder(path);
        }
        if matches!(
            path.extension().and_then(|e| e.to_str()),
            Some("mcpb" | "dxt")
        ) {
            return Self::load_bundle(path);
        }
        let text = std::fs::read_to_string(path).map_err(|source| HostError::ConfigRead {
            path: path.to_path_buf(),
            source,
        })?;
        Self::parse(path, &text, &|name| std::env::var(name).ok())
    }

    fn load_bundle(archive: &Path) -> Result<Config, HostError> {
        let manifest = mcpb::manifest_of(archive).map_err(|message| HostError::ConfigShape {
            path: archive.to_path_buf(),
            message,
        })?;
        let mut config = Self::load(&manifest)?;
        config.source = ConfigSource::File {
            path: archive.to_path_buf(),
        };
        // Reasons and warnings name the file the user gave, not the unpacked copy.
        let unpacked = manifest.display().to_string();
        let texts = config.disabled.iter_mut().map(|d| &mut d.reason);
        for text in texts.chain(config.warnings.iter_mut()) {
            if let Some(rest) = text.strip_prefix(&unpacked) {
                *text = format!("{}{rest}", archive.display());
            }
        }
        Ok(config)
    }

    fn load_folder(dir: &Path) -> Result<Config, HostError> {
        let read_error = |source| HostError::ConfigRead {
            path: dir.to_path_buf(),
            source,
        };
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(read_error)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.is_file()
                    && matches!(
                        p.extension().and_then(|e| e.to_str()),
                        Some("yaml" | "yml" | "json" | "jsonc")
                    )
            })
            .collect();
        files.sort();
        if files.is_empty() {
            return Err(HostError::ConfigShape {
                path: dir.to_path_buf(),
                message: "a folder given as config must hold .yaml or .json server files (as Continue's .continue/mcpServers/ does); none is here".into(),
            });
        }
        let mut merged = Config {
            source: ConfigSource::File {
                path: dir.to_path_buf(),
            },
            servers: Vec::new(),
            disabled: Vec::new(),
            profiles: Default::default(),
            settings: Settings::default(),
            warnings: Vec::new(),
            inputs: Vec::new(),
        };
        let mut taken: BTreeMap<String, PathBuf> = BTreeMap::new();
        for file in files {
            let config = match Config::load(&file) {
                Ok(c) => c,
                Err(e) => {
                    merged
                        .warnings
                        .push(format!("{e} (the folder's other files are read)"));
                    continue;
                }
            };
            merged.warnings.extend(config.warnings);
            merged.inputs.extend(config.inputs);
            let names = config
                .servers
                .iter()
                .map(|s| s.name().to_string())
                .chain(config.disabled.iter().map(|d| d.name.clone()))
                .collect::<Vec<_>>();
            for name in &names {
                if let Some(first) = taken.get(name) {
                    merged.disabled.push(DisabledServer {
                        name: name.clone(),
                        reason: format!(
                            "{}: a server named {name:?} is already defined in {}",
                            file.display(),
                            first.display()
                        ),
                        origin: None,
                    });
                }
            }
            let new = |name: &str| !taken.contains_key(name);
            merged
                .servers
                .extend(
                    config
                        .servers
                        .into_iter()
                        .filter(|s| new(s.name()))
                        .map(|mut s| {
                            s.origin.get_or_insert_with(|| file.display().to_string());
                            s
                        }),
                );
            merged
                .disabled
                .extend(
                    config
                        .disabled
                        .into_iter()
                        .filter(|d| new(&d.name))
                        .map(|mut d| {
                            d.origin.get_or_insert_with(|| file.display().to_string());
                            d
                        }),
                );
            for name in names {
                taken.entry(name).or_insert_with(|| file.clone());
            }
        }
        Ok(merged)
    }

    /// Parse config text. `path` names the file in errors and anchors relative paths;
    /// `env` looks up variables for `${VAR}` expansion.
    pub fn parse(
        path: &Path,
        text: &str,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Config, HostError> {
        Self::parse_in(path, text, env, std::env::current_dir().ok())
    }

    /// [`Config::parse`] as if run in `cwd`, which picks the project of a config that keeps
    /// servers per project (Claude Code's `~/.claude.json`).
    pub fn parse_in(
        path: &Path,
        text: &str,
        env: &dyn Fn(&str) -> Option<String>,
        cwd: Option<PathBuf>,
    ) -> Result<Config, HostError> {
        Self::parse_with(path, text, env, cwd, true)
    }

    /// Read a file that is part of another config (a project's `.mcp.json` within Claude Code's
    /// state file, Claude Code's managed files): as [`Config::load`], without applying Claude
    /// Code's managed policy, which the outer read applies once to the whole.
    fn load_part(path: &Path, env: &dyn Fn(&str) -> Option<String>) -> Result<Config, HostError> {
        let text = std::fs::read_to_string(path).map_err(|source| HostError::ConfigRead {
            path: path.to_path_buf(),
            source,
        })?;
        Self::parse_part(path, &text, env)
    }

    /// [`Config::load_part`] of text already read.
    fn parse_part(
        path: &Path,
        text: &str,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Config, HostError> {
        Self::parse_with(path, text, env, std::env::current_dir().ok(), false)
    }

    fn parse_with(
        path: &Path,
        text: &str,
        env: &dyn Fn(&str) -> Option<String>,
        cwd: Option<PathBuf>,
        policy: bool,
    ) -> Result<Config, HostError> {
        // Editors on Windows may begin a UTF-8 file with a byte-order mark; JSON parsers refuse it.
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let ext = path.extension().and_then(|e| e.to_str());
        let is_json = match ext {
            Some("json" | "jsonc") => true,
            Some("toml") => false,
            _ => text.trim_start().starts_with('{'),
        };
        let ctx = entry::Context {
            path,
            base: path.parent().unwrap_or(Path::new(".")),
            env,
            cwd,
            policy,
            inputs: Default::default(),
            notes: Default::default(),
        };
        if matches!(ext, Some("yaml" | "yml")) {
            parse_yaml(&ctx, text)
        } else if is_json {
            mcp_json::parse(&ctx, text)
        } else {
            native::parse(&ctx, text)
        }
    }

    /// The folders offered to servers as roots ([`Settings::roots`]), as servers see them.
    pub fn roots(&self) -> Vec<switchboard_mcp::Root> {
        self.settings
            .roots
            .iter()
            .filter_map(|p| switchboard_mcp::Root::folder(p))
            .collect()
    }

    /// Each server's own OAuth settings, by name (for `switchboard_mcp::configure_server_oauth`).
    pub fn server_oauth(&self) -> BTreeMap<String, switchboard_mcp::ServerOAuth> {
        self.servers
            .iter()
            .filter_map(|s| Some((s.name().to_string(), s.oauth.clone()?)))
            .collect()
    }

    /// The embedded demo: the two demo servers, run as `<exe> demo-server tickets|docs`.
    pub fn demo(exe: &Path) -> Config {
        let servers = ["tickets", "docs"]
            .into_iter()
            .map(|name| ServerConfig {
                spec: ServerSpec::stdio(
                    name,
                    exe.to_string_lossy(),
                    vec!["demo-server".into(), name.into()],
                ),
                alias: None,
                allow: Vec::new(),
                deny: Vec::new(),
                filter: ToolFilter::default(),
                approve: Approve::default(),
                pin: PinMode::default(),
                tool_overrides: BTreeMap::new(),
                max_result_tokens: None,
                oauth: None,
                legacy_sse: false,
                origin: None,
                written_command: None,
                startup_timeout_written: false,
                call_timeout_written: false,
                manifest_tools: None,
                asks_refused: None,
                approve_written: None,
                approve_unset: true,
                instructions: ServerInstructions::Server,
                sampling: SamplingPolicy::default(),
            })
            .collect();
        Config {
            source: ConfigSource::Demo,
            servers,
            disabled: Vec::new(),
            profiles: BTreeMap::new(),
            settings: Settings::default(),
            warnings: Vec::new(),
            inputs: Vec::new(),
        }
    }

    /// Keep only what profile `name` selects. Server names it lists that the config does not
    /// define at all are an error; ones that are defined but disabled stay disabled.
    pub fn with_profile(mut self, name: &str) -> Result<Config, HostError> {
        let Some(profile) = self.profiles.get(name).cloned() else {
            let known: Vec<&str> = self.profiles.keys().map(String::as_str).collect();
            return Err(HostError::UnknownProfile {
                name: name.to_string(),
                known: if known.is_empty() {
                    "none".into()
                } else {
                    known.join(", ")
                },
            });
        };
        let path = match &self.source {
            ConfigSource::File { path } => path.clone(),
            ConfigSource::Demo => PathBuf::from("(embedded demo)"),
            ConfigSource::Inline => PathBuf::from(INLINE),
        };
        let profile_err = |message: String| HostError::ProfileEntry {
            path: path.clone(),
            profile: name.to_string(),
            message,
        };
        if let Some(keep) = &profile.servers {
            let defined: BTreeSet<&str> = self
                .servers
                .iter()
                .map(ServerConfig::name)
                .chain(self.disabled.iter().map(|d| d.name.as_str()))
                .collect();
            if let Some(missing) = keep.iter().find(|s| !defined.contains(s.as_str())) {
                return Err(profile_err(format!(
                    "lists server {missing:?}, which the config does not define"
                )));
            }
            self.servers.retain(|s| keep.iter().any(|k| k == s.name()));
            self.disabled.retain(|d| keep.contains(&d.name));
        }
        if !profile.tools.is_empty() {
            for server in &mut self.servers {
                // `server/glob` entries narrow that server's allow list; a server with no entry
                // keeps no tools.
                let globs: Vec<String> = profile
                    .tools
                    .iter()
                    .filter_map(|t| t.split_once('/'))
                    .filter(|(s, _)| *s == server.name() || *s == "*")
                    .map(|(_, g)| g.to_string())
                    .collect();
                // The profile narrows what the server's own lists let through; it never
                // widens it (it replaced the server's allow list until 2026-12-04).
                let listed = format!("profiles.{name}.tools");
                server.filter = if globs.is_empty() {
                    let deny = server.filter.list_names().1.to_string();
                    ToolFilter::deny_all().lists_named(listed, deny)
                } else {
                    std::mem::take(&mut server.filter)
                        .narrowed(&globs, listed)
                        .map_err(|e| profile_err(e.to_string()))?
                };
            }
        }
        Ok(self)
    }

    /// The same config where each server that sets no `approve` of its own asks as `mode` says
    /// (`said`: how the run was told, `--approve always`, for messages). A tool's own setting
    /// and other hosts' rules still hold over it.
    pub fn with_default_approve(mut self, mode: Approve, said: &str) -> Config {
        for server in self.servers.iter_mut().filter(|s| s.approve_unset) {
            server.approve = mode;
            server.approve_written = Some(said.to_string());
        }
        self
    }

    /// Server names, usable and disabled, in file order of each list.
    pub fn server_names(&self) -> impl Iterator<Item = &str> {
        self.servers
            .iter()
            .map(ServerConfig::name)
            .chain(self.disabled.iter().map(|d| d.name.as_str()))
    }
}

/// A YAML config: goose's `config.yaml` (`extensions:`), Continue's (`mcpServers:`, a list),
/// mcphost's or LibreChat's (`mcpServers:`, a mapping).
fn parse_yaml(ctx: &entry::Context<'_>, text: &str) -> Result<Config, HostError> {
    let root: serde_yaml_ng::Value =
        serde_yaml_ng::from_str(text).map_err(|e| HostError::ConfigSyntax {
            path: ctx.path.to_path_buf(),
            line: e.location().map_or(1, |l| l.line()),
            column: e.location().map_or(1, |l| l.column()),
            message: e.to_string(),
        })?;
    let shape = || {
        HostError::ConfigShape {
        path: ctx.path.to_path_buf(),
        message: "expected goose's config.yaml, with an `extensions:` mapping, Continue's, with an `mcpServers:` list, or mcphost's or LibreChat's, with an `mcpServers:` mapping".into(),
    }
    };
    let root = serde_json::to_value(&root).map_err(|_| shape())?;
    if let Some(extensions) = root
        .get("extensions")
        .and_then(serde_json::Value::as_object)
    {
        let mode = root.get("GOOSE_MODE").and_then(serde_json::Value::as_str);
        goose::parse(ctx, text, extensions, mode)
    } else if let Some(list) = root.get("mcpServers").and_then(serde_json::Value::as_array) {
        continue_dev::parse(ctx, text, list)
    } else if let Some(map) = root
        .get("mcpServers")
        .and_then(serde_json::Value::as_object)
    {
        if librechat::is_config(ctx.path, map) {
            mcphost::parse_librechat(ctx, text, map)
        } else {
            mcphost::parse(ctx, text, &root)
        }
    } else if root
        .get("mcpServers")
        .is_some_and(serde_json::Value::is_null)
    {
        // mcphost's own starting file: `mcpServers:` with nothing under it yet.
        mcphost::parse(ctx, text, &root)
    } else {
        Err(shape())
    }
}

#[cfg(test)]
mod tests;
