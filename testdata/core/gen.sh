#!/bin/bash
# gen.sh: rebuild the test binaries, make the cores and record gdb's
# `thread apply all bt` as ground truth. Needs g++, gdb, objcopy, and a
# core_pattern of `core` (kernel cores land in the working directory).
# Output (committed, gzip-compressed): bin/, lib/, cores/, golden/.
# Rerun only when changing backend_sim.cpp; then `go test ./symbolize -run Core -update`.
set -euo pipefail
cd "$(dirname "$0")"
HERE=$PWD
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
mkdir -p bin lib cores golden
CXX="g++ -O2 -g -pthread -static-libstdc++ -static-libgcc -Wl,--build-id"
$CXX -fno-omit-frame-pointer -o "$W/sim_fp" backend_sim.cpp
$CXX -fomit-frame-pointer -o "$W/sim_nofp" backend_sim.cpp
# stripped copy + separate debug file (next to it via debuglink, and in a build-id dir)
objcopy --only-keep-debug "$W/sim_fp" "$W/sim_strip.debug"
objcopy --strip-all --add-gnu-debuglink="$W/sim_strip.debug" "$W/sim_fp" "$W/sim_strip"
bid=$(readelf -n "$W/sim_fp" | awk '/Build ID/{print $3}')
mkdir -p "$W/debugdir/.build-id/${bid:0:2}"
cp "$W/sim_strip.debug" "$W/debugdir/.build-id/${bid:0:2}/${bid:2}.debug"

core() { # name binary mode [gdb]
    local name=$1 bin=$2 mode=$3 how=${4:-kernel}
    rm -rf "$W/run" && mkdir -p "$W/run" && cd "$W/run"
    if [ "$how" = gdb ]; then
        # gdb stops at the first SIGSEGV (or the SIGABRT of the abort handler)
        local ex=(-ex run)
        [ "$mode" = abort ] && ex+=(-ex continue)
        gdb -batch -nx "${ex[@]}" -ex "generate-core-file $W/run/core" --args "$W/$bin" "$mode" >/dev/null 2>&1 || true
    else
        (ulimit -c unlimited; ulimit -s 1024; exec timeout 30 "$W/$bin" "$mode") >/dev/null 2>&1 || true
    fi
    cd "$HERE"
    test -s "$W/run/core" || { echo "no core for $name" >&2; exit 1; }
    gzip -9 -n -c "$W/run/core" > "cores/$name.core.gz"
    gdb -batch -nx -iex "set debug-file-directory $W/debugdir" -iex 'set auto-load off' \
        -ex 'set print frame-info location-and-address' -ex 'set width 0' -ex 'thread apply all bt' \
        "$W/$bin" "$W/run/core" 2>/dev/null | sed -e "s#$W/##g" > "golden/$name.gdb.txt"
}
core kern_fp sim_fp none
core kernr_fp sim_fp raise
core kernk_fp sim_fp kill
core kerna_fp sim_fp abort
core kernc_fp sim_fp check
core kern_nofp sim_nofp none
core kerna_nofp sim_nofp abort
core gdb_fp sim_fp none gdb
core gdba_nofp sim_nofp abort gdb

for f in sim_fp sim_nofp sim_strip sim_strip.debug; do gzip -9 -n -c "$W/$f" > "bin/$f.gz"; done
# the shared libraries the cores were made with (unwinding through libc needs its .eh_frame)
for l in /lib/x86_64-linux-gnu/libc.so.6 /lib64/ld-linux-x86-64.so.2; do
    r=$(readlink -f "$l"); gzip -9 -n -c "$r" > "lib/$(basename "$l").gz"
done
ls -la bin lib cores
