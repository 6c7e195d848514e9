//! Zed's `context_servers` and tool permissions; Amp's (and Qwen Code's) settings layers and Amp's
//! permissions.

use super::*;

#[test]
fn zed_context_servers_are_read_in_both_of_its_forms() {
    let text = r#"{
  "theme": "One Dark",
  "context_servers": {
    "old": {"source": "custom", "command": {"path": "npx", "args": ["-y", "srv"], "env": {"A": "1"}}, "settings": {}},
    "new": {"source": "custom", "command": "uvx", "args": ["other"]},
  },
}"#;
    let c = parse("settings.json", text).unwrap();
    let got: Vec<(String, Vec<String>)> = c
        .servers
        .iter()
        .map(|s| match &s.spec.transport {
            TransportSpec::Stdio { command, args, .. } => (command.clone(), args.clone()),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        got,
        [
            ("npx".to_string(), vec!["-y".to_string(), "srv".to_string()]),
            ("uvx".to_string(), vec!["other".to_string()]),
        ]
    );
}

/// Amp keeps its servers under `amp.mcpServers` in `~/.config/amp/settings.json` and a
/// project's `.amp/settings.json`; Qwen Code under `mcpServers` in `~/.qwen/settings.json` and
/// `.qwen/settings.json`. Each runs both files' servers, the project's winning on a name, and a
/// settings file that names no servers is only that.
#[test]
fn amp_and_qwen_code_settings_are_read_with_their_other_layer() {
    use serde_json::json;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let (home, project) = (root.join("home"), root.join("proj"));
    let home_text = home.display().to_string();
    let env = move |name: &str| (name == "HOME").then(|| home_text.clone());
    let read = |file: &Path| {
        let text = std::fs::read_to_string(file).unwrap();
        Config::parse_in(file, &text, &env, Some(project.clone())).unwrap()
    };
    let amp_user = home.join(".config/amp/settings.json");
    let amp_project = project.join(".amp/settings.json");
    write_json(
        &amp_user,
        json!({"amp.notifications.enabled": true,
               "amp.mcpServers": {"mine": {"command": "mine"}, "shared": {"command": "user"},
                                  "remote": {"url": "https://x.example/mcp", "headers": {"A": "b"}},
                                  "off": {"command": "x", "disabled": true}}}),
    );
    write_json(
        &amp_project,
        json!({"amp.mcpServers": {"shared": {"command": "proj"}}}),
    );
    if cfg!(not(windows)) {
        for file in [&amp_user, &amp_project] {
            let c = read(file);
            assert_eq!(names(&c), ["mine", "remote", "shared"], "{file:?}");
            assert_eq!(command_of(&c, "shared"), "proj");
            assert!(reason(&c, "off").contains("disabled"));
        }
    }
    let qwen_user = home.join(".qwen/settings.json");
    let qwen_project = project.join(".qwen/settings.json");
    write_json(&qwen_user, json!({"ui": {"theme": "Default"}}));
    write_json(
        &qwen_project,
        json!({"mcpServers": {"proj": {"httpUrl": "https://q.example/mcp"}}}),
    );
    for file in [&qwen_user, &qwen_project] {
        let c = read(file);
        assert_eq!(names(&c), ["proj"], "{file:?}: {:?}", c.warnings);
        assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    }
}

/// What the policy decides for a call of `tool` with `arguments` (an object).
fn decision_for(
    c: &Config,
    server: &str,
    tool: &str,
    arguments: serde_json::Value,
) -> crate::policy::Decision {
    let tool = switchboard_core::Tool::new(tool, "d", serde_json::json!({"type": "object"}));
    let arguments = arguments.as_object().cloned().expect("an object");
    crate::policy::decide_call(server_of(c, server), &tool, Some(&arguments))
}

/// Amp's `amp.mcpPermissions` decide which servers run (first matching rule; a command is its
/// program and arguments joined), `amp.tools.disable` and `amp.permissions` which tools reach
/// the model and which ask. The user's file and the project's are each one list, and the
/// strictest of their decisions holds.
#[test]
fn amps_permissions_decide_servers_and_tools() {
    use crate::policy::Decision;
    use serde_json::json;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let (home, project) = (root.join("home"), root.join("proj"));
    let home_text = home.display().to_string();
    let env = move |name: &str| (name == "HOME").then(|| home_text.clone());
    let read = |file: &Path| {
        let text = std::fs::read_to_string(file).unwrap();
        Config::parse_in(file, &text, &env, Some(project.clone())).unwrap()
    };
    let amp_user = home.join(".config/amp/settings.json");
    let amp_project = project.join(".amp/settings.json");
    write_json(
        &amp_user,
        json!({
            "amp.mcpPermissions": [
                {"matches": {"command": "npx @modelcontextprotocol/server-*"}, "action": "allow"},
                {"matches": {"command": "/^uvx mcp-server-(time|fetch)$/"}, "action": "allow"},
                {"matches": {"url": "https://trusted.example/mcp/*"}, "action": "allow"},
                {"matches": {"url": "*"}, "action": "reject"},
                {"matches": {"command": "*"}, "action": "reject"}
            ],
            "amp.tools.disable": ["mcp__memory__open_nodes"],
            "amp.permissions": [
                {"tool": "mcp__memory__delete_*", "action": "reject"},
                {"tool": "mcp__memory__*", "action": "allow"},
                {"tool": "mcp__*", "action": "delegate", "to": "my-helper"},
                {"tool": "mcp__*", "action": "reject", "context": "subagent"}
            ]
        }),
    );
    write_json(
        &amp_project,
        json!({
            "amp.mcpServers": {
                "memory": {"command": "npx", "args": ["@modelcontextprotocol/server-memory"]},
                "sneaky": {"command": "npx", "args": ["-y", "evil-server"]},
                "time": {"command": "uvx", "args": ["mcp-server-time"]},
                "trusted": {"url": "https://trusted.example/mcp/v1"},
                "elsewhere": {"url": "https://elsewhere.example/mcp"}
            },
            "amp.permissions": [
                {"tool": "mcp__memory__create_*", "action": "ask"},
                {"tool": "mcp__memory__add_*", "matches": {"entity": "secret*"}, "action": "reject",
                 "message": "Secrets stay out of memory."},
                {"tool": "mcp__memory__search_nodes",
                 "matches": {"limit": 100, "options": {"deep": true}, "tags.0": "/^x/"},
                 "action": "ask"},
                {"tool": "mcp__memory__read_*", "matches": {"query": "/(/"}, "action": "reject"},
                {"tool": "mcp__memory__*", "action": "allow"}
            ]
        }),
    );
    if cfg!(windows) {
        return;
    }
    for file in [&amp_user, &amp_project] {
        let c = read(file);
        assert_eq!(
            names(&c),
            ["memory", "time", "trusted"],
            "{file:?}: {:?}",
            c.disabled
        );
        let r = reason(&c, "sneaky");
        assert!(
            r.contains("amp.mcpPermissions[4]") && r.contains("amp/settings.json"),
            "{r}"
        );
        assert!(reason(&c, "elsewhere").contains("amp.mcpPermissions[3]"));
        let memory = server_of(&c, "memory");
        assert!(!memory.filter.permits("open_nodes"));
        assert!(!memory.filter.permits("delete_entities"));
        assert!(memory.filter.permits("read_graph") && memory.filter.permits("add_observations"));
        assert_eq!(decision(&c, "memory", "open_graph"), Decision::Allow);
        // The user's file allows it, the project's asks: the stricter holds.
        assert!(matches!(
            decision(&c, "memory", "create_entities"),
            Decision::Ask { .. }
        ));
        // A rule with conditions on the arguments: before they are known it asks; with them it
        // refuses the calls it matches (with its message) and lets the next rule decide others.
        match decision(&c, "memory", "add_observations") {
            Decision::Ask { reason } => assert!(reason.contains("arguments"), "{reason}"),
            other => panic!("{other:?}"),
        }
        match decision_for(
            &c,
            "memory",
            "add_observations",
            json!({"entity": "secret-plan"}),
        ) {
            Decision::Refuse { reason } => assert!(
                reason.contains("amp.permissions[1]")
                    && reason.ends_with("Secrets stay out of memory."),
                "{reason}"
            ),
            other => panic!("{other:?}"),
        }
        for args in [json!({"entity": "plan"}), json!({"entity": 3}), json!({})] {
            assert_eq!(
                decision_for(&c, "memory", "add_observations", args),
                Decision::Allow
            );
        }
        // Literal values by value, objects field by field, a dotted key into an array.
        let deep = json!({"limit": 100.0, "options": {"deep": true, "x": 1}, "tags": ["xy"]});
        assert!(matches!(
            decision_for(&c, "memory", "search_nodes", deep),
            Decision::Ask { .. }
        ));
        for args in [
            json!({"limit": 100, "options": {"deep": false}, "tags": ["xy"]}),
            json!({"limit": 100, "options": {"deep": true}, "tags": ["yx"]}),
            json!({"limit": "100", "options": {"deep": true}, "tags": ["xy"]}),
            json!({"options": {"deep": true}, "tags": ["xy"]}),
        ] {
            assert_eq!(
                decision_for(&c, "memory", "search_nodes", args.clone()),
                Decision::Allow,
                "{args}"
            );
        }
        // A reject whose conditions switchboard cannot read asks at every call instead, and
        // says why; the tool stays listed.
        assert!(
            c.warnings.iter().any(|w| w.contains("amp.permissions[3]")
                && w.contains("matches.query")
                && w.contains("asks instead")),
            "{:?}",
            c.warnings
        );
        assert!(memory.filter.permits("read_graph"));
        assert!(matches!(
            decision_for(&c, "memory", "read_graph", json!({"query": "x"})),
            Decision::Ask { .. }
        ));
        // The delegating rule asks; the sub-agents' rule is not the loop's.
        assert!(matches!(
            decision(&c, "time", "get_time"),
            Decision::Ask { .. }
        ));
        assert!(
            c.warnings
                .iter()
                .any(|w| w.contains("my-helper") && w.contains("ask instead")),
            "{:?}",
            c.warnings
        );
    }
}

/// Zed's `agent.tool_permissions` over `mcp:SERVER:TOOL`: a tool's own `default` (or the older
/// `default_mode`), then `agent.tool_permissions.default` for the rest; input patterns hold as
/// Zed matches them for an MCP tool, against an empty input.
#[test]
fn zeds_tool_permissions_hold_for_its_context_servers() {
    use crate::policy::Decision;
    let c = parse(
        "settings.json",
        r#"{
          "context_servers": {"gh.com": {"command": "g"}, "fs": {"command": "f"}},
          "agent": {"tool_permissions": {
            "default": "allow",
            "tools": {
              "mcp:gh.com:delete_repo": {"default": "deny"},
              "mcp:gh.com:create_issue": {"default_mode": "confirm"},
              "mcp:fs:write": {"always_deny": [{"pattern": "^/etc"}]},
              "mcp:fs:rm": {"default": "allow", "always_allow": [{"pattern": ".*"}],
                            "always_confirm": [{"pattern": "^$"}]},
              "mcp:fs:chmod": {"always_allow": [{"pattern": "("}]},
              "terminal": {"default": "confirm"}
            }
          }}
        }"#,
    )
    .unwrap();
    let gh = server_of(&c, "gh.com");
    assert!(!gh.filter.permits("delete_repo") && gh.filter.permits("create_issue"));
    assert!(matches!(
        decision(&c, "gh.com", "create_issue"),
        Decision::Ask { .. }
    ));
    assert_eq!(decision(&c, "gh.com", "get_issue"), Decision::Allow);
    // `^/etc` cannot match the empty input: it never applies, and the warning says so.
    assert_eq!(decision(&c, "fs", "write"), Decision::Allow);
    assert_eq!(decision(&c, "fs", "read"), Decision::Allow);
    // A confirm pattern that matches the empty input comes before an allow one.
    match decision(&c, "fs", "rm") {
        Decision::Ask { reason } => assert!(reason.contains("always_confirm"), "{reason}"),
        other => panic!("{other:?}"),
    }
    // A pattern that does not compile refuses every call, as in Zed.
    assert!(!server_of(&c, "fs").filter.permits("chmod"));
    assert_eq!(c.warnings.len(), 2, "{:?}", c.warnings);
    assert!(
        c.warnings[0].contains("(unclosed group)"),
        "{:?}",
        c.warnings
    );
    assert!(
        c.warnings[1].contains("\"^/etc\" never applies"),
        "{:?}",
        c.warnings
    );
    let older = parse(
        "settings.json",
        r#"{"context_servers": {"fs": {"command": "f"}}, "agent": {"always_allow_tool_actions": true}}"#,
    )
    .unwrap();
    assert_eq!(
        server_of(&older, "fs").approve_for("rm", None),
        Approve::Never
    );
}
