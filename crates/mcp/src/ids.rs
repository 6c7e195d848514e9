//! The ids of a stdio server's responses, checked against the requests switchboard has
//! outstanding on it, so that a server answering under the wrong id is read or named instead
//! of leaving its request to wait out its timeout with no reason given.
//!
//! - A response under the same number written as a string (`1` answered as `"1"`, the classic
//!   bug) or the reverse is read as the answer to that request: its id is rewritten to the one
//!   sent, before rmcp or the raw path reads it. The official TypeScript SDK, which most hosts
//!   use, matches a response with `Number(response.id)`, so such servers work with those hosts.
//!   The match here is the same number written in decimal: `"1"`, `"1.0"`, `"1e0"`, `"+1"` and
//!   `"01"` all answer request 1, as they do for the TypeScript SDK (`Number("1.0") === 1`)
//!   and, but for the fraction and exponent, for rmcp itself (which parses a string id as an
//!   `i64`). What `Number()` reads besides, by coercion rather than as a decimal (`""` as 0,
//!   `" 1 "`, `"0x1"`), is not matched, and values are compared exactly (the SDK's doubles
//!   would take `"9007199254740993"` for request 9007199254740992). Only an unambiguous match
//!   is rewritten: exactly one outstanding request is that number.
//! - A response under an id that matches no request sent is remembered (the last few per
//!   server) and logged; a request that then times out says so (see [`Ids::explain`]).
//!
//! Cheap on the hot path: a request's id is read from the fixed start of the line rmcp writes
//! (no parse), a response's from the span the screen's byte scan found, and a known id costs a
//! lock and a set lookup. Raw calls (`"sb~N"`) are the raw path's own and cost nothing here.

use std::collections::{HashSet, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::slot::lock;

/// How rmcp starts every request and response it writes (its field order).
const LEAD: &[u8] = br#"{"jsonrpc":"2.0","id":"#;

/// The raw call path's ids (`"sb~N"`): its own to match (see `raw`).
const RAW: &[u8] = br#""sb~"#;

/// At most this many requests are tracked as outstanding; past it the oldest tracked is
/// forgotten (counted as cancelled, so a late answer to it is no stray).
const MAX_OUTSTANDING: usize = 4096;

/// Ids the client cancelled (or gave up tracking), so that a late answer to one is no stray.
const MAX_RETIRED: usize = 64;

/// Stray ids remembered per server, newest last.
const MAX_STRAYS: usize = 4;

/// How much of a stray id an error or log quotes.
const QUOTE_CHARS: usize = 60;

/// The requests outstanding on one server, and the stray ids it answered under.
pub(crate) struct Ids {
    server: String,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Requests written to the server and not yet answered, by their id's JSON text as
    /// written, in the order sent (the oldest is forgotten first past [`MAX_OUTSTANDING`]).
    outstanding: HashSet<Box<[u8]>, foldhash::fast::RandomState>,
    order: VecDeque<Box<[u8]>>,
    /// Requests the client cancelled, newest last.
    retired: VecDeque<Box<[u8]>>,
    /// Ids the server answered under that match no request, when, newest last.
    strays: VecDeque<(Instant, String)>,
    /// The server has been told about (logged for) answering under a differently written id.
    told: bool,
}

/// What a response's id is to the requests outstanding.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// It answers a request as written (or a cancelled one, or a raw call): read it.
    Known,
    /// It answers the request whose id was written as this (JSON text): read it under that id.
    Rewrite(Vec<u8>),
    /// The same number as more than one outstanding request: left as it is.
    Ambiguous,
    /// No request was sent under it.
    Stray,
}

impl Ids {
    pub(crate) fn new(server: &str) -> Self {
        Self {
            server: server.to_string(),
            state: Mutex::new(State::default()),
        }
    }

    /// A new session: nothing is outstanding (the strays of the last are kept: a restart
    /// does not fix a server).
    pub(crate) fn begin(&self) {
        let mut state = lock(&self.state);
        state.outstanding.clear();
        state.order.clear();
        state.retired.clear();
    }

    /// rmcp wrote `line` to the server: note a request's id, and a cancelled request's.
    pub(crate) fn sent(&self, line: &[u8]) {
        if let Some(rest) = line.strip_prefix(LEAD) {
            // A request (its method next) or a response to the server's own request.
            let Some(len) = scalar_len(rest) else {
                return;
            };
            if rest[len..].trim_ascii_start().starts_with(b",\"method\"") {
                self.note(&rest[..len]);
            }
            return;
        }
        if CANCELLED.find(line).is_some() {
            self.cancelled(line);
            return;
        }
        // Written another way than rmcp writes (not expected): read the members.
        if let Some((s, e)) = crate::screen::request_id(line) {
            self.note(&line[s..e]);
        }
    }

    fn note(&self, id: &[u8]) {
        let mut state = lock(&self.state);
        if state.outstanding.len() >= MAX_OUTSTANDING
            && let Some(oldest) = state.order.pop_front()
            && state.outstanding.remove(&oldest)
        {
            retire(&mut state, oldest);
        }
        if state.outstanding.insert(id.into()) {
            state.order.push_back(id.into());
        }
    }

    /// A `notifications/cancelled` the client wrote: its request is no longer awaited, and a
    /// late answer to it is no bug.
    fn cancelled(&self, line: &[u8]) {
        #[derive(serde::Deserialize)]
        struct Note<'a> {
            #[serde(borrow)]
            params: Params<'a>,
        }
        #[derive(serde::Deserialize)]
        struct Params<'a> {
            #[serde(rename = "requestId", borrow)]
            id: &'a serde_json::value::RawValue,
        }
        let Ok(note) = serde_json::from_slice::<Note>(line) else {
            return;
        };
        let id = note.params.id.get().as_bytes();
        let mut state = lock(&self.state);
        if state.outstanding.remove(id) {
            forget_order(&mut state, id);
            retire(&mut state, id.into());
        }
    }

    /// What response `line`'s id (the span `id`) is; a stray is remembered and logged, a
    /// rewrite logged (once per server). See [`Self::answered`] for the line to read.
    pub(crate) fn check(&self, line: &[u8], (s, e): (usize, usize)) -> Verdict {
        let id = &line[s..e];
        if id.starts_with(RAW) {
            return Verdict::Known;
        }
        let mut state = lock(&self.state);
        if state.outstanding.remove(id) {
            forget_order(&mut state, id);
            return Verdict::Known;
        }
        if let Some(at) = state.retired.iter().position(|r| **r == *id) {
            state.retired.remove(at);
            return Verdict::Known;
        }
        let Some(value) = Decimal::of_id(id) else {
            return self.stray(&mut state, id);
        };
        let matching: Vec<&Box<[u8]>> = state
            .order
            .iter()
            .filter(|sent| Decimal::of_id(sent).as_ref() == Some(&value))
            .collect();
        let sent = match matching.as_slice() {
            [sent] => (*sent).clone(),
            [] => {
                if let Some(at) = state
                    .retired
                    .iter()
                    .position(|r| Decimal::of_id(r).as_ref() == Some(&value))
                {
                    // A late answer to a cancelled request, its id written differently.
                    state.retired.remove(at);
                    return Verdict::Known;
                }
                return self.stray(&mut state, id);
            }
            many => {
                tracing::warn!(
                    "server \"{}\" answered under id {}, the same number as {} requests in flight written differently; left it as it is",
                    self.server,
                    quote(id),
                    many.len()
                );
                return Verdict::Ambiguous;
            }
        };
        state.outstanding.remove(&sent);
        forget_order(&mut state, &sent);
        let first = !std::mem::replace(&mut state.told, true);
        drop(state);
        let said = format!(
            "server \"{}\" answered request {} under id {}: a response must carry its request's id exactly as sent, type included (a bug in the server); read as the answer to {}, as the TypeScript SDK's hosts read it",
            self.server,
            String::from_utf8_lossy(&sent),
            quote(id),
            String::from_utf8_lossy(&sent),
        );
        if first {
            tracing::warn!("{said}");
        } else {
            tracing::debug!("{said}");
        }
        Verdict::Rewrite(sent.into_vec())
    }

    fn stray(&self, state: &mut State, id: &[u8]) -> Verdict {
        let quoted = quote(id);
        tracing::warn!(
            "server \"{}\" sent a response under id {quoted}, which matches no request switchboard sent (a bug in the server: a response must carry the id of the request it answers, exactly as sent); the request it was meant for waits until it times out",
            self.server
        );
        if state.strays.len() >= MAX_STRAYS {
            state.strays.pop_front();
        }
        state.strays.push_back((Instant::now(), quoted));
        Verdict::Stray
    }

    /// The line to read for response `line` whose id is the span `id`: `None` for the line as
    /// it is, else the line under the id its request was sent with.
    pub(crate) fn answered(&self, line: &[u8], id: (usize, usize)) -> Option<Vec<u8>> {
        match self.check(line, id) {
            Verdict::Rewrite(sent) => {
                let (s, e) = id;
                let mut out = Vec::with_capacity(line.len() + sent.len());
                out.extend_from_slice(&line[..s]);
                out.extend_from_slice(&sent);
                out.extend_from_slice(&line[e..]);
                Some(out)
            }
            _ => None,
        }
    }

    /// What to add to the error of a request that timed out after waiting `waited`: the stray
    /// ids the server answered under meanwhile, if any.
    pub(crate) fn explain(&self, waited: Duration) -> Option<String> {
        let state = lock(&self.state);
        // A little slack: the request was written just before its clock started.
        let since = Instant::now().checked_sub(waited + Duration::from_millis(500));
        let ids: Vec<&str> = state
            .strays
            .iter()
            .filter(|(at, _)| since.is_none_or(|since| *at >= since))
            .map(|(_, id)| id.as_str())
            .collect();
        let (last, earlier) = ids.split_last()?;
        let also = match earlier.len() {
            0 => String::new(),
            n => format!(" (and {n} more)"),
        };
        Some(format!(
            "meanwhile the server answered under id {last}{also}, which switchboard never sent: a bug in the server (a response must carry the id of the request it answers), not slowness"
        ))
    }
}

/// Put `id` among the cancelled requests, the oldest forgotten past [`MAX_RETIRED`].
fn retire(state: &mut State, id: Box<[u8]>) {
    if state.retired.len() >= MAX_RETIRED {
        state.retired.pop_front();
    }
    state.retired.push_back(id);
}

fn forget_order(state: &mut State, id: &[u8]) {
    if let Some(at) = state.order.iter().position(|o| **o == *id) {
        state.order.remove(at);
    }
}

/// The length of the JSON number or string at the start of `text`, if it starts with one.
fn scalar_len(text: &[u8]) -> Option<usize> {
    match text.first()? {
        b'"' => {
            let mut escaped = false;
            for (k, &b) in text[1..].iter().enumerate() {
                if escaped {
                    escaped = false;
                } else if b == b'\\' {
                    escaped = true;
                } else if b == b'"' {
                    return Some(k + 2);
                }
            }
            None
        }
        b'-' | b'0'..=b'9' => Some(
            text.iter()
                .position(|b| {
                    !(b.is_ascii_digit() || matches!(b, b'-' | b'+' | b'.' | b'e' | b'E'))
                })
                .unwrap_or(text.len()),
        ),
        _ => None,
    }
}

static CANCELLED: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
    std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"\"notifications/cancelled\""));

/// An id as quoted in a message: its JSON text, cut to [`QUOTE_CHARS`] characters.
fn quote(id: &[u8]) -> String {
    switchboard_core::clip(&String::from_utf8_lossy(id), QUOTE_CHARS).into_owned()
}

/// A number written in decimal, normalized so that two texts of the same value compare equal:
/// its sign, its significant digits (no leading or trailing zeros) and the power of ten of
/// the last one. Exact, whatever its size.
#[derive(Debug, PartialEq, Eq)]
struct Decimal {
    negative: bool,
    digits: Vec<u8>,
    exponent: i64,
}

impl Decimal {
    /// The number an id's JSON text stands for: a JSON number, or a string holding a decimal
    /// (see [`Self::parse`]); `None` for anything else.
    fn of_id(id: &[u8]) -> Option<Self> {
        match id {
            [b'"', inner @ .., b'"'] => Self::parse(inner),
            _ => Self::parse(id),
        }
    }

    /// `[+-]digits[.digits][(e|E)[+-]digits]`: JSON's number grammar, with the leading `+`
    /// and leading zeros that rmcp's own reading of a string id (an `i64`) and the TypeScript
    /// SDK's `Number()` take. No whitespace, no other base, nothing empty.
    fn parse(text: &[u8]) -> Option<Self> {
        let (negative, text) = match text.split_first()? {
            (b'-', rest) => (true, rest),
            (b'+', rest) => (false, rest),
            _ => (false, text),
        };
        let int_len = text.iter().take_while(|b| b.is_ascii_digit()).count();
        let (int, rest) = text.split_at(int_len);
        if int.is_empty() {
            return None;
        }
        let (frac, rest) = match rest.split_first() {
            Some((b'.', rest)) => {
                let len = rest.iter().take_while(|b| b.is_ascii_digit()).count();
                if len == 0 {
                    return None;
                }
                rest.split_at(len)
            }
            _ => (&rest[..0], rest),
        };
        let exponent: i64 = match rest.split_first() {
            None => 0,
            Some((b'e' | b'E', exp)) => {
                let digits = exp
                    .strip_prefix(b"+")
                    .or(exp.strip_prefix(b"-"))
                    .unwrap_or(exp);
                // More than 9 digits of exponent is no id anyone sent.
                if digits.is_empty() || digits.len() > 9 || !digits.iter().all(u8::is_ascii_digit) {
                    return None;
                }
                std::str::from_utf8(exp).ok()?.parse().ok()?
            }
            Some(_) => return None,
        };
        let mut digits: Vec<u8> = int.iter().chain(frac).copied().collect();
        let mut exponent = exponent - i64::try_from(frac.len()).ok()?;
        let leading = digits.iter().take_while(|&&d| d == b'0').count();
        digits.drain(..leading);
        while digits.last() == Some(&b'0') {
            digits.pop();
            exponent += 1;
        }
        if digits.is_empty() {
            // Zero, however written (-0 included).
            return Some(Self {
                negative: false,
                digits,
                exponent: 0,
            });
        }
        Some(Self {
            negative,
            digits,
            exponent,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn same(a: &str, b: &str) -> bool {
        match (Decimal::of_id(a.as_bytes()), Decimal::of_id(b.as_bytes())) {
            (Some(a), Some(b)) => a == b,
            _ => false,
        }
    }

    #[test]
    fn numbers_match_the_same_number_however_written() {
        for (sent, got) in [
            ("1", "\"1\""),
            ("1", "1.0"),
            ("1", "\"1.0\""),
            ("1", "\"1e0\""),
            ("1", "\"+1\""),
            ("1", "\"01\""),
            ("10", "\"1e1\""),
            ("10", "\"1E+1\""),
            ("15", "\"150e-1\""),
            ("0", "\"-0\""),
            ("0", "\"0.000\""),
            ("-3", "\"-3\""),
            ("9223372036854775807", "\"9223372036854775807\""),
            (
                "123456789012345678901234567890",
                "\"123456789012345678901234567890.0\"",
            ),
            ("\"1\"", "1"),
            ("\"1\"", "1.0"),
        ] {
            assert!(same(sent, got), "{sent} should match {got}");
        }
        for (sent, got) in [
            ("1", "\"2\""),
            ("1", "\"1.5\""),
            ("1", "\"-1\""),
            ("1", "\"\""),
            ("0", "\"\""),
            ("1", "\" 1\""),
            ("1", "\"1 \""),
            ("1", "\"0x1\""),
            ("1", "\"1.\""),
            ("1", "\".1e1\""),
            ("1", "\"1e\""),
            ("1", "\"1e999999999999\""),
            ("1", "\"Infinity\""),
            ("1", "\"\\u0031\""),
            ("1", "\"sb~1\""),
            // Exact, where the TypeScript SDK's doubles would round both to 2^53.
            ("9007199254740992", "\"9007199254740993\""),
        ] {
            assert!(!same(sent, got), "{sent} should not match {got}");
        }
    }

    fn response(id: &str) -> (String, (usize, usize)) {
        let line = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#);
        let s = LEAD.len();
        (line, (s, s + id.len()))
    }

    fn request(id: &str) -> String {
        format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{}}}}"#)
    }

    fn check(ids: &Ids, id: &str) -> Verdict {
        let (line, span) = response(id);
        ids.check(line.as_bytes(), span)
    }

    #[test]
    fn a_response_is_matched_to_the_request_sent_exactly_once() {
        let ids = Ids::new("s");
        ids.sent(request("1").as_bytes());
        ids.sent(request("\"a\"").as_bytes());
        assert_eq!(check(&ids, "1"), Verdict::Known);
        assert_eq!(check(&ids, "\"a\""), Verdict::Known);
        // Answered already: a second answer is a stray.
        assert_eq!(check(&ids, "1"), Verdict::Stray);
        // Not requests: a response to the server's request, a notification.
        ids.sent(br#"{"jsonrpc":"2.0","id":7,"result":{}}"#);
        ids.sent(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        assert_eq!(check(&ids, "7"), Verdict::Stray);
        // Raw calls are the raw path's.
        assert_eq!(check(&ids, "\"sb~9\""), Verdict::Known);
    }

    #[test]
    fn an_id_written_differently_is_rewritten_to_the_one_sent() {
        let ids = Ids::new("s");
        ids.sent(request("5").as_bytes());
        let (line, span) = response("\"5\"");
        let read = ids.answered(line.as_bytes(), span).unwrap();
        assert_eq!(read, response("5").0.as_bytes());
        assert_eq!(check(&ids, "5"), Verdict::Stray, "it was answered");
        ids.sent(request("\"12\"").as_bytes());
        assert_eq!(check(&ids, "12"), Verdict::Rewrite(b"\"12\"".to_vec()));
        ids.sent(request("3").as_bytes());
        assert_eq!(check(&ids, "3.0"), Verdict::Rewrite(b"3".to_vec()));
        ids.sent(request("4").as_bytes());
        assert_eq!(check(&ids, "\"4.0\""), Verdict::Rewrite(b"4".to_vec()));
        ids.sent(request("6").as_bytes());
        assert_eq!(check(&ids, "\"6.5\""), Verdict::Stray);
        assert_eq!(check(&ids, "\"-6\""), Verdict::Stray);
    }

    #[test]
    fn an_ambiguous_id_is_left_as_it_is() {
        let ids = Ids::new("s");
        ids.sent(request("1").as_bytes());
        ids.sent(request("\"1\"").as_bytes());
        // Each as written is known.
        assert_eq!(check(&ids, "1.0"), Verdict::Ambiguous);
        assert_eq!(check(&ids, "\"1\""), Verdict::Known);
        // Only one left: no longer ambiguous.
        assert_eq!(check(&ids, "1.0"), Verdict::Rewrite(b"1".to_vec()));
    }

    #[test]
    fn a_late_answer_to_a_cancelled_request_is_no_stray() {
        let ids = Ids::new("s");
        ids.sent(request("8").as_bytes());
        ids.sent(request("9").as_bytes());
        ids.sent(br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":8,"reason":"timed out"}}"#);
        ids.sent(
            br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}"#,
        );
        assert_eq!(check(&ids, "8"), Verdict::Known);
        assert_eq!(check(&ids, "\"9\""), Verdict::Known);
        assert_eq!(ids.explain(Duration::from_secs(60)), None);
    }

    #[test]
    fn a_stray_is_named_by_the_timeout_of_a_request_waiting_meanwhile() {
        let ids = Ids::new("s");
        ids.sent(request("1").as_bytes());
        assert_eq!(check(&ids, "\"stale-7\""), Verdict::Stray);
        let said = ids.explain(Duration::from_secs(2)).unwrap();
        assert!(said.contains("id \"stale-7\""), "{said}");
        assert!(said.contains("never sent"), "{said}");
        // A long id is cut; the last few are kept, the newest named.
        let long = format!("\"{}\"", "x".repeat(5000));
        for _ in 0..10 {
            assert_eq!(check(&ids, &long), Verdict::Stray);
        }
        let said = ids.explain(Duration::from_secs(2)).unwrap();
        assert!(said.len() < 400 && said.contains("xxx…"), "{said}");
        assert!(said.contains("(and 3 more)"), "{said}");
        // Not a timeout's business once it is older than the request.
        let ids = Ids::new("s");
        lock(&ids.state)
            .strays
            .push_back((Instant::now() - Duration::from_secs(30), "1".into()));
        assert_eq!(ids.explain(Duration::from_secs(2)), None);
        assert!(ids.explain(Duration::from_secs(60)).is_some());
    }

    #[test]
    fn the_requests_rmcp_writes_are_noted() {
        use rmcp::model::{ClientJsonRpcMessage, ClientRequest, PingRequest, RequestId};
        // Guards the fixed start this reads requests by: rmcp's field order.
        let ids = Ids::new("s");
        for id in [RequestId::Number(41), RequestId::String("x-1".into())] {
            let message = ClientJsonRpcMessage::request(
                ClientRequest::PingRequest(PingRequest::default()),
                id.clone(),
            );
            let line = serde_json::to_string(&message).unwrap();
            assert!(line.as_bytes().starts_with(LEAD), "{line}");
            ids.sent(line.as_bytes());
            let id = serde_json::to_string(&id).unwrap();
            assert_eq!(check(&ids, &id), Verdict::Known, "{line}");
        }
        // And its cancellations: a late answer is then no stray.
        use rmcp::model::{CancelledNotification, CancelledNotificationParam, ClientNotification};
        ids.sent(request("42").as_bytes());
        let cancelled =
            ClientJsonRpcMessage::notification(ClientNotification::CancelledNotification(
                CancelledNotification::new(CancelledNotificationParam::new(
                    Some(RequestId::Number(42)),
                    Some("timed out".into()),
                )),
            ));
        ids.sent(serde_json::to_string(&cancelled).unwrap().as_bytes());
        assert!(lock(&ids.state).outstanding.is_empty());
        assert_eq!(check(&ids, "42"), Verdict::Known);
        // Written otherwise, still read.
        ids.sent(br#"{"method":"ping","id":77,"jsonrpc":"2.0"}"#);
        assert_eq!(check(&ids, "77"), Verdict::Known);
    }

    #[test]
    fn tracking_is_bounded() {
        let ids = Ids::new("s");
        for n in 0..MAX_OUTSTANDING + 10 {
            ids.sent(request(&n.to_string()).as_bytes());
        }
        let state = lock(&ids.state);
        assert_eq!(state.outstanding.len(), MAX_OUTSTANDING);
        assert_eq!(state.order.len(), MAX_OUTSTANDING);
        assert!(state.retired.len() <= MAX_RETIRED);
        drop(state);
        // The first ones forgotten are taken as cancelled.
        assert_eq!(check(&ids, "9"), Verdict::Known);
        ids.begin();
        assert!(lock(&ids.state).outstanding.is_empty());
    }
}
