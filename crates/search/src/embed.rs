//! Sentence embeddings in Rust: a BERT or MPNet sentence-transformers model (all-MiniLM-L6-v2,
//! all-mpnet-base-v2 or another such directory with model.safetensors, tokenizer.json and
//! config.json), pooled as its sentence-transformers Pooling module says (mean over the tokens,
//! or the first token) and L2-normalized, as sentence-transformers does. CPU only; the encoder
//! is [`crate::bert`], a plain-Rust forward pass, by default with int8 matrices
//! ([`Precision::Int8`]); `SWITCHBOARD_ENCODER=f32` (or [`Embedder::load_with`]) selects the
//! f32 reference. The two give slightly different vectors, so they have different model ids and
//! never share cached vectors.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use sha2::{Digest, Sha256};
use tokenizers::{Tokenizer, TruncationParams};

use crate::bert::{Bert, Config};
pub use crate::bert::{Pooling, Precision};
use crate::error::SearchError;

/// One forward pass over a batch of token id sequences, one output per sequence.
type BatchFn<T> = dyn Fn(&Bert, &[&[u32]]) -> Result<Vec<T>, String> + Sync;

/// Texts per forward pass when embedding many (sequences are packed without padding).
const BATCH: usize = 16;

/// The environment variable that picks the encoder's precision in [`Embedder::load`].
pub const PRECISION_ENV: &str = "SWITCHBOARD_ENCODER";

/// A loaded sentence embedding model. Cheap to clone (shared).
#[derive(Clone)]
pub struct Embedder {
    inner: Arc<Inner>,
}

struct Inner {
    model: Bert,
    tokenizer: Tokenizer,
    id: String,
    dim: usize,
    dir: PathBuf,
}

impl std::fmt::Debug for Embedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Embedder")
            .field("id", &self.inner.id)
            .field("dim", &self.inner.dim)
            .field("dir", &self.inner.dir)
            .finish()
    }
}

/// An entry of a sentence-transformers `modules.json`.
#[derive(serde::Deserialize)]
struct Module {
    #[serde(default)]
    path: String,
    #[serde(rename = "type", default)]
    kind: String,
}

/// The modes of a sentence-transformers Pooling module's `config.json`.
#[derive(serde::Deserialize, Default)]
struct PoolingConfig {
    #[serde(default)]
    pooling_mode_cls_token: bool,
    #[serde(default)]
    pooling_mode_mean_tokens: bool,
    #[serde(default)]
    pooling_mode_max_tokens: bool,
    #[serde(default)]
    pooling_mode_mean_sqrt_len_tokens: bool,
    #[serde(default)]
    pooling_mode_weightedmean_tokens: bool,
    #[serde(default)]
    pooling_mode_lasttoken: bool,
}

/// The part of sentence_bert_config.json we read.
#[derive(serde::Deserialize)]
struct SentenceConfig {
    max_seq_length: Option<usize>,
}

impl Embedder {
    /// Load a model directory. Nothing is downloaded: every file must be there. The precision
    /// is [`Precision::Int8`] unless `SWITCHBOARD_ENCODER` says `f32` (any other value than
    /// `f32`, `int8` or empty is an error).
    pub fn load(dir: &Path) -> Result<Self, SearchError> {
        Self::load_with(dir, precision_from_env()?)
    }

    /// Load a model directory with an explicit precision.
    pub fn load_with(dir: &Path, precision: Precision) -> Result<Self, SearchError> {
        let file = |name: &'static str| -> Result<PathBuf, SearchError> {
            let path = dir.join(name);
            if path.is_file() {
                Ok(path)
            } else {
                Err(SearchError::ModelMissing {
                    dir: dir.to_path_buf(),
                    file: name,
                })
            }
        };
        let [config, tokenizer, weights] = MODEL_FILES;
        let config_path = file(config)?;
        let tokenizer_path = file(tokenizer)?;
        let weights_path = file(weights)?;
        let read = |path: &Path| {
            std::fs::read(path).map_err(|source| SearchError::Read {
                path: path.to_path_buf(),
                source,
            })
        };
        let config_bytes = read(&config_path)?;
        let config: Config =
            serde_json::from_slice(&config_bytes).map_err(|source| SearchError::Config {
                path: config_path.clone(),
                source,
            })?;
        let sentence_path = dir.join("sentence_bert_config.json");
        let max_len = if sentence_path.is_file() {
            let s: SentenceConfig =
                serde_json::from_slice(&read(&sentence_path)?).map_err(|source| {
                    SearchError::Config {
                        path: sentence_path.clone(),
                        source,
                    }
                })?;
            s.max_seq_length
        } else {
            None
        };

        let pooling = read_pooling(dir)?;
        let tokenizer_bytes = read(&tokenizer_path)?;
        let tok_err = |message: String| SearchError::Tokenizer {
            path: tokenizer_path.clone(),
            message,
        };
        let mut tokenizer =
            Tokenizer::from_bytes(&tokenizer_bytes).map_err(|e| tok_err(e.to_string()))?;
        // tokenizer.json files often pad to a fixed length (128 for MiniLM); sequences are
        // packed without padding here, and truncated where sentence-transformers does.
        tokenizer.with_padding(None);

        let weights = read(&weights_path)?;
        let id = model_id(
            dir,
            &config_bytes,
            &tokenizer_bytes,
            &weights,
            (precision, pooling),
        );
        let dim = config.hidden_size;
        let model = Bert::load(config, &weights, precision)
            .map_err(|message| SearchError::Model {
                stage: "loading model.safetensors",
                message,
            })?
            .with_pooling(pooling);
        let max_len = max_len
            .unwrap_or(model.max_positions())
            .min(model.max_positions());
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: max_len,
                ..TruncationParams::default()
            }))
            .map_err(|e| tok_err(e.to_string()))?;
        Ok(Self {
            inner: Arc::new(Inner {
                model,
                tokenizer,
                id,
                dim,
                dir: dir.to_path_buf(),
            }),
        })
    }

    /// A short stable id: the directory name and a hash of config, tokenizer and weights, plus
    /// `-int8` for the int8 encoder (its vectors differ slightly from the f32 ones).
    pub fn id(&self) -> &str {
        &self.inner.id
    }

    /// How the encoder multiplies its matrices.
    pub fn precision(&self) -> Precision {
        self.inner.model.precision()
    }

    /// Embedding width.
    pub fn dim(&self) -> usize {
        self.inner.dim
    }

    /// The model family: `bert` or `mpnet`.
    pub fn architecture(&self) -> &str {
        self.inner.model.architecture()
    }

    /// How the model pools token vectors into the sentence vector.
    pub fn pooling(&self) -> Pooling {
        self.inner.model.pooling()
    }

    /// The directory the model came from.
    pub fn dir(&self) -> &Path {
        &self.inner.dir
    }

    /// Embed one text: a unit vector of [`Self::dim`] floats. Single-threaded.
    pub fn embed_one(&self, text: &str) -> Result<Vec<f32>, SearchError> {
        let ids = self.tokenize(text)?;
        Ok(self
            .inner
            .model
            .embed(&[&ids])
            .map_err(|message| SearchError::Model {
                stage: "forward pass",
                message,
            })?
            .pop()
            .unwrap_or_else(|| vec![0.0; self.dim()]))
    }

    /// Token ids of a text, with the model's special tokens.
    pub fn tokenize(&self, text: &str) -> Result<Vec<u32>, SearchError> {
        let inner = &*self.inner;
        inner
            .tokenizer
            .encode(text, true)
            .map(|e| e.get_ids().to_vec())
            .map_err(|e| SearchError::Tokenizer {
                path: inner.dir.join("tokenizer.json"),
                message: e.to_string(),
            })
    }

    /// Embed many texts on up to `threads` threads (each text's vector is the same as
    /// [`Self::embed_one`]'s); `progress(done)` after each batch of a thread.
    pub fn embed(
        &self,
        texts: &[&str],
        progress: &mut dyn FnMut(usize),
    ) -> Result<Vec<Vec<f32>>, SearchError> {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        self.embed_threads(texts, threads, progress)
    }

    /// [`Self::embed`] with an explicit thread count.
    pub fn embed_threads(
        &self,
        texts: &[&str],
        threads: usize,
        progress: &mut dyn FnMut(usize),
    ) -> Result<Vec<Vec<f32>>, SearchError> {
        let ids = texts
            .iter()
            .map(|t| self.tokenize(t))
            .collect::<Result<Vec<_>, _>>()?;
        self.batches(&ids, threads, progress, &|model, seqs| model.embed(seqs))
    }

    /// Each text's pooled vector (the same bits as [`Self::embed_threads`]'s) with its
    /// final-layer token vectors, token ids and byte offsets, on up to `threads` threads.
    pub fn embed_tokens_threads(
        &self,
        texts: &[&str],
        threads: usize,
        progress: &mut dyn FnMut(usize),
    ) -> Result<Vec<TokenVectors>, SearchError> {
        let encodings = texts
            .iter()
            .map(|t| self.encode(t))
            .collect::<Result<Vec<_>, _>>()?;
        let ids: Vec<Vec<u32>> = encodings.iter().map(|e| e.get_ids().to_vec()).collect();
        let outs = self.batches(&ids, threads, progress, &|model, seqs| {
            model.embed_tokens(seqs)
        })?;
        Ok(outs
            .into_iter()
            .zip(encodings)
            .map(|((pooled, tokens), e)| self.token_vectors(&e, pooled, tokens))
            .collect())
    }

    /// [`Self::embed_tokens_threads`] for one text, on this thread (as [`Self::embed_one`]).
    pub fn embed_tokens_one(&self, text: &str) -> Result<TokenVectors, SearchError> {
        let e = self.encode(text)?;
        let model_err = |message| SearchError::Model {
            stage: "forward pass",
            message,
        };
        let (pooled, tokens) = self
            .inner
            .model
            .embed_tokens(&[e.get_ids()])
            .map_err(model_err)?
            .pop()
            .ok_or_else(|| model_err("no output".into()))?;
        Ok(self.token_vectors(&e, pooled, tokens))
    }

    /// A text's encoder outputs with what its encoding says of each token.
    fn token_vectors(
        &self,
        e: &tokenizers::Encoding,
        pooled: Vec<f32>,
        tokens: Vec<f32>,
    ) -> TokenVectors {
        TokenVectors {
            pooled,
            tokens,
            ids: e.get_ids().to_vec(),
            special: e
                .get_special_tokens_mask()
                .iter()
                .map(|&m| m != 0)
                .collect(),
            offsets: e.get_offsets().to_vec(),
            dim: self.dim(),
        }
    }

    /// A text's encoding (ids, offsets, special-token mask), with the model's special tokens.
    fn encode(&self, text: &str) -> Result<tokenizers::Encoding, SearchError> {
        let inner = &*self.inner;
        inner
            .tokenizer
            .encode(text, true)
            .map_err(|e| SearchError::Tokenizer {
                path: inner.dir.join("tokenizer.json"),
                message: e.to_string(),
            })
    }

    /// Run `f` over batches of token id sequences on up to `threads` threads; one output per
    /// sequence, in order.
    fn batches<T: Send + Default + Clone>(
        &self,
        ids: &[Vec<u32>],
        threads: usize,
        progress: &mut dyn FnMut(usize),
        f: &BatchFn<T>,
    ) -> Result<Vec<T>, SearchError> {
        // Deal batches round-robin by cost (attention grows with the square of the length),
        // longest first, so threads finish together.
        let mut order: Vec<usize> = (0..ids.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(ids[i].len()));
        let batches: Vec<&[usize]> = order.chunks(BATCH).collect();
        let threads = threads.clamp(1, batches.len().max(1));
        let (tx, rx) = std::sync::mpsc::channel::<Result<Vec<(usize, T)>, String>>();
        let mut out = vec![T::default(); ids.len()];
        let mut failure = None;
        std::thread::scope(|scope| {
            for t in 0..threads {
                let tx = tx.clone();
                let batches = &batches;
                let model = &self.inner.model;
                scope.spawn(move || {
                    for batch in batches.iter().skip(t).step_by(threads) {
                        let seqs: Vec<&[u32]> = batch.iter().map(|&i| ids[i].as_slice()).collect();
                        let result =
                            f(model, &seqs).map(|vs| batch.iter().copied().zip(vs).collect());
                        let failed = result.is_err();
                        if tx.send(result).is_err() || failed {
                            return;
                        }
                    }
                });
            }
            drop(tx);
            let mut done = 0;
            for result in rx {
                match result {
                    Ok(pairs) => {
                        done += pairs.len();
                        for (i, v) in pairs {
                            out[i] = v;
                        }
                        progress(done);
                    }
                    Err(e) => failure = Some(e),
                }
            }
        });
        match failure {
            Some(message) => Err(SearchError::Model {
                stage: "forward pass",
                message,
            }),
            None => Ok(out),
        }
    }
}

/// A text's encoder output at the token level ([`Embedder::embed_tokens_threads`]).
#[derive(Clone, Debug, Default)]
pub struct TokenVectors {
    /// The mean-pooled unit vector ([`Embedder::embed_one`]'s).
    pub pooled: Vec<f32>,
    /// Final-layer token vectors, `ids.len() × dim` floats, row-major, not normalized.
    pub tokens: Vec<f32>,
    /// Token ids, the model's special tokens ([CLS], [SEP]) included.
    pub ids: Vec<u32>,
    /// Whether each token is a special token.
    pub special: Vec<bool>,
    /// Each token's byte range in the text ((0, 0) for special tokens).
    pub offsets: Vec<(usize, usize)>,
    /// Width of a token vector.
    pub dim: usize,
}

impl TokenVectors {
    /// Token `i`'s vector.
    pub fn row(&self, i: usize) -> &[f32] {
        &self.tokens[i * self.dim..(i + 1) * self.dim]
    }

    /// Number of tokens.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// No tokens at all.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }
}

/// The precision named by `SWITCHBOARD_ENCODER` (int8 when unset or empty).
fn precision_from_env() -> Result<Precision, SearchError> {
    parse_precision(std::env::var(PRECISION_ENV))
}

/// [`precision_from_env`] on the variable's value.
fn parse_precision(value: Result<String, std::env::VarError>) -> Result<Precision, SearchError> {
    match value {
        Err(std::env::VarError::NotPresent) => Ok(Precision::default()),
        Ok(v) if v.trim().is_empty() => Ok(Precision::default()),
        Ok(v) => Precision::parse(v.trim()).ok_or_else(|| SearchError::Model {
            stage: "choosing the encoder precision",
            message: format!("{PRECISION_ENV}={v:?}: expected f32 or int8"),
        }),
        Err(e) => Err(SearchError::Model {
            stage: "choosing the encoder precision",
            message: format!("{PRECISION_ENV}: {e}"),
        }),
    }
}

/// How the model directory's sentence-transformers Pooling module (found through
/// `modules.json`) pools: mean or first token. A directory without those files pools by the
/// mean, as all-MiniLM-L6-v2 does; a pooling mode the encoder does not have is an error rather
/// than vectors of another kind than the model was trained for.
fn read_pooling(dir: &Path) -> Result<Pooling, SearchError> {
    let modules_path = dir.join("modules.json");
    let Ok(bytes) = std::fs::read(&modules_path) else {
        return Ok(Pooling::Mean);
    };
    let config_err = |path: &Path, source| SearchError::Config {
        path: path.to_path_buf(),
        source,
    };
    let modules: Vec<Module> =
        serde_json::from_slice(&bytes).map_err(|e| config_err(&modules_path, e))?;
    let Some(module) = modules.iter().find(|m| m.kind.ends_with(".Pooling")) else {
        return Ok(Pooling::Mean);
    };
    let path = dir.join(&module.path).join("config.json");
    let Ok(bytes) = std::fs::read(&path) else {
        return Ok(Pooling::Mean);
    };
    let c: PoolingConfig = serde_json::from_slice(&bytes).map_err(|e| config_err(&path, e))?;
    let others = [
        (c.pooling_mode_max_tokens, "max"),
        (c.pooling_mode_mean_sqrt_len_tokens, "mean_sqrt_len"),
        (c.pooling_mode_weightedmean_tokens, "weightedmean"),
        (c.pooling_mode_lasttoken, "lasttoken"),
    ];
    let extra: Vec<&str> = others
        .iter()
        .filter(|(on, _)| *on)
        .map(|(_, n)| *n)
        .collect();
    let unsupported = |modes: &str| SearchError::Model {
        stage: "reading the pooling mode",
        message: format!(
            "{}: pooling {modes} is not supported (mean or cls)",
            path.display()
        ),
    };
    match (c.pooling_mode_mean_tokens, c.pooling_mode_cls_token) {
        _ if !extra.is_empty() => Err(unsupported(&extra.join(" + "))),
        (true, true) => Err(unsupported("mean + cls")),
        (false, true) => Ok(Pooling::Cls),
        _ => Ok(Pooling::Mean),
    }
}

fn model_id(
    dir: &Path,
    config: &[u8],
    tokenizer: &[u8],
    weights: &[u8],
    (precision, pooling): (Precision, Pooling),
) -> String {
    let mut h = Sha256::new();
    h.update(config);
    h.update(tokenizer);
    h.update(weights);
    // Mean pooling keeps the ids caches were written under before pooling was read.
    if pooling == Pooling::Cls {
        h.update(b"pooling: cls");
    }
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "model".into());
    let name: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let hash = hex::encode(h.finalize());
    match precision {
        // The f32 id is the one caches were written under before int8 existed.
        Precision::F32 => format!("{name}-{}", &hash[..16]),
        Precision::Int8 => format!("{name}-{}-int8", &hash[..16]),
    }
}

/// Cosine similarity of two unit vectors (their dot product).
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    crate::linear::dot(a, b)
}

/// The files a model directory must hold for [`Embedder::load`] to read it.
pub const MODEL_FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];

/// Where switchboard looks for the default model when none is named:
/// `<user data dir>/switchboard/models/all-MiniLM-L6-v2` (`~/.local/share/...` on Linux).
pub fn default_model_dir() -> Option<PathBuf> {
    directories::ProjectDirs::from("", "", "switchboard")
        .map(|d| d.data_dir().join("models").join("all-MiniLM-L6-v2"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::env::VarError;

    #[test]
    fn precision_from_the_environment() {
        let p = |v: Result<&str, VarError>| parse_precision(v.map(str::to_string));
        assert_eq!(p(Err(VarError::NotPresent)).unwrap(), Precision::Int8);
        assert_eq!(p(Ok("")).unwrap(), Precision::Int8);
        assert_eq!(p(Ok("f32")).unwrap(), Precision::F32);
        assert_eq!(p(Ok(" int8 ")).unwrap(), Precision::Int8);
        let err = p(Ok("fp16")).unwrap_err().to_string();
        assert!(
            err.contains("SWITCHBOARD_ENCODER") && err.contains("f32 or int8"),
            "{err}"
        );
    }

    #[test]
    fn model_ids_differ_by_precision() {
        let dir = Path::new("/models/all-MiniLM-L6-v2");
        let f = model_id(dir, b"c", b"t", b"w", (Precision::F32, Pooling::Mean));
        let q = model_id(dir, b"c", b"t", b"w", (Precision::Int8, Pooling::Mean));
        assert_eq!(q, format!("{f}-int8"));
        assert!(f.starts_with("all-MiniLM-L6-v2-"));
    }

    #[test]
    fn model_ids_differ_by_pooling() {
        let dir = Path::new("/models/bge");
        let mean = model_id(dir, b"c", b"t", b"w", (Precision::F32, Pooling::Mean));
        let cls = model_id(dir, b"c", b"t", b"w", (Precision::F32, Pooling::Cls));
        assert_ne!(mean, cls);
    }

    /// A model directory's pooling files: `modules.json` naming a Pooling module in `1_Pooling`
    /// with `config` as its config.json (`None`: no modules.json at all).
    fn pooling_dir(config: Option<&str>) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        if let Some(config) = config {
            let modules = r#"[{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
                {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}]"#;
            std::fs::write(dir.path().join("modules.json"), modules).unwrap();
            std::fs::create_dir(dir.path().join("1_Pooling")).unwrap();
            std::fs::write(dir.path().join("1_Pooling/config.json"), config).unwrap();
        }
        dir
    }

    #[test]
    fn pooling_is_read_from_the_sentence_transformers_module() {
        let mode = |config: Option<&str>| read_pooling(pooling_dir(config).path());
        assert_eq!(mode(None).unwrap(), Pooling::Mean);
        let mean = r#"{"word_embedding_dimension": 384, "pooling_mode_cls_token": false,
            "pooling_mode_mean_tokens": true, "pooling_mode_max_tokens": false}"#;
        assert_eq!(mode(Some(mean)).unwrap(), Pooling::Mean);
        let cls = r#"{"word_embedding_dimension": 384, "pooling_mode_cls_token": true,
            "pooling_mode_mean_tokens": false}"#;
        assert_eq!(mode(Some(cls)).unwrap(), Pooling::Cls);
        let max = r#"{"pooling_mode_max_tokens": true}"#;
        let err = mode(Some(max)).unwrap_err().to_string();
        assert!(err.contains("pooling max is not supported"), "{err}");
        let both = r#"{"pooling_mode_cls_token": true, "pooling_mode_mean_tokens": true}"#;
        let err = mode(Some(both)).unwrap_err().to_string();
        assert!(err.contains("mean + cls"), "{err}");
        let err = mode(Some("{not json")).unwrap_err().to_string();
        assert!(err.contains("1_Pooling"), "{err}");
    }
}
