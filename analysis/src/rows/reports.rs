//! The connections table, `connections.parquet` (one row per connection incarnation: the connection model's report,
//! the objects of `check --format json`'s `connections` with the counters of `stats --format
//! json`'s) and the findings table, `findings.parquet` (one row per finding, `check --format json`'s `findings`).
//! Names are the JSON members' paths with `_` for `.` (`connection.qpn_a` is
//! `connection_qpn_a`, `began.how` is `began_how`, `naks.invalid_request` is
//! `naks_invalid_request`).
//!
//! Why two sources for one row: the checker judges and `stats` counts, each over the one
//! connection model ([`roce_conformance::Connections`]), so both name the same incarnations
//! and a row joins them on the connection's id ([`ConnId`]); the counters are `stats`' own
//! values, not a second count of them.

use roce_conformance::internal::timing::CongestionJson;
use roce_conformance::{find_rule, ConnId, ConnectionReport, Finding, TimingReport};

use super::{table, Joined};
use crate::stats::{Connection, FlowStats};

/// A row of `connections.parquet`: the checker's report of a connection and `stats`' counts of
/// the same incarnation (`None` if `stats` did not list it, which the shared model rules out
/// unless its listing was capped differently: the counter columns are then null).
#[derive(Debug, Clone, Copy)]
pub struct ConnectionRow<'c> {
    /// The checker's report of the incarnation.
    pub report: &'c ConnectionReport,
    /// `stats`' counters of it.
    pub counts: Option<&'c Connection>,
}

impl ConnectionRow<'_> {
    fn id(&self) -> Option<ConnId> {
        Some(self.report.info.connection)
    }
    /// One of `stats`' counters, both directions together.
    fn count(&self, f: impl FnOnce(&FlowStats) -> u64) -> Option<u64> {
        self.counts.map(|c| f(&c.total))
    }
    /// A figure of `stats`' `timing` object (null when not measured).
    fn timing<T>(&self, f: impl FnOnce(&TimingReport) -> Option<T>) -> Option<T> {
        self.counts.and_then(|c| f(&c.timing))
    }
    /// A figure of `stats`' `congestion` object (null when not measured).
    fn congestion<T>(&self, f: impl FnOnce(&CongestionJson) -> Option<T>) -> Option<T> {
        self.counts.and_then(|c| f(&c.congestion))
    }
}

fn frame_or_null(f: u64) -> Option<u64> {
    (f != 0).then_some(f)
}

fn text_or_null(s: &str) -> Option<&str> {
    (!s.is_empty()).then_some(s)
}

/// The `connection_*` columns of a [`ConnId`] (shared by both tables), then `$rest`.
macro_rules! conn_id_table {
    ($(#[$m:meta])* $list:ident, $write:ident($row:ty), |$x:ident| $id:expr, { $($rest:tt)* }) => {
        table! { $(#[$m])* pub $list, $write($row) {
            "connection" Str true "The connection's name as `check` and `stats` print it" => |$x| $id.map(|c: ConnId| c.to_string());
            "connection_a" Str true "Address of side a" => |$x| $id.map(|c: ConnId| c.a);
            "connection_qpn_a" Int true "QPN on side a (the DestQP of packets b -> a), when known" => |$x| $id.and_then(|c: ConnId| c.qpn_a);
            "connection_b" Str true "Address of side b" => |$x| $id.map(|c: ConnId| c.b);
            "connection_qpn_b" Int true "QPN on side b (the DestQP of packets a -> b), when known" => |$x| $id.and_then(|c: ConnId| c.qpn_b);
            "connection_incarnation" Int true "1 for the first connection on these QPs, 2 for the next, ..." => |$x| $id.map(|c: ConnId| c.incarnation);
            $($rest)*
        }}
    };
}

conn_id_table! {
    /// The columns of the connections table (`connections.parquet`), in file order.
    CONNECTION_COLUMNS, write_connection(ConnectionRow<'_>), |c| c.id(), {
    "transport" Str false "RC, UC, UD, XRC, ..." => |c| c.report.info.transport;
    "paired_by" Str true "cm or psn; null when one direction was seen" => |c| c.report.info.paired_by.map(|p| p.as_str());
    "pmtu" Int true "PMTU in bytes" => |c| c.report.info.pmtu;
    "pmtu_source" Str true "cm, option or inferred" => |c| c.report.info.pmtu_source.map(|p| p.as_str());
    "pkey" Int true "P_Key" => |c| c.report.info.pkey;
    "pkey_source" Str true "cm or first_packet" => |c| c.report.info.pkey_source.map(|p| p.as_str());
    "began_how" Str false "first_packets, cm, idle_reconnect or after_end" => |c| c.report.info.began.how.as_str();
    "began_frame" Int true "The frame that began it" => |c| frame_or_null(c.report.info.began.frame);
    "began_why" Str true "One sentence on how it began" => |c| text_or_null(&c.report.info.began.why);
    "ended_how" Str false "disconnect, reject, fatal_nak, reconnect, evicted or capture_end" => |c| c.report.info.ended.how.as_str();
    "ended_frame" Int true "The frame that ended it" => |c| frame_or_null(c.report.info.ended.frame);
    "ended_why" Str true "One sentence on how it ended" => |c| text_or_null(&c.report.info.ended.why);
    "packets" Int false "Packets of both directions" => |c| c.report.info.packets;
    "first_frame" Int false "Its first frame" => |c| c.report.info.first_frame;
    "last_frame" Int false "Its last frame" => |c| c.report.info.last_frame;
    "first_ts_ns" Int false "Timestamp of its first frame, ns since the epoch" => |c| c.report.info.first_ts;
    "last_ts_ns" Int false "Timestamp of its last frame, ns since the epoch" => |c| c.report.info.last_ts;
    "retransmissions" Int false "Retransmitted request packets (the checker's count)" => |c| c.report.retransmissions;
    "missing_packets" Int false "Packets known to be missing from the capture (PSN gaps, ACKs of uncaptured requests)" => |c| c.report.missing_packets;
    "partly_judged" Str true "Why parts were not judged, sentences joined by `; `; null when fully judged" => |c| Some(c.report.partly_judged.join("; ")).filter(|s| !s.is_empty());
    "bytes" Int true "Bytes on the wire, both directions (`stats`' `bytes`)" => |c| c.count(|t| t.bytes);
    "payload_bytes" Int true "RoCE payload bytes, both directions" => |c| c.count(|t| t.payload_bytes);
    "requests" Int true "Request packets" => |c| c.count(|t| t.requests);
    "responses" Int true "Response packets (acknowledgements, READ responses, NAKs)" => |c| c.count(|t| t.responses);
    "messages" Int true "Request messages completed (LAST or ONLY packets of SEND and WRITE, READ and atomic requests), retransmissions excluded" => |c| c.count(|t| t.messages);
    "acks" Int true "ACKNOWLEDGE packets with an ACK syndrome" => |c| c.count(|t| t.acks);
    "naks_psn_sequence_error" Int true "NAKs: PSN sequence error" => |c| c.count(|t| t.naks.psn_sequence_error);
    "naks_invalid_request" Int true "NAKs: invalid request" => |c| c.count(|t| t.naks.invalid_request);
    "naks_remote_access_error" Int true "NAKs: remote access error" => |c| c.count(|t| t.naks.remote_access_error);
    "naks_remote_operational_error" Int true "NAKs: remote operational error" => |c| c.count(|t| t.naks.remote_operational_error);
    "naks_invalid_rd_request" Int true "NAKs: invalid RD request" => |c| c.count(|t| t.naks.invalid_rd_request);
    "naks_reserved" Int true "NAKs with a reserved code" => |c| c.count(|t| t.naks.reserved);
    "rnr_naks" Int true "RNR NAKs" => |c| c.count(|t| t.rnr_naks);
    "cnps" Int true "CNPs" => |c| c.count(|t| t.cnps);
    "ecn_ce" Int true "Packets marked ECN-CE (congestion experienced)" => |c| c.count(|t| t.ecn_ce);
    "stats_retransmissions" Int true "Retransmitted request packets as `stats` counts them (PSN not newer than the direction's highest; `stats`' `retransmissions`)" => |c| c.count(|t| t.retransmissions);
    "duration_ns" Int true "Last timestamp minus first, ns (`stats`' `duration_ns`)" => |c| c.counts.map(|x| x.duration_ns);
    "timing_ack_latency_ns_p50" Int true "AckReq request to the ACK that covers it, median, ns (`timing.ack_latency_ns.p50`; null: none measured)" => |c| c.timing(|t| t.ack_latency_ns.map(|s| s.p50));
    "timing_ack_latency_ns_p99" Int true "The same, 99th percentile" => |c| c.timing(|t| t.ack_latency_ns.map(|s| s.p99));
    "timing_ack_latency_ns_max" Int true "The same, maximum" => |c| c.timing(|t| t.ack_latency_ns.map(|s| s.max));
    "timing_timeout_retransmissions" Int true "Timeout retransmissions, listed and not (`timing.timeout_retransmissions` plus `timeout_retransmissions_not_listed`)" => |c| c.timing(|t| Some(t.timeout_retransmissions.len() as u64 + t.timeout_retransmissions_not_listed));
    "timing_inferred_timeout_exponent" Int true "The local ACK timeout exponent t (4.096 us x 2^t) the first retries are consistent with (`timing.inferred_timeout_exponent.exponent`; null: no timeout)" => |c| c.timing(|t| t.inferred_timeout_exponent.as_ref().map(|i| i.exponent));
    "congestion_ce_to_cnp_ns_p50" Int true "First ECN-CE mark to the CNP back to its sender QP, median, ns (`congestion.ce_to_cnp_ns.p50`; CE-marked packets and CNPs are the `ecn_ce` and `cnps` columns)" => |c| c.congestion(|x| x.ce_to_cnp_ns.map(|s| s.p50));
    "congestion_ce_to_cnp_ns_max" Int true "The same, maximum" => |c| c.congestion(|x| x.ce_to_cnp_ns.map(|s| s.max));
    "congestion_cnp_interval_ns_qp_min" Int true "Shortest interval between CNPs to one QP of the connection, ns (`congestion.cnp_interval_ns.qp.min`)" => |c| c.congestion(|x| x.cnp_interval_ns.qp.map(|i| i.min));
    "congestion_cnp_interval_ns_qp_p50" Int true "The same, median" => |c| c.congestion(|x| x.cnp_interval_ns.qp.map(|i| i.p50));
}}

conn_id_table! {
    /// The columns of the findings table (`findings.parquet`), in file order.
    FINDING_COLUMNS, write_finding(Finding), |f| f.connection, {
    "rule" Str false "Rule ID (`roce-inspect rules`, docs/rules.md)" => |f| f.rule;
    "severity" Str false "error or warning" => |f| f.severity.as_str();
    "side" Str true "The side the rule judges (requester, responder, packet, capture, ...)" => |f| find_rule(f.rule).map(|r| r.side.as_str());
    "frame" Int true "The first frame that proves it" => |f| f.frames.first().copied();
    "frames" Str false "Every frame that proves it, comma-separated" => |f| Joined(f.frames.iter());
    "psn" Int true "The PSN concerned, when one is" => |f| f.psn.map(|p| p.value());
    "message" Str false "One sentence on what was found" => |f| f.message.as_str();
}}
