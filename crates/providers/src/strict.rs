//! OpenAI strict mode (§2.2 "Strict", §2.5 "OpenAI strict"): convert a sanitized schema when
//! possible, or say why not so the caller falls back to `strict: false` for that tool.
//!
//! Strict mode needs every property in `required` and `additionalProperties: false` on every
//! object. Unlike openai-agents' converter, formerly optional properties are made nullable
//! before they are added to `required`, so the model can still leave them out (by sending
//! `null`); the caller drops `null`s of optional properties before calling the tool.

use serde_json::{Map, Value, json};

use crate::schema::{Log, children_mut, has_type, join, types};

/// Keywords strict mode accepts (Structured Outputs "supported schemas").
const KEPT: [&str; 21] = [
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
/// Keywords that change what is valid in ways strict mode cannot express: fall back.
const REJECTED: [&str; 11] = [
    "not",
    "if",
    "then",
    "else",
    "dependentRequired",
    "dependentSchemas",
    "dependencies",
    "patternProperties",
    "unevaluatedProperties",
    "prefixItems",
    "contains",
];
/// Supported string formats (`uri` is not: "'uri' is not a valid format").
const FORMATS: [&str; 9] = [
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
const MAX_PROPERTIES: usize = 5000;
const MAX_NESTING: usize = 10;
const MAX_ENUM_VALUES: usize = 1000;
const MAX_TOTAL_CHARS: usize = 120_000;
const MAX_LONG_ENUM_CHARS: usize = 15_000;

#[derive(Default)]
struct Totals {
    properties: usize,
    enum_values: usize,
    /// Characters of property names, definition names, enum and const values.
    chars: usize,
}

/// Convert in place; `Err` carries the reason strict mode is not possible.
pub(crate) fn convert(schema: &mut Value, log: &mut Log) -> Result<(), String> {
    let mut totals = Totals::default();
    node(schema, "", 0, true, &mut totals, log)?;
    if totals.properties > MAX_PROPERTIES {
        return Err(format!(
            "{} properties, more than strict mode's {MAX_PROPERTIES}",
            totals.properties
        ));
    }
    if totals.enum_values > MAX_ENUM_VALUES {
        return Err(format!(
            "{} enum values, more than strict mode's {MAX_ENUM_VALUES}",
            totals.enum_values
        ));
    }
    if totals.chars > MAX_TOTAL_CHARS {
        return Err(format!(
            "{} characters of names and enum values, more than strict mode's {MAX_TOTAL_CHARS}",
            totals.chars
        ));
    }
    Ok(())
}

fn value_chars(v: &Value) -> usize {
    match v {
        Value::String(s) => s.chars().count(),
        other => other.to_string().chars().count(),
    }
}

fn node(
    v: &mut Value,
    path: &str,
    nesting: usize,
    is_root: bool,
    totals: &mut Totals,
    log: &mut Log,
) -> Result<(), String> {
    let Value::Object(m) = v else {
        // `additionalProperties: false` is the one boolean schema strict mode wants.
        if path.ends_with("/additionalProperties") && *v == Value::Bool(false) {
            return Ok(());
        }
        return Err(format!("boolean schema at {path:?}"));
    };
    if nesting > MAX_NESTING {
        return Err(format!(
            "nested deeper than strict mode's {MAX_NESTING} levels at {path:?}"
        ));
    }
    for k in REJECTED {
        if m.contains_key(k) {
            return Err(format!("`{k}` at {path:?} is not supported in strict mode"));
        }
    }
    if let Some(Value::Array(all)) = m.get("allOf") {
        if all.len() > 1 {
            return Err(format!("`allOf` with {} branches at {path:?}", all.len()));
        }
        let only = all.first().cloned();
        m.remove("allOf");
        if let Some(Value::Object(inner)) = only {
            for (k, val) in inner {
                m.entry(k).or_insert(val);
            }
        }
        log.record(&join(path, "allOf"), "strict-allof-merged", None, None);
    }
    if let Some(one) = m.remove("oneOf") {
        if m.contains_key("anyOf") {
            return Err(format!("both `oneOf` and `anyOf` at {path:?}"));
        }
        m.insert("anyOf".into(), one);
        log.record(&join(path, "oneOf"), "strict-oneof-anyof", None, None);
    }
    if m.get("default") == Some(&Value::Null) {
        m.remove("default");
    }
    let typed = m.contains_key("type")
        || m.contains_key("anyOf")
        || m.contains_key("enum")
        || m.contains_key("const")
        || m.contains_key("$ref");
    if !typed {
        // `{}` (any value) has no strict form; a string is a valid subset of "anything".
        let t = if m.contains_key("properties") {
            "object"
        } else {
            "string"
        };
        m.insert("type".into(), json!(t));
        log.record(&join(path, "type"), "strict-untyped", None, Some(json!(t)));
    }
    if let Some(f) = m.get("format").and_then(Value::as_str)
        && !FORMATS.contains(&f)
    {
        let f = f.to_string();
        m.remove("format");
        fold(m, "format", json!(f));
        log.record(
            &join(path, "format"),
            "strict-format-dropped",
            Some(json!(f)),
            None,
        );
    }
    // Every other unsupported keyword becomes a hint in the description, as Anthropic's SDK
    // transformer does (`{minLength: 3}`).
    let extra: Vec<String> = m
        .keys()
        .filter(|k| !KEPT.contains(&k.as_str()))
        .cloned()
        .collect();
    for k in extra {
        if let Some(val) = m.remove(&k) {
            let note = val.clone();
            if k != "title" && k != "$schema" && k != "$id" && k != "$comment" {
                fold(m, &k, note);
            }
            log.record(&join(path, &k), "strict-keyword-folded", Some(val), None);
        }
    }
    if let Some(Value::Array(e)) = m.get("enum") {
        totals.enum_values += e.len();
        let chars: usize = e.iter().map(value_chars).sum();
        totals.chars += chars;
        if e.len() > 250 && chars > MAX_LONG_ENUM_CHARS {
            return Err(format!(
                "enum at {path:?} has {} values and {chars} characters (strict allows {MAX_LONG_ENUM_CHARS} above 250 values)",
                e.len()
            ));
        }
    }
    if let Some(c) = m.get("const") {
        totals.chars += value_chars(c);
    }
    for defs in ["$defs", "definitions"] {
        if let Some(Value::Object(d)) = m.get(defs) {
            totals.chars += d.keys().map(|k| k.chars().count()).sum::<usize>();
        }
    }
    let is_object = has_type(m, "object") || m.contains_key("properties");
    if is_object {
        object(m, path, is_root, totals, log)?;
    }
    let mut result = Ok(());
    let next = nesting + usize::from(is_object || has_type(m, "array"));
    children_mut(m, path, &mut |c, p| {
        if result.is_ok() {
            result = node(c, p, next, false, totals, log);
        }
    });
    result
}

fn object(
    m: &mut Map<String, Value>,
    path: &str,
    is_root: bool,
    totals: &mut Totals,
    log: &mut Log,
) -> Result<(), String> {
    let props_empty = m
        .get("properties")
        .and_then(Value::as_object)
        .is_none_or(Map::is_empty);
    match m.get("additionalProperties") {
        None => {
            // A nested object with no properties is a free-form map: strict cannot say that.
            if props_empty && !is_root {
                return Err(format!("free-form object at {path:?}"));
            }
            m.insert("additionalProperties".into(), json!(false));
            log.record(
                &join(path, "additionalProperties"),
                "strict-additional-properties",
                None,
                Some(json!(false)),
            );
        }
        Some(Value::Bool(false)) => {}
        Some(other) => {
            return Err(format!(
                "`additionalProperties: {other}` at {path:?} (strict needs false)"
            ));
        }
    }
    let required: std::collections::HashSet<String> = m
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    let Some(Value::Object(props)) = m.get_mut("properties") else {
        m.insert("properties".into(), json!({}));
        m.insert("required".into(), json!([]));
        return Ok(());
    };
    totals.properties += props.len();
    totals.chars += props.keys().map(|k| k.chars().count()).sum::<usize>();
    let mut all = Vec::new();
    for (name, p) in props.iter_mut() {
        all.push(Value::String(name.clone()));
        if !required.contains(name) {
            let p_path = join(&join(path, "properties"), name);
            nullable(p);
            log.record(&p_path, "strict-optional-nullable", None, None);
        }
    }
    let before = m.insert("required".into(), Value::Array(all.clone()));
    if before.as_ref() != Some(&Value::Array(all.clone())) {
        log.record(
            &join(path, "required"),
            "strict-all-required",
            before,
            Some(Value::Array(all)),
        );
    }
    Ok(())
}

/// Allow `null` in a property schema.
fn nullable(p: &mut Value) {
    let Value::Object(m) = p else { return };
    if let Some(Value::Array(e)) = m.get_mut("enum")
        && !e.contains(&Value::Null)
    {
        e.push(Value::Null);
    }
    if m.contains_key("type") && !m.contains_key("const") {
        let mut ts: Vec<Value> = types(m).into_iter().map(|t| json!(t)).collect();
        if !ts.contains(&json!("null")) {
            ts.push(json!("null"));
        }
        m.insert("type".into(), Value::Array(ts));
    } else if let Some(Value::Array(any)) = m.get_mut("anyOf") {
        if !any.iter().any(|b| b.get("type") == Some(&json!("null"))) {
            any.push(json!({"type": "null"}));
        }
    } else {
        let inner = std::mem::take(p);
        *p = json!({"anyOf": [inner, {"type": "null"}]});
    }
}

fn fold(m: &mut Map<String, Value>, key: &str, value: Value) {
    let note = format!("{{{key}: {value}}}");
    let desc = match m.get("description").and_then(Value::as_str) {
        Some(d) if !d.is_empty() => format!("{d}\n\n{note}"),
        _ => note,
    };
    m.insert("description".into(), Value::String(desc));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(input: Value, expect: Result<Value, &str>) {
        let mut s = input;
        let mut log = Log::default();
        match (convert(&mut s, &mut log), expect) {
            (Ok(()), Ok(e)) => assert_eq!(s, e),
            (Err(got), Err(want)) => assert!(got.contains(want), "{got}"),
            (got, want) => panic!("got {got:?} / {s}, want {want:?}"),
        }
    }

    #[test]
    fn optional_properties_become_nullable_and_required() {
        check(
            json!({"type": "object", "properties": {
                "q": {"type": "string"},
                "status": {"type": "string", "enum": ["open", "closed"]}},
                "required": ["q"]}),
            Ok(
                json!({"type": "object", "additionalProperties": false, "properties": {
                "q": {"type": "string"},
                "status": {"type": ["string", "null"], "enum": ["open", "closed", null]}},
                "required": ["q", "status"]}),
            ),
        );
    }

    #[test]
    fn open_maps_and_not_fall_back() {
        check(
            json!({"type": "object", "properties": {"m": {"type": "object"}}, "required": ["m"]}),
            Err("free-form object"),
        );
        check(
            json!({"type": "object", "properties": {}, "additionalProperties": true}),
            Err("additionalProperties"),
        );
        check(
            json!({"type": "object", "properties": {"a": {"not": {"type": "null"}}}}),
            Err("`not`"),
        );
    }

    #[test]
    fn size_limits_fall_back() {
        let many: Vec<Value> = (0..1001).map(|i| json!(format!("v{i}"))).collect();
        check(
            json!({"type": "object", "properties": {"e": {"type": "string", "enum": many}}, "required": ["e"]}),
            Err("1001 enum values"),
        );
        let long: Vec<Value> = (0..300).map(|i| json!(format!("{i:0>60}"))).collect();
        check(
            json!({"type": "object", "properties": {"e": {"type": "string", "enum": long}}, "required": ["e"]}),
            Err("above 250 values"),
        );
    }

    #[test]
    fn unsupported_keywords_move_into_the_description() {
        check(
            json!({"type": "object", "properties": {"n": {"type": "string", "minLength": 2, "format": "uri"}}, "required": ["n"]}),
            Ok(
                json!({"type": "object", "additionalProperties": false, "required": ["n"], "properties": {
                "n": {"type": "string", "description": "{format: \"uri\"}\n\n{minLength: 2}"}}}),
            ),
        );
    }
}
