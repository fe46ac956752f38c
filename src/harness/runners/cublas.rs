//! The cuBLAS peer (NVIDIA devices): the benchmark's `cublas:` calls
//! through the CUDA runtime, timed by CUDA events
//! (`crate::harness::cublas`). On another vendor's device, or without the
//! libraries, the row is `skipped`.

use super::{Bench, Failure, Outcome, RunOptions, VariantRunner};
use crate::harness::clock::Timing;
use crate::harness::config::Config;
use crate::harness::cublas::{is_nvidia, run_cublas};
use crate::harness::run_error::Unavailable;
use crate::harness::variant_name::{self, Variant};
use crate::runtime::CuBlas;
use std::cell::OnceCell;

const NAME: &str = variant_name::CUBLAS;

/// The libraries are loaded once per run, at the first row that needs them.
#[derive(Default)]
pub(super) struct CuBlasRunner {
    lib: OnceCell<Result<CuBlas, Unavailable>>,
}

fn load(b: &Bench) -> Result<CuBlas, Unavailable> {
    let info = &b.rt.info;
    if !is_nvidia(&info.vendor, &info.platform_name) {
        return Err(Unavailable::NotNvidia(info.name.clone()));
    }
    Ok(CuBlas::load(b.opts.cublas_dir.as_slice())?)
}

impl VariantRunner for CuBlasRunner {
    fn offers(&self, cfg: &Config, _: Option<&RunOptions>) -> Vec<Variant> {
        cfg.cublas.iter().map(|_| Variant::Peer(NAME.into())).collect()
    }

    fn claims(&self, v: &Variant) -> bool {
        matches!(v, Variant::Peer(p) if p == NAME)
    }

    fn run(&self, b: &Bench, v: &Variant) -> Vec<Outcome> {
        let Some(spec) = &b.cfg.cublas else {
            return vec![Outcome::new(v.clone(), Err(Failure::error("no cublas section")))];
        };
        let result = match self.lib.get_or_init(|| load(b)) {
            Err(why) => Err(Failure::Skipped { timing: Timing::CudaEvents, message: why.to_string() }),
            Ok(lib) => run_cublas(lib, spec, b.workload(), b.opts.counts).map_err(Failure::error),
        };
        vec![Outcome::new(v.clone(), result)]
    }
}
