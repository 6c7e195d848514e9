//! Words of identifiers and prose: split snake_case, kebab-case, camelCase, acronyms and digits,
//! lowercase, drop stop words, stem. Used by the lexical ranker for documents and queries alike.

use rust_stemmers::{Algorithm, Stemmer};

/// Split one identifier or text into lowercase words: `getWeReadRank` -> get, we, read, rank;
/// `HTTPServer2go` -> http, server, 2, go; `list_pull-requests` -> list, pull, requests.
/// CJK characters become one word each, since those scripts do not separate words by spaces.
pub fn split_words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for run in runs(text) {
        split_run(run, &mut out);
    }
    out
}

/// Maximal runs of alphanumeric characters, with each CJK character as its own run.
fn runs(text: &str) -> impl Iterator<Item = &str> {
    let mut pieces = Vec::new();
    let mut start: Option<usize> = None;
    for (i, c) in text.char_indices() {
        if is_cjk(c) {
            if let Some(s) = start.take() {
                pieces.push(&text[s..i]);
            }
            pieces.push(&text[i..i + c.len_utf8()]);
        } else if c.is_alphanumeric() {
            start.get_or_insert(i);
        } else if let Some(s) = start.take() {
            pieces.push(&text[s..i]);
        }
    }
    if let Some(s) = start {
        pieces.push(&text[s..]);
    }
    pieces.into_iter()
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32, 0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF)
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Lower,
    Upper,
    Digit,
}

fn kind(c: char) -> Kind {
    if c.is_numeric() {
        Kind::Digit
    } else if c.is_uppercase() {
        Kind::Upper
    } else {
        Kind::Lower
    }
}

/// Split an alphanumeric run at case and digit boundaries.
fn split_run(run: &str, out: &mut Vec<String>) {
    let chars: Vec<char> = run.chars().collect();
    let mut word = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if i > 0 {
            let prev = kind(chars[i - 1]);
            let cur = kind(c);
            let next_lower = chars.get(i + 1).is_some_and(|&n| kind(n) == Kind::Lower);
            let boundary = match (prev, cur) {
                (Kind::Lower, Kind::Upper) => true,
                // The last capital of an acronym starts the next word: HTTPServer -> HTTP|Server.
                (Kind::Upper, Kind::Upper) => next_lower,
                (Kind::Digit, Kind::Digit) => false,
                (Kind::Digit, _) | (_, Kind::Digit) => true,
                _ => false,
            };
            if boundary && !word.is_empty() {
                out.push(std::mem::take(&mut word));
            }
        }
        word.extend(c.to_lowercase());
    }
    if !word.is_empty() {
        out.push(word);
    }
}

/// English words that carry no meaning for tool search.
const STOP_WORDS: &[&str] = &[
    "a", "about", "after", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be",
    "been", "being", "but", "by", "can", "could", "did", "do", "does", "for", "from", "had", "has",
    "have", "he", "her", "here", "him", "his", "how", "i", "if", "in", "into", "is", "it", "its",
    "just", "let", "may", "me", "might", "my", "of", "on", "or", "our", "please", "she", "should",
    "so", "some", "such", "than", "that", "the", "their", "them", "then", "there", "these", "they",
    "this", "those", "to", "too", "us", "very", "was", "we", "were", "what", "when", "where",
    "which", "while", "who", "whom", "why", "will", "with", "would", "you", "your",
];

/// Lucene's classic English stop words (`EnglishAnalyzer.ENGLISH_STOP_WORDS_SET`), sorted:
/// articles, prepositions, conjunctions and forms of "be", the words that say least about what
/// a text asks for. Smaller than [`STOP_WORDS`]: no pronouns, question words or modal verbs.
pub const LUCENE_STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it",
    "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there", "these",
    "they", "this", "to", "was", "will", "with",
];

/// Classes of the action verbs tool names and descriptions are written with (the usual
/// create / read / update / delete / list / search / send / write / run / stop vocabulary of
/// APIs), for the lexical ranker to match a query's verb with its class mates: "open a ticket"
/// should reach `create_ticket` without a model. General English API vocabulary, not taken from
/// the eval sets.
pub const VERB_CLASSES: &[&[&str]] = &[
    &["create", "make", "add", "new", "generate"],
    &["delete", "remove", "erase"],
    &["get", "fetch", "retrieve", "read", "obtain"],
    &["list", "show", "enumerate"],
    &["update", "edit", "modify", "change"],
    &["search", "find", "lookup", "query"],
    &["send", "post", "submit"],
    &["write", "save", "store"],
    &["run", "execute", "launch"],
    &["stop", "terminate", "cancel", "kill"],
];

/// Whether a lowercase word is one of [`LUCENE_STOP_WORDS`].
pub fn is_lucene_stop_word(word: &str) -> bool {
    LUCENE_STOP_WORDS.binary_search(&word).is_ok()
}

/// Whether a lowercase word is one of the English stop words the lexical ranker drops.
pub fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.binary_search(&word).is_ok()
}

/// A text for the sentence encoder with its stop words left out (`is_stop` on each
/// whitespace-separated word's letters and digits, lowercased; a contraction such as "I'm" goes
/// when its first part does), and with `drop_punctuation` also the punctuation around each kept
/// word and the words that are punctuation only. Fewer words are fewer tokens, and the encoder's
/// time grows with the tokens. Words keep their case and order; a text that would be left empty
/// is returned whole.
pub fn strip_for_encoder(
    text: &str,
    is_stop: impl Fn(&str) -> bool,
    drop_punctuation: bool,
) -> String {
    let mut out = String::with_capacity(text.len());
    for word in text.split_whitespace() {
        let core = word.trim_matches(|c: char| !c.is_alphanumeric());
        if core.is_empty() {
            if !drop_punctuation {
                push_word(&mut out, word);
            }
            continue;
        }
        let lower = core.to_lowercase();
        // "I'm" goes with "i"; "can't" and "isn't" stay: a negation is not a function word.
        let first = lower.split(['\'', '\u{2019}']).next().unwrap_or_default();
        let negated = lower.ends_with("n't") || lower.ends_with("n\u{2019}t");
        if is_stop(&lower) || (first.len() < lower.len() && !negated && is_stop(first)) {
            continue;
        }
        push_word(&mut out, if drop_punctuation { core } else { word });
    }
    if out.is_empty() {
        text.to_string()
    } else {
        out
    }
}

fn push_word(out: &mut String, word: &str) {
    if !out.is_empty() {
        out.push(' ');
    }
    out.push_str(word);
}

/// Turns text into index terms: split words, drop stop words, Snowball-stem.
pub struct Analyzer {
    stemmer: Stemmer,
}

impl Default for Analyzer {
    fn default() -> Self {
        Self {
            stemmer: Stemmer::create(Algorithm::English),
        }
    }
}

impl std::fmt::Debug for Analyzer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Analyzer(english)")
    }
}

impl Analyzer {
    /// Index terms of a text.
    pub fn terms(&self, text: &str) -> Vec<String> {
        split_words(text)
            .into_iter()
            .filter(|w| !is_stop_word(w))
            .map(|w| self.stemmer.stem(&w).into_owned())
            .collect()
    }

    /// Index terms of an identifier: its words, plus each multi-word alphanumeric run joined
    /// (`WeRead` also gives `weread`), so a query may write it either way.
    pub fn identifier_terms(&self, ident: &str) -> Vec<String> {
        let mut terms = self.terms(ident);
        for run in runs(ident) {
            let parts = split_words(run);
            if parts.len() > 1 {
                terms.push(self.stemmer.stem(&parts.concat()).into_owned());
            }
        }
        terms
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(input: &str, expect: &[&str]) {
        assert_eq!(split_words(input), expect, "splitting {input:?}");
    }

    #[test]
    fn splits_every_identifier_style() {
        check("list_pull_requests", &["list", "pull", "requests"]);
        check("get-weread-rank", &["get", "weread", "rank"]);
        check("getWeReadRank", &["get", "we", "read", "rank"]);
        check("HTTPServer", &["http", "server"]);
        check("parseJSONToXML", &["parse", "json", "to", "xml"]);
        check("s3Bucket2go", &["s", "3", "bucket", "2", "go"]);
        check("ec2_v10", &["ec", "2", "v", "10"]);
        check("FinanceTool", &["finance", "tool"]);
        check("  Hello, world!  ", &["hello", "world"]);
        check("天气query", &["天", "气", "query"]);
        check("", &[]);
    }

    #[test]
    fn stop_words_are_sorted_for_binary_search() {
        for list in [STOP_WORDS, LUCENE_STOP_WORDS] {
            let mut sorted = list.to_vec();
            sorted.sort_unstable();
            assert_eq!(sorted, list);
        }
    }

    #[test]
    fn encoder_text_without_stop_words() {
        let q = "Can you help me find the weather forecast for Paris? I'm in /root/x.md.";
        assert_eq!(
            strip_for_encoder(q, is_stop_word, false),
            "help find weather forecast Paris? /root/x.md."
        );
        assert_eq!(
            strip_for_encoder(q, is_stop_word, true),
            "help find weather forecast Paris root/x.md"
        );
        assert_eq!(
            strip_for_encoder("What is it ?", is_stop_word, true),
            "What is it ?"
        );
        assert_eq!(strip_for_encoder("a - b", |_| false, true), "a b");
    }

    #[test]
    fn analyzer_stems_and_drops_stop_words() {
        let a = Analyzer::default();
        assert_eq!(a.terms("Searching the issues"), ["search", "issu"]);
        assert_eq!(
            a.identifier_terms("getWeRead"),
            ["get", "read", "getweread"],
            "\"we\" is a stop word on its own but survives inside the joined run"
        );
    }
}
