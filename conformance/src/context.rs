//! The per-packet context rule code takes: the frame, the packet, its opcode, and what the
//! connection model says of its connection. One value instead of loose parameter lists.

use roce_parser::{AethKind, NakCode, OpcodeInfo, Roce};

use crate::connections::{CmExchange, ConnId};
use crate::psn::Psn;
use crate::timing::{Negotiated, Timing};
use crate::{FrameInfo, Options};

/// One RC/UC/XRC packet, placed in its connection.
pub(crate) struct Pkt<'a> {
    pub(crate) frame: &'a FrameInfo,
    pub(crate) roce: &'a Roce<'a>,
    pub(crate) info: &'static OpcodeInfo,
    /// The BTH PSN.
    pub(crate) psn: Psn,
    /// The connection of the request stream the packet belongs to.
    pub(crate) conn: Option<ConnId>,
    /// The PMTU to judge by, when known.
    pub(crate) pmtu: Option<u32>,
    /// The connection's P_Key, when known.
    pub(crate) pkey: Option<u16>,
    /// The PSN CM announced for the stream's first request.
    pub(crate) cm_start: Option<Psn>,
    pub(crate) opts: &'a Options,
}

impl Pkt<'_> {
    pub(crate) fn number(&self) -> u64 {
        self.frame.number
    }

    pub(crate) fn ts(&self) -> u64 {
        self.frame.ts_ns
    }

    pub(crate) fn payload_len(&self) -> u32 {
        self.roce.payload_len as u32
    }

    /// A request carrying another P_Key than its connection's (the partition bit aside):
    /// not the connection's own, the responder must drop it.
    pub(crate) fn foreign(&self) -> bool {
        let pkey = self.roce.bth.pkey;
        self.info.role == roce_parser::Role::Request
            && self.pkey.is_some_and(|k| k & 0x7fff != pkey & 0x7fff)
    }

    /// A NAK "PSN sequence error" (the responder saw a PSN after the one it expected).
    pub(crate) fn seq_nak(&self) -> bool {
        self.roce.headers.aeth.is_some_and(|a| {
            a.kind() == AethKind::Nak && NakCode::from_value(a.value()) == NakCode::PsnSequenceError
        })
    }
}

/// An incarnation that ended whose CM exchange was captured: the REQ, the timers measured on
/// both directions, and their comparison (what the REQ-CM-* rules judge, once per incarnation).
pub(crate) struct CmTimers<'a> {
    pub(crate) cm: &'a CmExchange,
    pub(crate) timing: &'a Timing,
    pub(crate) negotiated: &'a Negotiated,
    pub(crate) conn: Option<ConnId>,
}
