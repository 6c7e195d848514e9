//! Gemini CLI's policy engine, read with its settings: the TOML rules of its policy folders
//! and the rules its settings stand for, decided as Gemini CLI decides an MCP tool's call.
//!
//! Gemini CLI names an MCP tool `mcp_SERVER_TOOL` (every character outside `A-Z a-z 0-9 _ - .
//! :` made `_`, cut to `30 characters...30 characters` past 63) and keeps one list of rules,
//! each with a priority: a policy file's `priority` (0 to 999) over a thousand, plus its tier
//! (1 built in, 2 an extension's, 4 the user's, 5 the administrator's). The matching rule of
//! highest priority decides (the first written among equals): `allow`, `deny` or `ask_user`. A
//! rule names its tool with `toolName` (`*`, `mcp_*`, `mcp_SERVER_*` or a whole name: no other
//! wildcard matches anything) and may narrow it to one server (`mcpName`), to the tools whose
//! annotations have some values (`toolAnnotations`) and to the calls whose arguments, written
//! as Gemini CLI writes them, hold a match of a regular expression (`argsPattern`).
//!
//! Read, in Gemini CLI's order: the system policies folder (`/etc/gemini-cli/policies` and its
//! macOS and Windows places, only when root owns it and nobody else may write to it), the
//! `adminPolicyPaths` setting (unless the system folder holds policies), the `policyPaths`
//! setting or else `~/.gemini/policies`, then each enabled extension's `policies` folder (its
//! `allow` rules left out, as Gemini CLI leaves them out); then the settings' rules:
//! `tools.exclude` (deny, 4.4), `tools.confirmationRequired` (ask, 4.35), `tools.allowed`
//! (allow, 4.3), `tools.core` (allow, 4.25, and deny every other tool, 4.24), a server's
//! `trust` (allow, 4.2) and `mcp.allowed` (allow, 4.1). A tool `tools.exclude` names, by its
//! whole name or its own, is kept from the model whatever a rule says.
//!
//! switchboard decides as Gemini CLI does in its default approval mode with a person at the
//! terminal: rules only for other modes (`yolo`, `plan`, `autoEdit`), for runs without one
//! (`interactive = false`) or for a subagent do not apply; Gemini CLI's built-in policies hold
//! no rule for MCP tools in that mode. A trusted server (`"trust": true` in a trusted folder)
//! asks no question, as in Gemini CLI: its `ask_user` rules allow. Gemini CLI does not read a
//! workspace's `.gemini/policies` yet, and neither does switchboard. A tool no rule matches
//! keeps switchboard's own approval setting, where Gemini CLI would ask.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value};
use switchboard_core::host_rules::literal;
use switchboard_core::{Condition, HostRule, HostRules, Verdict};

use super::ServerConfig;
use super::gemini_args::{ArgsPattern, args_patterns};

/// The tiers of Gemini CLI's rules: a rule's priority is its tier plus its own over a thousand.
const EXTENSION_TIER: f64 = 2.0;
const USER_TIER: f64 = 4.0;
const ADMIN_TIER: f64 = 5.0;

/// Where Gemini CLI's rules come from, besides the settings.
pub(super) struct Sources<'a> {
    /// The settings Gemini CLI merged, in its order (system defaults, user, trusted workspace,
    /// system).
    pub roots: &'a [&'a Value],
    /// The user's home (Gemini CLI's `~/.gemini` is in it).
    pub home: &'a Path,
    /// The folder Gemini CLI would run in, for relative paths in the settings.
    pub cwd: Option<&'a Path>,
    /// The enabled extensions: their names and folders.
    pub extensions: &'a [(String, PathBuf)],
    /// Whether Gemini CLI trusts the folder (a trusted server then asks nothing).
    pub folder_trusted: bool,
    /// Notes that the config depends on a file or folder (read, or looked for).
    pub input: &'a dyn Fn(&Path),
    /// Another folder to read as the system policies (`SWITCHBOARD_GEMINI_SYSTEM_POLICIES`, to
    /// try an administrator's policies before deploying them).
    pub system_policies: Option<PathBuf>,
}

/// One rule of Gemini CLI's, as it holds it after loading.
#[derive(Clone)]
struct Rule {
    /// `toolName`, with `mcpName` written in (`mcp_SERVER_TOOL`, `mcp_SERVER_*`, `mcp_*`).
    tool: String,
    /// `mcpName`.
    server: Option<String>,
    decision: Verdict,
    priority: f64,
    annotations: Option<Map<String, Value>>,
    pattern: Option<Arc<ArgsPattern>>,
    deny_message: Option<String>,
    /// The rule as the user reads it in a message.
    label: String,
    /// Where it was written.
    file: String,
}

/// Apply Gemini CLI's policies to `servers` (Gemini CLI's own, which no other host's rules
/// reach). `warnings` get every file or rule Gemini CLI would skip or could never match, and
/// why.
pub(super) fn apply(src: &Sources<'_>, servers: &mut [ServerConfig], warnings: &mut Vec<String>) {
    let settings = Settings::merge(src.roots);
    let mut rules = Vec::new();
    for (path, tier) in policy_paths(src, &settings, warnings) {
        load_path(src, &path, tier, None, &mut rules, warnings);
    }
    for (name, root) in src.extensions {
        load_path(
            src,
            &root.join("policies"),
            EXTENSION_TIER,
            Some(name),
            &mut rules,
            warnings,
        );
    }
    settings.rules(src.roots, &mut rules);
    if settings.disable_always_allow {
        // Gemini CLI skips every rule of priority 950 (its "always allow" answers) then.
        rules.retain(|r| ((r.priority.fract() * 1000.0).round() as i64) != 950);
    }
    // Highest priority first; among equals, the first loaded.
    rules.sort_by(|a, b| b.priority.total_cmp(&a.priority));
    if rules.is_empty() && settings.exclude.is_empty() {
        return;
    }
    for server in servers.iter_mut() {
        let name = server.name().to_string();
        let trusted = src.folder_trusted && trusts(src.roots, &name);
        let mut list = HostRules::named_by(&name, "mcp_", "_", tool_name);
        for rule in &rules {
            for pattern in globs(rule, &name) {
                let mut verdict = rule.decision;
                let mut label = rule.label.clone();
                if trusted && verdict == Verdict::Ask {
                    verdict = Verdict::Allow;
                    label.push_str(", which asks nothing of a trusted server");
                }
                match HostRule::new(&pattern, verdict, label, rule.file.clone()) {
                    Ok(mut host) => {
                        host.annotations = rule.annotations.clone();
                        host.message = rule.deny_message.clone();
                        if let Some(p) = &rule.pattern {
                            let p = Arc::clone(p);
                            host.condition = Some(Condition::new(move |args| p.matches(args)));
                        }
                        list.add(host);
                    }
                    Err(e) => {
                        warnings.push(format!("{}: {}: not applied: {e}", rule.file, rule.label))
                    }
                }
            }
        }
        // What `tools.exclude` names is not registered at all: no rule can bring it back.
        list.next_list();
        for excluded in &settings.exclude {
            let label = format!("Gemini CLI's tools.exclude {excluded:?}");
            for pattern in [literal(excluded), literal(&tool_name(&name, excluded))] {
                match HostRule::new(
                    &pattern,
                    Verdict::Deny,
                    label.clone(),
                    "Gemini CLI settings".into(),
                ) {
                    // It names a tool of any server, or none (a built-in tool of Gemini CLI's).
                    Ok(rule) => list.add(rule.for_any_server()),
                    Err(e) => warnings.push(format!("{label}: not applied: {e}")),
                }
            }
        }
        if list.is_empty() {
            continue;
        }
        // Gemini CLI's servers carry no other host's rules: its rules are theirs alone.
        server.filter = std::mem::take(&mut server.filter).with_rules(list);
    }
}

/// The name Gemini CLI gives tool `tool` of server `server`: `mcp_SERVER_TOOL` (no second
/// `mcp_` when the server's name starts with it), each UTF-16 unit outside `A-Z a-z 0-9 _ - .
/// :` made `_`, and past 63 characters its first 30 and last 30 around `...`.
pub(super) fn tool_name(server: &str, tool: &str) -> String {
    let joined = format!("{server}_{tool}");
    let joined = if joined.starts_with("mcp_") {
        joined
    } else {
        format!("mcp_{joined}")
    };
    let mut name = String::with_capacity(joined.len());
    for c in joined.chars() {
        if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | ':') {
            name.push(c);
        } else {
            // JavaScript replaces each UTF-16 unit: a character beyond U+FFFF is two.
            for _ in 0..c.len_utf16() {
                name.push('_');
            }
        }
    }
    if !name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        name.insert(0, '_');
    }
    if name.len() > 63 {
        name = format!("{}...{}", &name[..30], &name[name.len() - 30..]);
    }
    name
}

/// The globs over [`tool_name`] that match what `rule` matches of `server`'s tools (none when
/// it is for another server), as Gemini CLI matches a rule's `toolName`: `*` and `mcp_*` every
/// tool, `mcp_S_*` the tools of server `S` whose names start so, any other text with a `*` only
/// itself, and a whole name itself (or, written after `mcp_SERVER_`, the name after it).
fn globs(rule: &Rule, server: &str) -> Vec<String> {
    match rule.server.as_deref() {
        Some("*") | None => {}
        Some(s) if s == server => {}
        Some(_) => return Vec::new(),
    }
    let tool = rule.tool.as_str();
    if tool == "*" || tool == "mcp_*" {
        return vec!["*".into()];
    }
    if tool.contains('*') {
        if let Some(expected) = tool.strip_prefix("mcp_").and_then(|t| t.strip_suffix("_*")) {
            return if expected == server {
                vec![format!("{}*", literal(&format!("mcp_{server}_")))]
            } else {
                Vec::new()
            };
        }
        return vec![literal(tool)];
    }
    let mut out = vec![literal(tool)];
    if let Some(rest) = tool.strip_prefix(&format!("mcp_{server}_"))
        && rest.starts_with("mcp_")
    {
        out.push(literal(rest));
    }
    out
}

/// Whether the merged settings trust server `name` (`"trust": true` on the entry of the last
/// settings that have it: a later entry replaces an earlier one whole).
fn trusts(roots: &[&Value], name: &str) -> bool {
    roots
        .iter()
        .filter_map(|r| r.get("mcpServers")?.get(name))
        .next_back()
        .and_then(|e| e.get("trust"))
        .is_some_and(truthy)
}

/// JavaScript's truth of a JSON value.
fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0 && !f.is_nan()),
        Value::String(s) => !s.is_empty(),
        Value::Array(_) | Value::Object(_) => true,
    }
}

/// The settings that make rules, merged as Gemini CLI merges them.
#[derive(Default)]
struct Settings {
    /// `tools.exclude` of every scope.
    exclude: Vec<String>,
    /// `tools.confirmationRequired`, `tools.allowed`, `tools.core`, `mcp.allowed`: the last
    /// scope's.
    confirm: Option<Vec<String>>,
    allowed: Option<Vec<String>>,
    core: Option<Vec<String>>,
    mcp_allowed: Option<Vec<String>>,
    /// `policyPaths` and `adminPolicyPaths` of every scope.
    policy_paths: Vec<String>,
    admin_paths: Vec<String>,
    /// `security.disableAlwaysAllow` or `admin.secureModeEnabled`.
    disable_always_allow: bool,
}

impl Settings {
    fn merge(roots: &[&Value]) -> Self {
        let mut s = Settings::default();
        let mut disable = false;
        let mut secure = false;
        for root in roots {
            let strings = |pointer: &str, legacy: Option<&str>| {
                root.pointer(pointer)
                    .or_else(|| legacy.and_then(|k| root.get(k)))
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(Value::as_str)
                            .map(str::to_string)
                            .collect::<Vec<_>>()
                    })
            };
            for t in strings("/tools/exclude", Some("excludeTools")).unwrap_or_default() {
                if !s.exclude.contains(&t) {
                    s.exclude.push(t);
                }
            }
            s.policy_paths
                .extend(strings("/policyPaths", None).unwrap_or_default());
            s.admin_paths
                .extend(strings("/adminPolicyPaths", None).unwrap_or_default());
            if let Some(v) = strings("/tools/confirmationRequired", None) {
                s.confirm = Some(v);
            }
            if let Some(v) = strings("/tools/allowed", Some("allowedTools")) {
                s.allowed = Some(v);
            }
            if let Some(v) = strings("/tools/core", Some("coreTools")) {
                s.core = Some(v);
            }
            if let Some(v) = strings("/mcp/allowed", Some("allowMCPServers")) {
                s.mcp_allowed = Some(v);
            }
            if let Some(b) = root
                .pointer("/security/disableAlwaysAllow")
                .and_then(Value::as_bool)
            {
                disable = b;
            }
            if let Some(b) = root
                .pointer("/admin/secureModeEnabled")
                .and_then(Value::as_bool)
            {
                secure = b;
            }
        }
        s.disable_always_allow = disable || secure;
        s
    }

    /// The rules the settings stand for, after the policy files' (in Gemini CLI's order, which
    /// decides among equal priorities). A server `mcp.excluded` names is not started at all,
    /// so its rule is not needed.
    fn rules(&self, roots: &[&Value], rules: &mut Vec<Rule>) {
        let mut push = |tool: String, server: Option<String>, decision, priority, what: &str| {
            rules.push(Rule {
                label: format!("Gemini CLI's {what}"),
                tool,
                server,
                decision,
                priority,
                annotations: None,
                pattern: None,
                deny_message: None,
                file: "Gemini CLI settings".into(),
            });
        };
        for t in &self.exclude {
            push(
                t.clone(),
                None,
                Verdict::Deny,
                4.4,
                &format!("tools.exclude {t:?}"),
            );
        }
        for t in self.confirm.iter().flatten() {
            push(
                t.clone(),
                None,
                Verdict::Ask,
                4.35,
                &format!("tools.confirmationRequired {t:?}"),
            );
        }
        for t in self.allowed.iter().flatten() {
            push(
                plain_tool(t),
                None,
                Verdict::Allow,
                4.3,
                &format!("tools.allowed {t:?}"),
            );
        }
        if let Some(core) = &self.core {
            for t in core {
                push(
                    plain_tool(t),
                    None,
                    Verdict::Allow,
                    4.25,
                    &format!("tools.core {t:?}"),
                );
            }
            push(
                "*".into(),
                None,
                Verdict::Deny,
                4.25 - 0.01,
                "tools.core (every tool it does not list is denied)",
            );
        }
        // Trusted servers, in the merged settings' order.
        let mut trusted: Vec<String> = Vec::new();
        for root in roots {
            for name in root
                .get("mcpServers")
                .and_then(Value::as_object)
                .into_iter()
                .flat_map(|m| m.keys())
            {
                if !trusted.contains(name) {
                    trusted.push(name.clone());
                }
            }
        }
        for name in trusted.into_iter().filter(|n| trusts(roots, n)) {
            push(
                format!("mcp_{name}_*"),
                Some(name.clone()),
                Verdict::Allow,
                4.2,
                &format!("mcpServers.{name}.trust"),
            );
        }
        for s in self.mcp_allowed.iter().flatten() {
            let tool = if s == "*" {
                "mcp_*".to_string()
            } else {
                format!("mcp_{s}_*")
            };
            push(
                tool,
                Some(s.clone()),
                Verdict::Allow,
                4.1,
                &format!("mcp.allowed {s:?}"),
            );
        }
    }
}

/// A `tools.allowed` / `tools.core` entry's tool: `name(arguments)` is `name` (Gemini CLI
/// reads arguments only for its shell tool), `ShellTool` is `run_shell_command`.
fn plain_tool(entry: &str) -> String {
    let name = match entry.split_once('(') {
        Some((name, rest))
            if rest.ends_with(')')
                && !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') =>
        {
            name
        }
        _ => entry,
    };
    if name == "ShellTool" {
        "run_shell_command".into()
    } else {
        name.into()
    }
}

/// The policy files' paths Gemini CLI reads, with their tiers, in its order.
fn policy_paths(
    src: &Sources<'_>,
    settings: &Settings,
    warnings: &mut Vec<String>,
) -> Vec<(PathBuf, f64)> {
    let mut out = Vec::new();
    let (system, chosen) = match &src.system_policies {
        Some(dir) => (dir.clone(), true),
        None => (system_dir(), false),
    };
    let mut system_has_policies = false;
    if system.is_dir() {
        // A folder the user names to try policies in is theirs to trust.
        match if chosen { Ok(()) } else { secure(&system) } {
            Ok(()) => {
                system_has_policies = toml_files(&system).is_ok_and(|f| !f.is_empty());
                out.push((system.clone(), ADMIN_TIER));
            }
            Err(why) => warnings.push(format!(
                "{}: Gemini CLI's system policies are skipped, as Gemini CLI skips them: {why}",
                system.display()
            )),
        }
    }
    let resolve = |p: &String| {
        let p = match p.strip_prefix("~/") {
            Some(rest) => src.home.join(rest),
            None => PathBuf::from(p),
        };
        match (p.is_absolute(), src.cwd) {
            (false, Some(cwd)) => cwd.join(p),
            _ => p,
        }
    };
    if !settings.admin_paths.is_empty() {
        if system_has_policies {
            warnings.push(format!(
                "Gemini CLI's adminPolicyPaths are ignored, as Gemini CLI ignores them: {} already holds policies",
                system.display()
            ));
        } else {
            out.extend(
                settings
                    .admin_paths
                    .iter()
                    .map(|p| (resolve(p), ADMIN_TIER)),
            );
        }
    }
    if settings.policy_paths.is_empty() {
        out.push((src.home.join(".gemini/policies"), USER_TIER));
    } else {
        out.extend(
            settings
                .policy_paths
                .iter()
                .map(|p| (resolve(p), USER_TIER)),
        );
    }
    out
}

/// Gemini CLI's system policies folder on this platform.
fn system_dir() -> PathBuf {
    PathBuf::from(if cfg!(target_os = "macos") {
        "/Library/Application Support/GeminiCli/policies"
    } else if cfg!(windows) {
        r"C:\ProgramData\gemini-cli\policies"
    } else {
        "/etc/gemini-cli/policies"
    })
}

/// Whether Gemini CLI reads the system folder: on Unix root must own it and only its owner may
/// write to it (Windows' access lists are not read: it is taken as Gemini CLI finds it).
fn secure(dir: &Path) -> Result<(), String> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::metadata(dir).map_err(|e| e.to_string())?;
        if meta.uid() != 0 {
            return Err("it is not owned by root".into());
        }
        if meta.mode() & 0o022 != 0 {
            return Err("others than its owner may write to it".into());
        }
    }
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

/// The `.toml` files directly in `dir` (not those reached through a link), in byte order of
/// their names, as Gemini CLI lists them.
fn toml_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort_by(|a, b| a.file_name().cmp(&b.file_name()));
    Ok(files)
}

/// Load the rules of `path` (a folder of `.toml` files, or one) at `tier`; `extension` names the
/// extension whose folder it is (its `allow` rules are left out).
fn load_path(
    src: &Sources<'_>,
    path: &Path,
    tier: f64,
    extension: Option<&str>,
    rules: &mut Vec<Rule>,
    warnings: &mut Vec<String>,
) {
    (src.input)(path);
    let files = match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return,
        Err(e) => {
            warnings.push(format!(
                "{}: Gemini CLI's policies cannot be read: {e}",
                path.display()
            ));
            return;
        }
        Ok(m) if m.is_dir() => match toml_files(path) {
            Ok(f) => f,
            Err(e) => {
                warnings.push(format!(
                    "{}: Gemini CLI's policies cannot be read: {e}",
                    path.display()
                ));
                return;
            }
        },
        Ok(m) if m.is_file() && path.extension().is_some_and(|x| x == "toml") => {
            vec![path.to_path_buf()]
        }
        Ok(_) => return,
    };
    for file in files {
        (src.input)(&file);
        let text = match std::fs::read_to_string(&file) {
            Ok(t) => t,
            Err(e) => {
                warnings.push(format!(
                    "{}: cannot be read ({e}); Gemini CLI skips it too",
                    file.display()
                ));
                continue;
            }
        };
        match parse_file(
            &text,
            tier,
            extension,
            &file.display().to_string(),
            warnings,
        ) {
            Ok(found) => rules.extend(found),
            Err(e) => warnings.push(format!(
                "{}: Gemini CLI skips this policy file, and so does switchboard: {e}",
                file.display()
            )),
        }
    }
}

/// One `[[rule]]` as written.
struct Written {
    tool_names: Vec<String>,
    mcp_name: Option<String>,
    subagent: Option<String>,
    args_pattern: Option<String>,
    /// `commandPrefix`: an empty list makes no rule at all, as in Gemini CLI.
    command_prefix: Option<Vec<String>>,
    command_regex: Option<String>,
    decision: Verdict,
    decision_word: String,
    priority: f64,
    modes: Vec<String>,
    interactive: Option<bool>,
    annotations: Option<Map<String, Value>>,
    deny_message: Option<String>,
}

/// The rules of one policy file at `tier`. Err when Gemini CLI would skip the whole file (it
/// is not TOML, or any rule breaks the schema); a rule it drops alone (its pattern does not
/// compile or may take exponential time) is left out with a warning.
fn parse_file(
    text: &str,
    tier: f64,
    extension: Option<&str>,
    file: &str,
    warnings: &mut Vec<String>,
) -> Result<Vec<Rule>, String> {
    let doc: toml::Table =
        toml::from_str(text).map_err(|e| format!("not TOML: {}", e.message()))?;
    let written = match doc.get("rule") {
        None => Vec::new(),
        Some(toml::Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, item)| match item {
                toml::Value::Table(t) => written(t).map_err(|e| format!("rule {}: {e}", i + 1)),
                _ => Err(format!("rule {}: not a table", i + 1)),
            })
            .collect::<Result<Vec<_>, _>>()?,
        Some(_) => return Err("\"rule\" must be an array of tables ([[rule]])".into()),
    };
    if doc.contains_key("safety_checker") {
        warnings.push(format!(
            "{file}: its [[safety_checker]] entries are not run by switchboard (Gemini CLI runs them after the rules)"
        ));
    }
    let mut out = Vec::new();
    for (i, w) in written.into_iter().enumerate() {
        let n = i + 1;
        // Rules for another approval mode, for runs with nobody at the terminal, or for a
        // subagent do not hold where switchboard runs.
        if w.subagent.is_some()
            || (!w.modes.is_empty() && !w.modes.iter().any(|m| m == "default"))
            || w.interactive == Some(false)
            || w.command_prefix.as_ref().is_some_and(Vec::is_empty)
        {
            continue;
        }
        if extension.is_some() && w.decision == Verdict::Allow {
            warnings.push(format!(
                "{file}: rule {n}: an extension's policy may not allow calls; Gemini CLI leaves it out, and so does switchboard"
            ));
            continue;
        }
        let patterns = args_patterns(
            w.args_pattern.as_deref(),
            w.command_prefix.as_deref().unwrap_or_default(),
            w.command_regex.as_deref(),
        );
        for source in patterns {
            let pattern = match &source {
                None => None,
                Some(p) => match ArgsPattern::compile(p) {
                    Ok(p) => Some(Arc::new(p)),
                    Err(e) => {
                        warnings.push(format!(
                            "{file}: rule {n} left out, as Gemini CLI leaves it out: {e}"
                        ));
                        continue;
                    }
                },
            };
            for name in &w.tool_names {
                let tool = match w.mcp_name.as_deref().filter(|m| !m.is_empty()) {
                    Some(m) => format_mcp(m, name),
                    None => name.clone(),
                };
                if tool.is_empty() || w.mcp_name.as_deref() == Some("") {
                    warnings.push(format!(
                        "{file}: rule {n} left out: an empty toolName or mcpName stops Gemini CLI at start"
                    ));
                    continue;
                }
                let partial = w.mcp_name.is_some() && name.contains('*') && name != "*";
                let dead = if partial {
                    Some(
                        "with mcpName, Gemini CLI's only tool wildcard is toolName = \"*\"; any other * is matched as itself",
                    )
                } else {
                    dead_name(&tool)
                };
                if let Some(why) = dead {
                    warnings.push(format!(
                        "{file}: rule {n} ({} {tool:?}) never applies: {why}",
                        w.decision_word
                    ));
                }
                let where_ = match extension {
                    Some(e) => format!("extension {e}'s policy"),
                    None => "policy".into(),
                };
                out.push(Rule {
                    label: format!(
                        "Gemini CLI's {where_} rule {n} ({} {tool:?}{})",
                        w.decision_word,
                        if source.is_some() {
                            " for matching arguments"
                        } else {
                            ""
                        }
                    ),
                    tool,
                    server: w.mcp_name.clone(),
                    decision: w.decision,
                    priority: tier + w.priority / 1000.0,
                    annotations: w.annotations.clone(),
                    pattern: pattern.clone(),
                    deny_message: w.deny_message.clone(),
                    file: file.to_string(),
                });
            }
        }
    }
    Ok(out)
}

/// Gemini CLI's name for a rule's tool with `mcpName` written in.
fn format_mcp(server: &str, tool: &str) -> String {
    match (server, tool) {
        ("*", "*") => "mcp_*".into(),
        ("*", t) => format!("mcp_*_{t}"),
        (s, "*") => format!("mcp_{s}_*"),
        (s, t) => format!("mcp_{s}_{t}"),
    }
}

/// Why Gemini CLI can never match a rule's tool name, when it cannot.
fn dead_name(tool: &str) -> Option<&'static str> {
    if tool.contains("__") && !tool.starts_with("mcp_") {
        return Some("Gemini CLI no longer names MCP tools SERVER__TOOL; write mcp_SERVER_TOOL");
    }
    let supported = tool == "*"
        || tool == "mcp_*"
        || tool
            .strip_prefix("mcp_")
            .and_then(|t| t.strip_suffix("_*"))
            .is_some_and(|s| !s.contains('*'));
    if tool.contains('*') && !supported {
        return Some(
            "Gemini CLI's only wildcards are *, mcp_* and mcp_SERVER_*; any other * is matched as itself",
        );
    }
    None
}

/// One `[[rule]]` table checked against Gemini CLI's schema.
fn written(t: &toml::Table) -> Result<Written, String> {
    use toml::Value as T;
    let text = |key: &str| -> Result<Option<String>, String> {
        match t.get(key) {
            None => Ok(None),
            Some(T::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(format!("{key} must be a string")),
        }
    };
    let texts = |key: &str| -> Result<Option<Vec<String>>, String> {
        match t.get(key) {
            None => Ok(None),
            Some(T::String(s)) => Ok(Some(vec![s.clone()])),
            Some(T::Array(a)) => a
                .iter()
                .map(|v| match v {
                    T::String(s) => Ok(s.clone()),
                    _ => Err(format!("{key} must be a string or an array of strings")),
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
            Some(_) => Err(format!("{key} must be a string or an array of strings")),
        }
    };
    let flag = |key: &str| -> Result<Option<bool>, String> {
        match t.get(key) {
            None => Ok(None),
            Some(T::Boolean(b)) => Ok(Some(*b)),
            Some(_) => Err(format!("{key} must be true or false")),
        }
    };
    let tool_names = texts("toolName")?.ok_or("toolName is required")?;
    let (decision, decision_word) = match text("decision")?.as_deref() {
        Some("allow") => (Verdict::Allow, "allow"),
        Some("deny") => (Verdict::Deny, "deny"),
        Some("ask_user") => (Verdict::Ask, "ask_user"),
        Some(other) => return Err(format!("decision {other:?} is not allow, deny or ask_user")),
        None => return Err("decision is required".into()),
    };
    let priority = match t.get("priority") {
        Some(T::Integer(i)) => *i as f64,
        Some(T::Float(f)) if f.fract() == 0.0 => *f,
        Some(_) => return Err("priority must be a whole number from 0 to 999".into()),
        None => return Err("priority is required".into()),
    };
    if !(0.0..=999.0).contains(&priority) {
        return Err(format!("priority {priority} is not from 0 to 999"));
    }
    let modes = texts("modes")?.unwrap_or_default();
    if !matches!(t.get("modes"), None | Some(T::Array(_))) {
        return Err("modes must be an array".into());
    }
    if let Some(bad) = modes
        .iter()
        .find(|m| !matches!(m.as_str(), "default" | "autoEdit" | "yolo" | "plan"))
    {
        return Err(format!(
            "mode {bad:?} is not default, autoEdit, yolo or plan"
        ));
    }
    let annotations = match t.get("toolAnnotations") {
        None => None,
        Some(T::Table(a)) => match serde_json::to_value(a) {
            Ok(Value::Object(m)) => Some(m),
            _ => return Err("toolAnnotations cannot be read".into()),
        },
        Some(_) => return Err("toolAnnotations must be a table".into()),
    };
    flag("allowRedirection")?;
    flag("allow_redirection")?;
    let deny_message = match text("denyMessage")? {
        Some(m) => Some(m),
        None => text("deny_message")?,
    };
    Ok(Written {
        tool_names,
        mcp_name: text("mcpName")?,
        subagent: text("subagent")?,
        args_pattern: text("argsPattern")?,
        command_prefix: texts("commandPrefix")?,
        command_regex: text("commandRegex")?,
        decision,
        decision_word: decision_word.into(),
        priority,
        modes,
        interactive: flag("interactive")?,
        annotations,
        deny_message,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tools_are_named_as_gemini_cli_names_them() {
        assert_eq!(tool_name("github", "get_issue"), "mcp_github_get_issue");
        assert_eq!(tool_name("mcp_gh", "x"), "mcp_gh_x");
        assert_eq!(tool_name("sp ace", "t/1"), "mcp_sp_ace_t_1");
        assert_eq!(tool_name("s", "😀"), "mcp_s___");
        let long = tool_name("server", &"a".repeat(80));
        assert_eq!(long.len(), 63);
        assert!(long.starts_with("mcp_server_aaaa") && long.contains("..."));
    }

    fn rule(tool: &str, server: Option<&str>) -> Rule {
        Rule {
            tool: tool.into(),
            server: server.map(str::to_string),
            decision: Verdict::Deny,
            priority: 4.0,
            annotations: None,
            pattern: None,
            deny_message: None,
            label: String::new(),
            file: String::new(),
        }
    }

    #[test]
    fn only_gemini_clis_wildcards_match() {
        assert_eq!(globs(&rule("*", None), "gh"), ["*"]);
        assert_eq!(globs(&rule("mcp_*", Some("*")), "gh"), ["*"]);
        assert_eq!(globs(&rule("mcp_gh_*", Some("gh")), "gh"), ["mcp_gh_*"]);
        assert!(globs(&rule("mcp_gh_*", Some("gh")), "other").is_empty());
        assert!(globs(&rule("mcp_gh_*", None), "other").is_empty());
        assert_eq!(globs(&rule("mcp_*_search", None), "gh"), ["mcp_[*]_search"]);
        assert_eq!(
            globs(&rule("mcp_gh_mcp_gh_x", Some("gh")), "gh"),
            ["mcp_gh_mcp_gh_x", "mcp_gh_x"]
        );
        assert!(dead_name("gh__x").is_some());
        assert!(dead_name("mcp_gh_to*").is_some() && dead_name("mcp_gh_*").is_none());
    }

    #[test]
    fn a_file_breaking_the_schema_is_skipped_whole() {
        let mut w = Vec::new();
        let good =
            "[[rule]]\ntoolName = \"*\"\nmcpName = \"gh\"\ndecision = \"allow\"\npriority = 10\n";
        let rules = parse_file(good, 4.0, None, "f", &mut w).unwrap();
        assert_eq!(rules.len(), 1);
        assert_eq!(rules[0].tool, "mcp_gh_*");
        assert!((rules[0].priority - 4.01).abs() < 1e-12);
        for bad in [
            "[[rule]]\nmcpName = \"gh\"\ndecision = \"allow\"\npriority = 10\n",
            "[[rule]]\ntoolName = \"x\"\ndecision = \"maybe\"\npriority = 10\n",
            "[[rule]]\ntoolName = \"x\"\ndecision = \"deny\"\npriority = 1000\n",
            "[[rule]]\ntoolName = \"x\"\ndecision = \"deny\"\npriority = 1.5\n",
            "[[rule]]\ntoolName = \"x\"\ndecision = \"deny\"\npriority = 1\nmodes = [\"auto_edit\"]\n",
            "[rule]\ntoolName = \"x\"\ndecision = \"deny\"\npriority = 1\n",
            "not toml",
        ] {
            let both = format!("{good}{bad}");
            assert!(parse_file(&both, 4.0, None, "f", &mut w).is_err(), "{bad}");
        }
    }

    #[test]
    fn rules_for_other_modes_runs_and_extensions_allows_are_left_out() {
        let mut w = Vec::new();
        let text = r#"
[[rule]]
toolName = "*"
decision = "allow"
priority = 998
modes = ["yolo"]

[[rule]]
toolName = ["mcp_gh_a", "mcp_gh_b"]
decision = "deny"
priority = 5
interactive = false

[[rule]]
toolName = ["mcp_gh_a", "mcp_gh_b"]
decision = "ask_user"
priority = 5.0
modes = ["default", "plan"]
denyMessage = "no"

[[rule]]
toolName = "x"
subagent = "helper"
decision = "deny"
priority = 5
"#;
        let rules = parse_file(text, 4.0, None, "f", &mut w).unwrap();
        let tools: Vec<&str> = rules.iter().map(|r| r.tool.as_str()).collect();
        assert_eq!(tools, ["mcp_gh_a", "mcp_gh_b"]);
        assert_eq!(rules[0].decision, Verdict::Ask);
        let ext = "[[rule]]\ntoolName = \"*\"\ndecision = \"allow\"\npriority = 1\n";
        assert!(
            parse_file(ext, 2.0, Some("e"), "f", &mut w)
                .unwrap()
                .is_empty()
        );
        assert!(
            w.iter()
                .any(|m| m.contains("extension's policy may not allow")),
            "{w:?}"
        );
    }

    #[test]
    fn settings_lists_become_rules_in_gemini_clis_order() {
        let user = serde_json::json!({
            "tools": {"exclude": ["mcp_gh_delete"], "allowed": ["mcp_gh_get(x)"], "core": []},
            "mcp": {"allowed": ["gh"]},
            "mcpServers": {"gh": {"command": "x", "trust": true}}
        });
        let roots = [&user];
        let s = Settings::merge(&roots);
        let mut rules = Vec::new();
        s.rules(&roots, &mut rules);
        let got: Vec<(String, f64)> = rules.iter().map(|r| (r.tool.clone(), r.priority)).collect();
        assert_eq!(
            got,
            [
                ("mcp_gh_delete".to_string(), 4.4),
                ("mcp_gh_get".to_string(), 4.3),
                ("*".to_string(), 4.25 - 0.01),
                ("mcp_gh_*".to_string(), 4.2),
                ("mcp_gh_*".to_string(), 4.1),
            ]
        );
        assert_eq!(plain_tool("ShellTool(ls)"), "run_shell_command");
        assert_eq!(plain_tool("a b(c)"), "a b(c)");
    }

    proptest::proptest! {
        /// Any text as a policy file, and any rule with any pattern asked about any arguments:
        /// an answer, never a panic.
        #[test]
        fn any_policy_file_and_any_call_get_an_answer(
            text in "\\PC{0,200}",
            tool in "[a-z_*]{0,12}",
            server in "[a-z _*.]{0,8}",
            pattern in "[a-z\"(){}\\[\\]*+?.|^$\\\\:0-9]{0,24}",
            key in "\\PC{0,6}",
            value in "\\PC{0,12}",
            number in proptest::num::f64::ANY,
        ) {
            let mut warnings = Vec::new();
            let _ = parse_file(&text, 4.0, None, "f", &mut warnings);
            let file = format!(
                "[[rule]]\nmcpName = {server:?}\ntoolName = {tool:?}\nargsPattern = {pattern:?}\ndecision = \"deny\"\npriority = 1\n"
            );
            if let Ok(rules) = parse_file(&file, 4.0, None, "f", &mut warnings) {
                let args = serde_json::json!({ key: [value, number, {"n": null}] });
                let args = args.as_object().cloned().unwrap_or_default();
                for rule in &rules {
                    let _ = globs(rule, &server);
                    if let Some(p) = &rule.pattern {
                        let _ = p.matches(&args);
                    }
                }
            }
            let _ = tool_name(&server, &tool);
        }
    }
}
