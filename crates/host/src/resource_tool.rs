//! The `read_resource` tool: the host's own tool for reading an MCP resource, so that a model
//! can follow a `resource_link` a tool returned (MCP 2025-06-18 on) or read a resource a server
//! lists. When the model gets it is [`ReadResources`]: by default once a result in the
//! conversation links a resource, from the next request on, and it stays (the tools array
//! changes once). The URI goes to the server that lists it, else the one whose result linked
//! it, else the one with the resource template it fits best; the contents come back as a tool
//! result, shaped and cut as a tool's are.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use switchboard_core::{CallResult, Catalog, ContentBlock, Dialect, ServerCatalog};
use switchboard_mcp::Sessions;
use switchboard_providers::{SanitizeOptions, ToolSpec, prepare_tool};

use crate::dispatch::{Outcome, Status, ToolInput, ToolUse};
use crate::shape::{self, ShapeOptions, Shaped};

/// The tool's name, as the model sees it.
pub const READ_RESOURCE: &str = "read_resource";

/// When the model gets [`READ_RESOURCE`] (`[settings] read_resources`, `--read-resources`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReadResources {
    /// Once a tool result in the conversation links a resource (the default): no tokens spent
    /// on it before there is something to read.
    #[default]
    Linked,
    /// From the first request, whenever a server offers resources.
    Always,
    /// Never.
    Never,
}

impl ReadResources {
    /// Read the setting's word.
    pub fn parse(word: &str) -> Option<ReadResources> {
        match word {
            "linked" => Some(ReadResources::Linked),
            "always" => Some(ReadResources::Always),
            "never" => Some(ReadResources::Never),
            _ => None,
        }
    }
}

/// The tool as `dialect` takes it.
pub fn spec(dialect: Dialect, gemini_openapi: bool) -> Option<ToolSpec> {
    let schema = json!({
        "type": "object",
        "properties": {
            "uri": {
                "type": "string",
                "description": "The resource's URI, exactly as the resource link or the server gave it."
            }
        },
        "required": ["uri"]
    });
    let opts = SanitizeOptions {
        strict: false,
        gemini_openapi,
    };
    prepare_tool(
        dialect,
        READ_RESOURCE,
        Some(
            "Read an MCP resource by its URI: one a tool result linked (\"[resource link: URI ...]\"), or one a server offers. Returns the resource's contents.",
        ),
        &schema,
        &opts,
    )
    .ok()
    .map(|p| p.spec)
}

/// Whether any server the model may reach (all, or those of `only`) offers resources or
/// resource templates.
pub fn offered(catalog: &Catalog, only: Option<&BTreeSet<String>>) -> bool {
    reachable(catalog, only).any(|s| !s.resources.is_empty() || !s.resource_templates.is_empty())
}

/// The servers of `catalog` the model may reach: all, or those of `only` (a profile's).
fn reachable<'a>(
    catalog: &'a Catalog,
    only: Option<&'a BTreeSet<String>>,
) -> impl Iterator<Item = &'a ServerCatalog> {
    catalog
        .servers
        .values()
        .filter(move |s| only.is_none_or(|set| set.contains(&s.server)))
}

/// The server to read `uri` from: the one listing it, else the one whose tool result linked it
/// (`linked`: URI → server), else the one with the template it fits best (the longest text
/// before the template's first `{`), else the only server with templates. Only servers of
/// `only` (a profile's selection), when given.
pub fn owner(
    catalog: &Catalog,
    only: Option<&BTreeSet<String>>,
    uri: &str,
    linked: &BTreeMap<String, String>,
) -> Option<String> {
    if let Some(s) = reachable(catalog, only).find(|s| s.resources.iter().any(|r| r.def.uri == uri))
    {
        return Some(s.server.clone());
    }
    if let Some(server) = linked
        .get(uri)
        .filter(|s| reachable(catalog, only).any(|r| r.server == **s))
    {
        return Some(server.clone());
    }
    let fits = |s: &switchboard_core::ServerCatalog| {
        s.resource_templates
            .iter()
            .map(|t| t.def.uri_template.split('{').next().unwrap_or_default())
            .filter(|prefix| !prefix.is_empty() && uri.starts_with(prefix))
            .map(str::len)
            .max()
    };
    if let Some((_, s)) = reachable(catalog, only)
        .filter_map(|s| Some((fits(s)?, s)))
        .max_by_key(|(len, _)| *len)
    {
        return Some(s.server.clone());
    }
    let mut with_templates = reachable(catalog, only).filter(|s| !s.resource_templates.is_empty());
    match (with_templates.next(), with_templates.next()) {
        (Some(one), None) => Some(one.server.clone()),
        _ => None,
    }
}

/// A `resources/read` result's `contents` as a tool result: text as text (also text a server
/// sent as a base64 blob, when its type is text or JSON and it is UTF-8), an image as an image
/// (for dialects that take images in tool results), other binary contents named.
pub fn as_result(contents: &Value) -> CallResult {
    let mut content = Vec::new();
    for c in contents.as_array().into_iter().flatten() {
        let uri = c.get("uri").and_then(Value::as_str).unwrap_or("");
        let mime = c.get("mimeType").and_then(Value::as_str);
        if let Some(text) = c.get("text").and_then(Value::as_str) {
            content.push(ContentBlock::Text {
                text: text.to_string(),
            });
        } else if let Some(blob) = c.get("blob").and_then(Value::as_str) {
            match mime {
                Some(m)
                    if shape::textual(m)
                        && let Some(text) = shape::decoded_text(blob) =>
                {
                    content.push(ContentBlock::Text { text });
                }
                Some(m) if m.starts_with("image/") => content.push(ContentBlock::Image {
                    data: blob.to_string(),
                    mime_type: m.to_string(),
                }),
                _ => content.push(ContentBlock::Text {
                    text: format!(
                        "[{uri}: {} of {}, not shown]",
                        mime.unwrap_or("binary content"),
                        shape::size(blob)
                    ),
                }),
            }
        }
    }
    if content.is_empty() {
        content.push(ContentBlock::Text {
            text: "The resource has no contents.".into(),
        });
    }
    CallResult {
        content,
        structured_content: None,
        is_error: false,
    }
}

/// Answer one `read_resource` use: read the URI from its server and shape the contents as a
/// tool result (`opts`: images, the token limit, where a cut result's full text goes).
pub async fn answer(
    sessions: &Sessions,
    catalog: &Catalog,
    only: Option<&BTreeSet<String>>,
    linked: &BTreeMap<String, String>,
    u: &ToolUse,
    opts: &ShapeOptions,
) -> Outcome {
    let started = Instant::now();
    let arguments = match &u.input {
        ToolInput::Json(v) => v.clone(),
        ToolInput::Unparsed { raw, .. } => Value::String(raw.clone()),
    };
    let mut outcome = Outcome {
        id: u.id.clone(),
        name: u.name.clone(),
        server: None,
        tool: None,
        arguments: arguments.clone(),
        status: Status::InvalidArguments,
        result: Shaped::error(
            "read_resource takes {\"uri\": \"...\"}: the resource's URI as a string.",
        ),
        elapsed_ms: 0,
        output_schema_problem: None,
    };
    let Some(uri) = arguments.get("uri").and_then(Value::as_str) else {
        return outcome;
    };
    let Some(server) = owner(catalog, only, uri, linked) else {
        // The tool is known; its argument names nothing that can be read.
        outcome.status = Status::InvalidArguments;
        outcome.result = Shaped::error(format!(
            "No server offers the resource {uri:?}. Use a URI a tool result linked or a server lists, exactly as given."
        ));
        return outcome;
    };
    let read = sessions.read_resource(&server, uri).await;
    outcome.elapsed_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    outcome.server = Some(server);
    match read {
        Ok(contents) => {
            outcome.status = Status::Ok;
            outcome.result = shape::shape(&as_result(&contents), opts);
        }
        Err(e) => {
            let (status, result) = crate::dispatch::failure(READ_RESOURCE, &e);
            outcome.status = status;
            outcome.result = result;
        }
    }
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;
    use switchboard_core::Entry;

    fn catalog() -> Catalog {
        let resource = |uri: &str| {
            Entry::new(serde_json::from_value(json!({"uri": uri, "name": uri})).unwrap())
        };
        let template = |t: &str| {
            Entry::new(serde_json::from_value(json!({"uriTemplate": t, "name": t})).unwrap())
        };
        let mut docs = ServerCatalog::new("docs");
        docs.resources.push(resource("docs://pages/sso"));
        docs.resource_templates
            .push(template("docs://pages/{slug}"));
        let mut files = ServerCatalog::new("files");
        files.resource_templates.push(template("file:///{path}"));
        let mut c = Catalog::new();
        c.servers.insert("docs".into(), docs);
        c.servers.insert("files".into(), files);
        c.servers
            .insert("plain".into(), ServerCatalog::new("plain"));
        c
    }

    #[test]
    fn a_uri_goes_to_the_server_that_lists_links_or_fits_it() {
        let c = catalog();
        let none = BTreeMap::new();
        let all = |uri: &str, linked: &BTreeMap<String, String>| owner(&c, None, uri, linked);
        assert_eq!(all("docs://pages/sso", &none).as_deref(), Some("docs"));
        assert_eq!(all("docs://pages/x", &none).as_deref(), Some("docs"));
        assert_eq!(all("file:///tmp/a", &none).as_deref(), Some("files"));
        assert_eq!(
            all("mem://note/1", &none),
            None,
            "two servers have templates"
        );
        let linked = BTreeMap::from([("mem://note/1".to_string(), "plain".to_string())]);
        assert_eq!(all("mem://note/1", &linked).as_deref(), Some("plain"));
        // A server that lists the URI wins over the one that linked it.
        let linked = BTreeMap::from([("docs://pages/sso".to_string(), "plain".to_string())]);
        assert_eq!(all("docs://pages/sso", &linked).as_deref(), Some("docs"));
        // A profile's selection: the others are not reached, and the only server with
        // templates left takes what fits no other.
        let only = BTreeSet::from(["files".to_string()]);
        assert_eq!(
            owner(&c, Some(&only), "docs://pages/sso", &none).as_deref(),
            Some("files")
        );
        let only = BTreeSet::from(["plain".to_string()]);
        assert_eq!(owner(&c, Some(&only), "docs://pages/sso", &none), None);
        assert!(offered(&c, None));
        assert!(!offered(&c, Some(&only)));
        assert!(!offered(&Catalog::new(), None));
    }

    #[test]
    fn contents_become_a_tool_result() {
        let r = as_result(&json!([
            {"uri": "a://1", "mimeType": "text/plain", "text": "hello"},
            {"uri": "a://2", "mimeType": "image/png", "blob": "iVBORw0KGgo="},
            {"uri": "a://3", "mimeType": "application/pdf", "blob": "JVBERi0="},
            {"uri": "a://4", "mimeType": "text/plain", "blob": "aGVsbG8gYmxvYg=="},
            {"uri": "a://5", "mimeType": "text/plain", "blob": "//79"}
        ]));
        assert_eq!(r.content.len(), 5);
        assert_eq!(
            r.content[3],
            ContentBlock::Text {
                text: "hello blob".into()
            },
            "text sent as a blob is read"
        );
        assert!(
            matches!(&r.content[4], ContentBlock::Text { text } if text.contains("not shown")),
            "bytes that are not UTF-8 are named: {:?}",
            r.content[4]
        );
        assert_eq!(
            r.content[0],
            ContentBlock::Text {
                text: "hello".into()
            }
        );
        assert!(
            matches!(&r.content[1], ContentBlock::Image { mime_type, .. } if mime_type == "image/png")
        );
        assert!(
            matches!(&r.content[2], ContentBlock::Text { text } if text.starts_with("[a://3: application/pdf of ")),
            "{:?}",
            r.content[2]
        );
        assert_eq!(as_result(&json!([])).content.len(), 1);
        for dialect in Dialect::ALL {
            let s = spec(dialect, dialect == Dialect::Gemini).unwrap();
            assert_eq!(s.name, READ_RESOURCE);
        }
    }
}
