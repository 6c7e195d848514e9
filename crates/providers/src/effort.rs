//! Reasoning effort: how one word (`low`, `high`, ...) or a number of tokens reaches each API
//! and model. OpenAI's two APIs take the word as it is; Anthropic and Gemini set thinking in
//! shapes that changed with their model generations, so the model's name decides the shape.

use serde_json::{Value, json};
use switchboard_core::Dialect;

use crate::render::DEFAULT_MAX_TOKENS;

/// What a reasoning effort becomes in one request.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Plan {
    /// OpenAI Chat's `reasoning_effort`, the Responses API's `reasoning.effort`: the word.
    Word(String),
    /// Anthropic from Claude 4.6 on: `thinking: {type: adaptive}` and
    /// `output_config.effort`.
    AnthropicAdaptive(String),
    /// Anthropic before 4.6: `thinking: {type: enabled, budget_tokens}`, with `max_tokens`
    /// above the budget.
    AnthropicBudget { budget: u32, max_tokens: u32 },
    /// Gemini 3 on: `generationConfig.thinkingConfig.thinkingLevel`.
    GeminiLevel(String),
    /// Gemini 2.x, or a number of tokens: `generationConfig.thinkingConfig.thinkingBudget`.
    GeminiBudget(u32),
    /// Thinking left as the model has it by default (`none` for Anthropic).
    Off,
}

impl Plan {
    /// Whether the model thinks under this plan (Anthropic then refuses a set temperature).
    pub(crate) fn thinks(&self) -> bool {
        !matches!(self, Plan::Off)
    }

    /// Anthropic's `thinking` and `output_config` fields, and the `max_tokens` to send.
    pub(crate) fn anthropic(&self, max_tokens: u32) -> (Option<Value>, Option<Value>, u32) {
        match self {
            Plan::AnthropicAdaptive(effort) => (
                Some(json!({"type": "adaptive"})),
                Some(json!({ "effort": effort })),
                max_tokens,
            ),
            Plan::AnthropicBudget {
                budget,
                max_tokens: m,
            } => (
                Some(json!({"type": "enabled", "budget_tokens": budget})),
                None,
                *m,
            ),
            _ => (None, None, max_tokens),
        }
    }

    /// Gemini's `thinkingConfig`, with the thought summaries asked for (shown as the model's
    /// reasoning) unless thinking is off.
    pub(crate) fn gemini(&self) -> Option<Value> {
        match self {
            Plan::GeminiLevel(level) => {
                Some(json!({ "thinkingLevel": level, "includeThoughts": true }))
            }
            Plan::GeminiBudget(0) => Some(json!({ "thinkingBudget": 0 })),
            Plan::GeminiBudget(budget) => {
                Some(json!({ "thinkingBudget": budget, "includeThoughts": true }))
            }
            _ => None,
        }
    }
}

/// Anthropic's smallest thinking budget.
const MIN_BUDGET: u32 = 1024;

/// The thinking budget a word stands for, for APIs that take tokens (Claude before 4.6,
/// Gemini 2.x). The middle three are the ones Google's OpenAI-compatible endpoint uses.
fn budget_of(word: &str) -> Option<u32> {
    Some(match word {
        "minimal" => 1024,
        "low" => 1024,
        "medium" => 8192,
        "high" => 24576,
        "xhigh" | "max" => 32768,
        _ => return None,
    })
}

/// The (major, minor) version in a model name after `family-` (`claude-sonnet-4-5-20250929`
/// gives 4.5, `claude-3-7-sonnet` 3.7, `claude-sonnet-4-20250514` 4.0, `gemini-2.5-flash`
/// 2.5), if it has one. Dates (more than two digits) are not versions.
pub(crate) fn version(model: &str, family: &str) -> Option<(u32, u32)> {
    let at = model.find(family)? + family.len();
    let numbers: Vec<Option<u32>> = model[at..]
        .split(['-', '.', '@', '/', ':'])
        .map(|w| {
            (!w.is_empty() && w.len() <= 2 && w.bytes().all(|b| b.is_ascii_digit()))
                .then(|| w.parse().ok())
                .flatten()
        })
        .collect();
    let first = numbers.iter().position(Option::is_some)?;
    let major = numbers[first]?;
    let minor = numbers.get(first + 1).copied().flatten().unwrap_or(0);
    Some((major, minor))
}

/// How `effort` reaches `dialect`'s `model` with a reply limit of `max_tokens` (`None`: the
/// request's default). An error says why it cannot, in words for the user; the request then
/// goes without it.
pub(crate) fn plan(
    dialect: Dialect,
    model: &str,
    effort: &str,
    max_tokens: Option<u32>,
) -> Result<Plan, String> {
    let word = effort.trim().to_ascii_lowercase();
    let tokens: Option<u32> = word.parse().ok();
    match dialect {
        Dialect::OpenAiChat | Dialect::OpenAiResponses => Ok(Plan::Word(effort.trim().into())),
        Dialect::Anthropic => {
            if matches!(word.as_str(), "none" | "off" | "disabled") {
                return Ok(Plan::Off);
            }
            let adaptive = version(model, "claude-").is_none_or(|v| v >= (4, 6));
            if adaptive {
                if tokens.is_some() {
                    return Err(format!(
                        "{model} takes an effort word (low, medium, high, xhigh, max), not a number of tokens"
                    ));
                }
                // `minimal` is OpenAI's lowest; Anthropic's is `low`.
                let word = if word == "minimal" {
                    "low".into()
                } else {
                    word
                };
                return Ok(Plan::AnthropicAdaptive(word));
            }
            let budget = match tokens.or_else(|| budget_of(&word)) {
                Some(b) => b,
                None => {
                    return Err(format!(
                        "{model} takes a thinking budget: minimal, low, medium, high, xhigh, max, or a number of tokens ({MIN_BUDGET} or more)"
                    ));
                }
            };
            if budget < MIN_BUDGET {
                return Err(format!(
                    "a thinking budget is {MIN_BUDGET} tokens or more (asked: {budget})"
                ));
            }
            match max_tokens {
                // The budget is part of the reply's tokens; make room for the answer.
                None => Ok(Plan::AnthropicBudget {
                    budget,
                    max_tokens: budget.saturating_add(DEFAULT_MAX_TOKENS),
                }),
                Some(m) if m > budget => Ok(Plan::AnthropicBudget {
                    budget,
                    max_tokens: m,
                }),
                Some(m) if m > MIN_BUDGET => Ok(Plan::AnthropicBudget {
                    budget: m - 1,
                    max_tokens: m,
                }),
                Some(m) => Err(format!(
                    "a thinking budget needs a reply limit above {MIN_BUDGET} tokens (--max-tokens is {m})"
                )),
            }
        }
        Dialect::Gemini => {
            if let Some(budget) = tokens {
                return Ok(Plan::GeminiBudget(budget));
            }
            match version(model, "gemini-") {
                Some((major, _)) if major < 3 => match word.as_str() {
                    "none" | "off" | "disabled" => Ok(Plan::GeminiBudget(0)),
                    w => budget_of(w).map(Plan::GeminiBudget).ok_or_else(|| {
                        format!(
                            "{model} takes a thinking budget: none, minimal, low, medium, high, or a number of tokens"
                        )
                    }),
                },
                _ => match word.as_str() {
                    "none" | "off" | "disabled" => Err(format!(
                        "{model} always thinks; its lowest level is `minimal` (Flash) or `low`"
                    )),
                    _ => Ok(Plan::GeminiLevel(word)),
                },
            }
        }
    }
}

/// How `effort` reaches `dialect`'s `model` with a reply limit of `max_tokens` (`None`: the
/// default), in the API's own fields: `reasoning_effort: "low"`, `thinking: {"type":
/// "adaptive"}, output_config: {"effort": "low"}`, `thinkingConfig: {"thinkingLevel": "low"}`.
/// An error says why it cannot reach that model; [`crate::render_request`] then leaves it out.
///
/// OpenAI's APIs take the word as written. Anthropic's Claude 4.6 and later (and a model whose
/// name has no Claude version) get adaptive thinking with the word as its effort (`minimal`
/// becomes `low`); earlier Claude models get a thinking budget (`low` 1,024 tokens, `medium`
/// 8,192, `high` 24,576, `xhigh` and `max` 32,768, or a number), with `max_tokens` raised
/// above it when it was not set. Gemini 3 and later get the word as `thinkingLevel`, Gemini
/// 2.x a `thinkingBudget` (the same numbers; `none` is 0); a number is a budget for either.
/// `none` leaves Anthropic's thinking off.
pub fn reasoning_effort_fields(
    dialect: Dialect,
    model: &str,
    effort: &str,
    max_tokens: Option<u32>,
) -> Result<String, String> {
    let plan = plan(dialect, model, effort, max_tokens)?;
    let text = |v: Option<Value>| v.map(|v| v.to_string()).unwrap_or_default();
    Ok(match (&plan, dialect) {
        (Plan::Word(w), Dialect::OpenAiChat) => format!("reasoning_effort: {w:?}"),
        (Plan::Word(w), _) => format!("reasoning: {{\"effort\": {w:?}}}"),
        (Plan::Off, _) => "no thinking (the model's default)".into(),
        (Plan::GeminiLevel(_) | Plan::GeminiBudget(_), _) => {
            format!("thinkingConfig: {}", text(plan.gemini()))
        }
        (_, _) => {
            let (thinking, output, max) = plan.anthropic(max_tokens.unwrap_or(DEFAULT_MAX_TOKENS));
            let mut s = format!("thinking: {}", text(thinking));
            if let Some(o) = output {
                s.push_str(&format!(", output_config: {o}"));
            }
            if max_tokens.unwrap_or(DEFAULT_MAX_TOKENS) != max {
                s.push_str(&format!(", max_tokens: {max}"));
            }
            s
        }
    })
}

/// The reply limit `dialect`'s body carries for a `max_tokens` setting and a reasoning
/// effort: Anthropic's is required (the [`DEFAULT_MAX_TOKENS`] when not set) and raised above a
/// thinking budget; the others carry the setting as it is.
pub fn max_tokens_in_body(
    dialect: Dialect,
    model: &str,
    effort: Option<&str>,
    max_tokens: Option<u32>,
) -> Option<u32> {
    if dialect != Dialect::Anthropic {
        return max_tokens;
    }
    let plan = effort
        .and_then(|e| plan(dialect, model, e, max_tokens).ok())
        .unwrap_or(Plan::Off);
    Some(plan.anthropic(max_tokens.unwrap_or(DEFAULT_MAX_TOKENS)).2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_read_from_model_names_and_dates_are_not_versions() {
        let claude = |m| version(m, "claude-");
        assert_eq!(claude("claude-sonnet-4-5-20250929"), Some((4, 5)));
        assert_eq!(claude("claude-3-7-sonnet-20250219"), Some((3, 7)));
        assert_eq!(claude("claude-sonnet-4-20250514"), Some((4, 0)));
        assert_eq!(claude("claude-opus-4-6"), Some((4, 6)));
        assert_eq!(claude("anthropic/claude-opus-4.7"), Some((4, 7)));
        assert_eq!(claude("claude-mythos-preview"), None);
        assert_eq!(claude("gpt-5"), None);
        assert_eq!(version("gemini-2.5-flash", "gemini-"), Some((2, 5)));
        assert_eq!(
            version("models/gemini-3-pro-preview", "gemini-"),
            Some((3, 0))
        );
    }

    #[test]
    fn each_generation_gets_its_own_shape() {
        let p = |d, m, e, max| plan(d, m, e, max);
        assert_eq!(
            p(Dialect::Anthropic, "claude-opus-4-7", "high", None),
            Ok(Plan::AnthropicAdaptive("high".into()))
        );
        assert_eq!(
            p(Dialect::Anthropic, "claude-sonnet-4-6", "minimal", None),
            Ok(Plan::AnthropicAdaptive("low".into()))
        );
        assert_eq!(
            p(Dialect::Anthropic, "claude-sonnet-4-5", "medium", None),
            Ok(Plan::AnthropicBudget {
                budget: 8192,
                max_tokens: 8192 + DEFAULT_MAX_TOKENS
            })
        );
        // A limit set below the budget keeps the limit and shrinks the budget.
        assert_eq!(
            p(Dialect::Anthropic, "claude-haiku-4-5", "high", Some(4000)),
            Ok(Plan::AnthropicBudget {
                budget: 3999,
                max_tokens: 4000
            })
        );
        assert!(p(Dialect::Anthropic, "claude-haiku-4-5", "low", Some(1000)).is_err());
        assert!(p(Dialect::Anthropic, "claude-3-7-sonnet", "500", None).is_err());
        assert!(p(Dialect::Anthropic, "claude-opus-4-7", "4000", None).is_err());
        assert!(p(Dialect::Anthropic, "claude-sonnet-4-5", "extreme", None).is_err());
        assert_eq!(
            p(Dialect::Anthropic, "claude-opus-4-7", "none", None),
            Ok(Plan::Off)
        );
        assert_eq!(
            p(Dialect::Gemini, "gemini-3-pro-preview", "low", None),
            Ok(Plan::GeminiLevel("low".into()))
        );
        assert_eq!(
            p(Dialect::Gemini, "gemini-2.5-flash", "none", None),
            Ok(Plan::GeminiBudget(0))
        );
        assert_eq!(
            p(Dialect::Gemini, "gemini-2.5-pro", "2048", None),
            Ok(Plan::GeminiBudget(2048))
        );
        assert!(p(Dialect::Gemini, "gemini-3-pro-preview", "none", None).is_err());
        assert_eq!(
            p(Dialect::OpenAiChat, "gpt-5", " High ", None),
            Ok(Plan::Word("High".into()))
        );
    }

    #[test]
    fn the_limit_in_the_body_makes_room_for_a_budget() {
        let limit = |model, effort, max| max_tokens_in_body(Dialect::Anthropic, model, effort, max);
        assert_eq!(
            limit("claude-sonnet-4-5", None, None),
            Some(DEFAULT_MAX_TOKENS)
        );
        assert_eq!(
            limit("claude-sonnet-4-5", Some("high"), None),
            Some(24576 + DEFAULT_MAX_TOKENS)
        );
        assert_eq!(
            limit("claude-sonnet-4-5", Some("high"), Some(900)),
            Some(900)
        );
        assert_eq!(
            limit("claude-opus-4-7", Some("high"), None),
            Some(DEFAULT_MAX_TOKENS)
        );
        assert_eq!(
            max_tokens_in_body(Dialect::Gemini, "gemini-2.5-pro", Some("high"), None),
            None
        );
    }

    #[test]
    fn the_fields_are_described_as_sent() {
        assert_eq!(
            reasoning_effort_fields(Dialect::Anthropic, "claude-opus-4-7", "low", None).unwrap(),
            r#"thinking: {"type":"adaptive"}, output_config: {"effort":"low"}"#
        );
        assert_eq!(
            reasoning_effort_fields(Dialect::Anthropic, "claude-sonnet-4-5", "low", None).unwrap(),
            r#"thinking: {"budget_tokens":1024,"type":"enabled"}, max_tokens: 5120"#
        );
        assert_eq!(
            reasoning_effort_fields(Dialect::Gemini, "gemini-3-flash", "minimal", None).unwrap(),
            r#"thinkingConfig: {"includeThoughts":true,"thinkingLevel":"minimal"}"#
        );
        assert_eq!(
            reasoning_effort_fields(Dialect::OpenAiResponses, "o3", "low", None).unwrap(),
            r#"reasoning: {"effort": "low"}"#
        );
    }
}
