//! Relayed progress in arrival order on a transport rmcp reads itself (Streamable HTTP): the
//! progress of a relayed call goes to the call's relay as the session takes it from the
//! transport, before the response after it can reach the caller.
//!
//! rmcp's session hands a response straight to the waiting request but each notification to a
//! task of its own, so without this progress notifications could overtake each other, and one
//! sent just before the result could reach the relay after the caller had its result and
//! stopped listening (the caller would see fewer than the server sent). A stdio server's
//! reader does the same for its lines (`raw`); this wraps the HTTP transport, whose messages
//! from every stream (the POST's event stream and the standalone GET stream) come out of one
//! `receive`, in the order rmcp's transport worker forwards them.

use std::sync::Arc;

use rmcp::RoleClient;
use rmcp::model::{JsonRpcMessage, JsonRpcNotification, ServerNotification};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;

use crate::relay::Relays;

/// A transport whose relayed calls' progress is handed to their relays on the way in.
pub(crate) struct InOrder<T> {
    inner: T,
    relays: Arc<Relays>,
}

impl<T> InOrder<T> {
    /// Wrap `inner`, handing progress for the calls in `relays` over as it arrives.
    pub(crate) fn new(inner: T, relays: Arc<Relays>) -> Self {
        Self { inner, relays }
    }

    /// Hand `message` to the relays when it is progress (`None` then: see
    /// `Relays::progress`, which also keeps progress that comes before its call registers);
    /// anything else comes back for rmcp's session.
    fn take(&self, message: RxJsonRpcMessage<RoleClient>) -> Option<RxJsonRpcMessage<RoleClient>> {
        match message {
            JsonRpcMessage::Notification(JsonRpcNotification {
                notification: ServerNotification::ProgressNotification(note),
                ..
            }) => {
                self.relays.progress(note.params);
                None
            }
            other => Some(other),
        }
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for InOrder<T> {
    type Error = T::Error;

    fn name() -> std::borrow::Cow<'static, str> {
        T::name()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    /// Cancel-safe as the inner `receive` is: a message taken here has been handed over
    /// before the next await.
    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            let message = self.inner.receive().await?;
            if let Some(message) = self.take(message) {
                return Some(message);
            }
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;

    use rmcp::model::ServerJsonRpcMessage;
    use rmcp::model::{NumberOrString, ProgressToken, RequestId};
    use serde_json::json;
    use tokio::sync::mpsc;

    use super::*;
    use crate::relay::Upcall;

    /// What a server sent, in order, as rmcp's HTTP transport would yield it.
    struct Script(VecDeque<ServerJsonRpcMessage>);

    impl Transport<RoleClient> for Script {
        type Error = std::io::Error;

        fn send(
            &mut self,
            _item: TxJsonRpcMessage<RoleClient>,
        ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
            std::future::ready(Ok(()))
        }

        async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
            self.0.pop_front()
        }

        async fn close(&mut self) -> Result<(), Self::Error> {
            Ok(())
        }
    }

    fn message(v: serde_json::Value) -> ServerJsonRpcMessage {
        serde_json::from_value(v).unwrap()
    }

    fn progress(token: serde_json::Value, p: u32) -> ServerJsonRpcMessage {
        message(json!({"jsonrpc": "2.0", "method": "notifications/progress",
            "params": {"progressToken": token, "progress": p, "total": 3}}))
    }

    fn seen(upcalls: &mut mpsc::UnboundedReceiver<Upcall>) -> Vec<f64> {
        let mut seen = Vec::new();
        while let Ok(Upcall::Progress { progress, .. }) = upcalls.try_recv() {
            seen.push(progress);
        }
        seen
    }

    /// The race this closes: rmcp hands the response to the caller at once but each
    /// notification to a task of its own, so progress must already be with the relay when the
    /// response leaves the transport.
    #[tokio::test]
    async fn progress_of_a_relayed_call_is_with_its_relay_before_the_response_leaves_the_transport()
    {
        let relays = Arc::new(Relays::default());
        let (sink, mut upcalls) = mpsc::unbounded_channel();
        let _registered = relays.register(
            ProgressToken(NumberOrString::Number(7)),
            RequestId::Number(3),
            Some(sink),
        );
        let response = json!({"jsonrpc": "2.0", "id": 3, "result": {"content": []}});
        let script = Script(VecDeque::from([
            progress(json!(7), 1),
            progress(json!(8), 1),
            progress(json!(7), 2),
            message(json!({"jsonrpc": "2.0", "method": "notifications/message",
                "params": {"level": "info", "data": "notifications/progress"}})),
            progress(json!(7), 3),
            message(response.clone()),
        ]));
        let mut transport = InOrder::new(script, relays.clone());
        // Not progress: passed on (progress under another token is kept for its call).
        let log = transport.receive().await.unwrap();
        assert_eq!(
            serde_json::to_value(&log).unwrap()["method"],
            json!("notifications/message")
        );
        assert_eq!(seen(&mut upcalls), [1.0, 2.0]);
        let last = transport.receive().await.unwrap();
        assert_eq!(serde_json::to_value(&last).unwrap(), response);
        assert_eq!(
            seen(&mut upcalls),
            [3.0],
            "the last progress is with the relay before the response is"
        );
        assert!(transport.receive().await.is_none());
    }
}
