//! Named host arrays and size bindings of the harness: the crate's
//! [`HostArray`], [`Arrays`] and [`Sizes`] (defined in `types`, shared with
//! launching, validation and the search).

pub use crate::types::{Arrays, HostArray, Sizes};
