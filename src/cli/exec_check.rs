//! What `lift exec` checks before it allocates or launches anything: the
//! sizes fit the program (every divisibility and range fact the type
//! checker derives, with the sizes substituted), every buffer fits the
//! device and 32-bit indices, and the launch sizes are ones OpenCL accepts.

use super::{bad, CliError};
use crate::arith::ArithExpr;
use crate::compile::{Kernel, KernelParam};
use crate::ir::{Def, Expr, ExprKind, FunDecl, FunKind, Pattern, Program, SourceFile};
use crate::passes::typecheck::typecheck_def;
use crate::runtime::DeviceInfo;
use crate::types::Type;
use std::collections::{BTreeMap, HashMap};

/// `ty` with every size variable in `sizes` replaced by its value.
fn subst_type(ty: &Type, m: &HashMap<String, ArithExpr>) -> Type {
    match ty {
        Type::Array(e, n) => Type::array(subst_type(e, m), crate::arith::simplify(&n.substitute(m))),
        Type::Tuple(ts) => Type::Tuple(ts.iter().map(|t| subst_type(t, m)).collect()),
        Type::Scalar(_) | Type::Vector(..) => ty.clone(),
    }
}

fn show(sizes: &BTreeMap<String, i64>) -> String {
    sizes.iter().map(|(k, v)| format!("{k} = {v}")).collect::<Vec<_>>().join(", ")
}

/// Largest element count a kernel can index: indices are C `int`s.
const MAX_ELEMS: i64 = i32::MAX as i64;

/// Every size of `def` is known and positive, fits an `int`, and with the
/// sizes substituted the def still type-checks (a `split(128)` of 1000
/// elements does not) and has no negative or over-long array.
pub(crate) fn sizes_fit(
    file: &SourceFile,
    program: &Program,
    def: &Def,
    sizes: &BTreeMap<String, i64>,
) -> Result<(), CliError> {
    for (k, v) in sizes {
        if *v > MAX_ELEMS {
            return Err(bad(format!(
                "{}: size {k} = {v} exceeds {MAX_ELEMS}: kernels index with 32-bit ints",
                file.name
            )));
        }
    }
    let m: HashMap<String, ArithExpr> = sizes.iter().map(|(k, v)| (k.clone(), ArithExpr::Cst(*v))).collect();
    let mut concrete = def.clone();
    for p in &mut concrete.params {
        p.ty = p.ty.as_ref().map(|t| subst_type(t, &m));
    }
    subst_annotations(&mut concrete.body, &m);
    let at = |span: crate::ir::Span| file.location(span.start);
    let types = typecheck_def(program, &concrete).map_err(|e| {
        bad(format!("{}: error: the sizes do not fit the program ({}): {}", at(e.span), show(sizes), e.msg))
    })?;
    // Lengths that became constants must be usable.
    let mut stack: Vec<&Expr> = vec![&def.body];
    while let Some(e) = stack.pop() {
        if let Some(t) = types.exprs.get(&e.id) {
            for n in t.lengths() {
                if let Ok(c) = n.eval_with(&|v| sizes.get(v).copied()) {
                    if !(0..=MAX_ELEMS).contains(&c) {
                        return Err(bad(format!(
                            "{}: error: the sizes do not fit the program ({}): an array of {c} elements{}",
                            at(e.span),
                            show(sizes),
                            if c < 0 { "" } else { " (more than 32-bit indices reach)" }
                        )));
                    }
                }
            }
        }
        if let ExprKind::Call(f, args) = &e.kind {
            stack.extend(args.iter());
            push_fun(f, &mut stack);
        }
    }
    Ok(())
}

/// Substitutes the sizes in the annotated lambda parameters of `e` (the
/// parameters of inlined defs keep their declared types).
fn subst_annotations(e: &mut Expr, m: &HashMap<String, ArithExpr>) {
    if let ExprKind::Call(f, args) = &mut e.kind {
        for a in args {
            subst_annotations(a, m);
        }
        subst_fun(f, m);
    }
}

fn subst_fun(f: &mut FunDecl, m: &HashMap<String, ArithExpr>) {
    match &mut f.kind {
        FunKind::Lambda(l) => {
            for p in &mut l.params {
                p.ty = p.ty.as_ref().map(|t| subst_type(t, m));
            }
            subst_annotations(&mut l.body, m);
        }
        FunKind::Pattern(p) => subst_pattern(p, m),
        FunKind::UserFun(_) => {}
    }
}

/// Substitutes the sizes in a pattern's parameters (`split(N / 2)`,
/// `generate(N * 4, ...)`) and in its nested function.
fn subst_pattern(p: &mut Pattern, m: &HashMap<String, ArithExpr>) {
    let s = |e: &mut ArithExpr| *e = crate::arith::simplify(&e.substitute(m));
    match p {
        Pattern::Map { f, .. }
        | Pattern::MapVec { f }
        | Pattern::Reduce { f, .. }
        | Pattern::Iterate { f, .. }
        | Pattern::ToGlobal(f)
        | Pattern::ToLocal(f)
        | Pattern::ToPrivate(f) => subst_fun(f, m),
        Pattern::PartRed { f, m: k } => {
            s(k);
            subst_fun(f, m);
        }
        Pattern::Generate { f, len } => {
            s(len);
            subst_fun(f, m);
        }
        Pattern::Split(k) | Pattern::At(k) => s(k),
        Pattern::Gather(g) | Pattern::Scatter(g) => s(&mut g.body),
        Pattern::Slide { size, step } => {
            s(size);
            s(step);
        }
        Pattern::Pad { left, right, .. } | Pattern::PadConst { left, right, .. } => {
            s(left);
            s(right);
        }
        Pattern::Join
        | Pattern::Transpose
        | Pattern::Zip(_)
        | Pattern::Get(_)
        | Pattern::AsVector(_)
        | Pattern::AsScalar
        | Pattern::Filter
        | Pattern::Id => {}
    }
}

fn push_fun<'a>(f: &'a FunDecl, stack: &mut Vec<&'a Expr>) {
    match &f.kind {
        FunKind::Lambda(l) => stack.push(&l.body),
        FunKind::Pattern(p) => {
            if let Some(g) = p.nested_fun() {
                push_fun(g, stack);
            }
        }
        FunKind::UserFun(_) => {}
    }
}

/// Bytes of each buffer `lift exec` will allocate (inputs given, output and
/// temporaries computed), checked against the device before allocating.
pub(crate) fn buffers_fit(
    info: &DeviceInfo,
    k: &Kernel,
    input_bytes: &BTreeMap<String, usize>,
    sizes: &BTreeMap<String, i64>,
) -> Result<(), CliError> {
    let ev =
        |e: &ArithExpr| e.eval_with(&|n| sizes.get(n).copied()).map_err(|err| bad(format!("`{e}`: {err}")));
    let mut all: Vec<(String, i64)> = Vec::new();
    for p in &k.params {
        match p {
            KernelParam::Input { name, .. } => {
                all.push((format!("input `{name}`"), input_bytes.get(name).copied().unwrap_or(0) as i64))
            }
            KernelParam::Output { ty } => all.push(("the output".into(), ev(&ty.size_in_bytes())?)),
            KernelParam::Temp { name, bytes } => all.push((format!("temporary `{name}`"), ev(bytes)?)),
            KernelParam::Scalar { .. } | KernelParam::Size { .. } => {}
        }
    }
    let mut total: i64 = 0;
    for (what, b) in &all {
        if *b < 0 {
            return Err(bad(format!("{what} would have {b} bytes")));
        }
        if *b as u64 > info.max_alloc {
            return Err(bad(format!(
                "{what} needs {b} bytes, more than the device allocates at once ({} bytes, CL_DEVICE_MAX_MEM_ALLOC_SIZE)",
                info.max_alloc
            )));
        }
        total = total.saturating_add(*b);
    }
    if total as u64 > info.global_mem {
        return Err(bad(format!(
            "the buffers need {total} bytes together, more than the device's global memory ({} bytes)",
            info.global_mem
        )));
    }
    Ok(())
}

/// The NDRange to launch: global and local sizes with the same number of
/// dimensions (trailing dimensions dropped only where both are 1), each
/// positive, the local size dividing the global one and within the
/// device's work-group limit.
pub(crate) fn launch_dims(
    info: &DeviceInfo,
    global: [i64; 3],
    local: Option<[i64; 3]>,
) -> Result<(Vec<usize>, Option<Vec<usize>>), CliError> {
    let mut dims = 3;
    while dims > 1 && global[dims - 1] == 1 && local.is_none_or(|l| l[dims - 1] == 1) {
        dims -= 1;
    }
    for (d, g) in global.iter().enumerate().take(dims) {
        if !(1..=MAX_ELEMS).contains(g) {
            return Err(bad(format!("global size {g} in dimension {d}: expected 1 to {MAX_ELEMS}")));
        }
    }
    if let Some(l) = local {
        let mut count: i64 = 1;
        for d in 0..dims {
            if l[d] < 1 {
                return Err(bad(format!("local size {} in dimension {d}: expected a positive size", l[d])));
            }
            if global[d] % l[d] != 0 {
                return Err(bad(format!(
                    "local size {} does not divide global size {} in dimension {d}",
                    l[d], global[d]
                )));
            }
            count = count.saturating_mul(l[d]);
        }
        if count as u64 > info.max_work_group as u64 {
            return Err(bad(format!(
                "local size {:?} has {count} work-items, more than the device's {} (CL_DEVICE_MAX_WORK_GROUP_SIZE)",
                &l[..dims],
                info.max_work_group
            )));
        }
    }
    let g = global[..dims].iter().map(|&x| x as usize).collect();
    Ok((g, local.map(|l| l[..dims].iter().map(|&x| x as usize).collect())))
}
