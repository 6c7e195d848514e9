//! Claude Desktop's and Claude Code's files: `claude_desktop_config.json`, `~/.claude.json` with
//! its projects and `.mcp.json`, `headersHelper`, the `MCP_TIMEOUT` variables, and Claude Desktop's
//! packaged folder.

use super::*;

#[test]
fn claude_desktop_mcp_servers_json_reads_as_is() {
    let c = parse(
        "claude_desktop_config.json",
        r#"{
  "mcpServers": {
    "filesystem": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"], "autoApprove": []},
    "remote": {"type": "http", "url": "http://localhost:3001/mcp", "headers": {"X-Key": "${MISSING_KEY:-dev}"}},
    "cursor-style": {"type": "streamable-http", "url": "https://x.example/mcp"},
    "off": {"command": "x", "disabled": true}
  }
}"#,
    )
    .unwrap();
    let names: Vec<&str> = c.servers.iter().map(|s| s.name()).collect();
    assert_eq!(names, ["filesystem", "remote", "cursor-style"]);
    assert_eq!(
        reason(&c, "off"),
        "disabled in the config (\"disabled\": true)"
    );
}

#[test]
fn claude_codes_state_file_gives_the_users_servers_and_this_projects() {
    let cwd = std::env::current_dir().unwrap();
    let parent = cwd.parent().unwrap();
    let text = serde_json::to_string_pretty(&serde_json::json!({
        "numStartups": 12,
        "mcpServers": {
            "mine": {"command": "user-server"},
            "shared": {"command": "user-version"}
        },
        "projects": {
            parent.display().to_string(): {"mcpServers": {"outer": {"command": "outer-server"}}},
            cwd.display().to_string(): {
                "allowedTools": [],
                "mcpServers": {
                    "local": {"type": "stdio", "command": "local-server"},
                    "shared": {"command": "local-version"}
                }
            },
            "/somewhere/else": {"mcpServers": {"other": {"command": "x"}}}
        }
    }))
    .unwrap();
    let c = parse("/home/u/.claude.json", &text).unwrap();
    let got = commands_by_name(&c);
    // The deepest project holding the working directory counts; its servers replace the
    // user's of the same name.
    assert_eq!(
        got,
        [
            ("local".to_string(), "local-server".to_string()),
            ("mine".to_string(), "user-server".to_string()),
            ("shared".to_string(), "local-version".to_string()),
        ]
    );
    // A bad local entry is pointed at in the project's section.
    let bad = text.replace("\"local-server\"", "3");
    let c = parse("/home/u/.claude.json", &bad).unwrap();
    let line = bad[..bad.find("\"command\": 3").unwrap()]
        .matches('\n')
        .count()
        + 1;
    assert!(
        reason(&c, "local").starts_with(&format!("/home/u/.claude.json:{line}:")),
        "{}",
        reason(&c, "local")
    );
    // The project's shared .mcp.json: approved servers replace the user's of the same name,
    // the project's own still win, and the rest are listed as not approved or turned off.
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("proj");
    std::fs::create_dir_all(project.join("sub")).unwrap();
    std::fs::write(
        project.join(".mcp.json"),
        r#"{"mcpServers": {
            "shared": {"command": "project-version"},
            "local": {"command": "project-local"},
            "approved": {"command": "approved-server"},
            "pending": {"command": "pending-server"},
            "off": {"command": "off-server"},
            "mine": {"command": "unapproved-mine"}
        }}"#,
    )
    .unwrap();
    let state = serde_json::json!({
        "mcpServers": {"mine": {"command": "user-server"}, "shared": {"command": "user-version"}},
        "projects": {project.display().to_string(): {
            "enabledMcpjsonServers": ["shared", "approved", "local"],
            "disabledMcpjsonServers": ["off"],
            "mcpServers": {"local": {"command": "local-server"}}
        }}
    })
    .to_string();
    let c = Config::parse_in(
        &dir.path().join(".claude.json"),
        &state,
        &env,
        Some(project.join("sub")),
    )
    .unwrap();
    let got = commands_by_name(&c);
    assert_eq!(
        got,
        [
            ("approved".to_string(), "approved-server".to_string()),
            ("local".to_string(), "local-server".to_string()),
            ("mine".to_string(), "user-server".to_string()),
            ("shared".to_string(), "project-version".to_string()),
        ]
    );
    assert!(
        reason(&c, "pending").contains("has not been told to trust"),
        "{c:?}"
    );
    // Each server says which scope it comes from.
    let origin = |name: &str| {
        c.servers
            .iter()
            .find(|s| s.name() == name)
            .and_then(|s| s.origin.clone())
            .unwrap_or_default()
    };
    assert!(origin("approved").starts_with("Claude Code project scope ("));
    assert!(origin("local").starts_with("Claude Code local scope ("));
    assert!(origin("mine").starts_with("Claude Code user scope ("));
    assert!(
        reason(&c, "off").contains("disabledMcpjsonServers"),
        "{c:?}"
    );
    assert_eq!(c.disabled.len(), 2, "{:?}", c.disabled);
    // Claude Code's settings files may hold the approvals instead (here the project's local
    // one, with a comment, as Claude Code allows), but the project's own files count only once
    // the folder is trusted: a cloned repository cannot approve its own servers.
    std::fs::create_dir_all(project.join(".claude")).unwrap();
    std::fs::write(
        project.join(".claude/settings.local.json"),
        "{\n  // approved in Claude Code\n  \"enabledMcpjsonServers\": [\"pending\"]\n}",
    )
    .unwrap();
    let read = |state: &str| {
        Config::parse_in(
            &dir.path().join(".claude.json"),
            state,
            &env,
            Some(project.join("sub")),
        )
        .unwrap()
    };
    let c = read(&state);
    assert!(
        reason(&c, "pending").contains("until the folder is trusted"),
        "{}",
        reason(&c, "pending")
    );
    let trusted = state.replace(
        "\"enabledMcpjsonServers\"",
        "\"hasTrustDialogAccepted\": true, \"enabledMcpjsonServers\"",
    );
    assert_ne!(trusted, state);
    let c = read(&trusted);
    assert!(
        c.servers.iter().any(|s| s.name() == "pending"),
        "{:?}",
        c.disabled
    );
    std::fs::remove_file(project.join(".claude/settings.local.json")).unwrap();
    // The user's settings approve in any folder.
    std::fs::create_dir_all(dir.path().join(".claude")).unwrap();
    std::fs::write(
        dir.path().join(".claude/settings.json"),
        r#"{"enabledMcpjsonServers": ["pending"]}"#,
    )
    .unwrap();
    assert!(read(&state).servers.iter().any(|s| s.name() == "pending"));
    std::fs::remove_file(dir.path().join(".claude/settings.json")).unwrap();
    // A server turned off in Claude Code's /mcp panel for this project stays off.
    let toggled = state.replace(
        "\"enabledMcpjsonServers\"",
        "\"disabledMcpServers\": [\"mine\", \"approved\"], \"enabledMcpjsonServers\"",
    );
    let c = read(&toggled);
    for name in ["mine", "approved"] {
        assert!(
            reason(&c, name).contains("/mcp panel (disabledMcpServers)"),
            "{name}: {:?}",
            c.disabled
        );
    }
    assert_eq!(c.servers.len(), 2, "{:?}", c.servers);
    // With no servers of its own, the project's file is all there is.
    let only = serde_json::json!({"projects": {project.display().to_string(): {"enableAllProjectMcpServers": true}}}).to_string();
    let c = Config::parse_in(
        &dir.path().join(".claude.json"),
        &only,
        &env,
        Some(project.clone()),
    )
    .unwrap();
    assert_eq!(c.servers.len(), 6, "{:?}", c.disabled);

    // A state file with no servers here says so.
    let none = r#"{"projects": {"/elsewhere": {"mcpServers": {}}}}"#;
    let e = parse("/home/u/.claude.json", none).unwrap_err();
    assert!(e.to_string().contains("claude mcp add"), "{e}");
    // Any other file with a `projects` key is an ordinary mcpServers file.
    let plain = r#"{"projects": {}, "mcpServers": {"a": {"command": "x"}}}"#;
    assert_eq!(parse("mcp.json", plain).unwrap().servers.len(), 1);
}

#[test]
fn a_headers_helper_is_kept_for_http_servers_and_refused_for_commands() {
    let text = r#"{"mcpServers": {
        "sso": {"type": "http", "url": "https://mcp.example.com/mcp", "headersHelper": "get-headers --for ${TEAM}"},
        "local": {"command": "x", "headersHelper": "get-headers"},
        "empty": {"type": "http", "url": "https://mcp.example.com/mcp", "headersHelper": " "}
    }}"#;
    let c = parse("/p/.mcp.json", text).unwrap();
    assert_eq!(c.servers.len(), 1, "{:?}", c.disabled);
    // The shell expands its variables, so `${TEAM}` is left to it.
    match &c.servers[0].spec.transport {
        TransportSpec::Http { headers_helper, .. } => {
            assert_eq!(headers_helper.as_deref(), Some("get-headers --for ${TEAM}"))
        }
        other => panic!("{other:?}"),
    }
    assert!(reason(&c, "local").contains("runs a command"));
    assert!(reason(&c, "empty").contains("is empty"));
    let toml =
        "[servers.sso]\nurl = \"https://mcp.example.com/mcp\"\nheaders_helper = \"get-headers\"\n";
    let c = parse("/p/switchboard.toml", toml).unwrap();
    assert!(matches!(
        &c.servers[0].spec.transport,
        TransportSpec::Http { headers_helper: Some(h), .. } if h == "get-headers"
    ));
}

/// Claude Code's `MCP_TIMEOUT` (a server's start) and `MCP_TOOL_TIMEOUT` (each call), in
/// milliseconds, from the environment or its settings' `env`, are the defaults of the servers
/// of its files that set none of their own; other hosts' files are left alone.
#[test]
fn claude_codes_timeout_variables_are_the_defaults_of_its_servers() {
    let m = PolicyMachine::new();
    let servers = serde_json::json!({
        "plain": {"command": "x"},
        "own_call": {"command": "x", "timeout": 5000},
        "own_start": {"command": "x", "startup_timeout": "2s"}
    });
    let read = |file: &str, vars: &[(&str, &str)]| {
        let text = serde_json::json!({ "mcpServers": servers }).to_string();
        let (managed, home) = (
            m.managed.display().to_string(),
            m.home.display().to_string(),
        );
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let env = move |name: &str| match name {
            "SWITCHBOARD_CLAUDE_MANAGED_DIR" => Some(managed.clone()),
            "HOME" => Some(home.clone()),
            _ => vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()),
        };
        Config::parse_in(&m.project.join(file), &text, &env, None).unwrap()
    };
    let timeouts = |c: &Config, name: &str| {
        let s = c.servers.iter().find(|s| s.name() == name).unwrap();
        (
            s.spec.startup_timeout.as_secs_f64(),
            s.spec.call_timeout.as_secs_f64(),
        )
    };
    let vars = [("MCP_TIMEOUT", "45000"), ("MCP_TOOL_TIMEOUT", "120000")];
    let c = read(".mcp.json", &vars);
    assert_eq!(timeouts(&c, "plain"), (45.0, 120.0));
    assert_eq!(timeouts(&c, "own_call"), (45.0, 5.0));
    assert_eq!(timeouts(&c, "own_start").0, 2.0);
    assert_eq!(timeouts(&c, "own_start").1, 120.0);
    // Another host's file is not Claude Code's: its defaults stay.
    let c = read("mcp.json", &vars);
    let default = switchboard_core::server::DEFAULT_STARTUP_TIMEOUT.as_secs_f64();
    assert_eq!(timeouts(&c, "plain").0, default);
    // A value that is not milliseconds is named and left out.
    let c = read(".mcp.json", &[("MCP_TIMEOUT", "soon")]);
    assert_eq!(timeouts(&c, "plain").0, default);
    assert!(
        c.warnings
            .iter()
            .any(|w| w.contains("MCP_TIMEOUT") && w.contains("\"soon\"")),
        "{:?}",
        c.warnings
    );

    // From the settings' `env` (a number or a string), the last file in Claude Code's order
    // winning; a settings file's `env` wins over the shell's, as in Claude Code.
    m.write(
        &m.home.join(".claude/settings.json"),
        serde_json::json!({"env": {"MCP_TOOL_TIMEOUT": "90000", "MCP_TIMEOUT": 20000}}),
    );
    m.write(
        &m.project.join(".claude/settings.local.json"),
        serde_json::json!({"env": {"MCP_TOOL_TIMEOUT": 600000}}),
    );
    let c = read(".mcp.json", &[]);
    assert_eq!(timeouts(&c, "plain"), (20.0, 600.0));
    let c = read(".mcp.json", &[("MCP_TIMEOUT", "1000")]);
    assert_eq!(timeouts(&c, "plain"), (20.0, 600.0));
}

/// Claude Desktop from the Microsoft Store keeps its folder where Windows redirects a packaged
/// app's `%APPDATA%`; `--config claude-desktop` finds it there when the usual one is absent.
#[test]
fn claude_desktops_packaged_folder_is_found() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    let config = home.join("AppData/Roaming");
    let folders = hosts::Folders {
        home,
        config: &config,
        cwd: home,
        codex_home: None,
        gemini_home: None,
        librechat_config: None,
    };
    assert_eq!(
        hosts::resolve("claude-desktop", &folders),
        Some(config.join("Claude/claude_desktop_config.json"))
    );
    let packaged = home.join(
        "AppData/Local/Packages/Claude_pzs8sxrjxfjjc/LocalCache/Roaming/Claude/claude_desktop_config.json",
    );
    write_json(&packaged, serde_json::json!({"mcpServers": {}}));
    assert_eq!(hosts::resolve("claude-desktop", &folders), Some(packaged));
}
