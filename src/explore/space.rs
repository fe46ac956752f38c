//! The search space: stage 1 (algorithmic rewriting to a bounded depth,
//! deduplicated by structural hash) and stage 2 (lowering choices), both as
//! derivations whose numeric parameters are *slots* that stage 3 fills.
//!
//! A [`Shape`] is a derivation template: the rule steps with the slot each
//! numeric parameter comes from. Its structure does not depend on the slot
//! values (a `split-join` with `n = 8` or `n = 64` builds the same tree), so
//! one shape is instantiated with many parameter assignments by replaying
//! its steps ([`Shape::instantiate`]).

use crate::arith::{self, ArithExpr};
use crate::ir::equiv::canonical_def;
use crate::ir::visit::{self, Node, Path};
use crate::ir::{
    layout_pattern, Expr, ExprKind, FunDecl, FunKind, MapKind, Pattern, Program, ReduceKind, Span, UserFunId,
    Visitor,
};
use crate::rewrite::{self, Args, Constraint, Rule};
use crate::types::Sizes;
use std::collections::HashSet;

/// Where a step's parameter comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Arg {
    Fixed(i64),
    /// Index into [`Shape::slots`].
    Slot(usize),
    /// A length divided by the product of some slots (`m = N / (c * l)`
    /// of a partial reduction whose chunks the slots size).
    LenOver(ArithExpr, Vec<usize>),
    /// The base-2 logarithm of a slot (iterations of a halving tree).
    Log2(usize),
    /// The product of some slots (a work-group's chunk of `c * l`).
    Prod(Vec<usize>),
    /// A slot's value plus a constant (a tile size `u = v + overlap`).
    SlotPlus(usize, i64),
    /// A slot's value without its factors two (the values a halving tree
    /// leaves: 3 of 24 lanes).
    OddPart(usize),
    /// How many factors two a slot's value has (a halving tree's steps).
    TwoExp(usize),
    /// An expression of the sizes (`reduce-pad`'s elements added, which
    /// the length decides).
    Expr(ArithExpr),
}

/// One rule application of a shape; `rule: None` is the `extract` step of
/// derivations (the expression at `path` becomes the kernel: the rest runs
/// in the fixed second stage given by `--then`).
#[derive(Clone, Debug)]
pub struct Step {
    pub rule: Option<&'static Rule>,
    pub path: Path,
    pub args: Vec<(&'static str, Arg)>,
}

/// A numeric parameter and the values it may take.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Slot {
    /// `split-join@1.0:n`, for the CSV.
    pub name: String,
    pub domain: Vec<i64>,
    /// The representative value the shape was built with.
    pub default: i64,
}

/// Powers of two from `lo` to `hi` dividing `len` (all of them when `len`
/// is unknown): the domain of a split, chunk or lane-count slot.
pub(super) fn pow2(lo: i64, hi: i64, len: Option<i64>) -> Vec<i64> {
    (0..=20).map(|k| 1i64 << k).filter(|&v| v >= lo && v <= hi && len.is_none_or(|l| l % v == 0)).collect()
}

/// Sizes for a slot whose value must divide `len`, from `lo` to `hi`: per
/// power-of-two band `[p, 2p)`, the divisor of `len` in it with the most
/// factors of two (whole warps, vector widths) and the one with the fewest
/// (the rest of the length's factors two are left to another slot, such
/// as a power-of-two work-group). On a power-of-two length both are `p`,
/// the same domain as `pow2`; on others (a 1000-wide product, 25,000,000
/// elements) the bands still hold divisors where powers of two do not
/// divide. Powers of two where the length is unknown.
pub(super) fn divisors(lo: i64, hi: i64, len: Option<i64>) -> Vec<i64> {
    let Some(len) = len.filter(|l| *l > 0) else { return pow2(lo, hi, None) };
    let mut out = Vec::new();
    let mut p = 1i64;
    while p <= hi {
        // Below the length: a slot equal to it splits nothing (powers of
        // two keep `pow2`'s domain, which holds the length itself).
        let band: Vec<i64> = (p.max(lo)..(2 * p).min(hi + 1))
            .filter(|v| len % v == 0 && (*v < len || v.count_ones() == 1))
            .collect();
        let most = most_twos(band.iter().copied());
        let fewest = band.iter().copied().max_by_key(|v| (std::cmp::Reverse(v.trailing_zeros()), *v));
        for v in most.into_iter().chain(fewest) {
            if !out.contains(&v) {
                out.push(v);
            }
        }
        p *= 2;
    }
    out.sort_unstable();
    out
}

/// Of `values`, the one with the most factors two (whole warps, vector
/// widths, aligned rows), the largest among those.
pub(super) fn most_twos(values: impl IntoIterator<Item = i64>) -> Option<i64> {
    values.into_iter().max_by_key(|v| (v.trailing_zeros(), *v))
}

/// A slot over `domain` (none when it is empty), its default `default`
/// where the domain holds it, else the domain's middle value.
pub(super) fn slot(name: &str, domain: Vec<i64>, default: i64) -> Option<Slot> {
    let default = if domain.contains(&default) { default } else { *domain.get(domain.len() / 2)? };
    Some(Slot { name: name.to_string(), domain, default })
}

/// `base` followed by the steps of `rel` (a relative position, "" for
/// `base` itself).
pub(super) fn rel_path(base: &Path, rel: &str) -> Path {
    let mut v = base.0.clone();
    v.extend(rel.split('.').filter(|s| !s.is_empty()).map(|s| s.parse::<u16>().unwrap_or(u16::MAX)));
    Path(v)
}

/// Array lengths, outside in, each known where the sizes give it.
pub(super) type Lengths = Vec<Option<i64>>;

/// The lengths of the arrays nested in the type of the expression at `p`
/// of `def` and of its call's last argument (none for other expressions),
/// outside in, each evaluated at `sizes` where it can be: what the macro
/// shapes size their slots' domains by.
pub(super) fn lengths_at(
    base: &Program,
    def: &str,
    p: &Path,
    sizes: &Sizes,
) -> Option<(Lengths, Option<Lengths>)> {
    let d = base.def(def)?;
    let types = crate::passes::typecheck::typecheck_def(base, d).ok()?;
    let e = crate::ir::visit::expr_at(&d.body, p).ok()?;
    let lengths = |e: &crate::ir::Expr| -> Option<Lengths> {
        let t = types.exprs.get(&e.id)?;
        let eval = |n: &ArithExpr| crate::arith::simplify(n).eval_with(&|v| sizes.get(v).copied()).ok();
        Some(t.lengths().iter().map(eval).collect())
    };
    let last = match &e.kind {
        crate::ir::ExprKind::Call(_, args) => args.last().and_then(lengths),
        _ => None,
    };
    Some((lengths(e)?, last))
}

/// The application of rule `name` at `path` (none for an unknown rule).
pub(super) fn rule_step(name: &str, path: Path, args: Vec<(&'static str, Arg)>) -> Option<Step> {
    Some(Step { rule: Some(rewrite::find_rule(name)?), path, args })
}

/// A def of a repository file in the rules' normal form, for the shape
/// modules' unit tests.
#[cfg(test)]
pub(super) fn prepared(path: &str, def: &str) -> Program {
    let file = format!("{}/{path}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&file).unwrap();
    prepared_text(&file, text, def)
}

/// A def of program text (named `name` in messages) in the rules' normal
/// form, for the shape modules' unit tests.
#[cfg(test)]
pub(super) fn prepared_text(name: &str, text: impl Into<String>, def: &str) -> Program {
    let p = crate::parse::parse_program(&crate::ir::SourceFile::new(name, text.into())).unwrap();
    rewrite::prepare(&p, def).unwrap()
}

/// A derivation template: algorithmic steps, then lowering steps.
#[derive(Clone, Debug)]
pub struct Shape {
    pub steps: Vec<Step>,
    pub slots: Vec<Slot>,
    /// How many of `steps` are algorithmic (stage 1).
    pub algorithmic: usize,
}

impl Shape {
    /// The shape of no step: the program as it is.
    pub fn empty() -> Shape {
        Shape { steps: Vec::new(), slots: Vec::new(), algorithmic: 0 }
    }
}

/// A step of a shape that does not replay with the slot values given:
/// the step, as a derivation line, and why.
#[derive(Clone, Debug, thiserror::Error)]
#[error("{step}: {reason}")]
pub struct StepFailed {
    pub step: String,
    pub reason: StepReason,
}

#[derive(Clone, Debug, thiserror::Error)]
pub enum StepReason {
    /// The rule does not apply (a side condition failed).
    #[error(transparent)]
    Rule(#[from] rewrite::RewriteError),
    #[error(transparent)]
    Extract(#[from] rewrite::ExtractError),
}

/// A shape instantiated with slot values.
#[derive(Clone, Debug)]
pub struct Instance {
    pub program: Program,
    pub constraints: Vec<Constraint>,
    /// One line per step, in the format of `rewrite::derivation`.
    pub derivation: Vec<String>,
}

impl Arg {
    /// The parameter's value for these slot values.
    pub fn value(&self, values: &[i64]) -> ArithExpr {
        match self {
            Arg::Fixed(v) => ArithExpr::Cst(*v),
            Arg::Slot(i) => ArithExpr::Cst(values[*i]),
            Arg::LenOver(len, slots) => arith::simplify(&ArithExpr::div(
                len.clone(),
                ArithExpr::Cst(slots.iter().map(|i| values[*i]).product()),
            )),
            Arg::Log2(i) => ArithExpr::Cst(i64::from(values[*i].max(1).ilog2())),
            Arg::Prod(slots) => ArithExpr::Cst(slots.iter().map(|i| values[*i]).product()),
            Arg::SlotPlus(i, c) => ArithExpr::Cst(values[*i] + c),
            Arg::OddPart(i) => ArithExpr::Cst(values[*i] >> values[*i].trailing_zeros().min(62)),
            Arg::TwoExp(i) => ArithExpr::Cst(i64::from(values[*i].trailing_zeros().min(62))),
            Arg::Expr(e) => e.clone(),
        }
    }
}

fn args_of(step: &Step, values: &[i64]) -> Args {
    step.args.iter().map(|(k, a)| (k.to_string(), a.value(values))).collect()
}

fn step_line(step: &Step, args: &Args) -> String {
    let mut s = format!("{} @ {}", step.rule.map_or("extract", |r| r.name), step.path);
    for (k, v) in args {
        // Without spaces: a derivation line is split at whitespace.
        s.push_str(&format!(" {k}={}", v.to_string().replace(' ', "")));
    }
    s
}

impl Shape {
    /// A short name for messages: its distinct algorithmic rules in order
    /// (at most four), or `lowering only`.
    pub fn label(&self) -> String {
        let mut names: Vec<&str> = Vec::new();
        for s in &self.steps[..self.algorithmic.min(self.steps.len())] {
            let n = s.rule.map_or("extract", |r| r.name);
            if !names.contains(&n) {
                names.push(n);
            }
        }
        match names.len() {
            0 => "lowering only".to_string(),
            1..=4 => names.join(", "),
            _ => format!("{}, ...", names[..4].join(", ")),
        }
    }

    pub fn defaults(&self) -> Vec<i64> {
        self.slots.iter().map(|s| s.default).collect()
    }

    /// Replays the steps on `base` (in normal form) with `values` for the
    /// slots; `Err` says which step's side condition failed.
    pub fn instantiate(&self, base: &Program, def: &str, values: &[i64]) -> Result<Instance, StepFailed> {
        let mut prog = base.clone();
        let mut constraints = Vec::new();
        let mut derivation = Vec::new();
        for step in &self.steps {
            let args = args_of(step, values);
            let line = step_line(step, &args);
            let failed = |reason: StepReason| StepFailed { step: line.clone(), reason };
            let Some(rule) = step.rule else {
                prog = rewrite::extract(&prog, def, &step.path).map_err(|e| failed(e.into()))?;
                derivation.push(line);
                continue;
            };
            let a = rewrite::apply(&prog, def, rule, &step.path, &args).map_err(|e| failed(e.into()))?;
            prog = a.program;
            for c in a.constraints {
                if !constraints.contains(&c) {
                    constraints.push(c);
                }
            }
            derivation.push(line);
        }
        Ok(Instance { program: prog, constraints, derivation })
    }
}

/// Limits of the enumeration.
#[derive(Clone, Debug)]
pub struct SpaceLimits {
    /// Algorithmic steps at most.
    pub depth: usize,
    /// Stage-1 programs kept at most.
    pub max_programs: usize,
    /// Lowerings per stage-1 program at most.
    pub max_lowerings: usize,
    /// Whether the reduction macro shapes (`reduction`) are offered: only
    /// with a second stage (`--then`) to add up their partial results.
    pub reductions: bool,
    /// Other sizes every kept candidate's rule constraints must hold at
    /// (`--valid-at`): a committed program runs at every size preset.
    pub valid_at: Vec<Sizes>,
}

impl Default for SpaceLimits {
    fn default() -> Self {
        SpaceLimits { depth: 2, max_programs: 48, max_lowerings: 24, reductions: false, valid_at: Vec::new() }
    }
}

/// The rules stage 1 tries: those that change the algorithm's structure in
/// ways the lowering stage can exploit. Identity rules and their inverses
/// (`map-id`, `join-split-id`, ...) only undo or pad other steps.
const STAGE1_RULES: [&str; 4] = ["split-join", "vectorize", "reorder-stride", "map-fusion"];

/// Candidate values of a size parameter over an array of `len` elements at
/// the requested sizes: powers of two that divide it, from 2 to 4096 and
/// below `len` (so the step changes something).
fn size_domain(len: Option<i64>) -> Vec<i64> {
    let Some(len) = len else { return Vec::new() };
    (1..=12).map(|k| 1i64 << k).filter(|&v| v < len && len % v == 0).collect()
}

const WIDTHS: [i64; 3] = [2, 4, 8];

/// The length of the array a rule's site works on, at `sizes`.
fn site_len(prog: &Program, def: &str, path: &Path, sizes: &Sizes) -> Option<i64> {
    let d = prog.def(def)?;
    let types = crate::passes::typecheck::typecheck_def(prog, d).ok()?;
    let e = visit::expr_at(&d.body, path).ok()?;
    let arr = match &e.kind {
        ExprKind::Call(_, args) => args.last()?,
        ExprKind::Literal(_) | ExprKind::Param(_) => return None,
    };
    match types.exprs.get(&arr.id)? {
        crate::types::Type::Array(_, n) => arith::simplify(n).eval_with(&|v| sizes.get(v).copied()).ok(),
        _ => None,
    }
}

/// The slots a rule takes at a site, with their domains; `None` when some
/// parameter has no admissible value. `other_lens`: the site's length at
/// the `--valid-at` sizes, which every value must divide too (otherwise a
/// shape whose default does not divide them is never measured, and phase 2
/// never looks at its other values).
fn rule_slots(
    rule: &Rule,
    path: &Path,
    len: Option<i64>,
    other_lens: &[Option<i64>],
) -> Option<Vec<(&'static str, Slot)>> {
    let divides_others = |v: &i64| other_lens.iter().all(|l| l.is_none_or(|l| l % v == 0));
    let mut out = Vec::new();
    for p in rule.params {
        let domain: Vec<i64> = match (rule.name, p.name) {
            ("vectorize", "n") => {
                WIDTHS.iter().copied().filter(|w| len.is_some_and(|l| l % w == 0)).collect()
            }
            _ => size_domain(len),
        };
        let domain: Vec<i64> = domain.into_iter().filter(divides_others).collect();
        if domain.is_empty() {
            return None;
        }
        // A middle value: neither the smallest nor the largest extreme.
        let default =
            if rule.name == "vectorize" && domain.contains(&4) { 4 } else { domain[domain.len() / 2] };
        out.push((p.name, Slot { name: format!("{}@{path}:{}", rule.name, p.name), domain, default }));
    }
    Some(out)
}

/// Stage 1: every program reachable in at most `limits.depth` algorithmic
/// steps, breadth first, the original first, duplicates (by structural
/// hash) dropped. Returned as shapes with only algorithmic steps.
pub fn algorithmic_shapes(base: &Program, def: &str, sizes: &Sizes, limits: &SpaceLimits) -> Vec<Shape> {
    let mut seen = HashSet::new();
    let hash = |p: &Program| p.def(def).map(|d| canonical_def(p, d)).unwrap_or_default();
    seen.insert(hash(base));
    let root = Shape::empty();
    let mut out = vec![root.clone()];
    let mut frontier = vec![(root, base.clone())];
    for _ in 0..limits.depth {
        let mut next = Vec::new();
        for (shape, prog) in &frontier {
            let Ok(cands) = rewrite::applicable(prog, def) else { continue };
            for c in cands {
                if !STAGE1_RULES.contains(&c.rule.name) {
                    continue;
                }
                let len = site_len(prog, def, &c.path, sizes);
                let other_lens: Vec<Option<i64>> = limits
                    .valid_at
                    .iter()
                    .map(|v| {
                        let mut at = sizes.clone();
                        at.extend(v.iter().map(|(k, x)| (k.clone(), *x)));
                        site_len(prog, def, &c.path, &at)
                    })
                    .collect();
                let Some(slots) = rule_slots(c.rule, &c.path, len, &other_lens) else { continue };
                let mut s = shape.clone();
                let mut args = Vec::new();
                for (name, slot) in slots {
                    args.push((name, Arg::Slot(s.slots.len())));
                    s.slots.push(slot);
                }
                s.steps.push(Step { rule: Some(c.rule), path: c.path.clone(), args });
                s.algorithmic = s.steps.len();
                let Ok(inst) = s.instantiate(base, def, &s.defaults()) else { continue };
                if !constraints_hold(&inst.constraints, sizes) || !seen.insert(hash(&inst.program)) {
                    continue;
                }
                if out.len() >= limits.max_programs {
                    return out;
                }
                out.push(s.clone());
                next.push((s, inst.program));
            }
        }
        frontier = next;
    }
    out
}

/// Points `fit_defaults` tries at most per shape.
const FIT_TRIES: usize = 160;

/// Whether `values` replays on `base` and its size constraints hold at
/// every size of `at`.
fn point_holds(shape: &Shape, base: &Program, def: &str, values: &[i64], at: &[&Sizes]) -> bool {
    shape
        .instantiate(base, def, values)
        .is_ok_and(|inst| at.iter().all(|s| constraints_hold(&inst.constraints, s)))
}

/// Moves a shape's defaults to the nearest point that replays and whose
/// size constraints hold at every size of `at` (nearest: fewest steps
/// through the slots' domains, at most three, `FIT_TRIES` points at
/// most). The tuner starts from the defaults and does not measure a point
/// whose constraints fail, so a shape whose defaults suit powers of two (a
/// work-group tree of 128 work-items over chunks of 16) would otherwise
/// never be measured at 25,000,000 elements. `false` where none was found
/// (the shape unchanged).
pub fn fit_defaults(shape: &mut Shape, base: &Program, def: &str, at: &[&Sizes]) -> bool {
    let start: Vec<usize> =
        shape.slots.iter().map(|s| s.domain.iter().position(|v| *v == s.default).unwrap_or(0)).collect();
    let mut tries = 0;
    for dist in 0..=3usize {
        for offsets in offsets_at(start.len(), dist) {
            let idx: Option<Vec<usize>> = start
                .iter()
                .zip(&offsets)
                .zip(&shape.slots)
                .map(|((&i, &o), s)| i.checked_add_signed(o).filter(|j| *j < s.domain.len()))
                .collect();
            let Some(idx) = idx else { continue };
            let values: Vec<i64> = idx.iter().zip(&shape.slots).map(|(&j, s)| s.domain[j]).collect();
            if point_holds(shape, base, def, &values, at) {
                for (s, v) in shape.slots.iter_mut().zip(values) {
                    s.default = v;
                }
                return true;
            }
            tries += 1;
            if tries >= FIT_TRIES {
                return false;
            }
        }
    }
    false
}

/// Every vector of `n` offsets whose absolute values sum to `dist`.
fn offsets_at(n: usize, dist: usize) -> Vec<Vec<isize>> {
    if n == 0 {
        return if dist == 0 { vec![Vec::new()] } else { Vec::new() };
    }
    let mut out = Vec::new();
    for d in 0..=dist {
        for rest in offsets_at(n - 1, dist - d) {
            let signs: &[isize] = if d == 0 { &[1] } else { &[1, -1] };
            for sign in signs {
                let mut v = vec![sign * d as isize];
                v.extend(&rest);
                out.push(v);
            }
        }
    }
    out
}

/// Whether every constraint evaluates to 0 at `sizes`.
pub fn constraints_hold(cs: &[Constraint], sizes: &Sizes) -> bool {
    cs.iter().all(|c| c.expr.eval_with(&|v| sizes.get(v).copied()) == Ok(0))
}

/// Whether a function does work a thread must execute (calls a user
/// function, reduces or copies with `id`: the compiler lowers no
/// high-level `map(id)`), as opposed to only rearranging data.
pub(crate) fn does_work(f: &FunDecl) -> bool {
    let mut work = Work(false);
    work.visit_fun(f);
    work.0
}

/// Whether a walk met a user function, a reduction, a `mapVec` or an `id`.
struct Work(bool);

impl Visitor<'_> for Work {
    fn visit_user_fun(&mut self, _u: &UserFunId) {
        self.0 = true;
    }

    fn visit_pattern(&mut self, p: &Pattern, span: Span) {
        match p {
            Pattern::Reduce { .. } | Pattern::PartRed { .. } | Pattern::MapVec { .. } | Pattern::Id => {
                self.0 = true
            }
            Pattern::Map { .. }
            | Pattern::Iterate { .. }
            | Pattern::ToGlobal(_)
            | Pattern::ToLocal(_)
            | Pattern::ToPrivate(_)
            | Pattern::SlideSeq { .. }
            | Pattern::Generate { .. }
            | layout_pattern!() => self.super_pattern(p, span),
        }
    }
}

/// What the lowering stage must decide next.
enum Todo {
    Map {
        path: Path,
        enclosing: Vec<MapKind>,
    },
    Reduce(Path),
    PartRedOne(Path),
    /// Something no lowering rule handles (a `partRed` of more than one result).
    Stuck,
}

/// The kinds of the maps around a position, outermost first. A position
/// whose value a sequential map or reduction consumes (an argument of one)
/// counts as inside a `mapSeq`: a parallel map there would need a global
/// barrier before its consumer, which a kernel does not have.
fn enclosing_maps(above: &[Node<'_>]) -> Vec<MapKind> {
    let seq_pattern = |p: &Pattern| {
        matches!(
            p,
            Pattern::Map { kind: MapKind::Seq | MapKind::SeqUnroll, .. }
                | Pattern::Reduce { kind: ReduceKind::Seq | ReduceKind::SeqUnroll, .. }
        )
    };
    above
        .iter()
        .filter_map(|n| match n {
            Node::Fun(FunDecl { kind: FunKind::Pattern(Pattern::Map { kind, .. }), .. }) => Some(*kind),
            Node::Expr(Expr { kind: ExprKind::Call(f, _), .. }) => match &f.kind {
                FunKind::Pattern(p) if seq_pattern(p) => Some(MapKind::Seq),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

fn next_todo(body: &Expr) -> Option<Todo> {
    for (path, e) in visit::expr_positions(body) {
        let ExprKind::Call(f, _) = &e.kind else { continue };
        let FunKind::Pattern(p) = &f.kind else { continue };
        match p {
            Pattern::Map { kind: MapKind::Map, f } if does_work(f) => {
                let above = visit::node_at(body, &path).map(|(_, a)| a).unwrap_or_default();
                return Some(Todo::Map { path, enclosing: enclosing_maps(&above) });
            }
            Pattern::Reduce { kind: ReduceKind::Reduce, .. } => return Some(Todo::Reduce(path)),
            Pattern::PartRed { m, .. } => {
                return Some(if arith::simplify(m).as_cst() == Some(1) {
                    Todo::PartRedOne(path)
                } else {
                    Todo::Stuck
                })
            }
            _ => {}
        }
    }
    None
}

/// The ways a map nested in `enclosing` (outermost first) may execute; the
/// first is the naive choice. Dimensions: the outermost parallel map takes
/// 0, a nested one 1.
fn map_choices(enclosing: &[MapKind]) -> Vec<(&'static str, Option<i64>)> {
    let seq = enclosing.iter().any(|k| matches!(k, MapKind::Seq | MapKind::SeqUnroll));
    let glb: Vec<u8> =
        enclosing.iter().filter_map(|k| if let MapKind::Glb(d) = k { Some(*d) } else { None }).collect();
    let wrg: Vec<u8> =
        enclosing.iter().filter_map(|k| if let MapKind::Wrg(d) = k { Some(*d) } else { None }).collect();
    let lcl: Vec<u8> =
        enclosing.iter().filter_map(|k| if let MapKind::Lcl(d) = k { Some(*d) } else { None }).collect();
    if seq {
        return vec![("map-seq", None)];
    }
    if !glb.is_empty() {
        let mut v = vec![("map-seq", None)];
        if glb.len() < 2 {
            v.push(("map-glb", Some(glb.len() as i64)));
        }
        return v;
    }
    if !wrg.is_empty() {
        let mut v = Vec::new();
        if let Some(d) = wrg.iter().find(|d| !lcl.contains(d)) {
            v.push(("map-lcl", Some(i64::from(*d))));
        }
        if lcl.is_empty() && wrg.len() < 2 {
            v.push(("map-wrg", Some(wrg.len() as i64)));
        }
        v.push(("map-seq", None));
        return v;
    }
    vec![("map-glb", Some(0)), ("map-wrg", Some(0))]
}

/// Stage 2: the complete lowerings of `alg` (a stage-1 shape), each a
/// shape extended with lowering steps; depth-first, naive choices first,
/// at most `max` of them. A partial lowering that reaches something no rule
/// lowers is dropped (the compiler would refuse it). After the maps and
/// reductions, a variant with `reduceSeq o mapSeq` fused is added.
pub fn lowerings(base: &Program, def: &str, alg: &Shape, max: usize) -> Vec<Shape> {
    let Ok(inst) = alg.instantiate(base, def, &alg.defaults()) else { return Vec::new() };
    let mut out = Vec::new();
    let mut stack = vec![(alg.clone(), inst.program)];
    while let Some((shape, prog)) = stack.pop() {
        if out.len() >= max {
            break;
        }
        let Some(d) = prog.def(def) else { continue };
        let choices: Vec<(&'static str, Path, Option<i64>)> = match next_todo(&d.body) {
            None => {
                let naive = alg.steps.is_empty() && out.is_empty();
                for v in fusion_variants(&prog, def, &shape, naive) {
                    let swapped = ["map-glb", "map-wrg"].iter().filter_map(|r| swapped_dims(&v, r));
                    let swapped: Vec<Shape> =
                        swapped.filter(|s| s.instantiate(base, def, &s.defaults()).is_ok()).collect();
                    out.push(v);
                    out.extend(swapped);
                }
                continue;
            }
            Some(Todo::Stuck) => continue,
            Some(Todo::Reduce(p)) => vec![("reduce-seq", p, None)],
            Some(Todo::PartRedOne(p)) => vec![("partred-reduce", p, None)],
            Some(Todo::Map { path, enclosing }) => {
                map_choices(&enclosing).into_iter().map(|(r, d)| (r, path.clone(), d)).collect()
            }
        };
        // Pushed in reverse so the first choice is explored first.
        for (rule, path, d) in choices.into_iter().rev() {
            let Some(rule) = rewrite::find_rule(rule) else { continue };
            let mut args = Args::new();
            let mut sargs = Vec::new();
            if let Some(d) = d {
                args.insert("d".into(), ArithExpr::Cst(d));
                sargs.push(("d", Arg::Fixed(d)));
            }
            let Ok(a) = rewrite::apply(&prog, def, rule, &path, &args) else { continue };
            let mut s = shape.clone();
            s.steps.push(Step { rule: Some(rule), path, args: sargs });
            stack.push((s, a.program));
        }
    }
    out
}

/// The first `max` lowerings of `def` as written (no algorithmic step),
/// naive first, each instantiated with its default slot values.
pub fn plain_lowerings(base: &Program, def: &str, max: usize) -> Vec<Program> {
    lowerings(base, def, &Shape::empty(), max)
        .into_iter()
        .filter_map(|s| s.instantiate(base, def, &s.defaults()).ok())
        .map(|inst| inst.program)
        .collect()
}

/// The shape with dimensions 0 and 1 of its `rule` steps (`map-glb` or
/// `map-wrg`) exchanged, where it uses both. The lowering gives the
/// outermost parallel map dimension 0; on a GPU the work-items (and
/// work-groups) next to each other in dimension 0 should touch neighbouring
/// elements, which for an array of rows is the inner map's index. Both
/// orders are offered and the search ranks them (`spaces_for`, by
/// coalescing) and measures them.
fn swapped_dims(shape: &Shape, rule: &str) -> Option<Shape> {
    let dim = |s: &Step| match (s.rule, s.args.as_slice()) {
        (Some(r), [("d", Arg::Fixed(d))]) if r.name == rule => Some(*d),
        _ => None,
    };
    let dims: Vec<i64> = shape.steps.iter().filter_map(dim).collect();
    if !(dims.contains(&0) && dims.contains(&1)) {
        return None;
    }
    let mut out = shape.clone();
    for s in &mut out.steps {
        if let Some(d @ (0 | 1)) = dim(s) {
            s.args = vec![("d", Arg::Fixed(1 - d))];
        }
    }
    Some(out)
}

/// The shape with every `reduceSeq o mapSeq` fused (the intermediate
/// array then never exists, so the unfused shape, which writes and reads
/// it back, is never faster and is not measured), or as it is where none
/// fuses. `naive`: the program's first lowering, kept as written too (the
/// naive lowering the search is compared with).
fn fusion_variants(prog: &Program, def: &str, shape: &Shape, naive: bool) -> Vec<Shape> {
    let mut out = vec![shape.clone()];
    let Some(rule) = rewrite::find_rule("reduce-map-fusion") else { return out };
    let mut fused = shape.clone();
    let mut cur = prog.clone();
    for _ in 0..8 {
        let Ok(cands) = rewrite::applicable(&cur, def) else { break };
        let Some(c) = cands.into_iter().find(|c| c.rule.name == rule.name) else { break };
        let Ok(a) = rewrite::apply(&cur, def, rule, &c.path, &Args::new()) else { break };
        fused.steps.push(Step { rule: Some(rule), path: c.path, args: Vec::new() });
        cur = a.program;
    }
    if fused.steps.len() > shape.steps.len() {
        if !naive {
            out.clear();
        }
        out.push(fused);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Divisor domains: powers of two on power-of-two lengths, per band
    /// the divisors with most and fewest factors of two on others.
    #[test]
    fn divisor_domains_follow_the_length() {
        assert_eq!(divisors(16, 256, Some(4096)), pow2(16, 256, Some(4096)));
        assert_eq!(divisors(16, 256, Some(1000)), vec![20, 25, 40, 50, 100, 125, 200, 250]);
        assert_eq!(divisors(16, 256, None), pow2(16, 256, None));
        assert_eq!(divisors(16, 32, Some(7)), Vec::<i64>::new());
        assert_eq!(divisors(4, 32, Some(5)), Vec::<i64>::new());
        assert_eq!(divisors(4, 32, Some(8)), vec![4, 8]);
    }

    /// Offsets by distance: one at 0, 2n at 1, each summing to the distance.
    #[test]
    fn offsets_cover_each_distance() {
        assert_eq!(offsets_at(3, 0), vec![vec![0, 0, 0]]);
        assert_eq!(offsets_at(3, 1).len(), 6);
        assert!(offsets_at(3, 2).iter().all(|o| o.iter().map(|x| x.unsigned_abs()).sum::<usize>() == 2));
        assert_eq!(offsets_at(2, 2).len(), 8);
    }

    /// MD at 12288 atoms, kept runnable at the config's tiny 3008 (64 x 47):
    /// every split of the atoms divides both, so the split shapes are
    /// measured (their default of 128 did not divide 3008, and the search
    /// never reached a split of MD).
    #[test]
    fn split_domains_divide_the_valid_at_sizes_too() {
        let base = prepared("benchmarks/icfp15/md.lift", "md");
        let sizes = Sizes::from([("M".to_string(), 128), ("N".to_string(), 12288)]);
        let splits = |limits: &SpaceLimits| -> Vec<Vec<i64>> {
            algorithmic_shapes(&base, "md", &sizes, limits)
                .iter()
                .flat_map(|s| s.slots.iter().filter(|x| x.name == "split-join@1:n").map(|x| x.domain.clone()))
                .collect()
        };
        let open = splits(&SpaceLimits::default());
        assert!(!open.is_empty() && open.iter().all(|d| d.contains(&128)), "{open:?}");
        let tiny = Sizes::from([("M".to_string(), 128), ("N".to_string(), 3008)]);
        let kept = splits(&SpaceLimits { valid_at: vec![tiny], ..SpaceLimits::default() });
        assert!(!kept.is_empty(), "the split shapes stay");
        for d in &kept {
            assert_eq!(d, &vec![2, 4, 8, 16, 32, 64]);
        }
    }

    /// The derivations of the program's lowerings (at most 24, default
    /// slot values), as text.
    fn lowered(file: &str, def: &str) -> Vec<String> {
        let base = prepared(file, def);
        lowerings(&base, def, &Shape::empty(), 24)
            .iter()
            .map(|s| s.instantiate(&base, def, &s.defaults()).unwrap().derivation.join(" ; "))
            .collect()
    }

    /// A map over rows lowered to `mapGlb` in both maps is offered in both
    /// dimension orders, and each exchanged shape replays.
    #[test]
    fn two_parallel_dimensions_come_in_both_orders() {
        let all = lowered("benchmarks/generality/bias_relu.lift", "bias_relu");
        for pair in [
            ["map-glb @ root d=0 ; map-glb @ 0.0.0 d=1", "map-glb @ root d=1 ; map-glb @ 0.0.0 d=0"],
            ["map-wrg @ root d=0 ; map-wrg @ 0.0.0 d=1", "map-wrg @ root d=1 ; map-wrg @ 0.0.0 d=0"],
        ] {
            for d in pair {
                assert!(all.iter().any(|x| x == d), "{d} missing from {all:#?}");
            }
        }
    }

    /// Where `reduceSeq o mapSeq` fuses, only the naive lowering (the
    /// first) keeps it unfused.
    #[test]
    fn only_the_naive_lowering_stays_unfused() {
        let all = lowered("benchmarks/generality/rowexpsum.lift", "rowexpsum");
        assert!(all.len() > 2, "{all:#?}");
        assert!(!all[0].contains("reduce-map-fusion"), "the naive lowering: {}", all[0]);
        for d in &all[1..] {
            assert!(d.contains("reduce-map-fusion"), "{d}");
        }
    }
}
