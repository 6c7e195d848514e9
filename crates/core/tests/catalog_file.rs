//! Hostile catalog files (`--catalog`): parsing never panics, and every entry of a file that
//! parses is either loaded or reported as skipped with its pointer; none is lost silently.

use proptest::prelude::*;
use serde_json::{Value, json};
use switchboard_core::CoreError;
use switchboard_core::catalog_file::parse;

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        prop_oneof![Just(json!(0)), Just(json!(u64::MAX)), Just(json!(-1e308))],
        prop::sample::select(&["", "x", "tools", "💥", "a/b~c", "file:///x", "{name}"][..])
            .prop_map(Value::from),
        "\\PC{0,8}".prop_map(Value::from),
    ]
}

fn any_json() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(5, 32, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(
                prop::sample::select(
                    &[
                        "name",
                        "title",
                        "description",
                        "inputSchema",
                        "outputSchema",
                        "annotations",
                        "readOnlyHint",
                        "uri",
                        "uriTemplate",
                        "mimeType",
                        "arguments",
                        "required",
                        "_meta",
                        "",
                    ][..]
                )
                .prop_map(str::to_string),
                inner,
                0..5
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A definition: often a plausible one with one field of the wrong type.
fn definition() -> impl Strategy<Value = Value> {
    prop_oneof![
        any_json(),
        (
            prop::sample::select(&["name", "uri", "uriTemplate"][..]),
            any_json(),
            any_json()
        )
            .prop_map(|(key, v, schema)| json!({key: v, "name": "t", "inputSchema": schema})),
        (any_json(), any_json()).prop_map(|(a, d)| {
            json!({"name": "t", "description": d, "annotations": a, "inputSchema": {"type": "object"}})
        }),
    ]
}

fn lists() -> impl Strategy<Value = serde_json::Map<String, Value>> {
    prop::collection::btree_map(
        prop::sample::select(&["tools", "resources", "resourceTemplates", "prompts"][..])
            .prop_map(str::to_string),
        prop_oneof![
            4 => prop::collection::vec(definition(), 0..4).prop_map(Value::Array),
            1 => any_json(),
        ],
        0..4,
    )
    .prop_map(|m| m.into_iter().collect())
}

fn catalog() -> impl Strategy<Value = Value> {
    let server = (prop_oneof![leaf(), Just(json!("s"))], lists(), leaf()).prop_map(
        |(name, mut lists, description)| {
            lists.insert("name".into(), name);
            lists.insert("description".into(), description);
            Value::Object(lists)
        },
    );
    prop_oneof![
        prop::collection::vec(server, 0..4).prop_map(|s| json!({"servers": s})),
        lists().prop_map(Value::Object),
        any_json(),
    ]
}

/// Entries the file holds that should come out as definitions or skips.
fn entries(list_owner: &Value) -> usize {
    ["tools", "resources", "resourceTemplates", "prompts"]
        .iter()
        .filter_map(|k| list_owner.get(*k).and_then(Value::as_array))
        .map(Vec::len)
        .sum()
}

fn loaded(servers: &[switchboard_core::ServerCatalog]) -> usize {
    servers
        .iter()
        .map(|s| s.tools.len() + s.resources.len() + s.resource_templates.len() + s.prompts.len())
        .sum()
}

proptest! {
    #[test]
    fn every_entry_is_loaded_or_reported(file in catalog()) {
        let bytes = file.to_string().into_bytes();
        match parse("c.json", "c", &bytes) {
            Ok((servers, skipped)) => {
                for e in &skipped {
                    prop_assert!(matches!(e, CoreError::CatalogEntry { .. }), "{e:?}");
                    prop_assert!(e.to_string().contains("c.json"), "{e}");
                }
                // Entries of servers that were skipped whole (no name) are not counted.
                let expected: usize = match file.get("servers").and_then(Value::as_array) {
                    Some(list) => list
                        .iter()
                        .filter(|s| s.get("name").is_some_and(Value::is_string))
                        .map(entries)
                        .sum(),
                    None => entries(&file),
                };
                let whole_servers_skipped = file
                    .get("servers")
                    .and_then(Value::as_array)
                    .map_or(0, |l| l.iter().filter(|s| !s.get("name").is_some_and(Value::is_string)).count());
                prop_assert_eq!(loaded(&servers) + skipped.len(), expected + whole_servers_skipped, "{}", file);
            }
            Err(e) => prop_assert!(
                matches!(e, CoreError::CatalogShape { .. } | CoreError::CatalogJson { .. }),
                "{e:?}"
            ),
        }
    }

    #[test]
    fn any_bytes_are_an_answer_not_a_panic(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
        let _ = parse("c.json", "c", &bytes);
    }
}
