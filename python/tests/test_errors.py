"""Bad input is an exception that says where, never a crash: a capture that cannot be read
(CaptureError with file, frame, offset), damage after the first frame (a CaptureWarning,
the frames before kept), options that are not options (OptionError, a ValueError)."""

from __future__ import annotations

import io
import warnings

import pytest

import roce_inspect as ri
from conftest import PCAPS

SAMPLE = (PCAPS / "sample.pcap").read_bytes()


def test_a_missing_file_names_itself(tmp_path):
    missing = tmp_path / "nope.pcap"
    with pytest.raises(ri.CaptureError) as e:
        ri.check(missing)
    assert e.value.file == str(missing)
    assert e.value.frame is None
    assert "nope.pcap" in str(e.value)


def test_not_a_capture_is_an_error_at_offset_0(tmp_path):
    p = tmp_path / "notes.pcap"
    p.write_bytes(b"this is not a capture at all, just text\n" * 4)
    for f in (ri.stats, ri.check, lambda p: list(ri.read(p)), lambda p: list(ri.read_batches(p))):
        with pytest.raises(ri.CaptureError) as e:
            f(p)
        assert e.value.offset == 0 and e.value.file == str(p)


def test_a_directory_is_refused(tmp_path):
    with pytest.raises(ri.CaptureError, match="directory"):
        ri.stats(tmp_path)


def test_a_cut_capture_keeps_the_frames_before_it(tmp_path):
    # The sample cut in the middle of a record: every whole frame before is read, the cut
    # is a warning naming the file and offset.
    cut = SAMPLE[: len(SAMPLE) - 30]
    p = tmp_path / "cut.pcap"
    p.write_bytes(cut)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        frames = list(ri.read(p))
    assert len(frames) == 38
    assert any(issubclass(x.category, ri.CaptureWarning) and "cut.pcap" in str(x.message) for x in w)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = ri.stats(p)
    assert s["frames"] == 38
    assert any("cut.pcap" in x for x in s["warnings"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert sum(b.num_rows if hasattr(b, "num_rows") else len(b["frame"]) for b in ri.read_batches(p)) == 38


def test_a_lying_record_length_is_a_warning_not_a_crash(tmp_path):
    # The second record's captured length says 0x7fffffff bytes.
    b = bytearray(SAMPLE)
    first_len = int.from_bytes(b[24 + 8 : 24 + 12], "little")
    second = 24 + 16 + first_len
    b[second + 8 : second + 12] = (0x7FFFFFFF).to_bytes(4, "little")
    p = tmp_path / "liar.pcap"
    p.write_bytes(bytes(b))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        frames = list(ri.read(p))
    assert len(frames) >= 1 and frames[0]["frame"] == 1
    assert any(issubclass(x.category, ri.CaptureWarning) for x in w)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"retx_timeout": 5}, "did you mean retx_timeout_us"),
        ({"pmtu": 1000}, "not a PMTU"),
        ({"qp_timeout": 0}, "out of range"),
        ({"qp_timeout": True}, "bool"),
        ({"max_flows": 0}, "out of range"),
        ({"retx_timeout_us": 2**63}, "does not fit"),
        ({"enable": ["NO-SUCH-RULE"]}, "NO-SUCH-RULE"),
        ({"filter": "bth.dest_q == 1"}, "did you mean bth.dest_qp"),
        ({"conn": "10.0.0.1-10.0.0.2"}, "conn"),
        ({"shard": "3/2"}, "shard"),
        ({"cnp_min_interval": "fast"}, "cnp_min_interval"),
        ({"port": 0}, "port"),
        ({"port": [1, 2, 3, 4, 5]}, "at most 4"),
        ({"filter": 17}, "expected a str"),
    ],
)
def test_bad_options_say_which(kwargs, match):
    with pytest.raises(ri.OptionError, match=match) as e:
        ri.check(PCAPS / "sample.pcap", **kwargs)
    assert isinstance(e.value, ValueError)


def test_options_a_function_does_not_take_are_refused():
    with pytest.raises(ri.OptionError, match="not an option here"):
        ri.stats(PCAPS / "sample.pcap", assume_complete=True)
    with pytest.raises(ri.OptionError, match="not an option here"):
        list(ri.read(PCAPS / "sample.pcap", max_flows=3))
    with pytest.raises(ri.OptionError, match="filter, conn and shard"):
        ri.Checker(filter="bth")
    with pytest.raises(ri.OptionError, match="not a column"):
        list(ri.read_batches(PCAPS / "sample.pcap", columns=["frame", "nope"]))


def test_a_file_object_that_is_not_binary():
    with pytest.raises(ri.CaptureError):
        ri.stats(io.StringIO("text"))


def test_a_finished_checker_says_so():
    c = ri.Checker()
    c.finish()
    with pytest.raises(RuntimeError, match="finished"):
        c.feed(b"\x00" * 60, 0)


def test_frames_out_of_order_are_refused():
    c = ri.Checker()
    c.feed(b"\x00" * 60, 0, number=5)
    with pytest.raises(ri.OptionError, match="capture order"):
        c.feed(b"\x00" * 60, 0, number=3)
