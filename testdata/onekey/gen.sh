#!/bin/bash
# gen.sh: rebuild the onekey test program (PIE and non-PIE), crash it in each
# mode (the kernel dumps a core), and write the golden group of every crash (issue 10.2):
#   cores/BUILD-MODE.core.gz          the kernel's core of the crash (core_pattern `core`)
#   texts/BUILD-MODE.gdb-bt.txt       gdb `bt` of that core
#   texts/BUILD-MODE.gdb-all.txt      gdb `thread apply all bt` of that core
#   texts/BUILD-MODE.glog04.txt       StarRocks glog 0.4 dump with names
#   texts/BUILD-MODE.glog07.txt       StarRocks glog 0.7 dump with names
#   texts/BUILD-MODE.boost.txt        Doris boost::stacktrace dump with names
#   texts/BUILD-MODE.glog07-offsets.txt  glog 0.7 of a stripped binary: (module+0x…) (read with the binary)
#   texts/BUILD-MODE.boost-addrs.txt  Doris dump without symbols: bare addresses (read with the binary and its bias)
#   meta/BUILD-MODE.json              the frames gdb recorded (frames.py) and the load biases
#   bin/onekey_BUILD.gz               the binaries (with DWARF)
# The dumps are written by render.py from the real PCs gdb recorded, in the
# formats of shared/docs/be-crash-formats.md (the program installs no
# handler; the handler's own frames are added as the backends print them).
# Everything is read from the core by gdb, so all sources show one crash.
# Needs g++, gdb (with Python), python3. The libc and ld.so the cores were
# made with are ../core/lib (same machine); check with `readelf -n`.
# Rerun only when changing onekey.cpp, render.py or frames.py; then
# `go test ./signature -run OneKey` and `go test ./signature -run TestGolden -update`.
set -euo pipefail
cd "$(dirname "$0")"
HERE=$PWD
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
mkdir -p bin cores texts meta
for l in /lib/x86_64-linux-gnu/libc.so.6 /lib64/ld-linux-x86-64.so.2; do
    want=$(readelf -n "$(readlink -f "$l")" | awk '/Build ID/{print $3}')
    have=$(zcat "../core/lib/$(basename "$l").gz" | readelf -n /dev/stdin 2>/dev/null | awk '/Build ID/{print $3}' || true)
    [ "$want" = "$have" ] || echo "warning: $l differs from ../core/lib (build-id $want vs $have): regenerate ../core too" >&2
done
CXX="g++ -O2 -g -pthread -static-libstdc++ -static-libgcc -Wl,--build-id -fdebug-prefix-map=$HERE=/root/starrocks/be/src/onekey"
$CXX -fPIE -pie -o "$W/onekey_pie" "$HERE/onekey.cpp"
$CXX -fno-pie -no-pie -o "$W/onekey_nopie" "$HERE/onekey.cpp"

for build in pie nopie; do
    bin="$W/onekey_$build"
    installed="/opt/starrocks/be/lib/onekey_$build"
    for mode in null abort lambda; do
        name="$build-$mode"
        rm -rf "$W/run" && mkdir -p "$W/run"
        (cd "$W/run" && ulimit -c unlimited && exec timeout 30 "$bin" "$mode") >/dev/null 2>&1 || true
        mv "$W/run/core" "$W/core" 2>/dev/null || { echo "no core for $name (core_pattern must be 'core')" >&2; exit 1; }
        ONEKEY_PIE=$([ $build = pie ] && echo 1 || echo 0) ONEKEY_JSON="$W/$name.json" \
            gdb -batch -nx -iex 'set auto-load off' -iex 'set debuginfod enabled off' -ex "source $HERE/frames.py" "$bin" "$W/core" >/dev/null 2>&1
        gzip -9 -n -c "$W/core" > "cores/$name.core.gz"
        for what in bt "thread apply all bt"; do
            out=texts/$name.gdb-bt.txt
            [ "$what" = bt ] || out=texts/$name.gdb-all.txt
            gdb -batch -nx -iex 'set auto-load off' -iex 'set debuginfod enabled off' -ex 'set width 0' -ex "$what" "$bin" "$W/core" 2>/dev/null |
                sed -e "s#$W/##g" > "$out"
        done
        python3 render.py "$W/$name.json" "texts/$name" "$installed"
        sed -e "s#$W/#/opt/starrocks/be/lib/#g" "$W/$name.json" > "meta/$name.json"
    done
    gzip -9 -n -c "$bin" > "bin/onekey_$build.gz"
done
ls -la bin cores texts | head -60
