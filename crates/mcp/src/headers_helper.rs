//! `headersHelper` (Claude Code's `.mcp.json` key, `headers_helper` in switchboard.toml): a
//! shell command whose output, a JSON object of strings, gives an HTTP server's request headers.
//! It runs each time a session connects (at start and at every reconnect), and again when the
//! server refuses the headers it gave (401 or 403: a short-lived token expired), after which the
//! refused request is sent once more ([`HelperHttp`]), as Claude Code does. Its headers replace
//! configured ones of the same name.

use std::collections::HashMap;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::stream::BoxStream;
use http::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use switchboard_core::Secret;
use tokio::io::AsyncReadExt;

use crate::error::SessionError;

type HttpError = StreamableHttpError<reqwest::Error>;

/// How long the helper may run, as in Claude Code.
pub(crate) const HELPER_TIMEOUT: Duration = Duration::from_secs(10);

/// The most output read from the helper; headers are small.
const MAX_OUTPUT: u64 = 64 * 1024;

/// `headers` with those `command` prints for server `server` at `url` in place of any of the
/// same name (compared without case).
pub(crate) async fn merged(
    server: &str,
    url: &str,
    command: &str,
    headers: &[(String, Secret)],
) -> Result<Vec<(String, Secret)>, SessionError> {
    let fresh = run(server, url, command).await?;
    let mut out: Vec<(String, Secret)> = headers
        .iter()
        .filter(|(name, _)| !fresh.iter().any(|(n, _)| n.eq_ignore_ascii_case(name)))
        .cloned()
        .collect();
    out.extend(fresh);
    Ok(out)
}

/// Run the helper in a shell, from the current folder, with `CLAUDE_CODE_MCP_SERVER_NAME` and
/// `CLAUDE_CODE_MCP_SERVER_URL` set (so one script can serve several servers), and read its
/// headers. Errors never quote what it printed on stdout, nor the command (either may hold a
/// secret); its stderr is quoted.
async fn run(
    server: &str,
    url: &str,
    command: &str,
) -> Result<Vec<(String, Secret)>, SessionError> {
    run_within(server, url, command, HELPER_TIMEOUT).await
}

/// [`run`], with `limit` for the helper's time.
async fn run_within(
    server: &str,
    url: &str,
    command: &str,
    limit: Duration,
) -> Result<Vec<(String, Secret)>, SessionError> {
    let fail = |detail: String| SessionError::HeadersHelper {
        server: server.to_string(),
        detail,
    };
    let mut child = tokio::process::Command::new("sh")
        .arg("-c")
        .arg(command)
        .env("CLAUDE_CODE_MCP_SERVER_NAME", server)
        .env("CLAUDE_CODE_MCP_SERVER_URL", url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| fail(format!("cannot start a shell for it: {e}")))?;
    let pid = child.id();
    let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
        return Err(fail("its output could not be read".into()));
    };
    let work = async {
        let mut out = Vec::new();
        let mut err = Vec::new();
        let (mut stdout, mut stderr) = (stdout.take(MAX_OUTPUT), stderr.take(MAX_OUTPUT));
        let (read_out, _, status) = tokio::join!(
            stdout.read_to_end(&mut out),
            stderr.read_to_end(&mut err),
            child.wait()
        );
        (read_out.map(|_| out), err, status)
    };
    let (out, err, status) = match tokio::time::timeout(limit, work).await {
        Ok(done) => done,
        Err(_) => {
            // The shell and anything it started: they share the helper's process group.
            if let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()) {
                let _ = nix::sys::signal::killpg(
                    nix::unistd::Pid::from_raw(pid),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
            return Err(fail(format!("it did not finish within {}", seconds(limit))));
        }
    };
    let said = String::from_utf8_lossy(&err);
    let said = said.trim();
    let said = if said.is_empty() {
        String::new()
    } else {
        format!(": {}", switchboard_core::clip(said, 300))
    };
    let status = status.map_err(|e| fail(format!("waiting for it failed: {e}")))?;
    if !status.success() {
        return Err(fail(format!("it ended with {status}{said}")));
    }
    let out = out.map_err(|e| fail(format!("reading its output failed: {e}")))?;
    parse(&out).map_err(fail)
}

/// `limit` in words: "10 s", "0.3 s".
fn seconds(limit: Duration) -> String {
    let s = limit.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{s:.0} s")
    } else {
        format!("{s} s")
    }
}

/// The headers in the helper's output: one JSON object whose values are strings.
fn parse(out: &[u8]) -> Result<Vec<(String, Secret)>, String> {
    let shape = "it must print one JSON object of header names and string values, such as {\"Authorization\": \"Bearer ...\"}";
    let value: serde_json::Value = serde_json::from_slice(out).map_err(|_| {
        if out.iter().all(u8::is_ascii_whitespace) {
            format!("it printed nothing; {shape}")
        } else {
            format!("its output is not JSON; {shape}")
        }
    })?;
    let serde_json::Value::Object(map) = value else {
        return Err(format!("its output is not a JSON object; {shape}"));
    };
    map.into_iter()
        .map(|(name, value)| match value {
            serde_json::Value::String(v) => Ok((name, Secret::new(v))),
            _ => Err(format!("the value of {name:?} is not a string; {shape}")),
        })
        .collect()
}

/// The headers a session sends when a helper gives them, and how to get new ones: the helper
/// is run again when the server refuses the current ones.
pub(crate) struct Refresh {
    server: String,
    url: String,
    command: String,
    /// The entry's own headers, under the helper's.
    configured: Vec<(String, Secret)>,
    current: Mutex<Sent>,
    /// Held while the helper runs, so requests refused together run it once.
    running: tokio::sync::Mutex<()>,
}

/// One set of headers as the transport sends them (a bearer token apart, as rmcp takes it).
#[derive(Clone)]
struct Sent {
    /// Bumped each time the helper gives new headers.
    generation: u64,
    bearer: Option<String>,
    custom: HashMap<HeaderName, HeaderValue>,
}

impl Refresh {
    /// For server `server` at `url`, whose helper is `command` and whose own headers are
    /// `configured`; `bearer` and `custom` are what the session opens with (from the helper's
    /// first run).
    pub(crate) fn new(
        server: &str,
        url: &str,
        command: &str,
        configured: &[(String, Secret)],
        bearer: Option<String>,
        custom: HashMap<HeaderName, HeaderValue>,
    ) -> Arc<Self> {
        Arc::new(Self {
            server: server.to_string(),
            url: url.to_string(),
            command: command.to_string(),
            configured: configured.to_vec(),
            current: Mutex::new(Sent {
                generation: 0,
                bearer,
                custom,
            }),
            running: tokio::sync::Mutex::new(()),
        })
    }

    /// The headers to send now, as one map (the bearer token as `Authorization`), and their
    /// generation, for [`Refresh::renew`] when the server refuses them.
    pub(crate) fn header_map(&self) -> (u64, http::HeaderMap) {
        let sent = self.sent();
        let mut map: http::HeaderMap = sent.custom.into_iter().collect();
        if let Some(bearer) = sent.bearer
            && let Ok(value) = HeaderValue::from_str(&format!("Bearer {bearer}"))
        {
            map.insert(http::header::AUTHORIZATION, value);
        }
        (sent.generation, map)
    }

    fn sent(&self) -> Sent {
        self.current
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// New headers after those of generation `refused` were refused: run the helper unless a
    /// request refused at the same time already did. False when there are none (the helper
    /// failed: logged, and the refusal stands).
    pub(crate) async fn renew(&self, refused: u64) -> bool {
        let _running = self.running.lock().await;
        if self.sent().generation != refused {
            return true;
        }
        let fresh = async {
            let headers = merged(&self.server, &self.url, &self.command, &self.configured).await?;
            crate::connect::http_config(&self.server, &self.url, &headers)
        };
        match fresh.await {
            Ok(config) => {
                let mut current = self.current.lock().unwrap_or_else(|e| e.into_inner());
                current.generation += 1;
                current.bearer = config.auth_header;
                current.custom = config.custom_headers;
                tracing::info!(server = %self.server, "the server refused the headers from headersHelper; ran it again and sent the request once more");
                true
            }
            Err(e) => {
                tracing::warn!(server = %self.server, "the server refused the headers from headersHelper, and running it again failed: {e}");
                false
            }
        }
    }
}

/// Whether the server refused the request's credentials.
fn refused<T>(result: &Result<T, HttpError>) -> bool {
    let Err(e) = result else {
        return false;
    };
    let status = match e {
        StreamableHttpError::Client(e) => e.status().map(|s| s.as_u16()),
        other => crate::connect::http_status(other),
    };
    matches!(status, Some(401 | 403))
}

/// An HTTP client that sends a helper's current headers (in place of those rmcp passes, which
/// are the first run's) and, when the server refuses them, runs the helper again and repeats the
/// request once with the new ones. Without a helper it passes everything through.
#[derive(Clone)]
pub(crate) struct HelperHttp<C> {
    inner: C,
    refresh: Option<Arc<Refresh>>,
}

impl<C> HelperHttp<C> {
    pub(crate) fn new(inner: C, refresh: Option<Arc<Refresh>>) -> Self {
        Self { inner, refresh }
    }

    /// Make one request with `call` and the headers to send: rmcp's (`bearer`, `custom`)
    /// without a helper; else the helper's latest, and once more with new ones when the server
    /// refuses them.
    async fn with_headers<T, F, Fut>(
        &self,
        bearer: Option<String>,
        custom: HashMap<HeaderName, HeaderValue>,
        call: F,
    ) -> Result<T, HttpError>
    where
        F: Fn(Option<String>, HashMap<HeaderName, HeaderValue>) -> Fut,
        Fut: std::future::Future<Output = Result<T, HttpError>>,
    {
        let Some(refresh) = &self.refresh else {
            return call(bearer, custom).await;
        };
        let sent = refresh.sent();
        let first = call(sent.bearer, sent.custom).await;
        if !refused(&first) || !refresh.renew(sent.generation).await {
            return first;
        }
        let sent = refresh.sent();
        call(sent.bearer, sent.custom).await
    }
}

impl<C: StreamableHttpClient<Error = reqwest::Error> + Sync> StreamableHttpClient
    for HelperHttp<C>
{
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
        self.with_headers(auth_header, custom_headers, |bearer, custom| {
            self.inner.post_message_with_response_limits(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                bearer,
                custom,
                limits,
            )
        })
        .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), HttpError> {
        // Closing a session is not worth running the helper again: send what we have.
        let (auth_header, custom_headers) = match &self.refresh {
            Some(refresh) => {
                let sent = refresh.sent();
                (sent.bearer, sent.custom)
            }
            None => (auth_header, custom_headers),
        };
        self.inner
            .delete_session(uri, session_id, auth_header, custom_headers)
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
        self.with_headers(auth_header, custom_headers, |bearer, custom| {
            self.inner.get_stream_with_max_sse_event_size(
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                bearer,
                custom,
                max_sse_event_size,
            )
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::{parse, run_within};
    use std::time::Duration;

    /// A helper that outlives its time is killed with everything it started (they share its
    /// process group), and the error says how long it had.
    #[tokio::test]
    async fn a_helper_past_its_time_is_killed_with_its_children() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("pid");
        let command = format!("sleep 60 & echo $! > '{}'; wait", pid_file.display());
        let e = run_within("slow", "http://h/mcp", &command, Duration::from_millis(500))
            .await
            .unwrap_err()
            .to_string();
        assert!(e.contains("did not finish within 0.5 s"), "{e}");
        let pid: i32 = std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        // The grandchild is gone (or a zombie awaiting its reaper) within a moment.
        let mut alive = true;
        for _ in 0..50 {
            let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let state = state.rsplit(')').next().unwrap_or("").trim_start();
            if state.is_empty() || state.starts_with('Z') {
                alive = false;
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(!alive, "the helper's `sleep` (pid {pid}) still runs");
    }

    #[test]
    fn output_is_an_object_of_strings_and_errors_never_quote_it() {
        let got = parse(br#"{"Authorization": "Bearer s3cret", "X-Team": "a"}"#).unwrap();
        let names: Vec<&str> = got.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["Authorization", "X-Team"]);
        assert_eq!(got[0].1.expose(), "Bearer s3cret");
        for (bad, says) in [
            (&b"Bearer s3cret"[..], "not JSON"),
            (b"[\"s3cret\"]", "not a JSON object"),
            (b"{\"A\": 5}", "value of \"A\" is not a string"),
            (b"  \n", "printed nothing"),
        ] {
            let e = parse(bad).unwrap_err();
            assert!(e.contains(says), "{e}");
            assert!(!e.contains("s3cret"), "{e}");
        }
    }
}
