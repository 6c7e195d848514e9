//! `switchboard add | remove | enable | disable`: one server entry of a config file changed,
//! the rest of the file (comments, order, layout) left as it was.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context as _, bail};
use serde_json::json;
use switchboard_host::Config;
use switchboard_host::config::edit::{self, NewServer, Reach};

use crate::Global;
use crate::output::print_json;

/// Which file to change when `--config` does not say.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// `./switchboard.toml`, read in this folder only.
    Project,
    /// `switchboard.toml` in your user config directory, read wherever a folder has no config
    /// of its own.
    User,
}

/// How `add` reaches the server, when its command line does not make it plain.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    /// A program switchboard starts, talking over its stdin and stdout.
    Stdio,
    /// A URL: Streamable HTTP (a server that turns out to be legacy HTTP+SSE is still reached).
    Http,
    /// A URL of the legacy HTTP+SSE transport (MCP 2024-11-05), written `type = "sse"`.
    Sse,
}

/// Arguments of `switchboard add`.
#[derive(clap::Args, Debug)]
pub struct AddArgs {
    /// The server's name: the part of its tools' public names before `__`.
    pub name: String,
    /// The program to start and its arguments (everything after NAME, dashes included), or the
    /// server's URL.
    #[arg(
        required = true,
        num_args = 1..,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "COMMAND_OR_URL"
    )]
    pub command: Vec<String>,
    /// stdio for a command, http for a URL (the default for one beginning http:// or https://),
    /// sse for a URL of the legacy HTTP+SSE transport.
    #[arg(long, short = 't', value_enum)]
    pub transport: Option<Transport>,
    /// An environment variable for a command (repeatable): KEY=VALUE. Write the value as
    /// ${VAR} to keep a secret out of the file.
    #[arg(long, short = 'e', value_name = "KEY=VALUE")]
    pub env: Vec<String>,
    /// A header sent with every request to a URL (repeatable): "Name: value".
    #[arg(long, short = 'H', value_name = "NAME: VALUE")]
    pub header: Vec<String>,
    /// The folder the command starts in (relative to the config file's folder).
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<String>,
    /// Which file (over --config): project is ./switchboard.toml, user the one in your user
    /// config directory. Without either, the config switchboard reads here, else the user's.
    #[arg(long, value_enum)]
    pub scope: Option<Scope>,
}

/// Arguments of `remove`, `enable` and `disable`.
#[derive(clap::Args, Debug)]
pub struct NameArgs {
    /// The server's name in the config file.
    pub name: String,
    /// Which file (over --config): project is ./switchboard.toml, user the one in your user
    /// config directory. Without either, the config switchboard reads here.
    #[arg(long, value_enum)]
    pub scope: Option<Scope>,
}

/// What the name-only commands do.
#[derive(Clone, Copy, Debug)]
pub enum Change {
    Remove,
    Enable,
    Disable,
}

/// The file to change and whether it exists.
fn target(global: &Global, scope: Option<Scope>, creating: bool) -> anyhow::Result<PathBuf> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let user = || {
        Config::user_file()
            .context("cannot find your user config directory; give the file with --config")
    };
    let path = match (scope, &global.config) {
        (Some(Scope::Project), _) => cwd.join(switchboard_host::config::NATIVE_FILE),
        (Some(Scope::User), _) => user()?,
        (None, explicit) => match Config::locate(explicit.as_deref(), &cwd) {
            Some(path) => path,
            None if creating => user()?,
            None => bail!(
                "no config file here or in your user config directory (switchboard runs its demo servers); add a server first (`switchboard add NAME COMMAND...`)"
            ),
        },
    };
    if !creating && !path.exists() {
        bail!("{}: no such config file", path.display());
    }
    Ok(path)
}

/// `KEY=VALUE` pairs (or `Name: value` with `colon`), in the order given.
fn pairs(items: &[String], what: &str, colon: bool) -> anyhow::Result<Vec<(String, String)>> {
    items
        .iter()
        .map(|item| {
            let split = if colon {
                item.split_once(':').or_else(|| item.split_once('='))
            } else {
                item.split_once('=')
            };
            match split {
                Some((k, v)) if !k.trim().is_empty() => {
                    Ok((k.trim().to_string(), v.trim_start().to_string()))
                }
                _ => bail!(
                    "{what} {item:?}: expected {}",
                    if colon {
                        "\"Name: value\""
                    } else {
                        "KEY=VALUE"
                    }
                ),
            }
        })
        .collect()
}

/// What `add` writes, from its command line, and whether `--json` came after a URL.
fn new_server(args: &AddArgs) -> anyhow::Result<(NewServer, bool)> {
    let (first, rest) = args
        .command
        .split_first()
        .context("give the server's command or URL after its name")?;
    let rest_owned: Vec<String>;
    let mut json_after = false;
    let looks_like_url = first.starts_with("http://") || first.starts_with("https://");
    // A URL takes no arguments, so options written after it are `add`'s own (`add NAME URL
    // --header ...`), as they are before NAME.
    let mut headers = args.header.clone();
    let mut chosen = args.transport;
    let mut rest = rest;
    if looks_like_url {
        let mut left = Vec::new();
        let mut words = rest.iter();
        while let Some(word) = words.next() {
            let (flag, inline) = match word.split_once('=') {
                Some((f, v)) if f.starts_with("--") => (f, Some(v.to_string())),
                _ => (word.as_str(), None),
            };
            let mut value = || inline.clone().or_else(|| words.next().cloned());
            match flag {
                "-H" | "--header" => headers.push(
                    value().with_context(|| format!("{flag} needs a value: \"Name: value\""))?,
                ),
                // The global flag, which clap leaves among the words after a URL.
                "--json" if inline.is_none() => json_after = true,
                "-t" | "--transport" => {
                    let v = value().with_context(|| format!("{flag} needs a value"))?;
                    chosen = Some(<Transport as clap::ValueEnum>::from_str(&v, true).map_err(
                        |_| anyhow::anyhow!("--transport {v:?}: expected stdio, http or sse"),
                    )?);
                }
                _ => left.push(word.clone()),
            }
        }
        rest_owned = left;
        rest = &rest_owned;
    }
    let transport = chosen.unwrap_or(if looks_like_url {
        Transport::Http
    } else {
        Transport::Stdio
    });
    let reach = match transport {
        Transport::Stdio => {
            if !headers.is_empty() {
                bail!("--header is for a server at a URL; a command takes --env");
            }
            Reach::Command {
                command: first.clone(),
                args: rest.to_vec(),
                env: pairs(&args.env, "--env", false)?,
                cwd: args.cwd.clone(),
            }
        }
        Transport::Http | Transport::Sse => {
            if !rest.is_empty() {
                bail!(
                    "a server at a URL takes no arguments after it (got {}); for a command, leave out --transport",
                    rest.join(" ")
                );
            }
            if !looks_like_url {
                bail!("{first:?} is not an http:// or https:// URL");
            }
            if !args.env.is_empty() || args.cwd.is_some() {
                bail!("--env and --cwd are for a command; a server at a URL takes --header");
            }
            Reach::Url {
                url: first.clone(),
                headers: pairs(&headers, "--header", true)?,
                legacy_sse: transport == Transport::Sse,
            }
        }
    };
    let server = NewServer {
        name: args.name.clone(),
        reach,
        other: Vec::new(),
    };
    Ok((server, json_after))
}

/// The file a symbolic link points at, to compare two paths.
fn real_path(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// The config as it reads after the change, checked before anything is written.
fn reread(path: &Path, text: &str) -> anyhow::Result<Config> {
    Config::parse(path, text, &|name| std::env::var(name).ok()).with_context(|| {
        format!(
            "{}: the changed file would not read back; nothing was written",
            path.display()
        )
    })
}

/// A note when the file written is not the one switchboard reads in this folder.
fn shadowed(path: &Path) -> Option<String> {
    let cwd = std::env::current_dir().ok()?;
    let read = Config::locate(None, &cwd)?;
    (real_path(&read) != real_path(path)).then(|| {
        format!(
            "{} is read first in this folder, so here this change does not count (use --config to pick the file)",
            read.display()
        )
    })
}

/// One server `add` or `add-json` wrote, and why it does not run yet (if so).
struct Added {
    name: String,
    not_running: Option<String>,
    left_out: Vec<String>,
}

/// What an addition wrote where.
struct Addition {
    path: PathBuf,
    created: bool,
    added: Vec<Added>,
    note: Option<String>,
}

/// Write `servers` into the file `global` and `scope` pick, all or none: each is checked in
/// the new text before the file is written once.
fn add_all(
    global: &Global,
    scope: Option<Scope>,
    servers: Vec<NewServer>,
) -> anyhow::Result<Addition> {
    let path = target(global, scope, true)?;
    let old = match std::fs::read_to_string(&path) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let mut text = old.clone();
    for server in &servers {
        text = Some(edit::add_server(&path, text.as_deref(), server)?);
    }
    let text = text.unwrap_or_default();
    let config = reread(&path, &text)?;
    // An entry that could not run whatever the environment held (a URL that is not one) is
    // not written; one waiting for a variable is.
    let every_variable_set = Config::parse(&path, &text, &|_| Some("1".into()))?;
    for server in &servers {
        if let Some(d) = every_variable_set
            .disabled
            .iter()
            .find(|d| d.name == server.name)
        {
            // The place in a file that was not written means nothing: the reason alone.
            let reason = d
                .reason
                .strip_prefix(&format!("{}:", path.display()))
                .and_then(|rest| rest.split_once(": "))
                .map_or(d.reason.as_str(), |(_, reason)| reason);
            bail!("{reason}; nothing was written to {}", path.display());
        }
    }
    edit::save(&path, &text)?;
    let added = servers
        .into_iter()
        .map(|server| {
            // Left out as they were before the file changed (its format decides).
            let left_out = edit::left_out(&path, old.as_deref(), &server);
            let not_running = config
                .disabled
                .iter()
                .find(|d| d.name == server.name)
                .map(|d| d.reason.clone())
                .or_else(|| match &server.reach {
                    Reach::Command { command, .. } => switchboard_mcp::missing_program(command),
                    Reach::Url { .. } => None,
                });
            Added {
                name: server.name,
                not_running,
                left_out,
            }
        })
        .collect();
    let note = global.config.is_none().then(|| shadowed(&path)).flatten();
    Ok(Addition {
        created: old.is_none(),
        path,
        added,
        note,
    })
}

/// What an addition did, as text.
fn print_addition(global: &Global, a: &Addition) {
    for (i, added) in a.added.iter().enumerate() {
        let created = if a.created && i == 0 {
            " (a new file)"
        } else {
            ""
        };
        println!(
            "added server {:?} to {}{created}",
            added.name,
            a.path.display()
        );
        if !added.left_out.is_empty() {
            eprintln!(
                "note: {:?}: left out {} (another host's settings that switchboard.toml has no setting for)",
                added.name,
                added.left_out.join(", ")
            );
        }
        if let Some(reason) = &added.not_running {
            eprintln!("warning: {:?} does not run yet: {reason}", added.name);
        }
    }
    if a.added.iter().all(|added| added.not_running.is_none()) {
        println!(
            "check it with: switchboard servers{}",
            config_flag(global.config.is_some() || a.note.is_some(), &a.path)
        );
    }
    if let Some(note) = &a.note {
        eprintln!("note: {note}");
    }
}

/// `switchboard add`.
pub fn add(global: &Global, args: AddArgs) -> anyhow::Result<ExitCode> {
    let (server, json_after) = new_server(&args)?;
    let a = add_all(global, args.scope, vec![server])?;
    if global.json || json_after {
        let added = &a.added[0];
        print_json(&json!({
            "added": added.name,
            "file": a.path,
            "created": a.created,
            "runs": added.not_running.is_none(),
            "reason": added.not_running,
            "note": a.note,
        }));
    } else {
        print_addition(global, &a);
    }
    Ok(ExitCode::SUCCESS)
}

/// Arguments of `switchboard add-json`.
#[derive(clap::Args, Debug)]
pub struct AddJsonArgs {
    /// [NAME] JSON. The JSON: one server's entry, or a snippet as READMEs give them
    /// ({"mcpServers": {...}}); `-` reads it from standard input (paste, then Ctrl-D). NAME:
    /// needed for one entry alone; with a snippet of several servers, the one to take (all of
    /// them without it).
    #[arg(value_name = "[NAME] JSON", num_args = 1..=2, required = true)]
    pub words: Vec<String>,
    /// Which file (over --config): project is ./switchboard.toml, user the one in your user
    /// config directory. Without either, the config switchboard reads here, else the user's.
    #[arg(long, value_enum)]
    pub scope: Option<Scope>,
}

/// `switchboard add-json`.
pub fn add_json(global: &Global, args: AddJsonArgs) -> anyhow::Result<ExitCode> {
    let (name, json) = match args.words.as_slice() {
        [json] => (None, json),
        [name, json] => (Some(name.as_str()), json),
        _ => bail!("give [NAME] JSON"),
    };
    let text = if json == "-" {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)
            .context("cannot read the JSON from standard input")?;
        text
    } else {
        json.clone()
    };
    let servers = edit::servers_from_snippet(&text, name)
        .map_err(|e| anyhow::anyhow!("{e}; nothing was written"))?;
    let a = add_all(global, args.scope, servers)?;
    if global.json {
        let servers: Vec<_> = a
            .added
            .iter()
            .map(|added| {
                json!({
                    "name": added.name,
                    "runs": added.not_running.is_none(),
                    "reason": added.not_running,
                    "left_out": added.left_out,
                })
            })
            .collect();
        print_json(&json!({
            "added": a.added.iter().map(|added| &added.name).collect::<Vec<_>>(),
            "file": a.path,
            "created": a.created,
            "servers": servers,
            "note": a.note,
        }));
    } else {
        print_addition(global, &a);
    }
    Ok(ExitCode::SUCCESS)
}

/// `--config PATH` for a hint, when the file is not the one read by default.
fn config_flag(needed: bool, path: &Path) -> String {
    if needed {
        format!(" --config {}", path.display())
    } else {
        String::new()
    }
}

/// `switchboard remove | enable | disable`.
pub fn change(global: &Global, args: NameArgs, change: Change) -> anyhow::Result<ExitCode> {
    let path = target(global, args.scope, false)?;
    let old = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let name = &args.name;
    let result = match change {
        Change::Remove => edit::remove_server(&path, &old, name),
        Change::Enable => edit::set_disabled(&path, &old, name, false),
        Change::Disable => edit::set_disabled(&path, &old, name, true),
    };
    let text = match result {
        Ok(text) => text,
        Err(e) => {
            // A misspelt name gets the nearest one the file holds.
            let hint = Config::load(&path).ok().and_then(|c| {
                let names: Vec<String> = c
                    .servers
                    .iter()
                    .map(|s| s.name().to_string())
                    .chain(c.disabled.iter().map(|d| d.name.clone()))
                    .collect();
                let absent = names.iter().all(|n| n != name);
                switchboard_host::config::closest(name, names.iter().map(String::as_str))
                    .filter(|_| absent)
                    .map(|n| format!("; did you mean {n:?}?"))
            });
            bail!("{e}{}", hint.unwrap_or_default());
        }
    };
    let config = reread(&path, &text)?;
    let changed = text != old;
    if changed {
        edit::save(&path, &text)?;
    }
    let verb = match change {
        Change::Remove => "removed",
        Change::Enable => "enabled",
        Change::Disable => "disabled",
    };
    // What the change leaves: a profile still naming a removed server, a server enabled that
    // still cannot run.
    let mut notes = Vec::new();
    if let Change::Remove = change {
        for (profile, p) in &config.profiles {
            if p.servers.as_ref().is_some_and(|s| s.contains(name)) {
                notes.push(format!(
                    "profile {profile:?} still names {name:?}; take it out of [profiles.{profile}] servers"
                ));
            }
        }
    }
    if let Change::Enable = change
        && let Some(d) = config.disabled.iter().find(|d| &d.name == name)
    {
        notes.push(format!("it does not run yet: {}", d.reason));
    }
    if global.config.is_none()
        && let Some(note) = shadowed(&path)
    {
        notes.push(note);
    }
    if global.json {
        print_json(&json!({
            verb: name,
            "file": path,
            "changed": changed,
            "notes": notes,
        }));
    } else {
        if changed {
            let place = if let Change::Remove = change {
                "from"
            } else {
                "in"
            };
            println!("{verb} server {name:?} {place} {}", path.display());
        } else {
            println!("server {name:?} is already {verb} in {}", path.display());
        }
        for note in &notes {
            eprintln!("note: {note}");
        }
    }
    Ok(ExitCode::SUCCESS)
}
