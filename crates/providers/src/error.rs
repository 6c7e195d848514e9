//! The one error enum of switchboard-providers.

/// Why a tool cannot be sent to a dialect. Classify by variant and `rule`, never by message.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ProviderError {
    /// The tool's input schema cannot be made acceptable to the dialect; the tool is excluded.
    #[error("{rule} at {pointer:?}: {message}")]
    Unacceptable {
        /// Stable id of the rule that failed.
        rule: &'static str,
        /// JSON pointer into the schema.
        pointer: String,
        /// What is wrong, for people.
        message: String,
    },
}
