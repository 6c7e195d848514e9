//! Search mode for the agent loop (`--tools search`): instead of every tool, the model gets the
//! facade's `search_tools` plus the tools its searches found. Found tools join the array at the
//! next request and stay (so the array only grows and the prompt cache breaks once per find).
//! The index comes from a [`Finder`] (hybrid with a local model, else lexical), rebuilt when the
//! catalog changes.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde_json::{Value, json};
use switchboard_core::names::NameMap;
use switchboard_core::{Catalog, ServerCatalog, facade};
use switchboard_providers::{SanitizeOptions, ToolSpec, prepare_tool};
use switchboard_search::{Doc, Index};

use crate::dispatch::{Outcome, Status, ToolInput, ToolUse};
use crate::finder::{Finder, SearchArgs, docs_key};
use crate::shape::Shaped;
use crate::translate::TranslateOptions;

/// The searchable catalog and the tools found so far.
pub struct ToolSearch {
    finder: Arc<Finder>,
    index: Option<(u64, Index, NameMap, usize)>,
    loaded: BTreeSet<(String, String)>,
}

impl Default for ToolSearch {
    /// Looks for the model through `$SWITCHBOARD_MODEL_DIR` and the default location.
    fn default() -> Self {
        Self::new(Arc::new(Finder::locate(None)))
    }
}

impl ToolSearch {
    /// Search with this finder's ranking.
    pub fn new(finder: Arc<Finder>) -> Self {
        Self {
            finder,
            index: None,
            loaded: BTreeSet::new(),
        }
    }

    /// The catalog the model may reach: selected servers, config filters applied.
    pub fn listed(catalog: &Catalog, opts: &TranslateOptions) -> Vec<ServerCatalog> {
        catalog
            .servers
            .values()
            .filter(|s| {
                opts.servers
                    .as_ref()
                    .is_none_or(|set| set.contains(&s.server))
            })
            .map(|s| {
                let mut s = s.clone();
                if let Some(f) = opts.filters.get(&s.server) {
                    s.tools.retain(|t| f.permits_tool(&t.def));
                }
                // A second tool of the same name is never sent (translate reports it), so it
                // is not searched either: a search would find the one name twice.
                let mut seen = BTreeSet::new();
                s.tools.retain(|t| seen.insert(t.def.name.clone()));
                s
            })
            .collect()
    }

    /// The catalog to translate: the listed servers with only the loaded tools.
    pub fn loaded_catalog(&self, catalog: &Catalog, opts: &TranslateOptions) -> Catalog {
        let servers = Self::listed(catalog, opts).into_iter().map(|mut s| {
            let name = s.server.clone();
            s.tools
                .retain(|t| self.loaded.contains(&(name.clone(), t.def.name.clone())));
            s
        });
        Catalog::from_servers(servers)
    }

    /// The `search_tools` definition for the dialect, to put first in the array.
    pub fn search_spec(opts: &TranslateOptions) -> Option<ToolSpec> {
        let tool = facade::search_tool(facade::Found::Loaded);
        let sanitize = SanitizeOptions {
            strict: opts.strict,
            gemini_openapi: opts.gemini_openapi,
        };
        prepare_tool(
            opts.dialect,
            &tool.name,
            tool.description.as_deref(),
            &tool.input_schema,
            &sanitize,
        )
        .ok()
        .map(|p| p.spec)
    }

    /// Rebuild the index when the listed tools changed (a list change, a pin approval, a
    /// filter). Embedding runs on a blocking thread, so the runtime (and Ctrl-C in `chat`) keeps
    /// going while a large new catalog is embedded.
    pub async fn refresh(&mut self, catalog: &Catalog, opts: &TranslateOptions) {
        let servers = Self::listed(catalog, opts);
        let docs = Doc::from_servers(&servers);
        // The names a search answers with come from the aliases and chosen names too (a
        // `/reload` may change them while the tools stay the same).
        let key = {
            use std::hash::{Hash as _, Hasher as _};
            let mut h = std::collections::hash_map::DefaultHasher::new();
            docs_key(&docs).hash(&mut h);
            opts.aliases.hash(&mut h);
            opts.chosen_names.hash(&mut h);
            h.finish()
        };
        if self.index.as_ref().is_some_and(|(k, ..)| *k == key) {
            return;
        }
        let pairs: Vec<(&str, &str)> = servers
            .iter()
            .flat_map(|s| {
                s.tools
                    .iter()
                    .map(move |t| (s.server.as_str(), t.def.name.as_str()))
            })
            .collect();
        let mut names = NameMap::build(opts.dialect, pairs.iter().copied(), &opts.aliases);
        names.with_chosen(opts.dialect, &opts.chosen_names);
        let total = docs.len();
        let finder = self.finder.clone();
        let built = tokio::task::spawn_blocking(move || finder.index(&docs)).await;
        let index = match built {
            Ok(index) => index,
            Err(e) => {
                tracing::warn!("tool search is lexical for now: building the index failed: {e}");
                Finder::lexical_index(&Doc::from_servers(&servers))
            }
        };
        self.index = Some((key, index, names, total));
    }

    /// Answer one `search_tools` use: the matches with their public names, descriptions and
    /// schemas; the matches are loaded for the next request.
    pub fn answer(&mut self, catalog: &Catalog, u: &ToolUse) -> Outcome {
        let arguments = match &u.input {
            ToolInput::Json(v) => v.clone(),
            ToolInput::Unparsed { raw, .. } => Value::String(raw.clone()),
        };
        let outcome = |status, result| Outcome {
            id: u.id.clone(),
            name: u.name.clone(),
            server: None,
            tool: None,
            arguments: arguments.clone(),
            status,
            result,
            elapsed_ms: 0,
            output_schema_problem: None,
        };
        let parsed = match &u.input {
            ToolInput::Json(v) => SearchArgs::parse(v),
            ToolInput::Unparsed { error, .. } => Err(format!(
                "The arguments for search_tools are not valid JSON ({error}). Send them again as one JSON object with a \"query\" string."
            )),
        };
        let args = match parsed {
            Ok(a) => a,
            Err(why) => return outcome(Status::InvalidArguments, Shaped::error(why)),
        };
        let Some((_, index, names, total)) = &self.index else {
            return outcome(Status::ToolError, Shaped::error("No tools are available."));
        };
        let mut found = Vec::new();
        for hit in args.run(index) {
            let Some(entry) = catalog.tool(&hit.server, &hit.tool) else {
                continue;
            };
            let Some(public) = names.public(&hit.server, &hit.tool) else {
                continue;
            };
            // Name and description only: the definition itself joins the tools array at the
            // next request, and a schema here would be paid for again on every later request,
            // as the result stays in the conversation.
            found.push(json!({
                "name": public,
                "description": entry.def.description,
            }));
            self.loaded.insert((hit.server.clone(), hit.tool.clone()));
        }
        let note = SearchArgs::note_for(found.len())
            .unwrap_or("The tools found are now in your tool list: call them directly by name.");
        let body = json!({
            "tools": found,
            "total_tools": total,
            "note": note,
        });
        outcome(
            Status::Ok,
            Shaped {
                parts: vec![crate::shape::ResultPart::Text {
                    text: body.to_string(),
                }],
                is_error: false,
                cut: None,
                links: Vec::new(),
            },
        )
    }

    /// The tools found so far, as (server, tool).
    pub fn found(&self) -> Vec<(String, String)> {
        self.loaded.iter().cloned().collect()
    }

    /// Count these tools as found (a conversation taken up again): they are in the tools
    /// array from the next request on, those the catalog still lists.
    pub fn load_found(&mut self, found: impl IntoIterator<Item = (String, String)>) {
        self.loaded.extend(found);
    }

    /// The tools found so far, per server.
    pub fn loaded(&self) -> BTreeMap<&str, Vec<&str>> {
        let mut out: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for (s, t) in &self.loaded {
            out.entry(s.as_str()).or_default().push(t.as_str());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use switchboard_core::{Dialect, Entry, Tool};

    #[test]
    fn a_tool_listed_twice_is_searched_once_as_its_first_definition() {
        let mut dup = ServerCatalog::new("dup");
        for description in ["first", "second"] {
            dup.tools
                .push(Entry::new(Tool::new("get_item", description, json!({}))));
        }
        dup.tools
            .push(Entry::new(Tool::new("other", "d", json!({}))));
        let listed = ToolSearch::listed(
            &Catalog::from_servers([dup]),
            &TranslateOptions::new(Dialect::Anthropic),
        );
        let tools: Vec<(&str, Option<&str>)> = listed[0]
            .tools
            .iter()
            .map(|t| (t.def.name.as_str(), t.def.description.as_deref()))
            .collect();
        assert_eq!(tools, [("get_item", Some("first")), ("other", Some("d"))]);
    }

    /// The names a search answers with follow a changed alias (chat's `/reload`) even when
    /// the tools themselves did not change.
    #[tokio::test]
    async fn a_search_answers_with_the_names_of_the_aliases_in_force() {
        let mut files = ServerCatalog::new("files");
        files.tools.push(Entry::new(Tool::new(
            "read_file",
            "Read a text file from disk",
            json!({"type": "object"}),
        )));
        files.tools.push(Entry::new(Tool::new(
            "other",
            "d",
            json!({"type": "object"}),
        )));
        let catalog = Catalog::from_servers([files]);
        let mut search = ToolSearch::new(Arc::new(Finder::lexical()));
        let find = |search: &mut ToolSearch| {
            let u = ToolUse {
                id: "1".into(),
                name: "search_tools".into(),
                input: ToolInput::Json(json!({"query": "read a file"})),
            };
            serde_json::to_string(&search.answer(&catalog, &u).result.parts).unwrap()
        };
        let mut opts = TranslateOptions::new(Dialect::Anthropic);
        search.refresh(&catalog, &opts).await;
        let plain = find(&mut search);
        opts.aliases.insert("files".into(), "fs".into());
        search.refresh(&catalog, &opts).await;
        let aliased = find(&mut search);
        assert!(plain.contains("files__read_file"), "{plain}");
        assert!(aliased.contains("fs__read_file"), "{aliased}");
    }
}
