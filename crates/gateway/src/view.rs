//! The view: what the gateway shows its clients for one catalog generation and one state of the
//! pin store. Built whenever either changes, then shared read-only by every request, so a call
//! costs one hash-map lookup and never touches the pin store or the catalog lock.
//!
//! Names: tools and prompts get the host's public names (`core::names`, Anthropic's rule
//! `[A-Za-z0-9_-]{1,64}`, a subset of MCP's `[A-Za-z0-9_.-]{1,128}`, so the names also survive a
//! client that hands them on to a model). `server__tool` by default, the alias instead of the
//! server when one is configured, the bare tool name under `alias = ""`.
//!
//! Resource URIs: a server with `alias = ""` keeps its URIs unchanged; every other server's URIs
//! and URI templates are shown as `switchboard://PREFIX/ORIGINAL` (PREFIX is the alias or the
//! server name, percent-encoded), so two servers offering the same URI stay apart and a read is
//! routed by the prefix. MCP Apps UI resources (`ui://REST`) become `ui://PREFIX/REST`, and
//! the tools' `_meta` links to them follow.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Mutex;

use serde_json::Value;
use switchboard_core::names::NameMap;
use switchboard_core::{Catalog, Dialect, Tool};
use switchboard_host::ServerConfig;
use switchboard_host::config::PinMode;
use switchboard_host::pins::{
    PinCheck, PinStore, changed_fields, definition_hash, pinned_definition,
};

/// The scheme of rewritten resource URIs.
pub const URI_SCHEME: &str = "switchboard://";

/// Where a public tool name leads.
#[derive(Clone, Debug)]
pub enum Route {
    /// A tool clients may call.
    Open {
        /// Configured server name.
        server: String,
        /// The definition as the server sent it (name is the server's).
        def: Box<Tool>,
    },
    /// A tool the config hides (`tools.allow` / `tools.deny`): not listed, refused on call.
    Hidden {
        /// Why, for the caller.
        reason: String,
    },
    /// A tool whose definition changed since it was pinned, under `pin = "enforce"`.
    Withheld {
        /// The explanation for the caller.
        reason: String,
    },
}

/// One listed tool: its public name and its definition as clients see it.
#[derive(Clone, Debug)]
pub struct Listed {
    /// Public name.
    pub public: String,
    /// Configured server.
    pub server: String,
    /// Definition with the public name.
    pub def: Tool,
}

/// Everything clients see for one catalog generation and pin-store version.
#[derive(Debug, Default)]
pub struct View {
    /// The catalog generation it was built from.
    pub generation: u64,
    /// Listed tools, servers in name order, tools in server order.
    pub tools: Vec<Listed>,
    /// Every tool the gateway knows, listed or not, by public name (foldhash: one lookup per
    /// call, and SipHash was a visible share of a call passing through).
    pub routes: HashMap<String, Route, foldhash::fast::RandomState>,
    /// Listed prompts (definitions with public names, as JSON) and where they lead.
    pub prompts: Vec<Value>,
    /// Public prompt name -> (server, prompt name).
    pub prompt_routes: HashMap<String, (String, String)>,
    /// Listed resources (rewritten URIs, as JSON).
    pub resources: Vec<Value>,
    /// Listed resource templates (rewritten templates, as JSON).
    pub templates: Vec<Value>,
    /// Public URI template -> (server, original template), for listed templates.
    pub template_routes: HashMap<String, (String, String)>,
    /// Public URI -> (server, original URI), for listed resources.
    pub resource_routes: HashMap<String, (String, String)>,
    /// URI prefix (`switchboard://PREFIX/`) -> server, for servers with rewritten URIs.
    pub uri_prefixes: HashMap<String, String>,
    /// Servers whose URIs pass through unchanged (`alias = ""`), in config order.
    pub passthrough: Vec<String>,
    /// URI scheme (`docs`, `file`) -> the servers whose resources or templates use it, in
    /// catalog order: where a URI in a server's own terms (a tool result's `resource_link`)
    /// is tried when no public URI matches.
    pub by_scheme: HashMap<String, Vec<String>>,
    /// The gateway's combined `instructions`.
    pub instructions: String,
}

/// Pin changes already reported under `pin = "warn"`, and names a server lists twice, so each
/// is logged once.
#[derive(Default)]
pub struct Warned(Mutex<HashSet<(String, String, String)>>);

impl Warned {
    /// True the first time it is asked about this (server, name, what).
    pub(crate) fn first(&self, server: &str, name: &str, what: &str) -> bool {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).insert((
            server.to_string(),
            name.to_string(),
            what.to_string(),
        ))
    }
}

/// The tool-name prefix of a server: its alias if it has one (possibly empty), else its name.
pub fn prefix(server: &ServerConfig) -> &str {
    server.alias.as_deref().unwrap_or(server.name())
}

/// Percent-encode everything but unreserved characters (RFC 3986), for a URI authority.
fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The scheme of a URI (`docs` of `docs://pages/a`), if it has one.
fn scheme(uri: &str) -> Option<&str> {
    let (scheme, _) = uri.split_once("://")?;
    let valid = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    valid.then_some(scheme)
}

/// The scheme of MCP Apps UI resources. Hosts render a tool's UI only from a `ui://` URI, so
/// these keep their scheme: `ui://PREFIX/REST` for the server's `ui://REST`.
pub const UI_SCHEME: &str = "ui://";

/// The public form of a server's URI (or URI template).
pub fn public_uri(server: &ServerConfig, uri: &str) -> String {
    match (server.alias.as_deref(), uri.strip_prefix(UI_SCHEME)) {
        (Some(""), _) => uri.to_string(),
        (_, Some(rest)) => format!("{UI_SCHEME}{}/{rest}", encode(prefix(server))),
        (_, None) => format!("{URI_SCHEME}{}/{uri}", encode(prefix(server))),
    }
}

/// MCP Apps: a tool's `_meta` names the resource a host renders as the tool's UI
/// (`ui.resourceUri`, the earlier flat `ui/resourceUri`, the OpenAI Apps SDK's
/// `openai/outputTemplate`). Those are the server's own URIs; clients read resources by their
/// public URIs, so the listed definition carries those instead (still `ui://`, see
/// [`public_uri`]).
fn ui_uris_public(def: &mut Tool, server: &ServerConfig) {
    let Some(Value::Object(meta)) = def.extra.get_mut("_meta") else {
        return;
    };
    let mut uris: Vec<&mut Value> = Vec::new();
    for (key, value) in meta.iter_mut() {
        match (key.as_str(), value) {
            ("ui/resourceUri" | "openai/outputTemplate", v) => uris.push(v),
            ("ui", Value::Object(ui)) => uris.extend(ui.get_mut("resourceUri")),
            _ => {}
        }
    }
    for v in uris {
        if let Value::String(uri) = v {
            *uri = public_uri(server, uri);
        }
    }
}

/// Change `field` of a JSON object (a definition) to `value`.
fn with_field(def: &impl serde::Serialize, field: &str, value: &str) -> Option<Value> {
    let mut v = serde_json::to_value(def).ok()?;
    v.as_object_mut()?
        .insert(field.to_string(), Value::String(value.to_string()));
    Some(v)
}

impl View {
    /// Build the view. `pins` is `None` when no server pins (every server has `pin = "off"`).
    pub fn build(
        catalog: &Catalog,
        servers: &[ServerConfig],
        pins: Option<&PinStore>,
        warned: &Warned,
        with_instructions: bool,
    ) -> View {
        let configs: BTreeMap<&str, &ServerConfig> =
            servers.iter().map(|s| (s.name(), s)).collect();
        let aliases: BTreeMap<String, String> = servers
            .iter()
            .filter_map(|s| s.alias.clone().map(|a| (s.name().to_string(), a)))
            .collect();
        let mut view = View {
            generation: catalog.generation,
            ..View::default()
        };

        // Tools.
        let pairs: Vec<(&str, &str)> = catalog
            .tools()
            .filter(|(s, _)| configs.contains_key(s))
            .map(|(s, t)| (s, t.def.name.as_str()))
            .collect();
        let mut names = NameMap::build(Dialect::Anthropic, pairs.iter().copied(), &aliases);
        let chosen = switchboard_host::config::chosen_names(servers);
        for refused in names.with_chosen(Dialect::Anthropic, &chosen) {
            if warned.first("", &refused, "chosen name") {
                tracing::warn!("{refused}");
            }
        }
        let mut seen = HashSet::new();
        for (server, entry) in catalog.tools() {
            let Some(config) = configs.get(server) else {
                continue;
            };
            let tool = &entry.def;
            // A server that lists two tools under one name: the first definition is offered
            // (calls name the tool, so the server decides which runs), the later one is reported.
            if !seen.insert((server, tool.name.as_str())) {
                if warned.first(server, &tool.name, "duplicate tool") {
                    tracing::warn!(%server, tool = %tool.name, "the server lists more than one tool named {:?}; the gateway offers only the first definition", tool.name);
                }
                continue;
            }
            let Some(public) = names.public(server, &tool.name) else {
                continue;
            };
            let route = if !switchboard_host::policy::listed_tool(config, tool) {
                let why = match config
                    .filter
                    .rules()
                    .denying_with(&tool.name, Some(&tool.annotation_map()))
                {
                    Some(rule) => rule.rule.clone(),
                    None => format!(
                        "{} of server {server:?}",
                        config.filter.list_hiding(&tool.name)
                    ),
                };
                Route::Hidden {
                    reason: format!(
                        "tool {public:?} is not available: the gateway's configuration hides it ({why})"
                    ),
                }
            } else {
                match pin_state(pins, config, tool, public, warned) {
                    Some(reason) => Route::Withheld { reason },
                    None => Route::Open {
                        server: server.to_string(),
                        def: Box::new(tool.clone()),
                    },
                }
            };
            if let Route::Open { .. } = route {
                // The config's own description, title and parameter descriptions replace the
                // server's for clients (pins above watch the server's).
                let mut def = config.presented(tool).unwrap_or_else(|| tool.clone());
                def.name = public.to_string();
                ui_uris_public(&mut def, config);
                // The gateway runs a task-only tool's task itself and answers its clients with
                // the result: to them it is a plain tool (the gateway declares no tasks).
                def.extra.remove("execution");
                view.tools.push(Listed {
                    public: public.to_string(),
                    server: server.to_string(),
                    def,
                });
            }
            view.routes.insert(public.to_string(), route);
        }

        // Prompts.
        let prompt_pairs: Vec<(&str, &str)> = catalog
            .servers
            .values()
            .filter(|s| configs.contains_key(s.server.as_str()))
            .flat_map(|s| {
                s.prompts
                    .iter()
                    .map(move |p| (s.server.as_str(), p.def.name.as_str()))
            })
            .collect();
        let prompt_names =
            NameMap::build(Dialect::Anthropic, prompt_pairs.iter().copied(), &aliases);
        for (server, name) in prompt_pairs {
            let (Some(public), Some(entry)) = (
                prompt_names.public(server, name),
                catalog
                    .servers
                    .get(server)
                    .and_then(|s| s.prompts.iter().find(|p| p.def.name == name)),
            ) else {
                continue;
            };
            if view.prompt_routes.contains_key(public) {
                if warned.first(server, name, "duplicate prompt") {
                    tracing::warn!(%server, prompt = %name, "the server lists more than one prompt named {name:?}; the gateway offers only the first");
                }
                continue;
            }
            if let Some(v) = with_field(&entry.def, "name", public) {
                view.prompts.push(v);
                view.prompt_routes
                    .insert(public.to_string(), (server.to_string(), name.to_string()));
            }
        }

        // Resources and templates.
        for config in servers {
            match config.alias.as_deref() {
                Some("") => view.passthrough.push(config.name().to_string()),
                _ => {
                    view.uri_prefixes.insert(
                        format!("{URI_SCHEME}{}/", encode(prefix(config))),
                        config.name().to_string(),
                    );
                }
            }
        }
        for s in catalog.servers.values() {
            let Some(config) = configs.get(s.server.as_str()) else {
                continue;
            };
            let own = s.resources.iter().map(|r| r.def.uri.as_str());
            let templates = s
                .resource_templates
                .iter()
                .map(|t| t.def.uri_template.as_str());
            for scheme in own.chain(templates).filter_map(scheme) {
                let servers = view.by_scheme.entry(scheme.to_string()).or_default();
                if !servers.contains(&s.server) {
                    servers.push(s.server.clone());
                }
            }
            for r in &s.resources {
                let public = public_uri(config, &r.def.uri);
                // Two servers that both pass a URI through, or one that lists it twice: the
                // first keeps it.
                if let Some((owner, _)) = view.resource_routes.get(&public) {
                    if !warned.first(&s.server, &public, "duplicate resource") {
                        continue;
                    }
                    if *owner == s.server {
                        tracing::warn!(server = %s.server, uri = %r.def.uri, "the server lists a resource URI twice; the gateway offers only the first");
                    } else {
                        tracing::warn!(server = %s.server, uri = %r.def.uri, first = %owner, "resource URI offered by two servers; the first one keeps it");
                    }
                    continue;
                }
                if let Some(v) = with_field(&r.def, "uri", &public) {
                    view.resources.push(v);
                    view.resource_routes
                        .insert(public, (s.server.clone(), r.def.uri.clone()));
                }
            }
            for t in &s.resource_templates {
                let public = public_uri(config, &t.def.uri_template);
                if view.template_routes.contains_key(&public) {
                    if warned.first(&s.server, &public, "duplicate template") {
                        tracing::warn!(server = %s.server, template = %t.def.uri_template, "resource template offered twice; the first one keeps it");
                    }
                    continue;
                }
                if let Some(v) = with_field(&t.def, "uriTemplate", &public) {
                    view.templates.push(v);
                    view.template_routes
                        .insert(public, (s.server.clone(), t.def.uri_template.clone()));
                }
            }
        }

        view.instructions = instructions(catalog, servers, with_instructions);
        view
    }

    /// Where a public resource URI leads: a listed URI, a URI under a server's prefix (from a
    /// template), or, failing both, candidates among the pass-through servers.
    pub fn resolve_uri(&self, uri: &str) -> Vec<(String, String)> {
        if let Some((s, u)) = self.resource_routes.get(uri) {
            return vec![(s.clone(), u.clone())];
        }
        if let Some(rest) = uri.strip_prefix(URI_SCHEME)
            && let Some((p, original)) = rest.split_once('/')
            && let Some(server) = self.uri_prefixes.get(&format!("{URI_SCHEME}{p}/"))
        {
            return vec![(server.clone(), original.to_string())];
        }
        if let Some(rest) = uri.strip_prefix(UI_SCHEME)
            && let Some((p, original)) = rest.split_once('/')
            && let Some(server) = self.uri_prefixes.get(&format!("{URI_SCHEME}{p}/"))
        {
            return vec![(server.clone(), format!("{UI_SCHEME}{original}"))];
        }
        // A URI in a server's own terms (a `resource_link` in a tool result passes through
        // unrewritten): the servers that pass URIs through, then those using its scheme.
        let mut candidates: Vec<(String, String)> = self
            .passthrough
            .iter()
            .map(|s| (s.clone(), uri.to_string()))
            .collect();
        for server in scheme(uri)
            .and_then(|s| self.by_scheme.get(s))
            .into_iter()
            .flatten()
        {
            if !candidates.iter().any(|(c, _)| c == server) {
                candidates.push((server.clone(), uri.to_string()));
            }
        }
        candidates
    }

    /// Where a public resource template (as a completion reference names it) leads: a listed
    /// template, or a template under a server's prefix.
    pub fn resolve_template(&self, template: &str) -> Option<(String, String)> {
        if let Some(route) = self.template_routes.get(template) {
            return Some(route.clone());
        }
        let rest = template.strip_prefix(URI_SCHEME)?;
        let (p, original) = rest.split_once('/')?;
        let server = self.uri_prefixes.get(&format!("{URI_SCHEME}{p}/"))?;
        Some((server.clone(), original.to_string()))
    }

    /// Total number of listed tools.
    pub fn tool_count(&self) -> usize {
        self.tools.len()
    }
}

/// Check a tool against the pin store. `Some(reason)` withholds it.
fn pin_state(
    pins: Option<&PinStore>,
    config: &ServerConfig,
    tool: &Tool,
    public: &str,
    warned: &Warned,
) -> Option<String> {
    if config.pin == PinMode::Off {
        return None;
    }
    let store = pins?;
    let server = config.name();
    let check = match store.check(server, tool) {
        Ok(c) => c,
        Err(e) => {
            // Fail closed under enforce: a tool we cannot check is not shown.
            tracing::error!(%server, tool = %tool.name, error = %e, "pin check failed");
            return (config.pin == PinMode::Enforce).then(|| {
                format!("tool {public:?} is withheld: its pin could not be checked ({e})")
            });
        }
    };
    let PinCheck::Changed { pinned } = check else {
        return None;
    };
    let now = pinned_definition(tool);
    let what = changed_fields(&pinned.definition, &now);
    let hint = format!(
        "`switchboard pins diff {server}/{name}` shows the change; `switchboard pins approve {server}/{name}` accepts it",
        name = tool.name
    );
    match config.pin {
        PinMode::Enforce => Some(format!(
            "tool {public:?} is withheld: server {server:?} changed its definition ({what}) since it was pinned, and the gateway does not pass on a changed tool until it is approved. {hint}."
        )),
        PinMode::Warn => {
            if warned.first(server, &tool.name, &definition_hash(&now)) {
                tracing::warn!(%server, tool = %tool.name, changed = %what, "pinned tool definition changed (pin = \"warn\": kept); {hint}");
            }
            None
        }
        PinMode::Off => None,
    }
}

/// The gateway's own instructions followed by each server's, under its name.
fn instructions(catalog: &Catalog, servers: &[ServerConfig], with_servers: bool) -> String {
    let mut out = String::from(
        "switchboard gateway: the tools, resources and prompts of several MCP servers behind one connection. Tool and prompt names are `server__name` (or the server's configured alias); resource URIs of prefixed servers are `switchboard://server/ORIGINAL-URI` (`ui://server/REST` for a UI resource `ui://REST`).",
    );
    if !with_servers {
        return out;
    }
    for config in servers {
        let Some(text) = catalog
            .servers
            .get(config.name())
            .and_then(|s| config.instructions.text(s.info.instructions.as_deref()))
        else {
            continue;
        };
        let p = prefix(config);
        let label = if p.is_empty() { config.name() } else { p };
        out.push_str(&format!("\n\n## Server {label}\n{text}"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use switchboard_core::{
        Entry, Resource, ResourceTemplate, ServerCatalog, ServerSpec, ToolFilter,
    };
    use switchboard_host::config::Approve;

    fn config(name: &str, alias: Option<&str>, deny: &[&str]) -> ServerConfig {
        let deny: Vec<String> = deny.iter().map(|s| s.to_string()).collect();
        ServerConfig {
            spec: ServerSpec::stdio(name, "x", vec![]),
            alias: alias.map(str::to_string),
            allow: vec![],
            filter: ToolFilter::new(&[], &deny).unwrap(),
            deny,
            approve: Approve::default(),
            pin: PinMode::Off,
            tool_overrides: BTreeMap::new(),
            max_result_tokens: None,
            oauth: None,
            legacy_sse: false,
            origin: None,
            written_command: None,
            startup_timeout_written: false,
            call_timeout_written: false,
            manifest_tools: None,
            asks_refused: None,
            approve_written: None,
            approve_unset: false,
            instructions: Default::default(),
            sampling: Default::default(),
        }
    }

    fn catalog() -> Catalog {
        let mut a = ServerCatalog::new("tickets");
        a.tools.push(Entry::new(Tool::new(
            "search",
            "Find tickets",
            json!({"type": "object"}),
        )));
        a.tools.push(Entry::new(Tool::new(
            "delete",
            "Delete",
            json!({"type": "object"}),
        )));
        let mut b = ServerCatalog::new("docs");
        b.tools.push(Entry::new(Tool::new(
            "search",
            "Find pages",
            json!({"type": "object"}),
        )));
        b.resources.push(Entry::new(Resource {
            uri: "docs://pages/a".into(),
            name: "a".into(),
            title: None,
            description: None,
            mime_type: None,
            extra: Default::default(),
        }));
        b.info.instructions = Some("Use search.".into());
        Catalog::from_servers([a, b])
    }

    #[test]
    fn what_a_server_lists_twice_is_offered_once_as_first_listed() {
        let mut c = catalog();
        let docs = c.servers.get_mut("docs").unwrap();
        let twice = |v: serde_json::Value| [v.clone(), v];
        for (i, p) in twice(json!({"name": "summarize"})).into_iter().enumerate() {
            let mut p: switchboard_core::Prompt = serde_json::from_value(p).unwrap();
            p.description = Some(format!("definition {i}"));
            docs.prompts.push(Entry::new(p));
        }
        for t in twice(json!({"uriTemplate": "docs://pages/{slug}", "name": "page"})) {
            docs.resource_templates
                .push(Entry::new(serde_json::from_value(t).unwrap()));
        }
        let again = docs.resources[0].clone();
        docs.resources.push(again);
        let again = docs.tools[0].clone();
        docs.tools.push(again);
        let servers = [config("tickets", None, &[]), config("docs", None, &[])];
        let v = View::build(&c, &servers, None, &Warned::default(), true);
        let names: Vec<&str> = v.tools.iter().map(|t| t.public.as_str()).collect();
        assert_eq!(
            names,
            ["docs__search", "tickets__search", "tickets__delete"]
        );
        assert_eq!(v.prompts.len(), 1, "{:?}", v.prompts);
        assert_eq!(v.prompts[0]["description"], json!("definition 0"));
        assert_eq!(v.templates.len(), 1, "{:?}", v.templates);
        assert_eq!(v.resources.len(), 1, "{:?}", v.resources);
    }

    #[test]
    fn same_tool_names_get_distinct_public_names_and_hidden_tools_are_routed_but_unlisted() {
        let servers = [
            config("tickets", None, &["delete"]),
            config("docs", None, &[]),
        ];
        let v = View::build(&catalog(), &servers, None, &Warned::default(), true);
        let names: Vec<&str> = v.tools.iter().map(|t| t.public.as_str()).collect();
        assert_eq!(names, ["docs__search", "tickets__search"]);
        assert!(matches!(v.routes["tickets__delete"], Route::Hidden { .. }));
        assert!(
            matches!(&v.routes["docs__search"], Route::Open { server, def } if server == "docs" && def.name == "search")
        );
        assert!(v.instructions.contains("## Server docs\nUse search."));
    }

    #[test]
    fn a_servers_entry_decides_its_part_of_the_instructions() {
        use switchboard_host::config::ServerInstructions;
        let mut docs = config("docs", None, &[]);
        docs.instructions = ServerInstructions::Off;
        let mut tickets = config("tickets", None, &[]);
        tickets.instructions = ServerInstructions::Text("Ask before closing.".into());
        let v = View::build(&catalog(), &[tickets, docs], None, &Warned::default(), true);
        assert!(
            !v.instructions.contains("Use search."),
            "{}",
            v.instructions
        );
        assert!(
            v.instructions
                .contains("## Server tickets\nAsk before closing."),
            "{}",
            v.instructions
        );
    }

    #[test]
    fn uris_are_prefixed_unless_the_alias_is_empty() {
        let servers = [config("tickets", None, &[]), config("docs", None, &[])];
        let v = View::build(&catalog(), &servers, None, &Warned::default(), true);
        assert_eq!(v.resources[0]["uri"], "switchboard://docs/docs://pages/a");
        assert_eq!(
            v.resolve_uri("switchboard://docs/docs://pages/a"),
            vec![("docs".to_string(), "docs://pages/a".to_string())]
        );
        assert_eq!(
            v.resolve_uri("switchboard://docs/docs://pages/other"),
            vec![("docs".to_string(), "docs://pages/other".to_string())]
        );
        let servers = [config("tickets", None, &[]), config("docs", Some(""), &[])];
        let v = View::build(&catalog(), &servers, None, &Warned::default(), true);
        assert_eq!(v.resources[0]["uri"], "docs://pages/a");
        assert!(v.tools.iter().any(|t| t.public == "search"));
    }

    #[test]
    fn mcp_apps_ui_uris_in_tool_meta_are_public_and_readable() {
        // desktop-commander's read_file: its UI is a resource of the same server.
        let mut c = catalog();
        let mut t = Tool::new("read_file", "Read a file", json!({"type": "object"}));
        let ui = "ui://docs/preview";
        t.extra.insert(
            "_meta".into(),
            json!({"ui": {"resourceUri": ui}, "ui/resourceUri": ui,
                   "openai/outputTemplate": ui, "openai/widgetAccessible": true}),
        );
        let docs = c.servers.get_mut("docs").unwrap();
        docs.tools.push(Entry::new(t));
        docs.resources.push(Entry::new(
            serde_json::from_value(json!({"uri": ui, "name": "preview"})).unwrap(),
        ));
        let servers = [config("tickets", None, &[]), config("docs", None, &[])];
        let v = View::build(&c, &servers, None, &Warned::default(), true);
        // The UI resource keeps the scheme MCP Apps hosts require, under the server's prefix.
        assert_eq!(v.resources[1]["uri"], "ui://docs/docs/preview");
        let listed = v
            .tools
            .iter()
            .find(|t| t.public == "docs__read_file")
            .unwrap();
        let public = "ui://docs/docs/preview";
        assert_eq!(
            listed.def.extra["_meta"],
            json!({"ui": {"resourceUri": public}, "ui/resourceUri": public,
                   "openai/outputTemplate": public, "openai/widgetAccessible": true})
        );
        assert_eq!(
            v.resolve_uri(public),
            vec![("docs".to_string(), ui.to_string())]
        );
        // Also when the server does not list it (the tool's link is enough).
        assert_eq!(
            v.resolve_uri("ui://docs/docs/other"),
            vec![("docs".to_string(), "ui://docs/other".to_string())]
        );
        // Not under a known prefix: tried, in its own terms, on the server that uses ui://.
        assert_eq!(
            v.resolve_uri("ui://nobody/x"),
            vec![("docs".to_string(), "ui://nobody/x".to_string())]
        );
        // What is routed and pinned stays the server's own definition.
        let Route::Open { def, .. } = &v.routes["docs__read_file"] else {
            panic!("not open");
        };
        assert_eq!(def.extra["_meta"]["ui"]["resourceUri"], ui);
        // Under `alias = ""` URIs pass through unchanged.
        let servers = [config("tickets", None, &[]), config("docs", Some(""), &[])];
        let v = View::build(&c, &servers, None, &Warned::default(), true);
        let listed = v.tools.iter().find(|t| t.public == "read_file").unwrap();
        assert_eq!(listed.def.extra["_meta"]["ui"]["resourceUri"], ui);
    }

    #[test]
    fn a_uri_in_a_servers_own_terms_is_tried_on_the_servers_using_its_scheme() {
        // A tool result's resource_link names the server's own URI, which the gateway lists
        // under its prefix; a client that reads the link must still reach the server.
        let mut c = catalog();
        let docs = c.servers.get_mut("docs").unwrap();
        docs.resource_templates.push(Entry::new(
            serde_json::from_value(json!({"uriTemplate": "docs://notes/{id}", "name": "note"}))
                .unwrap(),
        ));
        let servers = [config("tickets", None, &[]), config("docs", None, &[])];
        let v = View::build(&c, &servers, None, &Warned::default(), true);
        assert_eq!(
            v.resolve_uri("docs://notes/7"),
            vec![("docs".to_string(), "docs://notes/7".to_string())]
        );
        // No server uses the scheme, and a URI without one: nothing to try.
        assert_eq!(v.resolve_uri("mail://inbox/1"), vec![]);
        assert_eq!(v.resolve_uri("just-a-name"), vec![]);
        // Pass-through servers are tried first, then the scheme's users, each once.
        let servers = [config("tickets", Some(""), &[]), config("docs", None, &[])];
        let v = View::build(&c, &servers, None, &Warned::default(), true);
        assert_eq!(
            v.resolve_uri("docs://notes/7"),
            vec![
                ("tickets".to_string(), "docs://notes/7".to_string()),
                ("docs".to_string(), "docs://notes/7".to_string()),
            ]
        );
    }

    #[test]
    fn completion_templates_resolve_to_their_owner_in_its_own_terms() {
        let mut c = catalog();
        if let Some(docs) = c.servers.get_mut("docs") {
            docs.resource_templates.push(Entry::new(ResourceTemplate {
                uri_template: "docs://pages/{id}".into(),
                name: "page".into(),
                title: None,
                description: None,
                mime_type: None,
                extra: Default::default(),
            }));
        }
        let servers = [config("tickets", None, &[]), config("docs", None, &[])];
        let v = View::build(&c, &servers, None, &Warned::default(), true);
        assert_eq!(
            v.templates[0]["uriTemplate"],
            "switchboard://docs/docs://pages/{id}"
        );
        let route = Some(("docs".to_string(), "docs://pages/{id}".to_string()));
        assert_eq!(
            v.resolve_template("switchboard://docs/docs://pages/{id}"),
            route
        );
        assert_eq!(
            v.resolve_template("switchboard://docs/docs://other/{x}"),
            Some(("docs".to_string(), "docs://other/{x}".to_string()))
        );
        assert_eq!(v.resolve_template("docs://pages/{id}"), None);
    }

    #[test]
    fn changed_fields_names_what_changed() {
        let a = json!({"name": "x", "description": "a", "inputSchema": {}});
        let b = json!({"name": "x", "description": "b", "inputSchema": {}});
        assert_eq!(changed_fields(&a, &b), "description changed");
    }
}
