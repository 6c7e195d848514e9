//! The crate's one error type: what went wrong loading a model, embedding, or using the cache.

use std::path::PathBuf;

/// Everything switchboard-search can fail at. Ranking itself never fails: a missing model means
/// lexical-only search, reported through [`crate::index::Index::dense_status`].
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    /// The model directory does not exist or lacks a required file.
    #[error(
        "model directory {dir}: {file} not found (expected a sentence-transformers directory with model.safetensors, tokenizer.json and config.json)"
    )]
    ModelMissing {
        /// The directory that was searched.
        dir: PathBuf,
        /// The file that is missing.
        file: &'static str,
    },
    /// A model file could not be read.
    #[error("reading {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// config.json (or sentence_bert_config.json) is not what a BERT model needs.
    #[error("model config {path}: {source}")]
    Config {
        /// The file.
        path: PathBuf,
        /// The parse error.
        source: serde_json::Error,
    },
    /// tokenizer.json could not be loaded or a text could not be encoded.
    #[error("tokenizer {path}: {message}")]
    Tokenizer {
        /// The tokenizer file.
        path: PathBuf,
        /// What the tokenizers crate said.
        message: String,
    },
    /// The model's weights are not what the encoder needs, or a forward pass failed.
    #[error("model {stage}: {message}")]
    Model {
        /// What we were doing: "loading model.safetensors", "forward pass", ...
        stage: &'static str,
        /// What is wrong.
        message: String,
    },
    /// The embedding cache could not be written.
    #[error("embedding cache {path}: {source}")]
    Cache {
        /// The cache file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A query file line is not a query.
    #[error("{source_name}:{line}: {message}")]
    QueryLine {
        /// Usually the file path.
        source_name: String,
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        message: String,
    },
}
