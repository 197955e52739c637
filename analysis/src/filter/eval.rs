//! Evaluating a parsed filter on one frame: the rows of the field table read the parser's
//! structs; nothing is allocated, looked up or converted per frame.
//!
//! A comparison needs the field: `bth.psn != 5` does not match a frame without a BTH (as
//! tshark's `!=`), and on a field with several values (`problem`, `vlan.vid`) `==` holds
//! when one value is equal, `!=` when none is.

use std::cmp::Ordering;

use super::fields::{Field, Get, Value};
use super::parse::{Lit, Node, Op};
use crate::Decoded;

pub(super) fn eval(node: &Node, d: &Decoded<'_>) -> bool {
    match node {
        Node::Or(all) => all.iter().any(|n| eval(n, d)),
        Node::And(all) => all.iter().all(|n| eval(n, d)),
        Node::Not(inner) => !eval(inner, d),
        Node::Present(field) => any(field, d, &mut |_| true),
        Node::Cmp { field, op: Op::Ne, lit } => {
            let mut present = false;
            let equal = any(field, d, &mut |v| {
                present = true;
                compare(v, lit) == Some(Ordering::Equal)
            });
            present && !equal
        }
        Node::Cmp { field, op, lit } => any(field, d, &mut |v| {
            let Some(o) = compare(v, lit) else { return false };
            match op {
                Op::Eq => o == Ordering::Equal,
                Op::Ne => o != Ordering::Equal,
                Op::Lt => o == Ordering::Less,
                Op::Le => o != Ordering::Greater,
                Op::Gt => o == Ordering::Greater,
                Op::Ge => o != Ordering::Less,
            }
        }),
    }
}

/// Whether `visit` holds for one of the field's values in the frame.
#[inline]
fn any(field: &Field, d: &Decoded<'_>, visit: &mut dyn FnMut(Value) -> bool) -> bool {
    match field.get {
        Get::One(read) => read(d).is_some_and(visit),
        Get::Many(read) => read(d, visit),
    }
}

/// The value against the literal (`None`: they cannot be compared; the parser converted the
/// literal to the field's kind, so only an absent kind mismatch reaches here).
#[inline]
fn compare(v: Value, lit: &Lit) -> Option<Ordering> {
    match (v, lit) {
        (Value::Int(a), Lit::Int(b)) => Some(a.cmp(b)),
        (Value::Bool(a), Lit::Bool(b)) => Some(a.cmp(b)),
        (Value::Str(a), Lit::Str(b)) => Some(a.cmp(b.as_str())),
        (Value::Ip(a), Lit::Ip(b)) => Some(a.to_canonical().cmp(b)),
        (Value::Mac(a), Lit::Mac(b)) => Some(a.cmp(b)),
        _ => None,
    }
}
