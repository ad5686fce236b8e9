#include "fuzzers/program_target.h"

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "common/status_macros.h"
#include "fuzzers/fuzz_config.h"
#include "isa/spelling.h"
#include "isa/tuple.h"
#include "program/composed_oracle.h"
#include "program/program_encoding.h"

namespace ptxdiff {
namespace {

absl::Status Invalid(absl::string_view key, absl::string_view wants,
                     absl::string_view value) {
  return absl::InvalidArgumentError(
      absl::StrCat(key, "=", value, ": expected ", wants));
}

absl::Status Apply(const std::string& key, const std::string& value,
                   ProgramFuzzConfig& c) {
  if (key == "PTXDIFF_MODE") {
    if (value != "campaign" && value != "crash")
      return Invalid(key, "campaign or crash", value);
    c.mode = value == "crash" ? ProgramFuzzConfig::Mode::kCrash
                              : ProgramFuzzConfig::Mode::kCampaign;
  } else if (key == "PTXDIFF_BACKEND") {
    c.backend.backend = value;
  } else if (key == "PTXDIFF_ARCH") {
    c.backend.arch = value;
  } else if (key == "PTXDIFF_TRIAGE_DIR") {
    c.triage_dir = value;
  } else if (key == "PTXDIFF_READING") {
    const std::optional<Reading> reading = ParseReading(value);
    if (!reading) return Invalid(key, "spec or hardware", value);
    c.reading = *reading;
  } else if (key == "PTXDIFF_THREADS") {
    if (!absl::SimpleAtoi(value, &c.threads) || c.threads < 1 || c.threads > 64)
      return Invalid(key, "threads from 1 to 64", value);
  } else if (key == "PTXDIFF_TIMEOUT") {
    int seconds = 0;
    if (!absl::SimpleAtoi(value, &seconds) || seconds < 1 || seconds > 3600)
      return Invalid(key, "seconds from 1 to 3600", value);
    c.backend.timeout = absl::Seconds(seconds);
  }
  return absl::OkStatus();
}

constexpr const char* kKeys[] = {"PTXDIFF_MODE",    "PTXDIFF_BACKEND",
                                 "PTXDIFF_ARCH",    "PTXDIFF_TRIAGE_DIR",
                                 "PTXDIFF_READING", "PTXDIFF_TIMEOUT",
                                 "PTXDIFF_THREADS"};

// The spellings of a program's instruction steps ("mov" for a move), for
// crash mode's first line.
std::string StepsText(const Program& p) {
  std::vector<std::string> steps;
  for (const ProgramStep& s : p.steps) {
    if (s.kind == ProgramStep::kInstruction) steps.push_back(Spell(s.variant));
    if (s.kind == ProgramStep::kMove) steps.push_back("mov");
  }
  return absl::StrJoin(steps, ", ");
}

}  // namespace

absl::StatusOr<ProgramFuzzConfig> ProgramFuzzConfigFromPairs(
    const std::vector<std::pair<std::string, std::string>>& pairs) {
  ProgramFuzzConfig config;
  for (const auto& [key, value] : pairs) {
    PTXDIFF_RETURN_IF_ERROR(Apply(key, value, config));
  }
  return config;
}

absl::StatusOr<ProgramFuzzConfig> ProgramFuzzConfigFromEnvironment() {
  // As the differential target: a file first (OSS-Fuzz sets no variable of
  // ours; .clusterfuzzlite/build.sh writes program_fuzzer.conf), then the
  // environment over it.
  PTXDIFF_ASSIGN_OR_RETURN(auto pairs, ConfigFilePairs());
  for (const char* key : kKeys) {
    if (const char* value = std::getenv(key)) pairs.emplace_back(key, value);
  }
  return ProgramFuzzConfigFromPairs(pairs);
}

absl::StatusOr<std::unique_ptr<ProgramFuzzTarget>> ProgramFuzzTarget::Create(
    ProgramFuzzConfig config) {
  // An OSS-Fuzz build's ptxas, bundled beside the target ($PTXAS, if set,
  // is FindPtxas's to honour).
  if (config.backend.backend == "ptxas" && config.backend.ptxas.empty() &&
      std::getenv("PTXAS") == nullptr) {
    config.backend.ptxas = BundledPtxas();
  }
  std::unique_ptr<ProgramFuzzTarget> target(
      new ProgramFuzzTarget(std::move(config)));
  const ProgramBackendOptions& backend = target->config_.backend;
  if (target->config_.mode == ProgramFuzzConfig::Mode::kCrash) {
    PTXDIFF_ASSIGN_OR_RETURN(target->crash_worker_,
                             StartProgramWorker(backend));
    target->presenter_ = target->crash_worker_.presenter;
    return target;
  }
  PTXDIFF_ASSIGN_OR_RETURN(ProgramWorkers workers, ProgramWorkersFor(backend));
  PTXDIFF_RETURN_IF_ERROR(target->StartCampaign(std::move(workers)));
  return target;
}

ProgramFuzzTarget::ProgramFuzzTarget(ProgramFuzzConfig config)
    : config_(std::move(config)) {}

absl::Status ProgramFuzzTarget::StartCampaign(ProgramWorkers workers) {
  campaign_ = std::thread(
      [this, workers = std::move(workers)] { RunCampaign(workers); });
  std::unique_lock<std::mutex> lock(mu_);
  changed_.wait(lock,
                [this] { return presenter_ != nullptr || campaign_ended_; });
  if (presenter_ != nullptr) return absl::OkStatus();
  lock.unlock();
  campaign_.join();
  const absl::Status failed = report_.status();
  // Nothing ran: nothing to say at the end.
  report_ = ProgramCampaignReport{};
  stopped_ = true;
  return failed.ok() ? absl::InternalError(
                           "the program campaign ended "
                           "before its workers started")
                     : failed;
}

void ProgramFuzzTarget::RunCampaign(const ProgramWorkers& workers) {
  const ProgramCampaignOptions options{
      .max_time = config_.max_time,
      .threads = config_.threads,
      .reading = config_.reading,
      .triage_dir = config_.triage_dir,
      .next = [this](std::mt19937_64&) { return Next(); },
      .on_shape = [this](const ProgramShape& shape) { LearnShape(shape); },
  };
  absl::StatusOr<ProgramCampaignReport> report = RunProgramsOnEngine(
      options, config_.backend, workers,
      [](const std::string& line) {
        std::fprintf(stderr, "ptxdiff: programs: %s\n", line.c_str());
      },
      [this](const ProgramsRunBackend& on) {
        std::lock_guard<std::mutex> lock(mu_);
        presenter_ = on.presenter;
        changed_.notify_all();
      });
  // Out of time: the fuzz loop must not wait on a queue nobody takes.
  std::lock_guard<std::mutex> lock(mu_);
  report_ = std::move(report);
  stopping_ = true;
  campaign_ended_ = true;
  changed_.notify_all();
}

ProgramFuzzTarget::~ProgramFuzzTarget() { Stop(); }

int ProgramFuzzTarget::RunInput(const uint8_t* data, size_t size) {
  absl::StatusOr<Program> program = DecodeProgramInput(
      absl::string_view(reinterpret_cast<const char*>(data), size));
  if (!program.ok()) {
    // libFuzzer starts an empty corpus with one such input ("\n"); one
    // is kept, as its own feature, for the mutator to make a program of.
    if (counters_ != nullptr) ++Features()[kNotAProgram];
    return 0;
  }
  Signal(*program);
  if (config_.mode == ProgramFuzzConfig::Mode::kCrash) {
    CheckOrAbort(*program);
    return 0;
  }
  std::unique_lock<std::mutex> lock(mu_);
  changed_.wait(lock,
                [this] { return stopping_ || queue_.size() < config_.queue; });
  if (stopping_) return 0;
  queue_.push_back(*std::move(program));
  changed_.notify_all();
  return 0;
}

std::optional<Program> ProgramFuzzTarget::Next() {
  std::unique_lock<std::mutex> lock(mu_);
  changed_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
  if (queue_.empty()) return std::nullopt;
  Program p = std::move(queue_.front());
  queue_.pop_front();
  changed_.notify_all();
  return p;
}

void ProgramFuzzTarget::Signal(const Program& program) {
  if (counters_ == nullptr) return;
  bool wide = false;
  for (const ProgramInput& in : program.inputs) wide |= in.width == 64;
  bool loop = false, guard = false, branch = false;
  for (const ProgramStep& s : program.steps) {
    loop |= s.kind == ProgramStep::kLoopBegin;
    guard |= !s.guard.empty();
    branch |= s.kind == ProgramStep::kBranch || s.kind == ProgramStep::kLabel;
  }
  const StepObserver observe = [this](const Variant& v, const Operands& o,
                                      const Result& r) {
    const uint32_t classes =
        SemanticClasses(Tuple{.variant = v, .operands = o}, r);
    for (int c = 0; c < kNumSemanticClasses; ++c) {
      if ((classes >> c) & 1) {
        ++counters_[static_cast<int>(v.family) * kNumSemanticClasses + c];
      }
    }
  };
  const absl::StatusOr<std::vector<ProgramValue>> outputs = EvaluateProgram(
      program, WitnessInputs(program), config_.reading, &observe);
  bool undefined = false;
  for (const ProgramValue& v : outputs.value_or(std::vector<ProgramValue>{})) {
    undefined |= !v.defined;
  }
  uint8_t* features = Features();
  features[kHasLoop] += loop;
  features[kHasGuard] += guard;
  features[kUndefinedOutput] += undefined;
  features[kFiveOrMoreSteps] += CountSteps(program) >= 5;
  features[kWideInput] += wide;
  features[kThreadInput] += HasThreadInputs(program);
  features[kHasBranchOrLabel] += branch;
  features[kHasExit] += HasExit(program);
}

void ProgramFuzzTarget::CheckOrAbort(const Program& program) {
  ProgramCampaignReport& counts = *report_;
  ++counts.programs;
  for (ProgramInputs form :
       {ProgramInputs::kImmediate, ProgramInputs::kRuntime}) {
    // Without inputs the two kernels are one.
    if (form == ProgramInputs::kRuntime && program.inputs.empty()) continue;
    const absl::StatusOr<std::vector<ProgramCheck>> checks =
        crash_worker_.backend->Check({&program, 1}, form, config_.reading,
                                     absl::InfiniteFuture());
    if (!checks.ok()) {  // the harness's failure, not the backend's finding
      const std::string error = absl::StrCat(
          presenter_->Name(), " on a program: ", checks.status().message());
      std::fprintf(stderr, "ptxdiff: %s\n", error.c_str());
      if (counts.errors.size() < 20) counts.errors.push_back(error);
      continue;
    }
    const ProgramCheck& check = (*checks)[0];
    if (check.judged) {
      ++(form == ProgramInputs::kImmediate ? counts.folded : counts.claimed);
      counts.executed += check.executed;
    }
    if (check.mismatch) {
      Abort(program, presenter_->MismatchClass(*check.mismatch),
            CauseOfMismatch(program, *check.mismatch, config_.reading));
    }
    if (check.fault) {
      Abort(program, presenter_->FindingClass(form),
            CauseOfFault(program, *check.fault));
    }
  }
}

void ProgramFuzzTarget::Abort(const Program& program, const std::string& form,
                              const ProgramCrashCause& cause) {
  const bool keyed = cause.keyed != ProgramCrashCause::kUnkeyed;
  AbortWithProgramCause(
      cause, absl::StrCat("ptxdiff: ", FindingKindName(cause.kind), " ",
                          presenter_->Name(), " ", form, " program (",
                          StepsText(program), "); ", keyed ? "key: " : "",
                          cause.key, "; cause: ", CauseText(cause)));
}

const ProgramCampaignReport& ProgramFuzzTarget::Stop() {
  if (!stopped_) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
      changed_.notify_all();
    }
    if (campaign_.joinable()) campaign_.join();
    stopped_ = true;
    if (!report_.ok()) {
      std::fprintf(stderr, "ptxdiff: the program campaign did not run: %s\n",
                   std::string(report_.status().message()).c_str());
      report_ = ProgramCampaignReport{};
    }
    LearnFinalShape(*report_);
  }
  return *report_;
}

void ProgramFuzzTarget::LearnFinalShape(const ProgramCampaignReport& report) {
  std::lock_guard<std::mutex> lock(shape_mu_);
  for (const std::string& variant : report.suppressed) {
    if (!absl::c_linear_search(suppressed_, variant))
      suppressed_.push_back(variant);
  }
  discouraged_ = report.discouraged;
}

ProgramShape ProgramFuzzTarget::Shape() const {
  ProgramShape shape{.thread_inputs = presenter_->JudgesThreadInputs(),
                     .loaded_inputs = presenter_->JudgesLoadedInputs()};
  std::lock_guard<std::mutex> lock(shape_mu_);
  shape.suppressed = suppressed_;
  shape.discouraged = discouraged_;
  return shape;
}

void ProgramFuzzTarget::LearnShape(const ProgramShape& campaign_shape) {
  std::lock_guard<std::mutex> lock(shape_mu_);
  suppressed_ = campaign_shape.suppressed;
  discouraged_ = campaign_shape.discouraged;
}

std::string ProgramFuzzTarget::EnvironmentFailure() const {
  std::lock_guard<std::mutex> lock(mu_);
  return campaign_ended_ && report_.ok() ? report_->environment_failure : "";
}

std::string ProgramFuzzTarget::Describe() const {
  return absl::StrCat(presenter_->Identity(), ", triage directory ",
                      config_.triage_dir);
}

std::string ProgramFuzzTarget::Summary(const ProgramCampaignReport& r) {
  std::vector<std::string> filed;
  for (const FiledProgram& f : r.filed) {
    filed.push_back(
        absl::StrCat(f.is_new ? "new " : "again ", f.entry, ": ", f.what));
  }
  std::string out = absl::StrCat(
      r.programs, " programs checked (", r.folded, " judged with immediates, ",
      r.claimed, " with runtime inputs, ", r.executed,
      " on code run on the CPU), ", r.disagreements, " disagreements, ",
      r.crashes, " crashes, ", r.hangs, " hangs, ", r.known, " of them known, ",
      r.known_repeats,
      " counted in the entry of a cause filed "
      "before, ",
      r.filed.size(), " filed");
  if (r.pending > 0) {
    absl::StrAppend(&out, "; ", r.pending,
                    " kept in the triage directory's .pending/ for the next "
                    "run");
  }
  if (!filed.empty())
    absl::StrAppend(&out, ":\n  ", absl::StrJoin(filed, "\n  "));
  for (const std::string& e : r.errors) absl::StrAppend(&out, "\nerror: ", e);
  return out;
}

}  // namespace ptxdiff
