//! The CLBlast peer: the benchmark's `clblast:` calls on the same device
//! and queue, timed on the host (`crate::harness::clblast`). Without the
//! library the row is `skipped`, not failed.

use super::{Bench, Failure, Outcome, RunOptions, VariantRunner};
use crate::harness::clblast::run_clblast;
use crate::harness::clock::Timing;
use crate::harness::config::Config;
use crate::harness::run_error::Unavailable;
use crate::harness::variant_name::{self, Variant};
use crate::runtime::ClBlast;
use std::cell::OnceCell;

const NAME: &str = variant_name::CLBLAST;

/// The library is loaded once per run, at the first row that needs it.
#[derive(Default)]
pub(super) struct ClBlastRunner {
    lib: OnceCell<Result<ClBlast, Unavailable>>,
}

impl VariantRunner for ClBlastRunner {
    fn offers(&self, cfg: &Config, _: Option<&RunOptions>) -> Vec<Variant> {
        cfg.clblast.iter().map(|_| Variant::Peer(NAME.into())).collect()
    }

    fn claims(&self, v: &Variant) -> bool {
        matches!(v, Variant::Peer(p) if p == NAME)
    }

    fn run(&self, b: &Bench, v: &Variant) -> Vec<Outcome> {
        let Some(spec) = &b.cfg.clblast else {
            return vec![Outcome::new(v.clone(), Err(Failure::error("no clblast section")))];
        };
        let result = match self.lib.get_or_init(|| Ok(ClBlast::load()?)) {
            Err(why) => Err(Failure::Skipped { timing: Timing::Host, message: why.to_string() }),
            Ok(lib) => run_clblast(b.rt, lib, spec, b.workload(), b.opts.counts).map_err(Failure::error),
        };
        vec![Outcome::new(v.clone(), result)]
    }
}
