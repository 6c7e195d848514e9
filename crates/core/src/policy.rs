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
    /// The allow and deny lists as the config's file names them, where it is not
    /// `tools.allow` / `tools.deny`.
    names: Option<Box<(String, String)>>,
    /// A second allow list a tool must also pass (a profile's `tools`), with its name.
    narrow: Option<Box<(GlobSet, String)>>,
}

impl ToolFilter {
    /// Compile the lists; the first bad pattern is an error naming it.
    pub fn new(allow: &[String], deny: &[String]) -> Result<Self, CoreError> {
        Ok(Self {
            allow: build(allow)?,
            deny: build(deny)?,
            deny_all: false,
            rules: HostRules::default(),
            names: None,
            narrow: None,
        })
    }

    /// The same filter narrowed by another allow list (a profile's `tools`): a tool must pass
    /// both, so the narrowing never lets through what the config's own lists keep out. `name`
    /// is how messages name the narrowing list. An empty list changes nothing.
    pub fn narrowed(
        mut self,
        allow: &[String],
        name: impl Into<String>,
    ) -> Result<Self, CoreError> {
        self.narrow = build(allow)?.map(|set| Box::new((set, name.into())));
        Ok(self)
    }

    /// The same filter with its lists named as the config's file writes them (Gemini CLI's
    /// `includeTools`, Cline's `disabledTools`, Codex's `enabled_tools`), so a message says which
    /// setting keeps a tool from the model in the user's words.
    pub fn lists_named(mut self, allow: impl Into<String>, deny: impl Into<String>) -> Self {
        self.names = Some(Box::new((allow.into(), deny.into())));
        self
    }

    /// The config's list that keeps `tool` from the model, by the name the file gives it: the
    /// deny list when one of its patterns names the tool, else the allow list (which does not
    /// name it, or, in a filter that lets nothing through, names nothing). Other hosts' rules
    /// are [`HostRules::denying_with`]'s to name.
    pub fn list_hiding(&self, tool: &str) -> &str {
        let denied = !self.deny_all && self.deny.as_ref().is_some_and(|d| d.is_match(tool));
        let own_allows = self.allow.as_ref().is_none_or(|a| a.is_match(tool));
        if let Some(narrow) = &self.narrow
            && !denied
            && own_allows
            && !narrow.0.is_match(tool)
        {
            return &narrow.1;
        }
        match (&self.names, denied) {
            (Some(n), true) => &n.1,
            (Some(n), false) => &n.0,
            (None, true) => "tools.deny",
            (None, false) => "tools.allow",
        }
    }

    /// The allow and deny lists' names (`tools.allow`, `tools.deny` unless the file names them
    /// otherwise).
    pub fn list_names(&self) -> (&str, &str) {
        match &self.names {
            Some(n) => (&n.0, &n.1),
            None => ("tools.allow", "tools.deny"),
        }
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
            && self.narrow.as_ref().is_none_or(|n| n.0.is_match(tool))
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
    fn the_list_that_hides_a_tool_is_named_as_written() {
        let plain = f(&["get_*"], &["get_secret"]);
        assert_eq!(plain.list_hiding("get_secret"), "tools.deny");
        assert_eq!(plain.list_hiding("create_issue"), "tools.allow");
        let named = plain.lists_named("includeTools", "disabledTools");
        assert_eq!(named.list_hiding("get_secret"), "disabledTools");
        assert_eq!(named.list_hiding("create_issue"), "includeTools");
        assert_eq!(named.list_names(), ("includeTools", "disabledTools"));
        // Nothing let through: the allow list (which names nothing) is the one that hides.
        let none = ToolFilter::deny_all().lists_named("profile tools", "tools.deny");
        assert_eq!(none.list_hiding("anything"), "profile tools");
    }

    #[test]
    fn a_bad_glob_names_itself() {
        let err = ToolFilter::new(&["[".into()], &[]).unwrap_err();
        assert!(err.to_string().contains("\"[\""), "{err}");
    }
}
