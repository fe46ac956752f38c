//! The Halide peer of the stencil suite: an executable compiled ahead of
//! time, run on the benchmark's inputs (`crate::harness::halide`). Without
//! an executable the row is `skipped`. Its time is the device figure where
//! the executable gave one (`timing` names its clock), else the host one;
//! the message keeps the host figure.

use super::{Bench, Failure, Outcome, RunOptions, VariantRunner};
use crate::harness::clock::Timing;
use crate::harness::config::Config;
use crate::harness::halide::{run_halide, PeerRun, PeerTarget, Scratch};
use crate::harness::variant::Execution;
use crate::harness::variant_name::{self, Variant};

const NAME: &str = variant_name::HALIDE;

pub(super) struct Halide;

impl VariantRunner for Halide {
    fn offers(&self, cfg: &Config, _: Option<&RunOptions>) -> Vec<Variant> {
        cfg.halide.iter().map(|_| Variant::Peer(NAME.into())).collect()
    }

    fn claims(&self, v: &Variant) -> bool {
        matches!(v, Variant::Peer(p) if p == NAME)
    }

    fn run(&self, b: &Bench, v: &Variant) -> Vec<Outcome> {
        vec![Outcome::new(v.clone(), execute(b))]
    }
}

fn execute(b: &Bench) -> Result<Execution, Failure> {
    let Some(spec) = &b.cfg.halide else {
        return Err(Failure::error("no halide section"));
    };
    let exe =
        spec.executable().map_err(|e| Failure::Skipped { timing: Timing::Host, message: e.to_string() })?;
    let scratch = Scratch::new().map_err(|e| Failure::error(format!("scratch folder: {e}")))?;
    let reps = b.opts.counts.runs.max(1);
    let info = &b.rt.info;
    let target = if info.is_gpu() {
        PeerTarget::Gpu { platform: info.platform_name.clone(), icd_filenames: b.opts.icd_filenames.clone() }
    } else {
        PeerTarget::Cpu
    };
    let run = run_halide(spec, &exe, &target, b.workload(), reps, scratch.path())
        .map_err(|e| Failure::Error { timing: Timing::Host, message: e.to_string() })?;
    let (ms, timing) = run.device.unwrap_or((run.median_ms, Timing::Host));
    let note = peer_note(&run);
    let mut exec = Execution::timed(vec![ms], timing, run.output, &spec.output);
    // The executable reports only its median: no spread, and its own run count.
    exec.median_of = Some(reps);
    exec.note = Some(note);
    Ok(exec)
}

/// How the peer's row was timed, for its message.
fn peer_note(run: &PeerRun) -> String {
    let exe = run.executable.display();
    let clock = match &run.device {
        Some((_, Timing::CudaEvents)) => format!(
            "timed by CUDA events around each kernel in {exe} (host-timed median {:.6} ms)",
            run.median_ms
        ),
        Some(_) => {
            format!("timed by OpenCL profiling events in {exe} (host-timed median {:.6} ms)", run.median_ms)
        }
        None => format!("host-timed by {exe}"),
    };
    match &run.schedule {
        Some(s) => format!("{clock}, schedule {s}"),
        None => clock,
    }
}
