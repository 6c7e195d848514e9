//! Cursor's files: the user's and the project's `mcp.json` read together, and `permissions.json`'s
//! `mcpAllowlist`.

use super::*;

/// Cursor (like VS Code, Kiro, Amazon Q and Roo Code) runs the user's servers and the project's
/// together, the project's winning on a name: from either file, switchboard reads both.
#[test]
fn a_hosts_user_and_project_files_are_read_together() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let (home, project) = (root.join("home"), root.join("proj"));
    let user_file = home.join(".cursor/mcp.json");
    let project_file = project.join(".cursor/mcp.json");
    for (file, servers) in [
        (
            &user_file,
            serde_json::json!({"mine": {"command": "mine"}, "shared": {"command": "user-shared"}}),
        ),
        (
            &project_file,
            serde_json::json!({"proj": {"command": "proj"}, "shared": {"command": "proj-shared"}}),
        ),
    ] {
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(
            file,
            serde_json::json!({ "mcpServers": servers }).to_string(),
        )
        .unwrap();
    }
    let home_text = home.display().to_string();
    let env = move |name: &str| (name == "HOME").then(|| home_text.clone());
    let read = |file: &Path, cwd: &Path| {
        let text = std::fs::read_to_string(file).unwrap();
        Config::parse_in(file, &text, &env, Some(cwd.to_path_buf())).unwrap()
    };
    for file in [&project_file, &user_file] {
        let c = read(file, &project);
        assert_eq!(names(&c), ["mine", "proj", "shared"], "{file:?}");
        assert_eq!(command_of(&c, "shared"), "proj-shared");
        let origin = |name: &str| {
            c.servers
                .iter()
                .find(|s| s.name() == name)
                .and_then(|s| s.origin.clone())
                .unwrap()
        };
        assert!(
            origin("mine").starts_with("Cursor user config ("),
            "{}",
            origin("mine")
        );
        assert!(origin("shared").starts_with("Cursor project config ("));
        assert!(c.inputs.contains(if file == &project_file {
            &user_file
        } else {
            &project_file
        }));
    }
    // Away from the project, the user's file is the user's servers alone.
    let c = read(&user_file, &home);
    assert_eq!(names(&c), ["mine", "shared"]);
    assert_eq!(command_of(&c, "shared"), "user-shared");
}

/// Cursor's `~/.cursor/permissions.json` `mcpAllowlist` (`SERVER:TOOL`, `*` wildcards) lets the
/// tools it names run without asking, for the servers of Cursor's files.
#[test]
fn cursors_mcp_allowlist_runs_its_tools_unasked() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().canonicalize().unwrap().join("home");
    let user = home.join(".cursor/mcp.json");
    write_json(
        &user,
        serde_json::json!({"mcpServers": {"github": {"command": "g"}, "linear": {"command": "l"}}}),
    );
    write_json(
        &home.join(".cursor/permissions.json"),
        serde_json::json!({"mcpAllowlist": ["github:*", "linear:list_issues", "bare"]}),
    );
    // The project's file adds to the user's list, as Cursor joins them.
    let project = dir.path().canonicalize().unwrap().join("proj");
    write_json(
        &project.join(".cursor/permissions.json"),
        serde_json::json!({"mcpAllowlist": ["linear:get_*"]}),
    );
    let text = std::fs::read_to_string(&user).unwrap();
    let home_text = home.display().to_string();
    let env = move |name: &str| (name == "HOME").then(|| home_text.clone());
    let c = Config::parse_in(&user, &text, &env, Some(project.clone())).unwrap();
    assert_eq!(
        server_of(&c, "linear").approve_for("get_issue", None),
        Approve::Never
    );
    assert_eq!(
        server_of(&c, "github").approve_for("delete_repo", None),
        Approve::Never
    );
    let linear = server_of(&c, "linear");
    assert_eq!(linear.approve_for("list_issues", None), Approve::Never);
    assert_eq!(
        linear.approve_for("delete_issue", None),
        Approve::Destructive
    );
    assert!(
        c.warnings.iter().any(|w| w.contains("\"bare\"")),
        "{:?}",
        c.warnings
    );
    // Another host's file is not Cursor's.
    let other = home.join("elsewhere/mcp.json");
    write_json(
        &other,
        serde_json::json!({"mcpServers": {"github": {"command": "g"}}}),
    );
    let text = std::fs::read_to_string(&other).unwrap();
    let c = Config::parse_in(&other, &text, &env, None).unwrap();
    assert_eq!(
        server_of(&c, "github").approve_for("delete_repo", None),
        Approve::Destructive
    );
}
