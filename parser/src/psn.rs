//! Packet sequence numbers: 24 bits that wrap (the BTH's PSN field). A PSN is *before* another when the forward
//! distance from it, modulo 2^24, is in 1..2^23 (IBTA 9.7.1; the same half-window rule TCP
//! uses for its sequence numbers). Comparing PSNs as plain integers is wrong at the wrap,
//! and a capture of a long-lived QP always reaches it, so every PSN the project compares is a
//! [`Psn`], whose `<`, `+` and `-` are modular (smoltcp's `TcpSeqNumber` is the model).

use core::cmp::Ordering;
use core::fmt;
use core::ops::{Add, Sub};

/// The PSN field's mask.
pub const PSN_MASK: u32 = 0x00ff_ffff;
const HALF: u32 = 0x0080_0000;

/// A 24-bit packet sequence number with modular order and arithmetic.
///
/// ```
/// use roce_parser::Psn;
/// let last = Psn::new(0xff_ffff);
/// assert_eq!(last + 1, Psn::new(0));
/// assert!(last < Psn::new(2)); // 0xffffff comes just before 0, 1, 2
/// assert_eq!(Psn::new(2) - last, 3);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Psn(u32);

impl Psn {
    /// The PSN of a 24-bit field (higher bits are dropped).
    #[inline]
    pub const fn new(v: u32) -> Self {
        Psn(v & PSN_MASK)
    }

    /// The 24-bit value.
    #[inline]
    pub const fn value(self) -> u32 {
        self.0
    }

    /// The PSN `n` before this one.
    #[inline]
    pub const fn back(self, n: u32) -> Self {
        Psn(self.0.wrapping_sub(n) & PSN_MASK)
    }

    /// Is `self` within `lo..=hi` (modulo 2^24, `lo` not after `hi`)?
    #[inline]
    pub fn within(self, lo: Psn, hi: Psn) -> bool {
        self - lo >= 0 && hi - self >= 0
    }
}

impl Add<u32> for Psn {
    type Output = Psn;
    #[inline]
    fn add(self, n: u32) -> Psn {
        Psn::new(self.0.wrapping_add(n))
    }
}

impl Sub for Psn {
    /// The signed distance `self - other` in -2^23..2^23.
    type Output = i32;
    #[inline]
    fn sub(self, other: Psn) -> i32 {
        let d = self.0.wrapping_sub(other.0) & PSN_MASK;
        if d >= HALF {
            d as i32 - (1 << 24)
        } else {
            d as i32
        }
    }
}

impl PartialOrd for Psn {
    /// Modular order: `a < b` when `b` is 1..2^23 ahead of `a`. PSNs exactly 2^23 apart
    /// are not comparable.
    fn partial_cmp(&self, other: &Psn) -> Option<Ordering> {
        let d = self.0.wrapping_sub(other.0) & PSN_MASK;
        match d {
            0 => Some(Ordering::Equal),
            HALF => None,
            d if d < HALF => Some(Ordering::Greater),
            _ => Some(Ordering::Less),
        }
    }
}

impl fmt::Display for Psn {
    /// As engineers read PSNs in reports: decimal and hex.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (0x{:06x})", self.0, self.0)
    }
}

/// PSNs a READ of `len` bytes consumes: max(1, ceil(len / pmtu)).
#[inline]
pub fn read_psns(len: u32, pmtu: u32) -> u32 {
    if pmtu == 0 {
        return 1;
    }
    len.div_ceil(pmtu).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_at_2_pow_24() {
        let top = Psn::new(0xff_ffff);
        assert_eq!(top + 1, Psn::new(0));
        assert_eq!(Psn::new(0) - top, 1);
        assert_eq!(top - Psn::new(0), -1);
        assert!(Psn::new(0xff_fffe) < Psn::new(3));
        assert!(Psn::new(3) > Psn::new(0xff_fffe));
        assert!(Psn::new(1).within(Psn::new(0xff_fff0), Psn::new(5)));
        assert!(!Psn::new(6).within(Psn::new(0xff_fff0), Psn::new(5)));
        assert_eq!(Psn::new(0).back(1), top);
        assert_eq!(Psn::new(0x1ff_ffff), top);
        assert_eq!(Psn::new(0).partial_cmp(&Psn::new(HALF)), None);
        assert_eq!(read_psns(0, 1024), 1);
        assert_eq!(read_psns(3000, 1024), 3);
        assert_eq!(read_psns(2048, 1024), 2);
    }
}
