//! `GatewayHandler`: the MCP server side of the gateway (rmcp `ServerHandler`). Lists come from
//! the current view, paginated; calls are routed by looking the public name up in the view,
//! checked against the host's policy (asking the client's user through elicitation where the
//! policy says to ask), and sent to the upstream session. A client's cancellation cancels the
//! upstream request.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ElicitRequestParams,
    ElicitationAction, GetPromptRequestParams, GetPromptResponse, GetPromptResult, Implementation,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult,
    ResultType, ServerCapabilities, ServerConfig, SubscriptionFilter,
};
use rmcp::service::{ElicitationMode, NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::{Map, Value, json};
use switchboard_core::{CallResult, facade};
use switchboard_host::policy::{self, Decision};
use switchboard_mcp::SessionError;

use crate::gateway::{Expose, Gateway};
use crate::view::Route;

/// Items per page of an aggregated list. The cursor is the offset of the next item.
pub const PAGE_SIZE: usize = 100;

/// Default and largest `limit` of `search_tools`.
const DEFAULT_LIMIT: usize = 5;
const MAX_LIMIT: usize = 20;

/// One client connection's handler; all connections share the gateway.
#[derive(Clone)]
pub struct GatewayHandler {
    gateway: Arc<Gateway>,
}

impl GatewayHandler {
    /// A handler for one client connection.
    pub fn new(gateway: Arc<Gateway>) -> Self {
        Self { gateway }
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
        let Some(config) = self.gateway.server(server) else {
            return Ok(refusal(format!("server {server:?} is not configured")));
        };
        match policy::decide(config, def) {
            Decision::Allow => {}
            Decision::Deny { reason } => return Ok(refusal(reason)),
            Decision::Ask { reason } => {
                if let Err(why) = ask(cx, name, &reason, &args).await {
                    return Ok(refusal(why));
                }
            }
        }
        let sessions = self.gateway.sessions();
        let call = sessions.call_tool(server, &def.name, args);
        let result = tokio::select! {
            r = call => r,
            _ = cx.ct.cancelled() => {
                // Dropping the call future sent notifications/cancelled upstream.
                return Err(McpError::internal_error("cancelled by the client", None));
            }
        };
        match result {
            Ok(r) => wire::<CallResult, CallToolResult>(&r),
            Err(e) => Ok(refusal(format!("{name}: {e}"))),
        }
    }

    /// The facade's `search_tools`.
    fn search(&self, args: &Map<String, Value>) -> CallToolResult {
        let Some(query) = args.get("query").and_then(Value::as_str) else {
            return refusal("search_tools needs a \"query\" string");
        };
        let limit = args
            .get("limit")
            .and_then(Value::as_u64)
            .map_or(DEFAULT_LIMIT, |n| usize::try_from(n).unwrap_or(MAX_LIMIT))
            .clamp(1, MAX_LIMIT);
        let snapshot = self.gateway.snapshot();
        let hits = snapshot.search.as_ref().map_or_else(Vec::new, |index| {
            index.search(query, limit, switchboard_search::Method::Lexical)
        });
        let tools: Vec<Value> = hits
            .iter()
            .filter_map(|h| snapshot.by_pair.get(&(h.server.clone(), h.tool.clone())))
            .filter_map(|&i| snapshot.view.tools.get(i))
            .map(|t| {
                json!({
                    "name": t.public,
                    "description": t.def.description,
                    "inputSchema": t.def.input_schema,
                })
            })
            .collect();
        let body = json!({
            "tools": tools,
            "total_tools": snapshot.view.tool_count(),
        });
        let mut result = CallToolResult::success(vec![ContentBlock::text(body.to_string())]);
        result.structured_content = Some(body);
        result
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
    let mut shown = Value::Object(args.clone()).to_string();
    if shown.len() > 500 {
        let cut = (0..=500)
            .rev()
            .find(|&i| shown.is_char_boundary(i))
            .unwrap_or(0);
        shown.truncate(cut);
        shown.push('…');
    }
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

impl ServerHandler for GatewayHandler {
    fn get_info(&self) -> ServerConfig {
        let caps = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_resources()
            .enable_resources_list_changed()
            .enable_prompts()
            .enable_prompts_list_changed()
            .build();
        let snapshot = self.gateway.snapshot();
        ServerConfig::new(caps)
            .with_server_info(Implementation::new(
                "switchboard",
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(snapshot.view.instructions.clone())
    }

    async fn on_initialized(&self, cx: NotificationContext<RoleServer>) {
        self.gateway.register(cx.peer.clone());
    }

    /// 2026-07-28 clients subscribe to list changes; resource-update subscriptions are not
    /// offered (the gateway does not forward resources/updated).
    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let mut accepted = SubscriptionFilter::new();
        accepted.tools_list_changed = requested.tools_list_changed;
        accepted.prompts_list_changed = requested.prompts_list_changed;
        accepted.resources_list_changed = requested.resources_list_changed;
        Some(accepted)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        let id = context.request_context().id.clone();
        self.gateway.listen(id.clone(), context.sink().clone());
        context.cancelled().await;
        self.gateway.unlisten(&id);
        Ok(())
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
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
        let args = request.arguments.unwrap_or_default();
        let result = match self.gateway.expose {
            Expose::All => self.call(&request.name, args, &cx).await?,
            Expose::Facade => match request.name.as_ref() {
                facade::SEARCH_TOOL => self.search(&args),
                facade::CALL_TOOL => {
                    let Some(name) = args.get("name").and_then(Value::as_str) else {
                        return Ok(refusal("call_tool needs a \"name\" string").into());
                    };
                    let inner = match args.get("arguments") {
                        None | Some(Value::Null) => Map::new(),
                        Some(Value::Object(m)) => m.clone(),
                        Some(_) => {
                            return Ok(refusal("call_tool: \"arguments\" must be an object").into());
                        }
                    };
                    match self.call(name, inner, &cx).await {
                        Ok(r) => r,
                        // An unknown name is the model's mistake: tell it, as a result.
                        Err(e) => refusal(format!(
                            "{}; use search_tools to find the exact name",
                            e.message
                        )),
                    }
                }
                other => {
                    return Err(McpError::invalid_params(
                        format!(
                            "unknown tool {other:?}; this gateway exposes search_tools and call_tool"
                        ),
                        None,
                    ));
                }
            },
        };
        Ok(complete_call(result).into())
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
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
        _cx: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let candidates = self.gateway.snapshot().view.resolve_uri(&request.uri);
        let mut last = None;
        for (server, uri) in candidates {
            match self.gateway.sessions().read_resource(&server, &uri).await {
                Ok(Value::Array(mut contents)) => {
                    // Contents name the URI the client asked for.
                    for c in &mut contents {
                        if let Some(o) = c.as_object_mut()
                            && o.get("uri").and_then(Value::as_str) == Some(uri.as_str())
                        {
                            o.insert("uri".into(), Value::String(request.uri.clone()));
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
        Err(last.unwrap_or_else(|| {
            McpError::invalid_params(format!("no resource {}", request.uri), None)
        }))
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
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
        _cx: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
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
        let value = self
            .gateway
            .sessions()
            .get_prompt(&server, &name, args)
            .await
            .map_err(session_error)?;
        let mut result: GetPromptResult = wire(&value)?;
        result.result_type = Some(ResultType::COMPLETE);
        Ok(result.into())
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
}
