#!/usr/bin/env bash
# An A/B of two commits in one session: each is checked out in a worktree of its own under
# target/ab/ (its own target folder), built once, and `cargo bench --bench check` and
# `--bench harness` run alternately, ROUNDS times each, so both see the same machine.
#   bash .ci/setup-interop && bash benches/ab.sh BASE HEAD [ROUNDS]
# The harness benchmark needs the TypeScript SDK: each worktree links this checkout's
# tests/interop/node/node_modules. Remove the worktrees with `git worktree remove target/ab/REV`.
set -euo pipefail
if [ $# -lt 2 ]; then
    echo "usage: bash benches/ab.sh BASE HEAD [ROUNDS]" >&2
    exit 2
fi
kit="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
rounds="${3:-5}"
modules="$kit/tests/interop/node/node_modules"
if [ ! -d "$modules" ]; then
    echo "ab.sh: $modules is missing: run \`bash .ci/setup-interop\` first" >&2
    exit 1
fi
trees=()
for rev in "$1" "$2"; do
    commit=$(git -C "$kit" rev-parse --short "$rev^{commit}")
    tree="$kit/target/ab/$commit"
    if [ ! -d "$tree" ]; then
        git -C "$kit" worktree add --quiet --detach "$tree" "$commit"
    fi
    ln -sfn "$modules" "$tree/tests/interop/node/node_modules"
    echo "ab.sh: building $commit in $tree" >&2
    (cd "$tree" && cargo bench --quiet -p holon-kit --bench check --bench harness --no-run)
    trees+=("$tree")
done
for round in $(seq "$rounds"); do
    for tree in "${trees[@]}"; do
        commit=$(basename "$tree")
        for bench in check harness; do
            if ! out=$(cd "$tree" && cargo bench --quiet -p holon-kit --bench "$bench"); then
                echo "ab.sh: \`cargo bench --bench $bench\` failed in $tree" >&2
                exit 1
            fi
            printf '%s\n' "$out" | sed "s/^/$commit round $round $bench: /"
        done
        echo "$commit round $round load: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)"
    done
done
