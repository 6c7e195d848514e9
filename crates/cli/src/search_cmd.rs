//! `switchboard search`: the tools one query finds, ranked as a model's `search_tools` call ranks
//! them (`serve --expose facade`, `run --tools search`), with where the lexical and the dense
//! ranker alone would put each. Also where `search` and `eval retrieval` get their tools.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use serde_json::{Value, json};
use switchboard_core::names::NameMap;
use switchboard_core::{Dialect, ServerCatalog, catalog_file};
use switchboard_search::{BuildOptions, DenseStatus, Doc, EmbeddingCache, Index, Method};

use crate::eval::{MethodArg, load_model, progress_bar};
use crate::output::{color_on_stdout, paint, print_json, styled_table};
use crate::{Global, source};

/// Arguments of `switchboard search`.
#[derive(clap::Args, Debug)]
pub struct SearchArgs {
    /// What you want to do, in plain words (several arguments are joined with spaces).
    #[arg(required = true, value_name = "QUERY")]
    query: Vec<String>,
    /// How many tools to show.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u16).range(1..=200))]
    limit: u16,
    /// Ranking method (hybrid is what search_tools uses).
    #[arg(long, value_enum, default_value_t = MethodArg::Hybrid)]
    method: MethodArg,
    /// The provider whose naming rules give the public tool names shown.
    #[arg(long, default_value = "anthropic", value_parser = parse_dialect)]
    provider: Dialect,
    /// Sentence-transformers model directory (model.safetensors, tokenizer.json, config.json).
    /// Default: the config's search_model, else $SWITCHBOARD_MODEL_DIR, else <user data
    /// dir>/switchboard/models/all-MiniLM-L6-v2.
    #[arg(long)]
    model_dir: Option<PathBuf>,
    /// Where to cache catalog embeddings. Default: the user cache dir.
    #[arg(long)]
    cache_dir: Option<PathBuf>,
}

fn parse_dialect(s: &str) -> Result<Dialect, String> {
    s.parse()
}

/// The tools a search ranks: `--catalog` files as given, else the configured servers' tools
/// with each server's allow/deny filter applied (what `serve` and the loop offer a model).
pub struct SearchTools {
    /// The servers, in order, each with the tools a model may reach.
    pub servers: Vec<ServerCatalog>,
    /// The stem of each `--catalog` file (empty for live servers).
    pub stems: BTreeSet<String>,
    /// Server aliases from the config, for public names.
    pub aliases: BTreeMap<String, String>,
    /// Public names the config chose for tools.
    pub chosen_names: BTreeMap<(String, String), String>,
    /// The config's `search_model`, if any.
    pub model_setting: Option<PathBuf>,
    /// Where the tools came from, for messages.
    pub origin: String,
}

impl SearchTools {
    /// Read the catalogs, or connect to the config's servers (the embedded demo without one).
    pub async fn load(global: &Global) -> anyhow::Result<SearchTools> {
        if !global.catalog.is_empty() {
            let mut servers = Vec::new();
            let mut stems = BTreeSet::new();
            for path in &global.catalog {
                let stem = file_stem(path);
                let bytes = std::fs::read(path)
                    .with_context(|| format!("reading catalog {}", path.display()))?;
                let (found, skipped) =
                    catalog_file::parse(&path.display().to_string(), &stem, &bytes)
                        .with_context(|| format!("parsing catalog {}", path.display()))?;
                for issue in skipped {
                    tracing::warn!("skipped {issue}");
                }
                servers.extend(found);
                stems.insert(stem);
            }
            let origin = format!("{} catalog file(s)", global.catalog.len());
            return Ok(SearchTools {
                servers,
                stems,
                aliases: BTreeMap::new(),
                chosen_names: BTreeMap::new(),
                model_setting: None,
                origin,
            });
        }
        let config = source::load_config(global)?;
        let catalog = source::live_catalog(&config, "is not searched").await;
        for d in &config.disabled {
            tracing::warn!("server {:?} is disabled: {}", d.name, d.reason);
        }
        let aliases: BTreeMap<String, String> = config
            .servers
            .iter()
            .filter_map(|s| Some((s.name().to_string(), s.alias.clone()?)))
            .collect();
        let servers = source::offered(&config, &catalog);
        let origin = format!("{} ready server(s)", servers.len());
        Ok(SearchTools {
            servers,
            stems: BTreeSet::new(),
            aliases,
            chosen_names: switchboard_host::config::chosen_names(&config.servers),
            model_setting: config.settings.search_model,
            origin,
        })
    }

    /// The search documents, one per tool, servers and tools in order.
    pub fn docs(&self) -> Vec<Doc> {
        Doc::from_servers(&self.servers)
    }

    /// Build the index the way `search_tools` does (default tuning), with a progress bar
    /// while tools are embedded. Lexical when `method` is, or when no model loads (a note on
    /// stderr says so). `cache`: `None` keeps no embeddings; `Some(None)` the user cache dir.
    pub fn index(
        &self,
        docs: &[Doc],
        method: Method,
        model_dir: Option<&Path>,
        cache: Option<Option<&Path>>,
        tuning: switchboard_search::Tuning,
    ) -> Index {
        let embedder = if method == Method::Lexical {
            None
        } else {
            load_model(model_dir, self.model_setting.as_deref())
        };
        let cache = cache.and_then(|dir| {
            dir.map(Path::to_path_buf)
                .or_else(EmbeddingCache::default_dir)
                .map(EmbeddingCache::in_dir)
        });
        // No bar when nothing will be embedded: it would flash "0/0".
        let bar = if embedder.is_some() {
            progress_bar("embedding tools")
        } else {
            indicatif::ProgressBar::hidden()
        };
        let mut progress = |done: usize, total: usize| {
            bar.set_length(total as u64);
            bar.set_position(done as u64);
        };
        let index = Index::build_with(
            docs,
            BuildOptions {
                embedder: embedder.as_ref(),
                cache: cache.as_ref(),
                progress: Some(&mut progress),
                tuning,
            },
        );
        bar.finish_and_clear();
        for issue in index.issues() {
            tracing::warn!("{issue}");
        }
        // Without a model `load_model` has said why; with one, say why it went unused.
        if embedder.is_some()
            && method != Method::Lexical
            && index.effective_method(method) == Method::Lexical
        {
            eprintln!("note: {}; ranking lexically", index.dense_status());
        }
        index
    }
}

/// The file name without its extension: what a query's `"catalog"` names.
pub fn file_stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

/// One row of the answer.
struct Row {
    rank: usize,
    public: String,
    server: String,
    tool: String,
    score: f32,
    lexical: Option<usize>,
    dense: Option<usize>,
    description: String,
}

/// Run the command: exit 0 with matches, 1 with none, 2 on a usage or config error.
pub async fn run(global: &Global, args: SearchArgs) -> anyhow::Result<ExitCode> {
    let query = args.query.join(" ");
    if query.trim().is_empty() {
        anyhow::bail!(
            "the query is empty: say what you want to do, e.g. `switchboard search \"send an email\"`"
        );
    }
    let method: Method = args.method.into();
    let tools = SearchTools::load(global).await?;
    let docs = tools.docs();
    if docs.is_empty() {
        anyhow::bail!("no tools to search in {}", tools.origin);
    }
    let index = tools.index(
        &docs,
        method,
        args.model_dir.as_deref(),
        Some(args.cache_dir.as_deref()),
        switchboard_search::Tuning::default(),
    );
    let mut names = NameMap::build(
        args.provider,
        docs.iter().map(|d| (d.server.as_str(), d.tool.as_str())),
        &tools.aliases,
    );
    names.with_chosen(args.provider, &tools.chosen_names);
    let effective = index.effective_method(method);
    let hits = index.search(&query, usize::from(args.limit), method);
    // Where each ranker alone puts every tool (1-based; a lexical score of 0 is no match).
    let lexical = ranks(&index.scores(&query, Method::Lexical), true);
    let dense =
        (effective != Method::Lexical).then(|| ranks(&index.scores(&query, Method::Dense), false));
    let rows: Vec<Row> = hits
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let at = docs
                .iter()
                .position(|d| d.server == h.server && d.tool == h.tool);
            Row {
                rank: i + 1,
                public: names
                    .public(&h.server, &h.tool)
                    .unwrap_or(&h.tool)
                    .to_string(),
                server: h.server.clone(),
                tool: h.tool.clone(),
                score: h.score,
                lexical: at.and_then(|i| lexical[i]),
                dense: at.and_then(|i| dense.as_ref().and_then(|d| d[i])),
                description: at.map(|i| docs[i].description.clone()).unwrap_or_default(),
            }
        })
        .collect();

    if global.json {
        print_json(&json!({
            "query": query,
            "method": method.as_str(),
            "effective_method": effective.as_str(),
            "dense_status": index.dense_status().to_string(),
            "tools": docs.len(),
            "hits": rows.iter().map(|r| json!({
                "rank": r.rank,
                "name": r.public,
                "server": r.server,
                "tool": r.tool,
                "score": r.score,
                "lexical_rank": r.lexical,
                "dense_rank": r.dense,
                "description": r.description,
            })).collect::<Vec<Value>>(),
        }));
    } else {
        let how = match (method, index.dense_status()) {
            (Method::Lexical, _) => "lexical, as asked".to_string(),
            (_, DenseStatus::NoModel) => "lexically (no embedding model)".to_string(),
            (_, DenseStatus::Failed(why)) => format!("lexically (embedding failed: {why})"),
            (_, ready) => format!("{}: {ready}", effective.as_str()),
        };
        println!(
            "{} tool(s) of {} from {}, ranked {how}",
            rows.len(),
            docs.len(),
            tools.origin,
        );
        if rows.is_empty() {
            println!("no tool matches {query:?}");
        } else {
            println!();
            let table: Vec<Vec<String>> = rows
                .iter()
                .map(|r| {
                    vec![
                        r.rank.to_string(),
                        r.public.clone(),
                        format!("{:.3}", r.score),
                        rank_cell(r.lexical),
                        if dense.is_some() {
                            rank_cell(r.dense)
                        } else {
                            "n/a".into()
                        },
                        first_line(&r.description, 72),
                    ]
                })
                .collect();
            let on = color_on_stdout();
            print!(
                "{}",
                styled_table(
                    &["RANK", "TOOL", "SCORE", "LEXICAL", "DENSE", "DESCRIPTION"],
                    &table,
                    &|_, col, cell| if col == 1 {
                        paint(cell, "1", on)
                    } else {
                        cell.to_string()
                    },
                )
            );
            println!();
            println!(
                "LEXICAL and DENSE: where each ranker alone puts the tool (- : no query word matches)"
            );
        }
    }
    Ok(if rows.is_empty() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The 1-based rank of every score, higher first, ties to the lower index (as the index's own
/// top-k orders them). `matches_only`: a score of 0 or less ranks nowhere.
fn ranks(scores: &[f32], matches_only: bool) -> Vec<Option<usize>> {
    let mut order: Vec<usize> = (0..scores.len()).collect();
    order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
    let mut out = vec![None; scores.len()];
    for (rank, i) in order.into_iter().enumerate() {
        if !(matches_only && scores[i] <= 0.0) {
            out[i] = Some(rank + 1);
        }
    }
    out
}

fn rank_cell(rank: Option<usize>) -> String {
    rank.map_or_else(|| "-".into(), |r| r.to_string())
}

/// The first line of a text, cut to `max` characters with an ellipsis.
fn first_line(text: &str, max: usize) -> String {
    let line = text
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    if line.chars().count() <= max {
        return line.to_string();
    }
    let cut: String = line.chars().take(max.saturating_sub(1)).collect();
    format!("{}…", cut.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_order_by_score_then_position_and_skip_non_matches() {
        assert_eq!(
            ranks(&[0.5, 2.0, 0.5, 0.0], true),
            [Some(2), Some(1), Some(3), None]
        );
        assert_eq!(
            ranks(&[-1.0, 0.0, f32::NAN], false),
            [Some(3), Some(2), Some(1)]
        );
        assert!(ranks(&[], true).is_empty());
    }

    #[test]
    fn descriptions_are_cut_to_their_first_line() {
        assert_eq!(first_line("\n  Send mail.\nMore.", 72), "Send mail.");
        assert_eq!(first_line("abcdef", 4), "abc…");
        assert_eq!(first_line("", 4), "");
    }
}
