//! The environment stamped on every result row: git commit and date.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{SystemTime, UNIX_EPOCH};

/// Git in `root` with what a checkout's config could make it run turned
/// off: the file-system monitor (`core.fsmonitor` names a command; empty
/// is off for every git version) and hooks. Only plumbing commands are run
/// (`rev-parse`, `config`, `diff-index`), never `status`.
fn git(root: &Path, args: &[&str]) -> Option<std::process::Output> {
    Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["-c", "core.fsmonitor=", "-c", "core.hooksPath=/dev/null"])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .ok()
}

/// Short commit hash of the repository at `root`, with `+dirty` when the
/// tree has changes; `unknown` without git (the GPU machine may lack it).
/// Comparing the work tree may run a configured clean filter (a command)
/// on a file whose timestamps look racy: where any `filter.*` is
/// configured only the index is compared with `HEAD`.
pub fn git_commit(root: &Path) -> String {
    let text = |args: &[&str]| {
        git(root, args)
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    match text(&["rev-parse", "--short", "HEAD"]) {
        Some(h) if !h.is_empty() => {
            let filters = text(&["config", "--get-regexp", r"^filter\."]).is_some_and(|s| !s.is_empty());
            let args: &[&str] = if filters {
                &["diff-index", "--cached", "--quiet", "HEAD", "--"]
            } else {
                // Files only touched are not changes (as `status` refreshes).
                let _ = git(root, &["update-index", "-q", "--refresh"]);
                &["diff-index", "--quiet", "HEAD", "--"]
            };
            // `--quiet`: exit status 1 when something differs.
            let dirty = git(root, args).is_some_and(|o| o.status.code() == Some(1));
            if dirty {
                format!("{h}+dirty")
            } else {
                h
            }
        }
        _ => "unknown".to_string(),
    }
}

/// The current UTC time as `YYYY-MM-DDTHH:MM:SSZ`.
pub fn now_utc() -> String {
    let secs = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()) as i64;
    format_utc(secs)
}

/// Formats seconds since the epoch (days to civil date after H. Hinnant).
pub fn format_utc(secs: i64) -> String {
    let days = secs.div_euclid(86400);
    let rem = secs.rem_euclid(86400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem % 3600 / 60, rem % 60)
}

#[cfg(test)]
mod tests {
    /// A checkout whose config names a file-system monitor and a hook: the
    /// commit is read without running either (issue 23).
    #[cfg(unix)]
    #[test]
    fn git_commit_runs_no_command_of_the_checkout() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("lift-git-fsmonitor-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let git = |args: &[&str]| {
            std::process::Command::new("git")
                .arg("-C")
                .arg(&dir)
                .args(args)
                .output()
                .map(|o| o.status.success())
        };
        if !matches!(git(&["init", "-q"]), Ok(true)) {
            println!("skipped: no git");
            return;
        }
        std::fs::write(dir.join("a.txt"), "a").unwrap();
        let id = ["-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"];
        assert!(git(&["add", "a.txt"]).unwrap());
        assert!(git(&[&id[..], &["commit", "-q", "-m", "a"]].concat()).unwrap());
        let marker = dir.join("ran");
        let hook = dir.join("monitor.sh");
        std::fs::write(&hook, format!("#!/bin/sh\ntouch {}\n", marker.display())).unwrap();
        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert!(git(&["config", "core.fsmonitor", &hook.display().to_string()]).unwrap());
        let h = super::git_commit(&dir);
        assert!(h.len() >= 7 && h.chars().take(7).all(|c| c.is_ascii_hexdigit()), "{h}");
        assert!(!h.ends_with("+dirty"), "{h}");
        std::fs::write(dir.join("a.txt"), "b").unwrap();
        assert!(super::git_commit(&dir).ends_with("+dirty"));
        assert!(!marker.exists(), "the checkout's core.fsmonitor command ran");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn dates() {
        assert_eq!(super::format_utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(super::format_utc(951_782_400 + 3661), "2000-02-29T01:01:01Z");
        assert_eq!(super::format_utc(1_700_000_000), "2023-11-14T22:13:20Z");
    }
}
