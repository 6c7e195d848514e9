//! The tool table: public name → (server, tool) for the tools array the model was last sent,
//! plus the names that were sent once and are gone (so a call to them is "no longer available",
//! not "unknown").

use std::collections::BTreeMap;

use crate::translate::{NameRow, Translation};

/// Where a public name leads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Route {
    /// Configured server name.
    pub server: String,
    /// Tool name on that server.
    pub tool: String,
    /// Sent with OpenAI strict mode: arguments need `arguments::restore`.
    pub strict: bool,
    /// The schema root was wrapped as `{value: ...}`.
    pub wrapped_root: bool,
}

impl From<&NameRow> for Route {
    fn from(row: &NameRow) -> Self {
        Route {
            server: row.server.clone(),
            tool: row.tool.clone(),
            strict: row.strict,
            wrapped_root: row.wrapped_root,
        }
    }
}

/// Public names of the current tools array and of tools that were removed since.
#[derive(Clone, Debug, Default)]
pub struct ToolTable {
    current: BTreeMap<String, Route>,
    retired: BTreeMap<String, Route>,
}

impl ToolTable {
    /// The table for one translation.
    pub fn new(translation: &Translation) -> Self {
        let mut t = ToolTable::default();
        t.replace(translation);
        t
    }

    /// Swap in a new tools array: names that disappear are remembered as retired; names that
    /// come back are current again.
    pub fn replace(&mut self, translation: &Translation) {
        let next: BTreeMap<String, Route> = translation
            .names
            .iter()
            .map(|row| (row.public.clone(), Route::from(row)))
            .collect();
        for (public, route) in std::mem::take(&mut self.current) {
            if !next.contains_key(&public) {
                self.retired.insert(public, route);
            }
        }
        for public in next.keys() {
            self.retired.remove(public);
        }
        self.current = next;
    }

    /// Remember `public` as a name the model may know but that is not in the current array
    /// (a tool withheld by its pin): a call to it resolves to its route, like a removed tool,
    /// so dispatch can say why instead of "unknown tool". A current name is left alone.
    pub fn withhold(&mut self, public: &str, route: Route) {
        if !self.current.contains_key(public) {
            self.retired.insert(public.to_string(), route);
        }
    }

    /// The route of a public name in the current tools array.
    pub fn route(&self, public: &str) -> Option<&Route> {
        self.current.get(public)
    }

    /// The route a public name had before it was removed.
    pub fn retired(&self, public: &str) -> Option<&Route> {
        self.retired.get(public)
    }

    /// Current public names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.current.keys().map(String::as_str)
    }

    /// How many tools the current array has.
    pub fn len(&self) -> usize {
        self.current.len()
    }

    /// The current array is empty.
    pub fn is_empty(&self) -> bool {
        self.current.is_empty()
    }

    /// Up to `n` current names closest to `wanted`: names whose tool part contains, or is
    /// contained in, the wanted name first, then by edit distance (case-insensitive) within a
    /// third of the name's length; ties by name.
    pub fn closest(&self, wanted: &str, n: usize) -> Vec<&str> {
        // The name comes from the model: a huge one would make the edit distances quadratic in
        // its length, and no real tool name is longer than a provider allows (128).
        if wanted.is_empty() || wanted.len() > 128 {
            return Vec::new();
        }
        let w = wanted.to_ascii_lowercase();
        let limit = (w.chars().count() / 3).max(2);
        let mut scored: Vec<(usize, &str)> = self
            .current
            .iter()
            .filter_map(|(public, route)| {
                let p = public.to_ascii_lowercase();
                let tool = route.tool.to_ascii_lowercase();
                let contains =
                    !tool.is_empty() && (w.contains(&tool) || tool.contains(&w) || p.contains(&w));
                let d = distance(&w, &p).min(distance(&w, &tool));
                (contains || d <= limit).then_some((if contains { 0 } else { d }, public.as_str()))
            })
            .collect();
        scored.sort();
        scored.into_iter().take(n).map(|(_, p)| p).collect()
    }
}

/// Levenshtein distance over chars.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::translate::{TranslateOptions, translate};
    use serde_json::json;
    use switchboard_core::{Catalog, Dialect, Entry, ServerCatalog, Tool};

    fn catalog(tools: &[&str]) -> Catalog {
        let mut s = ServerCatalog::new("tickets");
        for t in tools {
            s.tools
                .push(Entry::new(Tool::new(*t, "d", json!({"type": "object"}))));
        }
        Catalog::from_servers([s])
    }

    #[test]
    fn removed_names_are_retired_and_return_when_the_tool_does() {
        let opts = TranslateOptions::new(Dialect::Anthropic);
        let mut t = ToolTable::new(&translate(&catalog(&["search", "close"]), &opts));
        assert_eq!(t.route("tickets__close").unwrap().tool, "close");
        t.replace(&translate(&catalog(&["search"]), &opts));
        assert!(t.route("tickets__close").is_none());
        assert_eq!(t.retired("tickets__close").unwrap().tool, "close");
        t.replace(&translate(&catalog(&["search", "close"]), &opts));
        assert!(t.retired("tickets__close").is_none());
        assert!(t.route("tickets__close").is_some());
    }

    #[test]
    fn close_names_are_suggested() {
        let opts = TranslateOptions::new(Dialect::Anthropic);
        let t = ToolTable::new(&translate(
            &catalog(&["search", "get_ticket", "close_ticket"]),
            &opts,
        ));
        assert_eq!(t.closest("close_ticket", 3), ["tickets__close_ticket"]);
        assert_eq!(t.closest("tickets__serch", 1), ["tickets__search"]);
        assert!(t.closest("completely_unrelated_name_here", 3).is_empty());
        // A name the model made up at any length is answered at once, with no suggestions.
        assert!(t.closest(&"x".repeat(100_000), 3).is_empty());
        assert!(t.closest("", 3).is_empty());
    }
}
