#!/usr/bin/env bash
# The main job: a short fuzz campaign against the best backend this machine
# has (cuda with a GPU, else ptxas with the CUDA toolkit, else the oracle's
# self-check), ending with a summary of what was checked, what was found, and
# where it was filed, and the conformance report (out/report.html: every run
# so far, as a page that opens from disk).
#
#   scripts/campaign.sh [SECONDS] [ptxdiff fuzz flags...]    (default 60 s)
#
# Findings go to out/triage (ptxdiff triage list), the corpus to out/corpus;
# running it again resumes from both. Ctrl-C stops it without losing anything.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true

scripts/setup.sh
# The campaign build: libFuzzer instrumentation, optimized, no sanitizers
# (the test suite runs the same code under ASan + UBSan).
# Its first build takes minutes on two cores: it says so, and shows ninja's
# progress (issue 42, item 16: it printed nothing for 2.5 minutes). The
# build's output goes to build/campaign-build.log, shown if it fails.
cmake --preset campaign >/dev/null
[[ -x build/campaign/cli/ptxdiff ]] ||
  echo "campaign.sh: building the campaign preset (the first build takes a few minutes)"
log=build/campaign-build.log
: >"$log"  # there before the progress loop reads it
cmake --build --preset campaign -j "$(nproc)" --target ptxdiff differential_fuzzer \
  ptxdiff-worker ptx_kernel_interpreter >"$log" 2>&1 &
build=$!
while kill -0 "$build" 2>/dev/null; do
  step=$(grep -oE '^\[[0-9]+/[0-9]+\]' "$log" | tail -n 1 || true)
  [[ -z $step ]] || printf '\rcampaign.sh: build %s' "$step"
  sleep 2
done
status=0
wait "$build" || status=$?
[[ -z ${step:-} ]] || echo
if ((status != 0)); then
  tail -n 30 "$log" >&2
  exit "$status"
fi
exec build/campaign/cli/ptxdiff fuzz --max-time "$seconds" --report "$@"
