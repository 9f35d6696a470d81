#!/usr/bin/env bash
# What an author without Rust waits for, from the packages `.ci/dist` built into target/dist:
# the stripped binary's size and the packages'; `pip install` of the wheel into a fresh virtual
# environment and `npm install` of the launcher and platform tarballs into a fresh npm project,
# both offline; then a fresh TypeScript and a fresh Python agent from `holon-test new`,
# installed (not timed: the SDK comes from the public registries), and its first `npm test` /
# `uv run holon-test` timed. RUNS times each (default 5); the median, min and max.
#   bash .ci/setup-interop && bash .ci/dist && bash benches/dist.sh [RUNS]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
runs=${1:-5}
dist="$root/target/dist"
[[ -f "$dist/SOURCE" ]] || { echo "no packages in $dist: run bash .ci/dist first" >&2; exit 1; }
wheel=$(ls "$dist"/*.whl)
launcher=$(ls "$dist"/holon-test-*.tgz)
platform=$(ls "$dist"/holon-kit-holon-test-*.tgz)
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# uv from the interop folder; npm and uv caches of the bench's own.
export PATH="$root/target/interop/python/bin:$PATH" NO_COLOR=1
export npm_config_cache="$work/npm-cache" UV_CACHE_DIR="$work/uv-cache" UV_FIND_LINKS="$dist" \
    UV_PYTHON_DOWNLOADS=never npm_config_fund=false npm_config_audit=false npm_config_yes=true

ms() { local start; start=$(date +%s%N); "$@" >"$work/last.log" 2>&1 || { cat "$work/last.log" >&2; exit 1; }; echo $(( ($(date +%s%N) - start) / 1000000 )); }
stats() { # stats NAME MS...
    local name=$1; shift
    local sorted; sorted=$(printf '%s\n' "$@" | sort -n)
    local median; median=$(printf '%s\n' "$sorted" | sed -n "$(( ($# + 1) / 2 ))p")
    printf '%-48s median %6d ms   min %6d ms   max %6d ms   (%d runs)\n' "$name" "$median" \
        "$(printf '%s\n' "$sorted" | head -1)" "$(printf '%s\n' "$sorted" | tail -1)" "$#"
}
size() { wc -c <"$1" | tr -d ' '; }

echo "binary (stripped): $(size "$root/target/dist/bin/holon-test") bytes"
echo "wheel: $(size "$wheel") bytes, npm launcher: $(size "$launcher") bytes, npm platform package: $(size "$platform") bytes"

python3 -m venv "$work/seed-venv" # the interpreter's first start, out of the timings
pip=(); npm=()
for i in $(seq "$runs"); do
    python3 -m venv "$work/venv-$i"
    pip+=("$(ms "$work/venv-$i/bin/pip" install --no-index --no-deps --disable-pip-version-check "$wheel")")
    mkdir "$work/project-$i"
    echo '{ "name": "project", "private": true }' >"$work/project-$i/package.json"
    npm+=("$(cd "$work/project-$i" && ms npm install --offline --save-dev "$launcher" "$platform")")
done
stats "pip install of the wheel (offline)" "${pip[@]}"
stats "npm install of the two tarballs (offline)" "${npm[@]}"

ts=(); py=()
for i in $(seq "$runs"); do
    (cd "$work" && "$root/target/dist/bin/holon-test" new "ts-$i" --lang typescript >/dev/null 2>&1)
    (cd "$work/ts-$i" && npm install --silent --save-dev "$launcher" "$platform" >/dev/null)
    ts+=("$(cd "$work/ts-$i" && ms npm test)")
    (cd "$work" && "$root/target/dist/bin/holon-test" new "py-$i" --lang python >/dev/null 2>&1)
    (cd "$work/py-$i" && uv sync --quiet)
    py+=("$(cd "$work/py-$i" && ms uv run holon-test)")
done
stats "TypeScript template: first npm test" "${ts[@]}"
stats "Python template: first uv run holon-test" "${py[@]}"
