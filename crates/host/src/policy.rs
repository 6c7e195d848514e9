//! Whether a tool is listed and whether a call may go ahead: a decision is a value, and the
//! async caller (the loop's dispatcher, the gateway) acts on it.

use switchboard_core::Verdict;
use switchboard_core::catalog::Tool;
use switchboard_core::host_rules::Arguments;

use crate::config::{Approve, ServerConfig};

/// What to do with one call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Call it.
    Allow,
    /// Refuse it; `reason` is a sentence for the model or client.
    Deny {
        /// Why, in one sentence.
        reason: String,
    },
    /// Refuse this call, for its arguments: another host's rule refuses calls like it (the
    /// tool stays listed, and other arguments may pass).
    Refuse {
        /// Why, in one sentence.
        reason: String,
    },
    /// Ask the user first; `reason` says why approval is needed.
    Ask {
        /// Why, in one sentence.
        reason: String,
    },
}

/// Whether the tool reaches the model (or the gateway's clients) at all: the config's
/// `tools.allow` / `tools.deny` (and any profile narrowing). A tool that is not listed must also
/// be refused when called.
pub fn listed(server: &ServerConfig, tool: &str) -> bool {
    server.filter.permits(tool)
}

/// Whether `tool` reaches the model, its definition at hand: [`listed`], with another host's
/// rules on its annotations deciding too.
pub fn listed_tool(server: &ServerConfig, tool: &Tool) -> bool {
    server.filter.permits_tool(tool)
}

/// Whether a call to `tool` of `server` may go ahead, its arguments not known yet: as
/// [`decide_call`], where a rule that holds only for some arguments asks when it may refuse or
/// ask, and is passed over when it would allow.
pub fn decide(server: &ServerConfig, tool: &Tool) -> Decision {
    decide_call(server, tool, None)
}

/// Whether a call to `tool` of `server` with `arguments` may go ahead. Not listed: `Deny`
/// (naming another host's rule when one hides it). Then another host's permission rule for the
/// call: one that refuses calls with these arguments `Refuse`s (with the rule's message, when it
/// has one); one that says ask asks, unless the tool has its own `approve` (so does one that may
/// refuse some calls, while the arguments are unknown). Then the approval mode for the tool
/// (`[servers.NAME.tool.TOOL] approve`, else a host rule's allow, else the server's) and the
/// tool's annotations decide between `Ask` and `Allow`:
/// - `destructive` (default): asks when `destructiveHint` is `true`;
/// - `writes`: asks unless `readOnlyHint` is `true`;
/// - `unsafe`: asks when `destructiveHint` is `true`, else unless `readOnlyHint` is `true` or
///   both `destructiveHint` and `openWorldHint` are `false` (MCP's defaults for absent hints);
/// - `always`: asks; `never`: allows.
///
/// Annotations are hints from the server, so the default only trusts them in the cautious
/// direction: a server must say a tool is destructive to be asked about it, and must say it is
/// read-only to skip the question under `writes`.
pub fn decide_call(server: &ServerConfig, tool: &Tool, arguments: Option<&Arguments>) -> Decision {
    match (asking(server, tool, arguments), &server.asks_refused) {
        (Decision::Ask { reason }, Some(why)) => Decision::Refuse {
            reason: format!("{reason}, and {why}"),
        },
        (decision, _) => decision,
    }
}

/// [`decide_call`] before a host that asks about no call has its say.
fn asking(server: &ServerConfig, tool: &Tool, arguments: Option<&Arguments>) -> Decision {
    let rules = server.filter.rules();
    // Written out only for other hosts' rules, which may test them.
    let annotations = if rules.is_empty() {
        serde_json::Map::new()
    } else {
        tool.annotation_map()
    };
    if !server.filter.permits_tool(tool) {
        let why = match rules.denying_with(&tool.name, Some(&annotations)) {
            Some(rule) => format!("is denied by {}", rule.rule),
            None => format!(
                "is not allowed by the configuration ({})",
                server.filter.list_hiding(&tool.name)
            ),
        };
        return Decision::Deny {
            reason: format!("tool {:?} of server {:?} {why}", tool.name, server.name()),
        };
    }
    let ask = |why: &str| Decision::Ask {
        reason: format!("{:?} on server {:?} {why}", tool.name, server.name()),
    };
    let own = server
        .tool_overrides
        .get(&tool.name)
        .is_some_and(|o| o.approve.is_some());
    let host = rules.decide(&tool.name, Some(&annotations), arguments);
    match host {
        Some((Verdict::Deny, rule)) => {
            return Decision::Refuse {
                reason: format!(
                    "{} refuses this call of {:?} on server {:?}{}",
                    rule.rule,
                    tool.name,
                    server.name(),
                    rule.message
                        .as_deref()
                        .map(|m| format!(": {m}"))
                        .unwrap_or_default()
                ),
            };
        }
        // A rule that may refuse calls, before their arguments are known: ask, whatever the
        // tool's own `approve` says (a pass-through then leaves the call to the path that
        // decides with them).
        Some((Verdict::Ask, rule))
            if arguments.is_none() && rule.is_conditional() && rule.verdict == Verdict::Deny =>
        {
            return ask(&format!(
                "needs approval: {} refuses some calls, by their arguments",
                rule.rule
            ));
        }
        // The tool's own `approve` says when to ask, over the rule's.
        Some((Verdict::Ask, _)) if own => {}
        Some((Verdict::Ask, rule)) if rule.is_conditional() && arguments.is_none() => {
            return ask(&format!(
                "needs approval: {} decides by the call's arguments",
                rule.rule
            ));
        }
        Some((Verdict::Ask, rule)) if rule.is_conditional() => {
            return ask(&format!(
                "needs approval for these arguments ({})",
                rule.rule
            ));
        }
        Some((Verdict::Ask, rule)) => {
            return ask(&format!("needs approval for every call ({})", rule.rule));
        }
        _ => {}
    }
    // The setting, as its file wrote it, for the reason.
    let setting = || server.approve_setting(&tool.name);
    match server.approve_given(&tool.name, host.map(|(v, _)| v)) {
        Approve::Never => Decision::Allow,
        Approve::Always => ask(&format!("needs approval for every call ({})", setting())),
        Approve::Writes if !tool.is_read_only() => ask(&format!(
            "is not marked read-only, and {} asks about such tools",
            setting()
        )),
        Approve::Writes => Decision::Allow,
        Approve::Unsafe if tool.is_declared_destructive() => ask(&format!(
            "is marked destructive (destructiveHint), and {} asks about such tools",
            setting()
        )),
        Approve::Unsafe if tool.is_read_only() || tool.is_declared_closed_and_safe() => {
            Decision::Allow
        }
        Approve::Unsafe => ask(&format!(
            "is not marked read-only, nor as neither destructive nor open-world, and {} asks about such tools",
            setting()
        )),
        Approve::Destructive if tool.is_declared_destructive() => {
            ask("is marked destructive (destructiveHint)")
        }
        Approve::Destructive => Decision::Allow,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use serde_json::json;
    use std::path::Path;

    fn server(toml: &str) -> ServerConfig {
        let text = format!("[servers.s]\ncommand = \"x\"\n{toml}");
        let config = Config::parse(Path::new("t.toml"), &text, &|_| None).expect("parses");
        assert!(config.disabled.is_empty(), "{:?}", config.disabled);
        config.servers.into_iter().next().expect("one server")
    }

    fn tool(name: &str, annotations: serde_json::Value) -> Tool {
        serde_json::from_value(json!({
            "name": name,
            "inputSchema": {"type": "object"},
            "annotations": annotations,
        }))
        .expect("tool")
    }

    fn check(config: &str, name: &str, annotations: serde_json::Value, expect: &str) {
        let got = match decide(&server(config), &tool(name, annotations)) {
            Decision::Allow => "allow",
            Decision::Deny { .. } => "deny",
            Decision::Refuse { .. } => "refuse",
            Decision::Ask { .. } => "ask",
        };
        assert_eq!(got, expect, "{config:?} {name} -> {got}, wanted {expect}");
    }

    #[test]
    fn default_asks_only_for_destructive_tools() {
        check("", "rm", json!({"destructiveHint": true}), "ask");
        check("", "rm", json!({"destructiveHint": false}), "allow");
        check("", "write", json!({}), "allow");
    }

    #[test]
    fn writes_asks_unless_read_only() {
        let c = "approve = \"writes\"";
        check(c, "read", json!({"readOnlyHint": true}), "allow");
        check(c, "write", json!({}), "ask");
        check(c, "write", json!({"readOnlyHint": false}), "ask");
    }

    #[test]
    fn unsafe_asks_unless_the_server_marks_the_tool_safe() {
        let c = "approve = \"unsafe\"";
        check(c, "read", json!({"readOnlyHint": true}), "allow");
        check(
            c,
            "calc",
            json!({"destructiveHint": false, "openWorldHint": false}),
            "allow",
        );
        check(c, "write", json!({}), "ask");
        check(c, "fetch", json!({"destructiveHint": false}), "ask");
        check(
            c,
            "odd",
            json!({"readOnlyHint": true, "destructiveHint": true}),
            "ask",
        );
    }

    #[test]
    fn always_and_never() {
        check(
            "approve = \"always\"",
            "read",
            json!({"readOnlyHint": true}),
            "ask",
        );
        check(
            "approve = \"never\"",
            "rm",
            json!({"destructiveHint": true}),
            "allow",
        );
    }

    #[test]
    fn tool_setting_overrides_server_setting() {
        let c = "approve = \"always\"\n[servers.s.tool.read]\napprove = \"never\"";
        check(c, "read", json!({}), "allow");
        check(c, "other", json!({}), "ask");
    }

    #[test]
    fn deny_list_refuses_the_call() {
        let c = "tools = { deny = [\"rm*\"] }";
        check(c, "rm_rf", json!({}), "deny");
        assert!(!listed(&server(c), "rm_rf"));
        assert!(listed(&server(c), "ls"));
    }

    #[test]
    fn result_limit_falls_back_tool_server_default() {
        let s = server("max_result_tokens = 100\n[servers.s.tool.big]\nmax_result_tokens = 900");
        assert_eq!(s.result_limit("big"), 900);
        assert_eq!(s.result_limit("small"), 100);
        assert_eq!(
            server("").result_limit("x"),
            crate::config::DEFAULT_RESULT_TOKENS
        );
    }

    #[test]
    fn zero_limit_disables_the_server_with_a_reason() {
        let text = "[servers.s]\ncommand = \"x\"\nmax_result_tokens = 0";
        let config = Config::parse(Path::new("t.toml"), text, &|_| None).expect("parses");
        assert!(config.servers.is_empty());
        assert!(
            config.disabled[0].reason.contains("max_result_tokens"),
            "{:?}",
            config.disabled
        );
    }

    /// A rule that refuses some calls by their arguments holds even for a tool with its own
    /// `approve`: before the arguments are known the call asks (so a pass-through never skips
    /// it), and with them it refuses the calls it matches and leaves the others to `approve`.
    #[test]
    fn a_rule_on_the_arguments_holds_over_a_tools_own_approve() {
        let mut s = server("[servers.s.tool.write]\napprove = \"never\"\n");
        let mut rules = switchboard_core::HostRules::new("s");
        let mut rule = switchboard_core::HostRule::new(
            "mcp__s__write",
            Verdict::Deny,
            "rule".into(),
            "f".into(),
        )
        .unwrap();
        rule.condition = Some(switchboard_core::Condition::new(|args| {
            args.get("path")
                .and_then(serde_json::Value::as_str)
                .is_some_and(|p| p.starts_with("/etc"))
        }));
        rules.add(rule);
        s.filter = std::mem::take(&mut s.filter).with_rules(rules);
        let write = tool("write", json!({}));
        assert!(matches!(decide(&s, &write), Decision::Ask { .. }));
        let args = |v: serde_json::Value| v.as_object().cloned().unwrap();
        assert!(matches!(
            decide_call(&s, &write, Some(&args(json!({"path": "/etc/x"})))),
            Decision::Refuse { .. }
        ));
        assert_eq!(
            decide_call(&s, &write, Some(&args(json!({"path": "/tmp/x"})))),
            Decision::Allow
        );
    }
}
