//! Lowering: from the typed IR to an OpenCL syntax tree.
//!
//! `expr` evaluates an expression given an optional *output view* (where
//! its result must be written, when a consumer further up already knows)
//! and returns the *input view* through which its result is read. Calls
//! that write (user functions, `id`, maps, reductions, iterations) write to
//! the output view or, without one, to freshly allocated memory; layout
//! patterns only build views.

mod access;
pub(crate) use unroll::{instantiate, names_outside_indices};
mod bounds;
mod divergence;
mod injective;
mod iterate;
mod loops;
mod memory;
mod patterns;
mod slide_seq;
mod unroll;

use super::names::NameGen;
use crate::arith::{ArithExpr, CmpOp};
use crate::codegen::{CompileError, CompileOptions, Unsupported};
use crate::ir::c::Stmt;
use crate::ir::{
    layout_pattern, Expr, ExprId, ExprKind, FunDecl, FunKind, Literal, MapKind, ParamId, Program, Span,
};
use crate::passes::{AddressSpace, AddressSpaces, Types};
use crate::types::Type;
use crate::view::View;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

pub use memory::GlobalTemp;

/// What the lowering needs from the analyses.
pub struct Inputs<'a> {
    pub program: &'a Program,
    pub types: &'a Types,
    pub spaces: &'a AddressSpaces,
    pub no_barrier: &'a HashSet<ExprId>,
    pub opts: &'a CompileOptions,
    /// Local arrays (by name) whose rows get this many more scalars
    /// (`codegen::banks`).
    pub pads: &'a std::collections::BTreeMap<String, i64>,
    /// Launch sizes used for control-flow reasoning.
    pub global: [ArithExpr; 3],
    pub local: Option<[ArithExpr; 3]>,
}

/// The lowered kernel body and what its declaration needs.
pub struct Lowered {
    pub body: Vec<Stmt>,
    pub temps: Vec<GlobalTemp>,
    /// Vectorised versions of user functions that `mapVec` needs: (function, width).
    pub vector_funs: Vec<(crate::ir::UserFunId, u8)>,
    /// Tuple types used anywhere in the kernel.
    pub tuple_types: Vec<Type>,
    /// What the padding of local rows needs to know (`codegen::banks`).
    pub locals: std::collections::BTreeMap<String, crate::codegen::banks::LocalArray>,
}

/// An enclosing map, innermost last.
#[derive(Clone, Debug)]
struct MapCtx {
    kind: MapKind,
    var: ArithExpr,
}

/// One application of a function to argument views: their types, the
/// result's type and where the result goes.
pub(crate) struct Call<'c> {
    pub(crate) args: Vec<Rc<View>>,
    pub(crate) arg_types: &'c [Type],
    /// The result type.
    pub(crate) ty: &'c Type,
    /// Where the result must be written, when a consumer further up knows.
    pub(crate) out: Option<Rc<View>>,
    /// Where a fresh result is allocated.
    pub(crate) space: AddressSpace,
    /// The call expression, when the call is written in the program (the
    /// barrier analysis names calls by it).
    pub(crate) id: Option<ExprId>,
    pub(crate) span: Span,
}

impl<'c> Call<'c> {
    /// A call the lowering makes itself (a map's function on one element,
    /// a reduction's on the accumulator and one element): no expression id.
    pub(crate) fn inner(
        args: Vec<Rc<View>>,
        arg_types: &'c [Type],
        ty: &'c Type,
        out: Option<Rc<View>>,
        space: AddressSpace,
        span: Span,
    ) -> Self {
        Call { args, arg_types, ty, out, space, id: None, span }
    }

    /// The first argument.
    pub(crate) fn arg(&self) -> Result<Rc<View>, CompileError> {
        self.args
            .first()
            .cloned()
            .ok_or_else(|| CompileError::Internal("pattern applied to no argument".into()))
    }

    /// The first argument's type.
    pub(crate) fn arg_ty(&self) -> Result<&'c Type, CompileError> {
        self.arg_types.first().ok_or_else(|| CompileError::Internal("pattern argument has no type".into()))
    }
}

pub(crate) struct Lowerer<'a> {
    inp: Inputs<'a>,
    names: NameGen,
    env: HashMap<ParamId, Rc<View>>,
    maps: Vec<MapCtx>,
    /// Statement blocks being built; the innermost is last.
    blocks: Vec<Vec<Stmt>>,
    /// `local` declarations, hoisted to the kernel's top.
    local_decls: Vec<Stmt>,
    temps: Vec<GlobalTemp>,
    vector_funs: Vec<(crate::ir::UserFunId, u8)>,
    tuple_types: Vec<Type>,
    /// Loop variables that index private arrays (their loops get unrolled).
    private_index_vars: HashSet<String>,
    /// How many thread-dependent loops or guards enclose the current point;
    /// barriers are only emitted where it is zero.
    divergence: usize,
    /// The outermost thread-dependent `mapLcl` loop, while lowering inside
    /// it: a `mapLcl` after one that left out a barrier there is refused
    /// (`loops::barrier_after`), and so is any statement after it in the
    /// loop's body (`divergence::misplaced`).
    divergent_loop: Option<divergence::DivergentLoop>,
    /// Simplifications and proofs already made: unrolled copies and repeated
    /// reads ask the same questions.
    memo: crate::arith::Memo,
    /// Loop iterations unrolled so far (bounded by `loops::MAX_UNROLLED`).
    unrolled_iters: usize,
    /// The lengths each `iterate`'s length variable (`iter_len_k`) takes,
    /// for the bounds of index functions in its body (`bounds`).
    iter_lens: HashMap<String, Vec<ArithExpr>>,
    /// Sizes the def's own splits divide (`bounds::size_divisors`).
    size_divisors: HashMap<String, i64>,
    /// Per local array: its row length and the vector widths it is read
    /// and written with.
    locals: std::collections::BTreeMap<String, crate::codegen::banks::LocalArray>,
}

/// Lowers the body of a `def` whose result goes to `output`.
pub fn lower(
    inp: Inputs<'_>,
    params: &[(ParamId, Rc<View>)],
    body: &Expr,
    output: Rc<View>,
) -> Result<Lowered, CompileError> {
    let size_divisors = bounds::size_divisors(&inp);
    let mut l = Lowerer {
        inp,
        names: NameGen::default(),
        env: params.iter().cloned().collect(),
        maps: Vec::new(),
        blocks: vec![Vec::new()],
        local_decls: Vec::new(),
        temps: Vec::new(),
        vector_funs: Vec::new(),
        tuple_types: Vec::new(),
        private_index_vars: HashSet::new(),
        divergence: 0,
        divergent_loop: None,
        memo: crate::arith::Memo::default(),
        unrolled_iters: 0,
        iter_lens: HashMap::new(),
        size_divisors,
        locals: Default::default(),
    };
    l.expr(body, Some(output))?;
    let mut stmts = std::mem::take(&mut l.local_decls);
    stmts.extend(l.blocks.pop().unwrap_or_default());
    if l.inp.opts.arith_simplify {
        stmts = unroll::prune_selections(&stmts, &|op, a, b| l.truth(op, a, b));
    }
    Ok(Lowered {
        body: stmts,
        temps: l.temps,
        vector_funs: l.vector_funs,
        tuple_types: l.tuple_types,
        locals: l.locals,
    })
}

/// Whether a function only rearranges data (no writes): such a function,
/// mapped with the high-level `map`, compiles to views alone.
pub fn is_layout_only(f: &FunDecl) -> bool {
    use crate::ir::Pattern as P;
    match &f.kind {
        FunKind::UserFun(_) => false,
        FunKind::Lambda(l) => expr_layout_only(&l.body),
        FunKind::Pattern(p) => match p {
            P::Map { kind: MapKind::Map, f } => is_layout_only(f),
            // A scatter reorders writes only: reading through it is refused.
            p @ layout_pattern!() => !matches!(p, P::Scatter(_)),
            P::Generate { f, .. } => matches!(f.kind, FunKind::UserFun(_)) || is_layout_only(f),
            P::Map { .. }
            | P::MapVec { .. }
            | P::Reduce { .. }
            | P::PartRed { .. }
            | P::Iterate { .. }
            | P::SlideSeq { .. }
            | P::ToGlobal(_)
            | P::ToLocal(_)
            | P::ToPrivate(_)
            | P::Id => false,
        },
    }
}

fn expr_layout_only(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Literal(_) | ExprKind::Param(_) => true,
        ExprKind::Call(f, args) => is_layout_only(f) && args.iter().all(expr_layout_only),
    }
}

/// C text of a literal.
pub fn literal_c(l: &Literal) -> String {
    match l {
        Literal::Float(f) => float_c(*f),
        Literal::Int(i) => i.to_string(),
        Literal::Tuple(ls) => {
            let ty = super::c_type(&l.ty());
            let parts: Vec<String> = ls.iter().map(literal_c).collect();
            format!("({ty}){{{}}}", parts.join(", "))
        }
    }
}

/// A float literal that OpenCL C reads back exactly.
pub fn float_c(f: f32) -> String {
    if f.is_infinite() {
        return if f > 0.0 { "INFINITY".into() } else { "(-INFINITY)".into() };
    }
    if f.is_nan() {
        return "NAN".into();
    }
    let s = format!("{f:?}");
    let s = if s.contains('e') || s.contains('.') { s } else { format!("{s}.0") };
    format!("{s}f")
}

impl<'a> Lowerer<'a> {
    pub(crate) fn emit(&mut self, s: Stmt) {
        if let Some(b) = self.blocks.last_mut() {
            b.push(s);
        }
    }

    /// Runs `f` collecting the statements it emits into a new block.
    pub(crate) fn in_block<T>(
        &mut self,
        f: impl FnOnce(&mut Self) -> Result<T, CompileError>,
    ) -> Result<(Vec<Stmt>, T), CompileError> {
        self.blocks.push(Vec::new());
        let r = f(self);
        let b = self.blocks.pop().unwrap_or_default();
        Ok((b, r?))
    }

    pub(crate) fn unsupported<T>(&self, span: Span, reason: Unsupported) -> Result<T, CompileError> {
        Err(CompileError::unsupported(reason, span))
    }

    pub(crate) fn note_tuple(&mut self, t: &Type) {
        let mut ts = Vec::new();
        super::ctypes::collect_tuples(t, &mut ts);
        for t in ts {
            if !self.tuple_types.contains(&t) {
                self.tuple_types.push(t);
            }
        }
    }

    /// Evaluates `e`, writing to `out` when given; returns the view to read
    /// the result through.
    pub(crate) fn expr(&mut self, e: &Expr, out: Option<Rc<View>>) -> Result<Rc<View>, CompileError> {
        let ty = self.inp.types.of(e).clone();
        self.note_tuple(&ty);
        match &e.kind {
            ExprKind::Literal(l) => {
                let v = Rc::new(View::Value { c: literal_c(l), ty: ty.clone() });
                self.finish_value(v, out, &ty, e.span)
            }
            ExprKind::Param(p) => {
                let v = self.env.get(p).cloned().ok_or_else(|| {
                    CompileError::Internal(format!("parameter {p:?} has no view (used outside its lambda?)"))
                })?;
                self.finish_value(v, out, &ty, e.span)
            }
            ExprKind::Call(f, args) => self.call(e, f, args, &ty, out),
        }
    }

    /// A value that is available as a view (a parameter, a literal, a
    /// rearranged array): copied to `out` if one is given.
    pub(crate) fn finish_value(
        &mut self,
        v: Rc<View>,
        out: Option<Rc<View>>,
        ty: &Type,
        span: Span,
    ) -> Result<Rc<View>, CompileError> {
        match out {
            None => Ok(v),
            Some(o) => {
                if let Type::Array(..) = ty {
                    return self.unsupported(span, Unsupported::PassedOnWritten { ty: ty.clone() });
                }
                let value = self.read(&v, ty, span)?;
                self.write(&o, value, ty, span)?;
                Ok(o)
            }
        }
    }

    /// Evaluates the call expression `e`, of `f` to the argument
    /// expressions `args`, whose result has type `ty`.
    fn call(
        &mut self,
        e: &Expr,
        f: &FunDecl,
        args: &[Expr],
        ty: &Type,
        out: Option<Rc<View>>,
    ) -> Result<Rc<View>, CompileError> {
        // A layout pattern in a writing position passes the inverted output
        // view to its argument (Section 5.3: output views).
        if let (Some(o), [arg]) = (&out, args) {
            let arg_ty = self.inp.types.of(arg).clone();
            if let Some(arg_out) = self.invert_output(f, o, &arg_ty, ty)? {
                // The result now lives where `o` points; read it from there.
                self.expr(arg, Some(Rc::new(arg_out)))?;
                return Ok(o.clone());
            }
        }
        let mut views = Vec::with_capacity(args.len());
        let mut arg_types = Vec::with_capacity(args.len());
        for a in args {
            views.push(self.expr(a, None)?);
            arg_types.push(self.inp.types.of(a).clone());
        }
        let space = self.inp.spaces.of(e);
        let c = Call { args: views, arg_types: &arg_types, ty, out, space, id: Some(e.id), span: e.span };
        self.apply(f, c)
    }

    /// Applies `f` as `c` says.
    pub(crate) fn apply(&mut self, f: &FunDecl, c: Call) -> Result<Rc<View>, CompileError> {
        match &f.kind {
            FunKind::Lambda(l) => {
                // `\(a, b) -> e` applied to one tuple destructures it.
                let args = match (&c.args[..], c.arg_types) {
                    ([t], [Type::Tuple(ts)]) if l.params.len() > 1 && ts.len() == l.params.len() => {
                        (0..ts.len()).map(|k| Rc::new(View::Get { k, of: t.clone() })).collect()
                    }
                    _ => c.args,
                };
                if l.params.len() != args.len() {
                    return Err(CompileError::Internal(format!(
                        "lambda of {} parameter(s) applied to {} argument(s) after type checking",
                        l.params.len(),
                        args.len()
                    )));
                }
                for (p, v) in l.params.iter().zip(args) {
                    self.env.insert(p.id, v);
                }
                self.expr(&l.body, c.out)
            }
            FunKind::UserFun(uf) => {
                let name = self.inp.program.user_fun(*uf).name.clone();
                let mut cargs = Vec::with_capacity(c.args.len());
                for (v, t) in c.args.iter().zip(c.arg_types) {
                    cargs.push(self.read(v, t, c.span)?);
                }
                let target = match c.out {
                    Some(o) => o,
                    None => self.alloc(c.ty, c.space, c.span)?,
                };
                self.write(&target, crate::ir::c::CExpr::call(name, cargs), c.ty, c.span)?;
                Ok(target)
            }
            FunKind::Pattern(p) => self.pattern(f, p, c),
        }
    }

    /// Known sizes substituted, then simplified when array-access
    /// simplification is on: the form in which indices are printed.
    pub(crate) fn index(&self, e: &ArithExpr) -> ArithExpr {
        let known: HashMap<String, ArithExpr> =
            self.inp.opts.sizes.iter().map(|(k, v)| (k.clone(), ArithExpr::Cst(*v))).collect();
        let e = if known.is_empty() { e.clone() } else { e.substitute(&known) };
        if self.inp.opts.arith_simplify {
            self.memo.simplify(&e)
        } else {
            e
        }
    }

    /// Always-simplified form, for decisions (not printed indices). Known
    /// sizes are substituted in variables' ranges too, so that bounds like
    /// `iter_len < (N/4)/(N/128) + 1` become constants.
    pub(crate) fn decide(&self, e: &ArithExpr) -> ArithExpr {
        let known: HashMap<String, ArithExpr> =
            self.inp.opts.sizes.iter().map(|(k, v)| (k.clone(), ArithExpr::Cst(*v))).collect();
        if known.is_empty() {
            return self.memo.simplify(e);
        }
        self.memo.simplify(&with_known_ranges(&e.substitute(&known), &known, &self.memo))
    }
}

impl Lowerer<'_> {
    /// Whether `a op b` holds at every point of the variables' ranges
    /// (`Some(true)`), at none (`Some(false)`), or depends on the point.
    /// Used on the conditions of `padConst`'s selections, which compare an
    /// index with an array's bounds: inside the array's interior they are
    /// decided by the ranges of the work-item and loop variables, which the
    /// OpenCL compiler does not know (`4 * i < 4096` for `i < 1024`).
    fn truth(&self, op: CmpOp, a: &ArithExpr, b: &ArithExpr) -> Option<bool> {
        let (a, b) = (self.decide(a), self.decide(b));
        let lt = |x: &ArithExpr, y: &ArithExpr| {
            self.memo.prove_le(&ArithExpr::add(x.clone(), ArithExpr::Cst(1)), y)
        };
        let le = |x: &ArithExpr, y: &ArithExpr| self.memo.prove_le(x, y);
        let (holds, fails) = match op {
            CmpOp::Lt => (lt(&a, &b), le(&b, &a)),
            CmpOp::Le => (le(&a, &b), lt(&b, &a)),
            CmpOp::Gt => (lt(&b, &a), le(&a, &b)),
            CmpOp::Ge => (le(&b, &a), lt(&a, &b)),
            CmpOp::Eq => (self.memo.prove_eq(&a, &b), lt(&a, &b) || lt(&b, &a)),
            CmpOp::Ne => (lt(&a, &b) || lt(&b, &a), self.memo.prove_eq(&a, &b)),
        };
        match (holds, fails) {
            (true, false) => Some(true),
            (false, true) => Some(false),
            // Both: the ranges are empty (no point runs); neither: open.
            (true, true) | (false, false) => None,
        }
    }
}

/// Substitutes `known` inside the ranges of `e`'s variables.
fn with_known_ranges(
    e: &ArithExpr,
    known: &HashMap<String, ArithExpr>,
    memo: &crate::arith::Memo,
) -> ArithExpr {
    let vars: HashMap<String, ArithExpr> = e
        .vars()
        .into_iter()
        .map(|mut v| {
            let start = memo.simplify(&with_known_ranges(&v.range.start.substitute(known), known, memo));
            v.range.start = std::sync::Arc::new(start);
            if let Some(stop) = v.range.stop.take() {
                let stop = memo.simplify(&with_known_ranges(&stop.substitute(known), known, memo));
                v.range.stop = Some(std::sync::Arc::new(stop));
            }
            (v.name.clone(), ArithExpr::Var(v))
        })
        .collect();
    e.substitute(&vars)
}

/// The name of the vectorised version of user function `name` for width `w`.
pub fn vector_fun_name(name: &str, w: u8) -> String {
    format!("{name}_v{w}")
}
