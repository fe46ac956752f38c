//! The README's generated blocks: a line `<!-- lift report: KIND ARG begin -->`
//! opens one, `<!-- lift report: KIND ARG end -->` closes it, and what lies
//! between is replaced by the renderer's text. Everything outside the
//! markers is kept byte for byte.

use std::path::Path;

use super::{MarkerProblem, ReportError};

const OPEN: &str = "<!-- lift report:";
const CLOSE: &str = "-->";

/// A marker line: the block's name (`KIND ARG...`) and whether it begins
/// the block.
fn parse_marker(line: &str) -> Option<(String, bool)> {
    let inner = line.trim().strip_prefix(OPEN)?.strip_suffix(CLOSE)?;
    let words: Vec<&str> = inner.split_whitespace().collect();
    let (last, name) = words.split_last()?;
    let begins = match *last {
        "begin" => true,
        "end" => false,
        _ => return None,
    };
    Some((name.join(" "), begins))
}

/// Renders the block `name` whose begin marker is on `line` (1-based).
pub(super) type Render<'a> = dyn FnMut(&str, &[&str], usize) -> Result<String, ReportError> + 'a;

/// `text` with every marked block replaced by its rendering, and the names
/// of the blocks whose committed text differs from it.
pub(super) fn regenerate(
    path: &Path,
    text: &str,
    render: &mut Render,
) -> Result<(String, Vec<String>), ReportError> {
    let err = |line: usize, problem| ReportError::Marker { path: path.into(), line, problem };
    let mut out = String::with_capacity(text.len());
    let mut drifted = Vec::new();
    // The open block: its name, its begin line and its committed text.
    let mut open: Option<(String, usize, String)> = None;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        let n = i + 1;
        match (parse_marker(line), open.as_mut()) {
            (Some((name, true)), None) => {
                out.push_str(line);
                open = Some((name, n, String::new()));
            }
            (Some((name, true)), Some((outer, at, _))) => {
                let (outer, outer_line) = (outer.clone(), *at);
                return Err(err(n, MarkerProblem::Nested { name, outer, outer_line }));
            }
            (Some((name, false)), Some((current, at, committed))) => {
                if name != *current {
                    let (open, open_line) = (current.clone(), *at);
                    return Err(err(n, MarkerProblem::Mismatched { name, open, open_line }));
                }
                let words: Vec<&str> = current.split_whitespace().collect();
                let body = render(words[0], &words[1..], *at)?;
                let block = format!("\n{}\n\n", body.trim_end_matches('\n'));
                if block != *committed {
                    drifted.push(current.clone());
                }
                out.push_str(&block);
                out.push_str(line);
                open = None;
            }
            (Some((name, false)), None) => return Err(err(n, MarkerProblem::NoBegin { name })),
            (None, Some((_, _, committed))) => committed.push_str(line),
            (None, None) => out.push_str(line),
        }
    }
    if let Some((name, at, _)) = open {
        return Err(err(at, MarkerProblem::NoEnd { name }));
    }
    Ok((out, drifted))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(name: &str, args: &[&str], _line: usize) -> Result<String, ReportError> {
        Ok(format!("{name} of {}", args.join(",")))
    }

    #[test]
    fn replaces_only_between_markers() {
        let text =
            "intro 1.5\n<!-- lift report: t a b begin -->\nold\n<!-- lift report: t a b end -->\nafter\n";
        let (out, drifted) = regenerate(Path::new("R.md"), text, &mut render).unwrap();
        assert_eq!(
            out,
            "intro 1.5\n<!-- lift report: t a b begin -->\n\nt of a,b\n\n<!-- lift report: t a b end -->\nafter\n"
        );
        assert_eq!(drifted, vec!["t a b".to_string()]);
        let (again, drifted) = regenerate(Path::new("R.md"), &out, &mut render).unwrap();
        assert_eq!((again, drifted), (out, Vec::new()));
    }

    #[test]
    fn refuses_unbalanced_markers() {
        let cases = [
            ("<!-- lift report: t x begin -->\n", "R.md:1: block `t x` has no end marker"),
            ("a\n<!-- lift report: t x end -->\n", "R.md:2: end of `t x` without its begin"),
            (
                "<!-- lift report: t x begin -->\n<!-- lift report: u y end -->\n",
                "R.md:2: end of `u y` closes block `t x` (line 1)",
            ),
        ];
        for (text, want) in cases {
            let e = regenerate(Path::new("R.md"), text, &mut render).unwrap_err();
            assert_eq!(e.to_string(), want);
        }
    }
}
