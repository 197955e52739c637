//! ICRC: the invariant CRC over the fields no router changes (docs/wire.md "ICRC").
//!
//! The recipe: CRC-32 (zlib) over eight 0xFF bytes (the LRH RoCE lacks), the IP header (or
//! RoCEv1 GRH) with its mutable fields set to ones, the UDP header with its checksum set to
//! ones (RoCEv2), the BTH with byte 4 (FECN/BECN/resv6) set to ones, then everything up to
//! the ICRC.
//!
//! Native InfiniBand has the real LRH in the ones' place, with its VL set to ones
//! ([`IcrcNetwork::Lrh`]); behind a GRH (a routed packet) the LRH counts as ones, as in
//! RoCEv1. Its packets end with a second CRC, the VCRC ([`compute_vcrc`]), over everything
//! as sent on the last link.
//!
//! Two ways to compute the ICRC, both without copying the payload:
//! - [`compute_icrc_span`], the parser's: one crc32fast pass straight over the frame, from the IP
//!   header (or GRH) to the ICRC, unmasked. CRC-32 is linear, so setting a byte at offset
//!   `k` to ones changes the result exactly as XORing a 32-bit value, determined by `k` and
//!   the byte's change, into the CRC's starting register does; those values come from one
//!   table per masked offset (11 of 1 KiB, built at compile time, indexed by the byte as it
//!   is: one load each), and the eight leading ones are folded into the starting register
//!   too. One pass matters: crc32fast costs about 20 ns per call on short input before its
//!   SIMD folding pays off, and a separate pass over the masked prefix kept the ICRC at 0.6x
//!   of raw crc32fast over the same bytes (BENCHMARKS.md).
//! - [`compute_icrc`], for headers that are not back to back in memory (and IPv4 headers with
//!   options): the masked prefix is copied into a stack buffer and CRC'd, then the rest is
//!   streamed from the frame.

use crate::bytes::set_u8;

/// The outcome of checking a packet's ICRC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub enum IcrcStatus {
    /// The stored ICRC equals the recomputed one.
    Ok,
    /// The stored ICRC differs; `computed` is what it should be.
    Bad {
        /// The ICRC the packet should carry.
        computed: u32,
    },
    /// The frame is shorter than its lengths say (snap length, damage): nothing to verify.
    Unverifiable,
    /// Not verified: disabled by the caller, or no IP header to cover (UDP-payload entry).
    NotChecked,
}

impl IcrcStatus {
    /// "ok", "bad", "unverifiable", "not_checked".
    pub const fn as_str(self) -> &'static str {
        match self {
            IcrcStatus::Ok => "ok",
            IcrcStatus::Bad { .. } => "bad",
            IcrcStatus::Unverifiable => "unverifiable",
            IcrcStatus::NotChecked => "not_checked",
        }
    }
}

/// Length of the masked LRH placeholder.
const LRH_ONES: usize = 8;
/// 8 (LRH) + 60 (largest IPv4 header) + 8 (UDP) + 12 (BTH).
const PREFIX_MAX: usize = LRH_ONES + 60 + 8 + 12;
/// The BTH byte holding FECN, BECN and resv6.
const BTH_MASKED_BYTE: usize = 4;

/// The network header an ICRC covers, with the offsets of its mutable fields.
#[derive(Debug, Clone, Copy)]
pub enum IcrcNetwork<'a> {
    /// The whole IPv4 header, options included (TOS, TTL and checksum are masked).
    Ipv4(&'a [u8]),
    /// The 40-byte fixed IPv6 header (traffic class, flow label, hop limit are masked).
    Ipv6(&'a [u8]),
    /// The RoCEv1 GRH, or the GRH of a routed native InfiniBand packet (masked like IPv6;
    /// the LRH before it counts as eight 0xFF bytes, as RoCE's missing one); no UDP header.
    Grh(&'a [u8]),
    /// The 8-byte LRH of a native InfiniBand packet without a GRH: covered as it is, its VL
    /// set to ones (switches rewrite it), then the BTH.
    Lrh(&'a [u8]),
}

impl<'a> IcrcNetwork<'a> {
    /// The header's bytes.
    pub fn header(self) -> &'a [u8] {
        match self {
            IcrcNetwork::Ipv4(h)
            | IcrcNetwork::Ipv6(h)
            | IcrcNetwork::Grh(h)
            | IcrcNetwork::Lrh(h) => h,
        }
    }
}

/// Computes the ICRC of a packet.
///
/// `udp` is the UDP header (ignored for RoCEv1); `transport` runs from the first BTH byte up
/// to, not including, the ICRC.
pub fn compute_icrc(net: IcrcNetwork<'_>, udp: &[u8], transport: &[u8]) -> u32 {
    let bth_len = transport.len().min(12);
    compute_segments(net, udp, transport, |h| h.update(transport.get(bth_len..).unwrap_or(&[])))
}

/// [`compute_icrc`] with the transport after the BTH fed by `rest` (piece by piece, for a frame
/// in segments): `transport` holds at least the BTH's 12 bytes (only those are read).
pub(crate) fn compute_segments(
    net: IcrcNetwork<'_>,
    udp: &[u8],
    transport: &[u8],
    rest: impl FnOnce(&mut crc32fast::Hasher),
) -> u32 {
    let mut buf = [0xffu8; PREFIX_MAX];
    let mut n = LRH_ONES;
    let (ip, udp) = match net {
        IcrcNetwork::Ipv4(h) => (h, udp),
        IcrcNetwork::Ipv6(h) => (h, udp),
        IcrcNetwork::Grh(h) => (h, &[][..]),
        IcrcNetwork::Lrh(lrh) => {
            // The real LRH in the ones' place, its VL (the high nibble of byte 0) masked.
            append(&mut buf, 0, lrh.get(..LRH_ONES).unwrap_or(lrh));
            if let Some(b) = buf.first_mut() {
                *b |= 0xf0;
            }
            (&[][..], &[][..])
        }
    };
    n = append(&mut buf, n, ip);
    let ip_start = LRH_ONES;
    match net {
        IcrcNetwork::Ipv4(_) => {
            // TOS (1), TTL (8), header checksum (10..12).
            for at in [1, 8, 10, 11] {
                set_u8(&mut buf, ip_start + at, 0xff);
            }
        }
        IcrcNetwork::Lrh(_) => {}
        IcrcNetwork::Ipv6(_) | IcrcNetwork::Grh(_) => {
            // Traffic class and flow label: the low nibble of byte 0 through byte 3; hop limit.
            if let Some(b) = buf.get_mut(ip_start) {
                *b |= 0x0f;
            }
            for at in [1, 2, 3, 7] {
                set_u8(&mut buf, ip_start + at, 0xff);
            }
        }
    }
    let udp_start = n;
    n = append(&mut buf, n, udp);
    if !udp.is_empty() {
        // UDP checksum.
        set_u8(&mut buf, udp_start + 6, 0xff);
        set_u8(&mut buf, udp_start + 7, 0xff);
    }
    let bth_len = transport.len().min(12);
    let bth_start = n;
    n = append(&mut buf, n, transport.get(..bth_len).unwrap_or(&[]));
    if bth_len > BTH_MASKED_BYTE {
        set_u8(&mut buf, bth_start + BTH_MASKED_BYTE, 0xff);
    }
    let mut h = crc32fast::Hasher::new();
    h.update(buf.get(..n).unwrap_or(&[]));
    rest(&mut h);
    h.finalize()
}

/// The ICRC of a packet from its bytes as they lie in the frame: `span` runs from the first
/// byte of the network header (`net`, which must be the start of `span`) through the UDP
/// header (RoCEv2) and the transport, up to, not including, the ICRC. One crc32fast pass over
/// `span`, no copy; equal to [`compute_icrc`] over the same headers.
///
/// `#[inline]` as `crc32fast::hash` is: a caller outside this crate otherwise pays a call
/// and a copy of `net` per frame (measured: 0.76x of crc32fast's throughput without, 0.95x with).
#[inline]
pub fn compute_icrc_span(net: IcrcNetwork<'_>, span: &[u8]) -> u32 {
    let Some(delta) = span_delta(net, span) else {
        return compute_split(net, span);
    };
    // crc32fast keeps the register inverted.
    let mut h = crc32fast::Hasher::new_with_initial(!(AFTER_ONES ^ delta));
    h.update(span);
    h.finalize()
}

/// The VCRC of native InfiniBand (IBTA Vol. 1 §7.8.2): CRC-16 with polynomial 0x100B,
/// reflected, starting from and finally XORed with 0xFFFF, over the packet as sent on the
/// link, LRH through ICRC. Stored little-endian after the ICRC (measured on the real ibdump
/// captures: 170 of 170 packets match).
pub const VCRC: crc::Algorithm<u16> = crc::Algorithm {
    width: 16,
    poly: 0x100b,
    init: 0xffff,
    refin: true,
    refout: true,
    xorout: 0xffff,
    check: 0x0a3d,
    residue: 0x556f,
};

/// The table-driven engine of [`VCRC`], built at compile time.
static VCRC_ENGINE: crc::Crc<u16, crc::Table<16>> = crc::Crc::<u16, crc::Table<16>>::new(&VCRC);

/// The VCRC of `packet`: the bytes of a native InfiniBand packet from the LRH through the
/// ICRC.
pub fn compute_vcrc(packet: &[u8]) -> u16 {
    VCRC_ENGINE.checksum(packet)
}

/// [`compute_icrc_span`] for a span in segments: `head` is its contiguous start (at least its
/// network, UDP and BTH headers); `feed(h, k)` feeds the span's bytes from offset `k` to its end.
pub(crate) fn compute_span_segments(
    net: IcrcNetwork<'_>,
    head: &[u8],
    feed: impl FnOnce(&mut crc32fast::Hasher, usize),
) -> u32 {
    let Some(delta) = span_delta(net, head) else {
        // IPv4 options: the masked prefix from the head, then the span after the BTH.
        let (net_len, udp_len) = split_lens(net);
        let (_, rest) = head.split_at_checked(net_len).unwrap_or((head, &[]));
        let (udp, transport) = rest.split_at_checked(udp_len).unwrap_or((rest, &[]));
        return compute_segments(net, udp, transport, |h| feed(h, net_len + udp_len + 12));
    };
    let mut h = crc32fast::Hasher::new_with_initial(!(AFTER_ONES ^ delta));
    feed(&mut h, 0);
    h.finalize()
}

/// Lengths of the network and UDP headers at the start of a span.
fn split_lens(net: IcrcNetwork<'_>) -> (usize, usize) {
    let udp = match net {
        IcrcNetwork::Ipv4(_) | IcrcNetwork::Ipv6(_) => 8,
        IcrcNetwork::Grh(_) | IcrcNetwork::Lrh(_) => 0,
    };
    (net.header().len(), udp)
}

/// The starting-register change that masks the span's mutable bytes, when its layout is one
/// of the one-pass ones.
#[inline]
fn span_delta(net: IcrcNetwork<'_>, span: &[u8]) -> Option<u32> {
    // The XORs are grouped as a shallow tree: the CRC cannot start before them.
    match net {
        IcrcNetwork::Ipv4(h) if h.len() == 20 => span.first_chunk::<33>().map(|b| {
            // TOS (1), TTL (8), header checksum (10, 11); UDP checksum (26, 27); BTH byte 4 (32).
            let [_, tos, _, _, _, _, _, _, ttl, _, c0, c1, ..] = *b;
            let [.., u0, u1, _, _, _, _, b4] = *b;
            ((u32::from(!tos) << 8) ^ at(&SHIFT_8, ttl))
                ^ (at(&SHIFT_10, c0) ^ at(&SHIFT_11, c1))
                ^ ((at(&SHIFT_26, u0) ^ at(&SHIFT_27, u1)) ^ at(&SHIFT_32, b4))
        }),
        IcrcNetwork::Ipv6(h) if h.len() == 40 => span.first_chunk::<53>().map(|b| {
            // Traffic class and flow label (low nibble of 0, 1..4), hop limit (7); UDP checksum
            // (46, 47); BTH byte 4 (52).
            let [v, t1, t2, t3, _, _, _, hop, ..] = *b;
            let [.., u0, u1, _, _, _, _, b4] = *b;
            ((!u32::from_le_bytes([v, t1, t2, t3]) & 0xffff_ff0f) ^ at(&SHIFT_7, hop))
                ^ ((at(&SHIFT_46, u0) ^ at(&SHIFT_47, u1)) ^ at(&SHIFT_52, b4))
        }),
        IcrcNetwork::Grh(h) if h.len() == 40 => span.first_chunk::<45>().map(|b| {
            // As IPv6; no UDP header, BTH byte 4 at 44.
            let [v, t1, t2, t3, _, _, _, hop, ..] = *b;
            let [.., b4] = *b;
            (!u32::from_le_bytes([v, t1, t2, t3]) & 0xffff_ff0f)
                ^ (at(&SHIFT_7, hop) ^ at(&SHIFT_44, b4))
        }),
        _ => None,
    }
}

/// [`compute_icrc_span`] without the one-pass start (IPv4 options, or a span too short for its
/// headers): the masked prefix, then the rest of `span`.
fn compute_split(net: IcrcNetwork<'_>, span: &[u8]) -> u32 {
    let (net_len, udp_len) = split_lens(net);
    let (_, rest) = span.split_at_checked(net_len).unwrap_or((span, &[]));
    let (udp, transport) = rest.split_at_checked(udp_len).unwrap_or((rest, &[]));
    compute_icrc(net, udp, transport)
}

/// The starting-register change for the byte at the table's offset, from the byte's value.
#[inline(always)]
fn at(table: &Shift, orig: u8) -> u32 {
    table.get(usize::from(orig)).copied().unwrap_or(0)
}

/// The tables of `compute_icrc_span`, built at compile time: every index below is evaluated by the
/// compiler (consts and statics), where one out of range fails the build instead of panicking
/// at run time.
#[allow(clippy::indexing_slicing)]
mod tables {
    use super::LRH_ONES;

    /// The reflected CRC-32 polynomial (zlib).
    const POLY: u32 = 0xedb8_8320;

    /// The byte-at-a-time CRC-32 table.
    const TABLE: [u32; 256] = {
        let mut t = [0u32; 256];
        let mut i = 0;
        while i < 256 {
            let mut c = i as u32;
            let mut k = 0;
            while k < 8 {
                c = if c & 1 != 0 { (c >> 1) ^ POLY } else { c >> 1 };
                k += 1;
            }
            t[i] = c;
            i += 1;
        }
        t
    };

    /// Which table entry has a given top byte: the top bytes of the table are all different,
    /// which is what makes one CRC step invertible.
    const TOP_BYTE: [u8; 256] = {
        let mut inv = [0u8; 256];
        let mut seen = [false; 256];
        let mut i = 0;
        while i < 256 {
            let top = (TABLE[i] >> 24) as usize;
            assert!(!seen[top], "CRC-32 table top bytes collide");
            seen[top] = true;
            inv[top] = i as u8;
            i += 1;
        }
        inv
    };

    /// One CRC step over a zero byte: the register after it.
    const fn step(r: u32) -> u32 {
        (r >> 8) ^ TABLE[(r & 0xff) as usize]
    }

    /// The inverse of `step`.
    const fn unstep(r: u32) -> u32 {
        let i = TOP_BYTE[(r >> 24) as usize];
        ((r ^ TABLE[i as usize]) << 8) | i as u32
    }

    /// The CRC register after the eight leading 0xFF bytes, from zlib's initial register.
    pub(super) const AFTER_ONES: u32 = {
        let mut r = 0xffff_ffff;
        let mut k = 0;
        while k < LRH_ONES {
            r = step(r ^ 0xff);
            k += 1;
        }
        r
    };

    /// `SHIFT_K[b]`: the change of the starting register equal to setting the data byte at
    /// offset `k`, whose value is `b`, to 0xff (a change by `!b`). A byte enters the register
    /// by XOR after `k` steps, so this is `!b` taken `k` steps back (`unstep` applied `k`
    /// times). Indexed by the byte as it is, a lookup is one load.
    pub(super) type Shift = [u32; 256];

    const fn shift_table(k: usize) -> Shift {
        let mut t = [0u32; 256];
        let mut b = 0;
        while b < 256 {
            let mut r = !(b as u32) & 0xff;
            let mut n = 0;
            while n < k {
                r = unstep(r);
                n += 1;
            }
            t[b] = r;
            b += 1;
        }
        t
    }

    pub(super) static SHIFT_7: Shift = shift_table(7);
    pub(super) static SHIFT_8: Shift = shift_table(8);
    pub(super) static SHIFT_10: Shift = shift_table(10);
    pub(super) static SHIFT_11: Shift = shift_table(11);
    pub(super) static SHIFT_26: Shift = shift_table(26);
    pub(super) static SHIFT_27: Shift = shift_table(27);
    pub(super) static SHIFT_32: Shift = shift_table(32);
    pub(super) static SHIFT_44: Shift = shift_table(44);
    pub(super) static SHIFT_46: Shift = shift_table(46);
    pub(super) static SHIFT_47: Shift = shift_table(47);
    pub(super) static SHIFT_52: Shift = shift_table(52);
}
use tables::*;

/// Copies `src` into `buf` at `n`, returning the new end (drops what would not fit, which
/// no valid header reaches).
fn append(buf: &mut [u8], n: usize, src: &[u8]) -> usize {
    match buf.get_mut(n..n + src.len()) {
        Some(dst) => {
            dst.copy_from_slice(src);
            n + src.len()
        }
        None => n,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The recipe done the slow way: copy, mask, and CRC the whole buffer.
    fn reference(net: &[u8], v6: bool, udp: &[u8], transport: &[u8]) -> u32 {
        let mut v = std::vec![0xffu8; 8];
        let mut ip = net.to_vec();
        if v6 {
            ip[0] |= 0x0f;
            ip[1] = 0xff;
            ip[2] = 0xff;
            ip[3] = 0xff;
            ip[7] = 0xff;
        } else {
            ip[1] = 0xff;
            ip[8] = 0xff;
            ip[10] = 0xff;
            ip[11] = 0xff;
        }
        v.extend_from_slice(&ip);
        let mut u = udp.to_vec();
        if !u.is_empty() {
            u[6] = 0xff;
            u[7] = 0xff;
        }
        v.extend_from_slice(&u);
        let mut t = transport.to_vec();
        t[4] = 0xff;
        v.extend_from_slice(&t);
        crc32fast::hash(&v)
    }

    /// A span cut into its network header (IPv4 for 20 or 24 bytes, IPv6 for 40 with UDP, GRH
    /// for 40 without), UDP header and transport.
    fn split(span: &[u8], net_len: usize, udp_len: usize) -> (IcrcNetwork<'_>, &[u8], &[u8]) {
        let (h, rest) = span.split_at(net_len);
        let (udp, transport) = rest.split_at(udp_len);
        let net = match (net_len, udp_len) {
            (40, 0) => IcrcNetwork::Grh(h),
            (40, _) => IcrcNetwork::Ipv6(h),
            _ => IcrcNetwork::Ipv4(h),
        };
        (net, udp, transport)
    }

    /// The one-pass ICRC over the frame equals the masked-prefix one, for every layout, every
    /// masked byte value and transports from empty to past crc32fast's SIMD threshold.
    #[test]
    fn one_pass_equals_masked_prefix() {
        let mut seed = 0x1234_5678u32;
        let mut byte = || {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12345);
            (seed >> 16) as u8
        };
        for round in 0..600 {
            let span: std::vec::Vec<u8> = (0..400).map(|_| byte()).collect();
            let tlen = round % 300;
            for (net_len, udp_len) in [(20, 8), (24, 8), (40, 8), (40, 0)] {
                let span = &span[..net_len + udp_len + tlen];
                let (net, udp, transport) = split(span, net_len, udp_len);
                assert_eq!(
                    compute_icrc_span(net, span),
                    compute_icrc(net, udp, transport),
                    "net {net_len} udp {udp_len} transport {tlen}"
                );
                if net_len == 20 && tlen >= 12 {
                    let h = net.header();
                    assert_eq!(compute_icrc_span(net, span), reference(h, false, udp, transport));
                }
            }
        }
    }

    /// Every value of every masked byte, for each layout, short spans (crc32fast's fold-by-1)
    /// and long ones (fold-by-4): the one-pass ICRC equals the masked copy.
    #[test]
    fn every_masked_byte_value_gives_the_masked_copy_result() {
        let layouts: [(usize, usize, &[usize]); 3] = [
            (20, 8, &[1, 8, 10, 11, 26, 27, 32]),
            (40, 8, &[0, 1, 2, 3, 7, 46, 47, 52]),
            (40, 0, &[0, 1, 2, 3, 7, 44]),
        ];
        for (net_len, udp_len, masked) in layouts {
            for tlen in [12, 200] {
                let mut span: std::vec::Vec<u8> =
                    (0..net_len + udp_len + tlen).map(|i| (i * 7 + 3) as u8).collect();
                for &at in masked {
                    for v in 0..=255u8 {
                        span[at] = v;
                        let (net, udp, transport) = split(&span, net_len, udp_len);
                        assert_eq!(
                            compute_icrc_span(net, &span),
                            compute_icrc(net, udp, transport),
                            "net {net_len} udp {udp_len} byte {at} = {v:#04x}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn streaming_matches_reference_on_ipv4_with_options() {
        let mut ip = [0x46u8; 24];
        ip[0] = 0x46;
        let udp = [0xc0, 0x00, 0x12, 0xb7, 0x00, 0x30, 0x12, 0x34];
        let transport: std::vec::Vec<u8> = (0u8..200).collect();
        assert_eq!(
            compute_icrc(IcrcNetwork::Ipv4(&ip), &udp, &transport),
            reference(&ip, false, &udp, &transport)
        );
    }
}
