//! Evaluation of expressions and patterns.

use super::error::InterpError;
use super::sizes::bind_sizes;
use super::value::Value;
use crate::arith::ArithExpr;
use crate::ir::{
    Expr, ExprKind, FunDecl, FunKind, IndexFun, Literal, PadMode, ParamId, Pattern, Program, ReduceKind, Span,
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
}

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

fn rt(span: Span, msg: impl Into<String>) -> InterpError {
    InterpError::Runtime { msg: msg.into(), span }
}

fn array(v: Value, span: Span, what: &str) -> Result<Vec<Value>, InterpError> {
    match v {
        Value::Array(vs) => Ok(vs),
        other => Err(rt(span, format!("{what} expects an array, got {}", other.describe()))),
    }
}

impl Interp<'_> {
    pub fn eval(&mut self, e: &Expr) -> Result<Value, InterpError> {
        match &e.kind {
            ExprKind::Literal(l) => Ok(literal_value(l)),
            ExprKind::Param(p) => {
                self.env.get(p).cloned().ok_or_else(|| rt(e.span, format!("parameter #{} is not bound", p.0)))
            }
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
    fn windows(
        &self,
        xs: Vec<Value>,
        size: &ArithExpr,
        step: &ArithExpr,
        name: &str,
        span: Span,
    ) -> Result<Vec<Value>, InterpError> {
        let (size, step) = (self.arith(size, span)?, self.arith(step, span)?);
        let n = xs.len() as i64;
        if size <= 0 || step <= 0 || size > n {
            return Err(rt(span, format!("{name}({size}, {step}) of an array of {n}")));
        }
        let count = (n - size + step) / step;
        Ok((0..count)
            .map(|w| Value::Array(xs[(w * step) as usize..(w * step + size) as usize].to_vec()))
            .collect())
    }

    fn arith(&self, a: &ArithExpr, span: Span) -> Result<i64, InterpError> {
        a.eval_with(&|n| self.sizes.get(n).copied()).map_err(|err| rt(span, err.to_string()))
    }

    fn index_of(&self, ix: &IndexFun, i: usize, span: Span) -> Result<i64, InterpError> {
        let i = i as i64;
        ix.body
            .eval_with(&|n| if n == ix.param { Some(i) } else { self.sizes.get(n).copied() })
            .map_err(|err| rt(span, err.to_string()))
    }

    /// Applies a function declaration to evaluated arguments.
    /// `f` over `xs` as a balanced tree (`None` for no elements).
    fn pairwise(
        &mut self,
        f: &FunDecl,
        mut xs: Vec<Value>,
        span: Span,
    ) -> Result<Option<Value>, InterpError> {
        while xs.len() > 1 {
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

    pub fn apply(&mut self, f: &FunDecl, mut args: Vec<Value>, span: Span) -> Result<Value, InterpError> {
        let p = match &f.kind {
            FunKind::Lambda(l) => {
                // `\(a, b) -> e` applied to one tuple destructures it.
                if l.params.len() > 1 && args.len() == 1 {
                    if let Value::Tuple(parts) = &args[0] {
                        if parts.len() == l.params.len() {
                            args = parts.clone();
                        }
                    }
                }
                if l.params.len() != args.len() {
                    return Err(rt(
                        span,
                        format!("lambda takes {} arguments, got {}", l.params.len(), args.len()),
                    ));
                }
                // Typed lambda parameters (copies of defs) bind their sizes.
                let saved_sizes = self.sizes.clone();
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
                self.sizes = saved_sizes;
                return r;
            }
            FunKind::UserFun(id) => return super::cfun::call_user_fun(self.program, *id, args, span),
            FunKind::Pattern(p) => p,
        };
        if let Some(want) = p.data_args() {
            if args.len() != want {
                return Err(rt(span, format!("pattern expects {want} arguments, got {}", args.len())));
            }
        }
        let mut one = || args.pop().unwrap_or(Value::Int(0));
        match p {
            Pattern::Map { f, .. } => {
                let xs = array(one(), span, "map")?;
                Ok(Value::Array(
                    xs.into_iter().map(|x| self.apply(f, vec![x], span)).collect::<Result<_, _>>()?,
                ))
            }
            Pattern::MapVec { f } => match one() {
                Value::Vector(cs) => Ok(Value::Vector(
                    cs.into_iter().map(|c| self.apply(f, vec![c], span)).collect::<Result<_, _>>()?,
                )),
                other => Err(rt(span, format!("mapVec expects a vector, got {}", other.describe()))),
            },
            Pattern::Reduce { f, kind } => {
                let xs = array(one(), span, "reduce")?;
                let mut acc = one();
                // The high-level reduce promises an associative `f` with a
                // neutral `init`, so it may add in any order: pairwise,
                // whose float error grows with log n, not n. Then a
                // reordered low-level program is compared with a result
                // near the exact one, not with a long sequential sum's
                // drift (1.5e-4 relative at 2^20 uniform products).
                // `reduceSeq` keeps its order, as do an `f` whose
                // accumulator is not of the elements' shape.
                if matches!(kind, ReduceKind::Reduce) && xs.first().is_some_and(|x| x.same_shape(&acc)) {
                    let tree = self.pairwise(f, xs, span)?;
                    return Ok(Value::Array(vec![match tree {
                        Some(t) => self.apply(f, vec![acc, t], span)?,
                        None => acc,
                    }]));
                }
                for x in xs {
                    acc = self.apply(f, vec![acc, x], span)?;
                }
                Ok(Value::Array(vec![acc]))
            }
            Pattern::PartRed { f, m } => {
                let xs = array(one(), span, "partRed")?;
                let init = one();
                let m = self.arith(m, span)?;
                if m <= 0 || xs.len() as i64 % m != 0 {
                    return Err(rt(span, format!("partRed to {m} of an array of {}", xs.len())));
                }
                let k = xs.len() / m as usize;
                let mut out = Vec::new();
                for chunk in xs.chunks(k.max(1)) {
                    let mut acc = init.clone();
                    for x in chunk {
                        acc = self.apply(f, vec![acc, x.clone()], span)?;
                    }
                    out.push(acc);
                }
                // k = 0 (empty input) still yields m results.
                out.resize(m as usize, init);
                Ok(Value::Array(out))
            }
            Pattern::Iterate { n, f } => {
                let mut x = one();
                for _ in 0..*n {
                    x = self.apply(f, vec![x], span)?;
                }
                Ok(x)
            }
            Pattern::Split(m) => {
                let xs = array(one(), span, "split")?;
                let m = self.arith(m, span)?;
                if m <= 0 || xs.len() as i64 % m != 0 {
                    return Err(rt(span, format!("split({m}) of an array of {} elements", xs.len())));
                }
                Ok(Value::Array(xs.chunks(m as usize).map(|c| Value::Array(c.to_vec())).collect()))
            }
            Pattern::Join => {
                let mut out = Vec::new();
                for row in array(one(), span, "join")? {
                    out.extend(array(row, span, "join (inner)")?);
                }
                Ok(Value::Array(out))
            }
            Pattern::Gather(ix) => {
                let xs = array(one(), span, "gather")?;
                let mut out = Vec::with_capacity(xs.len());
                for i in 0..xs.len() {
                    let j = self.index_of(ix, i, span)?;
                    out.push(get_index(&xs, j, span, "gather")?);
                }
                Ok(Value::Array(out))
            }
            Pattern::Scatter(ix) => {
                let xs = array(one(), span, "scatter")?;
                let mut out: Vec<Option<Value>> = vec![None; xs.len()];
                for (i, x) in xs.into_iter().enumerate() {
                    let j = self.index_of(ix, i, span)?;
                    let slot = usize::try_from(j).ok().and_then(|j| out.get_mut(j));
                    match slot {
                        Some(s) => *s = Some(x),
                        None => return Err(rt(span, format!("scatter writes index {j} of {}", out.len()))),
                    }
                }
                let n = out.len();
                out.into_iter()
                    .map(|v| v.ok_or_else(|| rt(span, format!("scatter leaves an element of {n} unwritten"))))
                    .collect::<Result<_, _>>()
                    .map(Value::Array)
            }
            Pattern::Transpose => {
                let rows = array(one(), span, "transpose")?;
                let rows = rows
                    .into_iter()
                    .map(|r| array(r, span, "transpose (inner)"))
                    .collect::<Result<Vec<_>, _>>()?;
                let m = rows.first().map_or(0, |r| r.len());
                if rows.iter().any(|r| r.len() != m) {
                    return Err(rt(span, "transpose of a ragged array"));
                }
                Ok(Value::Array(
                    (0..m).map(|j| Value::Array(rows.iter().map(|r| r[j].clone()).collect())).collect(),
                ))
            }
            Pattern::Zip(_) => {
                let arrays =
                    args.into_iter().map(|a| array(a, span, "zip")).collect::<Result<Vec<_>, _>>()?;
                let n = arrays.first().map_or(0, |a| a.len());
                if arrays.iter().any(|a| a.len() != n) {
                    let lens: Vec<String> = arrays.iter().map(|a| a.len().to_string()).collect();
                    return Err(rt(span, format!("zip of arrays of different lengths {}", lens.join(", "))));
                }
                let mut iters: Vec<_> = arrays.into_iter().map(|a| a.into_iter()).collect();
                Ok(Value::Array(
                    (0..n)
                        .map(|_| Value::Tuple(iters.iter_mut().filter_map(|it| it.next()).collect()))
                        .collect(),
                ))
            }
            Pattern::Get(i) => match one() {
                Value::Tuple(mut vs) if *i < vs.len() => Ok(vs.swap_remove(*i)),
                other => Err(rt(span, format!("get({i}) of {}", other.describe()))),
            },
            Pattern::At(i) => {
                let xs = array(one(), span, "at")?;
                let i = self.arith(i, span)?;
                get_index(&xs, i, span, "at")
            }
            Pattern::AsVector(m) => {
                let xs = array(one(), span, "asVector")?;
                let m = *m as usize;
                if xs.len() % m != 0 || xs.iter().any(|x| !matches!(x, Value::Float(_) | Value::Int(_))) {
                    return Err(rt(span, format!("asVector({m}) needs scalars, a multiple of {m} of them")));
                }
                Ok(Value::Array(xs.chunks(m).map(|c| Value::Vector(c.to_vec())).collect()))
            }
            Pattern::AsScalar => {
                let mut out = Vec::new();
                for v in array(one(), span, "asScalar")? {
                    match v {
                        Value::Vector(cs) => out.extend(cs),
                        // Tuple `j` of the result holds component `j` of every field.
                        Value::Tuple(fields) => {
                            let mut lanes: Vec<Vec<Value>> = Vec::new();
                            for (k, f) in fields.into_iter().enumerate() {
                                let Value::Vector(cs) = f else {
                                    return Err(rt(
                                        span,
                                        format!("asScalar of a tuple with {}", f.describe()),
                                    ));
                                };
                                if k == 0 {
                                    lanes = (0..cs.len()).map(|_| Vec::new()).collect();
                                } else if cs.len() != lanes.len() {
                                    return Err(rt(
                                        span,
                                        "asScalar of a tuple of vectors of different widths".to_string(),
                                    ));
                                }
                                for (lane, c) in lanes.iter_mut().zip(cs) {
                                    lane.push(c);
                                }
                            }
                            out.extend(lanes.into_iter().map(Value::Tuple));
                        }
                        other => return Err(rt(span, format!("asScalar of {}", other.describe()))),
                    }
                }
                Ok(Value::Array(out))
            }
            Pattern::ToGlobal(f) | Pattern::ToLocal(f) | Pattern::ToPrivate(f) => self.apply(f, args, span),
            Pattern::Slide { size, step } => {
                let xs = array(one(), span, "slide")?;
                Ok(Value::Array(self.windows(xs, size, step, "slide", span)?))
            }
            // `mapSeq(f) o slide(size, step)`.
            Pattern::SlideSeq { size, step, f } => {
                let xs = array(one(), span, "slideSeqPlus")?;
                let windows = self.windows(xs, size, step, "slideSeqPlus", span)?;
                Ok(Value::Array(
                    windows.into_iter().map(|w| self.apply(f, vec![w], span)).collect::<Result<_, _>>()?,
                ))
            }
            Pattern::Pad { left, right, mode } => {
                let xs = array(one(), span, "pad")?;
                let (l, r) = (self.arith(left, span)?, self.arith(right, span)?);
                let n = xs.len() as i64;
                if n == 0 || l < 0 || r < 0 {
                    return Err(rt(span, format!("pad({l}, {r}) of an array of {n}")));
                }
                let mut out = Vec::with_capacity((l + n + r) as usize);
                for j in 0..l + n + r {
                    let i = j - l;
                    let k = match mode {
                        PadMode::Clamp => i.clamp(0, n - 1),
                        PadMode::Mirror => {
                            let p = i.rem_euclid(2 * n);
                            if p >= n {
                                2 * n - 1 - p
                            } else {
                                p
                            }
                        }
                        PadMode::Wrap => i.rem_euclid(n),
                    };
                    out.push(xs[k as usize].clone());
                }
                Ok(Value::Array(out))
            }
            Pattern::PadConst { left, right, value } => {
                let xs = array(one(), span, "padConst")?;
                let (l, r) = (self.arith(left, span)?, self.arith(right, span)?);
                if l < 0 || r < 0 {
                    return Err(rt(span, format!("padConst({l}, {r}) with a negative amount")));
                }
                let v = literal_value(value);
                let mut out = vec![v.clone(); l as usize];
                out.extend(xs);
                out.extend(std::iter::repeat_n(v, r as usize));
                Ok(Value::Array(out))
            }
            Pattern::Generate { len, f } => {
                let n = self.arith(len, span)?;
                let n = i32::try_from(n).map_err(|_| rt(span, format!("generate of length {n}")))?;
                Ok(Value::Array(
                    (0..n.max(0))
                        .map(|i| self.apply(f, vec![Value::Int(i)], span))
                        .collect::<Result<_, _>>()?,
                ))
            }
            Pattern::Filter => {
                let idx = array(one(), span, "filter (indices)")?;
                let xs = array(one(), span, "filter")?;
                let mut out = Vec::with_capacity(idx.len());
                for i in idx {
                    match i {
                        Value::Int(i) => out.push(get_index(&xs, i as i64, span, "filter")?),
                        other => return Err(rt(span, format!("filter index {}", other.describe()))),
                    }
                }
                Ok(Value::Array(out))
            }
            Pattern::Id => Ok(one()),
        }
    }
}

fn get_index(xs: &[Value], i: i64, span: Span, what: &str) -> Result<Value, InterpError> {
    usize::try_from(i)
        .ok()
        .and_then(|i| xs.get(i))
        .cloned()
        .ok_or_else(|| rt(span, format!("{what}: index {i} out of bounds for an array of {}", xs.len())))
}
