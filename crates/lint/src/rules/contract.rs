//! Contract rules: the definition tells the model what the tool does and exactly what it
//! accepts, so the model calls it right the first time.

use regex::Regex;
use serde_json::Value;
use std::sync::LazyLock;

use super::{Effect, ToolCtx};
use crate::finding::{Finding, Severity};
use crate::rule::{Family, RuleDoc};
use crate::walk::{params, types};
use crate::words::{name_words, prose_words};

pub const MISSING_DESCRIPTION: RuleDoc = RuleDoc {
    id: "missing-description",
    family: Family::Contract,
    severity: Severity::Error,
    summary: "The tool has no description, or one too short to say what it does (warning when merely short).",
    rationale: "The description is the only thing the model reads to decide whether and how to call a tool. \
        Without it the model guesses from the name, picks the wrong tool, or never picks this one. An absent \
        or blank description is an error; one under 20 characters or 3 words is a warning.",
    good_example: r#"{"name": "get_ticket", "description": "Fetch one support ticket by its id, with its status, assignee and the last 20 messages."}"#,
};

pub const RESTATES_NAME: RuleDoc = RuleDoc {
    id: "description-restates-name",
    family: Family::Contract,
    severity: Severity::Warning,
    summary: "The description only repeats the tool's name in other words.",
    rationale: "\"get_user: Gets the user\" tells the model nothing the name did not. Say what comes back, \
        what the inputs mean, and when to use this tool rather than its neighbours.",
    good_example: r#"{"name": "get_user", "description": "Look up a user by login or numeric id; returns profile, teams and last sign-in."}"#,
};

pub const PARAM_DESCRIPTION: RuleDoc = RuleDoc {
    id: "parameter-missing-description",
    family: Family::Contract,
    severity: Severity::Warning,
    summary: "A parameter has no description.",
    rationale: "The model fills arguments from the parameter's name, type and description. Without a \
        description it has to guess the format, units and meaning (is `since` a date, a duration, an id?).",
    good_example: r#"{"since": {"type": "string", "format": "date-time", "description": "Only tickets updated after this instant (RFC 3339)."}}"#,
};

pub const OPEN_SCHEMA: RuleDoc = RuleDoc {
    id: "open-object-schema",
    family: Family::Contract,
    severity: Severity::Note,
    summary: "The input schema does not close itself with `additionalProperties: false` (warning on tools that write).",
    rationale: "An open object lets a model send arguments the tool silently ignores (a misspelt `dryRun`, an \
        invented `force`), and the call looks successful. Closing the schema makes argument validation reject \
        them so the model can correct itself. It matters most on tools that change things, where an ignored \
        safety argument does damage, so the severity is raised to warning there. (Hosts strip the keyword for \
        dialects that reject it.)",
    good_example: r#"{"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"], "additionalProperties": false}"#,
};

pub const IDENTIFIER_PATTERN: RuleDoc = RuleDoc {
    id: "identifier-without-pattern",
    family: Family::Contract,
    severity: Severity::Note,
    summary: "An identifier parameter (`id`, `*_id`, `uuid`, `slug`, `sha`) is a bare string with no `pattern`, `format` or `enum`.",
    rationale: "Models paste names, titles or URLs into id fields. A `pattern` (or `format: uuid`) lets the \
        host reject the call before it reaches the server and tells the model what an id looks like.",
    good_example: r#"{"ticket_id": {"type": "string", "pattern": "^T-[0-9]+$", "description": "Ticket id, e.g. T-1042."}}"#,
};

pub const STATUS_ENUM: RuleDoc = RuleDoc {
    id: "status-without-enum",
    family: Family::Contract,
    severity: Severity::Warning,
    summary: "A status-like parameter (status, state, sort, order, direction, priority, mode, kind, type) has no `enum`.",
    rationale: "A closed set of values written only in prose (\"one of open, closed\") is a guess for the model \
        and invisible to argument validation. An `enum` is enforced, and providers render it compactly.",
    good_example: r#"{"status": {"type": "string", "enum": ["open", "pending", "closed"], "description": "Only tickets in this state."}}"#,
};

pub const FREE_TEXT_MAX: RuleDoc = RuleDoc {
    id: "free-text-without-max-length",
    family: Family::Contract,
    severity: Severity::Note,
    summary: "A free-text parameter (body, text, content, message, comment, query, prompt, ...) has no `maxLength`.",
    rationale: "Without a bound a model may paste a whole file or conversation into a comment or query; the \
        server rejects or truncates it after the tokens are spent. `maxLength` states the limit up front.",
    good_example: r#"{"body": {"type": "string", "maxLength": 65536, "description": "Comment text in Markdown."}}"#,
};

pub const JSON_OUTPUT_SCHEMA: RuleDoc = RuleDoc {
    id: "json-output-without-schema",
    family: Family::Contract,
    severity: Severity::Note,
    summary: "The description promises JSON output but the tool declares no `outputSchema`.",
    rationale: "If the result is JSON, declaring its shape as `outputSchema` lets clients validate \
        `structuredContent` and lets the model rely on field names instead of guessing them from prose.",
    good_example: r#"{"description": "Returns the ticket as JSON.", "outputSchema": {"type": "object", "properties": {"id": {"type": "string"}, "status": {"type": "string"}}}}"#,
};

pub const DOCS: &[RuleDoc] = &[
    MISSING_DESCRIPTION,
    RESTATES_NAME,
    PARAM_DESCRIPTION,
    OPEN_SCHEMA,
    IDENTIFIER_PATTERN,
    STATUS_ENUM,
    FREE_TEXT_MAX,
    JSON_OUTPUT_SCHEMA,
];

/// Words that carry no meaning in a one-line description.
const FILLER: &[&str] = &[
    "a",
    "an",
    "the",
    "of",
    "for",
    "to",
    "in",
    "on",
    "by",
    "with",
    "and",
    "or",
    "this",
    "that",
    "tool",
    "function",
    "given",
    "specified",
    "specific",
    "from",
    "all",
    "some",
    "one",
    "it",
    "its",
    "is",
    "are",
    "be",
    "can",
    "will",
    "you",
    "your",
    "new",
    "existing",
    "provided",
];

/// Last words that make a parameter an identifier.
const ID_WORDS: &[&str] = &["id", "ids", "uuid", "guid", "slug", "sha"];
/// Any word that makes a parameter status-like.
const STATUS_WORDS: &[&str] = &[
    "status",
    "state",
    "sort",
    "order",
    "direction",
    "priority",
    "severity",
];
/// Last words that make a parameter status-like.
const STATUS_LAST_WORDS: &[&str] = &["mode", "kind", "type", "visibility"];
/// Last words that make a parameter free text.
const TEXT_WORDS: &[&str] = &[
    "body",
    "text",
    "content",
    "contents",
    "message",
    "comment",
    "description",
    "note",
    "notes",
    "prompt",
    "query",
    "q",
    "summary",
    "instructions",
    "markdown",
    "reason",
    "subject",
    "caption",
    "question",
    "feedback",
    "reply",
];

static PROMISES_JSON: LazyLock<Regex> = LazyLock::new(|| {
    // Only output verbs: "pass the config as a JSON object" is about the input.
    Regex::new(r"(?i)\b(returns?|returning|responds?|responding|outputs?|produces?|yields?)\b[^.\n]{0,60}\bjson\b")
        .expect("static regex")
});

pub fn check(ctx: &ToolCtx, out: &mut Vec<Finding>) {
    description(ctx, out);
    schema(ctx, out);
    if ctx.tool.output_schema.is_none()
        && let Some(m) = PROMISES_JSON.find(ctx.description())
    {
        out.push(ctx.finding(
            &JSON_OUTPUT_SCHEMA,
            "/description",
            format!("the description promises JSON (\"{}\") but no outputSchema is declared", m.as_str()),
            "declare `outputSchema` describing the JSON object and return it as `structuredContent` (keep a text copy for older clients)",
        ));
    }
}

fn description(ctx: &ToolCtx, out: &mut Vec<Finding>) {
    let text = ctx.description().trim();
    let words = prose_words(text);
    if text.is_empty() {
        out.push(ctx.finding(
            &MISSING_DESCRIPTION,
            "/description",
            "the tool has no description",
            "add a description: what the tool does, what it returns, and when to use it rather than similar tools",
        ));
        return;
    }
    if text.chars().count() < 20 || words.len() < 3 {
        out.push(
            ctx.finding(
                &MISSING_DESCRIPTION,
                "/description",
                format!("the description \"{text}\" is too short to say what the tool does"),
                "expand the description to a sentence or two: the action, its inputs, what comes back",
            )
            .with_severity(Severity::Warning),
        );
        return;
    }
    let stem = |w: &str| -> String {
        let w = w.trim_matches('\'');
        if w.len() > 3 {
            w.strip_suffix("es")
                .filter(|s| s.ends_with(['s', 'x', 'h']))
                .or_else(|| w.strip_suffix('s'))
                .unwrap_or(w)
                .to_string()
        } else {
            w.to_string()
        }
    };
    let mut known: Vec<String> = name_words(&ctx.tool.name).iter().map(|w| stem(w)).collect();
    known.extend(name_words(ctx.server).iter().map(|w| stem(w)));
    let restates = words
        .iter()
        .filter(|w| !FILLER.contains(&w.as_str()))
        .all(|w| known.contains(&stem(w)));
    if restates {
        out.push(ctx.finding(
            &RESTATES_NAME,
            "/description",
            format!("the description \"{text}\" only restates the name `{}`", ctx.tool.name),
            "say what the tool returns, what its inputs mean, and when to prefer it over similar tools",
        ));
    }
}

fn schema(ctx: &ToolCtx, out: &mut Vec<Finding>) {
    let root = &ctx.tool.input_schema;
    let root_is_object = types(root).contains(&"object") || root.get("properties").is_some();
    let has_params = root
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| !p.is_empty());
    // A reader with no parameters gains little from closing its schema; a writer always does.
    let matters = has_params || ctx.effect == Effect::Writes;
    if root_is_object && matters && root.get("additionalProperties") != Some(&Value::Bool(false)) {
        let f = ctx.finding(
            &OPEN_SCHEMA,
            "/inputSchema",
            "the input schema accepts properties it does not declare",
            "add `\"additionalProperties\": false` to the input schema (and to nested objects with fixed keys)",
        );
        out.push(if ctx.effect == Effect::Writes {
            f.with_severity(Severity::Warning)
        } else {
            f
        });
    }
    for p in params(root, "/inputSchema") {
        let Some(schema) = p.schema.as_object() else {
            continue;
        };
        // A `$ref` points at a definition that carries the description and constraints.
        if schema.contains_key("$ref") {
            continue;
        }
        if !schema.contains_key("description") {
            out.push(ctx.finding(
                &PARAM_DESCRIPTION,
                p.pointer.clone(),
                format!("parameter `{}` has no description", p.name),
                format!(
                    "add a \"description\" to `{}`: its meaning, format and an example value",
                    p.name
                ),
            ));
        }
        let ty = types(p.schema);
        let constrained = ["enum", "const", "pattern", "format", "anyOf", "oneOf"]
            .iter()
            .any(|k| schema.contains_key(*k));
        let words = name_words(p.name);
        let last = words.last().map(String::as_str).unwrap_or("");
        if ty.contains(&"string") && !constrained {
            if ID_WORDS.contains(&last) {
                out.push(ctx.finding(
                    &IDENTIFIER_PATTERN,
                    p.pointer.clone(),
                    format!("identifier `{}` accepts any string", p.name),
                    format!("add a \"pattern\" (or \"format\": \"uuid\") to `{}` matching real ids, and show one in the description", p.name),
                ));
            } else if words.iter().any(|w| STATUS_WORDS.contains(&w.as_str()))
                || STATUS_LAST_WORDS.contains(&last)
            {
                out.push(ctx.finding(
                    &STATUS_ENUM,
                    p.pointer.clone(),
                    format!("status-like parameter `{}` has no enum", p.name),
                    format!("list the accepted values of `{}` as an \"enum\"", p.name),
                ));
            } else if TEXT_WORDS.contains(&last) && !schema.contains_key("maxLength") {
                out.push(ctx.finding(
                    &FREE_TEXT_MAX,
                    p.pointer.clone(),
                    format!("free-text parameter `{}` has no maxLength", p.name),
                    format!(
                        "add a \"maxLength\" to `{}` that matches what the server accepts",
                        p.name
                    ),
                ));
            }
        }
    }
}
