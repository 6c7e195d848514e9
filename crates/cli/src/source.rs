//! Where tools come from for a command: the config (live servers) or `--catalog` files.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context as _;
use switchboard_core::{Catalog, ServerCatalog, catalog_file};
use switchboard_host::Config;
use switchboard_mcp::{ServerState, Sessions};

use crate::Global;
use crate::output;

/// The JSON `--config` holds in place of a path (`--config '{"mcpServers": ...}'`, as Claude
/// Code's `--mcp-config` takes it), when it does.
pub fn inline(global: &Global) -> Option<&str> {
    global
        .config
        .as_deref()
        .and_then(Path::to_str)
        .filter(|text| text.trim_start().starts_with('{'))
}

/// Load the config the global flags point at (or the embedded demo), with its profile applied.
/// Prints the config's warnings to stderr through tracing.
pub fn load_config(global: &Global) -> anyhow::Result<Config> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let config = match inline(global) {
        Some(text) => {
            let mut config = Config::parse_inline(text, &|name| std::env::var(name).ok())?;
            // The JSON itself names the config in the chain, on one line.
            chain(
                &text.replace('\n', " "),
                global.profile.as_deref(),
                &mut config,
            )?;
            config
        }
        None => match Config::locate(global.config.as_deref(), &cwd) {
            Some(path) => {
                let mut config = Config::load(&path)?;
                let real = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
                chain(
                    &real.display().to_string(),
                    global.profile.as_deref(),
                    &mut config,
                )?;
                config
            }
            None => {
                let exe = std::env::current_exe()
                    .context("cannot find this program's path to start the demo servers")?;
                Config::demo(&exe)
            }
        },
    };
    for w in &config.warnings {
        tracing::warn!("{w}");
    }
    let config = match &global.profile {
        Some(p) => config.with_profile(p)?,
        None => config,
    };
    let config = match global.approve {
        Some(mode) => config.with_default_approve(mode, &format!("--approve {}", mode.word())),
        None => config,
    };
    let mut config = config;
    if !global.roots.is_empty() {
        config.settings.roots = folders(&global.roots, &cwd)?;
    }
    // Sessions started from this config use each server's own OAuth client settings.
    switchboard_mcp::configure_server_oauth(config.server_oauth());
    Ok(config)
}

/// `--root` folders resolved from `cwd` to their real paths; one that is not a folder is an
/// error (a typo would otherwise take a server's own folders away and give it none).
pub(crate) fn folders(given: &[PathBuf], cwd: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for dir in given {
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let real = switchboard_host::config::folder::real_folder(dir, cwd, home.as_deref())
            .map_err(|e| anyhow::anyhow!("--root {}: {e}", dir.display()))?;
        if !out.contains(&real) {
            out.push(real);
        }
    }
    Ok(out)
}

/// The environment variable through which each switchboard tells the stdio servers it starts
/// which configs (path, and profile) the switchboards above them serve.
pub(crate) const CHAIN_VAR: &str = "SWITCHBOARD_CONFIG_CHAIN";

/// Keep a config that runs switchboard on itself (a project's `.mcp.json` naming `switchboard
/// serve`, read by that same `serve`) from starting switchboards without end: a switchboard
/// started for a config (and profile) one above it already serves refuses to start, saying
/// why; the others pass the chain on to their stdio servers. `name` is the config's real path
/// (or, for `--config` JSON, the JSON on one line).
fn chain(name: &str, profile: Option<&str>, config: &mut Config) -> anyhow::Result<()> {
    let key = match profile {
        Some(p) => format!("{name} (profile {p})"),
        None => name.to_string(),
    };
    let above = std::env::var(CHAIN_VAR).unwrap_or_default();
    if above.lines().any(|l| l == key) {
        anyhow::bail!(
            "this switchboard was started by a switchboard serving the same config, {key}: the config runs switchboard on itself, which would start switchboards without end. Give the inner one its own --config (or a --profile that leaves it out)"
        );
    }
    let passed = if above.is_empty() {
        key
    } else {
        format!("{above}\n{key}")
    };
    for server in &mut config.servers {
        if let switchboard_core::TransportSpec::Stdio { env, .. } = &mut server.spec.transport
            && !env.iter().any(|(k, _)| k == CHAIN_VAR)
        {
            env.push((
                CHAIN_VAR.into(),
                switchboard_core::Secret::new(passed.clone()),
            ));
        }
    }
    Ok(())
}

/// Connect to every usable server of the config, with a spinner while they start.
pub async fn connect(config: &Config) -> Sessions {
    connect_within(config, None).await
}

/// As [`connect`], but return after `wait` at most (`None`: when every server has started or
/// failed). Servers still starting then keep starting, and their tools join the catalog when
/// they are ready; with a `wait` (a session that takes servers joining late, as `chat`), an
/// HTTP server that cannot be reached is tried again every 10 s as well.
pub async fn connect_within(config: &Config, wait: Option<Duration>) -> Sessions {
    let specs = config
        .servers
        .iter()
        .map(|s| s.spec.clone())
        .collect::<Vec<_>>();
    let pb = output::spinner(format!("connecting to {} server(s)", specs.len()));
    // The config's folders (or --root's) are the roots the servers are offered.
    switchboard_mcp::configure_roots(config.roots());
    let sessions = if wait.is_some() {
        Sessions::launch_retrying(specs)
    } else {
        Sessions::launch(specs)
    };
    let settled = async {
        let settled = sessions.settled();
        tokio::pin!(settled);
        // Name the servers still starting, so a slow one is seen while it is waited for.
        loop {
            tokio::select! {
                () = &mut settled => break,
                () = tokio::time::sleep(Duration::from_millis(250)) => {
                    pb.set_message(starting_message(&sessions.statuses()));
                }
            }
        }
    };
    match wait {
        Some(wait) => {
            let _ = tokio::time::timeout(wait, settled).await;
        }
        None => settled.await,
    }
    pb.finish_and_clear();
    sessions
}

/// The spinner's line while servers start: how many are up, and which are still starting.
fn starting_message(statuses: &[switchboard_mcp::ServerStatus]) -> String {
    let starting: Vec<&str> = statuses
        .iter()
        .filter(|s| {
            matches!(
                s.state,
                ServerState::Connecting | ServerState::Restarting { .. }
            )
        })
        .map(|s| s.name.as_str())
        .collect();
    let ready = statuses.iter().filter(|s| s.state.is_ready()).count();
    const SHOWN: usize = 4;
    let mut names = starting
        .iter()
        .take(SHOWN)
        .copied()
        .collect::<Vec<_>>()
        .join(", ");
    if starting.len() > SHOWN {
        names.push_str(&format!(" and {} more", starting.len() - SHOWN));
    }
    let failed = statuses
        .iter()
        .filter(|s| matches!(s.state, ServerState::Failed { .. }))
        .count();
    let failed = if failed > 0 {
        format!(", {failed} failed")
    } else {
        String::new()
    };
    format!(
        "{ready} of {} server(s) ready{failed}; starting: {names}",
        statuses.len()
    )
}

/// The catalog of the config's live servers: connect, take what they list, close. Each server
/// that is not ready is named with `left_out` ("is not searched") and why.
pub async fn live_catalog(config: &Config, left_out: &str) -> Catalog {
    live_catalog_and_missing(config, left_out).await.0
}

/// [`live_catalog`], and the servers that did not come up (each named on stderr, as are the
/// config's disabled ones).
pub async fn live_catalog_and_missing(config: &Config, left_out: &str) -> (Catalog, Vec<String>) {
    for d in &config.disabled {
        tracing::warn!("server {:?} {left_out}: {}", d.name, d.reason);
    }
    let sessions = connect(config).await;
    let catalog = presented(config, &sessions);
    let mut missing = Vec::new();
    for s in sessions.statuses().iter().filter(|s| !s.state.is_ready()) {
        tracing::warn!("server {:?} {left_out}: {}", s.name, s.state.describe());
        missing.push(s.name.clone());
    }
    sessions.shutdown().await;
    (catalog, missing)
}

/// What the sessions list, as the config presents it to a model (its tool descriptions in
/// place of the servers'); per-tool settings naming a tool its server does not list are named
/// on stderr.
pub fn presented(config: &Config, sessions: &Sessions) -> Catalog {
    let catalog = switchboard_host::config::with_descriptions(sessions.catalog(), &config.servers);
    for (_, _, message) in
        switchboard_host::config::unknown_tool_settings(&catalog, &config.servers)
    {
        tracing::warn!("{message}");
    }
    for message in switchboard_host::config::manifest_mismatches(&catalog, &config.servers) {
        tracing::warn!("{message}");
    }
    catalog
}

/// Each configured server's listed catalog with only the tools its allow/deny lists let
/// through (what `serve` and the loop offer a model), in config order.
pub fn offered(config: &Config, catalog: &Catalog) -> Vec<ServerCatalog> {
    config
        .servers
        .iter()
        .filter_map(|c| {
            let mut listed = catalog.servers.get(c.name())?.clone();
            listed.tools.retain(|t| c.filter.permits_tool(&t.def));
            Some(listed)
        })
        .collect()
}

/// Read `--catalog` files into one catalog. Entries a file gets wrong are skipped with a warning.
pub fn load_catalog_files(paths: &[PathBuf]) -> anyhow::Result<Catalog> {
    let mut servers = Vec::new();
    for path in paths {
        let bytes = std::fs::read(path)
            .with_context(|| format!("cannot read catalog {}", path.display()))?;
        let stem = stem(path);
        let (found, skipped) = catalog_file::parse(&path.display().to_string(), &stem, &bytes)?;
        for s in &skipped {
            tracing::warn!("skipped: {s}");
        }
        servers.extend(found);
    }
    Ok(Catalog::from_servers(servers))
}

fn stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "catalog".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use switchboard_mcp::ServerStatus;

    fn status(name: &str, state: ServerState) -> ServerStatus {
        ServerStatus {
            name: name.into(),
            transport: "stdio",
            state,
            protocol_version: None,
            server_name: None,
            server_version: None,
            tools: 0,
            resources: 0,
            resource_templates: 0,
            prompts: 0,
            connect_ms: None,
            stderr_tail: Vec::new(),
            warnings: Vec::new(),
        }
    }

    #[test]
    fn the_spinner_names_the_servers_still_starting() {
        let mut all = vec![
            status("up", ServerState::Ready),
            status(
                "down",
                ServerState::Failed {
                    reason: "no".into(),
                },
            ),
        ];
        all.extend(["a", "b", "c", "d", "e", "f"].map(|n| status(n, ServerState::Connecting)));
        assert_eq!(
            starting_message(&all),
            "1 of 8 server(s) ready, 1 failed; starting: a, b, c, d and 2 more"
        );
        assert_eq!(
            starting_message(&all[..3]),
            "1 of 3 server(s) ready, 1 failed; starting: a"
        );
    }
}
