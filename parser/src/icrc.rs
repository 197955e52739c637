//! ICRC: the invariant CRC over the fields no router changes (SPEC.md "ICRC").
//!
//! The recipe: CRC-32 (zlib) over eight 0xFF bytes (the LRH RoCE lacks), the IP header (or
//! RoCEv1 GRH) with its mutable fields set to ones, the UDP header with its checksum set to
//! ones (RoCEv2), the BTH with byte 4 (FECN/BECN/resv6) set to ones, then everything up to
//! the ICRC. Only the small masked prefix is copied (into a stack buffer); the payload is
//! streamed straight from the frame into the CRC.

use crate::bytes::set_u8;

/// The outcome of checking a packet's ICRC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub enum IcrcStatus {
    /// The stored ICRC equals the recomputed one.
    Ok,
    /// The stored ICRC differs; `computed` is what it should be.
    Bad { computed: u32 },
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
    /// The RoCEv1 GRH (masked like IPv6); no UDP header follows.
    Grh(&'a [u8]),
}

/// Computes the ICRC of a packet.
///
/// `udp` is the UDP header (ignored for RoCEv1); `transport` runs from the first BTH byte up
/// to, not including, the ICRC.
pub fn compute(net: IcrcNetwork<'_>, udp: &[u8], transport: &[u8]) -> u32 {
    let mut buf = [0xffu8; PREFIX_MAX];
    let mut n = LRH_ONES;
    let (ip, udp) = match net {
        IcrcNetwork::Ipv4(h) => (h, udp),
        IcrcNetwork::Ipv6(h) => (h, udp),
        IcrcNetwork::Grh(h) => (h, &[][..]),
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
    h.update(transport.get(bth_len..).unwrap_or(&[]));
    h.finalize()
}

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

    #[test]
    fn streaming_matches_reference_on_ipv4_with_options() {
        let mut ip = [0x46u8; 24];
        ip[0] = 0x46;
        let udp = [0xc0, 0x00, 0x12, 0xb7, 0x00, 0x30, 0x12, 0x34];
        let transport: std::vec::Vec<u8> = (0u8..200).collect();
        assert_eq!(
            compute(IcrcNetwork::Ipv4(&ip), &udp, &transport),
            reference(&ip, false, &udp, &transport)
        );
    }
}
