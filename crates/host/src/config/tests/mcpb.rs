//! MCP bundles: Claude Desktop's installed extensions with their settings, and a bundle folder or
//! manifest read as a config.

use super::*;

#[test]
fn claude_desktops_extensions_run_as_installed_with_their_settings() {
    use serde_json::json;
    let dir = tempfile::tempdir().unwrap();
    let claude = dir.path().join("Claude");
    let config = claude.join("claude_desktop_config.json");
    write_json(
        &config,
        json!({"mcpServers": {"filesystem": {"command": "npx", "args": ["x"]}}}),
    );
    let ids = [
        "ant.dir.ant.anthropic.filesystem",
        "local.off",
        "local.keyed",
        "local.unset",
    ];
    write_json(
        &claude.join("extensions-installations.json"),
        json!({"extensions": ids.iter().map(|id| (id.to_string(), json!({"id": id}))).collect::<serde_json::Map<_, _>>()}),
    );
    let node = |name: &str, user_config: serde_json::Value| {
        json!({
            "manifest_version": "0.3",
            "name": name,
            "server": {"type": "node", "entry_point": "dist/index.js", "mcp_config": {
                "command": "node",
                "args": ["${__dirname}/dist/index.js", "${user_config.dirs}"],
                "env": {"KEY": "${user_config.api_key}"}
            }},
            "user_config": user_config
        })
    };
    let installed = claude.join("Claude Extensions");
    let settings = claude.join("Claude Extensions Settings");
    write_json(
        &installed.join(ids[0]).join("manifest.json"),
        node(
            "filesystem",
            json!({"dirs": {"type": "directory", "multiple": true, "required": true}}),
        ),
    );
    write_json(
        &settings.join(format!("{}.json", ids[0])),
        json!({"isEnabled": true, "userConfig": {"dirs": ["/a", "/b"]}}),
    );
    write_json(
        &installed.join("local.off/manifest.json"),
        node("off", json!({})),
    );
    write_json(
        &settings.join("local.off.json"),
        json!({"isEnabled": false}),
    );
    write_json(
        &installed.join("local.keyed/manifest.json"),
        node(
            "keyed",
            json!({"api_key": {"type": "string", "title": "API Key", "sensitive": true, "required": true}}),
        ),
    );
    write_json(
        &settings.join("local.keyed.json"),
        json!({"isEnabled": true, "userConfig": {}}),
    );
    write_json(
        &installed.join("local.unset/manifest.json"),
        node("unset", json!({})),
    );
    // A folder the registry does not list is not installed.
    write_json(
        &installed.join("local.stray/manifest.json"),
        node("stray", json!({})),
    );
    write_json(
        &settings.join("local.stray.json"),
        json!({"isEnabled": true}),
    );

    let text = std::fs::read_to_string(&config).unwrap();
    let c = Config::parse(&config, &text, &env).unwrap();
    let names: Vec<&str> = c.server_names().collect();
    assert_eq!(
        names,
        [
            "filesystem",
            // The config's own server keeps the name; the extension goes by its ID.
            "ant.dir.ant.anthropic.filesystem",
            "keyed",
            "off",
            "unset"
        ]
    );
    let ext = c.servers.iter().find(|s| s.name() == ids[0]).unwrap();
    let folder = std::path::absolute(installed.join(ids[0])).unwrap();
    match &ext.spec.transport {
        TransportSpec::Stdio {
            command, args, cwd, ..
        } => {
            assert_eq!(command, "node");
            assert_eq!(
                args,
                &[
                    folder.join("dist/index.js").display().to_string(),
                    "/a".to_string(),
                    "/b".to_string()
                ]
            );
            assert_eq!(cwd.as_deref(), Some(folder.as_path()));
        }
        other => panic!("{other:?}"),
    }
    assert!(
        ext.origin
            .as_deref()
            .unwrap()
            .starts_with("Claude Desktop extension ant.dir"),
        "{:?}",
        ext.origin
    );
    assert!(reason(&c, "off").contains("turned off in Claude Desktop"));
    let off = c.disabled.iter().find(|d| d.name == "off").unwrap();
    assert!(
        off.origin
            .as_deref()
            .is_some_and(|o| o.starts_with("Claude Desktop extension local.off (")),
        "{:?}",
        off.origin
    );
    let keyed = reason(&c, "keyed");
    assert!(
        keyed.contains("`api_key` (API Key)")
            && keyed.contains("keychain")
            && keyed.contains("SWITCHBOARD_INPUT_API_KEY"),
        "{keyed}"
    );
    assert!(reason(&c, "unset").contains("not turned on"));
    assert!(
        c.inputs
            .contains(&claude.join("extensions-installations.json"))
    );

    // The key, given in the environment, turns the keyed extension on.
    let with_key = |name: &str| match name {
        "SWITCHBOARD_INPUT_API_KEY" => Some("k-1".to_string()),
        other => env(other),
    };
    let c = Config::parse(&config, &text, &with_key).unwrap();
    assert!(c.servers.iter().any(|s| s.name() == "keyed"));

    // A config that holds only preferences still brings the extensions.
    let prefs = r#"{"preferences": {"menuBarEnabled": false}}"#;
    let c = Config::parse(&config, prefs, &env).unwrap();
    assert!(c.servers.iter().any(|s| s.name() == "filesystem"));
}

#[test]
fn a_bundle_folder_or_manifest_is_a_config_of_its_one_server() {
    use serde_json::json;
    let dir = tempfile::tempdir().unwrap();
    let bundle = dir.path().join("hello");
    write_json(
        &bundle.join("manifest.json"),
        json!({"manifest_version": "0.4", "name": "hello-uv",
               "server": {"type": "uv", "entry_point": "src/server.py"}}),
    );
    for path in [bundle.clone(), bundle.join("manifest.json")] {
        let c = Config::load(&path).unwrap();
        assert_eq!(c.server_names().collect::<Vec<_>>(), ["hello-uv"]);
        assert_eq!(command_of(&c, "hello-uv"), "uv");
    }
    // A folder of server files with no manifest is still Continue's.
    let folder = dir.path().join("servers");
    write_json(
        &folder.join("one.json"),
        json!({"mcpServers": {"one": {"command": "x"}}}),
    );
    assert_eq!(
        Config::load(&folder)
            .unwrap()
            .server_names()
            .collect::<Vec<_>>(),
        ["one"]
    );
}
