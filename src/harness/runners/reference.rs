//! The hand-written OpenCL reference of a benchmark.

use super::{Bench, Failure, Outcome, RunOptions, VariantRunner};
use crate::harness::config::Config;
use crate::harness::variant::run_reference;
use crate::harness::variant_name::Variant;

pub(super) struct Reference;

impl VariantRunner for Reference {
    fn offers(&self, cfg: &Config, _: Option<&RunOptions>) -> Vec<Variant> {
        cfg.reference.iter().map(|_| Variant::Reference).collect()
    }

    fn claims(&self, v: &Variant) -> bool {
        *v == Variant::Reference
    }

    fn run(&self, b: &Bench, v: &Variant) -> Vec<Outcome> {
        let result = if b.cfg.reference.is_none() {
            Err(Failure::error("no reference"))
        } else {
            run_reference(b.rt, b.workload(), b.opts.counts).map_err(Failure::error)
        };
        vec![Outcome::new(v.clone(), result)]
    }
}
