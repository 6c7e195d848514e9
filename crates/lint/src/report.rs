//! The result of a lint run and its text and JSON renderings (SARIF is in `sarif`).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::{Value, json};
use switchboard_core::Catalog;

use crate::error::LintError;
use crate::finding::{FailOn, Finding, Severity};

/// Every finding of one run, and what was checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    /// Findings, grouped by server (name order), then tool (catalog order).
    pub findings: Vec<Finding>,
    /// Servers checked.
    pub servers: usize,
    /// Tools checked.
    pub tools: usize,
}

/// An output format.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Format {
    /// Human-readable, grouped by server and tool.
    #[default]
    Text,
    /// The findings and a summary as JSON.
    Json,
    /// SARIF 2.1.0, for GitHub code scanning and other SARIF viewers.
    Sarif,
}

impl std::str::FromStr for Format {
    type Err = LintError;
    fn from_str(s: &str) -> Result<Self, LintError> {
        match s {
            "text" => Ok(Format::Text),
            "json" => Ok(Format::Json),
            "sarif" => Ok(Format::Sarif),
            _ => Err(LintError::BadValue {
                what: "--format value",
                value: s.to_string(),
                expected: "text, json, sarif",
            }),
        }
    }
}

impl Report {
    /// Order findings by server and the tool's position on its server; server-wide findings
    /// come after the server's tools.
    pub fn new(catalog: &Catalog, mut findings: Vec<Finding>) -> Self {
        let position = |f: &Finding| -> usize {
            let server = catalog.servers.get(&f.server);
            match (&f.tool, server) {
                (Some(t), Some(s)) => s
                    .tools
                    .iter()
                    .position(|e| &e.def.name == t)
                    .unwrap_or(usize::MAX),
                _ => usize::MAX,
            }
        };
        findings.sort_by_cached_key(|f| (f.server.clone(), position(f)));
        Self {
            findings,
            servers: catalog.servers.len(),
            tools: catalog.tool_count(),
        }
    }

    /// Number of findings at `severity`.
    pub fn count(&self, severity: Severity) -> usize {
        self.findings
            .iter()
            .filter(|f| f.severity == severity)
            .count()
    }

    /// Number of findings per rule id (rules with none are absent).
    pub fn by_rule(&self) -> BTreeMap<&'static str, usize> {
        let mut m = BTreeMap::new();
        for f in &self.findings {
            *m.entry(f.rule).or_insert(0) += 1;
        }
        m
    }

    /// The most severe finding, if any.
    pub fn worst(&self) -> Option<Severity> {
        self.findings.iter().map(|f| f.severity).max()
    }

    /// Whether the run fails under `fail_on` (some finding reaches its threshold).
    pub fn fails(&self, fail_on: FailOn) -> bool {
        match (fail_on.threshold(), self.worst()) {
            (Some(t), Some(w)) => w >= t,
            _ => false,
        }
    }

    /// Render in `format`. `artifact` names the linted thing for SARIF (a catalog path).
    pub fn render(&self, format: Format, artifact: Option<&str>) -> String {
        match format {
            Format::Text => self.text(),
            Format::Json => pretty(&self.json()),
            Format::Sarif => pretty(&crate::sarif::sarif(self, artifact)),
        }
    }

    /// Text: findings grouped by server and tool, then totals and counts per rule.
    pub fn text(&self) -> String {
        let mut out = String::new();
        let mut last_server: Option<&str> = None;
        let mut last_tool: Option<Option<&str>> = None;
        for f in &self.findings {
            if last_server != Some(f.server.as_str()) {
                if last_server.is_some() {
                    out.push('\n');
                }
                let _ = writeln!(out, "server {}", f.server);
                last_server = Some(&f.server);
                last_tool = None;
            }
            if last_tool != Some(f.tool.as_deref()) {
                let _ = writeln!(out, "  {}", f.tool.as_deref().unwrap_or("(whole server)"));
                last_tool = Some(f.tool.as_deref());
            }
            let at = if f.pointer.is_empty() {
                String::new()
            } else {
                format!(" {}", f.pointer)
            };
            let _ = writeln!(out, "    {}[{}]{at}: {}", f.severity, f.rule, f.message);
            let _ = writeln!(out, "      fix: {}", f.fix);
        }
        if !self.findings.is_empty() {
            out.push('\n');
        }
        let _ = writeln!(
            out,
            "{} finding(s): {} error(s), {} warning(s), {} note(s) in {} tool(s) on {} server(s)",
            self.findings.len(),
            self.count(Severity::Error),
            self.count(Severity::Warning),
            self.count(Severity::Note),
            self.tools,
            self.servers,
        );
        let by_rule = self.by_rule();
        if !by_rule.is_empty() {
            let parts: Vec<String> = by_rule.iter().map(|(r, n)| format!("{r} {n}")).collect();
            let _ = writeln!(out, "by rule: {}", parts.join(", "));
        }
        out
    }

    /// JSON: `{"summary": {...}, "findings": [...]}`.
    pub fn json(&self) -> Value {
        json!({
            "summary": {
                "servers": self.servers,
                "tools": self.tools,
                "findings": self.findings.len(),
                "errors": self.count(Severity::Error),
                "warnings": self.count(Severity::Warning),
                "notes": self.count(Severity::Note),
                "by_rule": self.by_rule(),
            },
            "findings": self.findings,
        })
    }
}

fn pretty(v: &Value) -> String {
    // Serializing a Value cannot fail.
    let mut s = serde_json::to_string_pretty(v).unwrap_or_default();
    s.push('\n');
    s
}
