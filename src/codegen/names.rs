//! Deterministic fresh names.

use std::collections::HashMap;

/// Hands out `prefix_0`, `prefix_1`, ... per prefix.
#[derive(Clone, Debug, Default)]
pub struct NameGen {
    next: HashMap<String, u32>,
}

impl NameGen {
    pub fn fresh(&mut self, prefix: &str) -> String {
        let n = self.next.entry(prefix.to_string()).or_insert(0);
        let name = format!("{prefix}_{n}");
        *n += 1;
        name
    }
}
