//! Connect: turn a `ServerSpec` into a running rmcp client session, spawning a stdio child (in
//! its own process group, stderr drained) or opening a Streamable HTTP session (with OAuth
//! when the entry has no `Authorization` header of its own, see `auth`).

use std::collections::HashMap;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use http::{HeaderName, HeaderValue};
use process_wrap::tokio::{CommandWrap, ProcessGroup};
use rmcp::model::{InitializeResult, ProtocolVersion, ServerResult};
use rmcp::service::{ClientInitializeError, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::common::client_side_sse::ExponentialBackoff;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClientTransportConfig, StreamableHttpError,
};
use rmcp::{ClientLifecycleMode, ClientServiceExt, RoleClient, ServiceExt};
use switchboard_core::{Secret, ServerSpec, TransportSpec};

use crate::auth::OAuthHttp;
use crate::error::{SessionError, chain};
use crate::handler::Handler;
use crate::headers_helper::{HelperHttp, Refresh};
use crate::http_screen::ScreenedHttp;
use crate::ids::Ids;
use crate::in_order::InOrder;
use crate::options::{self, Lifecycle};
use crate::raw::{self, RawLink};
use crate::stderr::{self, StderrTail};

/// A live rmcp client session driven by our handler.
pub(crate) type Service = RunningService<RoleClient, Handler>;

/// How long a failed stdio handshake waits for the child's last stderr lines.
const LAST_WORDS: Duration = Duration::from_millis(300);

/// Consecutive failed attempts to re-open a broken SSE stream before giving up on it
/// (250 ms, 500 ms, 1 s, 2 s apart).
const SSE_RETRIES: usize = 4;

/// How long a new stateful HTTP session waits for its standalone SSE stream to open before it
/// is used, so requests the server sends on it right away are not lost.
const STREAM_SETTLE: Duration = Duration::from_secs(1);

/// Headers the Streamable HTTP transport sets itself; a configured value would conflict.
const TRANSPORT_HEADERS: [&str; 4] = [
    "accept",
    "mcp-session-id",
    "mcp-protocol-version",
    "last-event-id",
];

/// A session just opened.
pub(crate) struct Connected {
    pub(crate) service: Service,
    /// The raw call path of a stdio session.
    pub(crate) raw: Option<Arc<RawLink>>,
    /// It speaks the legacy HTTP+SSE transport (the URL refused Streamable HTTP).
    pub(crate) legacy_sse: bool,
}

/// Open a session. `on_spawn` learns the child's pid (= its process group) as soon as it
/// exists, so a caller whose startup timeout fires mid-handshake can still kill it. `http`
/// gives the shared HTTP client; it is only asked for by an HTTP server.
pub(crate) async fn connect<'h>(
    spec: &ServerSpec,
    handler: Handler,
    http: impl FnOnce() -> &'h reqwest::Client,
    tail: &StderrTail,
    ids: &Arc<Ids>,
    on_spawn: impl FnOnce(u32),
) -> Result<Connected, SessionError> {
    match &spec.transport {
        TransportSpec::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            if let Some(dir) = cwd
                && !dir.is_dir()
            {
                return Err(SessionError::Config {
                    server: spec.name.clone(),
                    detail: format!("working directory {} does not exist", dir.display()),
                });
            }
            let mut cmd = tokio::process::Command::new(command);
            cmd.args(args);
            for (key, value) in env {
                cmd.env(key, value.expose());
            }
            if let Some(dir) = cwd {
                cmd.current_dir(dir);
            }
            let mut wrapped = CommandWrap::from(cmd);
            // Own process group: one signal reaches what the server spawned too (npx, shells).
            wrapped.wrap(ProcessGroup::leader());
            wrapped
                .command_mut()
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            let spawn_error = |source| SessionError::Spawn {
                server: spec.name.clone(),
                command: command.clone(),
                stderr_tail: Vec::new(),
                source,
            };
            let child = wrapped.spawn().map_err(spawn_error)?;
            // rmcp's session and raw calls share the child's pipes (see `raw`).
            let (transport, link, stderr) =
                raw::share(child, handler.relays(), ids.clone(), handler.executions())
                    .map_err(spawn_error)?;
            if let Some(pid) = transport.id() {
                on_spawn(pid);
            }
            let mut done = stderr.map(|s| tail.drain(s));
            match handler.serve(transport).await {
                Ok(service) => Ok(Connected {
                    service,
                    raw: Some(link),
                    legacy_sse: false,
                }),
                Err(e) => {
                    // A crashing server prints why on its way out; wait briefly to include it.
                    if let Some(done) = done.as_mut() {
                        stderr::wait_closed(done, LAST_WORDS).await;
                    }
                    let detail = match &e {
                        // A broken pipe or EOF on stdio means the process is gone or gave up
                        // on the protocol; its stderr (appended to the reason) says why.
                        ClientInitializeError::TransportError { .. }
                        | ClientInitializeError::ConnectionClosed(_) => {
                            "the process exited or closed its stdout before answering initialize"
                                .to_string()
                        }
                        other => init_detail(other),
                    };
                    Err(SessionError::Handshake {
                        server: spec.name.clone(),
                        detail,
                        stderr_tail: tail.lines(),
                    })
                }
            }
        }
        TransportSpec::Http {
            url,
            headers,
            headers_helper,
        } => {
            let (fresh, refresh);
            let configured = headers;
            let headers = match headers_helper {
                Some(command) => {
                    fresh =
                        crate::headers_helper::merged(&spec.name, url, command, headers).await?;
                    &fresh
                }
                None => headers,
            };
            let config = http_config(&spec.name, url, headers)?;
            refresh = headers_helper.as_deref().map(|command| {
                Refresh::new(
                    &spec.name,
                    url,
                    command,
                    configured,
                    config.auth_header.clone(),
                    config.custom_headers.clone(),
                )
            });
            open_http(
                &spec.name,
                url,
                headers,
                config,
                handler,
                http(),
                HttpAuth::Session(refresh),
            )
            .await
            .map_err(|failure| {
                let refused = http_error(&failure.error).and_then(refusal);
                match refused {
                    Some((status, challenge)) if own_credentials(&spec.transport) => {
                        SessionError::Auth {
                            server: spec.name.clone(),
                            detail: refused_detail(&spec.transport, status, challenge),
                        }
                    }
                    _ => failure.into_error(&spec.name, url),
                }
            })
        }
    }
}

/// Who authorizes an HTTP session.
pub(crate) enum HttpAuth {
    /// A session's: the entry's own `Authorization: Bearer` header, else OAuth with the stored
    /// tokens (see `auth`); with a `headersHelper`, what it prints, run again when refused.
    Session(Option<Arc<Refresh>>),
    /// A probe's (see `probe`): the entry's headers and nothing else. No stored token is read
    /// or sent and no authorization is started.
    Anonymous,
}

/// Why an HTTP session could not be opened, before it is put in words for the user
/// ([`HttpFailure::into_error`]), so a probe can tell a login challenge from a dead server.
pub(crate) struct HttpFailure {
    /// How the Streamable HTTP handshake failed.
    pub(crate) error: ClientInitializeError,
    /// Why the legacy HTTP+SSE transport did not work either, when it was tried.
    pub(crate) legacy_failed: Option<String>,
}

impl HttpFailure {
    /// The failure as the session error a caller reports for server `server` at `url`.
    pub(crate) fn into_error(self, server: &str, url: &str) -> SessionError {
        if let Some(detail) = auth_detail(&self.error, server) {
            return SessionError::Auth {
                server: server.to_string(),
                detail,
            };
        }
        match self.error {
            ClientInitializeError::TransportError { error, .. } => {
                let mut detail = http_detail(error.error.as_ref());
                if let Some(why) = self.legacy_failed {
                    detail.push_str(&format!("; tried as a legacy HTTP+SSE endpoint too: {why}"));
                }
                SessionError::Connect {
                    server: server.to_string(),
                    url: switchboard_core::redact_url(url),
                    detail: switchboard_core::redact_urls_in(&detail),
                }
            }
            other => SessionError::Handshake {
                server: server.to_string(),
                detail: init_detail(&other),
                stderr_tail: Vec::new(),
            },
        }
    }
}

/// Open a Streamable HTTP session to `url` with `config` (from [`http_config`]), falling back
/// to the legacy HTTP+SSE transport when the URL refuses the POST; `auth` says whether OAuth
/// takes part.
pub(crate) async fn open_http(
    server: &str,
    url: &str,
    headers: &[(String, Secret)],
    config: StreamableHttpClientTransportConfig,
    handler: Handler,
    http: &reqwest::Client,
    auth: HttpAuth,
) -> Result<Connected, HttpFailure> {
    // Kept for the legacy SSE transport, tried when the URL refuses Streamable HTTP.
    let fallback = handler.clone();
    let executions = handler.executions();
    let options = options::current();
    // Plain `initialize` (pinned to 2025-11-25 by the handler) unless the stateless
    // revision is asked for: against a 2026-07-28 server a stateless session's
    // list_changed notifications only arrive on a `subscriptions/listen` stream, which
    // this layer does not open yet; rmcp servers still accept `initialize`.
    let lifecycle = match options.lifecycle {
        Lifecycle::Initialize => ClientLifecycleMode::Initialize,
        Lifecycle::Modern => ClientLifecycleMode::Auto {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            legacy_version: Some(ProtocolVersion::LATEST_WITH_INITIALIZE),
        },
    };
    let (anonymous, refresh) = match auth {
        HttpAuth::Session(refresh) => (false, refresh),
        HttpAuth::Anonymous => (true, None),
    };
    // The legacy transport runs the helper again on a refusal too.
    let legacy_refresh = refresh.clone();
    let started = if config.auth_header.is_some() || anonymous {
        // The entry brings its own bearer token (send it and nothing else), or this is a
        // probe, which sends only what the entry says.
        let client = ScreenedHttp::new(HelperHttp::new(http.clone(), refresh), executions);
        let transport = StreamableHttpClientTransport::with_client(client, config);
        let transport = InOrder::new(transport, handler.relays());
        handler.serve_with_lifecycle(transport, lifecycle).await
    } else {
        let oauth = options::oauth_for(server, &options.oauth);
        let client = OAuthHttp::new(http.clone(), url, &oauth);
        let stream = client.stream_watch();
        let client = ScreenedHttp::new(HelperHttp::new(client, refresh), executions);
        let transport = StreamableHttpClientTransport::with_client(client, config);
        let transport = InOrder::new(transport, handler.relays());
        let started = handler.serve_with_lifecycle(transport, lifecycle).await;
        if started.is_ok() {
            stream.settle(STREAM_SETTLE).await;
        }
        started
    };
    match started {
        Ok(service) => Ok(Connected {
            service,
            raw: None,
            legacy_sse: false,
        }),
        Err(error) if refused_post(&error) => {
            match legacy_sse(fallback, http, url, headers, server, legacy_refresh).await {
                Ok(service) => {
                    tracing::info!(%server, "the URL refused Streamable HTTP; connected with the legacy HTTP+SSE transport");
                    Ok(Connected {
                        service,
                        raw: None,
                        legacy_sse: true,
                    })
                }
                Err(why) => Err(HttpFailure {
                    error,
                    legacy_failed: Some(why),
                }),
            }
        }
        Err(error) => Err(HttpFailure {
            error,
            legacy_failed: None,
        }),
    }
}

/// The Streamable HTTP client error a handshake failed with, if that is how it failed.
pub(crate) fn http_error(
    e: &ClientInitializeError,
) -> Option<&StreamableHttpError<reqwest::Error>> {
    match e {
        ClientInitializeError::TransportError { error, .. } => error
            .error
            .downcast_ref::<StreamableHttpError<reqwest::Error>>(),
        _ => None,
    }
}

/// The status (401 or 403) and challenge of an HTTP answer that refused the request's
/// credentials, when that is what `e` is.
pub(crate) fn refusal(e: &StreamableHttpError<reqwest::Error>) -> Option<(u16, Option<&str>)> {
    match e {
        StreamableHttpError::AuthRequired(a) => Some((401, Some(&a.www_authenticate_header))),
        StreamableHttpError::InsufficientScope(s) => Some((403, Some(&s.www_authenticate_header))),
        StreamableHttpError::Client(e) => e
            .status()
            .map(|s| s.as_u16())
            .filter(|s| matches!(s, 401 | 403))
            .map(|s| (s, None)),
        other => http_status(other)
            .filter(|s| matches!(s, 401 | 403))
            .map(|s| (s, None)),
    }
}

/// [`refusal`] anywhere in an error's chain of sources.
pub(crate) fn refusal_in<'a>(
    error: &'a (dyn std::error::Error + 'static),
) -> Option<(u16, Option<&'a str>)> {
    let mut at = Some(error);
    while let Some(e) = at {
        if let Some(found) = e
            .downcast_ref::<StreamableHttpError<reqwest::Error>>()
            .and_then(refusal)
        {
            return Some(found);
        }
        at = e.source();
    }
    None
}

/// Whether an HTTP entry brings its own credentials (a `headersHelper`, or a bearer token in
/// its `Authorization` header), so a refusal is about them and not a call for an OAuth login.
pub(crate) fn own_credentials(transport: &TransportSpec) -> bool {
    match transport {
        TransportSpec::Http {
            headers,
            headers_helper,
            ..
        } => {
            headers_helper.is_some()
                || headers.iter().any(|(name, value)| {
                    name.eq_ignore_ascii_case("authorization")
                        && bearer_token(value.expose()).is_some()
                })
        }
        TransportSpec::Stdio { .. } => false,
    }
}

/// What to tell the user when HTTP server `server` refused the credentials of an entry that
/// brings its own ([`own_credentials`]) with `status` and the challenge `challenge`.
pub(crate) fn refused_detail(
    transport: &TransportSpec,
    status: u16,
    challenge: Option<&str>,
) -> String {
    let said = match challenge.map(str::trim).filter(|c| !c.is_empty()) {
        Some(c) => format!("HTTP {status}: {}", switchboard_core::clip(c, 200)),
        None => format!("HTTP {status}"),
    };
    match transport {
        TransportSpec::Http {
            headers_helper: Some(_),
            ..
        } => format!(
            "the server refused the headers headersHelper printed ({said}), also after running it again; check what it prints"
        ),
        _ => format!(
            "the server refused the entry's Authorization header ({said}); the token may be wrong or have expired"
        ),
    }
}

/// The HTTP status a Streamable HTTP client error reports, when it is about one.
pub(crate) fn http_status(e: &StreamableHttpError<reqwest::Error>) -> Option<u16> {
    match e {
        StreamableHttpError::HttpStatus(status) => Some(status.status),
        StreamableHttpError::UnexpectedServerResponse(message) => message
            .strip_prefix("HTTP ")
            .and_then(|rest| rest.get(..3))
            .and_then(|code| code.parse().ok()),
        StreamableHttpError::AuthRequired(_) => Some(401),
        StreamableHttpError::InsufficientScope(_) => Some(403),
        _ => None,
    }
}

/// Whether a Streamable HTTP handshake failed because the URL refused the POST with a 4xx
/// other than 401/403, which is how a server of the legacy HTTP+SSE transport answers it.
fn refused_post(e: &ClientInitializeError) -> bool {
    http_error(e)
        .and_then(http_status)
        .is_some_and(|status| (400..500).contains(&status) && status != 401 && status != 403)
}

/// Open a session over the legacy HTTP+SSE transport (see `legacy_sse`).
async fn legacy_sse(
    handler: Handler,
    http: &reqwest::Client,
    url: &str,
    headers: &[(String, Secret)],
    server: &str,
    refresh: Option<std::sync::Arc<Refresh>>,
) -> Result<Service, String> {
    let headers = crate::legacy_sse::header_map(headers).map_err(|e| e.0)?;
    let executions = handler.executions();
    let opened = crate::legacy_sse::open(http, url, headers, server, refresh, executions)
        .await
        .map_err(|e| e.0)?;
    let transport =
        rmcp::transport::sink_stream::SinkStreamTransport::new(opened.sink, opened.stream);
    let transport = InOrder::new(transport, handler.relays());
    handler
        .serve_with_lifecycle(transport, ClientLifecycleMode::Initialize)
        .await
        .map_err(|e| init_detail(&e))
}

/// When a handshake failed for want of authorization, what to tell the user.
fn auth_detail(e: &ClientInitializeError, server: &str) -> Option<String> {
    let ClientInitializeError::TransportError { error, .. } = e else {
        return e.auth_challenge().map(|_| login_hint(server));
    };
    match error
        .error
        .downcast_ref::<StreamableHttpError<reqwest::Error>>()
    {
        Some(StreamableHttpError::AuthRequired(_)) => Some(login_hint(server)),
        Some(StreamableHttpError::InsufficientScope(s)) => Some(scope_hint(
            server,
            s.required_scope
                .as_deref()
                .or_else(|| challenge_param(&s.www_authenticate_header, "scope")),
        )),
        Some(StreamableHttpError::Auth(a)) => Some(chain(a)),
        _ => None,
    }
}

pub(crate) fn login_hint(server: &str) -> String {
    format!("the server requires OAuth authorization; run `switchboard auth login {server}`")
}

/// What to tell the user when an OAuth server refused a request with a 403 that asks for more
/// scope than the stored login has (`scope` as the challenge names it, if it does).
pub(crate) fn scope_hint(server: &str, scope: Option<&str>) -> String {
    match scope.map(str::trim).filter(|s| !s.is_empty()) {
        Some(scope) => format!(
            "the server wants more scope than the login has ({scope}); add it to the entry's \
             OAuth scopes and run `switchboard auth login {server}` again"
        ),
        None => format!(
            "the server wants more scope than the login has (it did not say which); run \
             `switchboard auth login {server}` again, with the scopes it documents in the \
             entry's OAuth scopes"
        ),
    }
}

/// What to tell the user when an OAuth server refused a request in a running session, from the
/// answer's `status` and `WWW-Authenticate` challenge: more scope (a 403 that names one or says
/// `insufficient_scope`), no access (another 403), or a login (a 401).
pub(crate) fn oauth_refusal_hint(server: &str, status: u16, challenge: Option<&str>) -> String {
    if status != 403 {
        return login_hint(server);
    }
    let scope = challenge.and_then(|c| challenge_param(c, "scope"));
    let insufficient = challenge
        .and_then(|c| challenge_param(c, "error"))
        .is_some_and(|e| e.eq_ignore_ascii_case("insufficient_scope"));
    if scope.is_some() || insufficient {
        return scope_hint(server, scope);
    }
    format!(
        "the server refused the request (HTTP 403): the account logged in may not have access to \
         it; `switchboard auth login {server}` logs in again"
    )
}

/// The value of parameter `name` in a `WWW-Authenticate` challenge (`Bearer error="x",
/// scope="a b"`), quoted or not; `None` when it is not there.
pub(crate) fn challenge_param<'a>(challenge: &'a str, name: &str) -> Option<&'a str> {
    let mut rest = challenge;
    loop {
        rest = rest.trim_start_matches(|c: char| c == ',' || c.is_whitespace());
        if rest.is_empty() {
            return None;
        }
        // A token: a scheme name, or a parameter's name when `=` follows.
        let end = rest
            .find(|c: char| c == '=' || c == ',' || c.is_whitespace())
            .unwrap_or(rest.len());
        let (token, after) = rest.split_at(end);
        let after_ws = after.trim_start();
        let Some(value_part) = after_ws.strip_prefix('=') else {
            rest = after;
            continue;
        };
        let value_part = value_part.trim_start();
        let (value, next) = if let Some(quoted) = value_part.strip_prefix('"') {
            // Up to the closing quote that is not escaped.
            let mut escaped = false;
            let close = quoted.char_indices().find_map(|(i, c)| {
                let found = c == '"' && !escaped;
                escaped = c == '\\' && !escaped;
                found.then_some(i)
            });
            match close {
                Some(i) => (&quoted[..i], &quoted[i + 1..]),
                None => (quoted, ""),
            }
        } else {
            let end = value_part
                .find(|c: char| c == ',' || c.is_whitespace())
                .unwrap_or(value_part.len());
            value_part.split_at(end)
        };
        if token.eq_ignore_ascii_case(name) {
            return Some(value);
        }
        rest = next;
    }
}

/// A failed HTTP request in words: "cannot connect: connection refused" (the root cause),
/// "the request timed out", or the error's chain.
pub(crate) fn reqwest_detail(e: &reqwest::Error) -> String {
    let mut deepest: &(dyn std::error::Error + 'static) = e;
    while let Some(next) = deepest.source() {
        deepest = next;
    }
    if e.is_connect() {
        format!("cannot connect: {deepest}")
    } else if e.is_timeout() {
        "the request timed out".to_string()
    } else {
        chain(e)
    }
}

/// The useful part of an HTTP transport failure. rmcp's error types do not chain to reqwest's
/// causes, so look inside: "connection refused" sits three sources below "Client error".
fn http_detail(error: &(dyn std::error::Error + Send + Sync + 'static)) -> String {
    match error.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
        Some(StreamableHttpError::Client(e)) => reqwest_detail(e),
        Some(StreamableHttpError::UnexpectedContentType(content_type)) => {
            let got = match content_type {
                Some(content_type) => format!("the server answered with {content_type}"),
                None => "the server answered without a Content-Type".to_string(),
            };
            format!("{got}, not JSON or an event stream{NOT_AN_ENDPOINT}")
        }
        Some(StreamableHttpError::HttpStatus(status)) if status.status == 501 => {
            format!("HTTP 501 Not Implemented{NOT_AN_ENDPOINT}")
        }
        Some(StreamableHttpError::UnexpectedServerResponse(message)) => {
            // rmcp words a JSON body that is not JSON-RPC after its own type name, and quotes
            // an error status's whole body (often a web page of many lines).
            let message = condensed(&message.replace("as ServerJsonRpcMessage", "as JSON-RPC"));
            if ["HTTP 404", "HTTP 405"]
                .iter()
                .any(|status| message.starts_with(status))
                || message.starts_with("could not parse JSON")
            {
                format!("{message}{NOT_AN_ENDPOINT}")
            } else if message.starts_with("HTTP 401") || message.starts_with("HTTP 403") {
                // No WWW-Authenticate, so not OAuth as MCP defines it: a key or token header.
                format!("{message}{NEEDS_CREDENTIALS}")
            } else {
                message
            }
        }
        Some(other) => chain(other),
        None => chain(error),
    }
}

/// How much of a body an error message quotes.
const BODY_CHARS: usize = 200;

/// rmcp's "HTTP 404 Not Found: BODY" with BODY made one short line: a web page becomes its
/// title, anything else has its whitespace folded and is cut at [`BODY_CHARS`].
fn condensed(message: &str) -> String {
    let Some((head, body)) = message.split_once(": ") else {
        return message.to_string();
    };
    if !head.starts_with("HTTP ") {
        return message.to_string();
    }
    let body = body.trim();
    let lower = body.to_ascii_lowercase();
    if lower.starts_with("<!doctype html") || lower.starts_with("<html") || lower.contains("<body")
    {
        let title = lower
            .find("<title")
            .and_then(|at| Some(at + lower[at..].find('>')? + 1))
            .and_then(|from| Some((from, from + lower[from..].find("</title")?)))
            .map(|(from, to)| one_line(&body[from..to]))
            .filter(|t| !t.is_empty());
        return match title {
            Some(title) => format!("{head}: a web page titled {title:?}"),
            None => format!("{head}: a web page"),
        };
    }
    let line = one_line(body);
    if line.is_empty() {
        head.to_string()
    } else {
        format!("{head}: {line}")
    }
}

/// `text` with every run of whitespace made one space, cut at [`BODY_CHARS`] characters.
fn one_line(text: &str) -> String {
    let mut words = text.split_whitespace();
    let mut line = words.next().unwrap_or_default().to_string();
    for word in words {
        line.push(' ');
        line.push_str(word);
    }
    switchboard_core::clip(&line, BODY_CHARS).into_owned()
}

/// Said after an answer that shows the URL is not a Streamable HTTP MCP endpoint (a web page, a
/// path the server does not serve).
pub(crate) const NOT_AN_ENDPOINT: &str = "; is this the server's MCP endpoint? Streamable HTTP servers \
    usually serve it at /mcp, legacy HTTP+SSE servers at /sse";

/// Said after a 401 or 403 that does not ask for OAuth.
const NEEDS_CREDENTIALS: &str = "; the server wants credentials: give its entry the header it \
    expects, e.g. headers = { Authorization = \"Bearer ${TOKEN}\" } (the variable read from your \
    environment)";

fn init_detail(e: &ClientInitializeError) -> String {
    match e {
        ClientInitializeError::JsonRpcError(data) => {
            format!(
                "server answered initialize with error {}: {}",
                data.code.0, data.message
            )
        }
        ClientInitializeError::ConnectionClosed(_) => {
            "the server closed the connection during initialize".to_string()
        }
        ClientInitializeError::ExpectedInitResult(Some(ServerResult::CustomResult(answer))) => {
            malformed_init(&answer.0)
        }
        other => chain(other),
    }
}

/// What is wrong with an `initialize` answer that is not an initialize result (capabilities
/// of the wrong type, a null result, ...): the decoder's complaint and the answer, quoted.
fn malformed_init(answer: &serde_json::Value) -> String {
    let why = match serde_json::from_value::<InitializeResult>(answer.clone()) {
        Err(e) => e.to_string(),
        Ok(_) => "it does not read as an initialize result".to_string(),
    };
    let answer = answer.to_string();
    let quoted = switchboard_core::clip(&answer, 300);
    format!("the server's answer to initialize is malformed ({why}): {quoted}")
}

/// The transport config for an HTTP server. `Authorization: Bearer x` goes through rmcp's
/// `auth_header`; every other header (other Authorization schemes too) is a custom header.
/// Values are marked sensitive so they stay out of debug output.
pub(crate) fn http_config(
    server: &str,
    url: &str,
    headers: &[(String, Secret)],
) -> Result<StreamableHttpClientTransportConfig, SessionError> {
    let config_error = |detail: String| SessionError::Config {
        server: server.to_string(),
        detail,
    };
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_string());
    // rmcp re-opens a broken SSE stream forever by default, so a call in flight when the server
    // dies would wait out its whole timeout. Bound it: consecutive failures only, so a server
    // that closes streams on purpose (SEP-1699 polling) and answers the GET is unaffected.
    let mut retry = ExponentialBackoff::default();
    retry.max_times = Some(SSE_RETRIES);
    retry.base_duration = Duration::from_millis(250);
    retry.max_delay = Some(Duration::from_secs(2));
    config.retry_config = Arc::new(retry);
    // A restarted server no longer knows our session id; start a new session transparently.
    config = config.reinit_on_expired_session(true);
    let mut custom = HashMap::new();
    for (name, value) in headers {
        if name.eq_ignore_ascii_case("authorization")
            && let Some(token) = bearer_token(value.expose())
        {
            config = config.auth_header(token.to_string());
            continue;
        }
        if TRANSPORT_HEADERS
            .iter()
            .any(|h| name.eq_ignore_ascii_case(h))
        {
            return Err(config_error(format!(
                "header \"{name}\" is set by the MCP transport itself and cannot be configured"
            )));
        }
        let (header_name, header_value) = header(name, value).map_err(config_error)?;
        custom.insert(header_name, header_value);
    }
    Ok(config.custom_headers(custom))
}

/// A configured header as a name and a value marked sensitive (kept out of debug output), or
/// why it is not one.
pub(crate) fn header(name: &str, value: &Secret) -> Result<(HeaderName, HeaderValue), String> {
    let header_name = HeaderName::from_bytes(name.as_bytes())
        .map_err(|_| format!("\"{name}\" is not a valid HTTP header name"))?;
    let mut header_value = HeaderValue::from_str(value.expose())
        .map_err(|_| format!("the value of header \"{name}\" is not a valid HTTP header value"))?;
    header_value.set_sensitive(true);
    Ok((header_name, header_value))
}

fn bearer_token(value: &str) -> Option<&str> {
    let (scheme, token) = value.trim().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|t| !t.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_challenges_parameters_are_read_quoted_or_not() {
        let c = r#"Bearer scope="mcp:basic mcp:write", resource_metadata="http://x/.well-known/oauth-protected-resource/mcp", error="insufficient_scope""#;
        assert_eq!(challenge_param(c, "scope"), Some("mcp:basic mcp:write"));
        assert_eq!(challenge_param(c, "ERROR"), Some("insufficient_scope"));
        assert_eq!(challenge_param(c, "realm"), None);
        // Not fooled by a name inside another's value, or by another scheme's parameters.
        let c = r#"Basic realm="scope=\"x\"", Bearer error=invalid_token,scope=files:read"#;
        assert_eq!(challenge_param(c, "scope"), Some("files:read"));
        assert_eq!(challenge_param(c, "error"), Some("invalid_token"));
        assert_eq!(challenge_param(c, "realm"), Some(r#"scope=\"x\""#));
        assert_eq!(challenge_param("Bearer", "scope"), None);
        assert_eq!(
            challenge_param(r#"Bearer scope="unterminated"#, "scope"),
            Some("unterminated")
        );
        assert_eq!(challenge_param("", "scope"), None);
    }

    #[test]
    fn an_oauth_refusal_in_a_running_session_says_what_the_server_wants() {
        let more = oauth_refusal_hint(
            "gh",
            403,
            Some(r#"Bearer error="insufficient_scope", scope="repo admin:org""#),
        );
        assert!(
            more.contains("(repo admin:org)") && more.contains("switchboard auth login gh"),
            "{more}"
        );
        let unnamed = oauth_refusal_hint("gh", 403, Some(r#"Bearer error="insufficient_scope""#));
        assert!(unnamed.contains("did not say which"), "{unnamed}");
        let forbidden = oauth_refusal_hint("gh", 403, None);
        assert!(forbidden.contains("may not have access"), "{forbidden}");
        assert_eq!(
            oauth_refusal_hint("gh", 401, Some("Bearer")),
            login_hint("gh")
        );
    }

    #[test]
    fn an_error_page_is_quoted_as_its_title_and_other_bodies_as_one_short_line() {
        let page = "HTTP 404 Not Found: <!DOCTYPE html>\n<html>\n<head><TITLE>\n 404  Not Found\n</TITLE></head>\n<body>\n<h1>Not Found</h1>\n</body>\n</html>\n";
        assert_eq!(
            condensed(page),
            "HTTP 404 Not Found: a web page titled \"404 Not Found\""
        );
        let untitled = "HTTP 405 Method Not Allowed: <html><body><p>no</p></body></html>";
        assert_eq!(
            condensed(untitled),
            "HTTP 405 Method Not Allowed: a web page"
        );
        let json = "HTTP 400 Bad Request: {\n  \"error\": \"bad\"\n}";
        assert_eq!(
            condensed(json),
            "HTTP 400 Bad Request: { \"error\": \"bad\" }"
        );
        let long = format!("HTTP 500 Internal Server Error: {}", "é".repeat(300));
        let cut = condensed(&long);
        assert!(cut.ends_with('…') && cut.chars().count() < 250, "{cut}");
        assert_eq!(
            condensed("HTTP 502 Bad Gateway:   \n "),
            "HTTP 502 Bad Gateway"
        );
        assert_eq!(condensed("could not parse: x\ny"), "could not parse: x\ny");
    }

    fn headers(pairs: &[(&str, &str)]) -> Vec<(String, Secret)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), Secret::new(*v)))
            .collect()
    }

    #[test]
    fn bearer_authorization_becomes_the_auth_header() {
        let c = http_config(
            "s",
            "http://x/mcp",
            &headers(&[("Authorization", "Bearer abc"), ("X-Team", "t1")]),
        )
        .unwrap();
        assert_eq!(c.auth_header.as_deref(), Some("abc"));
        assert_eq!(c.custom_headers.len(), 1);
        assert!(
            c.custom_headers
                .contains_key(&HeaderName::from_static("x-team"))
        );
    }

    #[test]
    fn other_authorization_schemes_stay_custom_headers() {
        let c = http_config(
            "s",
            "http://x/mcp",
            &headers(&[("authorization", "Basic Zm9v")]),
        )
        .unwrap();
        assert_eq!(c.auth_header, None);
        assert!(c.custom_headers.contains_key(&http::header::AUTHORIZATION));
    }

    #[test]
    fn bad_or_reserved_headers_are_named_without_their_value() {
        for (name, value, expect) in [
            ("Mcp-Session-Id", "v", "set by the MCP transport"),
            ("bad header", "v", "not a valid HTTP header name"),
            ("X-Ok", "line\nbreak-secret", "value of header \"X-Ok\""),
        ] {
            let err = http_config("s", "http://x/mcp", &headers(&[(name, value)])).unwrap_err();
            let text = err.to_string();
            assert!(text.contains(expect), "{text}");
            assert!(!text.contains("secret"), "{text}");
        }
    }
}
