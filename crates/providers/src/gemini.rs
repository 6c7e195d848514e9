//! Google Gemini generateContent: schema rules (§2.3, §2.5 "Gemini"), the request body with
//! `functionCall`/`functionResponse` parts, and the response and stream decoding.
//!
//! By default schemas go out as `parametersJsonSchema` (plain JSON Schema, as gemini-cli and
//! goose send them); with `gemini_openapi` they go out as `parameters`, the OpenAPI 3.0 subset
//! of python-genai's `Schema` type (upper-case type names, an allow-list of keywords).

use serde::Serialize;
use serde_json::{Map, Value, json};

use switchboard_core::Dialect;

use crate::conversation::{
    GEMINI_RESULT_IMAGE_TYPES, GEMINI_SIGNATURE, GEMINI_SYNTH_ID, Part as Piece, ResultPart,
    gemini_result_images, image_note, result_text,
};
use crate::error::ProviderError;
use crate::refs::{self, RefMode};
use crate::render::{RequestParts, Role, ToolSpec};
use crate::reply::{Reply, Stop, Usage, count_at, error_message, settle_stop, str_at};
use crate::schema::{self, Log, join, types, walk_post};
use crate::stream::{Assembly, StreamEvent};

/// Keywords `parameters` accepts (python-genai `Schema`, minus `additionalProperties`, which
/// the Developer API rejects, and `title`, `defs`/`ref`, which it does not resolve).
const OPENAPI_KEYS: [&str; 20] = [
    "type",
    "format",
    "description",
    "nullable",
    "enum",
    "items",
    "properties",
    "required",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "pattern",
    "anyOf",
    "default",
    "example",
    "minProperties",
    "maxProperties",
];

/// Returns whether the root was wrapped.
pub(crate) fn sanitize(
    schema: &mut Value,
    openapi: bool,
    log: &mut Log,
) -> Result<bool, ProviderError> {
    // "Gemini rejects `$ref` in `parameters`"; in `parametersJsonSchema` a `$ref` may have no
    // siblings and cycles are unrolled only a few times. Inline everything, cut cycles.
    refs::inline(schema, RefMode::All, log);
    schema::repair(schema, false, log);
    let wrapped = schema::root_object(schema, log);
    tuple_items(schema, log);
    // litellm `process_items`: arrays without items get `{type: object}`.
    schema::array_items(schema, &json!({"type": "object"}), log);
    walk_post(schema, "", &mut |node, path| {
        type_array(node, path, log);
        const_to_enum(node, path, log);
        enum_values(node, path, openapi, log);
    });
    // An invalid schema fails the whole request; the OpenAPI subset below is made from a
    // valid one.
    schema::metaschema(schema, "gemini-metaschema")?;
    if openapi {
        schema::drop_keys(
            schema,
            &[
                "$id",
                "$comment",
                "$anchor",
                "examples",
                "deprecated",
                "readOnly",
                "writeOnly",
            ],
            "gemini-drop-annotation",
            log,
        );
        openapi_subset(schema, log)?;
    }
    Ok(wrapped)
}

/// `type: ["string","null"]` → `type: "string", nullable: true` (gemini-cli); several non-null
/// types → `anyOf` of one branch per type, each with the keywords that apply to it.
fn type_array(node: &mut Map<String, Value>, path: &str, log: &mut Log) {
    let Some(Value::Array(list)) = node.get("type").cloned() else {
        return;
    };
    let has_null = list.iter().any(|t| t == "null");
    let non_null: Vec<String> = list
        .iter()
        .filter_map(Value::as_str)
        .filter(|t| *t != "null")
        .map(str::to_string)
        .collect();
    match non_null.as_slice() {
        [] => {
            node.insert("type".into(), json!("null"));
        }
        [one] => {
            node.insert("type".into(), json!(one));
        }
        many => {
            node.remove("type");
            if !node.contains_key("anyOf") {
                let branches: Vec<Value> = many.iter().map(|t| branch_for(node, t)).collect();
                for t in many {
                    for k in keywords_for(t) {
                        node.remove(*k);
                    }
                }
                node.insert("anyOf".into(), Value::Array(branches));
            }
        }
    }
    if has_null && !non_null.is_empty() {
        node.insert("nullable".into(), json!(true));
    }
    let after = json!({"type": node.get("type"), "anyOf": node.get("anyOf"), "nullable": node.get("nullable")});
    log.record(
        &join(path, "type"),
        "gemini-type-array",
        Some(Value::Array(list)),
        Some(after),
    );
}

/// A tuple (`prefixItems` with no `items`, as pydantic writes `tuple[int, str]`) gets `items`
/// that accept any of its element schemas. Without it the `{type: object}` default below said
/// every element is an object, which is all that is left once the OpenAPI subset drops
/// `prefixItems`: a model would send `[{}, {}]` for `(1, "a")`.
fn tuple_items(schema: &mut Value, log: &mut Log) {
    schema::walk_pre(schema, "", &mut |node, path| {
        if node.contains_key("items") || !schema::has_type(node, "array") {
            return;
        }
        let Some(Value::Array(tuple)) = node.get("prefixItems") else {
            return;
        };
        let mut elements: Vec<Value> = Vec::new();
        for element in tuple {
            if !elements.contains(element) {
                elements.push(element.clone());
            }
        }
        let items = match elements.len() {
            0 => return,
            1 => elements.remove(0),
            _ => json!({ "anyOf": elements }),
        };
        node.insert("items".into(), items.clone());
        log.record(
            &join(path, "items"),
            "gemini-tuple-items",
            None,
            Some(items),
        );
    });
}

fn keywords_for(t: &str) -> &'static [&'static str] {
    match t {
        "string" => &["minLength", "maxLength", "pattern", "format"],
        "number" | "integer" => &[
            "minimum",
            "maximum",
            "exclusiveMinimum",
            "exclusiveMaximum",
            "multipleOf",
        ],
        "array" => &[
            "items",
            "minItems",
            "maxItems",
            "uniqueItems",
            "prefixItems",
        ],
        "object" => &[
            "properties",
            "required",
            "additionalProperties",
            "minProperties",
            "maxProperties",
            "patternProperties",
        ],
        _ => &[],
    }
}

fn branch_for(node: &Map<String, Value>, t: &str) -> Value {
    let mut b = Map::new();
    b.insert("type".into(), json!(t));
    for k in keywords_for(t) {
        if let Some(v) = node.get(*k) {
            b.insert((*k).to_string(), v.clone());
        }
    }
    Value::Object(b)
}

/// python-genai: string `const` → `enum: [const]`; Gemini has no `const`.
fn const_to_enum(node: &mut Map<String, Value>, path: &str, log: &mut Log) {
    if let Some(c) = node.remove("const") {
        if !node.contains_key("enum") {
            node.insert("enum".into(), json!([c.clone()]));
        }
        log.record(
            &join(path, "const"),
            "gemini-const-enum",
            Some(c),
            node.get("enum").cloned(),
        );
    }
}

/// Gemini enums hold strings (`parameters`: `list[str]`; `parametersJsonSchema`: strings and
/// numbers). `null` members become `nullable`; boolean and structured members cannot be said.
fn enum_values(node: &mut Map<String, Value>, path: &str, openapi: bool, log: &mut Log) {
    let Some(Value::Array(values)) = node.get("enum").cloned() else {
        return;
    };
    let mut kept: Vec<Value> = values.iter().filter(|v| !v.is_null()).cloned().collect();
    if kept.len() != values.len() {
        node.insert("nullable".into(), json!(true));
    }
    let structured = kept
        .iter()
        .any(|v| v.is_object() || v.is_array() || v.is_boolean());
    let all_strings = kept.iter().all(Value::is_string);
    // Stringifying would retype an object or array node (the root included) as a string.
    let would_retype =
        openapi && !all_strings && types(node).iter().any(|t| matches!(*t, "object" | "array"));
    if structured || kept.is_empty() || would_retype {
        node.remove("enum");
        if !kept.is_empty() && kept.iter().all(Value::is_boolean) && !node.contains_key("type") {
            node.insert("type".into(), json!("boolean"));
        }
        log.record(
            &join(path, "enum"),
            "gemini-enum-dropped",
            Some(Value::Array(values)),
            None,
        );
        return;
    }
    if openapi && !all_strings {
        // python-genai's Schema.enum docstring: `{type:INTEGER, format:"enum", enum:["101"]}`.
        let all_numbers = kept.iter().all(Value::is_number);
        kept = kept
            .iter()
            .map(|v| match v {
                Value::String(s) => json!(s),
                other => json!(other.to_string()),
            })
            .collect();
        if all_numbers {
            node.insert("format".into(), json!("enum"));
            if !node.contains_key("type") {
                let ints = values.iter().all(|v| v.is_i64() || v.is_u64());
                node.insert(
                    "type".into(),
                    json!(if ints { "integer" } else { "number" }),
                );
            }
        } else {
            node.insert("type".into(), json!("string"));
        }
        node.insert("enum".into(), Value::Array(kept.clone()));
        log.record(
            &join(path, "enum"),
            "gemini-enum-stringified",
            Some(Value::Array(values)),
            Some(Value::Array(kept)),
        );
    } else if kept.len() != values.len() {
        node.insert("enum".into(), Value::Array(kept.clone()));
        log.record(
            &join(path, "enum"),
            "gemini-enum-null",
            Some(Value::Array(values)),
            Some(Value::Array(kept)),
        );
    }
}

/// Property names in `parameters` "must start with a letter or an underscore and must only
/// contain chars a-z, A-Z, 0-9, or underscores with a maximum length of 64".
pub fn openapi_property_name_ok(name: &str) -> bool {
    let mut c = name.chars();
    c.next()
        .is_some_and(|f| f.is_ascii_alphabetic() || f == '_')
        && name.len() <= 64
        && c.all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
}

/// The OpenAPI-subset rules (vercel/ai allow-list, gemini-cli and litellm extras), bottom up.
fn openapi_subset(schema: &mut Value, log: &mut Log) -> Result<(), ProviderError> {
    let mut bad_name: Option<String> = None;
    walk_post(schema, "", &mut |node, path| {
        // `Schema` has no boolean form: `true` allows anything, and so does `{}`; what `false`
        // forbids, dispatch still refuses (it validates against the original schema).
        // (Only in the slots the subset keeps; the others are dropped below.)
        schema::children_mut(node, path, &mut |child, p| {
            let kept = ["/properties/", "/items", "/anyOf/", "/oneOf/", "/allOf/"];
            if let Value::Bool(b) = child
                && kept.iter().any(|k| p[path.len()..].starts_with(k))
            {
                log.record(p, "gemini-boolean-schema", Some(json!(b)), Some(json!({})));
                *child = json!({});
            }
        });
        if let Some(Value::Object(props)) = node.get("properties")
            && bad_name.is_none()
            && let Some(name) = props.keys().find(|k| !openapi_property_name_ok(k))
        {
            bad_name = Some(join(&join(path, "properties"), name));
        }
        if let Some(one) = node.remove("oneOf") {
            let mut any = match node.remove("anyOf") {
                Some(Value::Array(a)) => a,
                _ => Vec::new(),
            };
            any.extend(one.as_array().cloned().unwrap_or_default());
            node.insert("anyOf".into(), Value::Array(any));
            log.record(&join(path, "oneOf"), "gemini-oneof-anyof", None, None);
        }
        if let Some(Value::Array(all)) = node.remove("allOf") {
            merge_all_of(node, &all);
            log.record(
                &join(path, "allOf"),
                "gemini-allof-merged",
                Some(Value::Array(all)),
                None,
            );
        }
        any_of_null(node, path, log);
        if node.contains_key("anyOf") {
            any_of_alone(node, path, log);
        }
        for (excl, incl, step) in [
            ("exclusiveMinimum", "minimum", 1),
            ("exclusiveMaximum", "maximum", -1),
        ] {
            if let Some(v) = node.remove(excl) {
                // Integers keep their meaning (x > 3 is x >= 4); numbers get the inclusive bound,
                // and so does an integer bound at the end of i64 (dispatch checks the original).
                let bound = match (v.as_i64(), types(node).contains(&"integer")) {
                    (Some(i), true) => i.checked_add(step).map_or_else(|| v.clone(), |b| json!(b)),
                    _ => v.clone(),
                };
                if !node.contains_key(incl) {
                    node.insert(incl.into(), bound.clone());
                }
                log.record(
                    &join(path, excl),
                    "gemini-exclusive-folded",
                    Some(v),
                    Some(bound),
                );
            }
        }
        if let Some(f) = node.get("format").and_then(Value::as_str) {
            let ok = f == "enum"
                || (f == "date-time" && types(node).contains(&"string"))
                || (matches!(f, "int32" | "int64" | "float" | "double")
                    && (types(node).contains(&"number") || types(node).contains(&"integer")));
            if !ok {
                // Keep the hint for the model; dispatch validates against the original schema.
                let f = f.to_string();
                node.remove("format");
                let note = format!("(format: {f})");
                let desc = match node.get("description").and_then(Value::as_str) {
                    Some(d) if !d.is_empty() => format!("{d} {note}"),
                    _ => note,
                };
                node.insert("description".into(), json!(desc));
                log.record(
                    &join(path, "format"),
                    "gemini-format-dropped",
                    Some(json!(f)),
                    None,
                );
            }
        }
        if node
            .get("items")
            .is_some_and(|i| i.as_object().is_some_and(Map::is_empty))
        {
            node.insert("items".into(), json!({"type": "object"}));
            log.record(
                &join(path, "items"),
                "gemini-items-object",
                Some(json!({})),
                Some(json!({"type": "object"})),
            );
        }
        // An untyped node in `parameters` is rejected as an invalid schema; infer the type
        // from its shape (properties → object, items → array, string enum → string).
        if !node.contains_key("type") && !node.contains_key("anyOf") {
            let inferred = if node.contains_key("properties") {
                Some("object")
            } else if node.contains_key("items") {
                Some("array")
            } else if node
                .get("enum")
                .and_then(Value::as_array)
                .is_some_and(|e| e.iter().all(Value::is_string))
            {
                Some("string")
            } else {
                None
            };
            if let Some(t) = inferred {
                node.insert("type".into(), json!(t));
                log.record(
                    &join(path, "type"),
                    "gemini-type-inferred",
                    None,
                    Some(json!(t)),
                );
            }
        }
        if let (Some(Value::Array(req)), Some(props)) = (
            node.get("required"),
            node.get("properties").and_then(Value::as_object),
        ) {
            let known: Vec<Value> = req
                .iter()
                .filter(|r| r.as_str().is_some_and(|r| props.contains_key(r)))
                .cloned()
                .collect();
            if known.len() != req.len() {
                let before = node.insert("required".into(), Value::Array(known.clone()));
                log.record(
                    &join(path, "required"),
                    "gemini-required-unknown",
                    before,
                    Some(Value::Array(known)),
                );
            }
        }
        let extra: Vec<String> = node
            .keys()
            .filter(|k| !OPENAPI_KEYS.contains(&k.as_str()))
            .cloned()
            .collect();
        for k in extra {
            let before = node.remove(&k);
            log.record(&join(path, &k), "gemini-keyword-dropped", before, None);
        }
    });
    // The `Type` enum is upper case (STRING, OBJECT, ...); a spelling, not a change.
    walk_post(schema, "", &mut |node, _| {
        if let Some(Value::String(t)) = node.get_mut("type") {
            *t = t.to_ascii_uppercase();
        }
    });
    match bad_name {
        Some(pointer) => Err(ProviderError::Unacceptable {
            rule: "gemini-property-name",
            message: format!(
                "property name at {pointer} is not allowed in Gemini `parameters` ([A-Za-z_][A-Za-z0-9_]{{0,63}})"
            ),
            pointer,
        }),
        None => Ok(()),
    }
}

fn merge_all_of(node: &mut Map<String, Value>, branches: &[Value]) {
    for b in branches {
        let Value::Object(bm) = b else { continue };
        for (k, v) in bm {
            match (k.as_str(), node.get_mut(k)) {
                ("properties", Some(Value::Object(p))) => {
                    if let Value::Object(bp) = v {
                        for (pk, pv) in bp {
                            p.entry(pk.clone()).or_insert_with(|| pv.clone());
                        }
                    }
                }
                ("required", Some(Value::Array(r))) => {
                    for x in v.as_array().into_iter().flatten() {
                        if !r.contains(x) {
                            r.push(x.clone());
                        }
                    }
                }
                (_, Some(_)) => {}
                (_, None) => {
                    node.insert(k.clone(), v.clone());
                }
            }
        }
    }
}

/// python-genai / vercel: `anyOf: [X, {type: null}]` → `nullable: true`, unwrapped to X when
/// one branch remains.
fn any_of_null(node: &mut Map<String, Value>, path: &str, log: &mut Log) {
    let Some(Value::Array(any)) = node.get("anyOf").cloned() else {
        return;
    };
    let is_null = |b: &Value| b.get("type").is_some_and(|t| t == "null" || t == "NULL");
    if !any.iter().any(is_null) {
        return;
    }
    let rest: Vec<Value> = any.iter().filter(|b| !is_null(b)).cloned().collect();
    node.insert("nullable".into(), json!(true));
    if let [only] = rest.as_slice() {
        node.remove("anyOf");
        if let Value::Object(o) = only {
            for (k, v) in o {
                node.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
    } else if rest.is_empty() {
        node.remove("anyOf");
        node.insert("type".into(), json!("null"));
    } else {
        node.insert("anyOf".into(), Value::Array(rest));
    }
    log.record(
        &join(path, "anyOf"),
        "gemini-anyof-null",
        Some(Value::Array(any)),
        None,
    );
}

/// litellm#11164: Vertex errors when `anyOf` has siblings. Keep only `anyOf`; copy the
/// description (and `nullable`) into each branch; drop `default` and the rest.
fn any_of_alone(node: &mut Map<String, Value>, path: &str, log: &mut Log) {
    let siblings: Vec<String> = node.keys().filter(|k| *k != "anyOf").cloned().collect();
    if siblings.is_empty() {
        return;
    }
    let desc = node.get("description").cloned();
    let nullable = node.get("nullable").cloned();
    // `{type: string, anyOf: [{format: ipv4}, ...]}`: the branches inherit the type.
    let ty = node.get("type").cloned();
    if let Some(Value::Array(branches)) = node.get_mut("anyOf") {
        for b in branches.iter_mut() {
            if let Value::Object(bm) = b {
                if let Some(d) = &desc {
                    bm.entry("description").or_insert_with(|| d.clone());
                }
                if let Some(n) = &nullable {
                    bm.entry("nullable").or_insert_with(|| n.clone());
                }
                if let Some(t) = &ty
                    && !bm.contains_key("anyOf")
                {
                    bm.entry("type").or_insert_with(|| t.clone());
                }
            }
        }
    }
    let mut removed = Map::new();
    for k in siblings {
        if let Some(v) = node.remove(&k) {
            removed.insert(k, v);
        }
    }
    log.record(
        path,
        "gemini-anyof-alone",
        Some(Value::Object(removed)),
        None,
    );
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Body<'a> {
    contents: Vec<Content<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    system_instruction: Option<SystemInstruction<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<ToolGroup<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    generation_config: Option<GenerationConfig>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct GenerationConfig {
    #[serde(skip_serializing_if = "Option::is_none")]
    max_output_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking_config: Option<Value>,
}

#[derive(Serialize)]
struct Content<'a> {
    role: &'static str,
    parts: Vec<Part<'a>>,
}

#[derive(Serialize)]
struct SystemInstruction<'a> {
    parts: Vec<Part<'a>>,
}

/// One part: its data, and Gemini 3's `thoughtSignature` on a replayed function call.
#[derive(Serialize)]
struct Part<'a> {
    #[serde(flatten)]
    data: Payload<'a>,
    #[serde(rename = "thoughtSignature", skip_serializing_if = "Option::is_none")]
    thought_signature: Option<&'a str>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
enum Payload<'a> {
    Text(&'a str),
    InlineData {
        #[serde(rename = "mimeType")]
        mime_type: &'a str,
        data: &'a str,
    },
    FunctionCall {
        name: &'a str,
        args: &'a Value,
        #[serde(skip_serializing_if = "Option::is_none")]
        id: Option<&'a str>,
    },
    FunctionResponse {
        name: &'a str,
        response: Value,
        #[serde(skip_serializing_if = "Option::is_none")]
        id: Option<&'a str>,
        /// Gemini 3's multimodal function response: images of the result.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        parts: Vec<ResponsePart<'a>>,
    },
}

/// One `functionResponse.parts` item: an inline image.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ResponsePart<'a> {
    inline_data: ResponseBlob<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ResponseBlob<'a> {
    mime_type: &'a str,
    data: &'a str,
    /// `image-N`, unique within the response (the API lets a response refer to a blob by it).
    display_name: String,
}

impl<'a> From<Payload<'a>> for Part<'a> {
    fn from(data: Payload<'a>) -> Self {
        Part {
            data,
            thought_signature: None,
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ToolGroup<'a> {
    function_declarations: Vec<Declaration<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Declaration<'a> {
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    parameters: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    parameters_json_schema: Option<&'a Value>,
}

static EMPTY_ARGS: std::sync::LazyLock<Value> =
    std::sync::LazyLock::new(|| Value::Object(Map::new()));

/// The `POST models/{model}:generateContent` body. The model is part of the URL, not the
/// body; the assistant role is called `model`; all tools go into one `functionDeclarations`.
/// Tool uses become `functionCall` parts and results `functionResponse` parts (`name` plus
/// `response: {"output": text}` or `{"error": text}`), results first in their message; ids
/// synthesized at decoding are left out (the API pairs by name and order), real ones are
/// echoed, and a thought signature kept in the id goes back as the call's
/// `thoughtSignature`. Images are `inlineData`; in results they go to `functionResponse.parts`
/// for Gemini 3 models (see [`crate::accepts_result_images_for`]) and become a text note for
/// the others.
pub(crate) fn render(parts: &RequestParts) -> Value {
    let images = gemini_result_images(&parts.model);
    let decls: Vec<Declaration> = parts
        .tools
        .iter()
        .map(|t| declaration(t, parts.gemini_openapi))
        .collect();
    // A reasoning effort becomes a thinking level or budget (see
    // `crate::reasoning_effort_fields`); one the model cannot take is left out.
    let thinking_config = parts
        .reasoning_effort
        .as_deref()
        .and_then(|e| crate::effort::plan(D, &parts.model, e, parts.max_tokens).ok())
        .and_then(|plan| plan.gemini());
    let body = Body {
        contents: parts
            .messages
            .iter()
            .map(|m| Content {
                role: match m.role {
                    Role::User => "user",
                    Role::Assistant => "model",
                },
                parts: wire_parts(&m.parts, images),
            })
            .collect(),
        system_instruction: parts.system.as_deref().filter(|s| !s.is_empty()).map(|s| {
            SystemInstruction {
                parts: vec![Payload::Text(s).into()],
            }
        }),
        tools: if decls.is_empty() {
            Vec::new()
        } else {
            vec![ToolGroup {
                function_declarations: decls,
            }]
        },
        generation_config: (parts.max_tokens.is_some()
            || parts.temperature.is_some()
            || thinking_config.is_some())
        .then_some(GenerationConfig {
            max_output_tokens: parts.max_tokens,
            temperature: parts.temperature,
            thinking_config,
        }),
    };
    crate::render::to_value(&body)
}

/// A tool-use id as decoded: the API's id or a synthesized one, then the thought signature
/// when the call carried one. Returns (id to echo, signature).
fn split_id(id: &str) -> (Option<&str>, Option<&str>) {
    let (base, signature) = match id.split_once(GEMINI_SIGNATURE) {
        Some((base, sig)) => (base, Some(sig).filter(|s| !s.is_empty())),
        None => (id, None),
    };
    let real = (!base.starts_with(GEMINI_SYNTH_ID) && !base.is_empty()).then_some(base);
    (real, signature)
}

/// A result's content as the response text and, when `images`, the images Gemini takes in
/// `functionResponse.parts` (other images become notes in the text).
fn result_content(content: &[ResultPart], images: bool) -> (String, Vec<ResponsePart<'_>>) {
    if !images {
        return (result_text(content), Vec::new());
    }
    let mut text = String::new();
    let mut blobs = Vec::new();
    for c in content {
        let line = match c {
            ResultPart::Image { media_type, data }
                if GEMINI_RESULT_IMAGE_TYPES.contains(&media_type.as_str()) =>
            {
                blobs.push(ResponsePart {
                    inline_data: ResponseBlob {
                        mime_type: media_type,
                        data,
                        display_name: format!("image-{}", blobs.len() + 1),
                    },
                });
                continue;
            }
            ResultPart::Image { media_type, data } => image_note(media_type, data),
            ResultPart::Text(t) => t.clone(),
        };
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&line);
    }
    (text, blobs)
}

fn wire_parts(parts: &[Piece], images: bool) -> Vec<Part<'_>> {
    let (results, rest): (Vec<&Piece>, Vec<&Piece>) = parts
        .iter()
        .partition(|p| matches!(p, Piece::ToolResult { .. }));
    results
        .into_iter()
        .chain(rest)
        .filter_map(|p| match p {
            Piece::Text(text) if text.is_empty() => None,
            // Gemini's reasoning goes back as the thought signatures on its calls.
            Piece::Reasoning { .. } => None,
            Piece::Text(text) => Some(Payload::Text(text).into()),
            Piece::Image { media_type, data } => Some(
                Payload::InlineData {
                    mime_type: media_type,
                    data,
                }
                .into(),
            ),
            Piece::ToolUse { id, name, input } => {
                let (id, thought_signature) = split_id(id);
                Some(Part {
                    data: Payload::FunctionCall {
                        name,
                        args: if input.is_object() {
                            input
                        } else {
                            &EMPTY_ARGS
                        },
                        id,
                    },
                    thought_signature,
                })
            }
            Piece::ToolResult {
                id,
                name,
                content,
                is_error,
            } => {
                let (text, parts) = result_content(content, images);
                Some(
                    Payload::FunctionResponse {
                        name,
                        response: if *is_error {
                            json!({ "error": text })
                        } else {
                            json!({ "output": text })
                        },
                        id: split_id(id).0,
                        parts,
                    }
                    .into(),
                )
            }
        })
        .collect()
}

fn declaration(t: &ToolSpec, openapi: bool) -> Declaration<'_> {
    // goose: send the schema only when it has properties; a tool without arguments omits it.
    let has_props = t
        .schema
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| !p.is_empty());
    let schema = has_props.then_some(&t.schema);
    Declaration {
        name: &t.name,
        description: t.description.as_deref().filter(|d| !d.is_empty()),
        parameters: schema.filter(|_| openapi),
        parameters_json_schema: schema.filter(|_| !openapi),
    }
}

const D: Dialect = Dialect::Gemini;

/// A `GenerateContentResponse`: the first candidate's `content.parts` (`text`, skipping
/// `thought` parts, and `functionCall`), its `finishReason`, `usageMetadata`, and
/// `promptFeedback.blockReason` when the prompt was blocked (no candidates).
pub(crate) fn decode(v: &Value) -> Result<Reply, ProviderError> {
    if v.get("error").is_some_and(|e| !e.is_null()) {
        return Err(ProviderError::Api {
            dialect: D,
            message: error_message(v).unwrap_or_else(|| v.to_string()),
        });
    }
    if !v.is_object() {
        return Err(ProviderError::decode(
            D,
            "the response is not a JSON object",
        ));
    }
    let mut parts = Vec::new();
    let mut out = Vec::new();
    let mut acc = Assembly::default();
    chunk(&mut acc, v, &mut out)?;
    let stop = acc.stop.clone().unwrap_or(Stop::EndTurn);
    for (_, block) in acc.blocks {
        match block {
            crate::stream::Block::Text(t) => {
                if !t.is_empty() {
                    parts.push(Piece::Text(t));
                }
            }
            crate::stream::Block::Tool { id, name, args } => parts.push(Piece::ToolUse {
                id,
                name,
                input: crate::conversation::parse_arguments(&args),
            }),
            crate::stream::Block::Reasoning { text, data } => parts.push(Piece::Reasoning {
                dialect: D,
                text,
                data,
            }),
        }
    }
    let has_candidate = v
        .get("candidates")
        .and_then(Value::as_array)
        .is_some_and(|c| !c.is_empty());
    if !has_candidate && str_at(v, "/promptFeedback/blockReason").is_none() {
        return Err(ProviderError::decode(
            D,
            "no `candidates` list and no `promptFeedback.blockReason` in the response",
        ));
    }
    Ok(Reply {
        stop: settle_stop(stop, &parts),
        parts,
        usage: acc.usage,
    })
}

fn finish_reason(reason: &str) -> Stop {
    match reason {
        "STOP" => Stop::EndTurn,
        "MAX_TOKENS" => Stop::MaxTokens,
        "SAFETY" | "RECITATION" | "BLOCKLIST" | "PROHIBITED_CONTENT" | "SPII" | "IMAGE_SAFETY" => {
            Stop::Refusal
        }
        other => Stop::Other(other.into()),
    }
}

fn usage(u: &Value) -> Usage {
    Usage {
        input_tokens: count_at(u, "/promptTokenCount").unwrap_or(0),
        output_tokens: count_at(u, "/candidatesTokenCount")
            .unwrap_or(0)
            .saturating_add(count_at(u, "/thoughtsTokenCount").unwrap_or(0)),
        cache_read_tokens: count_at(u, "/cachedContentTokenCount"),
        cache_write_tokens: None,
        reasoning_tokens: count_at(u, "/thoughtsTokenCount"),
    }
}

/// One response chunk (a whole response is one chunk too). Text parts are deltas; a
/// `functionCall` arrives whole, with its arguments as an object; calls without an `id` get
/// `gemini-call-N`, N counting calls in this reply.
fn chunk(acc: &mut Assembly, v: &Value, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
    if let Some(u) = v.get("usageMetadata").filter(|u| u.is_object()) {
        acc.usage = usage(u);
    }
    if let Some(reason) = str_at(v, "/promptFeedback/blockReason") {
        acc.stop = Some(Stop::Refusal);
        acc.text(
            "text-blocked",
            &format!("(the prompt was blocked: {reason})"),
            out,
        );
        out.clear();
        return Ok(());
    }
    let Some(candidate) = v.pointer("/candidates/0") else {
        return Ok(());
    };
    if let Some(parts) = candidate.pointer("/content/parts") {
        let parts = parts
            .as_array()
            .ok_or_else(|| ProviderError::decode(D, "`content.parts` is not an array"))?;
        for (i, p) in parts.iter().enumerate() {
            if p.get("thought").and_then(Value::as_bool) == Some(true) {
                // A thought summary (with `includeThoughts`): shown, kept, never sent back (a
                // call's thought signature goes back in its id).
                if let Some(text) = str_at(p, "/text").filter(|t| !t.is_empty()) {
                    let key = match acc.blocks.last() {
                        Some((k, crate::stream::Block::Reasoning { .. })) => k.clone(),
                        _ => {
                            let key = format!("thought{}", acc.blocks.len());
                            acc.reasoning(&key, String::new(), Value::Null);
                            key
                        }
                    };
                    acc.reasoning_field(&key, "text", text, true);
                    out.push(StreamEvent::ReasoningDelta(text.to_string()));
                }
                continue;
            }
            if let Some(text) = str_at(p, "/text") {
                // Consecutive text joins one block; text after a call starts a new one.
                let key = format!("text{}", acc.blocks.len());
                let key = match acc.blocks.last() {
                    Some((k, crate::stream::Block::Text(_))) => k.clone(),
                    _ => key,
                };
                acc.text(&key, text, out);
            } else if let Some(call) = p.get("functionCall") {
                let name = str_at(call, "/name").ok_or_else(|| {
                    ProviderError::decode(D, format!("parts[{i}]: functionCall without `name`"))
                })?;
                let n = acc
                    .blocks
                    .iter()
                    .filter(|(_, b)| matches!(b, crate::stream::Block::Tool { .. }))
                    .count();
                let mut id = str_at(call, "/id")
                    .filter(|id| !id.is_empty())
                    .map_or_else(|| format!("{GEMINI_SYNTH_ID}{n}"), str::to_string);
                // Gemini 3 rejects a replayed call without its signature: keep it in the id.
                if let Some(sig) = str_at(p, "/thoughtSignature").filter(|s| !s.is_empty()) {
                    id = format!("{id}{GEMINI_SIGNATURE}{sig}");
                }
                let args = match call.get("args") {
                    Some(a @ Value::Object(_)) => a.to_string(),
                    None | Some(Value::Null) => "{}".to_string(),
                    // Not an object: keep it as text, so the loop can answer.
                    Some(other) => other.to_string(),
                };
                acc.tool(&format!("call{n}"), &id, name, &args, out);
            }
        }
    }
    if let Some(reason) = str_at(candidate, "/finishReason") {
        acc.stop = Some(finish_reason(reason));
    }
    Ok(())
}

/// One streamed chunk (`alt=sse`: each event's data is a whole `GenerateContentResponse`).
pub(crate) fn feed(
    acc: &mut Assembly,
    v: &Value,
    out: &mut Vec<StreamEvent>,
) -> Result<(), ProviderError> {
    let v = match v {
        // Without `alt=sse` the stream is one JSON array; accept its elements too.
        Value::Array(items) => {
            for item in items {
                feed(acc, item, out)?;
            }
            return Ok(());
        }
        other => other,
    };
    if v.get("error").is_some_and(|e| !e.is_null()) {
        return Err(ProviderError::Api {
            dialect: D,
            message: error_message(v).unwrap_or_else(|| v.to_string()),
        });
    }
    chunk(acc, v, out)
}
