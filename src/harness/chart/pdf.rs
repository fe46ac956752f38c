//! SVG to PDF with real, selectable text: the SVG is parsed by usvg with a
//! font database, and svg2pdf embeds subsets of the fonts so that the PDF's
//! text is glyphs that viewers can select and `pdftotext` can extract.

use std::path::PathBuf;
use std::sync::Arc;

use svg2pdf::usvg;
use svg2pdf::usvg::fontdb;

use super::ChartError;

/// Where fonts are looked up.
#[derive(Clone, Debug)]
pub enum FontSource {
    /// The system's font directories (and fontconfig's, where present).
    System,
    /// Only these directories.
    Dirs(Vec<PathBuf>),
}

/// Families tried for the SVG's `sans-serif` text, best first. DejaVu Sans
/// comes from Debian's `fonts-dejavu-core`, which CI installs; the others
/// are common stand-ins on other machines.
const SANS_CANDIDATES: [&str; 5] = ["DejaVu Sans", "Liberation Sans", "Noto Sans", "Arial", "FreeSans"];

/// Loads fonts and picks the family that renders `sans-serif`.
fn font_database(source: &FontSource) -> Result<fontdb::Database, ChartError> {
    let mut db = fontdb::Database::new();
    match source {
        FontSource::System => db.load_system_fonts(),
        FontSource::Dirs(dirs) => dirs.iter().for_each(|d| db.load_fonts_dir(d)),
    }
    let families: Vec<&str> =
        db.faces().flat_map(|f| f.families.iter().map(|(name, _)| name.as_str())).collect();
    let chosen = SANS_CANDIDATES
        .iter()
        .copied()
        .find(|c| families.contains(c))
        // Any other sans face still gives readable text.
        .or_else(|| families.iter().copied().find(|f| f.contains("Sans") && !f.contains("Mono")))
        .map(str::to_string);
    match chosen {
        Some(family) => {
            db.set_sans_serif_family(family);
            Ok(db)
        }
        None => Err(ChartError::Font(format!(
            "no sans-serif font found ({} faces loaded from {}); install one, e.g. Debian's \
             `fonts-dejavu-core`",
            db.len(),
            match source {
                FontSource::System => "the system font directories".to_string(),
                FontSource::Dirs(d) => format!("{d:?}"),
            }
        ))),
    }
}

/// Converts an SVG document to a one-page PDF with embedded text.
pub fn svg_to_pdf(svg: &str, fonts: &FontSource) -> Result<Vec<u8>, ChartError> {
    let db = font_database(fonts)?;
    let options = usvg::Options { fontdb: Arc::new(db), ..usvg::Options::default() };
    let tree =
        usvg::Tree::from_str(svg, &options).map_err(|e| ChartError::Pdf(format!("parsing the SVG: {e}")))?;
    let conversion = svg2pdf::ConversionOptions { embed_text: true, ..Default::default() };
    svg2pdf::to_pdf(&tree, conversion, svg2pdf::PageOptions::default())
        .map_err(|e| ChartError::Pdf(format!("converting to PDF: {e}")))
}
