//! Late interaction on the tool's name: how well each word of a tool's name is covered by some
//! word of the query, at the token level. The encoder's final-layer token vectors of the tool's
//! full text (the pass that gives its pooled vector; no extra pass) are kept for the tokens of
//! its name words, int8 like the pooled vectors; at query time the query's token vectors come
//! from its one encoder pass too. A tool's coverage is the idf-weighted mean, over its name's
//! content tokens, of the best cosine with any of the query's content tokens ("tool→query
//! MaxSim"): a tool that matches one step of a multi-step task fully scores high even though
//! the rest of the query is about other steps. With `Tuning::name_coverage_weight` above 0 the
//! index adds its standard score over the top of the ranking (off by default: RESULTS.md,
//! "Token-level signals").

use std::collections::HashMap;

use crate::doc::Doc;
use crate::embed::TokenVectors;
use crate::scan::QVectors;

/// Lucene's stop words and the other closed classes of function words: personal pronouns,
/// auxiliary and modal verbs, and "please". Sorted. Their tokens are left out on both sides.
const FUNCTION_WORDS: &[&str] = &[
    "a", "am", "an", "and", "are", "as", "at", "be", "been", "being", "but", "by", "can", "could",
    "did", "do", "does", "for", "had", "has", "have", "he", "her", "him", "his", "i", "if", "in",
    "into", "is", "it", "its", "may", "me", "might", "must", "my", "no", "not", "of", "on", "or",
    "our", "please", "shall", "she", "should", "such", "that", "the", "their", "them", "then",
    "there", "these", "they", "this", "to", "us", "was", "we", "were", "will", "with", "would",
    "you", "your",
];

/// Whether a lowercase word is one of [`FUNCTION_WORDS`].
pub fn is_function_word(word: &str) -> bool {
    debug_assert!(
        FUNCTION_WORDS.windows(2).all(|w| w[0] < w[1]),
        "keep it sorted"
    );
    FUNCTION_WORDS.binary_search(&word).is_ok()
}

/// The lowercase word (ASCII alphanumeric run) around each token of `text`; `None` for special
/// tokens, punctuation and function words (the tokens late interaction leaves out).
pub fn content_words(tv: &TokenVectors, text: &str) -> Vec<Option<String>> {
    let b = text.as_bytes();
    (0..tv.len())
        .map(|i| {
            let (mut s, mut e) = tv.offsets[i];
            let piece = text.get(s..e)?;
            if tv.special[i] || !piece.chars().any(char::is_alphanumeric) {
                return None;
            }
            while s > 0 && b[s - 1].is_ascii_alphanumeric() {
                s -= 1;
            }
            while e < b.len() && b[e].is_ascii_alphanumeric() {
                e += 1;
            }
            let word = text.get(s..e)?.to_lowercase();
            (!is_function_word(&word)).then_some(word)
        })
        .collect()
}

/// A token's vector scaled to unit length.
fn unit(row: &[f32]) -> Vec<f32> {
    let norm = row.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
    row.iter().map(|x| x / norm).collect()
}

/// The content tokens of a tool's name in its dense text's token vectors: each one's word and
/// unit vector.
pub fn name_tokens(tv: &TokenVectors, doc: &Doc, text: &str) -> Vec<(String, Vec<f32>)> {
    let span = doc.dense_text_name_span();
    content_words(tv, text)
        .into_iter()
        .enumerate()
        .filter_map(|(i, w)| {
            let (s, e) = tv.offsets[i];
            let w = w?;
            (s >= span.start && e <= span.end).then(|| (w, unit(tv.row(i))))
        })
        .collect()
}

/// The unit vectors of a query's content tokens.
pub fn query_tokens(tv: &TokenVectors, text: &str) -> Vec<Vec<f32>> {
    content_words(tv, text)
        .into_iter()
        .enumerate()
        .filter(|(_, w)| w.is_some())
        .map(|(i, _)| unit(tv.row(i)))
        .collect()
}

/// Every tool's name tokens, int8, with their idf weights over the catalog.
#[derive(Clone, Debug, Default)]
pub(crate) struct NameTokens {
    rows: QVectors,
    /// Tool `i`'s rows are `start[i]..start[i + 1]`.
    start: Vec<usize>,
    weight: Vec<f32>,
}

impl NameTokens {
    /// From each tool's name tokens (in doc order) and the docs (for the idf of each word over
    /// their dense texts: `ln(1 + (n − df + 0.5) / (df + 0.5))`).
    pub(crate) fn new(docs: &[Doc], tokens: &[Vec<(String, Vec<f32>)>], dim: usize) -> Self {
        let mut df: HashMap<String, f32> = HashMap::new();
        for d in docs {
            let mut words: Vec<String> = d
                .dense_text()
                .split(|c: char| !c.is_alphanumeric())
                .filter(|w| !w.is_empty())
                .map(str::to_lowercase)
                .collect();
            words.sort_unstable();
            words.dedup();
            for w in words {
                *df.entry(w).or_insert(0.0) += 1.0;
            }
        }
        let n = docs.len() as f32;
        let idf = |w: &str| {
            let df = df.get(w).copied().unwrap_or(0.0);
            (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
        };
        let mut flat = Vec::new();
        let mut start = vec![0];
        let mut weight = Vec::new();
        for t in tokens {
            for (w, v) in t {
                let mut v = v.clone();
                v.resize(dim, 0.0);
                flat.extend(v);
                weight.push(idf(w));
            }
            start.push(weight.len());
        }
        Self {
            rows: QVectors::new(&flat, dim),
            start,
            weight,
        }
    }

    /// Bytes held (int8 rows, scales, offsets and weights).
    pub(crate) fn bytes(&self) -> usize {
        self.rows.bytes() + self.start.len() * 8 + self.weight.len() * 4
    }

    /// Tool `i`'s coverage by the query's content tokens (quantized by
    /// [`QVectors::quantize_queries`]; see the module); `None` when the tool's name has no
    /// content token or the query none.
    pub(crate) fn coverage(&self, i: usize, query: &[(Vec<i16>, f32)]) -> Option<f32> {
        let rows = *self.start.get(i)?..*self.start.get(i + 1)?;
        if rows.is_empty() || query.is_empty() {
            return None;
        }
        let best = self.rows.scan_rows_quantized(rows.clone(), query);
        let w = &self.weight[rows];
        let total: f32 = w.iter().sum();
        (total > 0.0).then(|| best.iter().zip(w).map(|(b, w)| b * w).sum::<f32>() / total)
    }
}

/// Add `weight` × the standard score of each top-`n` tool's coverage (over those `n`) to its
/// score; a tool whose name has no content token (or a query without one) counts 0.
pub(crate) fn rerank(
    scores: &mut [f32],
    names: &NameTokens,
    query: &[Vec<f32>],
    n: usize,
    weight: f32,
) {
    let top = crate::fusion::top_k(scores, n);
    if top.len() < 2 {
        return;
    }
    let query = names.rows.quantize_queries(query);
    let cov: Vec<f32> = top
        .iter()
        .map(|&i| names.coverage(i, &query).unwrap_or(0.0))
        .collect();
    for (&i, z) in top.iter().zip(crate::fusion::z_score(&cov)) {
        scores[i] += weight * z;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn function_words_are_sorted() {
        assert!(FUNCTION_WORDS.windows(2).all(|w| w[0] < w[1]));
        assert!(is_function_word("the") && !is_function_word("slide"));
    }
}
