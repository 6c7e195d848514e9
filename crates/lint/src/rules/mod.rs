//! The rules, one module per family, and what they share: the tool being linted, in context,
//! and a guess at whether it changes things.

pub mod contract;
pub mod poisoning;
pub mod portability;
pub mod rent;
pub mod safety;

use serde_json::Value;
use switchboard_core::{Catalog, Tool};

use crate::LintOptions;
use crate::finding::Finding;
use crate::rule::RuleDoc;
use crate::words::{leading_verb, name_words};

/// One tool being linted, with everything a rule may need to know about its surroundings.
pub struct ToolCtx<'a> {
    /// Configured server name.
    pub server: &'a str,
    /// The definition as received.
    pub tool: &'a Tool,
    /// The definition as JSON (pointers in findings point into this).
    pub def: Value,
    /// What the tool does to the world, as far as can be told.
    pub effect: Effect,
    /// The whole catalog (collisions, references to other servers' tools).
    pub catalog: &'a Catalog,
    /// Thresholds and dialects.
    pub opts: &'a LintOptions,
}

impl ToolCtx<'_> {
    /// A finding of `rule` on this tool.
    pub fn finding(
        &self,
        rule: &RuleDoc,
        pointer: impl Into<String>,
        message: impl Into<String>,
        fix: impl Into<String>,
    ) -> Finding {
        Finding::new(
            rule,
            self.server,
            Some(&self.tool.name),
            pointer,
            message,
            fix,
        )
    }

    /// The description, or "".
    pub fn description(&self) -> &str {
        self.tool.description.as_deref().unwrap_or("")
    }
}

/// What a tool does to the world.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effect {
    /// Declared or named as a reader.
    ReadOnly,
    /// Declared or named as something that changes state.
    Writes,
    /// Nothing says either way.
    Unknown,
}

/// Verbs that mean the tool only reads.
const READ_VERBS: &[&str] = &[
    "get",
    "list",
    "search",
    "find",
    "read",
    "fetch",
    "query",
    "describe",
    "show",
    "view",
    "count",
    "check",
    "lookup",
    "look",
    "retrieve",
    "browse",
    "explore",
    "inspect",
    "analyze",
    "analyse",
    "validate",
    "preview",
    "summarize",
    "explain",
    "compare",
    "calculate",
    "convert",
    "translate",
    "estimate",
    "diff",
    "scan",
    "ping",
    "whoami",
    "download",
    "resolve",
    "lint",
    "test",
    "verify",
    "render",
    "recommend",
    "suggest",
    "parse",
    "extract",
    "load",
    "peek",
];

/// Verbs that mean the tool changes state wherever they appear in the name (the destructive
/// ones are in `safety`).
const WRITE_VERBS: &[&str] = &[
    "create",
    "update",
    "add",
    "write",
    "edit",
    "modify",
    "merge",
    "move",
    "rename",
    "upload",
    "publish",
    "execute",
    "exec",
    "cancel",
    "approve",
    "reject",
    "assign",
    "unassign",
    "archive",
    "restore",
    "insert",
    "upsert",
    "restart",
    "deploy",
    "install",
    "enable",
    "disable",
    "reset",
    "submit",
    "invite",
    "unlock",
    "unblock",
    "unstar",
    "follow",
    "unfollow",
    "dismiss",
    "reopen",
    "replace",
    "buy",
    "sell",
    "refund",
    "grant",
    "subscribe",
    "unsubscribe",
    "activate",
    "deactivate",
    "suspend",
    "unsuspend",
    "rerun",
    "retry",
    "unlink",
    "attach",
    "detach",
    "untag",
    "unpin",
    "invoke",
    "append",
];

/// Verbs that are also common nouns (`rpc_block_info`, `order_status`, `get_star_count`): they
/// mean a write only as the first word of the name.
const AMBIGUOUS_WRITE_VERBS: &[&str] = &[
    "set", "post", "put", "patch", "run", "start", "stop", "block", "lock", "star", "order",
    "book", "share", "tag", "label", "link", "pin", "comment", "reply", "react", "request", "mark",
    "call", "type", "click", "fill", "press", "select", "drag", "scroll", "navigate", "schedule",
    "charge", "transfer", "clear", "sync", "import", "trigger", "commit", "push", "apply", "save",
    "store", "fork",
];

/// What `tool` does, from its annotations, then the first verb of its name, then the first
/// verb of its description.
pub fn effect(tool: &Tool) -> Effect {
    let ann = tool.annotations.as_ref();
    if ann.and_then(|a| a.read_only_hint) == Some(true) {
        return Effect::ReadOnly;
    }
    if ann.and_then(|a| a.destructive_hint) == Some(true)
        || ann.and_then(|a| a.read_only_hint) == Some(false)
    {
        return Effect::Writes;
    }
    let classify = |w: &str, first: bool| {
        if safety::DESTRUCTIVE_VERBS.contains(&w)
            || WRITE_VERBS.contains(&w)
            || (first && AMBIGUOUS_WRITE_VERBS.contains(&w))
        {
            Some(Effect::Writes)
        } else if READ_VERBS.contains(&w) {
            Some(Effect::ReadOnly)
        } else {
            None
        }
    };
    // The first verb of the name decides: `get_or_create_x` reads first, `issue_delete` deletes.
    if let Some(e) = name_words(&tool.name)
        .iter()
        .enumerate()
        .find_map(|(i, w)| classify(w, i == 0))
    {
        return e;
    }
    let verb = tool.description.as_deref().and_then(leading_verb);
    verb.and_then(|v| {
        classify(&v, true)
            .or_else(|| v.strip_suffix("es").and_then(|w| classify(w, true)))
            .or_else(|| v.strip_suffix('s').and_then(|w| classify(w, true)))
    })
    .unwrap_or(Effect::Unknown)
}
