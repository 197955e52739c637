"""The package's documents are the command line's, member for member: `read()` is `dissect
--format jsonl`, `stats()` is `stats --format json`, `check()` is `check --format json`, on
every shipped capture and every real one, and with the options that change them."""

from __future__ import annotations

import json

import pytest

import roce_inspect as ri
from conftest import PCAPS, cli, cli_json, ids, real, real_or_skip, shipped

CAPTURES = shipped()


def dissect(path, *args):
    return [json.loads(line) for line in cli("dissect", "--format", "jsonl", *args, str(path)).splitlines()]


def test_the_shipped_captures_are_there():
    # 83 conformance scenarios and the sample: a test over none of them would pass.
    assert len(CAPTURES) >= 80


@pytest.mark.parametrize("path", CAPTURES, ids=ids)
def test_shipped_documents(path):
    assert list(ri.read(path)) == dissect(path)
    assert ri.stats(path) == cli_json("stats", "--format", "json", str(path))
    assert ri.check(path) == cli_json("check", "--format", "json", str(path))


@pytest.mark.parametrize("path", real_or_skip(), ids=ids)
def test_real_documents(path):
    assert list(ri.read(str(path))) == dissect(path)
    assert ri.stats(path) == cli_json("stats", "--format", "json", str(path))
    assert ri.check(path) == cli_json("check", "--format", "json", str(path))


def test_the_sample_is_what_the_repository_says():
    sample = PCAPS / "sample.pcap"
    frames = list(ri.read(sample))
    assert len(frames) == 39
    assert frames[0]["schema"] == ri.SCHEMA_FRAME
    want = [json.loads(line) for line in (PCAPS / "sample.dissect.jsonl").read_text().splitlines()]
    assert frames == want
    s = ri.stats(sample)
    assert s["schema"] == ri.SCHEMA_STATS and s["frames"] == 39


@pytest.mark.parametrize(
    "kwargs,flags",
    [
        ({"filter": "bth.opcode == 17"}, ["-Y", "bth.opcode == 17"]),
        ({"filter": "icrc.status == \"bad\" || aeth"}, ["-Y", "icrc.status == \"bad\" || aeth"]),
        ({"port": [4791, 4792]}, ["--port", "4791", "--port", "4792"]),
    ],
)
def test_read_options_are_dissects(kwargs, flags):
    for path in CAPTURES[::7]:
        assert list(ri.read(path, **kwargs)) == dissect(path, *flags), path


CHECK_OPTIONS = [
    ({"assume_complete": True}, ["--assume-complete"]),
    ({"retx_timeout_us": 5}, ["--retx-timeout", "5"]),
    ({"reorder_window_us": 0}, ["--reorder-window", "0"]),
    ({"qp_timeout": 10}, ["--qp-timeout", "10"]),
    ({"rnr_timer": 3}, ["--rnr-timer", "3"]),
    ({"expect_dscp": 0, "expect_pcp": 3}, ["--expect-dscp", "0", "--expect-pcp", "3"]),
    ({"expect_cnp_dscp": 48}, ["--expect-cnp-dscp", "48"]),
    ({"cnp_min_interval": "50us,pair"}, ["--cnp-min-interval", "50us,pair"]),
    ({"pmtu": 1024, "max_flows": 2}, ["--pmtu", "1024", "--max-flows", "2"]),
    ({"reconnect_idle_ms": 100000}, ["--reconnect-idle", "100000"]),
    ({"disable": ["REQ-PSN", "CC-CNP"]}, ["--disable", "REQ-PSN", "--disable", "CC-CNP"]),
    ({"enable": "RSP-NAK-ERROR"}, ["--enable", "RSP-NAK-ERROR"]),
    ({"shard": "0/2"}, ["--shard", "0/2"]),
    ({"shard": "1/2"}, ["--shard", "1/2"]),
    ({"filter": "bth.psn > 2"}, ["-Y", "bth.psn > 2"]),
]


@pytest.mark.parametrize("kwargs,flags", CHECK_OPTIONS, ids=[str(k) for k, _ in CHECK_OPTIONS])
def test_check_options_are_checks(kwargs, flags):
    for path in CAPTURES[::3]:
        assert ri.check(path, **kwargs) == cli_json("check", "--format", "json", *flags, str(path)), path
    # The option changed something on some capture (else the comparison proves nothing),
    # but for those whose default is what the suite's captures already assume, and a shard
    # (each suite capture is one host pair: one of the two shards holds it whole).
    if "shard" not in kwargs and kwargs != {"reorder_window_us": 0}:
        assert any(ri.check(p, **kwargs) != ri.check(p) for p in CAPTURES), kwargs


def test_two_shards_hold_every_finding_once():
    moved = 0
    for path in CAPTURES + real():
        whole = ri.check(path)["findings"]
        halves = [ri.check(path, shard=f"{k}/2")["findings"] for k in (0, 1)]
        # CAP-TIME is the capture's (every shard sees the clock); the rest is a host pair's.
        rest = [[f for f in h if f["rule"] != "CAP-TIME"] for h in halves]
        assert sorted(map(repr, rest[0] + rest[1])) == sorted(
            repr(f) for f in whole if f["rule"] != "CAP-TIME"
        ), path
        moved += any(h != whole for h in halves)
    assert moved > 0


def test_conn_selects_as_the_command_line_does():
    path = PCAPS / "conformance" / "cc-cnp.pcap"
    conn = "10.9.0.1:0x111-10.9.0.2:0x222"
    assert ri.check(path, conn=conn) == cli_json("check", "--format", "json", "--conn", conn, str(path))
    assert ri.stats(path, conn=conn) == cli_json("stats", "--format", "json", "--conn", conn, str(path))
    assert ri.check(path, conn=conn)["selection"]["connections_selected"] == 1


def test_a_file_object_reads_as_the_path():
    path = PCAPS / "sample.pcap"
    with open(path, "rb") as f:
        assert list(ri.read(f)) == list(ri.read(path))
    with open(path, "rb") as f:
        assert ri.check(f) == ri.check(path)


def test_the_version_is_the_crates():
    import re

    from conftest import ROOT

    for crate in ("cli", "analysis", "conformance", "parser", "capture", "python"):
        text = (ROOT / crate / "Cargo.toml").read_text()
        assert re.search(r'^version = "([^"]+)"', text, re.M).group(1) == ri.__version__, crate
    assert cli("--version").split()[1] == ri.__version__


def _late_copy(src, dst, late_ns, drop_index):
    """`src` (the sample: a big-endian nanosecond pcap) with every record `late_ns` later and
    record `drop_index` (0-based) gone: a second tap that lost one packet."""
    import struct

    data = src.read_bytes()
    assert data[:4] == bytes.fromhex("a1b23c4d")
    out, at, i = bytearray(data[:24]), 24, 0
    while at + 16 <= len(data):
        sec, ns, caplen, length = struct.unpack(">IIII", data[at : at + 16])
        if i != drop_index:
            t = sec * 1_000_000_000 + ns + late_ns
            out += struct.pack(">IIII", t // 1_000_000_000, t % 1_000_000_000, caplen, length)
            out += data[at + 16 : at + 16 + caplen]
        at += 16 + caplen
        i += 1
    dst.write_bytes(bytes(out))


def test_several_taps_are_the_command_lines(tmp_path):
    # The sample and a second tap 4 us late that lost frame 20: stats() and check() of the
    # list are `stats A B` and `check A B`, the loss between the taps a finding with its
    # frame named in the tap's file; the options are the command line's.
    a = PCAPS / "sample.pcap"
    b = tmp_path / "tap2.pcap"
    _late_copy(a, b, 4_000, 19)
    assert ri.stats([a, b]) == cli_json("stats", "--format", "json", str(a), str(b))
    got = ri.check((str(a), b))
    assert got == cli_json("check", "--format", "json", str(a), str(b))
    assert got["taps"]["drops"] == 1 and got["taps"]["taps"][1]["offset_ns"] == -4_000
    drop = [f for f in got["findings"] if f["rule"] == "CAP-DROP-BETWEEN"]
    assert len(drop) == 1
    cited = {c["frame"]: (c["tap"], c["source_frame"]) for c in got["taps"]["frames_cited"]}
    assert cited[drop[0]["frames"][0]] == (0, 20)
    flags = ["--tap-offset", "2=-4us", "--tap-window", "10us"]
    opts = {"tap_offset": {2: "-4us"}, "tap_window": "10us"}
    assert ri.check([a, b], **opts) == cli_json("check", "--format", "json", *flags, str(a), str(b))
    assert ri.stats([a, b], tap_offset={str(b): -4_000}, tap_window=10_000) == cli_json(
        "stats", "--format", "json", *flags, str(a), str(b)
    )
    # One path in a list is that capture.
    assert ri.check([a]) == ri.check(a)


def test_several_taps_refuse_what_the_command_line_refuses(tmp_path):
    a = PCAPS / "sample.pcap"
    with pytest.raises(ri.OptionError, match="there is no file 3 among the 2 given"):
        ri.check([a, a], tap_offset={3: "1ms"})
    with pytest.raises(ri.OptionError, match="tap_window"):
        ri.stats([a, a], tap_window="0")
    with pytest.raises(ri.OptionError, match="empty list"):
        ri.stats([])
    with pytest.raises(ri.CaptureError) as e:
        ri.check([a, tmp_path / "missing.pcap"])
    assert "missing.pcap" in str(e.value)
    with pytest.raises(ri.OptionError, match="tap_offset"):
        ri.check([a, a], tap_offset=[1, 2])
