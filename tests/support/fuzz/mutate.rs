//! Token-level mutations of a `.lift` program: what a careless or hostile
//! user writes. The text is cut into tokens (keeping the space before each),
//! one to three mutations are applied, and the tokens are joined again.

use super::Rng;

/// A token and the text (space, comments) before it.
#[derive(Clone, Debug)]
struct Tok {
    pre: String,
    text: String,
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

fn tokenize(src: &str) -> Vec<Tok> {
    let cs: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let mut pre = String::new();
    while i < cs.len() {
        let c = cs[i];
        if c.is_whitespace() {
            pre.push(c);
            i += 1;
        } else if c == '/' && cs.get(i + 1) == Some(&'/') {
            while i < cs.len() && cs[i] != '\n' {
                i += 1;
            }
        } else {
            let start = i;
            if is_ident(c) || (c == '.' && cs.get(i + 1).is_some_and(char::is_ascii_digit)) {
                while i < cs.len() && (is_ident(cs[i]) || cs[i] == '.') {
                    i += 1;
                }
            } else if c == '-' && cs.get(i + 1) == Some(&'>') {
                i += 2;
            } else {
                i += 1;
            }
            out.push(Tok { pre: std::mem::take(&mut pre), text: cs[start..i].iter().collect() });
        }
    }
    out
}

fn untokenize(ts: &[Tok]) -> String {
    let mut s = String::new();
    for t in ts {
        s.push_str(&t.pre);
        s.push_str(&t.text);
    }
    s.push('\n');
    s
}

/// Pattern names and aliases, swapped for one another.
const PATTERNS: &[&str] = &[
    "map",
    "mapSeq",
    "mapSeqUnroll",
    "mapGlb",
    "mapWrg",
    "mapLcl",
    "mapVec",
    "reduce",
    "reduceSeq",
    "reduceSeqUnroll",
    "partRed",
    "iterate",
    "split",
    "join",
    "gather",
    "scatter",
    "transpose",
    "zip",
    "get",
    "at",
    "asVector",
    "asScalar",
    "toGlobal",
    "toLocal",
    "toPrivate",
    "slide",
    "pad",
    "padConst",
    "generate",
    "filter",
    "id",
    "reorder",
];

/// Numbers that break things: zero, negative, huge, beyond 32 bits.
const NUMBERS: &[&str] = &[
    "0",
    "1",
    "2",
    "3",
    "7",
    "-1",
    "-7",
    "1000",
    "65536",
    "1000000",
    "2147483647",
    "2147483648",
    "99999999999",
    "0.0f",
    "1e39f",
    "-0.0f",
    "3.4e38f",
    "0x10",
    "1.",
    "00",
];

const TYPES: &[&str] = &["float", "int", "float2", "float3", "float4", "float16", "int4"];

/// Wrappers for the nesting mutation: `W(x)`.
const WRAPS: &[&str] = &[
    "mapSeq(",
    "mapGlb(0, ",
    "mapGlb(1, ",
    "mapWrg(0, ",
    "mapLcl(0, ",
    "mapLcl(1, ",
    "toLocal(",
    "toPrivate(",
    "toGlobal(",
    "join(",
    "split(2, ",
    "map(",
    "iterate(2, ",
    "transpose(",
    "asVector(4, ",
    "asScalar(",
    "reduceSeq(add, 0.0f, ",
    "gather(\\i -> i, ",
    "slide(3, 1, ",
    "pad(1, 1, clamp, ",
];

/// The index of the `)` matching the `(` at `open`, if any.
fn matching(ts: &[Tok], open: usize) -> Option<usize> {
    let mut depth = 0i32;
    for (j, t) in ts.iter().enumerate().skip(open) {
        match t.text.as_str() {
            "(" => depth += 1,
            ")" => {
                depth -= 1;
                if depth == 0 {
                    return Some(j);
                }
            }
            _ => {}
        }
    }
    None
}

fn tok(text: &str) -> Tok {
    Tok { pre: String::new(), text: text.to_string() }
}

fn spaced(text: &str) -> Tok {
    Tok { pre: " ".into(), text: text.to_string() }
}

/// One mutation of `ts` in place; returns its name.
fn mutate_once(ts: &mut Vec<Tok>, rng: &mut Rng) -> &'static str {
    if ts.is_empty() {
        ts.push(tok("def"));
        return "insert";
    }
    let i = rng.below(ts.len());
    match rng.below(10) {
        0 => {
            ts.remove(i);
            "delete"
        }
        1 => {
            let t = ts[i].clone();
            ts.insert(i, t);
            "duplicate"
        }
        2 => {
            let j = if rng.chance(70) { (i + 1).min(ts.len() - 1) } else { rng.below(ts.len()) };
            let (a, b) = (ts[i].text.clone(), ts[j].text.clone());
            ts[i].text = b;
            ts[j].text = a;
            "swap"
        }
        3 | 4 => {
            // A number: replaced by a nasty one, or changed a little.
            let nums: Vec<usize> =
                (0..ts.len()).filter(|&k| ts[k].text.starts_with(|c: char| c.is_ascii_digit())).collect();
            if nums.is_empty() {
                return "none";
            }
            let k = *rng.pick(&nums);
            ts[k].text = match (rng.below(3), ts[k].text.parse::<i64>()) {
                (0, Ok(v)) => (v * 2).to_string(),
                (1, Ok(v)) => (v + rng.range(-3, 3)).to_string(),
                _ => rng.pick(NUMBERS).to_string(),
            };
            "number"
        }
        5 => {
            let pats: Vec<usize> =
                (0..ts.len()).filter(|&k| PATTERNS.contains(&ts[k].text.as_str())).collect();
            if pats.is_empty() {
                return "none";
            }
            let k = *rng.pick(&pats);
            ts[k].text = rng.pick(PATTERNS).to_string();
            "pattern"
        }
        6 => {
            // Wrap a call `p(...)` (or a name) in another pattern.
            let end =
                if ts.get(i + 1).is_some_and(|t| t.text == "(") { matching(ts, i + 1) } else { Some(i) };
            let Some(end) = end else { return "none" };
            let w = rng.pick(WRAPS);
            ts.insert(end + 1, tok(")"));
            let pre = std::mem::take(&mut ts[i].pre);
            ts.insert(i, Tok { pre, text: w.to_string() });
            "wrap"
        }
        7 => {
            // Unwrap: `p(a, ..., x)` becomes its last argument `x`.
            let calls: Vec<usize> = (0..ts.len().saturating_sub(1))
                .filter(|&k| ts[k + 1].text == "(" && PATTERNS.contains(&ts[k].text.as_str()))
                .collect();
            if calls.is_empty() {
                return "none";
            }
            let k = *rng.pick(&calls);
            let Some(close) = matching(ts, k + 1) else { return "none" };
            let mut depth = 0;
            let mut last = k + 2;
            for (j, t) in ts.iter().enumerate().take(close).skip(k + 1) {
                match t.text.as_str() {
                    "(" => depth += 1,
                    ")" => depth -= 1,
                    "," if depth == 1 => last = j + 1,
                    _ => {}
                }
            }
            let inner: Vec<Tok> = ts[last..close].to_vec();
            ts.splice(k..=close, inner);
            "unwrap"
        }
        8 => {
            let tys: Vec<usize> = (0..ts.len()).filter(|&k| TYPES.contains(&ts[k].text.as_str())).collect();
            if tys.is_empty() {
                return "none";
            }
            let k = *rng.pick(&tys);
            ts[k].text = rng.pick(TYPES).to_string();
            "type"
        }
        _ => {
            // A token from elsewhere in the file, or a stray one.
            let t = if rng.chance(70) {
                spaced(&ts[rng.below(ts.len())].text)
            } else {
                spaced(rng.pick::<&str>(&[
                    "o", "$", "(", ")", ",", "\\", "->", "[", "]", "{", "}", ";", "let", "in", "N",
                ]))
            };
            ts.insert(i, t);
            "insert"
        }
    }
}

/// A mutant of `src`: one mutation (60%), two (30%) or three; fewer
/// mutations leave more mutants that parse and reach the later stages.
pub fn mutate(src: &str, rng: &mut Rng) -> String {
    let mut ts = tokenize(src);
    let n = match rng.below(10) {
        0..=5 => 1,
        6..=8 => 2,
        _ => 3,
    };
    for _ in 0..n {
        mutate_once(&mut ts, rng);
    }
    untokenize(&ts)
}

/// A chain that stresses recursion depth: `id o id o ... $ x` or a long
/// product in a length, `n` terms (the parser must refuse or accept it
/// without overflowing the stack).
pub fn deep(rng: &mut Rng, n: usize) -> String {
    match rng.below(4) {
        0 => format!("def f(x: [float]N) = mapGlb(0, id) o {}id $ x\n", "id o ".repeat(n)),
        1 => format!("def f(x: [float]({}N)) = mapGlb(0, id) $ x\n", "1 * ".repeat(n)),
        2 => format!("def f(x: [float]N) = mapGlb(0, {}id{}) $ x\n", "mapSeq(".repeat(n), ")".repeat(n)),
        _ => format!(
            "userfun g(x: float): float {{ return {}x; }}\ndef f(x: [float]N) = mapGlb(0, g) $ x\n",
            "x + ".repeat(n)
        ),
    }
}
