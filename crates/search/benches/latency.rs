//! Query latency and index build time of tool search, stage by stage, printed as a table.
//!
//! ```sh
//! SWITCHBOARD_MODEL_DIR=.peers/models/all-MiniLM-L6-v2 taskset -c 0 \
//!   cargo bench -p switchboard-search --bench latency -- \
//!   --catalog a.json --catalog b.json --queries q.jsonl [--limit 500] [--build-threads 2] \
//!   [--compare] [--quality 300]
//! ```
//!
//! Stages, each timed separately over the same queries: tokenizing the query, embedding it
//! (tokenizer + encoder), the lexical ranking alone, and the whole hybrid `Index::search`
//! (embedding, BM25, the scan over every tool vector, fusion, top k). With `--build-threads N`
//! it also embeds the whole catalog without a cache on N threads and reports the time.
//!
//! The encoder's precision is `SWITCHBOARD_ENCODER` (int8 unless `f32`). `--compare` also loads
//! the other precision and times both encoders on every query back to back (f32 then int8 on
//! the same query, so both see the same machine load), and with `--build-threads` builds with
//! both. `--quality N` embeds N queries and N tool texts with both and prints the cosine
//! similarity of the f32 and int8 vectors (min, 1st percentile, mean). `--kernels` times the
//! dense layers alone (f32 and int8, MiniLM's four shapes, 1 to 48 rows and 400: queries and a
//! build batch), minimum and median of 200 calls, then the 24 int8 layers of a whole encoder
//! pass with weights of their own, warm in L3 and cold, with no model needed. `--encoder-only N`
//! skips the index and times the encoder alone on every query, best of N runs each.
//! `--ab query` builds two indexes, one whose encoder reads the whole query and one that leaves
//! its stop words out (`EncoderWords::NoStopWords`, the default), and times the two hybrid
//! searches on each query in turn, best of `--reps N` (3) runs each.
//! `--cache-dir DIR` keeps the tool vectors there between runs.

use std::path::PathBuf;
use std::time::Instant;

use switchboard_search::embed::Precision;
use switchboard_search::eval::parse_queries;
use switchboard_search::{
    BuildOptions, Doc, Embedder, EmbeddingCache, EncoderWords, Index, Method, Tuning,
};

struct Args {
    catalogs: Vec<PathBuf>,
    queries: Vec<PathBuf>,
    limit: usize,
    build_threads: Option<usize>,
    compare: bool,
    quality: usize,
    kernels: bool,
    encoder_only: usize,
    /// `--ab`: the other index's query words.
    ab: Option<EncoderWords>,
    reps: usize,
    cache_dir: Option<PathBuf>,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        catalogs: Vec::new(),
        queries: Vec::new(),
        limit: 1000,
        build_threads: None,
        compare: false,
        quality: 0,
        kernels: false,
        encoder_only: 0,
        ab: None,
        reps: 3,
        cache_dir: None,
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
            "--compare" => args.compare = true,
            "--kernels" => args.kernels = true,
            "--encoder-only" => {
                args.encoder_only = value()?
                    .parse()
                    .map_err(|e| format!("--encoder-only: {e}"))?
            }
            "--ab" => {
                args.ab = Some(match value()?.as_str() {
                    "query" => EncoderWords::NoStopWords,
                    other => return Err(format!("--ab {other}: expected query")),
                })
            }
            "--reps" => args.reps = value()?.parse().map_err(|e| format!("--reps: {e}"))?,
            "--cache-dir" => args.cache_dir = Some(value()?.into()),
            "--quality" => {
                args.quality = value()?.parse().map_err(|e| format!("--quality: {e}"))?
            }
            // cargo bench passes --bench to harness-less benches.
            "--bench" => {}
            other => return Err(format!("unknown argument {other}")),
        }
    }
    if !args.kernels && (args.catalogs.is_empty() || args.queries.is_empty()) {
        return Err(
            "usage: latency --catalog FILE... --queries FILE... [--limit N] [--build-threads N] \
             [--compare] [--quality N]"
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

/// Nanoseconds this thread has run on a CPU (`CLOCK_THREAD_CPUTIME_ID`, which the kernel brings
/// up to date when asked: microsecond steps here, where `/proc/thread-self/schedstat` moved in
/// 4 ms scheduler ticks), so a loaded machine's waiting is not counted; `None` elsewhere.
#[cfg(unix)]
fn cpu_ns() -> Option<u64> {
    let t = nix::time::clock_gettime(nix::time::ClockId::CLOCK_THREAD_CPUTIME_ID).ok()?;
    u64::try_from(t.tv_sec())
        .ok()?
        .checked_mul(1_000_000_000)?
        .checked_add(u64::try_from(t.tv_nsec()).ok()?)
}

#[cfg(not(unix))]
fn cpu_ns() -> Option<u64> {
    None
}

/// Wall and on-CPU milliseconds of `f` on each query, after a warm-up on the first few (pages
/// in the weights).
fn times(queries: &[String], mut f: impl FnMut(&str)) -> (Vec<f64>, Vec<f64>) {
    for q in queries.iter().take(20) {
        f(q);
    }
    queries.iter().map(|q| times_one(|| f(q))).unzip()
}

/// Wall and on-CPU milliseconds of one call.
fn times_one(f: impl FnOnce()) -> (f64, f64) {
    let c = cpu_ns();
    let t = Instant::now();
    f();
    let wall = t.elapsed().as_secs_f64() * 1000.0;
    let cpu = match (c, cpu_ns()) {
        (Some(a), Some(b)) => b.saturating_sub(a) as f64 / 1e6,
        _ => f64::NAN,
    };
    (wall, cpu)
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
    if args.kernels {
        kernels();
    }
    if args.catalogs.is_empty() || args.queries.is_empty() {
        return;
    }
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
    let dir = std::path::Path::new(&dir);
    let t = Instant::now();
    let embedder = Embedder::load(dir).unwrap_or_else(|e| panic!("loading the model: {e}"));
    let load_ms = t.elapsed().as_secs_f64() * 1000.0;
    // With --compare or --quality: the f32 and int8 encoders, in that order.
    let pair = (args.compare || args.quality > 0).then(|| {
        let load = |p| Embedder::load_with(dir, p).unwrap_or_else(|e| panic!("loading: {e}"));
        (load(Precision::F32), load(Precision::Int8))
    });
    println!(
        "encoder: {} ({}), load {load_ms:.0} ms",
        embedder.precision().name(),
        embedder.id()
    );

    let texts: Vec<String> = docs.iter().map(Doc::dense_text).collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    if let Some(threads) = args.build_threads {
        let tokens: usize = refs
            .iter()
            .map(|t| embedder.tokenize(t).map_or(0, |ids| ids.len()))
            .sum();
        let builders: Vec<&Embedder> = match &pair {
            Some((f, q)) if args.compare => vec![f, q],
            _ => vec![&embedder],
        };
        for e in builders {
            let t = Instant::now();
            let vectors = e
                .embed_threads(&refs, threads, &mut |_| {})
                .unwrap_or_else(|e| panic!("embedding: {e}"));
            let secs = t.elapsed().as_secs_f64();
            println!(
                "build ({}): {} tools ({tokens} tokens) embedded on {threads} thread(s) in {secs:.1} s ({:.0} tools/s)",
                e.precision().name(),
                vectors.len(),
                vectors.len() as f64 / secs
            );
        }
    }
    if let Some((f32e, int8e)) = &pair
        && args.quality > 0
    {
        for (what, set) in [("queries", &queries[..]), ("tool texts", &texts[..])] {
            let set: Vec<&str> = set.iter().take(args.quality).map(String::as_str).collect();
            let a = f32e
                .embed(&set, &mut |_| {})
                .unwrap_or_else(|e| panic!("{e}"));
            let b = int8e
                .embed(&set, &mut |_| {})
                .unwrap_or_else(|e| panic!("{e}"));
            let mut cos: Vec<f64> = a
                .iter()
                .zip(&b)
                .map(|(x, y)| f64::from(switchboard_search::embed::dot(x, y)))
                .collect();
            cos.sort_by(f64::total_cmp);
            let mean = cos.iter().sum::<f64>() / cos.len().max(1) as f64;
            println!(
                "cosine(f32, int8) over {} {what}: min {:.5}, p1 {:.5}, mean {:.5}",
                cos.len(),
                cos.first().copied().unwrap_or(f64::NAN),
                percentile(&cos, 0.01),
                mean
            );
        }
    }

    if args.encoder_only > 0 {
        encoder_only(&embedder, &queries, args.encoder_only);
        return;
    }
    // The index with every tool vector, as a search serves it (embedded once; cached only
    // with --cache-dir).
    let cache = args.cache_dir.as_ref().map(EmbeddingCache::in_dir);
    let build = |tuning: Tuning| {
        Index::build_with(
            &docs,
            BuildOptions {
                embedder: Some(&embedder),
                cache: cache.as_ref(),
                progress: None,
                tuning,
            },
        )
    };
    if let Some(query_words) = args.ab {
        let [all, fewer] = [EncoderWords::All, query_words].map(|query_words| {
            build(Tuning {
                query_words,
                ..Tuning::default()
            })
        });
        ab(
            &embedder,
            &queries,
            [&all, &fewer],
            query_words,
            args.reps.max(1),
        );
        return;
    }
    let index = build(Tuning::default());
    let (token_counts, sorted_tokens) = token_counts(&embedder, &queries);
    println!(
        "{} tools, {} queries (tokens per query: median {}, p99 {}), {}",
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
    println!(
        "| stage | p50 ms | p99 ms | mean ms | p50 on-CPU ms | p99 on-CPU ms | mean on-CPU ms |"
    );
    println!("|---|---|---|---|---|---|---|");
    let row = |name: &str, (wall, cpu): (Vec<f64>, Vec<f64>)| {
        let (p50, p99, mean) = summary(wall);
        let (c50, c99, cmean) = summary(cpu);
        println!("| {name} | {p50:.3} | {p99:.3} | {mean:.3} | {c50:.3} | {c99:.3} | {cmean:.3} |");
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
    // What a search embeds: the query without its stop words (`Tuning::query_words`).
    let words = Tuning::default().query_words;
    row(
        &format!("embed query as searched ({words:?})"),
        times(&queries, |q| {
            std::hint::black_box(embedder.embed_one(&words.apply(q)).ok());
        }),
    );
    if let Some((f32e, int8e)) = &pair
        && args.compare
    {
        // Both encoders on each query in turn, so a burst of load hits both.
        let (mut f, mut q) = ((Vec::new(), Vec::new()), (Vec::new(), Vec::new()));
        for e in [f32e, int8e] {
            for query in queries.iter().take(20) {
                std::hint::black_box(e.embed_one(query).ok());
            }
        }
        // Per query the fastest of three runs of each, alternating: the load-robust figure.
        let (mut fmin, mut qmin) = ((Vec::new(), Vec::new()), (Vec::new(), Vec::new()));
        for query in &queries {
            let mut best = [(f64::MAX, f64::MAX); 2];
            for rep in 0..3 {
                for (i, e) in [f32e, int8e].into_iter().enumerate() {
                    let (wall, cpu) = times_one(|| {
                        std::hint::black_box(e.embed_one(query).ok());
                    });
                    if rep == 0 {
                        let out = if i == 0 { &mut f } else { &mut q };
                        out.0.push(wall);
                        out.1.push(cpu);
                    }
                    if wall < best[i].0 {
                        best[i] = (wall, cpu);
                    }
                }
            }
            fmin.0.push(best[0].0);
            fmin.1.push(best[0].1);
            qmin.0.push(best[1].0);
            qmin.1.push(best[1].1);
        }
        row("embed query, f32 (interleaved)", f);
        row("embed query, int8 (interleaved)", q);
        row("embed query, f32 (interleaved, best of 3)", fmin);
        row("embed query, int8 (interleaved, best of 3)", qmin);
        // The queries of exactly the median length, best of 10 runs each: on a shared machine
        // the least disturbed run is the closest to an idle core.
        let median = sorted_tokens
            .get(sorted_tokens.len() / 2)
            .copied()
            .unwrap_or(0);
        let at_median: Vec<&String> = queries
            .iter()
            .zip(&token_counts)
            .filter(|&(_, &n)| n == median)
            .map(|(q, _)| q)
            .collect();
        let (mut fb, mut qb, mut hb) = (Vec::new(), Vec::new(), Vec::new());
        for query in &at_median {
            let mut best = [f64::MAX; 3];
            for _ in 0..10 {
                best[0] = best[0].min(times_one(|| drop(f32e.embed_one(query))).0);
                best[1] = best[1].min(times_one(|| drop(int8e.embed_one(query))).0);
                best[2] = best[2].min(
                    times_one(|| {
                        drop(std::hint::black_box(index.search(
                            query,
                            10,
                            Method::Hybrid,
                        )))
                    })
                    .0,
                );
            }
            fb.push(best[0]);
            qb.push(best[1]);
            hb.push(best[2]);
        }
        let n = at_median.len();
        let nan = |v: &Vec<f64>| vec![f64::NAN; v.len()];
        row(
            &format!("embed, f32, {median}-token queries (n={n}), best of 10"),
            (fb.clone(), nan(&fb)),
        );
        row(
            &format!("embed, int8, {median}-token queries (n={n}), best of 10"),
            (qb.clone(), nan(&qb)),
        );
        row(
            &format!(
                "hybrid ({}), {median}-token queries (n={n}), best of 10",
                embedder.precision().name()
            ),
            (hb.clone(), nan(&hb)),
        );
    }
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

/// The two indexes' hybrid searches on each query in turn, best of `reps` runs each: p50, p99
/// and mean over the queries, overall and by the query's token count under the first index.
fn ab(
    embedder: &Embedder,
    queries: &[String],
    indexes: [&Index; 2],
    words: EncoderWords,
    reps: usize,
) {
    let (tokens, sorted) = token_counts(embedder, queries);
    let stripped: Vec<String> = queries
        .iter()
        .map(|q| words.apply(q).into_owned())
        .collect();
    let (_, sorted_b) = token_counts(embedder, &stripped);
    let total = |v: &[usize]| v.iter().sum::<usize>();
    println!(
        "{} tools, {} queries; tokens per query A (all words): median {}, total {}; B ({words:?}): median {}, total {}",
        indexes[0].docs().len(),
        queries.len(),
        sorted.get(sorted.len() / 2).copied().unwrap_or(0),
        total(&sorted),
        sorted_b.get(sorted_b.len() / 2).copied().unwrap_or(0),
        total(&sorted_b),
    );
    for q in queries.iter().take(20) {
        for index in indexes {
            std::hint::black_box(index.search(q, 10, Method::Hybrid));
        }
    }
    // Per query: A's and B's hybrid search, then B's query embedding alone (so the part of B's
    // search outside the encoder shows), each the fastest of `reps` runs.
    let mut best = vec![[f64::MAX; 3]; queries.len()];
    for _ in 0..reps {
        for ((q, s), b) in queries.iter().zip(&stripped).zip(&mut best) {
            for (i, index) in indexes.into_iter().enumerate() {
                let (wall, _) = times_one(|| {
                    std::hint::black_box(index.search(q, 10, Method::Hybrid));
                });
                b[i] = b[i].min(wall);
            }
            let (wall, _) = times_one(|| {
                std::hint::black_box(embedder.embed_one(s).ok());
            });
            b[2] = b[2].min(wall);
        }
    }
    println!("| hybrid search, best of {reps} | p50 ms | p99 ms | mean ms |");
    println!("|---|---|---|---|");
    for (lo, hi) in [
        (0, usize::MAX),
        (0, 12),
        (13, 24),
        (25, 48),
        (49, usize::MAX),
    ] {
        for (i, name) in ["A all words", "B fewer words", "B's query embedding alone"]
            .into_iter()
            .enumerate()
        {
            let ms: Vec<f64> = best
                .iter()
                .zip(&tokens)
                .filter(|&(_, &n)| n >= lo && n <= hi)
                .map(|(b, _)| b[i])
                .collect();
            if ms.is_empty() {
                continue;
            }
            let n = ms.len();
            let (p50, p99, mean) = summary(ms);
            let range = match (lo, hi) {
                (0, usize::MAX) => "all".to_string(),
                (lo, usize::MAX) => format!("{lo}+ tokens"),
                (lo, hi) => format!("{lo}-{hi} tokens"),
            };
            println!("| {name}, {range} (n={n}) | {p50:.3} | {p99:.3} | {mean:.3} |");
        }
    }
}

/// Tokens per query (0 for a query that does not tokenize), in query order and sorted.
fn token_counts(embedder: &Embedder, queries: &[String]) -> (Vec<usize>, Vec<usize>) {
    let counts: Vec<usize> = queries
        .iter()
        .map(|q| embedder.tokenize(q).map_or(0, |ids| ids.len()))
        .collect();
    let mut sorted = counts.clone();
    sorted.sort_unstable();
    (counts, sorted)
}

/// The encoder alone on every query, best of `reps` runs each (no index is built): p50 and
/// mean over the queries, and the same over the queries of the median length.
fn encoder_only(embedder: &Embedder, queries: &[String], reps: usize) {
    let (tokens, sorted) = token_counts(embedder, queries);
    let median = sorted.get(sorted.len() / 2).copied().unwrap_or(0);
    for q in queries.iter().take(20) {
        std::hint::black_box(embedder.embed_one(q).ok());
    }
    let best: Vec<f64> = queries
        .iter()
        .map(|q| {
            (0..reps)
                .map(|_| times_one(|| drop(std::hint::black_box(embedder.embed_one(q)))).0)
                .fold(f64::MAX, f64::min)
        })
        .collect();
    let at_median: Vec<f64> = best
        .iter()
        .zip(&tokens)
        .filter(|&(_, &n)| n == median)
        .map(|(&m, _)| m)
        .collect();
    println!("| stage | p50 ms | p99 ms | mean ms |");
    println!("|---|---|---|---|");
    let (p50, p99, mean) = summary(best);
    println!(
        "| embed query ({}), best of {reps} | {p50:.3} | {p99:.3} | {mean:.3} |",
        embedder.precision().name()
    );
    let n = at_median.len();
    let (p50, p99, mean) = summary(at_median);
    println!(
        "| embed, {median}-token queries (n={n}), best of {reps} | {p50:.3} | {p99:.3} | {mean:.3} |"
    );
}

/// Time MiniLM's dense layers alone, f32 against int8, and print two tables: each layer shape
/// on its own (its weights stay in L2/L3 between calls), then the 24 int8 layers of a whole
/// encoder pass in model order with distinct weights (10.6 MB, as a query streams them), warm
/// (the previous pass left them in L3) and cold (a 64 MB buffer written in between).
fn kernels() {
    use switchboard_search::linear::Linear;
    use switchboard_search::qlinear::{QLinear, QScratch};
    let noise = |n: usize, seed: u32| -> Vec<f32> {
        (0..n)
            .map(|i| {
                let v = (i as u32).wrapping_mul(2_654_435_761).wrapping_add(seed) >> 8;
                v as f32 / (1u32 << 24) as f32 - 0.5
            })
            .collect()
    };
    const SHAPES: [(&str, usize, usize); 4] = [
        ("qkv", 384, 1152),
        ("attention out", 384, 384),
        ("ffn up", 384, 1536),
        ("ffn down", 1536, 384),
    ];
    println!(
        "| layer (in -> out) | rows | f32 min ms | f32 p50 ms | int8 min ms | int8 p50 ms | int8 GMAC/s at min |"
    );
    println!("|---|---|---|---|---|---|---|");
    for rows in [1, 8, 21, 27, 48, 400] {
        for (name, inp, out) in SHAPES {
            let w = noise(inp * out, 1);
            let b = noise(out, 2);
            let x = noise(rows * inp, 3);
            let (Some(f), Some(q)) = (
                Linear::new(&w, &b, inp, out),
                QLinear::new(&w, &b, inp, out),
            ) else {
                continue;
            };
            let mut y = Vec::new();
            let mut scratch = QScratch::default();
            let reps = if rows > 100 { 50 } else { 200 };
            let mut tf = Vec::new();
            let mut tq = Vec::new();
            for _ in 0..reps {
                tf.push(times_one(|| f.forward(&x, &mut y)).0);
                tq.push(times_one(|| q.forward_with(&x, &mut y, &mut scratch)).0);
            }
            tf.sort_by(f64::total_cmp);
            tq.sort_by(f64::total_cmp);
            let macs = (rows * inp * out) as f64;
            println!(
                "| {name} ({inp} -> {out}) | {rows} | {:.3} | {:.3} | {:.3} | {:.3} | {:.1} |",
                tf[0],
                percentile(&tf, 0.5),
                tq[0],
                percentile(&tq, 0.5),
                macs / tq[0] / 1e6
            );
        }
    }
    println!();
    // A whole encoder pass: 6 layers of the four shapes, each with weights of its own.
    let layers: Vec<QLinear> = (0..6u32)
        .flat_map(|l| {
            SHAPES
                .iter()
                .enumerate()
                .filter_map(move |(i, &(_, inp, out))| {
                    let seed = l * 4 + i as u32;
                    QLinear::new(&noise(inp * out, seed), &noise(out, 100 + seed), inp, out)
                })
        })
        .collect();
    let weight_bytes: usize = layers.iter().map(|q| q.inputs() * q.outputs()).sum();
    let mut flush = vec![0u8; 64 << 20];
    println!(
        "| 24 int8 layers in model order ({:.1} MB of weights), 80 passes | rows | min ms | p10 ms | p50 ms | GMAC/s at min |",
        weight_bytes as f64 / 1e6
    );
    println!("|---|---|---|---|---|---|");
    for rows in [1, 8, 13, 21, 27, 48] {
        let xs: Vec<Vec<f32>> = layers.iter().map(|q| noise(rows * q.inputs(), 7)).collect();
        let mut y = Vec::new();
        let mut scratch = QScratch::default();
        let mut pass = || {
            for (q, x) in layers.iter().zip(&xs) {
                q.forward_with(x, &mut y, &mut scratch);
            }
            std::hint::black_box(&y);
        };
        pass();
        for cold in [false, true] {
            let mut t = Vec::new();
            for i in 0..80u8 {
                if cold {
                    // Write every cache line of 64 MB: the weights leave L3.
                    for line in flush.chunks_mut(64) {
                        line[0] = line[0].wrapping_add(i);
                    }
                    std::hint::black_box(&flush);
                }
                t.push(times_one(&mut pass).0);
            }
            t.sort_by(f64::total_cmp);
            println!(
                "| {} | {rows} | {:.3} | {:.3} | {:.3} | {:.1} |",
                if cold {
                    "cold (64 MB written before each pass)"
                } else {
                    "warm (pass after pass)"
                },
                t[0],
                percentile(&t, 0.1),
                percentile(&t, 0.5),
                (rows * weight_bytes) as f64 / t[0] / 1e6
            );
        }
    }
    println!();
}
