//! The responder half of a stream: what the responder of a requester stream must answer.
//! It watches the requests (to know what the responder received, as far as the capture
//! shows) and the responses, and judges the responder rules, one function per rule:
//!
//! | rule | function |
//! |---|---|
//! | RSP-READ | [`Responder::read_response`] (plain ACK to a READ: [`Responder::answer_kind`]) |
//! | RSP-ATOMIC | [`Responder::atomic_ack`], [`Responder::answer_kind`] |
//! | RSP-DUP-ATOMIC | [`Responder::atomic_replay`] |
//! | RSP-PKEY | [`Responder::partition`] |
//! | RSP-DUP, RSP-ACK-MONOTONIC | [`Responder::ack_order`] |
//! | RSP-MSN | [`Responder::msn`] |
//! | RSP-NAK-SEQ | [`Responder::nak_seq`] |
//! | RSP-ACKREQ | [`Responder::finish`] |
//! | RSP-RNR-TIMER | [`rnr_timer`] (with `--rnr-timer`) |
//!
//! READ responses are paired with the READ whose PSN range they answer: every READ the
//! requester sends (a retry included, with its own DMA length) is an *issue* of its own, and
//! a response goes to the issue it continues, so responses to an earlier issue still arriving
//! after a retry are not judged against the retry. A duplicate READ is re-executed by the
//! responder (IBTA 9.7.5.2): its responses on the READ's own PSNs are correct, not duplicates.

use std::collections::VecDeque;

use roce_parser::{AethKind, Operation, Position};

use crate::connections::ConnId;
use crate::context::Pkt;
use crate::finding::Judge;
use crate::psn::{Psn, PSN_MASK};
use crate::requester::Seen;
use crate::rules;

/// New requests remembered for MSN counting and response matching (bounded).
const REQS: usize = 256;
/// READ issues remembered.
const READS: usize = 16;

#[derive(Debug, Clone, Copy)]
struct Req {
    psn: Psn,
    /// Last PSN consumed (a READ's range end).
    last: Psn,
    /// Completing this request advances the MSN.
    completes: bool,
    operation: Operation,
    /// Unknown requests may precede it (first seen, or a capture hole).
    gap_before: bool,
    /// A READ sized before the PMTU was known: its DMA length.
    unsized_len: Option<u32>,
    /// The first ATOMIC_ACKNOWLEDGE of an atomic: its frame and the original value it
    /// returned (what the answer to a duplicate must repeat).
    atomic_acked: Option<(u64, Option<u64>)>,
    frame: u64,
}

/// One READ request as sent (the original or a retry).
#[derive(Debug, Clone, Copy)]
struct ReadIssue {
    psn: Psn,
    /// PSNs its responses use (None while the PMTU is unknown).
    n: Option<u32>,
    len: u32,
    frame: u64,
    /// The response PSN expected next.
    next: Psn,
    bytes: u64,
    /// A response was not captured: totals are not judged.
    gap: bool,
    /// Sent on a PSN sent before (a retry or a duplicate READ).
    retry: bool,
    done: bool,
}

impl ReadIssue {
    fn contains(&self, p: Psn) -> bool {
        self.n.is_some_and(|n| p.within(self.psn, self.psn + (n - 1)))
    }

    fn expected(&self, p: Psn) -> Position {
        let n = self.n.unwrap_or(1);
        let k = (p - self.psn) as u32;
        if n == 1 {
            Position::Only
        } else if k == 0 {
            Position::First
        } else if k == n - 1 {
            Position::Last
        } else {
            Position::Middle
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Ack {
    psn: Psn,
    msn: u32,
    frame: u64,
}

/// The AETH side of a response that closes an answer (an ACK, a NAK, an atomic ACK, the
/// LAST or ONLY READ response): what ordering, MSN and NAK rules judge.
#[derive(Debug, Clone, Copy)]
pub(crate) struct AckEvent {
    psn: Psn,
    msn: u32,
    kind: AethKind,
    seq_err: bool,
    frame: u64,
    /// The LAST/ONLY response to a READ retry or duplicate READ.
    read_retry: bool,
}

/// Responder-side expectations of one stream, bounded in size.
#[derive(Debug, Clone, Default)]
pub(crate) struct Responder {
    reqs: VecDeque<Req>,
    reads: VecDeque<ReadIssue>,
    last_ack: Option<Ack>,
    /// A "PSN sequence error" NAK whose PSN the requester has not resent yet.
    nak_seq: Option<(Psn, u64)>,
    /// A duplicate (already acknowledged) SEND/WRITE waiting for its ACK.
    dup: Option<(Psn, u64)>,
    /// The oldest AckReq request not yet acknowledged.
    ackreq: Option<(Psn, u64, u64)>,
    /// A request from outside the connection's partition (PSN, frame, its P_Key), not yet
    /// resent with the right P_Key: the responder must drop it silently.
    foreign: Option<(Psn, u64, u16)>,
    /// The next ACK sets the MSN baseline instead of being judged against it.
    rebase_msn: bool,
    /// A READ was sized before the PMTU was known ([`Responder::size_reads`]).
    unsized_reads: bool,
}

impl Responder {
    pub(crate) fn entries(&self) -> usize {
        self.reqs.len() + self.reads.len()
    }

    /// A request from outside the connection's partition: the responder must drop it,
    /// nothing of it is received (RSP-PKEY if a response answers it).
    pub(crate) fn on_foreign(&mut self, x: &Pkt<'_>) {
        self.foreign = Some((x.psn, x.number(), x.roce.bth.pkey));
    }

    /// A request of the stream, as the requester model classified it.
    pub(crate) fn on_request(&mut self, x: &Pkt<'_>, seen: Seen) {
        let p = x.psn;
        let new = seen.new;
        if self.foreign.is_some_and(|(f, _, _)| f == p) {
            // The requester's own request on the PSN of the dropped one.
            self.foreign = None;
        }
        let op = x.info.operation;
        if op == Operation::RdmaRead {
            self.read_issue(x, seen);
            self.unsized_reads |= seen.psns.is_none();
        }
        if !new {
            if op != Operation::RdmaRead && self.last_ack.is_some_and(|a| p <= a.psn) {
                self.dup = Some((p, x.number()));
            }
            if self.nak_seq.is_some_and(|(e, _)| e == p) {
                self.nak_seq = None;
            }
            return;
        }
        let completes = match op {
            Operation::Send | Operation::RdmaWrite => x.info.position.ends_message(),
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
            last: p + n.saturating_sub(1),
            completes,
            operation: op,
            gap_before: seen.gap,
            unsized_len: (op == Operation::RdmaRead && seen.psns.is_none())
                .then(|| x.roce.headers.reth.map_or(0, |h| h.dma_len)),
            atomic_acked: None,
            frame: x.number(),
        });
        if x.roce.bth.ackreq
            && x.info.transport != roce_parser::Transport::Uc
            && self.ackreq.is_none()
        {
            self.ackreq = Some((p, x.number(), x.ts()));
        }
    }

    /// The PMTU is known now: READs sent before it was get their PSN range.
    pub(crate) fn size_reads(&mut self, pmtu: u32) {
        if !std::mem::take(&mut self.unsized_reads) {
            return;
        }
        for rd in self.reads.iter_mut().filter(|rd| rd.n.is_none()) {
            rd.n = Some(crate::psn::read_psns(rd.len, pmtu));
        }
        for q in self.reqs.iter_mut() {
            if let Some(len) = q.unsized_len.take() {
                q.last = q.psn + (crate::psn::read_psns(len, pmtu) - 1);
            }
        }
    }

    /// A READ response on a PSN of a READ the requester sent (an original or a re-issue,
    /// whose range may reach past the original's).
    pub(crate) fn answers_read(&self, x: &Pkt<'_>) -> bool {
        x.info.operation == Operation::ReadResponse
            && self.reads.iter().any(|rd| !rd.done && rd.contains(x.psn))
    }

    fn read_issue(&mut self, x: &Pkt<'_>, seen: Seen) {
        if self.reads.len() == READS {
            self.reads.pop_front();
        }
        self.reads.push_back(ReadIssue {
            psn: x.psn,
            n: seen.psns,
            len: x.roce.headers.reth.map_or(0, |h| h.dma_len),
            frame: x.number(),
            next: x.psn,
            bytes: 0,
            gap: false,
            retry: !seen.new,
            done: false,
        });
    }

    /// Messages completed by new requests with their last PSN in (from, to], or `None` when
    /// the capture cannot tell (a hole, or history no longer held).
    fn completed_between(&self, from: Psn, to: Psn) -> Option<u32> {
        let first = self.reqs.front()?;
        if from + 1 < first.psn && from < to {
            return None;
        }
        // Requests up to `to` that the capture never showed: unknown.
        let last = self.reqs.back()?;
        if last.last < to {
            return None;
        }
        // New requests arrive in PSN order (each starts after the last one's range ends), so
        // the ones in (from, to] are a run at the back: walk back over those after `to`, count
        // down to `from`, stop. An ACK costs the requests in flight and those it covers, not
        // the whole history (a scan of all 256 was a third of `check`'s instructions).
        let mut count = 0u32;
        for q in self.reqs.iter().rev() {
            if from < q.last && q.last <= to {
                if q.gap_before && from + 1 < q.psn {
                    return None;
                }
                count += u32::from(q.completes);
            } else if q.last <= to {
                // At or before `from`: so is everything older.
                break;
            }
        }
        Some(count)
    }

    /// A response of the stream: the checks of what kind of answer it is, now; the AETH
    /// event it carries, when it closes an answer, for [`Self::on_ack`] (now, or once the
    /// stream has settled a response that was ahead of the capture).
    pub(crate) fn answer(&mut self, x: &Pkt<'_>, judge: &mut Judge) -> Option<AckEvent> {
        let aeth = x.roce.headers.aeth;
        let mut read = (true, false);
        match x.info.operation {
            Operation::ReadResponse => read = self.read_response(x, judge),
            Operation::AtomicAcknowledge => self.atomic_ack(x, judge),
            Operation::Acknowledge if aeth.is_some_and(|a| a.kind() == AethKind::Ack) => {
                self.answer_kind(x, judge)
            }
            _ => {}
        }
        let aeth = aeth?;
        // MSN, monotonic ACKs and NAK PSNs are judged on packets that close a response.
        let closes =
            matches!(x.info.operation, Operation::Acknowledge | Operation::AtomicAcknowledge)
                || (x.info.operation == Operation::ReadResponse
                    && x.info.position.ends_message()
                    && read.0);
        closes.then(|| AckEvent {
            psn: x.psn,
            msn: aeth.msn,
            kind: aeth.kind(),
            seq_err: x.seq_nak(),
            frame: x.number(),
            read_retry: read.1,
        })
    }

    /// RSP-PKEY: a request from another partition must be dropped silently; a response that
    /// acknowledges or answers it let it in. Returns the PSN of the request let in.
    pub(crate) fn partition(&mut self, x: &Pkt<'_>, judge: &mut Judge) -> Option<Psn> {
        let (fp, fframe, fkey) = self.foreign?;
        let p = x.psn;
        let covers = fp < p || (fp == p && !x.seq_nak());
        if !covers {
            return None;
        }
        self.foreign = None;
        let own = x.pkey.unwrap_or(0xffff);
        judge.report(&rules::RSP_PKEY, &[fframe, x.number()], x.conn, Some(fp), || {
            format!(
                "request PSN {fp} (frame {fframe}) carries P_Key 0x{fkey:04x}, not the connection's 0x{own:04x}: the responder must drop it silently, yet {} (PSN {p}) answers it",
                x.info.name
            )
        });
        Some(fp)
    }

    /// RSP-ATOMIC: one ATOMIC_ACKNOWLEDGE per atomic, on its PSN.
    fn atomic_ack(&mut self, x: &Pkt<'_>, judge: &mut Judge) {
        let p = x.psn;
        let dup = self.dup;
        let Some(q) = self.reqs.iter_mut().rev().find(|q| q.psn == p) else { return };
        let (op, fr) = (q.operation, q.frame);
        if !matches!(op, Operation::CompareSwap | Operation::FetchAdd) {
            judge.report(&rules::RSP_ATOMIC, &[fr, x.number()], x.conn, Some(p), || {
                format!("ATOMIC_ACKNOWLEDGE for PSN {p}, which is a {op:?} request (frame {fr})")
            });
            return;
        }
        let orig = x.roce.headers.atomic_ack_eth.map(|a| a.orig);
        let Some(first) = q.atomic_acked else {
            q.atomic_acked = Some((x.number(), orig));
            return;
        };
        match dup.filter(|(d, _)| *d == p) {
            Some((_, dframe)) => Self::atomic_replay(x, first, dframe, orig, judge),
            None => judge.report(&rules::RSP_ATOMIC, &[fr, x.number()], x.conn, Some(p), || {
                format!("second ATOMIC_ACKNOWLEDGE for the atomic at PSN {p} (frame {fr}) with no retransmitted request")
            }),
        }
    }

    /// RSP-DUP-ATOMIC: the answer to a duplicate atomic (the request resent in frame
    /// `dframe`) repeats the original value of the first answer (`first`: its frame and
    /// value); a responder that executed the atomic again returns another.
    fn atomic_replay(
        x: &Pkt<'_>,
        first: (u64, Option<u64>),
        dframe: u64,
        orig: Option<u64>,
        judge: &mut Judge,
    ) {
        let (fframe, was) = first;
        let (Some(was), Some(now)) = (was, orig) else { return };
        if now == was {
            return;
        }
        let p = x.psn;
        judge.report(&rules::RSP_DUP_ATOMIC, &[fframe, dframe, x.number()], x.conn, Some(p), || {
            format!(
                "the duplicate atomic at PSN {p} (frame {dframe}) is answered with original value 0x{now:x}, but the first answer (frame {fframe}) returned 0x{was:x}: the responder executed it again instead of replaying its saved result"
            )
        });
    }

    /// RSP-READ / RSP-ATOMIC: a plain ACK where the request needs another kind of answer.
    fn answer_kind(&self, x: &Pkt<'_>, judge: &mut Judge) {
        let p = x.psn;
        let Some(q) = self.reqs.iter().rev().find(|q| q.psn == p) else { return };
        let want = match q.operation {
            Operation::CompareSwap | Operation::FetchAdd => "an ATOMIC_ACKNOWLEDGE",
            Operation::AtomicWrite | Operation::Flush => "an empty RDMA_READ_RESPONSE_ONLY",
            Operation::RdmaRead => "READ responses",
            _ => return,
        };
        let (op, fr) = (q.operation, q.frame);
        let rule = if op == Operation::RdmaRead { &rules::RSP_READ } else { &rules::RSP_ATOMIC };
        judge.report(rule, &[fr, x.number()], x.conn, Some(p), || {
            format!("the {op:?} request at PSN {p} (frame {fr}) is answered by a plain ACK instead of {want}")
        });
    }

    /// RSP-READ: READ responses FIRST/MIDDLE/LAST or ONLY on the READ's PSNs, carrying its
    /// DMA length. Returns (judged position correct, it answers a retry or duplicate READ).
    fn read_response(&mut self, x: &Pkt<'_>, judge: &mut Judge) -> (bool, bool) {
        let p = x.psn;
        let pos = x.info.position;
        let open = |rd: &&mut ReadIssue| !rd.done && rd.contains(p);
        // The issue this response continues; else one whose expectation it meets; else the
        // latest READ covering the PSN (to be judged wrong).
        let idx = {
            let mut cont = None;
            let mut fits = None;
            let mut any = None;
            for (i, rd) in self.reads.iter_mut().enumerate().rev() {
                if !open(&rd) {
                    continue;
                }
                any.get_or_insert(i);
                if rd.expected(p) == pos {
                    fits.get_or_insert(i);
                    if rd.next == p {
                        cont.get_or_insert(i);
                    }
                }
            }
            cont.or(fits).or(any)
        };
        let Some(rd) = idx.and_then(|i| self.reads.get_mut(i)) else { return (true, false) };
        let Some(n) = rd.n else { return (true, rd.retry) };
        if rd.next != p {
            // A response missing from the capture: totals are not judged.
            rd.gap = true;
        }
        rd.next = p + 1;
        let expected = rd.expected(p);
        let (rframe, len, retry) = (rd.frame, rd.len, rd.retry);
        let ok = pos == expected;
        if !ok {
            let k = (p - rd.psn) as u32;
            judge.report(&rules::RSP_READ, &[rframe, x.number()], x.conn, Some(p), || {
                format!(
                    "response {} of {n} to the READ in frame {rframe} is {} instead of READ_RESPONSE_{expected:?}",
                    k + 1,
                    x.info.name
                )
            });
            rd.gap = true;
        }
        rd.bytes += u64::from(x.payload_len());
        if pos.ends_message() {
            rd.done = true;
            let (bytes, gap) = (rd.bytes, rd.gap);
            if !gap && ok && bytes != u64::from(len) {
                judge.report(&rules::RSP_READ, &[rframe, x.number()], x.conn, Some(p), || {
                    format!("READ of {len} bytes (frame {rframe}) answered with {bytes} bytes")
                });
            }
        }
        (ok, retry)
    }

    /// The AETH event of a response: ordering, MSN, NAK rules.
    pub(crate) fn on_ack(&mut self, ev: AckEvent, conn: Option<ConnId>, judge: &mut Judge) {
        let p = ev.psn;
        match ev.kind {
            AethKind::Ack => {
                if ev.read_retry {
                    // A duplicate or re-issued READ answered again on its own PSNs: correct,
                    // and the MSN does not count it again. Its range may reach past the
                    // original's when the requester changed the length (REQ-READ-RETRY):
                    // that acknowledges no request of the requester's beyond the original.
                    if self.ackreq.is_some_and(|(q, _, _)| q <= p) {
                        self.ackreq = None;
                    }
                    return;
                }
                if self.ack_order(ev, conn, judge) {
                    return;
                }
                self.dup = None;
                self.msn(ev.frame, p, ev.msn, conn, judge);
                if self.ackreq.is_some_and(|(q, _, _)| q <= p) {
                    self.ackreq = None;
                }
                if self.nak_seq.is_some_and(|(e, _)| e <= p) {
                    self.nak_seq = None;
                }
                self.last_ack = Some(Ack { psn: p, msn: ev.msn, frame: ev.frame });
            }
            AethKind::Nak | AethKind::RnrNak => {
                if ev.seq_err {
                    self.nak_seq(ev.frame, p, conn, judge);
                }
                // Messages before the NAK'd PSN completed: the MSN says how many.
                let before = p.back(1);
                self.msn(ev.frame, before, ev.msn, conn, judge);
                if self.ackreq.is_some_and(|(q, _, _)| q <= p) {
                    self.ackreq = None;
                }
                if self.last_ack.is_none_or(|a| a.psn < before) {
                    self.last_ack = Some(Ack { psn: before, msn: ev.msn, frame: ev.frame });
                }
            }
            AethKind::Reserved => {}
        }
    }

    /// RSP-DUP / RSP-ACK-MONOTONIC: an ACK before the last one is either the answer to a
    /// duplicate (it must name ePSN - 1) or goes backwards. Says whether it was one of those.
    fn ack_order(&mut self, ev: AckEvent, conn: Option<ConnId>, judge: &mut Judge) -> bool {
        let p = ev.psn;
        let Some(last) = self.last_ack.filter(|l| p < l.psn) else { return false };
        let frame = ev.frame;
        match self.dup.take() {
            Some((d, dframe)) => judge.report(&rules::RSP_DUP, &[dframe, frame], conn, Some(p), || {
                format!(
                    "duplicate request PSN {d} (frame {dframe}) acknowledged with PSN {p} instead of ePSN - 1 = {}",
                    last.psn
                )
            }),
            None => judge.report(&rules::RSP_ACK_MONOTONIC, &[last.frame, frame], conn, Some(p), || {
                format!(
                    "ACK names PSN {p}, before the PSN {} already acknowledged in frame {}",
                    last.psn, last.frame
                )
            }),
        }
        true
    }

    /// The next ACK's MSN cannot be judged: a held response was proved wrong (RSP-ACK-RANGE:
    /// nothing cascades from it), or it names requests the capture lost.
    pub(crate) fn msn_unknown(&mut self) {
        self.rebase_msn = true;
    }

    /// RSP-MSN: the MSN rises by the messages completed since the last ACK.
    fn msn(&mut self, frame: u64, upto: Psn, msn: u32, conn: Option<ConnId>, judge: &mut Judge) {
        if std::mem::take(&mut self.rebase_msn) {
            return;
        }
        let Some(last) = self.last_ack else { return };
        let Some(count) = self.completed_between(last.psn, upto) else { return };
        let delta = msn.wrapping_sub(last.msn) & PSN_MASK;
        if delta != count {
            judge.report(&rules::RSP_MSN, &[last.frame, frame], conn, Some(upto), || {
                format!(
                    "MSN goes from {} (frame {}) to {msn}, but {count} message(s) completed in between",
                    last.msn, last.frame
                )
            });
        }
    }

    /// RSP-NAK-SEQ: one NAK per gap, naming the first missing PSN.
    fn nak_seq(&mut self, frame: u64, e: Psn, conn: Option<ConnId>, judge: &mut Judge) {
        if let Some((prev, pframe)) = self.nak_seq.filter(|(prev, _)| *prev == e) {
            judge.report(&rules::RSP_NAK_SEQ, &[pframe, frame], conn, Some(e), || {
                format!("second NAK \"PSN sequence error\" naming {prev} before the requester resent it (first NAK in frame {pframe})")
            });
            return;
        }
        self.nak_seq = Some((e, frame));
        if let Some(last) = self.last_ack.filter(|l| e <= l.psn) {
            judge.report(&rules::RSP_NAK_SEQ, &[last.frame, frame], conn, Some(e), || {
                format!(
                    "NAK names PSN {e} as missing, but PSN {} was already acknowledged (frame {}): the first missing PSN is after it",
                    last.psn, last.frame
                )
            });
        }
    }

    /// At the end of the incarnation: AckReq packets never acknowledged, if the capture ran
    /// long enough after them.
    pub(crate) fn finish(
        &mut self,
        conn: Option<ConnId>,
        end_ts: u64,
        ack_timeout_ns: u64,
        judge: &mut Judge,
    ) {
        let Some((p, frame, ts)) = self.ackreq.take() else { return };
        let waited = end_ts.saturating_sub(ts);
        if waited >= ack_timeout_ns {
            judge.report(&rules::RSP_ACKREQ, &[frame], conn, Some(p), || {
                format!(
                    "request PSN {p} asked for an ACK (AckReq) and none came in the {} ms the capture ran after it",
                    waited / 1_000_000
                )
            });
        }
    }
}

/// RSP-RNR-TIMER: with `--rnr-timer CODE` (the responder QP's configured minimum RNR NAK
/// timer, `ibv_modify_qp` `min_rnr_timer`), an RNR NAK advertises that code in its AETH
/// (IBTA 9.7.5.2.8, table 45: the responder returns its QP's RNR timer value).
pub(crate) fn rnr_timer(x: &Pkt<'_>, code: u8, judge: &mut Judge) {
    let Some(a) = x.roce.headers.aeth else { return };
    if a.kind() != AethKind::RnrNak || a.value() == code {
        return;
    }
    let advertised = a.value();
    judge.report(&rules::RSP_RNR_TIMER, &[x.number()], x.conn, Some(x.psn), || {
        format!(
            "RNR NAK for PSN {} advertises timer code {advertised} ({} us), not the configured {code} ({} us, --rnr-timer {code})",
            x.psn.value(),
            roce_parser::rnr_timer_us(advertised),
            roce_parser::rnr_timer_us(code)
        )
    });
}
