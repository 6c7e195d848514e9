//! Where tools come from for a command: the config (live servers) or `--catalog` files.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context as _;
use switchboard_core::{Catalog, catalog_file};
use switchboard_host::Config;
use switchboard_mcp::Sessions;

use crate::Global;
use crate::output;

/// Load the config the global flags point at (or the embedded demo), with its profile applied.
/// Prints the config's warnings and disabled servers to stderr through tracing.
pub fn load_config(global: &Global) -> anyhow::Result<Config> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let config = match Config::locate(global.config.as_deref(), &cwd) {
        Some(path) => Config::load(&path)?,
        None => {
            let exe = std::env::current_exe()
                .context("cannot find this program's path to start the demo servers")?;
            Config::demo(&exe)
        }
    };
    for w in &config.warnings {
        tracing::warn!("{w}");
    }
    let config = match &global.profile {
        Some(p) => config.with_profile(p)?,
        None => config,
    };
    // Sessions started from this config use each server's own OAuth client settings.
    switchboard_mcp::configure_server_oauth(config.server_oauth());
    Ok(config)
}

/// Connect to every usable server of the config, with a spinner while they start.
pub async fn connect(config: &Config) -> Sessions {
    connect_within(config, None).await
}

/// As [`connect`], but return after `wait` at most (`None`: when every server has started or
/// failed). Servers still starting then keep starting, and their tools join the catalog when
/// they are ready.
pub async fn connect_within(config: &Config, wait: Option<Duration>) -> Sessions {
    let specs = config
        .servers
        .iter()
        .map(|s| s.spec.clone())
        .collect::<Vec<_>>();
    let pb = output::spinner(format!("connecting to {} server(s)", specs.len()));
    let sessions = Sessions::launch(specs);
    match wait {
        Some(wait) => {
            let _ = tokio::time::timeout(wait, sessions.settled()).await;
        }
        None => sessions.settled().await,
    }
    pb.finish_and_clear();
    sessions
}

/// The catalog of the config's live servers: connect, take what they list, close. Each server
/// that is not ready is named with `left_out` ("is not searched") and why.
pub async fn live_catalog(config: &Config, left_out: &str) -> Catalog {
    let sessions = connect(config).await;
    let catalog = sessions.catalog();
    for s in sessions.statuses().iter().filter(|s| !s.state.is_ready()) {
        tracing::warn!("server {:?} {left_out}: {}", s.name, s.state.describe());
    }
    sessions.shutdown().await;
    catalog
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
