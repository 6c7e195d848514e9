//! The one error enum of switchboard-providers.

use switchboard_core::Dialect;

/// What went wrong in this crate. Classify by variant and `rule`, never by message.
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
    /// A response body or stream event is not what the dialect's API sends.
    #[error("cannot read the {dialect} response: {message}")]
    Decode {
        /// The dialect being decoded.
        dialect: Dialect,
        /// What is wrong, for people.
        message: String,
    },
    /// The provider reported an error inside a successful response (e.g. an `error` event in
    /// a stream).
    #[error("{dialect} reported an error: {message}")]
    Api {
        /// The dialect that reported it.
        dialect: Dialect,
        /// The provider's own message.
        message: String,
    },
}

impl ProviderError {
    pub(crate) fn decode(dialect: Dialect, message: impl Into<String>) -> Self {
        ProviderError::Decode {
            dialect,
            message: message.into(),
        }
    }
}
