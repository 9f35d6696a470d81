#!/usr/bin/env bash
# The scaffold's CI workflow, its steps timed locally: the test step as it runs with an empty
# cache (cold) and with rust-cache's target folder restored (cached), and, as the peer, the
# `cargo install` of the kit that the workflow ran before every test until it ran the test
# target directly. Crates are downloaded first (as rust-cache also restores them).
#   bash benches/workflow.sh
set -euo pipefail
kit="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cargo build --quiet --manifest-path "$kit/Cargo.toml" --bin cargo-holon-test
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export CARGO_TARGET_DIR="$work/target" NO_COLOR=1
cd "$work"
"$kit/target/debug/cargo-holon-test" new bench-agent --kit-path "$kit" 2>/dev/null
cd bench-agent
cargo fetch --quiet
ms() { local start; start=$(date +%s%N); "$@" >/dev/null 2>&1; echo $(( ($(date +%s%N) - start) / 1000000 )); }
export HOLON_JUNIT="$work/holon-junit.xml" GITHUB_ACTIONS=true
cold=$(ms cargo test --test holon)
cached=$(ms cargo test --test holon)
test -s "$HOLON_JUNIT" || { echo "no JUnit report written" >&2; exit 1; }
unset HOLON_JUNIT GITHUB_ACTIONS
install=$(ms cargo install --locked --path "$kit" --root "$work/install" --target-dir "$work/install-target")
echo "test step, cold (empty cache):      $cold ms"
echo "test step, cached (target restored): $cached ms"
echo "peer: cargo install of the kit:      $install ms"
