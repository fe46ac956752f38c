//! Issue 23: no accepted kernel reads or writes outside its buffers.
//!
//! Random index functions (`gather`, `scatter`) and `at` indices over `i`,
//! the size `N` and constants up to 2^31 - 1 (overflowing products
//! included) are compiled with `N` symbolic and with `N` known. Every
//! kernel the compiler accepts runs on the OpenCL device inside a wrapper
//! kernel that passes it pointers `PAD` elements into buffers whose padding
//! is poisoned: a write outside the array changes the padding, a read
//! outside it brings the poison (or another buffer's value) into the
//! result, which must equal the interpreter's. The interpreter checks
//! bounds in 64 bits: an accepted program it finds out of bounds fails too,
//! and so does an accepted `scatter` that it finds writing one element
//! twice (leaving another unwritten).
//! All accepted kernels are built as one program (one PoCL build).

use lift::compile::{compile, CompileOptions, Kernel, KernelParam};
use lift::interp::eval_def;
use lift::ir::SourceFile;
use lift::ir::Value;
use lift::runtime::{select_device, KernelArg, Launch, Runtime};
use lift::types::HostArray;
use std::collections::BTreeMap;

/// Elements of poisoned padding on each side of every buffer.
const PAD: usize = 256;
const POISON: f32 = -7777.0;
/// Rows of the `at` programs' input.
const ROWS: i64 = 3;

struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len() as u64) as usize]
    }
}

/// A random integer expression over `leaves`, at most `depth` deep.
fn expr(rng: &mut Rng, leaves: &[&str], depth: u32) -> String {
    if depth == 0 || rng.below(3) == 0 {
        return match rng.below(4) {
            0 | 1 => rng.pick(leaves).to_string(),
            2 => rng.below(10).to_string(),
            _ => rng.pick(&["1000000007", "2147483647", "65536", "100000000", "46341"]).to_string(),
        };
    }
    let op = rng.pick(&["+", "-", "*", "/", "%", "%", "+"]);
    let (a, b) = (expr(rng, leaves, depth - 1), expr(rng, leaves, depth - 1));
    // Mostly a remainder by N at the top, which can bring the index back.
    format!("({a} {op} {b})")
}

/// One program: its source, its def, and how its result is checked.
struct Case {
    src: String,
    def: String,
    kind: &'static str,
}

fn case(rng: &mut Rng, k: usize) -> Case {
    let def = format!("p{k}");
    let i_expr = |rng: &mut Rng| {
        let e = expr(rng, &["i", "N", "i"], 3);
        if rng.below(2) == 0 {
            format!("{e} % N")
        } else {
            e
        }
    };
    let (kind, src) = match rng.below(3) {
        0 => ("gather", format!("def {def}(x: [float]N) = mapGlb(id) o gather(\\i -> {}) $ x", i_expr(rng))),
        1 => {
            ("scatter", format!("def {def}(x: [float]N) = scatter(\\i -> {}) o mapGlb(id) $ x", i_expr(rng)))
        }
        _ => {
            let e = expr(rng, &["N"], 2);
            ("at", format!("def {def}(x: [[float]N]M) = mapGlb(\\row -> toGlobal(id) $ at({e}, row)) $ x"))
        }
    };
    Case { src, def, kind }
}

/// The interpreter's result (flat floats), or its error.
fn interpret(c: &Case, x: &[f32], n: i64) -> Result<Vec<f32>, String> {
    let file = SourceFile::new("t.lift", &c.src);
    let p = lift::parse::parse_program(&file).map_err(|e| e.render(&file))?;
    let arg = match c.kind {
        "at" => Value::Array(
            x.chunks(n as usize)
                .map(|r| Value::Array(r.iter().map(|v| Value::Float(*v)).collect()))
                .collect(),
        ),
        _ => Value::Array(x.iter().map(|v| Value::Float(*v)).collect()),
    };
    let v = eval_def(&p, &c.def, &BTreeMap::from([("x".to_string(), arg)]), &BTreeMap::new())
        .map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    flatten(&v, &mut out);
    Ok(out)
}

fn flatten(v: &Value, out: &mut Vec<f32>) {
    match v {
        Value::Float(f) => out.push(*f),
        Value::Array(vs) => vs.iter().for_each(|v| flatten(v, out)),
        other => panic!("unexpected value {other:?}"),
    }
}

/// The kernel as a plain function, and a kernel calling it with every
/// buffer pointer moved `PAD` elements in.
fn wrapped(k: &Kernel, probe: &str) -> String {
    let plain = k.source.replacen(&format!("kernel void {}(", k.name), &format!("void {}(", k.name), 1);
    let (mut params, mut args) = (Vec::new(), Vec::new());
    for (j, p) in k.params.iter().enumerate() {
        match p {
            KernelParam::Input { .. } | KernelParam::Output { .. } => {
                params.push(format!("global float* b{j}"));
                args.push(format!("b{j} + {PAD}"));
            }
            KernelParam::Size { name } => {
                params.push(format!("int {name}"));
                args.push(name.clone());
            }
            KernelParam::Scalar { .. } | KernelParam::Temp { .. } | KernelParam::Local { .. } => {
                panic!("unexpected parameter {p:?}")
            }
        }
    }
    format!("{plain}\nkernel void {probe}({}) {{ {}({}); }}\n", params.join(", "), k.name, args.join(", "))
}

/// Compiled cases with their sizes.
struct Accepted {
    case: Case,
    kernel: Kernel,
    n: i64,
}

#[test]
fn accepted_kernels_stay_inside_their_buffers() {
    let Ok(info) = select_device(None) else {
        println!("skipped: no OpenCL device");
        return;
    };
    let rt = Runtime::new(info).expect("runtime");
    let mut rng = Rng(0x23);
    let (mut accepted, mut refused) = (Vec::new(), 0);
    for k in 0..600 {
        let c = case(&mut rng, k);
        let n = 1 + rng.below(40) as i64;
        let file = SourceFile::new("t.lift", &c.src);
        let program = lift::parse::parse_program(&file).unwrap_or_else(|e| panic!("{}", e.render(&file)));
        let known = rng.below(2) == 0;
        let mut opts = CompileOptions::default();
        if known {
            opts.sizes = BTreeMap::from([("N".to_string(), n)]);
            if c.kind == "at" {
                opts.sizes.insert("M".into(), ROWS);
            }
        }
        match compile(&program, &c.def, &opts) {
            Ok(kernel) => accepted.push(Accepted { case: c, kernel, n }),
            Err(e) => {
                assert!(e.span().is_some(), "{}: unpositioned {e}", c.src);
                refused += 1;
            }
        }
    }
    let source: String =
        accepted.iter().enumerate().map(|(j, a)| wrapped(&a.kernel, &format!("probe{j}"))).collect();
    let built = rt.build("index-bounds", &source, "").unwrap_or_else(|e| panic!("{e}"));
    let mut failures = Vec::new();
    for (j, a) in accepted.iter().enumerate() {
        if let Err(e) = check(&rt, &built, &format!("probe{j}"), a) {
            failures.push(format!("{}: {e}", a.case.src));
        }
    }
    println!("{} accepted, {refused} refused", accepted.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Both outcomes must be exercised for the property to mean something.
    assert!(accepted.len() >= 40 && refused >= 100, "{} accepted, {refused} refused", accepted.len());
}

/// Runs one accepted kernel between poisoned paddings and compares.
fn check(
    rt: &Runtime,
    built: &lift::runtime::RuntimeProgram,
    probe: &str,
    a: &Accepted,
) -> Result<(), String> {
    let rows = if a.case.kind == "at" { ROWS } else { 1 };
    let len = (a.n * rows) as usize;
    let out_len = if a.case.kind == "at" { ROWS as usize } else { len };
    let x: Vec<f32> = (0..len).map(|v| v as f32 + 1.0).collect();
    let padded = |data: &[f32]| {
        let mut v = vec![POISON; PAD];
        v.extend_from_slice(data);
        v.extend(std::iter::repeat_n(POISON, PAD));
        v
    };
    // Every accepted scatter is a permutation (`lower::injective`): one the
    // interpreter finds leaving an element unwritten fails here too.
    let gold = match interpret(&a.case, &x, a.n) {
        Ok(g) => g,
        Err(e) => return Err(format!("accepted, but the interpreter says: {e}")),
    };
    let xb = rt.upload("x", &HostArray::F32(padded(&x))).map_err(|e| e.to_string())?;
    let ob = rt.upload("out", &HostArray::F32(padded(&vec![0.0; out_len]))).map_err(|e| e.to_string())?;
    let sizes = BTreeMap::from([("N".to_string(), a.n), ("M".to_string(), ROWS)]);
    let mut args = Vec::new();
    for p in &a.kernel.params {
        args.push(match p {
            KernelParam::Input { .. } => KernelArg::Buffer(&xb),
            KernelParam::Output { .. } => KernelArg::Buffer(&ob),
            KernelParam::Size { name } => KernelArg::Int(sizes[name] as i32),
            KernelParam::Scalar { .. } | KernelParam::Temp { .. } | KernelParam::Local { .. } => {
                return Err("unexpected parameter".into())
            }
        });
    }
    let global = vec![if a.case.kind == "at" { ROWS as usize } else { len }];
    rt.run(&[Launch { program: built, kernel: probe, args, global, local: None }])
        .map_err(|e| e.to_string())?;
    let HostArray::F32(got) = rt.download(&ob).map_err(|e| e.to_string())? else {
        return Err("not floats".into());
    };
    let (before, rest) = got.split_at(PAD);
    let (inside, after) = rest.split_at(out_len);
    if before.iter().chain(after).any(|v| *v != POISON) {
        return Err(format!("N = {}: wrote outside the output", a.n));
    }
    if gold != inside {
        return Err(format!("N = {}: got {inside:?}, the interpreter {gold:?}", a.n));
    }
    if inside.contains(&POISON) {
        return Err(format!("N = {}: read the poisoned padding", a.n));
    }
    Ok(())
}
