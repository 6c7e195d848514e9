//! Hostile config files (`switchboard.toml`, `mcpServers` / VS Code JSON): parsing never panics,
//! a file that parses keeps every server it names (usable, or disabled with a reason that
//! points into the file), and the same text always gives the same answer.

use std::collections::BTreeSet;
use std::path::Path;

use proptest::prelude::*;
use switchboard_host::{Config, HostError};

const SERVER_NAMES: &[&str] = &[
    "a",
    "tickets",
    "x-y",
    "\"quoted name\"",
    "\"\"",
    "\" \"",
    "\"a.b\"",
    "\"[servers.a]\"",
    "\"名前\"",
    "\"💥\"",
    "\"\\u202e\"",
    "a.b",
];

const KEYS: &[&str] = &[
    "type",
    "command",
    "args",
    "env",
    "cwd",
    "url",
    "headers",
    "startup_timeout",
    "call_timeout",
    "alias",
    "tools",
    "approve",
    "pin",
    "max_result_tokens",
    "tool",
    "disabled",
    "oauth",
    "headers_helper",
    "headersHelper",
    "timeout",
    "comand",
    "\"\"",
];

const TOML_VALUES: &[&str] = &[
    "\"x\"",
    "\"\"",
    "\"./bin/x\"",
    "\"${HOME}/x\"",
    "\"${UNSET}\"",
    "\"${\"",
    "\"$${X}\"",
    "\"${input:token}\"",
    "\"${A:-}\"",
    "\"http://\"",
    "\"https://example.com/mcp\"",
    "\"ftp://example.com\"",
    "\"http://[::1\"",
    "\"stdio\"",
    "\"http\"",
    "\"sse\"",
    "\"STREAMABLE-HTTP\"",
    "\"500ms\"",
    "\"1e400s\"",
    "\"-1m\"",
    "\"NaNs\"",
    "\"ms\"",
    "0",
    "-1",
    "1e-300",
    "1e308",
    "inf",
    "nan",
    "9223372036854775807",
    "-9223372036854775808",
    "4294967296",
    "true",
    "false",
    "[]",
    "[\"a\", 1]",
    "[\"[\", \"**\", \"{a,b\"]",
    "{}",
    "{ allow = [\"[\"] }",
    "{ allow = [\"*\"], deny = [\"x\"], extra = 1 }",
    "{ \"\" = \"v\" }",
    "{ \"bad header\" = \"v\" }",
    "{ client_id = \"c\", client_secret = \"s\", redirect_port = 70000 }",
    "{ client_secret = \"s\" }",
    "{ scopes = [\"a b\", \"\"] }",
    "{ t = { approve = \"never\", max_result_tokens = 0 } }",
    "{ t = { nonsense = 1 } }",
    "1979-05-27T07:32:00Z",
];

fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::sample::select(TOML_VALUES).prop_map(str::to_string),
        1 => "\\PC{0,8}".prop_map(|s| format!("{s:?}")),
    ]
}

fn toml_text() -> impl Strategy<Value = String> {
    let entry = (
        prop::sample::select(SERVER_NAMES),
        prop::collection::vec((prop::sample::select(KEYS), value()), 0..6),
        prop::option::of(prop::sample::select(
            &["oauth", "tool.t", "tools", "env"][..],
        )),
    )
        .prop_map(|(name, kvs, sub)| {
            let mut s = format!("[servers.{name}]\n");
            for (k, v) in kvs {
                s.push_str(&format!("{k} = {v}\n"));
            }
            if let Some(sub) = sub {
                s.push_str(&format!("[servers.{name}.{sub}]\nclient_id = \"c\"\n"));
            }
            s
        });
    let extra = prop_oneof![
        Just(String::new()),
        Just("[settings]\ninstructions = 1\n".to_string()),
        Just("[settings]\npin_store = \"p\"\n".to_string()),
        Just("[profiles.p]\nservers = [\"a\", \"nope\"]\ntools = [\"a/*\"]\n".to_string()),
        Just("[profiles.q]\nbogus = true\n".to_string()),
        Just("srvers = 1\n".to_string()),
        Just("servers = { inline = { command = \"x\" } }\n".to_string()),
        Just("servers.dotted.command = \"x\"\n".to_string()),
        Just("# [servers.a]\n".to_string()),
        Just("k = \"\"\"\n[servers.a]\n\"\"\"\n".to_string()),
        "\\PC{0,12}".prop_map(|s| s),
    ];
    (prop::collection::vec(entry, 0..4), extra, any::<bool>()).prop_map(
        |(entries, extra, first)| {
            let body = entries.concat();
            if first {
                format!("{extra}\n{body}")
            } else {
                format!("{body}\n{extra}")
            }
        },
    )
}

const JSON_VALUES: &[&str] = &[
    "\"x\"",
    "\"\"",
    "\"${UNSET}\"",
    "\"${env:HOME}\"",
    "\"https://example.com/mcp\"",
    "\"http:/x\"",
    "\"stdio\"",
    "\"sse\"",
    "null",
    "0",
    "-1",
    "1e-300",
    "1e308",
    "18446744073709551616",
    "true",
    "[]",
    "[\"a\", null]",
    "{}",
    "{\"A\": 1}",
    "{\"clientId\": \"c\", \"callbackPort\": -5}",
    "{\"clientId\": \"\", \"scopes\": \"a b\"}",
    "{\"allow\": [\"[\"]}",
    "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
];

const JSON_KEYS: &[&str] = &[
    "type",
    "command",
    "args",
    "env",
    "cwd",
    "url",
    "headers",
    "startupTimeout",
    "startup_timeout",
    "call_timeout",
    "alias",
    "tools",
    "disabled",
    "oauth",
    "autoApprove",
    "",
];

fn json_text() -> impl Strategy<Value = String> {
    let entry = (
        prop_oneof![
            prop::sample::select(&["a", "b", "", " ", "\\\"", "a\\u0000", "💥", "mcpServers"][..])
                .prop_map(str::to_string),
            "\\PC{0,6}".prop_map(|s| s.replace(['"', '\\'], "")),
        ],
        prop_oneof![
            1 => prop::sample::select(JSON_VALUES).prop_map(str::to_string),
            4 => prop::collection::vec(
                (prop::sample::select(JSON_KEYS), prop::sample::select(JSON_VALUES)),
                0..5
            )
            .prop_map(|kvs| {
                let body: Vec<String> = kvs.iter().map(|(k, v)| format!("\"{k}\": {v}")).collect();
                format!("{{{}}}", body.join(", "))
            }),
        ],
    );
    (
        prop::sample::select(&["mcpServers", "servers", "mcp"][..]),
        prop::collection::vec(entry, 0..5),
    )
        .prop_map(|(key, entries)| {
            let body: Vec<String> = entries
                .iter()
                .map(|(n, v)| format!("\"{n}\": {v}"))
                .collect();
            format!("{{\"{key}\": {{{}}}}}", body.join(",\n  "))
        })
}

fn env(name: &str) -> Option<String> {
    (name == "HOME").then(|| "/home/u".to_string())
}

/// The server names the file defines, read independently of the config code.
fn toml_names(text: &str) -> Option<BTreeSet<String>> {
    let table: toml::Table = toml::from_str(text).ok()?;
    match table.get("servers") {
        None => Some(BTreeSet::new()),
        Some(toml::Value::Table(t)) => Some(t.keys().cloned().collect()),
        Some(_) => None,
    }
}

fn json_names(text: &str) -> Option<BTreeSet<String>> {
    let v: serde_json::Value = serde_json::from_str(text).ok()?;
    let (key, map) = ["mcpServers", "servers", "mcp"].iter().find_map(|k| {
        v.get(*k)
            .and_then(serde_json::Value::as_object)
            .map(|m| (*k, m))
    })?;
    // OpenCode 2 nests its servers under `mcp.servers` (a map that is not itself an entry).
    let nested = map
        .get("servers")
        .and_then(serde_json::Value::as_object)
        .filter(|inner| {
            key == "mcp"
                && !["type", "command", "url"]
                    .iter()
                    .any(|k| inner.contains_key(*k))
        });
    Some(nested.unwrap_or(map).keys().cloned().collect())
}

fn check(file: &str, text: &str, names: Option<BTreeSet<String>>) -> Result<(), String> {
    let path = Path::new(file);
    let parsed = Config::parse(path, text, &env);
    let again = Config::parse(path, text, &env);
    match (&parsed, &again) {
        (Ok(a), Ok(b)) => {
            let names_of = |c: &Config| -> Vec<(String, String)> {
                c.servers
                    .iter()
                    .map(|s| (s.name().to_string(), String::new()))
                    .chain(
                        c.disabled
                            .iter()
                            .map(|d| (d.name.clone(), d.reason.clone())),
                    )
                    .collect()
            };
            if names_of(a) != names_of(b) || a.warnings != b.warnings {
                return Err(format!("two parses differ on {text:?}"));
            }
        }
        (Err(a), Err(b)) if a.to_string() == b.to_string() => {}
        _ => return Err(format!("two parses differ on {text:?}")),
    }
    let config = match parsed {
        Ok(c) => c,
        Err(HostError::ConfigSyntax { line, column, .. }) => {
            return if line >= 1 && column >= 1 {
                Ok(())
            } else {
                Err(format!("syntax error at {line}:{column} on {text:?}"))
            };
        }
        Err(HostError::ConfigShape { .. }) => return Ok(()),
        Err(e) => return Err(format!("unexpected error {e:?} on {text:?}")),
    };
    let Some(names) = names else {
        return Err(format!(
            "parsed a file whose servers cannot be read on {text:?}"
        ));
    };
    let got: Vec<&str> = config.server_names().collect();
    let got_set: BTreeSet<String> = got.iter().map(|s| s.to_string()).collect();
    if got.len() != got_set.len() || got_set != names {
        return Err(format!(
            "servers {got:?}, the file names {names:?}, on {text:?}"
        ));
    }
    let lines = text.lines().count().max(1);
    for d in &config.disabled {
        if d.reason.trim().is_empty() {
            return Err(format!(
                "{:?} disabled without a reason on {text:?}",
                d.name
            ));
        }
        // A reason that points into the file points at a line that exists.
        if let Some(rest) = d.reason.strip_prefix(&format!("{file}:")) {
            let line: usize = rest
                .split(':')
                .next()
                .and_then(|l| l.parse().ok())
                .unwrap_or(0);
            if line == 0 || line > lines {
                return Err(format!(
                    "{:?}: reason {:?} points at line {line} of {lines} on {text:?}",
                    d.name, d.reason
                ));
            }
        }
    }
    Ok(())
}

proptest! {
    #[test]
    fn native_toml_keeps_every_server_or_fails_whole(text in toml_text()) {
        if let Err(e) = check("switchboard.toml", &text, toml_names(&text)) {
            prop_assert!(false, "{}", e);
        }
    }

    #[test]
    fn mcp_json_keeps_every_server_or_fails_whole(text in json_text()) {
        if let Err(e) = check("mcp.json", &text, json_names(&text)) {
            prop_assert!(false, "{}", e);
        }
    }

    #[test]
    fn any_text_is_an_answer_not_a_panic(text in "\\PC{0,64}", json in any::<bool>()) {
        let file = if json { "x.json" } else { "x.toml" };
        let _ = Config::parse(Path::new(file), &text, &env);
    }
}
