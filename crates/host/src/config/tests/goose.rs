//! goose's `config.yaml` and its `permission.yaml` in goose's approve modes.

use super::*;

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
