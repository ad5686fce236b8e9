#!/usr/bin/env bash
# Campaign smoke test (ctest in the fuzz build): a short `ptxdiff fuzz`
# against a backend that is wrong on every vadd must print progress lines and
# a summary, and leave a well-formed triage entry that `ptxdiff repro`
# replays as a disagreement. Then a second run resumes from the corpus.
#
#   campaign_smoke_test.sh PTXDIFF FAULTY_WORKER WORKDIR
set -euo pipefail
ptxdiff=$1 faulty=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
cat >"$work/wrong_vadd.sh" <<SCRIPT
#!/bin/sh
exec "$faulty" --fault=wrong-on=vadd. "\$@"
SCRIPT
chmod +x "$work/wrong_vadd.sh"

fail() {
  echo "campaign smoke test: $*"
  for f in "$work"/run*.txt; do echo "--- $f"; cat "$f"; done
  exit 1
}

"$ptxdiff" fuzz --backend "exec:$work/wrong_vadd.sh" --family vadd --family add \
  --max-time 15 --progress-seconds 3 --out "$work/out" --dir "$work/triage" >"$work/run1.txt" 2>&1 ||
  fail "ptxdiff fuzz exited with $?"
grep -Eq '^fuzz: +[0-9]+s  checked [0-9]+ tuples \([0-9]+/s\)  fuzz inputs [0-9]+  variants reached [0-9]+ of [0-9]+  findings [0-9]+ new, [0-9]+ repeats' "$work/run1.txt" ||
  fail "no well-formed progress line"
grep -q '^fuzz: summary: ' "$work/run1.txt" || fail "no summary"
grep -Eq '^fuzz:   calibration: [0-9]+ families timed on the backend in [0-9]+ ms' "$work/run1.txt" ||
  fail "no calibration line in the summary"
grep -q 'starting with the seed corpus' "$work/run1.txt" || fail "did not start from the seeds"
entry=$(ls "$work/triage" | grep -E '^value-mismatch~faulty~[a-z0-9+-]+~vadd\.' | sed -n 1p)
[ -n "$entry" ] || fail "no vadd entry in the triage directory"
for f in case.txt repro.ptx meta.txt input.bin; do
  [ -s "$work/triage/$entry/$f" ] || fail "entry lacks $f"
done
grep -q "^count: " "$work/triage/$entry/meta.txt" || fail "meta.txt lacks count"
[ -s "$work/triage/INDEX.md" ] || fail "no INDEX.md"
if ls "$work/triage" | grep -q '~add\.'; then fail "filed an add finding: add agrees"; fi
status=0
"$ptxdiff" repro "$work/triage/$entry/case.txt" --backend "exec:$work/wrong_vadd.sh" >"$work/repro.txt" || status=$?
[ "$status" = 1 ] || fail "repro of the entry exited $status, not 1 (disagree)"

"$ptxdiff" fuzz --backend "exec:$work/wrong_vadd.sh" --family vadd --max-time 5 \
  --out "$work/out" --dir "$work/triage" >"$work/run2.txt" 2>&1 || fail "second run failed"
grep -q 'resuming from' "$work/run2.txt" || fail "second run did not resume"
# Ctrl-C: the campaign stops, says so, and still prints its summary.
"$ptxdiff" fuzz --backend "exec:$work/wrong_vadd.sh" --family vadd --max-time 120 \
  --out "$work/out" --dir "$work/triage" >"$work/run3.txt" 2>&1 &
pid=$!
# Interrupt it once it is running (its first progress line), not after a
# guessed time; give up after 120 s.
for _ in $(seq 1200); do
  grep -q ' checked [0-9]* tuples' "$work/run3.txt" 2>/dev/null && break
  sleep 0.1
done
kill -INT "$pid"
wait "$pid" || fail "interrupted run exited $?"
grep -q 'interrupted; stopping' "$work/run3.txt" || fail "no interruption message"
grep -q '^fuzz: summary: ' "$work/run3.txt" || fail "no summary after Ctrl-C"
# A backend slow to start (each worker takes 8 s): while it starts, the
# progress lines say so, and --max-time counts from the start, start-up
# included. (libFuzzer's own clock starts after start-up: before the
# deadline, this run took 20 s; with it, 12 s.)
cat >"$work/slow_start.sh" <<SCRIPT
#!/bin/sh
sleep 8
exec "$faulty" "\$@"
SCRIPT
chmod +x "$work/slow_start.sh"
"$ptxdiff" fuzz --backend "exec:$work/slow_start.sh" --family popc --max-time 10 \
  --progress-seconds 2 --out "$work/out4" --dir "$work/triage4" >"$work/run4.txt" 2>&1 ||
  fail "slow-start run exited $?"
grep -Eq '^fuzz: +[0-9]+s  starting: ' "$work/run4.txt" || fail "no 'starting' progress line"
took=$(sed -n 's/^fuzz: summary: \([0-9]*\) s .*/\1/p' "$work/run4.txt")
# Start-up not counted would make it 8 + 10 = 18 s or more, whatever the load.
[ -n "$took" ] && [ "$took" -lt 18 ] ||
  fail "a 10-second run with 8 s of start-up took '${took}' s: start-up was not counted"
echo "1 passed, 0 failed"
