//! LibreChat's `librechat.yaml`, read as LibreChat writes it.

use super::*;

/// LibreChat's `librechat.yaml`: names as written, its transports and millisecond timeouts, a
/// per-user `{{NAME}}` read from the environment (a server whose variable is unset says which to
/// set), WebSocket refused with the reason, the rest of the file LibreChat's own.
#[test]
fn a_librechat_yaml_is_read_as_librechat_writes_it() {
    let text = r#"version: 1.2.1
cache: true
endpoints:
  custom: []
mcpServers:
  GitHub:
    type: stdio
    command: npx
    args: ["-y", "@modelcontextprotocol/server-github"]
    env:
      GITHUB_PERSONAL_ACCESS_TOKEN: "${GITHUB_TOKEN}"
    timeout: 60000
    serverInstructions: true
  everything:
    url: http://localhost:3001/sse
  sheets:
    type: sse
    url: https://mcp.composio.dev/googlesheets/x
    headers:
      X-User-ID: "{{LIBRECHAT_USER_ID}}"
  docs:
    type: streamable-http
    url: https://docs.example/api/
    headers:
      Authorization: "Bearer ${GITHUB_TOKEN}"
    initTimeout: 15000
  live:
    type: websocket
    url: ws://localhost:8080
"#;
    let c = parse("/srv/librechat/librechat.yaml", text).unwrap();
    let names: Vec<&str> = c.servers.iter().map(|s| s.name()).collect();
    assert_eq!(names, ["GitHub", "everything", "docs"], "{:?}", c.disabled);
    let github = server_of(&c, "GitHub");
    assert_eq!(
        env_of(github),
        [(
            "GITHUB_PERSONAL_ACCESS_TOKEN".to_string(),
            "ghp_secret_value".to_string()
        )]
    );
    assert_eq!(github.spec.call_timeout, std::time::Duration::from_secs(60));
    let docs = server_of(&c, "docs");
    assert!(!docs.legacy_sse);
    assert_eq!(
        docs.spec.startup_timeout,
        std::time::Duration::from_secs(15)
    );
    assert_eq!(
        env_of(docs),
        [(
            "Authorization".to_string(),
            "Bearer ghp_secret_value".to_string()
        )]
    );
    assert!(
        reason(&c, "sheets")
            .contains("reads the environment variable LIBRECHAT_USER_ID, which is not set"),
        "{:?}",
        c.disabled
    );
    assert!(reason(&c, "live").contains("WebSocket"), "{:?}", c.disabled);
    // As in LibreChat, only a server with `serverInstructions` has its instructions read.
    assert_eq!(github.instructions, ServerInstructions::Server);
    assert_eq!(docs.instructions, ServerInstructions::Off);
}
