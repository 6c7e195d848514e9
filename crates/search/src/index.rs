//! The search index over a catalog's tools: BM25F always, sentence embeddings when a model is
//! given, and the three ways to rank with them.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use switchboard_core::hash::ContentHash;

use crate::bm25::Bm25;
use crate::cache::{EmbeddingCache, Vectors};
use crate::doc::Doc;
use crate::embed::{Embedder, dot};
use crate::error::SearchError;
use crate::fusion;

/// How to rank.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Method {
    /// BM25F only.
    Lexical,
    /// Embedding similarity only.
    Dense,
    /// Both, blended.
    Hybrid,
}

impl Method {
    /// Its lowercase name, as the CLI spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Lexical => "lexical",
            Method::Dense => "dense",
            Method::Hybrid => "hybrid",
        }
    }
}

impl std::str::FromStr for Method {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "lexical" => Ok(Method::Lexical),
            "dense" => Ok(Method::Dense),
            "hybrid" => Ok(Method::Hybrid),
            other => Err(format!(
                "unknown method {other:?} (expected lexical, dense or hybrid)"
            )),
        }
    }
}

/// One retrieved tool.
#[derive(Clone, Debug, PartialEq)]
pub struct Hit {
    /// Its server.
    pub server: String,
    /// Its name on that server.
    pub tool: String,
    /// Higher is better; comparable only within one search.
    pub score: f32,
}

/// Whether dense ranking is available, and if not, why.
#[derive(Clone, Debug, PartialEq)]
pub enum DenseStatus {
    /// Embeddings are ready.
    Ready {
        /// The model's id.
        model: String,
        /// Documents embedded during this build.
        embedded: usize,
        /// Documents whose vectors came from the cache.
        cached: usize,
    },
    /// No model was given: dense and hybrid searches rank lexically.
    NoModel,
    /// Embedding the catalog failed: dense and hybrid searches rank lexically.
    Failed(String),
}

impl std::fmt::Display for DenseStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DenseStatus::Ready {
                model,
                embedded,
                cached,
            } => write!(
                f,
                "dense ready ({model}; {embedded} embedded, {cached} from cache)"
            ),
            DenseStatus::NoModel => f.write_str("lexical only: no embedding model"),
            DenseStatus::Failed(why) => write!(f, "lexical only: embedding failed: {why}"),
        }
    }
}

/// Knobs of hybrid ranking. The defaults are what RESULTS.md reports.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tuning {
    /// Share of the dense score in the blend (the rest is lexical).
    pub dense_weight: f32,
    /// Share of a server's best tool score added to each of its tools.
    pub server_weight: f32,
    /// Also embed each sentence of a multi-sentence query and let a tool match its best one
    /// (task descriptions ask for several things; each tool serves one of them).
    pub split_sentences: bool,
}

impl Default for Tuning {
    fn default() -> Self {
        Self {
            dense_weight: 0.7,
            server_weight: 0.3,
            // Off: +1 point of recall@5 on task-style queries for twice the query latency.
            split_sentences: false,
        }
    }
}

/// Options of [`Index::build_with`].
#[derive(Default)]
pub struct BuildOptions<'a> {
    /// The embedding model; without it the index is lexical only.
    pub embedder: Option<&'a Embedder>,
    /// Where to read and keep document vectors.
    pub cache: Option<&'a EmbeddingCache>,
    /// Called as `(done, total)` while documents are embedded.
    pub progress: Option<&'a mut dyn FnMut(usize, usize)>,
    /// Hybrid ranking knobs.
    pub tuning: Tuning,
}

struct Dense {
    embedder: Embedder,
    /// Row-major, one unit vector of `dim` floats per document.
    vectors: Vec<f32>,
    dim: usize,
}

/// A searchable index of tools.
pub struct Index {
    docs: Vec<Doc>,
    bm25: Bm25,
    dense: Option<Dense>,
    status: DenseStatus,
    issues: Vec<SearchError>,
    server_of: Vec<u32>,
    servers: usize,
    tuning: Tuning,
    build_time: Duration,
}

impl std::fmt::Debug for Index {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Index")
            .field("docs", &self.docs.len())
            .field("status", &self.status)
            .finish()
    }
}

impl Index {
    /// Index documents, embedding them when a model is given (no cache, no progress).
    pub fn build(docs: &[Doc], embedder: Option<&Embedder>) -> Index {
        Self::build_with(
            docs,
            BuildOptions {
                embedder,
                ..BuildOptions::default()
            },
        )
    }

    /// Index documents with options. Never fails: an embedding failure leaves a lexical index
    /// and says why in [`Self::dense_status`].
    pub fn build_with(docs: &[Doc], options: BuildOptions<'_>) -> Index {
        let start = Instant::now();
        let bm25 = Bm25::build(docs);
        let mut names: HashMap<&str, u32> = HashMap::new();
        let server_of = docs
            .iter()
            .map(|d| {
                let next = names.len() as u32;
                *names.entry(d.server.as_str()).or_insert(next)
            })
            .collect();
        let servers = names.len();
        let mut issues = Vec::new();
        let (dense, status) = match options.embedder {
            None => (None, DenseStatus::NoModel),
            Some(e) => match embed_docs(docs, e, options.cache, options.progress, &mut issues) {
                Ok((dense, status)) => (Some(dense), status),
                Err(err) => {
                    let status = DenseStatus::Failed(err.to_string());
                    issues.push(err);
                    (None, status)
                }
            },
        };
        Index {
            docs: docs.to_vec(),
            bm25,
            dense,
            status,
            issues,
            server_of,
            servers,
            tuning: options.tuning,
            build_time: start.elapsed(),
        }
    }

    /// Whether dense ranking is available.
    pub fn dense_status(&self) -> &DenseStatus {
        &self.status
    }

    /// Problems met while building that did not stop it (e.g. the cache could not be written).
    pub fn issues(&self) -> &[SearchError] {
        &self.issues
    }

    /// The method a search with `method` really uses: lexical when no embeddings exist.
    pub fn effective_method(&self, method: Method) -> Method {
        if self.dense.is_none() {
            Method::Lexical
        } else {
            method
        }
    }

    /// How long building took (including embedding or reading the cache).
    pub fn build_time(&self) -> Duration {
        self.build_time
    }

    /// The indexed documents, in id order.
    pub fn docs(&self) -> &[Doc] {
        &self.docs
    }

    /// The best `k` tools for a query, best first. Deterministic for a given index and query.
    pub fn search(&self, query: &str, k: usize, method: Method) -> Vec<Hit> {
        let scores = self.scores(query, method);
        let lexical = self.effective_method(method) == Method::Lexical;
        fusion::top_k(&scores, k)
            .into_iter()
            // A lexical score of 0 means no query word occurs: not a hit.
            .filter(|&i| !(lexical && scores[i] <= 0.0))
            .map(|i| Hit {
                server: self.docs[i].server.clone(),
                tool: self.docs[i].tool.clone(),
                score: scores[i],
            })
            .collect()
    }

    /// A score for every document under a method.
    pub fn scores(&self, query: &str, method: Method) -> Vec<f32> {
        let dense = match (self.effective_method(method), &self.dense) {
            (Method::Lexical, _) | (_, None) => return self.bm25.scores(query),
            (_, Some(d)) => d,
        };
        let mut texts = vec![query];
        if self.tuning.split_sentences {
            texts.extend(sentences(query));
        }
        let Ok(qs) = dense.embedder.embed(&texts, &mut |_| {}) else {
            return self.bm25.scores(query);
        };
        let cosine: Vec<f32> = dense
            .vectors
            .chunks_exact(dense.dim)
            .map(|v| {
                qs.iter()
                    .map(|q| dot(v, q))
                    .fold(f32::NEG_INFINITY, f32::max)
            })
            .collect();
        let fused = match method {
            Method::Dense => cosine,
            _ => fusion::blend(
                &fusion::by_max(&self.bm25.scores(query)),
                &fusion::min_max(&cosine),
                self.tuning.dense_weight,
            ),
        };
        fusion::server_boost(
            &fused,
            &self.server_of,
            self.servers,
            self.tuning.server_weight,
        )
    }
}

/// The sentences of a query when it has more than one (each of at least three words).
fn sentences(query: &str) -> Vec<&str> {
    let parts: Vec<&str> = query
        .split(['.', '?', '!', ';', '\n'])
        .map(str::trim)
        .filter(|p| p.split_whitespace().count() >= 3)
        .collect();
    if parts.len() > 1 { parts } else { Vec::new() }
}

fn embed_docs(
    docs: &[Doc],
    embedder: &Embedder,
    cache: Option<&EmbeddingCache>,
    mut progress: Option<&mut dyn FnMut(usize, usize)>,
    issues: &mut Vec<SearchError>,
) -> Result<(Dense, DenseStatus), SearchError> {
    let dim = embedder.dim();
    let texts: Vec<String> = docs.iter().map(Doc::dense_text).collect();
    let keys: Vec<[u8; 32]> = texts
        .iter()
        .map(|t| *ContentHash::of_bytes(t.as_bytes()).as_bytes())
        .collect();
    let mut known: Vectors = cache
        .map(|c| c.load(embedder.id(), dim))
        .unwrap_or_default();
    let mut missing: Vec<usize> = Vec::new();
    let mut queued = std::collections::HashSet::new();
    for (i, key) in keys.iter().enumerate() {
        if !known.contains_key(key) && queued.insert(*key) {
            missing.push(i);
        }
    }
    let total = missing.len();
    if let Some(p) = progress.as_mut() {
        p(0, total);
    }
    if total > 0 {
        let batch: Vec<&str> = missing.iter().map(|&i| texts[i].as_str()).collect();
        let vectors = embedder.embed(&batch, &mut |done| {
            if let Some(p) = progress.as_mut() {
                p(done, total);
            }
        })?;
        for (&i, v) in missing.iter().zip(vectors) {
            known.insert(keys[i], v);
        }
        if let Some(c) = cache
            && let Err(e) = c.store(embedder.id(), dim, &known)
        {
            issues.push(e);
        }
    }
    let mut vectors = Vec::with_capacity(docs.len() * dim);
    for key in &keys {
        vectors.extend_from_slice(&known[key]);
    }
    let status = DenseStatus::Ready {
        model: embedder.id().to_string(),
        embedded: total,
        cached: docs.len() - total,
    };
    Ok((
        Dense {
            embedder: embedder.clone(),
            vectors,
            dim,
        },
        status,
    ))
}
