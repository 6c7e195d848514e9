//! The members of a JSON object in a config file's text, found, added and removed by byte
//! offset, so the rest of the file (comments, order, layout) stays as it was. Offsets are
//! found in `plain`, the text with comments and trailing commas blanked (`jsonc`), and applied
//! to the text itself; values are written in the order given (`Json`).

/// A JSON value as an edit writes it: objects keep the order given.
#[derive(Clone, Debug)]
pub(super) enum Json {
    Text(String),
    Bool(bool),
    /// A list of texts, written on one line.
    Texts(Vec<String>),
    Object(Vec<(String, Json)>),
    /// A value as another host's entry wrote it (its objects' keys in `serde_json`'s order).
    Raw(serde_json::Value),
}

impl Json {
    /// Pretty-printed, its inner lines indented by `indent` plus `step` per level.
    pub(super) fn render(&self, indent: &str, step: &str) -> String {
        self.write(Some((indent, step)))
    }

    /// On one line.
    pub(super) fn inline(&self) -> String {
        self.write(None)
    }

    /// Pretty with `Some((indent, step))`, else on one line.
    fn write(&self, pretty: Option<(&str, &str)>) -> String {
        let quote = |s: &str| serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into());
        match self {
            Json::Text(s) => quote(s),
            Json::Bool(b) => b.to_string(),
            Json::Texts(list) => {
                let items: Vec<String> = list.iter().map(|s| quote(s)).collect();
                format!("[{}]", items.join(", "))
            }
            Json::Raw(value) => match pretty {
                Some((indent, _)) => serde_json::to_string_pretty(value)
                    .unwrap_or_else(|_| "null".into())
                    .replace('\n', &format!("\n{indent}")),
                None => serde_json::to_string(value).unwrap_or_else(|_| "null".into()),
            },
            Json::Object(members) if members.is_empty() => "{}".into(),
            Json::Object(members) => match pretty {
                Some((indent, step)) => {
                    let inner = format!("{indent}{step}");
                    let lines: Vec<String> = members
                        .iter()
                        .map(|(k, v)| format!("{inner}{}: {}", quote(k), v.render(&inner, step)))
                        .collect();
                    format!("{{\n{}\n{indent}}}", lines.join(",\n"))
                }
                None => {
                    let items: Vec<String> = members
                        .iter()
                        .map(|(k, v)| format!("{}: {}", quote(k), v.inline()))
                        .collect();
                    format!("{{{}}}", items.join(", "))
                }
            },
        }
    }
}

/// One `"key": value` of a JSON object: where its key and its value begin and end, in the text
/// with comments blanked out (which keeps every offset).
#[derive(Debug)]
pub(super) struct Member {
    pub(super) key: String,
    pub(super) key_start: usize,
    pub(super) value: usize,
    pub(super) value_end: usize,
}

/// The offset of the top-level object's `{`.
pub(super) fn root_object(plain: &str) -> usize {
    skip_space(plain.as_bytes(), 0)
}

pub(super) fn skip_space(bytes: &[u8], mut i: usize) -> usize {
    while bytes.get(i).is_some_and(u8::is_ascii_whitespace) {
        i += 1;
    }
    i
}

/// The offset just past the value beginning at `start`.
pub(super) fn value_end(bytes: &[u8], start: usize) -> usize {
    match bytes.get(start) {
        Some(b'"') => super::jsonc::string_end(bytes, start),
        Some(b'{' | b'[') => {
            let mut depth = 0usize;
            let mut i = start;
            while let Some(&b) = bytes.get(i) {
                match b {
                    b'"' => {
                        i = super::jsonc::string_end(bytes, i);
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth = depth.saturating_sub(1);
                        if depth == 0 {
                            return i + 1;
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            bytes.len()
        }
        _ => {
            let mut i = start;
            while bytes
                .get(i)
                .is_some_and(|b| !matches!(b, b',' | b'}' | b']') && !b.is_ascii_whitespace())
            {
                i += 1;
            }
            i
        }
    }
}

/// The members of the object whose `{` is at `open`, in order.
pub(super) fn members(plain: &str, open: usize) -> Vec<Member> {
    let bytes = plain.as_bytes();
    let mut out = Vec::new();
    let mut i = open + 1;
    loop {
        i = skip_space(bytes, i);
        if bytes.get(i) == Some(&b',') {
            i += 1;
            continue;
        }
        if bytes.get(i) != Some(&b'"') {
            return out;
        }
        let key_start = i;
        let key_end = super::jsonc::string_end(bytes, i);
        let key = serde_json::from_str::<String>(&plain[key_start..key_end]).unwrap_or_default();
        i = skip_space(bytes, key_end);
        if bytes.get(i) != Some(&b':') {
            return out;
        }
        let value = skip_space(bytes, i + 1);
        let value_end = value_end(bytes, value);
        out.push(Member {
            key,
            key_start,
            value,
            value_end,
        });
        i = value_end;
    }
}

/// The whitespace a line begins with, for the line holding `offset`.
pub(super) fn indent_at(text: &str, offset: usize) -> &str {
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let line = &text[line_start..];
    &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
}

/// `text` with `"key": value` added as the last member of the object whose `{` is at `open`
/// (offsets of `plain`, the same text with comments blanked), indented as its other members.
pub(super) fn insert_member(
    text: &str,
    plain: &str,
    open: usize,
    key: &str,
    value: &Json,
) -> String {
    let bytes = plain.as_bytes();
    let close = value_end(bytes, open).saturating_sub(1);
    let existing = members(plain, open);
    let outer = indent_at(text, open).to_string();
    // The file's own step: its first indented line's, else two spaces.
    let file_step = text
        .lines()
        .map(|l| &l[..l.len() - l.trim_start_matches([' ', '\t']).len()])
        .find(|w| !w.is_empty())
        .unwrap_or("  ")
        .to_string();
    let one_line = !text[open..close].contains('\n') && !existing.is_empty();
    let indent = match existing.first() {
        Some(first) if !one_line => indent_at(text, first.key_start).to_string(),
        _ => format!("{outer}{file_step}"),
    };
    let step = indent
        .strip_prefix(outer.as_str())
        .filter(|s| !s.is_empty())
        .unwrap_or(&file_step)
        .to_string();
    let key = serde_json::to_string(key).unwrap_or_else(|_| "\"\"".into());
    let mut out = String::with_capacity(text.len() + 256);
    match existing.last() {
        Some(last) if one_line => {
            out.push_str(&text[..last.value_end]);
            out.push_str(&format!(", {key}: {}", value.inline()));
            out.push_str(&text[last.value_end..]);
        }
        Some(last) => {
            out.push_str(&text[..last.value_end]);
            out.push_str(&format!(
                ",\n{indent}{key}: {}",
                value.render(&indent, &step)
            ));
            out.push_str(&text[last.value_end..]);
        }
        None => {
            // An empty object: what is inside it (a comment) stays, the entry after it.
            let inside = text[open + 1..close].trim_end();
            out.push_str(&text[..=open]);
            out.push_str(inside);
            out.push_str(&format!(
                "\n{indent}{key}: {}\n{outer}",
                value.render(&indent, &step)
            ));
            out.push_str(&text[close..]);
        }
    }
    out
}

/// `text` without the `index`th member of the object whose `{` is at `open`, and without the
/// comma and line it leaves behind.
pub(super) fn remove_member(text: &str, plain: &str, open: usize, index: usize) -> String {
    let bytes = plain.as_bytes();
    let all = members(plain, open);
    let this = &all[index];
    // The comma after it, a trailing one too (which `plain` has blanked, so not found there).
    let uncommented = super::jsonc::without_comments(text);
    let next = skip_space(uncommented.as_bytes(), this.value_end);
    let after_comma = (uncommented.as_bytes().get(next) == Some(&b',')).then_some(next + 1);
    let close = value_end(bytes, open).saturating_sub(1);
    let end_of_this = after_comma.unwrap_or(this.value_end);
    if all.len() == 1
        && text[open + 1..this.key_start].trim().is_empty()
        && text[end_of_this..close].trim().is_empty()
    {
        // The only one, with nothing else inside: the object is left empty, `{}`.
        return format!("{}{}", &text[..=open], &text[close..]);
    }
    let (start, end) = match all.get(index + 1) {
        Some(next) => {
            // Not the last: from its line's start (when it begins the line) to the next
            // member's line.
            let line_start = text[..this.key_start].rfind('\n').map_or(0, |i| i + 1);
            let own_line = text[line_start..this.key_start].trim().is_empty();
            let next_line = text[..next.key_start].rfind('\n').map_or(0, |i| i + 1);
            // (Only when its comma is on its own lines too: `,` may begin the next line.)
            if own_line && after_comma.is_some_and(|c| c <= next_line) {
                (line_start, next_line)
            } else {
                (this.key_start, next.key_start)
            }
        }
        None => {
            // The last: from the end of the one before (its comma goes) or the object's `{`.
            let start = match index.checked_sub(1) {
                Some(before) => all[before].value_end,
                None => open + 1,
            };
            let end = after_comma.unwrap_or(this.value_end);
            (start, end)
        }
    };
    let mut out = String::with_capacity(text.len());
    out.push_str(&text[..start]);
    out.push_str(&text[end..]);
    out
}
