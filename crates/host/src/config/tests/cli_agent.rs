//! A Kiro CLI (or Amazon Q CLI) agent file: its servers, tools and `includeMcpJson`.

use super::*;

/// A Kiro CLI (or Amazon Q CLI) agent file: its `tools` keep the tools it does not name from
/// models, its `allowedTools` patterns run tools unasked, and `includeMcpJson` adds the
/// workspace's and the user's `mcp.json` servers under the agent's own.
#[test]
fn a_cli_agent_file_decides_its_servers_tools() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let (home, project) = (root.join("home"), root.join("proj"));
    for (file, text) in [
        (
            project.join(".kiro/settings/mcp.json"),
            r#"{"mcpServers": {"fetch": {"command": "f"}, "git": {"command": "not-the-agents"}}}"#,
        ),
        (
            home.join(".kiro/settings/mcp.json"),
            r#"{"mcpServers": {"time": {"command": "t"}}}"#,
        ),
    ] {
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, text).unwrap();
    }
    let agent = project.join(".kiro/agents/dev.json");
    std::fs::create_dir_all(agent.parent().unwrap()).unwrap();
    let text = r#"{
  "name": "dev",
  "mcpServers": {"git": {"command": "git-mcp", "timeout": 120000}},
  "tools": ["fs_read", "@git/git_status", "@git/git_log", "@fetch"],
  "allowedTools": ["fs_read", "@git/git_st*", "@fe?ch"],
  "toolAliases": {"@git/git_status": "status", "@git/git_log": "git log"},
  "includeMcpJson": true
}"#;
    std::fs::write(&agent, text).unwrap();
    let home_var = home.display().to_string();
    let env = move |name: &str| (name == "HOME").then(|| home_var.clone());
    let c = Config::parse_in(&agent, text, &env, Some(project.clone())).unwrap();
    assert_eq!(
        commands_by_name(&c),
        [
            ("fetch".to_string(), "f".to_string()),
            ("git".to_string(), "git-mcp".to_string()),
            ("time".to_string(), "t".to_string()),
        ]
    );
    let git = server_of(&c, "git");
    assert!(git.filter.permits("git_status") && git.filter.permits("git_log"));
    assert!(!git.filter.permits("git_push"));
    assert_eq!(git.filter.list_hiding("git_push"), "the agent's tools");
    let allowed = |s: &ServerConfig, tool: &str| {
        s.filter
            .rules()
            .call(tool, None)
            .is_some_and(|(v, _)| v == switchboard_core::Verdict::Allow)
    };
    assert!(allowed(git, "git_status") && !allowed(git, "git_log"));
    let fetch = server_of(&c, "fetch");
    assert!(fetch.filter.permits("fetch") && allowed(fetch, "fetch"));
    // Not named in `tools`: none of its tools reach the model.
    assert!(!server_of(&c, "time").filter.permits("get_current_time"));
    assert!(
        server_of(&c, "time")
            .origin
            .as_deref()
            .unwrap_or_default()
            .contains("Kiro global")
    );
    // `toolAliases`: the name models see; one no provider takes is a warning.
    assert_eq!(
        chosen_names(&c.servers),
        BTreeMap::from([(
            ("git".to_string(), "git_status".to_string()),
            "status".to_string()
        )])
    );
    assert!(
        c.warnings
            .iter()
            .any(|w| w.contains("toolAliases \"@git/git_log\": \"git log\"")),
        "{:?}",
        c.warnings
    );
    // Without includeMcpJson, only the agent's own servers.
    let own_only = text.replace("\"includeMcpJson\": true", "\"includeMcpJson\": false");
    let c = Config::parse_in(&agent, &own_only, &env, Some(project.clone())).unwrap();
    assert_eq!(
        commands_by_name(&c),
        [("git".to_string(), "git-mcp".to_string())]
    );
}
