//! Raw tool calls on a stdio server's pipes, beside rmcp's session on the same pipes.
//!
//! A stdio server's stdin and stdout are owned here, not by rmcp: rmcp's client session talks
//! to the child through an in-memory pipe, line by line, and [`RawLink`] writes `tools/call`
//! requests of its own (ids `"sb~N"`, a string, where rmcp numbers its own) straight to the
//! child, and takes their responses out of the child's output before rmcp sees it. A gateway
//! relaying a plain call this way skips rmcp's typed model on both sides: the arguments and the
//! result pass through as the JSON text they arrived as.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
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

use crate::convert;
use crate::error::SessionError;
use crate::relay::Relays;
use crate::slot::lock;

/// The prefix of the ids of raw requests (rmcp's own ids are numbers).
const ID_PREFIX: &str = "sb~";
/// Room in the in-memory pipes between rmcp and the child's pipes.
const PIPE_BYTES: usize = 256 * 1024;
/// How long a closing session waits for the child to exit before SIGTERM, then SIGKILL.
const EXIT_WAIT: Duration = Duration::from_secs(3);
/// What a session that ended under a call says (the same words as rmcp's path).
const CLOSED: &str =
    "the session ended while the request was in flight (the server exited or hung up)";

/// How an upstream answered a raw request.
enum Reply {
    Result(Box<RawValue>),
    Error { code: i32, message: String },
}

/// The raw side of one stdio session: the child's stdin, and the raw calls in flight.
pub(crate) struct RawLink {
    stdin: tokio::sync::Mutex<Option<ChildStdin>>,
    pending: Mutex<Pending>,
    next: AtomicU64,
}

#[derive(Default)]
struct Pending {
    closed: bool,
    calls: HashMap<u64, Waiter>,
}

/// A raw call waiting for its response, and where its progress goes.
struct Waiter {
    done: oneshot::Sender<Reply>,
    progress: Option<ProgressSink>,
}

/// Where a raw call's `notifications/progress` go: their params as the server sent them
/// (under the call's own progress token, which the receiver replaces with its own).
pub type ProgressSink = tokio::sync::mpsc::UnboundedSender<Box<RawValue>>;

impl RawLink {
    /// Write one whole line to the child (the lock keeps lines from interleaving).
    async fn write_line(&self, line: &[u8]) -> std::io::Result<()> {
        let mut stdin = self.stdin.lock().await;
        let Some(pipe) = stdin.as_mut() else {
            return Err(std::io::ErrorKind::BrokenPipe.into());
        };
        pipe.write_all(line).await
    }

    /// Close the child's stdin: the MCP way to ask a stdio server to exit.
    async fn close_stdin(&self) {
        self.stdin.lock().await.take();
    }

    /// The session is over: every raw call in flight fails as closed.
    fn close(&self) {
        let mut pending = lock(&self.pending);
        pending.closed = true;
        pending.calls.clear();
    }

    /// If `line` is the response to a raw request, hand it to its caller and say so.
    fn take_reply(&self, line: &[u8]) -> bool {
        if !contains(line, b"\"sb~") {
            return false;
        }
        #[derive(Deserialize)]
        struct Head<'a> {
            #[serde(borrow)]
            id: Option<&'a RawValue>,
            #[serde(borrow)]
            method: Option<std::borrow::Cow<'a, str>>,
            #[serde(borrow)]
            params: Option<&'a RawValue>,
            result: Option<Box<RawValue>>,
            error: Option<RpcError>,
        }
        #[derive(Deserialize)]
        struct RpcError {
            code: i32,
            #[serde(default)]
            message: String,
        }
        let Ok(head) = serde_json::from_slice::<Head>(line) else {
            return false;
        };
        if let Some(method) = head.method.as_deref() {
            return method == "notifications/progress"
                && head.params.is_some_and(|p| self.take_progress(p));
        }
        let Some(n) = head.id.and_then(|id| raw_id(id.get())) else {
            return false;
        };
        let reply = match (head.result, head.error) {
            (Some(result), _) => Reply::Result(result),
            (None, Some(e)) => Reply::Error {
                code: e.code,
                message: e.message,
            },
            (None, None) => return false,
        };
        if let Some(waiter) = lock(&self.pending).calls.remove(&n) {
            let _ = waiter.done.send(reply);
        }
        // A response to a raw request that is no longer awaited (cancelled, timed out) is
        // ours all the same: rmcp never sent that id.
        true
    }

    /// Progress under a raw call's token goes to the call's sink (or nowhere, when it gave
    /// none or is over); `false` when the token is not ours.
    fn take_progress(&self, params: &RawValue) -> bool {
        #[derive(Deserialize)]
        struct Progress<'a> {
            #[serde(rename = "progressToken", borrow)]
            token: &'a RawValue,
        }
        let Some(n) = serde_json::from_str::<Progress>(params.get())
            .ok()
            .and_then(|p| raw_id(p.token.get()))
        else {
            return false;
        };
        if let Some(sink) = lock(&self.pending)
            .calls
            .get(&n)
            .and_then(|w| w.progress.as_ref())
        {
            let _ = sink.send(params.to_owned());
        }
        true
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

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

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
        let was_pending = lock(&self.link.pending).calls.remove(&self.id).is_some();
        if !was_pending {
            return;
        }
        let line = format!(
            "{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{{\"requestId\":\"{ID_PREFIX}{}\",\"reason\":\"the client cancelled the call or it timed out\"}}}}\n",
            self.id
        );
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
    pub(crate) server: String,
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
                server: self.server.clone(),
                detail: format!("the arguments do not serialize: {e}"),
            })?;
        let server = self.server.clone();
        let raw = self.call(tool, &arguments).await?;
        if let Ok(typed) = serde_json::from_str::<rmcp::model::CallToolResult>(raw.get()) {
            return Ok(convert::typed_call_result(typed));
        }
        serde_json::from_str::<Value>(raw.get())
            .ok()
            .and_then(|v| convert::call_result(&v))
            .ok_or_else(|| SessionError::Protocol {
                server,
                detail: format!(
                    "tool \"{tool}\" answered with something that is not a tool result"
                ),
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
        let meta = if progress.is_some() {
            format!(",\"_meta\":{{\"progressToken\":\"{ID_PREFIX}{id}\"}}")
        } else {
            String::new()
        };
        let (tx, rx) = oneshot::channel();
        {
            let mut pending = lock(&self.link.pending);
            if pending.closed {
                return Err(self.closed());
            }
            pending.calls.insert(id, Waiter { done: tx, progress });
        }
        let raw_id: Arc<str> = format!("{ID_PREFIX}{id}").into();
        let _registered = self.relays.register(
            ProgressToken(NumberOrString::String(raw_id.clone())),
            NumberOrString::String(raw_id),
            None,
        );
        let mut flight = InFlight {
            link: self.link.clone(),
            id,
            answered: false,
        };
        let name = serde_json::to_string(tool).unwrap_or_else(|_| "\"\"".to_string());
        let line = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":\"{ID_PREFIX}{id}\",\"method\":\"tools/call\",\"params\":{{\"name\":{name},\"arguments\":{}{meta}}}}}\n",
            arguments.get()
        );
        if self.link.write_line(line.as_bytes()).await.is_err() {
            flight.answered = true;
            lock(&self.link.pending).calls.remove(&id);
            return Err(self.closed());
        }
        let reply = match tokio::time::timeout(self.timeout, rx).await {
            Ok(Ok(reply)) => reply,
            Ok(Err(_)) => {
                flight.answered = true;
                return Err(self.closed());
            }
            Err(_) => {
                // Dropping `flight` sends notifications/cancelled.
                return Err(SessionError::Timeout {
                    server: self.server.clone(),
                    tool: tool.to_string(),
                    after: self.timeout,
                });
            }
        };
        flight.answered = true;
        match reply {
            Reply::Error { code, message } => Err(SessionError::Rpc {
                server: self.server.clone(),
                code,
                message,
            }),
            Reply::Result(result) => self.checked(tool, result),
        }
    }

    /// A result that asks for more input or became a task is refused as on the typed path;
    /// anything but an object is not a tool result.
    fn checked(&self, tool: &str, result: Box<RawValue>) -> Result<Box<RawValue>, SessionError> {
        #[derive(Deserialize)]
        struct Probe {
            #[serde(rename = "resultType")]
            result_type: Option<String>,
            task: Option<IgnoredAny>,
        }
        let protocol = |detail: String| SessionError::Protocol {
            server: self.server.clone(),
            detail,
        };
        match serde_json::from_str::<Probe>(result.get()) {
            Ok(p)
                if p.task.is_some()
                    || p.result_type.as_deref().is_some_and(|t| t != "complete") =>
            {
                Err(protocol(format!(
                    "tool \"{tool}\" asked for more input or became a task, which switchboard does not support"
                )))
            }
            Ok(_) => Ok(result),
            Err(_) => Err(protocol(format!(
                "tool \"{tool}\" answered with something that is not a tool result"
            ))),
        }
    }

    fn closed(&self) -> SessionError {
        self.suspect.notify_one();
        SessionError::Closed {
            server: self.server.clone(),
            detail: CLOSED.to_string(),
        }
    }
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
pub(crate) fn share(
    mut child: Box<dyn ChildWrapper>,
) -> std::io::Result<(SharedChild, Arc<RawLink>, Option<ChildStderr>)> {
    let taken = |what: &str| std::io::Error::other(format!("the child's {what} was already taken"));
    let stdin = child.stdin().take().ok_or_else(|| taken("stdin"))?;
    let stdout = child.stdout().take().ok_or_else(|| taken("stdout"))?;
    let stderr = child.stderr().take();
    let link = Arc::new(RawLink {
        stdin: tokio::sync::Mutex::new(Some(stdin)),
        pending: Mutex::new(Pending::default()),
        next: AtomicU64::new(1),
    });
    let (ours, rmcp_side) = tokio::io::duplex(PIPE_BYTES);
    let (from_rmcp, to_rmcp) = tokio::io::split(ours);
    let (read, write) = tokio::io::split(rmcp_side);
    let pumps = vec![
        tokio::spawn(child_to_rmcp(stdout, link.clone(), to_rmcp)),
        tokio::spawn(rmcp_to_child(from_rmcp, link.clone())),
    ];
    let shared = SharedChild {
        inner: AsyncRwTransport::new(read, write),
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
}

impl<R: AsyncRead + Unpin> Lines<R> {
    /// Lines read from `read`.
    pub fn new(read: R) -> Self {
        Self {
            reader: BufReader::with_capacity(64 * 1024, read),
            line: Vec::with_capacity(4096),
        }
    }

    /// The next line, its newline kept (the last one may have none); `None` at the end of
    /// the input or on a read error.
    pub async fn next(&mut self) -> Option<&[u8]> {
        self.line.clear();
        match self.reader.read_until(b'\n', &mut self.line).await {
            Ok(0) | Err(_) => None,
            Ok(_) => Some(&self.line),
        }
    }
}

/// The child's output: raw responses to their callers, the rest to rmcp.
async fn child_to_rmcp(
    stdout: ChildStdout,
    link: Arc<RawLink>,
    mut to_rmcp: WriteHalf<DuplexStream>,
) {
    let mut lines = Lines::new(stdout);
    while let Some(line) = lines.next().await {
        if link.take_reply(line) {
            continue;
        }
        if to_rmcp.write_all(line).await.is_err() {
            break;
        }
    }
    link.close();
    let _ = to_rmcp.shutdown().await;
}

/// rmcp's requests and notifications to the child, a line at a time.
async fn rmcp_to_child(from_rmcp: ReadHalf<DuplexStream>, link: Arc<RawLink>) {
    let mut lines = Lines::new(from_rmcp);
    while let Some(line) = lines.next().await {
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
        if let Ok(Ok(_)) = tokio::time::timeout(EXIT_WAIT, child.wait()).await {
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
        self.link.close();
        for pump in &self.pumps {
            pump.abort();
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
    }

    fn link() -> Arc<RawLink> {
        Arc::new(RawLink {
            stdin: tokio::sync::Mutex::new(None),
            pending: Mutex::new(Pending::default()),
            next: AtomicU64::new(1),
        })
    }

    #[test]
    fn responses_to_raw_ids_are_taken_and_the_rest_pass() {
        let link = link();
        let (tx, mut rx) = oneshot::channel();
        let (ptx, mut prx) = tokio::sync::mpsc::unbounded_channel();
        lock(&link.pending).calls.insert(
            3,
            Waiter {
                done: tx,
                progress: Some(ptx),
            },
        );
        assert!(link.take_reply(
            br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"sb~3","progress":1}}"#
        ));
        assert!(!link.take_reply(
            br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":1}}"#
        ));
        assert!(prx.try_recv().unwrap().get().contains("\"progress\":1"));
        assert!(!link.take_reply(br#"{"jsonrpc":"2.0","id":3,"result":{}}"#));
        assert!(!link.take_reply(
            br#"{"jsonrpc":"2.0","id":"sb~3","method":"sampling/createMessage","params":{}}"#
        ));
        assert!(link.take_reply(
            br#"{"jsonrpc":"2.0","id":"sb~3","result":{"content":[{"type":"text","text":"sb~ hi"}]}}"#
        ));
        match rx.try_recv() {
            Ok(Reply::Result(r)) => assert!(r.get().contains("sb~ hi")),
            _ => panic!("the reply did not reach its caller"),
        }
        // A late answer to a call nobody waits for is still not rmcp's.
        assert!(
            link.take_reply(br#"{"jsonrpc":"2.0","id":"sb~9","error":{"code":-1,"message":"x"}}"#)
        );
    }

    #[test]
    fn a_closed_link_fails_its_calls() {
        let link = link();
        let (tx, mut rx) = oneshot::channel();
        lock(&link.pending).calls.insert(
            1,
            Waiter {
                done: tx,
                progress: None,
            },
        );
        link.close();
        assert!(rx.try_recv().is_err());
        assert!(lock(&link.pending).closed);
    }
}
