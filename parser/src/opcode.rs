//! The opcode table: the one place that knows, for each BTH opcode, its name, transport,
//! operation, ordered extended headers, header length, payload rule and role. Everything
//! else (parser, builder, checker, CLI, FFI) asks this table.

use crate::headers::ExtHeader;

/// Transport, from opcode bits 7..5.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub enum Transport {
    /// Reliable Connection (0x00-0x1F).
    Rc,
    /// Unreliable Connection (0x20-0x3F).
    Uc,
    /// Reliable Datagram (0x40-0x5F).
    Rd,
    /// Unreliable Datagram (0x60-0x7F).
    Ud,
    /// Congestion Notification Packet (0x80-0x9F; 0x81 is the CNP, RoCEv2 annex A17).
    Cnp,
    /// Extended Reliable Connection (0xA0-0xBF).
    Xrc,
    /// 0xC0-0xFF: manufacturer-specific.
    Vendor,
}

impl Transport {
    /// The transport of any opcode, defined or not.
    pub const fn of(opcode: u8) -> Self {
        match opcode >> 5 {
            0 => Transport::Rc,
            1 => Transport::Uc,
            2 => Transport::Rd,
            3 => Transport::Ud,
            4 => Transport::Cnp,
            5 => Transport::Xrc,
            _ => Transport::Vendor,
        }
    }

    /// "RC", "UC", "RD", "UD", "CNP", "XRC", "VENDOR".
    pub const fn as_str(self) -> &'static str {
        match self {
            Transport::Rc => "RC",
            Transport::Uc => "UC",
            Transport::Rd => "RD",
            Transport::Ud => "UD",
            Transport::Cnp => "CNP",
            Transport::Xrc => "XRC",
            Transport::Vendor => "VENDOR",
        }
    }

    /// Name used for opcodes the table does not define.
    const fn undefined_name(self) -> &'static str {
        self.undefined_names().0
    }

    /// The undefined-opcode name, without and with a trailing NUL (for C callers).
    const fn undefined_names(self) -> (&'static str, &'static str) {
        macro_rules! both {
            ($s:literal) => {
                ($s, concat!($s, "\0"))
            };
        }
        match self {
            Transport::Rc => both!("RC_RESERVED"),
            Transport::Uc => both!("UC_RESERVED"),
            Transport::Rd => both!("RD_RESERVED"),
            Transport::Ud => both!("UD_RESERVED"),
            Transport::Cnp => both!("CNP_RESERVED"),
            Transport::Xrc => both!("XRC_RESERVED"),
            Transport::Vendor => both!("VENDOR_SPECIFIC"),
        }
    }
}

/// What the packet does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub enum Operation {
    /// SEND (with immediate or invalidate too).
    Send,
    /// RDMA WRITE (with immediate too).
    RdmaWrite,
    /// RDMA READ request.
    RdmaRead,
    /// RDMA READ response.
    ReadResponse,
    /// ACKNOWLEDGE: an ACK or NAK (AETH), no payload.
    Acknowledge,
    /// ATOMIC ACKNOWLEDGE: the AETH and the original remote data.
    AtomicAcknowledge,
    /// Atomic COMPARE_SWAP request.
    CompareSwap,
    /// Atomic FETCH_ADD request.
    FetchAdd,
    /// RD RESYNC.
    Resync,
    /// IBTA 1.5 FLUSH.
    Flush,
    /// IBTA 1.5 ATOMIC_WRITE.
    AtomicWrite,
    /// Congestion notification packet.
    Cnp,
}

/// Place of the packet in its message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub enum Position {
    /// FIRST: the first packet of a multi-packet message.
    First,
    /// MIDDLE: neither first nor last.
    Middle,
    /// LAST: the last packet of a multi-packet message.
    Last,
    /// ONLY: the whole message in one packet (also ACKs, READ requests, atomics).
    Only,
}

impl Position {
    /// FIRST or ONLY: the packet opens a message.
    pub const fn starts_message(self) -> bool {
        matches!(self, Position::First | Position::Only)
    }
    /// LAST or ONLY: the packet completes a message.
    pub const fn ends_message(self) -> bool {
        matches!(self, Position::Last | Position::Only)
    }
}

/// Who sends the packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub enum Role {
    /// Sent by the requester (SEND, WRITE, READ request, atomic, FLUSH).
    Request,
    /// Sent by the responder (ACK, NAK, READ response, atomic ACK).
    Response,
    /// CNP: sent by the notification point to the data sender.
    Congestion,
}

/// How much payload the opcode carries (PMTU-relative rules are the checker's to judge).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub enum PayloadRule {
    /// No payload at all.
    Empty,
    /// Exactly one PMTU (FIRST and MIDDLE).
    Pmtu,
    /// 1..=PMTU bytes (LAST).
    OneToPmtu,
    /// 0..=PMTU bytes (ONLY).
    ZeroToPmtu,
    /// Exactly this many bytes (ATOMIC_WRITE 8, CNP 16).
    Exactly(u16),
}

impl PayloadRule {
    /// Whether any payload is allowed.
    pub const fn allows_payload(self) -> bool {
        !matches!(self, PayloadRule::Empty)
    }
}

/// One row of the opcode table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct OpcodeInfo {
    /// The BTH OpCode.
    pub opcode: u8,
    /// docs/wire.md name prefixed by the transport, e.g. "RC_SEND_ONLY"; "CNP".
    pub name: &'static str,
    #[cfg_attr(feature = "serde", serde(skip))]
    name_nul: &'static str,
    /// Transport (opcode bits 7..5).
    pub transport: Transport,
    /// Operation.
    pub operation: Operation,
    /// Place in the message.
    pub position: Position,
    /// Requester, responder or congestion.
    pub role: Role,
    /// Extended headers after the BTH, in wire order.
    pub headers: &'static [ExtHeader],
    /// Bytes from the start of the BTH to the payload ("hl" in docs/wire.md).
    pub header_len: u8,
    /// How much payload the opcode may carry.
    pub payload: PayloadRule,
}

impl OpcodeInfo {
    /// The name followed by a NUL byte, for C callers.
    pub const fn name_with_nul(&self) -> &'static str {
        self.name_nul
    }
    /// SEND or RDMA WRITE with immediate data.
    pub fn has_immediate(&self) -> bool {
        self.headers.contains(&ExtHeader::ImmDt)
    }
    /// Whether header `h` is among the opcode's extended headers.
    pub fn has_header(&self, h: ExtHeader) -> bool {
        self.headers.contains(&h)
    }
    /// Sent by a requester.
    pub const fn is_request(&self) -> bool {
        matches!(self.role, Role::Request)
    }
    /// Sent by a responder.
    pub const fn is_response(&self) -> bool {
        matches!(self.role, Role::Response)
    }
}

use ExtHeader as H;
use PayloadRule::*;
use Position::*;
use Role::*;

macro_rules! op {
    ($code:expr, $name:literal, $t:ident, $op:ident, $pos:ident, $role:ident, [$($h:expr),*], $hl:expr, $pl:expr) => {
        OpcodeInfo {
            opcode: $code,
            name: $name,
            name_nul: concat!($name, "\0"),
            transport: Transport::$t,
            operation: Operation::$op,
            position: $pos,
            role: $role,
            headers: &[$($h),*],
            header_len: $hl,
            payload: $pl,
        }
    };
}

/// Every defined opcode, in opcode order.
pub static OPCODES: &[OpcodeInfo] = &[
    // RC: the whole operation table (IBTA 9.2, docs/wire.md).
    op!(0x00, "RC_SEND_FIRST", Rc, Send, First, Request, [], 12, Pmtu),
    op!(0x01, "RC_SEND_MIDDLE", Rc, Send, Middle, Request, [], 12, Pmtu),
    op!(0x02, "RC_SEND_LAST", Rc, Send, Last, Request, [], 12, OneToPmtu),
    op!(0x03, "RC_SEND_LAST_WITH_IMMEDIATE", Rc, Send, Last, Request, [H::ImmDt], 16, OneToPmtu),
    op!(0x04, "RC_SEND_ONLY", Rc, Send, Only, Request, [], 12, ZeroToPmtu),
    op!(0x05, "RC_SEND_ONLY_WITH_IMMEDIATE", Rc, Send, Only, Request, [H::ImmDt], 16, ZeroToPmtu),
    op!(0x06, "RC_RDMA_WRITE_FIRST", Rc, RdmaWrite, First, Request, [H::Reth], 28, Pmtu),
    op!(0x07, "RC_RDMA_WRITE_MIDDLE", Rc, RdmaWrite, Middle, Request, [], 12, Pmtu),
    op!(0x08, "RC_RDMA_WRITE_LAST", Rc, RdmaWrite, Last, Request, [], 12, OneToPmtu),
    op!(
        0x09,
        "RC_RDMA_WRITE_LAST_WITH_IMMEDIATE",
        Rc,
        RdmaWrite,
        Last,
        Request,
        [H::ImmDt],
        16,
        OneToPmtu
    ),
    op!(0x0A, "RC_RDMA_WRITE_ONLY", Rc, RdmaWrite, Only, Request, [H::Reth], 28, ZeroToPmtu),
    op!(
        0x0B,
        "RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE",
        Rc,
        RdmaWrite,
        Only,
        Request,
        [H::Reth, H::ImmDt],
        32,
        ZeroToPmtu
    ),
    op!(0x0C, "RC_RDMA_READ_REQUEST", Rc, RdmaRead, Only, Request, [H::Reth], 28, Empty),
    op!(
        0x0D,
        "RC_RDMA_READ_RESPONSE_FIRST",
        Rc,
        ReadResponse,
        First,
        Response,
        [H::Aeth],
        16,
        Pmtu
    ),
    op!(0x0E, "RC_RDMA_READ_RESPONSE_MIDDLE", Rc, ReadResponse, Middle, Response, [], 12, Pmtu),
    op!(
        0x0F,
        "RC_RDMA_READ_RESPONSE_LAST",
        Rc,
        ReadResponse,
        Last,
        Response,
        [H::Aeth],
        16,
        OneToPmtu
    ),
    op!(
        0x10,
        "RC_RDMA_READ_RESPONSE_ONLY",
        Rc,
        ReadResponse,
        Only,
        Response,
        [H::Aeth],
        16,
        ZeroToPmtu
    ),
    op!(0x11, "RC_ACKNOWLEDGE", Rc, Acknowledge, Only, Response, [H::Aeth], 16, Empty),
    op!(
        0x12,
        "RC_ATOMIC_ACKNOWLEDGE",
        Rc,
        AtomicAcknowledge,
        Only,
        Response,
        [H::Aeth, H::AtomicAckEth],
        24,
        Empty
    ),
    op!(0x13, "RC_COMPARE_SWAP", Rc, CompareSwap, Only, Request, [H::AtomicEth], 40, Empty),
    op!(0x14, "RC_FETCH_ADD", Rc, FetchAdd, Only, Request, [H::AtomicEth], 40, Empty),
    op!(0x16, "RC_SEND_LAST_WITH_INVALIDATE", Rc, Send, Last, Request, [H::Ieth], 16, OneToPmtu),
    op!(0x17, "RC_SEND_ONLY_WITH_INVALIDATE", Rc, Send, Only, Request, [H::Ieth], 16, ZeroToPmtu),
    op!(0x1C, "RC_FLUSH", Rc, Flush, Only, Request, [H::Feth, H::Reth], 32, Empty),
    op!(0x1D, "RC_ATOMIC_WRITE", Rc, AtomicWrite, Only, Request, [H::Reth], 28, Exactly(8)),
    // UC: SEND and RDMA WRITE only, same headers.
    op!(0x20, "UC_SEND_FIRST", Uc, Send, First, Request, [], 12, Pmtu),
    op!(0x21, "UC_SEND_MIDDLE", Uc, Send, Middle, Request, [], 12, Pmtu),
    op!(0x22, "UC_SEND_LAST", Uc, Send, Last, Request, [], 12, OneToPmtu),
    op!(0x23, "UC_SEND_LAST_WITH_IMMEDIATE", Uc, Send, Last, Request, [H::ImmDt], 16, OneToPmtu),
    op!(0x24, "UC_SEND_ONLY", Uc, Send, Only, Request, [], 12, ZeroToPmtu),
    op!(0x25, "UC_SEND_ONLY_WITH_IMMEDIATE", Uc, Send, Only, Request, [H::ImmDt], 16, ZeroToPmtu),
    op!(0x26, "UC_RDMA_WRITE_FIRST", Uc, RdmaWrite, First, Request, [H::Reth], 28, Pmtu),
    op!(0x27, "UC_RDMA_WRITE_MIDDLE", Uc, RdmaWrite, Middle, Request, [], 12, Pmtu),
    op!(0x28, "UC_RDMA_WRITE_LAST", Uc, RdmaWrite, Last, Request, [], 12, OneToPmtu),
    op!(
        0x29,
        "UC_RDMA_WRITE_LAST_WITH_IMMEDIATE",
        Uc,
        RdmaWrite,
        Last,
        Request,
        [H::ImmDt],
        16,
        OneToPmtu
    ),
    op!(0x2A, "UC_RDMA_WRITE_ONLY", Uc, RdmaWrite, Only, Request, [H::Reth], 28, ZeroToPmtu),
    op!(
        0x2B,
        "UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE",
        Uc,
        RdmaWrite,
        Only,
        Request,
        [H::Reth, H::ImmDt],
        32,
        ZeroToPmtu
    ),
    // RD: RDETH on every packet; requests add a DETH before the operation's headers.
    op!(0x40, "RD_SEND_FIRST", Rd, Send, First, Request, [H::Rdeth, H::Deth], 24, Pmtu),
    op!(0x41, "RD_SEND_MIDDLE", Rd, Send, Middle, Request, [H::Rdeth, H::Deth], 24, Pmtu),
    op!(0x42, "RD_SEND_LAST", Rd, Send, Last, Request, [H::Rdeth, H::Deth], 24, OneToPmtu),
    op!(
        0x43,
        "RD_SEND_LAST_WITH_IMMEDIATE",
        Rd,
        Send,
        Last,
        Request,
        [H::Rdeth, H::Deth, H::ImmDt],
        28,
        OneToPmtu
    ),
    op!(0x44, "RD_SEND_ONLY", Rd, Send, Only, Request, [H::Rdeth, H::Deth], 24, ZeroToPmtu),
    op!(
        0x45,
        "RD_SEND_ONLY_WITH_IMMEDIATE",
        Rd,
        Send,
        Only,
        Request,
        [H::Rdeth, H::Deth, H::ImmDt],
        28,
        ZeroToPmtu
    ),
    op!(
        0x46,
        "RD_RDMA_WRITE_FIRST",
        Rd,
        RdmaWrite,
        First,
        Request,
        [H::Rdeth, H::Deth, H::Reth],
        40,
        Pmtu
    ),
    op!(
        0x47,
        "RD_RDMA_WRITE_MIDDLE",
        Rd,
        RdmaWrite,
        Middle,
        Request,
        [H::Rdeth, H::Deth],
        24,
        Pmtu
    ),
    op!(
        0x48,
        "RD_RDMA_WRITE_LAST",
        Rd,
        RdmaWrite,
        Last,
        Request,
        [H::Rdeth, H::Deth],
        24,
        OneToPmtu
    ),
    op!(
        0x49,
        "RD_RDMA_WRITE_LAST_WITH_IMMEDIATE",
        Rd,
        RdmaWrite,
        Last,
        Request,
        [H::Rdeth, H::Deth, H::ImmDt],
        28,
        OneToPmtu
    ),
    op!(
        0x4A,
        "RD_RDMA_WRITE_ONLY",
        Rd,
        RdmaWrite,
        Only,
        Request,
        [H::Rdeth, H::Deth, H::Reth],
        40,
        ZeroToPmtu
    ),
    op!(
        0x4B,
        "RD_RDMA_WRITE_ONLY_WITH_IMMEDIATE",
        Rd,
        RdmaWrite,
        Only,
        Request,
        [H::Rdeth, H::Deth, H::Reth, H::ImmDt],
        44,
        ZeroToPmtu
    ),
    op!(
        0x4C,
        "RD_RDMA_READ_REQUEST",
        Rd,
        RdmaRead,
        Only,
        Request,
        [H::Rdeth, H::Deth, H::Reth],
        40,
        Empty
    ),
    op!(
        0x4D,
        "RD_RDMA_READ_RESPONSE_FIRST",
        Rd,
        ReadResponse,
        First,
        Response,
        [H::Rdeth, H::Aeth],
        20,
        Pmtu
    ),
    op!(
        0x4E,
        "RD_RDMA_READ_RESPONSE_MIDDLE",
        Rd,
        ReadResponse,
        Middle,
        Response,
        [H::Rdeth],
        16,
        Pmtu
    ),
    op!(
        0x4F,
        "RD_RDMA_READ_RESPONSE_LAST",
        Rd,
        ReadResponse,
        Last,
        Response,
        [H::Rdeth, H::Aeth],
        20,
        OneToPmtu
    ),
    op!(
        0x50,
        "RD_RDMA_READ_RESPONSE_ONLY",
        Rd,
        ReadResponse,
        Only,
        Response,
        [H::Rdeth, H::Aeth],
        20,
        ZeroToPmtu
    ),
    op!(0x51, "RD_ACKNOWLEDGE", Rd, Acknowledge, Only, Response, [H::Rdeth, H::Aeth], 20, Empty),
    op!(
        0x52,
        "RD_ATOMIC_ACKNOWLEDGE",
        Rd,
        AtomicAcknowledge,
        Only,
        Response,
        [H::Rdeth, H::Aeth, H::AtomicAckEth],
        28,
        Empty
    ),
    op!(
        0x53,
        "RD_COMPARE_SWAP",
        Rd,
        CompareSwap,
        Only,
        Request,
        [H::Rdeth, H::Deth, H::AtomicEth],
        52,
        Empty
    ),
    op!(
        0x54,
        "RD_FETCH_ADD",
        Rd,
        FetchAdd,
        Only,
        Request,
        [H::Rdeth, H::Deth, H::AtomicEth],
        52,
        Empty
    ),
    op!(0x55, "RD_RESYNC", Rd, Resync, Only, Request, [H::Rdeth, H::Deth], 24, Empty),
    // UD: SEND_ONLY with a DETH.
    op!(0x64, "UD_SEND_ONLY", Ud, Send, Only, Request, [H::Deth], 20, ZeroToPmtu),
    op!(
        0x65,
        "UD_SEND_ONLY_WITH_IMMEDIATE",
        Ud,
        Send,
        Only,
        Request,
        [H::Deth, H::ImmDt],
        24,
        ZeroToPmtu
    ),
    // CNP (RoCEv2 annex A17): BTH, then 16 reserved bytes.
    op!(0x81, "CNP", Cnp, Cnp, Only, Congestion, [], 12, Exactly(16)),
    // XRC: the RC operations; requests carry an XRCETH right after the BTH.
    op!(0xA0, "XRC_SEND_FIRST", Xrc, Send, First, Request, [H::Xrceth], 16, Pmtu),
    op!(0xA1, "XRC_SEND_MIDDLE", Xrc, Send, Middle, Request, [H::Xrceth], 16, Pmtu),
    op!(0xA2, "XRC_SEND_LAST", Xrc, Send, Last, Request, [H::Xrceth], 16, OneToPmtu),
    op!(
        0xA3,
        "XRC_SEND_LAST_WITH_IMMEDIATE",
        Xrc,
        Send,
        Last,
        Request,
        [H::Xrceth, H::ImmDt],
        20,
        OneToPmtu
    ),
    op!(0xA4, "XRC_SEND_ONLY", Xrc, Send, Only, Request, [H::Xrceth], 16, ZeroToPmtu),
    op!(
        0xA5,
        "XRC_SEND_ONLY_WITH_IMMEDIATE",
        Xrc,
        Send,
        Only,
        Request,
        [H::Xrceth, H::ImmDt],
        20,
        ZeroToPmtu
    ),
    op!(
        0xA6,
        "XRC_RDMA_WRITE_FIRST",
        Xrc,
        RdmaWrite,
        First,
        Request,
        [H::Xrceth, H::Reth],
        32,
        Pmtu
    ),
    op!(0xA7, "XRC_RDMA_WRITE_MIDDLE", Xrc, RdmaWrite, Middle, Request, [H::Xrceth], 16, Pmtu),
    op!(0xA8, "XRC_RDMA_WRITE_LAST", Xrc, RdmaWrite, Last, Request, [H::Xrceth], 16, OneToPmtu),
    op!(
        0xA9,
        "XRC_RDMA_WRITE_LAST_WITH_IMMEDIATE",
        Xrc,
        RdmaWrite,
        Last,
        Request,
        [H::Xrceth, H::ImmDt],
        20,
        OneToPmtu
    ),
    op!(
        0xAA,
        "XRC_RDMA_WRITE_ONLY",
        Xrc,
        RdmaWrite,
        Only,
        Request,
        [H::Xrceth, H::Reth],
        32,
        ZeroToPmtu
    ),
    op!(
        0xAB,
        "XRC_RDMA_WRITE_ONLY_WITH_IMMEDIATE",
        Xrc,
        RdmaWrite,
        Only,
        Request,
        [H::Xrceth, H::Reth, H::ImmDt],
        36,
        ZeroToPmtu
    ),
    op!(
        0xAC,
        "XRC_RDMA_READ_REQUEST",
        Xrc,
        RdmaRead,
        Only,
        Request,
        [H::Xrceth, H::Reth],
        32,
        Empty
    ),
    op!(
        0xAD,
        "XRC_RDMA_READ_RESPONSE_FIRST",
        Xrc,
        ReadResponse,
        First,
        Response,
        [H::Aeth],
        16,
        Pmtu
    ),
    op!(0xAE, "XRC_RDMA_READ_RESPONSE_MIDDLE", Xrc, ReadResponse, Middle, Response, [], 12, Pmtu),
    op!(
        0xAF,
        "XRC_RDMA_READ_RESPONSE_LAST",
        Xrc,
        ReadResponse,
        Last,
        Response,
        [H::Aeth],
        16,
        OneToPmtu
    ),
    op!(
        0xB0,
        "XRC_RDMA_READ_RESPONSE_ONLY",
        Xrc,
        ReadResponse,
        Only,
        Response,
        [H::Aeth],
        16,
        ZeroToPmtu
    ),
    op!(0xB1, "XRC_ACKNOWLEDGE", Xrc, Acknowledge, Only, Response, [H::Aeth], 16, Empty),
    op!(
        0xB2,
        "XRC_ATOMIC_ACKNOWLEDGE",
        Xrc,
        AtomicAcknowledge,
        Only,
        Response,
        [H::Aeth, H::AtomicAckEth],
        24,
        Empty
    ),
    op!(
        0xB3,
        "XRC_COMPARE_SWAP",
        Xrc,
        CompareSwap,
        Only,
        Request,
        [H::Xrceth, H::AtomicEth],
        44,
        Empty
    ),
    op!(0xB4, "XRC_FETCH_ADD", Xrc, FetchAdd, Only, Request, [H::Xrceth, H::AtomicEth], 44, Empty),
    op!(
        0xB6,
        "XRC_SEND_LAST_WITH_INVALIDATE",
        Xrc,
        Send,
        Last,
        Request,
        [H::Xrceth, H::Ieth],
        20,
        OneToPmtu
    ),
    op!(
        0xB7,
        "XRC_SEND_ONLY_WITH_INVALIDATE",
        Xrc,
        Send,
        Only,
        Request,
        [H::Xrceth, H::Ieth],
        20,
        ZeroToPmtu
    ),
    op!(0xBC, "XRC_FLUSH", Xrc, Flush, Only, Request, [H::Xrceth, H::Feth, H::Reth], 36, Empty),
    op!(
        0xBD,
        "XRC_ATOMIC_WRITE",
        Xrc,
        AtomicWrite,
        Only,
        Request,
        [H::Xrceth, H::Reth],
        32,
        Exactly(8)
    ),
];

const NONE: u8 = u8::MAX;

/// Opcode -> index into [`OPCODES`], built at compile time from the table itself.
// Evaluated by the compiler: an out-of-range index fails the build, it cannot panic at run time.
#[allow(clippy::indexing_slicing)]
static INDEX: [u8; 256] = {
    let mut index = [NONE; 256];
    let mut i = 0;
    while i < OPCODES.len() {
        index[OPCODES[i].opcode as usize] = i as u8;
        i += 1;
    }
    index
};

/// The table row of `opcode`, or `None` for reserved and manufacturer-specific opcodes.
#[inline]
pub fn lookup(opcode: u8) -> Option<&'static OpcodeInfo> {
    let i = *INDEX.get(usize::from(opcode))?;
    if i == NONE {
        return None;
    }
    OPCODES.get(usize::from(i))
}

/// The name of any opcode: the table's, or `<TRANSPORT>_RESERVED` / `VENDOR_SPECIFIC`.
pub fn name(opcode: u8) -> &'static str {
    match lookup(opcode) {
        Some(info) => info.name,
        None => Transport::of(opcode).undefined_name(),
    }
}

/// [`opcode_name`](name) followed by a NUL byte, for C callers: the same strings, from the
/// same table.
pub fn name_with_nul(opcode: u8) -> &'static str {
    match lookup(opcode) {
        Some(info) => info.name_with_nul(),
        None => Transport::of(opcode).undefined_names().1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_with_nul_match_names() {
        for op in 0..=u8::MAX {
            let with = name_with_nul(op);
            assert_eq!(with.strip_suffix('\0'), Some(name(op)), "opcode {op:#04x}");
            assert!(!name(op).contains('\0'));
        }
    }

    #[test]
    fn header_len_is_bth_plus_listed_headers() {
        for info in OPCODES {
            let sum: usize = 12 + info.headers.iter().map(|h| h.len()).sum::<usize>();
            assert_eq!(usize::from(info.header_len), sum, "{}", info.name);
        }
    }

    #[test]
    fn table_is_sorted_unique_and_consistent() {
        for w in OPCODES.windows(2) {
            assert!(w[0].opcode < w[1].opcode, "{} / {}", w[0].name, w[1].name);
        }
        for info in OPCODES {
            assert_eq!(Transport::of(info.opcode), info.transport, "{}", info.name);
            assert_eq!(lookup(info.opcode), Some(info));
            assert!(info.name.starts_with(info.transport.as_str()));
        }
        assert_eq!(OPCODES.len(), 87);
    }

    #[test]
    fn spec_rows() {
        let w = lookup(0x0B).unwrap();
        assert_eq!(w.name, "RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE");
        assert_eq!(w.headers, &[H::Reth, H::ImmDt]);
        assert_eq!(w.header_len, 32);
        assert_eq!(lookup(0x1C).unwrap().headers, &[H::Feth, H::Reth]);
        assert_eq!(lookup(0x1D).unwrap().payload, Exactly(8));
        assert_eq!(lookup(0x64).unwrap().name, "UD_SEND_ONLY");
        assert_eq!(lookup(0x81).unwrap().name, "CNP");
        assert_eq!(lookup(0xA0).unwrap().headers, &[H::Xrceth]);
        assert_eq!(lookup(0xB1).unwrap().headers, &[H::Aeth], "XRC responses carry no XRCETH");
        assert_eq!(lookup(0x4A).unwrap().headers, &[H::Rdeth, H::Deth, H::Reth]);
        assert_eq!(lookup(0x51).unwrap().headers, &[H::Rdeth, H::Aeth]);
        assert_eq!(lookup(0x55).unwrap().name, "RD_RESYNC");
    }

    #[test]
    fn undefined_opcodes() {
        for op in [0x15u8, 0x18, 0x1B, 0x1E, 0x1F, 0x2C, 0x36, 0x56, 0x60, 0x66, 0x80, 0x82, 0xB5] {
            assert!(lookup(op).is_none(), "0x{op:02x}");
        }
        assert_eq!(name(0x15), "RC_RESERVED");
        assert_eq!(name(0xC3), "VENDOR_SPECIFIC");
        assert!((0xC0..=0xFFu8).all(|op| lookup(op).is_none()));
    }
}
