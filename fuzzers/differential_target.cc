#include "fuzzers/differential_target.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "fuzzers/fuzz_input.h"
#include "fuzzers/semantic_classes.h"
#include "gpu_runner/worker_locator.h"
#include "harness/differential.h"
#include "isa/family_table.h"
#include "isa/spelling.h"
#include "triage/minimizer.h"

namespace ptxdiff {
namespace {

constexpr const char* kKeys[] = {
    "PTXDIFF_BACKEND", "PTXDIFF_ARCH",    "PTXDIFF_TRIAGE_DIR",
    "PTXDIFF_MODE",    "PTXDIFF_FAMILIES", "PTXDIFF_EXCLUDE_FAMILIES",
    "PTXDIFF_TIMEOUT", "PTXDIFF_STATS",   "PTXDIFF_WORKER"};

absl::StatusOr<std::vector<Family>> ParseFamilies(const std::string& key,
                                                  const std::string& list) {
  std::vector<Family> out;
  for (absl::string_view name : absl::StrSplit(list, ',', absl::SkipWhitespace())) {
    name = absl::StripAsciiWhitespace(name);
    bool found = false;
    for (const FamilyInfo& f : AllFamilies()) {
      if (f.opcode == name) out.push_back(f.family), found = true;
    }
    if (!found) {
      return absl::InvalidArgumentError(
          absl::StrCat(key, ": unknown family '", name, "'"));
    }
  }
  return out;
}

const absl::flat_hash_map<Variant, int>& VariantIndex() {
  static const auto* index = [] {
    auto* m = new absl::flat_hash_map<Variant, int>();
    for (size_t i = 0; i < AllVariants().size(); ++i) m->emplace(AllVariants()[i], i);
    return m;
  }();
  return *index;
}

[[noreturn]] void CrashWithSignature(const Signature& s) {
  // One line: what ClusterFuzz and OSS-Fuzz group crashes by.
  std::fprintf(stderr, "ptxdiff: %s %s %s %s\n",
               std::string(FindingKindName(s.kind)).c_str(), s.backend.c_str(),
               s.spelling.c_str(), s.disagreement_class.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace

absl::StatusOr<FuzzConfig> FuzzConfigFromPairs(
    const std::vector<std::pair<std::string, std::string>>& pairs) {
  FuzzConfig c;
  for (const auto& [key, value] : pairs) {
    if (key == "PTXDIFF_BACKEND") {
      c.backend = value;
    } else if (key == "PTXDIFF_ARCH") {
      c.arch = value;
    } else if (key == "PTXDIFF_TRIAGE_DIR") {
      c.triage_dir = value;
    } else if (key == "PTXDIFF_MODE") {
      if (value != "campaign" && value != "crash") {
        return absl::InvalidArgumentError(
            absl::StrCat("PTXDIFF_MODE is campaign or crash, not '", value, "'"));
      }
      c.mode = value == "crash" ? FuzzConfig::Mode::kCrash : FuzzConfig::Mode::kCampaign;
    } else if (key == "PTXDIFF_FAMILIES" || key == "PTXDIFF_EXCLUDE_FAMILIES") {
      auto families = ParseFamilies(key, value);
      if (!families.ok()) return families.status();
      (key == "PTXDIFF_FAMILIES" ? c.filter.include : c.filter.exclude) = *families;
    } else if (key == "PTXDIFF_TIMEOUT") {
      if (!absl::SimpleAtod(value, &c.timeout_seconds) || c.timeout_seconds <= 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("PTXDIFF_TIMEOUT is a number of seconds, not '", value, "'"));
      }
    } else if (key == "PTXDIFF_STATS") {
      c.stats_dir = value;
    } else if (key == "PTXDIFF_WORKER") {
      c.worker = value;
    } else {
      return absl::InvalidArgumentError(absl::StrCat("unknown setting ", key));
    }
  }
  return c;
}

absl::StatusOr<FuzzConfig> FuzzConfigFromEnvironment() {
  std::vector<std::pair<std::string, std::string>> pairs;
  if (const char* file = std::getenv("PTXDIFF_CONFIG"); file && *file) {
    std::ifstream in(file);
    if (!in) return absl::NotFoundError(absl::StrCat("PTXDIFF_CONFIG: cannot read ", file));
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      const absl::string_view l = absl::StripAsciiWhitespace(line);
      if (l.empty() || l[0] == '#') continue;
      const size_t eq = l.find('=');
      if (eq == absl::string_view::npos) {
        return absl::InvalidArgumentError(
            absl::StrCat(file, ":", n, ": expected KEY=VALUE, got '", l, "'"));
      }
      pairs.emplace_back(std::string(absl::StripAsciiWhitespace(l.substr(0, eq))),
                         std::string(absl::StripAsciiWhitespace(l.substr(eq + 1))));
    }
  }
  for (const char* key : kKeys) {
    if (const char* value = std::getenv(key)) pairs.emplace_back(key, value);
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
  if (!config.arch.empty()) command->hello_options.emplace_back("arch", config.arch);
  command->timeout = absl::Seconds(config.timeout_seconds);
  auto client = WorkerClient::Start(*command);
  if (!client.ok()) return client.status();
  auto store = TriageStore::Open(config.triage_dir, /*create=*/true);
  if (!store.ok()) return store.status();
  return std::unique_ptr<DifferentialTarget>(
      new DifferentialTarget(std::move(config), *std::move(client), *std::move(store)));
}

DifferentialTarget::DifferentialTarget(FuzzConfig config,
                                       std::unique_ptr<WorkerClient> client,
                                       TriageStore store)
    : config_(std::move(config)),
      client_(std::move(client)),
      store_(std::move(store)),
      reached_(AllVariants().size()) {}

int DifferentialTarget::RunInput(const uint8_t* data, size_t size) {
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto tuples = DecodeFuzzInput(bytes);
  if (!tuples.ok() || !config_.filter.Allows((*tuples)[0].variant.family)) return -1;
  ++stats_.inputs;
  const Variant& v = (*tuples)[0].variant;
  if (const int index = VariantIndex().at(v); !reached_[index]) {
    reached_[index] = true;
    ++stats_.variants_reached;
  }
  const BatchOutcome out = client_->Run(*tuples);
  stats_.worker_restarts = client_->restarts();
  stats_.tuples += tuples->size();
  if (out.fault) {
    OnFault(*out.fault, *tuples, std::string(bytes));
  } else {
    for (size_t i = 0; i < tuples->size(); ++i) {
      const Tuple& t = (*tuples)[i];
      const Result oracle = Evaluate(t.variant, t.operands);
      if (counters_ != nullptr) {
        const uint32_t classes = SemanticClasses(t, oracle);
        for (int c = 0; c < kNumSemanticClasses; ++c) {
          if (classes & (1u << c)) {
            counters_[static_cast<int>(v.family) * kNumSemanticClasses + c] = 1;
          }
        }
      }
      switch (Judge(oracle, out.results[i])) {
        case Verdict::kAgree: ++stats_.agreed; break;
        case Verdict::kDeclined: ++stats_.declined; break;
        case Verdict::kUnspecified: ++stats_.unspecified; break;
        case Verdict::kMismatch:
          OnMismatch(t, out.results[i].bits, std::string(bytes));
          break;
      }
    }
  }
  if (absl::Now() - last_stats_write_ > absl::Seconds(2)) WriteStats();
  return 0;
}

void DifferentialTarget::Record(const Finding& finding) {
  auto filed = store_.File(finding);
  if (!filed.ok()) {
    // Nothing found is lost silently: say so, and keep fuzzing.
    std::fprintf(stderr, "ptxdiff: cannot file a finding: %s\n",
                 std::string(filed.status().message()).c_str());
    return;
  }
  if (filed->explained) {
    ++stats_.explained_findings;
  } else if (filed->is_new) {
    ++stats_.new_findings;
    std::fprintf(stderr, "ptxdiff: NEW finding %s/%s\n", store_.dir().c_str(),
                 filed->entry.c_str());
  } else {
    ++stats_.known_findings;
  }
}

void DifferentialTarget::OnMismatch(const Tuple& tuple, uint64_t backend_bits,
                                    const std::string& raw_input) {
  Finding f;
  f.tuple = tuple;
  f.oracle = Evaluate(tuple.variant, tuple.operands);
  f.backend_bits = backend_bits;
  f.backend = client_->identity().name;
  f.backend_identity = client_->identity().Describe();
  if (config_.mode == FuzzConfig::Mode::kCrash) CrashWithSignature(SignatureOf(f));
  // A disagreement this process has minimized before is counted again
  // without minimizing it again.
  const auto key = std::make_pair(Spell(tuple.variant),
                                  DisagreementClass(f.oracle.bits, backend_bits));
  if (auto it = seen_.find(key); it != seen_.end()) return Record(it->second);
  auto minimized = MinimizeMismatch(*client_, tuple);
  if (!minimized.ok()) {
    // Flaky, or the backend faulted while minimizing: file what was seen.
    f.flaky = true;
    f.detail = std::string(minimized.status().message());
    f.raw_input = raw_input;
    return Record(f);
  }
  minimized->raw_input = raw_input;
  seen_.emplace(key, *minimized);
  Record(*minimized);
}

void DifferentialTarget::OnFault(const BackendFault& fault,
                                 const std::vector<Tuple>& tuples,
                                 const std::string& raw_input) {
  ++stats_.faulty_batches;
  Finding f;
  f.kind = FromFault(fault.kind);
  f.tuple = tuples[0];
  f.batch = tuples;
  f.oracle = Evaluate(f.tuple.variant, f.tuple.operands);
  f.backend = client_->identity().name;
  f.backend_identity = client_->identity().Describe();
  f.detail = fault.detail;
  f.raw_input = raw_input;
  if (config_.mode == FuzzConfig::Mode::kCrash) CrashWithSignature(SignatureOf(f));
  auto isolated = IsolateFault(*client_, tuples);
  if (isolated.ok()) {
    isolated->raw_input = raw_input;
    f = *isolated;
  }
  Record(f);
}

void DifferentialTarget::WriteStats() {
  last_stats_write_ = absl::Now();
  if (config_.stats_dir.empty()) return;
  const std::string path = absl::StrCat(config_.stats_dir, "/", getpid(), ".stats");
  std::string reached;
  for (size_t i = 0; i < reached_.size(); i += 4) {
    int nibble = 0;
    for (size_t b = 0; b < 4 && i + b < reached_.size(); ++b) {
      nibble |= reached_[i + b] << b;
    }
    reached += "0123456789abcdef"[nibble];
  }
  const FuzzStats& s = stats_;
  const std::string text = absl::StrCat(
      "inputs=", s.inputs, "\ntuples=", s.tuples, "\nagreed=", s.agreed,
      "\ndeclined=", s.declined, "\nunspecified=", s.unspecified,
      "\nnew_findings=", s.new_findings, "\nknown_findings=", s.known_findings,
      "\nexplained_findings=", s.explained_findings,
      "\nfaulty_batches=", s.faulty_batches, "\nworker_restarts=", s.worker_restarts,
      "\nbackend=", client_->identity().Describe(), "\nreached=", reached, "\n");
  const std::string tmp = path + ".tmp";
  std::ofstream(tmp, std::ios::trunc) << text;
  std::rename(tmp.c_str(), path.c_str());
}

}  // namespace ptxdiff
