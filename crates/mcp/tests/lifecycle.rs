//! Session lifecycle against server-everything: a server killed mid-call, bad entries beside a
//! good one, list_changed updating the catalog, per-call timeouts, and a shutdown that leaves
//! no child process behind.

mod common;

use std::net::TcpListener;
use std::time::{Duration, Instant};

use common::{HttpEverything, alive, args, assert_ready, eventually, everything, free_port, kill};
use serde_json::json;
use switchboard_core::ServerSpec;
use switchboard_mcp::{ServerState, SessionError, Sessions};

#[tokio::test]
async fn a_server_killed_mid_call_fails_the_call_and_is_respawned() {
    let sessions = Sessions::start(vec![everything("victim")]).await;
    assert_ready(&sessions, "victim");
    let pid = sessions
        .child_pid("victim")
        .expect("stdio server has a pid");

    let caller = sessions.clone();
    let call = tokio::spawn(async move {
        let started = Instant::now();
        let r = caller
            .call_tool(
                "victim",
                "trigger-long-running-operation",
                args(json!({"duration": 5, "steps": 5})),
            )
            .await;
        (r, started.elapsed())
    });
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert!(!call.is_finished(), "the long call should still be running");
    let killed_at = Instant::now();
    kill(pid);
    let (result, _) = tokio::time::timeout(Duration::from_secs(3), call)
        .await
        .expect("the in-flight call must end within 3 s of the kill")
        .unwrap();
    let ended_after = killed_at.elapsed();
    match result {
        Err(e @ SessionError::Closed { .. }) => {
            assert_eq!(e.server(), "victim");
            assert!(e.to_string().contains("victim"), "{e}");
        }
        other => panic!("expected SessionError::Closed, got {other:?}"),
    }
    assert!(ended_after < Duration::from_secs(3), "{ended_after:?}");

    // The supervisor respawns it; a new call then succeeds on a new process.
    eventually(Duration::from_secs(10), "victim to be ready again", || {
        let s = sessions.clone();
        async move {
            let status = s.statuses().into_iter().next()?;
            (status.state == ServerState::Ready && s.child_pid("victim") != Some(pid)).then_some(())
        }
    })
    .await;
    let new_pid = sessions.child_pid("victim").unwrap();
    assert_ne!(new_pid, pid);
    assert!(!alive(pid), "the killed process is reaped");
    let r = sessions
        .call_tool("victim", "echo", args(json!({"message": "again"})))
        .await
        .unwrap();
    assert_eq!(r.joined_text(), "Echo: again");
    sessions.shutdown().await;
    assert!(!alive(new_pid));
}

#[tokio::test]
async fn a_server_that_cannot_be_respawned_is_given_up_on() {
    // Starts once; every respawn prints a reason and exits, as a server whose config broke would.
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("started-once");
    let js = switchboard_test_support::peers::peer("everything");
    let node = switchboard_test_support::peers::node();
    let script = format!(
        "if [ -e '{m}' ]; then echo 'refusing to start twice' >&2; exit 1; fi; touch '{m}'; exec '{node}' '{js}' stdio",
        m = marker.display(),
        js = js.display(),
    );
    let spec = ServerSpec::stdio("flaky", "sh", vec!["-c".into(), script]);
    let sessions = Sessions::start(vec![spec, everything("steady")]).await;
    assert_ready(&sessions, "flaky");
    let generation = sessions.generation();
    kill(sessions.child_pid("flaky").unwrap());

    // Backoff 250 ms, 500 ms, 1 s, 2 s, 4 s: five failed respawns, then Failed.
    let reason = eventually(Duration::from_secs(20), "flaky to be given up on", || {
        let s = sessions.clone();
        async move {
            match s.statuses().into_iter().next()?.state {
                ServerState::Failed { reason } => Some(reason),
                _ => None,
            }
        }
    })
    .await;
    assert!(reason.contains("gave up after 5 restarts"), "{reason}");
    assert!(reason.contains("refusing to start twice"), "{reason}");
    let catalog = sessions.catalog();
    assert!(
        !catalog.servers.contains_key("flaky"),
        "a given-up server leaves the catalog"
    );
    assert!(catalog.servers.contains_key("steady"));
    assert!(sessions.generation() > generation);
    assert_ready(&sessions, "steady");
    sessions.shutdown().await;
}

#[tokio::test]
async fn an_http_server_that_dies_fails_its_call_and_is_reconnected_when_back() {
    let port = free_port();
    let server = HttpEverything::start(port).await;
    let sessions = Sessions::start(vec![ServerSpec::http(
        "web",
        format!("http://127.0.0.1:{port}/mcp"),
    )])
    .await;
    assert_ready(&sessions, "web");

    let caller = sessions.clone();
    let call = tokio::spawn(async move {
        caller
            .call_tool(
                "web",
                "trigger-long-running-operation",
                args(json!({"duration": 5, "steps": 5})),
            )
            .await
    });
    tokio::time::sleep(Duration::from_millis(500)).await;
    drop(server);
    // rmcp re-opens the broken response stream a bounded number of times (about 4 s), then
    // the call ends as Closed instead of waiting out its 60 s timeout.
    let result = tokio::time::timeout(Duration::from_secs(8), call)
        .await
        .expect("the in-flight call must end well before its timeout")
        .unwrap();
    assert!(
        matches!(&result, Err(SessionError::Closed { server, .. }) if server == "web"),
        "{result:?}"
    );

    // The server comes back on the same port; the supervisor reconnects with a new session.
    let _server = HttpEverything::start(port).await;
    eventually(Duration::from_secs(15), "web to be ready again", || {
        let s = sessions.clone();
        async move {
            let r = s
                .call_tool("web", "echo", args(json!({"message": "back"})))
                .await
                .ok()?;
            Some(r.joined_text()).filter(|t| t == "Echo: back")
        }
    })
    .await;
    assert_ready(&sessions, "web");
    sessions.shutdown().await;
}

#[tokio::test]
async fn bad_entries_fail_alone_with_specific_reasons() {
    // A port nothing listens on: bind, note it, close it.
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let mut closed = ServerSpec::http("closed", format!("http://127.0.0.1:{port}/mcp"));
    closed.startup_timeout = Duration::from_secs(10);
    let missing = ServerSpec::stdio("missing", "switchboard-no-such-command-x", vec![]);
    let crashing = ServerSpec::stdio(
        "crashing",
        "sh",
        vec![
            "-c".into(),
            "echo 'fatal: config file unreadable' >&2; exit 3".into(),
        ],
    );
    let started = Instant::now();
    // A second "good" would be unreachable by name; it must be refused, not started.
    let duplicate = ServerSpec::stdio("good", "switchboard-no-such-command-y", vec![]);
    let sessions = Sessions::start(vec![
        missing,
        everything("good"),
        closed,
        crashing,
        duplicate,
    ])
    .await;
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "failures are reported promptly"
    );

    let statuses = sessions.statuses();
    let names: Vec<&str> = statuses.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        ["missing", "good", "closed", "crashing", "good"],
        "config order"
    );
    let reason = |i: usize| match &statuses[i].state {
        ServerState::Failed { reason } => reason.clone(),
        other => panic!("{} should have failed, is {other:?}", statuses[i].name),
    };
    assert_eq!(
        reason(0),
        "spawn failed: command \"switchboard-no-such-command-x\" not found"
    );
    assert_eq!(statuses[1].state, ServerState::Ready);
    let closed_reason = reason(2);
    assert!(
        closed_reason.starts_with(&format!("connect failed: http://127.0.0.1:{port}/mcp"))
            && closed_reason.to_lowercase().contains("refused"),
        "{closed_reason}"
    );
    let crash_reason = reason(3);
    assert!(
        crash_reason.contains("fatal: config file unreadable"),
        "{crash_reason}"
    );
    assert!(
        reason(4).contains("already named \"good\""),
        "{}",
        reason(4)
    );
    assert_eq!(
        statuses[3].stderr_tail,
        vec!["fatal: config file unreadable".to_string()]
    );

    // Only the good server is in the catalog; calls to the others say why.
    let catalog = sessions.catalog();
    assert_eq!(catalog.servers.keys().collect::<Vec<_>>(), ["good"]);
    match sessions.call_tool("missing", "x", args(json!({}))).await {
        Err(SessionError::NotReady { server, reason }) => {
            assert_eq!(server, "missing");
            assert!(reason.contains("not found"), "{reason}");
        }
        other => panic!("expected NotReady, got {other:?}"),
    }
    assert!(matches!(
        sessions.call_tool("nobody", "x", args(json!({}))).await,
        Err(SessionError::UnknownServer { .. })
    ));
    let r = sessions
        .call_tool("good", "echo", args(json!({"message": "still here"})))
        .await
        .unwrap();
    assert_eq!(r.joined_text(), "Echo: still here");
    sessions.shutdown().await;
}

#[tokio::test]
async fn list_changed_updates_the_catalog_and_generation() {
    let sessions = Sessions::start(vec![everything("e")]).await;
    assert_ready(&sessions, "e");
    // The client declares roots, sampling and elicitation, so the server registers its
    // conditional tools (and announces them with tools/list_changed).
    let names: Vec<String> = sessions
        .catalog()
        .tools()
        .map(|(_, t)| t.def.name.clone())
        .collect();
    for want in [
        "get-roots-list",
        "trigger-sampling-request",
        "trigger-elicitation-request",
    ] {
        assert!(names.iter().any(|n| n == want), "no {want}: {names:?}");
    }
    let before = sessions.generation();
    assert!(before >= 1);
    let resources_before = sessions.catalog().servers["e"].resources.len();

    // Registering a session resource makes the server send resources/list_changed.
    let mut watch = sessions.watch_generation();
    watch.borrow_and_update();
    let r = sessions
        .call_tool(
            "e",
            "gzip-file-as-resource",
            args(json!({"name": "switchboard.txt.gz", "data": "data:text/plain;base64,aGVsbG8gc3dpdGNoYm9hcmQ="})),
        )
        .await
        .unwrap();
    assert!(!r.is_error, "{r:?}");
    tokio::time::timeout(Duration::from_secs(5), watch.changed())
        .await
        .expect("a new generation is published after list_changed")
        .unwrap();
    let after = *watch.borrow();
    assert!(after > before, "generation {before} -> {after}");
    assert_eq!(sessions.generation(), after);
    let catalog = sessions.catalog();
    let resources = &catalog.servers["e"].resources;
    assert_eq!(resources.len(), resources_before + 1);
    assert!(
        resources.iter().any(|r| r.def.name == "switchboard.txt.gz"),
        "{resources:?}"
    );

    // The burst of list_changed notifications right after initialize changed nothing, so it
    // must not have bumped the generation past the first listing plus this one change.
    assert_eq!(after, 2, "generation counts real changes only");
    sessions.shutdown().await;
}

#[tokio::test]
async fn a_call_timeout_ends_the_call_quickly() {
    let sessions = Sessions::start(vec![everything("slow")]).await;
    assert_ready(&sessions, "slow");
    let started = Instant::now();
    let r = sessions
        .call_tool_with_timeout(
            "slow",
            "trigger-long-running-operation",
            args(json!({"duration": 5, "steps": 5})),
            Duration::from_millis(500),
        )
        .await;
    let took = started.elapsed();
    match r {
        Err(SessionError::Timeout {
            server,
            tool,
            after,
            stray,
            ..
        }) => {
            assert_eq!(
                stray, None,
                "server-everything answers under the ids it was sent"
            );
            assert_eq!(server, "slow");
            assert_eq!(tool, "trigger-long-running-operation");
            assert_eq!(after, Duration::from_millis(500));
        }
        other => panic!("expected a timeout, got {other:?}"),
    }
    assert!(took < Duration::from_millis(1500), "took {took:?}");
    // The session survives a timed-out call.
    let r = sessions
        .call_tool("slow", "echo", args(json!({"message": "ok"})))
        .await
        .unwrap();
    assert_eq!(r.joined_text(), "Echo: ok");
    sessions.shutdown().await;
}

#[tokio::test]
async fn shutdown_leaves_no_child_process() {
    // Shell wrappers show the process-group kill: the server is a grandchild of ours.
    let js = switchboard_test_support::peers::peer("everything");
    let node = switchboard_test_support::peers::node();
    let wrapped = ServerSpec::stdio(
        "wrapped",
        "sh",
        vec![
            "-c".into(),
            format!("'{node}' '{}' stdio; echo exited", js.display()),
        ],
    );
    // The fixture server exits as soon as its stdin closes, so this group is not killed for
    // being slow to exit; the background `sleep` it leaves behind must still be cleaned up.
    let leaky = ServerSpec::stdio(
        "leaky",
        "sh",
        vec![
            "-c".into(),
            format!(
                "sleep 300 </dev/null & exec '{node}' '{}'",
                fixture().display()
            ),
        ],
    );
    let names = ["a", "b", "wrapped", "leaky"];
    let sessions = Sessions::start(vec![everything("a"), everything("b"), wrapped, leaky]).await;
    for name in names {
        assert_ready(&sessions, name);
    }
    let pids: Vec<u32> = names
        .iter()
        .map(|n| sessions.child_pid(n).expect("pid"))
        .collect();
    let mut grandchildren = children_of(pids[2]);
    assert!(!grandchildren.is_empty(), "sh should have spawned node");
    let leaked = children_of(pids[3]);
    assert_eq!(
        leaked.len(),
        1,
        "sh should have left sleep behind: {leaked:?}"
    );
    grandchildren.extend(leaked);
    assert!(pids.iter().chain(&grandchildren).all(|p| alive(*p)));

    let started = Instant::now();
    sessions.shutdown().await;
    let took = started.elapsed();
    assert!(took < Duration::from_secs(3), "shutdown took {took:?}");
    for pid in pids.iter().chain(&grandchildren) {
        assert!(
            !alive(*pid),
            "process {pid} survived shutdown: {:?}",
            std::fs::read_to_string(format!("/proc/{pid}/cmdline"))
        );
    }
    assert!(sessions.statuses().iter().all(|s| !s.state.is_ready()));
    assert!(matches!(
        sessions
            .call_tool("a", "echo", args(json!({"message": "x"})))
            .await,
        Err(SessionError::NotReady { .. })
    ));
}

#[test]
fn dropping_sessions_and_runtime_without_shutdown_still_kills_the_children() {
    // The abrupt end of a program: no shutdown, and the runtime goes away right after, so the
    // supervisors never get to close anything themselves.
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (sessions, pids) = runtime.block_on(async {
        let sessions = Sessions::start(vec![everything("a"), paged_server("b")]).await;
        assert_ready(&sessions, "a");
        assert_ready(&sessions, "b");
        let pids = [
            sessions.child_pid("a").unwrap(),
            sessions.child_pid("b").unwrap(),
        ];
        (sessions, pids)
    });
    let clone = sessions.clone();
    drop(sessions);
    assert!(
        pids.iter().all(|p| alive(*p)),
        "a clone keeps the sessions alive"
    );
    drop(clone);
    drop(runtime);
    let deadline = Instant::now() + Duration::from_secs(2);
    while pids.iter().any(|p| alive(*p)) {
        assert!(
            Instant::now() < deadline,
            "children outlived their Sessions: {pids:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Pids whose parent is `pid` (from /proc/<pid>/task/*/children).
fn children_of(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    let tasks = std::path::Path::new("/proc")
        .join(pid.to_string())
        .join("task");
    for task in std::fs::read_dir(tasks).into_iter().flatten().flatten() {
        if let Ok(text) = std::fs::read_to_string(task.path().join("children")) {
            out.extend(
                text.split_whitespace()
                    .filter_map(|p| p.parse::<u32>().ok()),
            );
        }
    }
    out
}

fn fixture() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/paged-server.mjs")
}

fn paged_server(name: &str) -> ServerSpec {
    ServerSpec::stdio(
        name,
        switchboard_test_support::peers::node(),
        vec![fixture().display().to_string()],
    )
}

/// A server that initializes but cannot list its tools fails with a reason that says so, not
/// as a failed `initialize`.
#[tokio::test]
async fn a_failing_tools_list_is_reported_as_such() {
    let mut spec = paged_server("listless");
    if let switchboard_core::TransportSpec::Stdio { args, .. } = &mut spec.transport {
        args.push("--fail-tools-list".into());
    }
    let sessions = Sessions::start(vec![spec]).await;
    let statuses = sessions.statuses();
    let ServerState::Failed { reason } = &statuses[0].state else {
        panic!("listless should have failed: {:?}", statuses[0].state);
    };
    assert_eq!(
        reason,
        "initialized, but listing failed: tools/list answered error -32603: tool registry offline"
    );
    sessions.shutdown().await;
}

#[tokio::test]
async fn too_deep_and_malformed_results_fail_at_once_and_say_why() {
    let sessions = Sessions::start(vec![paged_server("paged")]).await;
    assert_ready(&sessions, "paged");
    // Regression: a result nested 200 levels deep could not be decoded, was dropped, and the
    // call waited for its timeout.
    let started = Instant::now();
    let r = sessions
        .call_tool_with_timeout("paged", "deep", args(json!({})), Duration::from_secs(20))
        .await;
    match r {
        Err(SessionError::Rpc { code, message, .. }) => {
            assert_eq!(code, -32700);
            assert!(message.contains("levels deep"), "{message}");
        }
        other => panic!("expected a parse error, got {other:?}"),
    }
    assert!(started.elapsed() < Duration::from_secs(10));
    // Regression: `{"content": "not a list"}` read as an empty, successful result.
    match sessions
        .call_tool("paged", "malformed", args(json!({})))
        .await
    {
        Err(SessionError::Protocol { detail, .. }) => {
            assert!(detail.contains("not a tool result"), "{detail}");
            assert!(detail.contains("not a list"), "{detail}");
        }
        other => panic!("expected a protocol error, got {other:?}"),
    }
    // The session is still good for the next call.
    let r = sessions
        .call_tool("paged", "echo", args(json!({})))
        .await
        .unwrap();
    assert_eq!(r.joined_text(), "paged echo");
    sessions.shutdown().await;
}

#[tokio::test]
async fn every_page_is_listed_and_odd_replies_are_handled() {
    let sessions = Sessions::start(vec![paged_server("paged")]).await;
    assert_ready(&sessions, "paged");
    let catalog = sessions.catalog();
    let listed = &catalog.servers["paged"];
    // 27 tool definitions in pages of 10, 23 resources in pages of 5, 12 prompts in pages of 5.
    // Of the tools, one without inputSchema is kept (with the default schema) and one with a
    // numeric name is skipped with a warning; the rest are unaffected.
    let tools: Vec<&str> = listed.tools.iter().map(|t| t.def.name.as_str()).collect();
    assert_eq!(tools.len(), 26, "{tools:?}");
    assert_eq!(tools.first(), Some(&"tool-0"));
    assert_eq!(tools.last(), Some(&"no-schema"));
    assert_eq!(listed.tools[25].def.input_schema, json!({"type": "object"}));
    assert_eq!(listed.resources.len(), 23);
    assert_eq!(listed.prompts.len(), 12);
    // resources/templates/list is missing ("method not found"): the server offers none, which
    // is neither a failed server nor worth a warning on every command.
    assert!(listed.resource_templates.is_empty());
    let status = &sessions.statuses()[0];
    assert!(
        !status
            .warnings
            .iter()
            .any(|w| w.contains("resources/templates/list")),
        "{:?}",
        status.warnings
    );

    // A JSON-RPC error is an Rpc error with its code and message.
    match sessions.call_tool("paged", "fail", args(json!({}))).await {
        Err(SessionError::Rpc {
            server,
            code,
            message,
            ..
        }) => {
            assert_eq!(
                (server.as_str(), code, message.as_str()),
                ("paged", -32000, "boom")
            );
        }
        other => panic!("expected Rpc, got {other:?}"),
    }
    // Content blocks core does not model are kept as a described text block.
    let r = sessions
        .call_tool("paged", "weird", args(json!({})))
        .await
        .unwrap();
    assert_eq!(r.content.len(), 2);
    assert!(r.joined_text().contains("hologram"), "{r:?}");
    assert_eq!(r.structured_content, Some(json!({"ok": true})));

    // A timed-out call is cancelled on the wire: the server sees notifications/cancelled.
    let r = sessions
        .call_tool_with_timeout("paged", "hang", args(json!({})), Duration::from_millis(200))
        .await;
    assert!(matches!(r, Err(SessionError::Timeout { .. })), "{r:?}");
    eventually(
        Duration::from_secs(3),
        "the server to log the cancellation",
        || {
            let s = sessions.clone();
            async move {
                s.statuses()[0]
                    .stderr_tail
                    .iter()
                    .any(|l| l.starts_with("cancelled request"))
                    .then_some(())
            }
        },
    )
    .await;
    // A caller that stops waiting (its future dropped) cancels the request on the wire too.
    let caller = sessions.clone();
    let abandoned =
        tokio::spawn(async move { caller.call_tool("paged", "hang", args(json!({}))).await });
    tokio::time::sleep(Duration::from_millis(200)).await;
    abandoned.abort();
    eventually(
        Duration::from_secs(3),
        "the server to log the abandonment",
        || {
            let s = sessions.clone();
            async move {
                s.statuses()[0]
                    .stderr_tail
                    .iter()
                    .any(|l| l.contains("abandoned by the caller"))
                    .then_some(())
            }
        },
    )
    .await;
    let r = sessions
        .call_tool("paged", "echo", args(json!({})))
        .await
        .unwrap();
    assert_eq!(r.joined_text(), "paged echo");
    sessions.shutdown().await;
}

/// A reconfiguration keeps unchanged servers running (same process), starts new ones, closes
/// removed ones (their tools leave the catalog at once, their processes go), restarts changed
/// ones from the new spec, and retries one that had failed.
#[tokio::test]
async fn reconfigure_keeps_unchanged_servers_and_starts_stops_and_restarts_the_rest() {
    let broken = ServerSpec::stdio("broken", "/nonexistent/switchboard-test-server", vec![]);
    let sessions = Sessions::start(vec![everything("keep"), everything("gone"), broken]).await;
    assert_ready(&sessions, "keep");
    assert_ready(&sessions, "gone");
    let keep_pid = sessions.child_pid("keep").expect("pid");
    let gone_pid = sessions.child_pid("gone").expect("pid");
    let generation = sessions.generation();

    let mut changed = everything("keep");
    changed.call_timeout = Duration::from_secs(7);
    let outcome = sessions.reconfigure(vec![
        everything("keep"),
        paged_server("new"),
        ServerSpec::stdio("broken", "/nonexistent/switchboard-test-server", vec![]),
    ]);
    assert_eq!(outcome.kept, ["keep"]);
    assert_eq!(outcome.started, ["new"]);
    assert_eq!(outcome.stopped, ["gone"]);
    assert_eq!(outcome.restarted, ["broken"], "a failed server is retried");
    // The removed server's tools leave at once, before its process is gone.
    assert!(!sessions.catalog().servers.contains_key("gone"));
    assert!(sessions.generation() > generation);
    assert!(matches!(
        sessions
            .call_tool("gone", "echo", args(json!({"message": "x"})))
            .await,
        Err(SessionError::UnknownServer { .. })
    ));
    eventually(Duration::from_secs(20), "the new server ready", || async {
        sessions.catalog().servers.contains_key("new").then_some(())
    })
    .await;
    eventually(
        Duration::from_secs(5),
        "the removed server's process gone",
        || async { (!alive(gone_pid)).then_some(()) },
    )
    .await;
    assert_eq!(
        sessions.child_pid("keep"),
        Some(keep_pid),
        "kept, not restarted"
    );
    let names: Vec<String> = sessions.statuses().into_iter().map(|s| s.name).collect();
    assert_eq!(
        names,
        ["keep", "new", "broken"],
        "in the new config's order"
    );

    // A changed spec restarts that server only.
    // (A second entry of a name fails alone; the config layer refuses those before this.)
    let outcome = sessions.reconfigure(vec![changed, paged_server("new"), paged_server("new")]);
    assert_eq!(outcome.restarted, ["keep"]);
    assert_eq!(outcome.kept, ["new"]);
    assert_eq!(outcome.stopped, ["broken"]);
    let states: Vec<(String, bool)> = sessions
        .statuses()
        .into_iter()
        .map(|s| (s.name, matches!(s.state, ServerState::Failed { .. })))
        .collect();
    assert_eq!(states[1], ("new".to_string(), false), "{states:?}");
    assert_eq!(states[2], ("new".to_string(), true), "{states:?}");
    let new_pid = eventually(Duration::from_secs(20), "keep restarted", || async {
        sessions.child_pid("keep").filter(|&p| p != keep_pid)
    })
    .await;
    eventually(Duration::from_secs(20), "keep ready again", || async {
        sessions
            .call_tool("keep", "echo", args(json!({"message": "back"})))
            .await
            .ok()
    })
    .await;
    eventually(
        Duration::from_secs(5),
        "the changed server's old process gone",
        || async { (!alive(keep_pid)).then_some(()) },
    )
    .await;
    assert!(alive(new_pid));
    sessions.shutdown().await;
    assert!(!alive(new_pid));
}

/// A plain HTTP server on a free port that answers every request with `status`, `content_type`
/// and `body`: a URL that is not an MCP endpoint.
fn canned_http(status: &'static str, content_type: &'static str, body: &str) -> u16 {
    use std::io::{BufRead, BufReader, Read, Write};
    let body = body.to_string();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let mut reader = BufReader::new(stream);
            let mut length = 0usize;
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" {
                if let Some((name, value)) = line.split_once(':')
                    && name.eq_ignore_ascii_case("content-length")
                {
                    length = value.trim().parse().unwrap_or(0);
                }
                line.clear();
            }
            let mut request_body = vec![0; length];
            let _ = reader.read_exact(&mut request_body);
            let _ = write!(
                reader.get_mut(),
                "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    port
}

#[tokio::test]
async fn a_url_that_is_not_an_mcp_endpoint_says_so_in_plain_words() {
    let html = canned_http(
        "200 OK",
        "text/html; charset=utf-8",
        "<!doctype html><html><body>Please sign in</body></html>",
    );
    let missing = canned_http("404 Not Found", "text/plain", "Not Found");
    // A web server's own error page: many lines, of which the user needs the title.
    let page = canned_http(
        "404 Not Found",
        "text/html",
        &format!(
            "<!DOCTYPE html>\n<html>\n<head><title>404 Not Found</title></head>\n<body>\n{}</body>\n</html>\n",
            "<p>The requested URL was not found on this server.</p>\n".repeat(40)
        ),
    );
    let sse_only = canned_http("405 Method Not Allowed", "text/plain", "Method Not Allowed");
    let unimplemented = canned_http(
        "501 Not Implemented",
        "text/html",
        "<p>Unsupported method</p>",
    );
    let not_rpc = canned_http("200 OK", "application/json", r#"{"status":"ok"}"#);
    let keyed = canned_http(
        "401 Unauthorized",
        "application/json",
        r#"{"error":"missing api key"}"#,
    );
    let spec = |name: &str, port: u16| {
        let mut spec = ServerSpec::http(name, format!("http://127.0.0.1:{port}/mcp"));
        spec.startup_timeout = Duration::from_secs(10);
        spec
    };
    let sessions = Sessions::start(vec![
        spec("html", html),
        spec("missing", missing),
        spec("page", page),
        spec("sse_only", sse_only),
        spec("unimplemented", unimplemented),
        spec("not_rpc", not_rpc),
        spec("keyed", keyed),
    ])
    .await;
    for status in sessions.statuses() {
        if status.name == "keyed" {
            // A 401 without WWW-Authenticate is an endpoint that wants a key, not a wrong URL.
            let reason = status.state.describe();
            assert!(
                reason.contains("HTTP 401")
                    && reason.contains("wants credentials: give its entry the header"),
                "{reason}"
            );
            continue;
        }
        let ServerState::Failed { reason } = &status.state else {
            panic!("{} should have failed: {:?}", status.name, status.state);
        };
        assert!(
            reason.contains("is this the server's MCP endpoint?") && reason.contains("/mcp"),
            "{}: {reason}",
            status.name
        );
        // No Rust Debug forms or rmcp type names in what the user reads.
        assert!(
            !reason.contains("Some(") && !reason.contains("ServerJsonRpcMessage"),
            "{}: {reason}",
            status.name
        );
        if status.name == "html" {
            assert!(reason.contains("text/html; charset=utf-8"), "{reason}");
        }
        if status.name == "page" {
            assert!(
                reason.contains("HTTP 404 Not Found: a web page titled \"404 Not Found\"")
                    && !reason.contains('\n')
                    && !reason.contains("requested URL"),
                "{reason}"
            );
        }
    }
    sessions.shutdown().await;
}

#[tokio::test]
async fn an_http_server_down_longer_than_the_restart_budget_is_reconnected_when_back() {
    // A stdio server that keeps failing is given up on after a few restarts; an HTTP server
    // that was up is someone else's process (redeployed, restarted), and a gateway must pick
    // it up again whenever it is back, not drop its tools for good after about 8 s.
    let port = free_port();
    let server = HttpEverything::start(port).await;
    let sessions = Sessions::start(vec![ServerSpec::http(
        "web",
        format!("http://127.0.0.1:{port}/mcp"),
    )])
    .await;
    assert_ready(&sessions, "web");
    drop(server);
    // A call finds the connection closed, which starts the reconnect attempts.
    let _ = sessions
        .call_tool("web", "echo", args(json!({"message": "gone"})))
        .await;
    tokio::time::sleep(Duration::from_secs(12)).await;
    assert!(
        !matches!(sessions.statuses()[0].state, ServerState::Failed { .. }),
        "{:?}",
        sessions.statuses()[0].state
    );
    let _server = HttpEverything::start(port).await;
    eventually(Duration::from_secs(25), "web to be ready again", || {
        let s = sessions.clone();
        async move {
            let r = s
                .call_tool("web", "echo", args(json!({"message": "back"})))
                .await
                .ok()?;
            Some(r.joined_text()).filter(|t| t == "Echo: back")
        }
    })
    .await;
    assert_ready(&sessions, "web");
    sessions.shutdown().await;
}

/// A legacy HTTP+SSE server written by hand, so it can misbehave: `GET /sse` names `/msg` as
/// its endpoint and keeps the stream; each POST is answered 202 and its answer sent as an
/// event. Tool `boom` is answered with a malformed error, tool `down` with HTTP 500 to its
/// POST; anything else is echoed.
fn legacy_sse_server() -> u16 {
    use std::io::{BufRead, BufReader, Read, Write};
    use std::sync::{Arc, Mutex};
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let events: Arc<Mutex<Option<std::net::TcpStream>>> = Arc::default();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let events = events.clone();
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream);
                let mut first = String::new();
                let _ = reader.read_line(&mut first);
                let mut length = 0usize;
                let mut line = String::new();
                while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" {
                    if let Some((name, value)) = line.split_once(':')
                        && name.eq_ignore_ascii_case("content-length")
                    {
                        length = value.trim().parse().unwrap_or(0);
                    }
                    line.clear();
                }
                let mut out = reader.get_ref().try_clone().unwrap();
                if first.starts_with("GET /sse") {
                    // Kept before the endpoint is named: the client POSTs as soon as it reads it.
                    let mut stream = events.lock().unwrap();
                    let _ = write!(
                        out,
                        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\nevent: endpoint\r\ndata: /msg?s=1\r\n\r\n"
                    );
                    *stream = Some(out);
                    return;
                }
                if !first.starts_with("POST /msg") {
                    let _ = write!(
                        out,
                        "HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
                    );
                    return;
                }
                let mut body = vec![0; length];
                let _ = reader.read_exact(&mut body);
                let message: serde_json::Value =
                    serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null);
                let (id, method) = (
                    message["id"].clone(),
                    message["method"].as_str().unwrap_or(""),
                );
                let tool = message["params"]["name"].as_str().unwrap_or("");
                if method == "tools/call" && tool == "down" {
                    let _ = write!(
                        out,
                        "HTTP/1.1 500 Internal Server Error\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
                    );
                    return;
                }
                let _ = write!(
                    out,
                    "HTTP/1.1 202 Accepted\r\ncontent-length: 8\r\nconnection: close\r\n\r\nAccepted"
                );
                let answer = match method {
                    "initialize" => json!({"jsonrpc": "2.0", "id": id, "result": {
                        "protocolVersion": "2024-11-05", "capabilities": {"tools": {}},
                        "serverInfo": {"name": "hand-sse", "version": "0"}}}),
                    "tools/list" => json!({"jsonrpc": "2.0", "id": id, "result": {"tools": [
                        {"name": "boom", "inputSchema": {"type": "object"}},
                        {"name": "down", "inputSchema": {"type": "object"}},
                        {"name": "echo", "inputSchema": {"type": "object"}}]}}),
                    "tools/call" if tool == "boom" => {
                        json!({"jsonrpc": "2.0", "id": id, "error": "boom"})
                    }
                    "tools/call" => json!({"jsonrpc": "2.0", "id": id, "result": {
                        "content": [{"type": "text", "text": "echoed"}]}}),
                    _ if id.is_null() => return,
                    _ => json!({"jsonrpc": "2.0", "id": id, "result": {}}),
                };
                if let Some(stream) = events.lock().unwrap().as_mut() {
                    let _ = write!(stream, "event: message\r\ndata: {answer}\r\n\r\n");
                    let _ = stream.flush();
                }
            });
        }
    });
    port
}

#[tokio::test]
async fn a_legacy_sse_server_that_misbehaves_gets_prompt_errors_and_keeps_working() {
    let port = legacy_sse_server();
    let mut spec = ServerSpec::http("old", format!("http://127.0.0.1:{port}/sse"));
    spec.call_timeout = Duration::from_secs(20);
    let sessions = Sessions::start(vec![spec]).await;
    let status = sessions.statuses().remove(0);
    assert!(status.state.is_ready(), "{:?}", status.state);
    assert_eq!(status.transport, "sse");
    for tool in ["boom", "down"] {
        let started = std::time::Instant::now();
        let outcome = sessions.call_tool("old", tool, args(json!({}))).await;
        let text = match &outcome {
            Ok(r) => serde_json::to_string(r).unwrap(),
            Err(e) => e.to_string(),
        };
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{tool} took {:?}: {text}",
            started.elapsed()
        );
        let failed = outcome.as_ref().map_or(true, |r| r.is_error);
        assert!(failed, "{tool}: {text}");
        let expect = if tool == "boom" { "error" } else { "HTTP 500" };
        assert!(text.contains(expect), "{tool}: {text}");
    }
    let r = sessions
        .call_tool("old", "echo", args(json!({})))
        .await
        .expect("the session still works");
    assert_eq!(r.content.len(), 1, "{r:?}");
    sessions.shutdown().await;
}

/// `restart`: a ready server's session is closed and started again on request (a new
/// process; the old one ends), its tools stay listed meanwhile, calls work once it is back,
/// and the server beside it keeps its session; a name not configured is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_is_started_again_on_request() {
    let sessions = Sessions::start(vec![everything("again"), everything("beside")]).await;
    assert_ready(&sessions, "again");
    let (before, beside) = (
        sessions.child_pid("again").unwrap(),
        sessions.child_pid("beside").unwrap(),
    );
    let generation = sessions.generation();
    let status = sessions.restart("again").await.unwrap();
    assert_eq!(status.state, ServerState::Ready, "{status:?}");
    assert!(status.tools > 0, "{status:?}");
    let after = sessions.child_pid("again").unwrap();
    assert_ne!(before, after);
    assert_eq!(sessions.child_pid("beside"), Some(beside));
    assert!(sessions.catalog().servers.contains_key("again"));
    // The same tools listed again: the catalog did not change.
    assert_eq!(sessions.generation(), generation);
    eventually(
        Duration::from_secs(10),
        "the old process to end",
        || async { (!alive(before)).then_some(()) },
    )
    .await;
    let echoed = sessions
        .call_tool("again", "echo", args(json!({"message": "after"})))
        .await
        .unwrap();
    assert!(echoed.joined_text().contains("after"), "{echoed:?}");
    assert!(matches!(
        sessions.restart("nobody").await,
        Err(SessionError::UnknownServer { .. })
    ));
    sessions.shutdown().await;
}

/// `launch_retrying` (the gateway's): an HTTP server that is down as the sessions start is
/// reported failed at once, saying it is tried again, and joins the catalog once it listens;
/// `launch` gives up on it for good.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_running_host_keeps_trying_an_http_server_that_was_down_at_its_start() {
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let sessions = Sessions::launch_retrying(vec![ServerSpec::http("late", url.clone())]);
    tokio::time::timeout(Duration::from_secs(20), sessions.settled())
        .await
        .expect("the start settles at the first failure");
    let state = sessions.statuses()[0].state.clone();
    assert!(
        matches!(&state, ServerState::Failed { reason }
            if reason.contains("connect failed") && reason.contains("trying again every 10 s")),
        "{state:?}"
    );
    let plain = Sessions::start(vec![ServerSpec::http("gone", url)]).await;
    let given_up = plain.statuses()[0].state.clone();
    assert!(
        matches!(&given_up, ServerState::Failed { reason } if !reason.contains("trying again")),
        "{given_up:?}"
    );

    let _server = HttpEverything::start(port).await;
    eventually(
        Duration::from_secs(30),
        "the late server to join",
        || async {
            sessions
                .catalog()
                .servers
                .contains_key("late")
                .then_some(())
        },
    )
    .await;
    assert_ready(&sessions, "late");
    let echoed = sessions
        .call_tool("late", "echo", args(json!({"message": "late"})))
        .await
        .unwrap();
    assert!(echoed.joined_text().contains("late"), "{echoed:?}");
    // `launch` gave up: the server listening now changes nothing there.
    assert!(matches!(
        plain.statuses()[0].state,
        ServerState::Failed { .. }
    ));
    sessions.shutdown().await;
    plain.shutdown().await;
}
