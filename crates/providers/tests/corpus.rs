//! Every tool of the shared corpus (../shared/data/catalogs, 1,598 real MCP tools) through every
//! dialect: the rendered requests must break no documented rule, and arguments valid under a
//! sanitized schema must stay valid under the original one.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value, json};
use switchboard_core::names::NameMap;
use switchboard_core::{Dialect, ServerCatalog, catalog_file};
use switchboard_providers::{
    Message, RequestParts, SanitizeOptions, ToolSpec, arguments, prepare_tool, render_request,
};
use switchboard_test_support::{peers, validator};

fn corpus() -> Vec<(String, ServerCatalog)> {
    let dir = peers::shared_data().join("catalogs");
    let mut out = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    for path in files {
        let bytes = std::fs::read(&path).unwrap();
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        let (servers, skipped) = catalog_file::parse(&name, &name, &bytes).unwrap();
        assert!(skipped.is_empty(), "{skipped:?}");
        out.extend(servers.into_iter().map(|s| (name.clone(), s)));
    }
    out
}

/// The dialect variants worth checking: each dialect's default, plus OpenAI strict and Gemini
/// `parameters`.
fn variants() -> Vec<(&'static str, Dialect, SanitizeOptions)> {
    let plain = SanitizeOptions::default();
    let strict = SanitizeOptions {
        strict: true,
        ..plain
    };
    let openapi = SanitizeOptions {
        gemini_openapi: true,
        ..plain
    };
    vec![
        ("anthropic", Dialect::Anthropic, plain),
        ("openai-chat", Dialect::OpenAiChat, plain),
        ("openai-chat+strict", Dialect::OpenAiChat, strict),
        ("openai-responses", Dialect::OpenAiResponses, plain),
        ("openai-responses+strict", Dialect::OpenAiResponses, strict),
        ("gemini", Dialect::Gemini, plain),
        ("gemini+parameters", Dialect::Gemini, openapi),
    ]
}

#[test]
fn every_corpus_tool_renders_without_violations_in_every_dialect() {
    let corpus = corpus();
    let total: usize = corpus.iter().map(|(_, s)| s.tools.len()).sum();
    assert_eq!(total, 1598, "the shared corpus changed size");
    let mut report = String::new();
    let mut failures = Vec::new();
    for (label, dialect, opts) in variants() {
        let mut touched: BTreeMap<&'static str, BTreeSet<(String, String, String)>> =
            BTreeMap::new();
        let mut excluded = Vec::new();
        let mut strict_on = 0;
        let mut renamed = 0;
        let mut sent = 0;
        for (file, server) in &corpus {
            let map = NameMap::build(
                dialect,
                server
                    .tools
                    .iter()
                    .map(|t| (server.server.as_str(), t.def.name.as_str())),
                &BTreeMap::new(),
            );
            renamed += map.renames().len();
            let mut tools: Vec<ToolSpec> = Vec::new();
            let mut seen = BTreeSet::new();
            for t in &server.tools {
                if !seen.insert(t.def.name.clone()) {
                    continue;
                }
                let public = map.public(&server.server, &t.def.name).unwrap();
                match prepare_tool(
                    dialect,
                    public,
                    t.def.description.as_deref(),
                    &t.def.input_schema,
                    &opts,
                ) {
                    Ok(p) => {
                        for c in &p.changes {
                            touched.entry(c.rule).or_default().insert((
                                file.clone(),
                                server.server.clone(),
                                t.def.name.clone(),
                            ));
                        }
                        strict_on += usize::from(p.spec.strict);
                        tools.push(p.spec);
                    }
                    Err(e) => excluded.push(format!("{}/{}: {e}", server.server, t.def.name)),
                }
            }
            sent += tools.len();
            for chunk in tools.chunks(128) {
                let parts = RequestParts {
                    model: "m".into(),
                    system: Some("s".into()),
                    messages: vec![Message::user("hi")],
                    tools: chunk.to_vec(),
                    max_tokens: Some(64),
                    compatible_server: false,
                    temperature: None,
                    reasoning_effort: None,
                    cache_key: None,
                    gemini_openapi: opts.gemini_openapi,
                    stream: false,
                };
                let body = render_request(dialect, &parts);
                for v in validator::validate_request(dialect, &body) {
                    let at = v
                        .path
                        .split('/')
                        .nth(2)
                        .and_then(|i| i.parse::<usize>().ok());
                    let who = at
                        .and_then(|i| chunk.get(i))
                        .map(|t| t.name.as_str())
                        .unwrap_or("?");
                    failures.push(format!("{label}: {who}: {v}"));
                }
            }
        }
        report.push_str(&format!(
            "\n{label}: {sent} sent, {} excluded, {renamed} renamed, {strict_on} strict\n",
            excluded.len()
        ));
        for (rule, tools) in &touched {
            report.push_str(&format!("  {rule:<32} {:>5} tools\n", tools.len()));
        }
        for e in excluded.iter().take(10) {
            report.push_str(&format!("  excluded {e}\n"));
        }
        // Exclusions are reported, never silent; in the corpus they must stay rare.
        assert!(
            excluded.len() * 100 <= total,
            "{label}: {} excluded:\n{}",
            excluded.len(),
            excluded.join("\n")
        );
    }
    eprintln!("{report}");
    assert!(
        failures.is_empty(),
        "{} violations:\n{}",
        failures.len(),
        failures
            .iter()
            .take(40)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// Rules that make a schema accept more than the original, by design (a format the dialect
/// cannot express is dropped and noted in the description).
const LOSSY: [&str; 7] = [
    "gemini-format-dropped",
    "strict-format-dropped",
    "ref-cycle-cut",
    "ref-budget-cut",
    "ref-depth-cut",
    "depth-limit",
    "root-composition-flattened",
];

/// Strict mode moves unsupported keywords into the description; only validation keywords
/// (not `default`, `title`, ...) loosen the schema.
fn drops_a_constraint(c: &switchboard_providers::Change) -> bool {
    const ANNOTATIONS: [&str; 10] = [
        "default",
        "title",
        "examples",
        "example",
        "$comment",
        "$id",
        "deprecated",
        "readOnly",
        "writeOnly",
        "nullable",
    ];
    c.rule == "strict-keyword-folded"
        && c.path
            .rsplit('/')
            .next()
            .is_some_and(|k| !ANNOTATIONS.contains(&k))
}

fn lower_types(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| match (k.as_str(), x) {
                    ("type", Value::String(t)) => (k.clone(), json!(t.to_ascii_lowercase())),
                    ("enum" | "default" | "example", _) => (k.clone(), x.clone()),
                    _ => (k.clone(), lower_types(x)),
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(lower_types).collect()),
        other => other.clone(),
    }
}

/// A value that the given schema accepts, as far as a small generator can tell (it does not
/// solve `pattern`, `not` or cross-keyword constraints; callers check with a validator).
fn generate(schema: &Value, root: &Value, depth: usize, nulls: bool) -> Value {
    let Value::Object(m) = schema else {
        return json!("x");
    };
    if depth > 12 {
        return Value::Null;
    }
    if let Some(Value::String(r)) = m.get("$ref")
        && let Some(target) = r.strip_prefix('#').and_then(|p| root.pointer(p))
    {
        return generate(target, root, depth + 1, nulls);
    }
    // Strict schemas mark optional properties nullable: send `null` as a model would.
    if nulls
        && m.get("type")
            .and_then(Value::as_array)
            .is_some_and(|a| a.contains(&json!("null")))
    {
        return Value::Null;
    }
    if let Some(c) = m.get("const") {
        return c.clone();
    }
    let ty: Option<String> = match m.get("type") {
        Some(Value::String(t)) => Some(t.to_ascii_lowercase()),
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .map(str::to_ascii_lowercase),
        _ => None,
    };
    if let Some(Value::Array(e)) = m.get("enum")
        && let Some(first) = e.iter().find(|v| !v.is_null())
    {
        // Gemini `parameters`: `{type: INTEGER, format: enum, enum: ["101"]}` means the number.
        return match (first, ty.as_deref()) {
            (Value::String(s), Some("integer" | "number")) => {
                serde_json::from_str(s).unwrap_or(first.clone())
            }
            _ => first.clone(),
        };
    }
    for k in ["anyOf", "oneOf", "allOf"] {
        if let Some(Value::Array(b)) = m.get(k)
            && let Some(Value::Object(first)) = b.first()
        {
            // The branch plus its parent's other keywords (`{type: string, anyOf: [{format}]}`).
            let mut merged = m.clone();
            merged.remove(k);
            merged.extend(first.clone());
            return generate(&Value::Object(merged), root, depth + 1, nulls);
        }
    }
    let num = |int: bool| {
        let lo = m
            .get("minimum")
            .and_then(Value::as_f64)
            .or_else(|| {
                m.get("exclusiveMinimum")
                    .and_then(Value::as_f64)
                    .map(|x| x.floor() + 1.0)
            })
            .unwrap_or(1.0);
        let hi = m.get("maximum").and_then(Value::as_f64).or_else(|| {
            m.get("exclusiveMaximum")
                .and_then(Value::as_f64)
                .map(|x| x.ceil() - 1.0)
        });
        let v = hi.map_or(lo.ceil(), |h| lo.ceil().min(h));
        if int { json!(v as i64) } else { json!(v) }
    };
    match ty.as_deref() {
        Some("object") | None if m.contains_key("properties") || ty.is_some() => {
            let mut out = Map::new();
            if let Some(Value::Object(props)) = m.get("properties") {
                for (k, p) in props {
                    out.insert(k.clone(), generate(p, root, depth + 1, nulls));
                }
            }
            Value::Object(out)
        }
        Some("array") => {
            let n = m
                .get("minItems")
                .and_then(Value::as_u64)
                .unwrap_or(1)
                .max(1) as usize;
            let item = m
                .get("items")
                .map(|i| generate(i, root, depth + 1, nulls))
                .unwrap_or(json!("x"));
            Value::Array(vec![item; n])
        }
        Some("string") => {
            let s = match m.get("format").and_then(Value::as_str) {
                Some("date-time") => "2024-01-02T03:04:05Z".to_string(),
                Some("date") => "2024-01-02".to_string(),
                Some("email") => "a@example.com".to_string(),
                Some("uri" | "url") => "https://example.com/".to_string(),
                Some("uuid") => "123e4567-e89b-12d3-a456-426614174000".to_string(),
                Some("ipv4") => "192.0.2.1".to_string(),
                Some("ipv6") => "2001:db8::1".to_string(),
                Some("hostname") => "example.com".to_string(),
                _ => "x".repeat(
                    m.get("minLength")
                        .and_then(Value::as_u64)
                        .unwrap_or(1)
                        .max(1) as usize,
                ),
            };
            json!(s)
        }
        Some("integer") => num(true),
        Some("number") => num(false),
        Some("boolean") => json!(true),
        Some("null") => Value::Null,
        _ => json!("x"),
    }
}

#[test]
fn arguments_valid_under_the_sanitized_schema_are_valid_under_the_original() {
    let corpus = corpus();
    let mut report = String::new();
    let mut broken = Vec::new();
    for (label, dialect, opts) in variants() {
        let (mut checked, mut generator_missed, mut lossy) = (0, 0, 0);
        for (_, server) in &corpus {
            for t in &server.tools {
                let Ok(original) = jsonschema::validator_for(&t.def.input_schema) else {
                    continue;
                };
                let Ok(p) = prepare_tool(dialect, "t", None, &t.def.input_schema, &opts) else {
                    continue;
                };
                // Cutting a recursive or oversized structure, or merging root alternatives,
                // loosens the schema on purpose (reported as such); dispatch validation against
                // the original schema catches what gets through.
                if p.changes
                    .iter()
                    .any(|c| LOSSY.contains(&c.rule) || drops_a_constraint(c))
                {
                    lossy += 1;
                    continue;
                }
                let args = generate(&p.spec.schema, &p.spec.schema, 0, opts.strict);
                // Gemini `parameters` spells types in upper case; read it as JSON Schema.
                let as_json_schema = if opts.gemini_openapi {
                    lower_types(&p.spec.schema)
                } else {
                    p.spec.schema.clone()
                };
                let sanitized = jsonschema::validator_for(&as_json_schema).unwrap();
                if !sanitized.is_valid(&args) {
                    generator_missed += 1;
                    continue;
                }
                checked += 1;
                let args =
                    arguments::restore(&t.def.input_schema, p.spec.strict, p.wrapped_root, args);
                if !original.is_valid(&args) {
                    let errors: Vec<String> = original
                        .iter_errors(&args)
                        .map(|e| e.to_string())
                        .take(3)
                        .collect();
                    broken.push(format!(
                        "{label}: {}/{}: {args} -> {errors:?}",
                        server.server, t.def.name
                    ));
                }
            }
        }
        report.push_str(&format!(
            "{label}: {checked} argument sets checked, generator missed {generator_missed}, {lossy} lossy by design\n"
        ));
        assert!(checked >= 1500, "{label}: only {checked} checked\n{report}");
    }
    eprintln!("{report}");
    assert!(
        broken.is_empty(),
        "{} broken:\n{}",
        broken.len(),
        broken
            .iter()
            .take(20)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn corpus_names_are_valid_unique_reversible_and_stable() {
    let corpus = corpus();
    let pairs: BTreeSet<(&str, &str)> = corpus
        .iter()
        .flat_map(|(_, s)| {
            s.tools
                .iter()
                .map(|t| (s.server.as_str(), t.def.name.as_str()))
        })
        .collect();
    let servers: Vec<&str> = pairs
        .iter()
        .map(|(s, _)| *s)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    for dialect in Dialect::ALL {
        let full = NameMap::build(dialect, pairs.iter().copied(), &BTreeMap::new());
        let publics: BTreeSet<&str> = full.names().map(|(_, _, p)| p).collect();
        assert_eq!(
            publics.len(),
            pairs.len(),
            "{dialect}: duplicate public names"
        );
        for (s, t) in &pairs {
            let p = full.public(s, t).unwrap();
            assert!(
                switchboard_core::names::is_valid(dialect, p),
                "{dialect}: {p:?}"
            );
            assert_eq!(full.resolve(p), Some((*s, *t)));
        }
        // Drop every other server: nobody else's name moves.
        let kept: BTreeSet<&str> = servers.iter().step_by(2).copied().collect();
        let half = NameMap::build(
            dialect,
            pairs.iter().copied().filter(|(s, _)| kept.contains(s)),
            &BTreeMap::new(),
        );
        for (s, t, p) in half.names() {
            assert_eq!(full.public(s, t), Some(p), "{dialect}: {s}/{t} moved");
        }
    }
}
