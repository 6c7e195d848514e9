//! Serving one MCP server handler over this process's stdin/stdout until the client disconnects:
//! the gateway, the embedded demo servers and the conformance fixture all end here.

use rmcp::{ServerHandler, ServiceExt};

use crate::error::GatewayError;

/// Serve `handler` on stdin/stdout and wait for the session to end.
pub(crate) async fn serve<H: ServerHandler>(handler: H) -> Result<(), GatewayError> {
    let running = handler
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| GatewayError::Serve(e.to_string()))?;
    running
        .waiting()
        .await
        .map_err(|e| GatewayError::Serve(e.to_string()))?;
    Ok(())
}
