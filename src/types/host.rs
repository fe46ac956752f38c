//! Host-side arrays: the flat form in which values travel between input
//! generators, the OpenCL runtime, the interpreter and gold functions.
//! Arrays are flat; vector elements are stored component by component.

use std::collections::BTreeMap;

/// Values of size variables (`N -> 4096`): the one map of sizes that
/// compiling, launching, validating, the search and the harness share.
pub type Sizes = BTreeMap<String, i64>;

/// Sizes from `(name, value)` pairs (`sizes_of(&[("N", 4096)])`).
pub fn sizes_of(pairs: &[(&str, i64)]) -> Sizes {
    pairs.iter().map(|&(k, v)| (k.to_string(), v)).collect()
}

/// Named host arrays (inputs, outputs, scalars as one-element arrays).
pub type Arrays = BTreeMap<String, HostArray>;

/// A flat host array.
#[derive(Clone, Debug, PartialEq)]
pub enum HostArray {
    F32(Vec<f32>),
    I32(Vec<i32>),
}

impl HostArray {
    pub fn len(&self) -> usize {
        match self {
            HostArray::F32(v) => v.len(),
            HostArray::I32(v) => v.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The most bytes one host array may take: half the machine's physical
/// memory (`MemTotal` of `/proc/meminfo`), or 8 GiB where that cannot be
/// read. Inputs, generated data and results are checked against it before
/// they are allocated, so that an oversized size gives an error instead of
/// an allocation failure that aborts the process.
pub fn host_cap_bytes() -> u64 {
    static CAP: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *CAP.get_or_init(|| {
        let total_kib = std::fs::read_to_string("/proc/meminfo").ok().and_then(|t| {
            let line = t.lines().find(|l| l.starts_with("MemTotal:"))?;
            line.split_whitespace().nth(1)?.parse::<u64>().ok()
        });
        total_kib.map_or(8 << 30, |k| k.saturating_mul(1024) / 2)
    })
}

/// A host allocation larger than [`host_cap_bytes`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{what} would take {bytes} bytes of host memory, more than the host cap of {cap} bytes (half the physical memory)")]
pub struct HostMemError {
    pub what: String,
    pub bytes: u64,
    pub cap: u64,
}

/// `bytes` for `what` fit [`host_cap_bytes`].
pub fn check_host_bytes(what: &str, bytes: u64) -> Result<(), HostMemError> {
    let cap = host_cap_bytes();
    if bytes > cap {
        return Err(HostMemError { what: what.to_string(), bytes, cap });
    }
    Ok(())
}
