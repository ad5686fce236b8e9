#include "fuzzers/differential_target.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "client/worker_locator.h"
#include "common/files.h"
#include "common/fnv1a.h"
#include "common/status_macros.h"
#include "fuzzers/cause_frames.h"
#include "harness/semantic_classes.h"
#include "isa/family_table.h"
#include "isa/fuzz_input.h"
#include "isa/spelling.h"
#include "program/program_lane.h"
#include "protocol/backend_names.h"

namespace ptxdiff {
namespace {

// "ptxdiff: cannot write PATH: cause" on stderr if `written` failed: what
// the CLI reads as a failed write (cli/fuzzer_output.cc), which fails the
// run. The files.h writers' messages may already begin so ("cannot write
// PATH: ", "cannot write to PATH: "), and are then not said twice.
void SayIfNotWritten(const std::string& path, const absl::Status& written) {
  if (written.ok()) return;
  absl::string_view cause = written.message();
  if (!absl::ConsumePrefix(&cause, absl::StrCat("cannot write ", path, ": ")))
    absl::ConsumePrefix(&cause, absl::StrCat("cannot write to ", path, ": "));
  std::fprintf(stderr, "ptxdiff: cannot write %s: %s\n", path.c_str(),
               std::string(cause).c_str());
}

// "ptxdiff: value-mismatch ptxas fns.b32 min; cause: value-mismatch in fns":
// the signature, then the cause the stack's top frames name
// (cause_frames.h), which is what ClusterFuzz files one issue per.
[[noreturn]] void CrashWithSignature(const Signature& s, Family family) {
  cause::AbortWithCauseInFrames(
      s.kind, family,
      absl::StrCat("ptxdiff: ", FindingKindName(s.kind), " ", s.backend, " ",
                   s.spelling, " ", s.disagreement_class,
                   "; cause: ", cause::CauseText(s.kind, family)));
}

// Narrows `filter` to the families of which `backend` runs at least one
// variant: the fuzz loop (and its mutator) then spends nothing on tuples
// that would be generated only to be dropped (against ptxas, most of the
// video families). FailedPrecondition when the backend runs none of them: a
// campaign would check nothing (ptxas never folds prmt). Read from the
// supports lines once (SupportedVariants).
absl::Status NarrowToSupported(const WorkerIdentity& backend,
                               VariantFilter& filter) {
  std::vector<bool> runs(kNumFamilies, false);
  const std::vector<bool> supported_variants = SupportedVariants(backend);
  for (size_t i = 0; i < supported_variants.size(); ++i) {
    if (supported_variants[i])
      runs[static_cast<int>(AllVariants()[i].family)] = true;
  }
  std::vector<Family> supported;
  for (const FamilyInfo& info : AllFamilies()) {
    if (filter.Allows(info.family) && runs[static_cast<int>(info.family)]) {
      supported.push_back(info.family);
    }
  }
  if (supported.empty()) {
    std::vector<std::string> asked;
    for (const FamilyInfo& info : AllFamilies()) {
      if (filter.Allows(info.family)) asked.emplace_back(info.opcode);
    }
    const std::string families = absl::StrJoin(asked, ", ");
    return absl::FailedPreconditionError(absl::StrCat(
        "the backend ", backend.name,
        " runs no variant of the families asked for (",
        families.size() > 200 ? "all of them" : families,
        "), so a campaign would check nothing; `ptxdiff sweep --backend ",
        backend.name, " --family ", asked.empty() ? "" : asked[0],
        " --tuples 1` shows what it declines"));
  }
  filter.include = std::move(supported);
  filter.runtime_forms = backend.forms;
  filter.runtime_by_default = backend.runtime_by_default;
  return absl::OkStatus();
}

// The program lane of `config`'s campaign (--programs), on the senders'
// workers where they run programs: judged against the reading asked for,
// filed in the same triage directory (a tool's refusals remembered where
// its tuples' are), each filing said on stderr.
CaseLaneMaker ProgramLaneMaker(const FuzzConfig& config,
                               const std::string& bundled_ptxas,
                               absl::Time deadline) {
  return [config, bundled_ptxas, deadline](const WorkerIdentity& identity)
             -> absl::StatusOr<std::unique_ptr<CaseLane>> {
    ProgramBackendOptions backend{.backend = config.backend,
                                  .arch = config.arch,
                                  .driver_library = config.cuda_driver};
    if (std::getenv("PTXAS") == nullptr) backend.ptxas = bundled_ptxas;
    ProgramCampaignOptions options;
    options.triage_dir = config.triage_dir;
    options.reading = config.reading;
    options.seed = static_cast<uint64_t>(getpid());
    absl::string_view tool = config.backend;
    if (!config.refusals_dir.empty() &&
        absl::ConsumePrefix(&tool, kPtxCmdPrefix)) {
      options.refusal_memory.emplace(config.refusals_dir, std::string(tool),
                                     config.arch.empty() ? "sm_90"
                                                         : config.arch);
    }
    return MakeProgramLane(identity, backend, std::move(options), deadline,
                           [](const std::string& line) {
                             std::fprintf(stderr, "ptxdiff: programs: %s\n",
                                          line.c_str());
                           });
  };
}

// The default backend: a GPU's, else the ptxas bundled beside the target
// (an OSS-Fuzz build's), else the best here.
std::string BackendByDefault(const std::string& bundled_ptxas) {
  std::string best = ChooseDefaultBackend().name;
  if (best == kCudaBackend || bundled_ptxas.empty()) return best;
  return std::string(kPtxasBackend);
}

}  // namespace

absl::StatusOr<std::unique_ptr<DifferentialTarget>> DifferentialTarget::Create(
    FuzzConfig config) {
  const std::string bundled_ptxas = BundledPtxas();
  if (config.backend.empty()) config.backend = BackendByDefault(bundled_ptxas);
  std::string worker = config.worker;
  if (worker.empty() && config.backend.rfind("exec:", 0) != 0) {
    auto found = FindWorkerBinary();
    if (!found.ok()) return found.status();
    worker = *found;
  }
  auto command = CommandForBackend(config.backend, worker);
  if (!command.ok()) return command.status();
  if (!config.arch.empty())
    command->hello_options.emplace_back("arch", config.arch);
  // $PTXAS, if set, is the worker's to honour.
  if (config.backend == kPtxasBackend && !bundled_ptxas.empty() &&
      std::getenv("PTXAS") == nullptr) {
    command->hello_options.emplace_back("ptxas", bundled_ptxas);
  }
  if (!config.cuda_driver.empty()) {
    command->hello_options.emplace_back("driver_library", config.cuda_driver);
  }
  if (!config.refusals_dir.empty() &&
      absl::StartsWith(config.backend, kPtxCmdPrefix)) {
    command->hello_options.emplace_back("refusals_dir", config.refusals_dir);
  }
  command->timeout = absl::Seconds(config.timeout_seconds);
  if (config.mode == FuzzConfig::Mode::kCrash) {
    auto client = WorkerClient::Start(*command);
    if (!client.ok()) return client.status();
    PTXDIFF_RETURN_IF_ERROR(
        NarrowToSupported((*client)->identity(), config.filter));
    // What the summary's "reaching X of the Y variants" counts against, as
    // a campaign's Snapshot says it.
    int64_t supported = 0;
    for (size_t i = 0; i < AllVariants().size(); ++i) {
      supported += (*client)->supported_variants()[i] &&
                   config.filter.Allows(AllVariants()[i].family);
    }
    auto target = std::unique_ptr<DifferentialTarget>(
        new DifferentialTarget(std::move(config), *std::move(client), nullptr));
    target->stats_.supported_variants = supported;
    return target;
  }
  CampaignOptions options;
  options.worker = *command;
  options.triage_dir = config.triage_dir;
  // Left empty when every family is fuzzed: Campaign::Start then takes
  // AllVariants() after starting the workers, so their start-up and the
  // table's overlap.
  if (!config.filter.include.empty() || !config.filter.exclude.empty()) {
    for (const Variant& v : AllVariants()) {
      if (config.filter.Allows(v.family)) options.variants.push_back(v);
    }
  }
  options.in_flight = config.in_flight;
  options.batch_size = config.batch_size;
  options.systematic = config.systematic;
  options.reading = config.reading;
  if (config.deadline_unix_seconds > 0) {
    // Calibration gets at most a twentieth of what is left of the run.
    const absl::Duration left =
        absl::FromUnixSeconds(config.deadline_unix_seconds) - absl::Now();
    options.calibration_budget =
        std::clamp(left / 20, absl::Seconds(1), options.calibration_budget);
    // Isolating a hang costs a timeout per halving: most of a short run
    // may go to it, and it ends at the deadline whatever is left of it.
    options.isolation_budget =
        std::clamp(left / 4, absl::Seconds(5), options.isolation_budget);
    options.deadline = absl::FromUnixSeconds(config.deadline_unix_seconds);
    // At the end, the batches in flight get a fortieth of the run to finish
    // (a hanging one would take its whole timeout): --max-time holds to
    // within a few percent.
    options.stop_grace =
        std::clamp(left / 40, absl::Milliseconds(500), options.stop_grace);
  }
  if (config.programs_share > 0) {
    options.lane = ProgramLaneMaker(config, bundled_ptxas, options.deadline);
    options.lane_share = config.programs_share;
  }
  auto campaign = Campaign::Start(std::move(options));
  if (!campaign.ok()) return campaign.status();
  if (const std::string& why = (*campaign)->Snapshot().lane_not_started;
      !why.empty()) {
    std::fprintf(stderr, "ptxdiff: no programs here (%s): fuzzing tuples only\n",
                 why.c_str());
  }
  PTXDIFF_RETURN_IF_ERROR(
      NarrowToSupported((*campaign)->identity(), config.filter));
  return std::unique_ptr<DifferentialTarget>(
      new DifferentialTarget(std::move(config), nullptr, *std::move(campaign)));
}

DifferentialTarget::DifferentialTarget(FuzzConfig config,
                                       std::unique_ptr<WorkerClient> client,
                                       std::unique_ptr<Campaign> campaign)
    : config_(std::move(config)),
      client_(std::move(client)),
      campaign_(std::move(campaign)),
      steer_(campaign_.get()),
      reached_(AllVariants().size()) {}

const WorkerIdentity& DifferentialTarget::backend() const {
  return campaign_ ? campaign_->identity() : client_->identity();
}

int DifferentialTarget::RunInput(const uint8_t* data, size_t size) {
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  input_ = bytes;
  auto tuples =
      DecodeFuzzInputInDefaultForm(bytes, config_.filter.runtime_by_default);
  if (!tuples.ok() || !config_.filter.Allows((*tuples)[0].variant.family))
    return -1;
  ++stats_.inputs;
  const Variant& v = (*tuples)[0].variant;
  // The coverage signal comes from the oracle alone.
  oracle_.resize(tuples->size());
  for (size_t i = 0; i < tuples->size(); ++i) {
    const Tuple& t = (*tuples)[i];
    oracle_[i] = Evaluate(t.variant, t.operands);
    const uint32_t classes = SemanticClasses(t, oracle_[i]);
    if (counters_ != nullptr) {
      for (int c = 0; c < kNumSemanticClasses; ++c) {
        if (classes & (1u << c)) {
          counters_[static_cast<int>(v.family) * kNumSemanticClasses + c] = 1;
        }
      }
    }
    if (campaign_) campaign_->Offer(t, oracle_[i], classes);
  }
  if (!campaign_) RunSynchronously(*tuples);
  // Repeats are being dropped, or the breadth pass is underway: give the
  // CPU to the backend and the systematic source for a moment.
  if (campaign_ && campaign_->FuzzLoopShouldYield()) usleep(500);
  if (absl::Now() - last_stats_write_ > absl::Seconds(1)) WriteStats();
  return 0;
}

void DifferentialTarget::RunSynchronously(const std::vector<Tuple>& tuples) {
  if (const int index = VariantIndex(tuples[0].variant); !reached_[index]) {
    reached_[index] = true;
    ++stats_.variants_reached;
  }
  const BatchOutcome out = client_->Run(tuples);
  stats_.worker_restarts = client_->restarts();
  stats_.counts.tuples += tuples.size();
  if (out.fault && out.fault->kind == FaultKind::kEnvironment) {
    environment_failure_ = out.fault->detail;  // not the backend's: unjudged
    return;
  }
  Finding f;
  f.backend = client_->identity().name;
  f.backend_identity = client_->identity().Describe();
  if (out.fault) {
    ++stats_.counts.faulty_batches;
    f.kind = FromFault(out.fault->kind);
    f.tuple = tuples[0];
    f.oracle = oracle_[0];
    Crash(f);
  }
  for (size_t i = 0; i < tuples.size(); ++i) {
    const TupleResult& r = out.results[i];
    const Judgement j = JudgeTuple(tuples[i], r, config_.reading);
    stats_.counts.Count(j.verdict);
    if (r.kind == ResultKind::kDecline) CountDecline(r.code);
    if (j.verdict == Verdict::kDeclined && r.message < out.messages.size()) {
      decline_reasons_.Add(out.messages[r.message]);
    }
    if (j.verdict == Verdict::kFault) {  // the implementation died on it
      f.kind = r.fault == CaseFault::kHang ? FindingKind::kHang
                                           : FindingKind::kCrash;
      f.tuple = tuples[i];
      f.oracle = j.oracle;
      Crash(f);
    }
    if (j.verdict != Verdict::kMismatch) continue;
    f.tuple = tuples[i];
    f.oracle = j.oracle;
    f.reading = config_.reading;
    f.backend_bits = j.backend_bits;
    f.backend_carry = j.backend_carry;
    f.backend_note = std::string(out.NoteOf(i));
    Crash(f);
  }
}

void DifferentialTarget::CountDecline(DeclineCode code) {
  switch (code) {  // as stats() sorts a campaign's declined_by_code
    case DeclineCode::kUnsupportedVariant:
      ++stats_.declined_unsupported;
      break;
    case DeclineCode::kNotEvaluable:
      ++stats_.declined_not_evaluable;
      break;
    case DeclineCode::kOperandForm:
      ++stats_.declined_operand_form;
      break;
    default:
      ++stats_.declined_other;
      break;
  }
}

void DifferentialTarget::Crash(const Finding& f) {
  const Signature s = SignatureOf(f);
  if (!config_.findings_dir.empty()) {
    // Appended (O_APPEND: -fork=N processes share the file): the crash is
    // reported whether or not this is written.
    const CrashOrigin origin{
        absl::StrCat(FindingKindName(s.kind), " ", s.backend, " ", s.spelling,
                     " ", s.disagreement_class),
        config_.backend};
    const std::string path =
        absl::StrCat(config_.findings_dir, "/", kCrashOriginsFile);
    SayIfNotWritten(path, AppendToFile(path, CrashOriginLine(input_, origin)));
  }
  CrashWithSignature(s, f.tuple.variant.family);
}

FuzzStats DifferentialTarget::stats() const {
  if (!campaign_) {
    FuzzStats s = stats_;
    std::tie(s.top_decline, s.top_decline_count) = decline_reasons_.Top();
    return s;
  }
  const CampaignStats c = campaign_->Snapshot();
  FuzzStats s;
  s.inputs = stats_.inputs;
  s.counts = c.counts;
  s.new_findings = c.new_findings;
  s.known_findings = c.known_findings;
  s.explained_findings = c.explained_findings;
  s.worker_restarts = c.worker_restarts;
  s.answered_given_longer = c.answered_given_longer;
  s.variants_reached = c.variants_reached;
  s.supported_variants = c.supported_variants;
  s.offered = c.offered;
  s.queued = c.queue.queued;
  s.duplicates = c.queue.duplicates;
  s.dropped = c.queue.dropped;
  s.systematic = c.systematic;
  s.skipped_undefined = c.skipped_undefined;
  s.skipped_unsupported = c.skipped_unsupported;
  s.skipped_declining = c.skipped_declining;
  s.withheld_faulting = c.withheld_faulting;
  s.sent_again = c.sent_again;
  s.on_reused_code = c.on_reused_code;
  s.other_reading_by_erratum = c.other_reading_by_erratum;
  s.declined_unsupported =
      c.declined_by_code[static_cast<int>(DeclineCode::kUnsupportedVariant)];
  s.declined_not_evaluable =
      c.declined_by_code[static_cast<int>(DeclineCode::kNotEvaluable)];
  s.declined_operand_form =
      c.declined_by_code[static_cast<int>(DeclineCode::kOperandForm)];
  s.declined_other = c.declined_by_code[static_cast<int>(DeclineCode::kOther)] +
                     c.declined_by_code[static_cast<int>(DeclineCode::kNone)];
  s.declined_not_run = c.declined_not_run;
  s.filing_errors = c.filing_errors;
  s.filing_error = c.filing_error;
  s.unfiled = c.unfiled;
  s.unjournaled = c.unjournaled;
  s.pending_repeats = c.pending_repeats;
  s.top_decline = c.top_decline;
  s.top_decline_count = c.top_decline_count;
  s.first_mismatch_after = c.first_mismatch_after;
  s.first_mismatch_unix_ms = c.first_mismatch_unix_ms;
  s.calibration_ms = c.calibration_ms;
  s.families_timed = c.families_timed;
  s.planned_variants = c.planned_variants;
  s.programs = c.lane.checked;
  s.programs_judged_immediate = c.lane.judged_immediate;
  s.programs_judged_runtime = c.lane.judged_runtime;
  s.program_disagreements = c.lane.disagreements;
  s.program_faults = c.lane.faults;
  s.programs_filed = c.lane.filed;
  s.programs_filed_new = c.lane.filed_new;
  s.programs_known = c.lane.known;
  s.programs_not_filed_again = c.lane.not_filed_again;
  s.programs_pending = c.lane.pending;
  s.programs_unjournaled = c.lane.unjournaled;
  s.program_write_errors = c.lane.write_errors;
  s.programs_not_started = c.lane_not_started;
  return s;
}

bool DifferentialTarget::Flush(absl::Duration timeout) {
  return campaign_ == nullptr || campaign_->Flush(timeout);
}

void DifferentialTarget::KeepStatsWritten() {
  if (writer_.joinable()) return;
  writer_ = std::thread([this] {
    std::unique_lock<std::mutex> lock(writer_mu_);
    while (!writer_wake_.wait_for(lock, std::chrono::seconds(1),
                                  [this] { return writer_stop_; })) {
      WriteStats();
    }
  });
}

void DifferentialTarget::StopStatsWriter() {
  if (!writer_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(writer_mu_);
    writer_stop_ = true;
  }
  writer_wake_.notify_all();
  writer_.join();
}

DifferentialTarget::~DifferentialTarget() { StopStatsWriter(); }

std::string DifferentialTarget::environment_failure() const {
  return campaign_ ? campaign_->environment_failure() : environment_failure_;
}

void DifferentialTarget::Stop() {
  StopStatsWriter();  // the last write is Stop's own, below
  if (campaign_) campaign_->Stop();
  last_outcomes_write_ = absl::InfinitePast();  // the last counts, whenever
  WriteStats();
}

void DifferentialTarget::WriteStats() {
  last_stats_write_ = absl::Now();
  if (config_.stats_dir.empty()) return;
  const CampaignStats snapshot =
      campaign_ ? campaign_->Snapshot() : CampaignStats{};
  const StatsFile file{.stats = stats(),
                       .backend = backend().Describe(),
                       .reached = campaign_ ? snapshot.reached : reached_,
                       .reached_runtime = snapshot.reached_runtime,
                       .explored = snapshot.explored};
  // The next write (within a second) tries again; the first failure is
  // said, for `ptxdiff fuzz` (fuzzer_output.h): its summary reads this file.
  WriteSayingTheFirstFailure(
      absl::StrCat(config_.stats_dir, "/", getpid(), ".stats"),
      FormatStatsFile(file), stats_write_failed_);
  if (campaign_ &&
      absl::Now() - last_outcomes_write_ >= kOutcomesWriteInterval) {
    last_outcomes_write_ = absl::Now();
    WriteSayingTheFirstFailure(
        absl::StrCat(config_.stats_dir, "/", getpid(), ".outcomes"),
        campaign_->OutcomesSnapshot().Format(backend().Describe(),
                                             campaign_->SupportedVariants()),
        outcomes_write_failed_);
  }
}

void DifferentialTarget::WriteSayingTheFirstFailure(const std::string& path,
                                                    absl::string_view text,
                                                    bool& failed) {
  const absl::Status written = WriteFileAtomic(path, text);
  if (!written.ok() && !failed) {
    failed = true;
    SayIfNotWritten(path, written);
  }
}

}  // namespace ptxdiff
