//! mcphost's config, YAML or JSON, read as mcphost reads it.

use super::*;
use switchboard_core::Dialect;

/// mcphost's config, YAML or JSON, read as mcphost (through viper) reads it: names in lower
/// case, `environment` names in upper case, `${env://...}` its only variables, a builtin server
/// disabled saying why, and a bad entry pointed at while the others run.
#[test]
fn an_mcphost_config_is_read_as_mcphost_reads_it() {
    let text = r#"# mcphost
mcpServers:
  GitHub:
    type: "local"
    command: ["npx", "-y", "@modelcontextprotocol/server-github"]
    environment:
      github_personal_access_token: "${env://GITHUB_TOKEN}"
      literal: "${HOME}"
    allowedTools: ["get_issue"]
  search:
    type: remote
    url: "https://search.example/mcp"
    headers: ["Authorization: Bearer ${env://SEARCH_KEY:-anonymous}"]
  legacy:
    command: uvx
    args: ["mcp-server-time"]
  old-sse:
    url: "https://old.example/sse"
  fs:
    type: "builtin"
    name: "fs"
  broken:
    type: "local"
    command: ["x"]
    allowedTools: ["a"]
    excludedTools: ["b"]
model: "anthropic/claude-sonnet-4-5"
"#;
    let c = parse("/home/u/.mcphost.yml", text).unwrap();
    let names: Vec<&str> = c.servers.iter().map(|s| s.name()).collect();
    assert_eq!(
        names,
        ["github", "search", "legacy", "old-sse"],
        "{:?}",
        c.disabled
    );
    let github = server_of(&c, "github");
    assert_eq!(
        env_of(github),
        [
            (
                "GITHUB_PERSONAL_ACCESS_TOKEN".to_string(),
                "ghp_secret_value".to_string()
            ),
            ("LITERAL".to_string(), "${HOME}".to_string()),
        ]
    );
    assert!(github.filter.permits("get_issue") && !github.filter.permits("create_issue"));
    assert_eq!(github.filter.list_hiding("create_issue"), "allowedTools");
    assert_eq!(
        env_of(server_of(&c, "search")),
        [("Authorization".to_string(), "Bearer anonymous".to_string())]
    );
    assert!(server_of(&c, "old-sse").legacy_sse);
    assert_eq!(
        transports(&c)[2],
        ("uvx".to_string(), vec!["mcp-server-time".to_string()])
    );
    assert!(
        reason(&c, "fs").contains("runs inside mcphost"),
        "{:?}",
        c.disabled
    );
    let broken = reason(&c, "broken");
    assert!(
        broken.starts_with("/home/u/.mcphost.yml:22:3: server \"broken\"")
            && broken.contains("mutually exclusive"),
        "{broken}"
    );
    // The JSON form, by its name or by entries only mcphost writes.
    let json =
        r#"{"mcpServers": {"Time": {"type": "local", "command": ["uvx", "mcp-server-time"]}}}"#;
    for file in ["/home/u/.mcphost.json", "/home/u/servers.json"] {
        let c = parse(file, json).unwrap();
        assert_eq!(
            transports(&c),
            [("uvx".to_string(), vec!["mcp-server-time".to_string()])],
            "{file}"
        );
        assert_eq!(c.servers[0].name(), "time");
    }
    // A `command` list alone does not make another host's file mcphost's (regression: the
    // names were lower-cased; found by config_hostile's property test).
    let c = parse(
        "/home/u/mcp.json",
        r#"{"mcpServers": {"A": "x", "a": {"command": []}}}"#,
    )
    .unwrap();
    let mut names: Vec<&str> = c.server_names().collect();
    names.sort();
    assert_eq!(names, ["A", "a"], "{:?}", c.disabled);
    // Two names viper reads as one.
    let c = parse(
        "/home/u/.mcphost.yml",
        "mcpServers:\n  a:\n    command: [x]\n  A:\n    command: [y]\n",
    )
    .unwrap();
    assert_eq!(c.servers.len(), 1);
    assert!(reason(&c, "a").contains("lower case"), "{:?}", c.disabled);
    // mcphost's starting file, no servers yet.
    let c = parse("/home/u/.mcphost.yml", "mcpServers:\n# model: x\n").unwrap();
    assert!(c.servers.is_empty() && c.disabled.is_empty());
    assert_eq!(c.settings.system_prompt, None);
}

/// mcphost's `system-prompt` is the user's system prompt: a file's text when it names a file
/// (relative to the working folder, as mcphost reads it), else the text itself.
#[test]
fn mcphost_s_system_prompt_is_read_as_mcphost_reads_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("prompts")).unwrap();
    std::fs::write(
        dir.path().join("prompts/assistant.md"),
        "\n  Answer briefly.\n\n",
    )
    .unwrap();
    let read = |file: &str, text: &str| {
        Config::parse_in(Path::new(file), text, &env, Some(dir.path().to_path_buf())).unwrap()
    };
    let servers = "mcpServers:\n  time:\n    command: [uvx, mcp-server-time]\n";
    let c = read(
        "/home/u/.mcphost.yml",
        &format!("{servers}system-prompt: \"You are terse.\"\n"),
    );
    assert_eq!(c.settings.system_prompt.as_deref(), Some("You are terse."));
    assert_eq!(c.servers.len(), 1);
    let c = read(
        "/home/u/.mcphost.yml",
        &format!("{servers}system-prompt: prompts/assistant.md\n"),
    );
    assert_eq!(c.settings.system_prompt.as_deref(), Some("Answer briefly."));
    assert!(c.inputs.contains(&dir.path().join("prompts/assistant.md")));
    // A path that names no file is the text itself, as in mcphost.
    let c = read(
        "/home/u/.mcphost.yml",
        &format!("{servers}system-prompt: prompts/missing.md\n"),
    );
    assert_eq!(
        c.settings.system_prompt.as_deref(),
        Some("prompts/missing.md")
    );
    // The JSON form.
    let c = read(
        "/home/u/.mcphost.json",
        r#"{"mcpServers": {}, "system-prompt": "Be kind."}"#,
    );
    assert_eq!(c.settings.system_prompt.as_deref(), Some("Be kind."));
    // Not text: warned about at its line, and the servers still run.
    let c = read(
        "/home/u/.mcphost.yml",
        &format!("{servers}system-prompt: [a, b]\n"),
    );
    assert_eq!(c.settings.system_prompt, None);
    assert_eq!(c.servers.len(), 1);
    assert!(
        c.warnings
            .iter()
            .any(|w| w.starts_with("/home/u/.mcphost.yml:4:1: `system-prompt` ignored")),
        "{:?}",
        c.warnings
    );
}

/// mcphost's model settings are `run`'s and `chat`'s defaults: its providers mapped to the APIs
/// they speak, `${env://...}` expanded, and what cannot be read named.
#[test]
fn mcphost_s_model_settings_are_read() {
    let servers = "mcpServers:\n  time:\n    command: [uvx, mcp-server-time]\n";
    let read = |extra: &str| parse("/home/u/.mcphost.yml", &format!("{servers}{extra}")).unwrap();
    let c = read(
        "model: \"anthropic/claude-sonnet-4-5-20250929\"\nmax-steps: 12\nmax-tokens: 900\ntemperature: 0.3\n",
    );
    let m = &c.settings.model;
    assert_eq!(m.provider, Some(Dialect::Anthropic));
    assert_eq!(m.model.as_deref(), Some("claude-sonnet-4-5-20250929"));
    assert_eq!(
        (m.max_turns, m.max_tokens, m.temperature),
        (Some(12), Some(900), Some(0.3))
    );
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    // The older `provider:model`; Ollama through its OpenAI-compatible API.
    let m = read("model: ollama:qwen2.5:3b\nprovider-url: http://gpu:11434\n")
        .settings
        .model;
    assert_eq!(m.provider, Some(Dialect::OpenAiChat));
    assert_eq!(m.model.as_deref(), Some("qwen2.5:3b"));
    assert_eq!(m.base_url.as_deref(), Some("http://gpu:11434/v1"));
    let m = read("model: ollama/llama3.2\n").settings.model;
    assert_eq!(m.base_url.as_deref(), Some("http://localhost:11434/v1"));
    let m = read("model: openrouter/anthropic/claude-3.5-sonnet\n")
        .settings
        .model;
    assert_eq!(m.model.as_deref(), Some("anthropic/claude-3.5-sonnet"));
    assert_eq!(m.base_url.as_deref(), Some("https://openrouter.ai/api/v1"));
    assert_eq!(m.api_key_env.as_deref(), Some("OPENROUTER_API_KEY"));
    let m = read("model: \"${env://MODEL:-google/gemini-2.5-pro}\"\n")
        .settings
        .model;
    assert_eq!(
        (m.provider, m.model.as_deref()),
        (Some(Dialect::Gemini), Some("gemini-2.5-pro"))
    );
    // mcphost's 0 steps is no limit: switchboard keeps its default.
    assert_eq!(read("max-steps: 0\n").settings.model.max_turns, None);
    // Named, not read; the servers still run.
    let c = read("model: bedrock/claude\nprovider-api-key: sk-secret\n");
    assert_eq!(c.settings.model.provider, None);
    assert_eq!(c.servers.len(), 1);
    let all = c.warnings.join("\n");
    assert!(
        all.contains("`model` ignored: mcphost's provider \"bedrock\""),
        "{all}"
    );
    assert!(all.contains("`provider-api-key` ignored"), "{all}");
    assert!(!all.contains("sk-secret"), "the key is never shown: {all}");
}
