//! The gateway's shared state: the upstream sessions, the config, the pin store, the current
//! [`View`] and the connected clients. One `Gateway` serves every client connection (stdio or
//! each HTTP session); a background task rebuilds the view when the catalog or the pin store
//! changes and tells connected clients which lists changed.
// Logging is deprecated by SEP-2577 in rmcp 3.x, but clients on 2025-11-25 and earlier use it.
#![allow(deprecated)]

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{LoggingMessageNotificationParam, ResourceUpdatedNotificationParam};
use rmcp::service::{Peer, SubscriptionSink};
use serde_json::Value;
use switchboard_host::config::PinMode;
use switchboard_host::finder::{Finder, docs_key};
use switchboard_host::pins::PinStore;
use switchboard_host::{Config, ServerConfig};
use switchboard_mcp::{Reconfigured, ServerEvent, ServerStatus, Sessions};
use switchboard_search::embed::MODEL_FILES;
use switchboard_search::{Doc, Index};
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use crate::client::{self, Client};
use crate::view::{self, View, Warned};

/// What the gateway exposes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Expose {
    /// Every listed tool, resource and prompt.
    #[default]
    All,
    /// Only `search_tools` and `call_tool` (resources and prompts as with `All`).
    Facade,
}

/// How to run the gateway.
#[derive(Debug, Default)]
pub struct Options {
    /// Whole catalog or search facade.
    pub expose: Expose,
    /// The pin store; `None` disables pinning for every server.
    pub pins: Option<PinStore>,
    /// The facade's ranking; `None` looks for the model as `[settings] search_model` says.
    pub finder: Option<Arc<Finder>>,
    /// How long after the start clients' first requests may wait for upstream servers still
    /// starting; `None` is [`STARTUP_WAIT`].
    pub startup_wait: Option<Duration>,
    /// Where every client's tool calls are recorded, if anywhere.
    pub call_log: Option<crate::CallLog>,
    /// Offer the servers the roots the client gives (`roots/list`), when the config names none:
    /// for a gateway with one client (stdio), so its servers see the folders they would see
    /// if that client ran them itself (several clients' folders would be one list for all).
    /// Off by default, since a server may replace the folders its arguments name with them.
    pub client_roots: bool,
    /// A model of the gateway's own that answers the servers' sampling requests when the
    /// calling client cannot (`serve --sampling-model`); `None`: such requests are refused.
    pub sampler: Option<Arc<switchboard_host::client::ProviderClient>>,
}

/// How long after the gateway starts its clients' first requests wait for upstream servers that
/// are still starting. A server that takes longer joins later: clients hear of its tools by a
/// `list_changed` notification. Long enough for a package runner's warm start, short of the
/// MCP Inspector's 15 s connect timeout.
pub const STARTUP_WAIT: Duration = Duration::from_secs(10);

/// How often the pin store is checked for approvals made by another process.
const PIN_POLL: Duration = Duration::from_millis(300);

/// How long a search waits for a hybrid index still being built before it answers from the
/// lexical one.
const SEARCH_WAIT: Duration = Duration::from_secs(15);

/// The facade's index over the listed tools: lexical at once, replaced by the hybrid one when the
/// embeddings are ready (cached embeddings make that quick after the first time).
pub struct SearchSlot {
    /// Which documents it indexes ([`docs_key`]).
    key: u64,
    /// Which finder built it (see `Gateway::finder_gen`).
    finder_gen: u64,
    index: RwLock<Arc<Index>>,
    ready: watch::Sender<bool>,
}

impl SearchSlot {
    fn new(key: u64, finder_gen: u64, index: Index, ready: bool) -> Self {
        Self {
            key,
            finder_gen,
            index: RwLock::new(Arc::new(index)),
            ready: watch::Sender::new(ready),
        }
    }

    fn finish(&self, index: Index) {
        *self.index.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(index);
        self.ready.send_replace(true);
    }

    /// The best index available, waiting a while for one being built.
    pub async fn current(&self) -> Arc<Index> {
        let mut ready = self.ready.subscribe();
        if !*ready.borrow() {
            tracing::debug!("search waits for the tool index being embedded");
            let _ = tokio::time::timeout(SEARCH_WAIT, ready.wait_for(|r| *r)).await;
        }
        self.index.read().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

/// The configured servers a snapshot was built from, by name.
#[derive(Default)]
pub struct ServerTable {
    list: Vec<ServerConfig>,
    by_name: HashMap<String, usize, foldhash::fast::RandomState>,
}

impl ServerTable {
    fn new(servers: &[ServerConfig]) -> Self {
        Self {
            by_name: servers
                .iter()
                .enumerate()
                .map(|(i, s)| (s.name().to_string(), i))
                .collect(),
            list: servers.to_vec(),
        }
    }

    /// The config of one server.
    pub fn get(&self, name: &str) -> Option<&ServerConfig> {
        self.by_name.get(name).map(|&i| &self.list[i])
    }
}

/// The view and, in facade mode, its search index.
pub struct Snapshot {
    /// What clients see.
    pub view: View,
    /// The servers' config the view was built from (policy, approvals and prefixes of the same
    /// moment as the routes).
    pub servers: Arc<ServerTable>,
    /// The index over the listed tools (facade mode only).
    pub search: Option<Arc<SearchSlot>>,
    /// (server, tool) -> index into `view.tools`, for search hits.
    pub by_pair: HashMap<(String, String), usize>,
}

/// One `subscriptions/listen` stream of a stateless 2026-07-28 client.
struct Listener {
    /// Unique per stream (request ids are the client's, and several clients may reuse one).
    serial: u64,
    sink: SubscriptionSink,
    /// Cancelled to end the stream gracefully (the client then listens again and learns what
    /// is accepted now).
    end: CancellationToken,
}

/// A request of a stateless 2026-07-28 client that asked for log messages
/// (`io.modelcontextprotocol/logLevel`): the servers it went to and the least severity it wants.
struct LogTap {
    servers: Vec<String>,
    min: u8,
    /// Tagged `notifications/message` params; closed when the request is over.
    sink: mpsc::UnboundedSender<Value>,
}

/// The wire name of a log level rank (see [`client::rank`]).
fn level_name(rank: u8) -> &'static str {
    client::LEVELS[usize::from(rank.min(7))]
}

/// The shared state of a running gateway.
pub struct Gateway {
    sessions: Sessions,
    /// The configured servers; replaced by [`Gateway::reconfigure`], read by the next rebuild.
    servers: RwLock<Arc<ServerTable>>,
    /// The config's entries that cannot run (name, why), as of the start or the last reload.
    disabled: RwLock<Vec<(String, String)>>,
    /// Moves when the servers' config is replaced, so the refresher rebuilds the view.
    reconfigured: watch::Sender<u64>,
    pins: Option<PinStore>,
    /// The facade's ranking (`None` without the facade); replaced when a model is installed
    /// after a start without one, and when a reload leads `search_model` to another model or
    /// to none (see [`Gateway::pick_up_model`]).
    finder: RwLock<Option<Arc<Finder>>>,
    /// Moves when `finder` is replaced, so the next rebuild indexes again.
    finder_gen: AtomicU64,
    /// Where the model is to be found, which one the finder has, and when to look again.
    model: Mutex<ModelWatch>,
    /// One model load at a time.
    loading_model: tokio::sync::Mutex<()>,
    /// Moves at every rebuild of the view.
    rebuilt: watch::Sender<u64>,
    /// The documents the newest search index is for ([`docs_key`]).
    latest_docs: Arc<AtomicU64>,
    warned: Warned,
    /// Compiled output schemas, to check the results of the tools that declare one.
    pub(crate) validators: switchboard_host::dispatch::Validators,
    instructions: bool,
    pub(crate) expose: Expose,
    /// `serve --call-log`.
    pub(crate) call_log: Option<Arc<crate::CallLog>>,
    snapshot: RwLock<Arc<Snapshot>>,
    clients: Mutex<Vec<(Peer<RoleServer>, Arc<Client>)>>,
    /// 2026-07-28 clients hear about changes through `subscriptions/listen` streams.
    listeners: Mutex<Vec<Listener>>,
    next_listener: AtomicU64,
    /// The upstream subscriptions made for clients and streams: public URI -> (server, the
    /// server's URI). Made again when the server's session is new (a restart, a reload).
    upstream_subscriptions: Mutex<HashMap<String, (String, String)>>,
    /// Subscriptions a reload left under public URIs that no longer exist (an alias changed, a
    /// server was removed), whose subscribers are told after the next rebuild.
    moved: Mutex<Vec<Moved>>,
    /// Stateless requests in flight that asked for log messages.
    log_taps: Mutex<Vec<LogTap>>,
    /// The level each upstream server was last set to (rank), so a stateless request that asks
    /// for more than that sets it lower first. Forgotten when its session is new.
    upstream_levels: Mutex<HashMap<String, u8>>,
    /// True once every upstream has come up or failed and the view shows it.
    ready: watch::Receiver<bool>,
    /// When requests stop waiting for `ready`.
    ready_by: tokio::time::Instant,
    stop: CancellationToken,
    /// Where the roots its servers are offered come from.
    roots: Mutex<Roots>,
    /// The gateway's own model for sampling requests its clients cannot answer.
    pub(crate) sampler: Option<Arc<switchboard_host::client::ProviderClient>>,
}

/// The roots a gateway's servers are offered: the config's, else its client's (when it takes
/// them), else none.
struct Roots {
    config: Vec<switchboard_mcp::Root>,
    client: Option<Vec<switchboard_mcp::Root>>,
    take_client: bool,
}

impl Roots {
    fn offered(&self) -> Vec<switchboard_mcp::Root> {
        match &self.client {
            Some(client) if self.config.is_empty() && self.take_client => client.clone(),
            _ => self.config.clone(),
        }
    }
}

impl Gateway {
    /// Start connecting to every server of `config` and return at once, so clients can connect
    /// while upstream servers start. Clients' requests wait for the servers still starting (see
    /// [`Gateway::startup`]); servers that fail to start are logged and left out, and the gateway
    /// still serves the others.
    pub async fn start(config: &Config, options: Options) -> Arc<Gateway> {
        let specs = config.servers.iter().map(|s| s.spec.clone()).collect();
        // The config's folders are the roots its servers are offered.
        switchboard_mcp::configure_roots(config.roots());
        let sessions = Sessions::launch_retrying(specs);
        let ready_by = tokio::time::Instant::now() + options.startup_wait.unwrap_or(STARTUP_WAIT);
        let (set_ready, ready) = watch::channel(false);
        let facade = options.expose == Expose::Facade;
        // The files the facade's own finder loads (at its first index); a finder the caller
        // passed has none the gateway knows of.
        let loaded = (facade && options.finder.is_none())
            .then(|| ModelFiles::find(config.settings.search_model.as_deref()))
            .flatten();
        let gateway = Arc::new(Gateway {
            servers: RwLock::new(Arc::new(ServerTable::new(&config.servers))),
            disabled: RwLock::new(disabled(config)),
            reconfigured: watch::Sender::new(0),
            sessions,
            pins: options.pins,
            finder: RwLock::new(facade.then(|| {
                options.finder.unwrap_or_else(|| {
                    Arc::new(Finder::locate(config.settings.search_model.as_deref()))
                })
            })),
            finder_gen: AtomicU64::new(0),
            model: Mutex::new(ModelWatch {
                setting: config.settings.search_model.clone(),
                next_check: None,
                loaded,
                dropped: false,
                failed: None,
            }),
            loading_model: tokio::sync::Mutex::new(()),
            rebuilt: watch::Sender::new(0),
            latest_docs: Arc::new(AtomicU64::new(0)),
            warned: Warned::default(),
            validators: Default::default(),
            instructions: config.settings.instructions,
            expose: options.expose,
            call_log: options.call_log.map(Arc::new),
            sampler: options.sampler,
            roots: Mutex::new(Roots {
                config: config.roots(),
                client: None,
                take_client: options.client_roots,
            }),
            snapshot: RwLock::new(Arc::new(Snapshot {
                view: View::default(),
                servers: Arc::default(),
                search: None,
                by_pair: HashMap::new(),
            })),
            clients: Mutex::new(Vec::new()),
            listeners: Mutex::new(Vec::new()),
            next_listener: AtomicU64::new(0),
            upstream_subscriptions: Mutex::new(HashMap::new()),
            moved: Mutex::new(Vec::new()),
            log_taps: Mutex::new(Vec::new()),
            upstream_levels: Mutex::new(HashMap::new()),
            ready,
            ready_by,
            stop: CancellationToken::new(),
        });
        gateway.rebuild();
        tokio::spawn(refresh(
            Arc::downgrade(&gateway),
            gateway.stop.clone(),
            set_ready,
        ));
        tokio::spawn(relay_events(
            Arc::downgrade(&gateway),
            gateway.sessions.events(),
            gateway.stop.clone(),
        ));
        gateway
    }

    /// Wait until every upstream server has come up or failed and the view shows it, but no
    /// later than the startup wait after the gateway started. Every client request that reads
    /// the view (`initialize` included) waits here, so a client that lists tools once sees all
    /// of them unless a server is slower than the startup wait; one that never answers holds
    /// clients only that long. Immediate once the gateway is ready.
    pub async fn startup(&self) {
        if *self.ready.borrow() {
            return;
        }
        let mut ready = self.ready.clone();
        let waited = tokio::time::timeout_at(self.ready_by, ready.wait_for(|r| *r)).await;
        if waited.is_err() {
            tracing::debug!("answering before every upstream server has started");
        }
    }

    /// The current snapshot.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        self.snapshot
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Whether a plain tool call may skip the rmcp session and its handler (see
    /// `passthrough`): with the whole catalog exposed, not turned off, and no model of the
    /// gateway's own to answer the servers' sampling requests (which needs the handler).
    pub(crate) fn passes_through(&self) -> bool {
        crate::passthrough::enabled() && self.expose == Expose::All && self.sampler.is_none()
    }

    /// The upstream sessions.
    pub fn sessions(&self) -> &Sessions {
        &self.sessions
    }

    /// One status per configured upstream server.
    pub fn statuses(&self) -> Vec<ServerStatus> {
        self.sessions.statuses()
    }

    /// The config's entries that cannot run: their names and why.
    pub fn disabled(&self) -> Vec<(String, String)> {
        self.disabled
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Serve `config`'s servers from now on (see [`Sessions::reconfigure`]: unchanged servers
    /// keep running, new ones start, removed ones close, changed ones restart). Their policy,
    /// approvals, aliases and pins apply from the next view, which clients hear of by
    /// `list_changed` like any other change. The gateway's own settings (exposure, pin store,
    /// instructions) stay as they were at the start; the facade's model follows
    /// `search_model` (see [`Gateway::pick_up_model`]).
    pub fn reconfigure(&self, config: &Config) -> Reconfigured {
        let table = Arc::new(ServerTable::new(&config.servers));
        let old = std::mem::replace(
            &mut *self.servers.write().unwrap_or_else(|e| e.into_inner()),
            table.clone(),
        );
        self.note_moved(&old, &table);
        *self.disabled.write().unwrap_or_else(|e| e.into_inner()) = disabled(config);
        // The roots in force before any server starts (one starting asks at once); those left
        // running are told after.
        let roots = {
            let mut roots = lock(&self.roots);
            roots.config = config.roots();
            roots.offered()
        };
        switchboard_mcp::configure_roots(roots.clone());
        let specs = config.servers.iter().map(|s| s.spec.clone()).collect();
        let outcome = self.sessions.reconfigure(specs);
        let sessions = self.sessions.clone();
        tokio::spawn(async move { sessions.set_roots(roots).await });
        {
            // A model installed since, or another one the setting leads to, is looked for at
            // once (see `refresh`).
            let mut model = lock(&self.model);
            model.setting = config.settings.search_model.clone();
            model.next_check = None;
        }
        if self.pins.is_none() && config.servers.iter().any(|s| s.pin != PinMode::Off) {
            tracing::warn!(
                "pinning was off when serve started (no server asked for it); restart serve to pin"
            );
        }
        self.reconfigured.send_modify(|v| *v += 1);
        outcome
    }

    /// Whether the servers are to be offered the client's roots (see [`Options::client_roots`]).
    pub(crate) fn takes_client_roots(&self) -> bool {
        let roots = lock(&self.roots);
        roots.take_client && roots.config.is_empty()
    }

    /// The client gave these roots: offer them to the servers (when the gateway takes them),
    /// telling the running ones.
    pub(crate) async fn client_roots(&self, given: Vec<switchboard_mcp::Root>) {
        let offered = {
            let mut roots = lock(&self.roots);
            roots.client = Some(given);
            roots.offered()
        };
        if self.sessions.set_roots(offered.clone()).await {
            tracing::info!(
                roots = offered.len(),
                "offering the servers the client's roots"
            );
        }
    }

    /// Remember a connected client so it hears about list changes, log messages and updates
    /// of the resources it subscribed to.
    pub(crate) fn register(&self, peer: Peer<RoleServer>, client: Arc<Client>) {
        let mut clients = self.clients.lock().unwrap_or_else(|e| e.into_inner());
        clients.retain(|(p, _)| !p.is_transport_closed());
        clients.push((peer, client));
    }

    /// The connected clients.
    fn live_clients(&self) -> Vec<(Peer<RoleServer>, Arc<Client>)> {
        let mut c = self.clients.lock().unwrap_or_else(|e| e.into_inner());
        c.retain(|(p, _)| !p.is_transport_closed());
        c.clone()
    }

    /// Whether any connected client other than `except`, or any `subscriptions/listen` stream,
    /// subscribed to a public URI (the upstream subscription is shared by all of them).
    pub(crate) fn subscribed_elsewhere(&self, uri: &str, except: Option<&Arc<Client>>) -> bool {
        let by_client = self
            .live_clients()
            .iter()
            .any(|(_, c)| except.is_none_or(|e| !Arc::ptr_eq(c, e)) && c.subscribed(uri));
        by_client
            || self
                .listeners
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .iter()
                .any(|l| listens_to(&l.sink, uri))
    }

    /// Remember that `public` is subscribed upstream as the server's `uri`.
    pub(crate) fn subscribed_upstream(&self, public: &str, server: &str, uri: &str) {
        lock(&self.upstream_subscriptions)
            .insert(public.to_string(), (server.to_string(), uri.to_string()));
    }

    /// Whether `public` is subscribed upstream already (or noted, to be made when its server
    /// is up).
    pub(crate) fn held_upstream(&self, public: &str) -> bool {
        lock(&self.upstream_subscriptions).contains_key(public)
    }

    /// Forget an upstream subscription nobody wants any more.
    pub(crate) fn unsubscribed_upstream(&self, public: &str) {
        lock(&self.upstream_subscriptions).remove(public);
    }

    /// Whether the first upstream start-up is over (see [`Gateway::startup`]).
    pub(crate) fn is_ready(&self) -> bool {
        *self.ready.borrow()
    }

    /// The most verbose level any legacy client or stateless request in flight asked for.
    fn wanted_level(&self) -> Option<u8> {
        let by_clients = self
            .live_clients()
            .iter()
            .filter_map(|(_, c)| c.level())
            .min();
        let mut taps = lock(&self.log_taps);
        taps.retain(|t| !t.sink.is_closed());
        let by_requests = taps.iter().map(|t| t.min).min();
        by_clients.into_iter().chain(by_requests).min()
    }

    /// Whether a live server declared the logging capability.
    pub(crate) fn logs(&self, server: &str) -> bool {
        self.sessions
            .capabilities(server)
            .is_some_and(|c| c.get("logging").is_some())
    }

    /// `logging/setLevel` on one server, remembered.
    async fn set_upstream_level(&self, server: &str, rank: u8) {
        match self.sessions.set_log_level(server, level_name(rank)).await {
            Ok(()) => {
                tracing::debug!(%server, level = level_name(rank), "log level set upstream");
                lock(&self.upstream_levels).insert(server.to_string(), rank);
            }
            Err(e) => {
                tracing::warn!(server = %server, error = %e, "logging/setLevel failed upstream")
            }
        }
    }

    /// Set every upstream that supports logging to the most verbose level any client asked
    /// for (each client then gets only what its own level lets through).
    pub(crate) async fn sync_log_level(&self) {
        let Some(min) = self.wanted_level() else {
            return;
        };
        let servers = self.snapshot().servers.clone();
        for server in &servers.list {
            let name = server.name();
            if self.logs(name) {
                self.set_upstream_level(name, min).await;
            }
        }
    }

    /// Pass the log messages of `servers` at `min` or above to the returned receiver (tagged
    /// as for every client) until it is dropped: for a stateless request that asked for them.
    /// A server set to a less verbose level is set to `min` first.
    pub(crate) async fn tap_logs(
        &self,
        servers: Vec<String>,
        min: u8,
    ) -> mpsc::UnboundedReceiver<Value> {
        let (sink, logs) = mpsc::unbounded_channel();
        for server in &servers {
            let set = lock(&self.upstream_levels).get(server).copied();
            if set.is_none_or(|set| set > min) && self.logs(server) {
                self.set_upstream_level(server, min).await;
            }
        }
        lock(&self.log_taps).push(LogTap { servers, min, sink });
        logs
    }

    /// A server's session is new (first start, restart, reload): set its log level if a client
    /// asked for one, and subscribe again to the resources clients and streams still want.
    /// When the new session offers no subscriptions, the clients are told: a stream ends (its
    /// client listens again and is told what is accepted now), a legacy client gets a warning
    /// log message (2025-11-25 has no other way to end a subscription).
    async fn server_back(&self, server: &str) {
        lock(&self.upstream_levels).remove(server);
        if let Some(min) = self.wanted_level()
            && self.logs(server)
        {
            self.set_upstream_level(server, min).await;
        }
        let mut wanted: Vec<(String, String)> = lock(&self.upstream_subscriptions)
            .iter()
            .filter(|(_, (s, _))| s == server)
            .map(|(public, (_, uri))| (public.clone(), uri.clone()))
            .collect();
        wanted.retain(|(public, _)| {
            let still = self.subscribed_elsewhere(public, None);
            if !still {
                self.unsubscribed_upstream(public);
            }
            still
        });
        if wanted.is_empty() {
            return;
        }
        let offers = self.sessions.capabilities(server).is_some_and(|c| {
            c.pointer("/resources/subscribe")
                .and_then(Value::as_bool)
                .unwrap_or(false)
        });
        let mut lost = Vec::new();
        for (public, uri) in wanted {
            if !offers {
                lost.push(public);
                continue;
            }
            match self.sessions.subscribe(server, &uri).await {
                Ok(()) => {
                    tracing::info!(%server, %uri, "resource subscribed again on the new session")
                }
                Err(e) => {
                    tracing::warn!(%server, %uri, error = %e, "resources/subscribe failed upstream after a restart");
                    lost.push(public);
                }
            }
        }
        if lost.is_empty() {
            return;
        }
        tracing::warn!(%server, uris = ?lost, "the restarted server no longer takes these resource subscriptions; their clients are told");
        for public in &lost {
            self.unsubscribed_upstream(public);
        }
        let label = self.label(server);
        for (peer, c) in self.live_clients() {
            for public in lost.iter().filter(|p| c.subscribed(p)) {
                c.unsubscribe(public);
                warn_client(
                    &peer,
                    &c,
                    format!("{label} restarted and no longer takes a subscription to {public}: no more updates of it will come"),
                )
                .await;
            }
        }
        for l in lock(&self.listeners).iter() {
            if lost.iter().any(|p| listens_to(&l.sink, p)) {
                l.end.cancel();
            }
        }
    }

    /// The name a server's log messages are tagged with: its prefix, else its name.
    fn label(&self, server: &str) -> String {
        let snapshot = self.snapshot();
        snapshot
            .servers
            .get(server)
            .map(view::prefix)
            .filter(|p| !p.is_empty())
            .unwrap_or(server)
            .to_string()
    }

    /// Add a `subscriptions/listen` stream (stateless 2026-07-28 clients): its serial for
    /// [`Self::unlisten`], and a token cancelled when the gateway ends the stream.
    pub(crate) fn listen(&self, sink: SubscriptionSink) -> (u64, CancellationToken) {
        let serial = self.next_listener.fetch_add(1, Ordering::Relaxed);
        let end = self.stop.child_token();
        lock(&self.listeners).push(Listener {
            serial,
            sink,
            end: end.clone(),
        });
        (serial, end)
    }

    /// Remove a stream whose request ended.
    pub(crate) fn unlisten(&self, serial: u64) {
        lock(&self.listeners).retain(|l| l.serial != serial);
    }

    /// Rebuild the view; returns which lists changed (tools, resources, prompts).
    fn rebuild(&self) -> (bool, bool, bool) {
        let servers = self
            .servers
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let catalog = self.sessions.catalog();
        for (server, tool, message) in
            switchboard_host::config::unknown_tool_settings(&catalog, &servers.list)
        {
            if self.warned.first(&server, &tool, "unknown tool setting") {
                tracing::warn!("{message}");
            }
        }
        let view = View::build(
            &catalog,
            &servers.list,
            self.pins.as_ref(),
            &self.warned,
            self.instructions,
        );
        let by_pair: HashMap<(String, String), usize> = view
            .tools
            .iter()
            .enumerate()
            .filter_map(|(i, t)| match view.routes.get(&t.public) {
                Some(crate::view::Route::Open { server, def }) => {
                    Some(((server.clone(), def.name.clone()), i))
                }
                _ => None,
            })
            .collect();
        // The generation before the finder: a finder replaced in between is read with the old
        // generation, so the next rebuild indexes again (never a new generation with the old
        // finder, which would be kept).
        let finder_gen = self.finder_gen.load(Ordering::SeqCst);
        let finder = self
            .finder
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let search = finder.as_ref().map(|finder| {
            // One document per listed tool: a server's second tool of the same name is not
            // listed (see `View::build`), so it is not searched either.
            let mut seen = std::collections::HashSet::new();
            let docs: Vec<Doc> = catalog
                .servers
                .values()
                .flat_map(|s| s.tools.iter().map(move |t| (s, t)))
                .filter(|(s, t)| {
                    let pair = (s.server.clone(), t.def.name.clone());
                    by_pair.contains_key(&pair) && seen.insert(pair)
                })
                .map(|(s, t)| {
                    // Searched as clients read it: with the config's texts, if any.
                    match servers.get(&s.server).and_then(|c| c.presented(&t.def)) {
                        Some(def) => Doc::from_entry(s, &switchboard_core::Entry::new(def)),
                        None => Doc::from_entry(s, t),
                    }
                })
                .collect();
            let key = docs_key(&docs);
            let previous = self.snapshot().search.clone();
            match previous {
                // Same tools, same texts, same finder: keep the index (and a build under way
                // for it).
                Some(slot) if slot.key == key && slot.finder_gen == finder_gen => slot,
                _ => search_slot(finder, finder_gen, docs, key, &self.latest_docs),
            }
        });
        let next = Arc::new(Snapshot {
            view,
            servers,
            search,
            by_pair,
        });
        let mut slot = self.snapshot.write().unwrap_or_else(|e| e.into_inner());
        let old = &slot.view;
        let new = &next.view;
        let tools = old.tools.len() != new.tools.len()
            || old
                .tools
                .iter()
                .zip(&new.tools)
                .any(|(a, b)| a.public != b.public || a.def != b.def);
        let resources = old.resources != new.resources || old.templates != new.templates;
        let prompts = old.prompts != new.prompts;
        *slot = next;
        drop(slot);
        self.rebuilt.send_modify(|v| *v += 1);
        (tools, resources, prompts)
    }

    /// Tell every connected client which lists changed.
    async fn notify(&self, tools: bool, resources: bool, prompts: bool) {
        let clients: Vec<Peer<RoleServer>> =
            self.live_clients().into_iter().map(|(p, _)| p).collect();
        // In facade mode the two tools never change; clients find changes through search.
        let tools = tools && self.expose == Expose::All;
        for peer in clients {
            let send = async {
                if tools {
                    let _ = peer.notify_tool_list_changed().await;
                }
                if resources {
                    let _ = peer.notify_resource_list_changed().await;
                }
                if prompts {
                    let _ = peer.notify_prompt_list_changed().await;
                }
            };
            if tokio::time::timeout(Duration::from_secs(2), send)
                .await
                .is_err()
            {
                tracing::debug!("a client did not take a list_changed notification in time");
            }
        }
        let listeners: Vec<SubscriptionSink> = self
            .listeners
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .map(|l| l.sink.clone())
            .collect();
        for sink in listeners {
            // A sink refuses kinds its client did not subscribe to; that is not an error here.
            let send = async {
                if tools {
                    let _ = sink.notify_tool_list_changed().await;
                }
                if resources {
                    let _ = sink.notify_resource_list_changed().await;
                }
                if prompts {
                    let _ = sink.notify_prompt_list_changed().await;
                }
            };
            let _ = tokio::time::timeout(Duration::from_secs(2), send).await;
        }
    }

    /// Stop the refresher and close every upstream session.
    pub async fn shutdown(&self) {
        self.stop.cancel();
        self.sessions.shutdown().await;
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Whether a `subscriptions/listen` stream subscribed to updates of a public URI.
/// The config's disabled entries as (name, reason).
fn disabled(config: &Config) -> Vec<(String, String)> {
    config
        .disabled
        .iter()
        .map(|d| (d.name.clone(), d.reason.clone()))
        .collect()
}

fn listens_to(sink: &SubscriptionSink, uri: &str) -> bool {
    sink.accepted()
        .resource_subscriptions
        .as_ref()
        .is_some_and(|uris| uris.iter().any(|u| u == uri))
}

/// Marks a slot ready when the build thread ends in any way, a panic included, so searches
/// never wait on a build that will not come.
struct ReadyOnDrop(Arc<SearchSlot>);

impl Drop for ReadyOnDrop {
    fn drop(&mut self) {
        self.0.ready.send_replace(true);
    }
}

/// A lexical index now and, when a model may be used, the hybrid one from a background thread
/// (embedding a large new catalog takes seconds; the request path never does it). Builds run
/// one at a time, and one whose documents are no longer the latest is skipped.
fn search_slot(
    finder: &Arc<Finder>,
    finder_gen: u64,
    docs: Vec<Doc>,
    key: u64,
    latest: &Arc<AtomicU64>,
) -> Arc<SearchSlot> {
    latest.store(key, Ordering::SeqCst);
    let upgrade = finder.may_have_model();
    let slot = Arc::new(SearchSlot::new(
        key,
        finder_gen,
        Finder::lexical_index(&docs),
        !upgrade,
    ));
    if upgrade {
        let (finder, guard, latest) = (finder.clone(), ReadyOnDrop(slot.clone()), latest.clone());
        let spawned = std::thread::Builder::new()
            .name("tool-index".into())
            .spawn(move || {
                let wanted = || latest.load(Ordering::SeqCst) == key;
                if let Some(index) = finder.index_if(&docs, wanted) {
                    guard.0.finish(index);
                }
            });
        if let Err(e) = spawned {
            tracing::warn!("tool search stays lexical: cannot start the indexing thread: {e}");
            slot.ready.send_replace(true);
        }
    }
    slot
}

/// Rebuild the view when the catalog's generation moves or the pin store changes (an approval
/// from `switchboard pins approve` in another process), and notify clients of what changed.
/// Once every upstream has first come up or failed, rebuild, report the ones not ready and
/// mark the gateway ready. Every rebuild after the first happens here, one at a time.
async fn refresh(gateway: Weak<Gateway>, stop: CancellationToken, set_ready: watch::Sender<bool>) {
    let Some(g) = gateway.upgrade() else { return };
    let mut generation = g.sessions.watch_generation();
    let mut reconfigured = g.reconfigured.subscribe();
    let mut settled = g.sessions.watch_settled();
    let mut pins_version = g.pins.as_ref().and_then(|p| p.data_version().ok());
    drop(g);
    loop {
        let ready = *set_ready.borrow();
        let (catalog_changed, now_settled, reloaded) = tokio::select! {
            _ = stop.cancelled() => return,
            r = settled.wait_for(|s| *s), if !ready => {
                // An error means the sessions are gone: nothing left to start.
                let _ = r;
                (false, true, false)
            }
            r = generation.changed() => {
                if r.is_err() {
                    return;
                }
                (true, false, false)
            }
            r = reconfigured.changed() => {
                if r.is_err() {
                    return;
                }
                (true, false, true)
            }
            _ = tokio::time::sleep(PIN_POLL) => (false, false, false),
        };
        let Some(g) = gateway.upgrade() else { return };
        if reloaded && g.model_may_differ() {
            // On a task of its own: loading takes a moment, and waits for a rebuild here.
            let g = g.clone();
            tokio::spawn(async move { g.pick_up_model("a config reload").await });
        }
        let now = g.pins.as_ref().and_then(|p| p.data_version().ok());
        if !catalog_changed && !now_settled && now == pins_version {
            continue;
        }
        pins_version = now;
        let (tools, resources, prompts) = g.rebuild();
        if now_settled {
            for s in g.sessions.statuses() {
                if !s.state.is_ready() {
                    tracing::warn!(server = %s.name, state = %s.state.describe(), "upstream server not ready");
                }
            }
            // Before notifying: requests waiting for this need not wait for slow clients.
            set_ready.send_replace(true);
        }
        if tools || resources || prompts {
            tracing::info!(tools, resources, prompts, "gateway view changed");
            g.notify(tools, resources, prompts).await;
        }
        g.tell_moved(resources).await;
    }
}

/// Relay upstream log messages to the stateless requests that asked for them and every client
/// whose level lets them through (the server named in `logger`), and resource updates to the
/// clients and streams subscribed to the resource's public URI; restore what clients asked of a
/// server whose session is new.
async fn relay_events(
    gateway: Weak<Gateway>,
    mut events: tokio::sync::broadcast::Receiver<ServerEvent>,
    stop: CancellationToken,
) {
    loop {
        let event = tokio::select! {
            _ = stop.cancelled() => return,
            e = events.recv() => e,
        };
        let event = match event {
            Ok(e) => e,
            Err(tokio::sync::broadcast::error::RecvError::Lagged(n)) => {
                tracing::warn!(missed = n, "gateway fell behind upstream log messages");
                continue;
            }
            Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
        };
        let Some(g) = gateway.upgrade() else { return };
        let clients = g.live_clients();
        match event {
            ServerEvent::Log { server, params } => {
                let params = client::tag_logger(params, &g.label(&server));
                // First to the stateless requests waiting for them: they answer soon.
                let rank = client::rank(
                    params
                        .get("level")
                        .and_then(Value::as_str)
                        .unwrap_or("info"),
                );
                lock(&g.log_taps).retain(|t| {
                    if t.servers.contains(&server) && rank >= t.min {
                        return t.sink.send(params.clone()).is_ok();
                    }
                    !t.sink.is_closed()
                });
                let Ok(message) =
                    serde_json::from_value::<LoggingMessageNotificationParam>(params.clone())
                else {
                    continue;
                };
                for (peer, c) in clients {
                    if c.wants_log(&params) {
                        let _ = peer.notify_logging_message(message.clone()).await;
                    }
                }
            }
            ServerEvent::ResourceUpdated { server, uri } => {
                let snapshot = g.snapshot();
                let Some(config) = snapshot.servers.get(&server) else {
                    continue;
                };
                let public = view::public_uri(config, &uri);
                let Ok(update) = serde_json::from_value::<ResourceUpdatedNotificationParam>(
                    serde_json::json!({ "uri": public }),
                ) else {
                    continue;
                };
                for (peer, c) in clients {
                    if c.subscribed(&public) {
                        let _ = peer.notify_resource_updated(update.clone()).await;
                    }
                }
                let sinks: Vec<SubscriptionSink> = g
                    .listeners
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .iter()
                    .filter(|l| listens_to(&l.sink, &public))
                    .map(|l| l.sink.clone())
                    .collect();
                for sink in sinks {
                    let _ = sink.notify_resource_updated(public.clone()).await;
                }
            }
            ServerEvent::Ready { server } => {
                // On a task of its own: it waits for the server, and events keep flowing.
                let g = g.clone();
                tokio::spawn(async move { g.server_back(&server).await });
            }
            _ => {}
        }
    }
}

/// A subscription whose public URI a reload took away.
struct Moved {
    /// The public URI clients subscribed to.
    public: String,
    /// Its server (by config name) and the server's own URI.
    server: String,
    uri: String,
    /// The resource's public URI now; `None` when the reload removed its server.
    now: Option<String>,
}

impl Gateway {
    /// After a reload: find the upstream subscriptions whose public URI is no longer the one
    /// their server's resource has (its `alias` changed) or whose server is gone, and set them
    /// aside for [`Self::tell_moved`]. A subscription is to a URI, and MCP has no way to move
    /// one: updates under a URI the client never subscribed to would not be read as its, so
    /// the client is told instead (as when a restarted server stops taking subscriptions).
    fn note_moved(&self, old: &ServerTable, new: &ServerTable) {
        let mut held = lock(&self.upstream_subscriptions);
        let mut moved = Vec::new();
        held.retain(|public, (server, uri)| {
            let now = new.get(server).map(|c| view::public_uri(c, uri));
            if now.as_deref() == Some(public.as_str()) || old.get(server).is_none() {
                return true;
            }
            moved.push(Moved {
                public: public.clone(),
                server: server.clone(),
                uri: uri.clone(),
                now,
            });
            false
        });
        drop(held);
        lock(&self.moved).extend(moved);
    }

    /// Tell the subscribers of what [`Self::note_moved`] set aside: a connected client gets a
    /// `notifications/resources/list_changed` (unless the rebuild just sent one) and a
    /// `warning` log message naming the old URI and the new one; a listen stream ends, so its
    /// client listens again and is told what is accepted now. The upstream subscription is
    /// dropped unless a client already wants the resource under its new URI.
    async fn tell_moved(&self, list_changed_sent: bool) {
        let moved = std::mem::take(&mut *lock(&self.moved));
        if moved.is_empty() {
            return;
        }
        // Upstream first: a client told below may subscribe to the new URI at once, and its
        // subscription must not meet this one's unsubscribe upstream.
        for m in &moved {
            let Some(now) = &m.now else { continue };
            if self.subscribed_elsewhere(now, None) {
                self.subscribed_upstream(now, &m.server, &m.uri);
            } else if !self.held_upstream(now) {
                let _ = self.sessions.unsubscribe(&m.server, &m.uri).await;
            }
        }
        let clients = self.live_clients();
        let mut told: Vec<Arc<Client>> = Vec::new();
        for m in &moved {
            let why = match &m.now {
                Some(now) => {
                    tracing::warn!(server = %m.server, old = %m.public, new = %now, "a reload changed the resource's public URI; its subscribers are told to subscribe again");
                    format!(
                        "{} is now {now}: a config reload changed the alias of server {}. Subscribe to {now} for its updates; none will come under the old URI",
                        m.public, m.server
                    )
                }
                None => {
                    tracing::warn!(server = %m.server, uri = %m.public, "a reload removed the resource's server; its subscribers are told");
                    format!(
                        "{}: a config reload removed server {}; no more updates of it will come",
                        m.public, m.server
                    )
                }
            };
            for (peer, c) in &clients {
                if !c.unsubscribe(&m.public) {
                    continue;
                }
                if !list_changed_sent && !told.iter().any(|t| Arc::ptr_eq(t, c)) {
                    let _ = peer.notify_resource_list_changed().await;
                    told.push(c.clone());
                }
                warn_client(peer, c, why.clone()).await;
            }
            for l in lock(&self.listeners).iter() {
                if listens_to(&l.sink, &m.public) {
                    l.end.cancel();
                }
            }
        }
    }
}

/// How often a search may look for a model that was missing when the facade started.
const MODEL_CHECK: Duration = Duration::from_secs(10);

/// Where the facade's model is to be found, and which one its finder has.
struct ModelWatch {
    /// `[settings] search_model`, as of the start or the last reload.
    setting: Option<std::path::PathBuf>,
    /// No look before this (`None`: look at the next chance).
    next_check: Option<tokio::time::Instant>,
    /// The model files the facade's finder has (at the start: the ones it loads at its first
    /// index); `None` when it has none from a directory (lexical, or a finder the caller
    /// passed). A reload that leads to other files loads those.
    loaded: Option<ModelFiles>,
    /// Whether the facade searches lexically because a reload led `search_model` to no model
    /// (rather than because none was there when it looked), for the message when one is found.
    dropped: bool,
    /// The model files a load last failed on, so that the same files are not loaded (and
    /// warned about) again at every look.
    failed: Option<ModelFiles>,
}

/// A model directory that has the files a model needs, and its weights' size and time.
#[derive(Clone, PartialEq)]
struct ModelFiles {
    dir: std::path::PathBuf,
    len: u64,
    modified: Option<std::time::SystemTime>,
}

impl ModelFiles {
    /// The model directory `setting` leads to, if it has what a model needs (four `stat`s).
    fn find(setting: Option<&std::path::Path>) -> Option<ModelFiles> {
        let (dir, _) = switchboard_host::finder::model_dir(setting)?;
        if !MODEL_FILES.iter().all(|f| dir.join(f).is_file()) {
            return None;
        }
        let weights = std::fs::metadata(dir.join("model.safetensors")).ok()?;
        Some(ModelFiles {
            dir,
            len: weights.len(),
            modified: weights.modified().ok(),
        })
    }
}

impl Gateway {
    /// The facade's finder (`None` without the facade).
    fn current_finder(&self) -> Option<Arc<Finder>> {
        self.finder
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Whether the facade searches lexically because its model could not be loaded (none was
    /// installed when it looked, or a reload led `search_model` to none).
    fn searches_without_model(&self) -> bool {
        self.current_finder().is_some_and(|f| !f.may_have_model())
    }

    /// After a reload: whether the facade's model may not be the one `search_model` leads to
    /// now (a few `stat`s): it searches without one, or the model files found are not the
    /// ones loaded (another directory, or the weights' size or time changed) and are not the
    /// ones a load already failed on.
    fn model_may_differ(&self) -> bool {
        let Some(finder) = self.current_finder() else {
            return false;
        };
        if !finder.may_have_model() {
            return true;
        }
        let (setting, loaded, failed) = {
            let model = lock(&self.model);
            (
                model.setting.clone(),
                model.loaded.clone(),
                model.failed.clone(),
            )
        };
        let found = ModelFiles::find(setting.as_deref());
        found != loaded && (found.is_none() || found != failed)
    }

    /// Before a search: when the facade searches without a model, look (at most every
    /// [`MODEL_CHECK`], a few `stat`s) whether one has been installed since, and if so load it
    /// as a config reload does. Then wait (no longer than a search waits for its index) for
    /// the index of a finder swapped in moments ago, so the search uses the new one.
    pub(crate) async fn model_before_search(&self) {
        let look = self.searches_without_model() && {
            let mut model = lock(&self.model);
            let now = tokio::time::Instant::now();
            let due = model.next_check.is_none_or(|at| now >= at);
            if due {
                model.next_check = Some(now + MODEL_CHECK);
            }
            due
        };
        let _ = tokio::time::timeout(SEARCH_WAIT, async {
            if look {
                self.pick_up_model("a search").await;
            }
            self.finder_indexed().await;
        })
        .await;
    }

    /// Make the facade's model the one `search_model` leads to now. When the facade runs
    /// without one and one is installed now, or the model files found are not the loaded ones
    /// (another directory, or the weights' size or time changed), load them: a new finder
    /// takes the old one's place, the index is built again (lexical at once, hybrid when the
    /// tools are embedded), and the log says so at info. When the setting leads to no model
    /// any more, search lexically from now on, with a warning. When a load fails, the finder
    /// stays as it was, with one warning; the same files are not tried again. Returns once
    /// the view has been rebuilt with the new finder, or at once when nothing changes.
    async fn pick_up_model(&self, on: &str) {
        let _one = self.loading_model.lock().await;
        let Some(current) = self.current_finder() else {
            return;
        };
        let without = !current.may_have_model();
        drop(current);
        let (setting, loaded, failed, dropped) = {
            let model = lock(&self.model);
            (
                model.setting.clone(),
                model.loaded.clone(),
                model.failed.clone(),
                model.dropped,
            )
        };
        // At the default location, a warning that no model loaded says what to run.
        let hint = switchboard_host::finder::model_dir(setting.as_deref())
            .map_or("", |(_, origin)| origin.install_hint());
        let Some(files) = ModelFiles::find(setting.as_deref()) else {
            if without {
                tracing::debug!(
                    on,
                    "no search model installed yet; tool search stays lexical"
                );
            } else if let Some(old) = loaded {
                // Lexical rather than a model the config no longer leads to; a model that
                // appears there later is picked up as after a start without one.
                self.swap_finder(Finder::lexical(), None);
                tracing::warn!(old = %old.dir.display(), on, "[settings] search_model leads to no search model now: dropped the one loaded, tool search is lexical from now on{hint}");
                self.finder_indexed().await;
            }
            return;
        };
        if failed.as_ref() == Some(&files) || (!without && loaded.as_ref() == Some(&files)) {
            return;
        }
        let load = setting.clone();
        let finder = match tokio::task::spawn_blocking(move || Finder::load(load.as_deref())).await
        {
            Ok(Ok(finder)) => finder,
            Ok(Err(e)) => {
                self.model_failed(files, without, loaded.as_ref(), &e, hint, on);
                return;
            }
            Err(e) => {
                self.model_failed(files, without, loaded.as_ref(), &e.to_string(), hint, on);
                return;
            }
        };
        let dir = files.dir.clone();
        self.swap_finder(finder, Some(files));
        match loaded.filter(|_| !without) {
            Some(old) => {
                tracing::info!(model = %dir.display(), old = %old.dir.display(), on, "the search model changed: loaded the new one in the old one's place, tool search is hybrid with it from now on")
            }
            None if without && dropped => {
                tracing::info!(model = %dir.display(), on, "[settings] search_model leads to a search model again: loaded it, tool search is hybrid from now on")
            }
            None if without => {
                tracing::info!(model = %dir.display(), on, "a search model was installed after serve started: loaded it, tool search is hybrid from now on")
            }
            None => {
                tracing::info!(model = %dir.display(), on, "loaded the search model where [settings] search_model leads now, in place of the one serve was given")
            }
        }
        self.finder_indexed().await;
    }

    /// A load of `files` failed: remember them (so they are not tried again until they
    /// change) and say so once, with what the facade searches with meanwhile and, when that
    /// is lexical, `hint` ([`switchboard_host::finder::ModelOrigin::install_hint`]).
    fn model_failed(
        &self,
        files: ModelFiles,
        without: bool,
        loaded: Option<&ModelFiles>,
        error: &str,
        hint: &str,
        on: &str,
    ) {
        let dir = files.dir.display().to_string();
        lock(&self.model).failed = Some(files);
        match loaded {
            _ if without => {
                tracing::warn!(model = %dir, on, "tool search stays lexical: the search model did not load: {error}{hint}")
            }
            Some(old) => {
                tracing::warn!(model = %dir, old = %old.dir.display(), on, "the search model where [settings] search_model leads now did not load: {error}; tool search keeps the model loaded before")
            }
            None => {
                tracing::warn!(model = %dir, on, "the search model where [settings] search_model leads now did not load: {error}; tool search keeps the model it had")
            }
        }
    }

    /// Put `finder` in the facade's old one's place, with the model files it has (`None`: it
    /// searches lexically because the setting leads to no model), and have the refresher
    /// rebuild the view with it (the view is otherwise unchanged, so clients hear nothing of
    /// it). Searches from now on wait for that (see [`Self::finder_indexed`]).
    fn swap_finder(&self, finder: Finder, files: Option<ModelFiles>) {
        *self.finder.write().unwrap_or_else(|e| e.into_inner()) = Some(Arc::new(finder));
        {
            let mut model = lock(&self.model);
            model.dropped = files.is_none();
            model.loaded = files;
        }
        self.finder_gen.fetch_add(1, Ordering::SeqCst);
        self.reconfigured.send_modify(|v| *v += 1);
    }

    /// Return once the view's search index is of the facade's newest finder (at once unless
    /// one was swapped in since the last rebuild), so that a search after a swap searches
    /// with the new finder.
    async fn finder_indexed(&self) {
        let generation = self.finder_gen.load(Ordering::SeqCst);
        let mut rebuilt = self.rebuilt.subscribe();
        while self
            .snapshot()
            .search
            .as_ref()
            .is_some_and(|slot| slot.finder_gen < generation)
        {
            if rebuilt.changed().await.is_err() {
                return;
            }
        }
    }
}

/// A `warning` log message from switchboard itself to one client, if its log level lets it
/// through.
async fn warn_client(peer: &Peer<RoleServer>, c: &Client, text: String) {
    let params = client::tag_logger(
        serde_json::json!({"level": "warning", "data": text}),
        "switchboard",
    );
    if c.wants_log(&params)
        && let Ok(message) = serde_json::from_value::<LoggingMessageNotificationParam>(params)
    {
        let _ = peer.notify_logging_message(message).await;
    }
}
