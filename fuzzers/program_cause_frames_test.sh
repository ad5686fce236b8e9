#!/usr/bin/env bash
# ClusterFuzz's grouping of the program target's findings, checked on real
# stacks (ctest in the fuzz build): the program target in crash mode,
# against the tests' PTX interpreter as the tool with bugs planted
# (xor.b32 and add.u32 give their low bit flipped, sub.u32 crashes it:
# deterministic, no CUDA toolkit), is run on single programs. The crash
# state, the three frames below abort (cause_frames.h,
# program_crash_cause.h), must be the same for two programs of one cause
# (xor alone; and.b32 then xor.b32, whose culprit is the xor), that of the
# xor tuple, and differ between causes (add; a crash of two steps, which
# has no key in crash mode).
#
#   program_cause_frames_test.sh PROGRAM_FUZZER INTERPRETER WORKER WORKDIR
set -euo pipefail
fuzzer=$1 interpreter=$(realpath "$2") worker=$3 work=$4
rm -rf "$work" && mkdir -p "$work"

fail() {
  echo "program cause frames test: $*" >&2
  for f in "$work"/*.txt; do echo "--- $f"; cat "$f"; done >&2
  exit 1
}

source "$(dirname "$0")/crash_state.sh"
use_llvm_symbolizer || fail "no llvm-symbolizer on PATH: stacks cannot be symbolized"
source "$(dirname "$0")/fuzz_input.sh"

{ program_inputs 5 9; program_steps 1
  program_instruction xor.b32 r1 r0; program_outputs 0; } >"$work/xor_alone"
{ program_inputs 0x35 0x1c; program_steps 2
  program_instruction and.b32 r1 r0; program_instruction xor.b32 r0 r2
  program_outputs 0; } >"$work/xor_after_and"
{ program_inputs 5 9; program_steps 1
  program_instruction add.u32 r1 r0; program_outputs 0; } >"$work/add_alone"
{ program_inputs 0x35 0x1c; program_steps 2
  program_instruction and.b32 r1 r0; program_instruction sub.u32 r0 r2
  program_outputs 0; } >"$work/sub_after_and"

tool="ptx-cmd:$interpreter --flip-on=xor.b32 --flip-on=add.u32 --crash-on=sub.u32 {ptx} {in} {out}"

# Runs the target on one program; prints its crash state.
crash_state() {  # SEED
  local out=$work/$1.txt
  if PTXDIFF_MODE=crash PTXDIFF_BACKEND="$tool" PTXDIFF_WORKER="$worker" \
    PTXDIFF_TRIAGE_DIR="$work/triage" "$fuzzer" "$work/$1" >"$out" 2>&1; then
    fail "$1: the target did not crash"
  fi
  grep -q '^==[0-9]*== *ERROR: libFuzzer: deadly signal' "$out" || fail "$1: no deadly signal"
  crash_state_of "$out"
}

xor_alone=$(crash_state xor_alone)
xor_after_and=$(crash_state xor_after_and)
add_alone=$(crash_state add_alone)
sub_crash=$(crash_state sub_after_and)

expected="ptxdiff::cause::ValueMismatch ptxdiff::cause::InFamilyXor ptxdiff::cause::AbortWithCauseInFrames"
[[ $xor_alone == "$expected" ]] ||
  fail "the frames below abort are '$xor_alone', not the xor tuple's '$expected'"
[[ $xor_after_and == "$xor_alone" ]] ||
  fail "one cause, two crash states: '$xor_alone' and '$xor_after_and'"
grep -q '^ptxdiff: value-mismatch ptx-cmd .* program (and.b32, xor.b32); key: xor.b32; cause: value-mismatch in xor$' \
  "$work/xor_after_and.txt" || fail "the first line does not name the culprit's cause"
[[ $add_alone != "$xor_alone" ]] || fail "add and xor share the crash state '$add_alone'"
expected="ptxdiff::cause::Crash ptxdiff::cause::InUnkeyedProgram ptxdiff::cause::AbortUnkeyedInFrames"
[[ $sub_crash == "$expected" ]] ||
  fail "a crash of two steps aborts through '$sub_crash', not '$expected'"
grep -q '; cause: crash in an unkeyed program$' "$work/sub_after_and.txt" ||
  fail "the unkeyed crash's first line does not say so"
echo "program cause frames test: passed ($xor_alone | $add_alone | $sub_crash)"
