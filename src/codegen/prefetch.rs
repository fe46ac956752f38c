//! Register prefetch of the tiles a sequential loop copies to local memory
//! (software pipelining, as hand-tuned GPU matrix kernels such as CLBlast's
//! do and the CGO 2017 paper's `mm-nvidia` reference does by hand).
//!
//! A tiled loop (`reduceSeq` over chunks whose tiles are copied by
//! `toLocal(mapLcl(...))`) is lowered as
//!
//! ```text
//! for (i = 0; i < n; i += 1) { COPY(i): local[..] = global[..(i)..]; barrier; REST }
//! ```
//!
//! where each work-item waits for its global loads before it can store
//! them, so the loads' latency is exposed once per chunk. This pass turns
//! it into
//!
//! ```text
//! T pf_0; ...                 // one register per value a work-item copies
//! pf_k = global[..(0)..];     // prologue: chunk 0's values
//! for (i = 0; i < n; i += 1) {
//!   local[..] = pf_k; barrier;               // the copy, from registers
//!   pf_k = global[..(min(i + 1, n - 1))..];  // next chunk's loads
//!   REST                                     // computed while they fly
//! }
//! ```
//!
//! The last iteration loads the last chunk again where the rest of the
//! body holds a loop, and branches around the loads (`if (i + 1 < n)`,
//! `i + 1` in the indices) where it is straight-line code. Each form lost
//! on the other kind of body on the H100: N-Body (NVIDIA), whose body walks
//! the tile in a loop, took 0.78 ms with the branch, 0.49 ms without
//! prefetch and 0.37 ms clamped; the tiled product (its chunk unrolled)
//! 0.075 ms clamped, 0.105 ms without prefetch and 0.056 ms with the
//! branch (hand-edited kernels of `lift compile`, one device command).
//!
//! It is exact because only *when* the loads happen changes: they read
//! buffers no kernel writes (`const global` inputs), at indices and under
//! guards that depend on the loop index and on values the loop never
//! assigns, so chunk `i + 1`'s values read one iteration early are the
//! values the original loop reads. The local stores stay where they were,
//! behind the barriers the lowering placed. The copies' own thread loops
//! (`for (l = get_local_id(d); l < B; l += S)`, constant `B` and `S`) are
//! unrolled, so each value a work-item copies has its own register.
//! Anything else (a copy reading local or private memory, a loop index in
//! raw C text, a thread loop of unknown trip count, more than
//! [`MAX_REGISTERS`] values) leaves the loop as it is.

use crate::arith::{ArithExpr, Var};
use crate::ir::c::{AssignOp, BinOp, CExpr, Stmt};
use crate::types::{type_from_c_name, Type};
use std::collections::{HashMap, HashSet};

/// Values a work-item prefetches per loop at most: more would spill
/// registers, which costs more than the latency it hides.
const MAX_REGISTERS: usize = 32;

/// The prefix of the registers' names (the lowering's names never start so).
const PREFIX: &str = "pf_";

/// Prefetches the copies of every loop of `body` that qualifies (see the
/// module documentation). `readonly`: the kernel's `const global` buffers.
pub fn pipeline_copies(body: &mut Vec<Stmt>, readonly: &HashSet<String>) {
    let mut locals = HashMap::new();
    let mut arrays = HashSet::new();
    collect_arrays(body, &mut locals, &mut arrays);
    let cx = Cx { readonly, locals, arrays };
    let mut next = 0;
    walk(body, &cx, &mut next);
}

struct Cx<'a> {
    readonly: &'a HashSet<String>,
    /// Local arrays and their element types.
    locals: HashMap<String, Type>,
    /// Every array the kernel declares (local or private).
    arrays: HashSet<String>,
}

fn collect_arrays(stmts: &[Stmt], locals: &mut HashMap<String, Type>, arrays: &mut HashSet<String>) {
    for s in stmts {
        match s {
            Stmt::Decl { qualifier, ty, name, len: Some(_), .. } => {
                arrays.insert(name.clone());
                if *qualifier == Some("local") {
                    locals.insert(name.clone(), ty.clone());
                }
            }
            Stmt::CountedFor { body, .. } | Stmt::Block(body) => collect_arrays(body, locals, arrays),
            Stmt::If { then, otherwise, .. } => {
                collect_arrays(then, locals, arrays);
                collect_arrays(otherwise, locals, arrays);
            }
            Stmt::Decl { .. }
            | Stmt::Assign { .. }
            | Stmt::Expr(_)
            | Stmt::Barrier { .. }
            | Stmt::Comment(_) => {}
            Stmt::For { .. } | Stmt::Return(_) => s.user_only(),
        }
    }
}

fn walk(stmts: &mut Vec<Stmt>, cx: &Cx<'_>, next: &mut usize) {
    let mut i = 0;
    while i < stmts.len() {
        match &mut stmts[i] {
            Stmt::CountedFor { body, .. } | Stmt::Block(body) => walk(body, cx, next),
            Stmt::If { then, otherwise, .. } => {
                walk(then, cx, next);
                walk(otherwise, cx, next);
            }
            Stmt::Decl { .. }
            | Stmt::Assign { .. }
            | Stmt::Expr(_)
            | Stmt::Barrier { .. }
            | Stmt::Comment(_) => {}
            s @ (Stmt::For { .. } | Stmt::Return(_)) => s.user_only(),
        }
        match pipelined(&stmts[i], cx, next) {
            Some(new) => {
                let n = new.len();
                stmts.splice(i..i + 1, new);
                i += n;
            }
            None => i += 1,
        }
    }
}

/// A sequential loop whose body starts with copies to local memory.
struct Loop<'s> {
    var: &'s str,
    init: i64,
    /// The index's last value, `n - 1`.
    last: ArithExpr,
    bound: &'s CExpr,
    /// The copies (and the barriers among and after them).
    copies: &'s [Stmt],
    rest: &'s [Stmt],
}

/// The statements replacing `s`, if it is a loop to pipeline.
fn pipelined(s: &Stmt, cx: &Cx<'_>, next: &mut usize) -> Option<Vec<Stmt>> {
    let Stmt::CountedFor { var, init, bound, step, body } = s else { return None };
    let (init, step) = (raw_int(init)?, raw_int(step)?);
    // Steps of one, to a bound the clamp can name (`n - 1`).
    let CExpr::Arith(last) = bound else { return None };
    if step != 1 {
        return None;
    }
    let last = ArithExpr::add(last.clone(), ArithExpr::Cst(-1));
    let n = body.iter().take_while(|s| matches!(s, Stmt::Barrier { .. }) || copy_shape(s, cx)).count();
    let lp = Loop { var, init, last, bound, copies: &body[..n], rest: &body[n..] };
    let mut types = Vec::new();
    if n == 0 || !leaf_types(lp.copies, cx, &mut types) || types.is_empty() || types.len() > MAX_REGISTERS {
        return None;
    }
    if !invariant(&lp, cx) {
        return None;
    }
    let loop_var = find_var(lp.copies, var)?;
    let regs: Vec<String> = (0..types.len()).map(|k| format!("{PREFIX}{}", *next + k)).collect();
    *next += types.len();
    Some(rewrite(&lp, &loop_var, &types, &regs))
}

fn raw_int(e: &CExpr) -> Option<i64> {
    match e {
        CExpr::Raw(t) => t.trim().parse().ok(),
        CExpr::Arith(ArithExpr::Cst(c)) => Some(*c),
        _ => None,
    }
}

/// Whether `s` has the form of a copy: blocks, thread-index declarations,
/// thread loops of constant trip count, guards, and stores to local arrays.
fn copy_shape(s: &Stmt, cx: &Cx<'_>) -> bool {
    match s {
        Stmt::Block(b) => !b.is_empty() && b.iter().all(|s| copy_shape(s, cx)),
        Stmt::Decl { qualifier: None, ty, pointer: false, len: None, init: Some(_), .. } => *ty == Type::INT,
        Stmt::CountedFor { .. } => {
            thread_loop(s).is_some_and(|(_, _, _, _, body)| body.iter().all(|s| copy_shape(s, cx)))
        }
        Stmt::If { then, otherwise, .. } => otherwise.is_empty() && then.iter().all(|s| copy_shape(s, cx)),
        Stmt::Assign { target, op: AssignOp::Set, .. } => local_store(target, cx).is_some(),
        Stmt::Barrier { .. } | Stmt::Comment(_) => true,
        Stmt::Decl { .. } | Stmt::Assign { .. } | Stmt::Expr(_) => false,
        Stmt::For { .. } | Stmt::Return(_) => s.user_only(),
    }
}

/// `for (int v = get_local_id(d); v < B; v += S)` with constants `B`, `S`:
/// its variable, start text, `B`, `S` and body.
fn thread_loop(s: &Stmt) -> Option<(&str, &str, i64, i64, &[Stmt])> {
    let Stmt::CountedFor { var, init: CExpr::Raw(start), bound, step, body } = s else { return None };
    let (bound, step) = (raw_int(bound)?, raw_int(step)?);
    (start.starts_with("get_local_id(") && bound > 0 && step > 0).then_some((var, start, bound, step, body))
}

/// The local array a store writes and the C type of the value stored:
/// `loc[i]` (the array's element type) or `((local T*)loc)[i]` (`T`).
fn local_store(lhs: &CExpr, cx: &Cx<'_>) -> Option<Type> {
    let CExpr::Index(base, _) = lhs else { return None };
    let (cast, name) = split_base(base);
    let elem = cx.locals.get(name)?;
    match cast {
        None => Some(elem.clone()),
        Some(ty) => type_from_c_name(ty.trim_end_matches('*').split_whitespace().last()?),
    }
}

/// `((q T*)name)` as `(Some("q T*"), name)`; a plain name as `(None, name)`.
fn split_base(base: &str) -> (Option<&str>, &str) {
    if let Some(inner) = base.strip_prefix("((").and_then(|b| b.strip_suffix(')')) {
        if let Some((ty, name)) = inner.split_once(')') {
            return (Some(ty), name);
        }
    }
    (None, base)
}

/// The stored values' C types, in the order [`rewrite`] numbers them (the
/// thread loops unrolled); `false` if a loop would unroll past the limit.
fn leaf_types(stmts: &[Stmt], cx: &Cx<'_>, out: &mut Vec<Type>) -> bool {
    stmts.iter().all(|s| match s {
        Stmt::Block(b) => leaf_types(b, cx, out),
        Stmt::If { then, .. } => leaf_types(then, cx, out),
        Stmt::CountedFor { .. } => {
            let Some((_, _, bound, step, body)) = thread_loop(s) else { return false };
            let trips = (bound + step - 1) / step;
            (0..trips).all(|_| out.len() <= MAX_REGISTERS && leaf_types(body, cx, out))
        }
        Stmt::Assign { target, .. } => match local_store(target, cx) {
            Some(t) => {
                out.push(t);
                true
            }
            None => false,
        },
        Stmt::Decl { .. } | Stmt::Expr(_) | Stmt::Barrier { .. } | Stmt::Comment(_) => true,
        Stmt::For { .. } | Stmt::Return(_) => s.user_only(),
    })
}

/// Whether the copies' loads, indices and guards depend only on the loop
/// index, their own thread indices and values the loop never assigns, and
/// read only `const global` buffers.
fn invariant(lp: &Loop<'_>, cx: &Cx<'_>) -> bool {
    let mut own = HashSet::new();
    declared(lp.copies, &mut own);
    let mut assigned = HashSet::new();
    declared(lp.rest, &mut assigned);
    assigned_names(lp.rest, &mut assigned);
    let ok = |n: &str| {
        n == lp.var
            || own.contains(n)
            || (!assigned.contains(n) && !cx.arrays.contains(n) && !n.starts_with(PREFIX))
    };
    // The loop index only as an index variable: it is substituted there.
    !super::lower::names_outside_indices(lp.copies, lp.var) && copies_pure(lp.copies, cx, &ok)
}

fn declared(stmts: &[Stmt], out: &mut HashSet<String>) {
    for s in stmts {
        match s {
            Stmt::Decl { name, .. } => {
                out.insert(name.clone());
            }
            Stmt::CountedFor { var, body, .. } => {
                out.insert(var.clone());
                declared(body, out);
            }
            Stmt::Block(b) => declared(b, out),
            Stmt::If { then, otherwise, .. } => {
                declared(then, out);
                declared(otherwise, out);
            }
            Stmt::Assign { .. } | Stmt::Expr(_) | Stmt::Barrier { .. } | Stmt::Comment(_) => {}
            Stmt::For { .. } | Stmt::Return(_) => s.user_only(),
        }
    }
}

fn assigned_names(stmts: &[Stmt], out: &mut HashSet<String>) {
    for s in stmts {
        match s {
            Stmt::Assign { target, .. } => {
                if let Some(n) = root_name(target) {
                    out.insert(n);
                }
            }
            Stmt::CountedFor { body, .. } | Stmt::Block(body) => assigned_names(body, out),
            Stmt::If { then, otherwise, .. } => {
                assigned_names(then, out);
                assigned_names(otherwise, out);
            }
            // A call statement (vstore) writes through its last argument.
            Stmt::Expr(CExpr::Call(_, args)) => {
                if let Some(n) = args.last().and_then(root_name) {
                    out.insert(n);
                }
            }
            Stmt::Expr(_) | Stmt::Decl { .. } | Stmt::Barrier { .. } | Stmt::Comment(_) => {}
            Stmt::For { .. } | Stmt::Return(_) => s.user_only(),
        }
    }
}

fn root_name(e: &CExpr) -> Option<String> {
    match e {
        CExpr::Raw(t) => Some(t.trim_start_matches('&').to_string()),
        CExpr::Index(base, _) => Some(split_base(base).1.to_string()),
        CExpr::Field(base, _) => root_name(base),
        _ => None,
    }
}

fn copies_pure(stmts: &[Stmt], cx: &Cx<'_>, ok: &dyn Fn(&str) -> bool) -> bool {
    stmts.iter().all(|s| match s {
        Stmt::Block(b) => copies_pure(b, cx, ok),
        Stmt::Decl { init, .. } => init.as_ref().is_none_or(|e| pure(e, cx, ok)),
        Stmt::CountedFor { body, .. } => copies_pure(body, cx, ok),
        Stmt::If { cond, then, .. } => pure(cond, cx, ok) && copies_pure(then, cx, ok),
        Stmt::Assign { target: CExpr::Index(_, index), value, .. } => {
            arith_ok(index, ok) && pure(value, cx, ok)
        }
        Stmt::Barrier { .. } | Stmt::Comment(_) => true,
        Stmt::Assign { .. } | Stmt::Expr(_) => false,
        Stmt::For { .. } | Stmt::Return(_) => s.user_only(),
    })
}

fn arith_ok(a: &ArithExpr, ok: &dyn Fn(&str) -> bool) -> bool {
    let mut good = true;
    a.visit_vars(&mut |v| good &= is_ident(&v.name) && ok(&v.name));
    good
}

fn is_ident(t: &str) -> bool {
    !t.is_empty() && t.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Whether an expression reads only `const global` buffers and names
/// that `ok` accepts (function names and literals aside).
fn pure(e: &CExpr, cx: &Cx<'_>, ok: &dyn Fn(&str) -> bool) -> bool {
    match e {
        CExpr::Raw(t) | CExpr::Var(t) => raw_ok(t, ok),
        CExpr::Int(_) | CExpr::Float(_) | CExpr::Double(_) => true,
        CExpr::Arith(a) => arith_ok(a, ok),
        CExpr::Index(base, index) => cx.readonly.contains(split_base(base).1) && arith_ok(index, ok),
        CExpr::Call(name, args) => !name.starts_with("vstore") && args.iter().all(|a| pure(a, cx, ok)),
        CExpr::Field(base, _) => pure(base, cx, ok),
        CExpr::Ternary(cond, then, otherwise) => {
            pure(cond, cx, ok) && pure(then, cx, ok) && pure(otherwise, cx, ok)
        }
        CExpr::Binary(_, lhs, rhs) => pure(lhs, cx, ok) && pure(rhs, cx, ok),
        CExpr::Cast(_, e) | CExpr::Unary(_, e) => pure(e, cx, ok),
        CExpr::TupleLit(_, fields) | CExpr::VectorLit(_, fields) => fields.iter().all(|f| pure(f, cx, ok)),
    }
}

/// Raw C text: each word is a number, a called function, or a name `ok`
/// accepts.
fn raw_ok(t: &str, ok: &dyn Fn(&str) -> bool) -> bool {
    let bytes = t.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i] as char;
        if c.is_ascii_alphanumeric() || c == '_' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            let word = &t[start..i];
            let called = t[i..].trim_start().starts_with('(');
            if !(word.as_bytes()[0].is_ascii_digit() || called || ok(word)) {
                return false;
            }
        } else {
            i += 1;
        }
    }
    true
}

/// The loop index as an index variable of the copies (with its range).
fn find_var(stmts: &[Stmt], name: &str) -> Option<Var> {
    let mut found = None;
    let mut look = |a: &ArithExpr| {
        a.visit_vars(&mut |v| {
            if v.name == name && found.is_none() {
                found = Some(v.clone());
            }
        })
    };
    visit_arith(stmts, &mut look);
    found
}

fn visit_arith(stmts: &[Stmt], f: &mut dyn FnMut(&ArithExpr)) {
    fn expr(e: &CExpr, f: &mut dyn FnMut(&ArithExpr)) {
        e.walk(&mut |x| {
            if let CExpr::Arith(a) | CExpr::Index(_, a) = x {
                f(a)
            }
        })
    }
    for s in stmts {
        match s {
            Stmt::Assign { target, value, .. } => {
                expr(target, f);
                expr(value, f);
            }
            Stmt::Decl { init: Some(e), .. } | Stmt::Expr(e) => expr(e, f),
            Stmt::If { cond, then, .. } => {
                expr(cond, f);
                visit_arith(then, f);
            }
            Stmt::CountedFor { body, .. } | Stmt::Block(body) => visit_arith(body, f),
            Stmt::Decl { .. } | Stmt::Barrier { .. } | Stmt::Comment(_) => {}
            Stmt::For { .. } | Stmt::Return(_) => s.user_only(),
        }
    }
}

/// Which half of a copy to emit.
#[derive(Clone, Copy)]
enum Half {
    /// `register = load` (no barriers).
    Load,
    /// `local store = register` (barriers kept).
    Store,
}

/// The copies split into their loads and stores, thread loops unrolled;
/// registers numbered in order from `*k`.
fn split(stmts: &[Stmt], half: Half, regs: &[String], k: &mut usize) -> Vec<Stmt> {
    let mut out = Vec::new();
    for s in stmts {
        match s {
            Stmt::Block(b) => out.push(Stmt::Block(split(b, half, regs, k))),
            Stmt::If { cond, then, otherwise } => out.push(Stmt::If {
                cond: cond.clone(),
                then: split(then, half, regs, k),
                otherwise: otherwise.clone(),
            }),
            Stmt::CountedFor { .. } => {
                // Checked by `copy_shape`.
                let Some((var, start, bound, step, body)) = thread_loop(s) else { continue };
                for t in 0..(bound + step - 1) / step {
                    let decl = Stmt::Decl {
                        qualifier: None,
                        ty: Type::INT,
                        pointer: false,
                        name: var.to_string(),
                        len: None,
                        init: Some(CExpr::raw(if t == 0 {
                            start.to_string()
                        } else {
                            format!("{start} + {}", t * step)
                        })),
                    };
                    let inner = split(body, half, regs, k);
                    // Every work-item's `t`-th element exists when `S`
                    // divides `B`; else the last ones are guarded.
                    let guarded = if bound % step == 0 {
                        inner
                    } else {
                        let cond =
                            CExpr::binary(BinOp::Lt, CExpr::raw(var), CExpr::Arith(ArithExpr::Cst(bound)));
                        vec![Stmt::If { cond, then: inner, otherwise: Vec::new() }]
                    };
                    let mut b = vec![decl];
                    b.extend(guarded);
                    out.push(Stmt::Block(b));
                }
            }
            Stmt::Assign { target, value, .. } => {
                let reg = CExpr::raw(regs[*k].clone());
                *k += 1;
                out.push(match half {
                    Half::Load => Stmt::set(reg, value.clone()),
                    Half::Store => Stmt::set(target.clone(), reg),
                });
            }
            Stmt::Barrier { .. } => {
                if matches!(half, Half::Store) {
                    out.push(s.clone());
                }
            }
            Stmt::Decl { .. } | Stmt::Expr(_) | Stmt::Comment(_) => out.push(s.clone()),
            Stmt::For { .. } | Stmt::Return(_) => s.user_only(),
        }
    }
    out
}

fn has_loop(stmts: &[Stmt]) -> bool {
    stmts.iter().any(|s| match s {
        Stmt::CountedFor { .. } => true,
        Stmt::Block(b) => has_loop(b),
        Stmt::If { then, otherwise, .. } => has_loop(then) || has_loop(otherwise),
        Stmt::Decl { .. } | Stmt::Assign { .. } | Stmt::Expr(_) | Stmt::Barrier { .. } | Stmt::Comment(_) => {
            false
        }
        Stmt::For { .. } | Stmt::Return(_) => s.user_only(),
    })
}

/// The registers, the prologue and the pipelined loop.
fn rewrite(lp: &Loop<'_>, var: &Var, types: &[Type], regs: &[String]) -> Vec<Stmt> {
    let at = |value: ArithExpr| {
        let map: HashMap<String, ArithExpr> = [(var.name.clone(), value)].into();
        // Sound: the loop index keeps its range where the copy runs.
        move |a: &ArithExpr| crate::arith::simplify(&a.substitute(&map))
    };
    let loads = |value: ArithExpr| {
        let mut k = 0;
        let stmts = split(lp.copies, Half::Load, regs, &mut k);
        super::lower::instantiate(&stmts, &at(value))
    };
    let mut out: Vec<Stmt> = types
        .iter()
        .zip(regs)
        .map(|(t, r)| Stmt::Decl {
            qualifier: None,
            ty: t.clone(),
            pointer: false,
            name: r.clone(),
            len: None,
            init: None,
        })
        .collect();
    // A loop of no iterations reads nothing: nor does its prologue.
    let prologue = loads(ArithExpr::Cst(lp.init));
    match raw_int(lp.bound) {
        Some(n) if n > lp.init => out.push(Stmt::Block(prologue)),
        _ => {
            let first = CExpr::binary(BinOp::Lt, CExpr::Arith(ArithExpr::Cst(lp.init)), lp.bound.clone());
            out.push(Stmt::If { cond: first, then: prologue, otherwise: Vec::new() });
        }
    }
    let next = ArithExpr::add(ArithExpr::Var(var.clone()), ArithExpr::Cst(1));
    let mut k = 0;
    let mut body = split(lp.copies, Half::Store, regs, &mut k);
    if has_loop(lp.rest) {
        body.push(Stmt::Block(loads(ArithExpr::min(next, lp.last.clone()))));
    } else {
        let more = CExpr::binary(BinOp::Lt, CExpr::Arith(next.clone()), lp.bound.clone());
        body.push(Stmt::If { cond: more, then: loads(next), otherwise: Vec::new() });
    }
    body.extend(lp.rest.iter().cloned());
    out.push(Stmt::CountedFor {
        var: lp.var.to_string(),
        init: CExpr::raw(lp.init.to_string()),
        bound: lp.bound.clone(),
        step: CExpr::raw("1"),
        body,
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arith::{Range, VarKind};

    fn var(name: &str, hi: i64) -> ArithExpr {
        ArithExpr::Var(Var {
            name: name.into(),
            kind: VarKind::Index,
            range: Range::new(ArithExpr::Cst(0), ArithExpr::Cst(hi)),
        })
    }

    /// `for (i = 0; i < 8; i++) { for (l = lid0; l < B; l += 16) loc[l] =
    /// SRC[32 i + l]; barrier; out[..] = loc[..] }`.
    fn tiled_loop(src: &str, bound: i64) -> Vec<Stmt> {
        let i = var("i_0", 8);
        let l = var("l_id_0", bound);
        let copy = Stmt::CountedFor {
            var: "l_id_0".into(),
            init: CExpr::raw("get_local_id(0)"),
            bound: CExpr::Arith(ArithExpr::Cst(bound)),
            step: CExpr::raw("16"),
            body: vec![Stmt::set(
                CExpr::Index("loc_0".into(), l.clone()),
                CExpr::Index(src.into(), ArithExpr::add(ArithExpr::mul(ArithExpr::Cst(32), i.clone()), l)),
            )],
        };
        let use_it =
            Stmt::set(CExpr::Index("out".into(), i), CExpr::Index("loc_0".into(), ArithExpr::Cst(0)));
        let decl = Stmt::Decl {
            qualifier: Some("local"),
            ty: Type::FLOAT,
            pointer: false,
            name: "loc_0".into(),
            len: Some(ArithExpr::Cst(32)),
            init: None,
        };
        vec![
            decl,
            Stmt::CountedFor {
                var: "i_0".into(),
                init: CExpr::raw("0"),
                bound: CExpr::Arith(ArithExpr::Cst(8)),
                step: CExpr::raw("1"),
                body: vec![copy, Stmt::Barrier { local: true, global: false }, use_it],
            },
        ]
    }

    fn text(stmts: &[Stmt]) -> String {
        let module = crate::ir::c::kernel::Module {
            preamble: Vec::new(),
            kernel_name: "k".into(),
            work_group_size: None,
            params: Vec::new(),
            body: stmts.to_vec(),
        };
        let mut s = String::new();
        crate::ir::c::print::Writer::new(&mut s).module(&module).unwrap();
        s
    }

    #[test]
    fn copies_from_an_input_load_the_next_chunk_into_registers() {
        let mut body = tiled_loop("x", 32);
        pipeline_copies(&mut body, &["x".to_string()].into());
        let t = text(&body);
        // Two values per work-item (32 over 16), chunk 0 before the loop,
        // chunk i + 1 after the barrier (the rest of the body is
        // straight-line: under a branch), the stores from the registers.
        assert!(t.contains("float pf_0;") && t.contains("float pf_1;") && !t.contains("pf_2"), "{t}");
        assert!(t.contains("pf_0 = x[l_id_0];"), "{t}");
        assert!(t.contains("if ((i_0 + 1) < 8) {"), "{t}");
        assert!(t.contains("pf_1 = x[32 * i_0 + l_id_0 + 32];"), "{t}");
        assert!(t.contains("loc_0[l_id_0] = pf_0;"), "{t}");
        let (store, next) = (t.find("loc_0[l_id_0] = pf_1;").unwrap(), t.find("if ((i_0 + 1) < 8)").unwrap());
        let barrier = t.find("barrier(CLK_LOCAL_MEM_FENCE)").unwrap();
        assert!(store < barrier && barrier < next, "{t}");
    }

    #[test]
    fn a_body_with_a_loop_loads_the_last_chunk_again_instead_of_branching() {
        let mut body = tiled_loop("x", 32);
        let Stmt::CountedFor { body: inner, .. } = &mut body[1] else { unreachable!() };
        let walk = Stmt::CountedFor {
            var: "i_1".into(),
            init: CExpr::raw("0"),
            bound: CExpr::Arith(ArithExpr::Cst(4)),
            step: CExpr::raw("1"),
            body: vec![inner[2].clone()],
        };
        inner[2] = walk;
        pipeline_copies(&mut body, &["x".to_string()].into());
        let t = text(&body);
        assert!(t.contains("pf_1 = x[l_id_0 + 32 * min(7, i_0 + 1)];"), "{t}");
        assert!(!t.contains("if ((i_0 + 1)"), "{t}");
    }

    #[test]
    fn a_copy_of_a_written_buffer_is_left_as_it_is() {
        // `y` is not a `const global` input: another work-group may write it.
        let mut body = tiled_loop("y", 32);
        let before = body.clone();
        pipeline_copies(&mut body, &["x".to_string()].into());
        assert_eq!(body, before);
    }

    #[test]
    fn a_trip_count_the_work_group_does_not_divide_is_guarded() {
        // 40 values over 16 work-items: 3 per work-item, the third guarded.
        let mut body = tiled_loop("x", 40);
        pipeline_copies(&mut body, &["x".to_string()].into());
        let t = text(&body);
        assert!(t.contains("pf_2") && !t.contains("pf_3"), "{t}");
        assert!(t.contains("int l_id_0 = get_local_id(0) + 32;"), "{t}");
        assert!(t.contains("if (l_id_0 < 40) {"), "{t}");
    }
}
