//! `Root`: a folder this host offers servers as a root (`roots/list`), and the process-wide list
//! every session answers with. Empty unless a host sets it: servers then keep the folders their
//! own arguments name (the filesystem server replaces its allowed folders with any roots it is
//! given, so offering the working folder unasked would take the others away).
// Roots are deprecated by SEP-2577 in rmcp 3.x but answered on every revision that asks.
#![allow(deprecated)]

use std::path::Path;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use rmcp::model::ListRootsResult;
use tokio::sync::Notify;

/// One root as servers see it: a `file://` URI and a name for people.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Root {
    /// The folder's `file://` URI.
    pub uri: String,
    /// The folder's own name, if it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl Root {
    /// The root for folder `path`, which must be absolute; `None` for a relative path.
    pub fn folder(path: &Path) -> Option<Root> {
        let uri = url::Url::from_file_path(path).ok()?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .filter(|n| !n.is_empty());
        Some(Root {
            uri: uri.to_string(),
            name,
        })
    }
}

/// How long after answering `roots/list` with some roots a server is taken to be still
/// applying them: servers take roots in asynchronously (the filesystem server resolves each
/// folder first), and a call that arrives before they are applied is refused.
pub(crate) const SETTLE: Duration = Duration::from_millis(150);

/// How long [`crate::Sessions::set_roots`] waits for a server that asked for roots before to
/// ask again once told they changed.
pub(crate) const ASK_AGAIN: Duration = Duration::from_secs(2);

/// When a session's server last asked for roots, and when it was last given some.
#[derive(Default)]
pub(crate) struct Answered {
    times: Mutex<Times>,
    asked: Notify,
}

#[derive(Clone, Copy, Default)]
struct Times {
    asked: Option<Instant>,
    given: Option<Instant>,
}

impl Answered {
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

/// The answer to `roots/list`.
pub(crate) fn listing() -> ListRootsResult {
    ListRootsResult::new(
        roots()
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
    fn a_folder_becomes_a_file_uri_with_its_name() {
        let root = Root::folder(Path::new("/home/ana/my project")).unwrap();
        assert_eq!(root.uri, "file:///home/ana/my%20project");
        assert_eq!(root.name.as_deref(), Some("my project"));
        assert_eq!(
            Root::folder(Path::new("/")).unwrap(),
            Root {
                uri: "file:///".into(),
                name: None
            }
        );
        assert!(Root::folder(Path::new("relative/dir")).is_none());
    }
}
