//! `.npy` files for `lift exec`: float32/int32, C order; nested arrays are
//! dimensions and vector elements a last dimension. float64/int64 are
//! narrowed on read only when every value survives (with a note saying so);
//! otherwise the file is refused, naming the first value that would change.

use crate::harness::data::HostArray;
use std::path::Path;

/// A host array with its shape.
#[derive(Clone, Debug, PartialEq)]
pub struct NpyArray {
    pub shape: Vec<usize>,
    pub data: HostArray,
    /// Set on read when the file was narrowed from 64 bits (losslessly).
    pub note: Option<String>,
}

pub fn read_npy(path: &Path) -> Result<NpyArray, String> {
    let err = |m: String| format!("{}: {m}", path.display());
    let file = std::fs::File::open(path).map_err(|e| err(e.to_string()))?;
    let npy = npyz::NpyFile::new(std::io::BufReader::new(file))
        .map_err(|e| err(format!("not a .npy file: {e}")))?;
    if npy.order() != npyz::Order::C {
        return Err(err("Fortran-ordered arrays are not supported; save with C order".into()));
    }
    let shape: Vec<usize> = npy.shape().iter().map(|&d| d as usize).collect();
    let descr = match npy.dtype() {
        npyz::DType::Plain(ts) => ts.to_string(),
        other => return Err(err(format!("unsupported dtype {}", other.descr()))),
    };
    let kind = descr.trim_start_matches(['<', '>', '|', '=']);
    let elems = shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d));
    let io = |e: std::io::Error| err(format!("reading data: {e}"));
    let lossy = |i: usize, v: String, to: &str| {
        err(format!(
            "dtype `{descr}`: value {v} at flat index {i} would change in {to}; save the array as {to}"
        ))
    };
    let mut note = None;
    let data = match kind {
        "f4" => HostArray::F32(npy.into_vec::<f32>().map_err(io)?),
        "f8" => {
            let v = npy.into_vec::<f64>().map_err(io)?;
            // NaN stays NaN; every other value must round-trip exactly.
            if let Some(i) = v.iter().position(|x| !x.is_nan() && (*x as f32) as f64 != *x) {
                return Err(lossy(i, v[i].to_string(), "float32"));
            }
            note = Some(format!(
                "float64 data narrowed to float32 (every value is exact) from {}",
                path.display()
            ));
            HostArray::F32(v.into_iter().map(|x| x as f32).collect())
        }
        "i4" => HostArray::I32(npy.into_vec::<i32>().map_err(io)?),
        "i8" => {
            let v = npy.into_vec::<i64>().map_err(io)?;
            if let Some(i) = v.iter().position(|x| i32::try_from(*x).is_err()) {
                return Err(lossy(i, v[i].to_string(), "int32"));
            }
            note = Some(format!("int64 data narrowed to int32 (every value fits) from {}", path.display()));
            HostArray::I32(v.into_iter().map(|x| x as i32).collect())
        }
        _ => return Err(err(format!("dtype `{descr}`: expected float32 or int32"))),
    };
    let len = match &data {
        HostArray::F32(v) => v.len(),
        HostArray::I32(v) => v.len(),
    };
    if elems != Some(len) {
        return Err(err(format!("the header's shape {shape:?} does not match the {len} values in the file")));
    }
    Ok(NpyArray { shape, data, note })
}

pub fn write_npy(path: &Path, arr: &NpyArray) -> Result<(), String> {
    use npyz::WriterBuilder;
    let err = |e: std::io::Error| format!("{}: {e}", path.display());
    let file = std::io::BufWriter::new(std::fs::File::create(path).map_err(err)?);
    let shape: Vec<u64> = arr.shape.iter().map(|&d| d as u64).collect();
    match &arr.data {
        HostArray::F32(v) => {
            let mut w = npyz::WriteOptions::new()
                .default_dtype()
                .shape(&shape)
                .writer(file)
                .begin_nd()
                .map_err(err)?;
            w.extend(v.iter().copied()).map_err(err)?;
            w.finish().map_err(err)
        }
        HostArray::I32(v) => {
            let mut w = npyz::WriteOptions::new()
                .default_dtype()
                .shape(&shape)
                .writer(file)
                .begin_nd()
                .map_err(err)?;
            w.extend(v.iter().copied()).map_err(err)?;
            w.finish().map_err(err)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip() {
        let p = std::env::temp_dir().join(format!("lift-npy-{}.npy", std::process::id()));
        let a =
            NpyArray { shape: vec![2, 3], data: HostArray::F32(vec![1., 2., 3., 4., 5., 6.]), note: None };
        write_npy(&p, &a).unwrap();
        assert_eq!(read_npy(&p).unwrap(), a);
        let b = NpyArray { shape: vec![4], data: HostArray::I32(vec![1, -2, 3, 4]), note: None };
        write_npy(&p, &b).unwrap();
        assert_eq!(read_npy(&p).unwrap(), b);
        std::fs::write(&p, b"nonsense").unwrap();
        assert!(read_npy(&p).unwrap_err().contains("not a .npy"));
        let _ = std::fs::remove_file(&p);
    }
}
