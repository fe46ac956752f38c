//! What `lift exec` checks before it allocates or launches anything: the
//! sizes fit the program (every divisibility and range fact the type
//! checker derives, with the sizes substituted), every buffer fits the
//! device and 32-bit indices, and the launch sizes are ones OpenCL accepts.

use super::{bad, CliError};
use crate::arith::ArithExpr;
use crate::compile::{Kernel, KernelParam};
use crate::ir::{Def, Program, SourceFile};
use crate::passes::sizes_fit::MAX_ELEMS;
use crate::runtime::DeviceInfo;
use crate::types::Sizes;
use std::collections::BTreeMap;

/// The sizes fit the program ([`crate::passes::sizes_fit`]), as an error
/// naming the place in `file`.
pub(crate) fn sizes_fit(
    file: &SourceFile,
    program: &Program,
    def: &Def,
    sizes: &Sizes,
) -> Result<(), CliError> {
    crate::passes::sizes_fit::sizes_fit(program, def, sizes).map_err(|e| match e.span {
        Some(span) => bad(file.error_at(span, &e)),
        None => bad(format!("{}: {e}", file.name)),
    })
}

/// Bytes of each buffer `lift exec` will allocate (inputs given, output and
/// temporaries computed), checked against the device before allocating.
pub(crate) fn buffers_fit(
    info: &DeviceInfo,
    k: &Kernel,
    input_bytes: &BTreeMap<String, usize>,
    sizes: &Sizes,
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
        // The output comes back to the host.
        if what == "the output" {
            crate::types::check_host_bytes(what, *b as u64).map_err(|e| bad(e.to_string()))?;
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

/// `--check` can run: the output and every input hold at most the
/// interpreter's budget of elements ([`crate::interp::MAX_WORK`]),
/// checked before the kernel runs.
pub(crate) fn interp_fits(k: &Kernel, host: &crate::types::Arrays, sizes: &Sizes) -> Result<(), CliError> {
    let limit = crate::interp::MAX_WORK;
    let out =
        k.output_type.size_in_bytes().eval_with(&|n| sizes.get(n).copied()).unwrap_or(0).max(0) as u64 / 4;
    let biggest = host.iter().map(|(n, v)| (format!("input `{n}`"), v.len() as u64));
    for (what, n) in std::iter::once(("the output".to_string(), out)).chain(biggest) {
        if n > limit {
            return Err(bad(format!(
                "--check: {what} has {n} elements, more than the interpreter's budget of {limit}; check at smaller sizes"
            )));
        }
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
