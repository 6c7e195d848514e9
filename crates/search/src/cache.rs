//! The embedding cache: one file per model id, mapping the hash of a document's embedded text to
//! its vector, so a catalog is embedded once and every later build only reads it back.
//!
//! Format (little endian): magic `SBEMB1\n`, u32 dim, u32 count, then `count` records of a
//! 32-byte key and `dim` f32s. A file that does not parse is treated as empty and rewritten.
//! The name tokens of tool texts ([`crate::late`]) live in a second file of their own format
//! ([`EmbeddingCache::tokens_file`]); a cache from before them has none, so its tool texts are
//! embedded again once.

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
        self.replace(&self.file(model_id), &encode(dim, vectors))
    }

    /// Write `bytes` to `path` in the cache directory through a temporary file and a rename, so
    /// a reader never sees half a file.
    fn replace(&self, path: &Path, bytes: &[u8]) -> Result<(), SearchError> {
        let err = |source| SearchError::Cache {
            path: path.to_path_buf(),
            source,
        };
        std::fs::create_dir_all(&self.dir).map_err(err)?;
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        std::fs::write(&tmp, bytes).map_err(err)?;
        std::fs::rename(&tmp, path).map_err(err)
    }
}

/// The name tokens of a tool text ([`crate::late`]): each token's word and unit vector.
pub type NameTokens = HashMap<[u8; 32], Vec<(String, Vec<f32>)>>;

/// Format of the name-token file (little endian): this magic, u32 dim, u32 count, then `count`
/// records of a 32-byte key, u32 tokens, and per token a u16 word length, the word's UTF-8
/// bytes, an f32 scale and `dim` int8 codes. A file that does not parse is treated as empty
/// (its texts are embedded again) and rewritten.
const TOKENS_MAGIC: &[u8; 7] = b"SBTOK1\n";

impl EmbeddingCache {
    /// The file holding one model's name tokens.
    pub fn tokens_file(&self, model_id: &str) -> PathBuf {
        self.dir.join(format!("{model_id}.name-tokens.bin"))
    }

    /// Every cached text's name tokens; empty when there is no usable file.
    pub fn load_tokens(&self, model_id: &str, dim: usize) -> NameTokens {
        std::fs::read(self.tokens_file(model_id))
            .ok()
            .and_then(|bytes| decode_tokens(&bytes, dim))
            .unwrap_or_default()
    }

    /// Write a model's name tokens (replacing the file atomically), int8 with a scale per
    /// token.
    pub fn store_tokens(
        &self,
        model_id: &str,
        dim: usize,
        tokens: &NameTokens,
    ) -> Result<(), SearchError> {
        self.replace(&self.tokens_file(model_id), &encode_tokens(dim, tokens))
    }
}

fn encode_tokens(dim: usize, tokens: &NameTokens) -> Vec<u8> {
    let mut keys: Vec<&[u8; 32]> = tokens.keys().collect();
    keys.sort_unstable();
    let mut out = Vec::new();
    out.extend_from_slice(TOKENS_MAGIC);
    out.extend_from_slice(&(dim as u32).to_le_bytes());
    out.extend_from_slice(&(keys.len() as u32).to_le_bytes());
    for key in keys {
        let rows = &tokens[key];
        out.extend_from_slice(key);
        out.extend_from_slice(&(rows.len() as u32).to_le_bytes());
        for (word, v) in rows {
            let word = &word.as_bytes()[..word.len().min(u16::MAX as usize)];
            out.extend_from_slice(&(word.len() as u16).to_le_bytes());
            out.extend_from_slice(word);
            let max = v.iter().take(dim).fold(0f32, |m, x| m.max(x.abs()));
            let scale = if max > 0.0 && max.is_finite() {
                max / 127.0
            } else {
                1.0
            };
            out.extend_from_slice(&scale.to_le_bytes());
            for i in 0..dim {
                let x = v.get(i).copied().unwrap_or(0.0);
                out.push(((x / scale).round().clamp(-127.0, 127.0) as i8) as u8);
            }
        }
    }
    out
}

fn decode_tokens(bytes: &[u8], dim: usize) -> Option<NameTokens> {
    let mut rest = bytes.strip_prefix(TOKENS_MAGIC)?;
    let mut take = |n: usize| -> Option<&[u8]> {
        let (a, b) = rest.split_at_checked(n)?;
        rest = b;
        Some(a)
    };
    let u32_of =
        |b: &[u8]| -> Option<usize> { Some(u32::from_le_bytes(b.try_into().ok()?) as usize) };
    if u32_of(take(4)?)? != dim {
        return None;
    }
    let count = u32_of(take(4)?)?;
    let mut out = NameTokens::new();
    for _ in 0..count {
        let key: [u8; 32] = take(32)?.try_into().ok()?;
        let n = u32_of(take(4)?)?;
        let mut rows = Vec::new();
        for _ in 0..n {
            let len = u16::from_le_bytes(take(2)?.try_into().ok()?) as usize;
            let word = String::from_utf8(take(len)?.to_vec()).ok()?;
            let scale = f32::from_le_bytes(take(4)?.try_into().ok()?);
            if !scale.is_finite() {
                return None;
            }
            let v = take(dim)?.iter().map(|&c| c as i8 as f32 * scale).collect();
            rows.push((word, v));
        }
        out.insert(key, rows);
    }
    rest.is_empty().then_some(out)
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

    #[test]
    fn name_tokens_round_trip_in_int8_and_a_bad_file_reads_as_empty() {
        let dir = std::env::temp_dir().join(format!("sb-tok-test-{}", std::process::id()));
        let cache = EmbeddingCache::in_dir(&dir);
        let mut t = NameTokens::new();
        t.insert(
            [3; 32],
            vec![
                ("slide".into(), vec![0.6, -0.8]),
                ("add".into(), vec![1.0, 0.0]),
            ],
        );
        t.insert([4; 32], Vec::new());
        cache.store_tokens("m", 2, &t).unwrap();
        let back = cache.load_tokens("m", 2);
        assert_eq!(back.len(), 2);
        assert!(back[&[4; 32]].is_empty());
        let rows = &back[&[3; 32]];
        assert_eq!(rows[0].0, "slide");
        assert!((rows[0].1[0] - 0.6).abs() < 0.01 && (rows[0].1[1] + 0.8).abs() < 1e-6);
        assert_eq!(rows[1].1, [1.0, 0.0]);
        assert!(cache.load_tokens("m", 3).is_empty());
        // Truncated, garbage, or the vector file's format: empty, no panic.
        let bytes = std::fs::read(cache.tokens_file("m")).unwrap();
        for bad in [
            &bytes[..bytes.len() - 1],
            &bytes[..20],
            b"SBEMB1\n\x02\0\0\0".as_slice(),
        ] {
            std::fs::write(cache.tokens_file("m"), bad).unwrap();
            assert!(cache.load_tokens("m", 2).is_empty());
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
