//! Tool calls run as tasks (MCP 2025-11-25, experimental): a tool whose definition says
//! `execution.taskSupport: "required"` refuses a plain `tools/call`. Its call asks for a task
//! (`params.task.ttl`), gets the task's id back at once, and then waits on `tasks/result`,
//! which the server answers with the tool's result (or error) once the task ends; what the
//! server asks meanwhile (an elicitation tied to the task) arrives while that request is open
//! and goes where the call's requests go. With a caller listening, the task's status is polled
//! with `tasks/get` at the server's `pollInterval` and each new `statusMessage` is passed on as
//! progress, as is the progress the server reports under the call's own token (the call stays
//! registered with its relay while the task runs; the caller's requests count as one call). A
//! call that times out or is abandoned cancels the task (`tasks/cancel`).
//!
//! rmcp models the later tasks extension (resultType `"task"`), not this revision's shape, so
//! the requests go out as custom requests and the task handle is read from wire JSON.

use std::sync::Arc;
use std::time::Duration;

use rmcp::RoleClient;
use rmcp::model::{ClientRequest, CustomRequest, ServerResult};
use rmcp::service::{Peer, ServiceError};
use serde_json::{Map, Value, json};
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::relay::Upcall;
use crate::request::{self, Relay};
use crate::roots::Offer;

/// How long the server is asked to keep a task beyond the call's own timeout, so its result is
/// still there when `tasks/result` asks for it at the last moment.
const TTL_MARGIN: Duration = Duration::from_secs(60);

/// Status polling bounds: a server's `pollInterval` is taken within them (1 s without one).
const POLL_MIN: Duration = Duration::from_millis(200);
const POLL_MAX: Duration = Duration::from_secs(10);
const POLL_DEFAULT: Duration = Duration::from_secs(1);

/// A task handle a server answered a task-augmented call with.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Created {
    /// The server's id for the task.
    pub(crate) id: String,
    /// How often the server suggests polling.
    pub(crate) poll: Duration,
    /// The status message it came with, if any.
    pub(crate) message: Option<String>,
}

/// `tools/call` asking for a task kept at least `timeout` (plus a margin).
pub(crate) fn call_request(
    tool: &str,
    args: Map<String, Value>,
    timeout: Duration,
) -> ClientRequest {
    let ttl = u64::try_from(timeout.saturating_add(TTL_MARGIN).as_millis()).unwrap_or(u64::MAX);
    ClientRequest::CustomRequest(CustomRequest::new(
        "tools/call",
        Some(json!({"name": tool, "arguments": args, "task": {"ttl": ttl}})),
    ))
}

fn task_request(method: &str, id: &str) -> ClientRequest {
    ClientRequest::CustomRequest(CustomRequest::new(method, Some(json!({"taskId": id}))))
}

/// The task handle in a `CreateTaskResult` (`{"task": {"taskId", ...}}`); `None` when the
/// result is something else (a server that answered the call at once).
pub(crate) fn created(result: &ServerResult) -> Option<Created> {
    let ServerResult::CustomResult(custom) = result else {
        return None;
    };
    let task = custom.0.get("task")?;
    let id = task.get("taskId")?.as_str()?.to_string();
    Some(Created {
        id,
        poll: poll_interval(task),
        message: status_message(task),
    })
}

fn poll_interval(task: &Value) -> Duration {
    said_interval(task).unwrap_or(POLL_DEFAULT)
}

/// The poll interval a task state names, within bounds. rmcp reads a `tasks/get` answer as
/// the later extension's task, whose field is `pollIntervalMs`, so this revision's
/// `pollInterval` is lost on the way; the interval then stays as it was.
fn said_interval(task: &Value) -> Option<Duration> {
    ["pollInterval", "pollIntervalMs"]
        .iter()
        .find_map(|k| task.get(*k).and_then(Value::as_u64))
        .map(|ms| Duration::from_millis(ms).clamp(POLL_MIN, POLL_MAX))
}

fn status_message(task: &Value) -> Option<String> {
    task.get("statusMessage")
        .and_then(Value::as_str)
        .filter(|m| !m.trim().is_empty())
        .map(str::to_string)
}

/// Wait for the task's result (at most `timeout`): the tool's result as `tasks/result` returns
/// it. Status messages go to `progress` as they change; the task is cancelled if this fails or
/// is dropped before the result is in.
pub(crate) async fn finish(
    peer: &Peer<RoleClient>,
    roots: &Arc<Offer>,
    task: Created,
    timeout: Duration,
    relay: Option<Relay<'_>>,
    progress: Option<&mpsc::UnboundedSender<Upcall>>,
) -> Result<ServerResult, ServiceError> {
    let mut guard = CancelTask {
        peer: peer.clone(),
        roots: roots.clone(),
        id: Some(task.id.clone()),
    };
    let now = Instant::now();
    let deadline = now.checked_add(timeout).unwrap_or(now + POLL_MAX);
    let waiting = request::send_relayed(
        peer,
        roots,
        task_request("tasks/result", &task.id),
        timeout,
        relay,
    );
    let result = match progress {
        None => waiting.await,
        Some(sink) => {
            tokio::pin!(waiting);
            tokio::select! {
                r = &mut waiting => r,
                () = watch(peer, roots, &task, deadline, sink) => waiting.await,
            }
        }
    };
    if result.is_ok() {
        guard.id = None;
    }
    result
}

/// Poll the task's status until it ends (or the deadline), passing each new status message
/// on as progress. Polling errors end the watch quietly: `tasks/result` still brings the end.
async fn watch(
    peer: &Peer<RoleClient>,
    roots: &Offer,
    task: &Created,
    deadline: Instant,
    sink: &mpsc::UnboundedSender<Upcall>,
) {
    let mut shown = 0u32;
    let mut last = None;
    let mut say = |message: Option<String>| {
        if message.is_some() && message != last {
            shown += 1;
            let _ = sink.send(Upcall::Progress {
                progress: f64::from(shown),
                total: None,
                message: message.clone(),
            });
            last = message;
        }
    };
    say(task.message.clone());
    let mut poll = task.poll;
    loop {
        if Instant::now() + poll >= deadline {
            return;
        }
        tokio::time::sleep(poll).await;
        let Ok(answer) = request::send(
            peer,
            roots,
            task_request("tasks/get", &task.id),
            poll.max(POLL_DEFAULT),
        )
        .await
        else {
            return;
        };
        let state = request::to_json(answer);
        say(status_message(&state));
        poll = said_interval(&state).unwrap_or(poll);
        if matches!(
            state.get("status").and_then(Value::as_str),
            Some("completed" | "failed" | "cancelled") | None
        ) {
            return;
        }
    }
}

/// Cancels the task (`tasks/cancel`) unless disarmed before drop: the call timed out, failed
/// or was abandoned while the task still ran.
struct CancelTask {
    peer: Peer<RoleClient>,
    roots: Arc<Offer>,
    id: Option<String>,
}

impl Drop for CancelTask {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else {
            return;
        };
        let (peer, roots) = (self.peer.clone(), self.roots.clone());
        request::in_background(async move {
            let _ = request::send(&peer, &roots, task_request("tasks/cancel", &id), POLL_MAX).await;
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::CustomResult;

    fn custom(v: Value) -> ServerResult {
        ServerResult::CustomResult(CustomResult(v))
    }

    #[test]
    fn a_task_handle_is_read_from_the_wire() {
        let r = custom(json!({"task": {"taskId": "t-1", "status": "working",
            "statusMessage": "Gathering sources...", "pollInterval": 5000,
            "createdAt": "2025-11-25T10:30:00Z", "lastUpdatedAt": "2025-11-25T10:30:00Z", "ttl": 60000}}));
        assert_eq!(
            created(&r),
            Some(Created {
                id: "t-1".into(),
                poll: Duration::from_secs(5),
                message: Some("Gathering sources...".into()),
            })
        );
        // Poll intervals are kept within bounds; a missing one is a second.
        let fast = custom(json!({"task": {"taskId": "t", "pollInterval": 1}}));
        assert_eq!(created(&fast).unwrap().poll, POLL_MIN);
        let slow = custom(json!({"task": {"taskId": "t", "pollInterval": 86_400_000u64}}));
        assert_eq!(created(&slow).unwrap().poll, POLL_MAX);
        let none = custom(json!({"task": {"taskId": "t", "statusMessage": " "}}));
        assert_eq!(created(&none).unwrap().poll, POLL_DEFAULT);
        assert_eq!(created(&none).unwrap().message, None);
    }

    #[test]
    fn a_tasks_get_answer_as_rmcp_reads_it_keeps_its_status() {
        let wire = json!({"taskId": "t-1", "status": "working", "statusMessage": "Analyzing...",
            "createdAt": "2025-11-25T10:30:00Z", "lastUpdatedAt": "2025-11-25T10:30:01Z",
            "ttl": 60000, "pollInterval": 3000});
        let read: ServerResult = serde_json::from_value(wire).unwrap();
        let state = request::to_json(read);
        assert_eq!(state["status"], "working", "{state}");
        assert_eq!(status_message(&state).as_deref(), Some("Analyzing..."));
        // rmcp drops `pollInterval` (its task type names it `pollIntervalMs`): the interval
        // the task was created with stays.
        assert_eq!(said_interval(&state), None, "{state}");
        let later = json!({"status": "working", "pollIntervalMs": 2000});
        assert_eq!(said_interval(&later), Some(Duration::from_secs(2)));
    }

    #[test]
    fn what_is_not_a_task_handle_is_left_alone() {
        for v in [
            json!({"content": []}),
            json!({"task": {"status": "working"}}),
            json!({"task": {"taskId": 7}}),
            json!({"task": "t-1"}),
        ] {
            assert_eq!(created(&custom(v.clone())), None, "{v}");
        }
        assert_eq!(created(&ServerResult::empty(())), None);
    }

    #[test]
    fn the_call_asks_for_a_task_that_outlives_its_timeout() {
        let mut args = Map::new();
        args.insert("topic".into(), json!("tides"));
        let ClientRequest::CustomRequest(r) =
            call_request("research", args, Duration::from_secs(30))
        else {
            panic!("not a custom request");
        };
        assert_eq!(r.method, "tools/call");
        assert_eq!(
            r.params,
            Some(
                json!({"name": "research", "arguments": {"topic": "tides"}, "task": {"ttl": 90000}})
            )
        );
    }
}
