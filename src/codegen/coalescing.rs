//! Where a kernel reads and writes global memory, as a side table of the
//! syntax tree: each access's index, the work-item index of dimension 0 in
//! scope, and the trip counts of the loops around it. The search orders
//! candidates with it (on a GPU, neighbouring work-items of dimension 0
//! reading neighbouring elements share memory transactions: a coalesced
//! kernel moves a fraction of the bytes an uncoalesced one does).

use crate::arith::ArithExpr;
use crate::ir::c::kernel::Module;
use crate::ir::c::CExpr;
use crate::ir::c::Stmt;

/// One read or write of a global buffer.
#[derive(Clone, Debug, PartialEq)]
pub struct GlobalAccess {
    pub buffer: String,
    pub index: ArithExpr,
    /// The innermost variable holding `get_global_id(0)` or
    /// `get_local_id(0)` around the access, if any.
    pub lane: Option<String>,
    /// The trip counts of the sequential loops around it, where their
    /// bounds are index expressions (thread loops and others count once).
    pub loops: Vec<ArithExpr>,
}

/// Every global access of the kernel, in the order of its text.
pub fn global_accesses(m: &Module) -> Vec<GlobalAccess> {
    let globals: Vec<&str> =
        m.params.iter().filter(|p| p.ty.contains("global")).map(|p| p.name.as_str()).collect();
    let mut v = Globals { globals, out: Vec::new() };
    walk(&m.body, &mut v);
    v.out
}

struct Globals<'m> {
    globals: Vec<&'m str>,
    out: Vec<GlobalAccess>,
}

impl LaneVisitor for Globals<'_> {
    fn index(&mut self, base: &str, index: &ArithExpr, at: &Place) {
        if self.globals.contains(&base) {
            self.out.push(GlobalAccess {
                buffer: base.to_string(),
                index: index.clone(),
                lane: at.lane.last().cloned(),
                loops: at.loops.to_vec(),
            });
        }
    }
}

/// Where a walk is: the lane variables in scope (innermost last) and the
/// trip counts of the sequential loops around.
pub(crate) struct Place<'w> {
    pub lane: &'w [String],
    pub loops: &'w [ArithExpr],
}

/// What a walk of a kernel body (`walk`) reports.
pub(crate) trait LaneVisitor {
    /// `base[index]` (`base` as printed: a name or a cast pointer).
    fn index(&mut self, base: &str, index: &ArithExpr, at: &Place);
    /// C text the walk does not look into.
    fn raw(&mut self, _text: &str) {}
}

/// Walks `body` in the order of its text, tracking the lane variables
/// (those holding `get_global_id(0)` or `get_local_id(0)`) and the
/// sequential loops in scope.
pub(crate) fn walk(body: &[Stmt], v: &mut impl LaneVisitor) {
    Walk { lane: Vec::new(), loops: Vec::new(), v }.stmts(body);
}

struct Walk<'v, V> {
    /// Lane variables in scope, innermost last (a block's end drops
    /// those it declared).
    lane: Vec<String>,
    loops: Vec<ArithExpr>,
    v: &'v mut V,
}

/// Whether `e` is the text `get_global_id(0)` or `get_local_id(0)`, or
/// one of them plus a constant (a thread loop split into its iterations
/// by `codegen::prefetch`: `get_local_id(0) + 16`), which moves by one
/// from one work-item to the next all the same.
pub(crate) fn is_lane_id(e: &CExpr) -> bool {
    let CExpr::Raw(s) = e else { return false };
    let id = match s.split_once(" + ") {
        Some((id, c)) if c.parse::<i64>().is_ok() => id,
        Some(_) => return false,
        None => s.as_str(),
    };
    id == "get_global_id(0)" || id == "get_local_id(0)"
}

impl<V: LaneVisitor> Walk<'_, V> {
    fn stmts(&mut self, body: &[Stmt]) {
        let lanes = self.lane.len();
        for s in body {
            self.stmt(s);
        }
        self.lane.truncate(lanes);
    }

    fn stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::Decl { name, init, .. } => {
                if let Some(i) = init {
                    self.expr(i);
                    if is_lane_id(i) {
                        self.lane.push(name.clone());
                    }
                }
            }
            Stmt::Assign { target, value, .. } => {
                self.expr(target);
                self.expr(value);
            }
            Stmt::Expr(e) => self.expr(e),
            Stmt::CountedFor { var, init, bound, step, body } => {
                self.expr(init);
                self.expr(bound);
                self.expr(step);
                let lanes = self.lane.len();
                // A sequential loop counts `bound` times (`for (i = 0; i <
                // n; i += 1)`); a thread loop once per work-item.
                let counted = match (init, bound, step) {
                    _ if is_lane_id(init) => {
                        self.lane.push(var.clone());
                        false
                    }
                    (CExpr::Raw(lo), CExpr::Arith(n), CExpr::Raw(st)) if lo == "0" && st == "1" => {
                        self.loops.push(n.clone());
                        true
                    }
                    _ => false,
                };
                self.stmts(body);
                if counted {
                    self.loops.pop();
                }
                self.lane.truncate(lanes);
            }
            Stmt::If { cond, then, otherwise } => {
                self.expr(cond);
                self.stmts(then);
                self.stmts(otherwise);
            }
            Stmt::Block(b) => self.stmts(b),
            Stmt::Barrier { .. } | Stmt::Comment(_) => {}
            Stmt::For { .. } | Stmt::Return(_) => s.user_only(),
        }
    }

    /// The names (in text) and the buffer accesses anywhere in `e`; an
    /// `Arith` names only indices, never a buffer.
    fn expr(&mut self, e: &CExpr) {
        e.walk(&mut |x| {
            if let CExpr::Raw(text) | CExpr::Var(text) = x {
                self.v.raw(text)
            } else if let CExpr::Index(base, index) = x {
                self.v.index(base, index, &Place { lane: &self.lane, loops: &self.loops })
            }
        })
    }
}

/// The share (0 to 1) of global accesses, each weighted by its loops'
/// trip counts at `sizes`, whose index moves by at most one element from
/// one work-item of dimension 0 to the next (other index variables at 0).
/// `None` for a kernel without global accesses.
pub fn coalesced_share(
    accesses: &[GlobalAccess],
    sizes: &std::collections::BTreeMap<String, i64>,
) -> Option<f64> {
    let (mut good, mut all) = (0.0, 0.0);
    for a in accesses {
        let at = |lane: i64| {
            a.index
                .eval_with(&|v| {
                    if Some(v) == a.lane.as_deref() {
                        Some(lane)
                    } else {
                        Some(sizes.get(v).copied().unwrap_or(0))
                    }
                })
                .ok()
        };
        let weight: f64 = a
            .loops
            .iter()
            .map(|n| {
                n.eval_with(&|v| Some(sizes.get(v).copied().unwrap_or(0)))
                    .map_or(1.0, |n| n.clamp(1, 1 << 20) as f64)
            })
            .product();
        let stride = match (&a.lane, at(0), at(1)) {
            (Some(_), Some(x), Some(y)) => Some((y - x).abs()),
            _ => None,
        };
        all += weight;
        if stride.is_some_and(|s| s <= 1) {
            good += weight;
        }
    }
    (all > 0.0).then(|| good / all)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lane_id_plus_a_constant_is_a_lane() {
        for (text, lane) in [
            ("get_local_id(0)", true),
            ("get_global_id(0) + 32", true),
            ("get_local_id(1) + 8", false),
            ("get_local_id(0) + n", false),
            ("get_local_id(0) * 2", false),
        ] {
            assert_eq!(is_lane_id(&CExpr::raw(text)), lane, "{text}");
        }
    }
}
