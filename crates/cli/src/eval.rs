//! `switchboard eval`: measure tool retrieval on a catalog and a query set.
//!
//! `switchboard eval retrieval [--catalog FILE...] --queries FILE [--method lexical|dense|hybrid]
//! [--model-dir DIR] [--json] [--limit N] [--misses N]` prints recall@1/3/5/10, MRR, nDCG@10,
//! latency, build time and the rent of the full tools array against a search facade, over the
//! catalog files or, without them, the configured servers' tools; `--misses` lists the queries
//! that fared worst, with where their tools ranked.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::{Value, json};
use switchboard_search::eval::{self, QueryOutcome, Report};
use switchboard_search::{ClauseFusion, Tuning};
use switchboard_search::{Embedder, Index, Method};

use crate::Global;
use crate::search_cmd::SearchTools;

/// Arguments of `switchboard eval`.
#[derive(clap::Args, Debug)]
pub struct EvalArgs {
    /// What to evaluate.
    #[command(subcommand)]
    pub target: EvalTarget,
}

/// The things `switchboard eval` can measure.
#[derive(clap::Subcommand, Debug)]
pub enum EvalTarget {
    /// Tool retrieval: how often the right tools are among the top k for a query.
    Retrieval(RetrievalArgs),
}

/// Arguments of `switchboard eval retrieval`.
#[derive(clap::Args, Debug)]
pub struct RetrievalArgs {
    /// Query set, JSON lines of {"id","query","gold":[tool names],"catalog"}.
    #[arg(long)]
    pub queries: PathBuf,
    /// Ranking method.
    #[arg(long, value_enum, default_value_t = MethodArg::Hybrid)]
    pub method: MethodArg,
    /// Sentence-transformers model directory (model.safetensors, tokenizer.json, config.json).
    /// Default: the config's search_model, else $SWITCHBOARD_MODEL_DIR, else <user data
    /// dir>/switchboard/models/all-MiniLM-L6-v2.
    #[arg(long)]
    pub model_dir: Option<PathBuf>,
    /// Where to cache catalog embeddings. Default: the user cache dir.
    #[arg(long)]
    pub cache_dir: Option<PathBuf>,
    /// Embed the catalog afresh and keep nothing.
    #[arg(long)]
    pub no_cache: bool,
    /// Evaluate only the first N queries.
    #[arg(long)]
    pub limit: Option<usize>,
    /// Also list the N queries that fared worst (lowest recall@5, then recall@10, then
    /// reciprocal rank): where each of their gold tools ranked, and what ranked first.
    #[arg(long, value_name = "N")]
    pub misses: Option<usize>,
    /// Hybrid: share of the dense score in the blend (default: the library's).
    #[arg(long)]
    pub dense_weight: Option<f32>,
    /// Share of a server's best tool score lent to its other tools (default: the library's).
    #[arg(long)]
    pub server_weight: Option<f32>,
    /// Also embed each sentence of a multi-sentence query (slower; see RESULTS.md).
    #[arg(long)]
    pub sentences: bool,
    /// Hybrid: weight of the tool-name coverage term (off by default; 0.2 is the tuned value:
    /// metatool-multi R@5 0.768 -> 0.800, LiveMCPBench level, about +0.3 ms per query; see
    /// RESULTS.md). Each of the top 20 tools gets this share of how well its name's words are
    /// matched by some word of the query, which favours tools for one step of a multi-step task.
    #[arg(long, value_name = "WEIGHT")]
    pub name_coverage: Option<f32>,
    /// How the clauses of a long query join its ranking: off, max, or rrf (default: the
    /// library's). Each clause is ranked on its own, then fused with the whole query.
    #[arg(long)]
    pub clauses: Option<ClausesArg>,
    /// Clause fusion rrf: the constant k in 1/(k + rank).
    #[arg(long, default_value_t = 60.0)]
    pub rrf_k: f32,
    /// Clause fusion rrf: how many times the whole query's ranking counts.
    #[arg(long, default_value_t = 1.0)]
    pub whole_weight: f32,
    /// Share of the query's similarity to a server's own document added to its tools
    /// (default: the library's).
    #[arg(long)]
    pub server_doc_weight: Option<f32>,
}

/// Clause fusion as the CLI spells it.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClausesArg {
    /// The whole query only.
    Off,
    /// Each tool's best normalized score over the whole query and its clauses.
    Max,
    /// Reciprocal rank fusion of the whole query's and each clause's ranking.
    Rrf,
}

/// Ranking methods as the CLI spells them.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum MethodArg {
    /// BM25F over name, description, parameters and server.
    Lexical,
    /// Sentence-embedding similarity.
    Dense,
    /// Both, blended.
    Hybrid,
}

impl From<MethodArg> for Method {
    fn from(m: MethodArg) -> Method {
        match m {
            MethodArg::Lexical => Method::Lexical,
            MethodArg::Dense => Method::Dense,
            MethodArg::Hybrid => Method::Hybrid,
        }
    }
}

/// Run the command over the global `--catalog` files (all indexed together), else over the
/// configured servers' tools, printing JSON when the global `--json` is set.
pub async fn run(global: &Global, args: EvalArgs) -> anyhow::Result<ExitCode> {
    match args.target {
        EvalTarget::Retrieval(a) => retrieval(global, a).await,
    }
}

async fn retrieval(global: &Global, args: RetrievalArgs) -> anyhow::Result<ExitCode> {
    let as_json = global.json;
    let method: Method = args.method.into();
    let tools = SearchTools::load(global).await?;
    let docs = tools.docs();
    if docs.is_empty() {
        bail!("no tools to search in {}", tools.origin);
    }
    let stems = &tools.stems;

    let text = std::fs::read_to_string(&args.queries)
        .with_context(|| format!("reading queries {}", args.queries.display()))?;
    let all = eval::parse_queries(&args.queries.display().to_string(), &text)?;
    let total = all.len();
    // A query meant for another catalog file is left out; live servers take every query.
    let mut queries: Vec<_> = all
        .into_iter()
        .filter(|q| stems.is_empty() || q.catalog.as_ref().is_none_or(|c| stems.contains(c)))
        .collect();
    let other_catalog = total - queries.len();
    if other_catalog > 0 {
        eprintln!(
            "note: {other_catalog} of {total} queries name a catalog not given ({}); left out",
            stems.iter().cloned().collect::<Vec<_>>().join(", ")
        );
    }
    if let Some(n) = args.limit {
        queries.truncate(n);
    }
    if queries.is_empty() {
        bail!("no queries to evaluate");
    }

    let mut tuning = Tuning::default();
    if let Some(w) = args.dense_weight {
        tuning.dense_weight = w;
    }
    if let Some(w) = args.server_weight {
        tuning.server_weight = w;
    }
    if args.sentences {
        tuning.split_sentences = true;
    }
    if let Some(w) = args.name_coverage {
        if !w.is_finite() || w < 0.0 {
            bail!("--name-coverage takes a weight of 0 or more, not {w}");
        }
        tuning.name_coverage_weight = w;
    }
    if let Some(c) = args.clauses {
        tuning.clauses = match c {
            ClausesArg::Off => ClauseFusion::Off,
            ClausesArg::Max => ClauseFusion::Max,
            ClausesArg::Rrf => ClauseFusion::Rrf {
                k: args.rrf_k,
                whole_weight: args.whole_weight,
            },
        };
    }
    if let Some(w) = args.server_doc_weight {
        tuning.server_doc_weight = w;
    }
    let index = tools.index(
        &docs,
        method,
        args.model_dir.as_deref(),
        (!args.no_cache).then_some(args.cache_dir.as_deref()),
        tuning,
    );

    let bar = progress_bar("queries");
    let report = eval::evaluate(&index, &queries, method, &mut |done, total| {
        bar.set_length(total as u64);
        bar.set_position(done as u64);
    });
    bar.finish_and_clear();

    let misses = args.misses.map(|n| {
        let mut worst = report.outcomes.clone();
        QueryOutcome::worst_first(&mut worst);
        worst.truncate(n);
        worst
    });
    if as_json {
        let mut v = json_report(&report, &index);
        if let Some(m) = &misses {
            v["misses"] = m.iter().map(miss_json).collect::<Vec<Value>>().into();
        }
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        print_table(&report, &index, &args, docs.len(), &tools.origin);
        if let Some(m) = &misses {
            print_misses(m);
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Find and load the model, or say why not (the caller falls back to lexical). The flag wins,
/// then the config's setting, then `$SWITCHBOARD_MODEL_DIR`, then the default location.
pub(crate) fn load_model(flag: Option<&Path>, setting: Option<&Path>) -> Option<Embedder> {
    // The host's one lookup (setting, else the environment, else the default location), with
    // the flag taking the setting's place.
    let Some((dir, origin)) = switchboard_host::finder::model_dir(flag.or(setting)) else {
        eprintln!(
            "note: no model directory (no --model-dir, no SWITCHBOARD_MODEL_DIR, no user data dir); lexical only"
        );
        return None;
    };
    let source = if flag.is_some() {
        "--model-dir"
    } else {
        origin.as_str()
    };
    match Embedder::load(&dir) {
        Ok(e) => Some(e),
        Err(e) => {
            let hint = if flag.is_none() && origin == switchboard_host::finder::ModelOrigin::Default
            {
                " (`switchboard model install` puts all-MiniLM-L6-v2 there)"
            } else {
                ""
            };
            eprintln!("note: no usable embedding model ({source}): {e}; lexical only{hint}");
            None
        }
    }
}

pub(crate) fn progress_bar(what: &'static str) -> ProgressBar {
    // The default draw target is stderr, which indicatif hides when it is not a terminal.
    let bar = ProgressBar::new(0);
    if let Ok(style) = ProgressStyle::with_template("{msg} {bar:30} {pos}/{len} {eta}") {
        bar.set_style(style);
    }
    bar.set_message(what);
    bar
}

fn json_report(r: &Report, index: &Index) -> Value {
    json!({
        "queries": r.queries,
        "recall": {"1": r.recall[0], "3": r.recall[1], "5": r.recall[2], "10": r.recall[3]},
        "mrr": r.mrr,
        "ndcg10": r.ndcg10,
        "latency_ms": {"p50": r.latency_p50_ms, "p99": r.latency_p99_ms},
        "build_ms": r.build_ms,
        "tokens": {"full": r.tokens_full, "facade": r.tokens_facade, "estimate": r.token_estimate},
        "method": r.method.as_str(),
        "effective_method": r.effective_method.as_str(),
        "dense_status": index.dense_status().to_string(),
        "skipped_queries": r.skipped_queries,
        "dropped_labels": r.dropped_labels,
    })
}

fn miss_json(o: &QueryOutcome) -> Value {
    json!({
        "id": o.id,
        "query": o.query,
        "recall5": o.score.recall[2],
        "reciprocal_rank": o.score.reciprocal_rank,
        "gold": o.gold.iter().map(|(label, rank)| json!({"label": label, "rank": rank})).collect::<Vec<Value>>(),
        "top": o.top.iter().map(|(s, t)| format!("{s}/{t}")).collect::<Vec<String>>(),
    })
}

fn print_misses(misses: &[QueryOutcome]) {
    println!();
    println!(
        "worst {} queries (gold tool: rank; \"-\" below {}):",
        misses.len(),
        eval::DEPTH
    );
    for o in misses {
        let query = switchboard_core::clip(&o.query, 100);
        println!();
        println!("  {}  R@5 {:.2}  {query}", o.id, o.score.recall[2]);
        let gold: Vec<String> = o
            .gold
            .iter()
            .map(|(label, rank)| match rank {
                Some(r) => format!("{label}: {r}"),
                None => format!("{label}: -"),
            })
            .collect();
        println!("    gold: {}", gold.join(", "));
        let top: Vec<String> = o.top.iter().map(|(s, t)| format!("{s}/{t}")).collect();
        println!("    top:  {}", top.join(", "));
    }
}

fn print_table(r: &Report, index: &Index, args: &RetrievalArgs, tools: usize, origin: &str) {
    println!(
        "retrieval: {} queries from {} over {} tools of {origin}",
        r.queries,
        args.queries.display(),
        tools
    );
    if r.skipped_queries > 0 || r.dropped_labels > 0 {
        println!(
            "  (gold labels that name no tool in the catalog, dropped: {}; queries left with none, skipped: {})",
            r.dropped_labels, r.skipped_queries
        );
    }
    println!(
        "method: {} (ran as {}); {}",
        r.method.as_str(),
        r.effective_method.as_str(),
        index.dense_status()
    );
    println!();
    println!(
        "{:<9} {:>6} {:>6} {:>6} {:>6} {:>6} {:>8}",
        "method", "R@1", "R@3", "R@5", "R@10", "MRR", "nDCG@10"
    );
    println!(
        "{:<9} {:>6.3} {:>6.3} {:>6.3} {:>6.3} {:>6.3} {:>8.3}",
        r.effective_method.as_str(),
        r.recall[0],
        r.recall[1],
        r.recall[2],
        r.recall[3],
        r.mrr,
        r.ndcg10
    );
    println!();
    println!(
        "latency   p50 {:.2} ms, p99 {:.2} ms per query",
        r.latency_p50_ms, r.latency_p99_ms
    );
    println!("build     {:.0} ms", r.build_ms);
    let share = if r.tokens_full > 0.0 {
        100.0 * r.tokens_facade / r.tokens_full
    } else {
        0.0
    };
    println!(
        "tokens    full tools array {:.0}, search tool + top {} {:.0} ({share:.1}%)",
        r.tokens_full,
        eval::FACADE_TOP,
        r.tokens_facade
    );
    println!("          estimated as {}", r.token_estimate);
}
