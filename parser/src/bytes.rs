//! Panic-free big-endian field access. Views check their length once in `new_checked`; these
//! helpers still never index out of bounds (a short buffer reads as zero, a short write is
//! dropped), so no input can make the parser panic.

use core::ops::Range;

#[inline]
pub(crate) fn u8_at(b: &[u8], at: usize) -> u8 {
    b.get(at).copied().unwrap_or(0)
}

#[inline]
pub(crate) fn be_u16(b: &[u8], r: Range<usize>) -> u16 {
    match b.get(r).and_then(|s| <[u8; 2]>::try_from(s).ok()) {
        Some(a) => u16::from_be_bytes(a),
        None => 0,
    }
}

/// A 24-bit field (DestQP, PSN, MSN, QPNs in CM messages).
#[inline]
pub(crate) fn be_u24(b: &[u8], r: Range<usize>) -> u32 {
    match b.get(r).and_then(|s| <[u8; 3]>::try_from(s).ok()) {
        Some([x, y, z]) => u32::from_be_bytes([0, x, y, z]),
        None => 0,
    }
}

#[inline]
pub(crate) fn be_u32(b: &[u8], r: Range<usize>) -> u32 {
    match b.get(r).and_then(|s| <[u8; 4]>::try_from(s).ok()) {
        Some(a) => u32::from_be_bytes(a),
        None => 0,
    }
}

#[inline]
pub(crate) fn be_u64(b: &[u8], r: Range<usize>) -> u64 {
    match b.get(r).and_then(|s| <[u8; 8]>::try_from(s).ok()) {
        Some(a) => u64::from_be_bytes(a),
        None => 0,
    }
}

#[inline]
pub(crate) fn set_u8(b: &mut [u8], at: usize, v: u8) {
    if let Some(d) = b.get_mut(at) {
        *d = v;
    }
}

#[inline]
pub(crate) fn set_bytes(b: &mut [u8], r: Range<usize>, v: &[u8]) {
    if let Some(d) = b.get_mut(r) {
        if d.len() == v.len() {
            d.copy_from_slice(v);
        }
    }
}

#[inline]
pub(crate) fn set_be_u16(b: &mut [u8], r: Range<usize>, v: u16) {
    set_bytes(b, r, &v.to_be_bytes());
}

/// Writes the low 24 bits of `v`.
#[inline]
pub(crate) fn set_be_u24(b: &mut [u8], r: Range<usize>, v: u32) {
    let [_, x, y, z] = v.to_be_bytes();
    set_bytes(b, r, &[x, y, z]);
}

#[inline]
pub(crate) fn set_be_u32(b: &mut [u8], r: Range<usize>, v: u32) {
    set_bytes(b, r, &v.to_be_bytes());
}

#[inline]
pub(crate) fn set_be_u64(b: &mut [u8], r: Range<usize>, v: u64) {
    set_bytes(b, r, &v.to_be_bytes());
}

/// Declares a zero-copy header view in the smoltcp style: a wrapper over any byte buffer,
/// `new_checked` verifying the length once, `new_unchecked`, and `into_inner`.
macro_rules! header_view {
    ($(#[$meta:meta])* $name:ident, $layer:expr, $len:expr) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub struct $name<T: AsRef<[u8]>> {
            buffer: T,
        }

        impl<T: AsRef<[u8]>> $name<T> {
            /// Length of the header on the wire, in bytes.
            pub const LEN: usize = $len;

            /// Wraps a buffer without checking its length: getters of a short buffer read
            /// zeros (never panic).
            pub const fn new_unchecked(buffer: T) -> Self {
                Self { buffer }
            }

            /// Wraps a buffer after checking it holds the whole header.
            pub fn new_checked(buffer: T) -> $crate::error::Result<Self> {
                let available = buffer.as_ref().len();
                if available < $len {
                    return Err($crate::error::Error::truncated($layer, 0, $len, available));
                }
                Ok(Self { buffer })
            }

            /// The wrapped buffer.
            pub fn into_inner(self) -> T {
                self.buffer
            }

            /// The header's bytes (the first `LEN` bytes of the buffer, or fewer if short).
            pub fn header_bytes(&self) -> &[u8] {
                let b = self.buffer.as_ref();
                b.get(..$len).unwrap_or(b)
            }
        }
    };
}
pub(crate) use header_view;
