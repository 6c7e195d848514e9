//! The roots this host offers servers (`roots/list`): the process-wide list every session
//! answers with, unless its server's spec gives it roots of its own ([`Root`] itself is
//! `switchboard_core`'s). Empty unless a host sets it: servers then keep the folders their own
//! arguments name (the filesystem server replaces its allowed folders with any roots it is
//! given, so offering the working folder unasked would take the others away).
// Roots are deprecated by SEP-2577 in rmcp 3.x but answered on every revision that asks.
#![allow(deprecated)]

use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use rmcp::model::ListRootsResult;
use tokio::sync::Notify;

pub use switchboard_core::Root;

/// How long after answering `roots/list` with some roots a server is taken to be still
/// applying them: servers take roots in asynchronously (the filesystem server resolves each
/// folder first), and a call that arrives before they are applied is refused.
pub(crate) const SETTLE: Duration = Duration::from_millis(150);

/// How long [`crate::Sessions::set_roots`] waits for a server that asked for roots before to
/// ask again once told they changed.
pub(crate) const ASK_AGAIN: Duration = Duration::from_secs(2);

/// The roots one server is offered, and when it last asked for them and was last given some.
#[derive(Default)]
pub(crate) struct Offer {
    /// The server's own roots (its spec's), in place of the process's list.
    own: Option<Arc<Vec<Root>>>,
    times: Mutex<Times>,
    asked: Notify,
}

#[derive(Clone, Copy, Default)]
struct Times {
    asked: Option<Instant>,
    given: Option<Instant>,
}

impl Offer {
    /// The offer to a server whose spec says `own` (`None`: the process's list).
    pub(crate) fn new(own: Option<Vec<Root>>) -> Offer {
        Offer {
            own: own.map(Arc::new),
            ..Offer::default()
        }
    }

    /// Whether the server has roots of its own, which the process's list does not change.
    pub(crate) fn is_own(&self) -> bool {
        self.own.is_some()
    }

    /// The roots in force for this server.
    pub(crate) fn roots(&self) -> Arc<Vec<Root>> {
        match &self.own {
            Some(own) => own.clone(),
            None => roots(),
        }
    }

    /// The answer to this server's `roots/list`.
    pub(crate) fn listing(&self) -> ListRootsResult {
        listing(&self.roots())
    }

    fn times(&self) -> Times {
        *self.times.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Note an answer given now (`some`: with at least one root).
    pub(crate) fn note(&self, some: bool) {
        let now = Instant::now();
        {
            let mut times = self.times.lock().unwrap_or_else(|e| e.into_inner());
            times.asked = Some(now);
            if some {
                times.given = Some(now);
            }
        }
        self.asked.notify_waiters();
    }

    /// Whether the server has ever asked for roots.
    pub(crate) fn has_asked(&self) -> bool {
        self.times().asked.is_some()
    }

    /// Wait until the server asks for roots at `since` or later, for at most `limit` from
    /// `since`; says whether it did.
    pub(crate) async fn asked_since(&self, since: Instant, limit: Duration) -> bool {
        let deadline = since + limit;
        loop {
            let asked = self.asked.notified();
            tokio::pin!(asked);
            // Registered before the check, so an answer in between still wakes it.
            asked.as_mut().enable();
            if self.times().asked.is_some_and(|at| at >= since) {
                return true;
            }
            if tokio::time::timeout_at(deadline.into(), asked)
                .await
                .is_err()
            {
                return false;
            }
        }
    }

    /// Wait until [`SETTLE`] has passed since roots were last given (at once when it has, or
    /// when none were).
    pub(crate) async fn settled(&self) {
        if let Some(at) = self.times().given {
            tokio::time::sleep_until((at + SETTLE).into()).await;
        }
    }
}

static ROOTS: RwLock<Option<Arc<Vec<Root>>>> = RwLock::new(None);

/// Set the roots every session of this process offers from now on; says whether they changed.
/// Sessions already open are not told: [`crate::Sessions::set_roots`] also tells them.
pub fn configure_roots(roots: Vec<Root>) -> bool {
    let mut slot = ROOTS.write().unwrap_or_else(|e| e.into_inner());
    let changed = slot
        .as_deref()
        .map_or(!roots.is_empty(), |old| *old != roots);
    *slot = Some(Arc::new(roots));
    changed
}

/// The roots in force.
pub fn roots() -> Arc<Vec<Root>> {
    let slot = ROOTS.read().unwrap_or_else(|e| e.into_inner());
    slot.clone().unwrap_or_default()
}

/// The answer to `roots/list` offering `roots`.
fn listing(roots: &[Root]) -> ListRootsResult {
    ListRootsResult::new(
        roots
            .iter()
            .map(|r| {
                let root = rmcp::model::Root::new(r.uri.clone());
                match &r.name {
                    Some(name) => root.with_name(name.clone()),
                    None => root,
                }
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_with_roots_of_its_own_is_offered_those() {
        let own = Root::folder(std::path::Path::new("/srv/own")).unwrap();
        let offer = Offer::new(Some(vec![own.clone()]));
        assert!(offer.is_own());
        assert_eq!(*offer.roots(), vec![own]);
        assert_eq!(offer.listing().roots[0].uri, "file:///srv/own");
        let none = Offer::new(Some(Vec::new()));
        assert!(none.is_own() && none.listing().roots.is_empty());
        assert!(!Offer::new(None).is_own());
    }
}
