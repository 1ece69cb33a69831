#!/bin/bash
# bench.sh: side-by-side timing of `crashsig core` and
# `gdb -batch -ex 'thread apply all bt'` on the same cores (see symbolize/CORES.md).
#   1. a core of backend_sim with 2,000 extra parked threads (2,008 threads, kernel core);
#   2. a gdb core of the large synthetic binary from bench/symbench (optional:
#      BIG=/path/to/dbserver; it crashes by itself at depth 40).
# Needs g++ (or the committed bin/sim_fp.gz), gdb, /usr/bin/time, a core_pattern of `core`.
# Usage: testdata/core/bench.sh [ROUNDS]   (best of ROUNDS, default 3)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
ROUNDS=${1:-3}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
(cd "$ROOT" && go build -o "$W/crashsig" ./examples/crashsig)
gunzip -c "$HERE/bin/sim_fp.gz" > "$W/sim_fp" && chmod +x "$W/sim_fp"

best() { # label cmd...: best wall/cpu/rss of ROUNDS runs
    local label=$1; shift
    local bw=999999 bc=0 br=0
    for _ in $(seq "$ROUNDS"); do
        /usr/bin/time -f "%e %U %S %M" -o "$W/t" "$@" > "$W/out" 2>/dev/null || true
        read -r w u s r < "$W/t"
        if awk "BEGIN{exit !($w < $bw)}"; then bw=$w; bc=$(awk "BEGIN{print $u+$s}"); br=$r; fi
    done
    printf "| %-40s | %6.2f s | %6.2f s | %5d MB |\n" "$label" "$bw" "$bc" $((br / 1024))
}

(cd "$W" && ulimit -c unlimited && (timeout 60 ./sim_fp none 2000 >/dev/null 2>&1 || true))
test -s "$W/core" || { echo "no core written (core_pattern must be 'core')" >&2; exit 1; }
mv "$W/core" "$W/many.core"
echo "| command | wall | cpu | max RSS |"
echo "|---|---|---|---|"
best "crashsig core, 2,008 threads" "$W/crashsig" core "$W/many.core" --binary "$W/sim_fp"
best "gdb thread apply all bt, 2,008 threads" gdb -batch -nx -iex 'set auto-load off' -ex 'thread apply all bt' "$W/sim_fp" "$W/many.core"

if [ -n "${BIG:-}" ] && [ -x "$BIG" ]; then
    objcopy --strip-all "$BIG" "$W/big_stripped"
    gdb -batch -nx -ex run -ex "generate-core-file $W/big.core" --args "$W/big_stripped" 40 >/dev/null 2>&1 || true
    test -s "$W/big.core" || { echo "no core of $BIG" >&2; exit 1; }
    best "crashsig core, $(basename "$BIG") ($(du -m "$BIG" | cut -f1) MB)" "$W/crashsig" core "$W/big.core" --binary "$BIG"
    best "gdb thread apply all bt, $(basename "$BIG")" gdb -batch -nx -iex 'set auto-load off' -ex 'thread apply all bt' "$BIG" "$W/big.core"
fi
