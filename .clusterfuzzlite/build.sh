#!/bin/bash -eu
# The ClusterFuzzLite (OSS-Fuzz) build: every cargo-fuzz target of fuzz/Cargo.toml into $OUT,
# each with its seed corpus ($OUT/<target>_seed_corpus.zip, from corpus/<target>/) and, where
# fuzz/ci.sh's dict_of names one, its dictionary ($OUT/<target>.dict); then
# .clusterfuzzlite/check.sh checks $OUT.
#
# In the build image (.clusterfuzzlite/Dockerfile) it runs as $SRC/build.sh from the checkout
# ($SRC/roce-inspect), with $OUT set. Anywhere else it runs from the checkout as it is:
#   bash .clusterfuzzlite/build.sh              # $OUT unset: a new temporary folder, printed
#   OUT=/tmp/out bash .clusterfuzzlite/build.sh
# fuzz/ci.sh (the CI fuzz step) builds the targets this way, so this script runs on every CI
# run. Needs cargo-fuzz (`cargo install cargo-fuzz --locked`) and python3 (the zips).
set -euo pipefail

# The checkout: beside this script, or the working directory ($SRC/build.sh in the image).
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [ -f "$here/../fuzz/Cargo.toml" ]; then
    cd "$here/.."
elif [ ! -f fuzz/Cargo.toml ] && [ -f "${SRC:-/src}/roce-inspect/fuzz/Cargo.toml" ]; then
    cd "${SRC:-/src}/roce-inspect"
fi
if [ ! -f fuzz/Cargo.toml ]; then
    echo "build.sh: no fuzz/Cargo.toml here ($(pwd)): run it from the roce-inspect checkout" >&2
    exit 1
fi
if [ -z "${OUT:-}" ]; then
    OUT=$(mktemp -d)
    echo "build.sh: OUT not set, building into $OUT"
fi
mkdir -p "$OUT"
# Stable Rust takes cargo-fuzz's nightly flags with this; the builder's nightly ignores it.
export RUSTC_BOOTSTRAP=1

# Release with debug assertions: -O alone would drop them, and the targets rely on integer
# overflow panicking (the same binaries as fuzz/ci.sh's `cargo fuzz run`, which reuses them).
cargo fuzz build -O --debug-assertions

# The targets, as cargo-fuzz reads them from fuzz/Cargo.toml's [[bin]] list.
targets=$(cargo fuzz list)
if [ -z "$targets" ]; then
    echo "build.sh: cargo fuzz list names no target" >&2
    exit 1
fi

# The dictionary mapping is fuzz/ci.sh's dict_of, read from there (one place to edit).
dict_of_src=$(sed -n '/^dict_of() {$/,/^}$/p' fuzz/ci.sh)
if [ -z "$dict_of_src" ]; then
    echo "build.sh: no dict_of function in fuzz/ci.sh" >&2
    exit 1
fi
eval "$dict_of_src"

bin_dir=fuzz/target/x86_64-unknown-linux-gnu/release
shopt -s nullglob
for t in $targets; do
    cp "$bin_dir/$t" "$OUT/"
    seeds=(corpus/"$t"/*)
    if [ "${#seeds[@]}" -gt 0 ]; then
        rm -f "$OUT/${t}_seed_corpus.zip"
        # Flat: every seed at the top of the archive (zip -j); python3 is in the builder
        # image, zip may not be.
        python3 -m zipfile -c "$OUT/${t}_seed_corpus.zip" "${seeds[@]}"
    fi
    dict=$(dict_of "$t")
    if [ -n "$dict" ]; then
        cp "$dict" "$OUT/$t.dict"
    fi
done
shopt -u nullglob

bash .clusterfuzzlite/check.sh "$OUT"
