//! The demo ticket tracker: `search`, `get_ticket`, `close_ticket` (destructive) over a small
//! built-in data set held in memory, and one prompt (`triage`).

use std::sync::Mutex;

use serde_json::{Map, Value, json};
use switchboard_core::{CallResult, Prompt, Tool};

use super::args::{optional_str, required_str, score};
use crate::static_server::Backend;

struct Ticket {
    id: &'static str,
    title: &'static str,
    status: &'static str,
    customer: &'static str,
    body: &'static str,
}

const TICKETS: &[Ticket] = &[
    Ticket {
        id: "T-1001",
        title: "Login fails with SSO after password reset",
        status: "open",
        customer: "Acme Corp",
        body: "Since resetting her password, the customer's admin cannot log in through SSO. The identity provider shows success, then our app returns error 403.",
    },
    Ticket {
        id: "T-1002",
        title: "Invoice PDF shows wrong currency",
        status: "pending",
        customer: "Globex",
        body: "Invoices for EU customers render amounts in USD instead of EUR. Waiting for the customer to confirm the billing country.",
    },
    Ticket {
        id: "T-1003",
        title: "Export to CSV times out for large projects",
        status: "open",
        customer: "Initech",
        body: "Exporting a project with more than 50,000 rows times out after 30 seconds. Smaller exports work.",
    },
    Ticket {
        id: "T-1004",
        title: "Password reset email never arrives",
        status: "closed",
        customer: "Acme Corp",
        body: "Reset emails were blocked by the customer's spam filter; allow-listing our sender fixed it.",
    },
    Ticket {
        id: "T-1005",
        title: "Dark mode makes charts unreadable",
        status: "open",
        customer: "Umbrella",
        body: "In dark mode, chart labels are dark grey on black. Accessibility complaint from the customer's design team.",
    },
    Ticket {
        id: "T-1006",
        title: "API rate limit too low for nightly sync",
        status: "pending",
        customer: "Globex",
        body: "The nightly sync job hits HTTP 429 after 1,000 requests. Customer asks for a higher limit or a bulk endpoint.",
    },
    Ticket {
        id: "T-1007",
        title: "Two-factor codes rejected after phone change",
        status: "open",
        customer: "Hooli",
        body: "After moving to a new phone, the user's authenticator codes are rejected at login. Time drift suspected.",
    },
    Ticket {
        id: "T-1008",
        title: "Webhook retries flood the customer endpoint",
        status: "closed",
        customer: "Initech",
        body: "Failed webhooks were retried without backoff. Fixed by exponential backoff in release 4.2.",
    },
];

/// The ticket tracker backend. Closing a ticket changes it for the life of the process.
pub struct Tickets {
    statuses: Mutex<Vec<&'static str>>,
}

impl Default for Tickets {
    fn default() -> Self {
        Self::new()
    }
}

impl Tickets {
    /// A tracker holding the built-in tickets.
    pub fn new() -> Self {
        Self {
            statuses: Mutex::new(TICKETS.iter().map(|t| t.status).collect()),
        }
    }

    fn status(&self, i: usize) -> &'static str {
        self.statuses
            .lock()
            .map(|s| s[i])
            .unwrap_or(TICKETS[i].status)
    }

    fn find(&self, id: &str) -> Result<usize, CallResult> {
        TICKETS
            .iter()
            .position(|t| t.id.eq_ignore_ascii_case(id))
            .ok_or_else(|| {
                CallResult::text(
                    format!(
                        "no ticket {id:?}; ticket ids look like T-1001 (use search to find one)"
                    ),
                    true,
                )
            })
    }

    fn render(&self, i: usize) -> Value {
        let t = &TICKETS[i];
        json!({"id": t.id, "title": t.title, "status": self.status(i), "customer": t.customer, "body": t.body})
    }

    fn search(&self, args: &Map<String, Value>) -> Result<CallResult, CallResult> {
        let query = required_str(args, "query")?;
        let status = optional_str(args, "status")?;
        if let Some(s) = status
            && !["open", "pending", "closed"].contains(&s)
        {
            return Err(CallResult::text(
                format!("status must be one of open, pending, closed; got {s:?}"),
                true,
            ));
        }
        let mut hits: Vec<(usize, usize)> = (0..TICKETS.len())
            .filter(|&i| status.is_none_or(|s| self.status(i) == s))
            .map(|i| {
                let t = &TICKETS[i];
                (
                    score(
                        query,
                        &format!("{} {} {} {}", t.id, t.title, t.customer, t.body),
                    ),
                    i,
                )
            })
            .filter(|(s, _)| *s > 0)
            .collect();
        hits.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        let rows: Vec<Value> = hits
            .iter()
            .map(|&(_, i)| json!({"id": TICKETS[i].id, "title": TICKETS[i].title, "status": self.status(i)}))
            .collect();
        let text = if rows.is_empty() {
            format!("No tickets match {query:?}.")
        } else {
            serde_json::to_string_pretty(&rows).unwrap_or_default()
        };
        Ok(CallResult {
            structured_content: Some(json!({"tickets": rows})),
            ..CallResult::text(text, false)
        })
    }
}

fn id_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "id": {"type": "string", "description": "Ticket id, e.g. T-1001.", "pattern": "^[Tt]-[0-9]+$"}
        },
        "required": ["id"],
        "additionalProperties": false
    })
}

impl Backend for Tickets {
    fn name(&self) -> &str {
        "switchboard-demo-tickets"
    }

    fn tools(&self) -> Vec<Tool> {
        let mut search = Tool::new(
            "search",
            "Search support tickets by words in their title, body or customer name. Returns matching ticket ids, titles and statuses, best match first.",
            json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "Words to look for, e.g. \"login sso\".", "maxLength": 200},
                    "status": {"type": "string", "enum": ["open", "pending", "closed"], "description": "Only tickets with this status."}
                },
                "required": ["query"],
                "additionalProperties": false
            }),
        );
        search.annotations = Some(
            serde_json::from_value(json!({"title": "Search tickets", "readOnlyHint": true}))
                .unwrap_or_default(),
        );
        let mut get = Tool::new(
            "get_ticket",
            "Read one support ticket in full: title, status, customer and the customer's description of the problem.",
            id_schema(),
        );
        get.annotations = Some(
            serde_json::from_value(json!({"title": "Read a ticket", "readOnlyHint": true}))
                .unwrap_or_default(),
        );
        let mut close = Tool::new(
            "close_ticket",
            "Close a support ticket, marking the customer's problem as resolved. The customer is notified; this cannot be undone from here.",
            id_schema(),
        );
        close.annotations = Some(serde_json::from_value(json!({"title": "Close a ticket", "readOnlyHint": false, "destructiveHint": true, "idempotentHint": true, "openWorldHint": false})).unwrap_or_default());
        vec![search, get, close]
    }

    fn call(&self, tool: &str, args: &Map<String, Value>) -> CallResult {
        let outcome = match tool {
            "search" => self.search(args),
            "get_ticket" => required_str(args, "id")
                .and_then(|id| self.find(id))
                .map(|i| {
                    let v = self.render(i);
                    CallResult {
                        structured_content: Some(v.clone()),
                        ..CallResult::text(
                            serde_json::to_string_pretty(&v).unwrap_or_default(),
                            false,
                        )
                    }
                }),
            "close_ticket" => required_str(args, "id")
                .and_then(|id| self.find(id))
                .map(|i| {
                    let was = self.status(i);
                    if let Ok(mut s) = self.statuses.lock() {
                        s[i] = "closed";
                    }
                    if was == "closed" {
                        CallResult::text(format!("{} was already closed.", TICKETS[i].id), false)
                    } else {
                        CallResult::text(format!("Closed {} (was {was}).", TICKETS[i].id), false)
                    }
                }),
            other => Err(CallResult::text(format!("unknown tool {other:?}"), true)),
        };
        outcome.unwrap_or_else(|e| e)
    }

    fn prompts(&self) -> Vec<Prompt> {
        serde_json::from_value(json!([{
            "name": "triage",
            "description": "Triage one ticket: summarise it and propose the next step.",
            "arguments": [{"name": "id", "description": "Ticket id, e.g. T-1001.", "required": true}]
        }]))
        .unwrap_or_default()
    }

    fn prompt(&self, name: &str, args: &Map<String, Value>) -> Result<(String, String), String> {
        if name != "triage" {
            return Err(format!("unknown prompt {name:?}; this server has: triage"));
        }
        let id = required_str(args, "id").map_err(|e| e.joined_text())?;
        let i = self.find(id).map_err(|e| e.joined_text())?;
        let t = &TICKETS[i];
        Ok((
            format!("Triage {}", t.id),
            format!(
                "Triage support ticket {} ({}), status {}, from {}:\n\n{}\n\nSummarise the problem in one sentence, say how urgent it is, and propose the next step.",
                t.id,
                t.title,
                self.status(i),
                t.customer,
                t.body
            ),
        ))
    }
}
