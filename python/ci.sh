#!/usr/bin/env bash
# The Python package in CI (.ci/run calls it after the Rust tests; run it alone the same way):
#  1. builds the abi3 wheel with maturin (from PyPI, pinned in python/requirements-test.txt);
#  2. installs it in a fresh venv with the pinned test requirements and runs pytest there:
#     the documents against the command line on every shipped and real capture, the
#     streaming checker, Arrow batches against export's Parquet, the fuzz corpus and
#     hypothesis through every entry point, the example, the checker in Spark local mode;
#  3. checks the type stubs against the built module (mypy's stubtest) and the package and
#     its example with mypy;
#  4. `pip install ./python` from the checkout in a second fresh venv, as a user would, and
#     runs README.md's example there.
# The command line the tests compare with is target/debug/roce-inspect (built by the
# README's test command before this; built here when missing).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
step() { printf '\n--- python: %s (%s) ---\n' "$*" "$(date +%H:%M:%S)"; }
export PIP_DISABLE_PIP_VERSION_CHECK=1

step "the wheel (maturin build --release)"
[ -x target/pyenv/bin/pip ] || python3 -m venv target/pyenv
target/pyenv/bin/pip install -q "$(grep '^maturin==' python/requirements-test.txt)"
rm -rf target/wheels
target/pyenv/bin/maturin build --release --locked -m python/Cargo.toml -o target/wheels
wheel=$(ls target/wheels/roce_inspect-*-abi3-*.whl)
echo "$wheel"

step "a fresh venv: the wheel and the pinned test requirements"
rm -rf target/pyenv-wheel
python3 -m venv target/pyenv-wheel
target/pyenv-wheel/bin/pip install -q -r python/requirements-test.txt "$wheel"

step "the command line to compare with"
cargo build --locked -p roce-inspect --all-features
export ROCE_INSPECT_BIN="$root/target/debug/roce-inspect"

step "pytest (the Spark test in local mode included)"
(cd python && "$root/target/pyenv-wheel/bin/python" -m pytest -q -rs tests)

step "type stubs: stubtest against the built module, mypy on the package and the example"
# From /tmp: the installed package is checked, not python/pysrc.
(
  cd /tmp
  "$root/target/pyenv-wheel/bin/python" -m mypy.stubtest roce_inspect._native
  "$root/target/pyenv-wheel/bin/python" -m mypy --strict --ignore-missing-imports -p roce_inspect
  "$root/target/pyenv-wheel/bin/python" -m mypy --strict --ignore-missing-imports \
    "$root/python/examples/psn_plot.py"
)

step "pip install ./python from the checkout, in another fresh venv, and README.md's example"
rm -rf target/pyenv-src
python3 -m venv target/pyenv-src
# pip builds in an isolated environment with maturin from PyPI, held to the pinned version
# (PIP_CONSTRAINT reaches the build environment's pip too); the cargo build reuses target/
# (the wheel step's artefacts).
PIP_CONSTRAINT="$root/python/requirements-test.txt" CARGO_TARGET_DIR="$root/target" \
  target/pyenv-src/bin/pip install -q ./python
# README.md's example (its ```python block under "## Python"), run from the checkout's root:
# it prints what README.md's ```text block after it shows.
awk '/^## Python/{p=1} p&&/^```python/{f=1;next} f&&/^```/{exit} f' README.md > target/readme-example.py
awk '/^## Python/{p=1} p&&/^```text/{f=1;next} f&&/^```/{exit} f' README.md > target/readme-example.want
[ -s target/readme-example.py ] && [ -s target/readme-example.want ]
target/pyenv-src/bin/python target/readme-example.py > target/readme-example.got
diff -u target/readme-example.want target/readme-example.got
# The two test venvs (pyspark in each, about 1 GB together) are rebuilt by the next run: free
# the space for the steps after this one.
rm -rf target/pyenv-wheel target/pyenv-src
echo "python: passed"
