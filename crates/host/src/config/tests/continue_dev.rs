//! Continue's `config.yaml`, its JSON list, and its `mcpServers` folder of server files.

use super::*;

#[test]
fn a_continue_config_yaml_and_its_json_list_are_read_as_continue_writes_them() {
    let text = r#"name: My Config
version: 0.0.1
schema: v1
models: []
mcpServers:
  - name: SQLite MCP
    command: npx
    args:
      - "-y"
      - "mcp-sqlite"
    env:
      TOKEN: ${{ secrets.GITHUB_TOKEN }}
      PRICE: "${NOT_A_VARIABLE}"
  - name: Remote
    type: streamable-http
    url: https://r.example/mcp
    connectionTimeout: 3000
    requestOptions:
      headers:
        Authorization: Bearer ${{ inputs.GITHUB_TOKEN }}
  - name: SQLite MCP
    command: other
  - command: nameless
"#;
    let c = parse("config.yaml", text).unwrap();
    let names: Vec<&str> = c.servers.iter().map(|s| s.name()).collect();
    assert_eq!(names, ["SQLite MCP", "Remote"], "{:?}", c.disabled);
    assert_eq!(
        env_of(&c.servers[0]),
        [
            ("PRICE".to_string(), "${NOT_A_VARIABLE}".to_string()),
            ("TOKEN".to_string(), "ghp_secret_value".to_string()),
        ]
    );
    assert_eq!(
        env_of(&c.servers[1]),
        [(
            "Authorization".to_string(),
            "Bearer ghp_secret_value".to_string()
        )]
    );
    assert_eq!(
        c.servers[1].spec.startup_timeout,
        std::time::Duration::from_secs(3)
    );
    // The second "SQLite MCP" is refused and pointed at; so is the item without a name.
    let twice = c.disabled.iter().find(|d| d.name == "SQLite MCP").unwrap();
    assert!(
        twice.reason.starts_with("config.yaml:21:5:"),
        "{}",
        twice.reason
    );
    assert!(twice.reason.contains("a second server"), "{}", twice.reason);
    assert!(reason(&c, "mcpServers[3]").contains("has no `name`"));

    let json =
        r#"{"models": [], "mcpServers": [{"name": "fs", "command": "npx", "args": ["srv"]}]}"#;
    let c = parse("config.json", json).unwrap();
    assert_eq!(
        transports(&c),
        [("npx".to_string(), vec!["srv".to_string()])]
    );
    // A YAML file that is neither goose's nor Continue's says what it expected.
    let e = parse("config.yaml", "models: []\n").unwrap_err();
    assert!(e.to_string().contains("Continue's"), "{e}");
}

#[test]
fn a_folder_of_server_files_is_read_as_continue_reads_its_mcp_servers_folder() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join(".continue/mcpServers");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(
        folder.join("a-playwright.yaml"),
        "name: Playwright mcpServer\nversion: 0.0.1\nschema: v1\nmcpServers:\n  - name: one\n    command: npx\n    args: [\"@playwright/mcp@latest\"]\n",
    )
    .unwrap();
    std::fs::write(
        folder.join("b-copied.json"),
        r#"{"mcpServers": {"two": {"command": "uvx", "args": ["srv"]}, "one": {"command": "again"}}}"#,
    )
    .unwrap();
    std::fs::write(folder.join("c-broken.yaml"), "mcpServers:\n  - name: [\n").unwrap();
    std::fs::write(folder.join("notes.txt"), "not a config").unwrap();
    // One server alone, named after its file.
    std::fs::write(
        folder.join("playwright.json"),
        r#"{"command": "npx", "args": ["@playwright/mcp@latest"]}"#,
    )
    .unwrap();
    let c = Config::load(&folder).unwrap();
    let names: Vec<&str> = c.servers.iter().map(|s| s.name()).collect();
    assert_eq!(names, ["one", "two", "playwright"], "{:?}", c.disabled);
    // Each server names the file it comes from.
    let origins: Vec<String> = c.servers.iter().filter_map(|s| s.origin.clone()).collect();
    assert_eq!(
        origins,
        ["a-playwright.yaml", "b-copied.json", "playwright.json"]
            .map(|f| folder.join(f).display().to_string())
    );
    let again = reason(&c, "one");
    assert!(
        again.contains("b-copied.json")
            && again.contains("already defined in")
            && again.contains("a-playwright.yaml"),
        "{again}"
    );
    assert_eq!(c.warnings.len(), 1, "{:?}", c.warnings);
    assert!(c.warnings[0].contains("c-broken.yaml"), "{:?}", c.warnings);
    let empty = dir.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let e = Config::load(&empty).unwrap_err();
    assert!(e.to_string().contains("none is here"), "{e}");
}
