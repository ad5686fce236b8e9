// ptx_kernel_interpreter: a stand-in for a tool that runs PTX modules, for
// the ptx-cmd backend's tests and as a worked example of docs/kernel-abi.md.
//
//   ptx_kernel_interpreter [--wrong=add.sat.s32] [--grid=BLOCKSxTHREADS]
//                          KERNEL.ptx IN OUT
//
// Runs the register-mode kernel in KERNEL.ptx on the tuples in IN (32 bytes
// each) over a grid (3 blocks of 4 threads by default) and writes the
// results to OUT (8 bytes each); see register_kernel.h for what it
// understands. --wrong=add.sat.s32 makes it a deliberately wrong tool: that
// instruction wraps instead of saturating; --wrong=addc.cc.u32 (or any other
// `.cc` variant that reads CC.CF) writes no CC.CF, which keeps its carry in.
// --wrong may repeat.
//
// Exit status: 0 done, 1 the kernel or the input could not be run (a
// message on stderr), 2 bad command line.

#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/files.h"
#include "isa/family_table.h"
#include "isa/spelling.h"
#include "worker/backends/ptx_cmd/testing/register_kernel.h"

namespace ptxdiff {
namespace {

constexpr char kUsage[] =
    "usage: ptx_kernel_interpreter [--wrong=add.sat.s32|addc.cc.u32|...] "
    "[--grid=BLOCKSxTHREADS] KERNEL.ptx IN OUT";

int Fail(int code, absl::string_view message) {
  std::fprintf(stderr, "ptx_kernel_interpreter: %.*s\n",
               static_cast<int>(message.size()), message.data());
  return code;
}

// The wrong behaviours on offer: add.sat.s32 evaluated as add.s32, and a
// `.cc` variant reading CC.CF that leaves CC.CF as it was.
bool AddWrongMode(absl::string_view name, RegisterKernel::RunOptions& options) {
  if (name == "add.sat.s32") {
    options.substitutions.emplace_back(*ParseVariant("add.sat.s32"),
                                       *ParseVariant("add.s32"));
    return true;
  }
  const absl::StatusOr<Variant> v = ParseVariant(name);
  if (!v.ok() || !HasCarryOut(*v) || !HasCarryIn(*v)) return false;
  options.carry_flag_unwritten.push_back(*v);
  return true;
}

bool ParseGrid(absl::string_view text, RegisterKernel::Grid& grid) {
  std::vector<absl::string_view> parts = absl::StrSplit(text, 'x');
  return parts.size() == 2 && absl::SimpleAtoi(parts[0], &grid.blocks) &&
         absl::SimpleAtoi(parts[1], &grid.threads) && grid.blocks > 0 &&
         grid.threads > 0 && grid.blocks <= 1024 && grid.threads <= 1024;
}

int Main(int argc, char** argv) {
  RegisterKernel::RunOptions options;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (absl::ConsumePrefix(&arg, "--wrong=")) {
      if (!AddWrongMode(arg, options)) {
        return Fail(
            2, absl::StrCat(
                   "unknown --wrong mode '", arg,
                   "' (known: add.sat.s32, and .cc variants that read CC.CF "
                   "such as addc.cc.u32)\n",
                   kUsage));
      }
    } else if (absl::ConsumePrefix(&arg, "--grid=")) {
      if (!ParseGrid(arg, options.grid)) {
        return Fail(2, absl::StrCat("bad --grid '", arg, "'\n", kUsage));
      }
    } else if (absl::StartsWith(arg, "--")) {
      return Fail(2, absl::StrCat("unknown flag '", arg, "'\n", kUsage));
    } else {
      files.emplace_back(arg);
    }
  }
  if (files.size() != 3) return Fail(2, kUsage);
  auto ptx = ReadFile(files[0]);
  if (!ptx.ok()) return Fail(1, ptx.status().message());
  auto in = ReadFile(files[1]);
  if (!in.ok()) return Fail(1, in.status().message());
  auto kernel = RegisterKernel::Parse(*ptx);
  if (!kernel.ok()) {
    return Fail(1, absl::StrCat(files[0], ": ", kernel.status().message()));
  }
  auto out = kernel->Run(*in, options);
  if (!out.ok()) {
    return Fail(1, absl::StrCat(files[0], ": ", out.status().message()));
  }
  const absl::Status written = WriteFile(files[2], *out);
  if (!written.ok()) return Fail(1, written.message());
  return 0;
}

}  // namespace
}  // namespace ptxdiff

int main(int argc, char** argv) { return ptxdiff::Main(argc, argv); }
