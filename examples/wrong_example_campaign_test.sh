#!/usr/bin/env bash
# ctest in the fuzz build: a 20-second `ptxdiff fuzz` campaign against the
# deliberately wrong example worker (add.sat.s32 wraps) must file that
# finding, and only that, in its triage directory, well formed, and
# `ptxdiff repro` must replay it as a disagreement.
#
#   wrong_example_campaign_test.sh PTXDIFF WRONG_WORKER DIFFERENTIAL_FUZZER WORKDIR
set -euo pipefail
ptxdiff=$1 wrong=$2 fuzzer=$3 work=$4
rm -rf "$work" && mkdir -p "$work"

fail() { echo "wrong example campaign test: $*"; echo "--- output"; cat "$work/fuzz.txt"; exit 1; }

start=$(date +%s)
PTXDIFF_FUZZER=$fuzzer "$ptxdiff" fuzz --backend "exec:$wrong" --family add --max-time 20 \
  --out "$work/out" --dir "$work/triage" >"$work/fuzz.txt" 2>&1 ||
  fail "ptxdiff fuzz exited with $?"
grep -q '^fuzz: summary: ' "$work/fuzz.txt" || fail "no summary"
entries=$(ls "$work/triage" | grep -E '^value-mismatch~' || true)
[ -n "$entries" ] || fail "no finding filed"
# One root cause (the sum wraps where it should saturate), one entry: signed
# by the plainest variant and its trigger class, whichever bound was hit.
[ "$(echo "$entries" | wc -l)" = 1 ] || fail "one cause filed as several entries: $entries"
for entry in $entries; do
  echo "$entry" | grep -Eq '^value-mismatch~wrong-example~saturated~add\.sat\.s32$' ||
    fail "an entry that is not an add.sat.s32 finding of wrong-example: $entry"
  for f in case.txt repro.ptx meta.txt; do
    [ -s "$work/triage/$entry/$f" ] || fail "$entry lacks $f"
  done
  count=$(sed -n 's/^count: //p' "$work/triage/$entry/meta.txt")
  [ "${count:-0}" -ge 1 ] || fail "$entry: meta.txt count is '${count}'"
  grep -q '^variant: add.sat.s32$' "$work/triage/$entry/case.txt" || fail "$entry: case.txt is not add.sat.s32"
done
entry=$(echo "$entries" | head -1)
status=0
"$ptxdiff" repro "$work/triage/$entry/case.txt" --backend "exec:$wrong" >"$work/repro.txt" 2>&1 || status=$?
[ "$status" = 1 ] || fail "repro of the entry exited $status, not 1 (disagree)"
echo "filed $(echo "$entries" | wc -l) add.sat.s32 entries in $(( $(date +%s) - start )) s; $(grep '^fuzz:   checked' "$work/fuzz.txt")"
echo "1 passed, 0 failed"
