//! Offline estimates for dialects without a public tokenizer: Anthropic (o200k × a per-family factor) and Gemini (chars / 4).
//!
//! Both estimate a tool from the canonical JSON of what the dialect sends for it (keys sorted,
//! no whitespace), since neither provider documents how tools are rendered into the prompt
//! (reference/providers.md §3.1, §3.3).

use serde_json::{Map, Value};

use super::openai::tokens;
use super::{Encoding, ToolText};

/// Anthropic per-tool factor over o200k_base, in thousandths, for models on the pre-Opus-4.7
/// tokenizer (Claude ≤ 4.6, Haiku 4.5): §3.5 gives k ≈ 1.15–1.2, from Anthropic's statement
/// that tiktoken "undercounts Claude tokens by ~15–20% on typical text, and by much more on code
/// or non-English input" (`anthropics/skills` token-counting.md, 2026-06). We take the top of
/// the range: rent is better over- than under-stated.
pub const CLAUDE_FACTOR: u64 = 1_200;
/// Low end of that range.
pub const CLAUDE_FACTOR_LOW: u64 = 1_150;
/// Factor for models on the tokenizer introduced with Opus 4.7 (Opus 4.7/4.8/5, Sonnet 5, Fable
/// and Mythos 5): "roughly 1×–1.35× as many tokens" as before, Sonnet 5 "about 30% more" than
/// Sonnet 4.6 (§3.1 "Tokenizers", model-migration.md). Point estimate 1.2 × 1.3 = 1.56.
pub const CLAUDE_NEW_FACTOR: u64 = 1_560;
/// Low end: 1.15 × 1.0.
pub const CLAUDE_NEW_FACTOR_LOW: u64 = 1_150;
/// High end: 1.2 × 1.35 = 1.62.
pub const CLAUDE_NEW_FACTOR_HIGH: u64 = 1_620;

/// Whether `model` uses Anthropic's newer tokenizer (§3.1: Opus 4.7 introduced it; Opus 4.8,
/// Fable 5 and Sonnet 5 use it too; Opus 5 and Mythos 5 are of that generation).
pub fn claude_new_tokenizer(model: &str) -> bool {
    [
        "opus-4-7", "opus-4.7", "opus-4-8", "opus-4.8", "opus-5", "sonnet-5", "fable", "mythos",
    ]
    .iter()
    .any(|m| model.contains(m))
}

/// `(point, low, high)` factors in thousandths for a Claude model.
pub fn claude_factors(model: &str) -> (u64, u64, u64) {
    if claude_new_tokenizer(model) {
        (
            CLAUDE_NEW_FACTOR,
            CLAUDE_NEW_FACTOR_LOW,
            CLAUDE_NEW_FACTOR_HIGH,
        )
    } else {
        (CLAUDE_FACTOR, CLAUDE_FACTOR_LOW, CLAUDE_FACTOR)
    }
}

/// `ceil(n × factor / 1000)`.
pub fn scale(n: u64, factor_permille: u64) -> u64 {
    (n * factor_permille).div_ceil(1000)
}

/// o200k_base tokens of a Claude tool definition as sent (`name`, `description`,
/// `input_schema`), before the factor.
pub fn claude_proxy_tokens(tool: &ToolText<'_>) -> u64 {
    tokens(
        Encoding::O200kBase,
        &canonical(&definition(tool, "input_schema")),
    )
}

/// Gemini's documented rule of thumb, "about 4 characters per token"
/// (<https://ai.google.dev/gemini-api/docs/tokens>, §3.3), on the function declaration as sent.
pub fn gemini_tokens(tool: &ToolText<'_>) -> u64 {
    chars_over_4(&canonical(&definition(tool, "parameters")))
}

/// `ceil(chars / 4)`, counting Unicode scalar values.
pub fn chars_over_4(text: &str) -> u64 {
    (text.chars().count() as u64).div_ceil(4)
}

fn definition(tool: &ToolText<'_>, schema_key: &str) -> Value {
    let mut m = Map::new();
    m.insert("name".into(), Value::String(tool.name.into()));
    if !tool.description.is_empty() {
        m.insert("description".into(), Value::String(tool.description.into()));
    }
    m.insert(schema_key.into(), tool.parameters.clone());
    Value::Object(m)
}

/// Compact JSON with object keys sorted at every level, whatever order the map keeps, so an
/// estimate does not depend on serde_json's `preserve_order` feature (the same canonical form
/// that content hashes use).
pub use switchboard_core::hash::canonical;
