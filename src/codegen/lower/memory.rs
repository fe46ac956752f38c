//! Memory allocation (CGO 2017, Section 5.2): only calls that write get
//! memory, sized from their type.
//!
//! Memory allocated inside parallel maps is multiplied by those maps'
//! lengths where threads share the address space (global memory: every
//! parallel map; local memory: the `mapLcl`s of the work-group), and the
//! view indexes it with the maps' variables, so threads never share a
//! location. Private memory belongs to one thread and is reused by every
//! iteration of sequential loops, whose results are consumed within the
//! same iteration.

use super::Lowerer;
use crate::arith::{self, ArithExpr};
use crate::codegen::c_type;
use crate::codegen::{CompileError, Unsupported};
use crate::ir::c::{CExpr, Stmt};
use crate::ir::{MapKind, Span};
use crate::passes::AddressSpace;
use crate::types::Type;
use crate::view::{MemKind, Memory, View};
use std::collections::HashMap;
use std::rc::Rc;

/// The arrays of `t` from the outside in: (length, element type).
fn dims(t: &Type) -> Vec<(ArithExpr, Type)> {
    let mut out = Vec::new();
    let mut t = t;
    while let Type::Array(e, n) = t {
        out.push((n.clone(), (**e).clone()));
        t = e;
    }
    out
}

/// Which of `t`'s arrays are its rows (`codegen::banks`): the innermost of
/// length other than one, where another array encloses it.
fn row_dim(t: &Type) -> Option<usize> {
    let d = dims(t);
    let i = d.iter().rposition(|(n, _)| n.as_cst() != Some(1))?;
    (i > 0).then_some(i)
}

/// The constant length of `t`'s rows, if it has rows.
fn innermost_row(t: &Type) -> Option<i64> {
    row_dim(t).and_then(|i| dims(t)[i].0.as_cst())
}

/// `t` with `p` more elements in each of its rows (`[[T]c]r` to
/// `[[T]c+p]r`); a type without rows stays as it is.
fn padded_rows(t: &Type, p: i64) -> Type {
    fn longer(t: &Type, depth: usize, p: i64) -> Type {
        match t {
            Type::Array(e, n) if depth == 0 => {
                Type::array((**e).clone(), ArithExpr::add(n.clone(), ArithExpr::Cst(p)))
            }
            Type::Array(e, n) => Type::array(longer(e, depth - 1, p), n.clone()),
            other => other.clone(),
        }
    }
    match row_dim(t) {
        Some(i) => longer(t, i, p),
        None => t.clone(),
    }
}

/// A global buffer the kernel needs besides its inputs and output.
#[derive(Clone, Debug, PartialEq)]
pub struct GlobalTemp {
    pub name: String,
    pub c_elem: String,
    pub bytes: ArithExpr,
    /// A `local` array whose length is known only at launch (a row staged
    /// by `row-to-local`): a `local T*` kernel argument, its `bytes` set
    /// by the launch from the sizes, instead of a global buffer.
    pub local: bool,
}

/// Most scalars one private array may hold (16 KiB of floats): PoCL runs
/// a work-item on a thread whose stack 65,536 floats overflowed, and GPUs
/// spill far smaller arrays. The benchmarks' largest holds 80 (20
/// `float4`s); `docs/LANGUAGE.md`.
pub(crate) const MAX_PRIVATE_SCALARS: i64 = 4096;

/// Scalars in one value of type `t`.
fn scalars(t: &Type) -> i64 {
    match t {
        Type::Scalar(_) => 1,
        Type::Vector(_, w) => i64::from(*w),
        Type::Tuple(ts) => ts.iter().map(scalars).sum(),
        Type::Array(e, n) => n.as_cst().unwrap_or(1).saturating_mul(scalars(e)),
    }
}

impl Lowerer<'_> {
    /// Allocates memory for a value of type `ty` in `space`; returns the
    /// view to write (and later read) it through.
    pub(crate) fn alloc(
        &mut self,
        ty: &Type,
        space: AddressSpace,
        span: Span,
    ) -> Result<Rc<View>, CompileError> {
        self.note_tuple(ty);
        let elem = ty.base_elem().clone();
        let c_elem = c_type(&elem);
        let shared = self.shared_maps(space);
        let mut full = ty.clone();
        for (_, n) in shared.iter().rev() {
            full = Type::array(full, n.clone());
        }
        let count = self.decide(&full.lengths().into_iter().fold(ArithExpr::Cst(1), ArithExpr::mul));
        let (prefix, kind) = match (space, ty) {
            (AddressSpace::Private, Type::Array(..)) => ("priv", MemKind::Array),
            (AddressSpace::Private, _) => ("priv", MemKind::Variable),
            (AddressSpace::Local, _) => ("loc", MemKind::Array),
            (AddressSpace::Global, _) => ("glob", MemKind::Buffer),
        };
        let name = self.names.fresh(prefix);
        // Padded rows (`codegen::banks`): the view flattens indices with
        // the longer rows, the declaration holds them.
        if space == AddressSpace::Local {
            self.locals.entry(name.clone()).or_default().row = innermost_row(&full);
        }
        let (full, count) = match (space, self.inp.pads.get(&name)) {
            (AddressSpace::Local, Some(&p)) => {
                let padded = padded_rows(&full, p);
                let count =
                    self.decide(&padded.lengths().into_iter().fold(ArithExpr::Cst(1), ArithExpr::mul));
                (padded, count)
            }
            _ => (full, count),
        };
        match space {
            AddressSpace::Private => {
                let len = match kind {
                    MemKind::Variable => None,
                    MemKind::Array | MemKind::Buffer => Some(self.private_len(&count, &elem, ty, span)?),
                };
                self.emit(Stmt::Decl {
                    qualifier: None,
                    ty: elem.clone(),
                    pointer: false,
                    name: name.clone(),
                    len,
                    init: None,
                });
            }
            AddressSpace::Local => match count.as_cst() {
                Some(c) => self.local_decls.push(Stmt::Decl {
                    qualifier: Some("local"),
                    ty: elem.clone(),
                    pointer: false,
                    name: name.clone(),
                    len: Some(ArithExpr::Cst(c)),
                    init: None,
                }),
                None => self.local_argument(&name, &elem, &c_elem, count),
            },
            AddressSpace::Global => {
                let bytes = self.global_bytes(count, &elem);
                self.temps.push(GlobalTemp {
                    name: name.clone(),
                    c_elem: c_elem.clone(),
                    bytes,
                    local: false,
                });
            }
        }
        let mem = Rc::new(Memory { name, space, elem, kind });
        let mut v = View::Mem { mem, ty: full };
        for (var, _) in &shared {
            v = View::access(var.clone(), v);
        }
        Ok(Rc::new(v))
    }

    /// Local memory of a length the sizes give: a `local` argument whose
    /// bytes the launch sets. It is declared as `float4*`, so that the
    /// launch aligns it to 16 bytes as the static local arrays are (vector
    /// accesses go through cast pointers), and seen as `T*` from the
    /// kernel's top.
    fn local_argument(&mut self, name: &str, elem: &Type, c_elem: &str, count: ArithExpr) {
        let bytes = self.global_bytes(count, elem);
        let arg = format!("{name}_arg");
        self.temps.push(GlobalTemp { name: arg.clone(), c_elem: "float4".into(), bytes, local: true });
        self.local_decls.push(Stmt::Decl {
            qualifier: Some("local"),
            ty: elem.clone(),
            pointer: true,
            name: name.to_string(),
            len: None,
            init: Some(CExpr::raw(format!("(local {c_elem}*){arg}"))),
        });
    }

    /// The enclosing parallel maps whose threads share memory in `space`
    /// (each gets its own part): their variables and lengths.
    fn shared_maps(&self, space: AddressSpace) -> Vec<(ArithExpr, ArithExpr)> {
        let shares = |k: MapKind| match space {
            AddressSpace::Private => false,
            AddressSpace::Local => matches!(k, MapKind::Lcl(_)),
            AddressSpace::Global => matches!(k, MapKind::Glb(_) | MapKind::Wrg(_) | MapKind::Lcl(_)),
        };
        self.maps.iter().filter(|m| shares(m.kind)).map(|m| (m.var.clone(), range_len(&m.var))).collect()
    }

    /// The length of a private array of `count` elements: a constant, and
    /// at most [`MAX_PRIVATE_SCALARS`] scalars.
    fn private_len(
        &self,
        count: &ArithExpr,
        elem: &Type,
        ty: &Type,
        span: Span,
    ) -> Result<ArithExpr, CompileError> {
        match count.as_cst() {
            Some(c) if c.saturating_mul(scalars(elem)) > MAX_PRIVATE_SCALARS => self.unsupported(
                span,
                Unsupported::PrivateTooLarge { count: c, elem: c_type(elem), max: MAX_PRIVATE_SCALARS },
            ),
            Some(c) => Ok(ArithExpr::Cst(c)),
            None => {
                self.unsupported(span, Unsupported::PrivateUnsized { ty: ty.clone(), count: count.clone() })
            }
        }
    }

    /// The bytes of a global temporary of `count` elements. Inside an
    /// iterate the length is a run-time variable: the buffer gets room for
    /// the longest input, the first (a temporary's length grows with its
    /// input's). Found by the random programs: the size named an unbound
    /// `iter_len_k`.
    fn global_bytes(&self, mut count: ArithExpr, elem: &Type) -> ArithExpr {
        let longest: HashMap<String, ArithExpr> = self
            .inp
            .types
            .iterate_vars
            .values()
            .filter_map(|v| {
                let stop = v.range.stop.as_ref()?;
                Some((v.name.clone(), ArithExpr::sub((**stop).clone(), ArithExpr::Cst(1))))
            })
            .collect();
        // (Nested iterates: an inner bound names an outer length.)
        for _ in 0..=longest.len() {
            count = count.substitute(&longest);
        }
        arith::simplify(&ArithExpr::mul(count, ArithExpr::Cst(elem.scalar_like_bytes().unwrap_or(4))))
    }
}

/// The length of a map variable's range (its map's length).
fn range_len(var: &ArithExpr) -> ArithExpr {
    match var {
        ArithExpr::Var(v) => match &v.range.stop {
            Some(stop) => arith::simplify(&ArithExpr::sub((**stop).clone(), (*v.range.start).clone())),
            None => ArithExpr::Cst(1),
        },
        _ => ArithExpr::Cst(1),
    }
}
