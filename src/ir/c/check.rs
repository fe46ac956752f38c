//! Checks of a parsed user-function body before anything runs it: every
//! name resolves ([`NameCheck`]) and every value has a type OpenCL accepts
//! where it is used ([`ReturnCheck`]). The code generator emits the body
//! as written, so what these miss would only surface in the OpenCL build.

use super::ast::{BinOp, CExpr, Stmt, UnOp};
use super::builtins::{self, CType};
use crate::types::{ScalarType, Type};

/// A name a body uses that does not resolve: the name, and what was
/// expected in its place.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NameError {
    pub found: String,
    pub expected: &'static str,
}

/// Checks the names a body uses: variables must be parameters or declared
/// earlier, calls must name a built-in or an earlier user function.
pub struct NameCheck<'a> {
    pub scopes: Vec<Vec<String>>,
    pub is_callable: &'a dyn Fn(&str) -> bool,
}

impl NameCheck<'_> {
    pub fn stmts(&mut self, stmts: &[Stmt]) -> Result<(), NameError> {
        self.scopes.push(Vec::new());
        let r = stmts.iter().try_for_each(|s| self.stmt(s));
        self.scopes.pop();
        r
    }

    fn stmt(&mut self, s: &Stmt) -> Result<(), NameError> {
        match s {
            Stmt::Decl { qualifier: None, pointer: false, name, len: None, init, .. } => {
                if let Some(e) = init {
                    self.expr(e)?;
                }
                if let Some(top) = self.scopes.last_mut() {
                    top.push(name.clone());
                }
                Ok(())
            }
            Stmt::Assign { target, value, .. } => {
                self.expr(target)?;
                self.expr(value)
            }
            Stmt::If { cond, then, otherwise } => {
                self.expr(cond)?;
                self.stmts(then)?;
                self.stmts(otherwise)
            }
            Stmt::For { init, cond, step, body } => {
                self.scopes.push(Vec::new());
                let r = (|| {
                    self.stmt(init)?;
                    self.expr(cond)?;
                    self.stmt(step)?;
                    self.stmts(body)
                })();
                self.scopes.pop();
                r
            }
            Stmt::Return(e) | Stmt::Expr(e) => self.expr(e),
            Stmt::Block(b) => self.stmts(b),
            Stmt::Decl { .. } | Stmt::CountedFor { .. } | Stmt::Barrier { .. } | Stmt::Comment(_) => {
                s.kernel_only()
            }
        }
    }

    fn expr(&mut self, e: &CExpr) -> Result<(), NameError> {
        match e {
            CExpr::Raw(_) | CExpr::Arith(_) | CExpr::Index(..) => e.kernel_only(),
            CExpr::Int(_) | CExpr::Float(_) | CExpr::Double(_) => Ok(()),
            CExpr::Var(v) => {
                if self.scopes.iter().any(|s| s.contains(v)) {
                    Ok(())
                } else {
                    Err(NameError { found: v.clone(), expected: "a parameter or a declared variable" })
                }
            }
            CExpr::Field(e, _) | CExpr::Unary(_, e) | CExpr::Cast(_, e) => self.expr(e),
            CExpr::Binary(_, a, b) => {
                self.expr(a)?;
                self.expr(b)
            }
            CExpr::Ternary(a, b, c) => {
                self.expr(a)?;
                self.expr(b)?;
                self.expr(c)
            }
            CExpr::Call(name, args) => {
                if !(self.is_callable)(name) {
                    return Err(NameError {
                        found: name.clone(),
                        expected: "an OpenCL built-in or an earlier user function",
                    });
                }
                args.iter().try_for_each(|a| self.expr(a))
            }
            CExpr::VectorLit(_, args) | CExpr::TupleLit(_, args) => {
                args.iter().try_for_each(|a| self.expr(a))
            }
        }
    }
}

/// Checks that every `return` of a body gives a value OpenCL converts to
/// the declared result type (scalars convert to scalars and widen to
/// vectors; vectors and tuples must match exactly), and that every call
/// resolves to an overload of the built-in (`builtins`) or matches the
/// parameters of the user function it calls. The code generator emits the
/// body verbatim, so a mismatch would only surface in the OpenCL build, or
/// be converted silently where the interpreter does not. Types it cannot
/// infer (a swizzle out of range) are not checked.
pub struct ReturnCheck<'a> {
    pub ret: &'a Type,
    pub scopes: Vec<Vec<(String, Type)>>,
    /// The parameter and result types of an earlier user function.
    pub user_fun: &'a UserFunTypes<'a>,
    /// How many `return`s were checked so far (to find the failing one's token).
    pub returns: usize,
    /// The first vector literal OpenCL refuses (`(float4)(a, b)`: not 1 or 4
    /// components; `(float4)(v)` of an `int4`), with why.
    pub bad_literal: Option<(Type, String)>,
    /// The first arithmetic on two vectors of different types (`float2 +
    /// float16`), which OpenCL does not convert.
    pub bad_mix: Option<(Type, Type)>,
    /// The first arithmetic on a vector and a scalar of greater rank than
    /// its elements (`float8 - 1.0`, a `double`; `int4 + 0.5f`), which
    /// OpenCL C refuses (1.2, 6.2.6) though some compilers accept it.
    pub bad_rank: Option<(Type, CType)>,
    /// The first declaration initialised with a value OpenCL does not
    /// convert to its type (`float a = <float4>`): name, type, value's type.
    pub bad_decl: Option<(String, Type, Type)>,
    /// The first assignment of a value OpenCL does not convert to the
    /// target's type (`s = v` of a float `s` and a float4 `v`): target,
    /// its type, the value's type.
    pub bad_assign: Option<(String, Type, Type)>,
    /// The first `%` with a floating operand (its type).
    pub bad_rem: Option<CType>,
    /// The first vector used as a condition (`v ? a : b`, `if (v)`): its
    /// type and what it conditions. OpenCL takes only scalar conditions
    /// here (`select` chooses component-wise).
    pub bad_cond: Option<(Type, &'static str)>,
    /// The first call no overload of the built-in (or the user function)
    /// takes.
    pub bad_call: Option<BadCall>,
    /// Calls seen so far, per callee (to find the failing call's token).
    pub calls: Vec<(String, usize)>,
}

/// The parameter and result types of a user function by name.
pub type UserFunTypes<'a> = dyn Fn(&str) -> Option<(Vec<Type>, Type)> + 'a;

/// A call that the OpenCL build would refuse.
#[derive(Debug)]
pub struct BadCall {
    pub name: String,
    /// Which call of `name` it is, 0-based in source order.
    pub nth: usize,
    /// The call with its argument types: `fabs(int)`.
    pub found: String,
    pub expected: String,
}

impl ReturnCheck<'_> {
    /// `Err((k, found))`: the `k`-th `return` (0-based, source order) gives a `found`.
    pub fn stmts(&mut self, stmts: &[Stmt]) -> Result<(), (usize, Type)> {
        self.scopes.push(Vec::new());
        let r = stmts.iter().try_for_each(|s| self.stmt(s));
        self.scopes.pop();
        r
    }

    fn stmt(&mut self, s: &Stmt) -> Result<(), (usize, Type)> {
        match s {
            Stmt::Decl { qualifier: None, ty, pointer: false, name, len: None, init } => {
                if let Some(e) = init {
                    self.literals(e);
                    if let Some(t) = self.ty(e).filter(|t| !converts(t, ty)) {
                        self.bad_decl.get_or_insert((name.clone(), ty.clone(), t));
                    }
                }
                if let Some(top) = self.scopes.last_mut() {
                    top.push((name.clone(), ty.clone()));
                }
                Ok(())
            }
            Stmt::Assign { target, op, value } => {
                self.literals(target);
                self.literals(value);
                // The value, or `target op value`, must convert to the target's type.
                let bin = op.binary();
                let result = match bin {
                    None => self.ty(value),
                    Some(b) => self.ty(&CExpr::Binary(b, Box::new(target.clone()), Box::new(value.clone()))),
                };
                if let (Some(t), Some(v)) = (self.ty(target), result) {
                    if !converts(&v, &t) && self.bad_assign.is_none() {
                        self.bad_assign = Some((target_text(target), t, v));
                    }
                }
                Ok(())
            }
            Stmt::Expr(e) => {
                self.literals(e);
                Ok(())
            }
            Stmt::If { cond, then, otherwise } => {
                self.literals(cond);
                self.scalar_cond(cond, "an `if`");
                self.stmts(then)?;
                self.stmts(otherwise)
            }
            Stmt::For { init, cond, step, body } => {
                self.scopes.push(Vec::new());
                let r = self.stmt(init).and_then(|()| {
                    self.literals(cond);
                    self.scalar_cond(cond, "a `for`");
                    self.stmt(step)?;
                    self.stmts(body)
                });
                self.scopes.pop();
                r
            }
            Stmt::Return(e) => {
                self.literals(e);
                let k = self.returns;
                self.returns += 1;
                match self.ty(e) {
                    Some(t) if !converts(&t, self.ret) => Err((k, t)),
                    _ => Ok(()),
                }
            }
            Stmt::Block(b) => self.stmts(b),
            Stmt::Decl { .. } | Stmt::CountedFor { .. } | Stmt::Barrier { .. } | Stmt::Comment(_) => {
                s.kernel_only()
            }
        }
    }

    /// Records in `bad_cond` the first vector condition (`c` of `what`).
    fn scalar_cond(&mut self, c: &CExpr, what: &'static str) {
        if let (None, Some(t @ Type::Vector(..))) = (&self.bad_cond, self.ty(c)) {
            self.bad_cond = Some((t, what));
        }
    }

    /// Records in `bad_literal` the first vector literal in `e` whose
    /// components (where their types are certain) do not make the vector:
    /// one scalar (broadcast), or scalars and vectors of its own scalar type
    /// whose widths add up to its width.
    fn literals(&mut self, e: &CExpr) {
        if self.bad_literal.is_some() {
            return;
        }
        match e {
            CExpr::Raw(_) | CExpr::Arith(_) | CExpr::Index(..) => e.kernel_only(),
            CExpr::Int(_) | CExpr::Float(_) | CExpr::Double(_) | CExpr::Var(_) => {}
            CExpr::Field(a, _) | CExpr::Unary(_, a) | CExpr::Cast(_, a) => self.literals(a),
            CExpr::Binary(op, a, b) => {
                self.literals(a);
                self.literals(b);
                if *op == BinOp::Rem && self.bad_rem.is_none() {
                    // OpenCL's `%` takes integers only.
                    let float = |t: Option<CType>| match t {
                        Some(CType::Double) => Some(CType::Double),
                        Some(CType::Lift(
                            t @ (Type::Scalar(ScalarType::Float) | Type::Vector(ScalarType::Float, _)),
                        )) => Some(CType::Lift(t)),
                        _ => None,
                    };
                    self.bad_rem = float(self.cty(a)).or_else(|| float(self.cty(b)));
                }
                if let (Some(ta @ Type::Vector(..)), Some(tb @ Type::Vector(..))) = (self.ty(a), self.ty(b)) {
                    if ta != tb && self.bad_mix.is_none() {
                        self.bad_mix = Some((ta, tb));
                    }
                }
                if self.bad_rank.is_none() {
                    self.bad_rank = self.outranked(a, b).or_else(|| self.outranked(b, a));
                }
            }
            CExpr::Ternary(c, a, b) => {
                self.literals(c);
                self.literals(a);
                self.literals(b);
                // A vector of ints chooses component-wise between vectors
                // of its width (OpenCL C 1.2, 6.3.i: `select`); the vectoriser
                // writes `(d > 0.0f) ? (1.0f - c) : c` of `float8`s.
                let result = self.ty(e);
                let chooses = matches!((self.ty(c), &result),
                    (Some(Type::Vector(ScalarType::Int, n)), Some(Type::Vector(_, m))) if n == *m);
                if !chooses {
                    self.scalar_cond(
                        c,
                        "a conditional `?:` (except an int vector choosing between vectors of its width)",
                    );
                }
            }
            CExpr::Call(name, args) => {
                // Counted before the arguments: `f(f(x))` names the outer call first.
                let nth = match self.calls.iter_mut().find(|(n, _)| n == name) {
                    Some((_, k)) => {
                        *k += 1;
                        *k - 1
                    }
                    None => {
                        self.calls.push((name.clone(), 1));
                        0
                    }
                };
                args.iter().for_each(|a| self.literals(a));
                if self.bad_call.is_none() {
                    if let Some((found, expected)) = self.check_call(name, args) {
                        self.bad_call = Some(BadCall { name: name.clone(), nth, found, expected });
                    }
                }
            }
            CExpr::TupleLit(_, args) => args.iter().for_each(|a| self.literals(a)),
            CExpr::VectorLit(t, args) => {
                args.iter().for_each(|a| self.literals(a));
                let Type::Vector(s, n) = t else { return };
                let mut width = 0usize;
                for a in args {
                    match self.ty(a) {
                        Some(Type::Scalar(_)) => width += 1,
                        Some(Type::Vector(s2, m)) if s2 == *s => width += m as usize,
                        Some(other) => {
                            self.bad_literal = Some((t.clone(), format!("a component of type {other}")));
                            return;
                        }
                        None => return,
                    }
                }
                let scalar_broadcast = args.len() == 1 && width == 1;
                if !scalar_broadcast && width != *n as usize {
                    self.bad_literal = Some((t.clone(), format!("{width} components")));
                }
            }
        }
    }

    fn var(&self, v: &str) -> Option<Type> {
        self.scopes.iter().rev().flat_map(|s| s.iter().rev()).find(|(n, _)| n == v).map(|(_, t)| t.clone())
    }

    /// `(found, expected)` when OpenCL refuses the call `name(args)`: an
    /// argument count or types no overload of the built-in takes (or
    /// several take equally well), or that the user function's parameters
    /// do not take.
    fn check_call(&self, name: &str, args: &[CExpr]) -> Option<(String, String)> {
        let types: Vec<Option<CType>> = args.iter().map(|a| self.cty(a)).collect();
        let found = format!(
            "{name}({})",
            types
                .iter()
                .map(|t| t.as_ref().map_or("?".to_string(), CType::c_name))
                .collect::<Vec<_>>()
                .join(", ")
        );
        if let Some((params, _)) = (self.user_fun)(name) {
            let fits = params.len() == args.len()
                && types.iter().zip(&params).all(|(t, p)| t.as_ref().is_none_or(|t| converts(&t.lift(), p)));
            let list: Vec<String> = params.iter().map(crate::types::c_type).collect();
            return (!fits)
                .then(|| (found, format!("arguments user function {name}({}) takes", list.join(", "))));
        }
        let known: Option<Vec<CType>> = types.into_iter().collect();
        let wrong_count = builtins::arity(name).is_some_and(|n| n != args.len());
        match known {
            Some(ts) => builtins::resolve(name, &ts).err().map(|e| (found, e.expected)),
            None if wrong_count => {
                let e = builtins::resolve(name, &[]).err()?;
                Some((found, e.expected))
            }
            None => None,
        }
    }

    /// `v`'s vector type and `x`'s scalar type where `v` is a vector and
    /// `x` a scalar of greater rank than its elements.
    fn outranked(&self, v: &CExpr, x: &CExpr) -> Option<(Type, CType)> {
        let Some(tv @ Type::Vector(elem, _)) = self.ty(v) else { return None };
        let tx = self.cty(x)?;
        // Of greater rank: the usual arithmetic conversions pick it over the elements'.
        let elem = CType::Lift(Type::Scalar(elem));
        (usual_arithmetic(&tx, &elem)? != elem).then_some((tv, tx))
    }

    /// The C type of `e`, where the subset makes it certain.
    fn ty(&self, e: &CExpr) -> Option<Type> {
        self.cty(e).map(|t| t.lift())
    }

    /// The C type of `e`, `double` included, where the subset makes it certain.
    fn cty(&self, e: &CExpr) -> Option<CType> {
        let lift = |t: Type| Some(CType::Lift(t));
        match e {
            CExpr::Raw(_) | CExpr::Arith(_) | CExpr::Index(..) => e.kernel_only(),
            CExpr::Int(_) => lift(Type::INT),
            CExpr::Float(_) => lift(Type::FLOAT),
            CExpr::Double(_) => Some(CType::Double),
            CExpr::Var(v) => self.var(v).map(CType::Lift),
            CExpr::Field(inner, f) => match self.ty(inner)? {
                Type::Vector(s, n) => {
                    let k = if let Some(hex) = f.strip_prefix('s').or_else(|| f.strip_prefix('S')) {
                        hex.len()
                    } else if ["lo", "hi", "even", "odd"].contains(&f.as_str()) {
                        (n as usize).div_ceil(2)
                    } else {
                        f.len()
                    };
                    match k {
                        1 => lift(Type::Scalar(s)),
                        2 | 3 | 4 | 8 | 16 => lift(Type::Vector(s, k as u8)),
                        _ => None,
                    }
                }
                Type::Tuple(ts) => f
                    .strip_prefix('_')?
                    .parse::<usize>()
                    .ok()
                    .and_then(|i| ts.get(i).cloned())
                    .map(CType::Lift),
                Type::Scalar(_) | Type::Array(..) => None,
            },
            CExpr::Unary(UnOp::Neg, a) => self.cty(a),
            // `!` and comparisons give `int`, or `intn` on vectors.
            CExpr::Unary(UnOp::Not, a) => match self.ty(a)? {
                Type::Scalar(_) => lift(Type::INT),
                Type::Vector(_, n) => lift(Type::Vector(ScalarType::Int, n)),
                Type::Tuple(_) | Type::Array(..) => None,
            },
            CExpr::Binary(op, a, b) => {
                let (ta, tb) = (self.cty(a)?, self.cty(b)?);
                let arith = matches!(op, BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Rem);
                let vector = |t: &CType| match t {
                    CType::Lift(Type::Vector(s, n)) => Some((*s, *n)),
                    _ => None,
                };
                match (vector(&ta), vector(&tb)) {
                    (None, None) if arith => usual_arithmetic(&ta, &tb),
                    (None, None) => scalar(&ta).and(scalar(&tb)).and(lift(Type::INT)),
                    (Some((s, n)), None) | (None, Some((s, n))) => {
                        scalar(if vector(&ta).is_some() { &tb } else { &ta })?;
                        lift(Type::Vector(if arith { s } else { ScalarType::Int }, n))
                    }
                    (Some((s, n)), Some((t, m))) if s == t && n == m => {
                        lift(Type::Vector(if arith { s } else { ScalarType::Int }, n))
                    }
                    (Some(_), Some(_)) => None,
                }
            }
            CExpr::Ternary(_, a, b) => {
                let (ta, tb) = (self.cty(a)?, self.cty(b)?);
                // A vector and a scalar give the vector (OpenCL C 1.2, 6.3.i):
                // `c ? x : v4` returned from a `float` function reached the
                // driver's build before (found by fuzzing).
                let is_vector = |t: &CType| matches!(t, CType::Lift(Type::Vector(..)));
                if ta == tb {
                    Some(ta)
                } else if is_vector(&ta) && !is_vector(&tb) {
                    scalar(&tb).and(Some(ta))
                } else if is_vector(&tb) && !is_vector(&ta) {
                    scalar(&ta).and(Some(tb))
                } else {
                    usual_arithmetic(&ta, &tb)
                }
            }
            CExpr::Call(name, args) => {
                if let Some((_, t)) = (self.user_fun)(name) {
                    return lift(t);
                }
                let ts: Option<Vec<CType>> = args.iter().map(|a| self.cty(a)).collect();
                builtins::resolve(name, &ts?).ok().map(|r| r.ret)
            }
            CExpr::Cast(t, _) | CExpr::VectorLit(t, _) | CExpr::TupleLit(t, _) => lift(t.clone()),
        }
    }
}

/// An assignment's target as written: `s`, `v.x`.
fn target_text(e: &CExpr) -> String {
    match e {
        CExpr::Var(v) => v.clone(),
        CExpr::Field(inner, f) => format!("{}.{f}", target_text(inner)),
        _ => "a component".to_string(),
    }
}

/// `Some(())` for a scalar type.
fn scalar(t: &CType) -> Option<()> {
    matches!(t, CType::Double | CType::Lift(Type::Scalar(_))).then_some(())
}

/// The type of arithmetic on two scalars: `double` over `float` over `int`.
fn usual_arithmetic(a: &CType, b: &CType) -> Option<CType> {
    scalar(a).and(scalar(b))?;
    Some(if *a == CType::Double || *b == CType::Double {
        CType::Double
    } else if [a, b].iter().any(|t| **t == CType::Lift(Type::FLOAT)) {
        CType::Lift(Type::FLOAT)
    } else {
        CType::Lift(Type::Scalar(ScalarType::Int))
    })
}

/// Whether OpenCL converts a value of type `from` implicitly to `to`.
fn converts(from: &Type, to: &Type) -> bool {
    match (from, to) {
        (Type::Scalar(_), Type::Scalar(_) | Type::Vector(..)) => true,
        _ => from == to,
    }
}
