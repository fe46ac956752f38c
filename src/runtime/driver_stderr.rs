//! The OpenCL driver's own lines on standard error during a build.
//!
//! PoCL builds with clang in-process, and clang writes its summary
//! (`1 error generated.`, `3 warnings generated.`) straight to file
//! descriptor 2, ahead of lift's own one-line build error: the user sees
//! two lines for one mistake, and a search on PoCL prints warning counts
//! between its progress bars. The build log (which lift reads and keeps)
//! already holds every diagnostic, so those summary lines carry nothing.
//!
//! [`filtered`] points descriptor 2 at an anonymous in-memory file while
//! the driver builds, then puts it back and writes on the real stderr every
//! captured line except the summaries. Lines other threads wrote meanwhile
//! (a progress bar) are thus delayed, never lost.
//!
//! A file descriptor belongs to the process, so the redirection is
//! serialised by one process-wide lock (the only one of its kind in the
//! crate): two builds on two threads must not save each other's
//! redirection as "the original".

use std::io::{Read, Seek, SeekFrom, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::sync::Mutex;

static REDIRECT: Mutex<()> = Mutex::new(());

/// Is `line` one of clang's summaries: `N error(s) generated.`,
/// `N warning(s) generated.` or `N warning(s) and M error(s) generated.`?
pub(crate) fn is_summary(line: &str) -> bool {
    let number = |w: &str| !w.is_empty() && w.chars().all(|c| c.is_ascii_digit());
    let words: Vec<&str> = line.trim_end().split(' ').collect();
    match words.as_slice() {
        [n, "error" | "errors" | "warning" | "warnings", "generated."] => number(n),
        [n, "warning" | "warnings", "and", m, "error" | "errors", "generated."] => number(n) && number(m),
        _ => false,
    }
}

/// The captured bytes without the summary lines.
pub(crate) fn without_summaries(captured: &str) -> String {
    let mut out = String::new();
    for line in captured.split_inclusive('\n') {
        if !is_summary(line) {
            out.push_str(line);
        }
    }
    out
}

/// Runs `build` with descriptor 2 captured and filtered (see the module
/// documentation). Where the capture cannot be set up, `build` runs with
/// stderr untouched: the extra line is cosmetic, the build is not.
pub(crate) fn filtered<R>(build: impl FnOnce() -> R) -> R {
    let _guard = REDIRECT.lock().unwrap_or_else(|p| p.into_inner());
    let _ = std::io::stderr().flush();
    let Some((saved, mut capture)) = redirect() else { return build() };
    let result = build();
    let _ = std::io::stderr().flush();
    // SAFETY: `saved` is a descriptor this function duplicated from 2 and
    // still owns; dup2 onto 2 restores the process's stderr.
    unsafe { libc::dup2(std::os::fd::AsRawFd::as_raw_fd(&saved), 2) };
    drop(saved);
    let mut text = Vec::new();
    if capture.seek(SeekFrom::Start(0)).is_ok() && capture.read_to_end(&mut text).is_ok() {
        let kept = without_summaries(&String::from_utf8_lossy(&text));
        let _ = std::io::stderr().write_all(kept.as_bytes());
    }
    result
}

/// Saves descriptor 2 and points it at a fresh anonymous file; returns the
/// saved descriptor and the file, or None (nothing changed) on any failure.
#[cfg(target_os = "linux")]
fn redirect() -> Option<(OwnedFd, std::fs::File)> {
    // SAFETY: plain descriptor calls; each result is checked before use and
    // wrapped in an owner that closes it.
    unsafe {
        let mem = libc::memfd_create(c"lift-driver-stderr".as_ptr(), libc::MFD_CLOEXEC);
        if mem < 0 {
            return None;
        }
        let capture = std::fs::File::from_raw_fd(mem);
        let saved = libc::fcntl(2, libc::F_DUPFD_CLOEXEC, 3);
        if saved < 0 {
            return None;
        }
        let saved = OwnedFd::from_raw_fd(saved);
        if libc::dup2(mem, 2) < 0 {
            return None;
        }
        Some((saved, capture))
    }
}

#[cfg(not(target_os = "linux"))]
fn redirect() -> Option<(OwnedFd, std::fs::File)> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clang_summaries_are_dropped_and_nothing_else() {
        for s in [
            "1 error generated.\n",
            "12 errors generated.\n",
            "3 warnings generated.\n",
            "1 warning generated.",
            "2 warnings and 1 error generated.\n",
            "1 warning and 4 errors generated.\n",
        ] {
            assert!(is_summary(s), "{s:?}");
        }
        for s in [
            "error generated.\n",
            "x errors generated.\n",
            "1 error generated. really\n",
            "building a.cl failed: a.cl:1:5: error: use of undeclared identifier\n",
            "[00:00:03] searching\n",
        ] {
            assert!(!is_summary(s), "{s:?}");
        }
        assert_eq!(
            without_summaries("progress 1\n1 error generated.\nprogress 2\n3 warnings generated.\n"),
            "progress 1\nprogress 2\n"
        );
    }
}
