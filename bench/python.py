#!/usr/bin/env python3
"""The Python package against the Python tools RoCE users have, in one run on one capture
(BENCHMARKS.md, "Python: roce_inspect against scapy and dpkt"):

- roce_inspect.read_batches into Arrow: every column (the connection model runs, for
  `incarnation` and `retransmission`), and the columns without the model;
- roce_inspect.read: a dict per frame (the JSON contract);
- scapy's PcapReader with scapy.contrib.roce (BTH decoded; no ICRC check on read);
- dpkt: pcap.Reader, Ethernet/IP/UDP, and the 12 BTH bytes unpacked by hand (dpkt has no BTH);
- roce_inspect.stats() against `roce-inspect stats --format json` on the same file, run for
  run (alternating), the median of --runs each;
- for context, `roce-inspect check` and `export` on the same file (what bounds the batches
  with the model's columns).

Each tool reads the same frames and extracts the PSN of every RoCE frame (the sums are
compared, so no tool is timed doing less). scapy and dpkt read the first --slow-frames
frames only (they are slow); frames/s is what is compared.

    target/pyenv/bin/python bench/python.py [--frames 2000000] [--runs 5] [--slow-frames 100000]

Needs the package installed in the interpreter (`pip install ./python`), scapy, dpkt,
pyarrow, and the roce-inspect binary (--bin, default target/release/roce-inspect).
"""

from __future__ import annotations

import argparse
import pathlib
import statistics
import struct
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]


def timed(f):
    t = time.perf_counter()
    r = f()
    return time.perf_counter() - t, r


def batches_all(path):
    import pyarrow.compute as pc

    import roce_inspect as ri

    n, s = 0, 0
    for b in ri.read_batches(path, batch_size=65536):
        n += b.num_rows
        s += pc.sum(b.column("bth_psn")).as_py() or 0
    return n, s


def batches_no_model(path):
    import pyarrow.compute as pc

    import roce_inspect as ri

    cols = [c[0] for c in ri.packet_columns() if c[0] not in ("incarnation", "retransmission")]
    n, s = 0, 0
    for b in ri.read_batches(path, columns=cols, batch_size=65536):
        n += b.num_rows
        s += pc.sum(b.column("bth_psn")).as_py() or 0
    return n, s


def dicts(path, limit):
    import roce_inspect as ri

    n, s = 0, 0
    for f in ri.read(path):
        if n == limit:
            break
        n += 1
        r = f["roce"]
        if r is not None:
            s += r["bth"]["psn"]
    return n, s


def scapy_read(path, limit):
    from scapy.all import PcapReader
    from scapy.contrib.roce import BTH

    n, s = 0, 0
    with PcapReader(str(path)) as r:
        for p in r:
            if n == limit:
                break
            n += 1
            if BTH in p:
                s += p[BTH].psn
    return n, s


def dpkt_read(path, limit):
    import dpkt

    n, s = 0, 0
    with open(path, "rb") as f:
        for _ts, buf in dpkt.pcap.Reader(f):
            if n == limit:
                break
            n += 1
            eth = dpkt.ethernet.Ethernet(buf)
            ip = eth.data
            if not isinstance(ip, (dpkt.ip.IP, dpkt.ip6.IP6)):
                continue
            udp = ip.data
            if not isinstance(udp, dpkt.udp.UDP) or udp.dport != 4791:
                continue
            bth = bytes(udp.data)[:12]
            if len(bth) == 12:
                s += struct.unpack(">I", bth[8:12])[0] & 0xFFFFFF
    return n, s


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--frames", type=int, default=2_000_000)
    ap.add_argument("--slow-frames", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--bin", default=str(ROOT / "target/release/roce-inspect"))
    a = ap.parse_args()

    import roce_inspect as ri

    tmp = pathlib.Path(tempfile.mkdtemp(prefix="roce-inspect-python-bench-"))
    cap = tmp / "bench.pcap"
    subprocess.run([a.bin, "gen", "bench", "--frames", str(a.frames), "-o", str(cap)], check=True, capture_output=True)
    slow = min(a.slow_frames, a.frames)
    print(f"capture: gen bench --frames {a.frames} ({cap.stat().st_size / 1e6:.0f} MB); scapy, dpkt and read() on the first {slow}")

    rows = []

    def row(name, frames, secs, psn_sum):
        rows.append((name, frames, secs, frames / secs, psn_sum))

    # The PSN sums of one prefix agree (each tool read the same thing).
    t, (n, s_dict) = timed(lambda: dicts(cap, slow))
    row("roce_inspect.read (dicts)", n, t, s_dict)
    t, (n, s_scapy) = timed(lambda: scapy_read(cap, slow))
    row("scapy PcapReader + contrib.roce", n, t, s_scapy)
    t, (n, s_dpkt) = timed(lambda: dpkt_read(cap, slow))
    row("dpkt pcap.Reader + BTH by hand", n, t, s_dpkt)
    assert s_dict == s_scapy == s_dpkt, (s_dict, s_scapy, s_dpkt)

    best_all = best_nomodel = None
    for _ in range(a.runs):
        t, (n, s_all) = timed(lambda: batches_all(cap))
        best_all = min(best_all or t, t)
        t, (n2, s_nm) = timed(lambda: batches_no_model(cap))
        best_nomodel = min(best_nomodel or t, t)
        assert n == n2 == a.frames and s_all == s_nm
    row("roce_inspect.read_batches, every column", a.frames, best_all, s_all)
    row("roce_inspect.read_batches, no model columns", a.frames, best_nomodel, s_nm)

    print()
    print("| reader | frames | seconds | frames/s | x scapy |")
    print("|---|---:|---:|---:|---:|")
    scapy_rate = rows[1][3]
    for name, frames, secs, rate, _ in rows:
        print(f"| {name} | {frames:,} | {secs:.2f} | {rate:,.0f} | {rate / scapy_rate:,.0f} |")

    # stats(): the package against the command line, alternating, median of --runs.
    py_t, cli_t = [], []
    for _ in range(a.runs):
        t, doc = timed(lambda: ri.stats(cap))
        py_t.append(t)
        t, _ = timed(lambda: subprocess.run([a.bin, "stats", "--format", "json", str(cap)], check=True, capture_output=True))
        cli_t.append(t)
    assert doc["frames"] == a.frames
    p, c = statistics.median(py_t), statistics.median(cli_t)
    print()
    print(f"| stats on {a.frames:,} frames | median of {a.runs} (s) |")
    print("|---|---:|")
    print(f"| roce_inspect.stats() | {p:.2f} |")
    print(f"| roce-inspect stats --format json | {c:.2f} |")
    print(f"| ratio package / command line | {p / c:.2f} |")

    # What bounds read_batches with the model's columns: the checker itself, and the
    # command line's export of the same table, on the same file.
    ctx = []
    for name, argv in [
        ("roce-inspect check --format json", [a.bin, "check", "--format", "json", str(cap)]),
        ("roce-inspect export (packets.parquet and the rest)", [a.bin, "export", "-o", str(tmp / "out"), str(cap)]),
    ]:
        ts = [timed(lambda: subprocess.run(argv, capture_output=True))[0] for _ in range(3)]
        ctx.append((name, min(ts)))
    print()
    print(f"| on the same {a.frames:,} frames | best of 3 (s) | frames/s |")
    print("|---|---:|---:|")
    for name, t in ctx:
        print(f"| {name} | {t:.2f} | {a.frames / t:,.0f} |")
    print(f"\npython {sys.version.split()[0]}, roce_inspect {ri.__version__}")


if __name__ == "__main__":
    main()
