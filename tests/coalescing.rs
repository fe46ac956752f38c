//! The global-access side table (`codegen::coalescing`): which lowerings
//! of a 2D map read neighbouring elements from neighbouring work-items.

use lift::codegen::coalescing::coalesced_share;
use lift::compile::compile;
use lift::ir::SourceFile;

fn share(def_body: &str) -> Option<f64> {
    let src = format!(
        "userfun mul(x: float, y: float): float {{ return x * y; }}\n\
         def f(a: [[float]N]M, s: [float]M) = {def_body}\n"
    );
    let p = lift::parse::parse_program(&SourceFile::new("t.lift", src)).unwrap();
    let k = compile(&p, "f", &Default::default()).unwrap();
    let sizes = [("M".to_string(), 300), ("N".to_string(), 200)].into();
    coalesced_share(&k.accesses, &sizes)
}

#[test]
fn rows_along_dimension_0_are_not_coalesced_columns_are() {
    // A row per work-item of dimension 0: neighbours read elements N
    // apart (the reads of `a` and the writes), only the scales `s[row]`
    // next to each other: one access in three.
    let rows = "mapGlb(0, \\(r, si) -> mapSeq(\\x -> mul(x, si)) $ r) $ zip(a, s)";
    assert_eq!(share(rows), Some(1.0 / 3.0));
    // Columns along dimension 0 (rows along 1), or a work-group per row
    // with its work-items along the row: neighbours are neighbours. The
    // scale `s[row]` is the same for all of them (stride 0).
    for body in [
        "mapGlb(1, \\(r, si) -> mapGlb(0, \\x -> mul(x, si)) $ r) $ zip(a, s)",
        "mapWrg(0, \\(r, si) -> mapLcl(0, \\x -> mul(x, si)) $ r) $ zip(a, s)",
    ] {
        assert_eq!(share(body), Some(1.0), "{body}");
    }
    // Both dimensions parallel the other way round: as a row per work-item.
    let swapped = "mapGlb(0, \\(r, si) -> mapGlb(1, \\x -> mul(x, si)) $ r) $ zip(a, s)";
    assert_eq!(share(swapped), Some(1.0 / 3.0));
}
