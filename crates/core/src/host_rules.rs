//! Another host's ordered permission rules for one server's tools (Claude Code's
//! `permissions`, Amp's `amp.permissions`, OpenCode's `permission`, Gemini CLI's policies),
//! matched against the name that host gives a tool: `mcp__SERVER__TOOL` (Claude Code, Amp) or
//! `SERVER_TOOL` (OpenCode), each part with every character other than `A-Z a-z 0-9 _ -` made
//! `_`, or a name the reader's function writes (Gemini CLI's `mcp_SERVER_TOOL`). A rule may hold
//! only for calls whose arguments pass a test (Amp's `matches`, Gemini CLI's `argsPattern`) or
//! only for tools with some annotations (Gemini CLI's `toolAnnotations`): it never hides a tool,
//! and is decided per call.

use std::fmt;
use std::sync::Arc;

use globset::{Glob, GlobMatcher};
use serde_json::{Map, Value};

use crate::error::CoreError;

/// What a rule says about the calls it matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The tool is kept from the model and its calls refused.
    Deny,
    /// Every call asks the user first.
    Ask,
    /// Calls go ahead without asking.
    Allow,
    /// The tool is offered; whether a call asks is left to switchboard's own settings (OpenCode's
    /// `"tools": {"NAME": true}`).
    Enable,
}

/// The arguments of a call, as MCP sends them.
pub type Arguments = Map<String, Value>;

/// A test of a call's arguments that a rule holds for only when it passes (the host's own
/// reading of its conditions, given by the reader of its settings).
#[derive(Clone)]
pub struct Condition(Arc<dyn Fn(&Arguments) -> bool + Send + Sync>);

impl Condition {
    /// A condition that passes when `test` says so of the arguments.
    pub fn new(test: impl Fn(&Arguments) -> bool + Send + Sync + 'static) -> Self {
        Self(Arc::new(test))
    }

    /// Whether the call's arguments pass.
    pub fn holds(&self, arguments: &Arguments) -> bool {
        (self.0)(arguments)
    }
}

impl fmt::Debug for Condition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Condition")
    }
}

/// One rule: a glob over the host's tool name, its verdict and where it was written.
#[derive(Clone, Debug)]
pub struct HostRule {
    matcher: GlobMatcher,
    /// The rule's verdict.
    pub verdict: Verdict,
    /// The rule matches only calls whose arguments pass this: it never hides a tool; a call
    /// whose arguments are not known yet counts a `Deny` or `Ask` of it as `Ask` and passes
    /// over an `Allow`.
    pub condition: Option<Condition>,
    /// The rule holds only for tools whose annotations have these values (Gemini CLI's
    /// `toolAnnotations`): it never hides a tool, and is decided when the tool's definition is
    /// at hand.
    pub annotations: Option<Map<String, Value>>,
    /// What the host tells the model when this rule refuses a call (Amp's `message`).
    pub message: Option<String>,
    /// The rule as its host names it, for messages a model may read: `Claude Code's
    /// permissions.deny "mcp__github__delete_repo"`.
    pub rule: String,
    /// The file it was written in.
    pub file: String,
    /// The one name the pattern matches, when it has no wildcard.
    exact: Option<String>,
}

impl HostRule {
    /// A rule over the host names `pattern` matches, a glob over the whole name
    /// (`mcp__github__*`), holding for every call until it is given a condition. A bad glob is an
    /// error naming it.
    pub fn new(
        pattern: &str,
        verdict: Verdict,
        rule: String,
        file: String,
    ) -> Result<Self, CoreError> {
        let matcher = Glob::new(pattern)
            .map_err(|e| CoreError::Glob {
                pattern: pattern.to_string(),
                message: e.kind().to_string(),
            })?
            .compile_matcher();
        Ok(HostRule {
            matcher,
            verdict,
            condition: None,
            annotations: None,
            message: None,
            rule,
            file,
            exact: unescaped(pattern),
        })
    }

    /// The same rule, written for the tools of every server (Gemini CLI's `tools.exclude`), so
    /// a server without the tool it names is no sign of a typo: [`HostRules::exact_tools`]
    /// leaves it out.
    pub fn for_any_server(mut self) -> Self {
        self.exact = None;
        self
    }

    /// The rule and its file, for the user: `~/.claude/settings.json: Claude Code's
    /// permissions.deny "mcp__github__delete_repo"`.
    pub fn source(&self) -> String {
        format!("{}: {}", self.file, self.rule)
    }

    /// Whether it holds only for some calls, by their arguments.
    pub fn is_conditional(&self) -> bool {
        self.condition.is_some()
    }

    /// Whether it holds for every call of every tool its pattern matches (no condition on the
    /// arguments, none on the tool's annotations): only such a rule can hide a tool.
    pub fn is_unconditional(&self) -> bool {
        self.condition.is_none() && self.annotations.is_none()
    }

    /// Whether it holds for a call: `Some(true)` or `Some(false)` when what it tests is known,
    /// `None` when it tests the annotations or the arguments and they are not given.
    fn holds(
        &self,
        annotations: Option<&Map<String, Value>>,
        arguments: Option<&Arguments>,
    ) -> Option<bool> {
        let tool = match (&self.annotations, annotations) {
            (None, _) => Some(true),
            (Some(wanted), Some(has)) => Some(
                wanted
                    .iter()
                    .all(|(k, v)| has.get(k).is_some_and(|h| same_value(h, v))),
            ),
            (Some(_), None) => None,
        };
        let call = match (&self.condition, arguments) {
            (None, _) => Some(true),
            (Some(c), Some(args)) => Some(c.holds(args)),
            (Some(_), None) => None,
        };
        match (tool, call) {
            (Some(false), _) | (_, Some(false)) => Some(false),
            (Some(true), Some(true)) => Some(true),
            _ => None,
        }
    }
}

/// JavaScript's `===` between two JSON values: texts, booleans and `null` by value, numbers by
/// numeric value; objects and arrays are never equal (they would be two objects).
fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(_) | Value::Object(_), _) => false,
        _ => a == b,
    }
}

/// A server's rules: one or more lists, each decided by its first matching rule, and the
/// strictest of the lists' decisions holds (a host that reads a user's file and a project's
/// file gets one list from each, so neither loosens the other).
#[derive(Clone, Debug, Default)]
pub struct HostRules {
    server: String,
    /// What comes before the server's part of a tool's name, and between it and the tool's.
    before: &'static str,
    between: &'static str,
    /// The host writes names as they are (Zed, Crush), not with `host_part`.
    exact: bool,
    /// How the host names a tool from the server's name and the tool's, when it is neither
    /// of the above (Gemini CLI's `mcp_SERVER_TOOL`, made valid and cut to 63 characters).
    name_of: Option<fn(&str, &str) -> String>,
    lists: Vec<Vec<HostRule>>,
}

/// A name as Claude Code (and Amp) write it inside a tool name: each character Anthropic's
/// tool names do not take (outside `A-Z a-z 0-9 _ -`) made `_`.
pub fn host_part(name: &str) -> String {
    name.chars()
        .map(|c| {
            if crate::names::allowed(crate::Dialect::Anthropic, c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// A name as a glob that matches only itself: each glob character stands for itself.
pub fn literal(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '{' | '}' | '\\') {
            out.push('[');
            out.push(c);
            out.push(']');
        } else {
            out.push(c);
        }
    }
    out
}

/// The one text a glob matches, when it has no wildcard (a character in brackets, as
/// [`literal`] writes it, is itself).
fn unescaped(pattern: &str) -> Option<String> {
    let mut out = String::with_capacity(pattern.len());
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '[' => {
                let inner = chars.next()?;
                if chars.next()? != ']' {
                    return None;
                }
                out.push(inner);
            }
            '*' | '?' | ']' | '{' | '}' | '\\' => return None,
            c => out.push(c),
        }
    }
    Some(out)
}

/// A host's simple wildcard (`*` any characters, `?` one, every other character itself) as a
/// glob.
pub fn wildcard(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len());
    for c in pattern.chars() {
        if matches!(c, '*' | '?') {
            out.push(c);
        } else {
            out.push_str(&literal(&c.to_string()));
        }
    }
    out
}

impl HostRules {
    /// No rules yet, for the server configured as `server`, whose tools the host names
    /// `mcp__SERVER__TOOL`.
    pub fn new(server: &str) -> Self {
        Self::named(server, "mcp__", "__")
    }

    /// No rules yet, for a host that names a tool `{before}SERVER{between}TOOL`.
    pub fn named(server: &str, before: &'static str, between: &'static str) -> Self {
        Self {
            server: host_part(server),
            before,
            between,
            exact: false,
            name_of: None,
            lists: Vec::new(),
        }
    }

    /// No rules yet, for a host that names a tool `{before}SERVER{between}TOOL` with both names
    /// as they are.
    pub fn exact(server: &str, before: &'static str, between: &'static str) -> Self {
        Self {
            server: server.to_string(),
            before,
            between,
            exact: true,
            name_of: None,
            lists: Vec::new(),
        }
    }

    /// No rules yet, for a host that names a tool `name_of(SERVER, TOOL)`, which for most
    /// names is `{before}SERVER{between}TOOL` (the form [`HostRules::exact_tools`] reads).
    pub fn named_by(
        server: &str,
        before: &'static str,
        between: &'static str,
        name_of: fn(&str, &str) -> String,
    ) -> Self {
        Self {
            name_of: Some(name_of),
            ..Self::exact(server, before, between)
        }
    }

    /// Start another list: the rules pushed from now on are decided apart from those before.
    pub fn next_list(&mut self) {
        if self.lists.last().is_some_and(|l| !l.is_empty()) {
            self.lists.push(Vec::new());
        }
    }

    /// Add a rule that holds for every call after the others (see [`HostRule::new`]).
    pub fn push(
        &mut self,
        pattern: &str,
        verdict: Verdict,
        rule: String,
        file: String,
    ) -> Result<(), CoreError> {
        self.add(HostRule::new(pattern, verdict, rule, file)?);
        Ok(())
    }

    /// Add `rule` after the others.
    pub fn add(&mut self, rule: HostRule) {
        match self.lists.last_mut() {
            Some(list) => list.push(rule),
            None => self.lists.push(vec![rule]),
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.lists.iter().all(Vec::is_empty)
    }

    /// The rules, list after list.
    pub fn rules(&self) -> impl Iterator<Item = &HostRule> {
        self.lists.iter().flatten()
    }

    /// The rules that name one tool of this server exactly (no wildcard), with the tool's part
    /// of the name: a rule whose tool the server does not list holds for nothing, which a typo
    /// in a deny rule makes worth saying.
    pub fn exact_tools(&self) -> impl Iterator<Item = (&HostRule, &str)> {
        let prefix = format!("{}{}{}", self.before, self.server, self.between);
        self.rules().filter_map(move |r| {
            let tool = r.exact.as_deref()?.strip_prefix(prefix.as_str())?;
            Some((r, tool))
        })
    }

    /// The name the host gives `tool` of this server.
    pub fn host_name(&self, tool: &str) -> String {
        if let Some(name_of) = self.name_of {
            return name_of(&self.server, tool);
        }
        let tool = if self.exact {
            tool.to_string()
        } else {
            host_part(tool)
        };
        format!("{}{}{}{tool}", self.before, self.server, self.between)
    }

    /// The rule that decides whether `tool` is listed: the first that matches it and holds for
    /// every call. A conditional rule cannot hide a tool; one that allows or asks about some
    /// calls keeps it listed (those calls must be possible), whatever a later rule says.
    pub fn listing(&self, tool: &str) -> Option<&HostRule> {
        self.listing_with(tool, None)
    }

    /// [`HostRules::listing`], with the tool's annotations when its definition is at hand: a
    /// rule on the annotations then decides like any other for the tools it holds for, and is
    /// passed over for the others.
    pub fn listing_with(
        &self,
        tool: &str,
        annotations: Option<&Map<String, Value>>,
    ) -> Option<&HostRule> {
        if self.is_empty() {
            return None;
        }
        let name = self.host_name(tool);
        strictest(self.lists.iter().filter_map(|list| {
            list.iter()
                .filter(|r| r.matcher.is_match(&name))
                // Whether it holds for every call of this tool: `None` when it decides by the
                // arguments (or by annotations not given).
                .map(|r| (r, r.holds(annotations, None)))
                .filter(|(_, holds)| *holds != Some(false))
                .find(|(r, holds)| holds.is_some() || r.verdict != Verdict::Deny)
                .filter(|(_, holds)| holds.is_some())
                .map(|(r, _)| (r.verdict, r))
        }))
        .map(|(_, r)| r)
    }

    /// The rule that keeps `tool` from models, when one does.
    pub fn denying(&self, tool: &str) -> Option<&HostRule> {
        self.denying_with(tool, None)
    }

    /// [`HostRules::denying`], with the tool's annotations (see [`HostRules::listing_with`]).
    pub fn denying_with(
        &self,
        tool: &str,
        annotations: Option<&Map<String, Value>>,
    ) -> Option<&HostRule> {
        self.listing_with(tool, annotations)
            .filter(|r| r.verdict == Verdict::Deny)
    }

    /// The rule that decides a call of `tool` with `arguments`: the first that matches the
    /// tool and, when it has a condition, whose condition the arguments pass. With the
    /// arguments unknown (`None`), a conditional `Allow` is passed over (it may not hold for
    /// the call) and a conditional `Deny` or `Ask` counts as `Ask` (it may).
    pub fn call(&self, tool: &str, arguments: Option<&Arguments>) -> Option<(Verdict, &HostRule)> {
        self.decide(tool, None, arguments)
    }

    /// [`HostRules::call`], with the tool's annotations when its definition is at hand
    /// (`Some`, empty when it has none): a rule on the annotations is then decided too, and
    /// otherwise counted as a rule on the arguments whose arguments are not known.
    pub fn decide(
        &self,
        tool: &str,
        annotations: Option<&Map<String, Value>>,
        arguments: Option<&Arguments>,
    ) -> Option<(Verdict, &HostRule)> {
        if self.is_empty() {
            return None;
        }
        let name = self.host_name(tool);
        strictest(self.lists.iter().filter_map(|list| {
            list.iter()
                .filter(|r| r.matcher.is_match(&name))
                .find_map(|r| match (r.holds(annotations, arguments), r.verdict) {
                    (Some(true), v) => Some((v, r)),
                    (Some(false), _) | (None, Verdict::Allow | Verdict::Enable) => None,
                    (None, _) => Some((Verdict::Ask, r)),
                })
        }))
    }
}

/// Of the lists' decisions, the strictest: deny, then ask, then allow; the first list's among
/// equals.
fn strictest<'a>(
    decisions: impl Iterator<Item = (Verdict, &'a HostRule)>,
) -> Option<(Verdict, &'a HostRule)> {
    let rank = |v: Verdict| match v {
        Verdict::Deny => 0,
        Verdict::Ask => 1,
        Verdict::Enable => 2,
        Verdict::Allow => 3,
    };
    decisions.fold(None, |best, (v, r)| match best {
        Some((b, _)) if rank(b) <= rank(v) => best,
        _ => Some((v, r)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rules from `(pattern, verdict, conditional)`; a conditional rule holds for calls whose
    /// `path` argument starts with `/etc`.
    fn rules(server: &str, list: &[(&str, Verdict, bool)]) -> HostRules {
        let mut r = HostRules::new(server);
        for (p, v, c) in list {
            let mut rule = HostRule::new(p, *v, format!("rule {p}"), "f".into()).unwrap();
            if *c {
                rule.condition = Some(Condition::new(|args| {
                    args.get("path")
                        .and_then(Value::as_str)
                        .is_some_and(|p| p.starts_with("/etc"))
                }));
            }
            r.add(rule);
        }
        r
    }

    #[test]
    fn names_are_written_as_the_host_writes_them() {
        assert_eq!(host_part("my server.v2"), "my_server_v2");
        assert_eq!(host_part("git_diff-tool"), "git_diff-tool");
        let r = HostRules::new("docs.site");
        assert_eq!(r.host_name("get.page"), "mcp__docs_site__get_page");
        let r = HostRules::named("docs.site", "", "_");
        assert_eq!(r.host_name("get.page"), "docs_site_get_page");
        let r = HostRules::exact("docs.site", "mcp:", ":");
        assert_eq!(r.host_name("get.page"), "mcp:docs.site:get.page");
    }

    #[test]
    fn a_literal_matches_only_itself() {
        let g = Glob::new(&literal("a*b?[c]{d}\\e"))
            .unwrap()
            .compile_matcher();
        assert!(g.is_match("a*b?[c]{d}\\e"));
        assert!(!g.is_match("axxb?[c]{d}\\e") && !g.is_match("a*bz[c]{d}\\e"));
    }

    #[test]
    fn a_wildcard_keeps_only_its_star_and_question_mark() {
        assert_eq!(wildcard("gh_*"), "gh_*");
        assert_eq!(wildcard("a[b]{c}"), "a[[]b[]][{]c[}]");
        let g = Glob::new(&wildcard("x{y}_?")).unwrap().compile_matcher();
        assert!(g.is_match("x{y}_a") && !g.is_match("xy_a"));
    }

    #[test]
    fn the_first_matching_rule_decides() {
        let r = rules(
            "gh",
            &[
                ("mcp__gh__get_*", Verdict::Allow, false),
                ("mcp__gh__*", Verdict::Deny, false),
            ],
        );
        assert_eq!(r.listing("get_issue").unwrap().verdict, Verdict::Allow);
        assert_eq!(r.listing("delete_repo").unwrap().verdict, Verdict::Deny);
        assert!(
            rules("other", &[("mcp__gh__*", Verdict::Deny, false)])
                .listing("x")
                .is_none()
        );
        // The tool's own name, not the host's, may hold a dot.
        let dotted = rules("gh", &[("mcp__gh__get_page", Verdict::Deny, false)]);
        assert_eq!(dotted.listing("get.page").unwrap().verdict, Verdict::Deny);
    }

    #[test]
    fn a_conditional_rule_never_hides_and_asks_when_it_may_refuse() {
        let r = rules(
            "fs",
            &[
                ("mcp__fs__write", Verdict::Allow, true),
                ("mcp__fs__write", Verdict::Deny, true),
                ("mcp__fs__*", Verdict::Allow, false),
            ],
        );
        // The conditional allow keeps the tool listed: the calls it holds for can be made.
        assert!(r.listing("write").is_none());
        assert_eq!(r.listing("read").unwrap().verdict, Verdict::Allow);
        let (v, rule) = r.call("write", None).unwrap();
        assert_eq!(v, Verdict::Ask);
        assert!(rule.is_conditional());
        assert_eq!(r.call("read", None).unwrap().0, Verdict::Allow);
    }

    #[test]
    fn with_the_arguments_known_a_conditional_rule_holds_only_when_they_pass() {
        let r = rules(
            "fs",
            &[
                ("mcp__fs__write", Verdict::Deny, true),
                ("mcp__fs__*", Verdict::Allow, false),
            ],
        );
        let args = |v: Value| v.as_object().cloned().unwrap();
        let etc = args(serde_json::json!({"path": "/etc/passwd"}));
        let home = args(serde_json::json!({"path": "/home/a/notes"}));
        let (v, rule) = r.call("write", Some(&etc)).unwrap();
        assert_eq!(
            (v, rule.rule.as_str()),
            (Verdict::Deny, "rule mcp__fs__write")
        );
        let (v, rule) = r.call("write", Some(&home)).unwrap();
        assert_eq!((v, rule.rule.as_str()), (Verdict::Allow, "rule mcp__fs__*"));
        // An allow that holds for these arguments comes before the refusal.
        let r = rules(
            "fs",
            &[
                ("mcp__fs__write", Verdict::Allow, true),
                ("mcp__fs__write", Verdict::Ask, false),
            ],
        );
        assert_eq!(r.call("write", Some(&etc)).unwrap().0, Verdict::Allow);
        assert_eq!(r.call("write", Some(&home)).unwrap().0, Verdict::Ask);
        // A conditional rule alone decides nothing for calls it does not hold for.
        let r = rules("fs", &[("mcp__fs__write", Verdict::Deny, true)]);
        assert!(r.call("write", Some(&home)).is_none());
    }

    #[test]
    fn of_two_lists_the_strictest_decision_holds() {
        let mut r = HostRules::new("gh");
        r.push("mcp__gh__*", Verdict::Allow, "user".into(), "f".into())
            .unwrap();
        r.next_list();
        r.push(
            "mcp__gh__delete_*",
            Verdict::Deny,
            "project".into(),
            "f".into(),
        )
        .unwrap();
        r.push("mcp__gh__*", Verdict::Ask, "project".into(), "f".into())
            .unwrap();
        assert_eq!(r.listing("delete_repo").unwrap().rule, "project");
        assert_eq!(r.call("get_issue", None).unwrap().0, Verdict::Ask);
        assert_eq!(r.rules().count(), 3);
        // Within one list the first match still wins.
        let mut one = HostRules::new("gh");
        one.push("mcp__gh__*", Verdict::Allow, "a".into(), "f".into())
            .unwrap();
        one.push("mcp__gh__*", Verdict::Deny, "b".into(), "f".into())
            .unwrap();
        assert_eq!(one.call("x", None).unwrap().0, Verdict::Allow);
    }

    #[test]
    fn rules_naming_one_tool_are_known_by_its_name() {
        let mut r = HostRules::new("gh");
        for p in ["mcp__gh__delete_repo", "mcp__gh__get_*", "mcp__other__x"] {
            r.push(p, Verdict::Deny, p.into(), "f".into()).unwrap();
        }
        r.push(
            &literal("mcp__gh__a*b"),
            Verdict::Ask,
            "lit".into(),
            "f".into(),
        )
        .unwrap();
        let named: Vec<&str> = r.exact_tools().map(|(_, t)| t).collect();
        assert_eq!(named, ["delete_repo", "a*b"]);
    }

    #[test]
    fn a_conditional_allow_keeps_a_tool_listed_that_a_later_rule_denies() {
        let r = rules(
            "fs",
            &[
                ("mcp__fs__write", Verdict::Deny, true),
                ("mcp__fs__read", Verdict::Allow, true),
                ("mcp__fs__*", Verdict::Deny, false),
            ],
        );
        // A conditional refusal is passed over; a conditional allow stops the walk.
        assert_eq!(r.listing("write").unwrap().verdict, Verdict::Deny);
        assert!(r.listing("read").is_none());
        let args = |v: Value| v.as_object().cloned().unwrap();
        let etc = args(serde_json::json!({"path": "/etc/hosts"}));
        let home = args(serde_json::json!({"path": "/home/a"}));
        assert_eq!(r.call("read", Some(&etc)).unwrap().0, Verdict::Allow);
        assert_eq!(r.call("read", Some(&home)).unwrap().0, Verdict::Deny);
    }

    #[test]
    fn a_rule_on_the_annotations_holds_for_the_tools_that_have_them() {
        let mut r = HostRules::named_by("fs", "mcp_", "_", |s, t| format!("mcp_{s}_{t}"));
        let mut ro = HostRule::new("mcp_fs_*", Verdict::Allow, "ro".into(), "f".into()).unwrap();
        ro.annotations = serde_json::json!({"readOnlyHint": true, "n": 1})
            .as_object()
            .cloned();
        r.add(ro);
        r.push("mcp_fs_*", Verdict::Ask, "rest".into(), "f".into())
            .unwrap();
        assert_eq!(r.host_name("a.b"), "mcp_fs_a.b");
        let has = |v: Value| v.as_object().cloned().unwrap();
        let read_only = has(serde_json::json!({"readOnlyHint": true, "n": 1.0}));
        let writes = has(serde_json::json!({"readOnlyHint": false, "n": 1}));
        let decide =
            |a: Option<&Map<String, Value>>| r.decide("t", a, None).unwrap().1.rule.clone();
        assert_eq!(decide(Some(&read_only)), "ro");
        assert_eq!(decide(Some(&writes)), "rest");
        assert_eq!(decide(Some(&Map::new())), "rest");
        // Unknown annotations: the allow may not hold, so the next rule decides; it never hides.
        assert_eq!(decide(None), "rest");
        assert!(r.listing("t").is_none());
        assert!(same_value(&serde_json::json!(1), &serde_json::json!(1.0)));
        assert!(!same_value(
            &serde_json::json!([1]),
            &serde_json::json!([1])
        ));
    }

    #[test]
    fn a_bad_glob_names_itself() {
        let err = HostRules::new("s")
            .push("mcp__s__[", Verdict::Deny, String::new(), String::new())
            .unwrap_err();
        assert!(err.to_string().contains("mcp__s__["), "{err}");
    }
}
