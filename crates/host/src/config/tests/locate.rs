//! Finding the config file: `Config::locate`, and a host's name resolved to its file
//! (`hosts::resolve`, `hosts::found`).

use super::*;

#[test]
fn locate_prefers_native_then_mcp_json() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(
        Config::locate(None, dir.path()).filter(|p| p.starts_with(dir.path())),
        None
    );
    std::fs::write(dir.path().join(".mcp.json"), "{\"mcpServers\": {}}").unwrap();
    assert_eq!(
        Config::locate(None, dir.path()),
        Some(dir.path().join(".mcp.json"))
    );
    std::fs::write(dir.path().join("switchboard.toml"), "").unwrap();
    assert_eq!(
        Config::locate(None, dir.path()),
        Some(dir.path().join("switchboard.toml"))
    );
    let explicit = Path::new("/x/y.toml");
    assert_eq!(
        Config::locate(Some(explicit), dir.path()).as_deref(),
        Some(explicit)
    );
}

#[test]
fn a_hosts_name_finds_its_file_project_first_and_found_lists_each_file_once() {
    let dir = tempfile::tempdir().unwrap();
    let (home, config, cwd) = (
        dir.path().join("home"),
        dir.path().join("home/.config"),
        dir.path().join("work"),
    );
    let folders = hosts::Folders {
        home: &home,
        config: &config,
        cwd: &cwd,
        codex_home: None,
        gemini_home: None,
        librechat_config: None,
    };
    // Nothing there: the first place, so the read error says where it looked.
    assert_eq!(
        hosts::resolve("Cursor", &folders),
        Some(cwd.join(".cursor/mcp.json"))
    );
    assert_eq!(hosts::resolve("no-such-host", &folders), None);
    // mcphost: the working folder's file before the home's, `.mcphost` before `.mcp`.
    assert_eq!(
        hosts::resolve("mcphost", &folders),
        Some(cwd.join(".mcphost.json"))
    );
    // Codex's file is in `CODEX_HOME` when it is set.
    assert_eq!(
        hosts::resolve("codex", &folders),
        Some(home.join(".codex/config.toml"))
    );
    let elsewhere = dir.path().join("codex-home");
    let moved = hosts::Folders {
        codex_home: Some(&elsewhere),
        ..folders
    };
    assert_eq!(
        hosts::resolve("codex", &moved),
        Some(elsewhere.join("config.toml"))
    );
    // Gemini CLI's `.gemini` is in `GEMINI_CLI_HOME` when it is set (a project's file first).
    let gemini = dir.path().join("gemini-home");
    std::fs::create_dir_all(gemini.join(".gemini")).unwrap();
    std::fs::write(gemini.join(".gemini/settings.json"), "{}").unwrap();
    let moved = hosts::Folders {
        gemini_home: Some(&gemini),
        ..folders
    };
    assert_eq!(
        hosts::resolve("gemini", &moved),
        Some(gemini.join(".gemini/settings.json"))
    );
    // LibreChat's `CONFIG_PATH` (relative to its folder) before its folder's `librechat.yaml`.
    let named = Path::new("conf/mine.yaml");
    let moved = hosts::Folders {
        librechat_config: Some(named),
        ..folders
    };
    assert_eq!(
        hosts::resolve("librechat", &moved),
        Some(cwd.join("conf/mine.yaml"))
    );
    std::fs::create_dir_all(&cwd).unwrap();
    std::fs::write(cwd.join("librechat.yaml"), "mcpServers: {}").unwrap();
    assert_eq!(
        hosts::resolve("librechat", &moved),
        Some(cwd.join("librechat.yaml")),
        "a CONFIG_PATH file that is not there gives way"
    );
    std::fs::create_dir_all(cwd.join("conf")).unwrap();
    std::fs::write(cwd.join("conf/mine.yaml"), "mcpServers: {}").unwrap();
    assert_eq!(
        hosts::resolve("librechat", &moved),
        Some(cwd.join("conf/mine.yaml"))
    );
    std::fs::remove_file(cwd.join("librechat.yaml")).unwrap();
    std::fs::remove_file(cwd.join("conf/mine.yaml")).unwrap();
    for file in [
        home.join(".cursor/mcp.json"),
        config.join("Claude/claude_desktop_config.json"),
        // goose's two places are the same file on Linux: listed once.
        home.join(".config/goose/config.yaml"),
    ] {
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, "{}").unwrap();
    }
    assert_eq!(
        hosts::resolve("cursor", &folders),
        Some(home.join(".cursor/mcp.json"))
    );
    std::fs::create_dir_all(cwd.join(".cursor")).unwrap();
    std::fs::write(cwd.join(".cursor/mcp.json"), "{}").unwrap();
    assert_eq!(
        hosts::resolve("cursor", &folders),
        Some(cwd.join(".cursor/mcp.json"))
    );
    let found: Vec<(&str, PathBuf)> = hosts::found(&folders)
        .into_iter()
        .map(|f| (f.name, f.path))
        .collect();
    assert_eq!(
        found,
        [
            (
                "claude-desktop",
                config.join("Claude/claude_desktop_config.json")
            ),
            ("cursor", cwd.join(".cursor/mcp.json")),
            ("cursor", home.join(".cursor/mcp.json")),
            ("goose", home.join(".config/goose/config.yaml")),
        ]
    );
    assert!(hosts::names().any(|n| n == "opencode"));
}
