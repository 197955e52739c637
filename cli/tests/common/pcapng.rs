//! A small pcapng writer for tests: sections in either byte order, interfaces and packets
//! with any options.
#![allow(dead_code)]

use std::path::Path;

pub struct Writer {
    pub out: Vec<u8>,
    big: bool,
}

fn pad(v: &mut Vec<u8>) {
    while !v.len().is_multiple_of(4) {
        v.push(0);
    }
}

impl Writer {
    pub fn new() -> Self {
        Writer { out: Vec::new(), big: false }
    }

    fn u16(&self, v: u16) -> [u8; 2] {
        if self.big {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    }

    fn u32(&self, v: u32) -> [u8; 4] {
        if self.big {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    }

    fn options(&self, body: &mut Vec<u8>, opts: &[(u16, &[u8])]) {
        if opts.is_empty() {
            return;
        }
        for (code, v) in opts {
            body.extend_from_slice(&self.u16(*code));
            body.extend_from_slice(&self.u16(v.len() as u16));
            body.extend_from_slice(v);
            pad(body);
        }
        body.extend_from_slice(&[0; 4]);
    }

    fn block(&mut self, ty: u32, body: &[u8]) {
        let len = (body.len() + 12) as u32;
        let (t, l) = (self.u32(ty), self.u32(len));
        self.out.extend_from_slice(&t);
        self.out.extend_from_slice(&l);
        self.out.extend_from_slice(body);
        self.out.extend_from_slice(&l);
    }

    /// A section header; `big` sets the byte order of the section.
    pub fn section(&mut self, big: bool, opts: &[(u16, &[u8])]) {
        self.big = big;
        let mut b = Vec::new();
        b.extend_from_slice(&self.u32(0x1A2B_3C4D));
        b.extend_from_slice(&self.u16(1));
        b.extend_from_slice(&self.u16(0));
        b.extend_from_slice(&u64::MAX.to_le_bytes());
        self.options(&mut b, opts);
        self.block(0x0A0D_0D0A, &b);
    }

    pub fn interface(&mut self, link_type: u16, snaplen: u32, opts: &[(u16, &[u8])]) {
        let mut b = Vec::new();
        b.extend_from_slice(&self.u16(link_type));
        b.extend_from_slice(&self.u16(0));
        b.extend_from_slice(&self.u32(snaplen));
        self.options(&mut b, opts);
        self.block(1, &b);
    }

    /// An EPB; `ts` in the interface's units.
    pub fn packet(&mut self, iface: u32, ts: u64, data: &[u8], len: u32, opts: &[(u16, &[u8])]) {
        let mut b = Vec::new();
        b.extend_from_slice(&self.u32(iface));
        b.extend_from_slice(&self.u32((ts >> 32) as u32));
        b.extend_from_slice(&self.u32(ts as u32));
        b.extend_from_slice(&self.u32(data.len() as u32));
        b.extend_from_slice(&self.u32(len));
        b.extend_from_slice(data);
        pad(&mut b);
        self.options(&mut b, opts);
        self.block(6, &b);
    }

    /// A block of another type, copied as it is.
    pub fn other(&mut self, ty: u32, body: &[u8]) {
        let mut b = body.to_vec();
        pad(&mut b);
        self.block(ty, &b);
    }
}

/// The frames of a capture, as our reader gives them: (ts_ns, wire length, bytes).
pub fn frames(path: &Path) -> Vec<(u64, u32, Vec<u8>)> {
    let mut cap = roce_capture::open(path).unwrap();
    let mut v = Vec::new();
    while let Some(f) = cap.next_frame() {
        let f = f.unwrap();
        v.push((f.ts_ns, f.len, f.data.to_vec()));
    }
    v
}

/// `ng` (a little-endian pcapng) with a block of the reserved type 0 (12 bytes, no body)
/// after every interface block and after every second packet block: such a block takes no
/// frame number (roce-capture and tshark skip it).
pub fn with_reserved_blocks(ng: &[u8]) -> Vec<u8> {
    let (mut out, mut at, mut packets) = (Vec::new(), 0usize, 0);
    let reserved = [0u32, 12, 12].map(u32::to_le_bytes).concat();
    while at + 8 <= ng.len() {
        let word = |i: usize| u32::from_le_bytes(ng[i..i + 4].try_into().unwrap());
        let (ty, len) = (word(at), word(at + 4) as usize);
        out.extend_from_slice(&ng[at..at + len]);
        packets += u32::from(ty == 6);
        if ty == 1 || (ty == 6 && packets % 2 == 0) {
            out.extend_from_slice(&reserved);
        }
        at += len;
    }
    out
}
