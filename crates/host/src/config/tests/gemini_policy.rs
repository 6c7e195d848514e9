//! Gemini CLI's policy engine: the user's, extensions' and system policy rules over MCP tools.

use super::*;

/// Gemini CLI's policy engine holds for the servers read with its settings: the user's policy
/// files (highest priority first; `mcpName`, `toolAnnotations`, `argsPattern` with its
/// `denyMessage`), an extension's (its allow left out), the settings' rules (`tools.exclude`
/// keeps a tool from the model by either name; a trusted server asks nothing), and a rule
/// Gemini CLI can never match is named.
#[test]
fn gemini_clis_policy_rules_hold_as_gemini_cli_decides_them() {
    use crate::policy::{Decision, decide_call};
    use serde_json::json;
    use switchboard_core::Tool;
    use switchboard_core::catalog::ToolAnnotations;
    let m = GeminiMachine::new();
    m.write(
        &m.home.join(".gemini/trustedFolders.json"),
        json!({ m.project.display().to_string(): "TRUST_FOLDER" }),
    );
    m.write(
        &m.project.join(".gemini/settings.json"),
        json!({"mcpServers": {
            "shared": {"command": "ws-shared", "trust": true},
            "proj": {"command": "proj"}
        }}),
    );
    let mut user: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(m.home.join(".gemini/settings.json")).unwrap(),
    )
    .unwrap();
    user["tools"] = json!({"exclude": ["drop_me"]});
    m.write(&m.home.join(".gemini/settings.json"), user);
    let policies = m.home.join(".gemini/policies");
    std::fs::create_dir_all(&policies).unwrap();
    std::fs::write(
        policies.join("mcp.toml"),
        r#"
[[rule]]
mcpName = "mine"
toolName = "delete_*"
decision = "deny"
priority = 100

[[rule]]
mcpName = "mine"
toolName = "write_file"
argsPattern = '"path":"/etc'
decision = "deny"
priority = 200
denyMessage = "Not in /etc."

[[rule]]
mcpName = "mine"
toolName = "*"
decision = "ask_user"
priority = 50

[[rule]]
mcpName = "proj"
toolName = "*"
toolAnnotations = { readOnlyHint = true }
decision = "allow"
priority = 300

[[rule]]
mcpName = "proj"
toolName = "*"
toolAnnotations = { destructiveHint = true }
decision = "deny"
priority = 250

[[rule]]
toolName = "mcp_shared_*"
mcpName = "shared"
decision = "ask_user"
priority = 900
"#,
    )
    .unwrap();
    // A file that breaks the schema is skipped whole, its deny with it.
    std::fs::write(
        policies.join("broken.toml"),
        "[[rule]]\ntoolName = \"*\"\ndecision = \"deny\"\npriority = 5000\n",
    )
    .unwrap();
    m.write(
        &m.home.join(".gemini/extensions/alpha/policies/x.json"),
        json!({}),
    );
    std::fs::write(
        m.home.join(".gemini/extensions/alpha/policies/p.toml"),
        "[[rule]]\nmcpName = \"alpha-srv\"\ntoolName = \"*\"\ndecision = \"allow\"\npriority = 9\n\n\
         [[rule]]\nmcpName = \"alpha-srv\"\ntoolName = \"wipe\"\ndecision = \"deny\"\npriority = 1\n",
    )
    .unwrap();
    let c = m.read(&m.project.join(".gemini/settings.json"), &[]);
    let warned = |s: &str| c.warnings.iter().any(|w| w.contains(s));
    assert!(warned("never applies"), "{:?}", c.warnings);
    assert!(
        warned("broken.toml: Gemini CLI skips this policy file"),
        "{:?}",
        c.warnings
    );
    assert!(warned("may not allow calls"), "{:?}", c.warnings);
    let tool = |name: &str, annotations: Option<ToolAnnotations>| {
        let mut t = Tool::new(name, "", json!({"type": "object"}));
        t.annotations = annotations;
        t
    };
    let args = |v: serde_json::Value| v.as_object().cloned().unwrap();
    let decide = |server: &str, t: &Tool, a: serde_json::Value| {
        decide_call(server_of(&c, server), t, Some(&args(a)))
    };
    let write = tool("write_file", None);
    match decide("mine", &write, json!({"path": "/etc/passwd"})) {
        Decision::Refuse { reason } => assert!(
            reason.contains("Gemini CLI's policy rule 2") && reason.contains("Not in /etc."),
            "{reason}"
        ),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        decide("mine", &write, json!({"path": "/tmp/a"})),
        Decision::Ask { .. }
    ));
    // `delete_*` with a server is `mcp_mine_delete_*`: no wildcard Gemini CLI reads.
    assert!(matches!(
        decide("mine", &tool("delete_x", None), json!({})),
        Decision::Ask { .. }
    ));
    let read_only = ToolAnnotations {
        read_only_hint: Some(true),
        destructive_hint: Some(true),
        ..Default::default()
    };
    let destructive = ToolAnnotations {
        destructive_hint: Some(true),
        ..Default::default()
    };
    assert_eq!(
        decide("proj", &tool("list", Some(read_only)), json!({})),
        Decision::Allow
    );
    // A destructive tool is kept from the model by the rule on its annotations.
    let wipe = tool("wipe", Some(destructive));
    assert!(matches!(
        decide("proj", &wipe, json!({})),
        Decision::Deny { .. }
    ));
    assert!(!server_of(&c, "proj").filter.permits_tool(&wipe));
    assert!(
        server_of(&c, "proj")
            .filter
            .permits_tool(&tool("plain", None))
    );
    // Trusted in a trusted folder: its ask_user rule asks nothing.
    assert_eq!(
        decide("shared", &tool("anything", None), json!({})),
        Decision::Allow
    );
    for server in ["mine", "shared"] {
        assert!(!server_of(&c, server).filter.permits("drop_me"), "{server}");
        assert!(server_of(&c, server).filter.permits("keep_me"), "{server}");
    }
    // The extension's deny holds; its allow does not.
    let alpha = server_of(&c, "alpha-srv");
    assert!(!alpha.filter.permits("wipe") && alpha.filter.permits("read"));
    assert!(matches!(
        decide("alpha-srv", &tool("wipe", None), json!({})),
        Decision::Deny { .. }
    ));
}

/// Gemini CLI's system policies (tried from another folder) outrank the user's whatever their
/// own priorities, and `adminPolicyPaths` is ignored while they exist, as Gemini CLI does.
#[test]
fn gemini_clis_system_policies_outrank_the_users() {
    let m = GeminiMachine::new();
    m.write(
        &m.home.join(".gemini/trustedFolders.json"),
        serde_json::json!({ m.project.display().to_string(): "TRUST_FOLDER" }),
    );
    let mut user: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(m.home.join(".gemini/settings.json")).unwrap(),
    )
    .unwrap();
    user["adminPolicyPaths"] = serde_json::json!(["/nowhere/admin"]);
    m.write(&m.home.join(".gemini/settings.json"), user);
    let rule = |tool: &str, decision: &str, priority: u32| {
        format!(
            "[[rule]]\nmcpName = \"mine\"\ntoolName = \"{tool}\"\ndecision = \"{decision}\"\npriority = {priority}\n"
        )
    };
    std::fs::create_dir_all(m.home.join(".gemini/policies")).unwrap();
    std::fs::write(
        m.home.join(".gemini/policies/u.toml"),
        rule("*", "allow", 999),
    )
    .unwrap();
    let system = m.home.parent().unwrap().join("gemini-system-policies");
    std::fs::create_dir_all(&system).unwrap();
    std::fs::write(system.join("admin.toml"), rule("write", "deny", 0)).unwrap();
    let c = m.read(
        &m.project.join(".gemini/settings.json"),
        &[(
            "SWITCHBOARD_GEMINI_SYSTEM_POLICIES",
            &system.display().to_string(),
        )],
    );
    let mine = server_of(&c, "mine");
    assert!(!mine.filter.permits("write") && mine.filter.permits("read"));
    assert_eq!(mine.approve_for("read", None), Approve::Never);
    assert!(
        c.warnings
            .iter()
            .any(|w| w.contains("adminPolicyPaths are ignored")),
        "{:?}",
        c.warnings
    );
}
