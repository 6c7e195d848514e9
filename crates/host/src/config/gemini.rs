//! Gemini CLI's MCP servers as Gemini CLI gathers them for a folder, when its settings file
//! (`.gemini/settings.json`, the user's or a workspace's) is the config: the system defaults',
//! the user's, the workspace's (which count only once Gemini CLI trusts the folder:
//! `~/.gemini/trustedFolders.json`, `GEMINI_CLI_TRUST_WORKSPACE`,
//! `security.folderTrust.enabled`) and the system settings' servers, each replacing the earlier
//! ones of the same name, then the servers of the user's extensions
//! (`~/.gemini/extensions/*/gemini-extension.json`, linked ones followed, each enabled for this
//! folder by `extension-enablement.json`; a name the settings already use is theirs), and last
//! the `mcp.allowed` / `mcp.excluded` lists over all of them. Gemini CLI's bare `$VAR` is read as
//! it reads it: the variable's value when set, else left as written.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::entry::Context;
use super::layers::same_file;
use super::{Config, DisabledServer, ServerConfig};
use crate::error::HostError;

/// Whether `path` is a Gemini CLI settings file (`.gemini/settings.json`).
pub fn is_settings_file(path: &Path) -> bool {
    path.file_name().is_some_and(|f| f == "settings.json")
        && path
            .parent()
            .and_then(Path::file_name)
            .is_some_and(|d| d == ".gemini")
}

/// One of the settings files Gemini CLI merges, in its order: each later one's server replaces
/// an earlier one's of the same name.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `system-defaults.json`, beside the system settings.
    Defaults,
    /// `~/.gemini/settings.json`.
    User,
    /// The project's `.gemini/settings.json`, read only once the folder is trusted.
    Workspace,
    /// The system settings (`/etc/gemini-cli/settings.json`), which override the others.
    System,
}

impl Kind {
    fn label(self) -> &'static str {
        match self {
            Kind::Defaults => "Gemini CLI system defaults",
            Kind::User => "Gemini CLI user settings",
            Kind::Workspace => "Gemini CLI workspace settings",
            Kind::System => "Gemini CLI system settings",
        }
    }
}

/// Where an administrator puts Gemini CLI's system settings on this platform, or where
/// `GEMINI_CLI_SYSTEM_SETTINGS_PATH` says.
fn system_file(ctx: &Context<'_>) -> PathBuf {
    (ctx.env)("GEMINI_CLI_SYSTEM_SETTINGS_PATH")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(if cfg!(target_os = "macos") {
                "/Library/Application Support/GeminiCli/settings.json"
            } else if cfg!(windows) {
                r"C:\ProgramData\gemini-cli\settings.json"
            } else {
                "/etc/gemini-cli/settings.json"
            })
        })
}

/// `system-defaults.json` beside the system settings, or `GEMINI_CLI_SYSTEM_DEFAULTS_PATH`.
fn defaults_file(ctx: &Context<'_>, system: &Path) -> PathBuf {
    (ctx.env)("GEMINI_CLI_SYSTEM_DEFAULTS_PATH")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            system
                .parent()
                .unwrap_or(Path::new("."))
                .join("system-defaults.json")
        })
}

/// The config one read of Gemini CLI's settings file (`text`, parsed as `root`) stands for: the
/// servers of every scope, the extensions' and the lists applied, with the variables Gemini CLI
/// would have from its `.env` file. Fails only when this file itself cannot be read as a config.
pub fn gather(ctx: &Context<'_>, text: &str, root: &Value) -> Result<Config, HostError> {
    let mut servers = Vec::new();
    let mut disabled = Vec::new();
    let mut warnings = Vec::new();
    // Gemini CLI's home: `GEMINI_CLI_HOME` when set (its `.gemini` is there), else the user's.
    let home = (ctx.env)("GEMINI_CLI_HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .or_else(|| ctx.home());
    let Some(home) = home else {
        let own = Config::parse_part(ctx.path, text, ctx.env)?;
        return Ok(ctx.servers_only(own.servers, own.disabled, own.warnings));
    };
    let user_file = home.join(".gemini/settings.json");
    let this_is_user = same_file(ctx.path, &user_file);
    // The workspace: the folder whose settings this is, or the current one for the user's file.
    let workspace = if this_is_user {
        ctx.cwd.clone()
    } else {
        ctx.path
            .parent()
            .and_then(Path::parent)
            .map(Path::to_path_buf)
    };
    // A workspace at home has no settings of its own: its file is the user's.
    let workspace_file = workspace
        .as_ref()
        .map(|w| w.join(".gemini/settings.json"))
        .filter(|f| !same_file(f, &user_file));
    let system = system_file(ctx);
    let defaults = defaults_file(ctx, &system);
    let mut scopes = vec![(Kind::Defaults, defaults), (Kind::User, user_file)];
    scopes.extend(workspace_file.map(|f| (Kind::Workspace, f)));
    scopes.push((Kind::System, system));

    // Each scope's settings: this file's as given, the others' as on disk.
    let mut own_seen = false;
    let mut read = Vec::new();
    for (kind, file) in scopes {
        ctx.input(&file);
        let is_own = !own_seen && (file == ctx.path || same_file(&file, ctx.path));
        own_seen |= is_own;
        // Each file is read once: its text for the servers, its value for the settings.
        let found = if is_own {
            Some((text.to_string(), root.clone()))
        } else if file.is_file() {
            let parsed = std::fs::read_to_string(&file)
                .map_err(|e| e.to_string())
                .and_then(|t| {
                    let v = serde_json::from_str(&super::jsonc::to_json(&t))
                        .map_err(|e| e.to_string())?;
                    Ok((t, v))
                });
            match parsed {
                Ok(found) => Some(found),
                Err(e) => {
                    warnings.push(format!(
                        "{}: cannot be read ({e}); Gemini CLI's other settings are read",
                        file.display()
                    ));
                    None
                }
            }
        } else {
            None
        };
        read.push((kind, file, is_own, found));
    }
    // Folder trust is a setting of the user's and the system's files, not the workspace's.
    let setting = |pointer: &str| {
        read.iter()
            .filter(|(kind, ..)| *kind != Kind::Workspace)
            .filter_map(|(.., found)| found.as_ref()?.1.pointer(pointer))
            .filter_map(Value::as_bool)
            .next_back()
    };
    let trust_on = setting("/security/folderTrust/enabled").unwrap_or(true);
    let ignore_local_env = setting("/advanced/ignoreLocalEnv").unwrap_or(false);
    let trust = match &workspace {
        Some(w) => trust(ctx, &home, w, trust_on),
        None => Ok(()),
    };
    // The variables of the `.env` file Gemini CLI loads at start (the environment wins).
    let dotenv = match &trust {
        Ok(()) => env_file(&home, workspace.as_deref(), ignore_local_env),
        Err(_) => None,
    };
    let dotenv_vars: BTreeMap<String, String> = match &dotenv {
        Some(file) => {
            ctx.input(file);
            let project_file = file
                .parent()
                .and_then(Path::file_name)
                .is_none_or(|d| d != ".gemini");
            std::fs::read_to_string(file)
                .ok()
                .and_then(|t| super::dotenv::parse(&t).ok())
                .unwrap_or_default()
                .into_iter()
                .filter(|(k, _)| !(project_file && EXCLUDED_ENV_VARS.contains(&k.as_str())))
                .collect()
        }
        None => BTreeMap::new(),
    };
    let lookup = |var: &str| (ctx.env)(var).or_else(|| dotenv_vars.get(var).cloned());

    let mut ignored = Vec::new();
    let mut roots = Vec::new();
    for (kind, file, is_own, found) in read {
        let Some((file_text, value)) = found else {
            continue;
        };
        let untrusted = match (&trust, kind) {
            (Err(why), Kind::Workspace) => Some(why.clone()),
            _ => None,
        };
        if value.get("mcpServers").is_some_and(Value::is_object) {
            let named = if is_own { ctx.path } else { file.as_path() };
            let part = match Config::parse_part(named, &file_text, &lookup) {
                Ok(c) => Some(c),
                // This file itself unusable: the whole read fails, as for any config.
                Err(e) if is_own => return Err(e),
                Err(e) => {
                    warnings.push(format!("{e} (Gemini CLI's other settings are read)"));
                    None
                }
            };
            if let Some(part) = part {
                for input in &part.inputs {
                    ctx.input(input);
                }
                if let Some(why) = &untrusted {
                    let names = part
                        .servers
                        .iter()
                        .map(|s| s.name().to_string())
                        .chain(part.disabled.into_iter().map(|d| d.name));
                    ignored.extend(names.map(|name| (name, file.clone(), why.clone())));
                } else {
                    warnings.extend(part.warnings);
                    let label = format!("{} ({})", kind.label(), file.display());
                    for s in part.servers {
                        take_name(&mut servers, &mut disabled, s.name());
                        servers.push(with_origin(s, &label));
                    }
                    for d in part.disabled {
                        take_name(&mut servers, &mut disabled, &d.name);
                        disabled.push(d);
                    }
                }
            }
        }
        if untrusted.is_none() {
            roots.push(value);
        }
    }
    for (name, file, why) in ignored {
        if !taken(&servers, &disabled, &name) {
            disabled.push(DisabledServer {
                name,
                reason: format!(
                    "{}: Gemini CLI ignores this folder's settings until it trusts the folder ({why}); trust it in Gemini CLI, or set GEMINI_CLI_TRUST_WORKSPACE=true",
                    file.display()
                ),
                origin: None,
            });
        }
    }

    let enabled = match workspace.as_deref() {
        Some(w) => extensions(
            ctx,
            &home,
            w,
            &lookup,
            &mut servers,
            &mut disabled,
            &mut warnings,
        ),
        None => Vec::new(),
    };
    let roots: Vec<&Value> = roots.iter().collect();
    apply_lists(&roots, &mut servers, &mut disabled);
    let input = |p: &Path| ctx.input(p);
    super::gemini_policy::apply(
        &super::gemini_policy::Sources {
            input: &input,
            system_policies: (ctx.env)("SWITCHBOARD_GEMINI_SYSTEM_POLICIES")
                .filter(|d| !d.is_empty())
                .map(PathBuf::from),
            roots: &roots,
            home: &home,
            cwd: workspace.as_deref(),
            extensions: &enabled,
            folder_trusted: trust.is_ok(),
        },
        &mut servers,
        &mut warnings,
    );
    if servers.is_empty() && disabled.is_empty() {
        return Err(HostError::ConfigShape {
            path: ctx.path.to_path_buf(),
            message: "Gemini CLI's settings name no MCP servers for this folder (in the system, user or workspace settings, or an enabled extension); add one under \"mcpServers\"".into(),
        });
    }
    Ok(ctx.servers_only(servers, disabled, warnings))
}

/// Variables Gemini CLI does not take from a project's `.env` file.
const EXCLUDED_ENV_VARS: &[&str] = &[
    "DEBUG",
    "DEBUG_MODE",
    "GEMINI_CLI_IDE_SERVER_STDIO_COMMAND",
    "GEMINI_CLI_IDE_SERVER_STDIO_ARGS",
];

/// The `.env` file Gemini CLI loads in a trusted `workspace`: from the workspace up, the first
/// folder's `.gemini/.env` or `.env` (with `advanced.ignoreLocalEnv`, only the home's `.env`),
/// else `~/.gemini/.env`, else `~/.env`.
fn env_file(home: &Path, workspace: Option<&Path>, ignore_local: bool) -> Option<PathBuf> {
    let mut dir = workspace.map(Path::to_path_buf);
    while let Some(d) = dir {
        let gemini = d.join(".gemini/.env");
        if gemini.is_file() {
            return Some(gemini);
        }
        let plain = d.join(".env");
        if plain.is_file() && (!ignore_local || same_file(&d, home)) {
            return Some(plain);
        }
        dir = d.parent().map(Path::to_path_buf);
    }
    [home.join(".gemini/.env"), home.join(".env")]
        .into_iter()
        .find(|f| f.is_file())
}

fn with_origin(mut s: ServerConfig, label: &str) -> ServerConfig {
    s.origin.get_or_insert_with(|| label.to_string());
    s
}

fn taken(servers: &[ServerConfig], disabled: &[DisabledServer], name: &str) -> bool {
    servers.iter().any(|s| s.name() == name) || disabled.iter().any(|d| d.name == name)
}

/// Drop any server of `name`, running or disabled (a later scope replaces it).
fn take_name(servers: &mut Vec<ServerConfig>, disabled: &mut Vec<DisabledServer>, name: &str) {
    servers.retain(|s| s.name() != name);
    disabled.retain(|d| d.name != name);
}

fn read_json(path: &Path) -> Result<Value, String> {
    super::claude_settings::read_json(path)
}

/// Whether Gemini CLI trusts `workspace`, as it decides: `GEMINI_CLI_TRUST_WORKSPACE`, else
/// no folder trust at all (`enabled` false: `security.folderTrust.enabled` of the user's or the
/// system's settings), else
/// the longest rule of `trustedFolders.json` that holds the folder (`TRUST_FOLDER`,
/// `TRUST_PARENT` for the rule's parent, `DO_NOT_TRUST`). Err says why not.
fn trust(ctx: &Context<'_>, home: &Path, workspace: &Path, enabled: bool) -> Result<(), String> {
    match (ctx.env)("GEMINI_CLI_TRUST_WORKSPACE").as_deref() {
        Some("true") => return Ok(()),
        Some("false") => return Err("GEMINI_CLI_TRUST_WORKSPACE is false".into()),
        _ => {}
    }
    if !enabled {
        return Ok(());
    }
    let file = (ctx.env)("GEMINI_CLI_TRUSTED_FOLDERS_PATH")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| home.join(".gemini/trustedFolders.json"));
    ctx.input(&file);
    if !file.exists() {
        return Err(format!("no rule in {} holds it", file.display()));
    }
    let rules = read_json(&file).map_err(|e| format!("{} cannot be read: {e}", file.display()))?;
    let here = workspace
        .canonicalize()
        .unwrap_or_else(|_| workspace.to_path_buf());
    let mut best: Option<(usize, &str)> = None;
    for (rule, level) in rules.as_object().into_iter().flatten() {
        let Some(level) = level.as_str() else {
            continue;
        };
        let rule_path = Path::new(rule);
        let effective = if level == "TRUST_PARENT" {
            rule_path.parent().unwrap_or(rule_path)
        } else {
            rule_path
        };
        let effective = effective
            .canonicalize()
            .unwrap_or_else(|_| effective.to_path_buf());
        if here.starts_with(&effective) && best.is_none_or(|(len, _)| rule.len() > len) {
            best = Some((rule.len(), level));
        }
    }
    match best {
        Some((_, "TRUST_FOLDER" | "TRUST_PARENT")) => Ok(()),
        Some((_, "DO_NOT_TRUST")) => Err(format!("{} says DO_NOT_TRUST", file.display())),
        _ => Err(format!("no rule in {} holds it", file.display())),
    }
}

/// The servers of the user's Gemini CLI extensions that are enabled for `workspace`, after the
/// settings' own (a name already taken stays the settings'). Returns the enabled extensions'
/// names and folders.
fn extensions(
    ctx: &Context<'_>,
    home: &Path,
    workspace: &Path,
    env: &dyn Fn(&str) -> Option<String>,
    servers: &mut Vec<ServerConfig>,
    disabled: &mut Vec<DisabledServer>,
    warnings: &mut Vec<String>,
) -> Vec<(String, PathBuf)> {
    let mut enabled_roots = Vec::new();
    let dir = home.join(".gemini/extensions");
    let enablement_file = dir.join("extension-enablement.json");
    ctx.input(&enablement_file);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return enabled_roots;
    };
    let enablement = read_json(&enablement_file).unwrap_or(Value::Null);
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    for installed in dirs {
        let link = read_json(&installed.join(".gemini-extension-install.json"))
            .ok()
            .filter(|m| m.get("type").and_then(Value::as_str) == Some("link"))
            .and_then(|m| m.get("source").and_then(Value::as_str).map(PathBuf::from));
        let root = link.unwrap_or_else(|| installed.clone());
        let manifest = root.join("gemini-extension.json");
        ctx.input(&manifest);
        if !manifest.is_file() {
            continue;
        }
        let config = match read_json(&manifest) {
            Ok(c) => c,
            Err(e) => {
                warnings.push(format!(
                    "Gemini CLI extension in {}: its MCP servers are left out: {} cannot be read: {e}",
                    installed.display(),
                    manifest.display()
                ));
                continue;
            }
        };
        let Some(name) = config
            .get("name")
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
        else {
            warnings.push(format!(
                "{}: a Gemini CLI extension needs a \"name\"; its MCP servers are left out",
                manifest.display()
            ));
            continue;
        };
        let active = enabled(&enablement, name, workspace);
        if active {
            enabled_roots.push((name.to_string(), root.clone()));
        }
        let Some(map) = config.get("mcpServers").and_then(Value::as_object) else {
            continue;
        };
        // The extension's settings, as Gemini CLI stores those that are not secret: in the
        // folder it installed the extension in (named after it).
        let env_file = installed.join(".env");
        ctx.input(&env_file);
        let settings: BTreeMap<String, String> = std::fs::read_to_string(&env_file)
            .ok()
            .and_then(|t| super::dotenv::parse(&t).ok())
            .unwrap_or_default()
            .into_iter()
            .collect();
        let declared: Vec<&str> = config
            .get("settings")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|s| s.get("envVar").and_then(Value::as_str))
            .collect();
        let builtins = [
            ("extensionPath", root.display().to_string()),
            ("workspacePath", workspace.display().to_string()),
            ("/", std::path::MAIN_SEPARATOR.to_string()),
            ("pathSeparator", std::path::MAIN_SEPARATOR.to_string()),
        ];
        let lookup = |var: &str| settings.get(var).cloned().or_else(|| env(var));
        let origin = format!("Gemini CLI extension {name} ({})", root.display());
        for (server, entry) in map {
            if taken(servers, disabled, server) {
                continue;
            }
            if !active {
                disabled.push(DisabledServer {
                    name: server.clone(),
                    reason: format!(
                        "its Gemini CLI extension {name} is disabled for this folder ({})",
                        enablement_file.display()
                    ),
                    origin: None,
                });
                continue;
            }
            let mut entry = hydrate(entry, &builtins);
            entry = bare_vars(&entry, &lookup);
            if let Some(obj) = entry.as_object_mut() {
                obj.remove("trust");
                if obj.contains_key("command") {
                    let env = obj
                        .entry("env")
                        .or_insert_with(|| Value::Object(Map::new()));
                    if let Some(env) = env.as_object_mut() {
                        for var in &declared {
                            if let Some(value) = settings.get(*var) {
                                env.entry(var.to_string())
                                    .or_insert_with(|| Value::String(escape(value)));
                            }
                        }
                    }
                }
            }
            let mut one = Map::new();
            one.insert(server.clone(), entry);
            let text = serde_json::json!({ "mcpServers": one }).to_string();
            match Config::parse_with(&manifest, &text, &lookup, None, false) {
                Ok(config) => {
                    servers.extend(config.servers.into_iter().map(|s| with_origin(s, &origin)));
                    disabled.extend(config.disabled);
                    warnings.extend(config.warnings);
                }
                Err(e) => warnings.push(format!(
                    "Gemini CLI extension {name}: server {server:?} left out: {e}"
                )),
            }
        }
    }
    enabled_roots
}

/// A value written into an entry that is expanded afterwards: its `${` stays literal.
fn escape(value: &str) -> String {
    value.replace("${", "$${")
}

/// Every string in `value` with Gemini CLI's extension variables (`${extensionPath}`,
/// `${workspacePath}`, `${/}`, `${pathSeparator}`) put in; other `${...}` are left for the
/// environment.
fn hydrate(value: &Value, vars: &[(&str, String)]) -> Value {
    match value {
        Value::String(s) => {
            let mut out = s.clone();
            for (name, v) in vars {
                out = out.replace(&format!("${{{name}}}"), &escape(v));
            }
            Value::String(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(|v| hydrate(v, vars)).collect()),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, v)| (k.clone(), hydrate(v, vars)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Gemini CLI's bare `$NAME` in every string of `value`: the variable's value when `lookup` has
/// it, else left as written (as Gemini CLI does, so `$1` in a shell line survives). `${...}`
/// is switchboard's own expansion, done later.
pub fn bare_vars(value: &Value, lookup: &dyn Fn(&str) -> Option<String>) -> Value {
    match value {
        Value::String(s) if s.contains('$') => Value::String(bare_in(s, lookup)),
        Value::Array(a) => Value::Array(a.iter().map(|v| bare_vars(v, lookup)).collect()),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, v)| (k.clone(), bare_vars(v, lookup)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn bare_in(s: &str, lookup: &dyn Fn(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        // `$$` and `${` are the later expansion's to read: keep them whole.
        if after.starts_with('$') || after.starts_with('{') {
            out.push('$');
            out.push_str(&after[..1]);
            rest = &after[1..];
            continue;
        }
        let len = after
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(after.len());
        let name = &after[..len];
        match (!name.is_empty()).then(|| lookup(name)).flatten() {
            Some(v) => out.push_str(&escape(&v)),
            None => {
                out.push('$');
                out.push_str(name);
            }
        }
        rest = &after[len..];
    }
    out.push_str(rest);
    out
}

/// Whether extension `name` is enabled in `workspace` by Gemini CLI's
/// `extension-enablement.json`: enabled unless a rule says otherwise, the last rule that
/// matches the folder winning. A rule is a folder (`/a/b/`), `*` at its end taking the folders
/// under it too, `!` before it disabling.
fn enabled(enablement: &Value, name: &str, workspace: &Path) -> bool {
    let Some(rules) = enablement
        .get(name)
        .and_then(|e| e.get("overrides"))
        .and_then(Value::as_array)
    else {
        return true;
    };
    let here = slashed(&workspace.display().to_string());
    let mut on = true;
    for rule in rules.iter().filter_map(Value::as_str) {
        let (disable, rule) = match rule.strip_prefix('!') {
            Some(r) => (true, r),
            None => (false, rule),
        };
        if glob_match(rule, &here) {
            on = !disable;
        }
    }
    on
}

/// `path` with `/` separators and a leading and trailing `/`, as Gemini CLI compares folders.
fn slashed(path: &str) -> String {
    let mut p = path.replace('\\', "/");
    if !p.starts_with('/') {
        p.insert(0, '/');
    }
    if !p.ends_with('/') {
        p.push('/');
    }
    p
}

/// Gemini CLI's folder glob: `*` (with the `/` before it, if any) matches nothing or that `/`
/// and anything after it; all else is literal. Matched in time proportional to the pattern's
/// length times the text's, whatever the stars.
fn glob_match(pattern: &str, text: &str) -> bool {
    enum Token {
        Byte(u8),
        /// `*`: anything, or nothing.
        Any,
        /// `/*`: nothing, or `/` and anything.
        SlashAny,
    }
    let p = pattern.as_bytes();
    let mut tokens = Vec::with_capacity(p.len());
    let mut i = 0;
    while i < p.len() {
        if p[i] == b'/' && p.get(i + 1) == Some(&b'*') {
            tokens.push(Token::SlashAny);
            i += 2;
        } else {
            tokens.push(if p[i] == b'*' {
                Token::Any
            } else {
                Token::Byte(p[i])
            });
            i += 1;
        }
    }
    let t = text.as_bytes();
    let n = t.len();
    // `rest[j]`: the tokens after the current one match `t[j..]`.
    let mut rest = vec![false; n + 1];
    rest[n] = true;
    for token in tokens.iter().rev() {
        // `later[j]`: `rest` holds at some position from j on.
        let mut later = vec![false; n + 2];
        for j in (0..=n).rev() {
            later[j] = later[j + 1] || rest[j];
        }
        rest = (0..=n)
            .map(|j| match token {
                Token::Byte(c) => j < n && t[j] == *c && rest[j + 1],
                Token::Any => later[j],
                Token::SlashAny => rest[j] || (j < n && t[j] == b'/' && later[j + 1]),
            })
            .collect();
    }
    rest[0]
}

/// Gemini CLI's server lists over every gathered server: `mcp.allowed` / `mcp.excluded` (or
/// the older `allowMCPServers` / `excludeMCPServers`) of the last of `roots` that sets each.
fn apply_lists(
    roots: &[&Value],
    servers: &mut Vec<ServerConfig>,
    disabled: &mut Vec<DisabledServer>,
) {
    let mut merged = Map::new();
    let mut mcp = Map::new();
    for root in roots {
        for key in ["allowMCPServers", "excludeMCPServers"] {
            if let Some(v) = root.get(key) {
                merged.insert(key.into(), v.clone());
            }
        }
        if let Some(m) = root.get("mcp").and_then(Value::as_object) {
            for key in ["allowed", "excluded"] {
                if let Some(v) = m.get(key) {
                    mcp.insert(key.into(), v.clone());
                }
            }
        }
    }
    merged.insert("mcp".into(), Value::Object(mcp));
    merged.insert("mcpServers".into(), Value::Object(Map::new()));
    super::mcp_json::gemini_lists(&Value::Object(merged), servers, disabled);
}

#[cfg(test)]
mod tests {
    use super::{bare_in, glob_match, slashed};

    #[test]
    fn folder_rules_match_as_gemini_cli_matches_them() {
        let here = slashed("/home/u/proj");
        assert!(glob_match("/home/u/proj/", &here));
        assert!(!glob_match("/home/u/", &here));
        assert!(glob_match("/home/u/*", &here));
        assert!(glob_match("/home/u/proj/*", &here));
        assert!(!glob_match("/home/u/pro/*", &here));
        assert!(!glob_match("/home/other/*", &here));
        assert!(glob_match("/home/*/proj/", &here));
        assert!(!glob_match("/home/u/proj", &here));
        // Many stars against a long path: still quick, and still right.
        let long = format!("/{}/", "a".repeat(4000));
        assert!(!glob_match(&format!("/{}b/", "*a".repeat(200)), &long));
    }

    #[test]
    fn bare_variables_are_put_in_when_set_and_left_when_not() {
        let env = |n: &str| (n == "TOKEN").then(|| "t${x}".to_string());
        assert_eq!(bare_in("Bearer $TOKEN", &env), "Bearer t$${x}");
        assert_eq!(
            bare_in("awk '{print $1}' $NOPE", &env),
            "awk '{print $1}' $NOPE"
        );
        assert_eq!(
            bare_in("${TOKEN} $${TOKEN} $", &env),
            "${TOKEN} $${TOKEN} $"
        );
    }
}
