//! Named host arrays and size bindings of the harness; the arrays
//! themselves are [`HostArray`]s.

use std::collections::BTreeMap;

pub use crate::types::HostArray;

/// Named arrays (inputs or outputs).
pub type Arrays = BTreeMap<String, HostArray>;

/// Bound size names (`N -> 4096`).
pub type Sizes = BTreeMap<String, i64>;
