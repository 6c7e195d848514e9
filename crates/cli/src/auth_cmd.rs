//! `switchboard auth login|logout|status`: OAuth for HTTP servers. `login` runs the
//! authorization-code flow with PKCE in the user's browser and catches the redirect on a
//! loopback port; tokens are stored in the user's data directory (0600) where every session
//! finds them, and sessions refresh them as they expire. `status` also asks each server, without
//! credentials, whether it needs a login at all (`switchboard_mcp::probe`).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context as _, bail};
use serde_json::json;
use switchboard_core::{ServerSpec, TransportSpec, redact_url};
use switchboard_host::{Config, ServerConfig};
use switchboard_mcp::auth::{self, LoginAgent, StoredLogin};
use switchboard_mcp::{Access, Metadata, OAuthOptions, ServerOAuth, SessionError, TokenStorage};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpListener;

use crate::output::{self, print_json, styled_table};
use crate::{Global, source};

/// How long `login` waits for the browser to come back.
const LOGIN_WAIT: Duration = Duration::from_secs(300);

/// How long `status` waits for each server's answer; all are asked at once.
const PROBE_LIMIT: Duration = Duration::from_secs(5);

/// Arguments of `switchboard auth`.
#[derive(clap::Args, Debug)]
pub struct AuthArgs {
    #[command(subcommand)]
    command: AuthCommand,
    /// Keep tokens in this directory instead of your user data directory.
    #[arg(long, global = true, value_name = "DIR", hide = true)]
    token_dir: Option<PathBuf>,
}

#[derive(clap::Subcommand, Debug)]
enum AuthCommand {
    /// Authorize switchboard for an HTTP server in your browser and store the tokens.
    ///
    /// SERVER is a configured server name or an http(s) URL. The authorization URL is opened
    /// in your browser (and printed); after you approve, the browser is sent back to a
    /// loopback port this command listens on. Example: switchboard auth login github
    Login {
        /// A configured HTTP server, or its URL.
        server: String,
        /// Only print the URL; do not try to open a browser.
        #[arg(long)]
        no_browser: bool,
    },
    /// Delete the stored tokens for a server.
    Logout {
        /// A configured HTTP server, or its URL.
        server: String,
    },
    /// Show what each HTTP server (or one) needs, and what is stored for it.
    ///
    /// Every server is asked at once, for at most 5 s, to answer MCP `initialize` without
    /// credentials (nothing is logged in or stored, and a session it opens is closed). PROBE
    /// says what it answered; --json's "needs" sums it up: "login" (an OAuth challenge, or,
    /// from a server that refused with no challenge at all, OAuth metadata at its origin where
    /// `auth login` finds it: run `switchboard auth login NAME`), "nothing" (it answered without
    /// a login; legacy SSE servers too), "credentials" (401 or 403 without an OAuth challenge or
    /// metadata: its entry needs the header the server expects, such as an API key), "unknown"
    /// (unreachable or not an MCP endpoint, with the reason in "probe"; also under --offline).
    /// STATE is what is stored: "logged in, 42 min left", "not logged in", or "no login needed"
    /// when nothing is and the server answered without one.
    ///
    /// Exits 0 whenever the config and the stored tokens could be read, whatever the servers
    /// need (script on --json: "needs" and "logged_in"); 2 on a usage or config error.
    #[command(after_help = "Examples:
  switchboard auth status
  switchboard auth status github --json
  switchboard auth status --offline")]
    Status {
        /// A configured HTTP server, or its URL (default: every HTTP server in the config).
        server: Option<String>,
        /// Do not contact the servers: show only what is stored (no PROBE column; "needs" is
        /// "unknown").
        #[arg(long)]
        offline: bool,
    },
}

/// Run the command.
pub async fn run(global: &Global, args: AuthArgs) -> anyhow::Result<ExitCode> {
    let mut options = OAuthOptions::default();
    if let Some(dir) = &args.token_dir {
        options.storage = TokenStorage::Dir(dir.clone());
    }
    match args.command {
        AuthCommand::Login { server, no_browser } => {
            let (name, url, own) = resolve(global, &server)?;
            // The server's own client (`[servers.NAME.oauth]`): its id, secret, scopes, and
            // the loopback port registered as its redirect URI.
            let options = options.for_server(&own);
            let mut agent = BrowserAgent::bind(!no_browser, own.redirect_port).await?;
            let outcome = auth::login(&url, &options, &mut agent).await?;
            if global.json {
                print_json(&json!({
                    "server": name, "url": redact_url(&url), "scopes": outcome.scopes,
                    "saved_to": outcome.saved_to,
                }));
            } else {
                println!("authorized {name} ({})", redact_url(&url));
                if !outcome.scopes.is_empty() {
                    println!("scopes: {}", outcome.scopes.join(" "));
                }
                if let Some(path) = outcome.saved_to {
                    println!("tokens saved to {}", path.display());
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        AuthCommand::Logout { server } => {
            let (name, url, _) = resolve(global, &server)?;
            let had = auth::logout(&url, &options).await?;
            if global.json {
                print_json(&json!({"server": name, "url": redact_url(&url), "removed": had}));
            } else if had {
                println!("logged out of {name}: stored tokens deleted");
            } else {
                println!("nothing stored for {name}");
            }
            Ok(ExitCode::SUCCESS)
        }
        AuthCommand::Status { server, offline } => status(global, &options, server, offline).await,
    }
}

/// A configured server name (or a URL) to `(name, url, its own OAuth settings)`.
fn resolve(global: &Global, server: &str) -> anyhow::Result<(String, String, ServerOAuth)> {
    if is_url(server) {
        // Named by its URL: shown redacted, used as given.
        return Ok((
            redact_url(server),
            server.to_string(),
            ServerOAuth::default(),
        ));
    }
    let config = source::load_config(global)?;
    let (entry, url) = http_entry(&config, server)?;
    Ok((
        server.to_string(),
        url.to_string(),
        entry.oauth.clone().unwrap_or_default(),
    ))
}

fn is_url(server: &str) -> bool {
    server.starts_with("http://") || server.starts_with("https://")
}

/// The configured HTTP server named `server`, and its URL.
fn http_entry<'c>(config: &'c Config, server: &str) -> anyhow::Result<(&'c ServerConfig, &'c str)> {
    let Some(entry) = config.servers.iter().find(|s| s.name() == server) else {
        let names: Vec<&str> = config.server_names().collect();
        bail!(
            "no server {server:?} in the config; servers: {}",
            if names.is_empty() {
                "none".to_string()
            } else {
                names.join(", ")
            }
        );
    };
    match &entry.spec.transport {
        TransportSpec::Http { url, .. } => Ok((entry, url)),
        TransportSpec::Stdio { .. } => {
            bail!("server {server:?} runs over stdio; OAuth applies to HTTP servers only")
        }
    }
}

/// One server `status` reports on.
struct Target {
    name: String,
    url: String,
    /// What the probe connects with: the entry (its headers), or the bare URL.
    spec: ServerSpec,
    /// The entry says `type = "sse"`: the legacy HTTP+SSE transport, which has no OAuth.
    legacy: bool,
    /// The entry's client gets its token with its own credentials: no person logs in.
    client_credentials: bool,
}

impl Target {
    fn of(entry: &ServerConfig, url: &str) -> Self {
        Self {
            name: entry.name().to_string(),
            url: url.to_string(),
            spec: entry.spec.clone(),
            legacy: entry.legacy_sse,
            client_credentials: entry
                .oauth
                .as_ref()
                .is_some_and(|o| o.grant == switchboard_mcp::Grant::ClientCredentials),
        }
    }
}

/// What a server needs, summed up from a probe: the `needs` JSON value.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Needs {
    Login,
    Nothing,
    Credentials,
    Unknown,
}

impl Needs {
    fn as_str(self) -> &'static str {
        match self {
            Needs::Login => "login",
            Needs::Nothing => "nothing",
            Needs::Credentials => "credentials",
            Needs::Unknown => "unknown",
        }
    }
}

/// What the probe found, in words (the PROBE column and the "probe" key).
struct Found {
    needs: Needs,
    /// The server answered over the legacy HTTP+SSE transport.
    legacy: bool,
    text: String,
}

impl Found {
    /// `own_header`: the entry sets an `Authorization` header of its own.
    fn new(probed: Result<Access, SessionError>, own_header: bool) -> Self {
        let (needs, legacy, text) = match probed {
            Ok(Access::Open { legacy_sse: true }) => {
                (Needs::Nothing, true, "legacy SSE: no OAuth".to_string())
            }
            Ok(Access::Open { .. }) => (Needs::Nothing, false, "no login needed".to_string()),
            Ok(Access::Login { .. }) => (Needs::Login, false, "login required".to_string()),
            Ok(Access::Discovered {
                metadata_url,
                issuer_mismatch,
                ..
            }) => {
                // The document's path: it is on the server's own origin.
                let at = reqwest::Url::parse(&metadata_url)
                    .map(|u| u.path().to_string())
                    .unwrap_or(metadata_url);
                let mut text = format!(
                    "login required: OAuth, discovered from metadata at {at} (no challenge)"
                );
                if let Some(issuer) = issuer_mismatch {
                    // The server's words: one line, and not a page of them.
                    let issuer: String = issuer.chars().filter(|c| !c.is_control()).collect();
                    let issuer = switchboard_core::clip(&issuer, FAILURE_CHARS);
                    text.push_str(&format!(
                        "; its issuer {issuer} does not match that URL, so `auth login` will refuse it"
                    ));
                }
                (Needs::Login, false, text)
            }
            Ok(Access::Credentials {
                status,
                challenge,
                metadata,
            }) => {
                let why = match (challenge, metadata) {
                    _ if own_header => "the entry's Authorization header was refused".to_string(),
                    (Some(c), _) => format!(
                        "it asks for {} authentication; give the entry that header",
                        c.split_whitespace().next().unwrap_or("other")
                    ),
                    (None, Metadata::NotFound) => "no OAuth challenge or metadata; give the entry \
                         the header it expects (a server of the 2025-03-26 auth spec may still \
                         take `switchboard auth login`, which then uses /authorize and /token at \
                         its origin)"
                        .to_string(),
                    (None, Metadata::Unfinished) => "no OAuth challenge, and its OAuth metadata \
                         could not be read in time; give the entry the header it expects"
                        .to_string(),
                    (None, _) => {
                        "no OAuth challenge; give the entry the header it expects".to_string()
                    }
                };
                (
                    Needs::Credentials,
                    false,
                    format!("credentials: HTTP {status}, {why}"),
                )
            }
            Ok(_) => (
                Needs::Unknown,
                false,
                "error: an answer this version does not know".to_string(),
            ),
            Err(e) => (Needs::Unknown, false, failure_text(&e)),
        };
        Self {
            needs,
            legacy,
            text,
        }
    }
}

/// Why a probe learned nothing, short: "unreachable: ..." or "error: ...", the first clause.
fn failure_text(e: &SessionError) -> String {
    let (kind, detail) = match e {
        SessionError::Connect { detail, .. } => ("unreachable", detail.clone()),
        SessionError::ProbeTimeout { .. } => ("unreachable", e.to_string()),
        SessionError::Handshake { detail, .. } => ("error", detail.clone()),
        other => ("error", other.to_string()),
    };
    // One line: the hints after the first `; ` (is this the MCP endpoint? ...) and whatever a
    // server put in its answer do not fit a table row.
    let first = detail
        .lines()
        .next()
        .unwrap_or_default()
        .split("; ")
        .next()
        .unwrap_or_default();
    let text = format!("{kind}: {first}");
    switchboard_core::clip(&text, FAILURE_CHARS).into_owned()
}

/// The longest failure shown in a PROBE cell, in characters.
const FAILURE_CHARS: usize = 100;

async fn status(
    global: &Global,
    options: &OAuthOptions,
    server: Option<String>,
    offline: bool,
) -> anyhow::Result<ExitCode> {
    let targets: Vec<Target> = match server {
        // Named by its URL: shown redacted, used as given.
        Some(s) if is_url(&s) => vec![Target {
            name: redact_url(&s),
            spec: ServerSpec::http(redact_url(&s), s.clone()),
            url: s,
            legacy: false,
            client_credentials: false,
        }],
        Some(s) => {
            let config = source::load_config(global)?;
            let (entry, url) = http_entry(&config, &s)?;
            vec![Target::of(entry, url)]
        }
        None => source::load_config(global)?
            .servers
            .iter()
            .filter_map(|s| match &s.spec.transport {
                TransportSpec::Http { url, .. } => Some(Target::of(s, url)),
                TransportSpec::Stdio { .. } => None,
            })
            .collect(),
    };
    let found: Vec<Option<Found>> = if offline || targets.is_empty() {
        targets.iter().map(|_| None).collect()
    } else {
        let pb = output::spinner(format!("asking {} server(s) what they need", targets.len()));
        let probes = targets.iter().map(|t| async {
            Found::new(
                switchboard_mcp::probe(&t.spec, PROBE_LIMIT).await,
                own_authorization(&t.spec),
            )
        });
        let found = futures::future::join_all(probes).await;
        pb.finish_and_clear();
        found.into_iter().map(Some).collect()
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let mut rows = Vec::new();
    let mut items = Vec::new();
    for (target, found) in targets.into_iter().zip(found) {
        let Target {
            name, url, legacy, ..
        } = target;
        let needs = found.as_ref().map_or(Needs::Unknown, |f| f.needs);
        let probe = found
            .as_ref()
            .map_or("not probed (--offline)", |f| f.text.as_str());
        let shown = redact_url(&url);
        // What the server answered decides; the entry's `type = "sse"` only when it did not.
        let legacy = match &found {
            Some(f) if f.needs != Needs::Unknown => f.legacy,
            _ => legacy,
        };
        if legacy {
            // The legacy transport sends the configured headers and nothing else: no OAuth is
            // ever tried, so "not logged in" would send the user to `auth login` for nothing.
            items.push(json!({
                "server": name, "url": shown, "transport": "sse", "oauth": false,
                "logged_in": false, "state": "legacy SSE: no OAuth",
                "needs": needs.as_str(), "probe": probe,
            }));
            let mut row = vec![name, shown, "legacy SSE: no OAuth".to_string()];
            if found.is_some() {
                row.push(probe.to_string());
            }
            row.push(String::new());
            rows.push(row);
            continue;
        }
        let stored = auth::stored_login(&url, options).await?;
        let logged_in = stored.as_ref().is_some_and(|s| s.has_token);
        let expires = stored.as_ref().and_then(|s| {
            let left = (s.received_at? + s.expires_in?) as i64 - now as i64;
            Some(left)
        });
        let state = match (&stored, needs) {
            (Some(s), _) if s.has_token => stored_state(s, expires),
            (_, Needs::Nothing) => "no login needed".to_string(),
            _ if target.client_credentials => {
                "client credentials: gets its token when asked, no login".to_string()
            }
            _ => "not logged in".to_string(),
        };
        // The stored tokens of a server that answers without them are not needed.
        let probe = if logged_in && needs == Needs::Nothing {
            format!("{probe} (it answers without the stored tokens)")
        } else {
            probe.to_string()
        };
        // Without a probe, OAuth is assumed to apply, as sessions assume it.
        let oauth = matches!(needs, Needs::Login | Needs::Unknown);
        items.push(json!({
            "server": name, "url": shown, "transport": "http", "oauth": oauth,
            "logged_in": logged_in,
            "client_id": stored.as_ref().map(|s| &s.client_id),
            "scopes": stored.as_ref().map(|s| &s.scopes),
            "can_refresh": stored.as_ref().is_some_and(|s| s.can_refresh),
            "expires_in_s": expires,
            "path": stored.as_ref().and_then(|s| s.path.clone()),
            "state": state,
            "needs": needs.as_str(), "probe": probe,
        }));
        let scopes = stored.map(|s| s.scopes.join(" ")).unwrap_or_default();
        let mut row = vec![name, shown, state];
        if found.is_some() {
            row.push(probe);
        }
        row.push(scopes);
        rows.push(row);
    }
    if global.json {
        print_json(&json!({ "servers": items }));
    } else if rows.is_empty() {
        println!("no HTTP servers in the config");
    } else {
        let header: &[&str] = if offline {
            &["SERVER", "URL", "STATE", "SCOPES"]
        } else {
            &["SERVER", "URL", "STATE", "PROBE", "SCOPES"]
        };
        print!("{}", styled_table(header, &rows, &|_, _, c| c.to_string()));
    }
    Ok(ExitCode::SUCCESS)
}

/// Whether an entry sets an `Authorization` header of its own.
fn own_authorization(spec: &ServerSpec) -> bool {
    match &spec.transport {
        TransportSpec::Http { headers, .. } => headers
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("authorization")),
        TransportSpec::Stdio { .. } => false,
    }
}

/// What is stored, in words: "logged in, 42 min left", "expired (will refresh)", ...
fn stored_state(stored: &StoredLogin, expires: Option<i64>) -> String {
    match expires {
        Some(left) if left <= 0 && stored.can_refresh => "expired (will refresh)".to_string(),
        Some(left) if left <= 0 => "expired: log in again".to_string(),
        Some(left) => format!("logged in, {} min left", left / 60),
        None => "logged in".to_string(),
    }
}

/// The user agent for `login`: the person's browser, and a loopback listener for the redirect.
struct BrowserAgent {
    listener: TcpListener,
    port: u16,
    open: bool,
}

impl BrowserAgent {
    /// Listen on `port` (the one registered for the client) or any free loopback port.
    async fn bind(open: bool, port: Option<u16>) -> anyhow::Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", port.unwrap_or(0)))
            .await
            .with_context(|| match port {
                Some(p) => format!(
                    "cannot listen on 127.0.0.1:{p} for the OAuth redirect (the server's oauth redirect_port); is another login running?"
                ),
                None => "cannot listen on a loopback port for the OAuth redirect".to_string(),
            })?;
        let port = listener.local_addr()?.port();
        Ok(Self {
            listener,
            port,
            open,
        })
    }

    /// Wait for the browser's GET /callback?..., answer it, return the full redirect URL.
    async fn catch_redirect(&self) -> Result<String, String> {
        loop {
            let (mut socket, _) = self
                .listener
                .accept()
                .await
                .map_err(|e| format!("accepting the redirect failed: {e}"))?;
            let request = request_head(&mut socket).await;
            let target = request
                .lines()
                .next()
                .and_then(|l| l.strip_prefix("GET "))
                .and_then(|l| l.split(' ').next())
                .unwrap_or("");
            if !target.starts_with("/callback") {
                let _ = socket
                    .write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n")
                    .await;
                continue;
            }
            let body = "<html><body><h3>switchboard is authorized.</h3>\
                        <p>You can close this tab.</p></body></html>";
            let reply = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8\r\n\
                 content-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = socket.write_all(reply.as_bytes()).await;
            return Ok(format!("http://127.0.0.1:{}{target}", self.port));
        }
    }
}

/// Read a request until its request line is complete (a client may send it in pieces), at most
/// 8 KiB, for at most 10 seconds.
async fn request_head(socket: &mut tokio::net::TcpStream) -> String {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    let read = async {
        while buf.len() < 8192 && !buf.windows(2).any(|w| w == b"\r\n") {
            match socket.read(&mut chunk).await {
                Ok(0) | Err(_) => break,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
    };
    let _ = tokio::time::timeout(std::time::Duration::from_secs(10), read).await;
    String::from_utf8_lossy(&buf).into_owned()
}

impl LoginAgent for BrowserAgent {
    fn redirect_uri(&self) -> String {
        ServerOAuth::redirect_uri(self.port)
    }

    async fn authorize(&mut self, auth_url: &str) -> Result<String, String> {
        eprintln!("Open this URL to authorize switchboard:\n\n  {auth_url}\n");
        if self.open {
            let opener = if cfg!(target_os = "macos") {
                "open"
            } else {
                "xdg-open"
            };
            // A missing opener is fine: the URL is printed above.
            let _ = tokio::process::Command::new(opener)
                .arg(auth_url)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn();
        }
        eprintln!(
            "waiting for the browser to come back to {} ...",
            self.redirect_uri()
        );
        tokio::time::timeout(LOGIN_WAIT, self.catch_redirect())
            .await
            .map_err(|_| format!("no redirect within {} s", LOGIN_WAIT.as_secs()))?
    }
}
