//! Figure 8 from synthetic result files: both outputs, what is and is not
//! drawn as a bar, the PDF's text, and errors for bad input.

use std::path::{Path, PathBuf};
use std::process::Command;

use lift::harness::chart::{
    build_panels, display_name, geometric_mean, legend_label, read_results, render_figure8,
    render_figure8_with_fonts, speedup_table, variant_color, Bar, Cell, FontSource, Status, RESULTS_HEADER,
};
use lift::harness::variant_name::{Level, Variant};

const NVIDIA: &str = "NVIDIA GeForce GTX TITAN X";
const AMD: &str = "AMD Radeon R9 295X2";

/// A scratch directory unique to one test.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("chart-tests").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

/// One CSV line following the contract; unused numbers are left empty.
fn row(bench: &str, size: &str, variant: &str, status: &str, median: Option<f64>, device: &str) -> String {
    let median = median.map(|m| m.to_string()).unwrap_or_default();
    format!(
        "{bench},{size},{variant},{status},{median},{median},{median},,,10,1e-6,12.5,100,4096,,,,,profiling,\
         -cl-mad-enable,{device},535.1,OpenCL 3.0,abc123,2024-01-01,\"note, with comma\",,N=1024"
    )
}

fn write_csv(path: &Path, rows: &[String]) {
    let mut text = RESULTS_HEADER.join(",");
    text.push('\n');
    for r in rows {
        text.push_str(r);
        text.push('\n');
    }
    std::fs::write(path, text).expect("write csv");
}

/// Two devices. NVIDIA: N-Body at two sizes (one level 20x slower, one 2x
/// faster), MM with a CLBlast bar, Convolution with a FAILED and an error
/// row, K-Means missing barrier+cf. AMD: MD whose reference failed.
fn synthetic(dir: &Path) -> Vec<PathBuf> {
    let nvidia = dir.join("nvidia.csv");
    let mut rows = Vec::new();
    for (size, base) in [("small", 10.0), ("large", 80.0)] {
        rows.push(row("nbody-nvidia", size, "reference", "ok", Some(base), NVIDIA));
        rows.push(row("nbody-nvidia", size, "none", "ok", Some(base * 20.0), NVIDIA));
        rows.push(row("nbody-nvidia", size, "barrier", "ok", Some(base * 1.5), NVIDIA));
        rows.push(row("nbody-nvidia", size, "barrier+cf", "ok", Some(base * 1.1), NVIDIA));
        rows.push(row("nbody-nvidia", size, "all", "ok", Some(base / 2.0), NVIDIA));
    }
    rows.push(row("mm-nvidia", "small", "reference", "ok", Some(4.0), NVIDIA));
    for v in ["none", "barrier", "barrier+cf", "all"] {
        rows.push(row("mm-nvidia", "small", v, "ok", Some(5.0), NVIDIA));
    }
    rows.push(row("mm-nvidia", "small", "clblast", "ok", Some(2.0), NVIDIA));
    rows.push(row("convolution", "small", "reference", "ok", Some(3.0), NVIDIA));
    rows.push(row("convolution", "small", "none", "FAILED", Some(30.0), NVIDIA));
    rows.push(row("convolution", "small", "barrier", "error", None, NVIDIA));
    rows.push(row("convolution", "small", "barrier+cf", "ok", Some(3.0), NVIDIA));
    rows.push(row("convolution", "small", "all", "ok", Some(3.0), NVIDIA));
    rows.push(row("kmeans", "small", "reference", "ok", Some(1.0), NVIDIA));
    for v in ["none", "barrier", "all"] {
        rows.push(row("kmeans", "small", v, "ok", Some(1.0), NVIDIA));
    }
    write_csv(&nvidia, &rows);

    let amd = dir.join("amd.csv");
    let mut rows = vec![row("md", "small", "reference", "FAILED", Some(2.0), AMD)];
    for v in ["none", "barrier", "barrier+cf", "all"] {
        rows.push(row("md", "small", v, "ok", Some(2.0), AMD));
    }
    rows.push(row("nbody-amd", "small", "reference", "ok", Some(6.0), AMD));
    for v in ["none", "barrier", "barrier+cf", "all"] {
        rows.push(row("nbody-amd", "small", v, "ok", Some(6.3), AMD));
    }
    rows.push(row("nbody-amd", "small", "clblast", "skipped", None, AMD));
    write_csv(&amd, &rows);
    vec![nvidia, amd]
}

/// The contents of the SVG's `<text>` elements, trimmed.
fn svg_texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| Some(t.split_once('>')?.1.split_once("</text>")?.0.trim().to_string()))
        .collect()
}

fn all_rows(csvs: &[PathBuf]) -> Vec<lift::harness::results::Row> {
    csvs.iter().flat_map(|c| read_results(c).expect("synthetic CSV parses")).collect()
}

#[test]
fn renders_svg_and_pdf_with_every_label() {
    let dir = scratch("render");
    let csvs = synthetic(&dir);
    let files = render_figure8(&csvs, &dir.join("out")).expect("render");
    assert_eq!(files, vec![dir.join("out/figure8.svg"), dir.join("out/figure8.pdf")]);
    let svg = std::fs::read_to_string(&files[0]).expect("svg");
    // A label too wide for its group is wrapped onto two text lines.
    let texts = svg_texts(&svg).join(" ");
    for bench in ["nbody-nvidia", "mm-nvidia", "convolution", "kmeans", "md", "nbody-amd"] {
        assert!(texts.contains(&display_name(bench)), "benchmark label {bench} missing from the SVG");
    }
    for label in ["small", "large", "geo. mean", NVIDIA, AMD, "speedup over reference", "reference = 1.0"] {
        assert!(svg.contains(label), "`{label}` missing from the SVG");
    }
    for v in Bar::COMPARED {
        assert!(svg.contains(legend_label(v)), "legend entry for {v} missing");
    }
    // Every non-bar is marked where its bar would be.
    let texts = svg_texts(&svg);
    for marker in ["FAILED", "error", "skipped", "missing", "no ref"] {
        assert!(texts.iter().any(|t| t == marker), "marker `{marker}` missing");
    }
    let pdf = std::fs::read(&files[1]).expect("pdf");
    assert!(pdf.starts_with(b"%PDF-"), "not a PDF");
    // Text is embedded as fonts, not drawn as paths or an image.
    assert!(pdf.windows(9).any(|w| w == b"/FontFile"), "the PDF embeds no font");
}

#[test]
fn failed_rows_are_not_bars() {
    let dir = scratch("bars");
    let csvs = synthetic(&dir);
    let panels = build_panels(&all_rows(&csvs));
    assert_eq!(panels.len(), 2);
    assert_eq!(panels[0].device, NVIDIA);
    let conv = panels[0].groups.iter().find(|g| g.benchmark == "convolution").expect("convolution group");
    assert_eq!(conv.cells[0], (Bar::None, Cell::NotOk(Status::Failed)));
    assert_eq!(conv.cells[1], (Bar::Barrier, Cell::NotOk(Status::Error)));
    let kmeans = panels[0].groups.iter().find(|g| g.benchmark == "kmeans").expect("kmeans group");
    assert_eq!(kmeans.cells[2], (Bar::BarrierCf, Cell::Missing));
    let md = panels[1].groups.iter().find(|g| g.benchmark == "md").expect("md group");
    assert!(md.cells.iter().all(|(_, c)| *c == Cell::NoReference));

    // Each variant's fill colour appears once per bar plus once in the legend.
    let svg = lift::harness::chart::figure8_svg(&panels).expect("svg");
    for v in Bar::COMPARED {
        let c = variant_color(v);
        let fill = format!("fill=\"#{:02X}{:02X}{:02X}\"", c.0, c.1, c.2);
        let bars = panels
            .iter()
            .flat_map(|p| p.groups.iter().flat_map(|g| g.cells.iter()).chain(p.geo_mean.iter()))
            .filter(|(cv, c)| *cv == v && c.speedup().is_some())
            .count();
        assert_eq!(svg.matches(&fill).count(), bars + 1, "bars of {v}");
    }
}

#[test]
fn speedups_and_geometric_means() {
    let dir = scratch("speedups");
    let panels = build_panels(&all_rows(&synthetic(&dir)));
    let nbody = &panels[0].groups[0];
    assert_eq!((nbody.benchmark.as_str(), nbody.size.as_str()), ("nbody-nvidia", "small"));
    assert_eq!(nbody.cells[0], (Bar::None, Cell::Speedup(0.05)));
    assert_eq!(nbody.cells[3], (Bar::All, Cell::Speedup(2.0)));
    // CLBlast only where a benchmark has it.
    assert_eq!(nbody.cells.len(), 4);
    let mm = panels[0].groups.iter().find(|g| g.benchmark == "mm-nvidia").expect("mm group");
    assert_eq!(mm.cells[4], (Bar::Clblast, Cell::Speedup(2.0)));
    // `all` on NVIDIA: 2, 2, 0.8, 1, 1 -> geometric mean 3.2^(1/5).
    let all = panels[0].geo_mean.iter().find(|(v, _)| *v == Bar::All).expect("all mean").1;
    let expected = 3.2f64.powf(0.2);
    assert!((all.speedup().expect("a mean") - expected).abs() < 1e-12);
    // AMD's only CLBlast row was skipped: its mean is marked, not drawn.
    assert_eq!(panels[1].geo_mean.last(), Some(&(Bar::Clblast, Cell::Missing)));
    let md = panels[1].groups.iter().find(|g| g.benchmark == "md").expect("md group");
    assert_eq!(md.cells.len(), 4, "no CLBlast slot for a benchmark without a CLBlast row");
    assert_eq!(geometric_mean(&[]), None);
    assert!((geometric_mean(&[0.5, 2.0]).expect("mean") - 1.0).abs() < 1e-12);
}

#[test]
fn speedup_table_lists_everything() {
    let dir = scratch("table");
    let table = speedup_table(&all_rows(&synthetic(&dir)));
    assert!(table.contains(&format!("Speedup over reference on {NVIDIA}")));
    assert!(table.contains(&format!("Speedup over reference on {AMD}")));
    let conv = table.lines().find(|l| l.starts_with("convolution")).expect("convolution line");
    assert!(conv.contains("FAILED") && conv.contains("error") && conv.contains("1.00x"), "{conv}");
    let nbody = table.lines().find(|l| l.starts_with("nbody-nvidia  small")).expect("nbody line");
    assert!(nbody.contains("0.050x") && nbody.contains("2.00x"), "{nbody}");
    let md = table.lines().find(|l| l.starts_with("md")).expect("md line");
    assert!(md.contains("FAILED") && md.contains("no ref"), "{md}");
    assert_eq!(table.lines().filter(|l| l.starts_with("geo. mean")).count(), 2);
}

#[test]
fn pdf_text_is_extractable_and_renders() {
    let dir = scratch("pdftext");
    let files = render_figure8(&synthetic(&dir), &dir).expect("render");
    let pdf = &files[1];
    match Command::new("pdftotext").arg(pdf).arg("-").output() {
        Ok(out) if out.status.success() => {
            let text = String::from_utf8_lossy(&out.stdout);
            for label in ["N-Body (NVIDIA)", "Convolution", "geo. mean", "speedup over reference", "FAILED"] {
                assert!(text.contains(label), "`{label}` not extractable from the PDF:\n{text}");
            }
        }
        _ => println!("pdftotext (poppler-utils) not available: text extraction check skipped"),
    }
    let png_prefix = dir.join("figure8");
    match Command::new("pdftoppm")
        .args(["-png", "-r", "60", "-singlefile"])
        .arg(pdf)
        .arg(&png_prefix)
        .output()
    {
        Ok(out) if out.status.success() => {
            let png = std::fs::read(png_prefix.with_extension("png")).expect("png written");
            assert!(png.starts_with(b"\x89PNG"), "pdftoppm did not write a PNG");
        }
        _ => println!("pdftoppm (poppler-utils) not available: rendering check skipped"),
    }
}

/// A machine without fonts (here: system fonts hidden, an empty font
/// directory searched instead) still gets both files, with the built-in
/// DejaVu Sans embedded in the PDF.
#[test]
fn charts_without_system_fonts_use_the_built_in_font() {
    let dir = scratch("nofont");
    let empty = dir.join("no-fonts-here");
    std::fs::create_dir_all(&empty).expect("dir");
    for (name, fonts) in [("dirs", FontSource::Dirs(vec![empty])), ("builtin", FontSource::BuiltIn)] {
        let out = dir.join(name);
        let files = render_figure8_with_fonts(&synthetic(&dir), &out, &fonts).expect("render without fonts");
        let pdf = std::fs::read(&files[1]).expect("pdf");
        assert!(pdf.windows(9).any(|w| w == b"/FontFile"), "the PDF embeds no font");
        assert!(pdf.windows(10).any(|w| w == b"DejaVuSans"), "the built-in font is not the one embedded");
        if let Ok(o) = Command::new("pdftotext").arg(&files[1]).arg("-").output() {
            if o.status.success() {
                let text = String::from_utf8_lossy(&o.stdout);
                assert!(text.contains("speedup over reference"), "text not extractable:\n{text}");
            }
        }
    }
}

fn bad_csv(name: &str, header: &str, body: &[&str]) -> (PathBuf, String) {
    let dir = scratch(name);
    let path = dir.join("results.csv");
    let mut text = format!("{header}\n");
    for line in body {
        text.push_str(line);
        text.push('\n');
    }
    std::fs::write(&path, text).expect("write");
    let err = read_results(&path).expect_err("bad CSV must be rejected").to_string();
    assert!(err.contains(&path.display().to_string()), "error does not name the file: {err}");
    (path, err)
}

#[test]
fn bad_csv_errors_name_file_line_and_column() {
    let header = RESULTS_HEADER.join(",");
    let good = row("md", "small", "reference", "ok", Some(1.0), AMD);

    let (_, err) = bad_csv("bad-header", &header.replace("median_ms", "median"), &[]);
    assert!(err.contains(":1:") && err.contains("`median_ms`"), "{err}");

    let (_, err) = bad_csv("bad-number", &header, &[&good, &good.replace(",1,1,1,", ",abc,1,1,")]);
    assert!(err.contains(":3: column `median_ms`") && err.contains("abc"), "{err}");

    let (_, err) = bad_csv("bad-status", &header, &[&good.replace(",ok,", ",passed,")]);
    assert!(err.contains(":2: column `status`") && err.contains("passed"), "{err}");

    let (_, err) = bad_csv("bad-variant", &header, &[&good.replace(",reference,", ",fast,")]);
    assert!(err.contains(":2: column `variant`"), "{err}");

    let (_, err) = bad_csv("short-row", &header, &[&good, "md,small,all"]);
    assert!(err.contains(":3") && err.contains("3 fields, expected 28"), "{err}");

    let (_, err) = bad_csv("ok-without-median", &header, &[&row("md", "small", "all", "ok", None, AMD)]);
    assert!(err.contains(":2: column `median_ms`"), "{err}");

    let dir = scratch("empty");
    let empty = dir.join("results.csv");
    std::fs::write(&empty, "").expect("write");
    assert!(read_results(&empty).expect_err("empty file").to_string().contains("empty file"));
    let missing = dir.join("nope.csv");
    assert!(read_results(&missing).expect_err("missing file").to_string().contains("nope.csv"));
}

#[test]
fn header_only_file_has_nothing_to_chart() {
    let dir = scratch("header-only");
    let path = dir.join("results.csv");
    write_csv(&path, &[]);
    assert_eq!(read_results(&path).expect("valid").len(), 0);
    let err = render_figure8(&[path], &dir).expect_err("nothing to chart");
    assert!(err.to_string().contains("no result rows"), "{err}");
}

/// All twelve of the paper's benchmarks at two sizes on two devices, with
/// speedups from 0.05x to 2x: the figure the harness makes for real.
#[test]
fn full_figure_renders() {
    let dir = scratch("full");
    let benches = [
        "nbody-nvidia",
        "nbody-amd",
        "md",
        "kmeans",
        "nn",
        "mri-q",
        "convolution",
        "atax",
        "gemv",
        "gesummv",
        "mm-amd",
        "mm-nvidia",
    ];
    let mut csvs = Vec::new();
    for (d, device) in [NVIDIA, AMD].iter().enumerate() {
        let mut rows = Vec::new();
        for (b, bench) in benches.iter().enumerate() {
            for size in ["small", "large"] {
                rows.push(row(bench, size, "reference", "ok", Some(10.0), device));
                // Deterministic spread of slowdowns and speedups per level.
                let k = (b * 7 + d * 3) % 11;
                let none = 10.0 / (0.05 + 0.09 * k as f64);
                for (v, median) in [
                    ("none", none),
                    ("barrier", none * 0.8),
                    ("barrier+cf", none * 0.6),
                    ("all", 10.0 / (0.9 + 0.02 * k as f64)),
                ] {
                    rows.push(row(bench, size, v, "ok", Some(median), device));
                }
                if bench.starts_with("mm") || *bench == "gemv" {
                    rows.push(row(bench, size, "clblast", "ok", Some(9.0 + k as f64 * 0.3), device));
                }
            }
        }
        let path = dir.join(format!("{d}.csv"));
        write_csv(&path, &rows);
        csvs.push(path);
    }
    let files = render_figure8(&csvs, &dir).expect("render");
    let texts = svg_texts(&std::fs::read_to_string(&files[0]).expect("svg"));
    for bench in benches {
        let name = display_name(bench);
        // Long names may be wrapped onto two lines; every word must be there.
        for word in name.split(' ') {
            assert!(texts.iter().any(|t| t.split(' ').any(|w| w == word)), "`{word}` of {name} missing");
        }
    }
    assert!(!texts.iter().any(|t| t == "FAILED" || t == "missing"), "nothing failed, nothing is marked");
    let png_prefix = dir.join("figure8");
    match Command::new("pdftoppm")
        .args(["-png", "-r", "50", "-singlefile"])
        .arg(&files[1])
        .arg(&png_prefix)
        .output()
    {
        Ok(out) if out.status.success() => assert!(png_prefix.with_extension("png").exists()),
        _ => println!("pdftoppm (poppler-utils) not available: rendering check skipped"),
    }
}

#[test]
fn output_is_deterministic() {
    let dir = scratch("determinism");
    let csvs = synthetic(&dir);
    // svg2pdf's own output order varies with hash seeds, so try a few.
    let first = render_figure8(&csvs, &dir.join("0")).expect("first render");
    for n in 1..4 {
        let again = render_figure8(&csvs, &dir.join(n.to_string())).expect("render again");
        for (x, y) in first.iter().zip(&again) {
            let same = std::fs::read(x).expect("read") == std::fs::read(y).expect("read");
            assert!(same, "{} differs from {}", y.display(), x.display());
        }
    }
}

/// Rows of a config's named variants (`lift-derived`), explored programs
/// and peers are in results.csv but not in Figure 8: they are left out,
/// while an unknown variant is still an error.
#[test]
fn named_variants_are_left_out_of_figure8() {
    let dir = scratch("named-variants");
    let path = dir.join("results.csv");
    write_csv(
        &path,
        &[
            row("dot", "small", "reference", "ok", Some(1.0), AMD),
            row("dot", "small", "all", "ok", Some(0.5), AMD),
            row("dot", "small", "lift-derived", "ok", Some(0.6), AMD),
            row("dot", "small", "explored@pocl", "ok", Some(0.7), AMD),
        ],
    );
    let rows = read_results(&path).expect("named variants parse");
    assert_eq!(rows.len(), 2);
    assert!(rows.iter().all(|r| matches!(r.variant, Variant::Reference | Variant::Level(Level::All))));
    write_csv(&path, &[row("dot", "small", "lift-", "ok", Some(0.6), AMD)]);
    let err = read_results(&path).expect_err("`lift-` names no variant").to_string();
    assert!(err.contains("column `variant`"), "{err}");
}
