//! chat's slash commands: /tools [WORD|NAME], /servers (/mcp), /reload, /reconnect [NAME...],
//! /cost, /prompt [NAME [key=value ...]], /attach [URI], /roots [add|remove DIR],
//! /model [[PROVIDER:]NAME [URL]], /compact [FOCUS], /undo, /retry, /save FILE, /clear, /quit.

use serde_json::{Map, Value};
use switchboard_core::clip;
use switchboard_host::agent::Agent;
use switchboard_providers::Part;

use crate::Global;

/// What the chat loop does after a slash command.
pub(crate) enum Command {
    /// End the chat.
    Quit,
    /// Read the next line.
    Done,
    /// The conversation was started over or replaced by a summary.
    Cleared,
    /// Send this text as the user's message.
    Send(String),
    /// Save the conversation to this file, now and after each message from then on.
    SaveTo(std::path::PathBuf),
}

/// Run the slash command `cmd` (the line without its `/`).
pub(crate) async fn command(
    global: &Global,
    agent: &mut Agent,
    cmd: &str,
    attached: &mut Vec<Part>,
) -> Command {
    let (name, rest) = cmd.split_once(' ').unwrap_or((cmd, ""));
    let rest = rest.trim();
    match name {
        "quit" | "exit" | "q" => Command::Quit,
        "tools" => {
            print!("{}", tools(agent, rest));
            Command::Done
        }
        // `/mcp` is Claude Code's name for it.
        "servers" | "mcp" => {
            let statuses = agent.sessions().statuses();
            for s in &statuses {
                println!("{:20} {}", s.name, s.state.describe());
            }
            if statuses
                .iter()
                .any(|s| s.state != switchboard_mcp::ServerState::Ready)
            {
                eprintln!("(/reconnect starts the servers that are not ready again)");
            }
            Command::Done
        }
        "cost" => {
            println!("{}", cost(agent));
            Command::Done
        }
        "clear" => {
            let n = agent.messages.len();
            agent.messages.clear();
            attached.clear();
            eprintln!(
                "(the conversation starts over: {n} messages left out; tools, servers and usage so far stay)"
            );
            Command::Cleared
        }
        "model" => model(agent, rest),
        "compact" => compact(agent, rest).await,
        "save" if rest.is_empty() => {
            eprintln!("usage: /save FILE (the conversation goes there now and after each message)");
            Command::Done
        }
        "save" => Command::SaveTo(std::path::PathBuf::from(rest)),
        "undo" => undo(agent, false, attached),
        "retry" => undo(agent, true, attached),
        "prompt" if rest.is_empty() => {
            print!("{}", prompts(agent));
            Command::Done
        }
        "attach" if rest.is_empty() => {
            print!("{}", resources(agent));
            Command::Done
        }
        "prompt" => match prompt(agent, rest).await {
            Ok(text) => Command::Send(text),
            Err(e) => {
                eprintln!("error: {e}");
                Command::Done
            }
        },
        "reload" => {
            match reload(global, agent).await {
                Ok(said) => eprintln!("{said}"),
                Err(e) => eprintln!("error: {e:#} (nothing changed)"),
            }
            Command::Done
        }
        "reconnect" => {
            match reconnect(agent, rest).await {
                Ok(said) => eprintln!("{said}"),
                Err(e) => eprintln!("error: {e}"),
            }
            Command::Done
        }
        "roots" => {
            match roots(agent, rest).await {
                Ok(said) => eprintln!("{said}"),
                Err(e) => eprintln!("error: {e}"),
            }
            Command::Done
        }
        "attach" => {
            match attach(agent, rest).await {
                Ok(part) => {
                    attached.push(part);
                    eprintln!("attached {rest}; it goes with your next message");
                }
                Err(e) => eprintln!("error: {e}"),
            }
            Command::Done
        }
        other => {
            eprintln!(
                "unknown command /{other}; try /tools /servers /reload /reconnect /cost /prompt /attach /roots /model /compact /undo /retry /save /clear /quit"
            );
            Command::Done
        }
    }
}

/// `/model` (the provider and model in use), `/model NAME` (that model of the same provider
/// from the next request on, with how the reasoning effort now reaches it), or
/// `/model PROVIDER:NAME [URL]` (a model of another provider, or of another server of this one:
/// the conversation goes on with it, its tool uses given new ids and the old model's reasoning
/// left out). A `NAME` whose part before `:` names no provider (`llama3:8b`) is a model name;
/// one that plainly belongs to another provider (`gpt-5` while on Claude) goes to it, unless
/// requests go to a URL of the user's own.
fn model(agent: &mut Agent, rest: &str) -> Command {
    let (before, dialect) = (agent.client().model.clone(), agent.client().dialect);
    let mut words = rest.split_whitespace();
    let (Some(spec), url) = (words.next(), words.next()) else {
        println!("{dialect} {before} at {}", agent.client().base_url);
        return Command::Done;
    };
    if words.next().is_some() {
        eprintln!("/model takes [PROVIDER:]NAME and an optional URL");
        return Command::Done;
    }
    let named = spec
        .split_once(':')
        .filter(|(_, n)| !n.is_empty())
        .and_then(|(p, n)| Some((p.parse::<switchboard_core::Dialect>().ok()?, n)));
    // A name of another provider's family (`gpt-5` while talking to Claude) goes to that
    // provider, unless requests go to a server of the user's own.
    let at_default = agent.client().base_url.trim_end_matches('/')
        == switchboard_providers::default_base_url(dialect).trim_end_matches('/');
    let (provider, name) = match named {
        Some(named) => named,
        None => match switchboard_providers::provider_for_model(spec) {
            Some(d)
                if url.is_none()
                    && at_default
                    && !switchboard_providers::same_provider(d, dialect) =>
            {
                (d, spec)
            }
            _ => (dialect, spec),
        },
    };
    if provider == dialect && url.is_none() {
        if name == before {
            eprintln!("(already {name})");
            return Command::Done;
        }
        agent.set_model(name);
    } else {
        match agent.client().switched(provider, url, name) {
            Ok(client) => agent.set_client(client),
            Err(e) => {
                eprintln!("(still {dialect} {before}: {e})");
                return Command::Done;
            }
        }
    }
    let effort = match agent.reasoning_effort_fields() {
        Some(Ok(fields)) => format!("; reasoning effort: {fields}"),
        Some(Err(why)) => format!("; the reasoning effort is left out: {why}"),
        None => String::new(),
    };
    let now = agent.client();
    let whose = if now.dialect == dialect {
        String::new()
    } else {
        format!("{} ", now.dialect)
    };
    eprintln!("(now {whose}{name}, in place of {before}; the conversation goes on{effort})");
    if agent.max_cost().is_some() && agent.spent().is_none() {
        eprintln!(
            "(--max-cost cannot be kept for {name}: the price table has no input and output price for it, so the next message will not be sent; /model back to a priced model)"
        );
    }
    Command::Cleared
}

/// `/undo`: the user's last message and what followed it left out (see `Agent::undo`);
/// `/retry` (`again`): that, and the message sent again, with what was attached to it.
fn undo(agent: &mut Agent, again: bool, attached: &mut Vec<Part>) -> Command {
    let Some(mut parts) = agent.undo() else {
        eprintln!("(nothing to take back)");
        return Command::Done;
    };
    let text = match parts.last() {
        Some(Part::Text(t)) if !t.trim().is_empty() => t.clone(),
        _ => String::new(),
    };
    if !again || text.is_empty() {
        eprintln!(
            "(your last message and what followed it are left out: {})",
            clip(&text, 80)
        );
        return Command::Cleared;
    }
    parts.pop();
    eprintln!("(sent again: {})", clip(&text, 80));
    attached.extend(parts);
    Command::Send(text)
}

/// `/compact [FOCUS]`: the model's summary replaces the conversation (see `Agent::compact`).
async fn compact(agent: &mut Agent, focus: &str) -> Command {
    let spinner = crate::output::spinner("summarizing the conversation");
    let done = agent.compact(Some(focus)).await;
    spinner.finish_and_clear();
    match done {
        Ok(Some(c)) => {
            let clipped = if c.clipped {
                format!(
                    "; it did not fit whole, so tool results and arguments were cut to {} characters for it",
                    switchboard_host::agent::COMPACT_RESULT_CHARS
                )
            } else {
                String::new()
            };
            if c.parts > 0 {
                eprintln!(
                    "(compacted: {} messages are now a summary; too long to summarize at once, {} earlier part(s) were summarized first{clipped}; /cost counts the requests)",
                    c.messages, c.parts
                );
            } else {
                eprintln!(
                    "(compacted: {} messages, about {} input tokens, are now a summary of {} tokens{clipped}; /cost counts the request)",
                    c.messages, c.usage.input_tokens, c.usage.output_tokens
                );
            }
            Command::Cleared
        }
        Ok(None) => {
            eprintln!("(nothing to compact yet)");
            Command::Done
        }
        Err(e) => {
            eprintln!("error: {e}");
            Command::Done
        }
    }
}

/// `/reload`: the config read again (the same file, profile and flags as at the start) and its
/// servers served from now on: a new entry starts, a removed or disabled one stops, a changed
/// or failed one starts again, the rest keep running; tool lists, names, approvals and roots
/// follow, the model and the conversation stay. Returns once the servers started are ready or
/// have failed, saying which.
async fn reload(global: &Global, agent: &mut Agent) -> anyhow::Result<String> {
    let config = crate::source::load_config(global)?;
    let outcome = agent.reconfigure(&config).await;
    let starting: Vec<&String> = outcome.started.iter().chain(&outcome.restarted).collect();
    if !starting.is_empty() {
        let names: Vec<&str> = starting.iter().map(|n| n.as_str()).collect();
        let pb = crate::output::spinner(format!("starting {}", names.join(", ")));
        let limit = config
            .servers
            .iter()
            .filter(|s| names.contains(&s.name()))
            .map(|s| s.spec.startup_timeout)
            .max()
            .unwrap_or_default();
        let deadline = tokio::time::Instant::now() + limit + std::time::Duration::from_secs(1);
        while tokio::time::Instant::now() < deadline
            && agent.sessions().statuses().iter().any(|s| {
                names.contains(&s.name.as_str())
                    && s.state == switchboard_mcp::ServerState::Connecting
            })
        {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        pb.finish_and_clear();
    }
    let statuses = agent.sessions().statuses();
    let state = |name: &str| match statuses.iter().find(|s| s.name == name) {
        Some(s) if s.state == switchboard_mcp::ServerState::Ready => {
            format!("ready, {} tool(s)", s.tools)
        }
        Some(s) => s.state.describe(),
        None => "not found".to_string(),
    };
    let mut lines = Vec::new();
    for name in &outcome.started {
        lines.push(format!("started {name}: {}", state(name)));
    }
    for name in &outcome.restarted {
        lines.push(format!(
            "started {name} again (its entry changed, or it had failed): {}",
            state(name)
        ));
    }
    for name in &outcome.stopped {
        match config.disabled.iter().find(|d| &d.name == name) {
            Some(d) => lines.push(format!("stopped {name}: {}", d.reason)),
            None => lines.push(format!("stopped {name}: no longer in the config")),
        }
    }
    let kept = outcome.kept.len();
    lines.push(if outcome.changed() {
        format!("{kept} server(s) kept running; the model sees the tools as they are now at its next request")
    } else {
        format!("no server changed ({kept} kept running); settings such as tool lists and approvals are the config's now")
    });
    Ok(lines.join("\n"))
}

/// `/reconnect NAME...`: each server's session closed and started again from its entry (after
/// `switchboard auth login NAME` in another terminal, an install, or a server that is stuck);
/// `/reconnect` alone: every server that is not ready. Returns once each is back or has failed,
/// saying which; the model sees the tools they list from its next request.
async fn reconnect(agent: &Agent, rest: &str) -> anyhow::Result<String> {
    let sessions = agent.sessions();
    let statuses = sessions.statuses();
    let names: Vec<String> = if rest.is_empty() {
        statuses
            .iter()
            .filter(|s| s.state != switchboard_mcp::ServerState::Ready)
            .map(|s| s.name.clone())
            .collect()
    } else {
        rest.split_whitespace().map(str::to_string).collect()
    };
    if names.is_empty() {
        return Ok("every server is ready (/reconnect NAME starts one again anyway)".into());
    }
    for name in &names {
        if !statuses.iter().any(|s| &s.name == name) {
            let hint =
                switchboard_host::config::closest(name, statuses.iter().map(|s| s.name.as_str()))
                    .map(|n| format!("; did you mean {n:?}?"))
                    .unwrap_or_default();
            anyhow::bail!("no server is named {name:?}{hint}");
        }
    }
    let pb = crate::output::spinner(format!("reconnecting {}", names.join(", ")));
    let restarted = futures::future::join_all(names.iter().map(|n| sessions.restart(n))).await;
    pb.finish_and_clear();
    let lines: Vec<String> = names
        .iter()
        .zip(restarted)
        .map(|(name, r)| match r {
            Ok(s) if s.state == switchboard_mcp::ServerState::Ready => {
                format!("{name}: ready, {} tool(s)", s.tools)
            }
            Ok(s) => format!("{name}: {}", s.state.describe()),
            Err(e) => format!("{name}: {e}"),
        })
        .collect();
    Ok(lines.join("\n"))
}

/// `/roots` (the folders offered to the servers), `/roots add DIR`, `/roots remove DIR`: the
/// servers are told of a change (`roots/list_changed`), and it returns once those that take
/// roots have them.
async fn roots(agent: &Agent, rest: &str) -> anyhow::Result<String> {
    let mut now: Vec<switchboard_mcp::Root> = switchboard_mcp::roots().to_vec();
    let (verb, dir) = rest.split_once(' ').unwrap_or((rest, ""));
    let dir = dir.trim();
    // Servers with roots of their own keep them whatever /roots does: say so.
    let own = agent.sessions().own_roots();
    let list = |roots: &[switchboard_mcp::Root]| {
        let to = if own.is_empty() {
            ""
        } else {
            " (to the servers without their own)"
        };
        let mut text = if roots.is_empty() {
            format!("no roots are offered{to} (/roots add DIR offers one)")
        } else {
            let lines: Vec<&str> = roots.iter().map(|r| r.uri.as_str()).collect();
            format!("roots offered{to}:\n  {}", lines.join("\n  "))
        };
        for (server, roots) in &own {
            let lines: Vec<&str> = roots.iter().map(|r| r.uri.as_str()).collect();
            text.push_str(&if lines.is_empty() {
                format!("\n{server} has its own: none")
            } else {
                format!("\n{server} has its own:\n  {}", lines.join("\n  "))
            });
        }
        text
    };
    let root = || -> anyhow::Result<switchboard_mcp::Root> {
        if dir.is_empty() {
            anyhow::bail!("give a folder: /roots {verb} DIR");
        }
        let cwd = std::env::current_dir()?;
        let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
        let real = switchboard_host::config::folder::real_folder(
            std::path::Path::new(dir),
            &cwd,
            home.as_deref(),
        )
        .map_err(anyhow::Error::msg)?;
        switchboard_mcp::Root::folder(&real)
            .ok_or_else(|| anyhow::anyhow!("{}: not an absolute path", real.display()))
    };
    match verb {
        "" | "list" => return Ok(list(&now)),
        "add" => {
            let root = root()?;
            if now.contains(&root) {
                return Ok(format!("{} is offered already", root.uri));
            }
            now.push(root);
        }
        "remove" => {
            let root = root()?;
            let before = now.len();
            now.retain(|r| r.uri != root.uri);
            if now.len() == before {
                return Ok(format!("{} was not offered; {}", root.uri, list(&now)));
            }
        }
        other => anyhow::bail!("unknown /roots {other}: /roots, /roots add DIR, /roots remove DIR"),
    }
    agent.sessions().set_roots(now.clone()).await;
    Ok(format!("{}\n(the servers were told)", list(&now)))
}

/// `/cost`: tokens so far, the tools array's share, and what they cost where the price table
/// knows the model (input with cache reads and writes at their prices, and output where the
/// table has its price).
fn cost(agent: &Agent) -> String {
    let u = &agent.usage;
    let requests = agent.turns.len() as u64;
    let cached = u.cache_read_tokens.unwrap_or(0);
    let reasoning = u
        .reasoning_tokens
        .map(|r| format!(" ({r} reasoning)"))
        .unwrap_or_default();
    let mut out = format!(
        "{requests} model requests; {} input tokens ({cached} read from cache), {} output tokens{reasoning}",
        u.input_tokens, u.output_tokens
    );
    if let Some((rent, method)) = agent.rent() {
        out.push_str(&format!(
            "\ntools array: {rent} tokens per request ({method}), about {} so far",
            rent * requests
        ));
    }
    let costs = agent.costs();
    let current = &agent.client().model;
    if costs.len() > 1 || costs.first().is_some_and(|(model, ..)| model != current) {
        // Several models spent tokens (a /model switch, a server's sampling model): each
        // at its own prices, and the sum where all are known.
        match agent.spent() {
            Some(total) => out.push_str(&format!("\ncost about {}:", total.display())),
            None => out.push_str("\ncost not known for every model:"),
        }
        for (model, u, c) in costs {
            let tokens = format!(
                "{} input, {} output tokens",
                u.input_tokens, u.output_tokens
            );
            match c.as_ref().and_then(|c| Some((c.total()?, c))) {
                Some((total, c)) => out.push_str(&format!(
                    "\n  {model}: {tokens}, about {} (input {}, output {})",
                    total.display(),
                    c.input.display(),
                    c.output.map(|o| o.display()).unwrap_or_default()
                )),
                None => out.push_str(&format!(
                    "\n  {model}: {tokens}; no full price known (chat --prices FILE gives a table with it)"
                )),
            }
        }
        return out;
    }
    match agent.price() {
        Some(p) => {
            let c = crate::run::usage_cost(&p, u);
            let input = format!("input {} at {}", c.input.display(), p.input_per_mtok);
            match (c.total(), c.output, p.output_per_mtok) {
                (Some(total), Some(output), Some(per)) => out.push_str(&format!(
                    "\ncost about {}: {input}, output {} at {per} ({}, {})",
                    total.display(),
                    output.display(),
                    p.id,
                    p.date
                )),
                _ => out.push_str(&format!(
                    "\n{input} ({}, {}); the table has no output price for it",
                    p.id, p.date
                )),
            }
        }
        None => out.push_str(&format!(
            "\nno price known for {} (chat --prices FILE gives a table with it)",
            agent.client().model
        )),
    }
    out
}

/// `/tools`: every tool the model is sent, its public name and `server/tool`; `/tools WORD`:
/// those whose names hold WORD; `/tools NAME` (a public name or `server/tool`): that tool as
/// the model reads it, its description and its input schema as sent.
fn tools(agent: &mut Agent, rest: &str) -> String {
    let t = agent.translation();
    let row = |n: &switchboard_host::translate::NameRow| {
        format!("{:40} {}/{}\n", n.public, n.server, n.tool)
    };
    if rest.is_empty() {
        return t.names.iter().map(row).collect();
    }
    let exact = t
        .names
        .iter()
        .find(|n| n.public == rest || format!("{}/{}", n.server, n.tool) == rest);
    if let Some(n) = exact
        && let Some(spec) = t.tools.iter().find(|s| s.name == n.public)
    {
        let schema = serde_json::to_string_pretty(&spec.schema).unwrap_or_default();
        return format!(
            "{} ({}/{})\n\n{}\n\ninput schema as sent:\n{schema}\n",
            n.public,
            n.server,
            n.tool,
            spec.description.as_deref().unwrap_or("(no description)")
        );
    }
    let word = rest.to_lowercase();
    let found: String = t
        .names
        .iter()
        .filter(|n| {
            n.public.to_lowercase().contains(&word)
                || format!("{}/{}", n.server, n.tool)
                    .to_lowercase()
                    .contains(&word)
        })
        .map(row)
        .collect();
    if found.is_empty() {
        format!("no tool the model is sent has {rest:?} in its name\n")
    } else {
        found
    }
}

/// `/prompt` alone: every server's prompts, `server/name` with their arguments (`*` when
/// required) and descriptions.
fn prompts(agent: &Agent) -> String {
    let catalog = agent.sessions().catalog();
    let mut out = String::new();
    for s in catalog.servers.values() {
        for p in &s.prompts {
            let args: Vec<String> = p
                .def
                .arguments
                .iter()
                .map(|a| {
                    let star = if a.required == Some(true) { "*" } else { "" };
                    format!("{}{star}", a.name)
                })
                .collect();
            let args = if args.is_empty() {
                String::new()
            } else {
                format!(" [{}]", args.join(" "))
            };
            let about = p.def.description.as_deref().unwrap_or_default();
            out.push_str(&format!(
                "{}/{}{args}  {}\n",
                s.server,
                p.def.name,
                clip(about, 100)
            ));
        }
    }
    if out.is_empty() {
        out.push_str("no server offers prompts\n");
    } else {
        out.push_str("(/prompt NAME key=value ...; * marks a required argument; quote a value with spaces: key=\"two words\")\n");
    }
    out
}

/// `/attach` alone: every server's resources (URI and name) and resource templates.
fn resources(agent: &Agent) -> String {
    let catalog = agent.sessions().catalog();
    let mut out = String::new();
    for s in catalog.servers.values() {
        for r in &s.resources {
            out.push_str(&format!("{:40} {} ({})\n", r.def.uri, r.def.name, s.server));
        }
        for t in &s.resource_templates {
            out.push_str(&format!(
                "{:40} {} ({}, a template: fill in the {{...}})\n",
                t.def.uri_template, t.def.name, s.server
            ));
        }
    }
    if out.is_empty() {
        out.push_str("no server lists resources\n");
    }
    out
}

/// Words as a shell splits them, for `key=value` arguments: whitespace separates, and double
/// or single quotes keep a value's spaces (`key="two words"`); a backslash in double quotes
/// takes the next character as it is.
fn words(text: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => out.extend(word.take()),
            '"' | '\'' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some(q) if q == c => break,
                        Some('\\') if c == '"' => match chars.next() {
                            Some(next) => w.push(next),
                            None => return Err("a quote is not closed".into()),
                        },
                        Some(other) => w.push(other),
                        None => return Err("a quote is not closed".into()),
                    }
                }
            }
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    out.extend(word);
    Ok(out)
}

/// `/prompt [server/]NAME key=value ...`: the prompt's messages as one user message. A
/// required argument left out, or one the prompt does not take, is named before the server is
/// asked.
async fn prompt(agent: &Agent, rest: &str) -> Result<String, String> {
    let words = words(rest)?;
    let mut words = words.iter();
    let wanted = words.next().ok_or("usage: /prompt NAME [key=value ...]")?;
    let wanted = wanted.as_str();
    let mut args = Map::new();
    for w in words {
        let (k, v) = w
            .split_once('=')
            .ok_or_else(|| format!("{w:?} is not key=value"))?;
        args.insert(k.into(), Value::String(v.into()));
    }
    let (server_hint, name) = match wanted.split_once('/') {
        Some((s, n)) => (Some(s), n),
        None => (None, wanted),
    };
    let catalog = agent.sessions().catalog();
    let server = catalog
        .servers
        .values()
        .filter(|s| server_hint.is_none_or(|h| h == s.server))
        .find(|s| s.prompts.iter().any(|p| p.def.name == name))
        .map(|s| s.server.clone())
        .ok_or_else(|| {
            let all: Vec<String> = catalog
                .servers
                .values()
                .flat_map(|s| {
                    s.prompts
                        .iter()
                        .map(move |p| format!("{}/{}", s.server, p.def.name))
                })
                .collect();
            format!("no prompt {wanted:?}; prompts: {}", all.join(", "))
        })?;
    if let Some(def) = catalog
        .servers
        .get(&server)
        .and_then(|s| s.prompts.iter().find(|p| p.def.name == name))
    {
        let takes = |key: &str| def.def.arguments.iter().any(|a| a.name == key);
        let described = || -> String {
            let all: Vec<String> = def
                .def
                .arguments
                .iter()
                .map(|a| match &a.description {
                    Some(d) => format!("{} ({})", a.name, clip(d, 80)),
                    None => a.name.clone(),
                })
                .collect();
            if all.is_empty() {
                "none".into()
            } else {
                all.join(", ")
            }
        };
        if let Some(extra) = args.keys().find(|k| !takes(k)) {
            return Err(format!(
                "prompt {wanted:?} takes no argument {extra:?}; its arguments: {}",
                described()
            ));
        }
        let missing: Vec<&str> = def
            .def
            .arguments
            .iter()
            .filter(|a| a.required == Some(true) && !args.contains_key(&a.name))
            .map(|a| a.name.as_str())
            .collect();
        if !missing.is_empty() {
            return Err(format!(
                "prompt {wanted:?} needs {}: /prompt {wanted} {}; its arguments: {}",
                missing.join(", "),
                missing
                    .iter()
                    .map(|m| format!("{m}=..."))
                    .collect::<Vec<_>>()
                    .join(" "),
                described()
            ));
        }
    }
    let result = agent
        .sessions()
        .get_prompt(&server, name, args)
        .await
        .map_err(|e| e.to_string())?;
    let mut text = String::new();
    for m in result["messages"].as_array().into_iter().flatten() {
        let Some(said) = message_text(&m["content"]) else {
            continue;
        };
        if !text.is_empty() {
            text.push_str("\n\n");
        }
        // The prompt's messages become one of yours; what it puts in the model's mouth says so.
        if m["role"] == "assistant" {
            text.push_str("[assistant] ");
        }
        text.push_str(&said);
    }
    if text.is_empty() {
        return Err(format!("prompt {wanted:?} has no messages with text"));
    }
    eprintln!("{text}");
    Ok(text)
}

/// A prompt message's content as text: its text, an embedded resource's text under its URI,
/// and a line naming what cannot be shown (an image, audio, binary contents, a link).
fn message_text(content: &Value) -> Option<String> {
    let kind = content["type"].as_str()?;
    let mime = || content["mimeType"].as_str().unwrap_or("unknown type");
    Some(match kind {
        "text" => content["text"].as_str()?.to_string(),
        "resource" => {
            let r = &content["resource"];
            let uri = r["uri"].as_str().unwrap_or("?");
            match r["text"].as_str() {
                Some(t) => format!("[resource {uri}]\n{t}"),
                None => format!(
                    "[resource {uri}: {} content not shown]",
                    r["mimeType"].as_str().unwrap_or("binary")
                ),
            }
        }
        "resource_link" => format!(
            "[resource link: {}]",
            content["uri"].as_str().unwrap_or("?")
        ),
        "image" | "audio" => format!("[{kind} ({}) not shown]", mime()),
        _ => return None,
    })
}

/// `/attach [server/]URI`: the resource's text as a part of the next message.
pub(crate) async fn attach(agent: &Agent, rest: &str) -> Result<Part, String> {
    if rest.is_empty() {
        return Err("usage: /attach URI".into());
    }
    let catalog = agent.sessions().catalog();
    let server = switchboard_host::resource_tool::owner(&catalog, None, rest, &Default::default())
        .ok_or_else(|| {
            format!(
                "no server lists the resource {rest:?} (chat's /attach alone, or `switchboard servers NAME`, lists what they offer)"
            )
        })?;
    let contents = agent
        .sessions()
        .read_resource(&server, rest)
        .await
        .map_err(|e| e.to_string())?;
    // Text as text (also text sent as a base64 blob), other contents named.
    let mut text = format!("[attached resource {rest} from server {server}]\n");
    for block in switchboard_host::resource_tool::as_result(&contents).content {
        match block {
            switchboard_core::ContentBlock::Text { text: t } => text.push_str(&t),
            switchboard_core::ContentBlock::Image { mime_type, .. } => {
                text.push_str(&format!("[{mime_type} content not shown]"));
            }
            _ => continue,
        }
        text.push('\n');
    }
    Ok(Part::Text(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_on_spaces_and_keep_quoted_ones() {
        let w = |t: &str| words(t).unwrap();
        assert_eq!(w("p  a=1 b=2"), ["p", "a=1", "b=2"]);
        assert_eq!(
            w(r#"p city="New York" note='it''s' x="a\"b""#),
            ["p", "city=New York", "note=its", r#"x=a"b"#]
        );
        assert_eq!(w(r#"p empty="""#), ["p", "empty="]);
        assert_eq!(w(""), Vec::<String>::new());
        assert!(words(r#"p city="New York"#).is_err());
        assert!(words("p x='open").is_err());
    }
}
