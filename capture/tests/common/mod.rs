//! Builders for small pcap and pcapng files, shared by the capture tests (each test binary
//! uses a different subset).
#![allow(dead_code)]

use std::io::Write;

/// A classic pcap file being built.
pub struct Pcap {
    big: bool,
    nano: bool,
    pub out: Vec<u8>,
}

impl Pcap {
    pub fn new(big: bool, nano: bool, snaplen: u32, link_type: u32) -> Pcap {
        let mut p = Pcap { big, nano, out: Vec::new() };
        let magic: u32 = if nano { 0xA1B2_3C4D } else { 0xA1B2_C3D4 };
        p.u32(magic);
        p.u16(2);
        p.u16(4);
        p.u32(0);
        p.u32(0);
        p.u32(snaplen);
        p.u32(link_type);
        p
    }

    pub fn ethernet() -> Pcap {
        Pcap::new(false, false, 65535, 1)
    }

    fn u32(&mut self, v: u32) {
        let b = if self.big { v.to_be_bytes() } else { v.to_le_bytes() };
        self.out.extend_from_slice(&b);
    }

    fn u16(&mut self, v: u16) {
        let b = if self.big { v.to_be_bytes() } else { v.to_le_bytes() };
        self.out.extend_from_slice(&b);
    }

    /// A record with explicit header fields (for damaged files).
    pub fn raw_record(
        &mut self,
        ts_sec: u32,
        ts_frac: u32,
        caplen: u32,
        len: u32,
        data: &[u8],
    ) -> &mut Self {
        self.u32(ts_sec);
        self.u32(ts_frac);
        self.u32(caplen);
        self.u32(len);
        self.out.extend_from_slice(data);
        self
    }

    /// A well-formed record; `frac` is in the file's resolution.
    pub fn record(&mut self, ts_sec: u32, frac: u32, data: &[u8]) -> &mut Self {
        let _ = self.nano;
        self.raw_record(ts_sec, frac, data.len() as u32, data.len() as u32, data)
    }

    pub fn bytes(&self) -> Vec<u8> {
        self.out.clone()
    }
}

/// A pcapng file being built; each section has its own byte order.
pub struct PcapNg {
    big: bool,
    pub out: Vec<u8>,
}

impl PcapNg {
    pub fn new(big: bool) -> PcapNg {
        let mut p = PcapNg { big, out: Vec::new() };
        p.section(big);
        p
    }

    fn u32b(&self, v: u32) -> [u8; 4] {
        if self.big {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    }

    fn u16b(&self, v: u16) -> [u8; 2] {
        if self.big {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    }

    /// A block with the given type and body (padded to 4 here).
    pub fn block(&mut self, block_type: u32, body: &[u8]) -> &mut Self {
        let mut body = body.to_vec();
        while !body.len().is_multiple_of(4) {
            body.push(0);
        }
        let len = (body.len() + 12) as u32;
        let (t, l) = (self.u32b(block_type), self.u32b(len));
        self.out.extend_from_slice(&t);
        self.out.extend_from_slice(&l);
        self.out.extend_from_slice(&body);
        self.out.extend_from_slice(&l);
        self
    }

    /// Starts a new section with its own byte order.
    pub fn section(&mut self, big: bool) -> &mut Self {
        self.big = big;
        let mut body = Vec::new();
        body.extend_from_slice(&self.u32b(0x1A2B_3C4D));
        body.extend_from_slice(&self.u16b(1));
        body.extend_from_slice(&self.u16b(0));
        body.extend_from_slice(&[0xFF; 8]); // section length: unknown
        self.block(0x0A0D_0D0A, &body)
    }

    fn option(&self, body: &mut Vec<u8>, code: u16, value: &[u8]) {
        body.extend_from_slice(&self.u16b(code));
        body.extend_from_slice(&self.u16b(value.len() as u16));
        body.extend_from_slice(value);
        while !body.len().is_multiple_of(4) {
            body.push(0);
        }
    }

    /// An interface, with optional if_tsresol and if_tsoffset options.
    pub fn interface(
        &mut self,
        link_type: u16,
        snaplen: u32,
        tsresol: Option<u8>,
        tsoffset: Option<i64>,
    ) -> &mut Self {
        let mut body = Vec::new();
        body.extend_from_slice(&self.u16b(link_type));
        body.extend_from_slice(&[0, 0]);
        body.extend_from_slice(&self.u32b(snaplen));
        self.option(&mut body, 2, b"eth0");
        if let Some(r) = tsresol {
            self.option(&mut body, 9, &[r]);
        }
        if let Some(o) = tsoffset {
            let b = if self.big { o.to_be_bytes() } else { o.to_le_bytes() };
            self.option(&mut body, 14, &b);
        }
        self.option(&mut body, 0, &[]);
        self.block(1, &body)
    }

    fn packet_fields(&self, id_field: &[u8], ticks: u64, caplen: u32, len: u32) -> Vec<u8> {
        let mut body = id_field.to_vec();
        body.extend_from_slice(&self.u32b((ticks >> 32) as u32));
        body.extend_from_slice(&self.u32b(ticks as u32));
        body.extend_from_slice(&self.u32b(caplen));
        body.extend_from_slice(&self.u32b(len));
        body
    }

    /// An enhanced packet block with an epb_flags option (as dumpcap writes on some systems).
    pub fn epb(&mut self, interface: u32, ticks: u64, data: &[u8]) -> &mut Self {
        let id = self.u32b(interface);
        let mut body = self.packet_fields(&id, ticks, data.len() as u32, data.len() as u32);
        body.extend_from_slice(data);
        while !body.len().is_multiple_of(4) {
            body.push(0);
        }
        self.option(&mut body, 2, &self.u32b(1));
        self.option(&mut body, 0, &[]);
        self.block(6, &body)
    }

    /// An enhanced packet block with explicit lengths (for damaged files).
    pub fn epb_raw(
        &mut self,
        interface: u32,
        ticks: u64,
        caplen: u32,
        len: u32,
        data: &[u8],
    ) -> &mut Self {
        let id = self.u32b(interface);
        let mut body = self.packet_fields(&id, ticks, caplen, len);
        body.extend_from_slice(data);
        self.block(6, &body)
    }

    /// An obsolete packet block (type 2).
    pub fn pb(&mut self, interface: u16, ticks: u64, data: &[u8]) -> &mut Self {
        let mut id = self.u16b(interface).to_vec();
        id.extend_from_slice(&[0, 0]);
        let mut body = self.packet_fields(&id, ticks, data.len() as u32, data.len() as u32);
        body.extend_from_slice(data);
        self.block(2, &body)
    }

    /// A simple packet block (type 3).
    pub fn spb(&mut self, len: u32, data: &[u8]) -> &mut Self {
        let mut body = self.u32b(len).to_vec();
        body.extend_from_slice(data);
        self.block(3, &body)
    }

    pub fn bytes(&self) -> Vec<u8> {
        self.out.clone()
    }
}

/// An Ethernet/IPv4/UDP frame of `len` bytes (len >= 42) whose bytes after the headers count.
pub fn ethernet_frame(len: usize, seed: u8) -> Vec<u8> {
    let mut f = vec![0u8; len.max(42)];
    f[12] = 0x08;
    f[13] = 0x00;
    f[14] = 0x45;
    for (i, b) in f.iter_mut().enumerate().skip(42) {
        *b = seed.wrapping_add(i as u8);
    }
    f
}

/// gzip-compresses `data`.
pub fn gzip(data: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(data).unwrap();
    enc.finish().unwrap()
}

/// Every frame of a capture as (number, ts_ns, interface, data), panicking on any error.
pub fn all_frames(cap: &mut roce_capture::Capture) -> Vec<(u64, u64, u32, Vec<u8>)> {
    let mut v = Vec::new();
    while let Some(f) = cap.next_frame() {
        let f = f.unwrap_or_else(|e| panic!("unexpected error: {e}"));
        v.push((f.number, f.ts_ns, f.interface, f.data.to_vec()));
    }
    v
}
