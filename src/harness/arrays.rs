//! The inputs and buffers a config declares, once checked: their element
//! types, shapes and how inputs are filled. Below `config` (which parses
//! them) so that the sections it delegates (`blas_spec`) need not import
//! the config back.

use crate::arith::ArithExpr;
use serde::Deserialize;

/// Element types of inputs and buffers; vectors are stored flat.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
pub enum ElemType {
    #[serde(rename = "float")]
    Float,
    #[serde(rename = "int")]
    Int,
    #[serde(rename = "float2")]
    Float2,
    #[serde(rename = "float4")]
    Float4,
    #[serde(rename = "int2")]
    Int2,
    #[serde(rename = "int4")]
    Int4,
}

impl ElemType {
    pub fn is_float(self) -> bool {
        matches!(self, ElemType::Float | ElemType::Float2 | ElemType::Float4)
    }
    pub fn components(self) -> usize {
        match self {
            ElemType::Float | ElemType::Int => 1,
            ElemType::Float2 | ElemType::Int2 => 2,
            ElemType::Float4 | ElemType::Int4 => 4,
        }
    }
}

/// How an input is filled.
#[derive(Clone, Debug, PartialEq)]
pub enum Init {
    Random { min: f64, max: f64 },
    Const(f64),
    Iota,
    Generator(String),
}

/// An input or buffer with its shape parsed.
#[derive(Clone, Debug)]
pub struct ArraySpec {
    pub name: String,
    pub ty: ElemType,
    pub shape: Vec<ArithExpr>,
    pub init: Init,
}

impl ArraySpec {
    pub fn is_scalar(&self) -> bool {
        self.shape.is_empty()
    }
}
