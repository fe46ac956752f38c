//! Printing a generated kernel (`kernel::Module`) as OpenCL C, in the
//! kernel layout: every branch and loop body braced, local arrays aligned.
//! Its statements are the tree a body is parsed into (`ast::Stmt`); the
//! user-only forms never reach it, since the generator makes none.

use super::expr;
use crate::ir::c::ast::Stmt;
use crate::ir::c::kernel::{Module, LOCAL_ALIGN_BYTES};
use crate::types::c_type;
use std::fmt::{self, Write};

/// Writes a module's source text into a `fmt::Write`.
pub struct Writer<'w, W: Write> {
    out: &'w mut W,
    indent: usize,
}

impl<'w, W: Write> Writer<'w, W> {
    pub fn new(out: &'w mut W) -> Self {
        Writer { out, indent: 0 }
    }

    pub fn module(&mut self, m: &Module) -> fmt::Result {
        for p in &m.preamble {
            writeln!(self.out, "{p}")?;
        }
        if let Some([x, y, z]) = m.work_group_size {
            writeln!(self.out, "__attribute__((reqd_work_group_size({x}, {y}, {z})))")?;
        }
        write!(self.out, "kernel void {}(", m.kernel_name)?;
        for (i, p) in m.params.iter().enumerate() {
            if i > 0 {
                write!(self.out, ", ")?;
            }
            write!(self.out, "{} {}", p.ty, p.name)?;
        }
        writeln!(self.out, ") {{")?;
        self.indent += 1;
        self.stmts(&m.body)?;
        self.indent -= 1;
        writeln!(self.out, "}}")
    }

    fn line(&mut self) -> fmt::Result {
        for _ in 0..self.indent {
            self.out.write_str("  ")?;
        }
        Ok(())
    }

    fn stmts(&mut self, ss: &[Stmt]) -> fmt::Result {
        for s in ss {
            self.stmt(s)?;
        }
        Ok(())
    }

    fn block(&mut self, ss: &[Stmt]) -> fmt::Result {
        writeln!(self.out, "{{")?;
        self.indent += 1;
        self.stmts(ss)?;
        self.indent -= 1;
        self.line()?;
        write!(self.out, "}}")
    }

    fn stmt(&mut self, s: &Stmt) -> fmt::Result {
        self.line()?;
        match s {
            Stmt::Decl { qualifier, ty, pointer, name, len, init } => {
                if let Some(q) = qualifier {
                    write!(self.out, "{q} ")?;
                }
                let star = if *pointer { "*" } else { "" };
                write!(self.out, "{}{star} {name}", c_type(ty))?;
                if let Some(l) = len {
                    write!(self.out, "[{l}]")?;
                    // Vectors in local memory are read through cast
                    // pointers (`codegen::lower::access::through_cast`).
                    if *qualifier == Some("local") {
                        write!(self.out, " __attribute__((aligned({})))", LOCAL_ALIGN_BYTES)?;
                    }
                }
                if let Some(i) = init {
                    write!(self.out, " = {}", expr(i))?;
                }
                writeln!(self.out, ";")
            }
            Stmt::Assign { target, op, value } => {
                writeln!(self.out, "{} {} {};", expr(target), op.text(), expr(value))
            }
            Stmt::Expr(e) => writeln!(self.out, "{};", expr(e)),
            Stmt::CountedFor { var, init, bound, step, body } => {
                write!(
                    self.out,
                    "for (int {var} = {}; {var} < {}; {var} += {}) ",
                    expr(init),
                    expr(bound),
                    expr(step)
                )?;
                self.block(body)?;
                writeln!(self.out)
            }
            Stmt::If { cond, then, otherwise } => {
                write!(self.out, "if ({}) ", expr(cond))?;
                self.block(then)?;
                if !otherwise.is_empty() {
                    write!(self.out, " else ")?;
                    self.block(otherwise)?;
                }
                writeln!(self.out)
            }
            Stmt::Block(ss) => {
                self.block(ss)?;
                writeln!(self.out)
            }
            Stmt::Barrier { local, global } => {
                let flags = match (local, global) {
                    (true, true) => "CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE",
                    (false, true) => "CLK_GLOBAL_MEM_FENCE",
                    _ => "CLK_LOCAL_MEM_FENCE",
                };
                writeln!(self.out, "barrier({flags});")
            }
            Stmt::Comment(c) => writeln!(self.out, "// {c}"),
            Stmt::For { .. } | Stmt::Return(_) => s.user_only(),
        }
    }
}
