//! The generality suite's figure (`generality.svg/.pdf`, from
//! `results-generality.csv`): for every program, the explored program's
//! speedup over PyTorch on the same device (PyTorch's time over Lift's;
//! above 1, Lift is faster), with the best's fraction of the device limit
//! that binds it in the label (and, where that is the copy bandwidth, of a
//! copy of the program's own bytes), and the geometric mean.

use super::model::geometric_mean;
use super::pdf::FontSource;
use super::stencil_figures::{bar_chart, Group};
use super::{ChartError, InputProblem};
use crate::harness::generality::{Outcome, Row};
use std::path::{Path, PathBuf};

/// The figure's SVG: one bar per program with a PyTorch time.
pub fn generality_svg(rows: &[Row]) -> Result<String, ChartError> {
    let mut groups: Vec<Group> = rows
        .iter()
        .filter(|r| r.status == Outcome::Ok)
        .map(|r| {
            let limit = match (r.pct_of_limit(), r.pct_own_copy_if_bound()) {
                (Some(p), Some(own)) => format!(" ({p:.0}% / {own:.0}%)"),
                (Some(p), None) => format!(" ({p:.0}%)"),
                (None, _) => String::new(),
            };
            Group { label: format!("{}{limit}", r.program), values: vec![r.speedup] }
        })
        .collect();
    let mean = geometric_mean(&groups.iter().filter_map(|g| g.values[0]).collect::<Vec<_>>());
    groups.push(Group { label: "geo. mean".into(), values: vec![mean] });
    let device = rows.first().map_or("", |r| r.device.as_str());
    bar_chart(
        &format!(
            "Explored with no hints over PyTorch ({device}); brackets: % of the limit / of a same-size copy"
        ),
        "PyTorch time / Lift time",
        &["explored over PyTorch".to_string()],
        &groups,
        true,
    )
}

/// Writes `generality.svg` and `generality.pdf` into `out_dir`.
pub fn render_generality_figure(
    csv: &Path,
    out_dir: &Path,
    fonts: &FontSource,
) -> Result<Vec<PathBuf>, ChartError> {
    let rows = crate::harness::generality::row::read(csv)
        .map_err(|e| ChartError::Input { path: csv.to_path_buf(), problem: InputProblem::Generality(e) })?;
    if rows.is_empty() {
        return Err(ChartError::Input { path: csv.to_path_buf(), problem: InputProblem::NoRows });
    }
    super::write_figures(&[("generality", generality_svg(&rows)?)], out_dir, fonts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_give_the_binding_limit_and_the_copy_of_as_many_bytes() {
        let text = "program,class,sizes,device,commit,date,status,lift_ms,lift_timing,naive_ms,tried,valid,candidate,params,min_bytes,gbps,copy_gbps,pct_copy,own_copy_gbps,pct_own_copy,min_flops,gflops,peak_gflops,pct_fp32,peer,peer_ms,peer_timing,speedup,message\n\
            a,c,N=5,dev,abc,d,ok,1.0,opencl-events,4.0,3,3,1,,100,70,100,70,77.8,90,,,,,x.sum(),2.0,cuda-events,2.0,\n\
            m,c,N=5,dev,abc,d,ok,1.0,opencl-events,4.0,3,3,1,,100,50,100,50,71.4,70,1,1,1,90,mm(a),2.0,cuda-events,2.0,\n";
        let rows: Vec<Row> =
            csv::Reader::from_reader(text.as_bytes()).deserialize().map(|r| r.unwrap()).collect();
        let svg = generality_svg(&rows).unwrap();
        assert!(svg.contains("a (70% / 90%)"), "{svg}");
        // Bound by FP32: its fraction alone.
        assert!(svg.contains("m (90%)"), "{svg}");
    }
}
