//! `.npy` bytes for the tests that run `lift exec` on files (included with
//! `#[path = "support/npy.rs"] mod npy;`).

/// An `.npy` file of the given shape holding `data`.
pub fn npy_bytes<T: npyz::AutoSerialize + Copy>(shape: &[u64], data: impl Iterator<Item = T>) -> Vec<u8> {
    use npyz::WriterBuilder;
    let mut out = Vec::new();
    let mut w = npyz::WriteOptions::new().default_dtype().shape(shape).writer(&mut out).begin_nd().unwrap();
    w.extend(data).unwrap();
    w.finish().unwrap();
    out
}
