#!/usr/bin/env bash
# A new Rust agent's first `cargo holon-test`, against the least an MCP server in Rust costs to
# build: `cargo build` of benches/cold/bare-server (one tool on the rmcp, tokio, serde and hyper
# the runtime uses, same versions and features). Both cold: a fresh target folder each run, the
# crates already downloaded; they alternate run by run so all meet the same load. The kit is
# this checkout (`--kit-path`). A third build, `cargo build` of the new agent (its server alone:
# what an author ships, the runtime and nothing of the tests), says how much of the difference
# the runtime costs before any test is built.
#   bash benches/cold.sh [RUNS]          (default 3)
# With HOLON_COLD_TIMINGS=DIR, the agent's last cold build also writes cargo's --timings page to
# DIR (which crates its test build compiles, and for how long).
set -euo pipefail
runs="${1:-3}"
kit="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cargo build --quiet --manifest-path "$kit/Cargo.toml" --bin cargo-holon-test
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export PATH="$kit/target/debug:$PATH" NO_COLOR=1 CARGO_INCREMENTAL=0
unset RUSTFLAGS CARGO_TARGET_DIR
cp -R "$kit/benches/cold/bare-server" "$work/bare-server"
mv "$work/bare-server/Cargo.toml.in" "$work/bare-server/Cargo.toml"
(cd "$work" && cargo holon-test new cold-agent --kit-path "$kit" >/dev/null 2>&1)
(cd "$work/bare-server" && cargo fetch --quiet)
(cd "$work/cold-agent" && cargo fetch --quiet)
ms() { local start; start=$(date +%s%N); "$@" >/dev/null 2>&1; echo $(( ($(date +%s%N) - start) / 1000000 )); }
bare=() agent=() server=()
for run in $(seq "$runs"); do
    rm -rf "$work/target-bare" "$work/target-agent" "$work/target-server"
    bare+=("$(cd "$work/bare-server" && ms env CARGO_TARGET_DIR="$work/target-bare" cargo build)")
    agent+=("$(cd "$work/cold-agent" && ms env CARGO_TARGET_DIR="$work/target-agent" cargo holon-test)")
    server+=("$(cd "$work/cold-agent" && ms env CARGO_TARGET_DIR="$work/target-server" cargo build)")
    echo "run $run: bare rmcp server ${bare[-1]} ms, new agent ${agent[-1]} ms, its server alone ${server[-1]} ms" >&2
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
b=$(median "${bare[@]}") a=$(median "${agent[@]}") s=$(median "${server[@]}")
echo "bare rmcp server, cargo build:      median $b ms (${bare[*]})"
echo "new agent, first cargo holon-test:  median $a ms (${agent[*]})"
echo "new agent's server, cargo build:    median $s ms (${server[*]})"
awk -v a="$a" -v b="$b" 'BEGIN { printf "ratio, new agent / bare server: %.2fx (goal <= 1.3x)\n", a / b }'
awk -v s="$s" -v b="$b" 'BEGIN { printf "ratio, the new agent\047s server alone / bare server: %.2fx\n", s / b }'
if [[ -n "${HOLON_COLD_TIMINGS:-}" ]]; then
    rm -rf "$work/target-agent"
    (cd "$work/cold-agent" && CARGO_TARGET_DIR="$work/target-agent" cargo test --no-run --timings >/dev/null 2>&1)
    mkdir -p "$HOLON_COLD_TIMINGS"
    cp "$work"/target-agent/cargo-timings/cargo-timing.html "$HOLON_COLD_TIMINGS/"
    echo "timings: $HOLON_COLD_TIMINGS/cargo-timing.html"
fi
