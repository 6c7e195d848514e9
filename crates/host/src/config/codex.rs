//! Codex CLI's `config.toml`, read as-is: its `[mcp_servers.NAME]` tables become server entries
//! and the rest of the file (models, sandbox, Codex's own profiles) is Codex's business.
//!
//! Codex's approval modes for MCP tools (`default_tools_approval_mode`, and a tool's own
//! `[mcp_servers.NAME.tools.TOOL] approval_mode`) become switchboard's `approve`, as Codex
//! applies them: `approve` runs unasked (`never`), `prompt` asks every call (`always`), `writes`
//! asks unless the tool is marked read-only (`writes`), and `auto`, Codex's default, asks for
//! every tool its server does not mark safe (`unsafe`). With `approval_policy = "never"` and
//! `sandbox_mode = "danger-full-access"` Codex asks about no MCP call, whatever the modes say,
//! and neither does switchboard (`never`); with `approval_policy = "never"` alone it refuses
//! the calls it would ask about, and so does switchboard.

use toml::{Table, Value};

use switchboard_core::TransportSpec;

use super::entry::{self, Context, RawServer};
use super::position::{find_toml_key, find_toml_table, line_col};
use super::wording::Wording;
use super::{Config, DisabledServer, ServerConfig, codex_layers};
use crate::error::HostError;

/// Keys of a Codex server entry that switchboard reads. Anything else in an entry is Codex's
/// own setting (`required`, `env_vars`, ...) and is named in one warning.
const READ: &[&str] = &[
    "command",
    "args",
    "env",
    "cwd",
    "url",
    "http_headers",
    "env_http_headers",
    "bearer_token_env_var",
    "startup_timeout_sec",
    "startup_timeout_ms",
    "tool_timeout_sec",
    "enabled",
    "enabled_tools",
    "disabled_tools",
    "default_tools_approval_mode",
    "tools",
];

/// Whether a parsed TOML file is a Codex config rather than a `switchboard.toml`.
pub fn is_codex(table: &Table) -> bool {
    table.contains_key("mcp_servers") && !table.contains_key("servers")
}

pub fn parse(ctx: &Context<'_>, text: &str, table: &Table) -> Result<Config, HostError> {
    let mut warnings = Vec::new();
    // The user's file brings Codex's other layers with it.
    let user = codex_layers::is_user_file(ctx);
    let own = codex_layers::Layer {
        path: ctx.path.to_path_buf(),
        text: text.to_string(),
    };
    let layered;
    let (table, layers) = if user {
        let (merged, layers) = codex_layers::merged(ctx, table, text, &mut warnings);
        layered = merged;
        (&layered, layers)
    } else {
        (table, Vec::new())
    };
    let Some(Value::Table(entries)) = table.get("mcp_servers") else {
        return Err(HostError::ConfigShape {
            path: ctx.path.to_path_buf(),
            message: "`mcp_servers` must be a table of [mcp_servers.NAME] entries".into(),
        });
    };
    let header = |name: &str| find_toml_table(text, "mcp_servers", name);
    // In file order (the table is sorted by name).
    let mut ordered: Vec<(&String, &Value)> = entries.iter().collect();
    ordered.sort_by_key(|(name, _)| header(name).unwrap_or(usize::MAX));
    let mut servers = Vec::new();
    let mut disabled = Vec::new();
    // The administrator's requirements hold over the approval policy and sandbox.
    let requirements = if user {
        codex_layers::requirements(ctx, &mut warnings)
    } else {
        None
    };
    let required = |key: &str| requirements.as_ref().and_then(|(_, r)| r.get(key));
    let policy = codex_layers::required(
        table.get("approval_policy").and_then(Value::as_str),
        "on-request",
        required("allowed_approval_policies"),
        None,
        "approval_policy",
        &mut warnings,
    );
    let sandbox = codex_layers::required(
        table.get("sandbox_mode").and_then(Value::as_str),
        "read-only",
        required("allowed_sandbox_modes"),
        Some("read-only"),
        "sandbox_mode",
        &mut warnings,
    );
    // Codex's "full auto": no approval asked for any MCP call. `never` alone refuses the calls
    // that would need approval.
    let never = policy == "never";
    let unasked = never && sandbox == "danger-full-access";
    for (name, value) in ordered {
        let sections = if layers.is_empty() {
            sections(std::slice::from_ref(&own), name)
        } else {
            sections(&layers, name)
        };
        // Problems are pointed at in the file that wrote the entry: the setting in the highest
        // layer that sets it, else the entry's header in the highest layer that has one.
        let (home, start) = sections
            .first()
            .map_or((&own, 0), |(l, range)| (*l, range.start));
        let fail = |field: Option<&str>, message: String| {
            let (layer, offset) = field
                .and_then(|f| {
                    sections.iter().find_map(|(l, range)| {
                        find_toml_key(&l.text, range.clone(), f).map(|o| (*l, o))
                    })
                })
                .unwrap_or((home, start));
            let (line, column) = line_col(&layer.text, offset);
            HostError::ServerEntry {
                path: layer.path.clone(),
                line,
                column,
                server: name.to_string(),
                message,
            }
        };
        let result = (|| {
            let Some(codex) = value.as_table() else {
                return Err(fail(None, "must be a table of settings".into()));
            };
            let unread: Vec<&str> = codex
                .keys()
                .map(String::as_str)
                .filter(|k| !READ.contains(k))
                .collect();
            if !unread.is_empty() {
                let (line, column) = line_col(&home.text, start);
                warnings.push(format!(
                    "{}:{line}:{column}: server {name:?}: Codex settings not used by switchboard: {}",
                    home.path.display(),
                    unread.join(", ")
                ));
            }
            let native = to_native(codex, unasked).map_err(|(field, m)| fail(Some(field), m))?;
            let raw: RawServer = Value::Table(native)
                .try_into()
                .map_err(|e: toml::de::Error| fail(None, e.message().trim().to_string()))?;
            let refused = (never && !unasked).then(|| {
                "Codex's approval_policy = \"never\" refuses the calls it would ask about"
                    .to_string()
            });
            let wording = wording(codex, unasked);
            entry::validate(ctx, name, raw)
                .map(|s| {
                    s.map(|mut s| {
                        s.asks_refused = refused;
                        wording.apply(&mut s);
                        s
                    })
                })
                .map_err(|e| fail(e.field, e.message))
        })();
        entry::record(
            name,
            result,
            "disabled in the config (enabled = false)",
            &mut servers,
            &mut disabled,
        );
    }
    if let Some((file, list)) = requirements
        .as_ref()
        .and_then(|(f, r)| Some((f, r.get("mcp_servers")?.as_table()?)))
    {
        let (kept, refused): (Vec<ServerConfig>, Vec<ServerConfig>) =
            servers.into_iter().partition(|s| {
                let identity = match &s.spec.transport {
                    TransportSpec::Stdio { command, args, .. } => codex_layers::Identity::Command(
                        s.written_command.as_deref().unwrap_or(command),
                        args,
                    ),
                    TransportSpec::Http { url, .. } => codex_layers::Identity::Url(url),
                };
                codex_layers::allows(list, s.name(), &identity)
            });
        servers = kept;
        disabled.extend(refused.into_iter().map(|s| DisabledServer {
            name: s.name().to_string(),
            reason: format!(
                "not allowed by Codex's requirements ({}: mcp_servers)",
                file.display()
            ),
            origin: s.origin.clone(),
        }));
    }
    Ok(ctx.servers_only(servers, disabled, warnings))
}

/// The `[mcp_servers.NAME]` sections of one server in the layers that write one, highest layer
/// first: the layer and the section's span of its text.
fn sections<'a>(
    layers: &'a [codex_layers::Layer],
    name: &str,
) -> Vec<(&'a codex_layers::Layer, std::ops::Range<usize>)> {
    layers
        .iter()
        .rev()
        .filter_map(|layer| {
            let text = &layer.text;
            let start = find_toml_table(text, "mcp_servers", name)?;
            let end = text[start..]
                .find("\n[")
                .map_or(text.len(), |i| start + i + 1);
            Some((layer, start..end))
        })
        .collect()
}

/// How a Codex entry wrote its tool lists and approval modes, for messages.
fn wording(codex: &Table, unasked: bool) -> Wording {
    let key = |k: &str| codex.contains_key(k).then(|| k.to_string());
    let mode = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_string);
    let approve = if unasked {
        "approval_policy = \"never\" with sandbox_mode = \"danger-full-access\"".into()
    } else {
        match mode(codex.get("default_tools_approval_mode")) {
            Some(m) => format!("default_tools_approval_mode = {m:?}"),
            None => "Codex's default approval mode (\"auto\")".into(),
        }
    };
    let tools = match codex.get("tools") {
        Some(Value::Table(each)) if !unasked => each
            .iter()
            .filter_map(|(tool, t)| {
                let m = mode(t.get("approval_mode"))?;
                Some((tool.clone(), format!("tools.{tool}.approval_mode = {m:?}")))
            })
            .collect(),
        _ => Vec::new(),
    };
    Wording {
        allow: key("enabled_tools"),
        deny: key("disabled_tools"),
        approve: Some(approve),
        tools,
    }
}

/// A Codex entry as the native entry it means, or the Codex key that is wrong and why;
/// `unasked` when Codex's approval policy asks about no call.
fn to_native(codex: &Table, unasked: bool) -> Result<Table, (&'static str, String)> {
    let mut out = Table::new();
    for key in ["command", "args", "env", "cwd", "url"] {
        if let Some(v) = codex.get(key) {
            out.insert(key.into(), v.clone());
        }
    }
    let mut headers = Table::new();
    if let Some(v) = codex.get("http_headers") {
        let Value::Table(t) = v else {
            return Err(("http_headers", "http_headers must be a table".into()));
        };
        headers.extend(t.clone());
    }
    if let Some(v) = codex.get("env_http_headers") {
        let Value::Table(t) = v else {
            return Err((
                "env_http_headers",
                "env_http_headers must be a table".into(),
            ));
        };
        for (header, var) in t {
            let Value::String(var) = var else {
                return Err((
                    "env_http_headers",
                    format!("env_http_headers.{header} must name an environment variable"),
                ));
            };
            headers.insert(header.clone(), Value::String(format!("${{{var}}}")));
        }
    }
    if let Some(v) = codex.get("bearer_token_env_var") {
        let Value::String(var) = v else {
            return Err((
                "bearer_token_env_var",
                "bearer_token_env_var must name an environment variable".into(),
            ));
        };
        headers.insert(
            "Authorization".into(),
            Value::String(format!("Bearer ${{{var}}}")),
        );
    }
    if !headers.is_empty() {
        out.insert("headers".into(), Value::Table(headers));
    }
    let seconds =
        |key: &'static str, scale: f64| -> Result<Option<Value>, (&'static str, String)> {
            match codex.get(key) {
                None => Ok(None),
                Some(Value::Integer(n)) => Ok(Some(Value::Float(*n as f64 * scale))),
                Some(Value::Float(f)) => Ok(Some(Value::Float(f * scale))),
                Some(_) => Err((key, format!("{key} must be a number"))),
            }
        };
    if let Some(v) = seconds("startup_timeout_sec", 1.0)?.or(seconds("startup_timeout_ms", 0.001)?)
    {
        out.insert("startup_timeout".into(), v);
    }
    if let Some(v) = seconds("tool_timeout_sec", 1.0)? {
        out.insert("call_timeout".into(), v);
    }
    match codex.get("enabled") {
        None | Some(Value::Boolean(true)) => {}
        Some(Value::Boolean(false)) => {
            out.insert("disabled".into(), Value::Boolean(true));
        }
        Some(_) => return Err(("enabled", "enabled must be true or false".into())),
    }
    let mut tools = Table::new();
    for (key, to) in [("enabled_tools", "allow"), ("disabled_tools", "deny")] {
        if let Some(v) = codex.get(key) {
            tools.insert(to.into(), v.clone());
        }
    }
    if !tools.is_empty() {
        out.insert("tools".into(), Value::Table(tools));
    }
    // Codex's default mode is `auto`.
    let approve = approval(codex.get("default_tools_approval_mode"))
        .map_err(|m| ("default_tools_approval_mode", m))?
        .unwrap_or("unsafe");
    out.insert(
        "approve".into(),
        Value::String(if unasked { "never" } else { approve }.into()),
    );
    let mut own = Table::new();
    match codex.get("tools") {
        None => {}
        Some(Value::Table(each)) => {
            for (tool, settings) in each {
                let Some(settings) = settings.as_table() else {
                    return Err(("tools", format!("tools.{tool} must be a table of settings")));
                };
                if let Some(approve) = approval(settings.get("approval_mode"))
                    .map_err(|m| ("tools", format!("tools.{tool}.approval_mode: {m}")))?
                    .filter(|_| !unasked)
                {
                    let mut t = Table::new();
                    t.insert("approve".into(), Value::String(approve.into()));
                    own.insert(tool.clone(), Value::Table(t));
                }
            }
        }
        Some(_) => {
            return Err((
                "tools",
                "tools must be a table of [tools.NAME] tables".into(),
            ));
        }
    }
    if !own.is_empty() {
        out.insert("tool".into(), Value::Table(own));
    }
    Ok(out)
}

/// Codex's approval mode as switchboard's `approve` (`None` for `auto`, Codex's default, and
/// for no setting).
fn approval(mode: Option<&Value>) -> Result<Option<&'static str>, String> {
    match mode.map(|v| v.as_str()) {
        None => Ok(None),
        Some(Some("auto")) => Ok(Some("unsafe")),
        Some(Some("approve")) => Ok(Some("never")),
        Some(Some("prompt")) => Ok(Some("always")),
        Some(Some("writes")) => Ok(Some("writes")),
        Some(_) => Err(format!(
            "{} is not one of \"auto\", \"prompt\", \"writes\", \"approve\"",
            mode.map(ToString::to_string).unwrap_or_default()
        )),
    }
}
