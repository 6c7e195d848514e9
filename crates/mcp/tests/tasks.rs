//! Tools that run only as tasks (MCP 2025-11-25), against the real server-everything
//! (scripts/peers), whose `simulate-research-query` refuses a plain call: the catalog keeps its
//! `execution.taskSupport` (which rmcp's listing drops), a call asks for the task and returns
//! its result, a relayed call hears the task's status messages as progress and answers the
//! form the task asks for, and a call whose time runs out says so after the call's timeout.
//! Over Streamable HTTP too, where the server answers its tool list as an event stream.

mod common;

use std::time::Duration;

use common::{HttpEverything, args, assert_ready, everything, free_port};
use serde_json::json;
use switchboard_core::{CallResult, ServerSpec};
use switchboard_mcp::{SessionError, Sessions, Upcall, UpcallKind};
use tokio::sync::mpsc;

const TASK_TOOL: &str = "simulate-research-query";

fn text(result: &CallResult) -> String {
    serde_json::to_string(result).expect("a call result serializes")
}

#[tokio::test]
async fn a_tool_that_runs_only_as_a_task_is_listed_so_and_called_as_one() {
    let sessions = Sessions::start(vec![everything("everything")]).await;
    assert_ready(&sessions, "everything");
    let catalog = sessions.catalog();
    let listed = &catalog.servers["everything"];
    let tool = &listed.tool(TASK_TOOL).expect("the task tool is listed").def;
    assert_eq!(
        tool.extra.get("execution"),
        Some(&json!({"taskSupport": "required"})),
        "{tool:?}"
    );
    assert!(tool.requires_task());
    assert!(sessions.runs_as_task("everything", TASK_TOOL));
    // The SDK lists its other tools with `taskSupport: "forbidden"`, the default, which is
    // not kept (their definitions and hashes stay as before); they are called as before.
    let echo = &listed.tool("echo").expect("echo is listed").def;
    assert_eq!(echo.extra.get("execution"), None, "{echo:?}");
    assert!(!echo.requires_task());

    let result = sessions
        .call_tool("everything", TASK_TOOL, args(json!({"topic": "tides"})))
        .await
        .expect("the task's result comes back");
    assert!(!result.is_error, "{result:?}");
    let said = text(&result);
    assert!(said.contains("Research Report: tides"), "{said}");
    assert!(said.contains("Stage 4: Generating report"), "{said}");
    sessions.shutdown().await;
}

#[tokio::test]
async fn a_relayed_task_reports_its_status_and_takes_its_callers_answer() {
    let sessions = Sessions::start(vec![everything("everything")]).await;
    assert_ready(&sessions, "everything");
    let (sink, mut upcalls) = mpsc::unbounded_channel();
    let listening = tokio::spawn(async move {
        let mut messages = Vec::new();
        let mut forms = 0;
        while let Some(upcall) = upcalls.recv().await {
            match upcall {
                Upcall::Progress { message, .. } => messages.extend(message),
                Upcall::Request {
                    kind: UpcallKind::Elicitation,
                    reply,
                    ..
                } => {
                    forms += 1;
                    let _ = reply.send(Ok(json!({
                        "action": "accept",
                        "content": {"interpretation": "snake"}
                    })));
                }
                other => panic!("unexpected upcall {other:?}"),
            }
        }
        (messages, forms)
    });
    let result = sessions
        .call_tool_relayed(
            "everything",
            TASK_TOOL,
            args(json!({"topic": "python", "ambiguous": true})),
            sink,
        )
        .await
        .expect("the task's result comes back");
    let said = text(&result);
    assert!(said.contains("Research Report: python (snake)"), "{said}");
    let (messages, forms) = listening.await.expect("the listener ends with the call");
    assert_eq!(forms, 1, "the task's one form reached the caller");
    assert!(
        messages.iter().any(|m| m.contains("Gathering sources")),
        "{messages:?}"
    );
    assert!(
        messages.windows(2).all(|w| w[0] != w[1]),
        "each status message is told once: {messages:?}"
    );
    sessions.shutdown().await;
}

#[tokio::test]
async fn a_task_that_outlasts_the_call_timeout_times_out_as_a_call_does() {
    let sessions = Sessions::start(vec![everything("everything")]).await;
    assert_ready(&sessions, "everything");
    let timeout = Duration::from_millis(1500);
    let err = sessions
        .call_tool_with_timeout(
            "everything",
            TASK_TOOL,
            args(json!({"topic": "x"})),
            timeout,
        )
        .await
        .expect_err("four one-second stages do not fit in 1.5 s");
    match &err {
        SessionError::Timeout { after, .. } => assert_eq!(*after, timeout, "{err}"),
        other => panic!("another error: {other}"),
    }
    // The session is still good for the next call.
    let result = sessions
        .call_tool("everything", "echo", args(json!({"message": "still here"})))
        .await
        .expect("echo answers");
    assert!(text(&result).contains("still here"));
    sessions.shutdown().await;
}

#[tokio::test]
async fn over_http_a_task_only_tool_is_listed_so_and_called_as_one() {
    // Streamable HTTP, and the legacy HTTP+SSE transport (reached by falling back).
    for (mode, path) in [("streamableHttp", "/mcp"), ("sse", "/sse")] {
        let port = free_port();
        let _server = HttpEverything::start_mode(port, mode).await;
        let spec = ServerSpec::http("web", format!("http://127.0.0.1:{port}{path}"));
        let sessions = Sessions::start(vec![spec]).await;
        assert_ready(&sessions, "web");
        assert!(sessions.runs_as_task("web", TASK_TOOL), "{mode}");
        let result = sessions
            .call_tool("web", TASK_TOOL, args(json!({"topic": "tides"})))
            .await
            .unwrap_or_else(|e| panic!("{mode}: {e}"));
        assert!(
            text(&result).contains("Research Report: tides"),
            "{mode}: {result:?}"
        );
        sessions.shutdown().await;
    }
}
