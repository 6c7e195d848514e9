//! `switchboard lint`: run the lint rules over a catalog, print the report (text, JSON or
//! SARIF) and turn it into an exit code. Obtaining the catalog (config, catalog file or a
//! spawned stdio server) is the caller's job; `--explain` and `--list-rules` need none.

use std::io::Write as _;
use std::process::ExitCode;

use switchboard_core::{Catalog, Dialect};
use switchboard_lint::{FailOn, Format, LintOptions, explain, explain_text, lint, rules};

/// Options of `switchboard lint`.
#[derive(Clone, Debug, clap::Args)]
pub struct LintArgs {
    /// Output format [default: text, or json under the global --json].
    #[arg(long, value_enum)]
    pub format: Option<FormatArg>,
    /// Exit with status 1 when a finding reaches this severity.
    #[arg(long, value_enum, default_value_t = FailOnArg::Error)]
    pub fail_on: FailOnArg,
    /// Print the documentation of one rule and exit.
    #[arg(long, value_name = "RULE")]
    pub explain: Option<String>,
    /// Print every rule (id, family, severity, summary) and exit.
    #[arg(long)]
    pub list_rules: bool,
    /// Estimated tokens above which one tool definition is reported (tool-rent).
    #[arg(long, value_name = "TOKENS", default_value_t = 500)]
    pub max_tool_tokens: usize,
    /// Estimated tokens above which a server's tools together are reported (server-rent).
    #[arg(long, value_name = "TOKENS", default_value_t = 10_000)]
    pub max_server_tokens: usize,
    /// Check portability for this provider dialect only (repeatable; default: all).
    #[arg(long = "provider", value_name = "DIALECT")]
    pub providers: Vec<Dialect>,
    /// Do not report this rule (repeatable).
    #[arg(long = "allow", value_name = "RULE")]
    pub allow: Vec<String>,
    /// Artifact URI for SARIF results (e.g. the catalog file's path); default mcp://SERVER/tools/TOOL.
    #[arg(long, value_name = "URI")]
    pub sarif_uri: Option<String>,
}

/// `--format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum FormatArg {
    /// Grouped by server and tool, with counts.
    Text,
    /// Findings and a summary as JSON.
    Json,
    /// SARIF 2.1.0 (GitHub code scanning).
    Sarif,
}

/// `--fail-on`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum FailOnArg {
    /// Fail on error findings.
    Error,
    /// Fail on warnings and errors.
    Warning,
    /// Never fail because of findings.
    Never,
}

/// Exit status for a usage error (unknown rule id).
const USAGE: u8 = 2;

impl LintArgs {
    /// The global `--json`: JSON output unless `--format` chose one.
    pub fn json_unless_format_given(&mut self) {
        self.format.get_or_insert(FormatArg::Json);
    }

    fn options(&self) -> LintOptions {
        LintOptions {
            max_tool_tokens: self.max_tool_tokens,
            max_server_tokens: self.max_server_tokens,
            dialects: if self.providers.is_empty() {
                Dialect::ALL.to_vec()
            } else {
                self.providers.clone()
            },
            allow: self.allow.clone(),
        }
    }
}

/// Handle `--explain` and `--list-rules`, which need no catalog. `None` means: go and get a
/// catalog, then call [`run_on_catalog`].
pub fn run_standalone(args: &LintArgs) -> Option<ExitCode> {
    // The rules' own documentation as JSON, under `--format json` or the global `--json`.
    let json = args.format == Some(FormatArg::Json);
    if args.list_rules && json {
        print_out(&format!(
            "{}\n",
            pretty(&serde_json::json!({ "rules": rules() }))
        ));
        return Some(ExitCode::SUCCESS);
    }
    if args.list_rules {
        let mut out = String::new();
        for r in rules() {
            out.push_str(&format!(
                "{:<32} {:<12} {:<8} {}\n",
                r.id,
                r.family.as_str(),
                r.severity.as_str(),
                r.summary
            ));
        }
        print_out(&out);
        return Some(ExitCode::SUCCESS);
    }
    let id = args.explain.as_deref()?;
    Some(match explain(id) {
        Ok(doc) if json => {
            print_out(&format!("{}\n", pretty(doc)));
            ExitCode::SUCCESS
        }
        Ok(doc) => {
            print_out(&explain_text(doc));
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(USAGE)
        }
    })
}

/// Lint `catalog`, print the report in the chosen format to stdout, and return the exit code:
/// 0 clean (under `--fail-on`), 1 a finding reached `--fail-on`, 2 a usage error.
pub fn run_on_catalog(args: &LintArgs, catalog: &Catalog) -> anyhow::Result<ExitCode> {
    if let Some(code) = run_standalone(args) {
        return Ok(code);
    }
    let (code, text) = render(args, catalog);
    match code {
        USAGE => eprint!("{text}"),
        _ => print_out(&text),
    }
    Ok(ExitCode::from(code))
}

/// The report text and the exit status, without printing (what `run_on_catalog` prints).
pub fn render(args: &LintArgs, catalog: &Catalog) -> (u8, String) {
    let opts = args.options();
    if let Err(e) = opts.validate() {
        return (USAGE, format!("error: {e}\n"));
    }
    let report = lint(catalog, &opts);
    let format = match args.format.unwrap_or(FormatArg::Text) {
        FormatArg::Text => Format::Text,
        FormatArg::Json => Format::Json,
        FormatArg::Sarif => Format::Sarif,
    };
    let fail_on = match args.fail_on {
        FailOnArg::Error => FailOn::Error,
        FailOnArg::Warning => FailOn::Warning,
        FailOnArg::Never => FailOn::Never,
    };
    let text = report.render(format, args.sarif_uri.as_deref());
    (u8::from(report.fails(fail_on)), text)
}

fn print_out(text: &str) {
    // A closed pipe (`| head`) is not an error worth a panic.
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
}

/// Pretty JSON of a value that always serializes (the rules' static documentation).
fn pretty(value: &impl serde::Serialize) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
}
