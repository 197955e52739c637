//! The fields a filter can name: one row per field of the frame object of docs/json.md, with
//! its JSON path, its kind and how to read it from the parsed frame. Nothing else lists the
//! fields: the parser looks names up here, the evaluator reads values through the row, the
//! "did you mean" list and docs/filter.md's table (checked by a test) come from it.
//!
//! A row reads the `Decoded` frame straight from the parser's structs (no JSON is built):
//! `dissect -Y` evaluates it on every frame.

use std::net::IpAddr;

use roce_parser::{Packet, Roce};

use crate::input::{Decoded, Undecoded};

/// What a field holds, which decides the literals it is compared with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// An unsigned number (decimal or 0x-hex literals; all six comparisons).
    Int,
    /// `true` / `false` (also `1` / `0`).
    Bool,
    /// A code or a name: a string literal.
    Str,
    /// An IPv4 or IPv6 address (a GID too): a literal address, quoted or not.
    Ip,
    /// A MAC address `aa:bb:cc:dd:ee:ff`.
    Mac,
    /// An object of the JSON (`aeth`, `ip`, `cm`, ...): only tested for presence.
    Object,
    /// `problem`: a problem code of the parser's table (`problems[].code`).
    Problem,
}

impl Kind {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Kind::Int => "number",
            Kind::Bool => "true/false",
            Kind::Str => "string",
            Kind::Ip => "IP address",
            Kind::Mac => "MAC address",
            Kind::Object => "header (presence only)",
            Kind::Problem => "problem code",
        }
    }
}

/// A field's value in one frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Value {
    Int(u64),
    Bool(bool),
    Str(&'static str),
    Ip(IpAddr),
    Mac([u8; 6]),
    /// An object is there (its members are other rows).
    Present,
}

/// How a row reads its values: most fields have at most one per frame; `vlan.*` has one per
/// tag and `problem` one per problem (a comparison holds when one of them does, as in tshark).
#[derive(Clone, Copy)]
pub(crate) enum Get {
    One(fn(&Decoded<'_>) -> Option<Value>),
    /// Calls the visitor on each value until it returns true; returns whether one did.
    Many(fn(&Decoded<'_>, &mut dyn FnMut(Value) -> bool) -> bool),
}

/// One filterable field.
pub(crate) struct Field {
    /// The JSON path of docs/json.md (`roce.bth.dest_qp`); `roce.` may be left out.
    pub(crate) name: &'static str,
    pub(crate) kind: Kind,
    pub(crate) get: Get,
    /// For `Str` fields whose values are a closed set: the values (a typo is an error).
    pub(crate) values: &'static [&'static str],
}

impl std::fmt::Debug for Field {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

fn packet<'d>(d: &'d Decoded<'_>) -> Option<&'d Packet<'d>> {
    d.packet.as_ref().ok()
}

fn roce<'d>(d: &'d Decoded<'_>) -> Option<&'d Roce<'d>> {
    packet(d).and_then(|p| p.roce.as_ref())
}

fn stop(d: &Decoded<'_>) -> Option<roce_parser::Error> {
    match &d.packet {
        Ok(p) => p.stop,
        Err(Undecoded::Ethernet(e)) | Err(Undecoded::Network { stop: Some(e), .. }) => Some(*e),
        Err(_) => None,
    }
}

fn int(v: impl Into<u64>) -> Option<Value> {
    Some(Value::Int(v.into()))
}

fn usize_int(v: usize) -> Option<Value> {
    Some(Value::Int(u64::try_from(v).unwrap_or(u64::MAX)))
}

fn vlans(d: &Decoded<'_>, f: &mut dyn FnMut(&roce_parser::VlanTag) -> bool) -> bool {
    packet(d).is_some_and(|p| p.vlans.iter().flatten().any(f))
}

const ICRC_STATUSES: &[&str] = &["ok", "bad", "unverifiable", "not_checked"];
const AETH_KINDS: &[&str] = &["ack", "rnr_nak", "nak", "reserved"];

/// The table: `"json.path", Kind(closed set of values)?, reader` (a closure over the `Decoded` frame `d` returning
/// `Option<Value>`), or `many` for fields with several values per frame.
macro_rules! fields {
    ($( $name:literal, $kind:ident $(($vals:expr))?, $how:ident |$d:ident| $body:expr; )*) => {
        pub(crate) static FIELDS: &[Field] = &[
            $( Field {
                name: $name,
                kind: Kind::$kind,
                get: fields!(@get $how $d $body),
                values: fields!(@vals $($vals)?),
            }, )*
        ];
    };
    (@get one $d:ident $body:expr) => { Get::One(|$d| $body) };
    (@get many $d:ident $body:expr) => { Get::Many(|$d, visit| $body(visit)) };
    (@vals $vals:expr) => { $vals };
    (@vals) => { &[] };
}

fields! {
    "frame", Int, one |d| int(d.frame.number);
    "caplen", Int, one |d| int(d.frame.caplen);
    "len", Int, one |d| int(d.frame.len);
    "eth", Object, one |d| packet(d)?.eth.map(|_| Value::Present);
    "eth.src", Mac, one |d| packet(d)?.eth.map(|e| Value::Mac(e.src));
    "eth.dst", Mac, one |d| packet(d)?.eth.map(|e| Value::Mac(e.dst));
    "eth.ethertype", Int, one |d| int(packet(d)?.eth?.ethertype);
    "vlan", Object, one |d| packet(d)?.vlans.iter().flatten().next().map(|_| Value::Present);
    "vlan.tpid", Int, many |d| |v: &mut dyn FnMut(Value) -> bool| vlans(d, &mut |t| v(Value::Int(t.tpid.into())));
    "vlan.pcp", Int, many |d| |v: &mut dyn FnMut(Value) -> bool| vlans(d, &mut |t| v(Value::Int(t.pcp.into())));
    "vlan.dei", Bool, many |d| |v: &mut dyn FnMut(Value) -> bool| vlans(d, &mut |t| v(Value::Bool(t.dei)));
    "vlan.vid", Int, many |d| |v: &mut dyn FnMut(Value) -> bool| vlans(d, &mut |t| v(Value::Int(t.vid.into())));
    "ip", Object, one |d| packet(d)?.ip.map(|_| Value::Present);
    "ip.version", Int, one |d| int(packet(d)?.ip?.version);
    "ip.src", Ip, one |d| packet(d)?.ip.map(|i| Value::Ip(i.src));
    "ip.dst", Ip, one |d| packet(d)?.ip.map(|i| Value::Ip(i.dst));
    "ip.dscp", Int, one |d| int(packet(d)?.ip?.dscp);
    "ip.ecn", Int, one |d| int(packet(d)?.ip?.ecn);
    "ip.ttl", Int, one |d| int(packet(d)?.ip?.ttl);
    "ip.flow_label", Int, one |d| packet(d)?.ip.filter(|i| i.version == 6).and_then(|i| int(i.flow_label));
    "ip.protocol", Int, one |d| int(packet(d)?.ip?.protocol);
    "udp", Object, one |d| packet(d)?.udp.map(|_| Value::Present);
    "udp.sport", Int, one |d| int(packet(d)?.udp?.sport);
    "udp.dport", Int, one |d| int(packet(d)?.udp?.dport);
    "udp.len", Int, one |d| int(packet(d)?.udp?.len);
    "roce", Object, one |d| roce(d).map(|_| Value::Present);
    "roce.version", Int, one |d| int(roce(d)?.version.number());
    "roce.grh", Object, one |d| roce(d)?.grh.map(|_| Value::Present);
    "roce.grh.ipver", Int, one |d| int(roce(d)?.grh?.ipver);
    "roce.grh.tclass", Int, one |d| int(roce(d)?.grh?.tclass);
    "roce.grh.flow_label", Int, one |d| int(roce(d)?.grh?.flow_label);
    "roce.grh.paylen", Int, one |d| int(roce(d)?.grh?.paylen);
    "roce.grh.nxthdr", Int, one |d| int(roce(d)?.grh?.nxthdr);
    "roce.grh.hoplmt", Int, one |d| int(roce(d)?.grh?.hoplmt);
    "roce.grh.sgid", Ip, one |d| roce(d)?.grh.map(|g| Value::Ip(roce_ip(g.sgid_addr())));
    "roce.grh.dgid", Ip, one |d| roce(d)?.grh.map(|g| Value::Ip(roce_ip(g.dgid_addr())));
    "roce.bth", Object, one |d| roce(d).map(|_| Value::Present);
    "roce.bth.opcode", Int, one |d| int(roce(d)?.bth.opcode);
    "roce.bth.opcode_name", Str, one |d| Some(Value::Str(roce(d)?.opcode_name()));
    "roce.bth.se", Bool, one |d| Some(Value::Bool(roce(d)?.bth.se));
    "roce.bth.migreq", Bool, one |d| Some(Value::Bool(roce(d)?.bth.migreq));
    "roce.bth.padcnt", Int, one |d| int(roce(d)?.bth.padcnt);
    "roce.bth.tver", Int, one |d| int(roce(d)?.bth.tver);
    "roce.bth.pkey", Int, one |d| int(roce(d)?.bth.pkey);
    "roce.bth.fecn", Bool, one |d| Some(Value::Bool(roce(d)?.bth.fecn));
    "roce.bth.becn", Bool, one |d| Some(Value::Bool(roce(d)?.bth.becn));
    "roce.bth.dest_qp", Int, one |d| int(roce(d)?.bth.dest_qp);
    "roce.bth.ackreq", Bool, one |d| Some(Value::Bool(roce(d)?.bth.ackreq));
    "roce.bth.psn", Int, one |d| int(roce(d)?.bth.psn);
    "roce.bth.resv6", Int, one |d| int(roce(d)?.bth.resv6);
    "roce.bth.resv7", Int, one |d| int(roce(d)?.bth.resv7);
    "roce.rdeth", Object, one |d| roce(d)?.headers.rdeth.map(|_| Value::Present);
    "roce.rdeth.eecnxt", Int, one |d| int(roce(d)?.headers.rdeth?.eecnxt);
    "roce.deth", Object, one |d| roce(d)?.headers.deth.map(|_| Value::Present);
    "roce.deth.qkey", Int, one |d| int(roce(d)?.headers.deth?.qkey);
    "roce.deth.src_qp", Int, one |d| int(roce(d)?.headers.deth?.src_qp);
    "roce.xrceth", Object, one |d| roce(d)?.headers.xrceth.map(|_| Value::Present);
    "roce.xrceth.xrcsrq", Int, one |d| int(roce(d)?.headers.xrceth?.xrcsrq);
    "roce.reth", Object, one |d| roce(d)?.headers.reth.map(|_| Value::Present);
    "roce.reth.va", Int, one |d| int(roce(d)?.headers.reth?.va);
    "roce.reth.rkey", Int, one |d| int(roce(d)?.headers.reth?.rkey);
    "roce.reth.dma_len", Int, one |d| int(roce(d)?.headers.reth?.dma_len);
    "roce.atomiceth", Object, one |d| roce(d)?.headers.atomic_eth.map(|_| Value::Present);
    "roce.atomiceth.va", Int, one |d| int(roce(d)?.headers.atomic_eth?.va);
    "roce.atomiceth.rkey", Int, one |d| int(roce(d)?.headers.atomic_eth?.rkey);
    "roce.atomiceth.swap_add", Int, one |d| int(roce(d)?.headers.atomic_eth?.swap_add);
    "roce.atomiceth.compare", Int, one |d| int(roce(d)?.headers.atomic_eth?.compare);
    "roce.aeth", Object, one |d| roce(d)?.headers.aeth.map(|_| Value::Present);
    "roce.aeth.syndrome", Int, one |d| int(roce(d)?.headers.aeth?.syndrome);
    "roce.aeth.kind", Str(AETH_KINDS), one |d| roce(d)?.headers.aeth.map(|a| Value::Str(a.kind().as_str()));
    "roce.aeth.value", Int, one |d| int(roce(d)?.headers.aeth?.value());
    "roce.aeth.msn", Int, one |d| int(roce(d)?.headers.aeth?.msn);
    "roce.atomicacketh", Object, one |d| roce(d)?.headers.atomic_ack_eth.map(|_| Value::Present);
    "roce.atomicacketh.orig", Int, one |d| int(roce(d)?.headers.atomic_ack_eth?.orig);
    "roce.immdt", Object, one |d| roce(d)?.headers.immdt.map(|_| Value::Present);
    "roce.immdt.data", Int, one |d| int(roce(d)?.headers.immdt?.data);
    "roce.ieth", Object, one |d| roce(d)?.headers.ieth.map(|_| Value::Present);
    "roce.ieth.rkey", Int, one |d| int(roce(d)?.headers.ieth?.rkey);
    "roce.feth", Object, one |d| roce(d)?.headers.feth.map(|_| Value::Present);
    "roce.feth.selectivity", Int, one |d| int(roce(d)?.headers.feth?.selectivity);
    "roce.feth.placement", Int, one |d| int(roce(d)?.headers.feth?.placement);
    "roce.cm", Object, one |d| roce(d)?.mad().filter(Result::is_ok).map(|_| Value::Present);
    "roce.payload_len", Int, one |d| usize_int(roce(d)?.payload_len);
    "roce.icrc", Object, one |d| roce(d).map(|_| Value::Present);
    "roce.icrc.value", Int, one |d| int(roce(d)?.icrc?);
    "roce.icrc.status", Str(ICRC_STATUSES), one |d| Some(Value::Str(roce(d)?.icrc_status.as_str()));
    "roce.icrc.expected", Int, one |d| match roce(d)?.icrc_status {
        roce_parser::IcrcStatus::Bad { computed } => int(computed),
        _ => None,
    };
    "problem", Problem, many |d| |v: &mut dyn FnMut(Value) -> bool| packet(d).is_some_and(|p| p.problems.iter().any(|pr| v(Value::Str(pr.code()))));
    "stop", Object, one |d| stop(d).map(|_| Value::Present);
    "stop.layer", Str, one |d| stop(d).map(|e| Value::Str(e.layer.name()));
    "stop.kind", Str, one |d| stop(d).map(|e| Value::Str(e.kind.code()));
    "stop.offset", Int, one |d| usize_int(stop(d)?.offset);
    "undecoded", Object, one |d| d.packet.as_ref().err().map(|_| Value::Present);
    "undecoded.reason", Str, one |d| d.packet.as_ref().err().map(|u| Value::Str(u.reason()));
}

/// A GID as docs/json.md writes it: an IPv4-mapped GID is the IPv4 address.
fn roce_ip(a: std::net::Ipv6Addr) -> IpAddr {
    a.to_ipv4_mapped().map_or(IpAddr::V6(a), IpAddr::V4)
}

/// The row of `name`: its JSON path, or the path without `roce.` (`bth.psn`, `icrc.status`).
pub(crate) fn lookup(name: &str) -> Option<&'static Field> {
    FIELDS.iter().find(|f| f.name == name || f.name.strip_prefix("roce.") == Some(name))
}

/// What to tell someone who typed `name`, which is no field: the nearest names, or where the
/// fields are listed (the filter's errors and `dissect -e`'s).
pub(crate) fn hint(name: &str) -> String {
    let near = near(name);
    if near.is_empty() {
        "docs/filter.md lists the fields".to_string()
    } else {
        format!("did you mean {}?", near.join(", "))
    }
}

/// The names closest to a mistyped one (at most three): by edit distance, then names that
/// contain it or end like it.
pub(crate) fn near(name: &str) -> Vec<&'static str> {
    let mut scored: Vec<(usize, &'static str)> = FIELDS
        .iter()
        .map(|f| {
            let short = f.name.strip_prefix("roce.").unwrap_or(f.name);
            let d = distance(name, short).min(distance(name, f.name));
            let last = name.rsplit('.').next().unwrap_or(name);
            let d = if !last.is_empty() && short.rsplit('.').next() == Some(last) {
                d.min(1)
            } else {
                d
            };
            (d, short)
        })
        .filter(|&(d, _)| d <= 3.max(name.len() / 3))
        .collect();
    scored.sort();
    scored.into_iter().take(3).map(|(_, n)| n).collect()
}

/// Levenshtein distance (names are short: the quadratic table is a few hundred cells).
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row.first().copied().unwrap_or(0);
        if let Some(first) = row.first_mut() {
            *first = i + 1;
        }
        for (j, &cb) in b.iter().enumerate() {
            let above = row.get(j + 1).copied().unwrap_or(usize::MAX);
            let left = row.get(j).copied().unwrap_or(usize::MAX);
            let sub = prev + usize::from(ca != cb);
            prev = above;
            if let Some(cell) = row.get_mut(j + 1) {
                *cell = sub.min(above.saturating_add(1)).min(left.saturating_add(1));
            }
        }
    }
    row.last().copied().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_found_with_and_without_roce() {
        for (i, f) in FIELDS.iter().enumerate() {
            assert!(FIELDS[..i].iter().all(|g| g.name != f.name), "{} twice", f.name);
            assert_eq!(lookup(f.name).map(|g| g.name), Some(f.name));
            if let Some(short) = f.name.strip_prefix("roce.") {
                assert_eq!(lookup(short).map(|g| g.name), Some(f.name));
            }
        }
        assert!(lookup("bth.dest_qpn").is_none());
    }

    /// docs/filter.md's field table names every row (and the rows' kinds are documented).
    #[test]
    fn docs_list_every_field() {
        let doc = include_str!("../../../docs/filter.md");
        for f in FIELDS {
            assert!(doc.contains(&format!("`{}`", f.name)), "docs/filter.md lacks {}", f.name);
        }
    }

    #[test]
    fn near_names_a_mistyped_field() {
        assert_eq!(near("bth.dest_q").first(), Some(&"bth.dest_qp"));
        assert!(near("bth.destqp").contains(&"bth.dest_qp"));
        assert!(near("psn").contains(&"bth.psn"));
        assert_eq!(distance("kitten", "sitting"), 3);
        assert_eq!(distance("", "abc"), 3);
    }
}
