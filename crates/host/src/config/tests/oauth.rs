//! Per-server OAuth settings, from `switchboard.toml` and Claude Code's `.mcp.json`: read, refused
//! when bad, and a literal client secret warned about.

use super::*;

#[test]
fn per_server_oauth_reads_from_toml_and_claude_codes_mcp_json() {
    let c = parse(
        "switchboard.toml",
        r#"
[servers.github]
url = "https://api.githubcopilot.com/mcp/"
[servers.github.oauth]
client_id = "Iv1.abc"
client_secret = "${GITHUB_TOKEN}"
scopes = ["repo", "read:org"]
redirect_port = 8765

[servers.plain]
url = "https://mcp.example.com/mcp"
"#,
    )
    .unwrap();
    let own = c.servers[0].oauth.clone().unwrap();
    assert_eq!(own.client_id.as_deref(), Some("Iv1.abc"));
    assert_eq!(
        own.client_secret.as_ref().map(|s| s.expose()),
        Some("ghp_secret_value")
    );
    assert_eq!(own.scopes, ["repo", "read:org"]);
    assert_eq!(own.redirect_port, Some(8765));
    assert!(c.servers[1].oauth.is_none());
    assert_eq!(c.server_oauth().keys().collect::<Vec<_>>(), ["github"]);
    // The secret is never printed.
    assert!(!format!("{c:?}").contains("ghp_secret_value"));
    // `.mcp.json` as Claude Code writes it: clientId, callbackPort, scopes as one string;
    // its authServerMetadataUrl is not used and not an error.
    let c = parse(
        ".mcp.json",
        r#"{"mcpServers": {"gh": {"type": "http", "url": "https://api.githubcopilot.com/mcp/",
            "oauth": {"clientId": "Iv1.xyz", "callbackPort": 8080, "scopes": "repo read:org",
                      "authServerMetadataUrl": "https://github.com/.well-known/openid-configuration"}}}}"#,
    )
    .unwrap();
    let own = c.servers[0].oauth.clone().unwrap();
    assert_eq!(own.client_id.as_deref(), Some("Iv1.xyz"));
    assert_eq!(own.redirect_port, Some(8080));
    assert_eq!(own.scopes, ["repo", "read:org"]);
    assert!(own.client_secret.is_none());
}

#[test]
fn bad_oauth_settings_disable_only_that_server() {
    let c = parse(
        "switchboard.toml",
        r#"
[servers.port]
url = "https://a.example/mcp"
oauth = { client_id = "x", redirect_port = 70000 }

[servers.secret_alone]
url = "https://b.example/mcp"
oauth = { client_secret = "s" }

[servers.stdio]
command = "x"
oauth = { client_id = "x" }

[servers.empty]
url = "https://c.example/mcp"
oauth = { client_id = "${NOT_SET_ANYWHERE:-}" }

[servers.scope]
url = "https://d.example/mcp"
oauth = { scopes = ["repo", "read org"] }

[servers.unset]
url = "https://e.example/mcp"
oauth = { client_id = "x", client_secret = "${NOT_SET_ANYWHERE}" }

[servers.good]
url = "https://f.example/mcp"
oauth = { scopes = "repo" }
"#,
    )
    .unwrap();
    let usable: Vec<&str> = c.servers.iter().map(|s| s.name()).collect();
    assert_eq!(usable, ["good"]);
    for (server, needle) in [
        ("port", "redirect_port 70000 is not a port"),
        ("secret_alone", "client_secret needs client_id"),
        ("stdio", "OAuth applies to HTTP servers"),
        ("empty", "client_id is empty"),
        ("scope", "\"read org\""),
        ("unset", "NOT_SET_ANYWHERE"),
    ] {
        let r = reason(&c, server);
        assert!(r.contains(needle), "{server}: {r}");
        assert!(r.contains("switchboard.toml:"), "{server} says where: {r}");
    }
}

#[test]
fn a_literal_client_secret_is_a_warning_that_recommends_an_environment_variable() {
    let c = parse(
        "switchboard.toml",
        r#"
[servers.literal]
url = "https://a.example/mcp"
[servers.literal.oauth]
client_id = "Iv1.abc"
client_secret = "hunter2-literal"

[servers.from_env]
url = "https://b.example/mcp"
oauth = { client_id = "Iv1.def", client_secret = "${GITHUB_TOKEN}" }
"#,
    )
    .unwrap();
    // Both servers are usable; only the literal one is warned about, at its line.
    assert_eq!(c.servers.len(), 2);
    assert_eq!(c.warnings.len(), 1, "{:?}", c.warnings);
    let w = &c.warnings[0];
    assert!(w.starts_with("switchboard.toml:6:"), "{w}");
    assert!(w.contains("\"literal\"") && w.contains("${VAR}"), "{w}");
    assert!(!w.contains("hunter2"), "{w}");
    // The JSON form (as read from `.mcp.json`) is warned about the same way.
    let c = parse(
        ".mcp.json",
        r#"{"mcpServers": {"gh": {"type": "http", "url": "https://a.example/mcp",
            "oauth": {"clientId": "Iv1.xyz", "client_secret": "hunter2-literal"}}}}"#,
    )
    .unwrap();
    assert_eq!(c.servers.len(), 1);
    assert_eq!(c.warnings.len(), 1, "{:?}", c.warnings);
    assert!(
        c.warnings[0].starts_with(".mcp.json:2:"),
        "{}",
        c.warnings[0]
    );
    assert!(!c.warnings[0].contains("hunter2"));
}

/// `grant = "client_credentials"`: a client secret, or a private key (in the file, from a
/// variable, or from a file of its own) to sign an assertion with; what cannot work disables
/// only that server, saying why; a key written into the config is warned about.
#[test]
fn client_credentials_take_a_secret_or_a_private_key() {
    let dir = tempfile::tempdir().unwrap();
    let pem = "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEE\n-----END EC PRIVATE KEY-----\n";
    std::fs::write(dir.path().join("sb.pem"), pem).unwrap();
    let text = r#"
[servers.secret]
url = "https://a.example/mcp"
oauth = { grant = "client_credentials", client_id = "svc", client_secret = "${GITHUB_TOKEN}", scopes = ["mcp:read"] }

[servers.keyfile]
url = "https://b.example/mcp"
oauth = { grant = "client_credentials", client_id = "svc", private_key_file = "sb.pem", signing_algorithm = "es256" }

[servers.no_secret]
url = "https://c.example/mcp"
oauth = { grant = "client_credentials", client_id = "svc" }

[servers.no_id]
url = "https://d.example/mcp"
oauth = { grant = "client_credentials", private_key_file = "sb.pem" }

[servers.wrong_grant]
url = "https://e.example/mcp"
oauth = { grant = "password", client_id = "svc" }

[servers.key_without_grant]
url = "https://f.example/mcp"
oauth = { client_id = "svc", private_key_file = "sb.pem" }

[servers.missing_file]
url = "https://g.example/mcp"
oauth = { grant = "client_credentials", client_id = "svc", private_key_file = "gone.pem" }

[servers.not_pem]
url = "https://h.example/mcp"
oauth = { grant = "client_credentials", client_id = "svc", private_key = "hunter2" }

[servers.bad_alg]
url = "https://i.example/mcp"
oauth = { grant = "client_credentials", client_id = "svc", private_key_file = "sb.pem", signing_algorithm = "HS256" }

[servers.literal_key]
url = "https://j.example/mcp"
[servers.literal_key.oauth]
grant = "client_credentials"
client_id = "svc"
private_key = """
-----BEGIN PRIVATE KEY-----
MIGH
-----END PRIVATE KEY-----
"""
"#;
    let c = Config::parse(&dir.path().join("switchboard.toml"), text, &env).unwrap();
    let usable: Vec<&str> = c.servers.iter().map(|s| s.name()).collect();
    assert_eq!(usable, ["secret", "keyfile", "literal_key"]);
    let secret = c.servers[0].oauth.clone().unwrap();
    assert_eq!(secret.grant, switchboard_mcp::Grant::ClientCredentials);
    assert_eq!(
        secret.client_secret.as_ref().map(|s| s.expose()),
        Some("ghp_secret_value")
    );
    assert_eq!(secret.scopes, ["mcp:read"]);
    let keyfile = c.servers[1].oauth.clone().unwrap();
    assert_eq!(keyfile.private_key.as_ref().map(|s| s.expose()), Some(pem));
    assert_eq!(keyfile.signing_algorithm.as_deref(), Some("ES256"));
    // The key is never printed.
    assert!(!format!("{c:?}").contains("MHcCAQEE"));
    for (server, needle) in [
        ("no_secret", "needs client_secret, or private_key"),
        ("no_id", "needs client_id"),
        (
            "wrong_grant",
            "grant \"password\" is not one switchboard uses",
        ),
        ("key_without_grant", "set grant = \"client_credentials\""),
        ("missing_file", "gone.pem"),
        ("not_pem", "not a PEM private key"),
        ("bad_alg", "\"HS256\" is not one of"),
    ] {
        let r = reason(&c, server);
        assert!(r.contains(needle), "{server}: {r}");
    }
    let said = c.warnings.join("\n");
    assert!(
        said.contains("\"literal_key\": the OAuth private key is written in the config file"),
        "{said}"
    );
    assert!(!said.contains("MIGH"), "{said}");
}
