//! One request stream of a connection (the requests one QP sends, and the responses that
//! come back): the requester and responder halves of the reference model, and the evidence
//! both depend on. A response naming a PSN past every request captured is *held*: it is
//! capture loss if later requests go beyond it (CAP-GAP), a reordered capture if the request
//! it names turns up within the reorder window (CAP-REORDER; then it is judged as if it came
//! in order), and a responder fault (RSP-ACK-RANGE) if the requester's own later requests,
//! captured in its transmit order, stay below it past the window, or if the responder itself
//! goes on to answer PSNs below it. A held response that proves a fault changes no state, so
//! nothing cascades from it.

use crate::connections::ConnId;
use crate::context::Pkt;
use crate::finding::Judge;
use crate::requester::{Held, Requester};
use crate::responder::Responder;
use crate::rules;

#[derive(Debug, Clone, Default)]
pub(crate) struct Stream {
    pub(crate) req: Requester,
    pub(crate) rsp: Responder,
    held: Option<Held>,
    /// RSP-NAK-ERROR was reported for this flow's sender.
    pub(crate) fatal_reported: bool,
    /// The stream's timers, measured when an option judges them (`--qp-timeout`) or CM
    /// opened the incarnation (REQ-CM-*); at most `timing`'s window per flow.
    pub(crate) timing: Option<Box<crate::timing::Timing>>,
    /// While an idle reconnect begun by this stream's requester is provisional: the old
    /// incarnation's stream, judging the same requests ([`Shadow`]).
    pub(crate) shadow: Option<Box<Shadow>>,
}

/// The old incarnation's requester stream beside a provisional idle reconnect
/// (`Connections::maybe_reconnect`): the requests after the gap are judged in it too, with
/// its findings held, until the peer's first packet decides which incarnation they belong
/// to. Undone, it takes over (and its findings are reported, less those the provisional
/// stream reported already); confirmed, it is dropped. One per provisional reconnect.
#[derive(Debug, Clone)]
pub(crate) struct Shadow {
    pub(crate) stream: Stream,
    pub(crate) judge: Judge,
    /// What the old incarnation judged by: its name, PMTU, P_Key, CM starting PSN, and
    /// whether its timers were measured.
    pub(crate) conn: Option<ConnId>,
    pub(crate) pmtu: Option<u32>,
    pub(crate) pkey: Option<u16>,
    pub(crate) cm_start: Option<crate::psn::Psn>,
    pub(crate) timed: bool,
    /// (rule, frames) of the findings the provisional stream reported meanwhile (at most
    /// [`SHADOW_REPORTED`]).
    pub(crate) reported: Vec<(&'static str, Vec<u64>)>,
}

/// Findings of the provisional stream remembered beside a [`Shadow`].
pub(crate) const SHADOW_REPORTED: usize = 64;

impl Stream {
    /// A copy of the stream without its [`Shadow`] (the old stream beside a provisional
    /// idle reconnect).
    pub(crate) fn copy(&self) -> Stream {
        Stream {
            req: self.req.clone(),
            rsp: self.rsp.clone(),
            held: self.held,
            fatal_reported: self.fatal_reported,
            timing: self.timing.clone(),
            shadow: None,
        }
    }

    pub(crate) fn entries(&self) -> usize {
        self.req.entries()
            + self.rsp.entries()
            + self.timing.as_ref().map_or(0, |t| t.entries())
            + self.shadow.as_ref().map_or(0, |s| s.stream.entries())
    }

    /// A request packet of the stream.
    /// Returns whether the request was new (not a retransmission or duplicate); `None` for a
    /// request from outside the connection's partition (another P_Key), which the responder
    /// must drop: it is no transmission of the requester's own and takes no part in the
    /// requester's sequence state (RSP-PKEY judges whether it was dropped).
    pub(crate) fn request(&mut self, x: &Pkt<'_>, judge: &mut Judge) -> Option<bool> {
        if x.foreign() {
            self.rsp.on_foreign(x);
            return None;
        }
        if let Some(pmtu) = x.pmtu {
            self.req.size_reads(pmtu);
            self.rsp.size_reads(pmtu);
        }
        let seen = self.req.on_request(x, judge);
        self.rsp.on_request(x, seen);
        if seen.new {
            self.settle_held(x, judge);
        }
        Some(seen.new)
    }

    /// A response to the stream's requests.
    pub(crate) fn response(&mut self, x: &Pkt<'_>, judge: &mut Judge) {
        if let Some(pmtu) = x.pmtu {
            self.req.size_reads(pmtu);
            self.rsp.size_reads(pmtu);
        }
        if let Some(fp) = self.rsp.partition(x, judge) {
            // The responder let in a request from another partition (RSP-PKEY): its PSN is
            // in the responder's sequence now, so the requester's next PSN follows it.
            self.req.let_in(fp);
        }
        let max = self.req.max_psn();
        let beyond = max.is_some_and(|m| m < x.psn);
        self.req.on_response(x, beyond);
        // A READ response past the requester's PSNs that answers a READ re-issued with a
        // longer range is no response ahead of the capture: the READ it answers was captured.
        let ahead = beyond && !self.rsp.answers_read(x);
        let Some(max) = max else { return };
        let ev = self.rsp.answer(x, judge);
        if ahead {
            if self.held.is_none() {
                self.held = Some(Held {
                    psn: x.psn,
                    frame: x.number(),
                    ts: x.ts(),
                    max_then: max,
                    seq_nak: x.seq_nak(),
                    aeth: ev,
                });
            }
            return;
        }
        if let (Some(h), Some(_)) = (self.held, ev) {
            if x.psn < h.psn {
                self.held = None;
                self.rsp.msn_unknown();
                let p = x.psn;
                judge.report(&rules::RSP_ACK_RANGE, &[h.frame, x.number()], x.conn, Some(h.psn), || {
                    format!(
                        "response in frame {} names PSN {}, but the requester had sent only up to {}, and the responder's own later response (frame {}) names PSN {p} below it",
                        h.frame, h.psn, h.max_then, x.number()
                    )
                });
            }
        }
        if let Some(ev) = ev {
            self.rsp.on_ack(ev, x.conn, judge);
        }
    }

    /// A new request PSN: settles a held response.
    fn settle_held(&mut self, x: &Pkt<'_>, judge: &mut Judge) {
        let Some(h) = self.held else { return };
        let p = x.psn;
        if p == h.psn {
            self.held = None;
            judge.report(&rules::CAP_REORDER, &[h.frame, x.number()], x.conn, Some(p), || {
                format!(
                    "response in frame {} names PSN {p} before the request (frame {}) was captured, {} us later",
                    h.frame,
                    x.number(),
                    x.ts().saturating_sub(h.ts) / 1000
                )
            });
            self.apply_held(x, &h, judge);
        } else if h.psn < p {
            // Requests went beyond the PSN named: it was sent, the capture lost it (the jump
            // was reported as CAP-GAP). What it completed is unknown: no MSN judgement.
            self.held = None;
            self.rsp.msn_unknown();
            self.apply_held(x, &h, judge);
        } else if x.ts().saturating_sub(h.ts) > x.opts.reorder_window_ns {
            self.held = None;
            self.rsp.msn_unknown();
            judge.report(&rules::RSP_ACK_RANGE, &[h.frame, x.number()], x.conn, Some(h.psn), || {
                format!(
                    "response in frame {} names PSN {}, but the requester had sent only up to {} and its later requests (frame {}) continue below it",
                    h.frame,
                    h.psn,
                    h.max_then,
                    x.number()
                )
            });
        }
    }

    fn apply_held(&mut self, x: &Pkt<'_>, h: &Held, judge: &mut Judge) {
        self.req.ahead_confirmed(x, h);
        if let Some(ev) = h.aeth {
            self.rsp.on_ack(ev, x.conn, judge);
        }
    }

    /// The end of the incarnation: pending evidence becomes findings.
    pub(crate) fn finish(
        &mut self,
        conn: Option<ConnId>,
        paired: bool,
        end_ts: u64,
        ack_timeout_ns: u64,
        judge: &mut Judge,
    ) {
        if let Some(h) = self.held.take() {
            let missing = (h.psn - h.max_then).max(0) as u64;
            self.req.missing += missing;
            judge.report(&rules::CAP_GAP, &[h.frame], conn, Some(h.psn), || {
                format!(
                    "response in frame {} acknowledges PSN {}, but requests were captured only up to {}: {missing} request(s) missing from the capture",
                    h.frame, h.psn, h.max_then
                )
            });
        }
        if paired {
            self.rsp.finish(conn, end_ts, ack_timeout_ns, judge);
        }
    }
}
