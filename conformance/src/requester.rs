//! The requester half of a stream: the requests one QP sends to its peer. It holds the
//! requester state of the reference model (next PSN, outstanding READs, the message in
//! progress, the last NAK, RNR state, the resend in progress) and judges the requester
//! rules, one function per rule:
//!
//! | rule | function |
//! |---|---|
//! | REQ-PSN | [`Requester::psn_skip`], [`Requester::psn_inside_read`], [`Requester::first_psn`] |
//! | REQ-MSG-SEQ, REQ-LENGTH, REQ-DMALEN | [`Requester::message`] |
//! | REQ-ATOMIC-ALIGN | [`Requester::atomic_align`] |
//! | REQ-GBN | [`Requester::go_back_n`] (resends), [`Requester::new_psn_after_nak`] |
//! | REQ-RNR-WAIT | [`Requester::rnr_wait`] |
//! | REQ-READ-RETRY | [`Requester::read_retry`] |
//! | REQ-RETX-CAUSE | [`Requester::retx_cause`] |
//! | REQ-RETX-SAME | [`Requester::retx_same`] |
//! | REQ-QP-TIMEOUT | [`qp_timeout`] (on the timeouts `crate::timing` measures) |
//! | REQ-CM-ACK-TIMEOUT | [`cm_ack_timeout`] (when the incarnation ends, against its CM REQ) |
//! | REQ-CM-RETRY-COUNT | [`cm_retry_count`] (likewise) |
//! | REQ-CM-RNR-RETRY-COUNT | [`cm_rnr_retry_count`] (likewise) |
//!
//! In-flight packets after a NAK: when a NAK "PSN sequence error" naming e is captured, the
//! requester may already have sent packets beyond what the capture showed so far; they
//! appear after the NAK with new PSNs. Those within the in-flight bound (time: twice the
//! shortest request-to-ACK time seen plus 20 us, or the reorder window while no ACK time
//! has been measured; count: 64 packets) are
//! allowed and must then be resent too; any other new PSN before the resend from e is
//! REQ-GBN. A NAK that names a PSN already acknowledged is the responder's fault
//! (RSP-NAK-SEQ) and arms nothing here.

use std::collections::VecDeque;
use std::hash::{BuildHasher, Hash, Hasher};

use roce_parser::{rnr_timer_us, AethKind, NakCode, Operation, Position, Roce};

use crate::context::{CmTimers, Pkt};
use crate::finding::Judge;
use crate::hash::FastState;
use crate::psn::{read_psns, Psn};
use crate::rules;
use crate::timing::{local_ack_timeout_ns, rnr_retry_numbers, Disagreement, TimeoutRetransmission};

/// Requests remembered for retransmission checks (bounded: the state never grows with the
/// capture).
const RING: usize = 64;
/// Outstanding READs remembered.
const READS: usize = 16;
/// Largest DMA length the IBTA allows.
const MAX_DMA_LEN: u32 = 1 << 31;
/// New packets after a NAK that may have been in flight when it arrived.
const IN_FLIGHT: u32 = RING as u32;
/// Added to twice the shortest request-to-ACK time for the in-flight bound (NIC reaction).
const IN_FLIGHT_SLACK_NS: u64 = 20_000;
/// ACKs measured for the shortest request-to-ACK time.
const RTT_SAMPLES: u32 = 16;

#[derive(Debug, Clone, Copy)]
struct Sent {
    psn: Psn,
    opcode: u8,
    payload_len: u32,
    digest: u64,
    frame: u64,
    ts: u64,
}

#[derive(Debug, Clone, Copy)]
struct ReadReq {
    psn: Psn,
    /// PSNs consumed (None while the PMTU is unknown).
    n: Option<u32>,
    va: u64,
    len: u32,
    frame: u64,
}

/// A NAK "PSN sequence error" the requester must answer with go-back-N.
#[derive(Debug, Clone, Copy)]
struct Gbn {
    nak_psn: Psn,
    nak_frame: u64,
    nak_ts: u64,
    /// The PSN the requester must resend next.
    expect: Psn,
    /// Highest PSN sent before the resend (in flight included): go-back-N ends past it.
    upto: Psn,
    started: bool,
    /// New packets seen after the NAK (in flight).
    in_flight: u32,
    /// REQ-GBN already reported for new PSNs after this NAK.
    reported: bool,
}

#[derive(Debug, Clone, Copy)]
struct Rnr {
    psn: Psn,
    nak_frame: u64,
    nak_ts: u64,
    until_ns: u64,
    timer_us: u32,
}

/// A run of retransmissions, judged once: the next PSN it continues with.
#[derive(Debug, Clone, Copy)]
struct Resend {
    next: Psn,
}

/// A PSN skip inside a WRITE message, judged when the message ends: if its FIRST..LAST
/// carry all of the RETH DMA length, nothing is missing and the requester skipped PSNs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Skip {
    lo: Psn,
    hi: Psn,
    count: u32,
    before: u64,
    after: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Msg {
    Idle,
    InProgress {
        op: Operation,
        first_frame: u64,
        bytes: u64,
        dma_len: Option<u32>,
        skip: Option<Skip>,
    },
}

/// What a requester stream knows, judged lazily and bounded in size.
#[derive(Debug, Clone)]
pub(crate) struct Requester {
    /// Highest PSN consumed by new requests (a READ counts its whole range).
    max_psn: Option<Psn>,
    last_frame: u64,
    last_ts: u64,
    msg: Msg,
    /// A message boundary has been seen since the last loss of sync.
    synced: bool,
    ring: VecDeque<Sent>,
    reads: VecDeque<ReadReq>,
    /// A READ whose PSN range is unknown (PMTU unknown): the next new PSN may jump by up to
    /// this many PSNs.
    read_slack: Option<u32>,
    /// A READ in `reads` was sized before the PMTU was known ([`Requester::size_reads`]).
    unsized_reads: bool,
    gbn: Option<Gbn>,
    rnr: Option<Rnr>,
    resend: Option<Resend>,
    highest_resp_psn: Option<Psn>,
    /// Highest PSN a positive ACK covered.
    acked: Option<Psn>,
    min_rtt_ns: Option<u64>,
    rtt_samples: u32,
    pub(crate) retransmissions: u64,
    /// PSNs known to be missing from the capture.
    pub(crate) missing: u64,
    /// Why parts of the stream were not judged (first reason seen).
    pub(crate) partly: Option<&'static str>,
}

/// How a request was classified, for the responder model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Seen {
    /// A PSN not sent before (false: a retransmission).
    pub(crate) new: bool,
    /// PSNs before it are unknown (first request seen, or a hole in the capture).
    pub(crate) gap: bool,
    /// PSNs the request consumes (None: a READ while the PMTU is unknown).
    pub(crate) psns: Option<u32>,
}

/// What a retransmission must repeat: the extended headers and the payload. The payload goes
/// through crc32fast (SIMD, ~10 GB/s; SipHash over it was 13% of `check`'s time), here or on
/// the thread that read the frame (`Roce::payload_crc32`).
fn digest(r: &Roce<'_>) -> u64 {
    let mut h = FastState::default().build_hasher();
    r.headers.hash(&mut h);
    h.write_usize(r.payload.len());
    h.write_u32(r.payload_crc32());
    h.finish()
}

impl Default for Requester {
    fn default() -> Self {
        Requester {
            max_psn: None,
            last_frame: 0,
            last_ts: 0,
            msg: Msg::Idle,
            synced: false,
            ring: VecDeque::new(),
            reads: VecDeque::new(),
            read_slack: None,
            unsized_reads: false,
            gbn: None,
            rnr: None,
            resend: None,
            highest_resp_psn: None,
            acked: None,
            min_rtt_ns: None,
            rtt_samples: 0,
            retransmissions: 0,
            missing: 0,
            partly: None,
        }
    }
}

impl Requester {
    /// Entries held (for the checker's state accounting).
    pub(crate) fn entries(&self) -> usize {
        self.ring.len() + self.reads.len()
    }

    /// Highest request PSN seen.
    pub(crate) fn max_psn(&self) -> Option<Psn> {
        self.max_psn
    }

    fn psns_of(&self, x: &Pkt<'_>) -> Option<u32> {
        if x.info.operation != Operation::RdmaRead {
            return Some(1);
        }
        let len = x.roce.headers.reth.map_or(0, |h| h.dma_len);
        x.pmtu.map(|m| read_psns(len, m))
    }

    /// The PMTU is known now: READs sent before it was get their PSN range, and the highest
    /// PSN consumed covers the range of a READ that was the last request (its responses are
    /// then answers, not PSNs ahead of the capture).
    pub(crate) fn size_reads(&mut self, pmtu: u32) {
        if !std::mem::take(&mut self.unsized_reads) {
            return;
        }
        for rd in self.reads.iter_mut().filter(|rd| rd.n.is_none()) {
            let n = read_psns(rd.len, pmtu);
            rd.n = Some(n);
            if self.max_psn == Some(rd.psn) {
                self.max_psn = Some(rd.psn + (n - 1));
                self.read_slack = None;
            }
        }
    }

    /// A request from another partition on PSN `p` that the responder accepted (RSP-PKEY):
    /// it consumed that PSN of the connection's sequence.
    pub(crate) fn let_in(&mut self, p: Psn) {
        if self.max_psn.is_some_and(|m| m < p) {
            self.max_psn = Some(p);
        }
    }

    /// A request packet of this stream; says how it was classified.
    pub(crate) fn on_request(&mut self, x: &Pkt<'_>, judge: &mut Judge) -> Seen {
        let n = self.psns_of(x);
        let Some(max) = self.max_psn else {
            self.first_psn(x, judge);
            self.accept_new(x, n, judge);
            return Seen { new: true, gap: true, psns: n };
        };
        let d = x.psn - max;
        if d <= 0 {
            self.retransmission(x, n, judge);
            return Seen { new: false, gap: false, psns: n };
        }
        self.new_psn_after_nak(x, judge);
        if d > 1 {
            self.psn_skip(x, max, (d - 1) as u32, judge);
        } else {
            self.read_slack = None;
        }
        self.accept_new(x, n, judge);
        Seen { new: true, gap: d > 1, psns: n }
    }

    /// REQ-PSN (or CAP-GAP) on the first request: CM announced the PSN it must carry.
    fn first_psn(&mut self, x: &Pkt<'_>, judge: &mut Judge) {
        let Some(first) = x.cm_start else {
            if !x.info.position.starts_message() {
                self.partly.get_or_insert("capture starts inside a message");
            }
            return;
        };
        let p = x.psn;
        if p == first {
            return;
        }
        let d = p - first;
        if d > 0 && !x.opts.assume_complete {
            self.missing += d as u64;
            judge.report(&rules::CAP_GAP, &[x.number()], x.conn, Some(p), || {
                format!(
                    "first request captured has PSN {p} but CM announced {first}: {d} packets missing from the capture"
                )
            });
        } else {
            judge.report(&rules::REQ_PSN, &[x.number()], x.conn, Some(p), || {
                format!(
                    "first request has PSN {p} but the CM exchange announced starting PSN {first}"
                )
            });
        }
    }

    /// REQ-PSN or CAP-GAP: new PSNs skipped. Inside a WRITE message the verdict waits for
    /// the message's end (the DMA length tells whether anything is missing).
    fn psn_skip(&mut self, x: &Pkt<'_>, max: Psn, skipped: u32, judge: &mut Judge) {
        if self.read_slack.take().is_some_and(|most| skipped < most) {
            return;
        }
        let (lo, hi) = (max + 1, x.psn.back(1));
        let (before, after) = (self.last_frame, x.number());
        if x.opts.assume_complete {
            let p = x.psn;
            judge.report(&rules::REQ_PSN, &[before, after], x.conn, Some(p), || {
                format!("PSN jumps from {max} to {p}: {skipped} PSN(s) {lo}..{hi} were never sent")
            });
            return;
        }
        let pos = x.info.position;
        if let Msg::InProgress { op: Operation::RdmaWrite, dma_len: Some(_), skip, .. } =
            &mut self.msg
        {
            if matches!(pos, Position::Middle | Position::Last) {
                match skip {
                    Some(s) => {
                        s.hi = hi;
                        s.count += skipped;
                    }
                    None => *skip = Some(Skip { lo, hi, count: skipped, before, after }),
                }
                return;
            }
        }
        self.capture_gap(x, Skip { lo, hi, count: skipped, before, after }, judge);
        // The message state is unknown across the hole.
        if !pos.starts_message() {
            self.synced = false;
        }
        self.msg = Msg::Idle;
    }

    fn capture_gap(&mut self, x: &Pkt<'_>, s: Skip, judge: &mut Judge) {
        self.missing += u64::from(s.count);
        judge.report(&rules::CAP_GAP, &[s.before, s.after], x.conn, Some(s.lo), || {
            format!(
                "{} request PSN(s) {}..{} missing from the capture between frames {} and {} (no NAK, no retransmission)",
                s.count, s.lo.value(), s.hi.value(), s.before, s.after
            )
        });
    }

    /// REQ-GBN: a new PSN after a NAK, before the resend from the NAKed PSN, that was not in
    /// flight when the NAK arrived; or (lossless captures) new PSNs before the resend reached
    /// everything that was sent.
    fn new_psn_after_nak(&mut self, x: &Pkt<'_>, judge: &mut Judge) {
        let window = self.min_rtt_ns.map_or(x.opts.reorder_window_ns, |rtt| {
            rtt.saturating_mul(2).saturating_add(IN_FLIGHT_SLACK_NS)
        });
        let Some(g) = &mut self.gbn else { return };
        let p = x.psn;
        if g.started {
            if p > g.upto {
                let g0 = *g;
                self.gbn = None;
                if x.opts.assume_complete && g0.expect <= g0.upto {
                    judge.report(&rules::REQ_GBN, &[g0.nak_frame, x.number()], x.conn, Some(p), || {
                        format!(
                            "go-back-N after the NAK naming {} (frame {}) stopped at {}: new PSN {p} sent before {}..{} were resent",
                            g0.nak_psn, g0.nak_frame, g0.expect, g0.expect.value(), g0.upto.value()
                        )
                    });
                }
            }
            return;
        }
        let in_flight = x.ts().saturating_sub(g.nak_ts) <= window && g.in_flight < IN_FLIGHT;
        if p > g.upto {
            g.upto = p;
        }
        g.in_flight += 1;
        if in_flight || g.reported {
            return;
        }
        g.reported = true;
        let g0 = *g;
        judge.report(&rules::REQ_GBN, &[g0.nak_frame, x.number()], x.conn, Some(p), || {
            format!(
                "after the NAK \"PSN sequence error\" naming {} (frame {}), the requester sent new PSN {p} {} us later instead of resending from {}",
                g0.nak_psn,
                g0.nak_frame,
                x.ts().saturating_sub(g0.nak_ts) / 1000,
                g0.nak_psn
            )
        });
    }

    /// A request with a new PSN: message sequence, lengths, DMA length, alignment.
    fn accept_new(&mut self, x: &Pkt<'_>, n: Option<u32>, judge: &mut Judge) {
        let p = x.psn;
        let r = x.roce;
        self.resend = None;
        self.message(x, judge);
        self.atomic_align(x, judge);
        if x.info.operation == Operation::RdmaRead {
            let reth = r.headers.reth.unwrap_or_default();
            if reth.dma_len > MAX_DMA_LEN {
                judge.report(&rules::REQ_DMALEN, &[x.number()], x.conn, Some(p), || {
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
                frame: x.number(),
            });
            if n.is_none() {
                self.read_slack = Some(read_psns(reth.dma_len, 256));
                self.unsized_reads = true;
            }
        }
        self.max_psn = Some(p + n.unwrap_or(1).saturating_sub(1));
        if self.ring.len() == RING {
            self.ring.pop_front();
        }
        self.ring.push_back(Sent {
            psn: p,
            opcode: r.bth.opcode,
            payload_len: x.payload_len(),
            digest: digest(r),
            frame: x.number(),
            ts: x.ts(),
        });
        self.last_frame = x.number();
        self.last_ts = x.ts();
    }

    /// REQ-ATOMIC-ALIGN.
    fn atomic_align(&self, x: &Pkt<'_>, judge: &mut Judge) {
        if !matches!(x.info.operation, Operation::CompareSwap | Operation::FetchAdd) {
            return;
        }
        if let Some(a) = x.roce.headers.atomic_eth.filter(|a| a.va % 8 != 0) {
            judge.report(&rules::REQ_ATOMIC_ALIGN, &[x.number()], x.conn, Some(x.psn), || {
                format!("{} to VA 0x{:016x}, which is not 8-byte aligned", x.info.name, a.va)
            });
        }
    }

    /// REQ-LENGTH, REQ-MSG-SEQ, REQ-DMALEN (and a deferred REQ-PSN) on a new request.
    fn message(&mut self, x: &Pkt<'_>, judge: &mut Judge) {
        let p = x.psn;
        let pos = x.info.position;
        let len = u64::from(x.payload_len());
        let name = x.info.name;
        if let Some(pmtu) = x.pmtu {
            let bad = match pos {
                Position::First | Position::Middle => len != u64::from(pmtu),
                Position::Last => len == 0 || len > u64::from(pmtu),
                Position::Only => len > u64::from(pmtu),
            };
            if bad && x.info.payload.allows_payload() {
                let want = match pos {
                    Position::First | Position::Middle => format!("exactly the PMTU ({pmtu})"),
                    Position::Last => format!("1..{pmtu} bytes"),
                    Position::Only => format!("0..{pmtu} bytes"),
                };
                judge.report(&rules::REQ_LENGTH, &[x.number()], x.conn, Some(p), || {
                    format!("{name} carries {len} payload bytes; it must carry {want}")
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
        let op = x.info.operation;
        let reth_len = x.roce.headers.reth.map(|h| h.dma_len);
        if let Some(d) = reth_len.filter(|&d| op == Operation::RdmaWrite && d > MAX_DMA_LEN) {
            judge.report(&rules::REQ_DMALEN, &[x.number()], x.conn, Some(p), || {
                format!("WRITE DMA Length {d} exceeds 2^31")
            });
        }
        match (self.msg, pos) {
            (
                Msg::InProgress { first_frame, op: o, skip, .. },
                Position::First | Position::Only,
            ) => {
                judge.report(&rules::REQ_MSG_SEQ, &[first_frame, x.number()], x.conn, Some(p), || {
                    format!(
                        "{name} starts a new message before the LAST of the {o:?} message begun in frame {first_frame}: messages interleave"
                    )
                });
                if let Some(s) = skip {
                    self.capture_gap(x, s, judge);
                }
                self.msg = Msg::Idle;
            }
            (Msg::Idle, Position::Middle | Position::Last) => {
                judge.report(&rules::REQ_MSG_SEQ, &[x.number()], x.conn, Some(p), || {
                    format!("{name} without a FIRST: no message is in progress")
                });
                return;
            }
            (
                Msg::InProgress { op: o, first_frame, skip, .. },
                Position::Middle | Position::Last,
            ) if o != op => {
                judge.report(
                    &rules::REQ_MSG_SEQ,
                    &[first_frame, x.number()],
                    x.conn,
                    Some(p),
                    || format!("{name} continues a {o:?} message begun in frame {first_frame}"),
                );
                if let Some(s) = skip {
                    self.capture_gap(x, s, judge);
                }
                self.msg = Msg::Idle;
                return;
            }
            _ => {}
        }
        match pos {
            Position::First => {
                self.msg = Msg::InProgress {
                    op,
                    first_frame: x.number(),
                    bytes: len,
                    dma_len: reth_len,
                    skip: None,
                }
            }
            Position::Middle => {
                if let Msg::InProgress { bytes, .. } = &mut self.msg {
                    *bytes += len;
                }
            }
            Position::Last | Position::Only => {
                let (total, dma, first, skip) = match self.msg {
                    Msg::InProgress { bytes, dma_len, first_frame, skip, .. } => {
                        (bytes + len, dma_len, first_frame, skip)
                    }
                    Msg::Idle => (len, reth_len, x.number(), None),
                };
                self.msg = Msg::Idle;
                let whole = dma.is_some_and(|d| total == u64::from(d));
                match skip {
                    Some(s) if whole => {
                        let mut frames = vec![first, s.before, s.after];
                        frames.dedup();
                        judge.report(&rules::REQ_PSN, &frames, x.conn, Some(s.lo), || {
                            format!(
                                "PSNs {}..{} skipped inside the WRITE begun in frame {first}, whose packets carry all {total} bytes of its DMA Length: nothing is missing, the requester skipped {} PSN(s)",
                                s.lo.value(), s.hi.value(), s.count
                            )
                        });
                        return;
                    }
                    Some(s) => {
                        // Bytes are missing too: the capture lost packets of the message.
                        self.capture_gap(x, s, judge);
                        return;
                    }
                    None => {}
                }
                if let Some(d) = dma.filter(|_| op == Operation::RdmaWrite && !whole) {
                    let frames =
                        if first == x.number() { vec![first] } else { vec![first, x.number()] };
                    judge.report(&rules::REQ_DMALEN, &frames, x.conn, Some(p), || {
                        format!(
                            "WRITE message carries {total} bytes but its RETH DMA Length is {d}"
                        )
                    });
                }
            }
        }
    }

    /// A request whose PSN is not new: one rule at a time.
    fn retransmission(&mut self, x: &Pkt<'_>, n: Option<u32>, judge: &mut Judge) {
        self.retransmissions += 1;
        if self.psn_inside_read(x, judge) {
            self.last_ts = x.ts();
            return;
        }
        let by_nak = self.go_back_n(x, n.unwrap_or(1), judge);
        let by_rnr = self.rnr_wait(x, judge);
        self.read_retry(x, judge);
        self.retx_cause(x, n.unwrap_or(1), by_nak || by_rnr, judge);
        self.retx_same(x, judge);
        self.last_frame = x.number();
        self.last_ts = x.ts();
    }

    /// REQ-PSN: a non-READ request on a PSN a READ consumed.
    fn psn_inside_read(&self, x: &Pkt<'_>, judge: &mut Judge) -> bool {
        let p = x.psn;
        if x.info.operation == Operation::RdmaRead || self.ring.iter().any(|s| s.psn == p) {
            return false;
        }
        let Some(rd) = self.reads.iter().find(|rd| {
            let n = rd.n.unwrap_or(1);
            n > 1 && p.within(rd.psn + 1, rd.psn + (n - 1))
        }) else {
            return false;
        };
        judge.report(&rules::REQ_PSN, &[rd.frame, x.number()], x.conn, Some(p), || {
            format!(
                "{} uses PSN {p}, which lies inside the PSN range consumed by the READ at PSN {} (frame {})",
                x.info.name, rd.psn, rd.frame
            )
        });
        true
    }

    /// REQ-GBN: after a NAK "PSN sequence error" naming e, the resend starts at e and goes
    /// on in order. Says whether the NAK explains this retransmission.
    fn go_back_n(&mut self, x: &Pkt<'_>, step: u32, judge: &mut Judge) -> bool {
        let Some(g) = &mut self.gbn else { return false };
        let p = x.psn;
        let g0 = *g;
        g.started = true;
        g.expect = p + step;
        if g.upto < g.expect {
            self.gbn = None;
        }
        if p != g0.expect {
            judge.report(&rules::REQ_GBN, &[g0.nak_frame, x.number()], x.conn, Some(p), || {
                if g0.started {
                    format!(
                        "go-back-N out of order: after the NAK naming {} (frame {}), expected PSN {} next but the requester resent {p}",
                        g0.nak_psn, g0.nak_frame, g0.expect
                    )
                } else {
                    format!(
                        "after the NAK \"PSN sequence error\" naming {} (frame {}), the requester resent PSN {p} first instead of {}",
                        g0.nak_psn, g0.nak_frame, g0.expect
                    )
                }
            });
        }
        true
    }

    /// REQ-RNR-WAIT: no retry before the RNR NAK's timer expired. Says whether the RNR NAK
    /// explains this retransmission.
    fn rnr_wait(&mut self, x: &Pkt<'_>, judge: &mut Judge) -> bool {
        let p = x.psn;
        let Some(rn) = self.rnr.filter(|rn| rn.psn == p) else { return false };
        self.rnr = None;
        // One microsecond of slack for timestamp rounding.
        if x.ts().saturating_add(1_000) < rn.until_ns {
            let waited = x.ts().saturating_sub(rn.nak_ts);
            judge.report(&rules::REQ_RNR_WAIT, &[rn.nak_frame, x.number()], x.conn, Some(p), || {
                format!(
                    "PSN {p} resent {}.{:03} ms after the RNR NAK (frame {}), before its {}.{:03} ms timer expired",
                    waited / 1_000_000,
                    (waited / 1000) % 1000,
                    rn.nak_frame,
                    rn.timer_us / 1000,
                    rn.timer_us % 1000
                )
            });
        }
        true
    }

    /// REQ-READ-RETRY: a re-issued READ at k PSNs into the original advances its VA by
    /// k * PMTU and keeps its end address.
    fn read_retry(&self, x: &Pkt<'_>, judge: &mut Judge) {
        if x.info.operation != Operation::RdmaRead {
            return;
        }
        let p = x.psn;
        let Some(rd) =
            self.reads.iter().rev().find(|rd| p.within(rd.psn, rd.psn + (rd.n.unwrap_or(1) - 1)))
        else {
            return;
        };
        let Some(pmtu) = x.pmtu else { return };
        let k = (p - rd.psn) as u64;
        let reth = x.roce.headers.reth.unwrap_or_default();
        let va = rd.va.wrapping_add(k * u64::from(pmtu));
        let len = u64::from(rd.len).saturating_sub(k * u64::from(pmtu));
        if reth.va != va || u64::from(reth.dma_len) != len {
            judge.report(&rules::REQ_READ_RETRY, &[rd.frame, x.number()], x.conn, Some(p), || {
                format!(
                    "READ re-issued at PSN {p} ({k} PSNs into the READ of frame {}) with VA 0x{:x} length {}; expected VA 0x{va:x} length {len} (same end address)",
                    rd.frame, reth.va, reth.dma_len
                )
            });
        }
    }

    /// REQ-RETX-CAUSE: a retransmission needs a NAK, an RNR NAK, an implicit NAK (a response
    /// to a later PSN) or a timeout gap. A run of resends in PSN order is one event: judged
    /// at its first packet.
    fn retx_cause(&mut self, x: &Pkt<'_>, step: u32, explained: bool, judge: &mut Judge) {
        let p = x.psn;
        if self.resend.is_some_and(|r| r.next == p) {
            self.resend = Some(Resend { next: p + step });
            return;
        }
        self.resend = Some(Resend { next: p + step });
        let implicit = self.implicit_nak(x);
        let gap = x.ts().saturating_sub(self.last_ts);
        if explained || implicit || gap >= x.opts.retx_timeout_ns {
            return;
        }
        let orig = self.ring.iter().rev().find(|s| s.psn == p).map_or(x.number(), |o| o.frame);
        judge.report(&rules::REQ_RETX_CAUSE, &[orig, x.number()], x.conn, Some(p), || {
            format!(
                "PSN {p} retransmitted {} us after the previous request with no NAK, RNR NAK, implicit NAK or timeout to explain it",
                gap / 1000
            )
        });
    }

    /// An implicit NAK explains a resend of PSN p: a response to a later PSN came while p
    /// still waited for its own answer (READ data, an atomic's result), or p is a SEND or
    /// WRITE no ACK has covered yet.
    fn implicit_nak(&self, x: &Pkt<'_>) -> bool {
        let p = x.psn;
        if !self.highest_resp_psn.is_some_and(|h| p < h) {
            return false;
        }
        let needs_answer = matches!(
            x.info.operation,
            Operation::RdmaRead | Operation::CompareSwap | Operation::FetchAdd
        );
        needs_answer || self.acked.is_none_or(|a| a < p)
    }

    /// REQ-RETX-SAME: a retransmission repeats the original's opcode, length and headers.
    fn retx_same(&self, x: &Pkt<'_>, judge: &mut Judge) {
        let p = x.psn;
        let r = x.roce;
        let Some(o) = self.ring.iter().rev().find(|s| s.psn == p) else { return };
        let same_op = o.opcode == r.bth.opcode;
        let same_len = o.payload_len == x.payload_len();
        let same_hdr = x.info.operation == Operation::RdmaRead || o.digest == digest(r);
        if same_op && same_len && same_hdr {
            return;
        }
        let what = if !same_op {
            format!("opcode {} instead of {}", x.info.name, roce_parser::opcode_name(o.opcode))
        } else if !same_len {
            format!("{} payload bytes instead of {}", r.payload_len, o.payload_len)
        } else {
            "different header fields or payload".to_string()
        };
        judge.report(&rules::REQ_RETX_SAME, &[o.frame, x.number()], x.conn, Some(p), || {
            format!("retransmission of PSN {p} (first sent in frame {}) carries {what}", o.frame)
        });
    }

    /// A response to this stream's requests, already placed by the stream: `ahead` when it
    /// names a PSN past every request captured.
    pub(crate) fn on_response(&mut self, x: &Pkt<'_>, ahead: bool) {
        let p = x.psn;
        if self.max_psn.is_none() {
            self.partly.get_or_insert("responses captured before any request");
            return;
        }
        if !ahead && self.highest_resp_psn.is_none_or(|h| h < p) {
            self.highest_resp_psn = Some(p);
        }
        let Some(aeth) = x.roce.headers.aeth else { return };
        match aeth.kind() {
            AethKind::Nak if NakCode::from_value(aeth.value()) == NakCode::PsnSequenceError => {
                self.arm_go_back_n(x, ahead);
            }
            AethKind::RnrNak => {
                let timer_us = rnr_timer_us(aeth.value());
                self.rnr = Some(Rnr {
                    psn: p,
                    nak_frame: x.number(),
                    nak_ts: x.ts(),
                    until_ns: x.ts().saturating_add(u64::from(timer_us) * 1000),
                    timer_us,
                });
            }
            AethKind::Ack
                if !ahead
                    && (x.info.operation == roce_parser::Operation::Acknowledge
                        || x.info.position.ends_message()) =>
            {
                self.acked = Some(self.acked.map_or(p, |a| if a < p { p } else { a }));
                // Everything up to the NAK'd range acknowledged: go-back-N is over.
                if self.gbn.is_some_and(|g| g.upto <= p) {
                    self.gbn = None;
                }
                self.measure_rtt(x);
            }
            _ => {}
        }
    }

    /// A NAK "PSN sequence error": go-back-N from the PSN it names, unless the NAK is wrong
    /// (it names a PSN already acknowledged) or not yet credible (ahead of the capture).
    fn arm_go_back_n(&mut self, x: &Pkt<'_>, ahead: bool) {
        let e = x.psn;
        if ahead || self.acked.is_some_and(|a| e <= a) {
            return;
        }
        // The NAK was triggered by the first request after the hole: one capture-side
        // round trip, which bounds the packets still in flight.
        if let Some(s) = self.ring.iter().rev().find(|s| s.psn == e + 1) {
            let rtt = x.ts().saturating_sub(s.ts);
            self.min_rtt_ns = Some(self.min_rtt_ns.map_or(rtt, |m| m.min(rtt)));
        }
        let upto = self.max_psn.filter(|&m| e < m).unwrap_or(e);
        self.gbn = Some(Gbn {
            nak_psn: e,
            nak_frame: x.number(),
            nak_ts: x.ts(),
            expect: e,
            upto,
            started: false,
            in_flight: 0,
            reported: false,
        });
    }

    /// The shortest request-to-ACK time (a few samples), which bounds in-flight packets.
    fn measure_rtt(&mut self, x: &Pkt<'_>) {
        if self.rtt_samples >= RTT_SAMPLES {
            return;
        }
        self.rtt_samples += 1;
        if let Some(s) = self.ring.iter().rev().find(|s| s.psn == x.psn) {
            let rtt = x.ts().saturating_sub(s.ts);
            self.min_rtt_ns = Some(self.min_rtt_ns.map_or(rtt, |m| m.min(rtt)));
        }
    }

    /// The NAK that was ahead of the capture turned out credible (its request arrived).
    pub(crate) fn ahead_confirmed(&mut self, x: &Pkt<'_>, held: &Held) {
        if held.seq_nak {
            let e = held.psn;
            if self.acked.is_none_or(|a| a < e) {
                self.gbn = Some(Gbn {
                    nak_psn: e,
                    nak_frame: held.frame,
                    nak_ts: x.ts(),
                    expect: e,
                    upto: x.psn,
                    started: false,
                    in_flight: 0,
                    reported: false,
                });
            }
        }
        if self.highest_resp_psn.is_none_or(|h| h < held.psn) {
            self.highest_resp_psn = Some(held.psn);
        }
    }
}

/// A response held back because it names a PSN past every request captured: capture loss,
/// a reordered capture, or a responder fault, decided by what comes next.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Held {
    pub(crate) psn: Psn,
    pub(crate) frame: u64,
    pub(crate) ts: u64,
    /// Highest request PSN when the response came.
    pub(crate) max_then: Psn,
    pub(crate) seq_nak: bool,
    /// The AETH part of the response, for the responder model once it is settled.
    pub(crate) aeth: Option<crate::responder::AckEvent>,
}

/// Timestamps and NIC timers are not exact: a timeout this much shorter than configured
/// still passes REQ-QP-TIMEOUT.
pub(crate) const QP_TIMEOUT_TOLERANCE_PERCENT: u64 = 10;

/// REQ-QP-TIMEOUT: a timeout retransmission earlier than the local ACK timeout the user
/// says the QP has (`--qp-timeout T`, 4.096 us x 2^T), less the tolerance.
pub(crate) fn qp_timeout(retx: &TimeoutRetransmission, t: u8, x: &Pkt<'_>, judge: &mut Judge) {
    let Some(configured) = local_ack_timeout_ns(t) else { return };
    let floor = configured - configured * QP_TIMEOUT_TOLERANCE_PERCENT / 100;
    if retx.measured_ns >= floor {
        return;
    }
    let (measured, retry) = (retx.measured_ns, retx.retry);
    judge.report(
        &rules::REQ_QP_TIMEOUT,
        &retx.frames,
        x.conn,
        Some(retx.psn),
        || {
            format!(
                "PSN {} resent after {measured} ns of silence (retry {retry}), earlier than the configured local ACK timeout 4.096 us x 2^{t} = {configured} ns (--qp-timeout {t}, {QP_TIMEOUT_TOLERANCE_PERCENT} % tolerance)",
                retx.psn.value()
            )
        },
    );
}

/// The retransmission a REQ-CM-* finding cites beside the CM REQ: its PSN, the frame before
/// it (the PSN's previous transmission, or the RNR NAK) and the retransmission, and what the
/// message says of it.
struct Cited {
    psn: Psn,
    frames: [u64; 2],
    detail: String,
}

/// The REQ-CM-* finding of disagreement `d`: the REQ and, when one was listed, the cited
/// retransmission (the shared shape of the three CM rules; the verdict is
/// `timing::compare`'s, the one `stats` prints).
fn report_cm(
    rule: &rules::Rule,
    x: &CmTimers<'_>,
    d: Disagreement,
    cited: Option<Cited>,
    judge: &mut Judge,
) {
    let req = x.cm.req_frame;
    let frames = match &cited {
        Some(c) => vec![req, c.frames[0], c.frames[1]],
        None => vec![req],
    };
    let psn = cited.as_ref().map(|c| c.psn);
    let cm = x.cm;
    judge.report(rule, &frames, x.conn, psn, || {
        let detail = cited.map(|c| c.detail).unwrap_or_default();
        format!("{}{detail} (CM REQ frame {req})", d.sentence(cm))
    });
}

/// The disagreement of `x` that `is` picks, if `compare` found one.
fn disagreement(x: &CmTimers<'_>, is: impl Fn(&Disagreement) -> bool) -> Option<Disagreement> {
    x.negotiated.found.iter().copied().find(|d| is(d))
}

/// REQ-CM-ACK-TIMEOUT: the first timeout retransmissions of a CM-opened incarnation came
/// earlier or later than the REQ's Local ACK Timeout allows. Cites the REQ and the first
/// listed first retry outside the range.
pub(crate) fn cm_ack_timeout(x: &CmTimers<'_>, judge: &mut Judge) {
    let Some(d @ Disagreement::AckTimeout { range, .. }) =
        disagreement(x, |d| matches!(d, Disagreement::AckTimeout { .. }))
    else {
        return;
    };
    let outside = |ns: u64| range.is_none_or(|(lo, hi)| ns < lo || ns > hi);
    let first =
        x.timing.timeout_retransmissions().iter().find(|t| t.retry == 1 && outside(t.measured_ns));
    let cited = first.map(|t| Cited {
        psn: t.psn,
        frames: t.frames,
        detail: format!(
            "; first: PSN {} resent {} ns after frame {}",
            t.psn.value(),
            t.measured_ns,
            t.frames[0]
        ),
    });
    report_cm(&rules::REQ_CM_ACK_TIMEOUT, x, d, cited, judge);
}

/// REQ-CM-RETRY-COUNT: a PSN of a CM-opened incarnation was retransmitted after timeouts
/// more times than the REQ's Retry Count. Cites the REQ and the first retransmission beyond
/// the count.
pub(crate) fn cm_retry_count(x: &CmTimers<'_>, judge: &mut Judge) {
    let Some(d) = disagreement(x, |d| matches!(d, Disagreement::RetryCount { .. })) else {
        return;
    };
    let limit = u32::from(x.cm.retry_count);
    let beyond = x.timing.timeout_retransmissions().iter().find(|t| t.retry == limit + 1);
    let cited = beyond.map(|t| Cited {
        psn: t.psn,
        frames: t.frames,
        detail: format!(
            ": retry {} of PSN {} (frame {}) is one the requester should not have sent",
            t.retry,
            t.psn.value(),
            t.frames[1]
        ),
    });
    report_cm(&rules::REQ_CM_RETRY_COUNT, x, d, cited, judge);
}

/// REQ-CM-RNR-RETRY-COUNT: a PSN of a CM-opened incarnation was retried after RNR NAKs more
/// times than the RNR Retry Count (the larger of the REQ's and the REP's; 7, retry for ever,
/// is never exceeded). Cites the REQ and the RNR NAK and retry beyond the count.
pub(crate) fn cm_rnr_retry_count(x: &CmTimers<'_>, judge: &mut Judge) {
    let Some(d @ Disagreement::RnrRetryCount { limit, .. }) =
        disagreement(x, |d| matches!(d, Disagreement::RnrRetryCount { .. }))
    else {
        return;
    };
    let beyond = rnr_retry_numbers(x.timing.rnr_waits()).find(|&(n, _)| n == u32::from(limit) + 1);
    let cited = beyond.map(|(n, w)| Cited {
        psn: w.psn,
        frames: w.frames,
        detail: format!(
            ": retry {n} of PSN {} (frame {}, after the RNR NAK in frame {}) is one the requester should not have sent",
            w.psn.value(), w.frames[1], w.frames[0]
        ),
    });
    report_cm(&rules::REQ_CM_RNR_RETRY_COUNT, x, d, cited, judge);
}
