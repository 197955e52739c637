//! The cells of a row: what a table's getters may return ([`IntCell`], [`BoolCell`],
//! [`StrCell`], [`BytesCell`]) and [`Cells`], which appends each to its column.

use std::net::IpAddr;

use roce_conformance::internal::hash::FastHashMap;

use super::{BoolColumn, IntColumn, StrColumn};

/// A value of an integer column.
pub trait IntCell {
    /// The value, `None` for null.
    fn int(self) -> Option<i64>;
}

macro_rules! int_cells {
    ($($t:ty),*) => {$(
        impl IntCell for $t {
            #[inline(always)]
            fn int(self) -> Option<i64> {
                Some(i64::from(self))
            }
        }
        impl IntCell for Option<$t> {
            #[inline(always)]
            fn int(self) -> Option<i64> {
                self.map(i64::from)
            }
        }
    )*};
}
int_cells!(u8, u16, u32, i64);

/// A u64 beyond i64 (never in practice: frame numbers, byte counts) is clamped.
impl IntCell for u64 {
    #[inline(always)]
    fn int(self) -> Option<i64> {
        Some(i64::try_from(self).unwrap_or(i64::MAX))
    }
}

impl IntCell for Option<u64> {
    #[inline(always)]
    fn int(self) -> Option<i64> {
        self.and_then(IntCell::int)
    }
}

/// A value of a boolean column.
pub trait BoolCell {
    /// The value, `None` for null.
    fn bool(self) -> Option<bool>;
}

impl BoolCell for bool {
    #[inline(always)]
    fn bool(self) -> Option<bool> {
        Some(self)
    }
}

impl BoolCell for Option<bool> {
    #[inline(always)]
    fn bool(self) -> Option<bool> {
        self
    }
}

/// A 64-bit value written as `0x` and 16 hex digits (virtual addresses, atomic operands: JSON
/// writes them as such strings for exactness).
#[derive(Debug, Clone, Copy)]
pub struct Hex(pub u64);

/// A value of a string column.
pub trait StrCell {
    /// Appends the value's UTF-8 bytes to `out`; `false` for null (nothing appended).
    fn put(self, out: &mut Vec<u8>, ips: &mut IpStrings) -> bool;
}

impl StrCell for &str {
    #[inline]
    fn put(self, out: &mut Vec<u8>, _: &mut IpStrings) -> bool {
        out.extend_from_slice(self.as_bytes());
        true
    }
}

impl StrCell for String {
    #[inline]
    fn put(self, out: &mut Vec<u8>, _: &mut IpStrings) -> bool {
        out.extend_from_slice(self.as_bytes());
        true
    }
}

impl StrCell for IpAddr {
    #[inline]
    fn put(self, out: &mut Vec<u8>, ips: &mut IpStrings) -> bool {
        out.extend_from_slice(ips.get(self));
        true
    }
}

impl StrCell for Hex {
    #[inline]
    fn put(self, out: &mut Vec<u8>, _: &mut IpStrings) -> bool {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let mut s = *b"0x0000000000000000";
        for (i, c) in s.iter_mut().skip(2).enumerate() {
            let nibble = ((self.0 >> ((15 - i) * 4)) & 0xf) as usize;
            *c = DIGITS.get(nibble).copied().unwrap_or(b'0');
        }
        out.extend_from_slice(&s);
        true
    }
}

impl<T: StrCell> StrCell for Option<T> {
    #[inline]
    fn put(self, out: &mut Vec<u8>, ips: &mut IpStrings) -> bool {
        self.is_some_and(|v| v.put(out, ips))
    }
}

/// A value of a binary column.
pub trait BytesCell {
    /// The value, `None` for null.
    fn bytes(&self) -> Option<&[u8]>;
}

impl BytesCell for &[u8] {
    #[inline(always)]
    fn bytes(&self) -> Option<&[u8]> {
        Some(self)
    }
}

impl BytesCell for Option<&[u8]> {
    #[inline(always)]
    fn bytes(&self) -> Option<&[u8]> {
        *self
    }
}

/// A list written comma-separated, built without allocating (problem codes, frame lists);
/// an empty list is null.
#[derive(Debug, Clone)]
pub struct Joined<I>(pub I);

impl<I, T> StrCell for Joined<I>
where
    I: Iterator<Item = T>,
    T: std::fmt::Display,
{
    fn put(self, out: &mut Vec<u8>, _: &mut IpStrings) -> bool {
        use std::io::Write as _;
        let start = out.len();
        for (i, v) in self.0.enumerate() {
            if i > 0 {
                out.push(b',');
            }
            // Writing into a Vec cannot fail.
            let _ = write!(out, "{v}");
        }
        out.len() > start
    }
}

/// Addresses formatted once each (a capture has few hosts and millions of frames). Keyed by
/// the address's integer, one map per family: hashing a `u32` or `u128` is one multiply or
/// two, hashing an `IpAddr` hashes its discriminant and then its bytes as a slice.
#[derive(Debug, Clone, Default)]
pub struct IpStrings {
    v4: FastHashMap<u32, String>,
    v6: FastHashMap<u128, String>,
}

impl IpStrings {
    /// Formatted addresses kept at most, per family (a scan of many hosts starts over).
    const MAX: usize = 65_536;

    /// The address as text (`10.0.0.1`, `fe80::1`).
    pub fn get(&mut self, a: IpAddr) -> &[u8] {
        match a {
            IpAddr::V4(v4) => text(&mut self.v4, u32::from(v4), || v4.to_string()),
            IpAddr::V6(v6) => text(&mut self.v6, u128::from(v6), || v6.to_string()),
        }
    }
}

/// The text of `key` in `map`, formatted by `format` the first time.
#[inline]
fn text<K: std::hash::Hash + Eq + Copy>(
    map: &mut FastHashMap<K, String>,
    key: K,
    format: impl FnOnce() -> String,
) -> &[u8] {
    if map.len() >= IpStrings::MAX && !map.contains_key(&key) {
        map.clear();
    }
    map.entry(key).or_insert_with(format).as_bytes()
}

/// The cells of the row being appended, column after column (what a table's write function
/// fills). A value of another type than its column's cannot be written: `table!` picks the
/// method from the column's type and nullability. A null costs nothing but the step to the
/// next column: the levels of a row group start at 0 (null) and a present value sets its
/// row's level to 1.
pub struct Cells<'w> {
    ints: std::slice::IterMut<'w, IntColumn>,
    bools: std::slice::IterMut<'w, BoolColumn>,
    strs: std::slice::IterMut<'w, StrColumn>,
    bins: std::slice::IterMut<'w, StrColumn>,
    ips: &'w mut IpStrings,
    row: usize,
}

/// Marks row `row` present.
#[inline(always)]
fn present(defs: &mut [i16], row: usize) {
    if let Some(d) = defs.get_mut(row) {
        *d = 1;
    }
}

impl<'w> Cells<'w> {
    pub(crate) fn new(
        ints: &'w mut [IntColumn],
        bools: &'w mut [BoolColumn],
        strs: &'w mut [StrColumn],
        bins: &'w mut [StrColumn],
        ips: &'w mut IpStrings,
        row: usize,
    ) -> Self {
        Cells {
            ints: ints.iter_mut(),
            bools: bools.iter_mut(),
            strs: strs.iter_mut(),
            bins: bins.iter_mut(),
            ips,
            row,
        }
    }

    /// The next integer column's value (a nullable column).
    #[inline(always)]
    pub fn int(&mut self, v: impl IntCell) {
        let Some(c) = self.ints.next() else { return };
        if let Some(i) = v.int() {
            c.values.push(i);
            present(&mut c.defs, self.row);
        }
    }

    /// The next integer column's value (a required column: null is written 0).
    #[inline(always)]
    pub fn int_required(&mut self, v: impl IntCell) {
        let Some(c) = self.ints.next() else { return };
        c.values.push(v.int().unwrap_or(0));
    }

    /// The next boolean column's value (a nullable column).
    #[inline(always)]
    pub fn bool(&mut self, v: impl BoolCell) {
        let Some(c) = self.bools.next() else { return };
        if let Some(x) = v.bool() {
            c.values.push(x);
            present(&mut c.defs, self.row);
        }
    }

    /// The next boolean column's value (a required column: null is written `false`).
    #[inline(always)]
    pub fn bool_required(&mut self, v: impl BoolCell) {
        let Some(c) = self.bools.next() else { return };
        c.values.push(v.bool().unwrap_or(false));
    }

    /// The next string column's value (a nullable column).
    #[inline(always)]
    pub fn str(&mut self, v: impl StrCell) {
        let Some(c) = self.strs.next() else { return };
        if v.put(&mut c.bytes, self.ips) {
            c.ends.push(c.bytes.len());
            present(&mut c.defs, self.row);
        }
    }

    /// The next string column's value (a required column: null is written as the empty
    /// string).
    #[inline(always)]
    pub fn str_required(&mut self, v: impl StrCell) {
        let Some(c) = self.strs.next() else { return };
        v.put(&mut c.bytes, self.ips);
        c.ends.push(c.bytes.len());
    }

    /// The next binary column's value (a nullable column).
    #[inline(always)]
    pub fn bytes(&mut self, v: impl BytesCell) {
        let Some(c) = self.bins.next() else { return };
        if let Some(b) = v.bytes() {
            c.bytes.extend_from_slice(b);
            c.ends.push(c.bytes.len());
            present(&mut c.defs, self.row);
        }
    }

    /// The next binary column's value (a required column: null is written as no bytes).
    #[inline(always)]
    pub fn bytes_required(&mut self, v: impl BytesCell) {
        let Some(c) = self.bins.next() else { return };
        c.bytes.extend_from_slice(v.bytes().unwrap_or_default());
        c.ends.push(c.bytes.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(v: impl StrCell) -> Option<String> {
        let mut out = Vec::new();
        v.put(&mut out, &mut IpStrings::default()).then(|| String::from_utf8(out).unwrap())
    }

    #[test]
    fn string_cells_write_their_text_or_null() {
        assert_eq!(cell(Hex(0x1234_abcd)), Some("0x000000001234abcd".into()));
        assert_eq!(cell(Hex(u64::MAX)), Some("0xffffffffffffffff".into()));
        assert_eq!(cell(Hex(0)), Some("0x0000000000000000".into()));
        assert_eq!(cell(Joined([3u64, 5, 8].iter())), Some("3,5,8".into()));
        assert_eq!(cell(Joined(std::iter::empty::<u64>())), None);
        assert_eq!(cell(None::<&'static str>), None);
        let ip: IpAddr = "fe80::1".parse().unwrap();
        assert_eq!(cell(Some(ip)), Some("fe80::1".into()));
        // The families are apart: 10.0.0.1 and ::10.0.0.1 (the same integer) are two texts.
        let mut ips = IpStrings::default();
        let v4: IpAddr = "10.0.0.1".parse().unwrap();
        let v6: IpAddr = "::a00:1".parse().unwrap();
        assert_eq!(ips.get(v4), b"10.0.0.1");
        assert_eq!(ips.get(v6), v6.to_string().as_bytes());
        assert_ne!(v6.to_string(), "10.0.0.1");
        assert_eq!(ips.get(v4), b"10.0.0.1");
        assert_eq!(1u32.int(), Some(1));
        assert_eq!(u64::MAX.int(), Some(i64::MAX));
        assert_eq!(None::<u16>.int(), None);
    }
}
