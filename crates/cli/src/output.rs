//! Terminal output: logging setup, colour (off under NO_COLOR or when not a terminal), tables
//! and progress spinners. Everything the CLI prints goes through here or `println!`.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

/// Logs go to stderr; -v raises the level, RUST_LOG overrides it.
pub fn init_logging(verbose: u8) {
    let default = match verbose {
        0 => "warn",
        1 => "info",
        _ => "debug",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(|| RedactedStderr)
        .with_ansi(color_on_stderr())
        .try_init();
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

fn color_on_stderr() -> bool {
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

/// Print a JSON value, pretty, on stdout.
pub fn print_json(value: &serde_json::Value) {
    println!(
        "{}",
        serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
    );
}
