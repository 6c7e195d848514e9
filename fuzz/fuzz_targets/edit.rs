//! Fuzz target: a config file's text changed by one server (`add`, `remove`, `disable`,
//! `enable`) as switchboard.toml or `mcpServers` JSON. A change that succeeds must leave a file
//! that still reads, with the server added or gone and every other server still there. The
//! text read as a pasted snippet (`add-json`) gives servers that a new file takes. Some added
//! servers carry switchboard's own settings (`add --deny ...`).
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use switchboard_host::Config;
use switchboard_host::config::edit::{self, NewServer, Own, Reach};

const NAMES: [&str; 4] = ["switchboard.toml", ".mcp.json", "mcp.jsonc", "config"];

fn names(path: &Path, text: &str) -> Option<Vec<String>> {
    let config = Config::parse(path, text, &|_| Some("x".into())).ok()?;
    let mut names: Vec<String> = config
        .servers
        .iter()
        .map(|s| s.name().to_string())
        .chain(config.disabled.iter().map(|d| d.name.clone()))
        .collect();
    names.sort();
    Some(names)
}

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let path = Path::new("/project").join(NAMES[usize::from(first) % NAMES.len()]);
    let before = names(&path, text);
    let name = "added é";
    let reach = if first & 0x10 == 0 {
        Reach::Command {
            command: "srv".into(),
            args: vec!["-x".into(), "a\"b".into()],
            env: vec![("K".into(), "${V}".into())],
            cwd: None,
        }
    } else {
        Reach::Url {
            url: "https://example.com/mcp".into(),
            headers: vec![("A".into(), "b".into())],
            legacy_sse: first & 0x20 != 0,
        }
    };
    let server = NewServer {
        name: name.into(),
        reach,
        other: if first & 0x40 == 0 {
            vec![("alwaysAllow".into(), serde_json::json!(["x", {"y": 1}]))]
        } else {
            vec![
                ("alwaysAllow".into(), serde_json::json!(["x", "a.b", "*"])),
                ("autoApprove".into(), serde_json::json!(["y"])),
                ("disabledTools".into(), serde_json::json!(["z"])),
                ("disabled".into(), serde_json::json!(true)),
                ("timeout".into(), serde_json::json!(5)),
            ]
        },
        // switchboard's own settings (`add`'s flags), which a JSON file refuses but for
        // `.mcp.json`'s OAuth client.
        own: if first & 0x80 == 0 {
            Own::default()
        } else if first & 0x08 == 0 {
            Own {
                allow: vec!["get_*".into(), "a\"b".into()],
                deny: vec!["z*".into()],
                approve: Some("writes".into()),
                call_timeout: Some("90".into()),
                alias: Some("al".into()),
                client_id: Some("id".into()),
                client_secret: Some("${S}".into()),
                redirect_port: Some(8765),
                client_credentials: first & 0x04 != 0,
                // One folder that is there and one that is not (left out with a warning).
                roots: vec![
                    std::env::temp_dir().to_string_lossy().into_owned(),
                    "/no such/\"folder\"".into(),
                ],
            }
        } else {
            Own {
                client_id: Some("id".into()),
                redirect_port: Some(1),
                ..Own::default()
            }
        },
    };
    if let Ok(out) = edit::add_server(&path, Some(text), &server) {
        let after = names(&path, &out);
        assert!(after.is_some(), "added to a file that no longer reads:\n{out}");
        if let (Some(before), Some(after)) = (&before, &after) {
            let mut expected = before.clone();
            expected.push(name.to_string());
            expected.sort();
            assert_eq!(&expected, after, "{out}");
        }
        if let Ok(back) = edit::remove_server(&path, &out, name)
            && before.is_some()
        {
            assert_eq!(names(&path, &back), before, "{back}");
        }
    }
    // The text as a pasted snippet: each server it gives goes into a new file of either
    // format, which reads back with it.
    if let Ok(servers) = edit::servers_from_snippet(text, None) {
        for server in servers {
            for new in ["new.toml", "new.json"] {
                let new = Path::new(new);
                if let Ok(out) = edit::add_server(new, None, &server) {
                    let after = names(new, &out);
                    assert_eq!(after, Some(vec![server.name.clone()]), "{out}");
                }
            }
        }
    }
    for existing in before.iter().flatten() {
        if let Ok(out) = edit::remove_server(&path, text, existing) {
            let after = names(&path, &out);
            assert!(after.is_some(), "removed from a file that no longer reads:\n{out}");
        }
        for off in [true, false] {
            if let Ok(out) = edit::set_disabled(&path, text, existing, off) {
                assert_eq!(names(&path, &out), before, "{out}");
            }
        }
    }
});
