#!/usr/bin/env bash
# Fails when a locked dependency (Cargo.lock, every platform) declares a rust-version above the
# workspace's (Cargo.toml [workspace.package] rust-version), which would make that declaration
# a lie. Raise the workspace's rust-version (and say so in CHANGELOG.md) or pin the dependency.
# Needs jq (.ci/run installs it). Std APIs newer than the declared version are clippy's
# `incompatible_msrv` lint, which the clippy step denies.
set -euo pipefail
cd "$(dirname "$0")/.."

declared=$(sed -n '/^\[workspace.package\]/,/^\[/s/^rust-version = "\(.*\)"/\1/p' Cargo.toml)
if [ -z "$declared" ]; then
    echo "msrv-check: no rust-version in [workspace.package] of Cargo.toml" >&2
    exit 1
fi

# "1.85" and "1.85.0" are the same version: compare three components.
norm() { local v=$1; while [ "$(tr -cd . <<<"$v" | wc -c)" -lt 2 ]; do v="$v.0"; done; echo "$v"; }
want=$(norm "$declared")

# Registry and git packages only (the workspace's own inherit the declared version).
deps=$(cargo metadata --format-version 1 --locked |
    jq -r '.packages[] | select(.source != null and .rust_version != null)
           | "\(.rust_version) \(.name) \(.version)"')

too_new=()
highest=0
while read -r rv name version; do
    [ -n "$rv" ] || continue
    v=$(norm "$rv")
    if [ "$(printf '%s\n%s\n' "$highest" "$v" | sort -V | tail -n1)" = "$v" ]; then
        highest=$v
    fi
    if [ "$v" != "$want" ] && [ "$(printf '%s\n%s\n' "$want" "$v" | sort -V | tail -n1)" = "$v" ]; then
        too_new+=("$name $version needs Rust $rv")
    fi
done <<<"$deps"

if [ "${#too_new[@]}" -gt 0 ]; then
    echo "msrv-check: rust-version is $declared, but locked dependencies need more:" >&2
    printf '  %s\n' "${too_new[@]}" >&2
    exit 1
fi
echo "msrv-check: rust-version $declared covers every locked dependency (highest needs $highest)"
