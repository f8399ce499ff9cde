#!/usr/bin/env bash
# bench/meter_cost.sh [BUILD_DIR [CALLS]]: build bench/meter_cost.c against
# the build's libbds.a and run it (ns per meter_count, bench/RESULTS.md).
set -euo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
B=${1:-$TOP/build}
CALLS=${2:-20000000}
mkdir -p "$TOP/bench/out"
# shellcheck disable=SC2046
gcc -std=c11 -O2 -D_GNU_SOURCE -I"$TOP/lib" -I"$B" -I"$B/lib" \
  $(pkg-config --cflags libpq json-c) -o "$TOP/bench/out/meter_cost" "$TOP/bench/meter_cost.c" \
  "$B/lib/libbds.a" $(pkg-config --libs libpq libsodium json-c libcurl libidn2 libpsl) \
  -lfcgi -lssl -lcrypto -lmagic -lpthread
"$TOP/bench/out/meter_cost" "$CALLS"
