#!/usr/bin/env bash
# Builds rel.o, the relocatable object of TestOpenRelocatableObjectWarns
# (symbolize/binary_test.go): a compiler's output, never linked.
# gcc 12.2 (Debian 12.2.0-14) was used.
set -euo pipefail
cd "$(dirname "$0")"
gcc -O1 -g -ffile-prefix-map="$PWD"=/src/relobj -c rel.c -o rel.o
