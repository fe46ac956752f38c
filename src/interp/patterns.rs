//! The meaning of each pattern: one match arm per pattern, each calling the
//! function of its family (maps and reductions, which call functions;
//! layout patterns, which only move elements; padding and selection).

use super::error::{InterpError, RuntimeProblem as P};
use super::eval::{array, get_index, literal_value, rt, Interp};
use crate::arith::ArithExpr;
use crate::ir::Value;
use crate::ir::{FunDecl, IndexFun, Literal, PadMode, Pattern, ReduceKind, Span};

/// The last data argument (patterns take their array last).
fn last(args: &mut Vec<Value>) -> Value {
    args.pop().unwrap_or(Value::Int(0))
}

impl Interp<'_> {
    pub(super) fn apply_pattern(
        &mut self,
        p: &Pattern,
        mut args: Vec<Value>,
        span: Span,
    ) -> Result<Value, InterpError> {
        if let Some(want) = p.data_args() {
            if args.len() != want {
                return Err(rt(span, P::PatternArity { want, got: args.len() }));
            }
        }
        let a = &mut args;
        match p {
            Pattern::Map { f, .. } => self.map(f, last(a), span),
            Pattern::MapVec { f } => self.map_vec(f, last(a), span),
            Pattern::Reduce { f, kind } => self.reduce(f, *kind, args, span),
            Pattern::PartRed { f, m } => self.part_red(f, m, args, span),
            Pattern::Iterate { n, f } => self.iterate(*n, f, last(a), span),
            Pattern::Split(m) => self.split(m, last(a), span),
            Pattern::Join => join(last(a), span),
            Pattern::Gather(ix) => self.gather(ix, last(a), span),
            Pattern::Scatter(ix) => self.scatter(ix, last(a), span),
            Pattern::Transpose => transpose(last(a), span),
            Pattern::Zip(_) => zip(args, span),
            Pattern::Get(i) => get(*i, last(a), span),
            Pattern::At(i) => self.at(i, last(a), span),
            Pattern::AsVector(m) => as_vector(*m as usize, last(a), span),
            Pattern::AsScalar => as_scalar(last(a), span),
            Pattern::ToGlobal(f) | Pattern::ToLocal(f) | Pattern::ToPrivate(f) => self.apply(f, args, span),
            Pattern::Slide { size, step } => self.slide(size, step, last(a), span),
            Pattern::SlideSeq { size, step, f } => self.slide_seq(size, step, f, last(a), span),
            Pattern::Pad { left, right, mode } => self.pad(left, right, *mode, last(a), span),
            Pattern::PadConst { left, right, value } => self.pad_const(left, right, value, last(a), span),
            Pattern::Generate { len, f } => self.generate(len, f, span),
            Pattern::Filter => filter(args, span),
            Pattern::Id => Ok(last(a)),
        }
    }

    // Maps and reductions.

    /// `f` applied to each element of `xs`; spread over threads where
    /// there are enough elements.
    fn map_all(&mut self, f: &FunDecl, xs: Vec<Value>, span: Span) -> Result<Vec<Value>, InterpError> {
        if self.spreads(xs.len()) {
            return self.apply_spread(f, xs, 1, span);
        }
        xs.into_iter().map(|x| self.apply(f, vec![x], span)).collect()
    }

    /// Whether `n` independent applications are spread over threads.
    pub(super) fn spreads(&self, n: usize) -> bool {
        self.threads > 1 && n >= MIN_PER_THREAD * self.threads
    }

    /// `f` applied to each `arity` consecutive values of `xs` (calls
    /// independent of each other: a map's elements, a level of a pairwise
    /// reduction's pairs; `xs` a multiple of `arity` long), in `threads`
    /// contiguous chunks, each evaluated by an
    /// interpreter of its own (the same environment and sizes, the budget
    /// that is left, no threads of its own). The elements are independent,
    /// so the result is the serial one, and the first error in element
    /// order is the serial one's. Work only grows, so the chunks' work
    /// added up exceeds the budget exactly where the serial evaluation's
    /// does (the refusal then placed at the map).
    pub(super) fn apply_spread(
        &mut self,
        f: &FunDecl,
        xs: Vec<Value>,
        arity: usize,
        span: Span,
    ) -> Result<Vec<Value>, InterpError> {
        let per = (xs.len() / arity).div_ceil(self.threads) * arity;
        let mut chunks: Vec<Vec<Value>> = Vec::new();
        let mut it = xs.into_iter();
        loop {
            let c: Vec<Value> = it.by_ref().take(per).collect();
            if c.is_empty() {
                break;
            }
            chunks.push(c);
        }
        let left = self.budget.saturating_sub(self.work);
        let (program, env, sizes) = (self.program, &self.env, &self.sizes);
        let done: Vec<(Result<Vec<Value>, InterpError>, u64)> = std::thread::scope(|s| {
            let handles: Vec<_> = chunks
                .into_iter()
                .map(|c| {
                    s.spawn(move || {
                        let mut it = Interp {
                            program,
                            env: env.clone(),
                            sizes: sizes.clone(),
                            work: 0,
                            budget: left,
                            threads: 1,
                        };
                        let mut r = Ok(Vec::with_capacity(c.len() / arity));
                        let mut args = c.into_iter();
                        while let (Ok(out), Some(first)) = (&mut r, args.next()) {
                            let call = std::iter::once(first).chain(args.by_ref().take(arity - 1)).collect();
                            match it.apply(f, call, span) {
                                Ok(v) => out.push(v),
                                Err(e) => r = Err(e),
                            }
                        }
                        (r, it.work)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))).collect()
        });
        let mut out = Vec::new();
        for (r, work) in done {
            self.work = self.work.saturating_add(work);
            out.extend(r?);
        }
        if self.work > self.budget {
            return Err(InterpError::TooLarge { limit: self.budget, span });
        }
        Ok(out)
    }

    fn map(&mut self, f: &FunDecl, x: Value, span: Span) -> Result<Value, InterpError> {
        let xs = array(x, span, "map")?;
        Ok(Value::array(self.map_all(f, xs, span)?))
    }

    fn map_vec(&mut self, f: &FunDecl, x: Value, span: Span) -> Result<Value, InterpError> {
        match x {
            Value::Vector(cs) => Ok(Value::Vector(self.map_all(f, cs, span)?)),
            other => Err(rt(span, P::NotAVector { found: other.describe() })),
        }
    }

    /// `args` is `[init, xs]`.
    fn reduce(
        &mut self,
        f: &FunDecl,
        kind: ReduceKind,
        mut args: Vec<Value>,
        span: Span,
    ) -> Result<Value, InterpError> {
        let xs = array(last(&mut args), span, "reduce")?;
        let mut acc = last(&mut args);
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
            return Ok(Value::array(vec![match tree {
                Some(t) => self.apply(f, vec![acc, t], span)?,
                None => acc,
            }]));
        }
        for x in xs {
            acc = self.apply(f, vec![acc, x], span)?;
        }
        Ok(Value::array(vec![acc]))
    }

    /// `args` is `[init, xs]`.
    fn part_red(
        &mut self,
        f: &FunDecl,
        m: &ArithExpr,
        mut args: Vec<Value>,
        span: Span,
    ) -> Result<Value, InterpError> {
        let xs = array(last(&mut args), span, "partRed")?;
        let init = last(&mut args);
        let m = self.arith(m, span)?;
        if m <= 0 || xs.len() as i64 % m != 0 {
            return Err(rt(span, P::PartRed { m, len: xs.len() }));
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
        Ok(Value::array(out))
    }

    fn iterate(&mut self, n: u32, f: &FunDecl, mut x: Value, span: Span) -> Result<Value, InterpError> {
        for _ in 0..n {
            x = self.apply(f, vec![x], span)?;
        }
        Ok(x)
    }

    /// `mapSeq(f) o slide(size, step)`.
    fn slide_seq(
        &mut self,
        size: &ArithExpr,
        step: &ArithExpr,
        f: &FunDecl,
        x: Value,
        span: Span,
    ) -> Result<Value, InterpError> {
        let xs = array(x, span, "slideSeqPlus")?;
        let windows = self.windows(xs, size, step, "slideSeqPlus", span)?;
        Ok(Value::array(self.map_all(f, windows, span)?))
    }

    fn generate(&mut self, len: &ArithExpr, f: &FunDecl, span: Span) -> Result<Value, InterpError> {
        let n = self.arith(len, span)?;
        let n = i32::try_from(n).map_err(|_| rt(span, P::GenerateLength(n)))?;
        Ok(Value::array(
            (0..n.max(0)).map(|i| self.apply(f, vec![Value::Int(i)], span)).collect::<Result<_, _>>()?,
        ))
    }

    // Layout patterns with sizes or index functions.

    fn split(&self, m: &ArithExpr, x: Value, span: Span) -> Result<Value, InterpError> {
        let xs = array(x, span, "split")?;
        let m = self.arith(m, span)?;
        if m <= 0 || xs.len() as i64 % m != 0 {
            return Err(rt(span, P::Split { m, len: xs.len() }));
        }
        Ok(Value::array(xs.chunks(m as usize).map(|c| Value::array(c.to_vec())).collect()))
    }

    fn gather(&self, ix: &IndexFun, x: Value, span: Span) -> Result<Value, InterpError> {
        let xs = array(x, span, "gather")?;
        let mut out = Vec::with_capacity(xs.len());
        for i in 0..xs.len() {
            let j = self.index_of(ix, i, span)?;
            out.push(get_index(&xs, j, span, "gather")?);
        }
        Ok(Value::array(out))
    }

    fn scatter(&self, ix: &IndexFun, x: Value, span: Span) -> Result<Value, InterpError> {
        let xs = array(x, span, "scatter")?;
        let mut out: Vec<Option<Value>> = vec![None; xs.len()];
        for (i, x) in xs.into_iter().enumerate() {
            let j = self.index_of(ix, i, span)?;
            let slot = usize::try_from(j).ok().and_then(|j| out.get_mut(j));
            match slot {
                Some(s) => *s = Some(x),
                None => return Err(rt(span, P::ScatterIndex { i: j, len: out.len() })),
            }
        }
        let n = out.len();
        out.into_iter()
            .map(|v| v.ok_or_else(|| rt(span, P::ScatterUnwritten { len: n })))
            .collect::<Result<_, _>>()
            .map(Value::array)
    }

    fn at(&self, i: &ArithExpr, x: Value, span: Span) -> Result<Value, InterpError> {
        let xs = array(x, span, "at")?;
        let i = self.arith(i, span)?;
        get_index(&xs, i, span, "at")
    }

    fn slide(&self, size: &ArithExpr, step: &ArithExpr, x: Value, span: Span) -> Result<Value, InterpError> {
        let xs = array(x, span, "slide")?;
        Ok(Value::array(self.windows(xs, size, step, "slide", span)?))
    }

    // Padding.

    fn pad(
        &self,
        left: &ArithExpr,
        right: &ArithExpr,
        mode: PadMode,
        x: Value,
        span: Span,
    ) -> Result<Value, InterpError> {
        let xs = array(x, span, "pad")?;
        let (l, r) = (self.arith(left, span)?, self.arith(right, span)?);
        let n = xs.len() as i64;
        if n == 0 || l < 0 || r < 0 {
            return Err(rt(span, P::Pad { left: l, right: r, n }));
        }
        let mut out = Vec::with_capacity((l + n + r) as usize);
        for j in 0..l + n + r {
            out.push(xs[pad_source(j - l, n, mode) as usize].clone());
        }
        Ok(Value::array(out))
    }

    fn pad_const(
        &self,
        left: &ArithExpr,
        right: &ArithExpr,
        value: &Literal,
        x: Value,
        span: Span,
    ) -> Result<Value, InterpError> {
        let xs = array(x, span, "padConst")?;
        let (l, r) = (self.arith(left, span)?, self.arith(right, span)?);
        if l < 0 || r < 0 {
            return Err(rt(span, P::PadConstNegative { left: l, right: r }));
        }
        let v = literal_value(value);
        let mut out = vec![v.clone(); l as usize];
        out.extend(xs);
        out.extend(std::iter::repeat_n(v, r as usize));
        Ok(Value::array(out))
    }
}

/// The element of an array of `n` that `pad` puts at index `i` (counted
/// from the first element of the array, so negative on the left).
fn pad_source(i: i64, n: i64, mode: PadMode) -> i64 {
    match mode {
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
    }
}

// Layout patterns without parameters.

fn join(x: Value, span: Span) -> Result<Value, InterpError> {
    let mut out = Vec::new();
    for row in array(x, span, "join")? {
        out.extend(array(row, span, "join (inner)")?);
    }
    Ok(Value::array(out))
}

fn transpose(x: Value, span: Span) -> Result<Value, InterpError> {
    let rows = array(x, span, "transpose")?;
    let rows =
        rows.into_iter().map(|r| array(r, span, "transpose (inner)")).collect::<Result<Vec<_>, _>>()?;
    let m = rows.first().map_or(0, |r| r.len());
    if rows.iter().any(|r| r.len() != m) {
        return Err(rt(span, P::RaggedTranspose));
    }
    Ok(Value::array((0..m).map(|j| Value::array(rows.iter().map(|r| r[j].clone()).collect())).collect()))
}

fn zip(args: Vec<Value>, span: Span) -> Result<Value, InterpError> {
    let arrays = args.into_iter().map(|a| array(a, span, "zip")).collect::<Result<Vec<_>, _>>()?;
    let n = arrays.first().map_or(0, |a| a.len());
    if arrays.iter().any(|a| a.len() != n) {
        return Err(rt(span, P::ZipLengths { lens: arrays.iter().map(Vec::len).collect() }));
    }
    let mut iters: Vec<_> = arrays.into_iter().map(|a| a.into_iter()).collect();
    Ok(Value::array(
        (0..n).map(|_| Value::Tuple(iters.iter_mut().filter_map(|it| it.next()).collect())).collect(),
    ))
}

fn get(i: usize, x: Value, span: Span) -> Result<Value, InterpError> {
    match x {
        Value::Tuple(mut vs) if i < vs.len() => Ok(vs.swap_remove(i)),
        other => Err(rt(span, P::Get { i, found: other.describe() })),
    }
}

fn as_vector(m: usize, x: Value, span: Span) -> Result<Value, InterpError> {
    let xs = array(x, span, "asVector")?;
    if xs.len() % m != 0 || xs.iter().any(|x| !matches!(x, Value::Float(_) | Value::Int(_))) {
        return Err(rt(span, P::AsVector { m }));
    }
    Ok(Value::array(xs.chunks(m).map(|c| Value::Vector(c.to_vec())).collect()))
}

fn as_scalar(x: Value, span: Span) -> Result<Value, InterpError> {
    let mut out = Vec::new();
    for v in array(x, span, "asScalar")? {
        match v {
            Value::Vector(cs) => out.extend(cs),
            Value::Tuple(fields) => out.extend(tuple_lanes(fields, span)?),
            other => return Err(rt(span, P::AsScalar { found: other.describe() })),
        }
    }
    Ok(Value::array(out))
}

/// `asScalar` of a tuple of vectors: tuple `j` of the result holds
/// component `j` of every field.
fn tuple_lanes(fields: Vec<Value>, span: Span) -> Result<Vec<Value>, InterpError> {
    let mut lanes: Vec<Vec<Value>> = Vec::new();
    for (k, f) in fields.into_iter().enumerate() {
        let Value::Vector(cs) = f else {
            return Err(rt(span, P::AsScalarField { found: f.describe() }));
        };
        if k == 0 {
            lanes = (0..cs.len()).map(|_| Vec::new()).collect();
        } else if cs.len() != lanes.len() {
            return Err(rt(span, P::AsScalarWidths));
        }
        for (lane, c) in lanes.iter_mut().zip(cs) {
            lane.push(c);
        }
    }
    Ok(lanes.into_iter().map(Value::Tuple).collect())
}

/// `args` is `[xs, indices]`: the elements of `xs` at the indices.
fn filter(mut args: Vec<Value>, span: Span) -> Result<Value, InterpError> {
    let idx = array(last(&mut args), span, "filter (indices)")?;
    let xs = array(last(&mut args), span, "filter")?;
    let mut out = Vec::with_capacity(idx.len());
    for i in idx {
        match i {
            Value::Int(i) => out.push(get_index(&xs, i as i64, span, "filter")?),
            other => return Err(rt(span, P::FilterIndex { found: other.describe() })),
        }
    }
    Ok(Value::array(out))
}

/// Calls per thread below which a map or a pairwise level is not spread
/// (starting a thread costs more than a few small calls).
const MIN_PER_THREAD: usize = 4;
