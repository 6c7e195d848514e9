//! Which tools of a server may reach the model: allow and deny glob lists from the config, and
//! another host's permission rules when the config is that host's.

use globset::{Glob, GlobSet, GlobSetBuilder};

use serde_json::{Map, Value};

use crate::catalog::Tool;
use crate::error::CoreError;
use crate::host_rules::HostRules;

/// A compiled allow/deny pair. Deny wins; an empty allow list allows everything.
#[derive(Clone, Debug, Default)]
pub struct ToolFilter {
    allow: Option<GlobSet>,
    deny: Option<GlobSet>,
    deny_all: bool,
    rules: HostRules,
}

impl ToolFilter {
    /// Compile the lists; the first bad pattern is an error naming it.
    pub fn new(allow: &[String], deny: &[String]) -> Result<Self, CoreError> {
        Ok(Self {
            allow: build(allow)?,
            deny: build(deny)?,
            deny_all: false,
            rules: HostRules::default(),
        })
    }

    /// The same filter with another host's rules for this server: a tool they deny for every
    /// call is not permitted.
    pub fn with_rules(mut self, rules: HostRules) -> Self {
        self.rules = rules;
        self
    }

    /// The other host's rules it holds (none for switchboard's own config).
    pub fn rules(&self) -> &HostRules {
        &self.rules
    }

    /// A filter that lets no tool through (a server kept only for its resources and prompts).
    pub fn deny_all() -> Self {
        Self {
            deny_all: true,
            ..Self::default()
        }
    }

    /// Whether a tool with this name passes the filter.
    pub fn permits(&self, tool: &str) -> bool {
        self.permits_with(tool, None)
    }

    /// Whether `tool` passes the filter, its definition at hand: another host's rules on the
    /// tool's annotations decide too (Gemini CLI's `toolAnnotations`).
    pub fn permits_tool(&self, tool: &Tool) -> bool {
        if self.rules.is_empty() {
            return self.permits(&tool.name);
        }
        self.permits_with(&tool.name, Some(&tool.annotation_map()))
    }

    fn permits_with(&self, tool: &str, annotations: Option<&Map<String, Value>>) -> bool {
        if self.deny_all || self.deny.as_ref().is_some_and(|d| d.is_match(tool)) {
            return false;
        }
        if self.rules.denying_with(tool, annotations).is_some() {
            return false;
        }
        self.allow.as_ref().is_none_or(|a| a.is_match(tool))
    }
}

fn build(patterns: &[String]) -> Result<Option<GlobSet>, CoreError> {
    if patterns.is_empty() {
        return Ok(None);
    }
    let mut b = GlobSetBuilder::new();
    for p in patterns {
        let g = Glob::new(p).map_err(|e| CoreError::Glob {
            pattern: p.clone(),
            message: e.kind().to_string(),
        })?;
        b.add(g);
    }
    b.build().map(Some).map_err(|e| CoreError::Glob {
        pattern: patterns.join(", "),
        message: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(allow: &[&str], deny: &[&str]) -> ToolFilter {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        ToolFilter::new(&s(allow), &s(deny)).unwrap()
    }

    #[test]
    fn deny_wins_and_empty_allow_allows_all() {
        assert!(f(&[], &[]).permits("anything"));
        assert!(!f(&[], &["delete_*"]).permits("delete_repo"));
        assert!(f(&["get_*", "list_*"], &[]).permits("list_issues"));
        assert!(!f(&["get_*"], &[]).permits("create_issue"));
        assert!(!f(&["*"], &["create_*"]).permits("create_issue"));
        assert!(!ToolFilter::deny_all().permits("anything"));
    }

    #[test]
    fn a_bad_glob_names_itself() {
        let err = ToolFilter::new(&["[".into()], &[]).unwrap_err();
        assert!(err.to_string().contains("\"[\""), "{err}");
    }
}
