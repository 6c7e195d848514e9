//! Hosts whose servers come from the user's file and the project's together: Cursor, VS Code,
//! Kiro, Amazon Q, Roo Code, Qwen Code and Amp each run both, and where both name a server the
//! project's wins (as Roo Code, Kiro and Amazon Q document it). When either file is the config, the other is
//! read too, so `--config cursor` runs what Cursor runs in this folder.

use std::path::{Path, PathBuf};

use super::entry::Context;
use super::{Config, DisabledServer, ServerConfig};

/// One such host: its project file (relative to the project's folder) and its user file.
struct Layered {
    label: &'static str,
    project: &'static str,
    /// The user's file, from the home and the platform's user config folder.
    user: fn(&Path, &Path) -> PathBuf,
}

const LAYERED: &[Layered] = &[
    Layered {
        label: "Cursor",
        project: ".cursor/mcp.json",
        user: |home, _| home.join(".cursor/mcp.json"),
    },
    Layered {
        label: "VS Code",
        project: ".vscode/mcp.json",
        user: |_, config| config.join("Code/User/mcp.json"),
    },
    Layered {
        label: "Kiro",
        project: ".kiro/settings/mcp.json",
        user: |home, _| home.join(".kiro/settings/mcp.json"),
    },
    Layered {
        label: "Amazon Q",
        project: ".amazonq/mcp.json",
        user: |home, _| home.join(".aws/amazonq/mcp.json"),
    },
    Layered {
        label: "Qwen Code",
        project: ".qwen/settings.json",
        user: |home, _| home.join(".qwen/settings.json"),
    },
    Layered {
        label: "Amp",
        project: ".amp/settings.json",
        // `%APPDATA%\amp\settings.json` on Windows, `~/.config/amp/settings.json` elsewhere.
        user: |home, config| {
            if cfg!(windows) {
                config.join("amp/settings.json")
            } else {
                home.join(".config/amp/settings.json")
            }
        },
    },
    Layered {
        label: "Roo Code",
        project: ".roo/mcp.json",
        user: |_, config| {
            config.join(
                "Code/User/globalStorage/rooveterinaryinc.roo-cline/settings/mcp_settings.json",
            )
        },
    },
];

/// Add the other layer's servers to those read from `ctx.path`, when it is one of these hosts'
/// files: the user's under the project's, or the project's (the working directory's) over the
/// user's. Each server's `origin` names its layer.
pub fn gather(
    ctx: &Context<'_>,
    servers: &mut Vec<ServerConfig>,
    disabled: &mut Vec<DisabledServer>,
    warnings: &mut Vec<String>,
) {
    let Some(home) = ctx.home() else {
        return;
    };
    let config = directories::BaseDirs::new()
        .map(|d| d.config_dir().to_path_buf())
        .unwrap_or_else(|| home.join(".config"));
    for host in LAYERED {
        let user = (host.user)(&home, &config);
        let (this_is_project, other) = if same_file(ctx.path, &user) {
            let Some(cwd) = &ctx.cwd else {
                return;
            };
            (false, cwd.join(host.project))
        } else if ctx.path.ends_with(host.project) {
            (true, user)
        } else {
            continue;
        };
        // In the home folder, a host's project file may be its user file.
        if same_file(&other, ctx.path) {
            return;
        }
        ctx.input(&other);
        let (own_label, other_label) = if this_is_project {
            ("project", "user")
        } else {
            ("user", "project")
        };
        let label = |which: &str, file: &Path| {
            format!("{} {which} config ({})", host.label, file.display())
        };
        for s in servers.iter_mut() {
            s.origin.get_or_insert_with(|| label(own_label, ctx.path));
        }
        for d in disabled.iter_mut() {
            d.origin.get_or_insert_with(|| label(own_label, ctx.path));
        }
        if !other.is_file() {
            return;
        }
        let read = match Config::load_part(&other, ctx.env) {
            Ok(c) => c,
            Err(e) => {
                warnings.push(format!("{e} ({}'s other config is read)", host.label));
                return;
            }
        };
        warnings.extend(read.warnings);
        let taken = |servers: &[ServerConfig], disabled: &[DisabledServer], name: &str| {
            servers.iter().any(|s| s.name() == name) || disabled.iter().any(|d| d.name == name)
        };
        let origin = label(other_label, &other);
        let other_servers = read.servers.into_iter().map(|mut s| {
            s.origin = Some(origin.clone());
            s
        });
        let read_disabled: Vec<DisabledServer> = read
            .disabled
            .into_iter()
            .map(|mut d| {
                d.origin = Some(origin.clone());
                d
            })
            .collect();
        if this_is_project {
            // The user's servers, where the project has none of the name.
            for s in other_servers {
                if !taken(servers, disabled, s.name()) {
                    servers.push(s);
                }
            }
            for d in read_disabled {
                if !taken(servers, disabled, &d.name) {
                    disabled.push(d);
                }
            }
        } else {
            // The project's servers, in place of the user's of the name.
            for s in other_servers {
                let name = s.name().to_string();
                servers.retain(|have| have.name() != name);
                disabled.retain(|have| have.name != name);
                servers.push(s);
            }
            for d in read_disabled {
                servers.retain(|have| have.name() != d.name);
                disabled.retain(|have| have.name != d.name);
                disabled.push(d);
            }
        }
        return;
    }
}

/// The user's file and the project's (in the working directory) of the host labelled `label`,
/// when `ctx.path` is one of them.
pub fn files_of(ctx: &Context<'_>, label: &str) -> Option<(PathBuf, Option<PathBuf>)> {
    let host = LAYERED.iter().find(|h| h.label == label)?;
    let home = ctx.home()?;
    let config = directories::BaseDirs::new()
        .map(|d| d.config_dir().to_path_buf())
        .unwrap_or_else(|| home.join(".config"));
    let user = (host.user)(&home, &config);
    if same_file(ctx.path, &user) {
        let project = ctx.cwd.as_ref().map(|cwd| cwd.join(host.project));
        return Some((user, project));
    }
    ctx.path
        .ends_with(host.project)
        .then(|| (user, Some(ctx.path.to_path_buf())))
}

/// Whether `a` and `b` are one file (compared as they are when either does not exist).
pub fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}
