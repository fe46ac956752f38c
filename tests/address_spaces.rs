//! Address-space inference (CGO 2017, Algorithm 1) where a user function's
//! value is passed straight to another: private, never a global temporary,
//! while the outer call still writes where the algorithm says.

use lift::compile::{compile, CompileOptions, Kernel, KernelParam};
use lift::ir::SourceFile;

const FUNS: &str = "userfun inner(x: float): float { return 0.5f * x + 1.0f; }\n\
                    userfun gel(x: float, t: float): float { return x * t; }\n\
                    userfun mul(x: float, y: float): float { return x * y; }\n\
                    userfun add(x: float, y: float): float { return x + y; }\n";

fn kernel(def: &str) -> Kernel {
    let src = format!("{FUNS}{def}\n");
    let program = lift::parse::parse_program(&SourceFile::new("t.lift", src)).unwrap();
    let name = program.defs.last().unwrap().name.clone();
    compile(&program, &name, &CompileOptions::default()).unwrap()
}

fn temps(k: &Kernel) -> usize {
    k.params.iter().filter(|p| matches!(p, KernelParam::Temp { .. })).count()
}

#[test]
fn a_nested_user_function_call_is_private() {
    let k = kernel("def f(x: [float]N) = mapGlb(0, \\a -> gel(a, inner(a))) $ x");
    assert_eq!(temps(&k), 0, "{}", k.source);
    assert!(k.source.contains("priv_0 = inner(x[gl_id_0]);"), "{}", k.source);
}

#[test]
fn the_outer_call_of_a_sequential_map_still_writes_global() {
    // Each row's `mapSeq` result stays a global temporary (as before): the
    // nested `mul` being private does not make the map's array private (a
    // private array of N floats does not compile).
    let k = kernel(
        "def f(s: float, a: [[float]N]M) = mapGlb(0, \\r -> reduceSeq(add, 0.0f) $ mapSeq(\\x -> gel(mul(x, s), x)) $ r) $ a",
    );
    assert_eq!(temps(&k), 1, "{}", k.source);
}
