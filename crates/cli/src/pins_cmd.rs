//! `switchboard pins list|diff|approve`: the tool definitions the gateway has pinned, what
//! changed, and accepting a change.

use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::{Value, json};
use switchboard_host::pins::{self, Pin, PinStore};

use crate::output::{color_on_stdout, paint, print_json, styled_table};
use crate::{Global, source};

/// Arguments of `switchboard pins`.
#[derive(clap::Args, Debug)]
pub struct PinsArgs {
    /// The pin store file (default: [settings] pin_store, else pins.sqlite in your user data
    /// directory), the same one `serve --pins` uses.
    #[arg(long, global = true, value_name = "FILE")]
    pub pins: Option<PathBuf>,
    #[command(subcommand)]
    pub command: PinsCommand,
}

/// What to do with the pins.
#[derive(clap::Subcommand, Debug)]
pub enum PinsCommand {
    /// Every pinned tool, and whether its server now offers a changed definition.
    List,
    /// Show the pinned definition of SERVER/TOOL against the one its server offers now.
    /// Exits 1 when there is a change.
    Diff {
        /// SERVER/TOOL, with the configured server name and the tool's name on that server.
        target: String,
    },
    /// Accept the changed definition of SERVER/TOOL: it becomes the pin and a running gateway
    /// shows the tool again.
    Approve {
        /// SERVER/TOOL, with the configured server name and the tool's name on that server.
        target: String,
    },
}

fn split(target: &str) -> anyhow::Result<(&str, &str)> {
    target
        .split_once('/')
        .filter(|(s, t)| !s.is_empty() && !t.is_empty())
        .ok_or_else(|| anyhow::anyhow!("expected SERVER/TOOL, got {target:?}"))
}

fn open(global: &Global, flag: Option<&std::path::Path>) -> anyhow::Result<PinStore> {
    let settings = if flag.is_some() {
        switchboard_host::config::Settings::default()
    } else {
        source::load_config(global)?.settings
    };
    let path = pins::store_path(flag, &settings)?;
    Ok(PinStore::open(&path)?)
}

/// Run a `pins` subcommand.
pub fn run(global: &Global, args: PinsArgs) -> anyhow::Result<ExitCode> {
    let store = open(global, args.pins.as_deref())?;
    match args.command {
        PinsCommand::List => list(global, &store),
        PinsCommand::Diff { target } => {
            let (server, tool) = split(&target)?;
            diff(global, &store, server, tool)
        }
        PinsCommand::Approve { target } => {
            let (server, tool) = split(&target)?;
            let pin = store.approve(server, tool)?;
            if global.json {
                print_json(&serde_json::to_value(&pin)?);
            } else {
                println!(
                    "approved {server}/{tool}: the pin is now {} (a running gateway shows the tool again within a second)",
                    &pin.hash[..12.min(pin.hash.len())]
                );
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn list(global: &Global, store: &PinStore) -> anyhow::Result<ExitCode> {
    let all = store.list()?;
    if global.json {
        print_json(&json!({ "store": store.path(), "pins": all }));
        return Ok(ExitCode::SUCCESS);
    }
    if all.is_empty() {
        println!(
            "no pins in {} (switchboard serve pins each tool the first time it sees it)",
            store.path().display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let color = color_on_stdout();
    let rows: Vec<Vec<String>> = all
        .iter()
        .map(|p| {
            vec![
                format!("{}/{}", p.server, p.tool),
                p.hash[..12.min(p.hash.len())].to_string(),
                if p.pending.is_some() {
                    "changed".to_string()
                } else {
                    "pinned".to_string()
                },
            ]
        })
        .collect();
    print!(
        "{}",
        styled_table(&["TOOL", "HASH", "STATE"], &rows, &|_, col, cell| {
            if col == 2 && cell == "changed" {
                paint(cell, "33", color)
            } else {
                cell.to_string()
            }
        })
    );
    let changed = all.iter().filter(|p| p.pending.is_some()).count();
    if changed > 0 {
        println!(
            "\n{changed} changed: `switchboard pins diff SERVER/TOOL` shows the change, `switchboard pins approve SERVER/TOOL` accepts it"
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn diff(global: &Global, store: &PinStore, server: &str, tool: &str) -> anyhow::Result<ExitCode> {
    let Some(pin) = store.get(server, tool)? else {
        return Err(switchboard_host::HostError::NoPin {
            server: server.into(),
            tool: tool.into(),
        }
        .into());
    };
    let changed = pin.pending.is_some();
    if global.json {
        print_json(&json!({
            "server": pin.server,
            "tool": pin.tool,
            "pinned": pin.definition,
            "offered": pin.pending.as_ref().map(|p| &p.definition),
        }));
    } else {
        print!("{}", render_diff(&pin, color_on_stdout()));
    }
    Ok(if changed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string())
}

/// A line diff of the pinned and the offered definition (pretty JSON, keys sorted).
fn render_diff(pin: &Pin, color: bool) -> String {
    let Some(pending) = &pin.pending else {
        return format!(
            "{}/{}: unchanged since it was pinned ({})\n",
            pin.server, pin.tool, pin.hash
        );
    };
    let old = pretty(&sorted(&pin.definition));
    let new = pretty(&sorted(&pending.definition));
    let old: Vec<&str> = old.lines().collect();
    let new: Vec<&str> = new.lines().collect();
    let mut out = format!(
        "--- {}/{} pinned ({})\n+++ {}/{} offered now ({})\n",
        pin.server, pin.tool, pin.hash, pin.server, pin.tool, pending.hash
    );
    for (tag, line) in line_diff(&old, &new) {
        let text = format!("{tag} {line}");
        out.push_str(&match tag {
            '-' => paint(&text, "31", color),
            '+' => paint(&text, "32", color),
            _ => text,
        });
        out.push('\n');
    }
    out
}

/// Sort object keys recursively, so the diff does not depend on key order.
fn sorted(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), sorted(&m[k])))
                    .collect(),
            )
        }
        Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

/// Longest-common-subsequence line diff: (' ' | '-' | '+', line).
fn line_diff<'a>(a: &[&'a str], b: &[&'a str]) -> Vec<(char, &'a str)> {
    let (n, m) = (a.len(), b.len());
    let mut lcs = vec![vec![0usize; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j, mut out) = (0, 0, Vec::new());
    while i < n && j < m {
        if a[i] == b[j] {
            out.push((' ', a[i]));
            i += 1;
            j += 1;
        } else if lcs[i + 1][j] >= lcs[i][j + 1] {
            out.push(('-', a[i]));
            i += 1;
        } else {
            out.push(('+', b[j]));
            j += 1;
        }
    }
    out.extend(a[i..].iter().map(|l| ('-', *l)));
    out.extend(b[j..].iter().map(|l| ('+', *l)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_diff_marks_removed_and_added_lines() {
        let got = line_diff(&["a", "b", "c"], &["a", "x", "c"]);
        assert_eq!(got, vec![(' ', "a"), ('-', "b"), ('+', "x"), (' ', "c")]);
    }
}
