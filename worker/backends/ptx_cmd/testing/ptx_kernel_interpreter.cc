// ptx_kernel_interpreter: a stand-in for a tool that runs PTX modules, for
// the ptx-cmd backend's tests and as a worked example of docs/kernel-abi.md.
//
//   ptx_kernel_interpreter [--wrong=add.sat.s32] [--grid=BLOCKSxTHREADS]
//                          [--startup-ms=N] [--per-tuple-us=N]
//                          [--crash-on=VARIANT[:A]] [--hang-on=VARIANT[:A]]
//                          [--refuse=FAMILY] [--flip-on=VARIANT[:A]]
//                          [--flip-immediate-forms=VARIANT]
//                          KERNEL.ptx IN OUT
//
// Runs the register-mode kernel in KERNEL.ptx (one variant, or a batch
// module: kernel ABI 2) on the tuples in IN (32 bytes each) over a grid (3
// blocks of 4 threads by default) and writes the results to OUT; see
// register_kernel.h for what it understands. --wrong=add.sat.s32 makes it a
// deliberately wrong tool: that instruction wraps instead of saturating;
// --wrong=addc.cc.u32 (or any other `.cc` variant that reads CC.CF) writes
// no CC.CF, which keeps its carry in. --wrong may repeat.
//
// The other modes make it behave like a real simulator, for tests and
// benchmarks of the path: --startup-ms and --per-tuple-us spend that much
// CPU time per run and per tuple; --crash-on dies of SIGSEGV when it
// evaluates VARIANT (with first operand A, if given: hex or decimal),
// --hang-on loops forever there instead; --refuse=FAMILY rejects a module
// that holds an instruction of FAMILY, as a parser that does not know it
// would (exit 1, a message); --flip-on flips the low bit of VARIANT's result
// (where its first operand is A, if given): a planted value bug;
// --flip-immediate-forms does so only where VARIANT's instruction has an
// immediate operand that could have been a register: a tool whose constant
// path is wrong. Each may repeat.
//
// Exit status: 0 done, 1 the kernel or the input could not be run (a
// message on stderr), 2 bad command line.

#include <csignal>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "common/files.h"
#include "isa/family_table.h"
#include "isa/spelling.h"
#include "worker/backends/ptx_cmd/testing/register_kernel.h"

namespace ptxdiff {
namespace {

constexpr char kUsage[] =
    "usage: ptx_kernel_interpreter [--wrong=add.sat.s32|addc.cc.u32|...] "
    "[--grid=BLOCKSxTHREADS] [--startup-ms=N] [--per-tuple-us=N] "
    "[--crash-on=VARIANT[:A]] [--hang-on=VARIANT[:A]] [--refuse=FAMILY] "
    "[--flip-on=VARIANT[:A]] [--flip-immediate-forms=VARIANT] "
    "KERNEL.ptx IN OUT";

// Where the tool misbehaves: a variant, and optionally its first operand.
struct Trigger {
  Variant variant;
  std::optional<uint64_t> a;
  bool Matches(const Variant& v, const Operands& operands) const {
    return v == variant && (!a.has_value() || operands.v[0] == *a);
  }
};

std::optional<Trigger> ParseTrigger(absl::string_view text) {
  std::optional<uint64_t> a;
  if (const size_t colon = text.rfind(':'); colon != absl::string_view::npos) {
    uint64_t value = 0;
    absl::string_view digits = text.substr(colon + 1);
    const bool hex = absl::ConsumePrefix(&digits, "0x");
    if (!(hex ? absl::SimpleHexAtoi(digits, &value)
              : absl::SimpleAtoi(digits, &value))) {
      return std::nullopt;
    }
    a = value;
    text = text.substr(0, colon);
  }
  const absl::StatusOr<Variant> v = ParseVariant(text);
  if (!v.ok()) return std::nullopt;
  return Trigger{*v, a};
}

// CPU time, as a real tool spends it (a sleep would leave the core free).
void Spin(absl::Duration d) {
  const absl::Time end = absl::Now() + d;
  while (absl::Now() < end) {
  }
}

struct Behaviour {
  absl::Duration startup, per_tuple;
  std::vector<Trigger> crashes, hangs, flips;
  std::vector<std::string> refused_families;
};

// The refused family of an instruction in `kernel`, if any.
std::optional<std::string> Refused(const RegisterKernel& kernel,
                                   const Behaviour& behaviour) {
  for (const Variant& v : kernel.OracleInstructions()) {
    for (const std::string& family : behaviour.refused_families) {
      if (InfoOf(v.family).opcode == family) return Spell(v);
    }
  }
  return std::nullopt;
}

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
  Behaviour behaviour;
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
    } else if (absl::ConsumePrefix(&arg, "--startup-ms=")) {
      int ms = 0;
      if (!absl::SimpleAtoi(arg, &ms) || ms < 0) return Fail(2, kUsage);
      behaviour.startup = absl::Milliseconds(ms);
    } else if (absl::ConsumePrefix(&arg, "--per-tuple-us=")) {
      double us = 0;
      if (!absl::SimpleAtod(arg, &us) || us < 0) return Fail(2, kUsage);
      behaviour.per_tuple = absl::Microseconds(us);
    } else if (absl::ConsumePrefix(&arg, "--crash-on=") ||
               absl::ConsumePrefix(&arg, "--hang-on=")) {
      const std::optional<Trigger> trigger = ParseTrigger(arg);
      if (!trigger)
        return Fail(2, absl::StrCat("bad trigger '", arg, "'\n", kUsage));
      (absl::StartsWith(argv[i], "--crash-on=") ? behaviour.crashes
                                                : behaviour.hangs)
          .push_back(*trigger);
    } else if (absl::ConsumePrefix(&arg, "--flip-on=")) {
      const std::optional<Trigger> trigger = ParseTrigger(arg);
      if (!trigger)
        return Fail(2, absl::StrCat("bad trigger '", arg, "'\n", kUsage));
      behaviour.flips.push_back(*trigger);
    } else if (absl::ConsumePrefix(&arg, "--flip-immediate-forms=")) {
      const absl::StatusOr<Variant> v = ParseVariant(arg);
      if (!v.ok())
        return Fail(2, absl::StrCat("bad variant '", arg, "'\n", kUsage));
      options.immediate_forms_flipped.push_back(*v);
    } else if (absl::ConsumePrefix(&arg, "--refuse=")) {
      behaviour.refused_families.emplace_back(arg);
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
  Spin(behaviour.startup);
  if (const std::optional<std::string> refused = Refused(*kernel, behaviour)) {
    return Fail(1, absl::StrCat(files[0], ": parse error: unknown instruction ",
                                *refused));
  }
  options.before_instruction = [&](const Variant& v, const Operands& operands) {
    for (const Trigger& t : behaviour.crashes) {
      if (t.Matches(v, operands)) {
        std::signal(SIGSEGV, SIG_DFL);  // a sanitizer's handler would exit 1
        std::raise(SIGSEGV);
      }
    }
    for (const Trigger& t : behaviour.hangs) {
      while (t.Matches(v, operands)) absl::SleepFor(absl::Seconds(1));
    }
  };
  options.flip_low_bit = [&](const Variant& v, const Operands& operands) {
    for (const Trigger& t : behaviour.flips) {
      if (t.Matches(v, operands)) return true;
    }
    return false;
  };
  auto out = kernel->Run(*in, options);
  Spin(behaviour.per_tuple *
       static_cast<double>(in->size() / 32));  // 32 bytes a tuple
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
