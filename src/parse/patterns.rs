//! Applications of built-in patterns: a pattern takes its parameters first
//! and may take its data as extra last arguments (`split(128)` is a
//! function, `split(128, xs)` a value).

use super::ast::{SExpr, SKind};
use super::desugar::{plural, Ctx, Form};
use super::error::PResult;
use crate::arith::{ArithExpr, Range, Var, VarKind};
use crate::ir::{
    Expr, ExprKind, FunKind, IndexFun, Lambda, MapKind, PadMode, Pattern, PatternName, ReduceKind, Span,
};
use crate::types::VECTOR_WIDTHS;

pub fn is_pattern(name: &str) -> bool {
    PatternName::from_name(name).is_some()
}

impl Ctx<'_> {
    /// Desugars `name(args)`; `args` holds parameters then data arguments.
    pub fn pattern(&mut self, name: &str, name_span: Span, args: &[&SExpr], span: Span) -> PResult<Form> {
        let Some(pn) = PatternName::from_name(name) else {
            return Err(self.err(name_span, "a pattern"));
        };
        // Optional leading dimension of the OpenCL maps.
        let map_dim = pn.takes_dimension() && args.first().is_some_and(|a| matches!(a.kind, SKind::Int(_)));
        let n_params = pn.params() + usize::from(map_dim);
        if pn == PatternName::Zip {
            // `zip` takes only data, as many arrays as it has arguments.
            if args.len() < 2 {
                return Err(self.err(span, "at least two arrays in `zip(xs, ys, ...)`"));
            }
            let fd = self.fun_decl(FunKind::Pattern(Pattern::Zip(args.len())), span);
            let vals = self.values(args)?;
            return Ok(Form::Value(self.call(fd, vals, span)?));
        }
        let n_data = pn.source_data_args();
        if args.len() != n_params && args.len() != n_params + n_data {
            let data =
                if n_data == 0 { String::new() } else { format!(", or {} with its data", n_params + n_data) };
            return Err(self.err(
                span,
                format!("{n_params} argument{}{data} for `{}`", plural(n_params), pn.usage_as(name)),
            ));
        }
        let (params, data) = args.split_at(n_params);
        let (pattern, leading) = self.build(pn, name, params, name_span, map_dim)?;
        let fd = self.fun_decl(FunKind::Pattern(pattern), span);
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
            return Ok(Form::Fun(
                self.fun_decl(FunKind::Lambda(Lambda { params: vec![p], body: Box::new(body) }), span),
            ));
        }
        let mut all = leading;
        all.extend(self.values(data)?);
        Ok(Form::Value(self.call(fd, all, span)?))
    }

    /// The pattern from its parameters, plus the data arguments that the
    /// parameters supply (the initial value of reductions).
    fn build(
        &mut self,
        pn: PatternName,
        name: &str,
        ps: &[&SExpr],
        name_span: Span,
        map_dim: bool,
    ) -> PResult<(Pattern, Vec<Expr>)> {
        use PatternName as N;
        let arg = |i: usize| ps.get(i).copied().ok_or(());
        let mut leading = Vec::new();
        let missing = |this: &Self| this.err(name_span, format!("the parameters of `{}`", pn.usage_as(name)));
        macro_rules! p {
            ($i:expr) => {
                arg($i).map_err(|_| missing(self))?
            };
        }
        let pattern = match pn {
            N::Map => Pattern::Map { kind: MapKind::Map, f: Box::new(self.fun(p!(0))?) },
            N::MapSeq => Pattern::Map { kind: MapKind::Seq, f: Box::new(self.fun(p!(0))?) },
            N::MapSeqUnroll => Pattern::Map { kind: MapKind::SeqUnroll, f: Box::new(self.fun(p!(0))?) },
            N::MapGlb | N::MapWrg | N::MapLcl => {
                let dim =
                    if map_dim { self.small_int(p!(0), 0, 2, "a dimension 0, 1 or 2")? as u8 } else { 0 };
                let f = Box::new(self.fun(p!(usize::from(map_dim)))?);
                let kind = match pn {
                    N::MapGlb => MapKind::Glb(dim),
                    N::MapWrg => MapKind::Wrg(dim),
                    _ => MapKind::Lcl(dim),
                };
                Pattern::Map { kind, f }
            }
            N::MapVec => Pattern::MapVec { f: Box::new(self.fun(p!(0))?) },
            N::Reduce | N::ReduceSeq | N::ReduceSeqUnroll => {
                let f = Box::new(self.fun(p!(0))?);
                leading.push(self.value(p!(1))?);
                let kind = match pn {
                    N::Reduce => ReduceKind::Reduce,
                    N::ReduceSeq => ReduceKind::Seq,
                    _ => ReduceKind::SeqUnroll,
                };
                Pattern::Reduce { kind, f }
            }
            N::PartRed => {
                let f = Box::new(self.fun(p!(0))?);
                leading.push(self.value(p!(1))?);
                Pattern::PartRed { f, m: self.arith(p!(2))? }
            }
            N::Iterate => {
                let n =
                    self.small_int(p!(0), 0, i64::from(u32::MAX), "a non-negative iteration count")? as u32;
                Pattern::Iterate { n, f: Box::new(self.fun(p!(1))?) }
            }
            N::Split => Pattern::Split(self.arith(p!(0))?),
            N::Join => Pattern::Join,
            N::Gather => Pattern::Gather(self.index_fun(p!(0))?),
            N::Scatter => Pattern::Scatter(self.index_fun(p!(0))?),
            N::Transpose => Pattern::Transpose,
            N::Zip => Pattern::Zip(ps.len()),
            N::Get => Pattern::Get(self.small_int(p!(0), 0, 255, "a tuple component index")? as usize),
            N::At => Pattern::At(self.arith(p!(0))?),
            N::AsVector => {
                let m = self.small_int(p!(0), 2, 16, "a vector width 2, 3, 4, 8 or 16")? as u8;
                if !VECTOR_WIDTHS.contains(&m) {
                    return Err(self.err(p!(0).span, "a vector width 2, 3, 4, 8 or 16"));
                }
                Pattern::AsVector(m)
            }
            N::AsScalar => Pattern::AsScalar,
            N::ToGlobal => Pattern::ToGlobal(Box::new(self.fun(p!(0))?)),
            N::ToLocal => Pattern::ToLocal(Box::new(self.fun(p!(0))?)),
            N::ToPrivate => Pattern::ToPrivate(Box::new(self.fun(p!(0))?)),
            N::Slide => Pattern::Slide { size: self.arith(p!(0))?, step: self.arith(p!(1))? },
            N::SlideSeqPlus => Pattern::SlideSeq {
                size: self.arith(p!(0))?,
                step: self.arith(p!(1))?,
                f: Box::new(self.fun(p!(2))?),
            },
            N::Pad => {
                let (left, right) = (self.arith(p!(0))?, self.arith(p!(1))?);
                let m = p!(2);
                let mode = match &m.kind {
                    SKind::Name(n) => PadMode::from_name(n),
                    _ => None,
                };
                let Some(mode) = mode else {
                    return Err(self.err(m.span, "a boundary mode `clamp`, `mirror` or `wrap`"));
                };
                Pattern::Pad { left, right, mode }
            }
            N::PadConst => {
                let (left, right) = (self.arith(p!(0))?, self.arith(p!(1))?);
                Pattern::PadConst { left, right, value: self.literal(p!(2))? }
            }
            N::Generate => Pattern::Generate { len: self.arith(p!(0))?, f: Box::new(self.fun(p!(1))?) },
            N::Filter => Pattern::Filter,
            N::Id => Pattern::Id,
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
