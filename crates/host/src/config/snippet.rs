//! The servers a pasted JSON snippet names, as server READMEs give them (`add-json`).

use serde_json::Value;

use super::edit::{NewServer, Reach};
use super::jsonc;

/// The servers a pasted JSON snippet names, as server READMEs give them: a whole
/// `{"mcpServers": {...}}` (or VS Code's `servers`), or one entry alone, named `name`. With
/// `name`, a snippet of several servers gives only that one. An entry's keys that are not
/// `add`'s own (`timeout`, `alwaysAllow`, ...) come as [`NewServer::other`]: a JSON file takes
/// them as written, a `switchboard.toml` those it has a setting for (`edit::left_out` names
/// the rest).
pub fn servers_from_snippet(text: &str, name: Option<&str>) -> Result<Vec<NewServer>, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let plain = jsonc::to_json(text);
    let root: Value = serde_json::from_str(&plain).map_err(|e| format!("not JSON: {e}"))?;
    let Some(object) = root.as_object() else {
        return Err("expected a JSON object: a server's entry, or {\"mcpServers\": {...}}".into());
    };
    let listed = ["mcpServers", "servers"]
        .iter()
        .find_map(|k| object.get(*k).and_then(Value::as_object));
    let entries: Vec<(String, &Value)> = match (listed, name) {
        (Some(map), Some(name)) => match map.get(name) {
            Some(entry) => vec![(name.to_string(), entry)],
            None => {
                let names: Vec<&str> = map.keys().map(String::as_str).collect();
                return Err(format!(
                    "the snippet names no server {name:?} (it names {})",
                    names.join(", ")
                ));
            }
        },
        (Some(map), None) if map.is_empty() => return Err("the snippet names no server".into()),
        (Some(map), None) => map.iter().map(|(k, v)| (k.clone(), v)).collect(),
        (None, Some(name)) => vec![(name.to_string(), &root)],
        (None, None) => {
            return Err("a server's entry alone needs its name: add-json NAME JSON".into());
        }
    };
    entries
        .into_iter()
        .map(|(name, entry)| from_entry(&name, entry).map_err(|e| format!("server {name:?}: {e}")))
        .collect()
}

/// One pasted entry as a server to write, with the keys it has that are not written.
fn from_entry(name: &str, entry: &Value) -> Result<NewServer, String> {
    let Some(map) = entry.as_object() else {
        return Err("its entry is not an object of settings".into());
    };
    let text = |key: &str| -> Result<Option<String>, String> {
        match map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(format!("`{key}` must be a string")),
        }
    };
    let pairs = |key: &str| -> Result<Vec<(String, String)>, String> {
        match map.get(key) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Object(m)) => m
                .iter()
                .map(|(k, v)| match v {
                    Value::String(s) => Ok((k.clone(), s.clone())),
                    Value::Number(n) => Ok((k.clone(), n.to_string())),
                    Value::Bool(b) => Ok((k.clone(), b.to_string())),
                    _ => Err(format!("`{key}.{k}` must be a string")),
                })
                .collect(),
            Some(_) => Err(format!("`{key}` must be an object of names and values")),
        }
    };
    let kind = text("type")?
        .or(text("transport")?)
        .map(|k| k.to_ascii_lowercase());
    let url = match text("url")? {
        Some(u) => Some(u),
        None => text("serverUrl")?.or(text("httpUrl")?),
    };
    let mut used = vec!["type", "transport"];
    let reach = match (text("command")?, url) {
        (Some(_), Some(_)) => return Err("has both `command` and `url`".into()),
        (None, None) => return Err("has neither `command` nor `url`".into()),
        (Some(command), None) => {
            used.extend(["command", "args", "env", "cwd"]);
            let args = match map.get("args") {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(items)) => items
                    .iter()
                    .map(|a| match a {
                        Value::String(s) => Ok(s.clone()),
                        Value::Number(n) => Ok(n.to_string()),
                        _ => Err("`args` must be a list of strings".to_string()),
                    })
                    .collect::<Result<_, _>>()?,
                Some(_) => return Err("`args` must be a list of strings".into()),
            };
            Reach::Command {
                command,
                args,
                env: pairs("env")?,
                cwd: text("cwd")?,
            }
        }
        (None, Some(url)) => {
            used.extend(["url", "serverUrl", "httpUrl", "headers"]);
            Reach::Url {
                url,
                headers: pairs("headers")?,
                legacy_sse: kind.as_deref() == Some("sse"),
            }
        }
    };
    let other: Vec<(String, Value)> = map
        .iter()
        .filter(|(k, _)| !used.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    Ok(NewServer {
        name: name.to_string(),
        reach,
        other,
        own: Default::default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pasted_snippet_gives_its_servers() {
        let readme = r#"{
  // from a README
  "mcpServers": {
    "github": {
      "command": "docker",
      "args": ["run", "-i", "--rm", "-e", "GITHUB_TOKEN", "ghcr.io/github/github-mcp-server"],
      "env": {"GITHUB_TOKEN": "<YOUR_TOKEN>"},
      "alwaysAllow": ["get_me"],
    },
    "remote": {"type": "sse", "url": "https://example.com/sse", "headers": {"X-Key": "k"}}
  }
}"#;
        let all = servers_from_snippet(readme, None).unwrap();
        assert_eq!(all.len(), 2);
        assert_eq!(all[0].name, "github");
        assert_eq!(
            all[0].other,
            [("alwaysAllow".to_string(), serde_json::json!(["get_me"]))]
        );
        assert!(
            matches!(&all[0].reach, Reach::Command { args, env, .. } if args.len() == 6 && env[0].0 == "GITHUB_TOKEN")
        );
        assert_eq!(
            all[1].reach,
            Reach::Url {
                url: "https://example.com/sse".into(),
                headers: vec![("X-Key".into(), "k".into())],
                legacy_sse: true
            }
        );
        assert!(all[1].other.is_empty());
        let one = servers_from_snippet(readme, Some("remote")).unwrap();
        assert_eq!(one.len(), 1);
        assert!(
            servers_from_snippet(readme, Some("nope"))
                .unwrap_err()
                .contains("github, remote")
        );
        let entry = servers_from_snippet(r#"{"serverUrl": "https://x/mcp"}"#, Some("w")).unwrap();
        assert!(
            matches!(&entry[0].reach, Reach::Url { url, legacy_sse: false, .. } if url == "https://x/mcp")
        );
        assert!(
            servers_from_snippet(r#"{"command": "x"}"#, None)
                .unwrap_err()
                .contains("needs its name")
        );
        assert!(
            servers_from_snippet(r#"{"mcpServers": {"a": {"args": []}}}"#, None)
                .unwrap_err()
                .contains("neither")
        );
        assert!(servers_from_snippet("[1]", None).is_err());
        assert!(
            servers_from_snippet("{", None)
                .unwrap_err()
                .contains("not JSON")
        );
    }
}
