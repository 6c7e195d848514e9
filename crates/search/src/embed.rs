//! Sentence embeddings in Rust: a BERT sentence-transformers model (all-MiniLM-L6-v2 or any
//! other BERT directory with model.safetensors, tokenizer.json and config.json), mean pooling
//! over real tokens and L2 normalization, as sentence-transformers does. CPU only.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use sha2::{Digest, Sha256};
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

use crate::error::SearchError;

/// Texts per forward pass when embedding many; sorted by length first so padding stays small.
const BATCH: usize = 32;

/// A loaded sentence embedding model. Cheap to clone (shared).
#[derive(Clone)]
pub struct Embedder {
    inner: Arc<Inner>,
}

struct Inner {
    model: BertModel,
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

/// The part of sentence_bert_config.json we read.
#[derive(serde::Deserialize)]
struct SentenceConfig {
    max_seq_length: Option<usize>,
}

impl Embedder {
    /// Load a model directory. Nothing is downloaded: every file must be there.
    pub fn load(dir: &Path) -> Result<Self, SearchError> {
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
        let config_path = file("config.json")?;
        let tokenizer_path = file("tokenizer.json")?;
        let weights_path = file("model.safetensors")?;
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
        let hidden: HiddenSize =
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
        }
        .unwrap_or(hidden.max_position_embeddings)
        .min(hidden.max_position_embeddings);

        let tokenizer_bytes = read(&tokenizer_path)?;
        let tok_err = |message: String| SearchError::Tokenizer {
            path: tokenizer_path.clone(),
            message,
        };
        let mut tokenizer =
            Tokenizer::from_bytes(&tokenizer_bytes).map_err(|e| tok_err(e.to_string()))?;
        // tokenizer.json files often pad to a fixed length (128 for MiniLM); pad per batch
        // instead, and truncate where sentence-transformers does.
        let pad_id = tokenizer.get_padding().map(|p| p.pad_id).unwrap_or(0);
        let pad_token = tokenizer
            .get_padding()
            .map(|p| p.pad_token.clone())
            .unwrap_or_else(|| "[PAD]".to_string());
        tokenizer.with_padding(Some(PaddingParams {
            strategy: PaddingStrategy::BatchLongest,
            pad_id,
            pad_token,
            ..PaddingParams::default()
        }));
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: max_len,
                ..TruncationParams::default()
            }))
            .map_err(|e| tok_err(e.to_string()))?;

        let weights = read(&weights_path)?;
        let id = model_id(dir, &config_bytes, &tokenizer_bytes, &weights);
        let device = Device::Cpu;
        let vb = VarBuilder::from_buffered_safetensors(weights, DType::F32, &device).map_err(
            |source| SearchError::Model {
                stage: "reading model.safetensors",
                source,
            },
        )?;
        let model = BertModel::load(vb, &config).map_err(|source| SearchError::Model {
            stage: "loading BERT weights",
            source,
        })?;
        Ok(Self {
            inner: Arc::new(Inner {
                model,
                tokenizer,
                id,
                dim: hidden.hidden_size,
                dir: dir.to_path_buf(),
            }),
        })
    }

    /// A short stable id: the directory name and a hash of config, tokenizer and weights.
    pub fn id(&self) -> &str {
        &self.inner.id
    }

    /// Embedding width.
    pub fn dim(&self) -> usize {
        self.inner.dim
    }

    /// The directory the model came from.
    pub fn dir(&self) -> &Path {
        &self.inner.dir
    }

    /// Embed one text: a unit vector of [`Self::dim`] floats.
    pub fn embed_one(&self, text: &str) -> Result<Vec<f32>, SearchError> {
        Ok(self
            .forward(&[text])?
            .pop()
            .unwrap_or_else(|| vec![0.0; self.dim()]))
    }

    /// Embed many texts, in batches of similar length; `progress(done)` after each batch.
    pub fn embed(
        &self,
        texts: &[&str],
        progress: &mut dyn FnMut(usize),
    ) -> Result<Vec<Vec<f32>>, SearchError> {
        let mut order: Vec<usize> = (0..texts.len()).collect();
        // Longest first by characters (a cheap proxy for tokens); stable for equal lengths.
        order.sort_by_key(|&i| std::cmp::Reverse(texts[i].len()));
        let mut out = vec![Vec::new(); texts.len()];
        let mut done = 0;
        for chunk in order.chunks(BATCH) {
            let batch: Vec<&str> = chunk.iter().map(|&i| texts[i]).collect();
            for (&i, v) in chunk.iter().zip(self.forward(&batch)?) {
                out[i] = v;
            }
            done += chunk.len();
            progress(done);
        }
        Ok(out)
    }

    fn forward(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, SearchError> {
        let inner = &*self.inner;
        let encodings = inner
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| SearchError::Tokenizer {
                path: inner.dir.join("tokenizer.json"),
                message: e.to_string(),
            })?;
        let model_err = |source| SearchError::Model {
            stage: "forward pass",
            source,
        };
        let rows = encodings.len();
        let cols = encodings.first().map_or(0, |e| e.get_ids().len());
        let flat = |f: &dyn Fn(&tokenizers::Encoding) -> &[u32]| -> Vec<u32> {
            encodings
                .iter()
                .flat_map(|e| f(e).iter().copied())
                .collect()
        };
        let device = &inner.model.device;
        let shape = (rows, cols);
        let ids = Tensor::from_vec(flat(&|e| e.get_ids()), shape, device).map_err(model_err)?;
        let types =
            Tensor::from_vec(flat(&|e| e.get_type_ids()), shape, device).map_err(model_err)?;
        let mask = Tensor::from_vec(flat(&|e| e.get_attention_mask()), shape, device)
            .map_err(model_err)?;
        let pooled = (|| {
            let hidden = inner.model.forward(&ids, &types, Some(&mask))?;
            // Mean over real tokens only, then unit length.
            let mask = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
            let summed = hidden.broadcast_mul(&mask)?.sum(1)?;
            let counts = mask.sum(1)?.clamp(1e-9f32, f32::MAX)?;
            let mean = summed.broadcast_div(&counts)?;
            let norm = mean
                .sqr()?
                .sum_keepdim(1)?
                .sqrt()?
                .clamp(1e-12f32, f32::MAX)?;
            mean.broadcast_div(&norm)?.to_vec2::<f32>()
        })()
        .map_err(model_err)?;
        Ok(pooled)
    }
}

/// Fields of config.json the candle config keeps private.
#[derive(serde::Deserialize)]
struct HiddenSize {
    hidden_size: usize,
    #[serde(default = "default_positions")]
    max_position_embeddings: usize,
}

fn default_positions() -> usize {
    512
}

fn model_id(dir: &Path, config: &[u8], tokenizer: &[u8], weights: &[u8]) -> String {
    let mut h = Sha256::new();
    h.update(config);
    h.update(tokenizer);
    h.update(weights);
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
    format!("{name}-{}", &hex::encode(h.finalize())[..16])
}

/// Cosine similarity of two unit vectors (their dot product).
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Where switchboard looks for the default model when none is named:
/// `<user data dir>/switchboard/models/all-MiniLM-L6-v2` (`~/.local/share/...` on Linux).
pub fn default_model_dir() -> Option<PathBuf> {
    directories::ProjectDirs::from("", "", "switchboard")
        .map(|d| d.data_dir().join("models").join("all-MiniLM-L6-v2"))
}
