//! Text cut to a length for messages: a server's or a model's words quoted in an error or a
//! table stay readable however long they were.

use std::borrow::Cow;

/// At most `max_chars` characters of `text`, and `…` after them when any were cut.
pub fn clip(text: &str, max_chars: usize) -> Cow<'_, str> {
    match text.char_indices().nth(max_chars) {
        Some((at, _)) => Cow::Owned(format!("{}…", &text[..at])),
        None => Cow::Borrowed(text),
    }
}

#[cfg(test)]
mod tests {
    use super::clip;

    #[test]
    fn cuts_by_characters_and_marks_the_cut() {
        assert_eq!(clip("abcdef", 4), "abcd…");
        assert_eq!(clip("abcd", 4), "abcd");
        assert_eq!(clip("", 0), "");
        assert_eq!(clip("ééé", 2), "éé…");
        assert_eq!(clip("x", 0), "…");
    }
}
