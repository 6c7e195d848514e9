//! `probe` against hand-written HTTP servers, so each answer a server may give is certain: an
//! open Streamable HTTP server (its session is DELETEd after the probe), OAuth challenges,
//! refusals without OAuth, a dead port, a server that never answers, and a web page. The
//! servers record every request, to show a probe sends no credentials and never starts an
//! authorization, even when sessions are configured to authorize by themselves. Servers of the
//! MCP 2025-03-26 authorization spec refuse with a bare 401; for them the probe reads the OAuth
//! metadata at the origin, and only that.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use switchboard_core::{Secret, ServerSpec, TransportSpec};
use switchboard_mcp::{
    Access, AuthMode, ClientOptions, Metadata, OAuthOptions, SessionError, TokenStorage, probe,
};

/// One request a test server received.
#[derive(Clone, Debug)]
struct Seen {
    /// `POST /mcp`, `DELETE /mcp`, ...
    line: String,
    /// Header names, lower-cased, with their values.
    headers: Vec<(String, String)>,
    body: Value,
}

impl Seen {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

type Log = Arc<Mutex<Vec<Seen>>>;

/// How a test server answers a request: the status line's rest, extra header lines, the body.
type Answer = fn(&Seen) -> (&'static str, String, String);

/// An HTTP/1.1 server on a free port that answers each request (one per connection) with
/// what `answer` returns: the status line's rest, extra header lines, and the body.
fn server(answer: Answer) -> (u16, Log) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let log: Log = Arc::default();
    let seen = log.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let seen = seen.clone();
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream);
                let mut first = String::new();
                let _ = reader.read_line(&mut first);
                let mut headers = Vec::new();
                let mut line = String::new();
                while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" {
                    if let Some((name, value)) = line.split_once(':') {
                        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
                    }
                    line.clear();
                }
                let length = headers
                    .iter()
                    .find(|(k, _)| k == "content-length")
                    .and_then(|(_, v)| v.parse().ok())
                    .unwrap_or(0);
                let mut body = vec![0; length];
                let _ = reader.read_exact(&mut body);
                let request = Seen {
                    line: first
                        .split(' ')
                        .take(2)
                        .collect::<Vec<_>>()
                        .join(" ")
                        .split('?')
                        .next()
                        .unwrap_or("")
                        .to_string(),
                    headers,
                    body: serde_json::from_slice(&body).unwrap_or(Value::Null),
                };
                let (status, extra, body) = answer(&request);
                seen.lock().unwrap().push(request);
                let _ = write!(
                    reader.get_mut(),
                    "HTTP/1.1 {status}\r\n{extra}content-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
            });
        }
    });
    (port, log)
}

/// A Streamable HTTP server that needs no login: `initialize` opens session `s-1`, other
/// POSTs are accepted, the standalone GET stream is not offered, DELETE ends the session.
fn open_server(r: &Seen) -> (&'static str, String, String) {
    match r.line.as_str() {
        "POST /mcp" if r.body["method"] == "initialize" => (
            "200 OK",
            "content-type: application/json\r\nmcp-session-id: s-1\r\n".into(),
            json!({"jsonrpc": "2.0", "id": r.body["id"], "result": {
                "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                "serverInfo": {"name": "open", "version": "0"}}})
            .to_string(),
        ),
        "POST /mcp" => ("202 Accepted", String::new(), String::new()),
        "DELETE /mcp" => ("200 OK", String::new(), String::new()),
        _ => ("405 Method Not Allowed", String::new(), String::new()),
    }
}

fn spec(name: &str, port: u16) -> ServerSpec {
    ServerSpec::http(name, format!("http://127.0.0.1:{port}/mcp"))
}

const LIMIT: Duration = Duration::from_secs(5);

#[tokio::test]
async fn an_open_server_is_open_and_its_session_is_deleted_after_the_probe() {
    let (port, log) = server(open_server);
    let found = probe(&spec("open", port), LIMIT).await;
    assert_eq!(found.unwrap(), Access::Open { legacy_sse: false });
    let log = log.lock().unwrap().clone();
    let lines: Vec<&str> = log.iter().map(|r| r.line.as_str()).collect();
    let delete = log
        .iter()
        .find(|r| r.line == "DELETE /mcp")
        .unwrap_or_else(|| panic!("the session was not deleted: {lines:?}"));
    assert_eq!(delete.header("mcp-session-id"), Some("s-1"), "{delete:?}");
    assert_eq!(lines.first(), Some(&"POST /mcp"), "{lines:?}");
    assert!(
        log.iter().all(|r| r.header("authorization").is_none()),
        "{log:?}"
    );
}

#[tokio::test]
async fn challenges_and_refusals_say_what_the_server_needs_and_nothing_is_authorized() {
    // Sessions of this process would authorize by themselves, and keep tokens in `tokens`.
    let tokens = headless_sessions();
    let (bearer, bearer_log) = server(|_| {
        (
            "401 Unauthorized",
            "www-authenticate: Bearer resource_metadata=\"http://127.0.0.1:1/.well-known/oauth-protected-resource\"\r\n".into(),
            String::new(),
        )
    });
    let (scope, _) = server(|_| {
        (
            "403 Forbidden",
            "www-authenticate: Bearer error=\"insufficient_scope\", scope=\"files:read\"\r\n"
                .into(),
            String::new(),
        )
    });
    let (keyed, _) = server(|_| {
        (
            "401 Unauthorized",
            "content-type: application/json\r\n".into(),
            r#"{"error":"missing api key"}"#.into(),
        )
    });
    let (basic, _) = server(|_| {
        (
            "401 Unauthorized",
            "www-authenticate: Basic realm=\"mcp\"\r\n".into(),
            String::new(),
        )
    });

    let found = probe(&spec("bearer", bearer), LIMIT).await.unwrap();
    assert!(
        matches!(&found, Access::Login { challenge } if challenge.starts_with("Bearer resource_metadata=")),
        "{found:?}"
    );
    // One POST: no metadata discovery, no registration, no authorization, nothing stored.
    let lines: Vec<String> = bearer_log
        .lock()
        .unwrap()
        .iter()
        .map(|r| r.line.clone())
        .collect();
    assert_eq!(lines, ["POST /mcp"]);
    assert_eq!(std::fs::read_dir(tokens.path()).unwrap().count(), 0);

    let found = probe(&spec("scope", scope), LIMIT).await.unwrap();
    assert!(matches!(found, Access::Login { .. }), "{found:?}");
    assert_eq!(
        probe(&spec("keyed", keyed), LIMIT).await.unwrap(),
        Access::Credentials {
            status: 401,
            challenge: None,
            metadata: Metadata::NotFound,
        }
    );
    assert_eq!(
        probe(&spec("basic", basic), LIMIT).await.unwrap(),
        Access::Credentials {
            status: 401,
            challenge: Some("Basic realm=\"mcp\"".into()),
            metadata: Metadata::NotSought,
        }
    );
    // An entry with its own bearer token never logs in: a refusal of it is a credentials matter.
    let mut own = spec("own", bearer);
    if let TransportSpec::Http { headers, .. } = &mut own.transport {
        headers.push(("Authorization".into(), Secret::new("Bearer stale")));
    }
    let found = probe(&own, LIMIT).await.unwrap();
    assert!(
        matches!(
            found,
            Access::Credentials {
                status: 401,
                challenge: Some(_),
                metadata: Metadata::NotSought,
            }
        ),
        "{found:?}"
    );
    let sent = bearer_log.lock().unwrap().last().cloned().unwrap();
    assert_eq!(sent.header("authorization"), Some("Bearer stale"));
}

#[tokio::test]
async fn a_dead_port_a_silent_server_and_a_web_page_are_told_apart() {
    let closed = {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let err = probe(&spec("gone", closed), LIMIT).await.unwrap_err();
    assert!(
        matches!(&err, SessionError::Connect { detail, .. } if detail.starts_with("cannot connect")),
        "{err:?}"
    );

    // Accepts the connection and never answers.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let started = Instant::now();
    let err = probe(&spec("silent", port), Duration::from_millis(500))
        .await
        .unwrap_err();
    assert!(
        matches!(err, SessionError::ProbeTimeout { ref server, after } if server == "silent" && after == Duration::from_millis(500)),
        "{err:?}"
    );
    assert_eq!(err.to_string(), "no answer within 500 ms");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    drop(silent);

    let (page, _) = server(|_| {
        (
            "200 OK",
            "content-type: text/html\r\n".into(),
            "<html>sign in</html>".into(),
        )
    });
    let err = probe(&spec("page", page), LIMIT).await.unwrap_err();
    assert!(
        matches!(&err, SessionError::Handshake { detail, .. } if detail.contains("text/html")),
        "{err:?}"
    );
    let (broken, _) = server(|_| ("500 Internal Server Error", String::new(), String::new()));
    let err = probe(&spec("broken", broken), LIMIT).await.unwrap_err();
    assert!(
        matches!(&err, SessionError::Handshake { detail, .. } if detail.contains("500")),
        "{err:?}"
    );

    let err = probe(&ServerSpec::stdio("local", "true", vec![]), LIMIT)
        .await
        .unwrap_err();
    assert!(matches!(err, SessionError::Config { .. }), "{err:?}");
}

/// The `http://host:port` a request was sent to.
fn origin(r: &Seen) -> String {
    format!("http://{}", r.header("host").unwrap_or("?"))
}

/// A bare 401 (no `WWW-Authenticate`) to every POST, 404 to every other request except the
/// well-known path `path`, which answers 200 with `body(request)`.
fn bare_401(
    r: &Seen,
    path: &str,
    body: impl FnOnce(&Seen) -> String,
) -> (&'static str, String, String) {
    if r.line.starts_with("POST ") {
        return (
            "401 Unauthorized",
            "content-type: application/json\r\n".into(),
            r#"{"error":"unauthorized"}"#.into(),
        );
    }
    if r.line == format!("GET {path}") {
        return (
            "200 OK",
            "content-type: application/json\r\n".into(),
            body(r),
        );
    }
    ("404 Not Found", String::new(), "not here".into())
}

fn as_metadata(r: &Seen) -> String {
    let o = origin(r);
    json!({"issuer": o, "authorization_endpoint": format!("{o}/authorize"),
           "token_endpoint": format!("{o}/token"), "registration_endpoint": format!("{o}/register"),
           "response_types_supported": ["code"], "code_challenge_methods_supported": ["S256"]})
    .to_string()
}

/// Let this process's sessions authorize by themselves (as they would if the probe leaked a
/// login), keeping tokens in the returned folder, which must stay empty.
fn headless_sessions() -> tempfile::TempDir {
    let tokens = tempfile::tempdir().unwrap();
    switchboard_mcp::configure(ClientOptions {
        oauth: OAuthOptions {
            mode: AuthMode::Headless,
            storage: TokenStorage::Dir(tokens.path().to_path_buf()),
            ..OAuthOptions::default()
        },
        ..ClientOptions::default()
    });
    tokens
}

/// The request lines a server saw, in order.
fn lines(log: &Log) -> Vec<String> {
    log.lock().unwrap().iter().map(|r| r.line.clone()).collect()
}

#[tokio::test]
async fn a_bare_401_with_oauth_metadata_at_the_origin_is_a_login_and_only_metadata_is_read() {
    let tokens = headless_sessions();
    // The 2025-03-26 way: authorization server metadata at the origin's root well-known path.
    let (root, root_log) =
        server(|r| bare_401(r, "/.well-known/oauth-authorization-server", as_metadata));
    let found = probe(&spec("root", root), LIMIT).await.unwrap();
    assert_eq!(
        found,
        Access::Discovered {
            status: 401,
            metadata_url: format!("http://127.0.0.1:{root}/.well-known/oauth-authorization-server"),
            issuer_mismatch: None,
        }
    );
    // One POST and GETs of the well-known places (rmcp's seven); no registration, no
    // authorization, no token request, no credentials, nothing stored.
    let seen = lines(&root_log);
    assert_eq!(
        seen.iter().filter(|l| l.starts_with("POST ")).count(),
        1,
        "{seen:?}"
    );
    assert!(
        seen.iter()
            .filter(|l| !l.starts_with("POST "))
            .all(|l| l.starts_with("GET ") && l.contains("/.well-known/")),
        "{seen:?}"
    );
    assert_eq!(seen.len(), 1 + 7, "{seen:?}");
    assert!(
        root_log
            .lock()
            .unwrap()
            .iter()
            .all(|r| r.header("authorization").is_none()),
        "{seen:?}"
    );
    assert_eq!(std::fs::read_dir(tokens.path()).unwrap().count(), 0);

    // RFC 9728 protected resource metadata at the path-suffixed form, with no challenge.
    let (prm, _) = server(|r| {
        bare_401(r, "/.well-known/oauth-protected-resource/mcp", |r| {
            json!({"resource": format!("{}/mcp", origin(r)),
                   "authorization_servers": ["https://auth.example"]})
            .to_string()
        })
    });
    let found = probe(&spec("prm", prm), LIMIT).await.unwrap();
    assert!(
        matches!(&found, Access::Discovered { status: 401, metadata_url, issuer_mismatch: None }
            if metadata_url.ends_with("/.well-known/oauth-protected-resource/mcp")),
        "{found:?}"
    );

    // Metadata whose issuer is not its URL's (the conformance harness 0.1.16's 2025-03-26 mock):
    // a login all the same, with the issuer `auth login` will refuse.
    let (moved, _) = server(|r| {
        bare_401(r, "/.well-known/oauth-authorization-server", |r| {
            let o = origin(r);
            json!({"issuer": format!("{o}/oauth"), "authorization_endpoint": format!("{o}/oauth/authorize"),
                   "token_endpoint": format!("{o}/oauth/token")})
            .to_string()
        })
    });
    let found = probe(&spec("moved", moved), LIMIT).await.unwrap();
    assert!(
        matches!(&found, Access::Discovered { issuer_mismatch: Some(i), .. } if i.ends_with("/oauth")),
        "{found:?}"
    );

    // A 403 without a challenge is read the same way.
    let (forbidden, _) = server(|r| {
        if r.line.starts_with("POST ") {
            return ("403 Forbidden", String::new(), String::new());
        }
        bare_401(r, "/.well-known/oauth-authorization-server", as_metadata)
    });
    let found = probe(&spec("forbidden", forbidden), LIMIT).await.unwrap();
    assert!(
        matches!(found, Access::Discovered { status: 403, .. }),
        "{found:?}"
    );
}

#[tokio::test]
async fn a_bare_401_without_usable_metadata_stays_credentials() {
    let credentials = |status| Access::Credentials {
        status,
        challenge: None,
        metadata: Metadata::NotFound,
    };
    // Every well-known place 404s.
    let (none, none_log) = server(|r| bare_401(r, "/nowhere", |_| String::new()));
    assert_eq!(
        probe(&spec("none", none), LIMIT).await.unwrap(),
        credentials(401)
    );
    assert_eq!(lines(&none_log).len(), 1 + 7, "{:?}", lines(&none_log));

    // 200s that are not metadata: not JSON, a web page, fields missing or of the wrong type,
    // a resource document for another resource, JSON nested past serde_json's limit.
    let answers: [Answer; 7] = [
        |r| {
            bare_401(r, "/.well-known/oauth-authorization-server", |_| {
                "issuer: x".into()
            })
        },
        |r| {
            bare_401(r, "/.well-known/oauth-authorization-server", |_| {
                "<html>sign in</html>".into()
            })
        },
        |r| {
            bare_401(r, "/.well-known/oauth-authorization-server", |r| {
                json!({"issuer": origin(r)}).to_string()
            })
        },
        |r| {
            bare_401(r, "/.well-known/oauth-authorization-server", |r| {
                json!({"issuer": [origin(r)], "authorization_endpoint": 1, "token_endpoint": {}})
                    .to_string()
            })
        },
        |r| {
            bare_401(r, "/.well-known/oauth-protected-resource", |_| {
                json!({"resource": "http://elsewhere.example/mcp",
                       "authorization_servers": ["https://auth.example"]})
                .to_string()
            })
        },
        |r| {
            bare_401(r, "/.well-known/oauth-protected-resource/mcp", |r| {
                json!({"resource": format!("{}/mcp", origin(r)), "authorization_servers": "x"})
                    .to_string()
            })
        },
        |r| {
            bare_401(r, "/.well-known/oauth-authorization-server", |_| {
                "[".repeat(100_000)
            })
        },
    ];
    for (i, answer) in answers.into_iter().enumerate() {
        let (port, _) = server(answer);
        assert_eq!(
            probe(&spec("odd", port), LIMIT).await.unwrap(),
            credentials(401),
            "answer {i}"
        );
    }

    // A document over the 1 MiB cap is not read.
    let (huge, _) = server(|r| {
        bare_401(r, "/.well-known/oauth-authorization-server", |r| {
            let mut doc: Value = serde_json::from_str(&as_metadata(r)).unwrap();
            doc["padding"] = json!("x".repeat(2 << 20));
            doc.to_string()
        })
    });
    assert_eq!(
        probe(&spec("huge", huge), LIMIT).await.unwrap(),
        credentials(401)
    );
}

#[tokio::test]
async fn the_entrys_own_authorization_header_is_refused_without_a_metadata_search() {
    let (keyed, log) =
        server(|r| bare_401(r, "/.well-known/oauth-authorization-server", as_metadata));
    for value in ["Bearer stale", "Basic dXNlcjpwYXNz"] {
        let mut own = spec("own", keyed);
        if let TransportSpec::Http { headers, .. } = &mut own.transport {
            headers.push(("Authorization".into(), Secret::new(value)));
        }
        assert_eq!(
            probe(&own, LIMIT).await.unwrap(),
            Access::Credentials {
                status: 401,
                challenge: None,
                metadata: Metadata::NotSought,
            },
            "{value}"
        );
    }
    // The POSTs only, each with the entry's header: no metadata was looked for.
    let log = log.lock().unwrap().clone();
    assert_eq!(log.len(), 2, "{log:?}");
    assert!(
        log.iter()
            .all(|r| r.line == "POST /mcp" && r.header("authorization").is_some())
    );
}

#[tokio::test]
async fn metadata_that_does_not_answer_in_time_is_unfinished_within_the_limit() {
    let (slow, _) = server(|r| {
        if r.line.starts_with("GET ") {
            std::thread::sleep(Duration::from_secs(10));
        }
        bare_401(r, "/.well-known/oauth-authorization-server", as_metadata)
    });
    let started = Instant::now();
    let found = probe(&spec("slow", slow), Duration::from_millis(800))
        .await
        .unwrap();
    assert_eq!(
        found,
        Access::Credentials {
            status: 401,
            challenge: None,
            metadata: Metadata::Unfinished,
        }
    );
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
}
