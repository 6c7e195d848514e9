//! Encoder families and pooling modes beyond all-MiniLM-L6-v2's BERT with mean pooling: MPNet
//! (all-mpnet-base-v2) against Hugging Face transformers' vectors of the same texts
//! (relative-position attention bias, positions after the padding id, no token types), and
//! first-token pooling when a model directory's Pooling module asks for it.

use switchboard_search::Embedder;
use switchboard_search::bert::{Bert, Config};
use switchboard_search::embed::{Pooling, Precision, dot};

/// `fixtures/tiny-mpnet/`: a two-layer MPNet with random weights and transformers' vectors of
/// token id sequences up to the longest its positions allow (`fixtures/tiny_mpnet.py` wrote
/// it), so the architecture is checked on every run without a 440 MB model.
#[derive(serde::Deserialize)]
struct TinyReference {
    ids: Vec<Vec<u32>>,
    vectors: Vec<Vec<f32>>,
}

fn fixture(name: &str) -> Vec<u8> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/");
    std::fs::read(format!("{dir}{name}")).unwrap()
}

#[test]
fn a_tiny_mpnet_matches_the_reference_implementation() {
    let want: TinyReference =
        serde_json::from_slice(&fixture("tiny-mpnet/reference.json")).unwrap();
    let weights = fixture("tiny-mpnet/model.safetensors");
    let cfg: Config = serde_json::from_slice(&fixture("tiny-mpnet/config.json")).unwrap();
    for precision in [Precision::F32, Precision::Int8] {
        let model = Bert::load(cfg.clone(), &weights, precision).unwrap();
        // 300 positions, counted from after the padding id 1.
        assert_eq!(model.max_positions(), 298);
        for (ids, v) in want.ids.iter().zip(&want.vectors) {
            let got = model.embed(&[ids]).unwrap().pop().unwrap();
            let c = dot(&got, v);
            let bound = if precision == Precision::F32 {
                0.99999
            } else {
                0.99
            };
            assert!(c > bound, "{precision:?}, {} tokens: cosine {c}", ids.len());
        }
        // All in one batch: the same vectors.
        let seqs: Vec<&[u32]> = want.ids.iter().map(Vec::as_slice).collect();
        let batch = model.embed(&seqs).unwrap();
        for (b, ids) in batch.iter().zip(&seqs) {
            let one = model.embed(&[ids]).unwrap().pop().unwrap();
            assert!(dot(b, &one) > 0.99999);
        }
        let too_long = vec![5u32; 299];
        let err = model.embed(&[&too_long]).unwrap_err();
        assert!(err.contains("298 positions"), "{err}");
    }
}

#[test]
fn an_unknown_model_type_is_refused_by_name() {
    let weights = fixture("tiny-mpnet/model.safetensors");
    let mut cfg: Config = serde_json::from_slice(&fixture("tiny-mpnet/config.json")).unwrap();
    cfg.model_type = "xlm-roberta".into();
    let err = Bert::load(cfg, &weights, Precision::F32).unwrap_err();
    assert!(
        err.contains("xlm-roberta") && err.contains("bert and mpnet"),
        "{err}"
    );
}

/// `fixtures/mpnet_reference.json`: texts and their mean-pooled, normalized vectors from
/// transformers' `MPNetModel` (`fixtures/mpnet_reference.py` wrote it).
#[derive(serde::Deserialize)]
struct Reference {
    texts: Vec<String>,
    vectors: Vec<Vec<f32>>,
}

fn reference() -> Reference {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/mpnet_reference.json"
    );
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// The real all-mpnet-base-v2 (`scripts/peers` installs it), tokenizer included.
#[test]
fn mpnet_vectors_match_the_reference_implementation() {
    let dir = switchboard_test_support::peers::peer("mpnet_dir");
    let want = reference();
    let f32e = Embedder::load_with(&dir, Precision::F32).unwrap();
    let int8e = Embedder::load_with(&dir, Precision::Int8).unwrap();
    assert_eq!(f32e.dim(), 768);
    assert_eq!(f32e.architecture(), "mpnet");
    assert_eq!(f32e.pooling(), Pooling::Mean);
    let texts: Vec<&str> = want.texts.iter().map(String::as_str).collect();
    let a = f32e.embed(&texts, &mut |_| {}).unwrap();
    let b = int8e.embed(&texts, &mut |_| {}).unwrap();
    for (i, text) in texts.iter().enumerate() {
        let exact = dot(&a[i], &want.vectors[i]);
        assert!(exact > 0.99999, "f32 cosine {exact} for {text:?}");
        let close = dot(&b[i], &want.vectors[i]);
        assert!(close > 0.995, "int8 cosine {close} for {text:?}");
    }
}

#[test]
fn a_cls_pooling_module_pools_the_first_token() {
    let model = switchboard_test_support::peers::peer("model_dir");
    let dir = tempfile::tempdir().unwrap();
    for f in switchboard_search::embed::MODEL_FILES {
        // A hard link where the two share a file system, else a copy of the 90 MB.
        std::fs::hard_link(model.join(f), dir.path().join(f))
            .or_else(|_| std::fs::copy(model.join(f), dir.path().join(f)).map(drop))
            .unwrap();
    }
    let modules = r#"[{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}]"#;
    std::fs::write(dir.path().join("modules.json"), modules).unwrap();
    std::fs::create_dir(dir.path().join("1_Pooling")).unwrap();
    std::fs::write(
        dir.path().join("1_Pooling/config.json"),
        r#"{"word_embedding_dimension": 384, "pooling_mode_cls_token": true, "pooling_mode_mean_tokens": false}"#,
    )
    .unwrap();
    let mean = Embedder::load_with(&model, Precision::F32).unwrap();
    let cls = Embedder::load_with(dir.path(), Precision::F32).unwrap();
    assert_ne!(
        mean.id(),
        cls.id(),
        "vectors of two poolings must not share a cache"
    );
    let text = "list open pull requests of a repository";
    let tokens = mean.embed_tokens_one(text).unwrap();
    let first = &tokens.tokens[..384];
    let norm = first.iter().map(|v| v * v).sum::<f32>().sqrt();
    let want: Vec<f32> = first.iter().map(|v| v / norm).collect();
    let got = cls.embed_one(text).unwrap();
    assert!(dot(&got, &want) > 0.99999, "{}", dot(&got, &want));
    let pooled = mean.embed_one(text).unwrap();
    assert!(
        dot(&got, &pooled) < 0.999,
        "first-token pooling gave the mean's vector"
    );
}
