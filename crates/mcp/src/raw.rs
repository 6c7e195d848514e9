//! Raw tool calls on a stdio server's pipes, beside rmcp's session on the same pipes.
//!
//! A stdio server's stdin and stdout are owned here, not by rmcp: rmcp's client session talks
//! to the child through an in-memory pipe, line by line, and [`RawLink`] writes `tools/call`
//! requests of its own (ids `"sb~N"`, a string, where rmcp numbers its own) straight to the
//! child, and takes their responses out of the child's output before rmcp sees it. A gateway
//! relaying a plain call this way skips rmcp's typed model on both sides: the arguments and the
//! result pass through as the JSON text they arrived as.
//!
//! A raw call is either awaited ([`RawCaller::call`]) or started with a [`Delivery`]
//! ([`RawCaller::start`]): then the reader of the child's output hands it the progress and
//! the outcome itself, and the link's timer task times it out, so a relayed call wakes no task
//! of its own between the child's answer and the client's. On Unix that reader is a thread of
//! its own doing blocking reads, not a task: a line from the child then costs one `read`
//! instead of a trip through the runtime's poller and scheduler (see [`BlockingLines`]).

use std::collections::{BTreeSet, HashMap};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use process_wrap::tokio::ChildWrapper;
use rmcp::RoleClient;
use rmcp::model::{NumberOrString, ProgressToken};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::async_rw::AsyncRwTransport;
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use switchboard_core::CallResult;
use tokio::io::{
    AsyncBufReadExt, AsyncRead, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf,
};
use tokio::process::{ChildStderr, ChildStdin, ChildStdout};
use tokio::sync::{Notify, oneshot};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::convert;
use crate::error::SessionError;
use crate::execution::Executions;
use crate::ids::Ids;
use crate::relay::{Registered, Relays};
use crate::screen;
use crate::slot::lock;

/// The prefix of the ids of raw requests (rmcp's own ids are numbers).
const ID_PREFIX: &str = "sb~";
/// Room in the in-memory pipes between rmcp and the child's pipes.
const PIPE_BYTES: usize = 256 * 1024;
/// How long a closing session waits for the child to exit before SIGTERM, then SIGKILL.
const EXIT_WAIT: Duration = Duration::from_secs(3);
/// The longest line read from a stdio server: a longer one (or bytes that never end in a
/// newline) ends the session instead of growing the buffer without bound.
pub(crate) const MAX_LINE: usize = 32 * 1024 * 1024;
/// What a session that ended under a call says (the same words as rmcp's path).
const CLOSED: &str =
    "the session ended while the request was in flight (the server exited or hung up)";

/// How an upstream answered a raw request.
enum Reply {
    Result(Box<RawValue>),
    Error {
        code: i32,
        message: String,
        data: Option<Box<RawValue>>,
    },
}

/// The raw side of one stdio session: the child's stdin, and the raw calls in flight.
pub(crate) struct RawLink {
    stdin: tokio::sync::Mutex<Option<ChildStdin>>,
    /// The session's relayed calls, whose progress the reader hands over itself (below).
    relays: Arc<Relays>,
    /// rmcp's requests outstanding on the server, which its responses' ids are checked against.
    ids: Arc<Ids>,
    pending: Mutex<Pending>,
    next: AtomicU64,
    /// Wakes the timer task when a started call is due before the time it sleeps to.
    timer: Notify,
    /// Why the reader stopped reading the child, when it was not the child's doing.
    broken: OnceLock<String>,
    /// How the child ended, when closing the session found it gone or it exited on stdin EOF
    /// (not when it had to be signalled).
    exited: OnceLock<std::process::ExitStatus>,
    /// What the server's tool lists say of each tool's `execution` (see `execution`).
    executions: Arc<Executions>,
}

#[derive(Default)]
struct Pending {
    closed: bool,
    /// (foldhash: the ids are ours, and SipHash was a visible share of a call's cost.)
    calls: HashMap<u64, Waiter, foldhash::fast::RandomState>,
    /// Started calls in flight, by deadline.
    deadlines: BTreeSet<(Instant, u64)>,
    /// When the timer task wakes next (`None`: it waits to be told).
    timer_wakes: Option<Instant>,
}

impl Pending {
    /// Take call `id` out (and its deadline, if it has one).
    fn remove(&mut self, id: u64) -> Option<Waiter> {
        let waiter = self.calls.remove(&id)?;
        if let Waiter::Started(started) = &waiter {
            self.deadlines.remove(&(started.due, id));
        }
        Some(waiter)
    }
}

/// A raw call waiting for its response.
enum Waiter {
    /// Awaited by [`RawCaller::call_with_progress`], progress to its sink.
    Awaited {
        done: oneshot::Sender<Reply>,
        progress: Option<ProgressSink>,
    },
    /// Started with a [`Delivery`], which the child's reader runs itself.
    Started(Started),
}

/// A started call: its delivery and what its failures say.
struct Started {
    delivery: Box<dyn Delivery>,
    progress: bool,
    /// When it times out: its timeout after it was sent or its last progress report.
    due: Instant,
    /// When it was sent.
    sent: Instant,
    /// When it last reported progress.
    reported: Option<Instant>,
    tool: String,
    server: Arc<str>,
    timeout: Duration,
    suspect: Arc<Notify>,
    _registered: Registered,
}

impl Started {
    /// Hand the outcome of the call's `reply` to its delivery.
    fn finish(self, reply: Reply) -> Delivering {
        let outcome = match reply {
            Reply::Error {
                code,
                message,
                data,
            } => Err(SessionError::Rpc {
                server: self.server.to_string(),
                code,
                message,
                data: data.and_then(|d| serde_json::from_str(d.get()).ok()),
            }),
            Reply::Result(result) => checked(&self.server, &self.tool, result),
        };
        self.delivery.finish(outcome)
    }

    /// The session ended under the call.
    fn closed(self, link: &RawLink) -> Delivering {
        let error = closed(link, &self.server, &self.suspect);
        self.delivery.finish(Err(error))
    }

    fn timed_out(self, link: &RawLink) -> Delivering {
        self.delivery.finish(Err(SessionError::Timeout {
            server: self.server.to_string(),
            tool: self.tool,
            after: self.due.saturating_duration_since(self.sent),
            quiet: self.reported.map(|r| self.due.saturating_duration_since(r)),
            stray: link.ids.explain(self.timeout),
        }))
    }

    /// A progress report came: the call's timeout starts again, up to
    /// [`crate::answering::PROGRESS_CAP`] timeouts after it was sent (see `call_answering`).
    fn progressed(&mut self, id: u64, deadlines: &mut BTreeSet<(Instant, u64)>) {
        let cap = self.sent + self.timeout.saturating_mul(crate::answering::PROGRESS_CAP);
        let now = Instant::now();
        self.reported = Some(now);
        let due = (now + self.timeout).min(cap);
        if due > self.due {
            deadlines.remove(&(self.due, id));
            deadlines.insert((due, id));
            self.due = due;
        }
    }
}

/// Where a raw call's `notifications/progress` go: their params as the server sent them
/// (under the call's own progress token, which the receiver replaces with its own).
pub type ProgressSink = tokio::sync::mpsc::UnboundedSender<Box<RawValue>>;

/// How a raw call ended: the result's JSON text as the server sent it, or why there is none.
pub type Outcome = Result<Box<RawValue>, SessionError>;

/// What a [`Delivery`] does with a progress note or an outcome (a write to a client).
pub type Delivering = Pin<Box<dyn Future<Output = ()> + Send>>;

/// Where a call started with [`RawCaller::start`] reports. Its futures are run by the reader
/// of the server's output (a thread on Unix, through the runtime's handle; a task elsewhere),
/// which reads nothing else until they finish: keep them to one write.
pub trait Delivery: Send + 'static {
    /// A `notifications/progress` of the call: its params as the server sent them (only when
    /// the call asked for progress).
    fn progress(&mut self, params: &RawValue) -> Option<Delivering>;
    /// The call is over: its result, or why it failed (an error answer, a result that is not
    /// a complete tool result, a timeout, the session ending). Not called for a call that was
    /// cancelled with [`RawTicket::cancel`].
    fn finish(self: Box<Self>, outcome: Outcome) -> Delivering;
}

/// Names one started call, to cancel it.
#[derive(Clone)]
pub struct RawTicket {
    link: Arc<RawLink>,
    id: u64,
}

impl RawTicket {
    /// Whether two tickets name the same call.
    pub fn same(&self, other: &RawTicket) -> bool {
        self.id == other.id && Arc::ptr_eq(&self.link, &other.link)
    }

    /// Cancel the call, if it is still in flight: its delivery is dropped unfinished and the
    /// server gets `notifications/cancelled`.
    pub async fn cancel(&self) {
        let was_pending = lock(&self.link.pending).remove(self.id).is_some();
        if was_pending {
            let _ = self.link.write_line(cancel_line(self.id).as_bytes()).await;
        }
    }

    /// [`Self::cancel`] from synchronous code (a drop guard): the delivery is dropped now, the
    /// notification sent by a task, and nothing happens for a call that is over.
    pub fn cancel_soon(&self) {
        let was_pending = lock(&self.link.pending).remove(self.id).is_some();
        if was_pending && let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let link = self.link.clone();
            let line = cancel_line(self.id);
            runtime.spawn(async move {
                let _ = link.write_line(line.as_bytes()).await;
            });
        }
    }
}

/// The `notifications/cancelled` for raw request `id`.
fn cancel_line(id: u64) -> String {
    format!(
        "{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{{\"requestId\":\"{ID_PREFIX}{id}\",\"reason\":\"the client cancelled the call or it timed out\"}}}}\n"
    )
}

/// What the child's reader does with a line.
enum Taken {
    /// Not a raw call's: rmcp's.
    No,
    /// A raw call's, handled.
    Yes,
    /// A raw call's, to deliver.
    Deliver(Delivering),
}

impl RawLink {
    /// Write one whole line to the child (the lock keeps lines from interleaving).
    async fn write_line(&self, line: &[u8]) -> std::io::Result<()> {
        let mut stdin = self.stdin.lock().await;
        let Some(pipe) = stdin.as_mut() else {
            return Err(std::io::ErrorKind::BrokenPipe.into());
        };
        pipe.write_all(line).await
    }

    /// Note why the reader stops reading the child, for the calls it leaves unanswered (the
    /// first reason stands).
    pub(crate) fn break_off(&self, why: String) {
        tracing::warn!("{why}");
        let _ = self.broken.set(why);
    }

    /// Why the reader stopped reading the child, if it was not the child's doing.
    pub(crate) fn why(&self) -> Option<&str> {
        self.broken.get().map(String::as_str)
    }

    /// How the child ended, if it ended without our signals: it had exited (or something else
    /// killed it) by the time the session was closed, or it exited on stdin EOF.
    pub(crate) fn exit_status(&self) -> Option<std::process::ExitStatus> {
        self.exited.get().copied()
    }

    /// Close the child's stdin: the MCP way to ask a stdio server to exit.
    async fn close_stdin(&self) {
        self.stdin.lock().await.take();
    }

    /// The session is over: every raw call in flight fails as closed (awaited calls see
    /// their channel close; started ones are returned, to be told).
    fn close(&self) -> Vec<Started> {
        let mut pending = lock(&self.pending);
        pending.closed = true;
        pending.deadlines.clear();
        let started = pending
            .calls
            .drain()
            .filter_map(|(_, w)| match w {
                Waiter::Started(s) => Some(s),
                Waiter::Awaited { .. } => None,
            })
            .collect();
        drop(pending);
        self.timer.notify_one();
        started
    }

    /// If `line` is the response to a raw request (or progress of one), hand it to its caller
    /// and say so.
    fn take_reply(&self, line: &[u8]) -> Taken {
        if RAW_ID.find(line).is_none() {
            if PROGRESS.find(line).is_some() {
                return self.take_relayed_progress(line);
            }
            return Taken::No;
        }
        #[derive(Deserialize)]
        struct Head<'a> {
            #[serde(borrow)]
            id: Option<&'a RawValue>,
            #[serde(borrow)]
            method: Option<std::borrow::Cow<'a, str>>,
            #[serde(borrow)]
            params: Option<&'a RawValue>,
            /// `Some` when present, `null` included: a null result is a malformed answer
            /// (refused below), not a missing one that leaves the call waiting.
            #[serde(default, deserialize_with = "screen::present")]
            result: Option<Box<RawValue>>,
            error: Option<RpcError>,
        }
        #[derive(Deserialize)]
        struct RpcError {
            code: i32,
            #[serde(default)]
            message: String,
            #[serde(default)]
            data: Option<Box<RawValue>>,
        }
        // Read as text, checked once: from bytes, serde_json would check every string and raw
        // value it borrows on its own.
        let Ok(text) = std::str::from_utf8(line) else {
            return Taken::No;
        };
        let Ok(head) = serde_json::from_str::<Head>(text) else {
            return Taken::No;
        };
        if let Some(method) = head.method.as_deref() {
            return match head.params {
                Some(p) if method == "notifications/progress" => self.take_progress(p),
                _ => Taken::No,
            };
        }
        let Some(n) = head.id.and_then(|id| raw_id(id.get())) else {
            return Taken::No;
        };
        let reply = match (head.result, head.error) {
            (Some(result), _) => Reply::Result(result),
            (None, Some(e)) => Reply::Error {
                code: e.code,
                message: e.message,
                data: e.data,
            },
            (None, None) => return Taken::No,
        };
        let waiter = lock(&self.pending).remove(n);
        match waiter {
            Some(Waiter::Awaited { done, .. }) => {
                let _ = done.send(reply);
                Taken::Yes
            }
            Some(Waiter::Started(started)) => Taken::Deliver(started.finish(reply)),
            // A response to a raw request that is no longer awaited (cancelled, timed out) is
            // ours all the same: rmcp never sent that id.
            None => Taken::Yes,
        }
    }

    /// Progress of a call relayed through rmcp's session goes to the call's relay from here, in
    /// line order: rmcp handles each notification on a task of its own, so progress sent just
    /// before a response could reach the relay after the caller has its result and has
    /// stopped listening. Progress under a token no call has registered yet waits for it
    /// there (see `Relays::progress`); rmcp's handler, which would drop it, never sees it.
    fn take_relayed_progress(&self, line: &[u8]) -> Taken {
        #[derive(Deserialize)]
        struct Note {
            method: String,
            params: rmcp::model::ProgressNotificationParam,
        }
        let Ok(note) = serde_json::from_slice::<Note>(line) else {
            return Taken::No;
        };
        if note.method != "notifications/progress" {
            return Taken::No;
        }
        self.relays.progress(note.params);
        Taken::Yes
    }

    /// Progress under a raw call's token goes to the call's sink or delivery (or nowhere,
    /// when it asked for none or is over); [`Taken::No`] when the token is not ours.
    fn take_progress(&self, params: &RawValue) -> Taken {
        #[derive(Deserialize)]
        struct Progress<'a> {
            #[serde(rename = "progressToken", borrow)]
            token: &'a RawValue,
        }
        let Some(n) = serde_json::from_str::<Progress>(params.get())
            .ok()
            .and_then(|p| raw_id(p.token.get()))
        else {
            return Taken::No;
        };
        let mut pending = lock(&self.pending);
        let Pending {
            calls, deadlines, ..
        } = &mut *pending;
        match calls.get_mut(&n) {
            Some(Waiter::Awaited {
                progress: Some(sink),
                ..
            }) => {
                let _ = sink.send(params.to_owned());
            }
            Some(Waiter::Started(started)) if started.progress => {
                started.progressed(n, deadlines);
                if let Some(delivering) = started.delivery.progress(params) {
                    return Taken::Deliver(delivering);
                }
            }
            _ => {}
        }
        Taken::Yes
    }

    /// File a started call, its deadline noted for the timer task; `Some(call)` gives it
    /// back when the session has ended.
    fn file(&self, id: u64, started: Started) -> Option<Started> {
        let due = started.due;
        let mut pending = lock(&self.pending);
        if pending.closed {
            return Some(started);
        }
        pending.calls.insert(id, Waiter::Started(started));
        pending.deadlines.insert((due, id));
        if pending.timer_wakes.is_none_or(|wakes| due < wakes) {
            pending.timer_wakes = Some(due);
            drop(pending);
            self.timer.notify_one();
        }
        None
    }

    /// Take the started calls that are due at `now`; also note when the timer wakes next.
    fn due(&self, now: Instant) -> (Vec<(u64, Started)>, Option<Instant>) {
        let mut pending = lock(&self.pending);
        let mut due = Vec::new();
        while let Some(&(at, id)) = pending.deadlines.first() {
            if at > now {
                break;
            }
            if let Some(Waiter::Started(started)) = pending.remove(id) {
                due.push((id, started));
            } else {
                pending.deadlines.remove(&(at, id));
            }
        }
        let next = pending.deadlines.first().map(|(at, _)| *at);
        pending.timer_wakes = next;
        (due, next)
    }
}

/// Times out started calls: sleeps until the first one is due, or until told of one due
/// sooner than it sleeps to. Ends with the session.
async fn timer(link: Arc<RawLink>) {
    loop {
        if lock(&link.pending).closed {
            return;
        }
        let (due, next) = link.due(Instant::now());
        for (id, started) in due {
            let _ = link.write_line(cancel_line(id).as_bytes()).await;
            started.timed_out(&link).await;
        }
        let told = link.timer.notified();
        match next {
            Some(at) => {
                tokio::select! {
                    _ = tokio::time::sleep_until(at) => {}
                    _ = told => {}
                }
            }
            None => told.await,
        }
    }
}

/// `"sb~N"` (as JSON text) to N.
fn raw_id(json: &str) -> Option<u64> {
    json.strip_prefix('"')?
        .strip_suffix('"')?
        .strip_prefix(ID_PREFIX)?
        .parse()
        .ok()
}

/// Byte strings the hot path looks for, their searchers built once (building one costs more
/// than searching a short line).
type Needle = std::sync::LazyLock<memchr::memmem::Finder<'static>>;
static RAW_ID: Needle = Needle::new(|| memchr::memmem::Finder::new(b"\"sb~"));
static PROGRESS: Needle =
    Needle::new(|| memchr::memmem::Finder::new(b"\"notifications/progress\""));

/// A raw call that has been sent: dropping it before its reply cancels it on the wire.
struct InFlight {
    link: Arc<RawLink>,
    id: u64,
    answered: bool,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        if self.answered {
            return;
        }
        let was_pending = lock(&self.link.pending).remove(self.id).is_some();
        if !was_pending {
            return;
        }
        let line = cancel_line(self.id);
        let link = self.link.clone();
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let _ = link.write_line(line.as_bytes()).await;
            });
        }
    }
}

/// A ready stdio session's raw call path, borrowed for one call.
pub struct RawCaller {
    pub(crate) link: Arc<RawLink>,
    pub(crate) server: Arc<str>,
    pub(crate) timeout: Duration,
    pub(crate) suspect: Arc<Notify>,
    /// The server's calls in flight: a raw call counts as one (with no relay), so a server
    /// request made meanwhile is never taken for another client's call.
    pub(crate) relays: Arc<Relays>,
}

impl RawCaller {
    /// [`Self::call`] with arguments and result in core's terms, the result converted as the
    /// typed session path converts it.
    pub async fn call_args(
        self,
        tool: &str,
        arguments: Map<String, Value>,
    ) -> Result<CallResult, SessionError> {
        let arguments =
            serde_json::value::to_raw_value(&arguments).map_err(|e| SessionError::Protocol {
                server: self.server.to_string(),
                detail: format!("the arguments do not serialize: {e}"),
            })?;
        let server = self.server.to_string();
        let raw = self.call(tool, &arguments).await?;
        if let Ok(typed) = serde_json::from_str::<rmcp::model::CallToolResult>(raw.get()) {
            return Ok(convert::typed_call_result(typed));
        }
        serde_json::from_str::<Value>(raw.get())
            .ok()
            .and_then(|v| convert::call_result(&v))
            .ok_or_else(|| SessionError::Protocol {
                server,
                detail: convert::not_a_result(tool, raw.get()),
            })
    }

    /// Call `tool` with `arguments` (JSON text of an object) and return the result's JSON
    /// text as the server sent it. Failures read as the typed path's: a JSON-RPC error, a
    /// timeout (cancelled on the wire), a session that ended under the call (the supervisor
    /// is told to reconnect), or a result that is not a complete tool result. Dropping the
    /// future cancels the call on the wire.
    pub async fn call(
        self,
        tool: &str,
        arguments: &RawValue,
    ) -> Result<Box<RawValue>, SessionError> {
        self.call_with_progress(tool, arguments, None).await
    }

    /// [`Self::call`], asking the server for progress, which goes to `progress` as it comes
    /// (all of it before this returns).
    pub async fn call_with_progress(
        self,
        tool: &str,
        arguments: &RawValue,
        progress: Option<ProgressSink>,
    ) -> Result<Box<RawValue>, SessionError> {
        let id = self.link.next.fetch_add(1, Ordering::Relaxed);
        let asks = progress.is_some();
        let (tx, rx) = oneshot::channel();
        {
            let mut pending = lock(&self.link.pending);
            if pending.closed {
                return Err(closed(&self.link, &self.server, &self.suspect));
            }
            pending
                .calls
                .insert(id, Waiter::Awaited { done: tx, progress });
        }
        let id_text = raw_id_text(id);
        let _registered = self.register(&id_text);
        let mut flight = InFlight {
            link: self.link.clone(),
            id,
            answered: false,
        };
        let line = call_line(&id_text, tool, arguments, asks);
        if self.link.write_line(&line).await.is_err() {
            flight.answered = true;
            lock(&self.link.pending).remove(id);
            return Err(closed(&self.link, &self.server, &self.suspect));
        }
        let reply = match tokio::time::timeout(self.timeout, rx).await {
            Ok(Ok(reply)) => reply,
            Ok(Err(_)) => {
                flight.answered = true;
                return Err(closed(&self.link, &self.server, &self.suspect));
            }
            Err(_) => {
                // Dropping `flight` sends notifications/cancelled.
                return Err(SessionError::Timeout {
                    server: self.server.to_string(),
                    tool: tool.to_string(),
                    after: self.timeout,
                    quiet: None,
                    stray: self.link.ids.explain(self.timeout),
                });
            }
        };
        flight.answered = true;
        match reply {
            Reply::Error {
                code,
                message,
                data,
            } => Err(SessionError::Rpc {
                server: self.server.to_string(),
                code,
                message,
                data: data.and_then(|d| serde_json::from_str(d.get()).ok()),
            }),
            Reply::Result(result) => checked(&self.server, tool, result),
        }
    }

    /// A ticket for the next call on this session, to file (for cancelling) before
    /// [`Self::start`] sends it.
    pub fn ticket(&self) -> RawTicket {
        RawTicket {
            link: self.link.clone(),
            id: self.link.next.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// Start the call `ticket` names, `tool` with `arguments` (JSON text of an object):
    /// `delivery` gets its progress (when `progress` asks for it) and its outcome from the
    /// reader of the server's output, with the failures [`Self::call`] gives. The call is filed at
    /// once; the returned future sends it (a session that has ended is delivered there).
    /// Calls sent in the order their futures are first polled reach the server in that order.
    /// `tool` is kept, for what the call's failures say.
    pub fn start(
        self,
        ticket: &RawTicket,
        tool: String,
        arguments: &RawValue,
        progress: bool,
        delivery: Box<dyn Delivery>,
    ) -> impl Future<Output = ()> + Send + 'static {
        let id = ticket.id;
        let id_text = raw_id_text(id);
        let line = call_line(&id_text, &tool, arguments, progress);
        let sent = Instant::now();
        let started = Started {
            delivery,
            progress,
            due: sent + self.timeout,
            sent,
            reported: None,
            tool,
            server: self.server.clone(),
            timeout: self.timeout,
            suspect: self.suspect.clone(),
            _registered: self.register(&id_text),
        };
        let filed = self.link.file(id, started);
        async move {
            match filed {
                Some(started) => started.closed(&self.link).await,
                None => {
                    if self.link.write_line(&line).await.is_err() {
                        let failed = closed(&self.link, &self.server, &self.suspect);
                        self.fail(id, failed).await;
                    }
                }
            }
        }
    }

    /// Deliver `error` to started call `id`, if it is still filed.
    async fn fail(&self, id: u64, error: SessionError) {
        let waiter = lock(&self.link.pending).remove(id);
        if let Some(Waiter::Started(started)) = waiter {
            started.delivery.finish(Err(error)).await;
        }
    }

    /// Count raw request `id` (its text, `sb~N`) as one of the server's calls in flight.
    fn register(&self, id: &Arc<str>) -> Registered {
        self.relays.register(
            ProgressToken(NumberOrString::String(id.clone())),
            NumberOrString::String(id.clone()),
            None,
        )
    }
}

/// The `tools/call` line of raw request `id` (its text, `sb~N`). Built by hand: this runs for every call passing
/// through, and the formatting machinery is a good deal more code to run cold than a few
/// appends.
fn call_line(id: &str, tool: &str, arguments: &RawValue, progress: bool) -> Vec<u8> {
    let arguments = arguments.get();
    let mut line = Vec::with_capacity(100 + tool.len() + arguments.len() + 2 * id.len());
    line.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":\"");
    line.extend_from_slice(id.as_bytes());
    line.extend_from_slice(b"\",\"method\":\"tools/call\",\"params\":{\"name\":");
    // A string always serializes (the writer is a Vec).
    let _ = serde_json::to_writer(&mut line, tool);
    line.extend_from_slice(b",\"arguments\":");
    line.extend_from_slice(arguments.as_bytes());
    if progress {
        line.extend_from_slice(b",\"_meta\":{\"progressToken\":\"");
        line.extend_from_slice(id.as_bytes());
        line.extend_from_slice(b"\"}");
    }
    line.extend_from_slice(b"}}\n");
    line
}

/// `sb~N`, the text of raw request id `N`.
fn raw_id_text(id: u64) -> Arc<str> {
    // The prefix and at most 20 digits, written from the end; one allocation, the `Arc`'s.
    let mut text = [0u8; 32];
    let mut at = text.len();
    let mut n = id;
    loop {
        at -= 1;
        text[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    at -= ID_PREFIX.len();
    text[at..at + ID_PREFIX.len()].copy_from_slice(ID_PREFIX.as_bytes());
    // Only ASCII was written.
    Arc::from(std::str::from_utf8(&text[at..]).unwrap_or(ID_PREFIX))
}

/// A result that asks for more input or became a task is refused, as on the typed path. Any
/// other result reaches the client as the typed path would give it (`convert::call_result`):
/// verbatim when it is well formed (an object whose `content`, if any, is an array of objects
/// with a `type`, whose `isError` is a boolean or null, naming `content`, `structuredContent`
/// or `isError` or nothing but `_meta`), converted when only its content blocks are odd or its
/// `content` is `null` (no content, passed on as `[]`), and
/// refused when the typed path would not read it as a tool result at all (`content` that is not
/// an array, `isError` that is not a boolean, anything but an object). A client is never handed
/// what its SDK would reject. One pass over the text, allocating nothing for a well-formed
/// result.
fn checked(server: &str, tool: &str, result: Box<RawValue>) -> Result<Box<RawValue>, SessionError> {
    let protocol = |detail: String| SessionError::Protocol {
        server: server.to_string(),
        detail,
    };
    let text = result.get();
    let refused = |kind: Option<&str>, task: bool| {
        (task || kind.is_some_and(|t| t != "complete")).then(|| {
            protocol(format!(
                "tool \"{tool}\" asked for more input or became a task, which switchboard does not support"
            ))
        })
    };
    // A derived struct would also read a JSON array (by position), so look at the first byte.
    let probe = text
        .trim_start()
        .starts_with('{')
        .then(|| serde_json::from_str::<ResultProbe>(text).ok())
        .flatten();
    if let Some(probe) = &probe {
        if let Some(e) = refused(probe.result_type.as_deref(), probe.task.is_some()) {
            return Err(e);
        }
        let null_content = matches!(probe.content, Some(None));
        if !null_content
            && (probe.content.is_some() || probe.structured.is_some() || probe.is_error.is_some())
        {
            return Ok(result);
        }
    }
    let well_formed = probe.is_some();
    // Rare: odd content blocks, a broken field, or an object naming none of the fields.
    let not_a_result = || protocol(convert::not_a_result(tool, text));
    let value: Value = serde_json::from_str(text).map_err(|_| not_a_result())?;
    // `"task": null` is no task, as the probe (and the typed path) read it.
    if let Some(e) = refused(
        value.get("resultType").and_then(Value::as_str),
        value.get("task").is_some_and(|t| !t.is_null()),
    ) {
        return Err(e);
    }
    let read = convert::call_result(&value).ok_or_else(not_a_result)?;
    let null_content = probe.is_some_and(|p| matches!(p.content, Some(None)));
    if well_formed && !null_content {
        // It names no field, and the typed path reads it: `{}` or only `_meta`, kept as sent.
        return Ok(result);
    }
    serde_json::value::to_raw_value(&read).map_err(|_| not_a_result())
}

/// The fields of a tool result that decide whether it is one; every other field is skipped.
#[derive(Deserialize)]
struct ResultProbe<'a> {
    #[serde(rename = "resultType", borrow)]
    result_type: Option<std::borrow::Cow<'a, str>>,
    task: Option<IgnoredAny>,
    /// Absent is `None`; `null` is `Some(None)`: no content, as the typed path reads it, but
    /// not to be passed on as written (the result is re-encoded with an empty list).
    #[serde(default, deserialize_with = "present")]
    content: Option<Option<Vec<BlockProbe>>>,
    #[serde(rename = "structuredContent")]
    structured: Option<IgnoredAny>,
    /// `null` reads as absent, as on the typed path.
    #[serde(rename = "isError")]
    is_error: Option<bool>,
}

/// A field that is there, `null` or not: `Some(None)` for `null` (a missing field stays `None`
/// through `#[serde(default)]`).
fn present<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Some)
}

/// A content block: an object with a `type` (its other fields are the client's to read).
#[derive(Deserialize)]
struct BlockProbe {
    #[serde(rename = "type")]
    _kind: IgnoredAny,
}

/// The session ended under a call: the supervisor is told to look. Says why when the reader
/// knows (see [`RawLink::break_off`]).
fn closed(link: &RawLink, server: &str, suspect: &Notify) -> SessionError {
    suspect.notify_one();
    SessionError::Closed {
        server: server.to_string(),
        detail: link.why().unwrap_or(CLOSED).to_string(),
    }
}

/// Why a server whose line ran over [`MAX_LINE`] was cut off.
fn too_long() -> String {
    format!(
        "the server wrote more than {} MB without a newline (stdio carries one JSON-RPC message per line); switchboard stopped reading it",
        MAX_LINE / (1024 * 1024)
    )
}

type Inner = AsyncRwTransport<RoleClient, ReadHalf<DuplexStream>, WriteHalf<DuplexStream>>;

/// rmcp's transport for a stdio child whose pipes are shared with a [`RawLink`]. It owns the
/// child: closing it closes the child's stdin and waits, then signals; dropping it kills.
pub(crate) struct SharedChild {
    inner: Inner,
    child: Option<Box<dyn ChildWrapper>>,
    link: Arc<RawLink>,
    pumps: Vec<JoinHandle<()>>,
}

/// Take a spawned child's pipes: rmcp's transport, the raw link, and the child's stderr.
/// `ids` starts over, for this session's requests.
pub(crate) fn share(
    mut child: Box<dyn ChildWrapper>,
    relays: Arc<Relays>,
    ids: Arc<Ids>,
    executions: Arc<Executions>,
) -> std::io::Result<(SharedChild, Arc<RawLink>, Option<ChildStderr>)> {
    let taken = |what: &str| std::io::Error::other(format!("the child's {what} was already taken"));
    let stdin = child.stdin().take().ok_or_else(|| taken("stdin"))?;
    let stdout = child.stdout().take().ok_or_else(|| taken("stdout"))?;
    let stderr = child.stderr().take();
    ids.begin();
    let link = Arc::new(RawLink {
        stdin: tokio::sync::Mutex::new(Some(stdin)),
        relays,
        ids,
        pending: Mutex::new(Pending::default()),
        next: AtomicU64::new(1),
        timer: Notify::new(),
        broken: OnceLock::new(),
        exited: OnceLock::new(),
        executions,
    });
    let (ours, rmcp_side) = tokio::io::duplex(PIPE_BYTES);
    let (from_rmcp, to_rmcp) = tokio::io::split(ours);
    let (read, write) = tokio::io::split(rmcp_side);
    let mut pumps = vec![
        tokio::spawn(rmcp_to_child(from_rmcp, link.clone())),
        tokio::spawn(timer(link.clone())),
    ];
    if let Some(reader) = read_child(stdout, link.clone(), to_rmcp) {
        pumps.push(reader);
    }
    let shared = SharedChild {
        // No line limit of rmcp's: the child's reader above has its own (MAX_LINE), and rmcp's
        // default (16 MB) drops a longer response, which left its request (a 20 MB tool
        // result) waiting out its timeout; the raw path takes such a result whole.
        inner: AsyncRwTransport::new(read, write).with_max_line_length(usize::MAX),
        child: Some(child),
        link: link.clone(),
        pumps,
    };
    Ok((shared, link, stderr))
}

/// Newline-delimited JSON-RPC framing (MCP's stdio transport): one line at a time.
pub struct Lines<R> {
    reader: BufReader<R>,
    line: Vec<u8>,
    limit: Limit,
}

impl<R: AsyncRead + Unpin> Lines<R> {
    /// Lines read from `read`.
    pub fn new(read: R) -> Self {
        Self {
            reader: BufReader::with_capacity(64 * 1024, read),
            line: Vec::with_capacity(4096),
            limit: Limit::new(usize::MAX),
        }
    }

    /// Lines of at most `max` bytes (see [`Self::too_long`]).
    pub fn with_limit(mut self, max: usize) -> Self {
        self.limit = Limit::new(max);
        self
    }

    /// The next line, its newline kept (the last one may have none); `None` at the end of
    /// the input, on a read error, or at a line over the limit.
    pub async fn next(&mut self) -> Option<&[u8]> {
        self.line.clear();
        loop {
            let available = match self.reader.fill_buf().await {
                Ok(available) => available,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => return None,
            };
            let (used, done) = self.limit.take(&mut self.line, available)?;
            self.reader.consume(used);
            if done {
                return Some(&self.line);
            }
        }
    }

    /// Whether reading stopped at a line over the limit.
    pub fn too_long(&self) -> bool {
        self.limit.exceeded
    }
}

/// A bound on the length of a line, checked as it is read (so bytes that never end in a
/// newline cannot grow the buffer without end).
struct Limit {
    max: usize,
    exceeded: bool,
}

impl Limit {
    fn new(max: usize) -> Self {
        Self {
            max,
            exceeded: false,
        }
    }

    /// Add what of `available` belongs to the line being read: how many bytes were used and
    /// whether the line is complete (it ended, or the input did with a line unfinished).
    /// `None` at the end of the input with no line, or once the line is over the limit.
    fn take(&mut self, line: &mut Vec<u8>, available: &[u8]) -> Option<(usize, bool)> {
        if available.is_empty() {
            return (!line.is_empty()).then_some((0, true));
        }
        let (used, done) = match memchr::memchr(b'\n', available) {
            Some(at) => (at + 1, true),
            None => (available.len(), false),
        };
        if line.len() + used > self.max {
            self.exceeded = true;
            return None;
        }
        line.extend_from_slice(&available[..used]);
        Some((used, done))
    }
}

/// [`Lines`] for a blocking reader, read on a thread of its own. Where the descriptor may be
/// non-blocking (a standard stream shared with an async writer), wrap it in [`WaitingFd`].
pub struct BlockingLines<R> {
    reader: std::io::BufReader<R>,
    line: Vec<u8>,
    limit: Limit,
}

impl<R: std::io::Read> BlockingLines<R> {
    /// Lines read from `read`.
    pub fn new(read: R) -> Self {
        Self {
            reader: std::io::BufReader::with_capacity(64 * 1024, read),
            line: Vec::with_capacity(4096),
            limit: Limit::new(usize::MAX),
        }
    }

    /// Lines of at most `max` bytes (see [`Self::too_long`]).
    pub fn with_limit(mut self, max: usize) -> Self {
        self.limit = Limit::new(max);
        self
    }

    /// The next line, its newline kept (the last one may have none); `None` at the end of
    /// the input, on a read error, or at a line over the limit.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Option<&[u8]> {
        use std::io::BufRead;
        self.line.clear();
        loop {
            let available = match self.reader.fill_buf() {
                Ok(available) => available,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => return None,
            };
            let (used, done) = self.limit.take(&mut self.line, available)?;
            self.reader.consume(used);
            if done {
                return Some(&self.line);
            }
        }
    }

    /// Whether reading stopped at a line over the limit.
    pub fn too_long(&self) -> bool {
        self.limit.exceeded
    }
}

/// A descriptor read as if it blocked: when it is non-blocking and has nothing yet, wait with
/// `poll` for input instead of failing.
#[cfg(unix)]
pub struct WaitingFd(pub std::fs::File);

#[cfg(unix)]
impl std::io::Read for WaitingFd {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
        use std::os::fd::AsFd;
        loop {
            match self.0.read(buf) {
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    let mut fds = [PollFd::new(self.0.as_fd(), PollFlags::POLLIN)];
                    match poll(&mut fds, PollTimeout::NONE) {
                        Ok(_) | Err(nix::errno::Errno::EINTR) => {}
                        Err(e) => return Err(e.into()),
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                other => return other,
            }
        }
    }
}

/// The child's output: raw responses to their callers, the rest to rmcp (a task, where the
/// reader cannot be a thread: see [`read_child`]).
#[cfg(not(unix))]
async fn child_to_rmcp(
    stdout: ChildStdout,
    link: Arc<RawLink>,
    mut to_rmcp: WriteHalf<DuplexStream>,
) {
    let mut lines = Lines::new(stdout).with_limit(MAX_LINE);
    let mut replaced = Vec::new();
    while let Some(line) = lines.next().await {
        let line = match screen::screen_ids(line, &mut replaced, Some(&link.ids)) {
            screen::Next::Read(line) => line,
            screen::Next::Skip => continue,
            screen::Next::Answer(answer) => {
                let link = link.clone();
                tokio::spawn(async move {
                    let _ = link.write_line(&answer).await;
                });
                continue;
            }
            screen::Next::Split(parts) => {
                let mut open = true;
                for part in &parts {
                    open = open && pass_line_async(&link, &mut to_rmcp, part).await;
                }
                if open {
                    continue;
                }
                break;
            }
        };
        if !pass_line_async(&link, &mut to_rmcp, line).await {
            break;
        }
    }
    if lines.too_long() {
        link.break_off(too_long());
    }
    for started in link.close() {
        started.closed(&link).await;
    }
    let _ = to_rmcp.shutdown().await;
}

/// [`pass_line`] on a task.
#[cfg(not(unix))]
async fn pass_line_async(
    link: &RawLink,
    to_rmcp: &mut WriteHalf<DuplexStream>,
    line: &[u8],
) -> bool {
    match link.take_reply(line) {
        Taken::Yes => true,
        Taken::Deliver(delivering) => {
            delivering.await;
            true
        }
        Taken::No => {
            link.executions.note_tools(line);
            to_rmcp.write_all(line).await.is_ok()
        }
    }
}

/// Start reading the child's output: on a thread of its own on Unix (`None` then: the thread
/// ends when the child's stdout does, which closing or killing the child brings about), as a
/// task elsewhere.
#[cfg(unix)]
fn read_child(
    stdout: ChildStdout,
    link: Arc<RawLink>,
    to_rmcp: WriteHalf<DuplexStream>,
) -> Option<JoinHandle<()>> {
    let runtime = tokio::runtime::Handle::current();
    // Blocking again once it leaves the runtime's poller.
    let fd = match stdout.into_owned_fd() {
        Ok(fd) => fd,
        Err(e) => {
            // Nothing is in flight yet; rmcp sees the output end and the session fails.
            tracing::warn!("a stdio server's output could not be read on a thread: {e}");
            let _ = link.close();
            return None;
        }
    };
    let reader = link.clone();
    let spawned = std::thread::Builder::new()
        .name("sb-upstream".to_string())
        .spawn(move || child_lines(std::fs::File::from(fd), reader, to_rmcp, runtime));
    if let Err(e) = spawned {
        // The pipe went with the thread's closure: rmcp sees the output end.
        tracing::warn!("no thread to read a stdio server's output: {e}");
        let _ = link.close();
    }
    None
}

#[cfg(not(unix))]
fn read_child(
    stdout: ChildStdout,
    link: Arc<RawLink>,
    to_rmcp: WriteHalf<DuplexStream>,
) -> Option<JoinHandle<()>> {
    Some(tokio::spawn(child_to_rmcp(stdout, link, to_rmcp)))
}

/// Run `future` to its end on this thread, which is not one of `runtime`'s and has entered
/// its context ([`tokio::runtime::Handle::enter`], so that the future may spawn). A future that
/// is ready at its first poll, as a write to a pipe with room nearly always is, costs one poll
/// with a waker that does nothing; only one that has to wait goes through `block_on` (which
/// polls it again with a waker of its own).
pub fn drive<F: Future>(runtime: &tokio::runtime::Handle, future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match future.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(out) => out,
        std::task::Poll::Pending => runtime.block_on(future),
    }
}

/// [`child_to_rmcp`] on a thread: blocking reads of the child's output; deliveries and rmcp's
/// lines are written through `runtime` (they nearly always complete at once).
#[cfg(unix)]
fn child_lines(
    stdout: std::fs::File,
    link: Arc<RawLink>,
    mut to_rmcp: WriteHalf<DuplexStream>,
    runtime: tokio::runtime::Handle,
) {
    let _context = runtime.enter();
    let mut lines = BlockingLines::new(stdout).with_limit(MAX_LINE);
    let mut replaced = Vec::new();
    while let Some(line) = lines.next() {
        let line = match screen::screen_ids(line, &mut replaced, Some(&link.ids)) {
            screen::Next::Read(line) => line,
            screen::Next::Skip => continue,
            screen::Next::Answer(answer) => {
                // On a task: this thread must not wait on the child's stdin while the child
                // may be waiting on its stdout.
                let link = link.clone();
                runtime.spawn(async move {
                    let _ = link.write_line(&answer).await;
                });
                continue;
            }
            screen::Next::Split(parts) => {
                // A batch: each message as if it had come on a line of its own.
                if parts
                    .iter()
                    .all(|part| pass_line(&link, &mut to_rmcp, &runtime, part))
                {
                    continue;
                }
                break;
            }
        };
        if !pass_line(&link, &mut to_rmcp, &runtime, line) {
            break;
        }
    }
    if lines.too_long() {
        link.break_off(too_long());
    }
    runtime.block_on(async move {
        for started in link.close() {
            started.closed(&link).await;
        }
        let _ = to_rmcp.shutdown().await;
    });
}

/// One screened line of the child's output: to its raw caller, or to rmcp. False when rmcp's
/// side is gone.
#[cfg(unix)]
fn pass_line(
    link: &RawLink,
    to_rmcp: &mut WriteHalf<DuplexStream>,
    runtime: &tokio::runtime::Handle,
    line: &[u8],
) -> bool {
    match link.take_reply(line) {
        Taken::Yes => true,
        Taken::Deliver(delivering) => {
            drive(runtime, delivering);
            true
        }
        Taken::No => {
            link.executions.note_tools(line);
            drive(runtime, to_rmcp.write_all(line)).is_ok()
        }
    }
}

/// rmcp's requests and notifications to the child, a line at a time.
async fn rmcp_to_child(from_rmcp: ReadHalf<DuplexStream>, link: Arc<RawLink>) {
    let mut lines = Lines::new(from_rmcp);
    while let Some(line) = lines.next().await {
        // Noted before it is written: the answer may be read before the write returns.
        link.ids.sent(line);
        if link.write_line(line).await.is_err() {
            break;
        }
    }
    // rmcp closed its side: close the child's stdin so it can exit.
    link.close_stdin().await;
}

impl SharedChild {
    /// The child's pid (its process group leader).
    pub(crate) fn id(&self) -> Option<u32> {
        self.child.as_ref()?.id()
    }

    async fn shutdown(&mut self) -> std::io::Result<()> {
        self.inner.close().await?;
        self.link.close_stdin().await;
        let Some(child) = self.child.as_mut() else {
            return Ok(());
        };
        // A child that is gone already (it exited, or something killed it) is reaped at once;
        // its status tells the supervisor why the session ended. One that exits on stdin EOF
        // within the wait is recorded too: the session may have ended for another reason, but
        // then nobody asks.
        if let Ok(Ok(status)) = tokio::time::timeout(EXIT_WAIT, child.wait()).await {
            let _ = self.link.exited.set(status);
            self.child = None;
            return Ok(());
        }
        #[cfg(unix)]
        if child
            .signal(nix::sys::signal::Signal::SIGTERM as i32)
            .is_ok()
            && let Ok(Ok(_)) = tokio::time::timeout(EXIT_WAIT, child.wait()).await
        {
            self.child = None;
            return Ok(());
        }
        let killed = Box::into_pin(child.kill()).await;
        self.child = None;
        killed
    }
}

impl Drop for SharedChild {
    fn drop(&mut self) {
        let started = self.link.close();
        for pump in &self.pumps {
            pump.abort();
        }
        if !started.is_empty()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            let link = self.link.clone();
            runtime.spawn(async move {
                for call in started {
                    call.closed(&link).await;
                }
            });
        }
        if let Some(mut child) = self.child.take()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            runtime.spawn(async move {
                let _ = Box::into_pin(child.kill()).await;
            });
        }
    }
}

impl Transport<RoleClient> for SharedChild {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.inner.receive()
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.shutdown()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_ids_are_ours_only() {
        assert_eq!(raw_id("\"sb~17\""), Some(17));
        assert_eq!(raw_id("17"), None);
        assert_eq!(raw_id("\"17\""), None);
        assert_eq!(raw_id("\"sb~x\""), None);
        for n in [0, 7, 17, 1_000_000, u64::MAX] {
            assert_eq!(&*raw_id_text(n), format!("sb~{n}"));
            assert_eq!(raw_id(&format!("\"{}\"", raw_id_text(n))), Some(n));
        }
    }

    #[test]
    fn call_lines_are_one_json_request() {
        let args = RawValue::from_string(r#"{"q": "a \"b\""}"#.to_string()).unwrap();
        for progress in [false, true] {
            let line =
                String::from_utf8(call_line("sb~42", "odd \"name\"", &args, progress)).unwrap();
            assert!(line.ends_with("}\n") && !line[..line.len() - 1].contains('\n'));
            let v: Value = serde_json::from_str(&line).unwrap();
            let mut want = serde_json::json!({"jsonrpc": "2.0", "id": "sb~42", "method": "tools/call",
                "params": {"name": "odd \"name\"", "arguments": {"q": "a \"b\""}}});
            if progress {
                want["params"]["_meta"] = serde_json::json!({"progressToken": "sb~42"});
            }
            assert_eq!(v, want);
        }
    }

    #[test]
    fn results_reach_the_client_as_the_typed_path_reads_them() {
        let raw = |s: &str| RawValue::from_string(s.to_string()).unwrap();
        let ok = |s: &str| checked("s", "t", raw(s)).is_ok();
        let passed = |s: &str| {
            let out: Value =
                serde_json::from_str(checked("s", "t", raw(s)).unwrap().get()).unwrap();
            out
        };
        assert!(ok(r#"{"content": []}"#));
        assert!(ok(
            r#" {"content": [{"type": "text", "text": "a \"task\""}]}"#
        ));
        assert!(ok(r#"{"content": [], "resultType": "complete"}"#));
        assert!(!ok(r#"{"content": [], "resultType": "incomplete"}"#));
        assert!(!ok(r#"{"task": {"taskId": "1"}}"#));
        assert!(!ok(r#"[1, 2]"#));
        assert!(!ok(r#""text""#));
        // What the typed path reads as no tool result is refused here too.
        assert!(!ok(r#"{"content": "not a list"}"#));
        assert!(!ok(r#"{"content": [], "isError": "yes"}"#));
        assert!(!ok(
            r#"{"content": [], "resultType": "incomplete", "isError": 3}"#
        ));
        // Odd blocks are converted as the typed path converts them, the rest kept.
        let odd = passed(r#"{"content": [1, {"text": "no type"}], "isError": true}"#);
        assert_eq!(odd["isError"], serde_json::json!(true), "{odd}");
        let blocks = odd["content"].as_array().unwrap();
        assert_eq!(blocks.len(), 2, "{odd}");
        assert!(
            blocks
                .iter()
                .all(|b| b["type"] == serde_json::json!("text")),
            "{odd}"
        );
        assert!(!ok(r#"{"messages": []}"#));
        assert!(ok(r#"{"content": [], "isError": null}"#));
        assert!(ok(r#"{"isError": true}"#));
        assert!(ok(r#"{"structuredContent": {"content": "x"}}"#));
        assert!(ok(r#"{}"#));
        assert!(ok(r#"{"_meta": {"k": 1}, "resultType": "complete"}"#));
        // Found by `hostile_results`: a null task with an odd block was refused as a task.
        assert!(ok(r#"{"content":[null],"task":null}"#));
        // Found by `hostile_results`: `content: null` is no content (rmcp 3.11 reads it so), and
        // is passed on as an empty list, not as written.
        let empty = passed(r#"{"content": null, "structuredContent": null}"#);
        assert_eq!(empty["content"], serde_json::json!([]), "{empty}");
        assert!(ok(
            r#"{"content": [{"type": "text", "text": "a", "_meta": {}}], "extra": [1, {"a": 2}]}"#
        ));
        // Every answer the typed path reads as a tool result passes, and none it refuses.
        for s in [
            r#"{"content": "not a list"}"#,
            r#"{"content": [1]}"#,
            r#"{"content": [], "isError": "yes"}"#,
            r#"{"messages": []}"#,
            r#"{"content": [], "isError": null}"#,
            r#"{}"#,
            r#"{"isError": true}"#,
        ] {
            let typed = convert::call_result(&serde_json::from_str(s).unwrap()).is_some();
            assert_eq!(ok(s), typed, "{s}");
        }
    }

    mod hostile_results {
        //! Arbitrary `tools/call` results through [`checked`]: no panic, and what reaches the
        //! client reads as the typed session path reads the server's own answer.
        use super::*;
        use proptest::prelude::*;
        use serde_json::json;

        fn leaf() -> impl Strategy<Value = Value> {
            prop_oneof![
                Just(Value::Null),
                any::<bool>().prop_map(Value::Bool),
                prop_oneof![
                    Just(json!(0)),
                    Just(json!(-1)),
                    Just(json!(u64::MAX)),
                    Just(json!(1e308))
                ],
                prop::sample::select(
                    &[
                        "text",
                        "image",
                        "audio",
                        "resource",
                        "resource_link",
                        "complete",
                        "incomplete",
                        "",
                        "x"
                    ][..]
                )
                .prop_map(Value::from),
                "\\PC{0,6}".prop_map(Value::from),
            ]
        }

        fn any_json() -> impl Strategy<Value = Value> {
            leaf().prop_recursive(4, 24, 4, |inner| {
                prop_oneof![
                    prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
                    prop::collection::btree_map(
                        prop::sample::select(
                            &[
                                "type",
                                "text",
                                "data",
                                "mimeType",
                                "uri",
                                "name",
                                "resource",
                                "blob",
                                "_meta",
                                "annotations"
                            ][..]
                        )
                        .prop_map(str::to_string),
                        inner,
                        0..4
                    )
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
                ]
            })
        }

        fn block() -> impl Strategy<Value = Value> {
            prop_oneof![
                Just(json!({"type": "text", "text": "a"})),
                Just(json!({"type": "image", "data": "AAAA", "mimeType": "image/png"})),
                Just(json!({"type": "resource_link", "uri": "file:///x", "name": "x"})),
                Just(json!({"type": "resource", "resource": {"uri": "test://r", "text": "b"}})),
                any_json(),
                (
                    prop::sample::select(
                        &[
                            "text",
                            "image",
                            "audio",
                            "resource",
                            "resource_link",
                            "video"
                        ][..]
                    ),
                    any_json()
                )
                    .prop_map(|(t, v)| match v {
                        Value::Object(mut m) => {
                            m.insert("type".into(), json!(t));
                            Value::Object(m)
                        }
                        other => json!({"type": t, "text": other}),
                    }),
            ]
        }

        fn result_like() -> impl Strategy<Value = Value> {
            let field = prop_oneof![
                (
                    Just("content"),
                    prop_oneof![
                        3 => prop::collection::vec(block(), 0..4).prop_map(Value::Array),
                        1 => any_json(),
                    ]
                ),
                (Just("isError"), any_json()),
                (Just("structuredContent"), any_json()),
                (Just("_meta"), any_json()),
                (Just("resultType"), any_json()),
                (Just("task"), any_json()),
                (Just("messages"), any_json()),
            ];
            prop_oneof![
                4 => prop::collection::vec(field, 0..5).prop_map(|kv| {
                    Value::Object(kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
                }),
                1 => any_json(),
            ]
        }

        /// What the typed session path makes of an answer (as `call_args` reads it).
        fn read(text: &str) -> Option<switchboard_core::CallResult> {
            if let Ok(typed) = serde_json::from_str::<rmcp::model::CallToolResult>(text) {
                return Some(convert::typed_call_result(typed));
            }
            serde_json::from_str::<Value>(text)
                .ok()
                .and_then(|v| convert::call_result(&v))
        }

        proptest! {
            #[test]
            fn checked_results_read_as_the_typed_path_reads_them(v in result_like()) {
                let text = v.to_string();
                let refused = v.get("resultType").and_then(Value::as_str).is_some_and(|t| t != "complete")
                    || v.get("task").is_some_and(|t| !t.is_null());
                let raw = RawValue::from_string(text.clone()).unwrap();
                match checked("s", "t", raw) {
                    Ok(out) => {
                        prop_assert!(!refused, "{} passed", text);
                        prop_assert!(read(&text).is_some(), "{} passed", text);
                        prop_assert_eq!(read(out.get()), read(&text), "{} became {}", text, out.get());
                    }
                    Err(e) => {
                        prop_assert!(refused || read(&text).is_none(), "{} refused: {}", text, e);
                    }
                }
            }
        }
    }

    fn link() -> Arc<RawLink> {
        Arc::new(RawLink {
            stdin: tokio::sync::Mutex::new(None),
            relays: Arc::new(Relays::default()),
            ids: Arc::new(Ids::new("up")),
            pending: Mutex::new(Pending::default()),
            next: AtomicU64::new(1),
            timer: Notify::new(),
            broken: OnceLock::new(),
            exited: OnceLock::new(),
            executions: Arc::default(),
        })
    }

    fn taken(link: &RawLink, line: &[u8]) -> bool {
        !matches!(link.take_reply(line), Taken::No)
    }

    #[test]
    fn progress_of_a_relayed_call_is_handed_over_by_the_reader_in_line_order() {
        let link = link();
        let (sink, mut upcalls) = tokio::sync::mpsc::unbounded_channel();
        let _registered = link.relays.register(
            ProgressToken(NumberOrString::Number(7)),
            NumberOrString::Number(3),
            Some(sink),
        );
        let note = |token: &str, p: u32| {
            format!(
                r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progressToken":{token},"progress":{p},"total":100}}}}"#
            )
        };
        for p in [0, 50, 100] {
            assert!(taken(&link, note("7", p).as_bytes()));
        }
        // Not a relayed call's token (yet): kept for a call about to register it. Not
        // progress: rmcp's session gets it as before.
        assert!(taken(&link, note("8", 1).as_bytes()));
        assert!(taken(&link, note("\"x\"", 1).as_bytes()));
        assert!(!taken(
            &link,
            br#"{"jsonrpc":"2.0","id":3,"result":{"content":[],"note":"notifications/progress"}}"#
        ));
        let mut seen = Vec::new();
        while let Ok(crate::relay::Upcall::Progress { progress, .. }) = upcalls.try_recv() {
            seen.push(progress);
        }
        assert_eq!(seen, [0.0, 50.0, 100.0]);
    }

    #[test]
    fn responses_to_raw_ids_are_taken_and_the_rest_pass() {
        let link = link();
        let (tx, mut rx) = oneshot::channel();
        let (ptx, mut prx) = tokio::sync::mpsc::unbounded_channel();
        lock(&link.pending).calls.insert(
            3,
            Waiter::Awaited {
                done: tx,
                progress: Some(ptx),
            },
        );
        assert!(taken(&link,
            br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"sb~3","progress":1}}"#
        ));
        // rmcp's own token: the relays take it (kept for a relayed call about to register).
        assert!(taken(&link,
            br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":1}}"#
        ));
        assert!(prx.try_recv().unwrap().get().contains("\"progress\":1"));
        assert!(!taken(&link, br#"{"jsonrpc":"2.0","id":3,"result":{}}"#));
        assert!(!taken(
            &link,
            br#"{"jsonrpc":"2.0","id":"sb~3","method":"sampling/createMessage","params":{}}"#
        ));
        assert!(taken(&link,
            br#"{"jsonrpc":"2.0","id":"sb~3","result":{"content":[{"type":"text","text":"sb~ hi"}]}}"#
        ));
        match rx.try_recv() {
            Ok(Reply::Result(r)) => assert!(r.get().contains("sb~ hi")),
            _ => panic!("the reply did not reach its caller"),
        }
        // A late answer to a call nobody waits for is still not rmcp's.
        assert!(taken(
            &link,
            br#"{"jsonrpc":"2.0","id":"sb~9","error":{"code":-1,"message":"x"}}"#
        ));
    }

    #[test]
    fn a_null_result_is_an_answer_not_a_missing_one() {
        // Regression: `"result": null` read as absent, so the line went to rmcp (which never
        // sent that id) and the call waited out its timeout.
        let link = link();
        let (tx, mut rx) = oneshot::channel();
        lock(&link.pending).calls.insert(
            4,
            Waiter::Awaited {
                done: tx,
                progress: None,
            },
        );
        assert!(taken(
            &link,
            br#"{"jsonrpc":"2.0","id":"sb~4","result":null}"#
        ));
        match rx.try_recv() {
            Ok(Reply::Result(r)) => {
                let refused = checked("s", "t", r).unwrap_err().to_string();
                assert!(refused.contains("not a tool result: null"), "{refused}");
            }
            _ => panic!("the null result did not reach its caller"),
        }
    }

    #[test]
    fn a_closed_link_fails_its_calls() {
        let link = link();
        let (tx, mut rx) = oneshot::channel();
        lock(&link.pending).calls.insert(
            1,
            Waiter::Awaited {
                done: tx,
                progress: None,
            },
        );
        link.close();
        assert!(rx.try_recv().is_err());
        assert!(lock(&link.pending).closed);
    }

    #[test]
    fn lines_over_the_limit_stop_the_reader_and_say_why() {
        let input: &[u8] = b"{\"a\":1}\nlast without newline";
        let mut lines = BlockingLines::new(input).with_limit(64);
        assert_eq!(lines.next(), Some(&b"{\"a\":1}\n"[..]));
        assert_eq!(lines.next(), Some(&b"last without newline"[..]));
        assert_eq!(lines.next(), None);
        assert!(!lines.too_long());
        // Regression: bytes with no newline were buffered without end. The reader (a 64 KB
        // buffer) stops once the line passes the limit, not when the input ends.
        let endless = std::io::repeat(b'x');
        let mut lines = BlockingLines::new(endless).with_limit(1 << 20);
        assert_eq!(lines.next(), None);
        assert!(lines.too_long());
        assert!(lines.line.capacity() <= 1 << 20);
        // The calls it leaves unanswered say why.
        let link = link();
        link.break_off(too_long());
        let error = closed(&link, "h", &Notify::new()).to_string();
        assert!(
            error.contains("server \"h\"") && error.contains("more than 32 MB without a newline"),
            "{error}"
        );
    }

    #[tokio::test]
    async fn async_lines_keep_the_same_limit() {
        let mut lines = Lines::new(tokio::io::repeat(b'x')).with_limit(1 << 20);
        assert_eq!(lines.next().await, None);
        assert!(lines.too_long());
        let mut lines = Lines::new(&b"one\ntwo"[..]);
        assert_eq!(lines.next().await, Some(&b"one\n"[..]));
        assert_eq!(lines.next().await, Some(&b"two"[..]));
        assert_eq!(lines.next().await, None);
    }

    /// A fake delivery (unit tests only): what it is handed goes to a channel.
    struct FakeDelivery(tokio::sync::mpsc::UnboundedSender<String>);

    impl Delivery for FakeDelivery {
        fn progress(&mut self, params: &RawValue) -> Option<Delivering> {
            let _ = self.0.send(format!("progress {}", params.get()));
            None
        }

        fn finish(self: Box<Self>, outcome: Outcome) -> Delivering {
            let said = match outcome {
                Ok(result) => format!("result {}", result.get()),
                Err(e) => format!("error {e}"),
            };
            let _ = self.0.send(said);
            Box::pin(async {})
        }
    }

    fn caller(link: &Arc<RawLink>, timeout: Duration) -> RawCaller {
        RawCaller {
            link: link.clone(),
            server: Arc::from("up"),
            timeout,
            suspect: Arc::new(Notify::new()),
            relays: Arc::new(Relays::default()),
        }
    }

    fn fake() -> (
        Box<FakeDelivery>,
        tokio::sync::mpsc::UnboundedReceiver<String>,
    ) {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        (Box::new(FakeDelivery(tx)), rx)
    }

    /// A started call as `RawCaller::start` makes it.
    fn started(
        caller: &RawCaller,
        ticket: &RawTicket,
        tool: &str,
        progress: bool,
        delivery: Box<FakeDelivery>,
    ) -> Started {
        let sent = Instant::now();
        Started {
            delivery,
            progress,
            due: sent + caller.timeout,
            sent,
            reported: None,
            tool: tool.to_string(),
            server: caller.server.clone(),
            timeout: caller.timeout,
            suspect: caller.suspect.clone(),
            _registered: caller.register(&raw_id_text(ticket.id)),
        }
    }

    async fn deliver(link: &RawLink, line: &str) {
        match link.take_reply(line.as_bytes()) {
            Taken::Deliver(delivering) => delivering.await,
            Taken::Yes => {}
            Taken::No => panic!("not taken: {line}"),
        }
    }

    fn args() -> Box<RawValue> {
        RawValue::from_string("{}".to_string()).unwrap()
    }

    #[tokio::test]
    async fn a_started_call_gets_its_progress_and_result_from_the_reader() {
        let link = link();
        let (delivery, mut said) = fake();
        let caller = caller(&link, Duration::from_secs(60));
        let ticket = caller.ticket();
        // No stdin: the write fails, so file the call by hand as `start` does first.
        let started = started(&caller, &ticket, "echo", true, delivery);
        assert!(link.file(ticket.id, started).is_none());
        let n = ticket.id;
        deliver(
            &link,
            &format!(r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progressToken":"sb~{n}","progress":1}}}}"#),
        )
        .await;
        deliver(
            &link,
            &format!(r#"{{"jsonrpc":"2.0","id":"sb~{n}","result":{{"content":[]}}}}"#),
        )
        .await;
        assert!(said.recv().await.unwrap().contains("\"progress\":1"));
        assert_eq!(said.recv().await.unwrap(), r#"result {"content":[]}"#);
        assert!(lock(&link.pending).calls.is_empty());
    }

    #[tokio::test]
    async fn a_started_call_on_a_link_that_cannot_write_is_told_it_closed() {
        let link = link();
        let (delivery, mut said) = fake();
        let caller = caller(&link, Duration::from_secs(60));
        let ticket = caller.ticket();
        caller
            .start(&ticket, "echo".to_string(), &args(), false, delivery)
            .await;
        let told = said.recv().await.unwrap();
        assert!(
            told.starts_with("error") && told.contains("session ended"),
            "{told}"
        );
        assert!(lock(&link.pending).calls.is_empty());
    }

    #[tokio::test]
    async fn started_calls_time_out_fail_on_close_and_cancel_quietly() {
        let link = link();
        let timer = tokio::spawn(timer(link.clone()));
        let file = |timeout: Duration| {
            let (delivery, said) = fake();
            let caller = caller(&link, timeout);
            let ticket = caller.ticket();
            let started = started(&caller, &ticket, "slow", false, delivery);
            assert!(link.file(ticket.id, started).is_none());
            (ticket, said)
        };
        let (_late, mut late) = file(Duration::from_secs(3600));
        let (_soon, mut soon) = file(Duration::from_millis(30));
        let (cancelled, mut quiet) = file(Duration::from_secs(3600));
        let told = tokio::time::timeout(Duration::from_secs(10), soon.recv())
            .await
            .expect("the timer should time the short call out")
            .unwrap();
        assert!(told.contains("\"slow\" timed out"), "{told}");
        cancelled.cancel().await;
        for started in link.close() {
            started.closed(&link).await;
        }
        let told = late.recv().await.unwrap();
        assert!(told.contains("session ended"), "{told}");
        assert!(
            quiet.recv().await.is_none(),
            "a cancelled call is not delivered"
        );
        tokio::time::timeout(Duration::from_secs(10), timer)
            .await
            .expect("the timer ends with the session")
            .unwrap();
    }
}
