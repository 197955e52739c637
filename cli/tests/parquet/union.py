"""The union of `export --shard K/N` outputs equals the single run (cli/tests/parquet.rs).

usage: union.py CASES.json
CASES.json: [{"name", "single": DIR, "shards": [DIR, ...], "spark": bool}, ...]

For every case and table (packets, connections, findings), with DuckDB: the row counts, the
sums of a few columns and the rows themselves (EXCEPT ALL both ways) of the single run equal
those of the shards' union. Then the recipe queries of docs/parquet.md run on the single
run and on the union, and, for cases with "spark", on Spark in local mode over the shards'
files: every answer must be the same. Exits 1 with what differed.
"""

import json
import math
import sys

import duckdb

TABLES = ["packets", "connections", "findings"]
SUMS = {
    "packets": ["frame", "len", "payload_len", "bth_psn", "bth_dest_qp", "incarnation"],
    "connections": ["packets", "first_frame", "last_frame", "retransmissions", "missing_packets"],
    "findings": ["frame", "psn"],
}

# The recipes of docs/parquet.md, verbatim (a test checks the document holds each one).
RECIPES = {
    "naks_by_qp": """
SELECT ip_src AS nak_sender, ip_dst AS requester, bth_dest_qp AS requester_qp,
       count(*) AS naks
FROM packets
WHERE aeth_kind = 'nak'
GROUP BY ip_src, ip_dst, bth_dest_qp
ORDER BY naks DESC, nak_sender, requester, requester_qp
LIMIT 10""",
    "cnp_rate_by_destination": """
SELECT ip_dst AS destination, count(*) AS cnps,
       count(*) * 1e9 / (SELECT greatest(max(ts_ns) - min(ts_ns), 1) FROM packets)
         AS cnps_per_second
FROM packets
WHERE bth_opcode_name = 'CNP'
GROUP BY ip_dst
ORDER BY cnps DESC, destination""",
    "retransmitted_bytes_by_host_pair": """
SELECT least(ip_src, ip_dst) AS host_a, greatest(ip_src, ip_dst) AS host_b,
       sum(payload_len) AS retransmitted_bytes, count(*) AS retransmitted_packets
FROM packets
WHERE retransmission
GROUP BY least(ip_src, ip_dst), greatest(ip_src, ip_dst)
ORDER BY retransmitted_bytes DESC, host_a, host_b""",
    "findings_by_rule": """
SELECT rule, severity, side, count(*) AS findings
FROM findings
GROUP BY rule, severity, side
ORDER BY findings DESC, rule""",
}

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg, file=sys.stderr)


def files(dirs, table):
    return [f"{d}/{table}.parquet" for d in dirs]


def duck_views(con, dirs):
    for t in TABLES:
        con.execute(f"CREATE OR REPLACE VIEW {t} AS SELECT * FROM read_parquet({files(dirs, t)!r})")


def same_answer(a, b):
    if len(a) != len(b):
        return False
    for ra, rb in zip(a, b):
        for x, y in zip(ra, rb):
            if isinstance(x, float) or isinstance(y, float):
                if x is None or y is None or not math.isclose(x, y, rel_tol=1e-12):
                    return False
            elif x != y:
                return False
    return True


def check_case(case, answers):
    name, single, shards = case["name"], case["single"], case["shards"]
    con = duckdb.connect()
    for t in TABLES:
        one = f"read_parquet({files([single], t)!r})"
        many = f"read_parquet({files(shards, t)!r})"
        n1 = con.execute(f"SELECT count(*) FROM {one}").fetchone()[0]
        n2 = con.execute(f"SELECT count(*) FROM {many}").fetchone()[0]
        if n1 != n2:
            fail(f"{name}: {t}: {n1} rows in the single run, {n2} in the shards")
        sums = ", ".join(f"sum({c})" for c in SUMS[t])
        s1 = con.execute(f"SELECT {sums} FROM {one}").fetchone()
        s2 = con.execute(f"SELECT {sums} FROM {many}").fetchone()
        if s1 != s2:
            fail(f"{name}: {t}: sums of {SUMS[t]}: {s1} single, {s2} shards")
        for a, b, what in [(one, many, "single run only"), (many, one, "shards only")]:
            extra = con.execute(f"SELECT count(*) FROM (SELECT * FROM {a} EXCEPT ALL SELECT * FROM {b})").fetchone()[0]
            if extra:
                fail(f"{name}: {t}: {extra} rows in the {what}")
        answers.setdefault(name, {})[t] = n1
    for label, dirs in [("single", [single]), ("shards", shards)]:
        duck_views(con, dirs)
        for q, sql in RECIPES.items():
            answers[name][f"{q}:{label}"] = con.execute(sql).fetchall()
    for q in RECIPES:
        if not same_answer(answers[name][f"{q}:single"], answers[name][f"{q}:shards"]):
            fail(f"{name}: recipe {q}: DuckDB single {answers[name][q + ':single']} != shards {answers[name][q + ':shards']}")


def check_spark(case, answers):
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[1]")
        .appName("roce-inspect-parquet-test")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    name = case["name"]
    for t in TABLES:
        spark.read.parquet(*files(case["shards"], t)).createOrReplaceTempView(t)
    for q, sql in RECIPES.items():
        rows = [tuple(r) for r in spark.sql(sql).collect()]
        if not same_answer(rows, answers[name][f"{q}:single"]):
            fail(f"{name}: recipe {q}: Spark {rows} != DuckDB {answers[name][q + ':single']}")
        answers[name][f"{q}:spark"] = len(rows)
    spark.stop()


def main():
    cases = json.load(open(sys.argv[1]))
    answers = {}
    for case in cases:
        check_case(case, answers)
    for case in cases:
        if case.get("spark"):
            check_spark(case, answers)
    summary = {
        name: {k: (v if isinstance(v, int) else len(v)) for k, v in a.items()}
        for name, a in answers.items()
    }
    print(json.dumps(summary, sort_keys=True))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
