//! Safety-annotation rules: the hints a host uses to decide what needs approval must match what
//! the tool says it does.

use super::{Effect, ToolCtx};
use crate::finding::{Finding, Severity};
use crate::rule::{Family, RuleDoc};
use crate::words::{is_verb_form, leading_verb, name_words};

pub const DESTRUCTIVE_WITHOUT_HINT: RuleDoc = RuleDoc {
    id: "destructive-without-hint",
    family: Family::Safety,
    severity: Severity::Error,
    summary: "The name or description says the tool deletes, removes, closes, drops, overwrites, sends or pays, but `destructiveHint` is not true.",
    rationale: "Hosts decide which calls need the user's approval from annotations. A tool that destroys data \
        or spends money without `destructiveHint: true` can be auto-approved by a host that trusts the \
        hints, and the user loses something they were never asked about. Declaring `readOnlyHint: true` on \
        such a tool is worse: it invites auto-approval.",
    good_example: r#"{"name": "close_ticket", "description": "Close a ticket; it can be reopened.", "annotations": {"readOnlyHint": false, "destructiveHint": true, "idempotentHint": true}}"#,
};

pub const CONTRADICTORY_HINTS: RuleDoc = RuleDoc {
    id: "read-only-and-destructive",
    family: Family::Safety,
    severity: Severity::Error,
    summary: "`readOnlyHint` and `destructiveHint` are both true.",
    rationale: "A tool that only reads cannot destroy anything; one of the two hints is wrong, and a host \
        cannot tell which. MCP ignores `destructiveHint` when `readOnlyHint` is true, so the tool may be \
        auto-approved.",
    good_example: r#"{"annotations": {"readOnlyHint": false, "destructiveHint": true}}"#,
};

pub const WRITE_WITHOUT_ANNOTATIONS: RuleDoc = RuleDoc {
    id: "write-without-annotations",
    family: Family::Safety,
    severity: Severity::Warning,
    summary: "A tool whose name or description says it changes things declares no annotations at all.",
    rationale: "Without hints a host falls back to the spec defaults (not read-only, destructive) and asks \
        every time, or, worse, trusts its own guess. Declaring `readOnlyHint`, `destructiveHint` and \
        `idempotentHint` lets hosts ask exactly when it matters.",
    good_example: r#"{"name": "add_label", "annotations": {"readOnlyHint": false, "destructiveHint": false, "idempotentHint": true}}"#,
};

pub const DOCS: &[RuleDoc] = &[
    DESTRUCTIVE_WITHOUT_HINT,
    CONTRADICTORY_HINTS,
    WRITE_WITHOUT_ANNOTATIONS,
];

/// Verbs whose effect cannot be undone or costs something (the issue's list plus synonyms).
pub const DESTRUCTIVE_VERBS: &[&str] = &[
    "delete",
    "remove",
    "close",
    "drop",
    "overwrite",
    "send",
    "pay",
    "destroy",
    "purge",
    "erase",
    "wipe",
    "truncate",
    "revoke",
    "terminate",
    "kill",
    "uninstall",
    "unpublish",
    "rm",
    "del",
];

/// Destructive verbs that are also common nouns or adjectives.
const AMBIGUOUS: &[&str] = &["close", "drop", "send", "pay", "kill", "rm", "del"];

fn destructive_word(word: &str) -> Option<&'static str> {
    DESTRUCTIVE_VERBS
        .iter()
        .copied()
        .find(|v| is_verb_form(word, v))
}

pub fn check(ctx: &ToolCtx, out: &mut Vec<Finding>) {
    let ann = ctx.tool.annotations.as_ref();
    let read_only = ann.and_then(|a| a.read_only_hint);
    let destructive = ann.and_then(|a| a.destructive_hint);
    if read_only == Some(true) && destructive == Some(true) {
        out.push(ctx.finding(
            &CONTRADICTORY_HINTS,
            "/annotations",
            "readOnlyHint and destructiveHint are both true",
            "keep `destructiveHint: true` and set `readOnlyHint: false` if the tool changes anything; otherwise drop `destructiveHint`",
        ));
    }
    if destructive != Some(true) {
        // The name is the strongest evidence; the description's leading verb counts only when
        // the server has not declared the tool read-only (a read-only `remove_background` that
        // returns a new image is not destructive).
        let from_name = name_words(&ctx.tool.name)
            .iter()
            .enumerate()
            .find_map(|(i, w)| {
                let verb = destructive_word(w)?;
                // `pay_per_click_ads`, `get_close_price`: these double as nouns and adjectives,
                // so they count only near the start (after at most a prefix such as `zia_`).
                (i <= 1 || !AMBIGUOUS.contains(&verb)).then_some((verb, "/name", "name"))
            });
        let from_desc = || {
            (read_only != Some(true))
                .then(|| leading_verb(ctx.description()))
                .flatten()
                .and_then(|w| destructive_word(&w))
                .map(|v| (v, "/description", "description"))
        };
        if let Some((verb, pointer, what)) = from_name.or_else(from_desc) {
            let declared = match (read_only, destructive) {
                (Some(true), _) => "declares readOnlyHint: true",
                (_, Some(false)) => "declares destructiveHint: false",
                _ => "does not declare destructiveHint",
            };
            out.push(ctx.finding(
                &DESTRUCTIVE_WITHOUT_HINT,
                pointer,
                format!("the {what} says the tool does `{verb}`, but it {declared}"),
                "set annotations `\"destructiveHint\": true` and `\"readOnlyHint\": false` so hosts ask before calling it",
            ));
        }
    }
    let no_hints = ann.is_none_or(|a| {
        a.read_only_hint.is_none()
            && a.destructive_hint.is_none()
            && a.idempotent_hint.is_none()
            && a.open_world_hint.is_none()
    });
    if no_hints && ctx.effect == Effect::Writes {
        out.push(ctx.finding(
            &WRITE_WITHOUT_ANNOTATIONS,
            "",
            "the tool changes things but declares no annotations",
            "add `annotations` with `readOnlyHint: false` and explicit `destructiveHint` and `idempotentHint`",
        ));
    }
}
