//! A search split over machines: `lift explore --shard I/N` searches only
//! the shapes whose key falls in shard I of N, into its own log in the
//! shared `--out` folder (`explore-shard-I-of-N.csv`, so that shards never
//! write one file), and `lift explore --merge` reads all N logs, checks
//! that every row is a candidate of this search, and measures the fastest
//! logged candidates again on the local device before it writes
//! `best.lift` (a log is a claim, as with `--resume`).
//!
//! Shards split the shapes, not single points: the tuner's local search
//! of a shape needs that shape's own times, and with nothing else shared
//! (`tuner`), a search that runs to its end in every shard measures, over
//! all shards, the points one unsharded search measures.

use super::log::{read_rows, Row};
use super::space::Shape;
use super::tuner::Point;
use super::{
    bench_for, confirm, empty_result, local_size, params_text, program_hash, setup, sizes_text, spaces_for,
    write_best, Best, DeviceResult, ExploreError, ExploreOptions, Plan, Report,
};
use crate::ir::Program;
use crate::runtime::DeviceInfo;
use std::path::{Path, PathBuf};

/// The most shards a search is split into.
pub const MAX_SHARDS: u32 = 4096;

/// A `--shard` value that is not `I/N` with 0 <= I < N <= [`MAX_SHARDS`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("--shard `{0}`: expected I/N with 0 <= I < N <= {MAX_SHARDS}, such as 0/4")]
pub struct BadShard(pub String);

/// Why a logged row is not a candidate of this search.
#[derive(Debug, thiserror::Error)]
enum NotOurs {
    #[error("logged at sizes `{logged}`, expected `{expected}` (--size)")]
    Sizes { logged: String, expected: String },
    #[error(
        "candidate {candidate} ({hash}) is not a candidate of this search (another program, def, --depth or --valid-at?)"
    )]
    Other { candidate: usize, hash: String },
    #[error("candidate {candidate} is of a shape that shard {}/{} does not search", shard.index, shard.count)]
    Shard { candidate: usize, shard: Shard },
}

/// Shard `index` of `count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl Shard {
    /// `I/N` with 0 <= I < N <= [`MAX_SHARDS`].
    pub fn parse(text: &str) -> Result<Shard, BadShard> {
        let bad = || BadShard(text.to_string());
        let (i, n) = text.trim().split_once('/').ok_or_else(bad)?;
        let (Ok(index), Ok(count)) = (i.trim().parse::<u32>(), n.trim().parse::<u32>()) else {
            return Err(bad());
        };
        if count == 0 || count > MAX_SHARDS || index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }

    /// The shard's log in the shared `--out` folder.
    pub fn log_name(&self) -> String {
        format!("explore-shard-{}-of-{}.csv", self.index, self.count)
    }

    /// Whether the shard searches `shape`.
    pub fn owns(&self, shape: &Shape) -> bool {
        let h = u64::from_str_radix(&super::log::fnv_hex(&shape_key(shape)), 16).unwrap_or(0);
        h % u64::from(self.count) == u64::from(self.index)
    }
}

/// What identifies a shape on every machine: its steps (rules, positions,
/// where each parameter comes from), not its place in the plan.
pub(super) fn shape_key(shape: &Shape) -> String {
    let step = |s: &super::space::Step| {
        format!("{} @ {} {:?}", s.rule.map_or("extract", |r| r.name), s.path, s.args)
    };
    shape.steps.iter().map(step).collect::<Vec<_>>().join(" ; ")
}

/// What the merge refuses.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    /// Bad input: missing or mixed shard logs, rows of another search.
    #[error("{0}")]
    Bad(String),
    #[error(transparent)]
    Explore(#[from] ExploreError),
}

/// The shard logs of `dir`: all N of one N, in shard order.
pub fn shard_logs(dir: &Path) -> Result<Vec<(Shard, PathBuf)>, MergeError> {
    let rd = std::fs::read_dir(dir).map_err(|e| MergeError::Bad(format!("{}: {e}", dir.display())))?;
    let mut found: Vec<(u32, u32, PathBuf)> = Vec::new();
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        let Some(mid) = name.strip_prefix("explore-shard-").and_then(|r| r.strip_suffix(".csv")) else {
            continue;
        };
        if let Ok(s) = Shard::parse(&mid.replacen("-of-", "/", 1)) {
            found.push((s.count, s.index, e.path()));
        }
    }
    found.sort();
    let Some(&(n, _, _)) = found.first() else {
        return Err(MergeError::Bad(format!(
            "{}: no shard logs (explore-shard-I-of-N.csv); run `lift explore --shard I/N --out {}` first",
            dir.display(),
            dir.display()
        )));
    };
    if let Some((m, _, _)) = found.iter().find(|f| f.0 != n) {
        return Err(MergeError::Bad(format!(
            "{}: shard logs of {n} and of {m} shards; keep one split's logs only",
            dir.display()
        )));
    }
    if let Some(i) = (0..n).find(|i| !found.iter().any(|f| f.1 == *i)) {
        let s = Shard { index: i, count: n };
        return Err(MergeError::Bad(format!(
            "{}: shard {i} of {n} is missing ({}); merge once every shard has finished",
            dir.display(),
            s.log_name()
        )));
    }
    Ok(found.into_iter().map(|(count, index, p)| (Shard { index, count }, p)).collect())
}

/// The slot values of a logged `params` text (`name=value` by spaces) for
/// `shape`'s slots, in their order.
fn values_of(shape: &Shape, params: &str) -> Option<Vec<i64>> {
    let given: Vec<(&str, i64)> = params
        .split_whitespace()
        .map(|kv| kv.rsplit_once('=').and_then(|(k, v)| Some((k, v.parse().ok()?))))
        .collect::<Option<_>>()?;
    if given.len() != shape.slots.len() {
        return None;
    }
    shape.slots.iter().map(|s| given.iter().find(|(k, _)| *k == s.name).map(|(_, v)| *v)).collect()
}

/// A logged row as a candidate of this search: replayed from its shape and
/// parameters, it must give the program (hash) and derivation logged.
fn replay(
    plan: &Plan,
    shapes: &[Shape],
    opts: &ExploreOptions,
    size_key: &str,
    row: &Row,
) -> Result<Best, NotOurs> {
    if row.sizes != size_key {
        return Err(NotOurs::Sizes { logged: row.sizes.clone(), expected: size_key.to_string() });
    }
    let other = || NotOurs::Other { candidate: row.candidate, hash: row.hash.clone() };
    let shape = shapes.get(row.shape).ok_or_else(other)?;
    let values = values_of(shape, &row.params).ok_or_else(other)?;
    let inst = shape.instantiate(&plan.base, &opts.def, &values).map_err(|_| other())?;
    let local = local_size(shape, &values);
    let p = Point { shape: row.shape, values };
    let same = program_hash(&inst.program, &opts.def, local).as_deref() == Some(row.hash.as_str())
        && inst.derivation.join(" ; ") == row.derivation;
    if !same {
        return Err(other());
    }
    Ok(Best {
        median_ms: row.median_ms.unwrap_or(f64::INFINITY),
        candidate: row.candidate,
        point: p.clone(),
        hash: row.hash.clone(),
        program: crate::rewrite::release(&inst.program, &opts.def),
        derivation: inst.derivation.clone(),
        params: params_text(shape, &p.values),
        local,
        // Shards do not specialise (`specialise`): their rows are kernels
        // for every size.
        static_sizes: false,
        measured: false,
        evaluated: inst.program,
        constraints: inst.constraints,
    })
}

/// Reads every shard log of `--out`, checks each row against this search,
/// measures the fastest logged candidates again on `device` (`confirm`)
/// and writes the best into `--out`.
pub fn merge(program: &Program, device: &DeviceInfo, opts: &ExploreOptions) -> Result<Report, MergeError> {
    let original = program;
    let (program, opts, gold) = super::prepare_search(program, opts);
    let searched = super::searched_program(original, &program);
    let plan = super::plan(&program, &opts.def, &opts.sizes, &opts.limits)?;
    let logs = shard_logs(&opts.out)?;
    // The merge writes the folder's best: one at a time, as an explorer.
    let csv = opts.out.join("explore.csv");
    let _lock = crate::outfile::lock_beside(&csv).map_err(ExploreError::from)?;
    let (shapes, _, _) =
        spaces_for(&plan, &opts.sizes, device.max_work_group, device.compute_units, device.is_gpu());
    let size_key = sizes_text(&opts.sizes);
    let mut notes = Vec::new();
    let mut res: DeviceResult = empty_result(device);
    let mut pending = Vec::new();
    let mut others = std::collections::BTreeSet::new();
    for (shard, path) in &logs {
        let rows = read_rows(path, &mut notes).map_err(|e| MergeError::Bad(e.to_string()))?;
        for (line, row) in rows {
            let b = replay(&plan, &shapes, &opts, &size_key, &row)
                .and_then(|b| {
                    let mine = plan.shapes.get(row.shape).is_some_and(|s| shard.owns(s));
                    mine.then_some(b).ok_or(NotOurs::Shard { candidate: row.candidate, shard: *shard })
                })
                .map_err(|m| MergeError::Bad(format!("{}:{line}: {m}", path.display())))?;
            res.tried += 1;
            if row.device != device.name {
                others.insert(row.device.clone());
            }
            if row.status == "ok" {
                res.valid += 1;
                pending.push(b);
            }
        }
    }
    for d in others {
        notes.push(format!("candidates logged on {d} are measured again on {}", device.name));
    }
    let dev = setup(device.clone(), &program, &opts, &gold.def)?;
    let golds = super::measure::GoldCache::default();
    let mut bench = bench_for(plan.stencil, (&opts, &gold), &program, &dev, &golds);
    let logged = pending.len();
    confirm(&mut bench, &mut res, pending);
    super::choice::settle(&mut res);
    notes.append(&mut res.notes);
    if let Some(b) = &res.best {
        res.files = write_best(&opts.out, &opts, b, &res.device, searched.as_ref())?;
    } else if logged > 0 {
        notes.push(format!(
            "none of the {logged} validated candidates of the shard logs held up when measured again"
        ));
    }
    Ok(Report { shapes: plan.shapes.len(), csv: opts.out.clone(), notes, devices: vec![res] })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_values_are_checked() {
        assert_eq!(Shard::parse("0/2"), Ok(Shard { index: 0, count: 2 }));
        assert_eq!(Shard::parse(" 3/4 "), Ok(Shard { index: 3, count: 4 }));
        assert_eq!(Shard::parse("0/1"), Ok(Shard { index: 0, count: 1 }));
        for bad in ["2/2", "0/0", "-1/2", "1", "a/b", "1/2/3", "0/4097", ""] {
            let e = Shard::parse(bad).unwrap_err().to_string();
            assert_eq!(e, format!("--shard `{bad}`: expected I/N with 0 <= I < N <= 4096, such as 0/4"));
        }
        assert_eq!(Shard { index: 1, count: 3 }.log_name(), "explore-shard-1-of-3.csv");
    }

    #[test]
    fn every_shape_has_one_shard() {
        let base = super::super::space::prepared("benchmarks/scal.lift", "scalHigh");
        let sizes = crate::types::sizes_of(&[("N", 1 << 20)]);
        let plan = super::super::plan(&base, "scalHigh", &sizes, &Default::default()).unwrap();
        assert!(plan.shapes.len() > 3);
        for n in [1, 2, 3] {
            for s in &plan.shapes {
                let owners = (0..n).filter(|&i| Shard { index: i, count: n }.owns(s)).count();
                assert_eq!(owners, 1);
            }
        }
    }

    #[test]
    fn merge_wants_one_complete_split() {
        let dir = std::env::temp_dir().join(format!("lift-shard-logs-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let msg = |d: &Path| shard_logs(d).unwrap_err().to_string();
        assert!(msg(&dir).contains("no shard logs"), "{}", msg(&dir));
        std::fs::write(dir.join("explore-shard-0-of-2.csv"), "").unwrap();
        assert!(msg(&dir).ends_with(
            "shard 1 of 2 is missing (explore-shard-1-of-2.csv); merge once every shard has finished"
        ));
        std::fs::write(dir.join("explore-shard-1-of-2.csv"), "").unwrap();
        assert_eq!(shard_logs(&dir).unwrap().len(), 2);
        std::fs::write(dir.join("explore-shard-0-of-3.csv"), "").unwrap();
        assert!(msg(&dir).contains("shard logs of 2 and of 3 shards"), "{}", msg(&dir));
        std::fs::remove_dir_all(&dir).ok();
    }
}
