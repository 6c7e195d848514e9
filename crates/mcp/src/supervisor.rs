//! The supervisor: one task per configured server that owns its session. It connects (bounded by
//! the startup timeout), lists, publishes the server's catalog, re-lists on `list_changed`
//! (debounced), notices when the session ends, reconnects with exponential backoff, and closes
//! the session, killing the child's process group, on shutdown.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use rmcp::service::QuitReason;
use switchboard_core::{ServerCatalog, TransportSpec};
use tokio::sync::{Notify, mpsc, oneshot};

use crate::connect::{self, Service};
use crate::convert;
use crate::error::SessionError;
use crate::execution::Executions;
use crate::handler::{Handler, ListKind};
use crate::listing;
use crate::raw::RawLink;
use crate::relay::ServerEvent;
use crate::sessions::Shared;
use crate::slot::Slot;
use crate::status::ServerState;

/// Reconnect attempts after a session ends before a stdio server is marked failed. An HTTP
/// server is never given up on once it has been up: it is someone else's process, and one
/// that is redeployed or restarted is usually down for longer than these attempts take
/// (about 8 s), so it is tried every `HTTP_RETRY` from then on.
const MAX_RESTARTS: u32 = 5;
/// How often an HTTP server that is still down after `MAX_RESTARTS` attempts is tried again.
const HTTP_RETRY: Duration = Duration::from_secs(10);
/// First reconnect delay; doubles per attempt up to `MAX_BACKOFF`.
const FIRST_BACKOFF: Duration = Duration::from_millis(250);
const MAX_BACKOFF: Duration = Duration::from_secs(4);
/// A session that stayed up this long counts as healthy: the restart budget starts over.
const STABLE_AFTER: Duration = Duration::from_secs(30);
/// Servers send list_changed in bursts (server-everything sends four right after initialize);
/// wait this long for the burst to end before re-listing once.
const DEBOUNCE: Duration = Duration::from_millis(75);
/// On shutdown a server gets this long to exit on stdin EOF before its group is killed
/// (rmcp alone would wait 3 s, then SIGTERM).
const SHUTDOWN_GRACE: Duration = Duration::from_millis(300);
/// Upper bound on waiting for a killed group's other members (grandchildren) to be gone.
const GROUP_EXIT_WAIT: Duration = Duration::from_millis(500);
/// Upper bound on waiting for rmcp to finish closing a session.
const CLOSE_WAIT: Duration = Duration::from_secs(5);

/// Delay before reconnect attempt `attempt` (1-based): 250 ms, 500 ms, 1 s, 2 s, 4 s, 4 s, ...
pub(crate) fn backoff(attempt: u32) -> Duration {
    let factor = 1u32 << attempt.saturating_sub(1).min(16);
    FIRST_BACKOFF.saturating_mul(factor).min(MAX_BACKOFF)
}

/// Delay before reconnect attempt `attempt`: `backoff`, and for an HTTP server that is still
/// down once the stdio restart budget is spent, `HTTP_RETRY`.
fn retry_delay(http: bool, attempt: u32) -> Duration {
    if http && attempt > MAX_RESTARTS {
        HTTP_RETRY
    } else {
        backoff(attempt)
    }
}

/// How a live session ended.
enum End {
    /// We are shutting down; the session is closed.
    Shutdown,
    /// The session ended on its own (the process died, the server hung up).
    Lost(String),
}

/// Run server `slot` until shutdown, until a reconfiguration removes it, or until it is given
/// up on. `first` fires once the first connect attempt has an outcome (ready or failed), which
/// is what `Sessions::start` waits for.
pub(crate) async fn supervise(shared: Arc<Shared>, slot: Arc<Slot>, first: oneshot::Sender<()>) {
    let slot = &*slot;
    let name = slot.spec.name.clone();
    let mut first = Some(first);
    let mut attempt: u32 = 0;
    // Whether a session has been ready (a later failure is an outage, not a failed start).
    let mut ever_ready = false;
    let http = matches!(slot.spec.transport, TransportSpec::Http { .. });
    loop {
        if slot.stop.is_cancelled() {
            break;
        }
        let (handler, changes) = Handler::new(
            &name,
            slot.relays.clone(),
            shared.events.clone(),
            slot.executions.clone(),
            slot.roots_offer.clone(),
        );
        let started = Instant::now();
        let outcome = tokio::select! {
            biased;
            _ = slot.stop.cancelled() => {
                // Dropping the half-done connect kills its child; make it immediate.
                kill_group(slot.take_pid());
                break;
            }
            r = tokio::time::timeout(slot.spec.startup_timeout, establish(&shared, slot, handler)) => r,
        };
        let outcome = outcome.unwrap_or_else(|_| {
            Err(SessionError::StartupTimeout {
                server: name.clone(),
                after: slot.spec.startup_timeout,
                stray: slot.ids.explain(slot.spec.startup_timeout),
                stderr_tail: slot.tail.lines(),
            })
        });
        match outcome {
            Err(error) => {
                kill_group(slot.take_pid());
                let reason = error.to_string();
                // A long-running host keeps trying an HTTP server it could not reach: a remote
                // server that is down when the host starts comes back on its own. Its start
                // counts as settled at the first failure.
                if !ever_ready
                    && http
                    && shared.retry_unreachable
                    && matches!(
                        error,
                        SessionError::Connect { .. } | SessionError::StartupTimeout { .. }
                    )
                {
                    if let Some(first) = first.take() {
                        tracing::warn!(server = %name, %reason, "server unreachable; trying again every {} s", HTTP_RETRY.as_secs());
                        let _ = first.send(());
                    } else {
                        tracing::debug!(server = %name, %reason, "server still unreachable");
                    }
                    slot.set_state(ServerState::Failed {
                        reason: format!("{reason} (trying again every {} s)", HTTP_RETRY.as_secs()),
                    });
                    tokio::select! {
                        _ = slot.stop.cancelled() => break,
                        _ = tokio::time::sleep(HTTP_RETRY) => {}
                    }
                    continue;
                }
                // A first failure is almost always configuration (bad command, wrong URL):
                // report it at once instead of retrying something that cannot work.
                // `give_up` logs the reason; logging it here as well said everything twice.
                if first.is_some() || (attempt >= MAX_RESTARTS && !http) {
                    let reason = if first.is_some() {
                        reason
                    } else {
                        format!("{reason} (gave up after {attempt} restarts)")
                    };
                    give_up(&shared, slot, reason, first.is_some());
                    break;
                }
                // One warning per outage at the default level (then one more when an HTTP
                // server moves to the slow retry); the attempts between are info.
                if attempt <= 1 {
                    tracing::warn!(server = %name, %reason, "restart failed; retrying with backoff");
                } else if http && attempt == MAX_RESTARTS {
                    tracing::warn!(server = %name, %reason, "server still down; retrying every {} s", HTTP_RETRY.as_secs());
                } else {
                    tracing::info!(server = %name, %reason, attempt, "restart failed; retrying");
                }
            }
            Ok((service, raw, catalog, warnings)) => {
                ever_ready = true;
                // A server given roots while it started is still taking them in: a call
                // right away would find it with none (the filesystem server refuses it).
                slot.roots_offer.settled().await;
                let connect_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
                let suspect = Arc::new(Notify::new());
                slot.set_ready(
                    service.peer().clone(),
                    raw,
                    suspect.clone(),
                    connect_ms,
                    catalog.info.clone(),
                    warnings,
                );
                shared.publish(slot, catalog.clone());
                tracing::info!(server = %name, connect_ms, tools = catalog.tools.len(), "server ready");
                // No receiver is fine: nobody restores session state.
                let _ = shared.events.send(ServerEvent::Ready {
                    server: name.clone(),
                });
                if let Some(first) = first.take() {
                    let _ = first.send(());
                }
                let ready_at = Instant::now();
                match run(&shared, slot, service, changes, catalog, &suspect).await {
                    End::Shutdown => break,
                    End::Lost(detail) => {
                        tracing::warn!(server = %name, %detail, "session ended");
                        if ready_at.elapsed() >= STABLE_AFTER {
                            attempt = 0;
                        }
                        if attempt >= MAX_RESTARTS && !http {
                            give_up(
                                &shared,
                                slot,
                                format!("{detail} (gave up after {attempt} restarts)"),
                                false,
                            );
                            break;
                        }
                    }
                }
            }
        }
        attempt += 1;
        slot.set_state(ServerState::Restarting { attempt });
        tokio::select! {
            _ = slot.stop.cancelled() => break,
            _ = tokio::time::sleep(retry_delay(http, attempt)) => {}
        }
    }
    if let Some(first) = first.take() {
        let _ = first.send(());
    }
    if slot.stop.is_cancelled() {
        slot.set_state(ServerState::Failed {
            reason: "session closed by shutdown".to_string(),
        });
    }
}

/// Connect and list everything.
async fn establish(
    shared: &Shared,
    slot: &Slot,
    handler: Handler,
) -> Result<(Service, Option<Arc<RawLink>>, ServerCatalog, Vec<String>), SessionError> {
    slot.set_pid(None);
    let connect::Connected {
        service,
        raw,
        legacy_sse,
    } = connect::connect(
        &slot.spec,
        handler,
        || shared.http(),
        &slot.tail,
        &slot.ids,
        |pid| slot.set_pid(Some(pid)),
    )
    .await?;
    slot.set_legacy_sse(legacy_sse);
    let mut catalog = ServerCatalog::new(slot.spec.name.clone());
    if let Some(info) = service.peer_info() {
        if !rmcp::model::ProtocolVersion::KNOWN_VERSIONS.contains(&info.protocol_version) {
            // rmcp does not check the version a server answers with.
            tracing::warn!(server = %slot.spec.name, version = %info.protocol_version, "server negotiated an unknown protocol version");
        }
        catalog.info = convert::server_info(&info);
    }
    let mut warnings = Vec::new();
    listing::refresh(
        service.peer(),
        &slot.roots_offer,
        &listing::ALL,
        &mut catalog,
        &mut warnings,
    )
    .await
    .map_err(|e| SessionError::Listing {
        server: slot.spec.name.clone(),
        detail: listing::describe(&e),
        stderr_tail: slot.tail.lines(),
    })?;
    for w in &warnings {
        tracing::warn!(server = %slot.spec.name, warning = %w);
    }
    restore_executions(&mut catalog, &slot.executions);
    Ok((service, raw, catalog, warnings))
}

/// Put back each tool's `execution` (what says it runs only as a task), which rmcp's listing
/// drops, from what the session's transport saw of the server's tool lists.
fn restore_executions(catalog: &mut ServerCatalog, executions: &Executions) {
    for entry in &mut catalog.tools {
        if entry.def.extra.contains_key("execution") {
            continue;
        }
        if let Some(execution) = executions.get(&entry.def.name) {
            let mut def = entry.def.clone();
            def.extra.insert("execution".to_string(), execution);
            *entry = switchboard_core::catalog::Entry::new(def);
        }
    }
}

/// Serve a ready session: re-list on change notifications until it ends or we shut down.
async fn run(
    shared: &Shared,
    slot: &Slot,
    service: Service,
    mut changes: mpsc::UnboundedReceiver<ListKind>,
    mut catalog: ServerCatalog,
    suspect: &Notify,
) -> End {
    let peer = service.peer().clone();
    let cancel = service.cancellation_token();
    let mut ended = Box::pin(service.waiting());
    let name = &slot.spec.name;
    loop {
        let kind = tokio::select! {
            quit = &mut ended => return lost(slot, quit),
            _ = slot.stop.cancelled() => {
                cancel.cancel();
                close(slot, ended).await;
                return End::Shutdown;
            }
            _ = suspect.notified() => {
                let raw = slot.raw_link();
                slot.drop_peer();
                cancel.cancel();
                let by_itself = close(slot, ended).await;
                let detail = "a request found the connection closed".to_string();
                // How a stdio child ended, unless it was our kill that ended it.
                return End::Lost(match raw.and_then(|r| r.exit_status()).filter(|_| by_itself) {
                    Some(status) => format!("{detail}: {}", describe_exit(status)),
                    None => detail,
                });
            }
            Some(kind) = changes.recv() => kind,
        };
        let mut pending = HashSet::from([kind]);
        tokio::time::sleep(DEBOUNCE).await;
        while let Ok(more) = changes.try_recv() {
            pending.insert(more);
        }
        let kinds: Vec<ListKind> = listing::ALL
            .into_iter()
            .filter(|k| pending.contains(k))
            .collect();
        // The re-list works on a copy, so a failed one leaves the published catalog as it was.
        let relist = {
            let peer = peer.clone();
            let roots = slot.roots_offer.clone();
            let mut next = catalog.clone();
            let limit = slot.spec.startup_timeout;
            async move {
                let mut warnings = Vec::new();
                let r = tokio::time::timeout(
                    limit,
                    listing::refresh(&peer, &roots, &kinds, &mut next, &mut warnings),
                )
                .await;
                (r, next, warnings, kinds)
            }
        };
        let (r, mut next, warnings, kinds) = tokio::select! {
            quit = &mut ended => return lost(slot, quit),
            _ = slot.stop.cancelled() => {
                cancel.cancel();
                close(slot, ended).await;
                return End::Shutdown;
            }
            out = relist => out,
        };
        match r {
            Ok(Ok(())) => {
                for w in &warnings {
                    tracing::warn!(server = %name, warning = %w);
                }
                slot.set_warnings(warnings);
                restore_executions(&mut next, &slot.executions);
                catalog = next;
                if shared.publish(slot, catalog.clone()) {
                    tracing::info!(server = %name, ?kinds, tools = catalog.tools.len(), "catalog changed");
                }
            }
            Ok(Err(e)) => {
                tracing::warn!(server = %name, error = %e, "re-list after list_changed failed")
            }
            Err(_) => tracing::warn!(server = %name, "re-list after list_changed timed out"),
        }
    }
}

/// The session ended by itself: record it and describe why.
fn lost(slot: &Slot, quit: Result<QuitReason, tokio::task::JoinError>) -> End {
    // rmcp closed the transport before the session's task ended, so a stdio child that died
    // (SIGKILL, a crash) has been reaped and its status is known.
    let exited = slot.raw_link().and_then(|raw| raw.exit_status());
    slot.drop_peer();
    // The group may still hold grandchildren of a dead server; they have no session left.
    kill_group(slot.take_pid());
    let why = match quit {
        Ok(QuitReason::Closed) => exited.map_or_else(
            || "the server closed the connection".to_string(),
            describe_exit,
        ),
        Ok(QuitReason::Cancelled) => "the session was cancelled".to_string(),
        Ok(QuitReason::JoinError(e)) | Err(e) => format!("the session task failed: {e}"),
        Ok(_) => "the session ended".to_string(),
    };
    let last = slot
        .tail
        .lines()
        .into_iter()
        .rev()
        .find(|l| !l.trim().is_empty());
    End::Lost(match last {
        Some(line) => format!("{why}; last stderr line: {line}"),
        None => why,
    })
}

/// How a stdio server's process ended, in words: its exit code, or the signal that killed it
/// (a SIGKILL from outside, the OOM killer, a crash).
fn describe_exit(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt as _;
    if let Some(code) = status.code() {
        return format!("the server exited with status {code}");
    }
    match status.signal() {
        Some(signal) => match Signal::try_from(signal) {
            Ok(name) => format!("the server was killed by signal {signal} ({name})"),
            Err(_) => format!("the server was killed by signal {signal}"),
        },
        None => format!("the server ended ({status})"),
    }
}

/// Close a session we cancelled: give the server a moment to exit on stdin EOF, then kill its
/// process group so no child outlives shutdown, and wait for rmcp to reap it. True when the
/// session ended within that moment, before any kill of ours.
async fn close<F>(slot: &Slot, mut ended: std::pin::Pin<Box<F>>) -> bool
where
    F: std::future::Future<Output = Result<QuitReason, tokio::task::JoinError>>,
{
    let pid = slot.pid();
    let by_itself = tokio::time::timeout(SHUTDOWN_GRACE, &mut ended)
        .await
        .is_ok();
    if !by_itself {
        kill_group(pid);
        if tokio::time::timeout(CLOSE_WAIT, &mut ended).await.is_err() {
            tracing::warn!(server = %slot.spec.name, "session did not finish closing");
        }
    }
    // rmcp reaps the child itself, but not what the child spawned: a wrapper that exited on
    // stdin EOF may leave a server behind in its group, and killed grandchildren take a moment
    // to go. Kill what is left and wait, so shutdown means "gone".
    kill_group(pid);
    wait_group_gone(pid, GROUP_EXIT_WAIT).await;
    slot.set_pid(None);
    by_itself
}

/// Mark the server failed. A server that never started is reported by whoever started it (the
/// `servers` table, the commands' notes, the gateway's "not ready"), so that is logged at info;
/// one that fails after it was running is news, a warning.
fn give_up(shared: &Shared, slot: &Slot, reason: String, never_started: bool) {
    if never_started {
        tracing::info!(server = %slot.spec.name, %reason, "server failed to start");
    } else {
        tracing::warn!(server = %slot.spec.name, %reason, "server failed");
    }
    slot.set_state(ServerState::Failed { reason });
    shared.withdraw(slot);
}

/// Poll until no process is left in the group (signal 0 probes without signalling), or `limit`.
async fn wait_group_gone(pid: Option<u32>, limit: Duration) {
    let Some(pgid) = pid.and_then(|p| i32::try_from(p).ok()) else {
        return;
    };
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if killpg(Pid::from_raw(pgid), None) == Err(nix::errno::Errno::ESRCH) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// SIGKILL a stdio server's process group (the child is its leader, so pgid = pid).
pub(crate) fn kill_group(pid: Option<u32>) {
    let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()) else {
        return;
    };
    match killpg(Pid::from_raw(pid), Signal::SIGKILL) {
        Ok(()) | Err(nix::errno::Errno::ESRCH) => {}
        Err(e) => tracing::debug!(pid, error = %e, "killpg failed"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_to_a_cap() {
        let got: Vec<u128> = (1..=7).map(|a| backoff(a).as_millis()).collect();
        assert_eq!(got, vec![250, 500, 1000, 2000, 4000, 4000, 4000]);
    }

    #[test]
    fn an_http_server_is_retried_slowly_after_the_restart_budget() {
        let delays =
            |http| -> Vec<u128> { (1..=7).map(|a| retry_delay(http, a).as_millis()).collect() };
        assert_eq!(delays(false), vec![250, 500, 1000, 2000, 4000, 4000, 4000]);
        assert_eq!(delays(true), vec![250, 500, 1000, 2000, 4000, 10000, 10000]);
    }
}
