//! `switchboard add | remove | enable | disable`: one server entry of a config file changed,
//! the rest of the file (comments, order, layout) left as it was.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context as _, bail};
use serde_json::json;
use switchboard_host::Config;
use switchboard_host::config::edit::{self, NewServer, Own, Reach};

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
    #[command(flatten)]
    pub options: AddOptions,
}

/// `add`'s options: before NAME, or after a URL.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct AddOptions {
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
    /// Offer models only this tool of the server (repeatable; * and ? match any text and any
    /// one character): `tools.allow`. switchboard.toml only, as all of the options below.
    #[arg(long, value_name = "TOOL")]
    pub allow: Vec<String>,
    /// Never offer models this tool (repeatable; patterns as --allow): `tools.deny`.
    #[arg(long, value_name = "TOOL")]
    pub deny: Vec<String>,
    /// When a model's calls to this server wait for the user's approval (`approve`): always,
    /// unsafe, writes, destructive or never. (The global --approve is a run-wide default for
    /// servers that set none, and is not written.)
    #[arg(long, value_name = "MODE", value_parser = crate::parse_approve)]
    pub approval: Option<switchboard_host::config::Approve>,
    /// How long one call may take (`call_timeout`): seconds, or "500ms", "90s", "2m".
    #[arg(long, value_name = "DURATION")]
    pub timeout: Option<String>,
    /// The prefix of the server's tools' public names in place of NAME (`alias`; "" for
    /// none).
    #[arg(long, value_name = "PREFIX")]
    pub alias: Option<String>,
    /// For a URL: the OAuth client id registered for switchboard with the server's
    /// authorization server, for servers that register no clients themselves (GitHub's).
    /// Also written into a .mcp.json, as Claude Code writes it.
    #[arg(long, value_name = "ID")]
    pub client_id: Option<String>,
    /// For a URL: the environment variable holding that client's secret, written as ${VAR}
    /// so the secret stays out of the file.
    #[arg(long, value_name = "VAR")]
    pub client_secret_env: Option<String>,
    /// For a URL: the loopback port of the redirect URI registered for that client
    /// (http://127.0.0.1:PORT/callback). Also written into a .mcp.json.
    #[arg(long, value_name = "PORT", value_parser = clap::value_parser!(u16).range(1..))]
    pub callback_port: Option<u16>,
    /// For a URL: the client gets its token with its own credentials, no login (OAuth client
    /// credentials: grant = "client_credentials"); with --client-id and --client-secret-env.
    #[arg(long)]
    pub client_credentials: bool,
}

impl AddOptions {
    /// These options with `later`'s (those written after a URL) on top.
    fn and(mut self, later: AddOptions) -> AddOptions {
        self.transport = later.transport.or(self.transport);
        self.env.extend(later.env);
        self.header.extend(later.header);
        self.cwd = later.cwd.or(self.cwd);
        self.scope = later.scope.or(self.scope);
        self.allow.extend(later.allow);
        self.deny.extend(later.deny);
        self.approval = later.approval.or(self.approval);
        self.timeout = later.timeout.or(self.timeout);
        self.alias = later.alias.or(self.alias);
        self.client_id = later.client_id.or(self.client_id);
        self.client_secret_env = later.client_secret_env.or(self.client_secret_env);
        self.callback_port = later.callback_port.or(self.callback_port);
        self.client_credentials |= later.client_credentials;
        self
    }

    /// The switchboard settings they give.
    fn own(&self) -> anyhow::Result<Own> {
        let client_secret = match &self.client_secret_env {
            Some(var) => {
                let ok = !var.is_empty()
                    && var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                    && !var.starts_with(|c: char| c.is_ascii_digit());
                if !ok {
                    bail!(
                        "--client-secret-env {var:?}: give the name of an environment variable (letters, digits and _), not the secret"
                    );
                }
                Some(format!("${{{var}}}"))
            }
            None => None,
        };
        Ok(Own {
            allow: self.allow.clone(),
            deny: self.deny.clone(),
            approve: self.approval.map(|a| a.word().to_string()),
            call_timeout: self.timeout.clone(),
            alias: self.alias.clone(),
            client_id: self.client_id.clone(),
            client_secret,
            redirect_port: self.callback_port,
            client_credentials: self.client_credentials,
            roots: Vec::new(),
        })
    }
}

/// The words after a URL, read as `add`'s options (and the global `--json`).
#[derive(clap::Parser, Debug)]
#[command(name = "add NAME URL", no_binary_name = true, disable_help_flag = true)]
struct AfterUrl {
    #[command(flatten)]
    options: AddOptions,
    #[arg(long)]
    json: bool,
    #[arg(long = "root")]
    roots: Vec<PathBuf>,
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
    if scope.is_none() && crate::source::inline(global).is_some() {
        bail!(
            "--config holds JSON, not a file to write into; give a file's path (or --scope project|user)"
        );
    }
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

/// What `add` writes, from its command line; whether `--json` came after a URL; the scope.
fn new_server(
    args: &AddArgs,
    roots: &[PathBuf],
) -> anyhow::Result<(NewServer, bool, Option<Scope>)> {
    let (first, rest) = args
        .command
        .split_first()
        .context("give the server's command or URL after its name")?;
    let mut json_after = false;
    let looks_like_url = first.starts_with("http://") || first.starts_with("https://");
    // A URL takes no arguments, so options written after it are `add`'s own (`add NAME URL
    // --header ...`), as they are before NAME.
    let mut rest = rest;
    let mut roots = roots.to_vec();
    let options = if looks_like_url && !rest.is_empty() {
        let after = <AfterUrl as clap::Parser>::try_parse_from(rest).map_err(|e| {
            let said = e.to_string();
            let first_line = said.lines().next().unwrap_or("").trim_start_matches("error: ");
            anyhow::anyhow!(
                "after the URL: {first_line} (a server at a URL takes no arguments; the words after it are add's options)"
            )
        })?;
        json_after = after.json;
        roots.extend(after.roots);
        rest = &[];
        AddOptions::default().and(after.options)
    } else {
        AddOptions::default()
    };
    let options = args.options.clone().and(options);
    let headers = options.header.clone();
    let transport = options.transport.unwrap_or(if looks_like_url {
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
                env: pairs(&options.env, "--env", false)?,
                cwd: options.cwd.clone(),
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
            if !options.env.is_empty() || options.cwd.is_some() {
                bail!("--env and --cwd are for a command; a server at a URL takes --header");
            }
            Reach::Url {
                url: first.clone(),
                headers: pairs(&headers, "--header", true)?,
                legacy_sse: transport == Transport::Sse,
            }
        }
    };
    let mut own = options.own()?;
    // `--root` written with `add` gives the new server its own roots (absolute, so the entry
    // means the same wherever the file is read from).
    if !roots.is_empty() {
        let cwd = std::env::current_dir().context("cannot read the current directory")?;
        own.roots = crate::source::folders(&roots, &cwd)?
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
    }
    if matches!(reach, Reach::Command { .. })
        && (own.client_id.is_some()
            || own.client_secret.is_some()
            || own.redirect_port.is_some()
            || own.client_credentials)
    {
        bail!(
            "--client-id, --client-secret-env, --callback-port and --client-credentials are for a server at a URL (OAuth); a command gets its credentials from --env"
        );
    }
    let server = NewServer {
        name: args.name.clone(),
        reach,
        other: Vec::new(),
        own,
    };
    Ok((server, json_after, options.scope))
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
    let (server, json_after, scope) = new_server(&args, &global.roots)?;
    let a = add_all(global, scope, vec![server])?;
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
