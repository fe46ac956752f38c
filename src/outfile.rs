//! Files written under `--out` (results, logs, locks, charts, `best.lift`):
//! never through a symbolic link (issue 23). A link planted where one of
//! these files goes would otherwise make `lift` truncate or append to its
//! target; every open here refuses a link in the last component
//! (`O_NOFOLLOW`), a write that replaces a file renames a fresh one
//! over it (the rename replaces a link, never its target), and a folder
//! lift creates is refused when a link stands in its place.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The message of a refused link, naming the file.
fn link_error(path: &Path) -> std::io::Error {
    std::io::Error::other(format!(
        "{} is a symbolic link; lift does not write through links in its output folder (remove it or use another --out)",
        path.display()
    ))
}

/// `opts` opening `path` without following a link in its last component;
/// a link is refused with a message naming it.
fn open(opts: &mut OpenOptions, path: &Path) -> std::io::Result<File> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.custom_flags(libc::O_NOFOLLOW);
    }
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(link_error(path));
    }
    opts.open(path).map_err(|e| {
        #[cfg(unix)]
        if e.raw_os_error() == Some(libc::ELOOP) {
            return link_error(path);
        }
        e
    })
}

/// Opens `path` for appending, creating it if needed.
pub fn append(path: &Path) -> std::io::Result<File> {
    open(OpenOptions::new().create(true).append(true), path)
}

/// Opens `path` for writing without truncating it, creating it if needed
/// (lock files, cutting a torn last record).
pub fn update(path: &Path) -> std::io::Result<File> {
    open(OpenOptions::new().create(true).truncate(false).write(true), path)
}

/// Creates `path` anew, truncating a regular file of that name.
pub fn create(path: &Path) -> std::io::Result<File> {
    open(OpenOptions::new().create(true).truncate(true).write(true), path)
}

/// Refuses `path` when it is a symbolic link (before reading a file that is
/// then written).
pub fn not_a_link(path: &Path) -> std::io::Result<()> {
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(link_error(path));
    }
    Ok(())
}

/// Creates the folder `path` (and missing parents) unless `path` is a
/// symbolic link: a link planted where lift makes a folder (`--out` itself,
/// a device's or a program's subfolder) would send every file written in
/// it to the link's target. Callers create each level they own with it.
pub fn create_dir(path: &Path) -> std::io::Result<()> {
    not_a_link(path)?;
    std::fs::create_dir_all(path)
}

/// Writes `bytes` to a fresh temporary file beside `path` and renames it
/// into place: a failed write never leaves a truncated file under the real
/// name, and a link at `path` is replaced, not followed.
pub fn replace(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp{}", std::process::id()));
    let tmp = PathBuf::from(tmp);
    // A leftover (or planted) temporary is removed, never written through.
    let _ = std::fs::remove_file(&tmp);
    let r = open(OpenOptions::new().create_new(true).write(true), &tmp)
        .and_then(|mut f| f.write_all(bytes).and_then(|()| f.flush()))
        .and_then(|()| std::fs::rename(&tmp, path));
    if r.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    r
}

/// A lock already held, or one that could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error(
        "{path}: another run is writing to this folder (it holds {lock}); wait for it or use another --out"
    )]
    Held { path: PathBuf, lock: String },
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
}

/// Takes an exclusive lock on `<path>.lock` (`results.csv.lock`,
/// `explore.csv.lock`), or says who holds it. The lock lives as long as the
/// returned file; the operating system drops it when the process ends,
/// killed or not, so a killed run never blocks the next one.
pub fn lock_beside(path: &Path) -> Result<File, LockError> {
    let mut lock_path = path.as_os_str().to_owned();
    lock_path.push(".lock");
    let lock_path = PathBuf::from(lock_path);
    let io = |source| LockError::Io { path: lock_path.clone(), source };
    let f = update(&lock_path).map_err(io)?;
    match f.try_lock() {
        Ok(()) => Ok(f),
        Err(std::fs::TryLockError::WouldBlock) => Err(LockError::Held {
            path: path.into(),
            lock: lock_path.file_name().map_or(String::new(), |n| n.to_string_lossy().into_owned()),
        }),
        Err(std::fs::TryLockError::Error(e)) => Err(io(e)),
    }
}

/// The length of the complete CSV records at the start of `bytes`: each
/// ends with a newline outside quotes. What follows was torn by a killed
/// write (a record cut anywhere, also just after a newline inside a quoted
/// message).
pub fn complete_records_len(bytes: &[u8]) -> usize {
    let mut quoted = false;
    let mut end = 0;
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            // A doubled quote inside a quoted field toggles twice.
            b'"' => quoted = !quoted,
            b'\n' if !quoted => end = i + 1,
            _ => {}
        }
    }
    end
}

/// Cuts a torn last record off the CSV file `path` (see
/// [`complete_records_len`]); says what was dropped.
pub fn drop_torn_record(path: &Path) -> std::io::Result<Option<String>> {
    not_a_link(path)?;
    let bytes = std::fs::read(path)?;
    let keep = complete_records_len(&bytes);
    if keep == bytes.len() {
        return Ok(None);
    }
    let torn = String::from_utf8_lossy(&bytes[keep..]).chars().take(60).collect::<String>();
    let torn = torn.replace(['\n', '\r'], " ");
    update(path)?.set_len(keep as u64)?;
    Ok(Some(format!("{}: dropped a torn last record (an interrupted write): `{torn}`", path.display())))
}

/// The header of the CSV file `path` (its first record), if it has one.
pub fn csv_header(path: &Path) -> std::io::Result<Option<Vec<String>>> {
    let mut rd = csv::ReaderBuilder::new().has_headers(false).flexible(true).from_path(path)?;
    match rd.records().next() {
        Some(Ok(r)) => Ok(Some(r.iter().map(str::to_string).collect())),
        Some(Err(e)) => Err(std::io::Error::other(e.to_string())),
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn torn_records() {
        assert_eq!(complete_records_len(b"a,b\n1,2\n"), 8);
        assert_eq!(complete_records_len(b"a,b\n1,2"), 4);
        // Torn just after a newline inside a quoted message.
        assert_eq!(complete_records_len(b"a,b\n1,\"x\n"), 4);
        let whole = b"a,b\n1,\"x\ny\"\"z\"\n";
        assert_eq!(complete_records_len(whole), whole.len());
    }

    #[cfg(unix)]
    #[test]
    fn links_are_refused_or_replaced() {
        let dir = std::env::temp_dir().join(format!("lift-outfile-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let target = dir.join("target.txt");
        std::fs::write(&target, "keep").unwrap();
        let link = dir.join("out.csv");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        for r in [append(&link).map(drop), create(&link).map(drop), update(&link).map(drop)] {
            let e = r.expect_err("a link must be refused").to_string();
            assert!(e.contains("is a symbolic link"), "{e}");
        }
        replace(&link, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
        assert_eq!(std::fs::read_to_string(&link).unwrap(), "new");
        assert!(!std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
