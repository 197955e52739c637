//! PSN arithmetic modulo 2^24 (SPEC.md): a is before b when (b - a) mod 2^24 is in 1..2^23.

pub const PSN_MASK: u32 = 0x00ff_ffff;
const HALF: u32 = 0x0080_0000;

/// `a + n` modulo 2^24.
#[inline]
pub fn add(a: u32, n: u32) -> u32 {
    a.wrapping_add(n) & PSN_MASK
}

/// `b - a` as a signed distance in -2^23..2^23.
#[inline]
pub fn diff(b: u32, a: u32) -> i32 {
    let d = b.wrapping_sub(a) & PSN_MASK;
    if d >= HALF {
        d as i32 - (1 << 24)
    } else {
        d as i32
    }
}

/// Is `a` strictly before `b`?
#[inline]
pub fn before(a: u32, b: u32) -> bool {
    diff(b, a) > 0
}

/// Is `x` within `lo..=hi` (modulo 2^24, `lo` not after `hi`)?
#[inline]
pub fn within(x: u32, lo: u32, hi: u32) -> bool {
    diff(x, lo) >= 0 && diff(hi, x) >= 0
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
        assert_eq!(add(0xff_ffff, 1), 0);
        assert_eq!(diff(0, 0xff_ffff), 1);
        assert_eq!(diff(0xff_ffff, 0), -1);
        assert!(before(0xff_fffe, 3));
        assert!(!before(3, 0xff_fffe));
        assert!(within(1, 0xff_fff0, 5));
        assert!(!within(6, 0xff_fff0, 5));
        assert_eq!(read_psns(0, 1024), 1);
        assert_eq!(read_psns(3000, 1024), 3);
        assert_eq!(read_psns(2048, 1024), 2);
    }
}
