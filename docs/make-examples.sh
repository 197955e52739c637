#!/usr/bin/env bash
# Regenerates the committed report examples and the README's screenshot:
#   docs/examples/req-gbn-new-psn.html      a conformance-suite capture with a go-back-N fault
#   docs/examples/real-softroce-capture.html a real capture (soft-RoCE SEND / WRITE / READ),
#                                            from ROCE_INSPECT_REAL_CAPTURES (skipped if unset)
#   docs/report-screenshot.png              the first, rendered by headless Chromium
# Needs chromium (Debian: apt-get install chromium). Run from anywhere in the checkout.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
cargo build -q -p roce-inspect
bin="$root/target/debug/roce-inspect"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# `report` exits 1 when the capture has error findings: expected here.
report() { "$bin" report "$@" || [ $? -eq 1 ]; }

# File names relative to the capture's folder, so the page names no local path.
(cd pcaps/conformance && report req-gbn-new-psn.pcap -o "$root/docs/examples/req-gbn-new-psn.html")
real_dir=${ROCE_INSPECT_REAL_CAPTURES:-}
[ "$real_dir" = none ] && real_dir=
if [ -n "$real_dir" ]; then
    (cd "$real_dir" && report sanderw71_SoftRoce_RoCE_capture_10_packets.pcapng \
        -o "$root/docs/examples/real-softroce-capture.html")
else
    echo "note: ROCE_INSPECT_REAL_CAPTURES unset: docs/examples/real-softroce-capture.html not regenerated"
fi

browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome)
"$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
    --user-data-dir="$tmp/profile" --window-size=1000,1500 \
    --screenshot="$tmp/shot.png" "file://$root/docs/examples/req-gbn-new-psn.html" 2>/dev/null
cp "$tmp/shot.png" docs/report-screenshot.png
echo "wrote docs/examples/*.html and docs/report-screenshot.png"
