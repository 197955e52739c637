//! `check --threads N`: the checker split by host pair over N workers, each with a checker
//! of its own ([`Checker::for_shard`]), merged into one run's report
//! ([`roce_conformance::merge_shards`]).
//!
//! Threads: the reader ([`read_batches`]: the record format, a copy of each frame into a
//! batch, and the shard of each frame from its addresses alone, [`Router`]), the calling
//! thread (hands each batch to every worker), and N workers. Every worker gets every batch
//! (shared, not copied): it keeps the capture's clock from all the frames' times and parses
//! and judges the frames routed to it. The last worker done with a batch gives it back to
//! the reader, so at most [`super::IN_FLIGHT`] batches exist.
//!
//! The router reads only the link and network headers (roce-parser's [`parse_prefix`], the
//! parser's own decode of them), so it could disagree with the whole parse only on a frame
//! the parser decodes in some other way: each worker checks, for every RoCE packet it
//! parses, that the packet's host pair is in its shard. Frames that are not RoCE change no
//! state but the counts, which add up wherever they are judged.
//!
//! When the shards cannot give one run's report (a cap one run would reach across host
//! pairs, a misrouted packet: [`roce_conformance::NotMergeable`]), [`check_sharded`] says
//! so, with the capture's warnings not written, and the caller checks the capture again on
//! one thread. Workers stop early once their flows together pass `--max-flows`.

use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::Arc;
use std::thread;

use roce_capture::{Frame, L2Start};
use roce_conformance::{
    merge_shards, Checker, FrameInfo, NotMergeable, Options, Report, Shard, ShardOfPair,
    ShardReport,
};
use roce_parser::{parse_ethertype_prefix, parse_infiniband_prefix, parse_prefix, Config, Packet};

use super::{channels, read_batches, Batch, ConsumerEnds, Threads, IN_FLIGHT};
use crate::input::{
    count_undecoded, decode_into, Decoded, Input, InputError, ReadSummary, UndecodedGroup,
};

/// Workers at most: a frame's shard is one byte of the batch.
const MAX_WORKERS: u32 = 255;

/// `check` over `input` on `threads` workers split by host pair (and only the host pairs
/// of `shard`, `--shard K/N`): one run's report and reading summary, or `Ok(None)` when
/// the shards could not give one run's report; then nothing was written and the caller
/// checks the capture on one thread. The capture's warnings are written when the run
/// succeeds or fails to read, as one thread writes them.
pub fn check_sharded(
    input: &Input,
    cfg: &Config,
    opts: &Options,
    shard: Shard,
    threads: Threads,
) -> Result<Option<(Report, ReadSummary)>, InputError> {
    check_routed(input, cfg, opts, shard, Router::new(threads, route))
}

/// [`check_sharded`] with the frames placed by `router` (tests give it one that lies).
fn check_routed(
    input: &Input,
    cfg: &Config,
    opts: &Options,
    shard: Shard,
    router: Router,
) -> Result<Option<(Report, ReadSummary)>, InputError> {
    let workers = router.workers;
    let stop = AtomicBool::new(false);
    let flows = AtomicUsize::new(0);
    let (mut reader_ends, consumer) = channels();
    reader_ends.route = Some(router);
    let (ends, read, held) = thread::scope(|s| {
        let reader = s.spawn(move || {
            crate::output::hold_warnings();
            let r = read_batches(input, None, reader_ends);
            (r, crate::output::held_warnings())
        });
        let mut to_workers = Vec::new();
        let mut running = Vec::new();
        for index in 0..workers {
            let (tx, rx) = mpsc::sync_channel::<Arc<Batch>>(IN_FLIGHT);
            let w = Worker {
                index,
                count: workers,
                cfg,
                opts,
                shard,
                stop: &stop,
                flows: &flows,
                back: consumer.empty.clone(),
            };
            running.push(s.spawn(move || w.run(rx)));
            to_workers.push(tx);
        }
        // Only the workers give batches back: once they have all stopped (a cap, a
        // misrouted packet), the reader's wait for an empty batch ends instead of waiting
        // for this thread, which waits for the reader.
        let ConsumerEnds { full, empty } = consumer;
        drop(empty);
        for (_, batch) in full.iter() {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            // The last worker gets this thread's reference: whoever drops the last one
            // gives the batch back, and that must be a worker, not this thread.
            let mut shared = Some(Arc::new(batch));
            let sent = to_workers.iter().enumerate().all(|(i, tx)| {
                let b = if i + 1 == to_workers.len() {
                    shared.take()
                } else {
                    shared.as_ref().map(Arc::clone)
                };
                b.is_some_and(|b| tx.send(b).is_ok())
            });
            if !sent {
                break;
            }
        }
        // Hang up: the workers end with their channels, the reader with `full` and, when
        // it waits for an empty batch, with the workers' ends of `empty`.
        drop(to_workers);
        drop(full);
        let ends: Vec<Option<WorkerEnd>> = running.into_iter().map(join_worker).collect();
        let (read, held) = match reader.join() {
            Ok(r) => r,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        (ends, read, held)
    });
    let mut summary = match read {
        Ok(s) => s,
        Err(e) => {
            write_stderr(&held);
            return Err(e);
        }
    };
    let Some(ends) = ends.into_iter().collect::<Option<Vec<WorkerEnd>>>() else {
        return Ok(None);
    };
    let mut undecoded = Vec::new();
    let mut reports = Vec::new();
    for e in ends {
        undecoded.push(e.undecoded);
        reports.push(e.report);
    }
    let report = match merge_shards(opts, reports) {
        Ok(r) => r,
        Err(NotMergeable(_)) => return Ok(None),
    };
    summary.undecoded = merge_undecoded(undecoded);
    write_stderr(&held);
    Ok(Some((report, summary)))
}

fn write_stderr(held: &str) {
    use std::io::Write as _;
    let _ = std::io::stderr().lock().write_all(held.as_bytes());
}

/// A worker's result; `None` when it stopped early (a cap, a misrouted packet).
fn join_worker(h: thread::ScopedJoinHandle<'_, Option<WorkerEnd>>) -> Option<WorkerEnd> {
    match h.join() {
        Ok(r) => r,
        Err(panic) => std::panic::resume_unwind(panic),
    }
}

/// What a worker hands back.
struct WorkerEnd {
    report: ShardReport,
    undecoded: Vec<UndecodedGroup>,
}

/// One worker: its shard of `count`, what it judges with, and what the workers share.
struct Worker<'a> {
    index: u32,
    count: u32,
    cfg: &'a Config,
    opts: &'a Options,
    /// `--shard K/N`: the host pairs the process judges at all.
    shard: Shard,
    /// Set by any worker that cannot give its part of one run's report: all stop.
    stop: &'a AtomicBool,
    /// The flows of all workers, against `--max-flows`.
    flows: &'a AtomicUsize,
    /// Where the last worker done with a batch gives it back to the reader.
    back: SyncSender<Batch>,
}

impl Worker<'_> {
    fn run(self, rx: Receiver<Arc<Batch>>) -> Option<WorkerEnd> {
        let mut checker = Checker::for_shard(self.opts.clone());
        let mut undecoded = Vec::new();
        let mut mine = ShardOfPair::new(self.count);
        let mut process = ShardOfPair::new(self.shard.count());
        let (me, max_flows) = (self.index as u8, self.opts.max_flows.max(1));
        let mut clock = 0u64;
        let mut published = 0usize;
        for batch in rx.iter() {
            if self.stop.load(Ordering::Relaxed) {
                return self.stopped(batch, &rx);
            }
            for (i, (m, &k)) in batch.metas().iter().zip(&batch.out).enumerate() {
                let before = clock;
                clock = clock.max(m.ts_ns);
                if k != me {
                    continue;
                }
                let mut d = Decoded { frame: batch.frame(i), packet: Ok(Packet::default()) };
                decode_into(&mut d, self.cfg);
                if let Err(why) = &d.packet {
                    count_undecoded(&mut undecoded, &d.frame, why);
                }
                let packet = d.packet.as_ref().ok();
                if let Some(p) = packet.filter(|p| p.roce.is_some()) {
                    if mine.of_frame(Some(p)) != self.index {
                        // The router and the parser disagree on this packet's host pair.
                        self.stop.store(true, Ordering::Relaxed);
                        return self.stopped(batch, &rx);
                    }
                }
                if !self.shard.is_all() && process.of_frame(packet) != self.shard.index() {
                    checker.tick(clock);
                    continue;
                }
                checker.tick(before);
                let f = &d.frame;
                let info =
                    FrameInfo { number: f.number, ts_ns: f.ts_ns, caplen: f.caplen, len: f.len };
                match packet {
                    Some(p) => checker.feed_shard(&info, p),
                    None => checker.feed_undecoded(&info),
                }
            }
            let now = checker.flow_count();
            if now > published {
                let delta = now - published;
                let all = self.flows.fetch_add(delta, Ordering::Relaxed) + delta;
                published = now;
                if all > max_flows {
                    self.stop.store(true, Ordering::Relaxed);
                    return self.stopped(batch, &rx);
                }
            }
            self.give_back(batch);
        }
        checker.tick(clock);
        Some(WorkerEnd { report: checker.finish_shard(), undecoded })
    }

    /// The last worker done with a batch gives it back to the reader.
    fn give_back(&self, batch: Arc<Batch>) {
        if let Some(b) = Arc::into_inner(batch) {
            let _ = self.back.try_send(b);
        }
    }

    /// The split gave up: this worker judges nothing more, but gives back the batch it holds
    /// and every batch still sent to it until the calling thread hangs up. A worker that
    /// returned at once dropped its references unreturned; with the other workers still
    /// waiting, the reader then waited for ever for an empty batch, and the calling thread
    /// for the reader (seen in cli/tests/threads.rs, `--max-flows 8` on 9,000 frames).
    fn stopped(&self, batch: Arc<Batch>, rx: &Receiver<Arc<Batch>>) -> Option<WorkerEnd> {
        self.give_back(batch);
        for b in rx.iter() {
            self.give_back(b);
        }
        None
    }
}

/// The reader's side of the split: each frame's shard, from its addresses.
pub(crate) struct Router {
    shards: ShardOfPair,
    workers: u32,
    /// A frame's host pair: [`route`].
    pair: fn(&Frame<'_>) -> Option<(IpAddr, IpAddr)>,
}

impl Router {
    /// Over the workers of `threads`, with `pair` finding each frame's host pair.
    fn new(threads: Threads, pair: fn(&Frame<'_>) -> Option<(IpAddr, IpAddr)>) -> Router {
        let workers = threads.get().min(MAX_WORKERS);
        Router { shards: ShardOfPair::new(workers), workers, pair }
    }

    /// The shard of `frame` (0 without addresses), as one byte.
    #[inline]
    pub(crate) fn shard_of(&mut self, frame: &Frame<'_>) -> u8 {
        (self.pair)(frame).map_or(0, |(a, b)| self.shards.of_pair(a, b)) as u8
    }
}

/// The host pair of a frame from its link and network headers alone, as the parser finds
/// it (IPv4, IPv6 or RoCEv1's GRH after Ethernet with up to 8 VLAN tags, or after another
/// link header): roce-parser's [`parse_prefix`], which reads those headers and no more.
/// `None` when there is none (the frame goes to shard 0).
pub(crate) fn route(frame: &Frame<'_>) -> Option<(IpAddr, IpAddr)> {
    let prefix = match frame.l2() {
        L2Start::Ethernet(b) => parse_prefix(b),
        L2Start::Network { ethertype, data } => parse_ethertype_prefix(ethertype, data),
        L2Start::Infiniband(b) => parse_infiniband_prefix(b),
        L2Start::Unsupported(_) => return None,
    };
    Some(prefix.ok()??.host_pair())
}

/// The workers' undecoded frames as one run counts them: one group per reason and link
/// type, with the first frame (and its message) of all, in the order groups first appeared.
fn merge_undecoded(parts: Vec<Vec<UndecodedGroup>>) -> Vec<UndecodedGroup> {
    let mut all: Vec<UndecodedGroup> = Vec::new();
    for g in parts.into_iter().flatten() {
        match all.iter_mut().find(|a| a.reason == g.reason && a.link_type == g.link_type) {
            Some(a) => {
                let frames = a.frames + g.frames;
                if g.first_frame < a.first_frame {
                    *a = g;
                }
                a.frames = frames;
            }
            None => all.push(g),
        }
    }
    all.sort_by_key(|g| g.first_frame);
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A router that places frames where the parser's host pair says they do not belong
    /// makes the split give up (`Ok(None)`, nothing written), so that `check` judges the
    /// capture on one thread instead; the true router on the same capture does not.
    #[test]
    fn a_misrouted_packet_makes_the_split_give_up() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../pcaps/sample.pcap");
        assert!(path.exists(), "{}", path.display());
        let input: Input = path.as_path().into();
        let (cfg, opts) = (Config::default(), Options::default());
        let two = Threads::new(2);
        let (report, _) = check_routed(&input, &cfg, &opts, Shard::ALL, Router::new(two, route))
            .unwrap()
            .expect("the true router gives one run's report");
        assert!(report.roce_frames > 0);
        // Every host pair seen as the pair of its destination with itself: some land in
        // the other worker's shard (checked below), and their packets are misrouted.
        let lying: fn(&Frame<'_>) -> Option<(IpAddr, IpAddr)> = |f| route(f).map(|(_, b)| (b, b));
        let mut cap = roce_capture::open(&path).unwrap();
        let (mut true_shards, mut lying_shards) = (ShardOfPair::new(2), ShardOfPair::new(2));
        let mut disagree = 0;
        while let Some(Ok(f)) = cap.next_frame() {
            if let (Some((a, b)), Some((c, d))) = (route(&f), lying(&f)) {
                disagree += usize::from(true_shards.of_pair(a, b) != lying_shards.of_pair(c, d));
            }
        }
        assert!(disagree > 0, "the lying router must place some frame elsewhere");
        let split = check_routed(&input, &cfg, &opts, Shard::ALL, Router::new(two, lying));
        assert!(split.unwrap().is_none(), "a misrouted packet makes the split give up");
    }

    /// The router before it used roce-parser: the Ethernet, VLAN and IP offsets of its own.
    fn offsets_route(frame: &Frame<'_>) -> Option<(IpAddr, IpAddr)> {
        use std::net::{Ipv4Addr, Ipv6Addr};
        let network_pair = |ethertype: u16, data: &[u8]| -> Option<(IpAddr, IpAddr)> {
            let v4 = |b: &[u8]| Some(IpAddr::V4(Ipv4Addr::from(<[u8; 4]>::try_from(b).ok()?)));
            let v6 = |b: &[u8]| Some(IpAddr::V6(Ipv6Addr::from(<[u8; 16]>::try_from(b).ok()?)));
            match ethertype {
                0x0800 => {
                    let h = data.get(..20)?;
                    (h[0] >> 4 == 4).then_some(())?;
                    Some((v4(&h[12..16])?, v4(&h[16..20])?))
                }
                0x86dd => {
                    let h = data.get(..40)?;
                    (h[0] >> 4 == 6).then_some(())?;
                    Some((v6(&h[8..24])?, v6(&h[24..40])?))
                }
                0x8915 => {
                    let h = data.get(..40)?;
                    Some((v6(&h[8..24])?, v6(&h[24..40])?))
                }
                _ => None,
            }
        };
        let (mut ethertype, data, mut at) = match frame.l2() {
            L2Start::Ethernet(b) => (u16::from_be_bytes([*b.get(12)?, *b.get(13)?]), b, 14),
            L2Start::Network { ethertype, data } => return network_pair(ethertype, data),
            L2Start::Infiniband(_) | L2Start::Unsupported(_) => return None,
        };
        let mut tags = 0;
        while matches!(ethertype, 0x8100 | 0x88a8 | 0x9100) {
            if tags == 8 {
                return None;
            }
            ethertype = u16::from_be_bytes([*data.get(at + 2)?, *data.get(at + 3)?]);
            at += 4;
            tags += 1;
        }
        network_pair(ethertype, data.get(at..)?)
    }

    /// Every frame of the shipped captures (RoCE or not, decoded or not) gets the host pair,
    /// hence the shard, that the router's own offsets gave before it used roce-parser.
    #[test]
    fn the_router_places_every_frame_as_its_offsets_did() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../pcaps");
        let (mut frames, mut paired, mut cuts, mut unpaired) = (0, 0, 0, 0);
        let damaged = root.join("../testdata/capture");
        for dir in [root.clone(), root.join("conformance"), damaged] {
            for e in std::fs::read_dir(dir).unwrap() {
                let path = e.unwrap().path();
                let name = path.to_string_lossy();
                if !(name.ends_with(".pcap") || name.ends_with(".pcapng")) {
                    continue;
                }
                let Ok(mut cap) = roce_capture::open(&path) else { continue };
                while let Some(f) = cap.next_frame() {
                    let Ok(f) = f else { break };
                    frames += 1;
                    let pair = route(&f);
                    paired += usize::from(pair.is_some());
                    // A mirrored frame (pcaps/sample-erspan.pcap) is placed by its inner hosts,
                    // which the offsets never looked for: the_router_finds_the_parsers_host_pair
                    // holds it to the parser's.
                    let tunnelled = roce_parser::parse_ethernet(f.data, &Default::default())
                        .is_ok_and(|p| p.is_encapsulated());
                    // Native InfiniBand (pcaps/sample-ib.pcap) has no Ethernet or IP offsets:
                    // the router takes the GRH's GIDs, as the model keys it.
                    let native_ib = matches!(f.l2(), roce_capture::L2Start::Infiniband(_));
                    if tunnelled || native_ib {
                        continue;
                    }
                    assert_eq!(pair, offsets_route(&f), "{} frame {}", path.display(), f.number);
                    // The frame cut short anywhere in its first 100 bytes (link, VLAN and
                    // network headers): the same pair, or none, as the offsets gave.
                    for cut in 0..f.data.len().min(100) {
                        let c = Frame { data: &f.data[..cut], ..f };
                        cuts += 1;
                        unpaired += usize::from(route(&c).is_none());
                        assert_eq!(
                            route(&c),
                            offsets_route(&c),
                            "{} frame {} cut at {cut}",
                            path.display(),
                            f.number
                        );
                    }
                }
            }
        }
        assert!(frames > 1000 && paired > 1000, "{paired} of {frames} frames paired");
        assert!(unpaired > 1000 && unpaired < cuts, "{unpaired} of {cuts} cut frames unpaired");
    }

    /// The router finds the parser's host pair on every frame of the shipped captures where
    /// the parser decodes RoCE.
    #[test]
    fn the_router_finds_the_parsers_host_pair() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../pcaps");
        let mut roce = 0;
        for dir in [root.clone(), root.join("conformance")] {
            for e in std::fs::read_dir(dir).unwrap() {
                let path = e.unwrap().path();
                if !path.to_string_lossy().ends_with(".pcap") {
                    continue;
                }
                let mut cap = roce_capture::open(&path).unwrap();
                while let Some(f) = cap.next_frame() {
                    let Ok(f) = f else { continue };
                    let d = crate::input::decode(f, &Config::default());
                    if let Ok(p) = &d.packet {
                        if p.roce.is_some() {
                            roce += 1;
                            assert_eq!(
                                route(&d.frame),
                                roce_conformance::host_pair(p),
                                "{} frame {}",
                                path.display(),
                                d.frame.number
                            );
                        }
                    }
                }
            }
        }
        assert!(roce > 1000, "{roce} RoCE frames");
    }
}
