#include "program/program_ptxas.h"

#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/ptxas/cubin.h"
#include "backends/ptxas/cubin_link.h"
#include "backends/ptxas/ptxas_backend.h"
#include "backends/ptxas/ptxas_toolchain.h"
#include "backends/ptxas/sass_constants.h"
#include "backends/ptxas/sass_execution.h"
#include "common/run_by_halves.h"
#include "common/status_macros.h"
#include "isa/spelling.h"
#include "oracle/edge_operands.h"
#include "sass/sass_decoder.h"
#include "sass/sass_departure.h"

namespace ptxdiff {
namespace {

// The claimed outputs from the kernel's stores: one 8-byte store per output
// at 8k, as the kernel writes them; nullopt with why if they are not that.
std::optional<std::vector<uint64_t>> OutputsOf(
    const std::vector<ConstantStore>& stores, size_t outputs,
    std::string& why) {
  std::vector<uint64_t> values(outputs);
  std::vector<bool> seen(outputs);
  for (const ConstantStore& s : stores) {
    const size_t k = static_cast<size_t>(s.offset / 8);
    if (s.offset % 8 != 0 || s.size != 8 || k >= outputs || seen[k]) {
      why = absl::StrCat("a store of ", s.size, " bytes at offset ", s.offset,
                         " is not one of the outputs' 8-byte slots");
      return std::nullopt;
    }
    values[k] = s.Low64();
    seen[k] = true;
  }
  for (size_t k = 0; k < outputs; ++k) {
    if (!seen[k]) {
      why = absl::StrCat("output ", k, " is not stored as a constant");
      return std::nullopt;
    }
  }
  return values;
}

// The witness on every lane of the launch, the witness's lane first (the
// witness alone for a program without thread inputs).
std::vector<std::vector<uint64_t>> WitnessOnEveryLane(const Program& program) {
  const std::vector<uint64_t> witness = WitnessInputs(program);
  std::vector<std::vector<uint64_t>> out = {witness};
  if (!HasThreadInputs(program)) return out;
  for (uint32_t lane = 0; lane < kProgramLanes; ++lane) {
    if (lane != LaneOf(program, witness))
      out.push_back(AtLane(program, witness, lane));
  }
  return out;
}

// The inputs' vectors RefuteClaim tries, in its order: the witness on every
// lane, each parameter at its edges, then random ones on random lanes.
std::vector<std::vector<uint64_t>> InputVectors(const Program& program,
                                                int random) {
  const std::vector<uint64_t> witness = WitnessInputs(program);
  std::vector<std::vector<uint64_t>> out = WitnessOnEveryLane(program);
  for (size_t k = 0; k < program.inputs.size(); ++k) {
    const ProgramInput& in = program.inputs[k];
    if (in.thread != ThreadInput::kNone) continue;
    for (uint64_t edge : EdgeValues(in.width == 1 ? 1 : in.width)) {
      std::vector<uint64_t> v = witness;
      v[k] = edge & WidthMask(in.width);
      out.push_back(std::move(v));
    }
  }
  std::mt19937_64 rng(1);
  for (int r = 0; r < random; ++r) {
    std::vector<uint64_t> v;
    for (const ProgramInput& in : program.inputs)
      v.push_back(rng() & WidthMask(in.width));
    out.push_back(AtLane(program, std::move(v),
                         static_cast<uint32_t>(rng() % kProgramLanes)));
  }
  return out;
}

// The most random input vectors a program is judged at, after its witness
// and edges, and the oracle's steps its random vectors may take in all: a
// program with a long loop costs far more a vector, and gets fewer. Counted
// in steps, not time, so that a program is judged at the same vectors on a
// busy machine and by the minimizer.
constexpr int kRandomInputVectors = 1024;
constexpr int64_t kRandomVectorSteps = 1 << 18;

// How many random vectors `program` is judged at: the budget over the steps
// the oracle takes at its witness.
int RandomVectorsFor(const Program& program, Reading reading,
                     absl::Time deadline) {
  int64_t steps = 0;
  const StepObserver count = [&steps](const Variant&, const Operands&,
                                      const Result&) { ++steps; };
  (void)EvaluateProgram(program, WitnessInputs(program), reading, &count,
                        deadline);
  return static_cast<int>(std::min<int64_t>(
      kRandomInputVectors, kRandomVectorSteps / std::max<int64_t>(steps, 1)));
}

}  // namespace

absl::StatusOr<PtxasOutput> ProgramCompiler::Compile(
    absl::string_view arch, absl::string_view ptx, int opt_level,
    absl::Duration timeout) const {
  if (in_process != nullptr)
    return CompileWithin(in_process, arch, ptx, opt_level, timeout);
  return RunPtxas(ptxas, arch, ptx, opt_level, timeout);
}

absl::StatusOr<ProgramCompiler> PtxasProgramCompiler(const KeyValues& options) {
  PTXDIFF_ASSIGN_OR_RETURN(std::string ptxas, FindPtxas(options));
  PTXDIFF_ASSIGN_OR_RETURN(std::shared_ptr<const NvJitLink> in_process,
                           LoadPtxasInProcess(options));
  return ProgramCompiler(std::move(ptxas), std::move(in_process));
}

std::string ProgramCompiler::Description() const {
  if (in_process == nullptr) return ptxas;
  return absl::StrCat(ptxas, "; assembled in-process by ", in_process->path(),
                      " (nvJitLink ", in_process->version(), ")");
}

namespace {

// How long ptxas may run: its timeout, and no later than the deadline.
struct PtxasLimits {
  absl::Duration timeout;
  absl::Time deadline;
};

// A run that did not end by itself: each of `programs` cut (at the deadline
// or a stop: not judged, not counted) or, past ptxas's own timeout, not
// judged, saying so. Splitting the module would cost the timeout again.
void NotFinished(const PtxasOutput& out, absl::Duration timeout, bool cut,
                 bool in_process, size_t programs,
                 ProgramCompilation* results) {
  const std::string why =
      cut ? "not compiled: the run ended first"
          : absl::StrCat(
                "ptxas did not finish: ",
                // In-process, nothing was killed: CompileWithin says so.
                in_process ? out.log : out.how.Describe(timeout));
  for (size_t k = 0; k < programs; ++k) {
    results[k].cut = cut;
    results[k].why_not = why;
  }
}

// Programs after the first that crashed ptxas, where the caller asked only
// up to it (a crash's minimizer keeps the first candidate that crashes).
void NotCompiledAfterAFault(size_t programs, ProgramCompilation* results) {
  for (size_t k = 0; k < programs; ++k) {
    results[k].cut = true;
    results[k].why_not = "not compiled: a program before it crashed ptxas";
  }
}

// A kernel whose stores are no claim (`why`): its code, with the
// subroutines it calls, decoded for the SASS evaluator to run where the
// arch has tables.
void KeepCodeToRun(const std::string& arch, const ElfFile& cubin,
                   absl::string_view kernel, std::string why,
                   ProgramCompilation& result) {
  result.why_not = std::move(why);
  const auto info = FindSassArchInfo(arch);
  const absl::StatusOr<std::string> text = LinkKernel(cubin, kernel);
  if (info.ok() && text.ok()) {
    auto code = DecodeSassKernel(*info, *text);
    if (code.ok()) result.code = *std::move(code);
  }
}

// The kernels of one ptxas run of `programs` (a part of RunByHalves), each
// read by the decoder; a module ptxas rejects or crashes on is halved until
// the program it fails on is alone (its `why_not`, or its `fault`).
absl::StatusOr<PartEnd> CompilePart(
    const ProgramCompiler& compiler, const std::string& arch,
    const SassArch& sass, const PtxTarget& target,
    std::span<const Program> programs, ProgramInputs inputs, int opt_level,
    const PtxasLimits& limits, ProgramCompilation* results) {
  const absl::Duration timeout = std::min(
      limits.timeout,
      absl::Trunc(limits.deadline - absl::Now(), absl::Milliseconds(1)));
  if (timeout <= absl::ZeroDuration()) {
    NotFinished({}, timeout, true, false, programs.size(), results);
    return PartEnd::kDone;
  }
  PTXDIFF_ASSIGN_OR_RETURN(
      const PtxasOutput out,
      compiler.Compile(arch, ProgramsModule(programs, target, inputs),
                       opt_level, timeout));
  if (out.how.timed_out || out.how.interrupted) {
    NotFinished(out, timeout, out.how.interrupted || timeout < limits.timeout,
                compiler.in_process != nullptr, programs.size(), results);
    return PartEnd::kDone;
  }
  if (!out.ok) {
    if (programs.size() == 1) {
      if (out.how.signal != 0) {
        results[0].fault = ProgramFault{
            CaseFault::kCrash,
            absl::StrCat("ptxas ", out.how.Describe(timeout),
                         "; its output ends:\n", LogSummary(out.log))};
        return PartEnd::kDone;
      }
      results[0].why_not =
          absl::StrCat("ptxas rejected the kernel: ", LogSummary(out.log));
      return PartEnd::kDone;
    }
    return PartEnd::kHalve;
  }
  PTXDIFF_ASSIGN_OR_RETURN(const ElfFile elf, ParseElf(out.cubin));
  PTXDIFF_ASSIGN_OR_RETURN(const auto texts, KernelTexts(elf));
  for (size_t k = 0; k < programs.size(); ++k) {
    const auto text = texts.find(ProgramEntry(k));
    if (text == texts.end()) {
      return absl::InternalError(
          absl::StrCat("the cubin has no ", ProgramEntry(k), " kernel"));
    }
    if (HasThreadInputs(programs[k])) {
      // Each thread stores at its own offset: the code is run per lane.
      KeepCodeToRun(arch, elf, text->first, "its stores depend on the thread",
                    results[k]);
      continue;
    }
    absl::StatusOr<std::vector<ConstantStore>> stores =
        DecodeConstantStores(sass, text->second);
    if (!stores.ok()) {
      KeepCodeToRun(arch, elf, text->first,
                    std::string(stores.status().message()), results[k]);
      continue;
    }
    results[k].claimed =
        OutputsOf(*stores, programs[k].outputs.size(), results[k].why_not);
  }
  return PartEnd::kDone;
}

// Where a thread of the kernel stores: its lane, the offset its outputs
// start at, and the output buffer up to its last.
struct ThreadSlot {
  uint32_t lane = 0;
  int64_t base = 0, buffer_bytes = 0;
};
ThreadSlot ThreadSlotOf(const Program& program,
                        const std::vector<uint64_t>& inputs) {
  ThreadSlot slot{.lane = LaneOf(program, inputs)};
  slot.base = int64_t{ThreadOutputBytes(program)} * slot.lane;
  slot.buffer_bytes = slot.base + ThreadOutputBytes(program);
  return slot;
}

// A loaded input's buffer for the lane run: its value in the lane's word,
// the complement in every other lane's, so that code reading another
// lane's word shows (the evaluator runs one lane at a time).
std::vector<uint8_t> LoadedBuffer(int width, uint64_t value, uint32_t lane) {
  const int bytes = width / 8;
  std::vector<uint8_t> out(static_cast<size_t>(bytes) * kProgramLanes);
  for (uint32_t l = 0; l < kProgramLanes; ++l) {
    const uint64_t word = l == lane ? value : ~value;
    for (int b = 0; b < bytes; ++b)
      out[l * bytes + b] = static_cast<uint8_t>(word >> (8 * b));
  }
  return out;
}

// The kernel's parameters after the output pointer: each input as
// PtxParamType declares it (a predicate as a 32-bit word), a loaded one as
// a pointer to its buffer.
std::vector<KernelArgument> ArgumentsOf(const Program& program,
                                        const std::vector<uint64_t>& inputs) {
  std::vector<KernelArgument> out;
  const uint32_t lane = LaneOf(program, inputs);
  for (size_t k = 0; k < program.inputs.size(); ++k) {
    const ProgramInput& in = program.inputs[k];
    if (in.thread != ThreadInput::kNone) continue;
    if (in.loaded) {
      out.push_back(
          {.bytes = 8, .pointee = LoadedBuffer(in.width, inputs[k], lane)});
      continue;
    }
    out.push_back({.bytes = PtxParamBytes(in.width), .value = inputs[k]});
  }
  return out;
}

// What `code` stores per output when run with `inputs` (none for the
// immediate form), or nullopt with why it was not run.
std::optional<std::vector<uint64_t>> Execute(
    const SassArchInfo& arch, const Program& program,
    const std::vector<SassSlot>& code, ProgramInputs form,
    const std::vector<uint64_t>& inputs, std::string& why,
    std::string* blocker = nullptr) {
  const std::vector<KernelArgument> args = form == ProgramInputs::kRuntime
                                               ? ArgumentsOf(program, inputs)
                                               : std::vector<KernelArgument>{};
  const ThreadSlot slot = ThreadSlotOf(program, inputs);
  const KernelExecution run =
      ExecuteKernel(arch, code, args, slot.buffer_bytes, false, slot.lane);
  if (!run.ran) {
    why = absl::StrCat("the SASS evaluator did not run it: ", run.why_not);
    if (blocker != nullptr) *blocker = run.blocker;
    return std::nullopt;
  }
  std::vector<ConstantStore> own = run.stores;
  for (ConstantStore& s : own) s.offset -= slot.base;
  return OutputsOf(own, program.outputs.size(), why);
}

// A check a stop or the deadline ended: not judged, not counted.
ProgramCheck Cut(ProgramCheck check) {
  check.judged = false;
  check.mismatch.reset();
  check.cut = true;
  check.why_not = "stopped (a stop, or the deadline) before it was judged";
  return check;
}

// The executed code judged at the witness (immediates) or at the
// refutation's input vectors (runtime inputs): the first mismatch.
ProgramCheck JudgeExecuted(const SassArchInfo& arch, const Program& program,
                           const std::vector<SassSlot>& code,
                           ProgramInputs form, Reading reading,
                           absl::Time deadline) {
  ProgramCheck check;
  const std::vector<std::vector<uint64_t>> vectors =
      form == ProgramInputs::kImmediate
          ? WitnessOnEveryLane(program)
          : InputVectors(program, RandomVectorsFor(program, reading, deadline));
  bool only_exits = true;  // of the vectors where the oracle defined nothing
  for (const std::vector<uint64_t>& inputs : vectors) {
    ++check.vectors;
    std::string why;
    std::vector<ProgramValue> oracle =
        *EvaluateProgram(program, inputs, reading, nullptr, deadline);
    if (EvaluationStopped(deadline)) return Cut(std::move(check));
    if (DefinesNoOutput(oracle)) {  // nothing there to judge
      only_exits &= ThreadExits(oracle);
      continue;
    }
    const std::optional<std::vector<uint64_t>> got =
        Execute(arch, program, code, form, inputs, why, &check.blocker);
    if (!got.has_value()) {
      check.judged = false;
      check.why_not = why;
      return check;
    }
    check.judged = true;
    check.executed = true;
    if (Disagrees(oracle, *got)) {
      check.mismatch = ProgramMismatch{.form = form,
                                       .claimed = *got,
                                       .inputs = inputs,
                                       .oracle = std::move(oracle),
                                       .executed = true,
                                       .listing = SassListing(code)};
      return check;
    }
  }
  if (!check.judged) {
    check.why_not = NoOutputDefinedWhy(only_exits);
    check.nothing_defined = true;
  }
  return check;
}

// A claim that cannot be judged: the oracle defines no output where it
// would be refuted.
ProgramCheck NothingDefined(ProgramCheck check) {
  check.judged = false;
  check.nothing_defined = true;
  check.why_not = NoOutputDefinedWhy(/*exits=*/false);
  return check;
}

// `compiled` judged by the composed oracle.
ProgramCheck Judge(const Program& program, const ProgramCompilation& compiled,
                   ProgramInputs form, Reading reading,
                   const std::optional<SassArchInfo>& executable,
                   absl::Time deadline) {
  ProgramCheck check;
  check.fault = compiled.fault;
  check.cut = compiled.cut;
  if (!compiled.claimed) {
    if (executable.has_value() && !compiled.code.empty()) {
      return JudgeExecuted(*executable, program, compiled.code, form, reading,
                           deadline);
    }
    check.why_not = compiled.why_not;
    return check;
  }
  check.judged = true;
  check.constants = compiled.claimed;
  const std::vector<uint64_t>& claimed = *compiled.claimed;
  if (form == ProgramInputs::kImmediate) {
    std::vector<ProgramValue> oracle = *EvaluateProgram(
        program, WitnessInputs(program), reading, nullptr, deadline);
    if (EvaluationStopped(deadline)) return Cut(std::move(check));
    if (DefinesNoOutput(oracle)) return NothingDefined(std::move(check));
    if (Disagrees(oracle, claimed)) {
      check.mismatch = ProgramMismatch{.form = form,
                                       .claimed = claimed,
                                       .inputs = WitnessInputs(program),
                                       .oracle = std::move(oracle)};
    }
    return check;
  }
  ClaimCheck claim = CheckClaim(program, claimed, reading,
                                RandomVectorsFor(program, reading, deadline),
                                deadline);
  check.vectors = claim.vectors;
  if (claim.cut) return Cut(std::move(check));
  if (!claim.judged) return NothingDefined(std::move(check));
  if (claim.refuted) {
    check.mismatch = ProgramMismatch{.form = form,
                                     .claimed = claimed,
                                     .inputs = std::move(claim.refuted->inputs),
                                     .oracle = std::move(claim.refuted->oracle)};
  }
  return check;
}

// Where `optimized` departs from `reference` (code that runs to the
// oracle's values) on the way to the first output `m` shows wrong.
std::optional<SassDeparture> DepartureOf(const SassArchInfo& info,
                                         const Program& program,
                                         const std::vector<SassSlot>& optimized,
                                         const std::vector<SassSlot>& reference,
                                         const ProgramMismatch& m) {
  const std::vector<KernelArgument> args =
      m.form == ProgramInputs::kRuntime ? ArgumentsOf(program, m.inputs)
                                        : std::vector<KernelArgument>{};
  const ThreadSlot slot = ThreadSlotOf(program, m.inputs);
  const KernelExecution right = ExecuteKernel(
      info, reference, args, slot.buffer_bytes, /*trace=*/true, slot.lane);
  if (!right.ran) return std::nullopt;
  size_t k = 0;
  while (k < m.oracle.size() &&
         (!m.oracle[k].defined || m.oracle[k].bits == m.claimed[k])) {
    ++k;
  }
  return DepartureAt(info, optimized, args, slot.buffer_bytes,
                     slot.base + static_cast<int64_t>(8 * k), right.run,
                     slot.lane);
}

// An executed mismatch stands only where the program's -O0 code, run at the
// same inputs, gives the oracle's values: there the evaluator is calibrated
// on this very program, and the difference is in the optimized code. Where
// it stands, the -O0 run also tells where the optimized code departs.
void CrossCheckAtO0(const ProgramCompiler& compiler, const std::string& arch,
                    const SassArchInfo& info, const Program& program,
                    const std::vector<SassSlot>& optimized, Reading reading,
                    ProgramCheck& check) {
  if (!check.mismatch || !check.mismatch->executed) return;
  const ProgramMismatch& m = *check.mismatch;
  absl::StatusOr<ProgramCompilation> o0 =
      CompileProgram(compiler, arch, program, m.form, /*opt_level=*/0);
  std::string why = "its -O0 code did not compile";
  bool calibrated = false;
  if (o0.ok()) {
    std::optional<std::vector<uint64_t>> got;
    if (o0->claimed) {
      got = o0->claimed;
    } else if (!o0->code.empty()) {
      got = Execute(info, program, o0->code, m.form, m.inputs, why);
    }
    if (got.has_value()) {
      calibrated = !Disagrees(m.oracle, *got);
      if (!calibrated) why = "its -O0 code runs to other values too";
    }
  }
  if (calibrated) {
    if (o0->claimed) return;
    if (const std::optional<SassDeparture> d = DepartureOf(
            info, program, optimized, o0->code, *check.mismatch)) {
      check.mismatch->departure = DescribeDeparture(*d);
      check.mismatch->departure_cause = DepartureCause(*d);
    }
    return;
  }
  check.mismatch.reset();
  check.judged = false;
  check.why_not = absl::StrCat(
      "the evaluator's run of the code disagrees with the oracle, but ", why,
      ": not judged (the evaluator is not calibrated on it)");
}

}  // namespace

absl::StatusOr<std::vector<ProgramCompilation>> CompilePrograms(
    const ProgramCompiler& compiler, const std::string& arch,
    std::span<const Program> programs, ProgramInputs inputs, int opt_level,
    absl::Duration timeout, absl::Time deadline, bool until_fault) {
  PTXDIFF_ASSIGN_OR_RETURN(const SassArch sass, FindSassArch(arch));
  const std::optional<PtxTarget> target = TargetForDevice(sass.sm);
  if (!target.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat("no PTX target for ", arch));
  }
  std::vector<ProgramCompilation> results(programs.size());
  bool faulted = false;  // until_fault, and a program crashed ptxas
  const auto run_part = [&](size_t begin,
                            size_t end) -> absl::StatusOr<PartEnd> {
    if (faulted) {
      NotCompiledAfterAFault(end - begin, &results[begin]);
      return PartEnd::kDone;
    }
    PTXDIFF_ASSIGN_OR_RETURN(
        const PartEnd how,
        CompilePart(compiler, arch, sass, *target,
                    programs.subspan(begin, end - begin), inputs, opt_level,
                    {timeout, deadline}, &results[begin]));
    faulted = until_fault &&
              std::any_of(results.begin() + begin, results.begin() + end,
                          [](const ProgramCompilation& c) {
                            return c.fault.has_value();
                          });
    return how;
  };
  // Until a fault, in parts of 1, 2, 4, ... programs: a crash's minimizer
  // asks about candidates that mostly still hold what crashes, and a first
  // that crashes is then one run, not a module's halving down to it.
  size_t part = until_fault ? 1 : programs.size();
  for (size_t begin = 0; begin < programs.size(); begin += part, part *= 2) {
    PTXDIFF_RETURN_IF_ERROR(
        RunByHalves(begin, std::min(begin + part, programs.size()), run_part));
  }
  return results;
}

absl::StatusOr<ProgramCompilation> CompileProgram(
    const ProgramCompiler& compiler, const std::string& arch,
    const Program& program, ProgramInputs inputs, int opt_level,
    absl::Duration timeout) {
  PTXDIFF_ASSIGN_OR_RETURN(std::vector<ProgramCompilation> one,
                           CompilePrograms(compiler, arch, {&program, 1},
                                           inputs, opt_level, timeout));
  return std::move(one[0]);
}

ClaimCheck CheckClaim(const Program& program,
                      const std::vector<uint64_t>& claimed, Reading reading,
                      int random, absl::Time deadline) {
  ClaimCheck check;
  for (std::vector<uint64_t>& inputs : InputVectors(program, random)) {
    ++check.vectors;
    std::vector<ProgramValue> oracle =
        *EvaluateProgram(program, inputs, reading, nullptr, deadline);
    if (EvaluationStopped(deadline)) {
      return {.cut = true};
    }
    check.judged |= !DefinesNoOutput(oracle);
    if (Disagrees(oracle, claimed)) {
      check.refuted = CounterExample{std::move(inputs), std::move(oracle)};
      return check;
    }
  }
  return check;
}

std::optional<CounterExample> RefuteClaim(const Program& program,
                                          const std::vector<uint64_t>& claimed,
                                          Reading reading, int random) {
  return CheckClaim(program, claimed, reading, random).refuted;
}

absl::StatusOr<std::vector<ProgramCheck>> CheckPrograms(
    const ProgramCompiler& compiler, const std::string& arch,
    std::span<const Program> programs, ProgramInputs form, Reading reading,
    absl::Duration timeout, absl::Time deadline, bool execute, int opt_level,
    bool until_fault) {
  PTXDIFF_ASSIGN_OR_RETURN(
      const std::vector<ProgramCompilation> compiled,
      CompilePrograms(compiler, arch, programs, form, opt_level, timeout,
                      deadline, until_fault));
  std::optional<SassArchInfo> executable;
  if (auto info = FindSassArchInfo(arch); info.ok() && execute) {
    executable = *info;
  }
  std::vector<ProgramCheck> checks;
  for (size_t k = 0; k < programs.size(); ++k) {
    checks.push_back(
        Judge(programs[k], compiled[k], form, reading, executable, deadline));
    if (executable.has_value() && opt_level > 0 && !checks.back().cut) {
      CrossCheckAtO0(compiler, arch, *executable, programs[k], compiled[k].code,
                     reading, checks.back());
    }
  }
  return checks;
}

absl::StatusOr<ProgramCheck> CheckProgram(const ProgramCompiler& compiler,
                                          const std::string& arch,
                                          const Program& program,
                                          ProgramInputs form, Reading reading) {
  PTXDIFF_ASSIGN_OR_RETURN(
      std::vector<ProgramCheck> one,
      CheckPrograms(compiler, arch, {&program, 1}, form, reading));
  return std::move(one[0]);
}

namespace {

class PtxasProgramBackend : public ProgramBackend {
 public:
  PtxasProgramBackend(ProgramCompiler compiler, std::string arch,
                      absl::Duration timeout)
      : compiler_(std::move(compiler)),
        arch_(std::move(arch)),
        timeout_(timeout) {}

  std::string Name() const override { return "ptxas"; }
  std::string Identity() const override {
    return absl::StrCat("ptxas ", arch_, " (", compiler_.Description(), ")");
  }

  absl::StatusOr<std::vector<ProgramCheck>> Check(
      std::span<const Program> programs, ProgramInputs form, Reading reading,
      absl::Time deadline) override {
    return CheckPrograms(compiler_, arch_, programs, form, reading, timeout_,
                         deadline);
  }
  // A crash's minimizer: the candidates up to the first that crashes ptxas.
  absl::StatusOr<std::vector<ProgramCheck>> CheckUntilFault(
      std::span<const Program> programs, ProgramInputs form, Reading reading,
      absl::Time deadline) override {
    return CheckPrograms(compiler_, arch_, programs, form, reading, timeout_,
                         deadline, /*execute=*/true, kPtxasDefaultOptLevel,
                         /*until_fault=*/true);
  }

  // Both need its code run (a load is never folded, a lane's value never
  // claimed alone).
  bool JudgesThreadInputs() const override { return RunsItsCode(); }
  bool JudgesLoadedInputs() const override { return RunsItsCode(); }

  std::string Describe(const Program& p,
                       const ProgramMismatch& m) const override {
    if (m.executed) {
      return absl::StrCat("ptxas ", arch_, "'s code, run on the CPU",
                          m.form == ProgramInputs::kRuntime
                              ? absl::StrCat(" at ", InputsText(p, m.inputs))
                          : HasThreadInputs(p)
                              ? absl::StrCat(" on lane ", LaneOf(p, m.inputs))
                              : "",
                          ", stores ", ClaimedText(p, m.claimed),
                          "; the composed oracle gives ",
                          OutputsText(p, m.oracle),
                          " (its -O0 code runs to the oracle's values)",
                          m.departure.empty() ? "" : "; the code ",
                          m.departure);
    }
    if (m.form == ProgramInputs::kImmediate) {
      return absl::StrCat(
          "ptxas ", arch_, " folds it to ", ClaimedText(p, m.claimed),
          "; the composed oracle gives ", OutputsText(p, m.oracle));
    }
    return absl::StrCat("ptxas ", arch_, " claims ", ClaimedText(p, m.claimed),
                        " for every input; at ", InputsText(p, m.inputs),
                        " the composed oracle gives ",
                        OutputsText(p, m.oracle));
  }

  std::string FindingClass(ProgramInputs form) const override {
    return form == ProgramInputs::kImmediate ? "immediate-fold"
                                             : "runtime-claim";
  }
  std::string FindingName(ProgramInputs form) const override {
    return form == ProgramInputs::kImmediate ? "immediate fold"
                                             : "runtime claim";
  }
  std::string MismatchClass(const ProgramMismatch& m) const override {
    if (!m.executed) return FindingClass(m.form);
    return m.form == ProgramInputs::kImmediate ? "immediate-executed"
                                               : "runtime-executed";
  }
  std::string MismatchName(const ProgramMismatch& m) const override {
    if (!m.executed) return FindingName(m.form);
    return m.form == ProgramInputs::kImmediate ? "executed code (immediates)"
                                               : "executed code";
  }

  std::string ReproModule(const Program& p, ProgramInputs form) const override {
    const absl::StatusOr<SassArch> sass = FindSassArch(arch_);
    const std::optional<PtxTarget> target =
        sass.ok() ? TargetForDevice(sass->sm) : std::nullopt;
    if (!target) return absl::StrCat("// no PTX target for ", arch_, "\n");
    const std::string command =
        absl::StrCat("ptxas -arch=", arch_, " repro.ptx -o repro.cubin\n");
    if (compiler_.in_process == nullptr) {
      return absl::StrCat("// Compile: ", command,
                          ProgramModule(p, *target, form));
    }
    // The executable's code can differ from the library's (16-bit div).
    return absl::StrCat("// Compiled in-process by ",
                        compiler_.in_process->path(), " (nvJitLink ",
                        compiler_.in_process->version(),
                        "), the assembler of\n// ", compiler_.ptxas,
                        "'s release. The executable's code can differ\n"
                        "// (PTXDIFF_PTXAS_COMPILER=ptxas judges it): ",
                        command, ProgramModule(p, *target, form));
  }

  std::string ReplayFlags() const override {
    return absl::StrCat("--backend ptxas --arch ", arch_);
  }

 private:
  // Its code runs on the CPU, lane by lane, where the evaluator knows the
  // target.
  bool RunsItsCode() const { return FindSassArchInfo(arch_).ok(); }

  ProgramCompiler compiler_;
  std::string arch_;
  absl::Duration timeout_;
};

}  // namespace

std::unique_ptr<ProgramBackend> MakePtxasProgramBackend(
    ProgramCompiler compiler, std::string arch, absl::Duration timeout) {
  return std::make_unique<PtxasProgramBackend>(std::move(compiler),
                                               std::move(arch), timeout);
}

}  // namespace ptxdiff
