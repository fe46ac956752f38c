//! The IR visitor and its mutable twin, generated from one definition (as
//! rustc's `make_mir_visitor!` generates `Visitor` and `MutVisitor`).
//!
//! Each node kind has a `visit_*` method, which a pass overrides for the
//! nodes it cares about, and a `super_*` method, which visits the node's
//! children by calling their `visit_*` methods. The default `visit_*` calls
//! `super_*`; an override calls `super_*` itself where the walk should go
//! on below the node (before, after or between its own work).
//!
//! Order, the same in both traits: a call's arguments, in order, then its
//! function (the order values flow in); a lambda's parameters, then its
//! body; a pattern's nested function, if it takes one. The traversal
//! cannot stop early: a checking pass keeps its first error and ignores the
//! rest.

use super::{
    Def, Expr, ExprKind, FunDecl, FunKind, Lambda, Literal, Param, ParamId, Pattern, Span, UserFunId,
};

macro_rules! make_ir_visitor {
    ($(#[$attr:meta])* $visitor:ident, $nested:path, $($mutability:ident)?) => {
        $(#[$attr])*
        pub trait $visitor<'ir> {
            fn visit_def(&mut self, d: &'ir $($mutability)? Def) {
                self.super_def(d)
            }
            fn visit_expr(&mut self, e: &'ir $($mutability)? Expr) {
                self.super_expr(e)
            }
            fn visit_fun(&mut self, f: &'ir $($mutability)? FunDecl) {
                self.super_fun(f)
            }
            fn visit_lambda(&mut self, l: &'ir $($mutability)? Lambda) {
                self.super_lambda(l)
            }
            /// `span`: the declaration's, where the pattern is written.
            fn visit_pattern(&mut self, p: &'ir $($mutability)? Pattern, span: Span) {
                self.super_pattern(p, span)
            }
            /// A parameter where it is bound (a `def`'s or a lambda's).
            fn visit_param(&mut self, _p: &'ir $($mutability)? Param) {}
            /// A parameter where it is read.
            fn visit_param_use(&mut self, _p: &'ir $($mutability)? ParamId) {}
            fn visit_literal(&mut self, _l: &'ir $($mutability)? Literal) {}
            fn visit_user_fun(&mut self, _u: &'ir $($mutability)? UserFunId) {}

            fn super_def(&mut self, d: &'ir $($mutability)? Def) {
                for p in & $($mutability)? d.params {
                    self.visit_param(p);
                }
                self.visit_expr(& $($mutability)? d.body);
            }
            fn super_expr(&mut self, e: &'ir $($mutability)? Expr) {
                match & $($mutability)? e.kind {
                    ExprKind::Literal(l) => self.visit_literal(l),
                    ExprKind::Param(p) => self.visit_param_use(p),
                    ExprKind::Call(f, args) => {
                        for a in args {
                            self.visit_expr(a);
                        }
                        self.visit_fun(f);
                    }
                }
            }
            fn super_fun(&mut self, f: &'ir $($mutability)? FunDecl) {
                let span = f.span;
                match & $($mutability)? f.kind {
                    FunKind::Lambda(l) => self.visit_lambda(l),
                    FunKind::Pattern(p) => self.visit_pattern(p, span),
                    FunKind::UserFun(u) => self.visit_user_fun(u),
                }
            }
            fn super_lambda(&mut self, l: &'ir $($mutability)? Lambda) {
                for p in & $($mutability)? l.params {
                    self.visit_param(p);
                }
                self.visit_expr(& $($mutability)? l.body);
            }
            fn super_pattern(&mut self, p: &'ir $($mutability)? Pattern, _span: Span) {
                // The one exhaustive list of the patterns that take a
                // function is `Pattern::nested_fun` (and its mutable twin).
                if let Some(f) = $nested(p) {
                    self.visit_fun(f);
                }
            }
        }
    };
}

make_ir_visitor!(
    /// A read-only walk of the IR (see the module documentation).
    Visitor,
    Pattern::nested_fun,
);
make_ir_visitor!(
    /// A walk of the IR that may change nodes in place (see the module
    /// documentation).
    MutVisitor,
    super::visit::nested_fun_mut,
    mut
);
