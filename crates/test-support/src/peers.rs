//! Locates the real MCP servers installed by `scripts/peers`. A missing peer fails the test with
//! a message saying what to install; it is never skipped silently.

use std::path::{Path, PathBuf};

/// The repo root (two levels above this crate's manifest).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap_or_else(|_| Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."))
}

/// The shared data folder beside the repo (`../shared/data`).
pub fn shared_data() -> PathBuf {
    repo_root().join("../shared/data")
}

/// The value of `SWITCHBOARD_PEER_<NAME>` (or `SWITCHBOARD_MODEL_DIR` for `"model_dir"`), read
/// from the environment or else from `.peers/env`. Panics with install advice when absent.
pub fn peer(name: &str) -> PathBuf {
    let key = if name == "model_dir" {
        "SWITCHBOARD_MODEL_DIR".to_string()
    } else {
        format!("SWITCHBOARD_PEER_{}", name.to_ascii_uppercase())
    };
    let value = std::env::var(&key).ok().or_else(|| from_env_file(&key));
    match value {
        Some(v) if Path::new(&v).exists() => PathBuf::from(v),
        Some(v) => panic!(
            "peer {name}: {key}={v} does not exist; run scripts/peers to install the test peers"
        ),
        None => panic!(
            "peer {name}: {key} is not set and .peers/env has no such line; run scripts/peers to install the test peers"
        ),
    }
}

fn from_env_file(key: &str) -> Option<String> {
    let text = std::fs::read_to_string(repo_root().join(".peers/env")).ok()?;
    text.lines().find_map(|line| {
        let (k, v) = line.split_once('=')?;
        (k.trim() == key).then(|| v.trim().to_string())
    })
}

/// The `node` binary to run npm servers with (`SWITCHBOARD_NODE` or `node` on PATH).
pub fn node() -> String {
    std::env::var("SWITCHBOARD_NODE").unwrap_or_else(|_| "node".to_string())
}
