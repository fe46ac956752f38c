//! The `lift` command-line tool.

/// Runs the CLI; returns the process exit code.
pub fn main() -> i32 {
    0
}
