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
//!   lives in one thread's private memory.

use crate::ir::{Def, Expr, ExprKind, FunDecl, FunKind, MapKind, Pattern, Span};

/// A program the OpenCL thread hierarchy cannot run as written.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{msg}")]
pub struct WellFormedError {
    pub msg: String,
    pub span: Span,
}

/// Checks `def` against the rules of the module documentation.
pub fn check(def: &Def) -> Result<(), WellFormedError> {
    let mut w = Walker { enclosing: Vec::new(), repeated: 0, top: None, windows: 0 };
    w.expr(&def.body)
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

impl Walker {
    fn fail<T>(&self, span: Span, msg: String) -> Result<T, WellFormedError> {
        Err(WellFormedError { msg, span })
    }

    fn expr(&mut self, e: &Expr) -> Result<(), WellFormedError> {
        match &e.kind {
            ExprKind::Literal(_) | ExprKind::Param(_) => Ok(()),
            ExprKind::Call(f, args) => {
                for a in args {
                    self.expr(a)?;
                }
                self.fun(f)
            }
        }
    }

    fn fun(&mut self, f: &FunDecl) -> Result<(), WellFormedError> {
        match &f.kind {
            FunKind::UserFun(_) => Ok(()),
            FunKind::Lambda(l) => self.expr(&l.body),
            FunKind::Pattern(p) => self.pattern(p, f.span),
        }
    }

    fn pattern(&mut self, p: &Pattern, span: Span) -> Result<(), WellFormedError> {
        match p {
            Pattern::Map { kind, f } if parallel(*kind) => {
                self.map(*kind, span)?;
                self.enclosing.push(*kind);
                let r = self.fun(f);
                self.enclosing.pop();
                r
            }
            Pattern::Reduce { f, .. } | Pattern::PartRed { f, .. } | Pattern::Iterate { f, .. } => {
                let top = self.enclosing.is_empty();
                self.repeated += top as usize;
                let r = self.fun(f);
                self.repeated -= top as usize;
                r
            }
            Pattern::SlideSeq { f, .. } => {
                self.windows += 1;
                let r = self.fun(f);
                self.windows -= 1;
                r
            }
            Pattern::Map { f, .. }
            | Pattern::MapVec { f }
            | Pattern::ToGlobal(f)
            | Pattern::ToLocal(f)
            | Pattern::ToPrivate(f)
            | Pattern::Generate { f, .. } => self.fun(f),
            Pattern::Split(_)
            | Pattern::Join
            | Pattern::Gather(_)
            | Pattern::Scatter(_)
            | Pattern::Transpose
            | Pattern::Zip(_)
            | Pattern::Get(_)
            | Pattern::At(_)
            | Pattern::AsVector(_)
            | Pattern::AsScalar
            | Pattern::Slide { .. }
            | Pattern::Pad { .. }
            | Pattern::PadConst { .. }
            | Pattern::Filter
            | Pattern::Id => Ok(()),
        }
    }

    /// Checks a parallel map of `kind` at `span` against its enclosing maps.
    fn map(&mut self, kind: MapKind, span: Span) -> Result<(), WellFormedError> {
        let me = name(kind);
        if self.windows > 0 {
            return self.fail(
                span,
                format!("{me} inside slideSeqPlus: its window is in one thread's private memory, so its function runs in that thread (use mapSeq)"),
            );
        }
        if let Some(outer) = self.enclosing.iter().find(|k| **k == kind) {
            return self.fail(
                span,
                format!(
                    "{me} inside {}: each dimension of a thread level is used once per nest",
                    name(*outer)
                ),
            );
        }
        let clash = match kind {
            MapKind::Glb(_) => self.enclosing.iter().find(|k| matches!(k, MapKind::Wrg(_) | MapKind::Lcl(_))),
            MapKind::Wrg(_) => self.enclosing.iter().find(|k| matches!(k, MapKind::Glb(_) | MapKind::Lcl(_))),
            MapKind::Lcl(_) => self.enclosing.iter().find(|k| matches!(k, MapKind::Glb(_))),
            MapKind::Map | MapKind::Seq | MapKind::SeqUnroll => None,
        };
        if let Some(outer) = clash {
            let why = match kind {
                MapKind::Lcl(_) => "local threads belong to work-groups (use mapWrg outside)",
                _ => "global threads and work-groups are the outermost level (mapGlb does not mix with mapWrg/mapLcl)",
            };
            return self.fail(span, format!("{me} inside {}: {why}", name(*outer)));
        }
        if let MapKind::Lcl(_) = kind {
            if !self.enclosing.iter().any(|k| matches!(k, MapKind::Wrg(_))) {
                return self
                    .fail(span, format!("{me} outside any mapWrg: local threads belong to work-groups"));
            }
        }
        if !self.enclosing.is_empty() {
            return Ok(());
        }
        // An outermost parallel map.
        if self.repeated > 0 {
            return self.fail(
                span,
                format!("{me} inside a reduction or iterate outside every parallel map: each step would need a barrier across work-groups, which OpenCL lacks (write one def per step)"),
            );
        }
        if let Some((first, _)) = self.top {
            return self.fail(
                span,
                format!("a second outermost parallel map ({me} after {}): OpenCL has no barrier across work-groups, so it could read results not yet written (nest it in the first, or write two defs)", name(first)),
            );
        }
        self.top = Some((kind, span));
        Ok(())
    }
}
