//! The responder half of the model: what the responder of a requester stream must answer
//! (RSP-*): ACK/NAK PSNs in range and monotonic, the NAK naming the first missing PSN once
//! per gap, MSN counting completed messages, duplicates acknowledged with ePSN - 1, READ
//! responses, atomic acknowledgements, and AckReq packets acknowledged.
//!
//! It watches the same stream as [`crate::requester::Requester`]: the requests (to know what
//! the responder received, as far as the capture shows) and the responses.

use std::collections::VecDeque;

use roce_parser::headers::{AethKind, NakCode};
use roce_parser::opcode::{OpcodeInfo, Operation, Position};
use roce_parser::Roce;

use crate::finding::{psn as fmt_psn, Sink};
use crate::psn;
use crate::requester::{Ctx, Seen};
use crate::rules;
use crate::FrameInfo;

/// New requests remembered for MSN counting and response matching (bounded).
const REQS: usize = 256;
const READS: usize = 16;

#[derive(Debug, Clone, Copy)]
struct Req {
    psn: u32,
    /// Last PSN consumed (a READ's range end).
    last: u32,
    /// Completing this request advances the MSN.
    completes: bool,
    operation: Operation,
    /// Unknown requests may precede it (first seen, or a capture hole).
    gap_before: bool,
    atomic_acked: bool,
    frame: u64,
}

#[derive(Debug, Clone, Copy)]
struct Read {
    psn: u32,
    n: Option<u32>,
    len: u32,
    frame: u64,
    /// Index of the response expected next (restarts at a re-issued READ's offset).
    next_k: u32,
    /// Offset the current (re-issued) READ started at.
    start_k: u32,
    bytes: u64,
    /// A response was not captured: totals are not judged.
    gap: bool,
}

#[derive(Debug, Clone, Copy)]
struct Ack {
    psn: u32,
    msn: u32,
    frame: u64,
}

/// Responder-side expectations of one stream, bounded in size.
#[derive(Debug, Clone, Default)]
pub struct Responder {
    reqs: VecDeque<Req>,
    reads: VecDeque<Read>,
    last_ack: Option<Ack>,
    /// A "PSN sequence error" NAK whose PSN the requester has not resent yet.
    nak_seq: Option<(u32, u64)>,
    /// A duplicate (already acknowledged) request waiting for its ACK.
    dup: Option<(u32, u64)>,
    /// The oldest AckReq request not yet acknowledged.
    ackreq: Option<(u32, u64, u64)>,
}

impl Responder {
    pub fn entries(&self) -> usize {
        self.reqs.len() + self.reads.len()
    }

    /// A request of the stream, as the requester model classified it.
    pub fn on_request(&mut self, f: &FrameInfo, r: &Roce<'_>, info: &OpcodeInfo, seen: Seen) {
        let p = r.bth.psn;
        if !seen.new {
            if self.last_ack.is_some_and(|a| !psn::before(a.psn, p)) {
                self.dup = Some((p, f.number));
            }
            if self.nak_seq.is_some_and(|(e, _)| e == p) {
                self.nak_seq = None;
            }
            if info.operation == Operation::RdmaRead {
                // A re-issued READ restarts the responses at its offset.
                if let Some(rd) = self.reads.iter_mut().rev().find(|rd| in_read(rd, p)) {
                    let k = psn::diff(p, rd.psn) as u32;
                    rd.next_k = k;
                    rd.start_k = k;
                    rd.bytes = 0;
                    rd.gap = false;
                }
            }
            return;
        }
        let op = info.operation;
        let completes = match op {
            Operation::Send | Operation::RdmaWrite => info.position.ends_message(),
            Operation::RdmaRead
            | Operation::CompareSwap
            | Operation::FetchAdd
            | Operation::AtomicWrite
            | Operation::Flush => true,
            _ => false,
        };
        let n = seen.psns.unwrap_or(1);
        if self.reqs.len() == REQS {
            self.reqs.pop_front();
        }
        self.reqs.push_back(Req {
            psn: p,
            last: psn::add(p, n.saturating_sub(1)),
            completes,
            operation: op,
            gap_before: seen.gap,
            atomic_acked: false,
            frame: f.number,
        });
        if op == Operation::RdmaRead {
            if self.reads.len() == READS {
                self.reads.pop_front();
            }
            let len = r.headers.reth.map_or(0, |h| h.dma_len);
            self.reads.push_back(Read {
                psn: p,
                n: seen.psns,
                len,
                frame: f.number,
                next_k: 0,
                start_k: 0,
                bytes: 0,
                gap: false,
            });
        }
        if r.bth.ackreq && info.transport != roce_parser::Transport::Uc && self.ackreq.is_none() {
            self.ackreq = Some((p, f.number, f.ts_ns));
        }
    }

    /// Messages completed by new requests with their last PSN in (from, to], or `None` when
    /// the capture cannot tell (a hole, or history no longer held).
    fn completed_between(&self, from: u32, to: u32) -> Option<u32> {
        let first = self.reqs.front()?;
        if psn::before(psn::add(from, 1), first.psn) && psn::before(from, to) {
            return None;
        }
        // Requests up to `to` that the capture never showed: unknown.
        let last = self.reqs.back()?;
        if psn::before(last.last, to) {
            return None;
        }
        let mut count = 0u32;
        for q in &self.reqs {
            if psn::before(from, q.last) && !psn::before(to, q.last) {
                if q.gap_before && psn::before(psn::add(from, 1), q.psn) {
                    return None;
                }
                count += u32::from(q.completes);
            }
        }
        Some(count)
    }

    /// A response of the stream. `max_psn` is the highest request PSN captured.
    pub fn on_response(
        &mut self,
        ctx: &Ctx<'_>,
        f: &FrameInfo,
        r: &Roce<'_>,
        info: &OpcodeInfo,
        max_psn: Option<u32>,
        sink: &mut Sink,
    ) {
        let p = r.bth.psn;
        let conn = ctx.conn;
        let aeth = r.headers.aeth;
        let mut read_ok = true;
        match info.operation {
            Operation::ReadResponse => read_ok = self.read_response(ctx, f, r, info, sink),
            Operation::AtomicAcknowledge => match self.reqs.iter_mut().rev().find(|q| q.psn == p) {
                Some(q) if !matches!(q.operation, Operation::CompareSwap | Operation::FetchAdd) => {
                    let (op, fr) = (q.operation, q.frame);
                    sink.report(&rules::RSP_ATOMIC, None, &[fr, f.number], conn, Some(p), || {
                        format!(
                            "ATOMIC_ACKNOWLEDGE for PSN {}, which is a {op:?} request (frame {fr})",
                            fmt_psn(p)
                        )
                    });
                }
                Some(q) => {
                    if q.atomic_acked && self.dup.is_none_or(|(d, _)| d != p) {
                        let fr = q.frame;
                        sink.report(&rules::RSP_ATOMIC, None, &[fr, f.number], conn, Some(p), || {
                                format!("second ATOMIC_ACKNOWLEDGE for the atomic at PSN {} (frame {fr}) with no retransmitted request", fmt_psn(p))
                            });
                    }
                    q.atomic_acked = true;
                }
                None => {}
            },
            Operation::Acknowledge if aeth.is_some_and(|a| a.kind() == AethKind::Ack) => {
                if let Some(q) = self.reqs.iter().rev().find(|q| q.psn == p) {
                    let wrong = match q.operation {
                        Operation::CompareSwap | Operation::FetchAdd => {
                            Some("an ATOMIC_ACKNOWLEDGE")
                        }
                        Operation::AtomicWrite | Operation::Flush => {
                            Some("an empty RDMA_READ_RESPONSE_ONLY")
                        }
                        Operation::RdmaRead => Some("READ responses"),
                        _ => None,
                    };
                    if let Some(want) = wrong {
                        let (op, fr) = (q.operation, q.frame);
                        let rule = if op == Operation::RdmaRead {
                            &rules::RSP_READ
                        } else {
                            &rules::RSP_ATOMIC
                        };
                        sink.report(rule, None, &[fr, f.number], conn, Some(p), || {
                            format!("the {op:?} request at PSN {} (frame {fr}) is answered by a plain ACK instead of {want}", fmt_psn(p))
                        });
                    }
                }
            }
            _ => {}
        }
        let Some(aeth) = aeth else { return };
        // MSN, monotonic ACKs and NAK PSNs are judged on packets that close a response.
        let closes =
            matches!(info.operation, Operation::Acknowledge | Operation::AtomicAcknowledge)
                || (info.operation == Operation::ReadResponse
                    && info.position.ends_message()
                    && read_ok);
        if !closes {
            return;
        }
        match aeth.kind() {
            AethKind::Ack => {
                if let Some(last) = self.last_ack {
                    if psn::before(p, last.psn) && !self.retried_read(p) {
                        match self.dup {
                            Some((d, dframe)) => sink.report(&rules::RSP_DUP, None, &[dframe, f.number], conn, Some(p), || {
                                format!(
                                    "duplicate request PSN {} (frame {dframe}) acknowledged with PSN {} instead of ePSN - 1 = {}",
                                    fmt_psn(d),
                                    fmt_psn(p),
                                    fmt_psn(last.psn)
                                )
                            }),
                            None => sink.report(&rules::RSP_ACK_MONOTONIC, None, &[last.frame, f.number], conn, Some(p), || {
                                format!(
                                    "ACK names PSN {}, before the PSN {} already acknowledged in frame {}",
                                    fmt_psn(p),
                                    fmt_psn(last.psn),
                                    last.frame
                                )
                            }),
                        }
                        self.dup = None;
                        return;
                    }
                }
                self.dup = None;
                self.check_msn(ctx, f, p, aeth.msn, sink);
                if self.ackreq.is_some_and(|(q, _, _)| !psn::before(p, q)) {
                    self.ackreq = None;
                }
                if self.nak_seq.is_some_and(|(e, _)| !psn::before(p, e)) {
                    self.nak_seq = None;
                }
                self.last_ack = Some(Ack { psn: p, msn: aeth.msn, frame: f.number });
            }
            AethKind::Nak | AethKind::RnrNak => {
                let seq_err = aeth.kind() == AethKind::Nak
                    && NakCode::from_value(aeth.value()) == NakCode::PsnSequenceError;
                if seq_err {
                    self.check_nak_seq(ctx, f, p, max_psn, sink);
                }
                // Messages before the NAK'd PSN completed: the MSN says how many.
                self.check_msn(ctx, f, psn::add(p, (1 << 24) - 1), aeth.msn, sink);
                if self.ackreq.is_some_and(|(q, _, _)| !psn::before(p, q)) {
                    self.ackreq = None;
                }
                let before = psn::add(p, (1 << 24) - 1);
                if self.last_ack.is_none_or(|a| psn::before(a.psn, before)) {
                    self.last_ack = Some(Ack { psn: before, msn: aeth.msn, frame: f.number });
                }
            }
            AethKind::Reserved => {}
        }
    }

    fn retried_read(&self, p: u32) -> bool {
        self.reads.iter().any(|rd| rd.start_k > 0 && in_read(rd, p))
    }

    fn check_msn(&mut self, ctx: &Ctx<'_>, f: &FrameInfo, upto: u32, msn: u32, sink: &mut Sink) {
        let Some(last) = self.last_ack else { return };
        let Some(count) = self.completed_between(last.psn, upto) else { return };
        let delta = msn.wrapping_sub(last.msn) & psn::PSN_MASK;
        if delta != count {
            sink.report(&rules::RSP_MSN, None, &[last.frame, f.number], ctx.conn, Some(upto), || {
                format!(
                    "MSN goes from {} (frame {}) to {msn}, but {count} message(s) completed in between",
                    last.msn, last.frame
                )
            });
        }
    }

    fn check_nak_seq(
        &mut self,
        ctx: &Ctx<'_>,
        f: &FrameInfo,
        e: u32,
        max_psn: Option<u32>,
        sink: &mut Sink,
    ) {
        let conn = ctx.conn;
        if let Some((prev, pframe)) = self.nak_seq {
            if prev == e {
                sink.report(&rules::RSP_NAK_SEQ, None, &[pframe, f.number], conn, Some(e), || {
                    format!("second NAK \"PSN sequence error\" naming {} before the requester resent it (first NAK in frame {pframe})", fmt_psn(e))
                });
                return;
            }
        }
        self.nak_seq = Some((e, f.number));
        if let Some(last) = self.last_ack {
            if !psn::before(last.psn, e) {
                sink.report(&rules::RSP_NAK_SEQ, None, &[last.frame, f.number], conn, Some(e), || {
                    format!(
                        "NAK names PSN {} as missing, but PSN {} was already acknowledged (frame {}): the first missing PSN is after it",
                        fmt_psn(e),
                        fmt_psn(last.psn),
                        last.frame
                    )
                });
            }
        }
        // A NAK past everything sent is capture loss or RSP-ACK-RANGE: the requester model
        // judges it lazily.
        let _ = max_psn;
    }

    fn read_response(
        &mut self,
        ctx: &Ctx<'_>,
        f: &FrameInfo,
        r: &Roce<'_>,
        info: &OpcodeInfo,
        sink: &mut Sink,
    ) -> bool {
        let p = r.bth.psn;
        let conn = ctx.conn;
        let Some(rd) = self.reads.iter_mut().rev().find(|rd| in_read(rd, p)) else { return true };
        let Some(n) = rd.n else { return true };
        let k = psn::diff(p, rd.psn) as u32;
        if k != rd.next_k {
            // A response missing from the capture (or a restart): totals are not judged.
            rd.gap = true;
        }
        rd.next_k = k + 1;
        let expected = if rd.start_k == n - 1 {
            Position::Only
        } else if k == rd.start_k {
            Position::First
        } else if k == n - 1 {
            Position::Last
        } else {
            Position::Middle
        };
        let (rframe, len, start_k) = (rd.frame, rd.len, rd.start_k);
        let ok = info.position == expected;
        if !ok {
            sink.report(&rules::RSP_READ, None, &[rframe, f.number], conn, Some(p), || {
                format!(
                    "response {} of {n} to the READ in frame {rframe} is {} instead of READ_RESPONSE_{:?}",
                    k + 1,
                    info.name,
                    expected
                )
            });
            rd.gap = true;
        }
        rd.bytes += r.payload_len as u64;
        if info.position.ends_message() {
            let done = *rd;
            rd.gap = true; // judged once
            if !done.gap && info.position == expected {
                let pmtu = ctx.pmtu.unwrap_or(0);
                let want = u64::from(len).saturating_sub(u64::from(start_k) * u64::from(pmtu));
                if done.bytes != want {
                    sink.report(&rules::RSP_READ, None, &[rframe, f.number], conn, Some(p), || {
                        format!(
                            "READ of {want} bytes (frame {rframe}) answered with {} bytes",
                            done.bytes
                        )
                    });
                }
            }
        }
        ok
    }

    /// At the end of the capture: AckReq packets never acknowledged, if the capture ran long
    /// enough after them.
    pub fn finish(&mut self, ctx: &Ctx<'_>, end_ts: u64, sink: &mut Sink) {
        if let Some((p, frame, ts)) = self.ackreq.take() {
            if end_ts.saturating_sub(ts) >= ctx.opts.ack_timeout_ns {
                sink.report(&rules::RSP_ACKREQ, None, &[frame], ctx.conn, Some(p), || {
                    format!(
                        "request PSN {} asked for an ACK (AckReq) and none came in the {} ms the capture ran after it",
                        fmt_psn(p),
                        end_ts.saturating_sub(ts) / 1_000_000
                    )
                });
            }
        }
    }
}

fn in_read(rd: &Read, p: u32) -> bool {
    psn::within(p, rd.psn, psn::add(rd.psn, rd.n.unwrap_or(1).saturating_sub(1)))
}
