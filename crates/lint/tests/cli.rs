//! The CLI's `lint` module (crates/cli/src/lint_cmd.rs), compiled here so its argument parsing
//! and exit-code policy are tested with the rules they drive.

#[path = "../../cli/src/lint_cmd.rs"]
#[allow(dead_code)]
mod lint_cmd;

use clap::Parser;
use lint_cmd::{LintArgs, render, run_standalone};
use switchboard_test_support::lint_fixture::lint_fixture_catalog;

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    lint: LintArgs,
}

fn args(argv: &[&str]) -> LintArgs {
    Cli::try_parse_from(std::iter::once("lint").chain(argv.iter().copied()))
        .unwrap()
        .lint
}

#[test]
fn fail_on_sets_the_exit_code() {
    let catalog = lint_fixture_catalog();
    assert_eq!(render(&args(&[]), &catalog).0, 1);
    assert_eq!(render(&args(&["--fail-on", "never"]), &catalog).0, 0);
    assert_eq!(render(&args(&["--fail-on", "warning"]), &catalog).0, 1);
}

#[test]
fn a_clean_catalog_exits_zero_even_on_warning() {
    use switchboard_core::{Catalog, Entry, ServerCatalog};
    let mut s = ServerCatalog::new("clean");
    s.tools = switchboard_test_support::lint_fixture::clean_tools()
        .into_iter()
        .map(Entry::new)
        .collect();
    let (code, text) = render(
        &args(&["--fail-on", "warning"]),
        &Catalog::from_servers([s]),
    );
    assert_eq!(code, 0, "{text}");
    assert!(text.starts_with("0 finding(s)"), "{text}");
}

#[test]
fn formats_and_usage_errors() {
    let catalog = lint_fixture_catalog();
    let (_, json) = render(&args(&["--format", "json"]), &catalog);
    assert!(serde_json::from_str::<serde_json::Value>(&json).unwrap()["summary"].is_object());
    let (_, sarif) = render(
        &args(&["--format", "sarif", "--sarif-uri", "fixture.json"]),
        &catalog,
    );
    assert!(sarif.contains("\"uri\": \"fixture.json\""));
    assert_eq!(render(&args(&["--allow", "nope"]), &catalog).0, 2);
    assert!(run_standalone(&args(&[])).is_none());
    assert!(run_standalone(&args(&["--explain", "hidden-text"])).is_some());
    assert!(run_standalone(&args(&["--list-rules"])).is_some());
    assert!(Cli::try_parse_from(["lint", "--provider", "gemini"]).is_ok());
    assert!(Cli::try_parse_from(["lint", "--provider", "cohere"]).is_err());
    assert!(Cli::try_parse_from(["lint", "--fail-on", "sometimes"]).is_err());
}

#[test]
fn the_global_json_flag_selects_json_unless_a_format_is_given() {
    // Regression: `switchboard --json lint` printed the text report.
    let catalog = lint_fixture_catalog();
    let mut a = args(&[]);
    a.json_unless_format_given();
    let (_, text) = render(&a, &catalog);
    let v: serde_json::Value = serde_json::from_str(&text).expect("JSON under --json");
    assert!(v["findings"].is_array(), "{v}");
    let mut a = args(&["--format", "sarif"]);
    a.json_unless_format_given();
    let (_, text) = render(&a, &catalog);
    assert!(text.contains("\"runs\""), "{text}");
    let (_, text) = render(&args(&[]), &catalog);
    assert!(serde_json::from_str::<serde_json::Value>(&text).is_err());
}
