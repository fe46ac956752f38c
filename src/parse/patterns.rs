//! Applications of built-in patterns: a pattern takes its parameters first
//! and may take its data as extra last arguments (`split(128)` is a
//! function, `split(128, xs)` a value).

use super::ast::{SExpr, SKind};
use super::desugar::{plural, Ctx, Form};
use super::error::PResult;
use crate::arith::{ArithExpr, Range, Var, VarKind};
use crate::ir::{
    Expr, ExprKind, FunDecl, FunKind, IndexFun, Lambda, MapKind, PadMode, Pattern, ReduceKind, Span,
};
use crate::types::VECTOR_WIDTHS;

/// Every pattern name with its usage, for lookups and error messages.
pub const PATTERNS: [(&str, &str); 35] = [
    ("map", "map(f)"),
    ("mapSeq", "mapSeq(f)"),
    ("mapSeqUnroll", "mapSeqUnroll(f)"),
    ("mapGlb", "mapGlb([dim,] f)"),
    ("mapWrg", "mapWrg([dim,] f)"),
    ("mapLcl", "mapLcl([dim,] f)"),
    ("mapVec", "mapVec(f)"),
    ("reduce", "reduce(f, init)"),
    ("reduceSeq", "reduceSeq(f, init)"),
    ("reduceSeqUnroll", "reduceSeqUnroll(f, init)"),
    ("partRed", "partRed(f, init, m)"),
    ("iterate", "iterate(n, f)"),
    ("split", "split(m)"),
    ("join", "join"),
    ("gather", "gather(\\i -> index)"),
    ("scatter", "scatter(\\i -> index)"),
    ("transpose", "transpose"),
    ("zip", "zip(xs, ys, ...)"),
    ("get", "get(i)"),
    ("at", "at(i)"),
    ("asVector", "asVector(m)"),
    ("asScalar", "asScalar"),
    ("toGlobal", "toGlobal(f)"),
    ("toLocal", "toLocal(f)"),
    ("toPrivate", "toPrivate(f)"),
    ("slide", "slide(size, step)"),
    ("pad", "pad(left, right, clamp|mirror|wrap)"),
    ("padConst", "padConst(left, right, value)"),
    ("generate", "generate(n, f)"),
    ("filter", "filter(xs, indices)"),
    ("id", "id"),
    // Aliases used in the papers.
    ("reorder", "reorder(\\i -> index)"),
    ("vectorize", "vectorize(f)"),
    ("mapGlobal", "mapGlobal([dim,] f)"),
    ("mapLocal", "mapLocal([dim,] f)"),
];

pub fn is_pattern(name: &str) -> bool {
    PATTERNS.iter().any(|(n, _)| *n == name)
}

fn usage(name: &str) -> &'static str {
    PATTERNS.iter().find(|(n, _)| *n == name).map_or("", |(_, u)| u)
}

/// How many data arguments a pattern takes after its parameters.
fn data_count(name: &str) -> usize {
    match name {
        "generate" => 0,
        "filter" => 2,
        _ => 1,
    }
}

impl Ctx<'_> {
    /// Desugars `name(args)`; `args` holds parameters then data arguments.
    pub fn pattern(&mut self, name: &str, name_span: Span, args: &[&SExpr], span: Span) -> PResult<Form> {
        // Optional leading dimension of the OpenCL maps.
        let map_dim = matches!(name, "mapGlb" | "mapWrg" | "mapLcl" | "mapGlobal" | "mapLocal")
            && args.first().is_some_and(|a| matches!(a.kind, SKind::Int(_)));
        let n_params = match name {
            "join" | "transpose" | "asScalar" | "id" | "zip" | "filter" => 0,
            "map" | "mapSeq" | "mapSeqUnroll" | "mapGlb" | "mapWrg" | "mapLcl" | "mapGlobal" | "mapLocal"
            | "mapVec" | "vectorize" | "toGlobal" | "toLocal" | "toPrivate" | "split" | "gather"
            | "scatter" | "reorder" | "get" | "at" | "asVector" => 1 + usize::from(map_dim),
            "reduce" | "reduceSeq" | "reduceSeqUnroll" | "iterate" | "slide" | "generate" => 2,
            _ => 3,
        };
        if name == "zip" {
            // `zip` takes only data, as many arrays as it has arguments.
            if args.len() < 2 {
                return Err(self.err(span, "at least two arrays in `zip(xs, ys, ...)`"));
            }
            let fd = FunDecl { kind: FunKind::Pattern(Pattern::Zip(args.len())), span };
            let vals = self.values(args)?;
            return Ok(Form::Value(self.call(fd, vals, span)?));
        }
        let n_data = data_count(name);
        if args.len() != n_params && args.len() != n_params + n_data {
            let data =
                if n_data == 0 { String::new() } else { format!(", or {} with its data", n_params + n_data) };
            return Err(self
                .err(span, format!("{n_params} argument{}{data} for `{}`", plural(n_params), usage(name))));
        }
        let (params, data) = args.split_at(n_params);
        let (pattern, leading) = self.build(name, name_span, params, map_dim)?;
        let fd = FunDecl { kind: FunKind::Pattern(pattern), span };
        if data.is_empty() && n_data > 0 {
            if leading.is_empty() {
                return Ok(Form::Fun(fd));
            }
            // `reduceSeq(f, z)` as a function: `\xs -> reduceSeq(f, z, xs)`.
            let p = self.synthetic_param(span);
            let xs = self.mk(ExprKind::Param(p.id), span);
            let mut all = leading;
            all.push(xs);
            let body = self.call(fd, all, span)?;
            return Ok(Form::Fun(FunDecl {
                kind: FunKind::Lambda(Lambda { params: vec![p], body: Box::new(body) }),
                span,
            }));
        }
        let mut all = leading;
        all.extend(self.values(data)?);
        Ok(Form::Value(self.call(fd, all, span)?))
    }

    /// The pattern from its parameters, plus the data arguments that the
    /// parameters supply (the initial value of reductions).
    fn build(
        &mut self,
        name: &str,
        name_span: Span,
        ps: &[&SExpr],
        map_dim: bool,
    ) -> PResult<(Pattern, Vec<Expr>)> {
        let arg = |i: usize| ps.get(i).copied().ok_or(());
        let mut leading = Vec::new();
        let missing = |this: &Self| this.err(name_span, format!("the parameters of `{}`", usage(name)));
        macro_rules! p {
            ($i:expr) => {
                arg($i).map_err(|_| missing(self))?
            };
        }
        let pattern = match name {
            "map" | "mapSeq" | "mapSeqUnroll" | "mapGlb" | "mapWrg" | "mapLcl" | "mapGlobal" | "mapLocal" => {
                let dim =
                    if map_dim { self.small_int(p!(0), 0, 2, "a dimension 0, 1 or 2")? as u8 } else { 0 };
                let f = Box::new(self.fun(p!(usize::from(map_dim)))?);
                let kind = match name {
                    "map" => MapKind::Map,
                    "mapSeq" => MapKind::Seq,
                    "mapSeqUnroll" => MapKind::SeqUnroll,
                    "mapGlb" | "mapGlobal" => MapKind::Glb(dim),
                    "mapWrg" => MapKind::Wrg(dim),
                    _ => MapKind::Lcl(dim),
                };
                Pattern::Map { kind, f }
            }
            "mapVec" | "vectorize" => Pattern::MapVec { f: Box::new(self.fun(p!(0))?) },
            "reduce" | "reduceSeq" | "reduceSeqUnroll" => {
                let f = Box::new(self.fun(p!(0))?);
                leading.push(self.value(p!(1))?);
                let kind = match name {
                    "reduce" => ReduceKind::Reduce,
                    "reduceSeq" => ReduceKind::Seq,
                    _ => ReduceKind::SeqUnroll,
                };
                Pattern::Reduce { kind, f }
            }
            "partRed" => {
                let f = Box::new(self.fun(p!(0))?);
                leading.push(self.value(p!(1))?);
                Pattern::PartRed { f, m: self.arith(p!(2))? }
            }
            "iterate" => {
                let n =
                    self.small_int(p!(0), 0, i64::from(u32::MAX), "a non-negative iteration count")? as u32;
                Pattern::Iterate { n, f: Box::new(self.fun(p!(1))?) }
            }
            "split" => Pattern::Split(self.arith(p!(0))?),
            "join" => Pattern::Join,
            "gather" | "reorder" => Pattern::Gather(self.index_fun(p!(0))?),
            "scatter" => Pattern::Scatter(self.index_fun(p!(0))?),
            "transpose" => Pattern::Transpose,
            "zip" => Pattern::Zip(ps.len()),
            "get" => Pattern::Get(self.small_int(p!(0), 0, 255, "a tuple component index")? as usize),
            "at" => Pattern::At(self.arith(p!(0))?),
            "asVector" => {
                let m = self.small_int(p!(0), 2, 16, "a vector width 2, 3, 4, 8 or 16")? as u8;
                if !VECTOR_WIDTHS.contains(&m) {
                    return Err(self.err(p!(0).span, "a vector width 2, 3, 4, 8 or 16"));
                }
                Pattern::AsVector(m)
            }
            "asScalar" => Pattern::AsScalar,
            "toGlobal" => Pattern::ToGlobal(Box::new(self.fun(p!(0))?)),
            "toLocal" => Pattern::ToLocal(Box::new(self.fun(p!(0))?)),
            "toPrivate" => Pattern::ToPrivate(Box::new(self.fun(p!(0))?)),
            "slide" => Pattern::Slide { size: self.arith(p!(0))?, step: self.arith(p!(1))? },
            "pad" => {
                let (left, right) = (self.arith(p!(0))?, self.arith(p!(1))?);
                let m = p!(2);
                let mode = match &m.kind {
                    SKind::Name(n) if n == "clamp" => PadMode::Clamp,
                    SKind::Name(n) if n == "mirror" => PadMode::Mirror,
                    SKind::Name(n) if n == "wrap" => PadMode::Wrap,
                    _ => return Err(self.err(m.span, "a boundary mode `clamp`, `mirror` or `wrap`")),
                };
                Pattern::Pad { left, right, mode }
            }
            "padConst" => {
                let (left, right) = (self.arith(p!(0))?, self.arith(p!(1))?);
                Pattern::PadConst { left, right, value: self.literal(p!(2))? }
            }
            "generate" => Pattern::Generate { len: self.arith(p!(0))?, f: Box::new(self.fun(p!(1))?) },
            "filter" => Pattern::Filter,
            "id" => Pattern::Id,
            _ => return Err(self.err(name_span, "a pattern")),
        };
        Ok((pattern, leading))
    }

    /// An integer literal in `lo..=hi`.
    fn small_int(&self, e: &SExpr, lo: i64, hi: i64, what: &str) -> PResult<i64> {
        match e.kind {
            SKind::Int(v) if (lo..=hi).contains(&v) => Ok(v),
            _ => Err(self.err(e.span, what.to_string())),
        }
    }

    /// Integer arithmetic over the sizes in scope (a pattern parameter).
    fn arith(&self, e: &SExpr) -> PResult<ArithExpr> {
        let sizes = &self.sizes;
        let this = self;
        super::types::to_arith(self.src, e, false, &mut |name, span| {
            if sizes.iter().any(|s| s == name) {
                Ok(ArithExpr::size(name))
            } else {
                Err(this.err(span, "a size declared in the def's parameter types, or an integer"))
            }
        })
    }

    /// `\i -> arithmetic over i and the sizes`, for `gather`/`scatter`.
    fn index_fun(&self, e: &SExpr) -> PResult<IndexFun> {
        let SKind::Lambda(params, body) = &e.kind else {
            return Err(self.err(e.span, "an index function `\\i -> ...`"));
        };
        let [param] = params.as_slice() else {
            return Err(self.err(e.span, "an index function of one parameter `\\i -> ...`"));
        };
        let sizes = &self.sizes;
        let this = self;
        let body = super::types::to_arith(self.src, body, false, &mut |name, span| {
            if name == param.name {
                Ok(ArithExpr::Var(Var {
                    name: name.to_string(),
                    kind: VarKind::Index,
                    range: Range::natural(),
                }))
            } else if sizes.iter().any(|s| s == name) {
                Ok(ArithExpr::size(name))
            } else {
                Err(this.err(span, format!("the index `{}` or a size", param.name)))
            }
        })?;
        Ok(IndexFun { param: param.name.clone(), body })
    }
}
