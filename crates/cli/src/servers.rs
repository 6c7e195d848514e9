//! `switchboard servers`: one row per configured server with its state, protocol, what it offers
//! and how long it took to connect.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context as _;
use serde_json::{Value, json};
use switchboard_core::{ServerCatalog, Verdict, catalog_file};
use switchboard_host::config::ServerConfig;
use switchboard_mcp::{ServerState, ServerStatus};

use crate::output::{color_on_stdout, paint, print_json, styled_table};
use crate::{Global, source};

/// Arguments of `switchboard servers`.
#[derive(clap::Args, Debug)]
pub struct ServersArgs {
    /// Only these servers (their names in the config); every one without any. With names,
    /// each also shows how it is started (command or URL, with no secret values), where its
    /// entry comes from, its timeouts and the tools it lists.
    #[arg(value_name = "NAME")]
    names: Vec<String>,
    /// Also write what the ready servers offer (their tools as the config's allow/deny lists
    /// leave them, resources, prompts, instructions) to FILE, as a catalog file that
    /// `--catalog` reads back
    #[arg(long, value_name = "FILE")]
    save_catalog: Option<PathBuf>,
}

/// One row, whatever its origin (a live session, a disabled config entry, a catalog file).
struct Row {
    name: String,
    transport: String,
    state: String,
    error: Option<String>,
    protocol_version: Option<String>,
    server: Option<String>,
    tools: usize,
    /// Of those, the tools the config's allow/deny lists let through, when that is fewer.
    tools_allowed: Option<usize>,
    resources: usize,
    prompts: usize,
    connect_ms: Option<u64>,
    stderr_tail: Vec<String>,
    /// Where the config entry comes from, when the config gathers several.
    origin: Option<String>,
    /// Tools another host's permission rules deny or make ask: `(verdict, rule, tools)`.
    ruled: Vec<Ruled>,
    /// Tools that run only as tasks (each call waits for its task's result).
    task_tools: Vec<String>,
    /// The server's own roots, when its entry gives it some in place of the ones all get.
    own_roots: Option<Vec<switchboard_mcp::Root>>,
    /// What its entry says about its sampling requests, when not the default.
    sampling: Option<switchboard_host::config::SamplingPolicy>,
    /// How it is started and what it lists, when servers were named on the command line.
    detail: Option<Detail>,
}

/// One named server's entry, as `servers NAME` shows it: no secret values.
#[derive(serde::Serialize)]
struct Detail {
    /// The command line, or the URL (credentials in it redacted).
    start: String,
    /// The environment variables it is given (names only).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    env: Vec<String>,
    /// The headers it is sent (names only).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    headers: Vec<String>,
    /// Its working folder.
    #[serde(skip_serializing_if = "Option::is_none")]
    cwd: Option<String>,
    startup_timeout_ms: u64,
    call_timeout_ms: u64,
    /// The tools a model may reach, when it is ready.
    tools: Vec<String>,
}

impl Detail {
    fn of(
        entry: &switchboard_host::config::ServerConfig,
        listed: Option<&ServerCatalog>,
    ) -> Detail {
        use switchboard_core::TransportSpec;
        let (start, env, headers, cwd) = match &entry.spec.transport {
            TransportSpec::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                let line = std::iter::once(command.as_str())
                    .chain(args.iter().map(String::as_str))
                    .map(|w| {
                        if w.is_empty() || w.contains(char::is_whitespace) {
                            format!("{w:?}")
                        } else {
                            w.to_string()
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(" ");
                (
                    switchboard_core::redact_urls_in(&line),
                    env.iter()
                        .map(|(k, _)| k.clone())
                        // switchboard's own, to stop a config that runs switchboard on itself.
                        .filter(|k| k != crate::source::CHAIN_VAR)
                        .collect(),
                    Vec::new(),
                    cwd.as_ref().map(|c| c.display().to_string()),
                )
            }
            TransportSpec::Http { url, headers, .. } => (
                switchboard_core::redact_url(url),
                Vec::new(),
                headers.iter().map(|(k, _)| k.clone()).collect(),
                None,
            ),
        };
        let millis = |d: std::time::Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        Detail {
            start,
            env,
            headers,
            cwd,
            startup_timeout_ms: millis(entry.spec.startup_timeout),
            call_timeout_ms: millis(entry.spec.call_timeout),
            tools: listed
                .map(|l| l.tools.iter().map(|t| t.def.name.clone()).collect())
                .unwrap_or_default(),
        }
    }

    /// The lines under the table.
    fn text(&self, name: &str, origin: Option<&str>) -> String {
        let mut out = format!("\n{name}: {}\n", self.start);
        if let Some(origin) = origin {
            out.push_str(&format!("  from {origin}\n"));
        }
        if let Some(cwd) = &self.cwd {
            out.push_str(&format!("  in {cwd}\n"));
        }
        if !self.env.is_empty() {
            out.push_str(&format!("  environment: {}\n", self.env.join(", ")));
        }
        if !self.headers.is_empty() {
            out.push_str(&format!("  headers: {}\n", self.headers.join(", ")));
        }
        out.push_str(&format!(
            "  startup timeout {}, call timeout {}\n",
            switchboard_core::time::human(std::time::Duration::from_millis(
                self.startup_timeout_ms
            )),
            switchboard_core::time::human(std::time::Duration::from_millis(self.call_timeout_ms))
        ));
        if !self.tools.is_empty() {
            out.push_str(&format!("  tools: {}\n", self.tools.join(", ")));
        }
        out
    }
}

impl Row {
    fn from_status(s: ServerStatus) -> Row {
        let (state, error) = match &s.state {
            ServerState::Ready => ("ready".to_string(), None),
            ServerState::Failed { reason } => ("failed".to_string(), Some(reason.clone())),
            ServerState::Connecting => ("connecting".to_string(), None),
            ServerState::Restarting { attempt } => (format!("restarting ({attempt})"), None),
        };
        Row {
            name: s.name,
            transport: s.transport.to_string(),
            state,
            error,
            protocol_version: s.protocol_version,
            server: s.server_name.map(|n| {
                format!("{n} {}", s.server_version.unwrap_or_default())
                    .trim()
                    .to_string()
            }),
            tools: s.tools,
            tools_allowed: None,
            resources: s.resources,
            prompts: s.prompts,
            connect_ms: s.connect_ms,
            stderr_tail: s.stderr_tail,
            origin: None,
            ruled: Vec::new(),
            task_tools: Vec::new(),
            own_roots: None,
            sampling: None,
            detail: None,
        }
    }

    fn json(&self) -> Value {
        let mut v = json!({
            "name": self.name,
            "transport": self.transport,
            "state": self.state,
            "tools": self.tools,
            "tools_allowed": self.tools_allowed.unwrap_or(self.tools),
            "resources": self.resources,
            "prompts": self.prompts,
            "protocol_version": self.protocol_version,
            "server": self.server,
            "connect_ms": self.connect_ms,
        });
        if let Some(e) = &self.error {
            v["error"] = json!(e);
            v["stderr_tail"] = json!(self.stderr_tail);
        }
        if let Some(origin) = &self.origin {
            v["origin"] = json!(origin);
        }
        if !self.task_tools.is_empty() {
            v["task_tools"] = json!(self.task_tools);
        }
        if let Some(roots) = &self.own_roots {
            v["roots"] = json!(roots);
        }
        if let Some(p) = &self.sampling {
            v["sampling"] =
                json!({"allowed": p.allowed, "model": p.model, "max_tokens": p.max_tokens});
        }
        if let Some(detail) = &self.detail {
            v["entry"] = json!(detail);
        }
        let by = |by: By| self.ruled.iter().filter(move |r| r.by == by);
        let hidden: Vec<&Ruled> = by(By::List).collect();
        if !hidden.is_empty() {
            v["hidden"] = hidden
                .iter()
                .map(|r| json!({"setting": r.rule, "tools": r.tools}))
                .collect();
        }
        let (own, rules): (Vec<&Ruled>, Vec<&Ruled>) =
            (by(By::Approval).collect(), by(By::Rule).collect());
        if !own.is_empty() {
            v["approval"] = own
                .iter()
                .map(|r| {
                    json!({
                        "verdict": verdict_word(r.verdict),
                        "setting": r.rule,
                        "tools": r.tools,
                    })
                })
                .collect();
        }
        if !rules.is_empty() {
            v["rules"] = rules
                .iter()
                .map(|r| {
                    json!({
                        "verdict": verdict_word(r.verdict),
                        "conditional": r.conditional,
                        "rule": r.rule,
                        "tools": r.tools,
                    })
                })
                .collect();
        }
        v
    }
}

/// Run the command.
pub async fn run(global: &Global, args: ServersArgs) -> anyhow::Result<ExitCode> {
    let started = Instant::now();
    let mut rows = Vec::new();
    let mut source_json;
    // What `--save-catalog` writes: the servers in order, with the tools a model may reach.
    let mut offered: Vec<ServerCatalog> = Vec::new();
    if !global.catalog.is_empty() {
        let catalog = source::load_catalog_files(&global.catalog)?;
        source_json = json!({"kind": "catalog", "files": global.catalog});
        offered.extend(catalog.servers.values().cloned());
        for s in catalog.servers.values() {
            rows.push(Row {
                name: s.server.clone(),
                transport: "file".into(),
                state: "offline".into(),
                error: None,
                protocol_version: s.info.protocol_version.clone(),
                // A saved live catalog names the server as it introduced itself.
                server: match &s.info.name {
                    Some(n) => Some(
                        format!("{n} {}", s.info.version.as_deref().unwrap_or_default())
                            .trim()
                            .to_string(),
                    ),
                    None => s.info.description.clone(),
                },
                tools: s.tools.len(),
                tools_allowed: None,
                resources: s.resources.len(),
                prompts: s.prompts.len(),
                connect_ms: None,
                stderr_tail: Vec::new(),
                origin: None,
                ruled: Vec::new(),
                task_tools: Vec::new(),
                own_roots: None,
                sampling: None,
                detail: None,
            });
        }
    } else {
        let mut config = source::load_config(global)?;
        if !args.names.is_empty() {
            let known: Vec<&str> = config
                .servers
                .iter()
                .map(|s| s.name())
                .chain(config.disabled.iter().map(|d| d.name.as_str()))
                .collect();
            for name in &args.names {
                if !known.contains(&name.as_str()) {
                    let hint = switchboard_host::config::closest(name, known.iter().copied())
                        .map(|n| format!("; did you mean {n:?}?"))
                        .unwrap_or_default();
                    anyhow::bail!(
                        "no server is named {name:?} in the config{hint} (its servers: {})",
                        known.join(", ")
                    );
                }
            }
            config
                .servers
                .retain(|s| args.names.iter().any(|n| n == s.name()));
            config.disabled.retain(|d| args.names.contains(&d.name));
        }
        source_json = serde_json::to_value(&config.source)?;
        if matches!(config.source, switchboard_host::config::ConfigSource::Demo)
            && let Some(obj) = source_json.as_object_mut()
        {
            obj.insert("other_hosts".into(), other_hosts_json());
        }
        if config.servers.is_empty()
            && config.disabled.is_empty()
            && let switchboard_host::config::ConfigSource::File { path } = &config.source
        {
            tracing::warn!(
                "{} names no MCP servers (see --help for the files and keys switchboard reads)",
                path.display()
            );
        }
        let sessions = source::connect(&config).await;
        let catalog = source::presented(&config, &sessions);
        offered = source::offered(&config, &catalog);
        rows.extend(sessions.statuses().into_iter().map(|status| {
            // The allow/deny lists hide tools from every command but this one's TOOLS count.
            let allowed = config
                .servers
                .iter()
                .find(|c| c.name() == status.name)
                .zip(catalog.servers.get(&status.name))
                .map(|(c, listed)| {
                    listed
                        .tools
                        .iter()
                        .filter(|t| c.filter.permits_tool(&t.def))
                        .count()
                });
            let entry = config.servers.iter().find(|c| c.name() == status.name);
            let origin = entry.and_then(|c| c.origin.clone());
            let ruled = entry
                .zip(catalog.servers.get(&status.name))
                .map(|(c, listed)| ruled_tools(c, listed))
                .unwrap_or_default();
            let task_tools = entry
                .zip(catalog.servers.get(&status.name))
                .map(|(c, listed)| {
                    listed
                        .tools
                        .iter()
                        .filter(|t| t.def.requires_task() && c.filter.permits_tool(&t.def))
                        .map(|t| t.def.name.clone())
                        .collect()
                })
                .unwrap_or_default();
            let mut row = Row::from_status(status);
            row.tools_allowed = allowed.filter(|&n| n < row.tools);
            row.origin = origin;
            row.ruled = ruled;
            row.task_tools = task_tools;
            row.own_roots = entry.and_then(|c| c.spec.roots.clone());
            row.sampling = entry
                .map(|c| c.sampling.clone())
                .filter(|p| *p != switchboard_host::config::SamplingPolicy::default());
            if !args.names.is_empty() {
                row.detail =
                    entry.map(|c| Detail::of(c, offered.iter().find(|o| o.server == c.name())));
            }
            row
        }));
        sessions.shutdown().await;
        for d in &config.disabled {
            rows.push(Row {
                name: d.name.clone(),
                transport: "-".into(),
                state: "disabled".into(),
                error: Some(d.reason.clone()),
                protocol_version: None,
                server: None,
                tools: 0,
                tools_allowed: None,
                resources: 0,
                prompts: 0,
                connect_ms: None,
                stderr_tail: Vec::new(),
                origin: d.origin.clone(),
                ruled: Vec::new(),
                task_tools: Vec::new(),
                own_roots: None,
                sampling: None,
                detail: None,
            });
        }
    }
    let all_ok = rows
        .iter()
        .all(|r| r.state == "ready" || r.state == "offline");
    let saved = match &args.save_catalog {
        Some(path) => Some(save_catalog(path, &source_json, &offered)?),
        None => None,
    };
    if global.json {
        let mut report = json!({
            "config": source_json,
            "servers": rows.iter().map(Row::json).collect::<Vec<_>>(),
            "elapsed_ms": started.elapsed().as_millis() as u64,
        });
        if let Some(saved) = saved {
            report["saved_catalog"] = saved;
        }
        if global.catalog.is_empty() {
            report["roots"] = json!(*switchboard_mcp::roots());
        }
        print_json(&report);
    } else {
        if let Some(saved) = &saved {
            eprintln!(
                "saved {} tool(s) of {} server(s) to {}",
                saved["tools"],
                saved["servers"],
                saved["path"].as_str().unwrap_or_default()
            );
        }
        print!("{}", render(&rows));
        for row in &rows {
            if let Some(detail) = &row.detail {
                print!("{}", detail.text(&row.name, row.origin.as_deref()));
            }
        }
        let roots = switchboard_mcp::roots();
        let uris = |roots: &[switchboard_mcp::Root]| -> String {
            let uris: Vec<&str> = roots.iter().map(|r| r.uri.as_str()).collect();
            if uris.is_empty() {
                "none".to_string()
            } else {
                uris.join(", ")
            }
        };
        let own: Vec<(&str, &[switchboard_mcp::Root])> = rows
            .iter()
            .filter_map(|r| Some((r.name.as_str(), r.own_roots.as_deref()?)))
            .collect();
        if global.catalog.is_empty() && (!roots.is_empty() || !own.is_empty()) {
            let others = if own.is_empty() {
                ""
            } else {
                " (to the others)"
            };
            println!("\nroots offered{others}: {}", uris(&roots));
            for (name, roots) in own {
                println!("roots offered to {name} (its own): {}", uris(roots));
            }
        }
        for row in &rows {
            if let Some(p) = &row.sampling {
                println!("{}", sampling_line(&row.name, p));
            }
        }
        if let Some("demo") = source_json.get("kind").and_then(Value::as_str) {
            println!(
                "\n(no config found: these are the embedded demo servers; `switchboard add NAME COMMAND...` adds one of yours, and --help says where config is read)"
            );
            print!("{}", other_hosts_note());
        }
    }
    Ok(if all_ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Write `servers` as a catalog file at `path`; returns what was written, for the report.
fn save_catalog(path: &Path, source: &Value, servers: &[ServerCatalog]) -> anyhow::Result<Value> {
    let from = match source.get("kind").and_then(Value::as_str) {
        Some("catalog") => "switchboard servers --save-catalog, from catalog files".to_string(),
        Some("demo") => "switchboard servers --save-catalog, from the embedded demo".to_string(),
        _ => match source.get("path").and_then(Value::as_str) {
            Some(config) => {
                format!("switchboard servers --save-catalog, from the servers of {config}")
            }
            None => "switchboard servers --save-catalog".to_string(),
        },
    };
    std::fs::write(path, catalog_file::render(&from, servers))
        .with_context(|| format!("cannot write the catalog to {}", path.display()))?;
    Ok(json!({
        "path": path.display().to_string(),
        "servers": servers.len(),
        "tools": servers.iter().map(|s| s.tools.len()).sum::<usize>(),
    }))
}

fn render(rows: &[Row]) -> String {
    let color = color_on_stdout();
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.name.clone(),
                r.transport.clone(),
                r.state.clone(),
                r.protocol_version.clone().unwrap_or_else(|| "-".into()),
                r.server.clone().unwrap_or_else(|| "-".into()),
                match r.tools_allowed {
                    Some(allowed) => format!("{allowed} of {}", r.tools),
                    None => r.tools.to_string(),
                },
                r.resources.to_string(),
                r.prompts.to_string(),
                r.connect_ms.map_or("-".into(), |ms| format!("{ms} ms")),
            ]
        })
        .collect();
    let mut out = styled_table(HEADER, &cells, &|_, col, cell| match (col, cell) {
        (2, "ready" | "offline") => paint(cell, "32", color),
        (2, _) => paint(cell, "31", color),
        _ => cell.to_string(),
    });
    // A config gathered from several places (Claude Code's scopes and plugins, a user's and a
    // project's file, Claude Desktop's extensions) says where each server comes from.
    let mut origins: Vec<(&str, Vec<&str>)> = Vec::new();
    for r in rows {
        if let Some(origin) = &r.origin {
            match origins.iter_mut().find(|(o, _)| o == origin) {
                Some((_, names)) => names.push(&r.name),
                None => origins.push((origin, vec![&r.name])),
            }
        }
    }
    if !origins.is_empty() {
        out.push('\n');
        for (origin, names) in origins {
            out.push_str(&format!("from {origin}: {}\n", names.join(", ")));
        }
    }
    // The config's own tool lists where they keep a tool from models, another host's permission
    // rules (Claude Code's, Amp's, ...) that hide a tool, make it ask or run it unasked, and the
    // config's own `approve` where it asks or runs a tool unasked.
    let mut first = true;
    for r in rows {
        for Ruled {
            verdict,
            by,
            conditional,
            rule,
            tools,
        } in &r.ruled
        {
            if std::mem::take(&mut first) {
                out.push('\n');
            }
            let what = match (verdict, conditional) {
                (Verdict::Deny, _) if *by == By::Approval => "calls refused",
                (Verdict::Deny, false) => "kept from models",
                (Verdict::Deny, true) => "calls refused when their arguments match",
                (Verdict::Allow, _) => "run unasked",
                (_, false) => "approval asked at each call",
                (_, true) => "approval asked when a call's arguments match",
            };
            // A rule over the whole server says so rather than list every tool.
            let named = if tools.len() == r.tools && r.tools > 3 {
                format!("all {} tools", r.tools)
            } else {
                tools.join(", ")
            };
            out.push_str(&format!("{}: {what}: {named} (by {rule})\n", r.name));
        }
    }
    // Tools that run only as tasks: a call to one waits for its task (MCP 2025-11-25).
    for r in rows.iter().filter(|r| !r.task_tools.is_empty()) {
        if std::mem::take(&mut first) {
            out.push('\n');
        }
        out.push_str(&format!(
            "{}: run as tasks (a call waits for the task's result): {}\n",
            r.name,
            r.task_tools.join(", ")
        ));
    }
    for r in rows {
        if let Some(e) = &r.error {
            out.push_str(&format!(
                "\n{}: {}\n",
                r.name,
                without_tail_summary(e, &r.stderr_tail)
            ));
            for line in &r.stderr_tail {
                out.push_str(&format!("  | {line}\n"));
            }
        }
    }
    out
}

/// Tools of a server that one of another host's permission rules denies or makes ask (or,
/// where no such rule decides, that the config's own `approve` setting makes ask or run
/// unasked).
struct Ruled {
    /// Deny, ask or allow (runs unasked).
    verdict: Verdict,
    /// What decides.
    by: By,
    /// The rule holds only for calls whose arguments match it.
    conditional: bool,
    /// The rule and its file.
    rule: String,
    /// The tools, in the server's order.
    tools: Vec<String>,
}

/// The tools of a server that another host's permission rules deny, make ask (some calls, for
/// a rule with conditions on the arguments) or run unasked, grouped by rule in the order of the
/// tools.
fn ruled_tools(config: &ServerConfig, listed: &ServerCatalog) -> Vec<Ruled> {
    let rules = config.filter.rules();
    let mut out: Vec<Ruled> = Vec::new();
    let add =
        |out: &mut Vec<Ruled>, verdict, by, conditional, rule: String, tool: &String| match out
            .iter_mut()
            .find(|r| r.by == by && r.verdict == verdict && r.rule == rule)
        {
            Some(r) => r.tools.push(tool.clone()),
            None => out.push(Ruled {
                verdict,
                by,
                conditional,
                rule,
                tools: vec![tool.clone()],
            }),
        };
    for tool in &listed.tools {
        let name = &tool.def.name;
        let annotations = tool.def.annotation_map();
        let denying = rules.denying_with(name, Some(&annotations));
        // Kept from models by the config's own lists, as the file names them.
        if denying.is_none() && !config.filter.permits_tool(&tool.def) {
            let list = config.filter.list_hiding(name).to_string();
            add(&mut out, Verdict::Deny, By::List, false, list, name);
            continue;
        }
        let found = match denying {
            Some(rule) => Some((Verdict::Deny, rule)),
            None => rules
                .decide(name, Some(&annotations), None)
                .and_then(|(v, rule)| match v {
                    // A conditional rule is shown with its own verdict, for the calls it matches.
                    Verdict::Ask | Verdict::Deny if rule.is_conditional() => {
                        Some((rule.verdict, rule))
                    }
                    Verdict::Ask | Verdict::Deny | Verdict::Allow => Some((v, rule)),
                    Verdict::Enable => None,
                }),
        };
        let Some((verdict, rule)) = found else {
            if let Some((verdict, setting)) = own_approval(config, &tool.def) {
                add(&mut out, verdict, By::Approval, false, setting, name);
            }
            continue;
        };
        // A tool of the config's own approve setting is not the rule's to ask about or run.
        if matches!(verdict, Verdict::Ask | Verdict::Allow)
            && config
                .tool_overrides
                .get(name)
                .is_some_and(|o| o.approve.is_some())
        {
            continue;
        }
        add(
            &mut out,
            verdict,
            By::Rule,
            rule.is_conditional(),
            rule.source(),
            name,
        );
    }
    out
}

/// What decides about the tools of a [`Ruled`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum By {
    /// Another host's permission rule.
    Rule,
    /// The config's `approve` setting.
    Approval,
    /// The config's tool lists (`tools.allow` / `tools.deny`, or the host's own names for them).
    List,
}

/// Whether the config's own `approve` setting makes a call of `tool` ask (`Ask`), refused where
/// the host asks about nothing (`Deny`), or run unasked where it would otherwise be asked about
/// (`Allow`, for `approve = "never"`), and the setting: `approve = "unsafe"`, or the tool's own.
fn own_approval(
    config: &ServerConfig,
    tool: &switchboard_core::catalog::Tool,
) -> Option<(Verdict, String)> {
    use switchboard_host::config::Approve;
    use switchboard_host::policy::{Decision, decide};
    let approve = config.approve_given(&tool.name, None);
    let setting = config.approve_setting(&tool.name);
    match decide(config, tool) {
        Decision::Ask { .. } => Some((Verdict::Ask, setting)),
        Decision::Refuse { .. } => config
            .asks_refused
            .as_ref()
            .map(|why| (Verdict::Deny, format!("{setting}, where {why}"))),
        Decision::Allow if approve == Approve::Never => Some((Verdict::Allow, setting)),
        _ => None,
    }
}

fn verdict_word(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Deny => "deny",
        Verdict::Ask => "ask",
        Verdict::Allow => "allow",
        Verdict::Enable => "enable",
    }
}

/// Why a server is not ready, for an error message: `{what}: {reason}` and then its stderr
/// tail, one `  | ` line each, with the reason's own summary of those lines left out (as
/// `servers` prints it), so `call` and `lint -- COMMAND` show each stderr line once.
pub fn not_ready_message(what: &str, status: &ServerStatus) -> String {
    let reason = status.state.describe();
    let mut msg = format!(
        "{what}: {}",
        without_tail_summary(&reason, &status.stderr_tail)
    );
    for line in &status.stderr_tail {
        msg.push_str(&format!("\n  | {line}"));
    }
    msg
}

/// The reason without the `; stderr: a | b | c` summary the session layer appends (its last
/// three non-empty stderr lines), since the full tail is printed under it: otherwise those
/// lines appear twice. A reason that does not end with exactly that summary is kept whole.
fn without_tail_summary<'a>(reason: &'a str, tail: &[String]) -> &'a str {
    let last: Vec<&str> = tail
        .iter()
        .rev()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty())
        .take(3)
        .collect();
    if last.is_empty() {
        return reason;
    }
    let shown: Vec<&str> = last.into_iter().rev().collect();
    let summary = format!("; stderr: {}", shown.join(" | "));
    reason.strip_suffix(summary.as_str()).unwrap_or(reason)
}

const HEADER: &[&str] = &[
    "NAME",
    "TRANSPORT",
    "STATE",
    "PROTOCOL",
    "SERVER",
    "TOOLS",
    "RESOURCES",
    "PROMPTS",
    "CONNECT",
];

/// Other hosts' config files on this machine, as `config.other_hosts` of the demo's JSON.
fn other_hosts_json() -> Value {
    let cwd = std::env::current_dir().unwrap_or_default();
    Value::Array(
        switchboard_host::Config::other_hosts(&cwd)
            .into_iter()
            .map(|f| json!({"host": f.host, "name": f.name, "path": f.path, "servers": f.servers}))
            .collect(),
    )
}

/// The lines that tell a user without a config which other hosts' files they could use.
fn other_hosts_note() -> String {
    let cwd = std::env::current_dir().unwrap_or_default();
    let found = switchboard_host::Config::other_hosts(&cwd);
    let Some(first) = found.first() else {
        return String::new();
    };
    let mut out =
        String::from("Config files of other hosts here, read as they are with --config:\n");
    let width = found.iter().map(|f| f.host.len()).max().unwrap_or(0);
    for f in &found {
        let plural = if f.servers == 1 { "" } else { "s" };
        out.push_str(&format!(
            "  {:width$}  {} ({} server{plural})\n",
            f.host,
            f.path.display(),
            f.servers
        ));
    }
    out.push_str(&format!(
        "For example: switchboard --config {} servers\n",
        first.name
    ));
    out
}

/// What a server's entry says about its sampling requests, for the lines under the table.
fn sampling_line(name: &str, p: &switchboard_host::config::SamplingPolicy) -> String {
    if !p.allowed {
        return format!("{name}: its sampling requests are refused (sampling = false)");
    }
    let model = p
        .model
        .as_deref()
        .map(|m| format!(" by {m}"))
        .unwrap_or_default();
    let limit = p
        .max_tokens
        .map(|n| format!(", in at most {n} tokens"))
        .unwrap_or_default();
    format!("{name}: its sampling requests are answered{model}{limit}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed(reason: &str, tail: &[&str]) -> Row {
        Row {
            name: "x".into(),
            transport: "stdio".into(),
            state: "failed".into(),
            error: Some(reason.into()),
            protocol_version: None,
            server: None,
            tools: 0,
            tools_allowed: None,
            resources: 0,
            prompts: 0,
            connect_ms: None,
            stderr_tail: tail.iter().map(|l| l.to_string()).collect(),
            origin: None,
            ruled: Vec::new(),
            task_tools: Vec::new(),
            own_roots: None,
            sampling: None,
            detail: None,
        }
    }

    #[test]
    fn stderr_lines_are_printed_once() {
        // Regression: the reason's "; stderr: ..." summary repeated lines the tail block shows.
        let row = failed(
            "initialize failed: the process exited; stderr: fatal: FOO_API_KEY missing",
            &["fatal: FOO_API_KEY missing"],
        );
        let text = render(&[row]);
        assert_eq!(text.matches("FOO_API_KEY missing").count(), 1, "{text}");
        assert!(
            text.contains(
                "\nx: initialize failed: the process exited\n  | fatal: FOO_API_KEY missing\n"
            ),
            "{text}"
        );
        // A reason that carries no such summary is printed whole.
        let row = failed("did not start within 30 s", &["a", "", "b"]);
        let text = render(&[row]);
        assert!(
            text.contains("x: did not start within 30 s\n  | a\n  | \n  | b\n"),
            "{text}"
        );
    }

    #[test]
    fn a_server_that_did_not_start_names_each_stderr_line_once() {
        // Regression: `call` on a server whose import failed printed its traceback's last
        // lines twice, in the reason and in the tail under it.
        let tail = [
            "Traceback (most recent call last):",
            "  File \"x.py\"",
            "ImportError: no mcp",
        ];
        let status = ServerStatus {
            name: "calc".into(),
            transport: "stdio",
            state: ServerState::Failed {
                reason: "initialize failed: the process exited; stderr: Traceback (most recent call last): | File \"x.py\" | ImportError: no mcp".into(),
            },
            protocol_version: None,
            server_name: None,
            server_version: None,
            tools: 0,
            resources: 0,
            resource_templates: 0,
            prompts: 0,
            connect_ms: None,
            stderr_tail: tail.iter().map(|l| l.to_string()).collect(),
            warnings: Vec::new(),
        };
        let msg = not_ready_message("server \"calc\" is not ready", &status);
        assert_eq!(
            msg,
            "server \"calc\" is not ready: initialize failed: the process exited\n  | Traceback (most recent call last):\n  |   File \"x.py\"\n  | ImportError: no mcp"
        );
    }
}
