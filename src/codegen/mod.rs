//! OpenCL code generation (CGO 2017, Section 5.5).
//!
//! [`lower`] walks the IR along the data flow, allocating memory for the
//! calls that write, building views, and emitting loops for maps and
//! reductions into a kernel of the C syntax tree ([`crate::ir::c::kernel`]);
//! [`crate::ir::c::print`] writes it as C text. Names come from a [`names::NameGen`] passed by value, so the same
//! program always gives the same kernel text.

pub mod banks;
pub mod coalescing;
pub mod ctypes;
mod error;
pub mod lower;
pub mod names;
mod options;
pub mod prefetch;
mod unsupported;

pub use ctypes::c_type;
pub use error::CompileError;
pub use options::CompileOptions;
pub use unsupported::Unsupported;
