//! `switchboard chat`: an interactive conversation with streamed answers. Calls that need
//! approval ask at the terminal, showing the tool, its server and its arguments; a server's
//! form during a call is asked field by field (`form.rs`), and its sampling request is shown
//! and answered by the session's model only with a yes. Lines starting with `/` are its slash
//! commands (`slash.rs`). A message goes on past its line when the line ends with `\`, or,
//! opened by a line starting with `"""`, up to the line ending with `"""` (for pasted text).

use std::io::Write as _;
use std::process::ExitCode;
use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::Value;
use switchboard_core::clip;
use switchboard_host::agent::{Agent, AgentEvent, End};
use switchboard_host::dispatch::{Approval, ApprovalRequest, Approver, ElicitationRequest};
use switchboard_host::sampling::SamplingRequest;
use switchboard_providers::{Part, ToolChoice};
use tokio::io::{AsyncBufReadExt as _, BufReader, Lines, Stdin};
use tokio::sync::Mutex;

use crate::Global;
use crate::run::{ModelArgs, compact, start_agent};
use crate::slash::Command;

/// Arguments of `switchboard chat`.
#[derive(clap::Args, Debug)]
pub struct ChatArgs {
    #[command(flatten)]
    model: ModelArgs,
    /// Wait for whole replies instead of streaming them.
    #[arg(long)]
    no_stream: bool,
    /// The prompt opens once every server has started, or after this many seconds. A server
    /// still starting then joins later: its tools reach the model from the first request after
    /// it is ready (`/servers` shows when). 0 never waits.
    #[arg(long, value_name = "SECS", default_value_t = switchboard_gateway::STARTUP_WAIT.as_secs_f64(),
          value_parser = crate::serve::seconds)]
    startup_wait: f64,
}

type Input = Arc<Mutex<Lines<BufReader<Stdin>>>>;

/// Opens and closes a message of several lines.
const BLOCK: &str = "\"\"\"";

/// A message of several lines from its `first`: a block from `"""` to the line ending with
/// `"""`, or lines joined while each ends with `\` (the backslash taken off, the line break
/// kept). `None` when the input ended first.
async fn more_lines(first: &str, input: &Input) -> Option<String> {
    let mut lines = input.lock().await;
    if let Some(rest) = first.strip_prefix(BLOCK) {
        // `"""text"""` on one line is a block of one line.
        if let Some(one) = rest.strip_suffix(BLOCK) {
            return Some(one.to_string());
        }
        let mut text = rest.to_string();
        loop {
            eprint!(". ");
            let _ = std::io::stderr().flush();
            let line = lines.next_line().await.ok()??;
            if !text.is_empty() {
                text.push('\n');
            }
            match line.trim_end().strip_suffix(BLOCK) {
                Some(last) => {
                    text.push_str(last);
                    return Some(text);
                }
                None => text.push_str(&line),
            }
        }
    }
    let mut text = first.to_string();
    while let Some(kept) = text.strip_suffix('\\') {
        text = format!("{kept}\n");
        eprint!(". ");
        let _ = std::io::stderr().flush();
        let line = lines.next_line().await.ok()??;
        text.push_str(line.trim_end());
    }
    Some(text)
}

/// Asks at the terminal; one question at a time (parallel tool uses wait their turn).
struct TerminalApprover {
    input: Input,
}

impl Approver for TerminalApprover {
    fn approve<'a>(&'a self, r: &'a ApprovalRequest) -> BoxFuture<'a, Approval> {
        Box::pin(async move {
            let mut lines = self.input.lock().await;
            eprintln!(
                "\n{} on server {} wants to run with {}\n  ({})",
                r.tool,
                r.server,
                compact(&r.arguments, 400),
                r.reason
            );
            eprint!("Allow? [y/N] ");
            let _ = std::io::stderr().flush();
            match lines.next_line().await {
                Ok(Some(l)) if matches!(l.trim(), "y" | "Y" | "yes") => Approval::Approved,
                _ => Approval::Declined {
                    why: "the user answered no at the prompt".into(),
                },
            }
        })
    }

    fn elicit<'a>(&'a self, request: &'a ElicitationRequest) -> BoxFuture<'a, Option<Value>> {
        Box::pin(async move {
            let mut lines = self.input.lock().await;
            Some(crate::form::ask(&mut lines, request).await)
        })
    }

    fn samples(&self) -> bool {
        true
    }

    fn progress(
        &self,
        server: &str,
        tool: &str,
        progress: f64,
        total: Option<f64>,
        message: Option<&str>,
    ) {
        let said = crate::output::progress(server, tool, progress, total, message, 200);
        eprintln!("  [{said}]");
    }

    fn allow_sampling<'a>(&'a self, r: &'a SamplingRequest) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            let mut lines = self.input.lock().await;
            eprintln!(
                "\nServer {} asks the model, while {} runs, to answer {} message(s) in up to {} tokens:",
                r.server,
                r.tool,
                r.messages.len(),
                r.max_tokens
            );
            if let Some(model) = &r.model {
                eprintln!("  answered by {model}, as the config says for {}", r.server);
            }
            if let Some(system) = &r.system {
                eprintln!("  system prompt: {}", clip(system, 300));
            }
            if !r.tools.is_empty() {
                let names: Vec<&str> = r.tools.iter().map(|t| t.name.as_str()).collect();
                let must = match r.tool_choice {
                    ToolChoice::Any => " (it must ask for one)",
                    ToolChoice::None => " (it may not ask for any this time)",
                    _ => "",
                };
                eprintln!(
                    "  tools the model may ask {} to run{must}: {}",
                    r.server,
                    clip(&names.join(", "), 300)
                );
            }
            eprintln!("  last message: {}", clip(&r.last_text(), 600));
            eprint!("Let the model answer? [y/N] ");
            let _ = std::io::stderr().flush();
            match lines.next_line().await {
                Ok(Some(l)) if matches!(l.trim(), "y" | "Y" | "yes") => Ok(()),
                _ => Err("the user answered no at the prompt".into()),
            }
        })
    }

    fn review_sampling<'a>(
        &'a self,
        r: &'a SamplingRequest,
        text: &'a str,
    ) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            let mut lines = self.input.lock().await;
            eprintln!("The model answered: {}", clip(text, 1000));
            eprint!("Send this to {}? [Y/n] ", r.server);
            let _ = std::io::stderr().flush();
            match lines.next_line().await {
                Ok(Some(l)) if matches!(l.trim(), "" | "y" | "Y" | "yes") => Ok(()),
                _ => Err("the user kept it back at the prompt".into()),
            }
        })
    }
}

/// Run the command.
pub async fn run(global: &Global, mut args: ChatArgs) -> anyhow::Result<ExitCode> {
    if global.json {
        anyhow::bail!(
            "chat is interactive and prints no JSON; use `switchboard --json run -p TEXT` for machine-readable output"
        );
    }
    let input: Input = Arc::new(Mutex::new(BufReader::new(tokio::io::stdin()).lines()));
    let approver = Arc::new(TerminalApprover {
        input: input.clone(),
    });
    // Someone is waiting to type: a server slower than the startup wait joins later.
    let wait = Some(std::time::Duration::from_secs_f64(args.startup_wait));
    let mut agent = start_agent(global, &args.model, approver, !args.no_stream, wait).await?;
    let tools = agent.translation().names.len();
    eprintln!(
        "switchboard chat: {} with {tools} tools. /tools /servers /reload /reconnect /cost /prompt NAME /attach URI /roots /model /compact /undo /retry /save /clear /quit",
        agent.client().model
    );
    if let Some(path) = &args.model.conversation {
        match agent.messages.len() {
            0 => eprintln!("(the conversation is saved to {})", path.display()),
            n => eprintln!(
                "(taking up the conversation in {}: {n} messages; the last answer: {})",
                path.display(),
                clip(&last_answer(&agent), 300)
            ),
        }
    }
    let mut attached: Vec<Part> = Vec::new();
    let mut failed = false;
    loop {
        eprint!("> ");
        let _ = std::io::stderr().flush();
        let line = match input.lock().await.next_line().await {
            Ok(Some(l)) => l,
            _ => break,
        };
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let message = if line.starts_with(BLOCK) || line.ends_with('\\') {
            match more_lines(line, &input).await {
                Some(text) if !text.trim().is_empty() => text,
                Some(_) => continue,
                None => break,
            }
        } else if let Some(cmd) = line.strip_prefix('/') {
            match crate::slash::command(global, &mut agent, cmd, &mut attached).await {
                Command::Quit => break,
                Command::Done => continue,
                Command::Cleared => {
                    save(&agent, &args.model);
                    continue;
                }
                Command::SaveTo(path) => {
                    match agent.history().write(&path) {
                        Ok(()) => {
                            eprintln!(
                                "(saved to {}, and after each message from now on; `chat --conversation {}` takes it up)",
                                path.display(),
                                path.display()
                            );
                            args.model.conversation = Some(path);
                        }
                        Err(e) => eprintln!("(not saved: {e})"),
                    }
                    continue;
                }
                Command::Send(text) => text,
            }
        } else {
            line.to_string()
        };
        let mut parts = std::mem::take(&mut attached);
        parts.push(Part::Text(message));
        // The model's reasoning, dimmed on stderr as it comes; the answer after it on stdout.
        let mut thinking = false;
        let dim = crate::output::color_on_stderr();
        let mut show = |e: AgentEvent| match e {
            AgentEvent::ReasoningDelta(t) | AgentEvent::Reasoning(t) => {
                if !std::mem::replace(&mut thinking, true) {
                    eprint!("\n  {} ", crate::output::paint("thinking:", "2", dim));
                }
                eprint!("{}", crate::output::paint(&t, "2", dim));
            }
            AgentEvent::TextDelta(t) | AgentEvent::Text(t) => {
                if std::mem::replace(&mut thinking, false) {
                    eprintln!();
                }
                print!("{t}");
                let _ = std::io::stdout().flush();
            }
            AgentEvent::ToolUseStarted { name } => {
                thinking = false;
                eprintln!("\n  [{name}]")
            }
            AgentEvent::ToolFinished(o) => {
                eprintln!(
                    "  [{} → {}, {} ms]",
                    o.name,
                    o.status.as_str(),
                    o.elapsed_ms
                )
            }
            AgentEvent::Compacted { messages, clipped } => {
                thinking = false;
                eprintln!("\n  [{}]", crate::run::compacted_line(messages, clipped));
            }
            AgentEvent::ReasoningRefused { message } => {
                thinking = false;
                eprintln!("\n  [{}]", crate::run::reasoning_refused_line(&message));
            }
            AgentEvent::ToolsChanged { added, removed } => eprintln!(
                "  [tools changed: +{} -{}]",
                added.join(","),
                removed.join(",")
            ),
        };
        // Ctrl-C stops the current answer (and cancels calls in flight), not the chat.
        let sent = tokio::select! {
            r = agent.send(parts, &mut show) => Some(r),
            _ = tokio::signal::ctrl_c() => None,
        };
        let Some(sent) = sent else {
            agent.interrupt();
            eprintln!("\n(interrupted)");
            save(&agent, &args.model);
            continue;
        };
        save(&agent, &args.model);
        match sent {
            Ok(a) => {
                println!();
                match a.end {
                    End::MaxTurns => eprintln!("(stopped after --max-turns model requests)"),
                    End::MaxCost => eprintln!("({})", crate::run::cost_limit_hit(&agent)),
                    End::MaxTokens => {
                        eprintln!("({})", crate::run::max_tokens_hit(agent.max_tokens_sent()))
                    }
                    End::Answered | End::Refusal => {}
                }
            }
            Err(e) => {
                failed = true;
                eprintln!("\nerror: {e}");
            }
        }
    }
    agent.sessions().shutdown().await;
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Save the conversation to `--conversation`'s file; a failure is said and the chat goes on.
fn save(agent: &Agent, model: &crate::run::ModelArgs) {
    if let Err(e) = crate::run::save_conversation(agent, model) {
        eprintln!("error: {e:#}");
    }
}

/// The text of the model's last message, or `(none)`.
fn last_answer(agent: &Agent) -> String {
    agent
        .messages
        .iter()
        .rev()
        .filter(|m| m.role == switchboard_providers::Role::Assistant)
        .find_map(|m| {
            let text: Vec<&str> = m
                .parts
                .iter()
                .filter_map(|p| match p {
                    Part::Text(t) if !t.trim().is_empty() => Some(t.trim()),
                    _ => None,
                })
                .collect();
            (!text.is_empty()).then(|| text.join(" "))
        })
        .unwrap_or_else(|| "(none)".into())
}
