//! Claude Code's settings files for one read of its config, each read once: the managed ones
//! (`managed-settings.json` and its `managed-settings.d/*.json` drop-ins, in the managed folder
//! beside `managed-mcp.json`), the user's `~/.claude/settings.json`, and the project's
//! `.claude/settings.json` and `.claude/settings.local.json`. The `.mcp.json` approvals
//! (`claude_code`), the plugins (`claude_plugins`) and the MCP policy (`claude_policy`) each
//! take what they need from them.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::entry::Context;

/// The environment variable naming the folder of Claude Code's managed files, in place of the
/// system folder (to try a policy before deploying it).
pub const MANAGED_DIR_VAR: &str = "SWITCHBOARD_CLAUDE_MANAGED_DIR";

/// Where an administrator puts Claude Code's managed files on this platform.
fn system_dir() -> PathBuf {
    PathBuf::from(if cfg!(target_os = "macos") {
        "/Library/Application Support/ClaudeCode"
    } else if cfg!(windows) {
        r"C:\Program Files\ClaudeCode"
    } else {
        "/etc/claude-code"
    })
}

/// The folder of Claude Code's managed files: [`MANAGED_DIR_VAR`], else [`system_dir`].
fn managed_dir(ctx: &Context<'_>) -> PathBuf {
    (ctx.env)(MANAGED_DIR_VAR)
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(system_dir)
}

/// The managed settings files in `dir` that exist: `managed-settings.json`, then the
/// `managed-settings.d/*.json` drop-ins in name order (a later one's keys win).
fn managed_settings_files(dir: &Path) -> Vec<PathBuf> {
    let mut drop_ins: Vec<PathBuf> = std::fs::read_dir(dir.join("managed-settings.d"))
        .map(|d| {
            d.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|e| e == "json"))
                .collect()
        })
        .unwrap_or_default();
    drop_ins.sort();
    std::iter::once(dir.join("managed-settings.json"))
        .chain(drop_ins)
        .filter(|p| p.is_file())
        .collect()
}

/// Where Claude Code's settings for one read are.
pub struct Scope {
    /// The user's home, holding `.claude/settings.json`.
    pub home: Option<PathBuf>,
    /// The project's folder, holding `.claude/settings.json` and `.claude/settings.local.json`.
    pub project: Option<PathBuf>,
    /// Whether Claude Code trusts the project's folder: until it does, the project's own
    /// settings files cannot widen the allowlist (a cloned repository cannot allow its own
    /// servers); their denials count regardless.
    pub trusted: bool,
}

impl Scope {
    /// The scope of a read of Claude Code's own files: its state file, or a `.mcp.json` (or
    /// `.claude.json` without projects) read on its own; `None` for any other file, and for a
    /// `.mcp.json` read as part of the state file.
    pub fn of(
        ctx: &Context<'_>,
        state: Option<&super::claude_code::StateFile<'_>>,
    ) -> Option<Self> {
        if let Some(state) = state {
            return Some(state.scope());
        }
        if !ctx.policy {
            return None;
        }
        let name = ctx.path.file_name()?;
        if name != ".mcp.json" && name != ".claude.json" {
            return None;
        }
        let home = ctx.home();
        let project = (name == ".mcp.json").then(|| ctx.base.to_path_buf());
        let trusted = match (&home, &project) {
            (Some(home), Some(project)) => {
                trusted_in_state_file(&home.join(".claude.json"), project)
            }
            _ => false,
        };
        Some(Scope {
            home,
            project,
            trusted,
        })
    }
}

/// Whether Claude Code's state file records the trust dialog as accepted for `project`.
fn trusted_in_state_file(state: &Path, project: &Path) -> bool {
    let folder = if project.as_os_str().is_empty() {
        Path::new(".")
    } else {
        project
    };
    let (Ok(folder), Ok(text)) = (
        std::fs::canonicalize(folder),
        std::fs::read_to_string(state),
    ) else {
        return false;
    };
    let Ok(root) = serde_json::from_str::<Value>(&text) else {
        return false;
    };
    root.get("projects")
        .and_then(Value::as_object)
        .is_some_and(|projects| {
            projects.iter().any(|(dir, entry)| {
                Path::new(dir) == folder
                    && entry.get("hasTrustDialogAccepted") == Some(&Value::Bool(true))
            })
        })
}

/// Whose a settings file is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// An administrator's (the managed folder).
    Managed,
    /// The user's (`~/.claude/settings.json`).
    User,
    /// The project's own (`.claude/settings.json`, `.claude/settings.local.json`): it counts
    /// for widening what runs only once Claude Code trusts the folder.
    Project,
}

/// One settings file's object.
pub struct SettingsFile {
    pub path: PathBuf,
    pub value: Map<String, Value>,
    pub kind: Kind,
}

/// The settings files of one read, in the order Claude Code ranks them, lowest first: the
/// user's, the project's, the project's local one, then the managed ones.
pub struct Settings {
    pub files: Vec<SettingsFile>,
    /// The managed folder, which holds `managed-mcp.json` too.
    pub managed_dir: PathBuf,
}

impl Settings {
    /// Read the settings files of `scope` that exist; each path, there or not, is an input of
    /// the config (`serve` watches it), and a file that cannot be read is a warning.
    pub fn read(ctx: &Context<'_>, scope: &Scope, warnings: &mut Vec<String>) -> Settings {
        let managed_dir = managed_dir(ctx);
        ctx.input(&managed_dir.join("managed-settings.d"));
        ctx.input(&managed_dir.join("managed-settings.json"));
        let own = [
            scope
                .home
                .as_ref()
                .map(|h| (h.join(".claude/settings.json"), Kind::User)),
            scope
                .project
                .as_ref()
                .map(|p| (p.join(".claude/settings.json"), Kind::Project)),
            scope
                .project
                .as_ref()
                .map(|p| (p.join(".claude/settings.local.json"), Kind::Project)),
        ];
        let managed = managed_settings_files(&managed_dir)
            .into_iter()
            .map(|p| (p, Kind::Managed));
        let mut files: Vec<SettingsFile> = Vec::new();
        for (path, kind) in own.into_iter().flatten().chain(managed) {
            ctx.input(&path);
            if !path.is_file() || files.iter().any(|f| f.path == path) {
                continue;
            }
            match read_json(&path) {
                Ok(Value::Object(value)) => files.push(SettingsFile { path, value, kind }),
                Ok(_) => warnings.push(format!(
                    "{}: not read as Claude Code settings: not a JSON object",
                    path.display()
                )),
                Err(e) => warnings.push(format!(
                    "{}: not read as Claude Code settings: {e}",
                    path.display()
                )),
            }
        }
        Settings { files, managed_dir }
    }

    /// The files of `kind`.
    pub fn of_kind(&self, kind: Kind) -> impl Iterator<Item = &SettingsFile> {
        self.files.iter().filter(move |f| f.kind == kind)
    }
}

/// Claude Code's host-wide timeouts, in milliseconds: `MCP_TIMEOUT` for a server's start and
/// `MCP_TOOL_TIMEOUT` for each call, taken from the `env` of its settings files (the last file
/// in Claude Code's ranking that sets it), else from the environment: Claude Code applies a
/// settings file's `env` over the shell's by design. Each applies to the servers of its files
/// that do not set that timeout themselves. A value that is not a positive number of
/// milliseconds is a warning and is left out.
pub fn apply_timeouts(
    ctx: &Context<'_>,
    settings: &Settings,
    servers: &mut [super::ServerConfig],
    warnings: &mut Vec<String>,
) {
    for (var, startup) in [("MCP_TIMEOUT", true), ("MCP_TOOL_TIMEOUT", false)] {
        let from_settings = || {
            settings.files.iter().rev().find_map(|f| {
                let v = f.value.get("env")?.get(var)?;
                let text = match v {
                    Value::String(s) => s.clone(),
                    Value::Number(n) => n.to_string(),
                    _ => return None,
                };
                Some((text, format!("{} (env.{var})", f.path.display())))
            })
        };
        let from_env = || {
            (ctx.env)(var)
                .filter(|v| !v.trim().is_empty())
                .map(|v| (v, format!("the environment variable {var}")))
        };
        let Some((text, source)) = from_settings().or_else(from_env) else {
            continue;
        };
        let Some(ms) = text.trim().parse::<u64>().ok().filter(|&ms| ms > 0) else {
            warnings.push(format!(
                "{source}: {text:?} is not a positive number of milliseconds; left out"
            ));
            continue;
        };
        let timeout = std::time::Duration::from_millis(ms.min(86_400_000));
        for server in servers.iter_mut() {
            if startup && !server.startup_timeout_written {
                server.spec.startup_timeout = timeout;
            } else if !startup && !server.call_timeout_written {
                server.spec.call_timeout = timeout;
            }
        }
    }
}

/// A JSON file, comments, trailing commas and a byte-order mark allowed (Claude Code's and
/// Claude Desktop's files may hold them).
pub fn read_json(path: &Path) -> Result<Value, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    // An editor on Windows may begin the file with a byte-order mark.
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    serde_json::from_str(&super::jsonc::to_json(text)).map_err(|e| e.to_string())
}
