//! Claude Code's permission rules for MCP tools, read from its settings files with its servers:
//! `permissions.deny`, `permissions.ask` and `permissions.allow` entries that name
//! `mcp__SERVER` (every tool of the server), `mcp__SERVER__*` (the same) or
//! `mcp__SERVER__TOOL`. As in Claude Code, the lists of every file count together and are
//! checked deny, then ask, then allow: a denied tool is kept from models and its calls refused,
//! an asked one asks before every call, an allowed one runs without asking. A project's own
//! files cannot allow until Claude Code trusts the folder, and a managed
//! `allowManagedPermissionRulesOnly` leaves only the managed files' rules.

use serde_json::Value;
use switchboard_core::{HostRules, Verdict, host_rules::host_part};

use super::ServerConfig;
use super::claude_settings::{Kind, Scope, Settings};

/// One rule as read: the glob over Claude Code's tool name and where it was written.
struct Rule {
    pattern: String,
    verdict: Verdict,
    /// The glob over the server's part alone, to give each server only its own rules.
    server: String,
    /// `Claude Code's permissions.deny "mcp__github__delete_repo"`.
    rule: String,
    file: String,
}

/// Give each server the rules that name it; a rule Claude Code would not apply either is a
/// warning, as is one whose pattern is not a glob.
pub fn apply(
    scope: &Scope,
    settings: &Settings,
    servers: &mut [ServerConfig],
    warnings: &mut Vec<String>,
) {
    let managed_only = settings
        .of_kind(Kind::Managed)
        .any(|f| f.value.get("allowManagedPermissionRulesOnly") == Some(&Value::Bool(true)));
    let mut rules: Vec<Rule> = Vec::new();
    for (list, verdict) in [
        ("deny", Verdict::Deny),
        ("ask", Verdict::Ask),
        ("allow", Verdict::Allow),
    ] {
        for file in &settings.files {
            if managed_only && file.kind != Kind::Managed {
                continue;
            }
            // An untrusted project cannot let its own tools run unasked.
            if verdict == Verdict::Allow && file.kind == Kind::Project && !scope.trusted {
                continue;
            }
            let Some(entries) = file
                .value
                .get("permissions")
                .and_then(|p| p.get(list))
                .and_then(Value::as_array)
            else {
                continue;
            };
            for text in entries.iter().filter_map(Value::as_str) {
                let rule = format!("Claude Code's permissions.{list} {text:?}");
                let path = file.path.display().to_string();
                match parse(text, verdict) {
                    Parsed::NotMcp => {}
                    Parsed::Skipped(why) => {
                        warnings.push(format!("{path}: {rule}: not applied: {why}"))
                    }
                    Parsed::Rule { pattern, server } => rules.push(Rule {
                        pattern,
                        verdict,
                        server,
                        rule,
                        file: path,
                    }),
                }
            }
        }
    }
    if rules.is_empty() {
        return;
    }
    // Each rule's server part, compiled once.
    let servers_of: Vec<Option<globset::GlobMatcher>> = rules
        .iter()
        .map(|r| {
            globset::Glob::new(&r.server)
                .ok()
                .map(|g| g.compile_matcher())
        })
        .collect();
    for server in servers.iter_mut() {
        let name = host_part(server.name());
        let mut own = HostRules::new(server.name());
        for (rule, names) in rules.iter().zip(&servers_of) {
            if !names.as_ref().is_some_and(|g| g.is_match(&name)) {
                continue;
            }
            if let Err(e) = own.push(
                &rule.pattern,
                rule.verdict,
                rule.rule.clone(),
                rule.file.clone(),
            ) {
                warnings.push(format!("{}: {}: not applied: {e}", rule.file, rule.rule));
            }
        }
        if !own.is_empty() {
            server.filter = std::mem::take(&mut server.filter).with_rules(own);
        }
    }
}

enum Parsed {
    /// Not a rule about an MCP tool (`Bash(...)`, `Read`): not switchboard's business.
    NotMcp,
    /// An MCP rule Claude Code does not apply, and why.
    Skipped(&'static str),
    /// The glob over the whole tool name, and the one over the server's part.
    Rule { pattern: String, server: String },
}

fn parse(text: &str, verdict: Verdict) -> Parsed {
    let Some(rest) = text.trim().strip_prefix("mcp__") else {
        return Parsed::NotMcp;
    };
    if rest.contains('(') {
        return Parsed::Skipped(
            "Claude Code reads no parenthesized condition on an MCP tool; name the tool alone",
        );
    }
    let (server, tool) = match rest.split_once("__") {
        Some((s, t)) => (s, (!t.is_empty()).then_some(t)),
        None => (rest, None),
    };
    if server.is_empty() {
        return Parsed::Skipped("it names no server");
    }
    let wild = |s: &str| s.contains(['*', '?', '[', ']', '{', '}']);
    if verdict == Verdict::Allow && (wild(server) || tool.is_some_and(|t| t != "*" && wild(t))) {
        return Parsed::Skipped(
            "an allow rule needs the server's name written out (mcp__SERVER, mcp__SERVER__* or mcp__SERVER__TOOL), as Claude Code requires",
        );
    }
    let tool = tool.unwrap_or("*");
    Parsed::Rule {
        pattern: format!("mcp__{server}__{tool}"),
        server: server.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(text: &str, verdict: Verdict) -> Option<(String, String)> {
        match parse(text, verdict) {
            Parsed::Rule { pattern, server } => Some((pattern, server)),
            _ => None,
        }
    }

    #[test]
    fn the_three_shapes_of_an_mcp_rule() {
        assert_eq!(
            rule("mcp__github", Verdict::Deny),
            Some(("mcp__github__*".into(), "github".into()))
        );
        assert_eq!(
            rule("mcp__github__*", Verdict::Allow),
            Some(("mcp__github__*".into(), "github".into()))
        );
        assert_eq!(
            rule("mcp__github__delete_repo", Verdict::Ask),
            Some(("mcp__github__delete_repo".into(), "github".into()))
        );
        assert!(matches!(parse("Bash(rm *)", Verdict::Deny), Parsed::NotMcp));
        assert!(matches!(
            parse("mcp__github__get(x)", Verdict::Deny),
            Parsed::Skipped(_)
        ));
        // An unanchored allow is skipped, as Claude Code skips it; a deny of every server holds.
        assert!(matches!(
            parse("mcp__*", Verdict::Allow),
            Parsed::Skipped(_)
        ));
        assert_eq!(
            rule("mcp__*", Verdict::Deny),
            Some(("mcp__*__*".into(), "*".into()))
        );
    }
}
