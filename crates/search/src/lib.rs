//! switchboard-search: tool retrieval (lexical, dense, hybrid) and its evaluation. No network;
//! the only I/O is loading a model directory and reading/writing the embedding cache.
//!
//! ```no_run
//! use switchboard_search::{Doc, Embedder, Index, Method};
//! let docs = vec![Doc::new("mail", "send_email", "Send an email", &[("to", "Recipient")])];
//! let embedder = Embedder::load(std::path::Path::new("models/all-MiniLM-L6-v2")).ok();
//! let index = Index::build(&docs, embedder.as_ref());
//! println!("{}", index.dense_status());
//! let hits = index.search("email my boss", 5, Method::Hybrid);
//! ```

mod attention;
pub mod bert;
pub mod bm25;
pub mod cache;
pub mod doc;
pub mod embed;
pub mod error;
pub mod eval;
pub mod fusion;
pub mod index;
mod lanes;
pub mod late;
pub mod linear;
pub mod qlinear;
mod scan;
pub mod words;

pub use bm25::Bm25Params;
pub use cache::EmbeddingCache;
pub use doc::Doc;
pub use embed::Embedder;
pub use error::SearchError;
pub use index::{
    BuildOptions, ClauseFusion, DenseStatus, EncoderWords, Hit, Index, Method, Normalization,
    Tuning,
};
