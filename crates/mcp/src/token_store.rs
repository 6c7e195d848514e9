//! `TokenStore`: where one server's OAuth credentials live between runs. A file per server URL
//! under switchboard's data directory (`oauth/<hash>.json`, mode 0600 in a 0700 directory),
//! or memory only. It is rmcp's `CredentialStore`, so the authorization manager reads, refreshes
//! and saves through it. A file is read again when it changes, so a running session takes up
//! a login (or logout) done meanwhile by another switchboard.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rmcp::transport::auth::{AuthError, CredentialStore, StoredCredentials};
use serde::{Deserialize, Serialize};
use switchboard_core::ContentHash;
use tokio::sync::Mutex;

use crate::options::TokenStorage;

/// The file's content: the server URL it belongs to (so a person can tell files apart) and the
/// credentials rmcp keeps.
#[derive(Serialize, Deserialize)]
struct TokenFile {
    url: String,
    credentials: StoredCredentials,
}

/// One server's credentials, in a file or in memory.
#[derive(Clone)]
pub(crate) struct TokenStore {
    url: String,
    path: Option<PathBuf>,
    memory: Arc<Mutex<Cached>>,
}

/// The credentials last read or saved, and which version of the file they came from.
#[derive(Default)]
struct Cached {
    credentials: Option<StoredCredentials>,
    /// The file's stamp then (`None`: there was no file).
    stamp: Option<Stamp>,
    /// Whether `credentials` reflect the file (or, memory-only, are all there is).
    fresh: bool,
}

/// What tells one version of the token file from another: a save renames a new file into
/// place (another inode on Unix), and any writer changes the time or the length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stamp {
    modified: Option<std::time::SystemTime>,
    len: u64,
    inode: u64,
}

async fn stamp(path: &Path) -> Option<Stamp> {
    let meta = tokio::fs::metadata(path).await.ok()?;
    #[cfg(unix)]
    let inode = std::os::unix::fs::MetadataExt::ino(&meta);
    #[cfg(not(unix))]
    let inode = 0;
    Some(Stamp {
        modified: meta.modified().ok(),
        len: meta.len(),
        inode,
    })
}

impl TokenStore {
    /// The store for `url` under `storage`. `UserData` without a resolvable home directory
    /// falls back to memory (with a warning): tokens then last for this process only.
    pub(crate) fn new(url: &str, storage: &TokenStorage) -> Self {
        let dir = match storage {
            TokenStorage::Memory => None,
            TokenStorage::Dir(dir) => Some(dir.clone()),
            TokenStorage::UserData => {
                let dir = default_dir();
                if dir.is_none() {
                    tracing::warn!(
                        "no home directory: OAuth tokens are kept in memory for this run only"
                    );
                }
                dir
            }
        };
        Self {
            url: url.to_string(),
            path: dir.map(|d| d.join(file_name(url))),
            memory: Arc::new(Mutex::new(Cached::default())),
        }
    }

    /// The file this store writes, if it is not memory-only.
    pub(crate) fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    async fn read_file(&self, path: &Path) -> Result<Option<StoredCredentials>, AuthError> {
        let text = match tokio::fs::read_to_string(path).await {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(store_error(path, &e)),
        };
        match serde_json::from_str::<TokenFile>(&text) {
            Ok(file) if file.url == self.url => Ok(Some(file.credentials)),
            Ok(_) => Ok(None),
            Err(e) => {
                // A damaged file must not stop the server from working: treat it as absent
                // (the next login overwrites it) and say where it is.
                tracing::warn!(path = %path.display(), error = %e, "ignoring an unreadable OAuth token file");
                Ok(None)
            }
        }
    }
}

/// `<data dir>/oauth`, e.g. `~/.local/share/switchboard/oauth` on Linux.
pub(crate) fn default_dir() -> Option<PathBuf> {
    directories::ProjectDirs::from("", "", "switchboard").map(|d| d.data_dir().join("oauth"))
}

/// A stable file name for a server URL (the URL itself may hold anything).
pub(crate) fn file_name(url: &str) -> String {
    format!("{}.json", ContentHash::of_bytes(url.as_bytes()).short(24))
}

fn store_error(path: &Path, e: &std::io::Error) -> AuthError {
    AuthError::CredentialStoreError(format!("{}: {e}", path.display()))
}

/// Write `bytes` to `path` readable by the owner only: a 0600 temporary file renamed into
/// place, in a 0700 directory, so no other user ever sees a token.
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    #[cfg(unix)]
    use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
    if let Some(dir) = path.parent() {
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        builder.mode(0o700);
        builder.create(dir)?;
    }
    let tmp = path.with_extension("json.tmp");
    // A leftover temporary file may have wider permissions: start from a new one, so the mode
    // below applies.
    match std::fs::remove_file(&tmp) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    options.mode(0o600);
    let mut file = options.open(&tmp)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    std::fs::rename(&tmp, path)?;
    // An existing directory keeps whatever mode it had: tighten it too.
    #[cfg(unix)]
    if let Some(dir) = path.parent() {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

#[async_trait::async_trait]
impl CredentialStore for TokenStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        let mut cache = self.memory.lock().await;
        let Some(path) = &self.path else {
            return Ok(cache.credentials.clone());
        };
        // One stat per request: the file is read again only when another process (an `auth
        // login` or `logout` in another terminal) has replaced or removed it.
        let now = stamp(path).await;
        if cache.fresh && cache.stamp == now {
            return Ok(cache.credentials.clone());
        }
        let credentials = match now {
            Some(_) => self.read_file(path).await?,
            None => None,
        };
        *cache = Cached {
            credentials: credentials.clone(),
            stamp: now,
            fresh: true,
        };
        Ok(credentials)
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let mut cache = self.memory.lock().await;
        let mut written = None;
        if let Some(path) = &self.path {
            let file = TokenFile {
                url: self.url.clone(),
                credentials: credentials.clone(),
            };
            let bytes = serde_json::to_vec_pretty(&file)
                .map_err(|e| AuthError::CredentialStoreError(e.to_string()))?;
            let target = path.clone();
            tokio::task::spawn_blocking(move || {
                write_private(&target, &bytes).map_err(|e| store_error(&target, &e))
            })
            .await
            .map_err(|e| AuthError::CredentialStoreError(e.to_string()))??;
            written = stamp(path).await;
        }
        *cache = Cached {
            credentials: Some(credentials),
            stamp: written,
            fresh: true,
        };
        Ok(())
    }

    async fn clear(&self) -> Result<(), AuthError> {
        let mut cache = self.memory.lock().await;
        *cache = Cached {
            fresh: true,
            ..Cached::default()
        };
        if let Some(path) = &self.path {
            match tokio::fs::remove_file(path).await {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(store_error(path, &e)),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn tokens_are_saved_owner_only_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let storage = TokenStorage::Dir(dir.path().join("oauth"));
        let store = TokenStore::new("http://127.0.0.1:1/mcp", &storage);
        assert!(store.load().await.unwrap().is_none());
        let creds = StoredCredentials::new("client-1".into(), None, vec!["a".into()], Some(7));
        store.save(creds).await.unwrap();
        let path = store.path().unwrap().to_path_buf();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
            let dir_mode = std::fs::metadata(path.parent().unwrap())
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(dir_mode & 0o777, 0o700);
        }
        // A fresh store (a new run) reads the file.
        let again = TokenStore::new("http://127.0.0.1:1/mcp", &storage);
        let loaded = again.load().await.unwrap().unwrap();
        assert_eq!(loaded.client_id, "client-1");
        assert_eq!(loaded.granted_scopes, vec!["a".to_string()]);
        // Another server's store does not see it; clearing removes the file.
        let other = TokenStore::new("http://127.0.0.1:2/mcp", &storage);
        assert!(other.load().await.unwrap().is_none());
        again.clear().await.unwrap();
        assert!(!path.exists());
    }

    #[tokio::test]
    async fn a_store_sees_what_another_process_wrote_or_removed_meanwhile() {
        let dir = tempfile::tempdir().unwrap();
        let storage = TokenStorage::Dir(dir.path().join("oauth"));
        let running = TokenStore::new("http://127.0.0.1:1/mcp", &storage);
        let creds = |id: &str| StoredCredentials::new(id.into(), None, vec![], Some(1));
        running.save(creds("first")).await.unwrap();
        assert_eq!(running.load().await.unwrap().unwrap().client_id, "first");
        // Another switchboard (`auth login` in another terminal) logs in again...
        let other = TokenStore::new("http://127.0.0.1:1/mcp", &storage);
        other.save(creds("second")).await.unwrap();
        assert_eq!(running.load().await.unwrap().unwrap().client_id, "second");
        // ...and again, with the same length of file.
        other.save(creds("third!")).await.unwrap();
        assert_eq!(running.load().await.unwrap().unwrap().client_id, "third!");
        // ...or logs out.
        other.clear().await.unwrap();
        assert!(running.load().await.unwrap().is_none());
        // A memory-only store keeps what it was given.
        let memory = TokenStore::new("http://127.0.0.1:1/mcp", &TokenStorage::Memory);
        memory.save(creds("kept")).await.unwrap();
        assert_eq!(memory.load().await.unwrap().unwrap().client_id, "kept");
        memory.clear().await.unwrap();
        assert!(memory.load().await.unwrap().is_none());
    }

    #[tokio::test]
    async fn a_damaged_file_reads_as_absent() {
        let dir = tempfile::tempdir().unwrap();
        let storage = TokenStorage::Dir(dir.path().to_path_buf());
        let store = TokenStore::new("http://x/mcp", &storage);
        std::fs::write(store.path().unwrap(), "{not json").unwrap();
        assert!(store.load().await.unwrap().is_none());
    }
}
