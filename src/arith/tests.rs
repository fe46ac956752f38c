//! Unit tests of the simplifier and the prover on the paper's examples and
//! on each rule, including the C-truncation corner cases.

use super::*;

fn idx(name: &str, start: &str, stop: &str) -> Var {
    let p = |t: &str| parse_arith(t).unwrap_or_else(|e| panic!("bad bound {t}: {e}"));
    Var { name: name.to_string(), kind: VarKind::Index, range: Range::new(p(start), p(stop)) }
}

fn parse(vars: &[Var], text: &str) -> ArithExpr {
    parse_arith_with(text, vars).unwrap_or_else(|e| panic!("bad expression {text}: {e}"))
}

fn nodes(e: &ArithExpr) -> usize {
    1 + match e {
        ArithExpr::Cst(_) | ArithExpr::Var(_) => 0,
        ArithExpr::Sum(es) | ArithExpr::Prod(es) => es.iter().map(nodes).sum(),
        ArithExpr::Div(a, b)
        | ArithExpr::ExactDiv(a, b)
        | ArithExpr::Mod(a, b)
        | ArithExpr::Pow(a, b)
        | ArithExpr::Min(a, b)
        | ArithExpr::Max(a, b) => nodes(a) + nodes(b),
        ArithExpr::Log2(a) => nodes(a),
        ArithExpr::IfThenElse(p, t, f) => nodes(&p.lhs) + nodes(&p.rhs) + nodes(t) + nodes(f),
    }
}

/// `input` simplifies to `expected` up to the order of operands. `expected`
/// must already be simple (only reordering and sign folding may change it),
/// so a rule that silently stops firing cannot make both sides agree.
fn check(vars: &[Var], input: &str, expected: &str) {
    let got = simplify(&parse(vars, input));
    let exp_raw = parse(vars, expected);
    let exp = simplify(&exp_raw);
    assert!(nodes(&exp) <= nodes(&exp_raw), "expected form `{expected}` is not simple: {exp}");
    assert_eq!(got, exp, "simplify({input}) = {got}, expected {exp}");
    assert_eq!(simplify(&got), got, "not idempotent on {input}");
}

#[test]
fn figure6_transposition() {
    // join/split by M: the inner (local) index runs over a row of length M.
    let vars = [idx("wg_id", "0", "N"), idx("l_id", "0", "M")];
    let line1 = "(((wg_id*M + l_id)/M + ((wg_id*M + l_id) % M)*N) / N) * N \
                 + ((wg_id*M + l_id)/M + ((wg_id*M + l_id) % M)*N) % N";
    check(&vars, line1, "l_id*N + wg_id");
    check(&vars, "((wg_id + l_id*N)/N)*N + (wg_id + l_id*N) % N", "l_id*N + wg_id");
    check(&vars, "(wg_id*M + l_id) % M", "l_id");
    check(&vars, "(wg_id*M + l_id) / M", "wg_id");
}

#[test]
fn figure6_wrong_ranges_do_not_simplify() {
    // With l_id < N instead of < M, (wg_id*M + l_id) % M is not l_id.
    let vars = [idx("wg_id", "0", "M"), idx("l_id", "0", "N")];
    let e = simplify(&parse(&vars, "(wg_id*M + l_id) % M"));
    assert_eq!(e, simplify(&parse(&vars, "l_id % M")));
}

#[test]
fn figure7_dot_product_index() {
    let vars = [idx("wg_id", "0", "N/128"), idx("l_id", "0", "64"), idx("i", "0", "2")];
    check(&vars, "(wg_id*64 + l_id)*2 + i", "2*l_id + 128*wg_id + i");
    check(&vars, "((wg_id*64 + l_id)*2 + i) / 128", "wg_id");
    check(&vars, "((wg_id*64 + l_id)*2 + i) % 128", "2*l_id + i");
    check(&vars, "(2*l_id + i) % 2", "i");
    check(&vars, "(2*l_id + i) / 2", "l_id");
}

#[test]
fn normalisation() {
    let v = [idx("x", "0", "10"), idx("y", "0", "10")];
    check(&v, "2*x + 3*x", "5*x");
    check(&v, "x - x", "0");
    check(&v, "(x + 1) + (y + 2) + 3", "x + y + 6");
    check(&v, "x*(y*2)*3", "6*x*y");
    check(&v, "3*(x + y) - 3*y", "3*x");
    check(&v, "x*N + x*M", "x*N + x*M");
    check(&v, "y + x", "x + y");
    check(&v, "0*x + 1*y", "y");
    check(&v, "(x + 1)*(y + 1) - x*y", "x + y + 1");
}

#[test]
fn division_and_modulo_basics() {
    let v = [idx("x", "0", "N"), idx("s", "-4", "5")];
    check(&v, "x / 1", "x");
    check(&v, "x % 1", "0");
    check(&v, "17 / 5", "3");
    check(&v, "(0 - 17) / 5", "-3");
    check(&v, "(0 - 17) % 5", "-2");
    check(&v, "(6*x + 4) / 2", "3*x + 2");
    check(&v, "(6*x) % 3", "0");
    check(&v, "(x*N) % N", "0");
    check(&v, "(x*N + 2*N) / N", "x + 2");
    check(&v, "x / N", "0");
    check(&v, "x % N", "x");
    check(&v, "s / 5", "0");
    check(&v, "s % 5", "s");
    check(&v, "(x / 2) / 3", "x / 6");
    check(&v, "(x % 8) % 4", "x % 4");
}

#[test]
fn truncation_is_respected_for_negative_dividends() {
    // pad produces i - 1, negative for i = 0: (i - 1 + 4) / 4 is 0 there,
    // while 1 + (i - 1) / 4 would be 1.
    let v = [idx("i", "0", "8")];
    let e = simplify(&parse(&v, "(i + 3) / 4"));
    for i in 0..8 {
        let val = e.eval_with(&|n| (n == "i").then_some(i));
        assert_eq!(val, Ok((i + 3) / 4), "{e} at i = {i}");
    }
    let m = simplify(&parse(&v, "(i - 1 + 4) % 4"));
    for i in 0..8 {
        assert_eq!(m.eval_with(&|n| (n == "i").then_some(i)), Ok((i + 3) % 4), "{m} at i = {i}");
    }
    // (i - 1) / 4 must not become 0: i - 1 can reach 6.
    check(&v, "(i - 1) / 8", "0");
    let d = simplify(&parse(&v, "(i - 1) / 4"));
    assert_eq!(d.eval_with(&|n| (n == "i").then_some(7)), Ok(1));
}

#[test]
fn recombination_rule4() {
    let v = [idx("x", "0", "N"), idx("s", "-7", "7")];
    check(&v, "(x / M) * M + x % M", "x");
    check(&v, "(s / 3) * 3 + s % 3", "s");
    check(&v, "2*((s / 3) * 3) + 2*(s % 3) + 1", "2*s + 1");
    check(&v, "((x + 5) / (M + 2)) * (M + 2) + (x + 5) % (M + 2)", "x + 5");
}

#[test]
fn exact_division() {
    let v: [Var; 0] = [];
    let n = ArithExpr::size("N");
    let e = ArithExpr::exact_div(ArithExpr::mul(ArithExpr::cst(128), n.clone()), ArithExpr::cst(128));
    assert_eq!(simplify(&e), n);
    let back = ArithExpr::mul(ArithExpr::exact_div(n.clone(), ArithExpr::cst(128)), ArithExpr::cst(128));
    assert_eq!(simplify(&back), n);
    let nested = ArithExpr::exact_div(ArithExpr::exact_div(n.clone(), ArithExpr::cst(2)), ArithExpr::cst(64));
    assert_eq!(simplify(&nested), ArithExpr::exact_div(n, ArithExpr::cst(128)));
    check(&v, "N / 2 / 64", "N / 128");
}

#[test]
fn min_max_ite_pow_log2() {
    let v = [idx("x", "0", "N")];
    check(&v, "min(x, N)", "x");
    check(&v, "max(x, N)", "N");
    check(&v, "min(N, M)", "min(M, N)");
    check(&v, "pow(2, 10)", "1024");
    check(&v, "log2(1024)", "10");
    check(&v, "log2(pow(2, N))", "N");
    let x = parse(&v, "x");
    let n = parse(&v, "N");
    let ite =
        ArithExpr::if_then_else(Pred { lhs: x.clone(), op: CmpOp::Lt, rhs: n.clone() }, x.clone(), n.clone());
    assert_eq!(simplify(&ite), x);
    let ite = ArithExpr::if_then_else(Pred { lhs: x.clone(), op: CmpOp::Ge, rhs: n.clone() }, x, n.clone());
    assert_eq!(simplify(&ite), n);
}

#[test]
fn prover_control_flow_examples() {
    let l64 = ArithExpr::Var(idx("l_id", "0", "64"));
    let l32 = ArithExpr::Var(idx("l_id", "0", "32"));
    let c64 = ArithExpr::cst(64);
    // Runs at least once: start < bound. At most once: start + step >= bound.
    assert!(prove_lt(&l64, &c64));
    assert!(prove_le(&c64, &ArithExpr::add(l64.clone(), c64.clone())));
    assert!(prove_lt(&l32, &c64));
    assert!(prove_le(&c64, &ArithExpr::add(l32, c64.clone())));
    assert!(!prove_lt(&c64, &l64));
    let n = ArithExpr::size("N");
    let ln = ArithExpr::Var(idx("l_id", "0", "N"));
    assert!(prove_lt(&ln, &n));
    assert!(!prove_lt(&ln, &ArithExpr::sub(n.clone(), ArithExpr::cst(1))));
    let a = ArithExpr::div(n.clone(), ArithExpr::cst(128));
    let b = ArithExpr::div(ArithExpr::div(n.clone(), ArithExpr::cst(2)), ArithExpr::cst(64));
    assert!(prove_le(&a, &b));
    assert!(prove_eq(&a, &b));
    // The type's exact length against the loop bound computed with `/`.
    let exact = ArithExpr::exact_div(n.clone(), ArithExpr::cst(128));
    assert!(prove_eq(&exact, &b));
    assert!(prove_le(&b, &exact));
    assert!(prove_le(&ArithExpr::cst(1), &n));
    assert!(!prove_le(&ArithExpr::cst(2), &n));
}

#[test]
fn min_and_max_values() {
    let vars = [idx("wg_id", "0", "M"), idx("l_id", "0", "N")];
    let e = parse(&vars, "wg_id*N + l_id");
    assert_eq!(max_value(&e), Some(simplify(&parse(&vars, "M*N - 1"))));
    assert_eq!(min_value(&e), Some(ArithExpr::cst(0)));
    let s = parse(&vars, "l_id - 1");
    assert_eq!(min_value(&s), Some(ArithExpr::cst(-1)));
    assert_eq!(max_value(&parse(&vars, "N")), Some(parse(&vars, "N")));
    assert_eq!(
        max_value(&ArithExpr::Var(Var { name: "k".into(), kind: VarKind::Index, range: Range::natural() })),
        None
    );
}

#[test]
fn overflow_is_left_alone() {
    let v: [Var; 0] = [];
    let big = i64::MAX.to_string();
    let e = parse(&v, &format!("{big} * 2 * N"));
    let s = simplify(&e);
    assert_eq!(simplify(&s), s);
    let e = parse(&v, &format!("{big} + 1 + N"));
    let s = simplify(&e);
    assert_eq!(simplify(&s), s);
    assert_eq!(simplify(&parse(&v, "N / 0")), parse(&v, "N / 0"));
}

#[test]
fn range_edges_are_respected() {
    // s reaches -5, where s / 5 = -1 and s % 5 = 0.
    let v = [idx("s", "-5", "5")];
    let d = simplify(&parse(&v, "s / 5"));
    assert_eq!(d.eval_with(&|_| Some(-5)), Ok(-1));
    let m = simplify(&parse(&v, "s % 5"));
    assert_eq!(m.eval_with(&|_| Some(-5)), Ok(0));
}

#[test]
fn rounded_down_sizes_are_bounded() {
    // N / 14 whole tiles of 14 elements: every element read is below N.
    let vars = [idx("t", "0", "N / 14"), idx("w", "0", "14")];
    let last = parse(&vars, "14*t + w");
    assert!(prove_lt(&last, &parse(&vars, "N")));
    assert!(!prove_lt(&last, &parse(&vars, "N - 1")));
    check(&vars, "min(14*t + w, N - 1)", "14*t + w");
    check(&vars, "(14*t + w) % N", "14*t + w");
}

#[test]
fn stencil_join_split_index() {
    // A clamped (padded) position read through split 16 / join, then a 2D
    // array flattened by N and read back through split N: the view
    // round-trips vanish, the clamp stays.
    let vars = [idx("t", "0", "N / 14"), idx("w", "0", "14"), idx("k", "0", "3"), idx("c", "0", "N")];
    let p = "((14*t + w + k) / 16) * 16 + (14*t + w + k) % 16";
    check(&vars, p, "14*t + w + k");
    let flat = format!("({p})*N + c");
    check(&vars, &format!("(({flat}) / N) * N + ({flat}) % N"), "14*N*t + N*w + N*k + c");
    check(&vars, &format!("({flat}) % N"), "c");
}
