//! Serving one MCP server handler over this process's stdin/stdout until the client disconnects:
//! the gateway, the embedded demo servers and the conformance fixture all end here.

use rmcp::service::ServerInitializeError;
use rmcp::{ServerHandler, ServiceExt};

use crate::error::GatewayError;

/// Serve `handler` on stdin/stdout and wait for the session to end. Standard streams are read
/// and written on tokio's reactor when they are pipes (how Python's `subprocess` and Rust's
/// `Command` start a server) or Unix sockets (how Node's `child_process`, and so Claude Code,
/// Claude Desktop and the TypeScript SDK, start one); otherwise (a terminal, a file) through
/// tokio's blocking stdio, which hands every read and write to another thread and costs about a
/// hundred microseconds per message.
pub(crate) async fn serve<H: ServerHandler>(handler: H) -> Result<(), GatewayError> {
    #[cfg(unix)]
    if let Some((read, write)) = sockets::stdio() {
        tracing::debug!("stdio: standard streams are sockets, served on the reactor");
        return wait(handler.serve((read, write)).await).await;
    }
    wait(handler.serve(rmcp::transport::stdio_pipes()).await).await
}

/// Serve the gateway on stdin/stdout: as [`serve`], with plain tool calls passing through to
/// stdio servers as JSON text (see `passthrough`). Standard input is read with blocking reads
/// on a thread of its own, whatever it is; standard output is written on the reactor as above.
pub(crate) async fn serve_gateway(
    gateway: std::sync::Arc<crate::gateway::Gateway>,
) -> Result<(), GatewayError> {
    let input = input()?;
    #[cfg(unix)]
    if let Some(write) = sockets::stdout() {
        tracing::debug!("stdio: standard output is a socket, written on the reactor");
        return crate::passthrough::serve(gateway, input, write).await;
    }
    let (_, write) = rmcp::transport::stdio_pipes();
    crate::passthrough::serve(gateway, input, write).await
}

/// Standard input, to read on a thread: a duplicate of its descriptor that waits for input
/// even if the stream is non-blocking (shared with a socket written on the reactor).
#[cfg(unix)]
fn input() -> Result<switchboard_mcp::WaitingFd, GatewayError> {
    use std::os::fd::AsFd;
    let fd = std::io::stdin()
        .as_fd()
        .try_clone_to_owned()
        .map_err(|e| GatewayError::Serve(format!("standard input: {e}")))?;
    Ok(switchboard_mcp::WaitingFd(std::fs::File::from(fd)))
}

#[cfg(not(unix))]
fn input() -> Result<std::io::Stdin, GatewayError> {
    Ok(std::io::stdin())
}

async fn wait<H: ServerHandler>(
    started: Result<rmcp::service::RunningService<rmcp::RoleServer, H>, ServerInitializeError>,
) -> Result<(), GatewayError> {
    let running = match started {
        Ok(running) => running,
        Err(e) => return not_started(e),
    };
    running
        .waiting()
        .await
        .map_err(|e| GatewayError::Serve(e.to_string()))?;
    Ok(())
}

/// A session that never started: a client that closed its end before `initialize` simply went
/// away (a launcher checking that the command runs, a host that gave up), which is not a
/// failure of the server; anything else is.
pub(crate) fn not_started(e: ServerInitializeError) -> Result<(), GatewayError> {
    match e {
        ServerInitializeError::ConnectionClosed(_) => {
            tracing::info!("the client closed the connection before initialize");
            Ok(())
        }
        other => Err(GatewayError::Serve(other.to_string())),
    }
}

#[cfg(unix)]
mod sockets {
    //! Standard streams that are Unix sockets (libuv's stdio "pipes" are socketpairs).

    use std::os::fd::{AsFd, OwnedFd};
    use std::os::unix::fs::FileTypeExt;
    use std::os::unix::net::UnixStream;

    /// Both standard streams as non-blocking tokio sockets, when both are sockets.
    pub(super) fn stdio() -> Option<(tokio::net::UnixStream, tokio::net::UnixStream)> {
        let read = socket(std::io::stdin().as_fd().try_clone_to_owned().ok()?)?;
        let write = stdout()?;
        Some((read, write))
    }

    /// Standard output as a non-blocking tokio socket, when it is a socket.
    pub(super) fn stdout() -> Option<tokio::net::UnixStream> {
        socket(std::io::stdout().as_fd().try_clone_to_owned().ok()?)
    }

    /// A duplicate of a standard stream's descriptor as a tokio socket. The duplicate shares
    /// the stream's open file description, so the stream itself becomes non-blocking too: only
    /// the transport uses it (logs go to stderr, and upstream servers get their own pipes).
    fn socket(fd: OwnedFd) -> Option<tokio::net::UnixStream> {
        let file = std::fs::File::from(fd);
        if !file.metadata().ok()?.file_type().is_socket() {
            return None;
        }
        let stream = UnixStream::from(OwnedFd::from(file));
        stream.set_nonblocking(true).ok()?;
        tokio::net::UnixStream::from_std(stream).ok()
    }
}
