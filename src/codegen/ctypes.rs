//! C names of Lift types: tuples become structs named after their fields.

pub use crate::types::c_type;
use crate::types::Type;

/// The struct definition of a tuple type (fields `_0`, `_1`, ...).
pub fn tuple_typedef(t: &Type) -> Option<String> {
    let Type::Tuple(ts) = t else { return None };
    let fields: Vec<String> = ts.iter().enumerate().map(|(i, f)| format!("{} _{i};", c_type(f))).collect();
    Some(format!("typedef struct {{ {} }} {};", fields.join(" "), c_type(t)))
}

/// All tuple types inside `t`, innermost first (definition order).
pub fn collect_tuples(t: &Type, out: &mut Vec<Type>) {
    match t {
        Type::Tuple(ts) => {
            for f in ts {
                collect_tuples(f, out);
            }
            if !out.contains(t) {
                out.push(t.clone());
            }
        }
        Type::Array(e, _) => collect_tuples(e, out),
        Type::Scalar(_) | Type::Vector(..) => {}
    }
}
