#!/usr/bin/env bash
# The whole test suite: installs what it needs, builds the tests under
# ASan + UBSan, runs each fuzz target for a bounded time, then every unit test.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
jobs=$(nproc)

cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j "$jobs"
ctest --test-dir build/fuzz --output-on-failure

cmake --preset asan >/dev/null
cmake --build --preset asan -j "$jobs"
# The preset gives each test 20 min (the longest takes ~8 under ASan): a
# test that hangs fails by name, not by CI's limit.
ctest --preset asan -j "$jobs"
