//! Tidy: enforces the crate-boundary invariants of ARCHITECTURE.md by reading Cargo.toml files
//! and sources. A failure names the file and the rule it breaks.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use switchboard_test_support::peers::repo_root;

/// Crates that must stay pure: no async runtime, no MCP SDK, no HTTP client.
const PURE: &[&str] = &["core", "providers", "search", "lint"];
/// Dependencies a pure crate may never have.
const IMPURE_DEPS: &[&str] = &["tokio", "rmcp", "reqwest", "hyper", "axum", "async-std"];
/// Which workspace crates each crate may depend on (dependencies point down).
const ALLOWED_INTERNAL: &[(&str, &[&str])] = &[
    ("core", &[]),
    ("providers", &["switchboard-core"]),
    ("search", &["switchboard-core"]),
    ("lint", &["switchboard-core", "switchboard-providers"]),
    ("mcp", &["switchboard-core"]),
    (
        "host",
        &[
            "switchboard-core",
            "switchboard-mcp",
            "switchboard-providers",
            "switchboard-search",
            "switchboard-lint",
        ],
    ),
    (
        "gateway",
        &[
            "switchboard-core",
            "switchboard-host",
            "switchboard-mcp",
            "switchboard-search",
        ],
    ),
    ("test-support", &["switchboard-core", "switchboard-gateway"]),
    // A dev tool that drives binaries over MCP; it links no workspace crate.
    ("bench", &[]),
    (
        "cli",
        &[
            "switchboard-core",
            "switchboard-mcp",
            "switchboard-providers",
            "switchboard-search",
            "switchboard-lint",
            "switchboard-host",
            "switchboard-gateway",
        ],
    ),
];

fn crates() -> BTreeMap<String, PathBuf> {
    let dir = repo_root().join("crates");
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(&dir).expect("crates/ exists") {
        let p = e.expect("readable").path();
        if p.join("Cargo.toml").is_file() {
            out.insert(p.file_name().unwrap().to_string_lossy().into_owned(), p);
        }
    }
    out
}

fn deps(manifest: &Path, section: &str) -> Vec<String> {
    let text = std::fs::read_to_string(manifest).unwrap();
    let doc: toml::Table = toml::from_str(&text).unwrap();
    doc.get(section)
        .and_then(|d| d.as_table())
        .map(|t| t.keys().cloned().collect())
        .unwrap_or_default()
}

fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            if p.file_name().is_some_and(|n| n == "target") {
                continue;
            }
            rs_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn pure_crates_have_no_io_dependencies() {
    let mut bad = Vec::new();
    for (name, dir) in crates() {
        if !PURE.contains(&name.as_str()) {
            continue;
        }
        for d in deps(&dir.join("Cargo.toml"), "dependencies") {
            if IMPURE_DEPS.contains(&d.as_str()) {
                bad.push(format!("crates/{name}/Cargo.toml depends on {d}"));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "pure crates must not do I/O:\n{}",
        bad.join("\n")
    );
}

#[test]
fn dependencies_point_down() {
    let allowed: BTreeMap<&str, &[&str]> = ALLOWED_INTERNAL.iter().copied().collect();
    let mut bad = Vec::new();
    for (name, dir) in crates() {
        let Some(ok) = allowed.get(name.as_str()) else {
            bad.push(format!("crates/{name} is not listed in tidy's ALLOWED_INTERNAL (add it, and to ARCHITECTURE.md)"));
            continue;
        };
        for d in deps(&dir.join("Cargo.toml"), "dependencies") {
            if d.starts_with("switchboard") && !ok.contains(&d.as_str()) {
                bad.push(format!(
                    "crates/{name} depends on {d}, which is not below it"
                ));
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn rmcp_only_in_mcp_and_gateway() {
    let mut bad = Vec::new();
    for (name, dir) in crates() {
        let in_manifest =
            deps(&dir.join("Cargo.toml"), "dependencies").contains(&"rmcp".to_string());
        // The bench is both an MCP client and an echo server (a dev tool, not shipped).
        let may = matches!(name.as_str(), "mcp" | "gateway" | "bench");
        if in_manifest && !may {
            bad.push(format!("crates/{name}/Cargo.toml depends on rmcp"));
        }
        let mut files = Vec::new();
        rs_files(&dir.join("src"), &mut files);
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            if !may && text.contains("rmcp::") {
                bad.push(format!("{} uses rmcp", f.display()));
            }
            // Client types belong to mcp, server types to gateway.
            if name == "gateway"
                && (text.contains("ClientHandler") || text.contains("TokioChildProcess"))
            {
                bad.push(format!(
                    "{} uses rmcp client types (they belong in crates/mcp)",
                    f.display()
                ));
            }
            if name == "mcp" && text.contains("ServerHandler") {
                bad.push(format!(
                    "{} uses rmcp server types (they belong in crates/gateway)",
                    f.display()
                ));
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn every_rust_file_opens_with_a_doc_line() {
    let mut files = Vec::new();
    rs_files(&repo_root().join("crates"), &mut files);
    let bad: Vec<String> = files
        .iter()
        .filter(|f| {
            let text = std::fs::read_to_string(f).unwrap_or_default();
            !text.trim_start().starts_with("//!")
        })
        .map(|f| f.display().to_string())
        .collect();
    assert!(
        bad.is_empty(),
        "files without a leading //! line:\n{}",
        bad.join("\n")
    );
}

#[test]
fn only_the_cli_prints_or_uses_anyhow() {
    let mut bad = Vec::new();
    for (name, dir) in crates() {
        if name == "cli" || name == "test-support" || name == "bench" {
            continue;
        }
        if deps(&dir.join("Cargo.toml"), "dependencies").contains(&"anyhow".to_string()) {
            bad.push(format!("crates/{name}/Cargo.toml depends on anyhow"));
        }
        let mut files = Vec::new();
        rs_files(&dir.join("src"), &mut files);
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            // Only code outside #[cfg(test)] modules counts; tests may print.
            // Doc examples and comments do not count either.
            let code: String = text
                .split("#[cfg(test)]")
                .next()
                .unwrap_or("")
                .lines()
                .filter(|l| !l.trim_start().starts_with("//"))
                .collect::<Vec<_>>()
                .join("\n");
            for needle in ["println!", "eprintln!", "print!(", "eprint!(", "dbg!("] {
                if code.contains(needle) {
                    bad.push(format!("{} uses {needle}", f.display()));
                }
            }
        }
    }
    assert!(
        bad.is_empty(),
        "libraries log with tracing and return errors:\n{}",
        bad.join("\n")
    );
}
