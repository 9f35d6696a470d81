#!/usr/bin/env bash
# What a record run costs, on two trees in one session: the record part of
# `cargo bench --bench upstream` (the 1,000-example recorded suite) on BASE and on this checkout,
# alternately, ROUNDS times each, so both see the same machine. BASE's tree is exported with
# `git archive` under target/ab-record/BASE (no worktree), with this checkout's benchmark and
# fake model copied in (BASE may have neither the part nor the model's pieces), and built once
# in a target folder of its own.
#   bash benches/ab-record.sh BASE [ROUNDS]
set -euo pipefail
if [ $# -lt 1 ]; then
    echo "usage: bash benches/ab-record.sh BASE [ROUNDS]" >&2
    exit 2
fi
kit="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
base=$(git -C "$kit" rev-parse --short "$1^{commit}")
rounds="${2:-5}"
tree="$kit/target/ab-record/$base"
if [ ! -d "$tree" ]; then
    mkdir -p "$tree"
    git -C "$kit" archive "$base" | tar -x -C "$tree"
fi
cp "$kit/benches/upstream.rs" "$tree/benches/upstream.rs"
cp "$kit/tests/it/util/fake_model.rs" "$tree/tests/it/util/fake_model.rs"
for t in "$tree" "$kit"; do
    echo "ab-record.sh: building the benchmark in $t" >&2
    (cd "$t" && cargo bench --quiet -p holon-kit --bench upstream --no-run)
done
for round in $(seq "$rounds"); do
    for t in "$tree" "$kit"; do
        if [ "$t" = "$kit" ]; then name=head; else name="$base"; fi
        if ! out=$(cd "$t" && cargo bench --quiet -p holon-kit --bench upstream -- record 1); then
            echo "ab-record.sh: the record benchmark failed in $t" >&2
            exit 1
        fi
        printf '%s\n' "$out" | grep '^| [a-z]' | sed "s/^/$name round $round: /"
    done
    echo "round $round load: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)"
done
