//! Rent arithmetic: what a tools array costs per request, per session and per month, exact until display.
//!
//! "Rent" is the number of input tokens the tools array (plus the provider's fixed tool-use
//! overhead) adds to every request; "cost" is rent in money. Counting tokens is the job of
//! `switchboard_providers::count`; this module only multiplies.
//!
//! Exactness: prices are decimals with at most six places (`$0.075/MTok`), multipliers too
//! (`1.25`, `0.1`), so every amount is an integer number of attodollars (1e-18 USD):
//! `tokens × price_in_micro_dollars_per_MTok × multiplier_in_millionths`. Nothing is rounded
//! until [`Usd::display`]; the one division (spreading a cached session over its turns for a
//! monthly figure) is floored at 1e-18 USD and says so. This is why 780 tokens at $3/MTok for
//! 200,000 requests is exactly $468, not the $460 a per-request figure rounded to $0.0023 gives.
//!
//! Caching model (reference/providers.md §4): the tools array is the front of the cacheable
//! prefix (Anthropic renders tools → system → messages, §4.1; OpenAI caches the whole request
//! prefix, §4.2). In a session of N turns the first turn writes the cache (at the write
//! multiplier: 1.25× for Anthropic's 5-minute cache, 1× for OpenAI) and later turns read it (at
//! the read multiplier), but only when the prefix reaches the model's minimum cacheable length;
//! a shorter prefix "silently doesn't cache" (§4.1) and pays the plain input price every turn.
//! Not modelled: OpenAI's 128-token cache steps (§4.2), cache expiry between turns, and the 1-hour
//! cache tier; use a price entry with other multipliers for that.
//!
//! Prices are data, not constants (DESIGN.md): [`Prices`] deserializes the repository's
//! `data/prices.toml`; the TOML text itself is parsed outside core (core does no I/O and does not
//! depend on a TOML parser).

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::dialect::Dialect;

/// Attodollars per dollar: the unit of [`Usd`].
const ATTO_PER_USD: u128 = 1_000_000_000_000_000_000;
/// Scale of [`PerMTok`] (micro-dollars) and [`Multiplier`] (millionths).
const MICRO: u128 = 1_000_000;

/// An exact amount of US dollars, stored in attodollars (1e-18 USD).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Usd(u128);

impl Usd {
    /// Zero dollars.
    pub const ZERO: Usd = Usd(0);

    /// An amount in attodollars (1e-18 USD).
    pub fn from_atto(atto: u128) -> Self {
        Usd(atto)
    }

    /// An amount in micro-dollars (1e-6 USD): `from_micro(15_600)` = $0.0156.
    pub fn from_micro(micro: u128) -> Self {
        Usd(micro.saturating_mul(ATTO_PER_USD / MICRO))
    }

    /// Parse a decimal amount such as `"0.50"` or `"$2"` (at most six places).
    pub fn parse(s: &str) -> Result<Self, String> {
        let t = s.trim();
        parse_fixed6(t.strip_prefix('$').unwrap_or(t)).map(|m| Usd::from_micro(u128::from(m)))
    }

    /// The amount in attodollars.
    pub fn atto(self) -> u128 {
        self.0
    }

    /// The amount as a float, for chart geometry only (never for arithmetic).
    pub fn as_f64(self) -> f64 {
        self.0 as f64 / ATTO_PER_USD as f64
    }

    /// Multiply by a count (requests, turns). Saturates instead of wrapping; realistic inputs
    /// stay below 1e34 attodollars, far from `u128::MAX` (3.4e38).
    pub fn times(self, n: u64) -> Usd {
        Usd(self.0.saturating_mul(u128::from(n)))
    }

    /// Sum of two amounts.
    pub fn plus(self, other: Usd) -> Usd {
        Usd(self.0.saturating_add(other.0))
    }

    /// `$` amount rounded half-up to `places` decimals, with thousands separators:
    /// `Usd(0.0156).fixed(4)` = `"$0.0156"`, `Usd(3120).fixed(2)` = `"$3,120.00"`.
    pub fn fixed(self, places: u32) -> String {
        let places = places.min(18);
        let unit = 10u128.pow(18 - places);
        let scaled = (self.0 + unit / 2) / unit;
        let scale = 10u128.pow(places);
        let whole = group_thousands(scaled / scale);
        if places == 0 {
            format!("${whole}")
        } else {
            let frac = scaled % scale;
            format!("${whole}.{frac:0width$}", width = places as usize)
        }
    }

    /// A readable rounding: cents for amounts of a dollar or more, otherwise enough decimals for
    /// three significant digits (`$0.0156`, `$0.00234`, `$0.624`), at most ten.
    pub fn display(self) -> String {
        if self.0 >= ATTO_PER_USD {
            return self.fixed(2);
        }
        if self.0 == 0 {
            return self.fixed(2);
        }
        // Position of the first significant decimal digit (1 = tenths).
        let mut first = 1u32;
        let mut threshold = ATTO_PER_USD / 10;
        while self.0 < threshold && first < 10 {
            first += 1;
            threshold /= 10;
        }
        self.fixed((first + 2).clamp(2, 10))
    }
}

impl fmt::Display for Usd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.display())
    }
}

impl Serialize for Usd {
    /// As a decimal string with all 18 places, so JSON consumers lose nothing.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let whole = self.0 / ATTO_PER_USD;
        let frac = self.0 % ATTO_PER_USD;
        s.serialize_str(&format!("{whole}.{frac:018}"))
    }
}

fn group_thousands(n: u128) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Group a token count with thousands separators (`5,200`), as the views print them.
pub fn group_tokens(n: u64) -> String {
    group_thousands(u128::from(n))
}

/// A price in US dollars per million input tokens, exact to the micro-dollar.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PerMTok(u64);

impl PerMTok {
    /// A price given in micro-dollars per million tokens: `$3/MTok` = `from_micro(3_000_000)`.
    pub fn from_micro(micro: u64) -> Self {
        PerMTok(micro)
    }

    /// Parse a decimal such as `"3"`, `"0.075"` (at most six places).
    pub fn parse(s: &str) -> Result<Self, String> {
        parse_fixed6(s).map(PerMTok)
    }

    /// Micro-dollars per million tokens.
    pub fn micro(self) -> u64 {
        self.0
    }

    /// What `tokens` input tokens cost at this price times `multiplier`.
    pub fn cost(self, tokens: u64, multiplier: Multiplier) -> Usd {
        Usd(u128::from(tokens)
            .saturating_mul(u128::from(self.0))
            .saturating_mul(u128::from(multiplier.0)))
    }
}

impl fmt::Display for PerMTok {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "${}/MTok", trim_fixed6(self.0, 2))
    }
}

/// A price multiplier (cache write 1.25×, cache read 0.1×), exact to the millionth.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Multiplier(u64);

impl Multiplier {
    /// 1×: the plain input price.
    pub const ONE: Multiplier = Multiplier(1_000_000);

    /// A multiplier in millionths: 1.25× = `from_millionths(1_250_000)`.
    pub fn from_millionths(m: u64) -> Self {
        Multiplier(m)
    }

    /// Parse a decimal such as `"1.25"` or `"0.1"` (at most six places).
    pub fn parse(s: &str) -> Result<Self, String> {
        parse_fixed6(s).map(Multiplier)
    }

    /// Millionths.
    pub fn millionths(self) -> u64 {
        self.0
    }
}

impl Default for Multiplier {
    fn default() -> Self {
        Multiplier::ONE
    }
}

impl fmt::Display for Multiplier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}×", trim_fixed6(self.0, 0))
    }
}

/// Parse a non-negative decimal with at most six places into millionths.
fn parse_fixed6(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let (whole, frac) = s.split_once('.').unwrap_or((s, ""));
    let digits = |t: &str| t.chars().all(|c| c.is_ascii_digit());
    if whole.is_empty() || !digits(whole) || !digits(frac) {
        return Err(format!("{s:?} is not a non-negative decimal number"));
    }
    let frac = frac.trim_end_matches('0');
    if frac.len() > 6 {
        return Err(format!("{s:?} has more than six decimal places"));
    }
    let whole: u64 = whole.parse().map_err(|_| format!("{s:?} is too large"))?;
    let frac_value: u64 = if frac.is_empty() {
        0
    } else {
        frac.parse::<u64>()
            .map_err(|_| format!("{s:?} is not a decimal"))?
            * 10u64.pow(6 - frac.len() as u32)
    };
    whole
        .checked_mul(1_000_000)
        .and_then(|w| w.checked_add(frac_value))
        .ok_or_else(|| format!("{s:?} is too large"))
}

/// Millionths as a decimal with at least `min_places` places and no needless trailing zeros.
fn trim_fixed6(v: u64, min_places: usize) -> String {
    let s = format!("{}.{:06}", v / 1_000_000, v % 1_000_000);
    let (whole, frac) = s.split_once('.').unwrap_or((&s, ""));
    let mut frac = frac.trim_end_matches('0').to_string();
    while frac.len() < min_places {
        frac.push('0');
    }
    if frac.is_empty() {
        whole.to_string()
    } else {
        format!("{whole}.{frac}")
    }
}

/// How a decimal may be written in a prices file: `3`, `3.0`, or `"3.00"`.
#[derive(Deserialize)]
#[serde(untagged)]
enum DecimalRepr {
    Int(u64),
    Float(f64),
    Text(String),
}

impl DecimalRepr {
    fn millionths(self) -> Result<u64, String> {
        match self {
            DecimalRepr::Int(i) => i
                .checked_mul(1_000_000)
                .ok_or_else(|| format!("{i} is too large")),
            // Rust prints the shortest decimal that round-trips to the same f64 and never uses
            // exponent notation, so `0.075` comes back as "0.075" and parses exactly.
            DecimalRepr::Float(f) if f.is_finite() && f >= 0.0 => parse_fixed6(&format!("{f}")),
            DecimalRepr::Float(f) => Err(format!("{f} is not a non-negative number")),
            DecimalRepr::Text(s) => parse_fixed6(&s),
        }
    }
}

impl<'de> Deserialize<'de> for PerMTok {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        DecimalRepr::deserialize(d)?
            .millionths()
            .map(PerMTok)
            .map_err(serde::de::Error::custom)
    }
}

impl<'de> Deserialize<'de> for Multiplier {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        DecimalRepr::deserialize(d)?
            .millionths()
            .map(Multiplier)
            .map_err(serde::de::Error::custom)
    }
}

impl Serialize for PerMTok {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(self.0 as f64 / 1e6)
    }
}

impl Serialize for Multiplier {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(self.0 as f64 / 1e6)
    }
}

/// The fixed tool-use overhead a provider adds once per request when tools are present, by
/// `tool_choice` (Anthropic's table in reference/providers.md §3.1 has two columns).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolOverhead {
    /// Tokens with `tool_choice` `auto` or `none`.
    pub auto: u64,
    /// Tokens with `tool_choice` `any` or a forced `tool`.
    pub any: u64,
}

/// One model's input price and the per-model facts rent needs, with the date they were true.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelPrice {
    /// Model id as sent to the provider; also matches dated variants (`claude-sonnet-4-5`
    /// matches `claude-sonnet-4-5-20250929`), see [`Prices::model`].
    pub id: String,
    /// The dialect the model is normally spoken to in (decides how tools are counted).
    pub dialect: Dialect,
    /// Base input price.
    pub input_per_mtok: PerMTok,
    /// Output price (a reasoning model's reasoning tokens are output tokens), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_per_mtok: Option<PerMTok>,
    /// Price multiplier of a cache write (Anthropic 5-minute: 1.25; OpenAI: 1, no write fee).
    pub cache_write_multiplier: Multiplier,
    /// Price multiplier of a cache read (Anthropic: 0.1; OpenAI: 0.1 to 0.5 by family).
    pub cache_read_multiplier: Multiplier,
    /// Shortest prefix, in tokens, that the provider caches at all.
    pub min_cacheable_tokens: u64,
    /// Tool-use system-prompt overhead per request, if the provider publishes one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_overhead_tokens: Option<ToolOverhead>,
    /// Context window in tokens.
    pub context_window: u64,
    /// The date the price and facts were read (`YYYY-MM-DD`).
    pub date: String,
    /// Where they were read.
    pub source: String,
}

/// A table of model prices, as in `data/prices.toml` (`[[model]]` entries).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Prices {
    /// Free-form note on where the table comes from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Every model entry, in file order.
    #[serde(default, rename = "model")]
    pub models: Vec<ModelPrice>,
}

impl Prices {
    /// The entry for `model`: an exact id match, else the longest entry id that `model` extends
    /// with a version suffix only: a date (`claude-sonnet-4-5-20250929`, `gpt-4o-2024-08-06`),
    /// `-latest`, or Vertex's `@…` (`claude-sonnet-4-5@20250929`). Other suffixes name another
    /// model (`gpt-4o-mini` is not `gpt-4o`) and do not match.
    pub fn model(&self, model: &str) -> Option<&ModelPrice> {
        if let Some(exact) = self.models.iter().find(|m| m.id == model) {
            return Some(exact);
        }
        self.models
            .iter()
            .filter(|m| {
                model
                    .strip_prefix(m.id.as_str())
                    .is_some_and(is_version_suffix)
            })
            .max_by_key(|m| m.id.len())
    }
}

fn is_version_suffix(rest: &str) -> bool {
    if rest.starts_with('@') {
        return true;
    }
    let Some(v) = rest.strip_prefix('-') else {
        return false;
    };
    v == "latest"
        || (v.chars().all(|c| c.is_ascii_digit() || c == '-')
            && v.chars().filter(char::is_ascii_digit).count() >= 6)
}

/// The traffic a cost is computed for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Workload {
    /// Requests (turns) per session: the tools array is sent on every one.
    pub turns: u64,
    /// Requests per month.
    pub requests_per_month: u64,
}

impl Default for Workload {
    /// 40 turns per session and 200,000 requests a month: the seed's worked examples.
    fn default() -> Self {
        Workload {
            turns: 40,
            requests_per_month: 200_000,
        }
    }
}

/// What a number of prefix tokens costs under a workload and a model's prices.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Bill {
    /// Tokens billed on every request.
    pub tokens: u64,
    /// One request at the plain input price.
    pub per_request: Usd,
    /// One session of `turns` requests, no caching.
    pub per_session: Usd,
    /// One session with prompt caching: one write, then reads. Equal to `per_session` when
    /// the prefix is below the model's minimum (`cached` is then false).
    pub per_session_cached: Usd,
    /// Whether the prefix these tokens sit in reaches the model's minimum cacheable length.
    pub cached: bool,
    /// `requests_per_month` requests at the plain input price.
    pub per_month: Usd,
    /// `requests_per_month` requests grouped into sessions of `turns`, with caching:
    /// `per_session_cached × requests / turns`, floored at 1e-18 USD.
    pub per_month_cached: Usd,
}

/// Price `tokens` input tokens that sit at the front of a cacheable prefix of `prefix_tokens`
/// (the prefix decides whether caching applies at all: a 720-token tools array behind a long
/// system prompt is cached, on its own it may not be).
pub fn bill(tokens: u64, prefix_tokens: u64, workload: Workload, price: &ModelPrice) -> Bill {
    let plain = price.input_per_mtok.cost(tokens, Multiplier::ONE);
    let per_session = plain.times(workload.turns);
    let cached = workload.turns > 0 && prefix_tokens >= price.min_cacheable_tokens;
    let per_session_cached = if cached {
        let write = price
            .input_per_mtok
            .cost(tokens, price.cache_write_multiplier);
        let read = price
            .input_per_mtok
            .cost(tokens, price.cache_read_multiplier);
        write.plus(read.times(workload.turns - 1))
    } else {
        per_session
    };
    let per_month = plain.times(workload.requests_per_month);
    let per_month_cached = if workload.turns == 0 {
        per_month
    } else {
        Usd(per_session_cached.times(workload.requests_per_month).atto()
            / u128::from(workload.turns))
    };
    Bill {
        tokens,
        per_request: plain,
        per_session,
        per_session_cached,
        cached,
        per_month,
        per_month_cached,
    }
}

/// What the tokens a conversation used cost at a model's prices.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct UsageCost {
    /// Input: fresh tokens at the base price, cache reads and writes at their multipliers.
    pub input: Usd,
    /// Output, when the table has the model's output price.
    pub output: Option<Usd>,
}

impl UsageCost {
    /// Input and output, when both are known.
    pub fn total(&self) -> Option<Usd> {
        self.output.map(|o| o.plus(self.input))
    }
}

/// Price the tokens a provider reported: `input` in all (cache reads and writes included, as
/// [`ModelPrice`]'s provider counts them), of which `cache_read` were read from the prompt
/// cache and `cache_write` written to it, and `output` (reasoning included).
pub fn usage_cost(
    price: &ModelPrice,
    input: u64,
    cache_read: u64,
    cache_write: u64,
    output: u64,
) -> UsageCost {
    let fresh = input.saturating_sub(cache_read).saturating_sub(cache_write);
    let base = price.input_per_mtok;
    UsageCost {
        input: base
            .cost(fresh, Multiplier::ONE)
            .plus(base.cost(cache_read, price.cache_read_multiplier))
            .plus(base.cost(cache_write, price.cache_write_multiplier)),
        output: price
            .output_per_mtok
            .map(|p| p.cost(output, Multiplier::ONE)),
    }
}

/// One tool's rent, as counted for a dialect.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ToolLine {
    /// The name the provider sees.
    pub public_name: String,
    /// The server that owns the tool.
    pub server: String,
    /// Tokens this tool's definition adds to every request.
    pub tokens: u64,
}

/// A "what if" line: the same workload with a different tools array.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct WhatIf {
    /// What changed, for display ("allow-list: 6 tools", "search facade").
    pub label: String,
    /// The cost of the changed tools array (tool tokens plus the fixed overhead).
    pub bill: Bill,
}

/// Everything a rent view shows: tools, overhead, system prompt, and costs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RentReport {
    /// Dialect the tools were counted for.
    pub dialect: Dialect,
    /// Model id as given by the user.
    pub model: String,
    /// How the tokens were counted, in words (from `switchboard_providers::count`).
    pub method: String,
    /// The model's price entry (with its date and source, which the views print).
    pub price: ModelPrice,
    /// Every tool sent, in request order.
    pub tools: Vec<ToolLine>,
    /// Fixed per-request overhead of having tools at all.
    pub overhead_tokens: u64,
    /// Tokens of the system prompt sent with the tools (0 if none).
    pub system_tokens: u64,
    /// The workload the costs are for.
    pub workload: Workload,
    /// Tools plus overhead.
    pub tools_bill: Bill,
    /// Tools plus overhead plus system prompt.
    pub request_bill: Bill,
    /// Alternatives: allow-listed subsets, a search facade.
    pub what_ifs: Vec<WhatIf>,
}

/// The counted side of a report: what `switchboard_providers::count` measured.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Counted {
    /// Dialect the tools were counted for.
    pub dialect: Dialect,
    /// Model id as given by the user.
    pub model: String,
    /// How the tokens were counted, in words.
    pub method: String,
    /// Every tool sent, in request order.
    pub tools: Vec<ToolLine>,
    /// Fixed per-request overhead of having tools at all.
    pub overhead_tokens: u64,
    /// Tokens of the system prompt sent with the tools (0 if none).
    pub system_tokens: u64,
}

impl RentReport {
    /// Price counted tools (and system prompt) under a workload. What-ifs are added with
    /// [`RentReport::what_if`].
    pub fn new(counted: Counted, price: ModelPrice, workload: Workload) -> Self {
        let Counted {
            dialect,
            model,
            method,
            tools,
            overhead_tokens,
            system_tokens,
        } = counted;
        let tools_tokens = overhead_tokens + tools.iter().map(|t| t.tokens).sum::<u64>();
        let prefix = tools_tokens + system_tokens;
        let tools_bill = bill(tools_tokens, prefix, workload, &price);
        let request_bill = bill(prefix, prefix, workload, &price);
        RentReport {
            dialect,
            model,
            method,
            price,
            tools,
            overhead_tokens,
            system_tokens,
            workload,
            tools_bill,
            request_bill,
            what_ifs: Vec::new(),
        }
    }

    /// Tokens of every tool definition plus the fixed overhead.
    pub fn tools_tokens(&self) -> u64 {
        self.tools_bill.tokens
    }

    /// Add a what-if line for a tools array of `tool_tokens` (definitions only; the report's
    /// fixed overhead is added, since any non-empty tools array pays it). The system prompt
    /// still counts towards the cacheable prefix.
    pub fn what_if(&mut self, label: impl Into<String>, tool_tokens: u64) {
        let tokens = tool_tokens + self.overhead_tokens;
        let bill = bill(
            tokens,
            tokens + self.system_tokens,
            self.workload,
            &self.price,
        );
        self.what_ifs.push(WhatIf {
            label: label.into(),
            bill,
        });
    }

    /// What-if: only the tools whose public names are in `allowed` are sent.
    pub fn what_if_allow_list(&mut self, label: impl Into<String>, allowed: &[&str]) {
        let tokens = self
            .tools
            .iter()
            .filter(|t| allowed.contains(&t.public_name.as_str()))
            .map(|t| t.tokens)
            .sum();
        self.what_if(label, tokens);
    }

    /// Per-server subtotals `(server, tool count, tokens)`, largest first, ties by name.
    pub fn servers(&self) -> Vec<(String, usize, u64)> {
        let mut by: std::collections::BTreeMap<&str, (usize, u64)> = Default::default();
        for t in &self.tools {
            let e = by.entry(t.server.as_str()).or_default();
            e.0 += 1;
            e.1 += t.tokens;
        }
        let mut out: Vec<_> = by
            .into_iter()
            .map(|(s, (n, tok))| (s.to_string(), n, tok))
            .collect();
        out.sort_by(|a, b| b.2.cmp(&a.2).then_with(|| a.0.cmp(&b.0)));
        out
    }

    /// Tools by rent, largest first, ties by public name.
    pub fn tools_by_rent(&self) -> Vec<&ToolLine> {
        let mut v: Vec<&ToolLine> = self.tools.iter().collect();
        v.sort_by(|a, b| {
            b.tokens
                .cmp(&a.tokens)
                .then_with(|| a.public_name.cmp(&b.public_name))
        });
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// $3/MTok, Anthropic 5-minute cache (write 1.25×, read 0.1×), 1024-token minimum: Claude
    /// Sonnet 4.5 per reference/providers.md §4.1 and §5.
    fn sonnet() -> ModelPrice {
        ModelPrice {
            id: "claude-sonnet-4-5".into(),
            dialect: Dialect::Anthropic,
            input_per_mtok: PerMTok::parse("3.00").unwrap(),
            output_per_mtok: PerMTok::parse("15.00").ok(),
            cache_write_multiplier: Multiplier::parse("1.25").unwrap(),
            cache_read_multiplier: Multiplier::parse("0.1").unwrap(),
            min_cacheable_tokens: 1024,
            tool_overhead_tokens: Some(ToolOverhead {
                auto: 496,
                any: 588,
            }),
            context_window: 200_000,
            date: "2026-08-21".into(),
            source: "test".into(),
        }
    }

    fn month(requests: u64) -> Workload {
        Workload {
            turns: 1,
            requests_per_month: requests,
        }
    }

    #[test]
    fn a_conversations_tokens_are_priced_with_their_cache_reads_and_writes() {
        // 10,000 input tokens of which 6,000 read from cache and 1,000 written: 3,000 fresh at
        // $3 ($0.009), 6,000 at 0.1x ($0.0018), 1,000 at 1.25x ($0.00375); 2,000 output at $15.
        let c = usage_cost(&sonnet(), 10_000, 6_000, 1_000, 2_000);
        assert_eq!(c.input, Usd::from_micro(14_550));
        assert_eq!(c.output, Some(Usd::from_micro(30_000)));
        assert_eq!(c.total(), Some(Usd::from_micro(44_550)));
        let unknown = ModelPrice {
            output_per_mtok: None,
            ..sonnet()
        };
        let c = usage_cost(&unknown, 1_000, 0, 0, 1_000);
        assert_eq!(
            (c.input, c.output, c.total()),
            (Usd::from_micro(3_000), None, None)
        );
        // Counts from a provider that do not add up saturate rather than underflow: no fresh
        // tokens, 20 reads ($0.000006) and 30 writes ($0.0001125).
        assert_eq!(
            usage_cost(&sonnet(), 10, 20, 30, 0).input,
            Usd::from_atto(118_500_000_000_000)
        );
    }

    #[test]
    fn seed_forty_tools_at_130_tokens() {
        // Seed worked example: 40 tools × 130 tokens at $3/MTok, 200,000 requests a month.
        let b = bill(40 * 130, 40 * 130, month(200_000), &sonnet());
        assert_eq!(b.tokens, 5_200);
        assert_eq!(b.per_request, Usd::from_micro(15_600)); // $0.0156
        assert_eq!(b.per_request.display(), "$0.0156");
        assert_eq!(b.per_month, Usd::from_micro(3_120_000_000)); // $3,120
        assert_eq!(b.per_month.display(), "$3,120.00");
    }

    #[test]
    fn seed_six_tools_is_468_not_460() {
        // 6 tools × 130 = 780 tokens: $0.00234 per request, exactly $468 a month. Rounding the
        // per-request figure to $0.0023 first would give $460: the regression this guards.
        let b = bill(6 * 130, 6 * 130, month(200_000), &sonnet());
        assert_eq!(b.tokens, 780);
        assert_eq!(b.per_request, Usd::from_micro(2_340));
        assert_eq!(b.per_month.display(), "$468.00");
        assert_ne!(
            Usd::from_micro(2_300).times(200_000).display(),
            b.per_month.display()
        );
    }

    #[test]
    fn seed_twelve_tools_session_with_cache() {
        // Seed: 12 tools at 60 vs 190 tokens, 40 turns, $3/MTok, cache reads 0.1×: "about one
        // cent vs a little over three cents per session". Assumptions that make it land there:
        // the cache write costs 1.25× (Anthropic 5-minute cache, §4.1) and the cacheable prefix
        // reaches the model's minimum. 720 tokens alone are under Sonnet 4.5's 1024 minimum,
        // but the prefix also holds the 496-token tool-use system prompt (§3.1), so 1216 ≥ 1024.
        let w = Workload {
            turns: 40,
            requests_per_month: 0,
        };
        let lean = bill(12 * 60, 12 * 60 + 496, w, &sonnet());
        let fat = bill(12 * 190, 12 * 190 + 496, w, &sonnet());
        assert!(lean.cached && fat.cached);
        // 720 × $3/MTok × (1.25 + 39 × 0.1) = $0.011124
        assert_eq!(lean.per_session_cached, Usd::from_micro(11_124));
        // 2280 × $3/MTok × (1.25 + 39 × 0.1) = $0.035226
        assert_eq!(fat.per_session_cached, Usd::from_micro(35_226));
        assert_eq!(lean.per_session_cached.display(), "$0.0111");
        assert_eq!(fat.per_session_cached.display(), "$0.0352");
        // Without caching the same sessions cost 720 × 40 × $3/MTok = $0.0864 and $0.2736.
        assert_eq!(lean.per_session, Usd::from_micro(86_400));
        assert_eq!(fat.per_session, Usd::from_micro(273_600));
    }

    #[test]
    fn prefix_under_minimum_pays_full_price_every_turn() {
        // The 720-token tools array alone (no overhead, no system prompt) is under 1024: no cache.
        let w = Workload {
            turns: 40,
            requests_per_month: 4_000,
        };
        let b = bill(720, 720, w, &sonnet());
        assert!(!b.cached);
        assert_eq!(b.per_session_cached, b.per_session);
        assert_eq!(b.per_session, Usd::from_micro(86_400));
        assert_eq!(b.per_month_cached, b.per_month);
    }

    #[test]
    fn monthly_with_cache_spreads_sessions() {
        // 200,000 requests in sessions of 40 = 5,000 sessions × $0.035226 = $176.13.
        let w = Workload {
            turns: 40,
            requests_per_month: 200_000,
        };
        let b = bill(2_280, 2_776, w, &sonnet());
        assert_eq!(b.per_month_cached, Usd::from_micro(176_130_000));
        assert_eq!(b.per_month_cached.display(), "$176.13");
    }

    #[test]
    fn decimals_parse_exactly() {
        assert_eq!(PerMTok::parse("0.075").unwrap().micro(), 75_000);
        assert_eq!(PerMTok::parse("3").unwrap().micro(), 3_000_000);
        assert_eq!(Multiplier::parse("1.250").unwrap().millionths(), 1_250_000);
        assert!(PerMTok::parse("0.0000001").is_err());
        assert!(PerMTok::parse("-1").is_err());
        assert!(PerMTok::parse("1e3").is_err());
        assert_eq!(PerMTok::from_micro(75_000).to_string(), "$0.075/MTok");
        assert_eq!(PerMTok::from_micro(3_000_000).to_string(), "$3.00/MTok");
        assert_eq!(Multiplier::from_millionths(1_250_000).to_string(), "1.25×");
        assert_eq!(Multiplier::from_millionths(2_000_000).to_string(), "2×");
    }

    #[test]
    fn decimals_deserialize_from_numbers_and_strings() {
        #[derive(Deserialize)]
        struct T {
            a: PerMTok,
            b: PerMTok,
            c: Multiplier,
        }
        let t: T = serde_json::from_str(r#"{"a": 0.075, "b": "1.25", "c": 2}"#).unwrap();
        assert_eq!(
            (t.a.micro(), t.b.micro(), t.c.millionths()),
            (75_000, 1_250_000, 2_000_000)
        );
    }

    #[test]
    fn display_rounds_half_up_and_groups() {
        assert_eq!(Usd::from_micro(2_340).display(), "$0.00234");
        assert_eq!(Usd::from_micro(624_000).display(), "$0.624");
        assert_eq!(Usd::from_micro(1_234_567_890_005).fixed(2), "$1,234,567.89");
        assert_eq!(Usd::from_micro(5).fixed(5), "$0.00001");
        assert_eq!(Usd::ZERO.display(), "$0.00");
        assert_eq!(group_tokens(5_200), "5,200");
    }

    #[test]
    fn model_lookup_takes_longest_dated_prefix() {
        let mut opus = sonnet();
        opus.id = "claude-sonnet-4".into();
        let prices = Prices {
            note: None,
            models: vec![opus, sonnet()],
        };
        assert_eq!(
            prices.model("claude-sonnet-4-5-20250929").unwrap().id,
            "claude-sonnet-4-5"
        );
        assert_eq!(
            prices.model("claude-sonnet-4-20250514").unwrap().id,
            "claude-sonnet-4"
        );
        assert_eq!(
            prices.model("claude-sonnet-4-5@20250929").unwrap().id,
            "claude-sonnet-4-5"
        );
        assert!(prices.model("claude-sonnet-45").is_none());
        assert!(prices.model("claude-sonnet-4-5-mini").is_none());
        assert_eq!(
            prices.model("claude-sonnet-4-5-latest").unwrap().id,
            "claude-sonnet-4-5"
        );
    }

    #[test]
    fn report_totals_servers_and_what_ifs() {
        let tools = (0..40)
            .map(|i| ToolLine {
                public_name: format!("t{i:02}"),
                server: if i < 30 { "big" } else { "small" }.into(),
                tokens: 130,
            })
            .collect();
        let counted = Counted {
            dialect: Dialect::Anthropic,
            model: "claude-sonnet-4-5".into(),
            method: "test".into(),
            tools,
            overhead_tokens: 0,
            system_tokens: 0,
        };
        let mut r = RentReport::new(counted, sonnet(), Workload::default());
        assert_eq!(r.tools_bill.per_month.display(), "$3,120.00");
        assert_eq!(
            r.servers(),
            vec![("big".into(), 30, 3_900), ("small".into(), 10, 1_300)]
        );
        r.what_if_allow_list(
            "allow-list: 6 tools",
            &["t00", "t01", "t02", "t03", "t04", "t05"],
        );
        assert_eq!(r.what_ifs[0].bill.tokens, 780);
        assert_eq!(r.what_ifs[0].bill.per_month.display(), "$468.00");
    }
}
