//! Relays against the real server-everything (scripts/peers): a relayed call hears its
//! progress and answers the server's sampling request itself; without a relay sampling is
//! refused as before, also while another relayed call is in flight when the call is made
//! unrelayed; over HTTP a sampling request finds its call by the response stream it
//! came on, even with another relayed call in flight; log messages arrive as events after
//! `logging/setLevel`, resource updates after `resources/subscribe`.

mod common;

use std::time::Duration;

use common::{HttpEverything, args, assert_ready, everything, free_port};
use serde_json::{Value, json};
use switchboard_core::{CallResult, ServerSpec};
use switchboard_mcp::{ServerEvent, Sessions, Upcall, UpcallKind};
use tokio::sync::mpsc;

fn text(result: &CallResult) -> String {
    serde_json::to_string(result).expect("a call result serializes")
}

#[tokio::test]
async fn a_relayed_call_hears_its_progress_in_order() {
    let sessions = Sessions::start(vec![everything("everything")]).await;
    assert_ready(&sessions, "everything");
    let (sink, mut upcalls) = mpsc::unbounded_channel();
    let result = sessions
        .call_tool_relayed(
            "everything",
            "trigger-long-running-operation",
            args(json!({"duration": 0.3, "steps": 3})),
            sink,
        )
        .await
        .expect("the call succeeds");
    assert!(
        text(&result).contains("Long running operation completed"),
        "{result:?}"
    );
    let mut seen = Vec::new();
    while let Ok(upcall) = upcalls.try_recv() {
        match upcall {
            Upcall::Progress {
                progress, total, ..
            } => seen.push((progress, total)),
            other => panic!("unexpected upcall {other:?}"),
        }
    }
    assert_eq!(
        seen,
        vec![(1.0, Some(3.0)), (2.0, Some(3.0)), (3.0, Some(3.0))]
    );
    sessions.shutdown().await;
}

#[tokio::test]
async fn the_callers_answer_to_a_sampling_request_reaches_the_server() {
    let sessions = Sessions::start(vec![everything("everything")]).await;
    assert_ready(&sessions, "everything");
    let (sink, mut upcalls) = mpsc::unbounded_channel();
    let answering = tokio::spawn(async move {
        let mut asked = Vec::new();
        while let Some(upcall) = upcalls.recv().await {
            if let Upcall::Request {
                kind,
                params,
                reply,
            } = upcall
            {
                asked.push((kind, params));
                let _ = reply.send(Ok(json!({
                    "role": "assistant",
                    "content": {"type": "text", "text": "relayed answer 42"},
                    "model": "test-model",
                    "stopReason": "endTurn"
                })));
            }
        }
        asked
    });
    let result = tokio::time::timeout(
        Duration::from_secs(20),
        sessions.call_tool_relayed(
            "everything",
            "trigger-sampling-request",
            args(json!({"prompt": "hello"})),
            sink,
        ),
    )
    .await
    .expect("the call ends")
    .expect("the call succeeds");
    assert!(text(&result).contains("relayed answer 42"), "{result:?}");
    let asked = answering.await.expect("the answering task ends");
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0].0, UpcallKind::Sampling);
    let prompt = asked[0].1.pointer("/messages/0/content/text");
    assert!(
        prompt
            .and_then(Value::as_str)
            .is_some_and(|t| t.contains("hello")),
        "{asked:?}"
    );

    // Without a relay the session still refuses sampling: the tool reports the failure.
    let plain = sessions
        .call_tool(
            "everything",
            "trigger-sampling-request",
            args(json!({"prompt": "hello"})),
        )
        .await;
    match plain {
        Ok(r) => assert!(r.is_error, "{r:?}"),
        Err(e) => assert!(e.to_string().contains("sampling"), "{e}"),
    }
    sessions.shutdown().await;
}

#[tokio::test]
async fn an_unrelayed_call_keeps_its_server_request_from_another_relayed_call() {
    let sessions = Sessions::start(vec![everything("everything")]).await;
    assert_ready(&sessions, "everything");
    // A relayed call that runs for a while and would answer any sampling request it is given.
    let (sink, mut upcalls) = mpsc::unbounded_channel();
    let relayed = {
        let sessions = sessions.clone();
        tokio::spawn(async move {
            sessions
                .call_tool_relayed(
                    "everything",
                    "trigger-long-running-operation",
                    args(json!({"duration": 3, "steps": 3})),
                    sink,
                )
                .await
        })
    };
    // Told on the relayed call's first upcall (its first progress notification): from then on
    // the call is registered and in flight.
    let (started, running) = tokio::sync::oneshot::channel::<()>();
    let answering = tokio::spawn(async move {
        let mut asked = Vec::new();
        let mut started = Some(started);
        while let Some(upcall) = upcalls.recv().await {
            if let Some(started) = started.take() {
                let _ = started.send(());
            }
            match upcall {
                Upcall::Progress { .. } => asked.push("progress"),
                Upcall::Request { reply, .. } => {
                    asked.push("request");
                    let _ = reply.send(Ok(json!({
                        "role": "assistant",
                        "content": {"type": "text", "text": "wrong caller's answer"},
                        "model": "test-model",
                        "stopReason": "endTurn"
                    })));
                }
                _ => {}
            }
        }
        asked
    });
    // Wait until the relayed call is running (it has sent its first progress; two steps are
    // left, about two seconds), so the unrelayed call below overlaps it.
    tokio::time::timeout(Duration::from_secs(20), running)
        .await
        .expect("the relayed call reports progress within 20 s")
        .expect("the answering task is alive");
    // Over stdio the server's sampling request does not say which call it belongs to; with two
    // calls in flight it must be answered locally (refused), not by the relayed call's caller.
    let quiet = tokio::time::timeout(
        Duration::from_secs(20),
        sessions.call_tool_unrelayed(
            "everything",
            "trigger-sampling-request",
            args(json!({"prompt": "hello"})),
        ),
    )
    .await
    .expect("the unrelayed call ends");
    match quiet {
        Ok(r) => {
            assert!(r.is_error, "{r:?}");
            assert!(!text(&r).contains("wrong caller"), "{r:?}");
        }
        Err(e) => assert!(e.to_string().contains("sampling"), "{e}"),
    }
    let done = relayed
        .await
        .expect("the relayed task ends")
        .expect("the relayed call succeeds");
    assert!(
        text(&done).contains("Long running operation completed"),
        "{done:?}"
    );
    let asked = answering.await.expect("the answering task ends");
    assert!(!asked.contains(&"request"), "{asked:?}");
    assert!(asked.contains(&"progress"), "{asked:?}");
    sessions.shutdown().await;
}

#[tokio::test]
async fn log_messages_arrive_as_events_after_set_level() {
    let sessions = Sessions::start(vec![everything("everything")]).await;
    assert_ready(&sessions, "everything");
    let caps = sessions.capabilities("everything").expect("capabilities");
    assert!(caps.get("logging").is_some(), "{caps}");
    let mut events = sessions.events();
    sessions
        .set_log_level("everything", "debug")
        .await
        .expect("setLevel succeeds");
    sessions
        .call_tool("everything", "toggle-simulated-logging", args(json!({})))
        .await
        .expect("the toggle succeeds");
    let event = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            match events.recv().await {
                Ok(ServerEvent::Log { server, params }) => break (server, params),
                Ok(_) => continue,
                Err(e) => panic!("events ended: {e}"),
            }
        }
    })
    .await
    .expect("a log message within 10 s");
    assert_eq!(event.0, "everything");
    assert!(event.1.get("level").is_some(), "{}", event.1);
    assert!(sessions.set_log_level("everything", "loud").await.is_err());
    sessions.shutdown().await;
}

/// Answer every sampling request on `upcalls` with `text`; returns how many were answered.
async fn answer_sampling(mut upcalls: mpsc::UnboundedReceiver<Upcall>, text: &str) -> usize {
    let mut answered = 0;
    while let Some(upcall) = upcalls.recv().await {
        if let Upcall::Request {
            kind: UpcallKind::Sampling,
            reply,
            ..
        } = upcall
        {
            answered += 1;
            let _ = reply.send(Ok(json!({
                "role": "assistant",
                "content": {"type": "text", "text": text},
                "model": "test-model",
                "stopReason": "endTurn"
            })));
        }
    }
    answered
}

#[tokio::test]
async fn over_http_a_sampling_request_reaches_its_own_call_among_several() {
    let port = free_port();
    let _server = HttpEverything::start(port).await;
    let spec = ServerSpec::http("web", format!("http://127.0.0.1:{port}/mcp"));
    let sessions = Sessions::start(vec![spec]).await;
    assert_ready(&sessions, "web");
    // A second relayed call stays in flight the whole time, so "the one call in flight" cannot
    // be what routes the request.
    let (long_sink, long_upcalls) = mpsc::unbounded_channel();
    let long_answers = tokio::spawn(answer_sampling(long_upcalls, "wrong call"));
    let long = {
        let sessions = sessions.clone();
        tokio::spawn(async move {
            sessions
                .call_tool_relayed(
                    "web",
                    "trigger-long-running-operation",
                    args(json!({"duration": 3, "steps": 3})),
                    long_sink,
                )
                .await
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (sink, upcalls) = mpsc::unbounded_channel();
    let answers = tokio::spawn(answer_sampling(upcalls, "the right call"));
    let result = tokio::time::timeout(
        Duration::from_secs(20),
        sessions.call_tool_relayed(
            "web",
            "trigger-sampling-request",
            args(json!({"prompt": "hi"})),
            sink,
        ),
    )
    .await
    .expect("the call ends")
    .expect("the call succeeds");
    assert!(text(&result).contains("the right call"), "{result:?}");
    assert_eq!(answers.await.expect("answers"), 1);
    long.await.expect("join").expect("the long call succeeds");
    assert_eq!(long_answers.await.expect("answers"), 0);
    sessions.shutdown().await;
}

#[tokio::test]
async fn resource_updates_arrive_as_events_after_subscribe() {
    let sessions = Sessions::start(vec![everything("everything")]).await;
    assert_ready(&sessions, "everything");
    let caps = sessions.capabilities("everything").expect("capabilities");
    assert_eq!(caps.pointer("/resources/subscribe"), Some(&json!(true)));
    let uri = sessions.catalog().servers["everything"]
        .resources
        .first()
        .map(|r| r.def.uri.clone())
        .expect("server-everything lists resources");
    let mut events = sessions.events();
    sessions
        .subscribe("everything", &uri)
        .await
        .expect("subscribe succeeds");
    sessions
        .call_tool("everything", "toggle-subscriber-updates", args(json!({})))
        .await
        .expect("the toggle succeeds");
    let updated = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            match events.recv().await {
                Ok(ServerEvent::ResourceUpdated { server, uri }) => break (server, uri),
                Ok(_) => continue,
                Err(e) => panic!("events ended: {e}"),
            }
        }
    })
    .await
    .expect("an update within 10 s");
    assert_eq!(updated, ("everything".to_string(), uri.clone()));
    sessions
        .unsubscribe("everything", &uri)
        .await
        .expect("unsubscribe succeeds");
    sessions.shutdown().await;
}

/// Over HTTP too, a relayed call has all its progress, in order, when its result arrives, call
/// after call: server-everything sends its progress back to back and the last right before the
/// result, all on the POST's event stream, and rmcp handles each notification on a task of its
/// own while the result goes straight to the caller (progress came out of order, and the last
/// was sometimes lost, until the transport handed relayed progress over in arrival order).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http_a_relayed_call_hears_all_its_progress_before_its_result() {
    let port = free_port();
    let _server = HttpEverything::start(port).await;
    let spec = ServerSpec::http("web", format!("http://127.0.0.1:{port}/mcp"));
    let sessions = Sessions::start(vec![spec]).await;
    assert_ready(&sessions, "web");
    let mut short = Vec::new();
    for i in 0..100 {
        let (sink, mut upcalls) = mpsc::unbounded_channel();
        let result = sessions
            .call_tool_relayed(
                "web",
                "trigger-long-running-operation",
                args(json!({"duration": 0, "steps": 3})),
                sink,
            )
            .await
            .expect("the call succeeds");
        assert!(
            text(&result).contains("Long running operation completed"),
            "{result:?}"
        );
        let mut seen = Vec::new();
        while let Ok(Upcall::Progress { progress, .. }) = upcalls.try_recv() {
            seen.push(progress);
        }
        if seen != [1.0, 2.0, 3.0] {
            short.push((i, seen));
        }
    }
    assert!(
        short.is_empty(),
        "calls whose progress was not 1, 2, 3 in order (of 100): {short:?}"
    );
    sessions.shutdown().await;
}
