//! A finding: one rule that fired at one place in one tool definition, with a concrete fix.

use serde::Serialize;

use crate::error::LintError;
use crate::rule::RuleDoc;

/// How bad a finding is. Ordered: `Note < Warning < Error`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing; the definition works.
    Note,
    /// Likely to cost accuracy, money or portability.
    Warning,
    /// Breaks a provider, misleads the approval step, or attacks the model.
    Error,
}

impl Severity {
    /// The lowercase word used in every output format (and SARIF's `level`).
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Note => "note",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

impl std::fmt::Display for Severity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One rule firing at one place.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// The rule id (see [`crate::rules`]).
    pub rule: &'static str,
    /// Severity of this finding (usually the rule's default).
    pub severity: Severity,
    /// The configured server name.
    pub server: String,
    /// The tool, or `None` for a finding about the whole server.
    pub tool: Option<String>,
    /// JSON pointer into the tool definition (`""` for the whole tool or server).
    pub pointer: String,
    /// What is wrong, on one line.
    pub message: String,
    /// What to change, concretely.
    pub fix: String,
}

impl Finding {
    /// A finding of `rule` at its default severity.
    pub fn new(
        rule: &RuleDoc,
        server: &str,
        tool: Option<&str>,
        pointer: impl Into<String>,
        message: impl Into<String>,
        fix: impl Into<String>,
    ) -> Self {
        Self {
            rule: rule.id,
            severity: rule.severity,
            server: server.to_string(),
            tool: tool.map(str::to_string),
            pointer: pointer.into(),
            message: one_line(message.into()),
            fix: one_line(fix.into()),
        }
    }

    /// The same finding at another severity (rules that are stricter for tools that write).
    pub fn with_severity(mut self, severity: Severity) -> Self {
        self.severity = severity;
        self
    }
}

/// Messages are one line by contract; quoted definition text may carry newlines.
fn one_line(s: String) -> String {
    if s.contains(['\n', '\r']) {
        s.split(['\n', '\r'])
            .filter(|l| !l.trim().is_empty())
            .collect::<Vec<_>>()
            .join(" ")
    } else {
        s
    }
}

/// The exit-code policy: which severity makes a run fail.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FailOn {
    /// Fail when any error-level finding exists (the default).
    #[default]
    Error,
    /// Fail on warnings and errors.
    Warning,
    /// Never fail because of findings.
    Never,
}

impl FailOn {
    /// The lowest severity that fails the run, if any.
    pub fn threshold(self) -> Option<Severity> {
        match self {
            FailOn::Error => Some(Severity::Error),
            FailOn::Warning => Some(Severity::Warning),
            FailOn::Never => None,
        }
    }
}

impl std::str::FromStr for FailOn {
    type Err = LintError;
    fn from_str(s: &str) -> Result<Self, LintError> {
        match s {
            "error" => Ok(FailOn::Error),
            "warning" => Ok(FailOn::Warning),
            "never" => Ok(FailOn::Never),
            _ => Err(LintError::BadValue {
                what: "--fail-on value",
                value: s.to_string(),
                expected: "error, warning, never",
            }),
        }
    }
}
