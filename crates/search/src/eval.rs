//! Retrieval evaluation: recall@1/3/5/10, MRR, nDCG@10, query latency, and the rent of a full
//! tools array against a search facade, for a query set over an index.

use std::time::Instant;

use serde::Deserialize;

use crate::error::SearchError;
use crate::index::{Hit, Index, Method};

/// The cut-offs recall is reported at.
pub const RECALL_AT: [usize; 4] = [1, 3, 5, 10];
/// Hits retrieved per query for MRR (reciprocal rank of the first relevant one in the top 100).
pub const DEPTH: usize = 100;
/// Tools a facade returns per search, for the rent estimate.
pub const FACADE_TOP: usize = 5;

/// Characters of the search tool's definition as the loop's search mode sends it (compact
/// JSON of name, description and input schema), counted in the facade's rent.
pub fn search_tool_chars() -> usize {
    let tool = switchboard_core::facade::search_tool(switchboard_core::facade::Found::Loaded);
    serde_json::json!({
        "name": tool.name,
        "description": tool.description,
        "inputSchema": tool.input_schema,
    })
    .to_string()
    .chars()
    .count()
}

/// One line of a query file: `{"id","query","gold":[tool names],"catalog"}`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct Query {
    /// Its id.
    pub id: String,
    /// What a user asked.
    pub query: String,
    /// The tools that answer it: `"tool"` matches any server's tool of that name,
    /// `"server/tool"` only that server's.
    pub gold: Vec<String>,
    /// The stem of the catalog file the query is meant for.
    #[serde(default)]
    pub catalog: Option<String>,
}

/// Parse a JSON-lines query file. Blank lines and a leading byte-order mark are skipped; a
/// line without an `"id"` is called `line N`, a numeric id is read as text, and `"gold"` may be
/// one name instead of a list.
pub fn parse_queries(source_name: &str, text: &str) -> Result<Vec<Query>, SearchError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, line)| {
            query_line(line, i + 1).map_err(|message| SearchError::QueryLine {
                source_name: source_name.to_string(),
                line: i + 1,
                message,
            })
        })
        .collect()
}

/// One line of a query file, or what is wrong with it.
fn query_line(line: &str, line_no: usize) -> Result<Query, String> {
    use serde_json::Value;
    const SHAPE: &str = r#"{"id": ..., "query": "...", "gold": ["tool" or "server/tool", ...]}"#;
    let value: Value = serde_json::from_str(line).map_err(|e| e.to_string())?;
    let Value::Object(mut fields) = value else {
        return Err(format!("expected one JSON object per line: {SHAPE}"));
    };
    let id = match fields.remove("id") {
        None | Some(Value::Null) => format!("line {line_no}"),
        Some(Value::String(id)) => id,
        Some(Value::Number(n)) => n.to_string(),
        Some(_) => return Err("\"id\" must be a string or a number".to_string()),
    };
    let query = match fields.remove("query") {
        Some(Value::String(q)) => q,
        None => return Err(format!("no \"query\": expected {SHAPE}")),
        Some(_) => return Err("\"query\" must be a string".to_string()),
    };
    let not_names = || "\"gold\" must be a tool name or a list of tool names".to_string();
    let gold = match fields.remove("gold") {
        Some(Value::String(g)) => vec![g],
        Some(Value::Array(items)) => items
            .into_iter()
            .map(|g| match g {
                Value::String(g) => Ok(g),
                _ => Err(not_names()),
            })
            .collect::<Result<_, _>>()?,
        None => return Err(format!("no \"gold\": expected {SHAPE}")),
        Some(_) => return Err(not_names()),
    };
    let catalog = match fields.remove("catalog") {
        None | Some(Value::Null) => None,
        Some(Value::String(c)) => Some(c),
        Some(_) => return Err("\"catalog\" must be a catalog file's stem, a string".to_string()),
    };
    Ok(Query {
        id,
        query,
        gold,
        catalog,
    })
}

/// Whether a retrieved tool is the gold label `gold`.
pub fn matches(gold: &str, server: &str, tool: &str) -> bool {
    gold == tool
        || gold
            .strip_prefix(server)
            .and_then(|rest| rest.strip_prefix('/'))
            .is_some_and(|t| t == tool)
}

/// Scores of one ranking against one query's gold labels.
#[derive(Clone, Debug, PartialEq)]
pub struct QueryScore {
    /// Share of gold labels in the top 1, 3, 5, 10.
    pub recall: [f64; 4],
    /// 1 / rank of the first relevant hit (0 if none).
    pub reciprocal_rank: f64,
    /// Binary-relevance nDCG over the top 10.
    pub ndcg10: f64,
}

/// Score a ranking (best first) against gold labels. Each label is found at most once: the
/// first hit that matches it; later hits matching the same label earn nothing.
pub fn score_ranking(gold: &[String], ranking: &[(&str, &str)]) -> QueryScore {
    score_with_ranks(gold, ranking).0
}

/// [`score_ranking`], and the 0-based rank at which each gold label was found (`None`: not in
/// the ranking).
fn score_with_ranks(gold: &[String], ranking: &[(&str, &str)]) -> (QueryScore, Vec<Option<usize>>) {
    let mut found_at: Vec<Option<usize>> = vec![None; gold.len()];
    // For each rank, whether it was the first to match some label.
    let mut credited = vec![false; ranking.len()];
    for (rank, (server, tool)) in ranking.iter().enumerate() {
        for (g, label) in gold.iter().enumerate() {
            if found_at[g].is_none() && matches(label, server, tool) {
                found_at[g] = Some(rank);
                credited[rank] = true;
                break;
            }
        }
    }
    let n = gold.len().max(1) as f64;
    let recall =
        RECALL_AT.map(|k| found_at.iter().filter(|r| r.is_some_and(|r| r < k)).count() as f64 / n);
    let reciprocal_rank = credited
        .iter()
        .position(|&c| c)
        .map_or(0.0, |r| 1.0 / (r + 1) as f64);
    let discount = |rank: usize| 1.0 / ((rank + 2) as f64).log2();
    let dcg: f64 = (0..ranking.len().min(10))
        .filter(|&r| credited[r])
        .map(discount)
        .sum();
    let ideal: f64 = (0..gold.len().min(10)).map(discount).sum();
    let ndcg10 = if ideal > 0.0 { dcg / ideal } else { 0.0 };
    let score = QueryScore {
        recall,
        reciprocal_rank,
        ndcg10,
    };
    (score, found_at)
}

/// How one query fared: where each gold label ranked and what ranked first, for finding out
/// why a tool is not found.
#[derive(Clone, Debug, PartialEq)]
pub struct QueryOutcome {
    /// The query's id.
    pub id: String,
    /// Its text.
    pub query: String,
    /// Each gold label the catalog has, with its 1-based rank (`None`: below [`DEPTH`]).
    pub gold: Vec<(String, Option<usize>)>,
    /// Its scores.
    pub score: QueryScore,
    /// The first [`OUTCOME_TOP`] tools retrieved, as (server, tool).
    pub top: Vec<(String, String)>,
}

/// Tools kept per query in [`QueryOutcome::top`].
pub const OUTCOME_TOP: usize = 5;

impl QueryOutcome {
    /// Order from worst to best: lowest recall@5 first, then lowest recall@10, then lowest
    /// reciprocal rank; ties keep the query file's order (the sort is stable).
    pub fn worst_first(outcomes: &mut [QueryOutcome]) {
        outcomes.sort_by(|a, b| {
            let key = |o: &QueryOutcome| {
                (
                    o.score.recall[2],
                    o.score.recall[3],
                    o.score.reciprocal_rank,
                )
            };
            let (x, y) = (key(a), key(b));
            x.0.total_cmp(&y.0)
                .then(x.1.total_cmp(&y.1))
                .then(x.2.total_cmp(&y.2))
        });
    }
}

/// The results of a run.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    /// The method asked for.
    pub method: Method,
    /// The method used (lexical when no embeddings exist).
    pub effective_method: Method,
    /// Queries scored.
    pub queries: usize,
    /// Queries left out because none of their gold labels names a tool in the catalog.
    pub skipped_queries: usize,
    /// Gold labels dropped because they name no tool in the catalog.
    pub dropped_labels: usize,
    /// Mean recall at 1, 3, 5, 10.
    pub recall: [f64; 4],
    /// Mean reciprocal rank (over the top 100).
    pub mrr: f64,
    /// Mean nDCG@10.
    pub ndcg10: f64,
    /// Median query latency in milliseconds (the whole `search` call, query embedding included).
    pub latency_p50_ms: f64,
    /// 99th percentile query latency in milliseconds.
    pub latency_p99_ms: f64,
    /// Index build time in milliseconds.
    pub build_ms: f64,
    /// Estimated tokens of every tool's definition in one tools array.
    pub tokens_full: f64,
    /// Estimated tokens of the search tool plus the top 5 definitions, mean over queries.
    pub tokens_facade: f64,
    /// How tokens were estimated.
    pub token_estimate: &'static str,
    /// Every scored query's outcome, in the query file's order.
    pub outcomes: Vec<QueryOutcome>,
}

/// Tokens estimated from characters (no tokenizer for the target model is at hand here).
pub const TOKEN_ESTIMATE: &str =
    "chars/4 of compact JSON definitions (name, description, inputSchema)";

fn tokens(chars: usize) -> f64 {
    chars as f64 / 4.0
}

/// Run every query through the index and score it. `progress(done, total)` after each query.
pub fn evaluate(
    index: &Index,
    queries: &[Query],
    method: Method,
    progress: &mut dyn FnMut(usize, usize),
) -> Report {
    let docs = index.docs();
    let mut dropped_labels = 0;
    let mut skipped_queries = 0;
    let mut sums = QueryScore {
        recall: [0.0; 4],
        reciprocal_rank: 0.0,
        ndcg10: 0.0,
    };
    let mut latencies = Vec::with_capacity(queries.len());
    let mut facade_chars = 0usize;
    let search_tool = search_tool_chars();
    let mut scored = 0usize;
    let mut outcomes = Vec::with_capacity(queries.len());
    for (i, q) in queries.iter().enumerate() {
        let gold: Vec<String> = q
            .gold
            .iter()
            .filter(|g| docs.iter().any(|d| matches(g, &d.server, &d.tool)))
            .cloned()
            .collect();
        dropped_labels += q.gold.len() - gold.len();
        if gold.is_empty() {
            skipped_queries += 1;
            progress(i + 1, queries.len());
            continue;
        }
        let start = Instant::now();
        let hits: Vec<Hit> = index.search(&q.query, DEPTH, method);
        latencies.push(start.elapsed().as_secs_f64() * 1000.0);
        let ranking: Vec<(&str, &str)> = hits
            .iter()
            .map(|h| (h.server.as_str(), h.tool.as_str()))
            .collect();
        let (s, ranks) = score_with_ranks(&gold, &ranking);
        for (sum, r) in sums.recall.iter_mut().zip(s.recall) {
            *sum += r;
        }
        sums.reciprocal_rank += s.reciprocal_rank;
        sums.ndcg10 += s.ndcg10;
        facade_chars += search_tool;
        for h in hits.iter().take(FACADE_TOP) {
            if let Some(d) = docs
                .iter()
                .find(|d| d.server == h.server && d.tool == h.tool)
            {
                facade_chars += d.definition_chars;
            }
        }
        outcomes.push(QueryOutcome {
            id: q.id.clone(),
            query: q.query.clone(),
            gold: gold
                .into_iter()
                .zip(ranks)
                .map(|(g, r)| (g, r.map(|r| r + 1)))
                .collect(),
            score: s,
            top: hits
                .iter()
                .take(OUTCOME_TOP)
                .map(|h| (h.server.clone(), h.tool.clone()))
                .collect(),
        });
        scored += 1;
        progress(i + 1, queries.len());
    }
    let n = scored.max(1) as f64;
    latencies.sort_by(f64::total_cmp);
    let percentile = |p: f64| -> f64 {
        if latencies.is_empty() {
            return 0.0;
        }
        let rank = ((p * latencies.len() as f64).ceil() as usize).clamp(1, latencies.len());
        latencies[rank - 1]
    };
    Report {
        method,
        effective_method: index.effective_method(method),
        queries: scored,
        skipped_queries,
        dropped_labels,
        recall: sums.recall.map(|r| r / n),
        mrr: sums.reciprocal_rank / n,
        ndcg10: sums.ndcg10 / n,
        latency_p50_ms: percentile(0.50),
        latency_p99_ms: percentile(0.99),
        build_ms: index.build_time().as_secs_f64() * 1000.0,
        tokens_full: tokens(docs.iter().map(|d| d.definition_chars).sum()),
        tokens_facade: tokens(facade_chars) / n,
        token_estimate: TOKEN_ESTIMATE,
        outcomes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_files_as_editors_and_scripts_write_them_are_read() {
        let text = "\u{feff}{\"id\": \"a\", \"query\": \"close a ticket\", \"gold\": [\"close_ticket\"], \"catalog\": \"demo\"}\r\n\
                    \r\n\
                    {\"query\": \"no id\", \"gold\": \"tickets/get_ticket\"}\n\
                    {\"id\": 7, \"query\": \"numbered\", \"gold\": [], \"catalog\": null}\n";
        let q = parse_queries("q.jsonl", text).unwrap();
        assert_eq!(q.len(), 3);
        assert_eq!(
            q[0],
            Query {
                id: "a".into(),
                query: "close a ticket".into(),
                gold: vec!["close_ticket".into()],
                catalog: Some("demo".into()),
            }
        );
        assert_eq!(
            (q[1].id.as_str(), q[1].gold.as_slice()),
            ("line 3", &["tickets/get_ticket".to_string()][..])
        );
        assert_eq!((q[2].id.as_str(), q[2].catalog.as_deref()), ("7", None));
    }

    #[test]
    fn a_bad_line_is_named_with_what_is_wrong() {
        let cases = [
            ("[1, 2]", "one JSON object per line"),
            ("{\"gold\": [\"t\"]}", "no \"query\""),
            ("{\"query\": \"q\"}", "no \"gold\""),
            (
                "{\"query\": \"q\", \"gold\": [1]}",
                "\"gold\" must be a tool name or a list",
            ),
            (
                "{\"query\": 3, \"gold\": \"t\"}",
                "\"query\" must be a string",
            ),
            (
                "{\"id\": [], \"query\": \"q\", \"gold\": \"t\"}",
                "\"id\" must be",
            ),
            (
                "{\"query\": \"q\", \"gold\": \"t\", \"catalog\": 1}",
                "\"catalog\" must be",
            ),
            ("{\"query\": ", "EOF"),
        ];
        for (line, expected) in cases {
            let text = format!("{{\"id\": \"ok\", \"query\": \"q\", \"gold\": \"t\"}}\n{line}\n");
            let err = parse_queries("q.jsonl", &text).unwrap_err().to_string();
            assert!(
                err.contains("q.jsonl:2") && err.contains(expected),
                "{line}: {err}"
            );
        }
    }
}
