//! Strategies: how rules are applied, as plain values (ELEVATE's idea,
//! Hagedorn et al., ICFP 2020, for RISE, Lift's successor).
//!
//! A shape of the search is a derivation template (`space::Shape`): rule
//! steps at positions, with slots for their numeric parameters. A
//! strategy says how to find those steps on a program rather than where
//! they are: "apply `slide-transpose` at the first position it matches,
//! then `map-interchange` at the root, then ...". Running it on a program
//! records the steps it took into a shape, which the tuner instantiates
//! like any other (`Shape::instantiate`), so a shape built by a strategy
//! replays with `lift rewrite --apply` as every shape does.
//!
//! Strategies are data, matched exhaustively: `Apply` (a rule at a site),
//! `Seq`, `Try`, `Either` (every alternative of each), `Choice` (the first
//! that applies) and `Repeat`. A site
//! is found on the program as it stands after the steps before it
//! (`Site`): the root, the first or every position where the rule
//! matches, the first under a number of working maps, the first working
//! map or reduction, the position of the step before, moves down from the
//! focus, the call the focus is an argument of, or the innermost map whose
//! function holds it. `Site::Each`
//! makes a strategy give one alternative per matching position: a rule
//! sequence found wherever the structure matches, not at a position
//! written into the shape.
//!
//! Why strategies and not equality saturation (the `egg` crate): the
//! search's unit is a replayable derivation whose rules take numeric
//! parameters with side conditions and leave size constraints
//! (`rewrite::Applied`), and it ranks candidates by measuring them, not by
//! a static cost an e-graph extraction needs; an e-graph would hold every
//! parameter value as another e-node and lose the derivation the search
//! writes (`best.derivation`). Strategies keep both. See
//! docs/EXPLORE.md, "Strategies".

use super::reduction::is_reduce;
use super::space::{Arg, Shape, Slot, Step};
use crate::ir::visit::{self, Node, Path};
use crate::ir::{ExprKind, FunKind, MapKind, Pattern, Program};
use crate::rewrite::{self, Args};

/// Alternatives a strategy gives at most (`Site::Each` under `Either`
/// can multiply them).
pub const MOST: usize = 64;

/// Where an `Apply` step applies, found on the program as it stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Site {
    /// The def's body.
    Root,
    /// The first position (outermost first) where the rule matches.
    First,
    /// Every position where the rule matches: one alternative each.
    Each,
    /// The first position where the rule matches under exactly this many
    /// high-level maps that do work.
    UnderMaps(usize),
    /// The first high-level map that does work (pre-order).
    NextMap,
    /// The first high-level reduction (pre-order).
    NextReduce,
    /// The position of the step before (the same node, rewritten).
    Previous,
    /// The position a `Within` focuses on.
    Focus,
    /// The argument of the first high-level map that does work (what it
    /// maps over: a tile to copy before the map reads it).
    NextMapArg,
    /// The first high-level map that does work strictly inside the focus.
    InnerMap,
    /// A move down from the focus by child indices (ELEVATE's traversals
    /// `function`, `argument` and `body` composed: `2` is a call's second
    /// argument): a step placed relative to a node found by structure.
    Below(Vec<u16>),
    /// The call the focus is an argument of (ELEVATE's traversals go
    /// down only; a step on a reduction's consumer, found from the
    /// reduction, needs one move up).
    Parent,
    /// The innermost map call, of any kind, whose function holds the
    /// focus (the map over the rows a reduction is in; from that map, the
    /// map over a batch around it).
    Enclosing,
}

/// How to apply rules (module documentation).
#[derive(Clone, Debug)]
pub enum Strategy {
    /// `rule` at `site`, its parameters from the shape's slots.
    Apply { rule: &'static str, site: Site, args: Vec<(&'static str, Arg)> },
    /// Each in turn on every alternative of the one before; fails where
    /// one fails.
    Seq(Vec<Strategy>),
    /// The strategy's alternatives, or the program unchanged where it
    /// fails.
    Try(Box<Strategy>),
    /// The alternatives of every strategy that applies, in order.
    Either(Vec<Strategy>),
    /// The alternatives of the first strategy that applies (ELEVATE's
    /// left choice, `<+`): the later ones are not run.
    Choice(Vec<Strategy>),
    /// The strategy again while it applies, at most this many times (each
    /// alternative followed until it stops).
    Repeat(Box<Strategy>, usize),
    /// `then` focused on each position `site` gives (where `rule`
    /// matches, for the sites that ask): its sites are looked up inside
    /// that subtree only (`Site::Focus` is the position itself), and the
    /// focus before is restored after it.
    Within { site: Site, rule: &'static str, then: Box<Strategy> },
    /// The expression at `site` becomes the def's body (the kernel leaves
    /// it; a second stage does the rest, as `rewrite::extract`); the focus
    /// is then the new root, also after an enclosing `Within`.
    Extract(Site),
}

/// A strategy's state: the program so far, the shape that records its
/// steps (and holds the slots their arguments read), the position of
/// the last step, and the subtree sites are looked up in.
#[derive(Clone, Debug)]
pub struct Trace {
    pub prog: Program,
    pub shape: Shape,
    pub last: Option<Path>,
    pub focus: Path,
}

impl Trace {
    /// The start: `prog` with no step taken, `shape`'s slots available,
    /// the whole def in focus.
    pub fn new(prog: Program, shape: Shape) -> Trace {
        Trace { prog, shape, last: None, focus: Path::root() }
    }
}

/// `rule` at `site` with no parameters.
pub fn apply(rule: &'static str, site: Site) -> Strategy {
    Strategy::Apply { rule, site, args: Vec::new() }
}

/// `rule` at `site` with `args`.
pub fn apply_with(rule: &'static str, site: Site, args: Vec<(&'static str, Arg)>) -> Strategy {
    Strategy::Apply { rule, site, args }
}

impl Strategy {
    /// Every alternative of applying the strategy to `t` (at most `MOST`);
    /// empty where it fails.
    pub fn run(&self, def: &str, t: Trace) -> Vec<Trace> {
        match self {
            Strategy::Apply { rule, site, args } => apply_at(def, t, rule, site, args),
            Strategy::Seq(parts) => {
                let mut now = vec![t];
                for p in parts {
                    now = now.into_iter().flat_map(|t| p.run(def, t)).take(MOST).collect();
                    if now.is_empty() {
                        break;
                    }
                }
                now
            }
            Strategy::Try(s) => {
                let out = s.run(def, t.clone());
                if out.is_empty() {
                    vec![t]
                } else {
                    out
                }
            }
            Strategy::Either(ss) => ss.iter().flat_map(|s| s.run(def, t.clone())).take(MOST).collect(),
            Strategy::Choice(ss) => {
                ss.iter().map(|s| s.run(def, t.clone())).find(|o| !o.is_empty()).unwrap_or_default()
            }
            Strategy::Within { site, rule, then } => {
                let outer = t.focus.clone();
                let before = t.shape.steps.len();
                let mut out = Vec::new();
                for at in sites(def, &t, rule, site) {
                    let inner = Trace { focus: at, ..t.clone() };
                    out.extend(then.run(def, inner).into_iter().map(|x| {
                        // After an extract the outer focus is gone: the
                        // new root stays in focus.
                        let extracted = x.shape.steps[before..].iter().any(|s| s.rule.is_none());
                        let focus = if extracted { Path::root() } else { outer.clone() };
                        Trace { focus, ..x }
                    }));
                    if out.len() >= MOST {
                        break;
                    }
                }
                out.truncate(MOST);
                out
            }
            Strategy::Extract(site) => sites(def, &t, "", site)
                .into_iter()
                .filter_map(|path| {
                    let prog = rewrite::extract(&t.prog, def, &path).ok()?;
                    let mut shape = t.shape.clone();
                    shape.steps.push(Step { rule: None, path, args: Vec::new() });
                    Some(Trace { prog, shape, last: Some(Path::root()), focus: Path::root() })
                })
                .collect(),
            Strategy::Repeat(s, n) => {
                let mut done = Vec::new();
                let mut now = vec![(t, 0)];
                while let Some((t, k)) = now.pop() {
                    let next = if k < *n { s.run(def, t.clone()) } else { Vec::new() };
                    if next.is_empty() {
                        done.push(t);
                    } else {
                        // In order: the first alternative is followed first.
                        now.extend(next.into_iter().rev().map(|x| (x, k + 1)));
                    }
                    if done.len() >= MOST {
                        break;
                    }
                }
                done
            }
        }
    }

    /// The first alternative, if any.
    pub fn first(&self, def: &str, t: Trace) -> Option<Trace> {
        self.run(def, t).into_iter().next()
    }
}

/// The positions where `site` puts a step of `rule`, in order (`rule`
/// only matters to the sites that ask where it matches).
pub fn sites(def: &str, t: &Trace, rule: &str, site: &Site) -> Vec<Path> {
    let inside = |p: &Path| t.focus.is_prefix_of(p);
    let matching = || -> Vec<Path> {
        rewrite::applicable(&t.prog, def)
            .map(|cs| {
                cs.into_iter().filter(|c| c.rule.name == rule && inside(&c.path)).map(|c| c.path).collect()
            })
            .unwrap_or_default()
    };
    let next = |pred: fn(&crate::ir::Expr) -> bool| first_in(&t.prog, def, &t.focus, |_, e| pred(e));
    match site {
        Site::Root => vec![Path::root()],
        Site::First => matching().into_iter().take(1).collect(),
        Site::Each => matching(),
        Site::UnderMaps(n) => {
            matching().into_iter().filter(|p| maps_above(&t.prog, def, p) == Some(*n)).take(1).collect()
        }
        Site::NextMap => next(is_working_map).into_iter().collect(),
        Site::NextReduce => next(is_reduce).into_iter().collect(),
        Site::Previous => t.last.iter().cloned().collect(),
        Site::Focus => vec![t.focus.clone()],
        // A map call's argument is its second child (the first is the map).
        Site::NextMapArg => next(is_working_map).map(|p| p.child(1)).into_iter().collect(),
        Site::InnerMap => {
            first_in(&t.prog, def, &t.focus, |p, e| *p != t.focus && is_working_map(e)).into_iter().collect()
        }
        Site::Below(moves) => vec![Path(t.focus.0.iter().chain(moves).copied().collect())],
        Site::Parent => parent_call(&t.prog, def, &t.focus).into_iter().collect(),
        Site::Enclosing => enclosing_map(&t.prog, def, &t.focus).into_iter().collect(),
    }
}

/// The call `p` is an argument of (a call's arguments are its children
/// from 1; child 0 is its function).
fn parent_call(prog: &Program, def: &str, p: &Path) -> Option<Path> {
    let (&last, up) = p.0.split_last()?;
    let up = Path(up.to_vec());
    let e = visit::expr_at(&prog.def(def)?.body, &up).ok()?;
    (last >= 1 && matches!(e.kind, ExprKind::Call(..))).then_some(up)
}

/// The innermost call of a map pattern (any kind) whose function, its
/// child 0, holds `p`.
fn enclosing_map(prog: &Program, def: &str, p: &Path) -> Option<Path> {
    let body = &prog.def(def)?.body;
    (0..p.0.len()).rev().filter(|&k| p.0[k] == 0).map(|k| Path(p.0[..k].to_vec())).find(|up| {
        visit::expr_at(body, up).is_ok_and(|e| {
            matches!(&e.kind, ExprKind::Call(f, _) if matches!(f.kind, FunKind::Pattern(Pattern::Map { .. })))
        })
    })
}

/// The shape `strategy` records on `base` with `slots`, all its steps
/// algorithmic (none where it does not apply at the slots' defaults).
pub fn shape_of(base: &Program, def: &str, strategy: &Strategy, slots: &[Slot]) -> Option<Shape> {
    let start = Shape { steps: Vec::new(), slots: slots.to_vec(), algorithmic: 0 };
    let mut shape = strategy.first(def, Trace::new(base.clone(), start))?.shape;
    shape.algorithmic = shape.steps.len();
    Some(shape)
}

/// `steps` (paths relative to the focus) as a strategy: each a
/// `Site::Below` move from the focus, an extract step (no rule) as
/// `Strategy::Extract`. What a macro shape's fixed recipe becomes once its
/// anchor is found by a site.
pub fn relative(steps: &[Step]) -> Strategy {
    Strategy::Seq(
        steps
            .iter()
            .map(|s| {
                let site = Site::Below(s.path.0.clone());
                match s.rule {
                    Some(r) => apply_with(r.name, site, s.args.clone()),
                    None => Strategy::Extract(site),
                }
            })
            .collect(),
    )
}

/// The alternatives of one rule application.
fn apply_at(def: &str, t: Trace, rule: &str, site: &Site, args: &[(&'static str, Arg)]) -> Vec<Trace> {
    let Some(r) = rewrite::find_rule(rule) else { return Vec::new() };
    let defaults = t.shape.defaults();
    let a: Args = args.iter().map(|(k, v)| (k.to_string(), v.value(&defaults))).collect();
    let mut out = Vec::new();
    for path in sites(def, &t, rule, site) {
        let Ok(applied) = rewrite::apply(&t.prog, def, r, &path, &a) else { continue };
        let mut shape = t.shape.clone();
        shape.steps.push(Step { rule: Some(r), path: path.clone(), args: args.to_vec() });
        out.push(Trace { prog: applied.program, shape, last: Some(path), focus: t.focus.clone() });
    }
    out
}

/// Whether `e` applies a high-level map that does work.
pub fn is_working_map(e: &crate::ir::Expr) -> bool {
    matches!(&e.kind, ExprKind::Call(f, _)
        if matches!(&f.kind, FunKind::Pattern(Pattern::Map { kind: MapKind::Map, f }) if super::space::does_work(f)))
}

/// The first high-level map that does work (pre-order), if any.
pub fn next_map(prog: &Program, def: &str) -> Option<Path> {
    first_in(prog, def, &Path::root(), |_, e| is_working_map(e))
}

/// The first high-level reduction (pre-order), if any.
pub fn next_reduce(prog: &Program, def: &str) -> Option<Path> {
    first_in(prog, def, &Path::root(), |_, e| is_reduce(e))
}

/// The first position (pre-order) inside `within` of the def's body whose
/// expression `pred` holds for.
fn first_in(
    prog: &Program,
    def: &str,
    within: &Path,
    pred: impl Fn(&Path, &crate::ir::Expr) -> bool,
) -> Option<Path> {
    let d = prog.def(def)?;
    visit::expr_positions(&d.body)
        .into_iter()
        .find_map(|(p, e)| (within.is_prefix_of(&p) && pred(&p, e)).then_some(p))
}

/// How many high-level maps that do work hold the node at `path`
/// (strictly above it); `None` when the path is not in the def.
pub fn maps_above(prog: &Program, def: &str, path: &Path) -> Option<usize> {
    let d = prog.def(def)?;
    let (_, above) = visit::node_at(&d.body, path).ok()?;
    Some(above.iter().filter(|n| matches!(n, Node::Expr(e) if is_working_map(e))).count())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn start(src: &str, def: &str) -> Trace {
        let p = crate::parse::parse_program(&crate::ir::SourceFile::new("t.lift", src.to_string())).unwrap();
        let prog = rewrite::prepare(&p, def).unwrap();
        Trace::new(prog, Shape::empty())
    }

    const TWO_MAPS: &str = "userfun f(x: float): float { return x + 1.0f; }\n\
                            def g(a: [[float]N]M) = map(map(f)) $ a\n";

    fn lines(t: &Trace) -> Vec<String> {
        t.shape
            .steps
            .iter()
            .map(|s| format!("{} @ {}", s.rule.map_or("extract", |r| r.name), s.path))
            .collect()
    }

    #[test]
    fn each_site_is_an_alternative_and_first_is_the_outermost() {
        let t = start(TWO_MAPS, "g");
        let d0 = || vec![("d", Arg::Fixed(0))];
        let each = apply_with("map-glb", Site::Each, d0()).run("g", t.clone());
        let first = apply_with("map-glb", Site::First, d0()).run("g", t.clone());
        assert!(each.len() >= 2, "{:?}", each.iter().map(lines).collect::<Vec<_>>());
        assert_eq!(first.len(), 1);
        assert_eq!(lines(&first[0]), lines(&each[0]));
        assert_eq!(lines(&first[0]), ["map-glb @ root"]);
        assert_eq!(lines(&each[1]), ["map-glb @ 0.0.0"]);
        // A rule whose parameter is missing applies nowhere.
        assert!(apply("map-glb", Site::First).run("g", t.clone()).is_empty());
        // Where the rule matches nowhere the strategy fails.
        assert!(apply("reduce-seq", Site::First).run("g", t).is_empty());
    }

    #[test]
    fn seq_fails_as_a_whole_and_try_keeps_the_program() {
        let t = start(TWO_MAPS, "g");
        let failing = Strategy::Seq(vec![apply("map-glb", Site::Root), apply("reduce-seq", Site::First)]);
        assert!(failing.run("g", t.clone()).is_empty());
        let kept = Strategy::Try(Box::new(failing)).run("g", t.clone());
        assert_eq!(kept.len(), 1);
        assert!(kept[0].shape.steps.is_empty());
        assert_eq!(crate::parse::print_program(&kept[0].prog), crate::parse::print_program(&t.prog));
    }

    #[test]
    fn repeat_lowers_every_working_map_and_previous_is_the_same_node() {
        let t = start(TWO_MAPS, "g");
        let seq = Strategy::Seq(vec![
            apply("map-seq", Site::NextMap),
            Strategy::Try(Box::new(apply("map-seq-unroll", Site::Previous))),
        ]);
        let out = Strategy::Repeat(Box::new(seq), 8).run("g", t);
        assert_eq!(out.len(), 1);
        assert_eq!(lines(&out[0]), ["map-seq @ root", "map-seq @ 0.0.0"]);
        assert!(next_map(&out[0].prog, "g").is_none());
    }

    #[test]
    fn within_looks_inside_its_focus_only() {
        let t = start(TWO_MAPS, "g");
        // Focused on the inner map's argument, no map is found...
        let inner = apply("map-seq", Site::NextMap);
        let arg = Strategy::Within { site: Site::NextMapArg, rule: "", then: Box::new(inner.clone()) };
        assert!(arg.run("g", t.clone()).is_empty());
        // ... focused on each position where `map-seq` matches, the map
        // there: one alternative per map.
        let each = Strategy::Within { site: Site::Each, rule: "map-seq", then: Box::new(inner) };
        let found = each.run("g", t.clone());
        assert_eq!(found.iter().map(lines).collect::<Vec<_>>(), [["map-seq @ root"], ["map-seq @ 0.0.0"]]);
        // The focus is the outer one again afterwards.
        let then = Strategy::Seq(vec![apply("map-seq", Site::Focus), apply("map-seq", Site::NextMap)]);
        let out = Strategy::Within { site: Site::Root, rule: "", then: Box::new(then) }.run("g", t);
        assert_eq!(out.iter().map(lines).collect::<Vec<_>>(), [["map-seq @ root", "map-seq @ 0.0.0"]]);
        assert_eq!(out[0].focus, Path::root());
    }

    #[test]
    fn choice_runs_the_first_strategy_that_applies() {
        let t = start(TWO_MAPS, "g");
        let d0 = || vec![("d", Arg::Fixed(0))];
        let glb = apply_with("map-glb", Site::Root, d0());
        let wrg = apply_with("map-wrg", Site::Root, d0());
        let never = apply("reduce-seq", Site::First);
        // The first applies: the second is not run.
        let out = Strategy::Choice(vec![glb.clone(), wrg.clone()]).run("g", t.clone());
        assert_eq!(out.iter().map(lines).collect::<Vec<_>>(), [["map-glb @ root"]]);
        // The first fails: the second's alternatives.
        let out = Strategy::Choice(vec![never.clone(), wrg]).run("g", t.clone());
        assert_eq!(out.iter().map(lines).collect::<Vec<_>>(), [["map-wrg @ root"]]);
        assert!(Strategy::Choice(vec![never]).run("g", t).is_empty());
    }

    #[test]
    fn either_gives_the_alternatives_of_each_and_args_read_the_slots() {
        let mut t = start(TWO_MAPS, "g");
        t.shape.slots.push(Slot { name: "d".into(), domain: vec![0, 1], default: 1 });
        let s = Strategy::Either(vec![
            apply_with("map-glb", Site::Root, vec![("d", Arg::Slot(0))]),
            apply_with("map-wrg", Site::Root, vec![("d", Arg::Fixed(0))]),
        ]);
        let out = s.run("g", t);
        assert_eq!(out.iter().map(lines).collect::<Vec<_>>(), [["map-glb @ root"], ["map-wrg @ root"]]);
        // The step keeps its slot: instantiating with d = 0 replays.
        let base = start(TWO_MAPS, "g").prog;
        assert!(out[0].shape.instantiate(&base, "g", &[0]).is_ok());
        assert_eq!(maps_above(&out[0].prog, "g", &Path::root()), Some(0));
    }

    #[test]
    fn below_moves_from_the_focus_and_extract_makes_the_new_root_the_focus() {
        let src = "userfun add(x: float, y: float): float { return x + y; }\n\
                   userfun h(x: float): float { return x * 2.0f; }\n\
                   def s(x: [float]N) = map(h) o reduce(add, 0.0f) $ x\n";
        let t = start(src, "s");
        let then = Strategy::Seq(vec![
            apply_with("reduce-partred", Site::Below(vec![]), vec![("m", Arg::Fixed(4))]),
            Strategy::Extract(Site::Below(vec![2])),
        ]);
        let out = Strategy::Within { site: Site::NextReduce, rule: "", then: Box::new(then) }.run("s", t);
        assert_eq!(out.iter().map(lines).collect::<Vec<_>>(), [["reduce-partred @ 1", "extract @ 1.2"]]);
        // The partial results are the body now, and in focus (the
        // reduction's position is gone).
        assert_eq!(out[0].focus, Path::root());
        let body = &out[0].prog.def("s").unwrap().body;
        assert!(matches!(&body.kind, ExprKind::Call(f, _)
            if matches!(f.kind, FunKind::Pattern(Pattern::PartRed { .. }))));
    }

    #[test]
    fn parent_and_enclosing_move_up_from_a_reduction() {
        let src = "userfun add(x: float, y: float): float { return x + y; }\n\
                   userfun h(x: float): float { return x * 2.0f; }\n\
                   def s(a: [[[float]N]M]B) = map(\\m -> map(\\r -> map(h) o reduce(add, 0.0f) $ r) $ m) $ a\n";
        let t = start(src, "s");
        let r = next_reduce(&t.prog, "s").unwrap();
        let at = |site: Site| sites("s", &Trace { focus: r.clone(), ..t.clone() }, "", &site);
        // The post-map takes the reduction as its argument.
        let post = at(Site::Parent);
        assert_eq!(post, [Path(r.0[..r.0.len() - 1].to_vec())]);
        // Around it, the rows map; around that, the batch's map (the
        // root): lowering the first leaves the second the enclosing one
        // of the rows map, not of the reduction.
        let rows = at(Site::Enclosing);
        assert_eq!(rows.len(), 1);
        assert!(rows[0] != Path::root() && rows[0].is_prefix_of(&r), "{rows:?}");
        let wrg = |d: i64| apply_with("map-wrg", Site::Focus, vec![("d", Arg::Fixed(d))]);
        let around =
            |then: Strategy| Strategy::Within { site: Site::Enclosing, rule: "", then: Box::new(then) };
        let both = around(Strategy::Seq(vec![wrg(0), around(wrg(1))]));
        let out =
            Strategy::Within { site: Site::NextReduce, rule: "", then: Box::new(both) }.run("s", t.clone());
        assert_eq!(
            out.iter().map(lines).collect::<Vec<_>>(),
            [[format!("map-wrg @ {}", rows[0]), "map-wrg @ root".to_string()]]
        );
        // A def's root has no parent, and nothing encloses it.
        assert!(sites("s", &t, "", &Site::Parent).is_empty());
        assert!(sites("s", &t, "", &Site::Enclosing).is_empty());
    }
}
