//! Offline catalogs: parse a catalog file (`{"servers": [{"name", "description"?, "tools": [...]}]}`,
//! the format of the shared data sets) or a raw `tools/list` result (`{"tools": [...]}`), and
//! render live catalogs in the same format.
//!
//! Pure: the caller reads the bytes. A malformed entry is skipped and reported; the rest loads.

use serde_json::{Map, Value, json};

use crate::catalog::{Entry, Prompt, Resource, ResourceTemplate, ServerCatalog, Tool};
use crate::error::CoreError;

/// Parse catalog bytes. `source_name` labels errors (usually the path); `default_server` names
/// the server of a raw `tools/list` result (usually the file stem).
///
/// Returns the server catalogs and the entries that were skipped, each with its reason.
pub fn parse(
    source_name: &str,
    default_server: &str,
    bytes: &[u8],
) -> Result<(Vec<ServerCatalog>, Vec<CoreError>), CoreError> {
    // A UTF-8 byte-order mark (some Windows editors write one) is not JSON; skip it.
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let root: Value = serde_json::from_slice(bytes).map_err(|error| CoreError::CatalogJson {
        source_name: source_name.to_string(),
        error,
    })?;
    let mut skipped = Vec::new();
    let entry_err = |pointer: String, message: String| CoreError::CatalogEntry {
        source_name: source_name.to_string(),
        pointer,
        message,
    };
    if let Some(servers) = root.get("servers").and_then(Value::as_array) {
        let mut out = Vec::new();
        for (i, s) in servers.iter().enumerate() {
            let Some(name) = s.get("name").and_then(Value::as_str) else {
                skipped.push(entry_err(
                    format!("/servers/{i}"),
                    "server has no \"name\" string".into(),
                ));
                continue;
            };
            let mut sc = ServerCatalog::new(name);
            sc.info.description = s
                .get("description")
                .and_then(Value::as_str)
                .map(str::to_string);
            sc.info.instructions = s
                .get("instructions")
                .and_then(Value::as_str)
                .map(str::to_string);
            let text = |pointer: &str| {
                s.pointer(pointer)
                    .and_then(Value::as_str)
                    .map(str::to_string)
            };
            sc.info.name = text("/serverInfo/name");
            sc.info.version = text("/serverInfo/version");
            sc.info.protocol_version = text("/protocolVersion");
            let base = format!("/servers/{i}");
            fill(&mut sc, s, &base, &mut skipped, &entry_err);
            out.push(sc);
        }
        return Ok((out, skipped));
    }
    if root.get("tools").and_then(Value::as_array).is_some() {
        let mut sc = ServerCatalog::new(default_server);
        fill(&mut sc, &root, "", &mut skipped, &entry_err);
        return Ok((vec![sc], skipped));
    }
    Err(CoreError::CatalogShape {
        source_name: source_name.to_string(),
    })
}

/// A catalog file of `servers`, in the format [`parse`] reads back to the same catalogs: each
/// server's configured name, what it said about itself (`description`, `instructions`,
/// `serverInfo`, `protocolVersion`) and its tools, resources, resource templates and prompts
/// as it listed them. `source` says where the catalog came from.
pub fn render<'a>(source: &str, servers: impl IntoIterator<Item = &'a ServerCatalog>) -> String {
    let servers: Vec<FileServer<'_>> = servers
        .into_iter()
        .map(|s| {
            let info = &s.info;
            let implementation = (info.name.is_some() || info.version.is_some()).then(|| {
                let mut i = Map::new();
                if let Some(n) = &info.name {
                    i.insert("name".into(), json!(n));
                }
                if let Some(v) = &info.version {
                    i.insert("version".into(), json!(v));
                }
                Value::Object(i)
            });
            FileServer {
                name: &s.server,
                description: info.description.as_deref(),
                instructions: info.instructions.as_deref(),
                server_info: implementation,
                protocol_version: info.protocol_version.as_deref(),
                tools: defs(&s.tools),
                resources: defs(&s.resources),
                resource_templates: defs(&s.resource_templates),
                prompts: defs(&s.prompts),
            }
        })
        .collect();
    // Serializing our own plain structs cannot fail (no non-string map keys). Written from
    // the structs, not through a `Value`, so each object keeps its fields in their order.
    let mut text =
        serde_json::to_string_pretty(&CatalogFile { source, servers }).unwrap_or_default();
    text.push('\n');
    text
}

/// A catalog file, its keys in the order a reader wants them (`name` first).
#[derive(serde::Serialize)]
struct CatalogFile<'a> {
    source: &'a str,
    servers: Vec<FileServer<'a>>,
}

#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct FileServer<'a> {
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    instructions: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    server_info: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    protocol_version: Option<&'a str>,
    tools: Vec<&'a Tool>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    resources: Vec<&'a Resource>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    resource_templates: Vec<&'a ResourceTemplate>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    prompts: Vec<&'a Prompt>,
}

fn defs<T>(entries: &[Entry<T>]) -> Vec<&T> {
    entries.iter().map(|e| &e.def).collect()
}

fn fill(
    sc: &mut ServerCatalog,
    obj: &Value,
    base: &str,
    skipped: &mut Vec<CoreError>,
    entry_err: &dyn Fn(String, String) -> CoreError,
) {
    sc.tools = list::<Tool>(obj, "tools", base, skipped, entry_err);
    sc.resources = list::<Resource>(obj, "resources", base, skipped, entry_err);
    sc.resource_templates =
        list::<ResourceTemplate>(obj, "resourceTemplates", base, skipped, entry_err);
    sc.prompts = list::<Prompt>(obj, "prompts", base, skipped, entry_err);
}

fn list<T: serde::de::DeserializeOwned + serde::Serialize>(
    obj: &Value,
    key: &str,
    base: &str,
    skipped: &mut Vec<CoreError>,
    entry_err: &dyn Fn(String, String) -> CoreError,
) -> Vec<Entry<T>> {
    let Some(items) = obj.get(key).and_then(Value::as_array) else {
        return Vec::new();
    };
    let mut out = Vec::with_capacity(items.len());
    for (j, item) in items.iter().enumerate() {
        match serde_json::from_value::<T>(item.clone()) {
            Ok(def) => out.push(Entry::new(def)),
            Err(e) => skipped.push(entry_err(format!("{base}/{key}/{j}"), e.to_string())),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_servers_format() {
        let bytes = br#"{"source": "x", "servers": [
            {"name": "a", "description": "A server", "tools": [
                {"name": "t1", "description": "d", "inputSchema": {"type": "object"}},
                {"description": "no name"}
            ]}
        ]}"#;
        let (servers, skipped) = parse("f.json", "f", bytes).unwrap();
        assert_eq!(servers.len(), 1);
        assert_eq!(servers[0].tools.len(), 1);
        assert_eq!(servers[0].info.description.as_deref(), Some("A server"));
        assert_eq!(skipped.len(), 1);
        assert!(skipped[0].to_string().contains("/servers/0/tools/1"));
    }

    #[test]
    fn a_rendered_catalog_reads_back_as_the_same_catalogs() {
        let bytes = br#"{"servers": [
            {"name": "a", "description": "A server", "instructions": "Use a.",
             "serverInfo": {"name": "a-server", "version": "1.2.3"}, "protocolVersion": "2025-11-25",
             "tools": [
                {"name": "t1", "title": "T", "description": "d", "inputSchema": {"type": "object",
                 "properties": {"q": {"type": "string"}}}, "outputSchema": {"type": "object"},
                 "annotations": {"readOnlyHint": true}, "icons": [{"src": "data:,"}], "_meta": {"k": 1}},
                {"name": "t2", "inputSchema": {"type": "object"}}
             ],
             "resources": [{"uri": "file:///x", "name": "x"}],
             "resourceTemplates": [{"uriTemplate": "file:///{p}", "name": "p"}],
             "prompts": [{"name": "p1", "arguments": [{"name": "a", "required": true}]}]},
            {"name": "b", "tools": []}
        ]}"#;
        let (servers, skipped) = parse("f.json", "f", bytes).unwrap();
        assert!(skipped.is_empty(), "{skipped:?}");
        assert_eq!(servers[0].info.name.as_deref(), Some("a-server"));
        assert_eq!(
            servers[0].info.protocol_version.as_deref(),
            Some("2025-11-25")
        );
        let text = render("live servers", &servers);
        let rendered: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(rendered["source"], "live servers");
        // A reader finds each server's and each tool's name first.
        assert!(text.starts_with("{\n  \"source\": \"live servers\",\n  \"servers\": [\n    {\n      \"name\": \"a\","), "{text}");
        assert!(text.contains("{\n          \"name\": \"t1\","), "{text}");
        let (again, skipped) = parse("g.json", "g", text.as_bytes()).unwrap();
        assert!(skipped.is_empty(), "{skipped:?}");
        assert_eq!(again, servers);
        // Nothing it did not have is written: no empty lists, no null fields.
        assert!(rendered["servers"][1].get("resources").is_none());
        assert!(rendered["servers"][1].get("serverInfo").is_none());
    }

    #[test]
    fn a_byte_order_mark_before_the_json_is_skipped() {
        let bytes = b"\xEF\xBB\xBF{\"tools\": [{\"name\": \"echo\", \"inputSchema\": {}}]}";
        let (servers, _) = parse("echo.json", "echo", bytes).unwrap();
        assert_eq!(servers[0].tools[0].def.name, "echo");
    }

    #[test]
    fn reads_a_raw_tools_list_result() {
        let bytes = br#"{"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}"#;
        let (servers, skipped) = parse("echo.json", "echo", bytes).unwrap();
        assert_eq!(servers[0].server, "echo");
        assert_eq!(servers[0].tools[0].def.name, "echo");
        assert!(skipped.is_empty());
    }

    #[test]
    fn rejects_other_shapes_and_bad_json() {
        assert!(matches!(
            parse("x", "x", b"{}"),
            Err(CoreError::CatalogShape { .. })
        ));
        assert!(matches!(
            parse("x", "x", b"{"),
            Err(CoreError::CatalogJson { .. })
        ));
    }

    #[test]
    fn every_shared_catalog_loads_without_skips() {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/catalogs");
        let mut total = 0;
        for name in ["github", "docker-registry", "livemcpbench", "metatool"] {
            let path = dir.join(format!("{name}.json"));
            let bytes = std::fs::read(&path).unwrap_or_else(|e| {
                panic!(
                    "{}: {e} (the shared data sets sit beside the repo as ../shared)",
                    path.display()
                )
            });
            let (servers, skipped) = parse(name, name, &bytes).unwrap();
            assert!(skipped.is_empty(), "{name}: {skipped:?}");
            total += servers.iter().map(|s| s.tools.len()).sum::<usize>();
        }
        assert_eq!(total, 1598);
    }
}
