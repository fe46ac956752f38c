//! Every kind of parse error, rendered as `file:line:col: error: expected X, found `Y``.

use lift::ir::SourceFile;
use lift::parse::parse_program;

fn error_of(text: &str) -> String {
    let src = SourceFile::new("t.lift", text);
    match parse_program(&src) {
        Ok(_) => panic!("parsed without error:\n{text}"),
        Err(e) => e.render(&src),
    }
}

const UF: &str = "userfun add(x: float, y: float): float { return x + y; }\n";

/// 20 defs, each calling the previous twice: inlining doubles the size.
fn doubling_defs(n: usize) -> String {
    let mut s = String::from("def d0(x: [float]N) = mapGlb(0, id) $ x\n");
    for i in 1..=n {
        s.push_str(&format!("def d{i}(x: [float]N) = d{}(d{}(x))\n", i - 1, i - 1));
    }
    s
}

/// Defs each adding 300 levels of layout patterns to the previous one.
fn deepening_defs(n: usize) -> String {
    let chain = vec!["join o split(1)"; 150].join(" o ");
    let mut s = String::from("def d0(x: [float]N) = mapGlb(0, id) $ x\n");
    for i in 1..=n {
        s.push_str(&format!("def d{i}(x: [float]N) = {chain} o d{} $ x\n", i - 1));
    }
    s
}

#[test]
fn all_error_messages() {
    let cases: Vec<(String, &str)> = vec![
        ("def f(x: [float]N) = mapSeq(idd) $ x".into(), "t.lift:1:29: error: expected a known name (parameter, size, pattern, user function or earlier def), found `idd`"),
        ("def f(x: [float]N) = frobnicate(2) $ x".into(), "t.lift:1:22: error: expected a known name (parameter, size, pattern, user function or earlier def), found `frobnicate`"),
        ("def f(x: [float]N) = split(1, 2, x) $ x".into(), "t.lift:1:22: error: expected 1 argument, or 2 with its data for `split(m)`, found `split(1, 2, x) $ x`"),
        ("def f(x: [float]N) = mapSeq(id, x, x)".into(), "t.lift:1:22: error: expected 1 argument, or 2 with its data for `mapSeq(f)`, found `mapSeq(id, x, x)`"),
        ("def f(x: [float]N) = mapSeq $ x".into(), "t.lift:1:31: error: expected a function (this name is a value), found `x`"),
        ("def f(x: [float]N) = mapSeq(id) o x $ x".into(), "t.lift:1:35: error: expected a function (this name is a value), found `x`"),
        ("def f(x: [float]N) = mapSeq(id) o add(x) $ x".into(), "t.lift:1:35: error: expected a known name (parameter, size, pattern, user function or earlier def), found `add`"),
        (format!("{UF}def f(x: [float]N) = mapSeq(\\a -> add(a)) $ x"), "t.lift:2:35: error: expected 2 arguments for this function, not 1, found `add(a)`"),
        ("def f(x: [flot]N) = x".into(), "t.lift:1:11: error: expected a type such as `float`, `int4`, `(float, int)` or `[float]N`, found `flot`"),
        ("def f(x: [float]) = x".into(), "t.lift:1:17: error: expected an array length (a positive integer, a size name or `(expression)`), found `)`"),
        ("def f(x: [float]N) = x /* never closed".into(), "t.lift:1:24: error: expected `*/` closing this comment, found `/*`"),
        ("def f(x: [float]N) = padConst(1, 1, 1.5e, x)".into(), "t.lift:1:37: error: expected a number such as `2`, `0.5f` or `1.5e-3f`, found `1.5e`"),
        ("def f(x: [float]N) = padConst(1, 1, 2f, x)".into(), "t.lift:1:37: error: expected a number such as `2`, `0.5f` or `1.5e-3f`, found `2f`"),
        ("def f(x: [float]N) = x\ndef f(y: [float]N) = y".into(), "t.lift:2:5: error: expected a name not already used by a def, user function or type, found `f`"),
        (format!("{UF}{UF}"), "t.lift:2:9: error: expected a name not already used by a def, user function, pattern or type, found `add`"),
        ("userfun join(x: float): float { return x; }".into(), "t.lift:1:9: error: expected a name not already used by a def, user function, pattern or type, found `join`"),
        ("def f(x: [float]N) = x )".into(), "t.lift:1:24: error: expected `def`, `userfun` or the end of the file, found `)`"),
        ("def f(x: [float]N) = mapSeq(id) $".into(), "t.lift:1:34: error: expected an expression, found `end of file`"),
        ("def f(x: [float]N) = split(K) $ x".into(), "t.lift:1:28: error: expected a size declared in the def's parameter types, or an integer, found `K`"),
        ("def f(x: [float]N) = gather(\\i -> i + j) $ x".into(), "t.lift:1:39: error: expected the index `i` or a size, found `j`"),
        ("def f(x: [float]N) = gather(id) $ x".into(), "t.lift:1:29: error: expected an index function `\\i -> ...`, found `id`"),
        ("def f(x: [float]N) = pad(1, 1, bounce) $ x".into(), "t.lift:1:32: error: expected a boundary mode `clamp`, `mirror` or `wrap`, found `bounce`"),
        ("def f(x: [float]N) = asVector(5) $ x".into(), "t.lift:1:31: error: expected a vector width 2, 3, 4, 8 or 16, found `5`"),
        ("def f(x: [float]N) = mapLcl(3, id) $ x".into(), "t.lift:1:29: error: expected a dimension 0, 1 or 2, found `3`"),
        ("def f(x: [float]N) = zip(x) ".into(), "t.lift:1:22: error: expected at least two arrays in `zip(xs, ys, ...)`, found `zip(x)`"),
        ("def f(x: [float]N) = join o split(2)".into(), "t.lift:1:22: error: expected a value (apply the composition to data with `$`), found `join o split(2)`"),
        ("def f(x: [float]N) = x o join $ x".into(), "t.lift:1:22: error: expected a function (this name is a value), found `x`"),
        ("def f(x: [float]N) = mapSeq(\\a -> a + a) $ x".into(), "t.lift:1:37: error: expected a value (arithmetic on data is written in a user function; `+ - * / %` are for sizes and indices), found `+`"),
        ("def f(x: [float]N) = mapSeq(id) $ N".into(), "t.lift:1:35: error: expected a value (sizes appear only in types, pattern parameters and index functions), found `N`"),
        ("def f(x: [float]N) = split(2, x) o join $ x".into(), "t.lift:1:22: error: expected a function (this application already has its data), found `split(2, x)`"),
        ("def f(x: [float]N, x: [float]N) = x".into(), "t.lift:1:20: error: expected a parameter name not used by another parameter or size, found `x`"),
        ("userfun g(x: [float]N): float { return 1.0f; }".into(), "t.lift:1:14: error: expected a scalar, vector or tuple type (user functions take no arrays), found `[float]N`"),
        ("userfun g(x: float): float { return y; }".into(), "t.lift:1:37: error: expected a parameter or a declared variable, found `y`"),
        ("userfun g(x: float): float { return nosuch(x); }".into(), "t.lift:1:37: error: expected an OpenCL built-in or an earlier user function, found `nosuch`"),
        ("userfun g(x: int): float { return fabs(x); }".into(), "t.lift:1:35: error: expected fabs(G) for G float or floatn (n = 2, 3, 4, 8, 16) (several overloads match equally well: OpenCL also has double and unsigned ones, so write 1.0f rather than 1.0 and cast with (float) or (int)), found `fabs(int)`"),
        ("userfun g(x: float4, y: float3): float { return dot(x, y); }".into(), "t.lift:1:49: error: expected dot(G, G) for G float or floatn (n = 2, 3, 4); the result is a float (no overload takes these arguments), found `dot(float4, float3)`"),
        ("userfun g(x: float, y: float): float { return x * mad(x, y); }".into(), "t.lift:1:51: error: expected mad(G, G, G) for G float or floatn (n = 2, 3, 4, 8, 16) (it takes 3 arguments), found `mad(float, float)`"),
        ("userfun g(x: float): float { return x % 2.0f; }".into(), "t.lift:1:9: error: expected integer operands of `%` (fmod computes the remainder of floats), found ``%` on a float in `g``"),
        ("userfun g(x: float): float { float s = 0.0f; s += (float2)(x); return s; }".into(), "t.lift:1:9: error: expected a value of the type float of `s` (OpenCL converts only scalars), found ``s` assigned a float2 in `g``"),
        ("userfun h(a: float, b: float): float { return a * b; } userfun g(x: float4): float { return h(x.x) + h(x, 1.0f); }".into(), "t.lift:1:93: error: expected arguments user function h(float, float) takes, found `h(float)`"),
        ("userfun g(x: float): float { return x;".into(), "t.lift:1:39: error: expected `}` closing the function body, found `end of file`"),
        ("userfun g(x: float): float { x + ; }".into(), "t.lift:1:34: error: expected a C expression, found `;`"),
        ("def f(x: [float]N) = iterate(-1, id) $ x".into(), "t.lift:1:30: error: expected a non-negative iteration count, found `-1`"),
        ("def f(x: [float]N) = get(0) $ (x, x)".into(), "t.lift:1:32: error: expected a constant (a number or a tuple of numbers), found `x`"),
        ("def f(x: [float]N) = padConst(1, 1, 3000000000, x)".into(), "t.lift:1:37: error: expected an integer of at most 2147483647 (32-bit int), found `3000000000`"),
        ("userfun g(x: float): float { return x + 4294967300; }".into(), "t.lift:1:41: error: expected an integer of at most 2147483647 (32-bit int), found `4294967300`"),
        ("userfun g(x: float): float { return (float2)(x); }".into(), "t.lift:1:30: error: expected a value of the declared result type float of `g`, found `return of a float2`"),
        ("userfun g(x: float): float4 { if (x > 0.0f) return (float4)(x); return (int4)(1); }".into(), "t.lift:1:65: error: expected a value of the declared result type float4 of `g`, found `return of a int4`"),
        (format!("def f(x: [float]N) = mapGlb(0, {}) $ x", vec!["id"; 1002].join(" o ")), "t.lift:1:5035: error: expected at most 1000 chained terms (`o`, `+`, `*`, ...) along one path of an expression, found `o`"),
        (format!("def f(x: [float]({})) = x", vec!["1"; 1002].join("*")), "t.lift:1:2019: error: expected at most 1000 chained terms (`o`, `+`, `*`, ...) along one path of an expression, found `*`"),
        (format!("userfun g(x: float): float {{ return {}; }}", vec!["x"; 1002].join("+")), "t.lift:1:2038: error: expected at most 1000 chained terms (`o`, `+`, `*`, ...) along one path of an expression, found `+`"),
        (format!("def f(x: {}float{}) = x", "[".repeat(200), "]N".repeat(200)), "t.lift:1:110: error: expected at most 100 levels of nested expressions, found `[`"),
        (doubling_defs(20), "t.lift:16:5: error: expected a def of at most 100000 expressions (inlined calls of earlier defs included), found `d15`"),
        (deepening_defs(20), "t.lift:15:5: error: expected a def of expressions nested at most 4000 deep (inlined calls of earlier defs included), found `d14`"),
        ("def f(x: [float]N) = x # y".into(), "t.lift:1:24: error: expected a token, found `#`"),
        ("def (x: [float]N) = x".into(), "t.lift:1:5: error: expected a name for the `def`, found `(`"),
        // Issue 23: user names that reach the kernel never meet generated ones.
        ("def f(priv_0: [float]N) = x".into(), "t.lift:1:7: error: expected a name that is not an OpenCL C word or built-in, `out`, `lift_...`, `Tuple<n>...` or a generated name such as `priv_0` or `gl_id_0` (reserved for generated code), found `priv_0`"),
        ("def f(x: [float]gl_id_0) = x".into(), "t.lift:1:7: error: expected a name that is not an OpenCL C word or built-in, `out`, `lift_...`, `Tuple<n>...` or a generated name such as `priv_0` or `gl_id_0` (reserved for generated code), found `gl_id_0`"),
        ("userfun lift_f(x: float): float { return x; }".into(), "t.lift:1:9: error: expected a name that is not an OpenCL C word or built-in, `out`, `lift_...`, `Tuple<n>...` or a generated name such as `priv_0` or `gl_id_0` (reserved for generated code), found `lift_f`"),
        ("userfun g(v: float4, a: float, b: float): float { return (v > 0.0f) ? a : b; }".into(), "t.lift:1:9: error: expected a scalar condition (OpenCL takes no vector here; select(a, b, c) chooses component-wise), found `a int4 as the condition of a conditional `?:` (except an int vector choosing between vectors of its width) in `g``"),
        ("userfun add_v4(x: float): float { return x; }".into(), "t.lift:1:9: error: expected a name that is not an OpenCL C word or built-in, `out`, `lift_...`, `Tuple<n>...` or a generated name such as `priv_0` or `gl_id_0` (reserved for generated code), found `add_v4`"),
        ("def pow(x: [float]N) = x".into(), "t.lift:1:5: error: expected a name not already used by a def, user function or type, found `pow`"),
        ("def f(x: [float]N) = (\\a -> a)(x, x)".into(), "t.lift:1:22: error: expected 1 argument for this function, not 2, found `(\\a -> a)(x, x)`"),
    ];
    let mut failures = Vec::new();
    for (src, want) in &cases {
        let got = error_of(src);
        if got != *want {
            failures.push(format!("source: {src}\n  want: {want}\n   got: {got}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn rendered_error_is_one_line_with_position() {
    let text = "// comment\n\ndef f(x: [float]N) =\n  join o\n  nosuch $ x\n";
    let got = error_of(text);
    assert_eq!(
        got,
        "t.lift:5:3: error: expected a known name (parameter, size, pattern, user function or earlier def), found `nosuch`"
    );
    assert!(!got.contains('\n'));
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let deep = format!("def f(x: [float]N) = {}x{}", "id(".repeat(5000), ")".repeat(5000));
    let got = error_of(&deep);
    assert!(got.contains("expected at most 100 levels of nested expressions"), "{got}");
    let deep_c =
        format!("userfun g(x: float): float {{ return {}x{}; }}", "(".repeat(5000), ")".repeat(5000));
    assert!(error_of(&deep_c).contains("levels of nested expressions"));
}

/// Every prefix of every example, and every example with one character
/// removed, must give a result or an error, never a crash.
#[test]
fn mangled_examples_never_crash() {
    for path in
        ["examples/dot.lift", "examples/transpose.lift", "examples/scal.lift", "examples/jacobi1d.lift"]
    {
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let cuts: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
        let mut errors = 0;
        for &i in &cuts {
            let prefix = &text[..i];
            let mut removed = text.clone();
            removed.remove(i);
            for t in [prefix.to_string(), removed] {
                let src = SourceFile::new("m.lift", t);
                if let Err(e) = parse_program(&src) {
                    assert!(!e.render(&src).contains('\n'));
                    errors += 1;
                }
            }
        }
        assert!(errors > 0, "{path}: no mangled variant was rejected");
    }
}
