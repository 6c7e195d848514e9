//! The one error type of switchboard-lint: the only things that can go wrong are bad option values.

/// What can go wrong when configuring a lint run. Linting itself never fails: a bad definition is a finding.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum LintError {
    /// `--explain` or `--allow` named a rule that does not exist.
    #[error("unknown rule {rule:?}; `switchboard lint --list-rules` shows them all")]
    UnknownRule {
        /// The id as given.
        rule: String,
    },
    /// A `--fail-on` or `--format` value that is not one of the accepted words.
    #[error("unknown {what} {value:?}; expected one of {expected}")]
    BadValue {
        /// Which option.
        what: &'static str,
        /// The value given.
        value: String,
        /// The accepted values, comma separated.
        expected: &'static str,
    },
}
