//! `switchboard run -p TEXT`: one task, non-interactive: the model works with the configured
//! servers' tools until it answers. Calls that need approval are declined unless `--yes`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context as _;
use serde_json::{Value, json};
use switchboard_core::Dialect;
use switchboard_host::Host;
use switchboard_host::agent::{Agent, AgentEvent, AgentOptions, End, ToolMode};
use switchboard_host::dispatch::{ApproveAll, Approver, DeclineAll};
use switchboard_host::history::History;
use switchboard_host::resource_tool::ReadResources;
use switchboard_providers::Part;

use crate::output::print_json;
use crate::system_prompt::SystemPromptArgs;
use crate::{Global, source};

/// Which model endpoint to talk to; shared by `run` and `chat`. A flag not given takes the
/// config's setting (`[settings]` provider, model, base_url, api_key_env, max_tokens,
/// temperature, max_turns; mcphost's model, provider-url, ...), then the default.
#[derive(clap::Args, Debug, Clone)]
pub struct ModelArgs {
    /// The provider's API: anthropic, openai-chat (also Ollama, llama.cpp, vLLM, LM Studio with
    /// --base-url), openai-responses or gemini. Default: without --base-url, the one --model's
    /// name plainly belongs to (claude-* anthropic; gpt-*, o3, o4-* openai-responses; gemini-*
    /// gemini) unless the config's provider is that provider's; else the config's `provider`;
    /// else the one the config's `model` belongs to; else anthropic. Another provider than the
    /// config's leaves the config's model, base_url and api_key_env out.
    #[arg(long, value_parser = parse_dialect)]
    pub provider: Option<Dialect>,
    /// Model id (the config's `model`, else a per-provider default).
    #[arg(long)]
    pub model: Option<String>,
    /// Send requests here instead of the provider's API, e.g. http://localhost:11434/v1 for
    /// Ollama. No API key is needed when this is set and none is in the environment.
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// Read the API key from this environment variable instead of the provider's usual one
    /// (e.g. OPENROUTER_API_KEY with --base-url https://openrouter.ai/api/v1). Without it the
    /// usual variable (ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY) is sent, also to a
    /// --base-url on another host, with a warning naming the variable and the host.
    #[arg(long, value_name = "VAR")]
    pub api_key_env: Option<String>,
    /// Model requests allowed per message before giving up (the config's `max_turns`, else
    /// 20).
    #[arg(long)]
    pub max_turns: Option<u32>,
    /// Stop once the conversation has cost this many US dollars at the model's list prices
    /// (data/prices.toml: input, cache reads and writes, output): the tool uses of the reply
    /// that reached it are not run, and `run` exits 1. Refused for a model without prices.
    #[arg(long, value_name = "USD", value_parser = usd)]
    pub max_cost: Option<switchboard_core::rent::Usd>,
    /// Price table for /cost, --json's `cost` and --max-cost (TOML in the format of
    /// data/prices.toml, `output_per_mtok` included), in place of the built-in one: for a model
    /// it lacks, or your own prices.
    #[arg(long, value_name = "FILE")]
    pub prices: Option<std::path::PathBuf>,
    /// The most tokens each reply may have, sent in the provider's own field (OpenAI's
    /// `max_completion_tokens`, the Responses API's `max_output_tokens`, Gemini's
    /// `maxOutputTokens`, `max_tokens` for Anthropic and for OpenAI-compatible servers).
    /// Without it: 4096 for Anthropic (which requires a limit) and for a --base-url on another
    /// host (llama.cpp and Ollama otherwise write until their context is full); no limit for
    /// OpenAI's and Gemini's own APIs, whose models' maximum then holds.
    #[arg(long, value_name = "N")]
    pub max_tokens: Option<u32>,
    /// Sampling temperature, 0 to 2 (0: the most repeatable answers), in each provider's own
    /// field. Without it the model's default holds; OpenAI's reasoning models refuse any other.
    #[arg(long, value_name = "T", value_parser = temperature)]
    pub temperature: Option<f64>,
    /// How long a reasoning model thinks before it answers: minimal, low, medium, high (xhigh,
    /// max for Claude), none, or a number of thinking tokens for models that take a budget.
    /// OpenAI gets it as reasoning_effort (Responses: reasoning.effort); Claude 4.6 and later
    /// adaptive thinking with that effort, earlier Claude a thinking budget (low 1024, medium
    /// 8192, high 24576 tokens); Gemini 3 a thinkingLevel, Gemini 2.5 a thinkingBudget. A
    /// level the model cannot take is left out, with a note. Without it the model's default
    /// holds.
    #[arg(long, value_name = "LEVEL")]
    pub reasoning_effort: Option<String>,
    /// Write every request and response body as JSON lines to FILE (keys redacted).
    #[arg(long, value_name = "FILE")]
    pub transcript: Option<PathBuf>,
    /// Which tools the model sees: `all` of them, or `search`: only a search_tools tool, plus
    /// the tools its searches found (they join the list at the next request and stay).
    #[arg(long, value_enum, default_value_t = Tools::All)]
    pub tools: Tools,
    #[command(flatten)]
    pub system: SystemPromptArgs,
    /// Send Anthropic requests without prompt-cache marks (`[settings] prompt_cache = false`).
    /// With them (the default) each request reads the prefix the one before wrote, at a tenth
    /// of the input price; a write costs 1.25x, so a run of one request pays a quarter more
    /// for its prefix. OpenAI and Gemini cache on their own either way.
    #[arg(long)]
    pub no_prompt_cache: bool,
    /// Stop with an error when a request no longer fits the model's context
    /// (`[settings] auto_compact = false`). By default the conversation is compacted then: the
    /// model summarizes it, the summary replaces it, and the loop goes on (said on stderr).
    #[arg(long)]
    pub no_auto_compact: bool,
    /// When the model gets switchboard's `read_resource` tool, which reads an MCP resource by
    /// its URI: `linked` (the default: once a tool result links a resource, so that the model
    /// can follow the link), `always` (whenever a server offers resources) or `never`
    /// (`[settings] read_resources`).
    #[arg(long, value_name = "WHEN", value_parser = ["linked", "always", "never"])]
    pub read_resources: Option<String>,
    /// Keep the conversation in FILE: take up the one saved there (also with another provider
    /// or model) and save it after each answer. A file not there yet starts one.
    #[arg(long, value_name = "FILE")]
    pub conversation: Option<PathBuf>,
}

/// `--tools`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tools {
    /// Every tool of every server.
    All,
    /// A search tool and what it found.
    Search,
}

/// `--temperature`: a number from 0 to 2.
fn temperature(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(t) if switchboard_providers::TEMPERATURE.contains(&t) => Ok(t),
        _ => Err(format!("{s:?} is not a temperature from 0 to 2")),
    }
}

fn usd(s: &str) -> Result<switchboard_core::rent::Usd, String> {
    switchboard_core::rent::Usd::parse(s).map_err(|e| format!("not an amount of US dollars: {e}"))
}

fn parse_dialect(s: &str) -> Result<Dialect, String> {
    s.parse()
}

/// Arguments of `switchboard run`.
#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// The task for the model; `-` reads it from standard input (`git diff | switchboard run
    /// -p -`). Input is read only then: a `run` in a shell loop does not eat the loop's lines.
    #[arg(short = 'p', long = "prompt", value_name = "TEXT")]
    prompt: String,
    #[command(flatten)]
    model: ModelArgs,
    /// Approve every call that needs approval (destructive tools, or per config), and let
    /// servers' sampling requests reach the model. Without it such calls are declined and the
    /// model is told so, and sampling requests are refused. Servers' forms (elicitation) are
    /// declined either way: `run` has nobody to ask.
    #[arg(long)]
    yes: bool,
    /// Stream the reply (the answer text is the same; useful to test streaming endpoints).
    #[arg(long)]
    stream: bool,
    /// Print the loop on stdout as JSON lines while it runs, one per event: `text` (in
    /// `text_delta` pieces with --stream), `reasoning` (`reasoning_delta`), `tool_use` when the model
    /// asks for a tool, `tool_result` when it is answered (as --json's `tool_calls` entries),
    /// `compacted`, `reasoning_refused`, `tools_changed`; then one `result` line holding what
    /// --json prints. For programs that show a run as it goes.
    #[arg(long)]
    stream_json: bool,
    /// Send this MCP resource with the prompt (repeatable), read from the server that lists
    /// it, or whose resource template it fits, as chat's /attach does (`servers NAME` lists a
    /// server's resources). One that cannot be read stops the run before any request.
    #[arg(long, value_name = "URI")]
    attach: Vec<String>,
}

/// Connect to the servers, build the client and the agent. Errors here are usage/config
/// errors (exit 2). `wait` bounds how long servers get to start (`None`: until each has started
/// or failed); the tools of one still starting join when it is ready.
pub async fn start_agent(
    global: &Global,
    model: &ModelArgs,
    approver: Arc<dyn Approver>,
    stream: bool,
    wait: Option<std::time::Duration>,
) -> anyhow::Result<Agent> {
    let config = source::load_config(global)?;
    // What the flags do not say, the builder takes from the config's model settings.
    let mut builder = Host::builder(config.clone())
        .approver(approver)
        .options(AgentOptions {
            max_tokens: model.max_tokens,
            temperature: model.temperature,
            stream,
            tools: match model.tools {
                Tools::All => ToolMode::All,
                Tools::Search => ToolMode::Search,
            },
            ..AgentOptions::default()
        });
    if let Some(p) = model.provider {
        builder = builder.provider(p);
    }
    if let Some(n) = model.max_turns {
        builder = builder.max_turns(n);
    }
    if let Some(usd) = model.max_cost {
        builder = builder.max_cost(usd);
    }
    if let Some(path) = &model.prices {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read --prices {}", path.display()))?;
        let table =
            switchboard_providers::count::prices::parse_prices(&text, &path.display().to_string())?;
        builder = builder.prices(table);
    }
    if let Some(effort) = &model.reasoning_effort {
        builder = builder.reasoning_effort(effort);
    }
    if let Some(m) = &model.model {
        builder = builder.model(m);
    }
    if let Some(url) = &model.base_url {
        builder = builder.base_url(url);
    }
    if let Some(var) = &model.api_key_env {
        builder = builder.api_key_env(var);
    }
    if let Some(p) = &model.transcript {
        builder = builder.transcript(p);
    }
    if let Some(w) = wait {
        builder = builder.startup_wait(w);
    }
    if let Some(text) = model.system.read()? {
        builder = builder.system_prompt(text);
    }
    if model.no_prompt_cache {
        builder = builder.prompt_cache(false);
    }
    if model.no_auto_compact {
        builder = builder.auto_compact(false);
    }
    if let Some(when) = model
        .read_resources
        .as_deref()
        .and_then(ReadResources::parse)
    {
        builder = builder.read_resources(when);
    }
    // Checks the key and the transcript before any server starts; the servers then start
    // behind a progress bar.
    let builder = builder.check()?;
    let saved = match &model.conversation {
        Some(path) => History::read(path)?,
        None => None,
    };
    let sessions = source::connect_within(&config, wait).await;
    let host = builder.sessions(sessions).build().await?;
    for note in host.notes() {
        tracing::warn!("{note}");
    }
    let mut agent = host.into_agent();
    if let Some(saved) = &saved {
        agent.resume(saved);
    }
    Ok(agent)
}

/// Save the conversation to `--conversation`'s file, when one was given.
pub fn save_conversation(agent: &Agent, model: &ModelArgs) -> anyhow::Result<()> {
    if let Some(path) = &model.conversation {
        agent.history().write(path)?;
    }
    Ok(())
}

/// Run the command. Exit 0 when the model answered, 1 when the run failed (provider error after
/// retries, turn limit), 2 on usage or config errors.
pub async fn run(global: &Global, mut args: RunArgs) -> anyhow::Result<ExitCode> {
    if args.prompt == "-" {
        use tokio::io::AsyncReadExt as _;
        let mut text = String::new();
        tokio::io::stdin()
            .read_to_string(&mut text)
            .await
            .context("cannot read the prompt from standard input (-p -)")?;
        if text.trim().is_empty() {
            anyhow::bail!("-p -: standard input held no prompt");
        }
        args.prompt = text;
    }
    let approver: Arc<dyn Approver> = if args.yes {
        Arc::new(ApproveAll)
    } else {
        Arc::new(DeclineAll {
            why: "switchboard run was started without --yes, and this call needs approval".into(),
        })
    };
    let mut agent = start_agent(global, &args.model, approver, args.stream, None).await?;
    let lines = args.stream_json;
    let json = global.json || lines;
    let mut show = |e: AgentEvent| {
        if lines {
            println!("{}", event_json(&e));
        }
        // With --json, stdout is the run's JSON and stderr says only what went differently
        // from what was asked (as warnings do).
        if json
            && !matches!(
                e,
                AgentEvent::Compacted { .. } | AgentEvent::ReasoningRefused { .. }
            )
        {
            return;
        }
        match e {
            AgentEvent::ToolFinished(o) => {
                let what = o.status.as_str();
                eprintln!(
                    "  {} {} → {what} ({} ms)",
                    o.name,
                    compact(&o.arguments, 120),
                    o.elapsed_ms
                );
            }
            AgentEvent::Compacted { messages, clipped } => {
                eprintln!("  {}", compacted_line(messages, clipped));
            }
            AgentEvent::ReasoningRefused { message } => {
                eprintln!("  {}", reasoning_refused_line(&message));
            }
            AgentEvent::ToolsChanged { added, removed } => {
                eprintln!(
                    "  tools changed: +{} -{}",
                    added.join(","),
                    removed.join(",")
                );
            }
            _ => {}
        }
    };
    let mut parts = Vec::new();
    for uri in &args.attach {
        match crate::slash::attach(&agent, uri).await {
            Ok(part) => parts.push(part),
            Err(e) => {
                agent.sessions().shutdown().await;
                anyhow::bail!("--attach {uri}: {e}");
            }
        }
    }
    parts.push(Part::Text(args.prompt.clone()));
    let result = agent.send(parts, &mut show).await;
    agent.sessions().shutdown().await;
    let saved = save_conversation(&agent, &args.model);
    if let Err(e) = &saved {
        eprintln!("error: {e:#}");
    }
    let (answer, error) = match result {
        Ok(a) => (Some(a), None),
        Err(e) => (None, Some(e.to_string())),
    };
    let code = match (&answer, &error) {
        (Some(a), _) if a.end == End::Answered && saved.is_ok() => ExitCode::SUCCESS,
        _ => ExitCode::from(1),
    };
    if json {
        let calls: Vec<Value> = agent
            .turns
            .iter()
            .flat_map(|t| {
                t.tool_calls.iter().map(move |o| {
                    let mut call = outcome_json(o);
                    call["turn"] = json!(t.turn);
                    call
                })
            })
            .collect();
        let mut result = json!({
            "text": answer.as_ref().map(|a| a.text.clone()),
            "end": answer.as_ref().map(|a| a.end),
            "error": error,
            "turns": agent.turns.iter().map(|t| json!({
                "turn": t.turn, "text": t.text, "reasoning": t.reasoning, "stop": t.stop, "usage": t.usage,
                "tools_changed": t.tools_changed,
                "tool_calls": t.tool_calls.iter().map(|o| o.id.clone()).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
            "tool_calls": calls,
            "usage": agent.usage,
            "cost": run_cost(&agent),
        });
        if lines {
            result["type"] = json!("result");
            println!("{result}");
        } else {
            print_json(&result);
        }
    } else {
        if let Some(a) = &answer {
            println!("{}", a.text);
            match a.end {
                End::Answered => {}
                End::MaxTurns => eprintln!(
                    "error: stopped after {} model requests (--max-turns); the model still wanted tools",
                    agent.turns.len()
                ),
                End::MaxTokens => eprintln!("error: {}", max_tokens_hit(agent.max_tokens_sent())),
                End::MaxCost => eprintln!("error: {}", cost_limit_hit(&agent)),
                End::Refusal => eprintln!("error: the model refused"),
            }
        }
        if let Some(e) = &error {
            eprintln!("error: {e}");
        }
        eprintln!(
            "{} model requests, {} input + {} output tokens",
            agent.turns.len(),
            agent.usage.input_tokens,
            agent.usage.output_tokens
        );
    }
    Ok(code)
}

/// Why the loop stopped at `--max-cost`.
pub fn cost_limit_hit(agent: &switchboard_host::agent::Agent) -> String {
    match agent.spent() {
        Some(spent) => format!(
            "stopped at the cost limit (--max-cost): about {} spent at list prices",
            spent.display()
        ),
        None => format!(
            "stopped: --max-cost cannot be kept for {}, whose prices the price table lacks (--prices FILE)",
            agent.client().model
        ),
    }
}

/// Why an answer stopped short at its output limit: the limit that was sent, or the provider's
/// own when none was.
pub fn max_tokens_hit(sent: Option<u32>) -> String {
    match sent {
        Some(n) => format!("the answer was cut at the output limit ({n} tokens; --max-tokens)"),
        None => "the answer was cut at the model's own output limit (none was sent; --max-tokens sets one)"
            .to_string(),
    }
}

/// JSON on one line, cut to `max` characters.
pub fn compact(v: &Value, max: usize) -> String {
    let s = serde_json::to_string(v).unwrap_or_default();
    switchboard_core::clip(&s, max).into_owned()
}

/// What `run` and `chat` say when the loop compacted the conversation to go on.
/// One tool call as `--json` lists it (and `--stream-json` says it was answered).
fn outcome_json(o: &switchboard_host::dispatch::Outcome) -> Value {
    json!({
        "id": o.id, "name": o.name, "server": o.server,
        "tool": o.tool, "arguments": o.arguments, "status": o.status,
        "is_error": o.result.is_error, "text": o.result.text(),
        "cut": o.result.cut, "elapsed_ms": o.elapsed_ms,
        "output_schema_problem": o.output_schema_problem,
    })
}

/// One `--stream-json` line.
fn event_json(e: &AgentEvent) -> Value {
    match e {
        AgentEvent::TextDelta(text) => json!({"type": "text_delta", "text": text}),
        AgentEvent::Text(text) => json!({"type": "text", "text": text}),
        AgentEvent::ReasoningDelta(text) => json!({"type": "reasoning_delta", "text": text}),
        AgentEvent::Reasoning(text) => json!({"type": "reasoning", "text": text}),
        AgentEvent::ToolUseStarted { name } => json!({"type": "tool_use", "name": name}),
        AgentEvent::ToolFinished(o) => {
            let mut v = outcome_json(o);
            v["type"] = json!("tool_result");
            v
        }
        AgentEvent::Compacted { messages, clipped } => {
            json!({"type": "compacted", "messages": messages, "clipped": clipped})
        }
        AgentEvent::ReasoningRefused { message } => {
            json!({"type": "reasoning_refused", "message": message})
        }
        AgentEvent::ToolsChanged { added, removed } => {
            json!({"type": "tools_changed", "added": added, "removed": removed})
        }
    }
}

/// What the run's tokens cost at the price table, when it knows every model that spent them:
/// `{"input_usd", "output_usd" (null without an output price), "total_usd", "model", "date",
/// "by_model": [{"model", "input_usd", "output_usd", "total_usd"}]}` (`model` and `date`: the
/// model in use and its prices' date; `by_model`: each model that used tokens, a server's
/// sampling model among them), amounts as decimal strings.
fn run_cost(agent: &switchboard_host::agent::Agent) -> Value {
    let Some(p) = agent.price() else {
        return Value::Null;
    };
    let mut input = switchboard_core::rent::Usd::ZERO;
    let mut output = Some(switchboard_core::rent::Usd::ZERO);
    let mut by_model = Vec::new();
    for (model, _, cost) in agent.costs() {
        let Some(c) = cost else {
            return Value::Null;
        };
        input = input.plus(c.input);
        output = output.zip(c.output).map(|(a, b)| a.plus(b));
        by_model.push(json!({
            "model": model, "input_usd": c.input, "output_usd": c.output, "total_usd": c.total(),
        }));
    }
    json!({
        "input_usd": input, "output_usd": output, "total_usd": output.map(|o| o.plus(input)),
        "model": p.id, "date": p.date, "by_model": by_model,
    })
}

/// What `usage` costs at `price` (see [`switchboard_core::rent::usage_cost`]).
pub(crate) fn usage_cost(
    price: &switchboard_core::rent::ModelPrice,
    usage: &switchboard_providers::Usage,
) -> switchboard_core::rent::UsageCost {
    switchboard_core::rent::usage_cost(
        price,
        usage.input_tokens,
        usage.cache_read_tokens.unwrap_or(0),
        usage.cache_write_tokens.unwrap_or(0),
        usage.output_tokens,
    )
}

/// What `run` and `chat` say when the provider refused the model's reasoning sent back.
pub(crate) fn reasoning_refused_line(message: &str) -> String {
    format!(
        "the provider refused the model's reasoning sent back with its tool uses, so the request went again without it, and so will the rest ({message})"
    )
}

pub(crate) fn compacted_line(messages: usize, clipped: bool) -> String {
    let cut = if clipped {
        " (tool results and arguments cut for the summary)"
    } else {
        ""
    };
    format!(
        "the conversation no longer fit the model's context: its {messages} messages were compacted into a summary{cut}, and it goes on from there (--no-auto-compact stops instead)"
    )
}
