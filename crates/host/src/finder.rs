//! The ranking behind `search_tools`, shared by the loop's search mode and the gateway's facade:
//! hybrid (BM25F plus the local sentence-embedding model) when a model directory is found,
//! lexical otherwise, and it says which. Also the one reading of `search_tools` arguments.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use serde_json::Value;
use switchboard_search::{BuildOptions, Doc, Embedder, EmbeddingCache, Hit, Index, Method};

/// How many matches a search returns unless the caller asks for another number.
pub const DEFAULT_LIMIT: usize = 5;
/// The most matches one search returns.
pub const MAX_LIMIT: usize = 20;
/// The longest query accepted, in characters (a search is a few words; a pasted document is a
/// mistake the caller should hear about rather than a slow search).
pub const MAX_QUERY_CHARS: usize = 1000;

/// The environment variable naming a model directory when the config names none.
pub const MODEL_ENV: &str = "SWITCHBOARD_MODEL_DIR";

/// Where the model directory was found, for messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModelOrigin {
    /// `[settings] search_model` (or a flag the caller passed the same way).
    Setting,
    /// `$SWITCHBOARD_MODEL_DIR`.
    Env,
    /// The user data directory's default location.
    Default,
}

impl ModelOrigin {
    /// How a message names it.
    pub fn as_str(self) -> &'static str {
        match self {
            ModelOrigin::Setting => "[settings] search_model",
            ModelOrigin::Env => MODEL_ENV,
            ModelOrigin::Default => "the default model location",
        }
    }

    /// The end of a warning that no model loaded from a directory found this way: at the
    /// default location, what to run to put one there (starting with `; `); nothing for a
    /// directory the user named, which they know how to fill.
    pub fn install_hint(self) -> &'static str {
        match self {
            ModelOrigin::Default => INSTALL_HINT,
            ModelOrigin::Setting | ModelOrigin::Env => "",
        }
    }
}

/// What a warning about a missing model at the default location ends with.
const INSTALL_HINT: &str = "; run `switchboard model install`, or set [settings] search_model or SWITCHBOARD_MODEL_DIR to a sentence-transformers directory, for semantic ranking";

/// The model directory to use: the setting, else `$SWITCHBOARD_MODEL_DIR`, else
/// `<user data dir>/switchboard/models/all-MiniLM-L6-v2`. `None` only when there is no user
/// data directory either.
pub fn model_dir(setting: Option<&Path>) -> Option<(PathBuf, ModelOrigin)> {
    if let Some(dir) = setting {
        return Some((dir.to_path_buf(), ModelOrigin::Setting));
    }
    if let Some(dir) = std::env::var_os(MODEL_ENV).filter(|d| !d.is_empty()) {
        return Some((PathBuf::from(dir), ModelOrigin::Env));
    }
    switchboard_search::embed::default_model_dir().map(|d| (d, ModelOrigin::Default))
}

/// Builds search indexes over tool documents. The model is loaded on first use (about half a
/// second) and kept; a missing or broken model leaves every index lexical, logged once.
pub struct Finder {
    dir: Option<(PathBuf, ModelOrigin)>,
    cache: Option<EmbeddingCache>,
    embedder: OnceLock<Option<Embedder>>,
    /// One build at a time: a second build waits and then finds the first one's vectors in
    /// the cache, instead of embedding the same tools again on the same cores.
    building: Mutex<()>,
}

impl std::fmt::Debug for Finder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Finder")
            .field("dir", &self.dir)
            .field("cache", &self.cache)
            .field("loaded", &self.embedder.get().map(Option::is_some))
            .finish()
    }
}

impl Finder {
    /// A finder that looks for the model as [`model_dir`] says and caches embeddings in the
    /// user cache directory. Nothing is read until the first index is built.
    pub fn locate(setting: Option<&Path>) -> Self {
        Self {
            dir: model_dir(setting),
            cache: EmbeddingCache::default_dir().map(EmbeddingCache::in_dir),
            embedder: OnceLock::new(),
            building: Mutex::new(()),
        }
    }

    /// A finder with the model that [`model_dir`] finds for `setting` loaded now, or why it
    /// could not be loaded. Logs nothing: the caller, which may keep another model when this
    /// one fails, says what it did.
    pub fn load(setting: Option<&Path>) -> Result<Self, String> {
        let Some((dir, origin)) = model_dir(setting) else {
            return Err(format!(
                "no model directory (no [settings] search_model, no {MODEL_ENV}, no user data directory)"
            ));
        };
        let embedder = Embedder::load(&dir).map_err(|e| e.to_string())?;
        let cell = OnceLock::new();
        let _ = cell.set(Some(embedder));
        Ok(Self {
            dir: Some((dir, origin)),
            cache: EmbeddingCache::default_dir().map(EmbeddingCache::in_dir),
            embedder: cell,
            building: Mutex::new(()),
        })
    }

    /// A finder that never uses a model.
    pub fn lexical() -> Self {
        let embedder = OnceLock::new();
        let _ = embedder.set(None);
        Self {
            dir: None,
            cache: None,
            embedder,
            building: Mutex::new(()),
        }
    }

    /// A finder with a model already loaded (or none) and the given cache.
    pub fn with(embedder: Option<Embedder>, cache: Option<EmbeddingCache>) -> Self {
        let cell = OnceLock::new();
        let _ = cell.set(embedder);
        Self {
            dir: None,
            cache,
            embedder: cell,
            building: Mutex::new(()),
        }
    }

    /// Whether a model may be used: loaded, or not tried yet and a directory is known.
    pub fn may_have_model(&self) -> bool {
        match self.embedder.get() {
            Some(loaded) => loaded.is_some(),
            None => self.dir.is_some(),
        }
    }

    /// The model, loading it the first time.
    pub fn embedder(&self) -> Option<&Embedder> {
        self.embedder
            .get_or_init(|| {
                let (dir, origin) = self.dir.as_ref()?;
                match Embedder::load(dir) {
                    Ok(e) => {
                        tracing::info!(model = %dir.display(), from = origin.as_str(), "tool search is hybrid (BM25F + embeddings)");
                        Some(e)
                    }
                    Err(e) => {
                        let hint = origin.install_hint();
                        tracing::warn!("tool search is lexical only: {e}{hint}");
                        None
                    }
                }
            })
            .as_ref()
    }

    /// A lexical index: milliseconds even for thousands of tools.
    pub fn lexical_index(docs: &[Doc]) -> Index {
        Index::build(docs, None)
    }

    /// The best index this finder can build: hybrid with the model (embedding what the cache
    /// lacks, which can take seconds for a large new catalog), else lexical.
    pub fn index(&self, docs: &[Doc]) -> Index {
        self.index_if(docs, || true)
            .unwrap_or_else(|| Self::lexical_index(docs))
    }

    /// Like [`Self::index`], but once it is this build's turn, builds only if `wanted()` still
    /// says so (a newer catalog may have made it pointless while it waited).
    pub fn index_if(&self, docs: &[Doc], wanted: impl FnOnce() -> bool) -> Option<Index> {
        let _one_at_a_time = self.building.lock().unwrap_or_else(|e| e.into_inner());
        if !wanted() {
            return None;
        }
        Some(self.build(docs))
    }

    fn build(&self, docs: &[Doc]) -> Index {
        let Some(embedder) = self.embedder() else {
            return Self::lexical_index(docs);
        };
        let index = Index::build_with(
            docs,
            BuildOptions {
                embedder: Some(embedder),
                cache: self.cache.as_ref(),
                ..BuildOptions::default()
            },
        );
        for issue in index.issues() {
            tracing::warn!("tool search index: {issue}");
        }
        index
    }
}

/// A key for a set of documents: equal keys mean the same tools with the same definitions and
/// server texts, so an index built for one serves the other.
pub fn docs_key(docs: &[Doc]) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    docs.len().hash(&mut h);
    for d in docs {
        (&d.server, &d.server_description, &d.tool, &d.hash).hash(&mut h);
    }
    h.finish()
}

/// The arguments of one `search_tools` call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchArgs {
    /// What the caller wants to do.
    pub query: String,
    /// How many matches to return (1 to [`MAX_LIMIT`]).
    pub limit: usize,
}

impl SearchArgs {
    /// Read `{"query": STRING, "limit"?: INTEGER}`. The error is a sentence the model can act
    /// on. A limit out of range is clamped rather than refused.
    pub fn parse(args: &Value) -> Result<Self, String> {
        let Some(query) = args.get("query").and_then(Value::as_str) else {
            return Err(
                "search_tools needs a \"query\" string saying what you want to do; call it again with one."
                    .to_string(),
            );
        };
        if query.trim().is_empty() {
            return Err(
                "search_tools got an empty \"query\"; describe what you want to do in a few words."
                    .to_string(),
            );
        }
        let chars = query.chars().count();
        if chars > MAX_QUERY_CHARS {
            return Err(format!(
                "search_tools \"query\" is {chars} characters long; describe what you want to do in a few words (at most {MAX_QUERY_CHARS} characters)."
            ));
        }
        let limit = match args.get("limit") {
            None | Some(Value::Null) => DEFAULT_LIMIT,
            // Models without strict schemas often send numbers as strings.
            Some(v) => match v
                .as_f64()
                .or_else(|| v.as_str().and_then(|s| s.trim().parse::<f64>().ok()))
            {
                Some(n) if n.is_finite() => (n.max(1.0).min(MAX_LIMIT as f64)) as usize,
                _ => {
                    return Err(format!(
                        "search_tools \"limit\" must be a number from 1 to {MAX_LIMIT}."
                    ));
                }
            },
        };
        Ok(Self {
            query: query.to_string(),
            limit: limit.clamp(1, MAX_LIMIT),
        })
    }

    /// The matches in an index, best first (hybrid when the index has embeddings).
    pub fn run(&self, index: &Index) -> Vec<Hit> {
        index.search(&self.query, self.limit, Method::Hybrid)
    }
}

/// What a search that found nothing tells the model (only a lexical ranking finds nothing: a
/// hybrid one always returns its best matches).
pub const NOTHING_FOUND: &str = "No tool matched these words. Search again with other words for the one action you want (a verb and an object, such as \"send email\" or \"list files\").";

impl SearchArgs {
    /// The note for an answer with `found` matches, if it needs one.
    pub fn note_for(found: usize) -> Option<&'static str> {
        (found == 0).then_some(NOTHING_FOUND)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Only the default location's warnings say what to run; the hint names the variable
    /// the finder reads.
    #[test]
    fn the_install_hint_is_for_the_default_location() {
        let hint = ModelOrigin::Default.install_hint();
        assert!(hint.contains("switchboard model install") && hint.contains(MODEL_ENV));
        assert_eq!(ModelOrigin::Setting.install_hint(), "");
        assert_eq!(ModelOrigin::Env.install_hint(), "");
    }

    #[test]
    fn arguments_are_read_once_for_everyone() {
        assert_eq!(
            SearchArgs::parse(&json!({"query": "send mail"})),
            Ok(SearchArgs {
                query: "send mail".into(),
                limit: DEFAULT_LIMIT
            })
        );
        assert_eq!(
            SearchArgs::parse(&json!({"query": "x", "limit": 500})).map(|a| a.limit),
            Ok(MAX_LIMIT)
        );
        assert_eq!(
            SearchArgs::parse(&json!({"query": "x", "limit": 0})).map(|a| a.limit),
            Ok(1)
        );
        assert_eq!(
            SearchArgs::parse(&json!({"query": "x", "limit": 3.0})).map(|a| a.limit),
            Ok(3)
        );
        assert_eq!(
            SearchArgs::parse(&json!({"query": "x", "limit": " 7 "})).map(|a| a.limit),
            Ok(7)
        );
        assert!(SearchArgs::parse(&json!({"query": "x", "limit": "many"})).is_err());
        assert!(SearchArgs::parse(&json!({"query": "x".repeat(MAX_QUERY_CHARS + 1)})).is_err());
        assert!(SearchArgs::parse(&json!({"query": "é".repeat(MAX_QUERY_CHARS)})).is_ok());
        assert!(SearchArgs::parse(&json!({"query": "  "})).is_err());
        assert!(SearchArgs::parse(&json!({"limit": 3})).is_err());
        assert!(SearchArgs::parse(&json!("send mail")).is_err());
    }

    #[test]
    fn the_setting_wins_over_the_environment() {
        let (dir, origin) = model_dir(Some(Path::new("/models/x"))).expect("a dir");
        assert_eq!(dir, PathBuf::from("/models/x"));
        assert_eq!(origin, ModelOrigin::Setting);
    }

    #[test]
    fn a_missing_model_leaves_a_lexical_index_that_still_finds_tools() {
        let dir = tempfile::tempdir().expect("tempdir");
        let finder = Finder::locate(Some(&dir.path().join("no-model")));
        assert!(finder.may_have_model());
        let why = Finder::load(Some(&dir.path().join("no-model"))).expect_err("no model there");
        assert!(!why.is_empty());
        let docs = vec![
            Doc::new("mail", "send_email", "Send an email to someone", &[]),
            Doc::new("files", "read_file", "Read a file from disk", &[]),
        ];
        let index = finder.index(&docs);
        assert!(!finder.may_have_model());
        let hits = SearchArgs::parse(&json!({"query": "email"}))
            .expect("args")
            .run(&index);
        assert_eq!(hits.first().map(|h| h.tool.as_str()), Some("send_email"));
        assert_eq!(SearchArgs::note_for(hits.len()), None);
        // Words no tool has: nothing found, and the note tells the model what to do instead.
        let none = SearchArgs::parse(&json!({"query": "zzqx"}))
            .expect("args")
            .run(&index);
        assert!(none.is_empty());
        assert_eq!(SearchArgs::note_for(none.len()), Some(NOTHING_FOUND));
    }
}
