#!/usr/bin/env bash
# Checks what .clusterfuzzlite/build.sh put in OUT (the folder given), against the sources:
#  - one libFuzzer executable per [[bin]] of fuzz/Cargo.toml (read here, not through
#    cargo-fuzz), each running one input (-runs=0), and no other executable;
#  - per target a seed corpus zip holding every file of corpus/<target>/ (none is empty);
#  - per target that fuzz/ci.sh's dict_of gives a dictionary, <target>.dict equal to it, and
#    no .dict for the others;
#  - with FUZZ_CI_TARGETS set (fuzz/ci.sh passes its all_targets list): the same targets as
#    fuzz/Cargo.toml, so CI fuzzes every target ClusterFuzzLite does.
# Usage: bash .clusterfuzzlite/check.sh OUT. build.sh runs it last.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=${1:?usage: check.sh OUT}
errors=0
fail() {
    echo "check: $*" >&2
    errors=$((errors + 1))
}

# The name of every [[bin]] table of fuzz/Cargo.toml.
targets=$(awk '
    /^\[\[bin\]\][[:space:]]*$/ { in_bin = 1; next }
    /^\[/ { in_bin = 0 }
    in_bin && /^name[[:space:]]*=/ {
        sub(/^name[[:space:]]*=[[:space:]]*"/, ""); sub(/".*/, ""); print
    }' fuzz/Cargo.toml | sort)
if [ -z "$targets" ]; then
    echo "check: no [[bin]] in fuzz/Cargo.toml" >&2
    exit 1
fi

dict_of_src=$(sed -n '/^dict_of() {$/,/^}$/p' fuzz/ci.sh)
[ -n "$dict_of_src" ] || fail "no dict_of function in fuzz/ci.sh"
eval "$dict_of_src"

for t in $targets; do
    bin="$out/$t"
    if [ ! -f "$bin" ] || [ ! -x "$bin" ]; then
        fail "$t: no executable $bin (fuzz/Cargo.toml lists it)"
    elif ! log=$(ASAN_OPTIONS=detect_odr_violation=0 LLVM_PROFILE_FILE=/dev/null "$bin" -runs=0 2>&1); then
        fail "$t: $bin -runs=0 failed:"$'\n'"$(printf '%s\n' "$log" | tail -n 20)"
    elif ! grep -q 'INFO: Seed: ' <<<"$log"; then
        fail "$t: $bin is not a libFuzzer binary"
    fi

    zip="$out/${t}_seed_corpus.zip"
    seeds=$({ find "corpus/$t" -type f 2>/dev/null || true; } | wc -l | tr -d ' ')
    if [ "$seeds" -eq 0 ]; then
        fail "$t: corpus/$t holds no seed"
    elif [ ! -f "$zip" ]; then
        fail "$t: no seed corpus $zip"
    elif ! in_zip=$(python3 -c '
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    bad = z.testzip()
    if bad is not None:
        sys.exit("bad member " + bad)
    print(sum(1 for i in z.infolist() if not i.is_dir()))' "$zip"); then
        fail "$t: $zip is not a valid zip"
    elif [ "$in_zip" -ne "$seeds" ]; then
        fail "$t: $zip holds $in_zip seeds, corpus/$t $seeds"
    fi

    dict=$(dict_of "$t")
    if [ -n "$dict" ]; then
        if [ ! -f "$out/$t.dict" ]; then
            fail "$t: no dictionary $out/$t.dict (fuzz/ci.sh's dict_of gives $dict)"
        elif ! cmp -s "$dict" "$out/$t.dict"; then
            fail "$t: $out/$t.dict differs from $dict"
        fi
    elif [ -e "$out/$t.dict" ]; then
        fail "$t: $out/$t.dict, but fuzz/ci.sh's dict_of gives none"
    fi
done

# Every executable in OUT is a target (ClusterFuzzLite runs each as a fuzzer).
for f in "$out"/*; do
    [ -f "$f" ] && [ -x "$f" ] || continue
    name=$(basename "$f")
    grep -qxF "$name" <<<"$targets" || fail "$name: executable in $out, not in fuzz/Cargo.toml"
done

if [ -n "${FUZZ_CI_TARGETS:-}" ]; then
    listed=$(printf '%s\n' $FUZZ_CI_TARGETS | sort)
    missing=$(comm -23 <(printf '%s\n' "$targets") <(printf '%s\n' "$listed") | tr '\n' ' ')
    extra=$(comm -13 <(printf '%s\n' "$targets") <(printf '%s\n' "$listed") | tr '\n' ' ')
    [ -z "$missing" ] || fail "fuzz/ci.sh all_targets lacks: $missing(fuzz/Cargo.toml has them)"
    [ -z "$extra" ] || fail "fuzz/ci.sh all_targets has: $extra(not in fuzz/Cargo.toml)"
fi

n=$(printf '%s\n' "$targets" | wc -l | tr -d ' ')
if [ "$errors" -gt 0 ]; then
    echo "check: $errors problem(s) in $out" >&2
    exit 1
fi
echo "check: $out holds the $n targets of fuzz/Cargo.toml, their seed corpora and dictionaries"
