//! Structure-aware inputs, decoded from the fuzzer's bytes through `arbitrary`: an opcode and
//! field values for every header, so every header path is reached, not only what random
//! bytes happen to hit.
//!
//! The first field of [`UdpSpec`] and [`FrameSpec`] is the opcode, one byte: a seed that
//! starts with a BTH (a captured UDP payload, or one the builder wrote) decodes to a packet of
//! that opcode, which is how the seeds give every opcode of the table to these targets.

use arbitrary::{Arbitrary, Unstructured};
use roce_parser::*;

/// Damage done to a built packet before it is parsed again.
#[derive(Arbitrary, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Damage {
    /// None: the parse must give back every field.
    None,
    /// Keep only the first `n % (len + 1)` bytes.
    Truncate(u16),
    /// XOR the byte at `at % len` with `xor`.
    Flip { at: u16, xor: u8 },
    /// Append `n` bytes (0xA5).
    Extend(u8),
}

impl Damage {
    /// Applies the damage to `bytes`; returns whether anything changed.
    pub fn apply(self, bytes: &mut Vec<u8>) -> bool {
        match self {
            Damage::None => false,
            Damage::Truncate(n) => {
                let keep = usize::from(n) % (bytes.len() + 1);
                let changed = keep < bytes.len();
                bytes.truncate(keep);
                changed
            }
            Damage::Flip { at, xor } => {
                if bytes.is_empty() || xor == 0 {
                    return false;
                }
                let at = usize::from(at) % bytes.len();
                bytes[at] ^= xor;
                true
            }
            Damage::Extend(n) => {
                bytes.extend(std::iter::repeat_n(0xA5, usize::from(n)));
                n > 0
            }
        }
    }
}

/// A RoCEv2 UDP payload (BTH to ICRC), built and parsed again.
#[derive(Arbitrary, Clone, Debug)]
pub struct UdpSpec<'a> {
    pub opcode: u8,
    pub bth: BthRepr,
    pub headers: ExtHeaders,
    /// Forces PadCnt (and the pad length) instead of the builder's value.
    pub padcnt: Option<u8>,
    pub damage: Damage,
    pub payload: &'a [u8],
}

/// A VLAN tag, limited to what the parser takes for a tag.
#[derive(Arbitrary, Clone, Copy, Debug)]
pub struct VlanSpec {
    /// 0x8100, 0x88a8 or 0x9100, by this value modulo 3.
    pub tpid: u8,
    pub pcp: u8,
    pub dei: bool,
    pub vid: u16,
}

impl VlanSpec {
    pub fn tag(self) -> VlanTag {
        VlanTag {
            tpid: [0x8100, 0x88a8, 0x9100][usize::from(self.tpid % 3)],
            pcp: self.pcp & 7,
            dei: self.dei,
            vid: self.vid & 0xfff,
        }
    }
}

/// A whole frame for the builder: every field of every owned struct it takes.
#[derive(Arbitrary, Clone, Debug)]
pub struct FrameSpec<'a> {
    pub opcode: u8,
    pub network: Network,
    pub vlans: [Option<VlanSpec>; 2],
    pub eth_dst: [u8; 6],
    pub eth_src: [u8; 6],
    pub udp_sport: u16,
    /// RoCEv2 on this port (the parser is configured with it), 4791 when `None`.
    pub udp_dport: Option<u16>,
    pub udp_checksum: u16,
    pub bth: BthRepr,
    pub headers: ExtHeaders,
    pub padcnt: Option<u8>,
    /// Writes this ICRC instead of the right one.
    pub icrc: Option<u32>,
    pub payload: &'a [u8],
}

/// Decodes the structured input the way libFuzzer's `fuzz_target!(|x: T| ..)` would.
pub fn decode<'a, T: Arbitrary<'a>>(data: &'a [u8]) -> Option<T> {
    T::arbitrary_take_rest(Unstructured::new(data)).ok()
}

/// The extended headers a parse of `info` gives back when the builder was handed `given`:
/// each listed header, its fields cut to their wire width (absent ones were written as zeros);
/// headers the opcode does not list are absent.
pub fn expected_headers(info: Option<&OpcodeInfo>, given: &ExtHeaders) -> ExtHeaders {
    match info {
        Some(info) => given.as_written(info.headers).normalized(),
        None => ExtHeaders::default(),
    }
}

/// The PadCnt the builder writes for `payload_len` bytes, or the forced one.
pub fn effective_padcnt(forced: Option<u8>, payload_len: usize) -> u8 {
    forced.unwrap_or(((4 - payload_len % 4) % 4) as u8) & 3
}

/// Builds the frame of a builder; `None` when the builder refuses (a frame too long for its
/// length fields).
pub fn emit(b: &FrameBuilder<'_>) -> Option<Vec<u8>> {
    let mut out = vec![0u8; b.buffer_len()];
    let n = b.emit(&mut out).ok()?;
    assert_eq!(n, out.len(), "builder: emitted length differs from buffer_len");
    Some(out)
}

/// The name of any opcode, for messages.
pub fn opname(op: u8) -> &'static str {
    opcode_name(op)
}
