//! Config tests: one `check` per case, each naming what it proves.
//! Shared helpers live here; the tests, one file per host or feature, in the modules below.

use std::path::{Path, PathBuf};

use switchboard_core::TransportSpec;

use super::*;

mod claude;
mod claude_plugins;
mod claude_policy;
mod cli_agent;
mod codex;
mod continue_dev;
mod cursor;
mod diagnostics;
mod gemini;
mod gemini_policy;
mod goose;
mod librechat;
mod locate;
mod mcp_proxy;
mod mcpb;
mod mcphost;
mod native;
mod oauth;
mod opencode_crush;
mod other_hosts;
mod settings;
mod vscode;
mod zed_amp;

fn env(name: &str) -> Option<String> {
    match name {
        "GITHUB_TOKEN" => Some("ghp_secret_value".into()),
        "HOME" => Some("/home/u".into()),
        _ => None,
    }
}

fn parse(file: &str, text: &str) -> Result<Config, HostError> {
    Config::parse(Path::new(file), text, &env)
}

fn reason<'a>(c: &'a Config, server: &str) -> &'a str {
    &c.disabled
        .iter()
        .find(|d| d.name == server)
        .unwrap_or_else(|| panic!("{server} not disabled: {:?}", c.disabled))
        .reason
}

/// Each server's transport as (command or URL, args or header names), for the readers' tests.
fn transports(c: &Config) -> Vec<(String, Vec<String>)> {
    c.servers
        .iter()
        .map(|s| match &s.spec.transport {
            TransportSpec::Stdio { command, args, .. } => (command.clone(), args.clone()),
            TransportSpec::Http { url, headers, .. } => (
                url.clone(),
                headers.iter().map(|(k, _)| k.clone()).collect(),
            ),
        })
        .collect()
}

/// Each stdio server's (name, command), sorted by name.
fn commands_by_name(c: &Config) -> Vec<(String, String)> {
    let mut got: Vec<(String, String)> = c
        .servers
        .iter()
        .map(|s| match &s.spec.transport {
            TransportSpec::Stdio { command, .. } => (s.name().to_string(), command.clone()),
            other => panic!("{other:?}"),
        })
        .collect();
    got.sort();
    got
}

fn env_of(s: &ServerConfig) -> Vec<(String, String)> {
    match &s.spec.transport {
        TransportSpec::Stdio { env, .. } => env
            .iter()
            .map(|(k, v)| (k.clone(), v.expose().to_string()))
            .collect(),
        TransportSpec::Http { headers, .. } => headers
            .iter()
            .map(|(k, v)| (k.clone(), v.expose().to_string()))
            .collect(),
    }
}

/// A machine with Claude Code's managed folder, a home and a project, for policy tests.
struct PolicyMachine {
    _dir: tempfile::TempDir,
    managed: PathBuf,
    home: PathBuf,
    project: PathBuf,
}

impl PolicyMachine {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let (managed, home, project) = (
            dir.path().join("etc-claude-code"),
            dir.path().join("home"),
            dir.path().join("proj"),
        );
        for d in [&managed, &home.join(".claude"), &project.join(".claude")] {
            std::fs::create_dir_all(d).unwrap();
        }
        PolicyMachine {
            _dir: dir,
            managed,
            home,
            project,
        }
    }

    fn write(&self, path: &Path, value: serde_json::Value) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, serde_json::to_string_pretty(&value).unwrap()).unwrap();
    }

    /// Claude Code's state file, holding `state`, read in the project on this machine.
    fn read_state(&self, state: &serde_json::Value) -> Config {
        let managed = self.managed.display().to_string();
        let env =
            move |name: &str| (name == "SWITCHBOARD_CLAUDE_MANAGED_DIR").then(|| managed.clone());
        Config::parse_in(
            &self.home.join(".claude.json"),
            &state.to_string(),
            &env,
            Some(self.project.clone()),
        )
        .unwrap()
    }

    /// The project's `.mcp.json` read as switchboard reads it on this machine.
    fn read(&self, file: &str, servers: serde_json::Value) -> Config {
        let text = serde_json::json!({ "mcpServers": servers }).to_string();
        let (managed, home) = (
            self.managed.display().to_string(),
            self.home.display().to_string(),
        );
        let env = move |name: &str| match name {
            "SWITCHBOARD_CLAUDE_MANAGED_DIR" => Some(managed.clone()),
            "HOME" => Some(home.clone()),
            "ORG_HOST" => Some("mcp.example.com".into()),
            _ => None,
        };
        Config::parse_in(&self.project.join(file), &text, &env, None).unwrap()
    }
}

fn names(c: &Config) -> Vec<&str> {
    let mut n: Vec<&str> = c.servers.iter().map(|s| s.name()).collect();
    n.sort();
    n
}

/// A Gemini CLI machine: a home and a project, each with `.gemini/settings.json`, and the
/// user's extensions: "alpha" (settings in its `.env`), "beta" (linked from elsewhere) and
/// "gamma" (disabled for the project).
struct GeminiMachine {
    _dir: tempfile::TempDir,
    home: PathBuf,
    project: PathBuf,
    beta: PathBuf,
}

impl GeminiMachine {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let (home, project, beta) = (root.join("home"), root.join("proj"), root.join("beta-src"));
        let m = GeminiMachine {
            _dir: dir,
            home,
            project,
            beta,
        };
        let ext = m.home.join(".gemini/extensions");
        m.write(
            &m.home.join(".gemini/settings.json"),
            serde_json::json!({
                "mcpServers": {
                    "shared": {"command": "user-shared"},
                    "mine": {"command": "mine", "env": {"K": "$TOKEN_X", "AWK": "$1 $UNSET_Y"}},
                    "blocked": {"command": "b"}
                },
                "mcp": {"excluded": ["blocked"]}
            }),
        );
        m.write(
            &m.project.join(".gemini/settings.json"),
            serde_json::json!({"mcpServers": {
                "shared": {"command": "ws-shared"},
                "proj": {"command": "proj"}
            }}),
        );
        m.write(
            &ext.join("alpha/gemini-extension.json"),
            serde_json::json!({
                "name": "alpha", "version": "1.0.0",
                "settings": [{"name": "Key", "envVar": "ALPHA_KEY"}],
                "mcpServers": {
                    "alpha-srv": {"command": "node",
                        "args": ["${extensionPath}${/}server.js", "--ws", "${workspacePath}"],
                        "env": {"KEY": "${ALPHA_KEY}"}, "trust": true},
                    "mine": {"command": "ext-mine"}
                }
            }),
        );
        std::fs::write(ext.join("alpha/.env"), "ALPHA_KEY=k123\n").unwrap();
        m.write(
            &ext.join("beta/.gemini-extension-install.json"),
            serde_json::json!({"type": "link", "source": m.beta}),
        );
        m.write(
            &m.beta.join("gemini-extension.json"),
            serde_json::json!({"name": "beta", "version": "1",
                "mcpServers": {"beta-srv": {"httpUrl": "https://beta.example/mcp"}}}),
        );
        m.write(
            &ext.join("gamma/gemini-extension.json"),
            serde_json::json!({"name": "gamma", "version": "1",
                "mcpServers": {"gamma-srv": {"command": "g"}}}),
        );
        m.write(
            &ext.join("extension-enablement.json"),
            serde_json::json!({"gamma": {"overrides": [format!("!{}/*", m.project.display())]}}),
        );
        m
    }

    fn write(&self, path: &Path, value: serde_json::Value) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, serde_json::to_string_pretty(&value).unwrap()).unwrap();
    }

    /// Where the system settings are on this machine (`system-defaults.json` beside them).
    fn system(&self) -> PathBuf {
        self.home.parent().unwrap().join("etc/settings.json")
    }

    /// `file` read as switchboard reads it in the project, with `vars` set too.
    fn read(&self, file: &Path, vars: &[(&str, &str)]) -> Config {
        self.try_read(file, vars).unwrap()
    }

    fn try_read(&self, file: &Path, vars: &[(&str, &str)]) -> Result<Config, HostError> {
        let home = self.home.display().to_string();
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let system = self.system().display().to_string();
        let env = move |name: &str| match name {
            "HOME" => Some(home.clone()),
            "GEMINI_CLI_SYSTEM_SETTINGS_PATH" => Some(system.clone()),
            "TOKEN_X" => Some("tx".into()),
            _ => vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()),
        };
        let text = std::fs::read_to_string(file).unwrap();
        Config::parse_in(file, &text, &env, Some(self.project.clone()))
    }
}

fn command_of<'a>(c: &'a Config, name: &str) -> &'a str {
    match &c
        .servers
        .iter()
        .find(|s| s.name() == name)
        .unwrap()
        .spec
        .transport
    {
        TransportSpec::Stdio { command, .. } => command,
        other => panic!("{other:?}"),
    }
}

fn write_json(path: &Path, value: serde_json::Value) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, serde_json::to_string_pretty(&value).unwrap()).unwrap();
}

fn server_of<'a>(c: &'a Config, name: &str) -> &'a ServerConfig {
    c.servers
        .iter()
        .find(|s| s.name() == name)
        .unwrap_or_else(|| panic!("no server {name:?}: {:?}", c.disabled))
}

fn decision(c: &Config, server: &str, tool: &str) -> crate::policy::Decision {
    let tool = switchboard_core::Tool::new(tool, "d", serde_json::json!({"type": "object"}));
    crate::policy::decide(server_of(c, server), &tool)
}
