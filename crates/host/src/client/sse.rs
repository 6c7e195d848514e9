//! Server-sent events framing: bytes in, `(event name, data)` pairs out. Lines end in `\n`,
//! `\r\n` or `\r`; `data:` lines of one event are joined with `\n`; a blank line ends the event;
//! lines starting with `:` are comments (keep-alives). Wire meaning stays in
//! `switchboard_providers::StreamDecoder`.

/// One complete event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field, if any.
    pub event: Option<String>,
    /// The joined `data:` lines.
    pub data: String,
}

/// Splits a byte stream into events; feed chunks as they arrive.
#[derive(Debug, Default)]
pub struct SseParser {
    buf: Vec<u8>,
    event: Option<String>,
    data: Option<String>,
}

impl SseParser {
    /// Feed a chunk; returns the events it completed.
    pub fn push(&mut self, chunk: &[u8]) -> Vec<SseEvent> {
        self.buf.extend_from_slice(chunk);
        let mut out = Vec::new();
        while let Some(pos) = self.buf.iter().position(|b| *b == b'\n' || *b == b'\r') {
            // A `\r` at the very end may be the first half of `\r\n`: wait for more.
            if self.buf[pos] == b'\r' && pos + 1 == self.buf.len() {
                break;
            }
            let skip = if self.buf[pos] == b'\r' && self.buf.get(pos + 1) == Some(&b'\n') {
                2
            } else {
                1
            };
            let line: Vec<u8> = self.buf.drain(..pos + skip).take(pos).collect();
            let line = String::from_utf8_lossy(&line);
            self.line(&line, &mut out);
        }
        out
    }

    /// The stream ended: a last event without its blank line still counts.
    pub fn finish(&mut self) -> Vec<SseEvent> {
        let mut out = Vec::new();
        if !self.buf.is_empty() {
            let rest = std::mem::take(&mut self.buf);
            let line = String::from_utf8_lossy(&rest)
                .trim_end_matches('\r')
                .to_string();
            self.line(&line, &mut out);
        }
        self.line("", &mut out);
        out
    }

    fn line(&mut self, line: &str, out: &mut Vec<SseEvent>) {
        if line.is_empty() {
            if let Some(data) = self.data.take() {
                out.push(SseEvent {
                    event: self.event.take(),
                    data,
                });
            }
            self.event = None;
            return;
        }
        if line.starts_with(':') {
            return;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "event" => self.event = Some(value.to_string()),
            "data" => match &mut self.data {
                Some(d) => {
                    d.push('\n');
                    d.push_str(value);
                }
                None => self.data = Some(value.to_string()),
            },
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_split_across_chunks_and_line_endings() {
        let mut p = SseParser::default();
        let mut got = p.push(b"event: message_start\r\ndata: {\"a\"");
        assert!(got.is_empty());
        got.extend(p.push(b":1}\r\n\r\n: ping\n\ndata: x\ndata: y\n"));
        got.extend(p.push(b"\ndata: [DONE]"));
        got.extend(p.finish());
        assert_eq!(
            got,
            [
                SseEvent {
                    event: Some("message_start".into()),
                    data: "{\"a\":1}".into()
                },
                SseEvent {
                    event: None,
                    data: "x\ny".into()
                },
                SseEvent {
                    event: None,
                    data: "[DONE]".into()
                },
            ]
        );
    }

    #[test]
    fn a_lone_cr_is_a_line_end() {
        let mut p = SseParser::default();
        let got = p.push(b"data: a\r\rdata: b\r");
        assert_eq!(got.len(), 1);
        // The trailing `\r` might start a `\r\n`, so the event ends only when more arrives.
        let rest = p.push(b"\r\n");
        assert_eq!(rest.len(), 1);
        assert_eq!(rest[0].data, "b");
    }
}
