//! Portability rules: what each provider dialect does to a tool's name and schema.
//!
//! Names are checked directly against the documented provider rules (reference/providers.md
//! §1.1). Schemas go through the host's own sanitizer (`switchboard_providers::sanitize`), and
//! each kind of change it makes for a dialect becomes one finding, so the lint reports exactly
//! the rewrites a host will make.

use std::collections::{BTreeMap, BTreeSet};

use switchboard_core::{Catalog, Dialect};
use switchboard_providers::{Change, SanitizeOptions, sanitize};

use super::ToolCtx;
use crate::finding::{Finding, Severity};
use crate::rule::{Family, RuleDoc};
use crate::walk::types;

pub const NAME_TOO_LONG: RuleDoc = RuleDoc {
    id: "name-too-long",
    family: Family::Portability,
    severity: Severity::Warning,
    summary: "The tool name is longer than 64 characters, the limit of Anthropic, OpenAI and Gemini.",
    rationale: "Every provider rejects tool names over 64 characters (Anthropic: `String should have at most \
        64 characters`). A host must shorten the name with a hash suffix, and the model then sees a name \
        that no longer reads like the tool. Keep names short enough to leave room for a server prefix.",
    good_example: r#"{"name": "list_workflow_run_artifacts"}"#,
};

pub const NAME_CHARACTERS: RuleDoc = RuleDoc {
    id: "name-characters",
    family: Family::Portability,
    severity: Severity::Warning,
    summary: "The tool name has characters (or a first character) that some dialect rejects; the dialects are named.",
    rationale: "Anthropic and OpenAI accept only `[A-Za-z0-9_-]`; Gemini also accepts `.` and `:` but needs a \
        letter or `_` first. MCP allows `.` and lengths up to 128. A name outside a dialect's rule must be \
        rewritten for it, and the model then calls a name the server never chose.",
    good_example: r#"{"name": "docs_get_page"}"#,
};

pub const NAME_COLLISION: RuleDoc = RuleDoc {
    id: "name-collision",
    family: Family::Portability,
    severity: Severity::Note,
    summary: "Two tools in the catalog have the same provider-safe name (on different servers, or after character rewriting).",
    rationale: "Providers require unique tool names. When two connected servers both offer `search`, the host \
        must qualify at least one public name, and the model has to tell the two apart from their \
        descriptions alone. For a server author: distinctive names and descriptions survive aggregation.",
    good_example: r#"{"name": "search_tickets", "description": "Search support tickets (not documentation) by text and status."}"#,
};

pub const DUPLICATE_NAME: RuleDoc = RuleDoc {
    id: "duplicate-name",
    family: Family::Portability,
    severity: Severity::Error,
    summary: "The server lists two or more tools under the same name.",
    rationale: "Tool names are a server's keys: `tools/call` names the tool and nothing else. When two \
        definitions share a name, a host keeps one of them and the other can never be called, and which \
        one a host keeps is not specified. Providers also reject a request with two tools of one name.",
    good_example: r#"[{"name": "get_item"}, {"name": "get_item_v2"}]"#,
};

pub const SCHEMA_ROOT: RuleDoc = RuleDoc {
    id: "schema-root-not-object",
    family: Family::Portability,
    severity: Severity::Error,
    summary: "The input schema's root is not `type: \"object\"`.",
    rationale: "Anthropic, OpenAI and Gemini all require the parameters root to be an object. A root without \
        `type`, or with another type, is rejected (OpenAI: `schema must be a JSON Schema of 'type: \"object\"'`) \
        unless the host wraps it, and wrapped arguments no longer match what the server documents.",
    good_example: r#"{"inputSchema": {"type": "object", "properties": {}, "additionalProperties": false}}"#,
};

pub const SCHEMA_DIALECT: RuleDoc = RuleDoc {
    id: "schema-dialect-rewrite",
    family: Family::Portability,
    severity: Severity::Note,
    summary: "The input schema uses a feature a dialect rejects, so the host's sanitizer rewrites it (one finding per kind of rewrite per dialect; error when it cannot).",
    rationale: "Gemini's `parameters` is an OpenAPI-3 subset without `$ref`, `const`, `oneOf`, type arrays and \
        more; OpenAI rejects arrays without `items`; Anthropic rejects `anyOf`/`oneOf`/`allOf` at the root. \
        The host rewrites these (and reports it), but a rewrite can lose a constraint, so the model may send \
        arguments the original schema rejects. Plain schemas travel unchanged.",
    good_example: r#"{"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string"}}, "kind": {"type": "string", "enum": ["bug"]}}}"#,
};

pub const DESCRIPTION_TOO_LONG: RuleDoc = RuleDoc {
    id: "description-too-long",
    family: Family::Portability,
    severity: Severity::Warning,
    summary: "The description is longer than 1024 characters, the limit OpenAI has enforced on function descriptions.",
    rationale: "OpenAI has rejected requests with `tools[i].function.description: string too long ... maximum \
        length 1024`; a host must truncate the description for it, cutting whatever came last. Long \
        descriptions also cost rent on every request. Move reference material to parameter descriptions \
        or a resource.",
    good_example: r#"{"description": "Search tickets by text; filter by status. Returns at most 50, newest first."}"#,
};

pub const DOCS: &[RuleDoc] = &[
    NAME_TOO_LONG,
    NAME_CHARACTERS,
    NAME_COLLISION,
    DUPLICATE_NAME,
    SCHEMA_ROOT,
    SCHEMA_DIALECT,
    DESCRIPTION_TOO_LONG,
];

/// Longest tool name any provider accepts (providers.md §1.1; Gemini's SDK says 128 since
/// 2026-05, but its API errors said 64, so 64 is the safe limit).
const MAX_NAME: usize = 64;
/// OpenAI's observed description limit (providers.md §6.4).
const MAX_DESCRIPTION: usize = 1024;

/// Whether `name` satisfies `dialect`'s character rule (length is checked separately).
fn name_chars_ok(dialect: Dialect, name: &str) -> bool {
    match dialect {
        Dialect::Anthropic | Dialect::OpenAiChat | Dialect::OpenAiResponses => {
            !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        }
        Dialect::Gemini => {
            name.chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':' | '-'))
        }
    }
}

/// The name with every character outside the cross-provider set replaced by `_`: what any
/// host's name map starts from, so equal results mean a collision.
fn safe_name(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// A name that keeps what it can of `name` and passes every dialect's rule; never empty (an
/// empty or all-symbol name would otherwise be "fixed" to ``).
fn suggested_name(name: &str) -> String {
    let safe = safe_name(name);
    let kept = safe.trim_start_matches(|c: char| !c.is_ascii_alphabetic());
    if !kept.is_empty() {
        kept.to_string()
    } else if safe.trim_matches('_').is_empty() {
        "tool".to_string()
    } else {
        format!("tool_{}", safe.trim_start_matches('_'))
    }
}

pub fn check(ctx: &ToolCtx, out: &mut Vec<Finding>) {
    let name = &ctx.tool.name;
    let len = name.chars().count();
    if len > MAX_NAME {
        out.push(ctx.finding(
            &NAME_TOO_LONG,
            "/name",
            format!("the name is {len} characters; every provider's limit is {MAX_NAME}"),
            "shorten the name to at most 64 characters (48 leaves room for a host's server prefix)",
        ));
    }
    let rejecting: Vec<&str> = ctx
        .opts
        .dialects
        .iter()
        .filter(|d| !name_chars_ok(**d, name))
        .map(|d| d.as_str())
        .collect();
    if !rejecting.is_empty() {
        let mcp_ok = (1..=128).contains(&len)
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
        let mcp = if mcp_ok {
            ""
        } else {
            " (and MCP's own [A-Za-z0-9._-]{1,128})"
        };
        out.push(ctx.finding(
            &NAME_CHARACTERS,
            "/name",
            format!(
                "the name `{name}` breaks the name rule of {}{mcp}",
                rejecting.join(", ")
            ),
            format!(
                "rename to letters, digits, `_` and `-`, starting with a letter, e.g. `{}`",
                suggested_name(name)
            ),
        ));
    }
    let desc_len = ctx.description().chars().count();
    if desc_len > MAX_DESCRIPTION {
        out.push(ctx.finding(
            &DESCRIPTION_TOO_LONG,
            "/description",
            format!("the description is {desc_len} characters; OpenAI has rejected more than {MAX_DESCRIPTION}"),
            "cut the description to under 1024 characters; move per-argument detail into parameter descriptions",
        ));
    }
    schema(ctx, out);
}

fn schema(ctx: &ToolCtx, out: &mut Vec<Finding>) {
    let root = &ctx.tool.input_schema;
    let root_types = types(root);
    if root_types != ["object"] {
        let got = match root.get("type") {
            None => "no `type`".to_string(),
            Some(t) => format!("type {t}"),
        };
        out.push(ctx.finding(
            &SCHEMA_ROOT,
            "/inputSchema",
            format!("the input schema root has {got}; providers require `type: \"object\"`"),
            "make the root `{\"type\": \"object\", \"properties\": {...}}` and put any other value under a named property",
        ));
    }

    for &dialect in &ctx.opts.dialects {
        match sanitize(dialect, root, &SanitizeOptions::default()) {
            Ok(sanitized) => report_changes(ctx, dialect, &sanitized.changes, out),
            Err(e) => out.push(
                ctx.finding(
                    &SCHEMA_DIALECT,
                    "/inputSchema",
                    format!("{dialect} cannot accept the input schema ({e}); hosts leave the tool out for it"),
                    "simplify the schema (no unresolvable `$ref`, bounded depth, a valid JSON Schema)",
                )
                .with_severity(Severity::Error),
            ),
        }
    }
}

/// Sanitizer rules not worth a finding: those other lint rules already report (root shape,
/// description length), and dropping keywords meant for schema tooling (`$schema`, `$id`,
/// `$comment`), which loses nothing the model uses.
fn not_reported(rule: &str) -> bool {
    rule.starts_with("description-")
        || matches!(
            rule,
            "root-type-object"
                | "root-wrapped"
                | "empty-root"
                | "drop-$schema"
                | "drop-$id"
                | "drop-$comment"
        )
}

/// One finding per kind of change per dialect, pointing at the first place it was made.
fn report_changes(ctx: &ToolCtx, dialect: Dialect, changes: &[Change], out: &mut Vec<Finding>) {
    // rule -> (first path, count, keywords touched); BTreeMap keeps the output order stable.
    let mut kinds: BTreeMap<&str, (&str, usize, BTreeSet<&str>)> = BTreeMap::new();
    for c in changes.iter().filter(|c| !not_reported(c.rule)) {
        let e = kinds
            .entry(c.rule)
            .or_insert((c.path.as_str(), 0, BTreeSet::new()));
        e.1 += 1;
        if let Some(last) = c.path.rsplit('/').next().filter(|k| !k.is_empty()) {
            e.2.insert(last);
        }
    }
    for (rule, (path, count, keys)) in kinds {
        let places = if count == 1 {
            String::new()
        } else {
            format!(", {count} places")
        };
        let keys: Vec<String> = keys
            .iter()
            .take(5)
            .map(|k| format!("`{}`", unescape(k)))
            .collect();
        out.push(ctx.finding(
            &SCHEMA_DIALECT,
            format!("/inputSchema{path}"),
            format!("{dialect} needs the rewrite `{rule}` ({}{places}); the model sees a different schema than the server declares", keys.join(", ")),
            fix_for(rule),
        ));
    }
}

fn unescape(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

/// How a server author avoids a sanitizer rewrite, by the kind of rule.
fn fix_for(rule: &str) -> &'static str {
    const FIXES: &[(&str, &str)] = &[
        (
            "ref",
            "inline the definitions instead of using `$ref`/`$defs`",
        ),
        (
            "defs",
            "inline the definitions instead of using `$ref`/`$defs`",
        ),
        ("array-items", "give every array an `items` schema"),
        ("items", "give array items one schema"),
        ("const", "use `enum` with one value instead of `const`"),
        (
            "type-array",
            "use a single `type`; leave optional properties out of `required` instead of allowing null",
        ),
        (
            "null",
            "use a single `type`; leave optional properties out of `required` instead of allowing null",
        ),
        (
            "oneof",
            "use `anyOf`, or one schema with an `enum`, instead of `oneOf`",
        ),
        ("allof", "merge the `allOf` branches into one schema"),
        (
            "composition",
            "make the root one object schema; describe valid combinations in the description",
        ),
        (
            "exclusive",
            "use `minimum`/`maximum` instead of `exclusiveMinimum`/`exclusiveMaximum`",
        ),
        (
            "format",
            "use only widely supported formats (`date-time`) or describe the format in words",
        ),
        ("enum", "use string `enum` values"),
        (
            "required",
            "make `required` an array that names declared properties",
        ),
        (
            "properties",
            "declare `properties` as an object (`{}` when there are none)",
        ),
        (
            "property-name",
            "name properties with letters, digits and `_`",
        ),
        (
            "keyword-dropped",
            "leave out keywords the dialect lacks; state the constraint in the description",
        ),
        ("metaschema", "make the schema valid JSON Schema 2020-12"),
        (
            "additional-properties",
            "use `additionalProperties: false` or a schema object",
        ),
    ];
    FIXES
        .iter()
        .find(|(k, _)| rule.contains(k))
        .map(|(_, fix)| *fix)
        .unwrap_or("simplify the schema so that no dialect needs to rewrite it")
}

/// Across the whole catalog: a server listing one name twice, and tools (on different
/// servers, or with different names) whose provider-safe names are equal.
pub fn check_catalog(catalog: &Catalog, out: &mut Vec<Finding>) {
    let mut listed: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    for (server, entry) in catalog.tools() {
        *listed.entry((server, &entry.def.name)).or_default() += 1;
    }
    for ((server, tool), n) in &listed {
        if *n > 1 {
            out.push(Finding::new(
                &DUPLICATE_NAME,
                server,
                Some(tool),
                "/name",
                format!("the server lists {n} tools named `{tool}`; a host keeps one and the others cannot be called"),
                "give every tool its own name, or remove the stale definition",
            ));
        }
    }
    // Each (server, name) once: an exact duplicate is the finding above, not a collision.
    let mut by_name: BTreeMap<String, Vec<(&str, &str)>> = BTreeMap::new();
    for (server, tool) in listed.keys() {
        by_name
            .entry(safe_name(tool))
            .or_default()
            .push((server, tool));
    }
    for (safe, owners) in by_name {
        if owners.len() < 2 {
            continue;
        }
        for (i, (server, tool)) in owners.iter().enumerate() {
            let others: Vec<String> = owners
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .map(|(_, (s, t))| {
                    if t == tool {
                        format!("server {s}")
                    } else {
                        format!("`{t}` on server {s}")
                    }
                })
                .collect();
            out.push(Finding::new(
                &NAME_COLLISION,
                server,
                Some(tool),
                "/name",
                format!("the public name `{safe}` is also wanted by {}; a host must qualify or rename it", others.join(", ")),
                "give the tool a distinctive name (e.g. prefixed with what it acts on) and a description that says how it differs",
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_suggested_name_is_never_empty() {
        // Regression: an empty or all-symbol name was told to rename to ``.
        assert_eq!(suggested_name(""), "tool");
        assert_eq!(suggested_name("🎉"), "tool");
        assert_eq!(suggested_name("123"), "tool_123");
        assert_eq!(suggested_name("get item"), "get_item");
        assert_eq!(suggested_name("_x.y"), "x_y");
    }
}
