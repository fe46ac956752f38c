//! `lift rewrite`: lists the rules that apply to a def and where, and
//! replays derivations (`docs/REWRITE.md`).

use super::{bad, failed, BadInput, CliError, Failure};
use crate::ir::visit;
use crate::ir::{Program, SourceFile};
use crate::rewrite::{self, Family};
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug, Clone)]
pub(crate) struct RewriteArgs {
    /// The `.lift` file (not needed with --rules).
    file: Option<PathBuf>,
    /// The def to rewrite (default: the first in the file).
    #[arg(long)]
    def: Option<String>,
    /// A derivation to replay: prints every intermediate program.
    #[arg(long, value_name = "DERIVATION")]
    apply: Option<PathBuf>,
    /// With --apply: write the final program here (a `.lift` file).
    #[arg(long)]
    out: Option<PathBuf>,
    /// With --apply: also list the rules that apply to the final program.
    #[arg(long)]
    list: bool,
    /// List every rule with its left- and right-hand side, then exit.
    #[arg(long)]
    rules: bool,
}

/// Prints one def of `prog` (user functions omitted).
pub(crate) fn print_def(prog: &Program, def: &str) -> String {
    let all = crate::parse::print_program(prog);
    let head = format!("def {def}(");
    let mut out = String::new();
    let mut on = false;
    for line in all.lines() {
        if line.starts_with("def ") || line.starts_with("userfun ") {
            on = line.starts_with(&head);
        }
        if on {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

fn print_rules() {
    for r in rewrite::all_rules() {
        let fam = match r.family {
            Family::Algorithmic => "algorithmic",
            Family::OpenCl => "opencl",
            Family::Macro => "macro",
        };
        let ps: Vec<String> = r.params.iter().map(|p| format!("{}=<{}>", p.name, p.what)).collect();
        println!("{:<22} {:<12} {}  ->  {}", r.name, fam, r.lhs, r.rhs);
        if !ps.is_empty() {
            println!("{:<22} {:<12} parameters: {}", "", "", ps.join(" "));
        }
    }
}

/// Prints every (rule, position) that applies, with the sub-expression.
fn print_candidates(prog: &Program, def: &str) -> Result<(), CliError> {
    let cands = rewrite::applicable(prog, def)
        .map_err(|source| bad(BadInput::Rewrite { def: def.to_string(), source }))?;
    let d = prog.def(def).ok_or_else(|| bad(BadInput::NoDefNamed(def.to_string())))?;
    let body = &d.body;
    println!("# {} applicable (rule @ position [parameters]   at: sub-expression)", cands.len());
    for c in &cands {
        let at = visit::expr_at(body, &c.path)
            .map(|e| crate::parse::print_expr_in(prog, d, e))
            .unwrap_or_default();
        let ps: Vec<String> = c.rule.params.iter().map(|p| format!("{}=?", p.name)).collect();
        let step = format!("{} @ {} {}", c.rule.name, c.path, ps.join(" "));
        println!("{:<40}   at: {}", step.trim_end(), short(&at, 100));
    }
    Ok(())
}

fn short(s: &str, n: usize) -> String {
    if s.chars().count() > n {
        format!("{}...", s.chars().take(n - 3).collect::<String>())
    } else {
        s.to_string()
    }
}

pub(crate) fn rewrite_cmd(a: &RewriteArgs) -> Result<(), CliError> {
    if a.rules {
        print_rules();
        return Ok(());
    }
    let path = a.file.as_ref().ok_or_else(|| bad(BadInput::RewriteUsage))?;
    let (file, program) = crate::parse::load_program(path).map_err(bad)?;
    let def = match &a.def {
        Some(d) => d.clone(),
        None => program
            .defs
            .first()
            .map(|d| d.name.clone())
            .ok_or_else(|| super::compile_cmd::missing_def(&file, &program, None))?,
    };
    if program.def(&def).is_none() {
        return Err(super::compile_cmd::missing_def(&file, &program, Some(&def)));
    }
    let start = rewrite::prepare(&program, &def)
        .map_err(|source| bad(BadInput::Prepare { file: path.clone(), source }))?;
    let Some(dpath) = &a.apply else {
        print!("{}", print_def(&start, &def));
        return print_candidates(&start, &def);
    };
    let dname = dpath.display().to_string();
    let in_dfile = |source| bad(BadInput::Derivation { file: dname.clone(), source });
    let dtext = crate::ir::read_text(dpath).map_err(bad)?;
    let d = rewrite::parse_derivation(&dtext).map_err(in_dfile)?;
    println!("# step 0: {}", path.display());
    print!("{}", print_def(&start, &def));
    let steps = rewrite::replay(&start, &def, &d).map_err(in_dfile)?;
    for (i, (s, r)) in d.steps.iter().zip(&steps).enumerate() {
        println!("# step {} ({dname}:{}): {}", i + 1, s.line, s.text);
        for c in &r.constraints {
            println!("#   assumes {}", c.text);
        }
        print!("{}", print_def(&r.program, &def));
    }
    let last = steps.last().map_or(start.clone(), |s| s.program.clone());
    let fin = rewrite::release(&last, &def);
    println!("# final");
    print!("{}", print_def(&fin, &def));
    if let Some(out) = &a.out {
        let text = crate::parse::print_program(&fin);
        std::fs::write(out, &text).map_err(|source| bad(BadInput::Write { path: out.clone(), source }))?;
        // The written program must parse again.
        let check = SourceFile::new(out.display().to_string(), text);
        if let Err(source) = crate::parse::parse_program(&check) {
            return Err(failed(Failure::Reparse { file: check, source }));
        }
        println!("# wrote {}", out.display());
    }
    if a.list {
        println!("# positions below refer to the final program in the rules' form:");
        print!("{}", print_def(&last, &def));
        print_candidates(&last, &def)?;
    }
    Ok(())
}
