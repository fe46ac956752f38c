//! Well-formedness over the OpenCL thread hierarchy, checked before
//! lowering: the code generator assumes it, and a program that breaks it
//! would compile to a kernel whose threads race or skip elements.
//!
//! Rules, for each parallel map (`mapGlb`, `mapWrg`, `mapLcl`) and the
//! parallel maps enclosing it:
//!
//! * `mapGlb(d)` is not inside a `mapWrg` or `mapLcl`, nor inside another
//!   `mapGlb(d)` (one dimension of global threads is used once per nest);
//! * `mapWrg(d)` is not inside a `mapGlb` or `mapLcl`, nor inside another
//!   `mapWrg(d)`;
//! * `mapLcl(d)` is inside a `mapWrg`, not inside a `mapGlb`, nor inside
//!   another `mapLcl(d)`;
//! * outside every parallel map, a kernel has one nest of `mapGlb` or of
//!   `mapWrg`, never both kinds, never two nests one after the other, and
//!   never a nest that a `reduce` or `iterate` repeats: OpenCL has no
//!   barrier across work-groups, so a second nest would read what other
//!   work-groups of the first may not have written yet;
//! * no parallel map is inside the function of a `slideSeqPlus`: its window
//!   lives in one thread's private memory;
//! * a `mapWrg`/`mapGlb` nested in another's function is that function's
//!   result, not read again inside it (`read_again`).

use crate::ir::{layout_pattern, Def, MapKind, Pattern, Span, Visitor};

/// A program the OpenCL thread hierarchy cannot run as written: the rule
/// it breaks and where.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{rule}")]
pub struct WellFormedError {
    pub rule: BrokenRule,
    pub span: Span,
}

/// The rule of the module documentation a parallel map (`map`) breaks,
/// with the map it meets (`outer`, `first`).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum BrokenRule {
    #[error("{} inside slideSeqPlus: its window is in one thread's private memory, so its function runs in that thread (use mapSeq)", name(*map))]
    InWindow { map: MapKind },
    #[error("{} inside {}: each dimension of a thread level is used once per nest", name(*map), name(*outer))]
    DimensionReused { map: MapKind, outer: MapKind },
    #[error("{} inside {}: local threads belong to work-groups (use mapWrg outside)", name(*map), name(*outer))]
    LocalInGlobal { map: MapKind, outer: MapKind },
    #[error("{} inside {}: global threads and work-groups are the outermost level (mapGlb does not mix with mapWrg/mapLcl)", name(*map), name(*outer))]
    LevelsMixed { map: MapKind, outer: MapKind },
    #[error("{} outside any mapWrg: local threads belong to work-groups", name(*map))]
    LocalOutsideWrg { map: MapKind },
    #[error("{} inside a reduction or iterate outside every parallel map: each step would need a barrier across work-groups, which OpenCL lacks (write one def per step)", name(*map))]
    Repeated { map: MapKind },
    #[error("a second outermost parallel map ({} after {}): OpenCL has no barrier across work-groups, so it could read results not yet written (nest it in the first, or write two defs)", name(*map), name(*first))]
    SecondNest { map: MapKind, first: MapKind },
    #[error("{} inside {} is read again there: each work-group computes only its share and no barrier joins work-groups (let it be the function's result, or use mapLcl/mapSeq)", name(*map), name(*outer))]
    ReadAgain { map: MapKind, outer: MapKind },
}

/// Checks `def` against the rules of the module documentation.
pub fn check(def: &Def) -> Result<(), WellFormedError> {
    let mut w = Walker { enclosing: Vec::new(), repeated: 0, top: None, windows: 0, error: None };
    w.visit_expr(&def.body);
    w.error.map_or(Ok(()), Err)
}

struct Walker {
    /// Parallel maps around the current point, outermost first.
    enclosing: Vec<MapKind>,
    /// How many `reduce`/`iterate` functions outside every parallel map
    /// enclose the current point.
    repeated: usize,
    /// The first outermost parallel map: its kind and position.
    top: Option<(MapKind, Span)>,
    /// How many `slideSeqPlus` functions enclose the current point.
    windows: usize,
    /// The first rule broken, in the visitor's order; the walk below it
    /// is skipped.
    error: Option<WellFormedError>,
}

fn name(k: MapKind) -> String {
    match k {
        MapKind::Glb(d) => format!("mapGlb({d})"),
        MapKind::Wrg(d) => format!("mapWrg({d})"),
        MapKind::Lcl(d) => format!("mapLcl({d})"),
        MapKind::Map => "map".into(),
        MapKind::Seq => "mapSeq".into(),
        MapKind::SeqUnroll => "mapSeqUnroll".into(),
    }
}

fn parallel(k: MapKind) -> bool {
    matches!(k, MapKind::Glb(_) | MapKind::Wrg(_) | MapKind::Lcl(_))
}

impl<'ir> Visitor<'ir> for Walker {
    fn visit_pattern(&mut self, p: &'ir Pattern, span: Span) {
        if self.error.is_some() {
            return;
        }
        match p {
            Pattern::Map { kind, f } if parallel(*kind) => {
                if let Err(e) = self.map(*kind, span) {
                    self.error = Some(e);
                    return;
                }
                // A grid map's function: the grid maps nested in it are
                // its result, not read again (`read_again`).
                if let (MapKind::Wrg(_) | MapKind::Glb(_), crate::ir::FunKind::Lambda(l)) = (kind, &f.kind) {
                    if let Err(e) = super::read_again::check_function(*kind, &l.body) {
                        self.error = Some(e);
                        return;
                    }
                }
                self.enclosing.push(*kind);
                self.super_pattern(p, span);
                self.enclosing.pop();
            }
            Pattern::Reduce { .. } | Pattern::PartRed { .. } | Pattern::Iterate { .. } => {
                let top = self.enclosing.is_empty();
                self.repeated += top as usize;
                self.super_pattern(p, span);
                self.repeated -= top as usize;
            }
            Pattern::SlideSeq { .. } => {
                self.windows += 1;
                self.super_pattern(p, span);
                self.windows -= 1;
            }
            Pattern::Map { .. }
            | Pattern::MapVec { .. }
            | Pattern::ToGlobal(_)
            | Pattern::ToLocal(_)
            | Pattern::ToPrivate(_)
            | Pattern::Generate { .. }
            | layout_pattern!()
            | Pattern::Id => self.super_pattern(p, span),
        }
    }
}

impl Walker {
    /// Checks a parallel map of `kind` at `span` against its enclosing maps.
    fn map(&mut self, kind: MapKind, span: Span) -> Result<(), WellFormedError> {
        let fail = |rule| Err(WellFormedError { rule, span });
        let map = kind;
        if self.windows > 0 {
            return fail(BrokenRule::InWindow { map });
        }
        if let Some(&outer) = self.enclosing.iter().find(|k| **k == kind) {
            return fail(BrokenRule::DimensionReused { map, outer });
        }
        let clash = match kind {
            MapKind::Glb(_) => self.enclosing.iter().find(|k| matches!(k, MapKind::Wrg(_) | MapKind::Lcl(_))),
            MapKind::Wrg(_) => self.enclosing.iter().find(|k| matches!(k, MapKind::Glb(_) | MapKind::Lcl(_))),
            MapKind::Lcl(_) => self.enclosing.iter().find(|k| matches!(k, MapKind::Glb(_))),
            MapKind::Map | MapKind::Seq | MapKind::SeqUnroll => None,
        };
        if let Some(&outer) = clash {
            return match kind {
                MapKind::Lcl(_) => fail(BrokenRule::LocalInGlobal { map, outer }),
                _ => fail(BrokenRule::LevelsMixed { map, outer }),
            };
        }
        if let MapKind::Lcl(_) = kind {
            if !self.enclosing.iter().any(|k| matches!(k, MapKind::Wrg(_))) {
                return fail(BrokenRule::LocalOutsideWrg { map });
            }
        }
        if !self.enclosing.is_empty() {
            return Ok(());
        }
        // An outermost parallel map.
        if self.repeated > 0 {
            return fail(BrokenRule::Repeated { map });
        }
        if let Some((first, _)) = self.top {
            return fail(BrokenRule::SecondNest { map, first });
        }
        self.top = Some((kind, span));
        Ok(())
    }
}
