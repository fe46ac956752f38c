//! What a compilation is asked for: the optimisation switches and what is
//! known at compile time.

use std::collections::BTreeMap;

/// Which optimisations run; each can be switched off on its own (these are
/// the bars of the paper's Figure 8). The kernel is correct either way.
#[derive(Clone, Debug)]
pub struct CompileOptions {
    /// Simplify array indices with the range-aware rules (Section 5.3).
    pub arith_simplify: bool,
    /// Remove barriers that no data sharing needs (Section 5.4).
    pub barrier_elim: bool,
    /// Turn loops that run once into blocks, at most once into `if`s (5.5).
    pub cf_simplify: bool,
    /// Load the next chunk of a tiled loop into registers while this one
    /// is computed (`codegen::prefetch`; not one of the paper's switches).
    pub prefetch: bool,
    /// Pad the rows of local arrays that work-items would otherwise reach
    /// on one bank (`codegen::banks`; not one of the paper's switches).
    pub pad_local: bool,
    /// Sizes known at compile time (`N = 4096`); others stay symbolic.
    pub sizes: BTreeMap<String, i64>,
    /// Local size per dimension; inferred when `None`.
    pub local: Option<[i64; 3]>,
    /// Global size per dimension; inferred when `None`.
    pub global: Option<[i64; 3]>,
    /// With `local` given and `global` inferred: launch the inferred count
    /// rounded up to whole work-groups, every map keeping its bound check
    /// (`compile::compile`). Off, a count `local` does not divide cannot be
    /// launched; on, kernels whose count would divide lose the checks'
    /// removal at sizes not known at compile time, so callers ask for it
    /// only where the count does not divide at the sizes they run.
    pub whole_groups: bool,
}

impl Default for CompileOptions {
    fn default() -> Self {
        CompileOptions {
            arith_simplify: true,
            barrier_elim: true,
            cf_simplify: true,
            prefetch: true,
            pad_local: true,
            sizes: BTreeMap::new(),
            local: None,
            global: None,
            whole_groups: false,
        }
    }
}
