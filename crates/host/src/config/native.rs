//! The native `switchboard.toml`: `[servers.NAME]` entries, `[profiles.NAME]` and `[settings]`.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::entry::{self, Context, NATIVE_KEYS, RawServer};
use super::position::{find_toml_key, find_toml_table, line_col};
use super::{Config, ConfigSource, ModelSettings, Profile, Settings};
use crate::error::HostError;
use crate::resource_tool::ReadResources;

#[derive(Deserialize)]
struct Spans {
    #[serde(default)]
    servers: BTreeMap<String, toml::Spanned<toml::Value>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProfile {
    #[serde(default)]
    servers: Option<Vec<String>>,
    #[serde(default)]
    tools: Vec<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawSettings {
    system_prompt: Option<String>,
    instructions: Option<bool>,
    prompt_cache: Option<bool>,
    auto_compact: Option<bool>,
    read_resources: Option<String>,
    date: Option<bool>,
    pin_store: Option<String>,
    prices: Option<String>,
    search_model: Option<String>,
    approve: Option<super::Approve>,
    provider: Option<String>,
    model: Option<String>,
    base_url: Option<String>,
    api_key_env: Option<String>,
    max_tokens: Option<u32>,
    temperature: Option<f64>,
    max_turns: Option<u32>,
    max_cost: Option<f64>,
    reasoning_effort: Option<String>,
    roots: Option<Vec<String>>,
}

const TOP_KEYS: &[&str] = &["servers", "profiles", "settings"];

pub fn parse(ctx: &Context<'_>, text: &str) -> Result<Config, HostError> {
    let table: toml::Table = toml::from_str(text).map_err(|e| syntax(ctx, text, &e))?;
    if super::codex::is_codex(&table) {
        return super::codex::parse(ctx, text, &table);
    }
    let spans: Spans = toml::from_str(text).map_err(|e| syntax(ctx, text, &e))?;
    let mut warnings = Vec::new();
    for key in table.keys().filter(|k| !TOP_KEYS.contains(&k.as_str())) {
        let hint = entry::suggest(key, TOP_KEYS)
            .map(|s| format!("; did you mean `{s}`?"))
            .unwrap_or_default();
        let (line, column) = find_toml_key(text, 0..text.len(), key)
            .or_else(|| text.find(&format!("[{key}")))
            .map_or((1, 1), |o| line_col(text, o));
        warnings.push(format!(
            "{}:{line}:{column}: unknown top-level key `{key}` ignored{hint}",
            ctx.path.display()
        ));
    }

    // Servers in file order (the BTreeMap is by name; order by position instead).
    let mut entries: Vec<(&String, &toml::Spanned<toml::Value>)> = spans.servers.iter().collect();
    entries.sort_by_key(|(_, v)| v.span().start);
    let mut servers = Vec::new();
    let mut disabled = Vec::new();
    for (name, spanned) in entries {
        let span = spanned.span();
        let header = find_toml_table(text, "servers", name).unwrap_or(span.start);
        // A standard table's span covers only its header; its keys run to the next header.
        let body_end = text[header..]
            .find("\n[")
            .map_or(text.len(), |i| header + i + 1);
        let range = header.min(span.start)..span.end.max(body_end);
        let at = |field: Option<&str>| {
            let offset = field
                .and_then(|f| find_toml_key(text, range.clone(), f))
                .unwrap_or(header);
            line_col(text, offset)
        };
        let fail = |field: Option<&str>, message: String| {
            let (line, column) = at(field);
            HostError::ServerEntry {
                path: ctx.path.to_path_buf(),
                line,
                column,
                server: name.clone(),
                message,
            }
        };
        let result = (|| {
            let Some(tbl) = spanned.get_ref().as_table() else {
                return Err(fail(None, "must be a table of settings".into()));
            };
            if let Some(bad) = tbl.keys().find(|k| !NATIVE_KEYS.contains(&k.as_str())) {
                let hint = entry::suggest(bad, NATIVE_KEYS)
                    .map(|s| format!("; did you mean `{s}`?"))
                    .unwrap_or_default();
                return Err(fail(Some(bad), format!("unknown key `{bad}`{hint}")));
            }
            let raw: RawServer = entry::raw_server(spanned.get_ref().clone())
                .map_err(|(key, message)| fail(key.as_deref(), message))?;
            if let Some(w) = entry::literal_oauth_secret(name, &raw, "client_secret") {
                // `[servers.NAME.oauth]` is a table of its own, after the entry's body.
                let sub = format!("[servers.{name}.");
                let mut end = range.end;
                while end < text.len() && text[end..].starts_with(&sub) {
                    end = text[end..].find("\n[").map_or(text.len(), |i| end + i + 1);
                }
                let (line, column) = find_toml_key(text, header..end, "client_secret")
                    .map_or_else(|| at(Some("oauth")), |o| line_col(text, o));
                warnings.push(format!("{}:{line}:{column}: {w}", ctx.path.display()));
            }
            if let Some(w) = entry::joined_argument(name, &raw) {
                let (line, column) = at(Some("args"));
                warnings.push(format!("{}:{line}:{column}: {w}", ctx.path.display()));
            }
            let validated = entry::validate(ctx, name, raw).map_err(|e| fail(e.field, e.message));
            let (line, column) = at(Some("bundle"));
            for note in ctx.take_notes() {
                warnings.push(format!(
                    "{}:{line}:{column}: server {name:?}: {note}",
                    ctx.path.display()
                ));
            }
            validated
        })();
        entry::record(
            name,
            result,
            "disabled in the config (disabled = true)",
            &mut servers,
            &mut disabled,
        );
    }

    let mut profiles = BTreeMap::new();
    if let Some(toml::Value::Table(ps)) = table.get("profiles") {
        for (pname, v) in ps {
            match v.clone().try_into::<RawProfile>() {
                Ok(p) => {
                    profiles.insert(
                        pname.clone(),
                        Profile {
                            servers: p.servers,
                            tools: p.tools,
                        },
                    );
                }
                Err(e) => warnings.push(format!(
                    "{}: profile {pname:?} ignored: {}",
                    ctx.path.display(),
                    e.message().trim()
                )),
            }
        }
    }
    let mut settings = Settings::default();
    let mut default_approve = None;
    if let Some(v) = table.get("settings") {
        match v.clone().try_into::<RawSettings>() {
            Ok(s) => {
                settings.system_prompt = s.system_prompt.filter(|p| !p.trim().is_empty());
                settings.instructions = s.instructions.unwrap_or(settings.instructions);
                settings.prompt_cache = s.prompt_cache.unwrap_or(settings.prompt_cache);
                settings.auto_compact = s.auto_compact.unwrap_or(settings.auto_compact);
                match s.read_resources.as_deref().map(ReadResources::parse) {
                    None => {}
                    Some(Some(when)) => settings.read_resources = when,
                    Some(None) => warnings.push(format!(
                        "{}: [settings] `read_resources` {:?} ignored: it is linked, always or never",
                        ctx.path.display(),
                        s.read_resources.unwrap_or_default()
                    )),
                }
                settings.date = s.date.unwrap_or(settings.date);
                // A relative pin store path starts from the config's folder, like `cwd`.
                settings.pin_store = s.pin_store.map(|p| ctx.base.join(p));
                settings.search_model = s.search_model.map(|p| ctx.base.join(p));
                settings.prices = s.prices.map(|p| ctx.base.join(p));
                let written = ModelSettings {
                    provider: None,
                    model: s.model,
                    base_url: s.base_url,
                    api_key_env: s.api_key_env,
                    max_tokens: s.max_tokens,
                    temperature: s.temperature,
                    max_turns: s.max_turns,
                    max_cost: s.max_cost.and_then(|usd| {
                        let parsed = (usd.is_finite() && usd >= 0.0)
                            .then(|| switchboard_core::rent::Usd::parse(&usd.to_string()))
                            .and_then(Result::ok);
                        if parsed.is_none() {
                            warnings.push(format!(
                                "{}: [settings] `max_cost` {usd} ignored: it is an amount of US dollars, at most six decimal places",
                                ctx.path.display()
                            ));
                        }
                        parsed
                    }),
                    reasoning_effort: s.reasoning_effort,
                };
                let (model, problems) = written.checked(s.provider.as_deref());
                settings.model = model;
                warnings.extend(
                    problems
                        .into_iter()
                        .map(|p| format!("{}: [settings] {p}", ctx.path.display())),
                );
                default_approve = s.approve;
                let (roots, problems) = super::folder::written(ctx, s.roots.unwrap_or_default());
                settings.roots = roots;
                warnings.extend(
                    problems
                        .into_iter()
                        .map(|p| format!("{}: [settings] roots: {p}", ctx.path.display())),
                );
            }
            Err(e) => warnings.push(format!(
                "{}: [settings] ignored: {}",
                ctx.path.display(),
                e.message().trim()
            )),
        }
    }
    let config = Config {
        source: ConfigSource::File {
            path: ctx.path.to_path_buf(),
        },
        servers,
        disabled,
        profiles,
        settings,
        warnings,
        inputs: ctx.take_inputs(),
    };
    // The file's default approval mode, for its servers that set none.
    Ok(match default_approve {
        Some(mode) => {
            let said = format!("[settings] approve = {:?}", mode.word());
            config.with_default_approve(mode, &said)
        }
        None => config,
    })
}

fn syntax(ctx: &Context<'_>, text: &str, e: &toml::de::Error) -> HostError {
    let (line, column) = e.span().map_or((1, 1), |s| line_col(text, s.start));
    HostError::ConfigSyntax {
        path: ctx.path.to_path_buf(),
        line,
        column,
        message: e.message().trim().to_string(),
    }
}
