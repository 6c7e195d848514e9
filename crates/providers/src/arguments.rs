//! Arguments coming back from a model: undo what sanitizing changed before they meet the
//! original schema (argument validation) and the server.
//!
//! Two rewrites need undoing: OpenAI strict mode sends every formerly optional property, as
//! `null` when the model leaves it out (strict mode), and a non-object root was wrapped as
//! `{value: ...}` ([`crate::Sanitized::wrapped_root`]).

use serde_json::Value;

/// How deep `$ref`s of the original schema are followed while dropping nulls.
const MAX_DEPTH: usize = 32;

/// Restore arguments for the original schema: drop `null`s the original does not allow on
/// optional properties (when `strict` was applied) and unwrap a wrapped root.
pub fn restore(original: &Value, strict: bool, wrapped_root: bool, mut args: Value) -> Value {
    if wrapped_root {
        args = match args {
            Value::Object(mut m) => m.remove("value").unwrap_or(Value::Null),
            other => other,
        };
    }
    if strict {
        drop_nulls(original, original, &mut args, 0);
    }
    args
}

fn resolve<'a>(root: &'a Value, schema: &'a Value) -> &'a Value {
    match schema.get("$ref").and_then(Value::as_str) {
        Some(r) => r
            .strip_prefix('#')
            .and_then(|p| root.pointer(p))
            .unwrap_or(schema),
        None => schema,
    }
}

fn allows_null(schema: &Value) -> bool {
    let by_type = match schema.get("type") {
        Some(Value::String(t)) => t == "null",
        Some(Value::Array(a)) => a.iter().any(|t| t == "null"),
        _ => false,
    };
    let by_enum = schema
        .get("enum")
        .and_then(Value::as_array)
        .is_some_and(|e| e.contains(&Value::Null));
    let by_branch = ["anyOf", "oneOf"].iter().any(|k| {
        schema
            .get(*k)
            .and_then(Value::as_array)
            .is_some_and(|b| b.iter().any(allows_null))
    });
    by_type || by_enum || by_branch
}

fn drop_nulls(root: &Value, schema: &Value, args: &mut Value, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    let schema = resolve(root, schema);
    match args {
        Value::Object(m) => {
            let Some(props) = schema.get("properties").and_then(Value::as_object) else {
                return;
            };
            let required: Vec<&str> = schema
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            m.retain(|k, v| {
                !(v.is_null()
                    && !required.contains(&k.as_str())
                    && props.get(k).is_some_and(|p| !allows_null(resolve(root, p))))
            });
            for (k, v) in m.iter_mut() {
                if let Some(p) = props.get(k) {
                    drop_nulls(root, p, v, depth + 1);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items").filter(|i| i.is_object()) {
                for v in items {
                    drop_nulls(root, item_schema, v, depth + 1);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strict_nulls_of_optional_properties_are_dropped() {
        let original = json!({"type": "object", "required": ["q"], "properties": {
            "q": {"type": ["string", "null"]},
            "status": {"type": "string"},
            "maybe": {"type": ["string", "null"]},
            "nested": {"type": "object", "properties": {"x": {"type": "integer"}}}}});
        let args = json!({"q": null, "status": null, "maybe": null, "nested": {"x": null}});
        assert_eq!(
            restore(&original, true, false, args),
            json!({"q": null, "maybe": null, "nested": {}})
        );
    }

    #[test]
    fn a_wrapped_root_is_unwrapped() {
        assert_eq!(
            restore(
                &json!({"type": "string"}),
                false,
                true,
                json!({"value": "x"})
            ),
            json!("x")
        );
    }
}
