#!/usr/bin/env bash
# The program fuzzer run by hand on a worker that cannot write its own
# files (a full TMPDIR, here a file size limit of 0) stops at once, says
# why and exits 3 (fuzz_config.h: kFuzzerExitEnvironment). The sixteenth
# fault run's pattern: it ran to -max_total_time, "0 programs checked",
# exit 0, the reason nowhere.
#
#   program_fuzzer_no_room_test.sh PROGRAM_FUZZER INTERPRETER WORKER WORKDIR
set -euo pipefail
fuzzer=$1 interpreter=$(realpath "$2") worker=$(realpath "$3") work=$4
rm -rf "$work" && mkdir -p "$work/corpus"
printf '#!/bin/sh\ntrap "" XFSZ\nulimit -f 0\nexec %s "$@"\n' "$worker" \
  >"$work/no_room_worker.sh"
chmod +x "$work/no_room_worker.sh"

status=0
PTXDIFF_BACKEND="ptx-cmd:$interpreter {ptx} {in} {out}" \
PTXDIFF_TRIAGE_DIR="$work/triage" PTXDIFF_WORKER="$work/no_room_worker.sh" \
  timeout 120 "$fuzzer" -max_total_time=60 "$work/corpus" >"$work/log" 2>&1 ||
  status=$?
if [[ $status -ne 3 ]]; then
  tail -5 "$work/log" >&2
  echo "program fuzzer no-room test: exit $status, not 3" >&2
  exit 1
fi
grep -q "the harness's own temporary files failed" "$work/log" || {
  tail -5 "$work/log" >&2
  echo "program fuzzer no-room test: the reason was not said" >&2
  exit 1
}
echo "program fuzzer no-room test: exit 3, the reason said"
