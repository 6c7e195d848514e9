//! JSON with comments and trailing commas (VS Code's `mcp.json`, Zed's settings) turned into
//! plain JSON of the same length, so every byte offset, line and column still points at the
//! same place in the user's file.

use std::borrow::Cow;

/// `text` with `//` and `/* */` comments and the commas before a closing `}` or `]` blanked
/// out. Strings are left alone (a URL's `//` stays). Plain JSON comes back borrowed.
pub fn to_json(text: &str) -> Cow<'_, str> {
    blanked(text, true)
}

/// `text` with its comments blanked out and its trailing commas kept, for an edit that must
/// see every comma it takes away (`json_members`).
pub fn without_comments(text: &str) -> Cow<'_, str> {
    blanked(text, false)
}

/// `text` with comments blanked, and trailing commas too when `commas`.
fn blanked(text: &str, commas: bool) -> Cow<'_, str> {
    let bytes = text.as_bytes();
    let mut out: Option<Vec<u8>> = None;
    // The last comma outside strings and comments, still waiting to see what follows it.
    let mut open_comma: Option<usize> = None;
    // The last byte outside strings, comments and whitespace.
    let mut prev = 0u8;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                open_comma = None;
                prev = b'"';
                i = string_end(bytes, i);
                continue;
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                let end = bytes[i..]
                    .iter()
                    .position(|&b| b == b'\n')
                    .map_or(bytes.len(), |n| i + n);
                blank(&mut out, bytes, i..end);
                i = end;
                continue;
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                let Some(close) = bytes[i + 2..].windows(2).position(|w| w == b"*/") else {
                    // Unterminated: leave it for the JSON parser to point at.
                    break;
                };
                let end = i + 2 + close + 2;
                blank(&mut out, bytes, i..end);
                i = end;
                continue;
            }
            b if b.is_ascii_whitespace() => {}
            b => {
                match b {
                    // Only a comma after a value can be trailing (not `[,]` or `1,,`).
                    b',' => open_comma = (!matches!(prev, b'{' | b'[' | b',')).then_some(i),
                    b'}' | b']' => {
                        if let Some(comma) = open_comma.take().filter(|_| commas) {
                            blank(&mut out, bytes, comma..comma + 1);
                        }
                    }
                    _ => open_comma = None,
                }
                prev = b;
            }
        }
        i += 1;
    }
    match out {
        // Only ASCII bytes were replaced by spaces, and only whole comments (which end at a
        // newline, the end of the text or `*/`) or commas, so the text is still UTF-8.
        Some(out) => Cow::Owned(String::from_utf8(out).unwrap_or_else(|_| text.to_string())),
        None => Cow::Borrowed(text),
    }
}

/// The index just past the string that starts at `start` (a `"`), or the end of the text.
pub(super) fn string_end(bytes: &[u8], start: usize) -> usize {
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    bytes.len()
}

/// Replace `range` with spaces, keeping newlines (and so line numbers).
fn blank(out: &mut Option<Vec<u8>>, bytes: &[u8], range: std::ops::Range<usize>) {
    let out = out.get_or_insert_with(|| bytes.to_vec());
    for b in &mut out[range] {
        if *b != b'\n' && *b != b'\r' {
            *b = b' ';
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_json_is_returned_as_is() {
        let text = r#"{"a": ["http://x/y", "/* not a comment */"], "b": "x\"//y"}"#;
        assert!(matches!(to_json(text), Cow::Borrowed(_)));
    }

    #[test]
    fn comments_and_trailing_commas_become_spaces_of_the_same_length() {
        let text = "{\n  // a comment: \"quoted\" é\n  \"a\": [1, 2,], /* block\n over lines */ \"b\": {\"c\": \"//kept\",},\n}\n";
        let json = to_json(text);
        assert_eq!(json.len(), text.len());
        assert_eq!(json.matches('\n').count(), text.matches('\n').count());
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(v, serde_json::json!({"a": [1, 2], "b": {"c": "//kept"}}));
        // Keys stay where they were written.
        assert_eq!(json.find("\"b\""), text.find("\"b\""));
    }

    #[test]
    fn a_comma_before_a_comment_before_the_close_is_trailing() {
        let v: serde_json::Value = serde_json::from_str(&to_json("{\"a\": 1, // last\n}")).unwrap();
        assert_eq!(v, serde_json::json!({"a": 1}));
    }

    #[test]
    fn broken_input_is_left_for_the_parser_to_report() {
        for text in [
            "{\"a\": 1 /* never closed",
            "{\"a\": \"never closed",
            "{,}",
            "[1,,]",
        ] {
            let json = to_json(text);
            assert!(
                serde_json::from_str::<serde_json::Value>(&json).is_err(),
                "{text:?} -> {json:?}"
            );
        }
    }
}
