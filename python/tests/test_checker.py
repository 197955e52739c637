"""The streaming Checker: fed a capture's frames one by one it gives `check()`'s document;
`findings()` hands out each finding once, as soon as it is proven; traffic built here with
scapy (an independent packet builder) is judged as the rules say."""

from __future__ import annotations

import struct

import pytest

import roce_inspect as ri
from conftest import PCAPS, pcap_link_type, pcap_records, shipped


PCAP_FILES = [p for p in shipped() if p.suffix == ".pcap"]


@pytest.mark.parametrize("path", PCAP_FILES, ids=lambda p: p.name)
def test_fed_frame_by_frame_it_is_check(path):
    c = ri.Checker()
    early = []
    # The capture's link type: Ethernet, or ERF records for pcaps/sample-ib.pcap.
    link_type = pcap_link_type(path)
    for i, (frame, ts, orig) in enumerate(pcap_records(path)):
        c.feed(frame, ts, len=orig, link_type=link_type)
        if i % 5 == 0:
            early.extend(c.findings())
    doc = c.finish()
    assert doc == ri.check(path)
    # Each finding handed out early is one of the report's, in the report's order; one
    # proven before its connection's two directions were paired names the peer's QPN None
    # (not yet seen), the report names it.
    listed = doc["findings"]
    assert len(early) <= len(listed)
    for e, f in zip(early, listed):
        if e["connection"] != f["connection"]:
            ec, fc = e["connection"], f["connection"]
            assert None in (ec["qpn_a"], ec["qpn_b"]), (e, f)
            assert {k: v for k, v in ec.items() if v is not None}.items() <= fc.items(), (e, f)
            e = dict(e, connection=fc)
        assert e == f


def test_the_suite_has_findings_to_hand_out():
    assert sum(len(ri.check(p)["findings"]) for p in PCAP_FILES) > 50


def rc_send(psn, qpn=0x11, src="10.0.0.1", dst="10.0.0.2", payload=b"x" * 64, opcode_name="SEND_ONLY"):
    from scapy.all import IP, UDP, Ether, Raw
    from scapy.contrib.roce import BTH, opcode

    return bytes(
        Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
        / IP(src=src, dst=dst)
        / UDP(sport=49152, dport=4791)
        / BTH(opcode=opcode("RC", opcode_name)[0], dqpn=qpn, psn=psn, ackreq=1)
        / Raw(payload)
    )


def rc_ack(psn, msn, qpn=0x22, src="10.0.0.2", dst="10.0.0.1"):
    from scapy.all import IP, UDP, Ether
    from scapy.contrib.roce import AETH, BTH, opcode

    return bytes(
        Ether(src="02:00:00:00:00:02", dst="02:00:00:00:00:01")
        / IP(src=src, dst=dst)
        / UDP(sport=49153, dport=4791)
        / BTH(opcode=opcode("RC", "ACKNOWLEDGE")[0], dqpn=qpn, psn=psn)
        / AETH(syndrome=0, msn=msn)
    )


def test_scapy_traffic_with_a_psn_gap():
    # SEND PSN 0, 1, 3 (2 never sent) on a lossless capture: REQ-PSN at the third.
    c = ri.Checker(assume_complete=True)
    t = 1_000_000_000
    frames = [rc_send(0), rc_ack(0, 1), rc_send(1), rc_ack(1, 2), rc_send(3)]
    for i, f in enumerate(frames):
        c.feed(f, t + i * 1000)
    proven = c.findings()
    doc = c.finish()
    assert doc["summary"]["frames"] == 5 and doc["summary"]["roce_frames"] == 5
    rules = [f["rule"] for f in doc["findings"]]
    assert "REQ-PSN" in rules, doc["findings"]
    gap = next(f for f in doc["findings"] if f["rule"] == "REQ-PSN")
    assert gap["frames"][-1] == 5 and gap["connection"]["a"] in ("10.0.0.1", "10.0.0.2")
    assert any(f["rule"] == "REQ-PSN" for f in proven), "proven while fed, before finish()"
    # Every ICRC scapy computed is verified by the parser.
    assert all(ri.parse(f)["roce"]["icrc"]["status"] == "ok" for f in frames)


def test_scapy_traffic_in_order_is_clean():
    c = ri.Checker(assume_complete=True)
    t = 1_000_000_000
    for i in range(20):
        c.feed(rc_send(i), t + i * 2000)
        c.feed(rc_ack(i, i + 1), t + i * 2000 + 1000)
    doc = c.finish()
    assert doc["summary"]["errors"] == 0 and doc["summary"]["warnings"] == 0, doc["findings"]
    assert len(doc["connections"]) == 1


def test_a_bad_icrc_is_found():
    f = bytearray(rc_send(0))
    f[-1] ^= 0xFF
    c = ri.Checker()
    c.feed(bytes(f), 1)
    doc = c.finish()
    assert [x["rule"] for x in doc["findings"]] == ["PKT-ICRC"]
    assert ri.parse(bytes(f))["roce"]["icrc"]["status"] == "bad"


def test_parse_udp_payload_is_the_frames_roce():
    f = rc_send(7, payload=b"abcd" * 4)
    whole = ri.parse(f)
    payload = f[14 + 20 + 8 :]
    alone = ri.parse_udp_payload(payload)
    assert alone["eth"] is None and alone["ip"] is None and alone["udp"] is None
    assert alone["roce"]["bth"] == whole["roce"]["bth"]
    assert alone["roce"]["bth"]["psn"] == 7
    assert alone["roce"]["icrc"]["status"] == "not_checked"


def test_parse_port_decodes_another_port():
    from scapy.all import IP, UDP, Ether, Raw
    from scapy.contrib.roce import BTH, opcode

    f = bytes(Ether() / IP() / UDP(sport=1, dport=5000) / BTH(opcode=opcode("RC", "SEND_ONLY")[0], psn=3) / Raw(b"y" * 8))
    assert ri.parse(f)["roce"] is None
    assert ri.parse(f, port=5000)["roce"]["bth"]["psn"] == 3
