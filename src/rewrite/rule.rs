//! The rule type, its errors, and helpers shared by the rule families.

use crate::arith::{self, ArithExpr};
use crate::ir::visit::Node;
use crate::ir::{
    Expr, ExprKind, FunDecl, FunId, FunKind, IdGen, IndexFun, MapKind, Pattern, Program, ReduceKind, Span,
    UserFun,
};
use crate::passes::typecheck::Types;
use crate::types::Type;
use std::collections::BTreeMap;

/// Which figure a rule comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// Algorithmic rules (ICFP 2015, Figure 3), valid at any level.
    Algorithmic,
    /// OpenCL-specific lowering rules (ICFP 2015, Figure 4).
    OpenCl,
    /// Rules composed of smaller ones: tiling, interchange, register
    /// blocking, overlapped tiling (CGO 2018, Section 4).
    Macro,
}

/// A parameter a rule takes (`n` of `split-join`).
#[derive(Clone, Copy, Debug)]
pub struct ParamSpec {
    pub name: &'static str,
    pub what: &'static str,
}

/// The parameters given to a rule, by name.
pub type Args = BTreeMap<String, ArithExpr>;

/// A rewrite rule. `matches` checks the shape alone (so that applicable
/// rules can be listed without parameters); `build` checks the side
/// conditions for the given parameters and builds the replacement.
pub struct Rule {
    pub name: &'static str,
    pub family: Family,
    /// The left-hand side, in the notation of `docs/REWRITE.md`.
    pub lhs: &'static str,
    pub rhs: &'static str,
    pub params: &'static [ParamSpec],
    pub matches: fn(&Site<'_>) -> Result<(), RuleError>,
    pub build: fn(&Site<'_>, &Args, &mut Builder) -> Result<Expr, RuleError>,
}

impl std::fmt::Debug for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Rule({})", self.name)
    }
}

/// Where a rule is tried: the expression, the nodes above it (root first),
/// the program and the def's types.
pub struct Site<'a> {
    pub prog: &'a Program,
    pub types: &'a Types,
    pub expr: &'a Expr,
    pub above: Vec<Node<'a>>,
}

/// A condition on sizes that a rule could not prove and that the caller
/// must guarantee (`N % 2048 == 0`): `expr` must evaluate to 0.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Constraint {
    pub expr: ArithExpr,
    pub text: String,
}

/// What a rule's builder produces besides the expression: fresh ids, new
/// user functions (vectorised ones), constraints.
pub struct Builder {
    pub gen: IdGen,
    /// Existing user functions followed by the ones this step adds.
    pub user_funs: Vec<UserFun>,
    pub constraints: Vec<Constraint>,
}

/// Why a rule does not apply.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RuleError {
    #[error("`{rule}` does not match here: expected {expected}, found `{found}`")]
    NoMatch { rule: &'static str, expected: &'static str, found: String },
    #[error("`{rule}`: side condition violated: {what}")]
    SideCondition { rule: &'static str, what: String },
    /// The function the rule vectorises has no vector version.
    #[error("`{rule}`: side condition violated: {reason}")]
    NoVectorVersion { rule: &'static str, reason: super::vectorize::VectorError },
    #[error("`{rule}` needs the parameter `{param}` ({what})")]
    MissingParam { rule: &'static str, param: &'static str, what: &'static str },
    #[error("`{rule}` takes no parameter `{param}` (it takes: {takes})")]
    UnknownParam { rule: &'static str, param: String, takes: String },
}

impl Site<'_> {
    /// A shape mismatch, showing what was found (cut to one short line).
    pub fn no_match(&self, rule: &'static str, expected: &'static str) -> RuleError {
        RuleError::NoMatch {
            rule,
            expected,
            found: short(&crate::parse::print_expr(self.prog, self.expr)).replace("_unbound", "_param"),
        }
    }

    pub fn ty(&self, e: &Expr) -> Option<&Type> {
        self.types.exprs.get(&e.id)
    }

    /// The length of an array-typed expression.
    pub fn len(&self, e: &Expr) -> Option<ArithExpr> {
        match self.ty(e)? {
            Type::Array(_, n) => Some(arith::simplify(n)),
            _ => None,
        }
    }

    /// The map kinds of the maps this site is nested in, innermost last.
    pub fn enclosing_maps(&self) -> Vec<MapKind> {
        self.above
            .iter()
            .filter_map(|n| match n {
                Node::Fun(FunDecl { kind: FunKind::Pattern(Pattern::Map { kind, .. }), .. }) => Some(*kind),
                // `mapSeq(f) o slide`, fused.
                Node::Fun(FunDecl { kind: FunKind::Pattern(Pattern::SlideSeq { .. }), .. }) => {
                    Some(MapKind::Seq)
                }
                _ => None,
            })
            .collect()
    }
}

/// Cuts printed text to one line of at most 80 characters.
pub fn short(s: &str) -> String {
    let s = s.replace('\n', " ");
    if s.chars().count() > 80 {
        format!("{}...", s.chars().take(77).collect::<String>())
    } else {
        s
    }
}

/// An arithmetic expression as text, parenthesised unless atomic.
pub fn paren(e: &ArithExpr) -> String {
    match e {
        ArithExpr::Cst(_) | ArithExpr::Var(_) => e.to_string(),
        _ => format!("({e})"),
    }
}

/// `(pattern, data args, span)` of a call of a pattern.
pub fn as_pattern(e: &Expr) -> Option<(&Pattern, &[Expr], Span)> {
    match &e.kind {
        ExprKind::Call(f, args) => match &f.kind {
            FunKind::Pattern(p) => Some((p, args.as_slice(), e.span)),
            FunKind::Lambda(_) | FunKind::UserFun(_) => None,
        },
        ExprKind::Literal(_) | ExprKind::Param(_) => None,
    }
}

/// The parameter `name` of `rule` as an expression.
pub fn arg(rule: &'static str, args: &Args, name: &'static str) -> Result<ArithExpr, RuleError> {
    args.get(name).cloned().ok_or_else(|| {
        let what = super::find_rule(rule)
            .and_then(|r| r.params.iter().find(|p| p.name == name))
            .map_or("", |p| p.what);
        RuleError::MissingParam { rule, param: name, what }
    })
}

/// The parameter `name` as an integer constant within `lo..=hi`.
pub fn int_arg(
    rule: &'static str,
    args: &Args,
    name: &'static str,
    lo: i64,
    hi: i64,
) -> Result<i64, RuleError> {
    let a = arith::simplify(&arg(rule, args, name)?);
    match a.as_cst() {
        Some(v) if (lo..=hi).contains(&v) => Ok(v),
        _ => Err(RuleError::SideCondition {
            rule,
            what: format!("`{name}` must be an integer from {lo} to {hi}, found {a}"),
        }),
    }
}

impl Builder {
    /// Requires `n` to divide `len`: proven, refuted (an error), or recorded
    /// as a constraint when it depends on sizes.
    pub fn divides(&mut self, rule: &'static str, n: &ArithExpr, len: &ArithExpr) -> Result<(), RuleError> {
        let n = arith::simplify(n);
        if n.as_cst().is_some_and(|c| c < 1) {
            return Err(RuleError::SideCondition { rule, what: format!("{n} must be positive") });
        }
        let rem = arith::simplify(&ArithExpr::modulo(len.clone(), n.clone()));
        match rem.as_cst() {
            Some(0) => Ok(()),
            Some(_) => {
                Err(RuleError::SideCondition { rule, what: format!("{n} does not divide the length {len}") })
            }
            None => {
                self.require(
                    ArithExpr::modulo(len.clone(), n.clone()),
                    format!("{} % {} == 0", paren(len), paren(&n)),
                );
                Ok(())
            }
        }
    }

    /// Requires `e >= 0` at every size, proven (a pad of `-1` would drop an
    /// element; the search's pads, `(q - N % q) % q`, are shown to be).
    pub fn non_negative(&self, rule: &'static str, e: &ArithExpr) -> Result<(), RuleError> {
        let e = arith::simplify(e);
        if arith::prove_le(&ArithExpr::Cst(0), &e) {
            return Ok(());
        }
        Err(RuleError::SideCondition { rule, what: format!("{e} must not be negative") })
    }

    /// Requires `a == b`: proven, refuted, or recorded as a constraint.
    pub fn equal(
        &mut self,
        rule: &'static str,
        a: &ArithExpr,
        b: &ArithExpr,
        what: &str,
    ) -> Result<(), RuleError> {
        let d = arith::simplify(&ArithExpr::sub(a.clone(), b.clone()));
        match d.as_cst() {
            Some(0) => Ok(()),
            Some(_) => Err(RuleError::SideCondition { rule, what: format!("{what}: {a} != {b}") }),
            None if arith::prove_eq(a, b) => Ok(()),
            None => {
                self.require(d, format!("{a} == {b}"));
                Ok(())
            }
        }
    }

    fn require(&mut self, expr: ArithExpr, text: String) {
        let c = Constraint { expr, text };
        if !self.constraints.contains(&c) {
            self.constraints.push(c);
        }
    }

    pub fn pattern(&mut self, p: Pattern, args: Vec<Expr>, span: Span) -> Expr {
        self.gen.call_pattern(p, args, span)
    }
}

/// A pattern as a function declaration.
pub fn pat(p: Pattern, span: Span) -> FunDecl {
    FunDecl { id: FunId::FRESH, kind: FunKind::Pattern(p), span }
}

/// `f(args)`, beta-reducing when `f` is a lambda whose parameters are each
/// used at most once (a rule composing functions builds no `let`s).
pub fn apply_fun(gen: &mut IdGen, f: &FunDecl, mut args: Vec<Expr>, span: Span) -> Expr {
    if let FunKind::Lambda(l) = &f.kind {
        // `\(a, b) -> e` applied to one tuple variable `t`: `a` is `get(0, t)`.
        if l.params.len() > 1 && args.len() == 1 && matches!(args[0].kind, ExprKind::Param(_)) {
            let t = args.pop().unwrap_or_else(|| unreachable!("one argument"));
            args = (0..l.params.len())
                .map(|i| {
                    let ti = gen.refresh_expr(&t);
                    gen.call_pattern(Pattern::Get(i), vec![ti], span)
                })
                .collect();
        }
        let f = gen.refresh_fun(f);
        let FunKind::Lambda(l2) = &f.kind else { unreachable!("refresh keeps the kind") };
        // A parameter used twice is substituted only by a variable or a
        // literal (no work is duplicated).
        let trivial = |a: &Expr| matches!(a.kind, ExprKind::Param(_) | ExprKind::Literal(_));
        let once = l2
            .params
            .iter()
            .zip(&args)
            .all(|(p, a)| trivial(a) || crate::ir::visit::count_uses(&l2.body, p.id) <= 1);
        if l.params.len() == args.len() && once {
            let by = l2.params.iter().map(|p| p.id).zip(args).collect();
            return crate::ir::visit::substitute(&l2.body, &by, gen);
        }
        return gen.call(f, args, span);
    }
    let f = gen.refresh_fun(f);
    gen.call(f, args, span)
}

/// Address-space wrappers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mem {
    Global,
    Local,
    Private,
}

/// What the rules see of a pattern. Every pattern is listed in
/// [`classify`], so a new pattern must be considered here.
#[derive(Clone, Copy, Debug)]
pub enum View<'a> {
    Map {
        kind: MapKind,
        f: &'a FunDecl,
    },
    MapVec,
    Reduce {
        kind: ReduceKind,
        f: &'a FunDecl,
    },
    PartRed {
        f: &'a FunDecl,
        m: &'a ArithExpr,
    },
    Iterate {
        n: u32,
        f: &'a FunDecl,
    },
    Split(&'a ArithExpr),
    Join,
    Gather(&'a IndexFun),
    Transpose,
    AsVector(u8),
    AsScalar,
    /// `toGlobal`, `toLocal`, `toPrivate`.
    To,
    Slide {
        size: &'a ArithExpr,
        step: &'a ArithExpr,
    },
    Id,
    /// A pattern no rule starts from.
    Other,
}

pub fn classify(p: &Pattern) -> View<'_> {
    match p {
        Pattern::Map { kind, f } => View::Map { kind: *kind, f },
        Pattern::MapVec { .. } => View::MapVec,
        Pattern::Reduce { kind, f } => View::Reduce { kind: *kind, f },
        Pattern::PartRed { f, m } => View::PartRed { f, m },
        Pattern::Iterate { n, f } => View::Iterate { n: *n, f },
        Pattern::Split(m) => View::Split(m),
        Pattern::Join => View::Join,
        Pattern::Gather(ix) => View::Gather(ix),
        Pattern::Transpose => View::Transpose,
        Pattern::AsVector(n) => View::AsVector(*n),
        Pattern::AsScalar => View::AsScalar,
        Pattern::ToGlobal(_) | Pattern::ToLocal(_) | Pattern::ToPrivate(_) => View::To,
        Pattern::Slide { size, step } => View::Slide { size, step },
        Pattern::Id => View::Id,
        Pattern::Scatter(_)
        | Pattern::Zip(_)
        | Pattern::Get(_)
        | Pattern::At(_)
        | Pattern::Pad { .. }
        | Pattern::PadConst { .. }
        | Pattern::Generate { .. }
        | Pattern::SlideSeq { .. }
        | Pattern::Filter => View::Other,
    }
}

/// The view of a call of a pattern, its data arguments and span.
pub fn view(e: &Expr) -> Option<(View<'_>, &[Expr], Span)> {
    as_pattern(e).map(|(p, args, span)| (classify(p), args, span))
}
