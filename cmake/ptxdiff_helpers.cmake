# ptxdiff_cc_library(NAME name SRCS ... HDRS ... DEPS ...)
# ptxdiff_cc_test(NAME name SRCS ... DEPS ...)
# ptxdiff_cc_binary(NAME name SRCS ... DEPS ...)
#
# The build is a declarative list of these, as in Abseil: each target names its
# sources and what it depends on; include paths are the repository root.

function(ptxdiff_cc_library)
  cmake_parse_arguments(ARG "" "NAME" "SRCS;HDRS;DEPS" ${ARGN})
  if(ARG_SRCS)
    add_library(${ARG_NAME} STATIC ${ARG_SRCS} ${ARG_HDRS})
    target_include_directories(${ARG_NAME} PUBLIC ${PROJECT_SOURCE_DIR})
    target_link_libraries(${ARG_NAME} PUBLIC ${ARG_DEPS})
  else()
    add_library(${ARG_NAME} INTERFACE)
    target_include_directories(${ARG_NAME} INTERFACE ${PROJECT_SOURCE_DIR})
    target_link_libraries(${ARG_NAME} INTERFACE ${ARG_DEPS})
  endif()
endfunction()

function(ptxdiff_cc_binary)
  cmake_parse_arguments(ARG "" "NAME" "SRCS;DEPS" ${ARGN})
  add_executable(${ARG_NAME} ${ARG_SRCS})
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_DEPS})
  if(PTXDIFF_BUILD_FUZZERS AND NOT PTXDIFF_SANITIZE)
    # The coverage callbacks of the instrumented libraries; with ASan its
    # runtime provides them.
    target_link_options(${ARG_NAME} PRIVATE -fsanitize=fuzzer-no-link)
  endif()
endfunction()

function(ptxdiff_cc_test)
  if(NOT PTXDIFF_BUILD_TESTS)
    return()
  endif()
  cmake_parse_arguments(ARG "" "NAME" "SRCS;DEPS" ${ARGN})
  add_executable(${ARG_NAME} ${ARG_SRCS})
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_DEPS} ptxdiff_test_main)
  target_compile_definitions(${ARG_NAME} PRIVATE
                             PTXDIFF_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  gtest_discover_tests(${ARG_NAME} DISCOVERY_TIMEOUT 60)
endfunction()

# Coverage instrumentation for the listed sources (in the calling directory),
# in the fuzz configurations only: the code a fuzz target's signal comes from
# (the decoders of fuzz input, wire and text). The rest (the campaign engine,
# the client, triage) is not instrumented: its threads run beside the fuzz
# loop, and their edges would be counted as the current input's coverage, at
# a cost on every comparison.
set(PTXDIFF_COVERAGE_FLAGS -fsanitize=fuzzer-no-link)
function(ptxdiff_fuzz_coverage)
  if(PTXDIFF_BUILD_FUZZERS)
    set_source_files_properties(${ARGN} PROPERTIES COMPILE_OPTIONS "${PTXDIFF_COVERAGE_FLAGS}")
  endif()
endfunction()

# The same for a whole library, whose sources another library compiles too
# (the oracle's signal copy, oracle/copy.h): a source's properties would
# instrument both.
function(ptxdiff_fuzz_coverage_target target)
  if(PTXDIFF_BUILD_FUZZERS)
    target_compile_options(${target} PRIVATE ${PTXDIFF_COVERAGE_FLAGS})
  endif()
endfunction()

# A libFuzzer target; built only in the fuzz configuration.
function(ptxdiff_cc_fuzzer)
  if(NOT PTXDIFF_BUILD_FUZZERS)
    return()
  endif()
  cmake_parse_arguments(ARG "" "NAME" "SRCS;DEPS" ${ARGN})
  add_executable(${ARG_NAME} ${ARG_SRCS})
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_DEPS})
  target_link_options(${ARG_NAME} PRIVATE ${PTXDIFF_FUZZING_ENGINE})
endfunction()

# Gives a test or tool the paths of ptxdiff-worker and of the faulty test
# worker (PTXDIFF_WORKER_PATH, PTXDIFF_FAULTY_WORKER_PATH), built first.
function(ptxdiff_uses_test_workers target)
  if(NOT TARGET ${target})
    return()
  endif()
  add_dependencies(${target} ptxdiff-worker faulty_worker)
  target_compile_definitions(${target} PRIVATE
    PTXDIFF_WORKER_PATH="$<TARGET_FILE:ptxdiff-worker>"
    PTXDIFF_FAULTY_WORKER_PATH="$<TARGET_FILE:faulty_worker>")
endfunction()
