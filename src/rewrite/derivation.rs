//! Derivations: a text file of rewrite steps, one a line (`docs/REWRITE.md`):
//!
//! ```text
//! # comment
//! split-join @ 1.2 n=2048
//! map-lcl @ 1.0.0.1 d=0
//! extract @ 1
//! ```
//!
//! A step names a rule, the position it applies at (as `lift rewrite`
//! prints it) and the rule's parameters as `name=value` (integer
//! arithmetic over the def's sizes). `extract @ P` is not a rule: it makes
//! the expression at `P` the def's whole body (the kernel of a computation
//! whose rest runs elsewhere, such as the final sum of partial results).

use super::engine::{apply, RewriteError};
use super::rule::{Args, Constraint, Rule};
use crate::arith::{parse_arith, ArithParseError};
use crate::ir::visit::{self, Path};
use crate::ir::{IdGen, Location, Program};
use crate::passes::typecheck::TypeError;

#[derive(Clone, Debug)]
pub enum StepAction {
    Rule { rule: &'static Rule, path: Path, args: Args },
    Extract { path: Path },
}

/// One line of a derivation; `line` is 1-based, `path_col` the column of
/// the position (for messages).
#[derive(Clone, Debug)]
pub struct Step {
    pub line: usize,
    pub path_col: usize,
    pub text: String,
    pub action: StepAction,
}

#[derive(Clone, Debug)]
pub struct Derivation {
    pub steps: Vec<Step>,
}

/// A bad derivation line, or a step that does not apply, at its line and
/// column: printed as `file:line:col: error: <fault>` ([`Self::render`]).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{line}:{col}: error: {fault}")]
pub struct DerivationError {
    pub line: usize,
    pub col: usize,
    pub fault: StepFault,
}

/// What is wrong with a derivation line or step.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum StepFault {
    #[error("expected `RULE @ POSITION [name=value ...]`, found `{found}`")]
    NotAStep { found: String },
    #[error(transparent)]
    Position(#[from] visit::PathError),
    #[error("expected the end of the line after `extract @ POSITION`, found `{found}`")]
    AfterExtract { found: String },
    #[error("expected a rule name (see `lift rewrite --rules`), found `{name}`")]
    UnknownRule { name: String },
    #[error("expected a parameter `name=value`, found `{found}`")]
    NotAParameter { found: String },
    #[error("parameter `{param}`: {reason}")]
    BadParameter { param: String, reason: ArithParseError },
    /// The step's rule does not apply (its own message names it).
    #[error("{reason}")]
    Rule { rule: &'static str, reason: RewriteError },
    #[error(transparent)]
    Extract(#[from] ExtractError),
}

/// Why an `extract @ P` step fails.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ExtractError {
    #[error("no def `{0}`")]
    NoDef(String),
    #[error(transparent)]
    Position(#[from] visit::PathError),
    #[error("after extract: {0}")]
    Type(#[from] TypeError),
}

impl DerivationError {
    /// Where the error is, in the derivation file named `file`.
    pub fn location(&self, file: &str) -> Location {
        Location { file: file.to_string(), line: self.line, col: self.col }
    }

    pub fn render(&self, file: &str) -> String {
        self.location(file).error(&self.fault)
    }
}

/// Parses a derivation; every rule name must exist.
pub fn parse_derivation(text: &str) -> Result<Derivation, DerivationError> {
    let mut steps = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let content = raw.split('#').next().unwrap_or("");
        if content.trim().is_empty() {
            continue;
        }
        // Words with their 1-based columns.
        let mut words = Vec::new();
        let mut start = None;
        for (j, c) in content.char_indices().chain(std::iter::once((content.len(), ' '))) {
            match (c.is_whitespace(), start) {
                (false, None) => start = Some(j),
                (true, Some(s)) => {
                    words.push((&content[s..j], content[..s].chars().count() + 1));
                    start = None;
                }
                _ => {}
            }
        }
        let err = |col: usize, fault: StepFault| DerivationError { line, col, fault };
        let (name, name_col) = words[0];
        let (Some(&("@", _)), Some(&(path_text, path_col))) = (words.get(1), words.get(2)) else {
            return Err(err(name_col, StepFault::NotAStep { found: content.trim().to_string() }));
        };
        let path: Path = path_text.parse().map_err(|e: visit::PathError| err(path_col, e.into()))?;
        let action = if name == "extract" {
            if let Some(&(w, c)) = words.get(3) {
                return Err(err(c, StepFault::AfterExtract { found: w.to_string() }));
            }
            StepAction::Extract { path }
        } else {
            let rule = super::find_rule(name)
                .ok_or_else(|| err(name_col, StepFault::UnknownRule { name: name.to_string() }))?;
            let mut args = Args::new();
            for &(w, c) in &words[3..] {
                let (k, v) = w
                    .split_once('=')
                    .ok_or_else(|| err(c, StepFault::NotAParameter { found: w.to_string() }))?;
                let v = parse_arith(v)
                    .map_err(|reason| err(c, StepFault::BadParameter { param: k.to_string(), reason }))?;
                args.insert(k.to_string(), v);
            }
            StepAction::Rule { rule, path, args }
        };
        steps.push(Step { line, path_col, text: content.trim().to_string(), action });
    }
    Ok(Derivation { steps })
}

/// The program after one step, with the constraints that step relies on.
#[derive(Clone, Debug)]
pub struct Replayed {
    pub program: Program,
    pub constraints: Vec<Constraint>,
}

/// Replays `d` on `def` of `prog` (already in normal form, see
/// [`super::prepare`]); returns the program after every step.
pub fn replay(prog: &Program, def: &str, d: &Derivation) -> Result<Vec<Replayed>, DerivationError> {
    let mut cur = prog.clone();
    let mut out = Vec::new();
    for step in &d.steps {
        let next = match &step.action {
            StepAction::Rule { rule, path, args } => {
                let a = apply(&cur, def, rule, path, args).map_err(|reason| {
                    let col = match reason {
                        RewriteError::Path(_) => step.path_col,
                        _ => 1,
                    };
                    DerivationError {
                        line: step.line,
                        col,
                        fault: StepFault::Rule { rule: rule.name, reason },
                    }
                })?;
                Replayed { program: a.program, constraints: a.constraints }
            }
            StepAction::Extract { path } => {
                let program = extract(&cur, def, path).map_err(|e| DerivationError {
                    line: step.line,
                    col: step.path_col,
                    fault: e.into(),
                })?;
                Replayed { program, constraints: Vec::new() }
            }
        };
        cur = next.program.clone();
        out.push(next);
    }
    Ok(out)
}

/// The `extract @ path` step: the expression at `path` becomes the def's
/// whole body (normalised and type-checked again).
pub fn extract(prog: &Program, def: &str, path: &Path) -> Result<Program, ExtractError> {
    let mut p = prog.clone();
    let no_def = || ExtractError::NoDef(def.to_string());
    let d = p.defs.iter_mut().find(|x| x.name == def).ok_or_else(no_def)?;
    let sub = visit::expr_at(&d.body, path)?.clone();
    let mut gen = IdGen::for_program(prog);
    d.body = visit::normalize(&sub, &mut gen);
    gen.store(&mut p);
    let d = p.def(def).ok_or_else(no_def)?;
    crate::passes::typecheck::typecheck_def(&p, d)?;
    Ok(p)
}

/// Why `derive_file` failed; shown as `file:line:col: error: ...` where
/// a line is to blame, else `file: error: ...`.
#[derive(Debug, thiserror::Error)]
pub enum DeriveFileError {
    #[error(transparent)]
    Read(#[from] crate::ir::ReadError),
    /// A line that does not parse or a step that does not apply.
    #[error("{}", .error.render(file))]
    Step { file: String, error: Box<DerivationError> },
    /// The def cannot be put in the rules' normal form.
    #[error("{file}: error: {error}")]
    Prepare { file: String, error: RewriteError },
}

/// Reads the derivation at `path`, replays it on `def` and returns the
/// final program, printable (eta-expansions undone).
pub fn derive_file(prog: &Program, def: &str, path: &std::path::Path) -> Result<Program, DeriveFileError> {
    let file = || path.display().to_string();
    let text = crate::ir::read_text(path)?;
    let d = parse_derivation(&text)
        .map_err(|error| DeriveFileError::Step { file: file(), error: Box::new(error) })?;
    let start =
        super::prepare(prog, def).map_err(|error| DeriveFileError::Prepare { file: file(), error })?;
    let steps = replay(&start, def, &d)
        .map_err(|error| DeriveFileError::Step { file: file(), error: Box::new(error) })?;
    let last = steps.last().map_or(start, |s| s.program.clone());
    Ok(super::release(&last, def))
}
