//! mcp-proxy's `config.json`, read as mcp-proxy reads it.

use super::*;

/// mcp-proxy's `config.json`, read as mcp-proxy reads it: its tool filter (exact names, `allow`
/// or `block`), `options.disabled`, a `url` alone as the legacy SSE transport, and Go's
/// environment variables, empty when unset.
#[test]
fn an_mcp_proxy_config_is_read_as_mcp_proxy_reads_it() {
    let text = r#"{
  "mcpProxy": {"baseURL": "https://mcp.example.com", "addr": ":9090", "name": "MCP Proxy",
               "type": "streamable-http", "options": {"authTokens": ["t"]}},
  "mcpServers": {
    "github": {
      "command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"],
      "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "$GITHUB_TOKEN", "OTHER": "${NOT_SET}"},
      "options": {"toolFilter": {"mode": "block", "list": ["create_or_update_file"]}}
    },
    "amap": {"url": "https://mcp.amap.com/sse?key=x"},
    "docs": {"url": "https://docs.example/mcp", "transportType": "streamable-http",
             "options": {"toolFilter": {"mode": "allow", "list": ["search"]}}},
    "off": {"command": "x", "options": {"disabled": true}},
    "odd": {"command": "y", "options": {"toolFilter": {"mode": "deny", "list": ["a"]}}}
  }
}"#;
    let c = parse("/srv/mcp-proxy/config.json", text).unwrap();
    let names: Vec<&str> = c.servers.iter().map(|s| s.name()).collect();
    assert_eq!(names, ["github", "amap", "docs", "odd"], "{:?}", c.disabled);
    let github = server_of(&c, "github");
    assert_eq!(
        env_of(github),
        [
            (
                "GITHUB_PERSONAL_ACCESS_TOKEN".to_string(),
                "ghp_secret_value".to_string()
            ),
            ("OTHER".to_string(), String::new()),
        ]
    );
    assert!(!github.filter.permits("create_or_update_file") && github.filter.permits("get_issue"));
    assert_eq!(
        github.filter.list_hiding("create_or_update_file"),
        "options.toolFilter (block)"
    );
    assert!(server_of(&c, "amap").legacy_sse);
    let docs = server_of(&c, "docs");
    assert!(!docs.legacy_sse && docs.filter.permits("search") && !docs.filter.permits("fetch"));
    assert!(
        reason(&c, "off").contains("options.disabled"),
        "{:?}",
        c.disabled
    );
    assert!(
        c.warnings
            .iter()
            .any(|w| w.contains("\"odd\"") && w.contains("skips")),
        "{:?}",
        c.warnings
    );
}
