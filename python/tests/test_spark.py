"""The checker inside Spark (local mode): `roce_inspect.spark.check` over the packets table
of `export --raw` gives `check --format json`'s findings, rule for rule and frame for frame,
in the same order: on a capture of many host pairs made from the conformance suite, on a
generated bench capture, and on every real capture."""

from __future__ import annotations

import os
import struct

import pytest

import roce_inspect as ri
from conftest import PCAPS, cli, cli_json, ids, pcap_records, real_or_skip

pyspark = pytest.importorskip("pyspark")
import roce_inspect.spark as ris  # noqa: E402


@pytest.fixture(scope="module")
def spark():
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", __import__("sys").executable)
    s = (
        SparkSession.builder.master("local[2]")
        .appName("roce-inspect-tests")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .getOrCreate()
    )
    s.sparkContext.setLogLevel("ERROR")
    yield s
    s.stop()
    # The JVM outlives the session until this process exits, busy for a while after: end it,
    # so that the tests after these have the machine's cores.
    from pyspark import SparkContext

    gateway = SparkContext._gateway
    if gateway is not None and getattr(gateway, "proc", None) is not None:
        gateway.shutdown()
        gateway.proc.kill()
        gateway.proc.wait()
        SparkContext._gateway = None
        SparkContext._jvm = None


def concat_suite(out):
    """Every conformance capture one after the other (nanosecond pcap), each 10 s after the
    previous one ended: many connections, every rule's findings, several host pairs."""
    records = []
    base = 0
    for p in sorted((PCAPS / "conformance").glob("*.pcap")):
        first, last = None, base
        for frame, t, orig in pcap_records(p):
            first = t if first is None else first
            ts = base + (t - first)
            last = max(last, ts)
            records.append((ts, frame, orig))
        base = last + 10_000_000_000
    write_pcap(out, records)
    return len(records)


def write_pcap(out, records):
    """(ts_ns, frame, orig_len) records as a nanosecond pcap."""
    with open(out, "wb") as f:
        f.write(b"\x4d\x3c\xb2\xa1" + struct.pack("<HHiIII", 2, 4, 0, 0, 262144, 1))
        for ts, frame, orig in records:
            f.write(struct.pack("<IIII", ts // 1_000_000_000 + 1_700_000_000, ts % 1_000_000_000, len(frame), orig))
            f.write(frame)


def key(f):
    c = f.get("connection") or {}
    return (f["rule"], f["severity"], tuple(f["frames"]), f["psn"], f["message"], c.get("a"), c.get("qpn_a"), c.get("b"), c.get("qpn_b"), c.get("incarnation"))


def row_key(r):
    frames = tuple(int(x) for x in r["frames"].split(",")) if r["frames"] else ()
    return (r["rule"], r["severity"], frames, r["psn"], r["message"], r["connection_a"], r["connection_qpn_a"], r["connection_b"], r["connection_qpn_b"], r["connection_incarnation"])


def compare(spark, capture, tmp_path, flags=(), **options):
    """Spark's findings against `check --format json FLAGS` (`options` are the same flags)."""
    out = tmp_path / ("export-" + capture.name)
    cli("export", "--raw", "-o", str(out), str(capture))
    packets = spark.read.parquet(str(out / "packets*.parquet"))
    got = ris.check_rows(packets, **options)
    want = cli_json("check", "--format", "json", *flags, str(capture))["findings"]
    # CAP-TIME is the one finding of the whole capture (spark.check judges it per group).
    want = [f for f in want if f["rule"] != "CAP-TIME"]
    got_keys = [row_key(r) for r in got if r["rule"] != "CAP-TIME"]
    assert got_keys == [key(f) for f in want]
    pairs = packets.select("host_pair").distinct().count()
    rules = len({f["rule"] for f in want})
    cores = spark.sparkContext.defaultParallelism
    print(f"\n{capture.name}: {len(want)} findings of {rules} rules, {packets.count()} frames, "
          f"{pairs} host pairs, local mode, {cores} executor cores")
    return len(want), pairs


def test_the_suite_as_one_capture_of_many_host_pairs(spark, tmp_path):
    cap = tmp_path / "suite-all.pcap"
    frames = concat_suite(cap)
    assert frames > 1000
    findings, pairs = compare(spark, cap, tmp_path)
    assert findings > 100 and pairs > 3


def test_generated_host_pairs_with_loss_and_damage(spark, tmp_path):
    clean = tmp_path / "bench-clean.pcap"
    cli("gen", "bench", "--frames", "30000", "--connections", "24", "-o", str(clean))
    # Lost on the wire (every 499th frame) and damaged (a payload byte of every 1201st, its
    # ICRC then bad): gaps, go-back-N answers missing, ICRC errors, on many host pairs.
    records = []
    for i, (frame, ts, orig) in enumerate(pcap_records(clean)):
        if i % 499 == 7:
            continue
        if i % 1201 == 3 and len(frame) > 80:
            frame = frame[:70] + bytes([frame[70] ^ 0xFF]) + frame[71:]
        records.append((ts, frame, orig))
    cap = tmp_path / "bench.pcap"
    write_pcap(cap, records)
    findings, pairs = compare(spark, cap, tmp_path, ["--retx-timeout", "5"], retx_timeout_us=5)
    assert pairs == 24 and findings > 20


@pytest.mark.parametrize("path", real_or_skip(), ids=ids)
def test_real_captures(spark, path, tmp_path):
    compare(spark, path, tmp_path)


def test_a_table_without_raw_is_refused(spark, tmp_path):
    from pyspark.sql import functions as F

    out = tmp_path / "plain"
    cli("export", "-o", str(out), str(PCAPS / "sample.pcap"))
    plain = spark.read.parquet(str(out / "packets.parquet"))
    with pytest.raises(ValueError, match="--raw"):
        ris.check(plain)
    faked = plain.withColumn("raw", F.lit(b"")).withColumn("link_type", F.lit(1)).withColumn("host_pair", F.lit(0))
    with pytest.raises(ri.OptionError, match="host pairs"):
        ris.check(faked, filter="bth")
    with pytest.raises(ri.OptionError, match="did you mean"):
        ris.check(faked, retx_timeout=5)
