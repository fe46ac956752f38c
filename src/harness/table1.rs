//! Table 1's code-size columns: lines of the OpenCL reference and of the
//! high-level and low-level Lift programs.

use std::path::PathBuf;

/// The files of one benchmark whose lines are counted.
#[derive(Clone, Debug)]
pub struct Table1Entry {
    pub benchmark: String,
    pub reference_files: Vec<PathBuf>,
    /// `.lift` file and `def` name of the high-level program.
    pub high_level: Option<(PathBuf, String)>,
    /// `.lift` file and `def` name of the low-level program.
    pub low_level: Option<(PathBuf, String)>,
}
