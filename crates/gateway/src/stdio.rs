//! Serving one MCP server handler over this process's stdin/stdout until the client disconnects:
//! the gateway, the embedded demo servers and the conformance fixture all end here.

use rmcp::{ServerHandler, ServiceExt};

use crate::error::GatewayError;

/// Serve `handler` on stdin/stdout and wait for the session to end. When both are pipes (the
/// way MCP clients start a server) they are read and written on tokio's reactor; otherwise
/// (a terminal, a file) through tokio's blocking stdio, which hands every read and write to
/// another thread and costs about a hundred microseconds per message.
pub(crate) async fn serve<H: ServerHandler>(handler: H) -> Result<(), GatewayError> {
    let running = handler
        .serve(rmcp::transport::stdio_pipes())
        .await
        .map_err(|e| GatewayError::Serve(e.to_string()))?;
    running
        .waiting()
        .await
        .map_err(|e| GatewayError::Serve(e.to_string()))?;
    Ok(())
}
