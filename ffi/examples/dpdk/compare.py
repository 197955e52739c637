#!/usr/bin/env python3
"""Checks one roce_fwd run against roce-inspect on the same capture.

    compare.py ROCE_INSPECT CAPTURE COUNTS.json TX.pcap
    compare.py --ethernet CAPTURE     (exit 0 when every frame has the Ethernet link type)

- the counts roce_fwd printed equal `roce-inspect stats --format json` (frames, rocev2_frames,
  rocev1_frames, icrc.ok / bad / unverifiable / not_checked) and the number of malformed frames
  of `roce-inspect dissect --format jsonl` (no `roce`, and `problems`, `stop` or `undecoded`);
- TX.pcap holds exactly, in order and byte for byte, the frames roce-inspect calls valid:
  not malformed and no bad ICRC.
Prints one summary line; exits 1 on any difference.
"""
import json
import struct
import subprocess
import sys


SNAPLEN = 16128


def frames(path, linktypes=None):
    """The frames of a pcap or pcapng file, as bytes (captured part); their link types are
    added to `linktypes` when given."""
    data = open(path, "rb").read()
    out = []
    if linktypes is None:
        linktypes = set()
    magic = data[:4]
    if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d"):
        e = "<" if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
        linktypes.add(struct.unpack(e + "I", data[20:24])[0] & 0xFFFF)
        at = 24
        while at + 16 <= len(data):
            caplen = struct.unpack(e + "I", data[at + 8:at + 12])[0]
            out.append(data[at + 16:at + 16 + caplen])
            at += 16 + caplen
        return out
    at, e = 0, "<"
    while at + 12 <= len(data):
        btype = struct.unpack(e + "I", data[at:at + 4])[0]
        if btype == 0x0A0D0D0A:
            e = "<" if data[at + 8:at + 12] == b"\x4d\x3c\x2b\x1a" else ">"
        blen = struct.unpack(e + "I", data[at + 4:at + 8])[0]
        if btype == 1:
            linktypes.add(struct.unpack(e + "H", data[at + 8:at + 10])[0])
        if btype == 6:
            caplen = struct.unpack(e + "I", data[at + 20:at + 24])[0]
            out.append(data[at + 28:at + 28 + caplen])
        elif btype == 3:
            origlen = struct.unpack(e + "I", data[at + 8:at + 12])[0]
            out.append(data[at + 12:at + 12 + min(origlen, blen - 16)])
        at += blen
    return out


def main():
    if sys.argv[1] == "--ethernet":
        kinds = set()
        frames(sys.argv[2], kinds)
        sys.exit(0 if kinds == {1} else 1)
    tool, cap, counts_path, tx = sys.argv[1:5]
    got = json.loads(open(counts_path).read().strip().splitlines()[-1])
    stats = json.loads(subprocess.run([tool, "stats", "--format", "json", cap], check=True,
                                      capture_output=True).stdout)
    lines = subprocess.run([tool, "dissect", "--format", "jsonl", cap], check=True,
                           capture_output=True).stdout.decode().splitlines()
    dissect = [json.loads(l) for l in lines if l.strip()]
    # JSON contract v1 (docs/json.md): a frame that is not RoCE and has problems, stopped
    # early, or could not be decoded at all.
    malformed = [d.get("roce") is None and (bool(d.get("problems")) or d.get("stop") is not None
                                            or d.get("undecoded") is not None) for d in dissect]
    bad_icrc = [d.get("roce") is not None and d["roce"]["icrc"]["status"] == "bad" for d in dissect]
    want = {
        "frames": stats["frames"],
        "rocev2": stats["rocev2_frames"],
        "rocev1": stats["rocev1_frames"],
        "icrc_ok": stats["icrc"]["ok"],
        "icrc_bad": stats["icrc"]["bad"],
        "icrc_unverifiable": stats["icrc"]["unverifiable"],
        "icrc_not_checked": stats["icrc"]["not_checked"],
        "malformed": sum(malformed),
    }
    errors = [f"{k}: roce_fwd {got.get(k)}, roce-inspect {v}" for k, v in want.items()
              if got.get(k) != v]
    inp = frames(cap)
    if len(inp) != len(dissect):
        errors.append(f"{len(inp)} frames read, roce-inspect dissected {len(dissect)}")
    # net_pcap writes at most RTE_ETH_PCAP_SNAPLEN (16128) bytes of a frame to tx_pcap.
    keep = [f[:SNAPLEN] for f, m, b in zip(inp, malformed, bad_icrc) if not m and not b]
    out = frames(tx)
    if out != keep:
        errors.append(f"tx_pcap: {len(out)} frames, roce-inspect calls {len(keep)} valid"
                      + ("" if len(out) != len(keep) else " (bytes differ)"))
    name = cap.rsplit("/", 1)[-1]
    if errors:
        print(f"FAIL {name}: " + "; ".join(errors))
        sys.exit(1)
    print(f"ok {name}: {got['frames']} frames, rocev2 {got['rocev2']}, icrc ok/bad/unverifiable "
          f"{got['icrc_ok']}/{got['icrc_bad']}/{got['icrc_unverifiable']}, malformed "
          f"{got['malformed']}, forwarded {len(out)}, chained {got['chained']}")


main()
