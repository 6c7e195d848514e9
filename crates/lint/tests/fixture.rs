//! The fixture catalog: every rule fires exactly where expected, and nowhere else.

use std::collections::BTreeSet;

use switchboard_lint::{FailOn, LintOptions, Severity, lint, rules};
use switchboard_test_support::lint_fixture::{PEER, SERVER, clean_tools, lint_fixture_catalog};

/// (rule, server, tool) for every finding the fixture must produce; `""` is the whole server.
const EXPECTED: &[(&str, &str, &str)] = &[
    ("missing-description", SERVER, "get_weather"),
    ("description-restates-name", SERVER, "list_projects"),
    ("parameter-missing-description", SERVER, "search_articles"),
    ("open-object-schema", SERVER, "get_forecast"),
    ("identifier-without-pattern", SERVER, "get_invoice"),
    ("status-without-enum", SERVER, "list_incidents"),
    ("free-text-without-max-length", SERVER, "search_wiki"),
    ("json-output-without-schema", SERVER, "usage_report"),
    ("destructive-without-hint", SERVER, "delete_branch"),
    ("read-only-and-destructive", SERVER, "purge_cache"),
    ("write-without-annotations", SERVER, "create_label"),
    (
        "name-too-long",
        SERVER,
        "get_the_quarterly_financial_summary_for_the_selected_business_unit_now",
    ),
    ("name-characters", SERVER, "docs.lookup"),
    ("name-collision", SERVER, "lookup_customer"),
    ("name-collision", PEER, "lookup_customer"),
    ("duplicate-name", PEER, "upload_transcript"),
    ("schema-root-not-object", SERVER, "plot_series"),
    ("schema-dialect-rewrite", SERVER, "convert_units"),
    ("description-too-long", SERVER, "summarize_text"),
    ("tool-rent", SERVER, "score_dataset"),
    ("server-rent", SERVER, ""),
    ("hidden-instruction-block", SERVER, "add_numbers"),
    ("instruction-override", SERVER, "translate_text"),
    ("sensitive-data-request", SERVER, "weather_report"),
    ("cross-tool-instruction", SERVER, "format_date"),
    ("cross-tool-instruction", SERVER, "get_time"),
    ("conceal-from-user", SERVER, "list_contacts"),
    ("invisible-characters", SERVER, "spell_check"),
    ("encoded-blob", SERVER, "decode_note"),
    ("hidden-text", SERVER, "word_frequency"),
    ("hidden-instruction-block", PEER, ""),
];

fn actual() -> BTreeSet<(String, String, String)> {
    lint(&lint_fixture_catalog(), &LintOptions::default())
        .findings
        .into_iter()
        .map(|f| (f.rule.to_string(), f.server, f.tool.unwrap_or_default()))
        .collect()
}

#[test]
fn every_rule_fires_exactly_where_expected() {
    let expected: BTreeSet<(String, String, String)> = EXPECTED
        .iter()
        .map(|(r, s, t)| (r.to_string(), s.to_string(), t.to_string()))
        .collect();
    let actual = actual();
    let missing: Vec<_> = expected.difference(&actual).collect();
    let extra: Vec<_> = actual.difference(&expected).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "missing: {missing:#?}\nunexpected: {extra:#?}"
    );
}

#[test]
fn every_documented_rule_is_exercised_by_the_fixture() {
    let fired: BTreeSet<&str> = EXPECTED.iter().map(|(r, _, _)| *r).collect();
    for r in rules() {
        assert!(fired.contains(r.id), "rule {} has no firing fixture", r.id);
    }
    assert_eq!(
        fired.len(),
        rules().len(),
        "a fixture expects a rule that is not documented"
    );
}

#[test]
fn clean_tools_have_no_findings_and_cover_every_family() {
    let report = lint(&lint_fixture_catalog(), &LintOptions::default());
    for tool in clean_tools() {
        let hits: Vec<_> = report
            .findings
            .iter()
            .filter(|f| f.tool.as_deref() == Some(tool.name.as_str()))
            .collect();
        assert!(hits.is_empty(), "clean tool {} fired: {hits:#?}", tool.name);
    }
    assert!(clean_tools().len() >= 5);
}

#[test]
fn severities_follow_what_the_tool_does() {
    let report = lint(&lint_fixture_catalog(), &LintOptions::default());
    let sev = |rule: &str, tool: &str| {
        report
            .findings
            .iter()
            .find(|f| f.rule == rule && f.tool.as_deref() == Some(tool))
            .map(|f| f.severity)
    };
    // Another server's tool is shadowing; a generic order is only suspicious.
    assert_eq!(
        sev("cross-tool-instruction", "get_time"),
        Some(Severity::Error)
    );
    assert_eq!(
        sev("cross-tool-instruction", "format_date"),
        Some(Severity::Warning)
    );
    assert_eq!(
        sev("open-object-schema", "get_forecast"),
        Some(Severity::Note)
    );
    assert_eq!(
        sev("missing-description", "get_weather"),
        Some(Severity::Error)
    );
    assert!(
        report.fails(FailOn::Error)
            && report.fails(FailOn::Warning)
            && !report.fails(FailOn::Never)
    );
}

#[test]
fn an_open_schema_on_a_tool_that_writes_is_a_warning() {
    use switchboard_core::{Catalog, Entry, ServerCatalog, Tool};
    let tool: Tool = serde_json::from_value(serde_json::json!({
        "name": "update_profile",
        "description": "Change the display name shown on the user's profile page.",
        "inputSchema": {"type": "object", "properties": {"display_name": {"type": "string", "maxLength": 80, "description": "New display name."}}},
        "annotations": {"readOnlyHint": false, "destructiveHint": false, "idempotentHint": true},
    }))
    .unwrap();
    let mut s = ServerCatalog::new("p");
    s.tools.push(Entry::new(tool));
    let report = lint(&Catalog::from_servers([s]), &LintOptions::default());
    let rules: Vec<_> = report
        .findings
        .iter()
        .map(|f| (f.rule, f.severity))
        .collect();
    assert_eq!(rules, [("open-object-schema", Severity::Warning)]);
}

#[test]
fn allowed_rules_are_not_reported_and_unknown_ones_are_refused() {
    let opts = LintOptions {
        allow: vec!["name-collision".into()],
        ..LintOptions::default()
    };
    assert!(opts.validate().is_ok());
    let report = lint(&lint_fixture_catalog(), &opts);
    assert!(report.findings.iter().all(|f| f.rule != "name-collision"));
    let bad = LintOptions {
        allow: vec!["no-such-rule".into()],
        ..LintOptions::default()
    };
    assert!(bad.validate().is_err());
}

#[test]
fn text_output_groups_by_server_and_tool_with_counts() {
    let report = lint(&lint_fixture_catalog(), &LintOptions::default());
    let text = report.text();
    assert!(
        text.starts_with(&format!(
            "server {SERVER}\n  get_weather\n    error[missing-description] /description:"
        )),
        "{text}"
    );
    assert!(text.contains("  (whole server)\n    warning[server-rent]"));
    assert!(text.contains(&format!("{} finding(s)", report.findings.len())));
    assert!(text.contains("by rule: "));
    let json = report.json();
    assert_eq!(json["summary"]["findings"], report.findings.len());
    assert_eq!(json["findings"][0]["rule"], "missing-description");
}
