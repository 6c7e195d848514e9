//! The terminal's side of a server's form (MCP elicitation) in `chat`: says which server asks
//! and why, asks each field on its own line (re-asking until the answer fits), shows the
//! answers, and sends them only when the person says so; a page the server sends the person to
//! (URL mode) is shown with its host, never opened. `/decline` or `/cancel` at any field
//! ends it; so does the end of the input.

use std::io::Write as _;

use serde_json::{Map, Value};
use switchboard_core::elicitation::{self, Form, Request};

use switchboard_host::dispatch::ElicitationRequest;
use tokio::io::{AsyncBufRead, Lines};

/// What the person said instead of an answer.
enum Stop {
    Decline,
    Cancel,
}

/// Put a server's request to the person; the result for the server.
pub async fn ask<R: AsyncBufRead + Unpin>(
    lines: &mut Lines<R>,
    request: &ElicitationRequest,
) -> Value {
    eprintln!(
        "\nServer {} asks, while {} runs:",
        request.server, request.tool
    );
    let form = match Request::parse(&request.params) {
        Ok(Request::Form(form)) => form,
        Ok(Request::Url { message, url }) => return visit(lines, &message, &url).await,
        Err(why) => {
            eprintln!("  a form switchboard cannot show ({why}); declined.");
            return elicitation::decline();
        }
    };
    match fill(lines, &form, &request.server).await {
        Ok(answers) => Form::accept(answers),
        Err(Stop::Decline) => {
            eprintln!("  declined.");
            elicitation::decline()
        }
        Err(Stop::Cancel) => {
            eprintln!("  cancelled.");
            elicitation::cancel()
        }
    }
}

/// A page the server wants the person to open (URL mode): shown with its host, never opened by
/// switchboard; the person says when they are done there.
async fn visit<R: AsyncBufRead + Unpin>(lines: &mut Lines<R>, message: &str, url: &str) -> Value {
    if !message.trim().is_empty() {
        eprintln!("  {}", message.trim());
    }
    let host = reqwest::Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_string));
    match host {
        Some(host) => eprintln!("  It asks you to open a page on {host}:\n  {url}"),
        None => eprintln!("  It asks you to open:\n  {url}"),
    }
    eprint!(
        "  Open it in your browser if you trust it. Done there? [y = done, n = decline, c = cancel] "
    );
    match read(lines).await {
        Ok(line) if matches!(line.trim(), "y" | "Y" | "yes" | "done") => Form::accept_url(),
        Ok(line) if matches!(line.trim(), "c" | "C" | "cancel") => elicitation::cancel(),
        Err(Stop::Cancel) => elicitation::cancel(),
        _ => {
            eprintln!("  declined.");
            elicitation::decline()
        }
    }
}

async fn fill<R: AsyncBufRead + Unpin>(
    lines: &mut Lines<R>,
    form: &Form,
    server: &str,
) -> Result<Map<String, Value>, Stop> {
    if !form.message.trim().is_empty() {
        eprintln!("  {}", form.message.trim());
    }
    eprintln!("  (/decline or /cancel at any field answers no)");
    let mut answers = Map::new();
    for field in &form.fields {
        let mark = if field.required { "*" } else { "" };
        if let Some(d) = &field.description {
            eprintln!("  {}{mark}: {d}", field.label);
        }
        loop {
            eprint!("  {}{mark} [{}]: ", field.label, field.hint());
            let line = read(lines).await?;
            match field.read(&line) {
                Ok(Some(v)) => {
                    answers.insert(field.name.clone(), v);
                    break;
                }
                Ok(None) => break,
                Err(why) => eprintln!("  {why}"),
            }
        }
    }
    if form.fields.is_empty() {
        eprint!("  Answer yes? [Y/n] ");
    } else {
        eprintln!("  You answer:");
        for field in &form.fields {
            if let Some(v) = answers.get(&field.name) {
                eprintln!("    {}: {}", field.label, field.show(v));
            }
        }
        eprint!("  Send this to {server}? [Y/n] ");
    }
    let line = read(lines).await?;
    if matches!(line.trim(), "" | "y" | "Y" | "yes") {
        Ok(answers)
    } else {
        Err(Stop::Decline)
    }
}

/// One line of input; `/decline`, `/cancel` and the end of the input stop the form.
async fn read<R: AsyncBufRead + Unpin>(lines: &mut Lines<R>) -> Result<String, Stop> {
    let _ = std::io::stderr().flush();
    match lines.next_line().await {
        Ok(Some(line)) => match line.trim() {
            "/decline" => Err(Stop::Decline),
            "/cancel" => Err(Stop::Cancel),
            _ => Ok(line),
        },
        _ => Err(Stop::Cancel),
    }
}
