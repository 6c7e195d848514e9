//! OAuth 2.1 for Streamable HTTP servers. [`OAuthHttp`] is the HTTP client of every HTTP session
//! without a configured `Authorization` header: it sends the stored token (refreshing it when it
//! expires), and reacts to the server's verdicts: a 401 gets one refresh, then a new
//! authorization (protected resource metadata discovery, client registration or CIMD, PKCE,
//! RFC 8707 resource), and a 403 `insufficient_scope` gets a step-up authorization for the union
//! of granted and challenged scopes, each followed by one retry of the request. Authorizations
//! run one at a time per server; the state is kept per server URL for the life of the process,
//! so a reconnect reuses it.
//!
//! Who approves an authorization depends on [`AuthMode`]: `StoredOnly` never starts one (the
//! 401 surfaces, and the error tells the user to run `switchboard auth login`); `Headless`
//! follows the authorization URL without a browser. [`login`] is the browser flow. A server
//! whose client has its own credentials ([`Grant::ClientCredentials`], the SEP-1046
//! extension) needs no person: a 401 buys a token with the client secret or a signed JWT
//! assertion, in any mode, and so does `login`.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex as StdMutex};

use futures::stream::BoxStream;
use http::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::JwtSigningAlgorithm;
use rmcp::transport::auth::{
    AuthError, AuthorizationCallback, AuthorizationManager, AuthorizationRequest,
    ClientCredentialsConfig, CredentialStore, OAuthState,
};
use rmcp::transport::streamable_http_client::{
    AuthRequiredError, InsufficientScopeError, StreamableHttpClient, StreamableHttpError,
    StreamableHttpPostResponse, StreamableHttpResponseLimits,
};
use std::sync::atomic::{AtomicBool, Ordering};
use tokio::sync::{Mutex, RwLock, watch};

use switchboard_core::{redact_url, redact_urls_in};

use crate::error::SessionError;
use crate::options::{AuthMode, Grant, OAuthOptions};
use crate::token_store::TokenStore;

type HttpError = StreamableHttpError<reqwest::Error>;

/// The HTTP client for one session: reqwest plus its server's OAuth state.
#[derive(Clone)]
pub(crate) struct OAuthHttp {
    http: reqwest::Client,
    state: Arc<AuthState>,
    stream: Arc<StreamWatch>,
}

impl OAuthHttp {
    /// The client for the server at `url`, sharing OAuth state with earlier sessions to it.
    pub(crate) fn new(http: reqwest::Client, url: &str, options: &OAuthOptions) -> Self {
        Self {
            http,
            state: AuthState::shared(url, options),
            stream: Arc::new(StreamWatch {
                session: AtomicBool::new(false),
                opened: watch::Sender::new(false),
            }),
        }
    }

    /// What tells when the session's standalone SSE stream is open.
    pub(crate) fn stream_watch(&self) -> Arc<StreamWatch> {
        self.stream.clone()
    }
}

/// Whether a stateful session's standalone GET stream has been answered. A server sends
/// requests that belong to no call (and some that do) on that stream; one sent before the
/// stream is open is lost, so a new session waits for it briefly before it is used.
pub(crate) struct StreamWatch {
    /// The server gave the session an id, so rmcp opens the standalone stream.
    session: AtomicBool,
    opened: watch::Sender<bool>,
}

impl StreamWatch {
    /// Wait until the standalone stream was answered (opened or refused), at most `limit`.
    /// Returns at once for a session without an id (no standalone stream is opened then).
    pub(crate) async fn settle(&self, limit: std::time::Duration) {
        if !self.session.load(Ordering::Relaxed) {
            return;
        }
        let mut opened = self.opened.subscribe();
        let _ = tokio::time::timeout(limit, opened.wait_for(|open| *open)).await;
    }
}

/// One server's OAuth state.
struct AuthState {
    url: String,
    options: OAuthOptions,
    store: TokenStore,
    /// The authorized manager, once there is one (from the store or an authorization), with
    /// the client id it was built for.
    manager: RwLock<Option<(Arc<AuthorizationManager>, String)>>,
    /// Held while an authorization or step-up runs, so concurrent 401s authorize once.
    flow: Mutex<()>,
}

/// Per-URL state for the life of the process; a new `OAuthOptions` starts afresh.
type Registry = HashMap<String, Arc<AuthState>>;
static REGISTRY: StdMutex<Option<Registry>> = StdMutex::new(None);

impl AuthState {
    fn shared(url: &str, options: &OAuthOptions) -> Arc<Self> {
        let mut registry = REGISTRY.lock().unwrap_or_else(|e| e.into_inner());
        let registry = registry.get_or_insert_with(HashMap::new);
        if let Some(state) = registry.get(url).filter(|s| &s.options == options) {
            return state.clone();
        }
        let state = Arc::new(Self {
            url: url.to_string(),
            options: options.clone(),
            store: TokenStore::new(url, &options.storage),
            manager: RwLock::new(None),
            flow: Mutex::new(()),
        });
        registry.insert(url.to_string(), state.clone());
        state
    }

    /// The authorized manager: the one in memory, else one built from stored credentials. A
    /// login done meanwhile by another switchboard that registered another client (the store
    /// now names another client id) gets a new manager, so refreshes use that client.
    async fn manager(&self) -> Result<Option<Arc<AuthorizationManager>>, AuthError> {
        let stored = self.store.load().await?;
        let current = |slot: &Option<(Arc<AuthorizationManager>, String)>| {
            slot.as_ref()
                .filter(|(_, id)| stored.as_ref().is_none_or(|c| &c.client_id == id))
                .map(|(m, _)| m.clone())
        };
        if let Some(m) = current(&*self.manager.read().await) {
            return Ok(Some(m));
        }
        let mut slot = self.manager.write().await;
        if let Some(m) = current(&slot) {
            return Ok(Some(m));
        }
        let Some(client_id) = stored
            .filter(|c| c.token_response.is_some())
            .map(|c| c.client_id)
        else {
            return Ok(None);
        };
        let mut manager = AuthorizationManager::new(self.url.as_str()).await?;
        manager.set_credential_store(self.store.clone());
        if !manager.initialize_from_store().await? {
            return Ok(None);
        }
        let manager = Arc::new(manager);
        *slot = Some((manager.clone(), client_id));
        Ok(Some(manager))
    }

    /// The token to send now, if any. An expired token is refreshed here; one that cannot be
    /// refreshed counts as none (the server's 401 then drives what happens).
    async fn token(&self) -> Result<Option<String>, AuthError> {
        let Some(manager) = self.manager().await? else {
            return Ok(None);
        };
        match manager.get_access_token().await {
            Ok(token) => Ok(Some(token)),
            Err(AuthError::AuthorizationRequired) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The server rejected `sent` (or its absence) with 401: refresh, else authorize.
    async fn recover_unauthorized(
        &self,
        sent: Option<String>,
        challenge: AuthRequiredError,
    ) -> Result<String, HttpError> {
        let _flow = self.flow.lock().await;
        // Another request may have authorized while this one waited.
        if let Some(now) = self.token().await?
            && Some(&now) != sent.as_ref()
        {
            return Ok(now);
        }
        if sent.is_some()
            && let Some(manager) = self.manager().await?
        {
            match manager.refresh_token().await {
                Ok(fresh) => {
                    use oauth2::TokenResponse as _;
                    let token = fresh.access_token().secret().to_string();
                    if Some(&token) != sent.as_ref() {
                        return Ok(token);
                    }
                }
                Err(e) => {
                    tracing::debug!(url = %redact_url(&self.url), error = %redact_urls_in(&e.to_string()), "token refresh failed")
                }
            }
        }
        if self.options.grant == Grant::ClientCredentials {
            let manager = client_credentials(
                &self.url,
                &self.options,
                &self.store,
                Some(&challenge.www_authenticate_header),
            )
            .await?;
            let token = manager.get_access_token().await?;
            let client_id = self.options.client_id.clone().unwrap_or_default();
            *self.manager.write().await = Some((Arc::new(manager), client_id));
            return Ok(token);
        }
        match self.options.mode {
            AuthMode::StoredOnly => Err(StreamableHttpError::AuthRequired(challenge)),
            AuthMode::Headless => {
                let manager = authorize(
                    &self.url,
                    &self.options,
                    &self.store,
                    Some(&challenge.www_authenticate_header),
                    headless_agent,
                )
                .await?;
                let token = manager.get_access_token().await?;
                let client_id = self
                    .store
                    .load()
                    .await?
                    .map(|c| c.client_id)
                    .unwrap_or_default();
                *self.manager.write().await = Some((Arc::new(manager), client_id));
                Ok(token)
            }
        }
    }

    /// The server answered 403 `insufficient_scope`: authorize again for the union of the
    /// granted scopes and the challenged one.
    async fn step_up(&self, error: InsufficientScopeError) -> Result<String, HttpError> {
        let _flow = self.flow.lock().await;
        let (AuthMode::Headless, Some(required)) =
            (self.options.mode, error.required_scope.clone())
        else {
            return Err(StreamableHttpError::InsufficientScope(error));
        };
        let Some(manager) = self.manager().await? else {
            return Err(StreamableHttpError::InsufficientScope(error));
        };
        let url = manager.request_scope_upgrade(&required).await?;
        let callback = headless_agent(url).await?;
        manager
            .exchange_code_for_token_with_issuer(
                &callback.code,
                &callback.csrf_token,
                callback.issuer.as_deref(),
            )
            .await?;
        Ok(manager.get_access_token().await?)
    }

    /// Run `call` with the current token, recovering from 401 once and from 403
    /// `insufficient_scope` up to `max_step_ups` times. A configured header (`given`) is sent
    /// as it is: the user chose it.
    async fn with_auth<T, F, Fut>(&self, given: Option<String>, call: F) -> Result<T, HttpError>
    where
        F: Fn(Option<String>) -> Fut,
        Fut: Future<Output = Result<T, HttpError>>,
    {
        if given.is_some() {
            return call(given).await;
        }
        let mut token = self.token().await?;
        let mut authorized = false;
        let mut step_ups = 0;
        loop {
            match call(token.clone()).await {
                Err(StreamableHttpError::AuthRequired(challenge)) if !authorized => {
                    authorized = true;
                    token = Some(self.recover_unauthorized(token, challenge).await?);
                }
                Err(StreamableHttpError::InsufficientScope(e))
                    if step_ups < self.options.max_step_ups =>
                {
                    step_ups += 1;
                    token = Some(self.step_up(e).await?);
                }
                other => return other,
            }
        }
    }
}

/// Discover, register and authorize against the server at `url`, with `agent` playing the
/// user agent (it gets the authorization URL and returns the redirect's parameters). Returns
/// the authorized manager; its tokens are saved in `store`.
async fn authorize<A, Fut>(
    url: &str,
    options: &OAuthOptions,
    store: &TokenStore,
    challenge: Option<&str>,
    agent: A,
) -> Result<AuthorizationManager, AuthError>
where
    A: FnOnce(String) -> Fut,
    Fut: Future<Output = Result<AuthorizationCallback, AuthError>>,
{
    let mut manager = AuthorizationManager::new(url).await?;
    manager.set_credential_store(store.clone());
    let mut state = OAuthState::Unauthorized(manager);
    let mut request = AuthorizationRequest::new(options.redirect_uri.as_str())
        .with_client_name(&options.client_name);
    if let Some(metadata_url) = &options.client_metadata_url {
        request = request.with_client_metadata_url(metadata_url.as_str());
    }
    if let Some(id) = &options.client_id {
        request = request.with_preregistered_client(id.as_str());
        if let Some(secret) = &options.client_secret {
            request = request.with_client_secret(secret.expose());
        }
    }
    if !options.scopes.is_empty() {
        request = request.with_scopes(options.scopes.iter().map(String::as_str));
    }
    if let Some(challenge) = challenge {
        request = request.with_challenge(challenge);
    }
    state.start_authorization(request).await?;
    let auth_url = state.get_authorization_url().await?;
    tracing::info!(url = %redact_url(url), "authorizing");
    let callback = agent(auth_url).await?;
    state
        .handle_callback_with_issuer(
            &callback.code,
            &callback.csrf_token,
            callback.issuer.as_deref(),
        )
        .await?;
    state
        .into_authorization_manager()
        .ok_or_else(|| AuthError::InternalError("authorization did not complete".to_string()))
}

/// Buy a token for the server at `url` with the client's own credentials (OAuth client
/// credentials, SEP-1046): discover the authorization server from the server's challenge (or
/// its protected resource metadata), then send the client secret (in the body, or as HTTP
/// Basic when that is all the server takes) or a JWT assertion signed with the private key,
/// with the scopes and the server as RFC 8707 resource. The token is saved in `store`.
async fn client_credentials(
    url: &str,
    options: &OAuthOptions,
    store: &TokenStore,
    challenge: Option<&str>,
) -> Result<AuthorizationManager, AuthError> {
    let client_id = options.client_id.clone().ok_or_else(|| {
        AuthError::ClientCredentialsError(
            "client credentials need a client id ([servers.NAME.oauth] client_id)".into(),
        )
    })?;
    let mut manager = AuthorizationManager::new(url).await?;
    manager.set_credential_store(store.clone());
    let resolution = manager.resolve_metadata_from_challenge(challenge).await?;
    manager.set_metadata(resolution.metadata);
    let scopes = if options.scopes.is_empty() {
        manager.select_initial_scopes(&[]).await
    } else {
        options.scopes.clone()
    };
    let resource = Some(url.to_string());
    let config = match (&options.private_key, &options.client_secret) {
        (Some(key), _) => ClientCredentialsConfig::PrivateKeyJwt {
            client_id,
            signing_key: key.expose().as_bytes().to_vec(),
            signing_algorithm: signing_algorithm(options, key.expose())?,
            token_endpoint_audience: None,
            scopes,
            resource,
        },
        (None, Some(secret)) => ClientCredentialsConfig::ClientSecret {
            client_id,
            client_secret: secret.expose().to_string(),
            scopes,
            resource,
        },
        (None, None) => {
            return Err(AuthError::ClientCredentialsError(
                "client credentials need a client secret or a private key ([servers.NAME.oauth] client_secret or private_key)".into(),
            ));
        }
    };
    manager.validate_client_credentials_metadata(&config)?;
    manager.configure_client_credentials(&config)?;
    tracing::info!(url = %redact_url(url), "getting a token with the client's credentials");
    // rmcp's assertion path holds a form serializer that is not `Send` across an await, so
    // the exchange runs on a blocking thread of its own, driven by this runtime's handle.
    let runtime = tokio::runtime::Handle::current();
    tokio::task::spawn_blocking(move || {
        runtime.block_on(async move {
            manager.exchange_client_credentials(&config).await?;
            Ok(manager)
        })
    })
    .await
    .map_err(|e| AuthError::InternalError(format!("the token exchange stopped: {e}")))?
}

/// The algorithm a private key signs the assertion with: the configured one, else ES256 for a
/// key that says it is EC, else RS256.
fn signing_algorithm(options: &OAuthOptions, pem: &str) -> Result<JwtSigningAlgorithm, AuthError> {
    let name = match options.signing_algorithm.as_deref() {
        Some(name) => name.to_ascii_uppercase(),
        None if pem.contains("BEGIN EC PRIVATE KEY") => "ES256".into(),
        None => "RS256".into(),
    };
    Ok(match name.as_str() {
        "RS256" => JwtSigningAlgorithm::RS256,
        "RS384" => JwtSigningAlgorithm::RS384,
        "RS512" => JwtSigningAlgorithm::RS512,
        "ES256" => JwtSigningAlgorithm::ES256,
        "ES384" => JwtSigningAlgorithm::ES384,
        other => {
            return Err(AuthError::ClientCredentialsError(format!(
                "signing algorithm {other:?} is not one of RS256, RS384, RS512, ES256, ES384"
            )));
        }
    })
}

/// A user agent without a person: GET the authorization URL with redirects disabled and read
/// the code from the redirect. Works with authorization servers that approve at once (test
/// servers, pre-approved clients); a login page is an error that says to log in with a browser.
async fn headless_agent(auth_url: String) -> Result<AuthorizationCallback, AuthError> {
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()?;
    let response = http.get(&auth_url).send().await?;
    let status = response.status();
    let location = response
        .headers()
        .get(http::header::LOCATION)
        .and_then(|v| v.to_str().ok())
        .ok_or_else(|| {
            AuthError::AuthorizationFailed(format!(
                "the authorization server answered {status} without redirecting back; it needs a \
                 person to approve: run `switchboard auth login`"
            ))
        })?;
    AuthorizationCallback::from_redirect_url(location)
}

/// Probe `url` with an unauthenticated `initialize`: the `WWW-Authenticate` challenge of a 401,
/// or `None` when the server does not ask for authorization on it.
async fn probe_challenge(http: &reqwest::Client, url: &str) -> Result<Option<String>, AuthError> {
    let body = serde_json::json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "switchboard", "version": env!("CARGO_PKG_VERSION")}
        }
    });
    let response = http
        .post(url)
        .header(http::header::ACCEPT, "application/json, text/event-stream")
        .json(&body)
        .send()
        .await?;
    if response.status() != reqwest::StatusCode::UNAUTHORIZED {
        return Ok(None);
    }
    Ok(response
        .headers()
        .get(http::header::WWW_AUTHENTICATE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string))
}

/// What [`login`] needs from its caller: where to send the person, and the redirect it gets.
pub trait LoginAgent: Send {
    /// The loopback redirect URI the agent listens on.
    fn redirect_uri(&self) -> String;
    /// Show or open `auth_url`, wait for the redirect and return its full URL.
    fn authorize(&mut self, auth_url: &str) -> impl Future<Output = Result<String, String>> + Send;
}

/// The outcome of a login.
#[derive(Clone, Debug)]
pub struct LoginOutcome {
    /// Scopes granted, as the authorization server reported them.
    pub scopes: Vec<String>,
    /// Where the tokens were saved (`None` when kept in memory).
    pub saved_to: Option<std::path::PathBuf>,
}

/// Authorize switchboard for the HTTP server at `url` with a person at a browser, and save the
/// tokens where sessions find them (per `options.storage`). `agent` shows the URL and catches
/// the loopback redirect.
pub async fn login(
    url: &str,
    options: &OAuthOptions,
    agent: &mut impl LoginAgent,
) -> Result<LoginOutcome, SessionError> {
    let err = |e: AuthError| auth_error(url, &e);
    let http = reqwest::Client::new();
    let challenge = probe_challenge(&http, url).await.map_err(err)?;
    let mut options = options.clone();
    let store = TokenStore::new(url, &options.storage);
    if options.grant == Grant::ClientCredentials {
        let manager = client_credentials(url, &options, &store, challenge.as_deref())
            .await
            .map_err(err)?;
        let scopes = manager.get_current_scopes().await;
        forget(url);
        return Ok(LoginOutcome {
            scopes,
            saved_to: store.path().map(|p| p.to_path_buf()),
        });
    }
    options.redirect_uri = agent.redirect_uri();
    let manager = {
        let agent = &mut *agent;
        authorize(
            url,
            &options,
            &store,
            challenge.as_deref(),
            |auth_url| async move {
                let redirect = agent
                    .authorize(&auth_url)
                    .await
                    .map_err(AuthError::AuthorizationFailed)?;
                AuthorizationCallback::from_redirect_url(&redirect)
            },
        )
        .await
        .map_err(err)?
    };
    let scopes = manager.get_current_scopes().await;
    // Sessions in this process pick the new tokens up from the store.
    forget(url);
    Ok(LoginOutcome {
        scopes,
        saved_to: store.path().map(|p| p.to_path_buf()),
    })
}

/// Delete the stored tokens for `url`; true when there were some.
pub async fn logout(url: &str, options: &OAuthOptions) -> Result<bool, SessionError> {
    let store = TokenStore::new(url, &options.storage);
    let had = store
        .load()
        .await
        .map_err(|e| auth_error(url, &e))?
        .is_some();
    store.clear().await.map_err(|e| auth_error(url, &e))?;
    forget(url);
    Ok(had)
}

/// What is stored for `url`, if anything.
#[derive(Clone, Debug)]
pub struct StoredLogin {
    /// The registered (or pre-registered, or CIMD) client id.
    pub client_id: String,
    /// Scopes granted.
    pub scopes: Vec<String>,
    /// Whether there is an access token.
    pub has_token: bool,
    /// Whether there is a refresh token.
    pub can_refresh: bool,
    /// Seconds since the UNIX epoch when the token was received.
    pub received_at: Option<u64>,
    /// Lifetime of the access token in seconds, if the server said.
    pub expires_in: Option<u64>,
    /// The file holding it.
    pub path: Option<std::path::PathBuf>,
}

/// Read what is stored for `url` without contacting anything.
pub async fn stored_login(
    url: &str,
    options: &OAuthOptions,
) -> Result<Option<StoredLogin>, SessionError> {
    use oauth2::TokenResponse as _;
    let store = TokenStore::new(url, &options.storage);
    let creds = store.load().await.map_err(|e| auth_error(url, &e))?;
    Ok(creds.map(|c| StoredLogin {
        has_token: c.token_response.is_some(),
        can_refresh: c
            .token_response
            .as_ref()
            .is_some_and(|t| t.refresh_token().is_some()),
        expires_in: c
            .token_response
            .as_ref()
            .and_then(|t| t.expires_in())
            .map(|d| d.as_secs()),
        client_id: c.client_id,
        scopes: c.granted_scopes,
        received_at: c.token_received_at,
        path: store.path().map(|p| p.to_path_buf()),
    }))
}

fn auth_error(url: &str, e: &AuthError) -> SessionError {
    SessionError::Auth {
        server: redact_url(url),
        detail: redact_urls_in(&crate::error::chain(e)),
    }
}

/// Drop the in-memory state for `url`, so the next session reads the store again.
fn forget(url: &str) {
    let mut registry = REGISTRY.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(registry) = registry.as_mut() {
        registry.remove(url);
    }
}

impl StreamableHttpClient for OAuthHttp {
    type Error = reqwest::Error;

    forward_to_limits!(reqwest::Error);

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        let response = self
            .state
            .with_auth(auth_header, |token| {
                self.http.post_message_with_response_limits(
                    uri.clone(),
                    message.clone(),
                    session_id.clone(),
                    token,
                    custom_headers.clone(),
                    limits,
                )
            })
            .await;
        if let Ok(
            StreamableHttpPostResponse::Json(_, Some(_))
            | StreamableHttpPostResponse::Sse(_, Some(_)),
        ) = &response
        {
            self.stream.session.store(true, Ordering::Relaxed);
        }
        response
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), HttpError> {
        // Closing a session is not worth an authorization: send what we have.
        let token = match auth_header {
            Some(given) => Some(given),
            None => self.state.token().await.ok().flatten(),
        };
        self.http
            .delete_session(uri, session_id, token, custom_headers)
            .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxStream<'static, Result<sse_stream::Sse, sse_stream::Error>>, HttpError> {
        let stream = self
            .state
            .with_auth(auth_header, |token| {
                self.http.get_stream_with_max_sse_event_size(
                    uri.clone(),
                    session_id.clone(),
                    last_event_id.clone(),
                    token,
                    custom_headers.clone(),
                    max_sse_event_size,
                )
            })
            .await;
        self.stream.opened.send_replace(true);
        stream
    }
}
