//! Gemini CLI's `argsPattern`: a call's arguments as Gemini CLI writes them for its policy
//! rules, and the rule's JavaScript regular expression searched in that text.

use std::cmp::Ordering;
use std::fmt;
use std::sync::LazyLock;

use serde_json::{Map, Number, Value};

/// The longest pattern, counted in UTF-16 code units as JavaScript counts a string's length,
/// that Gemini CLI's ReDoS screen lets through.
const MAX_PATTERN_UTF16_LEN: usize = 2048;

/// Gemini CLI's nested-quantifier screen: an opening parenthesis, a stretch without a closing
/// one that ends in a quantifier character, anything up to a closing parenthesis, and a
/// quantifier character right after it. JavaScript's `.` stops at line terminators (`\n`, `\r`,
/// U+2028, U+2029) while the `regex` crate's stops at `\n` only, so the class below spells out
/// the JavaScript meaning; `[^)]` crosses lines in both.
static NESTED_QUANTIFIER: LazyLock<Result<regex::Regex, regex::Error>> =
    LazyLock::new(|| regex::Regex::new(r"\([^)]*[*+?{][^\n\r\u{2028}\u{2029}]*\)[*+?{]"));

/// Writes a call's arguments the way Gemini CLI's `stableStringify` does before it searches a
/// rule's `argsPattern` in them.
///
/// The text is compact JSON. Object keys are sorted by their UTF-16 code units (JavaScript's
/// default sort), so U+E000 comes after an astral character such as 😀, unlike Rust's `str`
/// order. Each key/value pair of this top-level object, and of no nested one, is wrapped in
/// NUL characters: `{\0"a":1\0,\0"b":"x"\0}`. An empty object is `{}`. Strings are escaped as
/// JavaScript's `JSON.stringify` escapes them and numbers are printed as JavaScript prints the
/// 64-bit float they stand for, so integers beyond 2^53 come out rounded.
pub(super) fn stable_stringify(args: &Map<String, Value>) -> String {
    let mut out = String::new();
    write_object(&mut out, args, true);
    out
}

/// Appends `value` as JavaScript's `JSON.stringify` would write it, with sorted keys and no
/// NUL markers (those belong to the top-level object only).
fn write_value(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(number) => write_number(out, number),
        Value::String(text) => write_json_string(out, text),
        Value::Array(items) => {
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                write_value(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => write_object(out, map, false),
    }
}

/// Appends an object with its keys in UTF-16 order; `top_level` wraps each pair in NULs.
fn write_object(out: &mut String, map: &Map<String, Value>, top_level: bool) {
    let mut entries: Vec<(&String, &Value)> = map.iter().collect();
    entries.sort_by(|(a, _), (b, _)| utf16_order(a, b));
    out.push('{');
    for (index, (key, value)) in entries.into_iter().enumerate() {
        if index > 0 {
            out.push(',');
        }
        if top_level {
            out.push('\0');
        }
        write_json_string(out, key);
        out.push(':');
        write_value(out, value);
        if top_level {
            out.push('\0');
        }
    }
    out.push('}');
}

/// Compares two strings code unit by code unit in UTF-16, as JavaScript's default sort does.
fn utf16_order(a: &str, b: &str) -> Ordering {
    a.encode_utf16().cmp(b.encode_utf16())
}

/// Appends a number as JavaScript's `Number.prototype.toString` prints it after the JSON text
/// was read into a 64-bit float: no `.0` on integral values, exponent form from 1e21 up and
/// below 1e-6, `0` for negative zero, and `null` for a value too large to be finite.
fn write_number(out: &mut String, number: &Number) {
    match number.as_f64() {
        Some(value) if value.is_finite() => {
            out.push_str(ryu_js::Buffer::new().format_finite(value));
        }
        Some(_) => out.push_str("null"),
        // Every serde_json number converts to a float; this only keeps the text if one ever
        // does not.
        None => out.push_str(&number.to_string()),
    }
}

/// Appends `text` in double quotes, escaped as JavaScript's `JSON.stringify` escapes it: `\"`,
/// `\\`, the short forms `\b \t \n \f \r`, `\u00xx` in lowercase hex for the other control
/// characters, and everything else (including `/`, U+007F, U+2028 and non-ASCII) as it is.
/// A Rust string holds no unpaired surrogate, so JavaScript's `\udxxx` form never arises.
fn write_json_string(out: &mut String, text: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\u{c}' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            c if u32::from(c) < 0x20 => {
                let code = u32::from(c) as usize;
                out.push_str("\\u00");
                out.push(char::from(HEX[code >> 4]));
                out.push(char::from(HEX[code & 0xf]));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Whether JavaScript's `\s` matches `c`: its white space and line terminators, which include
/// U+FEFF but, unlike Rust's `char::is_whitespace`, not U+0085.
fn is_js_whitespace(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202f}'
                | '\u{205f}'
                | '\u{3000}'
                | '\u{feff}'
    )
}

/// Gemini CLI's `escapeRegex`: puts a backslash before each of `- [ ] { } ( ) * + ? . , \ ^ $
/// | # "` and before every character JavaScript's `\s` matches.
fn escape_regex(text: &str) -> String {
    let mut out = String::with_capacity(text.len() * 2);
    for c in text.chars() {
        if matches!(
            c,
            '-' | '['
                | ']'
                | '{'
                | '}'
                | '('
                | ')'
                | '*'
                | '+'
                | '?'
                | '.'
                | ','
                | '\\'
                | '^'
                | '$'
                | '|'
                | '#'
                | '"'
        ) || is_js_whitespace(c)
        {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Gemini CLI's `buildArgsPatterns`: the argument patterns one TOML rule expands into, one rule
/// per entry.
///
/// With command prefixes, each prefix gives the escaped text `"command":"PREFIX` (the prefix
/// JSON-quoted, without its closing quote) followed by `(?:[\s"]|\\")`, so the prefix must end
/// at white space, at the end of the command string, or before an escaped quote. Otherwise a
/// non-empty `command_regex` gives `"command":"` followed by that regex. Otherwise the result
/// is the rule's own `args_pattern`, which may be `None`.
///
/// An empty `command_prefix` slice stands both for a missing `commandPrefix` and for the empty
/// string (which JavaScript treats as missing). A TOML `commandPrefix = []` is not the same in
/// Gemini CLI: there it yields no pattern and so no rule at all, which the caller must handle.
/// An empty `args_pattern` is passed through as `Some("")`; Gemini CLI then attaches no pattern,
/// and [`ArgsPattern::compile`] of `""` matches every call, which decides the same way.
pub(super) fn args_patterns(
    args_pattern: Option<&str>,
    command_prefix: &[String],
    command_regex: Option<&str>,
) -> Vec<Option<String>> {
    if !command_prefix.is_empty() {
        return command_prefix
            .iter()
            .map(|prefix| {
                let mut quoted = String::new();
                write_json_string(&mut quoted, prefix);
                quoted.pop();
                let mut pattern = escape_regex(&format!("\"command\":{quoted}"));
                pattern.push_str(r#"(?:[\s"]|\\")"#);
                Some(pattern)
            })
            .collect();
    }
    if let Some(regex) = command_regex.filter(|regex| !regex.is_empty()) {
        return vec![Some(format!("\"command\":\"{regex}"))];
    }
    vec![args_pattern.map(str::to_owned)]
}

/// Why Gemini CLI's `isSafeRegExp` would call `source` unsafe, if it would.
fn redos_reason(source: &str) -> Result<Option<&'static str>, String> {
    if source.encode_utf16().count() > MAX_PATTERN_UTF16_LEN {
        return Ok(Some("it is longer than 2048 characters"));
    }
    let screen = NESTED_QUANTIFIER
        .as_ref()
        .map_err(|error| format!("the ReDoS screen did not compile: {error}"))?;
    if screen.is_match(source) {
        return Ok(Some(
            "a parenthesised group that holds a quantifier is followed by another quantifier",
        ));
    }
    Ok(None)
}

/// A rule's `argsPattern` compiled as Gemini CLI compiles it: a JavaScript regular expression
/// with no flags (case-sensitive, `^`/`$` at the ends of the whole text, `.` stopping at line
/// terminators, no `u` flag).
///
/// The pattern is read and matched as UTF-16 code units, as JavaScript does without the `u`
/// flag: `.` matches one half of a surrogate pair. Where the `regress` engine reads the syntax
/// differently from a JavaScript engine, matching can differ: without the `u` flag regress
/// still reads `\u{…}` as a code point escape (JavaScript reads `\u{41}` as 41 `u`s), and it
/// joins a surrogate pair written as two `\uXXXX` escapes into one astral code point that the
/// code-unit text then never contains. Patterns using newer syntax (such as `(?i:…)` modifier
/// groups) compile here whether or not the Node.js that runs Gemini CLI knows them.
#[derive(Clone)]
pub(super) struct ArgsPattern {
    /// The pattern text as written in the rule.
    source: String,
    /// The compiled pattern.
    regex: regress::Regex,
}

impl ArgsPattern {
    /// Compiles `source`, refusing what Gemini CLI drops from its policy: a pattern that is not
    /// a valid JavaScript regular expression, or one its ReDoS screen (`isSafeRegExp`) calls
    /// unsafe, being longer than 2048 characters or having a quantified group that itself holds
    /// a quantifier (which also catches harmless ones such as `(?:ab)+`). The checks run in
    /// Gemini CLI's order; the error says which one failed.
    pub(super) fn compile(source: &str) -> Result<ArgsPattern, String> {
        let regex = regress::Regex::from_unicode(
            source.encode_utf16().map(u32::from),
            regress::Flags::default(),
        )
        .map_err(|error| {
            format!(
                "Gemini CLI drops this argsPattern: it is not a valid JavaScript regular \
                 expression ({error})"
            )
        })?;
        if let Some(reason) = redos_reason(source)? {
            return Err(format!(
                "Gemini CLI drops this argsPattern as a possible ReDoS pattern: {reason}"
            ));
        }
        Ok(ArgsPattern {
            source: source.to_owned(),
            regex,
        })
    }

    /// Whether the pattern occurs anywhere in [`stable_stringify`] of `arguments`, as
    /// JavaScript's `RegExp.prototype.test` searches it.
    pub(super) fn matches(&self, arguments: &Map<String, Value>) -> bool {
        let text: Vec<u16> = stable_stringify(arguments).encode_utf16().collect();
        self.regex.find_from_ucs2(&text, 0).next().is_some()
    }
}

impl fmt::Debug for ArgsPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ArgsPattern")
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The object in `json`, which must be one.
    fn object(json: Value) -> Map<String, Value> {
        match json {
            Value::Object(map) => map,
            other => panic!("not an object: {other}"),
        }
    }

    /// Parses JSON text that holds an object.
    fn parse(text: &str) -> Map<String, Value> {
        object(serde_json::from_str(text).expect("valid JSON"))
    }

    /// Writes the NUL markers of expected texts as `␀` for readability.
    fn nul(text: &str) -> String {
        text.replace('␀', "\0")
    }

    fn compile(source: &str) -> ArgsPattern {
        ArgsPattern::compile(source).expect("pattern compiles")
    }

    #[test]
    fn spec_table_simple_and_empty() {
        assert_eq!(
            stable_stringify(&parse(r#"{"query":"foo bar","limit":10}"#)),
            nul(r#"{␀"limit":10␀,␀"query":"foo bar"␀}"#)
        );
        assert_eq!(stable_stringify(&Map::new()), "{}");
        assert_eq!(
            stable_stringify(&parse(r#"{"a":{},"b":[]}"#)),
            nul(r#"{␀"a":{}␀,␀"b":[]␀}"#)
        );
    }

    #[test]
    fn spec_table_nested_and_escapes() {
        let args = parse(
            r#"{"b":{"z":1,"a":[1,"x",null,{"d":true,"c":1.5}]},"a":"he said \"hi\"\n\\path/é😀\u0001"}"#,
        );
        assert_eq!(
            stable_stringify(&args),
            nul(
                r#"{␀"a":"he said \"hi\"\n\\path/é😀\u0001"␀,␀"b":{"a":[1,"x",null,{"c":1.5,"d":true}],"z":1}␀}"#
            )
        );
    }

    #[test]
    fn spec_table_numbers() {
        let expected = nul(
            r#"{␀"big":12345678901234567000␀,␀"k":0.30000000000000004␀,␀"m":1e+21␀,␀"n":1␀,␀"neg":0␀}"#,
        );
        let built = object(json!({
            "n": 1.0,
            "m": 1e21,
            "k": 0.1 + 0.2,
            "big": 12_345_678_901_234_567_890_u64,
            "neg": -0.0,
        }));
        assert_eq!(stable_stringify(&built), expected);
        let parsed = parse(
            r#"{"n":1.0,"m":1e21,"k":0.30000000000000004,"big":12345678901234567890,"neg":-0}"#,
        );
        assert_eq!(stable_stringify(&parsed), expected);
    }

    #[test]
    fn more_numbers_follow_javascript() {
        let cases: &[(Value, &str)] = &[
            (json!(0), "0"),
            (json!(-1), "-1"),
            (json!(100), "100"),
            (json!(1e20), "100000000000000000000"),
            (json!(1.5e300), "1.5e+300"),
            (json!(-1e300), "-1e+300"),
            (json!(1e-6), "0.000001"),
            (json!(1.234e-6), "0.000001234"),
            (json!(1e-7), "1e-7"),
            (json!(5e-324), "5e-324"),
            (json!(i64::MIN), "-9223372036854776000"),
            (json!(u64::MAX), "18446744073709552000"),
            (json!(9_007_199_254_740_993_u64), "9007199254740992"),
        ];
        for (value, expected) in cases {
            let mut out = String::new();
            write_value(&mut out, value);
            assert_eq!(out, *expected, "{value}");
        }
    }

    #[test]
    fn spec_table_key_order_is_utf16() {
        let mut args = Map::new();
        for key in ["Z", "a", "_", "é", "\u{E000}", "😀", "10", "9"] {
            args.insert(key.to_owned(), json!(0));
        }
        let expected = ["10", "9", "Z", "_", "a", "é", "😀", "\u{E000}"]
            .iter()
            .map(|key| format!("\0\"{key}\":0\0"))
            .collect::<Vec<_>>()
            .join(",");
        assert_eq!(stable_stringify(&args), format!("{{{expected}}}"));
        // Nested objects use the same order, without markers.
        let nested = object(json!({ "o": { "\u{E000}": 1, "😀": 2 } }));
        assert_eq!(
            stable_stringify(&nested),
            "{\0\"o\":{\"😀\":2,\"\u{E000}\":1}\0}"
        );
    }

    #[test]
    fn control_characters_are_escaped_like_json_stringify() {
        let text: String = (0u32..0x20).filter_map(char::from_u32).collect();
        let mut out = String::new();
        write_json_string(&mut out, &text);
        assert_eq!(
            out,
            concat!(
                r#""\u0000\u0001\u0002\u0003\u0004\u0005\u0006\u0007\b\t\n\u000b\f\r"#,
                r#"\u000e\u000f\u0010\u0011\u0012\u0013\u0014\u0015\u0016\u0017\u0018"#,
                r#"\u0019\u001a\u001b\u001c\u001d\u001e\u001f""#
            )
        );
        let mut raw = String::new();
        write_json_string(&mut raw, "/\u{7f}\u{2028}\u{2029}\u{85}é😀\"\\");
        assert_eq!(raw, "\"/\u{7f}\u{2028}\u{2029}\u{85}é😀\\\"\\\\\"");
        // A NUL inside the data is escaped, so it cannot fake a top-level marker.
        assert_eq!(
            stable_stringify(&object(json!({ "k": "a\u{0}b" }))),
            "{\0\"k\":\"a\\u0000b\"\0}"
        );
    }

    #[test]
    fn escape_regex_covers_gemini_set() {
        assert_eq!(
            escape_regex("-[]{}()*+?.,\\^$|#\"a:/"),
            r#"\-\[\]\{\}\(\)\*\+\?\.\,\\\^\$\|\#\"a:/"#
        );
        assert_eq!(
            escape_regex(" \t\u{a0}\u{2028}\u{feff}\u{85}"),
            "\\ \\\t\\\u{a0}\\\u{2028}\\\u{feff}\u{85}"
        );
    }

    #[test]
    fn args_patterns_for_prefixes() {
        let prefixes = vec!["git status".to_owned(), "echo \"a\\b".to_owned()];
        assert_eq!(
            args_patterns(None, &prefixes, None),
            vec![
                Some(r#"\"command\":\"git\ status(?:[\s"]|\\")"#.to_owned()),
                Some(r#"\"command\":\"echo\ \\\"a\\\\b(?:[\s"]|\\")"#.to_owned()),
            ]
        );
        // Prefixes win over a regex and a pattern.
        assert_eq!(args_patterns(Some("x"), &prefixes[..1], Some("y")).len(), 1);
        let git_status = compile(
            args_patterns(None, &prefixes[..1], None)[0]
                .as_deref()
                .expect("a pattern"),
        );
        for (command, expected) in [
            ("git status", true),
            ("git status --short", true),
            ("git statusx", false),
            ("git\\status", false),
            ("ls; git status", false),
        ] {
            assert_eq!(
                git_status.matches(&object(json!({ "command": command }))),
                expected,
                "{command}"
            );
        }
        let quoted = compile(
            args_patterns(None, &["echo".to_owned()], None)[0]
                .as_deref()
                .expect("a pattern"),
        );
        assert!(quoted.matches(&object(json!({ "command": "echo\"hi\"" }))));
    }

    #[test]
    fn args_patterns_for_regex_and_plain_pattern() {
        assert_eq!(
            args_patterns(Some("ignored"), &[], Some("git (status|log)")),
            vec![Some(r#""command":"git (status|log)"#.to_owned())]
        );
        assert_eq!(
            args_patterns(Some("abc"), &[], Some("")),
            vec![Some("abc".to_owned())]
        );
        assert_eq!(args_patterns(None, &[], None), vec![None]);
        let git = compile(
            args_patterns(None, &[], Some("git (status|log)"))[0]
                .as_deref()
                .expect("a pattern"),
        );
        assert!(git.matches(&object(json!({ "command": "git log -1" }))));
        assert!(!git.matches(&object(json!({ "command": "git push" }))));
    }

    #[test]
    fn compile_refuses_what_gemini_drops() {
        let nested = ArgsPattern::compile("(?:ab)+").expect_err("refused");
        assert!(nested.contains("ReDoS"), "{nested}");
        for source in ["(a+)+", "(a{2}){3}", "x(.*)*y", "([a-z]+)?"] {
            assert!(ArgsPattern::compile(source).is_err(), "{source}");
        }
        let long = ArgsPattern::compile(&"x".repeat(2049)).expect_err("refused");
        assert!(long.contains("ReDoS") && long.contains("2048"), "{long}");
        // Length counts UTF-16 code units, as JavaScript does.
        assert!(ArgsPattern::compile(&"😀".repeat(1025)).is_err());
        assert!(ArgsPattern::compile(&"😀".repeat(1024)).is_ok());
        assert!(ArgsPattern::compile(&"x".repeat(2048)).is_ok());
        let invalid = ArgsPattern::compile("(").expect_err("refused");
        assert!(
            invalid.contains("not a valid JavaScript regular expression")
                && invalid.contains("parenthesis"),
            "{invalid}"
        );
        assert!(ArgsPattern::compile("a**").is_err());
    }

    #[test]
    fn compile_accepts_what_gemini_keeps() {
        for source in [
            "(a|b)*",
            "(ab){2}",
            "(a+)",
            "a+b*",
            // JavaScript's `.` does not cross line terminators, so the screen misses these.
            "(a+\n)+",
            "(a+\u{2028})+",
            // Annex B syntax that JavaScript accepts without the `u` flag.
            "]",
            "{",
            "\\,\\#\\ ",
            "\\x00",
            "(?<n>a)\\k<n>",
            "(?<=a)b",
            "",
        ] {
            assert!(ArgsPattern::compile(source).is_ok(), "{source:?}");
        }
        assert!(compile("").matches(&object(json!({ "a": 1 }))));
    }

    #[test]
    fn negative_lookahead() {
        let pattern = compile("^(?!.*secret)");
        assert!(pattern.matches(&object(json!({ "q": "public" }))));
        assert!(!pattern.matches(&object(json!({ "q": "my secret" }))));
        assert!(!pattern.matches(&object(json!({ "nested": { "secret": true } }))));
    }

    #[test]
    fn nul_marker_matches_top_level_key_only() {
        let top = compile(r#"\x00"path":"/etc"#);
        assert!(top.matches(&object(json!({ "path": "/etc/passwd" }))));
        assert!(!top.matches(&object(json!({ "opts": { "path": "/etc/passwd" } }))));
        assert!(!top.matches(&object(json!({ "path": "/home/etc" }))));
        let anywhere = compile(r#""path":"/etc"#);
        assert!(anywhere.matches(&object(json!({ "opts": { "path": "/etc/passwd" } }))));
    }

    #[test]
    fn whole_arguments_match_exactly() {
        let exact = compile(r#"^\{\x00"a":1\x00,\x00"q":"abc"\x00\}$"#);
        assert!(exact.matches(&object(json!({ "q": "abc", "a": 1 }))));
        assert!(!exact.matches(&object(json!({ "q": "abc", "a": 1, "b": 2 }))));
        assert!(!exact.matches(&object(json!({ "q": "abcd", "a": 1 }))));
    }

    #[test]
    fn matching_works_on_utf16_code_units() {
        let emoji = object(json!({ "e": "😀" }));
        assert!(compile(r#""e":".."\x00"#).matches(&emoji));
        assert!(!compile(r#""e":"."\x00"#).matches(&emoji));
        assert!(compile(r#""e":"😀"\x00"#).matches(&emoji));
        // Without the `u` flag a class of an astral character holds its two halves.
        assert!(!compile(r#""e":"[😀]"\x00"#).matches(&emoji));
        // `.` stops at line terminators, and `^`/`$` anchor the whole text.
        assert!(compile("^.*$").matches(&object(json!({ "x": "a\u{0}b" }))));
        assert!(!compile("^.*$").matches(&object(json!({ "x": "a\u{2028}b" }))));
        assert!(!compile("A").matches(&object(json!({ "x": "a" }))));
    }

    #[test]
    fn pattern_is_cheap_to_share() {
        fn shareable<T: Send + Sync + Clone + 'static>() {}
        shareable::<ArgsPattern>();
        let pattern = compile("abc");
        let copy = pattern.clone();
        assert!(copy.matches(&object(json!({ "abc": 1 }))));
        assert_eq!(
            format!("{pattern:?}"),
            r#"ArgsPattern { source: "abc", .. }"#
        );
    }
}
