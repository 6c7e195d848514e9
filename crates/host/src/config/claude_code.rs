//! Claude Code's `~/.claude.json`, read as Claude Code reads it for the working directory: the
//! user's servers (top-level `mcpServers`), the project's shared `.mcp.json` where Claude Code
//! was told to trust it, and the servers `claude mcp add` stored for the project
//! (`projects.PATH.mcpServers`, the deepest PATH holding the working directory). Of servers with
//! the same name the project's own (local) wins, then `.mcp.json`'s, then the user's. Which
//! `.mcp.json` servers are trusted is read from the state file's project entry, the user's and
//! the managed settings, and the project's `.claude/settings.json` and
//! `.claude/settings.local.json` once the folder is trusted (`hasTrustDialogAccepted`). Servers
//! turned off in Claude Code's `/mcp` panel (`disabledMcpServers`) stay off.

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde_json::{Map, Value};

use super::claude_settings::{Kind, Settings};
use super::entry::Context;
use super::position::find_json_key;
use super::{Config, DisabledServer, ServerConfig};

/// What the state file holds for the working directory.
pub struct StateFile<'a> {
    /// The user's and then the project's own servers, each with where its `mcpServers` key is
    /// written.
    pub scopes: Vec<(usize, &'a Map<String, Value>)>,
    /// The names of the project's own servers, which nothing replaces.
    local: BTreeSet<String>,
    /// The project's folder: the deepest project holding the working directory, else the
    /// working directory.
    project: Option<PathBuf>,
    /// The project's settings in the state file.
    settings: Option<&'a Map<String, Value>>,
    path: PathBuf,
}

impl<'a> StateFile<'a> {
    /// The state file's scopes, or `None` when `ctx` is not Claude Code's state file.
    pub fn read(ctx: &Context<'_>, text: &str, root: &'a Value) -> Option<StateFile<'a>> {
        let is_state_file = ctx.path.file_name().is_some_and(|f| f == ".claude.json");
        let projects = root
            .get("projects")
            .and_then(Value::as_object)
            .filter(|_| is_state_file)?;
        let mut scopes = Vec::new();
        if let Some(user) = root.get("mcpServers").and_then(Value::as_object) {
            scopes.push((find_json_key(text, 0, "mcpServers").unwrap_or(0), user));
        }
        let project = ctx.cwd.as_deref().and_then(|cwd| {
            projects
                .iter()
                .filter(|(dir, _)| cwd.starts_with(std::path::Path::new(dir)))
                .max_by_key(|(dir, _)| dir.len())
        });
        let settings = project.and_then(|(_, s)| s.as_object());
        let mut local = BTreeSet::new();
        if let Some((dir, s)) = project
            && let Some(own) = s.get("mcpServers").and_then(Value::as_object)
        {
            let at = find_json_key(text, 0, dir)
                .and_then(|at| find_json_key(text, at, "mcpServers"))
                .unwrap_or(0);
            scopes.push((at, own));
            local.extend(own.keys().cloned());
        }
        let folder = project
            .map(|(dir, _)| PathBuf::from(dir))
            .or_else(|| ctx.cwd.clone());
        Some(StateFile {
            scopes,
            local,
            project: folder,
            settings,
            path: ctx.path.to_path_buf(),
        })
    }

    fn project_file(&self) -> Option<PathBuf> {
        self.project
            .as_ref()
            .map(|dir| dir.join(".mcp.json"))
            .filter(|f| f.is_file())
    }

    /// Where Claude Code's settings for this read are: the user's home (the state file's folder)
    /// and the project's folder.
    pub fn scope(&self) -> super::claude_settings::Scope {
        super::claude_settings::Scope {
            home: self.path.parent().map(std::path::Path::to_path_buf),
            project: self.project.clone(),
            trusted: self.trusted(),
        }
    }

    /// Which of the state file's scopes server `name` is written in, in words.
    pub fn scope_of(&self, name: &str) -> String {
        match (&self.project, self.local.contains(name)) {
            (Some(project), true) => format!(
                "Claude Code local scope ({}, project {})",
                self.path.display(),
                project.display()
            ),
            _ => format!("Claude Code user scope ({})", self.path.display()),
        }
    }

    /// Whether Claude Code trusts the project's folder (its trust dialog was accepted there).
    fn trusted(&self) -> bool {
        self.settings
            .is_some_and(|s| s.get("hasTrustDialogAccepted") == Some(&Value::Bool(true)))
    }

    /// Add the project's `.mcp.json` servers: those Claude Code was told to trust replace the
    /// user's of the same name; the others are listed as disabled, saying why.
    pub fn add_project_file(
        &self,
        ctx: &Context<'_>,
        settings: &Settings,
        servers: &mut Vec<ServerConfig>,
        disabled: &mut Vec<DisabledServer>,
        warnings: &mut Vec<String>,
    ) {
        if let Some(dir) = &self.project {
            ctx.input(&dir.join(".mcp.json"));
        }
        let Some(file) = self.project_file() else {
            return;
        };
        let shared = match Config::load_part(&file, ctx.env) {
            Ok(c) => {
                for input in &c.inputs {
                    ctx.input(input);
                }
                c
            }
            Err(e) => {
                warnings.push(format!("{e} (the project's shared servers are left out)"));
                return;
            }
        };
        warnings.extend(shared.warnings);
        // The approvals: in the state file's project entry (written by Claude Code when the user
        // approves), the user's and the managed settings, and the project's own settings files,
        // which count only once the folder is trusted (a cloned repository cannot approve its
        // own servers). A refusal counts from any of them.
        let trusted = self.trusted();
        let outside: Vec<&Map<String, Value>> = settings
            .files
            .iter()
            .filter(|f| f.kind != Kind::Project)
            .map(|f| &f.value)
            .collect();
        let inside: Vec<&Map<String, Value>> =
            settings.of_kind(Kind::Project).map(|f| &f.value).collect();
        let approving: Vec<&Map<String, Value>> = self
            .settings
            .into_iter()
            .chain(outside.iter().copied())
            .chain(inside.iter().copied().filter(|_| trusted))
            .collect();
        let names = |sources: &[&Map<String, Value>], key: &str| -> BTreeSet<String> {
            sources
                .iter()
                .filter_map(|s| s.get(key).and_then(Value::as_array))
                .flatten()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        };
        let approves_all = |sources: &[&Map<String, Value>]| {
            sources
                .iter()
                .any(|s| s.get("enableAllProjectMcpServers") == Some(&Value::Bool(true)))
        };
        let all = approves_all(&approving);
        let enabled = names(&approving, "enabledMcpjsonServers");
        let every: Vec<&Map<String, Value>> = approving
            .iter()
            .copied()
            .chain(inside.iter().copied().filter(|_| !trusted))
            .collect();
        let refused = names(&every, "disabledMcpjsonServers");
        // What the project's own files would approve if the folder were trusted, to say so.
        let waiting_for_trust = |name: &str| {
            !trusted
                && (approves_all(&inside) || names(&inside, "enabledMcpjsonServers").contains(name))
        };
        for server in shared.servers {
            let name = server.name().to_string();
            let approved =
                !refused.contains(name.as_str()) && (all || enabled.contains(name.as_str()));
            // The project's own server wins; a user's server of the name stays when this one
            // is not approved, as in Claude Code.
            if self.local.contains(&name) || (!approved && servers.iter().any(|s| s.name() == name))
            {
                continue;
            }
            if refused.contains(&name) {
                disabled.push(DisabledServer {
                    name,
                    reason: format!(
                        "{}: turned off for this project in Claude Code (disabledMcpjsonServers)",
                        file.display()
                    ),
                    origin: Some(format!("Claude Code project scope ({})", file.display())),
                });
            } else if approved {
                servers.retain(|s| s.name() != name);
                disabled.retain(|d| d.name != name);
                let mut server = server;
                server.origin = Some(format!("Claude Code project scope ({})", file.display()));
                servers.push(server);
            } else if waiting_for_trust(&name) {
                disabled.push(DisabledServer {
                    reason: format!(
                        "{}: approved only in the project's own .claude/settings files, which Claude Code ignores until the folder is trusted (run `claude` there and accept the trust dialog), or pass --config {} to use the file as it is",
                        file.display(),
                        file.display()
                    ),
                    name,
                    origin: Some(format!("Claude Code project scope ({})", file.display())),
                });
            } else {
                disabled.push(DisabledServer {
                    reason: format!(
                        "{}: Claude Code has not been told to trust this project server; approve it there, or pass --config {} to use the file as it is",
                        file.display(),
                        file.display()
                    ),
                    name,
                    origin: Some(format!("Claude Code project scope ({})", file.display())),
                });
            }
        }
        for d in shared.disabled {
            if !self.local.contains(&d.name) && !servers.iter().any(|s| s.name() == d.name) {
                disabled.push(d);
            }
        }
    }

    /// The servers turned off for this project in Claude Code's `/mcp` panel (the project
    /// entry's `disabledMcpServers`, where a plugin's server goes by the name Claude Code shows,
    /// `plugin:PLUGIN:SERVER`) are listed as disabled, saying so.
    pub fn apply_toggles(
        &self,
        plugins: &[super::claude_plugins::PluginServer],
        servers: &mut Vec<ServerConfig>,
        disabled: &mut Vec<DisabledServer>,
    ) {
        let off: BTreeSet<&str> = self
            .settings
            .and_then(|s| s.get("disabledMcpServers"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        if off.is_empty() {
            return;
        }
        let reason = format!(
            "{}: turned off for this project in Claude Code's /mcp panel (disabledMcpServers)",
            self.path.display()
        );
        servers.retain(|s| {
            let shown = plugins
                .iter()
                .find(|p| p.name == s.name())
                .map_or(s.name(), |p| p.claude_name.as_str());
            let keep = !off.contains(s.name()) && !off.contains(shown);
            if !keep {
                disabled.push(DisabledServer {
                    name: s.name().to_string(),
                    reason: reason.clone(),
                    origin: s.origin.clone(),
                });
            }
            keep
        });
    }
}
