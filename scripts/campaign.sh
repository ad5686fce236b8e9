#!/usr/bin/env bash
# The main job: a short fuzz campaign against the best backend this machine
# has (cuda with a GPU, else ptxas with the CUDA toolkit, else the oracle's
# self-check), ending with a summary of what was checked, what was found, and
# where it was filed.
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
cmake --preset campaign >/dev/null
cmake --build --preset campaign -j "$(nproc)" --target ptxdiff differential_fuzzer \
  ptxdiff-worker ptx_kernel_interpreter >/dev/null
exec build/campaign/cli/ptxdiff fuzz --max-time "$seconds" "$@"
