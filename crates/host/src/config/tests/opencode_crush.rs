//! OpenCode's and Crush's configs: their server entries, and their tool and permission settings.

use super::*;

#[test]
fn an_opencode_config_is_read_as_opencode_writes_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("token.txt"), "file-secret\n").unwrap();
    let text = r#"{
  // OpenCode 1: servers right under `mcp`.
  "$schema": "https://opencode.ai/config.json",
  "model": "anthropic/claude-sonnet-4-5",
  "mcp": {
    "github": {
      "type": "local",
      "command": ["npx", "-y", "@modelcontextprotocol/server-github", "${NOT_A_VARIABLE}"],
      "environment": {"GITHUB_PERSONAL_ACCESS_TOKEN": "{env:GITHUB_TOKEN}"},
      "timeout": 8000,
    },
    "sentry": {
      "type": "remote",
      "url": "https://mcp.sentry.dev/mcp",
      "headers": {"Authorization": "Bearer {file:token.txt}"},
      "oauth": false,
    },
    "linear": {
      "type": "remote",
      "url": "https://mcp.linear.app/mcp",
      "oauth": {"clientId": "abc", "clientSecret": "written-here", "scope": "read write"},
    },
    "off": {"type": "local", "command": ["x"], "enabled": false},
    "unset": {"type": "local", "command": ["x"], "environment": {"K": "{env:NOPE}"}},
    "empty": {"type": "local", "command": []},
  },
}"#;
    let path = dir.path().join("opencode.jsonc");
    let c = Config::parse(&path, text, &env).unwrap();
    assert_eq!(
        transports(&c),
        [
            (
                "npx".to_string(),
                vec![
                    "-y".to_string(),
                    "@modelcontextprotocol/server-github".to_string(),
                    // A `${` means nothing to OpenCode, so it stays as written.
                    "${NOT_A_VARIABLE}".to_string()
                ]
            ),
            (
                "https://mcp.sentry.dev/mcp".to_string(),
                vec!["Authorization".to_string()]
            ),
            ("https://mcp.linear.app/mcp".to_string(), vec![]),
        ],
        "{:?}",
        c.disabled
    );
    let github = &c.servers[0];
    assert_eq!(
        env_of(github),
        [(
            "GITHUB_PERSONAL_ACCESS_TOKEN".to_string(),
            "ghp_secret_value".to_string()
        )]
    );
    assert_eq!(
        github.spec.startup_timeout,
        std::time::Duration::from_secs(8)
    );
    assert_eq!(
        env_of(&c.servers[1]),
        [(
            "Authorization".to_string(),
            "Bearer file-secret".to_string()
        )]
    );
    let oauth = c.servers[2].oauth.as_ref().unwrap();
    assert_eq!(oauth.client_id.as_deref(), Some("abc"));
    assert_eq!(oauth.scopes, ["read", "write"]);
    assert_eq!(c.warnings.len(), 1, "{:?}", c.warnings);
    assert!(
        c.warnings[0].contains("\"linear\"") && c.warnings[0].contains("clientSecret"),
        "{:?}",
        c.warnings
    );
    assert!(!c.warnings[0].contains("written-here"));
    assert_eq!(reason(&c, "off"), "disabled in the config");
    assert!(reason(&c, "unset").contains("NOPE is not set"), "{c:?}");
    assert!(reason(&c, "empty").contains("empty list"), "{c:?}");
    // A `{file:...}` that cannot be read names the path, never any contents.
    let missing = r#"{"mcp": {"a": {"type": "remote", "url": "https://a.example/mcp", "headers": {"X": "{file:nowhere.txt}"}}}}"#;
    let c = Config::parse(&path, missing, &env).unwrap();
    assert!(
        reason(&c, "a").contains("{file:nowhere.txt}: cannot read"),
        "{c:?}"
    );
}

#[test]
fn opencode_2_servers_under_mcp_servers_are_read() {
    let text = r#"{
  "$schema": "https://opencode.ai/config.json",
  "mcp": {
    "servers": {
      "everything": {"type": "local", "command": ["npx", "-y", "srv"], "cwd": "sub"},
      "parked": {"type": "local", "command": ["npx"], "disabled": true}
    }
  }
}"#;
    let c = parse("/p/opencode.json", text).unwrap();
    assert_eq!(c.servers.len(), 1, "{:?}", c.disabled);
    match &c.servers[0].spec.transport {
        TransportSpec::Stdio { command, cwd, .. } => {
            assert_eq!(command, "npx");
            assert_eq!(cwd.as_deref(), Some(Path::new("/p/sub")));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(reason(&c, "parked"), "disabled in the config");
    // A server that happens to be named "servers" is still one server.
    let named = r#"{"mcp": {"servers": {"type": "local", "command": ["srv"]}}}"#;
    let c = parse("opencode.json", named).unwrap();
    assert_eq!(c.servers[0].name(), "servers");
}

#[test]
fn a_crush_config_is_read_as_crush_writes_it() {
    let text = r#"{
  "$schema": "https://charm.land/crush.json",
  "mcp": {
    "filesystem": {
      "type": "stdio",
      "command": "$HOME/bin/fs-server",
      "args": ["--root", "${HOME}/src", "cost: 5$"],
      "timeout": 120,
      "disabled_tools": ["write_file"],
      "env": {"TOKEN": "$GITHUB_TOKEN"}
    },
    "github": {
      "type": "http",
      "url": "https://api.githubcopilot.com/mcp/",
      "headers": {"Authorization": "Bearer $GITHUB_TOKEN"}
    },
    "stream": {"type": "sse", "url": "https://example.com/mcp/sse"},
    "shell": {"type": "http", "url": "https://x.example/mcp", "headers": {"API-Key": "$(cat /secret/key)"}},
    "off": {"type": "stdio", "command": "x", "disabled": true}
  }
}"#;
    let c = parse("crush.json", text).unwrap();
    assert_eq!(
        transports(&c),
        [
            (
                "/home/u/bin/fs-server".to_string(),
                vec![
                    "--root".to_string(),
                    "/home/u/src".to_string(),
                    "cost: 5$".to_string()
                ]
            ),
            (
                "https://api.githubcopilot.com/mcp/".to_string(),
                vec!["Authorization".to_string()]
            ),
            ("https://example.com/mcp/sse".to_string(), vec![]),
        ],
        "{:?}",
        c.disabled
    );
    let fs = &c.servers[0];
    assert_eq!(fs.spec.startup_timeout, std::time::Duration::from_secs(120));
    assert_eq!(fs.spec.call_timeout, std::time::Duration::from_secs(120));
    assert!(fs.filter.permits("read_file") && !fs.filter.permits("write_file"));
    assert_eq!(
        env_of(fs),
        [("TOKEN".to_string(), "ghp_secret_value".to_string())]
    );
    assert_eq!(
        env_of(&c.servers[1]),
        [(
            "Authorization".to_string(),
            "Bearer ghp_secret_value".to_string()
        )]
    );
    assert!(c.servers[2].legacy_sse);
    let shell = reason(&c, "shell");
    assert!(shell.contains("$(...)"), "{shell}");
    assert!(!shell.contains("/secret/key"), "{shell}");
    assert!(reason(&c, "off").contains("disabled"));
}

/// OpenCode names an MCP tool `SERVER_TOOL`; its `tools` (`false` off, `true` on) and
/// `permission` (`allow`, `ask`, `deny`) entries over those names hold, the last matching one
/// winning, `permission` after `tools`.
#[test]
fn opencodes_tools_and_permission_settings_hold() {
    use crate::policy::Decision;
    let c = parse(
        "opencode.json",
        r#"{
          "$schema": "https://opencode.ai/config.json",
          "mcp": {
            "github": {"type": "remote", "url": "https://gh.example/mcp"},
            "my.fs": {"type": "local", "command": ["fs"]}
          },
          "tools": {"github_*": false, "github_get_*": true, "my_fs_read": false},
          "permission": {
            "edit": "ask",
            "bash": {"*": "ask", "git *": "allow"},
            "github_get_secret": "deny",
            "github_get_*": "allow",
            "github_get_issue": "ask",
            "github_list_*": {"*": "deny", "**": "ask"},
            "github_get_pr": {"/tmp/*": "deny"},
            "my_fs_write*": {"/tmp/*": "allow", "*": "deny"},
            "doom_loop": "ask"
          }
        }"#,
    )
    .unwrap();
    assert!(c.disabled.is_empty(), "{:?}", c.disabled);
    let gh = server_of(&c, "github");
    assert!(!gh.filter.permits("create_issue"));
    assert!(gh.filter.permits("get_issue") && gh.filter.permits("get_pr"));
    // `github_get_*` comes after `github_get_secret`: allowed after all, as in OpenCode.
    assert!(gh.filter.permits("get_secret"));
    assert_eq!(decision(&c, "github", "get_pr"), Decision::Allow);
    match decision(&c, "github", "get_issue") {
        Decision::Ask { reason } => assert!(reason.contains("\"github_get_issue\""), "{reason}"),
        other => panic!("{other:?}"),
    }
    match decision(&c, "github", "create_issue") {
        Decision::Deny { reason } => assert!(reason.contains("OpenCode's \"tools\""), "{reason}"),
        other => panic!("{other:?}"),
    }
    // OpenCode asks about an MCP call with the input `*`: of an object, the last entry whose
    // pattern matches `*` decides, and the others never apply.
    match decision(&c, "github", "list_prs") {
        Decision::Ask { reason } => assert!(reason.contains(r#"{"**": "ask"}"#), "{reason}"),
        other => panic!("{other:?}"),
    }
    // `my.fs` is written `my_fs` in OpenCode's names.
    let fs = server_of(&c, "my.fs");
    assert!(!fs.filter.permits("read") && !fs.filter.permits("write_file"));
    match decision(&c, "my.fs", "write_file") {
        Decision::Deny { reason } => assert!(reason.contains(r#"{"*": "deny"}"#), "{reason}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(fs.approve_for("list", None), Approve::Destructive);
    // Not OpenCode's file: nothing applies.
    let c = parse(
        "mcp.json",
        r#"{"mcpServers": {"github": {"command": "g"}}, "tools": {"github_*": false}}"#,
    )
    .unwrap();
    assert!(server_of(&c, "github").filter.permits("create_issue"));
}

/// Crush's `permissions.allowed_tools` names MCP tools `mcp_SERVER_TOOL`: those run without
/// asking; its built-in tools there are Crush's business.
#[test]
fn crushs_allowed_tools_run_its_mcp_tools_unasked() {
    let c = parse(
        "crush.json",
        r#"{"$schema": "https://charm.land/crush.json",
            "mcp": {"context7": {"type": "http", "url": "https://c.example/mcp",
                                 "disabled_tools": ["resolve"]}},
            "permissions": {"allowed_tools": ["view", "mcp_context7_get-library-doc", "mcp_context7_*"]}}"#,
    )
    .unwrap();
    let s = server_of(&c, "context7");
    assert_eq!(s.approve_for("get-library-doc", None), Approve::Never);
    // Names are exact: `*` is no wildcard there.
    assert_eq!(s.approve_for("other", None), Approve::Destructive);
    assert!(!s.filter.permits("resolve"));
}
