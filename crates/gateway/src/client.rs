//! `Client`: what the gateway remembers about one connected client beyond its peer: the log
//! level it asked for and the resource URIs it subscribed to. Upstream log messages and
//! resource updates are relayed to clients from here.
// Logging is deprecated by SEP-2577 in rmcp 3.x, but clients on 2025-11-25 and earlier use it.
#![allow(deprecated)]

use std::collections::HashSet;
use std::sync::Mutex;

use rmcp::model::LoggingLevel;
use serde_json::Value;

/// One client connection's state, shared by the handler and the gateway's client list.
#[derive(Default)]
pub struct Client {
    /// The level from the client's last `logging/setLevel`; `None` passes everything on.
    level: Mutex<Option<u8>>,
    /// Public resource URIs the client subscribed to.
    subscriptions: Mutex<HashSet<String>>,
}

/// The wire log levels, least severe first.
pub const LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

/// Severity rank of a wire log level ("debug" = 0 ... "emergency" = 7); `None` for a level
/// that is not one.
pub fn known_rank(level: &str) -> Option<u8> {
    LEVELS
        .iter()
        .position(|l| *l == level)
        .and_then(|i| u8::try_from(i).ok())
}

/// Severity rank of a wire log level; unknown levels rank as "info".
pub fn rank(level: &str) -> u8 {
    known_rank(level).unwrap_or(1)
}

/// The wire name of a level.
pub fn level_name(level: LoggingLevel) -> String {
    serde_json::to_value(level)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_else(|| "info".to_string())
}

impl Client {
    /// Remember the client's log level.
    pub fn set_level(&self, level: &str) {
        *self.level.lock().unwrap_or_else(|e| e.into_inner()) = Some(rank(level));
    }

    /// The client's log level rank, if it set one.
    pub fn level(&self) -> Option<u8> {
        *self.level.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether a log message (wire `params`) should reach this client.
    pub fn wants_log(&self, params: &Value) -> bool {
        let level = params
            .get("level")
            .and_then(Value::as_str)
            .unwrap_or("info");
        self.level().is_none_or(|min| rank(level) >= min)
    }

    /// Record a subscription; false if it already existed.
    pub fn subscribe(&self, uri: &str) -> bool {
        self.subscriptions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(uri.to_string())
    }

    /// Drop a subscription; false if there was none.
    pub fn unsubscribe(&self, uri: &str) -> bool {
        self.subscriptions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(uri)
    }

    /// Whether the client subscribed to `uri`.
    pub fn subscribed(&self, uri: &str) -> bool {
        self.subscriptions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(uri)
    }
}

/// A log message's params with the upstream server named in `logger` ("server" or
/// "server/logger"), so a client can tell the servers' messages apart.
pub fn tag_logger(mut params: Value, server: &str) -> Value {
    if let Some(o) = params.as_object_mut() {
        let logger = match o.get("logger").and_then(Value::as_str) {
            Some(l) if !l.is_empty() => format!("{server}/{l}"),
            _ => server.to_string(),
        };
        o.insert("logger".to_string(), Value::String(logger));
    }
    params
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn levels_filter_and_loggers_name_the_server() {
        let c = Client::default();
        assert!(c.wants_log(&json!({"level": "debug"})));
        c.set_level("warning");
        assert!(!c.wants_log(&json!({"level": "info"})));
        assert!(c.wants_log(&json!({"level": "error"})));
        assert_eq!(
            tag_logger(json!({"level": "info", "data": 1}), "a")["logger"],
            "a"
        );
        assert_eq!(
            tag_logger(json!({"level": "info", "logger": "db"}), "a")["logger"],
            "a/db"
        );
    }
}
