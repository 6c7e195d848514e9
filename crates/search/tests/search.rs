//! End-to-end tests of the index: ranking order on a hand-made catalog, lexical fallback without
//! a model, the eval numbers on a fixture, and the real embedding model (small: debug is slow).

use switchboard_search::eval::{self, Query};
use switchboard_search::{
    BuildOptions, DenseStatus, Doc, Embedder, EmbeddingCache, EncoderWords, Index, Method,
    SearchError,
};

fn catalog() -> Vec<Doc> {
    vec![
        Doc::new(
            "mail",
            "send_email",
            "Send an email message to a recipient",
            &[("to", "Address"), ("subject", "Subject line")],
        ),
        Doc::new(
            "mail",
            "list_inbox",
            "List messages in the inbox",
            &[("limit", "How many")],
        ),
        Doc::new(
            "calendar",
            "create_event",
            "Create a calendar event",
            &[("title", "Event title"), ("start", "Start time")],
        ),
        Doc::new(
            "weather",
            "get_forecast",
            "Weather forecast for a city",
            &[("city", "City name")],
        ),
        Doc::new(
            "files",
            "read_file",
            "Read a file from disk",
            &[("path", "File path")],
        ),
    ]
}

fn names(index: &Index, query: &str, method: Method) -> Vec<String> {
    index
        .search(query, 10, method)
        .into_iter()
        .map(|h| format!("{}/{}", h.server, h.tool))
        .collect()
}

#[test]
fn lexical_ranking_on_a_small_catalog_is_exact() {
    let index = Index::build(&catalog(), None);
    assert_eq!(
        names(&index, "list messages", Method::Lexical),
        ["mail/list_inbox", "mail/send_email"]
    );
    assert_eq!(
        names(&index, "send an email", Method::Lexical),
        ["mail/send_email"]
    );
    assert_eq!(
        names(&index, "calendar event title", Method::Lexical),
        ["calendar/create_event"]
    );
    // Parameter names are indexed, with less weight than the tool's own words.
    assert_eq!(
        names(&index, "city path", Method::Lexical),
        ["weather/get_forecast", "files/read_file"]
    );
    assert!(names(&index, "zzz", Method::Lexical).is_empty());
}

#[test]
fn without_a_model_dense_and_hybrid_fall_back_to_lexical_and_say_so() {
    let missing = std::env::temp_dir().join("switchboard-no-such-model");
    let err = Embedder::load(&missing).unwrap_err();
    assert!(
        matches!(
            err,
            SearchError::ModelMissing {
                file: "config.json",
                ..
            }
        ),
        "{err}"
    );
    let index = Index::build(&catalog(), None);
    assert_eq!(index.dense_status(), &DenseStatus::NoModel);
    assert!(index.dense_status().to_string().contains("lexical only"));
    assert_eq!(index.effective_method(Method::Hybrid), Method::Lexical);
    assert_eq!(index.effective_method(Method::Dense), Method::Lexical);
    let lexical = index.search("list messages", 5, Method::Lexical);
    assert_eq!(index.search("list messages", 5, Method::Hybrid), lexical);
    assert_eq!(index.search("list messages", 5, Method::Dense), lexical);
}

#[test]
fn eval_on_a_fixture_gives_hand_computed_numbers() {
    let index = Index::build(&catalog(), None);
    let q = |id: &str, query: &str, gold: &[&str]| Query {
        id: id.into(),
        query: query.into(),
        gold: gold.iter().map(|g| g.to_string()).collect(),
        catalog: None,
    };
    let queries = [
        // Ranking [list_inbox, send_email]: found at rank 1.
        q("1", "list messages", &["list_inbox"]),
        // Ranking [send_email]: one of two labels at rank 1, the other never.
        q("2", "send an email", &["mail/send_email", "read_file"]),
        // No such tool: the label is dropped and the query skipped.
        q("3", "anything", &["no_such_tool"]),
        // A server-qualified label of the wrong server does not match.
        q("4", "send an email", &["calendar/send_email", "send_email"]),
    ];
    let r = eval::evaluate(&index, &queries, Method::Lexical, &mut |_, _| {});
    assert_eq!(r.queries, 3);
    assert_eq!(r.skipped_queries, 1);
    assert_eq!(r.dropped_labels, 2);
    // Recall per query: 1, 1/2, 1 (the wrong-server label was dropped as unresolvable).
    let recall = (1.0 + 0.5 + 1.0) / 3.0;
    for (k, got) in eval::RECALL_AT.iter().zip(r.recall) {
        assert!((got - recall).abs() < 1e-9, "recall@{k} {got}");
    }
    assert!((r.mrr - 1.0).abs() < 1e-9);
    // nDCG@10 of query 2: 1 / (1 + 1/log2(3)).
    let ndcg2 = 1.0 / (1.0 + 1.0 / 3f64.log2());
    assert!(
        (r.ndcg10 - (1.0 + ndcg2 + 1.0) / 3.0).abs() < 1e-9,
        "{}",
        r.ndcg10
    );
    assert!(r.tokens_facade < r.tokens_full + eval::search_tool_chars() as f64);

    // Per query: the skipped one is absent, gold ranks are 1-based, a label never retrieved has
    // none, and the worst query sorts first.
    let ids: Vec<&str> = r.outcomes.iter().map(|o| o.id.as_str()).collect();
    assert_eq!(ids, ["1", "2", "4"]);
    let second = &r.outcomes[1];
    assert_eq!(
        second.gold,
        [
            ("mail/send_email".to_string(), Some(1)),
            ("read_file".to_string(), None)
        ]
    );
    assert_eq!(
        second.top.first(),
        Some(&("mail".to_string(), "send_email".to_string()))
    );
    let mut worst = r.outcomes.clone();
    eval::QueryOutcome::worst_first(&mut worst);
    let ids: Vec<&str> = worst.iter().map(|o| o.id.as_str()).collect();
    assert_eq!(ids, ["2", "1", "4"]);
}

#[test]
fn score_ranking_counts_each_label_once() {
    let gold = vec!["read_file".to_string(), "b/search".to_string()];
    let ranking = [
        ("a", "read_file"),
        ("b", "read_file"),
        ("a", "search"),
        ("b", "search"),
    ];
    let s = eval::score_ranking(&gold, &ranking);
    assert_eq!(s.recall, [0.5, 0.5, 1.0, 1.0]);
    assert_eq!(s.reciprocal_rank, 1.0);
    let ideal = 1.0 + 1.0 / 3f64.log2();
    let dcg = 1.0 + 1.0 / 5f64.log2();
    assert!((s.ndcg10 - dcg / ideal).abs() < 1e-12);
}

#[test]
fn the_real_model_puts_similar_sentences_closer_and_caches_vectors() {
    let dir = switchboard_test_support::peers::peer("model_dir");
    let embedder = Embedder::load(&dir).unwrap();
    assert_eq!(embedder.dim(), 384);
    let v = embedder
        .embed(
            &[
                "How do I send an email?",
                "Deliver a message to someone's inbox",
                "Tomorrow's weather in Paris",
            ],
            &mut |_| {},
        )
        .unwrap();
    let norm: f32 = v[0].iter().map(|x| x * x).sum::<f32>().sqrt();
    assert!((norm - 1.0).abs() < 1e-4, "unit length, got {norm}");
    let (close, far) = (
        switchboard_search::embed::dot(&v[0], &v[1]),
        switchboard_search::embed::dot(&v[0], &v[2]),
    );
    assert!(
        close > far + 0.1,
        "email~inbox {close} vs email~weather {far}"
    );
    // A batch gives the same vectors as one at a time (padding is masked out).
    let one = embedder.embed_one("Tomorrow's weather in Paris").unwrap();
    assert!(switchboard_search::embed::dot(&one, &v[2]) > 0.9999);

    let cache_dir = std::env::temp_dir().join(format!("sb-search-test-{}", std::process::id()));
    let cache = EmbeddingCache::in_dir(&cache_dir);
    let docs = catalog();
    let options = || BuildOptions {
        embedder: Some(&embedder),
        cache: Some(&cache),
        ..BuildOptions::default()
    };
    let first = Index::build_with(&docs, options());
    assert!(
        matches!(
            first.dense_status(),
            DenseStatus::Ready {
                embedded: 5,
                cached: 0,
                ..
            }
        ),
        "{}",
        first.dense_status()
    );
    let second = Index::build_with(&docs, options());
    assert!(
        matches!(
            second.dense_status(),
            DenseStatus::Ready {
                embedded: 0,
                cached: 5,
                ..
            }
        ),
        "{}",
        second.dense_status()
    );
    assert_eq!(
        names(&second, "is it going to rain tomorrow", Method::Dense)[0],
        "weather/get_forecast"
    );
    assert_eq!(
        names(&second, "is it going to rain tomorrow", Method::Hybrid)[0],
        "weather/get_forecast"
    );
    assert_eq!(
        names(
            &first,
            "deliver a note to my colleague by mail",
            Method::Dense
        )[0],
        "mail/send_email"
    );
    std::fs::remove_dir_all(&cache_dir).unwrap();
}

#[test]
fn a_multi_sentence_query_pools_its_sentences_and_a_one_sentence_query_does_not() {
    let dir = switchboard_test_support::peers::peer("model_dir");
    let embedder = Embedder::load(&dir).unwrap();
    let with = |split_sentences| {
        Index::build_with(
            &catalog(),
            BuildOptions {
                embedder: Some(&embedder),
                tuning: switchboard_search::Tuning {
                    split_sentences,
                    ..switchboard_search::Tuning::default()
                },
                ..BuildOptions::default()
            },
        )
    };
    let (pooled, whole_only) = (with(true), with(false));
    // Two sentences, two needs, two servers: both tools lead the hybrid ranking, and the
    // sentences' vectors changed the scores.
    let query = "Check whether it will rain in Paris tomorrow. If it does, put an indoor \
                 meeting on my calendar for the afternoon.";
    let mut top2: Vec<String> = names(&pooled, query, Method::Hybrid)
        .into_iter()
        .take(2)
        .collect();
    top2.sort();
    assert_eq!(top2, ["calendar/create_event", "weather/get_forecast"]);
    assert_ne!(
        pooled.scores(query, Method::Dense),
        whole_only.scores(query, Method::Dense)
    );
    // A one-sentence ask is ranked by its whole vector alone: the same scores either way.
    assert_eq!(
        pooled.scores("send a note to my boss", Method::Hybrid),
        whole_only.scores("send a note to my boss", Method::Hybrid)
    );
}

#[test]
fn the_encoder_reads_the_query_without_stop_words_and_the_lexical_ranker_reads_it_whole() {
    let dir = switchboard_test_support::peers::peer("model_dir");
    let embedder = Embedder::load(&dir).unwrap();
    let with = |query_words| {
        Index::build_with(
            &catalog(),
            BuildOptions {
                embedder: Some(&embedder),
                tuning: switchboard_search::Tuning {
                    query_words,
                    ..switchboard_search::Tuning::default()
                },
                ..BuildOptions::default()
            },
        )
    };
    let default = with(switchboard_search::Tuning::default().query_words);
    let whole = with(EncoderWords::All);
    let query = "Is it going to rain in Paris for the weekend?";
    let stripped = "going rain Paris weekend?";
    assert_eq!(EncoderWords::NoStopWords.apply(query), stripped);
    // Dense scores of the full query under the default are those of the stripped query.
    assert_eq!(
        default.scores(query, Method::Dense),
        whole.scores(stripped, Method::Dense)
    );
    assert_ne!(
        default.scores(query, Method::Dense),
        whole.scores(query, Method::Dense)
    );
    // BM25 drops its own stop words either way.
    assert_eq!(
        default.scores(query, Method::Lexical),
        whole.scores(query, Method::Lexical)
    );
    assert_eq!(
        names(&default, query, Method::Hybrid)[0],
        "weather/get_forecast"
    );
}

#[test]
fn token_vectors_come_with_the_same_pooled_vector_and_pool_to_it() {
    let dir = switchboard_test_support::peers::peer("model_dir");
    let embedder = Embedder::load(&dir).unwrap();
    let texts = [
        "Generate a presentation. Save it to a file.",
        "weather forecast",
        "Send an email to my colleague about the meeting tomorrow",
    ];
    let pooled = embedder.embed_threads(&texts, 2, &mut |_| {}).unwrap();
    let tokens = embedder
        .embed_tokens_threads(&texts, 2, &mut |_| {})
        .unwrap();
    for ((text, p), t) in texts.iter().zip(&pooled).zip(&tokens) {
        // Bit-identical pooled vectors, batched or alone.
        assert_eq!(p, &t.pooled, "{text}");
        assert_eq!(
            p,
            &embedder.embed_tokens_one(text).unwrap().pooled,
            "{text}"
        );
        assert_eq!(t.ids, embedder.tokenize(text).unwrap());
        assert_eq!(t.tokens.len(), t.len() * embedder.dim());
        assert!(t.special[0] && t.special[t.len() - 1] && !t.special[1]);
        // The token vectors' mean, normalized, is the pooled vector.
        let mut mean = vec![0f32; embedder.dim()];
        for i in 0..t.len() {
            for (m, x) in mean.iter_mut().zip(t.row(i)) {
                *m += x;
            }
        }
        let norm = mean.iter().map(|x| x * x).sum::<f32>().sqrt();
        mean.iter_mut().for_each(|x| *x /= norm);
        assert!(switchboard_search::embed::dot(&mean, p) > 0.99999, "{text}");
    }
    let (s, e) = tokens[1].offsets[1];
    assert_eq!(&texts[1][s..e], "weather");
}

#[test]
fn the_name_coverage_re_ranks_a_multi_step_task() {
    let dir = switchboard_test_support::peers::peer("model_dir");
    let embedder = Embedder::load(&dir).unwrap();
    let tool = |server: &str, name: &str, desc: &str| Doc::new(server, name, desc, &[]);
    let docs = vec![
        tool("news", "get_tech_news", "Latest technology news articles"),
        tool(
            "ppt",
            "create_presentation",
            "Create a new presentation file",
        ),
        tool("ppt", "add_slide", "Add a slide with a title and text"),
        tool(
            "ppt",
            "save_presentation",
            "Save the presentation to a path",
        ),
        tool("word", "create_document", "Create a new Word document"),
        tool("word", "save_document", "Save the document to a path"),
        tool("files", "write_file", "Write text to a file on disk"),
        tool("web", "search_web", "Search the web for pages"),
        tool("time", "get_current_time", "The current date and time"),
        tool("maps", "geocode_address", "Coordinates of an address"),
        tool("mail", "send_email", "Send an email message"),
        tool("calc", "evaluate_expression", "Evaluate a math expression"),
    ];
    let cache_dir = std::env::temp_dir().join(format!("sb-late-test-{}", std::process::id()));
    let cache = EmbeddingCache::in_dir(&cache_dir);
    let build = |weight: f32| {
        let tuning = switchboard_search::Tuning {
            name_coverage_weight: weight,
            ..Default::default()
        };
        Index::build_with(
            &docs,
            BuildOptions {
                embedder: Some(&embedder),
                cache: Some(&cache),
                tuning,
                ..BuildOptions::default()
            },
        )
    };
    let embedded = |index: &Index| match index.dense_status() {
        DenseStatus::Ready { embedded, .. } => *embedded,
        other => panic!("{other}"),
    };
    // The vectors are cached without name tokens; the first build with the coverage embeds
    // the tool texts again for them, the next reads both.
    let off = build(0.0);
    assert_eq!(embedded(&off), 12);
    let on = build(0.2);
    assert_eq!(embedded(&on), 12);
    assert_eq!(embedded(&build(0.2)), 0);
    // A damaged token file reads as empty: embedded again, same ranking.
    let file = cache.tokens_file(embedder.id());
    let bytes = std::fs::read(&file).unwrap();
    std::fs::write(&file, &bytes[..bytes.len() / 2]).unwrap();
    let again = build(0.2);
    assert_eq!(embedded(&again), 12);
    // A task of three steps: the coverage lifts the tool whose name a step covers fully
    // ("document") over one that matches the task's words only loosely.
    let query = "Find the news about AI, write a report document and email it to my boss";
    assert_eq!(
        names(&off, query, Method::Hybrid),
        [
            "news/get_tech_news",
            "mail/send_email",
            "word/create_document",
            "files/write_file",
            "web/search_web",
            "word/save_document",
            "time/get_current_time",
            "ppt/create_presentation",
            "ppt/save_presentation",
            "ppt/add_slide"
        ]
    );
    assert_eq!(
        names(&on, query, Method::Hybrid),
        [
            "news/get_tech_news",
            "mail/send_email",
            "word/create_document",
            "files/write_file",
            "word/save_document",
            "web/search_web",
            "ppt/create_presentation",
            "time/get_current_time",
            "ppt/save_presentation",
            "ppt/add_slide"
        ]
    );
    // Dense is not re-ranked; the index holds the name tokens only when the weight is not 0.
    assert_eq!(
        names(&off, query, Method::Dense),
        names(&on, query, Method::Dense)
    );
    assert_eq!(off.name_token_bytes(), 0);
    assert!(on.name_token_bytes() > 0);
    assert_eq!(
        names(&again, query, Method::Hybrid),
        names(&on, query, Method::Hybrid)
    );
    std::fs::remove_dir_all(&cache_dir).unwrap();
}
