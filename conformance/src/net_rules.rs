//! Network configuration rules (NET-*): what one frame's IP and Ethernet headers show
//! against the configuration the user stated (`--expect-dscp`, `--expect-cnp-dscp`,
//! `--expect-pcp`). Each is judged only when its option is given.
//!
//! | rule | judged on | stated by |
//! |---|---|---|
//! | NET-DSCP | every RoCEv2 packet but CNPs, CM MADs on QP1 included (RoCEv1 has no IP header) | `--expect-dscp D` |
//! | NET-CNP-DSCP | every RoCEv2 CNP (BTH opcode 0x81) | `--expect-cnp-dscp D` |
//! | NET-PCP | every RoCE frame with an Ethernet header: the outermost 802.1Q tag's PCP (what the first switch classifies by); untagged is a finding | `--expect-pcp P` |

use roce_parser::{Packet, Roce};

use crate::connections::ConnId;
use crate::finding::Judge;
use crate::psn::Psn;
use crate::rules;
use crate::{FrameInfo, Options};

/// BTH opcode of a CNP (RoCEv2 annex A17.9).
const CNP: u8 = 0x81;

/// The NET-* rules on one RoCE frame (called only when [`Options::network_stated`]).
pub(crate) fn check(
    f: &FrameInfo,
    p: &Packet<'_>,
    r: &Roce<'_>,
    conn: Option<ConnId>,
    opts: &Options,
    judge: &mut Judge,
) {
    let frames = [f.number];
    let psn = Some(Psn::new(r.bth.psn));
    let cnp = r.bth.opcode == CNP;
    let qp = r.bth.dest_qp;
    let what = if cnp { "CNP" } else { r.opcode_name() };
    if let Some(ip) = &p.ip {
        let (stated, rule, flag) = if cnp {
            (opts.expect_cnp_dscp, &rules::NET_CNP_DSCP, "--expect-cnp-dscp")
        } else {
            (opts.expect_dscp, &rules::NET_DSCP, "--expect-dscp")
        };
        if let Some(want) = stated.filter(|&d| d != ip.dscp) {
            judge.report(rule, &frames, conn, psn, || {
                format!(
                    "{what} to QP 0x{qp:06x} sent at DSCP {}, not the configured {want} ({flag})",
                    ip.dscp
                )
            });
        }
    }
    // Frames captured without their Ethernet header (raw IP, Linux cooked) cannot show a tag.
    if let Some(want) = opts.expect_pcp.filter(|_| p.eth.is_some()) {
        match p.vlans.first().copied().flatten() {
            Some(tag) if tag.pcp == want => {}
            Some(tag) => judge.report(&rules::NET_PCP, &frames, conn, psn, || {
                format!(
                    "{what} to QP 0x{qp:06x} sent with PCP {} (VLAN {}), not the configured {want} (--expect-pcp)",
                    tag.pcp, tag.vid
                )
            }),
            None => judge.report(&rules::NET_PCP, &frames, conn, psn, || {
                format!(
                    "{what} to QP 0x{qp:06x} sent untagged, not at the configured PCP {want} (--expect-pcp): without an 802.1Q priority PFC cannot pause it"
                )
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use roce_parser::{
        parse_ethernet, parse_ip, BthRepr, Config, FrameBuilder, GrhRepr, Ipv4Spec, Network,
        VlanTag,
    };

    use crate::{Checker, FrameInfo, Options};

    fn ipv4(dscp: u8) -> Network {
        Network::Ipv4(Ipv4Spec {
            src: [10, 0, 0, 1],
            dst: [10, 0, 0, 2],
            dscp,
            ecn: 2,
            ttl: 64,
            identification: 0,
            dont_fragment: true,
        })
    }

    fn bytes(network: Network, opcode: u8, vlans: [Option<VlanTag>; 2]) -> Vec<u8> {
        let bth = BthRepr { opcode, pkey: 0xffff, dest_qp: 0x11, psn: 7, ..Default::default() };
        let mut b = FrameBuilder::new(network, bth);
        b.vlans = vlans;
        b.payload = if opcode == 0x81 { &[0; 16] } else { &[1, 2, 3, 4] };
        let mut out = vec![0; b.buffer_len()];
        b.emit(&mut out).unwrap();
        out
    }

    /// The rules each frame fires, in order.
    fn rules(opts: Options, frames: &[(Vec<u8>, bool)]) -> Vec<(u64, &'static str)> {
        let mut c = Checker::new(opts);
        let mut found = Vec::new();
        for (i, (data, raw_ip)) in frames.iter().enumerate() {
            let n = data.len() as u32;
            let f = FrameInfo { number: i as u64 + 1, ts_ns: 1000 * i as u64, caplen: n, len: n };
            let p = if *raw_ip {
                // The IP packet alone, as a raw-IP or Linux cooked capture gives it.
                parse_ip(&data[14..], &Config::default()).unwrap()
            } else {
                parse_ethernet(data, &Config::default()).unwrap()
            };
            c.feed(&f, &p);
            found.extend(c.take_findings().into_iter().map(|x| (x.frames[0], x.rule)));
        }
        found.retain(|(_, r)| r.starts_with("NET-"));
        found
    }

    #[test]
    fn judged_only_as_stated_and_where_the_headers_are() {
        let tag = |pcp| Some(VlanTag { tpid: 0x8100, pcp, dei: false, vid: 5 });
        let grh = GrhRepr {
            ipver: 6,
            tclass: 0,
            flow_label: 0,
            paylen: 0,
            nxthdr: 0x1b,
            hoplmt: 64,
            sgid: [1; 16],
            dgid: [2; 16],
        };
        let frames = [
            (bytes(ipv4(26), 0x04, [tag(3), None]), false), // 1: right
            (bytes(ipv4(0), 0x04, [tag(3), None]), false),  // 2: DSCP 0
            (bytes(ipv4(26), 0x81, [tag(3), None]), false), // 3: CNP at 26, not 48
            (bytes(ipv4(48), 0x81, [tag(3), None]), false), // 4: CNP right
            (bytes(ipv4(26), 0x04, [tag(3), tag(1)]), false), // 5: QinQ, outer right
            (bytes(ipv4(26), 0x04, [tag(1), tag(3)]), false), // 6: QinQ, outer wrong
            (bytes(ipv4(26), 0x04, [None, None]), false),   // 7: untagged
            (bytes(Network::RoceV1(grh), 0x04, [tag(3), None]), false), // 8: RoCEv1, no IP
            (bytes(ipv4(0), 0x04, [None, None]), true),     // 9: no Ethernet header
        ];
        let stated = Options {
            expect_dscp: Some(26),
            expect_cnp_dscp: Some(48),
            expect_pcp: Some(3),
            ..Options::default()
        };
        assert_eq!(
            rules(stated, &frames),
            [(2, "NET-DSCP"), (3, "NET-CNP-DSCP"), (6, "NET-PCP"), (7, "NET-PCP"), (9, "NET-DSCP")]
        );
        assert_eq!(rules(Options::default(), &frames), []);
        let pcp_only = Options { expect_pcp: Some(1), ..Options::default() };
        let got: Vec<u64> = rules(pcp_only, &frames).iter().map(|x| x.0).collect();
        assert_eq!(got, [1, 2, 3, 4, 5, 7, 8]);
    }
}
