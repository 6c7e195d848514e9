//! `Handler`: switchboard's side of one MCP connection. It declares the client capabilities,
//! answers the server's requests (roots: its own [`crate::Root`]s or the process's; sampling and
//! elicitation: handed to the caller of the relayed call in flight, else sampling refused and
//! elicitation declined, or accepted with the schema's defaults when
//! [`crate::Elicitation::AcceptDefaults`] is configured), and turns `list_changed`
//! notifications into re-list signals for the session's supervisor.
// Roots and sampling are deprecated by SEP-2577 in rmcp 3.x, but 2025-11-25 servers still use
// them (server-everything registers extra tools only for clients that declare them).
#![allow(deprecated)]

use std::sync::Arc;

use rmcp::model::{
    ClientCapabilities, ClientConfig, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequestParams, ElicitResult, ElicitationAction, ErrorCode, ErrorData, Implementation,
    ListRootsResult, LoggingMessageNotificationParam, ProtocolVersion,
    ResourceUpdatedNotificationParam,
};
use rmcp::service::{InboundStreamOrigin, NotificationContext, RequestContext};
use rmcp::{ClientHandler, RoleClient};
use serde_json::{Map, Value};
use tokio::sync::{broadcast, mpsc, oneshot};

use crate::execution::Executions;
use crate::options::{self, Elicitation};
use crate::relay::{Relays, ServerEvent, Upcall, UpcallError, UpcallKind};
use crate::roots::Offer;

/// Which list a server said changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum ListKind {
    Tools,
    Resources,
    Prompts,
}

/// The client half of one connection; cheap to clone (rmcp shares it across tasks).
#[derive(Clone)]
pub(crate) struct Handler {
    server: String,
    changes: mpsc::UnboundedSender<ListKind>,
    elicitation: Elicitation,
    /// Calls in flight on this server whose callers take progress and server requests.
    relays: Arc<Relays>,
    /// Log messages and resource updates, for whoever listens.
    events: broadcast::Sender<ServerEvent>,
    /// What the server's tool lists say of each tool's `execution`, noted by its transport.
    executions: Arc<Executions>,
    /// The roots this server is offered, and when it last asked for them and was given some.
    roots_offer: Arc<Offer>,
}

impl Handler {
    /// The relayed calls in flight on this server.
    pub(crate) fn relays(&self) -> Arc<Relays> {
        self.relays.clone()
    }

    /// Where the session's transport notes what tool lists say of `execution`.
    pub(crate) fn executions(&self) -> Arc<Executions> {
        self.executions.clone()
    }

    pub(crate) fn new(
        server: &str,
        relays: Arc<Relays>,
        events: broadcast::Sender<ServerEvent>,
        executions: Arc<Executions>,
        roots_offer: Arc<Offer>,
    ) -> (Self, mpsc::UnboundedReceiver<ListKind>) {
        let (changes, rx) = mpsc::unbounded_channel();
        (
            Self {
                server: server.to_string(),
                changes,
                elicitation: options::current().elicitation,
                relays,
                events,
                executions,
                roots_offer,
            },
            rx,
        )
    }

    /// Hand a server's request to the caller of the relayed call it belongs to: the request
    /// whose HTTP response stream it came on, else the one relayed call in flight. `None` when
    /// there is no such caller or it did not answer (the default answer applies then).
    async fn relay(
        &self,
        kind: UpcallKind,
        params: Value,
        cx: &RequestContext<RoleClient>,
    ) -> Option<Result<Value, UpcallError>> {
        let sink = match cx.extensions.get::<InboundStreamOrigin>() {
            Some(InboundStreamOrigin::OutboundRequest(id)) => self.relays.by_request(id)?,
            _ => self.relays.sole()?,
        };
        let (reply, answer) = oneshot::channel();
        sink.send(Upcall::Request {
            kind,
            params,
            reply,
        })
        .ok()?;
        answer.await.ok()
    }

    fn changed(&self, kind: ListKind) {
        tracing::debug!(server = %self.server, ?kind, "list_changed");
        // The receiver is gone only when the session is being torn down; nothing to re-list then.
        let _ = self.changes.send(kind);
    }
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        // rmcp's capability builders need its `server` feature; the wire form is simple.
        // Sampling with the server's tools (2025-11-25): the model may ask for them and the
        // server runs them. Both elicitation modes: a form, or a page for the user to open. Who
        // answers decides what it can do: `chat` puts both to its person, a gateway passes
        // each to a client that declared it, and nobody answers with a decline.
        let capabilities: ClientCapabilities = serde_json::from_value(serde_json::json!({
            "roots": {},
            "sampling": {"tools": {}},
            "elicitation": {"form": {}, "url": {}}
        }))
        .unwrap_or_default();
        // rmcp's default is ProtocolVersion::LATEST (2026-07-28), which strict 2025 servers
        // reject in `initialize`; pin the newest version that still has `initialize`.
        ClientConfig::new(
            capabilities,
            Implementation::new("switchboard", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }

    async fn list_roots(
        &self,
        _cx: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        // The folders the host was told to offer this server; none unless it was.
        let listing = self.roots_offer.listing();
        self.roots_offer.note(!listing.roots.is_empty());
        Ok(listing)
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        cx: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let params = serde_json::to_value(&params).unwrap_or(Value::Null);
        if let Some(answer) = self.relay(UpcallKind::Sampling, params, &cx).await {
            return relayed(answer);
        }
        Err(ErrorData::new(
            ErrorCode::INVALID_REQUEST,
            "sampling was not allowed: nobody was there to approve it (switchboard run without --yes, a client of the gateway that cannot sample, or a call made outside chat and run)",
            None,
        ))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        cx: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let params = serde_json::to_value(&request).unwrap_or(Value::Null);
        if let Some(answer) = self.relay(UpcallKind::Elicitation, params, &cx).await {
            return relayed(answer);
        }
        Ok(answer_elicitation(self.elicitation, &request))
    }

    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _cx: NotificationContext<RoleClient>,
    ) {
        // No receiver is fine: nobody relays resource updates.
        let _ = self.events.send(ServerEvent::ResourceUpdated {
            server: self.server.clone(),
            uri: params.uri,
        });
    }

    async fn on_tool_list_changed(&self, _cx: NotificationContext<RoleClient>) {
        self.changed(ListKind::Tools);
    }

    async fn on_resource_list_changed(&self, _cx: NotificationContext<RoleClient>) {
        self.changed(ListKind::Resources);
    }

    async fn on_prompt_list_changed(&self, _cx: NotificationContext<RoleClient>) {
        self.changed(ListKind::Prompts);
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _cx: NotificationContext<RoleClient>,
    ) {
        // Server log lines are the server's business; keep them at debug for diagnosis.
        tracing::debug!(
            server = %self.server,
            level = ?params.level,
            logger = params.logger.as_deref().unwrap_or(""),
            data = %params.data,
            "server log"
        );
        if let Ok(params) = serde_json::to_value(&params) {
            let _ = self.events.send(ServerEvent::Log {
                server: self.server.clone(),
                params,
            });
        }
    }
}

/// A relayed answer as the typed result rmcp sends back to the server.
fn relayed<T: serde::de::DeserializeOwned>(
    answer: Result<Value, UpcallError>,
) -> Result<T, ErrorData> {
    match answer {
        Ok(value) => serde_json::from_value(value).map_err(|e| {
            ErrorData::new(
                ErrorCode::INTERNAL_ERROR,
                format!("the relayed answer is not a valid result: {e}"),
                None,
            )
        }),
        Err(e) => Err(ErrorData::new(ErrorCode(e.code), e.message, None)),
    }
}

/// How this host answers an elicitation request under `policy` (also for the input requests
/// of a multi-round-trip call, see `mrtr`).
pub(crate) fn answer_elicitation(
    policy: Elicitation,
    request: &ElicitRequestParams,
) -> ElicitResult {
    match (policy, request) {
        (
            Elicitation::AcceptDefaults,
            ElicitRequestParams::FormElicitationParams {
                requested_schema, ..
            },
        ) => {
            let schema = serde_json::to_value(requested_schema).unwrap_or(Value::Null);
            ElicitResult::new(ElicitationAction::Accept)
                .with_content(Value::Object(schema_defaults(&schema)))
        }
        // No user is attached to a session; declining is the spec's polite "no". A URL-mode
        // elicitation needs a person with a browser, so it is declined in every mode.
        _ => ElicitResult::new(ElicitationAction::Decline),
    }
}

/// Every property of an elicitation schema that declares a `default`, with that default.
fn schema_defaults(schema: &Value) -> Map<String, Value> {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|props| {
            props
                .iter()
                .filter_map(|(name, prop)| Some((name.clone(), prop.get("default")?.clone())))
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_taken_from_the_schema_and_others_left_out() {
        let schema = serde_json::json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "default": "Ada"},
                "age": {"type": "integer", "default": 36},
                "status": {"type": "string", "enum": ["a", "b"], "default": "b"},
                "note": {"type": "string"}
            }
        });
        let got = schema_defaults(&schema);
        assert_eq!(got.len(), 3);
        assert_eq!(got["name"], "Ada");
        assert_eq!(got["age"], 36);
        assert_eq!(got["status"], "b");
        assert!(schema_defaults(&Value::Null).is_empty());
    }
}
