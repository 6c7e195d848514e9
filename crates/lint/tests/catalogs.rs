//! Finding counts per rule over the shared real-world catalogs, kept as a snapshot so a rule
//! that becomes noisier (or goes quiet) shows up in review.

use std::collections::BTreeMap;

use switchboard_core::{Catalog, catalog_file};
use switchboard_lint::{Family, LintOptions, explain, lint};
use switchboard_test_support::peers::shared_data;

const CATALOGS: [&str; 4] = ["github", "docker-registry", "livemcpbench", "metatool"];

fn load(name: &str) -> Catalog {
    let path = shared_data().join("catalogs").join(format!("{name}.json"));
    let bytes = std::fs::read(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (the shared data sits beside the repo as ../shared)",
            path.display()
        )
    });
    let (servers, skipped) = catalog_file::parse(name, name, &bytes).expect("catalog parses");
    assert!(skipped.is_empty(), "{name}: {skipped:?}");
    Catalog::from_servers(servers)
}

#[test]
fn finding_counts_per_rule_over_the_shared_catalogs() {
    let mut counts: BTreeMap<&str, BTreeMap<&str, usize>> = BTreeMap::new();
    let mut total: BTreeMap<&str, usize> = BTreeMap::new();
    let mut tools = 0;
    for name in CATALOGS {
        let catalog = load(name);
        tools += catalog.tool_count();
        let report = lint(&catalog, &LintOptions::default());
        if let Ok(rule) = std::env::var("LINT_SAMPLES") {
            for f in report
                .findings
                .iter()
                .filter(|f| rule.split(',').any(|r| r == f.rule))
            {
                eprintln!(
                    "{name} {}/{} {} [{}] {}",
                    f.server,
                    f.tool.as_deref().unwrap_or("-"),
                    f.pointer,
                    f.severity,
                    f.message
                );
            }
        }
        // The real catalogs carry no poisoning; anything found here is a false positive.
        let poisoned: Vec<_> = report
            .findings
            .iter()
            .filter(|f| explain(f.rule).is_ok_and(|d| d.family == Family::Poisoning))
            .map(|f| format!("{}/{:?} {}: {}", f.server, f.tool, f.rule, f.message))
            .collect();
        assert!(poisoned.is_empty(), "{name}: {poisoned:#?}");
        for (rule, n) in report.by_rule() {
            *total.entry(rule).or_default() += n;
        }
        counts.insert(name, report.by_rule());
    }
    assert_eq!(tools, 1598);
    insta::assert_json_snapshot!(
        "finding_counts",
        serde_json::json!({"total": total, "per_catalog": counts})
    );
}
