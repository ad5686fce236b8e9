// ptx_kernel_interpreter: a stand-in for a tool that runs PTX modules, for
// the ptx-cmd backend's tests and as a worked example of docs/kernel-abi.md.
//
//   ptx_kernel_interpreter [--wrong=add.sat.s32] [--grid=BLOCKSxTHREADS]
//                          [--startup-ms=N] [--per-tuple-us=N]
//                          [--crash-on=VARIANT[:A]] [--hang-on=VARIANT[:A]]
//                          [--refuse=FAMILY] [--flip-on=VARIANT[:A]]
//                          [--flip-immediate-forms=VARIANT]
//                          [--dense-faults] [--realistic] KERNEL.ptx IN OUT
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
// --dense-faults gives it the fault density of a real simulator (issue 41),
// all at once:
//   - it hangs on `bfind` of every width wherever the operand is below 2^16
//     (0 among them): a whole class of inputs of a family;
//   - it dies of SIGFPE on every `div` and `rem` by zero, in every width;
//   - it aborts (SIGABRT) on every `sad`;
//   - its parser refuses every `.cc` and carry-in variant, every packed
//     (x2) type, `lop3`, and every video variant reading and writing byte 3
//     (`d.b3, a.b3, b.b3`): 265 variants over 30 families, each refusal
//     naming the module's line (`KERNEL.ptx:LINE: parse error: ...`);
//   - it reads every immediate as its low 32 bits (64-bit constants wrong;
//     the same values in registers right);
//   - its start-up time varies from half to one and a half times
//     --startup-ms, and it prints ~30 KB of log per run.
//
// --realistic gives it a real parser's refusals (issue 62, after
// GPGPU-Sim's), by whole feature classes, naming only the first error's
// line, and a simulator's start-up a run (kRealisticRunMs; a sleep: its
// cost is time, not a core):
//   - every scalar video variant with an operand selector (`.b0`..`.h1`)
//     and every SIMD video variant: "video ... not implemented";
//   - every `.cc` and carry-in variant: "'addc' ... not (yet) implemented";
//   - every packed (x2) type: `operand "x2" has no declaration`;
//   - `lop3`: a syntax error at its opcode.
// Each message is `KERNEL.ptx:LINE: error: ...`, naming the feature, not the
// variant, as docs/kernel-abi.md asks of a tool. It combines with the
// other modes (--dense-faults adds that mode's faults and refusals).
//
// Exit status: 0 done, 1 the kernel or the input could not be run (a
// message on stderr), 2 bad command line.

#include <csignal>
#include <cstdio>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "backends/ptx_cmd/testing/register_kernel.h"
#include "common/files.h"
#include "isa/family_table.h"
#include "isa/spelling.h"

namespace ptxdiff {
namespace {

// --realistic's start-up a run, drawn between these (milliseconds): the
// cost issue 62 asks the fixture to have, as a real simulator's run has.
constexpr double kRealisticRunMs[2] = {40, 60};

constexpr char kUsage[] =
    "usage: ptx_kernel_interpreter [--wrong=add.sat.s32|addc.cc.u32|...] "
    "[--grid=BLOCKSxTHREADS] [--startup-ms=N] [--per-tuple-us=N] "
    "[--crash-on=VARIANT[:A]] [--hang-on=VARIANT[:A]] [--refuse=FAMILY] "
    "[--flip-on=VARIANT[:A]] [--flip-immediate-forms=VARIANT] "
    "[--dense-faults] [--realistic] KERNEL.ptx IN OUT";

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
  bool dense = false;      // --dense-faults
  bool realistic = false;  // --realistic
};

// --dense-faults: the parser's refusals (see the top of the file).
bool DenselyRefused(const Variant& v) {
  const std::string spelling = Spell(v);
  return HasCarryOut(v) || HasCarryIn(v) || IsPacked(v.type) ||
         v.family == Family::kLop3 ||
         absl::StrContains(spelling, "d.b3, a.b3, b.b3");
}

// --realistic: why its parser refuses `v` (a feature class's message), or
// nothing.
std::optional<std::string> RealisticRefusal(const Variant& v) {
  const absl::string_view opcode = InfoOf(v.family).opcode;
  if (IsSimdVideo(v.family)) {
    return absl::StrCat("error: SIMD video instruction '", opcode,
                        "' not implemented");
  }
  if (IsVideo(v.family) && (v.dsel != Sel::kNone || v.asel != Sel::kNone ||
                            v.bsel != Sel::kNone)) {
    return "error: video operand selectors (.b0-.b3, .h0-.h1) not "
           "implemented";
  }
  if (HasCarryOut(v) || HasCarryIn(v)) {
    return absl::StrCat("error: '", opcode,
                        "' with the condition code (.cc, carry-in) not (yet) "
                        "implemented");
  }
  if (IsPacked(v.type) || IsPacked(v.atype) || IsPacked(v.btype)) {
    return "error: operand \"x2\" has no declaration";
  }
  if (v.family == Family::kLop3) {
    return "error: syntax error, unexpected IDENTIFIER near 'lop3'";
  }
  return std::nullopt;
}

// The first instruction of `kernel` the tool refuses: "LINE: why".
std::optional<std::string> Refused(const RegisterKernel& kernel,
                                   const Behaviour& behaviour) {
  const std::vector<Variant> instructions = kernel.OracleInstructions();
  const std::vector<int> lines = kernel.OracleInstructionLines();
  for (size_t i = 0; i < instructions.size(); ++i) {
    const Variant& v = instructions[i];
    if (behaviour.realistic) {
      if (std::optional<std::string> why = RealisticRefusal(v))
        return absl::StrCat(lines[i], ": ", *why);
    }
    bool refused = behaviour.dense && DenselyRefused(v);
    for (const std::string& family : behaviour.refused_families) {
      refused = refused || InfoOf(v.family).opcode == family;
    }
    if (refused)
      return absl::StrCat(lines[i], ": parse error: unknown instruction ",
                          Spell(v));
  }
  return std::nullopt;
}

// --dense-faults: where the tool hangs (SIGFPE and SIGABRT are raised
// directly).
bool DenseHang(const Variant& v, const Operands& operands) {
  return v.family == Family::kBfind && operands.v[0] < (uint64_t{1} << 16);
}
int DenseSignal(const Variant& v, const Operands& operands) {
  if (v.family == Family::kSad) return SIGABRT;
  if (v.family != Family::kDiv && v.family != Family::kRem) return 0;
  const int bits = TypeWidth(v.type);
  const uint64_t b =
      bits == 64 ? operands.v[1] : operands.v[1] & ((uint64_t{1} << bits) - 1);
  return b == 0 ? SIGFPE : 0;
}

// --dense-faults: a real simulator's banner, configuration and statistics,
// ~30 KB a run.
void PrintLog(size_t tuples) {
  std::printf("*** ptx_kernel_interpreter: a simulator stand-in ***\n");
  for (int i = 0; i < 400; ++i) {
    std::printf(
        "config option %03d = default value, as a simulator lists "
        "its configuration\n",
        i);
  }
  std::printf("kernel done: %zu tuples\n", tuples);
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
    } else if (arg == "--dense-faults") {
      behaviour.dense = true;
      options.immediates_read_as_32_bits = true;
    } else if (arg == "--realistic") {
      behaviour.realistic = true;
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
  std::mt19937_64 jitter(std::random_device{}());
  if (behaviour.realistic) {
    // A real simulator's start-up (its configuration, its parser): time
    // spent whatever the module, before the parser's first error.
    absl::SleepFor(absl::Milliseconds(
        std::uniform_real_distribution<double>(kRealisticRunMs[0],
                                             kRealisticRunMs[1])(jitter)));
  }
  if (behaviour.dense) {
    Spin(behaviour.startup *
         std::uniform_real_distribution<double>(0.5, 1.5)(jitter));
    PrintLog(in->size() / 32);
  } else {
    Spin(behaviour.startup);
  }
  if (const std::optional<std::string> refused = Refused(*kernel, behaviour)) {
    return Fail(1, absl::StrCat(files[0], ":", *refused));
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
    if (!behaviour.dense) return;
    while (DenseHang(v, operands)) absl::SleepFor(absl::Seconds(1));
    if (const int signal = DenseSignal(v, operands)) {
      std::fflush(stdout);
      std::signal(signal, SIG_DFL);
      std::raise(signal);
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
