//! Schema walking and the common sanitizer pre-pass of reference/providers.md §2.5 (steps 1–7),
//! shared by every dialect. Dialect files add their own rules after it.

use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::error::ProviderError;

/// Deepest schema nesting kept; deeper subschemas are replaced by `{}` (§2.5 step 2).
pub const MAX_DEPTH: usize = 64;
/// Most schema nodes accepted in one tool (openai-agents uses 100k).
pub const MAX_NODES: usize = 100_000;

/// One rewrite the sanitizer made.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Change {
    /// JSON pointer (into the schema being rewritten) of the node that changed; rules whose id
    /// starts with `description-` concern the tool's description instead.
    pub path: String,
    /// Stable id of the rule that fired.
    pub rule: &'static str,
    /// The value before, when there was one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub before: Option<Value>,
    /// The value after, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after: Option<Value>,
}

/// A schema rewritten for one dialect, with every change made.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Sanitized {
    /// The schema to send.
    pub schema: Value,
    /// What was changed, in the order the rules ran.
    pub changes: Vec<Change>,
    /// True when the schema was converted to OpenAI strict mode (send `strict: true`).
    pub strict: bool,
    /// Why strict mode was asked for but not applied.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strict_fallback: Option<String>,
    /// True when a non-object root was wrapped as `{value: <schema>}`; the caller unwraps
    /// `arguments.value` before calling the tool.
    pub wrapped_root: bool,
}

/// Collects changes while rules run.
#[derive(Debug, Default)]
pub(crate) struct Log {
    pub changes: Vec<Change>,
}

impl Log {
    pub fn record(
        &mut self,
        path: &str,
        rule: &'static str,
        before: Option<Value>,
        after: Option<Value>,
    ) {
        self.changes.push(Change {
            path: path.to_string(),
            rule,
            before,
            after,
        });
    }
}

/// Append one escaped token to a JSON pointer.
pub(crate) fn join(path: &str, token: &str) -> String {
    format!("{path}/{}", token.replace('~', "~0").replace('/', "~1"))
}

/// Keywords whose value is a map of name → subschema.
const MAP_KEYS: [&str; 5] = [
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];
/// Keywords whose value is one subschema.
const ONE_KEYS: [&str; 10] = [
    "items",
    "additionalProperties",
    "additionalItems",
    "unevaluatedProperties",
    "unevaluatedItems",
    "contains",
    "propertyNames",
    "not",
    "if",
    "then",
];
/// Keywords whose value is a list of subschemas.
const LIST_KEYS: [&str; 4] = ["anyOf", "oneOf", "allOf", "prefixItems"];

/// Call `f` on every direct subschema slot of `node` with its pointer. `items` given as an
/// array (draft-04 tuples) is visited element by element.
pub(crate) fn children_mut(
    node: &mut Map<String, Value>,
    path: &str,
    f: &mut dyn FnMut(&mut Value, &str),
) {
    for (key, value) in node.iter_mut() {
        let k = key.as_str();
        if MAP_KEYS.contains(&k) {
            if let Value::Object(m) = value {
                for (name, child) in m.iter_mut() {
                    f(child, &join(&join(path, k), name));
                }
            }
        } else if ONE_KEYS.contains(&k) || k == "else" {
            match value {
                Value::Array(list) => {
                    for (i, child) in list.iter_mut().enumerate() {
                        f(child, &join(&join(path, k), &i.to_string()));
                    }
                }
                _ => f(value, &join(path, k)),
            }
        } else if LIST_KEYS.contains(&k)
            && let Value::Array(list) = value
        {
            for (i, child) in list.iter_mut().enumerate() {
                f(child, &join(&join(path, k), &i.to_string()));
            }
        }
    }
}

/// Visit every object subschema, parents before children.
pub(crate) fn walk_pre(
    node: &mut Value,
    path: &str,
    f: &mut dyn FnMut(&mut Map<String, Value>, &str),
) {
    if let Value::Object(m) = node {
        f(m, path);
        children_mut(m, path, &mut |c, p| walk_pre(c, p, f));
    }
}

/// Visit every object subschema, children before parents.
pub(crate) fn walk_post(
    node: &mut Value,
    path: &str,
    f: &mut dyn FnMut(&mut Map<String, Value>, &str),
) {
    if let Value::Object(m) = node {
        children_mut(m, path, &mut |c, p| walk_post(c, p, f));
        f(m, path);
    }
}

/// The `type` of a node as a list of names (empty when absent or malformed).
pub(crate) fn types(node: &Map<String, Value>) -> Vec<&str> {
    match node.get("type") {
        Some(Value::String(s)) => vec![s.as_str()],
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

pub(crate) fn has_type(node: &Map<String, Value>, t: &str) -> bool {
    types(node).contains(&t)
}

/// Step 1: a missing, empty or `true` schema means "no arguments"; anything that is not an
/// object schema cannot be sent.
pub(crate) fn root_value(schema: &Value, log: &mut Log) -> Result<Value, ProviderError> {
    match schema {
        Value::Object(m) if !m.is_empty() => Ok(schema.clone()),
        Value::Object(_) | Value::Null | Value::Bool(true) => {
            let after = json!({"type": "object", "properties": {}});
            log.record("", "empty-root", Some(schema.clone()), Some(after.clone()));
            Ok(after)
        }
        other => Err(ProviderError::Unacceptable {
            rule: "root-not-schema",
            pointer: String::new(),
            message: format!("input schema is {other}, not a JSON Schema object"),
        }),
    }
}

/// Step 2: count nodes (error past the budget) and cut subschemas nested deeper than
/// [`MAX_DEPTH`] to `{}`.
pub(crate) fn limits(schema: &mut Value, log: &mut Log) -> Result<(), ProviderError> {
    fn count(v: &Value) -> usize {
        match v {
            Value::Object(m) => 1 + m.values().map(count).sum::<usize>(),
            Value::Array(a) => 1 + a.iter().map(count).sum::<usize>(),
            _ => 1,
        }
    }
    let n = count(schema);
    if n > MAX_NODES {
        return Err(ProviderError::Unacceptable {
            rule: "node-budget",
            pointer: String::new(),
            message: format!("schema has {n} JSON nodes, more than the budget of {MAX_NODES}"),
        });
    }
    fn cut(node: &mut Value, path: &str, depth: usize, log: &mut Log) {
        if depth >= MAX_DEPTH && node.as_object().is_some_and(|m| !m.is_empty()) {
            log.record(path, "depth-limit", None, Some(json!({})));
            *node = json!({});
            return;
        }
        if let Value::Object(m) = node {
            children_mut(m, path, &mut |c, p| cut(c, p, depth + 1, log));
        }
    }
    cut(schema, "", 0, log);
    Ok(())
}

/// The local check against the draft 2020-12 metaschema: a provider that validates tool
/// schemas rejects the whole request when one of them is invalid, so that tool is excluded
/// (and reported under `rule`) instead.
pub(crate) fn metaschema(schema: &Value, rule: &'static str) -> Result<(), ProviderError> {
    jsonschema::draft202012::meta::validate(schema).map_err(|e| ProviderError::Unacceptable {
        rule,
        pointer: e.schema_path().to_string(),
        message: format!("not a valid draft 2020-12 schema: {e}"),
    })
}

/// Map of non-standard `type` names seen in MCP servers to JSON Schema types (draft-03 and
/// language-specific spellings; Anthropic rejects them as invalid draft 2020-12).
fn type_alias(t: &str) -> Option<&'static str> {
    Some(match t {
        "string" | "str" | "text" => "string",
        "number" | "float" | "double" | "decimal" => "number",
        "integer" | "int" | "long" => "integer",
        "boolean" | "bool" => "boolean",
        "object" | "dict" | "map" => "object",
        "array" | "list" => "array",
        "null" => "null",
        _ => return None,
    })
}

/// Steps 6 and the draft-03/04 repairs, on every node: `required` that is not a list of unique
/// strings, boolean `required` on properties (draft-03), boolean `exclusiveMinimum/Maximum`
/// (draft-04), `properties` that is not an object, unknown `type` names, `$schema`, tuple
/// `items`.
pub(crate) fn repair(schema: &mut Value, tuple_to_prefix_items: bool, log: &mut Log) {
    walk_pre(schema, "", &mut |node, path| {
        if let Some(v) = node.remove("$schema") {
            log.record(&join(path, "$schema"), "drop-$schema", Some(v), None);
        }
        if let Some(props) = node.get("properties")
            && !props.is_object()
        {
            let before = node.insert("properties".into(), json!({}));
            log.record(
                &join(path, "properties"),
                "properties-not-object",
                before,
                Some(json!({})),
            );
        }
        // Draft-03 `required: true` on a property: lift it into the parent's list.
        let mut lifted = Vec::new();
        if let Some(Value::Object(props)) = node.get_mut("properties") {
            for (name, p) in props.iter_mut() {
                if let Value::Object(pm) = p
                    && let Some(Value::Bool(b)) = pm.get("required").cloned()
                {
                    pm.remove("required");
                    let p_path = join(&join(path, "properties"), name);
                    log.record(
                        &join(&p_path, "required"),
                        "draft3-required",
                        Some(Value::Bool(b)),
                        None,
                    );
                    if b {
                        lifted.push(name.clone());
                    }
                }
            }
        }
        match node.get("required") {
            None => {}
            Some(Value::Array(list)) => {
                // A set, not `Vec::contains`: a long list must not take quadratic time.
                let mut seen = std::collections::HashSet::new();
                let clean: Vec<Value> = list
                    .iter()
                    .filter(|v| v.as_str().is_some_and(|s| seen.insert(s)))
                    .cloned()
                    .collect();
                if clean.len() != list.len() {
                    let before = node.insert("required".into(), Value::Array(clean.clone()));
                    log.record(
                        &join(path, "required"),
                        "required-cleaned",
                        before,
                        Some(Value::Array(clean)),
                    );
                }
            }
            Some(_) => {
                let before = node.remove("required");
                log.record(&join(path, "required"), "required-not-array", before, None);
            }
        }
        if !lifted.is_empty() {
            let req = node
                .entry("required")
                .or_insert_with(|| Value::Array(Vec::new()));
            if let Value::Array(list) = req {
                for name in lifted {
                    let v = Value::String(name);
                    if !list.contains(&v) {
                        list.push(v);
                    }
                }
            }
        }
        for (excl, bound) in [
            ("exclusiveMinimum", "minimum"),
            ("exclusiveMaximum", "maximum"),
        ] {
            if let Some(Value::Bool(b)) = node.get(excl).cloned() {
                let before = json!({excl: b, bound: node.get(bound)});
                node.remove(excl);
                if b && let Some(limit) = node.remove(bound) {
                    node.insert(excl.into(), limit);
                }
                let after = json!({excl: node.get(excl), bound: node.get(bound)});
                log.record(path, "draft4-exclusive", Some(before), Some(after));
            }
        }
        repair_type(node, path, log);
        if let Some(Value::Array(tuple)) = node.get("items").cloned() {
            node.remove("items");
            if tuple_to_prefix_items {
                node.insert("prefixItems".into(), Value::Array(tuple.clone()));
                if let Some(extra) = node.remove("additionalItems") {
                    node.insert("items".into(), extra);
                }
            } else {
                let merged = if tuple.len() == 1 {
                    tuple[0].clone()
                } else {
                    json!({"anyOf": tuple})
                };
                node.insert("items".into(), merged);
            }
            log.record(
                &join(path, "items"),
                "items-tuple",
                Some(Value::Array(tuple)),
                node.get("items").or(node.get("prefixItems")).cloned(),
            );
        }
        if let Some(ap) = node.get("additionalProperties")
            && !(ap.is_boolean() || ap.is_object())
        {
            let before = node.remove("additionalProperties");
            log.record(
                &join(path, "additionalProperties"),
                "additional-properties-invalid",
                before,
                None,
            );
        }
        if let Some(e) = node.get("enum")
            && !e.is_array()
        {
            let before = node.remove("enum");
            log.record(&join(path, "enum"), "enum-not-array", before, None);
        }
    });
}

fn repair_type(node: &mut Map<String, Value>, path: &str, log: &mut Log) {
    let Some(t) = node.get("type").cloned() else {
        return;
    };
    let names: Vec<Value> = match &t {
        Value::String(_) => vec![t.clone()],
        Value::Array(a) => a.clone(),
        _ => vec![],
    };
    let mut fixed: Vec<Value> = Vec::new();
    for n in &names {
        if let Some(canon) = n.as_str().and_then(type_alias) {
            let v = Value::String(canon.to_string());
            if !fixed.contains(&v) {
                fixed.push(v);
            }
        }
    }
    let after = match fixed.len() {
        0 => None,
        1 if t.is_string() || names.len() == 1 => Some(fixed[0].clone()),
        _ => Some(Value::Array(fixed)),
    };
    let after = match (&t, after) {
        // A one-element type array stays an array only if it was one.
        (Value::Array(_), Some(Value::String(s))) => Some(json!([s])),
        (_, a) => a,
    };
    if after.as_ref() != Some(&t) {
        match &after {
            Some(a) => node.insert("type".into(), a.clone()),
            None => node.remove("type"),
        };
        log.record(&join(path, "type"), "type-repaired", Some(t), after);
    }
}

/// Step 4: the root must be `type: "object"` without top-level `oneOf/anyOf/allOf`.
/// Returns whether the root was wrapped as `{value: <schema>}`.
pub(crate) fn root_object(schema: &mut Value, log: &mut Log) -> bool {
    let Value::Object(root) = schema else {
        return false;
    };
    flatten_root_composition(root, log);
    let ts: Vec<String> = types(root).into_iter().map(str::to_string).collect();
    match ts.as_slice() {
        [] => {
            root.insert("type".into(), json!("object"));
            log.record("/type", "root-type-object", None, Some(json!("object")));
        }
        [t] if t == "object" => {
            if !root["type"].is_string() {
                let before = root.insert("type".into(), json!("object"));
                log.record("/type", "root-type-object", before, Some(json!("object")));
            }
        }
        many if many.iter().any(|t| t == "object") => {
            // `["object","null"]`: a tool call always has an arguments object.
            let before = root.insert("type".into(), json!("object"));
            log.record("/type", "root-type-object", before, Some(json!("object")));
        }
        _ => {
            let inner = std::mem::take(schema);
            let wrapped = json!({
                "type": "object",
                "properties": {"value": inner},
                "required": ["value"],
            });
            log.record(
                "",
                "root-wrapped",
                None,
                Some(json!({"properties": ["value"]})),
            );
            *schema = wrapped;
            return true;
        }
    }
    if let Value::Object(root) = schema
        && !root.contains_key("properties")
    {
        root.insert("properties".into(), json!({}));
        log.record("/properties", "root-properties", None, Some(json!({})));
    }
    false
}

/// Anthropic rejects `oneOf/anyOf/allOf` at the top level ("input_schema does not support
/// oneOf, allOf, or anyOf at the top level"), and OpenAI strict rejects a root `anyOf`. Merge
/// the branches' properties into the root: from `allOf` with their `required`, from
/// `anyOf`/`oneOf` as optional; the lost constraint goes into the description.
fn flatten_root_composition(root: &mut Map<String, Value>, log: &mut Log) {
    for key in ["allOf", "anyOf", "oneOf"] {
        let Some(Value::Array(branches)) = root.remove(key) else {
            continue;
        };
        let before = Value::Array(branches.clone());
        let mut props = match root.remove("properties") {
            Some(Value::Object(p)) => p,
            _ => Map::new(),
        };
        let mut required: Vec<Value> = match root.remove("required") {
            Some(Value::Array(r)) => r,
            _ => Vec::new(),
        };
        let mut alternatives = Vec::new();
        for b in &branches {
            let Value::Object(bm) = b else { continue };
            if let Some(Value::Object(bp)) = bm.get("properties") {
                for (k, v) in bp {
                    props.entry(k.clone()).or_insert_with(|| v.clone());
                }
            }
            let breq: Vec<Value> = bm
                .get("required")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            if key == "allOf" {
                for r in breq {
                    if !required.contains(&r) {
                        required.push(r);
                    }
                }
            } else if !breq.is_empty() {
                let names: Vec<&str> = breq.iter().filter_map(Value::as_str).collect();
                alternatives.push(names.join(" + "));
            }
            if root.get("type").is_none()
                && let Some(t) = bm.get("type")
            {
                root.insert("type".into(), t.clone());
            }
        }
        root.insert("properties".into(), Value::Object(props));
        if !required.is_empty() {
            root.insert("required".into(), Value::Array(required));
        }
        if !alternatives.is_empty() {
            let note = format!("Provide one of: {}.", alternatives.join("; or "));
            let desc = match root.get("description").and_then(Value::as_str) {
                Some(d) if !d.is_empty() => format!("{d}\n\n{note}"),
                _ => note,
            };
            root.insert("description".into(), Value::String(desc));
        }
        log.record(
            &join("", key),
            "root-composition-flattened",
            Some(before),
            Some(root.get("properties").cloned().unwrap_or_default()),
        );
    }
}

/// Step 5: arrays need `items` (OpenAI: "array schema missing items").
pub(crate) fn array_items(schema: &mut Value, items: &Value, log: &mut Log) {
    walk_pre(schema, "", &mut |node, path| {
        if has_type(node, "array") && !node.contains_key("items") {
            node.insert("items".into(), items.clone());
            log.record(
                &join(path, "items"),
                "array-items",
                None,
                Some(items.clone()),
            );
        }
    });
}

/// Remove `keys` from every node, recording each removal under `rule`.
pub(crate) fn drop_keys(schema: &mut Value, keys: &[&str], rule: &'static str, log: &mut Log) {
    walk_pre(schema, "", &mut |node, path| {
        for k in keys {
            if let Some(v) = node.remove(*k) {
                log.record(&join(path, k), rule, Some(v), None);
            }
        }
    });
}
