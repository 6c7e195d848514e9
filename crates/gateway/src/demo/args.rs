//! Argument reading for the demo tools: a missing or mistyped argument becomes an `is_error`
//! result the model can act on.

use serde_json::{Map, Value};
use switchboard_core::CallResult;

/// A required string argument, or an error result naming it.
pub fn required_str<'a>(args: &'a Map<String, Value>, name: &str) -> Result<&'a str, CallResult> {
    match args.get(name) {
        Some(Value::String(s)) => Ok(s),
        Some(other) => Err(CallResult::text(
            format!("argument `{name}` must be a string, got {other}"),
            true,
        )),
        None => Err(CallResult::text(
            format!("missing required argument `{name}`"),
            true,
        )),
    }
}

/// An optional string argument.
pub fn optional_str<'a>(
    args: &'a Map<String, Value>,
    name: &str,
) -> Result<Option<&'a str>, CallResult> {
    match args.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(_) => required_str(args, name).map(Some),
    }
}

/// Lowercase words of a text, for the demo's naive matching.
pub fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// How many of the query's words occur in the text.
pub fn score(query: &str, text: &str) -> usize {
    let hay = words(text);
    words(query).iter().filter(|w| hay.contains(w)).count()
}
