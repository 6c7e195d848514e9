//! Hostile tool documents and queries through the lexical index (no model): building and
//! searching never panic, answers are deterministic, hits are real matches in score order, and
//! the word splitter gives only non-empty lowercase words.

use proptest::prelude::*;
use switchboard_search::words::split_words;
use switchboard_search::{Doc, Index, Method};

/// Text pieces: identifiers of every style, stop words, verbs, odd unicode (combining marks,
/// case-changing letters, CJK, right-to-left, digits of other scripts), and empty text.
const PIECES: &[&str] = &[
    "send_email",
    "getWeReadRank",
    "HTTPServer2go",
    "list_pull-requests",
    "the",
    "a",
    "create",
    "make",
    "delete",
    "İstanbul",
    "ǅemal",
    "ß",
    "ﬁle",
    "e\u{301}",
    "天气",
    "日本語のテキスト",
    "\u{202e}evil",
    "٣٤٥",
    "Ⅻ",
    "𝔘𝔫𝔦𝔠𝔬𝔡𝔢",
    "🔥",
    "\u{0}",
    "\t\n",
    "",
    " ",
    ",",
    ".",
    "then",
    "\u{fffd}",
];

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::collection::vec(prop::sample::select(PIECES), 0..8).prop_map(|p| p.join(" ")),
        1 => prop::collection::vec(prop::sample::select(PIECES), 0..8).prop_map(|p| p.concat()),
        1 => "\\PC{0,24}",
        1 => any::<String>(),
    ]
}

fn doc() -> impl Strategy<Value = Doc> {
    (
        prop::sample::select(&["mail", "", "天气", "a b", "mail"][..]),
        text(),
        text(),
        prop::collection::vec((text(), text()), 0..3),
    )
        .prop_map(|(server, tool, description, params)| {
            let params: Vec<(&str, &str)> = params
                .iter()
                .map(|(n, d)| (n.as_str(), d.as_str()))
                .collect();
            Doc::new(server, &tool, &description, &params)
        })
}

proptest! {
    #[test]
    fn lexical_search_is_total_and_deterministic(
        docs in prop::collection::vec(doc(), 0..12),
        queries in prop::collection::vec(text(), 1..4),
        k in prop_oneof![Just(0usize), 1..20usize, Just(usize::MAX)],
    ) {
        let index = Index::build(&docs, None);
        let twin = Index::build(&docs, None);
        for method in [Method::Lexical, Method::Hybrid, Method::Dense] {
            for q in &queries {
                let hits = index.search(q, k, method);
                prop_assert_eq!(&hits, &twin.search(q, k, method), "{:?}", q);
                prop_assert_eq!(&hits, &index.search(q, k, method), "{:?}", q);
                prop_assert!(hits.len() <= k.min(docs.len()));
                for h in &hits {
                    prop_assert!(h.score.is_finite() && h.score > 0.0, "{:?}", h);
                    prop_assert!(docs.iter().any(|d| d.server == h.server && d.tool == h.tool));
                }
                for w in hits.windows(2) {
                    prop_assert!(w[0].score >= w[1].score, "{:?}", hits);
                }
                let scores = index.scores(q, method);
                prop_assert_eq!(scores.len(), docs.len());
                prop_assert!(scores.iter().all(|s| s.is_finite() && *s >= 0.0), "{:?}", scores);
            }
        }
    }

    #[test]
    fn split_words_gives_nonempty_lowercase_words(t in text()) {
        let words = split_words(&t);
        prop_assert_eq!(&words, &split_words(&t));
        for w in &words {
            prop_assert!(!w.is_empty());
            prop_assert!(!w.chars().any(char::is_whitespace), "{:?} in {:?}", w, words);
            prop_assert_eq!(w.to_lowercase(), w.clone(), "{:?}", words);
        }
    }
}

#[test]
fn a_score_is_the_same_on_every_call() {
    // Found by the property above: the query's term weights were summed in a `HashMap`'s
    // order, which differs between calls, so the score moved in its last bits.
    let docs = [Doc::new(
        "mail",
        "list_pull-requests",
        "",
        &[("send_email", "Ⅻ")],
    )];
    let query = "list_pull-requests Ⅻ";
    let first = Index::build(&docs, None).scores(query, Method::Lexical);
    for _ in 0..200 {
        let index = Index::build(&docs, None);
        assert_eq!(index.scores(query, Method::Lexical), first);
    }
}
