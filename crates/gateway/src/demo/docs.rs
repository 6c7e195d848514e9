//! The demo docs search: `search`, `get_page`, one resource per page, and server instructions.

use serde_json::{Map, Value, json};
use switchboard_core::{CallResult, Resource, Tool};

use super::args::{required_str, score};
use crate::static_server::Backend;

struct Page {
    slug: &'static str,
    title: &'static str,
    body: &'static str,
}

const PAGES: &[Page] = &[
    Page {
        slug: "getting-started",
        title: "Getting started",
        body: "# Getting started\n\nCreate a workspace, invite your team and connect your first project. Every workspace has an owner who manages billing and members.",
    },
    Page {
        slug: "sso-setup",
        title: "Single sign-on (SSO) setup",
        body: "# Single sign-on (SSO) setup\n\nConnect an identity provider with SAML 2.0 or OIDC. After a password reset at the identity provider, users must sign in once with SSO before API tokens work again. A 403 after a successful IdP login usually means the user is not assigned to the app.",
    },
    Page {
        slug: "billing-currency",
        title: "Billing currency and invoices",
        body: "# Billing currency and invoices\n\nInvoices use the currency of the billing country set on the workspace. Change the billing country before the next invoice to switch currency; past invoices are not re-issued.",
    },
    Page {
        slug: "rate-limits",
        title: "API rate limits",
        body: "# API rate limits\n\nThe API allows 1,000 requests per hour per token. Responses over the limit get HTTP 429 with a Retry-After header. Use the bulk endpoints for nightly syncs.",
    },
    Page {
        slug: "exports",
        title: "Exporting data",
        body: "# Exporting data\n\nCSV exports run in the background for projects over 10,000 rows; you get an email with a download link when the export is ready.",
    },
    Page {
        slug: "two-factor",
        title: "Two-factor authentication",
        body: "# Two-factor authentication\n\nAuthenticator codes depend on the phone's clock. If codes are rejected after a phone change, enable automatic time on the phone or use a recovery code.",
    },
];

fn uri(slug: &str) -> String {
    format!("docs://pages/{slug}")
}

/// The docs backend.
#[derive(Default)]
pub struct Docs;

impl Docs {
    /// The docs server with its built-in pages.
    pub fn new() -> Self {
        Self
    }
}

impl Backend for Docs {
    fn name(&self) -> &str {
        "switchboard-demo-docs"
    }

    fn instructions(&self) -> Option<String> {
        Some("Product documentation. Use `search` to find pages about a topic, then `get_page` with a slug from the results to read the page. Quote the page title when you cite it.".into())
    }

    fn tools(&self) -> Vec<Tool> {
        let mut search = Tool::new(
            "search",
            "Search the product documentation. Returns the slug, title and first line of each matching page, best match first.",
            json!({
                "type": "object",
                "properties": {
                    "q": {"type": "string", "description": "What to look for, e.g. \"rate limit 429\".", "maxLength": 200}
                },
                "required": ["q"],
                "additionalProperties": false
            }),
        );
        search.annotations = Some(
            serde_json::from_value(json!({"title": "Search docs", "readOnlyHint": true}))
                .unwrap_or_default(),
        );
        let mut get = Tool::new(
            "get_page",
            "Read one documentation page in full, as Markdown.",
            json!({
                "type": "object",
                "properties": {
                    "slug": {"type": "string", "description": "Page slug from search results, e.g. \"sso-setup\".", "pattern": "^[a-z0-9-]+$"}
                },
                "required": ["slug"],
                "additionalProperties": false
            }),
        );
        get.annotations = Some(
            serde_json::from_value(json!({"title": "Read a page", "readOnlyHint": true}))
                .unwrap_or_default(),
        );
        vec![search, get]
    }

    fn call(&self, tool: &str, args: &Map<String, Value>) -> CallResult {
        match tool {
            "search" => match required_str(args, "q") {
                Ok(q) => {
                    let mut hits: Vec<(usize, &Page)> = PAGES
                        .iter()
                        .map(|p| (score(q, &format!("{} {} {}", p.slug, p.title, p.body)), p))
                        .filter(|(s, _)| *s > 0)
                        .collect();
                    hits.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.slug.cmp(b.1.slug)));
                    if hits.is_empty() {
                        return CallResult::text(format!("No pages match {q:?}."), false);
                    }
                    let lines: Vec<String> = hits
                        .iter()
                        .map(|(_, p)| {
                            let first = p.body.lines().nth(2).unwrap_or_default();
                            format!("{} — {}: {}", p.slug, p.title, first)
                        })
                        .collect();
                    CallResult::text(lines.join("\n"), false)
                }
                Err(e) => e,
            },
            "get_page" => match required_str(args, "slug") {
                Ok(slug) => match PAGES.iter().find(|p| p.slug == slug) {
                    Some(p) => CallResult::text(p.body, false),
                    None => CallResult::text(
                        format!("no page {slug:?}; use search to find a slug"),
                        true,
                    ),
                },
                Err(e) => e,
            },
            other => CallResult::text(format!("unknown tool {other:?}"), true),
        }
    }

    fn resources(&self) -> Vec<Resource> {
        PAGES
            .iter()
            .filter_map(|p| {
                serde_json::from_value(json!({"uri": uri(p.slug), "name": p.slug, "title": p.title, "mimeType": "text/markdown"})).ok()
            })
            .collect()
    }

    fn read(&self, u: &str) -> Option<(String, String)> {
        PAGES
            .iter()
            .find(|p| uri(p.slug) == u)
            .map(|p| ("text/markdown".to_string(), p.body.to_string()))
    }
}
