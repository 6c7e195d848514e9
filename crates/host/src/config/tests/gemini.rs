//! Gemini CLI's settings (and Windsurf's entries): its entry keys, allowed and excluded servers,
//! settings layers, extensions, folder trust, `.env` files and `GEMINI_CLI_HOME`.

use super::*;

#[test]
fn gemini_cli_and_windsurf_entries_are_read_as_they_write_them() {
    let text = r#"{"theme": "Default", "mcpServers": {
        "gem": {"httpUrl": "https://g.example/mcp", "includeTools": ["read_*"], "excludeTools": ["read_secret"], "trust": false},
        "wind": {"serverUrl": "https://w.example/mcp"}
    }}"#;
    let c = parse("settings.json", text).unwrap();
    assert_eq!(c.servers.len(), 2, "{:?}", c.disabled);
    for (s, url) in c
        .servers
        .iter()
        .zip(["https://g.example/mcp", "https://w.example/mcp"])
    {
        match &s.spec.transport {
            TransportSpec::Http { url: u, .. } => assert_eq!(u, url),
            other => panic!("{other:?}"),
        }
    }
    let gem = &c.servers[0].filter;
    assert!(gem.permits("read_file") && !gem.permits("read_secret") && !gem.permits("write_file"));
}

#[test]
fn gemini_clis_allowed_and_excluded_lists_keep_servers_out() {
    let text = r#"{
        "mcp": {"allowed": ["a", "b"], "excluded": ["b"]},
        "mcpServers": {"a": {"command": "x"}, "b": {"command": "x"}, "c": {"command": "x"}}
    }"#;
    let c = parse("/home/u/.gemini/settings.json", text).unwrap();
    assert_eq!(names(&c), ["a"]);
    assert!(reason(&c, "b").contains("excluded in Gemini CLI's settings (mcp.excluded)"));
    assert!(reason(&c, "c").contains("(mcp.allowed)"));
    // The older spellings, and an empty list that restricts nothing.
    let old = r#"{"excludeMCPServers": ["c"], "allowMCPServers": [],
        "mcpServers": {"a": {"command": "x"}, "c": {"command": "x"}}}"#;
    let c = parse("/home/u/.gemini/settings.json", old).unwrap();
    assert_eq!(names(&c), ["a"]);
    assert!(reason(&c, "c").contains("excludeMCPServers"));
}

#[test]
fn gemini_cli_settings_are_gathered_as_gemini_cli_gathers_them() {
    let m = GeminiMachine::new();
    let user_file = m.home.join(".gemini/settings.json");
    let ws_file = m.project.join(".gemini/settings.json");
    m.write(
        &m.home.join(".gemini/trustedFolders.json"),
        serde_json::json!({ m.project.display().to_string(): "TRUST_FOLDER" }),
    );
    // Trusted: the same whole from either file.
    for file in [&ws_file, &user_file] {
        let c = m.read(file, &[]);
        assert_eq!(
            names(&c),
            ["alpha-srv", "beta-srv", "mine", "proj", "shared"],
            "{file:?}: {:?} {:?}",
            c.disabled,
            c.warnings
        );
        assert_eq!(command_of(&c, "mine"), "mine");
        assert_eq!(command_of(&c, "shared"), "ws-shared");
        assert!(reason(&c, "blocked").contains("mcp.excluded"));
        assert!(reason(&c, "gamma-srv").contains("extension gamma is disabled"));
        let mine = c.servers.iter().find(|s| s.name() == "mine").unwrap();
        // A bare $VAR that is set is put in; one that is not (and `$1`) stays as written.
        assert_eq!(
            env_of(mine),
            [
                ("AWK".to_string(), "$1 $UNSET_Y".to_string()),
                ("K".to_string(), "tx".to_string())
            ]
        );
        assert!(
            mine.origin
                .as_deref()
                .is_some_and(|o| o.starts_with("Gemini CLI user settings")),
            "{:?}",
            mine.origin
        );
        let alpha = c.servers.iter().find(|s| s.name() == "alpha-srv").unwrap();
        match &alpha.spec.transport {
            TransportSpec::Stdio { args, .. } => assert_eq!(
                *args,
                [
                    m.home
                        .join(".gemini/extensions/alpha/server.js")
                        .display()
                        .to_string(),
                    "--ws".to_string(),
                    m.project.display().to_string()
                ]
            ),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            env_of(alpha),
            [
                ("ALPHA_KEY".to_string(), "k123".to_string()),
                ("KEY".to_string(), "k123".to_string())
            ]
        );
        assert!(
            alpha
                .origin
                .as_deref()
                .unwrap()
                .starts_with("Gemini CLI extension alpha")
        );
        let beta = c.servers.iter().find(|s| s.name() == "beta-srv").unwrap();
        assert!(
            beta.origin
                .as_deref()
                .unwrap()
                .contains(&m.beta.display().to_string())
        );
        assert!(
            c.inputs
                .contains(&m.home.join(".gemini/trustedFolders.json"))
        );
        assert!(
            c.inputs
                .contains(&m.home.join(".gemini/extensions/extension-enablement.json"))
        );
    }

    // Not trusted: the project's settings are ignored, from either file, saying why; the
    // user's own "shared" runs.
    std::fs::remove_file(m.home.join(".gemini/trustedFolders.json")).unwrap();
    for file in [&ws_file, &user_file] {
        let c = m.read(file, &[]);
        assert_eq!(
            names(&c),
            ["alpha-srv", "beta-srv", "mine", "shared"],
            "{:?}",
            c.disabled
        );
        assert_eq!(command_of(&c, "shared"), "user-shared");
        let why = reason(&c, "proj");
        assert!(
            why.contains("until it trusts the folder") && why.contains("trustedFolders.json"),
            "{why}"
        );
    }
    // Trusted by the environment, or with folder trust turned off.
    let c = m.read(&ws_file, &[("GEMINI_CLI_TRUST_WORKSPACE", "true")]);
    assert!(names(&c).contains(&"proj"), "{:?}", c.disabled);
    let c = m.read(&ws_file, &[("GEMINI_CLI_TRUST_WORKSPACE", "false")]);
    assert!(!names(&c).contains(&"proj"));
    m.write(
        &m.home.join(".gemini/trustedFolders.json"),
        serde_json::json!({ m.project.display().to_string(): "TRUST_FOLDER",
            m.project.join(".gemini").display().to_string(): "DO_NOT_TRUST" }),
    );
    assert!(names(&m.read(&ws_file, &[])).contains(&"proj"));
    m.write(
        &m.home.join(".gemini/trustedFolders.json"),
        serde_json::json!({ m.home.parent().unwrap().display().to_string(): "TRUST_FOLDER",
            m.project.display().to_string(): "DO_NOT_TRUST" }),
    );
    assert!(reason(&m.read(&ws_file, &[]), "proj").contains("DO_NOT_TRUST"));

    // The system defaults come first and the system settings last: the user's "mine" replaces
    // the defaults', the system's "shared" replaces everyone's, and its `mcp.excluded` the
    // user's (lists are replaced, not joined, as Gemini CLI merges them: "blocked" runs).
    let etc = m.system().parent().unwrap().to_path_buf();
    m.write(
        &etc.join("system-defaults.json"),
        serde_json::json!({"mcpServers": {"base": {"command": "base"}, "mine": {"command": "default-mine"}}}),
    );
    m.write(
        &m.system(),
        serde_json::json!({"mcpServers": {"shared": {"command": "sys-shared"}},
            "mcp": {"excluded": ["proj"]}}),
    );
    let c = m.read(&ws_file, &[("GEMINI_CLI_TRUST_WORKSPACE", "true")]);
    assert_eq!(
        names(&c),
        ["alpha-srv", "base", "beta-srv", "blocked", "mine", "shared"],
        "{:?}",
        c.disabled
    );
    assert_eq!(command_of(&c, "mine"), "mine");
    assert_eq!(command_of(&c, "shared"), "sys-shared");
    assert!(reason(&c, "proj").contains("mcp.excluded"));
    assert!(c.inputs.contains(&m.system()));
    // Folder trust turned off by the system: the workspace counts without a rule.
    std::fs::remove_file(m.home.join(".gemini/trustedFolders.json")).unwrap();
    m.write(
        &m.system(),
        serde_json::json!({"security": {"folderTrust": {"enabled": false}}}),
    );
    assert_eq!(command_of(&m.read(&ws_file, &[]), "shared"), "ws-shared");
}

/// Gemini CLI loads one `.env` file at start (in a trusted folder: the nearest `.gemini/.env`
/// or `.env` from the project up, else the home's), and its variables fill `$VAR` and
/// `${VAR}` where the environment has none. A settings file that names no servers itself is
/// still Gemini CLI's config.
#[test]
fn gemini_cli_reads_its_env_file_and_settings_without_servers() {
    let m = GeminiMachine::new();
    let user_file = m.home.join(".gemini/settings.json");
    m.write(&user_file, serde_json::json!({"theme": "Dark"}));
    m.write(
        &m.project.join(".gemini/settings.json"),
        serde_json::json!({"mcpServers": {"proj": {"command": "proj",
            "env": {"Z": "$TOKEN_Z", "Y": "${TOKEN_Z}"}}}}),
    );
    std::fs::write(m.home.join(".gemini/.env"), "TOKEN_Z=z1\n").unwrap();
    let trusted = [("GEMINI_CLI_TRUST_WORKSPACE", "true")];
    let c = m.read(&user_file, &trusted);
    // (The extension's "mine" runs now: no settings file names a "mine" of its own.)
    assert_eq!(
        names(&c),
        ["alpha-srv", "beta-srv", "mine", "proj"],
        "{:?} {:?}",
        c.disabled,
        c.warnings
    );
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    let env_of_proj = |c: &Config| env_of(c.servers.iter().find(|s| s.name() == "proj").unwrap());
    assert_eq!(
        env_of_proj(&c),
        [
            ("Y".to_string(), "z1".to_string()),
            ("Z".to_string(), "z1".to_string())
        ]
    );
    assert!(c.inputs.contains(&m.home.join(".gemini/.env")));
    // A `.env` nearer the project is the one loaded; the environment still wins over it.
    std::fs::write(m.project.join(".env"), "TOKEN_Z=near\n").unwrap();
    let c = m.read(&user_file, &trusted);
    assert_eq!(env_of_proj(&c)[0].1, "near");
    let c = m.read(&user_file, &[trusted[0], ("TOKEN_Z", "from-env")]);
    assert_eq!(env_of_proj(&c)[0].1, "from-env");
    // Untrusted, no `.env` is loaded: a bare `$TOKEN_Z` stays as written, `${TOKEN_Z}` is unset.
    m.write(
        &user_file,
        serde_json::json!({"mcpServers": {
            "bare": {"command": "u", "env": {"Z": "$TOKEN_Z"}},
            "braced": {"command": "u", "env": {"Z": "${TOKEN_Z}"}}
        }}),
    );
    let c = m.read(&user_file, &[]);
    let bare = c.servers.iter().find(|s| s.name() == "bare").unwrap();
    assert_eq!(env_of(bare), [("Z".to_string(), "$TOKEN_Z".to_string())]);
    assert!(reason(&c, "braced").contains("TOKEN_Z"));
    // Nothing anywhere: the file is no config.
    std::fs::remove_dir_all(m.home.join(".gemini/extensions")).unwrap();
    std::fs::remove_file(m.project.join(".gemini/settings.json")).unwrap();
    m.write(&user_file, serde_json::json!({"theme": "Dark"}));
    let e = m.try_read(&user_file, &[]).unwrap_err();
    assert!(e.to_string().contains("name no MCP servers"), "{e}");
}

/// `GEMINI_CLI_HOME` moves Gemini CLI's `.gemini` folder (settings, trusted folders, extensions,
/// policies) away from the home, as Gemini CLI reads it.
#[test]
fn gemini_clis_home_may_be_moved() {
    let m = GeminiMachine::new();
    m.write(
        &m.home.join(".gemini/trustedFolders.json"),
        serde_json::json!({ m.project.display().to_string(): "TRUST_FOLDER" }),
    );
    let home = m.home.display().to_string();
    let system = m.system().display().to_string();
    let env = move |name: &str| match name {
        "HOME" => Some("/nonexistent-home".to_string()),
        "GEMINI_CLI_HOME" => Some(home.clone()),
        "GEMINI_CLI_SYSTEM_SETTINGS_PATH" => Some(system.clone()),
        _ => None,
    };
    let file = m.project.join(".gemini/settings.json");
    let text = std::fs::read_to_string(&file).unwrap();
    let c = Config::parse_in(&file, &text, &env, Some(m.project.clone())).unwrap();
    assert_eq!(
        names(&c),
        ["alpha-srv", "beta-srv", "mine", "proj", "shared"],
        "{:?} {:?}",
        c.disabled,
        c.warnings
    );
}
