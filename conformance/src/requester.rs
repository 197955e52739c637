//! One requester stream: the requests a QP sends to its peer and the responses that come
//! back. Holds the requester state of the reference model (next PSN, outstanding READs,
//! the message in progress, the last NAK, RNR state) and judges the requester rules
//! (REQ-*) and the capture-integrity findings the PSNs reveal (CAP-GAP, CAP-REORDER).
//!
//! Lazy judgement: an ACK past the highest request PSN seen is held as pending evidence. It
//! is capture loss if later requests go beyond it (CAP-GAP), a reordered capture if the
//! request it acknowledges turns up (CAP-REORDER), and a responder fault if requests keep
//! coming below it after the reorder window (RSP-ACK-RANGE).

use std::collections::VecDeque;
use std::hash::{BuildHasher, Hash, Hasher};

use crate::hash::FastState;

use roce_parser::headers::aeth::rnr_timer_us;
use roce_parser::headers::{AethKind, NakCode};
use roce_parser::opcode::{OpcodeInfo, Operation, Position};
use roce_parser::Roce;

use crate::finding::{psn as fmt_psn, ConnId, Sink};
use crate::psn;
use crate::rules;
use crate::{FrameInfo, Options};

/// Requests remembered for retransmission checks (bounded: the state never grows with the
/// capture).
const RING: usize = 64;
/// Outstanding READs remembered.
const READS: usize = 16;
/// Largest DMA length the IBTA allows.
const MAX_DMA_LEN: u32 = 1 << 31;

#[derive(Debug, Clone, Copy)]
struct Sent {
    psn: u32,
    opcode: u8,
    payload_len: u32,
    digest: u64,
    frame: u64,
}

#[derive(Debug, Clone, Copy)]
struct ReadReq {
    psn: u32,
    /// PSNs consumed (None while the PMTU is unknown).
    n: Option<u32>,
    va: u64,
    len: u32,
    frame: u64,
}

#[derive(Debug, Clone, Copy)]
struct Gbn {
    nak_psn: u32,
    nak_frame: u64,
    /// The PSN the requester must resend next.
    expect: u32,
    /// Highest PSN sent when the NAK came: go-back-N ends past it.
    upto: u32,
    started: bool,
}

#[derive(Debug, Clone, Copy)]
struct Rnr {
    psn: u32,
    nak_frame: u64,
    nak_ts: u64,
    until_ns: u64,
    timer_us: u32,
}

#[derive(Debug, Clone, Copy)]
struct Pending {
    psn: u32,
    frame: u64,
    ts: u64,
    /// Highest request PSN when the response came.
    max_then: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Msg {
    Idle,
    InProgress { op: Operation, first_frame: u64, bytes: u64, dma_len: Option<u32> },
}

/// What a requester stream knows, judged lazily and bounded in size.
#[derive(Debug, Clone)]
pub struct Requester {
    /// Highest PSN consumed by new requests (a READ counts its whole range).
    max_psn: Option<u32>,
    /// Set when CM announced the first PSN: the first request must carry it.
    expected_first: Option<u32>,
    last_frame: u64,
    last_ts: u64,
    msg: Msg,
    /// A message boundary has been seen since the last loss of sync.
    synced: bool,
    ring: VecDeque<Sent>,
    reads: VecDeque<ReadReq>,
    /// A READ whose PSN range is unknown (PMTU unknown): the next new PSN may jump by up to
    /// `max_psns`.
    read_slack: Option<(u32, u32)>,
    gbn: Option<Gbn>,
    rnr: Option<Rnr>,
    ack_beyond: Option<Pending>,
    highest_resp_psn: Option<u32>,
    pub packets: u64,
    pub responses: u64,
    pub retransmissions: u64,
    /// PSNs known to be missing from the capture.
    pub missing: u64,
    /// Why parts of the stream were not judged (first reason seen).
    pub partly: Option<&'static str>,
}

/// How a request was classified.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seen {
    /// A PSN not sent before (false: a retransmission).
    pub new: bool,
    /// PSNs before it are unknown (first request seen, or a hole in the capture).
    pub gap: bool,
    /// PSNs the request consumes (None: a READ while the PMTU is unknown).
    pub psns: Option<u32>,
}

/// What a stream needs from its connection.
pub struct Ctx<'o> {
    pub conn: Option<ConnId>,
    pub pmtu: Option<u32>,
    pub opts: &'o Options,
}

/// What a retransmission must repeat: the extended headers and the payload. The payload goes
/// through crc32fast (SIMD, ~10 GB/s); SipHash over it was 13% of `check`'s time.
fn digest(r: &Roce<'_>) -> u64 {
    let mut h = FastState::default().build_hasher();
    r.headers.hash(&mut h);
    h.write_usize(r.payload.len());
    h.write_u32(crc32fast::hash(r.payload));
    h.finish()
}

impl Default for Requester {
    fn default() -> Self {
        Requester {
            max_psn: None,
            expected_first: None,
            last_frame: 0,
            last_ts: 0,
            msg: Msg::Idle,
            synced: false,
            ring: VecDeque::with_capacity(RING),
            reads: VecDeque::new(),
            read_slack: None,
            gbn: None,
            rnr: None,
            ack_beyond: None,
            highest_resp_psn: None,
            packets: 0,
            responses: 0,
            retransmissions: 0,
            missing: 0,
            partly: None,
        }
    }
}

impl Requester {
    /// CM announced the PSN of the first request (REP Starting PSN for requests to the
    /// passive side, REQ Starting PSN for requests to the active side).
    pub fn expect_first_psn(&mut self, first: u32) {
        if self.max_psn.is_none() {
            self.expected_first = Some(first);
            self.synced = true;
        }
    }

    /// Entries held (for the checker's state accounting).
    pub fn entries(&self) -> usize {
        self.ring.len() + self.reads.len()
    }

    pub fn has_seen_requests(&self) -> bool {
        self.max_psn.is_some()
    }

    /// Highest request PSN seen.
    pub fn max_psn(&self) -> Option<u32> {
        self.max_psn
    }

    fn psns_of(&self, r: &Roce<'_>, info: &OpcodeInfo, pmtu: Option<u32>) -> Option<u32> {
        if info.operation != Operation::RdmaRead {
            return Some(1);
        }
        let len = r.headers.reth.map_or(0, |h| h.dma_len);
        pmtu.map(|m| psn::read_psns(len, m))
    }

    /// A request packet of this stream; says how it was classified (for the responder
    /// model, which judges the answers).
    pub fn on_request(
        &mut self,
        ctx: &Ctx<'_>,
        f: &FrameInfo,
        r: &Roce<'_>,
        info: &OpcodeInfo,
        sink: &mut Sink,
    ) -> Seen {
        self.packets += 1;
        let p = r.bth.psn;
        let n = self.psns_of(r, info, ctx.pmtu);
        let Some(max) = self.max_psn else {
            // First request seen: learn (or check what CM announced).
            if let Some(first) = self.expected_first.take() {
                if p != first {
                    let d = psn::diff(p, first);
                    if d > 0 && !ctx.opts.assume_complete {
                        self.missing += d as u64;
                        sink.report(&rules::CAP_GAP, None, &[f.number], ctx.conn, Some(p), || {
                            format!(
                                "first request captured has PSN {} but CM announced {}: {d} packets missing from the capture",
                                fmt_psn(p),
                                fmt_psn(first)
                            )
                        });
                    } else {
                        sink.report(&rules::REQ_PSN, None, &[f.number], ctx.conn, Some(p), || {
                            format!(
                                "first request has PSN {} but the CM exchange announced starting PSN {}",
                                fmt_psn(p),
                                fmt_psn(first)
                            )
                        });
                    }
                }
            } else if !info.position.starts_message() {
                self.partly.get_or_insert("capture starts inside a message");
            }
            self.accept_new(ctx, f, r, info, n, sink);
            return Seen { new: true, gap: true, psns: n };
        };
        let d = psn::diff(p, max);
        if d <= 0 {
            self.retransmission(ctx, f, r, info, n, sink);
            return Seen { new: false, gap: false, psns: n };
        }
        if d > 1 {
            let skipped = (d - 1) as u32;
            let slack = self.read_slack.take();
            let explained_by_read = slack.is_some_and(|(_, most)| skipped < most);
            if !explained_by_read {
                let lo = psn::add(max, 1);
                let hi = psn::add(p, (1 << 24) - 1);
                if ctx.opts.assume_complete {
                    sink.report(
                        &rules::REQ_PSN,
                        None,
                        &[self.last_frame, f.number],
                        ctx.conn,
                        Some(p),
                        || {
                            format!(
                                "PSN jumps from {} to {}: {skipped} PSN(s) {}..{} were never sent",
                                fmt_psn(max),
                                fmt_psn(p),
                                lo,
                                hi
                            )
                        },
                    );
                } else {
                    self.missing += u64::from(skipped);
                    sink.report(&rules::CAP_GAP, None, &[self.last_frame, f.number], ctx.conn, Some(lo), || {
                        format!(
                            "{skipped} request PSN(s) {}..{} missing from the capture between frames {} and {} (no NAK, no retransmission)",
                            lo, hi, self.last_frame, f.number
                        )
                    });
                    // The message state is unknown across the hole.
                    if !info.position.starts_message() {
                        self.synced = false;
                    }
                    self.msg = Msg::Idle;
                }
            }
        } else {
            self.read_slack = None;
        }
        self.resolve_pending(ctx, f, p, sink);
        self.accept_new(ctx, f, r, info, n, sink);
        Seen { new: true, gap: d > 1, psns: n }
    }

    /// An ACK named a PSN past the highest request seen: settle it now that request `p`
    /// arrived.
    fn resolve_pending(&mut self, ctx: &Ctx<'_>, f: &FrameInfo, p: u32, sink: &mut Sink) {
        let Some(a) = self.ack_beyond else { return };
        if p == a.psn {
            self.ack_beyond = None;
            sink.report(&rules::CAP_REORDER, None, &[a.frame, f.number], ctx.conn, Some(p), || {
                format!(
                    "response in frame {} names PSN {} before the request (frame {}) was captured, {} us later",
                    a.frame,
                    fmt_psn(p),
                    f.number,
                    f.ts_ns.saturating_sub(a.ts) / 1000
                )
            });
        } else if psn::before(a.psn, p) {
            // Requests went beyond the acknowledged PSN: it was sent, the capture lost it
            // (the jump was already reported as CAP-GAP).
            self.ack_beyond = None;
        } else if f.ts_ns.saturating_sub(a.ts) > ctx.opts.reorder_window_ns {
            self.ack_beyond = None;
            sink.report(&rules::RSP_ACK_RANGE, None, &[a.frame, f.number], ctx.conn, Some(a.psn), || {
                format!(
                    "response in frame {} names PSN {}, but the requester had sent only up to {} and its later requests (frame {}) continue below it",
                    a.frame,
                    fmt_psn(a.psn),
                    fmt_psn(a.max_then),
                    f.number
                )
            });
        }
    }

    /// A request with a new PSN: message sequence, lengths, DMA length, alignment.
    fn accept_new(
        &mut self,
        ctx: &Ctx<'_>,
        f: &FrameInfo,
        r: &Roce<'_>,
        info: &OpcodeInfo,
        n: Option<u32>,
        sink: &mut Sink,
    ) {
        let p = r.bth.psn;
        self.check_message(ctx, f, r, info, sink);
        if matches!(info.operation, Operation::CompareSwap | Operation::FetchAdd) {
            if let Some(a) = r.headers.atomic_eth {
                if a.va % 8 != 0 {
                    sink.report(
                        &rules::REQ_ATOMIC_ALIGN,
                        None,
                        &[f.number],
                        ctx.conn,
                        Some(p),
                        || {
                            format!(
                                "{} to VA 0x{:016x}, which is not 8-byte aligned",
                                info.name, a.va
                            )
                        },
                    );
                }
            }
        }
        if info.operation == Operation::RdmaRead {
            let reth = r.headers.reth.unwrap_or_default();
            if reth.dma_len > MAX_DMA_LEN {
                sink.report(&rules::REQ_DMALEN, None, &[f.number], ctx.conn, Some(p), || {
                    format!("READ DMA Length {} exceeds 2^31", reth.dma_len)
                });
            }
            if self.reads.len() == READS {
                self.reads.pop_front();
            }
            self.reads.push_back(ReadReq {
                psn: p,
                n,
                va: reth.va,
                len: reth.dma_len,
                frame: f.number,
            });
            if n.is_none() {
                self.read_slack = Some((p, psn::read_psns(reth.dma_len, 256)));
            }
        }
        self.max_psn = Some(psn::add(p, n.unwrap_or(1).saturating_sub(1)));
        if self.ring.len() == RING {
            self.ring.pop_front();
        }
        self.ring.push_back(Sent {
            psn: p,
            opcode: r.bth.opcode,
            payload_len: r.payload_len as u32,
            digest: digest(r),
            frame: f.number,
        });
        self.last_frame = f.number;
        self.last_ts = f.ts_ns;
    }

    fn check_message(
        &mut self,
        ctx: &Ctx<'_>,
        f: &FrameInfo,
        r: &Roce<'_>,
        info: &OpcodeInfo,
        sink: &mut Sink,
    ) {
        let p = r.bth.psn;
        let pos = info.position;
        let len = r.payload_len as u64;
        if let Some(pmtu) = ctx.pmtu {
            let bad = match pos {
                Position::First | Position::Middle => len != u64::from(pmtu),
                Position::Last => len == 0 || len > u64::from(pmtu),
                Position::Only => len > u64::from(pmtu),
            };
            if bad && info.payload.allows_payload() {
                let want = match pos {
                    Position::First | Position::Middle => format!("exactly the PMTU ({pmtu})"),
                    Position::Last => format!("1..{pmtu} bytes"),
                    Position::Only => format!("0..{pmtu} bytes"),
                };
                sink.report(&rules::REQ_LENGTH, None, &[f.number], ctx.conn, Some(p), || {
                    format!("{} carries {len} payload bytes; it must carry {want}", info.name)
                });
            }
        }
        if !self.synced {
            if pos.starts_message() {
                self.synced = true;
            } else {
                return;
            }
        }
        let op = info.operation;
        let reth_len = r.headers.reth.map(|h| h.dma_len);
        if let Some(d) = reth_len {
            if op == Operation::RdmaWrite && d > MAX_DMA_LEN {
                sink.report(&rules::REQ_DMALEN, None, &[f.number], ctx.conn, Some(p), || {
                    format!("WRITE DMA Length {d} exceeds 2^31")
                });
            }
        }
        match (self.msg, pos) {
            (Msg::InProgress { first_frame, op: o, .. }, Position::First | Position::Only) => {
                sink.report(&rules::REQ_MSG_SEQ, None, &[first_frame, f.number], ctx.conn, Some(p), || {
                    format!(
                        "{} starts a new message before the LAST of the {o:?} message begun in frame {first_frame}: messages interleave",
                        info.name
                    )
                });
                self.msg = Msg::Idle;
            }
            (Msg::Idle, Position::Middle | Position::Last) => {
                sink.report(&rules::REQ_MSG_SEQ, None, &[f.number], ctx.conn, Some(p), || {
                    format!("{} without a FIRST: no message is in progress", info.name)
                });
                return;
            }
            (Msg::InProgress { op: o, first_frame, .. }, Position::Middle | Position::Last)
                if o != op =>
            {
                sink.report(
                    &rules::REQ_MSG_SEQ,
                    None,
                    &[first_frame, f.number],
                    ctx.conn,
                    Some(p),
                    || {
                        format!(
                            "{} continues a {o:?} message begun in frame {first_frame}",
                            info.name
                        )
                    },
                );
                self.msg = Msg::Idle;
                return;
            }
            _ => {}
        }
        match pos {
            Position::First => {
                self.msg =
                    Msg::InProgress { op, first_frame: f.number, bytes: len, dma_len: reth_len }
            }
            Position::Middle => {
                if let Msg::InProgress { bytes, .. } = &mut self.msg {
                    *bytes += len;
                }
            }
            Position::Last | Position::Only => {
                let (total, dma, first) = match self.msg {
                    Msg::InProgress { bytes, dma_len, first_frame, .. } => {
                        (bytes + len, dma_len, first_frame)
                    }
                    Msg::Idle => (len, reth_len, f.number),
                };
                if op == Operation::RdmaWrite {
                    if let Some(d) = dma {
                        if total != u64::from(d) {
                            let frames = if first == f.number {
                                vec![f.number]
                            } else {
                                vec![first, f.number]
                            };
                            sink.report(&rules::REQ_DMALEN, None, &frames, ctx.conn, Some(p), || {
                                format!("WRITE message carries {total} bytes but its RETH DMA Length is {d}")
                            });
                        }
                    }
                }
                self.msg = Msg::Idle;
            }
        }
    }

    /// A request whose PSN is not new.
    fn retransmission(
        &mut self,
        ctx: &Ctx<'_>,
        f: &FrameInfo,
        r: &Roce<'_>,
        info: &OpcodeInfo,
        n: Option<u32>,
        sink: &mut Sink,
    ) {
        self.retransmissions += 1;
        let p = r.bth.psn;
        let conn = ctx.conn;
        let orig = self.ring.iter().rev().find(|s| s.psn == p).copied();
        let in_read = self.reads.iter().find(|rd| {
            let n = rd.n.unwrap_or(1);
            n > 1 && psn::within(p, psn::add(rd.psn, 1), psn::add(rd.psn, n - 1))
        });
        if orig.is_none() && info.operation != Operation::RdmaRead {
            if let Some(rd) = in_read {
                sink.report(&rules::REQ_PSN, None, &[rd.frame, f.number], conn, Some(p), || {
                    format!(
                        "{} uses PSN {}, which lies inside the PSN range consumed by the READ at PSN {} (frame {})",
                        info.name,
                        fmt_psn(p),
                        fmt_psn(rd.psn),
                        rd.frame
                    )
                });
                self.last_ts = f.ts_ns;
                return;
            }
        }
        let mut explained = false;
        let step = n.unwrap_or(1);
        if let Some(g) = &mut self.gbn {
            explained = true;
            if p == g.expect {
                g.started = true;
                g.expect = psn::add(p, step);
                if psn::before(g.upto, g.expect) {
                    self.gbn = None;
                }
            } else {
                let g0 = *g;
                g.started = true;
                g.expect = psn::add(p, step);
                if psn::before(g.upto, g.expect) {
                    self.gbn = None;
                }
                sink.report(&rules::REQ_GBN, None, &[g0.nak_frame, f.number], conn, Some(p), || {
                    if g0.started {
                        format!("go-back-N out of order: after the NAK naming {} (frame {}), expected PSN {} next but the requester resent {}", fmt_psn(g0.nak_psn), g0.nak_frame, fmt_psn(g0.expect), fmt_psn(p))
                    } else {
                        format!("after the NAK \"PSN sequence error\" naming {} (frame {}), the requester resent PSN {} first instead of {}", fmt_psn(g0.nak_psn), g0.nak_frame, fmt_psn(p), fmt_psn(g0.expect))
                    }
                });
            }
        }
        if let Some(rn) = self.rnr {
            if p == rn.psn {
                explained = true;
                self.rnr = None;
                // One microsecond of slack for timestamp rounding.
                if f.ts_ns + 1_000 < rn.until_ns {
                    let waited = f.ts_ns.saturating_sub(rn.nak_ts);
                    sink.report(&rules::REQ_RNR_WAIT, None, &[rn.nak_frame, f.number], conn, Some(p), || {
                        format!(
                            "PSN {} resent {}.{:03} ms after the RNR NAK (frame {}), before its {}.{:03} ms timer expired",
                            fmt_psn(p),
                            waited / 1_000_000,
                            (waited / 1000) % 1000,
                            rn.nak_frame,
                            rn.timer_us / 1000,
                            rn.timer_us % 1000
                        )
                    });
                }
            }
        }
        if info.operation == Operation::RdmaRead {
            if let Some(rd) = self
                .reads
                .iter()
                .rev()
                .find(|rd| psn::within(p, rd.psn, psn::add(rd.psn, rd.n.unwrap_or(1) - 1)))
                .copied()
            {
                let k = psn::diff(p, rd.psn) as u64;
                let reth = r.headers.reth.unwrap_or_default();
                if let Some(pmtu) = ctx.pmtu {
                    let va = rd.va.wrapping_add(k * u64::from(pmtu));
                    let len = u64::from(rd.len).saturating_sub(k * u64::from(pmtu));
                    if reth.va != va || u64::from(reth.dma_len) != len {
                        sink.report(&rules::REQ_READ_RETRY, None, &[rd.frame, f.number], conn, Some(p), || {
                            format!(
                                "READ re-issued at PSN {} ({k} PSNs into the READ of frame {}) with VA 0x{:x} length {}; expected VA 0x{va:x} length {len} (same end address)",
                                fmt_psn(p),
                                rd.frame,
                                reth.va,
                                reth.dma_len
                            )
                        });
                    }
                }
            }
        }
        if !explained && self.highest_resp_psn.is_some_and(|h| psn::before(p, h)) {
            // A response to a later PSN implies the earlier request was lost (implicit NAK).
            explained = true;
        }
        if !explained && f.ts_ns.saturating_sub(self.last_ts) >= ctx.opts.retx_timeout_ns {
            explained = true;
        }
        if !explained {
            sink.report(&rules::REQ_RETX_CAUSE, None, &[orig.map_or(f.number, |o| o.frame), f.number], conn, Some(p), || {
                format!(
                    "PSN {} retransmitted {} us after the previous request with no NAK, RNR NAK, implicit NAK or timeout to explain it",
                    fmt_psn(p),
                    f.ts_ns.saturating_sub(self.last_ts) / 1000
                )
            });
        }
        if let Some(o) = orig {
            let same_op = o.opcode == r.bth.opcode;
            let same_len = o.payload_len == r.payload_len as u32;
            let same_hdr = info.operation == Operation::RdmaRead || o.digest == digest(r);
            if !(same_op && same_len && same_hdr) {
                let what = if !same_op {
                    format!(
                        "opcode {} instead of {}",
                        info.name,
                        roce_parser::opcode::name(o.opcode)
                    )
                } else if !same_len {
                    format!("{} payload bytes instead of {}", r.payload_len, o.payload_len)
                } else {
                    "different header fields or payload".to_string()
                };
                sink.report(
                    &rules::REQ_RETX_SAME,
                    None,
                    &[o.frame, f.number],
                    conn,
                    Some(p),
                    || {
                        format!(
                            "retransmission of PSN {} (first sent in frame {}) carries {what}",
                            fmt_psn(p),
                            o.frame
                        )
                    },
                );
            }
        }
        self.last_frame = f.number;
        self.last_ts = f.ts_ns;
    }

    /// A response to this stream's requests.
    pub fn on_response(
        &mut self,
        _ctx: &Ctx<'_>,
        f: &FrameInfo,
        r: &Roce<'_>,
        info: &OpcodeInfo,
        _sink: &mut Sink,
    ) {
        self.responses += 1;
        let p = r.bth.psn;
        let Some(max) = self.max_psn else {
            self.partly.get_or_insert("responses captured before any request");
            return;
        };
        if psn::before(max, p) {
            if self.ack_beyond.is_none() {
                self.ack_beyond =
                    Some(Pending { psn: p, frame: f.number, ts: f.ts_ns, max_then: max });
            }
        } else if self.highest_resp_psn.is_none_or(|h| psn::before(h, p)) {
            self.highest_resp_psn = Some(p);
        }
        let Some(aeth) = r.headers.aeth else { return };
        match aeth.kind() {
            AethKind::Nak if NakCode::from_value(aeth.value()) == NakCode::PsnSequenceError => {
                let upto = if psn::before(max, p) { p } else { max };
                self.gbn =
                    Some(Gbn { nak_psn: p, nak_frame: f.number, expect: p, upto, started: false });
            }
            AethKind::RnrNak => {
                let timer_us = rnr_timer_us(aeth.value());
                self.rnr = Some(Rnr {
                    psn: p,
                    nak_frame: f.number,
                    nak_ts: f.ts_ns,
                    until_ns: f.ts_ns + u64::from(timer_us) * 1000,
                    timer_us,
                });
            }
            AethKind::Ack
                if info.operation == Operation::Acknowledge || info.position.ends_message() =>
            {
                // Everything up to the NAK'd range acknowledged: go-back-N is over.
                if let Some(g) = self.gbn {
                    if !psn::before(p, g.upto) {
                        self.gbn = None;
                    }
                }
            }
            _ => {}
        }
    }

    /// At the end of the capture: pending evidence becomes a finding.
    pub fn finish(&mut self, ctx: &Ctx<'_>, sink: &mut Sink) {
        if let Some(a) = self.ack_beyond.take() {
            let missing = psn::diff(a.psn, a.max_then).max(0) as u64;
            self.missing += missing;
            sink.report(&rules::CAP_GAP, None, &[a.frame], ctx.conn, Some(a.psn), || {
                format!(
                    "response in frame {} acknowledges PSN {}, but requests were captured only up to {}: {missing} request(s) missing from the capture",
                    a.frame,
                    fmt_psn(a.psn),
                    fmt_psn(a.max_then)
                )
            });
        }
    }
}
