//! One request to a server, sent with a deadline and cancelled on the wire when it times out or
//! when the caller stops waiting, and its result read as wire JSON. Results are read leniently:
//! rmcp parses into typed results, and a result it cannot type (a content block or a tool field
//! from a newer spec) arrives as `CustomResult`; both become plain JSON here, so one odd field
//! never turns a good reply into an error.

use std::sync::Arc;
use std::time::Duration;

use rmcp::RoleClient;
use rmcp::model::{CancelledNotificationParam, ClientRequest, RequestId, ServerResult};
use rmcp::service::{Peer, PeerRequestOptions, ServiceError};
use serde_json::Value;
use tokio::sync::mpsc;

use crate::relay::{Registered, Relays, Upcall};
use crate::roots::Offer;

/// Where a relayed request's progress and server requests go: the server's relays, and the
/// caller's sink (`None`: the call is registered as in flight but takes no upcalls).
pub(crate) type Relay<'a> = (&'a Arc<Relays>, Option<&'a mpsc::UnboundedSender<Upcall>>);

/// Send `request` and wait for its result, driving multi-round-trip `input_required` rounds
/// (see `mrtr`; a round asking for roots is given `roots`); each round may take up to
/// `timeout`.
pub(crate) async fn send(
    peer: &Peer<RoleClient>,
    roots: &Offer,
    request: ClientRequest,
    timeout: Duration,
) -> Result<ServerResult, ServiceError> {
    send_relayed(peer, roots, request, timeout, None).await
}

/// [`send`], with the request's progress and the server's requests made meanwhile going to
/// `relay` when given.
pub(crate) async fn send_relayed(
    peer: &Peer<RoleClient>,
    roots: &Offer,
    mut request: ClientRequest,
    timeout: Duration,
    relay: Option<Relay<'_>>,
) -> Result<ServerResult, ServiceError> {
    let mut round = 0;
    loop {
        let result = send_once(peer, request.clone(), timeout, relay).await?;
        match crate::mrtr::next_round(&request, &result, round, roots).await {
            Some(next) => request = next,
            None => return Ok(result),
        }
        round += 1;
    }
}

/// Send `request` and wait for its result for at most `timeout`. On timeout rmcp sends
/// `notifications/cancelled` itself; if this future is dropped first, the guard does.
async fn send_once(
    peer: &Peer<RoleClient>,
    request: ClientRequest,
    timeout: Duration,
    relay: Option<Relay<'_>>,
) -> Result<ServerResult, ServiceError> {
    send_keeping(peer, request, timeout, relay)
        .await
        .map(|(result, _)| result)
}

/// [`send_once`], keeping the request's relay registration after its result: what the server
/// sends under the request's progress token still reaches the relay until the returned guard
/// is dropped (a task's progress, which goes on after the `tools/call` that created it).
pub(crate) async fn send_keeping(
    peer: &Peer<RoleClient>,
    request: ClientRequest,
    timeout: Duration,
    relay: Option<Relay<'_>>,
) -> Result<(ServerResult, Option<Registered>), ServiceError> {
    // In flight before it is sent: a server may ask its caller something as soon as it reads
    // the request. rmcp picks the progress token and id; upcalls carrying them go to the relay
    // until this returns.
    let registered = relay.map(|(relays, sink)| (relays, relays.reserve(sink.cloned())));
    let handle = peer
        .send_cancellable_request(request, PeerRequestOptions::with_timeout(timeout))
        .await?;
    if let Some((relays, registered)) = &registered {
        relays.assign(registered, handle.progress_token.clone(), handle.id.clone());
    }
    let mut guard = CancelOnDrop {
        peer: peer.clone(),
        id: Some(handle.id.clone()),
    };
    let result = handle.await_response().await;
    guard.id = None;
    // Every progress notification reaches its relay as the transport reads it, before the
    // response behind it (`raw` for stdio, `in_order` for HTTP), so nothing is still on its
    // way when the registration goes away.
    result.map(|r| (r, registered.map(|(_, kept)| kept)))
}

/// A result as the JSON the server sent (for typed results, as rmcp re-encodes them).
pub(crate) fn to_json(result: ServerResult) -> Value {
    match result {
        ServerResult::CustomResult(custom) => custom.0,
        other => serde_json::to_value(&other).unwrap_or(Value::Null),
    }
}

/// True for results that need a follow-up round (MRTR `input_required`) or became a task;
/// switchboard does not drive those.
pub(crate) fn needs_more(result: &ServerResult) -> bool {
    matches!(
        result,
        ServerResult::InputRequiredResult(_) | ServerResult::CreateTaskResult(_)
    )
}

/// Cancels the request on the wire unless disarmed (by taking `id`) before drop.
struct CancelOnDrop {
    peer: Peer<RoleClient>,
    id: Option<RequestId>,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else {
            return;
        };
        let peer = self.peer.clone();
        in_background(async move {
            let reason = Some("request abandoned by the caller".to_string());
            let _ = peer
                .notify_cancelled(CancelledNotificationParam::new(Some(id), reason))
                .await;
        });
    }
}

/// Run `work` on the current runtime without waiting for it (from a `Drop`, which cannot
/// wait); nothing happens outside a runtime.
pub(crate) fn in_background(work: impl Future<Output = ()> + Send + 'static) {
    if let Ok(runtime) = tokio::runtime::Handle::try_current() {
        runtime.spawn(work);
    }
}
