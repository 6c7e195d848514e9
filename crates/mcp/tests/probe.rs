//! `probe` against hand-written HTTP servers, so each answer a server may give is certain: an
//! open Streamable HTTP server (its session is DELETEd after the probe), OAuth challenges,
//! refusals without OAuth, a dead port, a server that never answers, and a web page. The
//! servers record every request, to show a probe sends no credentials and never starts an
//! authorization, even when sessions are configured to authorize by themselves.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use switchboard_core::{Secret, ServerSpec, TransportSpec};
use switchboard_mcp::{
    Access, AuthMode, ClientOptions, OAuthOptions, SessionError, TokenStorage, probe,
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

/// An HTTP/1.1 server on a free port that answers each request (one per connection) with
/// what `answer` returns: the status line's rest, extra header lines, and the body.
fn server(answer: fn(&Seen) -> (&'static str, String, String)) -> (u16, Log) {
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
    let tokens = tempfile::tempdir().unwrap();
    switchboard_mcp::configure(ClientOptions {
        oauth: OAuthOptions {
            mode: AuthMode::Headless,
            storage: TokenStorage::Dir(tokens.path().to_path_buf()),
            ..OAuthOptions::default()
        },
        ..ClientOptions::default()
    });
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
            challenge: None
        }
    );
    assert_eq!(
        probe(&spec("basic", basic), LIMIT).await.unwrap(),
        Access::Credentials {
            status: 401,
            challenge: Some("Basic realm=\"mcp\"".into())
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
                challenge: Some(_)
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
