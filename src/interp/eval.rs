//! Evaluation of expressions and patterns.

use super::error::{InterpError, RuntimeProblem, RuntimeProblem as P};
use super::sizes::bind_sizes;
use crate::arith::ArithExpr;
use crate::ir::c::eval::EvalError;
use crate::ir::{
    Expr, ExprKind, FunDecl, FunKind, IndexFun, Lambda, Literal, ParamId, Program, Span, UserFunId, Value,
};
use std::collections::{BTreeMap, HashMap};

pub struct Interp<'p> {
    pub program: &'p Program,
    pub env: HashMap<ParamId, Value>,
    pub sizes: BTreeMap<String, i64>,
    /// Array elements produced so far (the length of every call's array
    /// result), checked against `budget`.
    pub work: u64,
    /// The most `work` allowed ([`MAX_WORK`] unless a caller asks less).
    pub budget: u64,
    /// Threads a map's elements or a pairwise level's pairs may be spread
    /// over (`patterns::apply_spread`): the host's cores for an
    /// evaluation, 1 inside a spread (the calls are independent, so the
    /// result is the same).
    pub threads: usize,
}

/// The most threads one map or pairwise level is spread over.
pub const MAX_THREADS: usize = 8;

/// The most array elements one evaluation may produce, summed over every
/// call's result: the interpreter holds each value as a tree (about 2.3 KB
/// per point of a matrix product's grid was measured), so a larger
/// evaluation is refused instead of exhausting memory. Layout patterns
/// count too (each copies its array), so a tiled matrix product of 64^3
/// produces several million.
pub const MAX_WORK: u64 = 1 << 26;

pub fn literal_value(l: &Literal) -> Value {
    match l {
        Literal::Float(f) => Value::Float(*f),
        Literal::Int(i) => Value::Int(*i),
        Literal::Tuple(ls) => Value::Tuple(ls.iter().map(literal_value).collect()),
    }
}

/// Calls user function `id` with argument values (`ir::c::eval`), its
/// errors placed at `span`, the call's position.
pub fn call_user_fun(
    program: &Program,
    id: UserFunId,
    args: Vec<Value>,
    span: Span,
) -> Result<Value, InterpError> {
    crate::ir::c::eval::call_user_fun(program, id, args).map_err(|e| match e {
        EvalError::NoSuchFun(id) => rt(span, P::NoSuchFun(id)),
        EvalError::InFun { fun, fault } => InterpError::UserFun { fun, fault: Box::new(fault), span },
    })
}

pub(super) fn rt(span: Span, problem: RuntimeProblem) -> InterpError {
    InterpError::Runtime { problem: Box::new(problem), span }
}

pub(super) fn array(v: Value, span: Span, what: &'static str) -> Result<Vec<Value>, InterpError> {
    match v {
        Value::Array(vs) => Ok(vs.into_vec()),
        other => Err(rt(span, P::NotAnArray { what, found: other.describe() })),
    }
}

impl Interp<'_> {
    pub fn eval(&mut self, e: &Expr) -> Result<Value, InterpError> {
        match &e.kind {
            ExprKind::Literal(l) => Ok(literal_value(l)),
            ExprKind::Param(p) => self.env.get(p).cloned().ok_or_else(|| rt(e.span, P::Unbound(p.0))),
            ExprKind::Call(f, args) => {
                let vals = args.iter().map(|a| self.eval(a)).collect::<Result<Vec<_>, _>>()?;
                let v = self.apply(f, vals, e.span)?;
                if let Value::Array(xs) = &v {
                    self.work = self.work.saturating_add(xs.len() as u64);
                    if self.work > self.budget {
                        return Err(InterpError::TooLarge { limit: self.budget, span: e.span });
                    }
                }
                Ok(v)
            }
        }
    }

    /// The windows of `slide(size, step)` over `xs`.
    pub(super) fn windows(
        &self,
        xs: Vec<Value>,
        size: &ArithExpr,
        step: &ArithExpr,
        name: &'static str,
        span: Span,
    ) -> Result<Vec<Value>, InterpError> {
        let (size, step) = (self.arith(size, span)?, self.arith(step, span)?);
        let n = xs.len() as i64;
        if size <= 0 || step <= 0 || size > n {
            return Err(rt(span, P::Windows { name, size, step, n }));
        }
        let count = (n - size + step) / step;
        Ok((0..count)
            .map(|w| Value::array(xs[(w * step) as usize..(w * step + size) as usize].to_vec()))
            .collect())
    }

    pub(super) fn arith(&self, a: &ArithExpr, span: Span) -> Result<i64, InterpError> {
        a.eval_with(&|n| self.sizes.get(n).copied()).map_err(|err| rt(span, P::Arith(err)))
    }

    pub(super) fn index_of(&self, ix: &IndexFun, i: usize, span: Span) -> Result<i64, InterpError> {
        let i = i as i64;
        ix.body
            .eval_with(&|n| if n == ix.param { Some(i) } else { self.sizes.get(n).copied() })
            .map_err(|err| rt(span, P::Arith(err)))
    }

    /// `f` over `xs` as a balanced tree (`None` for no elements).
    pub(super) fn pairwise(
        &mut self,
        f: &FunDecl,
        mut xs: Vec<Value>,
        span: Span,
    ) -> Result<Option<Value>, InterpError> {
        while xs.len() > 1 {
            if self.spreads(xs.len() / 2) {
                // The same pairs, the level's applications spread over
                // threads: the same tree, so the same value.
                let odd = if xs.len() % 2 == 1 { xs.pop() } else { None };
                xs = self.apply_spread(f, xs, 2, span)?;
                xs.extend(odd);
                continue;
            }
            let mut next = Vec::with_capacity(xs.len().div_ceil(2));
            let mut it = xs.into_iter();
            while let Some(a) = it.next() {
                match it.next() {
                    Some(b) => next.push(self.apply(f, vec![a, b], span)?),
                    None => next.push(a),
                }
            }
            xs = next;
        }
        Ok(xs.pop())
    }

    /// Applies a function declaration to evaluated arguments.
    pub fn apply(&mut self, f: &FunDecl, args: Vec<Value>, span: Span) -> Result<Value, InterpError> {
        match &f.kind {
            FunKind::Lambda(l) => self.apply_lambda(l, args, span),
            FunKind::UserFun(id) => call_user_fun(self.program, *id, args, span),
            FunKind::Pattern(p) => self.apply_pattern(p, args, span),
        }
    }

    fn apply_lambda(&mut self, l: &Lambda, mut args: Vec<Value>, span: Span) -> Result<Value, InterpError> {
        // `\(a, b) -> e` applied to one tuple destructures it.
        if l.params.len() > 1 && args.len() == 1 {
            if let Value::Tuple(parts) = &args[0] {
                if parts.len() == l.params.len() {
                    args = parts.clone();
                }
            }
        }
        if l.params.len() != args.len() {
            return Err(rt(span, P::LambdaArity { want: l.params.len(), got: args.len() }));
        }
        // Typed lambda parameters (copies of defs) bind their sizes; the
        // sizes are saved only then (a map's lambda is called per element).
        let typed = l.params.iter().any(|p| p.ty.is_some());
        let saved_sizes = if typed { Some(self.sizes.clone()) } else { None };
        let mut saved = Vec::new();
        for (p, v) in l.params.iter().zip(args) {
            if let Some(ty) = &p.ty {
                bind_sizes(ty, &v, &mut self.sizes);
            }
            saved.push((p.id, self.env.insert(p.id, v)));
        }
        let r = self.eval(&l.body);
        for (id, old) in saved {
            match old {
                Some(v) => self.env.insert(id, v),
                None => self.env.remove(&id),
            };
        }
        if let Some(s) = saved_sizes {
            self.sizes = s;
        }
        r
    }
}

pub(super) fn get_index(xs: &[Value], i: i64, span: Span, what: &'static str) -> Result<Value, InterpError> {
    usize::try_from(i)
        .ok()
        .and_then(|i| xs.get(i))
        .cloned()
        .ok_or_else(|| rt(span, P::IndexOutOfBounds { what, i, len: xs.len() }))
}
