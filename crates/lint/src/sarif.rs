//! SARIF 2.1.0 output, shaped for GitHub code scanning: one run, the rules as
//! `tool.driver.rules`, each finding a result with a physical location (the catalog file, or an
//! `mcp://server/tools/tool` URI) and a logical location `server/tool` carrying the JSON pointer.

use serde_json::{Value, json};

use crate::finding::Severity;
use crate::report::Report;
use crate::rule::rules;
use crate::walk::escape;

const SCHEMA: &str =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";
const INFO_URI: &str = "https://github.com/switchboard-mcp/switchboard";

/// URI-escape a name for `mcp://` locations (everything outside unreserved characters).
fn uri_part(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn level(s: Severity) -> &'static str {
    s.as_str()
}

/// The report as a SARIF 2.1.0 log. `artifact` (a catalog file path) becomes every result's
/// artifact URI when given; otherwise each tool gets `mcp://<server>/tools/<tool>`.
pub fn sarif(report: &Report, artifact: Option<&str>) -> Value {
    let all = rules();
    let driver_rules: Vec<Value> = all
        .iter()
        .map(|r| {
            json!({
                "id": r.id,
                "name": r.id,
                "shortDescription": {"text": r.summary},
                "fullDescription": {"text": r.rationale},
                "help": {
                    "text": format!("{}\n\nPasses:\n{}", r.rationale, r.good_example),
                    "markdown": format!("{}\n\nPasses:\n\n```json\n{}\n```", r.rationale, r.good_example),
                },
                "defaultConfiguration": {"level": level(r.severity)},
                "properties": {"family": r.family.as_str(), "tags": [r.family.as_str(), "mcp"]},
            })
        })
        .collect();
    let results: Vec<Value> = report
        .findings
        .iter()
        .map(|f| {
            let uri = match (artifact, &f.tool) {
                (Some(a), _) => a.to_string(),
                (None, Some(t)) => format!("mcp://{}/tools/{}", uri_part(&f.server), uri_part(t)),
                (None, None) => format!("mcp://{}", uri_part(&f.server)),
            };
            let (fqn, kind) = match &f.tool {
                Some(t) => (format!("{}/{}", f.server, t), "function"),
                None => (f.server.clone(), "module"),
            };
            let rule_index = all.iter().position(|r| r.id == f.rule).unwrap_or(0);
            json!({
                "ruleId": f.rule,
                "ruleIndex": rule_index,
                "level": level(f.severity),
                "message": {"text": format!("{} Fix: {}", f.message, f.fix)},
                "locations": [{
                    "physicalLocation": {"artifactLocation": {"uri": uri}},
                    "logicalLocations": [{
                        "name": f.tool.as_deref().unwrap_or(&f.server),
                        "fullyQualifiedName": fqn,
                        "kind": kind,
                        "properties": {"jsonPointer": f.pointer},
                    }],
                }],
                // Code scanning deduplicates alerts across runs by fingerprint; the rule, the
                // place and the pointer identify a finding without line numbers.
                "partialFingerprints": {
                    "switchboardFinding/v1": format!("{}:{}#{}", f.rule, fqn, escape(&f.pointer)),
                },
                "properties": {"server": f.server, "tool": f.tool, "jsonPointer": f.pointer, "fix": f.fix},
            })
        })
        .collect();
    json!({
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "switchboard",
                "informationUri": INFO_URI,
                "version": env!("CARGO_PKG_VERSION"),
                "rules": driver_rules,
            }},
            "results": results,
        }],
    })
}
