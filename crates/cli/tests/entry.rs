//! `switchboard add | remove | disable | enable` on real files, read back by `servers` running a
//! real MCP server (the reference memory server from npm).

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;
use switchboard_test_support::output::{server_row as server, stdout_json as json};
use switchboard_test_support::peers::{node, peer};

/// Run the binary in `dir`, its user config directory `dir/xdg`.
fn run(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .args(args)
        .current_dir(dir)
        .env("XDG_CONFIG_HOME", dir.join("xdg"))
        .env("HOME", dir)
        .env_remove("SWITCHBOARD_CONFIG")
        .env_remove("SB_TEST_TOKEN")
        .env("NO_COLOR", "1")
        .output()
        .expect("the switchboard binary runs")
}

fn ok(out: &Output) -> String {
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn refused(out: &Output) -> String {
    assert_eq!(
        out.status.code(),
        Some(2),
        "stdout: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `add NAME` of the memory server, as a user types it.
fn add_memory(dir: &Path, name: &str, before: &[&str]) -> Output {
    let (node, memory) = (node(), peer("memory"));
    let mut args: Vec<&str> = before.to_vec();
    args.extend(["add", name, &node, memory.to_str().unwrap()]);
    run(dir, &args)
}

#[test]
fn an_added_server_runs_and_is_turned_off_on_and_removed() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    // No config anywhere: the user's own file is created.
    let said = ok(&add_memory(dir, "memory", &[]));
    let file = dir.join("xdg/switchboard/switchboard.toml");
    assert!(
        said.contains("added server \"memory\"") && said.contains("(a new file)"),
        "{said}"
    );
    assert!(file.is_file(), "{said}");
    let v = json(&run(dir, &["servers", "--json"]));
    assert_eq!(v["config"]["path"], file.to_str().unwrap(), "{v}");
    let memory = server(&v, "memory");
    assert_eq!(memory["state"], "ready", "{memory}");
    assert!(memory["tools"].as_u64().unwrap() >= 5, "{memory}");

    // A second server, after options and with `--` before its command.
    let out = run(
        dir,
        &[
            "add",
            "second",
            "-e",
            "MEMORY_FILE_PATH=${HOME}/m.json",
            "--",
            &node(),
            peer("memory").to_str().unwrap(),
        ],
    );
    ok(&out);
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.contains("env = { MEMORY_FILE_PATH = \"${HOME}/m.json\" }"),
        "{text}"
    );

    ok(&run(dir, &["disable", "memory"]));
    let v = json(&run(dir, &["servers", "--json"]));
    assert_eq!(server(&v, "memory")["state"], "disabled", "{v}");
    assert_eq!(server(&v, "second")["state"], "ready", "{v}");
    let again = ok(&run(dir, &["disable", "memory"]));
    assert!(again.contains("already disabled"), "{again}");

    ok(&run(dir, &["enable", "memory"]));
    assert_eq!(
        server(&json(&run(dir, &["servers", "--json"])), "memory")["state"],
        "ready"
    );

    let v = json(&run(dir, &["remove", "second", "--json"]));
    assert_eq!(v["removed"], "second", "{v}");
    assert_eq!(v["changed"], true, "{v}");
    let v = json(&run(dir, &["servers", "--json"]));
    let names: Vec<&Value> = v["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| &s["name"])
        .collect();
    assert_eq!(names, ["memory"], "{v}");
}

#[test]
fn a_project_mcp_json_keeps_its_comments_and_gets_its_bytes_back() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let original = "{\n  // servers for this repository\n  \"mcpServers\": {\n    \"docs\": {\"command\": \"docs-server\", \"disabled\": true} // not yet\n  }\n}\n";
    std::fs::write(dir.join(".mcp.json"), original).unwrap();
    let said = ok(&add_memory(dir, "memory", &[]));
    assert!(said.contains(".mcp.json"), "{said}");
    let text = std::fs::read_to_string(dir.join(".mcp.json")).unwrap();
    assert!(
        text.starts_with("{\n  // servers for this repository\n"),
        "{text}"
    );
    assert!(text.contains("} // not yet"), "{text}");
    let v = json(&run(dir, &["servers", "--json"]));
    assert_eq!(server(&v, "memory")["state"], "ready", "{v}");
    assert_eq!(server(&v, "docs")["state"], "disabled", "{v}");
    ok(&run(dir, &["remove", "memory"]));
    assert_eq!(
        std::fs::read_to_string(dir.join(".mcp.json")).unwrap(),
        original
    );

    // `--scope user` writes the user's file, and says this folder reads another one first.
    let out = add_memory(dir, "mine", &[]);
    ok(&out);
    let out = run(dir, &["add", "--scope", "user", "elsewhere", "echo"]);
    let said = ok(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(".mcp.json is read first in this folder"),
        "{stderr}"
    );
    assert!(said.contains("switchboard servers --config "), "{said}");
}

#[test]
fn a_url_server_with_a_header_and_a_variable_not_set_yet() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let out = run(
        dir,
        &[
            "--config",
            "s.toml",
            "add",
            "remote",
            "https://example.com/mcp",
            "-H",
            "Authorization: Bearer ${SB_TEST_TOKEN}",
        ],
    );
    ok(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("does not run yet") && stderr.contains("SB_TEST_TOKEN"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("s.toml")).unwrap(),
        "[servers.remote]\nurl = \"https://example.com/mcp\"\nheaders = { Authorization = \"Bearer ${SB_TEST_TOKEN}\" }\n"
    );
    let v = json(&run(
        dir,
        &[
            "--config",
            "s.toml",
            "add",
            "old",
            "--transport",
            "sse",
            "https://example.com/sse",
            "--json",
        ],
    ));
    assert_eq!(v["added"], "old", "{v}");
    assert_eq!(v["created"], false, "{v}");
    assert!(
        std::fs::read_to_string(dir.join("s.toml"))
            .unwrap()
            .contains("[servers.old]\ntype = \"sse\"\n")
    );
}

#[test]
fn a_program_not_on_the_path_is_written_and_named() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(
        dir.path(),
        &[
            "--config",
            "s.toml",
            "add",
            "ghost",
            "switchboard-no-such-program",
            "--flag",
        ],
    );
    ok(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("does not run yet: command \"switchboard-no-such-program\" not found"),
        "{stderr}"
    );
    let text = std::fs::read_to_string(dir.path().join("s.toml")).unwrap();
    assert!(text.contains("args = [\"--flag\"]"), "{text}");
}

#[test]
fn what_switchboard_does_not_write_is_left_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let codex = "[mcp_servers.x]\ncommand = \"x\"\n";
    std::fs::write(dir.join("config.toml"), codex).unwrap();
    let said = refused(&add_memory(dir, "memory", &["--config", "config.toml"]));
    assert!(said.contains("codex mcp add"), "{said}");
    assert_eq!(
        std::fs::read_to_string(dir.join("config.toml")).unwrap(),
        codex
    );

    let own = "[servers.memory]\ncommand = \"m\" # mine\n";
    std::fs::write(dir.join("switchboard.toml"), own).unwrap();
    let said = refused(&add_memory(dir, "memory", &[]));
    assert!(said.contains("already in this file"), "{said}");
    let said = refused(&run(dir, &["remove", "memroy"]));
    assert!(said.contains("did you mean \"memory\""), "{said}");
    let out = run(dir, &["remove", "nothing", "--json"]);
    refused(&out);
    assert!(
        json(&out)["error"]
            .as_str()
            .unwrap()
            .contains("no server named"),
        "{:?}",
        out
    );
    let said = refused(&run(
        dir,
        &["add", "web", "https://example.com/mcp", "extra"],
    ));
    assert!(said.contains("takes no arguments"), "{said}");
    let said = refused(&run(
        dir,
        &[
            "add",
            "web",
            "--transport",
            "http",
            "https://exa mple.com:99999/mcp",
        ],
    ));
    assert!(
        said.contains("nothing was written") && said.contains("malformed URL"),
        "{said}"
    );
    let said = refused(&run(dir, &["add", "a/b", "x"]));
    assert!(said.contains('/'), "{said}");
    assert_eq!(
        std::fs::read_to_string(dir.join("switchboard.toml")).unwrap(),
        own
    );
    // Nothing was left beside the file.
    let left: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name())
        .collect();
    assert!(
        left.iter()
            .all(|n| !n.to_string_lossy().starts_with(".switchboard-edit")),
        "{left:?}"
    );
}

#[cfg(unix)]
#[test]
fn a_linked_config_stays_linked_and_private() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let real = dir.join("dotfiles/switchboard.toml");
    std::fs::create_dir_all(real.parent().unwrap()).unwrap();
    std::fs::write(&real, "# shared\n").unwrap();
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::os::unix::fs::symlink(&real, dir.join("switchboard.toml")).unwrap();
    ok(&run(dir, &["add", "t", "-e", "TOKEN=secret", "--", "echo"]));
    assert!(
        std::fs::symlink_metadata(dir.join("switchboard.toml"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let text = std::fs::read_to_string(&real).unwrap();
    assert!(
        text.starts_with("# shared\n") && text.contains("[servers.t]"),
        "{text}"
    );
    let mode = std::fs::metadata(&real).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
}

#[test]
fn a_hosts_name_writes_that_hosts_file_as_it_spells_entries() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    // No Cursor file yet: the project's is created.
    ok(&add_memory(dir, "memory", &["--config", "cursor"]));
    let cursor = dir.join(".cursor/mcp.json");
    let v = json(&run(dir, &["--config", "cursor", "servers", "--json"]));
    assert_eq!(server(&v, "memory")["state"], "ready", "{v}");
    assert!(
        std::fs::read_to_string(&cursor)
            .unwrap()
            .contains("\"mcpServers\"")
    );
    // Windsurf's file takes `serverUrl`.
    ok(&run(
        dir,
        &[
            "--config",
            "windsurf",
            "add",
            "web",
            "https://example.com/mcp",
        ],
    ));
    let windsurf = std::fs::read_to_string(dir.join(".codeium/windsurf/mcp_config.json")).unwrap();
    assert!(
        windsurf.contains("\"serverUrl\": \"https://example.com/mcp\""),
        "{windsurf}"
    );
    // Codex's and Gemini CLI's files are theirs to write.
    let said = refused(&run(dir, &["--config", "codex", "add", "x", "echo"]));
    assert!(said.contains("codex mcp add"), "{said}");
    assert!(!dir.join(".codex/config.toml").exists());
    let said = refused(&run(dir, &["--config", "gemini", "add", "x", "echo"]));
    assert!(said.contains("gemini mcp add"), "{said}");
}

#[test]
fn a_readmes_snippet_pasted_on_standard_input_adds_its_servers() {
    use std::io::Write as _;
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let snippet = format!(
        r#"{{
  // as a README gives it
  "mcpServers": {{
    "memory": {{
      "command": {node},
      "args": [{memory}],
      "alwaysAllow": ["read_graph"],
    }},
    "remote": {{"type": "http", "url": "https://example.com/mcp"}}
  }}
}}"#,
        node = serde_json::to_string(&node()).unwrap(),
        memory = serde_json::to_string(&peer("memory")).unwrap(),
    );
    let mut child = Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .args(["--config", "s.toml", "add-json", "-"])
        .current_dir(dir)
        .env("XDG_CONFIG_HOME", dir.join("xdg"))
        .env("HOME", dir)
        .env_remove("SWITCHBOARD_CONFIG")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(snippet.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let said = ok(&out);
    assert!(
        said.contains("added server \"memory\"") && said.contains("added server \"remote\""),
        "{said}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    // switchboard.toml says Cline's `alwaysAllow` its own way.
    assert!(!stderr.contains("left out"), "{stderr}");
    let text = std::fs::read_to_string(dir.join("s.toml")).unwrap();
    assert!(
        text.contains("[servers.memory.tool.read_graph]\napprove = \"never\"\n"),
        "{text}"
    );
    let v = json(&run(dir, &["--config", "s.toml", "servers", "--json"]));
    assert_eq!(server(&v, "memory")["state"], "ready", "{v}");
    // One entry alone takes its name; one that cannot be written leaves the file as it was.
    let before = std::fs::read_to_string(dir.join("s.toml")).unwrap();
    let said = refused(&run(
        dir,
        &[
            "--config",
            "s.toml",
            "add-json",
            r#"{"mcpServers": {"new": {"command": "x"}, "memory": {"command": "y"}}}"#,
        ],
    ));
    assert!(said.contains("already in this file"), "{said}");
    assert_eq!(std::fs::read_to_string(dir.join("s.toml")).unwrap(), before);
    let v = json(&run(
        dir,
        &[
            "--config",
            "s.toml",
            "add-json",
            "one",
            r#"{"command": "echo", "timeout": 5}"#,
            "--json",
        ],
    ));
    assert_eq!(v["added"], serde_json::json!(["one"]), "{v}");
    assert_eq!(
        v["servers"][0]["left_out"],
        serde_json::json!(["timeout"]),
        "{v}"
    );
    // A JSON file takes another host's settings as written.
    let v = json(&run(
        dir,
        &[
            "--config",
            "m.json",
            "add-json",
            "one",
            r#"{"command": "echo", "alwaysAllow": ["x"]}"#,
            "--json",
        ],
    ));
    assert_eq!(v["servers"][0]["left_out"], serde_json::json!([]), "{v}");
    let text = std::fs::read_to_string(dir.join("m.json")).unwrap();
    assert!(
        text.contains("\"alwaysAllow\": [\n        \"x\"\n      ]"),
        "{text}"
    );
    let said = refused(&run(
        dir,
        &["--config", "s.toml", "add-json", r#"{"command": "echo"}"#],
    ));
    assert!(said.contains("needs its name"), "{said}");
}

/// `add`'s switchboard settings: a real memory server added with a deny list, an approval
/// mode, an alias and a timeout runs with them; OAuth client options after a URL; a `.mcp.json`
/// refuses what Claude Code has no place for, and stays as it was.
#[test]
fn switchboards_own_settings_are_written_and_take_effect() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let (node, memory) = (node(), peer("memory"));
    let said = ok(&run(
        dir,
        &[
            "add",
            "--scope",
            "project",
            "--deny",
            "delete_*",
            "--approval",
            "never",
            "--alias",
            "mem",
            "--timeout",
            "45s",
            "memory",
            &node,
            memory.to_str().unwrap(),
        ],
    ));
    assert!(said.contains("added server \"memory\""), "{said}");
    let text = std::fs::read_to_string(dir.join("switchboard.toml")).unwrap();
    for line in [
        "alias = \"mem\"",
        "approve = \"never\"",
        "call_timeout = \"45s\"",
        "tools = { deny = [\"delete_*\"] }",
    ] {
        assert!(text.contains(line), "{line}: {text}");
    }
    let v = json(&run(dir, &["servers", "--json"]));
    let memory = server(&v, "memory");
    assert_eq!(memory["state"], "ready", "{memory}");
    let hidden = &memory["hidden"][0];
    assert_eq!(hidden["setting"], "tools.deny", "{memory}");
    assert!(
        hidden["tools"]
            .as_array()
            .unwrap()
            .contains(&"delete_entities".into()),
        "{memory}"
    );
    assert_eq!(
        memory["approval"][0]["setting"], "approve = \"never\"",
        "{memory}"
    );

    // OAuth client options after a URL, as `add`'s own; the secret by its variable's name.
    ok(&run(
        dir,
        &[
            "add",
            "--scope",
            "project",
            "gh",
            "https://api.example.com/mcp",
            "--client-id",
            "Iv1.abc",
            "--client-secret-env",
            "GH_SECRET",
            "--callback-port",
            "8765",
        ],
    ));
    let text = std::fs::read_to_string(dir.join("switchboard.toml")).unwrap();
    assert!(
        text.ends_with(
            "[servers.gh.oauth]\nclient_id = \"Iv1.abc\"\nclient_secret = \"${GH_SECRET}\"\nredirect_port = 8765\n"
        ),
        "{text}"
    );
    let e = refused(&run(
        dir,
        &[
            "add",
            "--scope",
            "project",
            "x",
            "--client-secret-env",
            "sk-live-123",
            "https://a.example/mcp",
        ],
    ));
    assert!(e.contains("not the secret"), "{e}");

    // A `.mcp.json` takes the OAuth client id, and refuses a deny list.
    let mcp = dir.join("elsewhere");
    std::fs::create_dir_all(&mcp).unwrap();
    let before = "{\n  \"mcpServers\": {}\n}\n";
    std::fs::write(mcp.join(".mcp.json"), before).unwrap();
    let e = refused(&run(
        &mcp,
        &[
            "add",
            "--deny",
            "delete_*",
            "memory",
            &node,
            peer("memory").to_str().unwrap(),
        ],
    ));
    assert!(
        e.contains("tools.deny is a setting of switchboard's") && e.contains("--scope project"),
        "{e}"
    );
    assert_eq!(
        std::fs::read_to_string(mcp.join(".mcp.json")).unwrap(),
        before
    );
    ok(&run(
        &mcp,
        &[
            "add",
            "--client-id",
            "abc",
            "gh",
            "https://api.example.com/mcp",
        ],
    ));
    let text = std::fs::read_to_string(mcp.join(".mcp.json")).unwrap();
    assert!(text.contains("\"clientId\": \"abc\""), "{text}");
}
