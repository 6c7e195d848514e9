//! An MCP server (rmcp server side, stdio) built from a table: a `Backend` lists tools, resources
//! and prompts as switchboard-core definitions and answers calls synchronously. The embedded demo
//! servers and test fixtures are backends; this file is the only glue to rmcp for them.

use std::sync::Arc;

use rmcp::{
    ErrorData as McpError, RoleServer, ServerHandler,
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, GetPromptRequestParams,
        GetPromptResponse, GetPromptResult, Implementation, ListPromptsResult, ListResourcesResult,
        ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse,
        ReadResourceResult, ServerCapabilities, ServerConfig,
    },
    service::RequestContext,
};
use serde_json::{Map, Value, json};
use switchboard_core::{CallResult, Prompt, Resource, Tool};

use crate::error::GatewayError;

/// What a table-driven server knows and does. All answers are synchronous and in memory.
pub trait Backend: Send + Sync + 'static {
    /// `serverInfo.name`.
    fn name(&self) -> &str;
    /// `serverInfo.version`.
    fn version(&self) -> &str {
        env!("CARGO_PKG_VERSION")
    }
    /// Server `instructions`, if any.
    fn instructions(&self) -> Option<String> {
        None
    }
    /// The tools it offers.
    fn tools(&self) -> Vec<Tool>;
    /// Run a tool. Unknown tools and bad arguments are answered as `is_error` results.
    fn call(&self, tool: &str, args: &Map<String, Value>) -> CallResult;
    /// The resources it offers.
    fn resources(&self) -> Vec<Resource> {
        Vec::new()
    }
    /// Read a resource: `(mime type, text)`, or `None` when the URI is unknown.
    fn read(&self, _uri: &str) -> Option<(String, String)> {
        None
    }
    /// The prompts it offers.
    fn prompts(&self) -> Vec<Prompt> {
        Vec::new()
    }
    /// Render a prompt: `(description, user message text)`, or an error message.
    fn prompt(&self, _name: &str, _args: &Map<String, Value>) -> Result<(String, String), String> {
        Err("this server has no prompts".into())
    }
}

/// Serve a backend over this process's stdin/stdout until the client disconnects.
pub async fn serve_stdio(backend: Arc<dyn Backend>) -> Result<(), GatewayError> {
    crate::stdio::serve(StaticServer { backend }).await
}

#[derive(Clone)]
struct StaticServer {
    backend: Arc<dyn Backend>,
}

/// Convert one of our wire-shaped definitions into rmcp's type of the same wire shape.
fn wire<T: serde::Serialize, U: serde::de::DeserializeOwned>(v: &T) -> Result<U, McpError> {
    serde_json::to_value(v)
        .and_then(serde_json::from_value)
        .map_err(|e| McpError::internal_error(format!("definition does not convert: {e}"), None))
}

impl ServerHandler for StaticServer {
    fn get_info(&self) -> ServerConfig {
        let mut caps = ServerCapabilities::builder().enable_tools().build();
        if !self.backend.resources().is_empty() {
            caps.resources = ServerCapabilities::builder()
                .enable_resources()
                .build()
                .resources;
        }
        if !self.backend.prompts().is_empty() {
            caps.prompts = ServerCapabilities::builder()
                .enable_prompts()
                .build()
                .prompts;
        }
        let cfg = ServerConfig::new(caps).with_server_info(Implementation::new(
            self.backend.name().to_string(),
            self.backend.version().to_string(),
        ));
        match self.backend.instructions() {
            Some(i) => cfg.with_instructions(i),
            None => cfg,
        }
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let tools = self.backend.tools();
        let tools = tools.iter().map(wire).collect::<Result<Vec<_>, _>>()?;
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let args = request.arguments.unwrap_or_default();
        let result = self.backend.call(&request.name, &args);
        let result: CallToolResult = wire(&result)?;
        Ok(result.into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let items = self.backend.resources();
        let items = items.iter().map(wire).collect::<Result<Vec<_>, _>>()?;
        Ok(ListResourcesResult::with_all_items(items))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let Some((mime, text)) = self.backend.read(&request.uri) else {
            // 2026-07-28: resource-not-found is -32602 (invalid params).
            return Err(McpError::invalid_params(
                format!("no resource {}", request.uri),
                None,
            ));
        };
        let result: ReadResourceResult = wire(&json!({
            "contents": [{"uri": request.uri, "mimeType": mime, "text": text}]
        }))?;
        Ok(result.into())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        let items = self.backend.prompts();
        let items = items.iter().map(wire).collect::<Result<Vec<_>, _>>()?;
        Ok(ListPromptsResult::with_all_items(items))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        let args = request.arguments.unwrap_or_default();
        let (description, text) = self
            .backend
            .prompt(&request.name, &args)
            .map_err(|m| McpError::invalid_params(m, None))?;
        let result: GetPromptResult = wire(&json!({
            "description": description,
            "messages": [{"role": "user", "content": {"type": "text", "text": text}}]
        }))?;
        Ok(result.into())
    }
}
