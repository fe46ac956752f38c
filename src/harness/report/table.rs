//! Markdown tables and the number formats of the generated report. Every
//! number the report prints goes through one of these formats, so that the
//! same value reads the same in the README and in
//! `reports/paper-vs-reproduced.md`.

/// The cell of a value that is not there.
pub const NONE: &str = "–";

/// A Markdown table: a header row and rows of already formatted cells.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new<S: AsRef<str>>(header: &[S]) -> Table {
        Table { header: header.iter().map(|h| h.as_ref().to_string()).collect(), rows: Vec::new() }
    }

    pub fn push(&mut self, row: Vec<String>) {
        self.rows.push(row);
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Drops the columns from `first` on whose every cell is [`NONE`] (a
    /// library that is not installed on this device, say).
    pub fn drop_empty_columns(&mut self, first: usize) {
        let keep: Vec<bool> = (0..self.header.len())
            .map(|c| c < first || self.rows.iter().any(|r| r.get(c).is_some_and(|v| v != NONE)))
            .collect();
        let filter = |cells: &mut Vec<String>| {
            let mut i = 0;
            cells.retain(|_| {
                i += 1;
                keep.get(i - 1).copied().unwrap_or(true)
            });
        };
        filter(&mut self.header);
        self.rows.iter_mut().for_each(filter);
    }

    /// The table as Markdown, one line per row, each cell escaped so that
    /// text holding a `|` or a line break stays in its cell.
    pub fn markdown(&self) -> String {
        let line = |cells: &[String]| {
            let cells: Vec<String> = cells.iter().map(|c| escape(c)).collect();
            format!("| {} |\n", cells.join(" | "))
        };
        let mut out = line(&self.header);
        out.push_str(&line(&vec!["---".to_string(); self.header.len()]));
        for r in &self.rows {
            out.push_str(&line(r));
        }
        out
    }
}

fn escape(cell: &str) -> String {
    let one_line = cell.split_whitespace().collect::<Vec<_>>().join(" ");
    let text = if one_line.is_empty() { NONE.to_string() } else { one_line };
    text.replace('|', "\\|")
}

/// A speedup or other ratio: two decimals, or three significant digits
/// where that says more (0.047, 22.1).
pub fn ratio(x: f64) -> String {
    crate::harness::chart::format_speedup(x)
}

/// [`ratio`] with an `x`.
pub fn times(x: f64) -> String {
    format!("{}x", ratio(x))
}

/// A time in milliseconds with four significant digits (0.05168, 6.246,
/// 106.6).
pub fn ms(x: f64) -> String {
    significant(x, 4)
}

/// GElements/s with three significant digits at least, no more decimals
/// than one (6.0, 17.1, 152).
pub fn gelems(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.1}")
    }
}

/// A fraction of a limit with two decimals.
pub fn fraction(x: f64) -> String {
    format!("{x:.2}")
}

/// `x` with `digits` significant digits, never in exponent form.
pub fn significant(x: f64, digits: i32) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let magnitude = x.abs().log10().floor() as i32;
    let decimals = (digits - 1 - magnitude).max(0) as usize;
    format!("{x:.decimals$}")
}

/// An optional value through `f`, or [`NONE`].
pub fn opt(v: Option<f64>, f: fn(f64) -> String) -> String {
    v.map_or_else(|| NONE.to_string(), f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_markdown_with_escaped_cells() {
        let mut t = Table::new(&["benchmark", "note"]);
        t.push(vec!["dot".into(), "a | b\nc".into()]);
        t.push(vec!["scal".into(), String::new()]);
        assert_eq!(t.markdown(), "| benchmark | note |\n| --- | --- |\n| dot | a \\| b c |\n| scal | – |\n");
    }

    #[test]
    fn drops_columns_without_values() {
        let mut t = Table::new(&["b", "x", "y"]);
        t.push(vec!["dot".into(), NONE.into(), "1".into()]);
        t.drop_empty_columns(1);
        assert_eq!(t.markdown(), "| b | y |\n| --- | --- |\n| dot | 1 |\n");
    }

    #[test]
    fn formats_numbers() {
        assert_eq!(ms(0.051664), "0.05166");
        assert_eq!(ms(106.62191), "106.6");
        assert_eq!(ms(6.246313), "6.246");
        assert_eq!(times(22.1), "22.1x");
        assert_eq!(times(0.9996), "1.00x");
        assert_eq!(gelems(151.8), "152");
        assert_eq!(gelems(6.04), "6.0");
        assert_eq!(opt(None, ms), NONE);
    }
}
