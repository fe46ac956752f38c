//! PyTorch beside the suite: `peers/pytorch/generality.py` run once for
//! all programs (importing torch takes seconds), each program's sizes on
//! a line of its standard input, one CSV line back per program.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// The peer script, relative to the repository root.
pub const SCRIPT: &str = "peers/pytorch/generality.py";

/// What the peer measured for one program.
#[derive(Clone, Debug, PartialEq)]
pub enum PeerTime {
    /// Median milliseconds, the clock (`cuda-events` or `host`) and the
    /// PyTorch expression timed.
    Timed { ms: f64, timing: String, expr: String },
    /// Not measured, and why.
    Missing(String),
}

/// Runs the peer for `jobs` (program name and sizes); every job gets an
/// answer, `Missing` with the reason where the peer could not run or gave
/// nothing for it.
pub fn run(
    python: &Path,
    root: &Path,
    jobs: &[(String, BTreeMap<String, i64>)],
    runs: usize,
) -> BTreeMap<String, PeerTime> {
    let all_missing =
        |why: String| jobs.iter().map(|(n, _)| (n.clone(), PeerTime::Missing(why.clone()))).collect();
    let input: String = jobs
        .iter()
        .map(|(n, s)| {
            let sizes: Vec<String> = s.iter().map(|(k, v)| format!("{k}={v}")).collect();
            format!("{n} {}\n", sizes.join(" "))
        })
        .collect();
    let child = Command::new(python)
        .arg(root.join(SCRIPT))
        .args(["--runs", &runs.to_string()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => return all_missing(format!("{} could not start: {e}", python.display())),
    };
    if let Some(mut stdin) = child.stdin.take() {
        // A peer that exits early (no torch) closes its input: its exit
        // status and output say why.
        let _ = stdin.write_all(input.as_bytes());
    }
    let out = match child.wait_with_output() {
        Ok(o) => o,
        Err(e) => return all_missing(format!("the PyTorch peer failed: {e}")),
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    let mut got = parse(&stdout);
    let why = if let Some(line) = stdout.lines().find_map(|l| l.strip_prefix("#error,")) {
        line.to_string()
    } else if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let last = err.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("no message");
        format!("the PyTorch peer exited with {}: {last}", out.status)
    } else {
        "the PyTorch peer printed nothing for it".into()
    };
    for (n, _) in jobs {
        got.entry(n.clone()).or_insert_with(|| PeerTime::Missing(why.clone()));
    }
    got
}

/// `NAME,median_ms,timing,expression` or `NAME,,error,message` lines.
fn parse(stdout: &str) -> BTreeMap<String, PeerTime> {
    let mut out = BTreeMap::new();
    for line in stdout.lines().filter(|l| !l.starts_with('#')) {
        let mut f = line.splitn(4, ',');
        let (Some(name), Some(ms), Some(timing), Some(rest)) = (f.next(), f.next(), f.next(), f.next())
        else {
            continue;
        };
        let t = match ms.parse::<f64>() {
            Ok(ms) if ms.is_finite() && ms > 0.0 && timing != "error" => {
                PeerTime::Timed { ms, timing: timing.to_string(), expr: rest.to_string() }
            }
            _ => PeerTime::Missing(format!("PyTorch: {rest}")),
        };
        out.insert(name.to_string(), t);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_times_and_errors_and_skips_bad_lines() {
        let got = parse("sum,0.05,cuda-events,x.sum()\nmm,,error,out of memory\nbroken\nz,-1,host,x\n");
        assert_eq!(
            got["sum"],
            PeerTime::Timed { ms: 0.05, timing: "cuda-events".into(), expr: "x.sum()".into() }
        );
        assert_eq!(got["mm"], PeerTime::Missing("PyTorch: out of memory".into()));
        assert_eq!(got["z"], PeerTime::Missing("PyTorch: x".into()));
        assert!(!got.contains_key("broken"));
    }

    #[test]
    fn a_missing_interpreter_marks_every_program() {
        let jobs = vec![("sum".to_string(), BTreeMap::from([("N".to_string(), 8)]))];
        let got = run(Path::new("/nonexistent/python3"), Path::new("."), &jobs, 3);
        assert!(matches!(&got["sum"], PeerTime::Missing(m) if m.contains("could not start")), "{got:?}");
    }
}
