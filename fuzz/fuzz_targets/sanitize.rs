//! Fuzz target: a server's tool input schema sanitized for each dialect, strict and not, and
//! arguments a model might send mapped back onto it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use switchboard_core::Dialect;
use switchboard_providers::arguments::restore;
use switchboard_providers::{SanitizeOptions, sanitize};

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    // The schema, then optionally a NUL and the arguments.
    let (schema, args) = match rest.iter().position(|&b| b == 0) {
        Some(i) => (&rest[..i], &rest[i + 1..]),
        None => (rest, &b"{}"[..]),
    };
    let Ok(schema) = serde_json::from_slice::<Value>(schema) else {
        return;
    };
    let args = serde_json::from_slice::<Value>(args).unwrap_or(Value::Null);
    let opts = SanitizeOptions {
        strict: first & 4 != 0,
        gemini_openapi: first & 8 != 0,
    };
    let dialect = Dialect::ALL[usize::from(first) % Dialect::ALL.len()];
    if let Ok(out) = sanitize(dialect, &schema, &opts) {
        let _ = serde_json::to_string(&out.schema);
        let _ = restore(&schema, out.strict, out.wrapped_root, args);
    }
});
