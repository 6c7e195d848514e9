//! Lexical ranking: BM25F over four fields of a tool (name, description, parameters, server),
//! each with its own weight and length normalization.

use std::collections::{BTreeMap, HashMap};

use crate::doc::Doc;
use crate::words::Analyzer;

/// The fields of a document, in the order of [`FIELD_WEIGHTS`].
const FIELDS: usize = 4;
/// How much a term occurrence counts in each field: name, description, params, server.
/// The name is short and chosen with care; parameter and server text is long and generic.
const FIELD_WEIGHTS: [f32; FIELDS] = [3.0, 1.0, 0.4, 0.5];
/// Length normalization per field (BM25's b).
const FIELD_B: [f32; FIELDS] = [0.3, 0.75, 0.75, 0.75];
/// Term frequency saturation (BM25's k1).
const K1: f32 = 1.2;

/// BM25F's knobs: per-field weights and length normalization, and term saturation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bm25Params {
    /// How much a term occurrence counts in each field: name, description, params, server.
    pub field_weights: [f32; FIELDS],
    /// Length normalization per field (BM25's b).
    pub field_b: [f32; FIELDS],
    /// Term frequency saturation (BM25's k1).
    pub k1: f32,
}

impl Default for Bm25Params {
    fn default() -> Self {
        Self {
            field_weights: FIELD_WEIGHTS,
            field_b: FIELD_B,
            k1: K1,
        }
    }
}

/// A BM25F index: postings per term with per-field frequencies.
#[derive(Debug)]
pub struct Bm25 {
    params: Bm25Params,
    analyzer: Analyzer,
    terms: HashMap<String, usize>,
    /// For each term id: (document, term frequency per field).
    postings: Vec<Vec<(u32, [u16; FIELDS])>>,
    /// Field lengths of each document.
    lengths: Vec<[u32; FIELDS]>,
    avg_lengths: [f32; FIELDS],
    /// [`crate::words::VERB_CLASSES`] as index terms.
    verb_classes: Vec<Vec<String>>,
}

impl Bm25 {
    /// Index documents; document ids are their positions.
    pub fn build(docs: &[Doc]) -> Self {
        Self::build_with(docs, Bm25Params::default())
    }

    /// Index documents with explicit knobs.
    pub fn build_with(docs: &[Doc], params: Bm25Params) -> Self {
        let analyzer = Analyzer::default();
        let mut terms: HashMap<String, usize> = HashMap::new();
        let mut postings: Vec<Vec<(u32, [u16; FIELDS])>> = Vec::new();
        let mut lengths = Vec::with_capacity(docs.len());
        for (id, doc) in docs.iter().enumerate() {
            let fields = fields(&analyzer, doc);
            let mut tf: HashMap<usize, [u16; FIELDS]> = HashMap::new();
            let mut len = [0u32; FIELDS];
            for (f, words) in fields.iter().enumerate() {
                len[f] = words.len() as u32;
                for w in words {
                    let next = terms.len();
                    let t = *terms.entry(w.clone()).or_insert(next);
                    if t == postings.len() {
                        postings.push(Vec::new());
                    }
                    let counts = tf.entry(t).or_insert([0; FIELDS]);
                    counts[f] = counts[f].saturating_add(1);
                }
            }
            let mut tf: Vec<_> = tf.into_iter().collect();
            tf.sort_unstable_by_key(|(t, _)| *t);
            for (t, counts) in tf {
                postings[t].push((id as u32, counts));
            }
            lengths.push(len);
        }
        let mut avg_lengths = [0f32; FIELDS];
        for len in &lengths {
            for f in 0..FIELDS {
                avg_lengths[f] += len[f] as f32;
            }
        }
        for avg in &mut avg_lengths {
            *avg = (*avg / docs.len().max(1) as f32).max(1.0);
        }
        let verb_classes = crate::words::VERB_CLASSES
            .iter()
            .map(|class| class.iter().flat_map(|w| analyzer.terms(w)).collect())
            .collect();
        Self {
            verb_classes,
            params,
            analyzer,
            terms,
            postings,
            lengths,
            avg_lengths,
        }
    }

    /// Number of indexed documents.
    pub fn len(&self) -> usize {
        self.lengths.len()
    }

    /// True when nothing is indexed.
    pub fn is_empty(&self) -> bool {
        self.lengths.is_empty()
    }

    /// The query's terms as the index sees them.
    pub fn query_terms(&self, query: &str) -> Vec<String> {
        self.analyzer.terms(query)
    }

    /// A score for every document (0 where no query term occurs).
    pub fn scores(&self, query: &str) -> Vec<f32> {
        self.scores_of_terms(&self.query_terms(query))
    }

    /// [`Self::scores`] plus `weight` × the scores of the query's verb class mates
    /// ([`crate::words::VERB_CLASSES`]) that the query does not have itself.
    pub fn scores_with_verb_classes(&self, query: &str, weight: f32) -> Vec<f32> {
        let terms = self.query_terms(query);
        let mut scores = self.scores_of_terms(&terms);
        if weight == 0.0 {
            return scores;
        }
        let mut mates: Vec<String> = Vec::new();
        for class in &self.verb_classes {
            if class.iter().any(|t| terms.contains(t)) {
                for t in class {
                    if !terms.contains(t) && !mates.contains(t) {
                        mates.push(t.clone());
                    }
                }
            }
        }
        if !mates.is_empty() {
            for (s, m) in scores.iter_mut().zip(self.scores_of_terms(&mates)) {
                *s += weight * m;
            }
        }
        scores
    }

    /// A score for every document from already analyzed query terms (see [`Self::query_terms`]).
    pub fn scores_of_terms(&self, query_terms: &[String]) -> Vec<f32> {
        let mut scores = vec![0f32; self.len()];
        let n = self.len() as f32;
        let Bm25Params {
            field_weights,
            field_b,
            k1,
        } = self.params;
        // Terms in id order: a float sum depends on its order, and a `HashMap`'s order changes
        // from call to call, so scores (and near-ties) would too.
        let mut seen: BTreeMap<usize, f32> = BTreeMap::new();
        for term in query_terms {
            if let Some(&t) = self.terms.get(term) {
                *seen.entry(t).or_insert(0.0) += 1.0;
            }
        }
        for (t, query_tf) in seen {
            let postings = &self.postings[t];
            let df = postings.len() as f32;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            for (doc, counts) in postings {
                let len = &self.lengths[*doc as usize];
                let mut tf = 0f32;
                for f in 0..FIELDS {
                    if counts[f] > 0 {
                        let norm =
                            1.0 - field_b[f] + field_b[f] * len[f] as f32 / self.avg_lengths[f];
                        tf += field_weights[f] * counts[f] as f32 / norm;
                    }
                }
                scores[*doc as usize] += query_tf * idf * tf * (k1 + 1.0) / (k1 + tf);
            }
        }
        scores
    }
}

/// The analyzed words of each field of a document.
fn fields(analyzer: &Analyzer, doc: &Doc) -> [Vec<String>; FIELDS] {
    let name = analyzer.identifier_terms(&doc.tool);
    let description = analyzer.terms(&doc.description);
    let mut params = Vec::new();
    for p in &doc.params {
        params.extend(analyzer.identifier_terms(&p.name));
        params.extend(analyzer.terms(&p.description));
    }
    let mut server = analyzer.identifier_terms(&doc.server);
    server.extend(analyzer.terms(&doc.server_description));
    [name, description, params, server]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_match_outranks_a_description_match() {
        let docs = [
            Doc::new("a", "send_email", "Deliver a message", &[]),
            Doc::new("a", "notify", "Send an email notification to a user", &[]),
            Doc::new("a", "weather", "Forecast for a city", &[]),
        ];
        let bm = Bm25::build(&docs);
        let s = bm.scores("send email");
        assert!(s[0] > s[1] && s[1] > 0.0, "{s:?}");
        assert_eq!(s[2], 0.0);
    }

    #[test]
    fn a_verb_reaches_its_class_mates_at_the_given_weight() {
        let docs = [
            Doc::new("a", "delete_issue", "Delete an issue", &[]),
            Doc::new("a", "create_issue", "Create an issue", &[]),
            Doc::new("a", "weather", "Forecast for a city", &[]),
        ];
        let bm = Bm25::build(&docs);
        // "make" is in no tool: without its class, both issue tools score alike.
        let plain = bm.scores_with_verb_classes("make an issue", 0.0);
        assert_eq!(plain, bm.scores("make an issue"));
        assert_eq!(plain[0], plain[1]);
        // With it, "create" counts at half weight, and nothing else moves.
        let s = bm.scores_with_verb_classes("make an issue", 0.5);
        assert!(s[1] > s[0], "{s:?}");
        assert_eq!(s[0], plain[0]);
        assert_eq!(s[2], 0.0);
        let create = bm.scores("create")[1];
        assert!((s[1] - plain[1] - 0.5 * create).abs() < 1e-5, "{s:?}");
        // A verb the query already has is not counted twice.
        assert_eq!(
            bm.scores_with_verb_classes("create make issue", 0.5)[1],
            bm.scores("create make issue")[1]
        );
    }
}
