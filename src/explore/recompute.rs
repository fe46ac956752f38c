//! Arrays a user binds by `let` and reads again: `let z = map(f) $ r in
//! ... reduce(g) $ z ... map(h) $ z` (a softmax with its scaled row bound
//! first, a dot product whose products are named). Lowered as written,
//! each such array is a temporary in global memory, written once and read
//! by every use: a row-wise program moves several times the data it needs,
//! and at the top level a second parallel map reads the first's results
//! with no barrier between work-groups, so every candidate is refused.
//!
//! Where the bound value is an elementwise map (a function of one element
//! with no pattern of its own but `get`, `at` and `id`) of what is already
//! in memory (parameters, their views, such maps of them), the search
//! explores `<def>_recomputed`: the value substituted at every use, and
//! then maps of such maps fused (`map(f) $ map(g) $ x` is `map(f o g) $
//! x`, `map(\(a, b) -> f) $ zip(x, map(g) $ y)` is `map(\(a, b') -> f[b :=
//! g(b')]) $ zip(x, y)`). Each use recomputes the element's function
//! instead of reading it back: a few arithmetic operations against a round
//! trip through memory. The user's def stays the gold (`measure::Gold`), so
//! every candidate still computes what it computes.
//!
//! The printed program is parsed again (`epilogue::with_defs`), so names
//! matter: a value is substituted only where no binder of the same name as
//! one it reads lies in the body (else it would be captured).

use crate::ir::build::IdGen;
use crate::ir::visit::{count_uses, nested_fun_mut, substitute, walk_params};
use crate::ir::visitor::Visitor;
use crate::ir::{Def, Expr, ExprKind, FunDecl, FunKind, Lambda, MapKind, ParamId, Pattern, Program};
use std::collections::{HashMap, HashSet};

/// The program with `<def>_recomputed` added and its name, if `def` binds
/// an elementwise map by `let`; `None` otherwise (explored as written).
pub fn recomputed(program: &Program, def: &str) -> Option<(Program, String)> {
    let base = crate::rewrite::prepare(program, def).ok()?;
    let d = base.def(def)?;
    let mut cx = Cx { gen: IdGen::for_program(&base), names: HashMap::new(), changed: false };
    for p in &d.params {
        cx.names.insert(p.id, p.name.clone());
    }
    cx.note(&d.body);
    let body = cx.inline(&d.body);
    if !cx.changed {
        return None;
    }
    let body = cx.fuse(&body);
    let name = super::finish::fresh_name(program, &format!("{def}_recomputed"));
    let new = Def { name: name.clone(), params: d.params.clone(), body, span: d.span };
    let out = super::epilogue::with_defs(program, vec![new], &format!("{def} recomputed"))?;
    Some((out, name))
}

struct Cx {
    gen: IdGen,
    /// The name of every parameter met so far (binders print by name).
    names: HashMap<ParamId, String>,
    changed: bool,
}

impl Cx {
    /// Records the names of the parameters bound inside `e`.
    fn note(&mut self, e: &Expr) {
        walk_params(e, &mut |p| {
            self.names.insert(p.id, p.name.clone());
        });
    }

    /// Whether substituting `value` into `body` would put one of the names
    /// `value` reads under a binder of the same name in `body`.
    fn captures(&self, value: &Expr, body: &Expr) -> bool {
        let mut own = HashSet::new();
        walk_params(value, &mut |p| {
            own.insert(p.id);
        });
        let free = uses(value).into_iter().filter(|p| !own.contains(p));
        let read: HashSet<&str> = free.filter_map(|p| self.names.get(&p)).map(String::as_str).collect();
        let mut hit = false;
        walk_params(body, &mut |p| hit |= read.contains(p.name.as_str()));
        hit
    }

    fn subst(&mut self, e: &Expr, by: HashMap<ParamId, Expr>) -> Expr {
        let out = substitute(e, &by, &mut self.gen);
        self.note(&out);
        out
    }

    /// `e` with its let-bound elementwise maps substituted, innermost
    /// values first (so a value built on another such value qualifies).
    fn inline(&mut self, e: &Expr) -> Expr {
        let ExprKind::Call(f, args) = &e.kind else { return e.clone() };
        let args: Vec<Expr> = args.iter().map(|a| self.inline(a)).collect();
        if let FunKind::Lambda(l) = &f.kind {
            if l.params.len() == args.len() {
                return self.inline_let(l, args, e);
            }
        }
        let f = self.each_body(f, Cx::inline);
        Expr { id: e.id, kind: ExprKind::Call(Box::new(f), args), span: e.span }
    }

    /// `let p1 = v1, .. in body`: the elementwise values substituted, the
    /// others kept bound.
    fn inline_let(&mut self, l: &Lambda, args: Vec<Expr>, e: &Expr) -> Expr {
        let mut by = HashMap::new();
        let (mut params, mut kept) = (Vec::new(), Vec::new());
        for (p, v) in l.params.iter().zip(args) {
            if elementwise(&v) && !self.captures(&v, &l.body) {
                by.insert(p.id, v);
            } else {
                params.push(p.clone());
                kept.push(v);
            }
        }
        if by.is_empty() {
            let body = self.inline(&l.body);
            let f = lambda(l.params.clone(), body, e.span);
            return Expr { id: e.id, kind: ExprKind::Call(Box::new(f), kept), span: e.span };
        }
        self.changed = true;
        let body = self.subst(&l.body, by);
        let body = self.inline(&body);
        if params.is_empty() {
            return body;
        }
        let f = lambda(params, body, e.span);
        Expr { id: e.id, kind: ExprKind::Call(Box::new(f), kept), span: e.span }
    }

    /// `f` with `pass` applied to the body of each lambda in it.
    fn each_body(&mut self, f: &FunDecl, pass: fn(&mut Cx, &Expr) -> Expr) -> FunDecl {
        let kind = match &f.kind {
            FunKind::Lambda(l) => {
                return FunDecl { id: f.id, ..lambda(l.params.clone(), pass(self, &l.body), f.span) }
            }
            FunKind::Pattern(p) => {
                let mut p = p.clone();
                if let Some(g) = nested_fun_mut(&mut p) {
                    *g = self.each_body(g, pass);
                }
                FunKind::Pattern(p)
            }
            FunKind::UserFun(u) => FunKind::UserFun(*u),
        };
        FunDecl { id: f.id, kind, span: f.span }
    }

    /// `e` with maps of elementwise maps fused, innermost first.
    fn fuse(&mut self, e: &Expr) -> Expr {
        let ExprKind::Call(f, args) = &e.kind else { return e.clone() };
        let f = self.each_body(f, Cx::fuse);
        let args: Vec<Expr> = args.iter().map(|a| self.fuse(a)).collect();
        let mut out = Expr { id: e.id, kind: ExprKind::Call(Box::new(f), args), span: e.span };
        while let Some(next) =
            self.fuse_maps(&out).or_else(|| self.fuse_zip(&out)).or_else(|| self.dedup_zip(&out))
        {
            out = next;
        }
        out
    }

    /// `map(f) $ map(g) $ x` as `map(\y -> f(g(y))) $ x`.
    fn fuse_maps(&mut self, e: &Expr) -> Option<Expr> {
        let (f, inner) = high_map(e)?;
        let (g, x) = high_map(inner)?;
        if !scalar_fun(g) {
            return None;
        }
        let span = e.span;
        let (f, g) = (f.clone(), g.clone());
        let h = match &g.kind {
            // `g` takes its tuple apart (`\(a, b) -> ...`): so does the
            // fused function, `f` applied to `g`'s body.
            FunKind::Lambda(l) if l.params.len() > 1 => {
                let body = self.apply(&f, (*l.body).clone());
                lambda(l.params.clone(), body, span)
            }
            FunKind::Lambda(_) | FunKind::Pattern(_) | FunKind::UserFun(_) => {
                let y = self.gen.synthetic_param(span);
                let yv = self.gen.var(&y);
                let gy = self.apply(&g, yv);
                let body = self.apply(&f, gy);
                lambda(vec![y], body, span)
            }
        };
        Some(self.gen.call_pattern(
            Pattern::Map { kind: MapKind::Map, f: Box::new(h) },
            vec![x.clone()],
            span,
        ))
    }

    /// `map(\(a1, .., ak) -> b) $ zip(x1, .., map(g) $ y, .., xk)` as the
    /// map over `zip(x1, .., y, .., xk)` with `g` applied inside.
    fn fuse_zip(&mut self, e: &Expr) -> Option<Expr> {
        let (f, l, z, xs) = zip_map(e)?;
        let n = xs.len();
        let i = xs.iter().position(|x| high_map(x).is_some_and(|(g, _)| scalar_fun(g)))?;
        let (g, y) = high_map(&xs[i])?;
        let (g, y) = (g.clone(), y.clone());
        let span = e.span;
        let fresh = self.gen.synthetic_param(span);
        let fv = self.gen.var(&fresh);
        let gy = self.apply(&g, fv);
        let old = &l.params[i];
        let body = self.bind(old.clone(), &l.body, gy, span);
        let mut params = l.params.clone();
        params[i] = fresh;
        let mut args = xs.to_vec();
        args[i] = y;
        let zipped = self.gen.call_pattern(Pattern::Zip(n), args, z.span);
        let h = lambda(params, body, f.span);
        Some(self.gen.call_pattern(Pattern::Map { kind: MapKind::Map, f: Box::new(h) }, vec![zipped], span))
    }

    /// `map(\(a1, .., ak) -> b) $ zip(.., x, .., x, ..)` (one parameter
    /// zipped twice, as fusing `zip(x, map(g) $ x)` leaves it) reading `x`
    /// once: the second component is the first.
    fn dedup_zip(&mut self, e: &Expr) -> Option<Expr> {
        let (f, l, z, xs) = zip_map(e)?;
        let n = xs.len();
        let same = |a: &Expr, b: &Expr| matches!((&a.kind, &b.kind), (ExprKind::Param(p), ExprKind::Param(q)) if p == q);
        let (i, j) =
            (0..n).flat_map(|i| (i + 1..n).map(move |j| (i, j))).find(|&(i, j)| same(&xs[i], &xs[j]))?;
        let first = self.gen.var(&l.params[i]);
        if self.captures(&first, &l.body) {
            return None;
        }
        let body = self.subst(&l.body, HashMap::from([(l.params[j].id, first)]));
        let (mut params, mut args) = (l.params.clone(), xs.to_vec());
        params.remove(j);
        args.remove(j);
        let span = e.span;
        let xs = if args.len() == 1 {
            args.remove(0)
        } else {
            self.gen.call_pattern(Pattern::Zip(args.len()), args, z.span)
        };
        let h = lambda(params, body, f.span);
        Some(self.gen.call_pattern(Pattern::Map { kind: MapKind::Map, f: Box::new(h) }, vec![xs], span))
    }

    /// `f(x)`: a one-parameter lambda's body with `x` in place of its
    /// parameter (bound by `let` where read more than once or captured),
    /// else a call.
    fn apply(&mut self, f: &FunDecl, x: Expr) -> Expr {
        match &f.kind {
            FunKind::Lambda(l) if l.params.len() == 1 => self.bind(l.params[0].clone(), &l.body, x, f.span),
            // `\(a, b) -> body` of a tuple `x` (a fresh parameter here):
            // each component by `get`, as the printed program must say.
            FunKind::Lambda(l) if matches!(x.kind, ExprKind::Param(_)) => {
                let span = f.span;
                let mut by = HashMap::new();
                for (i, p) in l.params.iter().enumerate() {
                    let xi = self.gen.refresh_expr(&x);
                    by.insert(p.id, self.gen.call_pattern(Pattern::Get(i), vec![xi], span));
                }
                self.subst(&l.body, by)
            }
            FunKind::Lambda(_) | FunKind::Pattern(_) | FunKind::UserFun(_) => {
                let span = f.span;
                self.gen.call(f.clone(), vec![x], span)
            }
        }
    }

    /// `body[p := x]` where `p` is read once and nothing captures `x`'s
    /// names, else `let p = x in body`.
    fn bind(&mut self, p: crate::ir::Param, body: &Expr, x: Expr, span: crate::ir::Span) -> Expr {
        if count_uses(body, p.id) <= 1 && !self.captures(&x, body) {
            return self.subst(body, HashMap::from([(p.id, x)]));
        }
        let f = lambda(vec![p], body.clone(), span);
        self.gen.call(f, vec![x], span)
    }
}

fn lambda(params: Vec<crate::ir::Param>, body: Expr, span: crate::ir::Span) -> FunDecl {
    FunDecl {
        id: crate::ir::FunId::FRESH,
        kind: FunKind::Lambda(Lambda { params, body: Box::new(body) }),
        span,
    }
}

/// `(f, xs)` of a high-level `map(f) $ xs`.
fn high_map(e: &Expr) -> Option<(&FunDecl, &Expr)> {
    match crate::rewrite::algorithmic::map_parts(e)? {
        (MapKind::Map, f, xs, _) => Some((f, xs)),
        _ => None,
    }
}

/// `(f, \(a1, .., an) -> b, zip(x1, .., xn), [x1, .., xn])` of a
/// high-level map over a zip whose function takes the tuple apart.
fn zip_map(e: &Expr) -> Option<(&FunDecl, &Lambda, &Expr, &[Expr])> {
    let (f, z) = high_map(e)?;
    let FunKind::Lambda(l) = &f.kind else { return None };
    let ExprKind::Call(zf, xs) = &z.kind else { return None };
    let FunKind::Pattern(Pattern::Zip(n)) = zf.kind else { return None };
    (l.params.len() == n && xs.len() == n).then_some((f, l, z, xs.as_slice()))
}

/// `map(g) $ xs` with `g` a function of one element and `xs` in memory
/// already (parameters, their views, such maps of them).
fn elementwise(e: &Expr) -> bool {
    high_map(e).is_some_and(|(g, xs)| scalar_fun(g) && in_memory(xs))
}

fn in_memory(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Param(_) => true,
        ExprKind::Literal(_) => false,
        ExprKind::Call(f, args) => {
            elementwise(e)
                || matches!(&f.kind, FunKind::Pattern(p) if is_view(p)) && args.iter().all(in_memory)
        }
    }
}

/// Patterns that only rearrange their arguments.
pub(super) fn is_view(p: &Pattern) -> bool {
    match p {
        crate::ir::layout_pattern!() => true,
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
        | Pattern::Id => false,
    }
}

/// A function of one element with no pattern but `get`, `at` and `id`.
fn scalar_fun(f: &FunDecl) -> bool {
    match &f.kind {
        FunKind::UserFun(_) => true,
        FunKind::Lambda(l) => scalar_expr(&l.body),
        FunKind::Pattern(p) => scalar_pattern(p),
    }
}

fn scalar_expr(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Param(_) | ExprKind::Literal(_) => true,
        ExprKind::Call(f, args) => scalar_fun(f) && args.iter().all(scalar_expr),
    }
}

fn scalar_pattern(p: &Pattern) -> bool {
    match p {
        Pattern::Get(_) | Pattern::At(_) | Pattern::Id => true,
        Pattern::Map { .. }
        | Pattern::MapVec { .. }
        | Pattern::Reduce { .. }
        | Pattern::PartRed { .. }
        | Pattern::Iterate { .. }
        | Pattern::Split(_)
        | Pattern::Join
        | Pattern::Gather(_)
        | Pattern::Scatter(_)
        | Pattern::Transpose
        | Pattern::Zip(_)
        | Pattern::AsVector(_)
        | Pattern::AsScalar
        | Pattern::ToGlobal(_)
        | Pattern::ToLocal(_)
        | Pattern::ToPrivate(_)
        | Pattern::Slide { .. }
        | Pattern::SlideSeq { .. }
        | Pattern::Pad { .. }
        | Pattern::PadConst { .. }
        | Pattern::Generate { .. }
        | Pattern::Filter => false,
    }
}

/// The parameters `e` reads.
fn uses(e: &Expr) -> Vec<ParamId> {
    struct Reads(Vec<ParamId>);
    impl Visitor<'_> for Reads {
        fn visit_param_use(&mut self, p: &ParamId) {
            self.0.push(*p);
        }
    }
    let mut r = Reads(Vec::new());
    r.visit_expr(e);
    r.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{SourceFile, Value};
    use std::collections::BTreeMap;

    fn parse(src: &str) -> Program {
        crate::parse::parse_program(&SourceFile::new("t.lift", src.to_string())).unwrap()
    }

    const FUNS: &str = "userfun add(x: float, y: float): float { return x + y; }\n\
                        userfun mul(x: float, y: float): float { return x * y; }\n\
                        userfun mx(x: float, y: float): float { return fmax(x, y); }\n\
                        userfun expm(x: float, m: float): float { return exp(x - m); }\n\
                        userfun div(x: float, y: float): float { return x / y; }\n\
                        userfun inner(x: float): float { return 0.5f * x + 1.0f; }\n\
                        userfun gel(x: float, t: float): float { return x * t; }\n";

    fn floats(seed: &mut u64, n: usize) -> Value {
        Value::array(
            (0..n)
                .map(|_| {
                    *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    Value::Float(((*seed >> 33) % 17) as f32 / 4.0 - 2.0)
                })
                .collect(),
        )
    }

    /// The recomputed def's text and whether it gives the def's values.
    fn check(body: &str, params: &str, inputs: Vec<(&str, Value)>, sizes: &[(&str, i64)]) -> String {
        let p = parse(&format!("{FUNS}def f({params}) =\n  {body}\n"));
        let (out, name) = recomputed(&p, "f").expect("recomputed");
        assert_eq!(name, "f_recomputed");
        let sz: BTreeMap<String, i64> = sizes.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        let inputs: BTreeMap<String, Value> = inputs.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        let want = crate::interp::eval_def(&out, "f", &inputs, &sz).unwrap();
        assert_eq!(crate::interp::eval_def(&out, &name, &inputs, &sz).unwrap(), want);
        let text = crate::parse::print_program(&out);
        text[text.find("def f_recomputed").unwrap()..].to_string()
    }

    #[test]
    fn a_row_softmax_with_bound_arrays_reads_only_its_row() {
        let mut seed = 5;
        let a = Value::array((0..3).map(|_| floats(&mut seed, 7)).collect());
        let text = check(
            "map(\\r -> let z = map(\\x -> mul(x, s)) $ r in let m = at(0, reduce(mx, -3.0e38f) $ z) in \
             let e = map(\\x -> expm(x, m)) $ z in let t = at(0, reduce(add, 0.0f) $ e) in \
             map(\\x -> div(x, t)) $ e) $ a",
            "s: float, a: [[float]N]M",
            vec![("s", Value::Float(0.5)), ("a", a)],
            &[("M", 3), ("N", 7)],
        );
        // No array is bound any more, and each map reads the row itself.
        assert!(!text.contains("\\z ->") && !text.contains("\\e ->"), "{text}");
        assert_eq!(text.matches("map(").count(), 4, "{text}");
        assert_eq!(text.matches(", r)").count(), 3, "{text}");
    }

    #[test]
    fn bound_products_and_zips_of_maps_are_fused() {
        let mut seed = 9;
        let (x, y) = (floats(&mut seed, 11), floats(&mut seed, 11));
        let two = |body: &str| {
            let inputs = vec![("x", x.clone()), ("y", y.clone())];
            check(body, "x: [float]N, y: [float]N", inputs, &[("N", 11)])
        };
        let dot = two("let p = map(\\(a, b) -> mul(a, b)) $ zip(x, y) in reduce(add, 0.0f) $ p");
        assert!(dot.contains("reduce(add, 0.0f, map(\\(a, b) -> mul(a, b), zip(x, y)))"), "{dot}");
        // A bound map that takes its tuple apart, mapped again and zipped.
        let sse = two("let d = map(\\(a, b) -> add(a, b)) $ zip(x, y) in reduce(add, 0.0f) $ map(inner) $ d");
        assert!(sse.contains("zip(x, y)") && !sse.contains("\\d ->"), "{sse}");
        let zz =
            two("let d = map(\\(a, b) -> add(a, b)) $ zip(x, y) in map(\\(u, v) -> gel(u, v)) $ zip(x, d)");
        assert!(zz.contains("get(0, ") && !zz.contains("\\d ->"), "{zz}");
        let gelu = check(
            "let u = map(inner) $ x in map(\\(a, t) -> gel(a, t)) $ zip(x, u)",
            "x: [float]N",
            vec![("x", x.clone())],
            &[("N", 11)],
        );
        assert!(gelu.contains("map(\\a -> gel(a, inner(a)), x)"), "{gelu}");
    }

    #[test]
    fn other_lets_are_kept() {
        for body in [
            // A reduction's result, and a map whose function reduces.
            "let s = reduce(add, 0.0f) $ x in map(\\v -> add(v, at(0, s))) $ x",
            "let q = map(\\w -> at(0, reduce(add, 0.0f) $ w)) $ split(4) $ x in map(\\v -> mul(v, v)) $ q",
            // Nothing bound.
            "map(\\v -> mul(v, v)) $ x",
        ] {
            let p = parse(&format!("{FUNS}def f(x: [float]N) = {body}\n"));
            assert!(recomputed(&p, "f").is_none(), "{body}");
        }
    }

    #[test]
    fn a_value_is_not_moved_under_a_binder_of_a_name_it_reads() {
        // `m` read by `z`'s function would be captured by the inner `\m`.
        let p = parse(&format!(
            "{FUNS}def f(m: float, a: [[float]N]M) = map(\\r -> let z = map(\\x -> mul(x, m)) $ r in \
             map(\\m -> add(at(0, reduce(add, 0.0f) $ z), m)) $ r) $ a\n"
        ));
        assert!(recomputed(&p, "f").is_none());
    }
}
