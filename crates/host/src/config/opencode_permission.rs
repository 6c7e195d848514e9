//! OpenCode's rules over tool names, for the MCP tools it names `SERVER_TOOL`: `"tools":
//! {"GLOB": false}` turns tools off (`true` back on), and `"permission": {"GLOB": "allow" |
//! "ask" | "deny"}` says whether a call runs, asks or is refused. As in OpenCode the last
//! matching entry wins (`permission` after `tools`), and a pattern's `*` is any characters and
//! `?` one, every other character itself.
//!
//! A `permission` value may be an object of patterns over a call's input (`"bash": {"git *":
//! "allow"}`); OpenCode asks about an MCP tool's call with the input `*`, so of such an object
//! only the entries whose pattern matches the text `*` (`"*"`, `"**"`, `"?"`) hold for MCP tools,
//! the last of them winning, exactly as OpenCode decides.

use std::path::Path;

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::Value;
use switchboard_core::host_rules::wildcard;
use switchboard_core::{HostRules, Verdict};

use super::ServerConfig;

/// Give each server the file's rules; a value OpenCode would not take is a warning.
pub fn apply(path: &Path, text: &str, servers: &mut [ServerConfig], warnings: &mut Vec<String>) {
    let file = path.display().to_string();
    let read: Rules = match serde_json::from_str(text) {
        Ok(r) => r,
        Err(e) => {
            warnings.push(format!(
                "{file}: OpenCode's tools and permission settings not read: {e}"
            ));
            return;
        }
    };
    // (pattern, verdict, rule), in the file's order
    let mut rules: Vec<(String, Verdict, String)> = Vec::new();
    for (key, value) in read.tools.map(|o| o.0).unwrap_or_default() {
        let verdict = match value {
            Setting::One(Value::Bool(false)) => Verdict::Deny,
            Setting::One(Value::Bool(true)) => Verdict::Enable,
            other => {
                warnings.push(format!(
                    "{file}: OpenCode's tools.{key}: not applied: {other} is not true or false"
                ));
                continue;
            }
        };
        rules.push((
            key.clone(),
            verdict,
            format!(
                "OpenCode's \"tools\": {{{key:?}: {}}}",
                verdict == Verdict::Enable
            ),
        ));
    }
    for (key, value) in read.permission.map(|o| o.0).unwrap_or_default() {
        // OpenCode's guards that are not tools.
        if matches!(key.as_str(), "doom_loop" | "external_directory") {
            continue;
        }
        let word = |v: &Value| match v.as_str() {
            Some("allow") => Some(Verdict::Allow),
            Some("ask") => Some(Verdict::Ask),
            Some("deny") => Some(Verdict::Deny),
            _ => None,
        };
        match value {
            Setting::One(v) => match word(&v) {
                Some(verdict) => rules.push((
                    key.clone(),
                    verdict,
                    format!("OpenCode's \"permission\": {{{key:?}: {v}}}"),
                )),
                None => warnings.push(format!(
                    "{file}: OpenCode's permission.{key}: not applied: {v} is not \"allow\", \"ask\" or \"deny\""
                )),
            },
            Setting::Entries(entries) => {
                for (input, v) in entries {
                    // The input OpenCode asks about for an MCP tool is `*`.
                    if !matches_star(&input) {
                        continue;
                    }
                    match word(&v) {
                        Some(verdict) => rules.push((
                            key.clone(),
                            verdict,
                            format!("OpenCode's \"permission\": {{{key:?}: {{{input:?}: {v}}}}}"),
                        )),
                        None => warnings.push(format!(
                            "{file}: OpenCode's permission.{key}[{input:?}]: not applied: {v} is not \"allow\", \"ask\" or \"deny\""
                        )),
                    }
                }
            }
        }
    }
    if rules.is_empty() {
        return;
    }
    for server in servers.iter_mut() {
        let mut own = HostRules::named(server.name(), "", "_");
        // The last match wins in OpenCode; the first wins here.
        for (pattern, verdict, rule) in rules.iter().rev() {
            if let Err(e) = own.push(&wildcard(pattern), *verdict, rule.clone(), file.clone()) {
                warnings.push(format!("{file}: {rule}: not applied: {e}"));
            }
        }
        server.filter = std::mem::take(&mut server.filter).with_rules(own);
    }
}

/// Whether OpenCode's pattern `input` matches the text `*`, the input of an MCP tool's call: as
/// in OpenCode, a pattern ending in ` *` also matches without that part.
fn matches_star(input: &str) -> bool {
    let matches =
        |p: &str| globset::Glob::new(&wildcard(p)).is_ok_and(|g| g.compile_matcher().is_match("*"));
    matches(input) || input.strip_suffix(" *").is_some_and(matches)
}

/// The two settings, each an object read in the file's order (or, for `permission`, one word
/// for every tool).
#[derive(serde::Deserialize)]
struct Rules {
    #[serde(default)]
    tools: Option<Ordered>,
    #[serde(default)]
    permission: Option<Ordered>,
}

/// An object's entries in the order they are written.
struct Ordered(Vec<(String, Setting)>);

/// One entry's value: an object of patterns, read in order, or any other value.
enum Setting {
    Entries(Vec<(String, Value)>),
    One(Value),
}

impl std::fmt::Display for Setting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Setting::One(v) => write!(f, "{v}"),
            Setting::Entries(_) => f.write_str("an object"),
        }
    }
}

impl<'de> Deserialize<'de> for Ordered {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Entries;
        impl<'de> Visitor<'de> for Entries {
            type Value = Ordered;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object, or one of \"allow\", \"ask\", \"deny\"")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Ordered, A::Error> {
                let mut out = Vec::new();
                while let Some(entry) = map.next_entry::<String, Setting>()? {
                    out.push(entry);
                }
                Ok(Ordered(out))
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Ordered, E> {
                Ok(Ordered(vec![(
                    "*".into(),
                    Setting::One(Value::String(s.into())),
                )]))
            }
        }
        d.deserialize_any(Entries)
    }
}

impl<'de> Deserialize<'de> for Setting {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Any;
        impl<'de> Visitor<'de> for Any {
            type Value = Setting;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Setting, A::Error> {
                let mut out = Vec::new();
                while let Some(entry) = map.next_entry::<String, Value>()? {
                    out.push(entry);
                }
                Ok(Setting::Entries(out))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, seq: A) -> Result<Setting, A::Error> {
                Value::deserialize(serde::de::value::SeqAccessDeserializer::new(seq))
                    .map(Setting::One)
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Setting, E> {
                Ok(Setting::One(Value::String(s.into())))
            }
            fn visit_bool<E: serde::de::Error>(self, b: bool) -> Result<Setting, E> {
                Ok(Setting::One(Value::Bool(b)))
            }
            fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<Setting, E> {
                Ok(Setting::One(n.into()))
            }
            fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<Setting, E> {
                Ok(Setting::One(n.into()))
            }
            fn visit_f64<E: serde::de::Error>(self, n: f64) -> Result<Setting, E> {
                Ok(Setting::One(n.into()))
            }
            fn visit_unit<E: serde::de::Error>(self) -> Result<Setting, E> {
                Ok(Setting::One(Value::Null))
            }
        }
        d.deserialize_any(Any)
    }
}
