//! Claude Code's managed MCP policy, applied where switchboard reads Claude Code's own files
//! (`~/.claude.json`, a project's `.mcp.json`), so that they run the servers Claude Code would
//! run on this machine: `managed-mcp.json` (exclusive control: only its servers),
//! `managedMcpServers` (remote servers the organization provides to everyone), and the
//! `allowedMcpServers` / `deniedMcpServers` lists of the managed, user and project settings files.
//! A server the policy keeps out is listed as disabled, naming the rule and the file it is in.

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde_json::{Map, Value};
use switchboard_core::TransportSpec;

use super::claude_settings::{Kind, Scope, Settings, SettingsFile};
use super::entry::Context;
use super::{Config, DisabledServer, ServerConfig};

/// How a list entry picks servers.
#[derive(Debug)]
enum Matcher {
    /// `serverName`: the configured name, exactly.
    Name(String),
    /// `serverCommand`: a stdio server's command and arguments, exactly and in order.
    Command(Vec<String>),
    /// `serverUrl`: a remote server's URL, `*` matching any run of characters.
    Url(String),
}

/// One entry of `allowedMcpServers` or `deniedMcpServers`, with the file it is in.
struct Rule {
    matcher: Matcher,
    /// The entry as written, for messages.
    written: String,
    file: PathBuf,
}

impl Rule {
    fn matches(&self, server: &ServerConfig) -> bool {
        match (&self.matcher, &server.spec.transport) {
            (Matcher::Name(name), _) => name == server.name(),
            (Matcher::Command(want), TransportSpec::Stdio { command, args, .. }) => {
                // The command as the entry wrote it, as Claude Code compares it; or as run.
                let as_written = server.written_command.as_deref() == Some(want[0].as_str());
                want.len() == args.len() + 1
                    && (want[0] == *command || as_written)
                    && want[1..].iter().zip(args).all(|(a, b)| a == b)
            }
            (Matcher::Url(pattern), TransportSpec::Http { url, .. }) => url_matches(pattern, url),
            _ => false,
        }
    }
}

/// Apply the policy to the servers read from Claude Code's files.
pub fn apply(
    ctx: &Context<'_>,
    scope: &Scope,
    settings: &Settings,
    servers: &mut Vec<ServerConfig>,
    disabled: &mut Vec<DisabledServer>,
    warnings: &mut Vec<String>,
) {
    let managed_only = settings
        .of_kind(Kind::Managed)
        .any(|s| s.value.get("allowManagedMcpServersOnly") == Some(&Value::Bool(true)));
    let allowed: Option<Vec<Rule>> = {
        let sources: Vec<&SettingsFile> = settings
            .files
            .iter()
            .filter(|s| s.kind == Kind::Managed || !managed_only)
            .filter(|s| s.kind != Kind::Project || scope.trusted)
            .filter(|s| s.value.get("allowedMcpServers").is_some())
            .collect();
        (!sources.is_empty()).then(|| {
            sources
                .iter()
                .flat_map(|s| rules(ctx, s, "allowedMcpServers", warnings))
                .collect()
        })
    };
    let denied: Vec<Rule> = settings
        .files
        .iter()
        .flat_map(|s| rules(ctx, s, "deniedMcpServers", warnings))
        .collect();

    // The organization's own servers skip the allowlist: every provided server, and each
    // managed-mcp.json server written without `${VAR}`.
    let mut own: BTreeSet<String> = BTreeSet::new();
    let provided = provided_servers(ctx, &settings.files, warnings);
    let exclusive_file = settings.managed_dir.join("managed-mcp.json");
    ctx.input(&exclusive_file);
    let exclusive = exclusive_file.is_file();
    if exclusive {
        let reason = format!(
            "Claude Code's managed-mcp.json ({}) has exclusive control: only the servers it defines run",
            exclusive_file.display()
        );
        for s in servers.drain(..) {
            disabled.push(DisabledServer {
                name: s.name().to_string(),
                reason: reason.clone(),
                origin: s.origin.clone(),
            });
        }
        let read = std::fs::read_to_string(&exclusive_file)
            .map_err(|source| crate::error::HostError::ConfigRead {
                path: exclusive_file.clone(),
                source,
            })
            .and_then(|text| {
                Config::parse_part(&exclusive_file, &text, ctx.env).map(|config| (config, text))
            });
        match read {
            Ok((managed, text)) => {
                for input in &managed.inputs {
                    ctx.input(input);
                }
                // Which entries use `${VAR}`, as written.
                let raw: Option<Value> = serde_json::from_str(&super::jsonc::to_json(&text)).ok();
                for s in &managed.servers {
                    let written = raw
                        .as_ref()
                        .and_then(|r| r.get("mcpServers"))
                        .and_then(|m| m.get(s.name()));
                    if !written.is_some_and(uses_variables) {
                        own.insert(s.name().to_string());
                    }
                }
                let names: BTreeSet<String> = managed
                    .servers
                    .iter()
                    .map(|s| s.name().to_string())
                    .chain(managed.disabled.iter().map(|d| d.name.clone()))
                    .collect();
                disabled.retain(|d| !names.contains(&d.name));
                disabled.extend(managed.disabled);
                warnings.extend(managed.warnings);
                servers.extend(managed.servers.into_iter().map(|mut s| {
                    s.origin = Some(format!(
                        "Claude Code managed-mcp.json ({})",
                        exclusive_file.display()
                    ));
                    s
                }));
            }
            Err(e) => warnings.push(format!(
                "{e} (Claude Code's managed-mcp.json has exclusive control, so no server of this config runs until it is fixed)"
            )),
        }
    }
    for p in provided {
        let name = p.name().to_string();
        // A managed-mcp.json server of the same name wins; any other of the name gives way.
        if exclusive && servers.iter().any(|s| s.name() == name) {
            continue;
        }
        servers.retain(|s| s.name() != name);
        disabled.retain(|d| d.name != name);
        own.insert(name);
        servers.push(p);
    }

    let mut kept = Vec::with_capacity(servers.len());
    for s in servers.drain(..) {
        if let Some(rule) = denied.iter().find(|r| r.matches(&s)) {
            disabled.push(DisabledServer {
                name: s.name().to_string(),
                reason: format!(
                    "blocked by Claude Code's managed policy: deniedMcpServers entry {} in {}",
                    rule.written,
                    rule.file.display()
                ),
                origin: s.origin.clone(),
            });
            continue;
        }
        if let Some(allowed) = &allowed
            && !own.contains(s.name())
            && let Some(why) = not_allowed(allowed, &s)
        {
            let files: BTreeSet<String> = allowed
                .iter()
                .map(|r| r.file.display().to_string())
                .collect();
            disabled.push(DisabledServer {
                name: s.name().to_string(),
                reason: format!(
                    "not allowed by Claude Code's managed policy: allowedMcpServers{} has {why}",
                    if files.is_empty() {
                        " is empty and".to_string()
                    } else {
                        format!(" ({})", files.into_iter().collect::<Vec<_>>().join(", "))
                    }
                ),
                origin: s.origin.clone(),
            });
            continue;
        }
        kept.push(s);
    }
    *servers = kept;
}

/// Why `server` fails the allowlist, or `None` when it passes. A stdio server must match a
/// `serverCommand` entry and a remote one a `serverUrl` entry; a `serverName` entry counts only
/// when the list has no entry of that stricter kind.
fn not_allowed(allowed: &[Rule], server: &ServerConfig) -> Option<String> {
    let (strict, kind, what) = match &server.spec.transport {
        TransportSpec::Stdio { command, args, .. } => {
            let mut all = vec![command.clone()];
            all.extend(args.iter().cloned());
            (
                allowed
                    .iter()
                    .any(|r| matches!(r.matcher, Matcher::Command(_))),
                "serverCommand",
                serde_json::to_string(&all).unwrap_or_default(),
            )
        }
        TransportSpec::Http { url, .. } => (
            allowed.iter().any(|r| matches!(r.matcher, Matcher::Url(_))),
            "serverUrl",
            url.clone(),
        ),
    };
    let pass = allowed.iter().any(|r| match r.matcher {
        Matcher::Name(_) => !strict && r.matches(server),
        _ => r.matches(server),
    });
    if pass {
        None
    } else if strict {
        Some(format!("no {kind} entry matching {what}"))
    } else {
        Some(format!(
            "no {kind} entry, and no serverName entry {:?}",
            server.name()
        ))
    }
}

/// The entries of list `key` in one settings file. A bad entry is a warning; an allowlist entry
/// whose `${VAR}` cannot be expanded is left out (it would allow something the administrator
/// did not write); a denylist entry's unset variable in a URL matches anything there.
fn rules(
    ctx: &Context<'_>,
    file: &SettingsFile,
    key: &str,
    warnings: &mut Vec<String>,
) -> Vec<Rule> {
    let Some(list) = file.value.get(key) else {
        return Vec::new();
    };
    let deny = key == "deniedMcpServers";
    let warn = |warnings: &mut Vec<String>, entry: &Value, why: &str| {
        warnings.push(format!(
            "{}: {key} entry {} left out: {why}",
            file.path.display(),
            switchboard_core::clip(&entry.to_string(), 200)
        ));
    };
    let Some(list) = list.as_array() else {
        warnings.push(format!(
            "{}: {key} must be a list of {{\"serverName\"}}, {{\"serverCommand\"}} or {{\"serverUrl\"}} entries",
            file.path.display()
        ));
        return Vec::new();
    };
    let expand = |s: &str| super::expand::expand(s, ctx.env);
    let mut out = Vec::new();
    for entry in list {
        let Some(obj) = entry.as_object().filter(|o| o.len() == 1) else {
            warn(
                warnings,
                entry,
                "each entry is an object with one key: serverName, serverCommand or serverUrl",
            );
            continue;
        };
        let matcher = match obj.iter().next() {
            Some((k, Value::String(name))) if k == "serverName" && !name.is_empty() => {
                Matcher::Name(name.clone())
            }
            Some((k, Value::Array(parts))) if k == "serverCommand" && !parts.is_empty() => {
                let Some(parts) = parts
                    .iter()
                    .map(|p| p.as_str())
                    .collect::<Option<Vec<&str>>>()
                else {
                    warn(warnings, entry, "serverCommand must be a list of strings");
                    continue;
                };
                match parts
                    .iter()
                    .map(|p| expand(p))
                    .collect::<Result<Vec<_>, _>>()
                {
                    Ok(parts) => Matcher::Command(parts),
                    Err(e) if deny => {
                        let _ = e;
                        Matcher::Command(parts.iter().map(|p| p.to_string()).collect())
                    }
                    Err(e) => {
                        warn(warnings, entry, &e.to_string());
                        continue;
                    }
                }
            }
            Some((k, Value::String(url))) if k == "serverUrl" && !url.is_empty() => {
                match expand(url) {
                    Ok(url) => Matcher::Url(url),
                    Err(_) if deny => Matcher::Url(widen(url)),
                    Err(e) => {
                        warn(warnings, entry, &e.to_string());
                        continue;
                    }
                }
            }
            _ => {
                warn(
                    warnings,
                    entry,
                    "expected serverName (a string), serverCommand (a list of strings) or serverUrl (a string)",
                );
                continue;
            }
        };
        out.push(Rule {
            matcher,
            written: entry.to_string(),
            file: file.path.clone(),
        });
    }
    out
}

/// A URL pattern with each `${...}` read as `*`.
fn widen(url: &str) -> String {
    let mut out = String::new();
    let mut rest = url;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        match rest[start..].find('}') {
            Some(end) => {
                out.push('*');
                rest = &rest[start + end + 1..];
            }
            None => {
                rest = &rest[start..];
                break;
            }
        }
    }
    out.push_str(rest);
    out
}

/// `managedMcpServers` of the managed settings files: remote servers only, each entry checked as
/// Claude Code checks it (`type` http, streamable-http or sse; an `https://` URL; no command,
/// args, env or headersHelper; no `${VAR}`; a name of letters, digits, `-` and `_`). A later
/// file's entry replaces an earlier one of the same name; an entry that fails a check is a
/// warning and the others still run.
fn provided_servers(
    ctx: &Context<'_>,
    settings: &[SettingsFile],
    warnings: &mut Vec<String>,
) -> Vec<ServerConfig> {
    let mut chosen: Map<String, Value> = Map::new();
    let mut from: std::collections::BTreeMap<String, PathBuf> = Default::default();
    for file in settings {
        let Some(value) = file.value.get("managedMcpServers") else {
            continue;
        };
        let place = file.path.display();
        if file.kind != Kind::Managed {
            warnings.push(format!(
                "{place}: managedMcpServers is read only from managed settings; ignored here"
            ));
            continue;
        }
        let Some(map) = value.as_object() else {
            warnings.push(format!(
                "{place}: managedMcpServers must be an object keyed by server name (Claude Desktop's list form is not Claude Code's); ignored"
            ));
            continue;
        };
        for (name, entry) in map {
            match provided_entry_problem(name, entry) {
                Some(why) => warnings.push(format!(
                    "{place}: managedMcpServers server {name:?} left out: {why}"
                )),
                None => {
                    chosen.insert(name.clone(), entry.clone());
                    from.insert(name.clone(), file.path.clone());
                }
            }
        }
    }
    let mut out = Vec::new();
    for (name, entry) in chosen {
        let Some(path) = from.get(&name) else {
            continue;
        };
        let mut one = Map::new();
        one.insert(name.clone(), entry);
        let text = serde_json::json!({ "mcpServers": one }).to_string();
        match Config::parse_with(path, &text, ctx.env, None, false) {
            Ok(config) => {
                for d in config.disabled {
                    warnings.push(format!(
                        "managedMcpServers server {:?} left out: {}",
                        d.name, d.reason
                    ));
                }
                out.extend(config.servers.into_iter().map(|mut s| {
                    s.origin = Some(format!(
                        "Claude Code managedMcpServers ({})",
                        path.display()
                    ));
                    s
                }));
            }
            Err(e) => warnings.push(format!("managedMcpServers server {name:?} left out: {e}")),
        }
    }
    out
}

/// What keeps a `managedMcpServers` entry out, if anything.
fn provided_entry_problem(name: &str, entry: &Value) -> Option<&'static str> {
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Some("a provided server's name holds only letters, digits, - and _");
    }
    let Some(obj) = entry.as_object() else {
        return Some("not an object");
    };
    if !matches!(
        obj.get("type").and_then(Value::as_str),
        Some("http" | "streamable-http" | "sse")
    ) {
        return Some("type must be http, streamable-http or sse");
    }
    if ["command", "args", "env", "headersHelper"]
        .iter()
        .any(|k| obj.contains_key(*k))
    {
        return Some("a provided server is remote only: no command, args, env or headersHelper");
    }
    if !obj
        .get("url")
        .and_then(Value::as_str)
        .is_some_and(|u| u.to_ascii_lowercase().starts_with("https://"))
    {
        return Some("url must be an https:// URL");
    }
    if uses_variables(entry) {
        return Some("values are literal here: no ${VAR}");
    }
    if has_hidden_characters(entry) {
        return Some("a key or value holds control or invisible formatting characters");
    }
    None
}

/// Whether any string in `value` (keys included) holds a `${`.
fn uses_variables(value: &Value) -> bool {
    any_string(value, &|s| s.contains("${"))
}

fn has_hidden_characters(value: &Value) -> bool {
    any_string(value, &|s| {
        s.chars().any(|c| {
            c.is_control()
                || matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{2064}' | '\u{feff}')
        })
    })
}

fn any_string(value: &Value, test: &dyn Fn(&str) -> bool) -> bool {
    match value {
        Value::String(s) => test(s),
        Value::Array(items) => items.iter().any(|v| any_string(v, test)),
        Value::Object(map) => map.iter().any(|(k, v)| test(k) || any_string(v, test)),
        _ => false,
    }
}

/// A URL cut into what a `serverUrl` pattern compares: scheme and authority lowercased, the
/// host's trailing dot and a default port dropped; the path (with query) as written.
struct UrlParts {
    scheme: String,
    authority: String,
    path: String,
}

fn url_parts(url: &str) -> Option<UrlParts> {
    let (scheme, rest) = url.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    let (authority, path) = match rest.find(['/', '?', '#']) {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    };
    let authority = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host)
        .to_ascii_lowercase();
    let (host, port) = match authority.rsplit_once(':') {
        Some((h, p)) if !p.is_empty() && p.chars().all(|c| c.is_ascii_digit() || c == '*') => {
            (h.to_string(), Some(p.to_string()))
        }
        _ => (authority.clone(), None),
    };
    let host = host.trim_end_matches('.');
    let default = matches!(
        (scheme.as_str(), port.as_deref()),
        ("https", Some("443")) | ("http", Some("80"))
    );
    let authority = match port {
        Some(p) if !default => format!("{host}:{p}"),
        _ => host.to_string(),
    };
    Some(UrlParts {
        scheme,
        authority,
        path: path.to_string(),
    })
}

/// Whether `url` matches a `serverUrl` pattern: `*` anywhere, the host compared without case,
/// and a pattern with no path matching any path.
fn url_matches(pattern: &str, url: &str) -> bool {
    let (Some(p), Some(u)) = (url_parts(pattern), url_parts(url)) else {
        return false;
    };
    let path = if u.path.is_empty() { "/" } else { &u.path };
    wildcard(&p.scheme, &u.scheme)
        && wildcard(&p.authority, &u.authority)
        && (p.path.is_empty() || wildcard(&p.path, path))
}

/// Whether `text` matches `pattern`, where `*` stands for any run of characters.
fn wildcard(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if pi < p.len() && p[pi] == t[ti] {
            pi += 1;
            ti += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

#[cfg(test)]
mod tests {
    use super::{url_matches, widen, wildcard};

    #[test]
    fn url_patterns_match_as_claude_code_documents_them() {
        let cases = [
            (
                "https://mcp.example.com/*",
                "https://mcp.example.com/api",
                true,
            ),
            (
                "https://mcp.example.com",
                "https://mcp.example.com/any/path",
                true,
            ),
            (
                "https://*.example.com/*",
                "https://api.internal.example.com/mcp",
                true,
            ),
            ("https://*.example.com/*", "https://other.com/mcp", false),
            ("http://localhost:*/*", "http://localhost:3000/mcp", true),
            ("http://localhost:*/*", "https://localhost:3000/mcp", false),
            ("*://mcp.example.com/*", "http://mcp.example.com/x", true),
            (
                "https://Mcp.Example.com/*",
                "https://mcp.example.com./api",
                true,
            ),
            (
                "https://mcp.example.com/API/*",
                "https://mcp.example.com/api/x",
                false,
            ),
            (
                "https://mcp.example.com/*",
                "https://mcp.example.com:443/x",
                true,
            ),
            (
                "https://mcp.example.com/*",
                "https://mcp.example.com:8443/x",
                false,
            ),
            ("https://mcp.example.com/*", "https://mcp.example.com", true),
            (
                "https://staging.example.com/*",
                "https://mcp.example.com/api",
                false,
            ),
        ];
        for (pattern, url, want) in cases {
            assert_eq!(url_matches(pattern, url), want, "{pattern} vs {url}");
        }
    }

    #[test]
    fn the_wildcard_matches_any_run_and_nothing_else() {
        assert!(wildcard("a*c", "abbbc"));
        assert!(wildcard("*", ""));
        assert!(wildcard("a**", "a"));
        assert!(!wildcard("a*c", "abcd"));
        assert!(!wildcard("abc", "ab"));
        assert!(wildcard("*b*", "aaabaaa"));
    }

    proptest::proptest! {
        #[test]
        fn url_matching_takes_any_text(
            pattern in "[a-z*:/.\\[\\]@$\\{\\}é]{0,30}",
            scheme in "\\PC{0,8}",
            rest in "\\PC{0,30}",
        ) {
            let url = format!("{scheme}://{rest}");
            let _ = url_matches(&pattern, &url);
            let _ = widen(&pattern);
            // A pattern of wildcards alone matches every URL.
            proptest::prop_assert!(url_matches("*://*", &url));
        }
    }

    #[test]
    fn an_unset_variable_in_a_denied_url_matches_anything_there() {
        assert_eq!(widen("https://${HOST}/mcp"), "https://*/mcp");
        assert_eq!(widen("https://a/${X:-b}/c${Y}"), "https://a/*/c*");
        assert_eq!(widen("https://a/${open"), "https://a/${open");
    }
}
