//! SARIF output validates against the OASIS SARIF 2.1.0 schema and carries what GitHub code
//! scanning reads: driver name and rules, rule ids, levels, messages and locations.

use serde_json::Value;
use switchboard_lint::{Format, LintOptions, lint, rules};
use switchboard_test_support::lint_fixture::lint_fixture_catalog;

fn schema() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/sarif-schema-2.1.0.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn check(log: &Value) {
    let validator = jsonschema::validator_for(&schema()).expect("the SARIF schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(log)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "SARIF invalid:\n{}", errors.join("\n"));
}

fn log(artifact: Option<&str>) -> Value {
    let report = lint(&lint_fixture_catalog(), &LintOptions::default());
    serde_json::from_str(&report.render(Format::Sarif, artifact)).unwrap()
}

#[test]
fn sarif_validates_against_the_2_1_0_schema() {
    check(&log(None));
    check(&log(Some("catalogs/fixture.json")));
}

#[test]
fn the_validator_rejects_a_broken_log() {
    let mut bad = log(None);
    bad["runs"][0]["results"][0]["level"] = Value::from("fatal");
    let validator = jsonschema::validator_for(&schema()).unwrap();
    assert!(!validator.is_valid(&bad));
}

#[test]
fn sarif_carries_what_code_scanning_reads() {
    let log = log(None);
    assert_eq!(log["version"], "2.1.0");
    assert!(
        log["$schema"]
            .as_str()
            .unwrap()
            .contains("sarif-schema-2.1.0")
    );
    let driver = &log["runs"][0]["tool"]["driver"];
    assert_eq!(driver["name"], "switchboard");
    assert!(
        driver["informationUri"]
            .as_str()
            .unwrap()
            .starts_with("https://")
    );
    let ids: Vec<&str> = driver["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, rules().iter().map(|r| r.id).collect::<Vec<_>>());
    for r in driver["rules"].as_array().unwrap() {
        for key in ["shortDescription", "fullDescription", "help"] {
            assert!(
                r[key]["text"].as_str().is_some_and(|t| !t.is_empty()),
                "{key} of {}",
                r["id"]
            );
        }
        assert!(
            ["note", "warning", "error"]
                .contains(&r["defaultConfiguration"]["level"].as_str().unwrap())
        );
    }
    let results = log["runs"][0]["results"].as_array().unwrap();
    let first = &results[0];
    assert_eq!(first["ruleId"], "missing-description");
    assert_eq!(first["level"], "error");
    assert_eq!(
        first["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "mcp://lint-fixture/tools/get_weather"
    );
    let logical = &first["locations"][0]["logicalLocations"][0];
    assert_eq!(logical["fullyQualifiedName"], "lint-fixture/get_weather");
    assert_eq!(logical["properties"]["jsonPointer"], "/description");
    assert!(results.iter().all(|r| {
        r["message"]["text"]
            .as_str()
            .is_some_and(|t| !t.contains('\n'))
    }));
}
