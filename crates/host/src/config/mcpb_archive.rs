//! A `.mcpb` (or `.dxt`) file unpacked where its server can run: a folder of the user's cache
//! named after the file's SHA-256, so a bundle is unpacked once and a changed bundle gets a new
//! folder (the digest is kept, so an unchanged file is not read again to find it). Unpacking
//! goes to a temporary folder renamed into place when complete, so a run cut short leaves
//! nothing that looks unpacked. Entries whose path would leave the folder, links,
//! and more than [`MAX_BYTES`] in all are refused.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// The most an archive may unpack to, in bytes (a bundle carries its `node_modules` or Python
/// packages, so hundreds of megabytes are real; this stops a zip bomb).
pub const MAX_BYTES: u64 = 4 << 30;

/// The file a complete unpacking holds.
const DONE: &str = ".switchboard-unpacked";

/// Where bundles are unpacked: the user cache folder's `bundles`.
pub fn cache_root() -> Option<PathBuf> {
    directories::ProjectDirs::from("", "", "switchboard").map(|d| d.cache_dir().join("bundles"))
}

/// The folder `archive` is unpacked in, under `root`, unpacking it first when it is not yet.
/// The error says what is wrong with the archive.
pub fn unpack(archive: &Path, root: &Path) -> Result<PathBuf, String> {
    let (digest, keep) = digest(archive, root)?;
    let done = |target: PathBuf| {
        if let Some(keep) = keep {
            keep.write(&digest);
        }
        Ok(target)
    };
    let stem: String = archive
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    let target = root.join(format!("{stem}-{}", &digest[..16]));
    if target.join(DONE).is_file() {
        return done(target);
    }
    std::fs::create_dir_all(root).map_err(|e| format!("cannot create {}: {e}", root.display()))?;
    let staging = root.join(format!(
        ".{stem}-{}.{}.tmp",
        &digest[..16],
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&staging);
    let result = extract(archive, &staging).and_then(|()| {
        if !staging.join("manifest.json").is_file() {
            return Err("it has no manifest.json at its top level, so it is not a bundle".into());
        }
        std::fs::write(staging.join(DONE), digest.as_bytes())
            .map_err(|e| format!("cannot write {}: {e}", staging.display()))
    });
    if let Err(e) = result {
        let _ = std::fs::remove_dir_all(&staging);
        return Err(e);
    }
    // Another process may have unpacked the same bundle meanwhile; its folder serves as well.
    if let Err(e) = std::fs::rename(&staging, &target) {
        let _ = std::fs::remove_dir_all(&staging);
        if !target.join(DONE).is_file() {
            return Err(format!("cannot move it into {}: {e}", target.display()));
        }
    }
    done(target)
}

/// The SHA-256 of `archive`, in hex. Hashing a bundle of hundreds of megabytes takes a good
/// part of a second, so the digest of a bundle that unpacked is kept beside the unpacked
/// folders with the file's size, modification time and (on Unix) inode and change time, and read
/// back while those are unchanged. The second value is what to keep, when the digest was
/// computed.
fn digest(archive: &Path, root: &Path) -> Result<(String, Option<Kept>), String> {
    let meta = std::fs::metadata(archive).map_err(|e| format!("cannot read it: {e}"))?;
    let stamp = stamp_of(&meta);
    let path = std::fs::canonicalize(archive).ok().map(|full| {
        let key = Sha256::digest(full.to_string_lossy().as_bytes());
        root.join(".digests").join(hex::encode(&key[..16]))
    });
    if let (Some(path), Some(stamp)) = (&path, &stamp)
        && let Ok(text) = std::fs::read_to_string(path)
        && let Some((was, digest)) = text.trim_end().rsplit_once(' ')
        && was == stamp
        && digest.len() == 64
        && digest.bytes().all(|b| b.is_ascii_hexdigit())
    {
        return Ok((digest.to_string(), None));
    }
    let mut file = std::fs::File::open(archive).map_err(|e| format!("cannot read it: {e}"))?;
    let mut hasher = Sha256::new();
    std::io::copy(&mut file, &mut hasher).map_err(|e| format!("cannot read it: {e}"))?;
    let digest = hex::encode(hasher.finalize());
    // Kept only when the file did not change while it was read.
    let unchanged = std::fs::metadata(archive).ok().as_ref().and_then(stamp_of) == stamp;
    let keep = match (path, stamp) {
        (Some(path), Some(stamp)) if unchanged => Some(Kept { path, stamp }),
        _ => None,
    };
    Ok((digest, keep))
}

/// Where a digest is kept, and the stamp it holds for.
struct Kept {
    path: PathBuf,
    stamp: String,
}

impl Kept {
    /// Write it; a failure costs the next run the hashing again, nothing else.
    fn write(self, digest: &str) {
        let Some(folder) = self.path.parent() else {
            return;
        };
        if std::fs::create_dir_all(folder).is_err() {
            return;
        }
        let staging = self
            .path
            .with_extension(format!("{}.tmp", std::process::id()));
        if std::fs::write(&staging, format!("{} {digest}\n", self.stamp)).is_ok() {
            let _ = std::fs::rename(&staging, &self.path);
        }
        let _ = std::fs::remove_file(&staging);
    }
}

/// What says a file is unchanged: its size, modification time and, on Unix, inode and
/// status-change time (which moves whenever the contents are written, even if the
/// modification time is set back).
fn stamp_of(meta: &std::fs::Metadata) -> Option<String> {
    let modified = meta
        .modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?
        .as_nanos();
    #[cfg(unix)]
    let more = {
        use std::os::unix::fs::MetadataExt;
        format!("-{}-{}.{}", meta.ino(), meta.ctime(), meta.ctime_nsec())
    };
    #[cfg(not(unix))]
    let more = String::new();
    Some(format!("{}-{modified}{more}", meta.len()))
}

fn extract(archive: &Path, into: &Path) -> Result<(), String> {
    let file = std::fs::File::open(archive).map_err(|e| format!("cannot read it: {e}"))?;
    let mut zip = zip::ZipArchive::new(std::io::BufReader::new(file))
        .map_err(|e| format!("it is not a zip archive, as a bundle is: {e}"))?;
    std::fs::create_dir_all(into).map_err(|e| format!("cannot create {}: {e}", into.display()))?;
    let mut left = MAX_BYTES;
    for i in 0..zip.len() {
        let mut entry = zip
            .by_index(i)
            .map_err(|e| format!("entry {i} cannot be read: {e}"))?;
        let Some(relative) = entry.enclosed_name() else {
            return Err(format!(
                "entry {:?} has a path that leaves the bundle's folder",
                entry.name()
            ));
        };
        if entry.is_symlink() {
            return Err(format!(
                "entry {:?} is a symbolic link, which a bundle may not hold",
                entry.name()
            ));
        }
        let path = into.join(&relative);
        if entry.is_dir() {
            std::fs::create_dir_all(&path)
                .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
            continue;
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
        }
        let mut out = std::fs::File::create(&path)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        let copied = std::io::copy(&mut (&mut entry).take(left + 1), &mut out)
            .map_err(|e| format!("entry {:?} cannot be unpacked: {e}", relative.display()))?;
        if copied > left {
            return Err(format!(
                "it unpacks to more than {} GiB, more than any bundle needs",
                MAX_BYTES >> 30
            ));
        }
        left -= copied;
        out.flush()
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        #[cfg(unix)]
        if let Some(mode) = entry.unix_mode() {
            use std::os::unix::fs::PermissionsExt;
            // Keep the execute bits a binary server needs; never set-id bits.
            let mode = (mode & 0o777) | 0o600;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode))
                .map_err(|e| format!("cannot set the mode of {}: {e}", path.display()))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use zip::write::SimpleFileOptions;

    fn archive(dir: &Path, files: &[(&str, &[u8], u32)]) -> PathBuf {
        let path = dir.join("tool.mcpb");
        let mut zip = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
        for (name, bytes, mode) in files {
            zip.start_file(
                *name,
                SimpleFileOptions::default()
                    .compression_method(zip::CompressionMethod::Deflated)
                    .unix_permissions(*mode),
            )
            .unwrap();
            zip.write_all(bytes).unwrap();
        }
        zip.finish().unwrap();
        path
    }

    #[test]
    fn a_bundle_is_unpacked_once_with_its_modes_and_again_when_it_changes() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("cache");
        let file = archive(
            dir.path(),
            &[
                ("manifest.json", b"{}", 0o644),
                ("server/run", b"#!/bin/sh\n", 0o755),
            ],
        );
        let first = unpack(&file, &root).unwrap();
        assert_eq!(
            std::fs::read(first.join("server/run")).unwrap(),
            b"#!/bin/sh\n"
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(first.join("server/run"))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o755);
        }
        // Unpacked once: a file added to the folder is still there on the next read.
        std::fs::write(first.join("marker"), "x").unwrap();
        assert_eq!(unpack(&file, &root).unwrap(), first);
        assert!(first.join("marker").is_file());
        // The digest is kept, and read back while the file is unchanged: a kept digest made
        // up here names the folder looked for.
        let kept: Vec<PathBuf> = std::fs::read_dir(root.join(".digests"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert_eq!(kept.len(), 1, "{kept:?}");
        let text = std::fs::read_to_string(&kept[0]).unwrap();
        let (stamp, digest) = text.trim_end().rsplit_once(' ').unwrap();
        assert!(first.to_string_lossy().ends_with(&digest[..16]), "{text}");
        std::fs::write(&kept[0], format!("{stamp} {}\n", "ab".repeat(32))).unwrap();
        let made_up = unpack(&file, &root).unwrap();
        assert!(made_up.to_string_lossy().ends_with(&"ab".repeat(8)));
        // A changed bundle (of the same size, too) gets its own folder.
        let same_size = archive(
            dir.path(),
            &[
                ("manifest.json", b"{}", 0o644),
                ("server/run", b"#!/bin/sX\n", 0o755),
            ],
        );
        assert_eq!(same_size, file);
        let changed = unpack(&file, &root).unwrap();
        assert_ne!(changed, first);
        assert_ne!(changed, made_up);
        let file = archive(dir.path(), &[("manifest.json", b"{\"a\":1}", 0o644)]);
        let second = unpack(&file, &root).unwrap();
        assert_ne!(second, first);
        // No staging folder is left behind.
        let names: Vec<String> = std::fs::read_dir(&root)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(names.iter().all(|n| !n.ends_with(".tmp")), "{names:?}");
    }

    #[test]
    fn unsafe_paths_links_and_archives_without_a_manifest_are_refused_and_leave_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("cache");
        let file = archive(
            dir.path(),
            &[("manifest.json", b"{}", 0o644), ("../evil", b"x", 0o644)],
        );
        let err = unpack(&file, &root).unwrap_err();
        assert!(err.contains("leaves the bundle's folder"), "{err}");
        assert!(!dir.path().join("evil").exists());

        let file = archive(dir.path(), &[("server/index.js", b"", 0o644)]);
        let err = unpack(&file, &root).unwrap_err();
        assert!(err.contains("no manifest.json"), "{err}");

        let path = dir.path().join("link.mcpb");
        let mut zip = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
        zip.add_symlink("manifest.json", "/etc/passwd", SimpleFileOptions::default())
            .unwrap();
        zip.finish().unwrap();
        assert!(unpack(&path, &root).unwrap_err().contains("symbolic link"));

        std::fs::write(dir.path().join("text.mcpb"), "not a zip").unwrap();
        let err = unpack(&dir.path().join("text.mcpb"), &root).unwrap_err();
        assert!(err.contains("not a zip archive"), "{err}");
        assert_eq!(std::fs::read_dir(&root).unwrap().count(), 0);
    }
}
