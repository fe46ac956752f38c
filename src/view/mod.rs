//! Views (CGO 2017, Section 5.3): how a value is laid out in memory.
//!
//! Data-layout patterns (`split`, `join`, `zip`, `gather`, `slide`, `pad`,
//! ...) allocate nothing; they wrap their argument's view. Maps wrap the
//! view of their argument in an [`View::Access`] with their loop variable.
//! When a user function finally reads or writes a value, its view is
//! *consumed* top-down with an index stack and a tuple stack, giving a
//! memory and an index expression ([`Access`]). Output views are built the
//! same way, from the memory being written, with each layout pattern
//! replaced by its inverse (see `codegen`).

mod consume;

pub use consume::{consume, consume_in, Access, ViewError};

use crate::arith::ArithExpr;
use crate::ir::{IndexFun, MapKind, PadMode};
use crate::passes::AddressSpace;
use crate::types::Type;
use std::rc::Rc;

/// How a memory is declared, which decides how it is indexed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemKind {
    /// A `local` or private array, or a pointer into one: `name[index]`.
    Array,
    /// A buffer the kernel gets as a parameter: `name[index]`. OpenCL aligns
    /// buffers (CL_DEVICE_MEM_BASE_ADDR_ALIGN), so a vector at a multiple of
    /// its width is read as a plain vector access, not with `vloadn`, which
    /// only promises scalar alignment (NVIDIA's driver splits it).
    Buffer,
    /// A private variable holding one value: `name` (the index is 0).
    Variable,
}

/// A memory: a kernel buffer, a local or private array, or a variable.
#[derive(Clone, Debug, PartialEq)]
pub struct Memory {
    pub name: String,
    pub space: AddressSpace,
    /// The element type the memory is declared with (`float`, `float4`, a tuple struct).
    pub elem: Type,
    pub kind: MemKind,
}

pub type MemRef = Rc<Memory>;

/// A view of an array or value. `ty`s are the types of what the view shows.
#[derive(Clone, Debug)]
pub enum View {
    /// A memory seen as a value of type `ty` (arrays flattened row-major).
    Mem {
        mem: MemRef,
        ty: Type,
    },
    /// A private value given by C text (a literal, a scalar kernel parameter).
    Value {
        c: String,
        ty: Type,
    },
    /// Element `index` of the array `of`.
    Access {
        index: ArithExpr,
        of: Rc<View>,
    },
    /// `split(n)` of `of`.
    Split {
        n: ArithExpr,
        of: Rc<View>,
    },
    /// `join` of `of`, whose inner arrays have length `n`.
    Join {
        n: ArithExpr,
        of: Rc<View>,
    },
    Transpose {
        of: Rc<View>,
    },
    /// `gather(f)` of `of` (on the output side: the view a `scatter` writes through).
    Gather {
        f: IndexFun,
        of: Rc<View>,
    },
    Slide {
        step: ArithExpr,
        of: Rc<View>,
    },
    /// `pad` of `of`, which has length `len`.
    Pad {
        left: ArithExpr,
        len: ArithExpr,
        mode: PadMode,
        of: Rc<View>,
    },
    /// `padConst`: outside `[0, len)` the C constant `value`.
    PadConst {
        left: ArithExpr,
        len: ArithExpr,
        value: String,
        of: Rc<View>,
    },
    Zip {
        of: Vec<Rc<View>>,
    },
    /// Component `k` of a tuple.
    Get {
        k: usize,
        of: Rc<View>,
    },
    /// `asVector(n)` of scalars `of`.
    AsVector {
        n: u8,
        of: Rc<View>,
    },
    /// `asScalar` of vectors of width `n`.
    AsScalar {
        n: u8,
        of: Rc<View>,
    },
    /// `filter`: element `i` is `of[idx[i]]`; `idx_len` bounds the indices.
    Filter {
        of: Rc<View>,
        idx: Rc<View>,
        of_len: ArithExpr,
    },
    /// `generate`: element `i` is the C function `fun` applied to `i`.
    Generate {
        fun: String,
    },
    /// Private memory written by a parallel map: each thread holds only its
    /// own element, so the map's index is dropped. `kind` is the map's: a
    /// read must come from a thread of the same kind at its own index.
    /// With `keep`, the index is kept (a thread runs several iterations and
    /// its private array has room for all elements) but checked the same
    /// way: the elements of the other threads are not in it. A kept index
    /// is not consumed: `depth` says which of the next indices (0: the
    /// outermost) is checked, so nested parallel maps each check theirs.
    DropIndex {
        of: Rc<View>,
        kind: MapKind,
        keep: bool,
        depth: usize,
    },
    /// An `int` value given by an index expression (`generate`'s index).
    IndexValue(ArithExpr),
    /// A high-level `map` of a layout-only function: element `i` is `body`
    /// with the index variable `var` standing for `i`.
    MapLayout {
        var: String,
        body: Rc<View>,
    },
}

impl View {
    pub fn access(index: ArithExpr, of: View) -> View {
        View::Access { index, of: Rc::new(of) }
    }

    /// The one view this view rearranges (`filter`: the filtered data, not
    /// the indices); `None` for leaves and for `zip`.
    pub fn wrapped(&self) -> Option<&View> {
        match self {
            View::Mem { .. }
            | View::Value { .. }
            | View::Generate { .. }
            | View::IndexValue(_)
            | View::Zip { .. } => None,
            View::Access { of, .. }
            | View::Split { of, .. }
            | View::Join { of, .. }
            | View::Transpose { of }
            | View::Gather { of, .. }
            | View::Slide { of, .. }
            | View::Pad { of, .. }
            | View::PadConst { of, .. }
            | View::Get { of, .. }
            | View::AsVector { of, .. }
            | View::AsScalar { of, .. }
            | View::Filter { of, .. }
            | View::DropIndex { of, .. } => Some(of),
            View::MapLayout { body, .. } => Some(body),
        }
    }
}
