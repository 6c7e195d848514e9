//! A request validator that encodes each dialect's documented rules (reference/providers.md §1,
//! §2, §3) and lists every violation in a rendered request body. It is written independently
//! of the sanitizer so that tests of the sanitizer can fail. The conversation rules (roles,
//! content types, tool-use/result pairing) are in [`conversation`]'s rules, run as part of
//! [`validate_request`].

use std::collections::BTreeSet;

use serde_json::{Map, Value};
use switchboard_core::Dialect;

mod conversation;

/// One broken rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// JSON pointer into the request body.
    pub path: String,
    /// Stable rule id.
    pub rule: &'static str,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} at {}: {}", self.rule, self.path, self.message)
    }
}

struct Out(Vec<Violation>);

impl Out {
    fn push(&mut self, path: &str, rule: &'static str, message: impl Into<String>) {
        self.0.push(Violation {
            path: path.to_string(),
            rule,
            message: message.into(),
        });
    }
}

/// Every violation of `dialect`'s documented request rules in `body`.
pub fn validate_request(dialect: Dialect, body: &Value) -> Vec<Violation> {
    let mut out = Out(Vec::new());
    match dialect {
        Dialect::Anthropic => anthropic(body, &mut out),
        Dialect::OpenAiChat => openai_chat(body, &mut out),
        Dialect::OpenAiResponses => openai_responses(body, &mut out),
        Dialect::Gemini => gemini(body, &mut out),
    }
    match dialect {
        Dialect::Anthropic => conversation::anthropic(body, &mut out),
        Dialect::OpenAiChat => conversation::openai_chat(body, &mut out),
        Dialect::OpenAiResponses => conversation::openai_responses(body, &mut out),
        Dialect::Gemini => conversation::gemini(body, &mut out),
    }
    tool_choice(dialect, body, &mut out);
    out.0
}

/// The request's tool choice (`tool_choice`, Gemini's `toolConfig`): a shape its API takes,
/// a tool it names declared in the request, and tools to choose from at all (OpenAI: "'tool_choice'
/// is only allowed when 'tools' are specified"); Anthropic refuses a forced tool use with thinking
/// on ("Thinking may not be enabled when tool_choice forces tool use").
fn tool_choice(dialect: Dialect, body: &Value, out: &mut Out) {
    let tools = tools_of(body, "tools");
    let declared: BTreeSet<&str> = match dialect {
        Dialect::Anthropic | Dialect::OpenAiResponses => {
            tools.iter().filter_map(|t| t["name"].as_str()).collect()
        }
        Dialect::OpenAiChat => tools
            .iter()
            .filter_map(|t| t["function"]["name"].as_str())
            .collect(),
        Dialect::Gemini => tools
            .iter()
            .flat_map(|g| g["functionDeclarations"].as_array().into_iter().flatten())
            .filter_map(|d| d["name"].as_str())
            .collect(),
    };
    let (key, choice) = match dialect {
        Dialect::Gemini => ("/toolConfig", body.get("toolConfig")),
        _ => ("/tool_choice", body.get("tool_choice")),
    };
    let Some(choice) = choice else { return };
    let bad = |out: &mut Out, why: &str| out.push(key, "tool-choice", why.to_string());
    let named = |out: &mut Out, name: Option<&Value>| match name.and_then(Value::as_str) {
        Some(n) if declared.contains(n) => {}
        Some(n) => bad(
            out,
            &format!("tool_choice names {n:?}, which is not among the tools"),
        ),
        None => bad(out, "tool_choice of a single tool needs its name"),
    };
    if tools.is_empty() {
        bad(out, "tool_choice is only allowed when tools are specified");
        return;
    }
    match dialect {
        Dialect::Anthropic => {
            let kind = choice["type"].as_str().unwrap_or("");
            match kind {
                "auto" | "any" | "none" => {}
                "tool" => named(out, choice.get("name")),
                _ => bad(out, "tool_choice.type must be auto, any, tool or none"),
            }
            if matches!(kind, "any" | "tool") && body["thinking"]["type"] == "enabled" {
                bad(
                    out,
                    "Thinking may not be enabled when tool_choice forces tool use",
                );
            }
        }
        Dialect::OpenAiChat | Dialect::OpenAiResponses => match choice {
            Value::String(s) if matches!(s.as_str(), "none" | "auto" | "required") => {}
            Value::Object(o) if o.get("type").and_then(Value::as_str) == Some("function") => {
                let name = match dialect {
                    Dialect::OpenAiChat => o.get("function").and_then(|f| f.get("name")),
                    _ => o.get("name"),
                };
                named(out, name);
            }
            _ => bad(
                out,
                "tool_choice must be none, auto, required or a function by name",
            ),
        },
        Dialect::Gemini => {
            let config = &choice["functionCallingConfig"];
            let mode = config["mode"].as_str().unwrap_or("");
            if !matches!(mode, "AUTO" | "ANY" | "NONE" | "VALIDATED") {
                bad(
                    out,
                    "functionCallingConfig.mode must be AUTO, ANY, NONE or VALIDATED",
                );
            }
            if let Some(names) = config.get("allowedFunctionNames") {
                if mode != "ANY" {
                    bad(
                        out,
                        "allowed_function_names should only be set when the Mode is ANY",
                    );
                }
                for n in names.as_array().into_iter().flatten() {
                    named(out, Some(n));
                }
            }
        }
    }
}

fn tools_of<'a>(body: &'a Value, key: &str) -> Vec<&'a Value> {
    body.get(key)
        .and_then(Value::as_array)
        .map(|a| a.iter().collect())
        .unwrap_or_default()
}

/// Anthropic/OpenAI: `^[a-zA-Z0-9_-]{1,64}$`. Gemini: first char a letter or `_`, then
/// `[A-Za-z0-9_.:-]`, at most 64.
fn check_name(
    dialect: Dialect,
    name: Option<&Value>,
    path: &str,
    seen: &mut BTreeSet<String>,
    out: &mut Out,
) {
    let Some(name) = name.and_then(Value::as_str) else {
        out.push(path, "name-missing", "tool has no name string");
        return;
    };
    let ok_char = |c: char| match dialect {
        Dialect::Gemini => c.is_ascii_alphanumeric() || "_.:-".contains(c),
        _ => c.is_ascii_alphanumeric() || "_-".contains(c),
    };
    if name.is_empty() || name.chars().count() > 64 {
        out.push(
            path,
            "name-length",
            format!("{name:?} is not 1..=64 characters"),
        );
    }
    if !name.chars().all(ok_char) {
        out.push(
            path,
            "name-charset",
            format!("{name:?} has characters {dialect} rejects"),
        );
    }
    if dialect == Dialect::Gemini
        && !name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
    {
        out.push(
            path,
            "name-start",
            format!("{name:?} must start with a letter or underscore"),
        );
    }
    if !seen.insert(name.to_string()) {
        out.push(
            path,
            "name-duplicate",
            format!("{name:?} is declared twice"),
        );
    }
}

fn messages_present(body: &Value, key: &str, out: &mut Out) {
    if body
        .get(key)
        .and_then(Value::as_array)
        .is_none_or(Vec::is_empty)
    {
        out.push(
            &format!("/{key}"),
            "messages-missing",
            format!("`{key}` must hold at least one message"),
        );
    }
}

/// Visit every subschema with its pointer (own walker, on purpose not the sanitizer's).
fn each_schema<'a>(v: &'a Value, path: &str, f: &mut dyn FnMut(&'a Map<String, Value>, &str)) {
    let Value::Object(m) = v else { return };
    f(m, path);
    for (k, child) in m {
        let p = format!("{path}/{}", k.replace('~', "~0").replace('/', "~1"));
        match k.as_str() {
            "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas" => {
                if let Value::Object(cm) = child {
                    for (name, c) in cm {
                        each_schema(
                            c,
                            &format!("{p}/{}", name.replace('~', "~0").replace('/', "~1")),
                            f,
                        );
                    }
                }
            }
            "anyOf" | "oneOf" | "allOf" | "prefixItems" => {
                for (i, c) in child.as_array().into_iter().flatten().enumerate() {
                    each_schema(c, &format!("{p}/{i}"), f);
                }
            }
            "items"
            | "additionalProperties"
            | "not"
            | "if"
            | "then"
            | "else"
            | "contains"
            | "propertyNames"
            | "unevaluatedProperties"
            | "unevaluatedItems" => {
                if let Value::Array(list) = child {
                    for (i, c) in list.iter().enumerate() {
                        each_schema(c, &format!("{p}/{i}"), f);
                    }
                } else {
                    each_schema(child, &p, f);
                }
            }
            _ => {}
        }
    }
}

fn type_names(m: &Map<String, Value>) -> Vec<&str> {
    match m.get("type") {
        Some(Value::String(s)) => vec![s.as_str()],
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
        _ => vec![],
    }
}

fn root_rules(schema: &Value, path: &str, out: &mut Out) {
    let Some(root) = schema.as_object() else {
        out.push(path, "schema-not-object", "schema must be a JSON object");
        return;
    };
    if root.get("type") != Some(&Value::String("object".into())) {
        out.push(
            path,
            "root-type",
            format!("root `type` must be \"object\", got {:?}", root.get("type")),
        );
    }
    for k in ["oneOf", "anyOf", "allOf"] {
        if root.contains_key(k) {
            out.push(
                path,
                "root-composition",
                format!("`{k}` is not allowed at the top level"),
            );
        }
    }
}

fn anthropic(body: &Value, out: &mut Out) {
    if !body.get("model").is_some_and(Value::is_string) {
        out.push("/model", "model-missing", "model is required");
    }
    if !body.get("max_tokens").is_some_and(Value::is_u64) {
        out.push(
            "/max_tokens",
            "max-tokens-missing",
            "max_tokens is required",
        );
    }
    messages_present(body, "messages", out);
    anthropic_system(body, out);
    anthropic_cache_marks(body, out);
    let mut seen = BTreeSet::new();
    for (i, t) in tools_of(body, "tools").into_iter().enumerate() {
        let p = format!("/tools/{i}");
        check_name(
            Dialect::Anthropic,
            t.get("name"),
            &format!("{p}/name"),
            &mut seen,
            out,
        );
        let sp = format!("{p}/input_schema");
        let Some(schema) = t.get("input_schema") else {
            out.push(&sp, "schema-missing", "input_schema is required");
            continue;
        };
        root_rules(schema, &sp, out);
        // "JSON schema is invalid. It must match JSON Schema draft 2020-12".
        if let Err(e) = jsonschema::draft202012::meta::validate(schema) {
            out.push(&sp, "draft-2020-12", e.to_string());
        }
    }
}

/// `system` is a string or a list of text blocks.
fn anthropic_system(body: &Value, out: &mut Out) {
    match body.get("system") {
        None | Some(Value::String(_)) => {}
        Some(Value::Array(blocks)) => {
            for (i, b) in blocks.iter().enumerate() {
                let ok = b.get("type").and_then(Value::as_str) == Some("text")
                    && b.get("text")
                        .and_then(Value::as_str)
                        .is_some_and(|t| !t.is_empty());
                if !ok {
                    out.push(
                        &format!("/system/{i}"),
                        "system-block",
                        "system blocks must be non-empty text blocks",
                    );
                }
            }
        }
        Some(_) => out.push(
            "/system",
            "system-type",
            "system must be a string or text blocks",
        ),
    }
}

/// Prompt-cache marks: at most 4 per request ("A maximum of 4 blocks with cache_control may
/// be provided"), each `{"type": "ephemeral"}` with an optional `ttl` of `5m` or `1h`, only on
/// tool definitions, system blocks and message blocks that take one (not thinking blocks).
fn anthropic_cache_marks(body: &Value, out: &mut Out) {
    use conversation::items;
    let mut marks = Vec::new();
    let mut look = |v: &Value, at: String| {
        if let Some(mark) = v.get("cache_control") {
            marks.push((
                at,
                mark.clone(),
                v.get("type").and_then(Value::as_str).map(str::to_string),
            ));
        }
    };
    for (i, t) in items(body.get("tools").unwrap_or(&Value::Null))
        .iter()
        .enumerate()
    {
        look(t, format!("/tools/{i}"));
    }
    if let Some(blocks) = body.get("system").and_then(Value::as_array) {
        for (i, b) in blocks.iter().enumerate() {
            look(b, format!("/system/{i}"));
        }
    }
    for (i, m) in items(body.get("messages").unwrap_or(&Value::Null))
        .iter()
        .enumerate()
    {
        if m.get("cache_control").is_some() {
            out.push(
                &format!("/messages/{i}"),
                "cache-control-place",
                "cache_control goes on a content block, not on a message",
            );
        }
        if let Some(blocks) = m.get("content").and_then(Value::as_array) {
            for (j, b) in blocks.iter().enumerate() {
                look(b, format!("/messages/{i}/content/{j}"));
            }
        }
    }
    if marks.len() > 4 {
        out.push(
            "/",
            "cache-control-count",
            format!(
                "{} blocks with cache_control; at most 4 are allowed",
                marks.len()
            ),
        );
    }
    for (at, mark, kind) in marks {
        let ttl_ok = match mark.get("ttl") {
            None => true,
            Some(t) => matches!(t.as_str(), Some("5m" | "1h")),
        };
        if mark.get("type").and_then(Value::as_str) != Some("ephemeral") || !ttl_ok {
            out.push(
                &at,
                "cache-control-type",
                "cache_control must be {\"type\": \"ephemeral\"} (ttl 5m or 1h)",
            );
        }
        if matches!(kind.as_deref(), Some("thinking" | "redacted_thinking")) {
            out.push(
                &at,
                "cache-control-place",
                "thinking blocks cannot carry cache_control",
            );
        }
    }
}

const OPENAI_STRICT_KEYS: [&str; 21] = [
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "anyOf",
    "enum",
    "const",
    "description",
    "$defs",
    "definitions",
    "$ref",
    "pattern",
    "format",
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "minItems",
    "maxItems",
];
const OPENAI_STRICT_FORMATS: [&str; 9] = [
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];

/// The fields of one OpenAI function tool, wherever the API nests them.
struct FunctionFields<'a> {
    name: Option<&'a Value>,
    description: Option<&'a Value>,
    params: Option<&'a Value>,
    strict: Option<&'a Value>,
}

impl<'a> FunctionFields<'a> {
    fn of(v: &'a Value) -> Self {
        Self {
            name: v.get("name"),
            description: v.get("description"),
            params: v.get("parameters"),
            strict: v.get("strict"),
        }
    }
}

fn openai_tool(
    f: FunctionFields<'_>,
    p: &str,
    seen: &mut BTreeSet<String>,
    explicit_strict: bool,
    out: &mut Out,
) {
    let FunctionFields {
        name,
        description,
        params,
        strict,
    } = f;
    check_name(Dialect::OpenAiChat, name, &format!("{p}/name"), seen, out);
    if let Some(d) = description.and_then(Value::as_str)
        && d.chars().count() > 1024
    {
        out.push(
            &format!("{p}/description"),
            "description-length",
            "longer than 1024 characters",
        );
    }
    let strict = match strict {
        Some(Value::Bool(b)) => *b,
        None if explicit_strict => {
            // Responses defaults to strict and would silently rewrite the schema.
            out.push(
                &format!("{p}/strict"),
                "strict-implicit",
                "send `strict` explicitly",
            );
            true
        }
        None => false,
        Some(other) => {
            out.push(
                &format!("{p}/strict"),
                "strict-not-bool",
                format!("{other}"),
            );
            false
        }
    };
    let sp = format!("{p}/parameters");
    let Some(schema) = params else { return };
    root_rules(schema, &sp, out);
    each_schema(schema, &sp, &mut |m, path| {
        let ts = type_names(m);
        if ts.contains(&"array") && !m.contains_key("items") {
            out.push(path, "array-items", "array schema missing items");
        }
        if ts == ["object"] && !m.contains_key("properties") {
            out.push(
                path,
                "object-properties",
                "object schema missing properties",
            );
        }
        if let Some(r) = m.get("required")
            && !r.as_array().is_some_and(|a| a.iter().all(Value::is_string))
        {
            out.push(
                path,
                "required-array",
                format!("{r} is not of type 'array' of strings"),
            );
        }
        if !strict {
            return;
        }
        for k in m.keys() {
            if !OPENAI_STRICT_KEYS.contains(&k.as_str()) {
                out.push(
                    path,
                    "strict-keyword",
                    format!("`{k}` is not supported in strict mode"),
                );
            }
        }
        if let Some(f) = m.get("format").and_then(Value::as_str)
            && !OPENAI_STRICT_FORMATS.contains(&f)
        {
            out.push(
                path,
                "strict-format",
                format!("'{f}' is not a valid format"),
            );
        }
        if ts.contains(&"object") || m.contains_key("properties") {
            if m.get("additionalProperties") != Some(&Value::Bool(false)) {
                out.push(
                    path,
                    "strict-additional-properties",
                    "'additionalProperties' is required to be supplied and to be false",
                );
            }
            let keys: BTreeSet<&str> = m
                .get("properties")
                .and_then(Value::as_object)
                .map(|p| p.keys().map(String::as_str).collect())
                .unwrap_or_default();
            let req: BTreeSet<&str> = m
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            if keys != req {
                out.push(
                    path,
                    "strict-required",
                    "every property must be listed in 'required'",
                );
            }
        }
        if m.is_empty() {
            out.push(path, "strict-untyped", "`{}` has no strict form");
        }
    });
}

fn openai_limits(body: &Value, key: &str, out: &mut Out) {
    let n = tools_of(body, key).len();
    if n > 128 {
        out.push(
            &format!("/{key}"),
            "max-tools",
            format!("{n} tools, more than 128"),
        );
    }
}

fn openai_chat(body: &Value, out: &mut Out) {
    if !body.get("model").is_some_and(Value::is_string) {
        out.push("/model", "model-missing", "model is required");
    }
    messages_present(body, "messages", out);
    openai_limits(body, "tools", out);
    if body.get("max_tokens").is_some() && body.get("max_completion_tokens").is_some() {
        out.push(
            "/max_tokens",
            "two-output-limits",
            "max_tokens and max_completion_tokens are both set; OpenAI refuses that",
        );
    }
    let mut seen = BTreeSet::new();
    for (i, t) in tools_of(body, "tools").into_iter().enumerate() {
        let p = format!("/tools/{i}");
        if t.get("type").and_then(Value::as_str) != Some("function") {
            out.push(&p, "tool-type", "type must be \"function\"");
        }
        let f = t.get("function").cloned().unwrap_or(Value::Null);
        openai_tool(
            FunctionFields::of(&f),
            &format!("{p}/function"),
            &mut seen,
            false,
            out,
        );
    }
}

fn openai_responses(body: &Value, out: &mut Out) {
    if !body.get("model").is_some_and(Value::is_string) {
        out.push("/model", "model-missing", "model is required");
    }
    messages_present(body, "input", out);
    openai_limits(body, "tools", out);
    let mut seen = BTreeSet::new();
    for (i, t) in tools_of(body, "tools").into_iter().enumerate() {
        let p = format!("/tools/{i}");
        if t.get("type").and_then(Value::as_str) != Some("function") {
            out.push(&p, "tool-type", "type must be \"function\"");
        }
        openai_tool(FunctionFields::of(t), &p, &mut seen, true, out);
    }
}

const GEMINI_OPENAPI_KEYS: [&str; 21] = [
    "type",
    "format",
    "description",
    "nullable",
    "enum",
    "items",
    "properties",
    "required",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "pattern",
    "anyOf",
    "default",
    "example",
    "minProperties",
    "maxProperties",
    "propertyOrdering",
];
const GEMINI_TYPES: [&str; 7] = [
    "STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT", "NULL",
];

fn gemini(body: &Value, out: &mut Out) {
    messages_present(body, "contents", out);
    let mut seen = BTreeSet::new();
    for (g, group) in tools_of(body, "tools").into_iter().enumerate() {
        let decls = group
            .get("functionDeclarations")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for (i, d) in decls.iter().enumerate() {
            let p = format!("/tools/{g}/functionDeclarations/{i}");
            check_name(
                Dialect::Gemini,
                d.get("name"),
                &format!("{p}/name"),
                &mut seen,
                out,
            );
            match (d.get("parameters"), d.get("parametersJsonSchema")) {
                (Some(_), Some(_)) => out.push(
                    &p,
                    "gemini-both-schemas",
                    "parameters and parametersJsonSchema are mutually exclusive",
                ),
                (Some(s), None) => gemini_openapi(s, &format!("{p}/parameters"), out),
                (None, Some(s)) => gemini_json(s, &format!("{p}/parametersJsonSchema"), out),
                (None, None) => {}
            }
        }
    }
}

fn gemini_json(schema: &Value, sp: &str, out: &mut Out) {
    root_rules(schema, sp, out);
    each_schema(schema, sp, &mut |m, path| {
        if m.get("type").is_some_and(Value::is_array) {
            out.push(path, "gemini-type-array", "type arrays are not accepted");
        }
        if m.contains_key("$ref") && m.keys().any(|k| !k.starts_with('$')) {
            out.push(
                path,
                "gemini-ref-siblings",
                "a $ref may have no siblings except $-prefixed ones",
            );
        }
        if let Some(Value::Array(e)) = m.get("enum")
            && !e.iter().all(|v| v.is_string() || v.is_number())
        {
            out.push(
                path,
                "gemini-enum",
                "enum values must be strings or numbers",
            );
        }
    });
}

fn gemini_openapi(schema: &Value, sp: &str, out: &mut Out) {
    if schema.get("type").and_then(Value::as_str) != Some("OBJECT") {
        out.push(sp, "root-type", "root type must be OBJECT");
    }
    each_schema(schema, sp, &mut |m, path| {
        for k in m.keys() {
            if !GEMINI_OPENAPI_KEYS.contains(&k.as_str()) {
                out.push(
                    path,
                    "gemini-keyword",
                    format!("`{k}` is not a field of Schema"),
                );
            }
        }
        match m.get("type") {
            None => {}
            Some(Value::String(t)) if GEMINI_TYPES.contains(&t.as_str()) => {}
            Some(t) => out.push(
                path,
                "gemini-type",
                format!("type {t} is not one of {GEMINI_TYPES:?}"),
            ),
        }
        if let Some(Value::Array(e)) = m.get("enum")
            && !e.iter().all(Value::is_string)
        {
            out.push(path, "gemini-enum", "enum is list[str]");
        }
        if m.contains_key("anyOf") && m.len() > 1 {
            out.push(
                path,
                "gemini-anyof-siblings",
                "a node with anyOf must hold only anyOf",
            );
        }
        if let Some(f) = m.get("format").and_then(Value::as_str)
            && m.get("type").and_then(Value::as_str) == Some("STRING")
            && f != "enum"
            && f != "date-time"
        {
            out.push(
                path,
                "gemini-format",
                format!("string format {f:?} is not enum or date-time"),
            );
        }
        if let Some(Value::Object(props)) = m.get("properties") {
            for name in props.keys() {
                let mut c = name.chars();
                let ok = c
                    .next()
                    .is_some_and(|f| f.is_ascii_alphabetic() || f == '_')
                    && name.len() <= 64
                    && c.all(|ch| ch.is_ascii_alphanumeric() || ch == '_');
                if !ok {
                    out.push(path, "gemini-property-name", format!("property {name:?}"));
                }
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rules(d: Dialect, body: Value) -> Vec<&'static str> {
        validate_request(d, &body)
            .into_iter()
            .map(|v| v.rule)
            .collect()
    }

    #[test]
    fn anthropic_rules_fire() {
        let body = json!({"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}],
        "tools": [
            {"name": "a.b", "input_schema": {"anyOf": [{"type": "object"}]}},
            {"name": "ok", "input_schema": {"type": "object", "properties": {"x": {"type": "string", "required": true}}}},
            {"name": "ok", "input_schema": {"type": "object"}}
        ]});
        let r = rules(Dialect::Anthropic, body);
        for want in [
            "name-charset",
            "root-type",
            "root-composition",
            "draft-2020-12",
            "name-duplicate",
        ] {
            assert!(r.contains(&want), "{want} missing from {r:?}");
        }
    }

    #[test]
    fn anthropic_cache_marks_are_checked() {
        let mark = json!({"type": "ephemeral"});
        let text = |m: &Value| json!({"type": "text", "text": "t", "cache_control": m});
        let ok = json!({"model": "m", "max_tokens": 10,
            "system": [text(&mark)],
            "tools": [{"name": "a", "input_schema": {"type": "object"}, "cache_control": mark}],
            "messages": [{"role": "user", "content": [text(&json!({"type": "ephemeral", "ttl": "1h"}))]}]});
        assert!(rules(Dialect::Anthropic, ok).is_empty());
        let five: Vec<Value> = (0..5).map(|_| text(&mark)).collect();
        let too_many = json!({"model": "m", "max_tokens": 10,
            "messages": [{"role": "user", "content": five}]});
        assert_eq!(rules(Dialect::Anthropic, too_many), ["cache-control-count"]);
        let wrong = json!({"model": "m", "max_tokens": 10, "system": [{"type": "text", "text": ""}],
            "messages": [{"role": "user", "content": [text(&json!({"type": "persistent"}))],
                "cache_control": mark}]});
        assert_eq!(
            rules(Dialect::Anthropic, wrong),
            ["system-block", "cache-control-place", "cache-control-type"]
        );
    }

    #[test]
    fn openai_rules_fire() {
        let tools: Vec<Value> = (0..129)
            .map(|i| json!({"type": "function", "function": {"name": format!("t{i}"), "parameters": {"type": "object", "properties": {}}, "strict": false}}))
            .collect();
        assert!(
            rules(
                Dialect::OpenAiChat,
                json!({"model": "m", "messages": [{}], "tools": tools})
            )
            .contains(&"max-tools")
        );
        let both = json!({"model": "m", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 9, "max_completion_tokens": 9});
        assert_eq!(rules(Dialect::OpenAiChat, both), ["two-output-limits"]);
        let body = json!({"model": "m", "input": [{}], "tools": [
            {"type": "function", "name": "f", "parameters": {"type": "object", "properties": {"a": {"type": "array"}}, "required": null}},
            {"type": "function", "name": "g", "strict": true, "parameters": {"type": "object", "properties": {"a": {"type": "string", "minLength": 1}}}}]});
        let r = rules(Dialect::OpenAiResponses, body);
        for want in [
            "strict-implicit",
            "array-items",
            "required-array",
            "strict-keyword",
            "strict-additional-properties",
            "strict-required",
        ] {
            assert!(r.contains(&want), "{want} missing from {r:?}");
        }
    }

    #[test]
    fn gemini_rules_fire() {
        let body = json!({"contents": [{}], "tools": [{"functionDeclarations": [
            {"name": "9x", "parametersJsonSchema": {"type": "object", "properties": {"a": {"type": ["string", "null"], "enum": [true]}}}},
            {"name": "y", "parameters": {"type": "OBJECT", "properties": {"a-b": {"type": "string", "title": "t", "enum": [1]}}}}]}]});
        let r = rules(Dialect::Gemini, body);
        for want in [
            "name-start",
            "gemini-type-array",
            "gemini-enum",
            "gemini-keyword",
            "gemini-type",
            "gemini-property-name",
        ] {
            assert!(r.contains(&want), "{want} missing from {r:?}");
        }
    }
}
