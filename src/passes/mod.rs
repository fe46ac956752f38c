//! Analyses over the IR, run in this order by `compile::compile`:
//!
//! 1. [`typecheck`]: the type of every expression and parameter, then
//!    [`wellformed`]: parallel maps nest as the OpenCL thread hierarchy allows;
//! 2. [`address_space`]: where each value lives (Algorithm 1 of CGO 2017);
//! 3. [`barrier`]: which `mapLcl` calls need no barrier after them (5.4);
//! 4. [`launch`]: the OpenCL thread counts (the Lift pattern reference, Section 2.4).
//!
//! [`sizes_fit`] is not part of compilation: it checks concrete sizes
//! against a def before `lift exec` or the harness launches it.
//!
//! Each returns a side table keyed by [`ExprId`](crate::ir::ExprId); none
//! modifies the IR. Memory allocation, views and control-flow
//! simplification happen while lowering (`codegen`), which consults them.

pub mod address_space;
pub mod barrier;
pub mod launch;
mod read_again;
pub mod sizes_fit;
mod type_error;
pub mod typecheck;
pub mod wellformed;

pub use address_space::{AddressSpace, AddressSpaces};
pub use typecheck::{TypeError, Types};
