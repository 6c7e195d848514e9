//! The MCP servers of Claude Code's plugins, read with `~/.claude.json`: each plugin that
//! `~/.claude/plugins/installed_plugins.json` lists for the user (or for this project) and that
//! a settings file enables (`enabledPlugins`: the user's, the project's, the project's local
//! one, then the managed settings, the later winning; a project's files turn a plugin on only
//! once Claude Code trusts the folder). A plugin's servers are its
//! `.claude-plugin/plugin.json` `mcpServers` (inline, or the files it names) or its `.mcp.json`,
//! with `${CLAUDE_PLUGIN_ROOT}` the plugin's folder and `${user_config.KEY}` the value of the
//! plugin's `userConfig` setting KEY (saved in the settings' `pluginConfigs`, the sensitive ones
//! in `~/.claude/.credentials.json`; `SWITCHBOARD_INPUT_KEY` wins). Each is named
//! `plugin_PLUGIN_SERVER`, the name Claude Code gives its tools
//! (`mcp__plugin_PLUGIN_SERVER__tool`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::claude_settings::{Kind, Scope, Settings};
use super::entry::Context;
use super::{Config, DisabledServer, ServerConfig};

/// A plugin server's switchboard name, and the name Claude Code shows for it (which its
/// `/mcp` toggles record).
pub struct PluginServer {
    pub name: String,
    pub claude_name: String,
}

/// Add the enabled plugins' servers; a plugin that cannot be read is a warning.
pub fn add(
    ctx: &Context<'_>,
    settings: &Settings,
    scope: &Scope,
    servers: &mut Vec<ServerConfig>,
    disabled: &mut Vec<DisabledServer>,
    warnings: &mut Vec<String>,
) -> Vec<PluginServer> {
    let Some(home) = &scope.home else {
        return Vec::new();
    };
    let project = scope.project.as_deref();
    let registry = home.join(".claude/plugins/installed_plugins.json");
    ctx.input(&registry);
    let Some(installed) = read_json(&registry) else {
        return Vec::new();
    };
    let enabled = enabled_plugins(settings, scope.trusted);
    let mut added = Vec::new();
    let Some(plugins) = installed.get("plugins").and_then(Value::as_object) else {
        return added;
    };
    for (id, installs) in plugins {
        if enabled.get(id.as_str()) != Some(&true) {
            continue;
        }
        let Some(root) = install_path(installs, project) else {
            continue;
        };
        let plugin = id.split('@').next().unwrap_or(id);
        let found = match plugin_servers(ctx, &root) {
            Ok(found) => found,
            Err(why) => {
                warnings.push(format!(
                    "Claude Code plugin {id:?} ({}): its MCP servers are left out: {why}",
                    root.display()
                ));
                continue;
            }
        };
        // The plugin's `userConfig` values, put into its servers' `${user_config.KEY}`.
        let declared = read_json(&root.join(".claude-plugin/plugin.json"))
            .and_then(|m| m.get("userConfig").and_then(Value::as_object).cloned());
        let saved = plugin_options(settings, scope.trusted, home, id);
        let values = super::mcpb::user_values(
            declared.as_ref(),
            &saved,
            ctx.env,
            super::mcpb::Host::ClaudeCode,
            &Default::default(),
        );
        for (file, map) in found {
            for (server, entry) in map {
                let name = format!("plugin_{plugin}_{server}");
                let claude_name = format!("plugin:{plugin}:{server}");
                let origin = format!("Claude Code plugin {id} ({})", file.display());
                let uses_options = entry.to_string().contains("${user_config.");
                let entry = match (&values, uses_options) {
                    (Ok(values), true) => super::mcpb::fill_user_config(&entry, values),
                    (Err(why), true) => {
                        servers.retain(|s| s.name() != name);
                        disabled.push(DisabledServer {
                            name: name.clone(),
                            reason: format!("Claude Code plugin {id}: {why}"),
                            origin: Some(origin),
                        });
                        added.push(PluginServer { name, claude_name });
                        continue;
                    }
                    (_, false) => entry,
                };
                let mut one = Map::new();
                one.insert(name.clone(), with_plugin_root(entry, &root));
                let text = serde_json::json!({ "mcpServers": one }).to_string();
                let root_text = root.display().to_string();
                let env = |var: &str| {
                    if var == "CLAUDE_PLUGIN_ROOT" {
                        Some(root_text.clone())
                    } else {
                        (ctx.env)(var)
                    }
                };
                match Config::parse_with(&file, &text, &env, None, false) {
                    Ok(config) => {
                        servers.retain(|s| s.name() != name);
                        servers.extend(config.servers.into_iter().map(|mut s| {
                            s.origin = Some(origin.clone());
                            s
                        }));
                        disabled.extend(config.disabled.into_iter().map(|mut d| {
                            d.origin = Some(origin.clone());
                            d
                        }));
                        warnings.extend(config.warnings);
                        added.push(PluginServer { name, claude_name });
                    }
                    Err(e) => warnings.push(format!(
                        "Claude Code plugin {id:?}: server {server:?} left out: {e}"
                    )),
                }
            }
        }
    }
    added
}

/// Which plugins are enabled: `enabledPlugins` of the user's settings, the project's and the
/// project's local ones, then the managed settings (the order of `settings`); a later file's
/// value for a plugin wins. Until Claude Code trusts the folder, the project's files can turn a
/// plugin off but not on.
fn enabled_plugins(settings: &Settings, trusted: bool) -> BTreeMap<String, bool> {
    let mut enabled = BTreeMap::new();
    for file in &settings.files {
        let may_enable = trusted || file.kind != Kind::Project;
        if let Some(map) = file.value.get("enabledPlugins").and_then(Value::as_object) {
            for (id, on) in map {
                if let Some(on) = on.as_bool().filter(|on| may_enable || !on) {
                    enabled.insert(id.clone(), on);
                }
            }
        }
    }
    enabled
}

/// Where the plugin is installed for this user, or for this project: the last such entry.
fn install_path(installs: &Value, project: Option<&Path>) -> Option<PathBuf> {
    let list: Vec<&Value> = match installs {
        Value::Array(list) => list.iter().collect(),
        one @ Value::Object(_) => vec![one],
        _ => return None,
    };
    list.into_iter()
        .filter(
            |i| match i.get("scope").and_then(Value::as_str).unwrap_or("user") {
                "user" | "managed" => true,
                _ => i
                    .get("projectPath")
                    .and_then(Value::as_str)
                    .zip(project)
                    .is_some_and(|(p, here)| Path::new(p) == here),
            },
        )
        .filter_map(|i| i.get("installPath").and_then(Value::as_str))
        .map(PathBuf::from)
        .next_back()
}

/// The values saved for plugin `id`'s `userConfig`: `pluginConfigs.ID.options` of the settings
/// files (a later file's value for a key winning; a project's files only once Claude Code
/// trusts the folder), and the sensitive ones Claude Code keeps in
/// `~/.claude/.credentials.json` (`pluginSecrets.ID`) where there is no keychain.
fn plugin_options(settings: &Settings, trusted: bool, home: &Path, id: &str) -> Map<String, Value> {
    let mut options = Map::new();
    for file in settings
        .files
        .iter()
        .filter(|f| trusted || f.kind != Kind::Project)
    {
        if let Some(saved) = file
            .value
            .get("pluginConfigs")
            .and_then(|c| c.get(id))
            .and_then(|c| c.get("options"))
            .and_then(Value::as_object)
        {
            options.extend(saved.clone());
        }
    }
    if let Some(secrets) = read_json(&home.join(".claude/.credentials.json"))
        .and_then(|c| c.get("pluginSecrets")?.get(id)?.as_object().cloned())
    {
        options.extend(secrets);
    }
    options
}

/// A map of servers, with the file it was read from.
type ServerMap = (PathBuf, Map<String, Value>);

/// The plugin's servers.
fn plugin_servers(ctx: &Context<'_>, root: &Path) -> Result<Vec<ServerMap>, String> {
    let manifest = root.join(".claude-plugin/plugin.json");
    ctx.input(&manifest);
    let declared = read_json(&manifest).and_then(|m| m.get("mcpServers").cloned());
    let from_file = |rel: &str| -> Result<ServerMap, String> {
        let file = root.join(rel);
        ctx.input(&file);
        let value =
            read_json(&file).ok_or_else(|| format!("{} cannot be read as JSON", file.display()))?;
        let map = match value.get("mcpServers") {
            Some(Value::Object(m)) => m.clone(),
            Some(_) => return Err(format!("{}: mcpServers is not an object", file.display())),
            None => value
                .as_object()
                .cloned()
                .ok_or_else(|| format!("{} is not a JSON object", file.display()))?,
        };
        Ok((file, map))
    };
    match declared {
        Some(Value::Object(map)) => Ok(vec![(manifest, map)]),
        Some(Value::String(rel)) => Ok(vec![from_file(&rel)?]),
        Some(Value::Array(list)) => list
            .iter()
            .map(|v| {
                v.as_str()
                    .ok_or_else(|| "plugin.json's mcpServers list holds a non-string".to_string())
                    .and_then(from_file)
            })
            .collect(),
        Some(_) => Err("plugin.json's mcpServers is neither an object, a path nor a list".into()),
        None => {
            let file = root.join(".mcp.json");
            ctx.input(&file);
            if file.is_file() {
                Ok(vec![from_file(".mcp.json")?])
            } else {
                Ok(Vec::new())
            }
        }
    }
}

/// A stdio entry gets `CLAUDE_PLUGIN_ROOT` in its environment, as Claude Code gives it.
fn with_plugin_root(mut entry: Value, root: &Path) -> Value {
    if let Some(obj) = entry.as_object_mut()
        && obj.contains_key("command")
    {
        let env = obj
            .entry("env")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Some(env) = env.as_object_mut() {
            env.entry("CLAUDE_PLUGIN_ROOT")
                .or_insert_with(|| Value::String(root.display().to_string()));
        }
    }
    entry
}

fn read_json(path: &Path) -> Option<Value> {
    super::claude_settings::read_json(path).ok()
}
