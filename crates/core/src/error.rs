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
