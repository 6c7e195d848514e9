//! `switchboard call SERVER TOOL [JSON]` (or `SERVER/TOOL`, a name `inspect` shows a model, or
//! just `TOOL` when the config has one server, each optionally followed by the JSON arguments,
//! or with `--args JSON`): one tool call, its result printed in full. With `--dry-run`, no call:
//! what a model's call with those arguments would meet (the tool's schema, then the config's
//! tool lists, approval and other hosts' permission rules).

use std::process::ExitCode;

use anyhow::{Context as _, bail};
use serde_json::{Map, Value, json};
use switchboard_core::names::{self, NameMap};
use switchboard_core::{CallResult, ContentBlock, Dialect};
use switchboard_mcp::SessionError;

use switchboard_host::dispatch::{Invalid, Validators};
use switchboard_host::policy::{self, Decision};

use crate::output::print_json;
use crate::{Global, source};

/// Arguments of `switchboard call`.
#[derive(clap::Args, Debug)]
pub struct CallArgs {
    /// The configured server name (see `switchboard servers`); or, with no TOOL, the tool as
    /// SERVER/TOOL or as the name `inspect` shows a model (SERVER__TOOL, an alias's prefix, a
    /// shortened name), or only the tool's name when the config has one server.
    server: String,
    /// The tool's name on that server; or, after a one-word tool, its arguments as a JSON
    /// object (as --args).
    tool: Option<String>,
    /// The arguments as a JSON object, after SERVER TOOL (as --args).
    #[arg(value_name = "JSON")]
    inline: Option<String>,
    /// The arguments as a JSON object, e.g. '{"query": "login"}'.
    #[arg(long, value_name = "JSON")]
    args: Option<String>,
    /// Make no call: say what a model's call with these arguments would meet. Its arguments are
    /// checked against the tool's schema, then the config decides as it does for a model: the
    /// call goes ahead, is asked about (and why), is refused (for its arguments by another
    /// host's rule, or by a host that asks about nothing), or is denied (the tool is kept from
    /// models). Exit code 0 when it would go
    /// ahead unasked, 1 when not.
    #[arg(long)]
    dry_run: bool,
}

/// The tool a call names.
#[derive(Debug, PartialEq, Eq)]
enum Target {
    /// A server and its tool's own name: `SERVER TOOL`, `SERVER/TOOL`, `SERVER__TOOL` split at
    /// a configured server's name, or `TOOL` alone with one server. `word` is the one word as
    /// given, looked up as a public name if the server lists no tool by that name.
    Tool {
        server: String,
        tool: String,
        word: Option<String>,
    },
    /// A name a model sees (an alias's prefix, characters replaced, a shortened name), to look
    /// up among these servers' tools once they are up.
    Public { word: String, servers: Vec<String> },
}

/// A configured server's name, the `alias` its public names start with instead, and the names
/// its tools' settings choose for them.
struct Named<'a> {
    name: &'a str,
    alias: Option<&'a str>,
    chosen: Vec<&'a str>,
}

impl Target {
    /// Read the words of the command line; `servers` are the configured ones.
    fn resolve(
        server: String,
        tool: Option<String>,
        servers: &[Named<'_>],
    ) -> anyhow::Result<Target> {
        if let Some(tool) = tool {
            return Ok(Target::Tool {
                server,
                tool,
                word: None,
            });
        }
        let word = server;
        let names: Vec<&str> = servers.iter().map(|s| s.name).collect();
        let split = word.split_once('/').or_else(|| {
            names
                .iter()
                .copied()
                .filter(|name| !name.is_empty())
                .filter_map(|name| Some((name, word.strip_prefix(name)?.strip_prefix("__")?)))
                .max_by_key(|(name, _)| name.len())
                .map(|(name, tool)| (&word[..name.len()], tool))
        });
        if let Some((s, t)) = split.filter(|(s, t)| !s.is_empty() && !t.is_empty()) {
            // `ALIAS/TOOL` means the server with that alias, unless a server has that name.
            let server = match servers.iter().find(|n| n.alias == Some(s)) {
                Some(aliased) if !names.contains(&s) => aliased.name,
                _ => s,
            };
            return Ok(Target::Tool {
                server: server.to_string(),
                tool: t.to_string(),
                word: Some(word.clone()),
            });
        }
        // A name a tool's settings chose: looked up once its server is up, as the name map
        // decides it (a computed name, split above, comes first; two wanting one name, the
        // first in order has it).
        let choosers: Vec<&Named<'_>> = servers
            .iter()
            .filter(|s| s.chosen.contains(&word.as_str()))
            .collect();
        if !choosers.is_empty() {
            let servers = servers
                .iter()
                .filter(|s| s.chosen.contains(&word.as_str()) || public_prefix_fits(s, &word))
                .map(|s| s.name.to_string())
                .collect();
            return Ok(Target::Public { word, servers });
        }
        // With one server (a bundle, say), the word is its tool.
        if names.len() == 1 && names[0] != word {
            return Ok(Target::Tool {
                server: names[0].to_string(),
                tool: word.clone(),
                word: Some(word),
            });
        }
        let candidates: Vec<String> = servers
            .iter()
            .filter(|s| public_prefix_fits(s, &word))
            .map(|s| s.name.to_string())
            .collect();
        if !candidates.is_empty() {
            return Ok(Target::Public {
                word,
                servers: candidates,
            });
        }
        bail!(
            "which tool? give SERVER TOOL (e.g. `switchboard call tickets search`), \
             SERVER/TOOL, or SERVER__TOOL as `inspect` names it; {word:?} is none of \
             these (servers: {})",
            if names.is_empty() {
                "none".to_string()
            } else {
                names.join(", ")
            }
        )
    }

    /// The servers to start for the call.
    fn servers(&self) -> Vec<&str> {
        match self {
            Target::Tool { server, .. } => vec![server.as_str()],
            Target::Public { servers, .. } => servers.iter().map(String::as_str).collect(),
        }
    }
}

/// Whether `word` may be a public name of one of `server`'s tools in some dialect: it starts
/// with the server's prefix as that dialect writes it (`names::written_prefix`), or the
/// server's tools carry no prefix (`alias = ""`).
fn public_prefix_fits(server: &Named<'_>, word: &str) -> bool {
    let word = word.trim_start_matches('_');
    Dialect::ALL.into_iter().any(|dialect| {
        let Some(written) = names::written_prefix(dialect, server.name, server.alias) else {
            return true;
        };
        // A shortened name keeps at least its stem's first 55 characters.
        let head: String = written.chars().take(40).collect();
        let head = head.trim_start_matches('_');
        word.len() > head.len() && word.starts_with(head)
    })
}

/// The arguments: `--args`, or the JSON object after the tool's name (or where a tool's name
/// would be, after a one-word tool).
fn arguments(args: &mut CallArgs) -> anyhow::Result<Map<String, Value>> {
    let positional = match args.inline.take() {
        Some(json) => Some(json),
        None => args.tool.take_if(|t| t.trim_start().starts_with('{')),
    };
    let text = match (positional, args.args.take()) {
        (Some(_), Some(_)) => bail!("the arguments are given twice: as --args and after the tool"),
        (Some(text), None) => text,
        (None, Some(text)) => text,
        (None, None) => return Ok(Map::new()),
    };
    match serde_json::from_str::<Value>(&text)
        .with_context(|| format!("the arguments are not valid JSON: {text}"))?
    {
        Value::Object(m) => Ok(m),
        other => bail!("the arguments must be a JSON object, got {other}"),
    }
}

/// Run the command.
pub async fn run(global: &Global, mut args: CallArgs) -> anyhow::Result<ExitCode> {
    let arguments = arguments(&mut args)?;
    let config = source::load_config(global)?;
    let named: Vec<Named<'_>> = config
        .servers
        .iter()
        .map(|s| Named {
            name: s.name(),
            alias: s.alias.as_deref(),
            chosen: s
                .tool_overrides
                .values()
                .filter_map(|o| o.name.as_deref())
                .collect(),
        })
        .chain(config.disabled.iter().map(|d| Named {
            name: &d.name,
            alias: None,
            chosen: Vec::new(),
        }))
        .collect();
    let target = Target::resolve(args.server, args.tool, &named)?;
    let mut chosen = Vec::new();
    for name in target.servers() {
        match config.servers.iter().find(|s| s.name() == name) {
            Some(server) => chosen.push(server.clone()),
            None => {
                // A word that might be several servers' names only fails when none is up.
                if matches!(target, Target::Public { ref servers, .. } if servers.len() > 1) {
                    continue;
                }
                if let Some(d) = config.disabled.iter().find(|d| d.name == name) {
                    bail!("server {name:?} is disabled: {}", d.reason);
                }
                let names: Vec<&str> = config.server_names().collect();
                bail!(
                    "no server {name:?} in the config; servers: {}",
                    if names.is_empty() {
                        "none".into()
                    } else {
                        names.join(", ")
                    }
                );
            }
        }
    }
    // Only the named server (or the few a public name may belong to) is started.
    let mut some = config.clone();
    some.servers = chosen;
    let sessions = source::connect(&some).await;
    let outcome = match find(&sessions, &some, &target) {
        Err(e) => Err(e),
        Ok((server, tool)) if args.dry_run => {
            let check = dry_run(&sessions, &some, &server, &tool, arguments);
            sessions.shutdown().await;
            if global.json {
                print_json(&check.to_json());
            } else {
                print!("{}", check.render());
            }
            return Ok(ExitCode::from(u8::from(!check.goes_ahead())));
        }
        Ok((server, tool)) => call(&sessions, &some, &server, &tool, arguments).await,
    };
    sessions.shutdown().await;
    let result = match outcome {
        Ok(r) => r,
        Err(CallFailure::Usage(msg)) => bail!(msg),
        Err(CallFailure::Session(e)) => {
            let tool_failed = matches!(e, SessionError::Rpc { .. } | SessionError::Timeout { .. });
            if global.json {
                print_json(&json!({"error": e.to_string()}));
            }
            eprintln!("error: {e}");
            return Ok(ExitCode::from(if tool_failed { 1 } else { 2 }));
        }
    };
    if global.json {
        print_json(&serde_json::to_value(&result)?);
    } else {
        print!("{}", render(&result));
    }
    Ok(if result.is_error {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

enum CallFailure {
    Usage(String),
    Session(SessionError),
}

/// The (server, tool) a public name stands for among the started servers' tools, in any
/// dialect's naming; or the names it might have meant.
fn by_public_name(
    catalog: &switchboard_core::Catalog,
    config: &switchboard_host::Config,
    word: &str,
) -> Result<(String, String), Vec<String>> {
    let aliases: std::collections::BTreeMap<String, String> = config
        .servers
        .iter()
        .filter_map(|s| Some((s.name().to_string(), s.alias.clone()?)))
        .collect();
    let pairs: Vec<(&str, &str)> = catalog
        .servers
        .values()
        .flat_map(|s| {
            s.tools
                .iter()
                .map(|t| (s.server.as_str(), t.def.name.as_str()))
        })
        .collect();
    let chosen = switchboard_host::config::chosen_names(&config.servers);
    let mut known = Vec::new();
    for dialect in Dialect::ALL {
        let mut map = NameMap::build(dialect, pairs.iter().copied(), &aliases);
        map.with_chosen(dialect, &chosen);
        if let Some((s, t)) = map.resolve(word) {
            return Ok((s.to_string(), t.to_string()));
        }
        known.extend(map.names().map(|(_, _, public)| public.to_string()));
    }
    known.sort();
    known.dedup();
    Err(known)
}

/// The (server, tool) a call names among the started servers' tools, or why there is none.
fn find(
    sessions: &switchboard_mcp::Sessions,
    config: &switchboard_host::Config,
    target: &Target,
) -> Result<(String, String), CallFailure> {
    let statuses = sessions.statuses();
    let ready = statuses.iter().filter(|s| s.state.is_ready()).count();
    if let Some(s) = statuses.first().filter(|_| ready == 0) {
        let what = format!("server {:?} is not ready", s.name);
        return Err(CallFailure::Usage(crate::servers::not_ready_message(
            &what, s,
        )));
    }
    let catalog = sessions.catalog();
    let (server, tool) = match target {
        Target::Tool { server, tool, word } => {
            if catalog.tool(server, tool).is_some() {
                (server.clone(), tool.clone())
            } else if let Some(Ok(found)) =
                word.as_deref().map(|w| by_public_name(&catalog, config, w))
            {
                found
            } else {
                let names: Vec<&str> = catalog
                    .servers
                    .get(server)
                    .map(|s| s.tools.iter().map(|t| t.def.name.as_str()).collect())
                    .unwrap_or_default();
                let hint = closest(tool, names.iter().copied())
                    .map(|n| format!("; did you mean {n:?}?"))
                    .unwrap_or_default();
                return Err(CallFailure::Usage(format!(
                    "server {server:?} has no tool {tool:?}{hint} (its tools: {})",
                    names.join(", ")
                )));
            }
        }
        Target::Public { word, servers } => match by_public_name(&catalog, config, word) {
            Ok(found) => found,
            Err(known) => {
                let hint = closest(word, known.iter().map(String::as_str))
                    .map(|n| format!("; did you mean {n:?}?"))
                    .unwrap_or_default();
                let down: Vec<&str> = statuses
                    .iter()
                    .filter(|s| !s.state.is_ready())
                    .map(|s| s.name.as_str())
                    .collect();
                let down = if down.is_empty() {
                    String::new()
                } else {
                    format!(" ({} did not come up)", down.join(", "))
                };
                return Err(CallFailure::Usage(format!(
                    "no tool is named {word:?} on {}{down}{hint}",
                    servers.join(", ")
                )));
            }
        },
    };
    Ok((server, tool))
}

/// Call `tool` of `server`. The person at the terminal named the tool: it is called, but a tool
/// the config keeps from models is said to be one, as is a call another host's rule refuses for
/// its arguments.
async fn call(
    sessions: &switchboard_mcp::Sessions,
    config: &switchboard_host::Config,
    server: &str,
    tool: &str,
    arguments: Map<String, Value>,
) -> Result<CallResult, CallFailure> {
    let config = config.servers.iter().find(|s| s.name() == server);
    if let Some(config) = config
        && config.filter.permits(tool)
        && let Some((switchboard_core::Verdict::Deny, rule)) =
            config.filter.rules().call(tool, Some(&arguments))
    {
        tracing::warn!(
            "{} refuses this call of {tool:?} of {server:?} when a model makes it; called as you asked",
            rule.source()
        );
    }
    if let Some(config) = config
        && !config.filter.permits(tool)
    {
        match config.filter.rules().denying(tool) {
            Some(rule) => tracing::warn!(
                "{} keeps {tool:?} of {server:?} from models; called as you named it",
                rule.source()
            ),
            None => tracing::warn!(
                "the config's tools lists keep {tool:?} of {server:?} from models; called as you named it"
            ),
        }
    }
    // A spinner on a terminal while the call runs, with the server's progress as it reports
    // it (a task's status messages too); each report starts the call's timeout again. The
    // server's forms and sampling requests get the session's default answers, as without a
    // relay: the reply is dropped.
    let pb = crate::output::spinner(format!("{server} {tool}"));
    let result = sessions
        .call_tool_answering(server, tool, arguments, |upcall| {
            if let switchboard_mcp::Upcall::Progress {
                progress,
                total,
                message,
            } = upcall
            {
                let said =
                    crate::output::progress(server, tool, progress, total, message.as_deref(), 80);
                pb.set_message(said);
            }
            std::future::ready(())
        })
        .await;
    pb.finish_and_clear();
    let result = result.map_err(CallFailure::Session)?;
    let schema = sessions
        .catalog()
        .tool(server, tool)
        .and_then(|e| e.def.output_schema.clone());
    if let Some(schema) = schema
        && let Some(problem) =
            switchboard_host::dispatch::Validators::default().check_output(&schema, &result)
    {
        tracing::warn!("server {server:?}, tool {tool:?}: {problem}");
    }
    Ok(result)
}

/// What a model's call would meet, found by `--dry-run`.
struct DryRun {
    server: String,
    tool: String,
    /// What is wrong with the arguments, by the tool's schema (empty: nothing).
    problems: Vec<String>,
    /// The config's decision, as for a model's call.
    decision: Decision,
}

/// Check `arguments` for `tool` of `server` as the loop and `serve` check a model's call: the
/// tool's own schema, then the config's policy with the arguments.
fn dry_run(
    sessions: &switchboard_mcp::Sessions,
    config: &switchboard_host::Config,
    server: &str,
    tool: &str,
    arguments: Map<String, Value>,
) -> DryRun {
    let catalog = sessions.catalog();
    let def = catalog
        .tool(server, tool)
        .map(|e| e.def.clone())
        .unwrap_or_else(|| switchboard_core::Tool::new(tool, "", json!({"type": "object"})));
    let problems =
        match Validators::default().check(&def.input_schema, Value::Object(arguments.clone())) {
            Ok(_) => Vec::new(),
            Err(Invalid(problems)) => problems,
        };
    let decision = match config.servers.iter().find(|s| s.name() == server) {
        Some(c) => policy::decide_call(c, &def, Some(&arguments)),
        None => Decision::Deny {
            reason: format!("server {server:?} is not in the config"),
        },
    };
    DryRun {
        server: server.to_string(),
        tool: tool.to_string(),
        problems,
        decision,
    }
}

impl DryRun {
    /// Whether the call would be made without asking anyone.
    fn goes_ahead(&self) -> bool {
        self.problems.is_empty() && self.decision == Decision::Allow
    }

    /// The decision's word and its reason.
    fn verdict(&self) -> (&'static str, Option<&str>) {
        match &self.decision {
            Decision::Allow => ("allow", None),
            Decision::Ask { reason } => ("ask", Some(reason)),
            Decision::Refuse { reason } => ("refuse", Some(reason)),
            Decision::Deny { reason } => ("deny", Some(reason)),
        }
    }

    fn to_json(&self) -> Value {
        let (decision, reason) = self.verdict();
        json!({
            "server": self.server,
            "tool": self.tool,
            "arguments": {"valid": self.problems.is_empty(), "problems": self.problems},
            "decision": decision,
            "reason": reason,
            "called": false,
        })
    }

    fn render(&self) -> String {
        let mut out = format!("{}/{}\n", self.server, self.tool);
        if self.problems.is_empty() {
            out.push_str("  arguments: valid for the tool's schema\n");
        } else {
            out.push_str("  arguments: invalid, a model's call would be sent back to it:\n");
            for p in &self.problems {
                out.push_str(&format!("    {}\n", printable(p)));
            }
        }
        let (decision, reason) = self.verdict();
        let what = match decision {
            "allow" => "goes ahead unasked",
            "ask" => "is asked about first",
            "refuse" => "is refused",
            _ => "is denied: the tool is kept from models",
        };
        let given = if self.problems.is_empty() {
            ""
        } else {
            " with arguments that fit"
        };
        out.push_str(&format!("  a model's call{given} {what}\n"));
        if let Some(reason) = reason {
            out.push_str(&format!("    {}\n", printable(reason)));
        }
        out.push_str("  not called (--dry-run)\n");
        out
    }
}

/// The one of `known` nearest to `word`: two edits away at most, or else the only one it is a
/// part of (`get` for `get_page`).
fn closest<'a>(word: &str, known: impl Iterator<Item = &'a str> + Clone) -> Option<&'a str> {
    switchboard_host::config::closest(word, known.clone()).or_else(|| {
        let mut within = known.filter(|k| k.contains(word) || word.contains(*k));
        let first = within.next()?;
        within.next().is_none().then_some(first)
    })
}

/// Text in full; binary content summarised; structured content as JSON.
fn render(result: &CallResult) -> String {
    let mut out = String::new();
    for block in &result.content {
        match block {
            ContentBlock::Text { text } => {
                let text = &printable(text);
                out.push_str(text);
                if !text.ends_with('\n') {
                    out.push('\n');
                }
            }
            ContentBlock::Image { data, mime_type } => {
                out.push_str(&format!("[image {mime_type}, {}]\n", size(data)));
            }
            ContentBlock::Audio { data, mime_type } => {
                out.push_str(&format!("[audio {mime_type}, {}]\n", size(data)));
            }
            ContentBlock::ResourceLink {
                uri,
                name,
                mime_type,
                ..
            } => {
                out.push_str(&format!(
                    "[resource link {uri}{}{}]\n",
                    if name.is_empty() {
                        String::new()
                    } else {
                        format!(" ({name})")
                    },
                    mime_type
                        .as_ref()
                        .map(|m| format!(", {m}"))
                        .unwrap_or_default()
                ));
            }
            ContentBlock::Resource { resource } => {
                let uri = resource.get("uri").and_then(Value::as_str).unwrap_or("?");
                match (
                    resource.get("text").and_then(Value::as_str),
                    resource.get("blob").and_then(Value::as_str),
                ) {
                    (Some(text), _) => {
                        out.push_str(&format!("[resource {uri}]\n{}\n", printable(text)))
                    }
                    (None, Some(blob)) => {
                        out.push_str(&format!("[resource {uri}, {}]\n", size(blob)))
                    }
                    _ => out.push_str(&format!("[resource {uri}]\n")),
                }
            }
        }
    }
    if let Some(s) = &result.structured_content {
        out.push_str("structured content:\n");
        out.push_str(&serde_json::to_string_pretty(s).unwrap_or_default());
        out.push('\n');
    }
    if result.is_error {
        out.push_str("(the tool reported an error)\n");
    }
    out
}

/// A server's text made safe for a terminal: control characters other than newline, tab and
/// the CR of a CRLF are shown escaped (`\u001b`), so a tool result cannot move the cursor,
/// recolour or clear the screen, or overwrite a line with a bare CR. `--json` keeps the text
/// exactly as sent.
fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    let bad = |c: char, next: Option<char>| {
        c.is_control() && c != '\n' && c != '\t' && !(c == '\r' && next == Some('\n'))
    };
    let mut chars = text.chars().peekable();
    let mut clean = true;
    while let Some(c) = chars.next() {
        if bad(c, chars.peek().copied()) {
            clean = false;
            break;
        }
    }
    if clean {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if bad(c, chars.peek().copied()) {
            out.push_str(&format!("\\u{:04x}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Decoded size of base64 data, human-readable.
fn size(b64: &str) -> String {
    let bytes = b64.trim_end_matches('=').len() * 3 / 4;
    if bytes >= 1024 * 1024 {
        format!("{:.1} MB", bytes as f64 / (1024.0 * 1024.0))
    } else if bytes >= 1024 {
        format!("{:.1} KB", bytes as f64 / 1024.0)
    } else {
        format!("{bytes} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_from_a_server_are_shown_escaped() {
        // Regression: a tool's text with terminal escapes (colour, clear screen, a bare CR
        // that overwrites the line) reached the terminal as is.
        let result = CallResult {
            content: vec![ContentBlock::Text {
                text: "a\u{1b}[2Jred\0 ok\r\nz\rq\tt".into(),
            }],
            ..CallResult::default()
        };
        assert_eq!(
            render(&result),
            "a\\u001b[2Jred\\u0000 ok\r\nz\\u000dq\tt\n"
        );
        assert!(matches!(
            printable("plain\ntext"),
            std::borrow::Cow::Borrowed(_)
        ));
    }

    #[test]
    fn a_call_names_its_tool_in_every_form_and_alone_with_one_server() {
        let resolve_with = |words: &[&str], servers: &[(&str, Option<&str>)]| {
            let named: Vec<Named<'_>> = servers
                .iter()
                .map(|&(name, alias)| Named {
                    name,
                    alias,
                    chosen: Vec::new(),
                })
                .collect();
            Target::resolve(
                words[0].to_string(),
                words.get(1).map(|t| t.to_string()),
                &named,
            )
            .map_err(|e| e.to_string())
        };
        let resolve = |words: &[&str], servers: &[&str]| {
            let servers: Vec<(&str, Option<&str>)> = servers.iter().map(|&s| (s, None)).collect();
            resolve_with(words, &servers)
        };
        let tool = |s: &str, t: &str, word: Option<&str>| {
            Ok(Target::Tool {
                server: s.to_string(),
                tool: t.to_string(),
                word: word.map(str::to_string),
            })
        };
        let two = ["tickets", "docs"];
        assert_eq!(
            resolve(&["tickets", "search"], &two),
            tool("tickets", "search", None)
        );
        assert_eq!(
            resolve(&["tickets/search"], &two),
            tool("tickets", "search", Some("tickets/search"))
        );
        assert_eq!(
            resolve(&["tickets__search"], &two),
            tool("tickets", "search", Some("tickets__search"))
        );
        assert!(
            resolve(&["search"], &two)
                .unwrap_err()
                .contains("which tool?")
        );
        // One server: the word alone is its tool, unless it is the server's own name.
        assert_eq!(
            resolve(&["search"], &["files"]),
            tool("files", "search", Some("search"))
        );
        assert!(resolve(&["files"], &["files"]).is_err());
        // A name a model sees is looked up among the servers it may belong to: the one whose
        // alias it starts with, one whose name a provider could not take as is, and any whose
        // tools carry no prefix.
        let public = |word: &str, servers: &[&str]| {
            Ok(Target::Public {
                word: word.to_string(),
                servers: servers.iter().map(|s| s.to_string()).collect(),
            })
        };
        let aliased = [
            ("tickets", Some("t")),
            ("docs.site", None),
            ("bare", Some("")),
        ];
        assert_eq!(
            resolve_with(&["t__search"], &aliased),
            public("t__search", &["tickets", "bare"])
        );
        // Gemini keeps a dot that the other providers replace.
        assert_eq!(
            resolve_with(
                &["my.docs__get_page"],
                &[("docs", Some("my.docs")), ("tickets", None)]
            ),
            public("my.docs__get_page", &["docs"])
        );
        assert_eq!(
            resolve_with(&["t/search"], &aliased),
            tool("tickets", "search", Some("t/search"))
        );
        assert_eq!(
            resolve_with(&["docs_site__get_page_1a2b3c4d"], &aliased),
            public("docs_site__get_page_1a2b3c4d", &["docs.site", "bare"])
        );
        assert!(
            resolve_with(&["x__y"], &[("tickets", None), ("docs", None)])
                .unwrap_err()
                .contains("which tool?")
        );
    }

    #[test]
    fn arguments_come_from_args_or_after_a_one_word_tool() {
        let args = |tool: Option<&str>, flag: Option<&str>| {
            let mut a = CallArgs {
                server: "docs__get_page".into(),
                tool: tool.map(str::to_string),
                inline: None,
                args: flag.map(str::to_string),
                dry_run: false,
            };
            arguments(&mut a)
                .map(|m| (Value::Object(m), a.tool))
                .map_err(|e| e.to_string())
        };
        let slug = json!({"slug": "x"});
        assert_eq!(args(None, None), Ok((json!({}), None)));
        assert_eq!(
            args(None, Some(r#"{"slug":"x"}"#)),
            Ok((slug.clone(), None))
        );
        assert_eq!(
            args(Some(r#" {"slug":"x"}"#), None),
            Ok((slug.clone(), None))
        );
        // A tool's name stays the tool's name.
        assert_eq!(
            args(Some("get_page"), Some("{}")),
            Ok((json!({}), Some("get_page".to_string())))
        );
        assert!(
            args(Some("{}"), Some("{}"))
                .unwrap_err()
                .contains("given twice")
        );
        // After SERVER TOOL.
        let mut three = CallArgs {
            server: "docs".into(),
            tool: Some("get_page".into()),
            inline: Some(r#"{"slug":"x"}"#.into()),
            args: None,
            dry_run: false,
        };
        assert_eq!(Value::Object(arguments(&mut three).unwrap()), slug);
        assert_eq!(three.tool.as_deref(), Some("get_page"));
        assert!(
            args(Some("{"), None)
                .unwrap_err()
                .contains("not valid JSON")
        );
        assert!(
            args(None, Some("[1]"))
                .unwrap_err()
                .contains("must be a JSON object")
        );
    }

    #[test]
    fn a_near_miss_is_named() {
        let known = ["get_page", "search", "list_pages"];
        assert_eq!(closest("get_pag", known.iter().copied()), Some("get_page"));
        assert_eq!(closest("list", known.iter().copied()), Some("list_pages"));
        assert_eq!(closest("page", known.iter().copied()), None);
        assert_eq!(closest("delete_everything", known.iter().copied()), None);
    }
}
