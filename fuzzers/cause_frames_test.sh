#!/usr/bin/env bash
# ClusterFuzz's grouping, checked on real stacks (ctest in the fuzz build):
# the differential target in crash mode, against the faulty test worker (a
# backend wrong or crashing on chosen variants: deterministic, no CUDA
# toolkit), is run on single inputs; the crash state, the three frames below
# abort in the symbolized stack libFuzzer prints (cause_frames.h), must be
# the same for two inputs of one cause (two vadd variants, other operands)
# and differ between causes (another family; another kind of finding).
#
#   cause_frames_test.sh DIFFERENTIAL_FUZZER FAULTY_WORKER WORKDIR
set -euo pipefail
fuzzer=$1 faulty=$2 work=$3
rm -rf "$work" && mkdir -p "$work"

fail() {
  echo "cause frames test: $*" >&2
  for f in "$work"/*.txt; do echo "--- $f"; cat "$f"; done >&2
  exit 1
}

source "$(dirname "$0")/crash_state.sh"
use_llvm_symbolizer || fail "no llvm-symbolizer on PATH: stacks cannot be symbolized"

# A worker wrong on (or crashing on) what its --fault says.
worker() {  # NAME FAULT
  printf '#!/bin/sh\nexec "%s" --fault=%s "$@"\n' "$faulty" "$2" >"$work/$1.sh"
  chmod +x "$work/$1.sh"
}
worker wrong_vadd wrong-on=vadd.
worker wrong_add wrong-on=add.
worker crash_vadd crash-on=vadd.u32.u32.u32

source "$(dirname "$0")/fuzz_input.sh"
write_fuzz_input "$work/vadd_a" vadd.u32.u32.u32 1 2 0
write_fuzz_input "$work/vadd_b" vadd.s32.s32.s32 0x7fffffff 5 9
write_fuzz_input "$work/add" add.s32 1 2

# Runs the target on one input against a worker; prints its crash state.
crash_state() {  # NAME WORKER SEED
  local out=$work/$1.txt
  if PTXDIFF_MODE=crash PTXDIFF_BACKEND="exec:$work/$2.sh" \
    PTXDIFF_TRIAGE_DIR="$work/triage" "$fuzzer" "$work/$3" >"$out" 2>&1; then
    fail "$1: the target did not crash"
  fi
  grep -q '^==[0-9]*== *ERROR: libFuzzer: deadly signal' "$out" || fail "$1: no deadly signal"
  crash_state_of "$out"
}

value_vadd=$(crash_state value_vadd_a wrong_vadd vadd_a)
value_vadd_again=$(crash_state value_vadd_b wrong_vadd vadd_b)
value_add=$(crash_state value_add wrong_add add)
crash_vadd=$(crash_state crash_vadd crash_vadd vadd_a)

expected="ptxdiff::cause::ValueMismatch ptxdiff::cause::InFamilyVadd ptxdiff::cause::AbortWithCauseInFrames"
[[ $value_vadd == "$expected" ]] ||
  fail "the frames below abort are '$value_vadd', not '$expected'"
grep -q '^ptxdiff: value-mismatch .* vadd.u32.u32.u32 .*; cause: value-mismatch in vadd$' \
  "$work/value_vadd_a.txt" || fail "the first line does not name the cause"
grep -q '; cause: crash in vadd$' "$work/crash_vadd.txt" || fail "the crash's first line does not name its cause"
[[ $value_vadd == "$value_vadd_again" ]] ||
  fail "one cause, two crash states: '$value_vadd' and '$value_vadd_again'"
[[ $value_add != "$value_vadd" ]] || fail "add and vadd share the crash state '$value_add'"
[[ $crash_vadd != "$value_vadd" ]] ||
  fail "a crash and a value mismatch share the crash state '$crash_vadd'"
echo "cause frames test: passed ($value_vadd | $value_add | $crash_vadd)"
