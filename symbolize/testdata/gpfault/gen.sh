#!/usr/bin/env bash
# Makes the test core of TestGPFaultNoAddress (symbolize/core_test.go): a
# load through a non-canonical pointer (0xdead000000000000) is a general
# protection fault, which the kernel reports as SIGSEGV with si_code
# SI_KERNEL and si_addr 0. Run on x86-64 Linux with core_pattern "core"
# (gcc 12.2, Debian 12 glibc 2.36 were used). The process runs with an
# empty environment (env -i), so the core holds no variable of this shell.
set -euo pipefail
cd "$(dirname "$0")"
TMP=$(mktemp -d /tmp/gpfault.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
cp gp.c "$TMP/"
(cd "$TMP" && gcc -O1 -g -Wl,--build-id=sha1 -ffile-prefix-map="$TMP"=/src/gpfault gp.c -o gpbin &&
  ulimit -c unlimited && { env -i ./gpbin || true; } && test -f core)
gzip -9n < "$TMP/gpbin" > gpbin.gz
gzip -9n < "$TMP/core" > gp.core.gz
