//! `SessionError`: the one error type of this crate. Callers classify failures by variant; the
//! messages are for people and name the server (and the command, URL or tool) involved.

use std::time::Duration;

/// Everything that can go wrong while connecting to or talking with an MCP server.
///
/// A tool that ran and reported failure (`isError: true`) is not an error here: it is an
/// `Ok(CallResult { is_error: true, .. })`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SessionError {
    /// No server with this name was configured.
    #[error("unknown server \"{server}\"")]
    UnknownServer {
        /// The name asked for.
        server: String,
    },
    /// The server is configured but has no live session (still connecting, restarting or failed).
    #[error("server \"{server}\" is not ready: {reason}")]
    NotReady {
        /// The configured server name.
        server: String,
        /// Why: its current state, or the reason it failed.
        reason: String,
    },
    /// A request took longer than allowed; it was cancelled on the wire.
    #[error(
        "server \"{server}\": \"{tool}\" timed out after {}{}{}",
        human(after),
        quiet_suffix(quiet),
        stray_suffix(stray)
    )]
    Timeout {
        /// The configured server name.
        server: String,
        /// The tool called (or the resource URI / prompt name for reads and prompts).
        tool: String,
        /// How long it ran.
        after: Duration,
        /// For a call that reported progress (which starts its timeout again): how long after
        /// its last report it was given up.
        quiet: Option<Duration>,
        /// What the stdio server answered meanwhile under an id switchboard never sent (a
        /// server bug that leaves requests unanswered), in words, when it did.
        stray: Option<String>,
    },
    /// The session ended while the request was in flight (the server died or hung up).
    #[error("server \"{server}\" closed the session: {detail}")]
    Closed {
        /// The configured server name.
        server: String,
        /// What is known about why.
        detail: String,
    },
    /// The server answered with a JSON-RPC error.
    #[error("server \"{server}\" returned error {code}: {message}")]
    Rpc {
        /// The configured server name.
        server: String,
        /// JSON-RPC error code.
        code: i32,
        /// The server's message.
        message: String,
        /// The error's `data`, when it has any (a -32042 error's pages for the user to open,
        /// say).
        data: Option<serde_json::Value>,
    },
    /// The server's process could not be started.
    #[error("{}", spawn_message(command, source))]
    Spawn {
        /// The configured server name.
        server: String,
        /// The program that was run.
        command: String,
        /// The last lines the process wrote to stderr, if it got that far.
        stderr_tail: Vec<String>,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// An HTTP server could not be reached or refused the connection.
    #[error("connect failed: {url}: {detail}")]
    Connect {
        /// The configured server name.
        server: String,
        /// The endpoint URL.
        url: String,
        /// The transport's error, with its causes.
        detail: String,
    },
    /// The server was reached but the MCP handshake failed.
    #[error("initialize failed: {detail}{}", tail_suffix(stderr_tail))]
    Handshake {
        /// The configured server name.
        server: String,
        /// What went wrong.
        detail: String,
        /// The last lines a stdio server wrote to stderr.
        stderr_tail: Vec<String>,
    },
    /// The server answered `initialize`, but listing its tools, resources or prompts failed.
    #[error(
        "initialized, but listing failed: {detail}{}",
        tail_suffix(stderr_tail)
    )]
    Listing {
        /// The configured server name.
        server: String,
        /// What went wrong.
        detail: String,
        /// The last lines a stdio server wrote to stderr.
        stderr_tail: Vec<String>,
    },
    /// The server did not finish starting (spawn, initialize, listing) within its startup timeout.
    #[error(
        "did not start within {}{}{}",
        human(after),
        stray_suffix(stray),
        tail_suffix(stderr_tail)
    )]
    StartupTimeout {
        /// The configured server name.
        server: String,
        /// The startup timeout.
        after: Duration,
        /// What the stdio server answered meanwhile under an id switchboard never sent, in
        /// words, when it did (see [`SessionError::Timeout`]).
        stray: Option<String>,
        /// The last lines a stdio server wrote to stderr.
        stderr_tail: Vec<String>,
    },
    /// The server entry cannot be used as given (bad header, missing working directory, ...).
    #[error("invalid server entry: {detail}")]
    Config {
        /// The configured server name.
        server: String,
        /// What is wrong, naming the field.
        detail: String,
    },
    /// The server's `headersHelper` command failed, so its headers are unknown.
    #[error("server \"{server}\": its headersHelper failed: {detail}")]
    HeadersHelper {
        /// The configured server name.
        server: String,
        /// What went wrong: the exit status and stderr, a timeout, or output of the wrong shape.
        detail: String,
    },
    /// OAuth authorization for an HTTP server failed or is needed (`switchboard auth login`).
    #[error("authorization failed for {server}: {detail}")]
    Auth {
        /// The configured server name (or its URL where no name is known).
        server: String,
        /// What went wrong, with the next step where there is one.
        detail: String,
    },
    /// A probe of an HTTP server ([`crate::probe`]) had no answer to `initialize` within its
    /// limit.
    #[error("no answer within {}", human(after))]
    ProbeTimeout {
        /// The configured server name.
        server: String,
        /// The limit.
        after: Duration,
    },
    /// The server answered with something this host cannot use (unexpected result kind,
    /// an input-required or task reply to a plain call).
    #[error("server \"{server}\" sent an unexpected reply: {detail}")]
    Protocol {
        /// The configured server name.
        server: String,
        /// What was received.
        detail: String,
    },
}

impl SessionError {
    /// The configured server name the error is about.
    pub fn server(&self) -> &str {
        match self {
            SessionError::UnknownServer { server }
            | SessionError::NotReady { server, .. }
            | SessionError::Timeout { server, .. }
            | SessionError::Closed { server, .. }
            | SessionError::Rpc { server, .. }
            | SessionError::Spawn { server, .. }
            | SessionError::Connect { server, .. }
            | SessionError::Handshake { server, .. }
            | SessionError::Listing { server, .. }
            | SessionError::StartupTimeout { server, .. }
            | SessionError::Config { server, .. }
            | SessionError::HeadersHelper { server, .. }
            | SessionError::Auth { server, .. }
            | SessionError::ProbeTimeout { server, .. }
            | SessionError::Protocol { server, .. } => server,
        }
    }
}

fn spawn_message(command: &str, source: &std::io::Error) -> String {
    match source.kind() {
        std::io::ErrorKind::NotFound => format!(
            "spawn failed: command \"{command}\" not found{}",
            missing_command_hint(command)
        ),
        std::io::ErrorKind::PermissionDenied => {
            format!("spawn failed: command \"{command}\" is not executable (permission denied)")
        }
        _ => format!("spawn failed: command \"{command}\": {source}"),
    }
}

/// Why a command that was not found may be missing, for the mistakes configs copied from
/// another machine or another host make: a whole command line in `command`, Windows' shell
/// wrapper, a `~` no shell expands, a launcher whose runtime is not installed.
fn missing_command_hint(command: &str) -> String {
    let trimmed = command.trim();
    let mut words = trimmed.split_whitespace();
    let first = words.next().unwrap_or_default();
    let rest: Vec<&str> = words.collect();
    if !rest.is_empty() {
        // A path with spaces in it (`/Applications/My App/server`) that is not there is just
        // missing; a program followed by its arguments is the common mistake.
        if !findable(first) {
            return "; no program of that name (with its spaces) exists".into();
        }
        let args: Vec<String> = rest.iter().map(|a| format!("{a:?}")).collect();
        return format!(
            "; it holds spaces, but no shell splits it: give the program alone as the command \
             and each word after it as an argument (\"command\": {first:?}, \"args\": [{}])",
            args.join(", ")
        );
    }
    if trimmed.starts_with("~/") || trimmed == "~" {
        return "; `~` is not expanded, as no shell runs the command: write the full path".into();
    }
    let program = trimmed
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or(trimmed)
        .to_ascii_lowercase();
    let program = program.strip_suffix(".exe").unwrap_or(&program);
    let program = program.strip_suffix(".cmd").unwrap_or(program);
    let needs = match program {
        "cmd" | "powershell" if !cfg!(windows) => {
            return "; it is Windows' shell, which Windows configs wrap commands in: on this \
                    system give the program it runs as the command (for `cmd /c npx -y pkg`, \
                    \"command\": \"npx\", \"args\": [\"-y\", \"pkg\"])"
                .into();
        }
        "npx" | "npm" | "node" => "Node.js, which brings npx",
        "uvx" | "uv" => "uv (https://docs.astral.sh/uv/), which brings uvx",
        "bunx" | "bun" => "Bun, which brings bunx",
        "deno" => "Deno",
        "docker" => "Docker",
        "podman" => "Podman",
        "pipx" => "pipx",
        "python" | "python3" => "Python",
        _ => return String::new(),
    };
    format!("; install {needs}, or make sure it is on the PATH switchboard was started with")
}

/// Why `command` would not start, when it is a program's bare name that is not on `PATH`
/// (`command "uvxx" not found`, with what to install for the usual launchers); `None` when it
/// is found, or is a path (which a config reads from its own folder).
pub fn missing_program(command: &str) -> Option<String> {
    let bare = std::path::Path::new(command.trim()).components().count() == 1
        && !command.trim().starts_with('~');
    (bare && !findable(command.trim())).then(|| {
        format!(
            "command \"{command}\" not found{}",
            missing_command_hint(command)
        )
    })
}

/// Whether `program` names a file: a path that exists, or a name found on `PATH`.
fn findable(program: &str) -> bool {
    let path = std::path::Path::new(program);
    if path.components().count() > 1 {
        return path.is_file();
    }
    std::env::var_os("PATH")
        .is_some_and(|dirs| std::env::split_paths(&dirs).any(|d| d.join(program).is_file()))
}

/// The last few stderr lines, appended to a one-line reason so a status table shows why a
/// server died without the caller digging into `stderr_tail`.
fn tail_suffix(tail: &[String]) -> String {
    const SHOWN: usize = 3;
    let lines: Vec<&str> = tail
        .iter()
        .rev()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty())
        .take(SHOWN)
        .collect();
    if lines.is_empty() {
        return String::new();
    }
    let shown: Vec<&str> = lines.into_iter().rev().collect();
    format!("; stderr: {}", shown.join(" | "))
}

/// `; ` and what a server that timed out answered meanwhile under an id nobody sent.
fn quiet_suffix(quiet: &Option<Duration>) -> String {
    match quiet {
        Some(q) => format!(", {} after its last progress report", human(q)),
        None => String::new(),
    }
}

fn stray_suffix(stray: &Option<String>) -> String {
    match stray {
        Some(stray) => format!("; {stray}"),
        None => String::new(),
    }
}

fn human(d: &Duration) -> String {
    switchboard_core::time::human(*d)
}

pub(crate) use switchboard_core::error::chain;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_command_is_named() {
        let e = SessionError::Spawn {
            server: "s".into(),
            command: "nope-x".into(),
            stderr_tail: vec![],
            source: std::io::Error::from(std::io::ErrorKind::NotFound),
        };
        assert_eq!(e.to_string(), "spawn failed: command \"nope-x\" not found");
        assert_eq!(e.server(), "s");
    }

    #[test]
    fn a_missing_command_says_what_went_wrong_when_it_can_tell() {
        let hint = |command: &str| {
            SessionError::Spawn {
                server: "s".into(),
                command: command.into(),
                stderr_tail: vec![],
                source: std::io::Error::from(std::io::ErrorKind::NotFound),
            }
            .to_string()
        };
        // The split is suggested for a program that is there (`sh`, on Unix's PATH).
        if cfg!(unix) {
            let line = hint("sh -c 'serve --root /tmp'");
            assert!(
                line.ends_with(
                    "(\"command\": \"sh\", \"args\": [\"-c\", \"'serve\", \"--root\", \"/tmp'\"])"
                ),
                "{line}"
            );
        }
        let spaced = hint("/no/such dir/server --flag");
        assert!(
            spaced.ends_with("no program of that name (with its spaces) exists"),
            "{spaced}"
        );
        assert!(hint("~/bin/server").contains("`~` is not expanded"));
        if !cfg!(windows) {
            assert!(hint("cmd").contains("Windows' shell"));
            assert!(hint("C:\\Windows\\System32\\cmd.exe").contains("Windows' shell"));
        }
        assert!(hint("npx").contains("install Node.js"));
        assert!(hint("/usr/local/bin/uvx").contains("install uv"));
        assert!(hint("npx.cmd").contains("install Node.js"));
        assert!(hint("docker").contains("install Docker"));
        // Nothing to add about a command it knows nothing of.
        assert_eq!(
            hint("my-server"),
            "spawn failed: command \"my-server\" not found"
        );
    }

    #[test]
    fn reasons_carry_the_last_stderr_lines() {
        let e = SessionError::Handshake {
            server: "s".into(),
            detail: "connection closed".into(),
            stderr_tail: vec!["a".into(), "b".into(), "".into(), "c".into(), "d".into()],
        };
        assert_eq!(
            e.to_string(),
            "initialize failed: connection closed; stderr: b | c | d"
        );
    }

    #[test]
    fn durations_read_naturally() {
        assert_eq!(human(&Duration::from_millis(500)), "500 ms");
        assert_eq!(human(&Duration::from_secs(30)), "30 s");
    }
}
