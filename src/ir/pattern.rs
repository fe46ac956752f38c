//! The built-in patterns. Each variant documents its meaning and its type;
//! `passes::typecheck` implements the types, `interp` the meanings.
//!
//! A pattern's *parameters* (functions, split factors, index functions) are
//! fields of the variant; its *data* arguments are the arguments of the call
//! (`Call(split(128), [xs])`). The argument lists are given per variant.
//!
//! What other stages need to know about a pattern without looking at its
//! fields lives here, in exhaustive matches: its name in source
//! ([`PatternName`], with usage and parameter counts, looked up by name), the
//! number of data arguments of its call ([`Pattern::data_args`]) and whether
//! it only changes the layout of its data ([`layout_pattern!`]).

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

impl PadMode {
    pub const ALL: [PadMode; 3] = [PadMode::Clamp, PadMode::Mirror, PadMode::Wrap];

    /// The mode's name in source (`pad(1, 1, clamp)`).
    pub fn name(self) -> &'static str {
        match self {
            PadMode::Clamp => "clamp",
            PadMode::Mirror => "mirror",
            PadMode::Wrap => "wrap",
        }
    }

    pub fn from_name(name: &str) -> Option<PadMode> {
        PadMode::ALL.into_iter().find(|m| m.name() == name)
    }
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
    /// `slideSeqPlus(size, step, f)`: `mapSeq(f) o slide(size, step)`,
    /// `[a]n -> [b]((n - size + step) / step)` for `f: [a]size -> b`,
    /// compiled as one sequential loop that keeps the current window in
    /// private memory and loads only `step` new elements per iteration
    /// (register reuse along a sequential stencil dimension). Args `[xs]`.
    SlideSeq { size: ArithExpr, step: ArithExpr, f: Box<FunDecl> },
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

/// The patterns that only change the layout of their data (views in the
/// code generator, no loop and no memory of their own), as a match pattern
/// over [`Pattern`]: `match p { layout_pattern!() => ..., Pattern::Map { .. } => ... }`
/// keeps a match exhaustive while naming the set in one place.
macro_rules! layout_pattern {
    () => {
        $crate::ir::Pattern::Split(_)
            | $crate::ir::Pattern::Join
            | $crate::ir::Pattern::Gather(_)
            | $crate::ir::Pattern::Scatter(_)
            | $crate::ir::Pattern::Transpose
            | $crate::ir::Pattern::Zip(_)
            | $crate::ir::Pattern::Get(_)
            | $crate::ir::Pattern::At(_)
            | $crate::ir::Pattern::AsVector(_)
            | $crate::ir::Pattern::AsScalar
            | $crate::ir::Pattern::Slide { .. }
            | $crate::ir::Pattern::Pad { .. }
            | $crate::ir::Pattern::PadConst { .. }
            | $crate::ir::Pattern::Filter
    };
}
pub(crate) use layout_pattern;

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
            | Pattern::SlideSeq { f, .. }
            | Pattern::Generate { f, .. } => Some(f),
            layout_pattern!() | Pattern::Id => None,
        }
    }
}

impl Pattern {
    /// Whether the pattern only changes the layout of its data.
    pub fn is_layout(&self) -> bool {
        matches!(self, layout_pattern!())
    }

    /// The pattern's name in source, without its parameters.
    pub fn syntax(&self) -> PatternName {
        use PatternName as N;
        match self {
            Pattern::Map { kind, .. } => match kind {
                MapKind::Map => N::Map,
                MapKind::Glb(_) => N::MapGlb,
                MapKind::Wrg(_) => N::MapWrg,
                MapKind::Lcl(_) => N::MapLcl,
                MapKind::Seq => N::MapSeq,
                MapKind::SeqUnroll => N::MapSeqUnroll,
            },
            Pattern::MapVec { .. } => N::MapVec,
            Pattern::Reduce { kind, .. } => match kind {
                ReduceKind::Reduce => N::Reduce,
                ReduceKind::Seq => N::ReduceSeq,
                ReduceKind::SeqUnroll => N::ReduceSeqUnroll,
            },
            Pattern::PartRed { .. } => N::PartRed,
            Pattern::Iterate { .. } => N::Iterate,
            Pattern::Split(_) => N::Split,
            Pattern::Join => N::Join,
            Pattern::Gather(_) => N::Gather,
            Pattern::Scatter(_) => N::Scatter,
            Pattern::Transpose => N::Transpose,
            Pattern::Zip(_) => N::Zip,
            Pattern::Get(_) => N::Get,
            Pattern::At(_) => N::At,
            Pattern::AsVector(_) => N::AsVector,
            Pattern::AsScalar => N::AsScalar,
            Pattern::ToGlobal(_) => N::ToGlobal,
            Pattern::ToLocal(_) => N::ToLocal,
            Pattern::ToPrivate(_) => N::ToPrivate,
            Pattern::Slide { .. } => N::Slide,
            Pattern::SlideSeq { .. } => N::SlideSeqPlus,
            Pattern::Pad { .. } => N::Pad,
            Pattern::PadConst { .. } => N::PadConst,
            Pattern::Generate { .. } => N::Generate,
            Pattern::Filter => N::Filter,
            Pattern::Id => N::Id,
        }
    }

    /// The pattern's name as written in source, for messages.
    pub fn name(&self) -> &'static str {
        self.syntax().as_str()
    }

    /// How many data arguments a call of the pattern has in the IR (a
    /// reduction's initial value is one); `None` for `toX(f)`, which takes
    /// what `f` takes.
    pub fn data_args(&self) -> Option<usize> {
        match self {
            Pattern::Reduce { .. } | Pattern::PartRed { .. } | Pattern::Filter => Some(2),
            Pattern::Zip(n) => Some(*n),
            Pattern::Generate { .. } => Some(0),
            Pattern::ToGlobal(_) | Pattern::ToLocal(_) | Pattern::ToPrivate(_) => None,
            Pattern::Map { .. }
            | Pattern::MapVec { .. }
            | Pattern::Iterate { .. }
            | Pattern::Split(_)
            | Pattern::Join
            | Pattern::Gather(_)
            | Pattern::Scatter(_)
            | Pattern::Transpose
            | Pattern::Get(_)
            | Pattern::At(_)
            | Pattern::AsVector(_)
            | Pattern::AsScalar
            | Pattern::Slide { .. }
            | Pattern::SlideSeq { .. }
            | Pattern::Pad { .. }
            | Pattern::PadConst { .. }
            | Pattern::Id => Some(1),
        }
    }
}

/// Defines [`PatternName`] from one table: variant, name in source, usage
/// (for messages) and number of parameters before the data arguments.
macro_rules! pattern_names {
    ($($v:ident = $name:literal, $usage:literal, $params:literal;)*) => {
        /// A pattern's name in source: which pattern, without its
        /// parameters (`mapGlb`, `split`, ...).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum PatternName {
            $($v,)*
        }

        impl PatternName {
            /// Every pattern name, in the order of the table.
            pub const ALL: &'static [PatternName] = &[$(PatternName::$v,)*];

            pub fn as_str(self) -> &'static str {
                match self {
                    $(PatternName::$v => $name,)*
                }
            }

            /// How it is written with its parameters (`split(m)`).
            pub fn usage(self) -> &'static str {
                match self {
                    $(PatternName::$v => $usage,)*
                }
            }

            /// The number of parameters written before the data arguments
            /// (`reduceSeq(f, init)` has 2; the optional dimension of
            /// `mapGlb([dim,] f)` is not counted).
            pub fn params(self) -> usize {
                match self {
                    $(PatternName::$v => $params,)*
                }
            }
        }
    };
}

pattern_names! {
    Map = "map", "map(f)", 1;
    MapSeq = "mapSeq", "mapSeq(f)", 1;
    MapSeqUnroll = "mapSeqUnroll", "mapSeqUnroll(f)", 1;
    MapGlb = "mapGlb", "mapGlb([dim,] f)", 1;
    MapWrg = "mapWrg", "mapWrg([dim,] f)", 1;
    MapLcl = "mapLcl", "mapLcl([dim,] f)", 1;
    MapVec = "mapVec", "mapVec(f)", 1;
    Reduce = "reduce", "reduce(f, init)", 2;
    ReduceSeq = "reduceSeq", "reduceSeq(f, init)", 2;
    ReduceSeqUnroll = "reduceSeqUnroll", "reduceSeqUnroll(f, init)", 2;
    PartRed = "partRed", "partRed(f, init, m)", 3;
    Iterate = "iterate", "iterate(n, f)", 2;
    Split = "split", "split(m)", 1;
    Join = "join", "join", 0;
    Gather = "gather", "gather(\\i -> index)", 1;
    Scatter = "scatter", "scatter(\\i -> index)", 1;
    Transpose = "transpose", "transpose", 0;
    Zip = "zip", "zip(xs, ys, ...)", 0;
    Get = "get", "get(i)", 1;
    At = "at", "at(i)", 1;
    AsVector = "asVector", "asVector(m)", 1;
    AsScalar = "asScalar", "asScalar", 0;
    ToGlobal = "toGlobal", "toGlobal(f)", 1;
    ToLocal = "toLocal", "toLocal(f)", 1;
    ToPrivate = "toPrivate", "toPrivate(f)", 1;
    Slide = "slide", "slide(size, step)", 2;
    SlideSeqPlus = "slideSeqPlus", "slideSeqPlus(size, step, f)", 3;
    Pad = "pad", "pad(left, right, clamp|mirror|wrap)", 3;
    PadConst = "padConst", "padConst(left, right, value)", 3;
    Generate = "generate", "generate(n, f)", 2;
    Filter = "filter", "filter(xs, indices)", 0;
    Id = "id", "id", 0;
}

/// Other names of patterns, as the papers write them.
const ALIASES: [(&str, PatternName); 5] = [
    ("reorder", PatternName::Gather),
    ("vectorize", PatternName::MapVec),
    ("mapGlobal", PatternName::MapGlb),
    ("mapLocal", PatternName::MapLcl),
    ("mapSeqSlide", PatternName::SlideSeqPlus),
];

impl PatternName {
    /// The pattern a name (or one of its aliases) stands for.
    pub fn from_name(name: &str) -> Option<PatternName> {
        PatternName::ALL
            .iter()
            .copied()
            .find(|p| p.as_str() == name)
            .or_else(|| ALIASES.iter().find(|(a, _)| *a == name).map(|(_, p)| *p))
    }

    /// [`PatternName::usage`] with the name as written (an alias such as
    /// `reorder(\i -> index)` keeps its own name).
    pub fn usage_as(self, written: &str) -> String {
        format!("{written}{}", &self.usage()[self.as_str().len()..])
    }

    /// How many data arguments follow the parameters in source: `generate`
    /// takes none, `filter` two, `zip` all of its arguments (none fixed
    /// here), every other pattern one.
    pub fn source_data_args(self) -> usize {
        use PatternName as N;
        match self {
            N::Generate | N::Zip => 0,
            N::Filter => 2,
            N::Map
            | N::MapSeq
            | N::MapSeqUnroll
            | N::MapGlb
            | N::MapWrg
            | N::MapLcl
            | N::MapVec
            | N::Reduce
            | N::ReduceSeq
            | N::ReduceSeqUnroll
            | N::PartRed
            | N::Iterate
            | N::Split
            | N::Join
            | N::Gather
            | N::Scatter
            | N::Transpose
            | N::Get
            | N::At
            | N::AsVector
            | N::AsScalar
            | N::ToGlobal
            | N::ToLocal
            | N::ToPrivate
            | N::Slide
            | N::SlideSeqPlus
            | N::Pad
            | N::PadConst
            | N::Id => 1,
        }
    }

    /// Whether the pattern takes an optional leading dimension
    /// (`mapGlb(1, f)`).
    pub fn takes_dimension(self) -> bool {
        matches!(self, PatternName::MapGlb | PatternName::MapWrg | PatternName::MapLcl)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_aliases_are_found_and_distinct() {
        for (i, p) in PatternName::ALL.iter().enumerate() {
            assert_eq!(PatternName::from_name(p.as_str()), Some(*p));
            assert!(p.usage().starts_with(p.as_str()), "{p:?}");
            assert!(PatternName::ALL[..i].iter().all(|q| q.as_str() != p.as_str()));
        }
        for (alias, p) in ALIASES {
            assert_eq!(PatternName::from_name(alias), Some(p));
            assert!(PatternName::from_name(alias).is_some_and(|q| q.as_str() != alias));
        }
        assert_eq!(PatternName::Gather.usage_as("reorder"), "reorder(\\i -> index)");
        assert_eq!(PatternName::from_name("mapGlbal"), None);
        for m in PadMode::ALL {
            assert_eq!(PadMode::from_name(m.name()), Some(m));
        }
    }
}
