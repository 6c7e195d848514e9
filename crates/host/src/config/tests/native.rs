//! switchboard's own `switchboard.toml`: every field of a server entry, and its `instructions`.

use super::*;

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

/// `sampling` in an entry: off, or the model and limit for the server's requests; a wrong
/// value disables that server only, saying what the key takes.
#[test]
fn an_entry_says_what_its_sampling_requests_may_do() {
    let text = r#"
[servers.plain]
command = "a"

[servers.never]
command = "b"
sampling = false

[servers.cheap]
command = "c"
sampling = { model = "claude-haiku-4-5", max_tokens = 500 }

[servers.typo]
command = "d"
sampling = { modle = "x" }

[servers.zero]
command = "e"
sampling = { max_tokens = 0 }
"#;
    let c = parse("sb.toml", text).unwrap();
    let of = |name| server_of(&c, name).sampling.clone();
    assert_eq!(of("plain"), SamplingPolicy::default());
    assert!(of("plain").allowed);
    assert!(!of("never").allowed);
    assert_eq!(
        of("cheap"),
        SamplingPolicy {
            allowed: true,
            model: Some("claude-haiku-4-5".into()),
            max_tokens: Some(500),
        }
    );
    let r = reason(&c, "typo");
    assert!(r.contains("`model` (the model that answers)"), "{r}");
    let r = reason(&c, "zero");
    assert!(r.contains("sampling.max_tokens must be at least 1"), "{r}");
    assert_eq!(c.servers.len(), 3);
}
