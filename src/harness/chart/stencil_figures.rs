//! The stencil suite's figures (CGO 2018): Figure 7, giga-elements updated
//! per second of the reference, the Lift variants and Halide per benchmark
//! and size; Figure 8, the speedup of each Lift variant over Halide (the
//! paper's automatic peer was PPCG). Drawn from the suite's results file
//! (`results-cgo18.csv`) as `cgo18-figure7.svg/.pdf` and
//! `cgo18-figure8.svg/.pdf`; the names keep clear of CGO 2017's `figure8`.
//! The table beside them is `stencil_table`'s `cgo18-summary.md`.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::{Path, PathBuf};

use super::model::geometric_mean;
use super::pdf::FontSource;
use super::ChartError;
use crate::harness::results::{Row, Status};
use crate::harness::variant_name::{Variant, HALIDE};

const FONT: &str = "sans-serif";
const SLOT_PX: f64 = 14.0;
const GAP: f64 = 1.2;

/// Bar order: the reference, the Lift variants (named ones in first-seen
/// order), then the peer.
fn variant_order(rows: &[Row]) -> Vec<Variant> {
    let mut out = vec![Variant::Reference];
    for r in rows {
        // Not `lift-tuned@<device>` (another device's program) nor host-timed twins.
        if r.variant.is_lift_named() && !out.contains(&r.variant) {
            out.push(r.variant.clone());
        }
    }
    out.push(Variant::peer(HALIDE));
    out
}

/// A bar's colour, by its label: the reference's and Halide's their own,
/// the rest (Lift variants, libraries, `best Lift`) a ramp.
fn color(i: usize, label: &str) -> RGBColor {
    match Variant::parse(label) {
        Some(Variant::Reference) => RGBColor(0x40, 0x40, 0x40),
        Some(v) if v.is_peer_named(HALIDE) => RGBColor(0x45, 0x75, 0xb4),
        _ => [RGBColor(0xfd, 0xae, 0x61), RGBColor(0xe3, 0x4a, 0x33), RGBColor(0xb3, 0x00, 0x00)][i % 3],
    }
}

/// One benchmark at one size: a value (or nothing) per bar.
pub(super) struct Group {
    pub(super) label: String,
    pub(super) values: Vec<Option<f64>>,
}

fn ok_row<'a>(rows: &'a [Row], bench: &str, size: &str, variant: &Variant) -> Option<&'a Row> {
    // Results are appended: the last row of a key is the latest run.
    rows.iter()
        .rev()
        .find(|r| r.benchmark == bench && r.size == size && r.variant == *variant && r.status == Status::Ok)
}

fn groups<B>(rows: &[Row], bars: &[B], value: &dyn Fn(&str, &str, &B) -> Option<f64>) -> Vec<Group> {
    let mut keys: Vec<(String, String)> = Vec::new();
    for r in rows {
        let k = (r.benchmark.clone(), r.size.clone());
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    keys.into_iter()
        .map(|(b, s)| Group {
            label: format!("{b} {s}"),
            values: bars.iter().map(|v| value(&b, &s, v)).collect(),
        })
        .collect()
}

fn draw_err<E: std::fmt::Debug>(e: E) -> ChartError {
    ChartError::Draw(format!("{e:?}"))
}

/// A grouped bar chart; `log` selects a logarithmic y axis with a line at 1.
pub(super) fn bar_chart(
    title: &str,
    y_desc: &str,
    bars: &[String],
    groups: &[Group],
    log: bool,
) -> Result<String, ChartError> {
    let units: f64 = groups.iter().map(|g| g.values.len() as f64 + GAP).sum::<f64>() + GAP;
    let width = ((units * SLOT_PX) as u32 + 140).max(900);
    let height = 620u32;
    let vals: Vec<f64> = groups.iter().flat_map(|g| g.values.iter().flatten().copied()).collect();
    let max = vals.iter().copied().fold(0.0f64, f64::max);
    let min = vals.iter().copied().fold(f64::INFINITY, f64::min);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (width, height)).into_drawing_area();
        root.fill(&WHITE).map_err(draw_err)?;
        let (legend, area) = root.split_vertically(50);
        let font = (FONT, 16).into_font().color(&BLACK).pos(Pos::new(HPos::Left, VPos::Center));
        let mut x = 20;
        for (i, v) in bars.iter().enumerate() {
            legend
                .draw(&Rectangle::new([(x, 17), (x + 16, 33)], ShapeStyle::from(&color(i, v)).filled()))
                .map_err(draw_err)?;
            legend.draw(&Text::new(v.clone(), (x + 22, 25), font.clone())).map_err(draw_err)?;
            x += 40 + 10 * v.len() as i32;
        }
        let mut builder = ChartBuilder::on(&area);
        builder.caption(title, (FONT, 22)).margin_right(20).x_label_area_size(150).y_label_area_size(80);
        let label_font = (FONT, 13)
            .into_font()
            .color(&BLACK)
            .transform(FontTransform::Rotate270)
            .pos(Pos::new(HPos::Right, VPos::Center));
        let place = |gi: usize, bi: usize| {
            let start: f64 = GAP + groups[..gi].iter().map(|g| g.values.len() as f64 + GAP).sum::<f64>();
            (start + bi as f64 + 0.1, start + bi as f64 + 0.9)
        };
        let flat = groups.iter().enumerate().flat_map(|(gi, g)| {
            g.values.iter().enumerate().filter_map(move |(bi, v)| v.map(|v| (gi, bi, v)))
        });
        macro_rules! draw_bars {
            ($chart:expr, $base:expr) => {{
                $chart
                    .draw_series(flat.clone().map(|(gi, bi, v)| {
                        let (x0, x1) = place(gi, bi);
                        Rectangle::new(
                            [(x0, $base), (x1, v)],
                            ShapeStyle::from(&color(bi, &bars[bi])).filled(),
                        )
                    }))
                    .map_err(draw_err)?;
                for (gi, g) in groups.iter().enumerate() {
                    let (x0, _) = place(gi, 0);
                    let (_, x1) = place(gi, g.values.len().max(1) - 1);
                    let (px, py) = $chart.backend_coord(&((x0 + x1) / 2.0, $base));
                    root.draw(&Text::new(g.label.clone(), (px, py + 8), label_font.clone()))
                        .map_err(draw_err)?;
                    for (bi, v) in g.values.iter().enumerate() {
                        if v.is_none() {
                            let (x0, x1) = place(gi, bi);
                            let (px, py) = $chart.backend_coord(&((x0 + x1) / 2.0, $base));
                            root.draw(&Text::new("x", (px - 3, py - 10), (FONT, 12).into_font().color(&RED)))
                                .map_err(draw_err)?;
                        }
                    }
                }
            }};
        }
        if log {
            let lo = (min.min(1.0) / 2.0).max(1e-4);
            let hi = (max.max(1.0) * 2.0).min(1e4);
            // Ticks at 1, 2 and 5 per decade, printed short: plotters' own
            // log-scale labels print binary noise (0.30000000000000004).
            let ys = (lo..hi).log_scale().with_key_points(super::figure::y_ticks(lo, hi));
            let mut chart = builder.build_cartesian_2d(0f64..units, ys).map_err(draw_err)?;
            chart
                .configure_mesh()
                .disable_x_mesh()
                .x_labels(0)
                .y_desc(y_desc)
                .y_label_formatter(&super::figure::format_tick)
                .draw()
                .map_err(draw_err)?;
            draw_bars!(chart, lo);
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(0.0, 1.0), (units, 1.0)],
                    BLACK.stroke_width(2),
                )))
                .map_err(draw_err)?;
        } else {
            let hi = if max > 0.0 { max * 1.15 } else { 1.0 };
            let mut chart = builder.build_cartesian_2d(0f64..units, 0f64..hi).map_err(draw_err)?;
            chart.configure_mesh().disable_x_mesh().x_labels(0).y_desc(y_desc).draw().map_err(draw_err)?;
            draw_bars!(chart, 0.0);
        }
        root.present().map_err(draw_err)?;
    }
    Ok(svg)
}

/// Figure 7's SVG: GElements/s of every `ok` row.
pub fn figure7_svg(rows: &[Row]) -> Result<String, ChartError> {
    let bars = variant_order(rows);
    let gs = groups(rows, &bars, &|b, s, v| ok_row(rows, b, s, v).and_then(|r| r.gelems));
    let device = rows.first().map(|r| r.device.as_str()).unwrap_or("");
    let labels: Vec<String> = bars.iter().map(Variant::to_string).collect();
    bar_chart(
        &format!("Stencils: giga-elements updated per second ({device})"),
        "GElements/s",
        &labels,
        &gs,
        false,
    )
}

/// Figure 8's bar of the fastest Lift variant per group.
const BEST: &str = "best Lift";

/// Figure 8's SVG: Halide's median over each Lift variant's median (above
/// 1 Lift is faster) and over the fastest one's (`best Lift`), with the
/// geometric mean over the groups.
pub fn figure8_svg(rows: &[Row]) -> Result<String, ChartError> {
    let lifts: Vec<Variant> = variant_order(rows).into_iter().filter(Variant::is_lift_named).collect();
    // One bar per Lift variant, then `None`: the best Lift bar.
    let bars: Vec<Option<&Variant>> = lifts.iter().map(Some).chain([None]).collect();
    let halide = Variant::peer(HALIDE);
    // Each Lift variant on Halide's clock (its host-timed twin where Halide
    // was host-timed); `mixed`: some bar compares two clocks.
    let mixed = std::cell::Cell::new(false);
    let one = |b: &str, s: &str, v: &Variant| {
        let h = ok_row(rows, b, s, &halide)?;
        let (l, same) = crate::harness::clock::on_clock_of(|v| ok_row(rows, b, s, v), v, h)?;
        let (h, l) = (h.median_ms?, l.median_ms?);
        mixed.set(mixed.get() || !same);
        (l > 0.0).then(|| h / l)
    };
    // The best Lift bar: the fastest Lift variant of the group.
    let speedup = |b: &str, s: &str, bar: &Option<&Variant>| match bar {
        Some(v) => one(b, s, v),
        None => lifts.iter().filter_map(|l| one(b, s, l)).max_by(|x, y| x.total_cmp(y)),
    };
    let mut gs = groups(rows, &bars, &speedup);
    let means: Vec<Option<f64>> = (0..bars.len())
        .map(|i| {
            let xs: Vec<f64> = gs.iter().filter_map(|g| g.values[i]).collect();
            geometric_mean(&xs)
        })
        .collect();
    gs.push(Group { label: "geo. mean".into(), values: means });
    let device = rows.first().map(|r| r.device.as_str()).unwrap_or("");
    let clocks = if mixed.get() { "; Halide host-timed, Lift by profiling events" } else { "" };
    let labels: Vec<String> = bars.iter().map(|b| b.map_or(BEST.to_string(), Variant::to_string)).collect();
    bar_chart(
        &format!("Stencils: speedup of Lift over Halide ({device}{clocks})"),
        "speedup over Halide",
        &labels,
        &gs,
        true,
    )
}

/// Writes both figures as SVG and PDF into `out_dir` from one results
/// file of the stencil suite; returns the files written.
pub fn render_stencil_figures(csv: &Path, out_dir: &Path) -> Result<Vec<PathBuf>, ChartError> {
    render_stencil_figures_with_fonts(csv, out_dir, &FontSource::System)
}

/// [`render_stencil_figures`] with the fonts taken from `fonts`.
pub fn render_stencil_figures_with_fonts(
    csv: &Path,
    out_dir: &Path,
    fonts: &FontSource,
) -> Result<Vec<PathBuf>, ChartError> {
    let rows = super::suite_rows(csv)?;
    let mut written = super::write_figures(
        &[("cgo18-figure7", figure7_svg(&rows)?), ("cgo18-figure8", figure8_svg(&rows)?)],
        out_dir,
        fonts,
    )?;
    let table = out_dir.join("cgo18-summary.md");
    super::write(&table, super::stencil_table::summary_markdown(&rows).as_bytes())?;
    written.push(table);
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The log axis is labelled on the 1-2-5 ladder in short decimals, not
    /// with plotters' defaults (which printed 0.30000000000000004).
    #[test]
    fn log_axis_labels_are_short_decimals() {
        let g = |label: &str, v: f64| Group { label: label.into(), values: vec![Some(v)] };
        let svg = bar_chart("t", "speedup", &["a".into()], &[g("x", 0.31), g("y", 1.7)], true).expect("svg");
        let labels: Vec<&str> = svg.lines().map(str::trim).filter(|l| l.parse::<f64>().is_ok()).collect();
        assert!(labels.contains(&"0.2") && labels.contains(&"0.5") && labels.contains(&"1"), "{labels:?}");
        assert!(labels.iter().all(|l| l.len() <= 4), "long tick label among {labels:?}");
    }
}
