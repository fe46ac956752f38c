//! Validation, below the search and the harness: where inputs and the
//! expected result come from (`oracle`: random inputs and the interpreter,
//! or a benchmark's own generators and gold through a [`Reference`]), and
//! the element-wise comparison of a kernel's output with it (`compare`).

mod compare;
mod cost;
mod oracle;
mod rng;

pub use compare::{all_nan, compare, compare_f64, compare_scaled, Check};
pub use cost::{interp_elements, userfun_ops};
pub use oracle::{
    gold, input_counts, interpreter_rtol, longest_at, longest_reduction, make_inputs, reduction_lengths,
    Expected, InputSizeError, Oracle, OracleError, Reference, ReferenceError,
};
pub use rng::SplitMix64;
