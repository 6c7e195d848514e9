//! Provider-safe public names: a per-dialect bijection between (server, tool) and the name a model sees.
//!
//! # The rule (reference/providers.md §1.3)
//!
//! The *plain* name of a tool is `server__tool` (or `alias__tool` when the server has an alias,
//! or just `tool` when the alias is empty). It is used as-is when it is **lossless**:
//!
//! 1. every character of the server part and of the tool part is allowed by the dialect
//!    (`[A-Za-z0-9_-]`; Gemini also allows `.` and `:`) and neither part is empty;
//! 2. the server part contains no `__` and does not end with `_` (when there is no server part,
//!    the tool part contains no `__`);
//! 3. the name starts with a character the dialect accepts first (Gemini: a letter or `_`);
//! 4. the name is at most 64 characters long;
//! 5. the name does not end like a hashed name: `_` followed by eight lowercase hex digits.
//!
//! Otherwise the name is **hashed**: the sanitized plain name (disallowed characters replaced by
//! `_`, a `_` prepended where the first character is not accepted) is cut to 55 characters,
//! trailing `_`/`-` are trimmed, and `_` plus the first eight hex digits of
//! `sha256(server "\0" tool)` are appended.
//!
//! # Why this is unique and stable
//!
//! Whether a name is lossless, and what it is, depends only on the tool's own server, its own
//! alias, its own name and the dialect: never on the other tools. Two lossless names never
//! collide: rule 2 makes the first `__` in `S__T` the separator (an earlier `__` would lie
//! inside `S`, or straddle `S`'s last character, which is not `_`), so `S` and `T` can be read
//! back, and `S` and `T` are the original names (rule 1 changes nothing); names without a
//! server part contain no `__` while prefixed ones always do. A lossless name never equals a
//! hashed name (rule 5: hashed names always end in `_` + 8 hex digits, lossless ones never do).
//! So a collision needs two hashed names with the same 55-character prefix *and* the same
//! 32-bit hash, or a configuration that gives two servers the same alias. Only then, for the
//! colliding group alone, the names are re-hashed with a counter (`sha256(server "\0" tool
//! "\0" n)`, members in (server, tool) order), which is the only case where a name depends on
//! its neighbours. Adding or removing a server therefore changes no other server's names.
//!
//! A config may choose a tool's name ([`NameMap::with_chosen`]); that happens after every name
//! is computed, and only where no other tool has the chosen name, so it too moves no other
//! tool's name.
//!
//! Reversal is a lookup in the map built here; a name the map does not know is an unknown
//! tool. Names are never parsed back into parts.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::dialect::Dialect;

/// The longest public name any dialect accepts (Anthropic, OpenAI and Gemini all say 64).
pub const MAX_NAME_LEN: usize = 64;

/// Length of the hex hash suffix of a hashed name.
const HASH_LEN: usize = 8;

/// Why a public name differs from the plain `server__tool`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RenameReason {
    /// The server part is the configured alias (possibly empty: no prefix).
    Alias,
    /// A character the dialect rejects was replaced, a part was empty, or the name needed a
    /// leading `_`.
    SanitizedChars,
    /// The name was longer than 64 characters.
    TooLong,
    /// The plain name could be confused with another tool's name (a `__` or trailing `_` in the
    /// server part, `__` in an unprefixed tool, or a tail that looks like a hash suffix).
    Ambiguous,
    /// Two tools still got the same name (same alias for two servers, or a hash collision).
    Collision,
    /// The config names the tool (`name` in its `[servers.NAME.tool.TOOL]`).
    Configured,
}

/// One tool whose public name is not the plain `server__tool`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Rename {
    /// The configured server name.
    pub server: String,
    /// The tool's name on its server.
    pub tool: String,
    /// The name the model sees.
    pub public: String,
    /// Every reason that applied, in a fixed order.
    pub reasons: Vec<RenameReason>,
}

/// The name map of one catalog for one dialect.
#[derive(Clone, Debug, Default)]
pub struct NameMap {
    forward: HashMap<(String, String), usize>,
    reverse: HashMap<String, usize>,
    rows: Vec<Row>,
    renames: Vec<Rename>,
}

#[derive(Clone, Debug)]
struct Row {
    server: String,
    tool: String,
    public: String,
}

/// The characters a dialect accepts in a tool name (§1.1).
pub(crate) fn allowed(dialect: Dialect, c: char) -> bool {
    match dialect {
        Dialect::Gemini => c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | ':'),
        _ => c.is_ascii_alphanumeric() || matches!(c, '_' | '-'),
    }
}

/// Gemini names "must start with a letter or an underscore"; the others accept any allowed
/// character first.
fn allowed_first(dialect: Dialect, c: char) -> bool {
    match dialect {
        Dialect::Gemini => c.is_ascii_alphabetic() || c == '_',
        _ => allowed(dialect, c),
    }
}

/// The server's part of its tools' public names in `dialect`: its alias (else its name), each
/// character the dialect rejects made `_`, as [`NameMap::build`] writes it before the `__`.
/// `None` when its tools carry no prefix (`alias = ""`). (A name that starts with a character
/// the dialect does not take first gets a `_` in front; a name too long is cut after 55
/// characters and given a hash.)
pub fn written_prefix(dialect: Dialect, server: &str, alias: Option<&str>) -> Option<String> {
    let prefix = alias.unwrap_or(server);
    (!prefix.is_empty()).then(|| part(dialect, prefix, "server").0)
}

/// Whether `name` is a valid public name for `dialect` (charset, first character, length).
pub fn is_valid(dialect: Dialect, name: &str) -> bool {
    let mut chars = name.chars();
    match chars.next() {
        Some(c) if allowed_first(dialect, c) => {}
        _ => return false,
    }
    name.len() <= MAX_NAME_LEN && chars.all(|c| allowed(dialect, c))
}

/// Whether `name` is a tool name every dialect accepts as it is (`^[A-Za-z_][A-Za-z0-9_-]{0,63}$`).
pub fn is_valid_everywhere(name: &str) -> bool {
    Dialect::ALL.iter().all(|d| is_valid(*d, name))
}

/// Replace every character the dialect rejects with `_`; empty input becomes `fallback`.
/// Returns the sanitized part and whether anything changed.
fn part(dialect: Dialect, s: &str, fallback: &str) -> (String, bool) {
    if s.is_empty() {
        return (fallback.to_string(), true);
    }
    let mut changed = false;
    let out = s
        .chars()
        .map(|c| {
            if allowed(dialect, c) {
                c
            } else {
                changed = true;
                '_'
            }
        })
        .collect();
    (out, changed)
}

/// True when `name` ends in `_` followed by eight lowercase hex digits (a hashed name's tail).
fn looks_hashed(name: &str) -> bool {
    let b = name.as_bytes();
    b.len() > HASH_LEN
        && b[b.len() - HASH_LEN - 1] == b'_'
        && b[b.len() - HASH_LEN..]
            .iter()
            .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(c))
}

fn hash_hex(server: &str, tool: &str, counter: Option<usize>) -> String {
    let mut h = Sha256::new();
    h.update(server.as_bytes());
    h.update([0u8]);
    h.update(tool.as_bytes());
    if let Some(n) = counter {
        h.update([0u8]);
        h.update(n.to_string().as_bytes());
    }
    let mut s = hex::encode(h.finalize());
    s.truncate(HASH_LEN);
    s
}

/// A name computed for one tool on its own, before collisions are looked at.
struct Candidate {
    public: String,
    /// The sanitized plain name (the stem a hashed name is cut from).
    stem: String,
    hashed: bool,
    reasons: Vec<RenameReason>,
}

fn candidate(dialect: Dialect, server: &str, tool: &str, alias: Option<&str>) -> Candidate {
    let mut reasons = Vec::new();
    let prefix = alias.unwrap_or(server);
    if alias.is_some_and(|a| a != server) {
        reasons.push(RenameReason::Alias);
    }
    let (t, t_changed) = part(dialect, tool, "tool");
    let (mut stem, s_changed, ambiguous) = if prefix.is_empty() {
        (t.clone(), false, tool.contains("__"))
    } else {
        let (s, s_changed) = part(dialect, prefix, "server");
        let ambiguous = prefix.contains("__") || prefix.ends_with('_');
        (format!("{s}__{t}"), s_changed, ambiguous)
    };
    let mut sanitized = t_changed || s_changed;
    if !stem
        .chars()
        .next()
        .is_some_and(|c| allowed_first(dialect, c))
    {
        stem.insert(0, '_');
        sanitized = true;
    }
    if sanitized {
        reasons.push(RenameReason::SanitizedChars);
    }
    let too_long = stem.len() > MAX_NAME_LEN;
    if too_long {
        reasons.push(RenameReason::TooLong);
    }
    let ambiguous = ambiguous || (!sanitized && !too_long && looks_hashed(&stem));
    if ambiguous {
        reasons.push(RenameReason::Ambiguous);
    }
    let hashed = sanitized || too_long || ambiguous;
    let public = if hashed {
        hashed_name(&stem, &hash_hex(server, tool, None))
    } else {
        stem.clone()
    };
    Candidate {
        public,
        stem,
        hashed,
        reasons,
    }
}

/// `stem[..55]` with trailing `_`/`-` trimmed, then `_` and the hash.
fn hashed_name(stem: &str, hash: &str) -> String {
    // The stem is ASCII (every disallowed char became `_`), so byte slicing is char slicing.
    let keep = stem.len().min(MAX_NAME_LEN - HASH_LEN - 1);
    let cut = stem[..keep].trim_end_matches(['_', '-']);
    format!("{cut}_{hash}")
}

impl NameMap {
    /// Compute the public name of every (server, tool) pair. `aliases` maps a server name to
    /// the prefix used instead of it (an empty alias means no prefix). Duplicate pairs are
    /// named once.
    pub fn build<'a>(
        dialect: Dialect,
        entries: impl IntoIterator<Item = (&'a str, &'a str)>,
        aliases: &BTreeMap<String, String>,
    ) -> NameMap {
        let mut pairs: Vec<(&str, &str)> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for (s, t) in entries {
            if seen.insert((s, t)) {
                pairs.push((s, t));
            }
        }
        let mut cands: Vec<Candidate> = pairs
            .iter()
            .map(|(s, t)| candidate(dialect, s, t, aliases.get(*s).map(String::as_str)))
            .collect();

        // Collisions can only come from a shared alias or a 32-bit hash clash (module doc).
        // Re-hash each colliding group with a counter until every name is unique; members are
        // numbered in (server, tool) order so the result does not depend on input order.
        loop {
            let mut by_name: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
            for (i, c) in cands.iter().enumerate() {
                by_name.entry(c.public.as_str()).or_default().push(i);
            }
            let groups: Vec<Vec<usize>> = by_name.into_values().filter(|g| g.len() > 1).collect();
            if groups.is_empty() {
                break;
            }
            for mut group in groups {
                group.sort_by_key(|&i| pairs[i]);
                for (n, &i) in group.iter().enumerate() {
                    let (s, t) = pairs[i];
                    let c = &mut cands[i];
                    // A counter that grows each round guarantees progress.
                    let round = c.reasons.iter().filter(|r| **r == RenameReason::Collision);
                    let counter = n + 1 + round.count() * group.len();
                    c.public = hashed_name(&c.stem, &hash_hex(s, t, Some(counter)));
                    c.hashed = true;
                    c.reasons.push(RenameReason::Collision);
                }
            }
        }

        let mut map = NameMap::default();
        for ((s, t), mut c) in pairs.into_iter().zip(cands) {
            c.reasons.sort();
            c.reasons.dedup();
            debug_assert!(!c.hashed || !c.reasons.is_empty());
            let i = map.rows.len();
            map.forward.insert((s.to_string(), t.to_string()), i);
            map.reverse.insert(c.public.clone(), i);
            if !c.reasons.is_empty() {
                map.renames.push(Rename {
                    server: s.to_string(),
                    tool: t.to_string(),
                    public: c.public.clone(),
                    reasons: c.reasons,
                });
            }
            map.rows.push(Row {
                server: s.to_string(),
                tool: t.to_string(),
                public: c.public,
            });
        }
        map
    }

    /// The public name of a tool, if the map has it.
    pub fn public(&self, server: &str, tool: &str) -> Option<&str> {
        self.forward
            .get(&(server.to_string(), tool.to_string()))
            .map(|&i| self.rows[i].public.as_str())
    }

    /// The (server, tool) behind a public name; `None` means an unknown tool.
    pub fn resolve(&self, public: &str) -> Option<(&str, &str)> {
        self.reverse
            .get(public)
            .map(|&i| (self.rows[i].server.as_str(), self.rows[i].tool.as_str()))
    }

    /// Give tools the public names a config chose for them (`(server, tool)` to name), after
    /// every name was computed: a chosen name is taken when the tool is in the map, the name is
    /// valid for `dialect`, and no other tool has it (computed or chosen before it, in
    /// (server, tool) order), so no other tool's name ever changes. Returns why each chosen
    /// name that was not taken was not.
    pub fn with_chosen(
        &mut self,
        dialect: Dialect,
        chosen: &BTreeMap<(String, String), String>,
    ) -> Vec<String> {
        let mut refused = Vec::new();
        for ((server, tool), name) in chosen {
            let Some(&i) = self.forward.get(&(server.clone(), tool.clone())) else {
                continue;
            };
            if self.rows[i].public == *name {
                continue;
            }
            let why = if !is_valid(dialect, name) {
                Some(format!(
                    "is not a valid {dialect} tool name (letters, digits, `_` and `-`, up to {MAX_NAME_LEN}, not starting with a digit for Gemini)"
                ))
            } else {
                self.reverse.get(name.as_str()).map(|&j| {
                    format!(
                        "is already the name of {}/{}",
                        self.rows[j].server, self.rows[j].tool
                    )
                })
            };
            if let Some(why) = why {
                refused.push(format!(
                    "{server}/{tool}: name {name:?} {why}; it keeps {:?}",
                    self.rows[i].public
                ));
                continue;
            }
            let old = std::mem::replace(&mut self.rows[i].public, name.clone());
            self.reverse.remove(&old);
            self.reverse.insert(name.clone(), i);
            match self
                .renames
                .iter_mut()
                .find(|r| r.server == *server && r.tool == *tool)
            {
                Some(r) => {
                    r.public = name.clone();
                    r.reasons = vec![RenameReason::Configured];
                }
                None => self.renames.push(Rename {
                    server: server.clone(),
                    tool: tool.clone(),
                    public: name.clone(),
                    reasons: vec![RenameReason::Configured],
                }),
            }
        }
        refused
    }

    /// Every tool whose public name is not the plain `server__tool`.
    pub fn renames(&self) -> &[Rename] {
        &self.renames
    }

    /// Every (server, tool, public) triple, in input order.
    pub fn names(&self) -> impl Iterator<Item = (&str, &str, &str)> {
        self.rows
            .iter()
            .map(|r| (r.server.as_str(), r.tool.as_str(), r.public.as_str()))
    }

    /// Number of named tools.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// True when no tool is named.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn build(d: Dialect, pairs: &[(&str, &str)]) -> NameMap {
        NameMap::build(d, pairs.iter().copied(), &BTreeMap::new())
    }

    fn check(d: Dialect, server: &str, tool: &str, expect: &str) {
        let m = build(d, &[(server, tool)]);
        assert_eq!(
            m.public(server, tool),
            Some(expect),
            "{server}/{tool} on {d}"
        );
        assert_eq!(m.resolve(expect), Some((server, tool)));
    }

    #[test]
    fn plain_names_pass_through() {
        check(Dialect::Anthropic, "tickets", "search", "tickets__search");
        check(Dialect::Gemini, "docs", "get-page", "docs__get-page");
        assert!(
            build(Dialect::OpenAiChat, &[("a", "b")])
                .renames()
                .is_empty()
        );
    }

    /// Names a config chose: taken where valid and free (in (server, tool) order), refused
    /// with the reason where not, and never moving another tool's name.
    #[test]
    fn chosen_names_are_taken_when_free_and_valid() {
        let pairs = [
            ("tickets", "search"),
            ("tickets", "close_ticket"),
            ("docs", "search"),
            ("docs", "get_page"),
        ];
        let mut m = build(Dialect::Anthropic, &pairs);
        let chosen: BTreeMap<(String, String), String> = [
            (("docs", "get_page"), "read_page"),
            (("tickets", "search"), "read_page"), // docs/get_page chose it first
            (("tickets", "close_ticket"), "docs__search"), // another tool's computed name
            (("docs", "search"), "2fast"),        // valid nowhere but OpenAI's
            (("nope", "x"), "ghost"),             // no such tool: ignored
        ]
        .into_iter()
        .map(|((s, t), n)| ((s.to_string(), t.to_string()), n.to_string()))
        .collect();
        let refused = m.with_chosen(Dialect::Gemini, &chosen);
        assert_eq!(m.public("docs", "get_page"), Some("read_page"));
        assert_eq!(m.resolve("read_page"), Some(("docs", "get_page")));
        assert_eq!(m.resolve("docs__get_page"), None, "the old name is gone");
        assert_eq!(m.public("tickets", "search"), Some("tickets__search"));
        assert_eq!(
            m.public("tickets", "close_ticket"),
            Some("tickets__close_ticket")
        );
        assert_eq!(m.public("docs", "search"), Some("docs__search"));
        assert_eq!(refused.len(), 3, "{refused:?}");
        for want in [
            "tickets/search: name \"read_page\" is already the name of docs/get_page; it keeps \"tickets__search\"",
            "\"docs__search\" is already the name of docs/search",
            "\"2fast\" is not a valid gemini tool name",
        ] {
            assert!(
                refused.iter().any(|r| r.contains(want)),
                "{want} in {refused:?}"
            );
        }
        assert_eq!(
            m.renames(),
            [Rename {
                server: "docs".into(),
                tool: "get_page".into(),
                public: "read_page".into(),
                reasons: vec![RenameReason::Configured],
            }]
        );
        assert!(is_valid_everywhere("read_page") && !is_valid_everywhere("2fast"));
    }

    #[test]
    fn dots_are_kept_on_gemini_only() {
        check(Dialect::Gemini, "fs", "read.file", "fs__read.file");
        let m = build(Dialect::Anthropic, &[("fs", "read.file")]);
        let p = m.public("fs", "read.file").unwrap();
        assert!(p.starts_with("fs__read_file_") && p.len() == "fs__read_file_".len() + 8);
        assert_eq!(m.renames()[0].reasons, vec![RenameReason::SanitizedChars]);
    }

    #[test]
    fn gemini_needs_a_letter_or_underscore_first() {
        let m = build(Dialect::Gemini, &[("1password", "get")]);
        let p = m.public("1password", "get").unwrap();
        assert!(p.starts_with("_1password__get_"), "{p}");
        check(Dialect::Anthropic, "1password", "get", "1password__get");
    }

    #[test]
    fn the_separator_cannot_be_forged() {
        // Plain names would both be `a__b__c`.
        let m = build(Dialect::Anthropic, &[("a__b", "c"), ("a", "b__c")]);
        assert_eq!(m.public("a", "b__c"), Some("a__b__c"));
        let other = m.public("a__b", "c").unwrap();
        assert_ne!(other, "a__b__c");
        assert_eq!(m.renames()[0].reasons, vec![RenameReason::Ambiguous]);
    }

    #[test]
    fn a_hash_shaped_tail_is_hashed() {
        let m = build(Dialect::Anthropic, &[("s", "get_deadbeef")]);
        assert_ne!(m.public("s", "get_deadbeef"), Some("s__get_deadbeef"));
    }

    #[test]
    fn long_names_are_cut_with_a_hash() {
        let tool = "x".repeat(100);
        let m = build(Dialect::OpenAiChat, &[("srv", &tool)]);
        let p = m.public("srv", &tool).unwrap();
        assert_eq!(p.len(), 64);
        assert!(p.starts_with("srv__xxx"));
        assert_eq!(m.renames()[0].reasons, vec![RenameReason::TooLong]);
    }

    #[test]
    fn aliases_replace_the_server_part_and_empty_means_none() {
        let aliases = BTreeMap::from([
            ("github".to_string(), "gh".to_string()),
            ("docs".to_string(), String::new()),
        ]);
        let m = NameMap::build(
            Dialect::Anthropic,
            [("github", "list"), ("docs", "search")],
            &aliases,
        );
        assert_eq!(m.public("github", "list"), Some("gh__list"));
        assert_eq!(m.public("docs", "search"), Some("search"));
        assert_eq!(m.resolve("search"), Some(("docs", "search")));
        assert!(
            m.renames()
                .iter()
                .all(|r| r.reasons == [RenameReason::Alias])
        );
    }

    #[test]
    fn a_shared_alias_is_disambiguated_in_either_order() {
        let aliases = BTreeMap::from([
            ("a".to_string(), "x".to_string()),
            ("b".to_string(), "x".to_string()),
        ]);
        let one = NameMap::build(Dialect::Anthropic, [("a", "t"), ("b", "t")], &aliases);
        let two = NameMap::build(Dialect::Anthropic, [("b", "t"), ("a", "t")], &aliases);
        assert_ne!(one.public("a", "t"), one.public("b", "t"));
        assert_eq!(one.public("a", "t"), two.public("a", "t"));
        assert_eq!(one.public("b", "t"), two.public("b", "t"));
    }

    #[test]
    fn unknown_names_resolve_to_nothing() {
        let m = build(Dialect::Anthropic, &[("tickets", "search")]);
        assert_eq!(m.resolve("tickets__searc"), None);
        assert_eq!(m.resolve("search"), None);
    }

    fn name_strategy() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-z]{1,8}",
            "[a-z_]{1,6}__[a-z_]{1,6}",
            "[a-zA-Z0-9 ./:_-]{0,20}",
            "\\PC{0,12}",
            "[a-z]{64,70}[a-z]{1,5}",
            "[a-zA-Z0-9_-]{150,200}",
            "[a-z]{1,4}_[0-9a-f]{8}",
        ]
    }

    proptest! {
        #[test]
        fn names_are_valid_unique_and_reversible(
            pairs in proptest::collection::vec((name_strategy(), name_strategy()), 1..30),
            dialect in proptest::sample::select(Dialect::ALL.to_vec()),
        ) {
            let m = NameMap::build(dialect, pairs.iter().map(|(s, t)| (s.as_str(), t.as_str())), &BTreeMap::new());
            let mut seen = std::collections::HashSet::new();
            for (s, t) in &pairs {
                let p = m.public(s, t).unwrap();
                prop_assert!(is_valid(dialect, p), "{p:?} invalid for {dialect}");
                prop_assert_eq!(m.resolve(p), Some((s.as_str(), t.as_str())));
                seen.insert((s.clone(), t.clone(), p.to_string()));
            }
            let publics: std::collections::HashSet<_> = seen.iter().map(|x| x.2.clone()).collect();
            prop_assert_eq!(publics.len(), seen.len());
        }

        #[test]
        fn aliased_names_are_valid_unique_and_reversible(
            pairs in proptest::collection::vec((name_strategy(), name_strategy()), 1..30),
            aliases in proptest::collection::vec(
                (name_strategy(), prop_oneof![Just(String::new()), Just("x".to_string()), name_strategy()]),
                0..8,
            ),
            dialect in proptest::sample::select(Dialect::ALL.to_vec()),
        ) {
            // Aliases for servers that exist (and for some that do not), shared ones included.
            let mut alias_map: BTreeMap<String, String> = aliases.into_iter().collect();
            for (i, (s, _)) in pairs.iter().enumerate() {
                if i % 3 == 0 {
                    alias_map.insert(s.clone(), if i % 2 == 0 { String::new() } else { "x".into() });
                }
            }
            let m = NameMap::build(dialect, pairs.iter().map(|(s, t)| (s.as_str(), t.as_str())), &alias_map);
            let mut publics = std::collections::HashSet::new();
            for (s, t) in &pairs {
                let p = m.public(s, t).unwrap();
                prop_assert!(is_valid(dialect, p), "{p:?} invalid for {dialect}");
                prop_assert_eq!(m.resolve(p), Some((s.as_str(), t.as_str())));
                publics.insert(p.to_string());
            }
            let distinct: std::collections::HashSet<_> = pairs.iter().collect();
            prop_assert_eq!(publics.len(), distinct.len());
            prop_assert_eq!(m.len(), distinct.len());
        }

        #[test]
        fn names_differing_after_char_64_stay_distinct(
            stem in "[a-z]{70}", a in "[a-z]{1,5}", b in "[a-z]{1,5}",
        ) {
            prop_assume!(a != b);
            let (ta, tb) = (format!("{stem}{a}"), format!("{stem}{b}"));
            let m = build(Dialect::Anthropic, &[("s", &ta), ("s", &tb)]);
            prop_assert_ne!(m.public("s", &ta), m.public("s", &tb));
        }

        #[test]
        fn adding_or_removing_a_server_changes_no_other_name(
            base in proptest::collection::vec((name_strategy(), name_strategy()), 1..20),
            extra in proptest::collection::vec(name_strategy(), 1..6),
            extra_server in name_strategy(),
            dialect in proptest::sample::select(Dialect::ALL.to_vec()),
        ) {
            prop_assume!(base.iter().all(|(s, _)| *s != extra_server));
            let before = NameMap::build(dialect, base.iter().map(|(s, t)| (s.as_str(), t.as_str())), &BTreeMap::new());
            let more = base.iter().map(|(s, t)| (s.as_str(), t.as_str()))
                .chain(extra.iter().map(|t| (extra_server.as_str(), t.as_str())));
            let after = NameMap::build(dialect, more, &BTreeMap::new());
            for (s, t) in &base {
                prop_assert_eq!(before.public(s, t), after.public(s, t));
            }
        }
    }
}
