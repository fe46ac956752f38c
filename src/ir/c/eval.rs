//! Evaluation of user-function bodies (the tree of `ast`): `float`
//! arithmetic in f32, `int` in i32 with C semantics (truncating `/` and
//! `%`, comparisons yielding 0 or 1), vectors component-wise with scalars
//! broadcast, swizzles, tuple fields `._0`, casts and literals. The
//! interpreter calls it for every user-function call of a Lift program.

use super::ast::{BinOp, CExpr, Stmt, UnOp};
use super::eval_builtins::{call_builtin, componentwise, is_builtin};
use super::fault::Fault;
use crate::ir::{Program, UserFunId, Value};
use crate::types::{ScalarType, Type};

/// Nested user-function calls beyond this depth are reported, not followed.
const MAX_DEPTH: usize = 64;
/// Loop iterations per call beyond this are reported as a runaway loop.
const MAX_STEPS: u64 = 100_000_000;

/// Why a user-function call has no value.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum EvalError {
    #[error("no user function #{0}")]
    NoSuchFun(u32),
    /// An error inside the body of user function `fun`.
    #[error("in user function `{fun}`: {fault}")]
    InFun { fun: String, fault: Fault },
}

/// Calls user function `id` with argument values.
pub fn call_user_fun(program: &Program, id: UserFunId, args: Vec<Value>) -> Result<Value, EvalError> {
    call(program, id, args, 0)
}

fn call(program: &Program, id: UserFunId, args: Vec<Value>, depth: usize) -> Result<Value, EvalError> {
    let Some(uf) = program.user_funs.get(id.0 as usize) else {
        return Err(EvalError::NoSuchFun(id.0));
    };
    let err = |fault: Fault| EvalError::InFun { fun: uf.name.clone(), fault };
    if args.len() != uf.params.len() {
        return Err(err(Fault::Arity { want: uf.params.len(), got: args.len() }));
    }
    if depth > MAX_DEPTH {
        return Err(err(Fault::TooDeep));
    }
    let mut vars = Vec::new();
    for ((name, ty), v) in uf.params.iter().zip(args) {
        vars.push((name.clone(), convert(v, ty).map_err(err)?));
    }
    let mut m = Machine { program, scopes: vec![vars], steps: 0, depth };
    match m.block(&uf.body).map_err(err)? {
        Flow::Return(v) => convert(v, &uf.ret).map_err(err),
        Flow::Normal => Err(err(Fault::NoReturn)),
    }
}

enum Flow {
    Normal,
    Return(Value),
}

type R<T> = Result<T, Fault>;

struct Machine<'p> {
    program: &'p Program,
    scopes: Vec<Vec<(String, Value)>>,
    steps: u64,
    depth: usize,
}

impl Machine<'_> {
    fn block(&mut self, stmts: &[Stmt]) -> R<Flow> {
        self.scopes.push(Vec::new());
        let r = self.stmts(stmts);
        self.scopes.pop();
        r
    }

    fn stmts(&mut self, stmts: &[Stmt]) -> R<Flow> {
        for s in stmts {
            if let Flow::Return(v) = self.stmt(s)? {
                return Ok(Flow::Return(v));
            }
        }
        Ok(Flow::Normal)
    }

    fn stmt(&mut self, s: &Stmt) -> R<Flow> {
        match s {
            Stmt::Decl { qualifier: None, ty, pointer: false, name, len: None, init } => {
                let v = match init {
                    Some(e) => convert(self.expr(e)?, ty)?,
                    None => zero(ty)?,
                };
                if let Some(top) = self.scopes.last_mut() {
                    top.push((name.clone(), v));
                }
            }
            Stmt::Assign { target, op, value } => {
                let mut v = self.expr(value)?;
                let bin = op.binary();
                if let Some(b) = bin {
                    v = binary(b, &self.expr(target)?, &v)?;
                }
                self.store(target, v)?;
            }
            Stmt::If { cond, then, otherwise } => {
                let c = truthy(&self.expr(cond)?)?;
                return self.block(if c { then } else { otherwise });
            }
            Stmt::For { init, cond, step, body } => {
                self.scopes.push(Vec::new());
                let r = self.for_loop(init, cond, step, body);
                self.scopes.pop();
                return r;
            }
            Stmt::Return(e) => return Ok(Flow::Return(self.expr(e)?)),
            Stmt::Block(b) => return self.block(b),
            Stmt::Expr(e) => {
                self.expr(e)?;
            }
            Stmt::Decl { .. } | Stmt::CountedFor { .. } | Stmt::Barrier { .. } | Stmt::Comment(_) => {
                s.kernel_only()
            }
        }
        Ok(Flow::Normal)
    }

    fn for_loop(&mut self, init: &Stmt, cond: &CExpr, step: &Stmt, body: &[Stmt]) -> R<Flow> {
        self.stmt(init)?;
        while truthy(&self.expr(cond)?)? {
            self.steps += 1;
            if self.steps > MAX_STEPS {
                return Err(Fault::RunawayLoop);
            }
            if let Flow::Return(v) = self.block(body)? {
                return Ok(Flow::Return(v));
            }
            self.stmt(step)?;
        }
        Ok(Flow::Normal)
    }

    fn lookup(&self, name: &str) -> R<&Value> {
        self.scopes
            .iter()
            .rev()
            .find_map(|s| s.iter().rev().find(|(n, _)| n == name).map(|(_, v)| v))
            .ok_or_else(|| Fault::UnknownVariable(name.to_string()))
    }

    fn store(&mut self, target: &CExpr, v: Value) -> R<()> {
        match target {
            CExpr::Var(name) => {
                let slot = self
                    .scopes
                    .iter_mut()
                    .rev()
                    .find_map(|s| s.iter_mut().rev().find(|(n, _)| n == name).map(|(_, v)| v))
                    .ok_or_else(|| Fault::UnknownVariable(name.to_string()))?;
                *slot = convert_like(v, slot)?;
                Ok(())
            }
            CExpr::Field(inner, field) => {
                let mut whole = self.expr(inner)?;
                set_field(&mut whole, field, v)?;
                self.store(inner, whole)
            }
            _ => Err(Fault::BadAssignment),
        }
    }

    fn expr(&mut self, e: &CExpr) -> R<Value> {
        match e {
            CExpr::Raw(_) | CExpr::Arith(_) | CExpr::Index(..) => e.kernel_only(),
            CExpr::Int(i) => Ok(Value::Int(*i as i32)),
            CExpr::Float(f) | CExpr::Double(f) => Ok(Value::Float(*f as f32)),
            CExpr::Var(n) => self.lookup(n).cloned(),
            CExpr::Field(inner, field) => get_field(&self.expr(inner)?, field),
            CExpr::Unary(op, inner) => {
                let v = self.expr(inner)?;
                componentwise(&[v], &|x| match (op, x[0]) {
                    (UnOp::Neg, Value::Int(i)) => Ok(Value::Int(i.wrapping_neg())),
                    (UnOp::Neg, Value::Float(f)) => Ok(Value::Float(-f)),
                    (UnOp::Not, v) => Ok(Value::Int(i32::from(!truthy(v)?))),
                    (_, other) => Err(Fault::Negate(other.clone())),
                })
            }
            CExpr::Binary(BinOp::And, a, b) => {
                Ok(Value::Int(i32::from(truthy(&self.expr(a)?)? && truthy(&self.expr(b)?)?)))
            }
            CExpr::Binary(BinOp::Or, a, b) => {
                Ok(Value::Int(i32::from(truthy(&self.expr(a)?)? || truthy(&self.expr(b)?)?)))
            }
            CExpr::Binary(op, a, b) => {
                let (a, b) = (self.expr(a)?, self.expr(b)?);
                binary(*op, &a, &b)
            }
            CExpr::Ternary(c, a, b) => match self.expr(c)? {
                // A vector condition selects lane by lane where the lane's
                // most significant bit is set (OpenCL's `select`).
                Value::Vector(lanes) => {
                    let (a, b) = (self.expr(a)?, self.expr(b)?);
                    let lane = |v: &Value, i: usize| match v {
                        Value::Vector(cs) => cs.get(i).cloned().ok_or(Fault::VectorWidths),
                        other => Ok(other.clone()),
                    };
                    let mut out = Vec::with_capacity(lanes.len());
                    for (i, l) in lanes.iter().enumerate() {
                        let Value::Int(bits) = l else {
                            return Err(Fault::FloatVectorCondition);
                        };
                        out.push(if *bits < 0 { lane(&a, i)? } else { lane(&b, i)? });
                    }
                    Ok(Value::Vector(out))
                }
                cond => {
                    if truthy(&cond)? {
                        self.expr(a)
                    } else {
                        self.expr(b)
                    }
                }
            },
            CExpr::Call(name, args) => {
                let vals = args.iter().map(|a| self.expr(a)).collect::<R<Vec<_>>>()?;
                if let Some(i) = self.program.user_funs.iter().position(|u| u.name == *name) {
                    return call(self.program, UserFunId(i as u32), vals, self.depth + 1)
                        .map_err(|e| Fault::Call(Box::new(e)));
                }
                if is_builtin(name) {
                    return call_builtin(name, &vals);
                }
                Err(Fault::UnknownFunction(name.clone()))
            }
            CExpr::Cast(ty, inner) => convert(self.expr(inner)?, ty),
            CExpr::VectorLit(ty, args) => {
                let Type::Vector(s, n) = ty else {
                    return Err(Fault::NotVectorLiteral(ty.clone()));
                };
                let mut comps = Vec::new();
                for a in args {
                    match self.expr(a)? {
                        Value::Vector(cs) => comps.extend(cs),
                        v => comps.push(v),
                    }
                }
                if comps.len() == 1 {
                    comps = vec![comps[0].clone(); *n as usize];
                }
                if comps.len() != *n as usize {
                    return Err(Fault::VectorLiteral { ty: ty.clone(), components: comps.len() });
                }
                let comps = comps.into_iter().map(|c| convert(c, &Type::Scalar(*s))).collect::<R<_>>()?;
                Ok(Value::Vector(comps))
            }
            CExpr::TupleLit(ty, args) => {
                let Type::Tuple(ts) = ty else {
                    return Err(Fault::NotTupleLiteral(ty.clone()));
                };
                if ts.len() != args.len() {
                    return Err(Fault::TupleLiteral { ty: ty.clone(), fields: args.len() });
                }
                let vals = args.iter().zip(ts).map(|(a, t)| convert(self.expr(a)?, t)).collect::<R<_>>()?;
                Ok(Value::Tuple(vals))
            }
        }
    }
}

fn truthy(v: &Value) -> R<bool> {
    match v {
        Value::Int(i) => Ok(*i != 0),
        Value::Float(f) => Ok(*f != 0.0),
        other => Err(Fault::Condition(other.clone())),
    }
}

fn zero(ty: &Type) -> R<Value> {
    convert(Value::Int(0), ty).or_else(|_| match ty {
        Type::Tuple(ts) => Ok(Value::Tuple(ts.iter().map(zero).collect::<R<_>>()?)),
        _ => Err(Fault::Declare(ty.clone())),
    })
}

/// Converts as C does on initialisation, assignment and casts.
pub fn convert(v: Value, ty: &Type) -> R<Value> {
    match (ty, v) {
        (Type::Scalar(ScalarType::Float), Value::Float(f)) => Ok(Value::Float(f)),
        (Type::Scalar(ScalarType::Float), Value::Int(i)) => Ok(Value::Float(i as f32)),
        (Type::Scalar(ScalarType::Int), Value::Int(i)) => Ok(Value::Int(i)),
        (Type::Scalar(ScalarType::Int), Value::Float(f)) => float_to_int(f),
        (Type::Vector(s, n), Value::Vector(cs)) if cs.len() == *n as usize => {
            Ok(Value::Vector(cs.into_iter().map(|c| convert(c, &Type::Scalar(*s))).collect::<R<_>>()?))
        }
        (Type::Vector(s, n), v @ (Value::Float(_) | Value::Int(_))) => {
            let c = convert(v, &Type::Scalar(*s))?;
            Ok(Value::Vector(vec![c; *n as usize]))
        }
        (Type::Tuple(ts), Value::Tuple(vs)) if ts.len() == vs.len() => {
            Ok(Value::Tuple(vs.into_iter().zip(ts).map(|(v, t)| convert(v, t)).collect::<R<_>>()?))
        }
        (ty, v) => Err(Fault::Convert { value: v, ty: ty.clone() }),
    }
}

/// `f` truncated to an `int`, as C converts; a value outside the `int`
/// range (or NaN) is an error: C leaves it undefined and devices differ
/// (x86 gives -2147483648, NVIDIA GPUs saturate), so no answer would be
/// the device's.
fn float_to_int(f: f32) -> R<Value> {
    let t = f.trunc();
    if (-2147483648.0..2147483648.0).contains(&t) {
        Ok(Value::Int(t as i32))
    } else {
        Err(Fault::IntRange(f))
    }
}

/// Converts `v` to the kind of value `like` holds (a variable's type).
fn convert_like(v: Value, like: &Value) -> R<Value> {
    match like {
        Value::Float(_) => convert(v, &Type::FLOAT),
        Value::Int(_) => convert(v, &Type::INT),
        Value::Vector(cs) => match cs.first() {
            Some(Value::Int(_)) => convert(v, &Type::Vector(ScalarType::Int, cs.len() as u8)),
            _ => convert(v, &Type::Vector(ScalarType::Float, cs.len() as u8)),
        },
        Value::Tuple(_) | Value::Array(_) => Ok(v),
    }
}

fn binary(op: BinOp, a: &Value, b: &Value) -> R<Value> {
    let vector = matches!(a, Value::Vector(_)) || matches!(b, Value::Vector(_));
    componentwise(&[a.clone(), b.clone()], &|x| scalar_binary(op, x[0], x[1], vector))
}

fn scalar_binary(op: BinOp, a: &Value, b: &Value, vector: bool) -> R<Value> {
    // OpenCL vector comparisons yield -1 for true, scalar ones 1.
    let t = if vector { -1 } else { 1 };
    let cmp = |c: bool| Value::Int(if c { t } else { 0 });
    if let (Value::Int(x), Value::Int(y)) = (a, b) {
        let (x, y) = (*x, *y);
        return Ok(match op {
            BinOp::Add => Value::Int(x.wrapping_add(y)),
            BinOp::Sub => Value::Int(x.wrapping_sub(y)),
            BinOp::Mul => Value::Int(x.wrapping_mul(y)),
            BinOp::Div | BinOp::Rem if y == 0 => return Err(Fault::DivisionByZero),
            BinOp::Div | BinOp::Rem if x == i32::MIN && y == -1 => {
                return Err(Fault::DivisionOverflow { x, op })
            }
            BinOp::Div => Value::Int(x.wrapping_div(y)),
            BinOp::Rem => Value::Int(x.wrapping_rem(y)),
            BinOp::Lt => cmp(x < y),
            BinOp::Le => cmp(x <= y),
            BinOp::Gt => cmp(x > y),
            BinOp::Ge => cmp(x >= y),
            BinOp::Eq => cmp(x == y),
            BinOp::Ne => cmp(x != y),
            BinOp::And => cmp(x != 0 && y != 0),
            BinOp::Or => cmp(x != 0 || y != 0),
        });
    }
    let num = |v: &Value| match v {
        Value::Float(f) => Ok(*f),
        Value::Int(i) => Ok(*i as f32),
        other => Err(Fault::Arithmetic(other.clone())),
    };
    let (x, y) = (num(a)?, num(b)?);
    Ok(match op {
        BinOp::Add => Value::Float(x + y),
        BinOp::Sub => Value::Float(x - y),
        BinOp::Mul => Value::Float(x * y),
        BinOp::Div => Value::Float(x / y),
        BinOp::Rem => return Err(Fault::FloatRemainder),
        BinOp::Lt => cmp(x < y),
        BinOp::Le => cmp(x <= y),
        BinOp::Gt => cmp(x > y),
        BinOp::Ge => cmp(x >= y),
        BinOp::Eq => cmp(x == y),
        BinOp::Ne => cmp(x != y),
        BinOp::And => cmp(x != 0.0 && y != 0.0),
        BinOp::Or => cmp(x != 0.0 || y != 0.0),
    })
}

/// Component indices named by a swizzle (`x`, `xy`, `s0`, `s3A`, `lo`, ...).
fn swizzle(field: &str, width: usize) -> R<Vec<usize>> {
    let bad = || Fault::NoComponentIn { field: field.to_string(), width };
    let idx: Vec<usize> = if let Some(hex) = field.strip_prefix('s').or_else(|| field.strip_prefix('S')) {
        hex.chars().map(|c| c.to_digit(16).map(|d| d as usize)).collect::<Option<_>>().ok_or_else(bad)?
    } else {
        match field {
            "lo" => (0..width.div_ceil(2)).collect(),
            "hi" => (width.div_ceil(2)..width.div_ceil(2) * 2).collect(),
            "even" => (0..width).step_by(2).collect(),
            "odd" => (1..width).step_by(2).collect(),
            _ => field.chars().map(|c| "xyzw".find(c)).collect::<Option<_>>().ok_or_else(bad)?,
        }
    };
    if idx.is_empty() || idx.iter().any(|i| *i >= width) {
        return Err(bad());
    }
    Ok(idx)
}

fn get_field(v: &Value, field: &str) -> R<Value> {
    match v {
        Value::Tuple(vs) => field
            .strip_prefix('_')
            .and_then(|k| k.parse::<usize>().ok())
            .and_then(|k| vs.get(k))
            .cloned()
            .ok_or_else(|| Fault::NoTupleField { field: field.to_string(), len: vs.len() }),
        Value::Vector(cs) => {
            let idx = swizzle(field, cs.len())?;
            let picked: Vec<Value> =
                idx.iter().map(|i| cs.get(*i).cloned().unwrap_or(Value::Float(0.0))).collect();
            if picked.len() == 1 {
                Ok(picked.into_iter().next().unwrap_or(Value::Float(0.0)))
            } else {
                Ok(Value::Vector(picked))
            }
        }
        other => Err(Fault::NoField { field: field.to_string(), value: other.clone() }),
    }
}

fn set_field(whole: &mut Value, field: &str, v: Value) -> R<()> {
    match whole {
        Value::Tuple(vs) => {
            let n = vs.len();
            let slot = field
                .strip_prefix('_')
                .and_then(|k| k.parse::<usize>().ok())
                .and_then(|k| vs.get_mut(k))
                .ok_or_else(|| Fault::NoTupleField { field: field.to_string(), len: n })?;
            *slot = convert_like(v, slot)?;
            Ok(())
        }
        Value::Vector(cs) => {
            let idx = swizzle(field, cs.len())?;
            let parts = match v {
                Value::Vector(p) if p.len() == idx.len() => p,
                s @ (Value::Float(_) | Value::Int(_)) => vec![s; idx.len()],
                other => return Err(Fault::CannotAssign { value: other.clone(), field: field.to_string() }),
            };
            for (i, p) in idx.into_iter().zip(parts) {
                let slot = cs.get_mut(i).ok_or_else(|| Fault::NoComponent(field.to_string()))?;
                *slot = convert_like(p, slot)?;
            }
            Ok(())
        }
        other => Err(Fault::NoField { field: field.to_string(), value: other.clone() }),
    }
}
