//! The explored program of the device the run is on (`explored`, or
//! `lift-tuned` in the stencil suite), and other devices' programs run
//! here (`explored@<slug>`, asked for as `explored-other`). The programs
//! and their running are `crate::harness::explored`'s; the search that
//! finds one where none is committed is `crate::harness::search`'s.

use super::{Bench, Failure, Outcome, RunOptions, VariantRunner};
use crate::harness::clock::Timing;
use crate::harness::config::Config;
use crate::harness::explored::{family, run_explored, ExploredSpec};
use crate::harness::search::{self, Found, SearchError, SearchSpec};
use crate::harness::variant::Execution;
use crate::harness::variant_name::{Family, Variant};
use std::path::Path;

pub(super) struct Explored;

impl VariantRunner for Explored {
    fn offers(&self, cfg: &Config, opts: Option<&RunOptions>) -> Vec<Variant> {
        if cfg.explored.is_none() {
            return Vec::new();
        }
        let mut out = vec![Variant::Explored(family(cfg))];
        // Only on request: other devices' programs (performance portability).
        if opts.is_some_and(|o| o.asked_for(&Variant::ExploredOther)) {
            out.push(Variant::ExploredOther);
        }
        out
    }

    fn claims(&self, v: &Variant) -> bool {
        matches!(v, Variant::Explored(_) | Variant::OtherDevice(..) | Variant::ExploredOther)
    }

    fn run(&self, b: &Bench, v: &Variant) -> Vec<Outcome> {
        match v {
            Variant::Explored(f) => vec![own_program(b, *f)],
            Variant::OtherDevice(f, slug) => vec![program(b, slug, *f)],
            Variant::ExploredOther => other_programs(b),
            _ => vec![Outcome::new(v.clone(), Err(Failure::error(format!("`{v}` is no explored variant"))))],
        }
    }
}

/// The `explored-other` rows (performance portability): the program each
/// other device committed, run on this device, as `explored@<slug>`; none
/// where no other device has one.
fn other_programs(b: &Bench) -> Vec<Outcome> {
    let Some(spec) = &b.cfg.explored else { return Vec::new() };
    let own = b.rt.info.slug();
    spec.committed_slugs().into_iter().filter(|s| *s != own).map(|s| program(b, &s, family(b.cfg))).collect()
}

/// The device's own row: its committed program; where it has none, the
/// program a search finds here within `--explore-budget` (cached under the
/// output folder, `search`); where exploring is off or finds nothing,
/// another device's program (the closest by name: same first word of the
/// slug, `pthread` for PoCL's CPUs, `nvidia` for NVIDIA's GPUs), its
/// message saying whose program ran; `skipped` where no device has one.
fn own_program(b: &Bench, fam: Family) -> Outcome {
    let own = b.rt.info.slug();
    let Some(spec) = b.cfg.explored.as_ref().filter(|s| !s.program_for(&own).is_file()) else {
        return program(b, &own, fam);
    };
    let variant = Variant::Explored(fam);
    let why_not = match spec.search.as_ref().map(|search| explore_here(b, spec, search)) {
        Some(Ok(found)) => {
            let result = file_result(b, spec, &found.file, fam);
            return Outcome { variant, result, note_before: Some(found.note) };
        }
        Some(Err(why)) => Some(why.to_string()),
        None => None,
    };
    let Some(other) = stand_in_slug(spec, &own) else {
        return Outcome { note_before: why_not, ..program(b, &own, fam) };
    };
    let mut stand_in = program(b, &other, fam);
    // Another device's program is compared with this device's rows, not
    // with a peer: no host-timed twin.
    if let Ok(e) = &mut stand_in.result {
        e.host_ms.clear();
    }
    let why_not = why_not.map_or(String::new(), |w| format!("{w}; "));
    let note = format!(
        "device `{other}`'s program ({why_not}none is committed for `{own}`: run `lift explore` here for its own)"
    );
    Outcome { variant, result: stand_in.result, note_before: Some(note) }
}

/// The program a search finds on this device (or found in an earlier
/// run), shown on the run's progress bar while it searches.
fn explore_here(b: &Bench, spec: &ExploredSpec, search: &SearchSpec) -> Result<Found, SearchError> {
    let dir = b.opts.report_dir.join("explored").join(&b.cfg.name);
    let run = search::SearchRun {
        cfg: b.cfg,
        spec: search,
        device: &b.rt.info,
        budget: b.opts.explore_budget,
        dir: &dir,
        run_presets: &b.opts.sizes,
        counts: b.opts.counts,
    };
    if let (Some(budget), false) = (b.opts.explore_budget, search::answered(&dir)) {
        let what = format!(
            "{} {}: exploring `{}` for {}s at most (no {} is committed; --explore-budget)",
            b.cfg.name,
            b.preset,
            search.def,
            budget.as_secs(),
            spec.program_for(&b.rt.info.slug()).display()
        );
        // Without a terminal the bar is hidden: a line says why nothing
        // is printed for a while.
        if b.progress.is_hidden() {
            println!("{what}");
        }
        b.progress.set_message(what);
        b.progress.enable_steady_tick(std::time::Duration::from_millis(500));
    }
    let found = search::device_program(&run);
    b.progress.disable_steady_tick();
    found
}

/// The committed device whose program stands in for `own`'s: the first
/// (by name) whose slug starts with the same word, else the first.
fn stand_in_slug(spec: &ExploredSpec, own: &str) -> Option<String> {
    let slugs = spec.committed_slugs();
    let word = |s: &str| s.split('-').next().unwrap_or("").to_string();
    slugs.iter().find(|s| word(s) == word(own)).or(slugs.first()).cloned()
}

/// Device `slug`'s program run on this device: the family's own variant
/// for this device's, `<family>@<slug>` for another's.
fn program(b: &Bench, slug: &str, fam: Family) -> Outcome {
    let variant = if slug == b.rt.info.slug() {
        Variant::Explored(fam)
    } else {
        Variant::OtherDevice(fam, slug.to_string())
    };
    let Some(spec) = &b.cfg.explored else {
        return Outcome::new(variant, Err(Failure::error("no explored section")));
    };
    let file = spec.program_for(slug);
    if !file.is_file() {
        let explore =
            if spec.search.is_some() { " (or let `lift run` explore it: --explore-budget)" } else { "" };
        let message = format!(
            "no explored program for device `{slug}`: run `lift explore` on this device and commit its best program as {}{explore}",
            file.display()
        );
        return Outcome::new(variant, Err(Failure::Skipped { timing: Timing::Profiling, message }));
    }
    Outcome::new(variant, file_result(b, spec, &file, fam))
}

/// The program in `file` run on this device; its row's message names the
/// file (and, for the stencils, whether it tiles).
fn file_result(b: &Bench, spec: &ExploredSpec, file: &Path, fam: Family) -> Result<Execution, Failure> {
    let mut exec = run_explored(b.rt, spec, file, b.workload(), b.opts.counts)
        .map_err(|msg| Failure::error(format!("program {}: {msg}", file.display())))?;
    // Whether the tuned kernel tiles (copies to local memory), from the
    // derivation beside the program (the file holds other defs too).
    let der = std::fs::read_to_string(file.with_extension("derivation")).ok();
    let tiles = match der {
        Some(d) if d.contains("to-local") => "tiled",
        Some(_) => "not tiled",
        None => "tiling unknown (no .derivation)",
    };
    exec.note = Some(match fam {
        Family::LiftTuned => format!("program {}; {tiles}", file.display()),
        Family::Explored => format!("program {}", file.display()),
    });
    Ok(exec)
}
