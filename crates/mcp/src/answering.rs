//! The answering call: a relayed tool call whose server's requests (a form for the user, a
//! question for the model) are answered while it runs, with a timeout that counts only the time
//! nobody is answering one, and starts again at each progress notification (the server is at
//! work), up to [`PROGRESS_CAP`] times the timeout in all (MCP's lifecycle allows the reset and
//! asks for a maximum). The session's own timer cannot tell the person's time at a form from the
//! server's time at work, so it is set out of reach and this clock is the call's.

use std::future::Future;
use std::time::Duration;

use tokio::time::Instant;

use switchboard_core::CallResult;
use tokio::sync::mpsc;

use crate::{SessionError, Upcall};

/// How far past the call's own timeout the session's timer is set, so that it never fires first.
const OUT_OF_REACH: Duration = Duration::from_secs(24 * 3600);

/// How many timeouts a call that keeps reporting progress may take in all.
pub(crate) const PROGRESS_CAP: u32 = 10;

/// Run the relayed call that `start` begins (given the session timeout to use and where the
/// server's upcalls go), handing each upcall to `answer` as it comes; the clock stops while
/// `answer` runs. After `timeout` of the call's own time with no progress from the server, or
/// [`PROGRESS_CAP`] times `timeout` in all, it is dropped, which cancels it on the wire, and
/// the result is [`SessionError::Timeout`] naming `server`, `tool` and the call's own time.
/// Progress that arrived together with the result goes to `answer` before this returns; a
/// request still unanswered then gets the session's default answer.
pub async fn call_answering<S, C, A, F>(
    server: &str,
    tool: &str,
    timeout: Duration,
    start: S,
    mut answer: A,
) -> Result<CallResult, SessionError>
where
    S: FnOnce(Duration, mpsc::UnboundedSender<Upcall>) -> C,
    C: Future<Output = Result<CallResult, SessionError>>,
    A: FnMut(Upcall) -> F,
    F: Future<Output = ()>,
{
    let (sink, mut upcalls) = mpsc::unbounded_channel();
    let call = start(timeout.saturating_add(OUT_OF_REACH), sink);
    tokio::pin!(call);
    // The call's own time so far, and the part of it since the last progress.
    let cap = timeout.saturating_mul(PROGRESS_CAP);
    let (mut own, mut idle) = (Duration::ZERO, Duration::ZERO);
    let mut reported = false;
    let result = loop {
        let waiting = Instant::now();
        let left = timeout.saturating_sub(idle).min(cap.saturating_sub(own));
        tokio::select! {
            // The result first: once it is here, upcalls still queued are drained below.
            biased;
            result = &mut call => break result,
            Some(upcall) = upcalls.recv() => {
                let spent = waiting.elapsed();
                own = own.saturating_add(spent);
                idle = idle.saturating_add(spent);
                if matches!(upcall, Upcall::Progress { .. }) {
                    idle = Duration::ZERO;
                    reported = true;
                }
                answer(upcall).await;
            }
            () = tokio::time::sleep(left) => break Err(SessionError::Timeout {
                server: server.to_string(),
                tool: tool.to_string(),
                after: own.saturating_add(left),
                quiet: reported.then(|| idle.saturating_add(left)),
                stray: None,
            }),
        }
    };
    if result.is_ok() {
        while let Ok(upcall) = upcalls.try_recv() {
            if matches!(upcall, Upcall::Progress { .. }) {
                answer(upcall).await;
            }
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::UpcallKind;
    use serde_json::json;
    use tokio::sync::oneshot;

    fn done(text: &str) -> CallResult {
        CallResult::text(text, false)
    }

    fn progress(n: f64) -> Upcall {
        Upcall::Progress {
            progress: n,
            total: Some(2.0),
            message: None,
        }
    }

    #[tokio::test]
    async fn the_time_spent_answering_does_not_count_toward_the_timeout() {
        let mut seen = Vec::new();
        let result = call_answering(
            "s",
            "t",
            Duration::from_millis(150),
            |ceiling, sink| async move {
                assert!(
                    ceiling > Duration::from_secs(3600),
                    "session timer out of reach"
                );
                let (reply, answered) = oneshot::channel();
                let _ = sink.send(Upcall::Request {
                    kind: UpcallKind::Elicitation,
                    params: json!({"message": "name?"}),
                    reply,
                });
                let answer = answered.await.expect("answered").expect("not refused");
                // Work after the answer, within the call's own time.
                tokio::time::sleep(Duration::from_millis(50)).await;
                let _ = sink.send(progress(2.0));
                Ok(done(answer["content"]["name"].as_str().unwrap_or("")))
            },
            |upcall| {
                let kind = match &upcall {
                    Upcall::Progress { .. } => "progress",
                    Upcall::Request { .. } => "request",
                };
                seen.push(kind);
                async move {
                    if let Upcall::Request { reply, .. } = upcall {
                        // A person slower than the whole timeout.
                        tokio::time::sleep(Duration::from_millis(300)).await;
                        let _ =
                            reply.send(Ok(json!({"action": "accept", "content": {"name": "Ada"}})));
                    }
                }
            },
        )
        .await
        .expect("the call gets its result");
        assert_eq!(result.joined_text(), "Ada");
        // The progress sent just before the result still reached the caller.
        assert_eq!(seen, ["request", "progress"]);
    }

    #[tokio::test]
    async fn a_call_that_hangs_times_out_and_says_where() {
        let started = Instant::now();
        let err = call_answering(
            "slow",
            "wait",
            Duration::from_millis(100),
            |_, sink| async move {
                let _ = sink.send(progress(1.0));
                std::future::pending::<()>().await;
                Ok(done("never"))
            },
            |_| async {},
        )
        .await
        .expect_err("times out");
        assert!(started.elapsed() >= Duration::from_millis(100));
        match err {
            SessionError::Timeout {
                server,
                tool,
                after,
                quiet,
                stray: None,
            } => {
                assert_eq!((server.as_str(), tool.as_str()), ("slow", "wait"));
                // It reported progress first: the timeout is counted from that report.
                assert!(
                    quiet.is_some_and(|q| q >= Duration::from_millis(100)),
                    "{quiet:?}"
                );
                // The call's own time: the timeout, from its progress at the start.
                assert!(
                    after >= Duration::from_millis(100) && after < Duration::from_secs(1),
                    "{after:?}"
                );
            }
            other => panic!("expected a timeout, got {other:?}"),
        }
    }

    /// Progress starts the clock again: a call that reports progress more often than its
    /// timeout runs past it, one that stops reporting times out a timeout after its last
    /// report, and one that reports for ever is stopped at the cap.
    #[tokio::test(start_paused = true)]
    async fn progress_gives_a_call_more_time_up_to_the_cap() {
        let step = |sink: mpsc::UnboundedSender<Upcall>, steps: u32, done_after: bool| async move {
            for i in 0..steps {
                tokio::time::sleep(Duration::from_millis(80)).await;
                let _ = sink.send(progress(f64::from(i)));
            }
            if !done_after {
                std::future::pending::<()>().await;
            }
            Ok(done("built"))
        };
        // Five reports 80 ms apart, under a 100 ms timeout: 400 ms, and done.
        let result = call_answering(
            "s",
            "build",
            Duration::from_millis(100),
            |_, sink| step(sink, 5, true),
            |_| async {},
        )
        .await
        .expect("progress kept it alive");
        assert_eq!(result.joined_text(), "built");

        // Reports that stop: a timeout after the last one (3 × 80 + 100 ms).
        let started = tokio::time::Instant::now();
        let err = call_answering(
            "s",
            "build",
            Duration::from_millis(100),
            |_, sink| step(sink, 3, false),
            |_| async {},
        )
        .await
        .expect_err("stalls");
        assert_eq!(started.elapsed(), Duration::from_millis(340));
        assert!(
            matches!(err, SessionError::Timeout { after, quiet: Some(quiet), .. }
                if after == Duration::from_millis(340) && quiet == Duration::from_millis(100)),
            "{err:?}"
        );
        assert!(
            err.to_string()
                .contains("timed out after 340 ms, 100 ms after its last progress report"),
            "{err}"
        );

        // Reports for ever: stopped at PROGRESS_CAP timeouts.
        let started = tokio::time::Instant::now();
        let err = call_answering(
            "s",
            "build",
            Duration::from_millis(100),
            |_, sink| step(sink, u32::MAX, false),
            |_| async {},
        )
        .await
        .expect_err("capped");
        assert_eq!(started.elapsed(), Duration::from_millis(100) * PROGRESS_CAP);
        assert!(
            matches!(err, SessionError::Timeout { after, .. } if after == Duration::from_millis(100) * PROGRESS_CAP),
            "{err:?}"
        );
    }

    #[tokio::test]
    async fn the_calls_own_failure_is_returned_as_is() {
        let err = call_answering(
            "s",
            "t",
            Duration::from_secs(5),
            |_, _| async {
                Err(SessionError::NotReady {
                    server: "s".into(),
                    reason: "starting".into(),
                })
            },
            |_| async {},
        )
        .await
        .expect_err("fails");
        assert!(matches!(err, SessionError::NotReady { .. }), "{err:?}");
    }
}
