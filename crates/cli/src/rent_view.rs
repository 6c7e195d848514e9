//! Views of a rent report: a plain-text table for the terminal and one self-contained HTML page (inline SVG, no network).
//!
//! Both are pure functions of a [`RentReport`] (switchboard-core); `switchboard inspect --cost`
//! prints [`table`] and writes [`html`] to `--html FILE`. Money is rounded here and only here.
//!
//! Wiring: `switchboard_providers::count::rent_report(dialect, model, tools, system, options,
//! price, Workload { turns, requests_per_month })` builds the report, with the price from
//! `count::prices::default_prices()` or `parse_prices(--prices FILE)`; add what-ifs with
//! `report.what_if_allow_list(..)` / `report.what_if("search facade", tokens)`.

use std::fmt::Write as _;

use switchboard_core::rent::{Bill, RentReport, ToolLine, group_tokens};

/// `part` as a percentage of `whole` with one decimal (`"7.9%"`), by integer arithmetic.
fn share(part: u64, whole: u64) -> String {
    if whole == 0 {
        return "0.0%".into();
    }
    let permille = (u128::from(part) * 1000 + u128::from(whole) / 2) / u128::from(whole);
    format!("{}.{}%", permille / 10, permille % 10)
}

fn title_line(r: &RentReport) -> String {
    format!(
        "Tool rent: {} tools for {} ({})",
        r.tools.len(),
        r.model,
        r.dialect
    )
}

fn price_line(r: &RentReport) -> String {
    let p = &r.price;
    format!(
        "{} input {} · cache write {} · cache read {} · cached from {} tokens",
        p.id,
        p.input_per_mtok,
        p.cache_write_multiplier,
        p.cache_read_multiplier,
        group_tokens(p.min_cacheable_tokens)
    )
}

/// The cost rows every view shows: (label, bill).
fn cost_rows(r: &RentReport) -> Vec<(String, &Bill)> {
    let mut rows = vec![("tools".to_string(), &r.tools_bill)];
    if r.system_tokens > 0 {
        rows.push(("tools + system prompt".to_string(), &r.request_bill));
    }
    for w in &r.what_ifs {
        rows.push((format!("what if: {}", w.label), &w.bill));
    }
    rows
}

fn cost_headers(r: &RentReport) -> [String; 7] {
    [
        String::new(),
        "tokens".into(),
        "per request".into(),
        format!("session ({} turns)", group_tokens(r.workload.turns)),
        "session, cached".into(),
        format!(
            "month ({} req)",
            group_tokens(r.workload.requests_per_month)
        ),
        "month, cached".into(),
    ]
}

fn cost_cells(b: &Bill) -> [String; 6] {
    let cached = |usd: String| {
        if b.cached {
            usd
        } else {
            format!("{usd} (no cache)")
        }
    };
    [
        group_tokens(b.tokens),
        b.per_request.display(),
        b.per_session.display(),
        cached(b.per_session_cached.display()),
        b.per_month.display(),
        cached(b.per_month_cached.display()),
    ]
}

/// The report as a terminal table: tools by rent, per-server subtotals, request totals, costs.
pub fn table(r: &RentReport) -> String {
    let total = r.tools_tokens();
    let mut out = String::new();
    let _ = writeln!(out, "{}", title_line(r));
    let _ = writeln!(out, "counted by {}", r.method);
    out.push('\n');

    let tools = r.tools_by_rent();
    let name_w = tools
        .iter()
        .map(|t| t.public_name.chars().count())
        .chain(["TOOL".len(), "(tool-use overhead)".len()])
        .max()
        .unwrap_or(4);
    let server_w = tools
        .iter()
        .map(|t| t.server.chars().count())
        .chain(["SERVER".len()])
        .max()
        .unwrap_or(6);
    let _ = writeln!(
        out,
        "{:name_w$}  {:server_w$}  {:>9}  {:>6}",
        "TOOL", "SERVER", "TOKENS", "SHARE"
    );
    for t in &tools {
        let _ = writeln!(
            out,
            "{:name_w$}  {:server_w$}  {:>9}  {:>6}",
            t.public_name,
            t.server,
            group_tokens(t.tokens),
            share(t.tokens, total)
        );
    }
    if r.overhead_tokens > 0 {
        let _ = writeln!(
            out,
            "{:name_w$}  {:server_w$}  {:>9}  {:>6}",
            "(tool-use overhead)",
            "",
            group_tokens(r.overhead_tokens),
            share(r.overhead_tokens, total)
        );
    }
    out.push('\n');

    let servers = r.servers();
    let _ = writeln!(
        out,
        "{:server_w$}  {:>5}  {:>9}  {:>6}",
        "SERVER", "TOOLS", "TOKENS", "SHARE"
    );
    for (server, n, tokens) in &servers {
        let _ = writeln!(
            out,
            "{:server_w$}  {:>5}  {:>9}  {:>6}",
            server,
            n,
            group_tokens(*tokens),
            share(*tokens, total)
        );
    }
    out.push('\n');

    let defs = total - r.overhead_tokens;
    let mut totals = vec![
        ("tool definitions", defs),
        ("tool-use overhead", r.overhead_tokens),
        ("tools total", total),
    ];
    if r.system_tokens > 0 {
        totals.push(("system prompt", r.system_tokens));
        totals.push(("request total", r.request_bill.tokens));
    }
    for (label, n) in totals {
        let _ = writeln!(out, "{label:<20}{:>9}", group_tokens(n));
    }
    out.push('\n');

    let _ = writeln!(out, "COST  {}", price_line(r));
    let _ = writeln!(
        out,
        "      prices as of {}; source: {}",
        r.price.date, r.price.source
    );
    let rows = cost_rows(r);
    let headers = cost_headers(r);
    let cells: Vec<[String; 6]> = rows.iter().map(|(_, b)| cost_cells(b)).collect();
    let mut widths = [0usize; 7];
    for (i, h) in headers.iter().enumerate() {
        widths[i] = h.chars().count();
    }
    for ((label, _), c) in rows.iter().zip(&cells) {
        widths[0] = widths[0].max(label.chars().count());
        for (i, cell) in c.iter().enumerate() {
            widths[i + 1] = widths[i + 1].max(cell.chars().count());
        }
    }
    let mut line = format!("{:w$}", headers[0], w = widths[0]);
    for (i, h) in headers.iter().enumerate().skip(1) {
        let _ = write!(line, "  {:>w$}", h, w = widths[i]);
    }
    let _ = writeln!(out, "{}", line.trim_end());
    for ((label, _), c) in rows.iter().zip(&cells) {
        let mut line = format!("{:w$}", label, w = widths[0]);
        for (i, cell) in c.iter().enumerate() {
            let _ = write!(line, "  {:>w$}", cell, w = widths[i + 1]);
        }
        let _ = writeln!(out, "{}", line.trim_end());
    }
    if !r.tools_bill.cached {
        let _ = writeln!(
            out,
            "\nThe cacheable prefix ({} tokens) is under {}'s minimum of {}: no caching.",
            group_tokens(r.request_bill.tokens),
            r.price.id,
            group_tokens(r.price.min_cacheable_tokens)
        );
    }
    out
}

/// Escape text for HTML element content and attribute values.
fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Colour-blind-friendly categorical palette (Okabe–Ito), one colour per server, in the order
/// of the server subtotals; repeats after eight servers.
const PALETTE: [&str; 8] = [
    "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#999999",
];
const OVERHEAD_COLOUR: &str = "#bbbbbb";

const CHART_W: u32 = 1040;
const ROW_H: u32 = 22;
const BAR_H: u32 = 16;

/// Shorten a label for the chart's name column; the full text stays in a `<title>` tooltip.
fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max - 1).collect();
        t.push('…');
        t
    }
}

/// One horizontal bar chart: rows of (label, tooltip, value, colour, class).
fn bar_chart(title: &str, rows: &[(String, String, u64, &str, &str)], total: u64) -> String {
    let max = rows.iter().map(|r| r.2).max().unwrap_or(0).max(1);
    let label_chars = rows
        .iter()
        .map(|r| r.0.chars().count())
        .max()
        .unwrap_or(8)
        .clamp(8, 44);
    // 7.2 px per character at 12 px in the UI font stack, plus a gutter.
    let label_w = (label_chars as u32 * 72) / 10 + 16;
    let value_w = 130;
    let bar_max = CHART_W - label_w - value_w;
    let height = rows.len() as u32 * ROW_H + 8;
    let mut svg = String::new();
    let _ = write!(
        svg,
        "<svg class=\"chart\" role=\"img\" aria-label=\"{}\" xmlns=\"http://www.w3.org/2000/svg\" \
         viewBox=\"0 0 {CHART_W} {height}\" width=\"100%\" preserveAspectRatio=\"xMinYMin meet\">",
        esc(title)
    );
    for (i, (label, tip, value, colour, class)) in rows.iter().enumerate() {
        let y = i as u32 * ROW_H + 4;
        let w = ((u128::from(*value) * u128::from(bar_max)) / u128::from(max)) as u32;
        let w = w.max(u32::from(*value > 0));
        let _ = write!(
            svg,
            "<g><title>{tip}</title>\
             <text class=\"label\" x=\"{lx}\" y=\"{ty}\" text-anchor=\"end\">{label}</text>\
             <rect class=\"bar {class}\" x=\"{label_w}\" y=\"{y}\" width=\"{w}\" height=\"{BAR_H}\" fill=\"{colour}\" rx=\"2\"/>\
             <text class=\"value\" x=\"{vx}\" y=\"{ty}\">{val} · {pct}</text></g>",
            tip = esc(tip),
            lx = label_w - 8,
            ty = y + 12,
            label = esc(&clip(label, 44)),
            vx = label_w + w + 6,
            val = group_tokens(*value),
            pct = share(*value, total),
        );
    }
    svg.push_str("</svg>");
    svg
}

const STYLE: &str = "\
body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif;color:#1d1d1f;margin:0;background:#f6f6f4}\
main{max-width:1100px;margin:0 auto;padding:24px 28px 40px}\
h1{font-size:22px;margin:0 0 4px}h2{font-size:16px;margin:28px 0 8px}\
.sub{color:#555;margin:0 0 16px}\
.cards{display:flex;gap:12px;flex-wrap:wrap}\
.card{background:#fff;border:1px solid #e2e2de;border-radius:8px;padding:10px 14px;min-width:150px}\
.card b{display:block;font-size:22px;font-variant-numeric:tabular-nums}\
.card span{color:#555;font-size:12px}\
.panel{background:#fff;border:1px solid #e2e2de;border-radius:8px;padding:12px;overflow-x:auto}\
svg.chart{display:block;max-width:100%}svg.chart text{font:12px system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif;fill:#1d1d1f}\
svg.chart text.value{fill:#555;font-variant-numeric:tabular-nums}\
table{border-collapse:collapse;width:100%;font-variant-numeric:tabular-nums}\
th,td{padding:6px 10px;border-bottom:1px solid #e2e2de;text-align:right;white-space:nowrap}\
th:first-child,td:first-child{text-align:left}\
th{font-weight:600;color:#333;background:#fafaf8;white-space:normal;vertical-align:bottom}\
td.nocache{color:#a33}\
.note{color:#555;font-size:12px;margin-top:8px}";

/// The report as one self-contained HTML page: summary cards, a bar per tool and per server
/// (inline SVG), the token totals and the cost table. No scripts, fonts or network.
pub fn html(r: &RentReport) -> String {
    let total = r.tools_tokens();
    let servers = r.servers();
    let colour_of = |server: &str| {
        let i = servers.iter().position(|s| s.0 == server).unwrap_or(0);
        PALETTE[i % PALETTE.len()]
    };

    let mut tool_rows: Vec<(String, String, u64, &str, &str)> = r
        .tools_by_rent()
        .into_iter()
        .map(|t: &ToolLine| {
            (
                t.public_name.clone(),
                format!("{} ({}): {} tokens", t.public_name, t.server, t.tokens),
                t.tokens,
                colour_of(&t.server),
                "tool",
            )
        })
        .collect();
    if r.overhead_tokens > 0 {
        tool_rows.push((
            "(tool-use overhead)".into(),
            format!(
                "fixed per-request overhead of sending tools: {} tokens",
                r.overhead_tokens
            ),
            r.overhead_tokens,
            OVERHEAD_COLOUR,
            "overhead",
        ));
    }
    let server_rows: Vec<(String, String, u64, &str, &str)> = servers
        .iter()
        .map(|(s, n, tokens)| {
            (
                format!("{s} ({n})"),
                format!("{s}: {n} tools, {tokens} tokens"),
                *tokens,
                colour_of(s),
                "server",
            )
        })
        .collect();

    let mut out = String::new();
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">");
    let _ = write!(out, "<title>{}</title>", esc(&title_line(r)));
    let _ = write!(out, "<style>{STYLE}</style></head><body><main>");
    let _ = write!(out, "<h1>{}</h1>", esc(&title_line(r)));
    let _ = write!(
        out,
        "<p class=\"sub\">Counted by {}.<br>{}; prices as of {}.</p>",
        esc(&r.method),
        esc(&price_line(r)),
        esc(&r.price.date)
    );

    let b = &r.tools_bill;
    let cards = [
        (
            group_tokens(total),
            "tokens of tools per request".to_string(),
        ),
        (b.per_request.display(), "per request".to_string()),
        (
            b.per_month.display(),
            format!(
                "per month, {} requests",
                group_tokens(r.workload.requests_per_month)
            ),
        ),
        (
            b.per_session_cached.display(),
            format!(
                "per {}-turn session{}",
                r.workload.turns,
                if b.cached { ", cached" } else { ", no cache" }
            ),
        ),
    ];
    out.push_str("<div class=\"cards\">");
    for (value, label) in cards {
        let _ = write!(
            out,
            "<div class=\"card\"><b>{}</b><span>{}</span></div>",
            esc(&value),
            esc(&label)
        );
    }
    out.push_str("</div>");

    let _ = write!(
        out,
        "<h2>Tools by rent</h2><div class=\"panel\">{}</div>",
        bar_chart("Tokens per tool", &tool_rows, total)
    );
    let _ = write!(
        out,
        "<h2>Servers</h2><div class=\"panel\">{}</div>",
        bar_chart("Tokens per server", &server_rows, total)
    );

    out.push_str("<h2>Cost</h2><div class=\"panel\"><table><thead><tr>");
    for h in cost_headers(r) {
        let _ = write!(out, "<th>{}</th>", esc(&h));
    }
    out.push_str("</tr></thead><tbody>");
    for (label, bill) in cost_rows(r) {
        let _ = write!(out, "<tr><td>{}</td>", esc(&label));
        for (i, cell) in cost_cells(bill).iter().enumerate() {
            let class = if (i == 3 || i == 5) && !bill.cached {
                " class=\"nocache\""
            } else {
                ""
            };
            let _ = write!(out, "<td{class}>{}</td>", esc(cell));
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table></div>");
    let _ = write!(
        out,
        "<p class=\"note\">Tokens: {} tool definitions + {} tool-use overhead{}. \
         Cached sessions pay the cache write ({}) on the first turn and reads ({}) after, \
         when the prefix reaches {} tokens. Price source: {}.</p>",
        group_tokens(total - r.overhead_tokens),
        group_tokens(r.overhead_tokens),
        if r.system_tokens > 0 {
            format!(" + {} system prompt", group_tokens(r.system_tokens))
        } else {
            String::new()
        },
        r.price.cache_write_multiplier,
        r.price.cache_read_multiplier,
        group_tokens(r.price.min_cacheable_tokens),
        esc(&r.price.source)
    );
    out.push_str("</main></body></html>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use switchboard_core::Dialect;
    use switchboard_core::rent::{
        Counted, ModelPrice, Multiplier, PerMTok, ToolOverhead, Workload,
    };

    fn report() -> RentReport {
        let price = ModelPrice {
            id: "claude-sonnet-4-5".into(),
            dialect: Dialect::Anthropic,
            input_per_mtok: PerMTok::from_micro(3_000_000),
            output_per_mtok: None,
            cache_write_multiplier: Multiplier::from_millionths(1_250_000),
            cache_read_multiplier: Multiplier::from_millionths(100_000),
            min_cacheable_tokens: 1024,
            tool_overhead_tokens: Some(ToolOverhead {
                auto: 496,
                any: 588,
            }),
            context_window: 200_000,
            date: "2026-08-21".into(),
            source: "test <data>".into(),
        };
        let tools = vec![
            ToolLine {
                public_name: "tickets__search".into(),
                server: "tickets".into(),
                tokens: 300,
            },
            ToolLine {
                public_name: "docs__search".into(),
                server: "docs".into(),
                tokens: 500,
            },
            ToolLine {
                public_name: "tickets__<b>&close".into(),
                server: "tickets".into(),
                tokens: 100,
            },
        ];
        let counted = Counted {
            dialect: Dialect::Anthropic,
            model: "claude-sonnet-4-5".into(),
            method: "estimate: o200k_base tokens × 1.20".into(),
            tools,
            overhead_tokens: 496,
            system_tokens: 0,
        };
        let mut r = RentReport::new(counted, price, Workload::default());
        r.what_if("search facade", 200);
        r
    }

    #[test]
    fn table_sorts_tools_and_sums_servers() {
        let t = table(&report());
        let pos = |s: &str| {
            t.find(s)
                .unwrap_or_else(|| panic!("{s:?} missing from\n{t}"))
        };
        assert!(pos("docs__search") < pos("tickets__search"));
        assert!(pos("tickets__search") < pos("tickets__<b>&close"));
        let has_row = |cells: &[&str]| {
            t.lines()
                .any(|l| l.split_whitespace().collect::<Vec<_>>() == cells)
        };
        // 1,396 = 300 + 500 + 100 + 496; tickets = 400 tokens = 28.7% of it.
        assert!(has_row(&["tools", "total", "1,396"]), "{t}");
        assert!(has_row(&["tickets", "2", "400", "28.7%"]), "{t}");
        assert!(has_row(&["(tool-use", "overhead)", "496", "35.5%"]), "{t}");
        assert!(t.contains("what if: search facade"), "{t}");
    }

    #[test]
    fn html_has_one_bar_per_tool_and_server_and_is_self_contained() {
        let r = report();
        let h = html(&r);
        assert!(h.starts_with("<!DOCTYPE html>"));
        assert_eq!(h.matches("class=\"bar tool\"").count(), r.tools.len());
        assert_eq!(h.matches("class=\"bar server\"").count(), 2);
        assert_eq!(h.matches("class=\"bar overhead\"").count(), 1);
        assert_eq!(h.matches("<rect").count(), r.tools.len() + 2 + 1);
        assert_eq!(h.matches("<svg").count(), 2);
        assert_eq!(
            h.matches("<tr>").count(),
            1 + 2,
            "header, tools, one what-if"
        );
        // Self-contained: nothing is fetched; the only URL is the SVG namespace.
        for banned in ["<script", "<link", "src=", "@import", "url(", "@font-face"] {
            assert!(!h.contains(banned), "found {banned}");
        }
        assert_eq!(
            h.matches("http").count(),
            h.matches("http://www.w3.org/2000/svg").count()
        );
        // Server-provided text is escaped.
        assert!(h.contains("tickets__&lt;b&gt;&amp;close"));
        assert!(!h.contains("<b>&close"));
        assert!(h.contains("test &lt;data&gt;"));
    }

    #[test]
    fn bars_scale_to_the_largest_value() {
        let h = html(&report());
        // The largest tool (500 tokens) gets the full bar width; 100 tokens get a fifth of it.
        let widths: Vec<u32> = h
            .split("class=\"bar tool\"")
            .skip(1)
            .map(|s| {
                let w = s.split("width=\"").nth(1).unwrap();
                w[..w.find('"').unwrap()].parse().unwrap()
            })
            .collect();
        assert_eq!(widths.len(), 3);
        assert_eq!(widths[0] / 5, widths[2]);
    }
}
