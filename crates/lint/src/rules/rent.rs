//! Rent rules: what a definition costs in tokens on every request that carries it.
//!
//! Tokens are counted with `switchboard_providers::count` for Anthropic (Claude Sonnet 4.5):
//! o200k tokens of the definition JSON as sent, times the calibrated Claude factor. The JSON
//! form counts nested descriptions too (OpenAI's function rendering drops them), so it is the
//! better measure of what a definition weighs; it is deterministic and offline.

use switchboard_core::{Dialect, ServerCatalog, Tool};
use switchboard_providers::count::{CountOptions, ToolText, count_tools};

use super::ToolCtx;
use crate::LintOptions;
use crate::finding::{Finding, Severity};
use crate::rule::{Family, RuleDoc};

pub const TOOL_RENT: RuleDoc = RuleDoc {
    id: "tool-rent",
    family: Family::Rent,
    severity: Severity::Warning,
    summary: "One tool definition costs more tokens than the threshold (default 500) on every request.",
    rationale: "Every request carries every exposed tool definition. A 2,000-token definition costs 2,000 input \
        tokens per turn whether or not the tool is used, and crowds the model's attention. Trim repeated \
        prose, long enums and examples; move reference material into a resource or a help tool.",
    good_example: r#"{"name": "search", "description": "Search tickets by text.", "inputSchema": {"type": "object", "properties": {"query": {"type": "string", "maxLength": 500}}, "required": ["query"], "additionalProperties": false}}"#,
};

pub const SERVER_RENT: RuleDoc = RuleDoc {
    id: "server-rent",
    family: Family::Rent,
    severity: Severity::Warning,
    summary: "A server's tools together cost more tokens than the threshold (default 10,000) on every request.",
    rationale: "Hosts report whole servers costing tens of thousands of tokens per turn (Anthropic measured \
        ~55K for five servers). Past the threshold a host should defer the server behind search, and the \
        server should offer fewer, broader tools or let users enable toolsets.",
    good_example: "A server exposing 12 focused tools of ~300 tokens each (about 3,600 tokens).",
};

pub const DOCS: &[RuleDoc] = &[TOOL_RENT, SERVER_RENT];

/// The model whose tokenizer and rendering the rent rules count with.
const MODEL: &str = "claude-sonnet-4-5";

/// Tokens each of `tools` costs on every request, in order.
pub fn tool_tokens(tools: &[&Tool]) -> Vec<usize> {
    let texts: Vec<ToolText> = tools
        .iter()
        .map(|t| {
            ToolText::new(
                &t.name,
                t.description.as_deref().unwrap_or(""),
                &t.input_schema,
            )
        })
        .collect();
    let rent = count_tools(Dialect::Anthropic, MODEL, &texts, &CountOptions::default());
    rent.per_tool
        .into_iter()
        .map(|n| usize::try_from(n).unwrap_or(usize::MAX))
        .collect()
}

/// Tokens one tool definition costs on every request.
pub fn estimate_tokens(tool: &Tool) -> usize {
    tool_tokens(&[tool]).first().copied().unwrap_or(0)
}

pub fn check(ctx: &ToolCtx, out: &mut Vec<Finding>) {
    let tokens = estimate_tokens(ctx.tool);
    let max = ctx.opts.max_tool_tokens;
    if tokens > max {
        out.push(ctx.finding(
            &TOOL_RENT,
            "",
            format!("the definition costs about {tokens} tokens per request on Claude (threshold {max})"),
            "shorten the description and parameter descriptions, cut long enums and examples, or split the tool",
        ));
    }
}

pub fn check_server(server: &ServerCatalog, opts: &LintOptions, out: &mut Vec<Finding>) {
    let defs: Vec<&Tool> = server.tools.iter().map(|t| &t.def).collect();
    let tokens = tool_tokens(&defs);
    let total: usize = tokens.iter().sum();
    let max = opts.max_server_tokens;
    if total > max {
        let mut sizes: Vec<(usize, &str)> = tokens
            .iter()
            .zip(&defs)
            .map(|(n, t)| (*n, t.name.as_str()))
            .collect();
        sizes.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(b.1)));
        let top: Vec<String> = sizes
            .iter()
            .take(3)
            .map(|(n, t)| format!("{t} ({n})"))
            .collect();
        out.push(Finding::new(
            &SERVER_RENT,
            &server.server,
            None,
            "",
            format!(
                "the server's {} tools cost about {total} tokens per request on Claude (threshold {max}); largest: {}",
                server.tools.len(),
                top.join(", ")
            ),
            "expose fewer tools by default (toolsets the user enables), merge near-duplicates, or let the host defer this server behind search",
        ));
    }
}
