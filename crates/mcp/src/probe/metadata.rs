//! OAuth metadata at an MCP server's origin, looked for when the server refused `initialize`
//! without any `WWW-Authenticate` challenge (as servers written to the MCP 2025-03-26
//! authorization spec do). The places and their order are rmcp's discovery, which
//! `switchboard auth login` runs: protected resource metadata (RFC 9728) first, then
//! authorization server metadata (RFC 8414, OpenID Connect). rmcp first GETs the MCP URL itself
//! for a challenge's `resource_metadata` pointer; the probe's POST already stands in for that.
//!
//! Every place is asked at once with a plain GET (no credentials, no entry headers), through the
//! sessions' HTTP client and its redirect handling; a document reached on another origin is
//! not taken, as rmcp refuses cross-origin discovery redirects. Bodies are read up to
//! [`MAX_BODY`] (rmcp's own cap) and anything that is not the document is passed over.

use reqwest::Url;
use serde_json::Value;
use tokio::time::Instant;

/// The largest metadata document read, in bytes (rmcp reads OAuth responses up to 1 MiB).
pub(super) const MAX_BODY: usize = 1024 * 1024;

/// What the search found.
#[derive(Debug)]
pub(super) enum Search {
    /// A document that says where to log in: the first in rmcp's order.
    Found {
        /// Where it was found.
        url: String,
        /// An authorization server metadata document whose `issuer` is not the one its URL
        /// implies (RFC 8414 §3.3): the issuer it names. rmcp, and so `auth login`, refuses it.
        issuer_mismatch: Option<String>,
    },
    /// Every place answered, and none with such a document.
    NotFound,
    /// None of the places that answered had one, and the deadline came before the rest did.
    Unfinished,
}

/// The kind of document a place is expected to hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// RFC 9728 protected resource metadata.
    Resource,
    /// RFC 8414 authorization server metadata, or OpenID Connect discovery.
    AuthorizationServer,
}

/// Look for OAuth metadata for the MCP server at `url`, until `deadline`.
pub(super) async fn search(http: &reqwest::Client, url: &str, deadline: Instant) -> Search {
    let Ok(base) = Url::parse(url) else {
        return Search::NotFound;
    };
    let places = places(&base);
    let answers =
        futures::future::join_all(places.iter().map(|(place, kind)| {
            tokio::time::timeout_at(deadline, fetch(http, &base, place, *kind))
        }))
        .await;
    let mut unfinished = false;
    for ((place, _), answer) in places.iter().zip(answers) {
        match answer {
            Ok(Some(issuer_mismatch)) => {
                return Search::Found {
                    url: place.to_string(),
                    issuer_mismatch,
                };
            }
            Ok(None) => {}
            Err(_) => unfinished = true,
        }
    }
    if unfinished {
        Search::Unfinished
    } else {
        Search::NotFound
    }
}

/// Where rmcp looks, in its order: protected resource metadata at the RFC 9728 path-suffixed
/// form, the path-prefixed form and the origin's root; then authorization server metadata at
/// the RFC 8414 path-suffixed form, the OpenID Connect suffixed and prefixed forms, and the
/// origin's root (for a URL without a path: the root's OAuth form, then its OpenID Connect form).
fn places(base: &Url) -> Vec<(Url, Kind)> {
    let trimmed = base.path().trim_matches('/');
    let resource = "/.well-known/oauth-protected-resource";
    let oauth = "/.well-known/oauth-authorization-server";
    let oidc = "/.well-known/openid-configuration";
    let paths: Vec<(String, Kind)> = if trimmed.is_empty() {
        vec![
            (resource.to_string(), Kind::Resource),
            (oauth.to_string(), Kind::AuthorizationServer),
            (oidc.to_string(), Kind::AuthorizationServer),
        ]
    } else {
        vec![
            (format!("{resource}/{trimmed}"), Kind::Resource),
            (format!("/{trimmed}{resource}"), Kind::Resource),
            (resource.to_string(), Kind::Resource),
            (format!("{oauth}/{trimmed}"), Kind::AuthorizationServer),
            (format!("{oidc}/{trimmed}"), Kind::AuthorizationServer),
            (format!("/{trimmed}{oidc}"), Kind::AuthorizationServer),
            (oauth.to_string(), Kind::AuthorizationServer),
        ]
    };
    paths
        .into_iter()
        .map(|(path, kind)| {
            let mut place = base.clone();
            place.set_query(None);
            place.set_fragment(None);
            place.set_path(&path);
            (place, kind)
        })
        .collect()
}

/// GET `place` and read it as a document of `kind`: `Some` when it is one that says where to
/// log in (with the mismatched issuer, if any), `None` for anything else (a status other than
/// 200, another origin, a body too big, not JSON, missing or mistyped fields).
async fn fetch(
    http: &reqwest::Client,
    base: &Url,
    place: &Url,
    kind: Kind,
) -> Option<Option<String>> {
    let response = http
        .get(place.clone())
        // What rmcp's discovery sends.
        .header("mcp-protocol-version", "2024-11-05")
        .send()
        .await
        .ok()?;
    if response.status() != reqwest::StatusCode::OK || !same_origin(place, response.url()) {
        return None;
    }
    let body = read_capped(response).await?;
    let doc: Value = serde_json::from_slice(&body).ok()?;
    match kind {
        Kind::Resource => names_authorization_servers(base, &doc).then_some(None),
        Kind::AuthorizationServer => authorization_server(place, &doc),
    }
}

/// The body, or `None` when it is longer than [`MAX_BODY`] or breaks off.
async fn read_capped(mut response: reqwest::Response) -> Option<Vec<u8>> {
    if response
        .content_length()
        .is_some_and(|n| n > MAX_BODY as u64)
    {
        return None;
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.ok()? {
        if chunk.len() > MAX_BODY - body.len() {
            return None;
        }
        body.extend_from_slice(&chunk);
    }
    Some(body)
}

/// Protected resource metadata for the MCP server at `base` that names an authorization
/// server, as rmcp takes it: a `resource` that identifies `base` (same origin, and its path or
/// a parent of it, no fragment) and a non-empty `authorization_servers` (or the draft's
/// singular `authorization_server`).
fn names_authorization_servers(base: &Url, doc: &Value) -> bool {
    let Some(resource) = doc
        .get("resource")
        .and_then(Value::as_str)
        .and_then(|r| Url::parse(r).ok())
    else {
        return false;
    };
    if resource.fragment().is_some() || !identifies(base, &resource) {
        return false;
    }
    let listed = doc
        .get("authorization_servers")
        .and_then(Value::as_array)
        .is_some_and(|list| {
            list.iter()
                .any(|s| s.as_str().is_some_and(|s| !s.trim().is_empty()))
        });
    let single = doc
        .get("authorization_server")
        .and_then(Value::as_str)
        .is_some_and(|s| !s.trim().is_empty());
    listed || single
}

/// Whether the `resource` of a metadata document identifies the MCP server at `base` (rmcp's
/// rule): the same URL, or the same origin and a path that is `base`'s or a parent of it.
fn identifies(base: &Url, resource: &Url) -> bool {
    if base == resource {
        return true;
    }
    if !same_origin(base, resource) {
        return false;
    }
    let (expected, actual) = (base.path(), resource.path());
    expected == actual
        || (expected.starts_with(actual)
            && (actual.ends_with('/') || expected.as_bytes().get(actual.len()) == Some(&b'/')))
}

/// Authorization server metadata (RFC 8414 §2): an `issuer` and the authorization and token
/// endpoints, all strings. `Some(mismatch)` when it is one, with the issuer it names when that
/// is not the one the document's URL implies (RFC 8414 §3.3, which rmcp enforces).
fn authorization_server(place: &Url, doc: &Value) -> Option<Option<String>> {
    let text = |field: &str| doc.get(field).and_then(Value::as_str);
    let issuer = text("issuer")?;
    text("authorization_endpoint")?;
    text("token_endpoint")?;
    let mismatch = match expected_issuer(place) {
        Some(expected) if !issuers_match(issuer, &expected) => Some(issuer.to_string()),
        _ => None,
    };
    Some(mismatch)
}

/// The issuer a metadata URL implies (rmcp's reading): the origin for the root forms, the
/// origin plus the suffix for the path-suffixed forms, the origin plus the prefix for the
/// OpenID Connect path-prefixed form.
fn expected_issuer(place: &Url) -> Option<String> {
    let path = place.path();
    let oauth = "/.well-known/oauth-authorization-server";
    let oidc = "/.well-known/openid-configuration";
    let issuer_path = if path == oauth || path == oidc {
        ""
    } else if let Some(suffix) = path.strip_prefix(&format!("{oauth}/")) {
        suffix
    } else if let Some(suffix) = path.strip_prefix(&format!("{oidc}/")) {
        suffix
    } else if let Some(prefix) = path.strip_suffix(oidc) {
        prefix.trim_start_matches('/')
    } else {
        return None;
    };
    let mut issuer = place.clone();
    issuer.set_query(None);
    issuer.set_fragment(None);
    if issuer_path.is_empty() {
        issuer.set_path("");
    } else {
        issuer.set_path(&format!("/{issuer_path}"));
    }
    Some(issuer.to_string())
}

/// Whether two issuers are the same, a root issuer's trailing slash aside (rmcp's rule).
fn issuers_match(received: &str, expected: &str) -> bool {
    let trim_root_slash = |issuer: &str| -> String {
        issuer
            .strip_suffix('/')
            .filter(|bare| {
                Url::parse(bare).is_ok_and(|url| url.path().is_empty() || url.path() == "/")
            })
            .unwrap_or(issuer)
            .to_string()
    };
    received == expected || trim_root_slash(received) == trim_root_slash(expected)
}

fn same_origin(a: &Url, b: &Url) -> bool {
    a.scheme() == b.scheme()
        && a.host_str() == b.host_str()
        && a.port_or_known_default() == b.port_or_known_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn the_places_are_rmcps_in_its_order() {
        let paths = |u: &str| -> Vec<String> {
            places(&url(u))
                .into_iter()
                .map(|(p, _)| p.path().to_string())
                .collect()
        };
        assert_eq!(
            paths("http://h:1/mcp?x=1"),
            [
                "/.well-known/oauth-protected-resource/mcp",
                "/mcp/.well-known/oauth-protected-resource",
                "/.well-known/oauth-protected-resource",
                "/.well-known/oauth-authorization-server/mcp",
                "/.well-known/openid-configuration/mcp",
                "/mcp/.well-known/openid-configuration",
                "/.well-known/oauth-authorization-server",
            ]
        );
        assert_eq!(
            paths("http://h:1/"),
            [
                "/.well-known/oauth-protected-resource",
                "/.well-known/oauth-authorization-server",
                "/.well-known/openid-configuration",
            ]
        );
        assert!(
            places(&url("http://h:1/mcp?x=1"))
                .iter()
                .all(|(p, _)| p.query().is_none())
        );
    }

    #[test]
    fn authorization_server_metadata_needs_its_fields_as_strings_and_its_issuer_is_checked() {
        let root = url("http://h:1/.well-known/oauth-authorization-server");
        let good = json!({"issuer": "http://h:1", "authorization_endpoint": "http://h:1/a",
                          "token_endpoint": "http://h:1/t"});
        assert_eq!(authorization_server(&root, &good), Some(None));
        let mut slash = good.clone();
        slash["issuer"] = json!("http://h:1/");
        assert_eq!(authorization_server(&root, &slash), Some(None));
        let mut other = good.clone();
        other["issuer"] = json!("http://h:1/oauth");
        assert_eq!(
            authorization_server(&root, &other),
            Some(Some("http://h:1/oauth".to_string()))
        );
        let suffixed = url("http://h:1/.well-known/oauth-authorization-server/tenant");
        other["issuer"] = json!("http://h:1/tenant");
        assert_eq!(authorization_server(&suffixed, &other), Some(None));
        for field in ["issuer", "authorization_endpoint", "token_endpoint"] {
            let mut missing = good.clone();
            missing.as_object_mut().unwrap().remove(field);
            assert_eq!(authorization_server(&root, &missing), None, "{field}");
            let mut mistyped = good.clone();
            mistyped[field] = json!(["http://h:1"]);
            assert_eq!(authorization_server(&root, &mistyped), None, "{field}");
        }
        assert_eq!(authorization_server(&root, &json!([good])), None);
        assert_eq!(authorization_server(&root, &json!("x")), None);
    }

    #[test]
    fn resource_metadata_must_be_this_servers_and_name_an_authorization_server() {
        let base = url("http://h:1/mcp");
        let doc = |resource: Value, servers: Value| json!({"resource": resource, "authorization_servers": servers});
        let servers = json!(["http://auth:2"]);
        assert!(names_authorization_servers(
            &base,
            &doc(json!("http://h:1/mcp"), servers.clone())
        ));
        assert!(names_authorization_servers(
            &base,
            &doc(json!("http://h:1/"), servers.clone())
        ));
        assert!(names_authorization_servers(
            &base,
            &doc(json!("http://h:1"), servers.clone())
        ));
        assert!(!names_authorization_servers(
            &base,
            &doc(json!("http://h:1/mc"), servers.clone())
        ));
        assert!(!names_authorization_servers(
            &base,
            &doc(json!("http://h:2/mcp"), servers.clone())
        ));
        assert!(!names_authorization_servers(
            &base,
            &doc(json!("http://h:1/mcp#f"), servers.clone())
        ));
        assert!(!names_authorization_servers(
            &base,
            &doc(json!(7), servers.clone())
        ));
        assert!(!names_authorization_servers(
            &base,
            &json!({"authorization_servers": servers})
        ));
        assert!(!names_authorization_servers(
            &base,
            &doc(json!("http://h:1/mcp"), json!([]))
        ));
        assert!(!names_authorization_servers(
            &base,
            &doc(json!("http://h:1/mcp"), json!("http://auth:2"))
        ));
        assert!(!names_authorization_servers(
            &base,
            &doc(json!("http://h:1/mcp"), json!([1, ""]))
        ));
        assert!(names_authorization_servers(
            &base,
            &json!({"resource": "http://h:1/mcp", "authorization_server": "http://auth:2"})
        ));
    }
}
