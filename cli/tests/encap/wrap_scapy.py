"""Wraps every frame of a capture as a switch mirror or an overlay would, with scapy (an
independent packet builder): `wrap_scapy.py KIND OUTDIR IN...` writes OUTDIR/NAME.pcap for each
input NAME.pcap(ng) whose frames are all Ethernet (it names the others on stdout, "skip PATH",
and leaves them out). KIND is one of erspan1,
erspan2, erspan3, erspan3-platform, gre, vxlan, geneve, erspan2-vxlan (a mirror of an
overlay), erspan2-cut (the mirror truncates each frame to 96 bytes and sets the T bit).
Timestamps are kept. cli/tests/encap.rs runs it."""

import decimal
import os
import struct
import sys

from scapy.all import GRE, IP, UDP, Ether, IPv6, Raw, rdpcap
from scapy.contrib.erspan import ERSPAN_II, ERSPAN_III, ERSPAN_PlatformSpecific
from scapy.contrib.geneve import GENEVE, GeneveOptions
from scapy.layers.vxlan import VXLAN

OUTER_MAC = dict(src="02:00:00:00:00:21", dst="02:00:00:00:00:22")


def outer_ip(v6=False):
    if v6:
        return IPv6(src="2001:db8::21", dst="2001:db8::22")
    return IP(src="192.0.2.21", dst="192.0.2.22", ttl=60)


def wrap(kind, i, inner):
    e = Ether(**OUTER_MAC)
    if kind == "erspan1":
        # Type I: GRE without a sequence number, the frame right after it.
        return e / outer_ip() / GRE(proto=0x88BE) / inner
    if kind == "erspan2":
        return (e / outer_ip() / GRE(proto=0x88BE, seqnum_present=1, sequence_number=i)
                / ERSPAN_II(session_id=7, vlan=12, cos=3, index=i) / inner)
    if kind == "erspan2-cut":
        cut = Raw(bytes(inner)[:96])
        return (e / outer_ip() / GRE(proto=0x88BE, seqnum_present=1, sequence_number=i)
                / ERSPAN_II(session_id=8, t=1, index=i) / cut)
    if kind == "erspan3":
        return (e / outer_ip(v6=True) / GRE(proto=0x22EB, seqnum_present=1, sequence_number=i)
                / ERSPAN_III(session_id=1001, timestamp=1000 + i, sgt_other=5, hw=3, d=1, gra=3)
                / inner)
    if kind == "erspan3-platform":
        return (e / outer_ip() / GRE(proto=0x22EB, key_present=1, key=0x42, seqnum_present=1,
                                     sequence_number=i)
                / ERSPAN_III(session_id=1002, timestamp=i, o=1)
                / ERSPAN_PlatformSpecific(platf_id=3, info1=0x1234, info2=0x56789a)
                / inner)
    if kind == "gre":
        return e / outer_ip() / GRE(proto=0x6558, key_present=1, key=9) / inner
    if kind == "vxlan":
        return e / outer_ip() / UDP(sport=50000 + i % 100, dport=4789) / VXLAN(vni=5000) / inner
    if kind == "geneve":
        opt = GeneveOptions(classid=0x0102, type=0x80, data=b"\xaa\xbb\xcc\xdd")
        return (e / outer_ip(v6=True) / UDP(sport=50000, dport=6081)
                / GENEVE(vni=77, proto=0x6558, options=[opt]) / inner)
    if kind == "erspan2-vxlan":
        overlay = (Ether(src="02:00:00:00:00:31", dst="02:00:00:00:00:32")
                   / IP(src="172.16.0.1", dst="172.16.0.2") / UDP(sport=50001, dport=4789)
                   / VXLAN(vni=6000) / inner)
        return (e / outer_ip() / GRE(proto=0x88BE, seqnum_present=1, sequence_number=i)
                / ERSPAN_II(session_id=9, index=i) / overlay)
    raise SystemExit(f"unknown kind {kind}")


def write_pcap(path, packets):
    """A nanosecond pcap of Ethernet frames, timestamps exact (scapy's own writer rounds a
    timestamp just below a whole second up by a second)."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 262144, 1))
        for p in packets:
            t = decimal.Decimal(p.time)
            sec = int(t)
            nsec = int((t - sec) * 1_000_000_000)
            data = bytes(p)
            f.write(struct.pack("<IIII", sec, nsec, len(data), len(data)))
            f.write(data)


def main():
    kind, outdir = sys.argv[1:3]
    for src in sys.argv[3:]:
        frames = rdpcap(src)
        if not all(isinstance(p, Ether) for p in frames):
            print(f"skip {src}")
            continue
        out = []
        for i, p in enumerate(frames):
            w = wrap(kind, i, Raw(bytes(p)))
            w.time = p.time
            out.append(w)
        name = os.path.splitext(os.path.basename(src))[0] + ".pcap"
        write_pcap(os.path.join(outdir, name), out)


if __name__ == "__main__":
    main()
