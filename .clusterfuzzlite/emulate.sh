#!/usr/bin/env bash
# OSS-Fuzz / ClusterFuzzLite, emulated without Docker: runs build.sh with the
# environment the base-builder image gives it, then runs the differential
# target from $OUT as ClusterFuzz does (a corpus directory, -runs,
# -max_total_time, -artifact_prefix; no PTXDIFF_* variable, no CUDA toolkit
# on PATH), and checks that a planted ptxas bug class becomes a crash
# artifact whose reproduction (`TARGET artifact`) prints the same cause. The
# class planted: ptxas 13.0 folds fns.b32 with offset 0x80000000 to 0
# (docs/spec-notes.md), an input of it in the corpus beside the seeds.
#
#   emulate.sh [--reuse BUILD_DIR] WORKDIR
#
# Without --reuse (opt-in: minutes of compiling), build.sh configures and
# builds from scratch with OSS-Fuzz's flags (-fsanitize=address,
# fuzzer-no-link; LIB_FUZZING_ENGINE=-fsanitize=fuzzer) in WORKDIR/build.
# With --reuse (the suite's test), it builds in BUILD_DIR as configured, the
# fuzz preset's directory: its objects (ASan + UBSan) are reused, so only
# the $OUT assembly and the runs are new. Exits 77 (ctest's skip) where no
# ptxas and libnvJitLink are installed to bundle.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
reuse=""
if [[ ${1:-} == --reuse ]]; then
  reuse=$(cd "$2" && pwd)
  shift 2
fi
[[ $# -eq 1 ]] || { echo "usage: emulate.sh [--reuse BUILD_DIR] WORKDIR" >&2; exit 2; }
work=$(mkdir -p "$1" && cd "$1" && pwd)
rm -rf "${work:?}"/{src,out,work,corpus,artifacts,*.txt}
mkdir -p "$work"/{src,out,work,corpus,artifacts}
ln -s "$repo" "$work/src/ptxdiff"

fail() {
  echo "emulate.sh: $*" >&2
  for f in "$work"/*.txt; do echo "--- $f" >&2; tail -40 "$f" >&2; done
  exit 1
}
if [[ ! -x /usr/local/cuda/bin/ptxas && -z ${PTXDIFF_PTXAS:-} ]]; then
  echo "emulate.sh: no ptxas to bundle (/usr/local/cuda, PTXDIFF_PTXAS): skipped"
  exit 77
fi

# The base-builder's environment (OSS-Fuzz's infra/base-images, for
# SANITIZER=address, FUZZING_ENGINE=libfuzzer), and nothing else of ours.
flags="-O1 -fno-omit-frame-pointer -gline-tables-only \
-DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION -fsanitize=address \
-fsanitize-address-use-after-scope -fsanitize=fuzzer-no-link"
build_env=(
  PATH="$PATH" HOME="$HOME" SRC="$work/src" OUT="$work/out" WORK="$work/work"
  CC=clang CXX=clang++ CFLAGS="$flags" CXXFLAGS="$flags -stdlib=libc++"
  LIB_FUZZING_ENGINE=-fsanitize=fuzzer SANITIZER=address
  FUZZING_ENGINE=libfuzzer ARCHITECTURE=x86_64
  PTXDIFF_OSS_BUILD_DIR="${reuse:-$work/build}"
)
[[ -n $reuse ]] && build_env+=(PTXDIFF_OSS_REUSE=1)
[[ -n ${PTXDIFF_PTXAS:-} ]] && build_env+=(PTXDIFF_PTXAS="$PTXDIFF_PTXAS")
# A launcher (ccache) only if the caller asks for one.
for v in CMAKE_C_COMPILER_LAUNCHER CMAKE_CXX_COMPILER_LAUNCHER; do
  [[ -n ${!v:-} ]] && build_env+=("$v=${!v}")
done
start=$(date +%s)
env -i "${build_env[@]}" bash "$repo/.clusterfuzzlite/build.sh" >"$work/build.txt" 2>&1 ||
  fail "build.sh failed"
echo "emulate.sh: build.sh took $(($(date +%s) - start)) s ($([[ -n $reuse ]] && echo "reusing $reuse" || echo "from scratch"))"

out=$work/out
for f in differential_fuzzer program_fuzzer ptxdiff-worker differential_fuzzer.conf \
  program_fuzzer.conf differential_fuzzer_seed_corpus.zip cuda/bin/ptxas \
  cuda/lib64/libnvJitLink.so; do
  [[ -e $out/$f ]] || fail "\$OUT lacks $f"
done
# Every library the binaries load comes from $OUT but the C and C++
# runtimes' (the run-time image has those).
for binary in differential_fuzzer program_fuzzer ptxdiff-worker; do
  ldd "$out/$binary" | awk '$2 == "=>" { print $1, $3 }' | while read -r name path; do
    case $name in
      libc.so* | libm.so* | libpthread.so* | libdl.so* | librt.so* | libgcc_s.so* | libstdc++.so*) ;;
      *) [[ $path == "$out"/* ]] || fail "$binary loads $name from $path, not from \$OUT" ;;
    esac
  done
done

# As ClusterFuzz runs it: nothing of ours in the environment, no CUDA
# toolkit on PATH, a corpus directory (holding the planted input alone: a
# seed of another class could crash first), crash files under
# -artifact_prefix.
run_env=(PATH=/usr/bin:/bin HOME=/tmp)
unzip -tq "$out/differential_fuzzer_seed_corpus.zip" >/dev/null || fail "a bad seed corpus zip"
source "$repo/fuzzers/fuzz_input.sh"
write_fuzz_input "$work/corpus/planted-fns" fns.b32 0 0 0x80000000
if env -i "${run_env[@]}" "$out/differential_fuzzer" -runs=1000 -max_total_time=120 \
  -timeout=25 -rss_limit_mb=2560 -artifact_prefix="$work/artifacts/" \
  -dict="$out/differential_fuzzer.dict" "$work/corpus" >"$work/run.txt" 2>&1; then
  fail "the run found nothing"
fi
grep -q "^ptxdiff: fuzzing against ptxas .*assembled in-process by $out/cuda/lib64/" "$work/run.txt" ||
  fail "the target did not run the ptxas bundled in \$OUT"
cause=$(grep -m1 '^ptxdiff: .*; cause: ' "$work/run.txt") || fail "no cause line"
[[ $cause == *" fns.b32 "*"; cause: value-mismatch in fns" ]] ||
  fail "the crash is not the planted class: $cause"
artifacts=("$work"/artifacts/crash-*)
[[ -f ${artifacts[0]} ]] || fail "no crash artifact"

# The reproduction, as ClusterFuzz's: the target on the artifact alone.
if env -i "${run_env[@]}" "$out/differential_fuzzer" -runs=100 "${artifacts[0]}" \
  >"$work/repro.txt" 2>&1; then
  fail "the artifact did not reproduce"
fi
again=$(grep -m1 '^ptxdiff: .*; cause: ' "$work/repro.txt") || fail "no cause line in the reproduction"
[[ $again == "$cause" ]] || fail "the reproduction says '$again', the run '$cause'"

# The program target on the same bug as a program of one step: the same
# cause, and so the same crash state (README.md there).
{ program_inputs 0; program_steps 1; program_instruction fns.b32 r0 0 0x80000000
  program_outputs 0; } >"$work/planted-fns-program"
if env -i "${run_env[@]}" "$out/program_fuzzer" -runs=10 -timeout=25 \
  "$work/planted-fns-program" >"$work/program.txt" 2>&1; then
  fail "the program target found nothing"
fi
grep -q "^ptxdiff: fuzzing programs against ptxas .*$out/cuda/bin/ptxas" "$work/program.txt" ||
  fail "the program target did not run the ptxas bundled in \$OUT"
program_cause=$(grep -m1 '^ptxdiff: .*; cause: ' "$work/program.txt") ||
  fail "no cause line from the program target"
[[ ${program_cause##*; cause: } == "${cause##*; cause: }" ]] ||
  fail "the program target's cause is '$program_cause', the tuple's '$cause'"
echo "emulate.sh: passed: $cause; as a program: ${program_cause##*; cause: }"
