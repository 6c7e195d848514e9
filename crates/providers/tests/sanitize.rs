//! One `check(dialect, input, expect)` per sanitizer rule: the schema that comes out and the
//! rule ids reported.

use serde_json::{Value, json};
use switchboard_core::Dialect;
use switchboard_providers::{ProviderError, SanitizeOptions, sanitize};

fn check_with(
    dialect: Dialect,
    opts: SanitizeOptions,
    input: Value,
    expect: Value,
    rules: &[&str],
) {
    let original = input.clone();
    let s = sanitize(dialect, &input, &opts).unwrap_or_else(|e| panic!("{dialect}: {e}"));
    assert_eq!(s.schema, expect, "{dialect}: got {}", s.schema);
    let got: Vec<&str> = s.changes.iter().map(|c| c.rule).collect();
    assert_eq!(got, rules, "{dialect}");
    assert_eq!(input, original, "the original schema must stay untouched");
}

fn check(dialect: Dialect, input: Value, expect: Value, rules: &[&str]) {
    check_with(dialect, SanitizeOptions::default(), input, expect, rules);
}

#[test]
fn an_empty_schema_means_no_arguments() {
    for d in Dialect::ALL {
        check(
            d,
            json!({}),
            json!({"type": "object", "properties": {}}),
            &["empty-root"],
        );
    }
}

#[test]
fn draft_04_and_03_idioms_become_2020_12() {
    check(
        Dialect::Anthropic,
        json!({"$schema": "http://json-schema.org/draft-04/schema#", "type": "object", "properties": {
            "n": {"type": "integer", "minimum": 0, "exclusiveMinimum": true},
            "s": {"type": "string", "required": true}}}),
        json!({"type": "object", "properties": {
            "n": {"type": "integer", "exclusiveMinimum": 0},
            "s": {"type": "string"}}, "required": ["s"]}),
        &["drop-$schema", "draft3-required", "draft4-exclusive"],
    );
}

#[test]
fn required_null_and_odd_types_are_repaired() {
    check(
        Dialect::OpenAiChat,
        json!({"type": "object", "required": null, "properties": {"f": {"type": "float"}, "l": {"type": "list"}}}),
        json!({"type": "object", "properties": {"f": {"type": "number"}, "l": {"type": "array", "items": {}}}}),
        &[
            "required-not-array",
            "type-repaired",
            "type-repaired",
            "array-items",
        ],
    );
}

#[test]
fn a_root_any_of_is_flattened_for_anthropic() {
    check(
        Dialect::Anthropic,
        json!({"type": "object", "anyOf": [
            {"properties": {"id": {"type": "string"}}, "required": ["id"]},
            {"properties": {"name": {"type": "string"}}, "required": ["name"]}]}),
        json!({"type": "object", "properties": {"id": {"type": "string"}, "name": {"type": "string"}},
               "description": "Provide one of: id; or name."}),
        &["root-composition-flattened"],
    );
}

#[test]
fn a_non_object_root_is_wrapped() {
    let s = sanitize(
        Dialect::OpenAiChat,
        &json!({"type": "string"}),
        &SanitizeOptions::default(),
    )
    .unwrap();
    assert!(s.wrapped_root);
    assert_eq!(
        s.schema,
        json!({"type": "object", "properties": {"value": {"type": "string"}}, "required": ["value"]})
    );
}

#[test]
fn anthropic_excludes_what_it_cannot_repair() {
    let e = sanitize(
        Dialect::Anthropic,
        &json!({"type": "object", "properties": {"x": {"type": "string", "maxLength": "ten"}}}),
        &SanitizeOptions::default(),
    )
    .unwrap_err();
    assert!(matches!(
        e,
        ProviderError::Unacceptable {
            rule: "anthropic-metaschema",
            ..
        }
    ));
}

#[test]
fn gemini_turns_type_arrays_and_const_into_what_it_accepts() {
    check(
        Dialect::Gemini,
        json!({"type": "object", "properties": {
            "a": {"type": ["string", "null"]},
            "b": {"type": ["string", "integer"], "minLength": 1, "minimum": 2},
            "c": {"const": "x"},
            "d": {"enum": ["p", null]}}}),
        json!({"type": "object", "properties": {
            "a": {"type": "string", "nullable": true},
            "b": {"anyOf": [{"type": "string", "minLength": 1}, {"type": "integer", "minimum": 2}]},
            "c": {"enum": ["x"]},
            "d": {"enum": ["p"], "nullable": true}}}),
        &[
            "gemini-type-array",
            "gemini-type-array",
            "gemini-const-enum",
            "gemini-enum-null",
        ],
    );
}

#[test]
fn gemini_gives_a_tuple_items_of_its_element_types_not_objects() {
    // pydantic's `tuple[int, str]`: Gemini's missing-items default (`{type: object}`) would
    // be all that is left of it in the OpenAPI subset, which drops `prefixItems`.
    let tuple = json!({"type": "object", "properties": {"pair": {
        "type": "array", "minItems": 2, "maxItems": 2,
        "prefixItems": [{"type": "integer"}, {"type": "string"}]
    }}});
    let s = sanitize(Dialect::Gemini, &tuple, &SanitizeOptions::default()).unwrap();
    assert_eq!(
        s.schema["properties"]["pair"]["items"],
        json!({"anyOf": [{"type": "integer"}, {"type": "string"}]}),
        "{}",
        s.schema
    );
    let rules: Vec<&str> = s.changes.iter().map(|c| c.rule).collect();
    assert_eq!(rules, ["gemini-tuple-items"]);
    let opts = SanitizeOptions {
        gemini_openapi: true,
        ..SanitizeOptions::default()
    };
    let s = sanitize(Dialect::Gemini, &tuple, &opts).unwrap();
    let items = &s.schema["properties"]["pair"]["items"];
    assert!(
        !items.to_string().contains("OBJECT") && items.to_string().contains("INTEGER"),
        "{}",
        s.schema
    );
    // A tuple of one element type is just that type.
    let same = json!({"type": "object", "properties": {"xy": {
        "type": "array", "prefixItems": [{"type": "number"}, {"type": "number"}]
    }}});
    let s = sanitize(Dialect::Gemini, &same, &SanitizeOptions::default()).unwrap();
    assert_eq!(
        s.schema["properties"]["xy"]["items"],
        json!({"type": "number"})
    );
}

#[test]
fn gemini_inlines_refs() {
    check(
        Dialect::Gemini,
        json!({"type": "object", "properties": {"p": {"$ref": "#/$defs/P"}}, "$defs": {"P": {"type": "string"}}}),
        json!({"type": "object", "properties": {"p": {"type": "string"}}}),
        &["defs-inlined", "ref-inlined"],
    );
}

#[test]
fn gemini_parameters_is_the_openapi_subset() {
    let openapi = SanitizeOptions {
        gemini_openapi: true,
        ..SanitizeOptions::default()
    };
    check_with(
        Dialect::Gemini,
        openapi,
        json!({"type": "object", "title": "T", "additionalProperties": false, "properties": {
            "n": {"type": "integer", "enum": [1, 2]},
            "o": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null, "description": "D"},
            "u": {"type": "string", "format": "uri"},
            "e": {"type": "integer", "exclusiveMinimum": 0}},
            "required": ["n", "ghost"]}),
        json!({"type": "OBJECT", "properties": {
            "n": {"type": "INTEGER", "format": "enum", "enum": ["1", "2"]},
            "o": {"type": "STRING", "nullable": true, "default": null, "description": "D"},
            "u": {"type": "STRING", "description": "(format: uri)"},
            "e": {"type": "INTEGER", "minimum": 1}},
            "required": ["n"]}),
        &[
            "gemini-enum-stringified",
            "gemini-exclusive-folded",
            "gemini-anyof-null",
            "gemini-format-dropped",
            "gemini-required-unknown",
            "gemini-keyword-dropped",
            "gemini-keyword-dropped",
        ],
    );
    check_with(
        Dialect::Gemini,
        openapi,
        json!({"properties": {"l": {"items": {"enum": ["a"]}}, "o": {"properties": {"x": {"type": "string"}}}}}),
        json!({"type": "OBJECT", "properties": {
            "l": {"type": "ARRAY", "items": {"type": "STRING", "enum": ["a"]}},
            "o": {"type": "OBJECT", "properties": {"x": {"type": "STRING"}}}}}),
        &[
            "root-type-object",
            "gemini-type-inferred",
            "gemini-type-inferred",
            "gemini-type-inferred",
        ],
    );
    let e = sanitize(
        Dialect::Gemini,
        &json!({"type": "object", "properties": {"a-b": {"type": "string"}}}),
        &openapi,
    )
    .unwrap_err();
    assert!(matches!(
        e,
        ProviderError::Unacceptable {
            rule: "gemini-property-name",
            ..
        }
    ));
}

#[test]
fn strict_falls_back_per_tool_with_a_reason() {
    let strict = SanitizeOptions {
        strict: true,
        ..SanitizeOptions::default()
    };
    let s = sanitize(
        Dialect::OpenAiResponses,
        &json!({"type": "object", "properties": {"meta": {"type": "object", "additionalProperties": {"type": "string"}}}}),
        &strict,
    )
    .unwrap();
    assert!(!s.strict);
    assert!(s.strict_fallback.unwrap().contains("additionalProperties"));
    let s = sanitize(
        Dialect::OpenAiChat,
        &json!({"type": "object", "properties": {"q": {"type": "string"}, "n": {"type": "integer", "default": 5}}, "required": ["q"]}),
        &strict,
    )
    .unwrap();
    assert!(s.strict);
    assert_eq!(
        s.schema,
        json!({"type": "object", "additionalProperties": false, "required": ["n", "q"], "properties": {
            "q": {"type": "string"},
            "n": {"type": ["integer", "null"], "description": "{default: 5}"}}})
    );
}

#[test]
fn strict_ignores_definitions_the_tool_never_uses() {
    // The Notion server copies one `$defs` block into every tool; an open object in it that
    // no property refers to made all 24 of its tools fall back from strict mode.
    let strict = SanitizeOptions {
        strict: true,
        ..SanitizeOptions::default()
    };
    let defs = json!({
        "parentRequest": {"type": "object", "properties": {"page_id": {"type": "string"}},
                          "required": ["page_id"], "additionalProperties": true},
        "sortObject": {"type": "object", "properties": {"property": {"type": "string"}},
                       "required": ["property"], "additionalProperties": false}});
    for d in [Dialect::OpenAiChat, Dialect::OpenAiResponses] {
        let s = sanitize(
            d,
            &json!({"type": "object", "properties": {"sorts": {"type": "array",
                "items": {"$ref": "#/$defs/sortObject"}}}, "required": ["sorts"], "$defs": defs}),
            &strict,
        )
        .unwrap();
        assert!(s.strict, "{d}: {:?}", s.strict_fallback);
        assert_eq!(
            s.schema["$defs"]
                .as_object()
                .map(|m| m.keys().map(String::as_str).collect::<Vec<_>>()),
            Some(vec!["sortObject"]),
            "{d}"
        );
        assert!(s.changes.iter().any(|c| c.rule == "defs-unused-dropped"));
        // Without strict the schema keeps its definitions as sent.
        let plain = sanitize(
            d,
            &json!({"type": "object", "properties": {}, "$defs": defs}),
            &SanitizeOptions::default(),
        )
        .unwrap();
        assert_eq!(plain.schema["$defs"], defs, "{d}");
        // A definition in use still decides.
        let s = sanitize(
            d,
            &json!({"type": "object", "properties": {"parent": {"$ref": "#/$defs/parentRequest"}},
                    "$defs": defs}),
            &strict,
        )
        .unwrap();
        assert!(!s.strict, "{d}");
    }
}

#[test]
fn openai_inlines_refs_with_siblings_only() {
    check(
        Dialect::OpenAiChat,
        json!({"type": "object", "properties": {
            "a": {"$ref": "#/$defs/A", "description": "first"},
            "b": {"$ref": "#/$defs/A"}}, "$defs": {"A": {"type": "string"}}}),
        json!({"type": "object", "properties": {
            "a": {"type": "string", "description": "first"},
            "b": {"$ref": "#/$defs/A"}}, "$defs": {"A": {"type": "string"}}}),
        &["ref-inlined"],
    );
}
