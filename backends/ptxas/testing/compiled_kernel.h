// Tests' way to SASS: PTX compiled by ptxas and decoded, one kernel's slots.
// Tests that use it skip themselves where there is no ptxas.

#ifndef PTXDIFF_BACKENDS_PTXAS_TESTING_COMPILED_KERNEL_H_
#define PTXDIFF_BACKENDS_PTXAS_TESTING_COMPILED_KERNEL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "backends/ptxas/sass_execution.h"
#include "sass/sass_instruction.h"

namespace ptxdiff::testing {

// Whether ptxas is here (FindPtxas's search).
bool HavePtxas();

// What compiles the PTX: the ptxas executable, or the same release's
// assembler in nvJitLink (which keeps subroutines in sections of their own).
enum class SassCompiler { kPtxas, kNvJitLink };

// `kernel`'s decoded slots, with the subroutines it calls (cubin_link.h),
// from `ptx` compiled for sm_90 at -O`opt_level`.
absl::StatusOr<std::vector<SassSlot>> CompileSass(
    absl::string_view ptx, absl::string_view kernel, int opt_level = 3,
    SassCompiler compiler = SassCompiler::kPtxas);

// A module of one kernel `k(.param .u64 out, .param .b32 p0, ...)` whose
// body is `body`, after `%out` is set to the output's global address and
// `%r0..%rN-1` are loaded from p0..pN-1.
std::string KernelOf(int params, absl::string_view body);

// KernelOf(params.size(), body) compiled at -O`opt_level` and run with
// `params` as p0, p1, ..., `output_bytes` at %out; traced if `trace`.
absl::StatusOr<KernelExecution> RunCompiledKernel(
    absl::string_view body, const std::vector<uint32_t>& params,
    int64_t output_bytes, int opt_level, bool trace = false);

}  // namespace ptxdiff::testing

#endif  // PTXDIFF_BACKENDS_PTXAS_TESTING_COMPILED_KERNEL_H_
