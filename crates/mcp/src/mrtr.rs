//! Multi-round-trip requests (SEP-2322, protocol 2026-07-28): a `tools/call`, `prompts/get` or
//! `resources/read` may answer `input_required` with `inputRequests` (elicitation, sampling,
//! roots) and an opaque `requestState`; the client answers each input request and sends the
//! request again (a new JSON-RPC id) with `inputResponses` and the state echoed unchanged.
//! The answers are the ones the session handler gives to the same requests on older revisions:
//! elicitation per the configured policy, roots the configured folders; sampling is not offered, so a request
//! that needs it ends with its `input_required` result (the caller reports it).
// Roots is deprecated by SEP-2577 but still one of the input request kinds.
#![allow(deprecated)]

use std::collections::BTreeMap;
use std::time::Duration;

use rmcp::model::{ClientRequest, InputRequest, InputResponses, ServerResult};

use crate::handler::answer_elicitation;
use crate::options;
use crate::roots::Offer;

/// Rounds one request may take before its last `input_required` result is returned as is.
pub(crate) const MAX_ROUNDS: usize = 8;

/// Pause before resending a request that carried only `requestState` (the server is polling
/// itself through the client), growing per such round.
const STATE_ONLY_PAUSE: Duration = Duration::from_millis(50);

/// The next request after `result`, or `None` when `result` is final or cannot be answered.
/// `round` counts the rounds so far (for the pause between state-only rounds).
pub(crate) async fn next_round(
    request: &ClientRequest,
    result: &ServerResult,
    round: usize,
    roots: &Offer,
) -> Option<ClientRequest> {
    let ServerResult::InputRequiredResult(input) = result else {
        return None;
    };
    if round >= MAX_ROUNDS {
        return None;
    }
    let requests = input.input_requests.clone().unwrap_or_default();
    if requests.is_empty() && input.request_state.is_none() {
        return None;
    }
    let responses = answers(requests, roots)?;
    if responses.is_empty() {
        tokio::time::sleep(STATE_ONLY_PAUSE * (round as u32 + 1)).await;
    }
    let responses = (!responses.is_empty()).then_some(responses);
    let state = input.request_state.clone();
    let mut next = request.clone();
    match &mut next {
        ClientRequest::CallToolRequest(r) => {
            r.params.input_responses = responses;
            r.params.request_state = state;
        }
        ClientRequest::GetPromptRequest(r) => {
            r.params.input_responses = responses;
            r.params.request_state = state;
        }
        ClientRequest::ReadResourceRequest(r) => {
            r.params.input_responses = responses;
            r.params.request_state = state;
        }
        _ => return None,
    }
    Some(next)
}

/// Answers to every input request, or `None` if one cannot be answered (sampling).
fn answers(requests: BTreeMap<String, InputRequest>, roots: &Offer) -> Option<InputResponses> {
    let policy = options::current().elicitation;
    let mut out = InputResponses::new();
    for (key, request) in requests {
        let value = match request {
            InputRequest::Elicitation(r) => {
                serde_json::to_value(answer_elicitation(policy, &r.params)).ok()?
            }
            InputRequest::ListRoots(_) => serde_json::to_value(roots.listing()).ok()?,
            InputRequest::CreateMessage(_) => {
                tracing::debug!("a server asked for sampling, which switchboard does not offer");
                return None;
            }
            #[allow(unreachable_patterns)]
            _ => return None,
        };
        out.insert(key, value);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{CallToolRequest, CallToolRequestParams};
    use serde_json::Value;

    fn input_required(value: Value) -> ServerResult {
        ServerResult::InputRequiredResult(serde_json::from_value(value).unwrap())
    }

    fn call() -> ClientRequest {
        ClientRequest::CallToolRequest(CallToolRequest::new(CallToolRequestParams::new("t")))
    }

    #[tokio::test]
    async fn state_is_echoed_and_elicitations_answered() {
        let result = input_required(serde_json::json!({
            "resultType": "input_required",
            "requestState": "opaque-123",
            "inputRequests": {
                "ask": {"method": "elicitation/create", "params": {
                    "mode": "form", "message": "name?",
                    "requestedSchema": {"type": "object", "properties": {"n": {"type": "string"}}}
                }}
            }
        }));
        let next = next_round(&call(), &result, 0, &Offer::default())
            .await
            .expect("a retry");
        let ClientRequest::CallToolRequest(r) = next else {
            panic!("not a call")
        };
        assert_eq!(r.params.request_state.as_deref(), Some("opaque-123"));
        let responses = r.params.input_responses.expect("responses");
        assert_eq!(responses["ask"]["action"], "decline");
    }

    #[tokio::test]
    async fn no_state_means_none_sent_and_final_results_end_the_loop() {
        let result = input_required(serde_json::json!({
            "resultType": "input_required",
            "inputRequests": {"r": {"method": "roots/list"}}
        }));
        // The server's own roots answer its `roots/list`.
        let own = crate::Root::folder(std::path::Path::new("/srv/own")).unwrap();
        let offer = Offer::new(Some(vec![own]));
        let next = next_round(&call(), &result, 0, &offer)
            .await
            .expect("a retry");
        let ClientRequest::CallToolRequest(r) = next else {
            panic!("not a call")
        };
        assert_eq!(r.params.request_state, None);
        let responses = serde_json::to_value(r.params.input_responses.expect("responses")).unwrap();
        assert_eq!(responses["r"]["roots"][0]["uri"], "file:///srv/own");
        assert!(
            next_round(&call(), &result, MAX_ROUNDS, &Offer::default())
                .await
                .is_none()
        );
        let sampling = input_required(serde_json::json!({
            "resultType": "input_required",
            "inputRequests": {"s": {"method": "sampling/createMessage", "params": {
                "messages": [], "maxTokens": 5
            }}}
        }));
        assert!(
            next_round(&call(), &sampling, 0, &Offer::default())
                .await
                .is_none()
        );
    }
}
