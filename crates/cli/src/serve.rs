//! `switchboard serve`: one MCP server in front of every configured server, over stdio or
//! Streamable HTTP, with the config's allow/deny lists, approvals and tool pinning applied.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use switchboard_core::Secret;
use switchboard_gateway::{Expose, Gateway, HttpOptions, HttpServer, Options, STARTUP_WAIT};
use switchboard_host::config::PinMode;
use switchboard_host::pins::{self, PinStore};

use crate::{Global, source};

/// What `--expose` offers.
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default)]
pub enum ExposeArg {
    /// Every allowed tool, resource and prompt of every server.
    #[default]
    All,
    /// Only search_tools and call_tool, for hosts that choke on many tools.
    Facade,
}

/// Arguments of `switchboard serve`.
#[derive(clap::Args, Debug)]
pub struct ServeArgs {
    /// Serve on stdin/stdout (the default): what Claude Desktop and Claude Code start.
    #[arg(long, conflicts_with = "http")]
    pub stdio: bool,
    /// Serve Streamable HTTP at http://ADDR/mcp instead, e.g. 127.0.0.1:8931. Port 0 picks a
    /// free port; the URL is printed on stderr. A non-loopback address needs --token-env.
    /// GET /healthz answers probes with the upstream servers' readiness.
    #[arg(long, value_name = "ADDR")]
    pub http: Option<SocketAddr>,
    /// `all` tools, or the search `facade` (search_tools + call_tool).
    #[arg(long, value_enum, default_value_t = ExposeArg::All)]
    pub expose: ExposeArg,
    /// HTTP only: require `Authorization: Bearer <token>`, the token read from this environment
    /// variable (never from the command line, where other users could see it).
    #[arg(long, value_name = "VAR")]
    pub token_env: Option<String>,
    /// The pin store file (default: [settings] pin_store, else pins.sqlite in your user data
    /// directory).
    #[arg(long, value_name = "FILE")]
    pub pins: Option<PathBuf>,
    /// Clients connect at once; their first requests wait up to this many seconds after the
    /// start for upstream servers still starting. A server that takes longer joins later, and
    /// clients hear of its tools by a list_changed notification. 0 never waits.
    #[arg(long, value_name = "SECS", default_value_t = STARTUP_WAIT.as_secs_f64(),
          value_parser = seconds)]
    pub startup_wait: f64,
    /// Do not reload the config file when it changes (or on SIGHUP). By default an edited
    /// config applies while serve runs: unchanged servers keep running, new ones start, removed
    /// ones stop, changed ones restart, and clients hear of the new tools by list_changed. A
    /// file that no longer parses is reported and the running servers stay as they were.
    #[arg(long)]
    pub no_watch: bool,
    /// Append one JSON line per tool call any client makes to FILE (created readable by you
    /// only): the time, the client, the tool and its server, the arguments with secret-looking
    /// values (passwords, tokens, API keys) replaced by ***, the outcome (ok, tool_error,
    /// error) and the duration. Every call then goes through the gateway's handler, also
    /// those it would otherwise pass straight to a stdio server.
    #[arg(long, value_name = "FILE")]
    pub call_log: Option<PathBuf>,
    /// Offer the servers the folders the client names as its roots (VS Code's workspace
    /// folders, Claude Code's working folder), and pass their changes on, as if the client ran
    /// each server itself; stdio only, and only while the config names no roots of its own
    /// (`[settings] roots`, --root). Off by default: the filesystem server replaces the folders
    /// its arguments name with any roots it is given.
    #[arg(long)]
    pub client_roots: bool,
    /// Answer the servers' sampling requests (a tool asking the model something, with tools of
    /// its own or not) with this model when the calling client cannot, as most hosts cannot:
    /// PROVIDER:NAME (anthropic:claude-haiku-4-5, openai-chat:gpt-5-mini, gemini:...) or a name
    /// whose provider is plain (claude-*, gpt-*, gemini-*). Its key comes from the provider's
    /// usual variable (ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY) or
    /// --sampling-api-key-env. Nobody is asked about each request: setting this is the
    /// approval. A server whose entry says `sampling = false` is still refused, and one whose
    /// entry names a model (`sampling = { model = "..." }`) gets that model of this provider.
    #[arg(long, value_name = "MODEL")]
    pub sampling_model: Option<String>,
    /// The API URL for --sampling-model (a local server of that provider's format, a proxy).
    #[arg(long, value_name = "URL", requires = "sampling_model")]
    pub sampling_base_url: Option<String>,
    /// The environment variable holding --sampling-model's API key.
    #[arg(long, value_name = "VAR", requires = "sampling_model")]
    pub sampling_api_key_env: Option<String>,
}

/// The gateway's own model for sampling requests (`--sampling-model`), checked before any
/// server starts: its provider named or plain from its name, and its key.
fn sampling_client(
    args: &ServeArgs,
) -> anyhow::Result<Option<Arc<switchboard_host::client::ProviderClient>>> {
    let Some(spec) = args.sampling_model.as_deref() else {
        return Ok(None);
    };
    let named = spec
        .split_once(':')
        .filter(|(_, n)| !n.is_empty())
        .and_then(|(p, n)| Some((p.parse::<switchboard_core::Dialect>().ok()?, n)));
    let (dialect, model) = match named {
        Some(named) => named,
        None => match switchboard_providers::provider_for_model(spec) {
            Some(d) => (d, spec),
            None => anyhow::bail!(
                "--sampling-model {spec}: say whose model it is, as PROVIDER:NAME (anthropic, openai-chat, openai-responses, gemini)"
            ),
        },
    };
    let url = args.sampling_base_url.as_deref();
    let key = match switchboard_host::client::ProviderClient::key_from_env(
        dialect,
        url,
        args.sampling_api_key_env.as_deref(),
        &|v| std::env::var(v).ok(),
    ) {
        Ok(key) => key,
        Err(switchboard_host::HostError::ApiKeyEnvUnset { var }) => {
            anyhow::bail!("--sampling-api-key-env {var}: {var} is not set (or is empty)")
        }
        Err(e) => return Err(e).with_context(|| format!("--sampling-model {spec}")),
    };
    let client = switchboard_host::client::ProviderClient::new(dialect, url, model, key)?;
    Ok(Some(Arc::new(client)))
}

/// A number of seconds, from 0 to a day.
pub(crate) fn seconds(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .parse()
        .map_err(|_| format!("{s:?} is not a number of seconds"))?;
    if !(0.0..=86_400.0).contains(&v) {
        return Err(format!("{v} is outside 0 to 86400 seconds"));
    }
    Ok(v)
}

/// At most this many runtime worker threads for `serve` (fewer on a smaller machine).
const MAX_WORKERS: usize = 4;

/// The worker thread count for `serve`, or `None` to leave it to tokio when
/// `TOKIO_WORKER_THREADS` says otherwise. Over stdio, one: the gateway relays one client's
/// messages, and a second worker only adds a thread wake-up (a futex and an eventfd write) to
/// every message it relays, about 10 µs each on a VM; work that takes a core (building the
/// search index) runs on tokio's blocking pool either way. Over HTTP, the core count capped at
/// [`MAX_WORKERS`], for many clients at once.
pub fn worker_threads(args: &ServeArgs) -> Option<usize> {
    if std::env::var_os("TOKIO_WORKER_THREADS").is_some() {
        return None;
    }
    if args.http.is_none() {
        return Some(1);
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    Some(cores.clamp(1, MAX_WORKERS))
}

/// Run the gateway until the client disconnects (stdio) or Ctrl-C / SIGTERM (HTTP).
pub async fn run(global: &Global, args: ServeArgs) -> anyhow::Result<ExitCode> {
    let config = source::load_config(global)?;
    for d in &config.disabled {
        tracing::warn!("server {:?} disabled: {}", d.name, d.reason);
    }
    let token = match &args.token_env {
        Some(var) => {
            let value = std::env::var(var)
                .with_context(|| format!("--token-env {var}: the variable is not set"))?;
            anyhow::ensure!(
                value.trim().len() >= 16,
                "--token-env {var}: the token must be at least 16 characters"
            );
            Some(Secret::new(value.trim()))
        }
        None => None,
    };
    if args.client_roots && args.http.is_some() {
        anyhow::bail!(
            "--client-roots applies to stdio only: over HTTP several clients share the servers, and one client's folders are not the others'; name the roots with --root or [settings] roots"
        );
    }
    let sampler = sampling_client(&args)?;
    if token.is_some() && args.http.is_none() {
        anyhow::bail!("--token-env applies to --http only (stdio needs no token)");
    }
    if let Some(addr) = args.http {
        // Refuse before starting any server.
        anyhow::ensure!(
            addr.ip().is_loopback() || token.is_some(),
            "refusing to serve on {addr} without authentication: it is reachable from other machines. Pass --token-env VAR (a variable holding a secret token), or bind 127.0.0.1"
        );
    }
    let pins = if config.servers.iter().any(|s| s.pin != PinMode::Off) {
        let path = pins::store_path(args.pins.as_deref(), &config.settings)?;
        Some(PinStore::open(&path)?)
    } else {
        None
    };
    let expose = match args.expose {
        ExposeArg::All => Expose::All,
        ExposeArg::Facade => Expose::Facade,
    };
    let call_log = match &args.call_log {
        Some(path) => Some(switchboard_gateway::CallLog::open(path)?),
        None => None,
    };
    let gateway = Gateway::start(
        &config,
        Options {
            expose,
            pins,
            finder: None,
            startup_wait: Some(std::time::Duration::from_secs_f64(args.startup_wait)),
            call_log,
            client_roots: args.client_roots,
            sampler,
        },
    )
    .await;
    let watcher = match config_file(global) {
        Some(path) if !args.no_watch => Some(tokio::spawn(watch_config(
            gateway.clone(),
            global.clone(),
            path,
            config.inputs.clone(),
        ))),
        _ => None,
    };
    let result = match args.http {
        None => switchboard_gateway::serve_gateway_stdio(gateway.clone())
            .await
            .map_err(anyhow::Error::from),
        Some(addr) => serve_http(gateway.clone(), addr, token).await,
    };
    if let Some(w) = watcher {
        w.abort();
    }
    gateway.shutdown().await;
    result?;
    Ok(ExitCode::SUCCESS)
}

async fn serve_http(
    gateway: std::sync::Arc<Gateway>,
    addr: SocketAddr,
    token: Option<Secret>,
) -> anyhow::Result<()> {
    let server = HttpServer::bind(gateway, HttpOptions { addr, token }).await?;
    eprintln!("switchboard serve: listening on {}", server.url());
    server.run(shutdown_signal()).await?;
    Ok(())
}

/// Ctrl-C or SIGTERM.
async fn shutdown_signal() {
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term => {}
    }
}

/// The config file serve reads, when there is one (the embedded demo has none).
fn config_file(global: &Global) -> Option<PathBuf> {
    // JSON on the command line has no file to watch.
    if crate::source::inline(global).is_some() {
        return None;
    }
    let cwd = std::env::current_dir().ok()?;
    switchboard_host::Config::locate(global.config.as_deref(), &cwd)
}

/// How often the config file is checked for changes.
const WATCH_POLL: Duration = Duration::from_millis(500);
/// How long a changed file must stay unchanged before it is read (editors save in steps).
const WATCH_SETTLE: Duration = Duration::from_millis(200);

/// Reload the config when its content changes, or that of a file it was read with (the
/// config's `inputs`: a project's `.mcp.json`, Claude Code's settings and managed files, an
/// `envFile`), or on SIGHUP, and apply it to the gateway. Each file is read and compared on
/// every poll: it works the same for every editor and file system, through symlinks, and with
/// coarse timestamps; config files are small.
async fn watch_config(gateway: Arc<Gateway>, global: Global, path: PathBuf, inputs: Vec<PathBuf>) {
    let mut hangup = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()).ok();
    let mut watched: Vec<PathBuf> = std::iter::once(path.clone()).chain(inputs).collect();
    let mut seen = snapshots(&watched);
    loop {
        let signalled = tokio::select! {
            _ = tokio::time::sleep(WATCH_POLL) => false,
            Some(()) = async {
                match hangup.as_mut() {
                    Some(h) => h.recv().await,
                    None => std::future::pending().await,
                }
            } => true,
        };
        let now = snapshots(&watched);
        if !signalled {
            if now == seen {
                continue;
            }
            // Wait for the writes to stop before applying.
            tokio::time::sleep(WATCH_SETTLE).await;
            if snapshots(&watched) != now {
                continue;
            }
        }
        let changed: Vec<&Path> = watched
            .iter()
            .zip(now.iter().zip(&seen))
            .skip(1)
            .filter(|(_, (a, b))| a != b)
            .map(|(p, _)| p.as_path())
            .collect();
        if let Some(inputs) = reload(&gateway, &global, &path, &changed) {
            watched = std::iter::once(path.clone()).chain(inputs).collect();
        }
        seen = snapshots(&watched);
    }
}

/// The largest file the config watcher compares by content.
const SNAPSHOT_BYTES: u64 = 1 << 20;

fn snapshots(paths: &[PathBuf]) -> Vec<Option<Vec<u8>>> {
    paths.iter().map(|p| snapshot(p)).collect()
}

/// What the config is now, to compare with what it was: the file's bytes, or for a folder of
/// server files each file's name and bytes.
fn snapshot(path: &Path) -> Option<Vec<u8>> {
    if !path.is_dir() {
        // A `.mcpb` bundle can be hundreds of megabytes: its size and time stand for it.
        let meta = std::fs::metadata(path).ok()?;
        if meta.len() > SNAPSHOT_BYTES {
            return Some(format!("{} {:?}", meta.len(), meta.modified().ok()).into_bytes());
        }
        return std::fs::read(path).ok();
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(path)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    files.sort();
    let mut all = Vec::new();
    for file in files {
        all.extend_from_slice(file.as_os_str().as_encoded_bytes());
        all.push(0);
        all.extend(std::fs::read(&file).unwrap_or_default());
        all.push(0);
    }
    Some(all)
}

/// Read the config again and apply it, or say why not and keep the servers as they are.
/// `changed` names the files read with the config that changed. Returns the new config's
/// inputs when it was applied.
fn reload(
    gateway: &Gateway,
    global: &Global,
    path: &Path,
    changed: &[&Path],
) -> Option<Vec<PathBuf>> {
    let files: Vec<String> = changed.iter().map(|p| p.display().to_string()).collect();
    let (what, failed) = if files.is_empty() {
        (
            path.display().to_string(),
            format!("{} changed but was not applied", path.display()),
        )
    } else {
        (
            format!("{} ({} changed)", path.display(), files.join(", ")),
            format!(
                "{} changed but {} was not applied again",
                files.join(", "),
                path.display()
            ),
        )
    };
    let config = match source::load_config(global) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("switchboard serve: {failed}, the servers keep running as they were: {e:#}");
            return None;
        }
    };
    for d in &config.disabled {
        tracing::warn!("server {:?} disabled: {}", d.name, d.reason);
    }
    let outcome = gateway.reconfigure(&config);
    let mut parts = Vec::new();
    for (what, names) in [
        ("started", &outcome.started),
        ("stopped", &outcome.stopped),
        ("restarted", &outcome.restarted),
    ] {
        if !names.is_empty() {
            parts.push(format!("{what} {}", names.join(", ")));
        }
    }
    if !outcome.changed() {
        parts.push("no server changed".to_string());
    }
    eprintln!("switchboard serve: reloaded {what}: {}", parts.join("; "));
    Some(config.inputs)
}
