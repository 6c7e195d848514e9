//! Result shaping: an MCP tool result → what the model receives. Text passes through, images go
//! to dialects that accept them (described in text elsewhere), audio and resources become text
//! naming what they are, `structuredContent` stands in when there is no text, and text over the
//! token limit is cut with a note saying how much was cut and where the full text was written.
//!
//! Tokens are estimated at 4 characters per token (`switchboard_providers::count::estimate::
//! chars_over_4`): exact tokenizers take seconds on a 5 MB result and Claude has no public one;
//! the limit is a guard against runaway results, not a bill, so an estimate is enough.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;
use switchboard_core::{CallResult, ContentBlock};
use switchboard_providers::count::estimate::chars_over_4;

/// Characters per token assumed when cutting.
pub const CHARS_PER_TOKEN: usize = 4;

/// One block of a shaped result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ResultPart {
    /// Text for the model.
    Text {
        /// The text.
        text: String,
    },
    /// An image, only for dialects that accept images in tool results.
    Image {
        /// MIME type.
        mime_type: String,
        /// Base64 data.
        data: String,
    },
}

/// How a result was cut.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Cut {
    /// Estimated tokens of the whole text.
    pub total_tokens: u64,
    /// Characters of the whole text.
    pub total_chars: usize,
    /// Characters kept.
    pub kept_chars: usize,
    /// Where the full text was written (`None` when writing failed).
    pub path: Option<PathBuf>,
}

/// What the model receives for one tool call.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Shaped {
    /// The blocks, in the server's order (text blocks merged when cut).
    pub parts: Vec<ResultPart>,
    /// The result is an error.
    pub is_error: bool,
    /// Set when the text was over the limit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cut: Option<Cut>,
    /// The URIs of the resources the result links (`resource_link` blocks), in order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<String>,
}

impl Shaped {
    /// An error result with one sentence for the model.
    pub fn error(text: impl Into<String>) -> Self {
        Self {
            parts: vec![ResultPart::Text { text: text.into() }],
            is_error: true,
            cut: None,
            links: Vec::new(),
        }
    }

    /// All text parts joined by newlines.
    pub fn text(&self) -> String {
        self.parts
            .iter()
            .filter_map(|p| match p {
                ResultPart::Text { text } => Some(text.as_str()),
                ResultPart::Image { .. } => None,
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// How to shape.
#[derive(Clone, Debug)]
pub struct ShapeOptions {
    /// The dialect accepts images inside tool results.
    pub images: bool,
    /// Token limit for the text of one result.
    pub limit_tokens: u32,
    /// Where full texts of cut results are written.
    pub spill_dir: PathBuf,
    /// A label for the spill file name (the tool), sanitized before use.
    pub label: String,
}

impl ShapeOptions {
    /// Options with the default spill dir (`<OS temp dir>/switchboard-results`).
    pub fn new(images: bool, limit_tokens: u32, label: impl Into<String>) -> Self {
        Self {
            images,
            limit_tokens,
            spill_dir: default_spill_dir(),
            label: label.into(),
        }
    }
}

/// `<OS temp dir>/switchboard-results`.
pub fn default_spill_dir() -> PathBuf {
    std::env::temp_dir().join("switchboard-results")
}

/// Shape one call result for the model.
pub fn shape(result: &CallResult, opts: &ShapeOptions) -> Shaped {
    let mut parts = Vec::new();
    for block in &result.content {
        parts.push(match block {
            ContentBlock::Text { text } => ResultPart::Text { text: text.clone() },
            ContentBlock::Image { data, mime_type } if opts.images => ResultPart::Image {
                mime_type: mime_type.clone(),
                data: data.clone(),
            },
            ContentBlock::Image { data, mime_type } => text(format!(
                "[image: {mime_type}, {}; not shown because this provider does not accept images in tool results]",
                size(data)
            )),
            ContentBlock::Audio { data, mime_type } => text(format!(
                "[audio: {mime_type}, {}; not shown, models here cannot hear tool results]",
                size(data)
            )),
            ContentBlock::ResourceLink {
                uri,
                name,
                description,
                mime_type,
            } => {
                let mut s = format!("[resource link: {uri}");
                if !name.is_empty() {
                    s.push_str(&format!(" named {name:?}"));
                }
                if let Some(m) = mime_type {
                    s.push_str(&format!(", {m}"));
                }
                if let Some(d) = description {
                    s.push_str(&format!(": {d}"));
                }
                s.push(']');
                text(s)
            }
            ContentBlock::Resource { resource } => text(embedded(resource)),
        });
    }
    let has_text = parts
        .iter()
        .any(|p| matches!(p, ResultPart::Text { text } if !text.is_empty()));
    if !has_text && let Some(structured) = &result.structured_content {
        parts.insert(
            0,
            text(serde_json::to_string(structured).unwrap_or_default()),
        );
    }
    if parts.is_empty() {
        parts.push(text(if result.is_error {
            "The tool reported an error without any message."
        } else {
            "The tool returned no content."
        }));
    }
    let links = result
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::ResourceLink { uri, .. } => Some(uri.clone()),
            _ => None,
        })
        .collect();
    let mut shaped = Shaped {
        parts,
        is_error: result.is_error,
        cut: None,
        links,
    };
    limit(&mut shaped, opts);
    shaped
}

fn text(s: impl Into<String>) -> ResultPart {
    ResultPart::Text { text: s.into() }
}

/// An embedded resource as text: its text with a header (also text sent as a base64 blob of a
/// text or JSON type), or a line naming a binary blob.
fn embedded(resource: &Value) -> String {
    let uri = resource
        .get("uri")
        .and_then(Value::as_str)
        .unwrap_or("(no uri)");
    let mime = resource
        .get("mimeType")
        .and_then(Value::as_str)
        .map(|m| format!(", {m}"))
        .unwrap_or_default();
    let text_type = resource
        .get("mimeType")
        .and_then(Value::as_str)
        .is_some_and(textual);
    match (
        resource.get("text").and_then(Value::as_str),
        resource.get("blob").and_then(Value::as_str),
    ) {
        (Some(t), _) => format!("[embedded resource: {uri}{mime}]\n{t}"),
        // Text a server sent as a blob is read as text.
        (None, Some(blob)) if let Some(t) = decoded_text(blob).filter(|_| text_type) => {
            format!("[embedded resource: {uri}{mime}]\n{t}")
        }
        (None, Some(blob)) => format!(
            "[embedded resource: {uri}{mime}, {} of binary data; not shown]",
            size(blob)
        ),
        (None, None) => format!("[embedded resource: {uri}{mime}, empty]"),
    }
}

/// Whether contents of this MIME type are text to read.
pub(crate) fn textual(mime: &str) -> bool {
    let m = mime.split(';').next().unwrap_or("").trim();
    m.starts_with("text/") || m == "application/json" || m.ends_with("+json") || m.ends_with("+xml")
}

/// A base64 blob's bytes as text, when they are UTF-8.
pub(crate) fn decoded_text(blob: &str) -> Option<String> {
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(blob.trim())
        .ok()?;
    String::from_utf8(bytes).ok()
}

/// Decoded size of base64 data, human-readable.
pub(crate) fn size(b64: &str) -> String {
    let bytes = b64.trim_end_matches('=').len() * 3 / 4;
    if bytes < 1024 {
        format!("{bytes} bytes")
    } else if bytes < 1024 * 1024 {
        format!("{:.1} KB", bytes as f64 / 1024.0)
    } else {
        format!("{:.1} MB", bytes as f64 / (1024.0 * 1024.0))
    }
}

/// Cut the text over `opts.limit_tokens`: all text parts become one, cut on a line or char
/// boundary, followed by the note; the full text goes to a file.
fn limit(shaped: &mut Shaped, opts: &ShapeOptions) {
    let Some((kept, cut)) = cut_text(&shaped.text(), opts) else {
        return;
    };
    let mut new_parts = vec![text(kept)];
    new_parts.extend(
        shaped
            .parts
            .drain(..)
            .filter(|p| matches!(p, ResultPart::Image { .. })),
    );
    shaped.parts = new_parts;
    shaped.cut = Some(cut);
}

/// An MCP tool result (as the server sent it) with its text cut the way [`shape`] cuts it, for
/// a gateway passing results on to another host: the text blocks become one, in the place of
/// the first, cut and followed by the note, and the full text goes to a file; other blocks
/// (images, audio, links, embedded resources) and `structuredContent` pass unchanged (a
/// client checks the latter against the tool's output schema, so it must stay whole).
/// `None` when the text is within the limit.
pub fn cut_call_result(result: &CallResult, opts: &ShapeOptions) -> Option<(CallResult, Cut)> {
    let texts = || {
        result.content.iter().filter_map(|b| match b {
            ContentBlock::Text { text } => Some(text.as_str()),
            _ => None,
        })
    };
    // Cheap test first: the characters of the text are at most its bytes.
    let bytes: usize = texts().map(|t| t.len() + 1).sum();
    if bytes <= opts.limit_tokens as usize * CHARS_PER_TOKEN {
        return None;
    }
    let (kept, cut) = cut_text(&texts().collect::<Vec<_>>().join("\n"), opts)?;
    let mut kept = Some(kept);
    let content = result
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text { .. } => kept.take().map(|text| ContentBlock::Text { text }),
            other => Some(other.clone()),
        })
        .collect();
    Some((
        CallResult {
            content,
            structured_content: result.structured_content.clone(),
            is_error: result.is_error,
        },
        cut,
    ))
}

/// [`cut_call_result`] on a result as JSON text: `None` when it is within the limit or is not
/// a tool result (it is then passed on as it came). Results under the limit are recognised
/// from their length alone, without parsing.
pub fn cut_call_result_json(result: &str, opts: &ShapeOptions) -> Option<(String, Cut)> {
    if result.len() <= opts.limit_tokens as usize * CHARS_PER_TOKEN {
        return None;
    }
    let mut value: serde_json::Map<String, Value> = serde_json::from_str(result).ok()?;
    let Some(Value::Array(blocks)) = value.get_mut("content") else {
        return None;
    };
    let text_of = |b: &Value| {
        (b.get("type").and_then(Value::as_str) == Some("text"))
            .then(|| b.get("text").and_then(Value::as_str))
            .flatten()
            .map(str::to_string)
    };
    let texts: Vec<String> = blocks.iter().filter_map(text_of).collect();
    let (kept, cut) = cut_text(&texts.join("\n"), opts)?;
    // The blocks are edited in place, so every member the server sent (annotations, `_meta`,
    // blocks of kinds this crate does not know) stays as it was.
    let mut kept = Some(kept);
    blocks.retain_mut(|b| {
        if text_of(b).is_none() {
            return true;
        }
        match kept.take() {
            Some(text) => {
                b["text"] = Value::String(text);
                true
            }
            None => false,
        }
    });
    Some((Value::Object(value).to_string(), cut))
}

/// `full` cut to `opts.limit_tokens` with the note after it, and how; `None` within the limit.
fn cut_text(full: &str, opts: &ShapeOptions) -> Option<(String, Cut)> {
    let total_tokens = chars_over_4(full);
    if total_tokens <= u64::from(opts.limit_tokens) {
        return None;
    }
    let total_chars = full.chars().count();
    // Leave room for the note inside the limit.
    let budget = (opts.limit_tokens as usize * CHARS_PER_TOKEN).saturating_sub(400);
    let end = full
        .char_indices()
        .nth(budget)
        .map_or(full.len(), |(i, _)| i);
    // Prefer to end at a line break when one is near.
    let end = match full[..end].rfind('\n') {
        Some(nl) if nl + 2000 >= end && nl > 0 => nl,
        _ => end,
    };
    let kept = &full[..end];
    let kept_chars = kept.chars().count();
    let path = spill(full, opts);
    let cut_tokens = total_tokens.saturating_sub(chars_over_4(kept));
    let place = match &path {
        Ok(p) => format!("the full result was written to {}", p.display()),
        Err(e) => format!("the full result could not be saved ({e})"),
    };
    let note = format!(
        "\n\n[switchboard: result cut to the first {kept_chars} of {total_chars} characters (about {cut_tokens} of {total_tokens} tokens cut, limit {} tokens); {place}. Ask for a narrower query or a smaller page to see the rest.]",
        opts.limit_tokens
    );
    Some((
        format!("{kept}{note}"),
        Cut {
            total_tokens,
            total_chars,
            kept_chars,
            path: path.ok(),
        },
    ))
}

/// Write the full text under `opts.spill_dir`, named after the label and the content hash.
fn spill(full: &str, opts: &ShapeOptions) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(&opts.spill_dir)?;
    let label: String = opts
        .label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(60)
        .collect();
    let hash = switchboard_core::hash::ContentHash::of_bytes(full.as_bytes());
    let path: PathBuf = Path::new(&opts.spill_dir).join(format!("{label}-{}.txt", hash.short(12)));
    std::fs::write(&path, full)?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn opts(images: bool, limit: u32, dir: &Path) -> ShapeOptions {
        ShapeOptions {
            images,
            limit_tokens: limit,
            spill_dir: dir.to_path_buf(),
            label: "tickets/search".into(),
        }
    }

    #[test]
    fn text_passes_and_images_depend_on_the_dialect() {
        let dir = tempfile::tempdir().unwrap();
        let r = CallResult {
            content: vec![
                ContentBlock::Text { text: "hi".into() },
                ContentBlock::Image {
                    data: "aGVsbG8=".into(),
                    mime_type: "image/png".into(),
                },
            ],
            structured_content: None,
            is_error: false,
        };
        let with = shape(&r, &opts(true, 100, dir.path()));
        assert_eq!(with.parts.len(), 2);
        assert!(matches!(with.parts[1], ResultPart::Image { .. }));
        let without = shape(&r, &opts(false, 100, dir.path()));
        assert_eq!(
            without.text(),
            "hi\n[image: image/png, 5 bytes; not shown because this provider does not accept images in tool results]"
        );
    }

    #[test]
    fn audio_links_and_resources_become_text() {
        let dir = tempfile::tempdir().unwrap();
        let r: CallResult = serde_json::from_value(json!({"content": [
            {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"},
            {"type": "resource_link", "uri": "file:///a.md", "name": "a", "mimeType": "text/markdown"},
            {"type": "resource", "resource": {"uri": "mem://x", "text": "inside"}},
            {"type": "resource", "resource": {"uri": "mem://b", "blob": "AAAA", "mimeType": "application/pdf"}},
            {"type": "resource", "resource": {"uri": "mem://t", "blob": "aGVsbG8gYmxvYg==", "mimeType": "text/plain"}},
            {"type": "resource", "resource": {"uri": "mem://u", "blob": "//79", "mimeType": "text/plain"}}
        ]}))
        .unwrap();
        let s = shape(&r, &opts(true, 1000, dir.path())).text();
        // Text sent as a blob is read; bytes that are not UTF-8 are named.
        assert!(
            s.contains("[embedded resource: mem://t, text/plain]\nhello blob"),
            "{s}"
        );
        assert!(
            s.contains("[embedded resource: mem://u, text/plain, 3 bytes of binary data"),
            "{s}"
        );
        assert!(s.contains("[audio: audio/wav, 3 bytes"), "{s}");
        assert!(
            s.contains("[resource link: file:///a.md named \"a\", text/markdown]"),
            "{s}"
        );
        assert!(s.contains("[embedded resource: mem://x]\ninside"), "{s}");
        assert!(
            s.contains("[embedded resource: mem://b, application/pdf, 3 bytes of binary data"),
            "{s}"
        );
    }

    #[test]
    fn structured_content_stands_in_for_missing_text() {
        let dir = tempfile::tempdir().unwrap();
        let r = CallResult {
            content: vec![],
            structured_content: Some(json!({"n": 1})),
            is_error: false,
        };
        assert_eq!(shape(&r, &opts(true, 100, dir.path())).text(), "{\"n\":1}");
        let both = CallResult {
            structured_content: Some(json!({"n": 1})),
            ..CallResult::text("one", false)
        };
        assert_eq!(shape(&both, &opts(true, 100, dir.path())).text(), "one");
        let empty = CallResult::default();
        assert_eq!(
            shape(&empty, &opts(true, 100, dir.path())).text(),
            "The tool returned no content."
        );
    }

    #[test]
    fn a_5_mb_result_is_cut_to_the_limit_with_a_note_and_saved_in_full() {
        let dir = tempfile::tempdir().unwrap();
        let line =
            "0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz01234567\n";
        let big = line.repeat(5 * 1024 * 1024 / line.len());
        let r = CallResult::text(big.clone(), false);
        let s = shape(&r, &opts(true, 25_000, dir.path()));
        let cut = s.cut.clone().expect("cut");
        assert!(
            chars_over_4(&s.text()) <= 25_000,
            "{}",
            chars_over_4(&s.text())
        );
        assert_eq!(cut.total_chars, big.len());
        let path = cut.path.expect("saved");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), big);
        let t = s.text();
        assert!(
            t.contains(&format!("of {} characters", big.len())),
            "{}",
            &t[t.len() - 400..]
        );
        assert!(t.contains(&path.display().to_string()));
        assert!(!s.is_error);
    }

    #[test]
    fn small_results_are_not_cut() {
        let dir = tempfile::tempdir().unwrap();
        let r = CallResult::text("x".repeat(400), true);
        let s = shape(&r, &opts(true, 100, dir.path()));
        assert!(s.cut.is_none());
        assert!(s.is_error);
        assert_eq!(s.text().len(), 400);
    }

    #[test]
    fn a_passed_on_result_keeps_its_other_blocks_and_members_when_cut() {
        let dir = tempfile::tempdir().unwrap();
        let big = "word ".repeat(2000);
        let result = json!({
            "content": [
                {"type": "text", "text": big, "annotations": {"audience": ["user"]}},
                {"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"},
                {"type": "text", "text": "tail"},
                {"type": "future-kind", "x": 1}
            ],
            "structuredContent": {"n": 1},
            "isError": false,
            "_meta": {"k": "v"}
        })
        .to_string();
        let (cut, how) = cut_call_result_json(&result, &opts(true, 200, dir.path())).unwrap();
        let cut: Value = serde_json::from_str(&cut).unwrap();
        let blocks = cut["content"].as_array().unwrap();
        assert_eq!(blocks.len(), 3, "{cut}");
        let text = blocks[0]["text"].as_str().unwrap();
        assert!(text.starts_with("word word"), "{text}");
        assert!(text.contains("[switchboard: result cut"), "{text}");
        assert!(text.len() <= 200 * CHARS_PER_TOKEN, "{}", text.len());
        assert_eq!(blocks[0]["annotations"], json!({"audience": ["user"]}));
        assert_eq!(blocks[1]["type"], "image");
        assert_eq!(blocks[2], json!({"type": "future-kind", "x": 1}));
        assert_eq!(cut["structuredContent"], json!({"n": 1}));
        assert_eq!(cut["_meta"], json!({"k": "v"}));
        let saved = std::fs::read_to_string(how.path.unwrap()).unwrap();
        assert_eq!(saved, format!("{big}\ntail"));
        // Within the limit, or not a tool result: passed on as it came.
        let small = json!({"content": [{"type": "text", "text": "hi"}]}).to_string();
        assert!(cut_call_result_json(&small, &opts(true, 200, dir.path())).is_none());
        let odd = format!("[{}]", "1,".repeat(2000) + "1");
        assert!(cut_call_result_json(&odd, &opts(true, 200, dir.path())).is_none());
    }
}
