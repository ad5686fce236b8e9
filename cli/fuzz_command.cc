#include "cli/fuzz_command.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "cli/backend_commands.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/triage_commands.h"
#include "oracle/errata.h"
#include "fuzzers/differential_target.h"
#include "fuzzers/seed_corpus.h"
#include "client/worker_locator.h"
#include "isa/family_table.h"
#include "triage/triage_store.h"

extern char** environ;

namespace ptxdiff {
namespace {

volatile sig_atomic_t interrupted = 0;

int Fail(std::ostream& err, absl::string_view command, const absl::Status& status) {
  err << "ptxdiff " << command << ": " << status.message() << "\n";
  return kExitBadInput;
}

absl::Status MakeDirs(const std::string& path) {
  std::string partial;
  for (absl::string_view part : absl::StrSplit(path, '/')) {
    absl::StrAppend(&partial, part, "/");
    if (!part.empty() && mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST) {
      return absl::FailedPreconditionError(
          absl::StrCat("cannot create ", partial, ": ", std::strerror(errno)));
    }
  }
  return absl::OkStatus();
}

absl::Status WriteFile(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
  out.close();
  if (!out) return absl::FailedPreconditionError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

std::vector<std::string> FilesIn(const std::string& dir, absl::string_view suffix = "") {
  std::vector<std::string> files;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      if (name[0] != '.' && absl::EndsWith(name, suffix)) files.push_back(dir + "/" + name);
    }
    closedir(d);
  }
  return files;
}

absl::StatusOr<std::string> FindFuzzer() {
  if (const char* env = std::getenv("PTXDIFF_FUZZER"); env && *env) return std::string(env);
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  const std::string self = n > 0 ? std::string(buf, n) : "";
  const std::string dir = self.substr(0, self.rfind('/'));
  for (const std::string& c : {dir + "/differential_fuzzer", dir + "/../fuzzers/differential_fuzzer",
                               dir + "/../../fuzz/fuzzers/differential_fuzzer",
                               std::string("build/fuzz/fuzzers/differential_fuzzer")}) {
    if (access(c.c_str(), X_OK) == 0) return c;
  }
  return absl::NotFoundError(
      "differential_fuzzer not found: build it with `cmake --preset fuzz && cmake "
      "--build --preset fuzz`, or set PTXDIFF_FUZZER");
}

// The sum of every process's stats file, with the reached-variant bitmaps
// OR-ed together.
struct Progress {
  std::map<std::string, int64_t> counts;
  int64_t variants_reached = 0;
  std::string backend;
};

Progress ReadProgress(const std::string& stats_dir) {
  Progress p;
  std::vector<uint8_t> reached;
  for (const std::string& file : FilesIn(stats_dir, ".stats")) {
    std::ifstream in(file);
    std::string line;
    while (std::getline(in, line)) {
      const size_t eq = line.find('=');
      if (eq == std::string::npos) continue;
      const std::string key = line.substr(0, eq), value = line.substr(eq + 1);
      int64_t n;
      if (key == "backend") {
        p.backend = value;
      } else if (key == "reached") {
        reached.resize(std::max(reached.size(), value.size()));
        for (size_t i = 0; i < value.size(); ++i) {
          const char c = value[i];
          reached[i] |= c >= 'a' ? c - 'a' + 10 : c - '0';
        }
      } else if (key == "supported_variants" && absl::SimpleAtoi(value, &n)) {
        // The same for every process of a campaign: not a sum.
        p.counts[key] = std::max(p.counts[key], n);
      } else if (absl::SimpleAtoi(value, &n)) {
        p.counts[key] += n;
      }
    }
  }
  for (uint8_t nibble : reached) p.variants_reached += std::popcount(nibble);
  return p;
}

int64_t Count(const Progress& p, const std::string& key) {
  auto it = p.counts.find(key);
  return it == p.counts.end() ? 0 : it->second;
}

// One line per erratum that explained disagreements (stats keys erratum_<id>).
std::string ErrataLines(const Progress& p) {
  std::string out;
  for (const auto& [key, n] : p.counts) {
    if (absl::StartsWith(key, "erratum_")) {
      absl::StrAppend(&out, "fuzz:     ", n, "x ", key.substr(8), "\n");
    }
  }
  return out;
}

std::string ProgressLine(const Progress& p, double seconds) {
  auto c = [&p](const char* k) {
    auto it = p.counts.find(k);
    return it == p.counts.end() ? int64_t{0} : it->second;
  };
  return absl::StrFormat(
      "fuzz: %4.0fs  checked %d tuples (%.0f/s)  fuzz inputs %d  variants %d/%d supported  "
      "findings %d new, %d known  faults %d  restarts %d",
      seconds, c("tuples"), seconds > 0 ? c("tuples") / seconds : 0.0, c("inputs"),
      p.variants_reached, c("supported_variants"), c("new_findings"),
      c("known_findings") + c("explained_findings"), c("faulty_batches"),
      c("worker_restarts"));
}

}  // namespace

int RunSeedCorpus(const std::vector<std::string>& args, std::ostream& out,
                  std::ostream& err) {
  if (args.size() != 1) {
    return Fail(err, "seed-corpus", absl::InvalidArgumentError("expects one DIR"));
  }
  const std::string dir = args[0];
  if (auto s = MakeDirs(dir + "/differential"); !s.ok()) return Fail(err, "seed-corpus", s);
  for (const auto& [name, bytes] : SeedCorpus()) {
    if (auto s = WriteFile(dir + "/differential/" + name, bytes); !s.ok()) {
      return Fail(err, "seed-corpus", s);
    }
  }
  if (auto s = WriteFile(dir + "/differential.dict", FuzzDictionary()); !s.ok()) {
    return Fail(err, "seed-corpus", s);
  }
  out << "wrote " << SeedCorpus().size() << " seeds to " << dir << "/differential and "
      << dir << "/differential.dict\n";
  return 0;
}

int RunFuzz(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  auto parsed = ParseArgs(args, {},
                          {"backend", "arch", "max-time", "jobs", "family", "exclude", "dir",
                           "corpus", "mode", "out", "progress-seconds", "timeout",
                           "reading", "cuda-driver"});
  if (!parsed.ok()) return Fail(err, "fuzz", parsed.status());
  int64_t max_time = 0, jobs = 1, every = 5;
  if (!absl::SimpleAtoi(parsed->Get("max-time", "60"), &max_time) || max_time < 1 ||
      !absl::SimpleAtoi(parsed->Get("jobs", "1"), &jobs) || jobs < 1 || jobs > 64 ||
      !absl::SimpleAtoi(parsed->Get("progress-seconds", "5"), &every) || every < 1) {
    return Fail(err, "fuzz", absl::InvalidArgumentError(
                                 "--max-time, --jobs (1..64) and --progress-seconds take "
                                 "positive whole numbers"));
  }
  for (const std::string& f : parsed->All("family")) {
    if (!FamilyByOpcode(f)) {
      return Fail(err, "fuzz", absl::InvalidArgumentError(
                                   absl::StrCat("unknown family '", f, "'")));
    }
  }
  auto fuzzer = FindFuzzer();
  if (!fuzzer.ok()) return Fail(err, "fuzz", fuzzer.status());
  auto worker = FindWorkerBinary();
  if (!worker.ok()) return Fail(err, "fuzz", worker.status());

  std::string backend = parsed->Get("backend");
  if (backend.empty()) {
    const DefaultBackend d = ChooseDefaultBackend();
    backend = d.name;
    out << "fuzz: backend " << d.name << ": " << d.reason << "\n";
  }
  const auto cuda_driver = CudaDriverFlag(*parsed, backend);
  if (!cuda_driver.ok()) return Fail(err, "fuzz", cuda_driver.status());
  const std::string out_dir = parsed->Get("out", "out");
  const std::string triage_dir = parsed->Get("dir", DefaultTriageDir());
  const std::string corpus = parsed->Get("corpus", out_dir + "/corpus/differential");
  const std::string stats = absl::StrCat(out_dir, "/stats/run-", absl::ToUnixSeconds(absl::Now()),
                                         "-", getpid());
  for (const std::string& d : {corpus, stats, out_dir + "/findings"}) {
    if (auto s = MakeDirs(d); !s.ok()) return Fail(err, "fuzz", s);
  }
  if (auto store = TriageStore::Open(triage_dir, true); !store.ok()) {
    return Fail(err, "fuzz", store.status());
  }
  const bool resumed = !FilesIn(corpus).empty();
  if (!resumed) {
    for (const auto& [name, bytes] : SeedCorpus()) (void)WriteFile(corpus + "/" + name, bytes);
  }
  const std::string dict = out_dir + "/differential.dict";
  (void)WriteFile(dict, FuzzDictionary());

  // The target's configuration travels in the environment: the settings
  // already there (PTXDIFF_CONFIG, PTXDIFF_*), overridden by the flags.
  absl::StatusOr<FuzzConfig> from_environment = FuzzConfigFromEnvironment();
  if (!from_environment.ok()) return Fail(err, "fuzz", from_environment.status());
  FuzzConfig config = *std::move(from_environment);
  config.backend = backend;
  config.triage_dir = triage_dir;
  config.stats_dir = stats;
  config.worker = *worker;
  if (parsed->Has("arch")) config.arch = parsed->Get("arch");
  if (!cuda_driver->empty()) config.cuda_driver = *cuda_driver;
  if (parsed->Has("mode")) {
    const std::string mode = parsed->Get("mode");
    if (mode != "campaign" && mode != "crash") {
      return Fail(err, "fuzz", absl::InvalidArgumentError(absl::StrCat(
                                   "--mode is campaign or crash, not '", mode, "'")));
    }
    config.mode = mode == "crash" ? FuzzConfig::Mode::kCrash : FuzzConfig::Mode::kCampaign;
  }
  if (parsed->Has("timeout") &&
      (!absl::SimpleAtod(parsed->Get("timeout"), &config.timeout_seconds) ||
       config.timeout_seconds <= 0)) {
    return Fail(err, "fuzz", absl::InvalidArgumentError(absl::StrCat(
                                 "--timeout is a number of seconds, not '",
                                 parsed->Get("timeout"), "'")));
  }
  if (parsed->Has("reading")) {
    const std::optional<Reading> reading = ParseReading(parsed->Get("reading"));
    if (!reading) {
      return Fail(err, "fuzz", absl::InvalidArgumentError(absl::StrCat(
                                   "--reading is spec or hardware, not '",
                                   parsed->Get("reading"), "'")));
    }
    config.reading = *reading;
  }
  if (parsed->Has("family")) config.filter.include.clear();
  for (const std::string& f : parsed->All("family")) {
    config.filter.include.push_back(*FamilyByOpcode(f));
  }
  if (parsed->Has("exclude")) config.filter.exclude.clear();
  for (const std::string& f : parsed->All("exclude")) {
    const std::optional<Family> family = FamilyByOpcode(f);
    if (!family) {
      return Fail(err, "fuzz", absl::InvalidArgumentError(
                                   absl::StrCat("unknown family '", f, "'")));
    }
    config.filter.exclude.push_back(*family);
  }
  for (const auto& [key, value] : FuzzConfigToPairs(config)) {
    setenv(key.c_str(), value.c_str(), 1);
  }

  std::vector<std::string> argv = {*fuzzer,
                                   corpus,
                                   "-dict=" + dict,
                                   absl::StrCat("-max_total_time=", max_time),
                                   "-artifact_prefix=" + out_dir + "/findings/",
                                   "-print_final_stats=1"};
  if (jobs > 1) argv.push_back(absl::StrCat("-fork=", jobs));
  const std::string log = out_dir + "/fuzz.log";
  out << "fuzz: " << (resumed ? "resuming from " : "starting with the seed corpus in ")
      << corpus << "; triage directory " << triage_dir << "; libFuzzer log " << log << "\n";
  out.flush();

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  std::vector<char*> cargv;
  for (std::string& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  pid_t pid;
  const int spawn_error = posix_spawn(&pid, cargv[0], &actions, nullptr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawn_error != 0) {
    return Fail(err, "fuzz", absl::FailedPreconditionError(absl::StrCat(
                                 "cannot start ", *fuzzer, ": ", std::strerror(spawn_error))));
  }
  struct sigaction on_interrupt = {};
  on_interrupt.sa_handler = [](int) { interrupted = 1; };
  sigaction(SIGINT, &on_interrupt, nullptr);
  sigaction(SIGTERM, &on_interrupt, nullptr);

  const absl::Time start = absl::Now();
  absl::Time next_progress = start + absl::Seconds(every);
  int status = 0;
  bool forwarded = false;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (interrupted && !forwarded) {
      kill(pid, SIGINT);  // libFuzzer stops cleanly and prints its final stats
      forwarded = true;
      out << "fuzz: interrupted; stopping (the corpus and findings are kept)\n";
    }
    if (absl::Now() >= next_progress) {
      out << ProgressLine(ReadProgress(stats), absl::ToDoubleSeconds(absl::Now() - start))
          << "\n";
      out.flush();
      next_progress += absl::Seconds(every);
    }
    usleep(100000);
  }
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  const Progress p = ReadProgress(stats);
  out << ProgressLine(p, seconds) << "\n";

  auto store = TriageStore::Open(triage_dir, false);
  auto entries = store.ok() ? store->List() : absl::StatusOr<std::vector<EntryInfo>>(store.status());
  out << "fuzz: summary: " << absl::StrFormat("%.0f", seconds) << " s against "
      << (p.backend.empty() ? backend : p.backend) << "\n"
      << "fuzz:   checked " << Count(p, "tuples") << " tuples, reaching "
      << p.variants_reached << " of the " << Count(p, "supported_variants")
      << " variants the backend supports (" << Count(p, "agreed") << " agreed, "
      << Count(p, "mismatched") << " mismatched, " << Count(p, "declined") << " declined, "
      << Count(p, "unspecified") << " left open by the spec)\n"
      << "fuzz:   judged against the " << ReadingName(config.reading) << " reading; "
      << Count(p, "other_reading") << " disagreements are exactly the "
      << (config.reading == Reading::kSpec ? "hardware" : "spec")
      << " reading's value (known spec-versus-hardware differences, oracle/errata.h): "
         "counted, not filed\n"
      << ErrataLines(p)
      << "fuzz:   declines: " << Count(p, "declined_not_evaluable") << " not evaluable (e.g. not "
      << "folded), " << Count(p, "declined_unsupported") << " unsupported variant, "
      << Count(p, "declined_operand_form") << " operand form, " << Count(p, "declined_other")
      << " other\n"
      << "fuzz:   generated " << Count(p, "offered") << " tuples in " << Count(p, "inputs")
      << " fuzz inputs and " << Count(p, "systematic") << " systematically; "
      << Count(p, "duplicates") << " duplicates, " << Count(p, "skipped_declining")
      << " of operand classes the backend declines and " << Count(p, "dropped")
      << " dropped under backpressure were not sent\n";
  if (entries.ok()) {
    int64_t explained = 0;
    for (const EntryInfo& e : *entries) explained += e.explained();
    out << "fuzz:   findings this run: "
        << (p.counts.count("new_findings") ? p.counts.at("new_findings") : 0) << " new, "
        << (p.counts.count("known_findings") ? p.counts.at("known_findings") : 0)
        << " already filed; the triage directory " << triage_dir << " holds "
        << entries->size() << (entries->size() == 1 ? " entry (" : " entries (") << explained
        << " explained)\n";
    for (const EntryInfo& e : *entries) {
      if (!e.explained()) out << "fuzz:     " << e.count() << "x " << e.name << "\n";
    }
    if (!entries->empty()) out << "fuzz:   see: ptxdiff triage list --dir " << triage_dir << "\n";
  }
  const bool libfuzzer_crashed = WIFEXITED(status) && WEXITSTATUS(status) != 0 && !forwarded;
  if (libfuzzer_crashed || WIFSIGNALED(status)) {
    out << "fuzz: the fuzzer exited abnormally (" 
        << (WIFSIGNALED(status) ? absl::StrCat("signal ", WTERMSIG(status))
                                : absl::StrCat("exit status ", WEXITSTATUS(status)))
        << "); see " << log << " and " << out_dir << "/findings/\n";
    return 1;
  }
  return 0;
}

}  // namespace ptxdiff
