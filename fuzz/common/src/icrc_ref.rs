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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_check_value() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc32(b""), 0);
    }
}
