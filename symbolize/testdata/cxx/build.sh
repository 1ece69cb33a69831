#!/usr/bin/env bash
# Builds the test binaries of the symbolizer tests from backend.cpp and
# stores them gzip-compressed in bin/ (committed, so tests run anywhere).
# Requires g++ (12.x was used), clang++-14 (Debian clang-14; the clang
# variants are skipped without it), objcopy, strip, gzip. Regenerate the
# llvm-symbolizer golden files afterwards with:
#   go test ./symbolize/ -run TestLLVMAgreement -update
# Variants:
#   o2-fp-dw5      -O2 -g -gdwarf-5 -fno-omit-frame-pointer, PIE
#   o2-nofp-dw4    -O2 -g -gdwarf-4 -fomit-frame-pointer, non-PIE (ET_EXEC at 0x400000, like starrocks_be)
#   o2-gz          -O2 -g -gdwarf-5 -gz (zlib SHF_COMPRESSED), PIE
#   o2-zstd        o2-fp-dw5 with objcopy --compress-debug-sections=zstd (skipped if unsupported)
#   tiny           a 3-function C program (-O2 -g), seed of FuzzOpenBinary
#   tiny-clang     the same built by clang-14 (strx/addrx forms, no .debug_aranges), second fuzz seed
#   split          o2-fp-dw5 stripped of debug info + .gnu_debuglink; split.debug = only-keep-debug
#   gcc-types      g++ -O2 -g -gdwarf-5 -fdebug-types-section (DW_UT_type units in .debug_info), PIE
#   gcc-split      g++ -O2 -g -gdwarf-5 -gsplit-dwarf, PIE: skeleton units only, its .dwo is not kept
#   clang-o2-dw5   clang++-14 -O2 -g (DWARF 5: strx/addrx/rnglistx/loclistx, no .debug_aranges), PIE;
#                  a small second TU (extra.cpp, below) is linked first, so backend.cpp's unit has
#                  non-default DW_AT_str_offsets_base/addr_base/rnglists_base
#   clang-o2-dw4   clang++-14 -O2 -g -gdwarf-4, non-PIE
#   clang-split    clang++-14 -O2 -g -gsplit-dwarf, PIE; clang-split.dwo = its split unit
#   threads-gcc    threads.cpp (threads started through captureless lambdas, local classes,
#                  a lambda under an always-inlined function) g++ -O2 -g -gdwarf-5, PIE
#   threads-gcc-dw4    the same, g++ -O2 -g -gdwarf-4 -fomit-frame-pointer, non-PIE
#   threads-clang  threads.cpp, clang++-14 -O2 -g (DWARF 5), PIE
# The split variants are compiled in $TMP with relative names, so that
# DW_AT_dwo_name is "<variant>.dwo" and DW_AT_comp_dir /src/crashsig-cxx.
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
$CXX $COMMON -gdwarf-5 -fdebug-types-section -fPIE -pie backend.cpp -o "$TMP/gcc-types"
$CXX $COMMON -pthread -gdwarf-5 -fPIE -pie threads.cpp -o "$TMP/threads-gcc"
$CXX $COMMON -pthread -gdwarf-4 -fomit-frame-pointer -fno-pie -no-pie threads.cpp -o "$TMP/threads-gcc-dw4"
SRC=$PWD
MAP="-ffile-prefix-map=$SRC=/src/crashsig-cxx -ffile-prefix-map=$TMP=/src/crashsig-cxx"
# GCC 12 derives the dwo_id (and so the build-id) from a hash that
# depends on heap addresses: without ASLR (setarch -R) it is stable.
NOASLR=""
if setarch -R true 2>/dev/null; then NOASLR="setarch -R"; else echo "build.sh: setarch -R unavailable, gcc-split will not be reproducible" >&2; fi
(cd "$TMP" && $NOASLR $CXX -std=c++17 -O2 -g -gdwarf-5 -gsplit-dwarf $MAP -fPIE -c "$SRC/backend.cpp" -o gcc-split.o &&
  $CXX -pie -Wl,--build-id=sha1 gcc-split.o -o gcc-split && rm gcc-split.o gcc-split.dwo)
CLANG=${CLANG:-clang++-14}
if command -v "$CLANG" >/dev/null 2>&1; then
  printf 'template <typename T> __attribute__((noinline)) T twice(T x) { return x * 2 + 1; }\nint extra_entry(int x) { return twice(x) + int(twice<long>(x)); }\nint (*extra_ptr)(int) = extra_entry;\n' > "$TMP/extra.cpp"
  (cd "$TMP" && $CLANG -std=c++17 -O2 -g -gdwarf-5 $MAP -fPIE -c extra.cpp -o extra.o && rm extra.cpp)
  $CLANG $COMMON -gdwarf-5 -fPIE -pie "$TMP/extra.o" backend.cpp -o "$TMP/clang-o2-dw5"
  rm "$TMP/extra.o"
  $CLANG $COMMON -gdwarf-4 -fno-pie -no-pie backend.cpp -o "$TMP/clang-o2-dw4"
  $CLANG $COMMON -pthread -gdwarf-5 -fPIE -pie threads.cpp -o "$TMP/threads-clang"
  (cd "$TMP" && $CLANG -std=c++17 -O2 -g -gdwarf-5 -gsplit-dwarf $MAP -fPIE -c "$SRC/backend.cpp" -o clang-split.o &&
    $CLANG -pie -Wl,--build-id=sha1 clang-split.o -o clang-split && rm clang-split.o)
else
  echo "build.sh: $CLANG not found, clang variants skipped" >&2
fi
if objcopy --compress-debug-sections=zstd "$TMP/o2-fp-dw5" "$TMP/o2-zstd" 2>/dev/null; then :; else rm -f "$TMP/o2-zstd"; fi
# tiny: a minimal C program, the seed of FuzzOpenBinary.
printf 'static int helper(int x) { return x * 3 + 1; }\nint work(int x) { return helper(x) + helper(x + 1); }\nint main(int c, char **v) { (void)v; return work(c); }\n' > "$TMP/tiny.c"
gcc -O2 -g -gdwarf-5 -Wl,--build-id=sha1 -ffile-prefix-map="$TMP"=/src/tiny "$TMP/tiny.c" -o "$TMP/tiny"
if command -v clang-14 >/dev/null 2>&1; then
  clang-14 -O2 -g -gdwarf-5 -Wl,--build-id=sha1 -ffile-prefix-map="$TMP"=/src/tiny "$TMP/tiny.c" -o "$TMP/tiny-clang"
fi
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
