//! `serve --call-log FILE`: one JSON line per `tools/call` a client made (who, which tool on
//! which server, the arguments with their secrets removed, how it ended and how long it took),
//! appended to a file only its owner can read.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use rmcp::model::CallToolResult;
use serde_json::{Map, Value};
use switchboard_core::redact::redact_arguments;

use crate::error::GatewayError;

/// An open call log.
#[derive(Debug)]
pub struct CallLog {
    path: PathBuf,
    file: Mutex<std::fs::File>,
    /// Whether a failed write was reported already (once is enough).
    warned: std::sync::atomic::AtomicBool,
}

/// One call, as the handler saw it.
pub(crate) struct Call<'a> {
    /// The client, as its `initialize` named it (`name version`), if it did.
    pub client: Option<String>,
    /// The tool name the client called (a public name, or `search_tools` / `call_tool`).
    pub tool: &'a str,
    /// The upstream server and its name for the tool, when the name resolved to one.
    pub upstream: Option<(String, String)>,
    /// The arguments as the client sent them.
    pub arguments: &'a Map<String, Value>,
    pub started: SystemTime,
    pub took: Duration,
}

impl CallLog {
    /// Open `path` for appending, creating it (owner read and write only) and its folder.
    pub fn open(path: &Path) -> Result<CallLog, GatewayError> {
        let fail = |e: std::io::Error| GatewayError::CallLog {
            path: path.to_path_buf(),
            message: e.to_string(),
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(fail)?;
        }
        let mut options = std::fs::OpenOptions::new();
        options.create(true).append(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let file = options.open(path).map_err(fail)?;
        Ok(CallLog {
            path: path.to_path_buf(),
            file: Mutex::new(file),
            warned: std::sync::atomic::AtomicBool::new(false),
        })
    }

    fn append(&self, mut line: String) {
        line.push('\n');
        let written = self
            .file
            .lock()
            .map_err(|_| std::io::Error::other("the log's lock was poisoned"))
            .and_then(|mut f| f.write_all(line.as_bytes()));
        if let Err(e) = written
            && !self.warned.swap(true, std::sync::atomic::Ordering::Relaxed)
        {
            tracing::warn!(path = %self.path.display(), error = %e, "cannot write the call log; calls go on unlogged");
        }
    }
}

/// A call being made, written to the log when it ends; or, when it never does (its client
/// cancelled it or went away, the gateway stopped), as `cancelled` when it is dropped.
pub(crate) struct Entry {
    log: std::sync::Arc<CallLog>,
    client: Option<String>,
    tool: String,
    upstream: Option<(String, String)>,
    arguments: Map<String, Value>,
    started: SystemTime,
    clock: std::time::Instant,
    written: bool,
}

impl Entry {
    /// A call to `tool` (the name the client called), routed to `upstream` when it resolved,
    /// starting now.
    pub(crate) fn start(
        log: std::sync::Arc<CallLog>,
        client: Option<String>,
        tool: &str,
        upstream: Option<(String, String)>,
        arguments: Map<String, Value>,
    ) -> Entry {
        Entry {
            log,
            client,
            tool: tool.to_string(),
            upstream,
            arguments,
            started: SystemTime::now(),
            clock: std::time::Instant::now(),
            written: false,
        }
    }

    /// A call passing straight through to the tool `tool` of `server`, its arguments as the
    /// client's JSON text.
    pub(crate) fn passing(
        log: std::sync::Arc<CallLog>,
        client: Option<&str>,
        public: &str,
        (server, tool): (&str, &str),
        arguments: &str,
    ) -> Entry {
        Entry::start(
            log,
            client.map(str::to_string),
            public,
            Some((server.to_string(), tool.to_string())),
            serde_json::from_str(arguments).unwrap_or_default(),
        )
    }

    /// It ended, as the handler saw it.
    pub(crate) fn end(mut self, outcome: Result<&CallToolResult, &str>) {
        self.write(Ended::of(outcome));
    }

    /// It ended: with the server's result (JSON text), or why it failed.
    pub(crate) fn end_raw(mut self, outcome: Result<&str, &str>) {
        self.write(Ended::of_raw(outcome));
    }

    /// Its client cancelled it before it ended.
    pub(crate) fn cancelled(mut self) {
        self.write(Ended::Cancelled);
    }

    fn write(&mut self, ended: Ended) {
        self.written = true;
        let call = Call {
            client: self.client.take(),
            tool: &self.tool,
            upstream: self.upstream.take(),
            arguments: &self.arguments,
            started: self.started,
            took: self.clock.elapsed(),
        };
        self.log.append(line_text(&call, ended));
    }
}

impl Drop for Entry {
    fn drop(&mut self) {
        if !self.written {
            self.write(Ended::Cancelled);
        }
    }
}

/// How a call ended, as its line says it.
enum Ended {
    Ok {
        bytes: usize,
    },
    ToolError {
        said: String,
        bytes: usize,
    },
    Error {
        message: String,
    },
    /// It never ended: cancelled by its client, or cut off.
    Cancelled,
}

impl Ended {
    fn of(outcome: Result<&CallToolResult, &str>) -> Ended {
        match outcome {
            Ok(result) => {
                let bytes = serde_json::to_vec(result).map_or(0, |b| b.len());
                if result.is_error == Some(true) {
                    // What the tool said, cut short: the first text block.
                    let said = result
                        .content
                        .iter()
                        .find_map(|c| c.as_text().map(|t| t.text.clone()))
                        .unwrap_or_default();
                    Ended::ToolError { said, bytes }
                } else {
                    Ended::Ok { bytes }
                }
            }
            Err(message) => Ended::Error {
                message: message.to_string(),
            },
        }
    }

    /// From a result's JSON text: only `isError` and the first text block are read.
    fn of_raw(outcome: Result<&str, &str>) -> Ended {
        #[derive(serde::Deserialize)]
        struct Result<'a> {
            #[serde(rename = "isError", default)]
            is_error: Option<bool>,
            #[serde(borrow, default)]
            content: Vec<Block<'a>>,
        }
        #[derive(serde::Deserialize)]
        struct Block<'a> {
            #[serde(borrow, default)]
            text: Option<std::borrow::Cow<'a, str>>,
        }
        match outcome {
            Ok(text) => {
                let bytes = text.len();
                match serde_json::from_str::<Result>(text) {
                    Ok(r) if r.is_error == Some(true) => Ended::ToolError {
                        said: r
                            .content
                            .into_iter()
                            .find_map(|b| b.text)
                            .unwrap_or_default()
                            .into_owned(),
                        bytes,
                    },
                    _ => Ended::Ok { bytes },
                }
            }
            Err(message) => Ended::Error {
                message: message.to_string(),
            },
        }
    }
}

/// The JSON of one call, its keys in a reader's order: `time`, `client`, `tool`, `server` and
/// `upstream_tool` (when the name resolved), `arguments` (secrets removed), `outcome` (`ok`,
/// `tool_error` for a result with `isError`, `error` for a JSON-RPC error, or `cancelled` for
/// a call that never ended), `error` (what
/// the tool or the error said), `result_bytes` (the result's JSON size) and `duration_ms`
/// (to the microsecond).
fn line_text(call: &Call<'_>, ended: Ended) -> String {
    #[derive(serde::Serialize)]
    struct Line<'a> {
        time: String,
        client: Option<&'a str>,
        tool: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        server: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        upstream_tool: Option<&'a str>,
        arguments: Value,
        outcome: &'static str,
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        result_bytes: Option<usize>,
        duration_ms: f64,
    }
    let clip = |s: &str| Some(switchboard_core::clip(s, 300).into_owned());
    let (outcome, error, result_bytes) = match ended {
        Ended::Ok { bytes } => ("ok", None, Some(bytes)),
        Ended::ToolError { said, bytes } => ("tool_error", clip(&said), Some(bytes)),
        Ended::Error { message } => ("error", clip(&message), None),
        Ended::Cancelled => ("cancelled", None, None),
    };
    let line = Line {
        time: switchboard_core::time::rfc3339(call.started),
        client: call.client.as_deref(),
        tool: call.tool,
        server: call.upstream.as_ref().map(|(s, _)| s.as_str()),
        upstream_tool: call.upstream.as_ref().map(|(_, t)| t.as_str()),
        arguments: redact_arguments(&Value::Object(call.arguments.clone())),
        outcome,
        error,
        result_bytes,
        duration_ms: (call.took.as_micros() as f64) / 1000.0,
    };
    // Serializing our own plain struct cannot fail (string keys only); written from the
    // struct, not through a `Value`, so the keys keep their order.
    serde_json::to_string(&line).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::ContentBlock as Content;
    use serde_json::json;

    fn line(call: &Call<'_>, outcome: Result<&CallToolResult, &str>) -> Value {
        serde_json::from_str(&line_text(call, Ended::of(outcome))).unwrap()
    }

    fn raw_line(call: &Call<'_>, outcome: Result<&str, &str>) -> Value {
        serde_json::from_str(&line_text(call, Ended::of_raw(outcome))).unwrap()
    }

    #[test]
    fn a_line_says_who_called_what_how_it_ended_and_keeps_no_secret() {
        let args: Map<String, Value> =
            serde_json::from_value(json!({"query": "login", "api_key": "sk-1"})).unwrap();
        let call = Call {
            client: Some("inspector 1.0".into()),
            tool: "tickets__search",
            upstream: Some(("tickets".into(), "search".into())),
            arguments: &args,
            started: SystemTime::UNIX_EPOCH + Duration::from_millis(1_500),
            took: Duration::from_millis(42),
        };
        let ok = line(
            &call,
            Ok(&CallToolResult::success(vec![Content::text("3 found")])),
        );
        assert_eq!(ok["time"], "1970-01-01T00:00:01.500Z");
        assert_eq!(ok["client"], "inspector 1.0");
        assert_eq!(
            (ok["server"].as_str(), ok["upstream_tool"].as_str()),
            (Some("tickets"), Some("search"))
        );
        assert_eq!(ok["arguments"], json!({"query": "login", "api_key": "***"}));
        assert_eq!(ok["outcome"], "ok");
        assert_eq!(ok["duration_ms"], 42.0);
        assert!(
            line_text(&call, Ended::of(Err("x")))
                .starts_with("{\"time\":\"1970-01-01T00:00:01.500Z\",\"client\"")
        );
        assert!(ok["result_bytes"].as_u64().unwrap() > 0);
        assert!(ok.get("error").is_none());
        let failed = line(
            &call,
            Ok(&CallToolResult::error(vec![Content::text(
                "no such ticket",
            )])),
        );
        assert_eq!(
            (failed["outcome"].as_str(), failed["error"].as_str()),
            (Some("tool_error"), Some("no such ticket"))
        );
        let refused = line(&call, Err("unknown tool \"x\""));
        assert_eq!(refused["outcome"], "error");
        assert!(refused.get("result_bytes").is_none());

        // A result that passed straight through is read from its JSON text the same way.
        let text = r#"{"content":[{"type":"image","data":"AA==","mimeType":"image/png"},{"type":"text","text":"no such ticket"}],"isError":true}"#;
        let raw = raw_line(&call, Ok(text));
        assert_eq!(
            (raw["outcome"].as_str(), raw["error"].as_str()),
            (Some("tool_error"), Some("no such ticket"))
        );
        assert_eq!(raw["result_bytes"], text.len());
        let fine = raw_line(
            &call,
            Ok(r#"{"content":[{"type":"text","text":"3 found"}]}"#),
        );
        assert_eq!(fine["outcome"], "ok");
        assert!(fine.get("error").is_none());
        assert_eq!(raw_line(&call, Err("timed out"))["outcome"], "error");
        // A result that is not what a tool result looks like still counts as answered.
        assert_eq!(raw_line(&call, Ok("[1]"))["outcome"], "ok");
    }

    #[test]
    fn lines_are_appended_to_a_private_file_and_a_call_that_never_ends_is_cancelled() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("logs/calls.jsonl");
        let entry = |log: &std::sync::Arc<CallLog>| {
            Entry::start(
                log.clone(),
                Some("c 1".into()),
                "t__x",
                Some(("t".into(), "x".into())),
                Map::new(),
            )
        };
        for _ in 0..2 {
            let log = std::sync::Arc::new(CallLog::open(&path).unwrap());
            entry(&log).end(Err("x"));
        }
        // Dropped before it ended: its client cancelled it, or went away.
        let log = std::sync::Arc::new(CallLog::open(&path).unwrap());
        drop(entry(&log));
        entry(&log).end_raw(Ok(r#"{"content":[]}"#));
        let text = std::fs::read_to_string(&path).unwrap();
        let outcomes: Vec<String> = text
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap()["outcome"].to_string())
            .collect();
        assert_eq!(
            outcomes,
            ["\"error\"", "\"error\"", "\"cancelled\"", "\"ok\""],
            "{text}"
        );
        let cancelled: Value = serde_json::from_str(text.lines().nth(2).unwrap()).unwrap();
        assert_eq!(cancelled["server"], "t");
        assert!(cancelled.get("error").is_none() && cancelled.get("result_bytes").is_none());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }
}
