//! Amp's permissions, read with its `settings.json` servers: `amp.mcpPermissions` (which
//! servers may run: rules `{"matches": {"command" | "url": PATTERN}, "action": "allow" |
//! "reject"}`, the first that matches a server deciding, none meaning allowed),
//! `amp.tools.disable` (tools kept from the model) and `amp.permissions` (rules over tool names,
//! `mcp__SERVER__TOOL` for an MCP tool: `allow`, `reject`, `ask`, or `delegate` to a program,
//! which switchboard does not run, so such calls ask). A rule's `matches` holds it to calls whose
//! arguments match, decided at each call as Amp does: each named argument must match its
//! condition, a text pattern only a text, a list any of its entries, `true` / `3` / `null` only
//! that value, an object the argument's own fields (or, by number, its items); a key with dots
//! (`"options.force"`) reaches into the argument. A `reject` rule's `message` is what the model
//! reads when it refuses a call.
//!
//! A pattern is a glob (`*` any characters) over the whole text, or a regular expression between
//! slashes (`/^npx /`), found anywhere in it; a list matches when any of its patterns does. A
//! server's command is matched as its program and arguments joined by spaces, as written.
//!
//! The user's file and the project's are each one list of rules: a server or tool one of them
//! rejects is rejected, whatever the other allows, so a cloned project cannot loosen the user's
//! rules (nor the user's a project's).

use std::path::{Path, PathBuf};

use serde_json::Value;
use switchboard_core::{Condition, HostRule, HostRules, TransportSpec, Verdict};

use super::entry::Context;
use super::{DisabledServer, ServerConfig};

/// Apply the permissions of Amp's user file and project file (whichever exist; only the file
/// read when it is neither) to the servers read from them, when the file read is one of Amp's:
/// it keeps its settings under `amp.` keys, or it is where Amp keeps its settings.
pub fn apply(
    ctx: &Context<'_>,
    root: &Value,
    servers: &mut Vec<ServerConfig>,
    disabled: &mut Vec<DisabledServer>,
    warnings: &mut Vec<String>,
) {
    let layers = super::layers::files_of(ctx, "Amp");
    let amp_keys = root
        .as_object()
        .is_some_and(|o| o.keys().any(|k| k.starts_with("amp.")));
    if layers.is_none() && !amp_keys {
        return;
    }
    let files: Vec<(PathBuf, Value)> = match layers {
        Some((user, project)) => [Some(user), project]
            .into_iter()
            .flatten()
            .filter_map(|path| {
                if super::layers::same_file(&path, ctx.path) {
                    return Some((path, root.clone()));
                }
                if !path.is_file() {
                    return None;
                }
                match super::claude_settings::read_json(&path) {
                    Ok(v) => Some((path, v)),
                    Err(e) => {
                        warnings.push(format!(
                            "{}: Amp's permissions not read: {e}",
                            path.display()
                        ));
                        None
                    }
                }
            })
            .collect(),
        None => vec![(ctx.path.to_path_buf(), root.clone())],
    };
    let lists: Vec<ServerList> = files
        .iter()
        .map(|(path, value)| server_list(path, value, warnings))
        .collect();
    let mut kept = Vec::with_capacity(servers.len());
    for server in servers.drain(..) {
        let subject = Subject::of(&server);
        match lists.iter().find_map(|l| l.rejects(&subject)) {
            Some(source) => disabled.push(DisabledServer {
                name: server.name().to_string(),
                reason: format!("rejected by Amp's {source}"),
                origin: server.origin.clone(),
            }),
            None => kept.push(server),
        }
    }
    *servers = kept;
    let tool_lists: Vec<Vec<ToolRule>> = files
        .iter()
        .map(|(path, value)| tool_rules(path, value, warnings))
        .collect();
    if tool_lists.iter().all(Vec::is_empty) {
        return;
    }
    for server in servers.iter_mut() {
        let mut rules = server.filter.rules().clone();
        if rules.is_empty() {
            rules = HostRules::new(server.name());
        }
        for list in &tool_lists {
            rules.next_list();
            for rule in list {
                match HostRule::new(
                    &rule.tool,
                    rule.verdict,
                    rule.rule.clone(),
                    rule.file.clone(),
                ) {
                    Ok(mut host) => {
                        host.condition = rule.condition.clone();
                        host.message = rule.message.clone();
                        rules.add(host);
                    }
                    Err(e) => {
                        warnings.push(format!("{}: {}: not applied: {e}", rule.file, rule.rule));
                    }
                }
            }
        }
        server.filter = std::mem::take(&mut server.filter).with_rules(rules);
    }
}

/// What `amp.mcpPermissions` matches a server by.
struct Subject {
    command: Option<String>,
    url: Option<String>,
}

impl Subject {
    fn of(server: &ServerConfig) -> Self {
        match &server.spec.transport {
            TransportSpec::Stdio { command, args, .. } => {
                let program = server.written_command.as_deref().unwrap_or(command);
                let joined = std::iter::once(program)
                    .chain(args.iter().map(String::as_str))
                    .collect::<Vec<_>>()
                    .join(" ");
                Subject {
                    command: Some(joined),
                    url: None,
                }
            }
            TransportSpec::Http { url, .. } => Subject {
                command: None,
                url: Some(url.clone()),
            },
        }
    }
}

/// One file's `amp.mcpPermissions`.
struct ServerList {
    rules: Vec<ServerRule>,
}

struct ServerRule {
    command: Option<Vec<Pattern>>,
    url: Option<Vec<Pattern>>,
    reject: bool,
    source: String,
}

impl ServerList {
    /// Where the rule that rejects the server was written, when the first rule that matches it
    /// rejects it.
    fn rejects(&self, subject: &Subject) -> Option<&str> {
        let holds = |patterns: &Option<Vec<Pattern>>, text: &Option<String>| match patterns {
            None => true,
            Some(list) => text
                .as_deref()
                .is_some_and(|t| list.iter().any(|p| p.is_match(t))),
        };
        self.rules
            .iter()
            .find(|r| holds(&r.command, &subject.command) && holds(&r.url, &subject.url))
            .filter(|r| r.reject)
            .map(|r| r.source.as_str())
    }
}

fn server_list(path: &Path, root: &Value, warnings: &mut Vec<String>) -> ServerList {
    let mut rules = Vec::new();
    let Some(list) = root.get("amp.mcpPermissions") else {
        return ServerList { rules };
    };
    let Some(list) = list.as_array() else {
        warnings.push(format!(
            "{}: amp.mcpPermissions is not a list of rules; not applied",
            path.display()
        ));
        return ServerList { rules };
    };
    for (i, rule) in list.iter().enumerate() {
        let source = format!("amp.mcpPermissions[{i}] in {}", path.display());
        let mut skip = |why: String| warnings.push(format!("{source}: not applied: {why}"));
        let reject = match rule.get("action").and_then(Value::as_str) {
            Some("reject") => true,
            Some("allow") => false,
            other => {
                skip(format!(
                    "its action is {}, not \"allow\" or \"reject\"",
                    other.map_or("missing".into(), |a| format!("{a:?}"))
                ));
                continue;
            }
        };
        let matches = rule.get("matches").and_then(Value::as_object);
        let read = |key: &str| -> Result<Option<Vec<Pattern>>, String> {
            matches
                .and_then(|m| m.get(key))
                .map(|v| patterns(v).map_err(|e| format!("matches.{key}: {e}")))
                .transpose()
        };
        let (command, url) = match (read("command"), read("url")) {
            (Ok(c), Ok(u)) => (c, u),
            (Err(e), _) | (_, Err(e)) => {
                skip(e);
                continue;
            }
        };
        if let Some(other) = matches.and_then(|m| m.keys().find(|k| *k != "command" && *k != "url"))
        {
            skip(format!(
                "it matches on {other:?}; Amp's server rules match \"command\" or \"url\""
            ));
            continue;
        }
        rules.push(ServerRule {
            command,
            url,
            reject,
            source,
        });
    }
    ServerList { rules }
}

/// One rule over tool names, from `amp.tools.disable` or `amp.permissions`.
struct ToolRule {
    tool: String,
    verdict: Verdict,
    /// Its `matches`, compiled.
    condition: Option<Condition>,
    /// Its `message`, for a `reject`.
    message: Option<String>,
    /// `Amp's amp.permissions[0] (reject "mcp__memory__delete_*")`.
    rule: String,
    file: String,
}

fn tool_rules(path: &Path, root: &Value, warnings: &mut Vec<String>) -> Vec<ToolRule> {
    let mut rules = Vec::new();
    let file = path.display().to_string();
    if let Some(names) = root.get("amp.tools.disable").and_then(Value::as_array) {
        for name in names.iter().filter_map(Value::as_str) {
            rules.push(ToolRule {
                tool: name.to_string(),
                verdict: Verdict::Deny,
                condition: None,
                message: None,
                rule: format!("Amp's amp.tools.disable {name:?}"),
                file: file.clone(),
            });
        }
    }
    let Some(list) = root.get("amp.permissions").and_then(Value::as_array) else {
        return rules;
    };
    for (i, rule) in list.iter().enumerate() {
        let source = format!("{file}: Amp's amp.permissions[{i}]");
        let Some(tool) = rule.get("tool").and_then(Value::as_str) else {
            warnings.push(format!("{source}: not applied: it names no \"tool\""));
            continue;
        };
        // A rule for sub-agents only: switchboard's loop is the main thread.
        if rule.get("context").and_then(Value::as_str) == Some("subagent") {
            continue;
        }
        let verdict = match rule.get("action").and_then(Value::as_str) {
            Some("allow") => Verdict::Allow,
            Some("reject") => Verdict::Deny,
            Some("ask") => Verdict::Ask,
            Some("delegate") => {
                if may_name_mcp(tool) {
                    warnings.push(format!(
                        "{source}: delegates to {:?}, which switchboard does not run: calls it matches ask instead",
                        rule.get("to").and_then(Value::as_str).unwrap_or("a program")
                    ));
                }
                Verdict::Ask
            }
            other => {
                warnings.push(format!(
                    "{source}: not applied: its action is {}",
                    other.map_or("missing".into(), |a| format!("{a:?}"))
                ));
                continue;
            }
        };
        let compiled = match rule.get("matches") {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Object(m)) if m.is_empty() => Ok(None),
            Some(Value::Object(m)) => fields(m)
                .map(|test| Some(Condition::new(move |args| test.holds_in(args))))
                .map_err(|e| format!("its matches{e}")),
            Some(other) => Err(format!(
                "its matches is {other}, not an object of arguments"
            )),
        };
        let (verdict, condition) = match compiled {
            Ok(condition) => (verdict, condition),
            // Conditions switchboard cannot read (a regular expression of JavaScript's that
            // Rust's lacks): a rule that would allow is left out, one that would refuse or ask
            // asks at every call of its tools, never hiding them.
            Err(e) if verdict == Verdict::Allow => {
                if may_name_mcp(tool) {
                    warnings.push(format!("{source}: not applied: {e}"));
                }
                continue;
            }
            Err(e) => {
                if may_name_mcp(tool) {
                    warnings.push(format!(
                        "{source}: {e}, so every call of the tools it names asks instead"
                    ));
                }
                (Verdict::Ask, Some(Condition::new(|_| true)))
            }
        };
        let message = rule
            .get("message")
            .and_then(Value::as_str)
            .filter(|_| verdict == Verdict::Deny)
            .map(str::to_string);
        let action = rule.get("action").and_then(Value::as_str).unwrap_or("");
        rules.push(ToolRule {
            tool: tool.to_string(),
            verdict,
            condition,
            message,
            rule: format!("Amp's amp.permissions[{i}] ({action} {tool:?})"),
            file: file.clone(),
        });
    }
    rules
}

/// Whether a tool glob may match an MCP tool's name (`mcp__…`), to warn only about those.
fn may_name_mcp(glob: &str) -> bool {
    glob.starts_with("mcp__") || glob.starts_with('*')
}

/// A pattern of Amp's rules.
enum Pattern {
    Glob(globset::GlobMatcher),
    Regex(regex::Regex),
}

impl Pattern {
    fn is_match(&self, text: &str) -> bool {
        match self {
            Pattern::Glob(g) => g.is_match(text),
            Pattern::Regex(r) => r.is_match(text),
        }
    }
}

/// A pattern or a list of them.
fn patterns(value: &Value) -> Result<Vec<Pattern>, String> {
    match value {
        Value::Array(list) => list.iter().map(pattern).collect(),
        v => pattern(v).map(|p| vec![p]),
    }
}

/// One pattern: a glob over the whole text, or a regular expression between slashes.
fn pattern(v: &Value) -> Result<Pattern, String> {
    let text = v
        .as_str()
        .ok_or_else(|| format!("{v} is not a text pattern"))?;
    if let Some(re) = text
        .strip_prefix('/')
        .and_then(|t| t.strip_suffix('/'))
        .filter(|_| text.len() >= 2)
    {
        return regex::Regex::new(re)
            .map(Pattern::Regex)
            .map_err(|e| format!("{text:?} is not a regular expression: {e}"));
    }
    globset::GlobBuilder::new(text)
        .literal_separator(false)
        .build()
        .map(|g| Pattern::Glob(g.compile_matcher()))
        .map_err(|e| format!("{text:?} is not a pattern: {}", e.kind()))
}

/// A condition of a rule's `matches` on one argument (or on the arguments, at the top).
enum Test {
    /// A text matching the pattern.
    Text(Pattern),
    /// Any of these.
    Any(Vec<Test>),
    /// This very value (a number equal in value).
    Exactly(Value),
    /// An object whose fields, or an array whose items by number, pass these.
    Fields(Vec<(String, Test)>),
}

impl Test {
    /// Whether `value` (absent: `None`) passes.
    fn holds(&self, value: Option<&Value>) -> bool {
        match self {
            Test::Text(p) => value.and_then(Value::as_str).is_some_and(|t| p.is_match(t)),
            Test::Any(list) => list.iter().any(|t| t.holds(value)),
            Test::Exactly(want) => value.is_some_and(|v| same(v, want)),
            Test::Fields(fields) => match value {
                Some(Value::Object(map)) => all_hold(fields, map),
                Some(items @ Value::Array(_)) => {
                    fields.iter().all(|(k, t)| t.holds(item(items, k)))
                }
                _ => false,
            },
        }
    }

    /// Whether a call's arguments pass (the top of a rule's `matches`).
    fn holds_in(&self, arguments: &serde_json::Map<String, Value>) -> bool {
        match self {
            Test::Fields(fields) => all_hold(fields, arguments),
            other => other.holds(None),
        }
    }
}

/// Whether each field of `map` that `fields` names passes its test.
fn all_hold(fields: &[(String, Test)], map: &serde_json::Map<String, Value>) -> bool {
    fields.iter().all(|(k, t)| t.holds(field_of(map, k)))
}

/// Two JSON values alike as Amp compares them: numbers by value.
fn same(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

/// The field `key` of an object; a key it does not have that holds dots is a path into it
/// (`options.force`, `items.0.name`), through fields and, by number, items.
fn field_of<'a>(map: &'a serde_json::Map<String, Value>, key: &str) -> Option<&'a Value> {
    map.get(key).or_else(|| {
        let (first, rest) = key.split_once('.')?;
        rest.split('.').try_fold(map.get(first)?, step)
    })
}

/// The item of an array by number, or a dotted path from it (`0.name`).
fn item<'a>(items: &'a Value, key: &str) -> Option<&'a Value> {
    key.split('.').try_fold(items, step)
}

/// One step of a path: a field of an object or, by number, an item of an array.
fn step<'a>(value: &'a Value, key: &str) -> Option<&'a Value> {
    match value {
        Value::Object(o) => o.get(key),
        Value::Array(a) => key.parse::<usize>().ok().and_then(|i| a.get(i)),
        _ => None,
    }
}

/// An object of conditions, each compiled; an error names the key (`.path: …`).
fn fields(map: &serde_json::Map<String, Value>) -> Result<Test, String> {
    map.iter()
        .map(|(key, v)| {
            test(v)
                .map(|t| (key.clone(), t))
                .map_err(|e| format!(".{key}{e}"))
        })
        .collect::<Result<_, _>>()
        .map(Test::Fields)
}

/// One condition, compiled.
fn test(value: &Value) -> Result<Test, String> {
    match value {
        Value::String(_) => pattern(value).map(Test::Text).map_err(|e| format!(": {e}")),
        Value::Array(list) => list
            .iter()
            .enumerate()
            .map(|(i, v)| test(v).map_err(|e| format!("[{i}]{e}")))
            .collect::<Result<_, _>>()
            .map(Test::Any),
        Value::Object(map) => fields(map),
        other => Ok(Test::Exactly(other.clone())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn matches(pattern: Value, text: &str) -> bool {
        patterns(&pattern).unwrap().iter().any(|p| p.is_match(text))
    }

    #[test]
    fn patterns_are_globs_over_the_whole_text_or_regular_expressions() {
        assert!(matches(
            json!("npx @modelcontextprotocol/server-*"),
            "npx @modelcontextprotocol/server-memory"
        ));
        assert!(!matches(
            json!("npx @modelcontextprotocol/server-*"),
            "npx -y @evil/server-x"
        ));
        assert!(matches(
            json!("https://trusted.example/mcp/*"),
            "https://trusted.example/mcp/a/b"
        ));
        assert!(matches(json!("/^uvx /"), "uvx mcp-server-time"));
        assert!(matches(json!(["a", "b*"]), "bee"));
        assert!(!matches(json!(["a", "b*"]), "cab"));
        assert!(patterns(&json!("/(/")).is_err());
        assert!(patterns(&json!(3)).is_err());
    }

    /// A rule's `matches` against a call's arguments, as Amp's manual describes it.
    #[test]
    fn matches_conditions_hold_as_amp_describes_them() {
        let holds = |matches: Value, args: Value| {
            let test = fields(matches.as_object().unwrap()).unwrap();
            test.holds_in(args.as_object().unwrap())
        };
        // Every named argument must match; a text pattern only a text.
        assert!(holds(
            json!({"a": "x*", "b": 2}),
            json!({"a": "xy", "b": 2.0, "c": 0})
        ));
        assert!(!holds(json!({"a": "x*", "b": 2}), json!({"a": "xy"})));
        assert!(!holds(json!({"a": "*"}), json!({"a": 3})));
        // A list matches when any entry does; literals only themselves.
        assert!(holds(json!({"a": ["/^q/", true]}), json!({"a": true})));
        assert!(!holds(json!({"a": null}), json!({})));
        assert!(holds(json!({"a": null}), json!({"a": null})));
        // Objects field by field, arrays by number; a dotted key is a path unless the
        // arguments have it as it is.
        assert!(holds(
            json!({"o": {"k": "v"}}),
            json!({"o": {"k": "v", "z": 1}})
        ));
        assert!(holds(json!({"l": {"1": "b*"}}), json!({"l": ["a", "bc"]})));
        assert!(holds(json!({"o.k": "v"}), json!({"o": {"k": "v"}})));
        assert!(holds(json!({"l.1.n": 5}), json!({"l": [{}, {"n": 5}]})));
        assert!(holds(
            json!({"o.k": "w"}),
            json!({"o.k": "w", "o": {"k": "v"}})
        ));
        assert!(!holds(json!({"o.k": "v"}), json!({"o": "k"})));
        // Conditions that do not compile name their place.
        let bad = fields(json!({"x": [1, {"y": "/(/"}]}).as_object().unwrap());
        assert!(bad.is_err_and(|e| e.starts_with(".x[1].y: ")));
    }
}
