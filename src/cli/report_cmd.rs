//! `lift report`: regenerates the README's result tables and
//! `reports/paper-vs-reproduced.md` from the committed CSVs, or with
//! `--check` says which one differs.

use clap::Args;
use std::path::PathBuf;

use super::{bad, failed, CliError};
use crate::harness::report;

#[derive(Args, Debug)]
pub(crate) struct ReportArgs {
    /// Compare only: exit 1 naming the first table whose committed text
    /// differs from what would be generated.
    #[arg(long)]
    check: bool,
    /// Repository root (README.md, reports/).
    #[arg(long, default_value = ".")]
    root: PathBuf,
}

pub(crate) fn report_cmd(a: &ReportArgs) -> Result<(), CliError> {
    // A missing or malformed source is the input's fault: exit 2, as for
    // other bad input.
    let outputs = report::generate(&a.root).map_err(bad)?;
    if a.check {
        return match report::drift_message(&outputs) {
            Some(drift) => Err(failed(drift)),
            None => {
                println!("report: README.md and {} match the CSVs", report::PAPER_VS_REPRODUCED);
                Ok(())
            }
        };
    }
    let written = report::write(&a.root, &outputs).map_err(failed)?;
    for o in &outputs {
        let state = if written.iter().any(|w| w.ends_with(&o.path)) { "written" } else { "unchanged" };
        println!("report: {} {state}", o.path.display());
    }
    Ok(())
}
