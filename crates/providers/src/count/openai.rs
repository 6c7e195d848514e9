//! OpenAI: render functions as the TypeScript `namespace functions { … }` the models read, and count it with tiktoken.
//!
//! Rendering (reference/providers.md §3.2): OpenAI documents the format only for gpt-oss
//! (`openai/harmony` docs/format.md); hosted chat models were reverse-engineered by
//! hmarr/openai-chat-tokens, whose counts match the API. Rules implemented here, written from
//! those descriptions:
//! - `namespace functions {`, a blank line, one block per function, `} // namespace functions`;
//! - a function block: its description as `// ` lines, then `type name = (_: {`, its properties,
//!   `}) => any;` (or `type name = () => any;` without properties), then a blank line;
//! - a property: its description as `// ` lines, then `key: type,` (`key?:` when not required);
//! - types: `integer` → `number`; `enum`/`const` → a union of JSON literals; arrays → `T[]`
//!   (`any[]` without `items`); `type: [A, B]`, `anyOf`, `oneOf` → `A | B`; `nullable` → `| null`;
//!   objects with properties → an inline `{ … }` block indented two spaces per level; anything
//!   else (`$ref`, `allOf`, no type) → `any`.
//!
//! Not rendered: harmony's `// default:` and `// Examples:` comments, which hmarr found no
//! evidence of in hosted models. Counting constants are in [`super`].

use serde_json::{Map, Value};
use tiktoken_rs::CoreBPE;

use super::{Encoding, ToolText};

/// The tiktoken encoding for an OpenAI model id: `o200k_base` for gpt-4o, gpt-4.1, gpt-4.5,
/// gpt-5.x and o-series; `cl100k_base` for gpt-4 and gpt-3.5 (tiktoken-rs's
/// MODEL_PREFIX_TO_TOKENIZER, §3.2 "Encodings"). Unknown ids get `o200k_base`, the encoding of
/// every current model.
pub fn encoding_for(model: &str) -> Encoding {
    use tiktoken_rs::tokenizer::{Tokenizer, get_tokenizer};
    match get_tokenizer(model) {
        Some(Tokenizer::Cl100kBase) => Encoding::Cl100kBase,
        _ => Encoding::O200kBase,
    }
}

pub(super) fn bpe(encoding: Encoding) -> &'static CoreBPE {
    match encoding {
        Encoding::O200kBase => tiktoken_rs::o200k_base_singleton(),
        Encoding::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
    }
}

/// Tokens of `text` as ordinary text (special-token strings are counted as text, as the API
/// does for user content).
pub(super) fn tokens(encoding: Encoding, text: &str) -> u64 {
    bpe(encoding).encode_ordinary(text).len() as u64
}

/// The whole `namespace functions { … }` text for `tools`.
pub fn render_functions(tools: &[ToolText<'_>]) -> String {
    let mut out = String::from("namespace functions {\n\n");
    for t in tools {
        out.push_str(&render_function(t));
    }
    out.push_str("} // namespace functions");
    out
}

/// One function's block, ending with the blank line that separates it from the next.
pub fn render_function(tool: &ToolText<'_>) -> String {
    let mut out = String::new();
    comment_lines(&mut out, tool.description, "");
    let props = tool
        .parameters
        .get("properties")
        .and_then(Value::as_object)
        .filter(|p| !p.is_empty());
    match props {
        Some(props) => {
            out.push_str(&format!("type {} = (_: {{\n", tool.name));
            properties(&mut out, props, required(tool.parameters), 0);
            out.push_str("}) => any;\n");
        }
        None => out.push_str(&format!("type {} = () => any;\n", tool.name)),
    }
    out.push('\n');
    out
}

fn comment_lines(out: &mut String, text: &str, indent: &str) {
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        out.push_str(indent);
        out.push_str("// ");
        out.push_str(line.trim_end());
        out.push('\n');
    }
}

fn required(schema: &Value) -> Vec<&str> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

fn properties(out: &mut String, props: &Map<String, Value>, required: Vec<&str>, depth: usize) {
    let indent = " ".repeat(depth * 2);
    for (key, schema) in props {
        if let Some(d) = schema.get("description").and_then(Value::as_str) {
            comment_lines(out, d, &indent);
        }
        let optional = if required.contains(&key.as_str()) {
            ""
        } else {
            "?"
        };
        out.push_str(&format!(
            "{indent}{key}{optional}: {},\n",
            ts_type(schema, depth)
        ));
    }
}

/// The TypeScript type of a property schema at nesting `depth` (for the indentation of inline
/// object blocks).
fn ts_type(schema: &Value, depth: usize) -> String {
    let base = ts_type_inner(schema, depth);
    if schema.get("nullable").and_then(Value::as_bool) == Some(true) && base != "any" {
        format!("{base} | null")
    } else {
        base
    }
}

fn ts_type_inner(schema: &Value, depth: usize) -> String {
    let Some(obj) = schema.as_object() else {
        return "any".into();
    };
    if let Some(values) = obj.get("enum").and_then(Value::as_array) {
        return literal_union(values);
    }
    if let Some(c) = obj.get("const") {
        return literal_union(std::slice::from_ref(c));
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(variants) = obj.get(key).and_then(Value::as_array) {
            return variants
                .iter()
                .map(|v| ts_type(v, depth))
                .collect::<Vec<_>>()
                .join(" | ");
        }
    }
    match obj.get("type") {
        Some(Value::String(t)) => named_type(t, obj, depth),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .map(|t| named_type(t, obj, depth))
            .collect::<Vec<_>>()
            .join(" | "),
        _ => "any".into(),
    }
}

fn named_type(t: &str, obj: &Map<String, Value>, depth: usize) -> String {
    match t {
        "string" => "string".into(),
        "number" | "integer" => "number".into(),
        "boolean" => "boolean".into(),
        "null" => "null".into(),
        "array" => match obj.get("items") {
            Some(items) if items.is_object() => {
                let inner = ts_type(items, depth);
                if inner.contains(" | ") {
                    format!("({inner})[]")
                } else {
                    format!("{inner}[]")
                }
            }
            _ => "any[]".into(),
        },
        "object" => match obj.get("properties").and_then(Value::as_object) {
            Some(props) if !props.is_empty() => {
                let mut out = String::from("{\n");
                let req = obj
                    .get("required")
                    .and_then(Value::as_array)
                    .map(|r| r.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                properties(&mut out, props, req, depth + 1);
                out.push_str(&" ".repeat(depth * 2));
                out.push('}');
                out
            }
            _ => "object".into(),
        },
        _ => "any".into(),
    }
}

fn literal_union(values: &[Value]) -> String {
    values
        .iter()
        .map(|v| serde_json::to_string(v).unwrap_or_else(|_| "any".into()))
        .collect::<Vec<_>>()
        .join(" | ")
}
