//! The module of a generated kernel, what the code generator's lowering
//! produces and `print::Writer` writes: its preamble, parameters and body.
//! The body is in the one C tree (`ast::Stmt`, `ast::CExpr`) that user
//! functions are parsed into; only the frame around it is the kernel's own.

use super::ast::Stmt;

/// The alignment of every local array (`print` declares it): vectors of
/// up to this many bytes in local memory are read and written through a
/// cast pointer (`codegen::lower::access::through_cast`).
pub const LOCAL_ALIGN_BYTES: u32 = 16;

/// A kernel parameter: its C type (with qualifiers) and name.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub ty: String,
    pub name: String,
}

/// A complete OpenCL program: declarations, then one kernel.
#[derive(Clone, Debug, PartialEq)]
pub struct Module {
    /// Type definitions and functions, as C text, in order.
    pub preamble: Vec<String>,
    pub kernel_name: String,
    /// The work-group size the kernel must be launched with, when known
    /// when compiling: `reqd_work_group_size`, which lets the driver plan
    /// registers and barriers for exactly that many work-items.
    pub work_group_size: Option<[i64; 3]>,
    pub params: Vec<Param>,
    pub body: Vec<Stmt>,
}
