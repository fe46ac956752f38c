//! Which rows compare on one clock. A row's `timing` names how it was
//! timed: `profiling` (the sum of its kernels' OpenCL profiling events, the
//! Lift rows' and the references'), `cuda-events` (CUDA events around the
//! kernels: cuBLAS, Halide's CUDA build) or `host` (wall time around the
//! call and a device synchronisation: CLBlast, Halide's CPU build). The
//! first two time the device; a host-timed peer is compared with the
//! host-timed twin of the row beside it (`<variant>@host`, the same runs
//! timed on the host), where the results file has one.

use super::results::Row;
use super::variant_name::Variant;

/// How a row's times were taken: its `timing` column.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Timing {
    /// The sum of the kernels' OpenCL profiling events.
    Profiling,
    /// Wall time around the calls and a device synchronisation.
    Host,
    /// CUDA events around the kernels.
    CudaEvents,
}

impl Timing {
    /// The `results.csv` spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Timing::Profiling => "profiling",
            Timing::Host => "host",
            Timing::CudaEvents => "cuda-events",
        }
    }

    pub fn parse(s: &str) -> Option<Timing> {
        [Timing::Profiling, Timing::Host, Timing::CudaEvents].into_iter().find(|t| t.as_str() == s)
    }
}

/// Whether two `timing` values time the same thing: both the device, or
/// both the host. An empty or unknown value matches nothing.
pub fn same_clock(a: &str, b: &str) -> bool {
    let class = |t: &str| match t {
        "profiling" | "cuda-events" => Some(true),
        "host" => Some(false),
        _ => None,
    };
    class(a).is_some() && class(a) == class(b)
}

/// `variant`'s row on `peer`'s clock: its own row (`find(variant)`), else
/// its host-timed twin's; the flag says whether the clocks match (a file
/// without twins compares a host-timed peer with profiling events).
pub fn on_clock_of<'a>(
    find: impl Fn(&Variant) -> Option<&'a Row>,
    variant: &Variant,
    peer: &Row,
) -> Option<(&'a Row, bool)> {
    let own = find(variant)?;
    if same_clock(&own.timing, &peer.timing) {
        return Some((own, true));
    }
    match find(&variant.twin()).filter(|t| same_clock(&t.timing, &peer.timing)) {
        Some(t) => Some((t, true)),
        None => Some((own, false)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_clocks_match_each_other_and_not_the_host() {
        assert!(same_clock("profiling", "cuda-events"));
        assert!(same_clock("host", "host"));
        assert!(!same_clock("profiling", "host"));
        assert!(!same_clock("", ""));
    }
}
