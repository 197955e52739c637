"""The GIL is released during a pass: while `stats()`, `check()` or a batch of
`read_batches()` runs in one thread, another Python thread keeps running. Judged by the
longest pause the other thread sees, against how long one call takes: a call that held the
GIL would pause it for the whole call."""

from __future__ import annotations

import sys
import threading
import time

import pytest

import roce_inspect as ri
from conftest import cli


@pytest.fixture(scope="module")
def capture(tmp_path_factory):
    p = tmp_path_factory.mktemp("threads") / "bench.pcap"
    cli("gen", "bench", "--frames", "300000", "--connections", "16", "-o", str(p))
    return p


def longest_pause(work, times=4):
    """Runs `work` `times` times over in a thread; the longest gap between two steps of this
    thread's loop meanwhile, and the shortest of the calls."""
    done = threading.Event()
    took = []

    def run():
        for _ in range(times):
            t = time.perf_counter()
            work()
            took.append(time.perf_counter() - t)
        done.set()

    old = sys.getswitchinterval()
    sys.setswitchinterval(0.001)
    try:
        th = threading.Thread(target=run)
        # From before the start: a call that takes the GIL at once holds up start() itself.
        last = time.perf_counter()
        gap = 0.0
        th.start()
        while not done.is_set():
            now = time.perf_counter()
            gap = max(gap, now - last)
            last = now
        th.join()
    finally:
        sys.setswitchinterval(old)
    return gap, min(took)


@pytest.mark.parametrize(
    "name,work",
    [
        ("stats", lambda p: ri.stats(p)),
        ("check", lambda p: ri.check(p)),
        ("read_batches", lambda p: sum(1 for _ in ri.read_batches(p))),
    ],
)
def test_another_thread_runs_during_a_pass(capture, name, work):
    gap, took = longest_pause(lambda: work(capture))
    # A call that held the GIL would pause this thread for the whole call.
    assert took > 0.02, f"{name} took {took:.3f} s: too short to tell"
    assert gap < took / 3, f"{name}: the other thread paused {gap:.3f} s of a {took:.3f} s call"
