//! The extensions Claude Desktop installed (MCP bundles), read with its
//! `claude_desktop_config.json`: each folder of `Claude Extensions/` beside that file (the ones
//! `extensions-installations.json` lists, when it is there), run as its `manifest.json` says
//! with the values `Claude Extensions Settings/ID.json` keeps (`userConfig`). Claude Desktop runs
//! an extension only when that file says `"isEnabled": true`; the others are listed as
//! disabled, with why. An extension is named as its manifest names it, or by its ID when a
//! server of the config has that name.

use std::path::Path;

use serde_json::{Map, Value};

use super::entry::Context;
use super::mcpb::{self, Host};
use super::{DisabledServer, ServerConfig};

/// The file name of Claude Desktop's config.
const CONFIG_FILE: &str = "claude_desktop_config.json";

/// Whether `path` is Claude Desktop's config file.
pub fn is_config_file(path: &Path) -> bool {
    path.file_name().and_then(|n| n.to_str()) == Some(CONFIG_FILE)
}

/// Add the installed extensions when `ctx.path` is Claude Desktop's config.
pub fn add(
    ctx: &Context<'_>,
    servers: &mut Vec<ServerConfig>,
    disabled: &mut Vec<DisabledServer>,
    warnings: &mut Vec<String>,
) {
    if !is_config_file(ctx.path) {
        return;
    }
    let base = ctx.base;
    let installed = base.join("Claude Extensions");
    let settings_dir = base.join("Claude Extensions Settings");
    let registry = base.join("extensions-installations.json");
    for input in [&registry, &installed, &settings_dir] {
        ctx.input(input);
    }
    let home = ctx.home();
    for id in extension_ids(&registry, &installed) {
        let manifest_path = installed.join(&id).join("manifest.json");
        let manifest = match read_json(&manifest_path) {
            Ok(m) if mcpb::is_manifest(&m) => m,
            Ok(_) => {
                warnings.push(format!(
                    "Claude Desktop extension {id:?} is left out: {} is not a bundle manifest",
                    manifest_path.display()
                ));
                continue;
            }
            Err(why) => {
                warnings.push(format!(
                    "Claude Desktop extension {id:?} is left out: {why}"
                ));
                continue;
            }
        };
        let taken = |name: &str| {
            servers.iter().any(|s| s.name() == name) || disabled.iter().any(|d| d.name == name)
        };
        let mut name = mcpb::name(&manifest, &id);
        if taken(&name) {
            name = id.clone();
        }
        if taken(&name) {
            continue;
        }
        let origin = format!(
            "Claude Desktop extension {id} ({})",
            installed.join(&id).display()
        );
        let settings_path = settings_dir.join(format!("{id}.json"));
        let settings = match read_json(&settings_path) {
            Ok(s) => s,
            Err(_) if !settings_path.exists() => {
                disabled.push(DisabledServer {
                    name,
                    reason: format!(
                        "Claude Desktop extension {id} is not turned on in Claude Desktop ({} is absent)",
                        settings_path.display()
                    ),
                    origin: Some(origin.clone()),
                });
                continue;
            }
            Err(why) => {
                disabled.push(DisabledServer {
                    name,
                    reason: format!("Claude Desktop extension {id}: {why}"),
                    origin: Some(origin.clone()),
                });
                continue;
            }
        };
        if settings.get("isEnabled").and_then(Value::as_bool) != Some(true) {
            disabled.push(DisabledServer {
                name,
                reason: format!(
                    "Claude Desktop extension {id} is turned off in Claude Desktop (\"isEnabled\" in {})",
                    settings_path.display()
                ),
                origin: Some(origin.clone()),
            });
            continue;
        }
        let saved = settings
            .get("userConfig")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_else(Map::new);
        match mcpb::read(
            &manifest_path,
            &manifest,
            &name,
            &saved,
            Host::ClaudeDesktop,
            ctx.env,
            home.as_deref(),
        ) {
            Ok(config) => {
                servers.extend(config.servers.into_iter().map(|mut s| {
                    s.origin = Some(origin.clone());
                    s
                }));
                disabled.extend(config.disabled.into_iter().map(|mut d| {
                    d.origin = Some(origin.clone());
                    d
                }));
                warnings.extend(config.warnings);
            }
            Err(e) => disabled.push(DisabledServer {
                name,
                reason: e.to_string(),
                origin: Some(origin.clone()),
            }),
        }
    }
}

/// The installed extensions' IDs: the keys of the registry's `extensions` when it can be read,
/// else the folders of `Claude Extensions/`; in name order.
fn extension_ids(registry: &Path, installed: &Path) -> Vec<String> {
    let listed = read_json(registry).ok().and_then(|r| {
        r.get("extensions")
            .and_then(Value::as_object)
            .map(|m| m.keys().cloned().collect::<Vec<_>>())
    });
    let mut ids = listed.unwrap_or_else(|| {
        std::fs::read_dir(installed)
            .map(|entries| {
                entries
                    .filter_map(Result::ok)
                    .filter(|e| e.path().is_dir())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default()
    });
    // An ID is a folder name: one that would leave the folder is not one.
    ids.retain(|id| {
        !id.is_empty()
            && !id.contains(['/', '\\'])
            && id != "."
            && id != ".."
            && !id.starts_with('.')
    });
    ids.sort();
    ids
}

/// A JSON file as Claude Desktop writes it, the error naming the file.
fn read_json(path: &Path) -> Result<Value, String> {
    super::claude_settings::read_json(path).map_err(|e| format!("{}: {e}", path.display()))
}
