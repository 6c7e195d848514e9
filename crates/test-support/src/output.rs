//! Reading what the `switchboard` binary printed: its `--json` stdout, and one server's row of
//! `servers --json`.

use std::process::Output;

use serde_json::Value;

/// The JSON the command printed; panics showing stdout and stderr when it is not JSON.
pub fn stdout_json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}):\n{}\nstderr:\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// The row of server `name` in `servers --json`; panics naming the server when it is absent.
pub fn server_row<'a>(v: &'a Value, name: &str) -> &'a Value {
    v["servers"]
        .as_array()
        .and_then(|rows| rows.iter().find(|s| s["name"] == name))
        .unwrap_or_else(|| panic!("no server {name} in {v}"))
}
