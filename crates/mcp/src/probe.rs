//! [`probe`]: what an HTTP server asks of a client before it talks, found with one `initialize`
//! sent without credentials. It goes through the same connect path as a session (the entry's
//! own headers, the fallback to the legacy HTTP+SSE transport when the URL refuses Streamable
//! HTTP's POST) but with OAuth left out: no stored token is read or sent, no authorization is
//! started, no browser is opened and nothing is written. A session the server opens is closed
//! at once; rmcp DELETEs a Streamable HTTP session the server gave an `Mcp-Session-Id`, and the
//! legacy event stream is dropped.
//!
//! A 401 or 403 without any `WWW-Authenticate` challenge, to an entry without an
//! `Authorization` header of its own, is how a server of the MCP 2025-03-26 authorization spec
//! asks for a login: the probe then looks for OAuth metadata at the server's origin where
//! `switchboard auth login` looks (`metadata`), within the same time limit.

mod metadata;

use std::sync::Arc;
use std::time::Duration;

use rmcp::transport::streamable_http_client::StreamableHttpError;
use switchboard_core::{ServerSpec, TransportSpec, redact_url, redact_urls_in};
use tokio::sync::broadcast;
use tokio::time::Instant;

use crate::connect::{self, HttpAuth, HttpFailure};
use crate::error::SessionError;
use crate::handler::Handler;
use crate::relay::Relays;

/// The least time a probe gives the server to close the session it opened, even when the
/// handshake used up the probe's limit.
const CLOSE_AT_LEAST: Duration = Duration::from_secs(1);

/// What an HTTP server asks before it answers, as seen by [`probe`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Access {
    /// It answered `initialize` without a login (with the entry's own headers, if it has any).
    Open {
        /// It speaks the legacy HTTP+SSE transport (the URL refused Streamable HTTP's POST),
        /// which has no OAuth.
        legacy_sse: bool,
    },
    /// It refused with an OAuth challenge (`WWW-Authenticate: Bearer` on a 401, or on a 403
    /// `insufficient_scope`): `switchboard auth login` is what it takes.
    Login {
        /// The `WWW-Authenticate` value it sent.
        challenge: String,
    },
    /// It refused with 401 or 403 without any `WWW-Authenticate` challenge (as servers of the
    /// MCP 2025-03-26 authorization spec do), and OAuth metadata at its origin says where to
    /// log in: `switchboard auth login` finds the same document.
    Discovered {
        /// The HTTP status.
        status: u16,
        /// Where the metadata was found.
        metadata_url: String,
        /// Authorization server metadata whose `issuer` is not the one its URL implies (RFC 8414
        /// §3.3): the issuer it names. `auth login` refuses such metadata.
        issuer_mismatch: Option<String>,
    },
    /// It refused with 401 or 403 but asked for no OAuth login: no challenge and no OAuth
    /// metadata, another scheme than Bearer, or a refusal of the entry's own `Authorization`
    /// header (a session sends that header and never logs in). The entry needs the header the
    /// server expects.
    Credentials {
        /// The HTTP status.
        status: u16,
        /// The `WWW-Authenticate` value, if it sent one.
        challenge: Option<String>,
        /// Whether OAuth metadata was looked for, and what came of it.
        metadata: Metadata,
    },
}

/// What came of looking for OAuth metadata at a server's origin, for [`Access::Credentials`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Metadata {
    /// Not looked for: the server sent a challenge, or the entry has an `Authorization` header
    /// of its own (a session then never logs in).
    NotSought,
    /// Every place `auth login` looks answered, and none with OAuth metadata. A server of the
    /// 2025-03-26 authorization spec may still take a login: `auth login` then falls back to
    /// `/authorize`, `/token` and `/register` at the server's origin.
    NotFound,
    /// The probe's time limit came before every place had answered, and none that did had it.
    Unfinished,
}

/// Ask the HTTP server of `spec` what it needs: send `initialize` without credentials (the
/// entry's configured headers only) and read the answer, giving it at most `limit`.
///
/// Errors say why nothing was learned: [`SessionError::Connect`] when the server could not be
/// reached (connection refused, no such host, TLS), [`SessionError::ProbeTimeout`] when it did
/// not answer within `limit`, [`SessionError::Handshake`] when it answered but not as an MCP
/// server (an HTTP error status, a web page, a JSON-RPC error to `initialize`), and
/// [`SessionError::Config`] for a stdio entry or a header that cannot be sent. An HTTP status
/// is given as its code and reason, without the body.
pub async fn probe(spec: &ServerSpec, limit: Duration) -> Result<Access, SessionError> {
    let name = spec.name.as_str();
    let TransportSpec::Http {
        url,
        headers,
        headers_helper,
    } = &spec.transport
    else {
        return Err(SessionError::Config {
            server: name.to_string(),
            detail: "it runs over stdio; only HTTP servers can be probed".to_string(),
        });
    };
    let fresh;
    let headers = match headers_helper {
        Some(command) => {
            fresh = crate::headers_helper::merged(name, url, command, headers).await?;
            &fresh
        }
        None => headers,
    };
    let config = connect::http_config(name, url, headers)?;
    let own_bearer = config.auth_header.is_some();
    let own_authorization = headers
        .iter()
        .any(|(k, _)| k.eq_ignore_ascii_case("authorization"));
    // Nobody listens for list changes or events: the session is closed right after the
    // handshake.
    let (handler, _changes) = Handler::new(
        name,
        Arc::new(Relays::default()),
        broadcast::channel(1).0,
        Arc::default(),
        Arc::default(),
    );
    let http = reqwest::Client::new();
    let deadline = Instant::now() + limit;
    let opened = tokio::time::timeout_at(
        deadline,
        connect::open_http(
            name,
            url,
            headers,
            config,
            handler,
            &http,
            HttpAuth::Anonymous,
        ),
    )
    .await
    .map_err(|_| SessionError::ProbeTimeout {
        server: name.to_string(),
        after: limit,
    })?;
    match opened {
        Ok(connected) => {
            let legacy_sse = connected.legacy_sse;
            let mut service = connected.service;
            let close = deadline
                .saturating_duration_since(Instant::now())
                .max(CLOSE_AT_LEAST);
            if !matches!(service.close_with_timeout(close).await, Ok(Some(_))) {
                tracing::debug!(server = %name, url = %redact_url(url), "the probe's session did not close in time");
            }
            Ok(Access::Open { legacy_sse })
        }
        Err(failure) => match classify(name, url, own_bearer, failure)? {
            // No challenge at all: a 2025-03-26 server's way of asking for a login, when it
            // publishes OAuth metadata.
            Access::Credentials {
                status,
                challenge: None,
                ..
            } if !own_authorization => Ok(match metadata::search(&http, url, deadline).await {
                metadata::Search::Found {
                    url: metadata_url,
                    issuer_mismatch,
                } => Access::Discovered {
                    status,
                    metadata_url: redact_url(&metadata_url),
                    issuer_mismatch: issuer_mismatch.map(|issuer| redact_url(&issuer)),
                },
                metadata::Search::NotFound => Access::Credentials {
                    status,
                    challenge: None,
                    metadata: Metadata::NotFound,
                },
                metadata::Search::Unfinished => Access::Credentials {
                    status,
                    challenge: None,
                    metadata: Metadata::Unfinished,
                },
            }),
            access => Ok(access),
        },
    }
}

/// What a failed handshake says about the server.
fn classify(
    server: &str,
    url: &str,
    own_bearer: bool,
    failure: HttpFailure,
) -> Result<Access, SessionError> {
    if let Some(e) = connect::http_error(&failure.error) {
        let challenge = match e {
            StreamableHttpError::AuthRequired(a) => Some(a.www_authenticate_header.clone()),
            StreamableHttpError::InsufficientScope(s) => Some(s.www_authenticate_header.clone()),
            _ => None,
        };
        if let Some(status @ (401 | 403)) = connect::http_status(e) {
            return Ok(match challenge {
                Some(challenge) if !own_bearer && asks_for_bearer(&challenge) => {
                    Access::Login { challenge }
                }
                challenge => Access::Credentials {
                    status,
                    challenge,
                    metadata: Metadata::NotSought,
                },
            });
        }
        if let StreamableHttpError::Client(e) = e
            && (e.is_connect() || e.is_timeout())
        {
            return Err(SessionError::Connect {
                server: server.to_string(),
                url: redact_url(url),
                detail: redact_urls_in(&connect::reqwest_detail(e)),
            });
        }
        if let Some(status) = connect::http_status(e) {
            // The status in words, without the body a session's message quotes (a whole web
            // page, often).
            let mut detail = match http::StatusCode::from_u16(status)
                .ok()
                .and_then(|s| s.canonical_reason())
            {
                Some(reason) => format!("HTTP {status} {reason}"),
                None => format!("HTTP {status}"),
            };
            if matches!(status, 404 | 405) {
                detail.push_str(connect::NOT_AN_ENDPOINT);
            }
            if let Some(why) = &failure.legacy_failed {
                detail.push_str(&format!("; tried as a legacy HTTP+SSE endpoint too: {why}"));
            }
            return Err(SessionError::Handshake {
                server: server.to_string(),
                detail: redact_urls_in(&detail),
                stderr_tail: Vec::new(),
            });
        }
    }
    // It answered, but not as an MCP server would: the same words a session uses, as a
    // handshake failure (a session calls an HTTP status a connect failure).
    Err(match failure.into_error(server, url) {
        SessionError::Connect { server, detail, .. } => SessionError::Handshake {
            server,
            detail,
            stderr_tail: Vec::new(),
        },
        other => other,
    })
}

/// Whether a `WWW-Authenticate` value holds a Bearer challenge (it may list several schemes,
/// `Basic realm="x", Bearer resource_metadata="..."`).
fn asks_for_bearer(challenge: &str) -> bool {
    challenge.split(',').any(|part| {
        part.split_whitespace()
            .next()
            .is_some_and(|scheme| scheme.eq_ignore_ascii_case("bearer"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bearer_challenge_is_found_among_others() {
        assert!(asks_for_bearer(
            r#"Bearer resource_metadata="http://x/.well-known/oauth-protected-resource""#
        ));
        assert!(asks_for_bearer(r#"Basic realm="x", bearer scope="a b""#));
        assert!(asks_for_bearer("Bearer"));
        assert!(!asks_for_bearer(r#"Basic realm="Bearer land""#));
        assert!(!asks_for_bearer(r#"Digest realm="x", nonce="Bearer""#));
        assert!(!asks_for_bearer(""));
    }
}
