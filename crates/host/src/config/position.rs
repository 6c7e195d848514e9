//! Byte offsets to 1-based line and column, and finding where a key is written, so config errors
//! point at the exact place in the file.

/// 1-based (line, column) of a byte offset in `text` (columns count characters).
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text[..floor_char_boundary(text, offset)];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

fn floor_char_boundary(text: &str, mut i: usize) -> usize {
    while i > 0 && !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The offset of the first line inside `range` that assigns `key` (`key =`, `"key" =`, `key.x =`),
/// for TOML.
pub fn find_toml_key(text: &str, range: std::ops::Range<usize>, key: &str) -> Option<usize> {
    let start = floor_char_boundary(text, range.start.min(text.len()));
    let end = floor_char_boundary(text, range.end.min(text.len()));
    let slice = &text[start..end];
    let mut offset = start;
    for line in slice.split_inclusive('\n') {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        for candidate in [key.to_string(), format!("\"{key}\"")] {
            if let Some(rest) = trimmed.strip_prefix(&candidate)
                && matches!(rest.trim_start().chars().next(), Some('=') | Some('.'))
            {
                return Some(offset + indent);
            }
        }
        offset += line.len();
    }
    None
}

/// The offset of the header line of TOML table `parent.name` (`[parent.name]` or
/// `[parent."name"]`, spaces allowed inside the brackets): only where a header can stand, at
/// the start of a line, so a comment that mentions the header is passed over.
pub fn find_toml_table(text: &str, parent: &str, name: &str) -> Option<usize> {
    let quoted = serde_json::to_string(name).ok()?;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        if let Some(inner) = trimmed.strip_prefix('[')
            && !inner.starts_with('[')
            && let Some(rest) = inner.trim_start().strip_prefix(parent)
            && let Some(rest) = rest.trim_start().strip_prefix('.')
        {
            let rest = rest.trim_start();
            let after = rest
                .strip_prefix(name)
                .or_else(|| rest.strip_prefix(quoted.as_str()));
            if after.is_some_and(|a| a.trim_start().starts_with(']')) {
                return Some(offset + line.len() - trimmed.len());
            }
        }
        offset += line.len();
    }
    None
}

/// The offset of mapping key `name` on a line of its own after the first `section` in YAML text
/// (`name:`, `"name":` or `'name':`), as a server is named under `extensions:` or
/// `mcpServers:`.
pub fn find_yaml_key(text: &str, section: &str, name: &str) -> Option<usize> {
    let start = text.find(section)?;
    let keys = [
        format!("{name}:"),
        format!("\"{name}\":"),
        format!("\"{name}\" :"),
        format!("'{name}':"),
    ];
    let mut offset = start;
    for line in text[start..].split_inclusive('\n') {
        let trimmed = line.trim_start();
        if offset > start && keys.iter().any(|k| trimmed.starts_with(k.as_str())) {
            return Some(offset + line.len() - trimmed.len());
        }
        offset += line.len();
    }
    None
}

/// The offset of `"key"` followed by `:` in JSON text, searching from `from`.
pub fn find_json_key(text: &str, from: usize, key: &str) -> Option<usize> {
    let quoted = serde_json::to_string(key).ok()?;
    let mut search = floor_char_boundary(text, from.min(text.len()));
    while let Some(i) = text[search..].find(&quoted) {
        let at = search + i;
        let after = &text[at + quoted.len()..];
        if after.trim_start().starts_with(':') {
            return Some(at);
        }
        search = at + quoted.len();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_columns_are_one_based() {
        let t = "ab\ncdé\nf";
        assert_eq!(line_col(t, 0), (1, 1));
        assert_eq!(line_col(t, 3), (2, 1));
        assert_eq!(line_col(t, 5), (2, 3));
        assert_eq!(line_col(t, t.len()), (3, 2));
    }

    #[test]
    fn finds_keys() {
        let t = "[servers.a]\ncommand = \"x\"\n  url = \"y\"\n";
        assert_eq!(
            find_toml_key(t, 0..t.len(), "url"),
            Some(t.find("url").unwrap())
        );
        assert_eq!(find_toml_key(t, 0..t.len(), "args"), None);
        let t =
            "# [servers.a] is below\n[servers.ab]\n[ servers . \"a\" ]\nx = 1\n[servers.a.oauth]\n";
        assert_eq!(
            find_toml_table(t, "servers", "a"),
            Some(t.find("[ servers").unwrap())
        );
        assert_eq!(find_toml_table(t, "servers", "b"), None);
        let j = r#"{"mcpServers": {"a": {"url": 1}, "b": {}}}"#;
        assert_eq!(find_json_key(j, 0, "b"), Some(j.find("\"b\"").unwrap()));
    }
}
