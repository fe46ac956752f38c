//! The compiler's entry point: from a parsed program and a `def` name to an
//! OpenCL kernel with its parameter list and launch sizes.

use crate::arith::ArithExpr;
pub use crate::codegen::{CompileError, CompileOptions, Unsupported};

use crate::codegen::{c_type, ctypes, lower};
use crate::ir::c::kernel;
use crate::ir::c::print;
use crate::ir::Program;
use crate::passes::{self, AddressSpace};
use crate::types::Type;
use crate::view::{MemKind, Memory, View};
use std::rc::Rc;

/// What a kernel parameter is bound to, in the order of the kernel's
/// parameter list.
#[derive(Clone, Debug, PartialEq)]
pub enum KernelParam {
    /// An array parameter of the `def`: `const global T* restrict name`.
    Input { name: String, ty: Type },
    /// A scalar parameter of the `def` (`alpha: float`), passed by value.
    Scalar { name: String, ty: Type },
    /// The result buffer, `global T* restrict out`; it must not alias an input.
    Output { ty: Type },
    /// A global temporary buffer the kernel needs, of `bytes` bytes.
    Temp { name: String, bytes: ArithExpr },
    /// Local memory of `bytes` bytes whose length the sizes give (`local
    /// T* restrict name`): set at launch, none of it passed from the host.
    Local { name: String, bytes: ArithExpr },
    /// One `int` per size variable.
    Size { name: String },
}

/// A compiled kernel.
#[derive(Clone, Debug)]
pub struct Kernel {
    pub name: String,
    /// The complete OpenCL C source.
    pub source: String,
    pub params: Vec<KernelParam>,
    /// Global size per dimension, as expressions of the sizes.
    pub global: [ArithExpr; 3],
    /// Local size per dimension; `None` leaves it to the OpenCL driver.
    pub local: Option<[ArithExpr; 3]>,
    pub output_type: Type,
    /// Its global reads and writes (`codegen::coalescing`), for the
    /// search's ordering.
    pub accesses: Vec<crate::codegen::coalescing::GlobalAccess>,
    /// Bytes of its `local` arrays of constant length; the local arguments
    /// (`KernelParam::Local`) come on top at launch.
    pub static_local_bytes: u64,
    /// Whether `global` is rounded up to whole work-groups of `local`
    /// (`CompileOptions::whole_groups`): a multiple of it at every size.
    pub whole_groups: bool,
}

/// `def` compiled with `opts`, or, where its global size is not a multiple
/// of the local size `opts` fixes at `sizes`, the sizes it will run at
/// (9,999,991 elements, work-groups of 256), compiled again launching
/// whole work-groups (`CompileOptions::whole_groups`). `lift exec`, the
/// search and the harness compile through this, so the kernel the harness
/// runs is the one the search timed.
pub fn compile_for_launch(
    program: &Program,
    def: &str,
    opts: &CompileOptions,
    sizes: &std::collections::BTreeMap<String, i64>,
) -> Result<Kernel, CompileError> {
    let k = compile(program, def, opts)?;
    let Some(local) = &k.local else { return Ok(k) };
    let at = |e: &ArithExpr| e.eval_with(&|v| sizes.get(v).copied()).ok();
    // Unknown at these sizes: nothing to round (the launch reports it).
    let whole = k.global.iter().zip(local).all(|(g, l)| match (at(g), at(l)) {
        (Some(g), Some(l)) => l <= 0 || g % l == 0,
        _ => true,
    });
    if whole || opts.global.is_some() || opts.local.is_none() || opts.whole_groups {
        return Ok(k);
    }
    compile(program, def, &CompileOptions { whole_groups: true, ..opts.clone() })
}

/// The inferred global size rounded up to a multiple of a local size the
/// caller gave, dimension by dimension (`CompileOptions::whole_groups`:
/// OpenCL 1.2 launches only whole work-groups): 9,999,991 elements in
/// work-groups of 256 launch 9,999,872 + 256 work-items. Lowering reads
/// this count, not the inferred one, so a map's loop keeps its bound check
/// wherever the count may exceed the length (`codegen::lower::loops`): the
/// extra work-items do nothing. Where the sizes are known and the count
/// divides, it is the inferred count.
fn rounded_up(global: [ArithExpr; 3], local: [i64; 3]) -> [ArithExpr; 3] {
    let mut out = global;
    for (g, l) in out.iter_mut().zip(local) {
        if l > 1 {
            let up = ArithExpr::add(g.clone(), ArithExpr::Cst(l - 1));
            *g = crate::arith::simplify(&ArithExpr::mul(
                ArithExpr::div(up, ArithExpr::Cst(l)),
                ArithExpr::Cst(l),
            ));
        }
    }
    out
}

/// The global and local sizes a kernel is compiled for: those `opts`
/// gives, else the inferred ones.
fn launch_sizes(
    inferred: passes::launch::Launch,
    opts: &CompileOptions,
) -> ([ArithExpr; 3], Option<[ArithExpr; 3]>) {
    let cst = |a: [i64; 3]| a.map(ArithExpr::Cst);
    let mut global = match (opts.global, opts.local) {
        (Some(g), _) => cst(g),
        (None, Some(l)) if opts.whole_groups => rounded_up(inferred.global, l),
        (None, _) => inferred.global,
    };
    // A dimension only `mapLcl`s name is one work-group of the local size.
    if let (None, Some(l)) = (opts.global, opts.local) {
        for d in (0..3).filter(|&d| inferred.one_group[d]) {
            global[d] = ArithExpr::Cst(l[d]);
        }
    }
    let local = match opts.local {
        Some(l) => Some(cst(l)),
        None => inferred.local,
    };
    (global, local)
}

/// Compiles `def` of `program` to an OpenCL kernel.
///
/// Stages, in order: type inference, address-space inference, barrier
/// elimination analysis, launch-size inference, lowering (memory
/// allocation, views, control-flow simplification), printing.
pub fn compile(program: &Program, def: &str, opts: &CompileOptions) -> Result<Kernel, CompileError> {
    let d = program.def(def).ok_or_else(|| CompileError::NoSuchDef(def.to_string()))?;
    if !opts.sizes.is_empty() {
        // Known sizes fit the def as `lift exec` checks them: each fits an
        // `int`, and so does every array at these sizes.
        passes::sizes_fit::sizes_fit(program, d, &opts.sizes)
            .map_err(|e| CompileError::Sizes { span: e.span.unwrap_or(d.span), source: e })?;
    }
    let types = passes::typecheck::typecheck_def(program, d)?;
    passes::wellformed::check(d)?;
    let spaces = passes::address_space::infer(d, &types);
    let no_barrier = if opts.barrier_elim { passes::barrier::eliminable(d) } else { Default::default() };
    let (global, local) = launch_sizes(passes::launch::infer(d, &types), opts);

    let mut sig = Signature::default();
    sig.inputs(d, &types)?;
    let out_view = sig.output(d, &types)?;
    let out_ty = types.of(&d.body).clone();

    // The def's array parameters: `const restrict` buffers no kernel
    // writes, whose reads the prefetch may move.
    let readonly = sig
        .kparams
        .iter()
        .filter_map(|p| match p {
            KernelParam::Input { name, .. } => Some(name.clone()),
            KernelParam::Scalar { .. }
            | KernelParam::Output { .. }
            | KernelParam::Temp { .. }
            | KernelParam::Local { .. }
            | KernelParam::Size { .. } => None,
        })
        .collect();
    let lower_with = |pads: &std::collections::BTreeMap<String, i64>| {
        let inputs = lower::Inputs {
            program,
            types: &types,
            spaces: &spaces,
            no_barrier: &no_barrier,
            opts,
            pads,
            global: global.clone(),
            local: local.clone(),
        };
        let mut lowered = lower::lower(inputs, &sig.views, &d.body, out_view.clone())?;
        if opts.prefetch {
            crate::codegen::prefetch::pipeline_copies(&mut lowered.body, &readonly);
        }
        Ok::<_, CompileError>(lowered)
    };
    let mut lowered = lower_with(&Default::default())?;
    if opts.pad_local {
        // Lowered again where local arrays conflict on their banks: the
        // same kernel with longer rows in those arrays.
        let pads = crate::codegen::banks::pads(&lowered.body, &lowered.locals);
        if !pads.is_empty() {
            let first = std::mem::take(&mut lowered.locals);
            lowered = lower_with(&pads)?;
            // The pads fit the first lowering's vector widths: the second
            // must use the same (it differs only in the arrays' rows).
            for name in pads.keys() {
                if lowered.locals.get(name).map(|l| &l.widths) != first.get(name).map(|l| &l.widths) {
                    return Err(CompileError::Internal(format!(
                        "padding local array `{name}` changed the vector widths it is accessed with"
                    )));
                }
            }
        }
    }
    temp_params(&mut sig, &lowered.temps);
    for s in size_names(d, &types) {
        sig.cparams.push(kernel::Param { ty: "int".into(), name: s.clone() });
        sig.kparams.push(KernelParam::Size { name: s });
    }

    let preamble = preamble(program, &lowered);
    let body = lowered.body;
    let static_local_bytes = static_local_bytes(&body);
    let name = format!("lift_{}", d.name);
    let module = kernel::Module {
        preamble,
        kernel_name: name.clone(),
        work_group_size: local.as_ref().and_then(|l| match l {
            [ArithExpr::Cst(x), ArithExpr::Cst(y), ArithExpr::Cst(z)] => Some([*x, *y, *z]),
            _ => None,
        }),
        params: sig.cparams,
        body,
    };
    let accesses = crate::codegen::coalescing::global_accesses(&module);
    let mut source = String::new();
    print::Writer::new(&mut source)
        .module(&module)
        .map_err(|e| CompileError::Internal(format!("printing failed: {e}")))?;
    if source.contains("lift_pow(") || source.contains("lift_log2(") {
        source = format!("{INDEX_HELPERS}{source}");
    }
    Ok(Kernel {
        name,
        source,
        params: sig.kparams,
        global,
        local,
        output_type: out_ty,
        accesses,
        static_local_bytes,
        whole_groups: opts.whole_groups && opts.global.is_none() && opts.local.is_some(),
    })
}

/// The kernel's temporaries as parameters: global buffers, and local
/// arrays whose length the sizes give.
fn temp_params(sig: &mut Signature, temps: &[crate::codegen::lower::GlobalTemp]) {
    for t in temps {
        let (space, param) = if t.local {
            ("local", KernelParam::Local { name: t.name.clone(), bytes: t.bytes.clone() })
        } else {
            ("global", KernelParam::Temp { name: t.name.clone(), bytes: t.bytes.clone() })
        };
        sig.cparams
            .push(kernel::Param { ty: format!("{space} {}* restrict", t.c_elem), name: t.name.clone() });
        sig.kparams.push(param);
    }
}

/// The bytes of the `local` arrays of constant length the lowering
/// declared at the kernel's top.
fn static_local_bytes(body: &[crate::ir::c::Stmt]) -> u64 {
    body.iter()
        .filter_map(|s| match s {
            crate::ir::c::Stmt::Decl {
                qualifier: Some("local"), ty, pointer: false, len: Some(n), ..
            } => {
                let n = n.as_cst()?;
                Some(n.max(0) as u64 * ty.scalar_like_bytes().unwrap_or(0).max(0) as u64)
            }
            _ => None,
        })
        .sum()
}

/// The kernel's parameters as it declares them (`cparams`) and as callers
/// bind them (`kparams`), and the views through which the body reads the
/// def's parameters.
#[derive(Default)]
struct Signature {
    kparams: Vec<KernelParam>,
    cparams: Vec<kernel::Param>,
    views: Vec<(crate::ir::ParamId, Rc<View>)>,
}

impl Signature {
    /// The def's parameters: arrays as `const restrict` buffers, scalars by value.
    fn inputs(&mut self, d: &crate::ir::Def, types: &passes::Types) -> Result<(), CompileError> {
        for p in &d.params {
            let ty = types
                .params
                .get(&p.id)
                .cloned()
                .ok_or_else(|| CompileError::Internal(format!("parameter `{}` untyped", p.name)))?;
            match &ty {
                Type::Array(..) => {
                    let elem = ty.base_elem().clone();
                    self.cparams.push(kernel::Param {
                        ty: format!("const global {}* restrict", c_type(&elem)),
                        name: p.name.clone(),
                    });
                    let mem = Rc::new(Memory {
                        name: p.name.clone(),
                        space: AddressSpace::Global,
                        elem,
                        kind: MemKind::Buffer,
                    });
                    self.views.push((p.id, Rc::new(View::Mem { mem, ty: ty.clone() })));
                    self.kparams.push(KernelParam::Input { name: p.name.clone(), ty });
                }
                _ => {
                    self.cparams.push(kernel::Param { ty: c_type(&ty), name: p.name.clone() });
                    self.views.push((p.id, Rc::new(View::Value { c: p.name.clone(), ty: ty.clone() })));
                    self.kparams.push(KernelParam::Scalar { name: p.name.clone(), ty });
                }
            }
        }
        Ok(())
    }

    /// The result buffer `out`; returns the view the body writes it through.
    fn output(&mut self, d: &crate::ir::Def, types: &passes::Types) -> Result<Rc<View>, CompileError> {
        let out_ty = types.of(&d.body).clone();
        let out_elem = out_ty.base_elem().clone();
        let out_name = "out".to_string();
        if d.params.iter().any(|p| p.name == out_name) {
            return Err(CompileError::unsupported(Unsupported::OutParam, d.span));
        }
        let out_mem = Rc::new(Memory {
            name: out_name.clone(),
            space: AddressSpace::Global,
            elem: out_elem.clone(),
            kind: MemKind::Buffer,
        });
        let out_view = Rc::new(View::Mem { mem: out_mem, ty: out_ty.clone() });
        // The result and the temporaries are buffers of their own (the caller
        // must not pass an input as the output): `restrict` lets the driver keep
        // input loads on its read-only path and reorder them across stores.
        self.cparams
            .push(kernel::Param { ty: format!("global {}* restrict", c_type(&out_elem)), name: out_name });
        self.kparams.push(KernelParam::Output { ty: out_ty });
        Ok(out_view)
    }
}

/// Integer helpers for `Pow` and `Log2` in index expressions.
const INDEX_HELPERS: &str =
    "int lift_pow(int b, int e) { int r = 1; for (int i = 0; i < e; i++) r *= b; return r; }
int lift_log2(int x) { int r = 0; while (x > 1) { x >>= 1; r++; } return r; }
";

/// Size variables of the def's parameter types, in order of appearance.
fn size_names(d: &crate::ir::Def, types: &passes::Types) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for p in &d.params {
        if let Some(t) = types.params.get(&p.id) {
            for l in t.lengths() {
                for v in l.vars() {
                    if !out.contains(&v.name) {
                        out.push(v.name);
                    }
                }
            }
        }
    }
    out
}

/// Tuple structs, user functions and vectorised user functions.
fn preamble(program: &Program, lowered: &lower::Lowered) -> Vec<String> {
    let mut tuples = Vec::new();
    for uf in &program.user_funs {
        for (_, t) in &uf.params {
            ctypes::collect_tuples(t, &mut tuples);
        }
        ctypes::collect_tuples(&uf.ret, &mut tuples);
    }
    for t in &lowered.tuple_types {
        ctypes::collect_tuples(t, &mut tuples);
    }
    // Distinct types can share a C name; each struct is defined once.
    let mut out: Vec<String> = Vec::new();
    for def in tuples.iter().filter_map(ctypes::tuple_typedef) {
        if !out.contains(&def) {
            out.push(def);
        }
    }
    // `static`: internal linkage, so a driver's inliner may take the
    // function whatever its size (PoCL's LLVM refused BlackScholes' at
    // cost 675 of 674 and recomputed its shared terms per option).
    for uf in &program.user_funs {
        let ps: Vec<String> = uf.params.iter().map(|(n, t)| format!("{} {n}", c_type(t))).collect();
        out.push(format!("static {} {}({}) {{{}}}", c_type(&uf.ret), uf.name, ps.join(", "), uf.body_text));
    }
    for (id, w) in &lowered.vector_funs {
        out.push(vector_fun(program.user_fun(*id), *w));
    }
    out
}

/// The version of a scalar user function over `w`-vectors: the same body
/// with vector types when it is one arithmetic `return`, otherwise the
/// function applied to each component.
fn vector_fun(uf: &crate::ir::UserFun, w: u8) -> String {
    use crate::ir::c::{vector::is_overloaded_arithmetic, Stmt};
    let vt = |t: &Type| match t {
        Type::Scalar(s) => format!("{}{w}", s.c_name()),
        other => c_type(other),
    };
    let name = lower::vector_fun_name(&uf.name, w);
    let ps: Vec<String> = uf.params.iter().map(|(n, t)| format!("{} {n}", vt(t))).collect();
    let header = format!("static {} {name}({})", vt(&uf.ret), ps.join(", "));
    if let [Stmt::Return(e)] = &uf.body[..] {
        if is_overloaded_arithmetic(e) {
            return format!("{header} {{{}}}", uf.body_text);
        }
    }
    let comps: Vec<String> = (0..w)
        .map(|i| {
            let args: Vec<String> = uf.params.iter().map(|(n, _)| format!("{n}.s{i:x}")).collect();
            format!("{}({})", uf.name, args.join(", "))
        })
        .collect();
    format!("{header} {{ return ({})({}); }}", vt(&uf.ret), comps.join(", "))
}
