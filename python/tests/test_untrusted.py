"""No input crashes the interpreter: every file of the fuzz corpora (corpus/, the inputs the
Rust fuzz targets keep) through parse(), read() and Checker.feed(); random bytes and random
arguments (hypothesis) give a document or a Python exception, never a crash."""

from __future__ import annotations

import io
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import roce_inspect as ri
from conftest import ROOT

CORPUS = sorted(p for p in (ROOT / "corpus").rglob("*") if p.is_file())


def test_the_corpus_is_there():
    assert len(CORPUS) > 1000


def test_every_corpus_file_through_every_entry():
    documents = 0
    errors = 0
    warnings.simplefilter("ignore", ri.CaptureWarning)
    c = ri.Checker()
    for i, p in enumerate(CORPUS):
        data = p.read_bytes()
        # As a frame (Ethernet), a UDP payload, a raw IP packet (link type 101).
        for doc in (ri.parse(data), ri.parse_udp_payload(data), ri.parse(data, link_type=101)):
            assert doc["schema"] == ri.SCHEMA_FRAME
            documents += 1
        c.feed(data, i)
        # As a capture file.
        try:
            for f in ri.read(io.BytesIO(data)):
                assert f["frame"] >= 1
                documents += 1
        except ri.CaptureError as e:
            assert e.offset >= 0
            errors += 1
    report = c.finish()
    assert report["summary"]["frames"] == len(CORPUS)
    assert documents > 3 * len(CORPUS) and errors > 0


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300), st.integers(min_value=0, max_value=300))
def test_random_frames(data, link_type):
    doc = ri.parse(data, link_type=link_type)
    assert doc["caplen"] == len(data)
    c = ri.Checker()
    c.feed(data, 0)
    c.feed(data, 0)
    assert c.finish()["summary"]["frames"] == 2


VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.text(max_size=20),
    st.lists(st.one_of(st.integers(-5, 70000), st.text(max_size=8)), max_size=6),
    st.floats(allow_nan=True),
    st.binary(max_size=8),
)
NAMES = st.sampled_from(
    [
        "port", "filter", "conn", "pmtu", "max_flows", "reconnect_idle_ms", "shard",
        "assume_complete", "reorder_window_us", "retx_timeout_us", "qp_timeout",
        "cnp_min_interval", "rnr_timer", "expect_dscp", "expect_cnp_dscp", "expect_pcp",
        "enable", "disable", "nope", "retx_timeout", "tap_window", "tap_offset",
    ]
)


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(NAMES, VALUES, max_size=4))
def test_random_options(kwargs):
    sample = ROOT / "pcaps" / "sample.pcap"
    try:
        doc = ri.check(sample, **kwargs)
    except (ri.OptionError, TypeError, OverflowError):
        return
    assert doc["schema"] == ri.SCHEMA_CHECK
    assert doc["summary"]["frames"] == 39 or "shard" in kwargs or kwargs.get("filter")


TAP_VALUES = st.one_of(
    VALUES,
    st.dictionaries(
        st.one_of(st.integers(-3, 5), st.text(max_size=8), st.booleans(), st.none()),
        st.one_of(st.integers(-(2**70), 2**70), st.text(max_size=10), st.floats(), st.none()),
        max_size=3,
    ),
)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(["tap_window", "tap_offset", "shard", "nope"]), TAP_VALUES, max_size=3))
def test_random_tap_options(kwargs):
    # Several taps (the sample twice): a document with its taps, or a Python exception.
    sample = ROOT / "pcaps" / "sample.pcap"
    try:
        doc = ri.check([sample, sample], **kwargs)
    except (ri.OptionError, ri.CaptureError, TypeError, OverflowError):
        return
    assert doc["schema"] == ri.SCHEMA_CHECK
    assert len(doc["taps"]["taps"]) == 2


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=60))
def test_random_filters(text):
    try:
        frames = list(ri.read(ROOT / "pcaps" / "sample.pcap", filter=text))
    except ri.OptionError as e:
        assert "filter" in str(e)
        return
    assert len(frames) <= 39


@pytest.mark.parametrize("bad", [None, 3, b"bytes", object()])
def test_sources_that_are_not_captures(bad):
    with pytest.raises((ri.OptionError, ri.CaptureError, TypeError)):
        ri.stats(bad)


FRAME_LISTS = st.lists(
    st.tuples(st.binary(max_size=200), st.integers(0, 2**40), st.integers(0, 2**62), st.integers(0, 300)),
    max_size=12,
)


@settings(max_examples=200, deadline=None)
@given(FRAME_LISTS, st.integers(0, 2**62), st.integers(0, 3))
def test_random_groups_for_spark(frames, end_ns, cut):
    """`spark.check`'s per-group entry: random frames and numbers give the findings columns and
    one order key per finding; lists of different lengths and lengths below the bytes are
    refused."""
    from roce_inspect import _native

    raws = [f for f, _, _, _ in frames]
    numbers = [n for _, n, _, _ in frames]
    ts = [t for _, _, t, _ in frames]
    links = [k for _, _, _, k in frames]
    lens = [len(f) + cut for f in raws]
    n, cols = _native.check_group(raws, numbers, ts, lens, links, end_ns)
    names = [c[0] for c in cols]
    assert names == [c[0] for c in ri.finding_columns()] + ["order"]
    assert len(cols[-1][3]) == n
    if frames:
        with pytest.raises(ri.OptionError):
            _native.check_group(raws, numbers[1:], ts, lens, links, end_ns)
        if any(raws):
            with pytest.raises(ri.OptionError):
                _native.check_group(raws, numbers, ts, [0] * len(raws), links, end_ns)
