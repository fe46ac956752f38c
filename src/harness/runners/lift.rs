//! The config's Lift program at each optimisation level, and its named
//! Lift programs (`lift-<name>`, built at level `all`).

use super::{Bench, Failure, Outcome, RunOptions, VariantRunner};
use crate::harness::config::Config;
use crate::harness::variant::run_lift;
use crate::harness::variant_name::Variant;

pub(super) struct Lift;

impl VariantRunner for Lift {
    fn offers(&self, cfg: &Config, _: Option<&RunOptions>) -> Vec<Variant> {
        if cfg.lift.is_none() {
            return Vec::new();
        }
        // Checked at load: each is a level or `lift-<name>`.
        cfg.variants.iter().filter_map(|v| Variant::parse(v)).collect()
    }

    fn claims(&self, v: &Variant) -> bool {
        matches!(v, Variant::Level(_) | Variant::Named(_))
    }

    fn run(&self, b: &Bench, v: &Variant) -> Vec<Outcome> {
        let result = run_lift(b.rt, b.workload(), &v.to_string(), b.opts.counts).map_err(Failure::error);
        vec![Outcome::new(v.clone(), result)]
    }
}
