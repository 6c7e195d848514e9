//! The embedding cache: one file per model id, mapping the hash of a document's embedded text to
//! its vector, so a catalog is embedded once and every later build only reads it back.
//!
//! Format (little endian): magic `SBEMB1\n`, u32 dim, u32 count, then `count` records of a
//! 32-byte key and `dim` f32s. A file that does not parse is treated as empty and rewritten.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::error::SearchError;

const MAGIC: &[u8; 7] = b"SBEMB1\n";

/// Where embeddings are cached.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EmbeddingCache {
    dir: PathBuf,
}

/// Vectors by key (the SHA-256 of the embedded text).
pub type Vectors = HashMap<[u8; 32], Vec<f32>>;

impl EmbeddingCache {
    /// A cache in `dir` (created on first store).
    pub fn in_dir(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    /// The user's cache directory for switchboard embeddings, when the platform has one
    /// (`~/.cache/switchboard/embeddings` on Linux).
    pub fn default_dir() -> Option<PathBuf> {
        directories::ProjectDirs::from("", "", "switchboard")
            .map(|d| d.cache_dir().join("embeddings"))
    }

    /// The cache directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file holding one model's vectors.
    pub fn file(&self, model_id: &str) -> PathBuf {
        self.dir.join(format!("{model_id}.bin"))
    }

    /// Every cached vector of a model; empty when there is no usable file.
    pub fn load(&self, model_id: &str, dim: usize) -> Vectors {
        std::fs::read(self.file(model_id))
            .ok()
            .and_then(|bytes| decode(&bytes, dim))
            .unwrap_or_default()
    }

    /// Write a model's vectors (replacing the file atomically).
    pub fn store(&self, model_id: &str, dim: usize, vectors: &Vectors) -> Result<(), SearchError> {
        let path = self.file(model_id);
        let err = |source| SearchError::Cache {
            path: path.clone(),
            source,
        };
        std::fs::create_dir_all(&self.dir).map_err(err)?;
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        std::fs::write(&tmp, encode(dim, vectors)).map_err(err)?;
        std::fs::rename(&tmp, &path).map_err(err)
    }
}

fn encode(dim: usize, vectors: &Vectors) -> Vec<u8> {
    let mut keys: Vec<&[u8; 32]> = vectors.keys().collect();
    keys.sort_unstable();
    let mut out = Vec::with_capacity(15 + keys.len() * (32 + dim * 4));
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(dim as u32).to_le_bytes());
    out.extend_from_slice(&(keys.len() as u32).to_le_bytes());
    for key in keys {
        out.extend_from_slice(key);
        for x in &vectors[key] {
            out.extend_from_slice(&x.to_le_bytes());
        }
    }
    out
}

fn decode(bytes: &[u8], dim: usize) -> Option<Vectors> {
    let rest = bytes.strip_prefix(MAGIC)?;
    let u32_at = |b: &[u8]| -> Option<usize> {
        Some(u32::from_le_bytes(b.get(..4)?.try_into().ok()?) as usize)
    };
    if u32_at(rest)? != dim {
        return None;
    }
    let count = u32_at(rest.get(4..)?)?;
    let body = rest.get(8..)?;
    let record = 32 + dim * 4;
    if body.len() != count * record {
        return None;
    }
    let mut out = Vectors::with_capacity(count);
    for rec in body.chunks_exact(record) {
        let key: [u8; 32] = rec[..32].try_into().ok()?;
        let v = rec[32..]
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        out.insert(key, v);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_ignores_a_wrong_dimension() {
        let dir = std::env::temp_dir().join(format!("sb-cache-test-{}", std::process::id()));
        let cache = EmbeddingCache::in_dir(&dir);
        let mut v = Vectors::new();
        v.insert([1; 32], vec![0.5, -1.0]);
        v.insert([2; 32], vec![0.25, 2.0]);
        cache.store("m", 2, &v).unwrap();
        assert_eq!(cache.load("m", 2), v);
        assert!(cache.load("m", 3).is_empty());
        assert!(cache.load("other", 2).is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
