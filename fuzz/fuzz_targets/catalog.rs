//! Fuzz target: tool definitions as a server could list them (any names, descriptions,
//! schemas, annotations, resources and prompts), through everything that reads them: the
//! catalog file reader and writer (a written catalog must read back as the same catalogs),
//! lint in its three formats, the request each dialect gets (public names, sanitized schemas,
//! limits) and a lexical tool search over them.
#![no_main]

use libfuzzer_sys::fuzz_target;
use switchboard_core::{Catalog, Dialect, catalog_file};
use switchboard_host::finder::Finder;
use switchboard_host::translate::{TranslateOptions, translate};
use switchboard_lint::{Format, LintOptions, lint};
use switchboard_search::{Doc, Method};

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let Ok((servers, _skipped)) = catalog_file::parse("fuzz.json", "fuzz", rest) else {
        return;
    };
    let written = catalog_file::render("fuzz", &servers);
    let (again, skipped) = catalog_file::parse("again.json", "again", written.as_bytes())
        .expect("a written catalog reads back");
    assert!(skipped.is_empty(), "a written catalog reads back whole: {skipped:?}");
    assert_eq!(again, servers, "a written catalog reads back as the same catalogs");

    let catalog = Catalog::from_servers(servers.clone());
    let report = lint(&catalog, &LintOptions::default());
    for format in [Format::Text, Format::Json, Format::Sarif] {
        let _ = report.render(format, None);
    }
    let dialect = Dialect::ALL[usize::from(first) % Dialect::ALL.len()];
    let mut opts = TranslateOptions::new(dialect);
    opts.strict = first & 8 != 0;
    opts.gemini_openapi = first & 16 != 0;
    let translation = translate(&catalog, &opts);
    let _ = serde_json::to_string(&translation.request);

    let docs = Doc::from_servers(&servers);
    let index = Finder::lexical_index(&docs);
    // Queries the catalog itself suggests (its tools' names and descriptions), and its bytes.
    let mut queries: Vec<String> = docs.iter().take(3).map(|d| d.name_text()).collect();
    queries.push(String::from_utf8_lossy(rest).chars().take(200).collect());
    for q in &queries {
        for hit in index.search(q, 10, Method::Lexical) {
            assert!(
                servers.iter().any(|s| s.server == hit.server && s.tool(&hit.tool).is_some()),
                "a hit names a tool of the catalog"
            );
            assert!(hit.score.is_finite(), "a hit's score is a number");
        }
    }
});
