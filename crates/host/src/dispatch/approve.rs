//! Approval: the async side of a `Decision::Ask`. `chat` asks the person at the terminal; `run`
//! declines unless started with `--yes`.

use futures::future::BoxFuture;
use serde_json::Value;

use crate::sampling::SamplingRequest;

/// What the user is asked about.
#[derive(Clone, Debug)]
pub struct ApprovalRequest {
    /// Configured server name.
    pub server: String,
    /// Tool name on that server.
    pub tool: String,
    /// The name the model used.
    pub public: String,
    /// The (validated) arguments.
    pub arguments: Value,
    /// Why approval is needed (from the policy).
    pub reason: String,
}

/// The answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Approval {
    /// Go ahead.
    Approved,
    /// Do not call; `why` is told to the model.
    Declined {
        /// One sentence.
        why: String,
    },
}

/// A server's request, while one of its tools runs, for the user to fill in a form (MCP
/// `elicitation/create`).
#[derive(Clone, Debug)]
pub struct ElicitationRequest {
    /// Configured server name.
    pub server: String,
    /// The tool whose call it came during.
    pub tool: String,
    /// The request's `params` as the server sent them (read them with
    /// [`switchboard_core::elicitation::Request::parse`]).
    pub params: Value,
}

/// Something that can answer an approval request. Implementations that talk to a person must
/// serialize their questions themselves: parallel tool uses may ask at the same time.
pub trait Approver: Send + Sync {
    /// Ask.
    fn approve<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, Approval>;

    /// Put a server's form to the person: the result for the server as wire JSON
    /// (`{"action": "accept", "content": {...}}`, `decline` or `cancel`), or `None` for the
    /// session's answer (declined; the default). A call's timeout stops while this runs.
    fn elicit<'a>(&'a self, request: &'a ElicitationRequest) -> BoxFuture<'a, Option<Value>> {
        let _ = request;
        Box::pin(async { None })
    }

    /// A server's progress on a call this approver's person is waiting for (`total` when the
    /// server knows it). Each report also starts the call's timeout again.
    fn progress(
        &self,
        server: &str,
        tool: &str,
        progress: f64,
        total: Option<f64>,
        message: Option<&str>,
    ) {
        let _ = (server, tool, progress, total, message);
    }

    /// Whether this approver decides servers' sampling requests (the model answering a server
    /// while its tool runs). When it does not, they are refused.
    fn samples(&self) -> bool {
        false
    }

    /// Whether the model may answer this server's request; an error says why not (told to
    /// the server).
    fn allow_sampling<'a>(
        &'a self,
        request: &'a SamplingRequest,
    ) -> BoxFuture<'a, Result<(), String>> {
        let _ = request;
        Box::pin(async { Err("nobody allowed it".to_string()) })
    }

    /// Whether the model's answer (`text`) goes back to the server; an error says why not.
    fn review_sampling<'a>(
        &'a self,
        request: &'a SamplingRequest,
        text: &'a str,
    ) -> BoxFuture<'a, Result<(), String>> {
        let _ = (request, text);
        Box::pin(async { Ok(()) })
    }
}

/// Approves everything (`run --yes`).
#[derive(Clone, Copy, Debug, Default)]
pub struct ApproveAll;

impl Approver for ApproveAll {
    fn approve<'a>(&'a self, _: &'a ApprovalRequest) -> BoxFuture<'a, Approval> {
        Box::pin(async { Approval::Approved })
    }

    fn samples(&self) -> bool {
        true
    }

    fn allow_sampling<'a>(&'a self, _: &'a SamplingRequest) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async { Ok(()) })
    }
}

/// Declines everything, with a fixed reason (`run` without `--yes`).
#[derive(Clone, Debug)]
pub struct DeclineAll {
    /// Told to the model.
    pub why: String,
}

impl Approver for DeclineAll {
    fn approve<'a>(&'a self, _: &'a ApprovalRequest) -> BoxFuture<'a, Approval> {
        let why = self.why.clone();
        Box::pin(async move { Approval::Declined { why } })
    }
}
