//! Measuring one program a search found elsewhere (another device's
//! `best.lift`) on this device, as a candidate of this device's own search
//! would be measured: the same inputs, the same validation at the same
//! sizes, the same second stages and the same clock. The question it
//! answers is portability: how fast is the GPU's program on the CPU, beside
//! the CPU's own search result.

use super::measure::{self, Outcome};
use super::{bench_for, flatten, plan, setup, ExploreOptions, SpaceLimits};
use crate::arith::ArithExpr;
use crate::ir::Program;
use crate::rewrite::Constraint;
use crate::runtime::DeviceInfo;
use crate::types::Sizes;
use std::path::PathBuf;
use std::time::Duration;

/// Why a found program could not be measured at all (a program that runs
/// and fails validation is an [`Outcome`], not an error).
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error("no `def {0}` in the found program")]
    NoDef(String),
    /// Planning the high-level program, opening the device, making the
    /// inputs or compiling a second stage, as a search would.
    #[error(transparent)]
    Explore(#[from] Box<super::ExploreError>),
}

/// What to measure and how often.
pub struct Replay<'a> {
    /// The user's high-level program (the oracle) and its def.
    pub original: &'a Program,
    pub def: &'a str,
    /// The found program: `def` lowered, and its second stages
    /// (`<def>_then_...`) where it leaves partial results.
    pub found: &'a Program,
    /// The order in which the second stages are tried (the found file's
    /// header names it); empty: the file's order.
    pub then_order: Vec<String>,
    /// The local size its header gives, if any.
    pub local: Option<[i64; 3]>,
    /// Whether its header says it is compiled for the sizes it runs at
    /// (`header_static_sizes`): it is then measured so.
    pub static_sizes: bool,
    pub sizes: &'a Sizes,
    pub seed: u64,
    pub warmup: usize,
    pub runs: usize,
}

/// The second stages of a found program, in the order to try them.
fn stages(found: &Program, def: &str, order: &[String]) -> Vec<String> {
    let prefix = format!("{def}_then");
    let mut names: Vec<String> =
        found.defs.iter().map(|d| d.name.clone()).filter(|n| n.starts_with(&prefix)).collect();
    names.sort_by_key(|n| order.iter().position(|o| o == n).unwrap_or(usize::MAX));
    names
}

/// The second-stage order a `best.lift` header states ("followed by the
/// first of a_then_tree, a_then_seq whose ...").
pub fn header_then_order(text: &str) -> Vec<String> {
    text.lines()
        .take_while(|l| l.starts_with("//"))
        .find_map(|l| l.split_once("followed by the first of ").map(|(_, r)| r.to_string()))
        .map(|r| {
            let list = r.split(" whose").next().unwrap_or_default();
            list.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect()
        })
        .unwrap_or_default()
}

/// The header line of a `best.lift` whose time is its kernel's compiled
/// for the timed sizes (`specialise`), up to the sizes it names.
pub const STATIC_SIZES_HEADER: &str = "// The time is its kernel's compiled for these sizes";

/// Whether a `best.lift` header says its kernel is compiled for the sizes
/// it runs at (`STATIC_SIZES_HEADER`).
pub fn header_static_sizes(text: &str) -> bool {
    text.lines().take_while(|l| l.starts_with("//")).any(|l| l.starts_with(STATIC_SIZES_HEADER))
}

/// Measures `r.found` on `device`.
pub fn replay(r: &Replay<'_>, device: DeviceInfo) -> Result<Outcome, ReplayError> {
    if r.found.def(r.def).is_none() {
        return Err(ReplayError::NoDef(r.def.to_string()));
    }
    // The oracle is the program the search measured against: a product
    // written without `join` was searched in its joined form.
    let joined = flatten::joined_products(r.original, r.def, r.sizes);
    let original = joined.as_ref().unwrap_or(r.original);
    // Second stages are the ones the search derived (`finish::derive`,
    // deterministic: the same defs under the same names as the found
    // file's), checked and compiled from that program as the search does.
    let then = stages(r.found, r.def, &r.then_order);
    let derived = if then.is_empty() { None } else { super::finish::derive(original, r.def) };
    let original = derived.as_ref().map(|d| &d.program).unwrap_or(original);
    let mut cs = measure::split_constraints(r.found, r.def);
    if then.is_empty() {
        cs.extend(whole_output(original, r.found, r.def));
    }
    // The search only measured points whose constraints hold at the
    // requested sizes; a program found for other sizes may not fit these.
    // (One that does not evaluate over the sizes alone is left out, as
    // `validation_sizes` leaves it.) Checked before the device is opened.
    let broken = |c: &&Constraint| matches!(c.expr.eval_with(&|v| r.sizes.get(v).copied()), Ok(x) if x != 0);
    if let Some(c) = cs.iter().find(broken) {
        let msg = format!("the found program needs {} at these sizes", c.text);
        return Ok(Outcome::fail(measure::Status::Refused, msg, r.sizes.clone()));
    }
    let stencil = plan(original, r.def, r.sizes, &SpaceLimits::default()).map_err(Box::new)?.stencil;
    // Measured as this device's own search measures a candidate, with no
    // budget to spare runs for.
    let opts = ExploreOptions {
        def: r.def.to_string(),
        sizes: r.sizes.clone(),
        budget: Duration::from_secs(NO_BUDGET_SECS),
        seed: r.seed,
        out: PathBuf::new(),
        resume: false,
        limits: SpaceLimits::default(),
        max_candidates: None,
        warmup: r.warmup,
        runs: r.runs,
        progress: false,
        then,
        reference: None,
        // The replay measures the found program as the search did.
        specialise: false,
    };
    let dev = setup(device, original, &opts, r.def).map_err(Box::new)?;
    let gold = super::measure::Gold { def: r.def.to_string(), always_then: false };
    let golds = super::measure::GoldCache::default();
    let bench = bench_for(stencil, (&opts, &gold), original, &dev, &golds);
    Ok(if r.static_sizes {
        bench.evaluate_specialised(r.found, &cs, r.local)
    } else {
        bench.evaluate(r.found, &cs, r.local)
    })
}

/// A budget no replay reaches (a year): every run of the candidate counts.
const NO_BUDGET_SECS: u64 = 365 * 24 * 3600;

/// Where the found program computes the def's whole result, it must
/// compute all of it at the validation sizes: a tiled stencil's output is
/// whole tiles only, which the search knew from its rules' constraints and
/// a replay reads from the two programs' output sizes.
fn whole_output(original: &Program, found: &Program, def: &str) -> Option<Constraint> {
    let bytes = |p: &Program| crate::passes::typecheck::def_result(p, def).map(|t| t.size_in_bytes());
    let (want, got) = (bytes(original)?, bytes(found)?);
    Some(Constraint {
        expr: crate::arith::simplify(&ArithExpr::sub(got, want)),
        text: "the found program computes the whole output".into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_orders_the_second_stages() {
        let text = "// Found by `lift explore` on X: candidate 3 (ab), median 1 ms.\n\
                    // Its output is followed by the first of s_then_tree, s_then_seq whose size constraints hold for it.\n\
                    userfun add(x: float, y: float): float { return x + y; }\n";
        assert_eq!(header_then_order(text), vec!["s_then_tree".to_string(), "s_then_seq".to_string()]);
        assert!(header_then_order("// nothing here\n").is_empty());
        assert!(!header_static_sizes(text));
        let sized = format!("{STATIC_SIZES_HEADER} (`lift compile --size N=5`); compiled for every size it took longer.\n{text}");
        assert!(header_static_sizes(&sized));
        let src = "userfun add(x: float, y: float): float { return x + y; }\n\
                   def s(x: [float]N) = toGlobal(mapSeq(id)) o reduceSeq(add, 0.0f) $ x\n\
                   def s_then_seq(p: [float]P) = toGlobal(mapSeq(id)) o reduceSeq(add, 0.0f) $ p\n\
                   def s_then_tree(p: [float]P) = toGlobal(mapSeq(id)) o reduceSeq(add, 0.0f) $ p\n\
                   def other(p: [float]P) = toGlobal(mapSeq(id)) o reduceSeq(add, 0.0f) $ p\n";
        let p = crate::parse::parse_program(&crate::ir::SourceFile::new("t.lift", src.to_string())).unwrap();
        let order = vec!["s_then_tree".to_string(), "s_then_seq".to_string()];
        assert_eq!(stages(&p, "s", &order), order);
        assert_eq!(stages(&p, "s", &[]), vec!["s_then_seq".to_string(), "s_then_tree".to_string()]);
    }
}
