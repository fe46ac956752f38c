//! Names a user function may not take: the words of OpenCL C, the
//! built-ins, and the names the code generator makes. The kernel is
//! printed with user names verbatim, so a clash would fail the OpenCL
//! build or shadow a generated name.

use super::builtins::is_builtin;

/// Words of OpenCL C that a user function or its parameters may not be
/// named: the kernel is printed with these names verbatim, so `half` or
/// `global` as a name fails the OpenCL build (found by fuzzing).
pub const RESERVED_C: [&str; 56] = [
    "auto",
    "bool",
    "break",
    "case",
    "char",
    "const",
    "constant",
    "continue",
    "default",
    "do",
    "double",
    "else",
    "enum",
    "extern",
    "float",
    "for",
    "global",
    "goto",
    "half",
    "if",
    "inline",
    "int",
    "kernel",
    "local",
    "long",
    "private",
    "read_only",
    "read_write",
    "register",
    "restrict",
    "return",
    "short",
    "signed",
    "size_t",
    "sizeof",
    "static",
    "struct",
    "switch",
    "typedef",
    "uchar",
    "uint",
    "ulong",
    "union",
    "unsigned",
    "ushort",
    "void",
    "volatile",
    "while",
    "write_only",
    "__global",
    "__local",
    "__private",
    "__constant",
    "__kernel",
    "barrier",
    "get_global_id",
];

/// Whether `name` is one of [`RESERVED_C`] or a built-in (`ir::c::builtins`).
pub fn is_reserved_c(name: &str) -> bool {
    RESERVED_C.contains(&name) || is_builtin(name)
}

/// Words the generated kernel uses besides [`RESERVED_C`] and the
/// built-ins: a user name reaching the kernel must not shadow them.
pub const KERNEL_WORDS: [&str; 20] = [
    "out",
    "get_local_id",
    "get_group_id",
    "get_local_size",
    "get_num_groups",
    "get_global_size",
    "CLK_LOCAL_MEM_FENCE",
    "CLK_GLOBAL_MEM_FENCE",
    "reqd_work_group_size",
    "__attribute__",
    "vload2",
    "vload3",
    "vload4",
    "vload8",
    "vload16",
    "vstore2",
    "vstore3",
    "vstore4",
    "vstore8",
    "vstore16",
];

/// The prefixes of the code generator's fresh names (`priv_0`, `gl_id_1`:
/// `codegen::names::NameGen` hands out only these, and the type checker
/// names `iterate` lengths `iter_len_<k>`).
pub const GENERATED_PREFIXES: [&str; 14] = [
    "priv", "loc", "glob", "gl_id", "wg_id", "l_id", "i", "in", "out", "iter", "iter_len", "lanes", "g", "m",
];

/// Whether a user name that reaches the kernel (a def's parameter or size,
/// a user function or its parameter) could collide with a name the code
/// generator makes: the words of [`KERNEL_WORDS`], `lift_...` (kernels and
/// helpers), `Tuple<n>...` (tuple structs) and the fresh names, a prefix of
/// [`GENERATED_PREFIXES`] and `_<digits>` (`priv_0`, `gl_id_0`; `x_1` and
/// the rewriter's `add_vec2_2` are free), `..._v4` (the vectorised copy of
/// a user function for `mapVec`), or is an OpenCL C word or
/// built-in ([`is_reserved_c`]).
pub fn is_reserved_name(name: &str) -> bool {
    let numbered = name.rsplit_once('_').is_some_and(|(p, d)| {
        GENERATED_PREFIXES.contains(&p) && !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit())
    });
    // `codegen::lower::vector_fun_name`: the vectorised copy of a user
    // function for `mapVec`.
    let vector_copy = ["_v2", "_v3", "_v4", "_v8", "_v16"].iter().any(|w| name.ends_with(w));
    let tuple = name.strip_prefix("Tuple").is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()));
    is_reserved_c(name)
        || KERNEL_WORDS.contains(&name)
        || name.starts_with("lift_")
        || tuple
        || numbered
        || vector_copy
}
