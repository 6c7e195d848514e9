//! Token counting of rendered tools arrays, per dialect (exact for OpenAI via tiktoken, estimated elsewhere).
//!
//! [`count_tools`] takes the tools as they will be sent for a dialect (public name, description,
//! parameters schema) and the model id, and returns a [`ToolsRent`]: tokens per tool, the fixed
//! per-request overhead of having tools at all, the total, and how it was obtained. Counting is
//! infallible and offline: tiktoken-rs compiles its encodings in (reference/providers.md §3.4).
//!
//! Per dialect (all sections are reference/providers.md):
//! - **OpenAI** (chat and responses): the functions rendered as TypeScript
//!   (`namespace functions { … }`, see [`openai`]) tokenized with the model's encoding, plus
//!   hmarr/openai-chat-tokens' constants (§3.2): +9 per request with functions, −4 when the
//!   request also has a system message, +1 for `tool_choice: none`, +4 + name tokens for a
//!   forced function. Tokenization is exact; the rendering and constants are reverse-engineered
//!   and were verified against the API for gpt-3.5/gpt-4 (cl100k) and gpt-4o (o200k) — see the
//!   tests. OpenAI publishes no constants for gpt-4.1/gpt-5/o-series or the Responses API;
//!   the same ones are used. [`Method::Exact`] means "exact tokenizer", not "API-verified".
//! - **Anthropic**: an estimate. There is no public Claude tokenizer (§3.1); per tool,
//!   o200k_base tokens of the canonical JSON `{name, description, input_schema}` × a factor
//!   (§3.5): 1.2 for Claude ≤ 4.6 and Haiku 4.5 (range 1.15–1.2, from Anthropic's "tiktoken
//!   undercounts Claude tokens by ~15–20% on typical text", `anthropics/skills`
//!   token-counting.md, 2026-06), 1.56 for the Opus 4.7+ tokenizer family (range 1.15–1.62:
//!   "roughly 1×–1.35× as many tokens", Sonnet 5 "about 30% more", model-migration.md).
//!   **Known error**: Anthropic says the undercount is "much more on code or non-English input",
//!   and JSON schemas are code-like, so the true count can exceed the reported range; no
//!   published figure bounds it. Plus the tool-use system-prompt overhead per model and
//!   `tool_choice` (§3.1), taken from the price data ([`CountOptions::overhead`]) because the
//!   numbers were revised between doc snapshots (346/313 → 496/588 for Sonnet 4.5, §6.1).
//!   The exact count comes from `POST /v1/messages/count_tokens` (free, §3.1) with a key;
//!   [`ToolsRent::compare`] puts that number beside the estimate.
//! - **Gemini**: an estimate, "about 4 characters per token" (§3.3) over the canonical JSON of
//!   `{name, description, parameters}`; Google publishes neither a rendering, nor a fixed tools
//!   overhead, nor an error bound for the rule of thumb, so the range is unknown. The exact count
//!   comes from `models/{m}:countTokens` with a `generateContentRequest`.

pub mod estimate;
pub mod exact;
pub mod openai;
pub mod prices;

use std::fmt;

use serde::Serialize;
use serde_json::Value;
use switchboard_core::Dialect;
use switchboard_core::rent::{
    Counted, ModelPrice, RentReport, ToolLine, ToolOverhead, Workload, group_tokens,
};

/// One tool as it will be sent: the public name, the description and the (sanitized)
/// parameters schema for the dialect.
#[derive(Clone, Copy, Debug)]
pub struct ToolText<'a> {
    /// The public name the provider sees.
    pub name: &'a str,
    /// The description the model reads (empty if none).
    pub description: &'a str,
    /// The parameters / input schema as sent.
    pub parameters: &'a Value,
}

impl<'a> ToolText<'a> {
    /// A tool from its three parts.
    pub fn new(name: &'a str, description: &'a str, parameters: &'a Value) -> Self {
        ToolText {
            name,
            description,
            parameters,
        }
    }
}

/// A tiktoken encoding shipped in tiktoken-rs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Encoding {
    /// GPT-4o, 4.1, 4.5, 5.x, o-series.
    O200kBase,
    /// GPT-4, GPT-3.5.
    Cl100kBase,
}

impl Encoding {
    /// The encoding's tiktoken name.
    pub fn as_str(self) -> &'static str {
        match self {
            Encoding::O200kBase => "o200k_base",
            Encoding::Cl100kBase => "cl100k_base",
        }
    }
}

/// The request's `tool_choice`, which changes the fixed overhead (§3.1, §3.2).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum ToolChoice {
    /// The model decides (the default).
    #[default]
    Auto,
    /// The model must not call a tool.
    None,
    /// The model must call some tool (Anthropic `any`, OpenAI `required`).
    Any,
    /// The model must call this tool (public name).
    Tool(String),
}

/// What else shapes the count besides the tools.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CountOptions {
    /// The request's tool choice.
    pub tool_choice: ToolChoice,
    /// Whether the request has a system message (OpenAI reuses it for the functions: −4, §3.2).
    pub system_message: bool,
    /// The model's tool-use overhead from the price data (`tool_overhead_tokens`), used for
    /// Anthropic (§3.1) and for any dialect whose entry provides it; OpenAI's comes from §3.2.
    pub overhead: Option<ToolOverhead>,
}

/// What a count is based on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum Proxy {
    /// Tokens of a tiktoken encoding.
    Tiktoken(Encoding),
    /// Characters divided by this many.
    CharsPerToken(u64),
}

/// How a [`ToolsRent`] was obtained.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum Method {
    /// The provider's own tokenizer on the documented rendering (OpenAI).
    Exact {
        /// The model's encoding.
        encoding: Encoding,
    },
    /// A proxy count times a calibration factor.
    Estimate {
        /// What was counted.
        proxy: Proxy,
        /// The factor applied to the proxy, in thousandths (1000 = none).
        factor_permille: u64,
        /// The total under the low and high ends of the factor's published range, if any.
        range: Option<(u64, u64)>,
    },
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Method::Exact { encoding } => write!(
                f,
                "exact tokenizer: {} on the rendered functions, plus request constants",
                encoding.as_str()
            ),
            Method::Estimate {
                proxy,
                factor_permille,
                range,
            } => {
                match proxy {
                    Proxy::Tiktoken(e) => write!(
                        f,
                        "estimate: {} tokens × {}.{:02}",
                        e.as_str(),
                        factor_permille / 1000,
                        factor_permille % 1000 / 10
                    )?,
                    Proxy::CharsPerToken(n) => write!(f, "estimate: characters / {n}")?,
                }
                match range {
                    Some((lo, hi)) => write!(
                        f,
                        " (range {}–{} tokens)",
                        group_tokens(*lo),
                        group_tokens(*hi)
                    ),
                    None => f.write_str(" (no published error bound)"),
                }
            }
        }
    }
}

/// The tokens a tools array adds to every request.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ToolsRent {
    /// Tokens per tool, in the order given.
    pub per_tool: Vec<u64>,
    /// Fixed per-request overhead of having tools at all (0 with no tools).
    pub overhead: u64,
    /// `overhead + Σ per_tool`.
    pub total: u64,
    /// How the numbers were obtained.
    pub method: Method,
}

impl ToolsRent {
    /// Put a provider's exact count of the same tools (e.g. from Anthropic's `count_tokens`,
    /// measured as the difference with and without tools, §3.1) beside this count.
    pub fn compare(&self, exact_total: u64) -> Comparison {
        let within_range = match &self.method {
            Method::Estimate {
                range: Some((lo, hi)),
                ..
            } => Some((*lo..=*hi).contains(&exact_total)),
            _ => None,
        };
        Comparison {
            counted: self.total,
            exact: exact_total,
            within_range,
        }
    }
}

/// An offline count beside the provider's exact count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Comparison {
    /// Our total.
    pub counted: u64,
    /// The provider's total.
    pub exact: u64,
    /// Whether the exact total falls in the estimate's stated range (None: no range).
    pub within_range: Option<bool>,
}

impl Comparison {
    /// `exact − counted`: positive when we undercount.
    pub fn difference(&self) -> i64 {
        self.exact as i64 - self.counted as i64
    }

    /// The error relative to the exact count, in thousandths (`(counted − exact) / exact`).
    pub fn error_permille(&self) -> i64 {
        if self.exact == 0 {
            return 0;
        }
        -self.difference() * 1000 / self.exact as i64
    }
}

impl fmt::Display for Comparison {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let e = self.error_permille();
        let sign = if e < 0 { "-" } else { "+" };
        write!(
            f,
            "estimate {} vs exact {} ({sign}{}.{}%)",
            group_tokens(self.counted),
            group_tokens(self.exact),
            e.abs() / 10,
            e.abs() % 10
        )?;
        match self.within_range {
            Some(true) => f.write_str(", within the stated range"),
            Some(false) => f.write_str(", outside the stated range"),
            None => Ok(()),
        }
    }
}

/// hmarr/openai-chat-tokens: tokens added per request when functions are present (§3.2).
pub const OPENAI_FUNCTIONS_OVERHEAD: u64 = 9;
/// hmarr: subtracted when the request has a system message, which the functions reuse (§3.2).
pub const OPENAI_SYSTEM_MESSAGE_OFFSET: u64 = 4;
/// hmarr: added for `function_call: "none"` (§3.2).
pub const OPENAI_CHOICE_NONE: u64 = 1;
/// hmarr: added for a forced function, plus the tokens of its name (§3.2).
pub const OPENAI_CHOICE_FORCED: u64 = 4;

/// Count what `tools` cost on every request to `model` in `dialect`.
pub fn count_tools(
    dialect: Dialect,
    model: &str,
    tools: &[ToolText<'_>],
    options: &CountOptions,
) -> ToolsRent {
    match dialect {
        Dialect::OpenAiChat | Dialect::OpenAiResponses => count_openai(model, tools, options),
        Dialect::Anthropic => count_anthropic(model, tools, options),
        Dialect::Gemini => count_gemini(tools, options),
    }
}

/// Tokens of plain text (a system prompt) for `model` in `dialect`, by the same method as
/// [`count_tools`], without message framing.
pub fn count_text(dialect: Dialect, model: &str, text: &str) -> u64 {
    match dialect {
        Dialect::OpenAiChat | Dialect::OpenAiResponses => {
            openai::tokens(openai::encoding_for(model), text)
        }
        Dialect::Anthropic => estimate::scale(
            openai::tokens(Encoding::O200kBase, text),
            estimate::claude_factors(model).0,
        ),
        Dialect::Gemini => estimate::chars_over_4(text),
    }
}

/// A tool to count, with the server that owns it (for per-server subtotals).
#[derive(Clone, Copy, Debug)]
pub struct ServerTool<'a> {
    /// The owning server's name.
    pub server: &'a str,
    /// The tool as sent.
    pub tool: ToolText<'a>,
}

/// Count `tools` (and `system_prompt`, if any) for `model` and price them: the whole of
/// `switchboard inspect --cost` short of printing. The tool-use overhead comes from `price`
/// unless `options.overhead` is set. What-ifs are added on the result
/// ([`RentReport::what_if_allow_list`], or [`RentReport::what_if`] with the total of a
/// [`count_tools`] of the facade's tools minus its overhead).
pub fn rent_report(
    dialect: Dialect,
    model: &str,
    tools: &[ServerTool<'_>],
    system_prompt: Option<&str>,
    options: &CountOptions,
    price: &ModelPrice,
    workload: Workload,
) -> RentReport {
    let options = CountOptions {
        overhead: options.overhead.or(price.tool_overhead_tokens),
        system_message: options.system_message || system_prompt.is_some(),
        ..options.clone()
    };
    let texts: Vec<ToolText<'_>> = tools.iter().map(|t| t.tool).collect();
    let rent = count_tools(dialect, model, &texts, &options);
    let counted = Counted {
        dialect,
        model: model.to_string(),
        method: rent.method.to_string(),
        tools: tools
            .iter()
            .zip(&rent.per_tool)
            .map(|(t, tokens)| ToolLine {
                public_name: t.tool.name.to_string(),
                server: t.server.to_string(),
                tokens: *tokens,
            })
            .collect(),
        overhead_tokens: rent.overhead,
        system_tokens: system_prompt.map_or(0, |s| count_text(dialect, model, s)),
    };
    RentReport::new(counted, price.clone(), workload)
}

fn overhead_for(choice: &ToolChoice, overhead: Option<ToolOverhead>) -> u64 {
    match (choice, overhead) {
        (_, None) => 0,
        (ToolChoice::Auto | ToolChoice::None, Some(o)) => o.auto,
        (ToolChoice::Any | ToolChoice::Tool(_), Some(o)) => o.any,
    }
}

fn count_openai(model: &str, tools: &[ToolText<'_>], options: &CountOptions) -> ToolsRent {
    let encoding = openai::encoding_for(model);
    let method = Method::Exact { encoding };
    if tools.is_empty() {
        return empty(method);
    }
    let per_tool: Vec<u64> = tools
        .iter()
        .map(|t| openai::tokens(encoding, &openai::render_function(t)))
        .collect();
    // The whole text is tokenized once: merges across block boundaries and the namespace
    // wrapper land in the overhead, so the total is the exact count of the rendered text.
    let mut total =
        openai::tokens(encoding, &openai::render_functions(tools)) + OPENAI_FUNCTIONS_OVERHEAD;
    if options.system_message {
        total = total.saturating_sub(OPENAI_SYSTEM_MESSAGE_OFFSET);
    }
    total += match &options.tool_choice {
        ToolChoice::Auto | ToolChoice::Any => 0,
        ToolChoice::None => OPENAI_CHOICE_NONE,
        ToolChoice::Tool(name) => OPENAI_CHOICE_FORCED + openai::tokens(encoding, name),
    };
    let sum: u64 = per_tool.iter().sum();
    let overhead = total.saturating_sub(sum);
    ToolsRent {
        total: sum + overhead,
        per_tool,
        overhead,
        method,
    }
}

fn count_anthropic(model: &str, tools: &[ToolText<'_>], options: &CountOptions) -> ToolsRent {
    let (point, low, high) = estimate::claude_factors(model);
    if tools.is_empty() {
        return empty(Method::Estimate {
            proxy: Proxy::Tiktoken(Encoding::O200kBase),
            factor_permille: point,
            range: Some((0, 0)),
        });
    }
    let proxy: Vec<u64> = tools.iter().map(estimate::claude_proxy_tokens).collect();
    let per_tool: Vec<u64> = proxy.iter().map(|&p| estimate::scale(p, point)).collect();
    let overhead = overhead_for(&options.tool_choice, options.overhead);
    let at = |f: u64| overhead + proxy.iter().map(|&p| estimate::scale(p, f)).sum::<u64>();
    ToolsRent {
        total: overhead + per_tool.iter().sum::<u64>(),
        per_tool,
        overhead,
        method: Method::Estimate {
            proxy: Proxy::Tiktoken(Encoding::O200kBase),
            factor_permille: point,
            range: Some((at(low), at(high))),
        },
    }
}

fn count_gemini(tools: &[ToolText<'_>], options: &CountOptions) -> ToolsRent {
    let method = Method::Estimate {
        proxy: Proxy::CharsPerToken(4),
        factor_permille: 1000,
        range: None,
    };
    if tools.is_empty() {
        return empty(method);
    }
    let per_tool: Vec<u64> = tools.iter().map(estimate::gemini_tokens).collect();
    let overhead = overhead_for(&options.tool_choice, options.overhead);
    ToolsRent {
        total: overhead + per_tool.iter().sum::<u64>(),
        per_tool,
        overhead,
        method,
    }
}

fn empty(method: Method) -> ToolsRent {
    ToolsRent {
        per_tool: Vec::new(),
        overhead: 0,
        total: 0,
        method,
    }
}

#[cfg(test)]
mod tests;
