//! SVG to PDF with real, selectable text: the SVG is parsed by usvg with a
//! font database, and svg2pdf embeds subsets of the fonts so that the PDF's
//! text is glyphs that viewers can select and `pdftotext` can extract.

use std::path::PathBuf;
use std::sync::Arc;

use svg2pdf::usvg;
use svg2pdf::usvg::fontdb;

use super::ChartError;

/// Where fonts are looked up. Whatever the source, a lookup that finds no
/// sans-serif face falls back to the font built into the binary.
#[derive(Clone, Debug)]
pub enum FontSource {
    /// The system's font directories (and fontconfig's, where present).
    System,
    /// Only these directories.
    Dirs(Vec<PathBuf>),
    /// No lookup: only the built-in font (what a machine without fonts
    /// gets; the tests use it to hide the system's fonts).
    BuiltIn,
}

/// DejaVu Sans 2.37, unmodified (Bitstream Vera licence, which allows
/// redistribution in software: `fonts/LICENSE.txt`). Built in so a GPU
/// machine without a single font still gets its chart.
const BUILT_IN_FONT: &[u8] = include_bytes!("fonts/DejaVuSans.ttf");
const BUILT_IN_FAMILY: &str = "DejaVu Sans";

/// Families tried for the SVG's `sans-serif` text, best first. DejaVu Sans
/// comes from Debian's `fonts-dejavu-core`; the others are common stand-ins
/// on other machines.
const SANS_CANDIDATES: [&str; 5] = ["DejaVu Sans", "Liberation Sans", "Noto Sans", "Arial", "FreeSans"];

fn sans_family(db: &fontdb::Database) -> Option<String> {
    let families: Vec<&str> =
        db.faces().flat_map(|f| f.families.iter().map(|(name, _)| name.as_str())).collect();
    SANS_CANDIDATES
        .iter()
        .copied()
        .find(|c| families.contains(c))
        // Any other sans face still gives readable text.
        .or_else(|| families.iter().copied().find(|f| f.contains("Sans") && !f.contains("Mono")))
        .map(str::to_string)
}

/// Loads fonts and picks the family that renders `sans-serif`; returns the
/// database and that family.
pub(crate) fn font_database(source: &FontSource) -> Result<(fontdb::Database, String), ChartError> {
    let mut db = fontdb::Database::new();
    match source {
        FontSource::System => db.load_system_fonts(),
        FontSource::Dirs(dirs) => dirs.iter().for_each(|d| db.load_fonts_dir(d)),
        FontSource::BuiltIn => {}
    }
    let family = match sans_family(&db) {
        Some(f) => f,
        None => {
            db.load_font_data(BUILT_IN_FONT.to_vec());
            sans_family(&db).filter(|f| f == BUILT_IN_FAMILY).ok_or_else(|| {
                ChartError::Font(format!("the built-in font did not load ({} faces)", db.len()))
            })?
        }
    };
    db.set_sans_serif_family(family.clone());
    Ok((db, family))
}

/// Converts an SVG document to a one-page PDF with embedded text.
pub fn svg_to_pdf(svg: &str, fonts: &FontSource) -> Result<Vec<u8>, ChartError> {
    let (db, _) = font_database(fonts)?;
    let options = usvg::Options { fontdb: Arc::new(db), ..usvg::Options::default() };
    let tree =
        usvg::Tree::from_str(svg, &options).map_err(|e| ChartError::Pdf(format!("parsing the SVG: {e}")))?;
    let conversion = svg2pdf::ConversionOptions { embed_text: true, ..Default::default() };
    let pdf = svg2pdf::to_pdf(&tree, conversion, svg2pdf::PageOptions::default())
        .map_err(|e| ChartError::Pdf(format!("converting to PDF: {e}")))?;
    Ok(sort_resource_entries(&pdf))
}

/// svg2pdf lists a page's resources (`/xo12 34 0 R` lines) in hash-map
/// order, which changes from run to run. Sorting the entries of each such
/// dictionary keeps its meaning and every byte offset (only whole lines of
/// one run move), so the xref table stays valid and equal input gives
/// byte-equal PDFs. Streams are skipped: their bytes are compressed data.
/// (Fonts are written in hash-map order too, which is why the chart uses a
/// single font face.)
fn sort_resource_entries(pdf: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(pdf.len());
    let mut rest = pdf;
    while !rest.is_empty() {
        // Text up to and including the next `stream` keyword's line end,
        // then the stream's data up to `endstream`, copied as is.
        let (text, stream) = match find(rest, b"\nstream\n") {
            Some(i) => rest.split_at(i + b"\nstream\n".len()),
            None => (rest, &[][..]),
        };
        out.extend(sort_runs(text));
        let end = find(stream, b"\nendstream").unwrap_or(stream.len());
        out.extend_from_slice(&stream[..end]);
        rest = &stream[end..];
    }
    out
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Whether a line is a dictionary entry `  /Name 12 0 R`.
fn is_ref_entry(line: &[u8]) -> bool {
    let body = line.trim_ascii_start();
    if body.len() == line.len() || !body.starts_with(b"/") {
        return false;
    }
    let Some(space) = body.iter().position(|b| *b == b' ') else { return false };
    let Some(object) = body[space + 1..].strip_suffix(b" 0 R") else { return false };
    space > 1 && !object.is_empty() && object.iter().all(u8::is_ascii_digit)
}

/// Sorts each run of consecutive reference-entry lines.
fn sort_runs(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    let mut run: Vec<&[u8]> = Vec::new();
    // `split_inclusive` keeps each line's `\n`, so lines move whole.
    for line in text.split_inclusive(|b| *b == b'\n') {
        let bare = line.strip_suffix(b"\n").unwrap_or(line);
        if is_ref_entry(bare) && line.ends_with(b"\n") {
            run.push(line);
            continue;
        }
        run.sort_unstable();
        run.drain(..).for_each(|l| out.extend_from_slice(l));
        out.extend_from_slice(line);
    }
    run.sort_unstable();
    run.drain(..).for_each(|l| out.extend_from_slice(l));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_font_is_used_when_no_other_is_found() {
        let (db, family) = font_database(&FontSource::BuiltIn).expect("built-in font");
        assert_eq!((family.as_str(), db.len()), (BUILT_IN_FAMILY, 1));
        let (db, family) = font_database(&FontSource::Dirs(vec![])).expect("built-in font");
        assert_eq!((family.as_str(), db.len()), (BUILT_IN_FAMILY, 1));
    }

    #[test]
    fn sorts_reference_runs_outside_streams_only() {
        let pdf = b"5 0 obj\n<<\n  /XObject <<\n    /xo9 20 0 R\n    /xo1 12 0 R\n  >>\n  /Font <<\n    /f2 3 0 R\n    \
/f1 4 0 R\n  >>\n>>\nstream\n  /b 2 0 R\n  /a 1 0 R\nendstream\nendobj\n";
        let sorted = sort_resource_entries(pdf);
        assert_eq!(sorted.len(), pdf.len());
        let text = String::from_utf8(sorted).expect("ascii");
        assert!(text.contains("    /xo1 12 0 R\n    /xo9 20 0 R\n"), "{text}");
        assert!(text.contains("    /f1 4 0 R\n    /f2 3 0 R\n  >>"), "{text}");
        // Stream bytes are left alone.
        assert!(text.contains("stream\n  /b 2 0 R\n  /a 1 0 R\nendstream"), "{text}");
        assert!(!is_ref_entry(b"/Root 3 0 R"), "top-level lines without indent are not dictionary entries");
        assert!(!is_ref_entry(b"  /Kids [5 0 R]"));
    }
}
