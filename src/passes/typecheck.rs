//! Type inference along the data flow (CGO 2017, Section 5.1).
//!
//! Parameters of a `def` carry declared types; every other type follows
//! from them. Array lengths are symbolic and kept simplified. The body of an
//! `iterate` is typed once with a fresh length variable standing for the
//! length of the current iteration's input; the iterate's result length is
//! that function of the variable applied `n` times.

use crate::arith::{self, ArithExpr, Range, Var, VarKind};
use crate::ir::{
    Def, Expr, ExprId, ExprKind, FunDecl, FunId, FunKind, Literal, PadMode, ParamId, Pattern, Program, Span,
};
use crate::types::Type;
use std::collections::HashMap;

/// A pattern's name as errors show it (`TypeProblem` keeps it).
type Name = &'static str;

/// Iterations of an `iterate` that may change its array's length (its
/// type is computed one iteration at a time).
const MAX_ITERATE_STEPS: u32 = 1000;

pub use super::type_error::{TypeError, TypeProblem};

/// The inferred types of one `def`.
#[derive(Clone, Debug, Default)]
pub struct Types {
    pub exprs: HashMap<ExprId, Type>,
    pub params: HashMap<ParamId, Type>,
    /// The length variable of each `iterate`, keyed by its [`FunDecl`]'s id.
    pub iterate_vars: HashMap<FunId, Var>,
}

impl Types {
    pub fn of(&self, e: &Expr) -> &Type {
        // Every expression of a checked def has a type; a miss is a bug.
        self.exprs.get(&e.id).unwrap_or_else(|| panic!("ICE: expression {:?} was not type-checked", e.id))
    }
}

/// The type of the result of the def named `def`, where it exists and
/// type-checks.
pub fn def_result(program: &Program, def: &str) -> Option<Type> {
    let d = program.def(def)?;
    let t = typecheck_def(program, d).ok()?;
    Some(t.of(&d.body).clone())
}

/// Infers the types of `def`'s body.
pub fn typecheck_def(program: &Program, def: &Def) -> Result<Types, TypeError> {
    let mut tc = Checker { program, types: Types::default() };
    for p in &def.params {
        let ty = p.ty.clone().ok_or_else(|| {
            TypeError::new(TypeProblem::Untyped { param: p.name.clone(), def: def.name.clone() }, p.span)
        })?;
        tc.types.params.insert(p.id, ty);
    }
    tc.expr(&def.body)?;
    Ok(tc.types)
}

struct Checker<'a> {
    program: &'a Program,
    types: Types,
}

fn err<T>(span: Span, problem: TypeProblem) -> Result<T, TypeError> {
    Err(TypeError::new(problem, span))
}

/// Simplified array length.
fn len(e: ArithExpr) -> ArithExpr {
    arith::simplify(&e)
}

/// The window type and window count of `slide(size, step)` (and of
/// `slideSeqPlus`) over `[elem]n`.
fn slide_type(
    name: Name,
    elem: &Type,
    n: &ArithExpr,
    size: &ArithExpr,
    step: &ArithExpr,
    span: Span,
) -> Result<(Type, ArithExpr), TypeError> {
    for (what, v) in [("size", size), ("step", step)] {
        if let Some(c @ ..=0) = v.as_cst() {
            return err(span, TypeProblem::Window { pattern: name, what, found: c });
        }
    }
    let windows = len(ArithExpr::div(
        ArithExpr::add(ArithExpr::sub(n.clone(), size.clone()), step.clone()),
        step.clone(),
    ));
    Ok((Type::array(elem.clone(), size.clone()), windows))
}

/// Whether two types are equal, comparing lengths after simplification.
pub fn same_type(a: &Type, b: &Type) -> bool {
    match (a, b) {
        (Type::Array(ea, na), Type::Array(eb, nb)) => same_len(na, nb) && same_type(ea, eb),
        (Type::Tuple(ta), Type::Tuple(tb)) => {
            ta.len() == tb.len() && ta.iter().zip(tb).all(|(x, y)| same_type(x, y))
        }
        _ => a == b,
    }
}

fn same_len(a: &ArithExpr, b: &ArithExpr) -> bool {
    a == b || arith::simplify(a) == arith::simplify(b) || arith::prove_eq(a, b)
}

impl Checker<'_> {
    fn expr(&mut self, e: &Expr) -> Result<Type, TypeError> {
        let ty = match &e.kind {
            ExprKind::Literal(l) => l.ty(),
            ExprKind::Param(p) => match self.types.params.get(p) {
                Some(t) => t.clone(),
                None => return err(e.span, TypeProblem::Unbound),
            },
            ExprKind::Call(f, args) => {
                let mut arg_types = Vec::with_capacity(args.len());
                for a in args {
                    arg_types.push(self.expr(a)?);
                }
                self.apply(f, &arg_types, e.span)?
            }
        };
        self.types.exprs.insert(e.id, ty.clone());
        Ok(ty)
    }

    /// The result type of calling `f` with arguments of types `args`.
    pub fn apply(&mut self, f: &FunDecl, args: &[Type], call: Span) -> Result<Type, TypeError> {
        match &f.kind {
            FunKind::Lambda(l) => {
                // `\(a, b) -> e` applied to one tuple destructures it.
                let parts;
                let args = match args {
                    [Type::Tuple(ts)] if l.params.len() > 1 && ts.len() == l.params.len() => {
                        parts = ts.clone();
                        &parts[..]
                    }
                    _ => args,
                };
                if l.params.len() != args.len() {
                    let (expected, found) = (l.params.len(), args.len());
                    return err(f.span, TypeProblem::LambdaArity { expected, found });
                }
                for (p, t) in l.params.iter().zip(args) {
                    if let Some(decl) = &p.ty {
                        if !same_type(decl, t) {
                            let (param, declared, found) = (p.name.clone(), decl.clone(), t.clone());
                            return err(p.span, TypeProblem::ParamType { param, declared, found });
                        }
                    }
                    self.types.params.insert(p.id, t.clone());
                }
                self.expr(&l.body)
            }
            FunKind::UserFun(id) => {
                let uf = self.program.user_fun(*id);
                if uf.params.len() != args.len() {
                    let (fun, expected, found) = (uf.name.clone(), uf.params.len(), args.len());
                    return err(call, TypeProblem::UserFunArity { fun, expected, found });
                }
                for ((pname, pty), t) in uf.params.iter().zip(args) {
                    if !same_type(pty, t) {
                        let (fun, param) = (uf.name.clone(), pname.clone());
                        let (expected, found) = (pty.clone(), t.clone());
                        return err(call, TypeProblem::UserFunParam { fun, param, expected, found });
                    }
                }
                Ok(uf.ret.clone())
            }
            FunKind::Pattern(p) => self.pattern(f, p, args, call),
        }
    }

    fn one_arg<'t>(&self, name: Name, args: &'t [Type], span: Span) -> Result<&'t Type, TypeError> {
        match args {
            [t] => Ok(t),
            _ => err(span, TypeProblem::OneArg { pattern: name, found: args.len() }),
        }
    }

    fn array<'t>(&self, name: Name, t: &'t Type, span: Span) -> Result<(&'t Type, &'t ArithExpr), TypeError> {
        match t {
            Type::Array(e, n) => Ok((e, n)),
            other => err(span, TypeProblem::NotArray { pattern: name, found: other.clone() }),
        }
    }

    /// Checks the arguments `[init, xs]` of `reduce` or `partRed` against
    /// its function `g`; returns the accumulator's type.
    fn reduction(&mut self, name: Name, g: &FunDecl, args: &[Type], span: Span) -> Result<Type, TypeError> {
        let [init, xs] = args else {
            return err(span, TypeProblem::ReductionArity { pattern: name, found: args.len() });
        };
        let (elem, _) = self.array(name, xs, span)?;
        let out = self.apply(g, &[init.clone(), elem.clone()], span)?;
        if !same_type(&out, init) {
            return err(span, TypeProblem::Accumulator { pattern: name, returned: out, init: init.clone() });
        }
        Ok(init.clone())
    }

    /// The result type of a pattern: one arm per pattern, each calling the
    /// check of its family (maps and reductions, which type their
    /// functions; layout patterns; padding; generation and selection).
    fn pattern(&mut self, f: &FunDecl, p: &Pattern, args: &[Type], span: Span) -> Result<Type, TypeError> {
        let name = p.name();
        match p {
            Pattern::Map { f: g, .. } => self.map(name, g, args, span),
            Pattern::MapVec { f: g } => self.map_vec(name, g, args, span),
            Pattern::Reduce { f: g, .. } => {
                Ok(Type::array(self.reduction(name, g, args, span)?, ArithExpr::Cst(1)))
            }
            Pattern::PartRed { f: g, m } => Ok(Type::array(self.reduction(name, g, args, span)?, m.clone())),
            Pattern::Iterate { n, f: g } => self.iterate(f, *n, g, args, span),
            Pattern::Split(m) => self.split(name, m, args, span),
            Pattern::Join => self.join(name, args, span),
            Pattern::Gather(_) | Pattern::Scatter(_) | Pattern::Id => {
                Ok(self.one_arg(name, args, span)?.clone())
            }
            Pattern::Transpose => self.transpose(name, args, span),
            Pattern::Zip(k) => self.zip(name, *k, args, span),
            Pattern::Get(i) => self.get(name, *i, args, span),
            Pattern::At(_) => Ok(self.array_arg(name, args, span)?.0.clone()),
            Pattern::AsVector(w) => self.as_vector(name, *w, args, span),
            Pattern::AsScalar => self.as_scalar(name, args, span),
            Pattern::ToGlobal(g) | Pattern::ToLocal(g) | Pattern::ToPrivate(g) => self.apply(g, args, span),
            Pattern::Slide { size, step } => self.slide(name, (size, step), None, args, span),
            Pattern::SlideSeq { size, step, f: g } => self.slide(name, (size, step), Some(g), args, span),
            Pattern::Pad { left, right, mode } => self.pad(name, (left, right), *mode, args, span),
            Pattern::PadConst { left, right, value } => {
                self.pad_const(name, (left, right), value, args, span)
            }
            Pattern::Generate { len: n, f: g } => self.generate(n, g, args, span),
            Pattern::Filter => self.filter(name, args, span),
        }
    }

    /// The one argument of a pattern, an array: its element type and length.
    fn array_arg<'t>(
        &self,
        name: Name,
        args: &'t [Type],
        span: Span,
    ) -> Result<(&'t Type, &'t ArithExpr), TypeError> {
        let t = self.one_arg(name, args, span)?;
        self.array(name, t, span)
    }

    // Maps and iteration: the function is typed on the elements.

    fn map(&mut self, name: Name, g: &FunDecl, args: &[Type], span: Span) -> Result<Type, TypeError> {
        let (elem, n) = self.array_arg(name, args, span)?;
        let out = self.apply(g, std::slice::from_ref(elem), span)?;
        Ok(Type::array(out, n.clone()))
    }

    fn map_vec(&mut self, name: Name, g: &FunDecl, args: &[Type], span: Span) -> Result<Type, TypeError> {
        let t = self.one_arg(name, args, span)?;
        let Type::Vector(s, w) = t else {
            return err(span, TypeProblem::NotVector { found: t.clone() });
        };
        match self.apply(g, &[Type::Scalar(*s)], span)? {
            Type::Scalar(r) => Ok(Type::Vector(r, *w)),
            other => err(span, TypeProblem::NotScalarResult { found: other }),
        }
    }

    /// `iterate(n, g)` (the pattern's declaration `f` keys its length
    /// variable): `g` is typed once on `[elem]iter_len_k`.
    fn iterate(
        &mut self,
        f: &FunDecl,
        n: u32,
        g: &FunDecl,
        args: &[Type],
        span: Span,
    ) -> Result<Type, TypeError> {
        let (elem, l0) = self.array_arg("iterate", args, span)?;
        let var = Var {
            name: format!("iter_len_{}", self.types.iterate_vars.len()),
            // A run-time value bounded by the input length; as an
            // index-like variable its range bounds are used in proofs.
            kind: VarKind::Index,
            range: Range::new(ArithExpr::Cst(1), len(ArithExpr::add(l0.clone(), ArithExpr::Cst(1)))),
        };
        // Ids key this table: a duplicate would give two iterates one
        // length (an invariant of parser and rewrites, `ir::FunId`).
        if f.id == crate::ir::FunId::FRESH || self.types.iterate_vars.contains_key(&f.id) {
            return err(span, TypeProblem::IterateId { id: f.id });
        }
        self.types.iterate_vars.insert(f.id, var.clone());
        let out = self.apply(g, &[Type::array(elem.clone(), ArithExpr::Var(var.clone()))], span)?;
        let (out_elem, step) = self.array("iterate", &out, span)?;
        if !same_type(out_elem, elem) {
            return err(span, TypeProblem::IterateElem { from: elem.clone(), to: out_elem.clone() });
        }
        Ok(Type::array(elem.clone(), iterated_len(n, l0, step, &var, span)?))
    }

    /// `[elem]n` as windows of `slide(size, step)`, each passed to `g` for
    /// `slideSeqPlus` (`mapSeq(g) o slide(size, step)`).
    fn slide(
        &mut self,
        name: Name,
        (size, step): (&ArithExpr, &ArithExpr),
        g: Option<&FunDecl>,
        args: &[Type],
        span: Span,
    ) -> Result<Type, TypeError> {
        let (elem, n) = self.array_arg(name, args, span)?;
        let (window, windows) = slide_type(name, elem, n, size, step, span)?;
        match g {
            Some(g) => Ok(Type::array(self.apply(g, &[window], span)?, windows)),
            None => Ok(Type::array(window, windows)),
        }
    }

    fn generate(&mut self, n: &ArithExpr, g: &FunDecl, args: &[Type], span: Span) -> Result<Type, TypeError> {
        if !args.is_empty() {
            return err(span, TypeProblem::GenerateArgs { found: args.len() });
        }
        let out = self.apply(g, &[Type::INT], span)?;
        Ok(Type::array(out, n.clone()))
    }

    // Layout patterns.

    fn split(&self, name: Name, m: &ArithExpr, args: &[Type], span: Span) -> Result<Type, TypeError> {
        let (elem, n) = self.array_arg(name, args, span)?;
        if let Some(b @ ..=0) = m.as_cst() {
            return err(span, TypeProblem::ChunkSize { found: b });
        }
        if let (Some(a), Some(b)) = (n.as_cst(), m.as_cst()) {
            if b <= 0 || a % b != 0 {
                return err(span, TypeProblem::Indivisible { len: a, chunk: b });
            }
        }
        let outer = len(ArithExpr::exact_div(n.clone(), m.clone()));
        Ok(Type::array(Type::array(elem.clone(), m.clone()), outer))
    }

    fn join(&self, name: Name, args: &[Type], span: Span) -> Result<Type, TypeError> {
        let (inner, n) = self.array_arg(name, args, span)?;
        let (elem, m) = self.array("join (inner)", inner, span)?;
        Ok(Type::array(elem.clone(), len(ArithExpr::mul(n.clone(), m.clone()))))
    }

    fn transpose(&self, name: Name, args: &[Type], span: Span) -> Result<Type, TypeError> {
        let (inner, n) = self.array_arg(name, args, span)?;
        let (elem, m) = self.array("transpose (inner)", inner, span)?;
        Ok(Type::array(Type::array(elem.clone(), n.clone()), m.clone()))
    }

    fn zip(&self, name: Name, k: usize, args: &[Type], span: Span) -> Result<Type, TypeError> {
        if args.len() != k || k < 2 {
            return err(span, TypeProblem::ZipArity { expected: k, found: args.len() });
        }
        let mut elems = Vec::new();
        let mut first: Option<ArithExpr> = None;
        for t in args {
            let (e, n) = self.array(name, t, span)?;
            if let Some(f0) = &first {
                if !same_len(f0, n) {
                    return err(span, TypeProblem::ZipLengths { first: f0.clone(), other: n.clone() });
                }
            } else {
                first = Some(n.clone());
            }
            elems.push(e.clone());
        }
        Ok(Type::array(Type::Tuple(elems), first.unwrap_or(ArithExpr::Cst(0))))
    }

    fn get(&self, name: Name, i: usize, args: &[Type], span: Span) -> Result<Type, TypeError> {
        match self.one_arg(name, args, span)? {
            Type::Tuple(ts) if i < ts.len() => Ok(ts[i].clone()),
            Type::Tuple(ts) => err(span, TypeProblem::TupleIndex { index: i, components: ts.len() }),
            other => err(span, TypeProblem::NotTuple { index: i, found: other.clone() }),
        }
    }

    fn as_vector(&self, name: Name, w: u8, args: &[Type], span: Span) -> Result<Type, TypeError> {
        let t = self.one_arg(name, args, span)?;
        let (elem, n) = self.array(name, t, span)?;
        let Type::Scalar(s) = elem else {
            return err(span, TypeProblem::NotScalars { width: w, found: t.clone() });
        };
        if let Some(c) = n.as_cst() {
            if c % (w as i64) != 0 {
                return err(span, TypeProblem::NotMultiple { width: w, len: c });
            }
        }
        let outer = len(ArithExpr::exact_div(n.clone(), ArithExpr::Cst(w as i64)));
        Ok(Type::array(Type::Vector(*s, w), outer))
    }

    fn as_scalar(&self, name: Name, args: &[Type], span: Span) -> Result<Type, TypeError> {
        let t = self.one_arg(name, args, span)?;
        let (elem, n) = self.array(name, t, span)?;
        let Some((scalars, w)) = elem.as_scalar_elem() else {
            return err(span, TypeProblem::NotVectors { found: t.clone() });
        };
        Ok(Type::array(scalars, len(ArithExpr::mul(n.clone(), ArithExpr::Cst(w as i64)))))
    }

    /// `filter(xs, indices)`: the elements of `xs` at the indices.
    fn filter(&self, name: Name, args: &[Type], span: Span) -> Result<Type, TypeError> {
        let [xs, idx] = args else {
            return err(span, TypeProblem::FilterArity { found: args.len() });
        };
        let (elem, _) = self.array(name, xs, span)?;
        let (ie, m) = self.array(name, idx, span)?;
        if *ie != Type::INT {
            return err(span, TypeProblem::FilterIndices { found: idx.clone() });
        }
        Ok(Type::array(elem.clone(), m.clone()))
    }

    // Padding.

    fn pad(
        &self,
        name: Name,
        (left, right): (&ArithExpr, &ArithExpr),
        mode: PadMode,
        args: &[Type],
        span: Span,
    ) -> Result<Type, TypeError> {
        let (elem, n) = self.array_arg(name, args, span)?;
        not_negative("pad", (left, right), span)?;
        // The kernel reflects (mirror) or wraps once, as stencils
        // need; padding by more than the array's length would
        // read outside it (the interpreter repeats the pattern).
        // Refused where the lengths show it: at compile time for
        // constants, before launch once sizes are known.
        let wider = |side: &ArithExpr| matches!(arith::simplify(&ArithExpr::sub(side.clone(), n.clone())), ArithExpr::Cst(c) if c > 0);
        let sides: &[&ArithExpr] = match mode {
            PadMode::Clamp => &[],
            PadMode::Mirror => &[left, right],
            PadMode::Wrap => &[left],
        };
        if let Some(side) = sides.iter().find(|s| wider(s)) {
            let (left, right, side, len) = (left.clone(), right.clone(), (*side).clone(), n.clone());
            return err(span, TypeProblem::PadTooWide { left, right, mode, side, len });
        }
        Ok(padded(elem, n, left, right))
    }

    fn pad_const(
        &self,
        name: Name,
        (left, right): (&ArithExpr, &ArithExpr),
        value: &Literal,
        args: &[Type],
        span: Span,
    ) -> Result<Type, TypeError> {
        let (elem, n) = self.array_arg(name, args, span)?;
        not_negative("padConst", (left, right), span)?;
        if !same_type(&value.ty(), elem) {
            return err(span, TypeProblem::PadConstType { value: value.ty(), elem: elem.clone() });
        }
        Ok(padded(elem, n, left, right))
    }
}

/// A pad's amounts may be symbolic; one that is provably negative (a
/// constant below 0) would crop the array instead and is refused.
fn not_negative(
    pattern: &'static str,
    (left, right): (&ArithExpr, &ArithExpr),
    span: Span,
) -> Result<(), TypeError> {
    for (side, amount) in [("left", left), ("right", right)] {
        if matches!(arith::simplify(amount), ArithExpr::Cst(c) if c < 0) {
            return err(span, TypeProblem::PadNegative { pattern, side, found: amount.clone() });
        }
    }
    Ok(())
}

/// `[elem](left + n + right)`.
fn padded(elem: &Type, n: &ArithExpr, left: &ArithExpr, right: &ArithExpr) -> Type {
    Type::array(elem.clone(), len(ArithExpr::sum(vec![left.clone(), n.clone(), right.clone()])))
}

/// The length of an `iterate(n)`'s array: the body's result length `step`
/// (a function of `var`, the input's length) applied from `l0` until it
/// stops changing (`iterate(2147483647, ...)` looped here; found by fuzzing).
fn iterated_len(
    n: u32,
    l0: &ArithExpr,
    step: &ArithExpr,
    var: &Var,
    span: Span,
) -> Result<ArithExpr, TypeError> {
    let mut l = l0.clone();
    for k in 0..n {
        let m = HashMap::from([(var.name.clone(), l.clone())]);
        let next = len(step.substitute(&m));
        if next == l {
            break;
        }
        if next.as_cst().is_some_and(|c| c < 1) {
            return err(span, TypeProblem::IterateEmpty { n, after: k + 1 });
        }
        if k >= MAX_ITERATE_STEPS {
            return err(span, TypeProblem::IterateUnbounded { n, max: MAX_ITERATE_STEPS });
        }
        l = next;
    }
    Ok(l)
}
