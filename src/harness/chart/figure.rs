//! Draws Figure 8 as SVG with plotters: one panel per device, stacked, each
//! with grouped bars per benchmark and size on a log speedup axis.
//!
//! The x axis is laid out by hand in "slot" units (one bar = one unit) so
//! that groups with and without a CLBlast bar can sit side by side, and the
//! axis labels are drawn by hand in two tiers (size, then benchmark) because
//! plotters only labels numeric ticks.

use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::model::{format_speedup, Cell, Panel};
use super::names::display_name;
use super::results::Bar;
use super::ChartError;

/// Horizontal pixels per bar.
const SLOT_PX: f64 = 13.0;
/// Empty units between two groups of bars.
const GROUP_GAP: f64 = 1.4;
/// Extra empty units before the geometric-mean group.
const GEO_GAP: f64 = 1.5;
/// The least height of the legend strip above the panels.
const LEGEND_H: u32 = 48;
const PANEL_H: u32 = 500;
const X_LABEL_H: u32 = 78;
const Y_LABEL_W: u32 = 86;
const MARGIN_RIGHT: u32 = 24;
const MIN_WIDTH: u32 = 900;
const FONT: &str = "sans-serif";

/// The colour of each compared variant: a light-to-dark ramp for the Lift
/// levels (the paper's "dark red" is the fully optimised one) and a
/// contrasting blue for the library.
pub fn variant_color(v: Bar) -> RGBColor {
    match v {
        Bar::None => RGBColor(0xfd, 0xcc, 0x8a),
        Bar::Barrier => RGBColor(0xfc, 0x8d, 0x59),
        Bar::BarrierCf => RGBColor(0xe3, 0x4a, 0x33),
        Bar::All => RGBColor(0xb3, 0x00, 0x00),
        Bar::Clblast => RGBColor(0x45, 0x75, 0xb4),
        Bar::Reference => BLACK,
    }
}

/// The legend's wording for a variant; it starts with the `results.csv`
/// spelling so that the chart and the CSV read alike.
pub fn legend_label(v: Bar) -> &'static str {
    match v {
        Bar::None => "none (no optimisation)",
        Bar::Barrier => "barrier (barrier elimination)",
        Bar::BarrierCf => "barrier+cf (+ control-flow simpl.)",
        Bar::All => "all (+ array-access simpl.)",
        Bar::Clblast => "clblast (CLBlast library)",
        Bar::Reference => "reference",
    }
}

type Err = ChartError;

fn draw_err<E: std::fmt::Debug>(e: E) -> ChartError {
    ChartError::Draw(format!("{e:?}"))
}

/// One group's place on the x axis.
struct Placed<'a> {
    /// Benchmark label for the lower tier; `None` for the geo-mean group,
    /// which is labelled on its own.
    benchmark: Option<&'a str>,
    size: &'a str,
    cells: &'a [(Bar, Cell)],
    /// x of the group's first bar's left edge, in slot units.
    start: f64,
}

fn place(panel: &Panel) -> (Vec<Placed<'_>>, f64) {
    let mut placed = Vec::new();
    let mut x = GROUP_GAP / 2.0;
    for g in &panel.groups {
        placed.push(Placed { benchmark: Some(&g.benchmark), size: &g.size, cells: &g.cells, start: x });
        x += g.cells.len() as f64 + GROUP_GAP;
    }
    x += GEO_GAP;
    placed.push(Placed { benchmark: None, size: "geo. mean", cells: &panel.geo_mean, start: x });
    x += panel.geo_mean.len() as f64 + GROUP_GAP / 2.0;
    (placed, x)
}

/// The y range: every speedup and 1.0 fit with room above for the value
/// labels and below for failure markers, and never narrower than 0.5..2.
fn y_range(panel: &Panel) -> (f64, f64) {
    let all = panel
        .groups
        .iter()
        .flat_map(|g| g.cells.iter())
        .chain(panel.geo_mean.iter())
        .filter_map(|(_, c)| c.speedup());
    let (lo, hi) = all.fold((1.0f64, 1.0f64), |(lo, hi), s| (lo.min(s), hi.max(s)));
    // Bounds keep absurd values (a broken timer) from squashing the chart;
    // bars beyond them are clipped but their printed values are exact.
    let lo = (lo / 2.2).clamp(1e-4, 0.5);
    let hi = (hi * 3.5).clamp(2.0, 1e4);
    (lo, hi)
}

/// Tick values on a 1-2-5 ladder within the range.
pub(super) fn y_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let mut ticks = Vec::new();
    let mut decade = lo.log10().floor() as i32;
    while 10f64.powi(decade) <= hi {
        for m in [1.0, 2.0, 5.0] {
            let t = m * 10f64.powi(decade);
            if t >= lo && t <= hi {
                ticks.push(t);
            }
        }
        decade += 1;
    }
    ticks
}

pub(super) fn format_tick(v: &f64) -> String {
    if *v >= 1.0 {
        format!("{v:.0}")
    } else {
        let s = format!("{v:.4}");
        s.trim_end_matches('0').to_string()
    }
}

/// Renders the panels as one SVG document.
pub fn figure8_svg(panels: &[Panel]) -> Result<String, ChartError> {
    let layouts: Vec<_> = panels.iter().map(place).collect();
    let max_units = layouts.iter().map(|(_, units)| *units).fold(0.0, f64::max);
    let width = ((max_units * SLOT_PX) as u32 + Y_LABEL_W + MARGIN_RIGHT + 10).max(MIN_WIDTH);
    let legend = legend_layout(&legend_variants(panels), width, clblast_label(panels));
    let legend_h = legend_height(&legend);
    let height = legend_h + PANEL_H * panels.len().max(1) as u32;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (width, height)).into_drawing_area();
        root.fill(&WHITE).map_err(draw_err)?;
        let (legend_area, rest) = root.split_vertically(legend_h);
        draw_legend(&legend_area, &legend)?;
        let areas = rest.split_evenly((panels.len().max(1), 1));
        for ((panel, (placed, units)), area) in panels.iter().zip(&layouts).zip(&areas) {
            draw_panel(&root, area, panel, placed, max_units.max(*units))?;
        }
        root.present().map_err(draw_err)?;
    }
    Ok(svg)
}

/// The CLBlast entry of the legend ([`legend_label`] and the bars' clock): CLBlast is
/// timed on the host, and so is the reference it is divided by unless the
/// file has no host-timed reference.
fn clblast_label(panels: &[Panel]) -> &'static str {
    if panels.iter().any(Panel::clblast_mixed_clocks) {
        "clblast (CLBlast library), host-timed / reference by profiling"
    } else {
        "clblast (CLBlast library) / host-timed reference"
    }
}

fn legend_variants(panels: &[Panel]) -> Vec<Bar> {
    let clblast = panels.iter().any(Panel::has_clblast);
    Bar::COMPARED.into_iter().filter(|v| *v != Bar::Clblast || clblast).collect()
}

/// Legend font size (plotters units) and the height of one legend row.
const LEGEND_FONT: f64 = 17.0;
const LEGEND_ROW_H: i32 = 28;

/// An estimate of a text's width in pixels: the SVG backend has no font
/// metrics, and DejaVu Sans averages about 0.58 em per character.
fn text_width(s: &str, font: f64) -> i32 {
    (s.chars().count() as f64 * font / 1.24 * 0.58) as i32
}

/// One legend entry: a swatch (`Some` variant), the reference line (`None`
/// with `cross == false`) or the failure cross.
struct LegendItem {
    variant: Option<Bar>,
    cross: bool,
    label: &'static str,
}

impl LegendItem {
    fn width(&self) -> i32 {
        22 + text_width(self.label, LEGEND_FONT) + 26
    }
}

/// Flows the legend entries into centred rows that fit `width`; returns each
/// entry with its position relative to the legend area.
fn legend_layout(variants: &[Bar], width: u32, clblast: &'static str) -> Vec<(LegendItem, (i32, i32))> {
    let label = |v: Bar| if v == Bar::Clblast { clblast } else { legend_label(v) };
    let mut items: Vec<LegendItem> =
        variants.iter().map(|v| LegendItem { variant: Some(*v), cross: false, label: label(*v) }).collect();
    items.push(LegendItem { variant: None, cross: false, label: "reference = 1.0" });
    items.push(LegendItem { variant: None, cross: true, label: "failed / missing" });
    let max_w = width as i32 - 20;
    let mut rows: Vec<Vec<LegendItem>> = vec![Vec::new()];
    let mut row_w = 0;
    for item in items {
        let w = item.width();
        if row_w + w > max_w && !rows.last().is_some_and(Vec::is_empty) {
            rows.push(Vec::new());
            row_w = 0;
        }
        row_w += w;
        if let Some(r) = rows.last_mut() {
            r.push(item);
        }
    }
    let mut placed = Vec::new();
    for (r, row) in rows.into_iter().enumerate() {
        let total: i32 = row.iter().map(LegendItem::width).sum();
        let mut x = ((width as i32 - total) / 2).max(10);
        let y = 22 + LEGEND_ROW_H * r as i32;
        for item in row {
            let w = item.width();
            placed.push((item, (x, y)));
            x += w;
        }
    }
    placed
}

fn legend_height(layout: &[(LegendItem, (i32, i32))]) -> u32 {
    let last_y = layout.iter().map(|(_, (_, y))| *y).max().unwrap_or(0);
    (last_y + LEGEND_ROW_H).max(LEGEND_H as i32) as u32
}

fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    layout: &[(LegendItem, (i32, i32))],
) -> Result<(), Err> {
    let font = (FONT, LEGEND_FONT).into_font().color(&BLACK).pos(Pos::new(HPos::Left, VPos::Center));
    for (item, (x, y)) in layout {
        let (x, y) = (*x, *y);
        match (item.variant, item.cross) {
            (Some(v), _) => area
                .draw(&Rectangle::new(
                    [(x, y - 8), (x + 16, y + 8)],
                    ShapeStyle::from(&variant_color(v)).filled(),
                ))
                .map_err(draw_err)?,
            (None, true) => draw_cross(area, (x + 8, y), 6)?,
            (None, false) => area
                .draw(&PathElement::new(vec![(x, y), (x + 16, y)], BLACK.stroke_width(2)))
                .map_err(draw_err)?,
        }
        area.draw(&Text::new(item.label, (x + 22, y), font.clone())).map_err(draw_err)?;
    }
    Ok(())
}

fn draw_cross<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    (x, y): (i32, i32),
    r: i32,
) -> Result<(), Err> {
    let style = BLACK.stroke_width(2);
    area.draw(&PathElement::new(vec![(x - r, y - r), (x + r, y + r)], style)).map_err(draw_err)?;
    area.draw(&PathElement::new(vec![(x - r, y + r), (x + r, y - r)], style)).map_err(draw_err)?;
    Ok(())
}

fn draw_panel<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    area: &DrawingArea<DB, plotters::coord::Shift>,
    panel: &Panel,
    placed: &[Placed<'_>],
    units: f64,
) -> Result<(), Err> {
    let (lo, hi) = y_range(panel);
    let mut chart = ChartBuilder::on(area)
        .caption(&panel.device, (FONT, 26))
        .margin_top(6)
        .margin_right(MARGIN_RIGHT)
        .x_label_area_size(X_LABEL_H)
        .y_label_area_size(Y_LABEL_W)
        .build_cartesian_2d(0f64..units, (lo..hi).log_scale().with_key_points(y_ticks(lo, hi)))
        .map_err(draw_err)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .y_desc("speedup over reference")
        .y_label_formatter(&format_tick)
        .y_label_style((FONT, 16))
        .axis_desc_style((FONT, 18))
        .bold_line_style(BLACK.mix(0.12))
        .draw()
        .map_err(draw_err)?;

    let (_, y_px) = chart.plotting_area().get_pixel_range();
    draw_separators(&mut chart, placed, lo, hi)?;

    // Bars first, then the reference line over them so it stays visible,
    // then the value labels and failure marks over both.
    let bar_x = |p: &Placed<'_>, i: usize| (p.start + i as f64 + 0.08, p.start + i as f64 + 0.92);
    let bars = placed.iter().flat_map(|p| {
        p.cells.iter().enumerate().filter_map(move |(i, (variant, cell))| {
            let s = cell.speedup()?;
            let (x0, x1) = bar_x(p, i);
            Some(Rectangle::new(
                [(x0, lo), (x1, s.clamp(lo, hi))],
                ShapeStyle::from(&variant_color(*variant)).filled(),
            ))
        })
    });
    chart.draw_series(bars).map_err(draw_err)?;
    chart
        .draw_series(std::iter::once(PathElement::new(vec![(0.0, 1.0), (units, 1.0)], BLACK.stroke_width(2))))
        .map_err(draw_err)?;

    let up = Pos::new(HPos::Left, VPos::Center);
    let value_font =
        (FONT, 12).into_font().color(&BLACK.mix(0.8)).transform(FontTransform::Rotate270).pos(up);
    let mark_font = (FONT, 12).into_font().color(&RED.mix(0.9)).transform(FontTransform::Rotate270).pos(up);
    for p in placed {
        for (i, (_, cell)) in p.cells.iter().enumerate() {
            let (x0, x1) = bar_x(p, i);
            let xc = (x0 + x1) / 2.0;
            match cell {
                // The exact value is printed, so a bar clipped at the axis
                // bounds still reads correctly.
                Cell::Speedup(s) => {
                    let (px, py) = chart.backend_coord(&(xc, s.clamp(lo, hi)));
                    root.draw(&Text::new(format_speedup(*s), (px, py - 3), value_font.clone()))
                        .map_err(draw_err)?;
                }
                other => {
                    let (px, py) = chart.backend_coord(&(xc, lo));
                    draw_cross(root, (px, py - 9), 4)?;
                    root.draw(&Text::new(other.marker(), (px, py - 18), mark_font.clone()))
                        .map_err(draw_err)?;
                }
            }
        }
    }

    draw_x_labels(root, &chart, placed, lo, y_px.end)
}

/// Faint vertical lines between benchmarks (not between sizes of one).
fn draw_separators<DB: DrawingBackend>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<RangedCoordf64, LogCoord<f64>>>,
    placed: &[Placed<'_>],
    lo: f64,
    hi: f64,
) -> Result<(), Err> {
    let mut lines = Vec::new();
    for pair in placed.windows(2) {
        if pair[0].benchmark != pair[1].benchmark {
            let x = pair[1].start
                - if pair[1].benchmark.is_none() { (GROUP_GAP + GEO_GAP) / 2.0 } else { GROUP_GAP / 2.0 };
            lines.push(PathElement::new(vec![(x, lo), (x, hi)], BLACK.mix(0.25).stroke_width(1)));
        }
    }
    chart.draw_series(lines).map_err(draw_err)?;
    Ok(())
}

type LogCoord<T> = plotters::coord::combinators::WithKeyPoints<plotters::coord::combinators::LogCoord<T>>;

/// Two tiers under the axis: each group's size, then each benchmark's name
/// centred under all of its sizes (wrapped onto two lines where too wide).
fn draw_x_labels<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    chart: &ChartContext<'_, DB, Cartesian2d<RangedCoordf64, LogCoord<f64>>>,
    placed: &[Placed<'_>],
    lo: f64,
    axis_y: i32,
) -> Result<(), Err> {
    let size_font = (FONT, 16).into_font().color(&BLACK.mix(0.85)).pos(Pos::new(HPos::Center, VPos::Top));
    let bench_font = (FONT, 18).into_font().color(&BLACK).pos(Pos::new(HPos::Center, VPos::Top));
    let px = |x: f64| chart.backend_coord(&(x, lo)).0;
    let mut i = 0;
    while i < placed.len() {
        let first = &placed[i];
        let mut j = i;
        while j + 1 < placed.len() && placed[j + 1].benchmark == first.benchmark {
            j += 1;
        }
        let span_l = first.start;
        let last = &placed[j];
        let span_r = last.start + last.cells.len() as f64;
        match first.benchmark {
            Some(bench) => {
                for p in &placed[i..=j] {
                    let c = px(p.start + p.cells.len() as f64 / 2.0);
                    root.draw(&Text::new(p.size.to_string(), (c, axis_y + 6), size_font.clone()))
                        .map_err(draw_err)?;
                }
                let name = display_name(bench);
                let centre = (px(span_l) + px(span_r)) / 2;
                let room = (px(span_r) - px(span_l)) as f64 + GROUP_GAP * SLOT_PX;
                for (k, line) in wrap_label(&name, room, 17.0).iter().enumerate() {
                    root.draw(&Text::new(
                        line.clone(),
                        (centre, axis_y + 30 + 20 * k as i32),
                        bench_font.clone(),
                    ))
                    .map_err(draw_err)?;
                }
            }
            None => {
                let centre = (px(span_l) + px(span_r)) / 2;
                root.draw(&Text::new(first.size.to_string(), (centre, axis_y + 30), bench_font.clone()))
                    .map_err(draw_err)?;
            }
        }
        i = j + 1;
    }
    Ok(())
}

/// Splits a label at spaces into at most two lines when its estimated width
/// exceeds `room` pixels.
fn wrap_label(label: &str, room: f64, font_px: f64) -> Vec<String> {
    let width = |s: &str| s.chars().count() as f64 * font_px / 1.24 * 0.62;
    if width(label) <= room {
        return vec![label.to_string()];
    }
    // Break at the space closest to the middle, so both halves are short.
    let mid = label.len() / 2;
    match label.match_indices(' ').map(|(i, _)| i).min_by_key(|i| i.abs_diff(mid)) {
        Some(i) => vec![label[..i].to_string(), label[i + 1..].to_string()],
        None => vec![label.to_string()],
    }
}
