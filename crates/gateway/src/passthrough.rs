//! The stdio gateway's pass-through: a plain tool call goes to its stdio server as JSON text.
//!
//! Every line the client sends is read here first. A `tools/call` that needs nothing from the
//! gateway but routing (an open tool, allowed without asking, not task-augmented, with no
//! output schema to check its result against, from a
//! client that takes no sampling or elicitation and said `initialize`, to a stdio upstream
//! that is ready) is written to the upstream by [`switchboard_mcp::RawCaller`] with its
//! arguments as they came, and the upstream's result goes back to the client as it came (marked
//! complete for a 2026-07-28 client); progress comes back under the client's own token. The
//! client's input is read on a thread of its own with blocking reads, and a call is sent from
//! there; its answer is written to the client by the reader of the upstream's output (a thread
//! too, on Unix), so a call passing through wakes no task of the runtime. Everything else, and
//! every call the pass-through cannot take, goes to the rmcp server session unchanged, through
//! an in-memory pipe. Both write whole lines to the client under one lock.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::task::Poll;

use rmcp::ServiceExt;
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::Value;
use serde_json::value::RawValue;
use switchboard_host::policy::{self, Decision};
use switchboard_mcp::{
    BlockingLines, Delivering, Delivery, Lines, Outcome, RawCaller, RawTicket, drive,
};
use tokio::io::{AsyncWrite, AsyncWriteExt};

use crate::error::GatewayError;
use crate::gateway::Gateway;
use crate::handler::GatewayHandler;
use crate::rpc_screen::{self, Screened};
use crate::view::Route;

/// Room in the in-memory pipe between this reader and the rmcp session.
const PIPE_BYTES: usize = 256 * 1024;
/// The first revision whose results need `resultType` (left to the rmcp session).
const FIRST_STATELESS: &str = "2026-07-28";

/// Whether calls may take the raw path (this pass-through, and the handler's calls to stdio
/// servers): `SWITCHBOARD_PASSTHROUGH=0` sends every call through rmcp's sessions on both
/// sides (to compare, or to rule the raw path out). Read once.
pub(crate) fn enabled() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var("SWITCHBOARD_PASSTHROUGH").map_or(true, |v| v != "0"))
}

/// What the client's `initialize` said that decides whether its calls can pass through.
#[derive(Default)]
struct ClientTerms {
    initialized: bool,
    /// Calls from this client may pass through.
    plain: bool,
    /// `name version` from its `clientInfo`, for the call log.
    client: Option<String>,
}

/// The revision the session answered `initialize` with: whether results must say
/// `"resultType": "complete"` (2026-07-28 and later). Unset until the answer has gone out;
/// no call passes through before.
type Negotiated = Arc<std::sync::OnceLock<bool>>;

/// Calls passing through, by the client's request id (as JSON text), for cancellation.
/// (foldhash rather than SipHash: a lookup per call and per answer; a client that picks
/// colliding ids slows only its own calls.)
type Flights = Arc<Mutex<HashMap<Arc<str>, RawTicket, foldhash::fast::RandomState>>>;

type Out<W> = Arc<tokio::sync::Mutex<W>>;

/// Serve the gateway until the client disconnects: its lines from `read` (a blocking reader,
/// read on a thread of its own), everything to it on `write`.
pub(crate) async fn serve<R, W>(
    gateway: Arc<Gateway>,
    read: R,
    write: W,
) -> Result<(), GatewayError>
where
    R: std::io::Read + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (ours, rmcp_side) = tokio::io::duplex(PIPE_BYTES);
    let (from_rmcp, to_rmcp) = tokio::io::split(ours);
    let out: Out<W> = Arc::new(tokio::sync::Mutex::new(write));
    let negotiated = Negotiated::default();
    let reader = Reader {
        calls: Calls {
            gateway: gateway.clone(),
            out: out.clone(),
            negotiated: negotiated.clone(),
            terms: ClientTerms::default(),
            flights: Flights::default(),
        },
        to_rmcp,
        runtime: tokio::runtime::Handle::current(),
    };
    // The thread ends when the client's input does; when the session ends first (the process
    // is about to exit), it is left blocked in its read.
    std::thread::Builder::new()
        .name("sb-client".to_string())
        .spawn(move || reader.run(read))
        .map_err(|e| GatewayError::Serve(format!("no thread to read the client: {e}")))?;
    let server = tokio::spawn(server_lines(from_rmcp, out, negotiated));
    let running = GatewayHandler::new(gateway)
        .serve(tokio::io::split(rmcp_side))
        .await;
    let ended = match running {
        Ok(running) => running
            .waiting()
            .await
            .map(|_| ())
            .map_err(|e| GatewayError::Serve(e.to_string())),
        Err(e) => crate::stdio::not_started(e),
    };
    let _ = server.await;
    ended
}

/// The rmcp session's lines to the client.
async fn server_lines<W: AsyncWrite + Unpin>(
    from_rmcp: tokio::io::ReadHalf<tokio::io::DuplexStream>,
    out: Out<W>,
    negotiated: Negotiated,
) {
    let mut lines = Lines::new(from_rmcp);
    while let Some(line) = lines.next().await {
        // Noted before the answer goes out: the client may call as soon as it reads it.
        if negotiated.get().is_none()
            && let Some(version) = answered_version(line)
        {
            let _ = negotiated.set(version.as_str() >= FIRST_STATELESS);
        }
        if write_line(&out, line).await.is_err() {
            return;
        }
    }
}

/// The protocol version of an `initialize` answer.
fn answered_version(line: &[u8]) -> Option<String> {
    #[derive(Deserialize)]
    struct Answer {
        result: Option<Version>,
    }
    #[derive(Deserialize)]
    struct Version {
        #[serde(rename = "protocolVersion")]
        protocol_version: Option<String>,
    }
    serde_json::from_slice::<Answer>(line)
        .ok()?
        .result?
        .protocol_version
}

async fn write_line<W: AsyncWrite + Unpin>(out: &Out<W>, line: &[u8]) -> std::io::Result<()> {
    let mut w = out.lock().await;
    w.write_all(line).await?;
    w.flush().await
}

/// A line without its newline (`\n` or `\r\n`).
fn without_newline(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// What the thread reading the client's lines holds.
struct Reader<W> {
    calls: Calls<W>,
    to_rmcp: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    /// Writes from this thread run through the runtime's handle (they nearly always complete
    /// at once; a full pipe waits here, holding up no task).
    runtime: tokio::runtime::Handle,
}

impl<W: AsyncWrite + Unpin + Send + 'static> Reader<W> {
    /// The client's lines: plain calls pass through, the rest go to the rmcp session.
    fn run(mut self, read: impl std::io::Read) {
        let runtime = self.runtime.clone();
        let _context = runtime.enter();
        let mut lines = BlockingLines::new(read);
        let on = self.calls.gateway.passes_through();
        while let Some(line) = lines.next() {
            if on && drive(&runtime, self.calls.take(line)) {
                continue;
            }
            // A line rmcp's session cannot read is answered here, as JSON-RPC says (rmcp
            // drops one that is not JSON, and answers the others under no id).
            match rpc_screen::screen(without_newline(line)) {
                Screened::Fine => {}
                Screened::Blank => continue,
                Screened::Answer(error) => {
                    tracing::info!("the client sent what is not a JSON-RPC message: {error}");
                    let answer = format!("{error}\n");
                    if drive(&runtime, write_line(&self.calls.out, answer.as_bytes())).is_err() {
                        break;
                    }
                    continue;
                }
            }
            if drive(&runtime, self.to_rmcp.write_all(line)).is_err() {
                break;
            }
        }
        let left: Vec<RawTicket> = lock(&self.calls.flights).drain().map(|(_, t)| t).collect();
        self.runtime.block_on(async {
            for ticket in left {
                ticket.cancel().await;
            }
            let _ = self.to_rmcp.shutdown().await;
        });
    }
}

/// One client's side of the pass-through: what its `initialize` said, its calls in flight, and
/// where their answers go.
struct Calls<W> {
    gateway: Arc<Gateway>,
    out: Out<W>,
    negotiated: Negotiated,
    terms: ClientTerms,
    flights: Flights,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow)]
    method: Option<Cow<'a, str>>,
    #[serde(borrow)]
    params: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Initialize {
    #[serde(default)]
    capabilities: Capabilities,
    #[serde(rename = "clientInfo")]
    client_info: Option<ClientInfo>,
}

/// A client's `clientInfo`.
#[derive(Deserialize)]
pub(crate) struct ClientInfo {
    #[serde(default)]
    name: String,
    #[serde(default)]
    version: String,
}

impl ClientInfo {
    /// `name version`, as the call log names a client (the handler's path words it so too).
    pub(crate) fn named(&self) -> String {
        format!("{} {}", self.name, self.version).trim().to_string()
    }
}

#[derive(Deserialize, Default)]
struct Capabilities {
    sampling: Option<IgnoredAny>,
    elicitation: Option<IgnoredAny>,
}

#[derive(Deserialize)]
struct CallParams<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(borrow)]
    arguments: Option<&'a RawValue>,
    #[serde(rename = "_meta")]
    meta: Option<Meta>,
    task: Option<IgnoredAny>,
}

#[derive(Deserialize)]
struct Meta {
    #[serde(rename = "progressToken")]
    progress_token: Option<Box<RawValue>>,
    #[serde(rename = "io.modelcontextprotocol/protocolVersion")]
    protocol_version: Option<IgnoredAny>,
}

/// A `tools/call` as a pass-through reads it (over stdio and HTTP alike).
pub(crate) struct PlainCall<'a> {
    /// The public tool name.
    pub(crate) name: Cow<'a, str>,
    /// The arguments' JSON text: an object (`{}` when the call gave none or `null`).
    pub(crate) arguments: Cow<'a, RawValue>,
    pub(crate) progress_token: Option<Box<RawValue>>,
    /// The call names its own protocol revision in `_meta` (2026-07-28).
    pub(crate) names_revision: bool,
}

/// Read a `tools/call`'s `params`; `None` for a call a pass-through cannot carry as it stands
/// (task-augmented, arguments that are not an object, not a call at all).
pub(crate) fn plain_call(params: &RawValue) -> Option<PlainCall<'_>> {
    plain(serde_json::from_str::<CallParams>(params.get()).ok()?)
}

/// [`plain_call`] of params already read.
fn plain(call: CallParams<'_>) -> Option<PlainCall<'_>> {
    if call.task.is_some() {
        return None;
    }
    let arguments = match call.arguments {
        None => Cow::Owned(RawValue::from_string("{}".to_string()).ok()?),
        Some(a) if a.get() == "null" => Cow::Owned(RawValue::from_string("{}".to_string()).ok()?),
        Some(a) if a.get().trim_start().starts_with('{') => Cow::Borrowed(a),
        Some(_) => return None,
    };
    let (progress_token, names_revision) = match call.meta {
        Some(meta) => (meta.progress_token, meta.protocol_version.is_some()),
        None => (None, false),
    };
    Some(PlainCall {
        name: call.name,
        arguments,
        progress_token,
        names_revision,
    })
}

#[derive(Deserialize)]
struct Cancelled<'a> {
    #[serde(rename = "requestId", borrow)]
    request_id: &'a RawValue,
}

/// A `tools/call` line read in one pass (the common line, and the one on the hot path).
#[derive(Deserialize)]
struct CallLine<'a> {
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    method: Cow<'a, str>,
    #[serde(borrow)]
    params: CallParams<'a>,
}

impl<W: AsyncWrite + Unpin + Send + 'static> Calls<W> {
    /// Handle `line` here if it is a call that can pass through (or the cancellation of one);
    /// `false` sends it on to the rmcp session. Notes what `initialize` says on the way.
    async fn take(&mut self, line: &[u8]) -> bool {
        // Read as text, checked once: from bytes, serde_json would check every string and raw
        // value it borrows on its own.
        let Ok(line) = std::str::from_utf8(line) else {
            return false;
        };
        if TOOLS_CALL.find(line.as_bytes()).is_some()
            && let Ok(call) = serde_json::from_str::<CallLine>(line)
            && call.method == "tools/call"
        {
            let terms = &self.terms;
            let open = terms.initialized && terms.plain && self.negotiated.get().is_some();
            return match (call.id, plain(call.params)) {
                (Some(id), Some(call)) if open => self.pass(id, call).await,
                _ => false,
            };
        }
        let Ok(message) = serde_json::from_str::<Message>(line) else {
            return false;
        };
        let (Some(method), Some(params)) = (message.method.as_deref(), message.params) else {
            return false;
        };
        match method {
            "initialize" => {
                self.terms = match serde_json::from_str::<Initialize>(params.get()) {
                    Ok(init) => ClientTerms {
                        initialized: true,
                        plain: init.capabilities.sampling.is_none()
                            && init.capabilities.elicitation.is_none(),
                        client: init.client_info.map(|c| c.named()),
                    },
                    Err(_) => ClientTerms::default(),
                };
                false
            }
            "notifications/cancelled" => {
                let Ok(c) = serde_json::from_str::<Cancelled>(params.get()) else {
                    return false;
                };
                let ticket = lock(&self.flights).remove(c.request_id.get().trim());
                match ticket {
                    Some(ticket) => {
                        ticket.cancel().await;
                        true
                    }
                    None => false,
                }
            }
            _ => false,
        }
    }

    /// Send a plain call on to its server, if it routes to one that takes calls as JSON text.
    async fn pass(&self, id: &RawValue, call: PlainCall<'_>) -> bool {
        let Some(routed) = route(&self.gateway, &call.name) else {
            return false;
        };
        let log = logged(&self.gateway, self.terms.client.as_deref(), &call, &routed);
        let Routed {
            caller,
            tool,
            limit,
            ..
        } = routed;
        let id: Arc<str> = Arc::from(id.get().trim());
        tracing::debug!(tool = %call.name, "call passes through");
        let ticket = caller.ticket();
        // Filed before the call is sent: its answer may come back before `start` returns.
        lock(&self.flights).insert(id.clone(), ticket.clone());
        let asks = call.progress_token.is_some();
        let answer = Box::new(Answer {
            out: self.out.clone(),
            id,
            public: call.name.to_string(),
            token: call.progress_token,
            limit,
            marks: self.negotiated.get().copied().unwrap_or(false),
            flights: self.flights.clone(),
            ticket: ticket.clone(),
            log,
        });
        send(caller.start(&ticket, tool, &call.arguments, asks, answer)).await;
        true
    }
}

/// Finds `"tools/call"` in a line (the searcher built once: building one costs more than a
/// search of a short line).
static TOOLS_CALL: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
    std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"\"tools/call\""));

/// Run `sending` (a started call's write to its server) here when the server's stdin takes it
/// at once, as it nearly always does; otherwise finish it on a task of its own, so that a
/// server that is not reading holds up nothing else. Either way it keeps its place in line.
pub(crate) async fn send(sending: impl Future<Output = ()> + Send + 'static) {
    let mut sending = Box::pin(sending);
    let first = std::future::poll_fn(|cx| Poll::Ready(sending.as_mut().poll(cx))).await;
    if first.is_pending() {
        tokio::spawn(sending);
    }
}

/// Where a call passing through answers: the client's output, under its own request id and
/// progress token.
struct Answer<W> {
    out: Out<W>,
    /// The client's request id, as JSON text.
    id: Arc<str>,
    public: String,
    token: Option<Box<RawValue>>,
    /// The config's `max_result_tokens` for the tool, when set.
    limit: Option<u32>,
    /// Results are marked complete (a 2026-07-28 client).
    marks: bool,
    flights: Flights,
    ticket: RawTicket,
    /// The call log's entry, when there is a log.
    log: Option<crate::call_log::Entry>,
}

impl<W: AsyncWrite + Unpin + Send + 'static> Delivery for Answer<W> {
    fn progress(&mut self, params: &RawValue) -> Option<Delivering> {
        let note = progress_note(self.token.as_deref()?, params)?;
        let out = self.out.clone();
        Some(Box::pin(async move {
            let _ = write_line(&out, format!("{note}\n").as_bytes()).await;
        }))
    }

    fn finish(mut self: Box<Self>, outcome: Outcome) -> Delivering {
        {
            let mut flights = lock(&self.flights);
            if flights.get(&*self.id).is_some_and(|t| t.same(&self.ticket)) {
                flights.remove(&*self.id);
            }
        }
        let public = &self.public;
        // Logged just before the client has its answer (the result as it gets it, or why it
        // failed), so a call the client makes after this answer is logged after this one.
        let log = self.log.take().map(|log| {
            let failed = outcome.as_ref().err().map(ToString::to_string);
            (log, failed)
        });
        // The upstream's result is copied once, into the line (unless it needs marking).
        let built;
        let shortened = match &outcome {
            Ok(result) => cut(result.get(), self.limit, public),
            Err(_) => None,
        };
        let result = match &outcome {
            Ok(result) if self.marks => {
                built = marked(shortened.as_deref().unwrap_or(result.get()));
                &built
            }
            Ok(result) => shortened.as_deref().unwrap_or(result.get()),
            Err(e) if self.marks => {
                built = marked(&refusal(&format!("{public}: {e}")));
                &built
            }
            Err(e) => {
                built = refusal(&format!("{public}: {e}"));
                &built
            }
        };
        let mut line = String::with_capacity(32 + self.id.len() + result.len());
        line.push_str("{\"jsonrpc\":\"2.0\",\"id\":");
        line.push_str(&self.id);
        line.push_str(",\"result\":");
        let at = line.len();
        line.push_str(result);
        let result = at..line.len();
        line.push_str("}\n");
        match log {
            Some((log, None)) => log.end_raw(Ok(&line[result])),
            Some((log, Some(failed))) => log.end_raw(Err(&failed)),
            None => {}
        }
        Box::pin(async move {
            let _ = write_line(&self.out, line.as_bytes()).await;
        })
    }
}

/// Where a public name that may pass through goes.
pub(crate) struct Routed {
    pub(crate) caller: RawCaller,
    /// The server's name, for the call log (only with one: a call passing through need not
    /// copy it otherwise).
    pub(crate) server: Option<String>,
    /// The upstream's name for the tool.
    pub(crate) tool: String,
    /// The config's `max_result_tokens` for the tool, when set.
    pub(crate) limit: Option<u32>,
}

/// The upstream, its tool name and the config's result limit for it, for a public name that
/// may pass through.
pub(crate) fn route(gateway: &Gateway, public: &str) -> Option<Routed> {
    let snapshot = gateway.snapshot();
    let Some(Route::Open { server, def }) = snapshot.view.routes.get(public) else {
        return None;
    };
    let config = snapshot.servers.get(server)?;
    // A tool that runs only as a task is called through the session, which drives the task;
    // one that declares an output schema too, where its result is checked against it.
    if !matches!(policy::decide(config, def), Decision::Allow)
        || def.requires_task()
        || def.output_schema.is_some()
    {
        return None;
    }
    let caller = gateway.sessions().raw_caller(server)?;
    let limit = config.set_result_limit(&def.name);
    Some(Routed {
        caller,
        server: gateway.call_log.is_some().then(|| server.to_string()),
        tool: def.name.to_string(),
        limit,
    })
}

/// The log entry for a call passing through, when `serve --call-log` is on.
pub(crate) fn logged(
    gateway: &Gateway,
    client: Option<&str>,
    call: &PlainCall<'_>,
    routed: &Routed,
) -> Option<crate::call_log::Entry> {
    let log = gateway.call_log.clone()?;
    Some(crate::call_log::Entry::passing(
        log,
        client,
        &call.name,
        (routed.server.as_deref()?, &routed.tool),
        call.arguments.get(),
    ))
}

/// A passed-through result (JSON text) cut to the config's `max_result_tokens` for the tool,
/// when one is set and the text is over it; `None` leaves the result as it came.
pub(crate) fn cut(result: &str, limit: Option<u32>, public: &str) -> Option<String> {
    let opts = switchboard_host::shape::ShapeOptions::new(false, limit?, public);
    let (cut, how) = switchboard_host::shape::cut_call_result_json(result, &opts)?;
    tracing::info!(
        tool = public,
        tokens = how.total_tokens,
        "result cut to max_result_tokens"
    );
    Some(cut)
}

/// The `notifications/progress` message for a server's progress `params`, under `token`.
pub(crate) fn progress_note(token: &RawValue, params: &RawValue) -> Option<String> {
    let mut params = serde_json::from_str::<serde_json::Map<String, Value>>(params.get()).ok()?;
    let token = serde_json::from_str::<Value>(token.get()).ok()?;
    params.insert("progressToken".to_string(), token);
    Some(
        serde_json::json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": params})
            .to_string(),
    )
}

/// A result marked complete (2026-07-28), unless it says what it is already.
fn marked(result: &str) -> String {
    #[derive(Deserialize)]
    struct Kind {
        #[serde(rename = "resultType")]
        result_type: Option<IgnoredAny>,
    }
    let body = result.trim_start();
    match serde_json::from_str::<Kind>(body) {
        Ok(Kind { result_type: None }) => match body.strip_prefix('{') {
            Some(rest) if rest.trim_start().starts_with('}') => {
                "{\"resultType\":\"complete\"}".to_string()
            }
            Some(rest) => format!("{{\"resultType\":\"complete\",{rest}"),
            None => result.to_string(),
        },
        _ => result.to_string(),
    }
}

/// An `is_error` tool result saying `text`.
pub(crate) fn refusal(text: &str) -> String {
    serde_json::json!({"content": [{"type": "text", "text": text}], "isError": true}).to_string()
}
