#!/usr/bin/env bash
# bench/soak.sh [BUILD_DIR]: the connection fault suite's long variant
# (t/faults/check_faults_conns with BDS_FAULTS_LONG=1: slow-loris and idle
# connections, then a 60 s saturation soak through nginx, 32 requests in
# flight: health, authenticated reads, writes) in a built tree (default
# ./build), then its figures: requests, rate, 5xx, each bds-api worker's
# VmRSS and open descriptors before and after, the machine's load
# (bench/RESULTS.md).
set -euo pipefail
BUILD=${1:-build}
suite=t/faults/check_faults_conns
rc=0
BDS_FAULTS_LONG=1 make -C "$BUILD" -j2 check TESTS="$suite" >/dev/null 2>&1 || rc=$?
grep -E '^(conns|soak):|^# (PASS|FAIL|ERROR)' "$BUILD/$suite.log" || true
grep -E '^[0-9]+%: Checks' "$BUILD/$suite.log" || true
exit "$rc"
