//! Static instruction counts of a PTX listing (what NVIDIA's OpenCL driver
//! returns as a program's binary): how much of a kernel's index arithmetic
//! the driver's compiler left in, beside its memory operations and branches.
//!
//! The counts are static (instructions in the listing, not executed ones):
//! an unrolled loop counts once per copy, a loop body once however often it
//! runs. They compare two builds of one kernel, not two kernels' speeds.

/// Instruction counts of one PTX listing, by class.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PtxStats {
    /// Every instruction (directives, labels and declarations excluded).
    pub instructions: usize,
    /// Integer and bitwise arithmetic (add, mul, mad, shifts, and, div, rem ...).
    pub int_arith: usize,
    /// Integer divisions and remainders, the costly part of `int_arith`.
    pub div_rem: usize,
    pub global_loads: usize,
    pub global_stores: usize,
    pub shared_loads: usize,
    pub shared_stores: usize,
    /// Branches, conditional or not.
    pub branches: usize,
    /// Work-group barriers.
    pub barriers: usize,
}

/// Operations counted as integer arithmetic when typed with an integer or
/// bit type; the same names typed `.f32` are floating point.
const INT_OPS: [&str; 21] = [
    "add", "sub", "mul", "mad", "mul24", "mad24", "shl", "shr", "and", "or", "xor", "not", "neg", "div",
    "rem", "min", "max", "abs", "bfe", "bfi", "prmt",
];

/// Whether a PTX type suffix is an integer or untyped-bits type.
fn is_int_type(t: &str) -> bool {
    matches!(t, "s8" | "u8" | "s16" | "u16" | "s32" | "u32" | "s64" | "u64" | "b16" | "b32" | "b64")
}

/// The opcode of an instruction line (`@%p1 bra $L;` gives `bra`), or
/// `None` for anything that is not an instruction.
fn opcode(line: &str) -> Option<&str> {
    let line = line.trim();
    // Instructions end with `;`; labels end with `:`, directives start with `.`.
    if !line.ends_with(';') || line.starts_with('.') || line.starts_with("//") {
        return None;
    }
    let mut words = line.split_whitespace();
    let first = words.next()?;
    let op = if first.starts_with('@') { words.next()? } else { first };
    Some(op.trim_end_matches(';'))
}

/// Whether `text` looks like a PTX listing (another driver's binary is not).
pub fn is_ptx(text: &str) -> bool {
    text.contains(".entry") && text.contains(".target")
}

/// Counts the instructions of PTX `text` by class.
pub fn ptx_stats(text: &str) -> PtxStats {
    let mut s = PtxStats::default();
    for op in text.lines().filter_map(opcode) {
        s.instructions += 1;
        let parts: Vec<&str> = op.split('.').collect();
        let root = parts[0];
        let typed_int = parts.last().is_some_and(|t| is_int_type(t));
        if INT_OPS.contains(&root) && typed_int {
            s.int_arith += 1;
            if root == "div" || root == "rem" {
                s.div_rem += 1;
            }
        }
        let space = parts.get(1).copied();
        match (root, space) {
            ("ld", Some("global")) => s.global_loads += 1,
            ("st", Some("global")) => s.global_stores += 1,
            ("ld", Some("shared")) => s.shared_loads += 1,
            ("st", Some("shared")) => s.shared_stores += 1,
            ("bra", _) => s.branches += 1,
            ("bar" | "barrier", _) => s.barriers += 1,
            _ => {}
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    const LISTING: &str = "\
.version 9.0
.target sm_90, texmode_independent
.entry k(
\t.param .u64 .ptr .global .align 4 k_param_0
)
{
\t.reg .b32 \t%r<9>;
\tmov.u32 \t%r1, %tid.x;
\tshl.b32 \t%r2, %r1, 2;
\trem.s32 \t%r3, %r2, %r4;
\tmad.lo.s32 \t%r5, %r3, %r1, %r2;
\tld.global.nc.f32 \t%f1, [%rd1];
\tadd.f32 \t%f2, %f1, %f1;
\tst.shared.f32 \t[%rd2], %f2;
\tbar.sync \t0;
\tld.shared.f32 \t%f3, [%rd2];
\tst.global.f32 \t[%rd1], %f3;
\t@%p1 bra \t$L__BB0_2;
$L__BB0_2:
\tret;
}
";

    #[test]
    fn counts_each_class() {
        assert!(is_ptx(LISTING));
        let s = ptx_stats(LISTING);
        let want = PtxStats {
            instructions: 12,
            int_arith: 3,
            div_rem: 1,
            global_loads: 1,
            global_stores: 1,
            shared_loads: 1,
            shared_stores: 1,
            branches: 1,
            barriers: 1,
        };
        assert_eq!(s, want);
    }

    #[test]
    fn another_binary_is_not_ptx() {
        assert!(!is_ptx("\u{7f}ELF\u{2}\u{1}"));
        assert_eq!(ptx_stats("").instructions, 0);
    }
}
