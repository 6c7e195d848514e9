//! Secrets out of URLs before they are logged or put in a message: the userinfo
//! (`user:pass@`) and the values of query (and fragment) parameters whose names look secret
//! (`token`, `api_key`, `X-Amz-Signature`, `code`, ...). Everything else is kept, so the URL
//! still says which server it was. Pure string work: no URL parser is needed to find these
//! parts, and a string that is not a URL comes back unchanged.

/// Words that make a parameter name secret, compared with each word of the name
/// (`access_token` → access, token; `apiKey` → api, key; `X-Amz-Signature` → x, amz,
/// signature).
const SECRET_WORDS: &[&str] = &[
    "token",
    "key",
    "apikey",
    "secret",
    "password",
    "passwd",
    "pwd",
    "sig",
    "signature",
    "auth",
    "authorization",
    "code",
    "credential",
    "credentials",
    "session",
    "sessionid",
    "sessid",
    "jwt",
    "bearer",
];

/// Endings that make a whole word secret too, for all-lowercase compounds that cannot be split
/// (`accesstoken`, `clientsecret`, `privatekey`, `dbpassword`).
const SECRET_ENDINGS: &[&str] = &[
    "token",
    "secret",
    "key",
    "password",
    "passwd",
    "pwd",
    "signature",
];

/// Everyday words with a secret ending that are not secrets.
const NOT_SECRET: &[&str] = &[
    "monkey", "donkey", "turkey", "hockey", "jockey", "whiskey", "lackey", "hotkey",
];

/// What a removed secret is replaced with.
pub const REDACTED: &str = "***";

/// `url` with its userinfo replaced by `***` and the values of secret-looking query and
/// fragment parameters replaced by `***`.
///
/// ```
/// use switchboard_core::redact_url;
/// assert_eq!(
///     redact_url("https://me:hunter2@mcp.example.com/sse?api_key=abc&limit=5"),
///     "https://***@mcp.example.com/sse?api_key=***&limit=5"
/// );
/// ```
pub fn redact_url(url: &str) -> String {
    // The userinfo first, on the whole URL: an unencoded `/`, `?` or `#` in a password must
    // not hide it (or leave its tail in the path or query).
    let url = &match userinfo(url) {
        Some((start, at)) => format!("{}{REDACTED}{}", &url[..start], &url[at..]),
        None => url.to_string(),
    };
    let (head, fragment) = match url.split_once('#') {
        Some((h, f)) => (h, Some(f)),
        None => (url.as_str(), None),
    };
    let (base, query) = match head.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (head, None),
    };
    let mut out = String::with_capacity(url.len());
    out.push_str(base);
    if let Some(q) = query {
        out.push('?');
        out.push_str(&redact_params(q));
    }
    if let Some(f) = fragment {
        out.push('#');
        // OAuth's implicit flow puts `access_token=...` in the fragment.
        if f.contains('=') {
            out.push_str(&redact_params(f));
        } else {
            out.push_str(f);
        }
    }
    out
}

/// `text` with every `scheme://...` URL in it passed through [`redact_url`] (for error
/// messages from HTTP libraries, which quote the URL they failed on).
pub fn redact_urls_in(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        // The scheme: letters, digits, `+`, `-`, `.` before `://`.
        let scheme_len = rest[..at]
            .chars()
            .rev()
            .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
            .count();
        let start = at - scheme_len;
        let end = at
            + 3
            + rest[at + 3..]
                .find(|c: char| {
                    c.is_whitespace() || c.is_control() || matches!(c, '"' | '\'' | '<' | '>' | '`')
                })
                .unwrap_or(rest.len() - at - 3);
        // Closing punctuation that wraps the URL in prose is not part of it.
        let mut url_end = end;
        while url_end > at + 3 {
            let last = rest[..url_end].chars().next_back();
            match last {
                Some(')') if !rest[start..url_end].contains('(') => url_end -= 1,
                Some('.' | ',' | ';' | ':' | ']' | '}') => url_end -= 1,
                _ => break,
            }
        }
        out.push_str(&rest[..start]);
        if scheme_len == 0 {
            out.push_str(&rest[start..url_end]);
        } else {
            out.push_str(&redact_url(&rest[start..url_end]));
        }
        rest = &rest[url_end..];
    }
    out.push_str(rest);
    out
}

/// Where the userinfo of `scheme://user:pass@host/...` is: (its start, the `@` that ends it).
///
/// The authority normally ends at the first `/`, `?` or `#`, and the userinfo at the last `@`
/// before that. A password with an unencoded `/`, `?` or `#` (`https://u:p/ss@host/path`)
/// ends that search early, leaving `u:p` which looks like a host with a port that is not a
/// number. Then the userinfo runs on to the first `@` after it, and on to the last `@` before
/// the first `/`, `?` or `#` that follows that one (`u:p/s@s@host/path` → `u:p/s@s`). A
/// `host:port` (a number) or `[v6]` authority is left alone: `https://h:8443/a@b` keeps its
/// path.
fn userinfo(url: &str) -> Option<(usize, usize)> {
    let start = url.find("://")? + 3;
    let is_delim = |c: char| matches!(c, '/' | '?' | '#');
    let rest = &url[start..];
    let end = rest.find(is_delim).unwrap_or(rest.len());
    let authority = &rest[..end];
    if let Some(at) = authority.rfind('@') {
        return Some((start, start + at));
    }
    if authority.starts_with('[') {
        return None;
    }
    let (_, port) = authority.rsplit_once(':')?;
    if !port.is_empty() && port.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    // A cut password: `u:p` then `/ss@host...`.
    let first_at = end + rest[end..].find('@')?;
    let next_end = first_at
        + rest[first_at..]
            .find(is_delim)
            .unwrap_or(rest.len() - first_at);
    let at = rest[..next_end].rfind('@')?;
    Some((start, start + at))
}

fn redact_params(query: &str) -> String {
    query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((name, value)) if !value.is_empty() && is_secret_name(name) => {
                format!("{name}={REDACTED}")
            }
            _ => pair.to_string(),
        })
        .collect::<Vec<_>>()
        .join("&")
}

/// A parameter name looks secret when one of its words (split at non-alphanumerics and at
/// lower→upper case changes) is a [`SECRET_WORDS`] word or ends with a [`SECRET_ENDINGS`]
/// ending (`accesstoken`, `clientsecret`), except everyday words such as `monkey`.
pub fn is_secret_name(name: &str) -> bool {
    let decoded = name.replace("%5F", "_").replace("%5f", "_");
    name_words(&decoded).iter().any(|w| {
        SECRET_WORDS.contains(&w.as_str())
            || (SECRET_ENDINGS.iter().any(|e| w.ends_with(e)) && !NOT_SECRET.contains(&w.as_str()))
    })
}

/// The lower-case words of a name: split at anything not a letter or digit and at
/// lower→upper case changes (`X-Amz-Signature` → x, amz, signature; `apiKey` → api, key).
fn name_words(name: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    let mut word = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if !c.is_ascii_alphanumeric() {
            if !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
            prev_lower = false;
            continue;
        }
        if c.is_ascii_uppercase() && prev_lower && !word.is_empty() {
            words.push(std::mem::take(&mut word));
        }
        prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        word.push(c.to_ascii_lowercase());
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

/// Whether a tool argument's name says its value is a secret (`password`, `api_key`,
/// `accessToken`, `client_secret`, `Authorization`, `private_key`). Narrower than
/// [`is_secret_name`]: in tool arguments `key`, `code` and `session` are everyday data (a cache
/// key, source code, a session to resume), so only a key that is an API, access, private,
/// secret or signing key counts.
pub fn is_secret_argument(name: &str) -> bool {
    const WORDS: &[&str] = &[
        "token",
        "apikey",
        "secret",
        "password",
        "passwd",
        "pwd",
        "passphrase",
        "authorization",
        "credential",
        "credentials",
        "bearer",
        "jwt",
        "cookie",
    ];
    const KEY_KINDS: &[&str] = &["api", "access", "private", "secret", "signing", "auth"];
    // All-lowercase compounds: `accesstoken`, `clientsecret`, `dbpassword`, `privatekey`.
    const ENDINGS: &[&str] = &["token", "secret", "password", "passwd"];
    let words = name_words(name);
    words.iter().enumerate().any(|(i, w)| {
        WORDS.contains(&w.as_str())
            || ENDINGS.iter().any(|e| w.ends_with(e))
            || w.strip_suffix("key")
                .is_some_and(|kind| KEY_KINDS.contains(&kind))
            || (w == "key" && i > 0 && KEY_KINDS.contains(&words[i - 1].as_str()))
    })
}

/// `value` with the values of secret-looking arguments ([`is_secret_argument`]) replaced by
/// [`REDACTED`], at any depth; and strings anywhere cleaned of URL secrets ([`redact_urls_in`]).
pub fn redact_arguments(value: &serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    let v = if is_secret_argument(k) && !v.is_null() {
                        Value::String(REDACTED.into())
                    } else {
                        redact_arguments(v)
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(redact_arguments).collect()),
        Value::String(s) => Value::String(redact_urls_in(s)),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_arguments_are_told_from_everyday_ones() {
        for name in [
            "password",
            "api_key",
            "apiKey",
            "accessToken",
            "access_token",
            "client_secret",
            "Authorization",
            "private_key",
            "privatekey",
            "AWS_SECRET_ACCESS_KEY",
            "dbpassword",
            "cookie",
        ] {
            assert!(is_secret_argument(name), "{name}");
        }
        for name in [
            "key",
            "cache_key",
            "sortKey",
            "code",
            "session_id",
            "query",
            "path",
            "monkey",
            "tokens_max",
            "max_tokens",
            "hotkey",
        ] {
            let secret = is_secret_argument(name);
            // `tokens`/`max_tokens` count model tokens, not credentials.
            assert!(!secret, "{name}");
        }
    }

    #[test]
    fn arguments_keep_everything_but_their_secrets() {
        let args = serde_json::json!({
            "query": "open issues",
            "api_key": "sk-123",
            "auth": {"password": "hunter2", "user": "me"},
            "urls": ["https://x.example/a?token=abc&page=2"],
            "token": null
        });
        assert_eq!(
            redact_arguments(&args),
            serde_json::json!({
                "query": "open issues",
                "api_key": "***",
                "auth": {"password": "***", "user": "me"},
                "urls": ["https://x.example/a?token=***&page=2"],
                "token": null
            })
        );
    }

    #[test]
    fn userinfo_and_secret_parameters_are_redacted() {
        for (url, want) in [
            (
                "https://user:pa%40ss@example.com:8443/mcp",
                "https://***@example.com:8443/mcp",
            ),
            ("https://token@example.com", "https://***@example.com"),
            (
                "https://example.com/mcp?token=abc&limit=5",
                "https://example.com/mcp?token=***&limit=5",
            ),
            (
                "https://x.example/v1?key=AIza123&alt=sse",
                "https://x.example/v1?key=***&alt=sse",
            ),
            (
                "https://b.s3.amazonaws.com/o?X-Amz-Signature=f00&X-Amz-Credential=me&X-Amz-Date=1",
                "https://b.s3.amazonaws.com/o?X-Amz-Signature=***&X-Amz-Credential=***&X-Amz-Date=1",
            ),
            (
                "http://127.0.0.1:9/cb?code=xyz&state=s1",
                "http://127.0.0.1:9/cb?code=***&state=s1",
            ),
            (
                "https://e.com/?apiKey=1&api_key=2&apikey=3&access_token=4&client_secret=5&password=6&sig=7&auth=8",
                "https://e.com/?apiKey=***&api_key=***&apikey=***&access_token=***&client_secret=***&password=***&sig=***&auth=***",
            ),
            (
                "https://e.com/cb#access_token=t&token_type=bearer&expires_in=3600",
                "https://e.com/cb#access_token=***&token_type=***&expires_in=3600",
            ),
            (
                "https://e.com/docs#section-2",
                "https://e.com/docs#section-2",
            ),
        ] {
            assert_eq!(redact_url(url), want, "{url}");
        }
    }

    #[test]
    fn harmless_urls_and_non_urls_are_unchanged() {
        for s in [
            "https://api.anthropic.com/v1/messages",
            "https://e.com/search?q=keyboard&author=me&page=2",
            "https://e.com/path/with@sign/in/path",
            "not a url",
            "",
            "https://e.com/?token=",
            "https://e.com/?flag",
        ] {
            assert_eq!(redact_url(s), s);
        }
    }

    #[test]
    fn names_are_split_into_words() {
        for name in [
            "token",
            "refreshToken",
            "X-Amz-Signature",
            "api%5Fkey",
            "AUTH",
        ] {
            assert!(is_secret_name(name), "{name}");
        }
        for name in ["keyboard", "author", "monkey", "q", "tokens_used", "page"] {
            assert!(!is_secret_name(name), "{name}");
        }
    }

    #[test]
    fn all_lowercase_compounds_are_secret() {
        for name in [
            "accesstoken",
            "apitoken",
            "authtoken",
            "sessionid",
            "secretkey",
            "privatekey",
            "clientsecret",
            "refreshtoken",
            "idtoken",
            "jwt",
            "bearer",
            "sig",
            "dbpassword",
            "adminpwd",
            "userpasswd",
            "xsignature",
            "ACCESSTOKEN",
        ] {
            assert!(is_secret_name(name), "{name}");
        }
        for name in [
            "tokens",
            "tokenizer",
            "keys_count",
            "donkey",
            "hockey",
            "session_count_x",
            "signal",
            "design",
        ] {
            let secret = is_secret_name(name);
            // `session_count_x` has the word `session`: secret by the word list.
            assert_eq!(secret, name == "session_count_x", "{name}");
        }
        assert_eq!(
            redact_url("https://e.com/?accesstoken=a&clientsecret=b&sessionid=c&page=2"),
            "https://e.com/?accesstoken=***&clientsecret=***&sessionid=***&page=2"
        );
    }

    #[test]
    fn a_password_with_an_unencoded_slash_question_mark_or_hash_is_redacted_whole() {
        for (url, want) in [
            ("https://u:p/ss@host/path", "https://***@host/path"),
            ("https://u:p/ss@host", "https://***@host"),
            ("https://u:p?ss@host/path?x=1", "https://***@host/path?x=1"),
            ("https://u:p#ss@host/path", "https://***@host/path"),
            ("https://u:p/s@s@host/path", "https://***@host/path"),
            (
                "https://u:p/ss@host/p?next=a@b&token=t",
                "https://***@host/p?next=a@b&token=***",
            ),
            ("https://u:p@ss@host/path", "https://***@host/path"),
            ("https://u:/ss@host/x", "https://***@host/x"),
        ] {
            assert_eq!(redact_url(url), want, "{url}");
            assert!(
                !redact_urls_in(&format!("failed: {url} (x)")).contains("ss"),
                "{url}"
            );
        }
        // A port, an IPv6 host or a path with `@` is not userinfo.
        for url in [
            "https://h:8443/a@b",
            "http://[::1]/a@b",
            "http://[::1]:80/a@b",
            "https://h/a:b/c@d",
        ] {
            assert_eq!(redact_url(url), url);
        }
    }

    #[test]
    fn urls_inside_messages_are_redacted_and_the_rest_kept() {
        assert_eq!(
            redact_urls_in(
                "error sending request for url (https://u:p@h.example/mcp?token=abc): connection refused"
            ),
            "error sending request for url (https://***@h.example/mcp?token=***): connection refused"
        );
        assert_eq!(
            redact_urls_in("see https://h.example/?key=1, then http://u:p@x.example."),
            "see https://h.example/?key=***, then http://***@x.example."
        );
        assert_eq!(
            redact_urls_in("no url here: just text"),
            "no url here: just text"
        );
        assert_eq!(redact_urls_in("odd ://thing"), "odd ://thing");
        // A terminal colour code after the URL is not part of it.
        assert_eq!(
            redact_urls_in("url=https://h/?key=k\x1b[0m next"),
            "url=https://h/?key=***\x1b[0m next"
        );
        // The Debug form of an HTTP client's error.
        assert_eq!(
            redact_urls_in(r#"reqwest::Error { url: "http://h:9/mcp?token=t&x=1", source: .. }"#),
            r#"reqwest::Error { url: "http://h:9/mcp?token=***&x=1", source: .. }"#
        );
        // Multi-byte text around a URL survives.
        assert_eq!(
            redact_urls_in("échec: \"https://h/?token=é\" — fin"),
            "échec: \"https://h/?token=***\" — fin"
        );
    }
}
