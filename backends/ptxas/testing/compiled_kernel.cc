#include "backends/ptxas/testing/compiled_kernel.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "backends/ptxas/cubin.h"
#include "backends/ptxas/cubin_link.h"
#include "backends/ptxas/nvjitlink.h"
#include "backends/ptxas/ptxas_toolchain.h"
#include "common/status_macros.h"
#include "sass/sass_decoder.h"

namespace ptxdiff::testing {

bool HavePtxas() { return FindPtxas({}).ok(); }

namespace {

absl::StatusOr<PtxasOutput> Compile(absl::string_view ptx, int opt_level,
                                    SassCompiler compiler) {
  PTXDIFF_ASSIGN_OR_RETURN(const std::string ptxas, FindPtxas({}));
  if (compiler == SassCompiler::kPtxas) {
    return RunPtxas(ptxas, "sm_90", ptx, opt_level);
  }
  PTXDIFF_ASSIGN_OR_RETURN(const std::unique_ptr<NvJitLink> jit,
                           NvJitLink::Load(ptxas));
  return jit->Compile("sm_90", ptx, opt_level);
}

}  // namespace

absl::StatusOr<std::vector<SassSlot>> CompileSass(absl::string_view ptx,
                                                  absl::string_view kernel,
                                                  int opt_level,
                                                  SassCompiler compiler) {
  PTXDIFF_ASSIGN_OR_RETURN(const PtxasOutput out,
                           Compile(ptx, opt_level, compiler));
  if (!out.ok) return absl::InvalidArgumentError(out.log);
  PTXDIFF_ASSIGN_OR_RETURN(const ElfFile elf, ParseElf(out.cubin));
  PTXDIFF_ASSIGN_OR_RETURN(const std::string text, LinkKernel(elf, kernel));
  PTXDIFF_ASSIGN_OR_RETURN(const SassArchInfo arch, FindSassArchInfo("sm_90"));
  return DecodeSassKernel(arch, text);
}

std::string KernelOf(int params, absl::string_view body) {
  std::string list = ".param .u64 out";
  std::string loads;
  for (int i = 0; i < params; ++i) {
    absl::StrAppend(&list, ", .param .b32 p", i);
    absl::StrAppend(&loads, "  ld.param.b32 %r", i, ", [p", i, "];\n");
  }
  return absl::StrCat(
      ".version 9.0\n.target sm_90\n.address_size 64\n.visible .entry k(", list,
      ")\n{\n  .reg .pred %p<8>;\n  .reg .b16 %h<16>;\n  .reg .b32 %r<32>;\n"
      "  .reg .b64 %rd<16>, %out;\n  ld.param.u64 %out, [out];\n"
      "  cvta.to.global.u64 %out, %out;\n",
      loads, body, "  ret;\n}\n");
}

absl::StatusOr<KernelExecution> RunCompiledKernel(
    absl::string_view body, const std::vector<uint32_t>& params,
    int64_t output_bytes, int opt_level, bool trace) {
  PTXDIFF_ASSIGN_OR_RETURN(
      const std::vector<SassSlot> kernel,
      CompileSass(KernelOf(static_cast<int>(params.size()), body), "k",
                  opt_level));
  std::vector<KernelArgument> args;
  for (uint32_t p : params) args.push_back({.bytes = 4, .value = p});
  PTXDIFF_ASSIGN_OR_RETURN(const SassArchInfo arch, FindSassArchInfo("sm_90"));
  return ExecuteKernel(arch, kernel, args, output_bytes, trace);
}

}  // namespace ptxdiff::testing
