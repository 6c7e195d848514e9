//! Where other hosts keep their MCP servers, so `--config cursor` opens Cursor's file and a user
//! without a config of switchboard's own hears which of those files are on this machine.

use std::path::{Path, PathBuf};

/// The folders the places are relative to: the user's home, the platform's user config folder
/// (`~/.config` on Linux, `~/Library/Application Support` on macOS, `%APPDATA%` on Windows) and
/// the working directory (for project files), and the folders `CODEX_HOME` and
/// `GEMINI_CLI_HOME` name, when set (Codex keeps its `config.toml` in the first instead of in
/// `~/.codex`; Gemini CLI its `.gemini` folder in the second instead of in the home).
pub struct Folders<'a> {
    pub home: &'a Path,
    pub config: &'a Path,
    pub cwd: &'a Path,
    pub codex_home: Option<&'a Path>,
    pub gemini_home: Option<&'a Path>,
    /// LibreChat's `CONFIG_PATH`, when it names a YAML file (LibreChat reads that file instead
    /// of its folder's `librechat.yaml`; a URL, which it can also be, is not followed).
    pub librechat_config: Option<&'a Path>,
}

/// One host: the names `--config` takes for it, what to call it, and where its files (or, for
/// Continue, folders of files) are, the project's before the user's.
struct Host {
    names: &'static [&'static str],
    label: &'static str,
    places: fn(&Folders<'_>) -> Vec<PathBuf>,
}

const HOSTS: &[Host] = &[
    Host {
        names: &["claude-desktop", "claude"],
        label: "Claude Desktop",
        places: |f| {
            // The Microsoft Store (MSIX) build keeps its folder where Windows redirects a
            // packaged app's `%APPDATA%`.
            let packaged = std::fs::read_dir(f.home.join("AppData/Local/Packages"))
                .into_iter()
                .flatten()
                .filter_map(Result::ok)
                .filter(|e| e.file_name().to_string_lossy().starts_with("Claude_"))
                .map(|e| {
                    e.path()
                        .join("LocalCache/Roaming/Claude/claude_desktop_config.json")
                });
            std::iter::once(f.config.join("Claude/claude_desktop_config.json"))
                .chain(packaged)
                .collect()
        },
    },
    Host {
        names: &["claude-code"],
        label: "Claude Code",
        // The state file holds the user's servers and each project's `claude mcp add` ones.
        places: |f| vec![f.home.join(".claude.json"), f.cwd.join(".mcp.json")],
    },
    Host {
        names: &["cursor"],
        label: "Cursor",
        places: |f| {
            vec![
                f.cwd.join(".cursor/mcp.json"),
                f.home.join(".cursor/mcp.json"),
            ]
        },
    },
    Host {
        names: &["vscode", "code"],
        label: "VS Code",
        places: |f| {
            vec![
                f.cwd.join(".vscode/mcp.json"),
                f.config.join("Code/User/mcp.json"),
            ]
        },
    },
    Host {
        names: &["windsurf"],
        label: "Windsurf",
        places: |f| vec![f.home.join(".codeium/windsurf/mcp_config.json")],
    },
    Host {
        names: &["antigravity", "agy"],
        label: "Antigravity",
        places: |f| {
            super::antigravity::PROJECT_FOLDERS
                .iter()
                .map(|d| f.cwd.join(d).join("mcp_config.json"))
                .chain([f.home.join(".gemini/antigravity/mcp_config.json")])
                .collect()
        },
    },
    Host {
        names: &["gemini"],
        label: "Gemini CLI",
        places: |f| {
            vec![
                f.cwd.join(".gemini/settings.json"),
                f.gemini_home
                    .unwrap_or(f.home)
                    .join(".gemini/settings.json"),
            ]
        },
    },
    Host {
        names: &["qwen"],
        label: "Qwen Code",
        places: |f| {
            vec![
                f.cwd.join(".qwen/settings.json"),
                f.home.join(".qwen/settings.json"),
            ]
        },
    },
    Host {
        names: &["amp"],
        label: "Amp",
        places: |f| {
            vec![
                f.cwd.join(".amp/settings.json"),
                f.home.join(".config/amp/settings.json"),
                f.config.join("amp/settings.json"),
            ]
        },
    },
    Host {
        names: &["zed"],
        label: "Zed",
        places: |f| {
            vec![
                f.cwd.join(".zed/settings.json"),
                f.home.join(".config/zed/settings.json"),
                f.config.join("zed/settings.json"),
            ]
        },
    },
    Host {
        names: &["cline"],
        label: "Cline",
        places: |f| {
            vec![f.config.join(
                "Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json",
            )]
        },
    },
    Host {
        names: &["roo"],
        label: "Roo Code",
        places: |f| {
            vec![
                f.cwd.join(".roo/mcp.json"),
                f.config.join(
                    "Code/User/globalStorage/rooveterinaryinc.roo-cline/settings/mcp_settings.json",
                ),
            ]
        },
    },
    Host {
        names: &["kiro"],
        label: "Kiro",
        places: |f| {
            vec![
                f.cwd.join(".kiro/settings/mcp.json"),
                f.home.join(".kiro/settings/mcp.json"),
            ]
        },
    },
    Host {
        names: &["amazonq"],
        label: "Amazon Q",
        places: |f| {
            vec![
                f.cwd.join(".amazonq/mcp.json"),
                f.home.join(".aws/amazonq/mcp.json"),
            ]
        },
    },
    Host {
        names: &["copilot"],
        label: "GitHub Copilot CLI",
        places: |f| vec![f.home.join(".copilot/mcp-config.json")],
    },
    Host {
        names: &["lmstudio"],
        label: "LM Studio",
        places: |f| vec![f.home.join(".lmstudio/mcp.json")],
    },
    Host {
        names: &["codex"],
        label: "Codex CLI",
        places: |f| {
            vec![match f.codex_home {
                Some(dir) => dir.join("config.toml"),
                None => f.home.join(".codex/config.toml"),
            }]
        },
    },
    Host {
        names: &["goose"],
        label: "goose",
        places: |f| {
            vec![
                f.home.join(".config/goose/config.yaml"),
                f.config.join("goose/config.yaml"),
            ]
        },
    },
    Host {
        names: &["opencode"],
        label: "OpenCode",
        places: |f| {
            vec![
                f.cwd.join("opencode.jsonc"),
                f.cwd.join("opencode.json"),
                f.home.join(".config/opencode/opencode.jsonc"),
                f.home.join(".config/opencode/opencode.json"),
            ]
        },
    },
    Host {
        names: &["crush"],
        label: "Crush",
        places: |f| {
            vec![
                f.cwd.join(".crush.json"),
                f.cwd.join("crush.json"),
                f.home.join(".config/crush/crush.json"),
            ]
        },
    },
    Host {
        names: &["mcphost"],
        label: "mcphost",
        // As mcphost looks: the working folder before the home, `.mcphost` before the older
        // `.mcp` (whose `.json` is Claude Code's project file, so left to it).
        places: |f| {
            let mut out = Vec::new();
            for dir in [f.cwd, f.home] {
                for ext in ["json", "yaml", "yml"] {
                    out.push(dir.join(format!(".mcphost.{ext}")));
                }
            }
            for dir in [f.cwd, f.home] {
                for ext in ["yaml", "yml"] {
                    out.push(dir.join(format!(".mcp.{ext}")));
                }
            }
            out
        },
    },
    Host {
        names: &["librechat"],
        label: "LibreChat",
        // `librechat.yaml` sits in LibreChat's own folder: run from there. `CONFIG_PATH`, as
        // LibreChat reads it, comes first (relative to that folder).
        places: |f| {
            f.librechat_config
                .map(|p| f.cwd.join(p))
                .into_iter()
                .chain([f.cwd.join("librechat.yaml")])
                .collect()
        },
    },
    Host {
        names: &["continue"],
        label: "Continue",
        places: |f| {
            vec![
                f.cwd.join(".continue/mcpServers"),
                f.home.join(".continue/config.yaml"),
                f.home.join(".continue/config.json"),
                f.home.join(".continue/mcpServers"),
            ]
        },
    },
];

/// The names `--config` takes for other hosts' files, for help and errors.
pub fn names() -> impl Iterator<Item = &'static str> {
    HOSTS.iter().map(|h| h.names[0])
}

/// The file `--config NAME` means when NAME is a host's name rather than a path: the first of
/// the host's places that exists, else the first place (so the error says where it looked).
/// `None` when NAME is no host's.
pub fn resolve(name: &str, folders: &Folders<'_>) -> Option<PathBuf> {
    let name = name.to_ascii_lowercase();
    let host = HOSTS.iter().find(|h| h.names.contains(&name.as_str()))?;
    let places = (host.places)(folders);
    let first = places.first().cloned();
    places.into_iter().find(|p| p.exists()).or(first)
}

/// A host's config file that exists here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The host, as people call it ("Cursor").
    pub host: &'static str,
    /// The name `--config` takes for it ("cursor").
    pub name: &'static str,
    pub path: PathBuf,
    /// How many servers it names (usable or not); filled in by `Config::other_hosts`.
    pub servers: usize,
}

/// Every host config file that exists here, in the order of `HOSTS`, each path once.
pub fn found(folders: &Folders<'_>) -> Vec<Found> {
    let mut out: Vec<Found> = Vec::new();
    for host in HOSTS {
        for path in (host.places)(folders) {
            if path.exists() && !out.iter().any(|f| f.path == path) {
                out.push(Found {
                    host: host.label,
                    name: host.names[0],
                    path,
                    servers: 0,
                });
            }
        }
    }
    out
}
