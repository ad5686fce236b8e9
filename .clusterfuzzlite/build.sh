#!/bin/bash -eu
# OSS-Fuzz / ClusterFuzzLite build: the fuzz targets with the engine and
# sanitizer flags the infrastructure passes ($CC, $CXX, $CXXFLAGS,
# $LIB_FUZZING_ENGINE), installed into $OUT with each target's seed corpus
# and dictionary beside it, and, since OSS-Fuzz's run-time image holds only
# $OUT, everything the differential target needs at run time:
#
#   ptxdiff-worker             the process the backend runs in
#   cuda/bin/ptxas             the ptxas backend's assembler, and its
#   cuda/lib64/libnvJitLink.so in-process one (fuzzers/fuzz_config.h,
#                              kBundledPtxas): found beside the target, so
#                              the ptxas backend is its default there
#   lib/                       the shared libraries the binaries load that
#                              the run-time image lacks (Abseil's), found
#                              through their RUNPATH $ORIGIN/lib
#   differential_fuzzer.conf   crash mode: the infrastructure sets no
#   program_fuzzer.conf        PTXDIFF_* variable (both targets read the
#                              file beside them, fuzzers/fuzz_config.h)
#
# Settings for .clusterfuzzlite/emulate.sh (the infrastructure sets none):
#   PTXDIFF_OSS_BUILD_DIR  the build directory (default build-oss in the
#                          source)
#   PTXDIFF_OSS_REUSE=1    build in PTXDIFF_OSS_BUILD_DIR as it is already
#                          configured (the fuzz preset's, whose objects are
#                          then reused), not configured with $CXXFLAGS
#   PTXDIFF_PTXAS          the ptxas to bundle (default: the one the
#                          Dockerfile installs under /opt/nvidia-wheels,
#                          else /usr/local/cuda's)
cd "$SRC/ptxdiff"
build=${PTXDIFF_OSS_BUILD_DIR:-build-oss}

if [[ ${PTXDIFF_OSS_REUSE:-0} != 1 ]]; then
  # OSS-Fuzz's CXXFLAGS ask for libc++; the Abseil of the image's packages
  # is built against libstdc++, so its ABI is the one to link with.
  cxxflags=${CXXFLAGS//-stdlib=libc++/}
  cmake -S . -B "$build" -G Ninja \
    -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" \
    -DCMAKE_CXX_FLAGS="$cxxflags" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DPTXDIFF_BUILD_FUZZERS=ON -DPTXDIFF_FUZZING_ENGINE="$LIB_FUZZING_ENGINE" \
    -DPTXDIFF_BUILD_TESTS=OFF -DPTXDIFF_BUILD_BENCHMARKS=OFF -DPTXDIFF_SANITIZE=OFF
fi
cmake --build "$build" -j "$(nproc)" --target differential_fuzzer \
  oracle_consistency_fuzzer protocol_fuzzer text_input_fuzzer program_fuzzer ptxdiff-worker

targets=(differential_fuzzer oracle_consistency_fuzzer protocol_fuzzer text_input_fuzzer program_fuzzer)
for target in "${targets[@]}"; do
  cp "$build/fuzzers/$target" "$OUT/"
done
cp "$build/worker/ptxdiff-worker" "$OUT/"

# The differential target: its seeds and dictionary, and its settings.
rm -f "$OUT/differential_fuzzer_seed_corpus.zip"
(cd corpus/differential && zip -q "$OUT/differential_fuzzer_seed_corpus.zip" ./*.bin)
cp corpus/differential.dict "$OUT/differential_fuzzer.dict"
printf '[libfuzzer]\ndict = differential_fuzzer.dict\n' >"$OUT/differential_fuzzer.options"
cat >"$OUT/differential_fuzzer.conf" <<'CONF'
# Written by .clusterfuzzlite/build.sh (fuzzers/fuzz_config.h): each finding
# aborts, through frames that name its cause (fuzzers/cause_frames.h). A
# worker reply may take 10 s, twice for a hang: under libFuzzer's -timeout
# (25 s on ClusterFuzz), so that a hang is filed as ptxdiff's, with its cause.
PTXDIFF_MODE=crash
PTXDIFF_TIMEOUT=10
PTXDIFF_TRIAGE_DIR=/tmp/ptxdiff-triage
CONF

# The program target: crash mode too (fuzzers/program_target.h); its
# findings abort through frames named by their cause key
# (fuzzers/program_crash_cause.h), the tuple target's where one instruction
# explains them. A check of a batch of programs compiles both input forms.
cat >"$OUT/program_fuzzer.conf" <<'CONF'
# Written by .clusterfuzzlite/build.sh (fuzzers/program_target.h).
PTXDIFF_MODE=crash
PTXDIFF_TIMEOUT=10
PTXDIFF_TRIAGE_DIR=/tmp/ptxdiff-program-triage
CONF

# The ptxas backend's run time: ptxas and libnvJitLink of one CUDA release,
# in the layout it looks for (bin/ptxas, ../lib64/libnvJitLink.so). NVIDIA's
# wheels put them in nvidia/cu13/bin/ and nvidia/cu13/lib/, a toolkit in
# bin/ and lib64/.
ptxas=${PTXDIFF_PTXAS:-}
if [[ -z $ptxas && -d /opt/nvidia-wheels ]]; then
  ptxas=$(find /opt/nvidia-wheels -name ptxas -type f | head -1)
fi
[[ -n $ptxas ]] || ptxas=/usr/local/cuda/bin/ptxas
nvjitlink=""
if [[ -x $ptxas ]]; then
  toolkit=$(dirname "$(dirname "$(readlink -f "$ptxas")")")
  nvjitlink=$(find -H "$toolkit/lib64/" "$toolkit/lib/" -maxdepth 1 \
    -name 'libnvJitLink.so*' -type f 2>/dev/null | head -1)
fi
if [[ -n $nvjitlink ]]; then
  mkdir -p "$OUT/cuda/bin" "$OUT/cuda/lib64"
  cp "$ptxas" "$OUT/cuda/bin/ptxas"
  chmod +x "$OUT/cuda/bin/ptxas"
  cp "$nvjitlink" "$OUT/cuda/lib64/libnvJitLink.so"
  echo "build.sh: bundled $("$ptxas" --version | grep release) ($ptxas, $nvjitlink)"
else
  echo "build.sh: no ptxas and libnvJitLink found: the differential target runs the oracle backend"
fi

# The shared libraries the run-time image lacks: all but the C and C++
# runtimes'.
mkdir -p "$OUT/lib"
for binary in "${targets[@]}" ptxdiff-worker; do
  ldd "$OUT/$binary" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }'
done | sort -u | while read -r library; do
  case $(basename "$library") in
    libc.so* | libm.so* | libpthread.so* | libdl.so* | librt.so* | libgcc_s.so* | \
      libstdc++.so* | ld-linux*) ;;
    *) [[ $library == "$OUT"/* ]] || cp "$library" "$OUT/lib/" ;;
  esac
done
