//! The translate stage: catalog + options → the exact request body for one dialect, with public
//! names, every rename and schema change, the tools left out and why, and the limits broken.
//!
//! Pure: no I/O. Names come from `switchboard_core::names`, schemas and bodies from
//! `switchboard_providers`; this module only selects, joins and reports.

use std::collections::{BTreeMap, BTreeSet};

use crate::config::ServerInstructions;
use serde::Serialize;
use serde_json::Value;
use switchboard_core::names::{NameMap, Rename};
use switchboard_core::{Catalog, Dialect, ToolFilter};
use switchboard_providers::{
    Change, LimitViolation, Message, RequestParts, SanitizeOptions, ToolSpec, check_limits,
    prepare_tool, render_request,
};

/// What to translate and how.
#[derive(Clone, Debug)]
pub struct TranslateOptions {
    /// The target wire format.
    pub dialect: Dialect,
    /// Model id; a per-dialect default when `None`.
    pub model: Option<String>,
    /// Server name → public prefix (empty: no prefix).
    pub aliases: BTreeMap<String, String>,
    /// Per-server allow/deny filters; a server without one passes every tool.
    pub filters: BTreeMap<String, ToolFilter>,
    /// Only these servers (a profile's selection); `None` means all.
    pub servers: Option<BTreeSet<String>>,
    /// The user's own system prompt, first in the system prompt.
    pub system: Option<String>,
    /// Put each server's `instructions` into the system prompt.
    pub instructions: bool,
    /// Mark the prefix for the provider's prompt cache where it needs marking (Anthropic).
    pub prompt_cache: bool,
    /// Servers whose entry says otherwise about their instructions (none, or its own text).
    pub server_instructions: BTreeMap<String, ServerInstructions>,
    /// Public names the config chose for tools, by (server, tool).
    pub chosen_names: BTreeMap<(String, String), String>,
    /// Today's date for the system prompt, if wanted (the caller reads the clock).
    pub date: Option<String>,
    /// OpenAI: convert schemas to strict mode where possible.
    pub strict: bool,
    /// Gemini: send `parameters` (OpenAPI subset) instead of `parametersJsonSchema`.
    pub gemini_openapi: bool,
    /// The user message; a neutral default when `None`.
    pub message: Option<String>,
    /// The reply's token limit to put in the request (`None`: the dialect's default, if it
    /// requires one).
    pub max_tokens: Option<u32>,
    /// The request goes to a server that speaks the dialect but is not its provider's (see
    /// [`crate::agent::compatible_server`]): the limit goes in the field such servers read.
    pub compatible_server: bool,
    /// The sampling temperature to show in the request.
    pub temperature: Option<f64>,
    /// The reasoning effort to show in the request, in the fields its API and model take it.
    pub reasoning_effort: Option<String>,
}

impl TranslateOptions {
    /// Defaults for a dialect: every server, no aliases or filters, instructions on.
    pub fn new(dialect: Dialect) -> Self {
        Self {
            dialect,
            model: None,
            aliases: BTreeMap::new(),
            filters: BTreeMap::new(),
            servers: None,
            system: None,
            instructions: true,
            prompt_cache: true,
            server_instructions: BTreeMap::new(),
            chosen_names: BTreeMap::new(),
            date: None,
            strict: false,
            gemini_openapi: false,
            message: None,
            max_tokens: None,
            compatible_server: false,
            temperature: None,
            reasoning_effort: None,
        }
    }
}

/// A model to name in the request when the caller gives none.
pub fn default_model(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Anthropic => "claude-sonnet-4-5",
        Dialect::OpenAiChat | Dialect::OpenAiResponses => "gpt-4.1",
        Dialect::Gemini => "gemini-2.5-flash",
    }
}

/// The user message used when the caller gives none.
pub const DEFAULT_MESSAGE: &str = "Hello.";

/// One tool that reached the request, under its public name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NameRow {
    /// Configured server name.
    pub server: String,
    /// Tool name on that server.
    pub tool: String,
    /// Name the model sees.
    pub public: String,
    /// Sent with `strict: true`; pass arguments through
    /// `switchboard_providers::arguments::restore` before validating them.
    pub strict: bool,
    /// The schema root was wrapped as `{value: ...}`; `restore` unwraps it.
    pub wrapped_root: bool,
}

/// One change to one tool's schema or description.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ToolChange {
    /// Public name of the tool.
    pub public: String,
    /// Its server.
    pub server: String,
    /// Its name on the server.
    pub tool: String,
    /// What changed.
    pub change: Change,
}

/// A tool that was selected but could not be sent.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Excluded {
    /// Its server.
    pub server: String,
    /// Its name on the server.
    pub tool: String,
    /// Why.
    pub reason: String,
}

/// The result of translating a catalog for one dialect.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Translation {
    /// The dialect.
    pub dialect: Dialect,
    /// The exact request body.
    pub request: Value,
    /// Every tool in the request, in request order.
    pub names: Vec<NameRow>,
    /// Tools whose public name is not the plain `server__tool`.
    pub renames: Vec<Rename>,
    /// Every schema or description change, per tool.
    pub changes: Vec<ToolChange>,
    /// Selected tools left out, with the reason.
    pub excluded: Vec<Excluded>,
    /// Tools the config keeps from models (its `tools` lists, a profile, another host's
    /// permission rules), with the list or rule that does.
    pub hidden: Vec<Excluded>,
    /// Hard provider limits the request breaks (it should not be sent as is).
    pub violations: Vec<LimitViolation>,
    /// The system prompt that was put into the request.
    pub system: String,
    /// The tools as sent (public name, description, sanitized schema), in request order; the
    /// rent counter reads these so it counts exactly what the provider receives.
    #[serde(skip)]
    pub tools: Vec<ToolSpec>,
}

/// Translate `catalog` for `opts.dialect`.
pub fn translate(catalog: &Catalog, opts: &TranslateOptions) -> Translation {
    let mut selected: Vec<(&str, &switchboard_core::Tool)> = Vec::new();
    let mut hidden = Vec::new();
    for s in catalog.servers.values().filter(|s| {
        opts.servers
            .as_ref()
            .is_none_or(|set| set.contains(&s.server))
    }) {
        let filter = opts.filters.get(&s.server);
        for t in &s.tools {
            match filter.filter(|f| !f.permits_tool(&t.def)) {
                None => selected.push((s.server.as_str(), &t.def)),
                Some(f) => hidden.push(Excluded {
                    server: s.server.clone(),
                    tool: t.def.name.clone(),
                    reason: match f
                        .rules()
                        .denying_with(&t.def.name, Some(&t.def.annotation_map()))
                    {
                        Some(rule) => rule.source(),
                        None => format!("the config's {}", f.list_hiding(&t.def.name)),
                    },
                }),
            }
        }
    }
    let mut map = NameMap::build(
        opts.dialect,
        selected.iter().map(|(s, t)| (*s, t.name.as_str())),
        &opts.aliases,
    );
    for refused in map.with_chosen(opts.dialect, &opts.chosen_names) {
        tracing::warn!("{refused}");
    }
    let sanitize_opts = SanitizeOptions {
        strict: opts.strict,
        gemini_openapi: opts.gemini_openapi,
    };
    let mut tools = Vec::new();
    let mut names = Vec::new();
    let mut changes = Vec::new();
    let mut excluded = Vec::new();
    let mut sent = BTreeSet::new();
    for (server, tool) in &selected {
        // The map names every selected pair; a miss would be a bug in the map, reported as such.
        let Some(public) = map.public(server, &tool.name) else {
            excluded.push(Excluded {
                server: server.to_string(),
                tool: tool.name.clone(),
                reason: "no public name".into(),
            });
            continue;
        };
        // A server that lists two tools under one name: the first definition is sent (it is
        // the one `call` and argument validation find), the later one is reported, not lost.
        if !sent.insert((server.to_string(), tool.name.clone())) {
            excluded.push(Excluded {
                server: server.to_string(),
                tool: tool.name.clone(),
                reason: "duplicate name: the server lists another tool with this name; only \
                         the first definition is sent"
                    .into(),
            });
            continue;
        }
        match prepare_tool(
            opts.dialect,
            public,
            tool.description.as_deref(),
            &tool.input_schema,
            &sanitize_opts,
        ) {
            Ok(prepared) => {
                let row = |change: Change| ToolChange {
                    public: public.to_string(),
                    server: server.to_string(),
                    tool: tool.name.clone(),
                    change,
                };
                changes.extend(prepared.changes.into_iter().map(row));
                if let Some(reason) = prepared.strict_fallback {
                    changes.push(row(Change {
                        path: String::new(),
                        rule: "strict-fallback",
                        before: None,
                        after: Some(Value::String(reason)),
                    }));
                }
                names.push(NameRow {
                    server: server.to_string(),
                    tool: tool.name.clone(),
                    public: public.to_string(),
                    strict: prepared.spec.strict,
                    wrapped_root: prepared.wrapped_root,
                });
                tools.push(prepared.spec);
            }
            Err(e) => excluded.push(Excluded {
                server: server.to_string(),
                tool: tool.name.clone(),
                reason: e.to_string(),
            }),
        }
    }
    let system = system_prompt(catalog, opts);
    let violations = check_limits(opts.dialect, &tools);
    let parts = RequestParts {
        model: opts
            .model
            .clone()
            .unwrap_or_else(|| default_model(opts.dialect).to_string()),
        system: (!system.is_empty()).then(|| system.clone()),
        messages: vec![Message::user(
            opts.message.as_deref().unwrap_or(DEFAULT_MESSAGE),
        )],
        tools,
        max_tokens: opts.max_tokens,
        compatible_server: opts.compatible_server,
        temperature: opts.temperature,
        reasoning_effort: opts.reasoning_effort.clone(),
        cache_key: None,
        gemini_openapi: opts.gemini_openapi,
        stream: false,
    };
    let sent_names: BTreeSet<&str> = names.iter().map(|n| n.public.as_str()).collect();
    let mut request = render_request(opts.dialect, &parts);
    if opts.prompt_cache {
        switchboard_providers::mark_cache_breakpoints(opts.dialect, &mut request);
    }
    Translation {
        dialect: opts.dialect,
        request,
        tools: parts.tools.clone(),
        renames: map
            .renames()
            .iter()
            .filter(|r| sent_names.contains(r.public.as_str()))
            .cloned()
            .collect(),
        names,
        changes,
        excluded,
        hidden,
        violations,
        system,
    }
}

/// The user's own system prompt, each selected server's instructions under a heading with its
/// name, then the date.
fn system_prompt(catalog: &Catalog, opts: &TranslateOptions) -> String {
    let mut sections = Vec::new();
    if let Some(own) = opts
        .system
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
    {
        sections.push(own.to_string());
    }
    if opts.instructions {
        for s in catalog.servers.values() {
            if opts
                .servers
                .as_ref()
                .is_some_and(|set| !set.contains(&s.server))
            {
                continue;
            }
            let setting = opts
                .server_instructions
                .get(&s.server)
                .unwrap_or(&ServerInstructions::Server);
            if let Some(text) = setting.text(s.info.instructions.as_deref()) {
                sections.push(format!("## {}\n\n{text}", s.server));
            }
        }
    }
    if let Some(date) = &opts.date {
        sections.push(format!("Today's date is {date}."));
    }
    sections.join("\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use switchboard_core::{Entry, ServerCatalog, Tool};

    fn catalog() -> Catalog {
        let mut tickets = ServerCatalog::new("tickets");
        tickets.info.instructions = Some("Ticket ids look like T-123.".into());
        for name in ["search", "get_ticket"] {
            tickets.tools.push(Entry::new(Tool::new(
                name,
                "d",
                json!({"type": "object", "properties": {"q": {"type": "string"}}}),
            )));
        }
        // `minLength` must be a number in draft 2020-12 and no rule can guess one: Anthropic
        // and OpenAI would reject the whole request, so this tool is excluded there.
        tickets.tools.push(Entry::new(Tool::new(
            "broken",
            "d",
            json!({"type": "object", "properties": {"x": {"minLength": "three"}}}),
        )));
        let mut docs = ServerCatalog::new("docs");
        docs.info.instructions = Some("Docs server: use search before get_page.".into());
        docs.tools
            .push(Entry::new(Tool::new("search", "d", json!({}))));
        Catalog::from_servers([tickets, docs])
    }

    #[test]
    fn names_instructions_and_exclusions_are_reported() {
        let mut opts = TranslateOptions::new(Dialect::Anthropic);
        opts.date = Some("2026-11-29".into());
        let t = translate(&catalog(), &opts);
        let publics: Vec<&str> = t.names.iter().map(|n| n.public.as_str()).collect();
        assert_eq!(
            publics,
            ["docs__search", "tickets__search", "tickets__get_ticket"]
        );
        assert_eq!(t.excluded.len(), 1);
        assert_eq!(t.excluded[0].tool, "broken");
        assert!(t.excluded[0].reason.contains("anthropic-metaschema"));
        assert_eq!(
            t.system,
            "## docs\n\nDocs server: use search before get_page.\n\n## tickets\n\nTicket ids look like T-123.\n\nToday's date is 2026-11-29."
        );
        // The system prompt goes as one block carrying the prompt-cache mark.
        assert_eq!(t.request["system"][0]["text"], t.system);
        assert_eq!(
            t.request["system"][0]["cache_control"],
            json!({"type": "ephemeral"})
        );
        opts.prompt_cache = false;
        assert_eq!(translate(&catalog(), &opts).request["system"], t.system);
        assert!(
            t.changes
                .iter()
                .any(|c| c.public == "docs__search" && c.change.rule == "empty-root")
        );
    }

    #[test]
    fn filters_profiles_and_aliases_apply() {
        let mut opts = TranslateOptions::new(Dialect::OpenAiChat);
        opts.filters.insert(
            "tickets".into(),
            ToolFilter::new(&[], &["get_*".to_string()]).unwrap(),
        );
        opts.aliases.insert("tickets".into(), "t".into());
        opts.instructions = false;
        let t = translate(&catalog(), &opts);
        let publics: Vec<&str> = t.names.iter().map(|n| n.public.as_str()).collect();
        assert_eq!(publics, ["docs__search", "t__search"]);
        // What the filter kept out is named, with the list that did.
        let hidden: Vec<&str> = t.hidden.iter().map(|h| h.tool.as_str()).collect();
        assert!(!hidden.is_empty() && hidden.iter().all(|h| h.starts_with("get_")));
        assert_eq!(t.hidden[0].reason, "the config's tools.deny");
        assert_eq!(t.excluded.len(), 1);
        assert!(t.excluded[0].reason.contains("openai-metaschema"));
        assert_eq!(t.system, "");
        assert!(t.request["messages"][0]["role"] == "user");
        opts.servers = Some(BTreeSet::from(["docs".to_string()]));
        let t = translate(&catalog(), &opts);
        assert_eq!(t.names.len(), 1);
        opts.strict = true;
        let t = translate(&catalog(), &opts);
        assert!(t.names[0].strict);
        assert_eq!(t.request["messages"][0]["content"], DEFAULT_MESSAGE);
    }

    /// A server's entry leaves its instructions out or puts its own text in their place; the
    /// others keep theirs, and `[settings] instructions = false` leaves every one out.
    #[test]
    fn a_servers_entry_decides_its_instructions() {
        let mut opts = TranslateOptions::new(Dialect::Anthropic);
        opts.server_instructions
            .insert("tickets".into(), ServerInstructions::Off);
        let t = translate(&catalog(), &opts);
        assert_eq!(
            t.system,
            "## docs\n\nDocs server: use search before get_page."
        );
        opts.server_instructions.insert(
            "tickets".into(),
            ServerInstructions::Text(" Never close a ticket. ".into()),
        );
        opts.server_instructions
            .insert("docs".into(), ServerInstructions::Server);
        let t = translate(&catalog(), &opts);
        assert_eq!(
            t.system,
            "## docs\n\nDocs server: use search before get_page.\n\n## tickets\n\nNever close a ticket."
        );
        opts.instructions = false;
        assert_eq!(translate(&catalog(), &opts).system, "");
    }

    #[test]
    fn the_users_system_prompt_comes_first_and_stays_without_the_servers() {
        let mut opts = TranslateOptions::new(Dialect::Anthropic);
        opts.system = Some("  You answer in French.\n".into());
        opts.date = Some("2026-12-04".into());
        let t = translate(&catalog(), &opts);
        assert_eq!(
            t.system,
            "You answer in French.\n\n## docs\n\nDocs server: use search before get_page.\n\n## tickets\n\nTicket ids look like T-123.\n\nToday's date is 2026-12-04."
        );
        assert_eq!(t.request["system"][0]["text"], json!(t.system));
        opts.instructions = false;
        opts.date = None;
        assert_eq!(translate(&catalog(), &opts).system, "You answer in French.");
        // Blank is none.
        opts.system = Some(" \n".into());
        assert_eq!(translate(&catalog(), &opts).system, "");
    }

    #[test]
    fn a_tool_listed_twice_is_sent_once_and_reported() {
        // Regression: the second definition of a duplicated tool name vanished silently.
        let mut dup = ServerCatalog::new("dup");
        for schema in [
            json!({}),
            json!({"type": "object", "properties": {"z": {}}}),
        ] {
            dup.tools
                .push(Entry::new(Tool::new("get_item", "d", schema)));
        }
        let t = translate(
            &Catalog::from_servers([dup]),
            &TranslateOptions::new(Dialect::Anthropic),
        );
        assert_eq!(t.names.len(), 1);
        assert_eq!(t.excluded.len(), 1, "{:?}", t.excluded);
        assert_eq!(t.excluded[0].tool, "get_item");
        assert!(t.excluded[0].reason.contains("duplicate name"));
    }

    #[test]
    fn too_many_tools_for_openai_is_a_violation() {
        let mut big = ServerCatalog::new("big");
        for i in 0..130 {
            big.tools
                .push(Entry::new(Tool::new(format!("t{i}"), "d", json!({}))));
        }
        let t = translate(
            &Catalog::from_servers([big]),
            &TranslateOptions::new(Dialect::OpenAiResponses),
        );
        assert_eq!(t.violations.len(), 1);
        assert_eq!(t.violations[0].count, 130);
        let t = translate(
            &Catalog::from_servers([ServerCatalog::new("none")]),
            &TranslateOptions::new(Dialect::OpenAiResponses),
        );
        assert!(t.violations.is_empty());
    }
}
