//! `ir::build::renumber_funs`: rewrites copy subtrees and build new
//! declarations with `FunId::FRESH`; renumbering makes every id unique again
//! (the type checker keys `iterate` lengths by them).

use lift::ir::build::renumber_funs;
use lift::ir::{Expr, ExprKind, FunDecl, FunId, FunKind, Pattern, SourceFile};

fn fun_ids(e: &Expr, out: &mut Vec<FunId>) {
    if let ExprKind::Call(fd, args) = &e.kind {
        fun_ids_in(fd, out);
        args.iter().for_each(|a| fun_ids(a, out));
    }
}

fn fun_ids_in(fd: &FunDecl, out: &mut Vec<FunId>) {
    out.push(fd.id);
    match &fd.kind {
        FunKind::UserFun(_) => {}
        FunKind::Lambda(l) => fun_ids(&l.body, out),
        FunKind::Pattern(p) => {
            if let Some(f) = p.nested_fun() {
                fun_ids_in(f, out);
            }
        }
    }
}

#[test]
fn renumbering_makes_copied_declarations_unique() {
    let text = "userfun add(x: float, y: float): float { return x + y; }\n\
                def f(x: [float]N) = iterate(2, join o map(reduceSeq(add, 0.0f)) o split(2)) $ x\n";
    let prog = lift::parse::parse_program(&SourceFile::new("t.lift", text)).expect("parses");
    let body = &prog.def("f").expect("def f").body;
    // A transformation that duplicates a subtree copies its ids.
    let twice = Expr {
        id: body.id,
        kind: ExprKind::Call(
            Box::new(FunDecl { id: FunId::FRESH, kind: FunKind::Pattern(Pattern::Zip(2)), span: body.span }),
            vec![body.clone(), body.clone()],
        ),
        span: body.span,
    };
    let mut before = Vec::new();
    fun_ids(&twice, &mut before);
    before.sort();
    assert!(before.windows(2).any(|w| w[0] == w[1]), "the copy shares ids: {before:?}");
    let mut next = prog.next_fun;
    let renumbered = renumber_funs(&twice, &mut next);
    let mut after = Vec::new();
    fun_ids(&renumbered, &mut after);
    let n = after.len();
    after.sort();
    after.dedup();
    assert_eq!(after.len(), n, "ids unique after renumbering");
    assert!(!after.contains(&FunId::FRESH));
    assert_eq!(next, prog.next_fun + n as u32);
}
