//! Listing: fetch a server's tools, resources, resource templates and prompts through every page
//! and fold them into its `ServerCatalog`. Only capabilities the server advertises are listed.

use std::collections::HashSet;
use std::future::Future;

use std::time::Duration;

use rmcp::RoleClient;
use rmcp::model::{
    ClientRequest, ListPromptsRequest, ListResourceTemplatesRequest, ListResourcesRequest,
    ListToolsRequest, PaginatedRequestParams,
};
use rmcp::service::{Peer, ServiceError};
use serde_json::Value;
use switchboard_core::ServerCatalog;

use crate::convert;
use crate::handler::ListKind;
use crate::request;
use crate::roots::Offer;

/// How long one page may take. The whole listing is also bounded by the startup timeout.
const PAGE_TIMEOUT: Duration = Duration::from_secs(60);

/// A ceiling on pages per list: a server that keeps handing out cursors must not hold the
/// session in a loop forever.
const MAX_PAGES: usize = 1000;

/// Every list kind, for the first listing after connect.
pub(crate) const ALL: [ListKind; 3] = [ListKind::Tools, ListKind::Resources, ListKind::Prompts];

/// Re-list `kinds` into `catalog`. Tools are the point of a server, so a failing `tools/list`
/// fails the refresh; a failing resources or prompts list leaves that part empty with a warning.
pub(crate) async fn refresh(
    peer: &Peer<RoleClient>,
    roots: &Offer,
    kinds: &[ListKind],
    catalog: &mut ServerCatalog,
    warnings: &mut Vec<String>,
) -> Result<(), ServiceError> {
    let Some(info) = peer.peer_info() else {
        return Err(ServiceError::UnexpectedResponse);
    };
    let caps = &info.capabilities;
    for kind in kinds {
        match kind {
            ListKind::Tools => {
                catalog.tools = if caps.tools.is_some() {
                    let tools = pages(warnings, "tools", |p| {
                        list_page(
                            peer,
                            roots,
                            ClientRequest::ListToolsRequest(ListToolsRequest::with_param(p)),
                            "tools",
                        )
                    })
                    .await?;
                    convert::entries(tools, "tool", warnings)
                } else {
                    Vec::new()
                };
            }
            ListKind::Resources => {
                if caps.resources.is_some() {
                    let listed = pages(warnings, "resources", |p| {
                        list_page(
                            peer,
                            roots,
                            ClientRequest::ListResourcesRequest(ListResourcesRequest::with_param(
                                p,
                            )),
                            "resources",
                        )
                    })
                    .await;
                    catalog.resources = match listed {
                        Ok(items) => convert::entries(items, "resource", warnings),
                        Err(e) => soft_failure(warnings, "resources/list", e)?,
                    };
                    let listed = pages(warnings, "resource templates", |p| {
                        list_page(
                            peer,
                            roots,
                            ClientRequest::ListResourceTemplatesRequest(
                                ListResourceTemplatesRequest::with_param(p),
                            ),
                            "resourceTemplates",
                        )
                    })
                    .await;
                    catalog.resource_templates = match listed {
                        Ok(items) => convert::entries(items, "resource template", warnings),
                        Err(e) => soft_failure(warnings, "resources/templates/list", e)?,
                    };
                } else {
                    catalog.resources = Vec::new();
                    catalog.resource_templates = Vec::new();
                }
            }
            ListKind::Prompts => {
                if caps.prompts.is_some() {
                    let listed = pages(warnings, "prompts", |p| {
                        list_page(
                            peer,
                            roots,
                            ClientRequest::ListPromptsRequest(ListPromptsRequest::with_param(p)),
                            "prompts",
                        )
                    })
                    .await;
                    catalog.prompts = match listed {
                        Ok(items) => convert::entries(items, "prompt", warnings),
                        Err(e) => soft_failure(warnings, "prompts/list", e)?,
                    };
                } else {
                    catalog.prompts = Vec::new();
                }
            }
        }
    }
    Ok(())
}

/// One page of a list: its items (as JSON, converted item by item later) and the next cursor.
async fn list_page(
    peer: &Peer<RoleClient>,
    roots: &Offer,
    request: ClientRequest,
    key: &str,
) -> Result<(Vec<Value>, Option<String>), ServiceError> {
    let value = request::to_json(request::send(peer, roots, request, PAGE_TIMEOUT).await?);
    let items = match value.get(key) {
        Some(Value::Array(items)) => items.clone(),
        _ => {
            // The error cannot carry it: say here what came instead.
            let answer = value.to_string();
            let answer = switchboard_core::clip(&answer, 300);
            tracing::warn!("a list answer has no \"{key}\" array: {answer}");
            return Err(ServiceError::UnexpectedResponse);
        }
    };
    // A non-string cursor is treated as the end of the list rather than an error.
    let next = value
        .get("nextCursor")
        .and_then(Value::as_str)
        .filter(|c| !c.is_empty())
        .map(str::to_string);
    Ok((items, next))
}

/// A server error (or a malformed reply) on an optional list becomes a warning and an empty
/// list; a dead transport or a timeout is still an error, because then nothing else works either.
fn soft_failure<T>(
    warnings: &mut Vec<String>,
    method: &str,
    error: ServiceError,
) -> Result<Vec<T>, ServiceError> {
    match error {
        // A server that declares resources but has no templates handler (common with the
        // Python SDK's low-level server) answers "method not found": it has none to offer.
        ServiceError::McpError(e) if e.code == rmcp::model::ErrorCode::METHOD_NOT_FOUND => {
            tracing::debug!("{method} is not offered ({}): {}", e.code.0, e.message);
            Ok(Vec::new())
        }
        ServiceError::McpError(e) => {
            warnings.push(format!("{method} failed ({}): {}", e.code.0, e.message));
            Ok(Vec::new())
        }
        ServiceError::UnexpectedResponse => {
            warnings.push(format!("{method} returned something that is not a list"));
            Ok(Vec::new())
        }
        other => Err(other),
    }
}

/// What a failed [`refresh`] says: an error answer can only have come from `tools/list` (the
/// other lists' error answers are warnings).
pub(crate) fn describe(error: &ServiceError) -> String {
    match error {
        ServiceError::McpError(e) => {
            format!("tools/list answered error {}: {}", e.code.0, e.message)
        }
        ServiceError::UnexpectedResponse => {
            "tools/list answered with something that is not a tool list (its result has no \"tools\" array)".to_string()
        }
        other => other.to_string(),
    }
}

/// Follow `nextCursor` until the server stops giving one, a cursor repeats, or `MAX_PAGES`.
async fn pages<T, F, Fut>(
    warnings: &mut Vec<String>,
    what: &str,
    mut page: F,
) -> Result<Vec<T>, ServiceError>
where
    F: FnMut(PaginatedRequestParams) -> Fut,
    Fut: Future<Output = Result<(Vec<T>, Option<String>), ServiceError>>,
{
    let mut items = Vec::new();
    let mut seen = HashSet::new();
    let mut cursor: Option<String> = None;
    for _ in 0..MAX_PAGES {
        let params = PaginatedRequestParams::default().with_cursor(cursor.clone());
        let (batch, next) = page(params).await?;
        items.extend(batch);
        match next {
            None => return Ok(items),
            Some(next) if !seen.insert(next.clone()) => {
                warnings.push(format!(
                    "{what}: the server repeated cursor \"{next}\"; stopped after {} items",
                    items.len()
                ));
                return Ok(items);
            }
            Some(next) => cursor = Some(next),
        }
    }
    warnings.push(format!(
        "{what}: stopped after {MAX_PAGES} pages ({} items); the server kept paginating",
        items.len()
    ));
    Ok(items)
}

#[cfg(test)]
mod tests {
    use rmcp::model::{ErrorCode, ErrorData};

    use super::*;

    #[tokio::test]
    async fn follows_cursors_to_the_end() {
        let mut warnings = Vec::new();
        let got = pages(&mut warnings, "x", |p| async move {
            let n: usize = p.cursor.map_or(0, |c| c.parse().unwrap());
            let next = (n < 3).then(|| (n + 1).to_string());
            Ok((vec![n], next))
        })
        .await
        .unwrap();
        assert_eq!(got, vec![0, 1, 2, 3]);
        assert!(warnings.is_empty());
    }

    #[tokio::test]
    async fn a_repeated_cursor_stops_with_a_warning() {
        let mut warnings = Vec::new();
        let got = pages(&mut warnings, "tools", |_| async move {
            Ok((vec![1], Some("same".to_string())))
        })
        .await
        .unwrap();
        assert_eq!(got, vec![1, 1]);
        assert!(warnings[0].contains("repeated cursor"), "{warnings:?}");
    }

    #[test]
    fn an_optional_list_the_server_lacks_is_empty_and_another_error_is_a_warning() {
        let mut warnings = Vec::new();
        let missing = ServiceError::McpError(ErrorData::new(
            ErrorCode::METHOD_NOT_FOUND,
            "Method not found",
            None,
        ));
        let got: Vec<Value> =
            soft_failure(&mut warnings, "resources/templates/list", missing).unwrap();
        assert!(got.is_empty() && warnings.is_empty(), "{warnings:?}");
        let broken = ServiceError::McpError(ErrorData::new(
            ErrorCode::INTERNAL_ERROR,
            "database locked",
            None,
        ));
        let got: Vec<Value> = soft_failure(&mut warnings, "prompts/list", broken).unwrap();
        assert!(got.is_empty());
        assert_eq!(warnings, ["prompts/list failed (-32603): database locked"]);
        let got: Result<Vec<Value>, _> =
            soft_failure(&mut warnings, "prompts/list", ServiceError::TransportClosed);
        assert!(got.is_err(), "a dead transport is still an error");
    }
}
