//! The one error enum of switchboard-core.

/// Errors raised by the pure stages. Classify by variant, never by message text.
#[derive(Debug, thiserror::Error)]
pub enum CoreError {
    /// A catalog file could not be parsed as JSON at all.
    #[error("{source_name}: not valid JSON: {error}")]
    CatalogJson {
        /// Where the bytes came from (a path or a label), for the message.
        source_name: String,
        /// The parser's message, with line and column.
        error: serde_json::Error,
    },
    /// A catalog file parsed as JSON but has neither a `servers` array nor a `tools` array.
    #[error(
        "{source_name}: not a catalog: expected {{\"servers\": [...]}} or a tools/list result {{\"tools\": [...]}}"
    )]
    CatalogShape {
        /// Where the bytes came from.
        source_name: String,
    },
    /// One entry of a catalog file is malformed.
    #[error("{source_name}: {pointer}: {message}")]
    CatalogEntry {
        /// Where the bytes came from.
        source_name: String,
        /// JSON pointer to the bad entry.
        pointer: String,
        /// What is wrong with it.
        message: String,
    },
    /// A glob in an allow or deny list does not parse.
    #[error("invalid glob {pattern:?}: {message}")]
    Glob {
        /// The pattern as written.
        pattern: String,
        /// Why it is invalid.
        message: String,
    },
}

/// An error and its causes on one line ("a: b: c"), skipping a cause whose text the line already
/// holds: transport errors hide the useful part ("Connection refused") two or three sources deep.
pub fn chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut out = err.to_string();
    let mut source = err.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = s.source();
    }
    out
}
