//! The conformance fixture server: the tools, resources and prompts the MCP conformance
//! harness's server scenarios call by name (`test_simple_text`, `test://static-text`,
//! `test_prompt_with_arguments`, ...), with logging, progress, sampling, elicitation,
//! subscriptions and completion. `scripts/conformance` runs it on its own over HTTP (to prove
//! the fixture) and behind `switchboard serve --http` over stdio (to test the gateway).
// Logging and sampling are deprecated by SEP-2577 in rmcp 3.x; the 2025-11-25 scenarios use them.
#![allow(deprecated)]

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use rmcp::{
    ErrorData as McpError, RoleServer, ServerHandler,
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestParams,
        CompleteResult, CreateMessageRequestParams, ElicitRequestParams, GetPromptRequestParams,
        GetPromptResponse, GetPromptResult, Implementation, ListPromptsResult,
        ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, LoggingLevel,
        LoggingMessageNotificationParam, PaginatedRequestParams, ProgressNotificationParam,
        ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, ServerCapabilities,
        ServerConfig, SetLevelRequestParams, SubscribeRequestParams, UnsubscribeRequestParams,
    },
    service::RequestContext,
    transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
    },
};
use serde_json::{Value, json};

use crate::error::GatewayError;

/// A 1x1 transparent PNG.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
/// A 44-byte WAV header with no samples.
const WAV: &str = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA=";

/// The fixture's MCP server handler.
#[derive(Clone, Default)]
pub struct ConformanceFixture;

/// Serve the fixture over this process's stdin/stdout until the client disconnects.
pub async fn serve_stdio() -> Result<(), GatewayError> {
    crate::stdio::serve(ConformanceFixture).await
}

/// Serve the fixture over Streamable HTTP at `http://ADDR/mcp` until the process ends;
/// `bound` learns the URL once the port is open.
pub async fn serve_http(addr: SocketAddr, bound: impl FnOnce(&str)) -> Result<(), GatewayError> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| GatewayError::Bind(addr, e.to_string()))?;
    let local = listener
        .local_addr()
        .map_err(|e| GatewayError::Bind(addr, e.to_string()))?;
    // The default allowed hosts are the loopback names (DNS rebinding protection).
    let service = StreamableHttpService::new(
        || Ok(ConformanceFixture),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let router = axum::Router::new().nest_service("/mcp", service);
    bound(&format!("http://{local}/mcp"));
    axum::serve(listener, router)
        .await
        .map_err(|e| GatewayError::Serve(e.to_string()))
}

/// JSON to an rmcp type of the same wire shape.
fn wire<T: serde::de::DeserializeOwned>(value: Value) -> Result<T, McpError> {
    serde_json::from_value(value)
        .map_err(|e| McpError::internal_error(format!("fixture value does not convert: {e}"), None))
}

/// JSON to an rmcp result type, marked complete: 2026-07-28 requires `resultType`, and rmcp
/// drops it again for peers on older revisions.
fn result<T: serde::de::DeserializeOwned>(mut value: Value) -> Result<T, McpError> {
    if let Some(object) = value.as_object_mut() {
        object.insert("resultType".to_string(), json!("complete"));
    }
    wire(value)
}

fn tool(name: &str, description: &str, properties: Value) -> Value {
    json!({
        "name": name,
        "description": description,
        "inputSchema": {"type": "object", "properties": properties}
    })
}

fn tools() -> Vec<Value> {
    let none = json!({});
    vec![
        tool(
            "test_simple_text",
            "Returns a simple text response",
            none.clone(),
        ),
        tool(
            "test_image_content",
            "Returns a small PNG image",
            none.clone(),
        ),
        tool(
            "test_audio_content",
            "Returns a short WAV clip",
            none.clone(),
        ),
        tool(
            "test_embedded_resource",
            "Returns an embedded text resource",
            none.clone(),
        ),
        tool(
            "test_multiple_content_types",
            "Returns text, an image and an embedded resource",
            none.clone(),
        ),
        tool(
            "test_tool_with_logging",
            "Sends three log messages while it runs",
            none.clone(),
        ),
        tool(
            "test_error_handling",
            "Always fails with a tool error",
            none.clone(),
        ),
        tool(
            "test_tool_with_progress",
            "Reports progress three times",
            none.clone(),
        ),
        tool(
            "test_sampling",
            "Asks the client's model to answer a prompt",
            json!({"prompt": {"type": "string", "description": "The prompt to sample"}}),
        ),
        tool(
            "test_elicitation",
            "Asks the user for a username and an email address",
            json!({"message": {"type": "string", "description": "What to ask"}}),
        ),
        tool(
            "test_elicitation_sep1034_defaults",
            "Asks for values whose schema carries defaults (SEP-1034)",
            none.clone(),
        ),
        tool(
            "test_elicitation_sep1330_enums",
            "Asks for values with every enum form (SEP-1330)",
            none,
        ),
    ]
}

fn text(t: &str) -> Value {
    json!({"type": "text", "text": t})
}

fn image() -> Value {
    json!({"type": "image", "data": PNG, "mimeType": "image/png"})
}

fn embedded(uri: &str, t: &str) -> Value {
    json!({"type": "resource", "resource": {"uri": uri, "mimeType": "text/plain", "text": t}})
}

fn done(content: Vec<Value>) -> Result<CallToolResponse, McpError> {
    let result: CallToolResult = result(json!({ "content": content }))?;
    Ok(result.into())
}

/// The schema of the SEP-1034 defaults elicitation: one default per primitive kind.
fn defaults_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "Your name", "default": "John Doe"},
            "age": {"type": "integer", "description": "Your age", "default": 30},
            "score": {"type": "number", "description": "Your score", "default": 95.5},
            "status": {
                "type": "string", "description": "Your status",
                "enum": ["active", "inactive", "pending"], "default": "active"
            },
            "verified": {"type": "boolean", "description": "Verified?", "default": true}
        }
    })
}

/// The schema of the SEP-1330 enums elicitation: untitled, titled and legacy single-select,
/// untitled and titled multi-select.
fn enums_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "untitledSingle": {
                "type": "string", "description": "Pick one", "enum": ["option1", "option2", "option3"]
            },
            "titledSingle": {
                "type": "string", "description": "Pick one",
                "oneOf": [
                    {"const": "value1", "title": "First Option"},
                    {"const": "value2", "title": "Second Option"},
                    {"const": "value3", "title": "Third Option"}
                ]
            },
            "legacyEnum": {
                "type": "string", "description": "Pick one",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"]
            },
            "untitledMulti": {
                "type": "array", "description": "Pick some",
                "items": {"type": "string", "enum": ["option1", "option2", "option3"]}
            },
            "titledMulti": {
                "type": "array", "description": "Pick some",
                "items": {"anyOf": [
                    {"const": "value1", "title": "First Choice"},
                    {"const": "value2", "title": "Second Choice"},
                    {"const": "value3", "title": "Third Choice"}
                ]}
            }
        }
    })
}

async fn elicit(
    cx: &RequestContext<RoleServer>,
    message: &str,
    schema: Value,
) -> Result<CallToolResponse, McpError> {
    let params: ElicitRequestParams = wire(json!({
        "mode": "form",
        "message": message,
        "requestedSchema": schema
    }))?;
    let result = cx
        .peer
        .create_elicitation(params)
        .await
        .map_err(|e| McpError::internal_error(format!("elicitation failed: {e}"), None))?;
    let answer = serde_json::to_value(&result).unwrap_or(Value::Null);
    done(vec![text(&format!("Elicitation result: {answer}"))])
}

impl ServerHandler for ConformanceFixture {
    fn get_info(&self) -> ServerConfig {
        let caps: ServerCapabilities = serde_json::from_value(json!({
            "tools": {"listChanged": true},
            "resources": {"subscribe": true, "listChanged": true},
            "prompts": {"listChanged": true},
            "logging": {},
            "completions": {}
        }))
        .unwrap_or_default();
        ServerConfig::new(caps).with_server_info(Implementation::new(
            "switchboard-conformance-fixture",
            env!("CARGO_PKG_VERSION"),
        ))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        result(json!({ "tools": tools() }))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let args = request.arguments.clone().unwrap_or_default();
        let arg = |k: &str| args.get(k).and_then(Value::as_str).map(str::to_string);
        match request.name.as_ref() {
            "test_simple_text" => done(vec![text("This is a simple text response for testing.")]),
            "test_image_content" => done(vec![image()]),
            "test_audio_content" => done(vec![
                json!({"type": "audio", "data": WAV, "mimeType": "audio/wav"}),
            ]),
            "test_embedded_resource" => done(vec![embedded(
                "test://embedded-resource",
                "This is an embedded resource content.",
            )]),
            "test_multiple_content_types" => done(vec![
                text("Multiple content types test:"),
                image(),
                embedded(
                    "test://mixed-content-resource",
                    "Embedded in a mixed result.",
                ),
            ]),
            "test_tool_with_logging" => {
                for (i, message) in [
                    "Tool execution started",
                    "Tool processing data",
                    "Tool execution completed",
                ]
                .into_iter()
                .enumerate()
                {
                    if i > 0 {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                    let _ = cx
                        .peer
                        .notify_logging_message(LoggingMessageNotificationParam::new(
                            LoggingLevel::Info,
                            json!(message),
                        ))
                        .await;
                }
                done(vec![text("Tool with logging executed successfully")])
            }
            "test_error_handling" => {
                let result: CallToolResult = result(json!({
                    "content": [text("This tool intentionally returns an error for testing")],
                    "isError": true
                }))?;
                Ok(result.into())
            }
            "test_tool_with_progress" => {
                if let Some(token) = cx.meta.get_progress_token() {
                    for (i, step) in [0.0, 50.0, 100.0].into_iter().enumerate() {
                        if i > 0 {
                            tokio::time::sleep(Duration::from_millis(50)).await;
                        }
                        let mut p = ProgressNotificationParam::new(token.clone(), step);
                        p.total = Some(100.0);
                        let _ = cx.peer.notify_progress(p).await;
                    }
                }
                done(vec![text("Tool with progress executed successfully")])
            }
            "test_sampling" => {
                let prompt = arg("prompt").unwrap_or_else(|| "Say hello".to_string());
                let params: CreateMessageRequestParams = wire(json!({
                    "messages": [{"role": "user", "content": {"type": "text", "text": prompt}}],
                    "maxTokens": 100
                }))?;
                let result =
                    cx.peer.create_message(params).await.map_err(|e| {
                        McpError::internal_error(format!("sampling failed: {e}"), None)
                    })?;
                let answer = serde_json::to_value(&result).unwrap_or(Value::Null);
                let said = answer
                    .pointer("/content/text")
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .unwrap_or_else(|| answer.to_string());
                done(vec![text(&format!("LLM response: {said}"))])
            }
            "test_elicitation" => {
                let message =
                    arg("message").unwrap_or_else(|| "Please provide your information".to_string());
                let schema = json!({
                    "type": "object",
                    "properties": {
                        "username": {"type": "string", "description": "Your username"},
                        "email": {"type": "string", "description": "Your email address"}
                    },
                    "required": ["username", "email"]
                });
                elicit(&cx, &message, schema).await
            }
            "test_elicitation_sep1034_defaults" => {
                elicit(
                    &cx,
                    "Please review and update the form fields with defaults",
                    defaults_schema(),
                )
                .await
            }
            "test_elicitation_sep1330_enums" => {
                elicit(
                    &cx,
                    "Please select options from the enum fields",
                    enums_schema(),
                )
                .await
            }
            other => {
                let result: CallToolResult = result(json!({
                    "content": [text(&format!("unknown tool {other}"))],
                    "isError": true
                }))?;
                Ok(result.into())
            }
        }
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        result(json!({"resources": [
            {"uri": "test://static-text", "name": "Static Text Resource",
             "description": "A static text resource for testing", "mimeType": "text/plain"},
            {"uri": "test://static-binary", "name": "Static Binary Resource",
             "description": "A static binary resource (PNG) for testing", "mimeType": "image/png"},
            {"uri": "test://watched-resource", "name": "Watched Resource",
             "description": "A resource that can be subscribed to", "mimeType": "text/plain"}
        ]}))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        result(json!({"resourceTemplates": [
            {"uriTemplate": "test://template/{id}/data", "name": "Resource Template",
             "description": "A resource template with an id parameter", "mimeType": "application/json"}
        ]}))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let uri = request.uri.as_str();
        let contents = match uri {
            "test://static-text" => json!({"uri": uri, "mimeType": "text/plain",
                "text": "This is the content of the static text resource."}),
            "test://static-binary" => json!({"uri": uri, "mimeType": "image/png", "blob": PNG}),
            "test://watched-resource" => json!({"uri": uri, "mimeType": "text/plain",
                "text": "Watched resource content"}),
            _ => match uri
                .strip_prefix("test://template/")
                .and_then(|rest| rest.strip_suffix("/data"))
            {
                Some(id) if !id.is_empty() && !id.contains('/') => json!({
                    "uri": uri, "mimeType": "application/json",
                    "text": json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")}).to_string()
                }),
                _ => {
                    return Err(McpError::invalid_params(
                        format!("no resource {uri}"),
                        Some(json!({"uri": uri})),
                    ));
                }
            },
        };
        let result: ReadResourceResult = result(json!({ "contents": [contents] }))?;
        Ok(result.into())
    }

    async fn subscribe(
        &self,
        _request: SubscribeRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        Ok(())
    }

    async fn unsubscribe(
        &self,
        _request: UnsubscribeRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        Ok(())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        result(json!({"prompts": [
            {"name": "test_simple_prompt", "description": "A simple prompt without arguments"},
            {"name": "test_prompt_with_arguments", "description": "A prompt with required arguments",
             "arguments": [
                {"name": "arg1", "description": "First test argument", "required": true},
                {"name": "arg2", "description": "Second test argument", "required": true}
             ]},
            {"name": "test_prompt_with_embedded_resource", "description": "A prompt with an embedded resource",
             "arguments": [{"name": "resourceUri", "description": "URI of the resource to embed", "required": true}]},
            {"name": "test_prompt_with_image", "description": "A prompt with an image"}
        ]}))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        let args = request.arguments.clone().unwrap_or_default();
        let arg = |k: &str| {
            args.get(k)
                .map(|v| {
                    v.as_str()
                        .map(str::to_string)
                        .unwrap_or_else(|| v.to_string())
                })
                .unwrap_or_default()
        };
        let user = |content: Value| json!({"role": "user", "content": content});
        let messages = match request.name.as_str() {
            "test_simple_prompt" => vec![user(text("This is a simple prompt for testing."))],
            "test_prompt_with_arguments" => vec![user(text(&format!(
                "Prompt with arguments: arg1='{}', arg2='{}'",
                arg("arg1"),
                arg("arg2")
            )))],
            "test_prompt_with_embedded_resource" => {
                let uri = match arg("resourceUri") {
                    u if u.is_empty() => "test://example-resource".to_string(),
                    u => u,
                };
                vec![
                    user(embedded(&uri, "Embedded resource content for testing.")),
                    user(text("Please process the embedded resource above.")),
                ]
            }
            "test_prompt_with_image" => {
                vec![user(image()), user(text("Please analyze the image above."))]
            }
            other => {
                return Err(McpError::invalid_params(format!("no prompt {other}"), None));
            }
        };
        let result: GetPromptResult = result(json!({ "messages": messages }))?;
        Ok(result.into())
    }

    async fn complete(
        &self,
        _request: CompleteRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        result(
            json!({"completion": {"values": ["paris", "park", "party"], "total": 3, "hasMore": false}}),
        )
    }

    async fn set_level(
        &self,
        _request: SetLevelRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        Ok(())
    }
}
