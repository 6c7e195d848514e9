//! Relays: what a server sends back about a call in flight (progress, and its own requests for
//! sampling or elicitation) goes to the caller that asked for it, and what a server sends about
//! itself (log messages, resource updates) goes out as [`ServerEvent`]s. A gateway uses both to
//! pass these on to its own clients; a caller that uses neither gets the default behaviour
//! (progress dropped, sampling refused, elicitation answered by policy, events logged).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::{ProgressNotificationParam, ProgressToken, RequestId};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

use crate::slot::lock;

/// Something a server sends about one call in flight, for the caller of
/// [`crate::Sessions::call_tool_relayed`].
#[derive(Debug)]
#[non_exhaustive]
pub enum Upcall {
    /// `notifications/progress` for the call (the token is the caller's business).
    Progress {
        /// Progress so far.
        progress: f64,
        /// Total, when the server knows it.
        total: Option<f64>,
        /// A human-readable status.
        message: Option<String>,
    },
    /// A request the server made while the call ran (`sampling/createMessage` or
    /// `elicitation/create`). Answer through `reply`: the result as wire JSON, or an error.
    /// Dropping `reply` answers with the session's default (refuse sampling, elicitation by
    /// policy).
    Request {
        /// Which request.
        kind: UpcallKind,
        /// Its `params` as wire JSON.
        params: Value,
        /// Where the answer goes.
        reply: oneshot::Sender<Result<Value, UpcallError>>,
    },
}

impl Upcall {
    fn progress(params: ProgressNotificationParam) -> Self {
        Upcall::Progress {
            progress: params.progress,
            total: params.total,
            message: params.message,
        }
    }
}

/// The kind of a server's request relayed to a caller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UpcallKind {
    /// `sampling/createMessage`.
    Sampling,
    /// `elicitation/create`.
    Elicitation,
}

/// A JSON-RPC error to answer a relayed request with.
#[derive(Clone, Debug)]
pub struct UpcallError {
    /// JSON-RPC error code.
    pub code: i32,
    /// Message for the server.
    pub message: String,
}

/// Something a server sent about itself rather than about one call.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum ServerEvent {
    /// `notifications/message`.
    Log {
        /// The configured server name.
        server: String,
        /// The wire `params` (`level`, `logger`, `data`).
        params: Value,
    },
    /// `notifications/resources/updated` for a subscribed URI (the server's own URI).
    ResourceUpdated {
        /// The configured server name.
        server: String,
        /// The server's URI.
        uri: String,
    },
    /// The server's session is up: for the first time, or again after a restart or a
    /// reconfiguration. What a client asked of the session before (a log level, resource
    /// subscriptions) is gone with the old one.
    Ready {
        /// The configured server name.
        server: String,
    },
}

/// One relayed request in flight: rmcp's progress token and JSON-RPC id for it (`None` while
/// it is being sent: rmcp picks both), and its sink.
struct Call {
    /// Unique per registration: tokens and ids start over when a session is re-established.
    serial: u64,
    token: Option<ProgressToken>,
    id: Option<RequestId>,
    /// `None` for a caller that takes no upcalls: the call still counts as in flight, so a
    /// server request made meanwhile is not taken for another call's, but what the server
    /// sends about it gets the default treatment (progress dropped, default answers).
    sink: Option<mpsc::UnboundedSender<Upcall>>,
}

impl Call {
    /// Still in flight for its caller: a sinkless call until it ends, a sink while its
    /// receiver lives.
    fn live(&self) -> bool {
        self.sink.as_ref().is_none_or(|s| !s.is_closed())
    }
}

/// The calls in flight on one server whose caller takes upcalls, by the progress token and
/// request id rmcp gave the request. Shared by the server's slot and every session handler it
/// creates.
#[derive(Default)]
pub(crate) struct Relays {
    calls: Mutex<Vec<Call>>,
    next: std::sync::atomic::AtomicU64,
    /// Progress under a token no call has registered yet, newest last (see [`Self::progress`]).
    /// Locked only while `calls` is.
    early: Mutex<VecDeque<Early>>,
}

/// Progress that came before its call was registered.
struct Early {
    at: Instant,
    params: ProgressNotificationParam,
}

/// How long progress waits for its call to be registered: the call registers right after rmcp
/// has queued the request, so a server can only answer first when the caller's thread is
/// descheduled in between (observed: 3 in 100 relayed calls through `serve --http`).
const EARLY_FOR: Duration = Duration::from_secs(1);
/// At most this much early progress is kept (progress of requests nobody relays, such as a
/// listing the server reports on, waits here too until it is pushed out or too old).
const EARLY_MAX: usize = 32;

/// Removes a registration when the request ends (or its future is dropped).
pub(crate) struct Registered {
    relays: Arc<Relays>,
    serial: u64,
}

impl Drop for Registered {
    fn drop(&mut self) {
        lock(&self.relays.calls).retain(|c| c.serial != self.serial);
    }
}

impl Relays {
    /// Route upcalls for the request `id` with `token` to `sink` until the guard is dropped
    /// (with no sink, only count the request as in flight).
    pub(crate) fn register(
        self: &Arc<Self>,
        token: ProgressToken,
        id: RequestId,
        sink: Option<mpsc::UnboundedSender<Upcall>>,
    ) -> Registered {
        let registered = self.reserve(sink);
        self.assign(&registered, token, id);
        registered
    }

    /// Count a request about to be sent as in flight, before rmcp has given it a token and an
    /// id ([`Self::assign`] gives them): a server may ask something (sampling, a form) as soon
    /// as it reads the request, before the caller hears back from rmcp, and the request must
    /// find its call then (it went to the session's default answer: seen in 2 of 3 loaded
    /// test runs of the everything server's sampling tool).
    pub(crate) fn reserve(
        self: &Arc<Self>,
        sink: Option<mpsc::UnboundedSender<Upcall>>,
    ) -> Registered {
        let serial = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        lock(&self.calls).push(Call {
            serial,
            token: None,
            id: None,
            sink,
        });
        Registered {
            relays: self.clone(),
            serial,
        }
    }

    /// The token and id rmcp gave a reserved request. Progress the server sent under the
    /// token before this goes to the call first, in order.
    pub(crate) fn assign(&self, registered: &Registered, token: ProgressToken, id: RequestId) {
        let mut calls = lock(&self.calls);
        let mut early = lock(&self.early);
        early.retain(|e| e.at.elapsed() < EARLY_FOR);
        let (mine, others) = std::mem::take(&mut *early)
            .into_iter()
            .partition::<VecDeque<_>, _>(|e| e.params.progress_token == token);
        *early = others;
        drop(early);
        let Some(call) = calls.iter_mut().find(|c| c.serial == registered.serial) else {
            return;
        };
        if let Some(sink) = &call.sink {
            for e in mine {
                let _ = sink.send(Upcall::progress(e.params));
            }
        }
        call.token = Some(token);
        call.id = Some(id);
    }

    /// The sink of the request with `token`, if it takes upcalls (the newest registration: a
    /// call left over from a session that ended may hold the same token).
    #[cfg(test)]
    pub(crate) fn by_token(&self, token: &ProgressToken) -> Option<mpsc::UnboundedSender<Upcall>> {
        lock(&self.calls)
            .iter()
            .rev()
            .find(|c| c.token.as_ref() == Some(token))
            .and_then(|c| c.sink.clone())
    }

    /// Hand progress to the relayed call with its token. Progress of a registered call that
    /// takes no upcalls is dropped; progress under a token nobody has registered is kept a
    /// moment for a call about to register it ([`Self::register`] sends it on first), since a
    /// server may answer a request before its caller has registered it.
    pub(crate) fn progress(&self, params: ProgressNotificationParam) {
        let calls = lock(&self.calls);
        match calls
            .iter()
            .rev()
            .find(|c| c.token.as_ref() == Some(&params.progress_token))
        {
            Some(call) => {
                if let Some(sink) = &call.sink {
                    let _ = sink.send(Upcall::progress(params));
                }
            }
            None => {
                let mut early = lock(&self.early);
                early.retain(|e| e.at.elapsed() < EARLY_FOR);
                if early.len() == EARLY_MAX {
                    early.pop_front();
                }
                early.push_back(Early {
                    at: Instant::now(),
                    params,
                });
            }
        }
    }

    /// The sink of the request `id`, if it takes upcalls (an HTTP server's request that came on
    /// that request's response stream belongs to it). When no call has that id yet but the
    /// one call in flight is still being sent, the request is taken for that call's.
    pub(crate) fn by_request(&self, id: &RequestId) -> Option<mpsc::UnboundedSender<Upcall>> {
        let calls = lock(&self.calls);
        if let Some(call) = calls.iter().rev().find(|c| c.id.as_ref() == Some(id)) {
            return call.sink.clone();
        }
        let live: Vec<_> = calls.iter().filter(|c| c.live()).collect();
        match live.as_slice() {
            [call] if call.id.is_none() => call.sink.clone(),
            _ => None,
        }
    }

    /// The sink a server's own request goes to when it does not say which call it belongs to
    /// (stdio; HTTP on the standalone stream): the one relayed call in flight. With none, or
    /// with several, `None`, and the session answers as it would without relays. Requests of
    /// one caller count as one call (a task's `tools/call`, kept for its progress, and the
    /// `tasks/result` waiting for it).
    pub(crate) fn sole(&self) -> Option<mpsc::UnboundedSender<Upcall>> {
        let calls = lock(&self.calls);
        let live: Vec<_> = calls.iter().filter(|c| c.live()).collect();
        let one_caller = live.split_first().is_some_and(|(first, rest)| {
            rest.iter().all(|c| match (&first.sink, &c.sink) {
                (Some(a), Some(b)) => a.same_channel(b),
                _ => false,
            })
        });
        match live.as_slice() {
            [call, ..] if one_caller => call.sink.clone(),
            [] => None,
            more => {
                tracing::debug!(
                    calls = more.len(),
                    "a server request during several relayed calls; answering it locally"
                );
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::NumberOrString;

    fn token(n: i64) -> ProgressToken {
        ProgressToken(NumberOrString::Number(n))
    }

    #[test]
    fn requests_go_to_the_one_call_in_flight_and_registrations_end_with_their_guard() {
        let relays = Arc::new(Relays::default());
        assert!(relays.sole().is_none());
        let (a, _rx_a) = mpsc::unbounded_channel();
        let first = relays.register(token(1), RequestId::Number(7), Some(a));
        assert!(relays.sole().is_some());
        assert!(relays.by_token(&token(1)).is_some());
        assert!(relays.by_token(&token(2)).is_none());
        let (b, rx_b) = mpsc::unbounded_channel();
        let second = relays.register(token(2), RequestId::Number(8), Some(b));
        assert!(relays.by_request(&RequestId::Number(8)).is_some());
        assert!(relays.sole().is_none(), "two calls: ambiguous");
        drop(rx_b);
        assert!(relays.sole().is_some(), "a closed sink does not count");
        drop(first);
        drop(second);
        assert!(relays.by_token(&token(1)).is_none());
        assert!(relays.sole().is_none());
    }

    /// A request is in flight from before it is sent: a server that asks its caller something
    /// as soon as it reads the request finds the call, though rmcp has not yet said which
    /// token and id it has.
    #[test]
    fn requests_of_one_caller_count_as_one_call() {
        // A task's `tools/call`, kept for its progress, and the `tasks/result` waiting for it.
        let relays = Arc::new(Relays::default());
        let (sink, mut upcalls) = mpsc::unbounded_channel();
        let _created = relays.register(token(1), RequestId::Number(1), Some(sink.clone()));
        let _waiting = relays.register(token(2), RequestId::Number(2), Some(sink));
        let (tx, _rx) = oneshot::channel();
        relays
            .sole()
            .expect("one caller")
            .send(Upcall::Request {
                kind: UpcallKind::Elicitation,
                params: serde_json::Value::Null,
                reply: tx,
            })
            .unwrap();
        assert!(matches!(upcalls.try_recv(), Ok(Upcall::Request { .. })));
        relays.progress(note(1, 3.0));
        assert_eq!(
            seen(&mut upcalls),
            [3.0],
            "the first request's progress still arrives"
        );
        // Another caller's call makes it ambiguous again; so does an unrelayed one.
        let (other, _rx_other) = mpsc::unbounded_channel();
        let third = relays.register(token(3), RequestId::Number(3), Some(other));
        assert!(relays.sole().is_none());
        drop(third);
        let _unrelayed = relays.register(token(4), RequestId::Number(4), None);
        assert!(relays.sole().is_none());
    }

    #[test]
    fn a_call_being_sent_already_takes_the_servers_requests() {
        let relays = Arc::new(Relays::default());
        let (sink, mut upcalls) = mpsc::unbounded_channel();
        let reserved = relays.reserve(Some(sink));
        assert!(relays.sole().is_some());
        assert!(
            relays.by_request(&RequestId::Number(4)).is_some(),
            "on the stream of a request not yet known: the one call being sent"
        );
        relays.progress(note(4, 1.0));
        relays.assign(&reserved, token(4), RequestId::Number(4));
        assert_eq!(
            seen(&mut upcalls),
            [1.0],
            "early progress goes to it once assigned"
        );
        assert!(relays.by_request(&RequestId::Number(4)).is_some());
        assert!(
            relays.by_request(&RequestId::Number(5)).is_none(),
            "another request's stream, once every call is known"
        );
        drop(reserved);
        assert!(relays.sole().is_none());
    }

    fn note(token: i64, progress: f64) -> ProgressNotificationParam {
        ProgressNotificationParam::new(ProgressToken(NumberOrString::Number(token)), progress)
    }

    fn seen(upcalls: &mut mpsc::UnboundedReceiver<Upcall>) -> Vec<f64> {
        let mut seen = Vec::new();
        while let Ok(Upcall::Progress { progress, .. }) = upcalls.try_recv() {
            seen.push(progress);
        }
        seen
    }

    /// A server may answer before the caller has registered its request (the caller's thread
    /// descheduled right after rmcp queued the request: the first of three progress
    /// notifications went missing in 3 of 100 calls through `serve --http`).
    #[test]
    fn progress_that_comes_before_its_call_registers_goes_to_it_first() {
        let relays = Arc::new(Relays::default());
        relays.progress(note(1, 0.0));
        relays.progress(note(2, 5.0));
        relays.progress(note(1, 50.0));
        let (sink, mut upcalls) = mpsc::unbounded_channel();
        let _first = relays.register(token(1), RequestId::Number(1), Some(sink));
        relays.progress(note(1, 100.0));
        assert_eq!(seen(&mut upcalls), [0.0, 50.0, 100.0]);
        // Another token's early progress stays for its own call; a sinkless call drops it.
        let (sink, mut other) = mpsc::unbounded_channel();
        let _second = relays.register(token(2), RequestId::Number(2), Some(sink));
        assert_eq!(seen(&mut other), [5.0]);
        relays.progress(note(3, 1.0));
        let _quiet = relays.register(token(3), RequestId::Number(3), None);
        relays.progress(note(3, 2.0));
        assert!(lock(&relays.early).is_empty());
        // What nobody registers is kept within bounds.
        for n in 0..100 {
            relays.progress(note(100 + n, 1.0));
        }
        assert_eq!(lock(&relays.early).len(), EARLY_MAX);
    }

    #[test]
    fn a_call_without_a_sink_counts_as_in_flight_but_takes_nothing() {
        let relays = Arc::new(Relays::default());
        let quiet = relays.register(token(1), RequestId::Number(1), None);
        assert!(
            relays.by_token(&token(1)).is_none(),
            "no sink: progress is dropped"
        );
        assert!(
            relays.sole().is_none(),
            "the one call in flight takes nothing"
        );
        let (a, _rx_a) = mpsc::unbounded_channel();
        let relayed = relays.register(token(2), RequestId::Number(2), Some(a));
        assert!(
            relays.sole().is_none(),
            "two calls in flight: a server request is not given to the relayed one"
        );
        drop(quiet);
        assert!(relays.sole().is_some());
        drop(relayed);
    }
}
