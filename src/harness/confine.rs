//! What a config may name (issue 23, docs/TESTING.md "Trust boundaries"):
//! names that become parts of file names are plain names, and files are
//! inside the repository root, executables inside its `peers/` folder.

use std::path::{Component, Path, PathBuf};

/// What a config is trusted to do beyond the defaults (docs/CONFIG.md,
/// "What a config may name"). A config is code: by default it runs no
/// program outside the repository's `peers/`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Trust {
    /// `--allow-config-executables`: `halide.executable` may name any
    /// program, and `lift-halide-<name>` is looked up on the PATH.
    pub executables: bool,
}

/// Why a name or a path of a config is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfineError {
    #[error("`{0}`: expected a plain name (letters, digits, `-`, `_`, `.`; no `/`, no `..`, not empty)")]
    Name(String),
    #[error("`{0}`: expected a path relative to the repository root, found an absolute path")]
    Absolute(String),
    #[error("`{0}`: expected a path inside the repository root, found one whose `..` leads out of it")]
    Escapes(String),
    #[error("`{0}`: expected a path inside the repository root, found one that resolves outside it (a symbolic link?)")]
    Resolves(String),
    #[error("`{path}`: expected a program under the repository's {dir}/ (a config runs no other program unless lift is given --allow-config-executables)")]
    Executable { path: String, dir: String },
}

/// The longest name accepted (names become file names).
const MAX_NAME: usize = 100;

/// A name that may become part of a file name: letters, digits, `-`, `_`
/// and `.`, not empty, not `.` and without `..` (so never a path).
pub fn check_name(name: &str) -> Result<(), ConfineError> {
    let ok = !name.is_empty()
        && name.len() <= MAX_NAME
        && name != "."
        && !name.contains("..")
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok {
        Ok(())
    } else {
        Err(ConfineError::Name(name.to_string()))
    }
}

/// `rel` (as a config writes it) names something inside `root`: it is
/// relative, its `..` components never climb above `root`, and where it
/// exists its canonical path (links resolved) is inside `root`'s.
pub fn check_inside(root: &Path, rel: &str) -> Result<(), ConfineError> {
    let p = Path::new(rel);
    if p.is_absolute() || p.has_root() {
        return Err(ConfineError::Absolute(rel.to_string()));
    }
    let mut depth = 0usize;
    for c in p.components() {
        match c {
            Component::Normal(_) => depth += 1,
            Component::ParentDir if depth == 0 => return Err(ConfineError::Escapes(rel.to_string())),
            Component::ParentDir => depth -= 1,
            Component::CurDir => {}
            Component::RootDir | Component::Prefix(_) => return Err(ConfineError::Absolute(rel.to_string())),
        }
    }
    let full = root.join(p);
    if let (Ok(canon_root), Ok(canon)) = (root.canonicalize(), full.canonicalize()) {
        if !canon.starts_with(&canon_root) {
            return Err(ConfineError::Resolves(rel.to_string()));
        }
    }
    Ok(())
}

/// `rel` is inside `root/dir` (as [`check_inside`], links resolved where
/// it exists): where a config's executables must be.
pub fn check_inside_dir(root: &Path, dir: &str, rel: &str) -> Result<(), ConfineError> {
    let refused = || ConfineError::Executable { path: rel.to_string(), dir: dir.to_string() };
    check_inside(root, rel).map_err(|_| refused())?;
    let lexical: PathBuf = Path::new(rel).components().filter(|c| *c != Component::CurDir).collect();
    if !lexical.starts_with(dir) || lexical.components().any(|c| c == Component::ParentDir) {
        return Err(refused());
    }
    if resolves_under(&root.join(dir), &root.join(rel)) {
        Ok(())
    } else {
        Err(refused())
    }
}

/// Whether `path`, where it exists, has its canonical path inside `dir`'s.
pub fn resolves_under(dir: &Path, path: &Path) -> bool {
    match (dir.canonicalize(), path.canonicalize()) {
        (Ok(d), Ok(p)) => p.starts_with(&d),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        for ok in ["dot", "mm-nvidia", "icfp15-md", "jacobi2d-5pt", "a_b.c", "x"] {
            assert_eq!(check_name(ok), Ok(()), "{ok}");
        }
        for bad in ["", ".", "..", "x/../y", "../x", "a/b", "a..b", "a b", "a\\b", "é"] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn paths() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        assert_eq!(check_inside(root, "benchmarks/dot.lift"), Ok(()));
        assert_eq!(check_inside(root, "benchmarks/../benchmarks/dot.lift"), Ok(()));
        assert_eq!(check_inside(root, "benchmarks/nope.lift"), Ok(()), "missing files are the caller's");
        assert!(matches!(check_inside(root, "/etc/passwd"), Err(ConfineError::Absolute(_))));
        assert!(matches!(check_inside(root, "../x.lift"), Err(ConfineError::Escapes(_))));
        assert!(matches!(check_inside(root, "a/../../x.lift"), Err(ConfineError::Escapes(_))));
        assert_eq!(check_inside_dir(root, "peers", "peers/halide/bin/x"), Ok(()));
        assert!(check_inside_dir(root, "peers", "benchmarks/dot.lift").is_err());
        assert!(check_inside_dir(root, "peers", "peers/../benchmarks/dot.lift").is_err());
    }

    #[cfg(unix)]
    #[test]
    fn links_out_of_the_root() {
        let root = std::env::temp_dir().join(format!("lift-confine-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("peers")).unwrap();
        std::os::unix::fs::symlink("/etc/hostname", root.join("leak.lift")).unwrap();
        std::os::unix::fs::symlink("/bin/sh", root.join("peers/sh")).unwrap();
        assert!(matches!(check_inside(&root, "leak.lift"), Err(ConfineError::Resolves(_))));
        assert!(check_inside_dir(&root, "peers", "peers/sh").is_err());
        let _ = std::fs::remove_dir_all(&root);
    }
}
