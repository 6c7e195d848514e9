//! `--system-prompt` and `--system-prompt-file`: the user's own system prompt for `run`, `chat`
//! and `inspect`, in place of the config's.

use std::path::PathBuf;

use anyhow::Context as _;

/// The user's own system prompt.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct SystemPromptArgs {
    /// Your own system prompt, sent first, ahead of the servers' instructions, in place of the
    /// config's (`system_prompt` in switchboard.toml's [settings], mcphost's `system-prompt`).
    #[arg(long, value_name = "TEXT", conflicts_with = "system_prompt_file")]
    pub system_prompt: Option<String>,
    /// --system-prompt read from FILE (UTF-8 text).
    #[arg(long, value_name = "FILE")]
    pub system_prompt_file: Option<PathBuf>,
}

impl SystemPromptArgs {
    /// The prompt given, if any; an unreadable file is an error.
    pub fn read(&self) -> anyhow::Result<Option<String>> {
        if let Some(path) = &self.system_prompt_file {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read --system-prompt-file {}", path.display()))?;
            return Ok(Some(text));
        }
        Ok(self.system_prompt.clone())
    }
}
