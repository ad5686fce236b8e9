#include "fuzzers/differential_target.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
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
#include "harness/semantic_classes.h"
#include "isa/family_table.h"
#include "isa/fuzz_input.h"
#include "isa/spelling.h"
#include "protocol/backend_names.h"

namespace ptxdiff {
namespace {

absl::StatusOr<std::vector<Family>> ParseFamilies(const std::string& key,
                                                  const std::string& list) {
  std::vector<Family> out;
  for (absl::string_view name :
       absl::StrSplit(list, ',', absl::SkipWhitespace())) {
    name = absl::StripAsciiWhitespace(name);
    const std::optional<Family> family = FamilyByOpcode(name);
    if (!family) {
      return absl::InvalidArgumentError(
          absl::StrCat(key, ": unknown family '", name, "'"));
    }
    out.push_back(*family);
  }
  return out;
}

[[noreturn]] void CrashWithSignature(const Signature& s) {
  // One line: what ClusterFuzz and OSS-Fuzz group crashes by.
  std::fprintf(stderr, "ptxdiff: %s %s %s %s\n",
               std::string(FindingKindName(s.kind)).c_str(), s.backend.c_str(),
               s.spelling.c_str(), s.disagreement_class.c_str());
  std::fflush(stderr);
  std::abort();
}

absl::Status Invalid(absl::string_view key, absl::string_view expected,
                     absl::string_view value) {
  return absl::InvalidArgumentError(
      absl::StrCat(key, " is ", expected, ", not '", value, "'"));
}

std::string FamilyList(const std::vector<Family>& families) {
  return absl::StrJoin(families, ",", [](std::string* out, Family f) {
    absl::StrAppend(out, InfoOf(f).opcode);
  });
}

// Every setting of a campaign: its one name, how it is read, and how it is
// written back (FuzzConfigToPairs), so that a key is spelled only here.
struct Setting {
  absl::string_view key;
  absl::Status (*read)(const std::string& value, FuzzConfig& c);
  std::string (*write)(const FuzzConfig& c);
};

const Setting kSettings[] = {
    {"PTXDIFF_BACKEND",
     [](const std::string& v, FuzzConfig& c) {
       return c.backend = v, absl::OkStatus();
     },
     [](const FuzzConfig& c) { return c.backend; }},
    {"PTXDIFF_ARCH",
     [](const std::string& v, FuzzConfig& c) {
       return c.arch = v, absl::OkStatus();
     },
     [](const FuzzConfig& c) { return c.arch; }},
    {"PTXDIFF_CUDA_DRIVER",
     [](const std::string& v, FuzzConfig& c) {
       return c.cuda_driver = v, absl::OkStatus();
     },
     [](const FuzzConfig& c) { return c.cuda_driver; }},
    {"PTXDIFF_TRIAGE_DIR",
     [](const std::string& v, FuzzConfig& c) {
       return c.triage_dir = v, absl::OkStatus();
     },
     [](const FuzzConfig& c) { return c.triage_dir; }},
    {"PTXDIFF_MODE",
     [](const std::string& v, FuzzConfig& c) {
       if (v != "campaign" && v != "crash") {
         return Invalid("PTXDIFF_MODE", "campaign or crash", v);
       }
       c.mode = v == "crash" ? FuzzConfig::Mode::kCrash
                             : FuzzConfig::Mode::kCampaign;
       return absl::OkStatus();
     },
     [](const FuzzConfig& c) {
       return std::string(c.mode == FuzzConfig::Mode::kCrash ? "crash"
                                                             : "campaign");
     }},
    {"PTXDIFF_FAMILIES",
     [](const std::string& v, FuzzConfig& c) {
       PTXDIFF_ASSIGN_OR_RETURN(c.filter.include,
                                ParseFamilies("PTXDIFF_FAMILIES", v));
       return absl::OkStatus();
     },
     [](const FuzzConfig& c) { return FamilyList(c.filter.include); }},
    {"PTXDIFF_EXCLUDE_FAMILIES",
     [](const std::string& v, FuzzConfig& c) {
       PTXDIFF_ASSIGN_OR_RETURN(c.filter.exclude,
                                ParseFamilies("PTXDIFF_EXCLUDE_FAMILIES", v));
       return absl::OkStatus();
     },
     [](const FuzzConfig& c) { return FamilyList(c.filter.exclude); }},
    {"PTXDIFF_TIMEOUT",
     [](const std::string& v, FuzzConfig& c) {
       if (!absl::SimpleAtod(v, &c.timeout_seconds) || c.timeout_seconds <= 0) {
         return Invalid("PTXDIFF_TIMEOUT", "a number of seconds", v);
       }
       return absl::OkStatus();
     },
     [](const FuzzConfig& c) { return absl::StrCat(c.timeout_seconds); }},
    {"PTXDIFF_STATS",
     [](const std::string& v, FuzzConfig& c) {
       return c.stats_dir = v, absl::OkStatus();
     },
     [](const FuzzConfig& c) { return c.stats_dir; }},
    {"PTXDIFF_WORKER",
     [](const std::string& v, FuzzConfig& c) {
       return c.worker = v, absl::OkStatus();
     },
     [](const FuzzConfig& c) { return c.worker; }},
    {"PTXDIFF_IN_FLIGHT",
     [](const std::string& v, FuzzConfig& c) {
       if (!absl::SimpleAtoi(v, &c.in_flight) || c.in_flight < 1 ||
           c.in_flight > 16) {
         return Invalid("PTXDIFF_IN_FLIGHT", "1..16 batches", v);
       }
       return absl::OkStatus();
     },
     [](const FuzzConfig& c) { return absl::StrCat(c.in_flight); }},
    {"PTXDIFF_BATCH",
     [](const std::string& v, FuzzConfig& c) {
       if (!absl::SimpleAtoi(v, &c.batch_size) || c.batch_size < 0 ||
           c.batch_size > kMaxTuplesPerBatch) {
         return Invalid("PTXDIFF_BATCH", "a number of tuples (0: by backend)",
                        v);
       }
       return absl::OkStatus();
     },
     [](const FuzzConfig& c) { return absl::StrCat(c.batch_size); }},
    {"PTXDIFF_SYSTEMATIC",
     [](const std::string& v, FuzzConfig& c) {
       if (v != "0" && v != "1")
         return Invalid("PTXDIFF_SYSTEMATIC", "0 or 1", v);
       c.systematic = v == "1";
       return absl::OkStatus();
     },
     [](const FuzzConfig& c) { return std::string(c.systematic ? "1" : "0"); }},
    {"PTXDIFF_READING",
     [](const std::string& v, FuzzConfig& c) {
       const std::optional<Reading> reading = ParseReading(v);
       if (!reading) return Invalid("PTXDIFF_READING", "spec or hardware", v);
       c.reading = *reading;
       return absl::OkStatus();
     },
     [](const FuzzConfig& c) { return std::string(ReadingName(c.reading)); }},
    {"PTXDIFF_FINDINGS",
     [](const std::string& v, FuzzConfig& c) {
       return c.findings_dir = v, absl::OkStatus();
     },
     [](const FuzzConfig& c) { return c.findings_dir; }},
    {"PTXDIFF_REFUSALS_DIR",
     [](const std::string& v, FuzzConfig& c) {
       return c.refusals_dir = v, absl::OkStatus();
     },
     [](const FuzzConfig& c) { return c.refusals_dir; }},
    {"PTXDIFF_DEADLINE",
     [](const std::string& v, FuzzConfig& c) {
       if (!absl::SimpleAtoi(v, &c.deadline_unix_seconds) ||
           c.deadline_unix_seconds < 0) {
         return Invalid("PTXDIFF_DEADLINE", "unix seconds (0: none)", v);
       }
       return absl::OkStatus();
     },
     [](const FuzzConfig& c) { return absl::StrCat(c.deadline_unix_seconds); }},
};

const Setting* FindSetting(absl::string_view key) {
  for (const Setting& setting : kSettings) {
    if (setting.key == key) return &setting;
  }
  return nullptr;
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

}  // namespace

std::string CrashOriginLine(absl::string_view input,
                            const CrashOrigin& origin) {
  return absl::StrCat(absl::Hex(Fnv1a64(input), absl::kZeroPad16), "\t",
                      origin.signature, "\t", origin.backend, "\n");
}

std::optional<CrashOrigin> FindCrashOrigin(const std::string& dir,
                                           absl::string_view input) {
  const absl::StatusOr<std::string> text =
      ReadFile(absl::StrCat(dir, "/", kCrashOriginsFile));
  if (!text.ok()) return std::nullopt;
  const std::string key =
      absl::StrCat(absl::Hex(Fnv1a64(input), absl::kZeroPad16), "\t");
  std::optional<CrashOrigin> found;
  for (absl::string_view line : absl::StrSplit(*text, '\n')) {
    if (!absl::ConsumePrefix(&line, key)) continue;
    const std::vector<absl::string_view> fields =
        absl::StrSplit(line, absl::MaxSplits('\t', 1));
    if (fields.size() == 2 && !fields[1].empty()) {
      found = CrashOrigin{std::string(fields[0]), std::string(fields[1])};
    }
  }
  return found;
}

int64_t MaxTotalTimeBy(int64_t deadline_unix_seconds, int64_t given,
                       absl::Time now) {
  if (deadline_unix_seconds <= 0) return given;
  // libFuzzer stops once more than max_total_time whole seconds have passed,
  // i.e. a second after it: the whole seconds left, less that one.
  const absl::Duration until =
      absl::FromUnixSeconds(deadline_unix_seconds) - now;
  const int64_t left = std::max<int64_t>(1, absl::ToInt64Seconds(until) - 1);
  return given > 0 ? std::min(given, left) : left;
}

absl::StatusOr<FuzzConfig> FuzzConfigFromPairs(
    const std::vector<std::pair<std::string, std::string>>& pairs) {
  FuzzConfig c;
  for (const auto& [key, value] : pairs) {
    const Setting* setting = FindSetting(key);
    if (setting == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("unknown setting ", key));
    }
    PTXDIFF_RETURN_IF_ERROR(setting->read(value, c));
  }
  return c;
}

std::vector<std::pair<std::string, std::string>> FuzzConfigToPairs(
    const FuzzConfig& config) {
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const Setting& setting : kSettings) {
    pairs.emplace_back(setting.key, setting.write(config));
  }
  return pairs;
}

absl::StatusOr<FuzzConfig> FuzzConfigFromEnvironment() {
  std::vector<std::pair<std::string, std::string>> pairs;
  if (const char* file = std::getenv("PTXDIFF_CONFIG"); file && *file) {
    std::ifstream in(file);
    if (!in)
      return absl::NotFoundError(
          absl::StrCat("PTXDIFF_CONFIG: cannot read ", file));
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      const absl::string_view l = absl::StripAsciiWhitespace(line);
      if (l.empty() || l[0] == '#') continue;
      const size_t eq = l.find('=');
      if (eq == absl::string_view::npos) {
        return absl::InvalidArgumentError(
            absl::StrCat(file, ":", n, ": expected KEY=VALUE, got '", l, "'"));
      }
      pairs.emplace_back(
          std::string(absl::StripAsciiWhitespace(l.substr(0, eq))),
          std::string(absl::StripAsciiWhitespace(l.substr(eq + 1))));
    }
  }
  for (const Setting& setting : kSettings) {
    const std::string key(setting.key);
    if (const char* value = std::getenv(key.c_str())) {
      pairs.emplace_back(key, value);
    }
  }
  return FuzzConfigFromPairs(pairs);
}

absl::StatusOr<std::unique_ptr<DifferentialTarget>> DifferentialTarget::Create(
    FuzzConfig config) {
  if (config.backend.empty()) config.backend = ChooseDefaultBackend().name;
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
  auto campaign = Campaign::Start(std::move(options));
  if (!campaign.ok()) return campaign.status();
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
      f.kind = r.fault == TupleFault::kHang ? FindingKind::kHang
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
    // Best effort, and appended (O_APPEND: -fork=N processes share the
    // file): the crash is reported whether or not this is written.
    const CrashOrigin origin{
        absl::StrCat(FindingKindName(s.kind), " ", s.backend, " ", s.spelling,
                     " ", s.disagreement_class),
        config_.backend};
    std::ofstream(absl::StrCat(config_.findings_dir, "/", kCrashOriginsFile),
                  std::ios::app)
        << CrashOriginLine(input_, origin);
  }
  CrashWithSignature(s);
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
  s.top_decline = c.top_decline;
  s.top_decline_count = c.top_decline_count;
  s.first_mismatch_after = c.first_mismatch_after;
  s.first_mismatch_unix_ms = c.first_mismatch_unix_ms;
  s.calibration_ms = c.calibration_ms;
  s.families_timed = c.families_timed;
  s.planned_variants = c.planned_variants;
  return s;
}

bool DifferentialTarget::Flush(absl::Duration timeout) {
  return campaign_ == nullptr || campaign_->Flush(timeout);
}

void DifferentialTarget::Stop() {
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
    std::fprintf(stderr, "ptxdiff: cannot write %s: %s\n", path.c_str(),
                 std::string(written.message()).c_str());
  }
}

namespace {

// Every counter of a stats file: its one name, and where it lives.
struct Counter {
  absl::string_view name;
  int64_t& (*field)(FuzzStats& s);
};

#define PTXDIFF_COUNTER(name, expr)                     \
  Counter {                                             \
    name, [](FuzzStats& s) -> int64_t& { return expr; } \
  }
const Counter kCounters[] = {
    PTXDIFF_COUNTER("inputs", s.inputs),
    PTXDIFF_COUNTER("tuples", s.counts.tuples),
    PTXDIFF_COUNTER("agreed", s.counts.agreed),
    PTXDIFF_COUNTER("mismatched", s.counts.mismatched),
    PTXDIFF_COUNTER("declined", s.counts.declined),
    PTXDIFF_COUNTER("unspecified", s.counts.unspecified),
    PTXDIFF_COUNTER("other_reading", s.counts.other_reading),
    PTXDIFF_COUNTER("faulty_batches", s.counts.faulty_batches),
    PTXDIFF_COUNTER("faulted", s.counts.faulted),
    PTXDIFF_COUNTER("new_findings", s.new_findings),
    PTXDIFF_COUNTER("known_findings", s.known_findings),
    PTXDIFF_COUNTER("explained_findings", s.explained_findings),
    PTXDIFF_COUNTER("worker_restarts", s.worker_restarts),
    PTXDIFF_COUNTER("supported_variants", s.supported_variants),
    PTXDIFF_COUNTER("offered", s.offered),
    PTXDIFF_COUNTER("queued", s.queued),
    PTXDIFF_COUNTER("duplicates", s.duplicates),
    PTXDIFF_COUNTER("dropped", s.dropped),
    PTXDIFF_COUNTER("systematic", s.systematic),
    PTXDIFF_COUNTER("skipped_undefined", s.skipped_undefined),
    PTXDIFF_COUNTER("skipped_unsupported", s.skipped_unsupported),
    PTXDIFF_COUNTER("skipped_declining", s.skipped_declining),
    PTXDIFF_COUNTER("withheld_faulting", s.withheld_faulting),
    PTXDIFF_COUNTER("sent_again", s.sent_again),
    PTXDIFF_COUNTER("on_reused_code", s.on_reused_code),
    PTXDIFF_COUNTER("declined_unsupported", s.declined_unsupported),
    PTXDIFF_COUNTER("declined_not_evaluable", s.declined_not_evaluable),
    PTXDIFF_COUNTER("declined_operand_form", s.declined_operand_form),
    PTXDIFF_COUNTER("declined_other", s.declined_other),
    PTXDIFF_COUNTER("declined_not_run", s.declined_not_run),
    PTXDIFF_COUNTER("filing_errors", s.filing_errors),
    PTXDIFF_COUNTER("unfiled", s.unfiled),
    PTXDIFF_COUNTER("unjournaled", s.unjournaled),
    PTXDIFF_COUNTER("first_mismatch_after", s.first_mismatch_after),
    PTXDIFF_COUNTER("first_mismatch_unix_ms", s.first_mismatch_unix_ms),
    PTXDIFF_COUNTER("calibration_ms", s.calibration_ms),
    PTXDIFF_COUNTER("families_timed", s.families_timed),
    PTXDIFF_COUNTER("planned_variants", s.planned_variants),
};
#undef PTXDIFF_COUNTER

constexpr absl::string_view kErratumPrefix = "erratum_";

// A text on one line of the stats file: its first line.
absl::string_view OneLine(absl::string_view text) {
  return text.substr(0, text.find('\n'));
}

// A bitmap as hex nibbles, bit 0 of the first nibble first.
std::string Bitmap(const std::vector<bool>& bits) {
  std::string out;
  for (size_t i = 0; i < bits.size(); i += 4) {
    int nibble = 0;
    for (size_t b = 0; b < 4 && i + b < bits.size(); ++b) {
      nibble |= bits[i + b] << b;
    }
    out += "0123456789abcdef"[nibble];
  }
  return out;
}

// ORs Bitmap's text into `bits`, growing it as needed.
void OrBitmap(absl::string_view text, std::vector<bool>& bits) {
  bits.resize(std::max(bits.size(), 4 * text.size()));
  for (size_t i = 0; i < text.size(); ++i) {
    const int nibble = text[i] >= 'a' ? text[i] - 'a' + 10 : text[i] - '0';
    for (int b = 0; b < 4; ++b) {
      if (nibble & (1 << b)) bits[4 * i + b] = true;
    }
  }
}

// Adds a histogram's text ("3,0,17") into `sum`, growing it as needed.
void AddHistogram(absl::string_view text, std::vector<int64_t>& sum) {
  size_t b = 0;
  for (absl::string_view count : absl::StrSplit(text, ',')) {
    int64_t n = 0;
    if (!absl::SimpleAtoi(count, &n)) n = 0;
    if (b >= sum.size()) sum.resize(b + 1);
    sum[b++] += n;
  }
}

}  // namespace

std::string FormatStatsFile(const StatsFile& file) {
  FuzzStats stats = file.stats;  // the table's accessors take it mutable
  std::string text;
  for (const Counter& c : kCounters) {
    absl::StrAppend(&text, c.name, "=", c.field(stats), "\n");
  }
  for (const auto& [id, n] : stats.other_reading_by_erratum) {
    absl::StrAppend(&text, kErratumPrefix, id, "=", n, "\n");
  }
  if (!stats.filing_error.empty()) {
    absl::StrAppend(&text, "filing_error=", OneLine(stats.filing_error), "\n");
  }
  if (stats.top_decline_count > 0) {
    absl::StrAppend(&text, "top_decline=", stats.top_decline_count, " ",
                    OneLine(stats.top_decline), "\n");
  }
  absl::StrAppend(&text, "backend=", file.backend,
                  "\nreached=", Bitmap(file.reached), "\n");
  if (!file.reached_runtime.empty()) {
    absl::StrAppend(&text, "reached_runtime=", Bitmap(file.reached_runtime),
                    "\n");
  }
  if (!file.explored.empty()) {
    absl::StrAppend(&text, "explored=", absl::StrJoin(file.explored, ","),
                    "\n");
  }
  return text;
}

namespace {

// The counter `key` names where the processes' figure is the largest, not
// their sum: the same for every process of a campaign, or each process's
// own start-up or plan; null for any other key.
int64_t* LargestOverProcesses(absl::string_view key, FuzzStats& s) {
  if (key == "supported_variants") return &s.supported_variants;
  if (key == "calibration_ms") return &s.calibration_ms;
  if (key == "families_timed") return &s.families_timed;
  if (key == "planned_variants") return &s.planned_variants;
  return nullptr;
}

}  // namespace

void AddStatsFile(absl::string_view text, StatsFile& sum) {
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    const size_t eq = line.find('=');
    if (eq == absl::string_view::npos) continue;
    const absl::string_view key = line.substr(0, eq),
                            value = line.substr(eq + 1);
    int64_t n = 0;
    if (key == "backend") {
      sum.backend = std::string(value);
    } else if (key == "filing_error") {
      sum.stats.filing_error = std::string(value);
    } else if (key == "top_decline") {
      // "<tuples> <reason>": the reason most tuples of one process gave.
      const size_t space = value.find(' ');
      if (space != absl::string_view::npos &&
          absl::SimpleAtoi(value.substr(0, space), &n) &&
          n > sum.stats.top_decline_count) {
        sum.stats.top_decline_count = n;
        sum.stats.top_decline = std::string(value.substr(space + 1));
      }
    } else if (key == "reached") {
      OrBitmap(value, sum.reached);
    } else if (key == "reached_runtime") {
      OrBitmap(value, sum.reached_runtime);
    } else if (key == "explored") {
      AddHistogram(value, sum.explored);
    } else if (!absl::SimpleAtoi(value, &n)) {
      continue;
    } else if (absl::StartsWith(key, kErratumPrefix)) {
      sum.stats.other_reading_by_erratum[std::string(
          key.substr(kErratumPrefix.size()))] += n;
    } else if (int64_t* largest = LargestOverProcesses(key, sum.stats)) {
      *largest = std::max(*largest, n);
    } else if (key == "first_mismatch_after" ||
               key == "first_mismatch_unix_ms") {
      // The earliest over the processes; 0 (none yet) never wins.
      int64_t& first = key == "first_mismatch_after"
                           ? sum.stats.first_mismatch_after
                           : sum.stats.first_mismatch_unix_ms;
      if (n > 0 && (first == 0 || n < first)) first = n;
    } else {
      for (const Counter& c : kCounters) {
        if (c.name == key) c.field(sum.stats) += n;
      }
    }
  }
}

}  // namespace ptxdiff
