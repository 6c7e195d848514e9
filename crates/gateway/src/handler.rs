//! `GatewayHandler`: the MCP server side of the gateway (rmcp `ServerHandler`). Lists come from
//! the current view, paginated; calls are routed by looking the public name up in the view,
//! checked against the host's policy (asking the client's user through elicitation where the
//! policy says to ask), and sent to the upstream session. A client's cancellation cancels the
//! upstream request. What the upstream sends about a call (progress, sampling and elicitation
//! requests) goes to the calling client; `logging/setLevel`, `completion/complete` and resource
//! subscriptions are routed to the upstream servers that offer them, and a stateless request
//! that names a log level gets its server's log messages on its own stream.
// Logging and sampling are deprecated by SEP-2577 in rmcp 3.x, but clients on 2025-11-25 and
// earlier use them.
#![allow(deprecated)]

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestParams, CompleteResult,
    ContentBlock, CreateMessageRequestParams, CustomRequest, CustomResult, DiscoverResult,
    ElicitRequestParams, ElicitationAction, GetPromptRequestParams, GetPromptResponse,
    GetPromptResult, Implementation, InitializeRequestParams, InitializeResult, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
    LoggingMessageNotificationParam, PaginatedRequestParams, ProgressNotificationParam,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, ResultType,
    ServerCapabilities, ServerConfig, SetLevelRequestParams, SubscribeRequestParams,
    SubscriptionFilter, UnsubscribeRequestParams,
};
use rmcp::service::{ElicitationMode, NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::{Map, Value, json};
use switchboard_core::{CallResult, ContentBlock as Block, facade};
use switchboard_host::policy::{self, Decision};
use switchboard_mcp::{SessionError, Upcall, UpcallError, UpcallKind};

use crate::client::{self, Client};
use crate::gateway::{Expose, Gateway};
use crate::view::Route;

/// Items per page of an aggregated list. The cursor is the offset of the next item.
pub const PAGE_SIZE: usize = 100;

/// How long the gateway waits for its client's roots.
const ROOTS_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// One client connection's handler; all connections share the gateway.
#[derive(Clone)]
pub struct GatewayHandler {
    gateway: Arc<Gateway>,
    client: Arc<Client>,
}

impl GatewayHandler {
    /// Ask a client that offers roots for them, and hand them to the gateway, when it takes
    /// its client's roots; in the background, since the client answers on the session this
    /// is called from.
    fn fetch_roots(&self, peer: &rmcp::Peer<RoleServer>) {
        let offers = peer
            .peer_info()
            .is_some_and(|i| i.capabilities.roots.is_some());
        if !offers || !self.gateway.takes_client_roots() {
            return;
        }
        let peer = peer.clone();
        let gateway = self.gateway.clone();
        tokio::spawn(async move {
            match tokio::time::timeout(ROOTS_WAIT, peer.list_roots()).await {
                Ok(Ok(listing)) => {
                    let roots = listing
                        .roots
                        .into_iter()
                        .map(|r| switchboard_mcp::Root {
                            uri: r.uri,
                            name: r.name,
                        })
                        .collect();
                    gateway.client_roots(roots).await;
                }
                Ok(Err(e)) => tracing::info!(error = %e, "the client did not give its roots"),
                Err(_) => tracing::info!("the client did not give its roots within {ROOTS_WAIT:?}"),
            }
        });
    }

    /// A handler for one client connection.
    pub fn new(gateway: Arc<Gateway>) -> Self {
        Self {
            gateway,
            client: Arc::new(Client::default()),
        }
    }
}

/// Convert one of our wire-shaped values into rmcp's type of the same wire shape.
fn wire<T: serde::Serialize, U: serde::de::DeserializeOwned>(v: &T) -> Result<U, McpError> {
    serde_json::to_value(v)
        .and_then(serde_json::from_value)
        .map_err(|e| McpError::internal_error(format!("definition does not convert: {e}"), None))
}

/// One page of `items` starting at `cursor`.
pub fn page<T: Clone>(
    items: &[T],
    cursor: Option<&str>,
) -> Result<(Vec<T>, Option<String>), McpError> {
    let start = match cursor {
        None => 0,
        Some(c) => c
            .parse::<usize>()
            .ok()
            .filter(|&n| n <= items.len())
            .ok_or_else(|| McpError::invalid_params(format!("invalid cursor {c:?}"), None))?,
    };
    let end = (start + PAGE_SIZE).min(items.len());
    let next = (end < items.len()).then(|| end.to_string());
    Ok((items[start..end].to_vec(), next))
}

fn cursor(request: &Option<PaginatedRequestParams>) -> Option<&str> {
    request.as_ref().and_then(|r| r.cursor.as_deref())
}

/// A tool-call failure the caller should read: an `is_error` result.
fn refusal(text: impl Into<String>) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text.into())])
}

/// Mark a tool result complete: 2026-07-28 requires `resultType` on every result, and results
/// built from upstream JSON have none (older revisions do not send it). rmcp drops the field
/// again for clients on older revisions.
fn complete_call(mut result: CallToolResult) -> CallToolResult {
    result.result_type = Some(ResultType::COMPLETE);
    result
}

/// A session error on resources/prompts: a JSON-RPC error (those have no is_error form).
fn session_error(e: SessionError) -> McpError {
    match e {
        SessionError::Rpc { code, message, .. } => {
            McpError::new(rmcp::model::ErrorCode(code), message, None)
        }
        other => McpError::internal_error(other.to_string(), None),
    }
}

impl GatewayHandler {
    /// One `tools/call` as the client sent it: a tool of the catalog, or with the facade
    /// `search_tools` or `call_tool`.
    async fn run_call(
        &self,
        name: &str,
        args: Map<String, Value>,
        cx: &RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        // A log level that is not one is refused before anything runs.
        requested_log_level(cx)?;
        match self.gateway.expose {
            Expose::All => self.call(name, args, cx).await,
            Expose::Facade => match name {
                facade::SEARCH_TOOL => Ok(crate::facade::search(&self.gateway, args).await),
                facade::CALL_TOOL => {
                    let Some(name) = args.get("name").and_then(Value::as_str) else {
                        return Ok(refusal("call_tool needs a \"name\" string"));
                    };
                    let inner = match args.get("arguments") {
                        None | Some(Value::Null) => Map::new(),
                        Some(Value::Object(m)) => m.clone(),
                        Some(_) => {
                            return Ok(refusal("call_tool: \"arguments\" must be an object"));
                        }
                    };
                    match self.call(name, inner, cx).await {
                        Ok(r) => Ok(r),
                        // An unknown name is the model's mistake: tell it, as a result.
                        Err(e) => Ok(refusal(format!(
                            "{}; use search_tools to find the exact name",
                            e.message
                        ))),
                    }
                }
                other => Err(McpError::invalid_params(
                    format!(
                        "unknown tool {other:?}; this gateway exposes search_tools and call_tool"
                    ),
                    None,
                )),
            },
        }
    }

    /// Route a call by public name: policy, approval, then the upstream call.
    async fn call(
        &self,
        name: &str,
        args: Map<String, Value>,
        cx: &RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        // The snapshot (an Arc) stays alive for the call: no definition is copied.
        let snapshot = self.gateway.snapshot();
        let Some(route) = snapshot.view.routes.get(name) else {
            return Err(McpError::invalid_params(
                format!("unknown tool {name:?}"),
                None,
            ));
        };
        let (server, def) = match route {
            Route::Open { server, def } => (server.as_str(), def.as_ref()),
            Route::Hidden { reason } | Route::Withheld { reason } => {
                return Ok(refusal(reason.clone()));
            }
        };
        let Some(config) = snapshot.servers.get(server) else {
            return Ok(refusal(format!("server {server:?} is not configured")));
        };
        match policy::decide_call(config, def, Some(&args)) {
            Decision::Allow => {}
            Decision::Deny { reason } | Decision::Refuse { reason } => {
                return Ok(refusal(reason));
            }
            Decision::Ask { reason } => {
                if let Err(why) = ask(cx, name, &reason, &args).await {
                    return Ok(refusal(why));
                }
            }
        }
        let level = requested_log_level(cx)?;
        let limit = config.set_result_limit(&def.name);
        let call = Call {
            name,
            server,
            tool: &def.name,
            output_schema: def.output_schema.as_ref(),
            limit,
            sampling: &config.sampling,
        };
        let upstream = self.call_upstream(&call, args, cx);
        self.with_logs(cx, level, vec![server.to_string()], upstream)
            .await
    }

    /// Run `work`, a request to one of `servers`, and send the log messages those servers
    /// send meanwhile at `level` or above on this request's stream, as a stateless
    /// (2026-07-28) client that asked for them (`level`) expects. Nothing when it did not.
    async fn with_logs<T>(
        &self,
        cx: &RequestContext<RoleServer>,
        level: Option<u8>,
        servers: Vec<String>,
        work: impl Future<Output = T>,
    ) -> T {
        // A server that did not declare logging sends none: nothing to wait for.
        let Some(min) = level.filter(|_| servers.iter().any(|s| self.gateway.logs(s))) else {
            return work.await;
        };
        let mut logs = self.gateway.tap_logs(servers, min).await;
        tokio::pin!(work);
        let out = loop {
            tokio::select! {
                out = &mut work => break out,
                Some(params) = logs.recv() => send_log(cx, params).await,
            }
        };
        // The upstream session hands each notification to a task of its own, so a message
        // sent just before the answer can come in just after it.
        let settle = tokio::time::sleep(LOG_SETTLE);
        tokio::pin!(settle);
        loop {
            tokio::select! {
                _ = &mut settle => break,
                Some(params) = logs.recv() => send_log(cx, params).await,
            }
        }
        out
    }

    /// The upstream part of a tool call: to the server, relaying what it says about the call
    /// when the client can take it.
    async fn call_upstream(
        &self,
        routed: &Call<'_>,
        args: Map<String, Value>,
        cx: &RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let (server, tool) = (routed.server, routed.tool);
        let sessions = self.gateway.sessions();
        let cancelled = || McpError::internal_error("cancelled by the client", None);
        let own = self.gateway.sampler.as_deref();
        if !takes_upcalls(cx) && own.is_none() {
            // Nothing the upstream says about the call could reach this client: call without
            // a relay channel. Dropping the call future sends notifications/cancelled upstream.
            // A stdio server takes the call as JSON text, past rmcp's client session, unless
            // the tool runs only as a task, which the session drives.
            let call = async {
                match (crate::passthrough::enabled() && !sessions.runs_as_task(server, tool))
                    .then(|| sessions.raw_caller(server))
                    .flatten()
                {
                    Some(raw) => raw.call_args(tool, args).await,
                    None => sessions.call_tool_unrelayed(server, tool, args).await,
                }
            };
            let result = tokio::select! {
                r = call => r,
                _ = cx.ct.cancelled() => return Err(cancelled()),
            };
            return url_elicitation_required(result).map(|r| self.tool_result(routed, r));
        }
        // Progress and the server's sampling/elicitation requests come back as upcalls and
        // are answered here, inside this request's task, so rmcp sends them to this client on
        // this request's stream. The call's timeout is kept here rather than by the session,
        // so that the time the client's user takes over a form is not counted against it.
        let route = SamplingRoute {
            server,
            tool,
            policy: routed.sampling,
            own,
        };
        let call = sessions.call_tool_answering(server, tool, args, |upcall| {
            upcall_to_client(upcall, &route, cx)
        });
        // Dropping the call sends notifications/cancelled upstream.
        let result = tokio::select! {
            r = call => r,
            _ = cx.ct.cancelled() => return Err(cancelled()),
        };
        url_elicitation_required(result).map(|r| self.tool_result(routed, r))
    }

    /// The upstream's answer as the client gets it: a result checked against the tool's
    /// output schema ([`schema_broken`]) and cut to the config's limit, or a failure as an
    /// `is_error` result.
    fn tool_result(
        &self,
        call: &Call<'_>,
        result: Result<CallResult, SessionError>,
    ) -> CallToolResult {
        let result = result.map(|r| match call.output_schema {
            Some(schema) => match self.gateway.validators.check_output(schema, &r) {
                Some(problem) => {
                    tracing::warn!("server {:?}, tool {:?}: {problem}", call.server, call.tool);
                    schema_broken(r, call, &problem)
                }
                None => r,
            },
            None => r,
        });
        tool_result(call.name, result, call.limit)
    }
}

/// One tool call on its way upstream.
struct Call<'a> {
    /// The public name the client used.
    name: &'a str,
    server: &'a str,
    /// The upstream's name for the tool.
    tool: &'a str,
    output_schema: Option<&'a Value>,
    /// The config's `max_result_tokens` for the tool.
    limit: Option<u32>,
    /// What the server's entry says about its sampling requests (`sampling`).
    sampling: &'a switchboard_host::config::SamplingPolicy,
}

/// How the sampling requests made during one call are answered: as the server's entry says,
/// by the calling client when it can, else by the gateway's own model when it has one.
struct SamplingRoute<'a> {
    server: &'a str,
    tool: &'a str,
    policy: &'a switchboard_host::config::SamplingPolicy,
    own: Option<&'a switchboard_host::client::ProviderClient>,
}

impl SamplingRoute<'_> {
    /// Answer with the gateway's own model, as the server's entry lets it.
    async fn answer(
        &self,
        own: &switchboard_host::client::ProviderClient,
        params: &Value,
    ) -> Result<Value, UpcallError> {
        use switchboard_host::sampling::{self, Sampler as _};
        let request = sampling::request_for(self.policy, self.server, self.tool, params)
            .map_err(|(code, message)| UpcallError { code, message })?;
        let sampler = sampling::ModelSampler::new(own, false);
        let reply = sampler.sample(&request).await.map_err(|why| UpcallError {
            code: rmcp::model::ErrorCode::INTERNAL_ERROR.0,
            message: format!("the model did not answer: {why}"),
        })?;
        let model = request.model.as_deref().unwrap_or(&own.model);
        tracing::info!(
            server = self.server,
            tool = self.tool,
            model,
            input_tokens = reply.usage.input_tokens,
            output_tokens = reply.usage.output_tokens,
            "a sampling request the client could not answer was answered by the gateway's own model"
        );
        Ok(sampling::result(&reply, model, !request.tools.is_empty()))
    }
}

/// A result whose `structuredContent` breaks its tool's output schema, or is missing though the
/// tool declares one, goes to the client as an error result that says so, with what the server
/// returned as text: clients check structured results against the schema (the official SDKs
/// fail the whole call on a mismatch, so the model would see nothing), and they check none in
/// an error result.
fn schema_broken(mut r: CallResult, call: &Call<'_>, problem: &str) -> CallResult {
    let structured = r.structured_content.take();
    if !r.content.iter().any(|b| matches!(b, Block::Text { .. }))
        && let Some(structured) = structured
    {
        r.content.push(Block::Text {
            text: structured.to_string(),
        });
    }
    r.content.insert(
        0,
        Block::Text {
            text: format!(
                "The result of {} does not keep the tool's output schema ({problem}); what the server returned follows, unchecked.",
                call.name
            ),
        },
    );
    r.is_error = true;
    r
}

/// MCP's "URL elicitation required" error (-32042) stays a JSON-RPC error for the client, with
/// its `data` (the pages the user must visit), so a client can send its user there and retry;
/// other failures become `is_error` results.
fn url_elicitation_required(
    result: Result<CallResult, SessionError>,
) -> Result<Result<CallResult, SessionError>, McpError> {
    match result {
        Err(SessionError::Rpc {
            code: -32042,
            message,
            data,
            ..
        }) => Err(McpError::new(rmcp::model::ErrorCode(-32042), message, data)),
        other => Ok(other),
    }
}

/// How long a request that asked for log messages waits after its upstream answered for the
/// messages the server sent just before the answer.
const LOG_SETTLE: std::time::Duration = std::time::Duration::from_millis(10);

/// The `_meta` key a 2026-07-28 request names its log level under.
const LOG_LEVEL_KEY: &str = "io.modelcontextprotocol/logLevel";

/// The log level (rank) a stateless 2026-07-28 request asked for in its `_meta`; `None` when
/// it asked for none, or is a legacy client's (whose level `logging/setLevel` sets). A level
/// that is not one is invalid params, as the spec says.
fn requested_log_level(cx: &RequestContext<RoleServer>) -> Result<Option<u8>, McpError> {
    if cx
        .meta
        .get("io.modelcontextprotocol/protocolVersion")
        .is_none()
    {
        return Ok(None);
    }
    let Some(level) = cx.meta.get(LOG_LEVEL_KEY) else {
        return Ok(None);
    };
    match level.as_str().and_then(client::known_rank) {
        Some(rank) => Ok(Some(rank)),
        None => Err(McpError::invalid_params(
            format!(
                "invalid {LOG_LEVEL_KEY} {level}: one of {}",
                client::LEVELS.join(", ")
            ),
            None,
        )),
    }
}

/// One upstream log message (tagged params) to the client, on the current request's stream.
async fn send_log(cx: &RequestContext<RoleServer>, params: Value) {
    if let Ok(message) = serde_json::from_value::<LoggingMessageNotificationParam>(params) {
        let _ = cx.peer.notify_logging_message(message).await;
    }
}

/// Whether anything an upstream sends about a call can reach the calling client: progress
/// (only under a token the client gave) or the server's sampling and elicitation requests
/// (only to a client that declared the capability; see [`upcall_to_client`]).
fn takes_upcalls(cx: &RequestContext<RoleServer>) -> bool {
    cx.meta.get_progress_token().is_some()
        || cx.peer.peer_info().is_some_and(|i| {
            i.capabilities.sampling.is_some() || i.capabilities.elicitation.is_some()
        })
}

/// An upstream call's outcome as the client gets it: the result, or the failure as an
/// `is_error` result naming the tool.
/// A result over the config's `max_result_tokens` for the tool (`limit`, when set) is cut first.
fn tool_result(
    name: &str,
    result: Result<CallResult, SessionError>,
    limit: Option<u32>,
) -> CallToolResult {
    match result {
        Ok(r) => {
            let cut = limit.and_then(|limit| {
                let opts = switchboard_host::shape::ShapeOptions::new(false, limit, name);
                switchboard_host::shape::cut_call_result(&r, &opts)
            });
            match cut {
                Some((cut, how)) => {
                    tracing::info!(
                        tool = name,
                        tokens = how.total_tokens,
                        "result cut to max_result_tokens"
                    );
                    wire_result(cut)
                }
                None => wire_result(r),
            }
        }
        Err(e) => refusal(format!("{name}: {e}")),
    }
}

/// A core call result in rmcp's terms (the same as going through its wire JSON; text blocks,
/// the common case, are built directly).
fn wire_result(r: CallResult) -> CallToolResult {
    let content = r
        .content
        .into_iter()
        .map(|block| match block {
            Block::Text { text } => ContentBlock::text(text),
            other => wire::<Block, ContentBlock>(&other).unwrap_or_else(|e| {
                ContentBlock::text(format!(
                    "[a content block that does not convert: {}]",
                    e.message
                ))
            }),
        })
        .collect();
    let mut result = if r.is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    result.structured_content = r.structured_content;
    result
}

/// Pass one upcall of an upstream call on to the client that made the call: progress under the
/// client's own token (dropped when it gave none), sampling and elicitation requests when the
/// client declared the capability (otherwise the reply is dropped and the session layer gives
/// its default answer). Sampling requests go as `route` says: refused when the server's entry
/// says `sampling = false`, to the gateway's own model when the client cannot take them and
/// the gateway has one.
async fn upcall_to_client(
    upcall: Upcall,
    route: &SamplingRoute<'_>,
    cx: &RequestContext<RoleServer>,
) {
    match upcall {
        Upcall::Progress {
            progress,
            total,
            message,
        } => {
            let Some(token) = cx.meta.get_progress_token() else {
                return;
            };
            let mut p = ProgressNotificationParam::new(token, progress);
            p.total = total;
            p.message = message;
            let _ = cx.peer.notify_progress(p).await;
        }
        Upcall::Request {
            kind: UpcallKind::Sampling,
            reply,
            ..
        } if !route.policy.allowed => {
            let server = route.server;
            let _ = reply.send(Err(UpcallError {
                code: -1,
                message: format!(
                    "the gateway's config does not let server {server} ask the model (sampling = false in its entry)"
                ),
            }));
        }
        Upcall::Request {
            kind: UpcallKind::Sampling,
            params,
            reply,
        } => {
            let sampling = cx
                .peer
                .peer_info()
                .and_then(|i| i.capabilities.sampling.clone());
            let with_tools = ["tools", "toolChoice"]
                .iter()
                .any(|k| params.get(*k).is_some_and(|v| !v.is_null()));
            // A client that cannot take the request: the gateway's own model answers it, if
            // it has one (without one, a client that samples without tools is still asked, and
            // the server hears why it refused).
            let client_can = sampling
                .as_ref()
                .is_some_and(|s| s.tools.is_some() || !with_tools || route.own.is_none());
            if !client_can {
                if let Some(own) = route.own {
                    let _ = reply.send(route.answer(own, &params).await);
                }
                return;
            }
            let answer = match serde_json::from_value::<CreateMessageRequestParams>(params) {
                Ok(p) => cx
                    .peer
                    .create_message(p)
                    .await
                    .map_err(client_error)
                    .and_then(|r| serde_json::to_value(r).map_err(encode_error)),
                Err(e) => Err(encode_error(e)),
            };
            let _ = reply.send(answer);
        }
        Upcall::Request {
            kind: UpcallKind::Elicitation,
            params,
            reply,
        } => {
            let Ok(p) = serde_json::from_value::<ElicitRequestParams>(params) else {
                return;
            };
            let mode = match p {
                ElicitRequestParams::UrlElicitationParams { .. } => ElicitationMode::Url,
                _ => ElicitationMode::Form,
            };
            if !cx.peer.supported_elicitation_modes().contains(&mode) {
                return;
            }
            let answer = cx
                .peer
                .create_elicitation(p)
                .await
                .map_err(client_error)
                .and_then(|r| serde_json::to_value(r).map_err(encode_error));
            let _ = reply.send(answer);
        }
        _ => {}
    }
}

/// A client's failure to answer a relayed request, as the error the server gets.
fn client_error(e: rmcp::ServiceError) -> UpcallError {
    match e {
        rmcp::ServiceError::McpError(e) => UpcallError {
            code: e.code.0,
            message: e.message.to_string(),
        },
        other => UpcallError {
            code: rmcp::model::ErrorCode::INTERNAL_ERROR.0,
            message: format!("the gateway's client did not answer: {other}"),
        },
    }
}

fn encode_error(e: serde_json::Error) -> UpcallError {
    UpcallError {
        code: rmcp::model::ErrorCode::INTERNAL_ERROR.0,
        message: format!("the relayed message does not convert: {e}"),
    }
}

impl GatewayHandler {
    /// The server owning a public resource URI that supports subscriptions, and its own URI.
    /// The server of `public` and its URI there, when that server is not up yet (so whether it
    /// offers subscriptions is not known).
    fn starting_owner(&self, public: &str) -> Option<(String, String)> {
        let sessions = self.gateway.sessions();
        self.gateway
            .snapshot()
            .view
            .resolve_uri(public)
            .into_iter()
            .find(|(server, _)| sessions.capabilities(server).is_none())
    }

    fn owner(&self, public: &str) -> Result<(String, String), McpError> {
        let candidates = self.gateway.snapshot().view.resolve_uri(public);
        if candidates.is_empty() {
            return Err(McpError::invalid_params(
                format!("no resource {public}"),
                None,
            ));
        }
        let sessions = self.gateway.sessions();
        candidates
            .into_iter()
            .find(|(server, _)| {
                sessions.capabilities(server).is_some_and(|c| {
                    c.pointer("/resources/subscribe")
                        .and_then(Value::as_bool)
                        .unwrap_or(false)
                })
            })
            .ok_or_else(|| {
                McpError::invalid_params(
                    format!("the server of {public} does not offer resource subscriptions"),
                    None,
                )
            })
    }
}

/// Ask the client's user to approve a call through elicitation. `Err` carries the refusal text.
async fn ask(
    cx: &RequestContext<RoleServer>,
    name: &str,
    reason: &str,
    args: &Map<String, Value>,
) -> Result<(), String> {
    if !cx
        .peer
        .supported_elicitation_modes()
        .contains(&ElicitationMode::Form)
    {
        return Err(format!(
            "{name} needs approval ({reason}); this client cannot be asked (it did not declare the elicitation capability), so the call was not made"
        ));
    }
    let args = Value::Object(args.clone()).to_string();
    let shown = switchboard_core::clip(&args, 500);
    let params: ElicitRequestParams = serde_json::from_value(json!({
        "mode": "form",
        "message": format!("Allow the tool call {name} with arguments {shown}? ({reason})"),
        "requestedSchema": {
            "type": "object",
            "properties": {
                "approve": {"type": "boolean", "title": "Allow this call", "default": false}
            },
            "required": ["approve"]
        }
    }))
    .map_err(|e| format!("{name} needs approval, but the question could not be built: {e}"))?;
    let answer = cx
        .peer
        .create_elicitation(params)
        .await
        .map_err(|e| format!("{name} needs approval and asking the client failed: {e}"))?;
    let approved = answer.action == ElicitationAction::Accept
        && answer
            .content
            .as_ref()
            .and_then(|c| c.get("approve"))
            .and_then(Value::as_bool)
            .unwrap_or(false);
    if approved {
        Ok(())
    } else {
        Err(format!("the user did not approve the call to {name}"))
    }
}

/// Why a request of a method MCP defines did not read as one: rmcp hands such a request over as
/// an unknown ("custom") method, and its default answer, "method not found" with the bare method
/// name, sends a client looking for a typo in the method instead of in its params.
fn malformed(method: &str, params: Option<Value>) -> Option<String> {
    fn why<T: serde::de::DeserializeOwned>(params: Option<Value>) -> String {
        let params = params.unwrap_or_else(|| Value::Object(Map::new()));
        match serde_json::from_value::<T>(params) {
            Err(e) => e.to_string(),
            // rmcp refused what reads here: the envelope, not the params.
            Ok(_) => "the request does not read as one".to_string(),
        }
    }
    if method == "tools/call" {
        let p = params.as_ref().and_then(Value::as_object);
        let name_ok = p.and_then(|p| p.get("name")).is_some_and(Value::is_string);
        let args = p.and_then(|p| p.get("arguments"));
        if p.is_none() {
            return Some("params must be an object: {\"name\": TOOL, \"arguments\": {...}}".into());
        }
        if !name_ok {
            return Some("`name` must be the tool's name, a string".into());
        }
        if args.is_some_and(|a| !a.is_object() && !a.is_null()) {
            return Some("`arguments` must be an object of the tool's arguments".into());
        }
        return Some(why::<CallToolRequestParams>(params));
    }
    Some(match method {
        "initialize" => why::<InitializeRequestParams>(params),
        "tools/list" | "resources/list" | "resources/templates/list" | "prompts/list" => {
            why::<PaginatedRequestParams>(params)
        }
        "resources/read" => why::<ReadResourceRequestParams>(params),
        "resources/subscribe" => why::<SubscribeRequestParams>(params),
        "resources/unsubscribe" => why::<UnsubscribeRequestParams>(params),
        "prompts/get" => why::<GetPromptRequestParams>(params),
        "completion/complete" => why::<CompleteRequestParams>(params),
        "logging/setLevel" => why::<SetLevelRequestParams>(params),
        _ => return None,
    })
}

impl ServerHandler for GatewayHandler {
    /// A method MCP defines whose params did not read gets "invalid params" saying what is
    /// wrong; any other method is not found.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _cx: RequestContext<RoleServer>,
    ) -> Result<CustomResult, McpError> {
        let CustomRequest { method, params, .. } = request;
        match malformed(&method, params) {
            Some(why) => Err(McpError::invalid_params(
                format!("invalid {method} request: {why}"),
                None,
            )),
            None => Err(McpError::new(
                rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                format!("method not found: {method}"),
                None,
            )),
        }
    }

    fn get_info(&self) -> ServerConfig {
        // Logging, completion and subscriptions are relayed to the upstream servers that
        // offer them (the builder has no switch for `completions`, so this is the wire form).
        let caps: ServerCapabilities = serde_json::from_value(json!({
            "tools": {"listChanged": true},
            "resources": {"subscribe": true, "listChanged": true},
            "prompts": {"listChanged": true},
            "logging": {},
            "completions": {}
        }))
        .unwrap_or_else(|_| {
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .enable_resources()
                .enable_resources_list_changed()
                .enable_prompts()
                .enable_prompts_list_changed()
                .build()
        });
        let snapshot = self.gateway.snapshot();
        ServerConfig::new(caps)
            .with_server_info(Implementation::new(
                "switchboard",
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(snapshot.view.instructions.clone())
    }

    /// Answered once the upstream servers have started (or the startup wait is over), so the
    /// instructions and the lists that follow include them.
    async fn initialize(
        &self,
        request: InitializeRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        cx.peer.set_peer_info(request.clone());
        self.gateway.startup().await;
        self.negotiate_initialize(&request)
    }

    async fn discover(&self, _cx: RequestContext<RoleServer>) -> Result<DiscoverResult, McpError> {
        self.gateway.startup().await;
        Ok(DiscoverResult::from_server_info(
            self.supported_protocol_versions().into_owned(),
            self.get_info(),
        ))
    }

    async fn on_initialized(&self, cx: NotificationContext<RoleServer>) {
        self.gateway.register(cx.peer.clone(), self.client.clone());
        self.fetch_roots(&cx.peer);
    }

    async fn on_roots_list_changed(&self, cx: NotificationContext<RoleServer>) {
        self.fetch_roots(&cx.peer);
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.client.set_level(&client::level_name(request.level));
        self.gateway.sync_log_level().await;
        Ok(())
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        self.gateway.startup().await;
        let level = requested_log_level(&cx)?;
        let mut params = serde_json::to_value(&request)
            .map_err(|e| McpError::internal_error(e.to_string(), None))?;
        let snapshot = self.gateway.snapshot();
        let reference = params.get_mut("ref").and_then(Value::as_object_mut);
        let Some(reference) = reference else {
            return Err(McpError::invalid_params("completion without a ref", None));
        };
        // Route by the public prompt name or resource template to the owner, in its own terms.
        let server = match reference.get("type").and_then(Value::as_str) {
            Some("ref/prompt") => {
                let name = reference.get("name").and_then(Value::as_str).unwrap_or("");
                let Some((server, original)) = snapshot.view.prompt_routes.get(name) else {
                    return Err(McpError::invalid_params(
                        format!("unknown prompt {name:?}"),
                        None,
                    ));
                };
                reference.insert("name".into(), Value::String(original.clone()));
                server.clone()
            }
            Some("ref/resource") => {
                let uri = reference.get("uri").and_then(Value::as_str).unwrap_or("");
                let Some((server, original)) = snapshot.view.resolve_template(uri) else {
                    return Err(McpError::invalid_params(
                        format!("unknown resource template {uri:?}"),
                        None,
                    ));
                };
                reference.insert("uri".into(), Value::String(original));
                server
            }
            other => {
                return Err(McpError::invalid_params(
                    format!("unknown completion reference type {other:?}"),
                    None,
                ));
            }
        };
        let sessions = self.gateway.sessions();
        let offers = sessions
            .capabilities(&server)
            .is_some_and(|c| c.get("completions").is_some());
        if !offers {
            // The owner offers no completion: nothing to suggest.
            return Ok(CompleteResult::default());
        }
        let value = self
            .with_logs(
                &cx,
                level,
                vec![server.clone()],
                sessions.complete(&server, params),
            )
            .await
            .map_err(session_error)?;
        let mut result: CompleteResult = wire(&value)?;
        result.result_type = Some(ResultType::COMPLETE);
        Ok(result)
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.gateway.startup().await;
        let public = request.uri;
        let (server, uri) = self.owner(&public)?;
        if self
            .gateway
            .subscribed_elsewhere(&public, Some(&self.client))
        {
            self.client.subscribe(&public);
            return Ok(());
        }
        self.gateway
            .sessions()
            .subscribe(&server, &uri)
            .await
            .map_err(session_error)?;
        self.gateway.subscribed_upstream(&public, &server, &uri);
        self.client.subscribe(&public);
        Ok(())
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.gateway.startup().await;
        let public = request.uri;
        let (server, uri) = self.owner(&public)?;
        self.client.unsubscribe(&public);
        if self
            .gateway
            .subscribed_elsewhere(&public, Some(&self.client))
        {
            return Ok(());
        }
        self.gateway.unsubscribed_upstream(&public);
        self.gateway
            .sessions()
            .unsubscribe(&server, &uri)
            .await
            .map_err(session_error)
    }

    /// 2026-07-28 clients subscribe to list changes, and to updates of resources whose server
    /// offers subscriptions. Before the upstreams have started the view cannot tell, so every
    /// requested URI is taken then, and [`Self::listen`] subscribes those it can resolve.
    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let mut accepted = SubscriptionFilter::new();
        accepted.tools_list_changed = requested.tools_list_changed;
        accepted.prompts_list_changed = requested.prompts_list_changed;
        accepted.resources_list_changed = requested.resources_list_changed;
        let ready = self.gateway.is_ready();
        accepted.resource_subscriptions = requested.resource_subscriptions.as_ref().map(|uris| {
            uris.iter()
                .filter(|uri| !ready || self.owner(uri).is_ok())
                .cloned()
                .collect()
        });
        Some(accepted)
    }

    /// A listen stream: list changes, and updates of its resources (each subscribed upstream
    /// while any client or stream wants it, as `resources/subscribe` does). It lasts until the
    /// client ends it, or until the gateway does (graceful teardown: a restarted server no
    /// longer offers subscriptions to one of its resources).
    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        let uris = context
            .sink()
            .accepted()
            .resource_subscriptions
            .clone()
            .unwrap_or_default();
        if !uris.is_empty() {
            self.gateway.startup().await;
        }
        let sessions = self.gateway.sessions();
        // Listening first: a server that comes up meanwhile (`Gateway::server_back`) then sees
        // this stream wanting its URIs.
        let (serial, end) = self.gateway.listen(context.sink().clone());
        let mut upstream = Vec::new();
        for public in uris {
            let Ok((server, uri)) = self.owner(&public) else {
                // Its server may still be starting: the URI was accepted, so the subscription
                // is noted and made upstream when the server is up (`Gateway::server_back`).
                if let Some((server, uri)) = self.starting_owner(&public) {
                    if !self.gateway.held_upstream(&public) {
                        self.gateway.subscribed_upstream(&public, &server, &uri);
                    }
                    upstream.push((public, server, uri));
                }
                continue;
            };
            if !self.gateway.held_upstream(&public) {
                if let Err(e) = sessions.subscribe(&server, &uri).await {
                    tracing::warn!(%server, %uri, error = %e, "resources/subscribe failed upstream");
                    continue;
                }
                self.gateway.subscribed_upstream(&public, &server, &uri);
            }
            upstream.push((public, server, uri));
        }
        tokio::select! {
            _ = context.cancelled() => {}
            _ = end.cancelled() => {}
        }
        self.gateway.unlisten(serial);
        for (public, server, uri) in upstream {
            if !self.gateway.subscribed_elsewhere(&public, None) {
                self.gateway.unsubscribed_upstream(&public);
                let _ = sessions.unsubscribe(&server, &uri).await;
            }
        }
        Ok(())
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        self.gateway.startup().await;
        let tools: Vec<switchboard_core::Tool> = match self.gateway.expose {
            Expose::Facade => facade::tools(),
            Expose::All => {
                let snapshot = self.gateway.snapshot();
                let (items, next) = page(&snapshot.view.tools, cursor(&request))?;
                let tools = items
                    .iter()
                    .map(|t| wire(&t.def))
                    .collect::<Result<_, _>>()?;
                let mut result = ListToolsResult::with_all_items(tools);
                result.next_cursor = next;
                return Ok(result);
            }
        };
        let tools = tools.iter().map(wire).collect::<Result<_, _>>()?;
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        self.gateway.startup().await;
        let args = request.arguments.unwrap_or_default();
        let Some(log) = &self.gateway.call_log else {
            return Ok(complete_call(self.run_call(&request.name, args, &cx).await?).into());
        };
        // Through the facade's call_tool, the tool that ran is the one it names, with the
        // arguments it passed on.
        let through_facade = self.gateway.expose == Expose::Facade;
        let called = match (through_facade, request.name.as_ref()) {
            (true, facade::CALL_TOOL) => args.get("name").and_then(Value::as_str),
            (true, _) => None,
            (false, name) => Some(name),
        };
        let passed_on = match (called, args.get("arguments")) {
            (Some(_), Some(Value::Object(inner))) if through_facade => inner,
            _ => &args,
        };
        let upstream =
            called.and_then(|name| match self.gateway.snapshot().view.routes.get(name) {
                Some(Route::Open { server, def }) => Some((server.clone(), def.name.clone())),
                _ => None,
            });
        let client = cx.peer.peer_info().map(|i| {
            format!("{} {}", i.client_info.name, i.client_info.version)
                .trim()
                .to_string()
        });
        // Written when the call ends, or as cancelled if this future is dropped first.
        let entry = crate::call_log::Entry::start(
            log.clone(),
            client,
            called.unwrap_or(&request.name),
            upstream,
            passed_on.clone(),
        );
        let outcome = self.run_call(&request.name, args, &cx).await;
        if cx.ct.is_cancelled() {
            // Said as the pass-through says it: the call never ended.
            entry.cancelled();
        } else {
            entry.end(outcome.as_ref().map_err(|e| e.message.as_ref()));
        }
        Ok(complete_call(outcome?).into())
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        self.gateway.startup().await;
        let snapshot = self.gateway.snapshot();
        let (items, next) = page(&snapshot.view.resources, cursor(&request))?;
        let items = items.iter().map(wire).collect::<Result<_, _>>()?;
        let mut result = ListResourcesResult::with_all_items(items);
        result.next_cursor = next;
        Ok(result)
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        self.gateway.startup().await;
        let snapshot = self.gateway.snapshot();
        let (items, next) = page(&snapshot.view.templates, cursor(&request))?;
        let items = items.iter().map(wire).collect::<Result<_, _>>()?;
        let mut result = ListResourceTemplatesResult::with_all_items(items);
        result.next_cursor = next;
        Ok(result)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        self.gateway.startup().await;
        let level = requested_log_level(&cx)?;
        let candidates = self.gateway.snapshot().view.resolve_uri(&request.uri);
        let servers = candidates.iter().map(|(s, _)| s.clone()).collect();
        self.with_logs(&cx, level, servers, self.read(&request.uri, candidates))
            .await
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        self.gateway.startup().await;
        let snapshot = self.gateway.snapshot();
        let (items, next) = page(&snapshot.view.prompts, cursor(&request))?;
        let items = items.iter().map(wire).collect::<Result<_, _>>()?;
        let mut result = ListPromptsResult::with_all_items(items);
        result.next_cursor = next;
        Ok(result)
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        self.gateway.startup().await;
        let level = requested_log_level(&cx)?;
        let route = self
            .gateway
            .snapshot()
            .view
            .prompt_routes
            .get(request.name.as_str())
            .cloned();
        let Some((server, name)) = route else {
            return Err(McpError::invalid_params(
                format!("unknown prompt {:?}", request.name),
                None,
            ));
        };
        let args = request.arguments.unwrap_or_default();
        let sessions = self.gateway.sessions();
        let value = self
            .with_logs(
                &cx,
                level,
                vec![server.clone()],
                sessions.get_prompt(&server, &name, args),
            )
            .await
            .map_err(session_error)?;
        let mut result: GetPromptResult = wire(&value)?;
        result.result_type = Some(ResultType::COMPLETE);
        Ok(result.into())
    }
}

impl GatewayHandler {
    /// Read a public URI from the first of its candidate servers that has it.
    async fn read(
        &self,
        public: &str,
        candidates: Vec<(String, String)>,
    ) -> Result<ReadResourceResponse, McpError> {
        let mut last = None;
        for (server, uri) in candidates {
            match self.gateway.sessions().read_resource(&server, &uri).await {
                Ok(Value::Array(mut contents)) => {
                    // Contents name the URI the client asked for.
                    for c in &mut contents {
                        if let Some(o) = c.as_object_mut()
                            && o.get("uri").and_then(Value::as_str) == Some(uri.as_str())
                        {
                            o.insert("uri".into(), Value::String(public.to_string()));
                        }
                    }
                    let mut result: ReadResourceResult = wire(&json!({ "contents": contents }))?;
                    result.result_type = Some(ResultType::COMPLETE);
                    return Ok(result.into());
                }
                Ok(_) => {
                    last = Some(McpError::internal_error(
                        "upstream returned no contents",
                        None,
                    ))
                }
                Err(e) => last = Some(session_error(e)),
            }
        }
        // Resource not found is -32602 (2026-07-28).
        Err(last.unwrap_or_else(|| McpError::invalid_params(format!("no resource {public}"), None)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_follow_offsets_and_bad_cursors_are_refused() {
        let items: Vec<usize> = (0..250).collect();
        let (a, next) = page(&items, None).unwrap();
        assert_eq!((a.len(), next.as_deref()), (100, Some("100")));
        let (b, next) = page(&items, Some("200")).unwrap();
        assert_eq!((b.len(), next), (50, None));
        assert!(page(&items, Some("x")).is_err());
        assert!(page(&items, Some("999")).is_err());
        assert_eq!(page::<usize>(&[], None).unwrap(), (vec![], None));
    }

    #[test]
    fn results_convert_as_their_wire_json_does() {
        let results = [
            CallResult::text("hello", false),
            CallResult {
                content: vec![
                    Block::Text { text: "a".into() },
                    Block::Image {
                        data: "AAAA".into(),
                        mime_type: "image/png".into(),
                    },
                    Block::ResourceLink {
                        uri: "file:///x".into(),
                        name: "x".into(),
                        description: None,
                        mime_type: Some("text/plain".into()),
                    },
                    Block::Resource {
                        resource: json!({"uri": "test://r", "text": "body"}),
                    },
                ],
                structured_content: Some(json!({"n": 1})),
                is_error: true,
            },
            CallResult::default(),
        ];
        for r in results {
            let mut expected: CallToolResult = wire(&r).unwrap();
            expected.result_type = Some(ResultType::COMPLETE);
            assert_eq!(complete_call(wire_result(r)), expected);
        }
    }
}
