//! `switchboard conformance-client URL` (hidden): the client under test for the MCP conformance
//! harness (`@modelcontextprotocol/conformance client --command ...`). It is switchboard's own
//! session layer: `Sessions::start` on one HTTP server spec, then the normal list/call/read/get
//! path over everything the server offers. Scenario-specific behaviour is limited to what the
//! harness scenarios demand of an unattended client:
//! - elicitation requests are accepted with the schema's defaults (SEP-1034);
//! - OAuth runs headless (the test authorization servers approve at once), with the
//!   pre-registered client from `MCP_CONFORMANCE_CONTEXT` when the scenario gives one;
//! - `MCP_CONFORMANCE_PROTOCOL_VERSION=2026-07-28` opens the session with the stateless
//!   revision (`server/discover`), older versions with `initialize`;
//! - a tool named `json_schema_echo` gets another tool's `inputSchema` as its `schema`
//!   argument (the schema-preservation scenario asks the client to send back what it saw);
//! - tool arguments the context lists under `toolCalls` are used as given.
//!
//! Exit codes: 0 when the session started and every request got an answer (tool errors
//! included), 1 when the session did not start or a request failed.

use std::process::ExitCode;
use std::time::Duration;

use serde_json::{Map, Value, json};
use switchboard_core::{Catalog, ServerSpec, Tool};
use switchboard_mcp::{
    AuthMode, ClientOptions, Elicitation, Grant, Lifecycle, OAuthOptions, Sessions, TokenStorage,
};

/// The name the server gets in the session layer (it appears in errors only).
const SERVER: &str = "conformance";

/// The redirect URI the test authorization servers send codes to (never listened on: the
/// headless agent reads the redirect's `Location`).
const REDIRECT_URI: &str = "http://localhost:3000/callback";

/// A client ID metadata document URL (SEP-991) for authorization servers that support them.
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

/// Arguments of the hidden `conformance-server` command.
#[derive(clap::Args, Debug)]
pub struct FixtureArgs {
    /// Serve Streamable HTTP at http://ADDR/mcp (port 0 picks one; the URL is printed on
    /// stderr) instead of stdin/stdout.
    #[arg(long, value_name = "ADDR")]
    http: Option<std::net::SocketAddr>,
}

/// Run the conformance fixture server (the server scenarios' tools, resources and prompts).
pub async fn serve_fixture(args: FixtureArgs) -> anyhow::Result<ExitCode> {
    use switchboard_gateway::demo::conformance;
    match args.http {
        Some(addr) => {
            conformance::serve_http(addr, |url| {
                eprintln!("conformance fixture: listening on {url}")
            })
            .await?
        }
        None => conformance::serve_stdio().await?,
    }
    Ok(ExitCode::SUCCESS)
}

/// Arguments of the hidden `conformance-client` command.
#[derive(clap::Args, Debug)]
pub struct ConformanceArgs {
    /// The server URL; the harness appends it as the last argument.
    url: String,
}

/// What the harness tells the client through its environment.
struct Scenario {
    name: String,
    context: Value,
    version: Option<String>,
}

impl Scenario {
    fn from_env() -> Self {
        let context = std::env::var("MCP_CONFORMANCE_CONTEXT")
            .ok()
            .and_then(|s| serde_json::from_str(&s).ok())
            .unwrap_or(Value::Null);
        Self {
            name: std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default(),
            context,
            version: std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION").ok(),
        }
    }

    /// Tool arguments the scenario prescribes: `context.toolCalls[] = {name, arguments}`.
    fn given_calls(&self) -> Map<String, Value> {
        let mut calls = Map::new();
        for call in self
            .context
            .get("toolCalls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let (Some(name), Some(args)) = (
                call.get("name").and_then(Value::as_str),
                call.get("arguments").filter(|a| a.is_object()),
            ) {
                calls.insert(name.to_string(), args.clone());
            }
        }
        calls
    }

    fn context_str(&self, key: &str) -> Option<String> {
        self.context
            .get(key)
            .and_then(Value::as_str)
            .map(str::to_string)
    }

    /// The session-layer options this scenario needs.
    fn options(&self) -> ClientOptions {
        // Revisions are dates; from 2026-07-28 on there is no `initialize`.
        let modern = self.version.as_deref().is_some_and(|v| v >= "2026-07-28");
        ClientOptions {
            lifecycle: if modern {
                Lifecycle::Modern
            } else {
                Lifecycle::Initialize
            },
            elicitation: Elicitation::AcceptDefaults,
            oauth: OAuthOptions {
                mode: AuthMode::Headless,
                storage: TokenStorage::Memory,
                redirect_uri: REDIRECT_URI.to_string(),
                client_name: "switchboard-conformance".to_string(),
                client_metadata_url: Some(CLIENT_METADATA_URL.to_string()),
                client_id: self.context_str("client_id"),
                client_secret: self
                    .context_str("client_secret")
                    .map(switchboard_core::Secret::new),
                // The client-credentials extension's scenarios (SEP-1046) give the client's
                // own credentials: a secret, or a private key to sign an assertion with.
                grant: if self.name.starts_with("auth/client-credentials") {
                    Grant::ClientCredentials
                } else {
                    Grant::AuthorizationCode
                },
                private_key: self
                    .context_str("private_key_pem")
                    .map(switchboard_core::Secret::new),
                signing_algorithm: self.context_str("signing_algorithm"),
                ..OAuthOptions::default()
            },
        }
    }
}

/// Run the client against `args.url`.
pub async fn run(args: ConformanceArgs) -> anyhow::Result<ExitCode> {
    let scenario = Scenario::from_env();
    eprintln!(
        "conformance-client: scenario={:?} version={:?} url={}",
        scenario.name, scenario.version, args.url
    );
    switchboard_mcp::configure(scenario.options());
    let mut spec = ServerSpec::http(SERVER, args.url.clone());
    spec.startup_timeout = Duration::from_secs(20);
    spec.call_timeout = Duration::from_secs(10);
    let sessions = Sessions::start(vec![spec]).await;
    let status = sessions.statuses().into_iter().next();
    if let Some(s) = status.as_ref().filter(|s| !s.state.is_ready()) {
        eprintln!("conformance-client: not connected: {}", s.state.describe());
        sessions.shutdown().await;
        return Ok(ExitCode::from(1));
    }
    if let Some(s) = &status {
        eprintln!(
            "conformance-client: connected, protocol {}, {} tools, {} resources, {} prompts",
            s.protocol_version.as_deref().unwrap_or("?"),
            s.tools,
            s.resources,
            s.prompts
        );
    }
    let failures = exercise(&sessions, &sessions.catalog(), &scenario.given_calls()).await;
    sessions.shutdown().await;
    Ok(if failures == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Call every tool, read every resource, get every prompt; count the requests that failed.
async fn exercise(sessions: &Sessions, catalog: &Catalog, given: &Map<String, Value>) -> usize {
    let mut failures = 0;
    let Some(server) = catalog.servers.get(SERVER) else {
        return 0;
    };
    let tools: Vec<&Tool> = server.tools.iter().map(|e| &e.def).collect();
    for tool in &tools {
        let args = match given.get(&tool.name) {
            Some(Value::Object(args)) => args.clone(),
            _ => arguments(tool, &tools),
        };
        match sessions.call_tool(SERVER, &tool.name, args).await {
            Ok(result) => eprintln!(
                "conformance-client: tools/call {} -> is_error={}",
                tool.name, result.is_error
            ),
            Err(e) => {
                failures += 1;
                eprintln!("conformance-client: tools/call {} failed: {e}", tool.name);
            }
        }
    }
    for resource in &server.resources {
        let uri = &resource.def.uri;
        if let Err(e) = sessions.read_resource(SERVER, uri).await {
            failures += 1;
            eprintln!("conformance-client: resources/read {uri} failed: {e}");
        }
    }
    for prompt in &server.prompts {
        let mut args = Map::new();
        for arg in &prompt.def.arguments {
            if arg.required.unwrap_or(false) {
                args.insert(arg.name.clone(), json!("test"));
            }
        }
        if let Err(e) = sessions.get_prompt(SERVER, &prompt.def.name, args).await {
            failures += 1;
            eprintln!(
                "conformance-client: prompts/get {} failed: {e}",
                prompt.def.name
            );
        }
    }
    failures
}

/// Arguments for one tool call: the schema's default, const, first enum value or example for
/// each property, else a plain value of its type; nullable properties are left out.
fn arguments(tool: &Tool, all: &[&Tool]) -> Map<String, Value> {
    if tool.name == "json_schema_echo"
        && let Some(other) = all.iter().find(|t| t.name != tool.name)
    {
        let mut args = Map::new();
        args.insert("schema".to_string(), other.input_schema.clone());
        return args;
    }
    let mut args = Map::new();
    let Some(props) = tool
        .input_schema
        .get("properties")
        .and_then(Value::as_object)
    else {
        return args;
    };
    for (name, prop) in props {
        if let Some(value) = sample(prop) {
            args.insert(name.clone(), value);
        }
    }
    args
}

/// A plausible value for one property schema, or `None` to leave it out.
fn sample(prop: &Value) -> Option<Value> {
    for key in ["default", "const"] {
        if let Some(v) = prop.get(key) {
            return Some(v.clone());
        }
    }
    if let Some(first) = prop
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return Some(first.clone());
    }
    if let Some(first) = prop
        .get("examples")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return Some(first.clone());
    }
    let types: Vec<&str> = match prop.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if types.contains(&"null") {
        return None;
    }
    Some(match types.first().copied() {
        Some("number") | Some("integer") => json!(1),
        Some("boolean") => json!(true),
        Some("string") => json!("test"),
        Some("array") => json!([]),
        Some("object") => json!({}),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_prefer_what_the_schema_offers() {
        assert_eq!(
            sample(&json!({"type": "integer", "default": 7})),
            Some(json!(7))
        );
        assert_eq!(sample(&json!({"enum": ["b", "c"]})), Some(json!("b")));
        assert_eq!(sample(&json!({"type": "number"})), Some(json!(1)));
        assert_eq!(sample(&json!({"type": ["string", "null"]})), None);
        assert_eq!(sample(&json!({})), None);
    }

    #[test]
    fn the_echo_tool_gets_the_other_tools_schema() {
        let schema =
            json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object"});
        let focal = Tool::new("focal", "d", schema.clone());
        let echo = Tool::new("json_schema_echo", "d", json!({"type": "object"}));
        let args = arguments(&echo, &[&focal, &echo]);
        assert_eq!(args["schema"], schema);
    }

    #[test]
    fn modern_versions_use_the_stateless_lifecycle() {
        let mut s = Scenario {
            name: "tools_call".into(),
            context: json!({"client_id": "id1"}),
            version: Some("2026-07-28".into()),
        };
        assert_eq!(s.options().lifecycle, Lifecycle::Modern);
        assert_eq!(s.options().oauth.client_id.as_deref(), Some("id1"));
        s.version = Some("2025-11-25".into());
        assert_eq!(s.options().lifecycle, Lifecycle::Initialize);
        s.version = None;
        assert_eq!(s.options().lifecycle, Lifecycle::Initialize);
    }
}
