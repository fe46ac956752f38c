//! Applying rules to a def: the API of `lift rewrite` and of exploration.
//!
//! ```text
//! let prog = prepare(&parsed, "asum")?;              // normal form
//! for c in applicable(&prog, "asum")? { ... }         // (rule, position) pairs
//! let step = apply(&prog, "asum", rule, &path, &args)?; // one rewrite
//! let out = release(&step.program, "asum");           // printable again
//! ```

use super::rule::{Args, Builder, Constraint, Rule, RuleError, Site};
use crate::ir::visit::{self, Node, Path, PathError};
use crate::ir::{IdGen, Program};
use crate::passes::typecheck::{typecheck_def, TypeError};

/// A rule whose shape matches at a position.
#[derive(Clone, Debug)]
pub struct Candidate {
    pub rule: &'static Rule,
    pub path: Path,
}

/// The result of one rewrite step.
#[derive(Clone, Debug)]
pub struct Applied {
    pub program: Program,
    /// Conditions on sizes the step relies on and could not prove.
    pub constraints: Vec<Constraint>,
}

#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum RewriteError {
    #[error("no def `{0}` in the program")]
    NoDef(String),
    #[error(transparent)]
    Path(#[from] PathError),
    #[error(transparent)]
    Rule(#[from] RuleError),
    #[error("the program does not type-check: {0}")]
    Type(#[from] TypeError),
    #[error("the rewritten program does not type-check (a rule bug): {0}")]
    Broken(TypeError),
}

/// The program with `def`'s body in the normal form rules work on.
pub fn prepare(prog: &Program, def: &str) -> Result<Program, RewriteError> {
    let mut out = prog.clone();
    let mut gen = IdGen::for_program(prog);
    let d = out.defs.iter_mut().find(|d| d.name == def).ok_or_else(|| RewriteError::NoDef(def.into()))?;
    d.body = visit::normalize(&d.body, &mut gen);
    gen.store(&mut out);
    Ok(out)
}

/// The program with `def`'s body printable as it would be written:
/// eta-expansions undone.
pub fn release(prog: &Program, def: &str) -> Program {
    let mut out = prog.clone();
    let mut next_fun = out.next_fun;
    if let Some(d) = out.defs.iter_mut().find(|d| d.name == def) {
        d.body = crate::ir::build::renumber_funs(&visit::eta_reduce(&d.body), &mut next_fun);
    }
    out.next_fun = next_fun;
    out
}

/// Every (rule, position) where a rule's shape matches, positions in
/// pre-order, rules in [`super::all_rules`] order. Side conditions that
/// depend on parameters are checked only by [`apply`].
pub fn applicable(prog: &Program, def: &str) -> Result<Vec<Candidate>, RewriteError> {
    let d = prog.def(def).ok_or_else(|| RewriteError::NoDef(def.into()))?;
    let types = typecheck_def(prog, d)?;
    let rules = super::all_rules();
    let mut out = Vec::new();
    for (path, _) in visit::expr_positions(&d.body) {
        let (node, above) = visit::node_at(&d.body, &path)?;
        let Node::Expr(expr) = node else { continue };
        let site = Site { prog, types: &types, expr, above };
        for r in &rules {
            if (r.matches)(&site).is_ok() {
                out.push(Candidate { rule: r, path: path.clone() });
            }
        }
    }
    Ok(out)
}

/// Applies `rule` at `path` of `def` with `args`; the result is in normal
/// form again and type-checks.
pub fn apply(
    prog: &Program,
    def: &str,
    rule: &Rule,
    path: &Path,
    args: &Args,
) -> Result<Applied, RewriteError> {
    for k in args.keys() {
        if !rule.params.iter().any(|p| p.name == k) {
            let takes: Vec<&str> = rule.params.iter().map(|p| p.name).collect();
            let takes = if takes.is_empty() { "none".to_string() } else { takes.join(", ") };
            return Err(RuleError::UnknownParam { rule: rule.name, param: k.clone(), takes }.into());
        }
    }
    let d = prog.def(def).ok_or_else(|| RewriteError::NoDef(def.into()))?;
    let types = typecheck_def(prog, d)?;
    let (node, above) = visit::node_at(&d.body, path)?;
    let Node::Expr(expr) = node else { return Err(PathError::NotExpr(path.to_string()).into()) };
    let site = Site { prog, types: &types, expr, above };
    (rule.matches)(&site)?;
    let mut b =
        Builder { gen: IdGen::for_program(prog), user_funs: prog.user_funs.clone(), constraints: Vec::new() };
    let new = (rule.build)(&site, args, &mut b)?;
    let body = visit::replace_at(&d.body, path, new)?;
    let body = visit::normalize(&body, &mut b.gen);
    let mut out = prog.clone();
    out.user_funs = b.user_funs;
    b.gen.store(&mut out);
    if let Some(d) = out.defs.iter_mut().find(|d| d.name == def) {
        d.body = body;
    }
    let d = out.def(def).ok_or_else(|| RewriteError::NoDef(def.into()))?;
    typecheck_def(&out, d).map_err(RewriteError::Broken)?;
    Ok(Applied { program: out, constraints: b.constraints })
}
