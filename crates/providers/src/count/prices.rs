//! The price table: parse `data/prices.toml`-style text into [`Prices`], and the copy embedded in the binary.
//!
//! Parsing lives here rather than in core because core has no TOML parser (and does no I/O);
//! reading the file is the caller's job (`--prices FILE`).

use std::collections::BTreeSet;

use switchboard_core::rent::Prices;

/// The repository's `data/prices.toml`, compiled in as the default table.
pub const DEFAULT_PRICES_TOML: &str = include_str!("../../../../data/prices.toml");

/// A prices file that does not parse or is inconsistent.
#[derive(Debug, thiserror::Error)]
#[error("{source_name}: {message}")]
pub struct PricesError {
    /// Where the text came from (a path or a label), for the message.
    pub source_name: String,
    /// What is wrong, with the TOML parser's line and column where it has them.
    pub message: String,
}

/// Parse a prices table. Besides the TOML shape (unknown keys are errors, so a misspelt
/// `cache_read_multiplier` is caught), checks that ids are unique and dates are `YYYY-MM-DD`.
pub fn parse_prices(text: &str, source_name: &str) -> Result<Prices, PricesError> {
    let err = |message: String| PricesError {
        source_name: source_name.to_string(),
        message,
    };
    let prices: Prices = toml::from_str(text).map_err(|e| err(e.to_string()))?;
    let mut seen = BTreeSet::new();
    for m in &prices.models {
        if !seen.insert(m.id.as_str()) {
            return Err(err(format!("model {:?} is listed twice", m.id)));
        }
        if !is_date(&m.date) {
            return Err(err(format!(
                "model {:?}: date {:?} is not YYYY-MM-DD",
                m.id, m.date
            )));
        }
    }
    Ok(prices)
}

/// The embedded default table.
pub fn default_prices() -> Prices {
    // The embedded file is checked by `embedded_prices_parse` below; a failure here is a
    // build defect, not bad user input.
    parse_prices(DEFAULT_PRICES_TOML, "data/prices.toml").unwrap_or_default()
}

/// The embedded default table, parsed once for the process (the loop prices every request
/// against it when a cost limit is set).
pub fn embedded_prices() -> &'static Prices {
    static TABLE: std::sync::OnceLock<Prices> = std::sync::OnceLock::new();
    TABLE.get_or_init(default_prices)
}

fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 10
        && b.iter().enumerate().all(|(i, c)| match i {
            4 | 7 => *c == b'-',
            _ => c.is_ascii_digit(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use switchboard_core::Dialect;

    #[test]
    fn embedded_prices_parse() {
        let p = parse_prices(DEFAULT_PRICES_TOML, "data/prices.toml").unwrap();
        assert!(p.models.len() >= 20);
        let sonnet = p.model("claude-sonnet-4-5-20250929").unwrap();
        assert_eq!(sonnet.dialect, Dialect::Anthropic);
        assert_eq!(sonnet.input_per_mtok.micro(), 3_000_000);
        assert_eq!(sonnet.cache_write_multiplier.millionths(), 1_250_000);
        assert_eq!(sonnet.cache_read_multiplier.millionths(), 100_000);
        assert_eq!(sonnet.min_cacheable_tokens, 1024);
        assert_eq!(sonnet.tool_overhead_tokens.unwrap().auto, 496);
        let mini = p.model("gpt-5.4-mini").unwrap();
        assert_eq!(mini.input_per_mtok.micro(), 750_000);
        assert!(p.model("gpt-4o-mini").is_none(), "not priced as gpt-4o");
        assert_eq!(default_prices(), p);
    }

    #[test]
    fn bad_files_name_the_problem() {
        let e = parse_prices("[[model]]\nid = \"x\"\n", "mine.toml").unwrap_err();
        assert!(e.to_string().starts_with("mine.toml: "), "{e}");
        assert!(e.message.contains("missing field"), "{e}");

        let one = |date: &str, extra: &str| {
            format!(
                "[[model]]\nid = \"x\"\ndialect = \"anthropic\"\ninput_per_mtok = 3\n\
                 cache_write_multiplier = 1.25\ncache_read_multiplier = 0.1\n\
                 min_cacheable_tokens = 1024\ncontext_window = 200000\n\
                 date = \"{date}\"\nsource = \"test\"\n{extra}"
            )
        };
        assert!(parse_prices(&one("2026-08-21", ""), "t").is_ok());
        let e = parse_prices(&one("Aug 2026", ""), "t").unwrap_err();
        assert!(e.message.contains("not YYYY-MM-DD"), "{e}");
        let e = parse_prices(&one("2026-08-21", "cache_read_multiplyer = 1\n"), "t").unwrap_err();
        assert!(e.message.contains("unknown field"), "{e}");
        let twice = format!("{}{}", one("2026-08-21", ""), one("2026-08-21", ""));
        let e = parse_prices(&twice, "t").unwrap_err();
        assert!(e.message.contains("listed twice"), "{e}");
        let e = parse_prices(
            &one("2026-08-21", "").replace("= 3\n", "= 0.0000001\n"),
            "t",
        )
        .unwrap_err();
        assert!(e.message.contains("six decimal places"), "{e}");
    }
}
