//! The built-in patterns. Each variant documents its meaning and its type;
//! `passes::typecheck` implements the types, `interp` the meanings.
//!
//! A pattern's *parameters* (functions, split factors, index functions) are
//! fields of the variant; its *data* arguments are the arguments of the call
//! (`Call(split(128), [xs])`). The argument lists are given per variant.

use super::{FunDecl, Literal};
use crate::arith::ArithExpr;

/// How a map is executed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MapKind {
    /// High-level `map`: no execution strategy chosen yet. Compiles only when
    /// its function rearranges data alone (views, no loop); the interpreter
    /// runs it always.
    Map,
    /// `mapGlb(d)`: one element per global thread of dimension `d`.
    Glb(u8),
    /// `mapWrg(d)`: one element per work-group of dimension `d`.
    Wrg(u8),
    /// `mapLcl(d)`: one element per local thread of dimension `d`; must be
    /// nested in a `mapWrg`.
    Lcl(u8),
    /// `mapSeq`: a sequential loop.
    Seq,
    /// `mapSeqUnroll`: a sequential loop, fully unrolled.
    SeqUnroll,
}

/// How a reduction is executed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceKind {
    /// High-level `reduce` (associative `f`, neutral `init`).
    Reduce,
    /// `reduceSeq`: a sequential loop with an accumulator.
    Seq,
    /// `reduceSeqUnroll`: the same loop, fully unrolled.
    SeqUnroll,
}

/// Boundary handling of `pad` (CGO 2018, Section 3.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PadMode {
    /// Repeat the edge element: index `clamp(i, 0, n-1)`.
    Clamp,
    /// Reflect at the edge, repeating it: `-1 -> 0`, `-2 -> 1`, `n -> n-1`.
    Mirror,
    /// Wrap around: index `(i + n) % n`.
    Wrap,
}

/// An index function `\i -> body` for `gather`/`scatter`: `body` is integer
/// arithmetic over the index variable `param` and sizes in scope.
#[derive(Clone, Debug, PartialEq)]
pub struct IndexFun {
    pub param: String,
    pub body: ArithExpr,
}

/// The built-in patterns.
#[derive(Clone, Debug)]
pub enum Pattern {
    /// `map(f)` and its OpenCL variants. Args `[xs]`.
    /// `(a -> b) -> [a]n -> [b]n`; `ys[i] = f(xs[i])`.
    Map { kind: MapKind, f: Box<FunDecl> },
    /// `mapVec(f)`: applies a scalar function to every component of a vector,
    /// emitted as one vectorised OpenCL function. Args `[v]`.
    /// `(a -> b) -> <a>m -> <b>m`.
    MapVec { f: Box<FunDecl> },
    /// `reduce(f, z)` and its variants. Args `[init, xs]`.
    /// `((a, b) -> a) -> a -> [b]n -> [a]1`; a left fold of `f` from `init`.
    Reduce { kind: ReduceKind, f: Box<FunDecl> },
    /// `partRed(f, z, m)`: reduces `[a](m*k)` to `[a]m`, each output the
    /// reduction of one of `m` consecutive chunks. Args `[init, xs]`.
    /// High level only (lowered by the rewrite system).
    PartRed { f: Box<FunDecl>, m: ArithExpr },
    /// `iterate(n, f)`: applies `f` n times, feeding each output to the next
    /// application. Args `[xs]`. If one application of `f` maps `[a]k` to
    /// `[a](k/d)`, the result is `[a](len/d^n)`.
    Iterate { n: u32, f: Box<FunDecl> },
    /// `split(m)`: `[a](m*k) -> [[a]m]k`. Args `[xs]`.
    Split(ArithExpr),
    /// `join`: `[[a]m]k -> [a](m*k)`. Args `[xs]`.
    Join,
    /// `gather(f)`: `ys[i] = xs[f(i)]`; `[a]n -> [a]n`. Args `[xs]`.
    Gather(IndexFun),
    /// `scatter(f)`: `ys[f(i)] = xs[i]`; `[a]n -> [a]n`. Args `[xs]`.
    Scatter(IndexFun),
    /// `transpose`: `[[a]m]n -> [[a]n]m`. Args `[xs]`.
    Transpose,
    /// `zip`: `[a]n -> [b]n -> ... -> [(a, b, ...)]n`. Args: the arrays, 2 or more.
    Zip(usize),
    /// `get(i)`: the `i`-th component of a tuple. Args `[t]`.
    Get(usize),
    /// `at(i)`: the `i`-th element of an array, `[a]n -> a`. Args `[xs]`.
    At(ArithExpr),
    /// `asVector(m)`: `[s](m*k) -> [<s>m]k` for a scalar `s`. Args `[xs]`.
    AsVector(u8),
    /// `asScalar`: `[<s>m]k -> [s](m*k)`. Args `[xs]`.
    AsScalar,
    /// `toGlobal(f)`: `f`, writing its output to global memory.
    ToGlobal(Box<FunDecl>),
    /// `toLocal(f)`: `f`, writing its output to local memory.
    ToLocal(Box<FunDecl>),
    /// `toPrivate(f)`: `f`, writing its output to private memory.
    ToPrivate(Box<FunDecl>),
    /// `slide(size, step)`: overlapping windows,
    /// `[a]n -> [[a]size]((n - size + step) / step)`; window `i` starts at
    /// `i * step`. Args `[xs]`.
    Slide { size: ArithExpr, step: ArithExpr },
    /// `pad(l, r, mode)`: `[a]n -> [a](l + n + r)`, the new elements taken
    /// from inside the array by `mode`. Args `[xs]`.
    Pad { left: ArithExpr, right: ArithExpr, mode: PadMode },
    /// `padConst(l, r, v)`: like `pad` but the new elements are `v`.
    PadConst { left: ArithExpr, right: ArithExpr, value: Literal },
    /// `generate(n, f)`: the array `[f(0), ..., f(n-1)]` where `f` takes the
    /// index as an `int`; nothing is stored. Args `[]`.
    Generate { len: ArithExpr, f: Box<FunDecl> },
    /// `filter`: `ys[i] = xs[idx[i]]`, `[a]n -> [int]m -> [a]m`: a gather
    /// through an array of indices (MD's neighbour lists). Args `[xs, idx]`.
    Filter,
    /// `id`: the identity on any type. Applied to data it makes a copy
    /// (`toLocal(mapLcl(id))` copies into local memory). Args `[x]`.
    Id,
}

impl Pattern {
    /// The function a pattern applies, if it takes one (`map(f)`,
    /// `reduce(f, z)`, `toLocal(f)`, ...). Analyses that only need to look
    /// inside nested functions recurse through this.
    pub fn nested_fun(&self) -> Option<&FunDecl> {
        match self {
            Pattern::Map { f, .. }
            | Pattern::MapVec { f }
            | Pattern::Reduce { f, .. }
            | Pattern::PartRed { f, .. }
            | Pattern::Iterate { f, .. }
            | Pattern::ToGlobal(f)
            | Pattern::ToLocal(f)
            | Pattern::ToPrivate(f)
            | Pattern::Generate { f, .. } => Some(f),
            Pattern::Split(_)
            | Pattern::Join
            | Pattern::Gather(_)
            | Pattern::Scatter(_)
            | Pattern::Transpose
            | Pattern::Zip(_)
            | Pattern::Get(_)
            | Pattern::At(_)
            | Pattern::AsVector(_)
            | Pattern::AsScalar
            | Pattern::Slide { .. }
            | Pattern::Pad { .. }
            | Pattern::PadConst { .. }
            | Pattern::Filter
            | Pattern::Id => None,
        }
    }
}
