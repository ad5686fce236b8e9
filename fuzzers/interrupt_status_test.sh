#!/usr/bin/env bash
# The differential fuzzer stopped by an interrupt ends with libFuzzer's
# interrupt status (72, or -interrupt_exit_code), after stopping its
# campaign in order. A -fork parent (`ptxdiff fuzz --jobs N`) stops all its
# jobs on that status; after a job that exited 0 it started the next one,
# and the eighteenth fault run saw a Ctrl-C of `fuzz --jobs 2` fuzz on for
# a minute. Each run here is such a job: the fuzzer alone, interrupted
# once it fuzzes.
#
#   interrupt_status_test.sh DIFFERENTIAL_FUZZER FAULTY_WORKER WORKDIR
set -euo pipefail
fuzzer=$1 faulty=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
cat >"$work/wrong_vadd.sh" <<SCRIPT
#!/bin/sh
exec "$faulty" --fault=wrong-on=vadd.u32.u32.u32 "\$@"
SCRIPT
chmod +x "$work/wrong_vadd.sh"

# Runs the fuzzer with `flags`, interrupts it 2 s after it starts to fuzz,
# and prints its exit status.
interrupted_status() {
  mkdir -p "$work/corpus"
  PTXDIFF_BACKEND="exec:$work/wrong_vadd.sh" PTXDIFF_TRIAGE_DIR="$work/triage" \
    setsid "$fuzzer" -max_total_time=300 "$@" "$work/corpus" >"$work/log" 2>&1 &
  local pid=$! status=0
  for _ in $(seq 600); do
    grep -q 'ptxdiff: fuzzing against' "$work/log" && break
    sleep 0.1
  done
  sleep 2
  kill -INT -- "-$pid"
  wait "$pid" || status=$?
  grep -q 'ptxdiff: interrupted: stopping the campaign in order' "$work/log" || {
    tail -5 "$work/log" >&2
    echo "interrupt status test: the stop in order was not said" >&2
    exit 1
  }
  echo "$status"
}

status=$(interrupted_status)
[ "$status" = 72 ] || {
  echo "interrupt status test: exit status $status, not libFuzzer's 72" >&2
  exit 1
}
status=$(interrupted_status -interrupt_exit_code=9)
[ "$status" = 9 ] || {
  echo "interrupt status test: exit status $status, not the -interrupt_exit_code 9" >&2
  exit 1
}
# A -fork parent ignores SIGINT while its jobs run (system()); `ptxdiff
# fuzz` also sends it SIGTERM, on which it stops its own campaign in order
# and ends with the interrupt status (the nineteenth fault run: during its
# seed merge the parent ran on for a minute).
mkdir -p "$work/corpus"
PTXDIFF_BACKEND="exec:$work/wrong_vadd.sh" PTXDIFF_TRIAGE_DIR="$work/triage" \
  setsid "$fuzzer" -max_total_time=300 -fork=2 "$work/corpus" >"$work/fork.log" 2>&1 &
pid=$!
for _ in $(seq 600); do
  grep -q 'ptxdiff: fuzzing against' "$work/fork.log" && break
  sleep 0.1
done
sleep 2
kill -TERM "$pid"
status=0
wait "$pid" || status=$?
kill -KILL -- "-$pid" 2>/dev/null || true  # its jobs, ended with it
grep -q 'ptxdiff: interrupted: stopping the campaign in order' "$work/fork.log" || {
  tail -5 "$work/fork.log" >&2
  echo "interrupt status test: the -fork parent did not stop in order" >&2
  exit 1
}
[ "$status" = 72 ] || {
  echo "interrupt status test: the -fork parent's exit status $status, not 72" >&2
  exit 1
}
echo "interrupt status test: stopped in order, with libFuzzer's interrupt status"
