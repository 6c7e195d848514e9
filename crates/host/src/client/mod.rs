//! Provider HTTP clients: one [`ProviderClient`] per dialect and base URL. A thin I/O shell:
//! where to send and which headers come from `switchboard_providers::endpoint`, the body from
//! `render_request`, and replies are read by `decode_reply` / `StreamDecoder`. This module only
//! moves bytes, frames server-sent events and retries 429/5xx with backoff.

pub mod retry;
pub mod sse;

use std::time::Duration;

use futures::StreamExt as _;
use serde_json::Value;
use switchboard_core::error::chain;
use switchboard_core::{Dialect, Secret, redact_url, redact_urls_in};
use switchboard_providers::count::exact::{count_body, count_endpoint, decode_count};
use switchboard_providers::{
    Reply, StreamDecoder, StreamEvent, api_key_env, decode_error, decode_reply, default_base_url,
    endpoint, is_context_overflow,
};

use crate::error::HostError;
pub use retry::RetryPolicy;
use sse::SseParser;

/// A client for one provider endpoint and model.
#[derive(Clone, Debug)]
pub struct ProviderClient {
    http: reqwest::Client,
    /// The wire format.
    pub dialect: Dialect,
    /// Base URL (the provider's default or `--base-url`).
    pub base_url: String,
    /// Model id.
    pub model: String,
    api_key: Option<Secret>,
    /// When to retry.
    pub retry: RetryPolicy,
}

/// One successful exchange.
#[derive(Clone, Debug)]
pub struct Response {
    /// The decoded turn.
    pub reply: Reply,
    /// The response body as received: the JSON body, or for a stream the array of events
    /// (`{"event": name, "data": parsed data}`).
    pub body: Value,
    /// Requests made (1 without retries).
    pub attempts: u32,
}

/// A successful response's whole body.
async fn body_of(
    resp: reqwest::Response,
    url: &str,
    attempts: u32,
) -> Result<impl AsRef<[u8]> + use<>, HostError> {
    resp.bytes().await.map_err(|e| HostError::ProviderConnect {
        url: redact_url(url),
        detail: redact_urls_in(&format!("reading the response failed: {}", chain(&e))),
        attempts,
    })
}

/// The host of `base_url` when it is not the host of the provider's own API (an unparsable
/// URL counts as foreign: its host is shown as given, secrets removed).
pub fn foreign_host(dialect: Dialect, base_url: &str) -> Option<String> {
    let own = url::Url::parse(default_base_url(dialect))
        .ok()
        .and_then(|u| u.host_str().map(str::to_ascii_lowercase));
    match url::Url::parse(base_url) {
        Ok(u) => {
            let host = u.host_str().map(str::to_ascii_lowercase)?;
            (Some(&host) != own.as_ref()).then_some(host)
        }
        Err(_) => Some(redact_url(base_url)),
    }
}

/// The dialect's name as the CLI spells it.
/// Whether a connect error is a refused connection to this machine (`localhost` or a loopback
/// address).
fn local_refusal(url: &str, error: &reqwest::Error) -> bool {
    let local = url::Url::parse(url).ok().is_some_and(|u| match u.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    });
    local
        && chain(error)
            .to_ascii_lowercase()
            .contains("connection refused")
}

pub fn provider_name(dialect: Dialect) -> &'static str {
    dialect.as_str()
}

impl ProviderClient {
    /// A client. `base_url` defaults to the provider's; `api_key` may be absent for local
    /// servers.
    pub fn new(
        dialect: Dialect,
        base_url: Option<&str>,
        model: impl Into<String>,
        api_key: Option<Secret>,
    ) -> Result<Self, HostError> {
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(30))
            .read_timeout(Duration::from_secs(600))
            .build()
            .map_err(|e| HostError::ProviderConnect {
                url: redact_url(base_url.unwrap_or(default_base_url(dialect))),
                detail: redact_urls_in(&chain(&e)),
                attempts: 0,
            })?;
        Ok(Self {
            http,
            dialect,
            base_url: base_url.unwrap_or(default_base_url(dialect)).to_string(),
            model: model.into(),
            api_key,
            retry: RetryPolicy::default(),
        })
    }

    /// The API key from the environment (`lookup` reads one variable): from `key_env`
    /// (`--api-key-env VAR`) when given, which must then be set; else from the provider's usual
    /// variables. Without `base_url` (`--base-url`) a missing key is an error; with one it is
    /// allowed (local servers need none).
    ///
    /// The usual variable's key is sent to a custom base URL too (OpenAI-compatible servers and
    /// the providers' SDKs rely on that), but when the URL's host is not the provider's own
    /// this logs a warning naming the variable and the host, so a key does not travel to a
    /// third party unnoticed.
    pub fn key_from_env(
        dialect: Dialect,
        base_url: Option<&str>,
        key_env: Option<&str>,
        lookup: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Option<Secret>, HostError> {
        let usable = |v: &str| lookup(v).filter(|k| !k.trim().is_empty());
        if let Some(var) = key_env {
            return match usable(var) {
                Some(k) => Ok(Some(Secret::new(k.trim()))),
                None => Err(HostError::ApiKeyEnvUnset {
                    var: var.to_string(),
                }),
            };
        }
        let vars = api_key_env(dialect);
        let found = vars.iter().find_map(|v| usable(v).map(|k| (*v, k)));
        match found {
            Some((var, k)) => {
                if let Some(host) = base_url.and_then(|u| foreign_host(dialect, u)) {
                    tracing::warn!(
                        "sending {var} to {host}, which is not {}'s API (--base-url); pass --api-key-env VAR to send another variable's key instead",
                        provider_name(dialect)
                    );
                }
                Ok(Some(Secret::new(k.trim())))
            }
            None if base_url.is_some() => Ok(None),
            None => Err(HostError::MissingApiKey {
                provider: provider_name(dialect).to_string(),
                vars: vars.join(" or "),
            }),
        }
    }

    /// A client for `model` of `dialect` at `base_url` (else, for the same dialect, this
    /// client's URL; for another, that provider's own), with this client's retry policy. It
    /// keeps this client's key when it goes to the same server, and takes the usual variable's
    /// key for another (see [`ProviderClient::key_from_env`]), so a key never follows a switch
    /// to another server.
    pub fn switched(
        &self,
        dialect: Dialect,
        base_url: Option<&str>,
        model: &str,
    ) -> Result<ProviderClient, HostError> {
        let base_url = base_url
            .map(str::to_string)
            .or_else(|| (dialect == self.dialect).then(|| self.base_url.clone()));
        let same_server = dialect == self.dialect
            && base_url.as_deref().map(|u| u.trim_end_matches('/'))
                == Some(self.base_url.trim_end_matches('/'));
        let key = if same_server {
            self.api_key.clone()
        } else {
            Self::key_from_env(dialect, base_url.as_deref(), None, &|v| {
                std::env::var(v).ok()
            })?
        };
        let mut client = ProviderClient::new(dialect, base_url.as_deref(), model, key)?;
        client.retry = self.retry.clone();
        Ok(client)
    }

    /// The URL requests go to (no secrets in it).
    pub fn url(&self, stream: bool) -> String {
        endpoint(self.dialect, &self.base_url, &self.model, stream, None).url
    }

    /// The headers requests carry, secrets replaced (for transcripts).
    pub fn redacted_headers(&self, stream: bool) -> Value {
        let ep = endpoint(
            self.dialect,
            &self.base_url,
            &self.model,
            stream,
            self.api_key.as_ref().map(Secret::expose),
        );
        crate::transcript::redact_headers(&ep.headers)
    }

    /// Send one request body and wait for the whole reply.
    pub async fn send(&self, body: &Value) -> Result<Response, HostError> {
        self.exchange(body, false, &mut |_| {}).await
    }

    /// Send one request body with streaming; `on_event` sees text deltas and tool-use starts as
    /// they arrive. The body must have been rendered with `stream: true`.
    pub async fn send_streaming(
        &self,
        body: &Value,
        on_event: &mut (dyn FnMut(&StreamEvent) + Send),
    ) -> Result<Response, HostError> {
        self.exchange(body, true, on_event).await
    }

    async fn exchange(
        &self,
        body: &Value,
        stream: bool,
        on_event: &mut (dyn FnMut(&StreamEvent) + Send),
    ) -> Result<Response, HostError> {
        let mut ep = endpoint(
            self.dialect,
            &self.base_url,
            &self.model,
            stream,
            self.api_key.as_ref().map(Secret::expose),
        );
        ep.headers
            .extend(switchboard_providers::body_headers(self.dialect, body));
        let bytes = switchboard_providers::to_bytes(body);
        let (resp, attempts) = self.post(&ep, bytes).await?;
        let is_sse = resp
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.contains("text/event-stream"));
        if stream && is_sse {
            return self.read_stream(resp, on_event, attempts).await;
        }
        let body = body_of(resp, &ep.url, attempts).await?;
        let text = body.as_ref();
        let reply = decode_reply(self.dialect, text)?;
        if stream {
            // A server that ignored `stream`: show the text at once.
            for p in &reply.parts {
                if let switchboard_providers::Part::Text(t) = p {
                    on_event(&StreamEvent::TextDelta(t.clone()));
                }
            }
        }
        Ok(Response {
            reply,
            body: serde_json::from_slice(text).unwrap_or(Value::Null),
            attempts,
        })
    }

    /// The provider's own count of the input tokens of request body `body` (rendered for this
    /// dialect, not streamed), from its counting endpoint
    /// ([`switchboard_providers::count::exact`]); free for Anthropic, and none exists for
    /// OpenAI Chat Completions.
    pub async fn count_input_tokens(&self, body: &Value) -> Result<u64, HostError> {
        let none = || HostError::NoCountingEndpoint {
            provider: provider_name(self.dialect).to_string(),
        };
        let key = self.api_key.as_ref().map(Secret::expose);
        let ep = count_endpoint(self.dialect, &self.base_url, &self.model, key).ok_or_else(none)?;
        let count = count_body(self.dialect, &self.model, body).ok_or_else(none)?;
        let (resp, attempts) = self
            .post(&ep, switchboard_providers::to_bytes(&count))
            .await?;
        let body = body_of(resp, &ep.url, attempts).await?;
        let text = body.as_ref();
        Ok(decode_count(self.dialect, text)?)
    }

    /// POST `bytes` to `ep`, retrying connection failures and 429/5xx answers as the retry
    /// policy says; a successful response, with the requests it took.
    async fn post(
        &self,
        ep: &switchboard_providers::Endpoint,
        bytes: Vec<u8>,
    ) -> Result<(reqwest::Response, u32), HostError> {
        let mut attempts = 0u32;
        loop {
            attempts += 1;
            let mut req = self.http.post(&ep.url);
            for (k, v) in &ep.headers {
                req = req.header(k.as_str(), v.as_str());
            }
            let sent = req.body(bytes.clone()).send().await;
            let retries_left = attempts <= self.retry.max_retries;
            // Nothing listening on this machine is a server not started or a wrong port, not a
            // network hiccup: one retry (it may be starting), then say so.
            let refused_here =
                matches!(&sent, Err(e) if e.is_connect() && local_refusal(&ep.url, e));
            let retries_left = retries_left && !(refused_here && attempts > 1);
            let resp = match sent {
                Ok(r) => r,
                Err(e) if retries_left && (e.is_connect() || e.is_timeout()) => {
                    let wait = self.retry.wait(attempts - 1, None);
                    tracing::warn!(url = %redact_url(&ep.url), error = %redact_urls_in(&chain(&e)), ?wait, "provider unreachable; retrying");
                    tokio::time::sleep(wait).await;
                    continue;
                }
                Err(e) => {
                    let mut detail = redact_urls_in(&chain(&e));
                    if refused_here {
                        detail.push_str(
                            "; nothing is listening there: start the local model server (Ollama, \
                             llama.cpp, vLLM, LM Studio) or check --base-url",
                        );
                    }
                    return Err(HostError::ProviderConnect {
                        url: redact_url(&ep.url),
                        detail,
                        attempts,
                    });
                }
            };
            let status = resp.status().as_u16();
            if resp.status().is_success() {
                return Ok((resp, attempts));
            }
            let headers = resp.headers().clone();
            let text = resp.bytes().await.unwrap_or_default();
            let message = decode_error(self.dialect, status, &text);
            if retries_left && retry::retryable(status) {
                let wait = self.retry.wait(attempts - 1, Some(&headers));
                tracing::warn!(status, %message, ?wait, "provider error; retrying");
                tokio::time::sleep(wait).await;
                continue;
            }
            return Err(HostError::ProviderHttp {
                provider: provider_name(self.dialect).to_string(),
                status,
                message,
                attempts,
                context_overflow: is_context_overflow(status, &text),
                hint: None,
            });
        }
    }

    async fn read_stream(
        &self,
        resp: reqwest::Response,
        on_event: &mut (dyn FnMut(&StreamEvent) + Send),
        attempts: u32,
    ) -> Result<Response, HostError> {
        let url = resp.url().to_string();
        let mut decoder = StreamDecoder::new(self.dialect);
        let mut parser = SseParser::default();
        let mut events = Vec::new();
        let mut chunks = resp.bytes_stream();
        let mut handle = |ev: sse::SseEvent,
                          decoder: &mut StreamDecoder,
                          events: &mut Vec<Value>|
         -> Result<(), HostError> {
            for shown in decoder.feed(ev.event.as_deref(), &ev.data)? {
                on_event(&shown);
            }
            let data = serde_json::from_str(&ev.data).unwrap_or(Value::String(ev.data));
            let mut rec = serde_json::Map::new();
            if let Some(name) = ev.event {
                rec.insert("event".into(), Value::String(name));
            }
            rec.insert("data".into(), data);
            events.push(Value::Object(rec));
            Ok(())
        };
        while let Some(chunk) = chunks.next().await {
            let chunk = chunk.map_err(|e| HostError::ProviderConnect {
                url: redact_url(&url),
                detail: redact_urls_in(&format!("the stream broke: {}", chain(&e))),
                attempts,
            })?;
            for ev in parser.push(&chunk) {
                handle(ev, &mut decoder, &mut events)?;
            }
        }
        for ev in parser.finish() {
            handle(ev, &mut decoder, &mut events)?;
        }
        let reply = decoder.finish()?;
        Ok(Response {
            reply,
            body: Value::Array(events),
            attempts,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_come_from_the_named_variable_or_the_usual_ones() {
        let env = |v: &str| match v {
            "OPENAI_API_KEY" => Some("sk-openai".to_string()),
            "OPENROUTER_API_KEY" => Some(" sk-or ".to_string()),
            "EMPTY" => Some("  ".to_string()),
            _ => None,
        };
        let d = Dialect::OpenAiChat;
        let key = |base: Option<&str>, var: Option<&str>| {
            ProviderClient::key_from_env(d, base, var, &env)
                .map(|k| k.map(|s| s.expose().to_string()))
        };
        assert_eq!(key(None, None).unwrap().as_deref(), Some("sk-openai"));
        assert_eq!(
            key(
                Some("https://openrouter.ai/api/v1"),
                Some("OPENROUTER_API_KEY")
            )
            .unwrap()
            .as_deref(),
            Some("sk-or")
        );
        for var in ["MISSING", "EMPTY"] {
            let err = key(Some("http://localhost:1"), Some(var)).unwrap_err();
            assert!(
                err.to_string().contains(&format!("--api-key-env {var}")),
                "{err}"
            );
        }
        // No key at all: fine for a local server, an error for the provider's API.
        let none = |_: &str| None;
        assert!(
            ProviderClient::key_from_env(d, Some("http://localhost:11434/v1"), None, &none)
                .unwrap()
                .is_none()
        );
        assert!(matches!(
            ProviderClient::key_from_env(d, None, None, &none),
            Err(HostError::MissingApiKey { .. })
        ));
    }

    #[test]
    fn only_the_providers_own_host_is_not_foreign() {
        let d = Dialect::OpenAiChat;
        assert_eq!(foreign_host(d, "https://api.openai.com/v1"), None);
        assert_eq!(foreign_host(d, "https://API.openai.com/v1/"), None);
        assert_eq!(
            foreign_host(d, "https://openrouter.ai/api/v1").as_deref(),
            Some("openrouter.ai")
        );
        assert_eq!(
            foreign_host(d, "http://u:p@127.0.0.1:8080/v1").as_deref(),
            Some("127.0.0.1")
        );
        assert_eq!(
            foreign_host(Dialect::Anthropic, "https://api.openai.com").as_deref(),
            Some("api.openai.com")
        );
        assert_eq!(
            foreign_host(
                Dialect::Gemini,
                "https://generativelanguage.googleapis.com/v1beta"
            ),
            None
        );
    }

    #[tokio::test]
    async fn an_unreachable_base_url_is_reported_without_its_secrets() {
        // A port that was just free: bound by us, then released, so nothing listens there and
        // the connection is refused at once.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut client = ProviderClient::new(
            Dialect::OpenAiChat,
            Some(&format!(
                "http://me:hunter2@127.0.0.1:{port}/v1?api_key=s3cr3t"
            )),
            "m",
            None,
        )
        .unwrap();
        client.retry.max_retries = 0;
        let err = client.send(&serde_json::json!({})).await.unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, HostError::ProviderConnect { .. }), "{text}");
        assert!(text.contains(&format!("127.0.0.1:{port}")), "{text}");
        assert!(
            !text.contains("hunter2") && !text.contains("s3cr3t"),
            "{text}"
        );
    }
}
