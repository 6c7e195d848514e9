//! Query latency and index build time of tool search, stage by stage, printed as a table.
//!
//! ```sh
//! SWITCHBOARD_MODEL_DIR=.peers/models/all-MiniLM-L6-v2 taskset -c 0 \
//!   cargo bench -p switchboard-search --bench latency -- \
//!   --catalog a.json --catalog b.json --queries q.jsonl [--limit 500] [--build-threads 2]
//! ```
//!
//! Stages, each timed separately over the same queries: tokenizing the query, embedding it
//! (tokenizer + encoder), the lexical ranking alone, and the whole hybrid `Index::search`
//! (embedding, BM25, the scan over every tool vector, fusion, top k). With `--build-threads N`
//! it also embeds the whole catalog without a cache on N threads and reports the time.

use std::path::PathBuf;
use std::time::Instant;

use switchboard_search::eval::parse_queries;
use switchboard_search::{Doc, Embedder, Index, Method};

struct Args {
    catalogs: Vec<PathBuf>,
    queries: Vec<PathBuf>,
    limit: usize,
    build_threads: Option<usize>,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        catalogs: Vec::new(),
        queries: Vec::new(),
        limit: 1000,
        build_threads: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let mut value = || it.next().ok_or(format!("{a} needs a value"));
        match a.as_str() {
            "--catalog" => args.catalogs.push(value()?.into()),
            "--queries" => args.queries.push(value()?.into()),
            "--limit" => args.limit = value()?.parse().map_err(|e| format!("--limit: {e}"))?,
            "--build-threads" => {
                args.build_threads = Some(
                    value()?
                        .parse()
                        .map_err(|e| format!("--build-threads: {e}"))?,
                )
            }
            // cargo bench passes --bench to harness-less benches.
            "--bench" => {}
            other => return Err(format!("unknown argument {other}")),
        }
    }
    if args.catalogs.is_empty() || args.queries.is_empty() {
        return Err(
            "usage: latency --catalog FILE... --queries FILE... [--limit N] [--build-threads N]"
                .into(),
        );
    }
    Ok(args)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

/// Nanoseconds this thread has run on a CPU (Linux `/proc/thread-self/schedstat`), so a
/// loaded machine's waiting is not counted; `None` elsewhere.
fn cpu_ns() -> Option<u64> {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// Wall and on-CPU milliseconds of `f` on each query, after a warm-up on the first few (pages
/// in the weights).
fn times(queries: &[String], mut f: impl FnMut(&str)) -> (Vec<f64>, Vec<f64>) {
    for q in queries.iter().take(20) {
        f(q);
    }
    queries
        .iter()
        .map(|q| {
            let c = cpu_ns();
            let t = Instant::now();
            f(q);
            let wall = t.elapsed().as_secs_f64() * 1000.0;
            let cpu = match (c, cpu_ns()) {
                (Some(a), Some(b)) => b.saturating_sub(a) as f64 / 1e6,
                _ => f64::NAN,
            };
            (wall, cpu)
        })
        .unzip()
}

fn summary(mut ms: Vec<f64>) -> (f64, f64, f64) {
    ms.sort_by(f64::total_cmp);
    let mean = ms.iter().sum::<f64>() / ms.len().max(1) as f64;
    (percentile(&ms, 0.5), percentile(&ms, 0.99), mean)
}

fn main() {
    // `cargo test --all-targets` runs harness-less benches with no arguments (and without the
    // `--bench` that `cargo bench` passes): there is nothing to measure without a catalog.
    if std::env::args().len() == 1 {
        println!(
            "latency: nothing measured without --catalog and --queries (see the file's header)"
        );
        return;
    }
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let mut docs = Vec::new();
    for path in &args.catalogs {
        let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let (servers, _) =
            switchboard_core::catalog_file::parse(&path.display().to_string(), &stem, &bytes)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        docs.extend(Doc::from_servers(&servers));
    }
    let mut queries = Vec::new();
    for path in &args.queries {
        let text =
            std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let parsed = parse_queries(&path.display().to_string(), &text)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        queries.extend(parsed.into_iter().take(args.limit).map(|q| q.query));
    }
    let Some(dir) = std::env::var_os("SWITCHBOARD_MODEL_DIR") else {
        eprintln!("set SWITCHBOARD_MODEL_DIR to a sentence-transformers model directory");
        std::process::exit(2);
    };
    let t = Instant::now();
    let embedder = Embedder::load(std::path::Path::new(&dir))
        .unwrap_or_else(|e| panic!("loading the model: {e}"));
    let load_ms = t.elapsed().as_secs_f64() * 1000.0;

    if let Some(threads) = args.build_threads {
        let texts: Vec<String> = docs.iter().map(Doc::dense_text).collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let t = Instant::now();
        let vectors = embedder
            .embed_threads(&refs, threads, &mut |_| {})
            .unwrap_or_else(|e| panic!("embedding: {e}"));
        let secs = t.elapsed().as_secs_f64();
        let tokens: usize = refs
            .iter()
            .map(|t| embedder.tokenize(t).map_or(0, |ids| ids.len()))
            .sum();
        println!(
            "build: {} tools ({} tokens) embedded on {threads} thread(s) in {secs:.1} s ({:.0} tools/s)",
            vectors.len(),
            tokens,
            vectors.len() as f64 / secs
        );
    }

    // The index with every tool vector, as a search serves it (embedded once, no cache).
    let index = Index::build(&docs, Some(&embedder));
    let token_counts: Vec<usize> = queries
        .iter()
        .map(|q| embedder.tokenize(q).map_or(0, |ids| ids.len()))
        .collect();
    let mut sorted_tokens = token_counts.clone();
    sorted_tokens.sort_unstable();
    println!(
        "{} tools, {} queries (tokens per query: median {}, p99 {}), model load {load_ms:.0} ms, {}",
        docs.len(),
        queries.len(),
        sorted_tokens
            .get(sorted_tokens.len() / 2)
            .copied()
            .unwrap_or(0),
        sorted_tokens
            .get(sorted_tokens.len().saturating_sub(1) * 99 / 100)
            .copied()
            .unwrap_or(0),
        index.dense_status()
    );
    println!();
    println!("| stage | p50 ms | p99 ms | mean ms | p50 on-CPU ms | p99 on-CPU ms |");
    println!("|---|---|---|---|---|---|");
    let row = |name: &str, (wall, cpu): (Vec<f64>, Vec<f64>)| {
        let (p50, p99, mean) = summary(wall);
        let (c50, c99, _) = summary(cpu);
        println!("| {name} | {p50:.3} | {p99:.3} | {mean:.3} | {c50:.3} | {c99:.3} |");
    };
    row(
        "tokenize query",
        times(&queries, |q| {
            std::hint::black_box(embedder.tokenize(q).ok());
        }),
    );
    row(
        "embed query (tokenize + encoder)",
        times(&queries, |q| {
            std::hint::black_box(embedder.embed_one(q).ok());
        }),
    );
    row(
        "lexical search (BM25F, top 10)",
        times(&queries, |q| {
            std::hint::black_box(index.search(q, 10, Method::Lexical));
        }),
    );
    let hybrid = times(&queries, |q| {
        std::hint::black_box(index.search(q, 10, Method::Hybrid));
    });
    row("hybrid search (all of it, top 10)", hybrid.clone());
    // The same hybrid timings by query length in tokens (special tokens included).
    for (lo, hi) in [(0, 12), (13, 24), (25, 48), (49, usize::MAX)] {
        let pick = |v: &[f64]| -> Vec<f64> {
            v.iter()
                .zip(&token_counts)
                .filter(|&(_, &n)| n >= lo && n <= hi)
                .map(|(&m, _)| m)
                .collect()
        };
        let ms = (pick(&hybrid.0), pick(&hybrid.1));
        if ms.0.is_empty() {
            continue;
        }
        let label = if hi == usize::MAX {
            format!("hybrid, queries of {lo}+ tokens (n={})", ms.0.len())
        } else {
            format!("hybrid, queries of {lo}-{hi} tokens (n={})", ms.0.len())
        };
        row(&label, ms);
    }
}
