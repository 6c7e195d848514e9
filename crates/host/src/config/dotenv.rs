//! `.env` files, as VS Code's and Cursor's `envFile` names them: `KEY=value` lines, `#`
//! comments, an optional `export `, values bare (an inline ` #` comment cut off), in single
//! quotes (as written) or in double quotes (with `\n`, `\t`, `\"` and `\\`, and able to span
//! lines). Errors name the line and the key, never a value.

/// The variables of a `.env` file's text, in file order (a later line of the same key wins when
/// the caller collects them).
pub fn parse(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    let mut lines = text.lines().enumerate().peekable();
    while let Some((i, line)) = lines.next() {
        let number = i + 1;
        let line = line.trim_start_matches('\u{feff}').trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let line = line.strip_prefix("export ").map_or(line, str::trim_start);
        let Some((key, rest)) = line.split_once('=') else {
            return Err(format!("line {number}: expected KEY=value"));
        };
        let key = key.trim();
        let valid = key
            .chars()
            .next()
            .is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
            && key
                .chars()
                .all(|c| c == '_' || c == '.' || c == '-' || c.is_ascii_alphanumeric());
        if !valid {
            return Err(format!(
                "line {number}: {key:?} is not a variable name (letters, digits and `_`, not starting with a digit)"
            ));
        }
        let rest = rest.trim_start();
        let value = match rest.chars().next() {
            Some('\'') => match rest[1..].find('\'') {
                Some(end) => rest[1..1 + end].to_string(),
                None => return Err(format!("line {number}: {key}'s value has no closing '")),
            },
            Some('"') => {
                let mut value = String::new();
                let mut text = rest[1..].to_string();
                loop {
                    if double_quoted(&text, &mut value) {
                        break;
                    }
                    // The value goes on to the next line.
                    match lines.next() {
                        Some((_, next)) => {
                            value.push('\n');
                            text = next.to_string();
                        }
                        None => {
                            return Err(format!("line {number}: {key}'s value has no closing \""));
                        }
                    }
                }
                value
            }
            _ => {
                let cut = rest
                    .char_indices()
                    .find(|&(i, c)| c == '#' && rest[..i].ends_with([' ', '\t']))
                    .map_or(rest.len(), |(i, _)| i);
                rest[..cut].trim_end().to_string()
            }
        };
        out.push((key.to_string(), value));
    }
    Ok(out)
}

/// Read one line of a double-quoted value into `value`: whether the closing quote was on it
/// (else the value goes on to the next line).
fn double_quoted(text: &str, value: &mut String) -> bool {
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => return true,
            '\\' => match chars.next() {
                Some('n') => value.push('\n'),
                Some('t') => value.push('\t'),
                Some('r') => value.push('\r'),
                Some(other) => value.push(other),
                None => value.push('\\'),
            },
            c => value.push(c),
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_form_a_dotenv_file_uses() {
        let text = "\u{feff}# keys\nA=plain\nexport B = spaced value   \nC='single # kept $X'\nD=\"two\\nlines \\\"q\\\"\"\nE=bare # a comment\nF=no#comment\nG=\nH=\"spans\nlines\"\n\n";
        let got = parse(text).unwrap();
        let want = [
            ("A", "plain"),
            ("B", "spaced value"),
            ("C", "single # kept $X"),
            ("D", "two\nlines \"q\""),
            ("E", "bare"),
            ("F", "no#comment"),
            ("G", ""),
            ("H", "spans\nlines"),
        ];
        assert_eq!(
            got,
            want.map(|(k, v)| (k.to_string(), v.to_string())).to_vec()
        );
    }

    #[test]
    fn errors_name_the_line_and_key_never_the_value() {
        for (text, want) in [
            ("A=1\nnot a pair\n", "line 2: expected KEY=value"),
            ("1A=secret-value\n", "line 1: \"1A\" is not a variable name"),
            ("K='secret-value\n", "line 1: K's value has no closing '"),
            ("K=\"secret-value\n", "line 1: K's value has no closing \""),
        ] {
            let e = parse(text).unwrap_err();
            assert!(e.starts_with(want), "{text:?}: {e}");
            assert!(!e.contains("secret-value"), "{e}");
        }
    }
}
