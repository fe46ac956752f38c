//! The generated IR visitor: its order and its mutable twin.

use lift::ir::{MutVisitor, Param, Pattern, SourceFile, Span, UserFunId, Visitor};
use lift::parse::parse_program;

/// Records what it meets, in order.
#[derive(Default)]
struct Trace(Vec<String>);

impl<'ir> Visitor<'ir> for Trace {
    fn visit_pattern(&mut self, p: &'ir Pattern, span: Span) {
        self.0.push(p.name().to_string());
        self.super_pattern(p, span);
    }
    fn visit_param(&mut self, p: &'ir Param) {
        self.0.push(format!("bind {}", p.name));
    }
    fn visit_user_fun(&mut self, _u: &'ir UserFunId) {
        self.0.push("userfun".into());
    }
}

/// Renames every bound parameter.
struct Prime;

impl MutVisitor<'_> for Prime {
    fn visit_param(&mut self, p: &mut Param) {
        p.name.push('\'');
    }
}

fn program() -> lift::ir::Program {
    let src = "userfun add(a: float, b: float): float { return a + b; }\n\
               def f(xs: [float]N) = join o mapSeq(\\x -> reduceSeq(add, 0.0f) $ x) o split(4) $ xs\n";
    parse_program(&SourceFile::new("t.lift", src)).unwrap()
}

#[test]
fn arguments_come_before_the_function() {
    // `f o g $ xs` is `(\_p2 -> f(g(_p2)))(xs)`; a pattern is traced
    // before the function it takes.
    let prog = program();
    let mut t = Trace::default();
    t.visit_def(&prog.defs[0]);
    assert_eq!(t.0, ["bind xs", "bind _p2", "split", "mapSeq", "bind x", "reduceSeq", "userfun", "join"]);
}

#[test]
fn the_mutable_twin_changes_nodes_in_place() {
    let mut prog = program();
    Prime.visit_def(&mut prog.defs[0]);
    let mut t = Trace::default();
    t.visit_def(&prog.defs[0]);
    assert_eq!(t.0, ["bind xs'", "bind _p2'", "split", "mapSeq", "bind x'", "reduceSeq", "userfun", "join"]);
}
