//! `Slot`: one configured server's spec and its changing live state (state, session peer,
//! child pid, last connect). Supervisors write it; `Sessions` reads it for calls and statuses.

use std::sync::{Arc, Mutex, MutexGuard};

use rmcp::RoleClient;
use rmcp::service::Peer;
use switchboard_core::{ServerCatalog, ServerInfo, ServerSpec};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::error::SessionError;
use crate::execution::Executions;
use crate::ids::Ids;
use crate::raw::RawLink;
use crate::relay::Relays;
use crate::status::{ServerState, ServerStatus};
use crate::stderr::StderrTail;

/// One configured server.
pub(crate) struct Slot {
    pub(crate) spec: ServerSpec,
    /// The server's name, shared by every raw call made to it (no copy per call).
    pub(crate) name: Arc<str>,
    pub(crate) tail: StderrTail,
    /// Relayed calls in flight, shared with each session's handler.
    pub(crate) relays: Arc<Relays>,
    /// What the server's tool lists say of each tool's `execution`.
    pub(crate) executions: Arc<Executions>,
    /// The roots the server is offered, and when it last asked for them.
    pub(crate) roots_offer: Arc<crate::roots::Offer>,
    /// The requests outstanding on a stdio session, and the stray ids the server answered
    /// under (see `ids`).
    pub(crate) ids: Arc<Ids>,
    /// Tells its supervisor to close the session and end: at shutdown (a child of the
    /// sessions' token), or when a reconfiguration removes or replaces this server.
    pub(crate) stop: CancellationToken,
    live: Mutex<Live>,
}

/// What changes as a server's session comes and goes.
struct Live {
    state: ServerState,
    peer: Option<Peer<RoleClient>>,
    /// The raw call path of a stdio session.
    raw: Option<Arc<RawLink>>,
    /// Rung by a caller whose request found the session broken, so the supervisor replaces it
    /// (an HTTP session gives no other sign that its server went away).
    suspect: Option<Arc<Notify>>,
    pid: Option<u32>,
    /// The last session spoke the legacy HTTP+SSE transport.
    legacy_sse: bool,
    connect_ms: Option<u64>,
    info: Option<ServerInfo>,
    warnings: Vec<String>,
}

/// A ready session as a caller borrows it.
pub(crate) struct Ready {
    pub(crate) peer: Peer<RoleClient>,
    /// The raw call path of a stdio session.
    pub(crate) raw: Option<Arc<RawLink>>,
    /// Rung when a request finds the session closed.
    pub(crate) suspect: Arc<Notify>,
    /// The roots the server is offered (for a request's input rounds).
    pub(crate) roots: Arc<crate::roots::Offer>,
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding one of these locks cannot leave the data half-updated (each
    // critical section is a plain assignment), so a poisoned lock is still usable.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Slot {
    pub(crate) fn new(spec: ServerSpec, stop: CancellationToken) -> Self {
        Self {
            stop,
            tail: StderrTail::new(&spec.name),
            name: Arc::from(spec.name.as_str()),
            relays: Arc::new(Relays::default()),
            executions: Arc::default(),
            roots_offer: Arc::new(crate::roots::Offer::new(spec.roots.clone())),
            ids: Arc::new(Ids::new(&spec.name)),
            spec,
            live: Mutex::new(Live {
                state: ServerState::Connecting,
                peer: None,
                raw: None,
                suspect: None,
                pid: None,
                legacy_sse: false,
                connect_ms: None,
                info: None,
                warnings: Vec::new(),
            }),
        }
    }

    pub(crate) fn set_state(&self, state: ServerState) {
        let mut live = lock(&self.live);
        if !state.is_ready() {
            live.peer = None;
            live.raw = None;
            live.suspect = None;
        }
        live.state = state;
    }

    pub(crate) fn set_ready(
        &self,
        peer: Peer<RoleClient>,
        raw: Option<Arc<RawLink>>,
        suspect: Arc<Notify>,
        connect_ms: u64,
        info: ServerInfo,
        warnings: Vec<String>,
    ) {
        let mut live = lock(&self.live);
        live.state = ServerState::Ready;
        live.peer = Some(peer);
        live.raw = raw;
        live.suspect = Some(suspect);
        live.connect_ms = Some(connect_ms);
        live.info = Some(info);
        live.warnings = warnings;
    }

    /// Whether its supervisor gave up on it (or never started it).
    pub(crate) fn is_failed(&self) -> bool {
        matches!(lock(&self.live).state, ServerState::Failed { .. })
    }

    pub(crate) fn set_warnings(&self, warnings: Vec<String>) {
        lock(&self.live).warnings = warnings;
    }

    /// The raw call path of the live stdio session, if any.
    pub(crate) fn raw_link(&self) -> Option<Arc<RawLink>> {
        lock(&self.live).raw.clone()
    }

    /// Forget the session's peer (it ended); calls now fail fast with `NotReady`.
    pub(crate) fn drop_peer(&self) {
        let mut live = lock(&self.live);
        live.peer = None;
        live.raw = None;
        live.suspect = None;
    }

    pub(crate) fn set_pid(&self, pid: Option<u32>) {
        lock(&self.live).pid = pid;
    }

    pub(crate) fn set_legacy_sse(&self, legacy: bool) {
        lock(&self.live).legacy_sse = legacy;
    }

    pub(crate) fn pid(&self) -> Option<u32> {
        lock(&self.live).pid
    }

    pub(crate) fn take_pid(&self) -> Option<u32> {
        lock(&self.live).pid.take()
    }

    /// The status row for this server; `listed` is its entry in the catalog, if any.
    pub(crate) fn status(&self, listed: Option<&ServerCatalog>) -> ServerStatus {
        let live = lock(&self.live);
        let info = listed.map(|c| &c.info).or(live.info.as_ref());
        ServerStatus {
            name: self.spec.name.clone(),
            transport: if live.legacy_sse {
                "sse"
            } else {
                self.spec.transport.kind()
            },
            state: live.state.clone(),
            protocol_version: info.and_then(|i| i.protocol_version.clone()),
            server_name: info.and_then(|i| i.name.clone()),
            server_version: info.and_then(|i| i.version.clone()),
            tools: listed.map_or(0, |c| c.tools.len()),
            resources: listed.map_or(0, |c| c.resources.len()),
            resource_templates: listed.map_or(0, |c| c.resource_templates.len()),
            prompts: listed.map_or(0, |c| c.prompts.len()),
            connect_ms: live.connect_ms,
            stderr_tail: self.tail.lines(),
            warnings: live.warnings.clone(),
        }
    }

    /// The live session, for a caller; `NotReady` says why there is none.
    pub(crate) fn ready(&self) -> Result<Ready, SessionError> {
        let live = lock(&self.live);
        match (&live.state, &live.peer, &live.suspect) {
            (ServerState::Ready, Some(peer), Some(suspect)) => Ok(Ready {
                peer: peer.clone(),
                raw: live.raw.clone(),
                suspect: suspect.clone(),
                roots: self.roots_offer.clone(),
            }),
            (ServerState::Ready, _, _) => Err(SessionError::NotReady {
                server: self.spec.name.clone(),
                reason: "the session just ended; reconnecting".to_string(),
            }),
            (state, _, _) => Err(SessionError::NotReady {
                server: self.spec.name.clone(),
                reason: state.describe(),
            }),
        }
    }
}
