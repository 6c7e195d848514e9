//! `Root`: a folder a host offers servers as a root (`roots/list`), as servers see it.

use std::path::Path;

/// One root as servers see it: a `file://` URI and a name for people.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Root {
    /// The folder's `file://` URI.
    pub uri: String,
    /// The folder's own name, if it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl Root {
    /// The root for folder `path`, which must be absolute; `None` for a relative path.
    pub fn folder(path: &Path) -> Option<Root> {
        let uri = url::Url::from_file_path(path).ok()?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .filter(|n| !n.is_empty());
        Some(Root {
            uri: uri.to_string(),
            name,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_becomes_a_file_uri_with_its_name() {
        let root = Root::folder(Path::new("/home/ana/my project")).unwrap();
        assert_eq!(root.uri, "file:///home/ana/my%20project");
        assert_eq!(root.name.as_deref(), Some("my project"));
        assert_eq!(
            Root::folder(Path::new("/")).unwrap(),
            Root {
                uri: "file:///".into(),
                name: None
            }
        );
        assert!(Root::folder(Path::new("relative/dir")).is_none());
    }
}
