//! OpenCode's rules over tool names, for the MCP tools it names `SERVER_TOOL`: `"tools":
//! {"GLOB": false}` turns tools off (`true` back on), and `"permission": {"GLOB": "allow" |
//! "ask" | "deny"}` says whether a call runs, asks or is refused. As in OpenCode the last
//! matching entry wins (`permission` after `tools`), and a pattern's `*` is any characters and
//! `?` one, every other character itself. A `permission` value that is an object decides by the
//! call's arguments, which switchboard does not read: it never hides a tool, and every call it
//! could refuse or ask about asks.

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
    // (pattern, verdict, conditional, rule)
    let mut rules: Vec<(String, Verdict, bool, String)> = Vec::new();
    for (key, value) in read.tools.map(|o| o.0).unwrap_or_default() {
        let verdict = match value {
            Value::Bool(false) => Verdict::Deny,
            Value::Bool(true) => Verdict::Enable,
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
            false,
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
        let (verdict, conditional) = match &value {
            Value::Object(patterns) => {
                let verdicts: Vec<Verdict> = patterns.values().filter_map(word).collect();
                let strictest = if verdicts.contains(&Verdict::Deny) {
                    Verdict::Deny
                } else if verdicts.contains(&Verdict::Ask) {
                    Verdict::Ask
                } else {
                    Verdict::Allow
                };
                (strictest, true)
            }
            v => match word(v) {
                Some(verdict) => (verdict, false),
                None => {
                    warnings.push(format!(
                        "{file}: OpenCode's permission.{key}: not applied: {v} is not \"allow\", \"ask\" or \"deny\""
                    ));
                    continue;
                }
            },
        };
        let shown = match &value {
            Value::String(s) => format!("{s:?}"),
            _ => "{…}".to_string(),
        };
        rules.push((
            key.clone(),
            verdict,
            conditional,
            format!("OpenCode's \"permission\": {{{key:?}: {shown}}}"),
        ));
    }
    if rules.is_empty() {
        return;
    }
    for server in servers.iter_mut() {
        let mut own = HostRules::named(server.name(), "", "_");
        // The last match wins in OpenCode; the first wins here.
        for (pattern, verdict, conditional, rule) in rules.iter().rev() {
            if let Err(e) = own.push(
                &wildcard(pattern),
                *verdict,
                *conditional,
                rule.clone(),
                file.clone(),
            ) {
                warnings.push(format!("{file}: {rule}: not applied: {e}"));
            }
        }
        server.filter = std::mem::take(&mut server.filter).with_rules(own);
    }
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
struct Ordered(Vec<(String, Value)>);

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
                while let Some(entry) = map.next_entry::<String, Value>()? {
                    out.push(entry);
                }
                Ok(Ordered(out))
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Ordered, E> {
                Ok(Ordered(vec![("*".into(), Value::String(s.into()))]))
            }
        }
        d.deserialize_any(Entries)
    }
}
