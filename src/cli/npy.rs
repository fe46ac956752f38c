//! `.npy` files for `lift exec`: float32/int32 (float64/int64 are narrowed
//! on read), C order; nested arrays are dimensions and vector elements a
//! last dimension.

use crate::harness::data::HostArray;
use std::path::Path;

/// A host array with its shape.
#[derive(Clone, Debug, PartialEq)]
pub struct NpyArray {
    pub shape: Vec<usize>,
    pub data: HostArray,
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
    let io = |e: std::io::Error| err(format!("reading data: {e}"));
    let data = match kind {
        "f4" => HostArray::F32(npy.into_vec::<f32>().map_err(io)?),
        "f8" => HostArray::F32(npy.into_vec::<f64>().map_err(io)?.into_iter().map(|x| x as f32).collect()),
        "i4" => HostArray::I32(npy.into_vec::<i32>().map_err(io)?),
        "i8" => HostArray::I32(npy.into_vec::<i64>().map_err(io)?.into_iter().map(|x| x as i32).collect()),
        _ => return Err(err(format!("dtype `{descr}`: expected float32 or int32"))),
    };
    Ok(NpyArray { shape, data })
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
        let a = NpyArray { shape: vec![2, 3], data: HostArray::F32(vec![1., 2., 3., 4., 5., 6.]) };
        write_npy(&p, &a).unwrap();
        assert_eq!(read_npy(&p).unwrap(), a);
        let b = NpyArray { shape: vec![4], data: HostArray::I32(vec![1, -2, 3, 4]) };
        write_npy(&p, &b).unwrap();
        assert_eq!(read_npy(&p).unwrap(), b);
        std::fs::write(&p, b"nonsense").unwrap();
        assert!(read_npy(&p).unwrap_err().contains("not a .npy"));
        let _ = std::fs::remove_file(&p);
    }
}
