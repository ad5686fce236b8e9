#!/usr/bin/env bash
# A Ctrl-C of the program fuzzer run by hand (fuzzers/README.md) stops it
# within seconds and says so, what it found and did not file kept in the
# triage directory's .pending/. The thirteenth fault run saw it checking
# and minimizing its queue 100 s after the Ctrl-C, starved at nice 19 under
# load 5; unloaded, the old stop also took seconds, so this bounds the stop
# and does not reproduce that run. The tool is the tests' PTX interpreter
# with bugs planted, so that there is something to minimize.
#
#   program_fuzzer_interrupt_test.sh PROGRAM_FUZZER INTERPRETER WORKER WORKDIR
set -euo pipefail
fuzzer=$1 interpreter=$(realpath "$2") worker=$3 work=$4
rm -rf "$work" && mkdir -p "$work/corpus"

flips="--flip-on=bfe.s32 --flip-on=brev.b32 --flip-on=neg.s32 --flip-on=max.s32"
PTXDIFF_BACKEND="ptx-cmd:$interpreter $flips {ptx} {in} {out}" \
PTXDIFF_TRIAGE_DIR="$work/triage" PTXDIFF_WORKER="$worker" \
  setsid "$fuzzer" -max_total_time=300 "$work/corpus" >"$work/log" 2>&1 &
pid=$!
sleep 8
start=$(date +%s)
kill -INT -- "-$pid"
for _ in $(seq 1 300); do
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
if kill -0 "$pid" 2>/dev/null; then
  kill -KILL -- "-$pid"
  tail -5 "$work/log" >&2
  echo "program fuzzer interrupt test: still running 30 s after its Ctrl-C" >&2
  exit 1
fi
status=0
wait "$pid" || status=$?
# libFuzzer's interrupt status: a -fork parent stops its jobs on it.
[ "$status" = 72 ] || {
  echo "program fuzzer interrupt test: exit status $status, not 72" >&2
  exit 1
}
grep -q "ptxdiff: interrupted: stopping" "$work/log" || {
  tail -5 "$work/log" >&2
  echo "program fuzzer interrupt test: the stop was not said" >&2
  exit 1
}
echo "program fuzzer interrupt test: stopped $(( $(date +%s) - start )) s after its Ctrl-C"
