# Sourced by the crash-mode stack tests (cause_frames_test.sh,
# program_cause_frames_test.sh): ClusterFuzz's crash state of a libFuzzer
# report, the three frames below abort in its symbolized stack
# (fuzzers/cause_frames.h).
#
#   use_llvm_symbolizer            sets ASAN_SYMBOLIZER_PATH, or fails
#   crash_state_of REPORT_FILE     prints "frame frame frame"

use_llvm_symbolizer() {
  local symbolizer
  symbolizer=$(command -v llvm-symbolizer || command -v llvm-symbolizer-14 || true)
  [[ -n $symbolizer || ! -x /usr/lib/llvm-14/bin/llvm-symbolizer ]] ||
    symbolizer=/usr/lib/llvm-14/bin/llvm-symbolizer
  [[ -n $symbolizer ]] || return 1
  export ASAN_SYMBOLIZER_PATH=$symbolizer
}

crash_state_of() {
  # "    #7 0x55d0 in ptxdiff::cause::InFamilyVadd(void (*)()) /src/x.cc:9:3":
  # the function, without its parameters, for the frames below abort.
  sed -n 's/^ *#[0-9][0-9]* 0x[0-9a-f]* in \([^ ]*\).*/\1/p' "$1" |
    sed 's/(anonymous namespace)/{anonymous}/g; s/(.*//' |
    awk 'below { print; if (++n == 3) exit } /^(__GI_)?abort$/ { below = 1 }' |
    paste -sd' '
}
