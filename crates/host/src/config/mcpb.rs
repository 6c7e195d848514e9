//! MCP Bundles (`.mcpb`, once `.dxt`): a server packed with a `manifest.json` that says how to
//! run it, as Claude Desktop installs them. A manifest becomes one server entry the way the
//! bundle format describes: `mcp_config` (with the current platform's `platform_overrides`), or
//! for a bundle without one a command from its `server.type` and `entry_point`; `${__dirname}`
//! (the bundle's folder), `${HOME}`, `${DESKTOP}`, `${DOCUMENTS}`, `${DOWNLOADS}`,
//! `${pathSeparator}` / `${/}` and `${user_config.KEY}` substituted; an argument that is exactly
//! a multi-valued `${user_config.KEY}` becomes one argument per value. The command runs in the
//! bundle's folder.
//!
//! A `user_config` value is the environment's `SWITCHBOARD_INPUT_KEY` when set, else the one
//! saved for it (Claude Desktop's extension settings, a config entry's `user_config`), else the
//! manifest's default. A
//! required value that is missing disables the server and names the variable that gives it;
//! an optional one that is missing leaves nothing (an argument that was only that value is
//! dropped) where Claude Desktop would pass the placeholder's text on.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Map, Value, json};

use super::entry::Context;
use super::expand::input_var;
use super::{Config, ConfigSource, DisabledServer, Settings};
use crate::error::HostError;

/// Whether `root`, a parsed JSON file, is a bundle's manifest: a `server` object and a
/// `manifest_version` (or the older `dxt_version`).
pub fn is_manifest(root: &Value) -> bool {
    root.get("server").is_some_and(Value::is_object)
        && (root.get("manifest_version").is_some() || root.get("dxt_version").is_some())
}

/// The server's name: the manifest's `name`, else `fallback`.
pub fn name(manifest: &Value, fallback: &str) -> String {
    manifest
        .get("name")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .unwrap_or(fallback)
        .to_string()
}

/// A bundle's manifest read as the config (`--config manifest.json`, a bundle's folder or a
/// `.mcpb` file): its one server, ready or disabled with why.
pub fn parse(ctx: &Context<'_>, root: &Value) -> Result<Config, HostError> {
    let folder = std::path::absolute(ctx.base).unwrap_or_else(|_| ctx.base.to_path_buf());
    let fallback = folder.file_name().map_or_else(
        || "bundle".to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let home = ctx.home();
    let mut config = read(
        ctx.path,
        root,
        &name(root, &fallback),
        &Map::new(),
        Host::Alone,
        ctx.env,
        home.as_deref(),
    )?;
    config.inputs.extend(ctx.take_inputs());
    // Run on its own, the bundle is most likely its author's: say what would trip its users.
    let dir = std::path::absolute(ctx.base).unwrap_or_else(|_| ctx.base.to_path_buf());
    config.warnings.extend(
        check(root, &dir)
            .into_iter()
            .map(|w| format!("{}: {w}", ctx.path.display())),
    );
    if let Some(server) = config.servers.first_mut() {
        server.manifest_tools = declared_tools(root);
    }
    Ok(config)
}

/// The names of the tools a manifest lists, to compare with the live server's; `None` when it
/// lists none or says they are generated at run time (`tools_generated`).
pub fn declared_tools(manifest: &Value) -> Option<Vec<String>> {
    if manifest.get("tools_generated").and_then(Value::as_bool) == Some(true) {
        return None;
    }
    let tools = manifest.get("tools").and_then(Value::as_array)?;
    Some(
        tools
            .iter()
            .filter_map(|t| t.get("name").and_then(Value::as_str))
            .map(str::to_string)
            .collect(),
    )
}

/// The user_config types the bundle format defines.
const SETTING_TYPES: &[&str] = &["string", "number", "boolean", "directory", "file"];

/// What is wrong in a manifest that would still let its server run: a required field missing,
/// an entry point or a `${__dirname}` file that is not in the bundle, a `user_config` setting
/// of an unknown type or whose default does not fit it, a `${user_config.KEY}` of an
/// undeclared KEY.
pub fn check(manifest: &Value, dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for field in ["name", "version", "description"] {
        if manifest.get(field).and_then(Value::as_str).is_none() {
            out.push(format!(
                "the manifest has no `{field}`, which the bundle format requires"
            ));
        }
    }
    if manifest
        .pointer("/author/name")
        .and_then(Value::as_str)
        .is_none()
    {
        out.push("the manifest has no `author.name`, which the bundle format requires".into());
    }
    let server = manifest.get("server");
    if let Some(entry) = server
        .and_then(|s| s.get("entry_point"))
        .and_then(Value::as_str)
        && !dir.join(entry).exists()
    {
        out.push(format!(
            "`server.entry_point` {entry:?} is not in the bundle"
        ));
    }
    let config = server.and_then(|s| s.get("mcp_config"));
    let mut texts: Vec<&str> = Vec::new();
    collect_strings(config, &mut texts);
    for text in &texts {
        if let Some(rest) = text.strip_prefix("${__dirname}/") {
            let rest = rest.split("${").next().unwrap_or_default();
            if !rest.is_empty() && !rest.ends_with('/') && !dir.join(rest).exists() {
                out.push(format!(
                    "`server.mcp_config` names {text:?}, but {rest:?} is not in the bundle"
                ));
            }
        }
    }
    let declared = manifest.get("user_config").and_then(Value::as_object);
    let mut referenced = std::collections::BTreeSet::new();
    for text in &texts {
        let mut rest = *text;
        while let Some(at) = rest.find("${user_config.") {
            let after = &rest[at + "${user_config.".len()..];
            let Some(end) = after.find('}') else { break };
            referenced.insert(&after[..end]);
            rest = &after[end..];
        }
    }
    for key in referenced {
        if !declared.is_some_and(|d| d.contains_key(key)) {
            out.push(format!(
                "`server.mcp_config` uses ${{user_config.{key}}}, which `user_config` does not declare, so it is always empty"
            ));
        }
    }
    for (key, option) in declared.into_iter().flatten() {
        let kind = option.get("type").and_then(Value::as_str).unwrap_or("");
        if !SETTING_TYPES.contains(&kind) {
            out.push(format!(
                "`user_config.{key}.type` is {kind:?}, not one of {}",
                SETTING_TYPES.join(", ")
            ));
            continue;
        }
        let multiple = option.get("multiple").and_then(Value::as_bool) == Some(true);
        let fits = |v: &Value| match kind {
            "number" => v.is_number(),
            "boolean" => v.is_boolean(),
            _ => v.is_string(),
        };
        if let Some(default) = option.get("default") {
            let ok = match default {
                Value::Array(items) => multiple && items.iter().all(fits),
                other => fits(other),
            };
            if !ok {
                out.push(format!(
                    "`user_config.{key}.default` does not fit its type {kind:?}{}",
                    if multiple { " (or a list of them)" } else { "" }
                ));
            }
        }
    }
    out
}

/// Every string in `value`, at any depth.
fn collect_strings<'a>(value: Option<&'a Value>, out: &mut Vec<&'a str>) {
    match value {
        Some(Value::String(s)) => out.push(s),
        Some(Value::Array(items)) => items.iter().for_each(|i| collect_strings(Some(i), out)),
        Some(Value::Object(map)) => map.values().for_each(|v| collect_strings(Some(v), out)),
        _ => {}
    }
}

/// The one server of the bundle whose manifest, at `manifest_path`, is `manifest`, named
/// `name`, with the values `saved` for it: ready, or disabled with why.
pub fn read(
    manifest_path: &Path,
    manifest: &Value,
    name: &str,
    saved: &Map<String, Value>,
    host: Host,
    env: &dyn Fn(&str) -> Option<String>,
    home: Option<&Path>,
) -> Result<Config, HostError> {
    let dir = manifest_path.parent().unwrap_or(Path::new("."));
    let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    let at = Surroundings {
        dir: &dir,
        saved,
        env,
        platform: platform(),
        home,
        host,
    };
    match entry(manifest, &at) {
        Ok(entry) => {
            let mut one = Map::new();
            one.insert(name.to_string(), entry);
            let text = json!({ "mcpServers": one }).to_string();
            Config::parse_with(manifest_path, &text, env, None, false)
        }
        Err(why) => Ok(Config {
            source: ConfigSource::File {
                path: manifest_path.to_path_buf(),
            },
            servers: Vec::new(),
            disabled: vec![DisabledServer {
                name: name.to_string(),
                reason: format!("{}: {why}", manifest_path.display()),
                origin: None,
            }],
            profiles: Default::default(),
            settings: Settings::default(),
            warnings: Vec::new(),
            inputs: Vec::new(),
        }),
    }
}

/// Where the bundle is being run from, for what a missing value's message advises.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Host {
    /// A bundle given to switchboard directly: values come from the environment only.
    Alone,
    /// An extension Claude Desktop installed: its settings hold the values, but not the
    /// sensitive ones, which Claude Desktop keeps in the system's keychain.
    ClaudeDesktop,
    /// A config entry's `bundle`: its `user_config` holds the values.
    Config,
    /// A Claude Code plugin's `userConfig`: its settings hold the values, but not the sensitive
    /// ones, which Claude Code keeps in the keychain on macOS.
    ClaudeCode,
}

/// The manifest of the bundle at `path`: a `.mcpb` (or `.dxt`) file, unpacked into the user
/// cache; a folder holding `manifest.json`; or the manifest itself. The error does not name
/// `path`; the caller does.
pub fn manifest_of(path: &Path) -> Result<std::path::PathBuf, String> {
    if path.is_dir() {
        let manifest = path.join("manifest.json");
        return if manifest.is_file() {
            Ok(manifest)
        } else {
            Err("the folder holds no manifest.json, so it is not an MCP bundle's folder".into())
        };
    }
    if !path.is_file() {
        return Err("no such file or folder".into());
    }
    if matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("mcpb" | "dxt")
    ) {
        let root = super::mcpb_archive::cache_root()
            .ok_or("no user cache folder to unpack the bundle in")?;
        let dir = super::mcpb_archive::unpack(path, &root)?;
        return Ok(dir.join("manifest.json"));
    }
    Ok(path.to_path_buf())
}

/// What the entry needs from around it.
pub struct Surroundings<'a> {
    /// The bundle's folder (`${__dirname}`), absolute.
    pub dir: &'a Path,
    /// The values the host saved for `user_config` (Claude Desktop's `userConfig`).
    pub saved: &'a Map<String, Value>,
    /// The environment.
    pub env: &'a dyn Fn(&str) -> Option<String>,
    /// The platform as bundles name it: `darwin`, `win32` or `linux`.
    pub platform: &'a str,
    /// The user's home folder.
    pub home: Option<&'a Path>,
    pub host: Host,
}

/// The platform this runs on, as bundles name it.
pub fn platform() -> &'static str {
    match std::env::consts::OS {
        "macos" => "darwin",
        "windows" => "win32",
        other => other,
    }
}

/// A variable's value: one string, or several (a `multiple` directory or file choice).
#[derive(Clone, Debug, PartialEq)]
pub enum Var {
    One(String),
    Many(Vec<String>),
}

impl Var {
    /// The value inside a longer string: several parts joined with the platform's path-list
    /// separator (they are directories or files).
    fn joined(&self) -> String {
        match self {
            Var::One(v) => v.clone(),
            Var::Many(vs) => vs.join(if cfg!(windows) { ";" } else { ":" }),
        }
    }
}

/// The manifest's server as a `mcpServers` entry (`command`, `args`, `env`, `cwd`), every
/// variable substituted; any `${` left is written `$${` so the entry reader keeps it as text.
/// `Err` says why the bundle cannot run here.
pub fn entry(manifest: &Value, at: &Surroundings<'_>) -> Result<Value, String> {
    let server = manifest
        .get("server")
        .and_then(Value::as_object)
        .ok_or("the manifest has no `server` object")?;
    if let Some(platforms) = manifest
        .pointer("/compatibility/platforms")
        .and_then(Value::as_array)
    {
        let names: Vec<&str> = platforms.iter().filter_map(Value::as_str).collect();
        if !names.is_empty() && !names.contains(&at.platform) {
            return Err(format!(
                "the bundle runs on {} only (`compatibility.platforms`), not on {}",
                names.join(", "),
                at.platform
            ));
        }
    }
    let kind = server.get("type").and_then(Value::as_str).unwrap_or("");
    let (command, args, env) = match server.get("mcp_config") {
        Some(Value::Object(config)) => configured(config, at.platform)?,
        Some(_) => return Err("`server.mcp_config` must be an object".into()),
        None => from_type(kind, server.get("entry_point").and_then(Value::as_str))?,
    };
    let vars = variables(manifest, at)?;
    let command = escape(&substitute(&command, &vars));
    let command = if kind == "binary"
        && at.platform == "win32"
        && Path::new(&command).extension().is_none()
    {
        format!("{command}.exe")
    } else {
        command
    };
    let mut out_args = Vec::new();
    for arg in &args {
        match whole_user_value(arg) {
            Some(key) => match vars.get(&format!("user_config.{key}")) {
                Some(Var::One(v)) => out_args.push(escape(v)),
                Some(Var::Many(vs)) => out_args.extend(vs.iter().map(|v| escape(v))),
                None => {}
            },
            None => out_args.push(escape(&substitute(arg, &vars))),
        }
    }
    let env: Map<String, Value> = env
        .into_iter()
        .map(|(k, v)| (k, Value::String(escape(&substitute(&v, &vars)))))
        .collect();
    Ok(json!({
        "command": command,
        "args": out_args,
        "env": env,
        "cwd": escape(&at.dir.display().to_string()),
    }))
}

type Launch = (String, Vec<String>, BTreeMap<String, String>);

/// `mcp_config`, with the fields `platform_overrides` gives for this platform in place of the
/// general ones.
fn configured(config: &Map<String, Value>, platform: &str) -> Result<Launch, String> {
    let over = config
        .get("platform_overrides")
        .and_then(|p| p.get(platform))
        .and_then(Value::as_object);
    let field = |key: &str| over.and_then(|o| o.get(key)).or_else(|| config.get(key));
    let at = |key: &str| {
        if over.is_some_and(|o| o.contains_key(key)) {
            format!("`server.mcp_config.platform_overrides.{platform}.{key}`")
        } else {
            format!("`server.mcp_config.{key}`")
        }
    };
    let command = match field("command") {
        Some(Value::String(c)) if !c.trim().is_empty() => c.clone(),
        Some(Value::String(_)) | None => {
            return Err(format!("{} is missing or empty", at("command")));
        }
        Some(_) => return Err(format!("{} must be a string", at("command"))),
    };
    let args = match field("args") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|a| scalar(a).ok_or_else(|| format!("{} must hold strings", at("args"))))
            .collect::<Result<_, _>>()?,
        Some(_) => return Err(format!("{} must be a list of strings", at("args"))),
    };
    let env = match field("env") {
        None | Some(Value::Null) => BTreeMap::new(),
        Some(Value::Object(vars)) => vars
            .iter()
            .map(|(k, v)| {
                scalar(v)
                    .map(|v| (k.clone(), v))
                    .ok_or_else(|| format!("{} `{k}` must be a string", at("env")))
            })
            .collect::<Result<_, _>>()?,
        Some(_) => return Err(format!("{} must be an object of strings", at("env"))),
    };
    Ok((command, args, env))
}

/// The command of a bundle without `mcp_config`, from its `server.type`: Node and Python run
/// the entry point, a binary is the entry point, and `uv` runs it in the bundle's project.
fn from_type(kind: &str, entry_point: Option<&str>) -> Result<Launch, String> {
    let entry = entry_point
        .filter(|e| !e.trim().is_empty())
        .ok_or("the manifest has neither `server.mcp_config` nor `server.entry_point`")?;
    let file = format!("${{__dirname}}/{entry}");
    let python = if cfg!(windows) { "python" } else { "python3" };
    let (command, args) = match kind {
        "node" => ("node".to_string(), vec![file]),
        "python" => (python.to_string(), vec![file]),
        "binary" => (file, Vec::new()),
        "uv" => (
            "uv".to_string(),
            vec![
                "run".into(),
                "--directory".into(),
                "${__dirname}".into(),
                entry.to_string(),
            ],
        ),
        other => {
            return Err(format!(
                "`server.type` {other:?} is not one switchboard can run without `server.mcp_config` (node, python, binary, uv)"
            ));
        }
    };
    Ok((command, args, BTreeMap::new()))
}

/// A string, number or boolean as text.
fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// Every variable a manifest may use, `user_config.KEY` included; `Err` names the required
/// values that are missing and how to give them.
fn variables(manifest: &Value, at: &Surroundings<'_>) -> Result<BTreeMap<String, Var>, String> {
    let mut vars = BTreeMap::new();
    let sep = std::path::MAIN_SEPARATOR.to_string();
    vars.insert("__dirname".into(), Var::One(at.dir.display().to_string()));
    vars.insert("pathSeparator".into(), Var::One(sep.clone()));
    vars.insert("/".into(), Var::One(sep));
    if let Some(home) = at.home {
        let user = directories::UserDirs::new();
        let place = |pick: fn(&directories::UserDirs) -> Option<&Path>, name: &str| {
            user.as_ref()
                .filter(|u| u.home_dir() == home)
                .and_then(pick)
                .map_or_else(|| home.join(name), Path::to_path_buf)
                .display()
                .to_string()
        };
        vars.insert("HOME".into(), Var::One(home.display().to_string()));
        vars.insert(
            "DESKTOP".into(),
            Var::One(place(directories::UserDirs::desktop_dir, "Desktop")),
        );
        vars.insert(
            "DOCUMENTS".into(),
            Var::One(place(directories::UserDirs::document_dir, "Documents")),
        );
        vars.insert(
            "DOWNLOADS".into(),
            Var::One(place(directories::UserDirs::download_dir, "Downloads")),
        );
    }
    let declared = manifest.get("user_config").and_then(Value::as_object);
    let user = user_values(declared, at.saved, at.env, at.host, &vars)?;
    vars.extend(user.0);
    Ok(vars)
}

/// The `user_config.KEY` variables of a declaration's settings, as [`user_values`] found them.
pub struct UserValues(BTreeMap<String, Var>);

/// The values of the settings `declared` (a bundle's `user_config`, a Claude Code plugin's
/// `userConfig`): each from the environment's `SWITCHBOARD_INPUT_KEY`, else `saved`, else its
/// default (with `system` variables put in); `Err` names the required ones missing and how to
/// give them.
pub fn user_values(
    declared: Option<&Map<String, Value>>,
    saved: &Map<String, Value>,
    env: &dyn Fn(&str) -> Option<String>,
    host: Host,
    system: &BTreeMap<String, Var>,
) -> Result<UserValues, String> {
    let empty = Map::new();
    let declared = declared.unwrap_or(&empty);
    let mut missing = Vec::new();
    // Values saved for keys the manifest does not declare still substitute, as in Claude Desktop.
    let keys = declared
        .keys()
        .chain(saved.keys().filter(|k| !declared.contains_key(*k)));
    let mut user = BTreeMap::new();
    for key in keys {
        let option = declared.get(key);
        let from_env = env(&input_var(key)).filter(|v| !v.is_empty()).map(Var::One);
        let value = from_env
            .or_else(|| saved.get(key).and_then(to_var))
            .or_else(|| {
                option
                    .and_then(|o| o.get("default"))
                    .and_then(to_var)
                    .map(|d| match d {
                        Var::One(s) => Var::One(substitute(&s, system)),
                        Var::Many(items) => {
                            Var::Many(items.iter().map(|s| substitute(s, system)).collect())
                        }
                    })
            });
        let required = option
            .and_then(|o| o.get("required"))
            .and_then(Value::as_bool)
            .unwrap_or(false);
        match value {
            Some(v) => {
                user.insert(format!("user_config.{key}"), v);
            }
            None if required => missing.push(describe_missing(key, option, host)),
            None => {}
        }
    }
    if !missing.is_empty() {
        return Err(format!(
            "{} {} ({})",
            match host {
                Host::ClaudeCode => "the plugin needs",
                _ => "the bundle needs",
            },
            missing.join("; "),
            match host {
                Host::Alone => "a bundle run on its own takes its settings from the environment",
                Host::ClaudeDesktop =>
                    "set it in Claude Desktop's settings for the extension, or in the environment",
                Host::Config => "set it in the entry's `user_config`, or in the environment",
                Host::ClaudeCode =>
                    "set it with Claude Code's /plugin (Configure options), or in the environment",
            }
        ));
    }
    Ok(UserValues(user))
}

/// `entry` (a server entry's JSON) with each `${user_config.KEY}` in its strings replaced by
/// the value in `user` (nothing when it has none); an array item that is only a multi-valued
/// one becomes one item per value. Other `${...}` are left for the entry reader; the values put
/// in are written so that it reads them as they are.
pub fn fill_user_config(entry: &Value, user: &UserValues) -> Value {
    match entry {
        Value::String(s) => Value::String(fill_text(s, &user.0)),
        Value::Array(items) => {
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                match item.as_str().and_then(whole_user_value) {
                    Some(key) => match user.0.get(&format!("user_config.{key}")) {
                        Some(Var::One(v)) => out.push(Value::String(escape(v))),
                        Some(Var::Many(vs)) => {
                            out.extend(vs.iter().map(|v| Value::String(escape(v))));
                        }
                        None => {}
                    },
                    None => out.push(fill_user_config(item, user)),
                }
            }
            Value::Array(out)
        }
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), fill_user_config(v, user)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// `text` with each `${user_config.KEY}` replaced by its escaped value; the rest as written.
fn fill_text(text: &str, user: &BTreeMap<String, Var>) -> String {
    replace_vars(text, |name| {
        name.starts_with("user_config.").then(|| {
            user.get(name)
                .map(|v| escape(&v.joined()))
                .unwrap_or_default()
        })
    })
}

/// "`api_key` (API Key), from SWITCHBOARD_INPUT_API_KEY", with where a sensitive value went.
fn describe_missing(key: &str, option: Option<&Value>, host: Host) -> String {
    let title = option
        .and_then(|o| o.get("title"))
        .and_then(Value::as_str)
        .map(|t| format!(" ({t})"))
        .unwrap_or_default();
    let sensitive = option
        .and_then(|o| o.get("sensitive"))
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let keychain = match host {
        Host::ClaudeDesktop if sensitive => {
            ", which Claude Desktop keeps in the system keychain where switchboard cannot read it"
        }
        Host::ClaudeCode if sensitive => {
            ", which Claude Code keeps in the macOS keychain (elsewhere in ~/.claude/.credentials.json, which is read)"
        }
        _ => "",
    };
    format!(
        "`{key}`{title}{keychain}: give it in the environment variable {}",
        input_var(key)
    )
}

/// A saved or default value as a variable; nothing for null, an empty string or an empty list.
fn to_var(v: &Value) -> Option<Var> {
    match v {
        Value::Array(items) => {
            let items: Vec<String> = items
                .iter()
                .filter_map(|i| scalar(i).or_else(|| (!i.is_null()).then(|| i.to_string())))
                .filter(|s| !s.is_empty())
                .collect();
            (!items.is_empty()).then_some(Var::Many(items))
        }
        Value::Null => None,
        Value::Object(_) => Some(Var::One(v.to_string())),
        other => scalar(other).filter(|s| !s.is_empty()).map(Var::One),
    }
}

/// The KEY of an argument that is exactly `${user_config.KEY}`.
fn whole_user_value(arg: &str) -> Option<&str> {
    arg.strip_prefix("${user_config.")?.strip_suffix('}')
}

/// `text` with each known `${NAME}` replaced; a value with several parts is joined with the
/// platform's path-list separator (they are directories or files). An unknown `${NAME}` stays
/// as written, but a `${user_config.KEY}` with no value becomes nothing.
fn substitute(text: &str, vars: &BTreeMap<String, Var>) -> String {
    replace_vars(text, |name| match vars.get(name) {
        Some(v) => Some(v.joined()),
        None => name.starts_with("user_config.").then(String::new),
    })
}

/// `text` with each `${NAME}` replaced by what `value(NAME)` gives; one it gives nothing for,
/// and a `${` without its `}`, stay as written.
fn replace_vars(text: &str, value: impl Fn(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else { break };
        out.push_str(&rest[..start]);
        match value(&after[..end]) {
            Some(v) => out.push_str(&v),
            None => out.push_str(&rest[start..start + 2 + end + 1]),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

/// `text` with each `${` written `$${`, which the entry reader's expansion reads back as `${`.
fn escape(text: &str) -> String {
    text.replace("${", "$${")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at<'a>(
        dir: &'a Path,
        saved: &'a Map<String, Value>,
        env: &'a dyn Fn(&str) -> Option<String>,
        platform: &'a str,
    ) -> Surroundings<'a> {
        Surroundings {
            dir,
            saved,
            env,
            platform,
            home: Some(Path::new("/home/u")),
            host: Host::ClaudeDesktop,
        }
    }

    fn filesystem() -> Value {
        json!({
            "manifest_version": "0.3",
            "name": "filesystem",
            "server": {
                "type": "node",
                "entry_point": "dist/index.js",
                "mcp_config": {
                    "command": "node",
                    "args": ["${__dirname}/dist/index.js", "${user_config.allowed_directories}"],
                    "env": {"DEBUG": "${user_config.debug}", "LIMIT": "${user_config.limit}"}
                }
            },
            "user_config": {
                "allowed_directories": {
                    "type": "directory", "multiple": true, "required": true,
                    "default": ["${HOME}/Desktop"]
                },
                "debug": {"type": "boolean", "default": false},
                "limit": {"type": "number"}
            }
        })
    }

    #[test]
    fn a_manifest_is_told_from_other_json() {
        assert!(is_manifest(&filesystem()));
        assert!(is_manifest(&json!({"dxt_version": "0.1", "server": {}})));
        assert!(!is_manifest(&json!({"mcpServers": {}})));
        assert!(!is_manifest(&json!({"server": {}})));
        assert_eq!(name(&filesystem(), "x"), "filesystem");
        assert_eq!(name(&json!({"name": " "}), "x"), "x");
    }

    #[test]
    fn variables_and_several_values_become_arguments_as_the_format_says() {
        let saved = json!({"allowed_directories": ["/a b", "/c"], "debug": true, "limit": 10});
        let saved = saved.as_object().unwrap();
        let no_env = |_: &str| None;
        let e = entry(
            &filesystem(),
            &at(Path::new("/ext/fs"), saved, &no_env, "linux"),
        )
        .unwrap();
        assert_eq!(
            e,
            json!({
                "command": "node",
                "args": ["/ext/fs/dist/index.js", "/a b", "/c"],
                "env": {"DEBUG": "true", "LIMIT": "10"},
                "cwd": "/ext/fs"
            })
        );
    }

    #[test]
    fn defaults_substitute_the_home_and_the_environment_wins_over_saved_values() {
        let empty = Map::new();
        let no_env = |_: &str| None;
        let e = entry(
            &filesystem(),
            &at(Path::new("/ext/fs"), &empty, &no_env, "linux"),
        )
        .unwrap();
        // A default that names the home; an optional value with no default leaves nothing.
        assert_eq!(e["args"][1], json!("/home/u/Desktop"));
        assert_eq!(e["env"]["LIMIT"], json!(""));
        assert_eq!(e["env"]["DEBUG"], json!("false"));

        let saved = json!({"allowed_directories": ["/saved"]});
        let env = |k: &str| (k == "SWITCHBOARD_INPUT_ALLOWED_DIRECTORIES").then(|| "/env".into());
        let e = entry(
            &filesystem(),
            &at(
                Path::new("/ext/fs"),
                saved.as_object().unwrap(),
                &env,
                "linux",
            ),
        )
        .unwrap();
        assert_eq!(e["args"], json!(["/ext/fs/dist/index.js", "/env"]));
    }

    #[test]
    fn a_required_value_that_is_missing_names_its_variable_and_where_claude_keeps_it() {
        let manifest = json!({
            "manifest_version": "0.2",
            "server": {"type": "node", "mcp_config": {
                "command": "node", "args": ["x.js"], "env": {"KEY": "${user_config.api_key}"}
            }},
            "user_config": {"api_key": {
                "type": "string", "title": "API Key", "sensitive": true, "required": true
            }}
        });
        let empty = Map::new();
        let no_env = |_: &str| None;
        let err = entry(&manifest, &at(Path::new("/e"), &empty, &no_env, "linux")).unwrap_err();
        assert!(err.contains("`api_key` (API Key)"), "{err}");
        assert!(err.contains("SWITCHBOARD_INPUT_API_KEY"), "{err}");
        assert!(err.contains("keychain"), "{err}");
        let mut alone = at(Path::new("/e"), &empty, &no_env, "linux");
        alone.host = Host::Alone;
        let err = entry(&manifest, &alone).unwrap_err();
        assert!(
            !err.contains("keychain") && err.contains("environment"),
            "{err}"
        );
        // An empty string is no value.
        let saved = json!({"api_key": ""});
        assert!(
            entry(
                &manifest,
                &at(
                    Path::new("/e"),
                    saved.as_object().unwrap(),
                    &no_env,
                    "linux"
                )
            )
            .is_err()
        );
    }

    #[test]
    fn platform_overrides_and_platforms_apply_to_this_platform_only() {
        let manifest = json!({
            "manifest_version": "0.2",
            "server": {"type": "binary", "mcp_config": {
                "command": "server/tool", "args": ["--a"], "env": {"X": "1"},
                "platform_overrides": {"win32": {"command": "server/tool-win"},
                                       "darwin": {"env": {"DYLD": "${__dirname}/lib"}}}
            }},
            "compatibility": {"platforms": ["darwin", "win32"]}
        });
        let empty = Map::new();
        let no_env = |_: &str| None;
        let mac = entry(&manifest, &at(Path::new("/e"), &empty, &no_env, "darwin")).unwrap();
        assert_eq!(mac["command"], json!("server/tool"));
        assert_eq!(mac["args"], json!(["--a"]));
        assert_eq!(mac["env"], json!({"DYLD": "/e/lib"}));
        let win = entry(&manifest, &at(Path::new("/e"), &empty, &no_env, "win32")).unwrap();
        assert_eq!(win["command"], json!("server/tool-win.exe"));
        assert_eq!(win["env"], json!({"X": "1"}));
        let err = entry(&manifest, &at(Path::new("/e"), &empty, &no_env, "linux")).unwrap_err();
        assert!(err.contains("darwin, win32 only"), "{err}");
    }

    #[test]
    fn a_bundle_without_mcp_config_runs_its_entry_point_by_type() {
        let empty = Map::new();
        let no_env = |_: &str| None;
        let of = |kind: &str| {
            let m = json!({"manifest_version": "0.4",
                "server": {"type": kind, "entry_point": "src/server.py"}});
            entry(&m, &at(Path::new("/b"), &empty, &no_env, "linux"))
        };
        assert_eq!(
            of("uv").unwrap()["args"],
            json!(["run", "--directory", "/b", "src/server.py"])
        );
        assert_eq!(of("uv").unwrap()["command"], json!("uv"));
        assert_eq!(of("binary").unwrap()["command"], json!("/b/src/server.py"));
        assert_eq!(of("node").unwrap()["args"], json!(["/b/src/server.py"]));
        assert!(of("ruby").unwrap_err().contains("\"ruby\""));
        let none = json!({"manifest_version": "0.4", "server": {"type": "node"}});
        assert!(
            entry(&none, &at(Path::new("/b"), &empty, &no_env, "linux"))
                .unwrap_err()
                .contains("entry_point")
        );
    }

    #[test]
    fn unknown_variables_stay_as_text_and_no_value_can_inject_one() {
        let manifest = json!({
            "manifest_version": "0.2",
            "server": {"type": "node", "mcp_config": {
                "command": "node",
                "args": ["${PATH}", "--name=${user_config.name}", "${user_config.unset}", "${open"]
            }},
            "user_config": {"name": {"type": "string"}, "unset": {"type": "string"}}
        });
        let saved = json!({"name": "${HOME}"});
        let no_env = |_: &str| None;
        let e = entry(
            &manifest,
            &at(
                Path::new("/b"),
                saved.as_object().unwrap(),
                &no_env,
                "linux",
            ),
        )
        .unwrap();
        // Written `$${`, which the entry reader turns back into a literal `${`.
        assert_eq!(e["args"], json!(["$${PATH}", "--name=$${HOME}", "$${open"]));
    }

    #[test]
    fn a_manifests_mistakes_that_still_run_are_each_named() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("server")).unwrap();
        std::fs::write(dir.path().join("server/index.js"), "").unwrap();
        let manifest = json!({
            "manifest_version": "0.3",
            "name": "x",
            "version": "1.0.0",
            "server": {"type": "node", "entry_point": "server/main.js", "mcp_config": {
                "command": "node",
                "args": ["${__dirname}/server/index.js", "${__dirname}/dist/cli.js",
                         "--k=${user_config.typo}", "${user_config.dirs}"]
            }},
            "user_config": {
                "dirs": {"type": "directory", "multiple": true, "default": ["/a", 3]},
                "level": {"type": "text"},
                "n": {"type": "number", "default": 2}
            }
        });
        let found = check(&manifest, dir.path());
        let expected = [
            "no `description`",
            "no `author.name`",
            "`server.entry_point` \"server/main.js\" is not in the bundle",
            "\"dist/cli.js\" is not in the bundle",
            "${user_config.typo}, which `user_config` does not declare",
            "`user_config.dirs.default` does not fit",
            "`user_config.level.type` is \"text\"",
        ];
        assert_eq!(found.len(), expected.len(), "{found:#?}");
        for (f, e) in found.iter().zip(expected) {
            assert!(f.contains(e), "{f} lacks {e}");
        }
    }

    #[test]
    fn filling_an_entry_puts_in_only_its_settings_and_escapes_them() {
        let declared = json!({"a": {"type": "file", "multiple": true}, "b": {"type": "string"}});
        let saved = json!({"a": ["1", "2"], "b": "${X}"});
        let no_env = |_: &str| None;
        let values = user_values(
            declared.as_object(),
            saved.as_object().unwrap(),
            &no_env,
            Host::ClaudeCode,
            &BTreeMap::new(),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let entry = json!({
            "args": ["${HOME}/x", "${user_config.a}", "pre-${user_config.b}-post", "${user_config.none}"],
            "env": {"B": "${user_config.b}"}
        });
        assert_eq!(
            fill_user_config(&entry, &values),
            json!({
                "args": ["${HOME}/x", "1", "2", "pre-$${X}-post"],
                "env": {"B": "$${X}"}
            })
        );
    }

    #[test]
    fn a_malformed_mcp_config_is_named() {
        let empty = Map::new();
        let no_env = |_: &str| None;
        let with = |config: Value| {
            let m = json!({"manifest_version": "0.2", "server": {"type": "node", "mcp_config": config}});
            entry(&m, &at(Path::new("/b"), &empty, &no_env, "linux")).unwrap_err()
        };
        assert!(with(json!({"args": []})).contains("`server.mcp_config.command`"));
        assert!(with(json!({"command": "n", "args": "x"})).contains("list of strings"));
        assert!(with(json!({"command": "n", "env": {"A": []}})).contains("`A`"));
        assert!(with(json!({"command": 3})).contains("must be a string"));
    }
}
