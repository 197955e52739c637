//! Minimal capture writers for seeds of the `capture` target: classic pcap (either byte
//! order, micro- or nanoseconds, any link type), pcapng (two interfaces, enhanced and simple
//! packet blocks), link-layer wrappers (Linux cooked v1/v2, null/loop, raw IP).

use roce_fuzz_common::multi::{block, section_header};

/// A classic pcap file.
pub fn pcap(link_type: u32, nanos: bool, big_endian: bool, frames: &[Vec<u8>]) -> Vec<u8> {
    let u32b = |v: u32| {
        if big_endian {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    };
    let u16b = |v: u16| {
        if big_endian {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    };
    let mut out = Vec::new();
    out.extend_from_slice(&u32b(if nanos { 0xA1B2_3C4D } else { 0xA1B2_C3D4 }));
    out.extend_from_slice(&u16b(2));
    out.extend_from_slice(&u16b(4));
    out.extend_from_slice(&u32b(0));
    out.extend_from_slice(&u32b(0));
    out.extend_from_slice(&u32b(65535));
    out.extend_from_slice(&u32b(link_type));
    for (i, f) in frames.iter().enumerate() {
        out.extend_from_slice(&u32b(1_700_000_000 + i as u32));
        out.extend_from_slice(&u32b(1000 * i as u32));
        out.extend_from_slice(&u32b(f.len() as u32));
        out.extend_from_slice(&u32b(f.len() as u32));
        out.extend_from_slice(f);
    }
    out
}

/// A little-endian pcapng file: a section header, interface 0 (Ethernet, microseconds),
/// interface 1 (Ethernet, `if_tsresol` 9: nanoseconds), the frames in enhanced packet blocks
/// alternating between the two, and the last frame again in a simple packet block.
pub fn pcapng(frames: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    section_header(&mut out);
    let idb = |opts: &[u8]| {
        let mut b = Vec::new();
        b.extend_from_slice(&1u16.to_le_bytes());
        b.extend_from_slice(&0u16.to_le_bytes());
        b.extend_from_slice(&0u32.to_le_bytes());
        b.extend_from_slice(opts);
        b
    };
    block(&mut out, 1, &idb(&[]));
    // if_tsresol (9) = 9, padded, then opt_endofopt.
    block(&mut out, 1, &idb(&[9, 0, 1, 0, 9, 0, 0, 0, 0, 0, 0, 0]));
    for (i, f) in frames.iter().enumerate() {
        let mut epb = Vec::new();
        epb.extend_from_slice(&((i % 2) as u32).to_le_bytes());
        let ts = 1_700_000_000_000_000u64 + i as u64;
        epb.extend_from_slice(&((ts >> 32) as u32).to_le_bytes());
        epb.extend_from_slice(&(ts as u32).to_le_bytes());
        epb.extend_from_slice(&(f.len() as u32).to_le_bytes());
        epb.extend_from_slice(&(f.len() as u32).to_le_bytes());
        epb.extend_from_slice(f);
        epb.resize(epb.len().div_ceil(4) * 4, 0);
        block(&mut out, 6, &epb);
    }
    if let Some(f) = frames.last() {
        let mut spb = Vec::new();
        spb.extend_from_slice(&(f.len() as u32).to_le_bytes());
        spb.extend_from_slice(f);
        block(&mut out, 3, &spb);
    }
    out
}

/// The EtherType of an Ethernet frame without VLAN tags, and what follows it.
fn split_ethernet(frame: &[u8]) -> (u16, &[u8]) {
    (u16::from_be_bytes([frame[12], frame[13]]), &frame[14..])
}

/// Linux cooked capture (v1) of an Ethernet frame.
pub fn sll(frame: &[u8]) -> Vec<u8> {
    let (ethertype, rest) = split_ethernet(frame);
    let mut out = vec![0, 0, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0];
    out.extend_from_slice(&ethertype.to_be_bytes());
    out.extend_from_slice(rest);
    out
}

/// Linux cooked capture v2 of an Ethernet frame.
pub fn sll2(frame: &[u8]) -> Vec<u8> {
    let (ethertype, rest) = split_ethernet(frame);
    let mut out = ethertype.to_be_bytes().to_vec();
    out.extend_from_slice(&[0, 0, 0, 0, 0, 2, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0]);
    out.extend_from_slice(rest);
    out
}

/// The IP packet of an Ethernet frame (raw IP link types).
pub fn raw_ip(frame: &[u8]) -> Vec<u8> {
    split_ethernet(frame).1.to_vec()
}

/// A BSD null (host order, little-endian here) or loop (network order) header.
pub fn null(frame: &[u8], network_order: bool) -> Vec<u8> {
    let (ethertype, rest) = split_ethernet(frame);
    let family: u32 = if ethertype == 0x86dd { 28 } else { 2 };
    let mut out =
        if network_order { family.to_be_bytes().to_vec() } else { family.to_le_bytes().to_vec() };
    out.extend_from_slice(rest);
    out
}
