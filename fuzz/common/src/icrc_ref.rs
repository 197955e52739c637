//! An independent ICRC: a bytewise, table-driven CRC-32 written here (not crc32fast, which the
//! parser uses), and the docs/wire.md recipe done the plain way: copy the covered bytes, mask,
//! CRC the whole buffer.

/// The reflected CRC-32 polynomial (zlib, IEEE 802.3).
const POLY: u32 = 0xEDB8_8320;

/// One entry per byte value, computed at compile time.
const TABLE: [u32; 256] = {
    let mut t = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 { POLY ^ (c >> 1) } else { c >> 1 };
            k += 1;
        }
        t[i] = c;
        i += 1;
    }
    t
};

/// CRC-32 as zlib computes it (initial 0xFFFFFFFF, reflected, final complement), one byte
/// at a time.
pub fn crc32(bytes: &[u8]) -> u32 {
    let mut c = 0xFFFF_FFFFu32;
    for &b in bytes {
        c = TABLE[((c ^ u32::from(b)) & 0xFF) as usize] ^ (c >> 8);
    }
    !c
}

/// The network header an ICRC covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Net {
    Ipv4,
    /// IPv6 and the RoCEv1 GRH (masked alike).
    Ipv6,
}

/// The ICRC of a packet by docs/wire.md: eight 0xFF bytes, the network header with TOS/TTL/
/// checksum (IPv4) or traffic class/flow label/hop limit (IPv6, GRH) set to ones, the UDP
/// header (empty for RoCEv1) with its checksum set to ones, the transport bytes (BTH up to,
/// not including, the ICRC) with BTH byte 4 set to ones.
pub fn icrc(net: Net, ip: &[u8], udp: &[u8], transport: &[u8]) -> u32 {
    let mut v = vec![0xFFu8; 8];
    let mut ip = ip.to_vec();
    let ones: &[usize] = match net {
        Net::Ipv4 => &[1, 8, 10, 11],
        Net::Ipv6 => &[1, 2, 3, 7],
    };
    for &at in ones {
        if let Some(b) = ip.get_mut(at) {
            *b = 0xFF;
        }
    }
    if net == Net::Ipv6 {
        if let Some(b) = ip.first_mut() {
            *b |= 0x0F;
        }
    }
    v.extend_from_slice(&ip);
    let mut udp = udp.to_vec();
    for at in [6, 7] {
        if let Some(b) = udp.get_mut(at) {
            *b = 0xFF;
        }
    }
    v.extend_from_slice(&udp);
    let mut t = transport.to_vec();
    if let Some(b) = t.get_mut(4) {
        *b = 0xFF;
    }
    v.extend_from_slice(&t);
    crc32(&v)
}

/// The ICRC of a native InfiniBand packet without a GRH: the LRH as it is but its VL (the
/// high nibble of byte 0) set to ones, then the transport as for RoCE. (With a GRH the LRH
/// counts as eight 0xFF bytes: [`icrc`] with [`Net::Ipv6`] over the GRH.)
pub fn icrc_ib_local(lrh: &[u8], transport: &[u8]) -> u32 {
    let mut v = lrh.to_vec();
    if let Some(b) = v.first_mut() {
        *b |= 0xF0;
    }
    let mut t = transport.to_vec();
    if let Some(b) = t.get_mut(4) {
        *b = 0xFF;
    }
    v.extend_from_slice(&t);
    crc32(&v)
}

/// The VCRC of InfiniBand, bit by bit: CRC-16 with polynomial 0x100B, reflected (0xD008),
/// register starting at 0xFFFF, complemented at the end.
pub fn vcrc(bytes: &[u8]) -> u16 {
    let mut r = 0xFFFFu16;
    for &b in bytes {
        r ^= u16::from(b);
        for _ in 0..8 {
            r = if r & 1 != 0 { (r >> 1) ^ 0xD008 } else { r >> 1 };
        }
    }
    !r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_check_value() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc32(b""), 0);
    }

    #[test]
    fn vcrc_check_value() {
        // The catalog's check value of the parameters (roce_parser::VCRC).
        assert_eq!(vcrc(b"123456789"), 0x0A3D);
        assert_eq!(vcrc(b"123456789"), roce_parser::compute_vcrc(b"123456789"));
    }
}
