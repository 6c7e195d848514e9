//! `switchboard inspect`: the exact request body a provider would receive from the configured
//! servers (or `--catalog` files), what was changed on the way, and with `--cost` what the tools
//! array costs per request, session and month.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use serde_json::{Value, json};
use switchboard_core::rent::{RentReport, Workload};
use switchboard_core::{Catalog, Dialect, facade};
use switchboard_host::agent::{compatible_server, max_tokens_sent};
use switchboard_host::client::ProviderClient;
use switchboard_host::config::ModelSettings;
use switchboard_host::translate::{TranslateOptions, Translation, default_model, translate};
use switchboard_providers::count::{
    Comparison, CountOptions, ServerTool, ToolText, ToolsRent, count_tools, prices, rent_report,
};
use switchboard_providers::endpoint::default_base_url;
use switchboard_providers::{SanitizeOptions, prepare_tool};

use crate::output::print_json;
use crate::system_prompt::SystemPromptArgs;
use crate::{Global, rent_view, source};

/// Arguments of `switchboard inspect`.
#[derive(clap::Args, Debug)]
pub struct InspectArgs {
    /// The provider dialect to render for. Default, as for `run`: the one --model's name plainly
    /// belongs to (claude-*, gpt-*, o3, gemini-*, ...) unless the config's provider is that
    /// provider's, else the config's `provider`, else anthropic (none of this with --base-url).
    /// Another provider than the config's leaves the config's model, base_url and api_key_env
    /// out.
    #[arg(long, value_parser = parse_dialect)]
    provider: Option<Dialect>,
    /// Model id to put in the request (the config's `model`, else a per-provider default).
    #[arg(long)]
    model: Option<String>,
    /// The user message of the request.
    #[arg(long, value_name = "TEXT")]
    message: Option<String>,
    /// OpenAI: convert schemas to strict mode where possible (per-tool fallback, with reasons).
    #[arg(long)]
    strict: bool,
    /// Gemini: send the OpenAPI-subset `parameters` field instead of `parametersJsonSchema`.
    #[arg(long)]
    gemini_openapi: bool,
    #[command(flatten)]
    system: SystemPromptArgs,
    /// Put today's date into the system prompt (off by default: it changes the cached prefix daily).
    #[arg(long)]
    date: bool,
    /// Also count what the tools array costs (tokens per tool, money per request/session/month).
    #[arg(long)]
    cost: bool,
    /// Turns per session for the cost lines.
    #[arg(long, default_value_t = Workload::default().turns, requires = "cost")]
    turns: u64,
    /// Requests per month for the cost lines.
    #[arg(long, default_value_t = Workload::default().requests_per_month, requires = "cost")]
    requests_per_month: u64,
    /// A what-if cost line keeping only public names matching these globs (repeatable).
    #[arg(long = "what-if-allow", value_name = "GLOB", requires = "cost")]
    what_if_allow: Vec<String>,
    /// Price data file (TOML, the format of data/prices.toml) instead of the built-in table.
    #[arg(long, value_name = "FILE", requires = "cost")]
    prices: Option<PathBuf>,
    /// Write a self-contained HTML page (bar charts and the cost table) to FILE.
    #[arg(long, value_name = "FILE", requires = "cost")]
    html: Option<PathBuf>,
    /// Ask the provider what the tools array costs: its counting endpoint counts the request
    /// with the tools and without them (Anthropic's free `count_tokens`, the Responses API's
    /// `input_tokens`, Gemini's `countTokens`; OpenAI Chat has none: its offline count is
    /// already the tokenizer's). Needs the provider's API key, as `run` does. The offline count
    /// is shown beside it.
    #[arg(long)]
    exact: bool,
    /// With --exact: send the counting requests here instead of the provider's API (default:
    /// the config's `base_url`).
    #[arg(long, value_name = "URL", requires = "exact")]
    base_url: Option<String>,
    /// With --exact: read the API key from this environment variable (default: the config's
    /// `api_key_env`).
    #[arg(long, value_name = "VAR", requires = "exact")]
    api_key_env: Option<String>,
}

fn parse_dialect(s: &str) -> Result<Dialect, String> {
    s.parse()
}

/// Run the command.
pub async fn run(global: &Global, mut args: InspectArgs) -> anyhow::Result<ExitCode> {
    // What the flags do not say about the model comes from the config's model settings.
    let (catalog, mut opts, settings) = if global.catalog.is_empty() {
        let config = source::load_config(global)?;
        let catalog = source::live_catalog(&config, "is not in the request").await;
        for d in &config.disabled {
            tracing::warn!("server {:?} is disabled: {}", d.name, d.reason);
        }
        let model = &config.settings.model;
        let settings = model.for_provider(model.provider_for(
            args.provider,
            args.model.as_deref(),
            args.base_url.as_deref(),
        ));
        let dialect = settings.provider.unwrap_or(Dialect::Anthropic);
        // The model is set below, from --model, the config or the dialect's default.
        let opts = switchboard_host::agent::translate_options(&config, dialect, "");
        (catalog, opts, settings)
    } else {
        let none = ModelSettings::default();
        let settings = none.for_provider(none.provider_for(
            args.provider,
            args.model.as_deref(),
            args.base_url.as_deref(),
        ));
        let dialect = settings.provider.unwrap_or(Dialect::Anthropic);
        (
            source::load_catalog_files(&global.catalog)?,
            TranslateOptions::new(dialect),
            settings,
        )
    };
    args.model = args.model.or(settings.model);
    // The request as `run` would send it: the config's limits, in the field its endpoint reads.
    let base_url = args
        .base_url
        .clone()
        .or_else(|| settings.base_url.clone())
        .unwrap_or_else(|| default_base_url(opts.dialect).to_string());
    opts.compatible_server = compatible_server(opts.dialect, &base_url);
    // Anthropic's body sets its own default (raised above a thinking budget).
    opts.max_tokens = if opts.dialect == Dialect::Anthropic {
        settings.max_tokens
    } else {
        max_tokens_sent(opts.dialect, &base_url, settings.max_tokens)
    };
    opts.temperature = settings.temperature;
    opts.reasoning_effort = settings.reasoning_effort.clone();
    if args.exact {
        args.base_url = args.base_url.or(settings.base_url);
        args.api_key_env = args.api_key_env.or(settings.api_key_env);
    }
    opts.model = args.model.clone();
    opts.message = args.message.clone();
    opts.strict = args.strict;
    opts.gemini_openapi = args.gemini_openapi;
    if args.date {
        opts.date = Some(switchboard_core::time::date(std::time::SystemTime::now()));
    }
    if let Some(text) = args.system.read()? {
        opts.system = Some(text);
    }
    let t = translate(&catalog, &opts);
    let report = if args.cost {
        Some(cost(&args, &t, &opts)?)
    } else {
        None
    };
    let exact = if args.exact {
        Some(exact(&args, &t, &opts).await?)
    } else {
        None
    };

    if global.json {
        let mut v = json!({
            "provider": opts.dialect.as_str(),
            "request": t.request,
            "names": t.names,
            "renames": t.renames,
            "changes": t.changes,
            "excluded": t.excluded,
            "hidden": t.hidden,
            "violations": t.violations,
        });
        if let Some(r) = &report {
            v["rent"] = rent_json(r);
            v["cost"] = cost_json(r);
        }
        if let Some(e) = &exact {
            v["exact"] = e.to_json();
        }
        print_json(&v);
    } else {
        print!("{}", render(&t, &catalog));
        if let Some(r) = &report {
            println!();
            print!("{}", rent_view::table(r));
        }
        if let Some(e) = &exact {
            println!();
            println!("{}", e.render());
        }
    }
    if let (Some(r), Some(path)) = (&report, &args.html) {
        std::fs::write(path, rent_view::html(r))
            .with_context(|| format!("cannot write {}", path.display()))?;
        eprintln!("wrote {}", path.display());
    }
    Ok(if t.violations.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The provider's count of the tools array beside switchboard's offline one.
struct Exact {
    provider: Dialect,
    model: String,
    /// Input tokens of the request as rendered.
    with_tools: u64,
    /// Input tokens of the same request without its tools.
    without_tools: u64,
    /// switchboard's offline count of the tools array, how it was made, and the comparison.
    counted: ToolsRent,
    comparison: Comparison,
}

impl Exact {
    fn tools_tokens(&self) -> u64 {
        self.with_tools.saturating_sub(self.without_tools)
    }

    fn to_json(&self) -> Value {
        json!({
            "provider": self.provider.as_str(),
            "model": self.model,
            "with_tools": self.with_tools,
            "without_tools": self.without_tools,
            "tools_tokens": self.tools_tokens(),
            "counted": self.comparison.counted,
            "counted_method": self.counted.method.to_string(),
            "difference": self.comparison.difference(),
            "within_range": self.comparison.within_range,
        })
    }

    fn render(&self) -> String {
        let diff = self.comparison.difference();
        let off = match diff {
            0 => "the same".to_string(),
            d if d > 0 => format!("{d} fewer"),
            d => format!("{} more", -d),
        };
        let range = match self.comparison.within_range {
            Some(true) => "; inside the offline count's stated range",
            Some(false) => "; outside the offline count's stated range",
            None => "",
        };
        format!(
            "The provider's count ({}, {}): {} input tokens with the tools, {} without: the tools array takes {} tokens.\nswitchboard's offline count: {} ({off}{range}; {}).",
            self.provider.as_str(),
            self.model,
            self.with_tools,
            self.without_tools,
            self.tools_tokens(),
            self.comparison.counted,
            self.counted.method
        )
    }
}

/// Ask the provider's counting endpoint for the request with and without its tools, and count
/// the tools offline beside it.
async fn exact(
    args: &InspectArgs,
    t: &Translation,
    opts: &TranslateOptions,
) -> anyhow::Result<Exact> {
    let model = opts
        .model
        .clone()
        .unwrap_or_else(|| default_model(opts.dialect).to_string());
    if opts.dialect == Dialect::OpenAiChat {
        anyhow::bail!(
            "--exact: OpenAI Chat Completions has no endpoint that counts tokens; its offline count (--cost) is the tokenizer's own. The Responses API has one: --provider openai-responses --exact"
        );
    }
    let key = ProviderClient::key_from_env(
        opts.dialect,
        args.base_url.as_deref(),
        args.api_key_env.as_deref(),
        &|v| std::env::var(v).ok(),
    )?;
    let client = ProviderClient::new(opts.dialect, args.base_url.as_deref(), &model, key)?;
    let mut bare = t.request.clone();
    if let Some(fields) = bare.as_object_mut() {
        for key in ["tools", "tool_choice", "toolConfig", "parallel_tool_calls"] {
            fields.remove(key);
        }
    }
    let with_tools = client.count_input_tokens(&t.request).await?;
    let without_tools = client.count_input_tokens(&bare).await?;
    let empty = json!({});
    let texts: Vec<ToolText<'_>> = t
        .tools
        .iter()
        .map(|spec| {
            ToolText::new(
                &spec.name,
                spec.description.as_deref().unwrap_or(""),
                spec.schema.as_object().map_or(&empty, |_| &spec.schema),
            )
        })
        .collect();
    let overhead = prices::default_prices()
        .model(&model)
        .and_then(|p| p.tool_overhead_tokens);
    let options = CountOptions {
        overhead,
        system_message: !t.system.is_empty(),
        ..CountOptions::default()
    };
    let counted = count_tools(opts.dialect, &model, &texts, &options);
    let comparison = counted.compare(with_tools.saturating_sub(without_tools));
    Ok(Exact {
        provider: opts.dialect,
        model,
        with_tools,
        without_tools,
        counted,
        comparison,
    })
}

fn cost(
    args: &InspectArgs,
    t: &Translation,
    opts: &TranslateOptions,
) -> anyhow::Result<RentReport> {
    let table = match &args.prices {
        Some(p) => {
            let text = std::fs::read_to_string(p)
                .with_context(|| format!("cannot read {}", p.display()))?;
            prices::parse_prices(&text, &p.display().to_string())?
        }
        None => prices::default_prices(),
    };
    let model = opts
        .model
        .clone()
        .unwrap_or_else(|| default_model(opts.dialect).to_string());
    let price = table.model(&model).cloned().with_context(|| {
        format!("no price for model {model:?} in the price table; pass --prices FILE with an entry for it, or pick a --model it lists")
    })?;
    let server_of: BTreeMap<&str, &str> = t
        .names
        .iter()
        .map(|n| (n.public.as_str(), n.server.as_str()))
        .collect();
    let empty = json!({});
    let tools: Vec<ServerTool<'_>> = t
        .tools
        .iter()
        .map(|spec| ServerTool {
            server: server_of.get(spec.name.as_str()).copied().unwrap_or("?"),
            tool: ToolText::new(
                &spec.name,
                spec.description.as_deref().unwrap_or(""),
                spec.schema.as_object().map_or(&empty, |_| &spec.schema),
            ),
        })
        .collect();
    let workload = Workload {
        turns: args.turns,
        requests_per_month: args.requests_per_month,
    };
    let system = (!t.system.is_empty()).then_some(t.system.as_str());
    let mut report = rent_report(
        opts.dialect,
        &model,
        &tools,
        system,
        &CountOptions::default(),
        &price,
        workload,
    );
    if !args.what_if_allow.is_empty() {
        let filter = switchboard_core::ToolFilter::new(&args.what_if_allow, &[])?;
        let kept: Vec<&str> = t
            .names
            .iter()
            .map(|n| n.public.as_str())
            .filter(|p| filter.permits(p))
            .collect();
        report.what_if_allow_list(format!("only {}", args.what_if_allow.join(", ")), &kept);
    }
    // The facade: the search and call tools instead of the catalog (loaded tools come on top).
    let facade_tools: Vec<_> = facade::tools();
    let prepared: Vec<_> = facade_tools
        .iter()
        .filter_map(|f| {
            prepare_tool(
                opts.dialect,
                &f.name,
                f.description.as_deref(),
                &f.input_schema,
                &SanitizeOptions::default(),
            )
            .ok()
        })
        .collect();
    let texts: Vec<ToolText<'_>> = prepared
        .iter()
        .map(|p| {
            ToolText::new(
                &p.spec.name,
                p.spec.description.as_deref().unwrap_or(""),
                &p.spec.schema,
            )
        })
        .collect();
    let facade_rent = count_tools(opts.dialect, &model, &texts, &CountOptions::default());
    report.what_if(
        "search facade (search_tools + call_tool)",
        facade_rent.per_tool.iter().sum(),
    );
    Ok(report)
}

fn rent_json(r: &RentReport) -> Value {
    json!({
        "total_tokens": r.tools_bill.tokens,
        "overhead_tokens": r.overhead_tokens,
        "system_tokens": r.system_tokens,
        "method": r.method,
        "tools": r.tools.iter().map(|t| json!({"public": t.public_name, "server": t.server, "tokens": t.tokens})).collect::<Vec<_>>(),
    })
}

fn cost_json(r: &RentReport) -> Value {
    let b = &r.tools_bill;
    json!({
        "model": r.model,
        "price_date": r.price.date,
        "price_source": r.price.source,
        "turns": r.workload.turns,
        "requests_per_month": r.workload.requests_per_month,
        "per_request_usd": b.per_request.as_f64(),
        "per_session_usd": b.per_session.as_f64(),
        "per_session_cached_usd": b.per_session_cached.as_f64(),
        "per_month_usd": b.per_month.as_f64(),
        "per_month_cached_usd": b.per_month_cached.as_f64(),
        "cached": b.cached,
        "what_ifs": r.what_ifs.iter().map(|w| json!({"label": w.label, "tokens": w.bill.tokens, "per_request_usd": w.bill.per_request.as_f64(), "per_month_usd": w.bill.per_month.as_f64()})).collect::<Vec<_>>(),
    })
}

/// Violations first, then the body, then what changed on the way.
fn render(t: &Translation, catalog: &Catalog) -> String {
    let mut out = String::new();
    for v in &t.violations {
        out.push_str(&format!(
            "VIOLATION: {} {}: {}, at most {}; {}\n",
            v.dialect, v.limit, v.count, v.max, v.remedy
        ));
    }
    if !t.violations.is_empty() {
        out.push_str("This request breaks a hard provider limit; switchboard will not send it. Narrow it with tools.allow / tools.deny, a --profile, or the search facade.\n\n");
    }
    out.push_str(&format!(
        "Request body for {} ({} from {}):\n",
        t.dialect,
        count(t.names.len(), "tool"),
        count(catalog.servers.len(), "server")
    ));
    out.push_str(&serde_json::to_string_pretty(&t.request).unwrap_or_default());
    out.push_str("\n\n");
    if !t.hidden.is_empty() {
        out.push_str(&format!(
            "Kept from models by the config ({}):\n",
            t.hidden.len()
        ));
        for h in &t.hidden {
            out.push_str(&format!("  {} {:?}: {}\n", h.server, h.tool, h.reason));
        }
        out.push('\n');
    }
    if t.renames.is_empty() && t.changes.is_empty() && t.excluded.is_empty() {
        out.push_str("Nothing was changed on the way.\n");
        return out;
    }
    if !t.renames.is_empty() {
        out.push_str(&format!("Renamed ({}):\n", t.renames.len()));
        for r in &t.renames {
            // The tool name quoted: it may hold spaces, control characters or be empty.
            let reasons: Vec<String> = r
                .reasons
                .iter()
                .map(|reason| {
                    serde_json::to_value(reason)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_string))
                        .unwrap_or_else(|| format!("{reason:?}"))
                })
                .collect();
            out.push_str(&format!(
                "  {} {:?} -> {} ({})\n",
                r.server,
                r.tool,
                r.public,
                reasons.join(", ")
            ));
        }
    }
    if !t.changes.is_empty() {
        out.push_str(&format!("Schema changes ({}):\n", t.changes.len()));
        let mut by_rule: BTreeMap<&str, usize> = BTreeMap::new();
        for c in &t.changes {
            *by_rule.entry(c.change.rule).or_default() += 1;
        }
        for c in t.changes.iter().take(50) {
            out.push_str(&format!(
                "  {} {} [{}]\n",
                c.public,
                if c.change.path.is_empty() {
                    "/"
                } else {
                    &c.change.path
                },
                c.change.rule
            ));
        }
        if t.changes.len() > 50 {
            out.push_str(&format!(
                "  ... and {} more (use --json for all)\n",
                t.changes.len() - 50
            ));
        }
        let summary: Vec<String> = by_rule.iter().map(|(r, n)| format!("{r}: {n}")).collect();
        out.push_str(&format!("  by rule: {}\n", summary.join(", ")));
    }
    if !t.excluded.is_empty() {
        out.push_str(&format!("Excluded ({}):\n", t.excluded.len()));
        for e in &t.excluded {
            out.push_str(&format!("  {} {:?}: {}\n", e.server, e.tool, e.reason));
        }
    }
    out
}

/// `n` and the noun, plural unless `n` is 1.
fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use switchboard_core::{Entry, ServerCatalog, Tool};

    #[test]
    fn text_output_reads_as_text_not_json_blobs() {
        // Regression: renames and limit violations were printed as one-line JSON objects.
        let mut big = ServerCatalog::new("big");
        big.tools.push(Entry::new(Tool::new(
            "has space",
            "d",
            json!({"type": "object"}),
        )));
        for i in 0..129 {
            big.tools
                .push(Entry::new(Tool::new(format!("t{i}"), "d", json!({}))));
        }
        let catalog = Catalog::from_servers([big]);
        let t = translate(&catalog, &TranslateOptions::new(Dialect::OpenAiChat));
        let text = render(&t, &catalog);
        assert!(
            text.starts_with("VIOLATION: openai-chat max-tools: 130, at most 128; "),
            "{text}"
        );
        assert!(text.contains("(130 tools from 1 server)"), "{text}");
        let public = &t.renames[0].public;
        assert!(
            text.contains(&format!(
                "  big \"has space\" -> {public} (sanitized-chars)\n"
            )),
            "{text}"
        );
        assert!(!text.contains("{\"public\""), "{text}");
    }
}
