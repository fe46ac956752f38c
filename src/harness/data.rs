//! Host-side arrays exchanged between input generators, kernels and gold
//! functions. Arrays are flat; vector elements are stored component by
//! component.

use std::collections::BTreeMap;

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

/// Named arrays (inputs or outputs).
pub type Arrays = BTreeMap<String, HostArray>;

/// Bound size names (`N -> 4096`).
pub type Sizes = BTreeMap<String, i64>;
