//! The failure cases of the harness: a broken config, a missing kernel file,
//! a reference that computes a wrong answer, and an unknown device. Each
//! gives a clear message and the other benchmarks' rows are still written.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn lift(root: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_lift"));
    c.current_dir(root);
    c
}

fn has_device() -> bool {
    lift(&repo()).arg("devices").output().map(|o| o.status.success()).unwrap_or(false)
}

/// A scratch repository root with the scal benchmark and three bad configs.
fn make_root(name: &str) -> PathBuf {
    let root = std::env::temp_dir().join(format!("lift-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    for d in ["configs", "references/scal", "references/wrong", "benchmarks/derivations"] {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    for f in [
        "configs/scal.yaml",
        "references/scal/scal.cl",
        "benchmarks/scal.lift",
        "benchmarks/derivations/scal.txt",
    ] {
        std::fs::copy(repo().join(f), root.join(f)).unwrap();
    }
    let scal = std::fs::read_to_string(repo().join("configs/scal.yaml")).unwrap();
    // Broken: an unknown key.
    std::fs::write(
        root.join("configs/broken.yaml"),
        scal.replacen("name: scal", "name: broken\nbogus_key: 1", 1),
    )
    .unwrap();
    // Missing kernel file.
    std::fs::write(
        root.join("configs/missing.yaml"),
        scal.replacen("name: scal", "name: missing", 1)
            .replace("references/scal/scal.cl", "references/nope/nope.cl"),
    )
    .unwrap();
    // A reference that computes alpha * x + 1.
    std::fs::write(
        root.join("references/wrong/scal.cl"),
        "kernel void scal(const global float* x, global float* out, float alpha, int n) {\n\
         int i = get_global_id(0); if (i < n) out[i] = alpha * x[i] + 1.0f; }\n",
    )
    .unwrap();
    std::fs::write(
        root.join("configs/wrong.yaml"),
        scal.replacen("name: scal", "name: wrong", 1)
            .replace("references/scal/scal.cl", "references/wrong/scal.cl"),
    )
    .unwrap();
    root
}

#[test]
fn bad_configs_and_wrong_reference_keep_other_results() {
    if !has_device() {
        println!("skipped: no OpenCL device");
        return;
    }
    let root = make_root("errors");
    let run = |extra: &[&str]| {
        lift(&root)
            .args([
                "all",
                "--size",
                "tiny",
                "--runs",
                "2",
                "--no-roofline",
                "--variants",
                "reference,all",
                "--out",
                "reports",
            ])
            .args(extra)
            .output()
            .unwrap()
    };
    let o = run(&[]);
    let stderr = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(o.status.code(), Some(1), "something failed: exit 1\n{stderr}");
    assert!(stderr.contains("configs/broken.yaml") && stderr.contains("bogus_key"), "{stderr}");
    assert!(
        stderr.contains("configs/missing.yaml")
            && stderr.contains("reference.sources[0]")
            && stderr.contains("references/nope/nope.cl"),
        "{stderr}"
    );
    let dir = std::fs::read_dir(root.join("reports")).unwrap().next().unwrap().unwrap().path();
    let csv = dir.join("results.csv");
    let rows: Vec<csv::StringRecord> =
        csv::Reader::from_path(&csv).unwrap().records().map(|r| r.unwrap()).collect();
    let status = |b: &str, v: &str| {
        rows.iter().find(|r| &r[0] == b && &r[2] == v).map(|r| (r[3].to_string(), r[25].to_string()))
    };
    assert_eq!(status("scal", "reference").unwrap().0, "ok");
    let (st, msg) = status("wrong", "reference").unwrap();
    assert_eq!(st, "FAILED");
    assert!(msg.contains("expected"), "the failure names an element: {msg}");
    assert!(
        status("wrong", "all").is_some(),
        "the Lift row of a benchmark with a failed reference is still written"
    );
    assert_eq!(rows.len(), 4);

    // Resuming runs nothing again and loses nothing.
    let o2 = run(&["--resume"]);
    assert_eq!(o2.status.code(), Some(1));
    let again = csv::Reader::from_path(&csv).unwrap().records().count();
    assert_eq!(again, 4, "--resume appends no duplicates");
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn unknown_device_is_a_clear_error() {
    if !has_device() {
        println!("skipped: no OpenCL device");
        return;
    }
    let o = lift(&repo())
        .args(["all", "--device", "no-such-device-xyz", "--out"])
        .arg(std::env::temp_dir())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&o.stderr);
    let first = stderr.lines().next().unwrap_or("");
    assert!(first.starts_with("error: no OpenCL device matches `no-such-device-xyz`"), "{stderr}");
    assert!(stderr.lines().count() >= 2, "the available devices are listed: {stderr}");
}

#[test]
fn unknown_benchmark_and_bad_options() {
    let o = lift(&repo()).args(["run", "nosuchbench", "--device", "0:0"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no benchmark `nosuchbench`"));
    let o = lift(&repo()).args(["all", "--variants", "fast"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("`fast`"));
}

#[test]
fn a_killed_run_leaves_a_csv_that_resume_completes() {
    if !has_device() {
        println!("skipped: no OpenCL device");
        return;
    }
    let out = std::env::temp_dir().join(format!("lift-killed-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let args = |c: &mut Command| {
        c.args(["run", "scal", "dot", "transpose", "nn", "--size", "tiny", "--runs", "3"])
            .args(["--variants", "reference,none,all", "--out"])
            .arg(&out);
    };
    let rows_in = |csv: &Path| -> Vec<csv::StringRecord> {
        // Every record must parse with the header's fields: no torn row.
        csv::Reader::from_path(csv).unwrap().records().map(|r| r.expect("a well-formed row")).collect()
    };
    // Kill (SIGKILL, no chance to clean up) once two rows are written.
    let mut child = {
        let mut c = lift(&repo());
        args(&mut c);
        c.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null()).spawn().unwrap()
    };
    let t0 = std::time::Instant::now();
    let csv = loop {
        let found = std::fs::read_dir(&out).ok().and_then(|mut d| d.next()).map(|e| e.unwrap().path());
        if let Some(dev) = found {
            let csv = dev.join("results.csv");
            let lines = std::fs::read_to_string(&csv).map(|t| t.lines().count()).unwrap_or(0);
            if lines >= 3 {
                break csv;
            }
        }
        assert!(t0.elapsed().as_secs() < 120, "no rows written within 120 s");
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    child.kill().unwrap();
    child.wait().unwrap();
    let before = rows_in(&csv);
    assert!(before.len() >= 2 && before.len() < 12, "killed midway: {} rows", before.len());
    // --resume measures only what is missing; the lock died with the process.
    let mut c = lift(&repo());
    args(&mut c);
    let o = c.arg("--resume").output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let after = rows_in(&csv);
    assert_eq!(after.len(), 12, "4 benchmarks x 3 variants, each once");
    let keys: std::collections::BTreeSet<_> =
        after.iter().map(|r| (r[0].to_string(), r[2].to_string())).collect();
    assert_eq!(keys.len(), 12, "no row twice");
    for r in &before {
        assert!(after.iter().any(|a| a == r), "a row measured before the kill was kept: {r:?}");
    }
    let _ = std::fs::remove_dir_all(&out);
}

/// `lift explore` of scal into `out` (a few candidates on PoCL).
fn explore(out: &Path, extra: &[&str]) -> std::process::Output {
    lift(&repo())
        .args(["explore", "benchmarks/scal.lift", "--def", "scalHigh", "--size", "N=1048576"])
        .args(["--device", "pocl", "--budget", "120s", "--max-candidates", "3", "--runs", "1", "--out"])
        .arg(out)
        .args(extra)
        .output()
        .unwrap()
}

fn text(o: &std::process::Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

/// Issue 23, concurrent and interrupted explorations: a second explorer
/// into one --out is refused (exit 2, one line); `--resume` skips rows
/// whose time cannot be a measurement, drops a record torn after a newline
/// inside quotes, measures a best taken from the log again, and names the
/// candidate's real number in best.lift.
#[test]
fn explore_locks_its_folder_and_resume_trusts_no_logged_time() {
    if !has_device() {
        println!("skipped: no OpenCL device");
        return;
    }
    let out = std::env::temp_dir().join(format!("lift-explore-sec-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).unwrap();
    // Another explorer holds the folder.
    let held = std::fs::File::create(out.join("explore.csv.lock")).unwrap();
    held.try_lock().unwrap();
    let o = explore(&out, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error: ")).collect();
    assert_eq!(errors.len(), 1, "{err}");
    assert!(errors[0].contains("another run is writing to this folder (it holds explore.csv.lock)"), "{err}");
    assert!(!out.join("explore.csv").exists(), "the refused run wrote nothing");
    drop(held);

    let o = explore(&out, &[]);
    assert!(o.status.success(), "{}", text(&o));
    let csv = out.join("explore.csv");
    let log = std::fs::read_to_string(&csv).unwrap();
    let rows: Vec<csv::StringRecord> =
        csv::Reader::from_reader(log.as_bytes()).records().map(|r| r.unwrap()).collect();
    let ok: Vec<&csv::StringRecord> = rows.iter().filter(|r| &r[4] == "ok").collect();
    assert!(!ok.is_empty(), "{log}");
    // Forge: the slowest valid candidate claims 0.000001 ms; two new rows
    // claim impossible times; a build log torn after its first newline.
    let slow =
        ok.iter().max_by(|a, b| a[5].parse::<f64>().unwrap().total_cmp(&b[5].parse().unwrap())).unwrap();
    let mut forged = String::new();
    for (i, line) in log.lines().enumerate() {
        let fields: Vec<&str> = line.split(',').collect();
        if i > 0 && fields[0] == &slow[0] {
            let mut f = fields.clone();
            f[5] = "0.000001";
            forged.push_str(&f.join(","));
        } else {
            forged.push_str(line);
        }
        forged.push('\n');
    }
    let dev = &slow[1];
    forged.push_str(&format!("97,{dev},feed,0,ok,-1e300,p=1,forged-a,N=1048576,N=1048576,\n"));
    forged.push_str(&format!("98,{dev},beef,0,ok,NaN,p=2,forged-b,N=1048576,N=1048576,\n"));
    forged
        .push_str(&format!("99,{dev},cafe,0,build-failed,,p=3,forged-c,N=1048576,N=1048576,\"log line 1\n"));
    std::fs::write(&csv, &forged).unwrap();
    let o = explore(&out, &["--resume"]);
    assert!(o.status.success(), "{}", text(&o));
    let t = text(&o);
    assert!(t.contains("skipped candidate 97") && t.contains("skipped candidate 98"), "{t}");
    assert!(t.contains("torn"), "{t}");
    let best = std::fs::read_to_string(out.join("best.lift")).unwrap();
    let header = best.lines().next().unwrap();
    assert!(!header.contains("median 0.0000 ms"), "a forged time was written as the best: {header}");
    // `candidate K (hash)`: K is the log's number for that program.
    let (k, hash) = {
        let rest = header.split("candidate ").nth(1).unwrap();
        let k: String = rest.chars().take_while(char::is_ascii_digit).collect();
        let hash: String = rest.split('(').nth(1).unwrap().chars().take_while(|c| *c != ')').collect();
        (k, hash)
    };
    let after: Vec<csv::StringRecord> =
        csv::Reader::from_path(&csv).unwrap().records().map(|r| r.unwrap()).collect();
    assert!(after.iter().any(|r| r[0] == *k && r[2] == *hash), "{header}\n{after:?}");
    assert!(!std::fs::read_to_string(&csv).unwrap().contains("log line 1"), "the torn record was dropped");
    let _ = std::fs::remove_dir_all(&out);
}

/// Issue 23: files under --out are never written through a symbolic link
/// (explore.csv, best.lift, results.csv), and `--resume` onto a results
/// file of an older format is refused instead of appending rows of
/// another width.
#[cfg(unix)]
#[test]
fn out_files_are_not_written_through_links() {
    if !has_device() {
        println!("skipped: no OpenCL device");
        return;
    }
    let base = std::env::temp_dir().join(format!("lift-links-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).unwrap();
    let target = base.join("target.txt");
    std::fs::write(&target, "keep\n").unwrap();
    let link = |p: &Path| std::os::unix::fs::symlink(&target, p).unwrap();
    // explore.csv: refused.
    let out = base.join("explore");
    std::fs::create_dir_all(&out).unwrap();
    link(&out.join("explore.csv"));
    let o = explore(&out, &[]);
    assert!(!o.status.success());
    assert!(text(&o).contains("is a symbolic link"), "{}", text(&o));
    // best.lift: replaced by the file, the link's target untouched.
    std::fs::remove_file(out.join("explore.csv")).unwrap();
    link(&out.join("best.lift"));
    let o = explore(&out, &[]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(std::fs::read_to_string(out.join("best.lift")).unwrap().contains("Found by `lift explore`"));
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep\n");
    // results.csv with --resume: refused.
    let reports = base.join("reports");
    let run = |extra: &[&str]| {
        lift(&repo())
            .args(["run", "scal", "--size", "tiny", "--runs", "1", "--variants", "reference", "--out"])
            .arg(&reports)
            .args(extra)
            .output()
            .unwrap()
    };
    let o = run(&[]);
    assert!(o.status.success(), "{}", text(&o));
    let dev = std::fs::read_dir(&reports).unwrap().next().unwrap().unwrap().path();
    let results = dev.join("results.csv");
    let good = std::fs::read_to_string(&results).unwrap();
    std::fs::remove_file(&results).unwrap();
    link(&results);
    let o = run(&["--resume"]);
    assert!(!o.status.success());
    assert!(text(&o).contains("is a symbolic link"), "{}", text(&o));
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep\n");
    // An older file of 27 columns (before `sizes`): refused, exit 2.
    std::fs::remove_file(&results).unwrap();
    let old: String = good.lines().map(|l| l.rsplit_once(',').unwrap().0.to_string() + "\n").collect();
    std::fs::write(&results, &old).unwrap();
    let o = run(&["--resume"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("found 27 columns"), "{}", text(&o));
    assert_eq!(std::fs::read_to_string(&results).unwrap(), old, "nothing appended");
    let _ = std::fs::remove_dir_all(&base);
}

/// Issue 23: a folder lift writes into is never a symbolic link (`--out`
/// itself for run, explore, generality, plot and roofline, the device's
/// subfolder of `lift run`, the generality suite's
/// folders): each is refused with one line and exit 2, the link's target
/// left empty. A folder another run holds and an explore log of another
/// format are bad input (exit 2) for `lift run`, `lift generality` and
/// `lift explore --resume` alike.
#[cfg(unix)]
#[test]
fn out_folders_are_not_links_and_held_or_older_files_are_bad_input() {
    if !has_device() {
        println!("skipped: no OpenCL device");
        return;
    }
    let base = std::env::temp_dir().join(format!("lift-dirlinks-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    let target = base.join("target");
    std::fs::create_dir_all(&target).unwrap();
    let link = |p: &Path| {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(&target, p).unwrap()
    };
    let refused = |o: &std::process::Output| {
        assert_eq!(o.status.code(), Some(2), "{}", text(o));
        let err = String::from_utf8_lossy(&o.stderr).to_string();
        let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error: ")).collect();
        assert_eq!(errors.len(), 1, "{err}");
        assert!(errors[0].contains("is a symbolic link"), "{err}");
        assert_eq!(std::fs::read_dir(&target).unwrap().count(), 0, "nothing written through the link");
    };
    let run = |out: &Path| {
        lift(&repo())
            .args(["run", "scal", "--size", "tiny", "--runs", "1", "--variants", "reference", "--out"])
            .arg(out)
            .output()
            .unwrap()
    };
    let generality = |out: &Path| {
        lift(&repo())
            .args(["generality", "--only", "sum", "--budget", "1s", "--no-peer", "--device", "pocl", "--out"])
            .arg(out)
            .output()
            .unwrap()
    };
    // --out itself.
    let out_link = base.join("out-link");
    link(&out_link);
    refused(&run(&out_link));
    refused(&explore(&out_link, &[]));
    refused(&generality(&out_link));
    // The device's subfolder, found by a first run.
    let reports = base.join("reports");
    let o = run(&reports);
    assert!(o.status.success(), "{}", text(&o));
    let dev = std::fs::read_dir(&reports).unwrap().next().unwrap().unwrap().path();
    let slug = dev.file_name().unwrap().to_owned();
    let plot = lift(&repo()).arg("plot").arg(dev.join("results.csv")).arg("--out").arg(&out_link).output();
    refused(&plot.unwrap());
    refused(&lift(&repo()).args(["roofline", "--out"]).arg(&out_link).output().unwrap());
    let planted = base.join("planted");
    link(&planted.join(&slug));
    refused(&run(&planted));
    // The generality suite's folder of searches.
    let suite = base.join("suite");
    link(&suite.join(&slug).join("generality"));
    let o = generality(&suite);
    assert!(!o.status.success());
    assert!(text(&o).contains("is a symbolic link"), "{}", text(&o));
    assert_eq!(std::fs::read_dir(&target).unwrap().count(), 0, "nothing written through the link");
    // A folder another run holds: exit 2 and one line, as for explore.
    for (file, cmd) in [("results.csv", "run"), ("results-generality.csv", "generality")] {
        let held = std::fs::File::create(dev.join(format!("{file}.lock"))).unwrap();
        held.try_lock().unwrap();
        let o = if cmd == "run" { run(&reports) } else { generality(&reports) };
        assert_eq!(o.status.code(), Some(2), "{cmd}: {}", text(&o));
        assert!(text(&o).contains(&format!("another run is writing to this folder (it holds {file}.lock)")));
        drop(held);
    }
    // An explore log of another format with --resume.
    let explored = base.join("explored");
    std::fs::create_dir_all(&explored).unwrap();
    let old = "candidate,device,hash\n0,x,y\n";
    std::fs::write(explored.join("explore.csv"), old).unwrap();
    let o = explore(&explored, &["--resume"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("found 3 columns"), "{}", text(&o));
    assert_eq!(std::fs::read_to_string(explored.join("explore.csv")).unwrap(), old, "nothing appended");
    let _ = std::fs::remove_dir_all(&base);
}

/// Issue 23: a NaN or infinite generator bound, or an int range beyond 32
/// bits, is refused at load with the file, line and key (a NaN bound made
/// every input NaN and every row `ok`).
#[test]
fn non_finite_generator_bounds_are_refused_at_load() {
    let dir = std::env::temp_dir().join(format!("lift-nan-cfg-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let scal = std::fs::read_to_string(repo().join("configs/scal.yaml")).unwrap();
    let from = "random: { min: -1.0, max: 1.0 }";
    assert!(scal.contains(from), "configs/scal.yaml no longer contains `{from}`");
    let cases = [
        ("random: { min: .nan, max: .nan }", "bound NaN is not a finite float"),
        ("random: { min: -.inf, max: 1.0 }", "bound -inf is not a finite float"),
        ("const: 1e39", "1000000000000000000000000000000000000000 is not a finite float"),
    ];
    for (to, what) in cases {
        std::fs::write(dir.join("scal.yaml"), scal.replace(from, to)).unwrap();
        let o = lift(&repo()).args(["list", "--configs"]).arg(&dir).output().unwrap();
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{e}");
        let line = scal.lines().position(|l| l.contains(from)).unwrap() + 1;
        let key = if to.starts_with("const") { "init.const" } else { "init.random" };
        let want = format!("scal.yaml:{line}: key `inputs[1].{key}`: {what}");
        assert!(e.lines().next().unwrap_or("").contains(&want), "want `{want}` in:\n{e}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
