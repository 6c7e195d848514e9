//! Other hosts' `mcpServers` files: Antigravity, GitHub Copilot CLI, Cline, Roo Code and Kiro
//! (their timeouts' units and tool lists).

use super::*;

/// Antigravity's `mcp_config.json` (a project's `.agents/` one or the user's
/// `~/.gemini/antigravity/` one) is read as Antigravity reads it: `serverUrl` for a remote
/// server, winning over a `command` beside it, `disabled`, `disabledTools` and `${VAR}` headers;
/// `--config antigravity` finds the project's file before the user's.
#[test]
fn antigravitys_mcp_config_is_read_as_antigravity_reads_it() {
    let text = r#"{"mcpServers": {
      "remote": {"serverUrl": "https://r.example/mcp",
                 "headers": {"Authorization": "Bearer ${GITHUB_TOKEN}"},
                 "disabledTools": ["delete_repo"]},
      "both": {"serverUrl": "https://b.example/mcp", "command": "npx", "args": ["-y", "x"]},
      "local": {"command": "npx", "args": ["-y", "docs"]},
      "off": {"command": "x", "disabled": true}
    }}"#;
    for file in [
        "/p/.agents/mcp_config.json",
        "/home/u/.gemini/antigravity/mcp_config.json",
    ] {
        let c = parse(file, text).unwrap();
        assert_eq!(names(&c), ["both", "local", "remote"], "{:?}", c.disabled);
        let remote = server_of(&c, "remote");
        match &remote.spec.transport {
            TransportSpec::Http { url, headers, .. } => {
                assert_eq!(url, "https://r.example/mcp");
                assert_eq!(headers[0].1.expose(), "Bearer ghp_secret_value");
            }
            other => panic!("{other:?}"),
        }
        assert!(!remote.filter.permits("delete_repo"));
        assert!(matches!(
            &server_of(&c, "both").spec.transport,
            TransportSpec::Http { url, .. } if url == "https://b.example/mcp"
        ));
        assert!(
            c.warnings
                .iter()
                .any(|w| w.contains("\"both\"") && w.contains("serverUrl")),
            "{:?}",
            c.warnings
        );
        assert!(reason(&c, "off").contains("disabled"));
    }
    // Elsewhere, an entry with both stays refused as ambiguous.
    let c = parse("/p/mcp.json", text).unwrap();
    assert!(reason(&c, "both").contains("both `command` and `url`"));

    let dir = tempfile::tempdir().unwrap();
    let (home, cwd) = (dir.path().join("home"), dir.path().join("work"));
    let folders = hosts::Folders {
        home: &home,
        config: &home,
        cwd: &cwd,
        codex_home: None,
        gemini_home: None,
        librechat_config: None,
    };
    let user = home.join(".gemini/antigravity/mcp_config.json");
    std::fs::create_dir_all(user.parent().unwrap()).unwrap();
    std::fs::write(&user, "{}").unwrap();
    assert_eq!(hosts::resolve("antigravity", &folders), Some(user));
    let project = cwd.join(".agent/mcp_config.json");
    std::fs::create_dir_all(project.parent().unwrap()).unwrap();
    std::fs::write(&project, "{}").unwrap();
    assert_eq!(hosts::resolve("agy", &folders), Some(project));
}

#[test]
fn a_hosts_own_timeout_is_read_in_its_unit() {
    let text = r#"{"mcpServers": {
        "slow": {"command": "x", "timeout": 600000},
        "tiny": {"command": "x", "timeout": 500},
        "huge": {"command": "x", "timeout": 200000000},
        "both": {"command": "x", "timeout": 5000, "call_timeout": 7},
        "bad": {"command": "x", "timeout": "soon"}
    }}"#;
    let call = |c: &Config, name: &str| {
        c.servers
            .iter()
            .find(|s| s.name() == name)
            .unwrap_or_else(|| panic!("{name}: {:?}", c.disabled))
            .spec
            .call_timeout
    };
    // Claude Code, Gemini CLI and Copilot write milliseconds.
    let c = parse("/p/.mcp.json", text).unwrap();
    assert_eq!(call(&c, "slow"), std::time::Duration::from_secs(600));
    assert_eq!(
        call(&c, "tiny"),
        switchboard_core::server::DEFAULT_CALL_TIMEOUT
    );
    assert!(
        c.warnings
            .iter()
            .any(|w| w.starts_with("/p/.mcp.json:3:") && w.contains("under 1000")),
        "{:?}",
        c.warnings
    );
    assert_eq!(call(&c, "huge"), std::time::Duration::from_secs(86_400));
    assert_eq!(call(&c, "both"), std::time::Duration::from_secs(7));
    assert!(reason(&c, "bad").contains("positive number of milliseconds"));
    // Cline and Roo Code write seconds.
    let cline = r#"{"mcpServers": {"slow": {"command": "x", "timeout": 300}}}"#;
    for file in ["cline_mcp_settings.json", "mcp_settings.json"] {
        let c = parse(&format!("/s/{file}"), cline).unwrap();
        assert_eq!(
            call(&c, "slow"),
            std::time::Duration::from_secs(300),
            "{file}"
        );
    }
}

/// GitHub Copilot CLI's `~/.copilot/mcp-config.json` is read as Copilot writes it: `"type":
/// "local"` runs a command, and `"tools"` lists the tools to turn on (`"*"`: all; none listed:
/// none).
#[test]
fn a_github_copilot_cli_config_is_read_as_copilot_writes_it() {
    let text = r#"{"mcpServers": {
        "playwright": {"type": "local", "command": "npx", "args": ["@playwright/mcp@latest"], "env": {}, "tools": ["*"]},
        "ctx": {"type": "http", "url": "https://mcp.context7.com/mcp", "headers": {}, "tools": ["resolve-library-id"]},
        "none": {"type": "stdio", "command": "x", "tools": []}
    }}"#;
    let c = parse("/home/u/.copilot/mcp-config.json", text).unwrap();
    assert_eq!(names(&c), ["ctx", "none", "playwright"], "{:?}", c.disabled);
    let server = |name: &str| c.servers.iter().find(|s| s.name() == name).unwrap();
    assert!(matches!(
        &server("playwright").spec.transport,
        TransportSpec::Stdio { command, .. } if command == "npx"
    ));
    assert!(server("playwright").filter.permits("browser_click"));
    let ctx = &server("ctx").filter;
    assert!(ctx.permits("resolve-library-id") && !ctx.permits("get-library-docs"));
    assert!(!server("none").filter.permits("anything"));
    // `--config copilot` opens it.
    let home = Path::new("/h");
    let folders = hosts::Folders {
        home,
        config: Path::new("/h/.config"),
        cwd: Path::new("/p"),
        codex_home: None,
        gemini_home: None,
        librechat_config: None,
    };
    assert_eq!(
        hosts::resolve("copilot", &folders),
        Some(PathBuf::from("/h/.copilot/mcp-config.json"))
    );
}

/// The per-server tool settings of the hosts that write `mcpServers` entries are switchboard's:
/// `disabledTools` hides tools, `autoApprove` / `alwaysAllow` run tools unasked (`"*"` every
/// tool), and Gemini CLI's `"trust": true` runs the server's tools unasked, in its own files
/// only.
#[test]
fn other_hosts_tool_lists_hide_and_approve_tools() {
    let c = parse(
        "mcp_config.json",
        r#"{"mcpServers": {
            "kiro": {"command": "k", "disabledTools": ["delete_repo", 3], "autoApprove": ["get_issue"]},
            "roo": {"command": "r", "alwaysAllow": ["read"], "disabledTools": []},
            "all": {"command": "a", "autoApprove": ["*"]},
            "trusting": {"command": "t", "trust": true},
            "copilot": {"type": "local", "command": "c", "tools": ["one", "two"], "disabledTools": ["two"]}
        }}"#,
    )
    .unwrap();
    assert!(c.disabled.is_empty(), "{:?}", c.disabled);
    let server = |name: &str| c.servers.iter().find(|s| s.name() == name).unwrap();
    let kiro = server("kiro");
    assert!(!kiro.filter.permits("delete_repo") && kiro.filter.permits("get_issue"));
    assert_eq!(kiro.approve_for("get_issue", None), Approve::Never);
    assert_eq!(kiro.approve_for("create_issue", None), Approve::Destructive);
    assert_eq!(server("roo").approve_for("read", None), Approve::Never);
    assert_eq!(server("all").approve_for("anything", None), Approve::Never);
    // `trust` is Gemini CLI's key: elsewhere it means nothing.
    assert_eq!(
        server("trusting").approve_for("x", None),
        Approve::Destructive
    );
    let copilot = server("copilot");
    assert!(copilot.filter.permits("one") && !copilot.filter.permits("two"));
    assert!(!copilot.filter.permits("three"));

    let dir = tempfile::tempdir().unwrap();
    let gemini = dir.path().join(".gemini/settings.json");
    write_json(
        &gemini,
        serde_json::json!({"mcpServers": {"trusting": {"command": "t", "trust": true}}}),
    );
    let text = std::fs::read_to_string(&gemini).unwrap();
    let home = dir.path().display().to_string();
    let env = move |name: &str| (name == "HOME").then(|| home.clone());
    let c = Config::parse_in(&gemini, &text, &env, Some(dir.path().to_path_buf())).unwrap();
    let trusting = c.servers.iter().find(|s| s.name() == "trusting").unwrap();
    assert_eq!(trusting.approve_for("x", None), Approve::Never);
}
