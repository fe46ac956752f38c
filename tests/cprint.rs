//! Printing user-function bodies (`ir::c::print`): every user function of
//! the repository's programs, printed from its parsed form and parsed
//! again, gives the same statements (float literals compared as the `f32`
//! the interpreter and OpenCL compute with).

use lift::ir::c::{CExpr, Stmt};
use lift::ir::SourceFile;
use std::path::{Path, PathBuf};

fn lift_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            lift_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "lift") {
            out.push(p);
        }
    }
}

fn norm_expr(e: &CExpr) -> CExpr {
    let b = |x: &CExpr| Box::new(norm_expr(x));
    let all = |xs: &[CExpr]| xs.iter().map(norm_expr).collect::<Vec<_>>();
    match e {
        CExpr::Float(f) => CExpr::Float(*f as f32 as f64),
        CExpr::Double(f) => CExpr::Double(*f),
        CExpr::Int(_) | CExpr::Var(_) => e.clone(),
        CExpr::Field(a, f) => CExpr::Field(b(a), f.clone()),
        CExpr::Unary(op, a) => CExpr::Unary(*op, b(a)),
        CExpr::Binary(op, x, y) => CExpr::Binary(*op, b(x), b(y)),
        CExpr::Ternary(c, x, y) => CExpr::Ternary(b(c), b(x), b(y)),
        CExpr::Call(n, args) => CExpr::Call(n.clone(), all(args)),
        CExpr::Cast(t, a) => CExpr::Cast(t.clone(), b(a)),
        CExpr::VectorLit(t, args) => CExpr::VectorLit(t.clone(), all(args)),
        CExpr::TupleLit(t, args) => CExpr::TupleLit(t.clone(), all(args)),
        CExpr::Raw(_) | CExpr::Arith(_) | CExpr::Index(..) => e.kernel_only(),
    }
}

fn norm(s: &Stmt) -> Stmt {
    let all = |xs: &[Stmt]| xs.iter().map(norm).collect::<Vec<_>>();
    match s {
        Stmt::Decl { qualifier: None, ty, pointer: false, name, len: None, init } => {
            Stmt::decl(ty.clone(), name.clone(), init.as_ref().map(norm_expr))
        }
        Stmt::Assign { target, op, value } => {
            Stmt::Assign { target: norm_expr(target), op: *op, value: norm_expr(value) }
        }
        Stmt::If { cond, then, otherwise } => {
            Stmt::If { cond: norm_expr(cond), then: all(then), otherwise: all(otherwise) }
        }
        Stmt::For { init, cond, step, body } => Stmt::For {
            init: Box::new(norm(init)),
            cond: norm_expr(cond),
            step: Box::new(norm(step)),
            body: all(body),
        },
        Stmt::Return(e) => Stmt::Return(norm_expr(e)),
        Stmt::Block(b) => Stmt::Block(all(b)),
        Stmt::Expr(e) => Stmt::Expr(norm_expr(e)),
        Stmt::Decl { .. } | Stmt::CountedFor { .. } | Stmt::Barrier { .. } | Stmt::Comment(_) => {
            s.kernel_only()
        }
    }
}

#[test]
fn printed_bodies_parse_back_to_the_same_statements() {
    let mut files = Vec::new();
    lift_files(Path::new("benchmarks"), &mut files);
    lift_files(Path::new("tests/programs"), &mut files);
    files.sort();
    let mut funs = 0;
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let program = lift::parse::parse_program(&SourceFile::new(f.display().to_string(), text))
            .unwrap_or_else(|e| panic!("{}: {e:?}", f.display()));
        let mut printed = program.clone();
        for u in &mut printed.user_funs {
            u.body_text = lift::ir::c::body_text(&u.body);
        }
        let again = lift::parse::print_program(&printed);
        let back = lift::parse::parse_program(&SourceFile::new("printed.lift", again.clone()))
            .unwrap_or_else(|e| panic!("{}: {e:?}\n{again}", f.display()));
        for (a, b) in program.user_funs.iter().zip(&back.user_funs) {
            let (x, y): (Vec<_>, Vec<_>) =
                (a.body.iter().map(norm).collect(), b.body.iter().map(norm).collect());
            assert_eq!(x, y, "{} `{}`:\n{}", f.display(), a.name, lift::ir::c::body_text(&a.body));
            funs += 1;
        }
    }
    assert!(funs > 100, "only {funs} user functions found");
}
