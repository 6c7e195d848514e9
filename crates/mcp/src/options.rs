//! `ClientOptions`: process-wide choices about how this host behaves as an MCP client: which
//! lifecycle it opens HTTP sessions with, how it answers elicitation requests, and how it
//! obtains OAuth tokens. Set once with [`configure`] before [`crate::Sessions::start`]; the
//! defaults suit an unattended host (plain `initialize`, decline elicitations, use stored OAuth
//! tokens but never start an authorization by itself).

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

/// The options in force.
pub(crate) fn current() -> Arc<ClientOptions> {
    let slot = OPTIONS.read().unwrap_or_else(|e| e.into_inner());
    slot.clone().unwrap_or_default()
}
