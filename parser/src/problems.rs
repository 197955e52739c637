//! Problems that do not stop parsing, collected as a bit set (no allocation), so a malformed
//! field is reported next to every field that could still be decoded.

use core::fmt;

macro_rules! problems {
    ($($(#[$doc:meta])* $name:ident = $bit:expr, $code:literal, $text:expr;)*) => {
        /// One problem found in a frame.
        #[cfg_attr(feature = "serde", derive(serde::Serialize))]
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[repr(u32)]
        pub enum Problem {
            $($(#[$doc])* $name = 1 << $bit,)*
        }

        impl Problem {
            /// Every problem, in bit order.
            pub const ALL: &'static [Problem] = &[$(Problem::$name,)*];

            /// The stable code of the problem: snake case, never reworded (the JSON
            /// contract's `problems[].code`, and in C the `ROCE_PROBLEM_*` constant in upper
            /// case). Scripts match on this, not on [`Problem::message`].
            pub const fn code(self) -> &'static str {
                match self {
                    $(Problem::$name => $code,)*
                }
            }

            /// The problem with this code.
            pub fn from_code(code: &str) -> Option<Problem> {
                match code {
                    $($code => Some(Problem::$name),)*
                    _ => None,
                }
            }

            /// A one-line description a user can act on (may be reworded between releases;
            /// match on [`Problem::code`]).
            pub const fn message(self) -> &'static str {
                match self {
                    $(Problem::$name => $text,)*
                }
            }
        }
    };
}

problems! {
    /// BTH TVer is not 0.
    TverNonZero = 0, "tver_nonzero", "BTH TVer is not 0";
    /// PadCnt does not bring payload + pad to a multiple of 4 bytes.
    PadCntInconsistent = 1, "padcnt_inconsistent", "PadCnt inconsistent with the payload length";
    /// Pad bytes are not zero.
    PadNonZero = 2, "pad_nonzero", "pad bytes are not zero";
    /// The opcode carries no payload but the packet has some.
    UnexpectedPayload = 3, "unexpected_payload", "payload present where the opcode has none";
    /// ATOMIC_WRITE with a payload other than 8 bytes.
    AtomicWriteLength = 4, "atomic_write_length", "ATOMIC_WRITE payload is not 8 bytes";
    /// UDP length disagrees with the IP payload length.
    UdpLengthMismatch = 5, "udp_length_mismatch", "UDP length disagrees with the IP payload length";
    /// IP length disagrees with the frame (frame shorter than the IP length says).
    IpLengthMismatch = 6, "ip_length_mismatch", "IP length disagrees with the frame";
    /// The frame ends before its lengths say it does (snap length or damage).
    Truncated = 7, "truncated", "frame shorter than its IP/UDP lengths: truncated";
    /// Reserved bits are set (BTH, AETH, RDETH, DETH, XRCETH, FETH, CNP).
    ReservedBits = 8, "reserved_bits", "reserved bits set";
    /// Opcode reserved by the IBTA for its transport.
    ReservedOpcode = 9, "reserved_opcode", "reserved opcode: decoded to the BTH only";
    /// Opcode in the manufacturer-specific range 0xC0-0xFF.
    VendorOpcode = 10, "vendor_opcode", "manufacturer-specific opcode: decoded to the BTH only";
    /// The packet is too short for the headers its opcode implies.
    ShortForOpcode = 11, "short_for_opcode", "packet too short for the headers its opcode implies";
    /// A CNP whose body is not 16 bytes.
    CnpLength = 12, "cnp_length", "CNP body is not 16 bytes";
    /// A CNP without BECN.
    CnpBecnClear = 13, "cnp_becn_clear", "CNP without BECN set";
    /// A CNP with a PSN other than 0.
    CnpPsnNonZero = 14, "cnp_psn_nonzero", "CNP PSN is not 0";
    /// RD-range opcode whose headers do not fit the RD layout (Mellanox DC reuses the range).
    RdLayoutMismatch = 15, "rd_layout_mismatch", "RD-range opcode does not fit the RD layout (Mellanox DC traffic?)";
    /// A UD packet to QP1 without the GSI Q_Key 0x80010000.
    Qp1QKey = 16, "qp1_qkey", "UD packet to QP1 without Q_Key 0x80010000";
    /// IPv4 header checksum wrong.
    Ipv4Checksum = 17, "ipv4_checksum", "IPv4 header checksum is wrong";
    /// IP fragment: RoCE must not be fragmented.
    IpFragment = 18, "ip_fragment", "IP packet is a fragment";
    /// The MAD of a UD SEND to QP1 is shorter than 256 bytes (MAD problems are found when
    /// the parser decodes the MAD, once per packet).
    MadTruncated = 19, "mad_truncated", "MAD shorter than its layout";
    /// The MAD's base or class version is not one we know.
    MadUnknownVersion = 20, "mad_unknown_version", "MAD with an unknown base or class version";
    /// A CM MAD with an attribute ID that is not a CM message.
    MadUnknownAttribute = 21, "mad_unknown_attribute", "CM MAD with an unknown attribute ID";
    /// The ICRC does not match the recomputed value.
    IcrcBad = 22, "icrc_bad", "ICRC does not match the recomputed value";
    /// The RoCEv1 GRH next header is not 0x1B (BTH).
    GrhNextHeader = 23, "grh_next_header", "GRH next header is not 0x1B (BTH)";
    /// A packet to the RoCE UDP port whose UDP length leaves no room for a 12-byte BTH.
    ShortForBth = 24, "short_for_bth", "packet to the RoCE port too short for a BTH";
    /// A RoCE packet with no room for the 4-byte ICRC after its BTH: the ICRC is not checked.
    ShortForIcrc = 25, "short_for_icrc", "packet too short for the ICRC after its BTH: ICRC not checked";
    /// An IPv4 header whose IHL is below 5 (20 bytes): not decoded further.
    IpHeaderLength = 26, "ip_header_length", "IPv4 header length (IHL) below 5: not decoded further";
    /// More stacked VLAN tags than the parser walks (8): not decoded further.
    TooManyVlanTags = 27, "too_many_vlan_tags", "more than 8 stacked VLAN tags: not decoded further";
    /// An IPv6 extension header chain the parser could not follow to its end (malformed,
    /// cut short, or holding a header it does not walk): not decoded further.
    Ipv6ExtensionChain = 28, "ipv6_extension_chain", "IPv6 extension header chain not followed to its end: not decoded further";
    /// A tunnel header (GRE, ERSPAN, VXLAN, Geneve) that cannot be right: an ERSPAN version
    /// its GRE protocol does not carry, a Geneve version other than 0.
    TunnelMalformed = 29, "tunnel_malformed", "tunnel header malformed: the inner frame not decoded";
    /// The VCRC closing a native InfiniBand packet does not match it: the packet was damaged
    /// on the last link (or written by a capture tool that does not keep the VCRC).
    VcrcBad = 30, "vcrc_bad", "VCRC mismatch: damaged on the last link";
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

/// A set of [`Problem`]s: a bit mask, copied freely.
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Problems(u32);

impl Problems {
    /// No problem.
    pub const NONE: Problems = Problems(0);

    /// The raw bit mask (bit positions as in [`Problem`]'s discriminants).
    pub const fn bits(self) -> u32 {
        self.0
    }

    /// The set with the given raw bits (unknown bits are kept and ignored by `iter`).
    pub const fn from_bits(bits: u32) -> Self {
        Problems(bits)
    }

    /// Adds `p`.
    pub fn insert(&mut self, p: Problem) {
        self.0 |= p as u32;
    }

    /// Inserts `p` when `cond` holds.
    pub fn flag(&mut self, cond: bool, p: Problem) {
        if cond {
            self.insert(p);
        }
    }

    /// Adds every problem of `other`.
    pub fn union(&mut self, other: Problems) {
        self.0 |= other.0;
    }

    /// Whether `p` is in the set.
    pub const fn contains(self, p: Problem) -> bool {
        self.0 & (p as u32) != 0
    }

    /// No problem at all.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The problems present, in bit order.
    pub fn iter(self) -> impl Iterator<Item = Problem> {
        Problem::ALL.iter().copied().filter(move |p| self.contains(*p))
    }
}

impl fmt::Display for Problems {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, p) in self.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            f.write_str(p.message())?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Codes are the contract scripts match on: unique, snake case, and each leads back to
    /// its problem.
    #[test]
    fn codes_are_unique_snake_case_and_round_trip() {
        for (i, p) in Problem::ALL.iter().enumerate() {
            let code = p.code();
            assert!(
                !code.is_empty()
                    && code
                        .bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
                    && !code.starts_with('_')
                    && !code.ends_with('_'),
                "{code:?} is not snake case"
            );
            assert_eq!(Problem::from_code(code), Some(*p));
            for q in Problem::ALL.get(i + 1..).unwrap_or_default() {
                assert_ne!(code, q.code(), "{p:?} and {q:?} share a code");
            }
        }
        assert_eq!(Problem::from_code("PAD_NONZERO"), None);
        assert_eq!(Problem::from_code(""), None);
    }
}
