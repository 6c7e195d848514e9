//! Terminal output: logging setup, colour (off under NO_COLOR or when not a terminal), tables
//! and progress spinners. Everything the CLI prints goes through here or `println!`.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

/// Logs go to stderr; -v raises the level, RUST_LOG overrides it.
pub fn init_logging(verbose: u8) {
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;
    let (filter, quiet) = match tracing_subscriber::EnvFilter::try_from_default_env() {
        Ok(filter) => (filter, false),
        Err(_) => (
            tracing_subscriber::EnvFilter::new(default_directives(verbose)),
            verbose == 0,
        ),
    };
    let fmt = tracing_subscriber::fmt::layer()
        .with_writer(|| RedactedStderr)
        .with_ansi(color_on_stderr());
    let _ = tracing_subscriber::registry()
        .with(filter)
        .with(quiet.then_some(QuietHttpClient))
        .with(fmt)
        .try_init();
}

/// At the default level, leaves out two reports of rmcp's Streamable HTTP client that say
/// nothing the user can act on, both printed whenever an HTTP server goes away: a Debug dump of
/// the client error that ended an event stream, while the session itself carries on (the next
/// request reconnects or fails in words); and, as an ERROR, the failed DELETE of the session
/// when a session to a server that is gone is closed (the supervisor's "session ended" line
/// already says so, and the server is restarted). rmcp's other warnings on that target (a
/// tool's header annotations it rejects) still show.
struct QuietHttpClient;

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for QuietHttpClient {
    fn event_enabled(
        &self,
        event: &tracing::Event<'_>,
        _: tracing_subscriber::layer::Context<'_, S>,
    ) -> bool {
        if event.metadata().target() != switchboard_mcp::HTTP_LOG_TARGET {
            return true;
        }
        struct Message(bool);
        impl tracing::field::Visit for Message {
            fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
                if field.name() == "message" {
                    let text = format!("{value:?}");
                    self.0 = QUIET_HTTP_MESSAGES.iter().any(|m| text.starts_with(m));
                }
            }
        }
        let mut message = Message(false);
        event.record(&mut message);
        !message.0
    }
}

/// How the reports `QuietHttpClient` leaves out begin: a broken event stream, and a session
/// DELETE that failed.
const QUIET_HTTP_MESSAGES: [&str; 2] = [
    "sse client event stream terminated",
    "fail to delete session",
];

/// The log filter when RUST_LOG is not set: `warn`, `info` with -v, `debug` with -vv.
///
/// At the default level rmcp's session loop ([`switchboard_mcp::SESSION_LOG_TARGET`]) shows
/// errors only: it logs every error answer a session sends as a WARN with the error's Debug
/// form (a gateway client asking for an unknown prompt, a server's request we decline), which
/// is the peer's business, not the user's; `-v` shows them. rmcp's transport worker
/// ([`switchboard_mcp::WORKER_LOG_TARGET`]) is off at the default level: it logs every failed
/// HTTP connection as an ERROR line with reqwest's Debug form, ahead of switchboard's own
/// message about the same failure (`servers` printed one such line per unreachable server
/// above its table); `-v` shows it. So is its reqwest backend
/// ([`switchboard_mcp::HTTP_BACKEND_LOG_TARGET`]), which logs a web page's content type as an
/// ERROR in Debug form before the same failure is reported. So is its event-stream reconnect
/// loop ([`switchboard_mcp::SSE_RETRY_LOG_TARGET`]), which logs each failed attempt to re-open
/// a Streamable HTTP server's event stream (a server restarting) at WARN and the last at ERROR;
/// and its one-line Debug dump of the broken stream and its ERROR about a session DELETE that
/// failed (the server is gone) are left out (`QuietHttpClient`).
///
/// rmcp's OAuth module logs the authorization code (and token responses) at debug level, so
/// its target ([`switchboard_mcp::OAUTH_LOG_TARGET`]) stays at `info` at most here; `-vv` must not put a live credential
/// in a log someone pastes into an issue. A user who sets RUST_LOG explicitly gets exactly what
/// they asked for (the filter above is used as is).
fn default_directives(verbose: u8) -> String {
    match verbose {
        0 => format!(
            "warn,{}=error,{}=off,{}=off,{}=off",
            switchboard_mcp::SESSION_LOG_TARGET,
            switchboard_mcp::WORKER_LOG_TARGET,
            switchboard_mcp::HTTP_BACKEND_LOG_TARGET,
            switchboard_mcp::SSE_RETRY_LOG_TARGET
        ),
        1 => "info".to_string(),
        _ => format!("debug,{}=info", switchboard_mcp::OAUTH_LOG_TARGET),
    }
}

/// stderr for logs, with secrets taken out of every URL in a line: libraries (rmcp, reqwest)
/// log failed requests with the URL they failed on, query tokens included. The formatter
/// writes one whole event per call, so a URL is never split across writes.
struct RedactedStderr;

impl std::io::Write for RedactedStderr {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        std::io::stderr().write_all(switchboard_core::redact_urls_in(&text).as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

fn no_color() -> bool {
    std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
}

/// Colour for stdout: a terminal and no NO_COLOR.
pub fn color_on_stdout() -> bool {
    !no_color() && std::io::stdout().is_terminal()
}

/// Colour for stderr: a terminal and no NO_COLOR.
pub fn color_on_stderr() -> bool {
    !no_color() && std::io::stderr().is_terminal()
}

/// Paint `text` with an SGR code when colour is on.
pub fn paint(text: &str, sgr: &str, on: bool) -> String {
    if on {
        format!("\x1b[{sgr}m{text}\x1b[0m")
    } else {
        text.to_string()
    }
}

/// A call's progress as the server reports it: `server tool: 2/3: message` (the message cut
/// to `width` characters).
pub fn progress(
    server: &str,
    tool: &str,
    progress: f64,
    total: Option<f64>,
    message: Option<&str>,
    width: usize,
) -> String {
    let done = match total {
        Some(t) => format!("{progress}/{t}"),
        None => format!("{progress}"),
    };
    let said = message
        .map(|m| format!(": {}", switchboard_core::clip(m, width)))
        .unwrap_or_default();
    format!("{server} {tool}: {done}{said}")
}

/// A spinner on stderr, shown only on a terminal, for work that may take over a second.
pub fn spinner(message: impl Into<String>) -> ProgressBar {
    let pb = ProgressBar::new_spinner();
    if std::io::stderr().is_terminal() {
        pb.set_style(
            ProgressStyle::with_template("{spinner} {msg} {elapsed}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        pb.set_message(message.into());
        pb.enable_steady_tick(Duration::from_millis(100));
    } else {
        pb.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    pb
}

/// Render rows as a left-aligned table with a header (display width by characters), with
/// `style(row, column, cell)` applied to each body cell after its width is measured on the
/// plain text, so colour codes do not break the alignment.
pub fn styled_table(
    header: &[&str],
    rows: &[Vec<String>],
    style: &dyn Fn(usize, usize, &str) -> String,
) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            if i < widths.len() {
                widths[i] = widths[i].max(cell.chars().count());
            }
        }
    }
    let line = |cells: &[String], styled: &dyn Fn(usize, &str) -> String| {
        let mut s = String::new();
        for (i, c) in cells.iter().enumerate() {
            s.push_str(&styled(i, c));
            if i + 1 < cells.len() {
                s.push_str(
                    &" ".repeat(widths.get(i).copied().unwrap_or(0) - c.chars().count() + 2),
                );
            }
        }
        s.trim_end().to_string()
    };
    let header: Vec<String> = header.iter().map(|h| h.to_string()).collect();
    let mut out = line(&header, &|_, c| c.to_string());
    out.push('\n');
    for (r, row) in rows.iter().enumerate() {
        out.push_str(&line(row, &|col, c| style(r, col, c)));
        out.push('\n');
    }
    out
}

/// An error and its causes on one line, `: `-separated, leaving out a cause whose text the
/// line already holds (many errors repeat their source's text in their own message).
pub fn error_text(e: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in e.chain() {
        let part = cause.to_string();
        if text.contains(&part) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&part);
    }
    text
}

/// End the process quietly when its output goes to a pipe whose reader has gone
/// (`switchboard lint | head`): `println!` panics then, and its backtrace would be noise. The
/// exit status is 141, what a shell reports for a process killed by SIGPIPE. Other panics are
/// reported as before.
pub fn quiet_on_closed_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or("");
        if is_closed_pipe_panic(message) {
            std::process::exit(141);
        }
        default(info);
    }));
}

/// Whether a panic message is std's for printing to a closed pipe (EPIPE is 32 on Linux and
/// macOS; the text of the error depends on the locale, its number does not).
fn is_closed_pipe_panic(message: &str) -> bool {
    message.starts_with("failed printing to std")
        && (message.contains("os error 32") || message.contains("Broken pipe"))
}

/// Print a JSON value, pretty, on stdout.
pub fn print_json(value: &serde_json::Value) {
    println!(
        "{}",
        serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_line_names_each_cause_once() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
        let e = anyhow::Error::new(io).context("x.toml: cannot read config: no such file");
        assert_eq!(error_text(&e), "x.toml: cannot read config: no such file");
        let e = anyhow::anyhow!("inner").context("outer");
        assert_eq!(error_text(&e), "outer: inner");
    }

    #[test]
    fn only_a_print_to_a_closed_pipe_counts_as_one() {
        assert!(is_closed_pipe_panic(
            "failed printing to stdout: Broken pipe (os error 32)"
        ));
        assert!(is_closed_pipe_panic(
            "failed printing to stderr: Datenübergabe unterbrochen (os error 32)"
        ));
        assert!(!is_closed_pipe_panic(
            "failed printing to stdout: No space left on device (os error 28)"
        ));
        assert!(!is_closed_pipe_panic("index out of bounds"));
    }
    use tracing::Level;

    /// Whether `directives` lets through a debug event from rmcp's OAuth module and one from
    /// elsewhere in rmcp.
    fn debug_enabled(directives: &str) -> (bool, bool) {
        let subscriber = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new(directives))
            .with_writer(std::io::sink)
            .finish();
        tracing::subscriber::with_default(subscriber, || {
            (
                tracing::enabled!(target: switchboard_mcp::OAUTH_LOG_TARGET, Level::DEBUG),
                tracing::enabled!(target: switchboard_mcp::HTTP_LOG_TARGET, Level::DEBUG),
            )
        })
    }

    #[test]
    fn debug_logging_keeps_rmcp_oauth_at_info() {
        // -vv: rmcp debug logs, but not the OAuth module's (it logs the authorization code).
        let (auth, other) = debug_enabled(&default_directives(2));
        assert!(!auth, "{}", default_directives(2));
        assert!(other);
        let (auth, _) = debug_enabled(&default_directives(9));
        assert!(!auth);
        // Quieter levels never raise it.
        for v in [0, 1] {
            assert_eq!(debug_enabled(&default_directives(v)), (false, false));
        }
        // An explicit RUST_LOG is taken as written.
        assert_eq!(debug_enabled("debug"), (true, true));
    }

    #[test]
    fn the_default_level_leaves_out_rmcp_error_answer_warnings_only() {
        let warn_enabled = |directives: &str, target_is_session: bool| {
            let subscriber = tracing_subscriber::fmt()
                .with_env_filter(tracing_subscriber::EnvFilter::new(directives))
                .with_writer(std::io::sink)
                .finish();
            tracing::subscriber::with_default(subscriber, || {
                if target_is_session {
                    tracing::enabled!(target: switchboard_mcp::SESSION_LOG_TARGET, Level::WARN)
                } else {
                    tracing::enabled!(target: switchboard_mcp::HTTP_LOG_TARGET, Level::WARN)
                }
            })
        };
        assert!(!warn_enabled(&default_directives(0), true));
        assert!(warn_enabled(&default_directives(0), false));
        assert!(warn_enabled(&default_directives(1), true));
    }

    #[test]
    fn the_default_level_leaves_out_the_transport_workers_repeat_of_a_connect_error() {
        let error_enabled = |directives: &str| {
            let subscriber = tracing_subscriber::fmt()
                .with_env_filter(tracing_subscriber::EnvFilter::new(directives))
                .with_writer(std::io::sink)
                .finish();
            tracing::subscriber::with_default(subscriber, || {
                (
                    tracing::enabled!(target: switchboard_mcp::WORKER_LOG_TARGET, Level::ERROR),
                    tracing::enabled!(target: switchboard_mcp::HTTP_BACKEND_LOG_TARGET, Level::ERROR),
                )
            })
        };
        assert_eq!(error_enabled(&default_directives(0)), (false, false));
        assert_eq!(error_enabled(&default_directives(1)), (true, true));
        assert_eq!(error_enabled(&default_directives(2)), (true, true));
    }

    #[test]
    fn progress_reads_as_the_server_reports_it() {
        assert_eq!(
            progress("everything", "slow", 2.0, Some(3.0), None, 80),
            "everything slow: 2/3"
        );
        assert_eq!(
            progress(
                "everything",
                "research",
                1.0,
                None,
                Some("Gathering sources..."),
                80
            ),
            "everything research: 1: Gathering sources..."
        );
        let long = "x".repeat(300);
        assert!(progress("s", "t", 1.5, None, Some(&long), 80).len() < 120);
    }
}
