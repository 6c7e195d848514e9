//! Walking a tool definition: every string with its JSON pointer, the parameters of a schema,
//! and every subschema. Depth is bounded so a hostile schema cannot blow the stack.

use serde_json::Value;

/// Deeper than any real schema; a definition nested further is not walked further.
const MAX_DEPTH: usize = 64;

/// Escape one JSON pointer segment (RFC 6901).
pub fn escape(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

/// `base` + `/segment`, escaped.
pub fn join(base: &str, segment: &str) -> String {
    format!("{base}/{}", escape(segment))
}

/// Calls `f(pointer, text, is_key)` for every string value and every object key in `value`.
/// A key's pointer is the pointer of the value it names.
pub fn strings(value: &Value, pointer: &str, f: &mut dyn FnMut(&str, &str, bool)) {
    strings_at(value, pointer, 0, f);
}

fn strings_at(value: &Value, pointer: &str, depth: usize, f: &mut dyn FnMut(&str, &str, bool)) {
    if depth > MAX_DEPTH {
        return;
    }
    match value {
        Value::String(s) => f(pointer, s, false),
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                strings_at(v, &join(pointer, &i.to_string()), depth + 1, f);
            }
        }
        Value::Object(map) => {
            for (k, v) in map {
                let p = join(pointer, k);
                f(&p, k, true);
                strings_at(v, &p, depth + 1, f);
            }
        }
        _ => {}
    }
}

/// One parameter of a tool: a named property of the input schema, at any object depth.
#[derive(Debug)]
pub struct Param<'a> {
    /// The property name.
    pub name: &'a str,
    /// Pointer to its schema.
    pub pointer: String,
    /// Its schema.
    pub schema: &'a Value,
}

/// Every property of `schema` (rooted at `pointer`), descending into nested objects and into
/// the items of arrays of objects.
pub fn params<'a>(schema: &'a Value, pointer: &str) -> Vec<Param<'a>> {
    let mut out = Vec::new();
    params_at(schema, pointer, 0, &mut out);
    out
}

fn params_at<'a>(schema: &'a Value, pointer: &str, depth: usize, out: &mut Vec<Param<'a>>) {
    if depth > MAX_DEPTH {
        return;
    }
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        let base = join(pointer, "properties");
        for (name, sub) in props {
            let p = join(&base, name);
            out.push(Param {
                name,
                pointer: p.clone(),
                schema: sub,
            });
            params_at(sub, &p, depth + 1, out);
        }
    }
    if let Some(items) = schema.get("items").filter(|i| i.is_object()) {
        params_at(items, &join(pointer, "items"), depth + 1, out);
    }
}

/// The schema's `type` words (`"string"` or `["string", "null"]`).
pub fn types(schema: &Value) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn params_descend_into_objects_and_arrays() {
        let s = json!({"properties": {"a/b": {"type": "object", "properties": {"c": {}}},
                                       "list": {"type": "array", "items": {"properties": {"d": {}}}}}});
        let ps: Vec<String> = params(&s, "/inputSchema")
            .into_iter()
            .map(|p| p.pointer)
            .collect();
        assert_eq!(
            ps,
            [
                "/inputSchema/properties/a~1b",
                "/inputSchema/properties/a~1b/properties/c",
                "/inputSchema/properties/list",
                "/inputSchema/properties/list/items/properties/d",
            ]
        );
    }
}
