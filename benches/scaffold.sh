#!/usr/bin/env bash
# What a new author waits for: `cargo holon-test new`, then the first `cargo holon-test` with
# nothing built (crates already downloaded), then an edit of one line and the rerun, then the
# production build. Uses this checkout as the kit (`--kit-path`) and a fresh target folder.
#   bash benches/scaffold.sh
set -euo pipefail
kit="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cargo build --quiet --manifest-path "$kit/Cargo.toml" --bin cargo-holon-test
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export PATH="$kit/target/debug:$PATH" CARGO_TARGET_DIR="$work/target" NO_COLOR=1
cd "$work"
cargo holon-test new bench-agent --kit-path "$kit" 2>/dev/null
cd bench-agent
cargo fetch --quiet
ms() { local start; start=$(date +%s%N); "$@" >/dev/null 2>&1; echo $(( ($(date +%s%N) - start) / 1000000 )); }
cold=$(ms cargo holon-test)
sed -i 's/"the text is empty"/"the text is empty or blank"/' src/lib.rs
edit=$(ms cargo holon-test)
release=$(ms cargo build --release)
echo "cold cargo holon-test: $cold ms"
echo "edit one line, rerun:  $edit ms"
echo "cargo build --release: $release ms"
if cargo tree -e normal --prefix none | grep -qE 'libtest-mimic|pretty_assertions'; then
    echo "the production build compiles test-only crates" >&2
    exit 1
fi
echo "the production build compiles no test-only crate"
