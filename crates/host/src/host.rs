//! `Host`: the library's front door. A config's servers, a provider client and the agent loop
//! over them, put together by one builder, as `switchboard run` and `chat` put them together:
//!
//! ```no_run
//! # async fn demo() -> Result<(), switchboard_host::HostError> {
//! use switchboard_host::{Config, Host};
//! use switchboard_core::Dialect;
//!
//! let config = Config::load("switchboard.toml".as_ref())?;
//! let mut host = Host::builder(config)
//!     .provider(Dialect::Anthropic) // the key from ANTHROPIC_API_KEY
//!     .build()
//!     .await?;
//! for note in host.notes() {
//!     eprintln!("{note}"); // servers disabled or not up, settings that apply to nothing
//! }
//! let answer = host.ask("Which tickets mention login?").await?;
//! println!("{}", answer.text);
//! host.shutdown().await;
//! # Ok(())
//! # }
//! ```
//!
//! What the builder does not do is print: what it finds on the way (a server that did not come
//! up, a pin store that cannot be opened) is returned as [`Host::notes`], and the config's own
//! warnings stay in [`Config::warnings`] for the caller to show.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use switchboard_core::{Dialect, Secret};
use switchboard_mcp::{ServerState, Sessions};
use switchboard_providers::Part;

use crate::agent::{Agent, AgentEvent, AgentOptions, Answer, ToolMode, translate_options};
use crate::client::ProviderClient;
use crate::config::Config;
use crate::dispatch::{ApproveAll, Approver, DeclineAll};
use crate::error::HostError;
use crate::finder::Finder;
use crate::transcript::Transcript;
use crate::translate::default_model;

/// A conversation with a model over a config's servers: an [`Agent`] and what building it
/// found.
pub struct Host {
    agent: Agent,
    notes: Vec<String>,
}

/// Where the API key comes from.
enum Key {
    /// Not said: the config's `api_key_env` when it names one for this provider, else the
    /// provider's usual variable (`ANTHROPIC_API_KEY`, ...), none needed for a local
    /// `base_url`.
    Usual,
    /// This environment variable.
    Env(String),
    /// This key.
    Given(Secret),
    /// No key (a local model server).
    None,
}

/// How to build a [`Host`]; every setting has the default `switchboard run` has. What the
/// builder is not told about the model comes from the config's model settings
/// ([`crate::config::ModelSettings`]: switchboard.toml's `[settings] provider, model, ...`,
/// mcphost's `model`, `provider-url`, ...), as `run` takes them when its flags do not say.
pub struct HostBuilder {
    config: Config,
    /// As given to the builder; `None`: the config's, else Anthropic's.
    provider: Option<Dialect>,
    model: Option<String>,
    base_url: Option<String>,
    key: Key,
    approver: Arc<dyn Approver>,
    options: AgentOptions,
    /// What [`HostBuilder::max_turns`], [`HostBuilder::max_tokens`] and
    /// [`HostBuilder::temperature`] said: ahead of `options` and the config, in any order.
    turns: Option<u32>,
    tokens: Option<u32>,
    cost: Option<switchboard_core::rent::Usd>,
    prices: Option<Arc<switchboard_core::rent::Prices>>,
    temperature: Option<f64>,
    reasoning_effort: Option<String>,
    /// The config's model settings were applied (at `check` or `build`).
    settled: bool,
    /// What settling found, for [`Host::notes`].
    notes: Vec<String>,
    transcript: Option<PathBuf>,
    wait: Option<Duration>,
    sessions: Option<Sessions>,
    pins: bool,
    /// The client and transcript, once [`HostBuilder::check`] made them.
    checked: Option<(ProviderClient, Option<Transcript>)>,
}

impl Host {
    /// Start building a host over `config`'s servers (see [`Config::load`]).
    pub fn builder(config: Config) -> HostBuilder {
        HostBuilder {
            config,
            provider: None,
            model: None,
            base_url: None,
            key: Key::Usual,
            approver: Arc::new(DeclineAll {
                why: "this host approves no calls that need approval".into(),
            }),
            options: AgentOptions::default(),
            turns: None,
            tokens: None,
            cost: None,
            prices: None,
            temperature: None,
            reasoning_effort: None,
            settled: false,
            notes: Vec::new(),
            transcript: None,
            wait: None,
            sessions: None,
            pins: true,
            checked: None,
        }
    }

    /// What building found that the caller may want to show: servers disabled by the config
    /// or not up, per-tool settings naming tools no server lists, a pin store that could not be
    /// opened. None of them stopped the build.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// Send a text message and run the loop until the model answers (or the turn limit).
    pub async fn ask(&mut self, text: &str) -> Result<Answer, HostError> {
        self.send(vec![Part::Text(text.to_string())], &mut |_| {})
            .await
    }

    /// Send a message of several parts, seeing the loop's events as they happen (streamed
    /// text, tool uses, tools array changes).
    pub async fn send(
        &mut self,
        parts: Vec<Part>,
        on_event: &mut (dyn FnMut(AgentEvent) + Send),
    ) -> Result<Answer, HostError> {
        self.agent.send(parts, on_event).await
    }

    /// The agent: its conversation, turns, usage, tools array and sessions.
    pub fn agent(&self) -> &Agent {
        &self.agent
    }

    /// The agent, to change its settings between messages.
    pub fn agent_mut(&mut self) -> &mut Agent {
        &mut self.agent
    }

    /// The agent, and the host with it.
    pub fn into_agent(self) -> Agent {
        self.agent
    }

    /// Close every server session (stdio servers are stopped).
    pub async fn shutdown(self) {
        self.agent.sessions().shutdown().await;
    }
}

impl HostBuilder {
    /// The user's own system prompt, sent first in the system prompt, ahead of the servers'
    /// instructions; in place of the config's (`system_prompt`).
    pub fn system_prompt(mut self, text: impl Into<String>) -> Self {
        self.config.settings.system_prompt = Some(text.into());
        self
    }

    /// Whether requests mark their prefix for the provider's prompt cache where it needs
    /// marking (Anthropic); in place of the config's `prompt_cache` (default true).
    pub fn prompt_cache(mut self, on: bool) -> Self {
        self.config.settings.prompt_cache = on;
        self
    }

    /// Whether a request that no longer fits the model's context compacts the conversation
    /// and goes on ([`AgentOptions::auto_compact`]); in place of the config's `auto_compact`
    /// (default true).
    pub fn auto_compact(mut self, on: bool) -> Self {
        self.config.settings.auto_compact = on;
        self
    }

    /// The provider's API (default: without a base URL, the one the model's name plainly
    /// belongs to, see [`crate::config::ModelSettings::provider_for`]; else the config's
    /// `provider`, else Anthropic's). Another one than the config's leaves the config's model,
    /// base URL and key variable out: they are its provider's.
    pub fn provider(mut self, provider: Dialect) -> Self {
        self.provider = Some(provider);
        self
    }

    /// The model id (default: the config's `model`, else the provider's default model).
    pub fn model(mut self, model: impl Into<String>) -> Self {
        self.model = Some(model.into());
        self
    }

    /// Send requests here instead of the provider's API (Ollama's `http://localhost:11434/v1`,
    /// a proxy; default: the config's `base_url`). No key is needed then unless the provider's
    /// variable is set.
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = Some(url.into());
        self
    }

    /// Use this API key.
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.key = Key::Given(Secret::new(key.into()));
        self
    }

    /// Read the API key from this environment variable instead of the provider's usual one
    /// (default: the config's `api_key_env`, else the usual one).
    pub fn api_key_env(mut self, var: impl Into<String>) -> Self {
        self.key = Key::Env(var.into());
        self
    }

    /// Send no API key at all (a local model server behind `base_url`).
    pub fn no_api_key(mut self) -> Self {
        self.key = Key::None;
        self
    }

    /// Who approves calls that need approval (destructive tools, or per config). The default
    /// declines them, and the model is told so.
    pub fn approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.approver = approver;
        self
    }

    /// Approve every call that needs approval (`switchboard run --yes`).
    pub fn approve_all(self) -> Self {
        self.approver(Arc::new(ApproveAll))
    }

    /// The loop's settings (turn limit, `max_tokens`, streaming, where cut results go). The
    /// config's `max_turns`, `max_tokens` and `temperature` fill in what these leave at
    /// [`AgentOptions::default`]'s; [`HostBuilder::max_turns`], [`HostBuilder::max_tokens`]
    /// and [`HostBuilder::temperature`], called before or after, win over both.
    pub fn options(mut self, options: AgentOptions) -> Self {
        self.options = options;
        self
    }

    /// Model requests allowed per message (default: the config's `max_turns`, else 20; at
    /// least 1).
    pub fn max_turns(mut self, turns: u32) -> Self {
        self.turns = Some(turns);
        self
    }

    /// The most tokens each reply may have (default: the config's `max_tokens`, else as
    /// [`AgentOptions::max_tokens`] says).
    pub fn max_tokens(mut self, tokens: u32) -> Self {
        self.tokens = Some(tokens);
        self
    }

    /// When the model gets the host's `read_resource` tool, in place of the config's
    /// `read_resources` (see [`crate::resource_tool::ReadResources`]).
    pub fn read_resources(mut self, when: crate::resource_tool::ReadResources) -> Self {
        self.config.settings.read_resources = when;
        self
    }

    /// Stop once the conversation has cost this much at the model's list prices (see
    /// [`AgentOptions::max_cost`]); building fails when the price table has no input and
    /// output price for the model, since the limit could not be kept.
    pub fn max_cost(mut self, usd: switchboard_core::rent::Usd) -> Self {
        self.cost = Some(usd);
        self
    }

    /// The price table costs and the cost limit are reckoned with (default: the embedded
    /// `data/prices.toml`), e.g. one with entries for models it lacks.
    pub fn prices(mut self, prices: switchboard_core::rent::Prices) -> Self {
        self.prices = Some(Arc::new(prices));
        self
    }

    /// Sampling temperature, 0 to 2 (default: the config's `temperature`, else the model's
    /// own). One outside that range is left out, with a note.
    pub fn temperature(mut self, temperature: f64) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// How long a reasoning model thinks before it answers (`minimal`, `low`, `medium`,
    /// `high`, ..., or a number of thinking tokens; default: the config's `reasoning_effort`,
    /// else the model's own), in each API's fields as
    /// [`switchboard_providers::reasoning_effort_fields`] says; one the model cannot take is
    /// left out, with a note.
    pub fn reasoning_effort(mut self, effort: impl Into<String>) -> Self {
        self.reasoning_effort = Some(effort.into());
        self
    }

    /// Which tools the model sees: all of them, or a search tool and what it found.
    pub fn tools(mut self, tools: ToolMode) -> Self {
        self.options.tools = tools;
        self
    }

    /// Write every request and response body to this file, as JSON lines (keys redacted).
    pub fn transcript(mut self, path: impl Into<PathBuf>) -> Self {
        self.transcript = Some(path.into());
        self
    }

    /// Wait at most this long for servers to start (default: until each has started or
    /// failed). The tools of one still starting join the tools array when it is ready.
    pub fn startup_wait(mut self, wait: Duration) -> Self {
        self.wait = Some(wait);
        self
    }

    /// Use sessions already started for the config's servers (say, behind a progress bar)
    /// instead of starting them. (Before starting them, call
    /// `switchboard_mcp::configure_server_oauth(config.server_oauth())` and
    /// `switchboard_mcp::configure_roots(config.roots())`, as `build` does when it starts them,
    /// so each server's own OAuth client settings apply and the config's roots are offered.)
    pub fn sessions(mut self, sessions: Sessions) -> Self {
        self.sessions = Some(sessions);
        self
    }

    /// Whether to check tools against the pin store, for servers whose `pin` is not `off`
    /// (default true: the store `[settings] pin_store` names, else the user data folder's).
    pub fn pins(mut self, on: bool) -> Self {
        self.pins = on;
        self
    }

    /// Make the provider client and open the transcript now, before any server starts, so what
    /// the caller must fix (an API key variable that is not set, a transcript that cannot be
    /// written, a base URL that is not one) is known first. [`HostBuilder::build`] does this
    /// itself when it was not done.
    pub fn check(mut self) -> Result<Self, HostError> {
        self.settle();
        if self.checked.is_none() {
            self.checked = Some(self.client_and_transcript()?);
        }
        Ok(self)
    }

    /// Fill in what the builder was not told from the config's model settings, once. The
    /// config's model, base URL and key variable are its provider's: another provider given
    /// here leaves them out.
    fn settle(&mut self) {
        if std::mem::replace(&mut self.settled, true) {
            return;
        }
        let settings = &self.config.settings.model;
        let provider = settings.provider_for(
            self.provider,
            self.model.as_deref(),
            self.base_url.as_deref(),
        );
        let config = settings.for_provider(provider);
        self.provider = config.provider;
        if self.model.is_none() {
            self.model.clone_from(&config.model);
        }
        if self.base_url.is_none() {
            self.base_url.clone_from(&config.base_url);
        }
        if let (Key::Usual, Some(var)) = (&self.key, &config.api_key_env) {
            self.key = Key::Env(var.clone());
        }
        let provider = self.dialect();
        if self.model.is_none() {
            self.model = Some(default_model(provider).to_string());
        }
        // Each limit: as the builder was told, else as its options say, else the config's.
        let defaults = AgentOptions::default();
        let from_options = Some(self.options.max_turns).filter(|&n| n != defaults.max_turns);
        if let Some(turns) = self.turns.or(from_options).or(config.max_turns) {
            self.options.max_turns = turns.max(1);
        }
        self.options.max_tokens = self
            .tokens
            .or(self.options.max_tokens)
            .or(config.max_tokens);
        self.options.max_cost = self.cost.or(self.options.max_cost).or(config.max_cost);
        if self.prices.is_some() {
            self.options.prices.clone_from(&self.prices);
        }
        self.options.auto_compact = self.config.settings.auto_compact;
        self.options.read_resources = self.config.settings.read_resources;
        self.options.temperature = self.temperature.or(self.options.temperature);
        if let Some(t) = self.options.temperature
            && !switchboard_providers::TEMPERATURE.contains(&t)
        {
            self.notes
                .push(format!("temperature {t} left out: it is from 0 to 2"));
            self.options.temperature = None;
        }
        if self.options.temperature.is_none() {
            self.options.temperature = config.temperature;
        }
        let effort = self
            .reasoning_effort
            .take()
            .or(self.options.reasoning_effort.take())
            .or(config.reasoning_effort)
            .filter(|e| !e.trim().is_empty());
        let model = self.model.clone().unwrap_or_default();
        self.options.reasoning_effort = match effort.map(|e| {
            let fields = switchboard_providers::reasoning_effort_fields(
                provider,
                &model,
                &e,
                self.options.max_tokens,
            );
            (e, fields)
        }) {
            Some((e, Err(why))) => {
                self.notes
                    .push(format!("reasoning effort {e:?} left out: {why}"));
                None
            }
            Some((e, Ok(_))) => {
                // Anthropic refuses a temperature when the model thinks.
                if provider == Dialect::Anthropic
                    && !matches!(e.trim(), "none" | "off" | "disabled")
                    && let Some(t) = self.options.temperature.take()
                {
                    self.notes.push(format!(
                        "temperature {t} left out: Anthropic takes none while the model thinks"
                    ));
                }
                Some(e)
            }
            None => None,
        };
    }

    /// The provider requests go to (settled: as given, else the config's, else Anthropic's).
    fn dialect(&self) -> Dialect {
        self.provider.unwrap_or(Dialect::Anthropic)
    }

    fn client_and_transcript(&mut self) -> Result<(ProviderClient, Option<Transcript>), HostError> {
        self.settle();
        let provider = self.dialect();
        let env = |v: &str| std::env::var(v).ok();
        let base_url = self.base_url.as_deref();
        let key = match &self.key {
            Key::Usual => ProviderClient::key_from_env(provider, base_url, None, &env)?,
            Key::Env(var) => ProviderClient::key_from_env(provider, base_url, Some(var), &env)?,
            Key::Given(secret) => Some(secret.clone()),
            Key::None => None,
        };
        let model = self
            .model
            .get_or_insert_with(|| default_model(provider).to_string())
            .clone();
        if self.prices.is_none()
            && let Some(path) = self.config.settings.prices.clone()
        {
            let text = std::fs::read_to_string(&path).map_err(|source| HostError::ConfigRead {
                path: path.clone(),
                source,
            })?;
            let table = switchboard_providers::count::prices::parse_prices(
                &text,
                &path.display().to_string(),
            )
            .map_err(|e| HostError::ConfigShape {
                path: path.clone(),
                message: e.message,
            })?;
            self.options.prices = Some(Arc::new(table));
        }
        if self.options.max_cost.is_some() {
            let prices = match &self.options.prices {
                Some(table) => table.as_ref(),
                None => switchboard_providers::count::prices::embedded_prices(),
            };
            if prices
                .model(&model)
                .and_then(|p| p.output_per_mtok)
                .is_none()
            {
                return Err(HostError::NoPrice { model });
            }
        }
        let client = ProviderClient::new(provider, base_url, model, key)?;
        let transcript = self
            .transcript
            .as_deref()
            .map(Transcript::create)
            .transpose()?;
        Ok((client, transcript))
    }

    /// Start the servers (unless given) and make the agent. Fails only on what
    /// [`HostBuilder::check`] checks; a server that does not come up is a note.
    pub async fn build(mut self) -> Result<Host, HostError> {
        let (client, transcript) = match self.checked.take() {
            Some(checked) => checked,
            None => self.client_and_transcript()?,
        };
        let provider = self.dialect();
        let HostBuilder {
            config,
            model,
            approver,
            options,
            wait,
            sessions,
            pins,
            notes: settling,
            ..
        } = self;
        let model = model.unwrap_or_else(|| default_model(provider).to_string());

        let mut notes: Vec<String> = config
            .disabled
            .iter()
            .map(|d| format!("server {:?} is disabled: {}", d.name, d.reason))
            .collect();
        notes.extend(settling);
        let sessions = match sessions {
            Some(s) => s,
            None => {
                // Each server's own OAuth client settings, for the sessions about to start.
                switchboard_mcp::configure_server_oauth(config.server_oauth());
                // And the folders the config offers them as roots.
                switchboard_mcp::configure_roots(config.roots());
                let s = Sessions::launch(config.servers.iter().map(|s| s.spec.clone()).collect());
                match wait {
                    Some(w) => {
                        let _ = tokio::time::timeout(w, s.settled()).await;
                    }
                    None => s.settled().await,
                }
                s
            }
        };
        // A misspelt per-tool setting would leave a tool without the approval meant for it.
        notes.extend(
            crate::config::unknown_tool_settings(&sessions.catalog(), &config.servers)
                .into_iter()
                .map(|(_, _, message)| message),
        );
        for s in sessions.statuses().iter().filter(|s| !s.state.is_ready()) {
            notes.push(if s.state == ServerState::Connecting {
                let after =
                    wait.map_or_else(String::new, |w| format!(" after {} s", w.as_secs_f64()));
                format!(
                    "server {:?} is still starting{after}; its tools join when it is ready",
                    s.name
                )
            } else {
                format!(
                    "server {:?} is not available: {}",
                    s.name,
                    s.state.describe()
                )
            });
        }

        let translate = translate_options(&config, provider, &model);
        let mut agent = Agent::new(
            sessions,
            config.servers.clone(),
            client,
            translate,
            approver,
            options,
        );
        if let Some(t) = transcript {
            agent.set_transcript(t);
        }
        if pins {
            notes.extend(agent.set_pins_from(&config));
        }
        agent.set_finder(Arc::new(Finder::locate(
            config.settings.search_model.as_deref(),
        )));
        Ok(Host { agent, notes })
    }
}
