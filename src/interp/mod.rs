//! The reference interpreter: evaluates any Lift program, high-level or
//! low-level, on the CPU from the patterns' meanings (every map variant is a
//! map; address-space wrappers are the identity). It is the oracle of tests
//! and of the harness's validation.

mod value;

pub use value::Value;
