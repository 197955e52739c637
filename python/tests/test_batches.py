"""read_batches() is the packets table of `roce-inspect export`: the same columns, types and
values as packets.parquet, on the shipped and the real captures; a dict of lists without
pyarrow."""

from __future__ import annotations

import subprocess
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import roce_inspect as ri
from conftest import PCAPS, cli, ids, real_or_skip, shipped


def exported(path, tmp_path, *flags):
    out = tmp_path / "export"
    cli("export", *flags, "-o", str(out), str(path))
    return pq.read_table(out / "packets.parquet")


def batches_table(path, **kw):
    batches = list(ri.read_batches(path, **kw))
    assert all(isinstance(b, pa.RecordBatch) for b in batches)
    if not batches:
        return None
    return pa.Table.from_batches(batches)


def same(got, want):
    assert got.column_names == want.column_names
    for name in want.column_names:
        g, w = got.column(name), want.column(name)
        assert g.type == w.type, (name, g.type, w.type)
        assert g.to_pylist() == w.to_pylist(), name


def test_the_columns_are_the_tables():
    cols = ri.packet_columns()
    assert [c[0] for c in cols[:4]] == ["frame", "ts_ns", "caplen", "len"]
    assert {c[1] for c in cols} == {"int64", "bool", "string"}


@pytest.mark.parametrize("path", shipped()[::4], ids=ids)
def test_shipped_batches_are_the_export(path, tmp_path):
    same(batches_table(path, batch_size=7), exported(path, tmp_path))


@pytest.mark.parametrize("path", shipped()[1::9], ids=ids)
def test_raw_batches_are_the_raw_export(path, tmp_path):
    got = batches_table(path, raw=True, batch_size=5)
    want = exported(path, tmp_path, "--raw")
    same(got, want)
    assert [c[0] for c in ri.packet_columns(raw=True)[-3:]] == ["raw", "link_type", "host_pair"]
    assert got.column("raw").type == pa.binary()
    # The bytes are the capture's own, read here without the library.
    from conftest import pcap_records

    if path.suffix == ".pcap":
        assert got.column("raw").to_pylist() == [f for f, _, _ in pcap_records(path)]


def test_raw_columns_need_raw():
    with pytest.raises(ri.OptionError, match="raw=True"):
        list(ri.read_batches(PCAPS / "sample.pcap", columns=["raw"]))


@pytest.mark.parametrize("path", real_or_skip(), ids=ids)
def test_real_batches_are_the_export(path, tmp_path):
    got = batches_table(path)
    want = exported(path, tmp_path)
    if got is None:
        assert want.num_rows == 0
    else:
        same(got, want)


def test_columns_and_filter(tmp_path):
    path = PCAPS / "sample.pcap"
    want = exported(path, tmp_path, "-Y", "bth.opcode == 17")
    got = batches_table(path, filter="bth.opcode == 17", columns=["frame", "bth_psn", "icrc_status"])
    assert got.column_names == ["frame", "bth_psn", "icrc_status"]
    assert got.num_rows == want.num_rows > 0
    for name in got.column_names:
        assert got.column(name).to_pylist() == want.column(name).to_pylist()


def test_without_pyarrow_a_dict_of_lists():
    # A fresh interpreter where importing pyarrow fails.
    code = (
        "import sys, json; sys.modules['pyarrow'] = None\n"
        "import roce_inspect as ri\n"
        f"b = list(ri.read_batches({str(PCAPS / 'sample.pcap')!r}, batch_size=16))\n"
        "print(json.dumps([len(x['frame']) for x in b]))\n"
        "print(json.dumps(sum((x['bth_psn'] for x in b), [])))\n"
        "print(json.dumps(sum((x['icrc_status'] for x in b), [])))\n"
        "print(json.dumps(sum((x['retransmission'] for x in b), [])))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    sizes, psns, icrc, retx = (__import__("json").loads(line) for line in out.stdout.splitlines())
    assert sizes == [16, 16, 7]
    t = batches_table(PCAPS / "sample.pcap")
    assert psns == t.column("bth_psn").to_pylist()
    assert icrc == t.column("icrc_status").to_pylist()
    assert retx == t.column("retransmission").to_pylist()



def test_lent_columns_outlive_their_batch(tmp_path):
    # Every column asked for: the integer columns whose rows are all present are lent as
    # they lie in the reader's row group, not copied (the batch's lease keeps it alive).
    # Kept here: two columns of every third batch, each batch itself dropped at once, so a
    # kept lease is held by its arrays alone, while the leases of the batches not kept go
    # back to the reader, whose later batches are written into those row groups. A row
    # group reused while lent would show here as another batch's values.
    import gc

    path = tmp_path / "bench.pcap"
    cli("gen", "bench", "--frames", "30000", "--connections", "8", "-o", str(path))
    want = exported(path, tmp_path)
    psn, frame, batches = [], [], 0
    for b in ri.read_batches(path, batch_size=1000):
        if batches % 3 == 0:
            psn.append(b.column("bth_psn"))
            frame.append(b.column("frame"))
        batches += 1
        del b
        gc.collect()
    assert batches == 30
    keep = [i for i in range(want.num_rows) if (i // 1000) % 3 == 0]
    for name, kept in (("bth_psn", psn), ("frame", frame)):
        all_rows = want.column(name).to_pylist()
        assert pa.concat_arrays(kept).to_pylist() == [all_rows[i] for i in keep], name
