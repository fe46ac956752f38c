//! `generality PATH`: a `results-generality.csv` (`lift generality`) as
//! the README's table against PyTorch: per program the explored time,
//! PyTorch's, the speedup, the fraction of the limit that binds it, and a
//! summary line (geometric mean, programs below 0.8x, the run).

use super::rows::first_seen;
use super::table::{ms, opt, times, Table, NONE};
use super::{DataProblem, ReadProblem, ReportError};
use crate::harness::chart::geometric_mean;
use crate::harness::generality::{row, Outcome, Row};
use std::path::Path;

pub(super) fn table(root: &Path, rel: &Path) -> Result<String, ReportError> {
    let path = root.join(rel);
    let rows = row::read(&path).map_err(|e| ReportError::Read {
        path: path.clone(),
        problem: ReadProblem::Generality(Box::new(e)),
    })?;
    if rows.is_empty() {
        return Err(ReportError::Data { what: rel.display().to_string(), problem: DataProblem::NoRows });
    }
    let mut t = Table::new(&[
        "program",
        "class",
        "sizes",
        "explored (ms)",
        "candidates valid / tried",
        "PyTorch (ms)",
        "PyTorch call",
        "explored over PyTorch",
        "of the limit",
    ]);
    for r in &rows {
        let limit = match (r.pct_copy, r.pct_fp32) {
            (_, Some(f)) if r.pct_of_limit() == Some(f) => format!("{f:.0}% FP32"),
            (Some(c), _) => match r.pct_own_copy {
                Some(o) => format!("{c:.0}% copy ({o:.0}% of a same-size copy)"),
                None => format!("{c:.0}% copy"),
            },
            _ => NONE.to_string(),
        };
        let explored =
            if r.status == Outcome::Ok { opt(r.lift_ms, ms) } else { format!("failed: {}", r.message) };
        t.push(vec![
            format!("`{}`", r.program),
            r.class.clone(),
            r.sizes.replace(';', ", "),
            explored,
            format!("{} / {}", r.valid, r.tried),
            opt(r.peer_ms, ms),
            if r.peer.is_empty() { NONE.to_string() } else { format!("`{}`", r.peer) },
            opt(r.speedup, times),
            limit,
        ]);
    }
    Ok(format!("{}\n\n{}", summary(&rows), t.markdown()))
}

fn summary(rows: &[Row]) -> String {
    let s: Vec<f64> = rows.iter().filter_map(|r| r.speedup).collect();
    let mean = geometric_mean(&s).map_or(NONE.to_string(), times);
    // Below: a failed program, or one slower than 0.8x of its peer; a
    // program whose peer did not run is counted apart, never as below.
    let below = names(rows, |r| r.status != Outcome::Ok || r.speedup.is_some_and(|x| x < 0.8));
    let no_peer = names(rows, |r| r.status == Outcome::Ok && r.speedup.is_none());
    let commits = first_seen(rows.iter().map(|r| r.commit.as_str()));
    let devices = first_seen(rows.iter().map(|r| r.device.as_str()));
    let ok = rows.iter().filter(|r| r.status == Outcome::Ok).count();
    let mut text = format!(
        "{} programs ({ok} validated) on {} at commit {}; Lift timed by {}, PyTorch by {}. \
         Geometric mean of explored over PyTorch: {mean}; below 0.8x: {}.",
        rows.len(),
        devices.join(", "),
        commits.iter().map(|c| format!("`{c}`")).collect::<Vec<_>>().join(", "),
        rows[0].lift_timing,
        rows.iter().find(|r| !r.peer_timing.is_empty()).map_or(NONE, |r| r.peer_timing.as_str()),
        list(&below),
    );
    if !no_peer.is_empty() {
        text.push_str(&format!(" Without a PyTorch time: {}.", list(&no_peer)));
    }
    text.push_str(&copy_bound(rows));
    // The search against the program as written, on the same clock.
    let over_naive: Vec<f64> = rows
        .iter()
        .filter(|r| r.status == Outcome::Ok)
        .filter_map(|r| Some(r.naive_ms? / r.lift_ms?))
        .collect();
    if let Some(m) = geometric_mean(&over_naive) {
        let slower = names(rows, |r| r.naive_ms.zip(r.lift_ms).is_some_and(|(n, l)| n < l));
        text.push_str(&format!(
            " Explored over its naive lowering: geometric mean {} ({} programs); slower than it: {}.",
            times(m),
            over_naive.len(),
            list(&slower)
        ));
    }
    text
}

/// The programs the copy bandwidth binds that are below 80% of it, and of
/// a copy of their own bytes (half read, half written, measured in the
/// same run: a copy of fewer bytes than the large one takes longer per
/// byte); empty where no row has the latter.
fn copy_bound(rows: &[Row]) -> String {
    if rows.iter().all(|r| r.pct_own_copy.is_none()) {
        return String::new();
    }
    let bound = |r: &Row| r.status == Outcome::Ok && r.pct_own_copy_if_bound().is_some();
    let large = names(rows, |r| bound(r) && r.pct_copy.is_some_and(|p| p < 80.0));
    let own = names(rows, |r| bound(r) && r.pct_own_copy.is_some_and(|p| p < 80.0));
    format!(
        " Bound by the copy bandwidth and below 80% of the large copy's: {}; below 80% of a copy of their own bytes: {}.",
        list(&large),
        list(&own)
    )
}

/// `generality-ported PATH`: a `results-generality-ported.csv` (another
/// device's found programs measured here, `lift generality
/// --programs-from`) beside the device's own search results in the same
/// folder: per program both times and the ratio, and a summary line.
pub(super) fn ported(root: &Path, rel: &Path) -> Result<String, ReportError> {
    let read = |rel: &Path| {
        let path = root.join(rel);
        row::read(&path)
            .map_err(|e| ReportError::Read { path, problem: ReadProblem::Generality(Box::new(e)) })
    };
    let ported = read(rel)?;
    let own_rel = rel.with_file_name(crate::harness::generality::RESULTS);
    let own = read(&own_rel)?;
    let mut t =
        Table::new(&["program", "sizes", "explored here (ms)", "ported (ms)", "explored over ported"]);
    let mut ratios = Vec::new();
    let mut slower = Vec::new();
    for p in &ported {
        let mine = own.iter().find(|r| r.program == p.program && r.status == Outcome::Ok);
        let here = mine.and_then(|r| r.lift_ms);
        let there = if p.status == Outcome::Ok { p.lift_ms } else { None };
        let ratio = here.zip(there).map(|(h, t)| t / h);
        if let Some(x) = ratio {
            ratios.push(x);
            if x < 1.0 {
                slower.push(format!("`{}`", p.program));
            }
        }
        let ported_text =
            if p.status == Outcome::Ok { opt(p.lift_ms, ms) } else { format!("failed: {}", p.message) };
        t.push(vec![
            format!("`{}`", p.program),
            p.sizes.replace(';', ", "),
            opt(here, ms),
            ported_text,
            opt(ratio, times),
        ]);
    }
    let quote = |rows: &[Row]| {
        first_seen(rows.iter().map(|r| r.commit.as_str()))
            .iter()
            .map(|c| format!("`{c}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let summary = format!(
        "{} programs found elsewhere, measured on {} at commit {} ({} validated), beside this device's own search results (`{}`, commit {}). \
         Geometric mean of this device's explored program over the ported one: {} ({} programs); the ported one faster: {}; the ported one not validated: {}.",
        ported.len(),
        first_seen(ported.iter().map(|r| r.device.as_str())).join(", "),
        quote(&ported),
        ported.iter().filter(|r| r.status == Outcome::Ok).count(),
        own_rel.display(),
        quote(&own),
        geometric_mean(&ratios).map_or(NONE.to_string(), times),
        ratios.len(),
        list(&slower),
        list(&names(&ported, |r| r.status != Outcome::Ok)),
    );
    Ok(format!("{summary}\n\n{}", t.markdown()))
}

/// `none`, or how many names and which.
fn list(v: &[String]) -> String {
    if v.is_empty() {
        "none".to_string()
    } else {
        format!("{} ({})", v.len(), v.join(", "))
    }
}

/// The programs of `rows` for which `pick` holds, as code.
fn names(rows: &[Row], pick: impl Fn(&Row) -> bool) -> Vec<String> {
    rows.iter().filter(|r| pick(r)).map(|r| format!("`{}`", r.program)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = "program,class,sizes,device,commit,date,status,lift_ms,lift_timing,naive_ms,tried,valid,candidate,params,min_bytes,gbps,copy_gbps,pct_copy,min_flops,gflops,peak_gflops,pct_fp32,peer,peer_ms,peer_timing,speedup,message";

    fn rows(lines: &[&str]) -> Vec<Row> {
        let text = format!("{HEADER}\n{}\n", lines.join("\n"));
        csv::Reader::from_reader(text.as_bytes()).deserialize().map(|r| r.unwrap()).collect()
    }

    #[test]
    fn programs_without_a_peer_are_not_below_and_the_naive_lowering_is_summed_up() {
        let r = rows(&[
            // 2x its peer, 4x its naive lowering.
            "a,c,N=5,dev,abc,d,ok,1.0,opencl-events,4.0,3,3,1,,,,,,,,,,x.sum(),2.0,cuda-events,2.0,",
            // 0.5x its peer.
            "b,c,N=5,dev,abc,d,ok,2.0,opencl-events,2.0,3,3,1,,,,,,,,,,x.max(),1.0,cuda-events,0.5,",
            // No peer time; slower than its naive lowering (0.5x): the
            // mean over naive is the cube root of 4 x 1 x 0.5.
            "e,c,N=5,dev,abc,d,ok,2.0,opencl-events,1.0,3,3,1,,,,,,,,,,,,,,",
            // Failed.
            "f,c,N=5,dev,abc,d,failed,,opencl-events,,3,0,,,,,,,,,,,,,,,no candidate validated",
        ]);
        let s = summary(&r);
        assert!(s.contains("below 0.8x: 2 (`b`, `f`)"), "{s}");
        assert!(s.contains("Without a PyTorch time: 1 (`e`)"), "{s}");
        assert!(s.contains("Explored over its naive lowering: geometric mean 1.26x (3 programs); slower than it: 1 (`e`)"), "{s}");
    }

    #[test]
    fn copy_bound_programs_are_held_against_a_copy_of_their_own_bytes() {
        let header = HEADER.replace("pct_copy,", "pct_copy,own_copy_gbps,pct_own_copy,");
        let text = format!(
            "{header}\n{}\n",
            [
                // 70% of the large copy, 90% of a copy of its bytes.
                "a,c,N=5,dev,abc,d,ok,1.0,opencl-events,4.0,3,3,1,,100,70,100,70,77.8,90,,,,,x.sum(),2.0,cuda-events,2.0,",
                // 60% and 70%.
                "b,c,N=5,dev,abc,d,ok,1.0,opencl-events,4.0,3,3,1,,100,60,100,60,85.7,70,,,,,x.sum(),2.0,cuda-events,2.0,",
                // Bound by FP32 (90%), not by the copy (50%).
                "m,c,N=5,dev,abc,d,ok,1.0,opencl-events,4.0,3,3,1,,100,50,100,50,71.4,70,1,1,1,90,mm(a),2.0,cuda-events,2.0,",
            ]
            .join("\n")
        );
        let r: Vec<Row> =
            csv::Reader::from_reader(text.as_bytes()).deserialize().map(|r| r.unwrap()).collect();
        let s = summary(&r);
        assert!(s.contains("below 80% of the large copy's: 2 (`a`, `b`)"), "{s}");
        assert!(s.contains("below 80% of a copy of their own bytes: 1 (`b`)"), "{s}");
        assert_eq!(r[0].pct_own_copy_if_bound(), Some(90.0));
        assert_eq!(r[2].pct_own_copy_if_bound(), None);
        // Files written before the columns existed say nothing of them.
        assert!(!summary(&rows(&["a,c,N=5,dev,abc,d,ok,1.0,opencl-events,4.0,3,3,1,,100,70,100,70,,,,,x.sum(),2.0,cuda-events,2.0,"])).contains("own bytes"));
    }

    #[test]
    fn ported_programs_are_compared_with_the_devices_own() {
        let dir = std::env::temp_dir().join(format!("lift-report-ported-{}", std::process::id()));
        let sub = dir.join("reports").join("cpu");
        std::fs::create_dir_all(&sub).unwrap();
        let write = |name: &str, lines: &[&str]| {
            std::fs::write(sub.join(name), format!("{HEADER}\n{}\n", lines.join("\n"))).unwrap()
        };
        write(
            crate::harness::generality::RESULTS,
            &[
                "a,c,N=5,cpu,own1,d,ok,1.0,opencl-events,4.0,3,3,1,,,,,,,,,,,,,,",
                "b,c,N=5,cpu,own1,d,ok,4.0,opencl-events,4.0,3,3,1,,,,,,,,,,,,,,",
                "g,c,N=5,cpu,own1,d,ok,1.0,opencl-events,4.0,3,3,1,,,,,,,,,,,,,,",
            ],
        );
        write(
            crate::harness::generality::ported::RESULTS,
            &[
                // 4x slower than the device's own; 2x faster; not validated.
                "a,c,N=5,cpu,port1,d,ok,4.0,opencl-events,,1,1,0,ported from x,,,,,,,,,,,,,",
                "b,c,N=5,cpu,port1,d,ok,2.0,opencl-events,,1,1,0,ported from y,,,,,,,,,,,,,",
                "g,c,N=5,cpu,port1,d,failed,,opencl-events,,1,0,,ported from z,,,,,,,,,,,,,refused: no",
            ],
        );
        let rel = Path::new("reports/cpu").join(crate::harness::generality::ported::RESULTS);
        let text = ported(&dir, &rel).unwrap();
        // sqrt(4 x 0.5) over the two both validated.
        assert!(text.contains("over the ported one: 1.41x (2 programs)"), "{text}");
        assert!(text.contains("the ported one faster: 1 (`b`)"), "{text}");
        assert!(text.contains("the ported one not validated: 1 (`g`)"), "{text}");
        assert!(text.contains("commit `port1`") && text.contains("commit `own1`"), "{text}");
        std::fs::remove_dir_all(&dir).ok();
    }
}
