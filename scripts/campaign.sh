#!/usr/bin/env bash
# The main job: a short fuzz campaign. Until the worker backends land, the
# only implementation under test is the oracle's own literal transcription of
# the spec, so this fuzzes the fast oracle against it.
#
#   scripts/campaign.sh [SECONDS]     (default 60)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}

scripts/setup.sh
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j "$(nproc)" >/dev/null

corpus=out/corpus/oracle_consistency
artifacts=out/findings/
mkdir -p "$corpus" "$artifacts"
log=out/campaign.log
echo "campaign: fast oracle vs literal spec transcription, ${seconds}s, corpus $corpus"

status=0
build/fuzz/fuzzers/oracle_consistency_fuzzer -max_total_time="$seconds" \
  -print_final_stats=1 -artifact_prefix="$artifacts" "$corpus" >"$log" 2>&1 ||
  status=$?

runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
echo "campaign: ${runs} inputs (${rate}/s, up to 64 tuples each), corpus of $(ls "$corpus" | wc -l) inputs"
if ((status != 0)); then
  echo "campaign: FOUND a disagreement; details in $log, reproducer in $artifacts"
  grep -A2 'oracle disagreement' "$log" || tail -20 "$log"
  exit 1
fi
echo "campaign: no disagreement found; log in $log"
