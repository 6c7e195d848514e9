//! The int8 encoder against the f32 reference on the real model: the vectors nearly coincide,
//! the two have different model ids (so cached vectors never mix), and `SWITCHBOARD_ENCODER`
//! picks the default.

use switchboard_search::Embedder;
use switchboard_search::embed::{Precision, dot};

const TEXTS: &[&str] = &[
    "How do I send an email?",
    "Find all open pull requests in the repository that mention the login bug and assign them to me",
    "Tomorrow's weather in Paris",
    "create_issue: Create a new issue in a GitHub repository. owner: Repository owner. repo: \
     Repository name. title: Issue title. body: Issue body",
    "list docker image tags",
    "x",
    "Translate this paragraph into German, then summarize it in three bullet points and save \
     the result to a file called notes.md in my home directory.",
];

#[test]
fn int8_vectors_match_f32_within_a_small_cosine() {
    let dir = switchboard_test_support::peers::peer("model_dir");
    let f32e = Embedder::load_with(&dir, Precision::F32).unwrap();
    let int8e = Embedder::load_with(&dir, Precision::Int8).unwrap();
    assert_eq!(f32e.precision(), Precision::F32);
    assert_eq!(int8e.precision(), Precision::Int8);
    assert_ne!(
        f32e.id(),
        int8e.id(),
        "int8 and f32 vectors must not share a cache"
    );
    assert!(int8e.id().ends_with("-int8"), "{}", int8e.id());
    let a = f32e.embed(TEXTS, &mut |_| {}).unwrap();
    let b = int8e.embed(TEXTS, &mut |_| {}).unwrap();
    let mut sum = 0.0;
    for ((x, y), text) in a.iter().zip(&b).zip(TEXTS) {
        let c = dot(x, y);
        assert!(c > 0.995, "cosine {c} for {text:?}");
        sum += c;
    }
    let mean = sum / TEXTS.len() as f32;
    assert!(mean > 0.998, "mean cosine {mean}");
    // One at a time gives the same int8 vector as in a batch (rows are quantized one by one).
    let one = int8e.embed_one(TEXTS[1]).unwrap();
    assert!(dot(&one, &b[1]) > 0.99999);
}

#[test]
fn the_default_precision_follows_the_environment() {
    let dir = switchboard_test_support::peers::peer("model_dir");
    let default = Embedder::load(&dir).unwrap();
    let expect = match std::env::var("SWITCHBOARD_ENCODER").ok().as_deref() {
        Some("f32") => Precision::F32,
        _ => Precision::Int8,
    };
    assert_eq!(default.precision(), expect);
}
