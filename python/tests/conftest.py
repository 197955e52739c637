"""Shared setup of the Python package's tests: the repository's captures, the command line
to compare with (the same documents, member for member), the real captures."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
from typing import Any, List

import struct

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
PCAPS = ROOT / "pcaps"


def _cli() -> pathlib.Path:
    env = os.environ.get("ROCE_INSPECT_BIN")
    if env:
        return pathlib.Path(env)
    for profile in ("release", "debug"):
        p = ROOT / "target" / profile / "roce-inspect"
        if p.exists():
            return p
    raise RuntimeError(
        "no roce-inspect binary: `cargo build --release -p roce-inspect` or set ROCE_INSPECT_BIN"
    )


CLI = _cli()


def cli(*args: str, check: bool = True) -> str:
    """Runs the command line and returns its standard output."""
    r = subprocess.run([str(CLI), *args], capture_output=True, text=True)
    if check and r.returncode not in (0, 1):
        raise AssertionError(f"roce-inspect {' '.join(args)}: exit {r.returncode}\n{r.stderr}")
    return r.stdout


def cli_json(*args: str) -> Any:
    return json.loads(cli(*args))


def shipped() -> List[pathlib.Path]:
    """The captures shipped in pcaps/ (the sample and the conformance suite's)."""
    caps = sorted(PCAPS.glob("*.pcap")) + sorted((PCAPS / "conformance").glob("*.pcap*"))
    return [c for c in caps if c.suffix in (".pcap", ".pcapng")]


def real() -> List[pathlib.Path]:
    """The real captures (ROCE_INSPECT_REAL_CAPTURES): skipped visibly without them, a
    failure with CI=true (CI must run them)."""
    d = os.environ.get("ROCE_INSPECT_REAL_CAPTURES")
    if not d or d == "none" or not pathlib.Path(d).is_dir():
        if os.environ.get("CI") == "true" and d != "none":
            raise RuntimeError("CI=true but ROCE_INSPECT_REAL_CAPTURES names no folder")
        return []
    return sorted(p for p in pathlib.Path(d).iterdir() if p.is_file() and p.suffix != ".md")


def real_or_skip() -> List[Any]:
    caps = real()
    if not caps:
        return [pytest.param(None, marks=pytest.mark.skip(reason="ROCE_INSPECT_REAL_CAPTURES not set: the real captures are not tested"))]
    return caps


def ids(p: Any) -> str:
    return p.name if isinstance(p, pathlib.Path) else "none"


def pcap_link_type(path):
    """The link type in a pcap file's header (1 Ethernet, 197 ERF, ...), read here."""
    data = path.read_bytes()[:24]
    endian = "<" if data[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
    return struct.unpack(endian + "I", data[20:24])[0] & 0x0FFFFFFF


def pcap_records(path):
    """(bytes, ts_ns, len) of each record of a pcap file, read here (not by the library)."""
    data = path.read_bytes()
    magic = data[:4]
    endian, scale = {
        b"\xd4\xc3\xb2\xa1": ("<", 1000),
        b"\xa1\xb2\xc3\xd4": (">", 1000),
        b"\x4d\x3c\xb2\xa1": ("<", 1),
        b"\xa1\xb2\x3c\x4d": (">", 1),
    }[magic]
    at = 24
    while at + 16 <= len(data):
        sec, frac, incl, orig = struct.unpack(endian + "IIII", data[at : at + 16])
        at += 16
        yield data[at : at + incl], sec * 1_000_000_000 + frac * scale, orig
        at += incl
