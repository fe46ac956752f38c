//! Rewrite rules (ICFP 2015, Figures 3 and 4; CGO 2018, Section 4): each
//! rule is a plain named value — what it matches, the parameters it takes,
//! its side conditions and the expression it builds — and a derivation is
//! a list of (rule, position, parameters) steps.
//!
//! Rules work on a def's body in the normal form of
//! [`crate::ir::visit::normalize`] (compositions beta-reduced, patterns in
//! function position eta-expanded), so every place a rule may apply is an
//! expression with a [`Path`]. [`engine`] holds the API the command line
//! and the exploration drive: [`engine::applicable`] lists (rule, position)
//! pairs, [`engine::apply`] applies one.
//!
//! Files: `rule` (the rule type, errors, helpers), one file per family
//! (`algorithmic`, `interchange` (the Lift pattern reference's newer rules), `fold` (moving and cutting sequential reductions, the steps of `tile-mm`), `layout` (`map-swap`, `join-join`: layout steps of `tile-mm`), `zips` (pairs of `tile-mm`'s operands), `bind` (`let`s and copies of `tile-mm`), `relayout` (`reduce-seq-block`), `opencl`, `slide_seq` (the Lift pattern reference's
//! OpenCL rule), `staging` (a work-group's row copied to local memory), `macros`, `tiling` (overlapped tiling of the stencil defs), `matmul` (tiling a matrix product)), `vectorize` (vectorised user
//! functions), `engine`, `derivation` (the text format of derivations).

pub mod algorithmic;
pub mod bind;
pub mod derivation;
pub mod engine;
pub mod fold;
pub mod interchange;
pub mod layout;
pub mod macros;
pub mod matmul;
pub mod opencl;
pub mod pad;
pub mod pad_mask;
pub mod relayout;
mod rule;
pub mod slide_seq;
pub mod staging;
pub mod tiling;
pub mod vectorize;
pub mod zips;

pub use derivation::{
    derive_file, extract, parse_derivation, replay, Derivation, DerivationError, DeriveFileError,
    ExtractError, Replayed, Step, StepAction, StepFault,
};
pub use engine::{applicable, apply, prepare, release, Applied, Candidate, RewriteError};
pub use rule::{Args, Builder, Constraint, Family, ParamSpec, Rule, RuleError, Site};

/// Every rule, algorithmic first, then OpenCL, then macro rules.
pub fn all_rules() -> Vec<&'static Rule> {
    algorithmic::RULES
        .iter()
        .chain(interchange::RULES.iter())
        .chain(pad::RULES.iter())
        .chain(pad_mask::RULES.iter())
        .chain(fold::RULES.iter())
        .chain(layout::RULES.iter())
        .chain(zips::RULES.iter())
        .chain(bind::RULES.iter())
        .chain(opencl::RULES.iter())
        .chain(slide_seq::RULES.iter())
        .chain(staging::RULES.iter())
        .chain(macros::RULES.iter())
        .chain(tiling::RULES.iter())
        .chain(matmul::RULES.iter())
        .collect()
}

/// The rule called `name`.
pub fn find_rule(name: &str) -> Option<&'static Rule> {
    all_rules().into_iter().find(|r| r.name == name)
}
