//! Reading any host's file: bad entries, syntax and type errors pointed at by file, line and
//! column, warnings, secrets kept out of messages, and format quirks (BOM, JSONC).

use super::*;

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

#[test]
fn a_jsonc_file_that_opens_with_a_comment_is_read_as_json() {
    let text = "// my servers\n{\"mcpServers\": {\"a\": {\"command\": \"x\"}}}";
    let c = parse("mcp.jsonc", text).unwrap();
    assert_eq!(c.servers.len(), 1, "{:?}", c.disabled);
}
