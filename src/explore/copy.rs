//! Defs that only rearrange their inputs (`transpose $ a`, `zip(x, y)`:
//! the layout patterns alone, `recompute::is_view`), or
//! whose naive lowering writes a view all the same (a map to a constant,
//! `map(\v -> 1.0f)`; each element the whole input, `map(\v -> x)`): no
//! map computes their result, and the compiler refuses to write a view
//! ("copy it with a map of id"), so the search had no candidate to time
//! and ended with none validated. Such a def is searched as a copy of its
//! result, `<def>_copy = map(map(id)) $ (body)`, a `map` of `id` at every
//! level of the result; candidates are validated against the user's def.

use super::finish::fresh_name;
use crate::ir::visit::expr_positions;
use crate::ir::{ExprKind, FunKind, Program, SourceFile};
use crate::types::Type;

/// The program with the copy added, and its name, where `def`'s body calls
/// only rearranging patterns (or its naive lowering writes a view) and its
/// result is an array of scalars or of tuples of them.
pub fn copied(program: &Program, def: &str) -> Option<(Program, String)> {
    // In the rules' normal form: `f o g $ x` is `f(g(x))`.
    let base = crate::rewrite::prepare(program, def).ok()?;
    let d = base.def(def)?;
    let only_views = expr_positions(&d.body).iter().all(|(_, e)| match &e.kind {
        ExprKind::Call(f, _) => matches!(&f.kind, FunKind::Pattern(p) if super::recompute::is_view(p)),
        ExprKind::Literal(_) | ExprKind::Param(_) => true,
    });
    if !only_views && !writes_a_view(&base, def) {
        return None;
    }
    let result = crate::passes::typecheck::def_result(program, def)?;
    let depth = scalar_depth(&result)?;
    let name = fresh_name(program, &format!("{def}_copy"));
    let params: Vec<String> =
        d.params.iter().map(|p| p.ty.as_ref().map(|t| format!("{}: {t}", p.name))).collect::<Option<_>>()?;
    let copy = format!("{}id{}", "map(".repeat(depth), ")".repeat(depth));
    let body = crate::parse::print_expr_in(&base, d, &d.body);
    let mut text = crate::parse::print_program(program);
    text.push_str(&format!(
        "// `{def}` copied, so that a kernel writes its result (`lift explore`).\n\
         def {name}({}) =\n  {copy} $ ({body})\n",
        params.join(", ")
    ));
    let out = crate::parse::parse_program(&SourceFile::new(format!("<{def} copied>"), text)).ok()?;
    Some((out, name))
}

/// Whether the def's naive lowering is refused for writing a view.
fn writes_a_view(base: &Program, def: &str) -> bool {
    let Some(naive) = super::space::plain_lowerings(base, def, 1).into_iter().next() else { return false };
    match crate::compile::compile(&naive, def, &Default::default()) {
        Err(crate::codegen::CompileError::Unsupported { reason, .. }) => {
            matches!(*reason, crate::codegen::Unsupported::PassedOnWritten { .. })
        }
        Err(_) | Ok(_) => false,
    }
}

/// The number of array levels above the scalars of `t` (or tuples of
/// scalars: `zip(x, y)`'s pairs, which `id` copies whole), if it is an
/// array of them at some depth.
fn scalar_depth(t: &Type) -> Option<usize> {
    let leaf = |e: &Type| match e {
        Type::Scalar(_) => true,
        Type::Tuple(ts) => ts.iter().all(|t| matches!(t, Type::Scalar(_))),
        _ => false,
    };
    match t {
        Type::Array(e, _) if leaf(e) => Some(1),
        Type::Array(e, _) => scalar_depth(e).map(|d| d + 1),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(src: &str) -> Program {
        crate::parse::parse_program(&SourceFile::new("t.lift", src.to_string())).unwrap()
    }

    #[test]
    fn a_def_of_views_alone_is_searched_as_its_copy() {
        let src = "userfun dbl(x: float): float { return 2.0f * x; }\n\
                   def tr(x: [[float]N]M) = transpose o transpose o transpose $ x\n\
                   def rows(x: [float]N) = split(4) o pad(1, 1, clamp) $ x\n\
                   def dbl2(x: [[float]N]M) = map(map(dbl)) o transpose $ x\n";
        let prog = parse(src);
        let (out, name) = copied(&prog, "tr").expect("copied");
        assert_eq!(name, "tr_copy");
        let text = crate::parse::print_program(&out);
        assert!(
            text.contains(
                "def tr_copy(x: [[float]N]M) =\n  map(map(id), transpose(transpose(transpose(x))))"
            ),
            "{text}"
        );
        // The compiler refuses the def itself (it would write a view); the
        // copy computes the same values.
        assert!(crate::compile::compile(&prog, "tr", &Default::default()).is_err());
        let sizes: std::collections::BTreeMap<String, i64> =
            [("M", 3), ("N", 2)].map(|(k, v)| (k.to_string(), v)).into();
        let x = crate::ir::Value::array(
            (0..3)
                .map(|i| {
                    crate::ir::Value::array(
                        (0..2).map(|j| crate::ir::Value::Float((i * 2 + j) as f32)).collect(),
                    )
                })
                .collect(),
        );
        let inputs = [("x".to_string(), x)].into();
        let want = crate::interp::eval_def(&out, "tr", &inputs, &sizes).unwrap();
        assert_eq!(crate::interp::eval_def(&out, "tr_copy", &inputs, &sizes).unwrap(), want);
        assert_eq!(copied(&prog, "rows").map(|(_, n)| n), Some("rows_copy".to_string()));
        // Maps whose lowering writes a view: a constant, the whole input;
        // pairs of a zip.
        let views = parse(
            "def one(x: [float]N) = map(\\v -> 1.0f) $ x\n\
             def rep(x: [float]N) = map(\\v -> x) $ x\n\
             def zz(x: [float]N) = zip(x, x)\n",
        );
        for d in ["one", "rep", "zz"] {
            let (out, name) = copied(&views, d).expect(d);
            let sz: std::collections::BTreeMap<String, i64> = [("N".to_string(), 3)].into();
            let x = crate::ir::Value::array((0..3).map(|i| crate::ir::Value::Float(i as f32)).collect());
            let inputs = [("x".to_string(), x)].into();
            let want = crate::interp::eval_def(&out, d, &inputs, &sz).unwrap();
            assert_eq!(crate::interp::eval_def(&out, &name, &inputs, &sz).unwrap(), want, "{d}");
        }
        // A def that computes is searched as written.
        assert!(copied(&prog, "dbl2").is_none());
    }
}
