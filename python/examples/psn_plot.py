"""A connection's PSNs over time, as a notebook would draw them: the packets table from
roce_inspect.read_batches (pyarrow), the busiest connection's requests by direction,
retransmissions in red, NAKs as marks; saved as a PNG.

    python python/examples/psn_plot.py pcaps/sample.pcap psn.png
"""

from __future__ import annotations

import sys
from collections import Counter
from typing import Any, Dict, List

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pyarrow as pa  # noqa: E402

import roce_inspect as ri  # noqa: E402

COLUMNS = ["ts_ns", "ip_src", "ip_dst", "bth_dest_qp", "bth_psn", "bth_opcode_name",
           "aeth_kind", "incarnation", "retransmission"]


def main(capture: str, png: str) -> int:
    batches = list(ri.read_batches(capture, columns=COLUMNS))
    rows = pa.Table.from_batches(batches).to_pylist() if batches else []
    roce = [r for r in rows if r["bth_psn"] is not None and r["ip_src"] is not None]
    if not roce:
        print(f"{capture}: no RoCE packets", file=sys.stderr)
        return 1
    # The busiest flow (sender, receiver, DestQP) and the packets of its peer direction.
    flow = Counter((r["ip_src"], r["ip_dst"], r["bth_dest_qp"]) for r in roce).most_common(1)[0][0]
    src, dst, qp = flow
    t0 = min(r["ts_ns"] for r in roce)
    mine = [r for r in roce if (r["ip_src"], r["ip_dst"], r["bth_dest_qp"]) == flow]
    back = [r for r in roce if (r["ip_src"], r["ip_dst"]) == (dst, src)]

    fig, ax = plt.subplots(figsize=(9, 4.5))

    def ms(rs: List[Dict[str, Any]]) -> List[float]:
        return [(r["ts_ns"] - t0) / 1e6 for r in rs]

    new = [r for r in mine if not r["retransmission"]]
    retx = [r for r in mine if r["retransmission"]]
    ax.scatter(ms(new), [r["bth_psn"] for r in new], s=8, label=f"{src} -> {dst} QP 0x{qp:06x}")
    ax.scatter(ms(retx), [r["bth_psn"] for r in retx], s=14, c="red", label="retransmitted")
    naks = [r for r in back if r["aeth_kind"] not in (None, "ack")]
    ax.scatter(ms(naks), [r["bth_psn"] for r in naks], marker="x", c="black", label="NAK / RNR NAK")
    ax.set_xlabel("ms since the first RoCE packet")
    ax.set_ylabel("PSN")
    ax.set_title(f"{capture}: {len(mine)} packets of the busiest flow")
    ax.legend(loc="best", fontsize=8)
    fig.tight_layout()
    fig.savefig(png, dpi=120)
    print(f"{png}: {len(mine)} requests ({len(retx)} retransmitted), {len(naks)} NAKs")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2]))
