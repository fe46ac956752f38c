//! What `lift exec` checks before it allocates or launches anything: the
//! sizes fit the program (every divisibility and range fact the type
//! checker derives, with the sizes substituted), every buffer fits the
//! device and 32-bit indices, and the launch sizes are ones OpenCL accepts.

use super::{bad, BadInput, Buffer, CliError, InSource};
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
    crate::passes::sizes_fit::sizes_fit(program, def, sizes)
        .map_err(|source| bad(InSource::SizesFit { file: file.clone(), source }))
}

/// Bytes of each buffer `lift exec` will allocate (inputs given, output and
/// temporaries computed), checked against the device before allocating.
pub(crate) fn buffers_fit(
    info: &DeviceInfo,
    k: &Kernel,
    input_bytes: &BTreeMap<String, usize>,
    sizes: &Sizes,
) -> Result<(), CliError> {
    let ev = |e: &ArithExpr| {
        e.eval_with(&|n| sizes.get(n).copied())
            .map_err(|source| bad(BadInput::Unsized { expr: e.clone(), source }))
    };
    let mut all: Vec<(Buffer, i64)> = Vec::new();
    for p in &k.params {
        match p {
            KernelParam::Input { name, .. } => {
                all.push((Buffer::Input(name.clone()), input_bytes.get(name).copied().unwrap_or(0) as i64))
            }
            KernelParam::Output { ty } => all.push((Buffer::Output, ev(&ty.size_in_bytes())?)),
            KernelParam::Temp { name, bytes } => all.push((Buffer::Temporary(name.clone()), ev(bytes)?)),
            KernelParam::Local { name, bytes } => {
                let bytes = ev(bytes)?;
                if bytes as u64 > info.local_mem {
                    return Err(bad(BadInput::OverLocal {
                        name: name.clone(),
                        bytes,
                        local_mem: info.local_mem,
                    }));
                }
            }
            KernelParam::Scalar { .. } | KernelParam::Size { .. } => {}
        }
    }
    let mut total: i64 = 0;
    for (what, bytes) in all {
        if bytes < 0 {
            return Err(bad(BadInput::NegativeBytes { what, bytes }));
        }
        if bytes as u64 > info.max_alloc {
            return Err(bad(BadInput::OverAlloc { what, bytes, max_alloc: info.max_alloc }));
        }
        // The output comes back to the host.
        if matches!(what, Buffer::Output) {
            crate::types::check_host_bytes(&what.to_string(), bytes as u64).map_err(bad)?;
        }
        total = total.saturating_add(bytes);
    }
    if total as u64 > info.global_mem {
        return Err(bad(BadInput::OverGlobal { total, global_mem: info.global_mem }));
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
    let biggest = host.iter().map(|(n, v)| (Buffer::Input(n.clone()), v.len() as u64));
    for (what, elems) in std::iter::once((Buffer::Output, out)).chain(biggest) {
        if elems > limit {
            return Err(bad(BadInput::CheckBudget { what, elems, limit }));
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
            return Err(bad(BadInput::GlobalSize { size: *g, dim: d }));
        }
    }
    if let Some(l) = local {
        let mut count: i64 = 1;
        for d in 0..dims {
            if l[d] < 1 {
                return Err(bad(BadInput::LocalSize { size: l[d], dim: d }));
            }
            if global[d] % l[d] != 0 {
                return Err(bad(BadInput::LocalDivides { local: l[d], global: global[d], dim: d }));
            }
            count = count.saturating_mul(l[d]);
        }
        if count as u64 > info.max_work_group as u64 {
            return Err(bad(BadInput::WorkGroup {
                local: l[..dims].to_vec(),
                count,
                max: info.max_work_group,
            }));
        }
    }
    let g = global[..dims].iter().map(|&x| x as usize).collect();
    Ok((g, local.map(|l| l[..dims].iter().map(|&x| x as usize).collect())))
}
