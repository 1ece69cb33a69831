#!/usr/bin/env bash
# Builds ifunc.gz, the test binary of TestLookupIFUNC (symbolize/binary_test.go):
# a GNU indirect function (STT_GNU_IFUNC `fast_sum`) and its resolver
# (STT_FUNC `resolve_sum`, local) share one address and size.
# gcc 12.2 (Debian 12.2.0-14) was used.
set -euo pipefail
cd "$(dirname "$0")"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
gcc -O2 -g -Wl,--build-id=sha1 -ffile-prefix-map="$PWD"=/src/ifunc ifunc.c -o "$TMP/ifunc"
gzip -9n < "$TMP/ifunc" > ifunc.gz
