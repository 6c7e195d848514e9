//! The one error enum of switchboard-host.

use std::path::PathBuf;

/// Errors of the host library. Config errors carry the file, line and column, and the server
/// they concern, so a user can go straight to the mistake. Secrets never appear in messages.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// The config file could not be read.
    #[error("{}: cannot read config: {source}", path.display())]
    ConfigRead {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The config file is not valid TOML or JSON.
    #[error("{}:{line}:{column}: syntax error: {message}", path.display())]
    ConfigSyntax {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// The parser's message.
        message: String,
    },
    /// The file parsed but is not a config switchboard understands.
    #[error("{}: {message}", path.display())]
    ConfigShape {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A config file cannot be changed as asked (`add`, `remove`, `disable`): nothing was
    /// written.
    #[error("{}: {message}", path.display())]
    ConfigEdit {
        /// The file.
        path: PathBuf,
        /// Why, and what to do instead.
        message: String,
    },
    /// One server entry is wrong; that server is disabled and the others still start.
    #[error("{}:{line}:{column}: server {server:?}: {message}", path.display())]
    ServerEntry {
        /// The file.
        path: PathBuf,
        /// 1-based line of the offending key (or of the server entry).
        line: usize,
        /// 1-based column.
        column: usize,
        /// The server name.
        server: String,
        /// What is wrong and how to fix it.
        message: String,
    },
    /// A profile entry is wrong.
    #[error("{}: profile {profile:?}: {message}", path.display())]
    ProfileEntry {
        /// The file.
        path: PathBuf,
        /// The profile name.
        profile: String,
        /// What is wrong.
        message: String,
    },
    /// `--profile NAME` names no profile.
    #[error("no profile {name:?} in the config; profiles: {known}")]
    UnknownProfile {
        /// The requested name.
        name: String,
        /// The names that exist, comma-separated (or "none").
        known: String,
    },
    /// The pin store could not be opened, read or written.
    #[error("pin store {}: {message}", path.display())]
    PinStore {
        /// The store file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// `pins approve`/`pins diff` named a tool that has never been pinned.
    #[error("no pin for {server}/{tool}; `switchboard pins list` shows what is pinned")]
    NoPin {
        /// The server.
        server: String,
        /// The tool.
        tool: String,
    },
    /// `pins approve` on a tool whose definition has not changed.
    #[error("{server}/{tool} has no changed definition waiting for approval")]
    NothingToApprove {
        /// The server.
        server: String,
        /// The tool.
        tool: String,
    },
    /// The model provider answered with an HTTP error (after retries, where they apply). The
    /// message is the provider's own.
    #[error(
        "{provider} returned HTTP {status}{}: {message}{}",
        attempts_note(*attempts),
        hint.as_deref().map(|h| format!(" ({h})")).unwrap_or_default()
    )]
    ProviderHttp {
        /// The dialect's name (anthropic, openai-chat, ...).
        provider: String,
        /// The HTTP status.
        status: u16,
        /// The provider's own error message.
        message: String,
        /// How many requests were made.
        attempts: u32,
        /// The error says the request does not fit the model's context window.
        context_overflow: bool,
        /// What to do about it, when switchboard knows (a tools array that takes much of it).
        hint: Option<String>,
    },
    /// The model provider could not be reached.
    #[error("cannot reach {url}{}: {detail}", attempts_note(*attempts))]
    ProviderConnect {
        /// The URL (never with a key: keys travel in headers).
        url: String,
        /// The transport's error with its causes.
        detail: String,
        /// How many requests were made.
        attempts: u32,
    },
    /// The provider's reply could not be read.
    #[error("{0}")]
    ProviderReply(#[from] switchboard_providers::ProviderError),
    /// No API key in the environment for a provider that needs one.
    #[error(
        "no API key for {provider}: set {vars} (or pass --base-url for a local server that needs none)"
    )]
    MissingApiKey {
        /// The dialect's name.
        provider: String,
        /// The variables looked at, "A or B".
        vars: String,
    },
    /// `--api-key-env VAR` names a variable that is not set.
    #[error("--api-key-env {var}: {var} is not set (or is empty)")]
    ApiKeyEnvUnset {
        /// The variable.
        var: String,
    },
    /// The transcript file could not be written.
    #[error("transcript {}: {source}", path.display())]
    Transcript {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The provider has no endpoint that counts a request's tokens.
    #[error("{provider} has no endpoint that counts a request's tokens")]
    NoCountingEndpoint {
        /// The provider.
        provider: String,
    },
    /// A cost limit was set for a model whose prices the price table lacks.
    #[error(
        "a cost limit needs the model's prices, and the price table has no input and output price for {model:?} (--prices FILE adds one)"
    )]
    NoPrice {
        /// The model.
        model: String,
    },
    /// The conversation could not be compacted ([`crate::agent::Agent::compact`]); it is
    /// unchanged.
    #[error("the conversation was not compacted: {message}")]
    Compaction {
        /// Why.
        message: String,
    },
    /// A saved conversation (`--conversation`) could not be read, taken up or saved.
    #[error("conversation {}: {message}", path.display())]
    Conversation {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

fn attempts_note(attempts: u32) -> String {
    if attempts > 1 {
        format!(" after {attempts} attempts")
    } else {
        String::new()
    }
}
