//! VS Code's `mcp.json`: its `servers` key, comments and trailing commas, predefined variables,
//! inputs, and `envFile`.

use super::*;

#[test]
fn vscode_servers_key_reads_as_is() {
    let c = parse(
        ".vscode/mcp.json",
        r#"{"inputs": [], "servers": {"time": {"type": "stdio", "command": "uvx", "args": ["mcp-server-time"], "env": {"T": "${env:HOME}"}}}}"#,
    )
    .unwrap();
    assert_eq!(c.servers[0].name(), "time");
}

#[test]
fn vs_code_mcp_json_with_comments_and_trailing_commas_is_read_as_is() {
    let text = r#"{
  // VS Code writes this file with comments
  "inputs": [],
  "servers": {
    /* the first server */
    "first": {"type": "stdio", "command": "x", "args": ["--url", "http://a.example//b"],},
    "second": {"command": "y", "args": [1]}, // a bad entry, on line 7
  },
}"#;
    let c = parse("mcp.json", text).unwrap();
    assert_eq!(c.servers.len(), 1);
    match &c.servers[0].spec.transport {
        TransportSpec::Stdio { args, .. } => assert_eq!(args[1], "http://a.example//b"),
        other => panic!("{other:?}"),
    }
    // Positions in errors still point into the file as written.
    let e = c.disabled.iter().find(|d| d.name == "second").unwrap();
    assert!(e.reason.contains("mcp.json:7:"), "{}", e.reason);
}

#[test]
fn vs_code_predefined_variables_that_mean_something_here_are_resolved() {
    let text = r#"{"servers": {
        "fs": {"command": "x", "args": ["${workspaceFolder}/data", "${userHome}${/}notes", "${workspaceFolderBasename}"]},
        "ask": {"command": "x", "args": ["${input:token}"]}
    }}"#;
    let c = parse("proj/.vscode/mcp.json", text).unwrap();
    let root = std::path::absolute("proj").unwrap();
    match &c.servers[0].spec.transport {
        TransportSpec::Stdio { args, .. } => assert_eq!(
            args,
            &[
                format!("{}/data", root.display()),
                format!("/home/u{}notes", std::path::MAIN_SEPARATOR),
                "proj".to_string(),
            ]
        ),
        other => panic!("{other:?}"),
    }
    // Named relative to the project, as `--config .vscode/mcp.json` does: the project.
    let c = parse(".vscode/mcp.json", text).unwrap();
    let here = std::path::absolute(".").unwrap();
    match &c.servers[0].spec.transport {
        TransportSpec::Stdio { args, .. } => {
            assert_eq!(args[0], format!("{}/data", here.display()));
        }
        other => panic!("{other:?}"),
    }
    // A file outside .vscode: its own folder is the workspace.
    let c = parse("team/mcp.json", text).unwrap();
    match &c.servers[0].spec.transport {
        TransportSpec::Stdio { args, .. } => {
            assert_eq!(args[2], "team");
        }
        other => panic!("{other:?}"),
    }
    // What VS Code asks for needs its switchboard variable, and the message says which.
    assert!(reason(&c, "ask").contains(
        "${input:token} is a value VS Code asks you for; give it to switchboard in the environment variable SWITCHBOARD_INPUT_TOKEN"
    ));
}

#[test]
fn an_env_file_joins_the_commands_environment_and_env_wins() {
    let dir = tempfile::tempdir().unwrap();
    let vscode = dir.path().join(".vscode");
    std::fs::create_dir_all(&vscode).unwrap();
    std::fs::write(
        dir.path().join(".env"),
        "# keys\nAPI_TOKEN=from-file\nexport OVERRIDE=\"from file\"\nAPI_TOKEN=later-line\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("bad.env"),
        "API_TOKEN=fine\nsecret-value-without-key\n",
    )
    .unwrap();
    let text = r#"{"servers": {
        "srv": {"type": "stdio", "command": "x", "envFile": "${workspaceFolder}/.env", "env": {"OVERRIDE": "from env"}},
        "missing": {"command": "x", "envFile": "${workspaceFolder}/nowhere.env"},
        "bad": {"command": "x", "envFile": "../bad.env"}
    }}"#;
    let c = Config::parse(&vscode.join("mcp.json"), text, &env).unwrap();
    assert_eq!(c.servers.len(), 1, "{:?}", c.disabled);
    assert_eq!(
        env_of(&c.servers[0]),
        [
            ("OVERRIDE".to_string(), "from env".to_string()),
            ("API_TOKEN".to_string(), "later-line".to_string()),
        ]
    );
    let missing = reason(&c, "missing");
    assert!(
        missing.contains("env_file: cannot read") && missing.contains("nowhere.env"),
        "{missing}"
    );
    let bad = reason(&c, "bad");
    assert!(bad.contains("line 2: expected KEY=value"), "{bad}");
    assert!(!bad.contains("secret-value"), "{bad}");
    // switchboard.toml spells it env_file.
    let toml = "[servers.a]\ncommand = \"x\"\nenv_file = \".env\"\n";
    let c = Config::parse(&dir.path().join("switchboard.toml"), toml, &env).unwrap();
    assert_eq!(
        env_of(&c.servers[0]),
        [
            ("OVERRIDE".to_string(), "from file".to_string()),
            ("API_TOKEN".to_string(), "later-line".to_string()),
        ]
    );
    // serve watches the file with the config.
    assert_eq!(c.inputs, [dir.path().join(".env")]);
}

#[test]
fn a_vs_code_input_is_read_from_its_switchboard_variable() {
    let text = r#"{
        "inputs": [{"type": "promptString", "id": "github_token", "description": "GitHub PAT", "password": true}],
        "servers": {"github": {"type": "http", "url": "https://api.githubcopilot.com/mcp/",
            "headers": {"Authorization": "Bearer ${input:github_token}"}}}
    }"#;
    let with = |name: &str| (name == "SWITCHBOARD_INPUT_GITHUB_TOKEN").then(|| "ghp_x".to_string());
    let c = Config::parse(Path::new("/p/.vscode/mcp.json"), text, &with).unwrap();
    assert_eq!(
        env_of(&c.servers[0]),
        [("Authorization".to_string(), "Bearer ghp_x".to_string())]
    );
    let c = parse("/p/.vscode/mcp.json", text).unwrap();
    let why = reason(&c, "github");
    assert!(why.contains("SWITCHBOARD_INPUT_GITHUB_TOKEN"), "{why}");
}
