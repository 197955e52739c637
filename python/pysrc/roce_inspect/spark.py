"""The conformance checker inside Spark: ``check(df)`` over the packets table of
``roce-inspect export --raw`` (packets.parquet with each frame's bytes), one checker per
host pair.

Why per host pair: the connection model is (both directions of every QP between two hosts,
their CM exchange on QP1 and their CNPs carry the same two addresses), so the frames of one
host pair, in capture order, are all a checker needs. ``groupBy("host_pair")`` puts each
pair's frames in one group, ``applyInPandas`` runs a checker per group on an executor, and
the groups' findings are put back in the order one checker over the whole capture proves
them (the ``order`` key each checker gives its findings: frame by frame, then at the end the
incarnations in flow order, then the CE bursts without a CNP).

What a cluster adds: host pairs judged in parallel on as many executors as there are; what it
does not: one host pair stays on one executor (its frames in order), and the one finding about
the whole capture, CAP-TIME (timestamps going backwards), is judged per group on its own
frames. Limits per connection (``max_flows``) are per group, as with ``--shard``.

    from pyspark.sql import SparkSession
    import roce_inspect.spark
    spark = SparkSession.builder.master("local[2]").getOrCreate()
    packets = spark.read.parquet("export/packets*.parquet")   # roce-inspect export --raw
    findings = roce_inspect.spark.check(packets)             # findings.parquet's columns
    findings.groupBy("rule").count().show()
"""

from __future__ import annotations

from typing import Any, Dict, List

from . import _lists, _native

#: The packets table's columns the checker reads (``export --raw`` adds ``raw``,
#: ``link_type`` and ``host_pair``).
NEEDED = ["frame", "ts_ns", "len", "raw", "link_type", "host_pair"]


def _schema() -> Any:
    from pyspark.sql import types as T

    kinds = {"int64": T.LongType(), "bool": T.BooleanType(), "string": T.StringType()}
    fields = [T.StructField(n, kinds[k], nullable) for n, k, nullable, _ in _native.finding_columns()]
    fields.append(T.StructField("order", T.BinaryType(), False))
    return T.StructType(fields)


def _judge(end_ns: int, options: Dict[str, Any]) -> Any:
    def judge(pdf: Any) -> Any:
        import pandas as pd

        n, cols = _native.check_group(
            [bytes(b) for b in pdf["raw"]],
            [int(x) for x in pdf["frame"]],
            [int(x) for x in pdf["ts_ns"]],
            [int(x) for x in pdf["len"]],
            [int(x) for x in pdf["link_type"]],
            end_ns,
            **options,
        )
        data = _lists(n, cols[:-1])
        frame: Dict[str, Any] = {}
        for name, kind, _nullable, _doc in _native.finding_columns():
            dtype = {"int64": "Int64", "bool": "boolean", "string": "object"}[kind]
            frame[name] = pd.array(data[name], dtype=dtype)
        frame["order"] = pd.array(list(cols[-1][3]), dtype="object")
        return pd.DataFrame(frame)

    return judge


def check(packets: Any, **options: Any) -> Any:
    """The findings of ``roce-inspect check`` on the capture whose packets table (``export
    --raw``) is ``packets``, as a Spark DataFrame with the columns of findings.parquet, in
    the order ``check`` lists them. Options: those of :func:`roce_inspect.check` but
    ``filter``, ``conn`` and ``shard``: to judge some host pairs, keep all the rows of those
    host pairs in the DataFrame (a subset of a connection's packets would invent PSN gaps)."""
    from pyspark.sql import functions as F

    missing = [c for c in NEEDED if c not in packets.columns]
    if missing:
        raise ValueError(
            "the packets table lacks %s: export it with `roce-inspect export --raw`"
            % ", ".join(missing)
        )
    for refused in ("filter", "conn", "shard"):
        if options.get(refused) is not None:
            raise _native.OptionError(
                "%s: spark.check judges whole host pairs; select host pairs in the DataFrame instead"
                % refused
            )
    # Refuse bad options here, on the driver, before any executor runs.
    _native.Checker(**options)
    end_ns = packets.agg(F.max("ts_ns")).first()[0] or 0
    judged = (
        packets.select(*NEEDED)
        .groupBy("host_pair")
        .applyInPandas(_judge(int(end_ns), dict(options)), schema=_schema())
    )
    return judged.orderBy("order").drop("order")


def check_rows(packets: Any, **options: Any) -> List[Dict[str, Any]]:
    """:func:`check`, collected: a list of dicts, one per finding, in ``check``'s order."""
    return [r.asDict() for r in check(packets, **options).collect()]
