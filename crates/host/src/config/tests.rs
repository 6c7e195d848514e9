//! Config tests: one `check` per case, each naming what it proves.

use std::path::{Path, PathBuf};

use switchboard_core::TransportSpec;

use super::*;

fn env(name: &str) -> Option<String> {
    match name {
        "GITHUB_TOKEN" => Some("ghp_secret_value".into()),
        "HOME" => Some("/home/u".into()),
        _ => None,
    }
}

fn parse(file: &str, text: &str) -> Result<Config, HostError> {
    Config::parse(Path::new(file), text, &env)
}

fn reason<'a>(c: &'a Config, server: &str) -> &'a str {
    &c.disabled
        .iter()
        .find(|d| d.name == server)
        .unwrap_or_else(|| panic!("{server} not disabled: {:?}", c.disabled))
        .reason
}

#[test]
fn native_toml_reads_every_field() {
    let c = parse(
        "/etc/sb/switchboard.toml",
        r#"
[settings]
instructions = false

[servers.tickets]
command = "./bin/tickets"
args = ["--data", "${HOME}/tickets.json"]
env = { TOKEN = "${GITHUB_TOKEN}" }
cwd = "work"
startup_timeout = 5
call_timeout = "1500ms"
alias = "t"
approve = "writes"
pin = "warn"
tools = { allow = ["search", "get_*"], deny = ["get_secret"] }

[servers.github]
url = "https://api.example.com/mcp"
headers = { Authorization = "Bearer ${GITHUB_TOKEN}" }

[profiles.support]
servers = ["tickets"]
"#,
    )
    .unwrap();
    assert!(c.disabled.is_empty(), "{:?}", c.disabled);
    assert!(!c.settings.instructions);
    let t = &c.servers[0];
    assert_eq!(t.name(), "tickets");
    assert_eq!(t.alias.as_deref(), Some("t"));
    assert_eq!(t.approve, Approve::Writes);
    assert_eq!(t.pin, PinMode::Warn);
    assert_eq!(t.spec.call_timeout.as_millis(), 1500);
    assert_eq!(t.spec.startup_timeout.as_secs(), 5);
    assert!(
        t.filter.permits("get_ticket")
            && !t.filter.permits("get_secret")
            && !t.filter.permits("close")
    );
    match &t.spec.transport {
        TransportSpec::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            assert_eq!(command, "/etc/sb/./bin/tickets");
            assert_eq!(args[1], "/home/u/tickets.json");
            assert_eq!(env[0].1.expose(), "ghp_secret_value");
            assert_eq!(cwd.as_deref(), Some(Path::new("/etc/sb/work")));
        }
        other => panic!("{other:?}"),
    }
    match &c.servers[1].spec.transport {
        TransportSpec::Http { url, headers, .. } => {
            assert_eq!(url, "https://api.example.com/mcp");
            assert_eq!(headers[0].1.expose(), "Bearer ghp_secret_value");
        }
        other => panic!("{other:?}"),
    }
    let p = c.with_profile("support").unwrap();
    assert_eq!(p.servers.len(), 1);
}

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
fn vscode_servers_key_reads_as_is() {
    let c = parse(
        ".vscode/mcp.json",
        r#"{"inputs": [], "servers": {"time": {"type": "stdio", "command": "uvx", "args": ["mcp-server-time"], "env": {"T": "${env:HOME}"}}}}"#,
    )
    .unwrap();
    assert_eq!(c.servers[0].name(), "time");
}

#[test]
fn a_bad_entry_disables_only_that_server_and_says_where() {
    let text = r#"
[servers.good]
command = "echo"

[servers.badurl]
url = "htp:/nope"

[servers.typo]
comand = "echo"

[servers.nothing]
args = ["x"]

[servers.unset]
command = "x"
env = { K = "${NOT_SET_ANYWHERE}" }
"#;
    let c = parse("sb.toml", text).unwrap();
    assert_eq!(c.servers.len(), 1);
    assert_eq!(c.servers[0].name(), "good");
    let r = reason(&c, "badurl");
    assert!(r.starts_with("sb.toml:6:1: server \"badurl\": "), "{r}");
    assert!(r.contains("scheme \"htp\""), "{r}");
    let r = reason(&c, "typo");
    assert!(
        r.starts_with(
            "sb.toml:9:1: server \"typo\": unknown key `comand`; did you mean `command`?"
        ),
        "{r}"
    );
    let r = reason(&c, "nothing");
    assert!(
        r.contains("sb.toml:11:1") && r.contains("neither `command`"),
        "{r}"
    );
    let r = reason(&c, "unset");
    assert!(
        r.contains("sb.toml:16:1") && r.contains("NOT_SET_ANYWHERE is not set"),
        "{r}"
    );
}

#[test]
fn malformed_url_in_json_points_at_the_url() {
    let text = "{\n  \"mcpServers\": {\n    \"ok\": {\"command\": \"echo\"},\n    \"bad\": {\n      \"url\": \"not a url\"\n    }\n  }\n}";
    let c = parse("x.json", text).unwrap();
    assert_eq!(c.servers.len(), 1);
    let r = reason(&c, "bad");
    assert!(
        r.starts_with("x.json:5:7: server \"bad\": malformed URL"),
        "{r}"
    );
}

#[test]
fn syntax_errors_name_file_line_and_column() {
    let e = parse("sb.toml", "[servers.a]\ncommand = \"echo\nargs = []\n").unwrap_err();
    let msg = e.to_string();
    assert!(msg.starts_with("sb.toml:2:"), "{msg}");
    let e = parse(
        "c.json",
        "{\n  \"mcpServers\": {\n    \"a\": {\"command\" \"x\"}\n  }\n}",
    )
    .unwrap_err();
    let msg = e.to_string();
    assert!(msg.starts_with("c.json:3:"), "{msg}");
}

#[test]
fn secrets_never_appear_in_errors_or_debug_output() {
    let c = parse(
        "sb.toml",
        r#"
[servers.gh]
url = "https://h.example/mcp"
headers = { Authorization = "Bearer ${GITHUB_TOKEN}" }
call_timeout = "soon"
"#,
    )
    .unwrap();
    let all = format!("{:?} {:?}", c.servers, c.disabled);
    assert!(!all.contains("ghp_secret_value"), "{all}");
    let c = parse(
        "sb.toml",
        "[servers.gh]\nurl = \"https://h.example/mcp\"\nheaders = { A = \"${GITHUB_TOKEN}\" }\n",
    )
    .unwrap();
    assert!(!format!("{:?}", c.servers).contains("ghp_secret_value"));
}

#[test]
fn legacy_sse_entries_are_http_and_unknown_types_are_explained() {
    let c = parse(
        "m.json",
        r#"{"mcpServers": {"old": {"type": "sse", "url": "http://x/sse"}, "weird": {"type": "grpc", "url": "http://x"}}}"#,
    )
    .unwrap();
    let old = c.servers.iter().find(|s| s.name() == "old").unwrap();
    assert!(
        matches!(&old.spec.transport, TransportSpec::Http { url, .. } if url == "http://x/sse"),
        "{:?}",
        old.spec.transport
    );
    assert!(old.legacy_sse, "type \"sse\" is remembered");
    assert!(reason(&c, "weird").contains("unknown type \"grpc\""));
    let ws = r#"{"mcpServers": {"events": {"type": "ws", "url": "wss://mcp.example.com/socket"}}}"#;
    let c = parse("/p/.mcp.json", ws).unwrap();
    assert!(reason(&c, "events").contains("a WebSocket server"));
}

#[test]
fn profiles_select_servers_and_tools() {
    let c = parse(
        "sb.toml",
        r#"
[servers.tickets]
command = "t"
[servers.docs]
command = "d"
[servers.deploy]
command = "x"
[profiles.support]
servers = ["tickets", "docs"]
tools = ["tickets/search", "tickets/get_*"]
[profiles.broken]
servers = ["nope"]
"#,
    )
    .unwrap();
    let p = c.clone().with_profile("support").unwrap();
    let names: Vec<&str> = p.servers.iter().map(|s| s.name()).collect();
    assert_eq!(names, ["tickets", "docs"]);
    assert!(p.servers[0].filter.permits("get_ticket"));
    assert!(!p.servers[0].filter.permits("close_ticket"));
    assert!(
        !p.servers[1].filter.permits("search"),
        "docs has no tool entry in the profile"
    );
    assert!(
        c.clone()
            .with_profile("broken")
            .unwrap_err()
            .to_string()
            .contains("\"nope\"")
    );
    assert!(
        c.with_profile("missing")
            .unwrap_err()
            .to_string()
            .contains("support")
    );
}

/// Each host's names for the tool lists and approval settings switchboard reads as its own are
/// kept for messages: the list that hides a tool and the setting that decides its approval.
#[test]
fn settings_are_named_as_each_hosts_file_writes_them() {
    let named = |c: &Config, server: &str, tool: &str| {
        let s = server_of(c, server);
        (
            s.filter.list_hiding(tool).to_string(),
            s.approve_setting(tool),
        )
    };
    // switchboard's own.
    let c = parse(
        "sb.toml",
        "[servers.a]\ncommand = \"a\"\ntools.deny = [\"x\"]\n[servers.b]\ncommand = \"b\"\napprove = \"writes\"\n[servers.b.tool.y]\napprove = \"never\"\n[profiles.p]\ntools = [\"a/y\"]\n",
    )
    .unwrap();
    assert_eq!(
        named(&c, "a", "x"),
        (
            "tools.deny".into(),
            "switchboard's default approve = \"destructive\"".into()
        )
    );
    assert_eq!(
        named(&c, "b", "x"),
        ("tools.allow".into(), "approve = \"writes\"".into())
    );
    assert_eq!(named(&c, "b", "y").1, "approve = \"never\" for this tool");
    let p = c.with_profile("p").unwrap();
    assert_eq!(named(&p, "a", "z").0, "profiles.p.tools");
    assert_eq!(named(&p, "a", "x").0, "tools.deny");
    // Cline's and Roo Code's lists, Gemini CLI's, Copilot's.
    let c = parse(
        "mcp.json",
        r#"{"mcpServers": {
            "cline": {"command": "c", "disabledTools": ["x"], "autoApprove": ["y"]},
            "roo": {"command": "r", "alwaysAllow": ["*"]},
            "gemini": {"command": "g", "includeTools": ["y"], "excludeTools": ["x"]},
            "copilot": {"type": "local", "command": "p", "tools": ["y"]}
        }}"#,
    )
    .unwrap();
    assert_eq!(
        named(&c, "cline", "x"),
        (
            "disabledTools".into(),
            "switchboard's default approve = \"destructive\"".into()
        )
    );
    assert_eq!(named(&c, "cline", "y").1, "autoApprove");
    assert_eq!(named(&c, "roo", "z").1, "alwaysAllow \"*\"");
    assert_eq!(named(&c, "gemini", "x").0, "excludeTools");
    assert_eq!(named(&c, "gemini", "z").0, "includeTools");
    assert_eq!(named(&c, "copilot", "z").0, "tools");
    // Codex's.
    let c = parse(
        "config.toml",
        "[mcp_servers.a]\ncommand = \"a\"\nenabled_tools = [\"y\"]\n[mcp_servers.a.tools.y]\napproval_mode = \"approve\"\n[mcp_servers.b]\ncommand = \"b\"\ndisabled_tools = [\"x\"]\ndefault_tools_approval_mode = \"prompt\"\n",
    )
    .unwrap();
    assert_eq!(
        named(&c, "a", "z"),
        (
            "enabled_tools".into(),
            "Codex's default approval mode (\"auto\")".into()
        )
    );
    assert_eq!(named(&c, "a", "y").1, "tools.y.approval_mode = \"approve\"");
    assert_eq!(
        named(&c, "b", "x"),
        (
            "disabled_tools".into(),
            "default_tools_approval_mode = \"prompt\"".into()
        )
    );
    // Crush's.
    let c = parse(
        "crush.json",
        r#"{"mcp": {"k": {"type": "stdio", "command": "k", "disabled_tools": ["x"]}}}"#,
    )
    .unwrap();
    assert_eq!(named(&c, "k", "x").0, "disabled_tools");
}

/// A default approval mode for the run (`--approve`) reaches only the servers whose entry sets
/// none: a native `approve`, Codex's modes (set or Codex's default), an `autoApprove` of `"*"`
/// and a tool's own setting all hold.
#[test]
fn a_run_wide_approval_mode_leaves_the_files_own_settings_alone() {
    let c = parse(
        "sb.toml",
        "[servers.plain]\ncommand = \"p\"\n[servers.plain.tool.t]\napprove = \"never\"\n[servers.set]\ncommand = \"s\"\napprove = \"writes\"\n",
    )
    .unwrap()
    .with_default_approve(Approve::Always, "--approve always");
    assert_eq!(server_of(&c, "plain").approve, Approve::Always);
    assert_eq!(
        server_of(&c, "plain").approve_setting("x"),
        "--approve always"
    );
    assert_eq!(
        server_of(&c, "plain").approve_setting("t"),
        "approve = \"never\" for this tool"
    );
    assert_eq!(server_of(&c, "set").approve, Approve::Writes);
    let c = parse(
        "mcp.json",
        r#"{"mcpServers": {"a": {"command": "a"}, "b": {"command": "b", "autoApprove": ["*"]}}}"#,
    )
    .unwrap()
    .with_default_approve(Approve::Always, "--approve always");
    assert_eq!(server_of(&c, "a").approve, Approve::Always);
    assert_eq!(server_of(&c, "b").approve, Approve::Never);
    let c = parse("config.toml", "[mcp_servers.x]\ncommand = \"x\"\n")
        .unwrap()
        .with_default_approve(Approve::Never, "--approve never");
    assert_eq!(server_of(&c, "x").approve, Approve::Unsafe);
    // The file's own default (`[settings] approve`), which a run's `--approve` overrides.
    let c = parse(
        "sb.toml",
        "[settings]\napprove = \"writes\"\n[servers.a]\ncommand = \"a\"\n[servers.b]\ncommand = \"b\"\napprove = \"never\"\n",
    )
    .unwrap();
    assert_eq!(server_of(&c, "a").approve, Approve::Writes);
    assert_eq!(
        server_of(&c, "a").approve_setting("t"),
        "[settings] approve = \"writes\""
    );
    assert_eq!(server_of(&c, "b").approve, Approve::Never);
    let c = c.with_default_approve(Approve::Always, "--approve always");
    assert_eq!(server_of(&c, "a").approve, Approve::Always);
    assert_eq!(server_of(&c, "b").approve, Approve::Never);
}

#[test]
fn unknown_top_level_keys_warn_with_a_suggestion() {
    let c = parse("sb.toml", "[server.a]\ncommand = \"x\"\n").unwrap();
    assert!(c.servers.is_empty());
    assert!(
        c.warnings[0].contains("did you mean `servers`"),
        "{:?}",
        c.warnings
    );
}

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
fn per_server_oauth_reads_from_toml_and_claude_codes_mcp_json() {
    let c = parse(
        "switchboard.toml",
        r#"
[servers.github]
url = "https://api.githubcopilot.com/mcp/"
[servers.github.oauth]
client_id = "Iv1.abc"
client_secret = "${GITHUB_TOKEN}"
scopes = ["repo", "read:org"]
redirect_port = 8765

[servers.plain]
url = "https://mcp.example.com/mcp"
"#,
    )
    .unwrap();
    let own = c.servers[0].oauth.clone().unwrap();
    assert_eq!(own.client_id.as_deref(), Some("Iv1.abc"));
    assert_eq!(
        own.client_secret.as_ref().map(|s| s.expose()),
        Some("ghp_secret_value")
    );
    assert_eq!(own.scopes, ["repo", "read:org"]);
    assert_eq!(own.redirect_port, Some(8765));
    assert!(c.servers[1].oauth.is_none());
    assert_eq!(c.server_oauth().keys().collect::<Vec<_>>(), ["github"]);
    // The secret is never printed.
    assert!(!format!("{c:?}").contains("ghp_secret_value"));
    // `.mcp.json` as Claude Code writes it: clientId, callbackPort, scopes as one string;
    // its authServerMetadataUrl is not used and not an error.
    let c = parse(
        ".mcp.json",
        r#"{"mcpServers": {"gh": {"type": "http", "url": "https://api.githubcopilot.com/mcp/",
            "oauth": {"clientId": "Iv1.xyz", "callbackPort": 8080, "scopes": "repo read:org",
                      "authServerMetadataUrl": "https://github.com/.well-known/openid-configuration"}}}}"#,
    )
    .unwrap();
    let own = c.servers[0].oauth.clone().unwrap();
    assert_eq!(own.client_id.as_deref(), Some("Iv1.xyz"));
    assert_eq!(own.redirect_port, Some(8080));
    assert_eq!(own.scopes, ["repo", "read:org"]);
    assert!(own.client_secret.is_none());
}

#[test]
fn bad_oauth_settings_disable_only_that_server() {
    let c = parse(
        "switchboard.toml",
        r#"
[servers.port]
url = "https://a.example/mcp"
oauth = { client_id = "x", redirect_port = 70000 }

[servers.secret_alone]
url = "https://b.example/mcp"
oauth = { client_secret = "s" }

[servers.stdio]
command = "x"
oauth = { client_id = "x" }

[servers.empty]
url = "https://c.example/mcp"
oauth = { client_id = "${NOT_SET_ANYWHERE:-}" }

[servers.scope]
url = "https://d.example/mcp"
oauth = { scopes = ["repo", "read org"] }

[servers.unset]
url = "https://e.example/mcp"
oauth = { client_id = "x", client_secret = "${NOT_SET_ANYWHERE}" }

[servers.good]
url = "https://f.example/mcp"
oauth = { scopes = "repo" }
"#,
    )
    .unwrap();
    let usable: Vec<&str> = c.servers.iter().map(|s| s.name()).collect();
    assert_eq!(usable, ["good"]);
    for (server, needle) in [
        ("port", "redirect_port 70000 is not a port"),
        ("secret_alone", "client_secret needs client_id"),
        ("stdio", "OAuth applies to HTTP servers"),
        ("empty", "client_id is empty"),
        ("scope", "\"read org\""),
        ("unset", "NOT_SET_ANYWHERE"),
    ] {
        let r = reason(&c, server);
        assert!(r.contains(needle), "{server}: {r}");
        assert!(r.contains("switchboard.toml:"), "{server} says where: {r}");
    }
}

#[test]
fn an_argument_holding_several_words_is_a_warning_that_shows_them_split() {
    let c = parse(
        "claude_desktop_config.json",
        r#"{"mcpServers": {
  "memory": {"command": "npx", "args": ["-y @modelcontextprotocol/server-memory"]},
  "fine": {"command": "node", "args": ["--title=a b", "-e", "console.log(1)", "my file.js"]}
}}"#,
    )
    .unwrap();
    // Both still run (the split may be what the user meant, or not); the joined one is named,
    // at its `args`, with the split written out.
    assert_eq!(c.servers.len(), 2);
    assert_eq!(c.warnings.len(), 1, "{:?}", c.warnings);
    let w = &c.warnings[0];
    assert!(w.starts_with("claude_desktop_config.json:2:"), "{w}");
    assert!(
        w.contains(r#"args[0] "-y @modelcontextprotocol/server-memory""#)
            && w.ends_with(r#"["-y", "@modelcontextprotocol/server-memory"]"#),
        "{w}"
    );
    let c = parse(
        "switchboard.toml",
        "[servers.fs]\ncommand = \"npx\"\nargs = [\"-y\", \"--prefix /opt/x\", \"srv\"]\n",
    )
    .unwrap();
    assert_eq!(c.warnings.len(), 1, "{:?}", c.warnings);
    assert!(
        c.warnings[0].starts_with("switchboard.toml:3:"),
        "{}",
        c.warnings[0]
    );
    assert!(c.warnings[0].contains("args[1]"), "{}", c.warnings[0]);
}

#[test]
fn a_literal_client_secret_is_a_warning_that_recommends_an_environment_variable() {
    let c = parse(
        "switchboard.toml",
        r#"
[servers.literal]
url = "https://a.example/mcp"
[servers.literal.oauth]
client_id = "Iv1.abc"
client_secret = "hunter2-literal"

[servers.from_env]
url = "https://b.example/mcp"
oauth = { client_id = "Iv1.def", client_secret = "${GITHUB_TOKEN}" }
"#,
    )
    .unwrap();
    // Both servers are usable; only the literal one is warned about, at its line.
    assert_eq!(c.servers.len(), 2);
    assert_eq!(c.warnings.len(), 1, "{:?}", c.warnings);
    let w = &c.warnings[0];
    assert!(w.starts_with("switchboard.toml:6:"), "{w}");
    assert!(w.contains("\"literal\"") && w.contains("${VAR}"), "{w}");
    assert!(!w.contains("hunter2"), "{w}");
    // The JSON form (as read from `.mcp.json`) is warned about the same way.
    let c = parse(
        ".mcp.json",
        r#"{"mcpServers": {"gh": {"type": "http", "url": "https://a.example/mcp",
            "oauth": {"clientId": "Iv1.xyz", "client_secret": "hunter2-literal"}}}}"#,
    )
    .unwrap();
    assert_eq!(c.servers.len(), 1);
    assert_eq!(c.warnings.len(), 1, "{:?}", c.warnings);
    assert!(
        c.warnings[0].starts_with(".mcp.json:2:"),
        "{}",
        c.warnings[0]
    );
    assert!(!c.warnings[0].contains("hunter2"));
}

#[test]
fn a_byte_order_mark_is_skipped_in_json_and_toml_and_by_the_format_guess() {
    for (file, text) in [
        (
            "claude_desktop_config.json",
            "\u{feff}{\"mcpServers\": {\"a\": {\"command\": \"x\"}}}",
        ),
        ("switchboard.toml", "\u{feff}[servers.a]\ncommand = \"x\"\n"),
        (
            "config",
            "\u{feff}{\"mcpServers\": {\"a\": {\"command\": \"x\"}}}",
        ),
    ] {
        let c = parse(file, text).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(c.servers.len(), 1, "{file}");
        assert_eq!(c.servers[0].name(), "a", "{file}");
    }
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
fn a_codex_config_toml_is_read_as_codex_writes_it() {
    let text = r#"model = "gpt-5"
approval_policy = "on-request"

[profiles.fast]
model = "gpt-5-mini"

[mcp_servers.docs]
command = "npx"
args = ["-y", "docs-server"]
env = { DOCS_TOKEN = "${GITHUB_TOKEN}" }
startup_timeout_sec = 20
tool_timeout_sec = 90.5
enabled_tools = ["search", "read_*"]
disabled_tools = ["read_secret"]
required = true

[mcp_servers.remote]
url = "https://r.example/mcp"
bearer_token_env_var = "GITHUB_TOKEN"
http_headers = { "X-Team" = "core" }
env_http_headers = { "X-Key" = "GITHUB_TOKEN" }
default_tools_approval_mode = "writes"

[mcp_servers.remote.tools.search]
approval_mode = "approve"

[mcp_servers.remote.tools.delete]
approval_mode = "prompt"

[mcp_servers.remote.tools.get]
approval_mode = "auto"

[mcp_servers.off]
command = "x"
enabled = false

[mcp_servers.broken]
command = "x"
tool_timeout_sec = "soon"

[mcp_servers.odd]
command = "x"
default_tools_approval_mode = "sometimes"
"#;
    let c = parse("config.toml", text).unwrap();
    assert!(
        reason(&c, "odd")
            .contains(r#""sometimes" is not one of "auto", "prompt", "writes", "approve""#),
        "{}",
        reason(&c, "odd")
    );
    let names: Vec<&str> = c.servers.iter().map(|s| s.name()).collect();
    assert_eq!(names, ["docs", "remote"], "{:?}", c.disabled);
    let docs = &c.servers[0];
    assert_eq!(
        docs.spec.startup_timeout,
        std::time::Duration::from_secs(20)
    );
    assert_eq!(
        docs.spec.call_timeout,
        std::time::Duration::from_secs_f64(90.5)
    );
    assert!(docs.filter.permits("read_file") && !docs.filter.permits("read_secret"));
    assert!(!docs.filter.permits("write_file"));
    match &docs.spec.transport {
        TransportSpec::Stdio {
            command, args, env, ..
        } => {
            assert_eq!(command, "npx");
            assert_eq!(args, &["-y", "docs-server"]);
            assert!(
                env.iter()
                    .any(|(k, v)| k == "DOCS_TOKEN" && v.expose() == "ghp_secret_value")
            );
        }
        other => panic!("{other:?}"),
    }
    match &c.servers[1].spec.transport {
        TransportSpec::Http { url, headers, .. } => {
            assert_eq!(url, "https://r.example/mcp");
            let h: std::collections::BTreeMap<&str, &str> = headers
                .iter()
                .map(|(k, v)| (k.as_str(), v.expose()))
                .collect();
            assert_eq!(h.get("Authorization"), Some(&"Bearer ghp_secret_value"));
            assert_eq!(h.get("X-Team"), Some(&"core"));
            assert_eq!(h.get("X-Key"), Some(&"ghp_secret_value"));
        }
        other => panic!("{other:?}"),
    }
    // Codex's approval modes: the server's default, then each tool's own.
    let remote = &c.servers[1];
    assert_eq!(remote.approve_for("search", None), Approve::Never);
    assert_eq!(remote.approve_for("delete", None), Approve::Always);
    // `auto`, Codex's default, asks for every tool not marked safe.
    assert_eq!(remote.approve_for("get", None), Approve::Unsafe);
    assert_eq!(remote.approve_for("list", None), Approve::Writes);
    assert_eq!(docs.approve_for("search", None), Approve::Unsafe);
    assert!(reason(&c, "off").contains("enabled = false"));
    let broken = reason(&c, "broken");
    assert!(
        broken.contains("config.toml:39:1:")
            && broken.contains("tool_timeout_sec must be a number"),
        "{broken}"
    );
    // Codex's own settings are neither servers nor profiles, and are not warned about;
    // the one key of an entry that switchboard does not use is named.
    assert!(c.profiles.is_empty());
    assert_eq!(c.warnings.len(), 1, "{:?}", c.warnings);
    assert!(
        c.warnings[0].contains("server \"docs\": Codex settings not used by switchboard: required")
    );
}

#[test]
fn zed_context_servers_are_read_in_both_of_its_forms() {
    let text = r#"{
  "theme": "One Dark",
  "context_servers": {
    "old": {"source": "custom", "command": {"path": "npx", "args": ["-y", "srv"], "env": {"A": "1"}}, "settings": {}},
    "new": {"source": "custom", "command": "uvx", "args": ["other"]},
  },
}"#;
    let c = parse("settings.json", text).unwrap();
    let got: Vec<(String, Vec<String>)> = c
        .servers
        .iter()
        .map(|s| match &s.spec.transport {
            TransportSpec::Stdio { command, args, .. } => (command.clone(), args.clone()),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        got,
        [
            ("npx".to_string(), vec!["-y".to_string(), "srv".to_string()]),
            ("uvx".to_string(), vec!["other".to_string()]),
        ]
    );
}

#[test]
fn a_goose_config_yaml_is_read_as_goose_writes_it() {
    let text = r#"GOOSE_PROVIDER: anthropic
GOOSE_MODEL: claude-sonnet-4
extensions:
  developer:
    bundled: true
    enabled: true
    name: developer
    timeout: 300
    type: builtin
  github:
    args:
    - -y
    - '@modelcontextprotocol/server-github'
    cmd: npx
    enabled: true
    env_keys:
    - GITHUB_TOKEN
    envs:
      LOG: debug
    name: GitHub
    timeout: 120
    type: stdio
    available_tools: [search_repositories]
  remote:
    enabled: true
    name: remote
    type: streamable_http
    uri: https://r.example/mcp
    headers:
      X-Team: core
  old:
    enabled: false
    cmd: x
    type: stdio
  legacy:
    enabled: true
    type: sse
    uri: https://s.example/sse
"#;
    let c = parse("config.yaml", text).unwrap();
    let names: Vec<&str> = c.servers.iter().map(|s| s.name()).collect();
    assert_eq!(names, ["github", "remote", "legacy"], "{:?}", c.disabled);
    let gh = &c.servers[0];
    assert_eq!(gh.spec.call_timeout, std::time::Duration::from_secs(120));
    assert!(gh.filter.permits("search_repositories") && !gh.filter.permits("create_issue"));
    match &gh.spec.transport {
        TransportSpec::Stdio {
            command, args, env, ..
        } => {
            assert_eq!(command, "npx");
            assert_eq!(args, &["-y", "@modelcontextprotocol/server-github"]);
            let env: Vec<(&str, &str)> =
                env.iter().map(|(k, v)| (k.as_str(), v.expose())).collect();
            assert!(
                env.contains(&("GITHUB_TOKEN", "ghp_secret_value")),
                "{env:?}"
            );
            assert!(env.contains(&("LOG", "debug")), "{env:?}");
        }
        other => panic!("{other:?}"),
    }
    match &c.servers[1].spec.transport {
        TransportSpec::Http { url, .. } => assert_eq!(url, "https://r.example/mcp"),
        other => panic!("{other:?}"),
    }
    assert!(reason(&c, "old").contains("enabled: false"));
    match &c.servers[2].spec.transport {
        TransportSpec::Http { url, .. } => assert_eq!(url, "https://s.example/sse"),
        other => panic!("{other:?}"),
    }
    assert_eq!(c.warnings.len(), 1, "{:?}", c.warnings);
    assert!(c.warnings[0].contains("\"developer\" is goose's own (builtin)"));
    // A YAML syntax error names its line.
    let e = parse("config.yaml", "extensions:\n  a: [\n").unwrap_err();
    assert!(e.to_string().starts_with("config.yaml:"), "{e}");
}

#[test]
fn a_timeout_too_small_to_be_any_time_is_refused() {
    let c = parse(
        "sb.toml",
        "[servers.a]\ncommand = \"x\"\nstartup_timeout = 1e-300\n\n[servers.b]\ncommand = \"x\"\ncall_timeout = \"1ms\"\n",
    )
    .unwrap();
    assert!(
        reason(&c, "a").contains("at least 1 ms"),
        "{}",
        reason(&c, "a")
    );
    assert_eq!(
        c.servers[0].spec.call_timeout,
        std::time::Duration::from_millis(1)
    );
}

#[test]
fn an_entry_error_points_at_the_entry_not_at_a_comment_naming_its_header() {
    // Before: the header was found by its first mention, the comment on line 2, so an error
    // in an entry without the bad key spelled out pointed there.
    let text = r#"
# [servers.notes] runs the notes server; [mcp_servers.notes] in Codex
[servers.first]
command = "echo"

[servers.notes]
args = ["x"]
"#;
    let c = parse("sb.toml", text).unwrap();
    let r = reason(&c, "notes");
    assert!(r.starts_with("sb.toml:6:1: server \"notes\": "), "{r}");
    let codex = r#"
model = "o4"
# [mcp_servers.notes] is the one that fails
[mcp_servers.first]
command = "echo"

[mcp_servers.notes]
args = ["x"]
"#;
    let c = parse("config.toml", codex).unwrap();
    let r = reason(&c, "notes");
    assert!(r.starts_with("config.toml:7:1: server \"notes\": "), "{r}");
    // File order follows the headers, not the comment: `notes` comes after `first`.
    let names: Vec<&str> = c.disabled.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["notes"]);
}

#[test]
fn a_value_of_the_wrong_type_is_named_and_pointed_at_on_its_own_line() {
    let c = parse(
        "sb.toml",
        "[servers.a]\nargs = [\"x\"]\ncommand = 3\n\n[servers.b]\ncommand = \"x\"\nenv = { A = 1 }\n",
    )
    .unwrap();
    assert_eq!(
        reason(&c, "a"),
        "sb.toml:3:1: server \"a\": `command`: invalid type: integer `3`, expected a string"
    );
    assert!(reason(&c, "b").starts_with("sb.toml:7:1: server \"b\": `env.A`: invalid type"));
    let c = parse(
        "m.json",
        "{\"mcpServers\": {\n  \"a\": {\n    \"args\": [\"x\"],\n    \"command\": 3\n  }\n}}\n",
    )
    .unwrap();
    assert!(
        reason(&c, "a").starts_with("m.json:4:5: server \"a\": `command`:"),
        "{}",
        reason(&c, "a")
    );
}

/// Each server's transport as (command or URL, args or header names), for the readers' tests.
fn transports(c: &Config) -> Vec<(String, Vec<String>)> {
    c.servers
        .iter()
        .map(|s| match &s.spec.transport {
            TransportSpec::Stdio { command, args, .. } => (command.clone(), args.clone()),
            TransportSpec::Http { url, headers, .. } => (
                url.clone(),
                headers.iter().map(|(k, _)| k.clone()).collect(),
            ),
        })
        .collect()
}

/// Each stdio server's (name, command), sorted by name.
fn commands_by_name(c: &Config) -> Vec<(String, String)> {
    let mut got: Vec<(String, String)> = c
        .servers
        .iter()
        .map(|s| match &s.spec.transport {
            TransportSpec::Stdio { command, .. } => (s.name().to_string(), command.clone()),
            other => panic!("{other:?}"),
        })
        .collect();
    got.sort();
    got
}

fn env_of(s: &ServerConfig) -> Vec<(String, String)> {
    match &s.spec.transport {
        TransportSpec::Stdio { env, .. } => env
            .iter()
            .map(|(k, v)| (k.clone(), v.expose().to_string()))
            .collect(),
        TransportSpec::Http { headers, .. } => headers
            .iter()
            .map(|(k, v)| (k.clone(), v.expose().to_string()))
            .collect(),
    }
}

/// mcphost's config, YAML or JSON, read as mcphost (through viper) reads it: names in lower
/// case, `environment` names in upper case, `${env://...}` its only variables, a builtin server
/// disabled saying why, and a bad entry pointed at while the others run.
#[test]
fn an_mcphost_config_is_read_as_mcphost_reads_it() {
    let text = r#"# mcphost
mcpServers:
  GitHub:
    type: "local"
    command: ["npx", "-y", "@modelcontextprotocol/server-github"]
    environment:
      github_personal_access_token: "${env://GITHUB_TOKEN}"
      literal: "${HOME}"
    allowedTools: ["get_issue"]
  search:
    type: remote
    url: "https://search.example/mcp"
    headers: ["Authorization: Bearer ${env://SEARCH_KEY:-anonymous}"]
  legacy:
    command: uvx
    args: ["mcp-server-time"]
  old-sse:
    url: "https://old.example/sse"
  fs:
    type: "builtin"
    name: "fs"
  broken:
    type: "local"
    command: ["x"]
    allowedTools: ["a"]
    excludedTools: ["b"]
model: "anthropic/claude-sonnet-4-5"
"#;
    let c = parse("/home/u/.mcphost.yml", text).unwrap();
    let names: Vec<&str> = c.servers.iter().map(|s| s.name()).collect();
    assert_eq!(
        names,
        ["github", "search", "legacy", "old-sse"],
        "{:?}",
        c.disabled
    );
    let github = server_of(&c, "github");
    assert_eq!(
        env_of(github),
        [
            (
                "GITHUB_PERSONAL_ACCESS_TOKEN".to_string(),
                "ghp_secret_value".to_string()
            ),
            ("LITERAL".to_string(), "${HOME}".to_string()),
        ]
    );
    assert!(github.filter.permits("get_issue") && !github.filter.permits("create_issue"));
    assert_eq!(github.filter.list_hiding("create_issue"), "allowedTools");
    assert_eq!(
        env_of(server_of(&c, "search")),
        [("Authorization".to_string(), "Bearer anonymous".to_string())]
    );
    assert!(server_of(&c, "old-sse").legacy_sse);
    assert_eq!(
        transports(&c)[2],
        ("uvx".to_string(), vec!["mcp-server-time".to_string()])
    );
    assert!(
        reason(&c, "fs").contains("runs inside mcphost"),
        "{:?}",
        c.disabled
    );
    let broken = reason(&c, "broken");
    assert!(
        broken.starts_with("/home/u/.mcphost.yml:22:3: server \"broken\"")
            && broken.contains("mutually exclusive"),
        "{broken}"
    );
    // The JSON form, by its name or by entries only mcphost writes.
    let json =
        r#"{"mcpServers": {"Time": {"type": "local", "command": ["uvx", "mcp-server-time"]}}}"#;
    for file in ["/home/u/.mcphost.json", "/home/u/servers.json"] {
        let c = parse(file, json).unwrap();
        assert_eq!(
            transports(&c),
            [("uvx".to_string(), vec!["mcp-server-time".to_string()])],
            "{file}"
        );
        assert_eq!(c.servers[0].name(), "time");
    }
    // A `command` list alone does not make another host's file mcphost's (regression: the
    // names were lower-cased; found by config_hostile's property test).
    let c = parse(
        "/home/u/mcp.json",
        r#"{"mcpServers": {"A": "x", "a": {"command": []}}}"#,
    )
    .unwrap();
    let mut names: Vec<&str> = c.server_names().collect();
    names.sort();
    assert_eq!(names, ["A", "a"], "{:?}", c.disabled);
    // Two names viper reads as one.
    let c = parse(
        "/home/u/.mcphost.yml",
        "mcpServers:\n  a:\n    command: [x]\n  A:\n    command: [y]\n",
    )
    .unwrap();
    assert_eq!(c.servers.len(), 1);
    assert!(reason(&c, "a").contains("lower case"), "{:?}", c.disabled);
    // mcphost's starting file, no servers yet.
    let c = parse("/home/u/.mcphost.yml", "mcpServers:\n# model: x\n").unwrap();
    assert!(c.servers.is_empty() && c.disabled.is_empty());
}

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
    // Without includeMcpJson, only the agent's own servers.
    let own_only = text.replace("\"includeMcpJson\": true", "\"includeMcpJson\": false");
    let c = Config::parse_in(&agent, &own_only, &env, Some(project.clone())).unwrap();
    assert_eq!(
        commands_by_name(&c),
        [("git".to_string(), "git-mcp".to_string())]
    );
}

/// LibreChat's `librechat.yaml`: names as written, its transports and millisecond timeouts, a
/// per-user `{{NAME}}` read from the environment (a server whose variable is unset says which to
/// set), WebSocket refused with the reason, the rest of the file LibreChat's own.
#[test]
fn a_librechat_yaml_is_read_as_librechat_writes_it() {
    let text = r#"version: 1.2.1
cache: true
endpoints:
  custom: []
mcpServers:
  GitHub:
    type: stdio
    command: npx
    args: ["-y", "@modelcontextprotocol/server-github"]
    env:
      GITHUB_PERSONAL_ACCESS_TOKEN: "${GITHUB_TOKEN}"
    timeout: 60000
    serverInstructions: true
  everything:
    url: http://localhost:3001/sse
  sheets:
    type: sse
    url: https://mcp.composio.dev/googlesheets/x
    headers:
      X-User-ID: "{{LIBRECHAT_USER_ID}}"
  docs:
    type: streamable-http
    url: https://docs.example/api/
    headers:
      Authorization: "Bearer ${GITHUB_TOKEN}"
    initTimeout: 15000
  live:
    type: websocket
    url: ws://localhost:8080
"#;
    let c = parse("/srv/librechat/librechat.yaml", text).unwrap();
    let names: Vec<&str> = c.servers.iter().map(|s| s.name()).collect();
    assert_eq!(names, ["GitHub", "everything", "docs"], "{:?}", c.disabled);
    let github = server_of(&c, "GitHub");
    assert_eq!(
        env_of(github),
        [(
            "GITHUB_PERSONAL_ACCESS_TOKEN".to_string(),
            "ghp_secret_value".to_string()
        )]
    );
    assert_eq!(github.spec.call_timeout, std::time::Duration::from_secs(60));
    let docs = server_of(&c, "docs");
    assert!(!docs.legacy_sse);
    assert_eq!(
        docs.spec.startup_timeout,
        std::time::Duration::from_secs(15)
    );
    assert_eq!(
        env_of(docs),
        [(
            "Authorization".to_string(),
            "Bearer ghp_secret_value".to_string()
        )]
    );
    assert!(
        reason(&c, "sheets")
            .contains("reads the environment variable LIBRECHAT_USER_ID, which is not set"),
        "{:?}",
        c.disabled
    );
    assert!(reason(&c, "live").contains("WebSocket"), "{:?}", c.disabled);
    // As in LibreChat, only a server with `serverInstructions` has its instructions read.
    assert_eq!(github.instructions, ServerInstructions::Server);
    assert_eq!(docs.instructions, ServerInstructions::Off);
}

/// `instructions` in a server's entry: on (the default), off, or the text to use in place of
/// the server's; anything else disables that server, saying why.
#[test]
fn a_servers_entry_sets_its_instructions() {
    let text = r#"
[servers.own]
command = "a"

[servers.quiet]
command = "b"
instructions = false

[servers.told]
command = "c"
instructions = "Use the staging database."

[servers.blank]
command = "d"
instructions = "  "

[servers.bad]
command = "e"
instructions = 3
"#;
    let c = parse("sb.toml", text).unwrap();
    let of = |name| server_of(&c, name).instructions.clone();
    assert_eq!(of("own"), ServerInstructions::Server);
    assert_eq!(of("quiet"), ServerInstructions::Off);
    assert_eq!(
        of("told"),
        ServerInstructions::Text("Use the staging database.".into())
    );
    assert_eq!(of("blank"), ServerInstructions::Off);
    let r = reason(&c, "bad");
    assert!(r.starts_with("sb.toml:19:1: server \"bad\""), "{r}");
    assert!(r.contains("false (none) or the text"), "{r}");
    // Claude-style JSON takes the same key.
    let c = parse(
        ".mcp.json",
        r#"{"mcpServers": {"q": {"command": "x", "instructions": false}}}"#,
    )
    .unwrap();
    assert_eq!(server_of(&c, "q").instructions, ServerInstructions::Off);
}

/// mcp-proxy's `config.json`, read as mcp-proxy reads it: its tool filter (exact names, `allow`
/// or `block`), `options.disabled`, a `url` alone as the legacy SSE transport, and Go's
/// environment variables, empty when unset.
#[test]
fn an_mcp_proxy_config_is_read_as_mcp_proxy_reads_it() {
    let text = r#"{
  "mcpProxy": {"baseURL": "https://mcp.example.com", "addr": ":9090", "name": "MCP Proxy",
               "type": "streamable-http", "options": {"authTokens": ["t"]}},
  "mcpServers": {
    "github": {
      "command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"],
      "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "$GITHUB_TOKEN", "OTHER": "${NOT_SET}"},
      "options": {"toolFilter": {"mode": "block", "list": ["create_or_update_file"]}}
    },
    "amap": {"url": "https://mcp.amap.com/sse?key=x"},
    "docs": {"url": "https://docs.example/mcp", "transportType": "streamable-http",
             "options": {"toolFilter": {"mode": "allow", "list": ["search"]}}},
    "off": {"command": "x", "options": {"disabled": true}},
    "odd": {"command": "y", "options": {"toolFilter": {"mode": "deny", "list": ["a"]}}}
  }
}"#;
    let c = parse("/srv/mcp-proxy/config.json", text).unwrap();
    let names: Vec<&str> = c.servers.iter().map(|s| s.name()).collect();
    assert_eq!(names, ["github", "amap", "docs", "odd"], "{:?}", c.disabled);
    let github = server_of(&c, "github");
    assert_eq!(
        env_of(github),
        [
            (
                "GITHUB_PERSONAL_ACCESS_TOKEN".to_string(),
                "ghp_secret_value".to_string()
            ),
            ("OTHER".to_string(), String::new()),
        ]
    );
    assert!(!github.filter.permits("create_or_update_file") && github.filter.permits("get_issue"));
    assert_eq!(
        github.filter.list_hiding("create_or_update_file"),
        "options.toolFilter (block)"
    );
    assert!(server_of(&c, "amap").legacy_sse);
    let docs = server_of(&c, "docs");
    assert!(!docs.legacy_sse && docs.filter.permits("search") && !docs.filter.permits("fetch"));
    assert!(
        reason(&c, "off").contains("options.disabled"),
        "{:?}",
        c.disabled
    );
    assert!(
        c.warnings
            .iter()
            .any(|w| w.contains("\"odd\"") && w.contains("skips")),
        "{:?}",
        c.warnings
    );
}

#[test]
fn an_opencode_config_is_read_as_opencode_writes_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("token.txt"), "file-secret\n").unwrap();
    let text = r#"{
  // OpenCode 1: servers right under `mcp`.
  "$schema": "https://opencode.ai/config.json",
  "model": "anthropic/claude-sonnet-4-5",
  "mcp": {
    "github": {
      "type": "local",
      "command": ["npx", "-y", "@modelcontextprotocol/server-github", "${NOT_A_VARIABLE}"],
      "environment": {"GITHUB_PERSONAL_ACCESS_TOKEN": "{env:GITHUB_TOKEN}"},
      "timeout": 8000,
    },
    "sentry": {
      "type": "remote",
      "url": "https://mcp.sentry.dev/mcp",
      "headers": {"Authorization": "Bearer {file:token.txt}"},
      "oauth": false,
    },
    "linear": {
      "type": "remote",
      "url": "https://mcp.linear.app/mcp",
      "oauth": {"clientId": "abc", "clientSecret": "written-here", "scope": "read write"},
    },
    "off": {"type": "local", "command": ["x"], "enabled": false},
    "unset": {"type": "local", "command": ["x"], "environment": {"K": "{env:NOPE}"}},
    "empty": {"type": "local", "command": []},
  },
}"#;
    let path = dir.path().join("opencode.jsonc");
    let c = Config::parse(&path, text, &env).unwrap();
    assert_eq!(
        transports(&c),
        [
            (
                "npx".to_string(),
                vec![
                    "-y".to_string(),
                    "@modelcontextprotocol/server-github".to_string(),
                    // A `${` means nothing to OpenCode, so it stays as written.
                    "${NOT_A_VARIABLE}".to_string()
                ]
            ),
            (
                "https://mcp.sentry.dev/mcp".to_string(),
                vec!["Authorization".to_string()]
            ),
            ("https://mcp.linear.app/mcp".to_string(), vec![]),
        ],
        "{:?}",
        c.disabled
    );
    let github = &c.servers[0];
    assert_eq!(
        env_of(github),
        [(
            "GITHUB_PERSONAL_ACCESS_TOKEN".to_string(),
            "ghp_secret_value".to_string()
        )]
    );
    assert_eq!(
        github.spec.startup_timeout,
        std::time::Duration::from_secs(8)
    );
    assert_eq!(
        env_of(&c.servers[1]),
        [(
            "Authorization".to_string(),
            "Bearer file-secret".to_string()
        )]
    );
    let oauth = c.servers[2].oauth.as_ref().unwrap();
    assert_eq!(oauth.client_id.as_deref(), Some("abc"));
    assert_eq!(oauth.scopes, ["read", "write"]);
    assert_eq!(c.warnings.len(), 1, "{:?}", c.warnings);
    assert!(
        c.warnings[0].contains("\"linear\"") && c.warnings[0].contains("clientSecret"),
        "{:?}",
        c.warnings
    );
    assert!(!c.warnings[0].contains("written-here"));
    assert_eq!(reason(&c, "off"), "disabled in the config");
    assert!(reason(&c, "unset").contains("NOPE is not set"), "{c:?}");
    assert!(reason(&c, "empty").contains("empty list"), "{c:?}");
    // A `{file:...}` that cannot be read names the path, never any contents.
    let missing = r#"{"mcp": {"a": {"type": "remote", "url": "https://a.example/mcp", "headers": {"X": "{file:nowhere.txt}"}}}}"#;
    let c = Config::parse(&path, missing, &env).unwrap();
    assert!(
        reason(&c, "a").contains("{file:nowhere.txt}: cannot read"),
        "{c:?}"
    );
}

#[test]
fn opencode_2_servers_under_mcp_servers_are_read() {
    let text = r#"{
  "$schema": "https://opencode.ai/config.json",
  "mcp": {
    "servers": {
      "everything": {"type": "local", "command": ["npx", "-y", "srv"], "cwd": "sub"},
      "parked": {"type": "local", "command": ["npx"], "disabled": true}
    }
  }
}"#;
    let c = parse("/p/opencode.json", text).unwrap();
    assert_eq!(c.servers.len(), 1, "{:?}", c.disabled);
    match &c.servers[0].spec.transport {
        TransportSpec::Stdio { command, cwd, .. } => {
            assert_eq!(command, "npx");
            assert_eq!(cwd.as_deref(), Some(Path::new("/p/sub")));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(reason(&c, "parked"), "disabled in the config");
    // A server that happens to be named "servers" is still one server.
    let named = r#"{"mcp": {"servers": {"type": "local", "command": ["srv"]}}}"#;
    let c = parse("opencode.json", named).unwrap();
    assert_eq!(c.servers[0].name(), "servers");
}

#[test]
fn a_crush_config_is_read_as_crush_writes_it() {
    let text = r#"{
  "$schema": "https://charm.land/crush.json",
  "mcp": {
    "filesystem": {
      "type": "stdio",
      "command": "$HOME/bin/fs-server",
      "args": ["--root", "${HOME}/src", "cost: 5$"],
      "timeout": 120,
      "disabled_tools": ["write_file"],
      "env": {"TOKEN": "$GITHUB_TOKEN"}
    },
    "github": {
      "type": "http",
      "url": "https://api.githubcopilot.com/mcp/",
      "headers": {"Authorization": "Bearer $GITHUB_TOKEN"}
    },
    "stream": {"type": "sse", "url": "https://example.com/mcp/sse"},
    "shell": {"type": "http", "url": "https://x.example/mcp", "headers": {"API-Key": "$(cat /secret/key)"}},
    "off": {"type": "stdio", "command": "x", "disabled": true}
  }
}"#;
    let c = parse("crush.json", text).unwrap();
    assert_eq!(
        transports(&c),
        [
            (
                "/home/u/bin/fs-server".to_string(),
                vec![
                    "--root".to_string(),
                    "/home/u/src".to_string(),
                    "cost: 5$".to_string()
                ]
            ),
            (
                "https://api.githubcopilot.com/mcp/".to_string(),
                vec!["Authorization".to_string()]
            ),
            ("https://example.com/mcp/sse".to_string(), vec![]),
        ],
        "{:?}",
        c.disabled
    );
    let fs = &c.servers[0];
    assert_eq!(fs.spec.startup_timeout, std::time::Duration::from_secs(120));
    assert_eq!(fs.spec.call_timeout, std::time::Duration::from_secs(120));
    assert!(fs.filter.permits("read_file") && !fs.filter.permits("write_file"));
    assert_eq!(
        env_of(fs),
        [("TOKEN".to_string(), "ghp_secret_value".to_string())]
    );
    assert_eq!(
        env_of(&c.servers[1]),
        [(
            "Authorization".to_string(),
            "Bearer ghp_secret_value".to_string()
        )]
    );
    assert!(c.servers[2].legacy_sse);
    let shell = reason(&c, "shell");
    assert!(shell.contains("$(...)"), "{shell}");
    assert!(!shell.contains("/secret/key"), "{shell}");
    assert!(reason(&c, "off").contains("disabled"));
}

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
fn a_jsonc_file_that_opens_with_a_comment_is_read_as_json() {
    let text = "// my servers\n{\"mcpServers\": {\"a\": {\"command\": \"x\"}}}";
    let c = parse("mcp.jsonc", text).unwrap();
    assert_eq!(c.servers.len(), 1, "{:?}", c.disabled);
}

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

/// A machine with Claude Code's managed folder, a home and a project, for policy tests.
struct PolicyMachine {
    _dir: tempfile::TempDir,
    managed: PathBuf,
    home: PathBuf,
    project: PathBuf,
}

impl PolicyMachine {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let (managed, home, project) = (
            dir.path().join("etc-claude-code"),
            dir.path().join("home"),
            dir.path().join("proj"),
        );
        for d in [&managed, &home.join(".claude"), &project.join(".claude")] {
            std::fs::create_dir_all(d).unwrap();
        }
        PolicyMachine {
            _dir: dir,
            managed,
            home,
            project,
        }
    }

    fn write(&self, path: &Path, value: serde_json::Value) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, serde_json::to_string_pretty(&value).unwrap()).unwrap();
    }

    /// Claude Code's state file, holding `state`, read in the project on this machine.
    fn read_state(&self, state: &serde_json::Value) -> Config {
        let managed = self.managed.display().to_string();
        let env =
            move |name: &str| (name == "SWITCHBOARD_CLAUDE_MANAGED_DIR").then(|| managed.clone());
        Config::parse_in(
            &self.home.join(".claude.json"),
            &state.to_string(),
            &env,
            Some(self.project.clone()),
        )
        .unwrap()
    }

    /// The project's `.mcp.json` read as switchboard reads it on this machine.
    fn read(&self, file: &str, servers: serde_json::Value) -> Config {
        let text = serde_json::json!({ "mcpServers": servers }).to_string();
        let (managed, home) = (
            self.managed.display().to_string(),
            self.home.display().to_string(),
        );
        let env = move |name: &str| match name {
            "SWITCHBOARD_CLAUDE_MANAGED_DIR" => Some(managed.clone()),
            "HOME" => Some(home.clone()),
            "ORG_HOST" => Some("mcp.example.com".into()),
            _ => None,
        };
        Config::parse_in(&self.project.join(file), &text, &env, None).unwrap()
    }
}

fn names(c: &Config) -> Vec<&str> {
    let mut n: Vec<&str> = c.servers.iter().map(|s| s.name()).collect();
    n.sort();
    n
}

#[test]
fn claude_codes_denylist_blocks_by_url_command_or_name_from_any_settings_file() {
    let m = PolicyMachine::new();
    m.write(
        &m.managed.join("managed-settings.json"),
        serde_json::json!({"deniedMcpServers": [
            {"serverUrl": "https://*.untrusted.example.com/*"},
            {"serverCommand": ["npx", "-y", "unapproved-package"]},
            {"serverCommand": ["./bin/local-server", "--port", "1"]}
        ]}),
    );
    // A drop-in adds to the base file; a user's own settings can block one for themselves.
    m.write(
        &m.managed.join("managed-settings.d/50-team.json"),
        serde_json::json!({"deniedMcpServers": [{"serverName": "dangerous-server"}]}),
    );
    m.write(
        &m.home.join(".claude/settings.json"),
        serde_json::json!({"deniedMcpServers": [{"serverUrl": "https://Noisy.example.com"}]}),
    );
    let servers = serde_json::json!({
        "remote-bad": {"type": "http", "url": "https://api.untrusted.example.com/mcp"},
        "remote-ok": {"type": "http", "url": "https://mcp.example.com/mcp"},
        "npx-bad": {"command": "npx", "args": ["-y", "unapproved-package"]},
        "npx-flag": {"command": "npx", "args": ["-y", "unapproved-package", "--flag"]},
        "dangerous-server": {"command": "anything"},
        "noisy": {"type": "http", "url": "https://noisy.example.com/any/path"},
        "local": {"command": "./bin/local-server", "args": ["--port", "1"]}
    });
    let c = m.read(".mcp.json", servers.clone());
    // Commands match exactly: one more argument is another command. A relative command
    // matches as written, though switchboard runs it from the project's folder.
    assert_eq!(names(&c), ["npx-flag", "remote-ok"], "{:?}", c.disabled);
    assert!(reason(&c, "local").contains("./bin/local-server"));
    let r = reason(&c, "remote-bad");
    assert!(
        r.contains("deniedMcpServers entry {\"serverUrl\":\"https://*.untrusted.example.com/*\"}")
            && r.contains("managed-settings.json"),
        "{r}"
    );
    assert!(reason(&c, "dangerous-server").contains("50-team.json"));
    assert!(reason(&c, "noisy").contains(".claude/settings.json"));
    assert!(reason(&c, "npx-bad").contains("blocked by Claude Code's managed policy"));
    // Other hosts' files are not Claude Code's: its policy is not applied to them.
    let c = m.read("mcp.json", servers);
    assert_eq!(c.servers.len(), 7, "{:?}", c.disabled);
}

#[test]
fn claude_codes_allowlist_needs_the_strict_kind_of_entry_for_each_transport() {
    let m = PolicyMachine::new();
    m.write(
        &m.managed.join("managed-settings.json"),
        serde_json::json!({"allowedMcpServers": [
            {"serverName": "github"},
            {"serverCommand": ["npx", "-y", "approved-package"]},
            {"serverUrl": "https://${ORG_HOST}/*"},
            {"serverUrl": "https://${NOT_SET_ANYWHERE}/*"},
            {"serverCommand": "not a list"}
        ]}),
    );
    let servers = serde_json::json!({
        "local-tool": {"command": "npx", "args": ["-y", "approved-package"]},
        "other-tool": {"command": "node", "args": ["server.js"]},
        "github": {"command": "node", "args": ["github.js"]},
        "org": {"type": "http", "url": "https://mcp.example.com/api"},
        "elsewhere": {"type": "http", "url": "https://elsewhere.example.org/mcp"}
    });
    let c = m.read(".mcp.json", servers.clone());
    // A stdio server must match a command once the list has one; the name does not count.
    // A policy URL's ${VAR} is expanded; one that cannot be is left out, not read as "*".
    assert_eq!(names(&c), ["local-tool", "org"], "{:?}", c.disabled);
    let r = reason(&c, "github");
    assert!(
        r.contains("no serverCommand entry matching [\"node\",\"github.js\"]"),
        "{r}"
    );
    assert!(reason(&c, "elsewhere").contains("no serverUrl entry matching"));
    for bad in [
        "NOT_SET_ANYWHERE",
        "{\"serverCommand\":\"not a list\"} left out: expected",
    ] {
        assert!(
            c.warnings.iter().any(|w| w.contains(bad)),
            "{bad}: {:?}",
            c.warnings
        );
    }
    // A name-only list lets a server of the name through, whatever it runs.
    m.write(
        &m.managed.join("managed-settings.json"),
        serde_json::json!({"allowedMcpServers": [{"serverName": "github"}]}),
    );
    let c = m.read(".mcp.json", servers.clone());
    assert_eq!(names(&c), ["github"], "{:?}", c.disabled);
    // A user's own list broadens the managed one, unless the managed settings say it may not.
    m.write(
        &m.home.join(".claude/settings.json"),
        serde_json::json!({"allowedMcpServers": [{"serverName": "org"}]}),
    );
    assert_eq!(
        names(&m.read(".mcp.json", servers.clone())),
        ["github", "org"]
    );
    m.write(
        &m.managed.join("managed-settings.json"),
        serde_json::json!({"allowManagedMcpServersOnly": true, "allowedMcpServers": [{"serverName": "github"}]}),
    );
    assert_eq!(names(&m.read(".mcp.json", servers.clone())), ["github"]);
    // An empty list allows nothing; no list allows everything.
    std::fs::remove_file(m.home.join(".claude/settings.json")).unwrap();
    m.write(
        &m.managed.join("managed-settings.json"),
        serde_json::json!({"allowedMcpServers": []}),
    );
    let c = m.read(".mcp.json", servers.clone());
    assert!(c.servers.is_empty(), "{:?}", c.servers);
    assert!(
        reason(&c, "org").contains("is empty"),
        "{}",
        reason(&c, "org")
    );
    std::fs::remove_file(m.managed.join("managed-settings.json")).unwrap();
    assert_eq!(m.read(".mcp.json", servers).servers.len(), 5);
}

#[test]
fn claude_codes_managed_servers_are_provided_and_managed_mcp_json_takes_exclusive_control() {
    let m = PolicyMachine::new();
    m.write(
        &m.managed.join("managed-settings.json"),
        serde_json::json!({
            "allowedMcpServers": [{"serverCommand": ["approved"]}],
            "deniedMcpServers": [{"serverName": "blocked-managed"}],
            "managedMcpServers": {
                "search": {"type": "http", "url": "https://search.example.com/mcp"},
                "plain-http": {"type": "http", "url": "http://localhost:9/mcp"},
                "runs-a-program": {"type": "http", "url": "https://x.example.com", "command": "x"},
                "templated": {"type": "http", "url": "https://${ORG_HOST}/mcp"},
                "bad name": {"type": "http", "url": "https://y.example.com/mcp"}
            }
        }),
    );
    m.write(
        &m.home.join(".claude/settings.json"),
        serde_json::json!({"managedMcpServers": {"mine": {"type": "http", "url": "https://m.example.com"}}}),
    );
    let servers = serde_json::json!({
        "search": {"command": "approved"},
        "tool": {"command": "approved"}
    });
    let c = m.read(".mcp.json", servers.clone());
    // The provided server replaces the project's of its name and needs no allowlist entry;
    // each entry Claude Code would refuse is a warning naming why.
    assert_eq!(names(&c), ["search", "tool"], "{:?}", c.disabled);
    let search = c.servers.iter().find(|s| s.name() == "search").unwrap();
    assert!(
        matches!(&search.spec.transport, TransportSpec::Http { url, .. } if url == "https://search.example.com/mcp")
    );
    for (name, why) in [
        ("plain-http", "https://"),
        ("runs-a-program", "remote only"),
        ("templated", "no ${VAR}"),
        ("bad name", "letters, digits"),
        ("home/.claude/settings.json", "only from managed settings"),
    ] {
        assert!(
            c.warnings
                .iter()
                .any(|w| w.contains(name) && w.contains(why)),
            "{name}: {:?}",
            c.warnings
        );
    }

    // managed-mcp.json: only its servers (and the provided ones) run; the denylist still
    // applies to them, and one written with ${VAR} must pass the allowlist.
    m.write(
        &m.managed.join("managed-mcp.json"),
        serde_json::json!({"mcpServers": {
            "company": {"command": "/usr/local/bin/company-mcp"},
            "blocked-managed": {"command": "approved"},
            "per-user": {"command": "${HOME}/bin/tool"}
        }}),
    );
    let c = m.read(".mcp.json", servers.clone());
    assert_eq!(names(&c), ["company", "search"], "{:?}", c.disabled);
    for (name, from) in [
        ("company", "Claude Code managed-mcp.json ("),
        ("search", "Claude Code managedMcpServers ("),
    ] {
        let s = c.servers.iter().find(|s| s.name() == name).unwrap();
        assert!(
            s.origin.as_deref().is_some_and(|o| o.starts_with(from)),
            "{:?}",
            s.origin
        );
    }
    assert!(reason(&c, "tool").contains("exclusive control"));
    assert!(reason(&c, "blocked-managed").contains("deniedMcpServers"));
    assert!(reason(&c, "per-user").contains("allowedMcpServers"));
    // An empty map turns every server off but the provided ones.
    m.write(
        &m.managed.join("managed-mcp.json"),
        serde_json::json!({"mcpServers": {}}),
    );
    assert_eq!(names(&m.read(".mcp.json", servers.clone())), ["search"]);
    // A managed-mcp.json that cannot be read runs nothing of the user's, and says why.
    std::fs::write(m.managed.join("managed-mcp.json"), "{ not json").unwrap();
    let c = m.read(".mcp.json", servers);
    assert_eq!(names(&c), ["search"]);
    assert!(
        c.warnings.iter().any(|w| w.contains("until it is fixed")),
        "{:?}",
        c.warnings
    );
}

#[test]
fn claude_codes_policy_applies_to_its_state_file_as_a_whole() {
    let m = PolicyMachine::new();
    m.write(
        &m.managed.join("managed-settings.json"),
        // Managed settings approve the project's servers in any folder.
        serde_json::json!({
            "deniedMcpServers": [{"serverCommand": ["bad-server"]}],
            "enableAllProjectMcpServers": true
        }),
    );
    m.write(
        &m.project.join(".mcp.json"),
        serde_json::json!({"mcpServers": {"shared-bad": {"command": "bad-server"}, "shared-ok": {"command": "ok"}}}),
    );
    let c = m.read_state(&serde_json::json!({
        "mcpServers": {"user-bad": {"command": "bad-server"}, "user-ok": {"command": "ok"}},
        "projects": {m.project.display().to_string(): {}}
    }));
    assert_eq!(names(&c), ["shared-ok", "user-ok"], "{:?}", c.disabled);
    // Each blocked server is listed once, with the policy's reason.
    assert_eq!(c.disabled.len(), 2, "{:?}", c.disabled);
    assert!(reason(&c, "shared-bad").contains("deniedMcpServers"));
    assert!(reason(&c, "user-bad").contains("deniedMcpServers"));
    // What serve watches with the state file: the files read, and the ones whose creation
    // would change the result.
    for want in [
        m.project.join(".mcp.json"),
        m.project.join(".claude/settings.local.json"),
        m.home.join(".claude/settings.json"),
        m.managed.join("managed-settings.json"),
        m.managed.join("managed-settings.d"),
        m.managed.join("managed-mcp.json"),
    ] {
        assert!(c.inputs.contains(&want), "{want:?} not in {:?}", c.inputs);
    }
    assert_eq!(
        c.inputs.len(),
        c.inputs
            .iter()
            .collect::<std::collections::BTreeSet<_>>()
            .len(),
        "each once: {:?}",
        c.inputs
    );
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
fn a_projects_own_allowlist_counts_only_once_claude_code_trusts_the_folder() {
    let m = PolicyMachine::new();
    m.write(
        &m.managed.join("managed-settings.json"),
        serde_json::json!({"allowedMcpServers": [{"serverName": "a"}]}),
    );
    // A cloned repository's settings try to allow its own server, and to deny one.
    m.write(
        &m.project.join(".claude/settings.json"),
        serde_json::json!({
            "allowedMcpServers": [{"serverName": "b"}],
            "deniedMcpServers": [{"serverName": "a"}]
        }),
    );
    let servers = serde_json::json!({"a": {"command": "x"}, "b": {"command": "x"}});
    let c = m.read(".mcp.json", servers.clone());
    assert!(c.servers.is_empty(), "{:?}", c.servers);
    assert!(reason(&c, "a").contains("deniedMcpServers"));
    assert!(reason(&c, "b").contains("allowedMcpServers"));
    // Trusted in Claude Code's state file: its allowlist counts too.
    let folder = std::fs::canonicalize(&m.project).unwrap();
    m.write(
        &m.home.join(".claude.json"),
        serde_json::json!({"projects": {folder.display().to_string(): {"hasTrustDialogAccepted": true}}}),
    );
    assert_eq!(names(&m.read(".mcp.json", servers)), ["b"]);
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

/// A Gemini CLI machine: a home and a project, each with `.gemini/settings.json`, and the
/// user's extensions: "alpha" (settings in its `.env`), "beta" (linked from elsewhere) and
/// "gamma" (disabled for the project).
struct GeminiMachine {
    _dir: tempfile::TempDir,
    home: PathBuf,
    project: PathBuf,
    beta: PathBuf,
}

impl GeminiMachine {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let (home, project, beta) = (root.join("home"), root.join("proj"), root.join("beta-src"));
        let m = GeminiMachine {
            _dir: dir,
            home,
            project,
            beta,
        };
        let ext = m.home.join(".gemini/extensions");
        m.write(
            &m.home.join(".gemini/settings.json"),
            serde_json::json!({
                "mcpServers": {
                    "shared": {"command": "user-shared"},
                    "mine": {"command": "mine", "env": {"K": "$TOKEN_X", "AWK": "$1 $UNSET_Y"}},
                    "blocked": {"command": "b"}
                },
                "mcp": {"excluded": ["blocked"]}
            }),
        );
        m.write(
            &m.project.join(".gemini/settings.json"),
            serde_json::json!({"mcpServers": {
                "shared": {"command": "ws-shared"},
                "proj": {"command": "proj"}
            }}),
        );
        m.write(
            &ext.join("alpha/gemini-extension.json"),
            serde_json::json!({
                "name": "alpha", "version": "1.0.0",
                "settings": [{"name": "Key", "envVar": "ALPHA_KEY"}],
                "mcpServers": {
                    "alpha-srv": {"command": "node",
                        "args": ["${extensionPath}${/}server.js", "--ws", "${workspacePath}"],
                        "env": {"KEY": "${ALPHA_KEY}"}, "trust": true},
                    "mine": {"command": "ext-mine"}
                }
            }),
        );
        std::fs::write(ext.join("alpha/.env"), "ALPHA_KEY=k123\n").unwrap();
        m.write(
            &ext.join("beta/.gemini-extension-install.json"),
            serde_json::json!({"type": "link", "source": m.beta}),
        );
        m.write(
            &m.beta.join("gemini-extension.json"),
            serde_json::json!({"name": "beta", "version": "1",
                "mcpServers": {"beta-srv": {"httpUrl": "https://beta.example/mcp"}}}),
        );
        m.write(
            &ext.join("gamma/gemini-extension.json"),
            serde_json::json!({"name": "gamma", "version": "1",
                "mcpServers": {"gamma-srv": {"command": "g"}}}),
        );
        m.write(
            &ext.join("extension-enablement.json"),
            serde_json::json!({"gamma": {"overrides": [format!("!{}/*", m.project.display())]}}),
        );
        m
    }

    fn write(&self, path: &Path, value: serde_json::Value) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, serde_json::to_string_pretty(&value).unwrap()).unwrap();
    }

    /// Where the system settings are on this machine (`system-defaults.json` beside them).
    fn system(&self) -> PathBuf {
        self.home.parent().unwrap().join("etc/settings.json")
    }

    /// `file` read as switchboard reads it in the project, with `vars` set too.
    fn read(&self, file: &Path, vars: &[(&str, &str)]) -> Config {
        self.try_read(file, vars).unwrap()
    }

    fn try_read(&self, file: &Path, vars: &[(&str, &str)]) -> Result<Config, HostError> {
        let home = self.home.display().to_string();
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let system = self.system().display().to_string();
        let env = move |name: &str| match name {
            "HOME" => Some(home.clone()),
            "GEMINI_CLI_SYSTEM_SETTINGS_PATH" => Some(system.clone()),
            "TOKEN_X" => Some("tx".into()),
            _ => vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()),
        };
        let text = std::fs::read_to_string(file).unwrap();
        Config::parse_in(file, &text, &env, Some(self.project.clone()))
    }
}

fn command_of<'a>(c: &'a Config, name: &str) -> &'a str {
    match &c
        .servers
        .iter()
        .find(|s| s.name() == name)
        .unwrap()
        .spec
        .transport
    {
        TransportSpec::Stdio { command, .. } => command,
        other => panic!("{other:?}"),
    }
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
    };
    assert_eq!(
        hosts::resolve("copilot", &folders),
        Some(PathBuf::from("/h/.copilot/mcp-config.json"))
    );
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

#[test]
fn tool_settings_for_tools_a_ready_server_lacks_are_found_with_the_nearest_name() {
    use switchboard_core::{Catalog, Entry, ServerCatalog, Tool};
    let c = parse(
        "switchboard.toml",
        "[servers.t]\ncommand = \"x\"\n[servers.t.tool.clse_ticket]\napprove = \"always\"\n[servers.t.tool.zzz]\ndescription = \"?\"\n[servers.t.tool.search]\napprove = \"never\"\n[servers.down]\ncommand = \"y\"\n[servers.down.tool.anything]\napprove = \"always\"\n",
    )
    .unwrap();
    let mut listed = ServerCatalog::new("t");
    for name in ["search", "close_ticket"] {
        listed.tools.push(Entry::new(Tool::new(
            name,
            "d",
            serde_json::json!({"type": "object"}),
        )));
    }
    // `down` is not in the catalog (not ready): nothing can be said about its tools.
    let found = unknown_tool_settings(&Catalog::from_servers(vec![listed]), &c.servers);
    let found: Vec<(&str, &str, bool)> = found
        .iter()
        .map(|(s, t, m)| {
            (
                s.as_str(),
                t.as_str(),
                m.contains("did you mean \"close_ticket\""),
            )
        })
        .collect();
    assert_eq!(found, [("t", "clse_ticket", true), ("t", "zzz", false)]);
}

fn write_json(path: &Path, value: serde_json::Value) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, serde_json::to_string_pretty(&value).unwrap()).unwrap();
}

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

#[test]
fn a_tools_title_and_parameter_descriptions_from_the_config_replace_the_servers() {
    use serde_json::json;
    let c = parse(
        "switchboard.toml",
        r#"
[servers.s]
command = "x"

[servers.s.tool.find]
title = "Find things"
parameters = { q = "What to look for.", "filter.status" = "open or closed", "rows.id" = "Row id.", "a.b" = "dotted name", nope = "typo" }
"#,
    )
    .unwrap();
    let server = &c.servers[0];
    let def: switchboard_core::Tool = serde_json::from_value(json!({
        "name": "find",
        "description": "Finds.",
        "inputSchema": {"type": "object", "properties": {
            "q": {"type": "string", "description": "query"},
            "filter": {"type": "object", "properties": {"status": {"type": "string"}}},
            "rows": {"type": "array", "items": {"type": "object", "properties": {"id": {"type": "string"}}}},
            "a.b": {"type": "string"}
        }}
    }))
    .unwrap();
    let shown = server.presented(&def).unwrap();
    assert_eq!(shown.title.as_deref(), Some("Find things"));
    assert_eq!(shown.description.as_deref(), Some("Finds."));
    let s = &shown.input_schema;
    assert_eq!(s["properties"]["q"]["description"], "What to look for.");
    assert_eq!(
        s["properties"]["filter"]["properties"]["status"]["description"],
        "open or closed"
    );
    assert_eq!(
        s["properties"]["rows"]["items"]["properties"]["id"]["description"],
        "Row id."
    );
    assert_eq!(s["properties"]["a.b"]["description"], "dotted name");
    // A tool the config says nothing about is left as it is.
    let other = switchboard_core::Tool {
        name: "other".into(),
        ..def.clone()
    };
    assert!(server.presented(&other).is_none());

    let mut catalog = switchboard_core::Catalog::default();
    let mut sc = switchboard_core::ServerCatalog::new("s");
    sc.tools.push(switchboard_core::Entry::new(def));
    catalog.servers.insert("s".into(), sc);
    let unknown = unknown_tool_settings(&catalog, &c.servers);
    assert_eq!(unknown.len(), 1, "{unknown:?}");
    assert_eq!(unknown[0].1, "find.nope");
    assert!(
        unknown[0]
            .2
            .contains("parameters.nope names a parameter the tool does not take"),
        "{}",
        unknown[0].2
    );
}

/// Amp keeps its servers under `amp.mcpServers` in `~/.config/amp/settings.json` and a
/// project's `.amp/settings.json`; Qwen Code under `mcpServers` in `~/.qwen/settings.json` and
/// `.qwen/settings.json`. Each runs both files' servers, the project's winning on a name, and a
/// settings file that names no servers is only that.
#[test]
fn amp_and_qwen_code_settings_are_read_with_their_other_layer() {
    use serde_json::json;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let (home, project) = (root.join("home"), root.join("proj"));
    let home_text = home.display().to_string();
    let env = move |name: &str| (name == "HOME").then(|| home_text.clone());
    let read = |file: &Path| {
        let text = std::fs::read_to_string(file).unwrap();
        Config::parse_in(file, &text, &env, Some(project.clone())).unwrap()
    };
    let amp_user = home.join(".config/amp/settings.json");
    let amp_project = project.join(".amp/settings.json");
    write_json(
        &amp_user,
        json!({"amp.notifications.enabled": true,
               "amp.mcpServers": {"mine": {"command": "mine"}, "shared": {"command": "user"},
                                  "remote": {"url": "https://x.example/mcp", "headers": {"A": "b"}},
                                  "off": {"command": "x", "disabled": true}}}),
    );
    write_json(
        &amp_project,
        json!({"amp.mcpServers": {"shared": {"command": "proj"}}}),
    );
    if cfg!(not(windows)) {
        for file in [&amp_user, &amp_project] {
            let c = read(file);
            assert_eq!(names(&c), ["mine", "remote", "shared"], "{file:?}");
            assert_eq!(command_of(&c, "shared"), "proj");
            assert!(reason(&c, "off").contains("disabled"));
        }
    }
    let qwen_user = home.join(".qwen/settings.json");
    let qwen_project = project.join(".qwen/settings.json");
    write_json(&qwen_user, json!({"ui": {"theme": "Default"}}));
    write_json(
        &qwen_project,
        json!({"mcpServers": {"proj": {"httpUrl": "https://q.example/mcp"}}}),
    );
    for file in [&qwen_user, &qwen_project] {
        let c = read(file);
        assert_eq!(names(&c), ["proj"], "{file:?}: {:?}", c.warnings);
        assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    }
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

fn server_of<'a>(c: &'a Config, name: &str) -> &'a ServerConfig {
    c.servers
        .iter()
        .find(|s| s.name() == name)
        .unwrap_or_else(|| panic!("no server {name:?}: {:?}", c.disabled))
}

fn decision(c: &Config, server: &str, tool: &str) -> crate::policy::Decision {
    let tool = switchboard_core::Tool::new(tool, "d", serde_json::json!({"type": "object"}));
    crate::policy::decide(server_of(c, server), &tool)
}

/// What the policy decides for a call of `tool` with `arguments` (an object).
fn decision_for(
    c: &Config,
    server: &str,
    tool: &str,
    arguments: serde_json::Value,
) -> crate::policy::Decision {
    let tool = switchboard_core::Tool::new(tool, "d", serde_json::json!({"type": "object"}));
    let arguments = arguments.as_object().cloned().expect("an object");
    crate::policy::decide_call(server_of(c, server), &tool, Some(&arguments))
}

/// Claude Code's `permissions` rules that name MCP tools hold for the servers read with its
/// files: deny keeps the tool from models and refuses it, ask asks at every call, allow runs it
/// unasked; deny before ask before allow, whichever file they are in. A project's own files
/// cannot allow until the folder is trusted, a managed `allowManagedPermissionRulesOnly`
/// leaves only the managed rules, and rules Claude Code skips are named as skipped.
#[test]
fn claude_codes_permission_rules_for_mcp_tools_hold() {
    use crate::policy::Decision;
    let m = PolicyMachine::new();
    m.write(
        &m.home.join(".claude/settings.json"),
        serde_json::json!({"permissions": {
            "deny": ["mcp__github__delete_repo", "mcp__noisy", "Bash(rm *)", "mcp__docs_site__get_page"],
            "ask": ["mcp__github__create_*"],
            "allow": ["mcp__github__*", "mcp__*", "mcp__github__get_issue(x)", "Read"]
        }}),
    );
    m.write(
        &m.project.join(".claude/settings.json"),
        serde_json::json!({"permissions": {"allow": ["mcp__fs"]}}),
    );
    let servers = serde_json::json!({
        "github": {"command": "gh"},
        "noisy": {"command": "n"},
        "docs.site": {"command": "d"},
        "fs": {"command": "f"}
    });
    let c = m.read(".mcp.json", servers.clone());
    let gh = server_of(&c, "github");
    assert!(!gh.filter.permits("delete_repo"));
    assert!(gh.filter.permits("get_issue") && gh.filter.permits("create_issue"));
    assert!(!server_of(&c, "noisy").filter.permits("anything"));
    // Claude Code writes `docs.site` and `get.page` as `docs_site` and `get_page`.
    assert!(!server_of(&c, "docs.site").filter.permits("get.page"));
    assert!(server_of(&c, "docs.site").filter.permits("list"));
    match decision(&c, "github", "delete_repo") {
        // A model reads this: the rule, not the path of the user's file.
        Decision::Deny { reason } => assert!(
            reason.contains("Claude Code's permissions.deny \"mcp__github__delete_repo\"")
                && !reason.contains(".claude/settings.json"),
            "{reason}"
        ),
        other => panic!("{other:?}"),
    }
    match decision(&c, "github", "create_issue") {
        Decision::Ask { reason } => assert!(
            reason.contains("Claude Code's permissions.ask \"mcp__github__create_*\"")
                && !reason.contains(".claude/settings.json"),
            "{reason}"
        ),
        other => panic!("{other:?}"),
    }
    assert_eq!(decision(&c, "github", "get_issue"), Decision::Allow);
    assert_eq!(gh.approve_for("get_issue", None), Approve::Never);
    // The project is not trusted: its allow rule does not count.
    assert_eq!(
        server_of(&c, "fs").approve_for("write", None),
        Approve::Destructive
    );
    for skipped in ["\"mcp__*\"", "\"mcp__github__get_issue(x)\""] {
        assert!(
            c.warnings
                .iter()
                .any(|w| w.contains(skipped) && w.contains("not applied")),
            "{skipped}: {:?}",
            c.warnings
        );
    }
    assert!(
        !c.warnings.iter().any(|w| w.contains("Bash")),
        "{:?}",
        c.warnings
    );

    // Once Claude Code trusts the folder, its allow rule counts.
    let project = m.project.canonicalize().unwrap();
    m.write(
        &m.home.join(".claude.json"),
        serde_json::json!({"projects": {project.display().to_string(): {"hasTrustDialogAccepted": true}}}),
    );
    let c = m.read(".mcp.json", servers.clone());
    assert_eq!(
        server_of(&c, "fs").approve_for("write", None),
        Approve::Never
    );

    // Another host's file is not Claude Code's: no rule of its applies.
    let c = m.read("mcp.json", servers.clone());
    assert!(server_of(&c, "github").filter.permits("delete_repo"));

    // Managed rules only: the user's deny no longer counts, the managed one does.
    m.write(
        &m.managed.join("managed-settings.json"),
        serde_json::json!({"allowManagedPermissionRulesOnly": true,
                           "permissions": {"deny": ["mcp__fs__write"]}}),
    );
    let c = m.read(".mcp.json", servers);
    assert!(server_of(&c, "github").filter.permits("delete_repo"));
    assert!(!server_of(&c, "fs").filter.permits("write"));
    assert_eq!(
        server_of(&c, "fs").approve_for("read", None),
        Approve::Destructive
    );
}

/// Amp's `amp.mcpPermissions` decide which servers run (first matching rule; a command is its
/// program and arguments joined), `amp.tools.disable` and `amp.permissions` which tools reach
/// the model and which ask. The user's file and the project's are each one list, and the
/// strictest of their decisions holds.
#[test]
fn amps_permissions_decide_servers_and_tools() {
    use crate::policy::Decision;
    use serde_json::json;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let (home, project) = (root.join("home"), root.join("proj"));
    let home_text = home.display().to_string();
    let env = move |name: &str| (name == "HOME").then(|| home_text.clone());
    let read = |file: &Path| {
        let text = std::fs::read_to_string(file).unwrap();
        Config::parse_in(file, &text, &env, Some(project.clone())).unwrap()
    };
    let amp_user = home.join(".config/amp/settings.json");
    let amp_project = project.join(".amp/settings.json");
    write_json(
        &amp_user,
        json!({
            "amp.mcpPermissions": [
                {"matches": {"command": "npx @modelcontextprotocol/server-*"}, "action": "allow"},
                {"matches": {"command": "/^uvx mcp-server-(time|fetch)$/"}, "action": "allow"},
                {"matches": {"url": "https://trusted.example/mcp/*"}, "action": "allow"},
                {"matches": {"url": "*"}, "action": "reject"},
                {"matches": {"command": "*"}, "action": "reject"}
            ],
            "amp.tools.disable": ["mcp__memory__open_nodes"],
            "amp.permissions": [
                {"tool": "mcp__memory__delete_*", "action": "reject"},
                {"tool": "mcp__memory__*", "action": "allow"},
                {"tool": "mcp__*", "action": "delegate", "to": "my-helper"},
                {"tool": "mcp__*", "action": "reject", "context": "subagent"}
            ]
        }),
    );
    write_json(
        &amp_project,
        json!({
            "amp.mcpServers": {
                "memory": {"command": "npx", "args": ["@modelcontextprotocol/server-memory"]},
                "sneaky": {"command": "npx", "args": ["-y", "evil-server"]},
                "time": {"command": "uvx", "args": ["mcp-server-time"]},
                "trusted": {"url": "https://trusted.example/mcp/v1"},
                "elsewhere": {"url": "https://elsewhere.example/mcp"}
            },
            "amp.permissions": [
                {"tool": "mcp__memory__create_*", "action": "ask"},
                {"tool": "mcp__memory__add_*", "matches": {"entity": "secret*"}, "action": "reject",
                 "message": "Secrets stay out of memory."},
                {"tool": "mcp__memory__search_nodes",
                 "matches": {"limit": 100, "options": {"deep": true}, "tags.0": "/^x/"},
                 "action": "ask"},
                {"tool": "mcp__memory__read_*", "matches": {"query": "/(/"}, "action": "reject"},
                {"tool": "mcp__memory__*", "action": "allow"}
            ]
        }),
    );
    if cfg!(windows) {
        return;
    }
    for file in [&amp_user, &amp_project] {
        let c = read(file);
        assert_eq!(
            names(&c),
            ["memory", "time", "trusted"],
            "{file:?}: {:?}",
            c.disabled
        );
        let r = reason(&c, "sneaky");
        assert!(
            r.contains("amp.mcpPermissions[4]") && r.contains("amp/settings.json"),
            "{r}"
        );
        assert!(reason(&c, "elsewhere").contains("amp.mcpPermissions[3]"));
        let memory = server_of(&c, "memory");
        assert!(!memory.filter.permits("open_nodes"));
        assert!(!memory.filter.permits("delete_entities"));
        assert!(memory.filter.permits("read_graph") && memory.filter.permits("add_observations"));
        assert_eq!(decision(&c, "memory", "open_graph"), Decision::Allow);
        // The user's file allows it, the project's asks: the stricter holds.
        assert!(matches!(
            decision(&c, "memory", "create_entities"),
            Decision::Ask { .. }
        ));
        // A rule with conditions on the arguments: before they are known it asks; with them it
        // refuses the calls it matches (with its message) and lets the next rule decide others.
        match decision(&c, "memory", "add_observations") {
            Decision::Ask { reason } => assert!(reason.contains("arguments"), "{reason}"),
            other => panic!("{other:?}"),
        }
        match decision_for(
            &c,
            "memory",
            "add_observations",
            json!({"entity": "secret-plan"}),
        ) {
            Decision::Refuse { reason } => assert!(
                reason.contains("amp.permissions[1]")
                    && reason.ends_with("Secrets stay out of memory."),
                "{reason}"
            ),
            other => panic!("{other:?}"),
        }
        for args in [json!({"entity": "plan"}), json!({"entity": 3}), json!({})] {
            assert_eq!(
                decision_for(&c, "memory", "add_observations", args),
                Decision::Allow
            );
        }
        // Literal values by value, objects field by field, a dotted key into an array.
        let deep = json!({"limit": 100.0, "options": {"deep": true, "x": 1}, "tags": ["xy"]});
        assert!(matches!(
            decision_for(&c, "memory", "search_nodes", deep),
            Decision::Ask { .. }
        ));
        for args in [
            json!({"limit": 100, "options": {"deep": false}, "tags": ["xy"]}),
            json!({"limit": 100, "options": {"deep": true}, "tags": ["yx"]}),
            json!({"limit": "100", "options": {"deep": true}, "tags": ["xy"]}),
            json!({"options": {"deep": true}, "tags": ["xy"]}),
        ] {
            assert_eq!(
                decision_for(&c, "memory", "search_nodes", args.clone()),
                Decision::Allow,
                "{args}"
            );
        }
        // A reject whose conditions switchboard cannot read asks at every call instead, and
        // says why; the tool stays listed.
        assert!(
            c.warnings.iter().any(|w| w.contains("amp.permissions[3]")
                && w.contains("matches.query")
                && w.contains("asks instead")),
            "{:?}",
            c.warnings
        );
        assert!(memory.filter.permits("read_graph"));
        assert!(matches!(
            decision_for(&c, "memory", "read_graph", json!({"query": "x"})),
            Decision::Ask { .. }
        ));
        // The delegating rule asks; the sub-agents' rule is not the loop's.
        assert!(matches!(
            decision(&c, "time", "get_time"),
            Decision::Ask { .. }
        ));
        assert!(
            c.warnings
                .iter()
                .any(|w| w.contains("my-helper") && w.contains("ask instead")),
            "{:?}",
            c.warnings
        );
    }
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

/// OpenCode names an MCP tool `SERVER_TOOL`; its `tools` (`false` off, `true` on) and
/// `permission` (`allow`, `ask`, `deny`) entries over those names hold, the last matching one
/// winning, `permission` after `tools`.
#[test]
fn opencodes_tools_and_permission_settings_hold() {
    use crate::policy::Decision;
    let c = parse(
        "opencode.json",
        r#"{
          "$schema": "https://opencode.ai/config.json",
          "mcp": {
            "github": {"type": "remote", "url": "https://gh.example/mcp"},
            "my.fs": {"type": "local", "command": ["fs"]}
          },
          "tools": {"github_*": false, "github_get_*": true, "my_fs_read": false},
          "permission": {
            "edit": "ask",
            "bash": {"*": "ask", "git *": "allow"},
            "github_get_secret": "deny",
            "github_get_*": "allow",
            "github_get_issue": "ask",
            "github_list_*": {"*": "deny", "**": "ask"},
            "github_get_pr": {"/tmp/*": "deny"},
            "my_fs_write*": {"/tmp/*": "allow", "*": "deny"},
            "doom_loop": "ask"
          }
        }"#,
    )
    .unwrap();
    assert!(c.disabled.is_empty(), "{:?}", c.disabled);
    let gh = server_of(&c, "github");
    assert!(!gh.filter.permits("create_issue"));
    assert!(gh.filter.permits("get_issue") && gh.filter.permits("get_pr"));
    // `github_get_*` comes after `github_get_secret`: allowed after all, as in OpenCode.
    assert!(gh.filter.permits("get_secret"));
    assert_eq!(decision(&c, "github", "get_pr"), Decision::Allow);
    match decision(&c, "github", "get_issue") {
        Decision::Ask { reason } => assert!(reason.contains("\"github_get_issue\""), "{reason}"),
        other => panic!("{other:?}"),
    }
    match decision(&c, "github", "create_issue") {
        Decision::Deny { reason } => assert!(reason.contains("OpenCode's \"tools\""), "{reason}"),
        other => panic!("{other:?}"),
    }
    // OpenCode asks about an MCP call with the input `*`: of an object, the last entry whose
    // pattern matches `*` decides, and the others never apply.
    match decision(&c, "github", "list_prs") {
        Decision::Ask { reason } => assert!(reason.contains(r#"{"**": "ask"}"#), "{reason}"),
        other => panic!("{other:?}"),
    }
    // `my.fs` is written `my_fs` in OpenCode's names.
    let fs = server_of(&c, "my.fs");
    assert!(!fs.filter.permits("read") && !fs.filter.permits("write_file"));
    match decision(&c, "my.fs", "write_file") {
        Decision::Deny { reason } => assert!(reason.contains(r#"{"*": "deny"}"#), "{reason}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(fs.approve_for("list", None), Approve::Destructive);
    // Not OpenCode's file: nothing applies.
    let c = parse(
        "mcp.json",
        r#"{"mcpServers": {"github": {"command": "g"}}, "tools": {"github_*": false}}"#,
    )
    .unwrap();
    assert!(server_of(&c, "github").filter.permits("create_issue"));
}

/// Crush's `permissions.allowed_tools` names MCP tools `mcp_SERVER_TOOL`: those run without
/// asking; its built-in tools there are Crush's business.
#[test]
fn crushs_allowed_tools_run_its_mcp_tools_unasked() {
    let c = parse(
        "crush.json",
        r#"{"$schema": "https://charm.land/crush.json",
            "mcp": {"context7": {"type": "http", "url": "https://c.example/mcp",
                                 "disabled_tools": ["resolve"]}},
            "permissions": {"allowed_tools": ["view", "mcp_context7_get-library-doc", "mcp_context7_*"]}}"#,
    )
    .unwrap();
    let s = server_of(&c, "context7");
    assert_eq!(s.approve_for("get-library-doc", None), Approve::Never);
    // Names are exact: `*` is no wildcard there.
    assert_eq!(s.approve_for("other", None), Approve::Destructive);
    assert!(!s.filter.permits("resolve"));
}

/// Zed's `agent.tool_permissions` over `mcp:SERVER:TOOL`: a tool's own `default` (or the older
/// `default_mode`), then `agent.tool_permissions.default` for the rest; input patterns hold as
/// Zed matches them for an MCP tool, against an empty input.
#[test]
fn zeds_tool_permissions_hold_for_its_context_servers() {
    use crate::policy::Decision;
    let c = parse(
        "settings.json",
        r#"{
          "context_servers": {"gh.com": {"command": "g"}, "fs": {"command": "f"}},
          "agent": {"tool_permissions": {
            "default": "allow",
            "tools": {
              "mcp:gh.com:delete_repo": {"default": "deny"},
              "mcp:gh.com:create_issue": {"default_mode": "confirm"},
              "mcp:fs:write": {"always_deny": [{"pattern": "^/etc"}]},
              "mcp:fs:rm": {"default": "allow", "always_allow": [{"pattern": ".*"}],
                            "always_confirm": [{"pattern": "^$"}]},
              "mcp:fs:chmod": {"always_allow": [{"pattern": "("}]},
              "terminal": {"default": "confirm"}
            }
          }}
        }"#,
    )
    .unwrap();
    let gh = server_of(&c, "gh.com");
    assert!(!gh.filter.permits("delete_repo") && gh.filter.permits("create_issue"));
    assert!(matches!(
        decision(&c, "gh.com", "create_issue"),
        Decision::Ask { .. }
    ));
    assert_eq!(decision(&c, "gh.com", "get_issue"), Decision::Allow);
    // `^/etc` cannot match the empty input: it never applies, and the warning says so.
    assert_eq!(decision(&c, "fs", "write"), Decision::Allow);
    assert_eq!(decision(&c, "fs", "read"), Decision::Allow);
    // A confirm pattern that matches the empty input comes before an allow one.
    match decision(&c, "fs", "rm") {
        Decision::Ask { reason } => assert!(reason.contains("always_confirm"), "{reason}"),
        other => panic!("{other:?}"),
    }
    // A pattern that does not compile refuses every call, as in Zed.
    assert!(!server_of(&c, "fs").filter.permits("chmod"));
    assert_eq!(c.warnings.len(), 2, "{:?}", c.warnings);
    assert!(
        c.warnings[0].contains("(unclosed group)"),
        "{:?}",
        c.warnings
    );
    assert!(
        c.warnings[1].contains("\"^/etc\" never applies"),
        "{:?}",
        c.warnings
    );
    let older = parse(
        "settings.json",
        r#"{"context_servers": {"fs": {"command": "f"}}, "agent": {"always_allow_tool_actions": true}}"#,
    )
    .unwrap();
    assert_eq!(
        server_of(&older, "fs").approve_for("rm", None),
        Approve::Never
    );
}

/// goose's `permission.yaml` beside its config: in an approve mode its `user` lists hold for
/// goose's names of the tools (`EXTENSION__TOOL`, the extension's name in lower case), and
/// every other tool asks unless it is read-only; in `auto` mode only `never_allow` counts.
#[test]
fn gooses_tool_permissions_hold_in_its_approve_modes() {
    use crate::policy::Decision;
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.yaml");
    let yaml = |mode: &str| {
        format!(
            "GOOSE_MODE: {mode}\nextensions:\n  GitHub:\n    type: stdio\n    cmd: gh\n    enabled: true\n"
        )
    };
    std::fs::write(
        dir.path().join("permission.yaml"),
        "user:\n  always_allow:\n    - github__get_issue\n  ask_before:\n    - github__create_issue\n  never_allow:\n    - github__delete_repo\n    - other__x\nsmart_approve:\n  always_allow:\n    - github__create_issue\n",
    )
    .unwrap();
    let read = |mode: &str, env_mode: Option<&'static str>| {
        let env = move |name: &str| match name {
            "GOOSE_MODE" => env_mode.map(str::to_string),
            _ => None,
        };
        Config::parse(&config, &yaml(mode), &env).unwrap()
    };
    let c = read("approve", None);
    let gh = server_of(&c, "GitHub");
    assert!(!gh.filter.permits("delete_repo") && gh.filter.permits("create_issue"));
    assert_eq!(decision(&c, "GitHub", "get_issue"), Decision::Allow);
    match decision(&c, "GitHub", "create_issue") {
        Decision::Ask { reason } => assert!(reason.contains("ask_before"), "{reason}"),
        other => panic!("{other:?}"),
    }
    // Any other tool asks unless it is read-only, as goose's approve mode asks.
    assert_eq!(gh.approve_for("list_prs", None), Approve::Writes);
    // `auto` (from the environment here, over the config): only never_allow counts.
    let c = read("approve", Some("auto"));
    let gh = server_of(&c, "GitHub");
    assert!(!gh.filter.permits("delete_repo"));
    assert_eq!(gh.approve_for("create_issue", None), Approve::Destructive);
    assert_eq!(gh.approve_for("get_issue", None), Approve::Destructive);
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

/// A rule of another host that names one tool a ready server does not list holds for nothing;
/// it is named, with the nearest tool, so a typo in a deny rule does not pass unseen. A name
/// another server lists, and a wildcard rule, are left alone.
#[test]
fn another_hosts_rule_naming_no_listed_tool_is_named() {
    use switchboard_core::{Catalog, Entry, ServerCatalog, Tool};
    let c = parse(
        "opencode.json",
        r#"{"$schema": "https://opencode.ai/config.json",
            "mcp": {"gh": {"type": "remote", "url": "https://g.example/mcp"},
                    "gh_x": {"type": "remote", "url": "https://x.example/mcp"}},
            "permission": {"gh_delete_repos": "deny", "gh_x_read": "allow", "gh_get_*": "ask"}}"#,
    )
    .unwrap();
    let catalog = |server: &str, tools: &[&str]| {
        let mut listed = ServerCatalog::new(server);
        for name in tools {
            listed.tools.push(Entry::new(Tool::new(
                *name,
                "d",
                serde_json::json!({"type": "object"}),
            )));
        }
        listed
    };
    let found = unknown_tool_settings(
        &Catalog::from_servers(vec![
            catalog("gh", &["delete_repo", "get_issue"]),
            catalog("gh_x", &["read"]),
        ]),
        &c.servers,
    );
    assert_eq!(found.len(), 1, "{found:?}");
    let (server, tool, message) = &found[0];
    assert_eq!((server.as_str(), tool.as_str()), ("gh", "delete_repos"));
    assert!(
        message.contains("\"gh_delete_repos\"") && message.contains("did you mean \"delete_repo\""),
        "{message}"
    );
}

/// Gemini CLI's policy engine holds for the servers read with its settings: the user's policy
/// files (highest priority first; `mcpName`, `toolAnnotations`, `argsPattern` with its
/// `denyMessage`), an extension's (its allow left out), the settings' rules (`tools.exclude`
/// keeps a tool from the model by either name; a trusted server asks nothing), and a rule
/// Gemini CLI can never match is named.
#[test]
fn gemini_clis_policy_rules_hold_as_gemini_cli_decides_them() {
    use crate::policy::{Decision, decide_call};
    use serde_json::json;
    use switchboard_core::Tool;
    use switchboard_core::catalog::ToolAnnotations;
    let m = GeminiMachine::new();
    m.write(
        &m.home.join(".gemini/trustedFolders.json"),
        json!({ m.project.display().to_string(): "TRUST_FOLDER" }),
    );
    m.write(
        &m.project.join(".gemini/settings.json"),
        json!({"mcpServers": {
            "shared": {"command": "ws-shared", "trust": true},
            "proj": {"command": "proj"}
        }}),
    );
    let mut user: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(m.home.join(".gemini/settings.json")).unwrap(),
    )
    .unwrap();
    user["tools"] = json!({"exclude": ["drop_me"]});
    m.write(&m.home.join(".gemini/settings.json"), user);
    let policies = m.home.join(".gemini/policies");
    std::fs::create_dir_all(&policies).unwrap();
    std::fs::write(
        policies.join("mcp.toml"),
        r#"
[[rule]]
mcpName = "mine"
toolName = "delete_*"
decision = "deny"
priority = 100

[[rule]]
mcpName = "mine"
toolName = "write_file"
argsPattern = '"path":"/etc'
decision = "deny"
priority = 200
denyMessage = "Not in /etc."

[[rule]]
mcpName = "mine"
toolName = "*"
decision = "ask_user"
priority = 50

[[rule]]
mcpName = "proj"
toolName = "*"
toolAnnotations = { readOnlyHint = true }
decision = "allow"
priority = 300

[[rule]]
mcpName = "proj"
toolName = "*"
toolAnnotations = { destructiveHint = true }
decision = "deny"
priority = 250

[[rule]]
toolName = "mcp_shared_*"
mcpName = "shared"
decision = "ask_user"
priority = 900
"#,
    )
    .unwrap();
    // A file that breaks the schema is skipped whole, its deny with it.
    std::fs::write(
        policies.join("broken.toml"),
        "[[rule]]\ntoolName = \"*\"\ndecision = \"deny\"\npriority = 5000\n",
    )
    .unwrap();
    m.write(
        &m.home.join(".gemini/extensions/alpha/policies/x.json"),
        json!({}),
    );
    std::fs::write(
        m.home.join(".gemini/extensions/alpha/policies/p.toml"),
        "[[rule]]\nmcpName = \"alpha-srv\"\ntoolName = \"*\"\ndecision = \"allow\"\npriority = 9\n\n\
         [[rule]]\nmcpName = \"alpha-srv\"\ntoolName = \"wipe\"\ndecision = \"deny\"\npriority = 1\n",
    )
    .unwrap();
    let c = m.read(&m.project.join(".gemini/settings.json"), &[]);
    let warned = |s: &str| c.warnings.iter().any(|w| w.contains(s));
    assert!(warned("never applies"), "{:?}", c.warnings);
    assert!(
        warned("broken.toml: Gemini CLI skips this policy file"),
        "{:?}",
        c.warnings
    );
    assert!(warned("may not allow calls"), "{:?}", c.warnings);
    let tool = |name: &str, annotations: Option<ToolAnnotations>| {
        let mut t = Tool::new(name, "", json!({"type": "object"}));
        t.annotations = annotations;
        t
    };
    let args = |v: serde_json::Value| v.as_object().cloned().unwrap();
    let decide = |server: &str, t: &Tool, a: serde_json::Value| {
        decide_call(server_of(&c, server), t, Some(&args(a)))
    };
    let write = tool("write_file", None);
    match decide("mine", &write, json!({"path": "/etc/passwd"})) {
        Decision::Refuse { reason } => assert!(
            reason.contains("Gemini CLI's policy rule 2") && reason.contains("Not in /etc."),
            "{reason}"
        ),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        decide("mine", &write, json!({"path": "/tmp/a"})),
        Decision::Ask { .. }
    ));
    // `delete_*` with a server is `mcp_mine_delete_*`: no wildcard Gemini CLI reads.
    assert!(matches!(
        decide("mine", &tool("delete_x", None), json!({})),
        Decision::Ask { .. }
    ));
    let read_only = ToolAnnotations {
        read_only_hint: Some(true),
        destructive_hint: Some(true),
        ..Default::default()
    };
    let destructive = ToolAnnotations {
        destructive_hint: Some(true),
        ..Default::default()
    };
    assert_eq!(
        decide("proj", &tool("list", Some(read_only)), json!({})),
        Decision::Allow
    );
    // A destructive tool is kept from the model by the rule on its annotations.
    let wipe = tool("wipe", Some(destructive));
    assert!(matches!(
        decide("proj", &wipe, json!({})),
        Decision::Deny { .. }
    ));
    assert!(!server_of(&c, "proj").filter.permits_tool(&wipe));
    assert!(
        server_of(&c, "proj")
            .filter
            .permits_tool(&tool("plain", None))
    );
    // Trusted in a trusted folder: its ask_user rule asks nothing.
    assert_eq!(
        decide("shared", &tool("anything", None), json!({})),
        Decision::Allow
    );
    for server in ["mine", "shared"] {
        assert!(!server_of(&c, server).filter.permits("drop_me"), "{server}");
        assert!(server_of(&c, server).filter.permits("keep_me"), "{server}");
    }
    // The extension's deny holds; its allow does not.
    let alpha = server_of(&c, "alpha-srv");
    assert!(!alpha.filter.permits("wipe") && alpha.filter.permits("read"));
    assert!(matches!(
        decide("alpha-srv", &tool("wipe", None), json!({})),
        Decision::Deny { .. }
    ));
}

/// Codex's "full auto" (`approval_policy = "never"` with `sandbox_mode = "danger-full-access"`)
/// asks about no MCP call, whatever a server's or a tool's mode; `never` alone does not.
#[test]
fn codexs_full_auto_asks_about_no_call() {
    let servers = r#"
[mcp_servers.fs]
command = "x"
default_tools_approval_mode = "prompt"

[mcp_servers.fs.tools.rm]
approval_mode = "prompt"
"#;
    let full =
        format!("approval_policy = \"never\"\nsandbox_mode = \"danger-full-access\"\n{servers}");
    let c = parse("config.toml", &full).unwrap();
    assert_eq!(c.servers[0].approve_for("rm", None), Approve::Never);
    assert_eq!(c.servers[0].approve_for("ls", None), Approve::Never);
    let never = format!("approval_policy = \"never\"\n{servers}");
    let c = parse("config.toml", &never).unwrap();
    assert_eq!(c.servers[0].approve_for("rm", None), Approve::Always);
    // `never` alone: what would be asked about is refused, saying why.
    use crate::policy::{Decision, decide_call};
    let rm = switchboard_core::Tool::new("rm", "", serde_json::json!({"type": "object"}));
    match decide_call(&c.servers[0], &rm, None) {
        Decision::Refuse { reason } => {
            assert!(reason.contains("approval_policy = \"never\""), "{reason}")
        }
        other => panic!("{other:?}"),
    }
    let calm = "approval_policy = \"never\"\n[mcp_servers.fs]\ncommand = \"x\"\n";
    let c = parse("config.toml", calm).unwrap();
    let read = serde_json::from_value::<switchboard_core::Tool>(serde_json::json!({
        "name": "read", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}
    }))
    .unwrap();
    assert_eq!(decide_call(&c.servers[0], &read, None), Decision::Allow);
}

/// Codex's user file brings the trusted project's `.codex/config.toml` layers with it (from the
/// project's root down, merged key by key: a project may add a server or switch one off), and
/// an untrusted project's layer is left out, saying how to trust it.
#[test]
fn codexs_trusted_project_layers_join_its_user_config() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let (home, project) = (root.join("home"), root.join("proj"));
    let sub = project.join("pkg");
    std::fs::create_dir_all(home.join(".codex")).unwrap();
    std::fs::create_dir_all(project.join(".git")).unwrap();
    std::fs::write(project.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    for (folder, text) in [
        (
            &project,
            "[mcp_servers.mine]\nenabled = false\n\n[mcp_servers.proj]\ncommand = \"p\"\n",
        ),
        (
            &sub,
            "[mcp_servers.deep]\ncommand = \"d\"\n\n[mcp_servers.proj]\nargs = [\"--deep\"]\n",
        ),
    ] {
        std::fs::create_dir_all(folder.join(".codex")).unwrap();
        std::fs::write(folder.join(".codex/config.toml"), text).unwrap();
    }
    let user_file = home.join(".codex/config.toml");
    let write_user = |trusted: bool| {
        let trust = if trusted {
            format!(
                "[projects.{:?}]\ntrust_level = \"trusted\"\n",
                project.display().to_string()
            )
        } else {
            String::new()
        };
        let text = format!("[mcp_servers.mine]\ncommand = \"m\"\n\n{trust}");
        std::fs::write(&user_file, &text).unwrap();
        text
    };
    let home_var = home.display().to_string();
    let env = move |name: &str| (name == "HOME").then(|| home_var.clone());
    let text = write_user(true);
    let c = Config::parse_in(&user_file, &text, &env, Some(sub.clone())).unwrap();
    let mut got: Vec<&str> = c.servers.iter().map(|s| s.name()).collect();
    got.sort();
    assert_eq!(got, ["deep", "proj"], "{:?} {:?}", c.disabled, c.warnings);
    assert!(
        reason(&c, "mine").contains("enabled = false"),
        "{:?}",
        c.disabled
    );
    match &server_of(&c, "proj").spec.transport {
        TransportSpec::Stdio { command, args, .. } => {
            assert_eq!(
                (command.as_str(), args.as_slice()),
                ("p", &["--deep".to_string()][..])
            );
        }
        other => panic!("{other:?}"),
    }
    // Not trusted: only the user's own servers, and a warning naming the project's file.
    let text = write_user(false);
    let c = Config::parse_in(&user_file, &text, &env, Some(sub.clone())).unwrap();
    let got: Vec<&str> = c.servers.iter().map(|s| s.name()).collect();
    assert_eq!(got, ["mine"], "{:?}", c.disabled);
    assert!(
        c.warnings
            .iter()
            .any(|w| w.contains("only once the project is trusted")),
        "{:?}",
        c.warnings
    );
}

/// A linked git worktree is trusted by its main checkout's `[projects]` entry, as Codex
/// trusts it, once the worktree's and the main repository's git files point at each other; a
/// `.git` file that only claims to be a worktree borrows no trust. `project_root_markers`
/// moves the project's root.
#[test]
fn codex_trusts_a_linked_worktree_by_its_main_checkout() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let (home, main, wt) = (root.join("home"), root.join("main"), root.join("wt"));
    let git_dir = main.join(".git/worktrees/wt");
    std::fs::create_dir_all(home.join(".codex")).unwrap();
    std::fs::create_dir_all(&git_dir).unwrap();
    std::fs::write(main.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(git_dir.join("HEAD"), "ref: refs/heads/wt\n").unwrap();
    std::fs::write(git_dir.join("commondir"), "../..\n").unwrap();
    let write_links = |registered: &Path| {
        std::fs::write(
            git_dir.join("gitdir"),
            format!("{}\n", registered.join(".git").display()),
        )
        .unwrap();
    };
    std::fs::create_dir_all(wt.join(".codex")).unwrap();
    std::fs::write(wt.join(".git"), format!("gitdir: {}\n", git_dir.display())).unwrap();
    std::fs::write(
        wt.join(".codex/config.toml"),
        "[mcp_servers.wt]\ncommand = \"w\"\n",
    )
    .unwrap();
    let user_file = home.join(".codex/config.toml");
    let text = format!(
        "[mcp_servers.mine]\ncommand = \"m\"\n\n[projects.{:?}]\ntrust_level = \"trusted\"\n",
        main.display().to_string()
    );
    std::fs::write(&user_file, &text).unwrap();
    let home_var = home.display().to_string();
    let env = move |name: &str| (name == "HOME").then(|| home_var.clone());
    let names = |c: &Config| {
        let mut n: Vec<String> = c.servers.iter().map(|s| s.name().to_string()).collect();
        n.sort();
        n
    };
    write_links(&wt);
    let c = Config::parse_in(&user_file, &text, &env, Some(wt.clone())).unwrap();
    assert_eq!(names(&c), ["mine", "wt"], "{:?}", c.warnings);
    // The main repository registers another folder as this worktree: no trust borrowed.
    write_links(&root.join("elsewhere"));
    let c = Config::parse_in(&user_file, &text, &env, Some(wt.clone())).unwrap();
    assert_eq!(names(&c), ["mine"], "{:?}", c.warnings);
    assert!(
        c.warnings
            .iter()
            .any(|w| w.contains("only once the project is trusted")),
        "{:?}",
        c.warnings
    );
    // A marker of the user's choosing makes a folder inside the worktree the project's root,
    // whose own layer is read from there down (the worktree's folder above it is not).
    write_links(&wt);
    let pkg = wt.join("pkg");
    std::fs::create_dir_all(pkg.join(".codex")).unwrap();
    std::fs::write(pkg.join("MARK"), "").unwrap();
    std::fs::write(
        pkg.join(".codex/config.toml"),
        "[mcp_servers.pkg]\ncommand = \"p\"\n",
    )
    .unwrap();
    let marked = format!("project_root_markers = [\"MARK\"]\n{text}");
    std::fs::write(&user_file, &marked).unwrap();
    let c = Config::parse_in(&user_file, &marked, &env, Some(pkg.clone())).unwrap();
    assert_eq!(names(&c), ["mine", "pkg"], "{:?}", c.warnings);
}

/// A bad server entry written by one of Codex's other layers is pointed at in that layer's file
/// and line, not in the user's file (regression: it pointed at line 1 of the user's file).
#[test]
fn codexs_bad_entry_in_another_layer_names_that_layers_file() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let (home, project) = (root.join("home"), root.join("proj"));
    std::fs::create_dir_all(home.join(".codex")).unwrap();
    std::fs::create_dir_all(project.join(".git")).unwrap();
    std::fs::create_dir_all(project.join(".codex")).unwrap();
    let project_file = project.join(".codex/config.toml");
    std::fs::write(
        &project_file,
        "# the project's servers\n\n[mcp_servers.proj]\ncommand = \"p\"\nstartup_timeout_sec = \"soon\"\n\n[mcp_servers.mine]\nargs = \"--flag\"\n",
    )
    .unwrap();
    let user_file = home.join(".codex/config.toml");
    let text = format!(
        "[mcp_servers.mine]\ncommand = \"m\"\n\n[mcp_servers.fine]\ncommand = \"f\"\n\n[projects.{:?}]\ntrust_level = \"trusted\"\n",
        project.display().to_string()
    );
    std::fs::write(&user_file, &text).unwrap();
    let home_var = home.display().to_string();
    let env = move |name: &str| (name == "HOME").then(|| home_var.clone());
    let c = Config::parse_in(&user_file, &text, &env, Some(project.clone())).unwrap();
    let got: Vec<&str> = c.servers.iter().map(|s| s.name()).collect();
    assert_eq!(got, ["fine"], "{:?}", c.disabled);
    let at = |line: usize| format!("{}:{line}:", project_file.display());
    // The wrong setting, in the project's file.
    let proj = reason(&c, "proj");
    assert!(proj.contains(&at(5)), "{proj}");
    // A user's server whose setting the project got wrong: the project's entry.
    let mine = reason(&c, "mine");
    assert!(mine.contains(&at(7)), "{mine}");
    assert!(!mine.contains(&user_file.display().to_string()), "{mine}");
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

/// An administrator's Codex files, tried from another folder: the system config adds a server,
/// the managed config holds over the user's, and the requirements' allowlist disables every
/// server whose name and command it does not allow.
#[test]
fn codexs_administrator_files_hold_over_the_users() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let (home, system) = (root.join("home"), root.join("etc-codex"));
    std::fs::create_dir_all(home.join(".codex")).unwrap();
    std::fs::create_dir_all(&system).unwrap();
    std::fs::write(
        system.join("config.toml"),
        "[mcp_servers.sys]\ncommand = \"sys\"\n",
    )
    .unwrap();
    std::fs::write(
        system.join("managed_config.toml"),
        "[mcp_servers.docs]\ndefault_tools_approval_mode = \"prompt\"\n",
    )
    .unwrap();
    std::fs::write(
        system.join("requirements.toml"),
        "allowed_approval_policies = [\"on-request\"]\n\n[mcp_servers.docs.identity]\ncommand = \"docs-mcp\"\n",
    )
    .unwrap();
    let user_file = home.join(".codex/config.toml");
    let text = "approval_policy = \"never\"\n\n[mcp_servers.docs]\ncommand = \"docs-mcp\"\ndefault_tools_approval_mode = \"approve\"\n\n[mcp_servers.evil]\ncommand = \"evil\"\n";
    std::fs::write(&user_file, text).unwrap();
    let (h, s) = (home.display().to_string(), system.display().to_string());
    let env = move |name: &str| match name {
        "HOME" => Some(h.clone()),
        "SWITCHBOARD_CODEX_SYSTEM_DIR" => Some(s.clone()),
        _ => None,
    };
    let c = Config::parse_in(&user_file, text, &env, Some(root.clone())).unwrap();
    assert_eq!(names(&c), ["docs"], "{:?}", c.disabled);
    for refused in ["evil", "sys"] {
        assert!(
            reason(&c, refused).contains("not allowed by Codex's requirements"),
            "{refused}: {:?}",
            c.disabled
        );
    }
    // The managed config's mode holds; the user's `never` gives way to the required policy.
    assert_eq!(
        server_of(&c, "docs").approve_for("x", None),
        Approve::Always
    );
    assert!(server_of(&c, "docs").asks_refused.is_none());
    assert!(
        c.warnings
            .iter()
            .any(|w| w.contains("approval_policy = \"never\" is not allowed")),
        "{:?}",
        c.warnings
    );
}

/// Gemini CLI's system policies (tried from another folder) outrank the user's whatever their
/// own priorities, and `adminPolicyPaths` is ignored while they exist, as Gemini CLI does.
#[test]
fn gemini_clis_system_policies_outrank_the_users() {
    let m = GeminiMachine::new();
    m.write(
        &m.home.join(".gemini/trustedFolders.json"),
        serde_json::json!({ m.project.display().to_string(): "TRUST_FOLDER" }),
    );
    let mut user: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(m.home.join(".gemini/settings.json")).unwrap(),
    )
    .unwrap();
    user["adminPolicyPaths"] = serde_json::json!(["/nowhere/admin"]);
    m.write(&m.home.join(".gemini/settings.json"), user);
    let rule = |tool: &str, decision: &str, priority: u32| {
        format!(
            "[[rule]]\nmcpName = \"mine\"\ntoolName = \"{tool}\"\ndecision = \"{decision}\"\npriority = {priority}\n"
        )
    };
    std::fs::create_dir_all(m.home.join(".gemini/policies")).unwrap();
    std::fs::write(
        m.home.join(".gemini/policies/u.toml"),
        rule("*", "allow", 999),
    )
    .unwrap();
    let system = m.home.parent().unwrap().join("gemini-system-policies");
    std::fs::create_dir_all(&system).unwrap();
    std::fs::write(system.join("admin.toml"), rule("write", "deny", 0)).unwrap();
    let c = m.read(
        &m.project.join(".gemini/settings.json"),
        &[(
            "SWITCHBOARD_GEMINI_SYSTEM_POLICIES",
            &system.display().to_string(),
        )],
    );
    let mine = server_of(&c, "mine");
    assert!(!mine.filter.permits("write") && mine.filter.permits("read"));
    assert_eq!(mine.approve_for("read", None), Approve::Never);
    assert!(
        c.warnings
            .iter()
            .any(|w| w.contains("adminPolicyPaths are ignored")),
        "{:?}",
        c.warnings
    );
}
