"""roce_inspect: RoCEv2 captures at native speed, from Python.

The same library as the ``roce-inspect`` command line (Rust), so every dict is its v1 JSON
contract (docs/json.md) member for member and every batch the columns of its Parquet
packets table (docs/parquet.md)::

    import roce_inspect as ri
    frame = ri.parse(raw_bytes)                    # one frame: a `dissect --format jsonl` line
    for f in ri.read("capture.pcapng", filter="bth.opcode == 17"):
        print(f["frame"], f["roce"]["bth"]["psn"])
    report = ri.check("capture.pcapng")            # `check --format json`
    assert report["summary"]["errors"] == 0

Options are the command line's flags, ``_`` for ``-`` and the unit in the name
(``--retx-timeout 2000`` is ``retx_timeout_us=2000``, ``--reconnect-idle`` is
``reconnect_idle_ms``); an unknown one raises :class:`OptionError`. A capture that cannot be
read raises :class:`CaptureError` (``file``, ``frame``, ``offset``); damage after the first
frame is a :class:`CaptureWarning` and reading goes on.
"""

from __future__ import annotations

import os
from typing import Any, BinaryIO, Dict, Iterator, List, Optional, Sequence, Tuple, Union

from . import _native
from ._native import CaptureError, OptionError, SCHEMA_CHECK, SCHEMA_FRAME, SCHEMA_STATS
from ._native import parse, parse_udp_payload

__version__: str = _native.__version__

CaptureWarning = _native.CaptureWarning

Source = Union[str, "os.PathLike[str]", BinaryIO]
#: A column's description: (name, type, nullable, meaning).
ColumnInfo = Tuple[str, str, bool, str]
# One column of a batch as Arrow buffers: (name, type, validity, values, offsets).
# (name, type, validity, values, offsets); the values are bytes, or (address, length) of an
# integer column lent where it lies (the batch's lease keeps it alive: see _arrow_batch).
_Column = Tuple[str, str, Optional[bytes], Union[bytes, Tuple[int, int]], Optional[bytes]]

__all__ = [
    "CaptureError",
    "CaptureWarning",
    "Checker",
    "OptionError",
    "SCHEMA_CHECK",
    "SCHEMA_FRAME",
    "SCHEMA_STATS",
    "check",
    "finding_columns",
    "packet_columns",
    "parse",
    "parse_udp_payload",
    "read",
    "read_batches",
    "stats",
]


def read(source: Source, filter: Optional[str] = None, **options: Any) -> Iterator[Dict[str, Any]]:
    """Each frame of a capture (pcap, pcapng, gzip'ed or not; a path or a binary file object)
    as a frame document, the dict of one ``dissect --format jsonl`` line. ``filter`` is the
    display filter of ``-Y`` (docs/filter.md): only the frames it matches. Options: ``port``
    (an int or a list of them), ``conn``."""
    return _native.Reader(source, filter=filter, **options)


def packet_columns(raw: bool = False) -> List[ColumnInfo]:
    """The packets table's columns: (name, type, nullable, meaning), in file order; with
    ``raw``, those ``export --raw`` adds after them (``raw``, ``link_type``, ``host_pair``)."""
    return _native.packet_columns(raw)


def finding_columns() -> List[ColumnInfo]:
    """The findings table's columns: (name, type, nullable, meaning), in file order."""
    return _native.finding_columns()


def _arrow_batch(pa: Any, n: int, cols: Sequence[_Column], lease: Any) -> Any:
    arrays = []
    names = []
    for name, kind, validity, data, offsets in cols:
        v = pa.py_buffer(validity) if validity is not None else None
        if isinstance(data, tuple):
            # An integer column lent as it lies in the reader's row group: no copy. The
            # buffer holds the lease (its base), so the row group stays alive and unchanged
            # as long as any array made from it does.
            address, length = data
            a = pa.Array.from_buffers(pa.int64(), n, [v, pa.foreign_buffer(address, length, base=lease)])
        elif kind == "int64":
            a = pa.Array.from_buffers(pa.int64(), n, [v, pa.py_buffer(data)])
        elif kind == "bool":
            a = pa.Array.from_buffers(pa.bool_(), n, [v, pa.py_buffer(data)])
        elif kind == "string":
            a = pa.Array.from_buffers(pa.string(), n, [v, pa.py_buffer(offsets), pa.py_buffer(data)])
        else:  # binary
            a = pa.Array.from_buffers(pa.binary(), n, [v, pa.py_buffer(offsets), pa.py_buffer(data)])
        arrays.append(a)
        names.append(name)
    return pa.RecordBatch.from_arrays(arrays, names=names)


def _lists(n: int, cols: Sequence[_Column]) -> Dict[str, List[Any]]:
    import array
    import sys

    out: Dict[str, List[Any]] = {}
    for name, kind, validity, data, offsets in cols:
        if not isinstance(data, bytes):
            raise TypeError(f"{name}: a lent column reached the lists (lend is for pyarrow only)")
        present = (
            [True] * n
            if validity is None
            else [bool(validity[i >> 3] >> (i & 7) & 1) for i in range(n)]
        )
        if kind == "int64":
            ints = array.array("q")
            ints.frombytes(data)
            if sys.byteorder != "little":
                ints.byteswap()
            out[name] = [int(x) if p else None for x, p in zip(ints, present)]
        elif kind == "bool":
            out[name] = [bool(data[i >> 3] >> (i & 7) & 1) if present[i] else None for i in range(n)]
        else:  # string or binary: 32-bit offsets into data
            offs = array.array("i")
            offs.frombytes(offsets or b"")
            if sys.byteorder != "little":
                offs.byteswap()
            vals: List[Optional[bytes]] = [
                bytes(data[offs[i] : offs[i + 1]]) if present[i] else None for i in range(n)
            ]
            if kind == "string":
                out[name] = [v.decode("utf-8") if v is not None else None for v in vals]
            else:
                out[name] = list(vals)
    return out


def read_batches(
    source: Source,
    columns: Optional[Sequence[str]] = None,
    batch_size: int = 65536,
    filter: Optional[str] = None,
    raw: bool = False,
    **options: Any,
) -> Iterator[Any]:
    """The packets table of ``roce-inspect export`` (packets.parquet: the same columns, types
    and values) in batches of up to ``batch_size`` rows: ``pyarrow.RecordBatch`` es when
    pyarrow is installed, else a dict of lists per batch. ``columns`` picks some (by name,
    :func:`packet_columns` lists them); ``incarnation`` and ``retransmission`` come from the
    connection model, which runs only when one of them is asked for (``columns=None`` asks
    for all). ``raw=True`` adds ``export --raw``'s columns (each frame's bytes, its link type,
    its host pair's hash). Options: ``port``, ``conn``, ``shard``, ``pmtu``, ``max_flows``,
    ``reconnect_idle_ms``."""
    try:
        import pyarrow as pa  # noqa: F401
    except ImportError:
        pa = None
    reader = _native.BatchReader(
        source,
        columns=list(columns) if columns is not None else None,
        batch_size=batch_size,
        raw=raw,
        lend=pa is not None,
        filter=filter,
        **options,
    )
    for n, cols, lease in reader:
        yield _arrow_batch(pa, n, cols, lease) if pa is not None else _lists(n, cols)


def stats(source: Source, **options: Any) -> Dict[str, Any]:
    """``stats --format json`` of a capture (``roce-inspect/stats/v1``), as a dict. Options:
    ``filter``, ``conn``, ``port``, ``shard`` (``"K/N"``), ``pmtu``, ``max_flows``,
    ``reconnect_idle_ms``."""
    return _native.stats(source, **options)


def check(source: Source, **options: Any) -> Dict[str, Any]:
    """``check --format json`` of a capture (``roce-inspect/check/v1``), as a dict. Options:
    those of :func:`stats` and ``assume_complete``, ``reorder_window_us``,
    ``retx_timeout_us``, ``qp_timeout``, ``cnp_min_interval`` (``"4us"``, ``"50us,pair"``),
    ``rnr_timer``, ``expect_dscp``, ``expect_cnp_dscp``, ``expect_pcp``, ``enable`` and
    ``disable`` (rule IDs)."""
    return _native.check(source, **options)


class Checker:
    """The conformance checker fed frame by frame (a test generating traffic, a live
    source): :meth:`feed` each frame in capture order, :meth:`findings` for those proven
    since the last call, :meth:`finish` for the ``check --format json`` document. Options:
    those of :func:`check` but ``filter``, ``conn`` and ``shard``."""

    def __init__(self, **options: Any) -> None:
        self._c = _native.Checker(**options)

    def feed(
        self,
        frame: bytes,
        ts_ns: int,
        *,
        number: Optional[int] = None,
        len: Optional[int] = None,
        link_type: int = 1,
    ) -> None:
        """One frame from its link-layer header (Ethernet unless ``link_type`` says), its
        capture time in ns since the epoch; ``number`` defaults to one more than the last,
        ``len`` (on the wire) to ``len(frame)``."""
        self._c.feed(frame, ts_ns, number=number, len=len, link_type=link_type)

    def tick(self, ts_ns: int) -> None:
        """The capture's clock passed ``ts_ns`` without a frame for this checker."""
        self._c.tick(ts_ns)

    def findings(self) -> List[Dict[str, Any]]:
        """The findings proven since the last call, each once (``finish`` lists all)."""
        return self._c.findings()

    def finish(self) -> Dict[str, Any]:
        """Ends the capture: the ``check --format json`` document of every frame fed."""
        return self._c.finish()
