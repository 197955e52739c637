"""python/examples/: the PSN plot runs on a shipped capture and writes a PNG of the plot."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import PCAPS, ROOT

pytest.importorskip("matplotlib")


def test_psn_plot_writes_a_png(tmp_path):
    png = tmp_path / "psn.png"
    cap = PCAPS / "conformance" / "req-gbn-retx-same.pcap"
    r = subprocess.run(
        [sys.executable, str(ROOT / "python" / "examples" / "psn_plot.py"), str(cap), str(png)],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert (width, height) == (1080, 540)  # 9 x 4.5 inches at 120 dpi
    # It names what it drew: the busiest flow's requests, the retransmitted ones among them.
    assert "requests" in r.stdout and "retransmitted" in r.stdout


def test_psn_plot_says_when_there_is_nothing_to_draw(tmp_path):
    empty = tmp_path / "empty.pcap"
    empty.write_bytes(b"\xd4\xc3\xb2\xa1" + (2).to_bytes(2, "little") + (4).to_bytes(2, "little") + bytes(8) + (65535).to_bytes(4, "little") + (1).to_bytes(4, "little"))
    r = subprocess.run(
        [sys.executable, str(ROOT / "python" / "examples" / "psn_plot.py"), str(empty), str(tmp_path / "x.png")],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 1 and "no RoCE packets" in r.stderr
    assert not (tmp_path / "x.png").exists()
