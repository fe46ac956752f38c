//! A compact printer of the IR in `.lift` syntax. Its output re-parses to
//! a program that prints the same (composition and `$` are already
//! desugared, so the printed form shows lambdas and calls), which makes it
//! the structural fingerprint used by tests and `lift` debugging output.

use crate::ir::{Expr, ExprKind, FunDecl, FunKind, Literal, MapKind, Param, Pattern, Program};
use std::collections::HashMap;
use std::fmt::Write;

/// The whole program: user functions (bodies verbatim), then defs.
pub fn print_program(prog: &Program) -> String {
    let mut out = String::new();
    for u in &prog.user_funs {
        let ps: Vec<String> = u.params.iter().map(|(n, t)| format!("{n}: {t}")).collect();
        let _ = writeln!(out, "userfun {}({}): {} {{{}}}", u.name, ps.join(", "), u.ret, u.body_text);
    }
    for d in &prog.defs {
        let ps: Vec<String> = d.params.iter().map(param).collect();
        let mut names: HashMap<_, _> = d.params.iter().map(|p| (p.id, p.name.clone())).collect();
        collect_names_expr(&d.body, &mut names);
        let mut body = String::new();
        Printer { prog, names: &names }.expr(&d.body, &mut body);
        let _ = writeln!(out, "def {}({}) =\n  {body}", d.name, ps.join(", "));
    }
    out
}

fn param(p: &Param) -> String {
    match &p.ty {
        Some(t) => format!("{}: {t}", p.name),
        None => p.name.clone(),
    }
}

/// One expression; parameters print by name.
pub fn print_expr(prog: &Program, e: &Expr) -> String {
    let mut names = HashMap::new();
    collect_names_expr(e, &mut names);
    let mut out = String::new();
    Printer { prog, names: &names }.expr(e, &mut out);
    out
}

/// One expression inside `def`: the def's parameters print by name too.
pub fn print_expr_in(prog: &Program, def: &crate::ir::Def, e: &Expr) -> String {
    let mut names: HashMap<_, _> = def.params.iter().map(|p| (p.id, p.name.clone())).collect();
    collect_names_expr(&def.body, &mut names);
    let mut out = String::new();
    Printer { prog, names: &names }.expr(e, &mut out);
    out
}

/// [`print_fun`] for a function inside `def`, whose parameters it may
/// name (a map after a reduction that reads a scalar of the def).
pub fn print_fun_in(prog: &Program, def: &crate::ir::Def, f: &FunDecl) -> String {
    let mut names: HashMap<_, _> = def.params.iter().map(|p| (p.id, p.name.clone())).collect();
    collect_names_fun(f, &mut names);
    let mut out = String::new();
    Printer { prog, names: &names }.fun(f, &mut out);
    out
}

/// One function declaration (a lambda, a pattern with its parameters, or a
/// user function's name).
pub fn print_fun(prog: &Program, f: &FunDecl) -> String {
    let mut names = HashMap::new();
    collect_names_fun(f, &mut names);
    let mut out = String::new();
    Printer { prog, names: &names }.fun(f, &mut out);
    out
}

fn collect_names_expr(e: &Expr, names: &mut HashMap<crate::ir::ParamId, String>) {
    if let ExprKind::Call(f, args) = &e.kind {
        collect_names_fun(f, names);
        args.iter().for_each(|a| collect_names_expr(a, names));
    }
}

fn collect_names_fun(f: &FunDecl, names: &mut HashMap<crate::ir::ParamId, String>) {
    match &f.kind {
        FunKind::Lambda(l) => {
            for p in &l.params {
                names.insert(p.id, p.name.clone());
            }
            collect_names_expr(&l.body, names);
        }
        FunKind::UserFun(_) => {}
        FunKind::Pattern(p) => {
            if let Some(g) = p.nested_fun() {
                collect_names_fun(g, names)
            }
        }
    }
}

/// Prints a literal so that the lexer reads it back exactly.
pub fn literal(l: &Literal) -> String {
    match l {
        Literal::Float(f) => {
            let s = format!("{f:?}");
            let s = if s.contains(['.', 'e', 'E']) { s } else { format!("{s}.0") };
            format!("{s}f")
        }
        Literal::Int(i) => i.to_string(),
        Literal::Tuple(ls) => format!("({})", ls.iter().map(literal).collect::<Vec<_>>().join(", ")),
    }
}

struct Printer<'a> {
    prog: &'a Program,
    names: &'a HashMap<crate::ir::ParamId, String>,
}

impl Printer<'_> {
    fn expr(&self, e: &Expr, out: &mut String) {
        match &e.kind {
            ExprKind::Literal(l) => out.push_str(&literal(l)),
            ExprKind::Param(p) => match self.names.get(p) {
                Some(n) => out.push_str(n),
                None => {
                    let _ = write!(out, "_unbound{}", p.0);
                }
            },
            ExprKind::Call(f, args) => {
                if let (FunKind::Pattern(Pattern::PartRed { f: g, m }), [init, xs]) =
                    (&f.kind, args.as_slice())
                {
                    // Surface order: `partRed(f, init, m, xs)`.
                    out.push_str("partRed(");
                    self.fun(g, out);
                    out.push_str(", ");
                    self.expr(init, out);
                    let _ = write!(out, ", {m}, ");
                    self.expr(xs, out);
                    out.push(')');
                    return;
                }
                let head_args = match &f.kind {
                    FunKind::Pattern(p) => self.pattern_head(p, out),
                    FunKind::UserFun(id) => {
                        out.push_str(self.prog.user_funs.get(id.0 as usize).map_or("_unknown", |u| &u.name));
                        out.push('(');
                        false
                    }
                    FunKind::Lambda(_) => {
                        out.push('(');
                        self.fun(f, out);
                        out.push_str(")(");
                        false
                    }
                };
                for (i, a) in args.iter().enumerate() {
                    if i > 0 || head_args {
                        out.push_str(", ");
                    }
                    self.expr(a, out);
                }
                out.push(')');
            }
        }
    }

    fn fun(&self, f: &FunDecl, out: &mut String) {
        match &f.kind {
            FunKind::Lambda(l) => {
                out.push('\\');
                let ps: Vec<String> = l.params.iter().map(param).collect();
                if ps.len() == 1 && l.params[0].ty.is_none() {
                    out.push_str(&ps[0]);
                } else {
                    let _ = write!(out, "({})", ps.join(", "));
                }
                out.push_str(" -> ");
                self.expr(&l.body, out);
            }
            FunKind::UserFun(id) => {
                out.push_str(self.prog.user_funs.get(id.0 as usize).map_or("_unknown", |u| &u.name))
            }
            FunKind::Pattern(p) => {
                let has = self.pattern_head(p, out);
                if has {
                    out.push(')');
                } else {
                    // A pattern without parameters prints as its bare name.
                    out.pop();
                }
            }
        }
    }

    /// Writes `name(params` (open parenthesis, no data); returns whether
    /// any parameter was written.
    fn pattern_head(&self, p: &Pattern, out: &mut String) -> bool {
        let mut parts: Vec<String> = Vec::new();
        let f = |g: &FunDecl| {
            let mut s = String::new();
            self.fun(g, &mut s);
            s
        };
        match p {
            Pattern::Map { kind, f: g } => {
                match kind {
                    MapKind::Glb(d) | MapKind::Wrg(d) | MapKind::Lcl(d) => parts.push(d.to_string()),
                    MapKind::Map | MapKind::Seq | MapKind::SeqUnroll => {}
                }
                parts.push(f(g));
            }
            Pattern::MapVec { f: g } | Pattern::Reduce { f: g, .. } => parts.push(f(g)),
            Pattern::PartRed { f: g, m } => {
                // Only reached for a bare `partRed` function (calls print in
                // full above); `_` stands for the initial value it lacks.
                parts.push(f(g));
                parts.push(format!("_, {m}"));
            }
            Pattern::Iterate { n, f: g } => {
                parts.push(n.to_string());
                parts.push(f(g));
            }
            Pattern::Split(m) => parts.push(m.to_string()),
            Pattern::Gather(ix) | Pattern::Scatter(ix) => {
                parts.push(format!("\\{} -> {}", ix.param, ix.body))
            }
            Pattern::Get(i) => parts.push(i.to_string()),
            Pattern::At(i) => parts.push(i.to_string()),
            Pattern::AsVector(m) => parts.push(m.to_string()),
            Pattern::ToGlobal(g) | Pattern::ToLocal(g) | Pattern::ToPrivate(g) => parts.push(f(g)),
            Pattern::Slide { size, step } => {
                parts.push(size.to_string());
                parts.push(step.to_string());
            }
            Pattern::SlideSeq { size, step, f: g } => {
                parts.push(size.to_string());
                parts.push(step.to_string());
                parts.push(f(g));
            }
            Pattern::Pad { left, right, mode } => {
                parts.push(left.to_string());
                parts.push(right.to_string());
                parts.push(mode.name().to_string());
            }
            Pattern::PadConst { left, right, value } => {
                parts.push(left.to_string());
                parts.push(right.to_string());
                parts.push(literal(value));
            }
            Pattern::Generate { len, f: g } => {
                parts.push(len.to_string());
                parts.push(f(g));
            }
            Pattern::Join
            | Pattern::Transpose
            | Pattern::Zip(_)
            | Pattern::AsScalar
            | Pattern::Filter
            | Pattern::Id => {}
        }
        let name = p.name();
        let _ = write!(out, "{name}({}", parts.join(", "));
        !parts.is_empty()
    }
}
