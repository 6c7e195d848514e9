//! Claude Code's plugins: enabled plugins bring their MCP servers, and their `userConfig` options
//! fill them.

use super::*;

#[test]
fn claude_codes_enabled_plugins_bring_their_mcp_servers() {
    let m = PolicyMachine::new();
    let plugins = m.home.join(".claude/plugins");
    let root = |name: &str| plugins.join("cache/market").join(name);
    // "inline": servers in plugin.json, with ${CLAUDE_PLUGIN_ROOT}; "file": its .mcp.json;
    // "listed": plugin.json names a file; "off": installed but not enabled; "elsewhere":
    // installed for another project only.
    m.write(
        &root("inline").join(".claude-plugin/plugin.json"),
        serde_json::json!({"name": "inline", "mcpServers": {
            "db": {"command": "${CLAUDE_PLUGIN_ROOT}/bin/db", "args": ["--ro"]}
        }}),
    );
    m.write(
        &root("file").join(".mcp.json"),
        serde_json::json!({"mcpServers": {"api": {"type": "http", "url": "https://api.example.com/mcp"}}}),
    );
    m.write(
        &root("listed").join(".claude-plugin/plugin.json"),
        serde_json::json!({"name": "listed", "mcpServers": "./servers.json"}),
    );
    m.write(
        &root("listed").join("servers.json"),
        serde_json::json!({"tool": {"command": "listed-tool"}}),
    );
    for name in ["off", "elsewhere", "sneaky"] {
        m.write(
            &root(name).join(".mcp.json"),
            serde_json::json!({"mcpServers": {"s": {"command": "x"}}}),
        );
    }
    let install = |name: &str, scope: &str| {
        serde_json::json!([{"scope": scope, "installPath": root(name), "version": "1.0.0",
            "projectPath": if scope == "project" { "/other/project" } else { "" }}])
    };
    m.write(
        &plugins.join("installed_plugins.json"),
        serde_json::json!({"version": 2, "plugins": {
            "inline@market": install("inline", "user"),
            "file@market": install("file", "user"),
            "listed@market": install("listed", "user"),
            "off@market": install("off", "user"),
            "sneaky@market": install("sneaky", "user"),
            "elsewhere@market": install("elsewhere", "project")
        }}),
    );
    m.write(
        &m.home.join(".claude/settings.json"),
        serde_json::json!({"enabledPlugins": {
            "inline@market": true, "file@market": true, "listed@market": true,
            "off@market": true, "elsewhere@market": true
        }}),
    );
    // The project turns one off again (a later settings file wins), and tries to turn on one
    // the user has not, which counts only once Claude Code trusts the folder.
    m.write(
        &m.project.join(".claude/settings.json"),
        serde_json::json!({"enabledPlugins": {"off@market": false, "sneaky@market": true}}),
    );
    let c = m.read_state(&serde_json::json!({
        "mcpServers": {"mine": {"command": "mine"}},
        "projects": {m.project.display().to_string(): {
            "hasTrustDialogAccepted": true,
            "disabledMcpServers": ["plugin:file:api"]
        }}
    }));
    assert_eq!(
        names(&c),
        [
            "mine",
            "plugin_inline_db",
            "plugin_listed_tool",
            "plugin_sneaky_s"
        ],
        "{:?} {:?}",
        c.disabled,
        c.warnings
    );
    let db = c
        .servers
        .iter()
        .find(|s| s.name() == "plugin_inline_db")
        .unwrap();
    match &db.spec.transport {
        TransportSpec::Stdio { command, env, .. } => {
            assert_eq!(
                *command,
                root("inline").join("bin/db").display().to_string()
            );
            assert!(env.iter().any(|(k, v)| k == "CLAUDE_PLUGIN_ROOT"
                && v.expose() == root("inline").display().to_string()));
        }
        other => panic!("{other:?}"),
    }
    assert!(
        db.origin
            .as_deref()
            .is_some_and(|o| o.starts_with("Claude Code plugin inline@market (")),
        "{:?}",
        db.origin
    );
    // Turned off in Claude Code's /mcp under the name it shows there.
    assert!(reason(&c, "plugin_file_api").contains("/mcp panel"));
    assert!(c.inputs.contains(&plugins.join("installed_plugins.json")));
    // With only plugins, a state file is still a config.
    // Not trusted: the project's settings still turn "off" off, but do not enable "sneaky".
    let c = m.read_state(&serde_json::json!({"projects": {}}));
    assert_eq!(
        names(&c),
        ["plugin_file_api", "plugin_inline_db", "plugin_listed_tool"],
        "{:?}",
        c.disabled
    );
}

/// A Claude Code plugin's `userConfig` values fill its servers' `${user_config.KEY}`: the
/// settings' `pluginConfigs.ID.options`, the sensitive ones from `~/.claude/.credentials.json`
/// (`pluginSecrets`), a multi-valued one as one argument per value. A required value that is
/// missing disables that plugin's servers that use it, saying where Claude Code keeps it.
#[test]
fn claude_code_plugin_options_fill_their_servers() {
    use serde_json::json;
    let m = PolicyMachine::new();
    let plugins = m.home.join(".claude/plugins");
    let root = plugins.join("cache/market/opts");
    m.write(
        &root.join(".claude-plugin/plugin.json"),
        json!({"name": "opts",
        "userConfig": {
            "api_key": {"type": "string", "title": "API key", "description": "k",
                        "sensitive": true, "required": true},
            "region": {"type": "string", "title": "Region", "description": "r", "default": "eu"},
            "dirs": {"type": "directory", "title": "Folders", "description": "d", "multiple": true}
        },
        "mcpServers": {
            "svc": {"command": "${CLAUDE_PLUGIN_ROOT}/bin/svc",
                    "args": ["--region=${user_config.region}", "${user_config.dirs}"],
                    "env": {"KEY": "${user_config.api_key}"}},
            "plain": {"command": "plain"}
        }}),
    );
    m.write(
        &plugins.join("installed_plugins.json"),
        json!({"version": 2, "plugins": {"opts@market": [{"scope": "user", "installPath": root}]}}),
    );
    m.write(
        &m.home.join(".claude/settings.json"),
        json!({"enabledPlugins": {"opts@market": true},
               "pluginConfigs": {"opts@market": {"options": {"dirs": ["/a", "/b"], "region": "us"}}}}),
    );
    let credentials = m.home.join(".claude/.credentials.json");
    m.write(
        &credentials,
        json!({"pluginSecrets": {"opts@market": {"api_key": "sk-1"}}}),
    );
    let state =
        json!({"projects": {m.project.display().to_string(): {"hasTrustDialogAccepted": true}}});
    let c = m.read_state(&state);
    let svc = c
        .servers
        .iter()
        .find(|s| s.name() == "plugin_opts_svc")
        .unwrap_or_else(|| panic!("{:?}", c.disabled));
    match &svc.spec.transport {
        TransportSpec::Stdio { command, args, .. } => {
            assert_eq!(command, &root.join("bin/svc").display().to_string());
            assert_eq!(args, &["--region=us", "/a", "/b"]);
        }
        other => panic!("{other:?}"),
    }
    assert!(env_of(svc).contains(&("KEY".to_string(), "sk-1".to_string())));

    // Without the secret (kept in the keychain on macOS), the server that needs it is
    // disabled, naming it; the plugin's other server still runs.
    std::fs::remove_file(&credentials).unwrap();
    let c = m.read_state(&state);
    let why = reason(&c, "plugin_opts_svc");
    assert!(
        why.contains("`api_key` (API key)")
            && why.contains("keychain")
            && why.contains("SWITCHBOARD_INPUT_API_KEY"),
        "{why}"
    );
    assert!(c.servers.iter().any(|s| s.name() == "plugin_opts_plain"));
}
