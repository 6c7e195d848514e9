//! Sessions against the real reference servers (scripts/peers): each connects, lists its tools
//! and answers one call with the expected content, over stdio and Streamable HTTP.

mod common;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::{HttpEverything, args, assert_ready, everything, free_port};
use serde_json::json;
use switchboard_core::{Secret, ServerSpec, TransportSpec};
use switchboard_mcp::Sessions;
use switchboard_test_support::peers::{node, peer};

fn tool_names(sessions: &Sessions, server: &str) -> Vec<String> {
    let catalog = sessions.catalog();
    let listed = catalog.servers.get(server).unwrap_or_else(|| {
        panic!(
            "{server} missing from the catalog: {:#?}",
            sessions.statuses()
        )
    });
    listed.tools.iter().map(|t| t.def.name.clone()).collect()
}

fn assert_has_tools(sessions: &Sessions, server: &str, expected: &[&str]) {
    let names = tool_names(sessions, server);
    for want in expected {
        assert!(
            names.iter().any(|n| n == want),
            "{server} has no tool {want}: {names:?}"
        );
    }
}

/// Every file in server-everything's docs folder is a resource; it also has two templates.
fn everything_doc_count() -> usize {
    let docs = peer("everything").parent().expect("dist dir").join("docs");
    std::fs::read_dir(&docs)
        .expect("read server-everything docs dir")
        .filter(|e| e.as_ref().is_ok_and(|e| e.path().is_file()))
        .count()
}

#[tokio::test]
async fn everything_over_stdio_lists_all_and_answers() {
    let sessions = Sessions::start(vec![everything("everything")]).await;
    assert_ready(&sessions, "everything");
    assert_has_tools(
        &sessions,
        "everything",
        &["echo", "get-sum", "trigger-long-running-operation"],
    );

    let status = &sessions.statuses()[0];
    assert_eq!(status.transport, "stdio");
    assert_eq!(
        status.server_name.as_deref(),
        Some("mcp-servers/everything")
    );
    assert_eq!(status.protocol_version.as_deref(), Some("2025-11-25"));
    assert!(status.connect_ms.is_some());

    // All resources and templates made it into the catalog (the server lists one resource per
    // docs file, so the expected count comes from the folder, not from our own listing).
    let catalog = sessions.catalog();
    let listed = &catalog.servers["everything"];
    let docs = everything_doc_count();
    assert!(docs > 0, "server-everything ships no docs?");
    assert_eq!(
        listed.resources.len(),
        docs,
        "resources: {:?}",
        listed.resources
    );
    assert!(
        listed
            .resources
            .iter()
            .all(|r| r.def.uri.starts_with("demo://resource/static/document/"))
    );
    assert_eq!(listed.resource_templates.len(), 2);
    assert!(!listed.prompts.is_empty());
    assert!(listed.info.instructions.is_some(), "instructions are kept");
    assert_eq!(status.resources, docs);

    let r = sessions
        .call_tool("everything", "echo", args(json!({"message": "hi"})))
        .await
        .unwrap();
    assert_eq!(r.joined_text(), "Echo: hi");
    assert!(!r.is_error);
    let r = sessions
        .call_tool("everything", "get-sum", args(json!({"a": 2, "b": 40})))
        .await
        .unwrap();
    assert!(r.joined_text().contains("42"), "{r:?}");

    // A tool-level failure is data, not an error.
    let r = sessions
        .call_tool("everything", "get-sum", args(json!({"a": "x"})))
        .await
        .unwrap();
    assert!(r.is_error, "{r:?}");

    // Resources and prompts go through too.
    let uri = listed.resources[0].def.uri.clone();
    let contents = sessions.read_resource("everything", &uri).await.unwrap();
    assert_eq!(contents[0]["uri"], json!(uri));
    let prompt = sessions
        .get_prompt("everything", "simple-prompt", args(json!({})))
        .await
        .unwrap();
    assert!(
        prompt["messages"].as_array().is_some_and(|m| !m.is_empty()),
        "{prompt}"
    );

    sessions.shutdown().await;
}

#[tokio::test]
async fn filesystem_lists_a_directory() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("hello-switchboard.txt"), "hi").unwrap();
    let spec = ServerSpec::stdio(
        "fs",
        node(),
        vec![
            peer("filesystem").display().to_string(),
            root.display().to_string(),
        ],
    );
    let sessions = Sessions::start(vec![spec]).await;
    assert_ready(&sessions, "fs");
    assert_has_tools(&sessions, "fs", &["list_directory", "read_text_file"]);
    let r = sessions
        .call_tool(
            "fs",
            "list_directory",
            args(json!({"path": root.display().to_string()})),
        )
        .await
        .unwrap();
    assert!(!r.is_error, "{r:?}");
    assert!(r.joined_text().contains("hello-switchboard.txt"), "{r:?}");
    sessions.shutdown().await;
}

#[tokio::test]
async fn memory_stores_and_reads_entities() {
    let dir = tempfile::tempdir().unwrap();
    let mut spec = ServerSpec::stdio("memory", node(), vec![peer("memory").display().to_string()]);
    if let TransportSpec::Stdio { env, .. } = &mut spec.transport {
        let file = dir.path().join("memory.jsonl");
        env.push((
            "MEMORY_FILE_PATH".into(),
            Secret::new(file.display().to_string()),
        ));
    }
    let sessions = Sessions::start(vec![spec]).await;
    assert_ready(&sessions, "memory");
    assert_has_tools(&sessions, "memory", &["create_entities", "read_graph"]);
    let created = sessions
        .call_tool(
            "memory",
            "create_entities",
            args(json!({"entities": [{"name": "switchboard", "entityType": "project", "observations": ["routes tool calls"]}]})),
        )
        .await
        .unwrap();
    assert!(!created.is_error, "{created:?}");
    let graph = sessions
        .call_tool("memory", "read_graph", args(json!({})))
        .await
        .unwrap();
    let text = graph.joined_text();
    assert!(
        text.contains("switchboard") && text.contains("routes tool calls"),
        "{text}"
    );
    assert!(
        dir.path().join("memory.jsonl").exists(),
        "env reached the server"
    );
    sessions.shutdown().await;
}

#[tokio::test]
async fn time_reports_utc() {
    let spec = ServerSpec::stdio("time", peer("time").display().to_string(), vec![]);
    let sessions = Sessions::start(vec![spec]).await;
    assert_ready(&sessions, "time");
    assert_has_tools(&sessions, "time", &["get_current_time", "convert_time"]);
    let r = sessions
        .call_tool("time", "get_current_time", args(json!({"timezone": "UTC"})))
        .await
        .unwrap();
    assert!(!r.is_error, "{r:?}");
    let text = r.joined_text();
    assert!(text.contains("UTC") && text.contains("datetime"), "{text}");
    sessions.shutdown().await;
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "switchboard")
        .env("GIT_AUTHOR_EMAIL", "sb@example.com")
        .env("GIT_COMMITTER_NAME", "switchboard")
        .env("GIT_COMMITTER_EMAIL", "sb@example.com")
        .output()
        .expect("run git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[tokio::test]
async fn git_logs_a_commit() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().canonicalize().unwrap();
    git(&repo, &["init", "-q"]);
    std::fs::write(repo.join("README"), "hello").unwrap();
    git(&repo, &["add", "README"]);
    git(&repo, &["commit", "-q", "-m", "first switchboard commit"]);
    let mut spec = ServerSpec::stdio(
        "git",
        peer("git").display().to_string(),
        vec!["--repository".into(), repo.display().to_string()],
    );
    // The server is a Python process; give it its own cwd to show `cwd` is honoured.
    if let TransportSpec::Stdio { cwd, .. } = &mut spec.transport {
        *cwd = Some(repo.clone());
    }
    let sessions = Sessions::start(vec![spec]).await;
    assert_ready(&sessions, "git");
    assert_has_tools(&sessions, "git", &["git_status", "git_log"]);
    let r = sessions
        .call_tool(
            "git",
            "git_log",
            args(json!({"repo_path": repo.display().to_string()})),
        )
        .await
        .unwrap();
    assert!(!r.is_error, "{r:?}");
    assert!(
        r.joined_text().contains("first switchboard commit"),
        "{r:?}"
    );
    sessions.shutdown().await;
}

#[tokio::test]
async fn everything_over_streamable_http() {
    let port = free_port();
    let _server = HttpEverything::start(port).await;

    let mut spec = ServerSpec::http("web", format!("http://127.0.0.1:{port}/mcp"));
    if let TransportSpec::Http { headers, .. } = &mut spec.transport {
        headers.push(("X-Switchboard-Test".into(), Secret::new("1")));
        headers.push((
            "Authorization".into(),
            Secret::new("Bearer not-checked-by-this-server"),
        ));
    }
    let sessions = Sessions::start(vec![spec]).await;
    assert_ready(&sessions, "web");
    let status = &sessions.statuses()[0];
    assert_eq!(status.transport, "http");
    assert_eq!(status.protocol_version.as_deref(), Some("2025-11-25"));
    assert_has_tools(&sessions, "web", &["echo", "get-sum", "get-roots-list"]);
    assert_eq!(status.resources, everything_doc_count());

    let r = sessions
        .call_tool("web", "echo", args(json!({"message": "hi"})))
        .await
        .unwrap();
    assert_eq!(r.joined_text(), "Echo: hi");
    let r = sessions
        .call_tool("web", "get-sum", args(json!({"a": 2, "b": 40})))
        .await
        .unwrap();
    assert!(r.joined_text().contains("42"), "{r:?}");

    // list_changed arrives over the session's SSE stream and updates the catalog.
    let mut generation = sessions.watch_generation();
    generation.borrow_and_update();
    let before = sessions.catalog().servers["web"].resources.len();
    let r = sessions
        .call_tool(
            "web",
            "gzip-file-as-resource",
            args(json!({"name": "over-http.gz", "data": "data:text/plain;base64,aGk="})),
        )
        .await
        .unwrap();
    assert!(!r.is_error, "{r:?}");
    tokio::time::timeout(Duration::from_secs(5), generation.changed())
        .await
        .expect("resources/list_changed over HTTP updates the catalog")
        .unwrap();
    assert_eq!(
        sessions.catalog().servers["web"].resources.len(),
        before + 1
    );
    sessions.shutdown().await;
}
