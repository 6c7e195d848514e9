//! Roots: the folders switchboard offers servers (`--root`, `[settings] roots`, and behind
//! `serve` on stdio its client's own), checked with real servers that act on them: the
//! reference "everything" server's `get-roots-list` says what it was given, and the reference
//! filesystem server, started with no folder of its own, can read only under the roots.

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use switchboard_test_support::line_client::LineClient;
use switchboard_test_support::peers::{node, peer};

fn exe() -> &'static str {
    env!("CARGO_BIN_EXE_switchboard")
}

/// A config of one server, `name`, run by node from the npm peer `package`, after `settings`.
fn config(dir: &Path, settings: &str, name: &str, package: &str) -> std::path::PathBuf {
    let path = dir.join("switchboard.toml");
    let text = format!(
        "{settings}\n[servers.{name}]\ncommand = {node:?}\nargs = [{server:?}]\npin = \"off\"\n",
        node = node(),
        server = peer(package).display().to_string(),
    );
    std::fs::write(&path, text).unwrap();
    path
}

fn switchboard(dir: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(exe());
    c.args(args)
        .current_dir(dir)
        .env("HOME", dir)
        .env("XDG_CONFIG_HOME", dir.join("no-user-config"))
        .env("XDG_DATA_HOME", dir.join("data"))
        .env_remove("SWITCHBOARD_CONFIG")
        .env_remove("RUST_LOG")
        .env("NO_COLOR", "1");
    c
}

fn run(dir: &Path, args: &[&str]) -> Output {
    switchboard(dir, args).output().expect("switchboard runs")
}

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A folder's `file://` URI as switchboard writes it (the temp dirs have no characters to
/// escape; the folder is resolved to its real path first, as switchboard does).
fn uri(dir: &Path) -> String {
    format!("file://{}", std::fs::canonicalize(dir).unwrap().display())
}

#[test]
fn root_flags_are_offered_in_order_and_none_without_them() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (a, b) = (d.join("alpha"), d.join("beta"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    let cfg = config(d, "", "everything", "everything");
    let cfg = cfg.to_str().unwrap();

    let out = run(
        d,
        &[
            "--config",
            cfg,
            "call",
            "everything",
            "get-roots-list",
            "--root",
            "alpha",
            "--root",
            "beta",
            "--root",
            "alpha",
        ],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("(2 total)"), "{stdout}");
    let (ua, ub) = (uri(&a), uri(&b));
    let (ia, ib) = (stdout.find(&ua).unwrap(), stdout.find(&ub).unwrap());
    assert!(ia < ib, "in the order given: {stdout}");
    assert!(
        stdout.contains("1. alpha"),
        "named after the folder: {stdout}"
    );

    // `servers` says what it offers.
    let out = run(
        d,
        &["--config", cfg, "--root", "alpha", "servers", "--json"],
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["roots"], json!([{"uri": ua, "name": "alpha"}]));

    // None given: the server is told there are none.
    let out = run(
        d,
        &["--config", cfg, "call", "everything", "get-roots-list"],
    );
    let (stdout, _) = text(&out);
    assert!(
        stdout.contains("no roots are currently configured"),
        "{stdout}"
    );

    // A root that is not a folder is an error before anything starts.
    std::fs::write(d.join("file.txt"), "x").unwrap();
    for bad in ["missing", "file.txt"] {
        let out = run(
            d,
            &[
                "--config",
                cfg,
                "call",
                "everything",
                "get-roots-list",
                "--root",
                bad,
            ],
        );
        let (_, stderr) = text(&out);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains(&format!("--root {bad}")), "{stderr}");
    }
}

#[test]
fn the_filesystem_server_works_in_the_configs_roots() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir_all(d.join("project")).unwrap();
    std::fs::write(d.join("project/notes.txt"), "roots reached").unwrap();
    std::fs::write(d.join("outside.txt"), "not for the server").unwrap();
    // Relative to the config's folder; one missing and one unset variable are left out, with
    // warnings, and the rest still apply.
    let cfg = config(
        d,
        "[settings]\nroots = [\"project\", \"gone\", \"${SB_ROOTS_UNSET}\"]\n",
        "fs",
        "filesystem",
    );
    let cfg = cfg.to_str().unwrap();
    let inside = d.join("project/notes.txt");
    let args = json!({"path": inside}).to_string();
    // The filesystem server is given no folder of its own: what it may read is the roots. The
    // call comes as soon as the server is up, which is when a server still taking its roots in
    // would refuse it.
    let out = switchboard(d, &["--config", cfg, "call", "fs", "read_text_file", &args])
        .env_remove("SB_ROOTS_UNSET")
        .output()
        .unwrap();
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("roots reached"), "{stdout}");
    assert!(
        stderr.contains("[settings] roots: \"gone\" left out"),
        "{stderr}"
    );
    assert!(stderr.contains("SB_ROOTS_UNSET is not set"), "{stderr}");

    let outside = json!({"path": d.join("outside.txt")}).to_string();
    let out = run(
        d,
        &["--config", cfg, "call", "fs", "read_text_file", &outside],
    );
    let (stdout, _) = text(&out);
    assert_eq!(out.status.code(), Some(1), "the tool refuses: {stdout}");
    assert!(stdout.contains("outside allowed directories"), "{stdout}");
}

/// Call `get-roots-list` through the gateway until its text has `wanted` (the server takes
/// roots in after it hears they changed), and return that text.
fn roots_seen(c: &mut LineClient, id: &mut i64, tool: &str, wanted: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        *id += 1;
        let result = c.call(*id, tool, json!({}));
        let text = result["content"][0]["text"]
            .as_str()
            .unwrap_or("")
            .to_string();
        if text.contains(wanted) {
            return text;
        }
        assert!(
            Instant::now() < deadline,
            "{wanted} never reached the server: {text}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The gateway's name for `get-roots-list`, which the everything server adds just after it
/// starts (for a client that declared roots, as switchboard does).
fn roots_tool(c: &mut LineClient, id: &mut i64) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        *id += 1;
        let tools = c.request(*id, "tools/list", json!({}));
        let found = tools["result"]["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t["name"].as_str())
            .find(|n| n.ends_with("get-roots-list"));
        if let Some(name) = found {
            return name.to_string();
        }
        assert!(Instant::now() < deadline, "no get-roots-list: {tools}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Answer serve's next `roots/list` with `roots`.
fn answer_roots(c: &mut LineClient, roots: Value) {
    let asked = c.await_note("serve asks for the client's roots", |m| {
        m["method"] == "roots/list" && m.get("id").is_some()
    });
    c.send(json!({"jsonrpc": "2.0", "id": asked["id"], "result": {"roots": roots}}));
}

#[test]
fn serve_client_roots_offers_the_clients_folders_until_the_config_names_some() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = config(d, "", "everything", "everything");
    let mut c = LineClient::spawn(switchboard(
        d,
        &["--config", cfg.to_str().unwrap(), "serve", "--client-roots"],
    ));
    let init = c.request(
        0,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {"roots": {"listChanged": true}}, "clientInfo": {"name": "roots-test", "version": "0"}}),
    );
    assert!(init.get("result").is_some(), "{init}");
    c.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    answer_roots(
        &mut c,
        json!([{"uri": "file:///client/workspace", "name": "workspace"}]),
    );
    let mut id = 1;
    let tool = roots_tool(&mut c, &mut id);
    let seen = roots_seen(&mut c, &mut id, &tool, "file:///client/workspace");
    assert!(seen.contains("(1 total)"), "{seen}");

    // The client's roots change: serve asks again and its servers hear of it.
    c.send(json!({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}));
    answer_roots(
        &mut c,
        json!([{"uri": "file:///client/workspace"}, {"uri": "file:///client/second"}]),
    );
    let seen = roots_seen(&mut c, &mut id, &tool, "file:///client/second");
    assert!(seen.contains("(2 total)"), "{seen}");

    // The config names roots of its own: they are what the servers get from then on.
    let own = d.join("own");
    std::fs::create_dir_all(&own).unwrap();
    config(
        d,
        "[settings]\nroots = [\"own\"]\n",
        "everything",
        "everything",
    );
    let seen = roots_seen(&mut c, &mut id, &tool, &uri(&own));
    assert!(seen.contains("(1 total)"), "{seen}");
    c.finish();
}

/// Without `--client-roots`, serve never asks its client for roots and its servers are offered
/// none (a server behind it keeps the folders it was given); over HTTP the flag is refused.
#[test]
fn serve_keeps_its_clients_roots_to_itself_unless_asked() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = config(d, "", "everything", "everything");
    let cfg = cfg.to_str().unwrap();
    let mut c = LineClient::spawn(switchboard(d, &["--config", cfg, "serve"]));
    let init = c.request(
        0,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {"roots": {"listChanged": true}}, "clientInfo": {"name": "roots-test", "version": "0"}}),
    );
    assert!(init.get("result").is_some(), "{init}");
    c.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let mut id = 1;
    let tool = roots_tool(&mut c, &mut id);
    id += 1;
    let result = c.call(id, &tool, json!({}));
    let said = result["content"][0]["text"].as_str().unwrap_or("");
    assert!(said.contains("no roots are currently configured"), "{said}");
    assert!(
        !c.notes.iter().any(|m| m["method"] == "roots/list"),
        "serve asked for roots: {:?}",
        c.notes
    );
    c.finish();

    let out = run(
        d,
        &[
            "--config",
            cfg,
            "serve",
            "--http",
            "127.0.0.1:0",
            "--client-roots",
        ],
    );
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--client-roots applies to stdio only"),
        "{stderr}"
    );
}

/// `add --root DIR` gives the new server roots of its own: the real filesystem server, started
/// with no folder, reads under those and nowhere else, while the config's other server works in
/// `[settings] roots`; `servers` says which server is offered what; `--root` on the command
/// line replaces the config's shared roots, not a server's own.
#[test]
fn a_server_added_with_a_root_of_its_own_works_there_and_the_others_in_the_configs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (folder, file, text) in [
        ("docs", "a.txt", "docs text"),
        ("code", "b.txt", "code text"),
    ] {
        std::fs::create_dir_all(d.join(folder)).unwrap();
        std::fs::write(d.join(folder).join(file), text).unwrap();
    }
    std::fs::create_dir_all(d.join("other")).unwrap();
    let cfg = config(
        d,
        "[settings]\nroots = [\"docs\"]\n",
        "shared",
        "filesystem",
    );
    let cfg = cfg.to_str().unwrap();
    let server = peer("filesystem").display().to_string();
    let node = node();
    let node = node.as_str();
    let out = run(
        d,
        &[
            "--config", cfg, "add", "--root", "code", "own", node, &server,
        ],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    let written = std::fs::read_to_string(cfg).unwrap();
    let code = std::fs::canonicalize(d.join("code")).unwrap();
    assert!(
        written.contains(&format!("roots = [{:?}]", code.display().to_string())),
        "{written}"
    );

    let read = |server: &str, file: &str, extra: &[&str]| {
        let path = json!({"path": d.join(file)}).to_string();
        let mut args = vec!["--config", cfg];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["call", server, "read_text_file", &path]);
        let out = run(d, &args);
        let (stdout, stderr) = text(&out);
        (out.status.code(), format!("{stdout}\n{stderr}"))
    };
    for (server, file, extra, works) in [
        ("own", "code/b.txt", &[][..], true),
        ("own", "docs/a.txt", &[], false),
        ("shared", "docs/a.txt", &[], true),
        ("shared", "code/b.txt", &[], false),
        // --root replaces the shared roots; the server's own stay.
        ("own", "code/b.txt", &["--root", "other"], true),
        ("shared", "docs/a.txt", &["--root", "other"], false),
    ] {
        let (code, said) = read(server, file, extra);
        if works {
            assert_eq!(code, Some(0), "{server} {file} {extra:?}: {said}");
            assert!(said.contains(" text"), "{said}");
        } else {
            assert_eq!(code, Some(1), "{server} {file} {extra:?}: {said}");
            assert!(said.contains("outside allowed directories"), "{said}");
        }
    }

    let out = run(d, &["--config", cfg, "servers", "--json"]);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let docs = uri(&d.join("docs"));
    assert_eq!(report["roots"], json!([{"uri": docs, "name": "docs"}]));
    let row = |name: &str| {
        report["servers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == name)
            .unwrap()
            .clone()
    };
    assert_eq!(
        row("own")["roots"],
        json!([{"uri": uri(&code), "name": "code"}])
    );
    assert!(row("shared").get("roots").is_none(), "{report}");
    let out = run(d, &["--config", cfg, "servers"]);
    let (stdout, _) = text(&out);
    assert!(
        stdout.contains(&format!("roots offered (to the others): {docs}"))
            && stdout.contains(&format!("roots offered to own (its own): {}", uri(&code))),
        "{stdout}"
    );

    // A root that is not a folder writes nothing.
    let out = run(
        d,
        &[
            "--config", cfg, "add", "--root", "missing", "more", node, &server,
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        !std::fs::read_to_string(cfg)
            .unwrap()
            .contains("[servers.more]")
    );
}
