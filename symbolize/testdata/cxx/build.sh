#!/usr/bin/env bash
# Builds the test binaries of the symbolizer tests from backend.cpp and
# stores them gzip-compressed in bin/ (committed, so tests run anywhere).
# Requires g++ (12.x was used), objcopy, strip, gzip. Regenerate the
# llvm-symbolizer golden files afterwards with:
#   go test ./symbolize/ -run TestLLVMAgreement -update
# Variants:
#   o2-fp-dw5      -O2 -g -gdwarf-5 -fno-omit-frame-pointer, PIE
#   o2-nofp-dw4    -O2 -g -gdwarf-4 -fomit-frame-pointer, non-PIE (ET_EXEC at 0x400000, like starrocks_be)
#   o2-gz          -O2 -g -gdwarf-5 -gz (zlib SHF_COMPRESSED), PIE
#   o2-zstd        o2-fp-dw5 with objcopy --compress-debug-sections=zstd (skipped if unsupported)
#   tiny           a 3-function C program (-O2 -g), seed of FuzzOpenBinary
#   split          o2-fp-dw5 stripped of debug info + .gnu_debuglink; split.debug = only-keep-debug
set -euo pipefail
cd "$(dirname "$0")"
OUT=bin
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
mkdir -p "$OUT"
CXX=${CXX:-g++}
COMMON="-std=c++17 -O2 -g -Wl,--build-id=sha1 -ffile-prefix-map=$PWD=/src/crashsig-cxx"
$CXX $COMMON -gdwarf-5 -fno-omit-frame-pointer -fPIE -pie backend.cpp -o "$TMP/o2-fp-dw5"
$CXX $COMMON -gdwarf-4 -fomit-frame-pointer -fno-pie -no-pie backend.cpp -o "$TMP/o2-nofp-dw4"
$CXX $COMMON -gdwarf-5 -gz -fno-omit-frame-pointer -fPIE -pie backend.cpp -o "$TMP/o2-gz"
if objcopy --compress-debug-sections=zstd "$TMP/o2-fp-dw5" "$TMP/o2-zstd" 2>/dev/null; then :; else rm -f "$TMP/o2-zstd"; fi
# tiny: a minimal C program, the seed of FuzzOpenBinary.
printf 'static int helper(int x) { return x * 3 + 1; }\nint work(int x) { return helper(x) + helper(x + 1); }\nint main(int c, char **v) { (void)v; return work(c); }\n' > "$TMP/tiny.c"
gcc -O2 -g -gdwarf-5 -Wl,--build-id=sha1 -ffile-prefix-map="$TMP"=/src/tiny "$TMP/tiny.c" -o "$TMP/tiny"
rm "$TMP/tiny.c"
cp "$TMP/o2-fp-dw5" "$TMP/split"
objcopy --only-keep-debug "$TMP/split" "$TMP/split.debug"
strip --strip-debug "$TMP/split"
(cd "$TMP" && objcopy --add-gnu-debuglink=split.debug split)
rm -f "$OUT"/*.gz
for f in "$TMP"/*; do
  gzip -9 -n -c "$f" > "$OUT/$(basename "$f").gz"
done
ls -l "$OUT"
