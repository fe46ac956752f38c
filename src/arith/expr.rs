//! The expression data type, evaluation and C printing.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

/// What a variable stands for; it decides how the code generator names it
/// and what the simplifier may assume about it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum VarKind {
    /// An array length or other size known only at run time (`N`); `>= 1`.
    Size,
    /// A loop or thread index; lies in its [`Range`].
    Index,
}

/// A half-open range `start <= v < stop` (`stop = None`: unbounded).
/// The bounds are shared (`Arc`, as expressions cross threads in
/// `explore`): every occurrence of a variable carries its range, and
/// copying an expression copies its variables.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Range {
    pub start: Arc<ArithExpr>,
    pub stop: Option<Arc<ArithExpr>>,
}

impl Range {
    pub fn new(start: ArithExpr, stop: ArithExpr) -> Range {
        Range { start: Arc::new(start), stop: Some(Arc::new(stop)) }
    }
    /// The range of a size variable: `1 <= v`.
    pub fn size() -> Range {
        Range { start: Arc::new(ArithExpr::Cst(1)), stop: None }
    }
    /// `0 <= v`, no upper bound known.
    pub fn natural() -> Range {
        Range { start: Arc::new(ArithExpr::Cst(0)), stop: None }
    }
}

/// A named integer variable. Identity is the name: the code generator
/// guarantees names are unique within a kernel.
#[derive(Clone, Debug)]
pub struct Var {
    pub name: String,
    pub kind: VarKind,
    pub range: Range,
}

impl PartialEq for Var {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}
impl Eq for Var {}
impl std::hash::Hash for Var {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.name.hash(state)
    }
}
impl PartialOrd for Var {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Var {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.name.cmp(&other.name)
    }
}

/// Comparison operators of predicates (used by `IfThenElse`, e.g. for `pad`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CmpOp {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

impl CmpOp {
    pub fn as_c(self) -> &'static str {
        match self {
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
            CmpOp::Eq => "==",
            CmpOp::Ne => "!=",
        }
    }
    pub fn holds(self, a: i64, b: i64) -> bool {
        match self {
            CmpOp::Lt => a < b,
            CmpOp::Le => a <= b,
            CmpOp::Gt => a > b,
            CmpOp::Ge => a >= b,
            CmpOp::Eq => a == b,
            CmpOp::Ne => a != b,
        }
    }
}

/// A comparison between two expressions.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Pred {
    pub lhs: ArithExpr,
    pub op: CmpOp,
    pub rhs: ArithExpr,
}

/// A symbolic integer expression.
///
/// Children are shared (`Arc`): cloning an expression copies one node, not
/// the tree. The code generator copies its (large, raw) index expressions
/// many times (view consumption duplicates `join`'s index, the memo keeps
/// what it was asked), and that copying and freeing was most of its time.
/// Equality, order and hashing look through the sharing: they are those of
/// the tree.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ArithExpr {
    Cst(i64),
    Var(Var),
    /// n-ary sum.
    Sum(Arc<Vec<ArithExpr>>),
    /// n-ary product.
    Prod(Arc<Vec<ArithExpr>>),
    /// Integer division, C semantics (truncates towards zero).
    Div(Arc<ArithExpr>, Arc<ArithExpr>),
    /// Division known to be exact (`N / 128` as an array length when the
    /// program asserts divisibility); printed like `Div`.
    ExactDiv(Arc<ArithExpr>, Arc<ArithExpr>),
    /// Remainder, C semantics (sign of the dividend).
    Mod(Arc<ArithExpr>, Arc<ArithExpr>),
    /// `base ^ exponent`, exponent non-negative.
    Pow(Arc<ArithExpr>, Arc<ArithExpr>),
    /// Integer base-2 logarithm (floor) of a positive value.
    Log2(Arc<ArithExpr>),
    Min(Arc<ArithExpr>, Arc<ArithExpr>),
    Max(Arc<ArithExpr>, Arc<ArithExpr>),
    IfThenElse(Arc<Pred>, Arc<ArithExpr>, Arc<ArithExpr>),
}

/// Why an expression has no value.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EvalError {
    #[error("unbound variable `{0}`")]
    Unbound(String),
    #[error("division by zero in `{0}`")]
    DivByZero(String),
    #[error("arithmetic overflow in `{0}`")]
    Overflow(String),
}

// `add`/`sub`/`mul`/`div` are plain constructors taking owned operands, used
// across the compiler; they are not meant as operator-trait implementations.
#[allow(clippy::should_implement_trait)]
impl ArithExpr {
    pub fn cst(c: i64) -> ArithExpr {
        ArithExpr::Cst(c)
    }
    /// A size variable (`>= 1`).
    pub fn size(name: &str) -> ArithExpr {
        ArithExpr::Var(Var { name: name.to_string(), kind: VarKind::Size, range: Range::size() })
    }
    /// An index variable in `[start, stop)`.
    pub fn index(name: &str, start: ArithExpr, stop: ArithExpr) -> ArithExpr {
        ArithExpr::Var(Var { name: name.to_string(), kind: VarKind::Index, range: Range::new(start, stop) })
    }
    /// The sum of `terms` as given (not simplified).
    pub fn sum(terms: Vec<ArithExpr>) -> ArithExpr {
        ArithExpr::Sum(Arc::new(terms))
    }
    /// The product of `factors` as given (not simplified).
    pub fn prod(factors: Vec<ArithExpr>) -> ArithExpr {
        ArithExpr::Prod(Arc::new(factors))
    }
    pub fn add(a: ArithExpr, b: ArithExpr) -> ArithExpr {
        ArithExpr::sum(vec![a, b])
    }
    pub fn sub(a: ArithExpr, b: ArithExpr) -> ArithExpr {
        ArithExpr::sum(vec![a, ArithExpr::prod(vec![ArithExpr::Cst(-1), b])])
    }
    pub fn mul(a: ArithExpr, b: ArithExpr) -> ArithExpr {
        ArithExpr::prod(vec![a, b])
    }
    pub fn div(a: ArithExpr, b: ArithExpr) -> ArithExpr {
        ArithExpr::Div(Arc::new(a), Arc::new(b))
    }
    pub fn exact_div(a: ArithExpr, b: ArithExpr) -> ArithExpr {
        ArithExpr::ExactDiv(Arc::new(a), Arc::new(b))
    }
    pub fn modulo(a: ArithExpr, b: ArithExpr) -> ArithExpr {
        ArithExpr::Mod(Arc::new(a), Arc::new(b))
    }
    pub fn pow(a: ArithExpr, b: ArithExpr) -> ArithExpr {
        ArithExpr::Pow(Arc::new(a), Arc::new(b))
    }
    pub fn log2(a: ArithExpr) -> ArithExpr {
        ArithExpr::Log2(Arc::new(a))
    }
    pub fn min(a: ArithExpr, b: ArithExpr) -> ArithExpr {
        ArithExpr::Min(Arc::new(a), Arc::new(b))
    }
    pub fn max(a: ArithExpr, b: ArithExpr) -> ArithExpr {
        ArithExpr::Max(Arc::new(a), Arc::new(b))
    }
    pub fn if_then_else(p: Pred, t: ArithExpr, e: ArithExpr) -> ArithExpr {
        ArithExpr::IfThenElse(Arc::new(p), Arc::new(t), Arc::new(e))
    }

    /// The constant value, if this is a constant.
    pub fn as_cst(&self) -> Option<i64> {
        match self {
            ArithExpr::Cst(c) => Some(*c),
            _ => None,
        }
    }

    /// Evaluates with the given variable values.
    pub fn eval(&self, env: &HashMap<String, i64>) -> Result<i64, EvalError> {
        self.eval_with(&|name| env.get(name).copied())
    }

    /// Evaluates, looking variables up through `lookup`.
    pub fn eval_with(&self, lookup: &dyn Fn(&str) -> Option<i64>) -> Result<i64, EvalError> {
        let ovf = || EvalError::Overflow(self.to_string());
        let dz = || EvalError::DivByZero(self.to_string());
        Ok(match self {
            ArithExpr::Cst(c) => *c,
            ArithExpr::Var(v) => lookup(&v.name).ok_or_else(|| EvalError::Unbound(v.name.clone()))?,
            ArithExpr::Sum(es) => {
                let mut acc: i64 = 0;
                for e in es.iter() {
                    acc = acc.checked_add(e.eval_with(lookup)?).ok_or_else(ovf)?;
                }
                acc
            }
            ArithExpr::Prod(es) => {
                let mut acc: i64 = 1;
                for e in es.iter() {
                    acc = acc.checked_mul(e.eval_with(lookup)?).ok_or_else(ovf)?;
                }
                acc
            }
            ArithExpr::Div(a, b) | ArithExpr::ExactDiv(a, b) => {
                let (a, b) = (a.eval_with(lookup)?, b.eval_with(lookup)?);
                if b == 0 {
                    return Err(dz());
                }
                a.checked_div(b).ok_or_else(ovf)?
            }
            ArithExpr::Mod(a, b) => {
                let (a, b) = (a.eval_with(lookup)?, b.eval_with(lookup)?);
                if b == 0 {
                    return Err(dz());
                }
                a.checked_rem(b).ok_or_else(ovf)?
            }
            ArithExpr::Pow(a, b) => {
                let (a, b) = (a.eval_with(lookup)?, b.eval_with(lookup)?);
                let b = u32::try_from(b).map_err(|_| ovf())?;
                a.checked_pow(b).ok_or_else(ovf)?
            }
            ArithExpr::Log2(a) => {
                let a = a.eval_with(lookup)?;
                if a <= 0 {
                    return Err(dz());
                }
                63 - a.leading_zeros() as i64
            }
            ArithExpr::Min(a, b) => a.eval_with(lookup)?.min(b.eval_with(lookup)?),
            ArithExpr::Max(a, b) => a.eval_with(lookup)?.max(b.eval_with(lookup)?),
            ArithExpr::IfThenElse(p, t, e) => {
                let (l, r) = (p.lhs.eval_with(lookup)?, p.rhs.eval_with(lookup)?);
                if p.op.holds(l, r) {
                    t.eval_with(lookup)?
                } else {
                    e.eval_with(lookup)?
                }
            }
        })
    }

    /// All variables, each once, in first-occurrence order.
    pub fn vars(&self) -> Vec<Var> {
        let mut out: Vec<Var> = Vec::new();
        self.visit_vars(&mut |v| {
            if !out.contains(v) {
                out.push(v.clone())
            }
        });
        out
    }

    /// Calls `f` on every variable occurrence (ranges not looked into).
    pub(crate) fn visit_vars<'a>(&'a self, f: &mut dyn FnMut(&'a Var)) {
        match self {
            ArithExpr::Cst(_) => {}
            ArithExpr::Var(v) => f(v),
            ArithExpr::Sum(es) | ArithExpr::Prod(es) => es.iter().for_each(|e| e.visit_vars(f)),
            ArithExpr::Div(a, b)
            | ArithExpr::ExactDiv(a, b)
            | ArithExpr::Mod(a, b)
            | ArithExpr::Pow(a, b)
            | ArithExpr::Min(a, b)
            | ArithExpr::Max(a, b) => {
                a.visit_vars(f);
                b.visit_vars(f)
            }
            ArithExpr::Log2(a) => a.visit_vars(f),
            ArithExpr::IfThenElse(p, t, e) => {
                p.lhs.visit_vars(f);
                p.rhs.visit_vars(f);
                t.visit_vars(f);
                e.visit_vars(f)
            }
        }
    }

    /// [`substitute`](Self::substitute) in place, with the replacement of a
    /// variable (by name) given by `lookup`: only the nodes above a replaced
    /// variable are rebuilt, the rest of the tree stays shared.
    pub fn substitute_with(&mut self, lookup: &dyn Fn(&str) -> Option<ArithExpr>) {
        if let Some(e) = self.substituted_with(lookup) {
            *self = e;
        }
    }

    /// `self` with variables replaced through `lookup`; `None` when no
    /// variable is replaced.
    fn substituted_with(&self, lookup: &dyn Fn(&str) -> Option<ArithExpr>) -> Option<ArithExpr> {
        self.rewritten(&|e| match e {
            ArithExpr::Var(v) => lookup(&v.name),
            _ => None,
        })
    }

    /// `self` with every node for which `f` answers replaced by the answer
    /// (outermost first; a replacement is not looked into); `None` when no
    /// node is replaced. Only the nodes above a replaced one are rebuilt.
    pub fn rewritten<F: Fn(&ArithExpr) -> Option<ArithExpr>>(&self, f: &F) -> Option<ArithExpr> {
        use ArithExpr as E;
        if let Some(e) = f(self) {
            return Some(e);
        }
        // A changed child, or the old one shared.
        let child = |x: &Arc<E>, changed: &mut bool| match x.rewritten(f) {
            Some(n) => {
                *changed = true;
                Arc::new(n)
            }
            None => x.clone(),
        };
        let pair = |a: &Arc<E>, b: &Arc<E>| {
            let mut changed = false;
            let (a, b) = (child(a, &mut changed), child(b, &mut changed));
            changed.then_some((a, b))
        };
        match self {
            E::Cst(_) | E::Var(_) => None,
            E::Sum(es) | E::Prod(es) => {
                let mut out: Option<Vec<E>> = None;
                for (i, e) in es.iter().enumerate() {
                    match (e.rewritten(f), &mut out) {
                        (Some(n), None) => {
                            let mut v = Vec::with_capacity(es.len());
                            v.extend_from_slice(&es[..i]);
                            v.push(n);
                            out = Some(v);
                        }
                        (Some(n), Some(v)) => v.push(n),
                        (None, Some(v)) => v.push(e.clone()),
                        (None, None) => {}
                    }
                }
                let out = out?;
                Some(match self {
                    E::Sum(_) => E::sum(out),
                    _ => E::prod(out),
                })
            }
            E::Div(a, b) => pair(a, b).map(|(a, b)| E::Div(a, b)),
            E::ExactDiv(a, b) => pair(a, b).map(|(a, b)| E::ExactDiv(a, b)),
            E::Mod(a, b) => pair(a, b).map(|(a, b)| E::Mod(a, b)),
            E::Pow(a, b) => pair(a, b).map(|(a, b)| E::Pow(a, b)),
            E::Min(a, b) => pair(a, b).map(|(a, b)| E::Min(a, b)),
            E::Max(a, b) => pair(a, b).map(|(a, b)| E::Max(a, b)),
            E::Log2(a) => a.rewritten(f).map(|a| E::Log2(Arc::new(a))),
            E::IfThenElse(p, t, e) => {
                let (l, r) = (p.lhs.rewritten(f), p.rhs.rewritten(f));
                let mut changed = l.is_some() || r.is_some();
                let (t, e) = (child(t, &mut changed), child(e, &mut changed));
                changed.then(|| {
                    let p = Pred {
                        lhs: l.unwrap_or_else(|| p.lhs.clone()),
                        op: p.op,
                        rhs: r.unwrap_or_else(|| p.rhs.clone()),
                    };
                    E::IfThenElse(Arc::new(p), t, e)
                })
            }
        }
    }

    /// Replaces the variables named in `known` by their values, in place.
    pub fn substitute_known(&mut self, known: &std::collections::BTreeMap<String, i64>) {
        if !known.is_empty() {
            self.substitute_with(&|name| known.get(name).map(|v| ArithExpr::Cst(*v)));
        }
    }

    /// Replaces variables by expressions (by name).
    pub fn substitute(&self, map: &HashMap<String, ArithExpr>) -> ArithExpr {
        self.substituted_with(&|name| map.get(name).cloned()).unwrap_or_else(|| self.clone())
    }
}

/// Prints as an OpenCL C expression, fully parenthesised where needed.
impl fmt::Display for ArithExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn atom(e: &ArithExpr) -> bool {
            matches!(e, ArithExpr::Cst(c) if *c >= 0) || matches!(e, ArithExpr::Var(_))
        }
        fn paren(e: &ArithExpr, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            if atom(e)
                || matches!(
                    e,
                    ArithExpr::Min(..) | ArithExpr::Max(..) | ArithExpr::Log2(..) | ArithExpr::Pow(..)
                )
            {
                write!(f, "{e}")
            } else {
                write!(f, "({e})")
            }
        }
        match self {
            ArithExpr::Cst(c) => write!(f, "{c}"),
            ArithExpr::Var(v) => write!(f, "{}", v.name),
            ArithExpr::Sum(es) => {
                if es.is_empty() {
                    return write!(f, "0");
                }
                for (i, e) in es.iter().enumerate() {
                    // Print `a + -1*b` as `a - b` for readability.
                    let neg = match e {
                        ArithExpr::Cst(c) if *c < 0 && i > 0 => Some(ArithExpr::Cst(-*c)),
                        ArithExpr::Prod(ps) if i > 0 && ps.first() == Some(&ArithExpr::Cst(-1)) => {
                            Some(if ps.len() == 2 {
                                ps[1].clone()
                            } else {
                                ArithExpr::prod(ps[1..].to_vec())
                            })
                        }
                        _ => None,
                    };
                    match neg {
                        Some(n) => {
                            write!(f, " - ")?;
                            paren(&n, f)?
                        }
                        None => {
                            if i > 0 {
                                write!(f, " + ")?;
                            }
                            if matches!(e, ArithExpr::Sum(_)) {
                                write!(f, "({e})")?
                            } else {
                                write!(f, "{e}")?
                            }
                        }
                    }
                }
                Ok(())
            }
            ArithExpr::Prod(es) => {
                if es.is_empty() {
                    return write!(f, "1");
                }
                for (i, e) in es.iter().enumerate() {
                    if i > 0 {
                        write!(f, " * ")?;
                    }
                    if i == 0 && matches!(e, ArithExpr::Cst(_)) {
                        write!(f, "{e}")?
                    } else {
                        paren(e, f)?
                    }
                }
                Ok(())
            }
            ArithExpr::Div(a, b) | ArithExpr::ExactDiv(a, b) => {
                paren(a, f)?;
                write!(f, " / ")?;
                paren(b, f)
            }
            ArithExpr::Mod(a, b) => {
                paren(a, f)?;
                write!(f, " % ")?;
                paren(b, f)
            }
            ArithExpr::Pow(a, b) => write!(f, "lift_pow({a}, {b})"),
            ArithExpr::Log2(a) => write!(f, "lift_log2({a})"),
            ArithExpr::Min(a, b) => write!(f, "min({a}, {b})"),
            ArithExpr::Max(a, b) => write!(f, "max({a}, {b})"),
            ArithExpr::IfThenElse(p, t, e) => {
                write!(f, "(({} {} {}) ? {} : {})", p.lhs, p.op.as_c(), p.rhs, t, e)
            }
        }
    }
}
