//! Claude Code's managed policy and permissions: the server allow and deny lists, managed servers
//! and `managed-mcp.json`, folder trust, and `permissions` rules over MCP tools.

use super::*;

#[test]
fn claude_codes_denylist_blocks_by_url_command_or_name_from_any_settings_file() {
    let m = PolicyMachine::new();
    m.write(
        &m.managed.join("managed-settings.json"),
        serde_json::json!({"deniedMcpServers": [
            {"serverUrl": "https://*.untrusted.example.com/*"},
            {"serverCommand": ["npx", "-y", "unapproved-package"]},
            {"serverCommand": ["./bin/local-server", "--port", "1"]}
        ]}),
    );
    // A drop-in adds to the base file; a user's own settings can block one for themselves.
    m.write(
        &m.managed.join("managed-settings.d/50-team.json"),
        serde_json::json!({"deniedMcpServers": [{"serverName": "dangerous-server"}]}),
    );
    m.write(
        &m.home.join(".claude/settings.json"),
        serde_json::json!({"deniedMcpServers": [{"serverUrl": "https://Noisy.example.com"}]}),
    );
    let servers = serde_json::json!({
        "remote-bad": {"type": "http", "url": "https://api.untrusted.example.com/mcp"},
        "remote-ok": {"type": "http", "url": "https://mcp.example.com/mcp"},
        "npx-bad": {"command": "npx", "args": ["-y", "unapproved-package"]},
        "npx-flag": {"command": "npx", "args": ["-y", "unapproved-package", "--flag"]},
        "dangerous-server": {"command": "anything"},
        "noisy": {"type": "http", "url": "https://noisy.example.com/any/path"},
        "local": {"command": "./bin/local-server", "args": ["--port", "1"]}
    });
    let c = m.read(".mcp.json", servers.clone());
    // Commands match exactly: one more argument is another command. A relative command
    // matches as written, though switchboard runs it from the project's folder.
    assert_eq!(names(&c), ["npx-flag", "remote-ok"], "{:?}", c.disabled);
    assert!(reason(&c, "local").contains("./bin/local-server"));
    let r = reason(&c, "remote-bad");
    assert!(
        r.contains("deniedMcpServers entry {\"serverUrl\":\"https://*.untrusted.example.com/*\"}")
            && r.contains("managed-settings.json"),
        "{r}"
    );
    assert!(reason(&c, "dangerous-server").contains("50-team.json"));
    assert!(reason(&c, "noisy").contains(".claude/settings.json"));
    assert!(reason(&c, "npx-bad").contains("blocked by Claude Code's managed policy"));
    // Other hosts' files are not Claude Code's: its policy is not applied to them.
    let c = m.read("mcp.json", servers);
    assert_eq!(c.servers.len(), 7, "{:?}", c.disabled);
}

#[test]
fn claude_codes_allowlist_needs_the_strict_kind_of_entry_for_each_transport() {
    let m = PolicyMachine::new();
    m.write(
        &m.managed.join("managed-settings.json"),
        serde_json::json!({"allowedMcpServers": [
            {"serverName": "github"},
            {"serverCommand": ["npx", "-y", "approved-package"]},
            {"serverUrl": "https://${ORG_HOST}/*"},
            {"serverUrl": "https://${NOT_SET_ANYWHERE}/*"},
            {"serverCommand": "not a list"}
        ]}),
    );
    let servers = serde_json::json!({
        "local-tool": {"command": "npx", "args": ["-y", "approved-package"]},
        "other-tool": {"command": "node", "args": ["server.js"]},
        "github": {"command": "node", "args": ["github.js"]},
        "org": {"type": "http", "url": "https://mcp.example.com/api"},
        "elsewhere": {"type": "http", "url": "https://elsewhere.example.org/mcp"}
    });
    let c = m.read(".mcp.json", servers.clone());
    // A stdio server must match a command once the list has one; the name does not count.
    // A policy URL's ${VAR} is expanded; one that cannot be is left out, not read as "*".
    assert_eq!(names(&c), ["local-tool", "org"], "{:?}", c.disabled);
    let r = reason(&c, "github");
    assert!(
        r.contains("no serverCommand entry matching [\"node\",\"github.js\"]"),
        "{r}"
    );
    assert!(reason(&c, "elsewhere").contains("no serverUrl entry matching"));
    for bad in [
        "NOT_SET_ANYWHERE",
        "{\"serverCommand\":\"not a list\"} left out: expected",
    ] {
        assert!(
            c.warnings.iter().any(|w| w.contains(bad)),
            "{bad}: {:?}",
            c.warnings
        );
    }
    // A name-only list lets a server of the name through, whatever it runs.
    m.write(
        &m.managed.join("managed-settings.json"),
        serde_json::json!({"allowedMcpServers": [{"serverName": "github"}]}),
    );
    let c = m.read(".mcp.json", servers.clone());
    assert_eq!(names(&c), ["github"], "{:?}", c.disabled);
    // A user's own list broadens the managed one, unless the managed settings say it may not.
    m.write(
        &m.home.join(".claude/settings.json"),
        serde_json::json!({"allowedMcpServers": [{"serverName": "org"}]}),
    );
    assert_eq!(
        names(&m.read(".mcp.json", servers.clone())),
        ["github", "org"]
    );
    m.write(
        &m.managed.join("managed-settings.json"),
        serde_json::json!({"allowManagedMcpServersOnly": true, "allowedMcpServers": [{"serverName": "github"}]}),
    );
    assert_eq!(names(&m.read(".mcp.json", servers.clone())), ["github"]);
    // An empty list allows nothing; no list allows everything.
    std::fs::remove_file(m.home.join(".claude/settings.json")).unwrap();
    m.write(
        &m.managed.join("managed-settings.json"),
        serde_json::json!({"allowedMcpServers": []}),
    );
    let c = m.read(".mcp.json", servers.clone());
    assert!(c.servers.is_empty(), "{:?}", c.servers);
    assert!(
        reason(&c, "org").contains("is empty"),
        "{}",
        reason(&c, "org")
    );
    std::fs::remove_file(m.managed.join("managed-settings.json")).unwrap();
    assert_eq!(m.read(".mcp.json", servers).servers.len(), 5);
}

#[test]
fn claude_codes_managed_servers_are_provided_and_managed_mcp_json_takes_exclusive_control() {
    let m = PolicyMachine::new();
    m.write(
        &m.managed.join("managed-settings.json"),
        serde_json::json!({
            "allowedMcpServers": [{"serverCommand": ["approved"]}],
            "deniedMcpServers": [{"serverName": "blocked-managed"}],
            "managedMcpServers": {
                "search": {"type": "http", "url": "https://search.example.com/mcp"},
                "plain-http": {"type": "http", "url": "http://localhost:9/mcp"},
                "runs-a-program": {"type": "http", "url": "https://x.example.com", "command": "x"},
                "templated": {"type": "http", "url": "https://${ORG_HOST}/mcp"},
                "bad name": {"type": "http", "url": "https://y.example.com/mcp"}
            }
        }),
    );
    m.write(
        &m.home.join(".claude/settings.json"),
        serde_json::json!({"managedMcpServers": {"mine": {"type": "http", "url": "https://m.example.com"}}}),
    );
    let servers = serde_json::json!({
        "search": {"command": "approved"},
        "tool": {"command": "approved"}
    });
    let c = m.read(".mcp.json", servers.clone());
    // The provided server replaces the project's of its name and needs no allowlist entry;
    // each entry Claude Code would refuse is a warning naming why.
    assert_eq!(names(&c), ["search", "tool"], "{:?}", c.disabled);
    let search = c.servers.iter().find(|s| s.name() == "search").unwrap();
    assert!(
        matches!(&search.spec.transport, TransportSpec::Http { url, .. } if url == "https://search.example.com/mcp")
    );
    for (name, why) in [
        ("plain-http", "https://"),
        ("runs-a-program", "remote only"),
        ("templated", "no ${VAR}"),
        ("bad name", "letters, digits"),
        ("home/.claude/settings.json", "only from managed settings"),
    ] {
        assert!(
            c.warnings
                .iter()
                .any(|w| w.contains(name) && w.contains(why)),
            "{name}: {:?}",
            c.warnings
        );
    }

    // managed-mcp.json: only its servers (and the provided ones) run; the denylist still
    // applies to them, and one written with ${VAR} must pass the allowlist.
    m.write(
        &m.managed.join("managed-mcp.json"),
        serde_json::json!({"mcpServers": {
            "company": {"command": "/usr/local/bin/company-mcp"},
            "blocked-managed": {"command": "approved"},
            "per-user": {"command": "${HOME}/bin/tool"}
        }}),
    );
    let c = m.read(".mcp.json", servers.clone());
    assert_eq!(names(&c), ["company", "search"], "{:?}", c.disabled);
    for (name, from) in [
        ("company", "Claude Code managed-mcp.json ("),
        ("search", "Claude Code managedMcpServers ("),
    ] {
        let s = c.servers.iter().find(|s| s.name() == name).unwrap();
        assert!(
            s.origin.as_deref().is_some_and(|o| o.starts_with(from)),
            "{:?}",
            s.origin
        );
    }
    assert!(reason(&c, "tool").contains("exclusive control"));
    assert!(reason(&c, "blocked-managed").contains("deniedMcpServers"));
    assert!(reason(&c, "per-user").contains("allowedMcpServers"));
    // An empty map turns every server off but the provided ones.
    m.write(
        &m.managed.join("managed-mcp.json"),
        serde_json::json!({"mcpServers": {}}),
    );
    assert_eq!(names(&m.read(".mcp.json", servers.clone())), ["search"]);
    // A managed-mcp.json that cannot be read runs nothing of the user's, and says why.
    std::fs::write(m.managed.join("managed-mcp.json"), "{ not json").unwrap();
    let c = m.read(".mcp.json", servers);
    assert_eq!(names(&c), ["search"]);
    assert!(
        c.warnings.iter().any(|w| w.contains("until it is fixed")),
        "{:?}",
        c.warnings
    );
}

#[test]
fn claude_codes_policy_applies_to_its_state_file_as_a_whole() {
    let m = PolicyMachine::new();
    m.write(
        &m.managed.join("managed-settings.json"),
        // Managed settings approve the project's servers in any folder.
        serde_json::json!({
            "deniedMcpServers": [{"serverCommand": ["bad-server"]}],
            "enableAllProjectMcpServers": true
        }),
    );
    m.write(
        &m.project.join(".mcp.json"),
        serde_json::json!({"mcpServers": {"shared-bad": {"command": "bad-server"}, "shared-ok": {"command": "ok"}}}),
    );
    let c = m.read_state(&serde_json::json!({
        "mcpServers": {"user-bad": {"command": "bad-server"}, "user-ok": {"command": "ok"}},
        "projects": {m.project.display().to_string(): {}}
    }));
    assert_eq!(names(&c), ["shared-ok", "user-ok"], "{:?}", c.disabled);
    // Each blocked server is listed once, with the policy's reason.
    assert_eq!(c.disabled.len(), 2, "{:?}", c.disabled);
    assert!(reason(&c, "shared-bad").contains("deniedMcpServers"));
    assert!(reason(&c, "user-bad").contains("deniedMcpServers"));
    // What serve watches with the state file: the files read, and the ones whose creation
    // would change the result.
    for want in [
        m.project.join(".mcp.json"),
        m.project.join(".claude/settings.local.json"),
        m.home.join(".claude/settings.json"),
        m.managed.join("managed-settings.json"),
        m.managed.join("managed-settings.d"),
        m.managed.join("managed-mcp.json"),
    ] {
        assert!(c.inputs.contains(&want), "{want:?} not in {:?}", c.inputs);
    }
    assert_eq!(
        c.inputs.len(),
        c.inputs
            .iter()
            .collect::<std::collections::BTreeSet<_>>()
            .len(),
        "each once: {:?}",
        c.inputs
    );
}

#[test]
fn a_projects_own_allowlist_counts_only_once_claude_code_trusts_the_folder() {
    let m = PolicyMachine::new();
    m.write(
        &m.managed.join("managed-settings.json"),
        serde_json::json!({"allowedMcpServers": [{"serverName": "a"}]}),
    );
    // A cloned repository's settings try to allow its own server, and to deny one.
    m.write(
        &m.project.join(".claude/settings.json"),
        serde_json::json!({
            "allowedMcpServers": [{"serverName": "b"}],
            "deniedMcpServers": [{"serverName": "a"}]
        }),
    );
    let servers = serde_json::json!({"a": {"command": "x"}, "b": {"command": "x"}});
    let c = m.read(".mcp.json", servers.clone());
    assert!(c.servers.is_empty(), "{:?}", c.servers);
    assert!(reason(&c, "a").contains("deniedMcpServers"));
    assert!(reason(&c, "b").contains("allowedMcpServers"));
    // Trusted in Claude Code's state file: its allowlist counts too.
    let folder = std::fs::canonicalize(&m.project).unwrap();
    m.write(
        &m.home.join(".claude.json"),
        serde_json::json!({"projects": {folder.display().to_string(): {"hasTrustDialogAccepted": true}}}),
    );
    assert_eq!(names(&m.read(".mcp.json", servers)), ["b"]);
}

/// Claude Code's `permissions` rules that name MCP tools hold for the servers read with its
/// files: deny keeps the tool from models and refuses it, ask asks at every call, allow runs it
/// unasked; deny before ask before allow, whichever file they are in. A project's own files
/// cannot allow until the folder is trusted, a managed `allowManagedPermissionRulesOnly`
/// leaves only the managed rules, and rules Claude Code skips are named as skipped.
#[test]
fn claude_codes_permission_rules_for_mcp_tools_hold() {
    use crate::policy::Decision;
    let m = PolicyMachine::new();
    m.write(
        &m.home.join(".claude/settings.json"),
        serde_json::json!({"permissions": {
            "deny": ["mcp__github__delete_repo", "mcp__noisy", "Bash(rm *)", "mcp__docs_site__get_page"],
            "ask": ["mcp__github__create_*"],
            "allow": ["mcp__github__*", "mcp__*", "mcp__github__get_issue(x)", "Read"]
        }}),
    );
    m.write(
        &m.project.join(".claude/settings.json"),
        serde_json::json!({"permissions": {"allow": ["mcp__fs"]}}),
    );
    let servers = serde_json::json!({
        "github": {"command": "gh"},
        "noisy": {"command": "n"},
        "docs.site": {"command": "d"},
        "fs": {"command": "f"}
    });
    let c = m.read(".mcp.json", servers.clone());
    let gh = server_of(&c, "github");
    assert!(!gh.filter.permits("delete_repo"));
    assert!(gh.filter.permits("get_issue") && gh.filter.permits("create_issue"));
    assert!(!server_of(&c, "noisy").filter.permits("anything"));
    // Claude Code writes `docs.site` and `get.page` as `docs_site` and `get_page`.
    assert!(!server_of(&c, "docs.site").filter.permits("get.page"));
    assert!(server_of(&c, "docs.site").filter.permits("list"));
    match decision(&c, "github", "delete_repo") {
        // A model reads this: the rule, not the path of the user's file.
        Decision::Deny { reason } => assert!(
            reason.contains("Claude Code's permissions.deny \"mcp__github__delete_repo\"")
                && !reason.contains(".claude/settings.json"),
            "{reason}"
        ),
        other => panic!("{other:?}"),
    }
    match decision(&c, "github", "create_issue") {
        Decision::Ask { reason } => assert!(
            reason.contains("Claude Code's permissions.ask \"mcp__github__create_*\"")
                && !reason.contains(".claude/settings.json"),
            "{reason}"
        ),
        other => panic!("{other:?}"),
    }
    assert_eq!(decision(&c, "github", "get_issue"), Decision::Allow);
    assert_eq!(gh.approve_for("get_issue", None), Approve::Never);
    // The project is not trusted: its allow rule does not count.
    assert_eq!(
        server_of(&c, "fs").approve_for("write", None),
        Approve::Destructive
    );
    for skipped in ["\"mcp__*\"", "\"mcp__github__get_issue(x)\""] {
        assert!(
            c.warnings
                .iter()
                .any(|w| w.contains(skipped) && w.contains("not applied")),
            "{skipped}: {:?}",
            c.warnings
        );
    }
    assert!(
        !c.warnings.iter().any(|w| w.contains("Bash")),
        "{:?}",
        c.warnings
    );

    // Once Claude Code trusts the folder, its allow rule counts.
    let project = m.project.canonicalize().unwrap();
    m.write(
        &m.home.join(".claude.json"),
        serde_json::json!({"projects": {project.display().to_string(): {"hasTrustDialogAccepted": true}}}),
    );
    let c = m.read(".mcp.json", servers.clone());
    assert_eq!(
        server_of(&c, "fs").approve_for("write", None),
        Approve::Never
    );

    // Another host's file is not Claude Code's: no rule of its applies.
    let c = m.read("mcp.json", servers.clone());
    assert!(server_of(&c, "github").filter.permits("delete_repo"));

    // Managed rules only: the user's deny no longer counts, the managed one does.
    m.write(
        &m.managed.join("managed-settings.json"),
        serde_json::json!({"allowManagedPermissionRulesOnly": true,
                           "permissions": {"deny": ["mcp__fs__write"]}}),
    );
    let c = m.read(".mcp.json", servers);
    assert!(server_of(&c, "github").filter.permits("delete_repo"));
    assert!(!server_of(&c, "fs").filter.permits("write"));
    assert_eq!(
        server_of(&c, "fs").approve_for("read", None),
        Approve::Destructive
    );
}
