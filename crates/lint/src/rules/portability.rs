//! Portability rules: what each provider dialect does to a tool's name and schema.
//!
//! These are direct checks of the documented provider rules (reference/providers.md §1.1 for
//! names, §2.1–2.3 for schema keywords), named by dialect.

use std::collections::BTreeMap;

use serde_json::Value;
use switchboard_core::{Catalog, Dialect};

use super::ToolCtx;
use crate::finding::{Finding, Severity};
use crate::rule::{Family, RuleDoc};
use crate::walk::{subschemas, types};

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
    summary: "The input schema uses a feature a dialect rejects, so the host must rewrite it for that dialect (one finding per feature per dialect).",
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
                safe_name(name).trim_start_matches(|c: char| !c.is_ascii_alphabetic())
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

/// One schema feature that needs a rewrite for some dialects.
struct Feature {
    /// Short name used in the message.
    what: &'static str,
    /// Which dialects reject it.
    dialects: &'static [Dialect],
    /// How to avoid it.
    fix: &'static str,
}

const OPENAI: &[Dialect] = &[Dialect::OpenAiChat, Dialect::OpenAiResponses];
const GEMINI: &[Dialect] = &[Dialect::Gemini];

/// Gemini `parameters` keywords with no equivalent (providers.md §2.3, "Absent"), with the
/// rewrite that avoids each. `additionalProperties` is left out on purpose: the contract rules
/// ask for `additionalProperties: false`, and hosts drop it for Gemini without losing anything
/// the model needs.
const GEMINI_KEYWORDS: &[(&str, &str)] = &[
    ("$schema", "drop `$schema` from the input schema"),
    ("$id", "drop `$id` from the input schema"),
    ("$ref", "inline the referenced definition instead of `$ref`"),
    ("$defs", "inline definitions instead of `$defs`"),
    ("definitions", "inline definitions instead of `definitions`"),
    (
        "const",
        "use `enum` with one string value instead of `const`",
    ),
    (
        "oneOf",
        "use `anyOf` (or one schema with an `enum`) instead of `oneOf`",
    ),
    ("allOf", "merge the `allOf` branches into one schema"),
    (
        "not",
        "express the constraint without `not` (an `enum` or a `pattern`)",
    ),
    (
        "exclusiveMinimum",
        "use `minimum` instead of `exclusiveMinimum`",
    ),
    (
        "exclusiveMaximum",
        "use `maximum` instead of `exclusiveMaximum`",
    ),
    (
        "multipleOf",
        "state the step in the description instead of `multipleOf`",
    ),
    (
        "examples",
        "move `examples` into the description (or use `example`)",
    ),
    (
        "uniqueItems",
        "state uniqueness in the description instead of `uniqueItems`",
    ),
    (
        "patternProperties",
        "declare fixed `properties` instead of `patternProperties`",
    ),
    (
        "propertyNames",
        "drop `propertyNames`; describe the key format in the description",
    ),
    (
        "if",
        "drop `if`/`then`/`else`; describe the condition in the description",
    ),
    (
        "prefixItems",
        "use a single `items` schema instead of `prefixItems`",
    ),
    (
        "dependentRequired",
        "describe the dependency in the description",
    ),
];

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

    // (dialect, feature) -> (first pointer, count); BTreeMap keeps output order stable.
    let mut seen: BTreeMap<(Dialect, &'static str), (String, usize, &'static str)> =
        BTreeMap::new();
    let mut note =
        |dialects: &'static [Dialect], what: &'static str, fix: &'static str, ptr: &str| {
            for d in dialects {
                let e = seen
                    .entry((*d, what))
                    .or_insert_with(|| (ptr.to_string(), 0, fix));
                e.1 += 1;
            }
        };
    let anthropic_root = Feature {
        what: "anyOf/oneOf/allOf at the root",
        dialects: &[Dialect::Anthropic],
        fix: "merge the root branches into one object schema; describe which combinations are valid",
    };
    if ["anyOf", "oneOf", "allOf"]
        .iter()
        .any(|k| root.get(*k).is_some())
    {
        note(
            anthropic_root.dialects,
            anthropic_root.what,
            anthropic_root.fix,
            "/inputSchema",
        );
    }
    if root.get("properties").is_none() && root_types == ["object"] {
        note(
            OPENAI,
            "object root without `properties`",
            "add `\"properties\": {}` to the root",
            "/inputSchema",
        );
    }
    subschemas(root, "/inputSchema", &mut |ptr, node| {
        let ts = types(node);
        if ts.contains(&"array") && node.get("items").is_none() {
            note(
                OPENAI,
                "array without `items`",
                "give every array an `items` schema",
                ptr,
            );
        }
        if node.get("required").is_some_and(|r| !r.is_array()) {
            note(
                OPENAI,
                "`required` that is not an array",
                "make `required` an array of property names",
                ptr,
            );
        }
        if ts.len() > 1 {
            note(
                GEMINI,
                "a `type` array",
                "use one type; for optional values leave the property out of `required`",
                ptr,
            );
        }
        if node
            .get("enum")
            .and_then(Value::as_array)
            .is_some_and(|e| e.iter().any(|v| !v.is_string()))
        {
            note(
                GEMINI,
                "a non-string `enum`",
                "use string enum values, or a number with `minimum`/`maximum`",
                ptr,
            );
        }
        if node.get("items").and_then(|i| i.get("anyOf")).is_some() {
            note(
                GEMINI,
                "`anyOf` inside `items`",
                "give array items one schema",
                ptr,
            );
        }
        if let Some(props) = node.get("properties").and_then(Value::as_object)
            && props.keys().any(|k| !gemini_property_ok(k))
        {
            note(
                GEMINI,
                "a property name outside [A-Za-z_][A-Za-z0-9_]*",
                "name properties with letters, digits and `_`",
                ptr,
            );
        }
        for (kw, fix) in GEMINI_KEYWORDS {
            // `if` alone is the keyword; `then`/`else` come with it.
            if node.get(*kw).is_some() {
                note(GEMINI, kw, fix, ptr);
            }
        }
    });
    for ((dialect, what), (ptr, count, fix)) in seen {
        if !ctx.opts.dialects.contains(&dialect) {
            continue;
        }
        let places = if count == 1 {
            String::new()
        } else {
            format!(" ({count} places)")
        };
        let what = if what.starts_with(|c: char| c == '$' || c.is_ascii_lowercase())
            && !what.contains(' ')
        {
            format!("`{what}`")
        } else {
            what.to_string()
        };
        out.push(ctx.finding(
            &SCHEMA_DIALECT,
            ptr,
            format!("{dialect} rejects {what}{places}; the host must rewrite the schema for it"),
            fix,
        ));
    }
}

/// Gemini's rule for property names in `parameters` (providers.md §2.3).
fn gemini_property_ok(key: &str) -> bool {
    key.len() <= 64
        && key
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Collisions across the whole catalog: tools whose provider-safe names are equal.
pub fn check_catalog(catalog: &Catalog, out: &mut Vec<Finding>) {
    let mut by_name: BTreeMap<String, Vec<(&str, &str)>> = BTreeMap::new();
    for (server, entry) in catalog.tools() {
        by_name
            .entry(safe_name(&entry.def.name))
            .or_default()
            .push((server, &entry.def.name));
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
