//! Tuning harness for hybrid retrieval: embeds the texts the selected settings need (tool texts,
//! server texts, queries and their sentences) once into an embedding cache, then scores many
//! fusion settings over the three eval sets in seconds, printing R@5 / R@10 / MRR per set. Not a
//! test and not the reported numbers (those come from `switchboard eval retrieval`); a way to
//! compare settings quickly. The scoring here re-implements the index's pipeline from the
//! crate's public parts, with knobs the index does not have; `Cfg::default()` is the first
//! version's tuning.
//!
//! ```sh
//! cargo run -p switchboard-search --example tune -- --data ../shared/data \
//!   --model-dir .peers/models/all-MiniLM-L6-v2 --cache-dir /tmp/tune-cache [--single-limit 2000]
//! ```
//!
//! `--latency N` instead times `Index::search` (hybrid, top 10) with the name coverage off and
//! on over the 1,399-tool catalog (github + docker-registry + livemcpbench) and the latency
//! bench's 845 queries, alternating, best of N per query, and prints the name tokens' memory.
//!
//! `--index-ab 0,0.2` scores the index itself (`Index::search`, hybrid, top 100) with each
//! name-coverage weight on the three sets, even / odd lines apart, from one cache.
//!
//! `TUNE_ONLY="default (z,srv doc"` runs the rows whose names contain one of the parts, and
//! embeds only what those rows read (a first run of today's default embeds ~18,500 texts
//! instead of the ~70,000 every row needs); `TUNE_DIAG=livemcpbench` prints each query's gold
//! ranks and top 8.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use switchboard_core::hash::ContentHash;
use switchboard_search::bm25::{Bm25, Bm25Params};
use switchboard_search::eval::{matches, parse_queries, score_ranking};
use switchboard_search::fusion;
use switchboard_search::index::{clauses, sentences};
use switchboard_search::late::is_function_word;
use switchboard_search::words::Analyzer;
use switchboard_search::{Doc, Embedder, EmbeddingCache};

struct Set {
    name: &'static str,
    docs: Vec<Doc>,
    server_of: Vec<u32>,
    servers: usize,
    /// Query text, gold labels, and the query's line number in its file (for the even / odd
    /// split: parameters are tuned on the even lines and confirmed on the odd ones).
    queries: Vec<(String, Vec<String>, usize)>,
    /// One lexical document per server (name, description, its tools' names), in server id
    /// order, for servers as retrievable units.
    server_docs: Vec<Doc>,
}

fn load_docs(path: &Path) -> Vec<Doc> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (servers, _) =
        switchboard_core::catalog_file::parse(&path.display().to_string(), &stem, &bytes)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    Doc::from_servers(&servers)
}

fn load_set(name: &'static str, data: &Path, catalog: &str, limit: usize) -> Set {
    let docs = load_docs(&data.join("catalogs").join(format!("{catalog}.json")));
    let path = data.join("eval").join(format!("{name}.jsonl"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{e}"));
    let queries = parse_queries(name, &text).unwrap_or_else(|e| panic!("{e}"));
    let queries: Vec<(String, Vec<String>, usize)> = queries
        .into_iter()
        .take(limit)
        .enumerate()
        .filter_map(|(line, q)| {
            let gold: Vec<String> = q
                .gold
                .into_iter()
                .filter(|g| docs.iter().any(|d| matches(g, &d.server, &d.tool)))
                .collect();
            (!gold.is_empty()).then_some((q.query, gold, line))
        })
        .collect();
    let mut ids: HashMap<String, u32> = HashMap::new();
    let server_of: Vec<u32> = docs
        .iter()
        .map(|d| {
            let next = ids.len() as u32;
            *ids.entry(d.server.clone()).or_insert(next)
        })
        .collect();
    let server_docs = server_docs(&docs, &server_of, ids.len());
    Set {
        name,
        server_docs,
        servers: ids.len(),
        server_of,
        docs,
        queries,
    }
}

/// Vectors of texts, embedded once and kept in the cache.
struct Vecs {
    embedder: Embedder,
    cache: EmbeddingCache,
    known: switchboard_search::cache::Vectors,
    dirty: bool,
    /// Token-level encoder output of the texts the late-interaction rows read (tool texts and
    /// queries as the encoder reads them), kept in a file of their own next to the cache.
    toks: HashMap<[u8; 32], Tok>,
    /// Late-interaction features of each query's top 100, computed once per set, query line
    /// and first-stage setting (`late_key`), shared by the rows that differ only in weights.
    late_memo: std::cell::RefCell<HashMap<(String, usize, String), LateFeats>>,
}

impl Vecs {
    fn key(t: &str) -> [u8; 32] {
        *ContentHash::of_bytes(t.as_bytes()).as_bytes()
    }
    /// The texts whose key `have` lacks, each once.
    fn missing(texts: &[String], have: impl Fn(&[u8; 32]) -> bool) -> Vec<&str> {
        let mut seen = std::collections::HashSet::new();
        texts
            .iter()
            .filter(|t| {
                let k = Self::key(t);
                !have(&k) && seen.insert(k)
            })
            .map(String::as_str)
            .collect()
    }
    fn ensure(&mut self, texts: &[String]) {
        let missing = Self::missing(texts, |k| self.known.contains_key(k));
        if missing.is_empty() {
            return;
        }
        eprintln!("embedding {} texts", missing.len());
        // In chunks, saved after each, so an interrupted first run keeps what it did.
        for (n, chunk) in missing.chunks(4000).enumerate() {
            let v = self
                .embedder
                .embed_threads(chunk, 2, &mut |_| {})
                .unwrap_or_else(|e| panic!("{e}"));
            for (t, v) in chunk.iter().zip(v) {
                self.known.insert(Self::key(t), v);
            }
            self.dirty = true;
            self.save();
            eprintln!("  {} of {}", (n * 4000 + chunk.len()), missing.len());
        }
    }
    fn save(&mut self) {
        if self.dirty {
            let dim = self.embedder.dim();
            self.cache
                .store(self.embedder.id(), dim, &self.known)
                .unwrap_or_else(|e| panic!("{e}"));
            self.dirty = false;
        }
    }
    fn get(&self, t: &str) -> &[f32] {
        &self.known[&Self::key(t)]
    }
    fn tok_file(&self) -> PathBuf {
        self.cache
            .dir()
            .join(format!("{}.tokens", self.embedder.id()))
    }
    /// Token vectors of `texts` (read from the token file, the missing ones embedded and the
    /// file rewritten).
    fn ensure_tokens(&mut self, texts: &[String]) {
        if self.toks.is_empty() {
            self.toks = std::fs::read(self.tok_file())
                .ok()
                .and_then(|b| decode_toks(&b, self.embedder.dim()))
                .unwrap_or_default();
        }
        let missing = Self::missing(texts, |k| self.toks.contains_key(k));
        if missing.is_empty() {
            return;
        }
        eprintln!("embedding {} texts at the token level", missing.len());
        for (n, chunk) in missing.chunks(2000).enumerate() {
            let out = self
                .embedder
                .embed_tokens_threads(chunk, 2, &mut |_| {})
                .unwrap_or_else(|e| panic!("{e}"));
            for (t, tv) in chunk.iter().zip(out) {
                self.toks.insert(Self::key(t), Tok::quantized(&tv));
            }
            let path = self.tok_file();
            let tmp = path.with_extension("tmp");
            std::fs::write(&tmp, encode_toks(self.embedder.dim(), &self.toks))
                .and_then(|()| std::fs::rename(&tmp, &path))
                .unwrap_or_else(|e| panic!("{e}"));
            eprintln!("  {} of {}", n * 2000 + chunk.len(), missing.len());
        }
    }
    fn tok(&self, t: &str) -> &Tok {
        &self.toks[&Self::key(t)]
    }
}

fn main() {
    let mut data = PathBuf::from("../shared/data");
    let mut model = PathBuf::from(".peers/models/all-MiniLM-L6-v2");
    let mut cache_dir = PathBuf::from("/tmp/tune-cache");
    let mut single_limit = usize::MAX;
    let mut latency: Option<usize> = None;
    let mut index_ab: Option<String> = None;
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let v = it.next().unwrap_or_default();
        match a.as_str() {
            "--data" => data = v.into(),
            "--model-dir" => model = v.into(),
            "--cache-dir" => cache_dir = v.into(),
            "--single-limit" => single_limit = v.parse().unwrap_or(usize::MAX),
            "--latency" => latency = v.parse().ok(),
            "--index-ab" => index_ab = Some(v),
            other => panic!("unknown argument {other}"),
        }
    }
    if let Some(reps) = latency {
        return measure_latency(&data, &model, &cache_dir, reps);
    }
    if let Some(weights) = index_ab {
        return index_ab_run(&data, &model, &cache_dir, &weights, single_limit);
    }
    let sets = [
        load_set("livemcpbench", &data, "livemcpbench", usize::MAX),
        load_set("metatool-multi", &data, "metatool", usize::MAX),
        load_set("metatool-single", &data, "metatool", single_limit),
    ];
    let embedder = Embedder::load(&model).unwrap_or_else(|e| panic!("{e}"));
    let cache = EmbeddingCache::in_dir(&cache_dir);
    let known = cache.load(embedder.id(), embedder.dim());
    let mut vecs = Vecs {
        embedder,
        cache,
        known,
        dirty: false,
        toks: HashMap::new(),
        late_memo: Default::default(),
    };
    // The rows to run (TUNE_ONLY: comma-separated parts of the setting names), and what they
    // need embedded: only those texts, so a first run with a few rows embeds a fraction of
    // what all rows need.
    let only: Option<String> = std::env::var("TUNE_ONLY").ok();
    let configs: Vec<(String, Cfg)> = configs()
        .into_iter()
        .map(|(name, mut c)| {
            c.name = name.clone();
            (name, c)
        })
        .filter(|(name, _)| {
            only.as_ref()
                .is_none_or(|o| o.split(',').any(|part| name.contains(part)))
        })
        .collect();
    let mut texts = Vec::new();
    for s in &sets {
        for (_, cfg) in &configs {
            texts.extend(needed(s, cfg));
        }
    }
    texts.sort();
    texts.dedup();
    vecs.ensure(&texts);
    if configs
        .iter()
        .any(|(_, c)| c.late.is_some() || c.chunk.is_some())
    {
        let mut texts = Vec::new();
        for s in &sets {
            texts.extend(s.docs.iter().map(Doc::dense_text));
            texts.extend(
                s.queries
                    .iter()
                    .map(|(q, _, _)| Strip::Lucene(false).apply(q)),
            );
        }
        texts.sort();
        texts.dedup();
        vecs.ensure_tokens(&texts);
    }
    println!(
        "sets: {}",
        sets.iter()
            .map(|s| format!("{} ({} q, {} tools)", s.name, s.queries.len(), s.docs.len()))
            .collect::<Vec<_>>()
            .join(", ")
    );
    println!("per set: R@5 R@10 MRR (R@5 even lines / odd lines), then the mean R@5 (even / odd)");
    for (name, cfg) in configs {
        let mut row = format!("{name:<44}");
        let (mut sum, mut sum_even, mut sum_odd) = (0.0, 0.0, 0.0);
        for s in &sets {
            let r = run(s, &vecs, &cfg);
            let [r5, r10, mrr] = r.all;
            sum += r5;
            sum_even += r.even[0];
            sum_odd += r.odd[0];
            row.push_str(&format!(
                " | {r5:.3} {r10:.3} {mrr:.3} ({:.3}/{:.3})",
                r.even[0], r.odd[0]
            ));
        }
        row.push_str(&format!(
            " | {:.3} ({:.3}/{:.3})",
            sum / 3.0,
            sum_even / 3.0,
            sum_odd / 3.0
        ));
        println!("{row}");
    }
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Variant {
    Current,
    NameDesc,
    ServerCtx,
    /// The tool's name as words only ("get weather forecast").
    NameWords,
    /// Server and tool name as words ("maps: get weather forecast").
    ServerNameWords,
    /// Name as words and the description's first sentence.
    NameFirstSentence,
}

fn words(s: &str) -> String {
    switchboard_search::words::split_words(s).join(" ")
}

fn doc_text(d: &Doc, v: Variant) -> String {
    match v {
        Variant::Current => d.dense_text(),
        Variant::NameDesc => {
            let mut t = words(&d.tool);
            if !d.description.is_empty() {
                t.push_str(": ");
                t.push_str(&d.description);
            }
            t
        }
        Variant::NameWords => d.name_text(),
        Variant::NameFirstSentence => {
            let first = d.description.split(". ").next().unwrap_or_default();
            format!("{}: {first}", d.name_text())
        }
        Variant::ServerNameWords => format!("{}: {}", words(&d.server), words(&d.tool)),
        Variant::ServerCtx => {
            let mut t = words(&d.server);
            if !d.server_description.is_empty() {
                t.push_str(": ");
                t.extend(d.server_description.chars().take(300));
            }
            t.push_str(". ");
            t.push_str(&words(&d.tool));
            t
        }
    }
}

/// Stop words left out of the encoder's texts (query, tool texts or both): fewer tokens.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Strip {
    Off,
    /// The lexical ranker's stop words (`words::is_stop_word`); `true`: punctuation too.
    Lexical(bool),
    /// Lucene's classic English stop set (33 words); `true`: punctuation too.
    Lucene(bool),
    /// Lucene's set, personal pronouns, auxiliary and modal verbs, "please"
    /// ([`is_function_word`]).
    Function,
}

const STRIPS: &[Strip] = &[
    Strip::Lexical(false),
    Strip::Lexical(true),
    Strip::Lucene(false),
    Strip::Lucene(true),
    Strip::Function,
];

impl Strip {
    fn apply(self, text: &str) -> String {
        use switchboard_search::words::{is_lucene_stop_word, is_stop_word, strip_for_encoder};
        match self {
            Strip::Off => text.to_string(),
            Strip::Lexical(p) => strip_for_encoder(text, is_stop_word, p),
            Strip::Lucene(p) => strip_for_encoder(text, is_lucene_stop_word, p),
            Strip::Function => strip_for_encoder(text, is_function_word, false),
        }
    }
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Norm {
    /// Z-scores capped at this many standard deviations.
    ZCap(f32),
    /// Z-scores over the documents with a nonzero score; the rest get the lowest of those.
    ZNonZero,
    Max,
    MinMax,
    Z,
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Agg {
    Max,
    /// Mean of the best n tools of the server (fewer when it has fewer).
    TopMean(usize),
}

#[derive(Clone)]
struct Cfg {
    dense_weight: f32,
    server_weight: f32,
    bm25: Bm25Params,
    lex_norm: Norm,
    dense_norm: Norm,
    rrf: Option<f32>,
    agg: Agg,
    /// Sentence vectors: weight of the best sentence's cosine added to the whole query's.
    sent: f32,
    /// Doc vectors pooled by max.
    variants: Vec<Variant>,
    /// Dense pseudo relevance feedback: (top n, weight of their mean vector).
    prf: Option<(usize, f32)>,
    /// Drop request boilerplate ("can you help me find ...") from the query's BM25 terms.
    query_stop: bool,
    /// Paths in the query become "file NAME" (for both rankers).
    paths: bool,
    /// MMR re-ranking of the top 30: lambda of the redundancy penalty.
    mmr: f32,
    /// Lexical pseudo relevance feedback: (top n of the fused ranking, weight of the BM25
    /// scores of their name and description words, added before normalization).
    lex_prf: Option<(usize, f32)>,
    /// Weight of a name-match feature (z-scored): the idf-weighted share of the tool name's
    /// words that the query contains.
    name_lex: f32,
    /// Weight of the query's cosine with the tool name as words (z-scored).
    name_dense: f32,
    /// Which text the name vector is of.
    name_variant: Variant,
    /// Per-query blend weights from each ranker's confidence.
    adapt: Adapt,
    /// When dense pseudo-relevance feedback applies.
    prf_gate: PrfGate,
    /// How the feedback scores join the query's.
    prf_mode: PrfMode,
    /// Stop words left out of the query's text for the encoder.
    query_strip: Strip,
    /// Stop words left out of the tool texts (full text and name) for the encoder.
    doc_strip: Strip,
    /// Servers as retrievable units: the query against one document per server.
    srv: Option<Srv>,
    /// Sibling completion: a server with several tools in the top lifts its other tools.
    sibling: Option<Sibling>,
    /// Per-sentence coverage of the top 5.
    cover: Option<Cover>,
    /// Input providers: siblings that produce what the top tools take.
    provider: Option<Provider>,
    /// At most `.0` tools of one server in the top 5 while the top `.1` hold another server's.
    cap: Option<(usize, usize)>,
    /// Hubness: each tool's cosine (full text and name) less this times its cosine with the
    /// catalog's mean vector of the same kind (a tool like every other says less).
    hub_mean: f32,
    /// Hubness, CSLS-style: less this times the tool's mean cosine with its 10 nearest tools.
    hub_knn: f32,
    /// Lexical sentence pooling: BM25 z of the whole query plus this times the best sentence's
    /// BM25 z, over 1 + this (no encoder pass).
    lex_sent: f32,
    /// Agreement: plus this times the smaller of the dense and the lexical z.
    agree: f32,
    /// Which cosines `hub_mean` / `hub_knn` change.
    hub_on: HubOn,
    /// Late interaction (token-level MaxSim) over the top of the ranking.
    late: Option<Late>,
    /// The row's name (for `TUNE_PERQ`).
    name: String,
    /// Late chunking: span vectors pooled from the query's one encoder pass, the best span's
    /// cosine added to the whole query's with this weight (as `sent`).
    chunk: Option<(Split, f32)>,
}

/// Late interaction: each of the top `n` tools gets the sum of `w` × the z-score (over those
/// `n`) of the feature `f` ([`FEATS`]).
#[derive(Clone, PartialEq, Debug)]
struct Late {
    n: usize,
    terms: Vec<(usize, f32)>,
}

/// How the query is cut into spans for late chunking.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Split {
    /// `index::sentences` (at least two sentences of three words).
    Sentences,
    /// The spans `index::clauses` would cut (also at commas and "then").
    Clauses,
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum HubOn {
    Both,
    FullText,
    Name,
}

/// Input-provider completion: each tool's parameter text (names and descriptions) is scored by
/// BM25 against its siblings' names and descriptions (not their parameters), z over the
/// catalog, once per catalog. At query time each sibling of the top `top` tools gets `w` × its
/// best positive provider z for them: the tool that turns an address into the coordinates a
/// found `find_nearby_places` takes, the one that gives the station codes a ticket search takes.
#[derive(Clone, Copy, PartialEq, Debug)]
struct Provider {
    top: usize,
    w: f32,
    /// Only provider z above this counts (as z − min).
    min: f32,
}

/// Which text a server's own vector is of.
#[derive(Clone, Copy, PartialEq, Debug)]
enum SrvText {
    /// Name, description and its tools' names (the index's `server_texts`).
    Tools,
    /// Name and description only.
    Desc,
}

/// Servers as retrievable units: each server's own document is scored against the query (z of
/// the dense cosine over the servers, blended with the z of BM25 over server documents), and
/// that score reaches the server's tools.
#[derive(Clone, Copy, PartialEq, Debug)]
struct Srv {
    text: SrvText,
    /// Dense share of the server score (the rest is lexical).
    dense_weight: f32,
    /// Also count the server's tool evidence (its best two tools' mean fused score, z over
    /// servers) into the server score with this weight.
    tool_evidence: f32,
    mode: SrvMode,
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum SrvMode {
    /// `w` × the server's score added to each of its tools.
    Add(f32),
    /// `w` × the server's score, only for servers whose score is at least `min` (else 0).
    AddAbove(f32, f32),
    /// Tools of the best `n` servers get `bonus` (in tool-score units).
    Top(usize, f32),
    /// When the best server's score leads the second's by `gap`, its best `take` tools (by
    /// their own score) go first.
    Lead { gap: f32, take: usize },
}

/// When at least `min` of the top `top` tools come from one server, that server's other tools
/// get `w` (tool-score units) — only those with a lexical match when `need_lex`, times their
/// best sentence z when `sent`.
#[derive(Clone, Copy, PartialEq, Debug)]
struct Sibling {
    top: usize,
    min: usize,
    w: f32,
    need_lex: bool,
    /// Scale each sibling's bonus by its best positive dense z over the query's sentences and
    /// the whole query (the brief's "siblings that match any part of the query").
    sent: bool,
}

/// Coverage quota: the top 5 takes the whole query's best `lead` tools, then each sentence's
/// best tool whose own z-score is at least `z` (dense sentence vector when `dense`, else BM25 of
/// the sentence alone), then fills from the whole query's ranking.
#[derive(Clone, Copy, PartialEq, Debug)]
struct Cover {
    lead: usize,
    z: f32,
    dense: bool,
    /// Split on commas and "then"-style words too (the index's clauses), not only sentences.
    clauses: bool,
}

/// Per-query weights of the two rankers from how sure each one is.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Adapt {
    Off,
    /// Confidence = z of the top hit minus z of the hit at this rank, raised to `power`.
    Gap(usize, f32),
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum PrfGate {
    Always,
    /// Only for a query of one sentence (no `sentences` split).
    OneSentence,
    /// Only for a query of at most this many words.
    MaxWords(usize),
    /// Only when the dense top hit's z stands this far above the n-th hit's (z units).
    Gap(f32),
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum PrfMode {
    /// Rocchio: the feedback vector replaces the query's.
    Replace,
    /// Each tool keeps the better of its cosine with the query and with the feedback vector.
    Max,
}

impl Default for Cfg {
    fn default() -> Self {
        Self {
            dense_weight: 0.7,
            server_weight: 0.3,
            bm25: Bm25Params::default(),
            lex_norm: Norm::Max,
            dense_norm: Norm::MinMax,
            rrf: None,
            agg: Agg::Max,
            sent: 0.0,
            variants: vec![Variant::Current],
            prf: None,
            query_stop: false,
            paths: false,
            mmr: 0.0,
            lex_prf: None,
            name_lex: 0.0,
            name_dense: 0.0,
            name_variant: Variant::NameWords,
            adapt: Adapt::Off,
            prf_gate: PrfGate::Always,
            prf_mode: PrfMode::Replace,
            query_strip: Strip::Off,
            doc_strip: Strip::Off,
            srv: None,
            sibling: None,
            cover: None,
            provider: None,
            cap: None,
            hub_mean: 0.0,
            hub_knn: 0.0,
            lex_sent: 0.0,
            agree: 0.0,
            hub_on: HubOn::Both,
            late: None,
            chunk: None,
            name: String::new(),
        }
    }
}

/// The settings compared in RESULTS.md ("Tried"): the first version's defaults, the z-score
/// default of 11-29, the name vector's default of 12-01, today's `Tuning::default()` ("default":
/// the encoder reads the query without Lucene's stop words), and one change at a time from the
/// 11-29 default (rows from "name match" on were added with the name vector; those starting
/// "name-words vector 0.2, ..." change one more thing on top of it; the "encoder stop words"
/// rows change which words the encoder reads, of the query or of the query and the tool texts,
/// on top of the name vector's default).
fn configs() -> Vec<(String, Cfg)> {
    let old = Cfg::default();
    let mut d = old.clone();
    d.lex_norm = Norm::Z;
    d.dense_norm = Norm::Z;
    d.server_weight = 0.15;
    d.agg = Agg::TopMean(2);
    let mut out = vec![
        (
            "old defaults (max/min-max, server max 0.3)".to_string(),
            old,
        ),
        (
            "z, server top-2 mean 0.15 (default to 12-01)".to_string(),
            d.clone(),
        ),
        (
            "name-words vector 0.2 (default to 12-01 10:00)".to_string(),
            Cfg {
                name_dense: 0.2,
                ..d.clone()
            },
        ),
        (
            "default (z, top-2 0.15, name-words 0.2, query w/o Lucene stop words)".to_string(),
            Cfg {
                name_dense: 0.2,
                query_strip: Strip::Lucene(false),
                ..d.clone()
            },
        ),
    ];
    let mut add = |name: &str, f: &dyn Fn(&mut Cfg)| {
        let mut c = d.clone();
        f(&mut c);
        out.push((name.to_string(), c));
    };
    add("max/min-max normalization", &|c| {
        c.lex_norm = Norm::Max;
        c.dense_norm = Norm::MinMax;
    });
    add("lexical z capped at 3", &|c| c.lex_norm = Norm::ZCap(3.0));
    add("lexical z over matching tools only", &|c| {
        c.lex_norm = Norm::ZNonZero
    });
    add("rrf k 60 (no score blend)", &|c| c.rrf = Some(60.0));
    add("rrf k 10 (no score blend)", &|c| c.rrf = Some(10.0));
    add("dense weight 0.6", &|c| c.dense_weight = 0.6);
    add("dense weight 0.8", &|c| c.dense_weight = 0.8);
    add("server weight 0", &|c| c.server_weight = 0.0);
    add("server weight 0.3", &|c| c.server_weight = 0.3);
    add("server: best tool only", &|c| c.agg = Agg::Max);
    add("server: top-3 mean", &|c| c.agg = Agg::TopMean(3));
    add("sentences 0.6 (--sentences)", &|c| c.sent = 0.6);
    add("sentences 1.0", &|c| c.sent = 1.0);
    add("dense PRF top 5, 0.3", &|c| c.prf = Some((5, 0.3)));
    add("dense PRF top 10, 0.5", &|c| c.prf = Some((10, 0.5)));
    add("+ server-context tool vector (max)", &|c| {
        c.variants = vec![Variant::Current, Variant::ServerCtx]
    });
    add("+ name+description tool vector (max)", &|c| {
        c.variants = vec![Variant::Current, Variant::NameDesc]
    });
    add("name+description vector only", &|c| {
        c.variants = vec![Variant::NameDesc]
    });
    add("query boilerplate stop words (BM25)", &|c| {
        c.query_stop = true
    });
    add("paths in the query -> 'file NAME'", &|c| c.paths = true);
    add("MMR 0.1 over the top 30", &|c| c.mmr = 0.1);
    add("lexical PRF top 3, 0.2", &|c| c.lex_prf = Some((3, 0.2)));
    add("lexical PRF top 3, 0.5", &|c| c.lex_prf = Some((3, 0.5)));
    add("lexical PRF top 1, 0.3", &|c| c.lex_prf = Some((1, 0.3)));
    add("BM25 k1 2.0", &|c| c.bm25.k1 = 2.0);
    add("BM25 k1 0.8", &|c| c.bm25.k1 = 0.8);
    add("BM25F name weight 5", &|c| c.bm25.field_weights[0] = 5.0);
    add("BM25F params weight 0.8", &|c| {
        c.bm25.field_weights[2] = 0.8
    });
    add("BM25F server weight 1.0", &|c| {
        c.bm25.field_weights[3] = 1.0
    });
    for w in [0.1, 0.2, 0.3, 0.5] {
        add(&format!("name match (idf share) {w}"), &|c| c.name_lex = w);
    }
    for w in [0.1, 0.2, 0.3] {
        add(&format!("name-words vector {w}"), &|c| c.name_dense = w);
    }
    add("name match 0.2 + name-words vector 0.2", &|c| {
        c.name_lex = 0.2;
        c.name_dense = 0.2;
    });
    for (rank, power) in [(2, 1.0), (5, 1.0), (5, 0.5), (10, 0.5), (10, 1.0)] {
        add(&format!("adaptive blend gap@{rank}^{power}"), &|c| {
            c.adapt = Adapt::Gap(rank, power)
        });
    }
    for w in [0.15, 0.25, 0.4] {
        add(&format!("name-words vector {w}"), &|c| c.name_dense = w);
    }
    let nv = |c: &mut Cfg| c.name_dense = 0.2;
    add("name-words vector 0.2 + name match 0.05", &|c| {
        nv(c);
        c.name_lex = 0.05;
    });
    for w in [0.65, 0.75] {
        add(&format!("name-words vector 0.2, dense weight {w}"), &|c| {
            nv(c);
            c.dense_weight = w;
        });
    }
    for w in [0.2, 0.3] {
        add(&format!("server+name-words vector {w}"), &|c| {
            c.name_dense = w;
            c.name_variant = Variant::ServerNameWords;
        });
    }
    for g in [1.0, 1.5] {
        add(
            &format!("name-words vector 0.2, PRF 5/0.3 gap >= {g}"),
            &|c| {
                nv(c);
                c.prf = Some((5, 0.3));
                c.prf_gate = PrfGate::Gap(g);
            },
        );
    }
    add("name-words vector 0.2, sentences 0.6", &|c| {
        nv(c);
        c.sent = 0.6;
    });
    add("name-words vector 0.2, server weight 0", &|c| {
        nv(c);
        c.server_weight = 0.0;
    });
    add(
        "name-words vector max-pooled with the full text (no z feature)",
        &|c| c.variants = vec![Variant::Current, Variant::NameWords],
    );
    for w in [0.2, 0.3] {
        add(&format!("name + first sentence vector {w}"), &|c| {
            c.name_dense = w;
            c.name_variant = Variant::NameFirstSentence;
        });
    }
    let prf = |c: &mut Cfg| c.prf = Some((5, 0.3));
    add("dense PRF 5/0.3 one-sentence queries", &|c| {
        prf(c);
        c.prf_gate = PrfGate::OneSentence;
    });
    for n in [10, 15, 20] {
        add(&format!("dense PRF 5/0.3 queries <= {n} words"), &|c| {
            prf(c);
            c.prf_gate = PrfGate::MaxWords(n);
        });
    }
    for g in [1.0, 1.5, 2.0] {
        add(&format!("dense PRF 5/0.3 dense gap@5 >= {g}"), &|c| {
            prf(c);
            c.prf_gate = PrfGate::Gap(g);
        });
    }
    for (n, beta) in [(5, 0.3), (5, 1.0), (3, 1.0)] {
        add(&format!("dense PRF {n}/{beta} as max candidate"), &|c| {
            c.prf = Some((n, beta));
            c.prf_mode = PrfMode::Max;
        });
    }
    let nd = d.clone();
    let mut add = |name: &str, f: &dyn Fn(&mut Cfg)| {
        let mut c = nd.clone();
        c.name_dense = 0.2;
        f(&mut c);
        out.push((name.to_string(), c));
    };
    for strip in STRIPS {
        add(
            &format!("encoder stop words, query only: {strip:?}"),
            &|c| c.query_strip = *strip,
        );
        add(
            &format!("encoder stop words, both sides: {strip:?}"),
            &|c| {
                c.query_strip = *strip;
                c.doc_strip = *strip;
            },
        );
    }
    // 12-01 afternoon: servers as retrievable units, sibling completion, per-sentence
    // coverage, input providers and a per-server cap, each on top of today's default
    // (RESULTS.md, "Servers as units, siblings, coverage").
    let base = Cfg {
        name_dense: 0.2,
        query_strip: Strip::Lucene(false),
        ..d.clone()
    };
    let mut add = |name: &str, f: &dyn Fn(&mut Cfg)| {
        let mut c = base.clone();
        f(&mut c);
        out.push((name.to_string(), c));
    };
    let srv = |text, mode| Srv {
        text,
        dense_weight: 0.7,
        tool_evidence: 0.0,
        mode,
    };
    for (tn, text) in [("tools", SrvText::Tools), ("desc", SrvText::Desc)] {
        for w in [0.1, 0.2, 0.3, 0.5] {
            add(&format!("srv doc ({tn}) add {w}"), &|c| {
                c.srv = Some(srv(text, SrvMode::Add(w)))
            });
        }
        for (n, b) in [(1, 0.3), (1, 0.6), (2, 0.3), (2, 0.6), (3, 0.5)] {
            add(&format!("srv doc ({tn}) top {n} servers +{b}"), &|c| {
                c.srv = Some(srv(text, SrvMode::Top(n, b)))
            });
        }
        for (gap, take) in [(0.5, 2), (1.0, 2), (1.0, 3), (1.5, 3)] {
            add(
                &format!("srv doc ({tn}) lead gap {gap} take {take}"),
                &|c| c.srv = Some(srv(text, SrvMode::Lead { gap, take })),
            );
        }
    }
    for dw in [0.5, 1.0] {
        for w in [0.2, 0.3] {
            add(&format!("srv doc (tools) dense share {dw} add {w}"), &|c| {
                let mut s = srv(SrvText::Tools, SrvMode::Add(w));
                s.dense_weight = dw;
                c.srv = Some(s)
            });
        }
    }
    for te in [0.5, 1.0] {
        for w in [0.2, 0.3] {
            add(
                &format!("srv doc (tools) + tool evidence {te} add {w}"),
                &|c| {
                    let mut s = srv(SrvText::Tools, SrvMode::Add(w));
                    s.tool_evidence = te;
                    c.srv = Some(s)
                },
            );
        }
        add(
            &format!("srv doc (tools) + tool evidence {te} top 1 +0.5"),
            &|c| {
                let mut s = srv(SrvText::Tools, SrvMode::Top(1, 0.5));
                s.tool_evidence = te;
                c.srv = Some(s)
            },
        );
    }
    for (w, min) in [(0.3, 1.0), (0.3, 2.0), (0.5, 2.0)] {
        add(&format!("srv doc (tools) add {w} when z >= {min}"), &|c| {
            c.srv = Some(srv(SrvText::Tools, SrvMode::AddAbove(w, min)))
        });
    }
    for (top, min, w, need_lex) in [
        (5, 2, 0.3, false),
        (5, 2, 0.6, false),
        (5, 2, 0.3, true),
        (5, 2, 0.6, true),
        (5, 3, 0.6, false),
        (3, 2, 0.5, false),
        (10, 3, 0.5, false),
    ] {
        add(
            &format!("sibling top {top} >= {min} +{w} lex {need_lex}"),
            &|c| {
                c.sibling = Some(Sibling {
                    top,
                    min,
                    w,
                    need_lex,
                    sent: false,
                })
            },
        );
    }
    for (top, min, w) in [
        (5, 2, 0.1),
        (5, 2, 0.2),
        (5, 3, 0.2),
        (3, 2, 0.1),
        (5, 2, 0.05),
    ] {
        add(
            &format!("sibling top {top} >= {min} +{w} x best sentence z"),
            &|c| {
                c.sibling = Some(Sibling {
                    top,
                    min,
                    w,
                    need_lex: false,
                    sent: true,
                })
            },
        );
    }
    for (lead, z, dense, clauses) in [
        (1, 2.0, true, false),
        (1, 3.0, true, false),
        (2, 3.0, true, false),
        (1, 4.0, true, false),
        (1, 3.0, false, false),
        (2, 4.0, false, false),
        (1, 5.0, false, false),
        (2, 3.0, false, true),
        (2, 5.0, false, true),
    ] {
        add(
            &format!("cover lead {lead} z >= {z} dense {dense} clauses {clauses}"),
            &|c| {
                c.cover = Some(Cover {
                    lead,
                    z,
                    dense,
                    clauses,
                })
            },
        );
    }
    for (top, w, min) in [
        (1, 0.3, 0.0),
        (3, 0.2, 0.0),
        (3, 0.3, 0.0),
        (3, 0.5, 0.0),
        (5, 0.3, 0.0),
        (3, 0.3, 1.0),
        (3, 0.5, 2.0),
        (5, 0.5, 2.0),
        (1, 0.1, 0.0),
        (1, 0.2, 0.0),
        (1, 0.3, 1.0),
        (2, 0.2, 1.0),
    ] {
        add(&format!("provider top {top} +{w} z > {min}"), &|c| {
            c.provider = Some(Provider { top, w, min })
        });
    }
    for (cap, pool) in [(2, 10), (3, 10), (3, 20), (4, 10), (2, 20)] {
        add(&format!("server cap {cap} in top 5 (pool {pool})"), &|c| {
            c.cap = Some((cap, pool))
        });
    }
    for a in [0.25, 0.5, 1.0] {
        add(&format!("hubness: less {a} x cosine with the mean"), &|c| {
            c.hub_mean = a
        });
    }
    for a in [0.25, 0.5, 1.0] {
        add(
            &format!("hubness: less {a} x mean cosine of 10 nearest"),
            &|c| c.hub_knn = a,
        );
    }
    for a in [0.3, 0.6, 1.0] {
        add(&format!("lexical sentence pooling {a}"), &|c| {
            c.lex_sent = a
        });
    }
    for a in [-0.1, -0.25] {
        add(
            &format!("hubness prior: plus {} x cosine with the mean", -a),
            &|c| c.hub_mean = a,
        );
        add(
            &format!("hubness prior: plus {} x mean cosine of 10 nearest", -a),
            &|c| c.hub_knn = a,
        );
    }
    for a in [0.05, 0.15, 0.2, 0.3, 0.4, 0.5] {
        add(&format!("centroid prior {a}, both"), &|c| c.hub_mean = -a);
    }
    for a in [0.1, 0.2, 0.25, 0.3, 0.5] {
        add(&format!("centroid prior {a}, full text only"), &|c| {
            c.hub_mean = -a;
            c.hub_on = HubOn::FullText;
        });
        add(&format!("centroid prior {a}, name only"), &|c| {
            c.hub_mean = -a;
            c.hub_on = HubOn::Name;
        });
    }
    for a in [0.0, 0.2, 0.3] {
        add(
            &format!("dense only (weight 1), centroid prior {a}"),
            &|c| {
                c.dense_weight = 1.0;
                c.hub_mean = -a;
            },
        );
    }
    for a in [0.0, 0.3] {
        add(&format!("server weight 0, centroid prior {a}"), &|c| {
            c.server_weight = 0.0;
            c.hub_mean = -a;
        });
    }
    for a in [0.1, 0.2, 0.3, -0.1] {
        add(
            &format!("agreement: plus {a} x min(dense z, lexical z)"),
            &|c| c.agree = a,
        );
    }
    // 12-01 evening: token-level signals on top of today's default (RESULTS.md, "Token-level
    // signals"): late interaction over the top n, and late chunking.
    for n in [20, 50, 100] {
        for (f, name) in FEATS.iter().enumerate() {
            for w in [0.2, 0.5] {
                add(&format!("late n{n} {name} {w}"), &|c| {
                    c.late = Some(Late {
                        n,
                        terms: vec![(f, w)],
                    })
                });
            }
        }
    }
    // Round 2: idf weights, the best sentence's coverage, combinations, and each feature
    // nearly alone within the top n (weight 5).
    for n in [20, 50] {
        for (f, name) in FEATS.iter().enumerate().skip(11) {
            for w in [0.2, 0.5] {
                add(&format!("late2 n{n} {name} {w}"), &|c| {
                    c.late = Some(Late {
                        n,
                        terms: vec![(f, w)],
                    })
                });
            }
        }
    }
    for n in [10, 20] {
        for f in [1, 5, 7, 9, 11, 13] {
            add(&format!("late2 n{n} {} alone (5)", FEATS[f]), &|c| {
                c.late = Some(Late {
                    n,
                    terms: vec![(f, 5.0)],
                })
            });
        }
    }
    for (terms, name) in [
        (vec![(9, 0.2), (7, 0.2)], "name content 0.2 + content 0.2"),
        (vec![(9, 0.1), (7, 0.2)], "name content 0.1 + content 0.2"),
        (vec![(9, 0.1)], "name content 0.1"),
        (vec![(7, 0.1)], "content 0.1"),
        (vec![(7, 0.3)], "content 0.3"),
        (vec![(0, 0.5), (7, 0.2)], "q->t all 0.5 + t->q content 0.2"),
    ] {
        for n in [20, 50] {
            add(&format!("late2 n{n} t->q {name}"), &|c| {
                c.late = Some(Late {
                    n,
                    terms: terms.clone(),
                })
            });
        }
    }
    // Round 3: the tool-name coverage features around the weights of round 2.
    for f in [9, 14, 15, 16] {
        for n in [10, 20, 30] {
            for w in [0.1, 0.15, 0.2, 0.3] {
                add(&format!("late3 n{n} {} {w}", FEATS[f]), &|c| {
                    c.late = Some(Late {
                        n,
                        terms: vec![(f, w)],
                    })
                });
            }
        }
    }
    for w in [1.5, 2.0] {
        add(&format!("late2 chunking sentences {w}"), &|c| {
            c.chunk = Some((Split::Sentences, w))
        });
    }
    for (split, sn) in [(Split::Sentences, "sentences"), (Split::Clauses, "clauses")] {
        for w in [0.3, 0.6, 1.0] {
            add(&format!("late chunking {sn} {w}"), &|c| {
                c.chunk = Some((split, w))
            });
        }
    }
    out
}

/// Each vector's dot product with the mean of all of them, and its mean cosine with its 10
/// nearest others.
fn hubness(vs: &[&[f32]]) -> (Vec<f32>, Vec<f32>) {
    let dim = vs.first().map_or(0, |v| v.len());
    let mut mean = vec![0f32; dim];
    for v in vs {
        for (m, x) in mean.iter_mut().zip(*v) {
            *m += x / vs.len() as f32;
        }
    }
    let to_mean = vs
        .iter()
        .map(|v| switchboard_search::embed::dot(v, &mean))
        .collect();
    let knn = vs
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let mut c: Vec<f32> = vs
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .map(|(_, w)| switchboard_search::embed::dot(v, w))
                .collect();
            c.sort_by(|a, b| b.total_cmp(a));
            let k = c.len().clamp(1, 10);
            c.iter().take(k).sum::<f32>() / k as f32
        })
        .collect();
    (to_mean, knn)
}

/// For each tool, its siblings' z-scores as providers of its inputs (see [`Provider`]).
fn providers(set: &Set, bm25: &Bm25Params) -> Vec<Vec<(usize, f32)>> {
    let bare: Vec<Doc> = set
        .docs
        .iter()
        .map(|d| Doc {
            params: Vec::new(),
            ..d.clone()
        })
        .collect();
    let index = Bm25::build_with(&bare, *bm25);
    set.docs
        .iter()
        .enumerate()
        .map(|(t, d)| {
            let text: Vec<String> = d
                .params
                .iter()
                .map(|p| format!("{} {}", words(&p.name), p.description))
                .collect();
            if text.is_empty() {
                return Vec::new();
            }
            let z = normalize(&index.scores(&text.join(" ")), Norm::Z);
            (0..set.docs.len())
                .filter(|&s| s != t && set.server_of[s] == set.server_of[t])
                .map(|s| (s, z[s]))
                .collect()
        })
        .collect()
}

/// One lexical document per server: its name as the tool name, its description, its tools'
/// names as parameters.
fn server_docs(docs: &[Doc], server_of: &[u32], servers: usize) -> Vec<Doc> {
    let mut out: Vec<Option<Doc>> = vec![None; servers];
    for (d, &srv) in docs.iter().zip(server_of) {
        let sd = out[srv as usize]
            .get_or_insert_with(|| Doc::new(&d.server, &d.server, &d.server_description, &[]));
        sd.params.push(switchboard_search::doc::Param {
            name: d.tool.clone(),
            description: String::new(),
        });
    }
    // Every server id has at least one tool.
    out.into_iter().flatten().collect()
}

/// The text of each server's own vector, in server id order.
fn server_texts(docs: &[Doc], server_of: &[u32], servers: usize, t: SrvText) -> Vec<String> {
    let mut texts: Vec<Option<String>> = vec![None; servers];
    for (doc, &srv) in docs.iter().zip(server_of) {
        let text = texts[srv as usize].get_or_insert_with(|| {
            let mut s = words(&doc.server);
            if !doc.server_description.is_empty() {
                s.push_str(": ");
                s.push_str(&doc.server_description);
            }
            if t == SrvText::Tools {
                s.push_str(". Tools:");
            }
            s
        });
        if t == SrvText::Tools {
            text.push(' ');
            text.push_str(&words(&doc.tool));
            text.push(',');
        }
    }
    texts.into_iter().map(Option::unwrap_or_default).collect()
}

/// Words of a request that say "I want" rather than what (for the lexical side only).
const QUERY_STOP: &[&str] = &[
    "abl",
    "anyon",
    "assist",
    "avail",
    "can",
    "could",
    "find",
    "get",
    "give",
    "help",
    "know",
    "like",
    "look",
    "need",
    "pleas",
    "provid",
    "recommend",
    "show",
    "tell",
    "use",
    "want",
    "way",
    "would",
    "also",
    "some",
    "ani",
    "detail",
    "inform",
    "specif",
    "current",
];

fn normalize(s: &[f32], n: Norm) -> Vec<f32> {
    match n {
        Norm::Max => fusion::by_max(s),
        Norm::MinMax => fusion::min_max(s),
        Norm::ZCap(c) => normalize(s, Norm::Z)
            .into_iter()
            .map(|z| z.min(c))
            .collect(),
        Norm::ZNonZero => {
            let nz: Vec<f32> = s.iter().copied().filter(|&x| x > 0.0).collect();
            if nz.len() < 2 {
                return normalize(s, Norm::Z);
            }
            let len = nz.len() as f32;
            let mean = nz.iter().sum::<f32>() / len;
            let var = nz.iter().map(|x| (x - mean) * (x - mean)).sum::<f32>() / len;
            let sd = var.sqrt().max(1e-6);
            let lo = nz.iter().copied().fold(f32::INFINITY, f32::min);
            s.iter()
                .map(|&x| (if x > 0.0 { x } else { lo } - mean) / sd)
                .collect()
        }
        Norm::Z => {
            let len = s.len().max(1) as f32;
            let mean = s.iter().sum::<f32>() / len;
            let var = s.iter().map(|x| (x - mean) * (x - mean)).sum::<f32>() / len;
            let sd = var.sqrt().max(1e-6);
            s.iter().map(|x| (x - mean) / sd).collect()
        }
    }
}

/// "save it to /root/md/x.md" -> "save it to file x.md".
fn rewrite_paths(q: &str) -> String {
    q.split(' ')
        .map(|w| {
            let t = w.trim_matches(|c: char| {
                !c.is_alphanumeric() && c != '/' && c != '.' && c != '_' && c != '-'
            });
            if t.contains('/')
                && t.rsplit('/').next().is_some_and(|b| b.contains('.'))
                && !t.contains("://")
            {
                let base = t.rsplit('/').next().unwrap_or(t);
                format!("file {base}")
            } else {
                w.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Re-rank the top 30 by maximal marginal relevance: each pick's score less lambda times its
/// best cosine with the tools already picked.
fn mmr(scores: &[f32], doc_vecs: &[Vec<&[f32]>], lambda: f32) -> Vec<f32> {
    let pool = fusion::top_k(scores, 30);
    let mut out = scores.to_vec();
    let mut picked: Vec<usize> = Vec::new();
    let mut left = pool.clone();
    let top = scores[pool[0]];
    while !left.is_empty() {
        let (j, _) = left
            .iter()
            .enumerate()
            .map(|(j, &i)| {
                let red = picked
                    .iter()
                    .map(|&p| switchboard_search::embed::dot(doc_vecs[i][0], doc_vecs[p][0]))
                    .fold(0f32, f32::max);
                (j, scores[i] - lambda * red)
            })
            .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)))
            .unwrap_or((0, 0.0));
        let i = left.remove(j);
        // Keep the picked order above everything outside the pool.
        out[i] = top + 10.0 - picked.len() as f32 * 0.01;
        picked.push(i);
    }
    out
}

fn rrf(s: &[f32], k: f32) -> Vec<f32> {
    let mut out = vec![0f32; s.len()];
    for (rank, i) in fusion::top_k(s, s.len()).into_iter().enumerate() {
        out[i] = 1.0 / (k + rank as f32 + 1.0);
    }
    out
}

fn server_boost(scores: &[f32], set: &Set, w: f32, agg: Agg) -> Vec<f32> {
    match agg {
        Agg::Max => fusion::server_boost(scores, &set.server_of, set.servers, w),
        Agg::TopMean(n) => {
            let mut per: Vec<Vec<f32>> = vec![Vec::new(); set.servers];
            for (s, &srv) in scores.iter().zip(&set.server_of) {
                per[srv as usize].push(*s);
            }
            let agg: Vec<f32> = per
                .iter_mut()
                .map(|v| {
                    v.sort_by(|a, b| b.total_cmp(a));
                    let m = v.len().min(n).max(1);
                    v.iter().take(m).sum::<f32>() / m as f32
                })
                .collect();
            scores
                .iter()
                .zip(&set.server_of)
                .map(|(s, &srv)| s + w * agg[srv as usize])
                .collect()
        }
    }
}

/// The texts a setting embeds on a set: tool and name texts, server texts, each query (as the
/// setting reads it) and its sentences when the setting uses them.
fn needed(set: &Set, cfg: &Cfg) -> Vec<String> {
    let mut texts = Vec::new();
    for d in &set.docs {
        for v in &cfg.variants {
            texts.push(cfg.doc_strip.apply(&doc_text(d, *v)));
        }
        texts.push(cfg.doc_strip.apply(&doc_text(d, cfg.name_variant)));
    }
    if let Some(sv) = cfg.srv {
        texts.extend(server_texts(
            &set.docs,
            &set.server_of,
            set.servers,
            sv.text,
        ));
    }
    let sents =
        cfg.sent > 0.0 || cfg.cover.is_some_and(|c| c.dense) || cfg.sibling.is_some_and(|s| s.sent);
    for (q, _, _) in &set.queries {
        let q = if cfg.paths {
            rewrite_paths(q)
        } else {
            q.clone()
        };
        texts.push(cfg.query_strip.apply(&q));
        if sents {
            texts.extend(sentences(&q).into_iter().map(str::to_string));
        }
    }
    texts
}

fn cosines(doc_vecs: &[Vec<&[f32]>], q: &[f32]) -> Vec<f32> {
    doc_vecs
        .iter()
        .map(|vs| {
            vs.iter()
                .map(|d| switchboard_search::embed::dot(d, q))
                .fold(f32::NEG_INFINITY, f32::max)
        })
        .collect()
}

/// R@5, R@10 and MRR over all queries, the even-numbered and the odd-numbered lines.
struct Scores {
    all: [f64; 3],
    even: [f64; 3],
    odd: [f64; 3],
}

/// Each tool's name words (stemmed, unique) and their idf over the catalog's names.
fn name_terms(docs: &[Doc]) -> (Vec<Vec<String>>, HashMap<String, f32>) {
    let analyzer = Analyzer::default();
    let terms: Vec<Vec<String>> = docs
        .iter()
        .map(|d| {
            let mut t = analyzer.terms(&d.tool);
            t.sort();
            t.dedup();
            t
        })
        .collect();
    let mut df: HashMap<String, f32> = HashMap::new();
    for t in terms.iter().flatten() {
        *df.entry(t.clone()).or_insert(0.0) += 1.0;
    }
    let n = docs.len() as f32;
    let idf = df
        .into_iter()
        .map(|(t, df)| (t, (1.0 + (n - df + 0.5) / (df + 0.5)).ln()))
        .collect();
    (terms, idf)
}

/// Confidence of a ranker for this query from its z-scores: top hit minus the hit at `rank`.
fn confidence(z: &[f32], rank: usize, power: f32) -> f32 {
    let top = fusion::top_k(z, rank);
    let gap = match (top.first(), top.last()) {
        (Some(&a), Some(&b)) => (z[a] - z[b]).max(0.0),
        _ => 0.0,
    };
    gap.powf(power)
}

fn run(set: &Set, vecs: &Vecs, cfg: &Cfg) -> Scores {
    let (names, name_idf) = name_terms(&set.docs);
    let name_vecs: Vec<Vec<&[f32]>> = set
        .docs
        .iter()
        .map(|d| vec![vecs.get(&cfg.doc_strip.apply(&doc_text(d, cfg.name_variant)))])
        .collect();
    let bm25 = Bm25::build_with(&set.docs, cfg.bm25);
    let doc_vecs: Vec<Vec<&[f32]>> = set
        .docs
        .iter()
        .map(|d| {
            cfg.variants
                .iter()
                .map(|v| vecs.get(&cfg.doc_strip.apply(&doc_text(d, *v))))
                .collect()
        })
        .collect();
    let srv_bm25 = Bm25::build(&set.server_docs);
    let srv_vecs: Vec<&[f32]> = match cfg.srv {
        Some(sv) => server_texts(&set.docs, &set.server_of, set.servers, sv.text)
            .iter()
            .map(|t| vecs.get(t))
            .collect(),
        None => Vec::new(),
    };
    let provider = match cfg.provider {
        Some(_) => providers(set, &cfg.bm25),
        None => Vec::new(),
    };
    let hub = |vs: &[Vec<&[f32]>]| -> Vec<f32> {
        if cfg.hub_mean == 0.0 && cfg.hub_knn == 0.0 {
            return vec![0.0; vs.len()];
        }
        let first: Vec<&[f32]> = vs.iter().map(|v| v[0]).collect();
        let (m, k) = hubness(&first);
        m.iter()
            .zip(k)
            .map(|(m, k)| cfg.hub_mean * m + cfg.hub_knn * k)
            .collect()
    };
    let (mut doc_hub, mut name_hub) = (hub(&doc_vecs), hub(&name_vecs));
    match cfg.hub_on {
        HubOn::Both => {}
        HubOn::FullText => name_hub.iter_mut().for_each(|h| *h = 0.0),
        HubOn::Name => doc_hub.iter_mut().for_each(|h| *h = 0.0),
    }
    let idf = if cfg.late.is_some() {
        word_idf(&set.docs)
    } else {
        HashMap::new()
    };
    let mut sums = [[0f64; 3]; 2];
    let mut counts = [0usize; 2];
    for (q0, gold, line) in &set.queries {
        let rewritten;
        let q: &String = if cfg.paths {
            rewritten = rewrite_paths(q0);
            &rewritten
        } else {
            q0
        };
        let stripped = cfg.query_strip.apply(q);
        let qv = vecs.get(&stripped);
        let mut cos = cosines(&doc_vecs, qv);
        for (c, h) in cos.iter_mut().zip(&doc_hub) {
            *c -= h;
        }
        let gate = match cfg.prf_gate {
            PrfGate::Always => true,
            PrfGate::OneSentence => sentences(q).is_empty(),
            PrfGate::MaxWords(n) => q.split_whitespace().count() <= n,
            PrfGate::Gap(g) => cfg
                .prf
                .is_some_and(|(n, _)| confidence(&normalize(&cos, Norm::Z), n, 1.0) >= g),
        };
        if let Some((n, beta)) = cfg.prf.filter(|_| gate) {
            let top = fusion::top_k(&cos, n);
            let mut v: Vec<f32> = qv.to_vec();
            for &i in &top {
                for (a, b) in v.iter_mut().zip(doc_vecs[i][0]) {
                    *a += beta * b / n as f32;
                }
            }
            let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-6);
            v.iter_mut().for_each(|x| *x /= norm);
            let fed = cosines(&doc_vecs, &v);
            cos = match cfg.prf_mode {
                PrfMode::Replace => fed,
                PrfMode::Max => cos.iter().zip(fed).map(|(a, b)| a.max(b)).collect(),
            };
        }
        if cfg.sent > 0.0 {
            let ss = sentences(q);
            if !ss.is_empty() {
                let mut best = vec![f32::NEG_INFINITY; cos.len()];
                for s in ss {
                    for (b, c) in best.iter_mut().zip(cosines(&doc_vecs, vecs.get(s))) {
                        *b = b.max(c);
                    }
                }
                for (c, b) in cos.iter_mut().zip(best) {
                    *c = (*c + cfg.sent * b) / (1.0 + cfg.sent);
                }
            }
        }
        if let Some((split, w)) = cfg.chunk {
            let t = vecs.tok(&stripped);
            let spans = spans(&stripped, split);
            if spans.len() >= 2 {
                let mut best = vec![f32::NEG_INFINITY; cos.len()];
                for sp in &spans {
                    if let Some(v) = t.pool(sp.clone()) {
                        for (b, c) in best.iter_mut().zip(cosines(&doc_vecs, &v)) {
                            *b = b.max(c);
                        }
                    }
                }
                if best[0].is_finite() {
                    for (c, b) in cos.iter_mut().zip(best) {
                        *c = (*c + w * b) / (1.0 + w);
                    }
                }
            }
        }
        let lex = if cfg.query_stop {
            let terms: Vec<String> = bm25
                .query_terms(q)
                .into_iter()
                .filter(|t| !QUERY_STOP.contains(&t.as_str()))
                .collect();
            bm25.scores_of_terms(&terms)
        } else if cfg.lex_sent > 0.0 && !sentences(q).is_empty() {
            // Pooled in z units, then used as the lexical score (z of a z is itself).
            let mut best = vec![f32::NEG_INFINITY; set.docs.len()];
            for p in sentences(q) {
                for (b, z) in best.iter_mut().zip(normalize(&bm25.scores(p), Norm::Z)) {
                    *b = b.max(z);
                }
            }
            normalize(&bm25.scores(q), Norm::Z)
                .iter()
                .zip(best)
                .map(|(w, b)| (w + cfg.lex_sent * b) / (1.0 + cfg.lex_sent))
                .collect()
        } else {
            bm25.scores(q)
        };
        let fused = if let Some(k) = cfg.rrf {
            let w = cfg.dense_weight;
            rrf(&lex, k)
                .iter()
                .zip(rrf(&cos, k))
                .map(|(l, d)| (1.0 - w) * l + w * d)
                .collect()
        } else {
            let (zl, zd) = (
                normalize(&lex, cfg.lex_norm),
                normalize(&cos, cfg.dense_norm),
            );
            let w = match cfg.adapt {
                Adapt::Off => cfg.dense_weight,
                Adapt::Gap(rank, power) => {
                    let cd = cfg.dense_weight * confidence(&zd, rank, power);
                    let cl = (1.0 - cfg.dense_weight) * confidence(&zl, rank, power);
                    if cd + cl > 1e-6 {
                        cd / (cd + cl)
                    } else {
                        cfg.dense_weight
                    }
                }
            };
            let mut fused = fusion::blend(&zl, &zd, w);
            if cfg.agree != 0.0 {
                for ((f, l), d) in fused.iter_mut().zip(&zl).zip(&zd) {
                    *f += cfg.agree * l.min(*d);
                }
            }
            if cfg.name_lex != 0.0 {
                let qt: std::collections::HashSet<String> =
                    bm25.query_terms(q).into_iter().collect();
                let feature: Vec<f32> = names
                    .iter()
                    .map(|ts| {
                        let total: f32 = ts.iter().map(|t| name_idf[t]).sum();
                        let hit: f32 = ts
                            .iter()
                            .filter(|t| qt.contains(*t))
                            .map(|t| name_idf[t])
                            .sum();
                        if total > 0.0 { hit / total } else { 0.0 }
                    })
                    .collect();
                for (f, z) in fused.iter_mut().zip(normalize(&feature, Norm::Z)) {
                    *f += cfg.name_lex * z;
                }
            }
            if cfg.name_dense != 0.0 {
                let mut nc = cosines(&name_vecs, qv);
                for (c, h) in nc.iter_mut().zip(&name_hub) {
                    *c -= h;
                }
                for (f, z) in fused.iter_mut().zip(normalize(&nc, Norm::Z)) {
                    *f += cfg.name_dense * z;
                }
            }
            fused
        };
        let fused = match cfg.lex_prf {
            None => fused,
            Some((n, beta)) => {
                let first = server_boost(&fused, set, cfg.server_weight, cfg.agg);
                let mut terms = Vec::new();
                for i in fusion::top_k(&first, n) {
                    let d = &set.docs[i];
                    terms.extend(bm25.query_terms(&format!(
                        "{} {}",
                        words(&d.tool),
                        d.description
                    )));
                }
                terms.sort();
                terms.dedup();
                let extra = bm25.scores_of_terms(&terms);
                let lex2: Vec<f32> = lex
                    .iter()
                    .zip(normalize(&extra, Norm::Max))
                    .map(|(l, e)| l + beta * e * lex.iter().copied().fold(0f32, f32::max).max(1.0))
                    .collect();
                fusion::blend(
                    &normalize(&lex2, cfg.lex_norm),
                    &normalize(&cos, cfg.dense_norm),
                    cfg.dense_weight,
                )
            }
        };
        let mut scores = server_boost(&fused, set, cfg.server_weight, cfg.agg);
        if let Some(sv) = cfg.srv {
            let dz = normalize(
                &srv_vecs
                    .iter()
                    .map(|v| switchboard_search::embed::dot(v, qv))
                    .collect::<Vec<_>>(),
                Norm::Z,
            );
            let lz = normalize(&srv_bm25.scores(q), Norm::Z);
            let mut ss = fusion::blend(&lz, &dz, sv.dense_weight);
            if sv.tool_evidence != 0.0 {
                // The server's best two fused tool scores' mean, z over servers.
                let mut best: Vec<Vec<f32>> = vec![Vec::new(); set.servers];
                for (f, &srv) in fused.iter().zip(&set.server_of) {
                    best[srv as usize].push(*f);
                }
                let mean2: Vec<f32> = best
                    .iter_mut()
                    .map(|b| {
                        b.sort_by(|x, y| y.total_cmp(x));
                        let m = b.len().clamp(1, 2);
                        b.iter().take(m).sum::<f32>() / m as f32
                    })
                    .collect();
                for (s, t) in ss.iter_mut().zip(normalize(&mean2, Norm::Z)) {
                    *s += sv.tool_evidence * t;
                }
            }
            match sv.mode {
                SrvMode::Add(w) => {
                    for (s, &srv) in scores.iter_mut().zip(&set.server_of) {
                        *s += w * ss[srv as usize];
                    }
                }
                SrvMode::AddAbove(w, min) => {
                    for (s, &srv) in scores.iter_mut().zip(&set.server_of) {
                        if ss[srv as usize] >= min {
                            *s += w * ss[srv as usize];
                        }
                    }
                }
                SrvMode::Top(n, bonus) => {
                    if set.servers > 1 {
                        let top = fusion::top_k(&ss, n);
                        for (s, srv) in scores.iter_mut().zip(&set.server_of) {
                            if top.contains(&(*srv as usize)) {
                                *s += bonus;
                            }
                        }
                    }
                }
                SrvMode::Lead { gap, take } => {
                    let o = fusion::top_k(&ss, 2);
                    if o.len() == 2 && ss[o[0]] - ss[o[1]] >= gap {
                        let order = fusion::top_k(&scores, scores.len());
                        let top = scores[order[0]];
                        let own: Vec<usize> = order
                            .into_iter()
                            .filter(|&i| set.server_of[i] as usize == o[0])
                            .take(take)
                            .collect();
                        for (j, i) in own.into_iter().enumerate() {
                            scores[i] = top + 10.0 - j as f32 * 0.01;
                        }
                    }
                }
            }
        }
        if let Some(pv) = cfg.provider {
            let mut bonus = vec![0f32; scores.len()];
            for t in fusion::top_k(&scores, pv.top) {
                for &(s, z) in &provider[t] {
                    bonus[s] = bonus[s].max(pv.w * (z - pv.min).max(0.0));
                }
            }
            for (s, b) in scores.iter_mut().zip(bonus) {
                *s += b;
            }
        }
        if let Some((cap, pool)) = cfg.cap {
            let order = fusion::top_k(&scores, pool);
            let top = scores[order[0]];
            let mut count = vec![0usize; set.servers];
            let mut picks = Vec::new();
            for &i in &order {
                let c = &mut count[set.server_of[i] as usize];
                if *c < cap && picks.len() < 5 {
                    *c += 1;
                    picks.push(i);
                }
            }
            for (j, &i) in picks.iter().enumerate() {
                scores[i] = top + 10.0 - j as f32 * 0.01;
            }
        }
        if let Some(sb) = cfg.sibling {
            let top = fusion::top_k(&scores, sb.top);
            let mut count = vec![0usize; set.servers];
            for &i in &top {
                count[set.server_of[i] as usize] += 1;
            }
            let part_z: Vec<f32> = if sb.sent {
                let mut best = normalize(&cos, Norm::Z);
                for p in sentences(q) {
                    let z = normalize(&cosines(&doc_vecs, vecs.get(p)), Norm::Z);
                    for (b, z) in best.iter_mut().zip(z) {
                        *b = b.max(z);
                    }
                }
                best
            } else {
                vec![1.0; scores.len()]
            };
            for (i, s) in scores.iter_mut().enumerate() {
                if count[set.server_of[i] as usize] >= sb.min
                    && !top.contains(&i)
                    && (!sb.need_lex || lex[i] > 0.0)
                {
                    *s += sb.w * part_z[i].max(0.0);
                }
            }
        }
        if let Some(cv) = cfg.cover {
            let parts: Vec<String> = if cv.clauses {
                clauses(q)
            } else {
                sentences(q).into_iter().map(str::to_string).collect()
            };
            if parts.len() >= 2 {
                let order = fusion::top_k(&scores, scores.len());
                let top = scores[order[0]];
                let mut picks: Vec<usize> = order.iter().copied().take(cv.lead).collect();
                for p in &parts {
                    let zl = normalize(&bm25.scores(p), Norm::Z);
                    let z = if cv.dense {
                        let zd = normalize(&cosines(&doc_vecs, vecs.get(p)), Norm::Z);
                        fusion::blend(&zl, &zd, cfg.dense_weight)
                    } else {
                        zl
                    };
                    let b = fusion::top_k(&z, 1)[0];
                    if z[b] >= cv.z && !picks.contains(&b) && picks.len() < 5 {
                        picks.push(b);
                    }
                }
                for (j, &i) in picks.iter().enumerate() {
                    scores[i] = top + 10.0 - j as f32 * 0.01;
                }
            }
        }
        let mut scores = if cfg.mmr > 0.0 {
            mmr(&scores, &doc_vecs, cfg.mmr)
        } else {
            scores
        };
        if let Some(l) = &cfg.late {
            let key = (set.name.to_string(), *line, format!("{:?}", cfg.chunk));
            let mut memo = vecs.late_memo.borrow_mut();
            let feats = memo.entry(key).or_insert_with(|| {
                let qt = vecs.tok(&stripped);
                let qcat = categories(qt, &stripped, None);
                let q = Side {
                    tok: qt,
                    cat: &qcat,
                    idf: &token_idf(qt, &stripped, &idf),
                    part: &token_parts(qt, &stripped),
                };
                fusion::top_k(&scores, 100)
                    .into_iter()
                    .map(|i| {
                        let text = set.docs[i].dense_text();
                        let dt = vecs.tok(&text);
                        let dcat = categories(dt, &text, Some(doc_spans(&set.docs[i])));
                        let d = Side {
                            tok: dt,
                            cat: &dcat,
                            idf: &token_idf(dt, &text, &idf),
                            part: &[],
                        };
                        (i, features(&q, &d))
                    })
                    .collect()
            });
            let top = &feats[..l.n.min(feats.len())];
            let mut add = vec![0f32; top.len()];
            for &(f, w) in &l.terms {
                let col: Vec<f32> = top.iter().map(|(_, fs)| fs[f]).collect();
                for (a, z) in add.iter_mut().zip(normalize(&col, Norm::Z)) {
                    *a += w * z;
                }
            }
            for ((i, _), a) in top.iter().zip(add) {
                scores[*i] += a;
            }
        }
        let ranking: Vec<(&str, &str)> = fusion::top_k(&scores, 100)
            .into_iter()
            .map(|i| (set.docs[i].server.as_str(), set.docs[i].tool.as_str()))
            .collect();
        if std::env::var("TUNE_DIAG").is_ok_and(|d| d == set.name) {
            let order = fusion::top_k(&scores, scores.len());
            println!("\nQ: {q}");
            for g in gold {
                let r = order
                    .iter()
                    .position(|&i| matches(g, &set.docs[i].server, &set.docs[i].tool));
                let srv = r.map(|r| set.docs[order[r]].server.as_str()).unwrap_or("");
                println!("  gold {g} ({srv}) at {:?}", r.map(|r| r + 1));
            }
            let top: Vec<String> = order
                .iter()
                .take(8)
                .map(|&i| format!("{}/{}", set.docs[i].server, set.docs[i].tool))
                .collect();
            println!("  top: {}", top.join(", "));
        }
        let s = score_ranking(gold, &ranking);
        if let Some(dir) = std::env::var_os("TUNE_PERQ") {
            let mut f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(PathBuf::from(dir).join(format!("{}.tsv", set.name)))
                .unwrap_or_else(|e| panic!("{e}"));
            use std::io::Write;
            writeln!(f, "{}\t{line}\t{}", cfg_name(cfg), s.recall[2])
                .unwrap_or_else(|e| panic!("{e}"));
        }
        let half = line % 2;
        sums[half][0] += s.recall[2];
        sums[half][1] += s.recall[3];
        sums[half][2] += s.reciprocal_rank;
        counts[half] += 1;
    }
    let mean = |v: [f64; 3], n: usize| v.map(|x| x / n.max(1) as f64);
    let all = [0, 1, 2].map(|i| sums[0][i] + sums[1][i]);
    Scores {
        all: mean(all, counts[0] + counts[1]),
        even: mean(sums[0], counts[0]),
        odd: mean(sums[1], counts[1]),
    }
}

/// One text's token vectors as the late-interaction rows read them: each row scaled to unit
/// length, stored in int8 with one scale per row (as an index would keep them) and read back
/// to f32 here.
struct Tok {
    /// `n × dim`, dequantized.
    rows: Vec<f32>,
    dim: usize,
    special: Vec<bool>,
    offsets: Vec<(usize, usize)>,
    /// int8 codes and scales (what the token file holds).
    codes: Vec<i8>,
    scales: Vec<f32>,
}

impl Tok {
    fn quantized(tv: &switchboard_search::embed::TokenVectors) -> Self {
        let dim = tv.dim;
        let mut codes = Vec::with_capacity(tv.tokens.len());
        let mut scales = Vec::with_capacity(tv.len());
        for i in 0..tv.len() {
            let r = tv.row(i);
            let norm = r.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
            let max = r.iter().fold(0f32, |m, x| m.max(x.abs())) / norm;
            let scale = (max / 127.0).max(1e-12);
            scales.push(scale);
            codes.extend(
                r.iter()
                    .map(|x| (x / norm / scale).round().clamp(-127.0, 127.0) as i8),
            );
        }
        Self::from_codes(dim, codes, scales, tv.special.clone(), tv.offsets.clone())
    }
    fn from_codes(
        dim: usize,
        codes: Vec<i8>,
        scales: Vec<f32>,
        special: Vec<bool>,
        offsets: Vec<(usize, usize)>,
    ) -> Self {
        let rows = codes
            .chunks_exact(dim)
            .zip(&scales)
            .flat_map(|(c, s)| c.iter().map(move |&x| x as f32 * s))
            .collect();
        Self {
            rows,
            dim,
            special,
            offsets,
            codes,
            scales,
        }
    }
    fn len(&self) -> usize {
        self.special.len()
    }
    fn row(&self, i: usize) -> &[f32] {
        &self.rows[i * self.dim..(i + 1) * self.dim]
    }
    /// The unit mean of the (non-special) tokens whose bytes lie in `span`; None when none do.
    fn pool(&self, span: std::ops::Range<usize>) -> Option<Vec<f32>> {
        let mut v = vec![0f32; self.dim];
        let mut n = 0;
        for i in 0..self.len() {
            let (s, e) = self.offsets[i];
            if !self.special[i] && s >= span.start && e <= span.end {
                for (a, b) in v.iter_mut().zip(self.row(i)) {
                    *a += b;
                }
                n += 1;
            }
        }
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        (n > 0 && norm > 0.0).then(|| v.iter().map(|x| x / norm).collect())
    }
}

const TOK_MAGIC: &[u8; 7] = b"SBTOK1\n";

fn encode_toks(dim: usize, toks: &HashMap<[u8; 32], Tok>) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(TOK_MAGIC);
    out.extend_from_slice(&(dim as u32).to_le_bytes());
    out.extend_from_slice(&(toks.len() as u32).to_le_bytes());
    for (k, t) in toks {
        out.extend_from_slice(k);
        out.extend_from_slice(&(t.len() as u32).to_le_bytes());
        for i in 0..t.len() {
            out.push(t.special[i] as u8);
            out.extend_from_slice(&(t.offsets[i].0 as u32).to_le_bytes());
            out.extend_from_slice(&(t.offsets[i].1 as u32).to_le_bytes());
            out.extend_from_slice(&t.scales[i].to_le_bytes());
            out.extend(t.codes[i * dim..(i + 1) * dim].iter().map(|&c| c as u8));
        }
    }
    out
}

fn decode_toks(b: &[u8], dim: usize) -> Option<HashMap<[u8; 32], Tok>> {
    let mut r = b.strip_prefix(TOK_MAGIC)?;
    let mut take = |n: usize| -> Option<&[u8]> {
        let (a, rest) = r.split_at_checked(n)?;
        r = rest;
        Some(a)
    };
    let u32_of = |b: &[u8]| u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    if u32_of(take(4)?) as usize != dim {
        return None;
    }
    let count = u32_of(take(4)?) as usize;
    let mut out = HashMap::with_capacity(count);
    for _ in 0..count {
        let key: [u8; 32] = take(32)?.try_into().ok()?;
        let n = u32_of(take(4)?) as usize;
        let (mut codes, mut scales, mut special, mut offsets) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for _ in 0..n {
            special.push(take(1)?[0] != 0);
            let s = u32_of(take(4)?) as usize;
            let e = u32_of(take(4)?) as usize;
            offsets.push((s, e));
            let sc = take(4)?;
            scales.push(f32::from_le_bytes([sc[0], sc[1], sc[2], sc[3]]));
            codes.extend(take(dim)?.iter().map(|&c| c as i8));
        }
        out.insert(key, Tok::from_codes(dim, codes, scales, special, offsets));
    }
    Some(out)
}

/// Byte spans of a query for late chunking (as `sentences` / `clauses` cut it; fewer than two
/// means the query is one span).
fn spans(q: &str, split: Split) -> Vec<std::ops::Range<usize>> {
    match split {
        Split::Sentences => sentences(q)
            .into_iter()
            .map(|p| {
                let start = p.as_ptr() as usize - q.as_ptr() as usize;
                start..start + p.len()
            })
            .collect(),
        Split::Clauses => {
            // index::clauses' cuts, as byte ranges: at . ? ! ; and newlines, after a comma,
            // around "then" / "afterwards" / "finally"; spans of at least three words.
            let mut out = Vec::new();
            let mut cur: Vec<std::ops::Range<usize>> = Vec::new();
            let flush = |cur: &mut Vec<std::ops::Range<usize>>,
                         out: &mut Vec<std::ops::Range<usize>>| {
                if cur.len() >= 3 {
                    out.push(cur[0].start..cur[cur.len() - 1].end);
                }
                cur.clear();
            };
            for sentence in q.split(['.', '?', '!', ';', '\n']) {
                let base = sentence.as_ptr() as usize - q.as_ptr() as usize;
                let mut pos = 0;
                for word in sentence.split_whitespace() {
                    let at = base + sentence[pos..].find(word).unwrap_or(0) + pos;
                    pos = at - base + word.len();
                    let lower = word.to_lowercase();
                    if matches!(lower.as_str(), "then" | "afterwards" | "finally") {
                        flush(&mut cur, &mut out);
                        continue;
                    }
                    cur.push(at..at + word.len());
                    if word.ends_with(',') {
                        flush(&mut cur, &mut out);
                    }
                }
                flush(&mut cur, &mut out);
            }
            out
        }
    }
}

/// Byte ranges of a tool's `dense_text`: its name words, and name words plus description.
fn doc_spans(d: &Doc) -> (std::ops::Range<usize>, std::ops::Range<usize>) {
    let prefix = if d.server_description.is_empty() {
        0
    } else {
        words(&d.server).len() + 2
    };
    let name = prefix..prefix + words(&d.tool).len();
    let desc_end = if d.description.is_empty() {
        name.end
    } else {
        name.end + 2 + d.description.len()
    };
    debug_assert!(d.dense_text().len() >= desc_end);
    (name.clone(), name.start..desc_end)
}

const SPECIAL: u8 = 1;
/// A stop word ([`is_function_word`]) or punctuation.
const STOP: u8 = 2;
const NAME: u8 = 4;
const NAME_DESC: u8 = 8;

/// Each token's category bits.
fn categories(
    t: &Tok,
    text: &str,
    doc: Option<(std::ops::Range<usize>, std::ops::Range<usize>)>,
) -> Vec<u8> {
    let b = text.as_bytes();
    (0..t.len())
        .map(|i| {
            if t.special[i] {
                return SPECIAL;
            }
            let (mut s, mut e) = t.offsets[i];
            let mut c = 0;
            if !text[s..e].chars().any(char::is_alphanumeric) {
                c |= STOP;
            } else {
                while s > 0 && b[s - 1].is_ascii_alphanumeric() {
                    s -= 1;
                }
                while e < b.len() && b[e].is_ascii_alphanumeric() {
                    e += 1;
                }
                if is_function_word(&text[s..e].to_lowercase()) {
                    c |= STOP;
                }
            }
            if let Some((name, nd)) = &doc {
                let (s, e) = t.offsets[i];
                if s >= name.start && e <= name.end {
                    c |= NAME;
                }
                if s >= nd.start && e <= nd.end {
                    c |= NAME_DESC;
                }
            }
            c
        })
        .collect()
}

/// The late-interaction features (names in [`FEATS`]): q→t is the mean over the query's tokens
/// of the best cosine with the tool's, t→q the mean over the tool's tokens of the best cosine
/// with the query's; "all" keeps [CLS]/[SEP], "ns" drops them, "content" drops stop words and
/// punctuation too; "namedesc" / "name" keep only the tool's name (and description) tokens.
const FEATS: &[&str] = &[
    "q->t all",
    "q->t ns",
    "q->t content",
    "q->t content/namedesc",
    "q->t content/name",
    "t->q all",
    "t->q ns",
    "t->q content",
    "t->q namedesc content",
    "t->q name content",
    "t->q namedesc ns",
    "t->q content idf",
    "q->t content idf",
    "t->q content best sentence",
    "t->q name content best sentence",
    "t->q name content idf",
    "t->q name content idf best sentence",
];

const NF: usize = 17;
type LateFeats = Vec<(usize, [f32; NF])>;

/// One side of a late interaction: its tokens, their categories, idf weights and (for a query)
/// the sentence each token lies in (`usize::MAX`: none).
struct Side<'a> {
    tok: &'a Tok,
    cat: &'a [u8],
    idf: &'a [f32],
    part: &'a [usize],
}

/// Lowercase alphanumeric runs of a text.
fn word_runs(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
}

/// BM25-style idf of each word over the tools' dense texts.
fn word_idf(docs: &[Doc]) -> HashMap<String, f32> {
    let mut df: HashMap<String, f32> = HashMap::new();
    for d in docs {
        let mut ws: Vec<String> = word_runs(&d.dense_text()).collect();
        ws.sort();
        ws.dedup();
        for w in ws {
            *df.entry(w).or_insert(0.0) += 1.0;
        }
    }
    let n = docs.len() as f32;
    df.into_iter()
        .map(|(w, df)| (w, (1.0 + (n - df + 0.5) / (df + 0.5)).ln()))
        .collect()
}

/// The word (alphanumeric run) around each token; empty for special and punctuation tokens.
fn token_words(t: &Tok, text: &str) -> Vec<String> {
    let b = text.as_bytes();
    (0..t.len())
        .map(|i| {
            let (mut s, mut e) = t.offsets[i];
            if t.special[i] || !text[s..e].chars().any(char::is_alphanumeric) {
                return String::new();
            }
            while s > 0 && b[s - 1].is_ascii_alphanumeric() {
                s -= 1;
            }
            while e < b.len() && b[e].is_ascii_alphanumeric() {
                e += 1;
            }
            text[s..e].to_lowercase()
        })
        .collect()
}

/// Each token's idf weight (a word the catalog lacks gets the highest idf of a df of 0).
fn token_idf(t: &Tok, text: &str, idf: &HashMap<String, f32>) -> Vec<f32> {
    let top = idf.values().copied().fold(0f32, f32::max);
    token_words(t, text)
        .iter()
        .map(|w| {
            if w.is_empty() {
                0.0
            } else {
                idf.get(w).copied().unwrap_or(top)
            }
        })
        .collect()
}

/// The sentence (index into `spans(text, Sentences)`) each token lies in; all 0 for a query of
/// one sentence; `usize::MAX` for tokens outside every sentence.
fn token_parts(t: &Tok, text: &str) -> Vec<usize> {
    let sp = spans(text, Split::Sentences);
    (0..t.len())
        .map(|i| {
            if sp.is_empty() {
                return 0;
            }
            let (s, e) = t.offsets[i];
            sp.iter()
                .position(|r| s >= r.start && e <= r.end && !t.special[i])
                .unwrap_or(usize::MAX)
        })
        .collect()
}

fn features(q: &Side, d: &Side) -> [f32; NF] {
    let (qc, dc) = (q.cat, d.cat);
    let (nq, nd) = (q.tok.len(), d.tok.len());
    let mut sim = vec![0f32; nq * nd];
    for i in 0..nq {
        for j in 0..nd {
            sim[i * nd + j] = switchboard_search::embed::dot(q.tok.row(i), d.tok.row(j));
        }
    }
    let all = |_: u8| true;
    let ns = |c: u8| c & SPECIAL == 0;
    let content = |c: u8| c & (SPECIAL | STOP) == 0;
    // Weighted mean over `outer` tokens of the best cosine with the `inner` ones.
    let maxsim = |q_outer: bool,
                  om: &dyn Fn(usize) -> bool,
                  im: &dyn Fn(usize) -> bool,
                  weight: &dyn Fn(usize) -> f32|
     -> f32 {
        let (no, ni) = if q_outer { (nq, nd) } else { (nd, nq) };
        let at = |o: usize, i: usize| {
            if q_outer {
                sim[o * nd + i]
            } else {
                sim[i * nd + o]
            }
        };
        let (mut sum, mut wsum) = (0f32, 0f32);
        for o in (0..no).filter(|&o| om(o)) {
            let best = (0..ni)
                .filter(|&i| im(i))
                .map(|i| at(o, i))
                .fold(f32::NEG_INFINITY, f32::max);
            if best.is_finite() {
                let w = weight(o);
                sum += w * best;
                wsum += w;
            }
        }
        if wsum > 0.0 { sum / wsum } else { 0.0 }
    };
    let one = |_: usize| 1.0;
    let q_all = |i: usize| all(qc[i]);
    let q_ns = |i: usize| ns(qc[i]);
    let q_content = |i: usize| content(qc[i]);
    let d_all = |j: usize| all(dc[j]);
    let d_ns = |j: usize| ns(dc[j]);
    let d_content = |j: usize| content(dc[j]);
    let d_nd_content = |j: usize| content(dc[j]) && dc[j] & NAME_DESC != 0;
    let d_name_content = |j: usize| content(dc[j]) && dc[j] & NAME != 0;
    let d_nd_ns = |j: usize| ns(dc[j]) && dc[j] & NAME_DESC != 0;
    let q_idf = |i: usize| q.idf[i];
    let d_idf = |j: usize| d.idf[j];
    let parts = q
        .part
        .iter()
        .copied()
        .filter(|&p| p != usize::MAX)
        .max()
        .map_or(0, |m| m + 1);
    let best_part = |dm: &dyn Fn(usize) -> bool, w: &dyn Fn(usize) -> f32| -> f32 {
        (0..parts.max(1))
            .map(|p| {
                let qp = |i: usize| q_content(i) && (parts == 0 || q.part[i] == p);
                maxsim(false, dm, &qp, w)
            })
            .fold(f32::NEG_INFINITY, f32::max)
    };
    [
        maxsim(true, &q_all, &d_all, &one),
        maxsim(true, &q_ns, &d_ns, &one),
        maxsim(true, &q_content, &d_content, &one),
        maxsim(true, &q_content, &d_nd_content, &one),
        maxsim(true, &q_content, &d_name_content, &one),
        maxsim(false, &d_all, &q_all, &one),
        maxsim(false, &d_ns, &q_ns, &one),
        maxsim(false, &d_content, &q_content, &one),
        maxsim(false, &d_nd_content, &q_content, &one),
        maxsim(false, &d_name_content, &q_content, &one),
        maxsim(false, &d_nd_ns, &q_ns, &one),
        maxsim(false, &d_content, &q_content, &d_idf),
        maxsim(true, &q_content, &d_content, &q_idf),
        best_part(&d_content, &one),
        best_part(&d_name_content, &one),
        maxsim(false, &d_name_content, &q_content, &d_idf),
        best_part(&d_name_content, &d_idf),
    ]
}

fn cfg_name(c: &Cfg) -> &str {
    &c.name
}

/// `--latency`: the added cost of the name coverage per query (see the module doc).
fn measure_latency(data: &Path, model: &Path, cache_dir: &Path, reps: usize) {
    use std::time::Instant;
    use switchboard_search::{BuildOptions, Index, Method, Tuning};
    let docs: Vec<Doc> = ["github", "docker-registry", "livemcpbench"]
        .iter()
        .flat_map(|c| load_docs(&data.join("catalogs").join(format!("{c}.json"))))
        .collect();
    let embedder = Embedder::load(model).unwrap_or_else(|e| panic!("{e}"));
    let cache = EmbeddingCache::in_dir(cache_dir);
    let build = |w: f32| {
        let t = Instant::now();
        let index = Index::build_with(
            &docs,
            BuildOptions {
                embedder: Some(&embedder),
                cache: Some(&cache),
                tuning: Tuning {
                    name_coverage_weight: w,
                    ..Tuning::default()
                },
                ..BuildOptions::default()
            },
        );
        eprintln!(
            "built ({w}) in {:.1} s: {}",
            t.elapsed().as_secs_f64(),
            index.dense_status()
        );
        index
    };
    let (off, on) = (build(0.0), build(0.2));
    let tokens_file = cache.tokens_file(embedder.id());
    println!(
        "{} tools; name tokens in memory {} bytes; token cache file {} bytes; vector cache {} bytes",
        docs.len(),
        on.name_token_bytes(),
        std::fs::metadata(&tokens_file).map_or(0, |m| m.len()),
        std::fs::metadata(cache.file(embedder.id())).map_or(0, |m| m.len()),
    );
    let mut queries = Vec::new();
    for (set, limit) in [
        ("metatool-single", 500),
        ("metatool-multi", usize::MAX),
        ("livemcpbench", usize::MAX),
    ] {
        let text = std::fs::read_to_string(data.join("eval").join(format!("{set}.jsonl")))
            .unwrap_or_else(|e| panic!("{e}"));
        let qs = parse_queries(set, &text).unwrap_or_else(|e| panic!("{e}"));
        queries.extend(qs.into_iter().take(limit).map(|q| q.query));
    }
    for q in queries.iter().take(20) {
        off.search(q, 10, Method::Hybrid);
        on.search(q, 10, Method::Hybrid);
    }
    let time = |index: &Index, q: &str| {
        let t = Instant::now();
        std::hint::black_box(index.search(q, 10, Method::Hybrid));
        t.elapsed().as_secs_f64() * 1e3
    };
    let (mut a, mut b, mut d) = (Vec::new(), Vec::new(), Vec::new());
    for (n, q) in queries.iter().enumerate() {
        let (mut best_off, mut best_on) = (f64::INFINITY, f64::INFINITY);
        for r in 0..reps.max(1) {
            if (n + r) % 2 == 0 {
                best_off = best_off.min(time(&off, q));
                best_on = best_on.min(time(&on, q));
            } else {
                best_on = best_on.min(time(&on, q));
                best_off = best_off.min(time(&off, q));
            }
        }
        a.push(best_off);
        b.push(best_on);
        d.push(best_on - best_off);
    }
    // The encoder pass alone, pooled only against pooled with token vectors.
    let (mut e1, mut e2) = (Vec::new(), Vec::new());
    let strip = |q: &str| Strip::Lucene(false).apply(q);
    for (n, q) in queries.iter().enumerate() {
        let q = strip(q);
        let (mut b1, mut b2) = (f64::INFINITY, f64::INFINITY);
        for r in 0..reps.max(1) {
            let t1 = |b: &mut f64| {
                let t = Instant::now();
                std::hint::black_box(embedder.embed_one(&q).ok());
                *b = b.min(t.elapsed().as_secs_f64() * 1e3);
            };
            let t2 = |b: &mut f64| {
                let t = Instant::now();
                std::hint::black_box(embedder.embed_tokens_one(&q).ok());
                *b = b.min(t.elapsed().as_secs_f64() * 1e3);
            };
            if (n + r) % 2 == 0 {
                t1(&mut b1);
                t2(&mut b2);
            } else {
                t2(&mut b2);
                t1(&mut b1);
            }
        }
        e1.push(b1);
        e2.push(b2 - b1);
    }
    let p = |v: &mut Vec<f64>, q: f64| {
        v.sort_by(f64::total_cmp);
        v[((v.len() - 1) as f64 * q).round() as usize]
    };
    let mean = d.iter().sum::<f64>() / d.len() as f64;
    println!(
        "{} queries, best of {reps}: hybrid p50 off {:.3} ms, on {:.3} ms; added per query p50 {:.3} ms, mean {:.3} ms, p90 {:.3} ms",
        queries.len(),
        p(&mut a, 0.5),
        p(&mut b, 0.5),
        p(&mut d.clone(), 0.5),
        mean,
        p(&mut d, 0.9),
    );
    println!(
        "encoder pass p50 {:.3} ms; with token vectors added p50 {:.3} ms, mean {:.3} ms",
        p(&mut e1, 0.5),
        p(&mut e2.clone(), 0.5),
        e2.iter().sum::<f64>() / e2.len() as f64,
    );
}

/// `--index-ab`: the index's own hybrid ranking with each name-coverage weight.
fn index_ab_run(data: &Path, model: &Path, cache_dir: &Path, weights: &str, limit: usize) {
    use switchboard_search::{BuildOptions, Index, Method, Tuning};
    let embedder = Embedder::load(model).unwrap_or_else(|e| panic!("{e}"));
    let cache = EmbeddingCache::in_dir(cache_dir);
    let weights: Vec<f32> = weights.split(',').filter_map(|w| w.parse().ok()).collect();
    for (name, catalog, limit) in [
        ("livemcpbench", "livemcpbench", usize::MAX),
        ("metatool-multi", "metatool", usize::MAX),
        ("metatool-single", "metatool", limit),
    ] {
        let set = load_set(name, data, catalog, limit);
        for &w in &weights {
            let index = Index::build_with(
                &set.docs,
                BuildOptions {
                    embedder: Some(&embedder),
                    cache: Some(&cache),
                    tuning: Tuning {
                        name_coverage_weight: w,
                        ..Tuning::default()
                    },
                    ..BuildOptions::default()
                },
            );
            let mut sums = [[0f64; 3]; 2];
            let mut counts = [0usize; 2];
            for (q, gold, line) in &set.queries {
                let hits = index.search(q, 100, Method::Hybrid);
                let ranking: Vec<(&str, &str)> = hits
                    .iter()
                    .map(|h| (h.server.as_str(), h.tool.as_str()))
                    .collect();
                let s = score_ranking(gold, &ranking);
                let half = line % 2;
                sums[half][0] += s.recall[2];
                sums[half][1] += s.recall[3];
                sums[half][2] += s.reciprocal_rank;
                counts[half] += 1;
            }
            let n = (counts[0] + counts[1]) as f64;
            println!(
                "{name} weight {w}: R@5 {:.3} R@10 {:.3} MRR {:.3} (R@5 even {:.3} / odd {:.3}) [{}]",
                (sums[0][0] + sums[1][0]) / n,
                (sums[0][1] + sums[1][1]) / n,
                (sums[0][2] + sums[1][2]) / n,
                sums[0][0] / counts[0].max(1) as f64,
                sums[1][0] / counts[1].max(1) as f64,
                index.dense_status(),
            );
        }
    }
}
