//! `.npy` files for `lift exec`: float32/int32, C order; nested arrays are
//! dimensions and vector elements a last dimension. float64/int64 are
//! narrowed on read only when every value survives (with a note saying so);
//! otherwise the file is refused, naming the first value that would change.

use crate::harness::data::HostArray;
use crate::types::HostMemError;
use std::path::{Path, PathBuf};

/// A host array with its shape.
#[derive(Clone, Debug, PartialEq)]
pub struct NpyArray {
    pub shape: Vec<usize>,
    pub data: HostArray,
    /// Set on read when the file was narrowed from 64 bits (losslessly).
    pub note: Option<String>,
}

/// The longest header accepted (numpy's own default `max_header_size`).
pub const MAX_HEADER_BYTES: usize = 10_000;

/// The deepest nesting of brackets accepted in a header. A plain dtype's
/// header nests 2 deep (the dict and the shape tuple); npyz's parser of
/// the header's Python literal takes time exponential in the nesting.
pub const MAX_HEADER_NESTING: usize = 8;

/// A header refused before it is parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NpyHeaderError {
    #[error("not a .npy file: magic not found for NPY file")]
    Magic,
    #[error("not a .npy file: unsupported version ({0}, {1}); expected 1.0, 2.0 or 3.0")]
    Version(u8, u8),
    #[error("the header is {0} bytes long, more than {MAX_HEADER_BYTES}")]
    TooLong(u64),
    #[error("the header declares {declared} bytes, but the file ends {left} bytes after its start")]
    Truncated { declared: u64, left: u64 },
    #[error("the header nests brackets more than {MAX_HEADER_NESTING} deep (at header byte {0})")]
    TooDeep(usize),
    #[error(
        "the header's shape {shape:?} needs {need} bytes of data, but the file has {have} after its header"
    )]
    ShortData { shape: Vec<u64>, need: u64, have: u64 },
    #[error("the header's shape {0:?} has more elements than a 64-bit count holds")]
    Overflow(Vec<u64>),
}

/// Why an `.npy` file could not be read or written, naming the file.
#[derive(Debug, thiserror::Error)]
#[error("{}: {problem}", path.display())]
pub struct NpyError {
    pub path: PathBuf,
    pub problem: NpyProblem,
}

/// What was wrong with the file (or the reading of it).
#[derive(Debug, thiserror::Error)]
pub enum NpyProblem {
    /// Opening, reading the prefix of, or writing the file.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Header(#[from] NpyHeaderError),
    /// The header's Python literal, as npyz's parser refused it.
    #[error("not a .npy file: {}", one_line(&.0.to_string()))]
    Parse(std::io::Error),
    #[error("Fortran-ordered arrays are not supported; save with C order")]
    Fortran,
    /// A structured (record) dtype, by its descriptor.
    #[error("unsupported dtype {0}")]
    Structured(String),
    #[error(transparent)]
    HostMemory(#[from] HostMemError),
    #[error("reading data: {0}")]
    Data(std::io::Error),
    /// A 64-bit value that the 32-bit type would change.
    #[error(
        "dtype `{descr}`: value {value} at flat index {index} would change in {to}; save the array as {to}"
    )]
    Lossy { descr: String, value: String, index: usize, to: &'static str },
    #[error("dtype `{0}`: expected float32 or int32")]
    DType(String),
    #[error("the header's shape {shape:?} does not match the {len} values in the file")]
    Count { shape: Vec<usize>, len: usize },
}

/// The magic, version and header length of an `.npy` file, checked
/// against the file's size; returns the whole prefix (magic through
/// header text), leaving `r` at the first data byte.
fn read_prefix(r: &mut impl std::io::Read, file_len: u64) -> Result<Vec<u8>, NpyProblem> {
    let mut pre = [0u8; 12];
    let short = |n: u64| file_len < n;
    if short(10) {
        return Err(NpyHeaderError::Magic.into());
    }
    r.read_exact(&mut pre[..10])?;
    if &pre[..6] != b"\x93NUMPY" {
        return Err(NpyHeaderError::Magic.into());
    }
    let (major, minor) = (pre[6], pre[7]);
    let (fixed, hlen) = match (major, minor) {
        (1, 0) => (10usize, u16::from_le_bytes([pre[8], pre[9]]) as u64),
        (2, 0) | (3, 0) => {
            if short(12) {
                return Err(NpyHeaderError::Truncated { declared: 12, left: file_len }.into());
            }
            r.read_exact(&mut pre[10..12])?;
            (12, u32::from_le_bytes([pre[8], pre[9], pre[10], pre[11]]) as u64)
        }
        _ => return Err(NpyHeaderError::Version(major, minor).into()),
    };
    if hlen > MAX_HEADER_BYTES as u64 {
        return Err(NpyHeaderError::TooLong(hlen).into());
    }
    if fixed as u64 + hlen > file_len {
        return Err(NpyHeaderError::Truncated { declared: fixed as u64 + hlen, left: file_len }.into());
    }
    let mut out = pre[..fixed].to_vec();
    out.resize(fixed + hlen as usize, 0);
    r.read_exact(&mut out[fixed..])?;
    if let Some(at) = too_deep(&out[fixed..]) {
        return Err(NpyHeaderError::TooDeep(at).into());
    }
    Ok(out)
}

/// The offset where the header's brackets first nest deeper than
/// [`MAX_HEADER_NESTING`] (outside string literals), if they do.
fn too_deep(text: &[u8]) -> Option<usize> {
    let (mut depth, mut quote) = (0usize, None::<u8>);
    for (i, &c) in text.iter().enumerate() {
        match (quote, c) {
            (Some(q), _) if c == q => quote = None,
            (Some(_), _) => {}
            (None, b'\'' | b'"') => quote = Some(c),
            (None, b'[' | b'(' | b'{') => {
                depth += 1;
                if depth > MAX_HEADER_NESTING {
                    return Some(i);
                }
            }
            (None, b']' | b')' | b'}') => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

/// A parser's multi-line message (a caret under the header's text) as one
/// line: its lines without the quoted text, joined by `; `.
fn one_line(msg: &str) -> String {
    msg.lines()
        .map(str::trim)
        .filter(|l| {
            let quoted = l.split_once('|').is_some_and(|(n, _)| n.trim().chars().all(|c| c.is_ascii_digit()));
            !l.is_empty() && !quoted
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The header's data fits in the file and in host memory.
fn check_data_size(header: &npyz::NpyHeader, item: u64, have: u64) -> Result<(), NpyProblem> {
    let shape = header.shape().to_vec();
    let need = shape
        .iter()
        .try_fold(1u64, |a, &d| a.checked_mul(d))
        .and_then(|n| n.checked_mul(item))
        .ok_or_else(|| NpyHeaderError::Overflow(shape.clone()))?;
    if need > have {
        return Err(NpyHeaderError::ShortData { shape, need, have }.into());
    }
    Ok(crate::types::check_host_bytes("the array", need)?)
}

pub fn read_npy(path: &Path) -> Result<NpyArray, NpyError> {
    read(path).map_err(|problem| NpyError { path: path.to_path_buf(), problem })
}

fn read(path: &Path) -> Result<NpyArray, NpyProblem> {
    let file = std::fs::File::open(path)?;
    let file_len = file.metadata()?.len();
    let mut reader = std::io::BufReader::new(file);
    let prefix = read_prefix(&mut reader, file_len)?;
    let header = npyz::NpyHeader::from_reader(prefix.as_slice()).map_err(NpyProblem::Parse)?;
    let npy = npyz::NpyFile::with_header(header, reader);
    if npy.order() != npyz::Order::C {
        return Err(NpyProblem::Fortran);
    }
    let shape: Vec<usize> = npy.shape().iter().map(|&d| d as usize).collect();
    let descr = match npy.dtype() {
        npyz::DType::Plain(ts) => ts.to_string(),
        other => return Err(NpyProblem::Structured(other.descr())),
    };
    let kind = descr.trim_start_matches(['<', '>', '|', '=']);
    if matches!(kind, "f4" | "f8" | "i4" | "i8") {
        let item = npy.dtype().num_bytes().unwrap_or(1) as u64;
        check_data_size(npy.header(), item, file_len - prefix.len() as u64)?;
    }
    let elems = shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d));
    let io = NpyProblem::Data;
    let lossy =
        |index: usize, value: String, to| NpyProblem::Lossy { descr: descr.clone(), value, index, to };
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
        _ => return Err(NpyProblem::DType(descr)),
    };
    let len = match &data {
        HostArray::F32(v) => v.len(),
        HostArray::I32(v) => v.len(),
    };
    if elems != Some(len) {
        return Err(NpyProblem::Count { shape, len });
    }
    Ok(NpyArray { shape, data, note })
}

pub fn write_npy(path: &Path, arr: &NpyArray) -> Result<(), NpyError> {
    use npyz::WriterBuilder;
    let err = |e: std::io::Error| NpyError { path: path.to_path_buf(), problem: e.into() };
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
        assert!(read_npy(&p).unwrap_err().to_string().contains("not a .npy"));
        let _ = std::fs::remove_file(&p);
    }

    fn v1(header: &str, data: &[u8]) -> Vec<u8> {
        let mut h = header.as_bytes().to_vec();
        h.push(b'\n');
        let mut out = b"\x93NUMPY\x01\x00".to_vec();
        out.extend_from_slice(&(h.len() as u16).to_le_bytes());
        out.extend_from_slice(&h);
        out.extend_from_slice(data);
        out
    }

    fn read_bytes(name: &str, bytes: &[u8]) -> Result<NpyArray, String> {
        let p = std::env::temp_dir().join(format!("lift-npy-{name}-{}.npy", std::process::id()));
        std::fs::write(&p, bytes).unwrap();
        let r = read_npy(&p).map_err(|e| e.to_string());
        let _ = std::fs::remove_file(&p);
        r
    }

    #[test]
    fn hostile_headers_are_refused_before_parsing() {
        let deep = format!(
            "{{'descr': {}{}, 'fortran_order': False, 'shape': (4,), }}",
            "[".repeat(30),
            "]".repeat(30)
        );
        let start = std::time::Instant::now();
        let e = read_bytes("deep", &v1(&deep, &[0; 16])).unwrap_err();
        assert!(e.ends_with("the header nests brackets more than 8 deep (at header byte 17)"), "{e}");
        assert!(start.elapsed().as_secs() < 2);
        // A v2 header declaring 4 GiB of header text.
        let mut big = b"\x93NUMPY\x02\x00".to_vec();
        big.extend_from_slice(&u32::MAX.to_le_bytes());
        big.extend_from_slice(b"{'descr'");
        let e = read_bytes("hlen", &big).unwrap_err();
        assert!(e.ends_with("the header is 4294967295 bytes long, more than 10000"), "{e}");
        // A shape of 2^30 floats over no data.
        let e = read_bytes(
            "shape",
            &v1("{'descr': '<f4', 'fortran_order': False, 'shape': (1073741824,), }", &[]),
        )
        .unwrap_err();
        assert!(e.ends_with("the header's shape [1073741824] needs 4294967296 bytes of data, but the file has 0 after its header"), "{e}");
        let e = read_bytes(
            "over",
            &v1("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", &[]),
        )
        .unwrap_err();
        assert!(e.contains("more elements than a 64-bit count holds"), "{e}");
        let e = read_bytes("version", b"\x93NUMPY\x07\x00\x10\x00{}").unwrap_err();
        assert!(e.contains("unsupported version (7, 0)"), "{e}");
        let e = read_bytes("trunc", b"\x93NUMPY\x01\x00\x10\x00{}").unwrap_err();
        assert!(
            e.contains("the header declares 26 bytes, but the file ends 12 bytes after its start"),
            "{e}"
        );
        let ok = read_bytes(
            "ok",
            &v1("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", &[0, 0, 128, 63, 0, 0, 0, 64]),
        );
        assert_eq!(ok.unwrap().data, HostArray::F32(vec![1.0, 2.0]));
    }
}
