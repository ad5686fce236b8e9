#include "fuzzers/fuzz_config.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/files.h"
#include "common/fnv1a.h"
#include "common/status_macros.h"
#include "isa/family_table.h"
#include "protocol/protocol.h"

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
    {"PTXDIFF_PROGRAMS",
     [](const std::string& v, FuzzConfig& c) {
       if (!absl::SimpleAtod(v, &c.programs_share) || !(c.programs_share >= 0) ||
           c.programs_share > 1) {
         return Invalid("PTXDIFF_PROGRAMS",
                        "a share of the backend's time in [0, 1]", v);
       }
       return absl::OkStatus();
     },
     [](const FuzzConfig& c) { return absl::StrCat(c.programs_share); }},
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

}  // namespace

std::string CrashOriginLine(absl::string_view input,
                            const CrashOrigin& origin) {
  return absl::StrCat(absl::Hex(Fnv1a64(input), absl::kZeroPad16), "\t",
                      origin.signature, "\t", origin.backend, "\n");
}

std::optional<CrashOrigin> FindCrashOrigin(const std::string& dir,
                                           absl::string_view input,
                                           std::string* not_read) {
  const std::string path = absl::StrCat(dir, "/", kCrashOriginsFile);
  const absl::StatusOr<std::string> text =
      ReadRecordFile(path, kMaxCrashOriginsBytes);
  if (!text.ok()) {
    if (not_read != nullptr && access(path.c_str(), F_OK) == 0)
      *not_read = std::string(text.status().message());
    return std::nullopt;
  }
  const std::string key =
      absl::StrCat(absl::Hex(Fnv1a64(input), absl::kZeroPad16), "\t");
  std::optional<CrashOrigin> found;
  for (absl::string_view line : absl::StrSplit(*text, '\n')) {
    // A file edited on Windows ends its lines in CRLF: the \r is no part of
    // the backend's command.
    absl::ConsumeSuffix(&line, "\r");
    // Its key anywhere: damage before it on the line is no part of it.
    const size_t at = line.rfind(key);
    if (at == absl::string_view::npos) continue;
    line.remove_prefix(at + key.size());
    const std::vector<absl::string_view> fields =
        absl::StrSplit(line, absl::MaxSplits('\t', 1));
    if (fields.size() == 2 && !fields[1].empty()) {
      found = CrashOrigin{std::string(fields[0]), std::string(fields[1])};
    }
  }
  return found;
}

int InterruptExitCode(int argc, char** argv) {
  int code = 72;  // libFuzzer's default
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    int given = 0;
    if (absl::ConsumePrefix(&arg, "-interrupt_exit_code=") &&
        absl::SimpleAtoi(arg, &given))
      code = given;
  }
  return code;
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

namespace {

std::string ExecutablePath() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  return n > 0 ? std::string(buf, n) : "";
}

}  // namespace

std::string BundledPtxas() {
  const std::string self = ExecutablePath();
  if (self.empty()) return "";
  const std::string ptxas = absl::StrCat(self.substr(0, self.rfind('/') + 1),
                                         kBundledPtxas);
  return access(ptxas.c_str(), X_OK) == 0 ? ptxas : "";
}

namespace {

// Appends the KEY=VALUE lines of `file`; `must_exist` says whether a missing
// file is an error (PTXDIFF_CONFIG's) or nothing (the one beside the
// executable).
absl::Status ReadConfigFile(
    const std::string& file, bool must_exist,
    std::vector<std::pair<std::string, std::string>>& pairs) {
  std::ifstream in(file);
  if (!in) {
    if (!must_exist) return absl::OkStatus();
    return absl::NotFoundError(
        absl::StrCat("PTXDIFF_CONFIG: cannot read ", file));
  }
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
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<std::pair<std::string, std::string>>>
ConfigFilePairs() {
  std::vector<std::pair<std::string, std::string>> pairs;
  if (const char* file = std::getenv("PTXDIFF_CONFIG"); file && *file) {
    PTXDIFF_RETURN_IF_ERROR(ReadConfigFile(file, /*must_exist=*/true, pairs));
  } else if (const std::string self = ExecutablePath(); !self.empty()) {
    PTXDIFF_RETURN_IF_ERROR(ReadConfigFile(absl::StrCat(self, ".conf"),
                                           /*must_exist=*/false, pairs));
  }
  return pairs;
}

absl::StatusOr<FuzzConfig> FuzzConfigFromEnvironment() {
  PTXDIFF_ASSIGN_OR_RETURN(auto pairs, ConfigFilePairs());
  for (const Setting& setting : kSettings) {
    const std::string key(setting.key);
    if (const char* value = std::getenv(key.c_str())) {
      pairs.emplace_back(key, value);
    }
  }
  return FuzzConfigFromPairs(pairs);
}

}  // namespace ptxdiff
