//! `switchboard auth login|logout|status`: OAuth for HTTP servers. `login` runs the
//! authorization-code flow with PKCE in the user's browser and catches the redirect on a
//! loopback port; tokens are stored in the user's data directory (0600) where every session
//! finds them, and sessions refresh them as they expire.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context as _, bail};
use serde_json::json;
use switchboard_core::{TransportSpec, redact_url};
use switchboard_mcp::auth::{self, LoginAgent};
use switchboard_mcp::{OAuthOptions, ServerOAuth, TokenStorage};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpListener;

use crate::output::{print_json, styled_table};
use crate::{Global, source};

/// How long `login` waits for the browser to come back.
const LOGIN_WAIT: Duration = Duration::from_secs(300);

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
    /// Show what is stored for each HTTP server (or one): client, scopes, expiry.
    Status {
        /// A configured HTTP server, or its URL (default: every HTTP server in the config).
        server: Option<String>,
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
        AuthCommand::Status { server } => status(global, &options, server).await,
    }
}

/// A configured server name (or a URL) to `(name, url, its own OAuth settings)`.
fn resolve(global: &Global, server: &str) -> anyhow::Result<(String, String, ServerOAuth)> {
    if server.starts_with("http://") || server.starts_with("https://") {
        // Named by its URL: shown redacted, used as given.
        return Ok((
            redact_url(server),
            server.to_string(),
            ServerOAuth::default(),
        ));
    }
    let config = source::load_config(global)?;
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
        TransportSpec::Http { url, .. } => Ok((
            server.to_string(),
            url.clone(),
            entry.oauth.clone().unwrap_or_default(),
        )),
        TransportSpec::Stdio { .. } => {
            bail!("server {server:?} runs over stdio; OAuth applies to HTTP servers only")
        }
    }
}

async fn status(
    global: &Global,
    options: &OAuthOptions,
    server: Option<String>,
) -> anyhow::Result<ExitCode> {
    // (name, URL, whether the entry is of the legacy HTTP+SSE transport, which has no OAuth)
    let targets: Vec<(String, String, bool)> = match server {
        Some(s) => {
            let (name, url, _) = resolve(global, &s)?;
            let legacy = !s.starts_with("http://")
                && !s.starts_with("https://")
                && source::load_config(global)?
                    .servers
                    .iter()
                    .any(|e| e.name() == s && e.legacy_sse);
            vec![(name, url, legacy)]
        }
        None => source::load_config(global)?
            .servers
            .iter()
            .filter_map(|s| match &s.spec.transport {
                TransportSpec::Http { url, .. } => {
                    Some((s.name().to_string(), url.clone(), s.legacy_sse))
                }
                TransportSpec::Stdio { .. } => None,
            })
            .collect(),
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let mut rows = Vec::new();
    let mut items = Vec::new();
    for (name, url, legacy) in targets {
        if legacy {
            // The legacy transport sends the configured headers and nothing else: no OAuth is
            // ever tried, so "not logged in" would send the user to `auth login` for nothing.
            items.push(json!({
                "server": name, "url": redact_url(&url), "transport": "sse", "oauth": false,
                "logged_in": false, "state": "legacy SSE: no OAuth",
            }));
            rows.push(vec![
                name,
                redact_url(&url),
                "legacy SSE: no OAuth".to_string(),
                String::new(),
            ]);
            continue;
        }
        let stored = auth::stored_login(&url, options).await?;
        let expires = stored.as_ref().and_then(|s| {
            let left = (s.received_at? + s.expires_in?) as i64 - now as i64;
            Some(left)
        });
        let state = match &stored {
            Some(s) if s.has_token => match expires {
                Some(left) if left <= 0 && s.can_refresh => "expired (will refresh)".to_string(),
                Some(left) if left <= 0 => "expired: log in again".to_string(),
                Some(left) => format!("logged in, {} min left", left / 60),
                None => "logged in".to_string(),
            },
            _ => "not logged in".to_string(),
        };
        items.push(json!({
            "server": name, "url": redact_url(&url), "transport": "http", "oauth": true,
            "logged_in": stored.as_ref().is_some_and(|s| s.has_token),
            "client_id": stored.as_ref().map(|s| &s.client_id),
            "scopes": stored.as_ref().map(|s| &s.scopes),
            "can_refresh": stored.as_ref().is_some_and(|s| s.can_refresh),
            "expires_in_s": expires,
            "path": stored.as_ref().and_then(|s| s.path.clone()),
            "state": state,
        }));
        let scopes = stored.map(|s| s.scopes.join(" ")).unwrap_or_default();
        rows.push(vec![name, redact_url(&url), state, scopes]);
    }
    if global.json {
        print_json(&json!({ "servers": items }));
    } else if rows.is_empty() {
        println!("no HTTP servers in the config");
    } else {
        print!(
            "{}",
            styled_table(&["SERVER", "URL", "STATE", "SCOPES"], &rows, &|_, _, c| c
                .to_string())
        );
    }
    Ok(ExitCode::SUCCESS)
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
