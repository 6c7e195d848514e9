//! The agent loop: send the conversation with the tools array, read the model's reply, dispatch
//! its tool uses (concurrently, answered in one message in the model's order), send the results
//! back, until the model answers without tool uses or the turn limit is hit.
//!
//! The tools array is rebuilt only at a request boundary and only when the sessions' catalog
//! generation changed, so when nothing changed every request carries byte-identical tools and
//! system prompt (the provider's prompt cache survives); public names depend only on each tool's
//! own server and name, so unchanged tools keep their names across rebuilds.
//!
//! Pins work as in the gateway (see [`crate::pins`]): with a store set
//! ([`Agent::set_pins`]), a tool whose server changed its definition since it was pinned is left
//! out of the tools array under `pin = "enforce"`, and a call to it is answered with why. Under
//! `enforce` a tool whose pin cannot be checked (the store fails mid-run) is withheld too (fail
//! closed); under `warn` it is kept. A store that cannot be opened at all pins nothing (the run
//! carries on unpinned, said once on stderr).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use serde::Serialize;
use serde_json::{Value, json};
use switchboard_core::names::NameMap;
use switchboard_core::rent::Usd;
use switchboard_core::{Catalog, Dialect};
use switchboard_mcp::Sessions;
use switchboard_providers::count::{CountOptions, ToolText, count_tools};
use switchboard_providers::{
    DEFAULT_MAX_TOKENS, Message, Part, Reply, RequestParts, ResultPart, Role, Stop, StreamEvent,
    Usage, accepts_result_images_for, render_request,
};

use crate::client::{ProviderClient, foreign_host};
use crate::config::{Config, DEFAULT_RESULT_TOKENS, ServerConfig, ServerInstructions};
use crate::dispatch::{
    Approver, Dispatcher, Outcome, Route, ToolInput, ToolTable, ToolUse, Validators,
};
use crate::error::HostError;
use crate::finder::Finder;
use crate::history::History;
use crate::pins::{PinGate, PinStore, Withheld};
use crate::resource_tool::{self, ReadResources};
use crate::sampling::ModelSampler;
use crate::shape::{self, ShapeOptions};
use crate::tool_search::ToolSearch;
use crate::transcript::Transcript;
use crate::translate::{TranslateOptions, Translation, translate};

/// How the loop runs.
#[derive(Clone, Debug)]
pub struct AgentOptions {
    /// Model requests allowed per user message.
    pub max_turns: u32,
    /// The most tokens a reply may have, sent in each provider's own field. `None`: 4096
    /// ([`DEFAULT_MAX_TOKENS`]) to Anthropic, which requires a limit, and to an OpenAI-compatible
    /// server at another URL (llama.cpp and Ollama otherwise write until their context is
    /// full); no limit to OpenAI's and Gemini's own APIs, so the model's maximum holds there
    /// (their reasoning tokens count against it too). See [`Agent::max_tokens_sent`].
    pub max_tokens: Option<u32>,
    /// Sampling temperature sent with each request (`None`: the model's default). OpenAI's
    /// reasoning models refuse any but their default.
    pub temperature: Option<f64>,
    /// How long a reasoning model thinks (`low`, `medium`, `high`, ..., or a number of
    /// thinking tokens where the model takes a budget), sent in each API's own fields (`None`:
    /// the model's default); see [`switchboard_providers::reasoning_effort_fields`].
    pub reasoning_effort: Option<String>,
    /// Stream replies (text shows as it arrives).
    pub stream: bool,
    /// Where full texts of cut results are written.
    pub spill_dir: PathBuf,
    /// Which tools the model sees.
    pub tools: ToolMode,
    /// When a request no longer fits the model's context, compact the conversation
    /// ([`Agent::compact`]) and go on from the summary, once per user message (default false
    /// here; the config's `auto_compact`, default true, for a [`crate::Host`]).
    pub auto_compact: bool,
    /// Stop once the conversation has cost this much ([`Agent::spent`]): the tool uses of the
    /// reply that reached it are answered without being run, and the message ends with
    /// [`End::MaxCost`]; a message sent after that gets no request. The spending cannot be
    /// known for a model the price table lacks, so with one the loop stops too. `None`: no
    /// limit.
    pub max_cost: Option<Usd>,
    /// The price table [`Agent::spent`] reads (`None`: the embedded `data/prices.toml`).
    pub prices: Option<Arc<switchboard_core::rent::Prices>>,
    /// When the model gets the host's `read_resource` tool (see [`crate::resource_tool`]):
    /// by default once a tool result links a resource.
    pub read_resources: ReadResources,
}

/// Which tools the model sees.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ToolMode {
    /// Every listed tool of every server.
    #[default]
    All,
    /// The facade's `search_tools` and the tools its searches found (see [`ToolSearch`]).
    Search,
}

impl Default for AgentOptions {
    fn default() -> Self {
        Self {
            max_turns: 20,
            max_tokens: None,
            temperature: None,
            reasoning_effort: None,
            stream: false,
            spill_dir: shape::default_spill_dir(),
            tools: ToolMode::All,
            auto_compact: false,
            max_cost: None,
            prices: None,
            read_resources: ReadResources::Linked,
        }
    }
}

/// Something the caller may show while the loop runs.
#[derive(Clone, Debug)]
pub enum AgentEvent {
    /// Streamed answer text.
    TextDelta(String),
    /// A whole text part of a reply, when it was not streamed (streamed, it came as
    /// [`AgentEvent::TextDelta`]s).
    Text(String),
    /// More of the model's reasoning in words, as it streams (see
    /// [`switchboard_providers::Part::Reasoning`]).
    ReasoningDelta(String),
    /// The model's reasoning in words, whole, when the reply was not streamed.
    Reasoning(String),
    /// The model asked for a tool.
    ToolUseStarted {
        /// The public name.
        name: String,
    },
    /// A tool use was answered.
    ToolFinished(Box<Outcome>),
    /// The request no longer fit the model's context, so the conversation was compacted
    /// ([`AgentOptions::auto_compact`]); the loop goes on from the summary.
    Compacted {
        /// How many messages the summary replaced.
        messages: usize,
        /// Tool results were cut for the summary request.
        clipped: bool,
    },
    /// The provider refused the model's reasoning sent back with its tool uses (OpenAI
    /// Responses, when the organisation's responses are not stored), so the request was sent
    /// again without it, and the conversation goes on without it.
    ReasoningRefused {
        /// The provider's error.
        message: String,
    },
    /// The tools array changed before this request.
    ToolsChanged {
        /// Public names added.
        added: Vec<String>,
        /// Public names removed.
        removed: Vec<String>,
    },
}

/// Why a user message's loop ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum End {
    /// The model answered without tool uses.
    Answered,
    /// The turn limit was reached while the model still wanted tools.
    MaxTurns,
    /// The model hit `max_tokens`.
    MaxTokens,
    /// The conversation reached [`AgentOptions::max_cost`].
    MaxCost,
    /// The model refused.
    Refusal,
}

/// One model request and what came of it.
#[derive(Clone, Debug, Serialize)]
pub struct TurnRecord {
    /// 1-based, across the whole conversation.
    pub turn: u32,
    /// The reply's text.
    pub text: String,
    /// The reply's reasoning in words, when the provider showed any.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub reasoning: String,
    /// Why the model stopped.
    pub stop: Stop,
    /// Tokens of this request.
    pub usage: Usage,
    /// Tool uses answered after this reply.
    pub tool_calls: Vec<Outcome>,
    /// The tools array changed before this request.
    pub tools_changed: bool,
}

/// The result of one user message.
#[derive(Clone, Debug, Serialize)]
pub struct Answer {
    /// The last reply's text.
    pub text: String,
    /// Why it ended.
    pub end: End,
}

/// What [`Agent::compact`] did.
#[derive(Clone, Debug, Serialize)]
pub struct Compacted {
    /// How many messages the summary replaced.
    pub messages: usize,
    /// The summary the model wrote (now the conversation's first message, after a line
    /// saying what it is).
    pub summary: String,
    /// The summary requests' usage: with one request, its input tokens are about what the
    /// conversation took.
    pub usage: Usage,
    /// Tool results and the strings in tool uses' arguments were cut to
    /// [`COMPACT_RESULT_CHARS`] characters for the summary request, because the whole
    /// conversation no longer fit the model's context.
    pub clipped: bool,
    /// How many earlier parts of the conversation were summarized on their own first,
    /// because even cut it did not fit whole (0 when it did).
    pub parts: u32,
}

/// What a model is asked when the conversation is compacted.
const COMPACT_REQUEST: &str = "Summarize this conversation so far so that it can go on from \
the summary alone: the earlier messages will be dropped. Keep what the user asked for and still \
wants; what was done (which tools were called, and what they returned that matters: names, ids, \
numbers, paths, errors); decisions made; what is left to do; and every fact needed to go on. \
Write it as notes to yourself. Do not call any tool: answer with the summary only.";

/// The line before a summary in the compacted conversation.
pub const COMPACT_PREAMBLE: &str =
    "(The conversation so far was summarized to save context. The summary follows; go on from it.)";

/// How long a tool result may be in a summary request that did not fit whole.
pub const COMPACT_RESULT_CHARS: usize = 2000;

/// The most requests one compaction makes (a conversation far over the context is summarized
/// part by part).
const COMPACT_MAX_REQUESTS: u32 = 12;

/// One build of the tools array.
struct ToolsArray {
    /// (catalog generation, tools loaded by search, pin store version, reconfigurations,
    /// whether the host's `read_resource` tool is wanted) it was built for.
    key: (u64, usize, i64, u64, bool),
    /// The tools, names and system prompt.
    translation: Translation,
    /// Its rent in tokens per request, and how that was counted.
    rent: (u64, String),
}

/// A conversation with a model over the configured servers' tools.
pub struct Agent {
    sessions: Sessions,
    servers: Vec<ServerConfig>,
    client: ProviderClient,
    opts: AgentOptions,
    approver: Arc<dyn Approver>,
    validators: Validators,
    translate_opts: TranslateOptions,
    table: ToolTable,
    /// The tools array as last built.
    tools: Option<ToolsArray>,
    search: Option<ToolSearch>,
    transcript: Option<Transcript>,
    pins: PinGate,
    /// This conversation's `prompt_cache_key` (see [`cache_key`]).
    cache_key: String,
    /// The pin store comes from the config ([`Agent::set_pins_from`]), so a reconfiguration
    /// may open another.
    pins_from_config: bool,
    /// The catalog without withheld tools, for (catalog generation, pin store version).
    pinned: Option<((u64, i64), Catalog, Withheld)>,
    /// How many times [`Agent::reconfigure`] changed the servers' settings.
    reconfigured: u64,
    /// The provider refused the model's reasoning sent back (OpenAI Responses without stored
    /// responses cannot look its items up), so requests go without it from then on.
    reasoning_refused: bool,
    /// Tool names added and removed by rebuilds of the tools array not yet announced (a
    /// rebuild for `/tools` or a compaction is announced at the next message's request).
    unannounced: Option<(Vec<String>, Vec<String>)>,
    /// The resources tool results linked so far: URI → the server whose result it was.
    linked: BTreeMap<String, String>,
    /// The tools array as last built has the host's `read_resource` tool.
    reads_resources: bool,
    /// The conversation so far.
    pub messages: Vec<Message>,
    /// Every model request so far.
    pub turns: Vec<TurnRecord>,
    /// Tokens used so far.
    pub usage: Usage,
    /// The same, by the model that used them (a `/model` switch, a server's sampling requests
    /// answered by the model its entry names), so that each is priced as its own.
    usage_by_model: BTreeMap<String, Usage>,
}

/// Whether requests to `base_url` go to a server that speaks the dialect but is not its
/// provider's (Ollama, llama.cpp, vLLM, a proxy): such servers read `max_tokens`, not OpenAI's
/// `max_completion_tokens`. Azure OpenAI is OpenAI's API on Microsoft's hosts (its reasoning
/// models refuse `max_tokens` as OpenAI's do), so it counts as the provider's own.
pub fn compatible_server(dialect: Dialect, base_url: &str) -> bool {
    foreign_host(dialect, base_url).is_some_and(|host| !host.ends_with(".openai.azure.com"))
}

/// The output limit requests to `base_url` carry for a `max_tokens` setting (see
/// [`AgentOptions::max_tokens`]); `None` when the provider's own limit holds.
pub fn max_tokens_sent(dialect: Dialect, base_url: &str, max_tokens: Option<u32>) -> Option<u32> {
    max_tokens.or_else(|| {
        (dialect == Dialect::Anthropic || compatible_server(dialect, base_url))
            .then_some(DEFAULT_MAX_TOKENS)
    })
}

/// The `prompt_cache_key` a request to `base_url` carries: the conversation's `key`, to
/// OpenAI's own API only (so that its requests reach the cache the one before wrote), and only
/// with prompt caching on. A server that speaks OpenAI's format elsewhere (Azure OpenAI
/// included, by API version) may refuse a field it does not know: it gets none.
pub fn cache_key(
    dialect: Dialect,
    base_url: &str,
    prompt_cache: bool,
    key: &str,
) -> Option<String> {
    let openai = matches!(dialect, Dialect::OpenAiChat | Dialect::OpenAiResponses);
    (openai && prompt_cache && foreign_host(dialect, base_url).is_none()).then(|| key.to_string())
}

/// A key for one conversation's requests: random, so that two conversations of the same tools
/// do not share a cache route.
fn conversation_key() -> String {
    use std::hash::BuildHasher as _;
    let seed = (
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default(),
    );
    format!(
        "switchboard-{:016x}",
        std::collections::hash_map::RandomState::new().hash_one(seed)
    )
}

/// Translate options for a config: its servers, aliases, filters and prompt settings (the
/// user's system prompt; today's date, read from the clock, when `date` is on).
pub fn translate_options(config: &Config, dialect: Dialect, model: &str) -> TranslateOptions {
    let mut opts = TranslateOptions::new(dialect);
    opts.model = Some(model.to_string());
    opts.system = config.settings.system_prompt.clone();
    opts.instructions = config.settings.instructions;
    opts.prompt_cache = config.settings.prompt_cache;
    if config.settings.date {
        opts.date = Some(switchboard_core::time::date(std::time::SystemTime::now()));
    }
    opts.servers = Some(
        config
            .servers
            .iter()
            .map(|s| s.name().to_string())
            .collect(),
    );
    for s in &config.servers {
        if let Some(a) = &s.alias {
            opts.aliases.insert(s.name().to_string(), a.clone());
        }
        opts.filters.insert(s.name().to_string(), s.filter.clone());
        if s.instructions != ServerInstructions::Server {
            opts.server_instructions
                .insert(s.name().to_string(), s.instructions.clone());
        }
    }
    opts.chosen_names = crate::config::chosen_names(&config.servers);
    opts
}

impl Agent {
    /// A new conversation. `translate_opts` decides which tools the model sees (see
    /// [`translate_options`]).
    pub fn new(
        sessions: Sessions,
        servers: Vec<ServerConfig>,
        client: ProviderClient,
        translate_opts: TranslateOptions,
        approver: Arc<dyn Approver>,
        opts: AgentOptions,
    ) -> Self {
        let search = (opts.tools == ToolMode::Search).then(ToolSearch::default);
        Self {
            sessions,
            servers,
            client,
            search,
            opts,
            approver,
            validators: Validators::default(),
            translate_opts,
            table: ToolTable::default(),
            tools: None,
            transcript: None,
            pins: PinGate::default(),
            cache_key: conversation_key(),
            pins_from_config: false,
            pinned: None,
            reconfigured: 0,
            reasoning_refused: false,
            unannounced: None,
            linked: BTreeMap::new(),
            reads_resources: false,
            messages: Vec::new(),
            turns: Vec::new(),
            usage: Usage::default(),
            usage_by_model: BTreeMap::new(),
        }
    }

    /// Write every request and response to this transcript.
    pub fn set_transcript(&mut self, t: Transcript) {
        self.transcript = Some(t);
    }

    /// Rank `--tools search` with this finder (the default looks for the model through
    /// `$SWITCHBOARD_MODEL_DIR` and the default location, not the config).
    pub fn set_finder(&mut self, finder: Arc<Finder>) {
        if let Some(search) = &mut self.search {
            *search = ToolSearch::new(finder);
        }
    }

    /// Check tools against this pin store (per server `pin = "enforce" | "warn" | "off"`).
    /// Without one (the default) nothing is pinned.
    pub fn set_pins(&mut self, store: Option<Arc<PinStore>>) {
        self.pins = PinGate::new(store);
        self.pinned = None;
    }

    /// Check tools against the pin store `config` names (`[settings] pin_store`, else the user
    /// data folder's), opened only when one of its servers pins; and open it again as
    /// [`Agent::reconfigure`] takes a config that needs it or names another. Returns a note
    /// when the store cannot be opened (nothing is pinned then).
    pub fn set_pins_from(&mut self, config: &Config) -> Option<String> {
        self.pins_from_config = true;
        let (store, note) = crate::pins::open_for(config);
        self.set_pins(store);
        note
    }

    /// The catalog as the model may see it (changed tools withheld under `pin = "enforce"`),
    /// and what was withheld. Re-checked when the catalog or the pin store changes.
    fn pinned_catalog(&mut self) -> (Catalog, Withheld) {
        let (catalog, withheld) = self.pinned_ref();
        (catalog.clone(), withheld.clone())
    }

    /// [`Agent::pinned_catalog`] without copying it.
    fn pinned_ref(&mut self) -> (&Catalog, &Withheld) {
        let key = (self.sessions.generation(), self.pins.version());
        if self.pinned.as_ref().is_some_and(|(k, ..)| *k != key) {
            self.pinned = None;
        }
        let (pins, sessions, servers) = (&mut self.pins, &self.sessions, &self.servers);
        let (_, catalog, withheld) = self.pinned.get_or_insert_with(|| {
            let (catalog, withheld) = pins.apply(sessions.catalog(), servers);
            (
                key,
                crate::config::with_descriptions(catalog, servers),
                withheld,
            )
        });
        (catalog, withheld)
    }

    /// Serve `config`'s servers from now on (chat's `/reload`): each server's settings (tool
    /// lists, aliases, names, approvals, descriptions, instructions), the roots offered and
    /// the servers' OAuth clients are the config's, and the sessions are reconfigured as
    /// [`Sessions::reconfigure`] says (a new server starts, a removed one stops, a changed or
    /// failed one starts again, the rest keep running). The model, the system prompt and the
    /// conversation stay. The tools array follows at the next request; returns what the
    /// sessions did, at once (new servers come up meanwhile).
    pub async fn reconfigure(&mut self, config: &Config) -> switchboard_mcp::Reconfigured {
        let model = self.client.model.clone();
        let fresh = translate_options(config, self.translate_opts.dialect, &model);
        let t = &mut self.translate_opts;
        t.aliases = fresh.aliases;
        t.filters = fresh.filters;
        t.servers = fresh.servers;
        t.server_instructions = fresh.server_instructions;
        t.chosen_names = fresh.chosen_names;
        self.servers = config.servers.clone();
        switchboard_mcp::configure_server_oauth(config.server_oauth());
        // The roots first: servers that start now get the new ones at their handshake.
        self.sessions.set_roots(config.roots()).await;
        let outcome = self
            .sessions
            .reconfigure(config.servers.iter().map(|s| s.spec.clone()).collect());
        self.reconfigured += 1;
        self.pinned = None;
        if self.pins_from_config {
            // A config that now pins, or pins in another store: open the one it needs.
            let wanted = config
                .servers
                .iter()
                .any(|s| s.pin != crate::config::PinMode::Off)
                .then(|| crate::pins::store_path(None, &config.settings).ok())
                .flatten();
            if wanted.as_deref() != self.pins.path()
                && let Some(note) = self.set_pins_from(config)
            {
                tracing::warn!("{note}");
            }
        }
        outcome
    }

    /// The rent of the tools array as last sent: tokens per request and how they were counted.
    pub fn rent(&self) -> Option<(u64, &str)> {
        self.tools.as_ref().map(|a| (a.rent.0, a.rent.1.as_str()))
    }

    /// The provider client.
    pub fn client(&self) -> &ProviderClient {
        &self.client
    }

    /// Talk to `model` of the same provider from the next request on (chat's `/model`). The
    /// conversation goes on, made ready for the new model as a saved one is
    /// ([`History::messages_for`]: new tool-use ids, the old model's reasoning and thought
    /// signatures left out), and the tools array is built again for it.
    pub fn set_model(&mut self, model: &str) {
        if model == self.client.model {
            return;
        }
        let history = self.history();
        self.messages = history.messages_for(self.client.dialect, model);
        self.client.model = model.to_string();
        self.translate_opts.model = Some(model.to_string());
        self.reconfigured += 1;
    }

    /// Another provider, or another server of this one, from the next request on (chat's
    /// `/model PROVIDER:NAME [URL]`; see [`ProviderClient::switched`]): the conversation is made
    /// ready for it as a saved one taken up with another provider is
    /// ([`History::messages_for`]: new tool-use ids, the old model's reasoning left out), and the
    /// tools array is built again for its API (names, schemas and limits are each API's own).
    pub fn set_client(&mut self, client: ProviderClient) {
        let history = self.history();
        self.messages = history.messages_for(client.dialect, &client.model);
        self.translate_opts.dialect = client.dialect;
        self.translate_opts.model = Some(client.model.clone());
        self.client = client;
        self.reasoning_refused = false;
        self.reconfigured += 1;
    }

    /// How this agent's reasoning effort reaches its model now, in the API's fields, or why it
    /// is left out; `None` without one (see [`switchboard_providers::reasoning_effort_fields`]).
    pub fn reasoning_effort_fields(&self) -> Option<Result<String, String>> {
        let effort = self.opts.reasoning_effort.as_deref()?;
        Some(switchboard_providers::reasoning_effort_fields(
            self.client.dialect,
            &self.client.model,
            effort,
            self.opts.max_tokens,
        ))
    }

    /// The sessions.
    pub fn sessions(&self) -> &Sessions {
        &self.sessions
    }

    /// The tools array as last sent (or as it would be sent now, before the first request).
    pub fn translation(&mut self) -> &Translation {
        self.refresh_tools(0);
        match &self.tools {
            Some(a) => &a.translation,
            None => unreachable_translation(),
        }
    }

    /// Send a user message (text and, e.g., attached resources) and run the loop until the
    /// model answers or the turn limit is hit. Errors are provider errors after retries and
    /// transcript write failures; tool failures are never errors.
    pub async fn send(
        &mut self,
        parts: Vec<Part>,
        on_event: &mut (dyn FnMut(AgentEvent) + Send),
    ) -> Result<Answer, HostError> {
        if self.over_budget() {
            return Ok(Answer {
                text: String::new(),
                end: End::MaxCost,
            });
        }
        self.push_user(parts);
        let mut turns_here = 0u32;
        let mut compacted = false;
        let mut repeats = Repeats::default();
        loop {
            turns_here += 1;
            let turn = u32::try_from(self.turns.len()).unwrap_or(u32::MAX) + 1;
            self.refresh_tools(turn);
            let changed = self.unannounced.take();
            if let Some((added, removed)) = changed.clone() {
                on_event(AgentEvent::ToolsChanged { added, removed });
            }
            let body = self.request_body();
            self.log_request(turn, &body)?;
            let sent = if self.opts.stream {
                let mut forward = |e: &StreamEvent| match e {
                    StreamEvent::TextDelta(t) => on_event(AgentEvent::TextDelta(t.clone())),
                    StreamEvent::ReasoningDelta(t) => {
                        on_event(AgentEvent::ReasoningDelta(t.clone()))
                    }
                    StreamEvent::ToolUseStarted { name, .. } => {
                        on_event(AgentEvent::ToolUseStarted { name: name.clone() })
                    }
                };
                self.client.send_streaming(&body, &mut forward).await
            } else {
                self.client.send(&body).await
            };
            let response = match sent {
                Ok(r) => r,
                // The model's reasoning items went back and the API could not take them (an
                // organisation whose responses are not stored; an item gone from storage):
                // the same request again without them, and every request after it.
                Err(e)
                    if !self.reasoning_refused
                        && switchboard_providers::sends_reasoning_items(
                            self.client.dialect,
                            &body,
                        )
                        && reasoning_refused(&e) =>
                {
                    self.log("error", json!({"turn": turn, "message": e.to_string()}))?;
                    self.reasoning_refused = true;
                    on_event(AgentEvent::ReasoningRefused {
                        message: e.to_string(),
                    });
                    turns_here -= 1;
                    continue;
                }
                // A conversation of more than one exchange that no longer fits: compacted,
                // once, and the loop goes on from the summary.
                Err(e)
                    if self.opts.auto_compact
                        && !compacted
                        && overflowed(&e)
                        && self.messages.len() > 2 =>
                {
                    self.log("error", json!({"turn": turn, "message": e.to_string()}))?;
                    compacted = true;
                    match self.compact(None).await {
                        Ok(Some(c)) => {
                            on_event(AgentEvent::Compacted {
                                messages: c.messages,
                                clipped: c.clipped,
                            });
                            continue;
                        }
                        Ok(None) => return Err(e),
                        Err(failed) => {
                            return Err(HostError::Compaction {
                                message: format!(
                                    "the request did not fit the model's context ({e}), and compacting it failed: {failed}"
                                ),
                            });
                        }
                    }
                }
                Err(mut e) => {
                    if let HostError::ProviderHttp {
                        context_overflow: true,
                        hint,
                        ..
                    } = &mut e
                    {
                        *hint = self.overflow_hint();
                    }
                    self.log("error", json!({"turn": turn, "message": e.to_string()}))?;
                    return Err(e);
                }
            };
            self.log(
                "response",
                json!({"turn": turn, "attempts": response.attempts, "body": response.body, "reply": response.reply}),
            )?;
            let reply = response.reply;
            let model = self.client.model.clone();
            self.count_usage(&model, &reply.usage);
            let text = reply.text();
            if !self.opts.stream {
                for p in &reply.parts {
                    match p {
                        Part::Text(t) => on_event(AgentEvent::Text(t.clone())),
                        Part::Reasoning { text, .. } if !text.is_empty() => {
                            on_event(AgentEvent::Reasoning(text.clone()))
                        }
                        Part::ToolUse { name, .. } => {
                            on_event(AgentEvent::ToolUseStarted { name: name.clone() })
                        }
                        _ => {}
                    }
                }
            }
            let uses: Vec<ToolUse> = reply
                .parts
                .iter()
                .filter_map(|p| match p {
                    Part::ToolUse { id, name, input } => Some(ToolUse {
                        id: id.clone(),
                        name: name.clone(),
                        input: match input {
                            Value::String(raw) => ToolInput::Unparsed {
                                raw: raw.clone(),
                                error: "the arguments are not a JSON object".into(),
                            },
                            other => ToolInput::Json(other.clone()),
                        },
                    }),
                    _ => None,
                })
                .collect();
            let mut assistant = reply.parts.clone();
            if assistant
                .iter()
                .all(|p| matches!(p, Part::Reasoning { .. }))
            {
                // An empty assistant message is refused by some providers.
                assistant.push(Part::Text("(no answer)".into()));
            }
            self.messages.push(Message::assistant(assistant));
            let mut record = TurnRecord {
                turn,
                text: text.clone(),
                reasoning: reply
                    .parts
                    .iter()
                    .filter_map(|p| match p {
                        Part::Reasoning { text, .. } => Some(text.as_str()),
                        _ => None,
                    })
                    .collect::<Vec<_>>()
                    .join("\n"),
                stop: reply.stop.clone(),
                usage: reply.usage.clone(),
                tool_calls: Vec::new(),
                tools_changed: changed.is_some(),
            };
            if uses.is_empty() {
                self.turns.push(record);
                let end = match reply.stop {
                    Stop::MaxTokens => End::MaxTokens,
                    Stop::Refusal => End::Refusal,
                    _ => End::Answered,
                };
                return Ok(Answer { text, end });
            }
            let over_budget = self.over_budget();
            let outcomes = if over_budget {
                uses.iter()
                    .map(|u| not_run(u, COST_LIMIT_REACHED))
                    .collect()
            } else if turns_here >= self.opts.max_turns {
                // Answer every use without calling, so the conversation stays valid.
                uses.iter()
                    .map(|u| not_run(u, TURN_LIMIT_REACHED))
                    .collect()
            } else {
                // A call that already gave the same result SAME_RESULT_LIMIT times running is
                // not made again: a model stuck in a loop is told so instead of spending the
                // turn limit.
                let stuck: Vec<bool> = uses.iter().map(|u| repeats.stuck(u)).collect();
                let to_run: Vec<ToolUse> = uses
                    .iter()
                    .zip(&stuck)
                    .filter(|(_, stuck)| !**stuck)
                    .map(|(u, _)| u.clone())
                    .collect();
                let mut ran = self.dispatch(&to_run).await.into_iter();
                let outcomes: Vec<Outcome> = uses
                    .iter()
                    .zip(&stuck)
                    .map(
                        |(u, stuck)| match (stuck, (!stuck).then(|| ran.next()).flatten()) {
                            (false, Some(o)) => o,
                            _ => not_run(u, REPEATED_CALL),
                        },
                    )
                    .collect();
                for (u, o) in uses.iter().zip(&outcomes) {
                    repeats.saw(u, o);
                }
                outcomes
            };
            for o in &outcomes {
                self.log("tool_call", json!({"turn": turn, "outcome": o}))?;
                on_event(AgentEvent::ToolFinished(Box::new(o.clone())));
            }
            let images = accepts_result_images_for(self.client.dialect, &self.client.model);
            let results = outcomes.iter().map(|o| result_part(o, images)).collect();
            self.messages.push(Message::tool_results(results));
            record.tool_calls = outcomes;
            self.turns.push(record);
            if over_budget {
                return Ok(Answer {
                    text,
                    end: End::MaxCost,
                });
            }
            if turns_here >= self.opts.max_turns {
                return Ok(Answer {
                    text,
                    end: End::MaxTurns,
                });
            }
        }
    }

    /// What the conversation's tokens have cost so far, at the list prices of the model in
    /// use (`data/prices.toml`; see [`switchboard_core::rent::usage_cost`]), when the table has
    /// its input and output prices.
    pub fn spent(&self) -> Option<Usd> {
        // No tokens yet: nothing spent, at whatever price.
        self.price()?;
        self.costs()
            .into_iter()
            .try_fold(Usd::ZERO, |sum, (_, _, cost)| {
                Some(sum.plus(cost?.total()?))
            })
    }

    /// What each model's tokens cost ([`Agent::usage_by_model`]), at its own prices: the
    /// model, its tokens, and their cost (`None` for a model the price table lacks).
    pub fn costs(&self) -> Vec<(String, Usage, Option<switchboard_core::rent::UsageCost>)> {
        self.usage_by_model
            .iter()
            .map(|(model, u)| {
                let cost = self.price_of(model).map(|p| {
                    switchboard_core::rent::usage_cost(
                        &p,
                        u.input_tokens,
                        u.cache_read_tokens.unwrap_or(0),
                        u.cache_write_tokens.unwrap_or(0),
                        u.output_tokens,
                    )
                });
                (model.clone(), u.clone(), cost)
            })
            .collect()
    }

    /// The tokens used so far, by the model that used them.
    pub fn usage_by_model(&self) -> &BTreeMap<String, Usage> {
        &self.usage_by_model
    }

    /// The price table's entry for the model in use ([`AgentOptions::prices`]).
    pub fn price(&self) -> Option<switchboard_core::rent::ModelPrice> {
        self.price_of(&self.client.model)
    }

    /// The price table's entry for `model`.
    pub fn price_of(&self, model: &str) -> Option<switchboard_core::rent::ModelPrice> {
        match &self.opts.prices {
            Some(table) => table.model(model).cloned(),
            None => switchboard_providers::count::prices::embedded_prices()
                .model(model)
                .cloned(),
        }
    }

    /// Count `u` as used by `model`.
    fn count_usage(&mut self, model: &str, u: &Usage) {
        add_usage(&mut self.usage, u);
        add_usage(self.usage_by_model.entry(model.to_string()).or_default(), u);
    }

    /// The cost limit ([`AgentOptions::max_cost`]), if any.
    pub fn max_cost(&self) -> Option<Usd> {
        self.opts.max_cost
    }

    /// The cost limit is reached, or cannot be kept (no price for the model).
    fn over_budget(&self) -> bool {
        self.opts
            .max_cost
            .is_some_and(|max| self.spent().is_none_or(|spent| spent >= max))
    }

    /// Take the last exchange out of the conversation (chat's `/undo` and `/retry`): the last
    /// message the user wrote and everything after it (answers, tool uses, results). What
    /// shared that message and is not the user's (the results answering the turn before, a
    /// compaction's summary) stays. Returns the parts the user wrote; `None` when there is no
    /// such message. Tokens spent stay counted.
    pub fn undo(&mut self) -> Option<Vec<Part>> {
        let not_written = |p: &Part| match p {
            Part::ToolResult { .. } => true,
            Part::Text(t) => t.starts_with(COMPACT_PREAMBLE),
            _ => false,
        };
        let at = self
            .messages
            .iter()
            .rposition(|m| m.role == Role::User && m.parts.iter().any(|p| !not_written(p)))?;
        let mut first = self.messages.split_off(at).swap_remove(0);
        let from = first
            .parts
            .iter()
            .rposition(not_written)
            .map_or(0, |i| i + 1);
        let written = first.parts.split_off(from);
        if !first.parts.is_empty() {
            self.messages.push(first);
        }
        Some(written)
    }

    /// The conversation so far, to save ([`History::write`]) and take up later.
    pub fn history(&self) -> History {
        History {
            switchboard_conversation: crate::history::FORMAT,
            provider: self.client.dialect,
            model: self.client.model.clone(),
            found_tools: self
                .search
                .as_ref()
                .map(ToolSearch::found)
                .unwrap_or_default(),
            linked_resources: self.linked.clone(),
            messages: self.messages.clone(),
        }
    }

    /// Take up a saved conversation in place of this one's messages: with new tool-use ids
    /// when this agent's provider or model is not the one that wrote it (see
    /// [`History::messages_for`]), the tools search mode had found loaded again, and tool uses
    /// it ended on without results answered as interrupted.
    pub fn resume(&mut self, saved: &History) {
        self.messages = saved.messages_for(self.client.dialect, &self.client.model);
        if let Some(search) = &mut self.search {
            search.load_found(saved.found_tools.iter().cloned());
        }
        self.linked.extend(saved.linked_resources.clone());
        self.interrupt();
    }

    /// After a [`Agent::send`] future was dropped (the user interrupted): answer the tool uses
    /// of the last assistant message that have no results yet, so the conversation stays valid
    /// for the next request. Calls that were in flight were cancelled on the wire when the
    /// future was dropped.
    pub fn interrupt(&mut self) {
        let Some(last) = self.messages.last() else {
            return;
        };
        if last.role != Role::Assistant {
            return;
        }
        let results: Vec<Part> = last
            .parts
            .iter()
            .filter_map(|p| match p {
                Part::ToolUse { id, name, .. } => Some(Part::ToolResult {
                    id: id.clone(),
                    name: name.clone(),
                    content: vec![ResultPart::Text(
                        "The user interrupted this call; it may or may not have taken effect."
                            .into(),
                    )],
                    is_error: true,
                }),
                _ => None,
            })
            .collect();
        if !results.is_empty() {
            self.messages.push(Message::tool_results(results));
        }
    }

    /// Append user parts; after tool results (a turn limit) they join that user message.
    fn push_user(&mut self, parts: Vec<Part>) {
        match self.messages.last_mut() {
            Some(last) if last.role == Role::User => last.parts.extend(parts),
            _ => self.messages.push(Message {
                role: Role::User,
                parts,
            }),
        }
    }

    async fn dispatch(&mut self, uses: &[ToolUse]) -> Vec<Outcome> {
        let (catalog, withheld) = self.pinned_catalog();
        // Search mode: `search_tools` is answered here; the rest go through the dispatcher,
        // concurrently; the outcomes are put back in the model's order.
        let search_mode = self.search.is_some();
        let is_search =
            |u: &ToolUse| search_mode && u.name == switchboard_core::facade::SEARCH_TOOL;
        // So is the host's `read_resource`, when it was sent.
        let reads = self.reads_resources;
        let is_read = |u: &ToolUse| reads && u.name == resource_tool::READ_RESOURCE;
        let others: Vec<ToolUse> = uses
            .iter()
            .filter(|u| !is_search(u) && !is_read(u))
            .cloned()
            .collect();
        let mut searched = Vec::new();
        if let Some(search) = &mut self.search {
            search.refresh(&catalog, &self.translate_opts).await;
            for u in uses.iter().filter(|u| is_search(u)) {
                searched.push(search.answer(&catalog, u));
            }
        }
        let images = accepts_result_images_for(self.client.dialect, &self.client.model);
        let read_opts = ShapeOptions {
            spill_dir: self.opts.spill_dir.clone(),
            ..ShapeOptions::new(images, DEFAULT_RESULT_TOKENS, resource_tool::READ_RESOURCE)
        };
        let mut read = Vec::new();
        for u in uses.iter().filter(|u| is_read(u)) {
            read.push(
                resource_tool::answer(
                    &self.sessions,
                    &catalog,
                    self.translate_opts.servers.as_ref(),
                    &self.linked,
                    u,
                    &read_opts,
                )
                .await,
            );
        }
        let sampler = ModelSampler::new(&self.client, self.translate_opts.gemini_openapi);
        let dispatcher = Dispatcher {
            table: &self.table,
            catalog: &catalog,
            withheld: &withheld,
            servers: &self.servers,
            caller: &self.sessions,
            approver: self.approver.as_ref(),
            validators: &self.validators,
            images: accepts_result_images_for(self.client.dialect, &self.client.model),
            spill_dir: self.opts.spill_dir.clone(),
            sampler: Some(&sampler),
        };
        let mut dispatched = dispatcher.dispatch_all(&others).await.into_iter();
        drop(dispatcher);
        // What the servers' sampling requests cost is the session's too, and the transcript
        // holds them as it holds the session's own requests.
        let (sampled, exchanges) = sampler.into_parts();
        for (model, usage) in &sampled {
            self.count_usage(model, usage);
        }
        for exchange in exchanges {
            if let Err(e) = self.log("sampling", exchange) {
                tracing::warn!("the transcript was not written: {e}");
            }
        }
        let mut searched = searched.into_iter();
        let mut read = read.into_iter();
        let outcomes: Vec<Outcome> = uses
            .iter()
            .filter_map(|u| {
                if is_search(u) {
                    searched.next()
                } else if is_read(u) {
                    read.next()
                } else {
                    dispatched.next()
                }
            })
            .collect();
        // The resources the results link, and whose results they were, for `read_resource`.
        for o in &outcomes {
            if let Some(server) = &o.server {
                for uri in &o.result.links {
                    self.linked.insert(uri.clone(), server.clone());
                }
            }
        }
        outcomes
    }

    /// Rebuild the tools array when the catalog generation moved. The names added and removed
    /// when the array changed (not on the first build) join those not yet announced.
    fn refresh_tools(&mut self, turn: u32) {
        let generation = self.sessions.generation();
        let loaded = self
            .search
            .as_ref()
            .map_or(0, |s| s.loaded().values().map(Vec::len).sum());
        let read = match self.opts.read_resources {
            ReadResources::Never => false,
            ReadResources::Always => {
                let only = self.translate_opts.servers.clone();
                resource_tool::offered(self.pinned_ref().0, only.as_ref())
            }
            ReadResources::Linked => !self.linked.is_empty(),
        };
        let key = (
            generation,
            loaded,
            self.pins.version(),
            self.reconfigured,
            read,
        );
        if let Some(a) = &self.tools
            && a.key == key
        {
            return;
        }
        let (catalog, _) = self.pinned_catalog();
        let mut t = match &self.search {
            None => translate(&catalog, &self.translate_opts),
            Some(search) => {
                let mut t = translate(
                    &search.loaded_catalog(&catalog, &self.translate_opts),
                    &self.translate_opts,
                );
                if let Some(spec) = ToolSearch::search_spec(&self.translate_opts) {
                    t.tools.insert(0, spec);
                }
                t
            }
        };
        // The host's own tool goes last, so the servers' tools keep their place in the
        // cached prefix; a server tool of that name (one with `alias = ""`) keeps it.
        self.reads_resources = false;
        if read {
            if t.tools
                .iter()
                .any(|s| s.name == resource_tool::READ_RESOURCE)
            {
                tracing::warn!(
                    "a server's tool is named {}, so switchboard's own tool of that name is not sent",
                    resource_tool::READ_RESOURCE
                );
            } else if let Some(spec) =
                resource_tool::spec(self.client.dialect, self.translate_opts.gemini_openapi)
            {
                t.tools.push(spec);
                self.reads_resources = true;
            }
        }
        for e in &t.excluded {
            tracing::warn!(server = %e.server, tool = %e.tool, "tool left out of the request: {}", e.reason);
        }
        // The limits are the provider's own API's; a server speaking its wire format at another
        // URL may have none (llama.cpp, Ollama) or the same (Azure OpenAI).
        let whose = if self.compatible_server() {
            "a limit of the provider's own API, which this server may not have"
        } else {
            "the request breaks a provider limit"
        };
        for v in &t.violations {
            tracing::warn!(
                "{whose}: {} ({} > {}): {}",
                v.limit,
                v.count,
                v.max,
                v.remedy
            );
        }
        let texts: Vec<ToolText<'_>> = t
            .tools
            .iter()
            .map(|s| ToolText::new(&s.name, s.description.as_deref().unwrap_or(""), &s.schema))
            .collect();
        let count_opts = CountOptions {
            system_message: !t.system.is_empty(),
            ..CountOptions::default()
        };
        let counted = count_tools(self.client.dialect, &self.client.model, &texts, &count_opts);
        let rent = (counted.total, counted.method.to_string());
        let changed = match &self.tools {
            None => None,
            Some(a) if a.translation.tools == t.tools && a.translation.system == t.system => None,
            Some(ToolsArray {
                translation: old, ..
            }) => {
                let before: std::collections::BTreeSet<&str> =
                    old.names.iter().map(|n| n.public.as_str()).collect();
                let after: std::collections::BTreeSet<&str> =
                    t.names.iter().map(|n| n.public.as_str()).collect();
                Some((
                    after.difference(&before).map(|s| s.to_string()).collect(),
                    before.difference(&after).map(|s| s.to_string()).collect(),
                ))
            }
        };
        if let Some((added, removed)) = &changed {
            let _ = self.log(
                "tools_changed",
                json!({"turn": turn, "generation": generation, "added": added, "removed": removed}),
            );
        }
        if let Some(now) = changed {
            self.unannounced = Some(match self.unannounced.take() {
                None => now,
                Some(before) => joined_changes(before, now),
            });
        }
        self.table.replace(&t);
        // A withheld tool keeps its public name (names depend only on server and tool), so a
        // model that knows it from earlier gets the pin explanation, not "unknown tool".
        let (_, withheld) = self.pinned_catalog();
        let mut map = NameMap::build(
            self.client.dialect,
            withheld.tools(),
            &self.translate_opts.aliases,
        );
        map.with_chosen(self.client.dialect, &self.translate_opts.chosen_names);
        for (server, tool) in withheld.tools() {
            if let Some(public) = map.public(server, tool) {
                let route = Route {
                    server: server.to_string(),
                    tool: tool.to_string(),
                    strict: false,
                    wrapped_root: false,
                };
                self.table.withhold(public, route);
            }
        }
        self.tools = Some(ToolsArray {
            key,
            translation: t,
            rent,
        });
    }

    /// What to do when the request did not fit the model's context: with every tool sent, how
    /// much of it the tools array takes and how to send fewer; with a conversation of more than
    /// one exchange, compacting it.
    fn overflow_hint(&self) -> Option<String> {
        let tools = self.tools.as_ref().and_then(|array| {
            let (tokens, _) = &array.rent;
            let count = array.translation.tools.len();
            (self.opts.tools == ToolMode::All && count > 0).then(|| {
                format!(
                    "the tools array alone is about {tokens} tokens, for {count} tools: tool \
                     search (--tools search) sends one search tool in their place, or a profile \
                     or allow/deny lists send fewer"
                )
            })
        });
        let compact = (self.messages.len() > 2)
            .then_some("compacting the conversation (/compact in chat) replaces it with a summary");
        match (tools, compact) {
            (Some(t), Some(c)) => Some(format!("{t}; {c}")),
            (t, c) => t.or(c.map(String::from)),
        }
    }

    /// Replace the conversation with a summary the model writes of it (chat's `/compact`),
    /// to go on when it no longer fits the model's context or costs too much to send. The
    /// request is the conversation as it stands, tools array and all (so a prompt cache still
    /// serves its prefix), and a last user message asking for the summary, with `focus` (what
    /// to keep above all) when given. A conversation too long to be sent whole is tried again
    /// with every tool result, and every string in a tool use's arguments, cut to
    /// [`COMPACT_RESULT_CHARS`] characters; still too long, its earlier part (up to a message
    /// the user wrote, about half of it, or less until it fits) is summarized on its own first
    /// and that summary stands in for it, until the whole fits. The summary then
    /// stands alone as the first user message, after [`COMPACT_PREAMBLE`]; the next message
    /// joins it. `None` when there is nothing to compact (no exchange yet); an error (the
    /// provider's, or an answer with no text) leaves the conversation as it was.
    pub async fn compact(&mut self, focus: Option<&str>) -> Result<Option<Compacted>, HostError> {
        // Tool uses an interruption left unanswered get their answers first.
        self.interrupt();
        if self.messages.len() < 2 {
            return Ok(None);
        }
        let turn = u32::try_from(self.turns.len()).unwrap_or(u32::MAX) + 1;
        self.refresh_tools(turn);
        let mut ask = COMPACT_REQUEST.to_string();
        if let Some(focus) = focus.map(str::trim).filter(|f| !f.is_empty()) {
            ask.push_str(&format!(" Above all, keep: {focus}"));
        }
        let mut usage = Usage::default();
        let mut clipped = false;
        let mut messages = self.messages.clone();
        // Where the earlier part ends when the whole is too long (`None`: the whole is tried).
        let mut head: Option<usize> = None;
        let mut requests = 0u32;
        let mut parts = 0u32;
        let summary = loop {
            requests += 1;
            let upto = head.unwrap_or(messages.len());
            let sent = self
                .summary_of(messages[..upto].to_vec(), &ask, clipped, turn)
                .await;
            let text = match sent {
                Ok(reply) => {
                    add_usage(&mut usage, &reply.usage);
                    let text = reply.text().trim().to_string();
                    if text.is_empty() {
                        return Err(HostError::Compaction {
                            message: format!(
                                "the model's answer had no text (it stopped: {:?})",
                                reply.stop
                            ),
                        });
                    }
                    text
                }
                Err(e) if overflowed(&e) && !clipped => {
                    clipped = true;
                    continue;
                }
                // Still too long, cut: an earlier part first, smaller each time.
                Err(e) if overflowed(&e) && requests < COMPACT_MAX_REQUESTS => {
                    match split_point(&messages, upto) {
                        Some(at) => {
                            head = Some(at);
                            continue;
                        }
                        None => return Err(e),
                    }
                }
                Err(e) => return Err(e),
            };
            let Some(at) = head.take() else {
                break text;
            };
            // The earlier part's summary stands in for it, ahead of the next message the
            // user wrote; then the whole is tried again.
            parts += 1;
            let mut rest = messages.split_off(at);
            if let Some(first) = rest.first_mut() {
                first
                    .parts
                    .insert(0, Part::text(format!("{COMPACT_PREAMBLE}\n\n{text}")));
            }
            messages = rest;
        };
        let model = self.client.model.clone();
        self.count_usage(&model, &usage);
        let replaced = self.messages.len();
        self.messages = vec![Message::user(format!("{COMPACT_PREAMBLE}\n\n{summary}"))];
        Ok(Some(Compacted {
            messages: replaced,
            summary,
            usage,
            clipped,
            parts,
        }))
    }

    /// One summary request: `messages` (their tool results and arguments cut when `clipped`)
    /// and the `ask` as the last user message, logged to the transcript.
    async fn summary_of(
        &mut self,
        mut messages: Vec<Message>,
        ask: &str,
        clipped: bool,
        turn: u32,
    ) -> Result<Reply, HostError> {
        if clipped {
            clip_results(&mut messages, COMPACT_RESULT_CHARS);
        }
        match messages.last_mut() {
            Some(last) if last.role == Role::User => last.parts.push(Part::text(ask)),
            _ => messages.push(Message::user(ask)),
        }
        let body = self.request_body_for(messages, false);
        self.log("compact_request", json!({"turn": turn, "body": body}))?;
        match self.client.send(&body).await {
            Ok(r) => {
                self.log(
                    "compact_response",
                    json!({"turn": turn, "body": r.body, "reply": r.reply}),
                )?;
                Ok(r.reply)
            }
            Err(e) => {
                self.log("error", json!({"turn": turn, "message": e.to_string()}))?;
                Err(e)
            }
        }
    }

    /// Whether the endpoint is a server speaking the provider's wire format rather than the
    /// provider's own API (a `--base-url` on another host).
    fn compatible_server(&self) -> bool {
        compatible_server(self.client.dialect, &self.client.base_url)
    }

    /// The output limit each request carries (see [`AgentOptions::max_tokens`]); `None` when
    /// the provider's own limit holds.
    pub fn max_tokens_sent(&self) -> Option<u32> {
        if self.client.dialect == Dialect::Anthropic {
            return switchboard_providers::max_tokens_in_body(
                self.client.dialect,
                &self.client.model,
                self.opts.reasoning_effort.as_deref(),
                self.opts.max_tokens,
            );
        }
        max_tokens_sent(
            self.client.dialect,
            &self.client.base_url,
            self.opts.max_tokens,
        )
    }

    fn request_body(&self) -> Value {
        self.request_body_for(self.messages.clone(), self.opts.stream)
    }

    /// A request body for `messages`, with the tools array and settings of every request.
    fn request_body_for(&self, mut messages: Vec<Message>, stream: bool) -> Value {
        let Some(ToolsArray { translation: t, .. }) = &self.tools else {
            return Value::Null;
        };
        if self.reasoning_refused {
            for m in &mut messages {
                m.parts.retain(|p| !matches!(p, Part::Reasoning { .. }));
            }
        }
        let parts = RequestParts {
            model: self.client.model.clone(),
            system: (!t.system.is_empty()).then(|| t.system.clone()),
            messages,
            tools: t.tools.clone(),
            // Anthropic's body sets its own default, raised above a thinking budget.
            max_tokens: if self.client.dialect == Dialect::Anthropic {
                self.opts.max_tokens
            } else {
                self.max_tokens_sent()
            },
            compatible_server: self.compatible_server(),
            temperature: self.opts.temperature,
            reasoning_effort: self.opts.reasoning_effort.clone(),
            cache_key: cache_key(
                self.client.dialect,
                &self.client.base_url,
                self.translate_opts.prompt_cache,
                &self.cache_key,
            ),
            gemini_openapi: self.translate_opts.gemini_openapi,
            stream,
        };
        let mut body = render_request(self.client.dialect, &parts);
        if self.translate_opts.prompt_cache {
            switchboard_providers::mark_cache_breakpoints(self.client.dialect, &mut body);
        }
        body
    }

    fn log_request(&mut self, turn: u32, body: &Value) -> Result<(), HostError> {
        if self.transcript.is_none() {
            return Ok(());
        }
        let (tokens, method) = self
            .tools
            .as_ref()
            .map_or((0, String::new()), |a| a.rent.clone());
        let line = json!({
            "turn": turn,
            "provider": self.client.dialect.as_str(),
            "url": switchboard_core::redact_url(&self.client.url(self.opts.stream)),
            "headers": self.client.redacted_headers(self.opts.stream),
            "rent": {"tools_tokens": tokens, "method": method},
            "body": body,
        });
        self.log("request", line)
    }

    fn log(&mut self, kind: &str, fields: Value) -> Result<(), HostError> {
        match &mut self.transcript {
            Some(t) => t.write(kind, fields),
            None => Ok(()),
        }
    }
}

fn unreachable_translation() -> &'static Translation {
    // `refresh_tools` always leaves `tools` set; this keeps the accessor total without a panic.
    static EMPTY: std::sync::OnceLock<Translation> = std::sync::OnceLock::new();
    EMPTY.get_or_init(|| {
        translate(
            &switchboard_core::Catalog::new(),
            &TranslateOptions::new(Dialect::Anthropic),
        )
    })
}

/// Two changes of the tools array, one after the other, as one: a name added and then removed
/// is neither, and so is one removed and then added.
fn joined_changes(
    (added_before, removed_before): (Vec<String>, Vec<String>),
    (added, removed): (Vec<String>, Vec<String>),
) -> (Vec<String>, Vec<String>) {
    let mut all_added: Vec<String> = added_before
        .iter()
        .filter(|n| !removed.contains(n))
        .chain(added.iter().filter(|n| !removed_before.contains(n)))
        .cloned()
        .collect();
    let mut all_removed: Vec<String> = removed_before
        .iter()
        .filter(|n| !added.contains(n))
        .chain(removed.iter().filter(|n| !added_before.contains(n)))
        .cloned()
        .collect();
    all_added.sort();
    all_added.dedup();
    all_removed.sort();
    all_removed.dedup();
    (all_added, all_removed)
}

/// The provider refused a request, saying something about the reasoning items it sent back
/// (OpenAI Responses): "Item with id 'rs_…' not found. Items are not persisted when `store` is
/// set to false", "… of type 'reasoning' was provided without its required following item".
fn reasoning_refused(e: &HostError) -> bool {
    let HostError::ProviderHttp {
        status: 400 | 404,
        message,
        ..
    } = e
    else {
        return false;
    };
    let message = message.to_ascii_lowercase();
    ["reasoning", "not persisted", "item with id"]
        .iter()
        .any(|w| message.contains(w))
}

/// Where to cut `messages[..upto]` so that its earlier part can be summarized on its own: at
/// a message the user wrote (no tool results in it, so no tool use is parted from its
/// result), after at least one exchange, as near the middle as there is one. `None` when there
/// is no such place.
fn split_point(messages: &[Message], upto: usize) -> Option<usize> {
    let middle = upto / 2;
    (2..upto.min(messages.len()))
        .filter(|&i| {
            messages[i].role == Role::User
                && !messages[i]
                    .parts
                    .iter()
                    .any(|p| matches!(p, Part::ToolResult { .. }))
        })
        .min_by_key(|&i| i.abs_diff(middle))
}

/// The provider said the request does not fit the model's context.
fn overflowed(e: &HostError) -> bool {
    matches!(
        e,
        HostError::ProviderHttp {
            context_overflow: true,
            ..
        }
    )
}

/// Cut every tool result's text, and every string in a tool use's arguments, in `messages` to
/// `max` characters, saying so (the arguments stay an object of the same keys).
fn clip_results(messages: &mut [Message], max: usize) {
    for m in messages {
        for p in &mut m.parts {
            match p {
                Part::ToolResult { content, .. } => {
                    for c in content {
                        if let ResultPart::Text(text) = c {
                            clip_text(text, max);
                        }
                    }
                }
                Part::ToolUse { input, .. } => clip_strings(input, max),
                _ => {}
            }
        }
    }
}

fn clip_strings(v: &mut Value, max: usize) {
    match v {
        Value::String(text) => clip_text(text, max),
        Value::Array(items) => items.iter_mut().for_each(|i| clip_strings(i, max)),
        Value::Object(fields) => fields.values_mut().for_each(|f| clip_strings(f, max)),
        _ => {}
    }
}

fn clip_text(text: &mut String, max: usize) {
    let count = text.chars().count();
    if count > max {
        let kept: String = text.chars().take(max).collect();
        *text = format!(
            "{kept}\n[{} more characters cut for the summary]",
            count - max
        );
    }
}

pub(crate) fn add_usage(total: &mut Usage, u: &Usage) {
    // Counts come from the provider: saturate rather than overflow on absurd values.
    total.input_tokens = total.input_tokens.saturating_add(u.input_tokens);
    total.output_tokens = total.output_tokens.saturating_add(u.output_tokens);
    if let Some(r) = u.cache_read_tokens {
        let t = total.cache_read_tokens.get_or_insert(0);
        *t = t.saturating_add(r);
    }
    if let Some(w) = u.cache_write_tokens {
        let t = total.cache_write_tokens.get_or_insert(0);
        *t = t.saturating_add(w);
    }
    if let Some(r) = u.reasoning_tokens {
        let t = total.reasoning_tokens.get_or_insert(0);
        *t = t.saturating_add(r);
    }
}

/// What the model reads for a tool use the turn limit left unrun.
const TURN_LIMIT_REACHED: &str =
    "Not run: the turn limit for this message was reached. Tell the user what you found so far.";
/// How many times running a call may give the same result before it is not made again (as
/// Gemini CLI, which calls five identical calls running a loop).
const SAME_RESULT_LIMIT: u32 = 4;

/// What the model reads for a call that already gave the same result [`SAME_RESULT_LIMIT`]
/// times running.
const REPEATED_CALL: &str = "Not run: this exact call (same tool, same arguments) already returned the same result 4 times in a row for this message. Use that result, change the arguments, or answer.";

/// The calls of one user message's loop, for telling when the model repeats itself: by tool
/// and arguments, how many times running the call gave the same result, and that result.
#[derive(Default)]
struct Repeats {
    seen: std::collections::HashMap<String, (u32, String)>,
}

impl Repeats {
    fn key(u: &ToolUse) -> String {
        let args = match &u.input {
            ToolInput::Json(v) => v.to_string(),
            ToolInput::Unparsed { raw, .. } => raw.clone(),
        };
        format!("{}\u{0}{args}", u.name)
    }

    /// The call gave the same result the last [`SAME_RESULT_LIMIT`] times it was made.
    fn stuck(&self, u: &ToolUse) -> bool {
        self.seen
            .get(&Self::key(u))
            .is_some_and(|(same, _)| *same >= SAME_RESULT_LIMIT)
    }

    fn saw(&mut self, u: &ToolUse, o: &Outcome) {
        if o.status == crate::dispatch::Status::NotRun {
            return;
        }
        let text = o.result.text();
        let entry = self.seen.entry(Self::key(u)).or_insert((0, String::new()));
        if entry.0 > 0 && entry.1 == text {
            entry.0 += 1;
        } else {
            *entry = (1, text);
        }
    }
}

/// What the model reads for a tool use the cost limit left unrun.
const COST_LIMIT_REACHED: &str = "Not run: the cost limit set for this conversation was reached. Tell the user what you found so far.";

/// A tool use a limit left unrun still gets a result, saying `why`.
fn not_run(u: &ToolUse, why: &str) -> Outcome {
    Outcome {
        id: u.id.clone(),
        name: u.name.clone(),
        server: None,
        tool: None,
        arguments: match &u.input {
            ToolInput::Json(v) => v.clone(),
            ToolInput::Unparsed { raw, .. } => Value::String(raw.clone()),
        },
        status: crate::dispatch::Status::NotRun,
        result: shape::Shaped::error(why),
        elapsed_ms: 0,
        output_schema_problem: None,
    }
}

/// An outcome as the conversation's tool result part.
fn result_part(o: &Outcome, images: bool) -> Part {
    let content = o
        .result
        .parts
        .iter()
        .map(|p| match p {
            shape::ResultPart::Text { text } => ResultPart::Text(text.clone()),
            shape::ResultPart::Image { mime_type, data } if images => ResultPart::Image {
                media_type: mime_type.clone(),
                data: data.clone(),
            },
            shape::ResultPart::Image { mime_type, .. } => {
                ResultPart::Text(format!("[image: {mime_type}; not shown]"))
            }
        })
        .collect();
    Part::ToolResult {
        id: o.id.clone(),
        name: o.name.clone(),
        content,
        is_error: o.result.is_error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The prompt cache key goes to OpenAI's own API only, with prompt caching on; each
    /// conversation has its own.
    #[test]
    fn the_prompt_cache_key_goes_to_openais_own_api_only() {
        let key = "switchboard-00000000000000ab";
        let own = "https://api.openai.com/v1";
        for d in [Dialect::OpenAiChat, Dialect::OpenAiResponses] {
            assert_eq!(cache_key(d, own, true, key).as_deref(), Some(key));
            assert_eq!(cache_key(d, own, false, key), None);
            for other in [
                "http://127.0.0.1:8080/v1",
                "https://res.openai.azure.com/openai/deployments/d",
                "https://api.deepseek.com",
            ] {
                assert_eq!(cache_key(d, other, true, key), None, "{other}");
            }
        }
        for d in [Dialect::Anthropic, Dialect::Gemini] {
            assert_eq!(
                cache_key(d, switchboard_providers::default_base_url(d), true, key),
                None,
                "{d}"
            );
        }
        assert_ne!(conversation_key(), conversation_key());
        assert!(conversation_key().starts_with("switchboard-"));
    }
    use crate::dispatch::DeclineAll;

    /// Only the same result 4 times running makes a call stuck; a result that changes (a job
    /// being polled) does not, and other arguments are another call.
    #[test]
    fn a_call_is_stuck_after_the_same_result_four_times_running() {
        let call = |args: Value| ToolUse {
            id: "x".into(),
            name: "jobs__status".into(),
            input: ToolInput::Json(args),
        };
        let answered = |u: &ToolUse, text: &str| Outcome {
            status: crate::dispatch::Status::Ok,
            result: shape::Shaped {
                is_error: false,
                ..shape::Shaped::error(text)
            },
            ..not_run(u, "")
        };
        let mut seen = Repeats::default();
        let poll = call(json!({"id": 7}));
        for text in ["running", "running", "running", "done", "done", "done"] {
            assert!(!seen.stuck(&poll), "{text}");
            seen.saw(&poll, &answered(&poll, text));
        }
        seen.saw(&poll, &answered(&poll, "done"));
        assert!(seen.stuck(&poll));
        assert!(!seen.stuck(&call(json!({"id": 8}))));
        // The same arguments in another key order are the same call (the model's JSON is
        // parsed, and serde_json's map keeps keys sorted).
        let parsed = |text: &str| call(serde_json::from_str(text).unwrap());
        let mut order = Repeats::default();
        for text in [r#"{"a":1,"b":2}"#, r#"{"b":2,"a":1}"#]
            .iter()
            .cycle()
            .take(4)
        {
            order.saw(&parsed(text), &answered(&poll, "same"));
        }
        assert!(order.stuck(&parsed(r#"{"b":2,"a":1}"#)));
        // A call that was not run says nothing about the result.
        let mut fresh = Repeats::default();
        fresh.saw(&poll, &not_run(&poll, "declined"));
        fresh.saw(&poll, &not_run(&poll, "declined"));
        assert!(!fresh.stuck(&poll));
    }

    #[test]
    fn changes_of_the_tools_array_join_into_one() {
        let v = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<Vec<_>>();
        // Added then removed is nothing; removed then added is nothing; the rest adds up.
        assert_eq!(
            joined_changes((v(&["a", "b"]), v(&["c"])), (v(&["c", "d"]), v(&["a"]))),
            (v(&["b", "d"]), v(&[]))
        );
        assert_eq!(
            joined_changes((v(&[]), v(&["x"])), (v(&[]), v(&["y"]))),
            (v(&[]), v(&["x", "y"]))
        );
    }

    /// An agent with no servers whose provider is never reached.
    async fn no_server_agent() -> Agent {
        let sessions = Sessions::start(Vec::new()).await;
        let client =
            ProviderClient::new(Dialect::Anthropic, Some("http://127.0.0.1:9"), "m", None).unwrap();
        Agent::new(
            sessions,
            Vec::new(),
            client,
            TranslateOptions::new(Dialect::Anthropic),
            Arc::new(DeclineAll { why: "test".into() }),
            AgentOptions::default(),
        )
    }

    /// The resources results linked are saved with the conversation and taken up with it, so
    /// the model keeps its `read_resource` tool (`linked`, the default) after a restart.
    #[tokio::test]
    async fn linked_resources_are_saved_and_taken_up() {
        let mut agent = no_server_agent().await;
        agent
            .linked
            .insert("demo://r/1".into(), "everything".into());
        let saved = agent.history();
        let text = serde_json::to_string(&saved).unwrap();
        let read: History = serde_json::from_str(&text).unwrap();
        let mut later = no_server_agent().await;
        assert!(later.linked.is_empty());
        later.resume(&read);
        assert_eq!(
            later.linked.get("demo://r/1").map(String::as_str),
            Some("everything")
        );
        // A file written before links were saved reads as none.
        let mut old: serde_json::Value = serde_json::from_str(&text).unwrap();
        old.as_object_mut().unwrap().remove("linked_resources");
        let old: History = serde_json::from_value(old).unwrap();
        assert!(old.linked_resources.is_empty());
    }

    /// `undo` takes out what the user wrote last and all after it, and keeps what shared its
    /// message without being theirs: the results answering the turn before, a summary.
    #[tokio::test]
    async fn undo_takes_out_the_users_last_message_and_what_followed() {
        let mut agent = no_server_agent().await;
        assert_eq!(agent.undo(), None);
        let result = Part::ToolResult {
            id: "a".into(),
            name: "x__one".into(),
            content: vec![ResultPart::Text("done".into())],
            is_error: false,
        };
        let summary = Part::text(format!("{COMPACT_PREAMBLE}\n\nThe user asked for x."));
        agent.messages = vec![
            Message::tool_results(vec![summary.clone(), Part::text("go on")]),
            Message::assistant(vec![Part::ToolUse {
                id: "a".into(),
                name: "x__one".into(),
                input: json!({}),
            }]),
            // Results the turn limit left, then the user's next message joined them.
            Message::tool_results(vec![result.clone(), Part::text("and now?")]),
            Message::assistant(vec![Part::text("Now this.")]),
        ];
        assert_eq!(agent.undo(), Some(vec![Part::text("and now?")]));
        assert_eq!(agent.messages.len(), 3);
        assert_eq!(agent.messages[2].parts, vec![result]);
        assert_eq!(agent.undo(), Some(vec![Part::text("go on")]));
        assert_eq!(agent.messages, vec![Message::tool_results(vec![summary])]);
        assert_eq!(agent.undo(), None);
        agent.sessions.shutdown().await;
    }

    #[tokio::test]
    async fn an_interrupted_turn_leaves_every_tool_use_answered() {
        let mut agent = no_server_agent().await;
        agent.messages.push(Message::user("go"));
        agent.messages.push(Message::assistant(vec![
            Part::text("Calling two tools."),
            Part::ToolUse {
                id: "a".into(),
                name: "x__one".into(),
                input: json!({}),
            },
            Part::ToolUse {
                id: "b".into(),
                name: "x__two".into(),
                input: json!({}),
            },
        ]));
        agent.interrupt();
        let last = agent.messages.last().unwrap();
        assert_eq!(last.role, Role::User);
        let ids: Vec<&str> = last
            .parts
            .iter()
            .filter_map(|p| match p {
                Part::ToolResult { id, is_error, .. } if *is_error => Some(id.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(ids, ["a", "b"]);
        // Nothing to answer: nothing is added.
        agent.interrupt();
        assert_eq!(agent.messages.len(), 3);
        agent.sessions().shutdown().await;
    }
}
