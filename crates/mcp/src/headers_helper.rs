//! `headersHelper` (Claude Code's `.mcp.json` key, `headers_helper` in switchboard.toml): a
//! shell command whose output, a JSON object of strings, gives an HTTP server's request headers.
//! It runs each time a session connects (at start and at every reconnect), so short-lived tokens
//! stay fresh; its headers replace configured ones of the same name.

use std::process::Stdio;
use std::time::Duration;

use switchboard_core::Secret;
use tokio::io::AsyncReadExt;

use crate::error::SessionError;

/// How long the helper may run, as in Claude Code.
pub(crate) const HELPER_TIMEOUT: Duration = Duration::from_secs(10);

/// The most output read from the helper; headers are small.
const MAX_OUTPUT: u64 = 64 * 1024;

/// `headers` with those `command` prints for server `server` at `url` in place of any of the
/// same name (compared without case).
pub(crate) async fn merged(
    server: &str,
    url: &str,
    command: &str,
    headers: &[(String, Secret)],
) -> Result<Vec<(String, Secret)>, SessionError> {
    let fresh = run(server, url, command).await?;
    let mut out: Vec<(String, Secret)> = headers
        .iter()
        .filter(|(name, _)| !fresh.iter().any(|(n, _)| n.eq_ignore_ascii_case(name)))
        .cloned()
        .collect();
    out.extend(fresh);
    Ok(out)
}

/// Run the helper in a shell, from the current folder, with `CLAUDE_CODE_MCP_SERVER_NAME` and
/// `CLAUDE_CODE_MCP_SERVER_URL` set (so one script can serve several servers), and read its
/// headers. Errors never quote what it printed on stdout, nor the command (either may hold a
/// secret); its stderr is quoted.
async fn run(
    server: &str,
    url: &str,
    command: &str,
) -> Result<Vec<(String, Secret)>, SessionError> {
    let fail = |detail: String| SessionError::HeadersHelper {
        server: server.to_string(),
        detail,
    };
    let mut child = tokio::process::Command::new("sh")
        .arg("-c")
        .arg(command)
        .env("CLAUDE_CODE_MCP_SERVER_NAME", server)
        .env("CLAUDE_CODE_MCP_SERVER_URL", url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| fail(format!("cannot start a shell for it: {e}")))?;
    let pid = child.id();
    let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
        return Err(fail("its output could not be read".into()));
    };
    let work = async {
        let mut out = Vec::new();
        let mut err = Vec::new();
        let (mut stdout, mut stderr) = (stdout.take(MAX_OUTPUT), stderr.take(MAX_OUTPUT));
        let (read_out, _, status) = tokio::join!(
            stdout.read_to_end(&mut out),
            stderr.read_to_end(&mut err),
            child.wait()
        );
        (read_out.map(|_| out), err, status)
    };
    let (out, err, status) = match tokio::time::timeout(HELPER_TIMEOUT, work).await {
        Ok(done) => done,
        Err(_) => {
            // The shell and anything it started: they share the helper's process group.
            if let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()) {
                let _ = nix::sys::signal::killpg(
                    nix::unistd::Pid::from_raw(pid),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
            return Err(fail(format!(
                "it did not finish within {} s",
                HELPER_TIMEOUT.as_secs()
            )));
        }
    };
    let said = String::from_utf8_lossy(&err);
    let said = said.trim();
    let said = if said.is_empty() {
        String::new()
    } else {
        format!(": {}", switchboard_core::clip(said, 300))
    };
    let status = status.map_err(|e| fail(format!("waiting for it failed: {e}")))?;
    if !status.success() {
        return Err(fail(format!("it ended with {status}{said}")));
    }
    let out = out.map_err(|e| fail(format!("reading its output failed: {e}")))?;
    parse(&out).map_err(fail)
}

/// The headers in the helper's output: one JSON object whose values are strings.
fn parse(out: &[u8]) -> Result<Vec<(String, Secret)>, String> {
    let shape = "it must print one JSON object of header names and string values, such as {\"Authorization\": \"Bearer ...\"}";
    let value: serde_json::Value = serde_json::from_slice(out).map_err(|_| {
        if out.iter().all(u8::is_ascii_whitespace) {
            format!("it printed nothing; {shape}")
        } else {
            format!("its output is not JSON; {shape}")
        }
    })?;
    let serde_json::Value::Object(map) = value else {
        return Err(format!("its output is not a JSON object; {shape}"));
    };
    map.into_iter()
        .map(|(name, value)| match value {
            serde_json::Value::String(v) => Ok((name, Secret::new(v))),
            _ => Err(format!("the value of {name:?} is not a string; {shape}")),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn output_is_an_object_of_strings_and_errors_never_quote_it() {
        let got = parse(br#"{"Authorization": "Bearer s3cret", "X-Team": "a"}"#).unwrap();
        let names: Vec<&str> = got.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["Authorization", "X-Team"]);
        assert_eq!(got[0].1.expose(), "Bearer s3cret");
        for (bad, says) in [
            (&b"Bearer s3cret"[..], "not JSON"),
            (b"[\"s3cret\"]", "not a JSON object"),
            (b"{\"A\": 5}", "value of \"A\" is not a string"),
            (b"  \n", "printed nothing"),
        ] {
            let e = parse(bad).unwrap_err();
            assert!(e.contains(says), "{e}");
            assert!(!e.contains("s3cret"), "{e}");
        }
    }
}
