//! A folder as a user writes one (`[settings] roots`, a server's `roots`, `--root`, chat's `/roots add`): `~` is the
//! home folder, a relative path starts from a base, and the answer is the folder's real path or
//! why there is none.

use std::path::{Path, PathBuf};

use super::entry::Context;

/// The real path of the folder `written`: `~` and `~/...` from `home`, a relative path from
/// `base`, symbolic links resolved. An error says why it is no folder (missing, a file, no home
/// folder known), naming the path.
pub fn real_folder(written: &Path, base: &Path, home: Option<&Path>) -> Result<PathBuf, String> {
    let path = match written.strip_prefix("~") {
        Ok(rest) => home
            .ok_or_else(|| format!("{}: no home folder is known", written.display()))?
            .join(rest),
        Err(_) => base.join(written),
    };
    let real = std::fs::canonicalize(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    if !real.is_dir() {
        return Err(format!("{} is not a folder", path.display()));
    }
    Ok(real)
}

/// Folders as a config file lists them (`[settings] roots`, a server's `roots`): `${VAR}`
/// expanded, `~/` from the home folder, relative ones from the config's folder, each resolved
/// to its real path, duplicates dropped; one that is not a folder is left out with why (a root
/// a server cannot open is worse than none: the filesystem server would drop the folders its
/// arguments name for it).
pub(crate) fn written(ctx: &Context<'_>, written: Vec<String>) -> (Vec<PathBuf>, Vec<String>) {
    let mut roots = Vec::new();
    let mut problems = Vec::new();
    for text in written {
        let expanded = match super::expand::expand(&text, ctx.env) {
            Ok(e) => e,
            Err(e) => {
                problems.push(format!("{text:?} left out: {e}"));
                continue;
            }
        };
        let home = ctx.home();
        match real_folder(expanded.as_ref(), ctx.base, home.as_deref()) {
            Ok(real) => {
                if !roots.contains(&real) {
                    roots.push(real);
                }
            }
            Err(e) => problems.push(format!("{text:?} left out: {e}")),
        }
    }
    (roots, problems)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn home_relative_and_absolute_folders_resolve_and_others_say_why() {
        let dir = tempfile::tempdir().unwrap();
        let d = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(d.join("home/code")).unwrap();
        std::fs::create_dir_all(d.join("base/sub")).unwrap();
        std::fs::write(d.join("base/file.txt"), "x").unwrap();
        let (base, home) = (d.join("base"), d.join("home"));
        let real = |w: &str| real_folder(Path::new(w), &base, Some(&home));
        assert_eq!(real("~/code").unwrap(), d.join("home/code"));
        assert_eq!(real("~").unwrap(), home);
        assert_eq!(real("sub/..").unwrap(), base);
        assert_eq!(
            real(d.join("base/sub").to_str().unwrap()).unwrap(),
            d.join("base/sub")
        );
        assert!(
            real("file.txt")
                .unwrap_err()
                .ends_with("file.txt is not a folder")
        );
        assert!(real("missing").unwrap_err().contains("missing: "));
        // `~user` is a folder named so, not another user's home.
        assert!(real("~other").unwrap_err().contains("~other: "));
        let no_home = real_folder(Path::new("~/code"), &base, None).unwrap_err();
        assert!(no_home.contains("no home folder is known"), "{no_home}");
    }
}
