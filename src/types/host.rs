//! Host-side arrays: the flat form in which values travel between input
//! generators, the OpenCL runtime, the interpreter and gold functions.
//! Arrays are flat; vector elements are stored component by component.

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
