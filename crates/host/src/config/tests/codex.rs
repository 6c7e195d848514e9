//! Codex's `config.toml`: its server entries and approval modes, full auto, project layers and
//! trust, worktrees, and an administrator's files.

use super::*;

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
