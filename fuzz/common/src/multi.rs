//! The input of the `merge` target: several capture files in one input, or one capture fed
//! twice (the copy's clock shifted, some records left out), and the small pcapng writer that
//! writes those two files.
//!
//! Byte 0, bit 7 clear ([`MergeInput::Files`]): bits 0-1 the number of files less one (1 to
//! 4), bits 2-3 the unit of the clock offsets (0: none, 1: us, 2: ms, 3: s), bit 4 the
//! offsets estimated (`roce_analysis::estimate_offsets`) instead of given; then one `i16`
//! (little-endian) offset per file, one `u16` length per file but the last (cut at the end of
//! the input), and the files, the last taking the rest.
//!
//! Byte 0, bit 7 set ([`MergeInput::Twice`]): bit 1 records left out of the copy, bits 2-3 the
//! unit of the shift (0: ns, 1: us, 2: ms, 3: s), bit 4 the offset estimated; bytes 1-4 the
//! shift (`i32`, little-endian), bytes 5-8 which records the copy leaves out (record `k`,
//! 0-based, when bit `k % 32` is set); then the capture, read as a file.

use roce_capture::LinkType;

/// Files of [`MergeInput::Files`] at most.
pub const FILES_MAX: usize = 4;

/// The scale of the offset units (bits 2-3 of byte 0).
const FILES_UNITS: [i64; 4] = [0, 1_000, 1_000_000, 1_000_000_000];
const TWICE_UNITS: [i64; 4] = [1, 1_000, 1_000_000, 1_000_000_000];

/// The `merge` target's input, decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MergeInput<'a> {
    /// 1 to 4 capture files, each with its clock offset (ns) or estimated ones.
    Files { files: Vec<&'a [u8]>, offsets: Vec<i64>, estimate: bool },
    /// One capture, fed as file 0 and, its timestamps moved by `shift_ns` and the records
    /// `leave_out` names left out, as file 1 (both written by [`pcapng`]).
    Twice { capture: &'a [u8], shift_ns: i64, leave_out: Option<u32>, estimate: bool },
}

impl<'a> MergeInput<'a> {
    pub const TWICE: u8 = 0x80;
    pub const LEAVE_OUT: u8 = 0x02;
    pub const ESTIMATE: u8 = 0x10;

    /// The input of `data`; `None` when its header is cut short.
    pub fn decode(data: &'a [u8]) -> Option<Self> {
        let (&b0, rest) = data.split_first()?;
        let estimate = b0 & Self::ESTIMATE != 0;
        let unit = usize::from((b0 >> 2) & 3);
        if b0 & Self::TWICE != 0 {
            let shift = i32::from_le_bytes(rest.get(0..4)?.try_into().ok()?);
            let mask = u32::from_le_bytes(rest.get(4..8)?.try_into().ok()?);
            return Some(MergeInput::Twice {
                capture: rest.get(8..)?,
                shift_ns: i64::from(shift) * TWICE_UNITS[unit],
                leave_out: (b0 & Self::LEAVE_OUT != 0).then_some(mask),
                estimate,
            });
        }
        let n = 1 + usize::from(b0 & 3);
        let mut at = 0;
        let mut take = |k: usize| {
            let s = rest.get(at..at + k);
            at += k;
            s
        };
        let mut offsets = Vec::with_capacity(n);
        for _ in 0..n {
            let o = i16::from_le_bytes(take(2)?.try_into().ok()?);
            offsets.push(i64::from(o) * FILES_UNITS[unit]);
        }
        let mut lens = Vec::with_capacity(n);
        for _ in 1..n {
            lens.push(usize::from(u16::from_le_bytes(take(2)?.try_into().ok()?)));
        }
        let mut body = &rest[at..];
        let mut files = Vec::with_capacity(n);
        for len in lens {
            let (f, r) = body.split_at(len.min(body.len()));
            files.push(f);
            body = r;
        }
        files.push(body);
        Some(MergeInput::Files { files, offsets, estimate })
    }

    /// The bytes [`MergeInput::decode`] reads back as `self`, when `self` can be written
    /// (1 to 4 files, each but the last shorter than 64 KiB; offsets in whole units of one
    /// scale; a shift of whole units within `i32`).
    pub fn encode(&self) -> Option<Vec<u8>> {
        match self {
            MergeInput::Files { files, offsets, estimate } => {
                let n = files.len();
                if n == 0 || n > FILES_MAX || offsets.len() != n {
                    return None;
                }
                let unit = (0..4).find(|&u| {
                    let s = FILES_UNITS[u];
                    offsets.iter().all(|&o| {
                        if s == 0 {
                            o == 0
                        } else {
                            o % s == 0 && i16::try_from(o / s).is_ok()
                        }
                    })
                })?;
                let mut out = vec![(n - 1) as u8 | (unit as u8) << 2];
                if *estimate {
                    out[0] |= Self::ESTIMATE;
                }
                for &o in offsets {
                    let k = if unit == 0 { 0 } else { o / FILES_UNITS[unit] };
                    out.extend_from_slice(&(k as i16).to_le_bytes());
                }
                for f in &files[..n - 1] {
                    out.extend_from_slice(&u16::try_from(f.len()).ok()?.to_le_bytes());
                }
                for f in files {
                    out.extend_from_slice(f);
                }
                Some(out)
            }
            MergeInput::Twice { capture, shift_ns, leave_out, estimate } => {
                let unit = (0..4).rev().find(|&u| {
                    let s = TWICE_UNITS[u];
                    shift_ns % s == 0 && i32::try_from(shift_ns / s).is_ok()
                })?;
                let mut out = vec![Self::TWICE | (unit as u8) << 2];
                if *estimate {
                    out[0] |= Self::ESTIMATE;
                }
                if leave_out.is_some() {
                    out[0] |= Self::LEAVE_OUT;
                }
                out.extend_from_slice(&((shift_ns / TWICE_UNITS[unit]) as i32).to_le_bytes());
                out.extend_from_slice(&leave_out.unwrap_or(0).to_le_bytes());
                out.extend_from_slice(capture);
                Some(out)
            }
        }
    }
}

/// A frame for [`pcapng`]: its time (ns), link type, length on the wire and captured bytes.
#[derive(Clone, Copy, Debug)]
pub struct WriteFrame<'a> {
    pub ts_ns: u64,
    pub link_type: LinkType,
    pub len: u32,
    pub data: &'a [u8],
}

/// Whether [`pcapng`] writes a frame of this link type as it is: an IDB holds a 16-bit link
/// type, and an ERF record's time is its own header's, not the block's (a shifted copy would
/// keep the original time).
pub fn writable(link_type: LinkType) -> bool {
    link_type.code() <= 0xffff && link_type != LinkType::Erf
}

/// Appends a pcapng block: its type, its total length, `body` padded to 32 bits, the length
/// again (little-endian). The fuzz tools' seed files are written with it too.
pub fn block(out: &mut Vec<u8>, kind: u32, body: &[u8]) {
    let len = 12 + body.len().div_ceil(4) * 4;
    out.extend_from_slice(&kind.to_le_bytes());
    out.extend_from_slice(&(len as u32).to_le_bytes());
    out.extend_from_slice(body);
    out.resize(out.len() + (4 - body.len() % 4) % 4, 0);
    out.extend_from_slice(&(len as u32).to_le_bytes());
}

/// Appends a little-endian pcapng section header block (version 1.0, section length
/// unknown).
pub fn section_header(out: &mut Vec<u8>) {
    let mut shb = Vec::new();
    shb.extend_from_slice(&0x1A2B_3C4Du32.to_le_bytes());
    shb.extend_from_slice(&1u16.to_le_bytes());
    shb.extend_from_slice(&0u16.to_le_bytes());
    shb.extend_from_slice(&(-1i64).to_le_bytes());
    block(out, 0x0A0D_0D0A, &shb);
}

/// A little-endian pcapng file of `frames`: a section header, one interface per link type
/// (in order of first use, nanosecond timestamps, no snap length), one enhanced packet block
/// per frame. Frames [`writable`] refuses are left out.
pub fn pcapng(frames: &[WriteFrame<'_>]) -> Vec<u8> {
    let mut out = Vec::new();
    section_header(&mut out);
    let mut interfaces: Vec<LinkType> = Vec::new();
    for f in frames.iter().filter(|f| writable(f.link_type)) {
        let iface = match interfaces.iter().position(|&l| l == f.link_type) {
            Some(i) => i,
            None => {
                let mut idb = Vec::new();
                idb.extend_from_slice(&(f.link_type.code() as u16).to_le_bytes());
                idb.extend_from_slice(&0u16.to_le_bytes());
                idb.extend_from_slice(&0u32.to_le_bytes());
                // if_tsresol (9) = 9: nanoseconds; opt_endofopt.
                idb.extend_from_slice(&[9, 0, 1, 0, 9, 0, 0, 0, 0, 0, 0, 0]);
                block(&mut out, 1, &idb);
                interfaces.push(f.link_type);
                interfaces.len() - 1
            }
        };
        let mut epb = Vec::with_capacity(20 + f.data.len() + 3);
        epb.extend_from_slice(&(iface as u32).to_le_bytes());
        epb.extend_from_slice(&((f.ts_ns >> 32) as u32).to_le_bytes());
        epb.extend_from_slice(&(f.ts_ns as u32).to_le_bytes());
        epb.extend_from_slice(&(f.data.len() as u32).to_le_bytes());
        epb.extend_from_slice(&f.len.max(f.data.len() as u32).to_le_bytes());
        epb.extend_from_slice(f.data);
        block(&mut out, 6, &epb);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_encode_and_decode() {
        let a = [1u8, 2, 3];
        let b = [4u8; 5];
        let c = [9u8; 2];
        for input in [
            MergeInput::Files { files: vec![&a[..]], offsets: vec![0], estimate: false },
            MergeInput::Files {
                files: vec![&a[..], &b[..], &c[..]],
                offsets: vec![0, -3_000_000, 7_000_000],
                estimate: true,
            },
            MergeInput::Files {
                files: vec![&a[..], &[][..], &b[..], &c[..]],
                offsets: vec![0, 1_000, 0, -2_000],
                estimate: false,
            },
            MergeInput::Twice { capture: &b, shift_ns: 1_500_000, leave_out: None, estimate: true },
            MergeInput::Twice { capture: &b, shift_ns: -7, leave_out: Some(5), estimate: false },
            MergeInput::Twice {
                capture: &b,
                shift_ns: -3_000_000_000,
                leave_out: None,
                estimate: false,
            },
        ] {
            let bytes = input.encode().expect("encodable");
            assert_eq!(MergeInput::decode(&bytes), Some(input));
        }
    }

    #[test]
    fn the_written_capture_reads_back() {
        let frames = [
            WriteFrame { ts_ns: 5, link_type: LinkType::Ethernet, len: 60, data: &[1; 14] },
            WriteFrame { ts_ns: 1 << 40, link_type: LinkType::Raw, len: 3, data: &[0x45; 21] },
            WriteFrame { ts_ns: 3, link_type: LinkType::Ethernet, len: 14, data: &[2; 14] },
        ];
        let bytes = pcapng(&frames);
        let mut cap = roce_capture::Capture::from_bytes("w", bytes).expect("opens");
        for w in &frames {
            let f = cap.next_frame().expect("a frame").expect("no error");
            assert_eq!(
                (f.ts_ns, f.link_type, f.len, f.data),
                (w.ts_ns, w.link_type, w.len.max(w.data.len() as u32), w.data)
            );
        }
        assert!(cap.next_frame().is_none());
    }
}
