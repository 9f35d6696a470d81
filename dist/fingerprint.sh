#!/usr/bin/env bash
# One hash of the sources the prebuilt packages are built from (the crates, the lock file, the
# packaging files, the runtime packages), by content, committed or not: .ci/dist writes it
# beside the packages, and the tests that install them refuse packages built from other sources
# rather than test a stale binary.
set -euo pipefail
cd "$(dirname "$0")/.."
paths=(Cargo.toml Cargo.lock src crates dist runtime)
hash() {
    if command -v sha256sum >/dev/null; then sha256sum; else shasum -a 256; fi | cut -d' ' -f1
}
files=$(git ls-files --cached --others --exclude-standard -- "${paths[@]}" | sort -u |
    while IFS= read -r file; do if [[ -f "$file" ]]; then printf '%s\n' "$file"; fi; done)
paste <(printf '%s\n' "$files") <(printf '%s\n' "$files" | git hash-object --stdin-paths) | hash
