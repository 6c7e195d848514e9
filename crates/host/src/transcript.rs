//! Transcripts: every request and response body of a conversation as JSON lines, with the rent
//! of each request's tools array, a marker where the tools array changed, and each tool call's
//! outcome. API keys never appear: they travel only in headers, and secret header values are
//! replaced by `[redacted]`.
//!
//! Line kinds (`"kind"`): `request` {turn, url, headers, body, rent}, `response` {turn, status,
//! attempts, body, reply}, `tools_changed` {turn, generation, added, removed}, `tool_call`
//! {turn, outcome}, `error` {turn, message}.

use std::fs::File;
use std::io::{BufWriter, Write as _};
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use switchboard_providers::endpoint::SECRET_HEADERS;

use crate::error::HostError;

/// Appends JSON lines to a file, flushing after each line so a crash keeps what happened.
pub struct Transcript {
    path: PathBuf,
    out: BufWriter<File>,
}

/// What replaces a secret header value.
pub const REDACTED: &str = "[redacted]";

/// Create (truncate) a file only its owner can read: a transcript holds whole prompts and tool
/// output.
fn create_private(path: &Path) -> std::io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path)
}

impl Transcript {
    /// Create (truncate) the file.
    pub fn create(path: &Path) -> Result<Self, HostError> {
        let file = create_private(path).map_err(|source| HostError::Transcript {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(Self {
            path: path.to_path_buf(),
            out: BufWriter::new(file),
        })
    }

    /// Write one line: `{"kind": kind, ...fields}`.
    pub fn write(&mut self, kind: &str, fields: Value) -> Result<(), HostError> {
        let mut line = json!({ "kind": kind });
        if let (Some(l), Value::Object(f)) = (line.as_object_mut(), fields) {
            l.extend(f);
        }
        let text = serde_json::to_string(&line).unwrap_or_default();
        let result = writeln!(self.out, "{text}").and_then(|()| self.out.flush());
        result.map_err(|source| HostError::Transcript {
            path: self.path.clone(),
            source,
        })
    }
}

/// Headers as a JSON object with secret values replaced.
pub fn redact_headers(headers: &[(String, String)]) -> Value {
    let map = headers
        .iter()
        .map(|(k, v)| {
            let secret = SECRET_HEADERS.iter().any(|s| s.eq_ignore_ascii_case(k));
            (
                k.clone(),
                Value::String(if secret { REDACTED.into() } else { v.clone() }),
            )
        })
        .collect();
    Value::Object(map)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_redacted_and_lines_are_json() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let mut t = Transcript::create(&path).unwrap();
        let h = redact_headers(&[
            ("x-api-key".into(), "sk-ant-secret".into()),
            ("Authorization".into(), "Bearer sk-secret".into()),
            ("anthropic-version".into(), "2023-06-01".into()),
        ]);
        t.write("request", json!({"turn": 1, "headers": h}))
            .unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains("secret"), "{text}");
        let v: Value = serde_json::from_str(text.trim()).unwrap();
        assert_eq!(v["kind"], "request");
        assert_eq!(v["headers"]["anthropic-version"], "2023-06-01");
        assert_eq!(v["headers"]["x-api-key"], REDACTED);
    }
}
