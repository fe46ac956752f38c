//! Random well-typed low-level programs ("the compiler's Csmith"): kernels
//! over global threads, work-groups and local threads in one and two
//! dimensions, with sequential maps and reductions (unrolled or not),
//! split/join, zip, gather/scatter, slide/pad, iterate, private and local
//! copies and vectors. Programs are text (regression files stay readable).
//! Inner lengths are concrete and chosen so that every split divides; the
//! outer sizes `N` and `M` are symbolic and picked at run time (the
//! smallest ones above a floor that fit, rarely powers of two).

use super::Rng;

/// User functions every generated program may call: small scalar and
/// vector operations.
pub const PRELUDE: &str = "\
userfun add(x: float, y: float): float { return x + y; }
userfun mul(x: float, y: float): float { return x * y; }
userfun madd(acc: float, x: float, y: float): float { return acc + x * y; }
userfun maxf(x: float, y: float): float { return x > y ? x : y; }
userfun neg(x: float): float { return -x; }
userfun inc(x: float): float { return x + 1.0f; }
userfun sq(x: float): float { return x * x; }
userfun halve(x: float): float { return 0.5f * x; }
userfun sq4(v: float4): float4 { return v * v; }
userfun inc2(v: float2): float2 { return v + 1.0f; }
";

/// A unary float function.
fn unary(rng: &mut Rng) -> String {
    rng.pick(&["id", "neg", "inc", "sq", "halve", "\\v -> add(v, v)", "\\v -> mul(v, 3.0f)"]).to_string()
}

fn reducer(rng: &mut Rng) -> &'static str {
    rng.pick::<&str>(&["add", "maxf", "\\(a, b) -> add(a, sq(b))"])
}

fn divisors(n: i64) -> Vec<i64> {
    (1..=n).filter(|d| n % d == 0).collect()
}

/// A divisor of `n` other than 1 and `n` where one exists.
fn proper_divisor(rng: &mut Rng, n: i64) -> i64 {
    let ds: Vec<i64> = divisors(n).into_iter().filter(|&d| d > 1 && d < n).collect();
    if ds.is_empty() {
        n
    } else {
        *rng.pick(&ds)
    }
}

/// A permutation of `0..n` as an index function.
fn permutation(rng: &mut Rng, n: i64) -> String {
    let a = proper_divisor(rng, n);
    match rng.below(3) {
        0 => format!("\\i -> {} - i", n - 1),
        1 if a < n => format!("\\i -> (i % {a}) * {} + i / {a}", n / a),
        _ => format!("\\i -> (i + {}) % {n}", rng.range(1, n.max(2) - 1)),
    }
}

/// A sequential function over `[float]n` (one thread's work), its text
/// and the length of its result. `depth` bounds nesting.
fn seq(rng: &mut Rng, n: i64, depth: u32) -> (String, i64) {
    let choice = if depth == 0 { rng.below(3) } else { rng.below(11) };
    match choice {
        0 => (format!("mapSeq({})", unary(rng)), n),
        1 => (format!("reduceSeq({}, 0.0f)", reducer(rng)), 1),
        2 if n <= 24 => {
            if rng.chance(50) {
                (format!("mapSeqUnroll({})", unary(rng)), n)
            } else {
                (format!("reduceSeqUnroll({}, 0.0f)", reducer(rng)), 1)
            }
        }
        2 => (format!("mapSeq({})", unary(rng)), n),
        3 => {
            let j = proper_divisor(rng, n);
            let (f, m) = seq(rng, j, depth - 1);
            (format!("join o mapSeq({f}) o split({j})"), (n / j) * m)
        }
        4 => {
            let (f, m) = seq(rng, n, depth - 1);
            (format!("{f} o gather({})", permutation(rng, n)), m)
        }
        5 => {
            // A private copy, then more work on it.
            let (f, m) = seq(rng, n, depth - 1);
            (format!("{f} o toPrivate(mapSeq({}))", unary(rng)), m)
        }
        6 => {
            // A stencil: windows over a padded array, each reduced.
            let (l, r) = (rng.range(0, 2), rng.range(0, 2));
            let size = rng.range(1, 3).min(n + l + r);
            let total = n + l + r;
            let steps: Vec<i64> = (1..=size).filter(|s| (total - size) % s == 0).collect();
            let step = *rng.pick(&steps);
            let windows = (total - size + step) / step;
            let mode = rng.pick(&["clamp", "mirror", "wrap"]);
            let pad = if l + r > 0 { format!(" o pad({l}, {r}, {mode})") } else { String::new() };
            (
                format!("join o mapSeq(reduceSeq({}, 0.0f)) o slide({size}, {step}){pad}", reducer(rng)),
                windows,
            )
        }
        7 => {
            let (f, m) = seq(rng, n, depth - 1);
            if m == n {
                (format!("iterate({}, {f})", rng.range(1, 3)), n)
            } else {
                (f, m)
            }
        }
        8 => {
            let (g, k) = seq(rng, n, depth - 1);
            let (f, m) = seq(rng, k, depth - 1);
            (format!("{f} o {g}"), m)
        }
        9 => {
            // Results written in a permuted order.
            (format!("scatter({}) o mapSeq({})", permutation(rng, n), unary(rng)), n)
        }
        _ => {
            let (f, m) = seq(rng, n, depth - 1);
            (format!("toPrivate(mapSeq(id)) o {f}"), m)
        }
    }
}

/// A sequential function whose result is written to `space`.
fn seq_to(rng: &mut Rng, n: i64, space: &str) -> (String, i64) {
    let (f, m) = seq(rng, n, 2);
    if rng.chance(60) {
        (format!("{space}(mapSeq(id)) o {f}"), m)
    } else {
        (f, m)
    }
}

/// Work-group code over `[float]n`: stages of local threads, each writing
/// to local (or private) memory, the last to global memory.
fn work_group(rng: &mut Rng, n: i64, dim: u8) -> (String, i64) {
    let mut stages: Vec<String> = Vec::new();
    let mut len = n;
    let count = rng.range(0, 3);
    for _ in 0..count {
        match rng.below(6) {
            0 => stages.push(format!("toLocal(mapLcl({dim}, {}))", unary(rng))),
            1 => stages.push(format!(
                "toLocal(mapLcl({dim}, {})) o gather({})",
                unary(rng),
                permutation(rng, len)
            )),
            2 => {
                let j = proper_divisor(rng, len);
                let (f, m) = seq_to(rng, j, "toLocal");
                stages.push(format!("join o mapLcl({dim}, {f}) o split({j})"));
                len = (len / j) * m;
            }
            3 if len % 2 == 0 => {
                let mut r = 0;
                while len % (1 << (r + 1)) == 0 && r < 3 {
                    r += 1;
                }
                let r = rng.range(1, r);
                stages.push(format!(
                    "iterate({r}, join o mapLcl({dim}, toLocal(mapSeq(id)) o reduceSeq({}, 0.0f)) o split(2))",
                    reducer(rng)
                ));
                len >>= r;
            }
            4 => stages.push(format!(
                "mapLcl({dim}, {}) o toPrivate(mapLcl({dim}, {}))",
                unary(rng),
                unary(rng)
            )),
            _ => stages.push(format!("toLocal(mapLcl({dim}, {}))", unary(rng))),
        }
    }
    let last = match rng.below(4) {
        0 => format!("toGlobal(mapLcl({dim}, {}))", unary(rng)),
        1 => format!("mapLcl({dim}, {})", unary(rng)),
        2 => format!("toGlobal(scatter({}) o mapLcl({dim}, {}))", permutation(rng, len), unary(rng)),
        _ => {
            let j = proper_divisor(rng, len);
            let (f, m) = seq_to(rng, j, "toGlobal");
            let out = format!("join o mapLcl({dim}, {f}) o split({j})");
            len = (len / j) * m;
            out
        }
    };
    stages.reverse();
    let body = std::iter::once(last).chain(stages).collect::<Vec<_>>().join(" o ");
    (body, len)
}

/// A chunk length that is rarely a power of two.
fn chunk(rng: &mut Rng) -> i64 {
    *rng.pick(&[3, 5, 6, 7, 9, 10, 12, 14, 15, 18, 20, 24, 28, 36, 48, 4, 8, 16])
}

/// One random program: the prelude and `def k(...)`.
pub fn program(rng: &mut Rng) -> String {
    let input = if rng.chance(20) { "gather(\\i -> N - 1 - i) $ x".to_string() } else { "x".to_string() };
    let body = match rng.below(9) {
        0 => {
            let k = chunk(rng);
            let (f, _) = seq_to(rng, k, "toGlobal");
            format!("def k(x: [float]N) = join o mapGlb(0, {f}) o split({k}) $ {input}")
        }
        1 => {
            let c = chunk(rng);
            let (f, _) = seq_to(rng, c, "toGlobal");
            format!("def k(x: [[float]{c}]N) = mapGlb(0, {f}) $ x")
        }
        2 => {
            let u = unary(rng);
            let t = if rng.chance(50) { " o transpose" } else { "" };
            format!("def k(x: [[float]M]N) = mapGlb(1, mapGlb(0, {u})){t} $ x")
        }
        3 => {
            let k = chunk(rng);
            let (w, _) = work_group(rng, k, 0);
            format!("def k(x: [float]N) = join o mapWrg(0, {w}) o split({k}) $ {input}")
        }
        4 => {
            let c = chunk(rng);
            let (w, _) = work_group(rng, c, 0);
            format!("def k(x: [[float]{c}]N) = mapWrg(0, {w}) $ x")
        }
        5 => {
            // Two-dimensional tiles, through local memory or not.
            let (tx, ty) = (chunk(rng).min(16), chunk(rng).min(16));
            let (u, v) = (unary(rng), unary(rng));
            let inner = match rng.below(3) {
                0 => format!("mapLcl(1, mapLcl(0, {u}))"),
                1 => format!("toGlobal(mapLcl(1, mapLcl(0, {u}))) o toLocal(mapLcl(1, mapLcl(0, {v})))"),
                _ => format!("toGlobal(mapLcl(1, mapLcl(0, {u}))) o toPrivate(mapLcl(1, mapLcl(0, {v})))"),
            };
            format!(
                "def k(x: [[float]M]N) = mapWrg(1, mapWrg(0, {inner})) o map(transpose) o split({ty}) o map(split({tx})) $ x"
            )
        }
        6 => {
            // Vectors: asVector of a global input, vector user functions.
            let (w, f) = *rng.pick(&[(4, "sq4"), (2, "inc2"), (4, "mapVec(neg)"), (2, "mapVec(sq)")]);
            let j = chunk(rng).min(6);
            match rng.below(3) {
                0 => format!("def k(x: [float]N) = asScalar o mapGlb(0, {f}) o asVector({w}) $ x"),
                1 => format!(
                    "def k(x: [float]N) = asScalar o join o mapGlb(0, mapSeq({f})) o split({j}) o asVector({w}) $ x"
                ),
                _ => format!(
                    "def k(x: [float]N) = asScalar o join o mapWrg(0, toGlobal(mapLcl(0, {f}))) o split({j}) o asVector({w}) $ x"
                ),
            }
        }
        7 => {
            // Two inputs: zip, a dot product per chunk.
            let k = chunk(rng);
            if rng.chance(50) {
                format!(
                    "def k(x: [float]N, y: [float]N) = join o mapGlb(0, toGlobal(mapSeq(id)) o \
                     reduceSeq(\\(acc, ab) -> madd(acc, get(0, ab), get(1, ab)), 0.0f)) o split({k}) $ zip(x, y)"
                )
            } else {
                let u = unary(rng);
                format!(
                    "def k(x: [float]N, y: [float]N) = join o mapWrg(0, \\t -> toGlobal(mapLcl(0, \\(a, b) -> add(a, b))) $ \
                     zip(toLocal(mapLcl(0, {u})) $ get(0, t), get(1, t))) $ zip(split({k}) $ x, split({k}) $ y)"
                )
            }
        }
        _ => {
            // A stencil over the whole input.
            let (l, r) = (rng.range(0, 2), rng.range(0, 2));
            let size = rng.range(1, 3) + l.min(r);
            let mode = rng.pick(&["clamp", "mirror", "wrap"]);
            let pad = if l + r > 0 { format!(" o pad({l}, {r}, {mode})") } else { String::new() };
            format!(
                "def k(x: [float]N) = mapGlb(0, toGlobal(mapSeq(id)) o reduceSeq({}, 0.0f)) o slide({size}, 1){pad} $ {input}",
                reducer(rng)
            )
        }
    };
    format!("{PRELUDE}{body}\n")
}
