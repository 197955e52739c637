"""The GIL is released during a pass: while `stats()`, `check()` or a batch of
`read_batches()` runs in one thread, another Python thread keeps running. Judged by the
longest pause the other thread sees, against how long one call takes: a call that held the
GIL would pause it for the whole call."""

from __future__ import annotations

import gc
import json
import pathlib
import subprocess
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
    # Python's own collector pauses every thread: not what is measured here.
    gc.collect()
    gc.disable()
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
        gc.enable()
        sys.setswitchinterval(old)
    return gap, min(took)


WORK = {
    "stats": lambda p: ri.stats(p),
    "check": lambda p: ri.check(p),
    "read_batches": lambda p: sum(1 for _ in ri.read_batches(p)),
}


def measure(name, path):
    """Prints (longest pause, shortest call) of `name` on `path` as JSON, after one call
    that imports what the first imports (pyarrow: a tenth of a second holding the GIL)."""
    WORK[name](path)
    print(json.dumps(longest_pause(lambda: WORK[name](path))))


@pytest.mark.parametrize("name", sorted(WORK))
def test_another_thread_runs_during_a_pass(capture, name):
    # In a fresh interpreter: what earlier tests left in this one (Spark's threads and
    # objects) pauses threads too, which is not what is measured.
    r = subprocess.run(
        [sys.executable, "-c", f"import test_gil; test_gil.measure({name!r}, {str(capture)!r})"],
        cwd=pathlib.Path(__file__).parent,
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    gap, took = json.loads(r.stdout.strip().splitlines()[-1])
    # A call that held the GIL would pause the other thread for the whole call.
    assert took > 0.02, f"{name} took {took:.3f} s: too short to tell"
    assert gap < took / 3, f"{name}: the other thread paused {gap:.3f} s of a {took:.3f} s call"
