//! MCP bundles run for real: a `.mcpb` file given as the config, a config entry's `bundle`,
//! and the extensions Claude Desktop installed beside its config. Each bundle's server is the
//! npm reference filesystem server, started by the bundle's own entry point as Claude Desktop
//! would start it.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};
use switchboard_test_support::output::{server_row as server, stdout_json as json_of};
use switchboard_test_support::peers::peer;

fn exe() -> &'static str {
    env!("CARGO_BIN_EXE_switchboard")
}

/// Run the binary in `dir` with `home` as the home, its config and cache folders inside it.
fn run(dir: &Path, home: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(exe())
        .args(args)
        .current_dir(dir)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_CACHE_HOME", home.join(".cache"))
        .env_remove("SWITCHBOARD_CONFIG")
        .env_remove("SWITCHBOARD_INPUT_ALLOWED_DIRECTORIES")
        .env("NO_COLOR", "1")
        .envs(env.iter().copied())
        .output()
        .expect("the switchboard binary runs")
}

/// The manifest of a bundle packing the filesystem server, as the official Filesystem
/// extension declares it: the folders it may touch are a required, multi-valued setting.
fn manifest(name: &str) -> Value {
    json!({
        "manifest_version": "0.3",
        "name": name,
        "version": "1.0.0",
        "description": "Files, packed as a bundle",
        "author": {"name": "switchboard tests"},
        "server": {
            "type": "node",
            "entry_point": "server/index.mjs",
            "mcp_config": {
                "command": "node",
                "args": ["${__dirname}/server/index.mjs", "${user_config.allowed_directories}"]
            }
        },
        "user_config": {
            "allowed_directories": {
                "type": "directory",
                "title": "Allowed Directories",
                "multiple": true,
                "required": true
            }
        },
        "compatibility": {"platforms": ["darwin", "win32", "linux"]}
    })
}

/// The bundle's entry point: it starts the installed reference server in its own process, so
/// the server reads the arguments the bundle was given.
fn entry_point() -> String {
    let server = peer("filesystem");
    let url = format!("file://{}", server.display());
    format!("import({});\n", serde_json::to_string(&url).unwrap())
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn mcpb(path: &Path, name: &str) {
    mcpb_of(path, &manifest(name));
}

fn mcpb_of(path: &Path, manifest: &Value) {
    let mut zip = zip::ZipWriter::new(std::fs::File::create(path).unwrap());
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (file, text) in [
        (
            "manifest.json",
            serde_json::to_string_pretty(manifest).unwrap(),
        ),
        ("server/index.mjs", entry_point()),
    ] {
        zip.start_file(file, options).unwrap();
        zip.write_all(text.as_bytes()).unwrap();
    }
    zip.finish().unwrap();
}

/// Check that a `list_allowed_directories` call succeeded and listed each of `folders`.
fn lists_folders(out: &Output, folders: &[&PathBuf]) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout:\n{stdout}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for folder in folders {
        let real = folder.canonicalize().unwrap();
        assert!(
            stdout.contains(real.to_str().unwrap()) || stdout.contains(folder.to_str().unwrap()),
            "{folder:?}: {stdout}"
        );
    }
}

#[test]
fn a_mcpb_file_is_a_config_whose_server_takes_its_settings_from_the_environment() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    let data = home.join("data");
    std::fs::create_dir_all(&data).unwrap();
    let bundle = home.join("files.mcpb");
    mcpb(&bundle, "files");
    let config = bundle.to_str().unwrap();

    // Without the required setting the server is disabled, and the reason says how to give it.
    let v = json_of(&run(
        home,
        home,
        &["--config", config, "servers", "--json"],
        &[],
    ));
    let files = server(&v, "files");
    assert_eq!(files["state"], "disabled", "{files}");
    let reason = files["error"].as_str().unwrap();
    assert!(
        reason.contains("`allowed_directories` (Allowed Directories)")
            && reason.contains("SWITCHBOARD_INPUT_ALLOWED_DIRECTORIES"),
        "{reason}"
    );
    // It names the file given, not the unpacked copy.
    assert!(reason.starts_with(config), "{reason}");

    // With it, the bundle's server runs and answers with the folder it was given.
    let given = [(
        "SWITCHBOARD_INPUT_ALLOWED_DIRECTORIES",
        data.to_str().unwrap(),
    )];
    let v = json_of(&run(
        home,
        home,
        &["--config", config, "servers", "--json"],
        &given,
    ));
    assert_eq!(server(&v, "files")["state"], "ready", "{v}");
    // A well-made bundle draws no warning about its manifest.
    let out = run(home, home, &["--config", config, "servers"], &given);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("manifest"), "{stderr}");
    let out = run(
        home,
        home,
        // One server: its tool's name is enough.
        &["--config", config, "call", "list_allowed_directories"],
        &given,
    );
    lists_folders(&out, &[&data]);

    // It was unpacked once, into the user cache, named after the file and its hash (which is
    // kept beside it, in `.digests`).
    let unpacked: Vec<PathBuf> = std::fs::read_dir(home.join(".cache/switchboard/bundles"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| !p.ends_with(".digests"))
        .collect();
    assert_eq!(unpacked.len(), 1, "{unpacked:?}");
    let name = unpacked[0]
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert!(name.starts_with("files-"), "{name}");
    assert!(unpacked[0].join("server/index.mjs").is_file());

    // A manifest whose tools are not the server's, whose entry point is not packed, and which
    // lacks a required field: each is named, and the server still runs.
    let mut stale = manifest("stale");
    stale["tools"] = json!([{"name": "read_text_file"}, {"name": "gone"}]);
    stale["server"]["entry_point"] = json!("server/main.mjs");
    stale.as_object_mut().unwrap().remove("version");
    let stale_path = home.join("stale.mcpb");
    mcpb_of(&stale_path, &stale);
    let out = run(
        home,
        home,
        &["--config", stale_path.to_str().unwrap(), "servers"],
        &given,
    );
    assert_eq!(out.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&out.stderr);
    for expected in [
        &format!("{}: the manifest has no `version`", stale_path.display()),
        "`server.entry_point` \"server/main.mjs\" is not in the bundle",
        "the bundle's manifest lists \"gone\", which the server does not have",
        "\"list_allowed_directories\"",
    ] {
        assert!(stderr.contains(expected), "{expected}: {stderr}");
    }
    assert!(!stderr.contains("\"read_text_file\""), "{stderr}");

    // A file that is not a bundle is named as such, and exits as a config error.
    std::fs::write(home.join("broken.mcpb"), "not a zip").unwrap();
    let out = run(
        home,
        home,
        &[
            "--config",
            home.join("broken.mcpb").to_str().unwrap(),
            "servers",
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("not a zip archive"), "{stderr}");
}

#[test]
fn claude_desktops_installed_extensions_run_with_their_saved_settings() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    let data = home.join("data");
    std::fs::create_dir_all(&data).unwrap();
    // Two folders: each is its own argument, as the bundle format says.
    let more = home.join("more");
    std::fs::create_dir_all(&more).unwrap();
    let claude = home.join(".config/Claude");
    let id = "ant.dir.ant.anthropic.filesystem";
    write(
        &claude.join("claude_desktop_config.json"),
        &json!({"mcpServers": {"tickets": {"command": exe(), "args": ["demo-server", "tickets"]}}})
            .to_string(),
    );
    write(
        &claude.join("extensions-installations.json"),
        &json!({"extensions": {id: {"id": id, "version": "1.0.0"}, "local.off": {"id": "local.off"}}})
            .to_string(),
    );
    let installed = claude.join("Claude Extensions");
    for (folder, name) in [(id, "filesystem"), ("local.off", "off")] {
        write(
            &installed.join(folder).join("manifest.json"),
            &manifest(name).to_string(),
        );
        write(
            &installed.join(folder).join("server/index.mjs"),
            &entry_point(),
        );
    }
    let settings = claude.join("Claude Extensions Settings");
    write(
        &settings.join(format!("{id}.json")),
        &json!({"isEnabled": true, "userConfig": {"allowed_directories": [data, more]}})
            .to_string(),
    );
    write(
        &settings.join("local.off.json"),
        &json!({"isEnabled": false, "userConfig": {"allowed_directories": [data]}}).to_string(),
    );
    let work = home.join("work");
    std::fs::create_dir_all(&work).unwrap();

    let v = json_of(&run(
        &work,
        home,
        &["--config", "claude-desktop", "servers", "--json"],
        &[],
    ));
    assert_eq!(server(&v, "tickets")["state"], "ready", "{v}");
    assert_eq!(server(&v, "filesystem")["state"], "ready", "{v}");
    let off = server(&v, "off");
    assert_eq!(off["state"], "disabled");
    assert!(
        off["origin"]
            .as_str()
            .is_some_and(|o| o.starts_with("Claude Desktop extension local.off (")),
        "{off}"
    );
    assert!(
        off["error"]
            .as_str()
            .unwrap()
            .contains("turned off in Claude Desktop"),
        "{off}"
    );

    // The table says where each gathered server comes from.
    let out = run(&work, home, &["--config", "claude-desktop", "servers"], &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&format!(
            "from Claude Desktop extension {id} ({}): filesystem\n",
            installed.join(id).display()
        )),
        "{stdout}"
    );

    let out = run(
        &work,
        home,
        &[
            "--config",
            "claude-desktop",
            "call",
            "filesystem",
            "list_allowed_directories",
        ],
        &[],
    );
    lists_folders(&out, &[&data, &more]);

    // With no config, the demo runs and counts Claude Desktop's servers, extensions included.
    let v = json_of(&run(&work, home, &["servers", "--json"], &[]));
    assert_eq!(v["config"]["kind"], "demo");
    let desktop = v["config"]["other_hosts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["name"] == "claude-desktop")
        .unwrap_or_else(|| panic!("{v}"));
    assert_eq!(desktop["servers"], 3, "{desktop}");
}

#[test]
fn a_config_entry_runs_a_bundle_with_its_own_settings_beside_other_servers() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    let (data, more) = (home.join("data"), home.join("more"));
    for folder in [&data, &more] {
        std::fs::create_dir_all(folder).unwrap();
    }
    mcpb(&home.join("files.mcpb"), "files");
    let mut unversioned = manifest("unversioned");
    unversioned.as_object_mut().unwrap().remove("version");
    unversioned["tools"] = json!([{"name": "read_text_file"}, {"name": "no_such_tool"}]);
    mcpb_of(&home.join("unversioned.mcpb"), &unversioned);
    let exe = serde_json::to_string(exe()).unwrap();
    std::fs::write(
        home.join("switchboard.toml"),
        format!(
            r#"[servers.tickets]
command = {exe}
args = ["demo-server", "tickets"]

[servers.files]
bundle = "files.mcpb"
user_config = {{ allowed_directories = ["${{DATA_DIR}}", {more}] }}
alias = "fs"

[servers.missing]
bundle = "gone.mcpb"

[servers.stray]
command = "x"
user_config = {{ a = 1 }}

[servers.unversioned]
bundle = "unversioned.mcpb"
user_config = {{ allowed_directories = [{more}] }}
"#,
            more = serde_json::to_string(&more).unwrap(),
        ),
    )
    .unwrap();
    let env = [("DATA_DIR", data.to_str().unwrap())];
    let v = json_of(&run(home, home, &["servers", "--json"], &env));
    assert_eq!(server(&v, "tickets")["state"], "ready", "{v}");
    assert_eq!(server(&v, "files")["state"], "ready", "{v}");
    let missing = server(&v, "missing")["error"].as_str().unwrap();
    assert!(
        missing.contains("switchboard.toml:11:1:")
            && missing.contains("gone.mcpb: no such file or folder"),
        "{missing}"
    );
    let stray = server(&v, "stray")["error"].as_str().unwrap();
    assert!(stray.contains("has no `bundle`"), "{stray}");
    // A bundle entry's manifest is checked too, the warning at the entry's `bundle` line.
    assert_eq!(server(&v, "unversioned")["state"], "ready", "{v}");
    let out = run(home, home, &["servers"], &env);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("switchboard.toml:18:1: server \"unversioned\": bundle ")
            && stderr.contains("unversioned.mcpb: the manifest has no `version`"),
        "{stderr}"
    );

    // The entry's own settings apply to the bundle's tools (here its alias).
    let out = run(
        home,
        home,
        &["call", "files", "list_allowed_directories"],
        &env,
    );
    lists_folders(&out, &[&data, &more]);
    let out = run(home, home, &["--json", "inspect"], &env);
    // Its manifest's `tools` are compared with what the server lists, as a bundle's given as
    // the config are.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("server \"unversioned\": the bundle's manifest lists \"no_such_tool\", which the server does not have"),
        "{stderr}"
    );
    assert!(!stderr.contains("\"read_text_file\", which"), "{stderr}");
    assert!(
        !stderr.contains("server \"files\": the bundle's"),
        "{stderr}"
    );
    let v = json_of(&out);
    let names: Vec<&str> = v["request"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(names.contains(&"fs__list_allowed_directories"), "{names:?}");
}
