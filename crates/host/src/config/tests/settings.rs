//! Profiles, approval settings and per-tool settings: how each host's names for them are kept, a
//! run-wide `--approve`, and tool settings naming tools a server lacks.

use super::*;

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

/// A profile narrows what a server's own lists let through, and never widens it (its `tools`
/// replaced the server's allow list: `allow = ["search"]` under `tickets/*` let every tool
/// through). A message names the list that keeps a tool out.
#[test]
fn a_profile_narrows_a_servers_own_lists() {
    let c = parse(
        "sb.toml",
        r#"
[servers.tickets]
command = "t"
tools = { allow = ["search", "get_*"], deny = ["get_secret"] }
[profiles.all]
tools = ["tickets/*"]
[profiles.reading]
tools = ["tickets/get_*", "tickets/close_ticket"]
"#,
    )
    .unwrap();
    let all = c.clone().with_profile("all").unwrap();
    let f = &all.servers[0].filter;
    assert!(f.permits("search") && f.permits("get_ticket"));
    assert!(
        !f.permits("close_ticket"),
        "the server's allow list still holds"
    );
    assert!(!f.permits("get_secret"), "and its deny list");
    assert_eq!(f.list_hiding("close_ticket"), "tools.allow");
    let reading = c.with_profile("reading").unwrap();
    let f = &reading.servers[0].filter;
    assert!(f.permits("get_ticket"));
    assert!(!f.permits("search"));
    assert_eq!(f.list_hiding("search"), "profiles.reading.tools");
    assert!(
        !f.permits("close_ticket"),
        "a profile cannot add what the server keeps out"
    );
    assert_eq!(f.list_hiding("get_secret"), "tools.deny");
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

/// `name` in a tool's settings: the name models see, when every provider takes it; one that
/// some provider would refuse disables that server, saying why.
#[test]
fn a_tools_chosen_name_is_read_and_checked() {
    let text = r#"
[servers.ok]
command = "a"
tool.search = { name = "find_tickets" }

[servers.bad]
command = "b"
tool.search = { name = "find tickets" }
"#;
    let c = parse("sb.toml", text).unwrap();
    assert_eq!(
        chosen_names(&c.servers),
        BTreeMap::from([(
            ("ok".to_string(), "search".to_string()),
            "find_tickets".to_string()
        )])
    );
    let r = reason(&c, "bad");
    assert!(
        r.contains("name \"find tickets\" is not a tool name every provider takes"),
        "{r}"
    );
}

/// `[settings] system_prompt` is the user's system prompt; blank is none.
#[test]
fn the_settings_system_prompt_is_read() {
    let servers = "[servers.t]\ncommand = \"t\"\n";
    let c = parse(
        "sb.toml",
        &format!("{servers}[settings]\nsystem_prompt = \"\"\"\nBe terse.\n\"\"\"\n"),
    )
    .unwrap();
    assert_eq!(c.settings.system_prompt.as_deref(), Some("Be terse.\n"));
    let c = parse(
        "sb.toml",
        &format!("{servers}[settings]\nsystem_prompt = \" \"\n"),
    )
    .unwrap();
    assert_eq!(c.settings.system_prompt, None);
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
}

/// `[settings]` may say which model `run` and `chat` use; what cannot be used is left out with
/// a warning naming it.
#[test]
fn the_settings_model_defaults_are_read() {
    let servers = "[servers.t]\ncommand = \"t\"\n";
    let c = parse(
        "sb.toml",
        &format!(
            "{servers}[settings]\nprovider = \"openai-chat\"\nmodel = \"qwen3\"\nbase_url = \"http://localhost:11434/v1\"\nmax_tokens = 500\ntemperature = 0.2\nmax_turns = 8\n"
        ),
    )
    .unwrap();
    let m = &c.settings.model;
    assert_eq!(m.provider, Some(switchboard_core::Dialect::OpenAiChat));
    assert_eq!(m.model.as_deref(), Some("qwen3"));
    assert_eq!(m.base_url.as_deref(), Some("http://localhost:11434/v1"));
    assert_eq!(
        (m.max_tokens, m.temperature, m.max_turns),
        (Some(500), Some(0.2), Some(8))
    );
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    let c = parse(
        "sb.toml",
        &format!("{servers}[settings]\nprovider = \"openai\"\ntemperature = 3.0\nmax_turns = 0\n"),
    )
    .unwrap();
    assert_eq!(c.settings.model, crate::config::ModelSettings::default());
    let all = c.warnings.join("\n");
    assert!(
        all.contains("`provider` ignored") && all.contains("openai-chat"),
        "{all}"
    );
    assert!(all.contains("`temperature` 3 ignored"), "{all}");
    assert!(all.contains("`max_turns` 0 ignored"), "{all}");
    assert_eq!(c.servers.len(), 1);
}

/// `[settings] roots`: relative folders start from the config's, `~/` from the home folder,
/// `${VAR}` is expanded; each is its real path, once; what is not a folder is left out with a
/// warning that says why, and the rest still apply.
#[test]
fn roots_are_real_folders_and_the_rest_are_left_out_with_why() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir_all(d.join("home/code")).unwrap();
    std::fs::create_dir_all(d.join("project/sub")).unwrap();
    std::fs::write(d.join("project/file.txt"), "x").unwrap();
    let home = d.join("home").display().to_string();
    let env = move |name: &str| match name {
        "HOME" => Some(home.clone()),
        "SUB" => Some("sub".into()),
        _ => None,
    };
    let path = d.join("project/switchboard.toml");
    let text = r#"
[settings]
roots = [".", "~/code", "${SUB}", "./sub/..", "file.txt", "missing", "${NOPE}"]
"#;
    let c = Config::parse(&path, text, &env).unwrap();
    let real = |p: &str| std::fs::canonicalize(d.join(p)).unwrap();
    assert_eq!(
        c.settings.roots,
        [real("project"), real("home/code"), real("project/sub")]
    );
    let roots = c.roots();
    assert_eq!(roots.len(), 3);
    assert!(roots[1].uri.starts_with("file:///") && roots[1].uri.ends_with("/home/code"));
    assert_eq!(roots[1].name.as_deref(), Some("code"));
    let said = c.warnings.join("\n");
    for left in [
        "\"file.txt\" left out",
        "is not a folder",
        "\"missing\" left out",
        "NOPE is not set",
    ] {
        assert!(said.contains(left), "{left}: {said}");
    }
    // None written: none offered.
    let c = Config::parse(&path, "[settings]\n", &env).unwrap();
    assert!(c.roots().is_empty());
}

/// A server's own `roots`: resolved as `[settings] roots` are (from the config's folder), in
/// place of those for that server only; `roots = []` offers it none; one that is not a folder
/// is left out with a warning naming the server, and the server still runs.
#[test]
fn a_servers_own_roots_replace_the_settings_ones_for_it_alone() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir_all(d.join("project/docs")).unwrap();
    std::fs::create_dir_all(d.join("project/code")).unwrap();
    let path = d.join("project/switchboard.toml");
    let text = r#"
[settings]
roots = ["docs"]

[servers.fs]
command = "fs"
roots = ["code", "./code", "missing"]

[servers.none]
command = "none"
roots = []

[servers.plain]
command = "plain"
"#;
    let c = Config::parse(&path, text, &|_| None).unwrap();
    let real = |p: &str| std::fs::canonicalize(d.join(p)).unwrap();
    let root = |p: &str| switchboard_mcp::Root::folder(&real(p)).unwrap();
    assert_eq!(c.roots(), [root("project/docs")]);
    let spec = |name: &str| {
        c.servers
            .iter()
            .find(|s| s.name() == name)
            .unwrap()
            .spec
            .clone()
    };
    assert_eq!(spec("fs").roots, Some(vec![root("project/code")]));
    assert_eq!(spec("none").roots, Some(Vec::new()));
    assert_eq!(spec("plain").roots, None);
    let said = c.warnings.join("\n");
    assert!(
        said.contains("server \"fs\": roots: \"missing\" left out"),
        "{said}"
    );
    assert!(c.disabled.is_empty(), "{:?}", c.disabled);
}

/// A model name that plainly belongs to a provider picks it when nothing names one: from a flag
/// first, else from the config's own model when the config names no provider or URL; a URL
/// given, or a config provider of the same family, keeps things as they are.
#[test]
fn a_model_name_picks_its_provider_when_none_is_named() {
    use switchboard_core::Dialect::{self, Anthropic, Gemini, OpenAiChat, OpenAiResponses};
    let settings =
        |provider: Option<Dialect>, model: Option<&str>, base_url: Option<&str>| ModelSettings {
            provider,
            model: model.map(String::from),
            base_url: base_url.map(String::from),
            ..ModelSettings::default()
        };
    let none = settings(None, None, None);
    assert_eq!(none.provider_for(None, None, None), None);
    assert_eq!(
        none.provider_for(None, Some("gpt-5"), None),
        Some(OpenAiResponses)
    );
    assert_eq!(
        none.provider_for(None, Some("o4-mini"), None),
        Some(OpenAiResponses)
    );
    assert_eq!(
        none.provider_for(None, Some("gemini-2.5-pro"), None),
        Some(Gemini)
    );
    assert_eq!(
        none.provider_for(None, Some("claude-opus-4-7"), None),
        Some(Anthropic)
    );
    assert_eq!(none.provider_for(None, Some("llama3:8b"), None), None);
    // A flag's provider, or a URL, says more than a name.
    assert_eq!(
        none.provider_for(Some(OpenAiChat), Some("gpt-5"), None),
        Some(OpenAiChat)
    );
    assert_eq!(
        none.provider_for(None, Some("gpt-5"), Some("http://localhost:8000/v1")),
        None
    );
    // The config's own model, when it names no provider or URL.
    assert_eq!(
        settings(None, Some("gpt-4.1"), None).provider_for(None, None, None),
        Some(OpenAiResponses)
    );
    let local = settings(None, Some("gpt-oss-20b"), Some("http://localhost:8000/v1"));
    assert_eq!(local.provider_for(None, None, None), None);
    // A config of OpenAI's Chat API keeps it (and its URL) for another OpenAI model.
    let chat = settings(
        Some(OpenAiChat),
        Some("gpt-4.1"),
        Some("https://proxy.example/v1"),
    );
    assert_eq!(chat.provider_for(None, Some("gpt-5"), None), None);
    assert_eq!(
        chat.for_provider(chat.provider_for(None, Some("gpt-5"), None))
            .base_url
            .as_deref(),
        Some("https://proxy.example/v1")
    );
    // A flag's model of another provider leaves the config's provider, URL and key out.
    let claude = settings(
        Some(Anthropic),
        Some("claude-sonnet-4-5"),
        Some("https://gw.example"),
    );
    let picked = claude.for_provider(claude.provider_for(None, Some("gemini-2.5-flash"), None));
    assert_eq!((picked.provider, picked.base_url), (Some(Gemini), None));
    assert_eq!(claude.provider_for(None, None, None), None);
}

/// `[settings] max_cost` is a cost limit in US dollars; one that is not an amount is left out,
/// saying why.
#[test]
fn a_cost_limit_is_read_from_the_settings() {
    use switchboard_core::rent::Usd;
    let c = parse("sb.toml", "[settings]\nmax_cost = 0.25\n").unwrap();
    assert_eq!(c.settings.model.max_cost, Usd::parse("0.25").ok());
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    for bad in ["-1", "0.0000001"] {
        let c = parse("sb.toml", &format!("[settings]\nmax_cost = {bad}\n")).unwrap();
        assert_eq!(c.settings.model.max_cost, None, "{bad}");
        assert!(
            c.warnings
                .iter()
                .any(|w| w.contains("`max_cost`") && w.contains("ignored")),
            "{bad}: {:?}",
            c.warnings
        );
    }
}

/// `[settings] read_resources`: when the model gets switchboard's `read_resource` tool; a word
/// it does not take is a warning, and the default stays.
#[test]
fn read_resources_is_read_from_the_settings() {
    use crate::resource_tool::ReadResources;
    let c = parse("sb.toml", "[settings]\nread_resources = \"always\"\n").unwrap();
    assert_eq!(c.settings.read_resources, ReadResources::Always);
    let c = parse("sb.toml", "").unwrap();
    assert_eq!(c.settings.read_resources, ReadResources::Linked);
    let c = parse("sb.toml", "[settings]\nread_resources = \"sometimes\"\n").unwrap();
    assert_eq!(c.settings.read_resources, ReadResources::Linked);
    assert!(
        c.warnings
            .iter()
            .any(|w| w
                .contains("`read_resources` \"sometimes\" ignored: it is linked, always or never")),
        "{:?}",
        c.warnings
    );
}
