//! `ClientOptions`: process-wide choices about how this host behaves as an MCP client: which
//! lifecycle it opens HTTP sessions with, how it answers elicitation requests, and how it
//! obtains OAuth tokens. Set once with [`configure`] before [`crate::Sessions::start`]; the
//! defaults suit an unattended host (plain `initialize`, decline elicitations, use stored OAuth
//! tokens but never start an authorization by itself).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, RwLock};

/// How an HTTP session is opened.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Lifecycle {
    /// The legacy `initialize` handshake pinned to 2025-11-25 (what every server up to that
    /// revision speaks, and what 2026-07-28 servers still accept).
    #[default]
    Initialize,
    /// Try the stateless 2026-07-28 revision first (`server/discover`, per-request `_meta`) and
    /// fall back to `initialize` at 2025-11-25 for servers that reject it.
    Modern,
}

/// How the host answers a server's `elicitation/create`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Elicitation {
    /// Decline: nobody is at hand to answer.
    #[default]
    Decline,
    /// Accept with every field the schema gives a `default` for (SEP-1034). Meant for
    /// unattended runs that want the server's own defaults.
    AcceptDefaults,
}

/// How OAuth authorization is carried out when a server demands it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AuthMode {
    /// Use tokens stored by `switchboard auth login` (refreshing them as needed); a server
    /// that needs a new authorization fails with a message saying how to log in.
    #[default]
    StoredOnly,
    /// Authorize without a person: fetch the authorization URL with redirects disabled and take
    /// the code from the redirect (authorization servers that approve without a login page,
    /// such as test servers). Used for step-up too.
    Headless,
}

/// How switchboard gets a server's access token.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Grant {
    /// A person approves at the authorization server (authorization code with PKCE).
    #[default]
    AuthorizationCode,
    /// The client's own credentials buy the token, with no person (OAuth client credentials,
    /// the MCP extension SEP-1046): a client secret, or a private key signing a JWT assertion
    /// (RFC 7523). For machines: a gateway, a CI job.
    ClientCredentials,
}

/// Where OAuth tokens live.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum TokenStorage {
    /// In the user's data directory (`oauth/` under switchboard's data dir), one 0600 file per
    /// server URL.
    #[default]
    UserData,
    /// In this directory instead (tests).
    Dir(PathBuf),
    /// Only in memory, for this process.
    Memory,
}

/// OAuth client settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OAuthOptions {
    /// How authorization happens.
    pub mode: AuthMode,
    /// Where tokens are kept.
    pub storage: TokenStorage,
    /// The redirect URI registered with the authorization server.
    pub redirect_uri: String,
    /// `client_name` for dynamic client registration.
    pub client_name: String,
    /// An HTTPS URL of a client ID metadata document (SEP-991), used as the client id when the
    /// authorization server supports it.
    pub client_metadata_url: Option<String>,
    /// A pre-registered client id (skips registration).
    pub client_id: Option<String>,
    /// The pre-registered client's secret, if it is confidential.
    pub client_secret: Option<switchboard_core::Secret>,
    /// How many step-up authorizations one request may trigger before its 403 is final.
    pub max_step_ups: u32,
    /// Scopes to ask for (empty: what the server's challenge or metadata says).
    pub scopes: Vec<String>,
    /// How the token is got.
    pub grant: Grant,
    /// For [`Grant::ClientCredentials`] with a signed assertion instead of a secret: the
    /// client's private key (PEM).
    pub private_key: Option<switchboard_core::Secret>,
    /// The assertion's signing algorithm (`RS256`, `ES256`, ...; default `RS256` for an RSA
    /// key, `ES256` for an EC one).
    pub signing_algorithm: Option<String>,
}

/// One server's own OAuth client settings (`[servers.NAME.oauth]`, or `"oauth"` in
/// `.mcp.json`): for servers without dynamic client registration, such as GitHub's, whose
/// OAuth app is registered by hand.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServerOAuth {
    /// The pre-registered client id.
    pub client_id: Option<String>,
    /// Its secret, for a confidential client.
    pub client_secret: Option<switchboard_core::Secret>,
    /// Scopes to ask for.
    pub scopes: Vec<String>,
    /// The loopback port of the redirect URI registered with the app
    /// (`http://127.0.0.1:PORT/callback`).
    pub redirect_port: Option<u16>,
    /// How the token is got (`grant = "client_credentials"`: no person).
    pub grant: Grant,
    /// The private key of a client that signs its assertion (PEM).
    pub private_key: Option<switchboard_core::Secret>,
    /// Its signing algorithm.
    pub signing_algorithm: Option<String>,
}

impl ServerOAuth {
    /// The redirect URI for [`ServerOAuth::redirect_port`].
    pub fn redirect_uri(port: u16) -> String {
        format!("http://127.0.0.1:{port}/callback")
    }
}

impl OAuthOptions {
    /// These options with one server's settings on top: its client, scopes and redirect port
    /// replace the process-wide ones where it sets them.
    pub fn for_server(&self, server: &ServerOAuth) -> OAuthOptions {
        let mut out = self.clone();
        if let Some(id) = &server.client_id {
            out.client_id = Some(id.clone());
            out.client_secret = server.client_secret.clone();
        }
        if !server.scopes.is_empty() {
            out.scopes = server.scopes.clone();
        }
        if let Some(port) = server.redirect_port {
            out.redirect_uri = ServerOAuth::redirect_uri(port);
        }
        if server.grant != Grant::AuthorizationCode {
            out.grant = server.grant;
        }
        if server.private_key.is_some() {
            out.private_key = server.private_key.clone();
            out.signing_algorithm = server.signing_algorithm.clone();
        }
        out
    }
}

impl Default for OAuthOptions {
    fn default() -> Self {
        Self {
            mode: AuthMode::default(),
            storage: TokenStorage::default(),
            redirect_uri: "http://127.0.0.1:33418/callback".to_string(),
            client_name: "switchboard".to_string(),
            client_metadata_url: None,
            client_id: None,
            client_secret: None,
            max_step_ups: 2,
            scopes: Vec::new(),
            grant: Grant::default(),
            private_key: None,
            signing_algorithm: None,
        }
    }
}

/// Everything configurable about the client side of a session.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClientOptions {
    /// How HTTP sessions start.
    pub lifecycle: Lifecycle,
    /// How elicitation requests are answered.
    pub elicitation: Elicitation,
    /// OAuth for HTTP servers that have no configured `Authorization` header.
    pub oauth: OAuthOptions,
}

static OPTIONS: RwLock<Option<Arc<ClientOptions>>> = RwLock::new(None);

/// Set the options for every session this process opens from now on.
pub fn configure(options: ClientOptions) {
    let mut slot = OPTIONS.write().unwrap_or_else(|e| e.into_inner());
    *slot = Some(Arc::new(options));
}

static SERVER_OAUTH: RwLock<Option<Arc<BTreeMap<String, ServerOAuth>>>> = RwLock::new(None);

/// Set per-server OAuth settings, by configured server name, for every session this process
/// opens from now on (on top of [`ClientOptions::oauth`]).
///
/// The table is process-wide and replaced whole by each call. Library users that load a config
/// with `[servers.NAME.oauth]` (or `.mcp.json` `oauth`) must call this themselves before
/// starting sessions (the CLI does it when it reads the config); otherwise every server uses
/// the process-wide [`ClientOptions::oauth`] client and its own client id, secret, scopes and
/// redirect port are silently ignored.
pub fn configure_server_oauth(servers: BTreeMap<String, ServerOAuth>) {
    let mut slot = SERVER_OAUTH.write().unwrap_or_else(|e| e.into_inner());
    *slot = Some(Arc::new(servers));
}

/// The OAuth options for the server named `server`: `base` with its own settings on top.
pub(crate) fn oauth_for(server: &str, base: &OAuthOptions) -> OAuthOptions {
    let slot = SERVER_OAUTH.read().unwrap_or_else(|e| e.into_inner());
    match slot.as_ref().and_then(|m| m.get(server)) {
        Some(own) => base.for_server(own),
        None => base.clone(),
    }
}

/// The options in force.
pub(crate) fn current() -> Arc<ClientOptions> {
    let slot = OPTIONS.read().unwrap_or_else(|e| e.into_inner());
    slot.clone().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_servers_own_settings_go_on_top_of_the_process_wide_ones() {
        let base = OAuthOptions {
            client_id: Some("global".into()),
            client_secret: Some(switchboard_core::Secret::new("global-secret")),
            ..OAuthOptions::default()
        };
        let own = ServerOAuth {
            client_id: Some("Iv1.abc".into()),
            client_secret: None,
            scopes: vec!["repo".into()],
            redirect_port: Some(8765),
            ..ServerOAuth::default()
        };
        let o = base.for_server(&own);
        assert_eq!(o.client_id.as_deref(), Some("Iv1.abc"));
        // A public client of the server's own never inherits another client's secret.
        assert!(o.client_secret.is_none());
        assert_eq!(o.scopes, ["repo"]);
        assert_eq!(o.redirect_uri, "http://127.0.0.1:8765/callback");
        assert_eq!(o.mode, base.mode);
        // Nothing set: nothing changes.
        assert_eq!(base.for_server(&ServerOAuth::default()), base);
        // By name, through the process-wide table: a name no other test uses, and the table
        // put back as it was even if an assertion fails.
        let _restore = RestoreServerOAuth::take();
        let name = "options-test-github";
        configure_server_oauth(BTreeMap::from([(name.to_string(), own)]));
        assert_eq!(oauth_for(name, &base).client_id.as_deref(), Some("Iv1.abc"));
        assert_eq!(oauth_for("options-test-other", &base), base);
    }

    /// Puts back the per-server OAuth table it found when dropped.
    struct RestoreServerOAuth(Option<Arc<BTreeMap<String, ServerOAuth>>>);

    impl RestoreServerOAuth {
        fn take() -> Self {
            RestoreServerOAuth(
                SERVER_OAUTH
                    .read()
                    .unwrap_or_else(|e| e.into_inner())
                    .clone(),
            )
        }
    }

    impl Drop for RestoreServerOAuth {
        fn drop(&mut self) {
            *SERVER_OAUTH.write().unwrap_or_else(|e| e.into_inner()) = self.0.take();
        }
    }
}
