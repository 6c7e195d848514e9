//! Rule documentation: every rule's id, family, default severity, a one-line summary, the
//! rationale and a definition that passes it. `--explain RULE` prints one of these.

use std::sync::LazyLock;

use serde::Serialize;

use crate::error::LintError;
use crate::finding::Severity;
use crate::rules::{contract, poisoning, portability, rent, safety};

/// Which concern a rule belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Family {
    /// The tool tells the model what it does and what it accepts.
    Contract,
    /// Annotations match what the tool does, so approval works.
    Safety,
    /// Names and schemas survive every provider without surprises.
    Portability,
    /// Tokens the definition costs on every request.
    Rent,
    /// Text aimed at the model rather than the user.
    Poisoning,
}

impl Family {
    /// Lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            Family::Contract => "contract",
            Family::Safety => "safety",
            Family::Portability => "portability",
            Family::Rent => "rent",
            Family::Poisoning => "poisoning",
        }
    }
}

/// Documentation of one rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct RuleDoc {
    /// Stable id, kebab-case.
    pub id: &'static str,
    /// Family.
    pub family: Family,
    /// Default severity (a few rules raise it for tools that write; the rationale says so).
    pub severity: Severity,
    /// One line, for the README and SARIF's shortDescription.
    pub summary: &'static str,
    /// Why it matters.
    pub rationale: &'static str,
    /// A definition (or fragment) that passes.
    pub good_example: &'static str,
}

static ALL: LazyLock<Vec<RuleDoc>> = LazyLock::new(|| {
    [
        contract::DOCS,
        safety::DOCS,
        portability::DOCS,
        rent::DOCS,
        poisoning::DOCS,
    ]
    .concat()
});

/// Every rule, grouped by family in a fixed order.
pub fn rules() -> &'static [RuleDoc] {
    &ALL
}

/// The documentation of one rule.
pub fn explain(id: &str) -> Result<&'static RuleDoc, LintError> {
    rules()
        .iter()
        .find(|r| r.id == id)
        .ok_or_else(|| LintError::UnknownRule {
            rule: id.to_string(),
        })
}

/// `--explain` as text: header, rationale, a passing example.
pub fn explain_text(doc: &RuleDoc) -> String {
    format!(
        "{id} ({family}, {severity})\n\n{summary}\n\n{rationale}\n\nPasses:\n{example}\n",
        id = doc.id,
        family = doc.family.as_str(),
        severity = doc.severity,
        summary = doc.summary,
        rationale = doc.rationale,
        example = doc.good_example,
    )
}
