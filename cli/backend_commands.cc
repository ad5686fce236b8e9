#include "cli/backend_commands.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <random>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "backends/ptxas/ptxas_toolchain.h"
#include "cli/commands.h"
#include "cli/sweep_exhaustive.h"
#include "client/worker_locator.h"
#include "common/interrupt.h"
#include "harness/differential.h"
#include "isa/family_table.h"
#include "isa/operand_form.h"
#include "isa/operand_text.h"
#include "isa/spelling.h"
#include "oracle/edge_operands.h"
#include "protocol/backend_names.h"

namespace ptxdiff {
namespace {

// A reason or a fault in a list, on one line of at most kListedBytes: a
// tool's message may end with a kilobyte of its output (`eval` shows it),
// and names the tool's command, which the banner above shows once.
constexpr size_t kListedBytes = 300;
std::string FirstLine(absl::string_view text, absl::string_view toolchain) {
  std::string line(text.substr(0, text.find('\n')));
  if (!toolchain.empty()) {
    line = absl::StrReplaceAll(
        line, {{absl::StrCat("command '", toolchain, "' "), "command "}});
  }
  if (line.size() <= kListedBytes && line.size() == text.size()) return line;
  return absl::StrCat(line.substr(0, kListedBytes), " ...");
}

}  // namespace

absl::StatusOr<std::vector<Variant>> SelectVariants(const ParsedArgs& args) {
  const std::vector<std::string> families = args.All("family");
  for (const std::string& name : families) {
    if (!FamilyByOpcode(name)) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown family '", name, "'"));
    }
  }
  std::vector<Variant> selected;
  for (const Variant& v : AllVariants()) {
    const absl::string_view opcode = InfoOf(v.family).opcode;
    if (families.empty() ||
        std::find(families.begin(), families.end(), opcode) != families.end()) {
      selected.push_back(v);
    }
  }
  return selected;
}

absl::StatusOr<std::unique_ptr<WorkerClient>> StartBackend(
    const ParsedArgs& args) {
  std::string backend = args.Get("backend");
  if (backend.empty()) backend = ChooseDefaultBackend().name;
  std::string worker;
  if (!absl::StartsWith(backend, kExecPrefix)) {
    auto found = FindWorkerBinary();
    if (!found.ok()) return found.status();
    worker = *found;
  }
  auto command = CommandForBackend(backend, worker);
  if (!command.ok()) return command.status();
  if (args.Has("arch"))
    command->hello_options.emplace_back("arch", args.Get("arch"));
  auto cuda_driver = CudaDriverFlag(args, backend);
  if (!cuda_driver.ok()) return cuda_driver.status();
  if (!cuda_driver->empty()) {
    command->hello_options.emplace_back("driver_library", *cuda_driver);
  }
  auto timeout =
      TimeoutSecondsFlag(args, absl::ToDoubleSeconds(command->timeout));
  if (!timeout.ok()) return timeout.status();
  command->timeout = absl::Seconds(*timeout);
  // A ptxas that hangs on --version costs a --timeout given, not its 60 s.
  if (backend == kPtxasBackend && args.Has("timeout")) {
    command->hello_options.emplace_back(
        kPtxasQueryTimeoutOption,
        absl::StrCat(absl::ToInt64Milliseconds(command->timeout)));
  }
  auto client = WorkerClient::Start(*command);
  // The hints are for NVIDIA's stack, not for someone else's driver.
  const bool nvidia_cuda = backend == kCudaBackend && cuda_driver->empty();
  // The toolkit's hint only where ptxas is not found: a worker that failed
  // beside it (one of PTXDIFF_WORKER's, say) failed for its own reason.
  const bool no_ptxas = backend == kPtxasBackend && !FindPtxas({}).ok();
  if (!client.ok() &&
      (no_ptxas || nvidia_cuda ||
       absl::StrContains(client.status().message(), kNoAnswerToHello))) {
    // A worker that started too slowly (a loaded machine) has what it needs.
    const bool slow =
        absl::StrContains(client.status().message(), kNoAnswerToHello);
    return absl::FailedPreconditionError(absl::StrCat(
        client.status().message(), "\nhint: ",
        slow ? "on a loaded machine a worker may start slowly: try a larger "
               "--timeout"
        : backend == kCudaBackend
            ? "without a GPU, try --backend=ptxas (needs only the CUDA toolkit)"
            : "without the CUDA toolkit, try --backend=oracle"));
  }
  return client;
}

absl::StatusOr<std::string> CudaDriverFlag(const ParsedArgs& args,
                                           absl::string_view backend) {
  if (!args.Has("cuda-driver")) return "";
  const std::string library = args.Get("cuda-driver");
  if (backend != kCudaBackend) {
    return absl::InvalidArgumentError(
        absl::StrCat("--cuda-driver is an option of --backend=cuda, not of '",
                     backend, "'"));
  }
  if (library.empty()) {
    return absl::InvalidArgumentError(
        "--cuda-driver takes the path of a CUDA driver library");
  }
  return library;
}

absl::StatusOr<Reading> ReadingFlag(const ParsedArgs& args) {
  const std::string name = args.Get("reading", "spec");
  const std::optional<Reading> reading = ParseReading(name);
  if (!reading) {
    return absl::InvalidArgumentError(
        absl::StrCat("--reading is spec or hardware, not '", name, "'"));
  }
  return *reading;
}

int PrintBackendEval(const Tuple& tuple, Reading reading, WorkerClient& client,
                     const BatchOutcome& outcome, std::ostream& out) {
  const Variant& v = tuple.variant;
  const Result oracle = EvaluateWithReading(reading, v, tuple.operands);
  out << "oracle:  " << ResultText(v, oracle.bits, oracle.carry)
      << (oracle.defined()
              ? "  defined"
              : absl::StrCat("  undefined: ", Describe(oracle.undefined)))
      << "  (" << ReadingName(reading) << " reading)\n";
  const std::string name = client.identity().Describe();
  if (outcome.fault) {
    out << "backend: " << name << ": " << FaultKindName(outcome.fault->kind)
        << ": " << outcome.fault->detail << "\nverdict: backend fault\n";
    // It crashed or hung on this tuple (twice): a finding, as a tuple's
    // fault is, not bad input (exit 2 said so of `repro` of a crash).
    return 1;
  }
  const TupleResult& r = outcome.results[0];
  if (r.kind == ResultKind::kDecline) {
    out << "backend: " << name << ": declined: " << outcome.messages[r.message]
        << "\n";
  } else if (r.kind == ResultKind::kFault) {
    out << "backend: " << name << ": "
        << (r.fault == CaseFault::kHang ? "hang" : "crash") << ": "
        << outcome.messages[r.message] << "\n";
  } else {
    out << "backend: " << ResultText(v, r.bits, HasCarryOut(v) && r.carry)
        << "  (" << name << ")\n";
    if (const absl::string_view note = outcome.NoteOf(0); !note.empty()) {
      // How it was obtained ("executed: ...", with the code that ran).
      out << "         " << absl::StrReplaceAll(note, {{"\n", "\n         "}})
          << "\n";
    }
  }
  const Judgement j = JudgeTuple(tuple, r, reading);
  out << "verdict: " << VerdictName(j.verdict);
  if (j.verdict == Verdict::kOtherReading) {
    out << ": the "
        << ReadingName(reading == Reading::kSpec ? Reading::kHardware
                                                 : Reading::kSpec)
        << " reading's value (erratum " << j.erratum->id << "), not a bug";
  }
  out << "\n";
  switch (j.verdict) {
    case Verdict::kMismatch:
    case Verdict::kFault:
      return 1;
    // Nothing judged: exit 0 said "agree" of a tool that now fails on
    // every module (`repro ENTRY && echo fixed`).
    case Verdict::kDeclined:
    case Verdict::kUnspecified:
      return kExitNotJudged;
    case Verdict::kAgree:
    case Verdict::kOtherReading:
      return kExitOk;
  }
  return kExitOk;
}

namespace {

// The sources of `v` among `names` that may be runtime values: a sweep
// over many variants takes each name where a variant has it.
// `taken` marks the names some variant took.
uint8_t RuntimeSourcesNamed(const Variant& v,
                            const std::vector<std::string>& names,
                            std::vector<bool>& taken) {
  uint8_t runtime = 0;
  for (size_t k = 0; k < names.size(); ++k) {
    if (absl::StatusOr<uint8_t> one = ParseRuntimeSources(v, names[k]);
        one.ok()) {
      runtime |= *one;
      taken[k] = true;
    }
  }
  return runtime;
}

}  // namespace

int RunSweep(const std::vector<std::string>& args, std::ostream& out,
             std::ostream& err) {
  auto fail = [&err](const absl::Status& s) {
    err << "ptxdiff sweep: " << s.message() << "\n";
    return kExitBadInput;
  };
  auto parsed =
      ParseArgs(args, {"exhaustive"},
                {"backend", "family", "tuples", "seed", "arch", "timeout",
                 "batch", "reading", "cuda-driver", "runtime", kMaxBitsFlag,
                 kSampleFlag});
  if (!parsed.ok()) return fail(parsed.status());
  if (!parsed->positional.empty()) {
    return fail(absl::InvalidArgumentError(
        absl::StrCat("unexpected argument '", parsed->positional[0], "'")));
  }
  auto per_variant = IntFlag(*parsed, "tuples", 16, 1, 1 << 20);
  auto seed = IntFlag(*parsed, "seed", 1, 1, INT64_MAX);
  auto batch = IntFlag(*parsed, "batch", 4096, 1, kMaxTuplesPerBatch);
  auto variants = SelectVariants(*parsed);
  auto reading = ReadingFlag(*parsed);
  for (const absl::Status& s :
       {per_variant.status(), seed.status(), batch.status(), variants.status(),
        reading.status()}) {
    if (!s.ok()) return fail(s);
  }
  const bool exhaustive = parsed->Has("exhaustive");
  for (const char* flag : {kMaxBitsFlag, kSampleFlag}) {
    if (parsed->Has(flag) && !exhaustive) {
      return fail(absl::InvalidArgumentError(
          absl::StrCat("--", flag, " is a flag of --exhaustive")));
    }
  }
  if (exhaustive && (parsed->Has("tuples") || parsed->Has("runtime"))) {
    return fail(absl::InvalidArgumentError(
        "--exhaustive runs every input (every source that can be a runtime "
        "value one): it takes neither --tuples nor --runtime"));
  }
  auto client = StartBackend(*parsed);
  if (!client.ok()) return fail(client.status());
  if (exhaustive) {
    out << "sweep: backend " << (*client)->identity().Describe() << "\n";
    return RunExhaustiveSweepCommand(*parsed, **client, *variants, *reading,
                                     out, err);
  }

  std::mt19937_64 rng(*seed);
  std::vector<Tuple> tuples;
  std::vector<Operands> ops(*per_variant);
  const std::vector<std::string> runtime_names = absl::StrSplit(
      parsed->Get("runtime"), absl::ByAnyChar(", "), absl::SkipEmpty());
  std::vector<bool> taken(runtime_names.size());
  for (const Variant& v : *variants) {
    FillEdgeTuples(v, rng, ops);
    const uint8_t runtime = RuntimeSourcesNamed(v, runtime_names, taken);
    for (const Operands& o : ops) tuples.push_back({v, o, runtime});
  }
  // A name no variant takes is a mistake, not a sweep of all immediates.
  for (size_t k = 0; k < runtime_names.size(); ++k) {
    if (!taken[k]) {
      return fail(absl::InvalidArgumentError(absl::StrCat(
          "--runtime ", runtime_names[k],
          ": no variant swept has a source of that name that can be a "
          "runtime value (variants --json lists runtime_sources)")));
    }
  }
  out << "sweep: backend " << (*client)->identity().Describe() << "\n";
  out.flush();
  const std::string toolchain = (*client)->identity().toolchain;
  // Ctrl-C or SIGTERM stops it between batches, as `sweep --exhaustive`:
  // the summary of the batches judged, then exit 130.
  const ScopedInterruptHandler on_interrupt;
  const absl::Time start = absl::Now();
  DiffSummary s;
  RunDifferential(**client, tuples, *batch, s, *reading,
                  [] { return Interrupted(); });
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  const std::string stopped =
      Interrupted() ? absl::StrCat(", stopped after ", s.counts.tuples) : "";
  out << absl::StrFormat(
      "sweep: %d variants x %d tuples = %d tuples%s in %.1f s (%.0f "
      "tuples/s)\n"
      "  agreed          %d\n  mismatched      %d\n  declined        %d\n"
      "  unspecified     %d\n  other reading   %d  (the %s reading's value: "
      "not bugs)\n"
      "  faulted         %d  (the implementation crashed or hung on them)\n"
      "  faulty batches  %d  (worker restarts: %d)\n",
      variants->size(), *per_variant, tuples.size(), stopped, seconds,
      s.counts.tuples / seconds, s.counts.agreed, s.counts.mismatched,
      s.counts.declined, s.counts.unspecified, s.counts.other_reading,
      ReadingName(*reading == Reading::kSpec ? Reading::kHardware
                                             : Reading::kSpec),
      s.counts.faulted, s.counts.faulty_batches, (*client)->restarts());
  if (!s.mismatches.empty()) {
    out << "mismatches (first " << s.mismatches.size()
        << "; replay with --backend):\n";
    for (const std::string& m : s.mismatches) out << "  " << m << "\n";
  }
  const auto declines = s.DeclinesByCount();
  constexpr size_t kMaxReasons = 10;
  if (!declines.empty()) out << "declined, by reason:\n";
  for (size_t i = 0; i < std::min(declines.size(), kMaxReasons); ++i) {
    out << absl::StrFormat("  %8d  %s\n", declines[i].second,
                           FirstLine(declines[i].first, toolchain));
  }
  if (declines.size() > kMaxReasons) {
    out << "  (" << declines.size() - kMaxReasons << " more reasons)\n";
  }
  for (const std::string& f : s.faults)
    out << "fault: " << FirstLine(f, toolchain) << "\n";
  if (!s.environment_failure.empty())  // not the backend's: no verdict
    return Fail(err, "sweep", absl::UnavailableError(s.environment_failure));
  if (Interrupted()) {
    err << "ptxdiff sweep: stopped; the tuples of the batches not finished "
           "are not judged\n";
    return kExitInterrupted;
  }
  // A sweep that tested nothing must not pass as one that found nothing.
  const auto top =
      declines.empty() ? std::pair<std::string, int64_t>() : declines[0];
  const std::string nothing =
      NothingTestedError(s.counts, top.first, top.second);
  if (!nothing.empty()) err << "ptxdiff sweep: " << nothing << "\n";
  return s.counts.mismatched > 0 || s.counts.faulty_batches > 0 ||
                 s.counts.faulted > 0 || !nothing.empty()
             ? 1
             : 0;
}

}  // namespace ptxdiff
