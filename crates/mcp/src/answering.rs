//! The answering call: a relayed tool call whose server's requests (a form for the user, a
//! question for the model) are answered while it runs, with a timeout that counts only the time
//! nobody is answering one. The session's own timer cannot tell the person's time at a form from
//! the server's time at work, so it is set out of reach and this clock is the call's.

use std::future::Future;
use std::time::{Duration, Instant};

use switchboard_core::CallResult;
use tokio::sync::mpsc;

use crate::{SessionError, Upcall};

/// How far past the call's own timeout the session's timer is set, so that it never fires first.
const OUT_OF_REACH: Duration = Duration::from_secs(24 * 3600);

/// Run the relayed call that `start` begins (given the session timeout to use and where the
/// server's upcalls go), handing each upcall to `answer` as it comes; the clock stops while
/// `answer` runs. After `timeout` of the call's own time it is dropped, which cancels it on the
/// wire, and the result is [`SessionError::Timeout`] naming `server` and `tool`. Progress that
/// arrived together with the result goes to `answer` before this returns; a request still
/// unanswered then gets the session's default answer.
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
    let mut left = timeout;
    let result = loop {
        let waiting = Instant::now();
        tokio::select! {
            // The result first: once it is here, upcalls still queued are drained below.
            biased;
            result = &mut call => break result,
            Some(upcall) = upcalls.recv() => {
                left = left.saturating_sub(waiting.elapsed());
                answer(upcall).await;
            }
            () = tokio::time::sleep(left) => break Err(SessionError::Timeout {
                server: server.to_string(),
                tool: tool.to_string(),
                after: timeout,
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
                stray: None,
            } => {
                assert_eq!((server.as_str(), tool.as_str()), ("slow", "wait"));
                assert_eq!(after, Duration::from_millis(100));
            }
            other => panic!("expected a timeout, got {other:?}"),
        }
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
