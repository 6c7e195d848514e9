//! Roots per server: a server whose spec gives it roots of its own is offered those, and keeps
//! them when the roots every other server is offered change. Checked on the reference
//! "everything" server, whose `get-roots-list` says what it was given. (A binary of its own:
//! the process's roots are one list, which the other session tests must not see change.)

mod common;

use std::path::Path;
use std::time::Duration;

use common::{args, eventually, everything};
use serde_json::json;
use switchboard_mcp::{Root, Sessions, configure_roots};

fn root(dir: &Path) -> Root {
    Root::folder(&std::fs::canonicalize(dir).unwrap()).unwrap()
}

/// What `server`'s `get-roots-list` says, once it lists the tool (it adds it just after it
/// starts, for a client that declared roots) and its text has `wanted`.
async fn seen(sessions: &Sessions, server: &str, wanted: &str) -> String {
    eventually(
        Duration::from_secs(30),
        &format!("{wanted} at {server}"),
        || async {
            let result = sessions
                .call_tool(server, "get-roots-list", args(json!({})))
                .await
                .ok()?;
            let text = result.joined_text();
            text.contains(wanted).then_some(text)
        },
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_with_roots_of_its_own_keeps_them_when_the_others_change() {
    let (shared, own, later) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    let (shared, own, later) = (root(shared.path()), root(own.path()), root(later.path()));
    configure_roots(vec![shared.clone()]);
    let mut spec = everything("own");
    spec.roots = Some(vec![own.clone()]);
    let sessions = Sessions::start(vec![everything("plain"), spec]).await;

    let plain = seen(&sessions, "plain", &shared.uri).await;
    assert!(!plain.contains(&own.uri), "{plain}");
    let mine = seen(&sessions, "own", &own.uri).await;
    assert!(!mine.contains(&shared.uri), "{mine}");

    // The roots everyone else is offered change: the plain server is told and asks again; the
    // one with its own keeps them.
    assert!(sessions.set_roots(vec![later.clone()]).await);
    let plain = seen(&sessions, "plain", &later.uri).await;
    assert!(!plain.contains(&shared.uri), "{plain}");
    let mine = seen(&sessions, "own", &own.uri).await;
    assert!(
        !mine.contains(&later.uri) && !mine.contains(&shared.uri),
        "{mine}"
    );
    sessions.shutdown().await;
}
