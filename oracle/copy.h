// Which copy of the oracle a translation unit calls.
//
// The oracle is compiled twice (oracle/CMakeLists.txt). Every library links
// the plain copy. The signal copy is the one a fuzz target's own input path
// calls, and in the fuzz build it alone carries coverage instrumentation: the
// campaign's threads evaluate the oracle all the time (the systematic source,
// the judges, the minimizer), and on the instrumented copy they would add
// edges and hit counts to whatever input libFuzzer is running at the time.
// The two copies differ in the inline namespace their functions are declared
// in; the types (Result, Erratum, ...) are shared. So are the inline
// functions and templates of the headers they include (simd_video_op.h,
// isa/): the linker keeps one instance of each, instrumented or not.

#ifndef PTXDIFF_ORACLE_COPY_H_
#define PTXDIFF_ORACLE_COPY_H_

#ifndef PTXDIFF_ORACLE_COPY
#define PTXDIFF_ORACLE_COPY plain_oracle
#endif

#endif  // PTXDIFF_ORACLE_COPY_H_
