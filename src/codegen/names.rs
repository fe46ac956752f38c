//! Deterministic fresh names.

use std::collections::HashMap;

/// Hands out `prefix_0`, `prefix_1`, ... per prefix.
#[derive(Clone, Debug, Default)]
pub struct NameGen {
    next: HashMap<String, u32>,
}

impl NameGen {
    /// A fresh `prefix_<n>`; `prefix` is one of the prefixes user names may
    /// not use (`ir::c::GENERATED_PREFIXES`).
    pub fn fresh(&mut self, prefix: &str) -> String {
        assert!(
            crate::ir::c::GENERATED_PREFIXES.contains(&prefix),
            "fresh name prefix `{prefix}` not reserved in ir::c::GENERATED_PREFIXES"
        );
        let n = self.next.entry(prefix.to_string()).or_insert(0);
        let name = format!("{prefix}_{n}");
        *n += 1;
        name
    }
}
