//! `switchboard call SERVER TOOL [--args JSON]` (or `SERVER/TOOL`, `SERVER__TOOL`, or just `TOOL`
//! when the config has one server): one tool call, its result printed in full.

use std::process::ExitCode;

use anyhow::{Context as _, bail};
use serde_json::{Map, Value, json};
use switchboard_core::{CallResult, ContentBlock};
use switchboard_mcp::SessionError;

use crate::output::print_json;
use crate::{Global, source};

/// Arguments of `switchboard call`.
#[derive(clap::Args, Debug)]
pub struct CallArgs {
    /// The configured server name (see `switchboard servers`); or, with no TOOL, the tool as
    /// SERVER/TOOL or as the SERVER__TOOL name `inspect` shows (or only the tool's name, when
    /// the config has one server).
    server: String,
    /// The tool's name on that server.
    tool: Option<String>,
    /// The arguments as a JSON object, e.g. '{"query": "login"}'.
    #[arg(long, value_name = "JSON", default_value = "{}")]
    args: String,
}

/// The server and tool a call names.
struct Target {
    server: String,
    tool: String,
}

impl Target {
    /// `SERVER TOOL`, or one word: `SERVER/TOOL`, or `SERVER__TOOL` where SERVER is a configured
    /// server (the name `inspect` shows a model when the server needs no other rewriting).
    fn resolve<'a>(
        args: CallArgs,
        servers: impl Iterator<Item = &'a str>,
    ) -> anyhow::Result<Target> {
        let CallArgs { server, tool, .. } = args;
        if let Some(tool) = tool {
            return Ok(Target { server, tool });
        }
        let servers: Vec<&str> = servers.collect();
        let split = server.split_once('/').or_else(|| {
            servers
                .iter()
                .copied()
                .filter(|name| !name.is_empty())
                .filter_map(|name| Some((name, server.strip_prefix(name)?.strip_prefix("__")?)))
                .max_by_key(|(name, _)| name.len())
                .map(|(name, tool)| (&server[..name.len()], tool))
        });
        match split {
            Some((s, t)) if !s.is_empty() && !t.is_empty() => Ok(Target {
                server: s.to_string(),
                tool: t.to_string(),
            }),
            // With one server (a bundle, say), the word is its tool.
            None if servers.len() == 1 && servers[0] != server => Ok(Target {
                server: servers[0].to_string(),
                tool: server,
            }),
            _ => bail!(
                "which tool? give SERVER TOOL (e.g. `switchboard call tickets search`), \
                 SERVER/TOOL, or SERVER__TOOL as `inspect` names it; {server:?} is none of \
                 these (servers: {})",
                if servers.is_empty() {
                    "none".to_string()
                } else {
                    servers.join(", ")
                }
            ),
        }
    }
}

/// Run the command.
pub async fn run(global: &Global, args: CallArgs) -> anyhow::Result<ExitCode> {
    if !global.catalog.is_empty() {
        bail!("call needs a live server; --catalog files only describe tools");
    }
    let arguments: Map<String, Value> = match serde_json::from_str::<Value>(&args.args)
        .with_context(|| format!("--args is not valid JSON: {}", args.args))?
    {
        Value::Object(m) => m,
        other => bail!("--args must be a JSON object, got {other}"),
    };
    let config = source::load_config(global)?;
    let args = Target::resolve(args, config.server_names())?;
    let Some(server) = config.servers.iter().find(|s| s.name() == args.server) else {
        if let Some(d) = config.disabled.iter().find(|d| d.name == args.server) {
            bail!("server {:?} is disabled: {}", args.server, d.reason);
        }
        let names: Vec<&str> = config.server_names().collect();
        bail!(
            "no server {:?} in the config; servers: {}",
            args.server,
            if names.is_empty() {
                "none".into()
            } else {
                names.join(", ")
            }
        );
    };
    // Only the named server is started.
    let mut one = config.clone();
    one.servers = vec![server.clone()];
    let sessions = source::connect(&one).await;
    let outcome = call(&sessions, &args, arguments).await;
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

async fn call(
    sessions: &switchboard_mcp::Sessions,
    args: &Target,
    arguments: Map<String, Value>,
) -> Result<CallResult, CallFailure> {
    let status = sessions.statuses().into_iter().next();
    if let Some(s) = status.filter(|s| !s.state.is_ready()) {
        let what = format!("server {:?} is not ready", s.name);
        return Err(CallFailure::Usage(crate::servers::not_ready_message(
            &what, &s,
        )));
    }
    let catalog = sessions.catalog();
    if catalog.tool(&args.server, &args.tool).is_none() {
        let names: Vec<String> = catalog
            .servers
            .get(&args.server)
            .map(|s| s.tools.iter().map(|t| t.def.name.clone()).collect())
            .unwrap_or_default();
        return Err(CallFailure::Usage(format!(
            "server {:?} has no tool {:?}; its tools: {}",
            args.server,
            args.tool,
            names.join(", ")
        )));
    }
    sessions
        .call_tool(&args.server, &args.tool, arguments)
        .await
        .map_err(CallFailure::Session)
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
        let resolve = |words: &[&str], servers: &[&str]| {
            let args = CallArgs {
                server: words[0].to_string(),
                tool: words.get(1).map(|t| t.to_string()),
                args: "{}".into(),
            };
            Target::resolve(args, servers.iter().copied())
                .map(|t| (t.server, t.tool))
                .map_err(|e| e.to_string())
        };
        let pair = |s: &str, t: &str| Ok((s.to_string(), t.to_string()));
        let two = ["tickets", "docs"];
        assert_eq!(
            resolve(&["tickets", "search"], &two),
            pair("tickets", "search")
        );
        assert_eq!(
            resolve(&["tickets/search"], &two),
            pair("tickets", "search")
        );
        assert_eq!(
            resolve(&["tickets__search"], &two),
            pair("tickets", "search")
        );
        assert!(
            resolve(&["search"], &two)
                .unwrap_err()
                .contains("which tool?")
        );
        // One server: the word alone is its tool, unless it is the server's own name.
        assert_eq!(resolve(&["search"], &["files"]), pair("files", "search"));
        assert!(resolve(&["files"], &["files"]).is_err());
    }
}
