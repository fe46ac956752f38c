//! What stops the evaluation of a user function's body (`eval`,
//! `eval_builtins`): each message is written here once, and a fault
//! carries the values and types it names (rendered with
//! `Value::describe` and the type's `Display`).

use super::ast::BinOp;
use super::eval::EvalError;
use crate::ir::Value;
use crate::types::Type;

#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum Fault {
    #[error("takes {want} arguments, got {got}")]
    Arity { want: usize, got: usize },
    #[error("user functions nest too deeply")]
    TooDeep,
    #[error("reached the end without `return`")]
    NoReturn,
    #[error("a loop runs too long")]
    RunawayLoop,
    #[error("unknown variable `{0}`")]
    UnknownVariable(String),
    #[error("assignment to something that is not a variable or a component")]
    BadAssignment,
    #[error("cannot negate {}", .0.describe())]
    Negate(Value),
    #[error("vectors of different widths")]
    VectorWidths,
    #[error("a float vector used as a condition")]
    FloatVectorCondition,
    /// A user function called from this one failed.
    #[error(transparent)]
    Call(Box<EvalError>),
    #[error("unknown function `{0}`")]
    UnknownFunction(String),
    #[error("`({0})(...)` is not a vector literal")]
    NotVectorLiteral(Type),
    #[error("{ty} literal with {components} components")]
    VectorLiteral { ty: Type, components: usize },
    #[error("`({0}){{...}}` is not a tuple literal")]
    NotTupleLiteral(Type),
    #[error("{ty} literal with {fields} fields")]
    TupleLiteral { ty: Type, fields: usize },
    #[error("{} used as a condition", .0.describe())]
    Condition(Value),
    #[error("cannot declare a variable of type {0}")]
    Declare(Type),
    #[error("cannot convert {} to {ty}", value.describe())]
    Convert { value: Value, ty: Type },
    #[error("the float {0} converted to int is outside the int range (undefined in OpenCL C)")]
    IntRange(f32),
    #[error("integer division by zero")]
    DivisionByZero,
    #[error("integer division overflow ({x} {} -1: undefined in C, traps on x86)", op.text())]
    DivisionOverflow { x: i32, op: BinOp },
    #[error("arithmetic on {}", .0.describe())]
    Arithmetic(Value),
    #[error("`%` on floats (use fmod)")]
    FloatRemainder,
    #[error("no component `{field}` in a vector of {width}")]
    NoComponentIn { field: String, width: usize },
    #[error("no component `{0}`")]
    NoComponent(String),
    #[error("no field `{field}` in a tuple of {len}")]
    NoTupleField { field: String, len: usize },
    #[error("no field `{field}` in {}", value.describe())]
    NoField { field: String, value: Value },
    #[error("cannot assign {} to `.{field}`", value.describe())]
    CannotAssign { value: Value, field: String },
    #[error("expected a number, found {}", .0.describe())]
    NotANumber(Value),
    #[error("vector arguments of different widths")]
    ArgumentWidths,
    #[error("expected a number or a vector, found {}", .0.describe())]
    NotNumeric(Value),
    #[error("dot of vectors of different widths")]
    DotWidths,
    /// No overload of built-in `name` takes these arguments (`found`:
    /// their C types, or a description where they have none).
    #[error("`{name}({})`: expected {expected}", found.join(", "))]
    NoOverload { name: String, found: Vec<String>, expected: String },
    #[error("`{name}` takes {want} arguments, got {got}")]
    BuiltinArity { name: String, want: usize, got: usize },
    #[error("unknown built-in `{0}`")]
    UnknownBuiltin(String),
    #[error("cross needs two float3 or float4 vectors")]
    Cross,
}
