//! The size check on user functions: the paper's user functions are a few
//! scalar or vector operations, and a program that hides its computation in
//! one large user function (a hand-unrolled reduction, a loop) is C code,
//! not a Lift program. `lift table1` refuses a benchmark whose program has
//! a user function over the limit, naming it.

use crate::ir::c::ops::stmts_ops;
use crate::ir::Program;

/// The most C operators (arithmetic, comparison, logic, ternary, calls,
/// compound assignments) a user function may have. The largest user
/// functions of the paper's kind are one Lennard-Jones interaction (MD, 22)
/// and one N-Body interaction (16); a hand-unrolled reduction of 16 terms
/// already needs 31 (the old 17-tap, 4-output convolution function had 132).
pub const MAX_USERFUN_OPS: usize = 30;

/// A user function refused by the size check: its name and what it has.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum OversizedUserfun {
    #[error("user function `{name}` has a loop (express it with patterns)")]
    Loop { name: String },
    #[error("user function `{name}` has {ops} C operators, more than {MAX_USERFUN_OPS} (express it with patterns)")]
    TooManyOps { name: String, ops: usize },
}

/// The user functions of `program` over the limit (or with a loop).
pub fn oversized_userfuns(program: &Program) -> Vec<OversizedUserfun> {
    program
        .user_funs
        .iter()
        .filter_map(|f| match stmts_ops(&f.body) {
            None => Some(OversizedUserfun::Loop { name: f.name.clone() }),
            Some(ops) if ops > MAX_USERFUN_OPS => {
                Some(OversizedUserfun::TooManyOps { name: f.name.clone(), ops })
            }
            Some(_) => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::SourceFile;

    fn check(src: &str) -> Vec<String> {
        let file = SourceFile::new("t.lift".to_string(), src.to_string());
        oversized_userfuns(&crate::parse::parse_program(&file).expect("parses"))
            .iter()
            .map(|e| e.to_string())
            .collect()
    }

    #[test]
    fn small_functions_pass_and_large_or_looping_ones_are_named() {
        assert!(check("userfun f(a: float, b: float): float { return a * b + 1.0f; }").is_empty());
        let terms: Vec<String> = (0..16).map(|i| format!("x{i} * y")).collect();
        let params: Vec<String> = (0..16).map(|i| format!("x{i}: float")).collect();
        let big = format!(
            "userfun big({}, y: float): float {{ return {}; }}",
            params.join(", "),
            terms.join(" + ")
        );
        let e = check(&big);
        assert_eq!(e.len(), 1, "{e:?}");
        assert_eq!(e[0], "user function `big` has 31 C operators, more than 30 (express it with patterns)");
        let looped = "userfun s(x: float): float { float a = 0.0f; for (int i = 0; i < 4; i += 1) { a += x; } return a; }";
        let e = check(looped);
        assert_eq!(e, ["user function `s` has a loop (express it with patterns)"]);
    }
}
