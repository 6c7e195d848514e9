//! switchboard-lint: rules that read a tool definition the way a model and a provider will. Pure.
//!
//! `lint(catalog, options)` runs every rule over every tool and server and returns a
//! [`Report`]; the report renders as text, JSON or SARIF 2.1.0. Rules are documented in
//! [`rules()`] (what `switchboard lint --explain RULE` prints).

mod error;
mod finding;
mod report;
mod rule;
pub mod rules;
mod sarif;
mod walk;
mod words;

use switchboard_core::{Catalog, Dialect};

pub use error::LintError;
pub use finding::{FailOn, Finding, Severity};
pub use report::{Format, Report};
pub use rule::{Family, RuleDoc, explain, explain_text, rules};
pub use rules::rent::estimate_tokens;

use rules::{ToolCtx, contract, effect, poisoning, portability, rent, safety};

/// What to check and how strictly.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LintOptions {
    /// `tool-rent` fires above this many estimated tokens per tool definition.
    pub max_tool_tokens: usize,
    /// `server-rent` fires above this many estimated tokens per server.
    pub max_server_tokens: usize,
    /// The dialects portability rules check against.
    pub dialects: Vec<Dialect>,
    /// Rule ids not to report.
    pub allow: Vec<String>,
}

impl Default for LintOptions {
    fn default() -> Self {
        Self {
            max_tool_tokens: 500,
            max_server_tokens: 10_000,
            dialects: Dialect::ALL.to_vec(),
            allow: Vec::new(),
        }
    }
}

impl LintOptions {
    /// Check that every allowed rule exists (a typo would silently allow nothing).
    pub fn validate(&self) -> Result<(), LintError> {
        for id in &self.allow {
            explain(id)?;
        }
        Ok(())
    }
}

/// Run every rule over `catalog`. Findings are ordered by server, tool (catalog order), then
/// rule order within each family.
pub fn lint(catalog: &Catalog, opts: &LintOptions) -> Report {
    let mut findings = Vec::new();
    for server in catalog.servers.values() {
        for entry in &server.tools {
            let tool = &entry.def;
            // Serializing our own struct to a Value cannot fail (string keys only).
            let def = serde_json::to_value(tool).unwrap_or_default();
            let ctx = ToolCtx {
                server: &server.server,
                tool,
                def,
                effect: effect(tool),
                catalog,
                opts,
            };
            contract::check(&ctx, &mut findings);
            safety::check(&ctx, &mut findings);
            portability::check(&ctx, &mut findings);
            rent::check(&ctx, &mut findings);
            poisoning::check(&ctx, &mut findings);
        }
        rent::check_server(server, opts, &mut findings);
        poisoning::check_server(server, &mut findings);
    }
    portability::check_catalog(catalog, &mut findings);
    findings.retain(|f| !opts.allow.iter().any(|a| a == f.rule));
    Report::new(catalog, findings)
}
