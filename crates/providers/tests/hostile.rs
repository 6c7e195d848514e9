//! Hostile tool input schemas through `prepare_tool`, for every dialect and option: no panic,
//! a quick answer, the input untouched, the same answer twice, and either a tool whose rendered
//! request the independent validator accepts or an exclusion with a reason.

use std::time::{Duration, Instant};

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use switchboard_core::Dialect;
use switchboard_providers::{
    Message, ProviderError, RequestParts, SanitizeOptions, prepare_tool, render_request,
};
use switchboard_test_support::validator::validate_request;

/// Keywords, draft-03/04 leftovers, names that need escaping in a pointer, odd unicode.
const KEYS: &[&str] = &[
    "type",
    "properties",
    "required",
    "items",
    "additionalProperties",
    "anyOf",
    "oneOf",
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "prefixItems",
    "additionalItems",
    "patternProperties",
    "propertyNames",
    "contains",
    "dependentSchemas",
    "$ref",
    "$defs",
    "definitions",
    "$schema",
    "$id",
    "enum",
    "const",
    "default",
    "examples",
    "format",
    "description",
    "title",
    "nullable",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxItems",
    "uniqueItems",
    "A",
    "B",
    "a",
    "x_1",
    "",
    "a/b",
    "~0~1",
    "💥",
    "\u{202e}rtl",
    "名前",
    "a b",
];

const STRINGS: &[&str] = &[
    "object",
    "string",
    "integer",
    "number",
    "array",
    "boolean",
    "null",
    "float",
    "list",
    "dict",
    "OBJECT",
    "",
    "#",
    "#/$defs/A",
    "#/$defs/B",
    "#/definitions/A",
    "#/properties/a",
    "#/properties",
    "#/$defs",
    "#/nope",
    "#/$defs/A/properties/a",
    "#/items/0",
    "#/a~1b",
    "http://example.com/s.json",
    "date-time",
    "uri",
    "enum",
    "int64",
    "^[a-z]+$",
    "(",
];

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        prop_oneof![
            Just(0i64),
            Just(-1),
            Just(3),
            Just(i64::MAX),
            Just(i64::MIN),
            any::<i64>(),
        ]
        .prop_map(Value::from),
        Just(json!(u64::MAX)),
        prop_oneof![
            Just(0.5f64),
            Just(1e308),
            Just(-1e308),
            Just(f64::MIN_POSITIVE),
            Just(-0.0),
        ]
        .prop_map(Value::from),
        prop::sample::select(STRINGS).prop_map(Value::from),
        "\\PC{0,6}".prop_map(Value::from),
    ]
}

/// One member of an object: mostly a key from [`KEYS`], often a `$ref` or a `type`.
fn member(inner: impl Strategy<Value = Value> + Clone) -> impl Strategy<Value = (String, Value)> {
    prop_oneof![
        4 => (prop::sample::select(KEYS), inner).prop_map(|(k, v)| (k.to_string(), v)),
        1 => prop::sample::select(STRINGS).prop_map(|r| ("$ref".to_string(), json!(r))),
        1 => prop::sample::select(&STRINGS[..12]).prop_map(|t| ("type".to_string(), json!(t))),
        1 => prop::collection::vec(prop::sample::select(&STRINGS[..8]), 0..4)
            .prop_map(|t| ("type".to_string(), json!(t))),
    ]
}

fn hostile() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(8, 96, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec(member(inner), 0..6)
                .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<String, Value>>())),
        ]
    })
}

/// A root with `$defs`/`definitions` named A and B (each may refer to either, or to itself)
/// and properties that refer to them, with and without siblings.
fn with_defs() -> impl Strategy<Value = Value> {
    (hostile(), hostile(), hostile(), any::<bool>()).prop_map(|(a, b, root, legacy)| {
        let mut r = match root {
            Value::Object(m) => m,
            _ => Map::new(),
        };
        let (defs, prefix) = if legacy {
            ("definitions", "#/definitions")
        } else {
            ("$defs", "#/$defs")
        };
        r.insert(defs.into(), json!({"A": a, "B": b}));
        r.insert(
            "properties".into(),
            json!({
                "x": {"$ref": format!("{prefix}/A")},
                "y": {"$ref": format!("{prefix}/B"), "description": "y"},
                "z": {"type": "array", "items": {"$ref": "#"}},
            }),
        );
        Value::Object(r)
    })
}

fn schemas() -> impl Strategy<Value = Value> {
    prop_oneof![hostile(), with_defs()]
}

const OPTIONS: [SanitizeOptions; 3] = [
    SanitizeOptions {
        strict: false,
        gemini_openapi: false,
    },
    SanitizeOptions {
        strict: true,
        gemini_openapi: false,
    },
    SanitizeOptions {
        strict: false,
        gemini_openapi: true,
    },
];

/// Subschema slots that must hold a schema (an object, or a boolean where JSON Schema allows
/// one), walked independently of the sanitizer.
fn bad_slots(v: &Value, path: &str, objects_only: bool, out: &mut Vec<String>) {
    let Value::Object(m) = v else {
        if !v.is_boolean() || objects_only {
            out.push(format!("{path}: {v} is not a schema"));
        }
        return;
    };
    for (k, child) in m {
        let p = format!("{path}/{k}");
        match k.as_str() {
            "properties" | "$defs" | "definitions" | "patternProperties" => match child {
                Value::Object(cm) => {
                    for (name, c) in cm {
                        bad_slots(c, &format!("{p}/{name}"), objects_only, out);
                    }
                }
                other => out.push(format!("{p}: {other} is not a map of schemas")),
            },
            "anyOf" | "oneOf" | "allOf" | "prefixItems" => match child {
                Value::Array(list) if !list.is_empty() => {
                    for (i, c) in list.iter().enumerate() {
                        bad_slots(c, &format!("{p}/{i}"), objects_only, out);
                    }
                }
                other => out.push(format!("{p}: {other} is not a non-empty list of schemas")),
            },
            "items" | "additionalProperties" | "not" | "if" | "then" | "else" | "contains" => {
                bad_slots(child, &p, objects_only, out);
            }
            "required"
                if !child
                    .as_array()
                    .is_some_and(|r| r.iter().all(Value::is_string)) =>
            {
                out.push(format!("{p}: {child} is not a list of names"));
            }
            "enum" if !child.is_array() => out.push(format!("{p}: {child} is not a list")),
            _ => {}
        }
    }
}

/// Everything that must hold for one schema, one dialect, one set of options.
fn check(dialect: Dialect, opts: SanitizeOptions, schema: &Value) -> Result<(), String> {
    let original = schema.clone();
    let start = Instant::now();
    let first = prepare_tool(dialect, "t", Some("d"), schema, &opts);
    let took = start.elapsed();
    let ctx = format!("{dialect} {opts:?} on {schema}");
    if took > Duration::from_secs(2) {
        return Err(format!("{ctx}: took {took:?}"));
    }
    if *schema != original {
        return Err(format!("{ctx}: the input schema was changed"));
    }
    let again = prepare_tool(dialect, "t", Some("d"), schema, &opts);
    if first != again {
        return Err(format!("{ctx}: two runs differ: {first:?} / {again:?}"));
    }
    let prepared = match first {
        Ok(p) => p,
        Err(ProviderError::Unacceptable { rule, message, .. }) => {
            return if rule.is_empty() || message.is_empty() {
                Err(format!("{ctx}: an exclusion without a reason"))
            } else {
                Ok(())
            };
        }
        Err(other) => return Err(format!("{ctx}: unexpected error kind {other:?}")),
    };
    let out = &prepared.spec.schema;
    let ctx = format!("{ctx}\n  -> {out}");
    let openapi = dialect == Dialect::Gemini && opts.gemini_openapi;
    let root_type = if openapi { "OBJECT" } else { "object" };
    if out.get("type") != Some(&json!(root_type)) || !out["properties"].is_object() {
        return Err(format!("{ctx}: the root is not an object schema"));
    }
    let mut slots = Vec::new();
    bad_slots(out, "", openapi, &mut slots);
    if !slots.is_empty() {
        return Err(format!("{ctx}: {slots:?}"));
    }
    let openai = matches!(dialect, Dialect::OpenAiChat | Dialect::OpenAiResponses);
    if openai && opts.strict && !prepared.spec.strict && prepared.strict_fallback.is_none() {
        return Err(format!(
            "{ctx}: strict asked for, not applied, no reason given"
        ));
    }
    if prepared.spec.strict && (!openai || !opts.strict || prepared.strict_fallback.is_some()) {
        return Err(format!("{ctx}: strict set without being asked for"));
    }
    let parts = RequestParts {
        model: "m".into(),
        system: None,
        messages: vec![Message::user("hi")],
        tools: vec![prepared.spec.clone()],
        max_tokens: Some(100),
        compatible_server: false,
        temperature: None,
        reasoning_effort: None,
        cache_key: None,
        gemini_openapi: opts.gemini_openapi,
        stream: false,
    };
    let body = render_request(dialect, &parts);
    let violations = validate_request(dialect, &body);
    if !violations.is_empty() {
        let v: Vec<String> = violations.iter().map(ToString::to_string).collect();
        return Err(format!("{ctx}: {v:#?}"));
    }
    Ok(())
}

fn check_all(schema: &Value) -> Result<(), String> {
    for dialect in Dialect::ALL {
        for opts in OPTIONS {
            check(dialect, opts, schema)?;
        }
    }
    Ok(())
}

proptest! {
    #[test]
    fn every_dialect_sends_a_valid_schema_or_excludes_the_tool(schema in schemas()) {
        if let Err(e) = check_all(&schema) {
            prop_assert!(false, "{}", e);
        }
    }
}

fn sanitized(dialect: Dialect, opts: SanitizeOptions, schema: Value) -> Value {
    let s = switchboard_providers::sanitize(dialect, &schema, &opts)
        .unwrap_or_else(|e| panic!("{dialect}: {e}"));
    if let Err(e) = check(dialect, opts, &schema) {
        panic!("{e}");
    }
    s.schema
}

const OPENAPI: SanitizeOptions = SanitizeOptions {
    strict: false,
    gemini_openapi: true,
};

#[test]
fn exclusive_integer_bounds_at_the_ends_of_i64_do_not_overflow() {
    let out = sanitized(
        Dialect::Gemini,
        OPENAPI,
        json!({"type": "object", "properties": {
            "n": {"type": "integer", "exclusiveMinimum": i64::MAX},
            "m": {"type": "integer", "exclusiveMaximum": i64::MIN}}}),
    );
    assert_eq!(out["properties"]["n"]["minimum"], json!(i64::MAX), "{out}");
    assert_eq!(out["properties"]["m"]["maximum"], json!(i64::MIN), "{out}");
}

#[test]
fn an_invalid_schema_is_excluded_for_openai_and_gemini_not_sent() {
    // OpenAI and Gemini reject the whole request when one tool's schema is not JSON Schema.
    let schema = json!({"type": "object", "properties": {"a": {"type": "string"}},
        "$defs": {"A": null}, "anyOf": []});
    for (dialect, opts, rule) in [
        (Dialect::OpenAiChat, OPTIONS[0], "openai-metaschema"),
        (Dialect::OpenAiResponses, OPTIONS[1], "openai-metaschema"),
        (Dialect::Gemini, OPTIONS[0], "gemini-metaschema"),
    ] {
        let s = json!({"type": "object", "properties": {"a": {"type": "string"}, "b": null}});
        match switchboard_providers::sanitize(dialect, &s, &opts) {
            Err(ProviderError::Unacceptable { rule: got, .. }) => assert_eq!(got, rule),
            other => panic!("{dialect}: {other:?}"),
        }
        check(dialect, opts, &schema).unwrap();
    }
}

#[test]
fn references_under_an_unresolved_or_cut_reference_are_still_inlined() {
    // The root's `$ref` resolves to nothing; its properties' references must not dangle once
    // `$defs` is gone.
    let out = sanitized(
        Dialect::Gemini,
        OPTIONS[0],
        json!({"$ref": "object", "$defs": {"A": {"type": "string"}},
            "properties": {"x": {"$ref": "#/$defs/A"}, "y": {"$ref": "#/$defs/A", "description": "y"}}}),
    );
    assert_eq!(
        out["properties"],
        json!({"x": {"type": "string"}, "y": {"type": "string", "description": "y"}})
    );
    // A recursive reference is cut, and the references beside it still resolve.
    let out = sanitized(
        Dialect::Gemini,
        OPTIONS[0],
        json!({"type": "object", "$defs": {"S": {"type": "string"},
            "N": {"type": "object", "properties": {"next": {"$ref": "#/$defs/N", "properties": {"s": {"$ref": "#/$defs/S"}}}}}},
            "properties": {"n": {"$ref": "#/$defs/N"}}}),
    );
    assert!(!out.to_string().contains("$ref"), "{out}");
}

#[test]
fn gemini_openapi_keeps_the_root_an_object_and_has_no_boolean_schemas() {
    let out = sanitized(Dialect::Gemini, OPENAPI, json!({"enum": [0, "object"]}));
    assert_eq!(out["type"], "OBJECT", "{out}");
    assert!(out.get("enum").is_none(), "{out}");
    let out = sanitized(
        Dialect::Gemini,
        OPENAPI,
        json!({"type": "object", "properties": {"any": true, "list": {"type": "array", "items": false}}}),
    );
    assert_eq!(out["properties"]["any"], json!({}), "{out}");
    assert_eq!(
        out["properties"]["list"]["items"],
        json!({"type": "OBJECT"}),
        "{out}"
    );
}

#[test]
fn openai_gives_a_one_element_object_type_its_properties() {
    let out = sanitized(
        Dialect::OpenAiChat,
        OPTIONS[0],
        json!({"type": "object", "properties": {"o": {"type": ["object"]}}}),
    );
    assert_eq!(
        out["properties"]["o"],
        json!({"type": ["object"], "properties": {}})
    );
}

#[test]
fn a_long_required_list_takes_linear_time() {
    // 40,000 properties, all required (within the node budget): `required` was cleaned and
    // matched with `Vec::contains`, 16 s for this one call in a debug build; now about 1 s.
    let names: Vec<String> = (0..40_000).map(|i| format!("p{i}")).collect();
    let props: Map<String, Value> = names.iter().map(|k| (k.clone(), json!({}))).collect();
    let schema = json!({"type": "object", "properties": props, "required": names});
    let start = Instant::now();
    let strict = OPTIONS[1];
    // Strict mode is tried (and falls back: more than 5,000 properties).
    let p = prepare_tool(Dialect::OpenAiChat, "t", None, &schema, &strict).unwrap();
    assert!(p.strict_fallback.is_some());
    let took = start.elapsed();
    assert!(took < Duration::from_secs(8), "took {took:?}");
}
