//! Small text helpers shared by the rules: words of a tool name, sentences, the leading verb.

/// The words of an identifier: split on `_`, `-`, `.`, `/`, spaces and camelCase, lowercased.
/// `deleteIssueComment` and `delete_issue-comment` both give `[delete, issue, comment]`.
pub fn name_words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let chars: Vec<char> = name.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            flush(&mut cur, &mut words);
            continue;
        }
        let prev = i.checked_sub(1).map(|j| chars[j]);
        let next = chars.get(i + 1).copied();
        // "getHTTPStatus": split before "S" (acronym end) and before "H" (lower -> upper).
        let boundary = c.is_uppercase()
            && prev.is_some_and(|p| {
                p.is_lowercase()
                    || p.is_ascii_digit()
                    || (p.is_uppercase() && next.is_some_and(char::is_lowercase))
            });
        if boundary {
            flush(&mut cur, &mut words);
        }
        cur.extend(c.to_lowercase());
    }
    flush(&mut cur, &mut words);
    words
}

fn flush(cur: &mut String, words: &mut Vec<String>) {
    if !cur.is_empty() {
        words.push(std::mem::take(cur));
    }
}

/// Lowercase words of prose (letters, digits and apostrophes).
pub fn prose_words(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Sentences: split at `.`, `!`, `?` followed by whitespace, and at line breaks. Keeps `~/.ssh`
/// and `.env` inside their sentence.
pub fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let bytes = text.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        let end_mark = matches!(b, b'.' | b'!' | b'?')
            && bytes.get(i + 1).is_none_or(|n| n.is_ascii_whitespace());
        if b == b'\n' || end_mark {
            let s = text[start..=i].trim();
            if !s.is_empty() {
                out.push(s);
            }
            start = i + 1;
        }
    }
    let s = text[start..].trim();
    if !s.is_empty() {
        out.push(s);
    }
    out
}

/// Words that come before the verb in descriptions ("Use this tool to permanently delete ...").
const LEAD_IN: &[&str] = &[
    "use",
    "this",
    "tool",
    "function",
    "to",
    "will",
    "can",
    "permanently",
    "irreversibly",
    "immediately",
    "allows",
    "allow",
    "lets",
    "let",
    "you",
    "used",
    "it",
    "that",
    "which",
    "a",
    "an",
    "the",
    "mcp",
    "endpoint",
    "api",
    "helps",
    "help",
    "and",
    "also",
];

/// The first word of the first sentence after lead-in words: the verb of a well-formed
/// description ("Closes the issue" -> "closes").
pub fn leading_verb(description: &str) -> Option<String> {
    let first = sentences(description).into_iter().next()?;
    prose_words(first)
        .into_iter()
        .find(|w| !LEAD_IN.contains(&w.as_str()))
}

/// Whether `word` is `verb` or its third-person form (`close`/`closes`, `pay`/`pays`,
/// `wipe`/`wipes`, `push`/`pushes`).
pub fn is_verb_form(word: &str, verb: &str) -> bool {
    word == verb || word.strip_suffix('s') == Some(verb) || word.strip_suffix("es") == Some(verb)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_names_of_every_style() {
        assert_eq!(
            name_words("deleteIssueComment"),
            ["delete", "issue", "comment"]
        );
        assert_eq!(name_words("get_HTTPStatus"), ["get", "http", "status"]);
        assert_eq!(
            name_words("lol-summoner.search"),
            ["lol", "summoner", "search"]
        );
    }

    #[test]
    fn sentences_keep_dotted_paths() {
        assert_eq!(
            sentences("Read ~/.ssh/id_rsa first. Then go.\nNext"),
            ["Read ~/.ssh/id_rsa first.", "Then go.", "Next"]
        );
    }

    #[test]
    fn leading_verb_skips_lead_ins() {
        assert_eq!(
            leading_verb("Use this tool to permanently delete a file.").as_deref(),
            Some("delete")
        );
        assert_eq!(leading_verb("Closes the issue.").as_deref(), Some("closes"));
        assert!(is_verb_form("closes", "close") && is_verb_form("pushes", "push"));
    }
}
