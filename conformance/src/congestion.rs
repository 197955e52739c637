//! Congestion rules (CC-*): a flow that keeps receiving ECN-CE marks gets CNPs back to the
//! QP that sent the marked data, within a window before or after the mark (NICs rate-limit
//! CNPs per QP, so one CNP covers a burst), and CNPs go to QPs that sent CE-marked data.
//! With `--cnp-min-interval`, CNPs in one scope (QP, IP pair, destination) are no closer
//! than the NP's configured pacing (CC-CNP-PACING, `Congestion::paced`): a NIC that paces
//! per QP while the operator configured per-destination pacing, or an interval shorter than
//! configured, shows here.

use crate::hash::FastHashMap;
use std::net::IpAddr;

use crate::connections::ConnId;
use crate::finding::Judge;
use crate::options::{CnpPacing, CnpScope};
use crate::rules;

/// The CNPs one `--cnp-min-interval` scope compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum PacingKey {
    Qp(IpAddr, IpAddr, u32),
    Pair(IpAddr, IpAddr),
    Dest(IpAddr),
}

/// A CE-marked packet from `src` to `dst`, sent by QP `sender_qp` (if known).
#[derive(Debug, Clone, Copy)]
pub(crate) struct CeMark {
    pub(crate) frame: u64,
    pub(crate) ts: u64,
    pub(crate) src: IpAddr,
    pub(crate) dst: IpAddr,
    pub(crate) sender_qp: Option<u32>,
    pub(crate) conn: Option<ConnId>,
}

/// A CNP from `src` (the receiver of marked data) to QP `qp` on `dst`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Cnp {
    pub(crate) frame: u64,
    pub(crate) ts: u64,
    pub(crate) src: IpAddr,
    pub(crate) dst: IpAddr,
    pub(crate) qp: u32,
    pub(crate) conn: Option<ConnId>,
}

/// CE marks from one sender QP waiting for a CNP.
#[derive(Debug, Clone, Copy)]
struct Waiting {
    /// The QP that sent the marked packets (`None`: not known yet).
    sender_qp: Option<u32>,
    first_frame: u64,
    first_ts: u64,
    marks: u64,
    conn: Option<ConnId>,
}

/// Per host pair (sender, receiver of the marked data).
type Hosts = (IpAddr, IpAddr);

#[derive(Debug)]
pub(crate) struct Congestion {
    /// The CNP window (ns) and the cap on each table.
    window: u64,
    cap: usize,
    waiting: FastHashMap<Hosts, Vec<Waiting>>,
    /// Last CNP sent by the receiver to a sender QP: (receiver, sender, QP) -> time.
    last_cnp: FastHashMap<(IpAddr, IpAddr, u32), u64>,
    /// Last CNP from the receiver to any QP of the sender.
    last_cnp_any: FastHashMap<Hosts, u64>,
    /// Sender QPs that sent CE-marked data to the receiver.
    senders: FastHashMap<Hosts, Vec<Option<u32>>>,
    /// `--cnp-min-interval`: the configured pacing, and the last CNP (frame, ts) per key.
    pacing: Option<CnpPacing>,
    last_in_scope: FastHashMap<PacingKey, (u64, u64)>,
}

/// Bursts tracked per host pair, and host pairs / QPs remembered, before older state is dropped.
const WAITING_PER_HOSTS: usize = 64;
const SENDERS_PER_HOSTS: usize = 256;

impl Congestion {
    pub(crate) fn new(window: u64, cap: usize, pacing: Option<CnpPacing>) -> Self {
        Congestion {
            pacing,
            last_in_scope: FastHashMap::default(),
            window,
            cap,
            waiting: FastHashMap::default(),
            last_cnp: FastHashMap::default(),
            last_cnp_any: FastHashMap::default(),
            senders: FastHashMap::default(),
        }
    }

    pub(crate) fn entries(&self) -> usize {
        self.waiting.values().map(Vec::len).sum::<usize>()
            + self.last_cnp.len()
            + self.last_cnp_any.len()
            + self.senders.len()
            + self.last_in_scope.len()
    }

    /// Keeps the maps within `cap` entries each (history is dropped, never judged wrongly:
    /// a dropped CNP time only makes a later mark wait for the next CNP).
    fn bound(&mut self) {
        let cap = self.cap;
        if self.last_cnp.len() > cap {
            self.last_cnp.clear();
        }
        if self.last_cnp_any.len() > cap {
            self.last_cnp_any.clear();
        }
        if self.senders.len() > cap {
            self.senders.clear();
        }
        // A dropped CNP time only lets the next CNP of that scope pass unjudged.
        if self.last_in_scope.len() > cap {
            self.last_in_scope.clear();
        }
        // Bursts waiting for a CNP: beyond the cap the oldest host pairs are dropped unjudged
        // (never reported wrongly; a flood of marked host pairs cannot grow memory).
        if self.waiting.len() > cap {
            self.waiting.clear();
        }
    }

    /// A CE-marked packet.
    pub(crate) fn mark(&mut self, m: CeMark, judge: &mut Judge) {
        let CeMark { frame, ts, src, dst, sender_qp, conn } = m;
        let window = self.window;
        self.bound();
        let senders = self.senders.entry((src, dst)).or_default();
        if !senders.contains(&sender_qp) && senders.len() < SENDERS_PER_HOSTS {
            senders.push(sender_qp);
        }
        let recent = |t: Option<&u64>| t.is_some_and(|&c| ts.saturating_sub(c) <= window);
        let covered = match sender_qp {
            Some(q) => recent(self.last_cnp.get(&(dst, src, q))),
            None => recent(self.last_cnp_any.get(&(dst, src))),
        };
        self.expire((src, dst), ts, judge);
        if covered {
            return;
        }
        let list = self.waiting.entry((src, dst)).or_default();
        if let Some(w) = list.iter_mut().find(|w| w.sender_qp == sender_qp) {
            w.marks += 1;
        } else if list.len() < WAITING_PER_HOSTS {
            list.push(Waiting { sender_qp, first_frame: frame, first_ts: ts, marks: 1, conn });
        }
    }

    /// A CNP.
    pub(crate) fn cnp(&mut self, c: Cnp, judge: &mut Judge) {
        let Cnp { frame, ts, src, dst, qp, conn } = c;
        let window = self.window;
        self.bound();
        self.last_cnp.insert((src, dst, qp), ts);
        self.last_cnp_any.insert((src, dst), ts);
        if let Some(p) = self.pacing {
            self.paced(p, &c, judge);
        }
        let hosts = (dst, src);
        self.expire(hosts, ts, judge);
        if let Some(list) = self.waiting.get_mut(&hosts) {
            list.retain(|w| {
                !(w.sender_qp.is_none_or(|s| s == qp) && ts.saturating_sub(w.first_ts) <= window)
            });
        }
        let targeted =
            self.senders.get(&hosts).is_some_and(|s| s.contains(&Some(qp)) || s.contains(&None));
        if !targeted {
            judge.report(&rules::CC_CNP_TARGET, &[frame], conn, None, || {
                format!("CNP to QP 0x{qp:06x} on {dst}, which sent no CE-marked data to {src}")
            });
        }
    }

    /// CC-CNP-PACING: this CNP against the previous one in the configured scope.
    fn paced(&mut self, p: CnpPacing, c: &Cnp, judge: &mut Judge) {
        let key = match p.scope {
            CnpScope::Qp => PacingKey::Qp(c.src, c.dst, c.qp),
            CnpScope::Pair => PacingKey::Pair(c.src, c.dst),
            CnpScope::Dest => PacingKey::Dest(c.dst),
        };
        let Some((prev_frame, prev_ts)) = self.last_in_scope.insert(key, (c.frame, c.ts)) else {
            return;
        };
        let gap = c.ts.saturating_sub(prev_ts);
        if gap >= p.min_ns {
            return;
        }
        let scope = match p.scope {
            CnpScope::Qp => format!("to QP 0x{:06x} on {}", c.qp, c.dst),
            CnpScope::Pair => format!("from {} to {}", c.src, c.dst),
            CnpScope::Dest => format!("to {}", c.dst),
        };
        judge.report(&rules::CC_CNP_PACING, &[prev_frame, c.frame], c.conn, None, || {
            format!(
                "CNPs {scope} {gap} ns apart (frames {prev_frame}, {}), closer than the configured pacing {} ns (--cnp-min-interval {p})",
                c.frame, p.min_ns
            )
        });
    }

    /// Reports bursts whose window has passed without a CNP.
    fn expire(&mut self, hosts: Hosts, now: u64, judge: &mut Judge) {
        let window = self.window;
        let Some(list) = self.waiting.get_mut(&hosts) else { return };
        list.retain(|w| {
            if now.saturating_sub(w.first_ts) <= window {
                return true;
            }
            report(w, hosts, window, judge);
            false
        });
    }

    /// The size of each table [`Congestion::bound`] caps (a split run sums them to tell
    /// whether one run would have dropped state).
    pub(crate) fn sizes(&self) -> [usize; 5] {
        [
            self.waiting.len(),
            self.last_cnp.len(),
            self.last_cnp_any.len(),
            self.senders.len(),
            self.last_in_scope.len(),
        ]
    }

    /// The cap of each table.
    pub(crate) fn cap(&self) -> usize {
        self.cap
    }

    /// At the end: bursts whose window passed inside the capture, in the order of their
    /// first frame; `reported` is told each burst's first frame after its finding.
    pub(crate) fn finish(
        &mut self,
        end_ts: u64,
        judge: &mut Judge,
        mut reported: impl FnMut(&Judge, u64),
    ) {
        let window = self.window;
        let mut all: Vec<(Hosts, Waiting)> =
            self.waiting.drain().flat_map(|(h, v)| v.into_iter().map(move |w| (h, w))).collect();
        all.sort_by_key(|(_, w)| w.first_frame);
        for (hosts, w) in all {
            if end_ts.saturating_sub(w.first_ts) > window {
                report(&w, hosts, window, judge);
                reported(judge, w.first_frame);
            }
        }
    }
}

fn report(w: &Waiting, (src, dst): Hosts, window: u64, judge: &mut Judge) {
    let qp = w.sender_qp.map_or("its sender QP".to_string(), |q| format!("QP 0x{q:06x}"));
    let (marks, frame) = (w.marks, w.first_frame);
    judge.report(&rules::CC_CNP, &[frame], w.conn, None, || {
        format!(
            "{marks} CE-marked packet(s) from {src} to {dst} starting at frame {frame} got no CNP back to {qp} within {} us",
            window / 1000
        )
    });
}
