//! Traversal of the IR: children of a node, positions (paths from the root
//! to a sub-expression), replacement at a position, substitution of a
//! parameter, and the beta/eta normal form the rewrite rules work on.
//!
//! A tree has two kinds of nodes, expressions and function declarations.
//! The children of `Call(f, args)` are `f` (step 0) then the arguments
//! (steps 1..); a lambda's child is its body (step 0); a pattern's child is
//! the function it takes, if any (step 0). A [`Path`] prints as the steps
//! joined by dots (`1.0.0.2`), the root as `root`, and parses back.

use super::build::{is_synthetic, IdGen};
use super::visitor::Visitor;
use super::{Expr, ExprKind, FunDecl, FunId, FunKind, Lambda, MapKind, Param, ParamId, Pattern, Span};
use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;

/// A position in an expression tree: child indices from the root.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Path(pub Vec<u16>);

impl Path {
    pub fn root() -> Path {
        Path(Vec::new())
    }
    pub fn child(&self, i: u16) -> Path {
        let mut v = self.0.clone();
        v.push(i);
        Path(v)
    }
    pub fn is_prefix_of(&self, other: &Path) -> bool {
        other.0.starts_with(&self.0)
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("root");
        }
        let parts: Vec<String> = self.0.iter().map(u16::to_string).collect();
        f.write_str(&parts.join("."))
    }
}

/// A path that does not parse, or leads nowhere in a tree.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("expected a position like `root` or `1.0.2`, found `{0}`")]
    Syntax(String),
    #[error("position {path} does not exist (step {step} of {at} has no child {index})")]
    NoChild { path: String, step: usize, at: String, index: u16 },
    #[error("position {0} is a function, not an expression")]
    NotExpr(String),
}

impl FromStr for Path {
    type Err = PathError;
    fn from_str(s: &str) -> Result<Path, PathError> {
        let t = s.trim();
        if t == "root" {
            return Ok(Path::root());
        }
        t.split('.')
            .map(|p| p.parse::<u16>().map_err(|_| PathError::Syntax(s.to_string())))
            .collect::<Result<Vec<_>, _>>()
            .map(Path)
    }
}

/// A node of the tree: an expression or a function declaration.
#[derive(Clone, Copy, Debug)]
pub enum Node<'a> {
    Expr(&'a Expr),
    Fun(&'a FunDecl),
}

/// The function a pattern takes, mutably (see [`Pattern::nested_fun`]).
pub fn nested_fun_mut(p: &mut Pattern) -> Option<&mut FunDecl> {
    match p {
        Pattern::Map { f, .. }
        | Pattern::MapVec { f }
        | Pattern::Reduce { f, .. }
        | Pattern::PartRed { f, .. }
        | Pattern::Iterate { f, .. }
        | Pattern::ToGlobal(f)
        | Pattern::ToLocal(f)
        | Pattern::ToPrivate(f)
        | Pattern::SlideSeq { f, .. }
        | Pattern::Generate { f, .. } => Some(f),
        super::layout_pattern!() | Pattern::Id => None,
    }
}

/// The children of a node, in step order.
pub fn children(n: Node<'_>) -> Vec<Node<'_>> {
    match n {
        Node::Expr(e) => match &e.kind {
            ExprKind::Call(f, args) => {
                std::iter::once(Node::Fun(f)).chain(args.iter().map(Node::Expr)).collect()
            }
            ExprKind::Literal(_) | ExprKind::Param(_) => Vec::new(),
        },
        Node::Fun(f) => match &f.kind {
            FunKind::Lambda(l) => vec![Node::Expr(&l.body)],
            FunKind::Pattern(p) => p.nested_fun().map(Node::Fun).into_iter().collect(),
            FunKind::UserFun(_) => Vec::new(),
        },
    }
}

fn describe(n: Node<'_>) -> String {
    match n {
        Node::Expr(e) => match &e.kind {
            ExprKind::Literal(_) => "a literal".into(),
            ExprKind::Param(_) => "a parameter".into(),
            ExprKind::Call(..) => "a call".into(),
        },
        Node::Fun(f) => match &f.kind {
            FunKind::Lambda(_) => "a lambda".into(),
            FunKind::Pattern(_) => "a pattern".into(),
            FunKind::UserFun(_) => "a user function".into(),
        },
    }
}

/// The node at `path`, and the nodes above it (root first).
pub fn node_at<'a>(root: &'a Expr, path: &Path) -> Result<(Node<'a>, Vec<Node<'a>>), PathError> {
    let mut cur = Node::Expr(root);
    let mut above = Vec::new();
    for (step, &i) in path.0.iter().enumerate() {
        let next = children(cur).get(i as usize).copied().ok_or_else(|| PathError::NoChild {
            path: path.to_string(),
            step: step + 1,
            at: describe(cur),
            index: i,
        })?;
        above.push(cur);
        cur = next;
    }
    Ok((cur, above))
}

/// The expression at `path`.
pub fn expr_at<'a>(root: &'a Expr, path: &Path) -> Result<&'a Expr, PathError> {
    match node_at(root, path)?.0 {
        Node::Expr(e) => Ok(e),
        Node::Fun(_) => Err(PathError::NotExpr(path.to_string())),
    }
}

/// Every expression with its position, in pre-order.
pub fn expr_positions(root: &Expr) -> Vec<(Path, &Expr)> {
    fn go<'a>(n: Node<'a>, path: Path, out: &mut Vec<(Path, &'a Expr)>) {
        if let Node::Expr(e) = n {
            out.push((path.clone(), e));
        }
        for (i, c) in children(n).into_iter().enumerate() {
            go(c, path.child(i as u16), out);
        }
    }
    let mut out = Vec::new();
    go(Node::Expr(root), Path::root(), &mut out);
    out
}

fn expr_at_mut<'a>(e: &'a mut Expr, steps: &[u16]) -> Option<&'a mut Expr> {
    let Some((&i, rest)) = steps.split_first() else { return Some(e) };
    match &mut e.kind {
        ExprKind::Call(f, args) => match i {
            0 => fun_at_mut(f, rest),
            _ => expr_at_mut(args.get_mut(i as usize - 1)?, rest),
        },
        ExprKind::Literal(_) | ExprKind::Param(_) => None,
    }
}

fn fun_at_mut<'a>(f: &'a mut FunDecl, steps: &[u16]) -> Option<&'a mut Expr> {
    let (&i, rest) = steps.split_first()?;
    if i != 0 {
        return None;
    }
    match &mut f.kind {
        FunKind::Lambda(l) => expr_at_mut(&mut l.body, rest),
        FunKind::Pattern(p) => fun_at_mut(nested_fun_mut(p)?, rest),
        FunKind::UserFun(_) => None,
    }
}

/// A copy of `root` with the expression at `path` replaced by `new`.
pub fn replace_at(root: &Expr, path: &Path, new: Expr) -> Result<Expr, PathError> {
    expr_at(root, path)?;
    let mut out = root.clone();
    let slot = expr_at_mut(&mut out, &path.0).ok_or_else(|| PathError::NotExpr(path.to_string()))?;
    *slot = new;
    Ok(out)
}

/// Calls `f` on every parameter bound by a lambda inside `e`.
pub fn walk_params(e: &Expr, f: &mut dyn FnMut(&Param)) {
    struct Bound<'f>(&'f mut dyn FnMut(&Param));
    impl Visitor<'_> for Bound<'_> {
        fn visit_param(&mut self, p: &Param) {
            (self.0)(p)
        }
    }
    Bound(f).visit_expr(e)
}

/// Counts the reads of one parameter.
struct Uses {
    param: ParamId,
    count: usize,
}

impl Visitor<'_> for Uses {
    fn visit_param_use(&mut self, q: &ParamId) {
        self.count += usize::from(*q == self.param);
    }
}

/// How often `p` occurs in `e`.
pub fn count_uses(e: &Expr, p: ParamId) -> usize {
    let mut uses = Uses { param: p, count: 0 };
    uses.visit_expr(e);
    uses.count
}

/// Whether `p` occurs in the function `f`.
pub fn fun_uses(f: &FunDecl, p: ParamId) -> bool {
    let mut uses = Uses { param: p, count: 0 };
    uses.visit_fun(f);
    uses.count > 0
}

/// Whether a walk met a parallel map.
struct ParallelMap(bool);

impl Visitor<'_> for ParallelMap {
    fn visit_pattern(&mut self, p: &Pattern, span: Span) {
        match p {
            Pattern::Map { kind: MapKind::Glb(_) | MapKind::Wrg(_) | MapKind::Lcl(_), .. } => self.0 = true,
            Pattern::Map { .. }
            | Pattern::MapVec { .. }
            | Pattern::Reduce { .. }
            | Pattern::PartRed { .. }
            | Pattern::Iterate { .. }
            | Pattern::ToGlobal(_)
            | Pattern::ToLocal(_)
            | Pattern::ToPrivate(_)
            | Pattern::SlideSeq { .. }
            | Pattern::Generate { .. }
            | super::layout_pattern!()
            | Pattern::Id => self.super_pattern(p, span),
        }
    }
}

/// Whether `f` is or contains a parallel map (`mapGlb`, `mapWrg`,
/// `mapLcl`).
pub fn has_parallel_map(f: &FunDecl) -> bool {
    let mut found = ParallelMap(false);
    found.visit_fun(f);
    found.0
}

/// `e` with every occurrence of the parameters in `by` replaced by their
/// expressions; the second and later copies get fresh ids. Parameter ids
/// are unique in a program, so no capture can happen.
pub fn substitute(e: &Expr, by: &HashMap<ParamId, Expr>, gen: &mut IdGen) -> Expr {
    let mut seen: HashMap<ParamId, usize> = HashMap::new();
    subst_expr(e, by, gen, &mut seen)
}

fn subst_expr(
    e: &Expr,
    by: &HashMap<ParamId, Expr>,
    gen: &mut IdGen,
    seen: &mut HashMap<ParamId, usize>,
) -> Expr {
    match &e.kind {
        ExprKind::Param(p) if by.contains_key(p) => {
            let n = seen.entry(*p).or_insert(0);
            *n += 1;
            if *n == 1 {
                by[p].clone()
            } else {
                gen.refresh_expr(&by[p])
            }
        }
        ExprKind::Param(_) | ExprKind::Literal(_) => e.clone(),
        ExprKind::Call(f, args) => {
            let f = subst_fun(f, by, gen, seen);
            let args = args.iter().map(|a| subst_expr(a, by, gen, seen)).collect();
            Expr { id: e.id, kind: ExprKind::Call(Box::new(f), args), span: e.span }
        }
    }
}

fn subst_fun(
    f: &FunDecl,
    by: &HashMap<ParamId, Expr>,
    gen: &mut IdGen,
    seen: &mut HashMap<ParamId, usize>,
) -> FunDecl {
    let kind = match &f.kind {
        FunKind::Lambda(l) => FunKind::Lambda(Lambda {
            params: l.params.clone(),
            body: Box::new(subst_expr(&l.body, by, gen, seen)),
        }),
        FunKind::Pattern(p) => {
            let mut p = p.clone();
            if let Some(g) = nested_fun_mut(&mut p) {
                *g = subst_fun(g, by, gen, seen);
            }
            FunKind::Pattern(p)
        }
        FunKind::UserFun(u) => FunKind::UserFun(*u),
    };
    FunDecl { id: FunId::FRESH, kind, span: f.span }
}

/// Whether a pattern takes exactly one data argument (so `\p -> P(p)` and
/// `P` are the same function); `toLocal(f)` and its kin take what `f`
/// takes, which is one wherever they are eta-expanded.
pub fn takes_one_datum(p: &Pattern) -> bool {
    p.data_args().is_none_or(|n| n == 1)
}

/// The normal form rewrite rules match on:
/// * beta: a call of a lambda whose parameters are all synthetic (made by
///   desugaring composition `f o g` or a partial pattern application) and
///   each used at most once is replaced by its body with the arguments
///   substituted. Lambdas with parameters the programmer named — `let x =
///   v in b` and `(\x -> b) $ v` — are kept: they say where a value is bound
///   (a private copy, a tile in local memory) and the barrier pass relies
///   on that shape.
/// * eta: a pattern used as the function of `map`, `mapVec` or `iterate`
///   (`map(mapSeq(id))`) becomes `\_p -> pattern(_p)`, so that every place
///   a rule may apply is an expression with a position. `toGlobal(f)` and
///   friends keep their function as it is.
pub fn normalize(e: &Expr, gen: &mut IdGen) -> Expr {
    let e = norm_expr(e, gen);
    // Rules and normalisation build declarations with `FunId::FRESH`.
    super::build::renumber_funs(&e, &mut gen.next_fun)
}

fn norm_expr(e: &Expr, gen: &mut IdGen) -> Expr {
    match &e.kind {
        ExprKind::Literal(_) | ExprKind::Param(_) => e.clone(),
        ExprKind::Call(f, args) => {
            let f = norm_fun(f, gen, false);
            let args: Vec<Expr> = args.iter().map(|a| norm_expr(a, gen)).collect();
            if let FunKind::Lambda(l) = &f.kind {
                let reducible = l.params.len() == args.len()
                    && l.params.iter().all(|p| is_synthetic(&p.name) && count_uses(&l.body, p.id) <= 1);
                if reducible {
                    let by: HashMap<ParamId, Expr> = l.params.iter().map(|p| p.id).zip(args).collect();
                    return substitute(&l.body, &by, gen);
                }
            }
            Expr { id: e.id, kind: ExprKind::Call(Box::new(f), args), span: e.span }
        }
    }
}

/// `expand`: whether this function is in a position where a bare pattern
/// is eta-expanded.
fn norm_fun(f: &FunDecl, gen: &mut IdGen, expand: bool) -> FunDecl {
    match &f.kind {
        FunKind::Lambda(l) => FunDecl {
            id: FunId::FRESH,
            kind: FunKind::Lambda(Lambda {
                params: l.params.clone(),
                body: Box::new(norm_expr(&l.body, gen)),
            }),
            span: f.span,
        },
        FunKind::UserFun(_) => f.clone(),
        FunKind::Pattern(p) => {
            let inner_expand =
                matches!(p, Pattern::Map { .. } | Pattern::Iterate { .. } | Pattern::SlideSeq { .. });
            let mut p = p.clone();
            if let Some(g) = nested_fun_mut(&mut p) {
                *g = norm_fun(g, gen, inner_expand);
            }
            if expand && takes_one_datum(&p) {
                let span = f.span;
                return gen.lambda1(span, |gen, x| gen.call_pattern(p, vec![x], span));
            }
            FunDecl { id: FunId::FRESH, kind: FunKind::Pattern(p), span: f.span }
        }
    }
}

/// Undoes the eta-expansion of [`normalize`]: `\_p -> P(_p)` becomes `P`
/// wherever a function is expected (the printed program reads as written).
pub fn eta_reduce(e: &Expr) -> Expr {
    match &e.kind {
        ExprKind::Literal(_) | ExprKind::Param(_) => e.clone(),
        ExprKind::Call(f, args) => {
            let f = match &f.kind {
                // The function of a call stays a lambda (a `let`).
                FunKind::Lambda(l) => FunDecl {
                    id: FunId::FRESH,
                    kind: FunKind::Lambda(Lambda {
                        params: l.params.clone(),
                        body: Box::new(eta_reduce(&l.body)),
                    }),
                    span: f.span,
                },
                FunKind::Pattern(_) | FunKind::UserFun(_) => eta_fun(f),
            };
            Expr {
                id: e.id,
                kind: ExprKind::Call(Box::new(f), args.iter().map(eta_reduce).collect()),
                span: e.span,
            }
        }
    }
}

fn eta_fun(f: &FunDecl) -> FunDecl {
    match &f.kind {
        FunKind::Lambda(l) => {
            let body = eta_reduce(&l.body);
            if let ([p], ExprKind::Call(g, args)) = (l.params.as_slice(), &body.kind) {
                if let (FunKind::Pattern(pat), [Expr { kind: ExprKind::Param(q), .. }]) =
                    (&g.kind, args.as_slice())
                {
                    if *q == p.id && is_synthetic(&p.name) && takes_one_datum(pat) && !fun_uses(g, p.id) {
                        return eta_fun(g);
                    }
                }
            }
            FunDecl {
                id: FunId::FRESH,
                kind: FunKind::Lambda(Lambda { params: l.params.clone(), body: Box::new(body) }),
                span: f.span,
            }
        }
        FunKind::UserFun(_) => f.clone(),
        FunKind::Pattern(p) => {
            let mut p = p.clone();
            if let Some(g) = nested_fun_mut(&mut p) {
                *g = eta_fun(g);
            }
            FunDecl { id: FunId::FRESH, kind: FunKind::Pattern(p), span: f.span }
        }
    }
}
