#!/bin/bash -eu
# OSS-Fuzz / ClusterFuzzLite build: the fuzz targets with the engine and
# sanitizer flags the infrastructure passes ($CC, $CXX, $CXXFLAGS,
# $LIB_FUZZING_ENGINE), installed into $OUT with each target's seed corpus
# and dictionary beside it. The differential target runs against the oracle
# backend there (no GPU, no CUDA toolkit); ptxdiff-worker ships beside it.
cd "$SRC/ptxdiff"
cmake -S . -B build-oss -G Ninja \
  -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" \
  -DCMAKE_CXX_FLAGS="$CXXFLAGS" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DPTXDIFF_BUILD_FUZZERS=ON -DPTXDIFF_FUZZING_ENGINE="$LIB_FUZZING_ENGINE" \
  -DPTXDIFF_BUILD_TESTS=OFF -DPTXDIFF_BUILD_BENCHMARKS=OFF -DPTXDIFF_SANITIZE=OFF
cmake --build build-oss -j "$(nproc)" --target differential_fuzzer \
  oracle_consistency_fuzzer protocol_fuzzer text_input_fuzzer ptxdiff-worker

for target in differential_fuzzer oracle_consistency_fuzzer protocol_fuzzer text_input_fuzzer; do
  cp "build-oss/fuzzers/$target" "$OUT/"
done
cp build-oss/worker/ptxdiff-worker "$OUT/"
# The differential target: its seeds and dictionary, and its settings.
(cd corpus/differential && zip -q "$OUT/differential_fuzzer_seed_corpus.zip" ./*.bin)
cp corpus/differential.dict "$OUT/differential_fuzzer.dict"
printf '[libfuzzer]\ndict = differential_fuzzer.dict\n' >"$OUT/differential_fuzzer.options"
