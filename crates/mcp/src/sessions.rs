//! `Sessions`: the public face of this crate. It starts one supervisor per configured server,
//! keeps the merged catalog and each server's status, and routes calls to live sessions.
// logging/setLevel and resources/subscribe are deprecated by SEP-2577 / 2026-07-28 in rmcp 3.x,
// but servers on 2025-11-25 and earlier use them.
#![allow(deprecated)]

use std::sync::{Arc, Mutex, RwLock, RwLockReadGuard};
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientRequest, CompleteRequest, CompleteRequestParams,
    GetPromptRequest, GetPromptRequestParams, ReadResourceRequest, ReadResourceRequestParams,
    ServerResult, SetLevelRequest, SetLevelRequestParams, SubscribeRequest, SubscribeRequestParams,
    UnsubscribeRequest, UnsubscribeRequestParams,
};
use rmcp::service::ServiceError;
use serde_json::{Map, Value};
use switchboard_core::{CallResult, Catalog, ServerCatalog, ServerSpec};
use tokio::sync::{broadcast, mpsc, oneshot, watch};
use tokio::task::JoinHandle;
use tokio_util::sync::{CancellationToken, DropGuard};

use crate::connect;
use crate::convert;
use crate::error::{SessionError, chain};
use crate::raw::RawCaller;
use crate::relay::{ServerEvent, Upcall};
use crate::request::{self, Relay};
use crate::slot::{Ready, Slot, lock};
use crate::status::{ServerState, ServerStatus};
use crate::supervisor;
use crate::task;

/// Live sessions to every configured server. Cheap to clone; all clones share the sessions.
#[derive(Clone)]
pub struct Sessions {
    inner: Arc<Inner>,
}

struct Inner {
    shared: Arc<Shared>,
    tasks: Mutex<Vec<JoinHandle<()>>>,
    /// Becomes true once every server has either become ready or failed for the first time.
    settled: watch::Receiver<bool>,
    /// Dropping the last `Sessions` without `shutdown` still tells every supervisor to close.
    _close_on_drop: DropGuard,
}

/// State shared by `Sessions` and the supervisors.
pub(crate) struct Shared {
    /// The configured servers, in configuration order. Replaced as a whole by
    /// [`Sessions::reconfigure`]; a supervisor holds its own slot, which stays valid after it is
    /// replaced (its supervisor is told to stop through the slot's `stop`).
    slots: RwLock<Vec<Arc<Slot>>>,
    catalog: Mutex<Catalog>,
    generation: watch::Sender<u64>,
    pub(crate) shutdown: CancellationToken,
    /// One client for every HTTP server, so connections are pooled and reused. Built when the
    /// first HTTP server connects: its TLS setup costs memory a stdio-only gateway never needs.
    http: std::sync::OnceLock<reqwest::Client>,
    /// Log messages and resource updates from every server.
    pub(crate) events: broadcast::Sender<ServerEvent>,
    /// The roots these sessions' servers were last told of (see [`Sessions::set_roots`]).
    told_roots: Mutex<Arc<Vec<crate::Root>>>,
    /// An HTTP server that cannot be reached as it starts is tried again, not given up on
    /// (see [`Sessions::launch_retrying`]).
    pub(crate) retry_unreachable: bool,
}

/// Events a slow listener may fall behind by before it misses some.
const EVENT_BACKLOG: usize = 256;

impl Drop for Inner {
    /// The last `Sessions` went away without `shutdown`: the supervisors are told to close
    /// (the drop guard), but they may never run again if the runtime is going down too, so kill
    /// every server process group now. No child outlives its `Sessions`.
    fn drop(&mut self) {
        for slot in self.shared.slots().iter() {
            supervisor::kill_group(slot.pid());
        }
    }
}

impl Shared {
    /// The HTTP client, built on first use.
    pub(crate) fn http(&self) -> &reqwest::Client {
        self.http.get_or_init(|| {
            reqwest::Client::builder().build().unwrap_or_else(|e| {
                // Building fails only when the TLS backend cannot initialize; HTTP servers will
                // then fail to connect with that error.
                tracing::error!(error = %chain(&e), "HTTP client setup failed; using defaults");
                reqwest::Client::new()
            })
        })
    }

    /// The configured servers (lock order: `slots` before `catalog`).
    pub(crate) fn slots(&self) -> RwLockReadGuard<'_, Vec<Arc<Slot>>> {
        self.slots.read().unwrap_or_else(|e| e.into_inner())
    }

    /// Replace one server's catalog; publish the new generation when it changed. Nothing
    /// happens for a slot that a reconfiguration has replaced or removed: its listing must not
    /// overwrite the new server's, nor bring back a removed one.
    pub(crate) fn publish(&self, slot: &Slot, server: ServerCatalog) -> bool {
        let slots = self.slots();
        if !slots.iter().any(|s| std::ptr::eq(&**s, slot)) {
            return false;
        }
        let mut catalog = lock(&self.catalog);
        let changed = catalog.upsert(server);
        if changed {
            self.generation.send_replace(catalog.generation);
        }
        changed
    }

    /// Drop a server that was given up on from the catalog (unless its slot was replaced).
    pub(crate) fn withdraw(&self, slot: &Slot) {
        let slots = self.slots();
        if !slots.iter().any(|s| std::ptr::eq(&**s, slot)) {
            return;
        }
        let mut catalog = lock(&self.catalog);
        if catalog.remove(&slot.spec.name) {
            self.generation.send_replace(catalog.generation);
        }
    }
}

/// What [`Sessions::reconfigure`] did, by server name.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Reconfigured {
    /// New servers, starting.
    pub started: Vec<String>,
    /// Servers no longer configured, closed.
    pub stopped: Vec<String>,
    /// Servers whose spec changed, closed and starting again.
    pub restarted: Vec<String>,
    /// Servers left running as they were.
    pub kept: Vec<String>,
}

impl Reconfigured {
    /// Whether anything was started or stopped.
    pub fn changed(&self) -> bool {
        !(self.started.is_empty() && self.stopped.is_empty() && self.restarted.is_empty())
    }
}

/// The slots to supervise: the first of each name. Calls and the catalog are keyed by name, so
/// a second server with the same name could never be reached; the config layer refuses it, and
/// it is marked failed here too.
fn unique(slots: &[Arc<Slot>]) -> impl Iterator<Item = Arc<Slot>> + '_ {
    let mut names = std::collections::HashSet::new();
    slots.iter().filter_map(move |slot| {
        if names.insert(slot.spec.name.as_str()) {
            return Some(slot.clone());
        }
        slot.set_state(ServerState::Failed {
            reason: format!(
                "another server is already named \"{}\"; this entry was not started",
                slot.spec.name
            ),
        });
        None
    })
}

impl Sessions {
    /// Connect every server concurrently, each bounded by its `startup_timeout`, and return
    /// once each has either become ready or failed. Never fails as a whole: a server that cannot
    /// be spawned, reached or initialized is reported `Failed` with a specific reason.
    pub async fn start(specs: Vec<ServerSpec>) -> Sessions {
        let sessions = Sessions::launch(specs);
        sessions.settled().await;
        sessions
    }

    /// Start connecting every server concurrently and return at once; [`Sessions::settled`]
    /// says when each has become ready or failed. Meanwhile a server that is still starting is
    /// `Starting` in [`Sessions::statuses`] and absent from the catalog, and the catalog's
    /// generation moves as servers come up. Must be called within a tokio runtime.
    pub fn launch(specs: Vec<ServerSpec>) -> Sessions {
        Sessions::launched(specs, false)
    }

    /// [`Sessions::launch`] for a host that runs for long (a gateway): an HTTP server that
    /// cannot be reached as it starts (the connection fails, or it does not answer within its
    /// startup timeout) is reported failed, saying it is tried again, and tried every 10 s
    /// from then on; its tools join the catalog when it comes up. Other failures (a login
    /// needed, a broken handshake, a command that does not run) are given up on at once, as
    /// by `launch`.
    pub fn launch_retrying(specs: Vec<ServerSpec>) -> Sessions {
        Sessions::launched(specs, true)
    }

    fn launched(specs: Vec<ServerSpec>, retry_unreachable: bool) -> Sessions {
        let (generation, _) = watch::channel(0);
        let shutdown = CancellationToken::new();
        let shared = Arc::new(Shared {
            slots: RwLock::new(
                specs
                    .into_iter()
                    .map(|spec| Arc::new(Slot::new(spec, shutdown.child_token())))
                    .collect(),
            ),
            catalog: Mutex::new(Catalog::new()),
            generation,
            shutdown: shutdown.clone(),
            http: std::sync::OnceLock::new(),
            events: broadcast::channel(EVENT_BACKLOG).0,
            told_roots: Mutex::new(crate::roots::roots()),
            retry_unreachable,
        });
        let mut tasks = Vec::new();
        let mut firsts = Vec::new();
        let slots: Vec<Arc<Slot>> = shared.slots().clone();
        for slot in unique(&slots) {
            let (tx, rx) = oneshot::channel();
            tasks.push(tokio::spawn(supervisor::supervise(
                shared.clone(),
                slot,
                tx,
            )));
            firsts.push(rx);
        }
        let (settle, settled) = watch::channel(firsts.is_empty());
        if !firsts.is_empty() {
            tokio::spawn(async move {
                for rx in firsts {
                    // An error means the supervisor ended early, which also counts as an outcome.
                    let _ = rx.await;
                }
                settle.send_replace(true);
            });
        }
        Sessions {
            inner: Arc::new(Inner {
                shared,
                tasks: Mutex::new(tasks),
                settled,
                _close_on_drop: shutdown.drop_guard(),
            }),
        }
    }

    /// Wait until every server has either become ready or failed for the first time (at once
    /// when that has happened already; a later restart does not count).
    pub async fn settled(&self) {
        let mut settled = self.inner.settled.clone();
        // An error means the settling task is gone without saying so: nothing left to wait for.
        let _ = settled.wait_for(|s| *s).await;
    }

    /// A receiver that turns true once every server has either become ready or failed for the
    /// first time.
    pub fn watch_settled(&self) -> watch::Receiver<bool> {
        self.inner.settled.clone()
    }

    /// One status per configured server, in configuration order.
    pub fn statuses(&self) -> Vec<ServerStatus> {
        let shared = &self.inner.shared;
        let slots = shared.slots();
        let catalog = lock(&shared.catalog);
        slots
            .iter()
            .map(|slot| slot.status(catalog.servers.get(&slot.spec.name)))
            .collect()
    }

    /// The servers that have roots of their own (`ServerSpec::roots`), with them, in the
    /// servers' order: [`Sessions::set_roots`] leaves these alone.
    pub fn own_roots(&self) -> Vec<(String, Vec<crate::Root>)> {
        self.inner
            .shared
            .slots()
            .iter()
            .filter_map(|slot| {
                let roots = slot.spec.roots.clone()?;
                Some((slot.spec.name.clone(), roots))
            })
            .collect()
    }

    /// Serve `specs` from now on, in their order: a server whose spec is unchanged keeps its
    /// session (and its process, and whatever state it holds); a new one starts; a removed one
    /// is closed and its tools leave the catalog at once; a changed one (command, arguments,
    /// environment, URL, headers or timeouts) is closed and started again from its new spec, and
    /// so is one that had failed.
    /// Returns at once; new servers come up as at the start, and the catalog's generation
    /// moves as they do.
    pub fn reconfigure(&self, specs: Vec<ServerSpec>) -> Reconfigured {
        let shared = &self.inner.shared;
        let mut outcome = Reconfigured::default();
        let mut slots = shared.slots.write().unwrap_or_else(|e| e.into_inner());
        let old = std::mem::take(&mut *slots);
        let mut fresh = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for spec in specs {
            if !seen.insert(spec.name.clone()) {
                // A second entry of a name: listed, and marked failed by `unique` below.
                slots.push(Arc::new(Slot::new(spec, shared.shutdown.child_token())));
                continue;
            }
            match old.iter().find(|s| s.spec.name == spec.name) {
                // A server that failed is started again: the reload may be the fix.
                Some(kept)
                    if kept.spec == spec && !kept.stop.is_cancelled() && !kept.is_failed() =>
                {
                    outcome.kept.push(spec.name.clone());
                    slots.push(kept.clone());
                }
                previous => {
                    if previous.is_some() {
                        outcome.restarted.push(spec.name.clone());
                    } else {
                        outcome.started.push(spec.name.clone());
                    }
                    let slot = Arc::new(Slot::new(spec, shared.shutdown.child_token()));
                    fresh.push(slot.clone());
                    slots.push(slot);
                }
            }
        }
        let current = slots.clone();
        drop(slots);
        let mut catalog = lock(&shared.catalog);
        let mut withdrawn = false;
        for slot in &old {
            if current.iter().any(|s| Arc::ptr_eq(s, slot)) {
                continue;
            }
            slot.stop.cancel();
            if !current.iter().any(|s| s.spec.name == slot.spec.name) {
                outcome.stopped.push(slot.spec.name.clone());
            }
            // A changed server's old tools leave too: the new process lists its own.
            withdrawn |= catalog.remove(&slot.spec.name);
        }
        if withdrawn {
            shared.generation.send_replace(catalog.generation);
        }
        drop(catalog);
        let unique: Vec<Arc<Slot>> = unique(&current).collect();
        let mut tasks = lock(&self.inner.tasks);
        tasks.retain(|t| !t.is_finished());
        for slot in fresh {
            if !unique.iter().any(|u| Arc::ptr_eq(u, &slot)) {
                continue;
            }
            let (tx, _) = oneshot::channel();
            tasks.push(tokio::spawn(supervisor::supervise(
                shared.clone(),
                slot,
                tx,
            )));
        }
        outcome
    }

    /// Close `server`'s session and start it again from its spec: a server that failed (a
    /// login, an install or a fix made since), or one that is stuck. Its tools stay listed
    /// meanwhile, as in a restart after a crash; calls to it fail with `NotReady` until it is
    /// back. Returns once the new session is ready or has failed (its status says which), or
    /// at once with `UnknownServer` for a name not configured.
    pub async fn restart(&self, server: &str) -> Result<ServerStatus, SessionError> {
        let shared = &self.inner.shared;
        let (fresh, old) = {
            let mut slots = shared.slots.write().unwrap_or_else(|e| e.into_inner());
            let Some(i) = slots.iter().position(|s| s.spec.name == server) else {
                return Err(SessionError::UnknownServer {
                    server: server.to_string(),
                });
            };
            let old = slots[i].clone();
            let fresh = Arc::new(Slot::new(old.spec.clone(), shared.shutdown.child_token()));
            slots[i] = fresh.clone();
            (fresh, old)
        };
        old.stop.cancel();
        let (tx, first) = oneshot::channel();
        {
            let mut tasks = lock(&self.inner.tasks);
            tasks.retain(|t| !t.is_finished());
            tasks.push(tokio::spawn(supervisor::supervise(
                shared.clone(),
                fresh.clone(),
                tx,
            )));
        }
        // An error means the supervisor ended early, which is an outcome too.
        let _ = first.await;
        let catalog = lock(&shared.catalog);
        Ok(fresh.status(catalog.servers.get(server)))
    }

    /// A snapshot of the catalog: every server that has been listed and not given up on.
    /// A server that is restarting keeps its last listing, so a brief crash does not make its
    /// tools vanish from the model's view; calls to it fail with `NotReady` meanwhile.
    pub fn catalog(&self) -> Catalog {
        lock(&self.inner.shared.catalog).clone()
    }

    /// The catalog's generation; it increases exactly when the catalog's content changes.
    pub fn generation(&self) -> u64 {
        *self.inner.shared.generation.borrow()
    }

    /// A receiver that sees every new catalog generation.
    pub fn watch_generation(&self) -> watch::Receiver<u64> {
        self.inner.shared.generation.subscribe()
    }

    /// Call a tool with the server's configured call timeout.
    pub async fn call_tool(
        &self,
        server: &str,
        tool: &str,
        args: Map<String, Value>,
    ) -> Result<CallResult, SessionError> {
        let timeout = self.slot(server)?.spec.call_timeout;
        self.call_tool_with_timeout(server, tool, args, timeout)
            .await
    }

    /// Call a tool, giving up after `timeout`. On timeout (or if this future is dropped) the
    /// request is cancelled on the wire with `notifications/cancelled`.
    pub async fn call_tool_with_timeout(
        &self,
        server: &str,
        tool: &str,
        args: Map<String, Value>,
        timeout: Duration,
    ) -> Result<CallResult, SessionError> {
        let session = self.ready_peer(server)?;
        self.call_on(&session, server, tool, args, timeout, None, None)
            .await
    }

    /// True when `server` lists `tool` as one that runs only as a task (MCP 2025-11-25's
    /// `execution.taskSupport: "required"`); calls to it through these sessions ask for the
    /// task and wait for its result, which a raw call ([`Self::raw_caller`]) does not.
    pub fn runs_as_task(&self, server: &str, tool: &str) -> bool {
        lock(&self.inner.shared.catalog)
            .servers
            .get(server)
            .and_then(|s| s.tool(tool))
            .is_some_and(|t| t.def.requires_task())
    }

    /// Call `tool` on a ready session: as a task when its definition requires one (the result
    /// is then fetched with `tasks/result`, see `task`), else with one `tools/call`.
    #[allow(clippy::too_many_arguments)]
    async fn call_on(
        &self,
        session: &Ready,
        server: &str,
        tool: &str,
        args: Map<String, Value>,
        timeout: Duration,
        relay: Option<Relay<'_>>,
        upcalls: Option<&mpsc::UnboundedSender<Upcall>>,
    ) -> Result<CallResult, SessionError> {
        let as_task = self.runs_as_task(server, tool);
        let request = if as_task {
            task::call_request(tool, args, timeout)
        } else {
            let params = CallToolRequestParams::new(tool.to_string()).with_arguments(args);
            ClientRequest::CallToolRequest(CallToolRequest::new(params))
        };
        let started = tokio::time::Instant::now();
        // A task's call stays registered with its relay while the task runs: the server may
        // report the task's progress under the call's token (MCP 2025-11-25).
        let (mut result, _kept) = if as_task {
            request::send_keeping(&session.peer, request, timeout, relay).await
        } else {
            request::send_relayed(&session.peer, &session.roots, request, timeout, relay)
                .await
                .map(|r| (r, None))
        }
        .map_err(|e| self.failed(session, server, tool, e))?;
        if as_task && let Some(created) = task::created(&result) {
            let left = timeout.saturating_sub(started.elapsed());
            result = task::finish(&session.peer, &session.roots, created, left, relay, upcalls)
                .await
                .map_err(|e| match e {
                    // The call's whole time ran out, not only the wait for the result.
                    ServiceError::Timeout { .. } => ServiceError::Timeout { timeout },
                    e => e,
                })
                .map_err(|e| self.failed(session, server, tool, e))?;
        }
        self.tool_result(server, tool, result)
    }

    /// A tool call's result as core carries it.
    fn tool_result(
        &self,
        server: &str,
        tool: &str,
        result: ServerResult,
    ) -> Result<CallResult, SessionError> {
        if request::needs_more(&result) {
            return Err(SessionError::Protocol {
                server: server.to_string(),
                detail: format!(
                    "tool \"{tool}\" asked for more input or became a task, which switchboard does not support"
                ),
            });
        }
        if let ServerResult::CallToolResult(typed) = result {
            return Ok(convert::typed_call_result(typed));
        }
        let value = request::to_json(result);
        convert::call_result(&value).ok_or_else(|| SessionError::Protocol {
            server: server.to_string(),
            detail: convert::not_a_result(tool, &value.to_string()),
        })
    }

    /// Call a tool with the server's configured call timeout, sending what the server reports
    /// about the call meanwhile to `upcalls`: its progress, and its sampling and elicitation
    /// requests (answered through each [`Upcall::Request`]'s reply; a server request made while
    /// several relayed calls run on the same server is answered as without relays, since it
    /// does not say which call it belongs to).
    pub async fn call_tool_relayed(
        &self,
        server: &str,
        tool: &str,
        args: Map<String, Value>,
        upcalls: mpsc::UnboundedSender<Upcall>,
    ) -> Result<CallResult, SessionError> {
        self.relay_call(server, tool, args, Some(&upcalls), None)
            .await
    }

    /// [`Self::call_tool_relayed`], giving up after `timeout` instead of the server's
    /// configured call timeout.
    pub async fn call_tool_relayed_with_timeout(
        &self,
        server: &str,
        tool: &str,
        args: Map<String, Value>,
        timeout: Duration,
        upcalls: mpsc::UnboundedSender<Upcall>,
    ) -> Result<CallResult, SessionError> {
        self.relay_call(server, tool, args, Some(&upcalls), Some(timeout))
            .await
    }

    /// [`Self::call_tool_relayed`] for a caller that can take nothing back (a gateway client
    /// that asked for no progress and can answer no server request). Nothing is relayed, but
    /// the call counts as one of the server's relayed calls in flight, so a server request
    /// made meanwhile is never handed to another relayed call; it gets the default answer.
    pub async fn call_tool_unrelayed(
        &self,
        server: &str,
        tool: &str,
        args: Map<String, Value>,
    ) -> Result<CallResult, SessionError> {
        self.relay_call(server, tool, args, None, None).await
    }

    async fn relay_call(
        &self,
        server: &str,
        tool: &str,
        args: Map<String, Value>,
        upcalls: Option<&mpsc::UnboundedSender<Upcall>>,
        timeout: Option<Duration>,
    ) -> Result<CallResult, SessionError> {
        let slot = self.slot(server)?;
        let session = slot.ready()?;
        let relay = (&slot.relays, upcalls);
        let timeout = timeout.unwrap_or(slot.spec.call_timeout);
        self.call_on(&session, server, tool, args, timeout, Some(relay), upcalls)
            .await
    }

    /// The call timeout of `server` (its config's `call_timeout`), when it is configured.
    pub fn call_timeout(&self, server: &str) -> Option<Duration> {
        self.slot(server).ok().map(|slot| slot.spec.call_timeout)
    }

    /// The raw call path of `server` for one call: `None` unless it is a ready stdio session.
    /// See [`RawCaller::call`]; a caller that gets `None` uses the typed calls above.
    pub fn raw_caller(&self, server: &str) -> Option<RawCaller> {
        let slot = self.slot(server).ok()?;
        let ready = slot.ready().ok()?;
        Some(RawCaller {
            link: ready.raw?,
            server: slot.name.clone(),
            timeout: slot.spec.call_timeout,
            suspect: ready.suspect,
            relays: slot.relays.clone(),
        })
    }

    /// Log messages (`notifications/message`), resource updates and new sessions
    /// ([`ServerEvent::Ready`]) of every server, from now on. A listener that falls more than a few hundred events behind misses some.
    pub fn events(&self) -> broadcast::Receiver<ServerEvent> {
        self.inner.shared.events.subscribe()
    }

    /// The capabilities a live server declared, as wire JSON (`None` when it is not ready).
    pub fn capabilities(&self, server: &str) -> Option<Value> {
        let session = self.ready_peer(server).ok()?;
        let info = session.peer.peer_info()?;
        serde_json::to_value(&info.capabilities).ok()
    }

    /// `logging/setLevel` on a server (`level` as on the wire: "debug", "info", ...).
    pub async fn set_log_level(&self, server: &str, level: &str) -> Result<(), SessionError> {
        let params: SetLevelRequestParams =
            serde_json::from_value(serde_json::json!({ "level": level })).map_err(|e| {
                SessionError::Protocol {
                    server: server.to_string(),
                    detail: format!("invalid log level {level:?}: {e}"),
                }
            })?;
        let request = ClientRequest::SetLevelRequest(SetLevelRequest::new(params));
        self.request(server, request, "logging/setLevel").await?;
        Ok(())
    }

    /// `completion/complete` on a server; `params` and the returned result are wire JSON
    /// (`ref`, `argument`, `context`; the result's `completion`).
    pub async fn complete(&self, server: &str, params: Value) -> Result<Value, SessionError> {
        let params: CompleteRequestParams =
            serde_json::from_value(params).map_err(|e| SessionError::Protocol {
                server: server.to_string(),
                detail: format!("invalid completion request: {e}"),
            })?;
        let request = ClientRequest::CompleteRequest(CompleteRequest::new(params));
        let result = self.request(server, request, "completion/complete").await?;
        Ok(request::to_json(result))
    }

    /// `resources/subscribe` to one of a server's URIs; updates arrive as
    /// [`ServerEvent::ResourceUpdated`].
    pub async fn subscribe(&self, server: &str, uri: &str) -> Result<(), SessionError> {
        let request = ClientRequest::SubscribeRequest(SubscribeRequest::new(
            SubscribeRequestParams::new(uri),
        ));
        self.request(server, request, uri).await?;
        Ok(())
    }

    /// `resources/unsubscribe` from one of a server's URIs.
    pub async fn unsubscribe(&self, server: &str, uri: &str) -> Result<(), SessionError> {
        let request = ClientRequest::UnsubscribeRequest(UnsubscribeRequest::new(
            UnsubscribeRequestParams::new(uri),
        ));
        self.request(server, request, uri).await?;
        Ok(())
    }

    /// One plain request with the server's call timeout.
    async fn request(
        &self,
        server: &str,
        request: ClientRequest,
        target: &str,
    ) -> Result<ServerResult, SessionError> {
        let session = self.ready_peer(server)?;
        let timeout = self.slot(server)?.spec.call_timeout;
        self.send(&session, request, timeout, server, target).await
    }

    /// Read a resource; returns the result's `contents` array as wire JSON.
    pub async fn read_resource(&self, server: &str, uri: &str) -> Result<Value, SessionError> {
        let session = self.ready_peer(server)?;
        let timeout = self.slot(server)?.spec.call_timeout;
        let request = ClientRequest::ReadResourceRequest(ReadResourceRequest::new(
            ReadResourceRequestParams::new(uri),
        ));
        let result = self.send(&session, request, timeout, server, uri).await?;
        let mut value = request::to_json(result);
        match value.get_mut("contents") {
            Some(contents @ Value::Array(_)) => Ok(contents.take()),
            _ => Err(SessionError::Protocol {
                server: server.to_string(),
                detail: format!("reading \"{uri}\" returned no contents array"),
            }),
        }
    }

    /// Get a prompt with arguments; returns the whole result (`description`, `messages`) as
    /// wire JSON.
    pub async fn get_prompt(
        &self,
        server: &str,
        name: &str,
        args: Map<String, Value>,
    ) -> Result<Value, SessionError> {
        let session = self.ready_peer(server)?;
        let timeout = self.slot(server)?.spec.call_timeout;
        let mut params = GetPromptRequestParams::new(name);
        if !args.is_empty() {
            params = params.with_arguments(args);
        }
        let request = ClientRequest::GetPromptRequest(GetPromptRequest::new(params));
        let result = self.send(&session, request, timeout, server, name).await?;
        let value = request::to_json(result);
        if value.get("messages").is_some_and(Value::is_array) {
            Ok(value)
        } else {
            Err(SessionError::Protocol {
                server: server.to_string(),
                detail: format!("prompt \"{name}\" returned no messages array"),
            })
        }
    }

    /// Close every session and wait until they are closed. Every child process is killed
    /// (after a short grace period to exit on stdin EOF) and reaped.
    pub async fn shutdown(&self) {
        self.inner.shared.shutdown.cancel();
        let tasks = std::mem::take(&mut *lock(&self.inner.tasks));
        for task in tasks {
            if let Err(e) = task.await {
                tracing::warn!(error = %e, "a session supervisor ended abnormally");
            }
        }
    }

    /// Offer `roots` from now on (see [`crate::configure_roots`]) and, when they differ from
    /// the ones these sessions last offered, tell every open session whose server has no roots
    /// of its own (`notifications/roots/list_changed`), so its server asks again. Returns
    /// whether they differed, once each server that asked for roots before has asked again and
    /// had a moment to take them in (up to 2 s for one that does not ask). A server that cannot
    /// be told asks at its next session.
    pub async fn set_roots(&self, roots: Vec<crate::Root>) -> bool {
        crate::roots::configure_roots(roots.clone());
        {
            let mut told = lock(&self.inner.shared.told_roots);
            if **told == roots {
                return false;
            }
            *told = Arc::new(roots);
        }
        let slots: Vec<Arc<Slot>> = self.inner.shared.slots().clone();
        let told = slots.into_iter().map(|slot| async move {
            // A server with roots of its own keeps them.
            if slot.roots_offer.is_own() {
                return;
            }
            let Ok(ready) = slot.ready() else { return };
            let asks = slot.roots_offer.has_asked();
            let sent = std::time::Instant::now();
            #[allow(deprecated)]
            if let Err(e) = ready.peer.notify_roots_list_changed().await {
                tracing::debug!(server = %slot.spec.name, error = %e, "roots/list_changed not sent");
                return;
            }
            if asks
                && slot
                    .roots_offer
                    .asked_since(sent, crate::roots::ASK_AGAIN)
                    .await
            {
                slot.roots_offer.settled().await;
            }
        });
        futures::future::join_all(told).await;
        true
    }

    /// Call a tool with its server's call timeout kept by [`crate::call_answering`]'s clock:
    /// each upcall (progress, a form, a question for the model) goes to `answer` as it comes,
    /// the clock stops while `answer` runs and starts again at each progress report; a
    /// timeout names the stray ids the server answered under meanwhile.
    pub async fn call_tool_answering<A, F>(
        &self,
        server: &str,
        tool: &str,
        args: Map<String, Value>,
        answer: A,
    ) -> Result<CallResult, SessionError>
    where
        A: FnMut(Upcall) -> F,
        F: std::future::Future<Output = ()>,
    {
        let timeout = self
            .call_timeout(server)
            .unwrap_or(switchboard_core::server::DEFAULT_CALL_TIMEOUT);
        crate::call_answering(
            server,
            tool,
            timeout,
            |ceiling, sink| self.call_tool_relayed_with_timeout(server, tool, args, ceiling, sink),
            answer,
        )
        .await
        .map_err(|e| self.explained(server, e))
    }

    /// `e` with what the session knows about it added: for a timeout kept by the caller's own
    /// clock ([`crate::call_answering`]), the ids the server answered under meanwhile that
    /// switchboard never sent (a server bug that looks like slowness).
    pub fn explained(&self, server: &str, e: SessionError) -> SessionError {
        match e {
            SessionError::Timeout {
                server: name,
                tool,
                after,
                quiet,
                stray: None,
            } => {
                let stray = self.slot(server).ok().and_then(|s| s.ids.explain(after));
                SessionError::Timeout {
                    server: name,
                    tool,
                    after,
                    quiet,
                    stray,
                }
            }
            other => other,
        }
    }

    /// The pid of a stdio server's current child process (also its process group id).
    #[doc(hidden)]
    pub fn child_pid(&self, server: &str) -> Option<u32> {
        self.slot(server).ok().and_then(|s| s.pid())
    }

    fn slot(&self, server: &str) -> Result<Arc<Slot>, SessionError> {
        self.inner
            .shared
            .slots()
            .iter()
            .find(|s| s.spec.name == server)
            .cloned()
            .ok_or_else(|| SessionError::UnknownServer {
                server: server.to_string(),
            })
    }

    fn ready_peer(&self, server: &str) -> Result<Ready, SessionError> {
        self.slot(server)?.ready()
    }

    /// Send one request on a ready session. A request that finds the session closed marks it
    /// suspect, so the supervisor reconnects instead of letting later calls fail the same way.
    async fn send(
        &self,
        session: &Ready,
        request: ClientRequest,
        timeout: Duration,
        server: &str,
        target: &str,
    ) -> Result<ServerResult, SessionError> {
        match request::send(&session.peer, &session.roots, request, timeout).await {
            Ok(result) => Ok(result),
            Err(e) => Err(self.failed(session, server, target, e)),
        }
    }

    /// Classify a failed request; one that found the session closed marks it suspect, and
    /// says why when the stdio reader cut the server off (see `RawLink::break_off`).
    fn failed(&self, session: &Ready, server: &str, target: &str, e: ServiceError) -> SessionError {
        // An HTTP server that refused the request's credentials did not end the session: say
        // what it refused, and leave the session be (a reconnect would send the same).
        if let ServiceError::TransportSend(sent) = &e
            && let Some((status, challenge)) = connect::refusal_in(sent.error.as_ref())
            && let Ok(slot) = self.slot(server)
        {
            let detail = if connect::own_credentials(&slot.spec.transport) {
                connect::refused_detail(&slot.spec.transport, status, challenge)
            } else {
                connect::oauth_refusal_hint(server, status, challenge)
            };
            return SessionError::Auth {
                server: server.to_string(),
                detail,
            };
        }
        let mut error = service_error(server, target, e);
        if let SessionError::Timeout { after, stray, .. } = &mut error
            && let Ok(slot) = self.slot(server)
        {
            *stray = slot.ids.explain(*after);
        }
        if let SessionError::Closed { detail, .. } = &mut error {
            if let Some(why) = session.raw.as_ref().and_then(|link| link.why()) {
                *detail = why.to_string();
            }
            session.suspect.notify_one();
        }
        error
    }
}

/// Classify an rmcp error; `target` is the tool, URI or prompt the request was about.
fn service_error(server: &str, target: &str, error: ServiceError) -> SessionError {
    let server = server.to_string();
    match error {
        ServiceError::McpError(e) => SessionError::Rpc {
            server,
            code: e.code.0,
            message: e.message.to_string(),
            data: e.data,
        },
        ServiceError::TransportClosed | ServiceError::Cancelled { .. } => SessionError::Closed {
            server,
            detail:
                "the session ended while the request was in flight (the server exited or hung up)"
                    .to_string(),
        },
        ServiceError::TransportSend(e) => SessionError::Closed {
            server,
            // Its Display names rmcp's transport type (`Transport [WorkerTransport<...>]
            // error: ...`); the error inside is what went wrong.
            detail: format!("sending the request failed: {}", chain(&*e.error)),
        },
        ServiceError::Timeout { timeout } => SessionError::Timeout {
            server,
            tool: target.to_string(),
            after: timeout,
            quiet: None,
            stray: None,
        },
        other => SessionError::Protocol {
            server,
            detail: other.to_string(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_send_names_the_error_not_the_transport_type() {
        let inner =
            std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "connection refused");
        let e = ServiceError::TransportSend(rmcp::transport::DynamicTransportError::from_parts(
            "rmcp::transport::worker::WorkerTransport<Http>",
            std::any::TypeId::of::<()>(),
            Box::new(inner),
        ));
        let error = service_error("web", "echo", e);
        let text = error.to_string();
        assert!(matches!(error, SessionError::Closed { .. }), "{text}");
        assert_eq!(
            text,
            "server \"web\" closed the session: sending the request failed: connection refused"
        );
    }
}
