//! Approval: the async side of a `Decision::Ask`. `chat` asks the person at the terminal; `run`
//! declines unless started with `--yes`.

use futures::future::BoxFuture;
use serde_json::Value;

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

/// Something that can answer an approval request. Implementations that talk to a person must
/// serialize their questions themselves: parallel tool uses may ask at the same time.
pub trait Approver: Send + Sync {
    /// Ask.
    fn approve<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, Approval>;
}

/// Approves everything (`run --yes`).
#[derive(Clone, Copy, Debug, Default)]
pub struct ApproveAll;

impl Approver for ApproveAll {
    fn approve<'a>(&'a self, _: &'a ApprovalRequest) -> BoxFuture<'a, Approval> {
        Box::pin(async { Approval::Approved })
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
