//! Dispatch: one tool use from the model → one tool result for the model, always.
//!
//! The order is the contract: resolve the public name by lookup (the [`ToolTable`]) → restore
//! and validate the arguments against the tool's original schema ([`Validators`]) → decide
//! ([`crate::policy::decide_call`]) → approve ([`Approver`]) → call with the server's timeout
//! ([`Caller`]; dropping the future cancels the call on the wire) → shape
//! ([`crate::shape`]). Every failure on the way is an [`Outcome`] with an `is_error` result
//! whose text tells the model what happened and what it can do; nothing here returns `Err`.

pub mod approve;
pub mod table;
pub mod validate;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use serde::Serialize;
use serde_json::Value;
use switchboard_core::time::human;
use switchboard_core::{CallResult, Catalog};
use switchboard_mcp::{SessionError, Sessions, Upcall, UpcallError, UpcallKind, call_answering};
use tokio::sync::mpsc;

use crate::config::ServerConfig;
use crate::pins::Withheld;
use crate::policy::{Decision, decide_call};
use crate::sampling::{self, Sampler};
use crate::shape::{ShapeOptions, Shaped, shape};

pub use approve::{
    Approval, ApprovalRequest, ApproveAll, Approver, DeclineAll, ElicitationRequest,
};
pub use table::{Route, ToolTable};
pub use validate::{Invalid, ValidArgs, Validators};

/// One tool use as the model sent it.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolUse {
    /// The provider's id for the tool use; the result is paired with it.
    pub id: String,
    /// The public name the model used.
    pub name: String,
    /// The arguments.
    pub input: ToolInput,
}

/// Arguments as received: JSON, or text that did not parse.
#[derive(Clone, Debug, PartialEq)]
pub enum ToolInput {
    /// Parsed JSON.
    Json(Value),
    /// The provider sent arguments that are not JSON (OpenAI sends a string).
    Unparsed {
        /// The text as received.
        raw: String,
        /// The parser's message.
        error: String,
    },
}

/// What became of one tool use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// The tool ran and succeeded.
    Ok,
    /// The tool ran and reported an error (`isError`).
    ToolError,
    /// No tool by that name was ever sent.
    UnknownTool,
    /// The tool was sent earlier and has since been removed.
    NoLongerAvailable,
    /// The arguments did not parse or did not match the schema.
    InvalidArguments,
    /// The configuration does not allow the call.
    Denied,
    /// The user (or `run` without `--yes`) declined the call.
    Declined,
    /// The server has no live session.
    ServerUnavailable,
    /// The call took longer than the server's call timeout.
    TimedOut,
    /// The server exited or hung up while the call was in flight.
    ServerClosed,
    /// The server answered with a JSON-RPC error.
    RpcError,
    /// The server answered with something that is not a tool result.
    BadReply,
    /// Not dispatched: the turn limit was reached first.
    NotRun,
    /// Withheld: the server changed the tool's definition since it was pinned
    /// (`pin = "enforce"`), and the user has not approved the change.
    PinChanged,
}

impl Status {
    /// The status as `--json` and the README spell it (`timed_out`, `no_longer_available`).
    pub fn as_str(self) -> String {
        match serde_json::to_value(self) {
            Ok(serde_json::Value::String(s)) => s,
            _ => format!("{self:?}"),
        }
    }
}

/// The result of one tool use, paired by id.
#[derive(Clone, Debug, Serialize)]
pub struct Outcome {
    /// The tool use's id.
    pub id: String,
    /// The public name the model used.
    pub name: String,
    /// The server, when the name resolved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    /// The tool's name on the server, when the name resolved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The arguments as the model sent them (a string when they did not parse).
    pub arguments: Value,
    /// What happened.
    pub status: Status,
    /// What the model receives.
    pub result: Shaped,
    /// Wall time in milliseconds.
    pub elapsed_ms: u64,
    /// How the result breaks the tool's output schema, when it does (the server must send
    /// `structuredContent` matching it). For the person running the host: the model never
    /// sees output schemas, and gets the result as it came.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_schema_problem: Option<String>,
}

/// Calls a tool on a server. Implemented by [`Sessions`]; tests use fakes.
pub trait Caller: Send + Sync {
    /// Call `tool` on `server` with validated arguments, giving up after `timeout`.
    fn call<'a>(
        &'a self,
        server: &'a str,
        tool: &'a str,
        args: ValidArgs,
        timeout: Duration,
    ) -> BoxFuture<'a, Result<CallResult, SessionError>>;

    /// [`Self::call`], with what the server sends about the call meanwhile (its progress, its
    /// requests for elicitation or sampling) going to `upcalls`. By default nothing is.
    fn call_relayed<'a>(
        &'a self,
        server: &'a str,
        tool: &'a str,
        args: ValidArgs,
        timeout: Duration,
        upcalls: mpsc::UnboundedSender<Upcall>,
    ) -> BoxFuture<'a, Result<CallResult, SessionError>> {
        drop(upcalls);
        self.call(server, tool, args, timeout)
    }

    /// `e` with what the caller knows about it added (see [`Sessions::explained`]); as it
    /// is by default.
    fn explained(&self, server: &str, e: SessionError) -> SessionError {
        let _ = server;
        e
    }
}

impl Caller for Sessions {
    fn call_relayed<'a>(
        &'a self,
        server: &'a str,
        tool: &'a str,
        args: ValidArgs,
        timeout: Duration,
        upcalls: mpsc::UnboundedSender<Upcall>,
    ) -> BoxFuture<'a, Result<CallResult, SessionError>> {
        Box::pin(self.call_tool_relayed_with_timeout(
            server,
            tool,
            args.into_inner(),
            timeout,
            upcalls,
        ))
    }

    fn call<'a>(
        &'a self,
        server: &'a str,
        tool: &'a str,
        args: ValidArgs,
        timeout: Duration,
    ) -> BoxFuture<'a, Result<CallResult, SessionError>> {
        Box::pin(self.call_tool_with_timeout(server, tool, args.into_inner(), timeout))
    }

    fn explained(&self, server: &str, e: SessionError) -> SessionError {
        Sessions::explained(self, server, e)
    }
}

/// Everything one dispatch needs. Borrowed for the duration of one batch of tool uses.
pub struct Dispatcher<'a> {
    /// The names the model was sent.
    pub table: &'a ToolTable,
    /// The catalog now (it may have changed since the tools array was sent).
    pub catalog: &'a Catalog,
    /// Tools withheld because their definition changed since it was pinned.
    pub withheld: &'a Withheld,
    /// Server configs (policy, limits, timeouts).
    pub servers: &'a [ServerConfig],
    /// Where calls go.
    pub caller: &'a dyn Caller,
    /// Who answers `Ask`.
    pub approver: &'a dyn Approver,
    /// Compiled schemas.
    pub validators: &'a Validators,
    /// The dialect accepts images in tool results.
    pub images: bool,
    /// Where full texts of cut results are written.
    pub spill_dir: PathBuf,
    /// Who answers a server's sampling request, when the approver allows one.
    pub sampler: Option<&'a dyn Sampler>,
}

/// How many close names an unknown-tool result lists.
const SUGGESTIONS: usize = 3;

impl Dispatcher<'_> {
    /// Dispatch every tool use concurrently; outcomes come back in the order given.
    pub async fn dispatch_all(&self, uses: &[ToolUse]) -> Vec<Outcome> {
        futures::future::join_all(uses.iter().map(|u| self.dispatch(u))).await
    }

    /// Dispatch one tool use. Never fails: every problem is an `is_error` outcome.
    pub async fn dispatch(&self, tool_use: &ToolUse) -> Outcome {
        let started = Instant::now();
        let arguments = match &tool_use.input {
            ToolInput::Json(v) => v.clone(),
            ToolInput::Unparsed { raw, .. } => Value::String(raw.clone()),
        };
        let mut outcome = Outcome {
            id: tool_use.id.clone(),
            name: tool_use.name.clone(),
            server: None,
            tool: None,
            arguments,
            status: Status::Ok,
            result: Shaped::error(""),
            elapsed_ms: 0,
            output_schema_problem: None,
        };
        let (status, result) = self.run(tool_use, &mut outcome).await;
        outcome.status = status;
        outcome.result = result;
        outcome.elapsed_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        outcome
    }

    async fn run(&self, tool_use: &ToolUse, outcome: &mut Outcome) -> (Status, Shaped) {
        let name = tool_use.name.as_str();
        // 1. Resolve by lookup.
        let Some(route) = self.table.route(name) else {
            if let Some(old) = self.table.retired(name) {
                outcome.server = Some(old.server.clone());
                outcome.tool = Some(old.tool.clone());
                if let Some(reason) = self.withheld.reason(&old.server, &old.tool) {
                    return pin_changed(name, reason);
                }
                return (
                    Status::NoLongerAvailable,
                    Shaped::error(format!(
                        "Tool \"{name}\" is no longer available: server \"{}\" removed \"{}\" from its tool list. Use one of the tools you have now.",
                        old.server, old.tool
                    )),
                );
            }
            let close = self.table.closest(name, SUGGESTIONS);
            let hint = if close.is_empty() {
                format!(
                    "There are {} tools; call one of them by its exact name.",
                    self.table.len()
                )
            } else {
                format!("Did you mean: {}?", close.join(", "))
            };
            return (
                Status::UnknownTool,
                Shaped::error(format!("There is no tool named \"{name}\". {hint}")),
            );
        };
        outcome.server = Some(route.server.clone());
        outcome.tool = Some(route.tool.clone());
        let server = route.server.as_str();
        let tool_name = route.tool.as_str();
        let gone = || {
            (
                Status::NoLongerAvailable,
                Shaped::error(format!(
                    "Tool \"{name}\" is no longer available: server \"{server}\" removed \"{tool_name}\" from its tool list. Use one of the tools you have now."
                )),
            )
        };
        if let Some(reason) = self.withheld.reason(server, tool_name) {
            return pin_changed(name, reason);
        }
        let Some(entry) = self.catalog.tool(server, tool_name) else {
            return gone();
        };
        let Some(config) = self.servers.iter().find(|s| s.name() == server) else {
            return gone();
        };
        // 2. Validate against the original schema.
        let raw = match &tool_use.input {
            ToolInput::Json(v) => v.clone(),
            ToolInput::Unparsed { error, .. } => {
                return (
                    Status::InvalidArguments,
                    Shaped::error(format!(
                        "The arguments for \"{name}\" are not valid JSON ({error}). Send them again as one JSON object."
                    )),
                );
            }
        };
        let restored = switchboard_providers::arguments::restore(
            &entry.def.input_schema,
            route.strict,
            route.wrapped_root,
            raw,
        );
        let args = match self.validators.check(&entry.def.input_schema, restored) {
            Ok(a) => a,
            Err(Invalid(problems)) => {
                return (
                    Status::InvalidArguments,
                    Shaped::error(format!(
                        "Invalid arguments for \"{name}\"; the tool was not called. {}. Fix the arguments and call it again.",
                        problems.join("; ")
                    )),
                );
            }
        };
        // 3. Decide, 4. approve.
        match decide_call(config, &entry.def, Some(args.as_map())) {
            Decision::Allow => {}
            Decision::Refuse { reason } => {
                return (
                    Status::Denied,
                    Shaped::error(format!(
                        "The call was not made: {}. Do not retry it with these arguments.",
                        reason.trim_end_matches('.')
                    )),
                );
            }
            Decision::Deny { reason } => {
                return (
                    Status::Denied,
                    Shaped::error(format!(
                        "The call was not made: {reason}. Do not retry it; continue without this tool."
                    )),
                );
            }
            Decision::Ask { reason } => {
                let request = ApprovalRequest {
                    server: server.to_string(),
                    tool: tool_name.to_string(),
                    public: name.to_string(),
                    arguments: Value::Object(args.as_map().clone()),
                    reason,
                };
                if let Approval::Declined { why } = self.approver.approve(&request).await {
                    return (
                        Status::Declined,
                        Shaped::error(format!(
                            "The user declined this call to \"{name}\", so it was not made ({why}). Do not retry it unless the user asks; continue without it or tell the user what you wanted to do."
                        )),
                    );
                }
            }
        }
        // 5. Call: relayed, so its progress keeps it alive (and reaches the approver's
        // display) and what the server asks meanwhile is answered, by the approver or the model
        // when they can, else as if nobody were there.
        let timeout = config.spec.call_timeout;
        let called = self.call_asking(server, tool_name, args, timeout).await;
        let result = match called {
            Ok(r) => r,
            Err(e) => return failure(name, &e),
        };
        if let Some(schema) = &entry.def.output_schema {
            outcome.output_schema_problem = self.validators.check_output(schema, &result);
            if let Some(problem) = &outcome.output_schema_problem {
                tracing::warn!("server {server:?}, tool {tool_name:?}: {problem}");
            }
        }
        // 6. Shape.
        let opts = ShapeOptions {
            images: self.images,
            limit_tokens: config.result_limit(tool_name),
            spill_dir: self.spill_dir.clone(),
            label: format!("{server}-{tool_name}"),
        };
        let shaped = shape(&result, &opts);
        let status = if result.is_error {
            Status::ToolError
        } else {
            Status::Ok
        };
        (status, shaped)
    }
}

/// A call to a tool withheld by its pin.
fn pin_changed(name: &str, reason: &str) -> (Status, Shaped) {
    (
        Status::PinChanged,
        Shaped::error(format!(
            "Tool \"{name}\" was not called: {reason}. Continue without it, and tell the user if you needed it."
        )),
    )
}

impl Dispatcher<'_> {
    /// A call whose server may ask something meanwhile: its elicitation requests go to the
    /// approver, its sampling requests to the model when the approver allows them, and
    /// `timeout` counts only the time nobody is answering one (the server's own timer would
    /// count the person's time at the form, and the model's).
    async fn call_asking(
        &self,
        server: &str,
        tool: &str,
        args: ValidArgs,
        timeout: Duration,
    ) -> Result<CallResult, SessionError> {
        call_answering(
            server,
            tool,
            timeout,
            |ceiling, upcalls| {
                self.caller
                    .call_relayed(server, tool, args, ceiling, upcalls)
            },
            |upcall| self.answer(server, tool, upcall),
        )
        .await
        .map_err(|e| self.caller.explained(server, e))
    }

    /// One thing the server sent during a call: a form goes to the approver, progress to the
    /// approver's display, a sampling request to the model when the approver allows it.
    async fn answer(&self, server: &str, tool: &str, upcall: Upcall) {
        match upcall {
            Upcall::Request {
                kind: UpcallKind::Elicitation,
                params,
                reply,
            } => {
                let request = ElicitationRequest {
                    server: server.to_string(),
                    tool: tool.to_string(),
                    params,
                };
                if let Some(answer) = self.approver.elicit(&request).await {
                    let _ = reply.send(Ok(answer));
                }
            }
            Upcall::Progress {
                progress,
                total,
                message,
            } => {
                self.approver
                    .progress(server, tool, progress, total, message.as_deref());
            }
            Upcall::Request {
                kind: UpcallKind::Sampling,
                params,
                reply,
            } => {
                if let Some(sampler) = self.sampler.filter(|_| self.approver.samples()) {
                    let _ = reply.send(self.sample(sampler, server, tool, &params).await);
                }
            }
            _ => {}
        }
    }

    /// A server's sampling request: read, allowed by the approver, sent to the model, its
    /// answer reviewed; each refusal said to the server (-1 is MCP's "the user rejected it").
    async fn sample(
        &self,
        sampler: &dyn Sampler,
        server: &str,
        tool: &str,
        params: &Value,
    ) -> Result<Value, UpcallError> {
        let refused = |code: i32, message: String| UpcallError { code, message };
        let policy = self
            .servers
            .iter()
            .find(|s| s.name() == server)
            .map(|s| s.sampling.clone())
            .unwrap_or_default();
        let request = sampling::request_for(&policy, server, tool, params)
            .map_err(|(code, message)| refused(code, message))?;
        self.approver
            .allow_sampling(&request)
            .await
            .map_err(|why| refused(-1, format!("the user did not let the model answer: {why}")))?;
        let reply = sampler
            .sample(&request)
            .await
            .map_err(|why| refused(-32603, format!("the model did not answer: {why}")))?;
        let model = request.model.as_deref().unwrap_or(sampler.model());
        let answer = sampling::result(&reply, model, !request.tools.is_empty());
        let text = sampling::answer_text(&answer);
        self.approver
            .review_sampling(&request, &text)
            .await
            .map_err(|why| refused(-1, format!("the user kept the model's answer back: {why}")))?;
        Ok(answer)
    }
}

/// MCP's "URL elicitation required" error: the call needs the user to visit pages first.
const URL_ELICITATION_REQUIRED: i32 = -32042;

/// The pages a -32042 error's `data.elicitations` sends the user to, each with its message.
fn pages(data: &Value) -> Vec<String> {
    data.get("elicitations")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|e| {
            let url = e.get("url").and_then(Value::as_str)?;
            Some(match e.get("message").and_then(Value::as_str) {
                Some(m) if !m.trim().is_empty() => format!("{url} (\"{}\")", m.trim()),
                _ => url.to_string(),
            })
        })
        .collect()
}

/// A session error as a result the model can act on.
pub(crate) fn failure(name: &str, e: &SessionError) -> (Status, Shaped) {
    let server = e.server();
    match e {
        SessionError::Timeout {
            after,
            stray: Some(stray),
            ..
        } => (
            Status::TimedOut,
            Shaped::error(format!(
                "The call to \"{name}\" timed out after {} and was cancelled; {stray}. Trying again will likely fail the same way: continue without it, and tell the user server \"{server}\" has this bug.",
                human(*after)
            )),
        ),
        SessionError::Timeout {
            after,
            quiet: Some(quiet),
            ..
        } => (
            Status::TimedOut,
            Shaped::error(format!(
                "The call to \"{name}\" reported progress, then nothing for {}; it was cancelled after {} in all. Try again with a smaller request, or continue without it.",
                human(*quiet),
                human(*after)
            )),
        ),
        SessionError::Timeout { after, .. } => (
            Status::TimedOut,
            Shaped::error(format!(
                "The call to \"{name}\" timed out after {} and was cancelled. Try again with a smaller request, or continue without it.",
                human(*after)
            )),
        ),
        SessionError::Closed { detail, .. } => (
            Status::ServerClosed,
            Shaped::error(format!(
                "Server \"{server}\" stopped while running \"{name}\" ({detail}); the call's effect is unknown. The server is being restarted; check the state before trying again."
            )),
        ),
        SessionError::Rpc {
            code: URL_ELICITATION_REQUIRED,
            message,
            data: Some(data),
            ..
        } if !pages(data).is_empty() => (
            Status::RpcError,
            Shaped::error(format!(
                "Server \"{server}\" needs the user to open {} before \"{name}\" can run ({message}). Tell the user, with the address as given; once they have, call the tool again with the same arguments.",
                pages(data).join(" and ")
            )),
        ),
        SessionError::Rpc { code, message, .. } => (
            Status::RpcError,
            Shaped::error(format!(
                "Server \"{server}\" returned an error for \"{name}\": {message} (JSON-RPC error {code})."
            )),
        ),
        SessionError::Protocol { detail, .. } => (
            Status::BadReply,
            Shaped::error(format!(
                "Server \"{server}\" sent a reply to \"{name}\" that switchboard cannot use: {detail}."
            )),
        ),
        other => (
            Status::ServerUnavailable,
            Shaped::error(format!(
                "Server \"{server}\" is not available, so \"{name}\" was not called: {other}. Continue without it or try again later."
            )),
        ),
    }
}

#[cfg(test)]
mod tests;
