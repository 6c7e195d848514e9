//! Argument validation against a tool's original input schema (the server's, not the sanitized
//! one the provider saw), with the `jsonschema` crate. `ValidArgs` can only be made here, so a
//! call cannot reach a server with arguments that were not checked.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value};
use switchboard_core::hash::ContentHash;

/// Arguments that passed validation (or whose schema could not be compiled, see
/// [`Validators::check`]).
#[derive(Clone, Debug, PartialEq)]
pub struct ValidArgs(Map<String, Value>);

impl ValidArgs {
    /// The arguments.
    pub fn into_inner(self) -> Map<String, Value> {
        self.0
    }

    /// The arguments, borrowed.
    pub fn as_map(&self) -> &Map<String, Value> {
        &self.0
    }
}

/// Why arguments were refused: one line per problem, each naming the field and what was
/// expected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Invalid(pub Vec<String>);

/// Compiled validators, cached by schema hash.
#[derive(Clone, Default)]
pub struct Validators {
    cache: Arc<Mutex<HashMap<ContentHash, Option<Arc<jsonschema::Validator>>>>>,
}

/// At most this many problems are listed.
const MAX_PROBLEMS: usize = 5;

impl Validators {
    /// Check `args` against `schema`. A non-object argument value is refused (MCP arguments are
    /// an object); `null` counts as `{}`. A schema the validator cannot compile (a remote
    /// `$ref`, a malformed keyword) is logged and the arguments pass: the server still judges.
    pub fn check(&self, schema: &Value, args: Value) -> Result<ValidArgs, Invalid> {
        let map = match args {
            Value::Object(m) => m,
            Value::Null => Map::new(),
            other => {
                return Err(Invalid(vec![format!(
                    "the arguments must be a JSON object, got {}",
                    kind(&other)
                )]));
            }
        };
        let Some(validator) = self.compiled(schema) else {
            return Ok(ValidArgs(map));
        };
        let instance = Value::Object(map);
        let problems: Vec<String> = validator
            .iter_errors(&instance)
            .take(MAX_PROBLEMS)
            .map(|e| {
                let at = e.instance_path().to_string();
                let field = if at.is_empty() {
                    "the arguments".to_string()
                } else {
                    format!("field {at}")
                };
                let schema_at = e.schema_path().to_string();
                let parent = parent_pointer(&schema_at);
                let expected = match e.kind() {
                    // The missing property's own schema, not the whole object's.
                    jsonschema::error::ValidationErrorKind::Required { property } => parent
                        .zip(property.as_str())
                        .and_then(|(p, name)| {
                            schema.pointer(&format!("{p}/properties/{}", escape(name)))
                        })
                        .map(|s| format!(" (expected: {})", short(s)))
                        .unwrap_or_default(),
                    // The names the object takes, not its whole schema.
                    jsonschema::error::ValidationErrorKind::AdditionalProperties { .. } => parent
                        .and_then(|p| schema.pointer(&format!("{p}/properties")))
                        .and_then(Value::as_object)
                        .map(|props| {
                            let names: Vec<&str> = props.keys().map(String::as_str).collect();
                            format!(" (it takes: {})", names.join(", "))
                        })
                        .unwrap_or_default(),
                    _ => parent
                        .and_then(|p| schema.pointer(&p))
                        .map(|s| format!(" (expected: {})", short(s)))
                        .unwrap_or_default(),
                };
                format!("{field}: {e}{expected}")
            })
            .collect();
        let Value::Object(map) = instance else {
            return Err(Invalid(vec!["the arguments must be a JSON object".into()]));
        };
        if problems.is_empty() {
            Ok(ValidArgs(map))
        } else {
            Err(Invalid(problems))
        }
    }

    /// Whether a successful result keeps its tool's `outputSchema` (MCP: the server must send
    /// `structuredContent` that matches it; a client should check): `None` when it does, or
    /// when there is nothing to check (an `isError` result, a schema that does not compile),
    /// else what is wrong, for the person running the host (the model never sees the schema).
    pub fn check_output(
        &self,
        schema: &Value,
        result: &switchboard_core::CallResult,
    ) -> Option<String> {
        if result.is_error {
            return None;
        }
        let Some(structured) = &result.structured_content else {
            return Some(
                "the tool declares an output schema, but its result has no structuredContent"
                    .into(),
            );
        };
        let validator = self.compiled(schema)?;
        let problems: Vec<String> = validator
            .iter_errors(structured)
            .take(MAX_PROBLEMS)
            .map(|e| {
                let at = e.instance_path().to_string();
                let field = if at.is_empty() {
                    "the structuredContent".to_string()
                } else {
                    format!("field {at}")
                };
                format!("{field}: {e}")
            })
            .collect();
        (!problems.is_empty()).then(|| {
            format!(
                "its structuredContent does not match the tool's output schema: {}",
                problems.join("; ")
            )
        })
    }

    fn compiled(&self, schema: &Value) -> Option<Arc<jsonschema::Validator>> {
        let key = ContentHash::of_json(schema);
        let mut cache = match self.cache.lock() {
            Ok(c) => c,
            Err(poisoned) => poisoned.into_inner(),
        };
        cache
            .entry(key)
            .or_insert_with(|| match jsonschema::validator_for(schema) {
                Ok(v) => Some(Arc::new(v)),
                Err(e) => {
                    tracing::warn!(error = %e, "a tool's schema does not compile; what it describes is passed unchecked");
                    None
                }
            })
            .clone()
    }
}

/// The schema location of the keyword's parent (`/properties/q/type` → `/properties/q`).
fn parent_pointer(schema_path: &str) -> Option<String> {
    let (parent, _) = schema_path.rsplit_once('/')?;
    Some(parent.to_string())
}

/// A property name as one JSON Pointer segment.
fn escape(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

/// A schema fragment on one line, cut at 200 characters.
fn short(v: &Value) -> String {
    let s = serde_json::to_string(v).unwrap_or_default();
    switchboard_core::clip(&s, 200).into_owned()
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "maxLength": 5},
                "status": {"type": "string", "enum": ["open", "closed"]}
            },
            "required": ["query"],
            "additionalProperties": false
        })
    }

    #[test]
    fn a_result_is_checked_against_the_output_schema() {
        let v = Validators::default();
        let schema = json!({
            "type": "object",
            "properties": {"temp": {"type": "number"}, "unit": {"enum": ["C", "F"]}},
            "required": ["temp", "unit"]
        });
        let result = |structured: Option<Value>, is_error: bool| switchboard_core::CallResult {
            content: Vec::new(),
            structured_content: structured,
            is_error,
        };
        assert_eq!(
            v.check_output(
                &schema,
                &result(Some(json!({"temp": 21.5, "unit": "C"})), false)
            ),
            None
        );
        let wrong = v
            .check_output(
                &schema,
                &result(Some(json!({"temp": "warm", "unit": "K"})), false),
            )
            .unwrap();
        assert!(
            wrong.starts_with("its structuredContent does not match the tool's output schema: ")
                && wrong.contains("field /temp: \"warm\" is not of type \"number\"")
                && wrong.contains("field /unit"),
            "{wrong}"
        );
        let missing = v.check_output(&schema, &result(None, false)).unwrap();
        assert!(missing.contains("no structuredContent"), "{missing}");
        // An error result is not held to the schema.
        assert_eq!(v.check_output(&schema, &result(None, true)), None);
        // Nor is anything held to a schema that does not compile.
        assert_eq!(
            v.check_output(&json!({"type": 7}), &result(Some(json!(1)), false)),
            None
        );
    }

    #[test]
    fn valid_arguments_pass_and_null_is_empty() {
        let v = Validators::default();
        let ok = v.check(&schema(), json!({"query": "sso"})).unwrap();
        assert_eq!(ok.as_map()["query"], "sso");
        assert!(v.check(&json!({"type": "object"}), Value::Null).is_ok());
    }

    #[test]
    fn problems_name_the_field_and_what_was_expected() {
        let v = Validators::default();
        let Invalid(p) = v
            .check(&schema(), json!({"query": 5, "status": "gone"}))
            .unwrap_err();
        assert_eq!(p.len(), 2, "{p:?}");
        assert!(
            p.iter().any(
                |l| l.starts_with("field /query: 5 is not of type \"string\"")
                    && l.contains("expected: {\"maxLength\":5,\"type\":\"string\"}")
            ),
            "{p:?}"
        );
        assert!(p.iter().any(|l| l.starts_with("field /status")), "{p:?}");
        // A missing property: its own schema, not the whole object's.
        let Invalid(p) = v.check(&schema(), json!({})).unwrap_err();
        assert_eq!(
            p,
            [
                "the arguments: \"query\" is a required property (expected: {\"maxLength\":5,\"type\":\"string\"})"
            ]
        );
        // A property the object does not take: the names it does take.
        let Invalid(p) = v
            .check(&schema(), json!({"query": "a", "qeury": "b"}))
            .unwrap_err();
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(
            p[0].ends_with("(it takes: query, status)") && p[0].contains("qeury"),
            "{p:?}"
        );
        let Invalid(p) = v.check(&schema(), json!([1])).unwrap_err();
        assert_eq!(p, ["the arguments must be a JSON object, got an array"]);
    }

    #[test]
    fn a_schema_that_does_not_compile_lets_arguments_through() {
        let v = Validators::default();
        let bad = json!({"type": "object", "properties": {"x": {"minLength": "three"}}});
        assert!(v.check(&bad, json!({"x": "a"})).is_ok());
    }
}
