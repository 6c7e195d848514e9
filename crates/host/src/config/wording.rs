//! How another host's file wrote the settings switchboard reads under its own names (Cline's
//! `disabledTools` for `tools.deny`, `autoApprove` for a tool's `approve = "never"`), so that
//! `servers`, `inspect` and the reasons a call is refused or asked about name what the user
//! wrote rather than a switchboard key the file does not have.

use serde_json::Value;

use super::ServerConfig;
use super::entry;

/// The host's names for one entry's settings; `None` and empty where switchboard's own apply.
#[derive(Debug, Default)]
pub struct Wording {
    /// The list of tools let through (`tools.allow`).
    pub allow: Option<String>,
    /// The list of tools kept out (`tools.deny`).
    pub deny: Option<String>,
    /// The server's `approve`.
    pub approve: Option<String>,
    /// Each tool's own `approve`, by tool.
    pub tools: Vec<(String, String)>,
}

impl Wording {
    /// The words of an `mcpServers` entry, as `mcp_json` translates it: `disabledTools`
    /// (Windsurf, Kiro, Amazon Q, Roo Code, Cline), Copilot's `tools`, `autoApprove` (Cline,
    /// Kiro, Amazon Q) and `alwaysAllow` (Roo Code), each tool's or `"*"` for the server, and
    /// Gemini CLI's `trust` (`gemini`: in Gemini CLI's own settings).
    pub fn of_mcp_servers_entry(value: &Value, gemini: bool) -> Self {
        let mut w = Wording::default();
        let copilot = value
            .get("tools")
            .and_then(Value::as_array)
            .is_some_and(|l| l.iter().all(Value::is_string));
        if copilot {
            w.allow = Some("tools".into());
            w.deny = Some("tools".into());
        }
        if !entry::strings(value.get("disabledTools")).is_empty() {
            w.deny = Some("disabledTools".into());
        }
        for key in ["autoApprove", "alwaysAllow"] {
            for tool in entry::strings(value.get(key)) {
                if tool == "*" {
                    w.approve = Some(format!("{key} \"*\""));
                } else {
                    w.tools.push((tool, key.to_string()));
                }
            }
        }
        if gemini && value.get("trust") == Some(&Value::Bool(true)) {
            w.approve = Some("\"trust\": true".into());
        }
        w
    }

    /// The words of a Crush entry: its `disabled_tools`.
    pub fn of_crush_entry(value: &Value) -> Self {
        Wording {
            deny: value
                .get("disabled_tools")
                .filter(|v| !v.is_null())
                .map(|_| "disabled_tools".to_string()),
            ..Wording::default()
        }
    }

    /// `server`, when there is one (an entry that is not switched off), with these words for
    /// its settings.
    pub fn applied(self, server: Option<ServerConfig>) -> Option<ServerConfig> {
        server.map(|mut s| {
            self.apply(&mut s);
            s
        })
    }

    /// Give `server` these words for its settings.
    pub fn apply(self, server: &mut ServerConfig) {
        if self.allow.is_some() || self.deny.is_some() {
            let (allow, deny) = server.filter.list_names();
            let names = (
                self.allow.unwrap_or_else(|| allow.to_string()),
                self.deny.unwrap_or_else(|| deny.to_string()),
            );
            server.filter = std::mem::take(&mut server.filter).lists_named(names.0, names.1);
        }
        if self.approve.is_some() {
            server.approve_written = self.approve;
        }
        for (tool, key) in self.tools {
            if let Some(o) = server.tool_overrides.get_mut(&tool) {
                o.approve_written = Some(key);
            }
        }
    }
}
