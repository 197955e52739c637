//! `roce-inspect stats`: totals, ICRC counts, the opcode histogram, and per connection
//! packets, bytes, messages, ACK/NAK kinds, CNPs, ECN-CE marks and retransmissions. Counting
//! allocates only when a new flow appears, never per frame.

use roce_parser::Config;
use serde::Serialize;
use std::fmt::Write as _;
use std::io::{self, Write};

use roce_conformance::{EndedBy, ModelOptions, Shard};

use roce_analysis::StatsDocument;
pub use roce_analysis::{
    Connection, Counters, Direction, FlowStats, NakCounts, Stats, NIC_HOSTS_MAX, NIC_HOSTS_SHOWN,
};

use crate::input::{warn_undecoded, Input, InputError, Window};
use crate::nic_counters::{NicInput, Reconciliation};

/// The members of `stats --format json` only the command line has, after the library's
/// (roce_analysis::StatsDocument; docs/json.md, docs/schema/stats.schema.json).
#[derive(Serialize)]
struct StatsExtra<'a> {
    /// `--nic-counters`: the host's counter deltas against the capture (docs/nic-counters.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    nic_counters: Option<&'a Reconciliation>,
    /// `-c`, `--frames`: the frames read (absent: all).
    #[serde(skip_serializing_if = "Window::is_all")]
    window: &'a Window,
    /// `-Y`, `--conn`: what the filter selected (absent without one).
    #[serde(skip_serializing_if = "Option::is_none")]
    selection: Option<crate::filter::SelectionJson<'a>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
}

/// Which part of the capture `stats` counts, and on how many threads.
#[derive(Clone, Copy)]
pub struct Scope<'a> {
    /// `--shard K/N`: the host pairs of this shard.
    pub shard: Shard,
    /// `--threads N`.
    pub threads: crate::threads::Threads,
    /// `-Y` / `--conn`: the connections listed (the capture's totals stay whole).
    pub filter: Option<&'a crate::filter::DisplayFilter>,
}

/// Runs the command.
pub fn run(
    input: &Input,
    format: Format,
    cfg: &Config,
    model: ModelOptions,
    nic: Option<&NicInput>,
    scope: Scope<'_>,
) -> Result<(), InputError> {
    let Scope { shard, threads, filter } = scope;
    if (filter.is_some() || !input.window.is_all()) && nic.is_some() {
        return Err(InputError(
            "--nic-counters reconciles the host's counters with the whole capture: not with \
             -Y/--filter, --conn, -c or --frames"
                .into(),
        ));
    }
    let mut stats = Stats::new(model);
    stats.counters.nic_host = nic.map(|n| n.host);
    let mut selection = filter.map(crate::filter::Selection::new);
    let summary = if input.files().is_some() {
        // Several captures: as below, and each packet's connection handed to the taps, so
        // that a packet lost between them is listed under it (`drops_listed[].connection`).
        crate::input::for_each_step(input, cfg, None, |step| {
            let roce_analysis::TapStep::Frame(d) = step else { return None };
            let own = stats.frame(shard, d)?.observation.map(|o| o.own);
            if let Some(sel) = &mut selection {
                sel.observe(d, |k| stats.incarnation_of(k));
            }
            own.map(|k| stats.connection_of(&k))
        })?
    } else {
        crate::threads::for_each_frame_on(
            threads,
            input,
            cfg,
            crate::threads::VerifyOn::Reader,
            |d| {
                if stats.frame(shard, d).is_none() {
                    return;
                }
                if let Some(sel) = &mut selection {
                    sel.observe(d, |k| stats.incarnation_of(k));
                }
            },
        )?
    }
    .of_shard(shard);
    warn_undecoded(&summary.undecoded);
    if let Some(e) = stats.counters.nic_host_unseen(input) {
        let shard = if shard.is_all() {
            String::new()
        } else {
            format!(" (in the host pairs of --shard {}/{})", shard.index(), shard.count())
        };
        return Err(InputError(format!("{e}{shard}")));
    }
    let (mut connections, not_listed) = stats.connections();
    if let Some(sel) = &selection {
        connections.retain(|c| sel.selects(&c.info.connection));
    }
    let selected = selection.as_ref().map(|s| s.describe(connections.len()));
    let connections_listed = connections.len();
    let nic = nic
        .map(|n| n.reconcile(&connections, not_listed, stats.counters.nic_host_bad_icrc))
        .transpose()
        .map_err(|e| InputError(format!("--nic-counters: {e}")))?;
    let mut out = crate::output::stdout_buffered();
    let res = match format {
        Format::Json => {
            let extra = StatsExtra {
                nic_counters: nic.as_ref(),
                window: &input.window,
                selection: selection.as_ref().map(|s| s.json(connections_listed)),
            };
            let j = StatsDocument::new(&stats, connections, not_listed, &summary, extra);
            serde_json::to_writer_pretty(&mut out, &j)
                .map_err(io::Error::from)
                .and_then(|()| writeln!(out))
        }
        Format::Text => {
            let (conns, warnings) = (&connections, &summary.warnings);
            let mut t =
                text_report(input, &stats, conns, not_listed, warnings, selected.as_deref());
            if let Some(taps) = &summary.taps {
                t.push('\n');
                crate::taps::write_text(&mut t, taps);
            }
            if let Some(r) = &nic {
                crate::nic_counters::write_text(&mut t, r);
            }
            out.write_all(t.as_bytes())
        }
    };
    crate::output::written(res.and_then(|()| out.flush()))
}

/// Mirror sessions or VNIs the text lists per tunnel kind (the JSON has them all).
const TUNNEL_IDS_SHOWN: usize = 8;

fn secs(ns: u64) -> String {
    format!("{}.{:06} s", ns / 1_000_000_000, (ns % 1_000_000_000) / 1000)
}

fn text_report(
    input: &Input,
    s: &Stats,
    conns: &[Connection],
    not_listed: u64,
    warnings: &[String],
    selected: Option<&str>,
) -> String {
    let mut t = String::new();
    let dur = s.counters.duration_ns();
    let _ = writeln!(t, "Capture   {input}");
    let c = &s.counters;
    let ib = if c.infiniband > 0 {
        format!(", {} native InfiniBand", c.infiniband)
    } else {
        String::new()
    };
    let _ = writeln!(
        t,
        "Frames    {} ({} RoCE: {} RoCEv2, {} RoCEv1{ib}; {} not decoded), duration {}",
        c.frames,
        c.roce_frames(),
        c.roce_v2,
        c.roce_v1,
        c.undecoded,
        secs(dur)
    );
    if c.ib_unmodelled > 0 {
        let _ = writeln!(
            t,
            "          {} InfiniBand frames without a GRH are not in the connections below: their endpoints are LIDs, which roce-inspect does not key connections by yet",
            c.ib_unmodelled
        );
    }
    let _ = writeln!(
        t,
        "ICRC      {} ok, {} bad, {} unverifiable",
        s.counters.icrc[0], s.counters.icrc[1], s.counters.icrc[2]
    );
    for k in s.counters.tunnels.per_kind() {
        let ids = if k.sessions.is_empty() { &k.vnis } else { &k.sessions };
        let what = if k.sessions.is_empty() { "VNI" } else { "session" };
        let _ = write!(t, "Tunnel    {} ({}): {} frames", k.name, k.kind, k.frames);
        for (i, id) in ids.iter().take(TUNNEL_IDS_SHOWN).enumerate() {
            let _ =
                write!(t, "{}{what} {}: {}", if i == 0 { "; " } else { ", " }, id.id, id.frames);
        }
        if ids.len() > TUNNEL_IDS_SHOWN {
            let _ = write!(t, ", {} more", ids.len() - TUNNEL_IDS_SHOWN);
        }
        let _ = writeln!(t);
    }
    let _ = writeln!(t, "\nOpcodes");
    for (name, n) in s.counters.opcode_histogram() {
        let _ = writeln!(t, "  {name:<40} {n:>10}");
    }
    let problems = s.counters.problem_counts();
    if !problems.is_empty() {
        let _ = writeln!(t, "\nProblems (frames)");
        for (p, n) in problems {
            let _ = writeln!(t, "  {:<70} {n:>8}", p.message());
        }
    }
    if let Some(line) = input.window.describe() {
        let _ = writeln!(t, "\n{line}");
    }
    if let Some(line) = selected {
        let _ = writeln!(t, "\n{line}");
    }
    let _ = writeln!(t, "\nConnections ({})", conns.len());
    if not_listed > 0 {
        let _ = writeln!(t, "  ({not_listed} more, with fewer packets, counted but not listed)");
    }
    for c in conns {
        let c_info = &c.info;
        let how = c_info
            .paired_by
            .map_or("one direction seen".to_string(), |h| format!("paired by {}", h.as_str()));
        let _ = writeln!(t, "  {}  {}  ({how})", c_info.connection, c_info.transport);
        if !c_info.began.why.is_empty() {
            let _ = writeln!(t, "    began: {}", c_info.began.why);
        }
        if c_info.ended.how != EndedBy::CaptureEnd {
            let _ = writeln!(t, "    ended: {}", c_info.ended.why);
        }
        let x = &c.total;
        let _ = writeln!(
            t,
            "    {} packets, {} bytes, {} payload bytes, {} messages, {} ACKs, {} NAKs, {} RNR NAKs, {} CNPs, {} ECN-CE, {} retransmitted PSNs",
            x.packets,
            x.bytes,
            x.payload_bytes,
            x.messages,
            x.acks,
            x.naks.total(),
            x.rnr_naks,
            x.cnps,
            x.ecn_ce,
            x.retransmissions
        );
        if x.naks.total() > 0 {
            let n = &x.naks;
            let _ = writeln!(
                t,
                "    NAKs: {} PSN sequence error, {} invalid request, {} remote access error, {} remote operational error, {} other",
                n.psn_sequence_error,
                n.invalid_request,
                n.remote_access_error,
                n.remote_operational_error,
                n.invalid_rd_request + n.reserved
            );
        }
        let _ = writeln!(
            t,
            "    duration {}, goodput {:.3} Mb/s",
            secs(c.duration_ns),
            c.goodput_bps / 1e6
        );
        crate::timing_text::write(&mut t, &c.timing);
        crate::timing_text::write_by_requester(&mut t, &c.directions);
        crate::timing_text::write_congestion(&mut t, &c.congestion);
    }
    crate::timing_text::write_cnp_scopes(&mut t, &s.counters.cnp_scopes());
    let cm = s.cm_exchanges();
    if !cm.is_empty() {
        let _ = writeln!(t, "\nCM connections ({})", cm.len());
        for c in cm {
            let pq = c.passive_qpn.map_or("?".to_string(), |q| format!("0x{q:06x}"));
            let ppsn = c.rep_starting_psn.map_or("?".to_string(), |q| q.value().to_string());
            let _ = writeln!(
                t,
                "  {} QP 0x{:06x} (start PSN {}) -> {} QP {pq} (start PSN {ppsn}), {}, PMTU {}, {}{}  [frames {}..{}]",
                c.active,
                c.active_qpn,
                c.req_starting_psn.value(),
                c.passive,
                c.transport,
                c.pmtu.map_or_else(|| format!("code {} (reserved)", c.pmtu_code), |m| m.to_string()),
                c.outcome,
                c.reject_reason.map_or(String::new(), |r| format!(" ({r})")),
                c.req_frame,
                c.last_frame
            );
        }
    }
    for w in warnings {
        let _ = writeln!(t, "\nwarning: {w}");
    }
    t
}
