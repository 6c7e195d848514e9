//! Provider dialects: the wire formats a tools array can be rendered into.

use serde::{Deserialize, Serialize};

/// One provider's wire format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Dialect {
    /// Anthropic Messages API.
    #[serde(rename = "anthropic")]
    Anthropic,
    /// OpenAI Chat Completions (also Ollama, llama.cpp, vLLM, LM Studio).
    #[serde(rename = "openai-chat")]
    OpenAiChat,
    /// OpenAI Responses API.
    #[serde(rename = "openai-responses")]
    OpenAiResponses,
    /// Google Gemini generateContent.
    #[serde(rename = "gemini")]
    Gemini,
}

impl Dialect {
    /// Every dialect, in display order.
    pub const ALL: [Dialect; 4] = [
        Dialect::Anthropic,
        Dialect::OpenAiChat,
        Dialect::OpenAiResponses,
        Dialect::Gemini,
    ];

    /// The name used on the command line and in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Dialect::Anthropic => "anthropic",
            Dialect::OpenAiChat => "openai-chat",
            Dialect::OpenAiResponses => "openai-responses",
            Dialect::Gemini => "gemini",
        }
    }
}

impl std::fmt::Display for Dialect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Dialect {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Dialect::ALL
            .into_iter()
            .find(|d| d.as_str() == s)
            .ok_or_else(|| {
                // The names people type for a provider rather than for its API.
                let hint = match s.to_ascii_lowercase().as_str() {
                    "openai" | "azure" | "azure-openai" | "openrouter" | "ollama" | "vllm" => {
                        " (OpenAI's APIs are two: openai-chat for Chat Completions, which \
                         OpenAI-compatible servers speak, and openai-responses for the \
                         Responses API)"
                    }
                    "claude" => " (Claude's API is anthropic)",
                    "google" | "google-ai" | "gemini-api" => " (Google's Gemini API is gemini)",
                    _ => "",
                };
                format!(
                    "unknown provider {s:?}; expected one of anthropic, openai-chat, openai-responses, gemini{hint}"
                )
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_dialect_parses_from_its_name_and_a_providers_name_gets_a_hint() {
        for d in Dialect::ALL {
            assert_eq!(d.as_str().parse::<Dialect>(), Ok(d));
        }
        let openai = "openai".parse::<Dialect>().unwrap_err();
        assert!(
            openai.contains("openai-chat for Chat Completions"),
            "{openai}"
        );
        assert!(
            "claude"
                .parse::<Dialect>()
                .unwrap_err()
                .ends_with("(Claude's API is anthropic)")
        );
        assert!(!"nope".parse::<Dialect>().unwrap_err().contains('('));
    }
}
