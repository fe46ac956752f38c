//! Table 1's code-size columns: lines of the OpenCL reference and of the
//! high-level and low-level Lift programs, beside the paper's numbers.
//!
//! A line counts when it holds anything other than whitespace and comments.
//! C, OpenCL and `.lift` files all use `//` and `/* */` comments.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::harness::chart::display_name;

/// The files of one benchmark whose lines are counted.
#[derive(Clone, Debug)]
pub struct Table1Entry {
    pub benchmark: String,
    pub reference_files: Vec<PathBuf>,
    /// `.lift` file and `def` name of the high-level program.
    pub high_level: Option<(PathBuf, String)>,
    /// `.lift` file and `def` name of each low-level kernel (several for
    /// multi-kernel benchmarks; their lines are summed).
    pub low_level: Vec<(PathBuf, String)>,
}

/// The language of a counted file. Both share comment syntax; they differ
/// in that C has character literals (`'"'` must not open a string) while in
/// `.lift` a quote is not special outside user-function bodies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lang {
    /// C or OpenCL C.
    OpenCl,
    /// A `.lift` program.
    Lift,
}

/// Why Table 1 could not be written.
#[derive(Debug, thiserror::Error)]
pub enum Table1Error {
    #[error("reading {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{path}: no top-level `def {def}`")]
    DefNotFound { path: PathBuf, def: String },
    #[error("writing {path}: {problem}")]
    Write {
        path: PathBuf,
        #[source]
        problem: WriteProblem,
    },
    /// The program does not parse; the error is rendered against `file`.
    #[error("{path}: {}", source.render(file))]
    Parse { path: PathBuf, file: Box<crate::ir::SourceFile>, source: crate::parse::ParseError },
    #[error("{path}: {problem}")]
    Userfun {
        path: PathBuf,
        #[source]
        problem: super::userfun_size::OversizedUserfun,
    },
}

/// What failed writing `table1.csv` or `table1.md`.
#[derive(Debug, thiserror::Error)]
pub enum WriteProblem {
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Csv(#[from] csv::Error),
    #[error(transparent)]
    Utf8(#[from] std::string::FromUtf8Error),
}

/// Refuses a program with a user function over `userfun_size`'s limit.
fn check_userfuns(path: &Path) -> Result<(), Table1Error> {
    let text = read(path)?;
    let file = crate::ir::SourceFile::new(path.display().to_string(), text);
    let program = match crate::parse::parse_program(&file) {
        Ok(p) => p,
        Err(source) => {
            return Err(Table1Error::Parse { path: path.to_path_buf(), file: Box::new(file), source })
        }
    };
    match super::userfun_size::oversized_userfuns(&program).into_iter().next() {
        Some(problem) => Err(Table1Error::Userfun { path: path.to_path_buf(), problem }),
        None => Ok(()),
    }
}

/// The paper's code sizes for one benchmark (Table 1 of CGO 2017).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PaperSizes {
    pub opencl: usize,
    pub high_level: usize,
    pub low_level: usize,
}

/// Table 1's code-size columns as printed in the paper, by benchmark name.
const PAPER: [(&str, PaperSizes); 12] = [
    ("nbody-nvidia", PaperSizes { opencl: 139, high_level: 34, low_level: 49 }),
    ("nbody-amd", PaperSizes { opencl: 54, high_level: 34, low_level: 34 }),
    ("md", PaperSizes { opencl: 50, high_level: 34, low_level: 34 }),
    ("kmeans", PaperSizes { opencl: 32, high_level: 25, low_level: 25 }),
    ("nn", PaperSizes { opencl: 18, high_level: 7, low_level: 7 }),
    ("mri-q", PaperSizes { opencl: 41, high_level: 43, low_level: 43 }),
    ("convolution", PaperSizes { opencl: 92, high_level: 48, low_level: 48 }),
    ("atax", PaperSizes { opencl: 426, high_level: 30, low_level: 64 }),
    ("gemv", PaperSizes { opencl: 213, high_level: 15, low_level: 32 }),
    ("gesummv", PaperSizes { opencl: 426, high_level: 30, low_level: 64 }),
    ("mm-amd", PaperSizes { opencl: 768, high_level: 17, low_level: 38 }),
    ("mm-nvidia", PaperSizes { opencl: 768, high_level: 17, low_level: 65 }),
];

/// The paper's numbers for a benchmark, if it is one of the paper's twelve.
pub fn paper_sizes(benchmark: &str) -> Option<PaperSizes> {
    PAPER.iter().find(|(name, _)| *name == benchmark).map(|(_, sizes)| *sizes)
}

/// Each line of `text` with comments blanked out (string and character
/// literals are kept, so a `//` inside one is not a comment). Block comments
/// may span lines.
fn code_lines(text: &str, lang: Lang) -> Vec<String> {
    #[derive(Clone, Copy, PartialEq)]
    enum State {
        Code,
        Block,
        Str(char),
    }
    let mut state = State::Code;
    let mut out = Vec::new();
    for line in text.split('\n') {
        let mut code = String::new();
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            match state {
                State::Block => {
                    if c == '*' && chars.peek() == Some(&'/') {
                        chars.next();
                        state = State::Code;
                    }
                }
                State::Str(quote) => {
                    code.push(c);
                    if c == '\\' {
                        if let Some(escaped) = chars.next() {
                            code.push(escaped);
                        }
                    } else if c == quote {
                        state = State::Code;
                    }
                }
                State::Code => match (c, chars.peek()) {
                    ('/', Some('/')) => break,
                    ('/', Some('*')) => {
                        chars.next();
                        // A comment separates tokens like a space does.
                        code.push(' ');
                        state = State::Block;
                    }
                    ('"', _) => {
                        code.push(c);
                        state = State::Str('"');
                    }
                    ('\'', _) if lang == Lang::OpenCl => {
                        code.push(c);
                        state = State::Str('\'');
                    }
                    _ => code.push(c),
                },
            }
        }
        // Literals do not continue past a line end (a C string would need a
        // backslash, which the next line's text makes harmless to ignore).
        if matches!(state, State::Str(_)) {
            state = State::Code;
        }
        out.push(code);
    }
    out
}

/// Lines holding anything other than whitespace and comments.
pub fn count_code_lines(text: &str, lang: Lang) -> usize {
    code_lines(text, lang).iter().filter(|l| !l.trim().is_empty()).count()
}

/// A top-level item of a `.lift` file: `def` or `userfun` at the start of a
/// line (column 0), with the lines it spans.
struct Item {
    is_def: bool,
    name: String,
    /// First line and one past the last, as indices into the code lines.
    lines: std::ops::Range<usize>,
}

fn identifier_at(s: &str) -> Option<&str> {
    let end = s.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(s.len());
    let name = &s[..end];
    name.chars().next().filter(|c| c.is_alphabetic() || *c == '_').map(|_| name)
}

/// Splits a `.lift` file into its top-level items. Everything before the
/// first item belongs to none.
fn lift_items(code: &[String]) -> Vec<Item> {
    let mut items: Vec<Item> = Vec::new();
    for (i, line) in code.iter().enumerate() {
        let head = ["def", "userfun"].iter().find_map(|kw| {
            let rest = line.strip_prefix(kw)?;
            // The keyword must end there (`default` is not `def`).
            rest.starts_with(char::is_whitespace).then(|| (*kw == "def", rest.trim_start()))
        });
        if let Some((is_def, rest)) = head {
            if let Some(last) = items.last_mut() {
                last.lines.end = i;
            }
            let name = identifier_at(rest).unwrap_or("").to_string();
            items.push(Item { is_def, name, lines: i..code.len() });
        }
    }
    items
}

/// The code lines of one `def` in a `.lift` file: from its `def` line up to
/// the next top-level `def` or `userfun` (or the end of the file), plus the
/// lines of every `userfun` the def names. Each user function counts once;
/// user functions used only by other defs, and other defs the def calls,
/// are not counted. `None` when the file has no such def.
pub fn lift_def_lines(text: &str, def: &str) -> Option<usize> {
    let code = code_lines(text, Lang::Lift);
    let items = lift_items(&code);
    let target = items.iter().find(|it| it.is_def && it.name == def)?;
    let count =
        |range: &std::ops::Range<usize>| code[range.clone()].iter().filter(|l| !l.trim().is_empty()).count();
    let mut names = BTreeSet::new();
    for line in &code[target.lines.clone()] {
        for word in line.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
            if !word.is_empty() {
                names.insert(word);
            }
        }
    }
    // Only the first userfun of a name counts, should a file repeat one.
    let mut seen = BTreeSet::new();
    let userfuns: usize = items
        .iter()
        .filter(|it| !it.is_def && names.contains(it.name.as_str()) && seen.insert(it.name.as_str()))
        .map(|it| count(&it.lines))
        .sum();
    Some(count(&target.lines) + userfuns)
}

/// One benchmark's row of Table 1.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Table1Row {
    pub benchmark: String,
    /// Lines of all reference files together; `None` without any.
    pub opencl_lines: Option<usize>,
    pub high_level_lines: Option<usize>,
    pub low_level_lines: Option<usize>,
    pub paper: Option<PaperSizes>,
}

/// The rows written and the files they were written to.
#[derive(Clone, Debug)]
pub struct Table1 {
    pub rows: Vec<Table1Row>,
    pub csv: PathBuf,
    pub markdown: PathBuf,
}

fn read(path: &Path) -> Result<String, Table1Error> {
    std::fs::read_to_string(path).map_err(|source| Table1Error::Read { path: path.to_path_buf(), source })
}

fn def_lines(program: &Option<(PathBuf, String)>) -> Result<Option<usize>, Table1Error> {
    let Some((path, def)) = program else { return Ok(None) };
    lift_def_lines(&read(path)?, def)
        .map(Some)
        .ok_or_else(|| Table1Error::DefNotFound { path: path.clone(), def: def.clone() })
}

/// Counts the lines of one benchmark's files.
pub fn table1_row(entry: &Table1Entry) -> Result<Table1Row, Table1Error> {
    for (path, _) in entry.high_level.iter().chain(&entry.low_level) {
        check_userfuns(path)?;
    }
    let mut opencl = None;
    for path in &entry.reference_files {
        let n = count_code_lines(&read(path)?, Lang::OpenCl);
        opencl = Some(opencl.unwrap_or(0) + n);
    }
    Ok(Table1Row {
        benchmark: entry.benchmark.clone(),
        opencl_lines: opencl,
        high_level_lines: def_lines(&entry.high_level)?,
        low_level_lines: {
            let mut total = None;
            for k in &entry.low_level {
                total = Some(total.unwrap_or(0) + def_lines(&Some(k.clone()))?.unwrap_or(0));
            }
            total
        },
        paper: paper_sizes(&entry.benchmark),
    })
}

/// The column names of `table1.csv`.
pub const TABLE1_HEADER: [&str; 7] = [
    "benchmark",
    "opencl_lines",
    "high_level_lines",
    "low_level_lines",
    "paper_opencl_lines",
    "paper_high_level_lines",
    "paper_low_level_lines",
];

fn cell(n: Option<usize>) -> String {
    n.map(|n| n.to_string()).unwrap_or_default()
}

/// Counts every entry and writes `table1.csv` and `table1.md` into
/// `out_dir`, rows in the order given.
pub fn write_table1(entries: &[Table1Entry], out_dir: &Path) -> Result<Table1, Table1Error> {
    let rows = entries.iter().map(table1_row).collect::<Result<Vec<_>, _>>()?;
    crate::outfile::create_dir(out_dir)
        .map_err(|e| Table1Error::Write { path: out_dir.to_path_buf(), problem: e.into() })?;
    let csv = out_dir.join("table1.csv");
    let markdown = out_dir.join("table1.md");
    write(&csv, &table1_csv(&rows, &csv)?)?;
    write(&markdown, &table1_markdown(&rows))?;
    Ok(Table1 { rows, csv, markdown })
}

fn write(path: &Path, text: &str) -> Result<(), Table1Error> {
    crate::outfile::replace(path, text.as_bytes())
        .map_err(|e| Table1Error::Write { path: path.to_path_buf(), problem: e.into() })
}

fn table1_csv(rows: &[Table1Row], path: &Path) -> Result<String, Table1Error> {
    let err = |problem: WriteProblem| Table1Error::Write { path: path.to_path_buf(), problem };
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer.write_record(TABLE1_HEADER).map_err(|e| err(e.into()))?;
    for r in rows {
        writer
            .write_record([
                r.benchmark.clone(),
                cell(r.opencl_lines),
                cell(r.high_level_lines),
                cell(r.low_level_lines),
                cell(r.paper.map(|p| p.opencl)),
                cell(r.paper.map(|p| p.high_level)),
                cell(r.paper.map(|p| p.low_level)),
            ])
            .map_err(|e| err(e.into()))?;
    }
    // `into_inner` fails only on the final flush: its io::Error is the cause.
    let bytes = writer.into_inner().map_err(|e| err(e.into_error().into()))?;
    String::from_utf8(bytes).map_err(|e| err(e.into()))
}

/// A Markdown table: ours beside the paper's for each column; `–` where a
/// number is unknown.
pub fn table1_markdown(rows: &[Table1Row]) -> String {
    let show = |n: Option<usize>| n.map_or_else(|| "–".to_string(), |n| n.to_string());
    let mut out = String::from(
        "| Benchmark | OpenCL | OpenCL (paper) | High-level Lift IL | High-level (paper) | Low-level Lift IL \
         | Low-level (paper) |\n|---|---:|---:|---:|---:|---:|---:|\n",
    );
    for r in rows {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} |",
            display_name(&r.benchmark).replace('|', "\\|"),
            show(r.opencl_lines),
            show(r.paper.map(|p| p.opencl)),
            show(r.high_level_lines),
            show(r.paper.map(|p| p.high_level)),
            show(r.low_level_lines),
            show(r.paper.map(|p| p.low_level)),
        );
    }
    out
}
