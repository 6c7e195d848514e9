//! Codex CLI's config as Codex gathers it when its user file (`$CODEX_HOME/config.toml`, else
//! `~/.codex/config.toml`) is the config: the system file (`/etc/codex/config.toml`), the user's,
//! each trusted project's `.codex/config.toml` from the project's root down to the working
//! folder (the closest winning), then the administrator's `managed_config.toml`, merged as Codex
//! merges them (tables key by key, everything else replaced), and the administrator's
//! `requirements.toml` allowlist of MCP servers (a server it does not allow is disabled, saying
//! so).
//!
//! A project layer counts only when the user's (or system's, or managed) `[projects."PATH"]`
//! says `trust_level = "trusted"` for its folder, the project's root or the git repository's
//! root, the path written exactly as the folder's canonical path or as given; the project's
//! root is the nearest folder from the working one up that holds a `.git`.

use std::path::{Path, PathBuf};

use toml::{Table, Value};

use super::entry::Context;
use super::layers::same_file;

/// Points at another folder than Codex's system one, to try an administrator's files
/// (`config.toml`, `managed_config.toml`, `requirements.toml`) before deploying them.
pub const SYSTEM_DIR_VAR: &str = "SWITCHBOARD_CODEX_SYSTEM_DIR";

/// Codex's system folder on this platform, or the one [`SYSTEM_DIR_VAR`] names.
fn system_dir(ctx: &Context<'_>) -> PathBuf {
    if let Some(dir) = (ctx.env)(SYSTEM_DIR_VAR).filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    PathBuf::from(if cfg!(windows) {
        r"C:\ProgramData\OpenAI\Codex"
    } else {
        "/etc/codex"
    })
}

/// Codex's home folder: `CODEX_HOME`, else `~/.codex`.
pub fn codex_home(ctx: &Context<'_>) -> Option<PathBuf> {
    (ctx.env)("CODEX_HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .or_else(|| ctx.home().map(|h| h.join(".codex")))
}

/// Whether the file read is the user's Codex config, which Codex reads with its other layers.
pub fn is_user_file(ctx: &Context<'_>) -> bool {
    codex_home(ctx).is_some_and(|home| same_file(ctx.path, &home.join("config.toml")))
}

/// One config file of Codex's layers as read: where it is and its text, so that what is wrong
/// in a server entry can be pointed at in the file that wrote it.
pub struct Layer {
    pub path: PathBuf,
    pub text: String,
}

/// The config Codex would use: the layers around the user's file (`user`, as read from `text`)
/// merged, with a warning for each layer that cannot be read; and every layer merged, the user's
/// included, lowest first.
pub fn merged(
    ctx: &Context<'_>,
    user: &Table,
    text: &str,
    warnings: &mut Vec<String>,
) -> (Table, Vec<Layer>) {
    let system = system_dir(ctx);
    let mut layers = Vec::new();
    let read = |path: &Path, what: &str, warnings: &mut Vec<String>| -> Option<(Table, Layer)> {
        ctx.input(path);
        let text = std::fs::read_to_string(path).ok()?;
        match toml::from_str::<Table>(&text) {
            Ok(t) => Some((
                t,
                Layer {
                    path: path.to_path_buf(),
                    text,
                },
            )),
            Err(e) => {
                warnings.push(format!(
                    "{}: {what} cannot be read ({}); Codex's other config files are read",
                    path.display(),
                    e.message().trim()
                ));
                None
            }
        }
    };
    let mut base = Table::new();
    if let Some((t, layer)) = read(
        &system.join("config.toml"),
        "Codex's system config",
        warnings,
    ) {
        merge(&mut base, t);
        layers.push(layer);
    }
    merge(&mut base, user.clone());
    layers.push(Layer {
        path: ctx.path.to_path_buf(),
        text: text.to_string(),
    });
    let managed = read(
        &system.join("managed_config.toml"),
        "Codex's managed config",
        warnings,
    );
    // Trust is decided by the layers other than the projects'.
    let mut trust_source = base.clone();
    if let Some((m, _)) = &managed {
        merge(&mut trust_source, m.clone());
    }
    let projects = trust_source
        .get("projects")
        .and_then(Value::as_table)
        .cloned()
        .unwrap_or_default();
    // The project's root, by the markers the layers other than the projects' name.
    let markers = match trust_source.get("project_root_markers") {
        None => vec![".git".to_string()],
        Some(Value::Array(list)) if list.iter().all(Value::is_str) => list
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        Some(_) => {
            warnings.push(format!(
                "{}: project_root_markers must be a list of names; \".git\" is used, and Codex would stop at this error",
                ctx.path.display()
            ));
            vec![".git".to_string()]
        }
    };
    if let Some(cwd) = &ctx.cwd {
        let home = codex_home(ctx);
        let root = project_root(cwd, &markers);
        let repo = repository_root(cwd);
        for dir in folders(&root, cwd) {
            let codex = dir.join(".codex");
            if !codex.is_dir() || home.as_ref().is_some_and(|h| same_file(&codex, h)) {
                continue;
            }
            let file = codex.join("config.toml");
            ctx.input(&file);
            if !file.is_file() {
                continue;
            }
            if !trusted(&projects, &dir, &root, repo.as_deref()) {
                warnings.push(format!(
                    "{}: Codex reads this project's config only once the project is trusted (trust_level = \"trusted\" under [projects] in {})",
                    file.display(),
                    ctx.path.display()
                ));
                continue;
            }
            if let Some((mut t, layer)) = read(&file, "Codex's project config", warnings) {
                // Keys a project may not set, as Codex strips them.
                for key in [
                    "profile",
                    "profiles",
                    "model_provider",
                    "model_providers",
                    "notify",
                ] {
                    t.remove(key);
                }
                merge(&mut base, t);
                layers.push(layer);
            }
        }
    }
    if let Some((m, layer)) = managed {
        merge(&mut base, m);
        layers.push(layer);
    }
    (base, layers)
}

/// Codex's merge: a table into a table key by key, anything else replacing.
fn merge(base: &mut Table, over: Table) {
    for (key, value) in over {
        match (base.get_mut(&key), value) {
            (Some(Value::Table(b)), Value::Table(o)) => merge(b, o),
            (_, value) => {
                base.insert(key, value);
            }
        }
    }
}

/// The project's root: the nearest folder from `cwd` up holding one of `markers` (a `.git`
/// counts when it is a file or a folder with a `HEAD`), else `cwd` (also with no markers).
fn project_root(cwd: &Path, markers: &[String]) -> PathBuf {
    cwd.ancestors()
        .find(|d| {
            markers.iter().any(|m| {
                let path = d.join(m);
                if m == ".git" {
                    is_git_marker(&path)
                } else {
                    path.exists()
                }
            })
        })
        .unwrap_or(cwd)
        .to_path_buf()
}

/// A `.git` that marks a checkout: a file (a linked worktree's pointer) or a folder with a
/// `HEAD`.
fn is_git_marker(git: &Path) -> bool {
    git.is_file() || (git.is_dir() && git.join("HEAD").exists())
}

/// The git repository's root that Codex trusts by, for `cwd`: the nearest checkout's folder,
/// or for a linked worktree the main checkout's, once the worktree's `.git` file, its git
/// folder under the main repository's `worktrees`, and the main checkout's `.git` all point at
/// one another (as Codex's `resolve_root_git_project_for_trust` checks, so a stray `.git`
/// file cannot borrow another project's trust). `None` outside a repository or when the links
/// do not hold.
fn repository_root(cwd: &Path) -> Option<PathBuf> {
    let checkout = cwd.ancestors().find(|d| is_git_marker(&d.join(".git")))?;
    let dot_git = checkout.join(".git");
    if dot_git.is_dir() {
        return Some(checkout.to_path_buf());
    }
    const MAX: u64 = 64 * 1024;
    let small = |p: &Path| -> Option<String> {
        let meta = std::fs::symlink_metadata(p).ok()?;
        if !meta.is_file() || meta.len() > MAX {
            return None;
        }
        std::fs::read_to_string(p).ok()
    };
    let pointer = |file: &Path| -> Option<PathBuf> {
        let text = small(file)?;
        let target = text.trim().strip_prefix("gitdir:")?.trim();
        (!target.is_empty()).then(|| file.parent().unwrap_or(Path::new("")).join(target))
    };
    let git_dir = pointer(&dot_git)?;
    if !std::fs::symlink_metadata(&git_dir).ok()?.is_dir() {
        return None;
    }
    let canonical = git_dir.canonicalize().ok()?;
    let worktrees = canonical.parent()?;
    if worktrees.file_name()? != "worktrees" {
        return None;
    }
    let common = worktrees.parent()?;
    let registered = small(&canonical.join("gitdir"))?;
    let registered = canonical.join(registered.trim());
    if registered.file_name()? != ".git" {
        return None;
    }
    let commondir = small(&canonical.join("commondir"))?;
    let linked_common = canonical.join(commondir.trim()).canonicalize().ok()?;
    if registered.parent()?.canonicalize().ok()? != checkout.canonicalize().ok()?
        || linked_common != common
    {
        return None;
    }
    // The main checkout, by the path as written, must own the common folder.
    let main = git_dir.parent()?.parent()?.parent()?.to_path_buf();
    let main_git = main.join(".git");
    let main_git_dir = if main_git.is_dir() {
        main_git
    } else {
        pointer(&main_git)?
    };
    (main_git_dir.canonicalize().ok()? == common).then_some(main)
}

/// The folders from `root` down to `cwd`, both included.
fn folders(root: &Path, cwd: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = cwd
        .ancestors()
        .take_while(|d| d.starts_with(root))
        .map(Path::to_path_buf)
        .collect();
    out.reverse();
    out
}

/// Whether Codex trusts `dir`'s project layer: the first `[projects]` entry for the folder,
/// the project's root or the git repository's root (`repo`: a linked worktree's main
/// checkout), by its canonical path or as given, says `trusted`.
fn trusted(projects: &Table, dir: &Path, root: &Path, repo: Option<&Path>) -> bool {
    let level = |p: &Path| {
        let canonical = p.canonicalize().ok();
        [canonical.as_deref(), Some(p)]
            .into_iter()
            .flatten()
            .find_map(|k| projects.get(k.to_string_lossy().as_ref()))
            .and_then(|e| e.get("trust_level"))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    level(dir)
        .or_else(|| level(root))
        .or_else(|| repo.and_then(level))
        .as_deref()
        == Some("trusted")
}

/// The administrator's requirements (`requirements.toml`), when there are some.
pub fn requirements(ctx: &Context<'_>, warnings: &mut Vec<String>) -> Option<(PathBuf, Table)> {
    let file = system_dir(ctx).join("requirements.toml");
    ctx.input(&file);
    let text = std::fs::read_to_string(&file).ok()?;
    match toml::from_str::<Table>(&text) {
        Ok(t) => Some((file, t)),
        Err(e) => {
            warnings.push(format!(
                "{}: Codex's requirements cannot be read ({}); Codex would not start",
                file.display(),
                e.message().trim()
            ));
            None
        }
    }
}

/// The value of `key` (`approval_policy`, `sandbox_mode`) Codex uses under the requirements'
/// `allowed` list (`allowed_approval_policies`, `allowed_sandbox_modes`): the configured one
/// (else Codex's `default`) when allowed, else `fallback` (the list's first policy; `read-only`
/// for the sandbox), with a warning when the config set a disallowed one.
pub fn required<'a>(
    configured: Option<&'a str>,
    default: &'a str,
    allowed: Option<&'a Value>,
    fallback: Option<&'a str>,
    key: &str,
    warnings: &mut Vec<String>,
) -> &'a str {
    let value = configured.unwrap_or(default);
    let Some(allowed) = allowed.and_then(Value::as_array) else {
        return value;
    };
    if allowed.iter().any(|a| a.as_str() == Some(value)) {
        return value;
    }
    let fallback = fallback
        .or_else(|| allowed.first().and_then(Value::as_str))
        .unwrap_or(default);
    if configured.is_some() {
        warnings.push(format!(
            "Codex's {key} = {value:?} is not allowed by its requirements; {fallback:?} holds, as in Codex"
        ));
    }
    fallback
}

/// What a server is, for the allowlist: its command and arguments, or its URL.
pub enum Identity<'a> {
    /// A stdio server.
    Command(&'a str, &'a [String]),
    /// An HTTP server.
    Url(&'a str),
}

/// Whether the allowlist lets server `name` with `identity` run: its entry's `identity` names
/// the same command (or URL) exactly, or by matchers (`executable` and each argument `exact`,
/// `prefix` or a whole-value `regex`; a URL `exact`, `prefix` or `regex`).
pub fn allows(list: &Table, name: &str, identity: &Identity<'_>) -> bool {
    let Some(wanted) = list
        .get(name)
        .and_then(|e| e.get("identity"))
        .and_then(Value::as_table)
    else {
        return false;
    };
    match identity {
        Identity::Command(command, args) => match wanted.get("command") {
            Some(Value::String(c)) => c == command,
            Some(Value::Table(m)) => {
                m.get("executable").and_then(Value::as_str) == Some(command)
                    && m.get("args").and_then(Value::as_array).is_some_and(|want| {
                        want.len() == args.len()
                            && want.iter().zip(args.iter()).all(|(w, a)| matcher(w, a))
                    })
            }
            _ => false,
        },
        Identity::Url(url) => match wanted.get("url") {
            Some(Value::String(u)) => u == url,
            Some(m @ Value::Table(_)) => matcher(m, url),
            _ => false,
        },
    }
}

/// One of Codex's value matchers: `{match = "exact" | "prefix", value}` or `{match = "regex",
/// expression}` (the whole value).
fn matcher(m: &Value, value: &str) -> bool {
    let text = |k: &str| m.get(k).and_then(Value::as_str);
    match text("match") {
        Some("exact") => text("value") == Some(value),
        Some("prefix") => text("value").is_some_and(|p| value.starts_with(p)),
        Some("regex") => text("expression")
            .and_then(|e| regex::Regex::new(&format!(r"\A(?:{e})\z")).ok())
            .is_some_and(|r| r.is_match(value)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> Table {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn layers_merge_as_codex_merges_them() {
        let mut base =
            table("[mcp_servers.a]\ncommand = \"x\"\nargs = [\"1\", \"2\"]\nenv = { A = \"1\" }\n");
        merge(
            &mut base,
            table(
                "[mcp_servers.a]\nenabled = false\nargs = [\"3\"]\nenv = { B = \"2\" }\n[mcp_servers.b]\nurl = \"u\"\n",
            ),
        );
        let a = &base["mcp_servers"]["a"];
        assert_eq!(a["command"].as_str(), Some("x"));
        assert_eq!(a["enabled"].as_bool(), Some(false));
        assert_eq!(a["args"].as_array().unwrap().len(), 1);
        assert_eq!(a["env"].as_table().unwrap().len(), 2);
        assert!(base["mcp_servers"].get("b").is_some());
    }

    #[test]
    fn requirements_hold_over_the_approval_policy_and_sandbox() {
        let req = table(
            "allowed_approval_policies = [\"on-request\"]\nallowed_sandbox_modes = [\"read-only\", \"workspace-write\"]\nforced = [\"never\"]\n",
        );
        let mut w = Vec::new();
        let policy = |c, w: &mut Vec<String>| {
            required(
                c,
                "on-request",
                req.get("allowed_approval_policies"),
                None,
                "approval_policy",
                w,
            )
        };
        assert_eq!(policy(Some("never"), &mut w), "on-request");
        assert_eq!(w.len(), 1);
        assert_eq!(policy(None, &mut w), "on-request");
        let sandbox = required(
            Some("danger-full-access"),
            "read-only",
            req.get("allowed_sandbox_modes"),
            Some("read-only"),
            "sandbox_mode",
            &mut w,
        );
        assert_eq!(sandbox, "read-only");
        // A requirement of `never` holds even when the config sets nothing.
        assert_eq!(
            required(
                None,
                "on-request",
                req.get("forced"),
                None,
                "approval_policy",
                &mut w
            ),
            "never"
        );
        assert_eq!(
            required(Some("never"), "on-request", None, None, "k", &mut w),
            "never"
        );
    }

    #[test]
    fn the_allowlist_matches_as_codex_matches() {
        let list = table(
            r#"
[docs.identity]
command = "docs-mcp"
[proxy.identity]
command = { executable = "co", args = [{ match = "exact", value = "mcp" }, { match = "prefix", value = "--s" }, { match = "regex", expression = "[a-z]+" }] }
[remote.identity]
url = { match = "prefix", value = "https://mcp.example.com/" }
"#,
        );
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(allows(
            &list,
            "docs",
            &Identity::Command("docs-mcp", &args(&["-v"]))
        ));
        assert!(!allows(&list, "docs", &Identity::Command("other", &[])));
        assert!(!allows(&list, "docs", &Identity::Url("docs-mcp")));
        assert!(!allows(&list, "nope", &Identity::Command("docs-mcp", &[])));
        let ok = args(&["mcp", "--serve", "abc"]);
        assert!(allows(&list, "proxy", &Identity::Command("co", &ok)));
        assert!(!allows(
            &list,
            "proxy",
            &Identity::Command("co", &args(&["mcp", "--serve", "ab1"]))
        ));
        assert!(!allows(
            &list,
            "proxy",
            &Identity::Command("co", &args(&["mcp", "--serve"]))
        ));
        assert!(allows(
            &list,
            "remote",
            &Identity::Url("https://mcp.example.com/x")
        ));
        assert!(!allows(
            &list,
            "remote",
            &Identity::Url("https://evil.example/")
        ));
    }
}
