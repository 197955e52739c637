//! `connections.parquet` (one row per connection incarnation: the connection model's report,
//! the objects of `check --format json`'s `connections`) and `findings.parquet` (one row per
//! finding, `check --format json`'s `findings`). Names are the JSON members' paths with `_`
//! for `.` (`connection.qpn_a` is `connection_qpn_a`, `began.how` is `began_how`).

use roce_conformance::{rules, ConnId, ConnectionReport, Finding};

use super::table::{Column, Kind, Value};

use Value as V;

/// Reads one column of a connection row.
pub type ConnGet = fn(&ConnectionReport) -> Value;
/// Reads one column of a finding row.
pub type FindingGet = fn(&Finding) -> Value;

fn frame_or_null(f: u64) -> Value {
    if f == 0 {
        V::Null
    } else {
        V::uint(f)
    }
}

fn text_or_null(s: &str) -> Value {
    if s.is_empty() {
        V::Null
    } else {
        V::Text(s.to_string())
    }
}

macro_rules! columns {
    ($list:ident: $get:ty, $what:literal { $($name:literal $kind:ident $null:literal $doc:literal => $f:expr;)* }) => {
        #[doc = $what]
        pub static $list: &[Column<$get>] = &[$(Column {
            name: $name, kind: Kind::$kind, nullable: $null, doc: $doc, get: $f,
        }),*];
    };
}

/// The `connection_*` columns of a [`ConnId`] (shared by both tables).
macro_rules! conn_id_columns {
    ($list:ident: $get:ty, $what:literal, |$x:ident| $id:expr, { $($rest:tt)* }) => {
        columns! { $list: $get, $what {
            "connection" Str true "The connection's name as `check` and `stats` print it" => |$x| V::opt($id, |c: ConnId| V::Text(c.to_string()));
            "connection_a" Str true "Address of side a" => |$x| V::opt($id, |c: ConnId| V::Ip(c.a));
            "connection_qpn_a" Int true "QPN on side a (the DestQP of packets b -> a), when known" => |$x| V::opt($id.and_then(|c: ConnId| c.qpn_a), V::int);
            "connection_b" Str true "Address of side b" => |$x| V::opt($id, |c: ConnId| V::Ip(c.b));
            "connection_qpn_b" Int true "QPN on side b (the DestQP of packets a -> b), when known" => |$x| V::opt($id.and_then(|c: ConnId| c.qpn_b), V::int);
            "connection_incarnation" Int true "1 for the first connection on these QPs, 2 for the next, ..." => |$x| V::opt($id, |c: ConnId| V::int(c.incarnation));
            $($rest)*
        }}
    };
}

conn_id_columns! { CONNECTION_COLUMNS: ConnGet, "The columns of `connections.parquet`.", |c| Some(c.info.connection), {
    "transport" Str false "RC, UC, UD, XRC, ..." => |c| V::Static(c.info.transport);
    "paired_by" Str true "cm or psn; null when one direction was seen" => |c| V::opt(c.info.paired_by, |p| V::Static(p.as_str()));
    "pmtu" Int true "PMTU in bytes" => |c| V::opt(c.info.pmtu, V::int);
    "pmtu_source" Str true "cm, option or inferred" => |c| V::opt(c.info.pmtu_source, |p| V::Static(p.as_str()));
    "pkey" Int true "P_Key" => |c| V::opt(c.info.pkey, V::int);
    "pkey_source" Str true "cm or first_packet" => |c| V::opt(c.info.pkey_source, |p| V::Static(p.as_str()));
    "began_how" Str false "first_packets, cm, idle_reconnect or after_end" => |c| V::Static(c.info.began.how.as_str());
    "began_frame" Int true "The frame that began it" => |c| frame_or_null(c.info.began.frame);
    "began_why" Str true "One sentence on how it began" => |c| text_or_null(&c.info.began.why);
    "ended_how" Str false "disconnect, reject, fatal_nak, reconnect, evicted or capture_end" => |c| V::Static(c.info.ended.how.as_str());
    "ended_frame" Int true "The frame that ended it" => |c| frame_or_null(c.info.ended.frame);
    "ended_why" Str true "One sentence on how it ended" => |c| text_or_null(&c.info.ended.why);
    "packets" Int false "Packets of both directions" => |c| V::uint(c.info.packets);
    "first_frame" Int false "Its first frame" => |c| V::uint(c.info.first_frame);
    "last_frame" Int false "Its last frame" => |c| V::uint(c.info.last_frame);
    "first_ts_ns" Int false "Timestamp of its first frame, ns since the epoch" => |c| V::uint(c.info.first_ts);
    "last_ts_ns" Int false "Timestamp of its last frame, ns since the epoch" => |c| V::uint(c.info.last_ts);
    "retransmissions" Int false "Retransmitted request packets (the checker's count)" => |c| V::uint(c.retransmissions);
    "missing_packets" Int false "Packets known to be missing from the capture (PSN gaps, ACKs of uncaptured requests)" => |c| V::uint(c.missing_packets);
    "partly_judged" Str true "Why parts were not judged, sentences joined by `; `; null when fully judged" => |c| text_or_null(&c.partly_judged.join("; "));
}}

conn_id_columns! { FINDING_COLUMNS: FindingGet, "The columns of `findings.parquet`.", |f| f.connection, {
    "rule" Str false "Rule ID (`roce-inspect rules`, docs/rules.md)" => |f| V::Static(f.rule);
    "severity" Str false "error or warning" => |f| V::Static(f.severity.as_str());
    "side" Str true "The side the rule judges (requester, responder, packet, capture, ...)" => |f| V::opt(rules::find(f.rule), |r| V::Static(r.side.as_str()));
    "frame" Int true "The first frame that proves it" => |f| V::opt(f.frames.first(), |n| V::uint(*n));
    "frames" Str false "Every frame that proves it, comma-separated" => |f| V::Text(f.frames.iter().map(u64::to_string).collect::<Vec<_>>().join(","));
    "psn" Int true "The PSN concerned, when one is" => |f| V::opt(f.psn, V::int);
    "message" Str false "One sentence on what was found" => |f| V::Text(f.message.clone());
}}
