//! A minimal MCP server for benchmarks: one tool, `echo`, that returns its `text` argument.
//! `switchboard-echo` serves stdio (on tokio's reactor when stdin and stdout are pipes, as
//! `switchboard serve` does; `--blocking-stdio` uses rmcp's default blocking stdio instead);
//! `switchboard-echo --http 127.0.0.1:0` serves Streamable HTTP at /mcp (TCP_NODELAY on) and
//! prints `listening on URL` to stderr.

use std::sync::Arc;

use axum::serve::ListenerExt;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};

#[derive(Clone)]
struct Echo {
    tool: Arc<Tool>,
}

impl ServerHandler for Echo {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("switchboard-echo", "1"))
    }

    async fn list_tools(
        &self,
        _r: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(vec![(*self.tool).clone()]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let text = request
            .arguments
            .as_ref()
            .and_then(|a| a.get("text"))
            .and_then(|t| t.as_str())
            .unwrap_or_default()
            .to_string();
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
    }
}

fn echo() -> anyhow::Result<Echo> {
    let schema = serde_json::json!({
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"]
    });
    let serde_json::Value::Object(schema) = schema else {
        anyhow::bail!("schema is an object");
    };
    Ok(Echo {
        tool: Arc::new(Tool::new("echo", "Return the text.", Arc::new(schema))),
    })
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let server = echo()?;
    match args.as_slice() {
        [] => {
            let running = server.serve(rmcp::transport::stdio_pipes()).await?;
            running.waiting().await?;
        }
        [flag] if flag == "--blocking-stdio" => {
            let running = server.serve(rmcp::transport::stdio()).await?;
            running.waiting().await?;
        }
        [flag, addr] if flag == "--http" => {
            let service = StreamableHttpService::new(
                move || Ok(server.clone()),
                LocalSessionManager::default().into(),
                StreamableHttpServerConfig::default(),
            );
            let router = axum::Router::new().nest_service("/mcp", service);
            let listener = tokio::net::TcpListener::bind(addr.as_str()).await?;
            eprintln!("listening on http://{}/mcp", listener.local_addr()?);
            let listener = listener.tap_io(|tcp| {
                let _ = tcp.set_nodelay(true);
            });
            axum::serve(listener, router).await?;
        }
        _ => anyhow::bail!("usage: switchboard-echo [--blocking-stdio | --http ADDR]"),
    }
    Ok(())
}
